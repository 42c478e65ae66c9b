/* solver/cg + solver/vecops + solver/regularizer against small dense systems solved directly.
 *
 * What is asserted (CG in exact arithmetic; float vectors here, so with small tolerances):
 *  - convergence: CG on A x = b (A = F^H F + mu I, Hermitian positive definite) reaches the
 *    Gaussian-elimination solution;
 *  - monotonicity: the A-norm error ||x_k - x*||_A and the 2-norm error ||x_k - x*|| never rise
 *    (Hestenes-Stiefel). On noiseless least squares (d = F x_true, A = F^H F, b = F^H d) the data
 *    residual ||d - F x_k|| equals the A-norm error, so it never rises either: this is the true
 *    form of "more iterations never raise the residual". The normal-equation residual
 *    ||b - A x_k|| itself is NOT monotone in general and is not asserted to be;
 *  - regularisers: identity and gradient match the direct solution of (A + lambda R^H R) x = b;
 *    ||x|| (identity) and ||R x|| (gradient) shrink as lambda grows; lambda >> ||A|| gives
 *    x -> b / lambda (identity); R^H R is self-adjoint with <x, R^H R x> = ||R x||^2. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solver/cg.h"
#include "solver/regularizer.h"
#include "solver/vecops.h"
#include "dense_testutil.h"
#include "testutil.h"

typedef struct {
    int m, n;               /* F is m x n */
    double complex *F;      /* [m][n] */
    double complex *A;      /* [n][n] = F^H F + mu I */
    const double complex *d; /* data for the data-residual metric (may be NULL) */
    const double complex *xstar;
    int metric_kind; /* 0: A-norm error, 1: 2-norm error, 2: data residual */
} dense;

static mr_status dense_apply(void *ctx, const float *in, float *out)
{
    const dense *D = ctx;
    for (int i = 0; i < D->n; i++) {
        double complex s = 0;
        for (int j = 0; j < D->n; j++)
            s += D->A[i * D->n + j] * (in[2 * j] + I * in[2 * j + 1]);
        out[2 * i] = (float)creal(s);
        out[2 * i + 1] = (float)cimag(s);
    }
    return MR_OK;
}

static double dense_metric(void *ctx, const float *x)
{
    const dense *D = ctx;
    double complex *e = malloc((size_t)D->n * sizeof *e);
    double r = 0;
    for (int j = 0; j < D->n; j++)
        e[j] = (x[2 * j] + I * x[2 * j + 1]) - (D->xstar ? D->xstar[j] : 0);
    if (D->metric_kind == 0) {
        double complex s = 0;
        for (int i = 0; i < D->n; i++)
            for (int j = 0; j < D->n; j++)
                s += conj(e[i]) * D->A[i * D->n + j] * e[j];
        r = sqrt(fabs(creal(s)));
    } else if (D->metric_kind == 1) {
        for (int j = 0; j < D->n; j++)
            r += creal(e[j] * conj(e[j]));
        r = sqrt(r);
    } else {
        for (int i = 0; i < D->m; i++) {
            double complex s = D->d[i];
            for (int j = 0; j < D->n; j++)
                s -= D->F[i * D->n + j] * (x[2 * j] + I * x[2 * j + 1]);
            r += creal(s * conj(s));
        }
        r = sqrt(r);
    }
    free(e);
    return r;
}

static double rel_err(int n, const float *x, const double complex *ref)
{
    double num = 0, den = 0;
    for (int j = 0; j < n; j++) {
        double complex e = (x[2 * j] + I * x[2 * j + 1]) - ref[j];
        num += creal(e * conj(e));
        den += creal(ref[j] * conj(ref[j]));
    }
    return sqrt(num / den);
}

static void random_system(dense *D, int m, int n, double mu, uint64_t *s)
{
    D->m = m;
    D->n = n;
    D->F = malloc((size_t)m * n * sizeof *D->F);
    D->A = malloc((size_t)n * n * sizeof *D->A);
    for (int i = 0; i < m * n; i++)
        D->F[i] = (test_normal(s) + I * test_normal(s)) / sqrt((double)m);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double complex acc = (i == j) ? mu : 0;
            for (int k = 0; k < m; k++)
                acc += conj(D->F[k * n + i]) * D->F[k * n + j];
            D->A[i * n + j] = acc;
        }
    D->d = NULL;
    D->xstar = NULL;
}

static void to_float(int n, const double complex *z, float *f)
{
    for (int j = 0; j < n; j++) {
        f[2 * j] = (float)creal(z[j]);
        f[2 * j + 1] = (float)cimag(z[j]);
    }
}

/* The first iteration where the history falls below 1e-5 of its start (float round-off level),
 * or the last one: monotonicity is checked up to there. */
static int roundoff_iteration(const double *h, int n)
{
    for (int k = 1; k <= n; k++)
        if (h[k] < 1e-5 * h[0])
            return k;
    return n;
}

static int monotone_ok(const double *h, int k, const char *what)
{
    int bad = 0;
    for (int i = 1; i <= k; i++)
        if (h[i] > h[i - 1] * (1 + 1e-4) + 1e-6 * h[0]) {
            fprintf(stderr, "%s rises at iteration %d: %.9g -> %.9g\n", what, i, h[i - 1], h[i]);
            bad = 1;
        }
    printf("%s: %.6g -> %.6g over %d iterations\n", what, h[0], h[k], k);
    return !bad;
}

enum { N = 24, M = 40 };                                     /* sections 1 and 2: F is M x N */
enum { NX = 6, NY = 5, NZ = 3, NV = NX * NY * NZ, MV = 120 }; /* section 3: the image, F is MV x NV */

/* ---- 1. Hermitian positive definite A = F^H F + 0.1 I, n = 24: CG -> direct solution; the tolerance
 *         stop, a zero right-hand side and bad options. o is the CG options the sections pass on. */
static void test_hpd(const mr_vecops *ops, dense *D, mr_cg_opts *o, uint64_t *s)
{
    random_system(D, M, N, 0.1, s);
    double complex b[N], xstar[N];
    for (int j = 0; j < N; j++)
        b[j] = test_normal(s) + I * test_normal(s);
    direct_solve(N, D->A, b, xstar);
    float bf[2 * N], x[2 * N];
    to_float(N, b, bf);
    D->xstar = xstar;
    o->iters = 3 * N;
    o->normal = dense_apply;
    o->normal_ctx = D;
    o->metric = dense_metric;
    o->metric_ctx = D;
    D->metric_kind = 0;
    mr_cg_result res;
    CHECK_OK(mr_cg_solve(ops, N, bf, x, o, &res));
    CHECK_LE("hpd: ||x - x*|| / ||x*||", rel_err(N, x, xstar), 1e-4);
    CHECK_LE("hpd: final relative residual", res.final_rel_resid, 1e-4);
    CHECK(res.rel_resid[0] == 1.0 && res.iterations == 3 * N && res.stop == MR_CG_STOP_ITERS);
    /* the A-norm error is monotone until it reaches float round-off */
    CHECK(monotone_ok(res.metric, roundoff_iteration(res.metric, res.iterations), "hpd: A-norm error"));
    mr_cg_result_free(&res);

    D->metric_kind = 1;
    CHECK_OK(mr_cg_solve(ops, N, bf, x, o, &res));
    CHECK(monotone_ok(res.metric, roundoff_iteration(res.metric, res.iterations), "hpd: 2-norm error"));
    mr_cg_result_free(&res);

    /* tolerance stop: ||r_k||/||r_0|| <= 1e-3 ends early and is honoured */
    o->tol = 1e-3;
    o->metric = NULL;
    CHECK_OK(mr_cg_solve(ops, N, bf, x, o, &res));
    printf("tol 1e-3: stopped after %d iterations (%s), residual %.3g\n", res.iterations, mr_cg_stop_name(res.stop),
           res.final_rel_resid);
    CHECK(res.stop == MR_CG_STOP_TOL && res.iterations < 3 * N);
    CHECK_LE("tol: final relative residual", res.final_rel_resid, 1e-3);
    CHECK(res.metric == NULL);
    mr_cg_result_free(&res);
    o->tol = 0;

    /* zero right-hand side: x = 0, no iterations */
    float zero[2 * N] = {0};
    CHECK_OK(mr_cg_solve(ops, N, zero, x, o, &res));
    CHECK(res.iterations == 0 && res.stop == MR_CG_STOP_ZERO_RHS && ops->norm(ops->ctx, N, x) == 0);
    mr_cg_result_free(&res);
    /* bad options are errors, not crashes */
    o->iters = 0;
    CHECK(mr_cg_solve(ops, N, bf, x, o, &res) == MR_EINVAL);
    o->iters = 10;
    o->lambda = -1;
    CHECK(mr_cg_solve(ops, N, bf, x, o, &res) == MR_EINVAL);
    o->lambda = 0;
    D->xstar = NULL; /* xstar is this function's */
    free(D->F);
    free(D->A);
}

/* ---- 2. Noiseless least squares, A = F^H F (mu = 0), d = F x_true: x_k -> x_true and
 *         the data residual ||d - F x_k|| never rises. */
static void test_least_squares(const mr_vecops *ops, dense *D, mr_cg_opts *o, uint64_t *s)
{
    random_system(D, M, N, 0.0, s);
    double complex xtrue[N], d[M], bls[N];
    float bf[2 * N], x[2 * N];
    for (int j = 0; j < N; j++)
        xtrue[j] = test_normal(s) + I * test_normal(s);
    for (int i = 0; i < M; i++) {
        d[i] = 0;
        for (int j = 0; j < N; j++)
            d[i] += D->F[i * N + j] * xtrue[j];
    }
    for (int j = 0; j < N; j++) {
        bls[j] = 0;
        for (int i = 0; i < M; i++)
            bls[j] += conj(D->F[i * N + j]) * d[i];
    }
    to_float(N, bls, bf);
    D->d = d;
    D->xstar = NULL;
    D->metric_kind = 2;
    o->iters = 3 * N;
    o->metric = dense_metric;
    mr_cg_result res;
    CHECK_OK(mr_cg_solve(ops, N, bf, x, o, &res));
    CHECK_LE("least squares: ||x - x_true|| / ||x_true||", rel_err(N, x, xtrue), 1e-3);
    CHECK(monotone_ok(res.metric, roundoff_iteration(res.metric, res.iterations),
                      "least squares: data residual ||d - F x_k||"));
    mr_cg_result_free(&res);
    /* 2k iterations never leave a larger data residual than k */
    mr_cg_result r1, r2;
    o->iters = 8;
    CHECK_OK(mr_cg_solve(ops, N, bf, x, o, &r1));
    o->iters = 16;
    CHECK_OK(mr_cg_solve(ops, N, bf, x, o, &r2));
    CHECK_LE("data residual after 16 / after 8", r2.metric[16] / r1.metric[8], 1.0);
    mr_cg_result_free(&r1);
    mr_cg_result_free(&r2);
    D->d = NULL; /* d is this function's */
    free(D->F);
    free(D->A);
}

/* R^H R of one regulariser: self-adjoint, <x, R^H R x> = ||R x||^2, on random x and y */
static void check_reg_self_adjoint(const mr_vecops *ops, mr_regularizer *reg, uint64_t *s)
{
    float *xa = malloc(2 * NV * sizeof *xa), *ya = malloc(2 * NV * sizeof *ya);
    float *rxa = malloc(2 * NV * sizeof *rxa), *rya = malloc(2 * NV * sizeof *rya);
    for (int j = 0; j < 2 * NV; j++) {
        xa[j] = (float)test_normal(s);
        ya[j] = (float)test_normal(s);
    }
    CHECK_OK(mr_reg_apply(reg, xa, rxa));
    CHECK_OK(mr_reg_apply(reg, ya, rya));
    double d1[2], d2[2], d3[2];
    ops->dot(ops->ctx, NV, ya, rxa, d1);
    ops->dot(ops->ctx, NV, rya, xa, d2);
    ops->dot(ops->ctx, NV, xa, rxa, d3);
    printf("%s: <y,RHRx> = %.6f%+.6fi, <RHRy,x> = %.6f%+.6fi\n", mr_reg_name(reg->kind), d1[0], d1[1], d2[0], d2[1]);
    CHECK_LE("R^H R self-adjoint", hypot(d1[0] - d2[0], d1[1] - d2[1]) / hypot(d1[0], d1[1]), 1e-5);
    CHECK_LE("<x, R^H R x> vs ||R x||^2", fabs(d3[0] - mr_reg_value(reg, xa)) / d3[0], 1e-5);
    free(xa);
    free(ya);
    free(rxa);
    free(rya);
}

/* ---- 3. Regularisers on a 6 x 5 x 3 image (n = 90): CG matches the direct solution of
 *         (A + lambda R^H R) x = b built column by column from mr_reg_apply. */
static void test_regularizers(const mr_vecops *ops, dense *D, mr_cg_opts *o, uint64_t *s)
{
    random_system(D, MV, NV, 0.0, s);
    D->d = NULL;
    D->xstar = NULL;
    double complex *bv = malloc(NV * sizeof *bv), *xv = malloc(NV * sizeof *xv);
    double complex *Mreg = malloc((size_t)NV * NV * sizeof *Mreg);
    float *bvf = malloc(2 * NV * sizeof *bvf), *xf = malloc(2 * NV * sizeof *xf);
    float *e = calloc(2 * NV, sizeof *e), *col = malloc(2 * NV * sizeof *col);
    for (int j = 0; j < NV; j++)
        bv[j] = test_normal(s) + I * test_normal(s);
    to_float(NV, bv, bvf);
    o->metric = NULL;
    o->iters = 400;
    o->tol = 1e-6;
    mr_cg_result res;
    for (int kind = 0; kind < 2; kind++) {
        mr_regularizer reg = {kind == 0 ? MR_REG_IDENTITY : MR_REG_GRADIENT, {NX, NY, NZ}, 1};
        const char *name = mr_reg_name(reg.kind);
        check_reg_self_adjoint(ops, &reg, s);

        o->reg = (kind == 0) ? NULL : mr_reg_apply; /* NULL means identity: test that path */
        o->reg_ctx = &reg;
        double prev_pen = INFINITY;
        /* the gradient also at lambda >> ||A||, where x approaches the null space of R
         * (constants): CG must still match the direct solve there */
        const double lambdas[4] = {0.01, 1, 100, 1e4};
        for (int li = 0; li < (kind == 0 ? 3 : 4); li++) {
            double lam = lambdas[li];
            for (int c = 0; c < NV; c++) {
                e[2 * c] = 1;
                mr_reg_apply(&reg, e, col);
                e[2 * c] = 0;
                for (int r = 0; r < NV; r++)
                    Mreg[r * NV + c] = D->A[r * NV + c] + lam * (col[2 * r] + I * col[2 * r + 1]);
            }
            direct_solve(NV, Mreg, bv, xv);
            o->lambda = lam;
            CHECK_OK(mr_cg_solve(ops, NV, bvf, xf, o, &res));
            double err = rel_err(NV, xf, xv);
            double pen = kind == 0 ? ops->norm(ops->ctx, NV, xf) : sqrt(mr_reg_value(&reg, xf));
            printf("%s lambda %g: %d iterations, ||x - x_direct||/||x_direct|| = %.3g, %s = %.6g\n", name, lam,
                   res.iterations, err, kind == 0 ? "||x||" : "||R x||", pen);
            CHECK_LE("regularised: CG vs direct", err, 1e-4);
            CHECK_LE("penalty shrinks with lambda", pen, prev_pen);
            prev_pen = pen;
            mr_cg_result_free(&res);
        }
        if (kind == 0) {
            /* lambda >> ||A||: x ~= b / lambda, to O(||A|| / lambda) */
            o->lambda = 1e4;
            CHECK_OK(mr_cg_solve(ops, NV, bvf, xf, o, &res));
            for (int j = 0; j < NV; j++)
                xv[j] = bv[j] / 1e4;
            CHECK_LE("identity, lambda 1e4: x vs b/lambda", rel_err(NV, xf, xv), 1e-2);
            mr_cg_result_free(&res);
        }
    }
    o->reg_ctx = NULL; /* reg was the loop's */
    free(bv);
    free(xv);
    free(Mreg);
    free(bvf);
    free(xf);
    free(e);
    free(col);
    free(D->F);
    free(D->A);
}

int main(void)
{
    uint64_t s = test_seed();
    mr_vecops ops;
    mr_vecops_cpu_ctx vctx;
    mr_vecops_cpu_init(&ops, &vctx, 2);
    dense D;
    mr_cg_opts o;
    mr_cg_opts_default(&o);
    test_hpd(&ops, &D, &o, &s);
    test_least_squares(&ops, &D, &o, &s);
    test_regularizers(&ops, &D, &o, &s);
    return test_finish("test_cg");
}
