/* The priors of `--reg` (one table: names, penalties, operators, the automatic lambda's constants and
 * --help come from it) and the terms they add to a reconstruction problem (solver/problem.h).
 *
 *   tv        isotropic total variation: lambda sum_v ||(D x)_v||_2, D = forward differences along every
 *             axis of more than one voxel (Neumann boundary): L1-L2 over the difference directions
 *   wavelet   lambda ||W x||_1 over the detail coefficients of an orthogonal Daubechies wavelet (db4, levels
 *             from the matrix; solver/wavelet.h), with a new random cycle-spinning shift from a fixed seed
 *             before every use of its proximal map (reproducible)
 *   gradient  lambda/2 ||D x||^2 (Tikhonov on the gradient: the quadratic prior of earlier versions)
 *   identity  lambda/2 ||x||^2
 *
 * A list "tv,wavelet:0.5" adds several terms; NAME:W multiplies that prior's lambda (automatic or given) by
 * W (> 0). With P > 1 l1-type priors in the list, each automatic lambda is divided by P (they share the
 * weight one of them would have: tv + wavelet measured 0.5 dB above tv alone on a 64^2 radial scan). Every prior's lambda comes from the automatic rule of solver/autolambda.h with the prior's
 * constant K: quadratic priors lambda = K sigma^2 / s^2, the l1-type ones lambda = K sigma sqrt(d). */
#ifndef MR_PRIORS_H
#define MR_PRIORS_H

#include "../../base/status.h"
#include "../../solver/problem.h"
#include "../../solver/wavelet.h"
#include "../../solver/autolambda.h"

/* X(name, text, penalty, operator, the automatic lambda's rule and constant K, help); K measured
 * (docs/RECON.md, "Choosing lambda") */
#define MR_PRIOR_TABLE(X)                                                                                      \
    X(TV, "tv", MR_PENALTY_L12, MR_PRIOR_OP_FD, MR_LAMBDA_NOISE, 0.85, "isotropic total variation")            \
    X(WAVELET, "wavelet", MR_PENALTY_L1, MR_PRIOR_OP_WAVELET, MR_LAMBDA_NOISE, 1.35,                           \
      "l1 of Daubechies wavelet details")                                                                      \
    X(GRADIENT, "gradient", MR_PENALTY_L2, MR_PRIOR_OP_FD, MR_LAMBDA_GAUSSIAN, 1.0,                            \
      "quadratic on the image gradient (Tikhonov)")                                                            \
    X(IDENTITY, "identity", MR_PENALTY_L2, MR_PRIOR_OP_NONE, MR_LAMBDA_GAUSSIAN, 3.0,                          \
      "quadratic on the image (Tikhonov)")

typedef enum { MR_PRIOR_OP_NONE = 0, MR_PRIOR_OP_FD = 1, MR_PRIOR_OP_WAVELET = 2 } mr_prior_op;

typedef enum {
#define MR_PRIOR_ENUM(name, text, pen, op, rule, k, help) MR_PRIOR_##name,
    MR_PRIOR_TABLE(MR_PRIOR_ENUM)
#undef MR_PRIOR_ENUM
    MR_PRIOR_COUNT
} mr_prior_kind;

typedef struct {
    const char *name;
    mr_penalty penalty;
    mr_prior_op op;
    mr_lambda_rule rule; /* the automatic lambda's rule (solver/autolambda.h) */
    double k;            /* and its constant */
    const char *help;
} mr_prior_info;

const mr_prior_info *mr_prior_get(mr_prior_kind p);
/* "tv, wavelet, gradient, identity": the names, for --help and messages. */
const char *mr_prior_names(void);
/* --reg's help text, made from the table: "priors of the iterative methods, comma-separated, NAME:W ...: tv
 * (isotropic total variation), ..." (static storage). */
const char *mr_prior_help(void);

typedef struct {
    int n;
    mr_prior_kind kind[MR_PROBLEM_MAX_TERMS];
    double weight[MR_PROBLEM_MAX_TERMS]; /* > 0 */
} mr_prior_list;

/* "tv", "tv,wavelet:0.5": names of the table, each at most once, optional ":W" with W > 0 finite; MR_EINVAL naming
 * the part at fault. */
mr_status mr_prior_list_parse(const char *text, mr_prior_list *out);
/* 1 when every prior of the list is quadratic (CG solves it). */
int mr_prior_list_quadratic(const mr_prior_list *l);
/* The list as text ("tv,wavelet:0.5") into buf. */
void mr_prior_list_format(const mr_prior_list *l, char *buf, size_t size);

/* The seed of the wavelet's cycle-spinning shifts (every run draws the same sequence). */
#define MR_PRIOR_WAVELET_SEED 1

/* The operators of a list's terms on a backend, made once and shared by the problems of a run. */
typedef struct {
    mr_linop *fd;       /* finite differences, when a prior uses them */
    mr_linop *wavelet;  /* the wavelet, when a prior uses it */
    float *wmask;       /* its detail mask in the backend's memory (1 detail, 0 approximation) */
    mr_wavelet_info winfo;
    uint64_t wstate;    /* the cycle-spinning generator's state */
} mr_prior_ops;

mr_status mr_prior_ops_make(mr_prior_ops *o, const mr_prior_list *l, mr_backend *be, const int64_t matrix[3]);
void mr_prior_ops_free(mr_prior_ops *o);
/* Add term i of the list with weight lambda to the problem (o is borrowed by the problem: the wavelet's
 * refresh hook draws its shifts from it). */
mr_status mr_prior_add_term(mr_problem *p, const mr_prior_list *l, int i, mr_prior_ops *o, double lambda);

#endif
