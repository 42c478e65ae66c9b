#include "autolambda.h"

#include <math.h>
#include <stdio.h>

#include "../base/log.h"

int mr_lambda_needs_scale(double lambda, double lambda_rel, double sigma, mr_lambda_rule rule)
{
    return lambda < 0 && lambda_rel < 0 && sigma > 0 && rule == MR_LAMBDA_GAUSSIAN;
}

/* "SNR 30.0 dB" of the data: mean |d|^2 / (2 sigma^2), the definition of `mrirecon phantom --snr` */
static void snr_text(const mr_lambda_inputs *in, char *buf, size_t size)
{
    const double p = in->data_power - 2 * in->sigma * in->sigma; /* signal power: the noise's removed */
    if (in->sigma > 0 && p > 0)
        snprintf(buf, size, "data SNR %.1f dB", 10 * log10(p / (2 * in->sigma * in->sigma)));
    else
        snprintf(buf, size, "data SNR unknown");
}

void mr_lambda_choose(const mr_lambda_inputs *in, mr_lambda_choice *out)
{
    char snr[64];
    snr_text(in, snr, sizeof snr);
    if (in->lambda >= 0) {
        out->lambda = in->lambda;
        snprintf(out->from, sizeof out->from, "--lambda");
    } else if (in->lambda_rel >= 0) {
        out->lambda = in->lambda_rel * in->diag;
        snprintf(out->from, sizeof out->from, "--lambda-rel %g", in->lambda_rel);
    } else if (in->sigma > 0 && in->rule == MR_LAMBDA_NOISE && in->diag > 0) {
        out->lambda = in->k * in->sigma * sqrt(in->diag);
        snprintf(out->from, sizeof out->from, "automatic: %g sigma sqrt(d), noise sigma %.4g (%s), d = diag(E^H E) %.4g",
                 in->k, in->sigma, snr, in->diag);
    } else if (in->sigma > 0 && in->rule == MR_LAMBDA_GAUSSIAN && in->scale > 0 && isfinite(in->scale)) {
        out->lambda = in->k * in->sigma * in->sigma / (in->scale * in->scale);
        snprintf(out->from, sizeof out->from, "automatic: %g sigma^2 / s^2, noise sigma %.4g (%s), image scale s %.4g",
                 in->k, in->sigma, snr, in->scale);
    } else {
        out->lambda = 0;
        snprintf(out->from, sizeof out->from, "%s",
                 in->sigma == 0 ? "automatic: 0, the scan states no noise"
                 : in->sigma > 0 ? "automatic: 0, the image scale is 0"
                                 : "automatic: 0, the scan does not state its noise level");
    }
    out->rel = in->diag > 0 ? out->lambda / in->diag : NAN;
    if (in->lambda < 0 && in->lambda_rel < 0)
        mr_log(MR_LOG_INFO, "lambda %.4g (%.3g x diag(E^H E)), %s", out->lambda, out->rel, out->from);
    if (out->lambda == 0 && in->sigma > 0)
        mr_log(MR_LOG_WARN,
               "the scan states noise (sigma %.4g, %s) but lambda = 0: unregularised CG fits the noise; leave "
               "out {lambda}/{lambda-rel} to choose lambda from the noise level",
               in->sigma, snr);
    else if (out->lambda == 0 && in->sigma < 0 && in->lambda < 0 && in->lambda_rel < 0)
        mr_log(MR_LOG_INFO, "the scan does not state its noise level, so lambda = 0 (no regularisation); noisy "
                            "data want {lambda-rel} (docs/RECON.md, \"Choosing lambda\")");
}
