/* A small table of vector operations over complex float arrays, so that solvers (solver/cg.c) are
 * written once and run on host or device memory: the solver only ever touches its vectors through
 * this table.
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

#include <stdint.h>

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
    void (*axpy)(void *ctx, int64_t n, float *y, double a, const float *x); /* y = y + a x */
    void (*xpay)(void *ctx, int64_t n, float *y, double a, const float *x); /* y = x + a y */
    void (*scale)(void *ctx, int64_t n, float *x, double a);               /* x = a x */
    /* Copies between this table's memory and host memory (n complex elements); MR_OK or the failure. */
    mr_status (*to_host)(void *ctx, int64_t n, float *host_dst, const float *src);
    mr_status (*from_host)(void *ctx, int64_t n, float *dst, const float *host_src);
    /* sum_i (|x_i| - |t_i|)^2 in double: the squared error of magnitude images (PSNR monitor). */
    double (*mag_dist2)(void *ctx, int64_t n, const float *x, const float *t);
    /* The first failure of an asynchronous (device) operation since the table was made (its message
     * recorded with mr_error); NULL for tables that cannot fail that way (host). */
    mr_status (*status)(void *ctx);
} mr_vecops;

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
