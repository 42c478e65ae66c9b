/* ESPIRiT coil maps (solver/espirit.h) on simulated coils with known analytic maps (phantoms/coils.h,
 * `phantom --coils`), fixed noise seeds (deterministic):
 *
 *  1. Maps vs the truth S/||S|| (unit norm) on 2D 64^2 scans of 8 coils: radial 101 spokes x 128
 *     (Nyquist) noiseless and at 30 dB SNR, golden-angle 40 spokes (2.5x undersampled) at 30 dB. Inside
 *     the object (truth image > 0): the RMS phase-free distance sqrt(2 - 2 |<s, S/||S||>|) <= 0.04
 *     (measured 0.016-0.023), no voxel cropped; the maps are unit norm where not cropped, with the phase
 *     convention v_ref^H s real >= 0; every voxel farther than 0.12 N from the object is exactly 0
 *     (measured: the maps end within 0.08 N of its edge), and at least 40 % of the voxels outside are 0.
 *  2. SENSE (solver/linop.h, solver/cg.h, as tests/test_sense.c): 2D 64^2, 8 coils, radial 33 spokes
 *     (3x undersampled), 30 dB SNR, 20 CG iterations: with the estimated maps the PSNR against the
 *     band-limited truth x ||S|| is at least that with the true maps S/||S|| minus 0.5 dB (measured: 2.0
 *     dB better: the estimated maps are 0 outside the object, where the true ones reconstruct noise).
 *  3. 3D 24^3 kooshball, 4 coils, noiseless: error <= 0.06 inside the object, none cropped.
 *  4. The maps do not depend on the thread count (equal bits); bad options and data without signal
 *     are MR_EINVAL; on a 6^2 scan (calibration region not larger than the kernel) mr_sens_estimate falls
 *     back to Walsh/Inati, mr_sens_estimate_ex with ESPIRiT does not. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maps_testutil.h"
#include "phantoms/scan.h"
#include "recon/pipeline/sens_estimate.h"
#include "sense_testutil.h"
#include "solver/espirit.h"
#include "scan_testutil.h"
#include "testutil.h"

typedef struct {
    double err;          /* RMS phase-free distance inside the object, over the kept voxels */
    int64_t cropped_in;  /* object voxels cropped */
    double zero_out;     /* fraction of the outside voxels that are 0 */
    double far_nonzero;  /* voxels farther than 0.12 N from the object that are not 0 */
    double worst_norm;   /* max | ||s|| - 1 | over the kept voxels */
    double worst_phase;  /* max |arg(v_ref^H s)| over the kept voxels */
} map_score;

static void score_maps(const mr_kspace *ks, const float *maps, const double *vref, map_score *sc)
{
    const int64_t N = mr_kspace_voxels(ks), C = ks->ncoils;
    const int64_t *n = ks->matrix;
    memset(sc, 0, sizeof *sc);
    unsigned char *obj = malloc((size_t)N);
    for (int64_t v = 0; v < N; v++)
        obj[v] = ks->truth[v] > 0;
    /* distance to the object, by brute force over its voxels (small grids) */
    const double far = 0.12 * (double)n[0];
    double err2 = 0;
    int64_t kept_in = 0, out = 0, zero = 0;
    for (int64_t v = 0; v < N; v++) {
        double ns = 0, nt = 0, rr = 0, ri = 0;
        const double dist = maps_distance(maps, ks->sens, C, N, v, &ns, &nt);
        for (int64_t c = 0; c < C; c++) { /* v_ref^H s */
            const float *s = maps + 2 * (c * N + v);
            rr += vref[2 * c] * s[0] + vref[2 * c + 1] * s[1];
            ri += vref[2 * c] * s[1] - vref[2 * c + 1] * s[0];
        }
        if (ns > 0) {
            sc->worst_norm = fmax(sc->worst_norm, fabs(sqrt(ns) - 1));
            sc->worst_phase = fmax(sc->worst_phase, fabs(atan2(ri, rr)));
        }
        if (obj[v]) {
            if (ns == 0) {
                sc->cropped_in++;
                continue;
            }
            err2 += dist * dist;
            kept_in++;
            continue;
        }
        out++;
        zero += ns == 0;
        if (ns == 0)
            continue;
        const int64_t x = v % n[0], y = (v / n[0]) % n[1], z = v / (n[0] * n[1]);
        double dmin = INFINITY;
        for (int64_t u = 0; u < N && dmin > far; u++) {
            if (!obj[u])
                continue;
            const double dx = (double)(u % n[0] - x), dy = (double)((u / n[0]) % n[1] - y),
                         dz = (double)(u / (n[0] * n[1]) - z);
            dmin = fmin(dmin, sqrt(dx * dx + dy * dy + dz * dz));
        }
        sc->far_nonzero += dmin > far;
    }
    sc->err = sqrt(err2 / (double)(kept_in ? kept_in : 1));
    sc->zero_out = (double)zero / (double)(out ? out : 1);
    free(obj);
}

static void maps_case(const char *name, mr_traj_kind kind, int64_t edge, int is3d, int64_t spokes, int64_t coils,
                      double snr_db, double err_bound, int check_outside)
{
    mr_kspace *ks = test_sim_scan(kind, edge, is3d, spokes, coils, snr_db, 3, 1);
    if (!ks)
        return;
    const int64_t N = mr_kspace_voxels(ks);
    float *maps = malloc((size_t)(N * coils) * 2 * sizeof *maps);
    mr_espirit_calib cal;
    CHECK_OK(mr_espirit_calibrate(ks->matrix, ks->traj, ks->nsamples, ks->data, coils, NULL, &cal));
    if (cal.coef) {
        CHECK_OK(mr_espirit_maps(&cal, ks->matrix, NULL, maps, NULL));
        map_score sc;
        score_maps(ks, maps, cal.vref, &sc);
        printf("%s: calibration %lldx%lldx%lld, %lld of %lld kernels; error %.4f, cropped in the object %lld, outside "
               "%.3f zero\n",
               name, (long long)cal.calib[0], (long long)cal.calib[1], (long long)cal.calib[2],
               (long long)cal.nkernels, (long long)cal.ncols, sc.err, (long long)sc.cropped_in, sc.zero_out);
        char what[200];
        snprintf(what, sizeof what, "%s: RMS phase-free map error in the object", name);
        CHECK_LE(what, sc.err, err_bound);
        snprintf(what, sizeof what, "%s: object voxels cropped", name);
        CHECK_LE(what, (double)sc.cropped_in, 0);
        snprintf(what, sizeof what, "%s: max | ||s|| - 1 | where kept", name);
        CHECK_LE(what, sc.worst_norm, 1e-5);
        snprintf(what, sizeof what, "%s: max |arg(v_ref^H s)| where kept", name);
        CHECK_LE(what, sc.worst_phase, 1e-5);
        if (check_outside) {
            snprintf(what, sizeof what, "%s: voxels farther than 0.12 N from the object with maps != 0", name);
            CHECK_LE(what, sc.far_nonzero, 0);
            snprintf(what, sizeof what, "%s: fraction of the outside voxels with maps = 0", name);
            CHECK_GE(what, sc.zero_out, 0.4);
        }
    }
    mr_espirit_calib_free(&cal);
    free(maps);
    mr_kspace_free(ks);
}

static void sense_case(void)
{
    mr_kspace *ks = test_sim_scan(MR_TRAJ_RADIAL2D, 64, 0, 33, 8, 30.0, 3, 1);
    if (!ks)
        return;
    const int64_t N = mr_kspace_voxels(ks), C = ks->ncoils;
    float *est = malloc((size_t)(N * C) * 2 * sizeof *est), *unit = malloc((size_t)(N * C) * 2 * sizeof *unit);
    CHECK_OK(mr_espirit_estimate(ks->matrix, ks->traj, ks->nsamples, ks->data, C, NULL, est, NULL));
    for (int64_t v = 0; v < N; v++) {
        const double r = mr_kspace_sens_rss(ks, v);
        for (int64_t c = 0; c < C; c++)
            for (int p = 0; p < 2; p++)
                unit[2 * (c * N + v) + p] = (float)(ks->sens[2 * (c * N + v) + p] / r);
    }
    float *ref = malloc((size_t)N * sizeof *ref);
    for (int64_t v = 0; v < N; v++)
        ref[v] = (float)(ks->truth_bl[v] * mr_kspace_sens_rss(ks, v));
    const double a = test_sense_psnr(ks, ks->data, unit, C, 20, ref), b = test_sense_psnr(ks, ks->data, est, C, 20, ref);
    free(ref);
    printf("SENSE 64^2, 33 spokes, 30 dB, 20 CG iterations: true maps / ||S|| %.2f dB, ESPIRiT maps %.2f dB\n", a, b);
    CHECK_GE("SENSE with ESPIRiT maps - SENSE with the true maps / ||S|| (dB)", b - a, -0.5);
    free(est);
    free(unit);
    mr_kspace_free(ks);
}

static void threads_and_errors(void)
{
    mr_kspace *ks = test_sim_scan(MR_TRAJ_GOLDEN2D, 48, 0, 60, 4, 25.0, 3, 1);
    if (!ks)
        return;
    const int64_t N = mr_kspace_voxels(ks), C = ks->ncoils;
    float *m1 = malloc((size_t)(N * C) * 2 * sizeof *m1), *m2 = malloc((size_t)(N * C) * 2 * sizeof *m2);
    mr_espirit_opts o;
    mr_espirit_opts_default(&o);
    o.threads = 1;
    CHECK_OK(mr_espirit_estimate(ks->matrix, ks->traj, ks->nsamples, ks->data, C, &o, m1, NULL));
    o.threads = 2;
    CHECK_OK(mr_espirit_estimate(ks->matrix, ks->traj, ks->nsamples, ks->data, C, &o, m2, NULL));
    CHECK(memcmp(m1, m2, (size_t)(N * C) * 2 * sizeof *m1) == 0);
    mr_espirit_opts bad = o;
    bad.kernel = 9;
    CHECK(mr_espirit_estimate(ks->matrix, ks->traj, ks->nsamples, ks->data, C, &bad, m1, NULL) == MR_EINVAL);
    bad = o;
    bad.crop = 1.5;
    CHECK(mr_espirit_estimate(ks->matrix, ks->traj, ks->nsamples, ks->data, C, &bad, m1, NULL) == MR_EINVAL);
    bad = o;
    bad.calib = 6; /* not larger than the kernel */
    CHECK(mr_espirit_estimate(ks->matrix, ks->traj, ks->nsamples, ks->data, C, &bad, m1, NULL) == MR_EINVAL);
    CHECK(strstr(mr_last_error(), "kernel") != NULL);
    memset(ks->data, 0, (size_t)(ks->nsamples * C) * 2 * sizeof *ks->data);
    CHECK(mr_espirit_estimate(ks->matrix, ks->traj, ks->nsamples, ks->data, C, &o, m1, NULL) == MR_EINVAL);
    printf("message: %s\n", mr_last_error());
    CHECK(strstr(mr_last_error(), "signal") != NULL || strstr(mr_last_error(), "zero") != NULL);
    free(m1);
    free(m2);
    mr_kspace_free(ks);
    /* a 6^2 matrix: the calibration region (6) is not larger than the kernel; mr_sens_estimate falls back
     * to Walsh/Inati, mr_sens_estimate_ex with ESPIRiT asked for does not */
    ks = test_sim_scan(MR_TRAJ_RADIAL2D, 6, 0, 0, 4, 30.0, 3, 0);
    if (!ks)
        return;
    float *maps = NULL;
    mr_sens_estimate_opts so;
    mr_sens_estimate_opts_default(&so);
    CHECK(mr_sens_estimate_ex(ks, "tiny", &so, &maps, NULL) == MR_EINVAL);
    CHECK(maps == NULL);
    int64_t cal[3];
    CHECK_OK(mr_sens_estimate(ks, "tiny", 2, &maps, cal));
    CHECK(maps != NULL);
    free(maps);
    mr_kspace_free(ks);
}

int main(void)
{
    maps_case("radial 101 spokes, noiseless", MR_TRAJ_RADIAL2D, 64, 0, 0, 8, INFINITY, 0.04, 1);
    maps_case("radial 101 spokes, 30 dB", MR_TRAJ_RADIAL2D, 64, 0, 0, 8, 30.0, 0.04, 1);
    maps_case("golden-angle 40 spokes, 30 dB", MR_TRAJ_GOLDEN2D, 64, 0, 40, 8, 30.0, 0.04, 1);
    maps_case("3D kooshball 24^3, 4 coils, noiseless", MR_TRAJ_KOOSHBALL, 24, 1, 0, 4, INFINITY, 0.06, 0);
    sense_case();
    threads_and_errors();
    return test_finish("test_espirit");
}
