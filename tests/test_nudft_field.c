/* The exact sums with an off-resonance term (solver/nudft.h mr_nudft_field_*; solver/nudft_field.h)
 * against the float64 textbook sums (solver/nudft_ref.c), at every instruction-set level this CPU runs,
 * and the identity that makes the linear-field phantom analytic.
 *
 * Bounds: relative L2 <= 1e-5 against float64 on random inputs (trajectory inside the Nyquist box,
 * field uniform in +-200 Hz, times uniform in 0..25 ms: up to 5 cycles of field phase), 2D and 3D, odd
 * sizes, M not a multiple of the tiles (measured ~1e-7); identical bits for 1 and 2 threads.
 * Identity: with omega_v = c + g . r_v at the voxel centres the field forward equals
 * e^{-i 2 pi c t_m} times the plain forward at k_m + g t_m (exact in exact arithmetic; bound 1e-5
 * relative, float32 kernels on both sides). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/cpu.h"
#include "solver/nudft.h"
#include "solver/nudft_internal.h"
#include "test_op_random.h"
#include "testutil.h"

static uint64_t rng;
static unsigned levels;

static float *random_uniform(int64_t n, double lo, double hi)
{
    float *v = malloc((size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)(lo + (hi - lo) * test_uniform(&rng));
    return v;
}

/* forward and adjoint of every level against the reference, 1 and 2 threads */
static void check_sums(const int64_t matrix[3], int64_t m)
{
    const mr_grid g = mr_grid_image(matrix);
    const int64_t n = mr_grid_size(&g);
    float *traj = test_random_traj(&rng, matrix, m), *t = random_uniform(m, 0.0, 0.025);
    float *f = random_uniform(n, -200.0, 200.0);
    float *x = test_random_normal(&rng, 2 * n), *a = test_random_normal(&rng, 2 * m);
    double *fref = malloc((size_t)m * 2 * sizeof(double)), *aref = malloc((size_t)n * 2 * sizeof(double));
    float *y = malloc((size_t)m * 2 * sizeof(float)), *y1 = malloc((size_t)m * 2 * sizeof(float));
    float *z = malloc((size_t)n * 2 * sizeof(float)), *z1 = malloc((size_t)n * 2 * sizeof(float));
    mr_nudft_field_forward_ref(&g, traj, t, f, x, m, fref);
    mr_nudft_field_adjoint_ref(&g, traj, t, f, a, m, aref);
    char label[200];
    CHECK_OK(mr_nudft_field_forward(&g, traj, t, f, x, m, y, 2));
    CHECK_OK(mr_nudft_field_adjoint(&g, traj, t, f, a, m, z, 2));
    snprintf(label, sizeof label, "field forward %lldx%lldx%lld M=%lld (dispatch): rel L2 vs float64",
             (long long)matrix[0], (long long)matrix[1], (long long)matrix[2], (long long)m);
    CHECK_LE(label, test_rel_l2(y, fref, 2 * m), 1e-5);
    snprintf(label, sizeof label, "field adjoint %lldx%lldx%lld M=%lld (dispatch): rel L2 vs float64",
             (long long)matrix[0], (long long)matrix[1], (long long)matrix[2], (long long)m);
    CHECK_LE(label, test_rel_l2(z, aref, 2 * n), 1e-5);
    for (int l = 0; l < MR_CPU_LEVELS; l++) {
        const char *name = mr_cpu_level_name((mr_cpu_level)l);
        if (!(levels & (1u << l))) {
            printf("  %s level: not run on this CPU\n", name);
            continue;
        }
        CHECK_OK(mr_nudft_field_forward_level((mr_cpu_level)l, &g, traj, t, f, x, m, y, 2));
        CHECK_OK(mr_nudft_field_forward_level((mr_cpu_level)l, &g, traj, t, f, x, m, y1, 1));
        CHECK_OK(mr_nudft_field_adjoint_level((mr_cpu_level)l, &g, traj, t, f, a, m, z, 2));
        CHECK_OK(mr_nudft_field_adjoint_level((mr_cpu_level)l, &g, traj, t, f, a, m, z1, 1));
        snprintf(label, sizeof label, "  %s field forward: rel L2 vs float64", name);
        CHECK_LE(label, test_rel_l2(y, fref, 2 * m), 1e-5);
        snprintf(label, sizeof label, "  %s field adjoint: rel L2 vs float64", name);
        CHECK_LE(label, test_rel_l2(z, aref, 2 * n), 1e-5);
        test_checks++;
        if (memcmp(y, y1, (size_t)m * 2 * sizeof(float)) || memcmp(z, z1, (size_t)n * 2 * sizeof(float))) {
            test_failures++;
            fprintf(stderr, "FAIL: %s field sums: 1 and 2 threads give different bits\n", name);
        }
    }
    free(traj);
    free(t);
    free(f);
    free(x);
    free(a);
    free(fref);
    free(aref);
    free(y);
    free(y1);
    free(z);
    free(z1);
}

/* omega = c + g . r: field forward = e^{-i2pi c t} forward(k + g t) */
static void check_linear_identity(const int64_t matrix[3], int64_t m)
{
    const mr_grid g = mr_grid_image(matrix);
    const int64_t n = mr_grid_size(&g);
    const double c = 37.0, grad[3] = {150.0, -90.0, 60.0};
    float *traj = test_random_traj(&rng, matrix, m), *t = random_uniform(m, 0.0, 0.02);
    float *f = malloc((size_t)n * sizeof(float)), *k2 = malloc((size_t)m * 3 * sizeof(float));
    float *x = test_random_normal(&rng, 2 * n);
    for (int64_t v = 0; v < n; v++) {
        const int64_t idx[3] = {v % matrix[0], (v / matrix[0]) % matrix[1], v / (matrix[0] * matrix[1])};
        double w = c;
        for (int a = 0; a < 3; a++)
            w += grad[a] * (double)(idx[a] - matrix[a] / 2) / (double)matrix[a];
        f[v] = (float)w;
    }
    for (int64_t k = 0; k < m; k++)
        for (int a = 0; a < 3; a++)
            k2[3 * k + a] = (float)(traj[3 * k + a] + (matrix[a] > 1 ? grad[a] * t[k] : 0.0));
    float *y = malloc((size_t)m * 2 * sizeof(float)), *y2 = malloc((size_t)m * 2 * sizeof(float));
    /* the shifted trajectory loses float digits of k; the field side gets the same rounding of k + g t by
       using the float phase of the reference instead: compare both against float64 of the identity */
    double *ref = malloc((size_t)m * 2 * sizeof(double));
    CHECK_OK(mr_nudft_field_forward(&g, traj, t, f, x, m, y, 2));
    CHECK_OK(mr_nudft_forward(&g, k2, x, m, y2, 2));
    mr_nudft_forward_ref(&g, k2, x, m, ref);
    for (int64_t k = 0; k < m; k++) {
        double ph = c * (double)t[k];
        ph -= nearbyint(ph);
        const double cr = cos(2 * M_PI * ph), ci = -sin(2 * M_PI * ph);
        const double re = y2[2 * k], im = y2[2 * k + 1], rr = ref[2 * k], ri = ref[2 * k + 1];
        y2[2 * k] = (float)(re * cr - im * ci);
        y2[2 * k + 1] = (float)(re * ci + im * cr);
        ref[2 * k] = rr * cr - ri * ci;
        ref[2 * k + 1] = rr * ci + ri * cr;
    }
    char label[200];
    snprintf(label, sizeof label,
             "linear field %lldx%lldx%lld: field forward vs e^{-i2pi c t} forward(k + g t) (float64), rel L2",
             (long long)matrix[0], (long long)matrix[1], (long long)matrix[2]);
    CHECK_LE(label, test_rel_l2(y, ref, 2 * m), 1e-5);
    snprintf(label, sizeof label, "linear field %lldx%lldx%lld: the same with the float32 plain forward, rel L2",
             (long long)matrix[0], (long long)matrix[1], (long long)matrix[2]);
    CHECK_LE(label, test_rel_l2_ff(y, y2, 2 * m), 2e-5);
    free(traj);
    free(t);
    free(f);
    free(k2);
    free(x);
    free(y);
    free(y2);
    free(ref);
}

int main(void)
{
    rng = test_seed();
    levels = mr_cpu_supported();
    const int64_t m2[3] = {24, 17, 1}, m3[3] = {9, 8, 7}, big[3] = {70, 66, 1};
    check_sums(m2, 1500);
    check_sums(m3, 1100);
    check_sums(big, 2049);
    check_linear_identity(m2, 1300);
    check_linear_identity(m3, 900);
    /* the errors name what is missing */
    const mr_grid g = mr_grid_image(m2);
    float one[6] = {0}, out[2 * 24 * 17];
    CHECK(mr_nudft_field_forward(&g, one, NULL, one, one, 1, out, 1) == MR_EINVAL &&
          strstr(mr_last_error(), "readout times") != NULL);
    CHECK(mr_nudft_field_adjoint(&g, one, one, NULL, one, 1, out, 1) == MR_EINVAL &&
          strstr(mr_last_error(), "field map") != NULL);
    return test_finish("test_nudft_field");
}
