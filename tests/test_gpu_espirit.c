/* ESPIRiT's per-voxel stage on the GPU (gpu/espirit.h) against the host's (solver/espirit.h) on the
 * same calibration; SKIP (77) without a GPU. Simulated scans (phantom --coils, fixed seeds):
 *   2D 128^2 radial 201 spokes, 8 coils, 30 dB (the coil bound 8 of the kernel);
 *   2D 64^2 radial, 12 coils (bound 16) and 20 coils (bound 32), noiseless;
 *   3D 40^3 kooshball, 4 coils, 30 dB.
 * Asserted (float32 on the device, float64 on the host):
 *   eigenvalues (or tr W where it is below the crop): max |eig_gpu - eig_cpu| <= 2e-4;
 *   crop mask: equal wherever |eig_cpu - crop| > 2e-4;
 *   maps where both kept: max over voxels of ||s_gpu - s_cpu|| <= 2e-3 and its RMS <= 2e-4 (both use the
 *   same phase reference, so no phase is removed);
 * mr_sens_estimate_ex with gpu = 0 gives the same maps as on the host (same bounds); more than 32 coils
 * is MR_ENOTSUP. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/espirit.h"
#include "gpu/gpu.h"
#include "phantoms/scan.h"
#include "recon/pipeline/sens_estimate.h"
#include "solver/espirit.h"
#include "scan_testutil.h"
#include "testutil.h"

static void compare(const char *name, const float *mc, const float *ec, const float *mg, const float *eg, int64_t N,
                    int64_t C, double crop)
{
    double eig_diff = 0, worst = 0, sum2 = 0;
    int64_t mask_diff = 0, both = 0;
    for (int64_t v = 0; v < N; v++) {
        eig_diff = fmax(eig_diff, fabs((double)eg[v] - ec[v]));
        double nc = 0, ng = 0, d2 = 0;
        for (int64_t c = 0; c < C; c++)
            for (int p = 0; p < 2; p++) {
                const double a = mc[2 * (c * N + v) + p], b = mg[2 * (c * N + v) + p];
                nc += a * a;
                ng += b * b;
                d2 += (a - b) * (a - b);
            }
        if ((nc > 0) != (ng > 0) && fabs((double)ec[v] - crop) > 2e-4)
            mask_diff++;
        if (nc > 0 && ng > 0) {
            both++;
            worst = fmax(worst, sqrt(d2));
            sum2 += d2;
        }
    }
    char what[200];
    snprintf(what, sizeof what, "%s: max |eig_gpu - eig_cpu|", name);
    CHECK_LE(what, eig_diff, 2e-4);
    snprintf(what, sizeof what, "%s: voxels cropped differently (eigenvalue not within 2e-4 of crop)", name);
    CHECK_LE(what, (double)mask_diff, 0);
    snprintf(what, sizeof what, "%s: max ||s_gpu - s_cpu|| over %lld kept voxels", name, (long long)both);
    CHECK_LE(what, worst, 2e-3);
    snprintf(what, sizeof what, "%s: RMS ||s_gpu - s_cpu||", name);
    CHECK_LE(what, sqrt(sum2 / (double)(both ? both : 1)), 2e-4);
    CHECK(both > 0);
}

static void gpu_case(const char *name, mr_traj_kind kind, int64_t edge, int is3d, int64_t coils, double snr_db)
{
    mr_kspace *ks = test_sim_scan(kind, edge, is3d, 0, coils, snr_db, 5, 0);
    if (!ks)
        return;
    const int64_t N = mr_kspace_voxels(ks), C = ks->ncoils;
    float *mc = malloc((size_t)(N * C) * 2 * sizeof *mc), *mg = malloc((size_t)(N * C) * 2 * sizeof *mg),
          *ec = malloc((size_t)N * sizeof *ec), *eg = malloc((size_t)N * sizeof *eg);
    mr_espirit_opts o;
    mr_espirit_opts_default(&o);
    mr_espirit_calib cal;
    CHECK_OK(mr_espirit_calibrate(ks->matrix, ks->traj, ks->nsamples, ks->data, C, &o, &cal));
    if (cal.coef) {
        CHECK_OK(mr_espirit_maps(&cal, ks->matrix, &o, mc, ec));
        double sec = 0;
        CHECK_OK(mr_gpu_espirit_maps(0, &cal, ks->matrix, o.crop, o.iters, mg, eg, &sec));
        printf("%s: %lld voxels, %lld coils, GPU kernel %.4f s\n", name, (long long)N, (long long)C, sec);
        compare(name, mc, ec, mg, eg, N, C, o.crop);
    }
    mr_espirit_calib_free(&cal);
    /* through recon/pipeline/sens_estimate.h */
    mr_sens_estimate_opts so;
    mr_sens_estimate_opts_default(&so);
    so.gpu = 0;
    float *via = NULL;
    mr_sens_estimate_info info;
    CHECK_OK(mr_sens_estimate_ex(ks, name, &so, &via, &info));
    if (via) {
        CHECK(info.on_gpu == 1 && info.method == MR_SENS_METHOD_ESPIRIT);
        char what[200];
        snprintf(what, sizeof what, "%s via mr_sens_estimate_ex", name);
        compare(what, mc, ec, via, eg, N, C, o.crop); /* eg: the kernel's eigenvalues above */
    }
    free(via);
    free(mc);
    free(mg);
    free(ec);
    free(eg);
    mr_kspace_free(ks);
}

int main(void)
{
    if (mr_gpu_count() < 1) {
        printf("test_gpu_espirit: no GPU, skipped\n");
        return TEST_SKIP;
    }
    gpu_case("2D 128^2, 8 coils, 30 dB", MR_TRAJ_RADIAL2D, 128, 0, 8, 30.0);
    gpu_case("2D 64^2, 12 coils", MR_TRAJ_RADIAL2D, 64, 0, 12, INFINITY);
    gpu_case("2D 64^2, 20 coils", MR_TRAJ_RADIAL2D, 64, 0, 20, INFINITY);
    gpu_case("3D 40^3 kooshball, 4 coils, 30 dB", MR_TRAJ_KOOSHBALL, 40, 1, 4, 30.0);
    /* more coils than the kernel holds */
    mr_espirit_calib big;
    memset(&big, 0, sizeof big);
    double dummy[2] = {0, 0};
    big.ncoils = MR_GPU_ESPIRIT_MAX_COILS + 1;
    big.coef = dummy;
    big.vref = dummy;
    const int64_t mat[3] = {8, 8, 1};
    float out[2];
    CHECK(mr_gpu_espirit_maps(0, &big, mat, 0.9, 30, out, NULL, NULL) == MR_ENOTSUP);
    printf("message: %s\n", mr_last_error());
    return test_finish("test_gpu_espirit");
}
