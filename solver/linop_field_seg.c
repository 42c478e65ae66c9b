/* The segmented field models of solver/linop_field.h, on the host or one GPU:
 *
 *   forward y = sum_l B_l . F(C_l . x),  adjoint x = sum_l conj(C_l) . F^H(conj(B_l) . y),
 *   normal  the multi-kernel Toeplitz operator of the kernels Q_{l l'} (solver/linop_field_tp.c or
 *           gpu/field.h),
 *
 * F and the kernel sums from a tier (the exact NUDFT tier below, or another implementation of the
 * Fourier operator); B [L][M], C [L][N] complex in the backend's memory, from the segment fit
 * (solver/linop_field_fit.c). And mr_linop_field_create, which makes either model. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/grid.h"
#include "../base/log.h"
#include "../gpu/field.h"
#include "../gpu/sums.h"
#include "linop_field.h"
#include "linop_field_internal.h"
#include "nudft.h"

/* Points of the interpolator table (field_fit_tabulate): 8193 over the fitted variable's range. */
#define FIELD_TABLE_POINTS 8193

/* out[b][j] = v'[j] in[b][j] (+= with accumulate), v' = conj(v) with conj; on the backend. */
static mr_status cmul(mr_backend *be, int64_t n, int64_t batch, const float *v, int conj, int accumulate,
                      const float *in, float *out)
{
    struct mr_gpu_ctx *g = mr_backend_gpu_ctx(be);
    if (g)
        return mr_gpu_field_cmul(g, n, batch, v, conj, accumulate, in, out);
    const float sg = conj ? -1.0f : 1.0f;
#pragma omp parallel for schedule(static) num_threads(mr_backend_threads(be))
    for (int64_t i = 0; i < n * batch; i++) {
        const int64_t j = i % n;
        const float vr = v[2 * j], vi = sg * v[2 * j + 1], xr = in[2 * i], xi = in[2 * i + 1];
        const float yr = vr * xr - vi * xi, yi = vr * xi + vi * xr;
        out[2 * i] = accumulate ? out[2 * i] + yr : yr;
        out[2 * i + 1] = accumulate ? out[2 * i + 1] + yi : yi;
    }
    return MR_OK;
}

/* ---- the exact NUDFT tier ------------------------------------------------------------------------ */

static mr_status tier_exact_create(const mr_field_tier *t, mr_backend *be, const int64_t matrix[3], const float *traj,
                                   int64_t m, const float *weights, int64_t ncoils, mr_basis basis, mr_linop **out,
                                   char *engine, size_t size)
{
    const mr_field_tier_exact_ctx *ctx = t->ctx;
    mr_nudft_opts o = ctx->nudft;
    o.basis = basis;
    o.fast_normal = 0;
    mr_nudft_info info;
    mr_status st = mr_linop_nudft_create(out, be, matrix, traj, m, weights, ncoils, &o, &info);
    if (st == MR_OK && engine)
        snprintf(engine, size, "%s", info.engine_name);
    return st;
}

/* The GPU engine of the kernel sums, chosen as the NUDFT operator chooses its own (solver/linop_nudft.c). */
static mr_status tier_gpu_sums(mr_backend *be, const int64_t matrix[3], const float *traj, int64_t m,
                               const mr_nudft_opts *o, mr_gpu_sums **out)
{
    int ngpus = 0;
    const int *gpus = mr_backend_gpus(be, &ngpus);
    mr_gpu_sums_opts so;
    memset(&so, 0, sizeof so);
    so.exact_trig = o->exact_trig;
    so.devices = gpus;
    so.ndevices = ngpus;
    if (o->precision != MR_PRECISION_AUTO)
        so.engine = (mr_sums_engine)(o->precision - 1);
    else
        so.engine = o->exact_trig ? MR_SUMS_SFU : mr_gpu_sums_choose(mr_backend_gpu_index(be), matrix, m, NULL, 0);
    return mr_gpu_sums_create(out, mr_backend_gpu_ctx(be), traj, m, &so);
}

/* a = qw b_j for the per-sample factors bj [M][2]: real [M] when every factor is real (returns 1: the
 * diagonal kernels |B_l|^2 of both models; the sums' Hermitian half is about twice as fast), else
 * complex [M][2] (returns 0). */
static int kernel_weights(const float *qw, const float *bj, int64_t m, float *a)
{
    int real = 1;
    for (int64_t k = 0; k < m && real; k++)
        real = bj[2 * k + 1] == 0.0f;
    for (int64_t k = 0; k < m; k++) {
        if (real) {
            a[k] = qw[k] * bj[2 * k];
            continue;
        }
        a[2 * k] = qw[k] * bj[2 * k];
        a[2 * k + 1] = qw[k] * bj[2 * k + 1];
    }
    return real;
}

static mr_status tier_exact_kernels(const mr_field_tier *t, mr_backend *be, const int64_t matrix[3], const float *traj,
                                    int64_t m, const float *weights, mr_basis basis, const float *b, int nk,
                                    float *const *q)
{
    const mr_field_tier_exact_ctx *ctx = t->ctx;
    const mr_grid gq = mr_grid_q(matrix);
    const int64_t nq = mr_grid_size(&gq);
    const int gpu = mr_backend_on_gpu(be), provider = ctx->nudft.sums.fn != NULL;
    const mr_vecops *v = mr_backend_vecops(be);
    float *qw = malloc((size_t)m * sizeof(float)), *a = malloc((size_t)m * 2 * sizeof(float));
    float *hq = gpu && provider ? malloc((size_t)nq * 2 * sizeof(float)) : NULL;
    float *da = NULL;
    mr_gpu_sums *sums = NULL;
    mr_status st = qw && a && (!gpu || !provider || hq) ? MR_OK : mr_error(MR_ENOMEM, "field kernels: out of memory");
    if (st == MR_OK)
        field_sample_scale(matrix, traj, m, weights, basis, NULL, qw);
    if (st == MR_OK && gpu && !provider && (st = tier_gpu_sums(be, matrix, traj, m, &ctx->nudft, &sums)) == MR_OK &&
        !(da = mr_backend_alloc(be, m)))
        st = MR_ENOMEM;
    for (int j = 0; j < nk && st == MR_OK; j++) {
        const int real = kernel_weights(qw, b + 2 * (size_t)j * m, m, a);
        if (provider) { /* e.g. the MPI split: on the host, then to the backend */
            st = ctx->nudft.sums.fn(ctx->nudft.sums.ctx, &gq, traj, a, real, m, gpu ? hq : q[j]);
            if (st == MR_OK && gpu)
                st = v->from_host(v->ctx, nq, q[j], hq);
        } else if (gpu) {
            st = v->from_host(v->ctx, real ? (m + 1) / 2 : m, da, a);
            if (st == MR_OK)
                st = mr_gpu_sums_adjoint(sums, &gq, da, real, q[j], MR_GEMM_F32);
        } else {
            st = mr_nudft_adjoint(&gq, traj, a, real, m, q[j], mr_backend_threads(be));
        }
    }
    mr_gpu_sums_destroy(sums);
    v->release(v->ctx, da);
    free(qw);
    free(a);
    free(hq);
    return st;
}

void mr_field_tier_exact(mr_field_tier *t, mr_field_tier_exact_ctx *ctx, const mr_nudft_opts *nudft)
{
    if (nudft)
        ctx->nudft = *nudft;
    else
        mr_nudft_opts_default(&ctx->nudft);
    t->name = "exact";
    t->create = tier_exact_create;
    t->kernels = tier_exact_kernels;
    t->ctx = ctx;
}

/* ---- the NUFFT tier -------------------------------------------------------------------------------- */

static mr_status tier_nufft_create(const mr_field_tier *t, mr_backend *be, const int64_t matrix[3], const float *traj,
                                   int64_t m, const float *weights, int64_t ncoils, mr_basis basis, mr_linop **out,
                                   char *engine, size_t size)
{
    const mr_field_tier_nufft_ctx *ctx = t->ctx;
    mr_nufft_op_opts o = ctx->nufft;
    o.basis = basis;
    o.fast_normal = 0;
    mr_nudft_info info;
    mr_status st = mr_linop_nufft_create(out, be, matrix, traj, m, weights, ncoils, &o, &info, NULL);
    if (st == MR_OK && engine)
        snprintf(engine, size, "%s", info.engine_name);
    return st;
}

static mr_status tier_nufft_kernels(const mr_field_tier *t, mr_backend *be, const int64_t matrix[3], const float *traj,
                                    int64_t m, const float *weights, mr_basis basis, const float *b, int nk,
                                    float *const *q)
{
    const mr_field_tier_nufft_ctx *ctx = t->ctx;
    float *qw = malloc((size_t)m * sizeof(float)), *a = malloc((size_t)nk * (size_t)m * 2 * sizeof(float));
    const float **aj = malloc((size_t)nk * sizeof *aj);
    int *real = malloc((size_t)nk * sizeof *real);
    mr_status st = qw && a && aj && real ? MR_OK : mr_error(MR_ENOMEM, "field kernels: out of memory for %d kernels", nk);
    if (st == MR_OK) {
        field_sample_scale(matrix, traj, m, weights, basis, NULL, qw);
        for (int j = 0; j < nk; j++) {
            float *w = a + 2 * (size_t)j * m;
            real[j] = kernel_weights(qw, b + 2 * (size_t)j * m, m, w);
            aj[j] = w;
        }
        st = mr_nufft_q_sums(be, matrix, traj, m, &ctx->nufft, nk, aj, real, q);
    }
    free(qw);
    free(a);
    free(aj);
    free(real);
    return st;
}

void mr_field_tier_nufft(mr_field_tier *t, mr_field_tier_nufft_ctx *ctx, const mr_nufft_op_opts *nufft)
{
    if (nufft)
        ctx->nufft = *nufft;
    else
        mr_nufft_op_opts_default(&ctx->nufft);
    t->name = "nufft";
    t->create = tier_nufft_create;
    t->kernels = tier_nufft_kernels;
    t->ctx = ctx;
}

/* ---- the segmented model ------------------------------------------------------------------------- */

typedef struct {
    mr_backend *be;
    int64_t n, m, c;
    int L;
    mr_linop *f;         /* the tier's F, all coils */
    float *bq, *cq;      /* B [L][M][2], C [L][N][2] in the backend's memory */
    float *timg, *tk;    /* work: coil images, coil k-space */
    field_tp *tp;        /* host normal */
    mr_gpu_field_tp *gtp; /* device normal */
} seg_data;

static void seg_destroy(void *p)
{
    seg_data *d = p;
    if (!d)
        return;
    const mr_vecops *v = mr_backend_vecops(d->be);
    mr_linop_free(d->f);
    field_tp_destroy(d->tp);
    mr_gpu_field_tp_destroy(d->gtp);
    v->release(v->ctx, d->bq);
    v->release(v->ctx, d->cq);
    v->release(v->ctx, d->timg);
    v->release(v->ctx, d->tk);
    mr_backend_free(d->be);
    free(d);
}

/* forward: out = sum_l B_l . F(C_l . in); adjoint: out = sum_l conj(C_l) . F^H(conj(B_l) . in) */
static mr_status seg_apply(const seg_data *d, int adjoint, const float *in, float *out)
{
    const mr_vecops *v = mr_backend_vecops(d->be);
    const int64_t nin = adjoint ? d->m : d->n, nout = adjoint ? d->n : d->m;
    const float *first = adjoint ? d->bq : d->cq, *second = adjoint ? d->cq : d->bq;
    float *t1 = adjoint ? d->tk : d->timg, *t2 = adjoint ? d->timg : d->tk;
    v->zero(v->ctx, nout * d->c, out);
    mr_status st = MR_OK;
    for (int l = 0; l < d->L && st == MR_OK; l++) {
        st = cmul(d->be, nin, d->c, first + 2 * (size_t)l * nin, adjoint, 0, in, t1);
        if (st == MR_OK)
            st = adjoint ? mr_linop_adjoint(d->f, t1, t2) : mr_linop_forward(d->f, t1, t2);
        if (st == MR_OK)
            st = cmul(d->be, nout, d->c, second + 2 * (size_t)l * nout, adjoint, 1, t2, out);
    }
    return st;
}

static mr_status seg_forward(void *p, const float *x, float *y) { return seg_apply(p, 0, x, y); }

static mr_status seg_adjoint(void *p, const float *y, float *x) { return seg_apply(p, 1, y, x); }

static mr_status seg_normal(void *p, const float *x, float *y)
{
    const seg_data *d = p;
    return d->gtp ? mr_gpu_field_tp_apply(d->gtp, d->c, x, y) : field_tp_apply(d->tp, d->c, x, y);
}

static void range_of(const float *v, int64_t n, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        *lo = fmin(*lo, v[i]);
        *hi = fmax(*hi, v[i]);
    }
}

mr_status mr_field_segments_for(mr_field_model model, double omega_min, double omega_max, double t_min, double t_max,
                                double tol, int *segments, double *bound_max, double *bound_rms)
{
    if (model != MR_FIELD_MODEL_FREQUENCY && model != MR_FIELD_MODEL_TIME)
        return mr_error(MR_EINVAL, "field model: %s has no segments", mr_field_model_name(model));
    field_fit f;
    mr_status st = field_fit_choose(&f, model, 0, omega_min, omega_max, t_min, t_max, tol);
    if (st != MR_OK)
        return st;
    double bmax, brms;
    field_fit_bound(&f, &bmax, &brms);
    if (segments)
        *segments = f.L;
    if (bound_max)
        *bound_max = bmax;
    if (bound_rms)
        *bound_rms = brms;
    field_fit_free(&f);
    return MR_OK;
}

/* B [L][M][2] and C [L][N][2] of the fit (host, float). */
static mr_status fit_arrays(const field_fit *f, const float *time, int64_t m, const float *fieldmap, int64_t n,
                            float **bout, float **cout)
{
    const int L = f->L;
    float *b = malloc((size_t)L * m * 2 * sizeof(float)), *c = malloc((size_t)L * n * 2 * sizeof(float));
    if (!b || !c) {
        free(b);
        free(c);
        return mr_error(MR_ENOMEM, "field model: out of memory for %d segments", L);
    }
#pragma omp parallel
    {
        double tmp[2 * MR_FIELD_MAX_SEGMENTS];
#pragma omp for schedule(static)
        for (int64_t k = 0; k < m; k++) {
            field_fit_b(f, time[k], tmp);
            for (int l = 0; l < L; l++) {
                b[2 * ((size_t)l * m + k)] = (float)tmp[2 * l];
                b[2 * ((size_t)l * m + k) + 1] = (float)tmp[2 * l + 1];
            }
        }
#pragma omp for schedule(static)
        for (int64_t v = 0; v < n; v++) {
            field_fit_c(f, fieldmap[v], tmp);
            for (int l = 0; l < L; l++) {
                c[2 * ((size_t)l * n + v)] = (float)tmp[2 * l];
                c[2 * ((size_t)l * n + v) + 1] = (float)tmp[2 * l + 1];
            }
        }
    }
    *bout = b;
    *cout = c;
    return MR_OK;
}

/* The kernel table: kidx/kconj [L][L] and the per-sample factors of the nk kernels to sum,
 * conj(B_l) B_l' for the pairs summed (frequency: l = 0, l' = d; time: l <= l'). */
static mr_status kernel_table(const field_fit *f, const float *b, int64_t m, int *kidx, int *kconj, float **factors,
                              int *nk)
{
    const int L = f->L, freq = f->model == MR_FIELD_MODEL_FREQUENCY;
    *nk = freq ? L : L * (L + 1) / 2;
    float *fac = malloc((size_t)*nk * m * 2 * sizeof(float));
    if (!fac)
        return mr_error(MR_ENOMEM, "field model: out of memory for %d kernels", *nk);
    for (int l = 0; l < L; l++)
        for (int lp = 0; lp < L; lp++) {
            const int lo = l < lp ? l : lp, hi = l < lp ? lp : l;
            /* the kernel of (lo, hi); (hi, lo) uses its conjugate mirror */
            const int k = freq ? hi - lo : lo * L - lo * (lo - 1) / 2 + (hi - lo);
            kidx[l * L + lp] = k;
            kconj[l * L + lp] = l > lp;
            if (l > lp || (freq && l > 0))
                continue;
            const float *bl = b + 2 * (size_t)lo * m, *bh = b + 2 * (size_t)hi * m;
            float *out = fac + 2 * (size_t)k * m;
            for (int64_t s = 0; s < m; s++) { /* conj(B_lo) B_hi */
                out[2 * s] = bl[2 * s] * bh[2 * s] + bl[2 * s + 1] * bh[2 * s + 1];
                out[2 * s + 1] = bl[2 * s] * bh[2 * s + 1] - bl[2 * s + 1] * bh[2 * s];
            }
        }
    *factors = fac;
    return MR_OK;
}

/* The normal: the tier's kernels, their spectra, the multi-kernel Toeplitz operator. */
static mr_status make_normal(seg_data *d, const field_fit *f, const mr_field_tier *tier, const int64_t matrix[3],
                             const float *traj, const float *weights, mr_basis basis, const float *b, const float *c,
                             const mr_progress *progress, mr_field_info *info)
{
    const int L = f->L;
    const mr_grid gq = mr_grid_q(matrix);
    const int64_t nq = mr_grid_size(&gq);
    const mr_vecops *v = mr_backend_vecops(d->be);
    int *kidx = malloc((size_t)L * L * sizeof(int)), *kconj = malloc((size_t)L * L * sizeof(int));
    float *fac = NULL, **q = NULL, **h = NULL;
    int nk = 0;
    mr_status st = kidx && kconj ? kernel_table(f, b, d->m, kidx, kconj, &fac, &nk) : MR_ENOMEM;
    if (st == MR_OK && (!(q = calloc((size_t)nk, sizeof *q)) || !(h = calloc((size_t)nk, sizeof *h))))
        st = mr_error(MR_ENOMEM, "field model: out of memory for %d kernels", nk);
    for (int j = 0; j < nk && st == MR_OK; j++)
        if (!(q[j] = mr_backend_alloc(d->be, nq)))
            st = MR_ENOMEM;
    mr_progress_report(progress, "field kernels", 0, 1);
    if (st == MR_OK)
        st = tier->kernels(tier, d->be, matrix, traj, d->m, weights, basis, fac, nk, q);
    info->kernels = nk;
    if (st == MR_OK && mr_backend_on_gpu(d->be)) {
        st = mr_gpu_field_tp_create(&d->gtp, mr_backend_gpu_ctx(d->be), matrix, L, nk, kidx, kconj,
                                    (const float *const *)q, d->cq);
    } else if (st == MR_OK) {
        int64_t pp = 1;
        for (int a = 0; a < 3; a++)
            pp *= matrix[a] > 1 ? 2 * matrix[a] : 1;
        for (int j = 0; j < nk && st == MR_OK; j++) {
            if (!(h[j] = malloc((size_t)pp * 2 * sizeof(float))))
                st = mr_error(MR_ENOMEM, "field model: out of memory for the kernel spectra");
            else
                st = field_tp_spectrum(matrix, q[j], h[j], mr_backend_threads(d->be));
        }
        if (st == MR_OK)
            st = field_tp_create(&d->tp, matrix, L, nk, kidx, kconj, (const float *const *)h, c,
                                 mr_backend_threads(d->be));
    }
    if (st == MR_OK)
        mr_progress_report(progress, "field kernels", 1, 1);
    for (int j = 0; q && j < nk; j++)
        v->release(v->ctx, q[j]);
    for (int j = 0; h && j < nk; j++)
        free(h[j]);
    free(q);
    free(h);
    free(fac);
    free(kidx);
    free(kconj);
    return st;
}

/* ||E x - E_exact x|| / ||E_exact x|| for a random image in coil 0 (the others zero). */
static mr_status measure(mr_linop *e, mr_backend *be, const int64_t matrix[3], const float *traj, const float *time,
                         const float *fieldmap, int64_t m, const float *weights, mr_basis basis, double *err)
{
    const int64_t n = matrix[0] * matrix[1] * matrix[2], nd = mr_linop_dom_size(e), nc = mr_linop_cod_size(e);
    const mr_vecops *v = mr_backend_vecops(be);
    mr_linop *ex = NULL;
    float *hx = calloc((size_t)nd * 2, sizeof(float)), *hy = malloc((size_t)nc * 2 * sizeof(float));
    float *hz = malloc((size_t)m * 2 * sizeof(float));
    float *dx = mr_backend_alloc(be, nd), *dy = mr_backend_alloc(be, nc), *dz = mr_backend_alloc(be, m);
    mr_status st = hx && hy && hz && dx && dy && dz ? MR_OK : mr_error(MR_ENOMEM, "field check: out of memory");
    uint64_t r = 0x9e3779b97f4a7c15ull; /* a fixed seed: the same measurement every run */
    for (int64_t i = 0; st == MR_OK && i < 2 * n; i++) {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        hx[i] = (float)((double)(r >> 11) / 9007199254740992.0 - 0.5);
    }
    if (st == MR_OK)
        st = mr_linop_field_exact_create(&ex, be, matrix, traj, time, fieldmap, m, weights, 1, basis);
    if (st == MR_OK)
        st = v->from_host(v->ctx, nd, dx, hx);
    if (st == MR_OK)
        st = mr_linop_forward(e, dx, dy);
    if (st == MR_OK)
        st = mr_linop_forward(ex, dx, dz); /* coil 0's image comes first */
    if (st == MR_OK)
        st = v->to_host(v->ctx, nc, hy, dy);
    if (st == MR_OK)
        st = v->to_host(v->ctx, m, hz, dz);
    if (st == MR_OK) {
        double num = 0, den = 0;
        for (int64_t k = 0; k < 2 * m; k++) {
            num += ((double)hy[k] - hz[k]) * ((double)hy[k] - hz[k]);
            den += (double)hz[k] * hz[k];
        }
        *err = den > 0 ? sqrt(num / den) : 0.0;
    }
    mr_linop_free(ex);
    v->release(v->ctx, dx);
    v->release(v->ctx, dy);
    v->release(v->ctx, dz);
    free(hx);
    free(hy);
    free(hz);
    return st;
}

mr_status mr_linop_field_create(mr_linop **out, mr_backend *be, const int64_t matrix[3], const float *traj,
                                const float *time, const float *fieldmap, int64_t m, const float *weights,
                                int64_t ncoils, const mr_field_opts *opts, mr_field_info *info)
{
    *out = NULL;
    mr_field_opts o;
    if (opts)
        o = *opts;
    else
        mr_field_opts_default(&o);
    mr_field_info dummy;
    if (!info)
        info = &dummy;
    memset(info, 0, sizeof *info);
    info->model = o.model;
    info->measured = -1;
    const double t0 = mr_now();
    if (!be)
        return mr_error(MR_EINVAL, "field operator: no backend");
    if ((unsigned)o.model > MR_FIELD_MODEL_TIME || !(o.tol >= 1e-6 && o.tol <= 0.5) || o.segments < 0 ||
        o.segments > MR_FIELD_MAX_SEGMENTS)
        return mr_error(MR_EINVAL, "field operator: model %d, tolerance %g (need 1e-6..0.5), %d segments (0..%d)",
                        (int)o.model, o.tol, o.segments, MR_FIELD_MAX_SEGMENTS);
    mr_status st = field_check_input(matrix, traj, time, fieldmap, m, weights, ncoils);
    if (st != MR_OK)
        return st;
    const int64_t n = matrix[0] * matrix[1] * matrix[2];
    range_of(fieldmap, n, &info->omega_min, &info->omega_max);
    range_of(time, m, &info->t_min, &info->t_max);
    if (o.model == MR_FIELD_MODEL_EXACT) {
        st = mr_linop_field_exact_create(out, be, matrix, traj, time, fieldmap, m, weights, ncoils, o.basis);
        snprintf(info->engine, sizeof info->engine, "%s",
                 mr_backend_on_gpu(be) ? "gpu field kernels (CUDA cores)" : "cpu field kernels");
        info->setup_seconds = mr_now() - t0;
        return st;
    }
    mr_field_tier_exact_ctx tctx;
    mr_field_tier exact_tier;
    const mr_field_tier *tier = o.tier;
    if (!tier) {
        mr_field_tier_exact(&exact_tier, &tctx, &o.nudft);
        tier = &exact_tier;
    }
    snprintf(info->tier, sizeof info->tier, "%s", tier->name ? tier->name : "");
    field_fit f;
    memset(&f, 0, sizeof f);
    mr_progress_report(o.progress, "field segments", 0, 1);
    const double t_fit = mr_now();
    st = field_fit_choose(&f, o.model, o.segments, info->omega_min, info->omega_max, info->t_min, info->t_max, o.tol);
    if (st != MR_OK)
        return st;
    info->segments = f.L;
    st = field_fit_tabulate(&f, FIELD_TABLE_POINTS);
    if (st != MR_OK) {
        field_fit_free(&f);
        return st;
    }
    field_fit_bound(&f, &info->bound_max, &info->bound_rms); /* of the interpolators as tabulated */
    float *b = NULL, *c = NULL;
    seg_data *d = calloc(1, sizeof *d);
    if (!d)
        st = mr_error(MR_ENOMEM, "field operator: out of memory");
    if (st == MR_OK)
        st = fit_arrays(&f, time, m, fieldmap, n, &b, &c);
    info->fit_seconds = mr_now() - t_fit;
    mr_progress_report(o.progress, "field segments", 1, 1);
    if (st == MR_OK) {
        d->be = mr_backend_ref(be);
        d->n = n;
        d->m = m;
        d->c = ncoils;
        d->L = f.L;
        const int64_t L = f.L;
        if (!(d->bq = mr_backend_upload(be, 2 * L * m, b)) || !(d->cq = mr_backend_upload(be, 2 * L * n, c)) ||
            !(d->timg = mr_backend_alloc(be, n * ncoils)) || !(d->tk = mr_backend_alloc(be, m * ncoils)))
            st = MR_ENOMEM;
    }
    if (st == MR_OK)
        st = tier->create(tier, be, matrix, traj, m, weights, ncoils, o.basis, &d->f, info->engine, sizeof info->engine);
    const double t_k = mr_now();
    if (st == MR_OK && o.fast_normal)
        st = make_normal(d, &f, tier, matrix, traj, weights, o.basis, b, c, o.progress, info);
    info->kernel_seconds = mr_now() - t_k;
    field_fit_free(&f);
    free(b);
    free(c);
    if (st != MR_OK) {
        seg_destroy(d);
        return st;
    }
    const int64_t dom[4] = {matrix[0], matrix[1], matrix[2], ncoils}, cod[4] = {m, 1, 1, ncoils};
    const mr_linop_ops ops = {seg_forward, seg_adjoint, o.fast_normal ? seg_normal : NULL, seg_destroy};
    if ((st = mr_linop_create(out, be, dom, cod, &ops, d)) != MR_OK)
        return st;
    if (o.check) {
        const double tc = mr_now();
        mr_progress_report(o.progress, "field check", 0, 1);
        st = measure(*out, be, matrix, traj, time, fieldmap, m, weights, o.basis, &info->measured);
        info->check_seconds = mr_now() - tc;
        if (st != MR_OK) {
            mr_linop_free(*out);
            *out = NULL;
            return st;
        }
        mr_progress_report(o.progress, "field check", 1, 1);
    }
    info->setup_seconds = mr_now() - t0;
    mr_log(MR_LOG_DEBUG, "field model %s: %d segments, bound %.3g (rms %.3g), %lld kernels, %.2f s",
           mr_field_model_name(o.model), info->segments, info->bound_max, info->bound_rms, (long long)info->kernels,
           info->setup_seconds);
    return MR_OK;
}
