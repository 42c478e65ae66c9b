/* Fast CPU NUDFT kernels (solver/nudft.c) against the float64 textbook sums (solver/nudft_ref.c).
 *
 * Bounds: relative L2 error <= 1e-5 on random inputs (random trajectory inside the Nyquist box,
 * random complex or real weights), 2D and 3D, odd and even sizes, image and Q grids, M not a multiple
 * of the SIMD width; per-voxel phasor error of a single sample <= the bound derived in
 * docs/OPERATOR.md; identical bits for 1 and 2 threads. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solver/nudft.h"
#include "solver/nudft_internal.h"
#include "test_op_random.h"
#include "testutil.h"

static uint64_t rng;


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
    /* the dispatching entry point, then each kernel explicitly (powers only with AVX-512) */
    CHECK_OK(mr_nudft_adjoint(g, traj, a, real, m, out, 2));
    snprintf(label, sizeof label, "adjoint %s %s rel L2 vs float64", what, real ? "real a" : "complex a");
    CHECK_LE(label, test_rel_l2(out, ref, 2 * nv), 1e-5);
    for (int kernel = 0; kernel < 2; kernel++) {
        const char *name = kernel ? "powers" : "rotation";
        mr_status st = kernel ? mr_nudft_adjoint_powers(g, traj, a, real, m, out, 2)
                              : mr_nudft_adjoint_rotation(g, traj, a, real, m, out, 2);
        if (st == MR_ENOTSUP)
            continue;
        CHECK_OK(st);
        CHECK_OK(kernel ? mr_nudft_adjoint_powers(g, traj, a, real, m, out1, 1)
                        : mr_nudft_adjoint_rotation(g, traj, a, real, m, out1, 1));
        snprintf(label, sizeof label, "  %s kernel: rel L2 vs float64", name);
        CHECK_LE(label, test_rel_l2(out, ref, 2 * nv), 1e-5);
        snprintf(label, sizeof label, "adjoint %s %s kernel: 1 and 2 threads give the same bits", what, name);
        test_checks++;
        if (memcmp(out, out1, (size_t)nv * 2 * sizeof(float)) != 0) {
            test_failures++;
            fprintf(stderr, "FAIL: %s\n", label);
        }
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
    CHECK_OK(mr_nudft_forward(&g, traj, x, m, out, 2));
    CHECK_OK(mr_nudft_forward(&g, traj, x, m, out1, 1));
    mr_nudft_forward_ref(&g, traj, x, m, ref);
    char label[160];
    snprintf(label, sizeof label, "forward %s rel L2 vs float64", what);
    CHECK_LE(label, test_rel_l2(out, ref, 2 * m), 1e-5);
    CHECK(memcmp(out, out1, (size_t)m * 2 * sizeof(float)) == 0);
    free(traj);
    free(x);
    free(out);
    free(out1);
    free(ref);
}

/* One sample of weight 1 at the edge of k-space: every output is a single phasor, so the largest
 * per-voxel error is the phasor error itself; docs/OPERATOR.md bounds it by 34 u (u = 2^-24) for the
 * rotation kernel and 12 u for the powers kernel (tested against 40 u and 16 u). */
static void check_phasor_bound(void)
{
    const int64_t matrix[3] = {200, 3, 1};
    const mr_grid g = mr_grid_q(matrix); /* rows of 400 voxels: 7 blocks, the longest rotation chains */
    const int64_t nv = mr_grid_size(&g);
    const int64_t m = 5;
    float *traj = test_random_traj(&rng, matrix, m);
    traj[0] = 99.9f; /* largest steps */
    traj[1] = -1.4f;
    float *out = malloc((size_t)nv * 2 * sizeof(float));
    double *ref = malloc((size_t)nv * 2 * sizeof(double));
    const double u = ldexp(1.0, -24);
    double worst = 0.0, worst_p = 0.0;
    for (int64_t k = 0; k < m; k++) {
        const float one[2] = {1.0f, 0.0f};
        mr_nudft_adjoint_ref(&g, traj + 3 * k, one, 0, 1, ref);
        CHECK_OK(mr_nudft_adjoint_rotation(&g, traj + 3 * k, one, 0, 1, out, 2));
        for (int64_t v = 0; v < nv; v++) {
            const double e = hypot(out[2 * v] - ref[2 * v], out[2 * v + 1] - ref[2 * v + 1]);
            worst = e > worst ? e : worst;
        }
        if (mr_nudft_adjoint_powers(&g, traj + 3 * k, one, 0, 1, out, 2) == MR_OK)
            for (int64_t v = 0; v < nv; v++) {
                const double e = hypot(out[2 * v] - ref[2 * v], out[2 * v + 1] - ref[2 * v + 1]);
                worst_p = e > worst_p ? e : worst_p;
            }
    }
    CHECK_LE("rotation kernel: single-sample phasor error / u (max over voxels)", worst / u, 40.0);
    CHECK_LE("powers kernel: single-sample phasor error / u (max over voxels)", worst_p / u, 16.0);
    free(traj);
    free(out);
    free(ref);
}

int main(void)
{
    rng = test_seed();
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
    return test_finish("test_nudft");
}
