/* The non-uniform FFT on the CPU: the two sums of solver/nudft.h, approximated to a requested
 * tolerance in O(N log N + M w^d) instead of O(N M):
 *
 *   type 1 (adjoint):  out[v] = sum_m a_m exp(+i 2 pi k_m . r_v)     over the voxels v of an mr_grid
 *   type 2 (forward):  out[m] = sum_v x_v exp(-i 2 pi k_m . r_v)
 *
 * r_v runs over the grid (base/grid.h: index i at (i - center) / scale per axis; the image grid or the
 * 2N grid of Q), traj is [M][3] cycles/FOV (any values: the sums are periodic in k with the period
 * scale), complex arrays are interleaved (re, im). 1D, 2D and 3D are grids with n = 1 on the unused
 * axes. Method (docs/NUFFT.md): spread the samples onto a fine grid sigma times larger with the kernel
 * of solver/nufft_kernel.h, FFT, divide by the kernel's transform (type 1); the reverse for type 2.
 * Float32 for tolerances down to MR_NUFFT_F32_MIN_TOL, float64 below (to MR_NUFFT_TOL_MIN).
 *
 * Plan once (mr_nufft_create: the kernel's parameters and fit, the samples binned and sorted, the
 * deconvolution factors, the FFTW plan and the fine grid), execute many times; one call transforms
 * several coils (arrays [C][...] one after the other) with the sorting shared. Spreading is race-free
 * and deterministic (slabs of the slowest axis, even ones then odd ones, as solver/kb.h): the result
 * does not depend on the thread count.
 *
 * Ownership: create copies what it needs (traj borrowed for the call); *out belongs to the caller
 * (mr_nufft_destroy). A plan holds its fine grid: one call at a time. */
#ifndef MR_NUFFT_H
#define MR_NUFFT_H

#include <stdint.h>

#include "../base/grid.h"
#include "../base/status.h"
#include "nufft_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mr_nufft mr_nufft;

/* Plan transforms between the m samples traj [M][3] and the voxels of g. o NULL: defaults
 * (mr_nufft_opts_default). MR_EINVAL naming the sample for a non-finite coordinate or one farther than
 * 1e6 periods; MR_ENOMEM naming the bytes when the buffers cannot be had. */
mr_status mr_nufft_create(mr_nufft **out, const mr_grid *g, const float *traj, int64_t m, const mr_nufft_opts *o);
void mr_nufft_destroy(mr_nufft *p); /* NULL is fine */

const mr_nufft_params *mr_nufft_get_params(const mr_nufft *p); /* borrowed for the plan's lifetime */
int64_t mr_nufft_samples(const mr_nufft *p);
/* Bytes the plan holds (fine grid, sorted samples, factors). */
int64_t mr_nufft_bytes(const mr_nufft *p);

/* Type 1 for `ncoils` weight vectors: a is complex [C][M][2] or, with real_weights, real [C][M];
 * out [C][size(g)][2]. The _f64 forms take and give double arrays (the plan's precision is what it is:
 * a float32 plan computes in float32 whatever the arrays). */
mr_status mr_nufft_type1(mr_nufft *p, int64_t ncoils, const float *a, int real_weights, float *out);
mr_status mr_nufft_type1_f64(mr_nufft *p, int64_t ncoils, const double *a, int real_weights, double *out);

/* Type 2 for `ncoils` images x [C][size(g)][2]: out [C][M][2]. */
mr_status mr_nufft_type2(mr_nufft *p, int64_t ncoils, const float *x, float *out);
mr_status mr_nufft_type2_f64(mr_nufft *p, int64_t ncoils, const double *x, double *out);

/* ---- spreading and interpolation alone (no FFT, no deconvolution), with a kernel of the caller's: the
 * engine above on a periodic grid n[3] (x fastest) where sample k sits at u_a = k_a cells_per_cycle[a]; the
 * kernel fn of `width` cells is fitted by polynomials like the NUFFT's (to 1e-7 of its peak). Float32, real
 * values. The Pipe-Menon density compensation (solver/dcf.c) iterates these. */
mr_status mr_nufft_spreader_create(mr_nufft **out, const int64_t n[3], const double cells_per_cycle[3], int width,
                                   mr_nufft_kernel_fn fn, void *ctx, const float *traj, int64_t m, int threads);
/* grid [n] := sum_m v_m c(u_m - j) (zeroed first); v [M] in the caller's sample order. */
mr_status mr_nufft_spread_real(mr_nufft *p, const float *v, float *grid);
/* v_m := sum_j grid_j c(u_m - j), the adjoint of mr_nufft_spread_real. */
mr_status mr_nufft_interp_real(mr_nufft *p, const float *grid, float *v);

/* Seconds the last call spent spreading or interpolating, and in the FFT with the deconvolution (fused into
 * its passes; deconv_s is 0); diagnostics. */
void mr_nufft_last_times(const mr_nufft *p, double *spread_s, double *fft_s, double *deconv_s);

#ifdef __cplusplus
}
#endif
#endif
