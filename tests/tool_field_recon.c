/* tool_field_recon SCAN.h5 [options]: conjugate-gradient reconstructions of one scan with and without
 * off-resonance correction, through the operator API (solver/linop_field.h, solver/cg.h), for the
 * measurements of docs/RECON.md "Field maps" until `recon` has the options, and the 3D benchmark
 * (docs/BENCHMARKS.md). Prints one line per model:
 *
 *   model=M segments=L bound=B measured=E psnr=P rel_exact=R setup_s= fhd_s= cg_s= total_s= iters=N
 *
 * with psnr against the scan's truth (band-limited when stored, as recon), rel_exact the relative L2
 * distance of the image to the exact model's (when "exact" is among the models, listed first or not),
 * and the times of the operator's setup (Q or the field kernels), E^H d and the CG iterations.
 *
 * Options:
 *   --models LIST     comma-separated: none (the field-free NUDFT with its Toeplitz normal: the scan
 *                     reconstructed as if there were no field), exact, frequency, time (default
 *                     none,frequency)
 *   --tol T           the segmented models' bound (default 1e-3); --segments L forces L
 *   --iters N         CG iterations (default 60)
 *   --lambda L        regularisation weight (default 0); --reg gradient|tikhonov (default gradient)
 *   --basis dirac|box (default dirac, recon's default)
 *   --device D        auto, cpu, gpu, gpu:N (solver/backend.h; default auto)
 *   --check           measure each segmented model against the exact model at setup
 *   --save PREFIX     write PREFIX_<model>.raw: the complex image, float32 interleaved
 * Exit 0, 1 on a failure (the message on stderr), 2 on a usage error. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "io/fieldmap.h"
#include "io/kspace_h5.h"
#include "solver/backend.h"
#include "solver/cg.h"
#include "solver/linop_field.h"
#include "solver/metrics.h"

typedef struct {
    const char *models, *save;
    double tol, lambda;
    int segments, iters, check, tikhonov;
    mr_basis basis;
    mr_device_sel device;
} tool_opts;

typedef struct {
    double psnr, setup, fhd, cg;
    int iters;
    mr_field_info info;
} run_result;

static int usage(const char *msg)
{
    fprintf(stderr, "tool_field_recon: %s\nusage: tool_field_recon SCAN.h5 [--models none,exact,frequency,time] "
                    "[--tol T] [--segments L] [--iters N] [--lambda L] [--reg gradient|tikhonov] [--basis dirac|box] "
                    "[--device D] [--check] [--save PREFIX]\n",
            msg);
    return 2;
}

/* E for one model ("none": the field-free NUDFT) */
static mr_status make_e(mr_backend *be, const mr_kspace *ks, const char *model, const tool_opts *t, mr_linop **e,
                        run_result *r)
{
    memset(&r->info, 0, sizeof r->info);
    r->info.measured = -1;
    if (!strcmp(model, "none")) {
        mr_nudft_opts no;
        mr_nudft_opts_default(&no);
        no.basis = t->basis;
        mr_nudft_info ni;
        mr_status st = mr_linop_nudft_create(e, be, ks->matrix, ks->traj, ks->nsamples, NULL, ks->ncoils, &no, &ni);
        snprintf(r->info.engine, sizeof r->info.engine, "%s", ni.engine_name);
        return st;
    }
    mr_field_opts o;
    mr_field_opts_default(&o);
    mr_status st = mr_field_model_parse(model, &o.model);
    if (st != MR_OK)
        return st;
    o.tol = t->tol;
    o.segments = t->segments;
    o.check = t->check;
    o.basis = t->basis;
    return mr_linop_field_create(e, be, ks->matrix, ks->traj, ks->time, ks->fieldmap, ks->nsamples, NULL, ks->ncoils,
                                 &o, &r->info);
}

static mr_status run(mr_backend *be, const mr_kspace *ks, const char *model, const tool_opts *t, float *img,
                     run_result *r)
{
    const mr_vecops *v = mr_backend_vecops(be);
    const int64_t n = mr_kspace_voxels(ks), M = ks->nsamples;
    mr_linop *e = NULL, *fd = NULL, *sys = NULL;
    float *d = NULL, *b = NULL, *x = NULL;
    double t0 = mr_now();
    mr_status st = make_e(be, ks, model, t, &e, r);
    r->setup = mr_now() - t0;
    if (st == MR_OK && !t->tikhonov && t->lambda > 0)
        st = mr_linop_fd_create(&fd, be, ks->matrix);
    if (st == MR_OK)
        st = mr_linop_normal_system(&sys, e, fd, t->lambda);
    if (st == MR_OK && (!(d = mr_backend_upload(be, 2 * M, ks->data)) || !(b = mr_backend_alloc(be, n)) ||
                        !(x = mr_backend_alloc(be, n))))
        st = MR_ENOMEM;
    t0 = mr_now();
    if (st == MR_OK)
        st = mr_linop_adjoint(e, d, b);
    if (st == MR_OK && v->status)
        st = v->status(v->ctx);
    r->fhd = mr_now() - t0;
    mr_cg_opts co;
    mr_cg_opts_default(&co);
    co.iters = t->iters;
    mr_cg_result res;
    t0 = mr_now();
    if (st == MR_OK && (st = mr_cg_solve_linop(sys, b, x, &co, &res)) == MR_OK) {
        r->iters = res.iterations;
        mr_cg_result_free(&res);
    }
    if (st == MR_OK)
        st = v->to_host(v->ctx, n, img, x);
    r->cg = mr_now() - t0;
    const float *truth = ks->truth_bl ? ks->truth_bl : ks->truth;
    r->psnr = st == MR_OK && truth ? mr_metrics_psnr(img, 1, truth, n) : NAN;
    v->release(v->ctx, d);
    v->release(v->ctx, b);
    v->release(v->ctx, x);
    mr_linop_free(sys);
    mr_linop_free(fd);
    mr_linop_free(e);
    return st;
}

static double rel_l2(const float *a, const float *b, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < 2 * n; i++) {
        num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        den += (double)b[i] * b[i];
    }
    return den > 0 ? sqrt(num / den) : NAN;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argv[1][0] == '-')
        return usage("no scan");
    tool_opts t = {"none,frequency", NULL, 1e-3, 0.0, 0, 60, 0, 0, MR_BASIS_DIRAC, {MR_DEVICE_AUTO, -1, 0, 0, {0}}};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--check")) {
            t.check = 1;
            continue;
        }
        if (!val)
            return usage("an option without its value");
        i++;
        if (!strcmp(a, "--models"))
            t.models = val;
        else if (!strcmp(a, "--save"))
            t.save = val;
        else if (!strcmp(a, "--tol"))
            t.tol = atof(val);
        else if (!strcmp(a, "--segments"))
            t.segments = atoi(val);
        else if (!strcmp(a, "--iters"))
            t.iters = atoi(val);
        else if (!strcmp(a, "--lambda"))
            t.lambda = atof(val);
        else if (!strcmp(a, "--reg"))
            t.tikhonov = !strcmp(val, "tikhonov");
        else if (!strcmp(a, "--basis"))
            t.basis = !strcmp(val, "box") ? MR_BASIS_BOX : MR_BASIS_DIRAC;
        else if (!strcmp(a, "--device")) {
            if (mr_device_parse(val, &t.device) != MR_OK)
                return usage(mr_last_error());
        } else
            return usage("unknown option");
    }
    mr_kspace *ks = NULL;
    mr_status st = mr_kspace_read(argv[1], &ks);
    if (st != MR_OK) {
        fprintf(stderr, "tool_field_recon: %s\n", mr_last_error());
        return 1;
    }
    mr_backend *be = NULL;
    st = mr_backend_create(&be, t.device, 0);
    const int64_t n = mr_kspace_voxels(ks);
    char list[256];
    snprintf(list, sizeof list, "%s", t.models);
    float *imgs[8] = {NULL};
    char *names[8];
    run_result res[8];
    int nm = 0, exact = -1;
    char *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok && nm < 8; tok = strtok_r(NULL, ",", &save))
        names[nm++] = tok;
    if (st == MR_OK)
        printf("scan=%s matrix=%lldx%lldx%lld samples=%lld coils=%lld backend=\"%s\"\n", argv[1], (long long)ks->matrix[0],
               (long long)ks->matrix[1], (long long)ks->matrix[2], (long long)ks->nsamples, (long long)ks->ncoils,
               mr_backend_name(be));
    for (int i = 0; i < nm && st == MR_OK; i++) {
        if (strcmp(names[i], "none") && (st = mr_kspace_check_field(ks, argv[1])) != MR_OK)
            break;
        if (!(imgs[i] = malloc((size_t)n * 2 * sizeof(float)))) {
            st = mr_error(MR_ENOMEM, "out of memory");
            break;
        }
        const double t0 = mr_now();
        st = run(be, ks, names[i], &t, imgs[i], &res[i]);
        const double total = mr_now() - t0;
        if (st != MR_OK)
            break;
        if (!strcmp(names[i], "exact"))
            exact = i;
        printf("model=%s segments=%d bound=%.3g measured=%.3g psnr=%.3f setup_s=%.3f (fit %.3f kernels %.3f check %.3f) "
               "fhd_s=%.3f cg_s=%.3f total_s=%.3f iters=%d kernels=%lld engine=\"%s\"\n",
               names[i], res[i].info.segments, res[i].info.bound_max, res[i].info.measured, res[i].psnr, res[i].setup,
               res[i].info.fit_seconds, res[i].info.kernel_seconds, res[i].info.check_seconds, res[i].fhd, res[i].cg,
               total, res[i].iters, (long long)res[i].info.kernels, res[i].info.engine);
        fflush(stdout);
        if (t.save) {
            char path[1024];
            snprintf(path, sizeof path, "%s_%s.raw", t.save, names[i]);
            FILE *fp = fopen(path, "wb");
            if (!fp || fwrite(imgs[i], sizeof(float), (size_t)n * 2, fp) != (size_t)n * 2)
                st = mr_error(MR_EIO, "%s: cannot write", path);
            if (fp)
                fclose(fp);
        }
    }
    for (int i = 0; st == MR_OK && exact >= 0 && i < nm; i++)
        if (i != exact)
            printf("rel_exact model=%s %.4g\n", names[i], rel_l2(imgs[i], imgs[exact], n));
    if (st != MR_OK)
        fprintf(stderr, "tool_field_recon: %s\n", mr_last_error());
    for (int i = 0; i < nm; i++)
        free(imgs[i]);
    mr_backend_free(be);
    mr_kspace_free(ks);
    return st == MR_OK ? 0 : 1;
}
