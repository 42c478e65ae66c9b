/* Off-resonance for simulated scans (docs/PHANTOMS.md, "Field maps and readout timing").
 *
 * A sample taken t_m seconds after the excitation carries the phase of the field at every point:
 *
 *   d_m = integral rho(r) e^{-i 2 pi (k_m . r + omega(r) t_m)} dr,    omega in Hz, r in FOV units,
 *
 * with the simulated field
 *
 *   omega(r) = c + g . r + b exp(-|r - p|^2 / (2 s^2)).
 *
 * The constant and linear part is analytic: (k + g t) . r + c t, so d_m = e^{-i 2 pi c t_m} rhohat(k_m + g t_m)
 * (a sample-time-dependent shift of k and a phase) for the Shepp-Logan phantom and for the coils of
 * coils.h alike. The Gaussian bump (a smooth non-linear field, like the susceptibility field near air
 * cavities) is added by exact sums on a grid `oversample` times finer than the scan's matrix (the
 * voxel-averaged phantom, box basis), of the difference it makes:
 *
 *   d_m += e^{-i 2 pi c t_m} Phi_f(k'_m) / N_f sum_j rho_j S(r_j) e^{-i 2 pi k'_m . r_j} (e^{-i 2 pi b(r_j) t_m} - 1),
 *
 * k' = k + g t, so that no reconstruction on the scan's matrix commits the inverse crime.
 *
 * Readout timing: every readout (spoke, interleaf) of R samples has t = te + (j - e) dwell for its
 * sample j, e the sample nearest k = 0 (the echo: 0 for a spiral-out, R/2 for a radial spoke through the
 * centre). */
#ifndef MR_PHANTOM_FIELD_H
#define MR_PHANTOM_FIELD_H

#include <stdint.h>

#include "../base/status.h"
#include "coils.h"
#include "shepp_logan.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    double offset_hz;  /* c */
    double grad_hz[3]; /* g: Hz per FOV along x, y, z (the field changes by g_a across the FOV); z ignored in 2D */
    double blob_hz;    /* b: the bump's peak, 0 for none */
    double blob_at[3]; /* p, FOV units; default (0, 0.2, 0) */
    double blob_sigma; /* s, FOV units, > 0; default 0.1 */
    int oversample;    /* fine grid of the bump's sums: N_f = oversample N per axis (N > 1); 0: 4 in 2D, 2 in 3D */
} mr_field_params;

/* No field (every term 0), the defaults above. */
void mr_field_params_default(mr_field_params *p);

/* Parse "KEY=VALUE,..." into p (from the defaults): c, x, y, z (Hz), blob (Hz), sigma (FOV units),
 * at=X:Y[:Z] (FOV units), oversample (1..16). MR_EINVAL naming the key or the text otherwise. */
mr_status mr_field_parse(const char *spec, mr_field_params *p);

/* 1 when the field is not zero everywhere; 1 when it has a non-linear part (the bump). */
int mr_field_present(const mr_field_params *p);
int mr_field_nonlinear(const mr_field_params *p);

/* omega(r) in Hz (r in FOV units; r[2] ignored in 2D when is3d = 0). */
double mr_field_value(const mr_field_params *p, int is3d, const double r[3]);

/* The field at the voxel centres of the matrix (io/kspace.h positions): hz [Nz][Ny][Nx]. */
mr_status mr_field_map(const mr_field_params *p, const int64_t matrix[3], float *hz);

/* Readout times: t [M] for M = nreadouts * readout samples stored readout after readout, with the echo
 * sample found in the first readout of traj [M][3] (the one nearest k = 0). te_s, dwell_s finite,
 * dwell > 0, readout >= 1 dividing m; *echo (may be NULL) receives e. */
mr_status mr_field_times(const float *traj, int64_t m, int64_t readout, double te_s, double dwell_s, float *t,
                         int64_t *echo);

/* The data of a scan in the field p: data [C][M][2] for the phantom `kind` seen through `coils` (NULL:
 * one coil without maps, C = 1) at traj [M][3] and times t [M], on the matrix whose truth the bump's
 * fine grid refines (docs above). threads <= 0: all cores. Deterministic. */
mr_status mr_field_kspace(const mr_field_params *p, mr_phantom_kind kind, const mr_coils *coils,
                          const int64_t matrix[3], const float *traj, const float *t, int64_t m, float *data,
                          int threads);

#ifdef __cplusplus
}
#endif
#endif
