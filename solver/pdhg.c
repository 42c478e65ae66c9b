/* The primal-dual method with a smooth term (Condat 2013, Vu 2013) on a problem of solver/problem.h:
 * f(x) = 1/2 ||E x - d||^2 + the L2 terms is smooth (gradient Lipschitz constant L from the power
 * iteration), every other term g_j(K_j x) gets a dual variable y_j (K_j = R_j, or the identity for a
 * term whose prox is known on the image: g_j = lambda_j f_j(R_j .) then):
 *
 *   x_{k+1} = x_k - tau (grad f(x_k) + sum_j K_j^H y_j)
 *   y_j     = prox_{sigma g_j*}(y_j + sigma K_j (2 x_{k+1} - x_k))
 *
 * converging for tau (L/2 + sigma ||K||^2) < 1 (||K||^2 <= sum_j ||K_j||^2, each from a power iteration);
 * sigma = MR_PDHG_SIGMA L / ||K||^2 (or the options' rho times L / ||K||^2 when given), tau from the
 * condition with a margin. E^H E is applied once per iteration, to x_{k+1} (the next gradient and the
 * objective). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "problem_internal.h"

#define MR_PDHG_SIGMA 0.5
#define MR_PDHG_MARGIN 0.95

typedef struct {
    int j;
    int64_t m;      /* elements of y (R's codomain, or the image) */
    float *y, *w;   /* dual; scratch of y's size */
    float *zt;      /* tight term's prox: R's codomain */
} dual;

/* y = prox_{sigma g*}(v) in place (Moreau: v - sigma prox_{g / sigma}(v / sigma) for terms on the image) */
static mr_status dual_prox(mr_problem *p, dual *d, double sigma, int iter)
{
    const mr_vecops *v = p->v;
    const mr_term_state *ts = &p->terms[d->j];
    if (!mr_term_on_image(p, d->j)) {
        if (ts->t.refresh)
            ts->t.refresh(ts->t.refresh_ctx, iter);
        mr_prox_conj_apply(v, &ts->prox, ts->t.lambda, sigma, d->y, d->y);
        return MR_OK;
    }
    mr_vec_scale(v, d->m, d->y, 1.0 / sigma);
    mr_status st = mr_term_prox_image(p, d->j, 1.0 / sigma, iter, d->y, d->w, d->zt);
    if (st == MR_OK) /* y = sigma (v / sigma - prox(v / sigma)) */
        mr_vec_axpby(v, d->m, d->y, sigma, d->y, -sigma, d->w);
    return st;
}

mr_status mr_solve_pdhg(mr_problem *p, const mr_solve_opts *o, float *x, mr_solve_result *res)
{
    const mr_vecops *v = p->v;
    const int64_t n = p->n;
    dual ds[MR_PROBLEM_MAX_TERMS];
    int nd = 0;
    memset(ds, 0, sizeof ds);
    mr_solve_log log;
    mr_status st = mr_solve_log_begin(&log, p, o, res);
    if (st != MR_OK)
        return st;
    res->history_name = "relative change";
    float *xo = mr_problem_vec(p, n), *nx = mr_problem_vec(p, n), *g = mr_problem_vec(p, n),
          *t = mr_problem_vec(p, n);
    if (!xo || !nx || !g || !t)
        st = MR_ENOMEM;
    for (int j = 0; st == MR_OK && j < p->nterms; j++) {
        if (mr_term_smooth(p, j))
            continue;
        dual *d = &ds[nd++];
        d->j = j;
        d->m = mr_term_split_size(p, j);
        if (!(d->y = mr_problem_vec(p, d->m)) || !(d->w = mr_problem_vec(p, d->m)) ||
            (p->terms[j].t.tight && !(d->zt = mr_problem_vec(p, p->terms[j].zn))))
            st = MR_ENOMEM;
    }
    /* L, and ||K||^2 <= sum_j ||K_j||^2 by power iterations on K_j^H K_j */
    double l = NAN, k2 = 0;
    if (st == MR_OK)
        st = mr_problem_lipschitz(p, o->power_iters, o->seed, &l);
    for (int i = 0; st == MR_OK && i < nd; i++) {
        double r = 1.0;
        st = mr_term_norm2(p, ds[i].j, &r);
        k2 += r;
    }
    if (k2 <= 0)
        k2 = 1.0;
    const double sigma = (o->rho > 0 ? o->rho : MR_PDHG_SIGMA) * l / k2;
    const double tau = MR_PDHG_MARGIN / (0.5 * l * 1.05 + sigma * k2);
    res->lipschitz = l;
    res->step = tau;
    int k = 0, done = 0;
    const char *stop = "iterations";
    for (int i = 0; st == MR_OK && i < nd; i++)
        v->zero(v->ctx, ds[i].m, ds[i].y);
    if (st == MR_OK)
        st = mr_solve_start(&log, x, nx, &done, &stop);
    if (st == MR_OK && !done && (!(l > 0) || !isfinite(sigma) || !isfinite(tau))) {
        stop = "breakdown";
        done = 1;
    }
    while (st == MR_OK && !done && k < o->iters) {
        k++;
        /* g = grad f(x) + sum_j K_j^H y_j */
        mr_vec_axpby(v, n, g, 1.0, nx, -1.0, p->b);
        st = mr_problem_add_smooth_terms(p, x, g, t);
        for (int i = 0; st == MR_OK && i < nd; i++)
            if ((st = mr_term_split_adjoint(p, ds[i].j, ds[i].y, t)) == MR_OK)
                mr_vec_axpy(v, n, g, 1.0, t);
        if (st != MR_OK)
            break;
        v->copy(v->ctx, n, xo, x);
        mr_vec_axpy(v, n, x, -tau, g);
        if ((st = mr_problem_normal(p, x, nx)) != MR_OK)
            break;
        /* y_j = prox(y_j + sigma K_j (2 x - x_old)) */
        mr_vec_axpby(v, n, g, 2.0, x, -1.0, xo);
        for (int i = 0; st == MR_OK && i < nd; i++) {
            dual *d = &ds[i];
            if ((st = mr_term_split_forward(p, d->j, g, d->w)) != MR_OK)
                break;
            mr_vec_axpy(v, d->m, d->y, sigma, d->w);
            st = dual_prox(p, d, sigma, k);
        }
        if (st != MR_OK)
            break;
        const double hist = mr_solve_rel_change(v, n, x, xo, t);
        if ((st = mr_solve_log_iter(&log, k, x, nx, hist)) != MR_OK)
            break;
        if (o->tol > 0 && hist <= o->tol) {
            stop = "tolerance";
            break;
        }
    }
    for (int i = 0; i < nd; i++) {
        mr_problem_vec_free(p, ds[i].y);
        mr_problem_vec_free(p, ds[i].w);
        mr_problem_vec_free(p, ds[i].zt);
    }
    mr_problem_vec_free(p, xo);
    mr_problem_vec_free(p, nx);
    mr_problem_vec_free(p, g);
    mr_problem_vec_free(p, t);
    return mr_solve_log_end(&log, k, stop, st);
}
