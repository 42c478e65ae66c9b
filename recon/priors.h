/* The priors of `--reg` (one table: names, penalties, operators, the automatic lambda's constants and
 * --help come from it) and the terms they add to a reconstruction problem (solver/problem.h).
 *
 *   tv        isotropic total variation: lambda sum_v ||(D x)_v||_2, D = forward differences along every
 *             axis of more than one voxel (Neumann boundary): L1-L2 over the difference directions
 *   gradient  lambda/2 ||D x||^2 (Tikhonov on the gradient: the quadratic prior of earlier versions)
 *   identity  lambda/2 ||x||^2
 *   l1        lambda ||x||_1 (sparse images: angiograms, phantoms of points)
 *
 * A list "tv,l1:0.5" adds several terms; NAME:W multiplies that prior's lambda (automatic or given) by
 * W (> 0). Every prior's lambda comes from one rule (recon/autolambda.h) with the prior's constant K and
 * exponent: quadratic priors lambda = K sigma^2 / s^2, the l1-type ones lambda = K sigma^2 / s. */
#ifndef MR_PRIORS_H
#define MR_PRIORS_H

#include "../base/status.h"
#include "../solver/problem.h"

/* X(name, text, penalty, operator, lambda constant K, lambda exponent, help) */
#define MR_PRIOR_TABLE(X)                                                                                      \
    X(TV, "tv", MR_PENALTY_L12, MR_PRIOR_OP_FD, 1.0, 1, "isotropic total variation")                          \
    X(GRADIENT, "gradient", MR_PENALTY_L2, MR_PRIOR_OP_FD, 1.0, 2, "quadratic on the image gradient (Tikhonov)")  \
    X(IDENTITY, "identity", MR_PENALTY_L2, MR_PRIOR_OP_NONE, 3.0, 2, "quadratic on the image (Tikhonov)")      \
    X(L1, "l1", MR_PENALTY_L1, MR_PRIOR_OP_NONE, 1.0, 1, "l1 norm of the image (sparse images)")

typedef enum { MR_PRIOR_OP_NONE = 0, MR_PRIOR_OP_FD = 1 } mr_prior_op;

typedef enum {
#define MR_PRIOR_ENUM(name, text, pen, op, k, e, help) MR_PRIOR_##name,
    MR_PRIOR_TABLE(MR_PRIOR_ENUM)
#undef MR_PRIOR_ENUM
    MR_PRIOR_COUNT
} mr_prior_kind;

typedef struct {
    const char *name;
    mr_penalty penalty;
    mr_prior_op op;
    double k;     /* the automatic lambda's constant */
    int exponent; /* lambda = k sigma^2 / s^exponent */
    const char *help;
} mr_prior_info;

const mr_prior_info *mr_prior_get(mr_prior_kind p);
/* "tv, gradient, identity, l1": the names, for --help and messages. */
const char *mr_prior_names(void);

typedef struct {
    int n;
    mr_prior_kind kind[MR_PROBLEM_MAX_TERMS];
    double weight[MR_PROBLEM_MAX_TERMS]; /* > 0 */
} mr_prior_list;

/* "tv", "tv,l1:0.5": names of the table, each at most once, optional ":W" with W > 0 finite; MR_EINVAL naming
 * the part at fault. */
mr_status mr_prior_list_parse(const char *text, mr_prior_list *out);
/* 1 when every prior of the list is quadratic (CG solves it). */
int mr_prior_list_quadratic(const mr_prior_list *l);
/* The list as text ("tv,l1:0.5") into buf. */
void mr_prior_list_format(const mr_prior_list *l, char *buf, size_t size);

/* The operators of a list's terms on a backend, made once and shared by the problems of a run. */
typedef struct {
    mr_linop *fd; /* finite differences, when a prior uses them */
} mr_prior_ops;

mr_status mr_prior_ops_make(mr_prior_ops *o, const mr_prior_list *l, mr_backend *be, const int64_t matrix[3]);
void mr_prior_ops_free(mr_prior_ops *o);
/* Add term i of the list with weight lambda to the problem. */
mr_status mr_prior_add_term(mr_problem *p, const mr_prior_list *l, int i, const mr_prior_ops *o, double lambda);

#endif
