/* The coil noise covariance of noise-only samples (the statistic a reader computes from a scan's
 * noise acquisitions; what is done with it, prewhitening, is solver/prewhiten.h):
 *   Psi = (1/S) sum_s n_s n_s^H          (n_s in C^C: one value per coil; no mean removed)
 * In base/ because both io/ (the ISMRMRD reader accumulates it while streaming the noise records)
 * and solver/ use it. Host code, double arithmetic; arrays borrowed for the call. Complex numbers
 * are (re, im) pairs; matrices row-major [C][C][2] of double. */
#ifndef MR_NOISE_COV_H
#define MR_NOISE_COV_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* psi_sum[i][j] += sum_s n_i,s conj(n_j,s) for noise [C][S][2] (coil-major, as mr_kspace data).
 * psi_sum must be zeroed by the caller before the first call; divide by the total number of samples
 * afterwards to get Psi. */
void mr_noise_cov_accumulate(double *psi_sum, int64_t ncoils, const float *noise, int64_t nsamples);

/* Largest |correlation coefficient| |Psi_ij| / sqrt(Psi_ii Psi_jj) over i != j (0 for one coil). */
double mr_noise_max_correlation(const double *psi, int64_t ncoils);

#ifdef __cplusplus
}
#endif
#endif
