/* The choice of lambda (solver/autolambda.h) and its use by the pipeline:
 *  1. mr_lambda_choose: --lambda, --lambda-rel (= R x diag) and the automatic rules K sigma^2 / s^2
 *     (quadratic priors) and K sigma sqrt(d) (l1-type priors; K and the rule per prior, recon/pipeline/priors.h),
 *     0 for noiseless scans and for scans that do not state their noise;
 *  2. through mr_recon_run on a noisy phantom: the report's lambda is the automatic one (> 0), the
 *     relative one is R x normal_diagonal, and the automatic choice does not depend on the data's
 *     intensity scale: data and sigma x 1024 (a power of two) give the same lambda and the image
 *     x 1024 (relative L2 difference <= 1e-6);
 *     The same scale invariance for the default prior (total variation, lambda ~ sigma sqrt(d));
 *  3. on that noisy scan the automatic lambda beats lambda = 0 (PSNR against the band-limited truth). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/fsutil.h"
#include "io/image_h5.h"
#include "io/kspace_h5.h"
#include "solver/autolambda.h"
#include "recon/pipeline/pipeline.h"
#include "recon/pipeline/priors.h"
#include "recon/report/report.h"
#include "testutil.h"

typedef struct {
    double lambda, diag, rel, psnr_bl;
    char from[256];
} captured;

static void capture(void *ctx, const struct mr_report *r)
{
    captured *c = ctx;
    c->lambda = r->lambda;
    c->diag = r->normal_diag;
    c->rel = r->lambda_rel;
    c->psnr_bl = r->m[0].have_metrics[MR_TRUTH_BANDLIMITED] ? r->m[0].metrics[MR_TRUTH_BANDLIMITED].psnr_db : NAN;
    snprintf(c->from, sizeof c->from, "%s", r->lambda_from);
}

static void rule(void)
{
    mr_lambda_choice ch;
    const mr_prior_info *grad = mr_prior_get(MR_PRIOR_GRADIENT), *id = mr_prior_get(MR_PRIOR_IDENTITY);
    const mr_prior_info *tv = mr_prior_get(MR_PRIOR_TV);
    mr_lambda_inputs in = {-1, -1, grad->k, grad->rule, 2e-3, 4e-4, 0.25, 1.0};
    mr_lambda_choose(&in, &ch);
    const double want = grad->k * 2e-3 * 2e-3 / (0.25 * 0.25);
    CHECK_LE("automatic (gradient): |lambda - K sigma^2/s^2| / lambda", fabs(ch.lambda - want) / want, 1e-12);
    CHECK_LE("automatic: |rel - lambda/diag|", fabs(ch.rel - ch.lambda / 4e-4), 1e-12);
    CHECK(strstr(ch.from, "automatic") != NULL);
    in.k = id->k;
    mr_lambda_choose(&in, &ch);
    CHECK_LE("automatic (identity): |lambda - K_id sigma^2/s^2|", fabs(ch.lambda - id->k * 2e-3 * 2e-3 / 0.0625),
             1e-15);
    in.k = tv->k;
    in.rule = tv->rule;
    mr_lambda_choose(&in, &ch);
    CHECK(tv->rule == MR_LAMBDA_NOISE && grad->rule == MR_LAMBDA_GAUSSIAN);
    CHECK_LE("automatic (tv): |lambda - K_tv sigma sqrt(d)| / lambda", fabs(ch.lambda - tv->k * 2e-3 * sqrt(4e-4)) / ch.lambda,
             1e-12);
    in.rule = grad->rule;
    in.k = grad->k;
    in.sigma = 0;
    mr_lambda_choose(&in, &ch);
    CHECK(ch.lambda == 0 && strstr(ch.from, "no noise"));
    in.sigma = -1;
    mr_lambda_choose(&in, &ch);
    CHECK(ch.lambda == 0 && strstr(ch.from, "does not state"));
    const mr_lambda_rule g = MR_LAMBDA_GAUSSIAN;
    CHECK(!mr_lambda_needs_scale(-1, -1, -1, g) && !mr_lambda_needs_scale(-1, -1, 0, g) && mr_lambda_needs_scale(-1, -1, 1, g));
    CHECK(!mr_lambda_needs_scale(0, -1, 1, g) && !mr_lambda_needs_scale(-1, 0.1, 1, g));
    CHECK(!mr_lambda_needs_scale(-1, -1, 1, MR_LAMBDA_NOISE));
    in.sigma = 1e-3;
    in.lambda_rel = 0.05;
    mr_lambda_choose(&in, &ch);
    CHECK_LE("--lambda-rel: |lambda - R diag|", fabs(ch.lambda - 0.05 * 4e-4), 1e-18);
    in.lambda = 3e-5;
    in.lambda_rel = -1;
    mr_lambda_choose(&in, &ch);
    CHECK(ch.lambda == 3e-5 && !strcmp(ch.from, "--lambda"));
    printf("rule: K gradient %g, K identity %g, K tv %g\n", grad->k, id->k, tv->k);
}

static mr_status run(const char *scan, const char *out, const char *method, double lambda, double rel, captured *c)
{
    mr_recon_opts o;
    mr_recon_opts_default(&o);
    o.method = method;
    o.lambda = lambda;
    o.lambda_rel = rel;
    o.iters = 30;
    o.op.device = MR_DEVICE_CPU;
    o.op.threads = 2;
    o.on_report = capture;
    o.on_report_ctx = c;
    memset(c, 0, sizeof *c);
    return mr_recon_run(scan, out, &o);
}

static void pipeline(void)
{
    const char *dir = test_tmpdir("test_autolambda");
    char scan[600], scaled[600], out[6][700];
    snprintf(scan, sizeof scan, "%s/noisy.h5", dir);
    snprintf(scaled, sizeof scaled, "%s/scaled.h5", dir);
    for (int i = 0; i < 6; i++)
        snprintf(out[i], sizeof out[i], "%s/out%d", dir, i);
    mr_scan_params sp;
    mr_scan_params_default(&sp);
    const int64_t matrix[3] = {48, 48, 1};
    mr_traj_params_default(&sp.traj, MR_TRAJ_RADIAL2D, matrix);
    sp.noise = 1;
    sp.snr_db = 20;
    mr_kspace *ks = NULL;
    CHECK_OK(mr_scan_simulate(&sp, &ks));
    if (!ks)
        return;
    CHECK_OK(mr_kspace_write(scan, ks));
    const double a = 1024.0; /* another intensity scale (a power of two: scaling is exact in float) */
    for (int64_t i = 0; i < 2 * ks->nsamples * ks->ncoils; i++)
        ks->data[i] *= (float)a;
    for (int64_t v = 0; v < mr_kspace_voxels(ks); v++) {
        ks->truth[v] *= (float)a;
        ks->truth_bl[v] *= (float)a;
    }
    ks->noise_sigma *= a;
    CHECK_OK(mr_kspace_write(scaled, ks));

    captured c0, c1, c2, c3, c4, c5;
    CHECK_OK(run(scan, out[0], "cg", -1, -1, &c0));
    CHECK_OK(run(scaled, out[1], "cg", -1, -1, &c1));
    CHECK_OK(run(scan, out[2], "cg", 0, -1, &c2));
    CHECK_OK(run(scan, out[3], "cg", -1, 0.1, &c3));
    CHECK_OK(run(scan, out[4], "iterative", -1, -1, &c4));
    CHECK_OK(run(scaled, out[5], "iterative", -1, -1, &c5));
    printf("tv: lambda %.6g (%.4g x diag), PSNR %.2f dB; scaled x%g: lambda %.6g, PSNR %.2f dB\n", c4.lambda, c4.rel,
           c4.psnr_bl, a, c5.lambda, c5.psnr_bl);
    CHECK_LE("tv: lambda(scaled) / (a lambda) - 1", fabs(c5.lambda / (a * c4.lambda) - 1), 1e-4);
    CHECK_LE("tv: |PSNR(scaled) - PSNR| (dB)", fabs(c5.psnr_bl - c4.psnr_bl), 1e-3);
    printf("automatic: lambda %.6g (%.4g x diag), %s; scaled x%g: lambda %.6g\n", c0.lambda, c0.rel, c0.from, a,
           c1.lambda);
    CHECK(c0.lambda > 0 && strstr(c0.from, "automatic"));
    CHECK_LE("scale invariance: |lambda(scaled) - lambda| / lambda", fabs(c1.lambda - c0.lambda) / c0.lambda, 1e-4);
    CHECK_LE("--lambda-rel 0.1: |lambda - 0.1 diag| / lambda", fabs(c3.lambda - 0.1 * c3.diag) / c3.lambda, 1e-12);
    CHECK(strstr(c3.from, "--lambda-rel") != NULL);
    printf("PSNR vs band-limited: automatic %.2f dB, lambda 0 %.2f dB, scaled %.2f dB\n", c0.psnr_bl, c2.psnr_bl,
           c1.psnr_bl);
    CHECK_GE("automatic lambda - lambda 0 (PSNR dB)", c0.psnr_bl - c2.psnr_bl, 1.0);
    /* the images: scaled = a x unscaled */
    float *x0 = NULL, *x1 = NULL;
    int64_t m0[3], m1[3];
    char p0[800], p1[800];
    snprintf(p0, sizeof p0, "%s/image_cg.h5", out[0]);
    snprintf(p1, sizeof p1, "%s/image_cg.h5", out[1]);
    CHECK_OK(mr_image_h5_read(p0, &x0, m0));
    CHECK_OK(mr_image_h5_read(p1, &x1, m1));
    if (x0 && x1) {
        const int64_t n = 2 * mr_kspace_voxels(ks);
        double *ref = malloc((size_t)n * sizeof *ref);
        float *back = malloc((size_t)n * sizeof *back);
        if (ref && back) {
            for (int64_t i = 0; i < n; i++) {
                ref[i] = x0[i];
                back[i] = (float)(x1[i] / a);
            }
            CHECK_LE("image(scaled)/a vs image: relative L2", test_rel_l2(back, ref, n), 1e-6);
        }
        free(ref);
        free(back);
    }
    free(x0);
    free(x1);
    mr_kspace_free(ks);
    if (test_failures == 0)
        mr_remove_tree(dir); /* keep the files of a failed run */
}

int main(void)
{
    rule();
    pipeline();
    return test_finish("test_autolambda");
}
