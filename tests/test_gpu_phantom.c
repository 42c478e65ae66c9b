/* GPU Q and F^H d on phantom data (analytic Shepp-Logan k-space on real trajectories), against the
 * float64 reference: the issue-5 accuracy bounds (2e-5 for the one-sincos-per-pair kernels, 1e-5 for
 * the multi-voxel recurrence) must hold on the phantom too, not only on random inputs.
 * SKIP (77) without a GPU. */
#include <math.h>
#include <stdlib.h>

#include "gpu/gpu.h"
#include "phantoms/scan.h"
#include "solver/nudft.h"
#include "testutil.h"

static void check_scan(const char *name, mr_traj_kind kind, const int64_t matrix[3], int64_t spokes, int64_t readout,
                       int qgrid)
{
    mr_kspace *ks = test_phantom_scan(kind, matrix, spokes, readout);
    if (!ks)
        return;
    const int64_t m = ks->nsamples;
    const mr_grid g = qgrid ? mr_grid_q(ks->matrix) : mr_grid_image(ks->matrix);
    const int64_t nv = mr_grid_size(&g);
    /* F^H d: a = the samples; Q: a = 1 (real); the scale factors of the operator do not matter here */
    float *a = malloc((size_t)m * 2 * sizeof(float));
    float *out = malloc((size_t)nv * 2 * sizeof(float));
    double *ref = malloc((size_t)nv * 2 * sizeof(double));
    mr_gpu_nudft *p = NULL;
    CHECK(a && out && ref);
    if (a && out && ref)
        CHECK_OK(mr_gpu_nudft_create(&p, 0, ks->traj, m));
    if (p) {
        for (int64_t i = 0; i < (qgrid ? m : 2 * m); i++) /* real weights are [M], complex [M][2] */
            a[i] = qgrid ? 1.0f : ks->data[i];
        mr_nudft_adjoint_ref(&g, ks->traj, a, qgrid, m, ref);
        const mr_gpu_variant variants[] = {MR_GPU_SFU, MR_GPU_TUNED, MR_GPU_MULTIVOXEL};
        const double bound[] = {2e-5, 2e-5, 1e-5};
        const char *vname[] = {"SFU", "tuned", "multi-voxel"};
        for (int v = 0; v < 3; v++) {
            for (int64_t i = 0; i < 2 * nv; i++)
                out[i] = NAN; /* every voxel must be written */
            CHECK_OK(mr_gpu_nudft_adjoint(p, &g, a, qgrid, out, variants[v]));
            char what[160];
            snprintf(what, sizeof what, "%s, %s, %s: rel L2 vs float64", name, qgrid ? "Q" : "F^H d", vname[v]);
            CHECK_LE(what, test_rel_l2(out, ref, 2 * nv), bound[v]);
        }
    }
    mr_gpu_nudft_destroy(p);
    free(a);
    free(out);
    free(ref);
    mr_kspace_free(ks);
}

int main(void)
{
    if (mr_gpu_count() == 0) {
        printf("test_gpu_phantom: no usable GPU, skipped\n");
        return TEST_SKIP;
    }
    const int64_t m2[3] = {64, 64, 1}, m3[3] = {24, 24, 24};
    check_scan("2D 64x64 radial 101x128", MR_TRAJ_RADIAL2D, m2, 101, 128, 0);
    check_scan("2D 64x64 radial 101x128", MR_TRAJ_RADIAL2D, m2, 101, 128, 1);
    check_scan("3D 24^3 kooshball 200x48", MR_TRAJ_KOOSHBALL, m3, 200, 48, 0);
    return test_finish("test_gpu_phantom");
}
