/* FISTA (Beck & Teboulle 2009) with adaptive restart (O'Donoghue & Candes 2015, gradient scheme) on a
 * problem of solver/problem.h with at most one non-smooth term, whose prox is known on the image
 * (identity or tight operator):
 *
 *   x_k     = prox_{t g}(y_{k-1} - t grad f(y_{k-1})),   t = 1/L,
 *   theta_k = (1 + sqrt(1 + 4 theta_{k-1}^2)) / 2,        beta = (theta_{k-1} - 1) / theta_k,
 *   y_k     = x_k + beta (x_k - x_{k-1}),
 * restarting (theta = 1, beta = 0) when Re <y_{k-1} - x_k, x_k - x_{k-1}> > 0. f = 1/2 ||E x - d||^2 + the
 * L2 terms, grad f(y) = E^H E y - b + sum lambda_q R_q^H R_q y. E^H E is applied once per iteration, to x_k:
 * E^H E y_k = (1 + beta) E^H E x_k - beta E^H E x_{k-1}, and E^H E x_k also gives the objective. */
#include <math.h>
#include <stdlib.h>

#include "../base/log.h"
#include "problem_internal.h"

/* L from the power iteration is an estimate from below: the step keeps this margin. */
#define MR_FISTA_L_MARGIN 1.05

enum { X, XO, Y, NX, NXO, NY, G, D, NVEC };

mr_status mr_solve_fista(mr_problem *p, const mr_solve_opts *o, float *x_out, mr_solve_result *res)
{
    const mr_vecops *v = p->v;
    const int64_t n = p->n;
    int j = -1; /* the non-smooth term */
    for (int i = 0; i < p->nterms; i++)
        if (!mr_term_smooth(p, i))
            j = i;
    mr_solve_log log;
    mr_status st = mr_solve_log_begin(&log, p, o, res);
    if (st != MR_OK)
        return st;
    res->history_name = "relative change";
    float *w[NVEC] = {0}, *zt = NULL;
    w[X] = x_out;
    for (int i = 1; i < NVEC && st == MR_OK; i++)
        if (!(w[i] = mr_problem_vec(p, n)))
            st = MR_ENOMEM;
    if (st == MR_OK && j >= 0 && p->terms[j].t.op && !(zt = mr_problem_vec(p, p->terms[j].zn)))
        st = MR_ENOMEM;
    double l = NAN;
    if (st == MR_OK)
        st = mr_problem_lipschitz(p, o->power_iters, o->seed, &l);
    int k = 0, done = 0;
    const char *stop = "iterations";
    for (int i = 0; st == MR_OK && i < NVEC; i++)
        v->zero(v->ctx, n, w[i]);
    if (st == MR_OK)
        st = mr_solve_start(&log, w[X], w[NX], &done, &stop);
    if (st == MR_OK && !done && !(l > 0)) { /* E^H E vanishes */
        stop = "breakdown";
        done = 1;
    }
    res->lipschitz = l;
    const double t = 1.0 / (MR_FISTA_L_MARGIN * l);
    res->step = t;
    double theta = 1.0;
    while (st == MR_OK && !done && k < o->iters) {
        k++;
        /* G = y - t (E^H E y - b + smooth terms(y)) */
        mr_vec_axpby(v, n, w[G], 1.0, w[NY], -1.0, p->b);
        if ((st = mr_problem_add_smooth_terms(p, w[Y], w[G], w[D])) != MR_OK)
            break;
        mr_vec_axpby(v, n, w[G], 1.0, w[Y], -t, w[G]);
        /* x_{k-1} moves to XO (and its normal to NXO); x_k = prox(G) */
        float *s = w[XO];
        w[XO] = w[X];
        w[X] = s;
        s = w[NXO];
        w[NXO] = w[NX];
        w[NX] = s;
        if (j >= 0)
            st = mr_term_prox_image(p, j, t, k, w[G], w[X], zt);
        else
            v->copy(v->ctx, n, w[X], w[G]);
        if (st == MR_OK)
            st = mr_problem_normal(p, w[X], w[NX]);
        if (st != MR_OK)
            break;
        /* restart test: Re <y - x_k, x_k - x_{k-1}> > 0 */
        double theta_new = 0.5 * (1.0 + sqrt(1.0 + 4.0 * theta * theta)), dd[2] = {0, 0};
        mr_vec_axpby(v, n, w[D], 1.0, w[Y], -1.0, w[X]);
        mr_vec_axpby(v, n, w[G], 1.0, w[X], -1.0, w[XO]);
        v->dot(v->ctx, n, w[D], w[G], dd);
        if (dd[0] > 0) {
            theta_new = 1.0;
            res->restarts++;
        }
        const double beta = theta_new == 1.0 ? 0.0 : (theta - 1.0) / theta_new;
        theta = theta_new;
        mr_vec_axpby(v, n, w[Y], 1.0 + beta, w[X], -beta, w[XO]);
        mr_vec_axpby(v, n, w[NY], 1.0 + beta, w[NX], -beta, w[NXO]);
        const double hist = mr_solve_rel_change(v, n, w[X], w[XO], w[D]);
        if ((st = mr_solve_log_iter(&log, k, w[X], w[NX], hist)) != MR_OK)
            break;
        if (o->tol > 0 && hist <= o->tol) {
            stop = "tolerance";
            break;
        }
    }
    if (st == MR_OK && w[X] != x_out) /* after the swaps the last iterate may sit in another buffer */
        v->copy(v->ctx, n, x_out, w[X]);
    for (int i = 0; i < NVEC; i++) /* x_out is in exactly one slot; the others were allocated here */
        if (w[i] != x_out)
            mr_problem_vec_free(p, w[i]);
    mr_problem_vec_free(p, zt);
    if (st == MR_OK && res->restarts)
        mr_log(MR_LOG_DEBUG, "fista: %d adaptive restarts in %d iterations", res->restarts, k);
    return mr_solve_log_end(&log, k, stop, st);
}
