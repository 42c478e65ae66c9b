#include "metrics.h"

#include <math.h>

mr_status mr_metrics_compute(const float *recon, int recon_complex, const float *truth, int64_t n, mr_metrics *out)
{
    if (!recon || !truth || !out || n < 1)
        return mr_error(MR_EINVAL, "metrics: need two images of >= 1 voxel (n = %lld)", (long long)n);
    double se = 0, s0 = 0, mx = 0;
#pragma omp parallel for reduction(+ : se, s0) reduction(max : mx) schedule(static) if (n > 65536)
    for (int64_t i = 0; i < n; i++) {
        double v;
        if (recon_complex)
            v = hypot((double)recon[2 * i], (double)recon[2 * i + 1]);
        else
            v = fabs((double)recon[i]);
        double t = fabs((double)truth[i]);
        double d = v - t;
        se += d * d;
        s0 += t * t;
        if (t > mx)
            mx = t;
    }
    double mse = se / (double)n, ms0 = s0 / (double)n;
    out->mse = mse;
    out->max_truth = mx;
    out->psnr_db = 20.0 * log10(mx / sqrt(mse));
    out->snr_db = 20.0 * log10(sqrt(ms0) / sqrt(mse));
    out->percent_error = 100.0 * sqrt(mse) / sqrt(ms0);
    return MR_OK;
}

double mr_metrics_psnr(const float *recon, int recon_complex, const float *truth, int64_t n)
{
    mr_metrics m = {0, 0, 0, 0, 0};
    if (mr_metrics_compute(recon, recon_complex, truth, n, &m) != MR_OK)
        return NAN;
    return m.psnr_db;
}
