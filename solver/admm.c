/* ADMM (scaled form; Boyd, Parikh, Chu, Peleato & Eckstein 2011) on a problem of solver/problem.h. Every
 * non-smooth term j is split off, z_j = R_j x (z_j = x for a term whose prox is known on the image:
 * identity or tight operator), with scaled duals u_j:
 *
 *   x   <- argmin 1/2 ||E x - d||^2 + sum_L2 lambda_q/2 ||R_q x||^2 + rho/2 sum_j ||R_j x - z_j + u_j||^2
 *          i.e. (E^H E + sum_q lambda_q R_q^H R_q + rho sum_j R_j^H R_j) x = b + rho sum_j R_j^H (z_j - u_j),
 *          by `inner_iters` CG iterations started from the previous x (the Toeplitz normal again; fewer
 *          with inner_tol, when ||r|| <= inner_tol ||b||);
 *   h_j =  alpha R_j x + (1 - alpha) z_j       (over-relaxation, section 3.4.3 of the paper; alpha = relax)
 *   z_j <- prox_{lambda_j / rho f_j}(h_j + u_j);
 *   u_j <- u_j + h_j - z_j;
 * rho starts at the scale of E^H E (its largest eigenvalue from a power iteration, times MR_ADMM_RHO0,
 * divided by the largest ||R_j||^2) unless given, and follows residual balancing (3.4.1 of the paper):
 * doubled when the primal residual ||R x - z|| exceeds 10 times the dual one rho ||sum R_j^H (z_j - z_j,old)||,
 * halved in the opposite case (u rescaled with it). E^H E x for the objective comes from the inner CG's
 * residual: A x = rhs - r. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"
#include "cg.h"
#include "problem_internal.h"

#define MR_ADMM_RHO0 0.5 /* rho = MR_ADMM_RHO0 x the mean eigenvalue of E^H E (+ the L2 terms) */
#define MR_ADMM_MU 10.0    /* residual balancing: act when one residual exceeds MR_ADMM_MU times the other */
#define MR_ADMM_TAU 2.0    /* ... by this factor */
/* The x-update's CG starts from the previous x with r_0 = rhs - rhs_prev + r_prev (A unchanged), so the
 * warm start costs no application of E^H E; every MR_ADMM_REFRESH iterations (and after rho changed)
 * r_0 is computed afresh, so that the recurrence's rounding does not accumulate. */
#define MR_ADMM_REFRESH 10

typedef struct {
    int j;         /* the term */
    int64_t m;     /* elements of z (R's codomain, or the image) */
    float *z, *u, *rx, *zo;
    float *zt; /* a tight term's prox: R's codomain */
} split;

typedef struct {
    mr_problem *p;
    const mr_solve_opts *o;
    split s[MR_PROBLEM_MAX_TERMS];
    int ns;
    double rho;
    float *t, *r; /* image scratch; the inner CG's final residual */
    float *rhs_prev, *r_prev, *r0; /* the previous x-update's right-hand side and residual; the next r_0 */
    mr_linop_symbol sym; /* the system's model for the preconditioner (rho included) */
    int precond;         /* 1: the x-updates' CG is preconditioned by sym */
} admm;

/* y += (smooth terms + rho sum_j R_j^H R_j) x: the system's part besides E^H E */
static mr_status add_extra(admm *a, const float *x, float *y, float *scratch)
{
    mr_problem *p = a->p;
    mr_status st = mr_problem_add_smooth_terms(p, x, y, scratch);
    for (int i = 0; st == MR_OK && i < a->ns; i++) {
        const split *s = &a->s[i];
        if (mr_term_on_image(p, s->j)) {
            mr_vec_axpy(p->v, p->n, y, a->rho, x);
        } else if ((st = mr_term_normal(p, s->j, x, scratch)) == MR_OK) {
            mr_vec_axpy(p->v, p->n, y, a->rho, scratch);
        }
    }
    return st;
}

/* The model (linop.h) of term j's R_j^H R_j: the identity for a term on the image, else its operator's (no
 * Toeplitz part). 0 when it has none. */
static int term_symbol(const mr_problem *p, int j, mr_linop_symbol *y)
{
    if (mr_term_on_image(p, j)) {
        *y = (mr_linop_symbol){1, NULL, 0, 0, 1};
        return 1;
    }
    *y = mr_linop_symbol_of(p->terms[j].t.op);
    return y->known && !y->tp && y->a == 0;
}

/* The x-update system's model, E^H E's + sum_L2 lambda_q R_q^H R_q's + rho sum_j R_j^H R_j's, into a->sym;
 * a->precond = 0 when E's model has no Toeplitz normal (or E maps coil images), a term has no model, or a term
 * changes between iterations (a refresh hook: the cycle-spun wavelet, whose split ADMM converged worse with
 * exact x-updates: 23.15 against 24.43 dB with wavelets alone on a 48-spoke 128^2 scan, objective 0.0177
 * against 0.0158; docs/SOLVERS.md). */
static void system_symbol(admm *a)
{
    mr_problem *p = a->p;
    int64_t dom[4];
    mr_linop_dom(p->e, dom);
    a->sym = mr_linop_symbol_of(p->e);
    a->precond = a->o->precond && a->sym.known && a->sym.tp && a->sym.a > 0 && dom[3] == 1;
    for (int j = 0; a->precond && j < p->nterms; j++) {
        mr_linop_symbol y;
        const double w = mr_term_smooth(p, j) ? p->terms[j].t.lambda : a->rho;
        a->precond = term_symbol(p, j, &y) && !p->terms[j].t.refresh;
        a->sym.g += w * y.g;
        a->sym.s += w * y.s;
    }
}

/* z = M^-1 r, M the system's model (the inner CG's preconditioner) */
static mr_status precond_apply(void *ctx, const float *r, float *z)
{
    const admm *a = ctx;
    return mr_linop_symbol_solve(&a->sym, r, z);
}

/* y = (E^H E + smooth terms + rho sum_j R_j^H R_j) x */
static mr_status system_apply(void *ctx, const float *x, float *y)
{
    admm *a = ctx;
    mr_status st = mr_problem_normal(a->p, x, y);
    return st == MR_OK ? add_extra(a, x, y, a->t) : st;
}

static mr_status keep_residual(void *ctx, int k, const float *x, const float *r)
{
    admm *a = ctx;
    (void)k, (void)x;
    a->p->v->copy(a->p->v->ctx, a->p->n, a->r, r);
    return MR_OK;
}

static void split_free(admm *a)
{
    for (int i = 0; i < a->ns; i++) {
        mr_problem_vec_free(a->p, a->s[i].z);
        mr_problem_vec_free(a->p, a->s[i].u);
        mr_problem_vec_free(a->p, a->s[i].rx);
        mr_problem_vec_free(a->p, a->s[i].zo);
        mr_problem_vec_free(a->p, a->s[i].zt);
    }
    mr_problem_vec_free(a->p, a->t);
    mr_problem_vec_free(a->p, a->r);
    mr_problem_vec_free(a->p, a->rhs_prev);
    mr_problem_vec_free(a->p, a->r_prev);
    mr_problem_vec_free(a->p, a->r0);
}

/* One split per non-smooth term: z, u, R x, z_old (and a tight term's prox scratch). */
static mr_status splits_alloc(admm *a)
{
    mr_problem *p = a->p;
    for (int j = 0; j < p->nterms; j++) {
        if (mr_term_smooth(p, j))
            continue;
        split *s = &a->s[a->ns++];
        s->j = j;
        s->m = mr_term_split_size(p, j);
        if (!(s->z = mr_problem_vec(p, s->m)) || !(s->u = mr_problem_vec(p, s->m)) ||
            !(s->rx = mr_problem_vec(p, s->m)) || !(s->zo = mr_problem_vec(p, s->m)) ||
            (p->terms[j].t.tight && !(s->zt = mr_problem_vec(p, p->terms[j].zn))))
            return MR_ENOMEM;
    }
    return MR_OK;
}

/* rhs = b + rho sum_j R_j^H (z_j - u_j) */
static mr_status x_update_rhs(admm *a, float *rhs)
{
    mr_problem *p = a->p;
    const mr_vecops *v = p->v;
    mr_status st = MR_OK;
    v->copy(v->ctx, p->n, rhs, p->b);
    for (int i = 0; st == MR_OK && i < a->ns; i++) {
        split *s = &a->s[i];
        mr_vec_axpby(v, s->m, s->rx, 1.0, s->z, -1.0, s->u);
        if ((st = mr_term_split_adjoint(p, s->j, s->rx, a->t)) == MR_OK)
            mr_vec_axpy(v, p->n, rhs, a->rho, a->t);
    }
    return st;
}

/* The z and u updates of iteration k (relaxed: h_j = alpha R_j x + (1 - alpha) z_j,old): z_j = prox(h_j + u_j),
 * u_j += h_j - z_j; sd = sum_j R_j^H (z_j -
 * z_j,old) (the dual residual's direction) and *prim2 = sum_j ||R_j x - z_j||^2 (the primal residual). */
static mr_status z_u_update(admm *a, const float *x, int k, float *sd, double *prim2)
{
    mr_problem *p = a->p;
    const mr_vecops *v = p->v;
    const int64_t n = p->n;
    mr_status st = MR_OK;
    *prim2 = 0;
    v->zero(v->ctx, n, sd);
    for (int i = 0; st == MR_OK && i < a->ns; i++) {
        split *s = &a->s[i];
        const mr_term_state *ts = &p->terms[s->j];
        if ((st = mr_term_split_forward(p, s->j, x, s->rx)) != MR_OK)
            break;
        v->copy(v->ctx, s->m, s->zo, s->z);
        const double al = a->o->relax;
        mr_vec_axpby(v, s->m, s->z, al, s->rx, 1.0 - al, s->zo); /* h = al R x + (1 - al) z_old */
        mr_vec_axpy(v, s->m, s->u, 1.0, s->z);                   /* u = u + h, and z = its prox */
        if (mr_term_on_image(p, s->j)) {
            st = mr_term_prox_image(p, s->j, 1.0 / a->rho, k, s->u, s->z, s->zt);
        } else {
            if (ts->t.refresh)
                ts->t.refresh(ts->t.refresh_ctx, k);
            mr_prox_apply(v, &ts->prox, ts->t.lambda / a->rho, s->u, s->z);
        }
        if (st != MR_OK)
            break;
        mr_vec_axpy(v, s->m, s->u, -1.0, s->z); /* u = u + h - z */
        mr_vec_axpby(v, s->m, s->zo, 1.0, s->z, -1.0, s->zo); /* z - z_old */
        if ((st = mr_term_split_adjoint(p, s->j, s->zo, a->t)) == MR_OK)
            mr_vec_axpy(v, n, sd, 1.0, a->t);
        mr_vec_axpby(v, s->m, s->rx, 1.0, s->rx, -1.0, s->z); /* R x - z */
        const double pr = v->norm(v->ctx, s->m, s->rx);
        *prim2 += pr * pr;
    }
    return st;
}

/* Residual balancing: rho doubled (halved) when the primal residual exceeds MR_ADMM_MU times the dual one
 * (the reverse), the scaled duals u rescaled with it. */
static void balance_rho(admm *a, int k, double prim, double dual)
{
    if (!(prim > MR_ADMM_MU * dual || dual > MR_ADMM_MU * prim))
        return;
    const double f = prim > dual ? MR_ADMM_TAU : 1.0 / MR_ADMM_TAU;
    a->rho *= f;
    for (int i = 0; i < a->ns; i++)
        mr_vec_scale(a->p->v, a->s[i].m, a->s[i].u, 1.0 / f);
    mr_log(MR_LOG_DEBUG, "admm: iteration %d: primal residual %.3e, dual %.3e: rho -> %.4g", k, prim, dual, a->rho);
}

mr_status mr_solve_admm(mr_problem *p, const mr_solve_opts *o, float *x, mr_solve_result *res)
{
    const mr_vecops *v = p->v;
    const int64_t n = p->n;
    admm a;
    memset(&a, 0, sizeof a);
    a.p = p;
    a.o = o;
    mr_solve_log log;
    mr_status st = mr_solve_log_begin(&log, p, o, res);
    if (st != MR_OK)
        return st;
    res->history_name = "relative change";
    float *rhs = mr_problem_vec(p, n), *xo = mr_problem_vec(p, n), *nx = mr_problem_vec(p, n),
          *sd = mr_problem_vec(p, n);
    a.t = mr_problem_vec(p, n);
    a.r = mr_problem_vec(p, n);
    a.rhs_prev = mr_problem_vec(p, n);
    a.r_prev = mr_problem_vec(p, n);
    a.r0 = mr_problem_vec(p, n);
    if (!rhs || !xo || !nx || !sd || !a.t || !a.r || !a.rhs_prev || !a.r_prev || !a.r0)
        st = MR_ENOMEM;
    if (st == MR_OK)
        st = splits_alloc(&a);
    double l = NAN;
    if (st == MR_OK && o->rho > 0) {
        a.rho = o->rho;
    } else if (st == MR_OK) {
        st = mr_problem_mean_eig(p, o->seed, &l);
        a.rho = MR_ADMM_RHO0 * l;
    }
    int k = 0, done = 0;
    const char *stop = "iterations";
    for (int i = 0; st == MR_OK && i < a.ns; i++) {
        v->zero(v->ctx, a.s[i].m, a.s[i].z);
        v->zero(v->ctx, a.s[i].m, a.s[i].u);
    }
    if (st == MR_OK)
        v->zero(v->ctx, n, a.rhs_prev);
    if (st == MR_OK)
        st = mr_solve_start(&log, x, nx, &done, &stop);
    if (st == MR_OK && !done && (!(a.rho > 0) || !isfinite(a.rho)))
        st = mr_error(MR_EINTERNAL, "admm: rho = %g (the normal operator's scale %g)", a.rho, l);
    mr_cg_opts co;
    mr_cg_opts_default(&co);
    co.iters = o->inner_iters;
    co.tol_abs = o->inner_tol * (st == MR_OK ? v->norm(v->ctx, n, p->b) : 0);
    double rho_prev = NAN;
    co.normal = system_apply;
    co.normal_ctx = &a;
    co.iterate = keep_residual;
    co.iterate_ctx = &a;
    co.warm_start = 1;
    while (st == MR_OK && !done && k < o->iters) {
        k++;
        st = x_update_rhs(&a, rhs);
        v->copy(v->ctx, n, xo, x);
        co.r0 = NULL;
        if (a.rho == rho_prev && k % MR_ADMM_REFRESH != 0) { /* r_0 = rhs - rhs_prev + r_prev */
            mr_vec_axpby(v, n, a.r0, 1.0, rhs, -1.0, a.rhs_prev);
            mr_vec_axpy(v, n, a.r0, 1.0, a.r_prev);
            co.r0 = a.r0;
        }
        system_symbol(&a); /* rho may have changed */
        co.precond = a.precond ? precond_apply : NULL;
        co.precond_ctx = &a;
        res->preconditioned = a.precond;
        mr_cg_result cr;
        if (st == MR_OK && (st = mr_cg_solve(v, n, rhs, x, &co, &cr)) == MR_OK) {
            res->inner_total += cr.iterations;
            mr_log(MR_LOG_DEBUG, "admm: iteration %d: x-update %d CG iteration(s), residual %.3e -> %.3e (stop at %.3e)%s",
                   k, cr.iterations, cr.r0_norm, cr.r0_norm * cr.final_rel_resid, co.tol_abs,
                   co.r0 ? "" : ", r_0 computed");
            mr_cg_result_free(&cr);
        }
        if (st == MR_OK) { /* keep this update's rhs and residual for the next warm start */
            float *sw = a.rhs_prev;
            a.rhs_prev = rhs;
            rhs = sw;
            v->copy(v->ctx, n, a.r_prev, a.r);
            rho_prev = a.rho;
        }
        /* E^H E x = rhs - r - smooth terms(x) - rho sum_j R_j^H R_j x, before rho changes */
        if (st == MR_OK && o->objective) {
            mr_vec_axpby(v, n, nx, 1.0, a.rhs_prev, -1.0, a.r); /* rhs_prev: this update's */
            v->zero(v->ctx, n, sd);
            if ((st = add_extra(&a, x, sd, a.t)) == MR_OK)
                mr_vec_axpy(v, n, nx, -1.0, sd);
        }
        if (st != MR_OK)
            break;
        double prim2;
        if ((st = z_u_update(&a, x, k, sd, &prim2)) != MR_OK)
            break;
        const double prim = sqrt(prim2), dual = a.rho * v->norm(v->ctx, n, sd);
        const double hist = mr_solve_rel_change(v, n, x, xo, a.t);
        if ((st = mr_solve_log_iter(&log, k, x, nx, hist)) != MR_OK)
            break;
        if (o->tol > 0 && hist <= o->tol) {
            stop = "tolerance";
            break;
        }
        if (o->adapt_rho)
            balance_rho(&a, k, prim, dual);
    }
    res->rho = a.rho;
    split_free(&a);
    mr_problem_vec_free(p, rhs);
    mr_problem_vec_free(p, xo);
    mr_problem_vec_free(p, nx);
    mr_problem_vec_free(p, sd);
    return mr_solve_log_end(&log, k, stop, st);
}
