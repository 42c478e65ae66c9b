/* Image-quality metrics of the book, on magnitude images and without any rescaling:
 *
 *   I = |reconstruction|, I0 = |truth|, over n voxels, accumulated in double:
 *   MSE           = mean (I - I0)^2
 *   PSNR  [dB]    = 20 log10( max I0 / sqrt(MSE) )
 *   SNR   [dB]    = 20 log10( sqrt(mean I0^2) / sqrt(MSE) )
 *   percent error = 100 RMS(I - I0) / RMS(I0) = 100 sqrt(MSE) / sqrt(mean I0^2)
 *
 * MSE = 0 gives PSNR = SNR = +infinity; RMS(I0) = 0 gives percent error = +infinity (NaN when
 * MSE is 0 as well). Callers that write JSON map non-finite values to null. */
#ifndef MR_METRICS_H
#define MR_METRICS_H

#include <stdint.h>

#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    double mse;
    double psnr_db;
    double snr_db;
    double percent_error;
    double max_truth; /* max I0: the PSNR peak, also the display window */
} mr_metrics;

/* recon: complex interleaved [n][2] when recon_complex != 0, else real [n]; truth: real [n]
 * (its absolute value is used). All borrowed. MR_EINVAL when n < 1 or a pointer is NULL. */
mr_status mr_metrics_compute(const float *recon, int recon_complex, const float *truth, int64_t n, mr_metrics *out);

/* The pct-th percentile (0..100, nearest rank) of the finite magnitudes |img| of n voxels (complex
 * [n][2] when img_complex, else real), selected on a copy: a robust maximum (display window, image
 * scale). *out is NAN when no value is finite. MR_EINVAL (bad arguments), MR_ENOMEM. */
mr_status mr_metrics_percentile(const float *img, int img_complex, int64_t n, double pct, double *out);

/* The k-th smallest of v[0..n-1] (0 <= k < n), partially reordering v: quickselect with the median of
 * three as pivot (Hoare partition). Also the median of solver/noise_est.c. */
float mr_select_kth(float *v, int64_t n, int64_t k);

/* Just the PSNR, for per-iteration monitoring. */
double mr_metrics_psnr(const float *recon, int recon_complex, const float *truth, int64_t n);

#ifdef __cplusplus
}
#endif
#endif
