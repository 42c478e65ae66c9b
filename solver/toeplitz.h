/* The normal operator F^H W F of a non-Cartesian scan by Toeplitz embedding:
 *
 *   y_n = sum_n' Q(r_n - r_n') x_n'   (n, n' on the N = Nx*Ny*Nz image grid)
 *
 * computed as a circular convolution on the 2N grid (2Nx x 2Ny [x 2Nz]; axes with N_a = 1 stay 1):
 * zero-pad x, multiply its FFT by the FFT of c (Q arranged circulantly: c[j] = Q at offset j for
 * j < N_a and at offset j - 2N_a for j > N_a, per axis; c = 0 where any j_a = N_a, an offset that
 * never enters the cropped result), inverse FFT, crop. Q comes on mr_grid_q (io/kspace.h), whose
 * index j sits at offset j - N_a. FFTW single precision, FFTW_ESTIMATE plans (deterministic),
 * transforms pruned to the lines that are not all zeros on input or are kept on output. Planner
 * calls run inside `#pragma omp critical(mr_fftw_planner)`, like every FFTW planner call in mrirecon.
 *
 * Ownership: create() copies what it needs from q (borrowed for the call); *out belongs to the caller
 * (mr_toeplitz_destroy). An mr_toeplitz holds work buffers: apply it from one thread at a time. */
#ifndef MR_TOEPLITZ_H
#define MR_TOEPLITZ_H

#include <stdint.h>

#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mr_toeplitz mr_toeplitz;

/* matrix {Nx, Ny, Nz}; q [mr_grid_size(mr_grid_q(matrix))][2]; threads <= 0: all cores. */
mr_status mr_toeplitz_create(mr_toeplitz **out, const int64_t matrix[3], const float *q, int threads);
void mr_toeplitz_destroy(mr_toeplitz *t);

/* y = sum_n' Q(r_n - r_n') x_n'; x, y [Nz][Ny][Nx][2]; x == y is allowed. */
mr_status mr_toeplitz_apply(mr_toeplitz *t, const float *x, float *y);

/* The same for `batch` consecutive images [batch][Nz][Ny][Nx][2] (the coils of SENSE). Grids that one
 * application runs on one thread (see toeplitz.c) give each thread its own images (work buffers made
 * on first use); larger grids are applied one image after the other. Every image is computed by the
 * same code whatever thread takes it: the bits do not depend on the thread count. */
mr_status mr_toeplitz_apply_batch(mr_toeplitz *t, int64_t batch, const float *x, float *y);

#ifdef __cplusplus
}
#endif
#endif
