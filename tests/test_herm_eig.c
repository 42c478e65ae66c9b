/* mr_herm_eig (solver/herm_eig.h) on fresh random Hermitian matrices with a known spectrum,
 * A = U diag(lambda) U^H (U a random unitary from Gram-Schmidt in float64, lambda drawn), sizes 1..300,
 * plus degenerate cases (zero matrix, identity, repeated eigenvalues, real symmetric, already
 * diagonal or tridiagonal):
 *   eigenvalues:        max |w - lambda| / max |lambda|          <= 1e-12
 *   residual:           ||A V - V W||_F / ||A||_F                <= 1e-12
 *   orthonormality:     max |V V^H - I|                          <= 1e-12
 * and the top-nvec subset equals the corresponding rows of the full set (up to a phase). */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solver/herm_eig.h"
#include "testutil.h"

typedef double complex cplx;

static void random_unitary(int64_t n, uint64_t *rng, cplx *U)
{
    for (int64_t i = 0; i < n * n; i++)
        U[i] = test_normal(rng) + I * test_normal(rng);
    for (int64_t r = 0; r < n; r++) { /* Gram-Schmidt on rows, twice for accuracy */
        for (int pass = 0; pass < 2; pass++)
            for (int64_t q = 0; q < r; q++) {
                cplx s = 0;
                for (int64_t i = 0; i < n; i++)
                    s += conj(U[q * n + i]) * U[r * n + i];
                for (int64_t i = 0; i < n; i++)
                    U[r * n + i] -= s * U[q * n + i];
            }
        double nrm = 0;
        for (int64_t i = 0; i < n; i++)
            nrm += creal(U[r * n + i] * conj(U[r * n + i]));
        nrm = sqrt(nrm);
        for (int64_t i = 0; i < n; i++)
            U[r * n + i] /= nrm;
    }
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* A = sum_r lambda_r u_r u_r^H (u_r the rows of U) */
static void compose(int64_t n, const cplx *U, const double *lambda, cplx *A)
{
    memset(A, 0, (size_t)(n * n) * sizeof *A);
    for (int64_t r = 0; r < n; r++)
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++)
                A[i * n + j] += lambda[r] * U[r * n + i] * conj(U[r * n + j]);
}

static void check_case(const char *name, int64_t n, const cplx *A, const double *lambda_sorted, int64_t nvec)
{
    cplx *work = malloc((size_t)(n * n) * sizeof *work), *V = malloc((size_t)(n * n) * sizeof *V),
         *Vs = malloc((size_t)(n * n) * sizeof *Vs);
    double *w = malloc((size_t)n * sizeof *w), *w2 = malloc((size_t)n * sizeof *w2);
    memcpy(work, A, (size_t)(n * n) * sizeof *work);
    CHECK_OK(mr_herm_eig(n, (double *)work, w, (double *)V, n, 2));
    double lmax = 0, werr = 0, anorm = 0, res = 0, orth = 0;
    for (int64_t i = 0; i < n; i++) {
        lmax = fmax(lmax, fabs(lambda_sorted[i]));
        werr = fmax(werr, fabs(w[i] - lambda_sorted[i]));
    }
    for (int64_t i = 0; i < n * n; i++)
        anorm += creal(A[i] * conj(A[i]));
    for (int64_t r = 0; r < n; r++)
        for (int64_t i = 0; i < n; i++) {
            cplx s = 0;
            for (int64_t j = 0; j < n; j++)
                s += A[i * n + j] * V[r * n + j];
            s -= w[r] * V[r * n + i];
            res += creal(s * conj(s));
        }
    for (int64_t r = 0; r < n; r++)
        for (int64_t q = 0; q < n; q++) {
            cplx s = 0;
            for (int64_t i = 0; i < n; i++)
                s += V[r * n + i] * conj(V[q * n + i]);
            orth = fmax(orth, cabs(s - (r == q ? 1.0 : 0.0)));
        }
    char what[200];
    snprintf(what, sizeof what, "%s n=%lld: max |w - lambda| / max |lambda|", name, (long long)n);
    CHECK_LE(what, lmax > 0 ? werr / lmax : werr, 1e-12);
    snprintf(what, sizeof what, "%s n=%lld: ||A V - V W|| / ||A||", name, (long long)n);
    CHECK_LE(what, anorm > 0 ? sqrt(res / anorm) : sqrt(res), 1e-12);
    snprintf(what, sizeof what, "%s n=%lld: max |V V^H - I|", name, (long long)n);
    CHECK_LE(what, orth, 1e-12);
    /* the top nvec alone: same eigenvalues, same vectors up to a phase where the eigenvalue is simple */
    memcpy(work, A, (size_t)(n * n) * sizeof *work);
    CHECK_OK(mr_herm_eig(n, (double *)work, w2, (double *)Vs, nvec, 1));
    double wd = 0, vd = 0;
    for (int64_t i = 0; i < n; i++)
        wd = fmax(wd, fabs(w2[i] - w[i]));
    for (int64_t r = 0; r < nvec; r++) {
        const int64_t j = n - nvec + r;
        const double gap = fmin(j > 0 ? w[j] - w[j - 1] : INFINITY, j + 1 < n ? w[j + 1] - w[j] : INFINITY);
        if (!(gap > 1e-6 * (lmax > 0 ? lmax : 1)))
            continue;
        cplx s = 0;
        for (int64_t i = 0; i < n; i++)
            s += conj(V[j * n + i]) * Vs[r * n + i];
        vd = fmax(vd, 1 - cabs(s));
    }
    snprintf(what, sizeof what, "%s n=%lld: top %lld alone, max |w difference| / max |lambda|", name, (long long)n,
             (long long)nvec);
    CHECK_LE(what, lmax > 0 ? wd / lmax : wd, 1e-14);
    snprintf(what, sizeof what, "%s n=%lld: top %lld alone, max 1 - |<v_full, v_top>|", name, (long long)n,
             (long long)nvec);
    CHECK_LE(what, vd, 1e-10);
    free(work);
    free(V);
    free(Vs);
    free(w);
    free(w2);
}

static void spectrum_case(const char *name, int64_t n, uint64_t *rng, int kind)
{
    cplx *U = malloc((size_t)(n * n) * sizeof *U), *A = malloc((size_t)(n * n) * sizeof *A);
    double *lambda = malloc((size_t)n * sizeof *lambda);
    random_unitary(n, rng, U);
    for (int64_t i = 0; i < n; i++) {
        switch (kind) {
        case 0: lambda[i] = 10 * test_normal(rng); break;            /* spread, both signs */
        case 1: lambda[i] = (double)(i % 3);  break;                  /* three values, repeated */
        case 4: lambda[i] = i % 2 ? 0 : pow(10.0, -18.0 * test_uniform(rng)); break; /* graded, half null */
        default: lambda[i] = pow(10.0, -12.0 * test_uniform(rng)); break; /* positive, 12 decades */
        }
    }
    compose(n, U, lambda, A);
    if (kind == 3) /* real symmetric: drop the imaginary parts (the spectrum changes: recompute below) */
        for (int64_t i = 0; i < n * n; i++)
            A[i] = creal(A[i]);
    qsort(lambda, (size_t)n, sizeof *lambda, cmp_double);
    if (kind == 3) { /* reference spectrum of the real part from the solver itself is circular: skip w check */
        cplx *work = malloc((size_t)(n * n) * sizeof *work);
        memcpy(work, A, (size_t)(n * n) * sizeof *work);
        CHECK_OK(mr_herm_eig(n, (double *)work, lambda, NULL, 0, 1));
        free(work);
    }
    check_case(name, n, A, lambda, n > 3 ? n / 3 : n);
    free(U);
    free(A);
    free(lambda);
}

int main(void)
{
    uint64_t rng = test_seed();
    const int64_t sizes[] = {1, 2, 3, 7, 32, 100, 144, 300};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        spectrum_case("random spectrum", sizes[s], &rng, 0);
        if (sizes[s] <= 144) {
            spectrum_case("repeated eigenvalues", sizes[s], &rng, 1);
            spectrum_case("12 decades", sizes[s], &rng, 2);
            spectrum_case("real symmetric", sizes[s], &rng, 3);
            spectrum_case("18 decades and a null space (an ESPIRiT Gram matrix)", sizes[s], &rng, 4);
        }
    }
    /* structured inputs */
    const int64_t n = 40;
    cplx *A = calloc((size_t)(n * n), sizeof *A);
    double *lam = malloc((size_t)n * sizeof *lam);
    for (int64_t i = 0; i < n; i++)
        lam[i] = 0;
    check_case("zero matrix", n, A, lam, n);
    for (int64_t i = 0; i < n; i++) {
        A[i * n + i] = 1;
        lam[i] = 1;
    }
    check_case("identity", n, A, lam, 5);
    for (int64_t i = 0; i < n; i++) { /* the 1D Laplacian, tridiagonal already: 2 - 2 cos(pi k / (n + 1)) */
        A[i * n + i] = 2;
        if (i + 1 < n)
            A[i * n + i + 1] = A[(i + 1) * n + i] = -1;
        lam[i] = 2 - 2 * cos(M_PI * (double)(i + 1) / (double)(n + 1));
    }
    qsort(lam, (size_t)n, sizeof *lam, cmp_double);
    check_case("1D Laplacian (tridiagonal)", n, A, lam, 7);
    /* errors */
    double bad[2] = {NAN, 0}, w[1];
    CHECK(mr_herm_eig(1, bad, w, NULL, 0, 1) == MR_EINVAL);
    CHECK(mr_herm_eig(0, bad, w, NULL, 0, 1) == MR_EINVAL);
    free(A);
    free(lam);
    return test_finish("test_herm_eig");
}
