#include "cg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"

void mr_cg_opts_default(mr_cg_opts *o)
{
    memset(o, 0, sizeof *o);
    o->iters = 60;
}

const char *mr_cg_stop_name(mr_cg_stop stop)
{
    switch (stop) {
    case MR_CG_STOP_ITERS:
        return "iterations";
    case MR_CG_STOP_TOL:
        return "tolerance";
    case MR_CG_STOP_BREAKDOWN:
        return "breakdown";
    case MR_CG_STOP_ZERO_RHS:
        return "zero right-hand side";
    }
    return "unknown";
}

void mr_cg_result_free(mr_cg_result *res)
{
    if (!res)
        return;
    free(res->rel_resid);
    free(res->metric);
    res->rel_resid = NULL;
    res->metric = NULL;
}

static double run_metric(const mr_cg_opts *o, const float *x, mr_cg_result *res)
{
    double t0 = mr_now();
    double v = o->metric(o->metric_ctx, x);
    res->metric_seconds += mr_now() - t0;
    return v;
}

/* q = (A + lambda R^H R) p, using t as scratch for R^H R p. */
static mr_status apply_system(const mr_vecops *ops, int64_t n, const mr_cg_opts *o, const float *p, float *q,
                              float *t)
{
    mr_status st = o->normal(o->normal_ctx, p, q);
    if (st != MR_OK)
        return st;
    if (o->lambda > 0) {
        if (o->reg) {
            st = o->reg(o->reg_ctx, p, t);
            if (st != MR_OK)
                return st;
            mr_vec_axpy(ops, n, q, o->lambda, t);
        } else {
            mr_vec_axpy(ops, n, q, o->lambda, p);
        }
    }
    return MR_OK;
}

/* z = M^-1 r and *rz = Re r^H z, which a positive definite M makes > 0 for r != 0; the caller stops (as at a
 * breakdown) when rounding made it <= 0. NaN or infinite values are an error (iteration k, for the message). */
static mr_status precondition(const mr_vecops *ops, int64_t n, const mr_cg_opts *o, const float *r, float *z,
                              double *rz, int k)
{
    mr_status st = o->precond(o->precond_ctx, r, z);
    if (st != MR_OK)
        return st;
    double d[2];
    ops->dot(ops->ctx, n, r, z, d);
    if (ops->status && (st = ops->status(ops->ctx)) != MR_OK)
        return st;
    if (!isfinite(d[0]))
        return mr_error(MR_EINTERNAL, "cg: the preconditioner returned NaN or infinite values at iteration %d", k);
    *rz = d[0];
    return MR_OK;
}

mr_status mr_cg_check_params(int iters, double lambda, double tol)
{
    if (iters < 1)
        return mr_error(MR_EINVAL, "cg: iterations = %d, expected >= 1", iters);
    if (!(lambda >= 0) || !isfinite(lambda))
        return mr_error(MR_EINVAL, "cg: lambda = %g, expected a finite number >= 0", lambda);
    if (!(tol >= 0) || !isfinite(tol))
        return mr_error(MR_EINVAL, "cg: tolerance = %g, expected a finite number >= 0", tol);
    return MR_OK;
}

mr_status mr_cg_solve(const mr_vecops *ops, int64_t n, const float *b, float *x, const mr_cg_opts *o,
                      mr_cg_result *res)
{
    memset(res, 0, sizeof *res);
    if (!o->normal)
        return mr_error(MR_EINVAL, "cg: no normal operator given");
    mr_status st = mr_cg_check_params(o->iters, o->lambda, o->tol);
    if (st != MR_OK)
        return st;
    if (n < 1)
        return mr_error(MR_EINVAL, "cg: vector length %lld, expected >= 1", (long long)n);

    float *r = ops->alloc(ops->ctx, n), *p = ops->alloc(ops->ctx, n), *q = ops->alloc(ops->ctx, n);
    float *t = (o->lambda > 0 && o->reg) ? ops->alloc(ops->ctx, n) : NULL;
    float *z = o->precond ? ops->alloc(ops->ctx, n) : NULL; /* M^-1 r */
    res->rel_resid = calloc((size_t)o->iters + 1, sizeof(double));
    res->metric = o->metric ? calloc((size_t)o->iters + 1, sizeof(double)) : NULL;
    if (!r || !p || !q || (o->lambda > 0 && o->reg && !t) || (o->precond && !z) || !res->rel_resid ||
        (o->metric && !res->metric)) {
        st = mr_error(MR_ENOMEM, "cg: out of memory for %lld-element work vectors", (long long)n);
        goto fail;
    }

    if (o->warm_start && o->r0) {
        ops->copy(ops->ctx, n, r, o->r0);
    } else if (o->warm_start) { /* r_0 = b - A x_0 */
        if ((st = apply_system(ops, n, o, x, q, t)) != MR_OK)
            goto fail;
        mr_vec_axpby(ops, n, r, 1.0, b, -1.0, q);
    } else {
        ops->zero(ops->ctx, n, x);
        ops->copy(ops->ctx, n, r, b); /* r_0 = b - A 0 */
    }
    double rr = ops->norm(ops->ctx, n, r);
    res->r0_norm = rr;
    rr *= rr;
    double rz = rr; /* r^H M^-1 r (r^H r without a preconditioner) */
    if (res->r0_norm > 0 && o->precond) {
        if ((st = precondition(ops, n, o, r, z, &rz, 0)) != MR_OK)
            goto fail;
        ops->copy(ops->ctx, n, p, z);
    } else {
        ops->copy(ops->ctx, n, p, r);
    }
    res->rel_resid[0] = 1.0;
    if (o->metric)
        res->metric[0] = run_metric(o, x, res);
    if (o->iterate && (st = o->iterate(o->iterate_ctx, 0, x, r)) != MR_OK)
        goto fail;
    if (!(res->r0_norm > 0)) {
        if (!isfinite(res->r0_norm)) {
            st = mr_error(MR_EINVAL, "cg: the right-hand side contains NaN or infinite values");
            goto fail;
        }
        res->rel_resid[0] = 0;
        res->stop = MR_CG_STOP_ZERO_RHS;
        goto done;
    }
    if (o->tol_abs > 0 && res->r0_norm <= o->tol_abs) { /* the start is good enough */
        res->stop = MR_CG_STOP_TOL;
        goto done;
    }
    if (!(rz > 0)) { /* rounding made r^H M^-1 r <= 0: no descent direction */
        mr_log(MR_LOG_DEBUG, "cg: r^H M^-1 r = %g at the start, no iteration", rz);
        res->stop = MR_CG_STOP_BREAKDOWN;
        goto done;
    }

    res->stop = MR_CG_STOP_ITERS;
    for (int k = 1; k <= o->iters; k++) {
        st = apply_system(ops, n, o, p, q, t);
        if (st != MR_OK)
            goto fail;
        double pq[2];
        ops->dot(ops->ctx, n, p, q, pq);
        if (!(pq[0] > 0)) { /* p^H (A + lambda R^H R) p must be > 0 for a positive definite system */
            if (!isfinite(pq[0])) {
                st = mr_error(MR_EINTERNAL, "cg: the normal operator returned NaN or infinite values at iteration %d",
                              k);
                goto fail;
            }
            mr_log(MR_LOG_DEBUG, "cg: stopping at iteration %d: p^H A p = %g", k, pq[0]);
            res->stop = MR_CG_STOP_BREAKDOWN;
            break;
        }
        double alpha = rz / pq[0];
        mr_vec_axpy(ops, n, x, alpha, p);
        mr_vec_axpy(ops, n, r, -alpha, q);
        double rnorm = ops->norm(ops->ctx, n, r);
        if (ops->status && (st = ops->status(ops->ctx)) != MR_OK)
            goto fail;
        double rr_new = rnorm * rnorm;
        res->iterations = k;
        res->rel_resid[k] = rnorm / res->r0_norm;
        double m = NAN;
        if (o->metric)
            m = res->metric[k] = run_metric(o, x, res);
        if (o->progress)
            o->progress(o->progress_ctx, k, res->rel_resid[k], m);
        if (o->iterate && (st = o->iterate(o->iterate_ctx, k, x, r)) != MR_OK)
            goto fail;
        if ((o->tol > 0 && res->rel_resid[k] <= o->tol) || (o->tol_abs > 0 && rnorm <= o->tol_abs) ||
            rr_new == 0) { /* rr_new = 0: exact solution */
            res->stop = MR_CG_STOP_TOL;
            break;
        }
        if (o->precond) { /* p = M^-1 r + beta p */
            double rz_new;
            if ((st = precondition(ops, n, o, r, z, &rz_new, k)) != MR_OK)
                goto fail;
            if (!(rz_new > 0)) {
                mr_log(MR_LOG_DEBUG, "cg: stopping at iteration %d: r^H M^-1 r = %g", k, rz_new);
                res->stop = MR_CG_STOP_BREAKDOWN;
                break;
            }
            mr_vec_xpay(ops, n, p, rz_new / rz, z);
            rz = rz_new;
        } else { /* p = r + beta p */
            mr_vec_xpay(ops, n, p, rr_new / rr, r);
            rz = rr_new;
        }
        rr = rr_new;
    }
done:
    res->final_rel_resid = res->rel_resid[res->iterations];
    ops->release(ops->ctx, r);
    ops->release(ops->ctx, p);
    ops->release(ops->ctx, q);
    ops->release(ops->ctx, t);
    ops->release(ops->ctx, z);
    return MR_OK;
fail:
    ops->release(ops->ctx, r);
    ops->release(ops->ctx, p);
    ops->release(ops->ctx, q);
    ops->release(ops->ctx, t);
    ops->release(ops->ctx, z);
    mr_cg_result_free(res);
    return st;
}

static mr_status linop_apply(void *a, const float *in, float *out) { return mr_linop_forward(a, in, out); }

mr_status mr_cg_solve_linop(mr_linop *a, const float *b, float *x, const mr_cg_opts *opts, mr_cg_result *res)
{
    memset(res, 0, sizeof *res);
    if (!a || !opts)
        return mr_error(MR_EINVAL, "cg: no operator or options");
    if (mr_linop_dom_size(a) != mr_linop_cod_size(a))
        return mr_error(MR_EINVAL, "cg: the system operator maps %lld to %lld elements; it must be square",
                        (long long)mr_linop_dom_size(a), (long long)mr_linop_cod_size(a));
    mr_cg_opts o = *opts;
    o.normal = linop_apply;
    o.normal_ctx = a;
    o.reg = NULL;
    o.reg_ctx = NULL;
    o.lambda = 0;
    return mr_cg_solve(mr_backend_vecops(mr_linop_backend(a)), mr_linop_dom_size(a), b, x, &o, res);
}
