/* Times the NUFFT's type 1 (and type 2) on a kooshball trajectory, on the GPU (gpu/nufft.h) or the CPU
 * (solver/nufft.h), and measures its error against float64 direct sums at sample modes. Optionally
 * writes the points and strengths (binary, for another library's benchmark of the same problem) and reads
 * that library's result to measure its error the same way.
 *
 *   tool_nufft_bench [--device gpu|cpu] [--n N] [--spokes S] [--readout R] [--tol T] [--upsample U]
 *                    [--reps K] [--check MODES] [--type 1|2] [--write FILE] [--compare FILE]
 *                    [--smem-kb KB]   (GPU tuning: mr_gpu_nufft_kernel)
 *
 * Modes: N^3 (3D), the image grid of the matrix (centre N/2, the mrirecon convention = CMCL ordering);
 * points x = 2 pi k / N in [-pi, pi) with FINUFFT's sign +1 for type 1. --write FILE: int64 M, int64 N,
 * then M x 3 doubles (x, y, z) and M complex doubles (c), and the check's mode indices. --compare FILE:
 * N^3 complex64 modes (x fastest) of the other library's type 1, measured at the same check modes.
 * Output: one line per measurement on stdout.
 *
 * Operator mode: --operator exact|nufft|auto [--dim 2|3] [--coils C] [--iters K] [--save FILE] [--ref FILE]
 * builds the encoding operator (solver/encoding.h) for the kooshball (--dim 2: radial spokes on an N^2
 * matrix) and the analytic 3D (2D) Shepp-Logan
 * data, then F^H d and K CG iterations on the normal equations, timed, with the peak GPU memory sampled
 * every millisecond; --save writes the image (complex64), --ref measures the relative L2 to a saved image,
 * and the PSNR against the voxel-averaged truth is printed. */
#include <math.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include "base/log.h"
#include "gpu/gpu.h"
#include "gpu/gpu_ops.h"
#include "gpu/nufft.h"
#include "phantoms/shepp_logan.h"
#include "phantoms/traj.h"
#include "solver/backend.h"
#include "solver/cg.h"
#include "solver/encoding.h"
#include "solver/metrics.h"
#include "solver/nufft.h"

static int cmp_d(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The float64 direct sum at mode v: sum_m c_m e^{+i 2 pi k_m . r_v}. */
static void direct(const mr_grid *g, const float *traj, const double *c, int64_t m, int64_t v, double out[2])
{
    const int64_t ix = v % g->n[0], iy = (v / g->n[0]) % g->n[1], iz = v / (g->n[0] * g->n[1]);
    const double r[3] = {(double)(ix - g->center[0]) / g->scale[0], (double)(iy - g->center[1]) / g->scale[1],
                         (double)(iz - g->center[2]) / g->scale[2]};
    double re = 0, im = 0;
#pragma omp parallel for reduction(+ : re, im)
    for (int64_t k = 0; k < m; k++) {
        const double ph = 2.0 * M_PI * (traj[3 * k] * r[0] + traj[3 * k + 1] * r[1] + traj[3 * k + 2] * r[2]);
        re += c[2 * k] * cos(ph) - c[2 * k + 1] * sin(ph);
        im += c[2 * k] * sin(ph) + c[2 * k + 1] * cos(ph);
    }
    out[0] = re;
    out[1] = im;
}

/* Relative L2 error over the check modes of a float image (complex, x fastest). */
static double check_error(const mr_grid *g, const float *img, const int64_t *modes, int nmodes, const double *ref)
{
    double e = 0, r = 0;
    for (int i = 0; i < nmodes; i++) {
        const double dr = img[2 * modes[i]] - ref[2 * i], di = img[2 * modes[i] + 1] - ref[2 * i + 1];
        e += dr * dr + di * di;
        r += ref[2 * i] * ref[2 * i] + ref[2 * i + 1] * ref[2 * i + 1];
    }
    (void)g;
    return sqrt(e / r);
}

/* The peak of GPU memory in use, sampled every millisecond by a thread. */
typedef struct {
    volatile int stop;
    int64_t min_free, total;
    pthread_t th;
} mem_sampler;

static void *sample_mem(void *arg)
{
    mem_sampler *ms = arg;
    while (!ms->stop) {
        int64_t fr = 0, tot = 0;
        if (mr_gpu_memory(0, &fr, &tot) == MR_OK && fr < ms->min_free)
            ms->min_free = fr;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* --save: the image (complex64); --ref: its relative L2 to a saved image, and that image's PSNR */
static void save_and_compare(const float *img, const float *truth, int64_t nv, const char *save, const char *ref_path)
{
    if (save) {
        FILE *f = fopen(save, "wb");
        if (f) {
            fwrite(img, sizeof(float), (size_t)nv * 2, f);
            fclose(f);
        }
    }
    if (ref_path) {
        float *ref = malloc((size_t)nv * 2 * sizeof(float));
        FILE *f = fopen(ref_path, "rb");
        if (ref && f && fread(ref, sizeof(float), (size_t)nv * 2, f) == (size_t)nv * 2) {
            double e2 = 0, r2 = 0;
            for (int64_t i = 0; i < 2 * nv; i++) {
                e2 += ((double)img[i] - ref[i]) * ((double)img[i] - ref[i]);
                r2 += (double)ref[i] * ref[i];
            }
            printf("  relative L2 to %s: %.3e; PSNR of that image %.3f dB\n", ref_path, sqrt(e2 / r2),
                   mr_metrics_psnr(ref, 1, truth, nv));
        }
        if (f)
            fclose(f);
        free(ref);
    }
}

static int operator_mode(const char *model, const char *device, int dim, int64_t n, int64_t spokes, int64_t readout,
                         double tol, int64_t ncoils, int iters, const char *save, const char *ref_path)
{
    const int64_t matrix[3] = {n, n, dim == 2 ? 1 : n};
    const mr_phantom_kind ph = dim == 2 ? MR_PHANTOM_SL2D : MR_PHANTOM_SL3D;
    mr_traj_params tp;
    mr_traj_params_default(&tp, dim == 2 ? MR_TRAJ_RADIAL2D : MR_TRAJ_KOOSHBALL, matrix);
    tp.spokes = spokes;
    tp.readout = readout;
    int64_t m = 0;
    mr_status st = mr_traj_count(&tp, &m);
    float *traj = st == MR_OK ? malloc((size_t)m * 3 * sizeof(float)) : NULL;
    float *data = traj ? malloc((size_t)(m * ncoils) * 2 * sizeof(float)) : NULL;
    const int64_t nv = matrix[0] * matrix[1] * matrix[2];
    float *img = malloc((size_t)(nv * ncoils) * 2 * sizeof(float)), *truth = malloc((size_t)nv * sizeof(float));
    if (!data || !img || !truth) {
        fprintf(stderr, "tool_nufft_bench: out of memory\n");
        return 1;
    }
    mr_traj_generate(&tp, traj);
    mr_phantom_kspace(ph, traj, m, data);
    for (int64_t c = 1; c < ncoils; c++)
        memcpy(data + 2 * c * m, data, (size_t)m * 2 * sizeof(float));
    mr_phantom_truth(ph, matrix, truth);
    mr_encoding_opts o;
    mr_encoding_opts_default(&o);
    if ((st = mr_model_parse(model, &o.model)) != MR_OK) {
        fprintf(stderr, "tool_nufft_bench: %s\n", mr_last_error());
        return 2;
    }
    o.tol = tol;
    o.op.basis = MR_BASIS_DIRAC;
    const int gpu = strcmp(device, "gpu") == 0;
    const mr_device_sel sel = {gpu ? MR_DEVICE_GPU : MR_DEVICE_CPU, gpu ? 0 : -1, 0, 0, {0}};
    mr_backend *be = NULL;
    mem_sampler ms = {0, INT64_MAX, 0, 0};
    int64_t fr0 = 0;
    if ((st = mr_backend_create(&be, sel, 0)) != MR_OK)
        goto fail;
    if (gpu) {
        mr_gpu_memory(0, &fr0, &ms.total);
        ms.min_free = fr0;
        pthread_create(&ms.th, NULL, sample_mem, &ms);
    }
    const double t0 = mr_now();
    mr_linop *e = NULL, *normal = NULL;
    mr_encoding_info info;
    const mr_vecops *v = mr_backend_vecops(be);
    float *dy = NULL, *db = NULL, *dx = NULL;
    if ((st = mr_encoding_create(&e, be, matrix, traj, m, NULL, ncoils, &o, &info)) != MR_OK)
        goto fail;
    const double t1 = mr_now();
    dy = mr_backend_upload(be, 2 * m * ncoils, data);
    db = mr_backend_alloc(be, nv * ncoils);
    dx = mr_backend_alloc_zero(be, nv * ncoils);
    if (!dy || !db || !dx) {
        st = MR_ENOMEM;
        goto fail;
    }
    const double t2 = mr_now();
    if ((st = mr_linop_adjoint(e, dy, db)) != MR_OK || (v->status && (st = v->status(v->ctx)) != MR_OK))
        goto fail;
    if (gpu && (st = mr_gpu_ctx_sync(mr_backend_gpu_ctx(be))) != MR_OK)
        goto fail;
    const double t3 = mr_now();
    mr_cg_opts co;
    mr_cg_opts_default(&co);
    co.iters = iters;
    mr_cg_result res;
    memset(&res, 0, sizeof res);
    if ((st = mr_linop_normal_of(&normal, e)) != MR_OK || (st = mr_cg_solve_linop(normal, db, dx, &co, &res)) != MR_OK)
        goto fail;
    if (gpu && (st = mr_gpu_ctx_sync(mr_backend_gpu_ctx(be))) != MR_OK)
        goto fail;
    const double t4 = mr_now();
    mr_cg_result_free(&res);
    if ((st = v->to_host(v->ctx, nv * ncoils, img, dx)) != MR_OK)
        goto fail;
    if (gpu) {
        ms.stop = 1;
        pthread_join(ms.th, NULL);
    }
    printf("operator %s on %s: N %lld M %lld C %lld tol %.0e: %s\n", model, device, (long long)n, (long long)m,
           (long long)ncoils, tol, info.description);
    printf("  create %.3f s (Q %.3f s, %s; plan %.3f s), F^H d %.3f s, CG %d iterations %.3f s, total %.3f s; "
           "estimates: exact %.3g s / %.3g GB, nufft %.3g s / %.3g GB",
           t1 - t0, info.op.q_seconds, info.op.q_source, info.op.plan_seconds, t3 - t2, iters, t4 - t3,
           (t1 - t0) + (t4 - t2), info.est_seconds[MR_MODEL_EXACT], info.est_bytes[MR_MODEL_EXACT] * 1e-9,
           info.est_seconds[MR_MODEL_NUFFT], info.est_bytes[MR_MODEL_NUFFT] * 1e-9);
    if (gpu)
        printf("; GPU memory peak %.2f GB above the %.2f GB in use before", (fr0 - ms.min_free) * 1e-9,
               (ms.total - fr0) * 1e-9);
    printf("\n  PSNR vs truth %.3f dB\n", mr_metrics_psnr(img, 1, truth, nv));
    save_and_compare(img, truth, nv, save, ref_path);
    v->release(v->ctx, dy);
    v->release(v->ctx, db);
    v->release(v->ctx, dx);
    mr_linop_free(normal);
    mr_linop_free(e);
    mr_backend_free(be);
    free(traj);
    free(data);
    free(img);
    free(truth);
    return 0;
fail:
    if (gpu && ms.th) {
        ms.stop = 1;
        pthread_join(ms.th, NULL);
    }
    fprintf(stderr, "tool_nufft_bench: %s\n", mr_last_error());
    return 1;
}

/* The command line (see the header comment). */
typedef struct {
    const char *device, *write, *compare;
    int64_t n, spokes, readout;
    double tol, upsample;
    int reps, nmodes, type;
    double smem_kb;
    const char *op_model, *save, *ref_path;
    int64_t ncoils;
    int iters, dim;
} bench_args;

/* 0, or 2 for an unknown option */
static int parse_args(int argc, char **argv, bench_args *a)
{
    *a = (bench_args){.device = "gpu", .n = 128, .spokes = 1078, .readout = 264, .tol = 1e-6, .reps = 10,
                      .nmodes = 200, .type = 1, .ncoils = 1, .iters = 60, .dim = 3};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--device"))
            a->device = argv[i + 1];
        else if (!strcmp(argv[i], "--n"))
            a->n = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--spokes"))
            a->spokes = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--readout"))
            a->readout = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--tol"))
            a->tol = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--upsample"))
            a->upsample = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps"))
            a->reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--check"))
            a->nmodes = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--type"))
            a->type = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--operator"))
            a->op_model = argv[i + 1];
        else if (!strcmp(argv[i], "--dim"))
            a->dim = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--coils"))
            a->ncoils = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--iters"))
            a->iters = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--save"))
            a->save = argv[i + 1];
        else if (!strcmp(argv[i], "--ref"))
            a->ref_path = argv[i + 1];
        else if (!strcmp(argv[i], "--smem-kb"))
            a->smem_kb = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--write"))
            a->write = argv[i + 1];
        else if (!strcmp(argv[i], "--compare"))
            a->compare = argv[i + 1];
        else {
            fprintf(stderr, "tool_nufft_bench: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    return 0;
}

/* The type 1 problem: the kooshball, random strengths (float, and the same values in float64), the
 * check modes and their float64 direct sums. */
typedef struct {
    mr_grid g;
    int64_t m, nv;
    float *traj, *cf, *img;
    double *c, *ref;
    int64_t *modes;
} bench_problem;

/* 0, or 2 when the trajectory cannot be counted */
static int make_problem(const bench_args *a, bench_problem *pr)
{
    const int64_t matrix[3] = {a->n, a->n, a->n};
    mr_traj_params tp;
    mr_traj_params_default(&tp, MR_TRAJ_KOOSHBALL, matrix);
    tp.spokes = a->spokes;
    tp.readout = a->readout;
    int64_t m = 0;
    if (mr_traj_count(&tp, &m) != MR_OK) {
        fprintf(stderr, "tool_nufft_bench: %s\n", mr_last_error());
        return 2;
    }
    pr->m = m;
    pr->traj = malloc((size_t)m * 3 * sizeof(float));
    pr->c = malloc((size_t)m * 2 * sizeof(double));
    pr->cf = malloc((size_t)m * 2 * sizeof(float));
    pr->g = mr_grid_image(matrix);
    pr->nv = mr_grid_size(&pr->g);
    pr->img = malloc((size_t)pr->nv * 2 * sizeof(float));
    mr_traj_generate(&tp, pr->traj);
    uint64_t r = 12345;
    for (int64_t i = 0; i < 2 * m; i++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        pr->c[i] = (double)(r >> 11) / 9007199254740992.0 - 0.5;
        pr->cf[i] = (float)pr->c[i];
        pr->c[i] = pr->cf[i]; /* the reference sums the float inputs both libraries get */
    }
    pr->modes = malloc((size_t)a->nmodes * sizeof(int64_t));
    pr->ref = malloc((size_t)a->nmodes * 2 * sizeof(double));
    for (int i = 0; i < a->nmodes; i++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        pr->modes[i] = (int64_t)(r % (uint64_t)pr->nv);
    }
    const double t_ref = mr_now();
    for (int i = 0; i < a->nmodes; i++)
        direct(&pr->g, pr->traj, pr->c, m, pr->modes[i], pr->ref + 2 * i);
    fprintf(stderr, "reference: %d modes in %.1f s\n", a->nmodes, mr_now() - t_ref);
    return 0;
}

static void free_problem(bench_problem *pr)
{
    void *owned[] = {pr->traj, pr->c, pr->cf, pr->img, pr->modes, pr->ref};
    for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++)
        free(owned[i]);
}

/* --write FILE: the points and strengths for another library (format in the header comment); 0 or 1 */
static int write_points(const char *path, const bench_problem *pr, int64_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "tool_nufft_bench: cannot write %s\n", path);
        return 1;
    }
    fwrite(&pr->m, sizeof pr->m, 1, f);
    fwrite(&n, sizeof n, 1, f);
    for (int64_t k = 0; k < pr->m; k++)
        for (int a = 0; a < 3; a++) {
            const double x = 2.0 * M_PI * (double)pr->traj[3 * k + a] / (double)n;
            fwrite(&x, sizeof x, 1, f);
        }
    fwrite(pr->c, sizeof(double), (size_t)(2 * pr->m), f);
    fclose(f);
    return 0;
}

/* --compare FILE: the other library's modes (read into pr->img) against the direct sums; 0 or 1 */
static int compare_file(const char *path, bench_problem *pr, int64_t n, int nmodes)
{
    FILE *f = fopen(path, "rb");
    if (!f || fread(pr->img, sizeof(float), (size_t)(2 * pr->nv), f) != (size_t)(2 * pr->nv)) {
        fprintf(stderr, "tool_nufft_bench: cannot read %lld modes from %s\n", (long long)pr->nv, path);
        return 1;
    }
    fclose(f);
    printf("compare %s: N %lld M %lld: error %.3e vs float64 direct sums at %d modes\n", path, (long long)n,
           (long long)pr->m, check_error(&pr->g, pr->img, pr->modes, nmodes, pr->ref), nmodes);
    return 0;
}

/* The GPU plan (gpu/nufft.h) with the chosen parameters: plan time, reps timed runs after a warm-up, and
 * for type 1 the image in pr->img; prints the plan's tiling. */
static mr_status run_gpu(const bench_args *a, bench_problem *pr, const mr_nufft_params *p, double *times,
                         double *t_plan)
{
    const mr_grid *g = &pr->g;
    const int64_t m = pr->m, nv = pr->nv;
    mr_gpu_ctx *ctx = NULL;
    mr_gpu_nufft *plan = NULL;
    mr_status st = mr_gpu_ctx_create(&ctx, 0);
    mr_gpu_nufft_kernel k;
    memset(&k, 0, sizeof k);
    k.f64 = p->precision == MR_NUFFT_PREC_F64;
    k.width = p->width;
    k.degree = p->degree;
    k.coef = &p->coef[0][0];
    k.smem_limit = (int64_t)(a->smem_kb * 1024);
    double *dec[3];
    for (int ax = 0; ax < 3; ax++) {
        k.fine[ax] = p->fine[ax];
        dec[ax] = malloc((size_t)a->n * sizeof(double));
        mr_nufft_deconv(p, g, ax, dec[ax]);
        k.deconv[ax] = dec[ax];
    }
    float *dc = st == MR_OK ? mr_gpu_alloc(ctx, 2 * m) : NULL, *dimg = st == MR_OK ? mr_gpu_alloc(ctx, 2 * nv) : NULL;
    if (st == MR_OK && dc && dimg)
        st = mr_gpu_upload(ctx, dc, pr->cf, 2 * m);
    double t0 = mr_now();
    if (st == MR_OK)
        st = mr_gpu_nufft_create(&plan, ctx, g, pr->traj, m, &k);
    if (st == MR_OK)
        st = mr_gpu_ctx_sync(ctx);
    *t_plan = mr_now() - t0;
    for (int i = 0; i <= a->reps && st == MR_OK; i++) { /* the first run warms up */
        t0 = mr_now();
        st = a->type == 1 ? mr_gpu_nufft_type1(plan, 1, dc, 0, 0, dimg) : mr_gpu_nufft_type2(plan, 1, dimg, 0, dc);
        if (st == MR_OK)
            st = mr_gpu_ctx_sync(ctx);
        if (i > 0)
            times[i - 1] = mr_now() - t0;
    }
    if (st == MR_OK && a->type == 1)
        st = mr_gpu_nufft_type1(plan, 1, dc, 0, 0, dimg);
    if (st == MR_OK && a->type == 1)
        st = mr_gpu_download(ctx, pr->img, dimg, 2 * nv);
    int bin[3] = {0, 0, 0};
    int64_t ntiles = 0;
    int nclass = 0;
    if (plan)
        mr_gpu_nufft_describe(plan, bin, &ntiles, &nclass);
    printf("gpu plan: tiles %dx%dx%d, %lld non-empty in %d classes (smem %g KB)\n", bin[0], bin[1], bin[2],
           (long long)ntiles, nclass, a->smem_kb);
    mr_gpu_nufft_destroy(plan);
    mr_gpu_free(ctx, dc);
    mr_gpu_free(ctx, dimg);
    mr_gpu_ctx_destroy(ctx);
    for (int ax = 0; ax < 3; ax++)
        free(dec[ax]);
    return st;
}

/* The CPU plan (solver/nufft.h): as run_gpu */
static mr_status run_cpu(const bench_args *a, bench_problem *pr, const mr_nufft_opts *o, double *times,
                         double *t_plan)
{
    mr_nufft *plan = NULL;
    double t0 = mr_now();
    mr_status st = mr_nufft_create(&plan, &pr->g, pr->traj, pr->m, o);
    *t_plan = mr_now() - t0;
    for (int i = 0; i <= a->reps && st == MR_OK; i++) {
        t0 = mr_now();
        st = a->type == 1 ? mr_nufft_type1(plan, 1, pr->cf, 0, pr->img) : mr_nufft_type2(plan, 1, pr->img, pr->cf);
        if (i > 0)
            times[i - 1] = mr_now() - t0;
    }
    if (st == MR_OK && a->type == 1)
        st = mr_nufft_type1(plan, 1, pr->cf, 0, pr->img);
    mr_nufft_destroy(plan);
    return st;
}

int main(int argc, char **argv)
{
    bench_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;
    const int gpu = strcmp(a.device, "gpu") == 0;
    if (gpu && mr_gpu_count() <= 0) {
        fprintf(stderr, "tool_nufft_bench: no GPU\n");
        return 77;
    }
    if (a.op_model)
        return operator_mode(a.op_model, a.device, a.dim, a.n, a.spokes, a.readout, a.tol, a.ncoils, a.iters, a.save,
                             a.ref_path);
    bench_problem pr;
    if ((rc = make_problem(&a, &pr)) != 0)
        return rc;
    if (a.write && (rc = write_points(a.write, &pr, a.n)) != 0)
        return rc;
    if (a.compare && (rc = compare_file(a.compare, &pr, a.n, a.nmodes)) != 0)
        return rc;
    mr_nufft_opts o;
    mr_nufft_opts_default(&o);
    o.tol = a.tol;
    o.upsample = a.upsample;
    mr_nufft_params p;
    if (mr_nufft_params_choose(&pr.g, pr.m, &o, gpu ? MR_NUFFT_ON_GPU : MR_NUFFT_ON_CPU, &p) != MR_OK) {
        fprintf(stderr, "tool_nufft_bench: %s\n", mr_last_error());
        return 2;
    }
    double *times = malloc((size_t)a.reps * sizeof(double));
    double t_plan = 0;
    const mr_status st = gpu ? run_gpu(&a, &pr, &p, times, &t_plan) : run_cpu(&a, &pr, &o, times, &t_plan);
    if (st != MR_OK) {
        fprintf(stderr, "tool_nufft_bench: %s\n", mr_last_error());
        return 1;
    }
    qsort(times, (size_t)a.reps, sizeof *times, cmp_d);
    printf("mrirecon %s type %d: N %lld M %lld tol %.0e: w %d sigma %.3g fine %lld %s: plan %.4f s, execute median "
           "%.4f s (min %.4f, %d runs)",
           a.device, a.type, (long long)a.n, (long long)pr.m, a.tol, p.width, p.upsample, (long long)p.fine[0],
           p.precision == MR_NUFFT_PREC_F64 ? "float64" : "float32", t_plan, times[a.reps / 2], times[0], a.reps);
    if (a.type == 1)
        printf(", error %.3e vs float64 direct sums at %d modes",
               check_error(&pr.g, pr.img, pr.modes, a.nmodes, pr.ref), a.nmodes);
    printf("\n");
    free_problem(&pr);
    free(times);
    return 0;
}
