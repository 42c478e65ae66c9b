/* Fast CPU NUDFT kernels (solver/nudft.c and the per-level kernels) against the float64 textbook sums
 * (solver/nudft_ref.c), at every instruction-set level this CPU runs (avx512, avx2, portable; the
 * others are reported as not run), plus the dispatching entry points at the process's level.
 *
 * Bounds: relative L2 error <= 1e-5 on random inputs (random trajectory inside the Nyquist box,
 * random complex or real weights), 2D and 3D, odd and even sizes, image and Q grids, M not a multiple
 * of the SIMD width; per-voxel phasor error of a single sample <= the bound derived in
 * docs/OPERATOR.md; identical bits for 1 and 2 threads; the level rule of base/cpu.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/cpu.h"
#include "solver/nudft.h"
#include "solver/nudft_internal.h"
#include "test_op_random.h"
#include "testutil.h"

static uint64_t rng;
static unsigned levels; /* mr_cpu_supported() */


/* One level's result out (2 threads) and out1 (1 thread) of n complex values against ref. */
static void check_level_result(const char *sum, const char *what, const char *level, const float *out,
                               const float *out1, const double *ref, int64_t n)
{
    char label[200];
    snprintf(label, sizeof label, "  %s kernels: rel L2 vs float64", level);
    CHECK_LE(label, test_rel_l2(out, ref, 2 * n), 1e-5);
    snprintf(label, sizeof label, "%s %s %s kernels: 1 and 2 threads give the same bits", sum, what, level);
    test_checks++;
    if (memcmp(out, out1, (size_t)n * 2 * sizeof(float)) != 0) {
        test_failures++;
        fprintf(stderr, "FAIL: %s\n", label);
    }
}

static void check_adjoint(const char *what, const mr_grid *g, const int64_t matrix[3], int64_t m, int real)
{
    float *traj = test_random_traj(&rng, matrix, m);
    float *a = test_random_normal(&rng, real ? m : 2 * m);
    if (real)
        for (int64_t k = 0; k < m; k++)
            a[k] = fabsf(a[k]); /* like w |Phi|^2 */
    const int64_t nv = mr_grid_size(g);
    float *out = malloc((size_t)nv * 2 * sizeof(float));
    float *out1 = malloc((size_t)nv * 2 * sizeof(float));
    double *ref = malloc((size_t)nv * 2 * sizeof(double));
    mr_nudft_adjoint_ref(g, traj, a, real, m, ref);
    char label[200];
    /* the dispatching entry point, then each level this CPU runs */
    CHECK_OK(mr_nudft_adjoint(g, traj, a, real, m, out, 2));
    snprintf(label, sizeof label, "adjoint %s %s rel L2 vs float64", what, real ? "real a" : "complex a");
    CHECK_LE(label, test_rel_l2(out, ref, 2 * nv), 1e-5);
    for (int l = 0; l < MR_CPU_LEVELS; l++) {
        if (!(levels & (1u << l)))
            continue;
        const char *name = mr_cpu_level_name((mr_cpu_level)l);
        CHECK_OK(mr_nudft_adjoint_level((mr_cpu_level)l, g, traj, a, real, m, out, 2));
        CHECK_OK(mr_nudft_adjoint_level((mr_cpu_level)l, g, traj, a, real, m, out1, 1));
        check_level_result("adjoint", what, name, out, out1, ref, nv);
    }
    free(traj);
    free(a);
    free(out);
    free(out1);
    free(ref);
}

static void check_forward(const char *what, const int64_t matrix[3], int64_t m)
{
    const mr_grid g = mr_grid_image(matrix);
    const int64_t nv = mr_grid_size(&g);
    float *traj = test_random_traj(&rng, matrix, m);
    float *x = test_random_normal(&rng, 2 * nv);
    float *out = malloc((size_t)m * 2 * sizeof(float));
    float *out1 = malloc((size_t)m * 2 * sizeof(float));
    double *ref = malloc((size_t)m * 2 * sizeof(double));
    mr_nudft_forward_ref(&g, traj, x, m, ref);
    char label[160];
    CHECK_OK(mr_nudft_forward(&g, traj, x, m, out, 2));
    snprintf(label, sizeof label, "forward %s rel L2 vs float64", what);
    CHECK_LE(label, test_rel_l2(out, ref, 2 * m), 1e-5);
    for (int l = 0; l < MR_CPU_LEVELS; l++) {
        if (!(levels & (1u << l)))
            continue;
        const char *name = mr_cpu_level_name((mr_cpu_level)l);
        CHECK_OK(mr_nudft_forward_level((mr_cpu_level)l, &g, traj, x, m, out, 2));
        CHECK_OK(mr_nudft_forward_level((mr_cpu_level)l, &g, traj, x, m, out1, 1));
        check_level_result("forward", what, name, out, out1, ref, m);
    }
    free(traj);
    free(x);
    free(out);
    free(out1);
    free(ref);
}

/* Largest per-output error, in units of u = 2^-24, of float out against the double reference. */
static double worst_u(const float *out, const double *ref, int64_t n)
{
    double worst = 0.0;
    for (int64_t v = 0; v < n; v++) {
        const double e = hypot(out[2 * v] - ref[2 * v], out[2 * v + 1] - ref[2 * v + 1]);
        worst = e > worst ? e : worst;
    }
    return worst / ldexp(1.0, -24);
}

/* Bounds of docs/OPERATOR.md ("Error bounds of the phasors"), in u, with a little room: the powers
 * adjoint (avx2, avx512) <= 12 u; the rotation adjoint (portable) <= 34 u with FMA and <= 55 u
 * without (the portable level is built for the baseline target, which may lack FMA); one Horner
 * forward term <= 36 u with FMA (avx2, avx512) and <= 58 u without. */
static const double adjoint_bound_u[MR_CPU_LEVELS] = {60.0, 16.0, 16.0};
static const double forward_bound_u = 64.0;

/* One sample of weight 1 at the edge of k-space: every output of the adjoint is a single phasor, so
 * the largest per-voxel error is the phasor error itself. Rows of 400 voxels (the Q grid of 200):
 * 7 rotation blocks, the longest rotation chains; 4 powers blocks. */
static void check_phasor_bound(void)
{
    const int64_t matrix[3] = {200, 3, 1};
    const mr_grid g = mr_grid_q(matrix);
    const int64_t nv = mr_grid_size(&g);
    const int64_t m = 5;
    float *traj = test_random_traj(&rng, matrix, m);
    traj[0] = 99.9f; /* largest steps */
    traj[1] = -1.4f;
    float *out = malloc((size_t)nv * 2 * sizeof(float));
    double *ref = malloc((size_t)nv * 2 * sizeof(double));
    double worst[MR_CPU_LEVELS] = {0};
    for (int64_t k = 0; k < m; k++) {
        const float one[2] = {1.0f, 0.0f};
        mr_nudft_adjoint_ref(&g, traj + 3 * k, one, 0, 1, ref);
        for (int l = 0; l < MR_CPU_LEVELS; l++)
            if (levels & (1u << l)) {
                CHECK_OK(mr_nudft_adjoint_level((mr_cpu_level)l, &g, traj + 3 * k, one, 0, 1, out, 2));
                worst[l] = fmax(worst[l], worst_u(out, ref, nv));
            }
    }
    for (int l = 0; l < MR_CPU_LEVELS; l++)
        if (levels & (1u << l)) {
            char label[160];
            snprintf(label, sizeof label, "%s adjoint: single-sample phasor error / u (max over voxels)",
                     mr_cpu_level_name((mr_cpu_level)l));
            CHECK_LE(label, worst[l], adjoint_bound_u[l]);
        }
    free(traj);
    free(out);
    free(ref);
}

/* The forward of an image with one voxel of value 1 is one phasor per sample: its error is the
 * error of one Horner term. The voxel sits at the end of a block (the longest chains: 7 steps in s,
 * 7 in s^8), samples anywhere in the Nyquist box. */
static void check_forward_phasor_bound(void)
{
    const int64_t matrix[3] = {128, 5, 1}, m = 300;
    const mr_grid g = mr_grid_image(matrix);
    const int64_t nv = mr_grid_size(&g);
    float *traj = test_random_traj(&rng, matrix, m);
    float *x = calloc((size_t)nv * 2, sizeof(float));
    float *out = malloc((size_t)m * 2 * sizeof(float));
    double *ref = malloc((size_t)m * 2 * sizeof(double));
    const int64_t voxels[3] = {63, 2 * 128 + 127, 4 * 128 + 64}; /* ends of blocks, a block start */
    double worst[MR_CPU_LEVELS] = {0};
    for (int i = 0; i < 3; i++) {
        x[2 * voxels[i]] = 1.0f;
        mr_nudft_forward_ref(&g, traj, x, m, ref);
        for (int l = 0; l < MR_CPU_LEVELS; l++)
            if (levels & (1u << l)) {
                CHECK_OK(mr_nudft_forward_level((mr_cpu_level)l, &g, traj, x, m, out, 2));
                worst[l] = fmax(worst[l], worst_u(out, ref, m));
            }
        x[2 * voxels[i]] = 0.0f;
    }
    for (int l = 0; l < MR_CPU_LEVELS; l++)
        if (levels & (1u << l)) {
            char label[160];
            snprintf(label, sizeof label, "%s forward: single-voxel phasor error / u (max over samples)",
                     mr_cpu_level_name((mr_cpu_level)l));
            CHECK_LE(label, worst[l], forward_bound_u);
        }
    free(traj);
    free(x);
    free(out);
    free(ref);
}

/* The level rule (base/cpu.h) and the refusal of levels this machine cannot run. */
static void check_levels(void)
{
    const unsigned all = (1u << MR_CPU_LEVELS) - 1, p = 1u << MR_CPU_PORTABLE, a2 = p | 1u << MR_CPU_AVX2;
    mr_cpu_level l;
    CHECK(mr_cpu_level_choose(NULL, a2, &l) == MR_OK && l == MR_CPU_AVX2);
    CHECK(mr_cpu_level_choose("", p, &l) == MR_OK && l == MR_CPU_PORTABLE);
    CHECK(mr_cpu_level_choose("auto", all, &l) == MR_OK && l == MR_CPU_AVX512);
    CHECK(mr_cpu_level_choose("portable", all, &l) == MR_OK && l == MR_CPU_PORTABLE);
    CHECK(mr_cpu_level_choose("avx2", a2, &l) == MR_OK && l == MR_CPU_AVX2);
    CHECK(mr_cpu_level_choose("avx512", a2, &l) == MR_ENOTSUP);
    printf("avx512 on an avx2 machine: %s\n", mr_last_error());
    CHECK(strstr(mr_last_error(), "MR_CPU_KERNEL=avx512") && strstr(mr_last_error(), "avx2, portable"));
    CHECK(mr_cpu_level_choose("avx2", p, &l) == MR_ENOTSUP);
    CHECK(mr_cpu_level_choose("AVX2x", all, &l) == MR_EINVAL);
    printf("unknown level: %s\n", mr_last_error());
    CHECK(strstr(mr_last_error(), "AVX2x") != NULL);
    /* this process: the level the kernels run at is one this CPU supports */
    CHECK(levels & (1u << MR_CPU_PORTABLE));
    const char *name = mr_nudft_kernel_name();
    printf("this CPU runs:%s%s%s; the kernels run at %s (MR_CPU_KERNEL=%s)\n",
           levels & (1u << MR_CPU_AVX512) ? " avx512" : "", levels & (1u << MR_CPU_AVX2) ? " avx2" : "", " portable",
           name ? name : "(none)", getenv("MR_CPU_KERNEL") ? getenv("MR_CPU_KERNEL") : "unset");
    CHECK(name != NULL && mr_cpu_level_get(&l) == MR_OK && (levels & (1u << l)) && !strcmp(name, mr_cpu_level_name(l)));
    /* a level the CPU lacks is refused, nothing is run */
    const int64_t matrix[3] = {8, 8, 1};
    const mr_grid g = mr_grid_image(matrix);
    float traj[3] = {0.5f, 0.25f, 0.0f}, a[2] = {1.0f, 0.0f}, out[128];
    for (int lv = 0; lv < MR_CPU_LEVELS; lv++)
        if (!(levels & (1u << lv))) {
            CHECK(mr_nudft_adjoint_level((mr_cpu_level)lv, &g, traj, a, 0, 1, out, 1) == MR_ENOTSUP);
            CHECK(mr_nudft_forward_level((mr_cpu_level)lv, &g, traj, a, 1, out, 1) == MR_ENOTSUP);
            printf("%s here: %s\n", mr_cpu_level_name((mr_cpu_level)lv), mr_last_error());
        }
}

int main(void)
{
    rng = test_seed();
    levels = mr_cpu_supported();
    check_levels();
    const int64_t m2[3] = {31, 17, 1}, m3[3] = {13, 7, 5}, me[3] = {64, 48, 1}, ml[3] = {150, 4, 1};
    const mr_grid g2 = mr_grid_image(m2), q2 = mr_grid_q(m2), g3 = mr_grid_image(m3), q3 = mr_grid_q(m3);
    const mr_grid ge = mr_grid_image(me), qe = mr_grid_q(me), ql = mr_grid_q(ml);
    check_adjoint("2D 31x17 image grid", &g2, m2, 1237, 0);
    check_adjoint("2D 31x17 image grid", &g2, m2, 1237, 1);
    check_adjoint("2D 31x17 Q grid", &q2, m2, 1237, 1);
    check_adjoint("2D 31x17 Q grid", &q2, m2, 1237, 0);
    check_adjoint("3D 13x7x5 image grid", &g3, m3, 517, 0);
    check_adjoint("3D 13x7x5 Q grid", &q3, m3, 517, 1);
    check_adjoint("3D 13x7x5 Q grid", &q3, m3, 517, 0);
    check_adjoint("2D 64x48 image grid", &ge, me, 1001, 0);
    check_adjoint("2D 64x48 Q grid", &qe, me, 1001, 1);
    check_adjoint("2D 150x4 Q grid (long rows)", &ql, ml, 2011, 1);
    check_adjoint("2D 150x4 Q grid (long rows)", &ql, ml, 2011, 0);
    check_forward("2D 31x17", m2, 1237);
    check_forward("3D 13x7x5", m3, 517);
    check_forward("2D 64x48", me, 1001);
    check_forward("2D 150x4", ml, 2011);
    /* degenerate shapes: axes of 1 (the Q grid keeps them at 1), axes of 2 */
    const int64_t shapes[4][3] = {{1, 9, 1}, {9, 1, 1}, {2, 3, 2}, {5, 1, 3}};
    for (int i = 0; i < 4; i++) {
        const mr_grid gi = mr_grid_image(shapes[i]), qi = mr_grid_q(shapes[i]);
        char what[64];
        snprintf(what, sizeof what, "%lldx%lldx%lld image grid", (long long)shapes[i][0], (long long)shapes[i][1],
                 (long long)shapes[i][2]);
        check_adjoint(what, &gi, shapes[i], 77, 0);
        snprintf(what, sizeof what, "%lldx%lldx%lld Q grid", (long long)shapes[i][0], (long long)shapes[i][1],
                 (long long)shapes[i][2]);
        check_adjoint(what, &qi, shapes[i], 77, 1);
        snprintf(what, sizeof what, "%lldx%lldx%lld", (long long)shapes[i][0], (long long)shapes[i][1],
                 (long long)shapes[i][2]);
        check_forward(what, shapes[i], 77);
    }
    check_adjoint("2D 31x17 image grid, M = 1", &g2, m2, 1, 0);
    check_forward("2D 31x17, M = 1", m2, 1);
    check_phasor_bound();
    check_forward_phasor_bound();
    return test_finish("test_nudft");
}
