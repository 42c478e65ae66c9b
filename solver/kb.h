/* Convolution onto a periodic Cartesian grid and back: the spreading/interpolation engine shared by
 * gridding (solver/gridding.c) and Pipe-Menon density compensation (solver/dcf.c).
 *
 * A sample at k (cycles/FOV) sits at grid coordinate u_a = k_a * scale[a] on axis a; grid point j
 * (0 <= j < n[a], periodic) receives value * prod_a c(u_a - j_a) where c is the kernel:
 *   MR_KB_TRIANGLE (width 2):      c(x) = 1 - |x|                            (bilinear gridding)
 *   MR_KB_KAISER (width W, beta):  c(x) = I0(beta sqrt(1 - (2x/W)^2)) / (W sinh(beta)/beta)
 * Both are normalised to unit integral, so that sum_j c(u - j) ~= 1 and the Fourier transform at 0
 * is 1. Axes with n[a] == 1 (the z axis of a 2D scan) are inactive: weight 1, no spreading.
 *
 * Spreading is race-free and deterministic: samples are bucketed by the slowest active axis into an
 * even number of slabs at least W rows thick; even slabs run in parallel, then odd slabs (a sample
 * only touches its own slab and the next one). The result does not depend on the thread count. */
#ifndef MR_KB_H
#define MR_KB_H

#include <stdint.h>

#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { MR_KB_TRIANGLE = 0, MR_KB_KAISER = 1 } mr_kb_kernel;

/* Beatty, Nishimura & Pauly 2005: beta = pi sqrt((W/sigma)^2 (sigma - 1/2)^2 - 0.8). */
double mr_kb_beta(int width, double sigma);

/* The Fourier transform int c(t) e^{-i 2 pi x t} dt of the normalised Kaiser-Bessel kernel above:
 *   [sinh(z)/z] / [sinh(beta)/beta],  z = sqrt(beta^2 - (pi W x)^2)  (sin(|z|)/|z| when imaginary). */
double mr_kb_ft(double x, int width, double beta);

/* The normalised Kaiser-Bessel kernel c(x) above at x (grid cells; 0 for |x| > W/2). */
double mr_kb_value(double x, int width, double beta);

/* An FFT-friendly even size >= n (factors 2, 3, 5, 7 only); 1 stays 1. */
int64_t mr_kb_fft_size(int64_t n);

typedef struct mr_kb_plan mr_kb_plan;

/* Plan spreading of m samples traj [M][3] (copied, scaled and sorted) onto a grid n[3] (x fastest:
 * index (jz*ny + jy)*nx + jx). beta is ignored for MR_KB_TRIANGLE (width must then be 2).
 * threads <= 0: all cores. Fails with MR_EINVAL (naming the sample) on a non-finite or far out of
 * range coordinate. *out owned by the caller (mr_kb_plan_destroy). */
mr_status mr_kb_plan_create(mr_kb_plan **out, const int64_t n[3], const double scale[3], mr_kb_kernel kernel,
                            int width, double beta, const float *traj, int64_t m, int threads);
void mr_kb_plan_destroy(mr_kb_plan *p);

/* grid := sum_m vals_m c(u_m - j). ncomp = 2: vals complex [M][2], grid complex [n][2];
 * ncomp = 1: real. grid is overwritten (zeroed first). vals are in the caller's sample order. */
void mr_kb_spread(const mr_kb_plan *p, const float *vals, int ncomp, float *grid);

/* vals_m := sum_j grid_j c(u_m - j)   (the adjoint of mr_kb_spread), same layouts. */
void mr_kb_interp(const mr_kb_plan *p, const float *grid, int ncomp, float *vals);

/* Number of threads the plan uses. */
int mr_kb_plan_threads(const mr_kb_plan *p);

/* OpenMP thread count for a `threads` option: <= 0 means all cores (omp_get_max_threads()). */
int mr_kb_threads(int threads);

#ifdef __cplusplus
}
#endif
#endif
