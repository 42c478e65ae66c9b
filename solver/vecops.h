/* A small table of vector operations over complex float arrays, so that solvers (solver/cg.c,
 * solver/fista.c, solver/admm.c) and proximal maps (solver/prox.h) are written once and run on host
 * or device memory: they only ever touch their vectors through this table. The element-wise maps and
 * reductions (axpy, soft-thresholding, group norms, ...) are defined once in base/ewise.h and run by
 * the table's ewise/ewise_reduce entries; mr_vec_axpy and friends below are shorthands for them.
 *
 * Vectors are interleaved complex float32 (re, im); n counts complex elements. Scalars are real
 * (double): CG on a Hermitian system only needs real step lengths. Accumulations (dot, norm) are
 * done in double. All pointers are borrowed for the call; vectors allocated with alloc() are owned
 * by the caller and released with release(). ctx is passed back to every function (a stream, a
 * thread count) and is borrowed for the lifetime of the table.
 *
 * Device tables (gpu/, through solver/backend.h) run the functions asynchronously on one stream;
 * dot, norm, mag_dist2 and the host copies wait for it. A device failure inside a function that
 * returns nothing is kept by the table and reported by status(). */
#ifndef MR_VECOPS_H
#define MR_VECOPS_H

#include <stddef.h>
#include <stdint.h>

#include "../base/ewise.h"
#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    void *ctx;
    /* A new vector of n complex elements, not initialised; NULL when out of memory. */
    float *(*alloc)(void *ctx, int64_t n);
    void (*release)(void *ctx, float *x); /* NULL is fine */
    void (*zero)(void *ctx, int64_t n, float *x);                          /* x = 0 */
    void (*copy)(void *ctx, int64_t n, float *dst, const float *src);      /* dst = src */
    void (*dot)(void *ctx, int64_t n, const float *x, const float *y, double out[2]); /* sum conj(x) y */
    double (*norm)(void *ctx, int64_t n, const float *x);                  /* sqrt(sum |x|^2) */
    /* The map op of base/ewise.h on n elements (groups: n groups of args->groups elements each):
     * out = op(x, y); args and its weights are borrowed for the call (the weights in this table's
     * memory). */
    void (*ewise)(void *ctx, mr_ew_op op, int64_t n, float *out, const float *x, const float *y,
                  const mr_ew_args *args);
    /* The reduction op of base/ewise.h over n elements (or groups), in double. */
    double (*ewise_reduce)(void *ctx, mr_ewr_op op, int64_t n, const float *x, const mr_ew_args *args);
    /* Copies between this table's memory and host memory (n complex elements); MR_OK or the failure. */
    mr_status (*to_host)(void *ctx, int64_t n, float *host_dst, const float *src);
    mr_status (*from_host)(void *ctx, int64_t n, float *dst, const float *host_src);
    /* sum_i (|x_i| - |t_i|)^2 in double: the squared error of magnitude images (PSNR monitor). */
    double (*mag_dist2)(void *ctx, int64_t n, const float *x, const float *t);
    /* The first failure of an asynchronous (device) operation since the table was made (its message
     * recorded with mr_error); NULL for tables that cannot fail that way (host). */
    mr_status (*status)(void *ctx);
} mr_vecops;

/* Shorthands for the element-wise maps of every table. */
static inline void mr_vec_axpby(const mr_vecops *v, int64_t n, float *out, double a, const float *x, double b,
                                const float *y)
{
    mr_ew_args args = {a, b, 0.0, NULL, 1};
    v->ewise(v->ctx, MR_EW_AXPBY, n, out, x, y, &args);
}
/* y = y + a x */
static inline void mr_vec_axpy(const mr_vecops *v, int64_t n, float *y, double a, const float *x)
{
    mr_vec_axpby(v, n, y, a, x, 1.0, y);
}
/* y = x + a y */
static inline void mr_vec_xpay(const mr_vecops *v, int64_t n, float *y, double a, const float *x)
{
    mr_vec_axpby(v, n, y, 1.0, x, a, y);
}
/* x = a x */
static inline void mr_vec_scale(const mr_vecops *v, int64_t n, float *x, double a)
{
    mr_vec_axpby(v, n, x, a, x, 0.0, NULL);
}

/* The host implementation: OpenMP over elements, double accumulation. ctx holds the thread
 * count (threads <= 0: the OpenMP default). */
typedef struct {
    int threads;
} mr_vecops_cpu_ctx;

/* Fill `ops` with the host functions; `ctx` is filled too and borrowed by ops (must outlive it). */
void mr_vecops_cpu_init(mr_vecops *ops, mr_vecops_cpu_ctx *ctx, int threads);

#ifdef __cplusplus
}
#endif
#endif
