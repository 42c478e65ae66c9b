/* Seeded pseudo-random numbers (xoshiro256**, seeded through splitmix64). The generator is our own so
 * that the same seed gives the same bytes on every platform and thread count. Used by the phantoms'
 * noise and trajectories and by the solvers (power-iteration start vectors, cycle spinning). */
#ifndef MR_RNG_H
#define MR_RNG_H

#include <stdint.h>

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

#ifdef __cplusplus
}
#endif
#endif
