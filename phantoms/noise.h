/* Complex Gaussian noise at a target SNR, drawn with the seeded generator of base/rng.h (serially,
 * sample by sample, so the same seed gives the same bytes on every platform and thread count). */
#ifndef MR_NOISE_H
#define MR_NOISE_H

#include <stdint.h>

#include "../base/rng.h"
#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MR_RNG_STREAM_TRAJ 1
#define MR_RNG_STREAM_NOISE 2

/* sigma (per real and per imaginary part) for a target SNR over data [m][2]:
 * SNR_dB = 10 log10(mean_m |d_m|^2 / (2 sigma^2)). MR_EINVAL when the data are all zero or
 * snr_db is not finite. */
mr_status mr_noise_sigma(const float *data, int64_t m, double snr_db, double *sigma);

/* Add complex Gaussian noise of standard deviation sigma per part to data [m][2], drawn from
 * (seed, MR_RNG_STREAM_NOISE) in sample order. */
void mr_noise_add(float *data, int64_t m, double sigma, uint64_t seed);

/* Measured SNR of noisy data against the clean data: 10 log10(mean |clean|^2 / mean |noisy - clean|^2). */
double mr_noise_measured_snr_db(const float *clean, const float *noisy, int64_t m);

#ifdef __cplusplus
}
#endif
#endif
