/* Internal to solver/ (not an interface for other layers): what the exact NUDFT operator
 * (linop_nudft.c) and the NUFFT operator (linop_nufft.c) share, so that both keep one contract
 * (solver/linop.h): the checks of their input, the per-sample factors
 *
 *   s_m = sqrt(w_m) Phi_m / N,   qw_m = w_m Phi_m^2 / N^2        (Phi: the basis transform, linop.h)
 *
 * and the Toeplitz normal with its Q: taken from the store (mr_nudft_opts.q_store) when it holds Q for
 * the key (trajectory, Q weights, grid, basis, engine text), else computed by the operator's engine and
 * then given to the store (on a GPU backend the copy back and the save run in a background thread,
 * joined by mr_qnormal_release). */
#ifndef MR_LINOP_QNORMAL_H
#define MR_LINOP_QNORMAL_H

#include <stdint.h>

#include "linop.h"
#include "nufft_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* matrix (mr_matrix_check), 1 <= M <= MR_MAX_SAMPLES, 1 <= C <= MR_MAX_COILS, the basis, every trajectory
 * coordinate finite, every weight finite and >= 0 (weights may be NULL). MR_EINVAL naming the value. */
mr_status mr_nudft_check_input(const int64_t matrix[3], const float *traj, int64_t m, const float *weights,
                               int64_t ncoils, mr_basis basis);

/* s [M] and qw [M] as above (host arrays; weights NULL: all ones). */
void mr_nudft_sample_factors(const int64_t matrix[3], const float *traj, int64_t m, const float *weights,
                             mr_basis basis, float *s, float *qw);

typedef struct mr_q_saver mr_q_saver;

/* The normal's state inside an operator's data: be (borrowed: the operator holds the reference), gctx,
 * matrix, m and c set by the operator; the rest zero-initialised and filled by mr_qnormal_make. */
typedef struct {
    mr_backend *be;
    struct mr_gpu_ctx *gctx; /* NULL on the host */
    int64_t matrix[3], m, c;
    mr_q_saver *saver;       /* a background save of Q to the store */
    float *qkeep;            /* the device Q the saver reads */
    mr_linop *tp;            /* the Toeplitz normal */
} mr_qnormal;

/* The start of every encoding operator's create: the input checked (mr_nudft_check_input), the factors
 * *s and *qw (malloc'd [M] each, the caller frees them) and d's be (borrowed), gctx, matrix, m and c set.
 * MR_EINVAL / MR_ENOMEM naming the value. */
mr_status mr_qnormal_begin(mr_qnormal *d, mr_backend *be, const int64_t matrix[3], const float *traj, int64_t m,
                           const float *weights, int64_t ncoils, mr_basis basis, float **s, float **qw);

/* The engine's Q: q (backend memory, [size(mr_grid_q(matrix))][2]) from the host Q weights qw [M]. */
typedef mr_status (*mr_q_compute_fn)(void *ctx, const float *qw, float *q);

/* Q from the store or compute(ctx, qw, q), then d->tp (the Toeplitz normal of d->c coils). engine: the
 * store key's engine text (what computed Q, precisely enough that equal texts give equal bits). Fills
 * info's q_seconds, q_pairs, q_source and fft_plan_seconds. traj [M][3], qw [M]: host, borrowed. */
mr_status mr_qnormal_make(mr_qnormal *d, const float *traj, const float *qw, mr_basis basis, const char *engine,
                          mr_q_store *store, mr_q_compute_fn compute, void *ctx, mr_nudft_info *info);

/* The operator (mr_linop_create(out, d->be, dom, cod, ops, data)) with the model of its normal (linop.h): the
 * Toeplitz normal's circulant approximation {tp, a = 1} when it has a Toeplitz normal. */
mr_status mr_qnormal_linop(const mr_qnormal *d, mr_linop **out, const int64_t dom[4], const int64_t cod[4],
                           const mr_linop_ops *ops, void *data);

/* Join a background save, free the Q it kept and the Toeplitz normal. */
void mr_qnormal_release(mr_qnormal *d);

/* ---- the NUFFT operator's choices (linop_nufft.c), for the cost model of solver/encoding.c ---- */
/* The parameters of grid g on the host (gpu 0) or a GPU (gpu 1: the GPU's costs, a kernel no wider than
 * MR_GPU_NUFFT_MAX_WIDTH). */
mr_status mr_nufft_op_params(int gpu, const mr_grid *g, int64_t m, const mr_nufft_opts *o, mr_nufft_params *p);
/* The operator's working sets estimated from the image and Q grids' parameters: *dev on a GPU (image plan,
 * per-sample vectors, the larger of Q's plan + Q and Q + the Toeplitz normal), *host otherwise. */
void mr_nufft_op_bytes(int gpu, const int64_t matrix[3], int64_t m, const mr_nufft_params *pi,
                       const mr_nufft_params *pq, int fast_normal, int64_t *host, int64_t *dev);

#ifdef __cplusplus
}
#endif
#endif
