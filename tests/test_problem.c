/* The solvers of solver/problem.h against an independent solution. Small problems (a 6 x 5 image, 45
 * random complex measurements: E a dense random matrix as an mr_linop), solved here in double by ADMM
 * with EXACT x-updates (a dense Cholesky factor of A^H A + rho sum R^H R), our own prox and 20000
 * iterations: a different algorithm and code path from the library's. Each library solver must reach
 *   - the reference minimiser: ||x - x*|| / ||x*|| <= 2e-5 (float32 iterations; measured < 5e-7);
 *   - the reference objective: (F(x) - F(x*)) / F(x*) <= 1e-6, F evaluated here in double at the
 *     library's x (measured < 3e-8);
 *   - a consistent history: the recorded objective at the last iterate equals F(x) computed here
 *     (relative 1e-5; measured < 2e-6), objective = data term + each term, every value finite, the last objective
 *     below the first.
 * (ADMM with its default 8 CG iterations per x-update.) Problems: Tikhonov on the gradient (CG), l1 on the image (FISTA, ADMM, PDHG), l1 of a random unitary
 * transform marked tight (FISTA, ADMM, PDHG), isotropic TV (ADMM, PDHG), TV + l1 together (ADMM, PDHG),
 * TV + a quadratic term (ADMM); TV with E the NUDFT operator (its Toeplitz normal) and the library's finite
 * differences, where ADMM's x-updates are preconditioned by the operators' circulant model (the reference on
 * the two operators' dense matrices, probed through their forward). Also: solver AUTO's choices, the refusals (CG with l1, FISTA with two
 * non-smooth terms or TV), b = 0. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solver/backend.h"
#include "solver/nudft.h"
#include "solver/problem.h"
#include "test_op_random.h"
#include "testutil.h"

#define NX 6
#define NY 5
#define N (NX * NY)
#define M 45

static uint64_t rng;

/* ---- dense complex matrices [r][c][2] in double ------------------------------------------------- */

typedef struct {
    int r, c;
    double *a;
} mat;

static mat mat_new(int r, int c)
{
    mat m = {r, c, calloc((size_t)r * c * 2, sizeof(double))};
    return m;
}
#define RE(m, i, j) (m).a[2 * ((size_t)(i) * (m).c + (j))]
#define IM(m, i, j) (m).a[2 * ((size_t)(i) * (m).c + (j)) + 1]

/* y = A x (conj = 0) or A^H x (conj = 1); x, y [.][2] double */
static void mat_apply(const mat *A, int conj, const double *x, double *y)
{
    const int rows = conj ? A->c : A->r, cols = conj ? A->r : A->c;
    for (int i = 0; i < rows; i++) {
        double re = 0, im = 0;
        for (int j = 0; j < cols; j++) {
            const double ar = conj ? RE(*A, j, i) : RE(*A, i, j), ai = conj ? -IM(*A, j, i) : IM(*A, i, j);
            re += ar * x[2 * j] - ai * x[2 * j + 1];
            im += ar * x[2 * j + 1] + ai * x[2 * j];
        }
        y[2 * i] = re;
        y[2 * i + 1] = im;
    }
}

/* H += s A^H A (n x n) */
static void add_gram(mat *H, const mat *A, double s)
{
    for (int i = 0; i < A->c; i++)
        for (int j = 0; j < A->c; j++) {
            double re = 0, im = 0;
            for (int k = 0; k < A->r; k++) { /* conj(A_ki) A_kj */
                re += RE(*A, k, i) * RE(*A, k, j) + IM(*A, k, i) * IM(*A, k, j);
                im += RE(*A, k, i) * IM(*A, k, j) - IM(*A, k, i) * RE(*A, k, j);
            }
            RE(*H, i, j) += s * re;
            IM(*H, i, j) += s * im;
        }
}

/* solve H x = b for Hermitian positive definite H by Gaussian elimination with partial pivoting on a copy */
static void solve(const mat *H, const double *b, double *x)
{
    const int n = H->r;
    mat a = mat_new(n, n + 1);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            RE(a, i, j) = RE(*H, i, j);
            IM(a, i, j) = IM(*H, i, j);
        }
        RE(a, i, n) = b[2 * i];
        IM(a, i, n) = b[2 * i + 1];
    }
    for (int k = 0; k < n; k++) {
        int p = k;
        for (int i = k + 1; i < n; i++)
            if (hypot(RE(a, i, k), IM(a, i, k)) > hypot(RE(a, p, k), IM(a, p, k)))
                p = i;
        for (int j = 0; j <= n; j++) {
            double t = RE(a, k, j);
            RE(a, k, j) = RE(a, p, j);
            RE(a, p, j) = t;
            t = IM(a, k, j);
            IM(a, k, j) = IM(a, p, j);
            IM(a, p, j) = t;
        }
        const double pr = RE(a, k, k), pi = IM(a, k, k), pd = pr * pr + pi * pi;
        for (int i = k + 1; i < n; i++) {
            const double fr = (RE(a, i, k) * pr + IM(a, i, k) * pi) / pd, fi = (IM(a, i, k) * pr - RE(a, i, k) * pi) / pd;
            for (int j = k; j <= n; j++) {
                RE(a, i, j) -= fr * RE(a, k, j) - fi * IM(a, k, j);
                IM(a, i, j) -= fr * IM(a, k, j) + fi * RE(a, k, j);
            }
        }
    }
    for (int i = n - 1; i >= 0; i--) {
        double re = RE(a, i, n), im = IM(a, i, n);
        for (int j = i + 1; j < n; j++) {
            re -= RE(a, i, j) * x[2 * j] - IM(a, i, j) * x[2 * j + 1];
            im -= RE(a, i, j) * x[2 * j + 1] + IM(a, i, j) * x[2 * j];
        }
        const double pr = RE(a, i, i), pi = IM(a, i, i), pd = pr * pr + pi * pi;
        x[2 * i] = (re * pr + im * pi) / pd;
        x[2 * i + 1] = (im * pr - re * pi) / pd;
    }
    free(a.a);
}

/* ---- the test's own operators -------------------------------------------------------------------- */

/* forward differences along x and y (Neumann), rows [d][n]: the layout the L1-L2 penalty groups */
static mat fd_matrix(void)
{
    mat D = mat_new(2 * N, N);
    for (int y = 0; y < NY; y++)
        for (int x = 0; x < NX; x++) {
            const int v = y * NX + x;
            if (x < NX - 1) {
                RE(D, v, v) = -1;
                RE(D, v, v + 1) = 1;
            }
            if (y < NY - 1) {
                RE(D, N + v, v) = -1;
                RE(D, N + v, v + NX) = 1;
            }
        }
    return D;
}

/* a random unitary matrix: Gram-Schmidt on random complex columns */
static mat unitary(void)
{
    mat Q = mat_new(N, N);
    for (int i = 0; i < 2 * N * N; i++)
        Q.a[i] = test_normal(&rng);
    for (int j = 0; j < N; j++) {
        for (int k = 0; k < j; k++) { /* col_j -= <col_k, col_j> col_k */
            double re = 0, im = 0;
            for (int i = 0; i < N; i++) {
                re += RE(Q, i, k) * RE(Q, i, j) + IM(Q, i, k) * IM(Q, i, j);
                im += RE(Q, i, k) * IM(Q, i, j) - IM(Q, i, k) * RE(Q, i, j);
            }
            for (int i = 0; i < N; i++) {
                RE(Q, i, j) -= re * RE(Q, i, k) - im * IM(Q, i, k);
                IM(Q, i, j) -= re * IM(Q, i, k) + im * RE(Q, i, k);
            }
        }
        double s = 0;
        for (int i = 0; i < N; i++)
            s += RE(Q, i, j) * RE(Q, i, j) + IM(Q, i, j) * IM(Q, i, j);
        s = sqrt(s);
        for (int i = 0; i < N; i++) {
            RE(Q, i, j) /= s;
            IM(Q, i, j) /= s;
        }
    }
    return Q;
}

/* a dense matrix as an mr_linop on the host (float arrays; double arithmetic) */
static mr_status dense_apply(const mat *A, int conj, const float *in, float *out)
{
    const int nin = conj ? A->r : A->c, nout = conj ? A->c : A->r;
    double *x = malloc((size_t)nin * 2 * sizeof(double)), *y = malloc((size_t)nout * 2 * sizeof(double));
    for (int i = 0; i < 2 * nin; i++)
        x[i] = in[i];
    mat_apply(A, conj, x, y);
    for (int i = 0; i < 2 * nout; i++)
        out[i] = (float)y[i];
    free(x);
    free(y);
    return MR_OK;
}
static mr_status dense_forward(void *d, const float *in, float *out) { return dense_apply(d, 0, in, out); }
static mr_status dense_adjoint(void *d, const float *in, float *out) { return dense_apply(d, 1, in, out); }

static mr_linop *dense_linop(mr_backend *be, mat *A, int64_t groups)
{
    const int64_t dom[4] = {A->c, 1, 1, 1}, cod[4] = {A->r / groups, 1, 1, groups};
    const mr_linop_ops ops = {dense_forward, dense_adjoint, NULL, NULL};
    mr_linop *op = NULL;
    CHECK_OK(mr_linop_create(&op, be, dom, cod, &ops, A));
    return op;
}

/* ---- the reference: ADMM with exact x-updates, in double ----------------------------------------- */

typedef struct {
    const mat *R;  /* NULL: identity */
    mr_penalty pen;
    double lambda;
    int groups;
} rterm;

static int rows_of(const rterm *t) { return t->R ? t->R->r : N; }

static void apply_r(const rterm *t, int conj, const double *in, double *out)
{
    if (t->R)
        mat_apply(t->R, conj, in, out);
    else
        memcpy(out, in, (size_t)N * 2 * sizeof(double));
}

/* prox_{s f}(v) in double, in place */
static void ref_prox(const rterm *t, double s, double *v)
{
    const int m = rows_of(t), g = t->pen == MR_PENALTY_L12 ? t->groups : 1, n = m / g;
    for (int i = 0; i < n; i++) {
        double r = 0;
        for (int k = 0; k < g; k++)
            r += v[2 * (k * n + i)] * v[2 * (k * n + i)] + v[2 * (k * n + i) + 1] * v[2 * (k * n + i) + 1];
        r = sqrt(r);
        const double f = t->pen == MR_PENALTY_L2 ? 1 / (1 + s) : (r > s ? 1 - s / r : 0);
        for (int k = 0; k < g; k++) {
            v[2 * (k * n + i)] *= f;
            v[2 * (k * n + i) + 1] *= f;
        }
    }
}

/* F(x) = 1/2 ||A x - d||^2 + sum lambda f(R x) */
static double objective(const mat *A, const double *d, const rterm *t, int nt, const double *x)
{
    double *ax = malloc((size_t)M * 2 * sizeof(double)), *rx = malloc((size_t)3 * N * 2 * sizeof(double));
    mat_apply(A, 0, x, ax);
    double f = 0;
    for (int i = 0; i < 2 * M; i++)
        f += 0.5 * (ax[i] - d[i]) * (ax[i] - d[i]);
    for (int j = 0; j < nt; j++) {
        apply_r(&t[j], 0, x, rx);
        const int m = rows_of(&t[j]), g = t[j].pen == MR_PENALTY_L12 ? t[j].groups : 1, n = m / g;
        for (int i = 0; i < n; i++) {
            double r = 0;
            for (int k = 0; k < g; k++)
                r += rx[2 * (k * n + i)] * rx[2 * (k * n + i)] + rx[2 * (k * n + i) + 1] * rx[2 * (k * n + i) + 1];
            f += t[j].lambda * (t[j].pen == MR_PENALTY_L2 ? 0.5 * r : sqrt(r));
        }
    }
    free(ax);
    free(rx);
    return f;
}

static void reference(const mat *A, const double *d, const rterm *t, int nt, double *x)
{
    const double rho = 1.0;
    mat H = mat_new(N, N);
    add_gram(&H, A, 1.0);
    for (int j = 0; j < nt; j++) {
        if (t[j].pen == MR_PENALTY_L2 && t[j].R) {
            add_gram(&H, t[j].R, t[j].lambda);
        } else if (t[j].pen == MR_PENALTY_L2) {
            for (int i = 0; i < N; i++)
                RE(H, i, i) += t[j].lambda;
        } else if (t[j].R) {
            add_gram(&H, t[j].R, rho);
        } else {
            for (int i = 0; i < N; i++)
                RE(H, i, i) += rho;
        }
    }
    double *b = malloc((size_t)N * 2 * sizeof(double)), *rhs = malloc((size_t)N * 2 * sizeof(double));
    double *tmp = malloc((size_t)N * 2 * sizeof(double));
    double *z[4], *u[4], *rx = malloc((size_t)3 * N * 2 * sizeof(double));
    mat_apply(A, 1, d, b);
    for (int j = 0; j < nt; j++) {
        z[j] = calloc((size_t)rows_of(&t[j]) * 2, sizeof(double));
        u[j] = calloc((size_t)rows_of(&t[j]) * 2, sizeof(double));
    }
    for (int it = 0; it < 20000; it++) {
        memcpy(rhs, b, (size_t)N * 2 * sizeof(double));
        for (int j = 0; j < nt; j++) {
            if (t[j].pen == MR_PENALTY_L2)
                continue;
            const int m = rows_of(&t[j]);
            for (int i = 0; i < 2 * m; i++)
                rx[i] = z[j][i] - u[j][i];
            apply_r(&t[j], 1, rx, tmp);
            for (int i = 0; i < 2 * N; i++)
                rhs[i] += rho * tmp[i];
        }
        solve(&H, rhs, x);
        for (int j = 0; j < nt; j++) {
            if (t[j].pen == MR_PENALTY_L2)
                continue;
            const int m = rows_of(&t[j]);
            apply_r(&t[j], 0, x, rx);
            for (int i = 0; i < 2 * m; i++)
                z[j][i] = rx[i] + u[j][i];
            ref_prox(&t[j], t[j].lambda / rho, z[j]);
            for (int i = 0; i < 2 * m; i++)
                u[j][i] += rx[i] - z[j][i];
        }
    }
    for (int j = 0; j < nt; j++) {
        free(z[j]);
        free(u[j]);
    }
    free(H.a);
    free(b);
    free(rhs);
    free(tmp);
    free(rx);
}

/* ---- the cases ------------------------------------------------------------------------------------ */

typedef struct {
    mr_backend *be;
    mat A;
    double d[2 * M];
    float b[2 * N];
    double dn2;
    mr_linop *e;
} setup;

static void run_case(setup *s, const char *label, const rterm *t, int nt, const int *tight, const mr_solver_kind *solvers,
                     const int *iters, int nsolvers)
{
    double xref[2 * N];
    reference(&s->A, s->d, t, nt, xref);
    const double fref = objective(&s->A, s->d, t, nt, xref);
    mr_linop *ops[4] = {0};
    for (int k = 0; k < nsolvers; k++) {
        char what[256];
        mr_problem *p = NULL;
        float *bd = mr_backend_upload(s->be, 2 * N, s->b), *x = mr_backend_alloc(s->be, N);
        CHECK_OK(mr_problem_create(&p, s->e, bd, s->dn2));
        for (int j = 0; p && j < nt; j++) {
            mr_term term = {"term", NULL, t[j].pen, t[j].lambda, NULL, tight[j], NULL, NULL};
            if (t[j].R && !ops[j])
                ops[j] = dense_linop(s->be, (mat *)t[j].R, t[j].pen == MR_PENALTY_L12 ? t[j].groups : 1);
            term.op = ops[j];
            CHECK_OK(mr_problem_add_term(p, &term));
        }
        mr_solve_opts o;
        mr_solve_opts_default(&o);
        o.solver = solvers[k];
        o.iters = iters[k];
        mr_solve_result r;
        mr_status st = mr_problem_solve(p, &o, x, &r);
        snprintf(what, sizeof what, "%s: %s solve", label, mr_solver_name(solvers[k]));
        test_check_ok(__FILE__, __LINE__, what, st);
        if (st == MR_OK) {
            double xd[2 * N];
            for (int i = 0; i < 2 * N; i++)
                xd[i] = x[i];
            double num = 0, den = 0;
            for (int i = 0; i < 2 * N; i++) {
                num += (xd[i] - xref[i]) * (xd[i] - xref[i]);
                den += xref[i] * xref[i];
            }
            snprintf(what, sizeof what, "%s: %s (%d iterations): ||x - x*|| / ||x*||", label, mr_solver_name(solvers[k]),
                     r.iterations);
            CHECK_LE(what, sqrt(num / den), 2e-5);
            const double f = objective(&s->A, s->d, t, nt, xd);
            snprintf(what, sizeof what, "%s: %s: (F(x) - F(x*)) / F(x*)", label, mr_solver_name(solvers[k]));
            CHECK_LE(what, (f - fref) / fref, 1e-6);
            const double rec = r.objective[r.iterations];
            snprintf(what, sizeof what, "%s: %s: recorded objective vs F(x)", label, mr_solver_name(solvers[k]));
            CHECK_LE(what, fabs(rec - f) / f, 1e-5);
            double worst = 0;
            int finite = 1;
            for (int it = 0; it <= r.iterations; it++) {
                double sum = r.data_term[it];
                for (int j = 0; j < nt; j++)
                    sum += r.term_value[(size_t)j * (o.iters + 1) + it];
                worst = fmax(worst, fabs(sum - r.objective[it]) / fabs(r.objective[it]));
                finite &= isfinite(r.objective[it]) && isfinite(r.history[it]);
            }
            snprintf(what, sizeof what, "%s: %s: objective = data + terms, every iteration", label,
                     mr_solver_name(solvers[k]));
            CHECK_LE(what, worst, 1e-12);
            CHECK(finite);
            snprintf(what, sizeof what, "%s: %s: last objective below the first", label, mr_solver_name(solvers[k]));
            CHECK_LE(what, r.objective[r.iterations] - r.objective[0], 0.0);
            mr_solve_result_free(&r);
        }
        mr_problem_free(p);
        free(bd);
        free(x);
    }
    for (int j = 0; j < 4; j++)
        mr_linop_free(ops[j]);
}

/* The preconditioned path (ADMM's x-updates with the circulant model, solver/linop.h): E the NUDFT operator
 * with its Toeplitz normal on the 6 x 5 grid and TV by the library's finite differences, whose models make
 * ADMM precondition; the reference runs on the dense matrices of the same two operators (probed column by
 * column through their forward). */
static mat probe(mr_linop *op)
{
    const int64_t nd = mr_linop_dom_size(op), nc = mr_linop_cod_size(op);
    mat A = mat_new((int)nc, (int)nd);
    float *e = calloc((size_t)nd * 2, sizeof(float)), *col = malloc((size_t)nc * 2 * sizeof(float));
    for (int64_t j = 0; j < nd; j++) {
        e[2 * j] = 1;
        CHECK_OK(mr_linop_forward(op, e, col));
        e[2 * j] = 0;
        for (int64_t i = 0; i < nc; i++) {
            RE(A, i, j) = col[2 * i];
            IM(A, i, j) = col[2 * i + 1];
        }
    }
    free(e);
    free(col);
    return A;
}

static void run_precond_case(mr_backend *be)
{
    const int64_t matrix[3] = {NX, NY, 1};
    float *traj = test_random_traj(&rng, matrix, M);
    mr_nudft_opts no;
    mr_nudft_opts_default(&no);
    mr_linop *e = NULL, *fd = NULL;
    CHECK_OK(mr_linop_nudft_create(&e, be, matrix, traj, M, NULL, 1, &no, NULL));
    CHECK_OK(mr_linop_fd_create(&fd, be, matrix));
    if (!e || !fd) {
        mr_linop_free(e);
        mr_linop_free(fd);
        free(traj);
        return;
    }
    mat A = probe(e), D = probe(fd);
    double img[2 * N], d[2 * M], b[2 * N], dn2 = 0;
    for (int i = 0; i < N; i++) {
        img[2 * i] = (i % NX >= 2 && i / NX >= 1) ? 1.0 : 0.2;
        img[2 * i + 1] = 0;
    }
    mat_apply(&A, 0, img, d);
    double scale = 0;
    for (int i = 0; i < 2 * M; i++)
        scale = fmax(scale, fabs(d[i]));
    for (int i = 0; i < 2 * M; i++) {
        d[i] += 0.05 * scale * test_normal(&rng);
        dn2 += d[i] * d[i];
    }
    mat_apply(&A, 1, d, b);
    double bmax = 0;
    for (int i = 0; i < 2 * N; i++)
        bmax = fmax(bmax, fabs(b[i]));
    const rterm t[1] = {{&D, MR_PENALTY_L12, 0.02 * bmax, 2}};
    double xref[2 * N];
    reference(&A, d, t, 1, xref);
    float bf[2 * N];
    for (int i = 0; i < 2 * N; i++)
        bf[i] = (float)b[i];
    mr_problem *p = NULL;
    float *x = mr_backend_alloc(be, N);
    CHECK_OK(mr_problem_create(&p, e, bf, dn2));
    mr_term term = {"tv", fd, MR_PENALTY_L12, t[0].lambda, NULL, 0, NULL, NULL};
    if (p)
        CHECK_OK(mr_problem_add_term(p, &term));
    mr_solve_opts o;
    mr_solve_opts_default(&o);
    o.solver = MR_SOLVER_ADMM;
    o.iters = 800;
    o.precond = 1;
    mr_solve_result r;
    if (p && x && mr_problem_solve(p, &o, x, &r) == MR_OK) {
        CHECK(r.preconditioned == 1);
        double xd[2 * N];
        for (int i = 0; i < 2 * N; i++)
            xd[i] = x[i];
        CHECK_LE("TV with the NUDFT's Toeplitz normal: preconditioned ADMM: ||x - x*|| / ||x*||",
                 test_rel_l2(x, xref, 2 * N), 2e-5);
        const double f = objective(&A, d, t, 1, xd), fref = objective(&A, d, t, 1, xref);
        CHECK_LE("TV with the NUDFT's Toeplitz normal: preconditioned ADMM: (F(x) - F(x*)) / F(x*)", (f - fref) / fref,
                 1e-6);
        mr_solve_result_free(&r);
    } else {
        CHECK(0 && "the preconditioned ADMM solve");
    }
    mr_problem_free(p);
    free(x);
    free(A.a);
    free(D.a);
    mr_linop_free(e);
    mr_linop_free(fd);
    free(traj);
}

int main(void)
{
    rng = test_seed();
    setup s;
    memset(&s, 0, sizeof s);
    const mr_device_sel cpu = {MR_DEVICE_CPU, -1, 0, 0, {0}};
    CHECK_OK(mr_backend_create(&s.be, cpu, 2));
    if (!s.be)
        return test_finish("test_problem");
    /* E: random M x N; data from a piecewise-constant image plus noise */
    s.A = mat_new(M, N);
    for (int i = 0; i < 2 * M * N; i++)
        s.A.a[i] = test_normal(&rng) / sqrt((double)M);
    double img[2 * N];
    for (int y = 0; y < NY; y++)
        for (int x = 0; x < NX; x++) {
            img[2 * (y * NX + x)] = (x >= 2 && x <= 4 && y >= 1 && y <= 3) ? 1.0 : 0.2;
            img[2 * (y * NX + x) + 1] = x > 3 ? 0.3 : 0.0;
        }
    mat_apply(&s.A, 0, img, s.d);
    for (int i = 0; i < 2 * M; i++) {
        s.d[i] += 0.05 * test_normal(&rng);
        s.dn2 += s.d[i] * s.d[i];
    }
    double b[2 * N];
    mat_apply(&s.A, 1, s.d, b);
    for (int i = 0; i < 2 * N; i++)
        s.b[i] = (float)b[i];
    s.e = dense_linop(s.be, &s.A, 1);

    mat D = fd_matrix(), Q = unitary();
    const int untight[2] = {0, 0}, tight1[2] = {1, 0};
    {
        const rterm t[1] = {{&D, MR_PENALTY_L2, 0.3, 1}};
        const mr_solver_kind sv[3] = {MR_SOLVER_CG, MR_SOLVER_ADMM, MR_SOLVER_FISTA};
        const int it[3] = {60, 300, 3000};
        run_case(&s, "Tikhonov on the gradient", t, 1, untight, sv, it, 3);
    }
    {
        const rterm t[1] = {{NULL, MR_PENALTY_L1, 0.05, 1}};
        const mr_solver_kind sv[3] = {MR_SOLVER_FISTA, MR_SOLVER_ADMM, MR_SOLVER_PDHG};
        const int it[3] = {3000, 500, 5000};
        run_case(&s, "l1 of the image", t, 1, untight, sv, it, 3);
    }
    {
        const rterm t[1] = {{&Q, MR_PENALTY_L1, 0.05, 1}};
        const mr_solver_kind sv[3] = {MR_SOLVER_FISTA, MR_SOLVER_ADMM, MR_SOLVER_PDHG};
        const int it[3] = {3000, 500, 5000};
        run_case(&s, "l1 of a unitary transform (tight)", t, 1, tight1, sv, it, 3);
    }
    {
        const rterm t[1] = {{&D, MR_PENALTY_L12, 0.05, 2}};
        const mr_solver_kind sv[2] = {MR_SOLVER_ADMM, MR_SOLVER_PDHG};
        const int it[2] = {800, 8000};
        run_case(&s, "isotropic TV", t, 1, untight, sv, it, 2);
    }
    {
        const rterm t[2] = {{&D, MR_PENALTY_L12, 0.04, 2}, {NULL, MR_PENALTY_L1, 0.02, 1}};
        const mr_solver_kind sv[2] = {MR_SOLVER_ADMM, MR_SOLVER_PDHG};
        const int it[2] = {800, 8000};
        run_case(&s, "TV + l1", t, 2, untight, sv, it, 2);
    }
    {
        const rterm t[2] = {{&D, MR_PENALTY_L12, 0.04, 2}, {NULL, MR_PENALTY_L2, 0.1, 1}};
        const mr_solver_kind sv[2] = {MR_SOLVER_ADMM, MR_SOLVER_PDHG};
        const int it[2] = {800, 8000};
        run_case(&s, "TV + Tikhonov", t, 2, untight, sv, it, 2);
    }

    run_precond_case(s.be);

    /* AUTO's choices and the refusals */
    mr_problem *p = NULL;
    float *bd = mr_backend_upload(s.be, 2 * N, s.b), *x = mr_backend_alloc(s.be, N);
    CHECK_OK(mr_problem_create(&p, s.e, bd, s.dn2));
    mr_linop *dop = dense_linop(s.be, &D, 2);
    CHECK(mr_problem_auto_solver(p) == MR_SOLVER_CG);
    mr_term l1 = {"l1", NULL, MR_PENALTY_L1, 0.1, NULL, 0, NULL, NULL};
    mr_term tv = {"tv", dop, MR_PENALTY_L12, 0.1, NULL, 0, NULL, NULL};
    CHECK_OK(mr_problem_add_term(p, &l1));
    CHECK(mr_problem_auto_solver(p) == MR_SOLVER_FISTA);
    CHECK(mr_problem_check_solver(p, MR_SOLVER_CG) == MR_EINVAL);
    CHECK_OK(mr_problem_add_term(p, &tv));
    CHECK(mr_problem_auto_solver(p) == MR_SOLVER_ADMM);
    CHECK(mr_problem_check_solver(p, MR_SOLVER_FISTA) == MR_EINVAL);
    mr_problem_free(p);
    CHECK_OK(mr_problem_create(&p, s.e, bd, s.dn2));
    CHECK_OK(mr_problem_add_term(p, &tv));
    CHECK(mr_problem_check_solver(p, MR_SOLVER_FISTA) == MR_EINVAL);
    mr_term bad = tv;
    bad.lambda = -1;
    CHECK(mr_problem_add_term(p, &bad) == MR_EINVAL);
    bad = tv;
    bad.tight = 1;
    bad.op = NULL;
    CHECK(mr_problem_add_term(p, &bad) == MR_EINVAL);
    mr_problem_free(p);
    /* b = 0: x = 0 at once */
    float zero[2 * N] = {0};
    float *bz = mr_backend_upload(s.be, 2 * N, zero);
    CHECK_OK(mr_problem_create(&p, s.e, bz, 0.0));
    CHECK_OK(mr_problem_add_term(p, &tv));
    mr_solve_opts o;
    mr_solve_opts_default(&o);
    mr_solve_result r;
    CHECK_OK(mr_problem_solve(p, &o, x, &r));
    CHECK(r.iterations == 0 && r.stop && !strcmp(r.stop, "zero right-hand side"));
    double xn = 0;
    for (int i = 0; i < 2 * N; i++)
        xn += fabs(x[i]);
    CHECK_LE("b = 0: |x|", xn, 0.0);
    mr_solve_result_free(&r);
    mr_problem_free(p);
    mr_linop_free(dop);
    free(bd);
    free(bz);
    free(x);
    mr_linop_free(s.e);
    mr_backend_free(s.be);
    free(s.A.a);
    free(D.a);
    free(Q.a);
    return test_finish("test_problem");
}
