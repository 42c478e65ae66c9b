/* Hermitian eigen-decomposition: Householder tridiagonalisation + implicit QL (see herm_eig.h). */
#include "herm_eig.h"

#include <complex.h>
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "cplx_inline.h"

typedef mr_cplx cplx;

#define QL_MAX_ITERS 60
/* below this trailing size the reduction's loops stay on one thread */
#define PARALLEL_MIN 96

/* Reduce the Hermitian A (n x n, destroyed) to tridiagonal form A = Q T Q^H: d[n] the real
 * diagonal, e[n - 1] the complex subdiagonal T_{k+1,k}; the reflector of step k is
 * I - tau[k] v v^H with v = refl[k][k + 1 .. n - 1] (the rest of row k unused). */
static void tridiagonalise(int64_t n, cplx *A, double *d, cplx *e, cplx *refl, double *tau, cplx *p, int nt)
{
    for (int64_t k = 0; k + 2 < n; k++) {
        const int64_t m = n - k - 1, o = k + 1;
        cplx *v = refl + k * n + o;
        double tail = 0;
        for (int64_t i = 1; i < m; i++) {
            const cplx x = A[(o + i) * n + k];
            tail += creal(x) * creal(x) + cimag(x) * cimag(x);
        }
        const cplx x0 = A[o * n + k];
        if (tail == 0) { /* already tridiagonal in this column */
            tau[k] = 0;
            e[k] = x0;
            continue;
        }
        const double ax0 = cabs(x0), sigma = sqrt(tail + ax0 * ax0);
        const cplx phase = ax0 > 0 ? x0 / ax0 : 1;
        const cplx alpha = -phase * sigma; /* H x = alpha e_1 */
        for (int64_t i = 0; i < m; i++)
            v[i] = A[(o + i) * n + k];
        v[0] = x0 - alpha;
        const double beta = tail + creal(v[0] * conj(v[0]));
        tau[k] = 2.0 / beta;
        e[k] = alpha;
        /* trailing block B <- H B H = B - v q^H - q v^H, p = tau B v, q = p - (tau/2)(v^H p) v */
        const double t = tau[k];
#pragma omp parallel for schedule(static) num_threads(nt) if (m > PARALLEL_MIN)
        for (int64_t i = 0; i < m; i++) {
            const cplx *row = A + (o + i) * n + o;
            cplx s = 0;
            for (int64_t j = 0; j < m; j++)
                s += mr_cmul(row[j], v[j]);
            p[i] = t * s;
        }
        cplx vp = 0;
        for (int64_t i = 0; i < m; i++)
            vp += mr_cmulc(p[i], v[i]);
        const double K = 0.5 * t * creal(vp);
        for (int64_t i = 0; i < m; i++)
            p[i] -= K * v[i]; /* p becomes q */
#pragma omp parallel for schedule(static) num_threads(nt) if (m > PARALLEL_MIN)
        for (int64_t i = 0; i < m; i++) {
            cplx *row = A + (o + i) * n + o;
            const cplx vi = v[i], qi = p[i];
            for (int64_t j = 0; j < m; j++)
                row[j] -= mr_cmulc(vi, p[j]) + mr_cmulc(qi, v[j]);
        }
    }
    for (int64_t k = 0; k < n; k++)
        d[k] = creal(A[k * n + k]);
    if (n >= 2) {
        e[n - 2] = A[(n - 1) * n + (n - 2)];
        tau[n - 2] = 0;
    }
}

/* Implicit QL with Wilkinson shifts on the real symmetric tridiagonal (d, e): e[i] couples i and
 * i + 1, e[n - 1] = 0. On return d holds the eigenvalues (unsorted); zt (n x n, may be NULL), which
 * must hold the identity on entry, holds the eigenvectors as rows. */
static int tridiagonal_ql(int64_t n, double *d, double *e, double *zt)
{
    /* an off-diagonal below eps |T| is negligible even where the neighbouring diagonal is far
     * smaller: the rotations leave errors of that size behind, so a purely local test never
     * passes on graded matrices (a Gram matrix whose eigenvalues span 1e16) */
    double tnorm = 0;
    for (int64_t i = 0; i < n; i++)
        tnorm = fmax(tnorm, fabs(d[i]) + fabs(e[i]) + (i > 0 ? fabs(e[i - 1]) : 0));
    const double floor_abs = DBL_EPSILON * tnorm;
    for (int64_t l = 0; l < n; l++) {
        int iter = 0;
        for (;;) {
            int64_t m = l;
            for (; m < n - 1; m++) {
                const double dd = fabs(d[m]) + fabs(d[m + 1]);
                if (fabs(e[m]) <= DBL_EPSILON * dd || fabs(e[m]) <= floor_abs)
                    break;
            }
            if (m == l)
                break;
            if (++iter > QL_MAX_ITERS)
                return -1;
            double g = (d[l + 1] - d[l]) / (2.0 * e[l]);
            double r = hypot(g, 1.0);
            g = d[m] - d[l] + e[l] / (g + copysign(r, g));
            double s = 1, c = 1, p = 0;
            int deflated = 0;
            for (int64_t i = m - 1; i >= l; i--) {
                const double f = s * e[i], b = c * e[i];
                r = hypot(f, g);
                e[i + 1] = r;
                if (r == 0) { /* underflow: the matrix splits here */
                    d[i + 1] -= p;
                    e[m] = 0;
                    deflated = 1;
                    break;
                }
                s = f / r;
                c = g / r;
                g = d[i + 1] - p;
                r = (d[i] - g) * s + 2.0 * c * b;
                p = s * r;
                d[i + 1] = g + p;
                g = c * r - b;
                if (zt) {
                    double *zi = zt + i * n, *zj = zt + (i + 1) * n;
                    for (int64_t k = 0; k < n; k++) {
                        const double t = zj[k];
                        zj[k] = s * zi[k] + c * t;
                        zi[k] = c * zi[k] - s * t;
                    }
                }
            }
            if (deflated)
                continue;
            d[l] -= p;
            e[l] = g;
            e[m] = 0;
        }
    }
    return 0;
}

typedef struct {
    const double *w;
    int64_t i;
} keyed;

static int cmp_keyed(const void *pa, const void *pb)
{
    const keyed *a = pa, *b = pb;
    const double x = a->w[a->i], y = b->w[b->i];
    return x < y ? -1 : (x > y ? 1 : (a->i < b->i ? -1 : (a->i > b->i)));
}

static int64_t fixed_count(const double *w, int64_t n, void *ctx)
{
    (void)w, (void)n;
    return *(const int64_t *)ctx;
}

mr_status mr_herm_eig(int64_t n, double *a, double *w, double *vecs, int64_t nvec, int threads)
{
    if (vecs && (nvec < 0 || nvec > n))
        return mr_error(MR_EINVAL, "Hermitian eigen-decomposition: size %lld, %lld eigenvectors", (long long)n,
                        (long long)nvec);
    int64_t got = 0;
    return mr_herm_eig_top(n, a, w, nvec > 0 ? vecs : NULL, fixed_count, &nvec, &got, threads);
}

mr_status mr_herm_eig_top(int64_t n, double *a, double *w, double *vecs, mr_herm_eig_count_fn count, void *ctx,
                          int64_t *nvec_out, int threads)
{
    int64_t nvec = 0;
    if (nvec_out)
        *nvec_out = 0;
    if (n < 1 || !a || !w || (vecs && !count))
        return mr_error(MR_EINVAL, "Hermitian eigen-decomposition: size %lld", (long long)n);
    cplx *A = (cplx *)a;
    for (int64_t i = 0; i < 2 * n * n; i++)
        if (!isfinite(a[i]))
            return mr_error(MR_EINVAL, "Hermitian eigen-decomposition: non-finite entry %lld of a %lldx%lld matrix",
                            (long long)(i / 2), (long long)n, (long long)n);
    for (int64_t i = 0; i < n; i++) {
        A[i * n + i] = creal(A[i * n + i]);
        for (int64_t j = 0; j < i; j++) {
            const cplx h = 0.5 * (A[i * n + j] + conj(A[j * n + i]));
            A[i * n + j] = h;
            A[j * n + i] = conj(h);
        }
    }
    const int nt = threads > 0 ? threads : omp_get_max_threads();
    const int want = vecs != NULL;
    mr_status st = MR_OK;
    double *d = malloc((size_t)n * sizeof *d), *er = malloc((size_t)n * sizeof *er),
           *tau = malloc((size_t)n * sizeof *tau);
    cplx *e = malloc((size_t)n * sizeof *e), *phase = malloc((size_t)n * sizeof *phase),
         *p = malloc((size_t)n * sizeof *p), *refl = malloc((size_t)(n * n) * sizeof *refl);
    double *zt = want ? calloc((size_t)(n * n), sizeof *zt) : NULL;
    keyed *order = malloc((size_t)n * sizeof *order);
    if (!d || !er || !tau || !e || !phase || !p || !order || !refl || (want && !zt)) {
        st = mr_error(MR_ENOMEM, "Hermitian eigen-decomposition: out of memory for a %lldx%lld matrix", (long long)n,
                      (long long)n);
        goto done;
    }
    tridiagonalise(n, A, d, e, refl, tau, p, nt);
    /* T = D T' D^H with T' real: phase[k + 1] = phase[k] e_k / |e_k| */
    phase[0] = 1;
    for (int64_t k = 0; k + 1 < n; k++) {
        const double ae = cabs(e[k]);
        er[k] = ae;
        phase[k + 1] = ae > 0 ? phase[k] * e[k] / ae : phase[k];
    }
    er[n - 1] = 0;
    if (zt)
        for (int64_t i = 0; i < n; i++)
            zt[i * n + i] = 1;
    if (tridiagonal_ql(n, d, er, zt) != 0) {
        st = mr_error(MR_EINTERNAL, "Hermitian eigen-decomposition: QL did not converge for a %lldx%lld matrix",
                      (long long)n, (long long)n);
        goto done;
    }
    for (int64_t i = 0; i < n; i++)
        order[i] = (keyed){d, i};
    qsort(order, (size_t)n, sizeof *order, cmp_keyed);
    for (int64_t i = 0; i < n; i++)
        w[i] = d[order[i].i];
    if (want) {
        nvec = count(w, n, ctx);
        nvec = nvec < 0 ? 0 : (nvec > n ? n : nvec);
        if (nvec_out)
            *nvec_out = nvec;
        cplx *V = (cplx *)vecs;
#pragma omp parallel for schedule(dynamic, 4) num_threads(nt) if (n * nvec > 4096)
        for (int64_t r = 0; r < nvec; r++) {
            const double *z = zt + order[n - nvec + r].i * n;
            cplx *y = V + r * n;
            for (int64_t i = 0; i < n; i++)
                y[i] = phase[i] * z[i];
            /* eigenvector of A: Q y = H_0 (H_1 (... H_{n-3} y)) */
            for (int64_t k = n - 3; k >= 0; k--) {
                if (tau[k] == 0)
                    continue;
                const cplx *v = refl + k * n + k + 1;
                cplx *yy = y + k + 1;
                cplx s = 0;
                for (int64_t i = 0; i < n - k - 1; i++)
                    s += mr_cmulc(yy[i], v[i]);
                s *= tau[k];
                for (int64_t i = 0; i < n - k - 1; i++)
                    yy[i] -= mr_cmul(s, v[i]);
            }
        }
    }
done:
    free(d);
    free(er);
    free(tau);
    free(e);
    free(phase);
    free(p);
    free(refl);
    free(zt);
    free(order);
    return st;
}
