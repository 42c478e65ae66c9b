/* Seeded pseudo-random numbers (xoshiro256**, seeded through splitmix64) and complex Gaussian
 * noise at a target SNR. The generator is our own so that the same seed gives the same bytes on
 * every platform and thread count (the noise is drawn serially, sample by sample). */
#ifndef MR_NOISE_H
#define MR_NOISE_H

#include <stdint.h>

#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    uint64_t s[4];
} mr_rng;

/* Seed the state from (seed, stream): different streams of one seed are independent sequences
 * (e.g. stream 1 = random trajectory, stream 2 = noise). */
void mr_rng_seed(mr_rng *r, uint64_t seed, uint64_t stream);
uint64_t mr_rng_next(mr_rng *r);
double mr_rng_uniform(mr_rng *r); /* [0, 1), 53 random bits */
/* Two independent standard normal deviates (Marsaglia's polar method). */
void mr_rng_normal2(mr_rng *r, double out[2]);

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
