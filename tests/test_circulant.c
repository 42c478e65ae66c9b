/* The circulant approximation of the Toeplitz normal (solver/toeplitz.h) and preconditioned CG (solver/cg.h):
 *
 * - mr_toeplitz_circulant_solve against an independent float64 solution: Q of random samples (a positive
 *   semi-definite Toeplitz T), T. Chan's circulant defined by its optimality (c_m = the mean of T over every
 *   pair of voxels whose difference wraps to m, the Frobenius-nearest circulant), the dense matrix
 *   a C + g G + s I (G the periodic negative Laplacian, built from its stencil) solved by Gaussian elimination
 *   in complex double: relative L2 <= 1e-5 (float32 transforms; measured ~1e-7), 1D, 2D, 3D, odd, even and
 *   unit axes, several (a, g, s); in place (z == r) the same bits; one thread the same bits as two.
 * - preconditioned CG on (T + g R^H R + s I) x = b (the x-update's system of ADMM with TV; R the finite
 *   differences) with the circulant model as M: on small random problems the solution within 1e-5 of the
 *   dense float64 solution; on a 64^2 radial trajectory within 1e-4 of plain CG's (to 1e-7) in at most 3/4 of
 *   plain CG's iterations to the same residual (1e-6); a preconditioner that is not positive definite stops CG
 *   as a breakdown (x unchanged), one that returns NaN is an error.
 * - the models of the operators' normals (solver/linop.h): identity(0.5) {s 0.25}, finite differences {g 1},
 *   maps {s = mean sum_c |S_c|^2, computed here}, maps zero on half the grid none, the NUDFT with a Toeplitz normal {tp, a 1}, without one
 *   none, chain(maps, NUDFT) {tp, a = the maps' s}, sum none; the chain's model solves (finite, not the
 *   identity), one without a Toeplitz normal or with a = g = s = 0 is refused (MR_EINVAL). */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/grid.h"
#include "solver/backend.h"
#include "solver/cg.h"
#include "solver/linop.h"
#include "solver/nudft.h"
#include "solver/regularizer.h"
#include "solver/toeplitz.h"
#include "solver/vecops.h"
#include "dense_testutil.h"
#include "testutil.h"

static uint64_t rng;

typedef struct {
    int64_t n[3], nn, nq, p[3];
    float *q; /* mr_grid_q [nq][2] */
} problem;

/* Q(m) = sum_i w_i exp(i 2 pi k_i . m / N) over random k_i, w_i > 0 (T is positive semi-definite), or with
 * `spokes` > 0 over a 2D radial trajectory of m / spokes samples per spoke, w_i = 1. */
static void make_q(problem *pr, const int64_t matrix[3], int m, int spokes)
{
    const mr_grid gq = mr_grid_q(matrix);
    pr->nn = 1;
    for (int a = 0; a < 3; a++) {
        pr->n[a] = matrix[a];
        pr->p[a] = gq.n[a];
        pr->nn *= matrix[a];
    }
    pr->nq = mr_grid_size(&gq);
    pr->q = calloc((size_t)pr->nq * 2, sizeof(float));
    double *k = malloc((size_t)m * 4 * sizeof(double));
    for (int i = 0; i < m; i++) {
        for (int a = 0; a < 3; a++) /* denser at the centre, like radial sampling */
            k[4 * i + a] = matrix[a] > 1 ? (test_uniform(&rng) - 0.5) * (double)matrix[a] * test_uniform(&rng) : 0.0;
        k[4 * i + 3] = 0.2 + test_uniform(&rng);
        if (spokes > 0) {
            const int per = m / spokes;
            const double th = M_PI * (double)(i / per) / spokes, rho = (double)(i % per - per / 2) / per;
            k[4 * i] = rho * (double)matrix[0] * cos(th);
            k[4 * i + 1] = rho * (double)matrix[1] * sin(th);
            k[4 * i + 3] = 1.0;
        }
    }
    for (int64_t j = 0; j < pr->nq; j++) {
        const int64_t idx[3] = {j % pr->p[0], (j / pr->p[0]) % pr->p[1], j / (pr->p[0] * pr->p[1])};
        double re = 0, im = 0;
        for (int i = 0; i < m; i++) {
            double ph = 0;
            for (int a = 0; a < 3; a++)
                ph += 2.0 * M_PI * k[4 * i + a] * (double)(idx[a] - gq.center[a]) / (double)matrix[a];
            re += k[4 * i + 3] * cos(ph);
            im += k[4 * i + 3] * sin(ph);
        }
        pr->q[2 * j] = (float)re;
        pr->q[2 * j + 1] = (float)im;
    }
    free(k);
}

/* Q at offset d (each |d_a| < N_a), as float64. */
static double complex q_at(const problem *pr, const int64_t d[3])
{
    int64_t i[3];
    for (int a = 0; a < 3; a++)
        i[a] = pr->p[a] > 1 ? d[a] + pr->n[a] : 0;
    const float *v = pr->q + 2 * ((i[2] * pr->p[1] + i[1]) * pr->p[0] + i[0]);
    return v[0] + I * v[1];
}

static void coords(const problem *pr, int64_t v, int64_t c[3])
{
    c[0] = v % pr->n[0];
    c[1] = (v / pr->n[0]) % pr->n[1];
    c[2] = v / (pr->n[0] * pr->n[1]);
}

/* The dense n x n matrix a C + g G + s I, C the Frobenius-nearest circulant to T (wrapped-diagonal means),
 * G the periodic negative Laplacian; or, with neumann, T + g R^H R + s I (R^H R of solver/regularizer.h). */
static double complex *dense(const problem *pr, double a, double g, double s, int neumann)
{
    const int64_t n = pr->nn;
    double complex *c = calloc((size_t)n, sizeof *c), *mtx = calloc((size_t)(n * n), sizeof *mtx);
    int64_t *cnt = calloc((size_t)n, sizeof *cnt);
    for (int64_t j = 0; j < n; j++)
        for (int64_t l = 0; l < n; l++) {
            int64_t cj[3], cl[3], d[3], w = 0;
            coords(pr, j, cj);
            coords(pr, l, cl);
            for (int ax = 0; ax < 3; ax++)
                d[ax] = cj[ax] - cl[ax];
            for (int ax = 2; ax >= 0; ax--)
                w = w * pr->n[ax] + ((d[ax] % pr->n[ax]) + pr->n[ax]) % pr->n[ax];
            const double complex t = q_at(pr, d);
            if (neumann) {
                mtx[j * n + l] = t;
            } else {
                c[w] += t;
                cnt[w]++;
            }
        }
    for (int64_t j = 0; !neumann && j < n; j++)
        for (int64_t l = 0; l < n; l++) {
            int64_t cj[3], cl[3], w = 0;
            coords(pr, j, cj);
            coords(pr, l, cl);
            for (int ax = 2; ax >= 0; ax--)
                w = w * pr->n[ax] + ((cj[ax] - cl[ax]) % pr->n[ax] + pr->n[ax]) % pr->n[ax];
            mtx[j * n + l] = a * c[w] / (double)cnt[w];
        }
    for (int64_t j = 0; j < n; j++) {
        int64_t cj[3];
        coords(pr, j, cj);
        mtx[j * n + j] += s;
        for (int ax = 0; ax < 3; ax++) {
            const int64_t na = pr->n[ax], stride = ax == 0 ? 1 : ax == 1 ? pr->n[0] : pr->n[0] * pr->n[1];
            if (na == 1)
                continue;
            for (int dir = -1; dir <= 1; dir += 2) {
                int64_t nb = cj[ax] + dir;
                if (neumann && (nb < 0 || nb >= na))
                    continue;
                nb = (nb + na) % na;
                mtx[j * n + j] += g;
                mtx[j * n + (j + (nb - cj[ax]) * stride)] -= g;
            }
        }
    }
    free(c);
    free(cnt);
    return mtx;
}

/* x = mtx^-1 b (tests/dense_testutil.h), b as floats, x as interleaved doubles. */
static void dense_solve(const double complex *mtx, int64_t n, const float *b, double *x)
{
    double complex *v = malloc((size_t)n * sizeof *v), *y = malloc((size_t)n * sizeof *y);
    for (int64_t i = 0; i < n; i++)
        v[i] = b[2 * i] + I * b[2 * i + 1];
    direct_solve((int)n, mtx, v, y);
    for (int64_t i = 0; i < n; i++) {
        x[2 * i] = creal(y[i]);
        x[2 * i + 1] = cimag(y[i]);
    }
    free(v);
    free(y);
}

static float *random_vec(int64_t n)
{
    float *v = malloc((size_t)n * 2 * sizeof(float));
    for (int64_t i = 0; i < 2 * n; i++)
        v[i] = (float)test_normal(&rng);
    return v;
}

static double max_abs_diff(const float *a, const float *b, int64_t n)
{
    double w = 0;
    for (int64_t i = 0; i < n; i++)
        w = fmax(w, fabs((double)a[i] - b[i]));
    return w;
}

static void check_solve(const char *what, const int64_t matrix[3], int m)
{
    problem pr;
    make_q(&pr, matrix, m, 0);
    mr_toeplitz *t = NULL, *t1 = NULL;
    CHECK_OK(mr_toeplitz_create(&t, matrix, pr.q, 2));
    CHECK_OK(mr_toeplitz_create(&t1, matrix, pr.q, 1));
    const double q0 = pr.q[2 * ((pr.p[2] / 2 * pr.p[1] + pr.p[1] / 2) * pr.p[0] + pr.p[0] / 2)]; /* Q(0) */
    const double abc[4][3] = {{1, 0, 0.05 * q0}, {1, 0.1 * q0, 0}, {1, 0.02 * q0, 0.01 * q0}, {0, 1, 0.5}};
    for (int c = 0; t && t1 && c < 4; c++) {
        const double a = abc[c][0], g = abc[c][1], s = abc[c][2];
        float *r = random_vec(pr.nn), *z = malloc((size_t)pr.nn * 2 * sizeof(float));
        float *z1 = malloc((size_t)pr.nn * 2 * sizeof(float)), *zi = malloc((size_t)pr.nn * 2 * sizeof(float));
        double *ref = malloc((size_t)pr.nn * 2 * sizeof(double));
        double complex *mtx = dense(&pr, a, g, s, 0);
        dense_solve(mtx, pr.nn, r, ref);
        char label[200];
        CHECK_OK(mr_toeplitz_circulant_solve(t, a, g, s, r, z));
        snprintf(label, sizeof label, "%s, a %g g %.3g s %.3g: circulant solve vs float64 dense, rel L2", what, a, g, s);
        CHECK_LE(label, test_rel_l2(z, ref, 2 * pr.nn), 1e-5);
        memcpy(zi, r, (size_t)pr.nn * 2 * sizeof(float));
        CHECK_OK(mr_toeplitz_circulant_solve(t, a, g, s, zi, zi));
        CHECK_OK(mr_toeplitz_circulant_solve(t1, a, g, s, r, z1));
        snprintf(label, sizeof label, "%s, a %g: in place and 1 thread vs 2, max |difference|", what, a);
        CHECK_LE(label, fmax(max_abs_diff(zi, z, 2 * pr.nn), max_abs_diff(z1, z, 2 * pr.nn)), 0.0);
        free(r);
        free(z);
        free(z1);
        free(zi);
        free(ref);
        free(mtx);
    }
    mr_toeplitz_destroy(t);
    mr_toeplitz_destroy(t1);
    free(pr.q);
}

typedef struct {
    mr_toeplitz *t;
    mr_regularizer reg;
    double g, s, pa, pg, ps; /* the system's g and s; the preconditioner's a, g, s */
    float *tmp;
    int64_t nn;
} pcg_ctx;

static mr_status sys_apply(void *p, const float *x, float *y)
{
    pcg_ctx *c = p;
    mr_status st = mr_toeplitz_apply(c->t, x, y);
    if (st == MR_OK)
        st = mr_reg_apply(&c->reg, x, c->tmp);
    for (int64_t i = 0; st == MR_OK && i < 2 * c->nn; i++)
        y[i] += (float)(c->g * c->tmp[i] + c->s * x[i]);
    return st;
}

static mr_status pre_apply(void *p, const float *r, float *z)
{
    pcg_ctx *c = p;
    return mr_toeplitz_circulant_solve(c->t, c->pa, c->pg, c->ps, r, z);
}

/* Q of m samples (make_q), its Toeplitz object with `threads` threads and the finite differences' R^H R in c
 * (g, s and the preconditioner's numbers left 0 for the caller). */
static void pcg_setup(problem *pr, pcg_ctx *c, const int64_t matrix[3], int m, int spokes, int threads)
{
    make_q(pr, matrix, m, spokes);
    memset(c, 0, sizeof *c);
    c->nn = pr->nn;
    CHECK_OK(mr_toeplitz_create(&c->t, matrix, pr->q, threads));
    c->reg.kind = MR_REG_GRADIENT;
    memcpy(c->reg.matrix, matrix, sizeof c->reg.matrix);
    c->reg.threads = 1;
}

/* Iterations CG takes to ||r|| <= tol ||b|| (at most 400), and its solution's error against ref. */
static int cg_iters(const mr_vecops *v, pcg_ctx *c, const float *b, int pre, double tol, const double *ref, double *err)
{
    float *x = calloc((size_t)c->nn * 2, sizeof(float));
    mr_cg_opts o;
    mr_cg_opts_default(&o);
    o.iters = 400;
    o.tol = tol;
    o.normal = sys_apply;
    o.normal_ctx = c;
    o.precond = pre ? pre_apply : NULL;
    o.precond_ctx = c;
    mr_cg_result res;
    int it = -1;
    if (mr_cg_solve(v, c->nn, b, x, &o, &res) == MR_OK) {
        it = res.final_rel_resid <= tol ? res.iterations : 1000;
        mr_cg_result_free(&res);
    }
    *err = test_rel_l2(x, ref, 2 * c->nn);
    free(x);
    return it;
}

/* The system T + g R^H R + s I with g, s relative to Q(0); b random. With `dense_ref`, both CG's solutions against
 * the float64 dense solution; else (a grid too large for it) the preconditioned against the plain one, and the
 * iteration counts: on a radial trajectory (a kernel far from the identity, which the circulant captures) the
 * preconditioned CG needs at most `at_most` times plain CG's iterations. */
static void check_pcg(const char *what, const int64_t matrix[3], int m, int spokes, int dense_ref, double at_most)
{
    problem pr;
    pcg_ctx c;
    pcg_setup(&pr, &c, matrix, m, spokes, 2);
    const double q0 = pr.q[2 * ((pr.p[2] / 2 * pr.p[1] + pr.p[1] / 2) * pr.p[0] + pr.p[0] / 2)];
    c.g = 0.5 * q0; /* ADMM's rho: 0.5 x the mean eigenvalue of T, Q(0) */
    c.s = 0;
    c.pa = 1;
    c.pg = c.g;
    c.ps = c.s;
    c.tmp = malloc((size_t)pr.nn * 2 * sizeof(float));
    mr_vecops v;
    mr_vecops_cpu_ctx vc;
    mr_vecops_cpu_init(&v, &vc, 1);
    float *b = random_vec(pr.nn);
    double *ref = malloc((size_t)pr.nn * 2 * sizeof(double));
    char label[200];
    double e_plain = 1, e_pre = 1;
    if (dense_ref) {
        double complex *mtx = dense(&pr, 1, c.g, c.s, 1);
        dense_solve(mtx, pr.nn, b, ref);
        free(mtx);
    } else { /* plain CG to 1e-7 as the reference */
        float *x = calloc((size_t)pr.nn * 2, sizeof(float));
        mr_cg_opts o;
        mr_cg_opts_default(&o);
        o.iters = 4000;
        o.tol = 1e-7;
        o.normal = sys_apply;
        o.normal_ctx = &c;
        mr_cg_result res;
        if (c.t && mr_cg_solve(&v, c.nn, b, x, &o, &res) == MR_OK)
            mr_cg_result_free(&res);
        for (int64_t i = 0; i < 2 * pr.nn; i++)
            ref[i] = x[i];
        free(x);
    }
    const int it_plain = c.t ? cg_iters(&v, &c, b, 0, 1e-6, ref, &e_plain) : -1;
    const int it_pre = c.t ? cg_iters(&v, &c, b, 1, 1e-6, ref, &e_pre) : -1;
    snprintf(label, sizeof label, "%s: preconditioned CG's solution vs %s, rel L2", what,
             dense_ref ? "float64 dense" : "plain CG to 1e-7");
    CHECK_LE(label, e_pre, dense_ref ? 1e-5 : 1e-4);
    if (dense_ref) {
        snprintf(label, sizeof label, "%s: plain CG's solution vs float64 dense, rel L2", what);
        CHECK_LE(label, e_plain, 1e-5);
    }
    CHECK(it_pre > 0 && it_plain > 0);
    if (at_most > 0) {
        snprintf(label, sizeof label, "%s: iterations to 1e-6, preconditioned / plain CG (%d / %d)", what, it_pre, it_plain);
        CHECK_LE(label, (double)it_pre / it_plain, at_most);
    }
    free(b);
    free(ref);
    free(c.tmp);
    mr_toeplitz_destroy(c.t);
    free(pr.q);
}

static mr_status neg_apply(void *p, const float *r, float *z)
{
    const pcg_ctx *c = p;
    for (int64_t i = 0; i < 2 * c->nn; i++)
        z[i] = -r[i];
    return MR_OK;
}

static mr_status nan_apply(void *p, const float *r, float *z)
{
    const pcg_ctx *c = p;
    for (int64_t i = 0; i < 2 * c->nn; i++)
        z[i] = i == 3 ? NAN : r[i];
    return MR_OK;
}

/* A preconditioner that is not positive definite stops CG as a breakdown (no error, x as given); one that
 * returns NaN is an error. */
static void check_bad_preconditioner(void)
{
    const int64_t matrix[3] = {8, 6, 1};
    problem pr;
    pcg_ctx c;
    pcg_setup(&pr, &c, matrix, 30, 0, 1);
    c.g = 1;
    c.tmp = malloc((size_t)pr.nn * 2 * sizeof(float));
    mr_vecops v;
    mr_vecops_cpu_ctx vc;
    mr_vecops_cpu_init(&v, &vc, 1);
    float *b = random_vec(pr.nn), *x = calloc((size_t)pr.nn * 2, sizeof(float));
    mr_cg_opts o;
    mr_cg_opts_default(&o);
    o.iters = 10;
    o.normal = sys_apply;
    o.normal_ctx = &c;
    o.precond = neg_apply;
    o.precond_ctx = &c;
    mr_cg_result res;
    if (c.t && mr_cg_solve(&v, c.nn, b, x, &o, &res) == MR_OK) {
        CHECK(res.stop == MR_CG_STOP_BREAKDOWN && res.iterations == 0);
        double worst = 0;
        for (int64_t i = 0; i < 2 * pr.nn; i++)
            worst = fmax(worst, fabs(x[i]));
        CHECK_LE("negative definite preconditioner: x stays 0", worst, 0.0);
        mr_cg_result_free(&res);
    } else {
        CHECK(0 && "CG with a negative definite preconditioner returns MR_OK");
    }
    o.precond = nan_apply;
    CHECK(!c.t || mr_cg_solve(&v, c.nn, b, x, &o, &res) == MR_EINTERNAL);
    free(b);
    free(x);
    free(c.tmp);
    mr_toeplitz_destroy(c.t);
    free(pr.q);
}

static void check_symbols(void)
{
    mr_backend *be = NULL;
    const mr_device_sel cpu = {.kind = MR_DEVICE_CPU, .index = -1};
    CHECK_OK(mr_backend_create(&be, cpu, 2));
    if (!be)
        return;
    const int64_t matrix[3] = {10, 8, 1}, nn = 80, nc = 3, m = 300;
    const int64_t dims[4] = {matrix[0], matrix[1], matrix[2], 1};
    float *traj = malloc((size_t)m * 3 * sizeof(float)), *maps = random_vec(nn * nc);
    float *masked = malloc((size_t)nn * nc * 2 * sizeof(float));
    for (int64_t i = 0; i < 2 * nn * nc; i++) { /* coils of magnitude ~1 everywhere; zero on half of the grid */
        maps[i] = (float)((i % 2 ? 0.0 : 1.0) + 0.2 * fmax(-2.0, fmin(2.0, maps[i]))); /* sum_c |S_c|^2 >= 1.08 */
        masked[i] = (i / 2) % nn < nn / 2 ? 0.0f : maps[i];
    }
    for (int64_t i = 0; i < m; i++)
        for (int a = 0; a < 3; a++)
            traj[3 * i + a] = a < 2 ? (float)((test_uniform(&rng) - 0.5) * (double)matrix[a]) : 0.0f;
    double mean2 = 0;
    for (int64_t i = 0; i < 2 * nn * nc; i++)
        mean2 += (double)maps[i] * maps[i];
    mean2 /= (double)nn;
    mr_linop *id = NULL, *fd = NULL, *sens = NULL, *f = NULL, *fslow = NULL, *e = NULL, *sum = NULL, *smask = NULL;
    mr_nudft_opts o;
    mr_nudft_opts_default(&o);
    CHECK_OK(mr_linop_identity(&id, be, dims, 0.5));
    CHECK_OK(mr_linop_fd_create(&fd, be, matrix));
    CHECK_OK(mr_linop_sens_create(&sens, be, matrix, nc, maps));
    CHECK_OK(mr_linop_sens_create(&smask, be, matrix, nc, masked));
    CHECK_OK(mr_linop_nudft_create(&f, be, matrix, traj, m, NULL, nc, &o, NULL));
    o.fast_normal = 0;
    CHECK_OK(mr_linop_nudft_create(&fslow, be, matrix, traj, m, NULL, nc, &o, NULL));
    if (sens && f)
        CHECK_OK(mr_linop_chain(&e, sens, f));
    if (id && fd)
        CHECK_OK(mr_linop_sum(&sum, id, id));
    if (smask)
        CHECK(!mr_linop_symbol_of(smask).known); /* maps that vanish somewhere: no model */
    if (id && fd && sens && f && fslow && e && sum) {
        const mr_linop_symbol yi = mr_linop_symbol_of(id), yd = mr_linop_symbol_of(fd), ys = mr_linop_symbol_of(sens);
        const mr_linop_symbol yf = mr_linop_symbol_of(f), ye = mr_linop_symbol_of(e);
        CHECK(yi.known && !yi.tp && yi.a == 0 && yi.g == 0 && fabs(yi.s - 0.25) < 1e-15);
        CHECK(yd.known && !yd.tp && yd.a == 0 && yd.g == 1 && yd.s == 0);
        CHECK_LE("maps' model: s vs the mean of sum_c |S_c|^2, relative", fabs(ys.s - mean2) / mean2, 1e-12);
        CHECK(ys.known && !ys.tp && ys.a == 0 && ys.g == 0);
        CHECK(yf.known && yf.tp && yf.a == 1 && yf.g == 0 && yf.s == 0);
        CHECK(!mr_linop_symbol_of(fslow).known && !mr_linop_symbol_of(sum).known);
        CHECK(ye.known && ye.tp == yf.tp && ye.g == 0 && ye.s == 0);
        CHECK_LE("chain(maps, NUDFT)'s model: a vs the maps' s, relative", fabs(ye.a - mean2) / mean2, 1e-12);
        float *r = random_vec(nn), *z = malloc((size_t)nn * 2 * sizeof(float));
        mr_linop_symbol y = ye;
        y.g = 0.3;
        y.s = 0.1;
        CHECK_OK(mr_linop_symbol_solve(&y, r, z));
        double d = 0;
        for (int64_t i = 0; i < 2 * nn; i++)
            d += fabs((double)z[i] - r[i]) * isfinite(z[i]);
        CHECK(d > 0);
        mr_linop_symbol bad = y;
        bad.tp = NULL;
        CHECK(mr_linop_symbol_solve(&bad, r, z) == MR_EINVAL);
        bad = y;
        bad.a = bad.g = bad.s = 0;
        CHECK(mr_linop_symbol_solve(&bad, r, z) == MR_EINVAL);
        free(r);
        free(z);
    }
    mr_linop *all[] = {id, fd, sens, f, fslow, e, sum, smask};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        mr_linop_free(all[i]);
    mr_backend_free(be);
    free(traj);
    free(maps);
    free(masked);
}

int main(void)
{
    rng = test_seed();
    const int64_t m3[3] = {5, 4, 3}, m2[3] = {7, 6, 1}, m1[3] = {1, 9, 1}, mu[3] = {6, 1, 4}, m2e[3] = {8, 8, 1};
    check_solve("3D 5x4x3", m3, 40);
    check_solve("2D 7x6", m2, 60);
    check_solve("1x9 (one axis)", m1, 12);
    check_solve("6x1x4 (middle axis of 1)", mu, 30);
    check_solve("2D 8x8", m2e, 50);
    const int64_t p2[3] = {12, 10, 1}, p3[3] = {6, 5, 4}, pr2[3] = {64, 64, 1};
    check_pcg("2D 12x10", p2, 40, 0, 1, 0);
    check_pcg("3D 6x5x4", p3, 40, 0, 1, 0);
    check_pcg("2D 64x64 radial, 32 spokes", pr2, 32 * 64, 32, 0, 0.75); /* measured 36 / 57 */
    check_symbols();
    check_bad_preconditioner();
    return test_finish("test_circulant");
}
