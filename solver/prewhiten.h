/* Noise prewhitening across receive coils (Pruessmann et al. 2001; Hansen & Kellman 2015).
 *
 * From S noise-only samples n_s in C^C (one value per coil, acquired with the RF off):
 *   Psi = (1/S) sum_s n_s n_s^H                     (noise covariance, no mean removed)
 *   Psi = L L^H                                     (Cholesky, L lower triangular)
 *   W   = sigma_ref L^{-1},  sigma_ref^2 = tr(Psi)/C (mean noise power per coil)
 * Applying W to every k-space sample d_m (the C-vector of its coil values) makes the noise of the
 * result white: covariance sigma_ref^2 I. Scaling by sigma_ref keeps the data in their own units
 * (W = I for a single coil, and for coils with equal, uncorrelated noise up to estimation error),
 * and makes W independent of the noise scan's bandwidth, which only scales Psi.
 *
 * Host code; arrays are borrowed for the duration of each call. Complex numbers are (re, im) pairs;
 * matrices are row-major [C][C][2] of double. */
#ifndef MR_PREWHITEN_H
#define MR_PREWHITEN_H

#include <stdint.h>

#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* psi_sum[i][j] += sum_s n_i,s conj(n_j,s) for noise [C][S][2] (coil-major, as mr_kspace data).
 * psi_sum must be zeroed by the caller before the first call; divide by the total number of samples
 * afterwards to get Psi. */
void mr_noise_cov_accumulate(double *psi_sum, int64_t ncoils, const float *noise, int64_t nsamples);

/* W = sigma_ref L^{-1} (lower triangular, zeros above the diagonal) from the covariance psi.
 * MR_EINVAL naming the coil when psi is not Hermitian positive definite (a dead, saturated or
 * duplicated channel), or when a value is not finite. */
mr_status mr_prewhiten_matrix(const double *psi, int64_t ncoils, double *w);

/* data[c][m] := sum_{j <= c} W[c][j] data[j][m] for every sample m, in place; data [C][M][2]. */
void mr_prewhiten_apply(const double *w, int64_t ncoils, float *data, int64_t nsamples);

/* Largest |correlation coefficient| |Psi_ij| / sqrt(Psi_ii Psi_jj) over i != j (0 for one coil). */
double mr_noise_max_correlation(const double *psi, int64_t ncoils);

#ifdef __cplusplus
}
#endif
#endif
