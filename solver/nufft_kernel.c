/* The NUFFT's kernel and parameters (nufft_kernel.h). */
#include "nufft_kernel.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kb.h"

/* The cost model (seconds; docs/NUFFT.md "Choosing the upsampling factor"): spreading costs
 * spread_s per (sample, fine-grid point) pair, the FFT fft_s per N log2 N of the fine grid (N points),
 * zeroing and reading the grid grid_s per point; all per thread on the CPU (divided by the threads).
 * Measured: CPU on the 2-core development machine (AMD EPYC, AVX-512), 3D 64^3 and 2D 256^2; GPU on the
 * H200 (docs/BENCHMARKS.md). Only their ratios matter: they pick 2 or 1.25. */
typedef struct {
    double spread_s[2]; /* float32, float64 */
    double fft_s[2];
    double grid_s[2];
} cost_consts;
static const cost_consts cost_cpu = {{2.0e-9, 2.6e-9}, {1.2e-9, 2.0e-9}, {1.0e-9, 2.0e-9}};
static const cost_consts cost_gpu = {{2.5e-12, 8.0e-12}, {1.0e-12, 2.5e-12}, {2.0e-12, 4.0e-12}};

void mr_nufft_opts_default(mr_nufft_opts *o)
{
    o->tol = 1e-6;
    o->upsample = 0.0;
    o->precision = MR_NUFFT_PREC_AUTO;
    o->threads = 0;
}

static double es_kernel(double t, int w, double beta)
{
    const double z = 2.0 * t / w;
    if (fabs(z) > 1.0)
        return 0.0;
    return exp(beta * (sqrt(1.0 - z * z) - 1.0));
}

double mr_nufft_kernel(const mr_nufft_params *p, double t) { return es_kernel(t, p->width, p->beta); }

/* Gauss-Legendre nodes and weights on [-1, 1] (Newton on the three-term recurrence); n <= GL_MAX. */
#define GL_N 128
static void gauss_legendre(int n, double *x, double *wt)
{
    for (int i = 0; i < (n + 1) / 2; i++) {
        double z = cos(M_PI * (i + 0.75) / (n + 0.5)), dp = 1.0;
        for (int it = 0; it < 100; it++) {
            double p0 = 1.0, p1 = z;
            for (int k = 2; k <= n; k++) {
                const double p2 = ((2.0 * k - 1.0) * z * p1 - (k - 1.0) * p0) / k;
                p0 = p1;
                p1 = p2;
            }
            dp = n * (z * p1 - p0) / (z * z - 1.0);
            const double dz = p1 / dp;
            z -= dz;
            if (fabs(dz) < 1e-16)
                break;
        }
        x[i] = -z;
        x[n - 1 - i] = z;
        wt[i] = wt[n - 1 - i] = 2.0 / ((1.0 - z * z) * dp * dp);
    }
}

/* The integral over |t| <= w/2 of phi(t) cos(2 pi xi t), with the Gauss-Legendre rule of GL_N nodes on
 * the support (the kernel is even). */
static double kernel_ft(int w, double beta, double xi, const double *gx, const double *gw)
{
    double s = 0.0;
    const double h = 0.5 * w;
    for (int k = 0; k < GL_N; k++) {
        const double t = h * gx[k];
        s += gw[k] * es_kernel(t, w, beta) * cos(2.0 * M_PI * xi * t);
    }
    return h * s;
}

double mr_nufft_kernel_ft(const mr_nufft_params *p, double xi)
{
    double gx[GL_N], gw[GL_N];
    gauss_legendre(GL_N, gx, gw);
    return kernel_ft(p->width, p->beta, xi, gx, gw);
}

void mr_nufft_deconv(const mr_nufft_params *p, const mr_grid *g, int a, double *out)
{
    if (!p->active[a]) {
        for (int64_t i = 0; i < g->n[a]; i++)
            out[i] = 1.0;
        return;
    }
    double gx[GL_N], gw[GL_N];
    gauss_legendre(GL_N, gx, gw);
    for (int64_t i = 0; i < g->n[a]; i++)
        out[i] = 1.0 / kernel_ft(p->width, p->beta, (double)(i - g->center[a]) / (double)p->fine[a], gx, gw);
}

/* The ES kernel of p as a kernel function (mr_nufft_kernel_fn). */
static double es_fn(void *ctx, double t)
{
    const mr_nufft_params *p = ctx;
    return es_kernel(t, p->width, p->beta);
}

/* coef[d][i] for degree D: Chebyshev interpolation of fn on each cell in v, converted to powers of v.
 * Returns the largest error on 64 points per cell. */
static double fit_fn(mr_nufft_params *p, int degree, mr_nufft_kernel_fn fn, void *ctx)
{
    const int w = p->width, n = degree + 1;
    memset(p->coef, 0, sizeof p->coef);
    double maxerr = 0.0;
    for (int i = 0; i < w; i++) {
        double f[MR_NUFFT_MAX_DEGREE + 1] = {0}, a[MR_NUFFT_MAX_DEGREE + 1] = {0};
        for (int k = 0; k < n; k++) {
            const double v = cos(M_PI * (k + 0.5) / n);
            f[k] = fn(ctx, 0.5 * (v + 1.0) - 0.5 * w + i);
        }
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++)
                s += f[k] * cos(M_PI * j * (k + 0.5) / n);
            a[j] = (j == 0 ? 1.0 : 2.0) * s / n;
        }
        /* powers of v of T_j by T_{j+1} = 2 v T_j - T_{j-1} */
        double tm[MR_NUFFT_MAX_DEGREE + 1] = {0}, tc[MR_NUFFT_MAX_DEGREE + 1] = {0}, tn[MR_NUFFT_MAX_DEGREE + 1];
        tm[0] = 1.0; /* T_0 */
        tc[1] = 1.0; /* T_1 */
        p->coef[0][i] += a[0];
        if (n > 1)
            p->coef[1][i] += a[1];
        for (int j = 2; j < n; j++) {
            for (int d = 0; d <= j; d++)
                tn[d] = (d > 0 ? 2.0 * tc[d - 1] : 0.0) - tm[d];
            for (int d = 0; d <= j; d++) {
                p->coef[d][i] += a[j] * tn[d];
                tm[d] = tc[d];
                tc[d] = tn[d];
            }
        }
        for (int s = 0; s <= 64; s++) {
            const double v = -1.0 + 2.0 * s / 64.0;
            double h = 0.0;
            for (int d = degree; d >= 0; d--)
                h = h * v + p->coef[d][i];
            const double e = fabs(h - fn(ctx, 0.5 * (v + 1.0) - 0.5 * w + i));
            if (e > maxerr)
                maxerr = e;
        }
    }
    return maxerr;
}

/* Width and beta for the tolerance (nufft_kernel.h); the width may exceed MR_NUFFT_MAX_WIDTH (unusable). */
static void kernel_shape(double tol, double sigma, int *w, double *beta)
{
    int ww;
    double bw;
    if (sigma == 2.0) {
        ww = (int)ceil(-log10(tol)) + 1;
        bw = ww == 2 ? 2.20 : ww == 3 ? 2.26 : ww == 4 ? 2.38 : 2.30;
    } else {
        ww = (int)ceil(log(1.0 / tol) / (M_PI * sqrt(1.0 - 1.0 / sigma)));
        bw = 0.97 * M_PI * (1.0 - 0.5 / sigma);
    }
    *w = ww < 2 ? 2 : ww;
    *beta = bw * *w;
}

static double kernel_bound(int w, double sigma)
{
    return sigma == 2.0 ? pow(10.0, -(w - 1)) : exp(-M_PI * w * sqrt(1.0 - 1.0 / sigma));
}

/* The rounding of the grid sums magnified by the deconvolution (nufft_kernel.h). */
static double arithmetic_floor(mr_nufft_precision prec, double amp)
{
    return 4.0 * (prec == MR_NUFFT_PREC_F64 ? 1.1e-16 : 6.0e-8) * amp;
}

/* Everything but the fit, for one factor. */
static void shape_params(const mr_grid *g, int64_t m, double tol, double sigma, mr_nufft_precision prec,
                         mr_nufft_target target, int threads, mr_nufft_params *p)
{
    kernel_shape(tol, sigma, &p->width, &p->beta);
    p->upsample = sigma;
    p->precision = prec;
    p->dim = 0;
    double nf = 1.0, pts = 1.0;
    for (int a = 0; a < 3; a++) {
        p->n[a] = g->n[a];
        p->active[a] = g->n[a] > 1;
        p->fine[a] = 1;
        if (!p->active[a])
            continue;
        p->dim++;
        int64_t f = mr_kb_fft_size((int64_t)ceil(sigma * (double)g->n[a] - 1e-9));
        if (f < 2 * p->width)
            f = mr_kb_fft_size(2 * p->width);
        p->fine[a] = f;
        nf *= (double)f;
        pts *= p->width;
    }
    if (p->width <= MR_NUFFT_MAX_WIDTH) {
        double gx[GL_N], gw[GL_N];
        gauss_legendre(GL_N, gx, gw);
        p->amp = kernel_ft(p->width, p->beta, 0.0, gx, gw) / kernel_ft(p->width, p->beta, 0.5 / sigma, gx, gw);
    }
    p->bound = kernel_bound(p->width, sigma) + arithmetic_floor(prec, p->amp);
    const cost_consts *c = target == MR_NUFFT_ON_GPU ? &cost_gpu : &cost_cpu;
    const int k = prec == MR_NUFFT_PREC_F64;
    const double t = target == MR_NUFFT_ON_GPU ? 1.0 : (threads > 0 ? threads : 1);
    p->cost = ((double)m * pts * c->spread_s[k] + nf * (log2(nf > 2 ? nf : 2) * c->fft_s[k] + c->grid_s[k])) / t;
}

/* The same with the precision resolved: AUTO is float32 where its arithmetic floor is within the
 * tolerance (never below MR_NUFFT_F32_MIN_TOL), else float64. */
static void resolve_params(const mr_grid *g, int64_t m, double tol, double sigma, mr_nufft_precision prec,
                           mr_nufft_target target, int threads, mr_nufft_params *p)
{
    if (prec != MR_NUFFT_PREC_AUTO) {
        shape_params(g, m, tol, sigma, prec, target, threads, p);
        return;
    }
    if (tol >= MR_NUFFT_F32_MIN_TOL) {
        shape_params(g, m, tol, sigma, MR_NUFFT_PREC_F32, target, threads, p);
        if (arithmetic_floor(MR_NUFFT_PREC_F32, p->amp) <= tol)
            return;
    }
    shape_params(g, m, tol, sigma, MR_NUFFT_PREC_F64, target, threads, p);
}

mr_status mr_nufft_params_choose(const mr_grid *g, int64_t m, const mr_nufft_opts *o, mr_nufft_target target,
                                 mr_nufft_params *out)
{
    mr_nufft_opts def;
    if (!o) {
        mr_nufft_opts_default(&def);
        o = &def;
    }
    if (!(o->tol >= MR_NUFFT_TOL_MIN && o->tol <= MR_NUFFT_TOL_MAX))
        return mr_error(MR_EINVAL, "nufft: tolerance %g is outside %g..%g", o->tol, MR_NUFFT_TOL_MIN,
                        MR_NUFFT_TOL_MAX);
    if (o->upsample != 0.0 && !(o->upsample >= 1.25 && o->upsample <= 3.0))
        return mr_error(MR_EINVAL, "nufft: upsampling factor %g is outside 1.25..3 (0: automatic)", o->upsample);
    if (o->precision != MR_NUFFT_PREC_AUTO && o->precision != MR_NUFFT_PREC_F32 && o->precision != MR_NUFFT_PREC_F64)
        return mr_error(MR_EINVAL, "nufft: unknown precision %d", (int)o->precision);
    if (o->precision == MR_NUFFT_PREC_F32 && o->tol < MR_NUFFT_F32_MIN_TOL)
        return mr_error(MR_EINVAL, "nufft: tolerance %g is below float32's reach (%g): use float64", o->tol,
                        MR_NUFFT_F32_MIN_TOL);
    if (!g || m < 1)
        return mr_error(MR_EINVAL, "nufft: need a grid and at least one sample");
    for (int a = 0; a < 3; a++)
        if (g->n[a] < 1 || g->n[a] > 2 * MR_MAX_MATRIX_EDGE || g->scale[a] < 1)
            return mr_error(MR_EINVAL, "nufft: grid axis %d has %lld points and scale %lld", a, (long long)g->n[a],
                            (long long)g->scale[a]);
    memset(out, 0, sizeof *out);
    if (o->upsample != 0.0) {
        resolve_params(g, m, o->tol, o->upsample, o->precision, target, o->threads, out);
        if (out->width > MR_NUFFT_MAX_WIDTH)
            return mr_error(MR_EINVAL, "nufft: tolerance %g needs a kernel %d cells wide at upsampling %g (at most %d): "
                                       "use upsampling 2",
                            o->tol, out->width, o->upsample, MR_NUFFT_MAX_WIDTH);
    } else {
        mr_nufft_params p2, p125;
        memset(&p2, 0, sizeof p2);
        memset(&p125, 0, sizeof p125);
        resolve_params(g, m, o->tol, 2.0, o->precision, target, o->threads, &p2);
        resolve_params(g, m, o->tol, 1.25, o->precision, target, o->threads, &p125);
        /* 1.25 where it is faster and its kernel fits (and, forced to float32, where float32 reaches the tolerance) */
        const int ok125 = p125.width <= MR_NUFFT_MAX_WIDTH &&
                          arithmetic_floor(p125.precision, p125.amp) <= o->tol;
        *out = ok125 && p125.cost < p2.cost ? p125 : p2;
    }
    /* the lowest degree whose fit is within a tenth of the tolerance over the deconvolution's magnification
     * (a fit error of the kernel is divided by phi^ like everything else), or, where the kernel's square-root
     * edges keep every fit above that, within twice the best fit; the bound then counts it */
    mr_nufft_params es = *out;
    mr_nufft_fit(out, es_fn, &es, 0.1 * o->tol / out->amp);
    out->bound += out->fit_error * out->amp;
    return MR_OK;
}

void mr_nufft_fit(mr_nufft_params *p, mr_nufft_kernel_fn fn, void *ctx, double want)
{
    double err[MR_NUFFT_MAX_DEGREE + 1], best_err = INFINITY;
    for (int d = 4; d <= MR_NUFFT_MAX_DEGREE; d++) {
        err[d] = fit_fn(p, d, fn, ctx);
        if (err[d] < best_err)
            best_err = err[d];
    }
    const double ok = fmax(want, 2.0 * best_err);
    int best = MR_NUFFT_MAX_DEGREE;
    for (int d = MR_NUFFT_MAX_DEGREE; d >= 4; d--)
        if (err[d] <= ok)
            best = d;
    p->degree = best;
    p->fit_error = fit_fn(p, best, fn, ctx);
}

int64_t mr_nufft_host_bytes(const mr_nufft_params *p, int64_t m)
{
    const int64_t fl = p->precision == MR_NUFFT_PREC_F64 ? 8 : 4;
    const int64_t nf = p->fine[0] * p->fine[1] * p->fine[2];
    /* fine grid; per sample: base index and offset per axis, the permutation, the sort keys */
    return nf * 2 * fl + m * (3 * 4 + 3 * fl + 8 + 8) + (p->n[0] + p->n[1] + p->n[2]) * 8;
}
