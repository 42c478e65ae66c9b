/* The problem object of solver/problem.h, the term operations and the bookkeeping every solver shares
 * (solver/problem_internal.h), the power iteration, and the dispatch to the solvers. */
#include "problem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"
#include "../base/rng.h"
#include "problem_internal.h"

/* ---- names ---------------------------------------------------------------------------------------- */

static const char *const solver_names[] = {
#define MR_SOLVER_NAME(name, text) text,
    MR_SOLVER_TABLE(MR_SOLVER_NAME)
#undef MR_SOLVER_NAME
};

const char *mr_solver_name(mr_solver_kind s) { return (unsigned)s < MR_SOLVER_COUNT ? solver_names[s] : "unknown"; }

mr_status mr_solver_parse(const char *text, mr_solver_kind *out)
{
    for (int i = 0; text && i < MR_SOLVER_COUNT; i++)
        if (!strcmp(text, solver_names[i])) {
            *out = (mr_solver_kind)i;
            return MR_OK;
        }
    return mr_error(MR_EINVAL, "'%s' is not a solver (auto, cg, fista, admm, pdhg)", text ? text : "");
}

/* ---- the problem ---------------------------------------------------------------------------------- */

mr_status mr_problem_create(mr_problem **out, mr_linop *e, const float *b, double data_norm2)
{
    *out = NULL;
    if (!e || !b)
        return mr_error(MR_EINVAL, "problem: no encoding operator or right-hand side");
    if (!(data_norm2 >= 0) || !isfinite(data_norm2))
        return mr_error(MR_EINVAL, "problem: ||d||^2 = %g, expected a finite number >= 0", data_norm2);
    mr_problem *p = calloc(1, sizeof *p);
    if (!p)
        return mr_error(MR_ENOMEM, "problem: out of memory");
    p->e = mr_linop_ref(e);
    p->be = mr_linop_backend(e);
    p->v = mr_backend_vecops(p->be);
    p->n = mr_linop_dom_size(e);
    p->b = b;
    p->dn2 = data_norm2;
    *out = p;
    return MR_OK;
}

void mr_problem_free(mr_problem *p)
{
    if (!p)
        return;
    for (int j = 0; j < p->nterms; j++)
        mr_linop_free(p->terms[j].t.op);
    mr_linop_free(p->e);
    free(p);
}

int mr_problem_nterms(const mr_problem *p) { return p ? p->nterms : 0; }
const mr_term *mr_problem_term(const mr_problem *p, int j) { return &p->terms[j].t; }

mr_status mr_problem_add_term(mr_problem *p, const mr_term *t)
{
    if (!p || !t)
        return mr_error(MR_EINVAL, "problem: no term");
    const char *name = t->name ? t->name : "term";
    if (p->nterms == MR_PROBLEM_MAX_TERMS)
        return mr_error(MR_EINVAL, "problem: at most %d terms", MR_PROBLEM_MAX_TERMS);
    if (!(t->lambda >= 0) || !isfinite(t->lambda))
        return mr_error(MR_EINVAL, "problem: term %s: lambda %g is not a finite number >= 0", name, t->lambda);
    if ((unsigned)t->penalty >= MR_PENALTY_COUNT)
        return mr_error(MR_EINVAL, "problem: term %s: unknown penalty %d", name, (int)t->penalty);
    int64_t cod[4] = {p->n, 1, 1, 1};
    if (t->op) {
        if (mr_linop_backend(t->op) != p->be)
            return mr_error(MR_EINVAL, "problem: term %s lives on another backend than E", name);
        if (mr_linop_dom_size(t->op) != p->n)
            return mr_error(MR_EINVAL, "problem: term %s takes %lld elements, the image has %lld", name,
                            (long long)mr_linop_dom_size(t->op), (long long)p->n);
        mr_linop_cod(t->op, cod);
    } else if (t->tight) {
        return mr_error(MR_EINVAL, "problem: term %s: tight needs an operator", name);
    }
    mr_term_state *s = &p->terms[p->nterms];
    s->t = *t;
    s->zn = cod[0] * cod[1] * cod[2] * cod[3];
    s->prox.kind = t->penalty;
    s->prox.groups = t->penalty == MR_PENALTY_L12 ? cod[3] : 1;
    s->prox.n = s->zn / s->prox.groups;
    s->prox.w = t->weights;
    mr_status st = mr_prox_check(&s->prox);
    if (st != MR_OK)
        return st;
    s->t.op = mr_linop_ref(t->op);
    p->nterms++;
    return MR_OK;
}

int mr_term_on_image(const mr_problem *p, int j) { return !p->terms[j].t.op || p->terms[j].t.tight; }
int mr_term_smooth(const mr_problem *p, int j) { return p->terms[j].t.penalty == MR_PENALTY_L2; }

mr_solver_kind mr_problem_auto_solver(const mr_problem *p)
{
    int nonsmooth = 0, on_image = 1;
    for (int j = 0; j < p->nterms; j++)
        if (!mr_term_smooth(p, j) && p->terms[j].t.lambda > 0) { /* a weight of 0 leaves a quadratic problem */
            nonsmooth++;
            on_image &= mr_term_on_image(p, j);
        }
    if (nonsmooth == 0)
        return MR_SOLVER_CG;
    return nonsmooth == 1 && on_image ? MR_SOLVER_FISTA : MR_SOLVER_ADMM;
}

mr_status mr_problem_check_solver(const mr_problem *p, mr_solver_kind s)
{
    int nonsmooth = 0, first = -1, off_image = -1;
    for (int j = 0; j < p->nterms; j++) {
        if (mr_term_smooth(p, j) || p->terms[j].t.lambda == 0) /* a weight of 0: no term for the solvers */
            continue;
        nonsmooth++;
        if (first < 0)
            first = j;
        if (off_image < 0 && !mr_term_on_image(p, j))
            off_image = j;
    }
    if (s == MR_SOLVER_CG && nonsmooth)
        return mr_error(MR_EINVAL, "the cg solver takes quadratic priors only, and %s is not (use fista, admm or pdhg)",
                        p->terms[first].t.name ? p->terms[first].t.name : "a term");
    if (s == MR_SOLVER_FISTA && nonsmooth > 1)
        return mr_error(MR_EINVAL, "the fista solver takes one non-quadratic prior, and this problem has %d (use admm "
                                   "or pdhg)",
                        nonsmooth);
    if (s == MR_SOLVER_FISTA && off_image >= 0)
        return mr_error(MR_EINVAL, "the fista solver needs a prior whose proximal map is known on the image, and %s's "
                                   "is not (use admm or pdhg)",
                        p->terms[off_image].t.name ? p->terms[off_image].t.name : "the prior");
    if ((unsigned)s >= MR_SOLVER_COUNT)
        return mr_error(MR_EINVAL, "unknown solver %d", (int)s);
    return MR_OK;
}

mr_status mr_problem_normal(mr_problem *p, const float *x, float *y)
{
    p->normal_apps++;
    return mr_linop_normal(p->e, x, y);
}

/* ---- term operations ------------------------------------------------------------------------------ */

float *mr_problem_vec(const mr_problem *p, int64_t n)
{
    float *x = mr_backend_alloc(p->be, n);
    if (!x)
        mr_error(MR_ENOMEM, "solver: out of memory for a vector of %lld elements", (long long)n);
    return x;
}

void mr_problem_vec_free(const mr_problem *p, float *x) { p->v->release(p->v->ctx, x); }

mr_status mr_term_forward(const mr_problem *p, int j, const float *x, float *z)
{
    const mr_term_state *s = &p->terms[j];
    if (!s->t.op) {
        p->v->copy(p->v->ctx, p->n, z, x);
        return MR_OK;
    }
    return mr_linop_forward(s->t.op, x, z);
}

mr_status mr_term_adjoint(const mr_problem *p, int j, const float *z, float *x)
{
    const mr_term_state *s = &p->terms[j];
    if (!s->t.op) {
        p->v->copy(p->v->ctx, p->n, x, z);
        return MR_OK;
    }
    return mr_linop_adjoint(s->t.op, z, x);
}

mr_status mr_term_normal(const mr_problem *p, int j, const float *x, float *y)
{
    const mr_term_state *s = &p->terms[j];
    if (!s->t.op || s->t.tight) {
        p->v->copy(p->v->ctx, p->n, y, x);
        return MR_OK;
    }
    return mr_linop_normal(s->t.op, x, y);
}

int64_t mr_term_split_size(const mr_problem *p, int j) { return mr_term_on_image(p, j) ? p->n : p->terms[j].zn; }

mr_status mr_term_split_forward(const mr_problem *p, int j, const float *x, float *z)
{
    if (mr_term_on_image(p, j)) {
        p->v->copy(p->v->ctx, p->n, z, x);
        return MR_OK;
    }
    return mr_term_forward(p, j, x, z);
}

mr_status mr_term_split_adjoint(const mr_problem *p, int j, const float *z, float *x)
{
    if (mr_term_on_image(p, j)) {
        p->v->copy(p->v->ctx, p->n, x, z);
        return MR_OK;
    }
    return mr_term_adjoint(p, j, z, x);
}

mr_status mr_term_prox_image(mr_problem *p, int j, double t, int iter, const float *v, float *out, float *zt)
{
    mr_term_state *s = &p->terms[j];
    const double tau = t * s->t.lambda;
    if (s->t.refresh)
        s->t.refresh(s->t.refresh_ctx, iter);
    if (!s->t.op) {
        mr_prox_apply(p->v, &s->prox, tau, v, out);
        return MR_OK;
    }
    mr_status st = mr_linop_forward(s->t.op, v, zt);
    if (st != MR_OK)
        return st;
    mr_prox_apply(p->v, &s->prox, tau, zt, zt);
    return mr_linop_adjoint(s->t.op, zt, out);
}

mr_status mr_problem_add_smooth_terms(mr_problem *p, const float *x, float *y, float *scratch)
{
    for (int j = 0; j < p->nterms; j++) {
        if (!mr_term_smooth(p, j) || p->terms[j].t.lambda == 0)
            continue;
        mr_status st = mr_term_normal(p, j, x, scratch);
        if (st != MR_OK)
            return st;
        mr_vec_axpy(p->v, p->n, y, p->terms[j].t.lambda, scratch);
    }
    return MR_OK;
}

/* ---- power iterations ----------------------------------------------------------------------------- */

mr_status mr_problem_power(mr_problem *p, mr_power_fn f, void *ctx, int iters, uint64_t seed, double *lam_out)
{
    *lam_out = NAN;
    const mr_vecops *v = p->v;
    const int64_t n = p->n;
    float *host = malloc((size_t)n * 2 * sizeof(float));
    float *x = mr_problem_vec(p, n), *y = mr_problem_vec(p, n);
    mr_status st = host && x && y ? MR_OK : mr_error(MR_ENOMEM, "power iteration: out of memory");
    if (st == MR_OK) {
        mr_rng r;
        mr_rng_seed(&r, seed, 7);
        for (int64_t i = 0; i < 2 * n; i++)
            host[i] = (float)(mr_rng_uniform(&r) - 0.5);
        st = v->from_host(v->ctx, n, x, host);
    }
    double lam = 0;
    for (int k = 0; st == MR_OK && k < iters; k++) {
        const double nx = v->norm(v->ctx, n, x);
        if (!(nx > 0))
            break; /* the operator vanishes on x */
        mr_vec_scale(v, n, x, 1.0 / nx);
        if ((st = f(p, ctx, x, y)) != MR_OK)
            break;
        double xy[2] = {0, 0};
        v->dot(v->ctx, n, x, y, xy);
        lam = xy[0];
        float *swap = x;
        x = y;
        y = swap;
    }
    if (st == MR_OK && v->status)
        st = v->status(v->ctx);
    if (st == MR_OK && !isfinite(lam))
        st = mr_error(MR_EINTERNAL, "power iteration: the operator returned NaN or infinite values");
    if (st == MR_OK)
        *lam_out = lam;
    free(host);
    mr_problem_vec_free(p, x);
    mr_problem_vec_free(p, y);
    return st;
}

/* E^H E + the L2 terms */
static mr_status smooth_hessian(mr_problem *p, void *ctx, const float *x, float *y)
{
    float *t = ctx;
    mr_status st = mr_problem_normal(p, x, y);
    return st == MR_OK ? mr_problem_add_smooth_terms(p, x, y, t) : st;
}

mr_status mr_problem_lipschitz(mr_problem *p, int iters, uint64_t seed, double *l)
{
    float *t = mr_problem_vec(p, p->n);
    mr_status st = t ? mr_problem_power(p, smooth_hessian, t, iters, seed, l) : MR_ENOMEM;
    mr_problem_vec_free(p, t);
    return st;
}

mr_status mr_problem_mean_eig(mr_problem *p, uint64_t seed, double *mean)
{
    float *t = mr_problem_vec(p, p->n);
    mr_status st = t ? mr_problem_power(p, smooth_hessian, t, 1, seed, mean) : MR_ENOMEM;
    mr_problem_vec_free(p, t);
    return st;
}

static mr_status term_gram(mr_problem *p, void *ctx, const float *x, float *y)
{
    return mr_term_normal(p, *(const int *)ctx, x, y);
}

mr_status mr_term_norm2(mr_problem *p, int j, double *out)
{
    *out = 1.0;
    if (mr_term_on_image(p, j))
        return MR_OK;
    double lam = NAN;
    mr_status st = mr_problem_power(p, term_gram, &j, MR_TERM_POWER_ITERS, 11, &lam);
    if (st == MR_OK) /* the estimate is from below */
        *out = lam * MR_TERM_POWER_MARGIN;
    return st;
}

mr_status mr_solve_start(mr_solve_log *l, float *x, float *nx, int *done, const char **stop)
{
    mr_problem *p = l->p;
    p->v->zero(p->v->ctx, p->n, x);
    p->v->zero(p->v->ctx, p->n, nx);
    *done = 0;
    *stop = "iterations";
    mr_status st = mr_solve_log_iter(l, 0, x, nx, 1.0);
    if (st == MR_OK && !(p->v->norm(p->v->ctx, p->n, p->b) > 0)) { /* x = 0 is the solution */
        *stop = "zero right-hand side";
        *done = 1;
    }
    return st;
}

/* ---- the per-iteration records -------------------------------------------------------------------- */

int mr_solver_default_iters(mr_solver_kind s)
{
    switch (s) {
    case MR_SOLVER_CG:
        return 60;
    case MR_SOLVER_ADMM:
        return 50;
    default:
        return 100;
    }
}

int mr_solve_iters(const mr_problem *p, const mr_solve_opts *o)
{
    if (o->iters != 0)
        return o->iters;
    return mr_solver_default_iters(o->solver == MR_SOLVER_AUTO ? mr_problem_auto_solver(p) : o->solver);
}

void mr_solve_opts_default(mr_solve_opts *o)
{
    memset(o, 0, sizeof *o);
    o->solver = MR_SOLVER_AUTO;
    o->iters = 0;
    o->inner_iters = MR_ADMM_INNER_ITERS;
    o->inner_tol = 0;
    o->relax = MR_ADMM_RELAX;
    o->adapt_rho = 0;
    const char *pc = getenv("MR_PRECOND");
    o->precond = !(pc && strcmp(pc, "off") == 0);
    o->power_iters = 30;
    o->objective = 1;
    o->seed = 1;
}

void mr_solve_result_free(mr_solve_result *res)
{
    if (!res)
        return;
    free(res->history);
    free(res->objective);
    free(res->data_term);
    free(res->term_value);
    free(res->metric);
    res->history = res->objective = res->data_term = res->term_value = res->metric = NULL;
}

mr_status mr_solve_log_begin(mr_solve_log *l, mr_problem *p, const mr_solve_opts *o, mr_solve_result *res)
{
    memset(l, 0, sizeof *l);
    l->p = p;
    l->o = o;
    l->res = res;
    l->t0 = mr_now();
    l->apps0 = p->normal_apps;
    const size_t len = (size_t)o->iters + 1;
    res->nterms = p->nterms;
    res->lipschitz = res->step = res->rho = NAN;
    res->history = calloc(len, sizeof(double));
    int ok = res->history != NULL;
    if (o->objective) {
        res->objective = calloc(len, sizeof(double));
        res->data_term = calloc(len, sizeof(double));
        res->term_value = calloc(len * (size_t)(p->nterms > 0 ? p->nterms : 1), sizeof(double));
        ok &= res->objective && res->data_term && res->term_value;
        for (int j = 0; ok && j < p->nterms; j++)
            if (p->terms[j].t.op)
                ok &= (l->z[j] = mr_problem_vec(p, p->terms[j].zn)) != NULL;
    }
    if (o->metric)
        ok &= (res->metric = calloc(len, sizeof(double))) != NULL;
    if (!ok)
        return mr_solve_log_end(l, 0, NULL, mr_error(MR_ENOMEM, "solver: out of memory for the iteration records"));
    return MR_OK;
}

/* lambda_j f_j(R_j x) */
static mr_status term_value(mr_solve_log *l, int j, const float *x, double *out)
{
    mr_problem *p = l->p;
    const mr_term_state *s = &p->terms[j];
    const float *z = x;
    if (s->t.op) {
        mr_status st = mr_linop_forward(s->t.op, x, l->z[j]);
        if (st != MR_OK)
            return st;
        z = l->z[j];
    }
    *out = s->t.lambda * mr_prox_value(p->v, &s->prox, z);
    return MR_OK;
}

mr_status mr_solve_log_iter(mr_solve_log *l, int k, const float *x, const float *nx, double history)
{
    mr_problem *p = l->p;
    mr_solve_result *r = l->res;
    const mr_vecops *v = p->v;
    mr_status st = MR_OK;
    r->history[k] = history;
    double obj = NAN;
    if (l->o->objective) {
        double xn[2] = {0, 0}, xb[2] = {0, 0};
        v->dot(v->ctx, p->n, x, nx, xn);
        v->dot(v->ctx, p->n, x, p->b, xb);
        /* 1/2 ||E x - d||^2 = 1/2 x^H E^H E x - Re x^H E^H d + 1/2 ||d||^2 */
        const double data = 0.5 * xn[0] - xb[0] + 0.5 * p->dn2;
        r->data_term[k] = data;
        obj = data;
        for (int j = 0; st == MR_OK && j < p->nterms; j++) {
            double tv = 0;
            st = term_value(l, j, x, &tv);
            r->term_value[(size_t)j * ((size_t)l->o->iters + 1) + (size_t)k] = tv;
            obj += tv;
        }
        r->objective[k] = obj;
    }
    double m = NAN;
    if (st == MR_OK && l->o->metric) {
        const double t0 = mr_now();
        m = r->metric[k] = l->o->metric(l->o->metric_ctx, x);
        r->metric_seconds += mr_now() - t0;
    }
    if (st == MR_OK && v->status)
        st = v->status(v->ctx);
    if (st == MR_OK && l->o->objective && !isfinite(obj))
        st = mr_error(MR_EINTERNAL, "%s: the objective is not finite at iteration %d (NaN or infinite values)",
                      mr_solver_name(r->solver), k);
    if (st == MR_OK && k > 0 && l->o->progress)
        l->o->progress(l->o->progress_ctx, k, obj, history, m);
    return st;
}

double mr_solve_rel_change(const mr_vecops *v, int64_t n, const float *x, const float *xold, float *d)
{
    mr_vec_axpby(v, n, d, 1.0, x, -1.0, xold);
    const double dn = v->norm(v->ctx, n, d), xn = v->norm(v->ctx, n, x);
    return xn > 0 ? dn / xn : (dn > 0 ? 1.0 : 0.0);
}

mr_status mr_solve_log_end(mr_solve_log *l, int iterations, const char *stop, mr_status st)
{
    for (int j = 0; j < MR_PROBLEM_MAX_TERMS; j++)
        if (l->z[j])
            mr_problem_vec_free(l->p, l->z[j]);
    memset(l->z, 0, sizeof l->z);
    mr_solve_result *r = l->res;
    if (st != MR_OK) {
        mr_solve_result_free(r);
        return st;
    }
    r->iterations = iterations;
    r->stop = stop;
    r->normal_apps = l->p->normal_apps - l->apps0;
    r->seconds = mr_now() - l->t0;
    return MR_OK;
}

/* ---- solve ---------------------------------------------------------------------------------------- */

mr_status mr_problem_solve(mr_problem *p, const mr_solve_opts *given, float *x, mr_solve_result *res)
{
    memset(res, 0, sizeof *res);
    if (!p || !given || !x)
        return mr_error(MR_EINVAL, "solve: no problem, options or output");
    mr_solve_opts oo = *given;
    const mr_solve_opts *o = &oo;
    const mr_solver_kind s = given->solver == MR_SOLVER_AUTO ? mr_problem_auto_solver(p) : given->solver;
    oo.iters = mr_solve_iters(p, given);
    if (o->iters < 1 || o->inner_iters < 1 || o->power_iters < 1 || !(o->tol >= 0) || !isfinite(o->tol) ||
        !(o->rho >= 0) || !isfinite(o->rho))
        return mr_error(MR_EINVAL, "solve: iterations %d, inner %d, power %d (each >= 1), tolerance %g and rho %g "
                                   "(finite, >= 0)",
                        o->iters, o->inner_iters, o->power_iters, o->tol, o->rho);
    if (!(o->relax > 0 && o->relax < 2))
        return mr_error(MR_EINVAL, "solve: ADMM's over-relaxation %g, expected 0 < alpha < 2", o->relax);
    mr_status st = mr_problem_check_solver(p, s);
    if (st != MR_OK)
        return st;
    res->solver = s;
    switch (s) {
    case MR_SOLVER_CG:
        return mr_solve_cg(p, o, x, res);
    case MR_SOLVER_FISTA:
        return mr_solve_fista(p, o, x, res);
    case MR_SOLVER_ADMM:
        return mr_solve_admm(p, o, x, res);
    default:
        return mr_solve_pdhg(p, o, x, res);
    }
}
