/* The tensor-core GEMM sums (gpu/gemm.h) against the float64 reference (solver/nudft.h): every
 * precision and engine (tf32x3 with our mma.sync kernel and with cuBLAS, fp64 with cuBLAS DGEMM, fp16x3
 * with our kernel; its power-of-two scale of the weights over 60 orders of magnitude and a 1e12 range),
 * adjoint (real weights with and without the Hermitian symmetry, complex weights) and forward, image
 * and Q grids, 2D and 3D, odd and even edges, M not a multiple of any tile, forced small passes,
 * splits and chunks; voxel slabs and mirror-closed plane lists for several GPUs; sample ranges of the
 * forward; the adjoint identity <F x, y> = <x, F^H y>; phantom scans; a realistic size on sampled voxel
 * rows; error paths. Skips (77) without a usable GPU.
 *
 * Tolerances (relative L2 over the grid, fresh random inputs each run): tf32x3 and fp16x3 2e-6, fp64
 * 1e-12; adjoint identity: tf32x3 and fp16x3 2e-6, fp64 1e-12 (relative to ||Fx|| ||y||). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef MR_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#include "gpu/gemm.h"
#include "gpu/gpu.h"
#include "phantoms/scan.h"
#include "solver/nudft.h"
#include "testutil.h"

#define TOL_TF32 2e-6
#define TOL_FP64 1e-12
#define TOL_ADJ_TF32 2e-6

typedef struct {
    const char *name;
    mr_gemm_precision prec;
    mr_gemm_engine engine;
} tmode;

static const tmode modes[] = {
    {"tf32x3/mma", MR_GEMM_TF32X3, MR_GEMM_ENGINE_MMA},
    {"tf32x3/wgmma", MR_GEMM_TF32X3, MR_GEMM_ENGINE_WGMMA}, /* compute capability 9.0 with an sm_90a build only */
    {"tf32x3/cublas", MR_GEMM_TF32X3, MR_GEMM_ENGINE_CUBLAS},
    {"fp64", MR_GEMM_FP64, MR_GEMM_ENGINE_AUTO},
    {"fp16x3", MR_GEMM_FP16X3, MR_GEMM_ENGINE_MMA},
};
#define NMODES ((int)(sizeof modes / sizeof modes[0]))

/* A mode this GPU cannot run (the wgmma engine elsewhere than on compute capability 9.0). */
static int skip_mode(int md) { return modes[md].engine == MR_GEMM_ENGINE_WGMMA && !mr_gemm_wgmma_available(0); }

static double tol_of(mr_gemm_precision p) { return p == MR_GEMM_FP64 ? TOL_FP64 : TOL_TF32; }

/* A plan for mode md with default options (NULL after a failed CHECK). */
static mr_gemm_plan *plan_for(const float *traj, int64_t m, int md)
{
    mr_gemm_opts o;
    mr_gemm_opts_default(&o);
    o.engine = modes[md].engine;
    mr_gemm_plan *p = NULL;
    CHECK_OK(mr_gemm_create(&p, traj, m, &o));
    return p;
}

static void random_traj(uint64_t *rng, const int64_t matrix[3], double kscale, int64_t m, float *traj)
{
    for (int64_t j = 0; j < m; j++)
        for (int a = 0; a < 3; a++)
            traj[3 * j + a] = matrix[a] > 1 ? (float)(kscale * (test_uniform(rng) - 0.5) * (double)matrix[a]) : 0.0f;
}

static void random_weights(uint64_t *rng, int real, int64_t m, float *a)
{
    for (int64_t j = 0; j < m; j++) {
        if (real) {
            a[j] = (float)(0.05 + test_uniform(rng));
        } else {
            a[2 * j] = (float)test_normal(rng);
            a[2 * j + 1] = (float)test_normal(rng);
        }
    }
}

/* Value i of an output array of type t. */
static double out_at(const void *out, mr_gemm_type t, int64_t i)
{
    return t == MR_GEMM_F64 ? ((const double *)out)[i] : (double)((const float *)out)[i];
}

/* Relative L2 of an output of type t (n complex values) against a double reference; NaN fails. */
static double rel_l2(const void *out, mr_gemm_type t, const double *ref, int64_t n)
{
    double num = 0.0, den = 0.0;
    for (int64_t i = 0; i < 2 * n; i++) {
        const double d = out_at(out, t, i) - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
    }
    if (!(num == num))
        return INFINITY;
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static void *alloc_out(int64_t n, mr_gemm_type t)
{
    const size_t es = t == MR_GEMM_F64 ? sizeof(double) : sizeof(float);
    void *p = malloc((size_t)n * 2 * es);
    if (p) { /* NaN everywhere: every value must be written */
        for (int64_t i = 0; i < 2 * n; i++) {
            if (t == MR_GEMM_F64)
                ((double *)p)[i] = NAN;
            else
                ((float *)p)[i] = NAN;
        }
    }
    return p;
}

typedef struct {
    const char *name;
    int64_t matrix[3];
    int qgrid;
    int64_t m;
    double kscale;
} tcase;

/* After a failed comparison, where the wrong values are (for the record of an intermittent failure): the
 * norm ratio, how many voxels are off by more than 1e-3 of the largest reference value, and the first
 * few of them with their (x, y, z) and output/reference values. */
static void describe_wrong(const char *what, const mr_grid *g, const void *out, mr_gemm_type ot, const double *ref)
{
    const int64_t nv = mr_grid_size(g);
    double no = 0.0, nr = 0.0, mx = 0.0;
    for (int64_t i = 0; i < 2 * nv; i++) {
        const double o = out_at(out, ot, i);
        no += o * o;
        nr += ref[i] * ref[i];
        mx = fabs(ref[i]) > mx ? fabs(ref[i]) : mx;
    }
    int64_t bad = 0;
    for (int64_t v = 0; v < nv; v++) {
        const double o0 = out_at(out, ot, 2 * v), o1 = out_at(out, ot, 2 * v + 1);
        if (!(hypot(o0 - ref[2 * v], o1 - ref[2 * v + 1]) <= 1e-3 * mx)) {
            if (bad < 8)
                fprintf(stderr, "  %s: voxel (%lld, %lld, %lld) = (%g, %g), reference (%g, %g)\n", what,
                        (long long)(v % g->n[0]), (long long)(v / g->n[0] % g->n[1]),
                        (long long)(v / (g->n[0] * g->n[1])), o0, o1, ref[2 * v], ref[2 * v + 1]);
            bad++;
        }
    }
    fprintf(stderr, "  %s: |out| / |ref| = %g, %lld of %lld voxels wrong\n", what, sqrt(no / nr), (long long)bad,
            (long long)nv);
}

/* Adjoint of the whole grid in one mode/options/weight kind against the reference. */
static void check_adjoint(const char *what0, mr_gemm_plan *p, const mr_grid *g, mr_gemm_precision prec, const float *a,
                          int real, const double *ref, mr_gemm_type ot)
{
    const int64_t nv = mr_grid_size(g);
    void *out = alloc_out(nv, ot);
    CHECK(out != NULL);
    if (!out)
        return;
    mr_status st = mr_gemm_adjoint(p, g, prec, a, real, out, ot);
    CHECK_OK(st);
    if (st == MR_OK) {
        char what[300];
        snprintf(what, sizeof what, "%s adjoint: rel L2", what0);
        const double e = rel_l2(out, ot, ref, nv);
        CHECK_LE(what, e, tol_of(prec));
        CHECK(mr_gemm_last_ms(p) > 0.0);
        if (!(e <= tol_of(prec)))
            describe_wrong(what0, g, out, ot, ref);
    }
    free(out);
}

static void check_forward(const char *what0, mr_gemm_plan *p, const mr_grid *g, mr_gemm_precision prec, const float *x,
                          int64_t m, const double *ref, mr_gemm_type ot)
{
    void *out = alloc_out(m, ot);
    CHECK(out != NULL);
    if (!out)
        return;
    mr_status st = mr_gemm_forward(p, g, prec, x, out, ot);
    CHECK_OK(st);
    if (st == MR_OK) {
        /* Every sample sums nv terms of modulus |x_v|; the rounding error scales with the terms (a sum of
         * terms with unrelated phases has the size sqrt(sum |x_v|^2)), not with the sum, which can cancel:
         * with one sample one seed gave a sum 1/8 of that size and 2.5e-6 relative to it. The error is
         * measured against the larger of the two. */
        double xx = 0.0, num = 0.0, den = 0.0;
        for (int64_t i = 0; i < 2 * mr_grid_size(g); i++)
            xx += (double)x[i] * x[i];
        for (int64_t i = 0; i < 2 * m; i++) {
            const double d = out_at(out, ot, i) - ref[i];
            num += d * d;
            den += ref[i] * ref[i];
        }
        den = den > (double)m * xx ? den : (double)m * xx;
        char what[300];
        snprintf(what, sizeof what, "%s forward: L2 error / max(|ref|, sqrt(M) |x|)", what0);
        CHECK_LE(what, num == num && den > 0 ? sqrt(num / den) : INFINITY, tol_of(prec));
    }
    free(out);
}

/* Full adjoint (real weights with and without the symmetry, complex) and forward of one case, every
 * mode, default options and forced small passes/chunks/splits. */
static void run_case(const tcase *tc, uint64_t *rng)
{
    const mr_grid g = tc->qgrid ? mr_grid_q(tc->matrix) : mr_grid_image(tc->matrix);
    const int64_t nv = mr_grid_size(&g), m = tc->m;
    float *traj = malloc((size_t)m * 3 * sizeof(float));
    float *ar = malloc((size_t)m * sizeof(float));
    float *ac = malloc((size_t)m * 2 * sizeof(float));
    float *x = malloc((size_t)nv * 2 * sizeof(float));
    double *ref_r = malloc((size_t)nv * 2 * sizeof(double));
    double *ref_c = malloc((size_t)nv * 2 * sizeof(double));
    double *ref_f = malloc((size_t)m * 2 * sizeof(double));
    CHECK(traj && ar && ac && x && ref_r && ref_c && ref_f);
    if (traj && ar && ac && x && ref_r && ref_c && ref_f) {
        random_traj(rng, tc->matrix, tc->kscale, m, traj);
        random_weights(rng, 1, m, ar);
        random_weights(rng, 0, m, ac);
        for (int64_t i = 0; i < 2 * nv; i++)
            x[i] = (float)test_normal(rng);
        mr_nudft_adjoint_ref(&g, traj, ar, 1, m, ref_r);
        mr_nudft_adjoint_ref(&g, traj, ac, 0, m, ref_c);
        mr_nudft_forward_ref(&g, traj, x, m, ref_f);
        for (int small = 0; small <= 1; small++)
            for (int herm = 0; herm <= 1; herm++)
                for (int md = 0; md < NMODES; md++) {
                    if (skip_mode(md))
                        continue;
                    mr_gemm_opts o;
                    mr_gemm_opts_default(&o);
                    o.engine = modes[md].engine;
                    o.hermitian = herm;
                    if (small) { /* passes of one tile, chunks of 96 samples, splits of 64 */
                        o.max_columns = 64;
                        o.max_samples = 96;
                        o.split_samples = 64;
                    }
                    mr_gemm_plan *p = NULL;
                    CHECK_OK(mr_gemm_create(&p, traj, m, &o));
                    if (!p)
                        continue;
                    const mr_gemm_precision prec = modes[md].prec;
                    /* tf32x3 into doubles once, fp64 into floats once: the output types */
                    const mr_gemm_type ot = (prec == MR_GEMM_FP64) != (small && herm) ? MR_GEMM_F64 : MR_GEMM_F32;
                    char what[256];
                    snprintf(what, sizeof what, "%s %s%s%s real", tc->name, modes[md].name, herm ? " hermitian" : "",
                             small ? " small-passes" : "");
                    if (ot == MR_GEMM_F32 && prec == MR_GEMM_FP64) { /* float output: float rounding bound */
                        void *out = alloc_out(nv, ot);
                        if (out && mr_gemm_adjoint(p, &g, prec, ar, 1, out, ot) == MR_OK)
                            CHECK_LE("fp64 into float output: rel L2", rel_l2(out, ot, ref_r, nv), 1e-7);
                        else
                            CHECK(0);
                        free(out);
                    } else {
                        check_adjoint(what, p, &g, prec, ar, 1, ref_r, ot);
                    }
                    if (herm) { /* the symmetry only touches real weights: one pass over complex and forward */
                        snprintf(what, sizeof what, "%s %s%s complex", tc->name, modes[md].name,
                                 small ? " small-passes" : "");
                        check_adjoint(what, p, &g, prec, ac, 0, ref_c, prec == MR_GEMM_FP64 ? MR_GEMM_F64 : MR_GEMM_F32);
                        snprintf(what, sizeof what, "%s %s%s", tc->name, modes[md].name, small ? " small-passes" : "");
                        check_forward(what, p, &g, prec, x, m, ref_f, prec == MR_GEMM_FP64 ? MR_GEMM_F64 : MR_GEMM_F32);
                    }
                    mr_gemm_destroy(p);
                }
    }
    free(traj);
    free(ar);
    free(ac);
    free(x);
    free(ref_r);
    free(ref_c);
    free(ref_f);
}

/* <F x, y> = <x, F^H y> with the GEMM pair (complex inner products in double). */
static void check_adjointness(uint64_t *rng)
{
    const int64_t matrix[3] = {11, 8, 6}, m = 1531;
    const mr_grid g = mr_grid_image(matrix);
    const int64_t nv = mr_grid_size(&g);
    float *traj = malloc((size_t)m * 3 * sizeof(float)), *x = malloc((size_t)nv * 2 * sizeof(float)),
          *y = malloc((size_t)m * 2 * sizeof(float));
    double *fx = malloc((size_t)m * 2 * sizeof(double)), *fhy = malloc((size_t)nv * 2 * sizeof(double));
    CHECK(traj && x && y && fx && fhy);
    if (traj && x && y && fx && fhy) {
        random_traj(rng, matrix, 1.0, m, traj);
        for (int64_t i = 0; i < 2 * nv; i++)
            x[i] = (float)test_normal(rng);
        for (int64_t i = 0; i < 2 * m; i++)
            y[i] = (float)test_normal(rng);
        for (int md = 0; md < NMODES; md++) {
            if (skip_mode(md))
                continue;
            mr_gemm_plan *p = plan_for(traj, m, md);
            if (!p)
                continue;
            const mr_gemm_precision prec = modes[md].prec;
            if (mr_gemm_forward(p, &g, prec, x, fx, MR_GEMM_F64) == MR_OK &&
                mr_gemm_adjoint(p, &g, prec, y, 0, fhy, MR_GEMM_F64) == MR_OK) {
                double lr = 0, li = 0, rr = 0, ri = 0; /* <Fx, y> = sum conj(y) Fx; <x, F^H y> = sum conj(F^H y) x */
                double nfx = 0, ny = 0;
                for (int64_t k = 0; k < m; k++) {
                    lr += y[2 * k] * fx[2 * k] + y[2 * k + 1] * fx[2 * k + 1];
                    li += y[2 * k] * fx[2 * k + 1] - y[2 * k + 1] * fx[2 * k];
                    nfx += fx[2 * k] * fx[2 * k] + fx[2 * k + 1] * fx[2 * k + 1];
                    ny += y[2 * k] * y[2 * k] + y[2 * k + 1] * y[2 * k + 1];
                }
                for (int64_t v = 0; v < nv; v++) {
                    rr += fhy[2 * v] * x[2 * v] + fhy[2 * v + 1] * x[2 * v + 1];
                    ri += fhy[2 * v] * x[2 * v + 1] - fhy[2 * v + 1] * x[2 * v];
                }
                char what[128];
                /* relative to ||Fx|| ||y|| (as tests/linop_check.h): |<Fx,y>| of random vectors is ~1/sqrt(M) of
                 * that, so a bound relative to it failed by chance (1.2e-5 against 1e-5 on the H200, 2026-11-27) */
                snprintf(what, sizeof what, "%s adjoint identity |<Fx,y> - <x,F^H y>| / (||Fx|| ||y||)", modes[md].name);
                CHECK_LE(what, hypot(lr - rr, li - ri) / sqrt(nfx * ny), prec == MR_GEMM_FP64 ? TOL_FP64 : TOL_ADJ_TF32);
            } else {
                CHECK(0);
            }
            mr_gemm_destroy(p);
        }
    }
    free(traj);
    free(x);
    free(y);
    free(fx);
    free(fhy);
}

#ifdef MR_HAVE_CUDA
/* A host-to-device copy that has landed on return: cudaMemcpy from pageable memory may return before
 * its DMA completes, and the plans' non-blocking streams are not ordered after the legacy stream. */
static cudaError_t h2d(void *dst, const void *src, size_t bytes)
{
    const cudaError_t e = cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice);
    return e == cudaSuccess ? cudaDeviceSynchronize() : e;
}

/* Device entry points: slabs, mirror-closed plane lists for 2 and 3 parts (the multi-GPU split, run
 * here on one GPU) assembled into the whole Q grid, and forward sample ranges. */
static void check_device_api(uint64_t *rng)
{
    const int64_t matrix[3] = {10, 7, 6}, m = 2111;
    const mr_grid g = mr_grid_q(matrix), gi = mr_grid_image(matrix);
    const int64_t nv = mr_grid_size(&g), plane = g.n[0] * g.n[1], nvi = mr_grid_size(&gi);
    float *traj = malloc((size_t)m * 3 * sizeof(float)), *ar = malloc((size_t)m * sizeof(float));
    float *x = malloc((size_t)nvi * 2 * sizeof(float));
    double *ref = malloc((size_t)nv * 2 * sizeof(double)), *reff = malloc((size_t)m * 2 * sizeof(double));
    float *host = malloc((size_t)nv * 2 * sizeof(float)), *full = malloc((size_t)nv * 2 * sizeof(float));
    int64_t *planes = malloc((size_t)g.n[2] * sizeof(int64_t));
    float *d_a = NULL, *d_out = NULL, *d_x = NULL;
    CHECK(traj && ar && x && ref && reff && host && full && planes);
    if (!traj || !ar || !x || !ref || !reff || !host || !full || !planes)
        goto done;
    random_traj(rng, matrix, 1.0, m, traj);
    random_weights(rng, 1, m, ar);
    for (int64_t i = 0; i < 2 * nvi; i++)
        x[i] = (float)test_normal(rng);
    mr_nudft_adjoint_ref(&g, traj, ar, 1, m, ref);
    mr_nudft_forward_ref(&gi, traj, x, m, reff);
    CHECK(cudaMalloc((void **)&d_a, (size_t)m * sizeof(float)) == cudaSuccess);
    CHECK(cudaMalloc((void **)&d_out, (size_t)nv * 2 * sizeof(float)) == cudaSuccess);
    CHECK(cudaMalloc((void **)&d_x, (size_t)nvi * 2 * sizeof(float)) == cudaSuccess);
    if (!d_a || !d_out || !d_x)
        goto done;
    CHECK(h2d(d_a, ar, (size_t)m * sizeof(float)) == cudaSuccess);
    CHECK(h2d(d_x, x, (size_t)nvi * 2 * sizeof(float)) == cudaSuccess);
    for (int md = 0; md < NMODES; md++) {
        if (skip_mode(md))
            continue;
        if (modes[md].engine == MR_GEMM_ENGINE_CUBLAS) /* our kernels only */
            continue;
        mr_gemm_plan *p = plan_for(traj, m, md);
        if (!p)
            continue;
        const mr_gemm_precision prec = modes[md].prec;
        const double tol = prec == MR_GEMM_FP64 ? 1e-7 : TOL_TF32; /* float outputs here */
        char what[200];
        /* slabs [0, 5) and [5, 12) (12 planes on the Q grid) */
        const int64_t cut[3] = {0, 5, g.n[2]};
        for (int s = 0; s < 2; s++) {
            for (int64_t i = 0; i < 2 * nv; i++)
                host[i] = NAN;
            CHECK(h2d(d_out, host, (size_t)nv * 2 * sizeof(float)) == cudaSuccess);
            CHECK_OK(mr_gemm_adjoint_slab_dev(p, &g, prec, d_a, 1, cut[s], cut[s + 1], d_out, MR_GEMM_F32));
            const int64_t n = (cut[s + 1] - cut[s]) * plane;
            CHECK(cudaMemcpy(host, d_out, (size_t)n * 2 * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
            snprintf(what, sizeof what, "%s Q slab [%lld, %lld): rel L2", modes[md].name, (long long)cut[s],
                     (long long)cut[s + 1]);
            CHECK_LE(what, test_rel_l2(host, ref + 2 * cut[s] * plane, 2 * n), tol);
        }
        /* mirror-closed plane lists for 2 and 3 parts, assembled */
        for (int parts = 2; parts <= 3; parts++) {
            for (int64_t i = 0; i < 2 * nv; i++)
                full[i] = NAN;
            int64_t covered = 0;
            for (int part = 0; part < parts; part++) {
                int64_t np = 0;
                CHECK_OK(mr_gemm_plane_split(&g, 1, parts, part, planes, &np));
                covered += np;
                if (np == 0)
                    continue;
                CHECK_OK(mr_gemm_adjoint_planes_dev(p, &g, prec, d_a, 1, planes, np, d_out, MR_GEMM_F32));
                CHECK(cudaMemcpy(host, d_out, (size_t)np * plane * 2 * sizeof(float), cudaMemcpyDeviceToHost) ==
                      cudaSuccess);
                for (int64_t s = 0; s < np; s++)
                    memcpy(full + 2 * planes[s] * plane, host + 2 * s * plane, (size_t)plane * 2 * sizeof(float));
            }
            CHECK(covered == g.n[2]);
            snprintf(what, sizeof what, "%s Q from %d mirror-closed plane lists: rel L2", modes[md].name, parts);
            CHECK_LE(what, test_rel_l2(full, ref, 2 * nv), tol);
        }
        /* forward on sample ranges */
        const int64_t mc[4] = {0, 1, 1000, m};
        for (int s = 0; s < 3; s++) {
            const int64_t n = mc[s + 1] - mc[s];
            CHECK_OK(mr_gemm_forward_dev(p, &gi, prec, d_x, mc[s], mc[s + 1], d_out, MR_GEMM_F32));
            CHECK(cudaMemcpy(host, d_out, (size_t)n * 2 * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
            snprintf(what, sizeof what, "%s forward samples [%lld, %lld): rel L2", modes[md].name, (long long)mc[s],
                     (long long)mc[s + 1]);
            CHECK_LE(what, test_rel_l2(host, reff + 2 * mc[s], 2 * n), s == 0 ? 2.5 * tol : tol);
        }
        /* error paths: no partial work, a clear status */
        const int64_t bad[2] = {3, 3};
        CHECK(mr_gemm_adjoint_planes_dev(p, &g, prec, d_a, 1, bad, 2, d_out, MR_GEMM_F32) == MR_EINVAL);
        CHECK(mr_gemm_adjoint_slab_dev(p, &g, prec, d_a, 1, 4, 4, d_out, MR_GEMM_F32) == MR_EINVAL);
        CHECK(mr_gemm_forward_dev(p, &gi, prec, d_x, 0, m + 1, d_out, MR_GEMM_F32) == MR_EINVAL);
        CHECK(mr_gemm_forward_dev(p, &gi, (mr_gemm_precision)7, d_x, 0, m, d_out, MR_GEMM_F32) == MR_EINVAL);
        mr_gemm_destroy(p);
    }
done:
    cudaFree(d_a);
    cudaFree(d_out);
    cudaFree(d_x);
    free(traj);
    free(ar);
    free(x);
    free(ref);
    free(reff);
    free(host);
    free(full);
    free(planes);
}
#endif

/* Phantom scans (analytic Shepp-Logan k-space, 30 dB noise): F^H d with the data and Q with unit
 * weights on the Q grid, every mode. */
static void check_phantom(const char *name, mr_traj_kind kind, const int64_t matrix[3], int64_t spokes, int64_t readout)
{
    mr_kspace *ks = test_phantom_scan(kind, matrix, spokes, readout);
    if (!ks)
        return;
    const int64_t m = ks->nsamples;
    for (int q = 0; q <= 1; q++) {
        const mr_grid g = q ? mr_grid_q(ks->matrix) : mr_grid_image(ks->matrix);
        const int64_t nv = mr_grid_size(&g);
        float *a = malloc((size_t)m * 2 * sizeof(float));
        double *ref = malloc((size_t)nv * 2 * sizeof(double));
        CHECK(a && ref);
        if (a && ref) {
            for (int64_t i = 0; i < (q ? m : 2 * m); i++)
                a[i] = q ? 1.0f : ks->data[i];
            mr_nudft_adjoint_ref(&g, ks->traj, a, q, m, ref);
            for (int md = 0; md < NMODES; md++) {
                if (skip_mode(md))
                    continue;
                mr_gemm_plan *p = plan_for(ks->traj, m, md);
                if (!p)
                    continue;
                char what[200];
                snprintf(what, sizeof what, "phantom %s %s %s", name, q ? "Q" : "F^H d", modes[md].name);
                check_adjoint(what, p, &g, modes[md].prec, a, q, ref,
                              modes[md].prec == MR_GEMM_FP64 ? MR_GEMM_F64 : MR_GEMM_F32);
                mr_gemm_destroy(p);
            }
        }
        free(a);
        free(ref);
    }
    mr_kspace_free(ks);
}

/* A realistic size (64^3 F^H d and the 96^3 Q grid of a 48^3 matrix, 60000 samples): the whole grid
 * on the GPU, the reference on 8 voxel rows spread over the volume. */
static void check_realistic(uint64_t *rng)
{
    const int64_t m = 60000;
    for (int q = 0; q <= 1; q++) {
        const int64_t matrix[3] = {q ? 48 : 64, q ? 48 : 64, q ? 48 : 64};
        const mr_grid g = q ? mr_grid_q(matrix) : mr_grid_image(matrix);
        const int64_t nv = mr_grid_size(&g), nx = g.n[0], rows = g.n[1] * g.n[2];
        float *traj = malloc((size_t)m * 3 * sizeof(float)), *a = malloc((size_t)m * 2 * sizeof(float));
        void *out = malloc((size_t)nv * 2 * sizeof(double));
        double *ref = malloc((size_t)nx * 2 * sizeof(double));
        CHECK(traj && a && out && ref);
        if (traj && a && out && ref) {
            random_traj(rng, matrix, 1.0, m, traj);
            random_weights(rng, q, m, a);
            for (int md = 0; md < NMODES; md++) {
                if (skip_mode(md))
                    continue;
                if (modes[md].engine == MR_GEMM_ENGINE_CUBLAS)
                    continue;
                mr_gemm_plan *p = NULL;
                CHECK_OK(mr_gemm_create(&p, traj, m, NULL));
                if (!p)
                    continue;
                const mr_gemm_type ot = modes[md].prec == MR_GEMM_FP64 ? MR_GEMM_F64 : MR_GEMM_F32;
                CHECK_OK(mr_gemm_adjoint(p, &g, modes[md].prec, a, q, out, ot));
                double num = 0, den = 0;
                for (int i = 0; i < 8; i++) {
                    const int64_t r = rows * (2 * i + 1) / 16, iz = r / g.n[1], iy = r % g.n[1];
                    mr_grid s = g; /* one row of voxels */
                    s.n[1] = s.n[2] = 1;
                    s.center[1] = g.center[1] - iy;
                    s.center[2] = g.center[2] - iz;
                    mr_nudft_adjoint_ref(&s, traj, a, q, m, ref);
                    for (int64_t v = 0; v < 2 * nx; v++) {
                        const double o = ot == MR_GEMM_F64 ? ((double *)out)[2 * r * nx + v]
                                                           : (double)((float *)out)[2 * r * nx + v];
                        num += (o - ref[v]) * (o - ref[v]);
                        den += ref[v] * ref[v];
                    }
                }
                char what[200];
                snprintf(what, sizeof what, "realistic %s %lld^3 grid, %lld samples, %s: rel L2 on 8 rows",
                         q ? "Q" : "F^H d", (long long)nx, (long long)m, modes[md].name);
                CHECK_LE(what, sqrt(num / den), tol_of(modes[md].prec));
                printf("%s = %.3e (%.2f ms)\n", what, sqrt(num / den), mr_gemm_last_ms(p));
                mr_gemm_destroy(p);
            }
        }
        free(traj);
        free(a);
        free(out);
        free(ref);
    }
}

/* The FP16 scale: weights of every magnitude from 1e-30 to 1e30 (FP16 alone spans 6e-8 .. 65504), and
 * weights spanning 12 orders of magnitude in one call, against the reference; the same bound as
 * everywhere. An all-zero call gives exact zeros. */
static void check_fp16_scale(uint64_t *rng)
{
    const int64_t matrix[3] = {12, 10, 8}, m = 3001;
    for (int q = 0; q <= 1; q++) {
        const mr_grid g = q ? mr_grid_q(matrix) : mr_grid_image(matrix);
        const int64_t nv = mr_grid_size(&g);
        float *traj = malloc((size_t)m * 3 * sizeof(float)), *a = malloc((size_t)m * 2 * sizeof(float));
        double *ref = malloc((size_t)nv * 2 * sizeof(double));
        float *out = malloc((size_t)nv * 2 * sizeof(float));
        CHECK(traj && a && ref && out);
        mr_gemm_plan *p = NULL;
        if (traj && a && ref && out) {
            random_traj(rng, matrix, 1.0, m, traj);
            CHECK_OK(mr_gemm_create(&p, traj, m, NULL));
        }
        for (int c = 0; p && c < 5; c++) {
            const double mag = c == 0 ? 1e-30 : c == 1 ? 1e-7 : c == 2 ? 3e4 : 1e30; /* c 4: a 1e12 range */
            random_weights(rng, q, m, a);
            for (int64_t i = 0; i < (q ? m : 2 * m); i++)
                a[i] = (float)(a[i] * (c < 4 ? mag : pow(10.0, -6.0 + 12.0 * test_uniform(rng))));
            mr_nudft_adjoint_ref(&g, traj, a, q, m, ref);
            if (mr_gemm_adjoint(p, &g, MR_GEMM_FP16X3, a, q, out, MR_GEMM_F32) != MR_OK) {
                CHECK(0);
                continue;
            }
            char what[200];
            snprintf(what, sizeof what, "fp16x3 %s, weights %s: rel L2", q ? "Q" : "F^H d",
                     c == 0 ? "~1e-30" : c == 1 ? "~1e-7" : c == 2 ? "~3e4" : c == 3 ? "~1e30" : "1e-6 .. 1e6");
            CHECK_LE(what, rel_l2(out, MR_GEMM_F32, ref, nv), TOL_TF32);
        }
        if (p) {
            memset(a, 0, (size_t)m * 2 * sizeof(float));
            int nonzero = 0;
            if (mr_gemm_adjoint(p, &g, MR_GEMM_FP16X3, a, q, out, MR_GEMM_F32) == MR_OK)
                for (int64_t i = 0; i < 2 * nv; i++)
                    nonzero += out[i] != 0.0f;
            else
                nonzero = -1;
            CHECK(nonzero == 0); /* fp16x3 zero weights: exact zeros */
        }
        mr_gemm_destroy(p);
        free(traj);
        free(a);
        free(ref);
        free(out);
    }
}

int main(void)
{
    if (mr_gpu_count() == 0) {
        printf("test_gpu_gemm: no usable GPU, skipped\n");
        return TEST_SKIP;
    }
    uint64_t rng = test_seed();
    const tcase cases[] = {
        {"2D 20x16 image", {20, 16, 1}, 0, 1237, 1.0},
        {"2D 17x13 image (odd)", {17, 13, 1}, 0, 1237, 1.0},
        {"2D 20x16 Q", {20, 16, 1}, 1, 1237, 1.0},
        {"2D 80x6 Q (two row tiles)", {80, 6, 1}, 1, 611, 1.0},
        {"3D 9x7x5 image (odd)", {9, 7, 5}, 0, 1237, 1.0},
        {"3D 12x10x8 image", {12, 10, 8}, 0, 997, 1.7},
        {"3D 9x7x5 Q", {9, 7, 5}, 1, 1237, 1.0},
        {"3D 6x1x40 image (one column per plane)", {6, 1, 40}, 0, 333, 1.0},
        {"3D 5x4x3 Q, one sample", {5, 4, 3}, 1, 1, 1.0},
        {"3D 8x8x8 image, 5000 samples (many splits)", {8, 8, 8}, 0, 5000, 1.0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(&cases[i], &rng);
    check_adjointness(&rng);
#ifdef MR_HAVE_CUDA
    check_device_api(&rng);
#endif
    const int64_t m2[3] = {64, 64, 1}, m3[3] = {24, 24, 24};
    check_phantom("2D 64x64 radial 101x128", MR_TRAJ_RADIAL2D, m2, 101, 128);
    check_phantom("3D 24^3 kooshball 200x48", MR_TRAJ_KOOSHBALL, m3, 200, 48);
    check_realistic(&rng);
    check_fp16_scale(&rng);

    /* bad arguments */
    mr_gemm_plan *p = NULL;
    const float k[3] = {0, 0, 0};
    CHECK(mr_gemm_create(&p, NULL, 1, NULL) == MR_EINVAL && p == NULL);
    CHECK(mr_gemm_create(&p, k, 0, NULL) == MR_EINVAL && p == NULL);
    mr_gemm_opts o;
    mr_gemm_opts_default(&o);
    o.split_samples = 33;
    CHECK(mr_gemm_create(&p, k, 1, &o) == MR_EINVAL && p == NULL);
    mr_gemm_opts_default(&o);
    o.engine = (mr_gemm_engine)(MR_GEMM_ENGINE_WGMMA + 1);
    CHECK(mr_gemm_create(&p, k, 1, &o) == MR_EINVAL && p == NULL);
    if (!mr_gemm_wgmma_available(0)) { /* asked for where it cannot run: a clear error, no plan */
        o.engine = MR_GEMM_ENGINE_WGMMA;
        CHECK(mr_gemm_create(&p, k, 1, &o) == MR_ENODEV && p == NULL);
        mr_clear_error();
    }
    printf("wgmma engine on GPU 0: %s\n", mr_gemm_wgmma_available(0) ? "available (tested)" : "not available (skipped)");
    mr_gemm_precision pr;
    CHECK(mr_gemm_precision_parse("fp64", &pr) == MR_OK && pr == MR_GEMM_FP64);
    CHECK(mr_gemm_precision_parse("fp16x3", &pr) == MR_OK && pr == MR_GEMM_FP16X3);
    CHECK(strcmp(mr_gemm_precision_name(MR_GEMM_FP16X3), "fp16x3") == 0);
    CHECK(mr_gemm_precision_parse("fp32", &pr) == MR_EINVAL);
    return test_finish("test_gpu_gemm");
}
