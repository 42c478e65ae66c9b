/* The orthogonal wavelet transform of solver/wavelet.h on the device, behind a plain C interface
 * (gpu/wavelet.cu; without CUDA gpu/wavelet_stub.c, whose functions fail with MR_ENODEV). The maths,
 * the padded grid, the shift and the coefficient layout are solver/wavelet.h's; this header only
 * carries the geometry across.
 *
 * Every level and axis is one kernel launch on the context's stream (gpu/gpu_ops.h): one pass that
 * reads its region once and writes it once (out of place, between two work vectors of the padded
 * size), the zero padding and the circular shift folded into the first forward pass and the crop and
 * the inverse shift into the last adjoint pass. Nothing crosses to the host; the functions return
 * after queuing (a failure shows in mr_gpu_ctx_status).
 *
 * Ownership: *out of create belongs to the caller (mr_gpu_wavelet_destroy) and borrows the context c,
 * which must outlive it. Vectors are device memory borrowed for the call. One thread at a time. */
#ifndef MR_GPU_WAVELET_H
#define MR_GPU_WAVELET_H

#include <stdint.h>

#include "../base/status.h"
#include "gpu_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest filter: Daubechies order 10 (solver/wavelet.h MR_WAVELET_MAX_ORDER). */
#define MR_WAVELET_MAX_TAPS 20

/* What the transform needs to know, filled by solver/wavelet.c. */
typedef struct {
    int64_t matrix[3]; /* the image {Nx, Ny, Nz} */
    int64_t padded[3]; /* the coefficient grid {Px, Py, Pz}: P_a a multiple of 2^levels[a], P_a >= N_a */
    int levels[3];     /* per axis, 0: not transformed */
    int taps;          /* filter length 2..MR_WAVELET_MAX_TAPS, even */
    float lo[MR_WAVELET_MAX_TAPS]; /* analysis lowpass h[k] */
    float hi[MR_WAVELET_MAX_TAPS]; /* analysis highpass g[k] = (-1)^k h[taps-1-k] */
} mr_wavelet_geom;

typedef struct mr_gpu_wavelet mr_gpu_wavelet;

/* Two work vectors of the padded size on c's device; MR_ENOMEM (named) when they do not fit. */
mr_status mr_gpu_wavelet_create(mr_gpu_wavelet **out, mr_gpu_ctx *c, const mr_wavelet_geom *g);
void mr_gpu_wavelet_destroy(mr_gpu_wavelet *w); /* NULL is fine */
/* y = W S_s Z x: x the image [Nz][Ny][Nx][2], y the coefficients [Pz][Py][Px][2]; shift in [0, P_a). */
mr_status mr_gpu_wavelet_forward(mr_gpu_wavelet *w, const int64_t shift[3], const float *x, float *y);
/* x = Z^H S_s^H W^H y. */
mr_status mr_gpu_wavelet_adjoint(mr_gpu_wavelet *w, const int64_t shift[3], const float *y, float *x);

#ifdef __cplusplus
}
#endif
#endif
