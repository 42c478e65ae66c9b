/* Coil sensitivity maps estimated from the data (docs/RECON.md, "Coil maps from the data").
 *
 * Method: the adaptive combination of Walsh, Gmitro & Marcellin (MRM 43:682, 2000): at every voxel
 * r, the map is the dominant eigenvector of the coil correlation matrix
 *     R(r) = sum_{r' in window(r)} x(r') x(r')^H        (x(r') in C^C: the coil images)
 * of low-resolution coil images x over a small window; with the phase of each voxel's eigenvector
 * referred to one global virtual coil (the dominant eigenvector of sum_r x x^H), as in Inati,
 * Hansen & Kellman (ISMRM 2014, "A fast optimal method for coil sensitivity estimation and adaptive
 * coil combination for complex images"). The maps are unit-norm per voxel (sum_c |s_c|^2 = 1), so
 * a SENSE reconstruction with them returns the image weighted by the root-sum-of-squares of the
 * true sensitivities (the usual convention, as with ESPIRiT's maps); where the signal is too weak
 * (eigenvalue below threshold * max) the maps are filled from their neighbours, so they are smooth
 * and defined everywhere.
 *
 * From non-Cartesian data: the samples of the fully sampled k-space centre (its radius found from
 * the trajectory, see mr_coilmaps_calib_size) are tapered with a Hann window and gridded
 * (Kaiser-Bessel, Pipe-Menon density compensation: solver/gridding.h, solver/dcf.h) onto a small
 * grid covering the same FOV; the maps are computed there and interpolated (trilinear, then
 * renormalised) to the image matrix.
 *
 * Host arrays; borrowed for the duration of each call. Complex arrays are (re, im) float pairs;
 * coil images and maps are [C][Nz][Ny][Nx][2] (coil slowest, x fastest). */
#ifndef MR_COILMAPS_H
#define MR_COILMAPS_H

#include <stdint.h>

#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int window;       /* Walsh window edge in calibration-grid voxels, odd, 1..15 (default 3) */
    int calib;        /* calibration grid edge per axis; 0 (default): from the trajectory */
    int calib_max;    /* upper bound of the automatic edge (default 32 in 2D, 24 in 3D when 0) */
    double threshold; /* relative eigenvalue below which maps are filled in (default 1e-3) */
    int threads;      /* OpenMP threads, <= 0: all cores */
} mr_coilmaps_opts;

void mr_coilmaps_opts_default(mr_coilmaps_opts *o);

/* The edge of the k-space centre that the trajectory samples at Nyquist density (cells of one
 * cycle/FOV all hit within a radius r_c: edge 2 floor(r_c)), clamped to 8..calib_max and to the
 * matrix, per axis (1 for the z axis of a 2D matrix). traj [M][3] cycles/FOV. */
mr_status mr_coilmaps_calib_size(const int64_t matrix[3], const float *traj, int64_t m, const mr_coilmaps_opts *o,
                                 int64_t small[3]);

/* Maps on `matrix` from coil images imgs [C][small] on the grid `small` (same FOV, voxel j of an
 * axis at (j - n/2)/n FOV as everywhere in mrirecon). maps [C][matrix]. */
mr_status mr_coilmaps_from_images(const float *imgs, int64_t ncoils, const int64_t small[3], const int64_t matrix[3],
                                  const mr_coilmaps_opts *o, float *maps);

/* Low-resolution coil images imgs [C][grid] on the grid `grid` (the image's FOV: voxel j of an axis at
 * (j - n/2)/n) from the samples of data [C][M][2] inside the box |k_a| < grid_a / 2 of the active axes of
 * `matrix`: Hann-tapered (taper != 0: prod_a cos^2(pi k_a / grid_a)) or not, Pipe-Menon density
 * compensation of those samples, Kaiser-Bessel gridding (oversampling 2, width 6). The calibration data
 * of mr_coilmaps_estimate and of ESPIRiT (solver/espirit.h). MR_EINVAL with fewer than 16 samples inside.
 * threads <= 0: all cores. */
mr_status mr_coilmaps_grid(const int64_t matrix[3], const float *traj, int64_t m, const float *data, int64_t ncoils,
                           const int64_t grid[3], int taper, int threads, float *imgs);

/* Maps on `matrix` from non-Cartesian multi-coil data: traj [M][3] cycles/FOV, data [C][M][2]
 * (mr_kspace layout). small_out (may be NULL) receives the calibration grid used. */
mr_status mr_coilmaps_estimate(const int64_t matrix[3], const float *traj, int64_t m, const float *data,
                               int64_t ncoils, const mr_coilmaps_opts *o, float *maps, int64_t small_out[3]);

#ifdef __cplusplus
}
#endif
#endif
