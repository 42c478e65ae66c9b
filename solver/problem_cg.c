/* CG on a problem whose terms are all quadratic (solver/problem.h): (E^H E + sum_j lambda_j R_j^H R_j) x
 * = b by solver/cg.h, with the objective of each iterate from CG's own residual:
 * E^H E x_k = b - r_k - sum_j lambda_j R_j^H R_j x_k. */
#include <math.h>
#include <stdlib.h>

#include "cg.h"
#include "problem_internal.h"

typedef struct {
    mr_problem *p;
    mr_solve_log log;
    float *t, *nx; /* scratch */
} cg_state;

/* y = (E^H E + sum lambda_j R_j^H R_j) x */
static mr_status system_apply(void *ctx, const float *x, float *y)
{
    cg_state *c = ctx;
    mr_status st = mr_problem_normal(c->p, x, y);
    return st == MR_OK ? mr_problem_add_smooth_terms(c->p, x, y, c->t) : st;
}

static mr_status iterate(void *ctx, int k, const float *x, const float *r)
{
    cg_state *c = ctx;
    mr_problem *p = c->p;
    double hist = 1.0;
    if (k > 0) { /* the relative residual of the iterate, as CG records it */
        const double r0 = p->v->norm(p->v->ctx, p->n, p->b);
        hist = r0 > 0 ? p->v->norm(p->v->ctx, p->n, r) / r0 : 0.0;
    }
    if (c->log.o->objective) { /* E^H E x = b - r - sum lambda R^H R x */
        mr_vec_axpby(p->v, p->n, c->nx, 1.0, p->b, -1.0, r);
        for (int j = 0; j < p->nterms; j++) {
            if (p->terms[j].t.lambda == 0)
                continue;
            mr_status st = mr_term_normal(p, j, x, c->t);
            if (st != MR_OK)
                return st;
            mr_vec_axpy(p->v, p->n, c->nx, -p->terms[j].t.lambda, c->t);
        }
    }
    return mr_solve_log_iter(&c->log, k, x, c->nx, hist);
}

mr_status mr_solve_cg(mr_problem *p, const mr_solve_opts *o, float *x, mr_solve_result *res)
{
    cg_state c = {p, {0}, NULL, NULL};
    mr_status st = mr_solve_log_begin(&c.log, p, o, res);
    if (st != MR_OK)
        return st;
    res->history_name = "relative residual";
    c.t = mr_problem_vec(p, p->n);
    c.nx = o->objective ? mr_problem_vec(p, p->n) : NULL;
    mr_cg_result cr = {0};
    if (!c.t || (o->objective && !c.nx))
        st = MR_ENOMEM;
    if (st == MR_OK) {
        mr_cg_opts co;
        mr_cg_opts_default(&co);
        co.iters = o->iters;
        co.tol = o->tol;
        co.normal = system_apply;
        co.normal_ctx = &c;
        co.iterate = iterate;
        co.iterate_ctx = &c;
        st = mr_cg_solve(p->v, p->n, p->b, x, &co, &cr);
    }
    mr_problem_vec_free(p, c.t);
    mr_problem_vec_free(p, c.nx);
    if (st == MR_OK) /* CG's own history (the same numbers) */
        for (int k = 0; k <= cr.iterations; k++)
            res->history[k] = cr.rel_resid[k];
    const char *stop = st == MR_OK ? mr_cg_stop_name(cr.stop) : NULL;
    const int iterations = cr.iterations;
    mr_cg_result_free(&cr);
    return mr_solve_log_end(&c.log, iterations, stop, st);
}
