/* A reconstruction problem and its solvers (after sigpy's App = problem + algorithm, written our way):
 *
 *   minimise over x   1/2 ||E x - d||^2  +  sum_j lambda_j f_j(R_j x)
 *
 * E is the encoding operator (any mr_linop: one coil, SENSE, ...; only its normal E^H E is applied,
 * so the exact model never evaluates its expensive forward sums in the solvers), given with the right-
 * hand side b = E^H d (computed once by the caller: the F^H d stage) and ||d||^2 (the objective's
 * constant; 0 when unknown, which shifts every objective value by -||d||^2 / 2). Each term j is an
 * operator R_j (NULL: the identity), a penalty f_j of solver/prox.h (L2 = 1/2 ||.||^2, L1, isotropic
 * L1-L2) and a weight lambda_j >= 0. Examples: Tikhonov on the gradient (R = finite differences, L2),
 * total variation (finite differences, L1-L2 over the D difference directions), wavelet sparsity
 * (R = an orthogonal wavelet, L1 with the approximation band weighted 0).
 *
 * A term whose operator is tight (R^H R = I: an orthogonal transform) has its prox on the image
 * computed as R^H prox_f(R v) (exact when R is unitary, i.e. also R R^H = I; the zero-padded wavelets
 * of odd sizes are only isometries, and so is a cycle-spun transform, whose random shift the term's
 * refresh hook draws before each use: the usual approximation, as in BART's pics), and every solver
 * treats it as a prox of the image.
 *
 * Solvers (mr_solver_kind), all written once against mr_vecops, so they run where E's backend keeps its
 * vectors (host, or one GPU: then nothing but scalars crosses to the host per iteration):
 *   CG     every term L2: (E^H E + sum_j lambda_j R_j^H R_j) x = b (solver/cg.h), from x = 0.
 *   FISTA  smooth part 1/2 ||E x - d||^2 + the L2 terms, one non-smooth term with R = I or tight;
 *          step 1/L with L the largest eigenvalue of the smooth part's Hessian from a power iteration
 *          (never a user parameter); adaptive restart (O'Donoghue & Candes 2015, gradient scheme);
 *          E^H E applied once per iteration (E^H E y follows from E^H E x_k by linearity).
 *   ADMM   any terms: z_j = R_j x split off every non-L2 term (z_j = x for tight terms), scaled dual
 *          u_j; x-update by warm-started CG on (E^H E + sum_L2 lambda_q R_q^H R_q + rho sum_j R_j^H R_j)
 *          (the Toeplitz normal again), z_j = prox_{lambda_j / rho f_j}(R_j x + u_j); rho from the
 *          scale of E^H E and adapted by residual balancing (Boyd et al. 2011, 3.4.1).
 *   PDHG   primal-dual with the smooth data term (Condat 2013, Vu 2013): E^H E once per iteration,
 *          one dual variable per non-L2 term; steps from the power iteration and ||R_j||.
 *   AUTO   CG when every term is L2 (or has lambda 0); FISTA for one non-smooth term of the identity or a
 *          tight operator; otherwise ADMM.
 * Per iteration k every solver records the objective, the data term 1/2 ||E x_k - d||^2 and each term
 * lambda_j f_j(R_j x_k) (from E^H E x_k, which every solver has at hand, so the history costs no
 * normal application), and a convergence measure (CG: the relative residual of its normal equations;
 * the others: the relative change ||x_k - x_{k-1}|| / ||x_k||).
 *
 * Ownership: the problem takes references to E and to each R_j, and borrows b and the term weights
 * (backend memory) until it is freed; a refresh hook's context is borrowed likewise. Results are owned
 * by the caller (mr_solve_result_free). One thread at a time. */
#ifndef MR_PROBLEM_H
#define MR_PROBLEM_H

#include <stdint.h>

#include "../base/status.h"
#include "linop.h"
#include "prox.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, text): the enum, the names and the parser come from one table. */
#define MR_SOLVER_TABLE(X)                                                                                     \
    X(AUTO, "auto")                                                                                            \
    X(CG, "cg")                                                                                                \
    X(FISTA, "fista")                                                                                          \
    X(ADMM, "admm")                                                                                            \
    X(PDHG, "pdhg")

typedef enum {
#define MR_SOLVER_ENUM(name, text) MR_SOLVER_##name,
    MR_SOLVER_TABLE(MR_SOLVER_ENUM)
#undef MR_SOLVER_ENUM
    MR_SOLVER_COUNT
} mr_solver_kind;

const char *mr_solver_name(mr_solver_kind s);
mr_status mr_solver_parse(const char *text, mr_solver_kind *out); /* MR_EINVAL naming the text */

typedef struct {
    const char *name;     /* for reports and messages ("tv", "wavelet", "gradient"); borrowed */
    mr_linop *op;         /* R: image -> z, or NULL (identity); the problem takes a reference */
    mr_penalty penalty;
    double lambda;        /* >= 0, finite */
    const float *weights; /* L1/L1-L2: [groups] real weights in the backend's memory, or NULL; borrowed */
    int tight;            /* 1: R^H R = I (see above) */
    /* Called before each use of the term's prox with the iteration number (e.g. a new cycle-spinning
     * shift of a wavelet); NULL: none. */
    void (*refresh)(void *ctx, int iter);
    void *refresh_ctx;
} mr_term;

#define MR_PROBLEM_MAX_TERMS 8

typedef struct mr_problem mr_problem;

/* E, b = E^H d ([dom_size(E)] complex elements in E's backend memory; borrowed), ||d||^2 (>= 0). */
mr_status mr_problem_create(mr_problem **out, mr_linop *e, const float *b, double data_norm2);
/* Add a term (checked: R maps E's domain; L1-L2 needs R's codomain {.., .., .., G} with the groups in
 * its last extent; weights sized by the penalty's groups). */
mr_status mr_problem_add_term(mr_problem *p, const mr_term *t);
void mr_problem_free(mr_problem *p); /* NULL is fine */
int mr_problem_nterms(const mr_problem *p);
const mr_term *mr_problem_term(const mr_problem *p, int j); /* borrowed */
/* The solver AUTO picks for this problem, and whether a given solver can solve it (MR_EINVAL with the
 * reason otherwise: e.g. CG with a non-quadratic term, FISTA with two non-smooth terms). */
mr_solver_kind mr_problem_auto_solver(const mr_problem *p);
mr_status mr_problem_check_solver(const mr_problem *p, mr_solver_kind s);

/* Per-iteration callbacks (optional): a metric of the iterate x (in the backend's memory; e.g. PSNR
 * against a truth; NAN when not available) and progress. */
typedef double (*mr_solve_metric_fn)(void *ctx, const float *x);
typedef void (*mr_solve_progress_fn)(void *ctx, int iter, double objective, double history, double metric);

typedef struct {
    mr_solver_kind solver; /* default AUTO */
    int iters;             /* iterations (outer for ADMM); 0 (default): the solver's own, mr_solver_default_iters */
    double tol;            /* stop when the convergence measure <= tol; 0 (default): run every iteration */
    int inner_iters;       /* ADMM: CG iterations per x-update (default MR_ADMM_INNER_ITERS) */
    double inner_tol;      /* ADMM: fewer when ||r|| <= inner_tol ||b|| (default 0: always inner_iters; a
                              threshold made the x-updates stall on 3D scans, docs/SOLVERS.md) */
    double rho;            /* ADMM: the initial penalty parameter; 0 (default): automatic */
    int adapt_rho;         /* ADMM: 1 residual balancing; default 0 (it drove rho 100 times too high on
                              radial scans, docs/RECON.md) */
    double relax;          /* ADMM: over-relaxation alpha in (0, 2) (default MR_ADMM_RELAX; 1: none) */
    int precond;           /* ADMM: 1 (default) the x-updates' CG preconditioned by the circulant model of the
                              system (linop.h) when E and every term have one; 0 plain CG. The default is 0
                              when the environment has MR_PRECOND=off (for comparisons) */
    int power_iters;       /* FISTA, PDHG: power iterations for L (default 30) */
    int objective;         /* 1 (default): record objective and terms per iteration */
    uint64_t seed;         /* the power iteration's start vector (default 1) */
    mr_solve_metric_fn metric;
    void *metric_ctx;
    mr_solve_progress_fn progress;
    void *progress_ctx;
} mr_solve_opts;

void mr_solve_opts_default(mr_solve_opts *o);

/* The iterations each solver runs by default (mr_solve_opts.iters = 0): CG 60, ADMM 50 (x 8 inner CG
 * iterations: about 400 applications of E^H E, as many as 100 x 4, which left 3D radial scans 0.8 dB short
 * of the minimiser's PSNR on the book problem; docs/SOLVERS.md), FISTA and PDHG 100. */
#define MR_ADMM_INNER_ITERS 8
/* ADMM's over-relaxation (Boyd et al. 2011, 3.4.3): 1.6 brought 3D images closer to the minimiser in the same
 * iterations (48^3: 5e-3 against 8.5e-3 from a 400-iteration run) and the suite's scans within -0.04 ... +2.5 dB
 * (docs/SOLVERS.md). */
#define MR_ADMM_RELAX 1.6
int mr_solver_default_iters(mr_solver_kind s);
/* The iterations mr_problem_solve(p, o) will run at most: o->iters, or the default of the solver it picks. */
int mr_solve_iters(const mr_problem *p, const mr_solve_opts *o);

typedef struct {
    mr_solver_kind solver;    /* the solver that ran (AUTO resolved) */
    int iterations;           /* run (0 when b = 0 or on an early stop before the first) */
    const char *stop;         /* "iterations", "tolerance", "breakdown", "zero right-hand side" */
    int nterms;
    const char *history_name; /* "relative residual" (CG) or "relative change" */
    double *history;          /* [iterations + 1]; history[0] = 1 */
    double *objective;        /* [iterations + 1] or NULL (opts.objective = 0); objective[0] at x = 0 */
    double *data_term;        /* [iterations + 1] 1/2 ||E x_k - d||^2, or NULL */
    double *term_value;       /* [nterms][iterations + 1] lambda_j f_j(R_j x_k), or NULL */
    double *metric;           /* [iterations + 1] or NULL without a metric callback */
    double metric_seconds;    /* time in the metric callback */
    double seconds;           /* the solve's wall time, the metric's included */
    double lipschitz;         /* FISTA, PDHG: the largest eigenvalue of the smooth part; NAN otherwise */
    double step;              /* FISTA: 1/L; PDHG: the primal step; NAN otherwise */
    double rho;               /* ADMM: the final rho; NAN otherwise */
    int restarts;             /* FISTA: adaptive restarts */
    int inner_total;          /* ADMM: CG iterations in all x-updates */
    int preconditioned;       /* ADMM: 1 when the x-updates' CG was preconditioned */
    int64_t normal_apps;      /* applications of E^H E, the power iterations' included (the cost unit) */
} mr_solve_result;

/* Solve from x = 0 into x ([dom_size(E)] complex elements, the backend's memory). On success *res is
 * filled and owned by the caller; on failure it holds nothing to free. */
mr_status mr_problem_solve(mr_problem *p, const mr_solve_opts *o, float *x, mr_solve_result *res);
void mr_solve_result_free(mr_solve_result *res);

/* The largest eigenvalue of E^H E + sum over the L2 terms lambda_j R_j^H R_j (power iteration, `iters`
 * steps from a seeded random vector; an estimate from below). */
mr_status mr_problem_lipschitz(mr_problem *p, int iters, uint64_t seed, double *l);

#ifdef __cplusplus
}
#endif
#endif
