#include "metrics.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* From this many voxels on, mr_metrics_percentile selects in parallel (radix_select). */
#define MR_SELECT_PARALLEL 65536

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

/* Bins of the radix selection: 16 bits of a float's pattern per pass. */
#define MR_SELECT_BINS 65536

/* Counts of the values v[i] whose pattern's high 16 bits equal `high` (high < 0: all) by their high
 * (high < 0) or low 16 bits, summed over the threads' own histograms into h. */
static mr_status radix_histogram(const uint32_t *v, int64_t n, int high, int64_t *h)
{
    const int nt = omp_get_max_threads();
    int64_t *part = calloc((size_t)nt * MR_SELECT_BINS, sizeof *part);
    if (!part)
        return mr_error(MR_ENOMEM, "percentile: out of memory for the histograms of %d threads", nt);
#pragma omp parallel num_threads(nt)
    {
        int64_t *ph = part + (size_t)omp_get_thread_num() * MR_SELECT_BINS;
#pragma omp for schedule(static)
        for (int64_t i = 0; i < n; i++) {
            if (high < 0)
                ph[v[i] >> 16]++;
            else if ((int)(v[i] >> 16) == high)
                ph[v[i] & 0xffffu]++;
        }
    }
    for (int b = 0; b < MR_SELECT_BINS; b++) {
        int64_t c = 0;
        for (int t = 0; t < nt; t++)
            c += part[(size_t)t * MR_SELECT_BINS + b];
        h[b] = c;
    }
    free(part);
    return MR_OK;
}

/* The bin that holds rank *k of the counts h; *k becomes the rank within that bin. */
static int radix_bin(const int64_t *h, int64_t *k)
{
    int b = 0;
    while (b < MR_SELECT_BINS - 1 && *k >= h[b])
        *k -= h[b++];
    return b;
}

/* The k-th smallest (0-based) of n non-negative finite floats given as bit patterns, which order as the
 * values do: a parallel radix selection, the high 16 bits, then the low 16 bits within the bin of rank k.
 * Exact, like mr_select_kth, in two passes over the values. */
static mr_status radix_select(const uint32_t *v, int64_t n, int64_t k, float *out)
{
    int64_t *h = malloc(MR_SELECT_BINS * sizeof *h);
    if (!h)
        return mr_error(MR_ENOMEM, "percentile: out of memory for a histogram");
    mr_status st = radix_histogram(v, n, -1, h);
    if (st == MR_OK) {
        const int high = radix_bin(h, &k);
        if ((st = radix_histogram(v, n, high, h)) == MR_OK) {
            const uint32_t bits = ((uint32_t)high << 16) | (uint32_t)radix_bin(h, &k);
            memcpy(out, &bits, sizeof *out);
        }
    }
    free(h);
    return st;
}

mr_status mr_metrics_percentile(const float *img, int img_complex, int64_t n, double pct, double *out)
{
    *out = NAN;
    if (!img || n < 1 || !(pct >= 0 && pct <= 100))
        return mr_error(MR_EINVAL, "percentile: need an image of >= 1 voxel and 0 <= p <= 100 (n = %lld, p = %g)",
                        (long long)n, pct);
    void *buf = malloc((size_t)n * sizeof(float)); /* the magnitudes: floats, or their bit patterns */
    if (!buf)
        return mr_error(MR_ENOMEM, "percentile: out of memory for %lld voxels", (long long)n);
    const int parallel = n >= MR_SELECT_PARALLEL;
    float *mag = buf;
    uint32_t *bits = buf;
    int64_t finite = 0;
    if (!parallel) {
        for (int64_t i = 0; i < n; i++) {
            const float v = img_complex ? hypotf(img[2 * i], img[2 * i + 1]) : fabsf(img[i]);
            if (isfinite(v))
                mag[finite++] = v;
        }
    } else { /* a non-finite magnitude as +inf, whose pattern sorts after every finite one */
#pragma omp parallel for reduction(+ : finite) schedule(static)
        for (int64_t i = 0; i < n; i++) {
            float v = img_complex ? hypotf(img[2 * i], img[2 * i + 1]) : fabsf(img[i]);
            finite += isfinite(v) != 0;
            v = isfinite(v) ? v : INFINITY;
            memcpy(&bits[i], &v, sizeof v);
        }
    }
    mr_status st = MR_OK;
    if (finite > 0) {
        /* nearest rank: the smallest value with at least p % of the values at or below it */
        int64_t k = (int64_t)ceil(pct / 100.0 * (double)finite) - 1;
        k = k < 0 ? 0 : (k >= finite ? finite - 1 : k);
        float v = NAN;
        if (!parallel)
            v = mr_select_kth(mag, finite, k);
        else
            st = radix_select(bits, n, k, &v);
        *out = st == MR_OK ? v : NAN;
    }
    free(buf);
    return st;
}
