/* The device side of the field-corrected operators (solver/linop_field.h), behind a plain C interface:
 * gpu/field.cu; without CUDA gpu/field_stub.c provides the same functions, which fail with MR_ENODEV.
 *
 *  - the exact sums with the field term on the CUDA cores (the maths of solver/nudft.h
 *    mr_nudft_field_*): one thread per voxel (adjoint) or per sample (forward), the other side streamed
 *    through shared memory in tiles; the phase k.r as exact 32-bit fixed-point turns (integer arithmetic
 *    modulo one turn, as gpu/nudft.cu), the field's omega t in float turns reduced to [-1/2, 1/2], their
 *    sum's sin/cos by sincospif; sums of a tile in float, across tiles in double;
 *  - the element-wise complex products of the segmented model;
 *  - its multi-kernel Toeplitz normal with cuFFT (complex spectra).
 *
 * Vectors are interleaved complex float32 in device memory, n counts complex elements; everything runs on
 * the context's stream (gpu/gpu_ops.h). Ownership: objects belong to the caller (destroy) and borrow the
 * context, which must outlive them. */
#ifndef MR_GPU_FIELD_H
#define MR_GPU_FIELD_H

#include <stdint.h>

#include "../base/status.h"
#include "gpu_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mr_gpu_field mr_gpu_field;

/* Upload the trajectory [M][3] (cycles/FOV), the times [M] (s) and the field map [Nz][Ny][Nx] (Hz) (host,
 * copied) for the image grid of matrix. */
mr_status mr_gpu_field_create(mr_gpu_field **out, mr_gpu_ctx *c, const int64_t matrix[3], const float *traj,
                              const float *time, const float *fieldmap, int64_t m);
/* y[m] = sum_v x_v e^{-i2pi (k_m.r_v + f_v t_m)} (raw, no weights); x [N], y [M]. */
mr_status mr_gpu_field_forward(mr_gpu_field *p, const float *d_x, float *d_y);
/* x[v] = sum_m a_m e^{+i2pi (k_m.r_v + f_v t_m)}; a [M], x [N]. */
mr_status mr_gpu_field_adjoint(mr_gpu_field *p, const float *d_a, float *d_x);
void mr_gpu_field_destroy(mr_gpu_field *p); /* NULL is fine */

/* out[b][j] = v'[j] in[b][j] (accumulate: +=) for b < batch, j < n, v' = v or conj(v) (conj = 1); in == out
 * allowed without accumulate. */
mr_status mr_gpu_field_cmul(mr_gpu_ctx *c, int64_t n, int64_t batch, const float *v, int conj, int accumulate,
                            const float *in, float *out);

/* The normal of the segmented model (solver/linop_field_internal.h field_tp, same maths): q[k] the nk
 * device Q grids [mr_grid_size(mr_grid_q(matrix))][2], coef device [L][N][2], kidx/kconj host [L][L]; all
 * borrowed for the call (the spectra and the coefficients are copied). */
typedef struct mr_gpu_field_tp mr_gpu_field_tp;
mr_status mr_gpu_field_tp_create(mr_gpu_field_tp **out, mr_gpu_ctx *c, const int64_t matrix[3], int L, int nk,
                                 const int *kidx, const int *kconj, const float *const *q, const float *coef);
/* y_c = sum_{l,l'} conj(C_l) T_{l l'} (C_l' x_c) for ncoils consecutive images; x != y. */
mr_status mr_gpu_field_tp_apply(mr_gpu_field_tp *t, int64_t ncoils, const float *d_x, float *d_y);
void mr_gpu_field_tp_destroy(mr_gpu_field_tp *t); /* NULL is fine */

#ifdef __cplusplus
}
#endif
#endif
