/* Simulated receive coils with analytic k-space (docs/PHANTOMS.md, "Coils"): smooth complex maps
 * that are short sums of complex exponentials,
 *
 *   S_c(r) = sum_j a_cj e^{+i 2 pi f_j . r},   a_cj = A g_j e^{-i 2 pi f_j . p_c} e^{i psi_c},
 *   g_j = exp(-2 pi^2 sigma^2 |f_j|^2),
 *
 * (f_j: the points of a small lattice inside a ball, p_c: the coil positions around the object,
 * psi_c: a constant phase per coil, A: one scale for all coils), so that the coil data are exact:
 *
 *   d_c(k) = FT[S_c rho](k) = sum_j a_cj rhohat(k - f_j)
 *
 * with rhohat the analytic transform of the Shepp-Logan phantom (shepp_logan.h). No image is
 * sampled and no FFT is taken: the simulated scan has no inverse crime.
 *
 * Coordinates, units and storage follow io/kspace.h; maps are [C][Nz][Ny][Nx][2], data [C][M][2]. */
#ifndef MR_COILS_H
#define MR_COILS_H

#include <stdint.h>

#include "../base/status.h"
#include "shepp_logan.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mr_coils mr_coils;

/* The coil set for a phantom (2D or 3D design) and 1 <= ncoils <= MR_MAX_COILS. *out is owned by the
 * caller (mr_coils_free). */
mr_status mr_coils_create(mr_coils **out, mr_phantom_kind kind, int64_t ncoils);
void mr_coils_free(mr_coils *c);

int64_t mr_coils_count(const mr_coils *c);
/* S_c(r), double, out = (re, im). */
void mr_coils_value(const mr_coils *c, int64_t coil, const double r[3], double out[2]);
/* Maps at the voxel centres of the matrix (io/kspace.h positions): maps [C][Nz][Ny][Nx][2]. */
mr_status mr_coils_maps(const mr_coils *c, const int64_t matrix[3], float *maps);
/* Coil data d_c(k_m) for every coil: traj [M][3], data [C][M][2]. OpenMP over samples; the bytes do
 * not depend on the thread count. */
mr_status mr_coils_kspace(const mr_coils *c, const float *traj, int64_t m, float *data);
/* The mean of sum_c |S_c|^2 over the midpoints of a 128^2 (2D) or 32^3 (3D) grid of the FOV that lie
 * inside the head (1 by construction of A), and its minimum and maximum there. */
void mr_coils_sum2_stats(const mr_coils *c, double *mean, double *min, double *max);

#ifdef __cplusplus
}
#endif
#endif
