/* The segment fit of the field term (solver/linop_field_internal.h): least-squares interpolators of
 * e^{-i 2 pi omega t} over the rectangle a scan spans, and the choice of the segment count.
 *
 * Centring first: with omega = w_c + dw and t = t_c + dt,
 *   e^{-i2pi omega t} = e^{-i2pi omega t_c} e^{-i2pi w_c dt} e^{-i2pi dw dt},
 * the first two factors are exact functions of omega or of t alone (folded into C_l and B_l), and only
 * e^{-i2pi dw dt} on the centred rectangle [-W/2, W/2] x [-T/2, T/2] is approximated: its difficulty is
 * the product W T (cycles of phase the field range accumulates over the readout), not the offset or TE.
 * Frequency and time segmentation are the same fit with the roles of dw and dt exchanged. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"
#include "linop_field_internal.h"

#define TWO_PI 6.283185307179586476925286766559
#define BOUND_GRID 97

void field_fit_free(field_fit *f)
{
    free(f->u);
    free(f->proj);
    free(f->tab);
    f->u = f->proj = f->tab = NULL;
    f->ntab = 0;
}

/* (a + ib)(c + id) */
static void cmul(double ar, double ai, double br, double bi, double *r, double *i)
{
    *r = ar * br - ai * bi;
    *i = ar * bi + ai * br;
}

static void cis(double cycles, double *c, double *s)
{
    cycles -= nearbyint(cycles);
    *c = cos(TWO_PI * cycles);
    *s = sin(TWO_PI * cycles);
}

/* Q R of the (K + L) x L matrix a (column-major, complex interleaved: a[(l * rows + k) * 2]) by modified
 * Gram-Schmidt with one reorthogonalisation (orthonormal Q to rounding for any conditioning we meet);
 * q overwrites a, r [L][L][2] upper triangular, r[i][j] at (i * L + j). */
static void qr_mgs2(double *a, int rows, int L, double *r)
{
    memset(r, 0, (size_t)L * L * 2 * sizeof(double));
    for (int j = 0; j < L; j++) {
        double *aj = a + (size_t)j * rows * 2;
        for (int pass = 0; pass < 2; pass++)
            for (int i = 0; i < j; i++) {
                const double *qi = a + (size_t)i * rows * 2;
                double dr = 0, di = 0; /* q_i^H a_j */
                for (int k = 0; k < rows; k++) {
                    dr += qi[2 * k] * aj[2 * k] + qi[2 * k + 1] * aj[2 * k + 1];
                    di += qi[2 * k] * aj[2 * k + 1] - qi[2 * k + 1] * aj[2 * k];
                }
                for (int k = 0; k < rows; k++) {
                    double pr, pi;
                    cmul(qi[2 * k], qi[2 * k + 1], dr, di, &pr, &pi);
                    aj[2 * k] -= pr;
                    aj[2 * k + 1] -= pi;
                }
                r[2 * (i * L + j)] += dr;
                r[2 * (i * L + j) + 1] += di;
            }
        double nrm = 0;
        for (int k = 0; k < rows; k++)
            nrm += aj[2 * k] * aj[2 * k] + aj[2 * k + 1] * aj[2 * k + 1];
        nrm = sqrt(nrm);
        r[2 * (j * L + j)] = nrm;
        for (int k = 0; k < 2 * rows; k++)
            aj[k] = nrm > 0 ? aj[k] / nrm : 0.0;
    }
}

mr_status field_fit_make(field_fit *f, mr_field_model model, int L, double wmin, double wmax, double tmin,
                         double tmax, double tol)
{
    memset(f, 0, sizeof *f);
    if (L < 1 || L > MR_FIELD_MAX_SEGMENTS || !(wmax >= wmin) || !(tmax >= tmin) || !isfinite(wmax - wmin) ||
        !isfinite(tmax - tmin))
        return mr_error(MR_EINVAL, "field model: %d segments over %g..%g Hz and %g..%g s", L, wmin, wmax, tmin, tmax);
    f->model = model;
    f->L = L;
    f->wc = 0.5 * (wmin + wmax);
    f->tc = 0.5 * (tmin + tmax);
    f->W = wmax - wmin;
    f->T = tmax - tmin;
    const int freq = model == MR_FIELD_MODEL_FREQUENCY;
    const double span_nodes = freq ? f->W : f->T, span_u = freq ? f->T : f->W;
    f->step = span_nodes / L;
    const double cycles = f->W * f->T;
    int k = 4 * L + 16 + (int)ceil(8.0 * cycles);
    f->K = k > 2048 ? 2048 : k;
    const int K = f->K, rows = K + L;
    f->u = malloc((size_t)K * sizeof(double));
    f->proj = malloc((size_t)L * K * 2 * sizeof(double));
    double *a = malloc((size_t)rows * L * 2 * sizeof(double)), *r = malloc((size_t)L * L * 2 * sizeof(double));
    if (!f->u || !f->proj || !a || !r) {
        free(a);
        free(r);
        field_fit_free(f);
        return mr_error(MR_ENOMEM, "field model: out of memory for the fit");
    }
    for (int i = 0; i < K; i++) /* Chebyshev points: the ends weigh more, closer to a min-max fit */
        f->u[i] = 0.5 * span_u * cos(M_PI * (i + 0.5) / K);
    const double mu = (double)K * fmax(1e-16, (0.01 * tol) * (0.01 * tol));
    memset(a, 0, (size_t)rows * L * 2 * sizeof(double));
    for (int l = 0; l < L; l++) {
        const double s = (l - 0.5 * (L - 1)) * f->step;
        double *col = a + (size_t)l * rows * 2;
        for (int i = 0; i < K; i++) {
            double c, sn;
            cis(-f->u[i] * s, &c, &sn);
            col[2 * i] = c;
            col[2 * i + 1] = sn;
        }
        col[2 * (K + l)] = sqrt(mu);
    }
    qr_mgs2(a, rows, L, r);
    /* P = R^{-1} Qtop^H: back substitution for every column k of Qtop^H */
    for (int i = 0; i < K; i++) {
        double *x = f->proj; /* column i of P: x_l at proj[(l K + i) 2] */
        for (int l = L - 1; l >= 0; l--) {
            const double *ql = a + (size_t)l * rows * 2;
            double br = ql[2 * i], bi = -ql[2 * i + 1]; /* conj(Q[i][l]) */
            for (int j = l + 1; j < L; j++) {
                double pr, pi;
                cmul(r[2 * (l * L + j)], r[2 * (l * L + j) + 1], x[2 * (j * K + i)], x[2 * (j * K + i) + 1], &pr, &pi);
                br -= pr;
                bi -= pi;
            }
            const double d = r[2 * (l * L + l)]; /* real, > 0 with the regularisation */
            x[2 * (l * K + i)] = br / d;
            x[2 * (l * K + i) + 1] = bi / d;
        }
    }
    free(a);
    free(r);
    return MR_OK;
}

/* beta(v) = P y(v), y_i = e^{-i2pi u_i v}, into beta [L][2] */
static void fit_beta_direct(const field_fit *f, double v, double *beta)
{
    memset(beta, 0, (size_t)f->L * 2 * sizeof(double));
    for (int i = 0; i < f->K; i++) {
        double yr, yi;
        cis(-f->u[i] * v, &yr, &yi);
        for (int l = 0; l < f->L; l++) {
            const double *p = f->proj + 2 * (l * f->K + i);
            beta[2 * l] += p[0] * yr - p[1] * yi;
            beta[2 * l + 1] += p[0] * yi + p[1] * yr;
        }
    }
}

/* beta(v): from the table (linear interpolation, clamped to its interval) when there is one */
static void fit_beta(const field_fit *f, double v, double *beta)
{
    if (!f->ntab) {
        fit_beta_direct(f, v, beta);
        return;
    }
    double u = f->half > 0 ? (v + f->half) / (2.0 * f->half) * (f->ntab - 1) : 0.0;
    u = u < 0 ? 0 : u > f->ntab - 1 ? f->ntab - 1 : u;
    const int i = u >= f->ntab - 1 ? f->ntab - 2 : (int)u;
    const double w = u - i;
    const double *a = f->tab + (size_t)i * f->L * 2, *b = a + f->L * 2;
    for (int k = 0; k < 2 * f->L; k++)
        beta[k] = (1 - w) * a[k] + w * b[k];
}

mr_status field_fit_tabulate(field_fit *f, int points)
{
    if (points < 2)
        return MR_OK;
    double *tab = malloc((size_t)points * f->L * 2 * sizeof(double));
    if (!tab)
        return mr_error(MR_ENOMEM, "field model: out of memory for the interpolator table");
    const double half = 0.5 * (f->model == MR_FIELD_MODEL_FREQUENCY ? f->W : f->T);
#pragma omp parallel for schedule(static)
    for (int i = 0; i < points; i++)
        fit_beta_direct(f, -half + 2.0 * half * i / (points - 1), tab + (size_t)i * f->L * 2);
    free(f->tab);
    f->tab = tab;
    f->ntab = points;
    f->half = half;
    return MR_OK;
}

void field_fit_b(const field_fit *f, double t, double *b)
{
    const double dt = t - f->tc;
    if (f->model == MR_FIELD_MODEL_FREQUENCY) {
        for (int l = 0; l < f->L; l++)
            cis(-(f->wc + (l - 0.5 * (f->L - 1)) * f->step) * dt, &b[2 * l], &b[2 * l + 1]);
        return;
    }
    fit_beta(f, dt, b);
    for (int l = 0; l < f->L; l++) {
        double c, s;
        cis(-f->wc * (dt - (l - 0.5 * (f->L - 1)) * f->step), &c, &s);
        cmul(c, s, b[2 * l], b[2 * l + 1], &b[2 * l], &b[2 * l + 1]);
    }
}

void field_fit_c(const field_fit *f, double w, double *c)
{
    if (f->model == MR_FIELD_MODEL_TIME) {
        for (int l = 0; l < f->L; l++)
            cis(-w * (f->tc + (l - 0.5 * (f->L - 1)) * f->step), &c[2 * l], &c[2 * l + 1]);
        return;
    }
    fit_beta(f, w - f->wc, c);
    double pr, pi;
    cis(-w * f->tc, &pr, &pi);
    for (int l = 0; l < f->L; l++)
        cmul(pr, pi, c[2 * l], c[2 * l + 1], &c[2 * l], &c[2 * l + 1]);
}

void field_fit_bound(const field_fit *f, double *max, double *rms)
{
    const int L = f->L;
    double *b = malloc((size_t)BOUND_GRID * L * 2 * sizeof(double)), *c = malloc((size_t)L * 2 * sizeof(double));
    double worst = 0, sum = 0;
    if (!b || !c) {
        free(b);
        free(c);
        *max = *rms = INFINITY;
        return;
    }
    for (int j = 0; j < BOUND_GRID; j++)
        field_fit_b(f, f->tc + f->T * ((double)j / (BOUND_GRID - 1) - 0.5), b + (size_t)j * L * 2);
    for (int i = 0; i < BOUND_GRID; i++) {
        const double w = f->wc + f->W * ((double)i / (BOUND_GRID - 1) - 0.5);
        field_fit_c(f, w, c);
        for (int j = 0; j < BOUND_GRID; j++) {
            const double t = f->tc + f->T * ((double)j / (BOUND_GRID - 1) - 0.5);
            double er, ei;
            cis(-w * t, &er, &ei);
            for (int l = 0; l < L; l++) {
                double pr, pi;
                cmul(b[2 * (j * L + l)], b[2 * (j * L + l) + 1], c[2 * l], c[2 * l + 1], &pr, &pi);
                er -= pr;
                ei -= pi;
            }
            const double e2 = er * er + ei * ei;
            worst = fmax(worst, e2);
            sum += e2;
        }
    }
    free(b);
    free(c);
    *max = sqrt(worst);
    *rms = sqrt(sum / (BOUND_GRID * BOUND_GRID));
}

mr_status field_fit_choose(field_fit *f, mr_field_model model, int segments, double wmin, double wmax, double tmin,
                           double tmax, double tol)
{
    const int lo = segments > 0 ? segments : 1, hi = segments > 0 ? segments : MR_FIELD_MAX_SEGMENTS;
    double bmax = INFINITY, brms;
    for (int L = lo; L <= hi; L++) {
        mr_status st = field_fit_make(f, model, L, wmin, wmax, tmin, tmax, tol);
        if (st != MR_OK)
            return st;
        field_fit_bound(f, &bmax, &brms);
        mr_log(MR_LOG_DEBUG, "field model %s: %d segments: bound %.3g (rms %.3g)", mr_field_model_name(model), L, bmax,
               brms);
        if (bmax <= tol || L == hi)
            break;
        field_fit_free(f);
    }
    if (segments > 0 || bmax <= tol)
        return MR_OK;
    field_fit_free(f);
    return mr_error(MR_EINVAL,
                    "field model: %d segments do not reach the bound %g over the field range %g..%g Hz and the readout "
                    "times %g..%g ms (%.1f cycles of phase; best %g): use a larger tolerance or the exact model",
                    MR_FIELD_MAX_SEGMENTS, tol, wmin, wmax, 1e3 * tmin, 1e3 * tmax, (wmax - wmin) * (tmax - tmin), bmax);
}
