#include "vecops.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Below this many elements the loops run on one thread: the fork/join costs more than the work. */
#define MR_VEC_PARALLEL_MIN 32768

static int nthreads(void *ctx, int64_t n)
{
    const mr_vecops_cpu_ctx *c = ctx;
    if (n < MR_VEC_PARALLEL_MIN)
        return 1;
    return c->threads > 0 ? c->threads : omp_get_max_threads();
}

static float *cpu_alloc(void *ctx, int64_t n)
{
    (void)ctx;
    return malloc((size_t)(n > 0 ? n : 1) * 2 * sizeof(float));
}

static void cpu_release(void *ctx, float *x)
{
    (void)ctx;
    free(x);
}

static void cpu_zero(void *ctx, int64_t n, float *x)
{
    (void)ctx;
    memset(x, 0, (size_t)n * 2 * sizeof(float));
}

static void cpu_copy(void *ctx, int64_t n, float *dst, const float *src)
{
    (void)ctx;
    if (dst != src)
        memcpy(dst, src, (size_t)n * 2 * sizeof(float));
}

static void cpu_dot(void *ctx, int64_t n, const float *x, const float *y, double out[2])
{
    double re = 0, im = 0;
#pragma omp parallel for num_threads(nthreads(ctx, n)) reduction(+ : re, im) schedule(static)
    for (int64_t i = 0; i < n; i++) {
        double xr = x[2 * i], xi = x[2 * i + 1], yr = y[2 * i], yi = y[2 * i + 1];
        re += xr * yr + xi * yi; /* conj(x) y */
        im += xr * yi - xi * yr;
    }
    out[0] = re;
    out[1] = im;
}

static double cpu_norm(void *ctx, int64_t n, const float *x)
{
    double s = 0;
#pragma omp parallel for num_threads(nthreads(ctx, n)) reduction(+ : s) schedule(static)
    for (int64_t i = 0; i < 2 * n; i++)
        s += (double)x[i] * (double)x[i];
    return sqrt(s);
}

/* The maps and reductions of base/ewise.h; a group map has n groups of args->groups elements. */
static void cpu_ewise(void *ctx, mr_ew_op op, int64_t n, float *out, const float *x, const float *y,
                      const mr_ew_args *args)
{
    const int64_t work = op == MR_EW_GROUP_SOFT || op == MR_EW_GROUP_PROJ ? n * args->groups : n;
#pragma omp parallel for num_threads(nthreads(ctx, work)) schedule(static)
    for (int64_t i = 0; i < n; i++)
        mr_ew_apply(op, i, n, out, x, y, args);
}

static double cpu_ewise_reduce(void *ctx, mr_ewr_op op, int64_t n, const float *x, const mr_ew_args *args)
{
    double s = 0;
    const int64_t work = op == MR_EWR_GROUP_L2 ? n * args->groups : n;
#pragma omp parallel for num_threads(nthreads(ctx, work)) reduction(+ : s) schedule(static)
    for (int64_t i = 0; i < n; i++)
        s += mr_ew_term(op, i, n, x, args);
    return s;
}

static mr_status cpu_to_host(void *ctx, int64_t n, float *host_dst, const float *src)
{
    cpu_copy(ctx, n, host_dst, src);
    return MR_OK;
}

static double cpu_mag_dist2(void *ctx, int64_t n, const float *x, const float *t)
{
    double s = 0;
#pragma omp parallel for num_threads(nthreads(ctx, n)) reduction(+ : s) schedule(static)
    for (int64_t i = 0; i < n; i++) {
        const double d = hypot((double)x[2 * i], (double)x[2 * i + 1]) - hypot((double)t[2 * i], (double)t[2 * i + 1]);
        s += d * d;
    }
    return s;
}

void mr_vecops_cpu_init(mr_vecops *ops, mr_vecops_cpu_ctx *ctx, int threads)
{
    ctx->threads = threads;
    ops->ctx = ctx;
    ops->alloc = cpu_alloc;
    ops->release = cpu_release;
    ops->zero = cpu_zero;
    ops->copy = cpu_copy;
    ops->dot = cpu_dot;
    ops->norm = cpu_norm;
    ops->ewise = cpu_ewise;
    ops->ewise_reduce = cpu_ewise_reduce;
    ops->to_host = cpu_to_host;
    ops->from_host = cpu_to_host;
    ops->mag_dist2 = cpu_mag_dist2;
    ops->status = NULL;
}
