/* Checks shared by the operator tests (test_linop, test_gpu_linop): every operator is driven through
 * host arrays copied to and from its backend's memory, and compared in double on the host.
 *
 *   adjoint:  |<A x, y> - <x, A^H y>| / (||A x|| ||y||)          random complex x, y
 *   normal:   ||normal(x) - A^H (A x)|| / ||A^H A x||              the fast path against the definition
 *   agree:    forward, adjoint and normal of one operator made on two backends, on the same inputs
 *
 * apply() runs one of forward/adjoint/normal on host arrays and returns the status. */
#ifndef MR_LINOP_CHECK_H
#define MR_LINOP_CHECK_H

#include <math.h>
#include <stdlib.h>

#include "gpu/gpu.h"
#include "solver/linop.h"
#include "test_op_random.h"
#include "testutil.h"

typedef mr_status (*lc_fn)(mr_linop *, const float *, float *);

/* out (nout complex) = f(in (nin complex)) with host arrays. */
static inline mr_status lc_apply(mr_linop *op, lc_fn f, const float *in, int64_t nin, float *out, int64_t nout)
{
    mr_backend *be = mr_linop_backend(op);
    const mr_vecops *v = mr_backend_vecops(be);
    float *din = mr_backend_alloc(be, nin), *dout = mr_backend_alloc(be, nout);
    mr_status st = din && dout ? MR_OK : MR_ENOMEM;
    if (st == MR_OK)
        st = v->from_host(v->ctx, nin, din, in);
    if (st == MR_OK)
        st = f(op, din, dout);
    if (st == MR_OK)
        st = v->to_host(v->ctx, nout, out, dout);
    v->release(v->ctx, din);
    v->release(v->ctx, dout);
    return st;
}

static inline void lc_dot(const float *u, const float *w, int64_t n, double *re, double *im)
{
    double r = 0, i = 0;
    for (int64_t k = 0; k < n; k++) {
        r += (double)u[2 * k] * w[2 * k] + (double)u[2 * k + 1] * w[2 * k + 1];
        i += (double)u[2 * k] * w[2 * k + 1] - (double)u[2 * k + 1] * w[2 * k];
    }
    *re = r;
    *im = i;
}

static inline double lc_norm(const float *u, int64_t n)
{
    double s = 0;
    for (int64_t k = 0; k < 2 * n; k++)
        s += (double)u[k] * u[k];
    return sqrt(s);
}

/* The adjoint and normal checks of one operator against the bounds; label names it in the output. */
static inline void lc_check(const char *label, mr_linop *op, uint64_t *rng, double adj_bound, double normal_bound)
{
    const int64_t nd = mr_linop_dom_size(op), nc = mr_linop_cod_size(op);
    float *x = test_random_normal(rng, 2 * nd), *y = test_random_normal(rng, 2 * nc);
    float *ax = malloc((size_t)nc * 2 * sizeof(float)), *ahy = malloc((size_t)nd * 2 * sizeof(float));
    float *n1 = malloc((size_t)nd * 2 * sizeof(float)), *n2 = malloc((size_t)nd * 2 * sizeof(float));
    char what[256];
    snprintf(what, sizeof what, "%s: forward", label);
    test_check_ok(__FILE__, __LINE__, what, lc_apply(op, mr_linop_forward, x, nd, ax, nc));
    snprintf(what, sizeof what, "%s: adjoint", label);
    test_check_ok(__FILE__, __LINE__, what, lc_apply(op, mr_linop_adjoint, y, nc, ahy, nd));
    double lr, li, rr, ri;
    lc_dot(ax, y, nc, &lr, &li);
    lc_dot(x, ahy, nd, &rr, &ri);
    snprintf(what, sizeof what, "%s: |<Ax,y> - <x,A^H y>| / (||Ax|| ||y||)", label);
    CHECK_LE(what, hypot(lr - rr, li - ri) / (lc_norm(ax, nc) * lc_norm(y, nc)), adj_bound);
    /* normal(x) against A^H (A x) */
    snprintf(what, sizeof what, "%s: normal", label);
    test_check_ok(__FILE__, __LINE__, what, lc_apply(op, mr_linop_normal, x, nd, n1, nd));
    test_check_ok(__FILE__, __LINE__, what, lc_apply(op, mr_linop_adjoint, ax, nc, n2, nd));
    snprintf(what, sizeof what, "%s: ||normal(x) - A^H A x|| / ||A^H A x||", label);
    CHECK_LE(what, test_rel_l2_ff(n1, n2, 2 * nd), normal_bound);
    free(x);
    free(y);
    free(ax);
    free(ahy);
    free(n1);
    free(n2);
}

/* The GPU tests' start: 0 (print why; the caller returns TEST_SKIP) without a usable GPU, else 1 with
 * the test seed drawn into *rng and a GPU and a host backend made (NULL after a failed CHECK). */
static inline int lc_gpu_backends(uint64_t *rng, mr_backend **gpu, mr_backend **cpu)
{
    *gpu = *cpu = NULL;
    if (mr_gpu_count() <= 0) {
        printf("no usable GPU: skipped\n");
        return 0;
    }
    *rng = test_seed();
    const mr_device_sel sg = {.kind = MR_DEVICE_GPU, .index = -1}, sc = {.kind = MR_DEVICE_CPU, .index = -1};
    CHECK_OK(mr_backend_create(gpu, sg, 0));
    CHECK_OK(mr_backend_create(cpu, sc, 0));
    if (*gpu)
        printf("backend: %s (device init %.3f s)\n", mr_backend_name(*gpu), mr_backend_init_seconds(*gpu));
    return 1;
}

/* Forward, adjoint and normal of two operators with one contract (e.g. the same operator on two backends,
 * or two implementations), named by `pair` ("GPU vs CPU"), on the same random inputs: relative L2 <=
 * bound_fa (forward, adjoint) and bound_normal. */
static inline void lc_agree_pair(const char *label, const char *pair, mr_linop *og, mr_linop *oc, uint64_t *rng,
                                 double bound_fa, double bound_normal)
{
    const int64_t nd = mr_linop_dom_size(og), nc = mr_linop_cod_size(og);
    float *x = test_random_normal(rng, 2 * nd), *y = test_random_normal(rng, 2 * nc);
    float *a = malloc((size_t)(nd > nc ? nd : nc) * 2 * sizeof(float));
    float *b = malloc((size_t)(nd > nc ? nd : nc) * 2 * sizeof(float));
    char what[256];
    CHECK_OK(lc_apply(og, mr_linop_forward, x, nd, a, nc));
    CHECK_OK(lc_apply(oc, mr_linop_forward, x, nd, b, nc));
    snprintf(what, sizeof what, "%s: %s forward", label, pair);
    CHECK_LE(what, test_rel_l2_ff(a, b, 2 * nc), bound_fa);
    CHECK_OK(lc_apply(og, mr_linop_adjoint, y, nc, a, nd));
    CHECK_OK(lc_apply(oc, mr_linop_adjoint, y, nc, b, nd));
    snprintf(what, sizeof what, "%s: %s adjoint", label, pair);
    CHECK_LE(what, test_rel_l2_ff(a, b, 2 * nd), bound_fa);
    CHECK_OK(lc_apply(og, mr_linop_normal, x, nd, a, nd));
    CHECK_OK(lc_apply(oc, mr_linop_normal, x, nd, b, nd));
    snprintf(what, sizeof what, "%s: %s normal", label, pair);
    CHECK_LE(what, test_rel_l2_ff(a, b, 2 * nd), bound_normal);
    free(x);
    free(y);
    free(a);
    free(b);
}

/* The same operator on two backends (og on the GPU, oc on the host). */
static inline void lc_agree(const char *label, mr_linop *og, mr_linop *oc, uint64_t *rng, double bound_fa,
                            double bound_normal)
{
    lc_agree_pair(label, "GPU vs CPU", og, oc, rng, bound_fa, bound_normal);
}

#endif
