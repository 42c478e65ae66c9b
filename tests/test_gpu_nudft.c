/* GPU adjoint NUDFT (gpu/gpu.h) against the float64 CPU reference (mr_nudft_adjoint_ref): every
 * compiled kernel configuration (the ladder rungs and the sweep grid), real (Q) and complex (F^H d)
 * weights, 2D and 3D, odd sizes, image and Q grids, one record, fewer records than a chunk and many
 * chunks with a partial last one, forced voxel passes, the recurrence error bound of docs/GPU.md, and
 * the error paths. Skips (77) without a usable GPU.
 *
 * Tolerances (relative L2 over the grid, fresh random inputs each run): 2e-5 for one-sincos-per-pair
 * kernels (SFU and accurate), 1e-5 for the complex-rotation kernels; the per-voxel recurrence bound
 * |b_j - a e^{i2pi t_j}| <= |a| (eps0 + j * 2.2e-7) with one record. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"
#include "solver/nudft.h"
#include "testutil.h"

#define TOL_DIRECT 2e-5
#define TOL_ROTATE 1e-5

typedef struct {
    const char *name;
    int64_t matrix[3];
    int qgrid;       /* 1: the 2N grid of Q, 0: the image grid */
    int64_t m;       /* records */
    double kscale;   /* k drawn uniformly in kscale * [-N/2, N/2] per axis */
} tcase;

static void random_traj(uint64_t *rng, const int64_t matrix[3], double kscale, int64_t m, float *traj)
{
    for (int64_t j = 0; j < m; j++)
        for (int a = 0; a < 3; a++)
            traj[3 * j + a] =
                matrix[a] > 1 ? (float)(kscale * (test_uniform(rng) - 0.5) * (double)matrix[a]) : 0.0f;
}

static void random_weights(uint64_t *rng, int real, int64_t m, float *a)
{
    for (int64_t j = 0; j < m; j++) {
        if (real) {
            a[j] = (float)(0.05 + test_uniform(rng)); /* like |Phi|^2 w: positive */
        } else {
            a[2 * j] = (float)test_normal(rng);
            a[2 * j + 1] = (float)test_normal(rng);
        }
    }
}

static void poison(float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = NAN;
}

static void config_name(const mr_gpu_config *c, char *buf, size_t size)
{
    static const char *const modes[] = {"global", "const", "sfu", "sfu-fixed"};
    snprintf(buf, size, "%s T%d C%d U%d V%d%s", modes[c->mode & 3], c->threads, c->chunk, c->unroll, c->voxels,
             c->rotate ? "rot" : "");
}

/* Every configuration, both weight kinds and the ladder variants on one case. */
static void run_case(const tcase *tc, uint64_t *rng)
{
    const mr_grid g = tc->qgrid ? mr_grid_q(tc->matrix) : mr_grid_image(tc->matrix);
    const int64_t nv = mr_grid_size(&g);
    float *traj = malloc((size_t)tc->m * 3 * sizeof(float));
    float *a = malloc((size_t)tc->m * 2 * sizeof(float));
    float *out = malloc((size_t)nv * 2 * sizeof(float));
    double *ref = malloc((size_t)nv * 2 * sizeof(double));
    CHECK(traj && a && out && ref);
    if (!traj || !a || !out || !ref)
        goto done;
    random_traj(rng, tc->matrix, tc->kscale, tc->m, traj);
    mr_gpu_nudft *p = NULL;
    CHECK_OK(mr_gpu_nudft_create(&p, 0, traj, tc->m));
    if (!p)
        goto done;
    for (int real = 0; real <= 1; real++) {
        random_weights(rng, real, tc->m, a);
        mr_nudft_adjoint_ref(&g, traj, a, real, tc->m, ref);
        double worst_direct = 0.0, worst_rot = 0.0;
        for (int i = 0; i < mr_gpu_config_count(); i++) {
            mr_gpu_config c;
            CHECK_OK(mr_gpu_config_get(i, &c));
            poison(out, 2 * nv);
            mr_status st = mr_gpu_nudft_adjoint_config(p, &g, a, real, out, &c);
            CHECK_OK(st);
            if (st != MR_OK)
                continue;
            const double e = test_rel_l2(out, ref, 2 * nv); /* NaN (an unwritten voxel) fails */
            char name[96], what[256];
            config_name(&c, name, sizeof name);
            snprintf(what, sizeof what, "%s %s %s: rel L2", tc->name, real ? "real" : "complex", name);
            CHECK_LE(what, e, c.rotate ? TOL_ROTATE : TOL_DIRECT);
            if (c.rotate)
                worst_rot = e > worst_rot ? e : worst_rot;
            else
                worst_direct = e > worst_direct ? e : worst_direct;
            CHECK(mr_gpu_nudft_last_ms(p) > 0.0);
        }
        char what[160];
        snprintf(what, sizeof what, "%s %s weights, worst one-sincos-per-pair config: rel L2", tc->name,
                 real ? "real" : "complex");
        CHECK_LE(what, worst_direct, TOL_DIRECT);
        snprintf(what, sizeof what, "%s %s weights, worst rotation config: rel L2", tc->name,
                 real ? "real" : "complex");
        CHECK_LE(what, worst_rot, TOL_ROTATE);

        /* the five ladder variants through the plain entry point, then forced voxel passes */
        for (int v = MR_GPU_NAIVE; v <= MR_GPU_MULTIVOXEL; v++) {
            poison(out, 2 * nv);
            CHECK_OK(mr_gpu_nudft_adjoint(p, &g, a, real, out, (mr_gpu_variant)v));
            snprintf(what, sizeof what, "%s %s variant %d: rel L2", tc->name, real ? "real" : "complex", v);
            CHECK_LE(what, test_rel_l2(out, ref, 2 * nv), v == MR_GPU_MULTIVOXEL ? TOL_ROTATE : TOL_DIRECT);
        }
        mr_gpu_nudft_set_max_pass(p, 3 * g.n[0] + 1); /* passes of 3 rows, the last one short */
        for (int v = MR_GPU_NAIVE; v <= MR_GPU_MULTIVOXEL; v += 2) {
            poison(out, 2 * nv);
            CHECK_OK(mr_gpu_nudft_adjoint(p, &g, a, real, out, (mr_gpu_variant)v));
            snprintf(what, sizeof what, "%s %s variant %d in passes of 3 rows: rel L2", tc->name,
                     real ? "real" : "complex", v);
            CHECK_LE(what, test_rel_l2(out, ref, 2 * nv), v == MR_GPU_MULTIVOXEL ? TOL_ROTATE : TOL_DIRECT);
        }
        mr_gpu_nudft_set_max_pass(p, 0);
    }
    mr_gpu_nudft_destroy(p);
done:
    free(traj);
    free(a);
    free(out);
    free(ref);
}

/* One record at a time, so the output of voxel v is the single term a e^{i2pi k.r_v} and the
 * recurrence error of docs/GPU.md can be checked per voxel: |err_v| <= |a| (eps0 + j eps_step), j the
 * position of the voxel in its thread's group. */
static void recurrence_bound(uint64_t *rng)
{
    const double u = ldexp(1.0, -24);
    const double eps_step = sqrt(2.0) * u / 2.0 + 2.0 * sqrt(2.0) * u; /* |du| + complex-multiply rounding */
    const double eps_sfu = 4.0 * ldexp(1.0, -21); /* __sincosf abs. error (2^-21.4 per component) and the
                                                     rounding of 2 pi f, generously */
    const int64_t matrix[3] = {67, 5, 3};
    const mr_grid g = mr_grid_q(matrix);
    const int64_t nv = mr_grid_size(&g);
    float *out = malloc((size_t)nv * 2 * sizeof(float));
    double *ref = malloc((size_t)nv * 2 * sizeof(double));
    CHECK(out && ref);
    if (!out || !ref)
        goto done;
    double worst_ratio = 0.0;
    for (int trial = 0; trial < 12; trial++) {
        float k[3], a[2];
        random_traj(rng, matrix, trial < 6 ? 1.0 : 4.0, 1, k);
        random_weights(rng, 0, 1, a);
        mr_gpu_nudft *p = NULL;
        CHECK_OK(mr_gpu_nudft_create(&p, 0, k, 1));
        if (!p)
            break;
        mr_nudft_adjoint_ref(&g, k, a, 0, 1, ref);
        const double amag = hypot(a[0], a[1]);
        for (int i = 0; i < mr_gpu_config_count(); i++) {
            mr_gpu_config c;
            CHECK_OK(mr_gpu_config_get(i, &c));
            if (!c.rotate)
                continue;
            poison(out, 2 * nv);
            CHECK_OK(mr_gpu_nudft_adjoint_config(p, &g, a, 0, out, &c));
            for (int64_t v = 0; v < nv; v++) {
                const int64_t ix = v % g.n[0], iy = (v / g.n[0]) % g.n[1], iz = v / (g.n[0] * g.n[1]);
                const int j = (int)(ix % c.voxels);
                /* float phase error of the group's first voxel (ix - j): roundings of terms up to
                   |k_a n_a / s_a| */
                const double tmag = fabs(k[0] * (double)(ix - j - g.center[0]) / (double)g.scale[0]) +
                                    fabs(k[1] * (double)(iy - g.center[1]) / (double)g.scale[1]) +
                                    fabs(k[2] * (double)(iz - g.center[2]) / (double)g.scale[2]);
                const double eps0 = 2.0 * 3.14159265358979 * 4.0 * u * tmag + eps_sfu;
                const double err = hypot(out[2 * v] - ref[2 * v], out[2 * v + 1] - ref[2 * v + 1]);
                const double ratio = err / (amag * (eps0 + j * eps_step)); /* NaN stays NaN */
                if (!(ratio <= worst_ratio))
                    worst_ratio = ratio;
            }
        }
        mr_gpu_nudft_destroy(p);
    }
    CHECK_LE("recurrence error / bound |a|(eps0 + j*eps_step), worst voxel", worst_ratio, 1.0);
    printf("recurrence: eps_step = %.3g per rotation\n", eps_step);
done:
    free(out);
    free(ref);
}

static void error_paths(void)
{
    const float k[3] = {1.0f, 2.0f, 0.0f};
    const float a[2] = {1.0f, 0.0f};
    float out[2];
    mr_gpu_nudft *p = NULL;
    CHECK(mr_gpu_nudft_create(&p, 0, k, 0) == MR_EINVAL && p == NULL);
    CHECK(mr_gpu_nudft_create(&p, 0, NULL, 1) == MR_EINVAL && p == NULL);
    CHECK(mr_gpu_nudft_create(&p, mr_gpu_count(), k, 1) == MR_ENODEV && p == NULL);
    CHECK(mr_gpu_nudft_create(&p, -1, k, 1) == MR_ENODEV && p == NULL);
    CHECK_OK(mr_gpu_nudft_create(&p, 0, k, 1));
    const int64_t matrix[3] = {1, 1, 1};
    mr_grid g = mr_grid_image(matrix);
    mr_gpu_config c;
    mr_gpu_variant_config(MR_GPU_TUNED, 1, &c);
    c.threads = 96; /* not compiled */
    CHECK(mr_gpu_nudft_adjoint_config(p, &g, a, 1, out, &c) == MR_EINVAL);
    printf("uncompiled configuration: %s\n", mr_last_error());
    CHECK(mr_gpu_nudft_adjoint(p, NULL, a, 1, out, MR_GPU_BEST) == MR_EINVAL);
    CHECK(mr_gpu_nudft_adjoint(p, &g, NULL, 1, out, MR_GPU_BEST) == MR_EINVAL);
    g.n[0] = 0;
    CHECK(mr_gpu_nudft_adjoint(p, &g, a, 1, out, MR_GPU_BEST) == MR_EINVAL);
    g.n[0] = 1;
    CHECK_OK(mr_gpu_nudft_adjoint(p, &g, a, 1, out, MR_GPU_BEST)); /* 1 voxel at r = 0: out = a */
    CHECK_LE("1 voxel, 1 record: |out - a|", hypot(out[0] - 1.0, out[1]), 1e-6);
    mr_gpu_nudft_destroy(p);
    mr_gpu_nudft_destroy(NULL);
}

int main(void)
{
    const int n = mr_gpu_count();
    if (n == 0) {
        printf("test_gpu_nudft: no usable GPU, skipped\n");
        return TEST_SKIP;
    }
    char desc[256];
    CHECK_OK(mr_gpu_describe(0, desc, sizeof desc));
    printf("device 0: %s; %d kernel configurations\n", desc, mr_gpu_config_count());
    uint64_t rng = test_seed();
    const tcase cases[] = {
        {"2D 37x29 image grid, M=1", {37, 29, 1}, 0, 1, 1.0},
        {"2D 37x29 Q grid, M=2503", {37, 29, 1}, 1, 2503, 1.0},
        {"2D 31x17 image grid, k in 4x Nyquist box, M=1500", {31, 17, 1}, 0, 1500, 4.0},
        {"3D 13x11x9 image grid, M=199 (< one chunk)", {13, 11, 9}, 0, 199, 1.0},
        {"3D 13x11x9 Q grid, M=2503", {13, 11, 9}, 1, 2503, 1.0},
        {"3D 33x7x5 Q grid, M=4001", {33, 7, 5}, 1, 4001, 1.0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(&cases[i], &rng);
    recurrence_bound(&rng);
    error_paths();
    return test_finish("test_gpu_nudft");
}
