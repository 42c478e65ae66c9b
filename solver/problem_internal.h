/* Shared by the solvers of solver/problem.h (problem.c, problem_cg.c, fista.c, admm.c, pdhg.c): the
 * problem's layout, the term operations every solver uses, and the per-iteration bookkeeping. */
#ifndef MR_PROBLEM_INTERNAL_H
#define MR_PROBLEM_INTERNAL_H

#include "problem.h"

typedef struct {
    mr_term t;   /* t.op holds the problem's reference */
    mr_prox prox; /* the penalty on R x (its size: R's codomain) */
    int64_t zn;  /* complex elements of R x */
} mr_term_state;

struct mr_problem {
    mr_linop *e;
    mr_backend *be;
    const mr_vecops *v;
    int64_t n; /* image elements (E's domain) */
    const float *b;
    double dn2;
    int nterms;
    mr_term_state terms[MR_PROBLEM_MAX_TERMS];
    int64_t normal_apps; /* applications of E^H E since the problem was made */
};

/* y = E^H E x, counted. */
mr_status mr_problem_normal(mr_problem *p, const float *x, float *y);

/* A vector of the backend (NULL with a message when out of memory). */
float *mr_problem_vec(const mr_problem *p, int64_t n);
void mr_problem_vec_free(const mr_problem *p, float *x);

/* z = R_j x, x = R_j^H z, y = R_j^H R_j x (identity: copies; tight: y = x). */
mr_status mr_term_forward(const mr_problem *p, int j, const float *x, float *z);
mr_status mr_term_adjoint(const mr_problem *p, int j, const float *z, float *x);
mr_status mr_term_normal(const mr_problem *p, int j, const float *x, float *y);
/* Whether term j is handled as a prox of the image (identity or tight) and whether it is smooth (L2). */
int mr_term_on_image(const mr_problem *p, int j);
int mr_term_smooth(const mr_problem *p, int j);
/* The variable a splitting solver (ADMM, PDHG) keeps for a non-smooth term: K_j x with K_j = R_j, or the
 * identity for a term on the image (whose prox then includes R); its size, K_j and K_j^H. */
int64_t mr_term_split_size(const mr_problem *p, int j);
mr_status mr_term_split_forward(const mr_problem *p, int j, const float *x, float *z);
mr_status mr_term_split_adjoint(const mr_problem *p, int j, const float *z, float *x);
/* out = prox_{t lambda_j f_j(R_j .)}(v) on the image for an identity or tight term (tight: R^H prox(R v),
 * with zt, a vector of R's codomain, as scratch; the term's refresh hook runs first with iter). */
mr_status mr_term_prox_image(mr_problem *p, int j, double t, int iter, const float *v, float *out, float *zt);

/* y += sum over the L2 terms lambda_q R_q^H R_q x (scratch: a vector of the image). */
mr_status mr_problem_add_smooth_terms(mr_problem *p, const float *x, float *y, float *scratch);

/* The largest eigenvalue of a Hermitian positive semi-definite f (x -> y on image vectors) by `iters` power
 * iterations from a seeded random vector (an estimate from below). */
typedef mr_status (*mr_power_fn)(mr_problem *p, void *ctx, const float *x, float *y);
mr_status mr_problem_power(mr_problem *p, mr_power_fn f, void *ctx, int iters, uint64_t seed, double *lam);
/* The mean eigenvalue of E^H E + the L2 terms, trace / n, estimated by the Rayleigh quotient of one seeded
 * random vector (one application). */
mr_status mr_problem_mean_eig(mr_problem *p, uint64_t seed, double *mean);
/* ||R_j||^2 (1 for identity and tight terms): a power iteration on R_j^H R_j, with a margin for the
 * estimate from below. */
#define MR_TERM_POWER_ITERS 20
#define MR_TERM_POWER_MARGIN 1.02
mr_status mr_term_norm2(mr_problem *p, int j, double *out);

/* The per-iteration records of a solve (solver/problem.h's result) and the buffers that evaluating the
 * objective needs. */
typedef struct {
    mr_problem *p;
    const mr_solve_opts *o;
    mr_solve_result *res;
    float *z[MR_PROBLEM_MAX_TERMS]; /* R_j x scratch (NULL for identity terms) */
    double t0;
    int64_t apps0; /* the problem's normal applications at the start */
} mr_solve_log;

/* Allocate the result's histories for o->iters iterations and the scratch. */
mr_status mr_solve_log_begin(mr_solve_log *l, mr_problem *p, const mr_solve_opts *o, mr_solve_result *res);
/* Record iteration k (0 = the start): the objective from x and nx = E^H E x (skipped when the options
 * ask for no objective; nx may then be NULL), the convergence measure, the metric; calls progress for
 * k >= 1. Returns the device status. */
mr_status mr_solve_log_iter(mr_solve_log *l, int k, const float *x, const float *nx, double history);
/* The common start: x = 0, E^H E x = 0, iteration 0 recorded; *done = 1 (stop "zero right-hand side")
 * when b = 0, whose solution is x = 0. */
mr_status mr_solve_start(mr_solve_log *l, float *x, float *nx, int *done, const char **stop);
/* The relative change ||x - xold|| / ||x|| (1 when x = 0 and xold != 0, 0 when both are 0); d is scratch. */
double mr_solve_rel_change(const mr_vecops *v, int64_t n, const float *x, const float *xold, float *d);
/* Finish: iterations, stop reason, time; frees the scratch. On failure (st != MR_OK) the result is freed. */
mr_status mr_solve_log_end(mr_solve_log *l, int iterations, const char *stop, mr_status st);

mr_status mr_solve_cg(mr_problem *p, const mr_solve_opts *o, float *x, mr_solve_result *res);
mr_status mr_solve_fista(mr_problem *p, const mr_solve_opts *o, float *x, mr_solve_result *res);
mr_status mr_solve_admm(mr_problem *p, const mr_solve_opts *o, float *x, mr_solve_result *res);
mr_status mr_solve_pdhg(mr_problem *p, const mr_solve_opts *o, float *x, mr_solve_result *res);

#endif
