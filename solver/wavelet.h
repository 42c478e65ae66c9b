/* The orthogonal Daubechies wavelet transform as an operator (solver/linop.h), for l1-wavelet priors,
 * on the host (OpenMP over blocks of lines) or one GPU (gpu/wavelet.h). 1D, 2D and 3D: every axis of
 * length > 1 that is long enough for the filter is transformed, any matrix size.
 *
 * Filters. Daubechies' extremal-phase wavelets with N vanishing moments ("dbN", 2N taps, N = 1..10;
 * db1 is Haar): the lowpass h is the spectral factor of
 *     |H(w)|^2 = 2 cos^{2N}(w/2) P(sin^2(w/2)),   P(y) = sum_{k<N} C(N-1+k, k) y^k,
 * with the zeros of P's factor inside the unit circle (in z^{-1}), computed in double at create time
 * (roots of P by Aberth's iteration), normalised to sum h = sqrt 2; the highpass is
 * g[k] = (-1)^k h[2N-1-k]. Then sum_k h[k] h[k+2m] = delta_m, sum_k g[k] h[k+2m] = 0, and g
 * annihilates polynomials of degree < N (tests/test_wavelet.c checks all three for every order).
 *
 * One level along one axis, on a line u of even length n (indices mod n: periodic):
 *     a[i] = sum_k h[k] u[2i+k],   d[i] = sum_k g[k] u[2i+k],   i = 0 .. n/2-1
 * stored in place as [a_0 .. a_{n/2-1}, d_0 .. d_{n/2-1}]; its adjoint (= inverse) is
 *     u[2t] = sum_j h[2j] a[t-j] + g[2j] d[t-j],   u[2t+1] = sum_j h[2j+1] a[t-j] + g[2j+1] d[t-j].
 * The periodised filters of an orthonormal pair give an orthogonal n x n matrix for every even n.
 *
 * Levels. Axis a gets L_a levels: automatically the largest L with N_a >= 2N * 2^L (the coarsest band
 * keeps at least the filter length, 2N samples, of image; db4 on 128: L = 4, coarsest 8), 0 when
 * N_a < 4N or N_a = 1 (that axis is not transformed); with opts.levels = L > 0, L_a = min(L,
 * floor(log2 N_a)) on every axis of length > 1. Level j (j = 0, 1, ...) transforms, along each axis
 * with L_a > j in x, y, z order, the lines of the region R_j = [0, P_x >> min(j, L_x)) x (same y, z),
 * the approximation corner left by level j-1 (Mallat's separable layout). At least one axis must get
 * a level (else create fails with MR_EINVAL naming the matrix and the order).
 *
 * Any size. The image is zero padded at the end of each axis to P_a = ceil(N_a / 2^L_a) 2^L_a and
 * transformed periodically on the padded grid, where the transform T is orthogonal. With Z the zero
 * padding {Nx,Ny,Nz} -> {Px,Py,Pz} and S_s the circular shift by s on the padded grid
 * ((S_s u)[p] = u[(p - s) mod P], the image moves by +s):
 *     W_s = T S_s Z:  image {Nx,Ny,Nz,1} -> coefficients {Px,Py,Pz,1},   W_s^H = Z^H S_s^H T^H,
 *     W_s^H W_s = I (perfect reconstruction, ||W_s x|| = ||x||),  W_s W_s^H = the projection onto the
 *     coefficients of images supported on the shifted image box (= I, W_s unitary, when P = N).
 * The operator's normal is the identity (a copy). Shifting on the padded grid rather than the image
 * grid moves the image across the dyadic grid without joining its opposite edges: the wrap-around
 * of the periodic transform meets the zero padding, as without a shift. (docs/OPERATOR.md,
 * "Wavelets", says why padding rather than an odd-length scheme.)
 *
 * Coefficient layout ([Pz][Py][Px] complex, x fastest): after all levels the approximation band is
 * the corner [0, A_x) x [0, A_y) x [0, A_z), A_a = P_a >> L_a (info.approx); every other coefficient
 * is a detail. Along an axis with L_a levels, index p >= A_a belongs to the level j with
 * P_a >> (j+1) <= p < P_a >> j (the finest details at the end); a coefficient's band in 3D is the
 * combination of its per-axis positions, as in Mallat's layout.
 *
 * Cycle spinning. The shift is a setting of the operator, used by every later application until it
 * is changed: a prior can draw one per iteration with mr_wavelet_random_shift from a fixed seed, so
 * a reconstruction is reproducible. The l1 proximal map W_s^H soft(W_s x) is exact when P = N
 * (W_s unitary); with padding it is the usual approximation (as BART's), while an ADMM split z = W_s x
 * stays exact (W_s^H W_s = I).
 *
 * Ownership: the operator follows solver/linop.h (reference counted, one thread at a time). It keeps
 * a work vector of the padded size (host) or two (GPU). Host arrays passed to the functions below
 * are borrowed for the call. */
#ifndef MR_WAVELET_H
#define MR_WAVELET_H

#include <stdint.h>

#include "../base/status.h"
#include "linop.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MR_WAVELET_MAX_ORDER 10

typedef struct {
    int order;  /* vanishing moments N of dbN (2N taps), 1..MR_WAVELET_MAX_ORDER; default 4 */
    int levels; /* 0 (default): automatic per axis (above); > 0: that many on every axis of length > 1,
                   at most floor(log2 N_a) */
} mr_wavelet_opts;

void mr_wavelet_opts_default(mr_wavelet_opts *o);

typedef struct {
    int order, taps;    /* N and 2N */
    int levels[3];      /* L_a per axis; 0: not transformed */
    int max_levels;     /* max_a L_a */
    int64_t matrix[3];  /* the image {Nx, Ny, Nz} */
    int64_t padded[3];  /* the coefficient grid {Px, Py, Pz} */
    int64_t approx[3];  /* the approximation band [0, A_a) per axis, A_a = P_a >> L_a */
    int64_t coeffs;     /* Px Py Pz: the codomain size */
} mr_wavelet_info;

/* The layout the operator would have (no operator made): MR_EINVAL naming the order, the levels or
 * the matrix when they are out of range or no axis can be transformed. o NULL: defaults. */
mr_status mr_wavelet_layout(const int64_t matrix[3], const mr_wavelet_opts *o, mr_wavelet_info *info);

/* The analysis lowpass h of dbN in double: lo[0 .. 2N-1]. MR_EINVAL for N outside 1..MAX_ORDER. */
mr_status mr_wavelet_filter(int order, double *lo);

/* W_0 (no shift yet) on the backend: image {Nx,Ny,Nz,1} -> coefficients {Px,Py,Pz,1}. o NULL: defaults.
 * On a GPU backend the work vectors are on the device and the applications stay there. */
mr_status mr_linop_wavelet_create(mr_linop **out, mr_backend *be, const int64_t matrix[3], const mr_wavelet_opts *o);

/* The layout of a wavelet operator; MR_EINVAL when w is not one (this holds for every function below). */
mr_status mr_linop_wavelet_info(const mr_linop *w, mr_wavelet_info *info);

/* The shift s of W_s for the following applications; any integers (taken mod P_a); {0,0,0} undoes it. */
mr_status mr_linop_wavelet_set_shift(mr_linop *w, const int64_t shift[3]);
/* The current shift, each in [0, P_a). */
mr_status mr_linop_wavelet_get_shift(const mr_linop *w, int64_t shift[3]);

/* host_mask [Pz][Py][Px] (info.coeffs floats): 1 on detail coefficients, 0 on the approximation band,
 * so an l1 proximal map can leave the coarsest band unthresholded (copy it to the device with
 * mr_backend_upload where the prior runs there). */
mr_status mr_linop_wavelet_detail_mask(const mr_linop *w, float *host_mask);

/* A cycle-spinning shift: shift[a] uniform in [0, 2^levels[a]) (0 on axes not transformed), drawn from
 * *state with splitmix64 (the same state gives the same sequence on every platform; seed it with any
 * value, e.g. the run's seed). */
void mr_wavelet_random_shift(uint64_t *state, const mr_wavelet_info *info, int64_t shift[3]);

#ifdef __cplusplus
}
#endif
#endif
