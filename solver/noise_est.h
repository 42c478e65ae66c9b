/* The noise level of a non-Cartesian scan, estimated from its own samples (docs/RECON.md, "Noise
 * level from the data").
 *
 * sigma is the standard deviation of the complex noise per real and per imaginary part of a sample,
 * the convention of mr_kspace.noise_sigma (io/kspace.h).
 *
 * Method: local noise subspaces. The object lies inside a box B of half-widths h (by default the
 * FOV, h = 1/2 per axis: what every reconstruction assumes anyway), so the noiseless samples of L
 * neighbouring k-space positions k_1..k_L, s_j = int_B rho(r) e^{-i 2 pi k_j . r} dr, have the
 * covariance G_jl = prod_a sinc(2 h_a (k_j - k_l)_a) under a white prior on rho. Where the positions
 * sample k-space more densely than B needs (readout oversampling, the radial centre, a dense random
 * cloud), G has eigenvalues ~0: the projections y = u^H d of the data on their unit eigenvectors u
 * hold (almost) no signal and exactly the noise, complex Gaussian with sigma per part, independent
 * across u and across disjoint neighbourhoods. The signal left in direction u is expected to be
 * (lambda_u / tr G) ||s||^2; a pilot estimate uses the directions with lambda_u / tr G < 1e-8, the
 * final one every direction (lambda_u / tr G < eps) whose expected leakage, with ||d_c||^2 of the
 * neighbourhood for ||s||^2, is at most 1 % of the noise variance 2 sigma_pilot^2 (so the bias is
 * <= 0.5 %): few directions near the k-space centre, many at its edge. sigma_c of coil c is 1.4826
 * median |Re y|, |Im y| (the median absolute deviation, robust against what leaks anyway).
 *
 * Neighbourhoods: runs of L consecutive samples along a readout (consecutive samples closer than 1
 * cycle/FOV: radial, golden-angle, spiral, kooshball, the stacks, BART and ISMRMRD readouts), or,
 * when readouts cover less than half of the samples (a random trajectory), the samples falling in
 * cubes of `cell` cycles/FOV. At most `max_groups` neighbourhoods are used, evenly spread.
 *
 * Uncertainty: the neighbourhoods are dealt into 16 interleaved groups, sigma is estimated in each,
 * and the standard error is the groups' standard deviation / 4.
 *
 * Object smaller than the FOV: when the FOV box leaves no noise direction at all (every readout sampled
 * at 1 cycle/FOV, e.g. Cartesian lines without oversampling) and no support was given, the object's
 * half-widths are measured on a low-resolution root-sum-of-squares image of the k-space centre (per axis
 * the centred interval holding 99.9 % of its energy, plus three voxels) and the estimate is repeated
 * inside that box; the result says so (support_from_image). (Radial readouts at 1 cycle/FOV, as an
 * ISMRMRD scan on its 2x-oversampled encoded FOV, need no such help: the dense centre has directions.)
 *
 * Noiseless data give a sigma of the order of the float32 rounding of the samples (not 0, not an
 * error). A trajectory with no neighbourhood dense enough for a noise direction even then (Cartesian
 * readouts without oversampling of an object filling the FOV) is MR_EINVAL with a message saying so.
 *
 * Host arrays, borrowed for the duration of the call: traj [M][3] cycles/FOV, data [C][M][2]. */
#ifndef MR_NOISE_EST_H
#define MR_NOISE_EST_H

#include <stdint.h>

#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int segment;       /* samples per readout neighbourhood, 8..256 (default 32) */
    double cell;       /* cube edge in cycles/FOV of the neighbourhoods without readouts (default 4) */
    double eps;        /* candidate noise directions: eigenvalue / trace below eps (default 1e-4) */
    int max_groups;    /* neighbourhoods used at most, evenly spread (default 512) */
    double support[3]; /* the object's half-width per axis in FOV units, 0 < h <= 0.5; 0: 0.5 (the FOV) */
    int threads;       /* OpenMP threads, <= 0: all cores */
} mr_noise_est_opts;

void mr_noise_est_opts_default(mr_noise_est_opts *o);

typedef enum { MR_NOISE_NBHD_READOUT = 0, MR_NOISE_NBHD_CELLS = 1 } mr_noise_nbhd_kind;

typedef struct {
    double sigma;     /* sqrt(mean_c sigma_c^2): one sigma for all coils (mr_kspace.noise_sigma) */
    double sigma_se;  /* its standard error */
    int64_t ncoils;
    double *sigma_coil;    /* [C] sigma_c, owned (mr_noise_est_result_free) */
    double *sigma_coil_se; /* [C] standard errors */
    int64_t values;        /* noise values per coil in the estimate (real and imaginary parts each count;
                              the mean over coils) */
    int64_t groups;        /* neighbourhoods used */
    mr_noise_nbhd_kind nbhd;
    double support[3];      /* the object's half-widths used (FOV units; 0 on an inactive axis) */
    int support_from_image; /* 1: from a low-resolution image (the FOV box left no noise direction) */
} mr_noise_est_result;

/* "readout segments" or "k-space cells" */
const char *mr_noise_nbhd_name(mr_noise_nbhd_kind kind);

/* Estimate sigma of every coil of data [C][M][2] on traj [M][3] for an image `matrix` (axes with
 * N = 1 are ignored: a 2D scan). o may be NULL (defaults). *out is filled (its arrays malloc'ed)
 * only on MR_OK. Errors: MR_EINVAL (bad sizes or options, non-finite samples, no noise direction:
 * the message says why), MR_ENOMEM, MR_EINTERNAL (eigen-decomposition). */
mr_status mr_noise_estimate(const int64_t matrix[3], const float *traj, int64_t m, const float *data, int64_t ncoils,
                            const mr_noise_est_opts *o, mr_noise_est_result *out);

void mr_noise_est_result_free(mr_noise_est_result *r); /* the arrays; NULL-safe, idempotent */

#ifdef __cplusplus
}
#endif
#endif
