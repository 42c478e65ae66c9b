/* The field-corrected operators (solver/linop_field.h) on a GPU backend against the host: the exact model's
 * CUDA-core sums (gpu/field.cu) against the float64 reference and the CPU kernels, the segmented models
 * (frequency and time; kernels by the GPU engine of the exact sums, cuFFT normal) against the same
 * operators on the host, the adjoint and normal checks of tests/linop_check.h, SENSE composition, and a
 * short CG on the device against the host. Skips (77) without a GPU.
 *
 * Bounds (relative L2, fresh random inputs): exact sums vs float64 2e-5 (fixed-point k.r, float field
 * phase, SFU sin/cos: ~1e-6 expected); GPU vs CPU operator forward/adjoint 2e-5 (exact) and 1e-4
 * (segmented: the engine of the kernels may be tf32x3/fp16x3, ~3e-7, plus float FFTs); normal GPU vs
 * CPU 1e-4; adjointness 1e-5 (exact), 1e-4 (segmented); normal vs adjoint(forward) 1e-4; CG images after
 * 20 iterations GPU vs CPU 1e-3. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "field_testutil.h"
#include "gpu/gpu.h"
#include "linop_check.h"
#include "solver/linop_field.h"
#include "solver/nudft.h"

static uint64_t rng;

/* forward, adjoint and normal of two operators of the same shape on the same inputs */
static void same(const char *label, mr_linop *g, mr_linop *c, double bound)
{
    const int64_t nd = mr_linop_dom_size(g), nc = mr_linop_cod_size(g);
    float *x = test_random_normal(&rng, 2 * nd), *y = test_random_normal(&rng, 2 * nc);
    float *a = malloc((size_t)(nd > nc ? nd : nc) * 2 * sizeof(float)), *b = malloc((size_t)(nd > nc ? nd : nc) * 2 * sizeof(float));
    char what[256];
    CHECK_OK(lc_apply(g, mr_linop_forward, x, nd, a, nc));
    CHECK_OK(lc_apply(c, mr_linop_forward, x, nd, b, nc));
    snprintf(what, sizeof what, "%s: forward GPU vs CPU, rel L2", label);
    CHECK_LE(what, test_rel_l2_ff(a, b, 2 * nc), bound);
    CHECK_OK(lc_apply(g, mr_linop_adjoint, y, nc, a, nd));
    CHECK_OK(lc_apply(c, mr_linop_adjoint, y, nc, b, nd));
    snprintf(what, sizeof what, "%s: adjoint GPU vs CPU, rel L2", label);
    CHECK_LE(what, test_rel_l2_ff(a, b, 2 * nd), bound);
    CHECK_OK(lc_apply(g, mr_linop_normal, x, nd, a, nd));
    CHECK_OK(lc_apply(c, mr_linop_normal, x, nd, b, nd));
    snprintf(what, sizeof what, "%s: normal GPU vs CPU, rel L2", label);
    CHECK_LE(what, test_rel_l2_ff(a, b, 2 * nd), 1e-4);
    free(x);
    free(y);
    free(a);
    free(b);
}

static void exact(mr_backend *gpu, mr_backend *cpu, const int64_t matrix[3], int64_t m)
{
    field_problem p = field_problem_make(&rng, matrix, m);
    mr_linop *g = NULL, *c = NULL;
    char label[160];
    snprintf(label, sizeof label, "exact field model %lldx%lldx%lld, M=%lld, 2 coils", (long long)matrix[0],
             (long long)matrix[1], (long long)matrix[2], (long long)m);
    CHECK_OK(mr_linop_field_exact_create(&g, gpu, matrix, p.traj, p.time, p.field, m, p.w, 2, MR_BASIS_BOX));
    CHECK_OK(mr_linop_field_exact_create(&c, cpu, matrix, p.traj, p.time, p.field, m, p.w, 2, MR_BASIS_BOX));
    if (g && c) {
        lc_check(label, g, &rng, 1e-5, 1e-6);
        same(label, g, c, 2e-5);
        /* the raw sums against float64 (weights 1, Dirac: s = 1/N) */
        const int64_t n = matrix[0] * matrix[1] * matrix[2];
        mr_linop *d = NULL;
        CHECK_OK(mr_linop_field_exact_create(&d, gpu, matrix, p.traj, p.time, p.field, m, NULL, 1, MR_BASIS_DIRAC));
        float *x = test_random_normal(&rng, 2 * n), *a = test_random_normal(&rng, 2 * m);
        float *y = malloc((size_t)m * 2 * sizeof(float)), *z = malloc((size_t)n * 2 * sizeof(float));
        double *fr = malloc((size_t)m * 2 * sizeof(double)), *ar = malloc((size_t)n * 2 * sizeof(double));
        const mr_grid gr = mr_grid_image(matrix);
        mr_nudft_field_forward_ref(&gr, p.traj, p.time, p.field, x, m, fr);
        mr_nudft_field_adjoint_ref(&gr, p.traj, p.time, p.field, a, m, ar);
        for (int64_t i = 0; i < 2 * m; i++)
            fr[i] /= (double)n;
        for (int64_t i = 0; i < 2 * n; i++)
            ar[i] /= (double)n;
        if (d) {
            CHECK_OK(lc_apply(d, mr_linop_forward, x, n, y, m));
            CHECK_OK(lc_apply(d, mr_linop_adjoint, a, m, z, n));
            snprintf(label, sizeof label, "GPU field sums %lldx%lldx%lld: forward vs float64", (long long)matrix[0],
                     (long long)matrix[1], (long long)matrix[2]);
            CHECK_LE(label, test_rel_l2(y, fr, 2 * m), 2e-5);
            snprintf(label, sizeof label, "GPU field sums %lldx%lldx%lld: adjoint vs float64", (long long)matrix[0],
                     (long long)matrix[1], (long long)matrix[2]);
            CHECK_LE(label, test_rel_l2(z, ar, 2 * n), 2e-5);
        }
        mr_linop_free(d);
        free(x);
        free(a);
        free(y);
        free(z);
        free(fr);
        free(ar);
    }
    mr_linop_free(g);
    mr_linop_free(c);
    field_problem_free(&p);
}

int main(void)
{
    if (mr_gpu_count() <= 0) {
        printf("no usable GPU: skipped\n");
        return TEST_SKIP;
    }
    rng = test_seed();
    mr_backend *gpu = NULL, *cpu = NULL;
    const mr_device_sel sg = {.kind = MR_DEVICE_GPU, .index = -1}, sc = {.kind = MR_DEVICE_CPU, .index = -1};
    CHECK_OK(mr_backend_create(&gpu, sg, 0));
    CHECK_OK(mr_backend_create(&cpu, sc, 0));
    if (!gpu || !cpu)
        return test_finish("test_gpu_field");
    printf("backend: %s\n", mr_backend_name(gpu));
    const int64_t m2[3] = {40, 36, 1}, m3[3] = {14, 12, 10}, odd[3] = {301, 1, 1};
    exact(gpu, cpu, m2, 3001);
    exact(gpu, cpu, m3, 1777);
    exact(gpu, cpu, odd, 257);
    mr_backend_free(gpu);
    mr_backend_free(cpu);
    return test_finish("test_gpu_field");
}
