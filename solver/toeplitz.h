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

/* The circulant approximation of the normal, a preconditioner (solver/cg.h) of the systems that contain it:
 * C = T. Chan's optimal circulant of the (multilevel) Toeplitz matrix T of Q on the N grid, the circulant
 * nearest to T in the Frobenius norm (Chan 1988; per axis c_m = ((N - m) Q(m) + m Q(m - N)) / N, m in [0,
 * N)), positive semi-definite like T; its eigenvalues are computed once in create, by the same line passes as
 * the applications (bits independent of the thread count). Then
 *
 *   z = (a C + g G + s I)^-1 r,   G = the periodic negative Laplacian, eigenvalues sum_a 4 sin^2(pi k_a / N_a)
 *
 * (G stands for R^H R of the finite differences, whose Neumann boundary it ignores), by one forward and one
 * inverse N-grid DFT; each denominator at least MR_TOEPLITZ_CIRC_FLOOR times a C's eigenvalue at frequency 0 (the
 * sum of the weights, the largest for a sampling densest at the centre) + 12 g + s, so that a frequency T
 * does not sample stays finite. a, g, s >= 0, not all 0; r, z [Nz][Ny][Nx][2]; z == r allowed. */
#define MR_TOEPLITZ_CIRC_FLOOR 1e-6
mr_status mr_toeplitz_circulant_solve(mr_toeplitz *t, double a, double g, double s, const float *r, float *z);

/* Bytes of one Toeplitz normal of `matrix` beside Q (host or GPU): the 2N work grid (complex) and spectrum (real),
 * the circulant approximation's eigenvalues (real, N grid) and its transform's work space (complex, N grid). */
static inline int64_t mr_toeplitz_bytes(const int64_t matrix[3])
{
    int64_t nn = 1, nq = 1;
    for (int a = 0; a < 3; a++) {
        nn *= matrix[a];
        nq *= matrix[a] > 1 ? 2 * matrix[a] : 1;
    }
    return nq * 8 + nq * 4 + nn * 4 + nn * 8;
}

#ifdef __cplusplus
}
#endif
#endif
