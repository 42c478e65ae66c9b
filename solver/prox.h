/* Proximal maps of the penalties a reconstruction problem (solver/problem.h) puts on R x, run where
 * the vectors are: every map is an element-wise operation of base/ewise.h through an mr_vecops table
 * (host or device memory), so nothing here knows which backend it runs on.
 *
 *   prox_{t f}(v) = argmin_z  f(z) + 1/(2t) ||z - v||^2          (t > 0)
 *
 *   MR_PENALTY_L2    f(z) = 1/2 ||z||^2                prox: v / (1 + t)
 *   MR_PENALTY_L1    f(z) = sum_i w_i |z_i|             prox: complex soft-thresholding by t w_i
 *   MR_PENALTY_L12   f(z) = sum_i w_i ||z_.,i||_2      (groups of G components, component g of group i
 *                                                       at g n + i: the layout of the finite
 *                                                       differences, so this is isotropic TV)
 *                                                       prox: group soft-thresholding by t w_i
 and the prox of the convex conjugate of lambda f (primal-dual methods), by Moreau's identity
 *   prox_{s (lambda f)*}(v) = v - s prox_{lambda f / s}(v / s):
 *   L2: v / (1 + s / lambda);  L1: projection onto |z_i| <= lambda w_i;  L12: onto ||z_.,i|| <= lambda w_i.
 * z has n G complex elements (G = 1 for L1 and L2); the weights w [n] (real, in the table's memory; NULL:
 * all 1) e.g. leave a wavelet's approximation band unthresholded (w = 0 there); L2 does not use them.
 *
 * A prox is a small value object: the caller keeps the weights alive while it is used. */
#ifndef MR_PROX_H
#define MR_PROX_H

#include <stdint.h>

#include "../base/status.h"
#include "vecops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, text): the enum and the names. */
#define MR_PENALTY_TABLE(X)                                                                                    \
    X(L2, "l2")                                                                                                \
    X(L1, "l1")                                                                                                \
    X(L12, "l1-l2")

typedef enum {
#define MR_PENALTY_ENUM(name, text) MR_PENALTY_##name,
    MR_PENALTY_TABLE(MR_PENALTY_ENUM)
#undef MR_PENALTY_ENUM
    MR_PENALTY_COUNT
} mr_penalty;

const char *mr_penalty_name(mr_penalty p); /* "l2", "l1", "l1-l2" */

typedef struct {
    mr_penalty kind;
    int64_t n;      /* elements (L1, L2) or groups (L12), >= 1 */
    int64_t groups; /* G: components per group (L12); 1 for L1 and L2 */
    const float *w; /* [n] real weights in the table's memory, or NULL (all 1); borrowed */
} mr_prox;

/* The checks of a prox's fields (MR_EINVAL naming the problem). */
mr_status mr_prox_check(const mr_prox *p);
/* Complex elements of z: n G. */
static inline int64_t mr_prox_size(const mr_prox *p) { return p->n * p->groups; }

/* out = prox_{t f}(v); out may be v. t >= 0 (t = 0: out = v). */
void mr_prox_apply(const mr_vecops *v, const mr_prox *p, double t, const float *in, float *out);
/* out = prox_{s (lambda f)*}(v); out may be v. s > 0, lambda > 0. */
void mr_prox_conj_apply(const mr_vecops *v, const mr_prox *p, double lambda, double s, const float *in, float *out);
/* f(z), in double. */
double mr_prox_value(const mr_vecops *v, const mr_prox *p, const float *z);

#ifdef __cplusplus
}
#endif
#endif
