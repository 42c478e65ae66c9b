/* The operators of solver/linop.h on a GPU backend: the device vector operations against the host
 * ones, the device-pointer NUDFT entry points against the host ones and the float64 reference, and
 * for every operator and composition the adjoint and normal checks (tests/linop_check.h) plus
 * GPU-vs-CPU agreement of forward, adjoint and normal on the same inputs. Skips (77) without a GPU.
 *
 * Bounds (relative L2 unless said; fresh random inputs each run):
 *   vector ops: dot/norm/mag_dist2 vs host 1e-10 (double sums in another order), axpy/xpay/scale 1e-6;
 *   adjointness 1e-5; normal vs adjoint(forward) 1e-6 for voxel-wise operators, 1e-4 through Toeplitz;
 *   GPU vs CPU: voxel-wise operators 1e-6; NUDFT forward (SFU) and adjoint (multi-voxel kernel) 1e-5,
 *   against float64 1e-5; Toeplitz normal (Q on the GPU, cuFFT) 1e-4 (as test_op_device);
 *   device-packed adjoint vs host-packed adjoint 1e-6, with forced voxel passes 1e-6;
 *   the Toeplitz transforms (gpu/toeplitz.cu: every axis by the line kernels of gpu/toeplitz_column.cu where
 *   each 2N is a power of 2 from 8 to 1024; else slab-pruned, the slowest axis fused where its 2N is such a
 *   power, else by cuFFT), the fused slowest axis with cuFFT's slabs (MR_GPU_TOEPLITZ=column) and the pruned
 *   cuFFT ones (MR_GPU_TOEPLITZ=cufft) vs one unpruned plan (MR_GPU_TOEPLITZ=full), normal 1e-6, on 3D, 2D
 *   and grids with a unit axis (x, y or both of the slow axes), axes of 8 ... 1024 points;
 *   the SENSE chain's model of its normal (solver/linop.h): the same numbers on both backends, its circulant
 *   solve GPU vs CPU 1e-5. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"
#include "gpu/gpu_ops.h"
#include "linop_check.h"
#include "solver/nudft.h"

static uint64_t rng;

static void symbol_agree(const char *label, mr_linop *g, mr_linop *c, int64_t n);

static void vector_ops(mr_backend *gpu, mr_backend *cpu)
{
    const int64_t n = 100003;
    const mr_vecops *g = mr_backend_vecops(gpu), *h = mr_backend_vecops(cpu);
    float *x = test_random_normal(&rng, 2 * n), *y = test_random_normal(&rng, 2 * n);
    float *r1 = malloc((size_t)n * 2 * sizeof(float)), *r2 = malloc((size_t)n * 2 * sizeof(float));
    float *dx = mr_backend_upload(gpu, 2 * n, x), *dy = mr_backend_upload(gpu, 2 * n, y);
    CHECK(dx && dy);
    if (!dx || !dy)
        goto done;
    double a[2], b[2];
    g->dot(g->ctx, n, dx, dy, a);
    h->dot(h->ctx, n, x, y, b);
    CHECK_LE("device dot vs host, relative", hypot(a[0] - b[0], a[1] - b[1]) / hypot(b[0], b[1]), 1e-10);
    CHECK_LE("device norm vs host, relative", fabs(g->norm(g->ctx, n, dx) - h->norm(h->ctx, n, x)) / h->norm(h->ctx, n, x),
             1e-10);
    const double md = g->mag_dist2(g->ctx, n, dx, dy), mh = h->mag_dist2(h->ctx, n, x, y);
    CHECK_LE("device mag_dist2 vs host, relative", fabs(md - mh) / mh, 1e-10);
    mr_vec_axpy(g, n, dy, 0.75, dx);
    mr_vec_axpy(h, n, y, 0.75, x);
    CHECK_OK(g->to_host(g->ctx, n, r1, dy));
    CHECK_LE("device axpy vs host", test_rel_l2_ff(r1, y, 2 * n), 1e-6);
    mr_vec_xpay(g, n, dy, -0.5, dx);
    mr_vec_xpay(h, n, y, -0.5, x);
    mr_vec_scale(g, n, dy, 3.0);
    mr_vec_scale(h, n, y, 3.0);
    CHECK_OK(g->to_host(g->ctx, n, r1, dy));
    CHECK_LE("device xpay + scale vs host", test_rel_l2_ff(r1, y, 2 * n), 1e-6);
    g->copy(g->ctx, n, dy, dx);
    CHECK_OK(g->to_host(g->ctx, n, r1, dy));
    CHECK(memcmp(r1, x, (size_t)n * 2 * sizeof(float)) == 0);
    g->zero(g->ctx, n, dy);
    CHECK_OK(g->to_host(g->ctx, n, r2, dy));
    double s = 0;
    for (int64_t i = 0; i < 2 * n; i++)
        s += fabs(r2[i]);
    CHECK(s == 0);
    CHECK_OK(g->status(g->ctx));
done:
    g->release(g->ctx, dx);
    g->release(g->ctx, dy);
    free(x);
    free(y);
    free(r1);
    free(r2);
}

/* The device entry points of gpu/gpu.h directly: adjoint with device weights vs host weights (the
 * device packing), passes, and the forward kernel against float64. */
static void nudft_entry_points(mr_backend *gpu, const int64_t matrix[3], int64_t m)
{
    const mr_grid gi = mr_grid_image(matrix), gq = mr_grid_q(matrix);
    const int64_t n = mr_grid_size(&gi), nq = mr_grid_size(&gq);
    struct mr_gpu_ctx *c = mr_backend_gpu_ctx(gpu);
    float *traj = test_random_traj(&rng, matrix, m), *a = test_random_normal(&rng, 2 * m);
    float *wr = test_random_weights(&rng, m), *x = test_random_normal(&rng, 2 * n);
    const int64_t len = nq > m ? nq : m; /* the Q grid or the samples, whichever is larger */
    float *h1 = malloc((size_t)len * 2 * sizeof(float)), *h2 = malloc((size_t)len * 2 * sizeof(float));
    double *ref = malloc((size_t)len * 2 * sizeof(double));
    float *da = mr_backend_upload(gpu, 2 * m, a), *dw = mr_backend_upload(gpu, m, wr), *dx = mr_backend_upload(gpu, 2 * n, x);
    float *dout = mr_backend_alloc(gpu, len);
    mr_gpu_nudft *p = NULL;
    CHECK_OK(mr_gpu_nudft_create(&p, mr_backend_gpu_index(gpu), traj, m));
    if (!p || !da || !dw || !dx || !dout)
        goto done;
    char label[160];
    /* F^H d sum: device weights vs host weights, both variants */
    for (int v = 0; v < 2; v++) {
        const mr_gpu_variant var = v ? MR_GPU_CONSTANT : MR_GPU_BEST;
        CHECK_OK(mr_gpu_nudft_adjoint(p, &gi, a, 0, h1, var));
        CHECK_OK(mr_gpu_nudft_adjoint_dev(p, c, &gi, da, 0, dout, var));
        CHECK_OK(mr_gpu_download(c, h2, dout, 2 * n));
        snprintf(label, sizeof label, "%lldx%lldx%lld M=%lld complex weights %s: device-packed vs host-packed",
                 (long long)matrix[0], (long long)matrix[1], (long long)matrix[2], (long long)m, v ? "accurate" : "best");
        CHECK_LE(label, test_rel_l2_ff(h2, h1, 2 * n), 1e-6);
    }
    mr_nudft_adjoint_ref(&gi, traj, a, 0, m, ref);
    snprintf(label, sizeof label, "device adjoint (accurate) vs float64, %lldx%lldx%lld", (long long)matrix[0],
             (long long)matrix[1], (long long)matrix[2]);
    CHECK_LE(label, test_rel_l2(h2, ref, 2 * n), 1e-5);
    /* Q: real weights on the Q grid, also split into passes */
    CHECK_OK(mr_gpu_nudft_adjoint(p, &gq, wr, 1, h1, MR_GPU_BEST));
    mr_gpu_nudft_set_max_pass(p, 3 * gq.n[0] + 1);
    CHECK_OK(mr_gpu_nudft_adjoint_dev(p, c, &gq, dw, 1, dout, MR_GPU_BEST));
    mr_gpu_nudft_set_max_pass(p, 0);
    CHECK_OK(mr_gpu_download(c, h2, dout, 2 * nq));
    CHECK_LE("Q on the device in passes of 3 rows vs host-packed", test_rel_l2_ff(h2, h1, 2 * nq), 1e-6);
    /* forward against float64, SFU and accurate trig */
    mr_nudft_forward_ref(&gi, traj, x, m, ref);
    for (int exact = 0; exact < 2; exact++) {
        CHECK_OK(mr_gpu_nudft_forward_dev(p, c, &gi, dx, dout, exact));
        CHECK_OK(mr_gpu_download(c, h2, dout, 2 * m));
        snprintf(label, sizeof label, "device forward (%s) vs float64, %lldx%lldx%lld M=%lld",
                 exact ? "sincospif" : "__sincosf", (long long)matrix[0], (long long)matrix[1], (long long)matrix[2],
                 (long long)m);
        CHECK_LE(label, test_rel_l2(h2, ref, 2 * m), 1e-5);
    }
done:
    mr_gpu_nudft_destroy(p);
    const mr_vecops *g = mr_backend_vecops(gpu);
    g->release(g->ctx, da);
    g->release(g->ctx, dw);
    g->release(g->ctx, dx);
    g->release(g->ctx, dout);
    free(traj);
    free(a);
    free(wr);
    free(x);
    free(h1);
    free(h2);
    free(ref);
}

/* Every operator and the SENSE system on both backends. */
static void operators(mr_backend *gpu, mr_backend *cpu, const int64_t matrix[3], int64_t m)
{
    const int64_t n = matrix[0] * matrix[1] * matrix[2], nc = 3;
    const int64_t dims[4] = {matrix[0], matrix[1], matrix[2], 1};
    float *traj = test_random_traj(&rng, matrix, m), *w = test_random_weights(&rng, m);
    float *maps = test_random_normal(&rng, 2 * n * nc);
    for (int64_t i = 0; i < 2 * n * nc; i++) /* coils of magnitude ~1, so that the maps have a model (linop.h) */
        maps[i] = (float)((i % 2 ? 0.0 : 1.0) + 0.2 * fmax(-2.0, fmin(2.0, maps[i]))); /* sum_c |S_c|^2 >= 1.08 */
    mr_backend *be[2] = {gpu, cpu};
    enum { ID, SENS, FD, F, FSLOW, E, SYS, COUNT };
    static const char *const names[COUNT] = {"identity 0.5",  "maps (3 coils)", "finite differences",
                                             "NUDFT 3 coils", "NUDFT 3 coils without Toeplitz",
                                             "SENSE chain(maps, NUDFT)", "SENSE system + 1e-3 R^H R"};
    mr_linop *op[2][COUNT];
    memset(op, 0, sizeof op);
    mr_nudft_opts o;
    mr_nudft_opts_default(&o);
    for (int k = 0; k < 2; k++) {
        mr_linop *fd1 = NULL, *f1 = NULL, *s1 = NULL;
        CHECK_OK(mr_linop_identity(&op[k][ID], be[k], dims, 0.5));
        CHECK_OK(mr_linop_sens_create(&op[k][SENS], be[k], matrix, nc, maps));
        CHECK_OK(mr_linop_fd_create(&op[k][FD], be[k], matrix));
        o.fast_normal = 1;
        CHECK_OK(mr_linop_nudft_create(&op[k][F], be[k], matrix, traj, m, w, nc, &o, NULL));
        o.fast_normal = 0;
        CHECK_OK(mr_linop_nudft_create(&op[k][FSLOW], be[k], matrix, traj, m, w, nc, &o, NULL));
        o.fast_normal = 1;
        CHECK_OK(mr_linop_nudft_create(&f1, be[k], matrix, traj, m, NULL, nc, &o, NULL));
        CHECK_OK(mr_linop_sens_create(&s1, be[k], matrix, nc, maps));
        if (f1 && s1)
            CHECK_OK(mr_linop_chain(&op[k][E], s1, f1));
        CHECK_OK(mr_linop_fd_create(&fd1, be[k], matrix));
        if (op[k][E] && fd1)
            CHECK_OK(mr_linop_normal_system(&op[k][SYS], op[k][E], fd1, 1e-3));
        mr_linop *drop[] = {fd1, f1, s1};
        for (size_t i = 0; i < sizeof drop / sizeof drop[0]; i++)
            mr_linop_free(drop[i]);
    }
    char label[200];
    for (int i = 0; i < COUNT; i++) {
        if (!op[0][i] || !op[1][i])
            continue;
        const int toeplitz = i == F || i == E || i == SYS;
        const int nudft = i == F || i == FSLOW || i == E || i == SYS;
        snprintf(label, sizeof label, "GPU %s %lldx%lldx%lld", names[i], (long long)matrix[0], (long long)matrix[1],
                 (long long)matrix[2]);
        lc_check(label, op[0][i], &rng, 1e-5, toeplitz ? 1e-4 : 1e-6);
        if (i == E)
            symbol_agree(label, op[0][i], op[1][i], n);
        lc_agree(label, op[0][i], op[1][i], &rng, nudft ? 1e-5 : 1e-6, toeplitz ? 1e-4 : (nudft ? 1e-5 : 1e-6));
        mr_linop_free(op[0][i]);
        mr_linop_free(op[1][i]);
    }
    free(traj);
    free(w);
    free(maps);
}

/* The models of the normal (solver/linop.h) of the same operator on both backends: the same numbers, and the
 * circulant solve (gpu/toeplitz.cu against solver/toeplitz.c) within 1e-5 on a random image. */
static void symbol_agree(const char *label, mr_linop *g, mr_linop *c, int64_t n)
{
    mr_linop_symbol yg = mr_linop_symbol_of(g), yc = mr_linop_symbol_of(c);
    CHECK(yg.known && yc.known && yg.tp && yc.tp);
    char what[320];
    snprintf(what, sizeof what, "%s: the normal's model, GPU a vs CPU a, relative", label);
    CHECK_LE(what, fabs(yg.a - yc.a) / fabs(yc.a), 1e-12);
    if (!yg.tp || !yc.tp)
        return;
    yg.g = yc.g = 0.3 * yc.a;
    yg.s = yc.s = 1e-3 * yc.a;
    float *r = test_random_normal(&rng, 2 * n), *zc = malloc((size_t)n * 2 * sizeof(float));
    float *zg = malloc((size_t)n * 2 * sizeof(float));
    mr_backend *gb = mr_linop_backend(g);
    float *dr = mr_backend_upload(gb, 2 * n, r), *dz = mr_backend_alloc(gb, n);
    const mr_vecops *v = mr_backend_vecops(gb);
    CHECK(dr && dz);
    if (dr && dz) {
        CHECK_OK(mr_linop_symbol_solve(&yc, r, zc));
        CHECK_OK(mr_linop_symbol_solve(&yg, dr, dz));
        CHECK_OK(v->to_host(v->ctx, n, zg, dz));
        snprintf(what, sizeof what, "%s: circulant solve, GPU vs CPU, rel L2", label);
        CHECK_LE(what, test_rel_l2_ff(zg, zc, 2 * n), 1e-5);
    }
    v->release(v->ctx, dr);
    v->release(v->ctx, dz);
    free(r);
    free(zc);
    free(zg);
}

/* The Toeplitz normal of one NUDFT operator with the default transforms (every axis by the line kernels of
 * gpu/toeplitz_column.cu where each 2N is a power of 2 from 8 to 1024; else pruned slabs, the slowest axis by
 * the fused kernel where its 2N is such a power), with the slowest axis fused and cuFFT's slabs
 * (MR_GPU_TOEPLITZ=column), with the pruned cuFFT transforms (MR_GPU_TOEPLITZ=cufft) and with one plan of the
 * whole grid (MR_GPU_TOEPLITZ=full; the variable is read when the operator is made): the same maths. */
static void pruned_vs_full(mr_backend *gpu, const int64_t matrix[3], int64_t m)
{
    float *traj = test_random_traj(&rng, matrix, m), *w = test_random_weights(&rng, m);
    mr_nudft_opts o;
    mr_nudft_opts_default(&o);
    o.fast_normal = 1;
    mr_linop *pruned = NULL, *full = NULL, *cufft = NULL, *column = NULL;
    CHECK_OK(mr_linop_nudft_create(&pruned, gpu, matrix, traj, m, w, 1, &o, NULL));
    CHECK(setenv("MR_GPU_TOEPLITZ", "column", 1) == 0);
    CHECK_OK(mr_linop_nudft_create(&column, gpu, matrix, traj, m, w, 1, &o, NULL));
    CHECK(setenv("MR_GPU_TOEPLITZ", "full", 1) == 0);
    CHECK_OK(mr_linop_nudft_create(&full, gpu, matrix, traj, m, w, 1, &o, NULL));
    CHECK(setenv("MR_GPU_TOEPLITZ", "cufft", 1) == 0);
    CHECK_OK(mr_linop_nudft_create(&cufft, gpu, matrix, traj, m, w, 1, &o, NULL));
    CHECK(unsetenv("MR_GPU_TOEPLITZ") == 0);
    char label[200];
    snprintf(label, sizeof label, "GPU Toeplitz %lldx%lldx%lld", (long long)matrix[0], (long long)matrix[1],
             (long long)matrix[2]);
    if (pruned && full)
        lc_agree_pair(label, "default vs one plan", pruned, full, &rng, 1e-6, 1e-6);
    if (cufft && full)
        lc_agree_pair(label, "pruned cuFFT vs one plan", cufft, full, &rng, 1e-6, 1e-6);
    if (column && full)
        lc_agree_pair(label, "slow axis fused, cuFFT slabs vs one plan", column, full, &rng, 1e-6, 1e-6);
    mr_linop_free(column);
    mr_linop_free(pruned);
    mr_linop_free(full);
    mr_linop_free(cufft);
    free(traj);
    free(w);
}

int main(void)
{
    mr_backend *gpu = NULL, *cpu = NULL;
    if (!lc_gpu_backends(&rng, &gpu, &cpu))
        return TEST_SKIP;
    if (!gpu || !cpu)
        return test_finish("test_gpu_linop");
    CHECK(mr_backend_on_gpu(gpu) && strncmp(mr_backend_name(gpu), "gpu:", 4) == 0);
    vector_ops(gpu, cpu);
    const int64_t m2[3] = {48, 40, 1}, m3[3] = {16, 12, 10}, odd[3] = {37, 1, 1};
    nudft_entry_points(gpu, m2, 3001);
    nudft_entry_points(gpu, m3, 1234);
    nudft_entry_points(gpu, odd, 77);
    operators(gpu, cpu, m2, 3001);
    operators(gpu, cpu, m3, 2001);
    /* slow axes of 2N = 20, 14, 80, 24, 36, 60 points (cuFFT) and 8 ... 1024 (the fused kernel: every radix
     * plan, lines per block from 16 down to 8, slabs that are no multiple of the lines per block) */
    const int64_t tp[][3] = {{16, 12, 10}, {15, 9, 7}, {48, 40, 1}, {20, 1, 12}, {1, 24, 18}, {1, 1, 30}, {37, 1, 1},
                             {10, 4, 1},   {7, 5, 8},  {20, 1, 16}, {1, 24, 16}, {9, 7, 32}, {48, 32, 1}, {12, 10, 64},
                             {5, 3, 128},  {6, 5, 256}, {3, 3, 512},
                             /* every axis a power of 2 (the line kernels): 3D, a unit axis anywhere, 2D, rows
                              * and lines of 8 ... 1024 points, positions that are no multiple of the lines per
                              * block */
                             {16, 8, 4},   {4, 32, 16}, {64, 4, 8}, {4, 16, 8}, {8, 1, 16}, {1, 16, 8}, {32, 16, 1},
                             {512, 4, 1},  {4, 512, 4}, {4, 4, 512}, {128, 4, 4}, {4, 256, 4}, {1, 1, 64}};
    for (size_t i = 0; i < sizeof tp / sizeof tp[0]; i++)
        pruned_vs_full(gpu, tp[i], 1500);
    mr_backend_free(gpu);
    mr_backend_free(cpu);
    return test_finish("test_gpu_linop");
}
