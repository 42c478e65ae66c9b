/* SENSE with coil maps estimated from the data (--sens estimate, recon/pipeline/sens_estimate.h), on the CPU,
 * through the pipeline (mr_recon_run): 2D 128^2 radial, readout 256, 8 simulated coils with analytic
 * maps and k-space (phantom --coils 8), 60 CG iterations, two cases:
 *   1. 201 spokes (Nyquist), complex noise at 30 dB SNR (seed 7);
 *   2. 67 spokes (3x undersampled), noiseless.
 *
 * The estimated maps are unit-norm per voxel, so SENSE with them reconstructs rho ||S|| (the object
 * weighted by the true maps' root-sum-of-squares), as per-coil CG + RSS does; the true maps give rho.
 * Each reconstruction is scored against the image its maps define (PSNR vs the band-limited truth):
 *   A  true maps S (the scan's)                    vs rho
 *   B  estimated maps                              vs rho ||S|| (the pipeline weights the truth itself
 *                                                   when the scan stores its true maps; the report says so)
 *   C  true maps normalised, S / ||S||             vs rho ||S||  (exactly B's convention; case 1)
 *   D  per-coil CG + root-sum-of-squares           vs rho ||S||  (its image is |rho| ||S|| too)
 * Targets (issue 11): B within 1 dB of A and of C, and better than D: asserted B >= A - 1, B >= C - 1,
 * B >= D + 1. Measured 2026-11-27 (AMD EPYC, 2 threads; ESPIRiT maps, Dirac basis, automatic lambda):
 * case 1 A 38.62, B 40.04, C 38.77, D 35.56 dB; case 2 A 39.15, B 41.03, D 31.33 dB (the estimated
 * maps are 0 outside the object, where the true maps let SENSE reconstruct noise; with the Walsh/Inati
 * maps and box basis of 2026-11-23: case 1 A 34.18, B 34.34, C 34.31, D 31.37 dB).
 * Also: the report says "estimate", the calibration grid (32^2 at 201 spokes), that the truth was
 * weighted; a multi-coil scan without maps gets estimated maps by default; --sens estimate with
 * --sens-maps is refused. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/kspace_h5.h"
#include "recon/pipeline/pipeline.h"
#include "recon/report/report.h"
#include "recon/pipeline/sens_estimate.h"
#include "phantoms/scan.h"
#include "testutil.h"

typedef struct {
    double psnr_bl;
    char sens[16];
    int weighted;
    int64_t calib[3];
} captured;

static void capture(void *ctx, const mr_report *r)
{
    captured *c = ctx;
    c->psnr_bl = r->m[0].metrics[MR_TRUTH_BANDLIMITED].psnr_db;
    snprintf(c->sens, sizeof c->sens, "%s", r->sens ? r->sens : "?");
    c->weighted = r->truth_weighted;
    memcpy(c->calib, r->sens_calib, sizeof c->calib);
}

static mr_status recon(const char *scan, const char *out, const char *sens, const char *maps, captured *c)
{
    mr_recon_opts o;
    mr_recon_opts_default(&o);
    o.method = "cg"; /* the maps under test, with the quadratic prior their bounds were set with */
    o.sens = sens;
    o.sens_maps = maps;
    o.op.device = MR_DEVICE_CPU;
    o.op.threads = 2;
    o.nifti = "none";
    o.on_report = capture;
    o.on_report_ctx = c;
    memset(c, 0, sizeof *c);
    return mr_recon_run(scan, out, &o);
}

/* The scan of a case, its copy with S / ||S|| as maps and rho ||S|| as truths (norm may be NULL). */
static void write_scans(const char *plain, const char *norm, int spokes, double snr_db)
{
    mr_scan_params sp;
    mr_scan_params_default(&sp);
    const int64_t mat[3] = {128, 128, 1};
    mr_traj_params_default(&sp.traj, MR_TRAJ_RADIAL2D, mat);
    sp.traj.spokes = spokes;
    sp.traj.readout = 256;
    sp.coils = 8;
    sp.noise = snr_db > 0;
    sp.snr_db = snr_db;
    sp.seed = 7;
    mr_kspace *ks = NULL;
    CHECK_OK(mr_scan_simulate(&sp, &ks));
    if (!ks)
        return;
    CHECK_OK(mr_kspace_write(plain, ks));
    if (norm) {
        const int64_t n = mr_kspace_voxels(ks);
        double *rss = malloc((size_t)n * sizeof *rss);
        for (int64_t v = 0; v < n; v++)
            rss[v] = mr_kspace_sens_rss(ks, v);
        CHECK(mr_sens_weight_truth(ks) == 1);
        for (int64_t c = 0; c < ks->ncoils; c++)
            for (int64_t v = 0; v < n; v++) {
                float *s = ks->sens + 2 * (c * n + v);
                s[0] = (float)(s[0] / rss[v]);
                s[1] = (float)(s[1] / rss[v]);
            }
        CHECK_OK(mr_kspace_write(norm, ks));
        free(rss);
    }
    mr_kspace_free(ks);
}

static void run_case(const char *dir, const char *name, int spokes, double snr_db, int with_c)
{
    char plain[1100], norm[1100], out[1200];
    snprintf(plain, sizeof plain, "%s/%s.h5", dir, name);
    snprintf(norm, sizeof norm, "%s/%s_unitmaps.h5", dir, name);
    write_scans(plain, with_c ? norm : NULL, spokes, snr_db);
    captured a, b, c, d;
    memset(&c, 0, sizeof c);
    snprintf(out, sizeof out, "%s/%s_true", dir, name);
    CHECK_OK(recon(plain, out, "file", NULL, &a));
    snprintf(out, sizeof out, "%s/%s_estimate", dir, name);
    CHECK_OK(recon(plain, out, "estimate", NULL, &b));
    if (with_c) {
        snprintf(out, sizeof out, "%s/%s_true_unit", dir, name);
        CHECK_OK(recon(norm, out, "file", NULL, &c));
    }
    snprintf(out, sizeof out, "%s/%s_rss", dir, name);
    CHECK_OK(recon(plain, out, "rss", NULL, &d));
    printf("%s (%d spokes, %s): PSNR vs the band-limited truth: A true maps %.2f dB; B estimated maps %.2f dB; "
           "C true maps / ||S|| %.2f dB; D per-coil + RSS %.2f dB (B, C, D against the truth x ||S||); "
           "calibration grid %lldx%lld\n",
           name, spokes, snr_db > 0 ? "30 dB SNR" : "noiseless", a.psnr_bl, b.psnr_bl, with_c ? c.psnr_bl : NAN,
           d.psnr_bl, (long long)b.calib[0], (long long)b.calib[1]);
    CHECK(strcmp(a.sens, "file") == 0 && !a.weighted);
    CHECK(strcmp(b.sens, "estimate") == 0 && b.weighted && b.calib[2] == 1 && b.calib[0] >= 16);
    CHECK(strcmp(d.sens, "rss") == 0 && d.weighted);
    CHECK_GE("estimated maps - true maps (dB)", b.psnr_bl - a.psnr_bl, -1.0);
    if (with_c) {
        CHECK(strcmp(c.sens, "file") == 0 && !c.weighted);
        CHECK_GE("estimated maps - true maps / ||S|| (dB)", b.psnr_bl - c.psnr_bl, -1.0);
    }
    CHECK_GE("estimated maps - per-coil + RSS (dB)", b.psnr_bl - d.psnr_bl, 1.0);
}

int main(void)
{
    const char *dir = test_tmpdir("test_sense_estimate");
    run_case(dir, "nyquist_snr30", 201, 30.0, 1);
    run_case(dir, "spokes67", 67, 0.0, 0);

    char plain[1100], out[1200];
    snprintf(plain, sizeof plain, "%s/nyquist_snr30.h5", dir);
    /* the default for a multi-coil scan without maps is the estimate */
    mr_kspace *nomaps = NULL;
    char bare[1100];
    snprintf(bare, sizeof bare, "%s/nomaps.h5", dir);
    if (mr_kspace_read(plain, &nomaps) == MR_OK) {
        free(nomaps->sens);
        nomaps->sens = NULL;
        CHECK_OK(mr_kspace_write(bare, nomaps));
        captured e;
        snprintf(out, sizeof out, "%s/auto", dir);
        CHECK_OK(recon(bare, out, "auto", NULL, &e));
        CHECK(strcmp(e.sens, "estimate") == 0 && !e.weighted); /* no true maps: the plain truth */
        printf("no maps in the file, default: sens %s, %.2f dB against the unweighted truth\n", e.sens, e.psnr_bl);
    }
    mr_kspace_free(nomaps);
    captured e;
    snprintf(out, sizeof out, "%s/refused", dir);
    CHECK(recon(plain, out, "estimate", plain, &e) == MR_EINVAL);
    CHECK(strstr(mr_last_error(), "--sens estimate") != NULL);
    return test_finish("test_sense_estimate");
}
