/* Conjugate gradients (optionally preconditioned: mr_cg_opts.precond) on the regularised normal equations
 *
 *     (A + lambda R^H R) x = b,   A = F^H W F (Hermitian, positive semi-definite), b = F^H W d,
 *
 * starting from x = 0 (or a given x_0). CG knows nothing about F: the system is given by callbacks, and every vector
 * operation goes through an mr_vecops table (solver/vecops.h), so the same code runs on host or
 * device memory (the callbacks then receive device pointers).
 *
 * Per iteration k it records the relative residual ||r_k|| / ||r_0|| of the normal equations
 * (r_k = b - (A + lambda R^H R) x_k, updated by the CG recurrence; r_0 = b, or b - A x_0 from a warm
 * start), and optionally a
 * metric of x_k (e.g. PSNR against a truth image). It stops after `iters` iterations, or earlier
 * when ||r_k|| / ||r_0|| <= tol (tol > 0), or when p^H A p <= 0 (breakdown: exact solution reached
 * or the system is not positive definite). */
#ifndef MR_CG_H
#define MR_CG_H

#include <stdint.h>

#include "../base/status.h"
#include "linop.h"
#include "vecops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out = Op in, for vectors of the solver's length; in and out never overlap. */
typedef mr_status (*mr_cg_apply_fn)(void *ctx, const float *in, float *out);
/* A number describing the current iterate (PSNR, error); NAN when not available. */
typedef double (*mr_cg_metric_fn)(void *ctx, const float *x);
/* Called after every iteration k = 1..iterations with the relative residual and the metric
 * (NAN without a metric callback). */
typedef void (*mr_cg_progress_fn)(void *ctx, int iter, double rel_resid, double metric);
/* Called with the iterate x_k and its residual r_k = b - (A + lambda R^H R) x_k (by the recurrence) for
 * k = 0 (before the first iteration) and after every iteration; both in the vecops' memory, borrowed for
 * the call. A failure stops CG with that status. */
typedef mr_status (*mr_cg_iterate_fn)(void *ctx, int iter, const float *x, const float *r);

typedef struct {
    int iters;     /* maximum iteration count, >= 1 (default 60) */
    double tol;    /* stop when ||r_k||/||r_0|| <= tol; 0 (default): run all iterations */
    double lambda; /* regularisation weight, >= 0 (default 0) */

    mr_cg_apply_fn normal; /* A; required */
    void *normal_ctx;
    mr_cg_apply_fn reg; /* R^H R; NULL: identity (R = I) */
    void *reg_ctx;
    mr_cg_metric_fn metric; /* optional */
    void *metric_ctx;
    mr_cg_progress_fn progress; /* optional */
    void *progress_ctx;
    mr_cg_iterate_fn iterate; /* optional */
    void *iterate_ctx;
    int warm_start; /* 1: start from the x given (one extra application of the system for r_0 = b - A x,
                       unless r0 is given); 0 (default): from x = 0 */
    const float *r0; /* warm start: b - A x_0 when the caller knows it (in the vecops' memory, borrowed); NULL */
    double tol_abs;  /* also stop when ||r_k|| <= tol_abs (before the first iteration too); 0 (default): off */
    /* A preconditioner: z = M^-1 r for a Hermitian positive definite M that approximates the system
     * (preconditioned CG; the residual recorded is still ||r_k||; r^H M^-1 r <= 0 by rounding stops it as a
     * breakdown); NULL (default): none. */
    mr_cg_apply_fn precond;
    void *precond_ctx;
} mr_cg_opts;

void mr_cg_opts_default(mr_cg_opts *o);

/* The checks mr_cg_solve makes on its numbers (iters >= 1, lambda and tol finite and >= 0), for
 * callers that want to refuse bad settings before doing expensive work. */
mr_status mr_cg_check_params(int iters, double lambda, double tol);

typedef enum { MR_CG_STOP_ITERS = 0, MR_CG_STOP_TOL = 1, MR_CG_STOP_BREAKDOWN = 2, MR_CG_STOP_ZERO_RHS = 3 } mr_cg_stop;

typedef struct {
    int iterations;         /* iterations run (0 when r_0 = 0) */
    double r0_norm;         /* ||r_0|| (||b|| from x = 0) */
    double final_rel_resid; /* ||r_k|| / ||r_0|| after the last iteration (0 when b = 0) */
    double *rel_resid;      /* [iterations + 1]: rel_resid[0] = 1; owned (mr_cg_result_free) */
    double *metric;         /* [iterations + 1] or NULL without a metric callback; metric[0] at x = 0 */
    double metric_seconds;  /* wall time spent in the metric callback (included in the caller's timing) */
    mr_cg_stop stop;
} mr_cg_result;

/* Solve for x (n complex elements, memory of the vecops' kind); b is borrowed. On success *res is
 * filled and owned by the caller; on failure it holds nothing to free. */
mr_status mr_cg_solve(const mr_vecops *ops, int64_t n, const float *b, float *x, const mr_cg_opts *opts,
                      mr_cg_result *res);
void mr_cg_result_free(mr_cg_result *res);

/* CG on an operator: solve A x = b for a Hermitian positive (semi-)definite A (solver/linop.h; its
 * forward is applied: e.g. mr_linop_normal_of(E), or its sum with a scaled regulariser), with the
 * vector operations of A's backend; b and x (dom_size(A) complex elements) are in that backend's
 * memory, and so is the x the metric callback receives. opts->normal, reg and lambda are not used
 * (the system is A); iters, tol, metric and progress are. */
mr_status mr_cg_solve_linop(mr_linop *a, const float *b, float *x, const mr_cg_opts *opts, mr_cg_result *res);
const char *mr_cg_stop_name(mr_cg_stop stop); /* "iterations", "tolerance", "breakdown", "zero right-hand side" */

#ifdef __cplusplus
}
#endif
#endif
