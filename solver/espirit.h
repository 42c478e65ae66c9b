/* ESPIRiT coil sensitivity maps from non-Cartesian data (docs/COILMAPS.md, "ESPIRiT").
 *
 * Uecker, Lai, Murphy, Virtue, Elad, Pauly, Vasanawala & Lustig, "ESPIRiT - an eigenvalue approach to
 * autocalibrating parallel MRI: where SENSE meets GRAPPA", MRM 71:990-1001, 2014:
 *
 *  1. Calibration k-space X_c(kappa) on a Cartesian region of `calib` points per axis around the
 *     k-space centre (integer kappa, cycles/FOV): the samples of a slightly larger box are gridded
 *     (Pipe-Menon density compensation, Kaiser-Bessel; solver/coilmaps.h mr_coilmaps_grid, no taper) into
 *     low-resolution coil images, whose DFT is cropped to the region.
 *  2. The calibration matrix: every kernel-size patch of the region (k per axis, all coils) is one
 *     row a_q; the patches of images that the coils can see span a subspace: the eigenvectors v_i of
 *     G = sum_q a_q a_q^H (solver/herm_eig.h) with eigenvalue >= threshold x the largest (BART's
 *     `ecalib -t`). P = sum_i v_i v_i^H projects a patch onto it.
 *  3. In image space, averaging P over all patch positions is, at every voxel r, the C x C Hermitian
 *         W(r)_{cc'} = sum_Delta w_{cc'}(Delta) e^{+i 2 pi Delta . r},
 *         w_{cc'}(Delta) = (1/K) sum_{p - p' = Delta} P[(p,c),(p',c')]      (K = k^d kernel points),
 *     a trigonometric polynomial of degree k - 1 (evaluated exactly, separably per axis). The coil
 *     sensitivities s(r) satisfy W(r) s(r) = s(r): the maps are W's dominant eigenvector (power
 *     iteration from the phase reference), unit norm, with the phase of the first principal component
 *     of the calibration data removed (v_ref^H s(r) real >= 0, as BART's ecalib and the Walsh/Inati
 *     maps of solver/coilmaps.h do), and set to 0 where the eigenvalue is below `crop` (BART's
 *     `ecalib -c`): outside the object, where no coil sees signal, the maps are zero.
 *
 * Stage 1-2 run on the host (mr_espirit_calibrate); stage 3 on the host (mr_espirit_maps) or on a GPU
 * (gpu/espirit.h, the same calibration).
 *
 * Host arrays, borrowed for the duration of each call: traj [M][3] cycles/FOV, data [C][M][2], maps
 * [C][Nz][Ny][Nx][2] floats (caller's). */
#ifndef MR_ESPIRIT_H
#define MR_ESPIRIT_H

#include <stdint.h>

#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int kernel;       /* kernel edge per axis, 2..8; 0 (default): 6 in 2D, 4 in 3D */
    int calib;        /* calibration region edge per axis; 0 (default): from the trajectory (the fully
                         sampled centre, mr_coilmaps_calib_size), at most calib_max */
    int calib_max;    /* 0 (default): 32 in 2D, 24 in 3D */
    double threshold; /* kernels kept: eigenvalue of G >= threshold x the largest (default 3e-3) */
    double noise_floor; /* and >= noise_floor x the median eigenvalue of G (default 4; 0: off) */
    double crop;      /* maps set to 0 where W's eigenvalue < crop (default 0.9); 0: never */
    int iters;        /* power iterations per voxel (default 30) */
    int threads;      /* OpenMP threads, <= 0: all cores */
} mr_espirit_opts;

void mr_espirit_opts_default(mr_espirit_opts *o);

/* The calibration: what the per-voxel stage needs. Arrays owned (mr_espirit_calib_free). */
typedef struct {
    int64_t ncoils;
    int64_t calib[3];  /* calibration region (1 on an inactive axis) */
    int64_t kernel[3]; /* kernel edge (1 on an inactive axis) */
    int64_t span[3];   /* 2 kernel - 1: the offsets Delta_a = -(k_a - 1) .. k_a - 1 */
    int64_t ncols;     /* k^d C: the calibration matrix's columns */
    int64_t nrows;     /* patches */
    int64_t nkernels;  /* eigenvectors kept */
    double *coef;      /* w [span_z][span_y][span_x][C][C] complex (re, im), index Delta_a + k_a - 1 */
    double *vref;      /* [C] complex: the phase reference (first principal component), unit norm */
    double *eig;       /* [ncols] eigenvalues of G, descending (diagnostics) */
    double seconds_grid, seconds_gram, seconds_eig; /* stage times */
} mr_espirit_calib;

/* Stages 1-2 on the host: the calibration of data [C][M][2] on traj [M][3] for an image `matrix`.
 * o may be NULL (defaults). Errors: MR_EINVAL (fewer than 2 coils, too few samples in the k-space
 * centre, a calibration region not larger than the kernel, no signal), MR_ENOMEM, MR_EINTERNAL. */
mr_status mr_espirit_calibrate(const int64_t matrix[3], const float *traj, int64_t m, const float *data,
                               int64_t ncoils, const mr_espirit_opts *o, mr_espirit_calib *out);
void mr_espirit_calib_free(mr_espirit_calib *c); /* NULL-safe, idempotent */

/* Stage 3 on the host: maps [C][matrix][2] (unit norm, 0 where cropped) and, when eig != NULL, W's
 * dominant eigenvalue per voxel eig [matrix] — where tr W < crop (the eigenvalue is below the crop for
 * certain, and no eigenvector is computed) eig holds tr W instead, an upper bound. Uses o->crop, o->iters,
 * o->threads (NULL: defaults). */
mr_status mr_espirit_maps(const mr_espirit_calib *cal, const int64_t matrix[3], const mr_espirit_opts *o,
                          float *maps, float *eig);

/* Both stages on the host. */
mr_status mr_espirit_estimate(const int64_t matrix[3], const float *traj, int64_t m, const float *data,
                              int64_t ncoils, const mr_espirit_opts *o, float *maps, int64_t calib_out[3]);

#ifdef __cplusplus
}
#endif
#endif
