/* Noise prewhitening across receive coils (Pruessmann et al. 2001; Hansen & Kellman 2015).
 *
 * From the noise covariance Psi of noise-only samples (acquired with the RF off; base/noise_cov.h
 * computes it, the ISMRMRD reader returns it with the scan, recon/pipeline/volumes.c applies this):
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

#include "../base/noise_cov.h" /* Psi from noise samples */
#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* W = sigma_ref L^{-1} (lower triangular, zeros above the diagonal) from the covariance psi.
 * MR_EINVAL naming the coil when psi is not Hermitian positive definite (a dead, saturated or
 * duplicated channel), or when a value is not finite. */
mr_status mr_prewhiten_matrix(const double *psi, int64_t ncoils, double *w);

/* data[c][m] := sum_{j <= c} W[c][j] data[j][m] for every sample m, in place; data [C][M][2]. */
void mr_prewhiten_apply(const double *w, int64_t ncoils, float *data, int64_t nsamples);

#ifdef __cplusplus
}
#endif
#endif
