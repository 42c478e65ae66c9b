/* Eigen-decomposition of small dense Hermitian matrices, in float64, without LAPACK: the noise
 * estimator's local Gram matrices (solver/noise_est.h), ESPIRiT's calibration Gram matrix
 * (solver/espirit.h) and the coil covariance of coil compression (solver/coil_compress.h).
 *
 * Method: Householder reduction of A to a Hermitian tridiagonal matrix, A = Q T Q^H (Q a product
 * of n - 2 reflectors I - tau v v^H); a diagonal unitary D makes T real, T = D T' D^H; the real
 * symmetric tridiagonal T' = Z L Z^T by the implicit QL algorithm with Wilkinson shifts (Bowdler,
 * Martin, Reinsch & Wilkinson, Numer. Math. 11:293, 1968); the eigenvectors of A are Q D Z.
 * Cost about 9 n^3 real flops with all eigenvectors; the reduction and the back-transformation run
 * on OpenMP threads for large n.
 *
 * Complex arrays are (re, im) double pairs, row-major: a[2 (i n + j)] is Re A_ij. Borrowed for the
 * duration of the call. */
#ifndef MR_HERM_EIG_H
#define MR_HERM_EIG_H

#include <stdint.h>

#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* All eigenvalues w[n] (ascending) of the Hermitian a [n][n] (both triangles read; the matrix is
 * taken as (A + A^H)/2) and, when vecs != NULL, the eigenvectors of the `nvec` largest
 * eigenvalues (0 <= nvec <= n; nvec = n: all): vecs [nvec][n] complex, row r the unit eigenvector of
 * w[n - nvec + r] (so rows ascend like w). a is destroyed. threads <= 0: all cores.
 * MR_EINVAL (n < 1, non-finite entries), MR_ENOMEM, MR_EINTERNAL (no convergence: cannot happen for
 * finite input in practice). */
mr_status mr_herm_eig(int64_t n, double *a, double *w, double *vecs, int64_t nvec, int threads);

/* The same, with the number of eigenvectors chosen from the eigenvalues: count(w, n, ctx) sees all the
 * eigenvalues (ascending) and returns how many of the largest to compute (0..n); vecs [n][n] must have
 * room for all; *nvec receives the count. The back-transformation costs 8 n^2 flops per vector, so
 * asking only for what is kept saves up to a third of the work. */
typedef int64_t (*mr_herm_eig_count_fn)(const double *w, int64_t n, void *ctx);
mr_status mr_herm_eig_top(int64_t n, double *a, double *w, double *vecs, mr_herm_eig_count_fn count, void *ctx,
                          int64_t *nvec, int threads);

#ifdef __cplusplus
}
#endif
#endif
