/* CG on a simulated 2D phantom (Shepp-Logan, radial 101 spokes x 128 samples, 64 x 64, noiseless
 * analytic k-space): the reconstruction reaches a stated PSNR against /truth/bandlimited, through
 * the library calls (operator + CG) and through mr_recon_run (files, report). Invalid input makes
 * mr_recon_run fail without creating its output directory. Multi-coil data: exactly scaled coils
 * give exactly the scaled root-sum-of-squares image; a coil phase changes the CG image only as much
 * as float rounding of the right-hand side can (see below).
 *
 * Thresholds (measured 2026-11-22 on the CPU backend: box 30.22 dB, dirac 33.94 dB after 60
 * iterations, peak PSNR of the box run >= 31.7 dB around iteration 10) are set a little below. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <ftw.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>

#include "io/image_h5.h"
#include "io/kspace_h5.h"
#include "phantoms/scan.h"
#include "recon/pipeline/pipeline.h"
#include "recon/report/report.h"
#include "solver/cg.h"
#include "solver/metrics.h"
#include "solver/op.h"
#include "solver/vecops.h"
#include "testutil.h"

static mr_status normal_apply(void *op, const float *in, float *out) { return mr_op_normal(op, in, out); }

static double psnr_bl(void *ks, const float *x)
{
    const mr_kspace *k = ks;
    return mr_metrics_psnr(x, 1, k->truth_bl, mr_kspace_voxels(k));
}

/* || |x| - scale |x0| || / || scale |x0| || over n complex voxels */
static double magnitude_rel_diff(const float *x, const float *x0, double scale, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t v = 0; v < n; v++) {
        const double want = scale * hypot(x0[2 * v], x0[2 * v + 1]);
        const double d = hypot(x[2 * v], x[2 * v + 1]) - want;
        num += d * d;
        den += want * want;
    }
    return sqrt(num / den);
}

/* CG is homogeneous in exact arithmetic, x(alpha b) = alpha x(b), but not in float32: two right-hand
 * sides that differ only by rounding give iterates that differ by the rounding amplified by the
 * 60 unregularised iterations. Measured on this problem (box basis, 2026-11-23): rotating the data
 * by alpha = 0.6 + 0.8i changes b = F^H d by 5-9e-8 relative (rounding of the rotation and of the
 * kernels) and |x| by 2e-4 to 1.2e-3 depending only on how the kernels round (portable, avx2, and
 * the former -march=native portable build, whose 1.06e-3 failed the earlier fixed bound 1e-3); a
 * random perturbation of b of relative size 1e-7 changes |x| by 2-5e-4, 1e-6 by 7e-4 to 1e-3, 1e-5
 * by 6.7e-3. So no bound of the form c u follows for CG; what does follow is that a rounding-level
 * change of the data may move |x| no more than a change of b within the operator's accuracy contract
 * (relative L2 error <= 1e-5 against float64, test_nudft) does. That is the bound checked here, with
 * the random perturbation measured in the same run. */
static void check_cg_phase(mr_op *op, const mr_kspace *ks, const mr_vecops *ops, const float *b, const float *x,
                           mr_cg_opts co)
{
    const int64_t n = mr_kspace_voxels(ks), M = ks->nsamples;
    float *d = malloc((size_t)M * 2 * sizeof *d), *b2 = malloc((size_t)n * 2 * sizeof *b2);
    float *x2 = malloc((size_t)n * 2 * sizeof *x2);
    mr_cg_result res;
    co.metric = NULL;
    for (int64_t i = 0; i < M; i++) {
        const double re = ks->data[2 * i], im = ks->data[2 * i + 1];
        d[2 * i] = (float)(0.6 * re - 0.8 * im);
        d[2 * i + 1] = (float)(0.6 * im + 0.8 * re);
    }
    CHECK_OK(mr_op_adjoint(op, d, b2));
    double num = 0, den = 0;
    for (int64_t v = 0; v < n; v++) {
        const double re = 0.6 * b[2 * v] - 0.8 * b[2 * v + 1], im = 0.6 * b[2 * v + 1] + 0.8 * b[2 * v];
        num += (b2[2 * v] - re) * (b2[2 * v] - re) + (b2[2 * v + 1] - im) * (b2[2 * v + 1] - im);
        den += re * re + im * im;
    }
    CHECK_OK(mr_cg_solve(ops, n, b2, x2, &co, &res));
    mr_cg_result_free(&res);
    const double rotated = magnitude_rel_diff(x2, x, 1.0, n);
    uint64_t rng = test_seed();
    for (int64_t v = 0; v < 2 * n; v++)
        b2[v] = (float)(b[v] * (1.0 + 1e-5 * (2.0 * test_uniform(&rng) - 1.0)));
    CHECK_OK(mr_cg_solve(ops, n, b2, x2, &co, &res));
    mr_cg_result_free(&res);
    const double contract = magnitude_rel_diff(x2, x, 1.0, n);
    printf("CG, data rotated by 0.6+0.8i: F^H d changes by %.3g (rounding), |x| by %.3g; b perturbed by 1e-5: "
           "|x| changes by %.3g\n", sqrt(num / den), rotated, contract);
    CHECK_LE("F^H of the rotated data vs the rotated F^H d (relative L2, float rounding)", sqrt(num / den), 1e-5);
    CHECK_LE("CG |x| change from rotating the data vs from a 1e-5 change of F^H d", rotated, contract);
    free(d);
    free(b2);
    free(x2);
}

static int exists(const char *dir, const char *name)
{
    char p[1024];
    struct stat sb;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0;
}

typedef struct {
    int called;
    double psnr_bl, final_resid;
    int iterations;
    long long outside;
} captured;

static void capture(void *ctx, const struct mr_report *r)
{
    captured *c = ctx;
    c->called = 1;
    c->psnr_bl = r->m[0].metrics[MR_TRUTH_BANDLIMITED].psnr_db;
    c->final_resid = r->m[0].final_history;
    c->iterations = r->m[0].iterations;
    c->outside = r->samples_outside;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static const double min_psnr[2] = {29.7, 33.4}; /* box, dirac: PSNR vs bandlimited (dB) */

/* Operator + CG with basis bases[bi]: 60 iterations reach min_psnr[bi]; the box basis also runs
 * check_cg_phase. 0 when the operator could not be created. */
static int check_basis(mr_kspace *ks, const mr_vecops *ops, int bi, float *b, float *x)
{
    const mr_basis bases[2] = {MR_BASIS_BOX, MR_BASIS_DIRAC};
    const int64_t n = mr_kspace_voxels(ks);
    mr_op_opts oo;
    mr_op_opts_default(&oo);
    oo.device = MR_DEVICE_CPU;
    oo.basis = bases[bi];
    mr_op *op = NULL;
    CHECK_OK(mr_op_create(&op, ks->matrix, ks->traj, ks->nsamples, NULL, &oo));
    if (!op)
        return 0;
    CHECK_OK(mr_op_adjoint(op, ks->data, b));
    mr_cg_opts co;
    mr_cg_opts_default(&co);
    co.normal = normal_apply;
    co.normal_ctx = op;
    co.metric = psnr_bl;
    co.metric_ctx = ks;
    mr_cg_result res;
    CHECK_OK(mr_cg_solve(ops, n, b, x, &co, &res));
    mr_metrics m;
    CHECK_OK(mr_metrics_compute(x, 1, ks->truth_bl, n, &m));
    double peak = 0;
    for (int k = 0; k <= res.iterations; k++)
        peak = fmax(peak, res.metric[k]);
    printf("%s basis: %d iterations, residual %.3e, PSNR vs bandlimited %.2f dB (peak %.2f dB), error %.2f %%\n",
           bi ? "dirac" : "box", res.iterations, res.final_rel_resid, m.psnr_db, peak, m.percent_error);
    CHECK(res.iterations == 60);
    CHECK_LE("final relative residual", res.final_rel_resid, 1e-3);
    CHECK_GE(bi ? "dirac: PSNR vs bandlimited (dB)" : "box: PSNR vs bandlimited (dB)", m.psnr_db, min_psnr[bi]);
    CHECK_LE("per-iteration PSNR at 60 matches the metric", fabs(res.metric[60] - m.psnr_db), 1e-9);
    CHECK_GE("PSNR gain over x = 0 (dB)", res.metric[60] - res.metric[0], 10);
    mr_cg_result_free(&res);
    if (bi == 0)
        check_cg_phase(op, ks, ops, b, x, co);
    mr_op_destroy(op);
    return 1;
}

/* The library calls: operator + CG with the box and the dirac basis */
static void test_library_cg(mr_kspace *ks)
{
    const int64_t n = mr_kspace_voxels(ks);
    float *b = malloc((size_t)n * 2 * sizeof *b), *x = malloc((size_t)n * 2 * sizeof *x);
    mr_vecops ops;
    mr_vecops_cpu_ctx vctx;
    mr_vecops_cpu_init(&ops, &vctx, 0);
    for (int bi = 0; bi < 2; bi++)
        if (!check_basis(ks, &ops, bi, b, x))
            break;
    free(b);
    free(x);
}

/* The pipeline runs share the folder, the first scan file, the options and what the report callback saw. */
typedef struct {
    const char *dir;
    char scan[512], out[512], bad[512];
    mr_recon_opts ro;
    captured cap;
} pipeline_runs;

/* through the pipeline: a scan file -> OUTDIR with every file of the contract */
static void test_pipeline(pipeline_runs *p, const mr_kspace *ks)
{
    snprintf(p->scan, sizeof p->scan, "%s/sl64.h5", p->dir);
    snprintf(p->out, sizeof p->out, "%s/out", p->dir);
    snprintf(p->bad, sizeof p->bad, "%s/never", p->dir);
    CHECK_OK(mr_kspace_write(p->scan, ks));
    mr_recon_opts_default(&p->ro);
    p->ro.op.device = MR_DEVICE_CPU;
    p->ro.op.threads = 2; /* the same reduction order in every run (the coil check below is exact) */
    p->ro.method = "cg,gridding-kb,gridding-bilinear"; /* the methods of "all" before the iterative one */
    p->cap = (captured){0, 0, 0, 0, -1};
    p->ro.on_report = capture;
    p->ro.on_report_ctx = &p->cap;
    CHECK_OK(mr_recon_run(p->scan, p->out, &p->ro));
    CHECK(p->cap.called && p->cap.iterations == 60 && p->cap.outside == 0);
    CHECK_GE("pipeline: CG PSNR vs bandlimited (dB)", p->cap.psnr_bl, min_psnr[0]);
    const char *files[] = {"image_cg.h5", "image_cg.png", "convergence.png", "report.json", "report.md",
                           "metrics.csv", "compare.png", "image_gridding-kb.h5", "image_gridding-bilinear.h5"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        int ok = exists(p->out, files[i]);
        if (!ok)
            fprintf(stderr, "missing %s/%s\n", p->out, files[i]);
        CHECK(ok);
    }
}

/* two coils with data a_c d, a = (-1, 2): negation and doubling are exact in binary floating
 * point through every operation of every method (kernels, FFTs, CG's dot products and updates,
 * gridding), so the coil images are exactly -x and 2x and the root-sum-of-squares image is
 * sqrt(5) |x| up to the rounding of the combination: fl(re^2) + fl(im^2) (<= 2u relative),
 * + 4 times itself (<= u), sqrtf (<= u/2): <= 2.5u per voxel, u = 2^-24; bound 4u. (A coil
 * phase such as 0.6 + 0.8i is not exact in float: check_cg_phase above covers it.) */
static void test_two_coils(pipeline_runs *p, const mr_kspace *ks)
{
    const int64_t n = mr_kspace_voxels(ks);
    char path[1200];
    mr_kspace *k2 = NULL;
    CHECK_OK(mr_kspace_create(&k2, ks->matrix, ks->nsamples, 2));
    memcpy(k2->traj, ks->traj, (size_t)ks->nsamples * 3 * sizeof(float));
    CHECK_OK(mr_kspace_alloc_truth(k2));
    memcpy(k2->truth, ks->truth, (size_t)n * sizeof(float));
    memcpy(k2->truth_bl, ks->truth_bl, (size_t)n * sizeof(float));
    CHECK_OK(mr_kspace_alloc_weights(k2)); /* the same density compensation for the gridding runs */
    memcpy(k2->weights, ks->weights, (size_t)ks->nsamples * sizeof(float));
    const float a[2] = {-1.0f, 2.0f};
    for (int c = 0; c < 2; c++)
        for (int64_t i = 0; i < 2 * ks->nsamples; i++)
            k2->data[2 * c * ks->nsamples + i] = a[c] * ks->data[i];
    snprintf(k2->traj_kind, sizeof k2->traj_kind, "radial2d");
    char scan2[600], out2[600];
    snprintf(scan2, sizeof scan2, "%s/coils2.h5", p->dir);
    snprintf(out2, sizeof out2, "%s/out2", p->dir);
    CHECK_OK(mr_kspace_write(scan2, k2));
    p->ro.sens = "rss"; /* without maps a multi-coil scan would get estimated ones (SENSE) */
    CHECK_OK(mr_recon_run(scan2, out2, &p->ro));
    p->ro.sens = "auto";
    const char *methods[3] = {"cg", "gridding-kb", "gridding-bilinear"};
    for (int mi = 0; mi < 3; mi++) {
        float *i1 = NULL, *i2 = NULL;
        int64_t m1[3], m2[3];
        snprintf(path, sizeof path, "%s/image_%s.h5", p->out, methods[mi]);
        CHECK_OK(mr_image_h5_read(path, &i1, m1));
        snprintf(path, sizeof path, "%s/image_%s.h5", out2, methods[mi]);
        CHECK_OK(mr_image_h5_read(path, &i2, m2));
        if (i1 && i2) {
            const double diff = magnitude_rel_diff(i2, i1, sqrt(5.0), n);
            printf("2 coils, %s: relative L2 difference to sqrt(5) x single coil = %.3g\n", methods[mi], diff);
            CHECK_LE("root-sum-of-squares of coils (-1, 2) vs sqrt(5) x single coil", diff, 4.0 * ldexp(1.0, -24));
        }
        free(i1);
        free(i2);
    }
    mr_kspace_free(k2);
}

/* a sample outside the Nyquist box is a warning, not an error (moves ks's first sample) */
static void test_outside_sample(pipeline_runs *p, mr_kspace *ks)
{
    p->ro.method = "cg";
    p->ro.iters = 5;
    ks->traj[0] = 40; /* > Nx/2 = 32 */
    char scan3[600], out3[600];
    snprintf(scan3, sizeof scan3, "%s/outside.h5", p->dir);
    snprintf(out3, sizeof out3, "%s/out3", p->dir);
    CHECK_OK(mr_kspace_write(scan3, ks));
    CHECK_OK(mr_recon_run(scan3, out3, &p->ro));
    CHECK(p->cap.outside == 1 && p->cap.iterations == 5);
}

/* invalid input: nothing written, OUTDIR not created (rewrites the first scan file as a spiral) */
static void test_invalid_input(pipeline_runs *p, mr_kspace *ks)
{
    struct stat sb;
    mr_recon_opts *ro = &p->ro;
    ro->on_report = NULL;
    ro->iters = -1; /* 0 is the solver's default */
    ro->method = "cg";
    CHECK(mr_recon_run(p->scan, p->bad, ro) == MR_EINVAL);
    ro->iters = 60;
    ro->lambda = NAN;
    CHECK(mr_recon_run(p->scan, p->bad, ro) == MR_EINVAL);
    ro->lambda = 1; /* both the absolute and the relative weight */
    ro->lambda_rel = 0.1;
    CHECK(mr_recon_run(p->scan, p->bad, ro) == MR_EINVAL);
    ro->lambda_rel = -1;
    ro->lambda = 0;
    CHECK(mr_recon_run(p->bad, p->bad, ro) != MR_OK);
    printf("missing file: %s\n", mr_last_error());
    ro->method = "gridding-kb";
    ro->dcf = "analytic";
    snprintf(ks->traj_kind, sizeof ks->traj_kind, "spiral2d"); /* analytic DCF needs a radial kind */
    CHECK_OK(mr_kspace_write(p->scan, ks));
    CHECK(mr_recon_run(p->scan, p->bad, ro) == MR_EINVAL);
    printf("analytic dcf on spiral: %s\n", mr_last_error());
    CHECK(stat(p->bad, &sb) != 0);
}

int main(void)
{
    const int64_t matrix[3] = {64, 64, 1};
    mr_scan_params sp;
    mr_scan_params_default(&sp);
    sp.traj.kind = MR_TRAJ_RADIAL2D;
    mr_traj_params_default(&sp.traj, MR_TRAJ_RADIAL2D, matrix);
    printf("radial %lld spokes x %lld samples\n", (long long)sp.traj.spokes, (long long)sp.traj.readout);
    mr_kspace *ks = NULL;
    CHECK_OK(mr_scan_simulate(&sp, &ks));
    if (!ks)
        return test_finish("test_cg_phantom");
    test_library_cg(ks);

    pipeline_runs p;
    p.dir = test_tmpdir("cg_phantom");
    test_pipeline(&p, ks);
    test_two_coils(&p, ks);
    test_outside_sample(&p, ks);
    test_invalid_input(&p, ks);

    mr_kspace_free(ks);
    if (test_failures == 0)
        nftw(p.dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS); /* keep the files of a failed run */
    return test_finish("test_cg_phantom");
}
