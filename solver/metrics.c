#include "metrics.h"

#include <math.h>
#include <stdlib.h>

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

float mr_select_kth(float *v, int64_t n, int64_t k)
{
    int64_t lo = 0, hi = n - 1;
    while (hi > lo) {
        const int64_t mid = lo + (hi - lo) / 2;
        float a = v[lo], b = v[mid], c = v[hi];
        const float pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                const float t = v[i];
                v[i++] = v[j];
                v[j--] = t;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return v[k];
    }
    return v[k];
}

mr_status mr_metrics_percentile(const float *img, int img_complex, int64_t n, double pct, double *out)
{
    *out = NAN;
    if (!img || n < 1 || !(pct >= 0 && pct <= 100))
        return mr_error(MR_EINVAL, "percentile: need an image of >= 1 voxel and 0 <= p <= 100 (n = %lld, p = %g)",
                        (long long)n, pct);
    float *mag = malloc((size_t)n * sizeof *mag);
    if (!mag)
        return mr_error(MR_ENOMEM, "percentile: out of memory for %lld voxels", (long long)n);
    int64_t finite = 0;
    for (int64_t i = 0; i < n; i++) {
        const float v = img_complex ? hypotf(img[2 * i], img[2 * i + 1]) : fabsf(img[i]);
        if (isfinite(v))
            mag[finite++] = v;
    }
    if (finite > 0) {
        /* nearest rank: the smallest value with at least p % of the values at or below it */
        int64_t k = (int64_t)ceil(pct / 100.0 * (double)finite) - 1;
        k = k < 0 ? 0 : (k >= finite ? finite - 1 : k);
        *out = mr_select_kth(mag, finite, k);
    }
    free(mag);
    return MR_OK;
}
