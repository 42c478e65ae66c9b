/* The NUFFT operator (linop.h mr_linop_nufft_create): the contract of the exact NUDFT operator with its
 * sums approximated by the non-uniform FFT, on the host (solver/nufft.h) or one GPU (gpu/nufft.h).
 *
 * Per coil c, with s_m = sqrt(w_m) Phi_m / N (linop_qnormal.h):
 *   forward  y_c = s * type2(x_c)
 *   adjoint  x_c = type1(s * y_c)
 *   normal   Toeplitz with Q = type1(w Phi^2 / N^2) on mr_grid_q, real weights (one Q for every coil)
 * One plan of the image grid serves forward and adjoint (the samples sorted once for every coil); the Q
 * grid's plan lives only while Q is computed. On a GPU everything stays on the device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"
#include "../gpu/gpu_ops.h"
#include "../gpu/nufft.h"
#include "linop.h"
#include "linop_qnormal.h"
#include "toeplitz.h"
#include "nufft.h"

_Static_assert(MR_NUFFT_MAX_WIDTH == MR_GPU_NUFFT_COEF_STRIDE, "the GPU plan takes the coefficient rows as they are");
_Static_assert(MR_NUFFT_MAX_DEGREE == MR_GPU_NUFFT_MAX_DEGREE, "the GPU plan takes every degree the fit may choose");

void mr_nufft_op_opts_default(mr_nufft_op_opts *o)
{
    o->basis = MR_BASIS_BOX;
    o->fast_normal = 1;
    o->tol = 1e-6;
    o->upsample = 0.0;
    o->q_store = NULL;
    o->progress = NULL;
}

typedef struct {
    mr_backend *be;          /* the operator's reference */
    mr_qnormal nq;           /* gctx, matrix, m, c and the Toeplitz normal (linop_qnormal.h) */
    int64_t n;
    int threads;
    const mr_progress *progress;
    mr_nufft_opts nopts;     /* tolerance, factor, threads of both transforms */
    mr_nufft *cpu;           /* the image grid's plan (host) */
    mr_gpu_nufft *gpu;       /* the image grid's plan (GPU) */
    const float *traj;       /* host [M][3], borrowed during create only (Q's plan) */
    float *s;                /* [M] in the backend's memory */
    float *a;                /* [M][2] adjoint weights of one coil, in the backend's memory */
} nufft_data;

static void nufft_destroy(void *p)
{
    nufft_data *d = p;
    if (!d)
        return;
    const mr_vecops *v = mr_backend_vecops(d->be);
    mr_qnormal_release(&d->nq);
    mr_nufft_destroy(d->cpu);
    mr_gpu_nufft_destroy(d->gpu);
    v->release(v->ctx, d->s);
    v->release(v->ctx, d->a);
    mr_backend_free(d->be);
    free(d);
}

mr_status mr_nufft_op_params(int gpu, const mr_grid *g, int64_t m, const mr_nufft_opts *o, mr_nufft_params *p)
{
    mr_status st = mr_nufft_params_choose(g, m, o, gpu ? MR_NUFFT_ON_GPU : MR_NUFFT_ON_CPU, p);
    if (st == MR_OK && gpu && p->width > MR_GPU_NUFFT_MAX_WIDTH) {
        mr_nufft_opts o2 = *o;
        o2.upsample = 2.0;
        st = mr_nufft_params_choose(g, m, &o2, MR_NUFFT_ON_GPU, p);
    }
    return st;
}

/* The GPU plan's kernel description of parameters p on grid g (the deconvolution vectors into dec[3]). */
static mr_status gpu_kernel(const mr_nufft_params *p, const mr_grid *g, mr_gpu_nufft_kernel *k, double *dec[3])
{
    memset(k, 0, sizeof *k);
    k->f64 = p->precision == MR_NUFFT_PREC_F64;
    k->width = p->width;
    k->degree = p->degree;
    k->coef = &p->coef[0][0];
    for (int a = 0; a < 3; a++) {
        k->fine[a] = p->fine[a];
        dec[a] = malloc((size_t)g->n[a] * sizeof(double));
        if (!dec[a])
            return mr_error(MR_ENOMEM, "nufft operator: out of memory");
        mr_nufft_deconv(p, g, a, dec[a]);
        k->deconv[a] = dec[a];
    }
    return MR_OK;
}

/* A GPU plan of grid g with parameters p for the m samples traj (host). */
static mr_status gpu_plan_of(mr_gpu_ctx *gctx, const float *traj, int64_t m, const mr_grid *g, const mr_nufft_params *p,
                             mr_gpu_nufft **out)
{
    mr_gpu_nufft_kernel k;
    double *dec[3] = {NULL, NULL, NULL};
    mr_status st = gpu_kernel(p, g, &k, dec);
    if (st == MR_OK)
        st = mr_gpu_nufft_create(out, gctx, g, traj, m, &k);
    for (int a = 0; a < 3; a++)
        free(dec[a]);
    return st;
}

static mr_status gpu_plan(nufft_data *d, const mr_grid *g, const mr_nufft_params *p, mr_gpu_nufft **out)
{
    return gpu_plan_of(d->nq.gctx, d->traj, d->nq.m, g, p, out);
}

/* Type 1 onto the Q grid of nk weight vectors with one plan (see linop.h mr_nufft_q_sums). */
static mr_status q_sums(mr_backend *be, const int64_t matrix[3], const float *traj, int64_t m,
                        const mr_nufft_opts *no, int nk, const float *const *a, const int *real, float *const *q)
{
    const mr_grid gq = mr_grid_q(matrix);
    mr_status st;
    if (mr_backend_on_gpu(be)) {
        mr_gpu_ctx *gctx = mr_backend_gpu_ctx(be);
        mr_nufft_params par;
        mr_gpu_nufft *plan = NULL;
        const mr_vecops *v = mr_backend_vecops(be);
        float *da = NULL;
        st = mr_nufft_op_params(1, &gq, m, no, &par);
        if (st == MR_OK)
            st = gpu_plan_of(gctx, traj, m, &gq, &par, &plan);
        if (st == MR_OK && !(da = mr_backend_alloc(be, m)))
            st = MR_ENOMEM;
        for (int j = 0; j < nk && st == MR_OK; j++) {
            st = v->from_host(v->ctx, real[j] ? (m + 1) / 2 : m, da, a[j]);
            if (st == MR_OK)
                st = mr_gpu_nufft_type1(plan, 1, da, real[j], 0, q[j]);
        }
        if (st == MR_OK)
            st = mr_gpu_ctx_sync(gctx); /* before the plan's grid is freed */
        v->release(v->ctx, da);
        mr_gpu_nufft_destroy(plan);
    } else {
        mr_nufft *plan = NULL;
        st = mr_nufft_create(&plan, &gq, traj, m, no);
        for (int j = 0; j < nk && st == MR_OK; j++)
            st = mr_nufft_type1(plan, 1, a[j], real[j], q[j]);
        mr_nufft_destroy(plan);
    }
    return st;
}

static void nufft_opts_of(const mr_nufft_op_opts *o, int threads, mr_nufft_opts *no)
{
    mr_nufft_opts_default(no);
    no->tol = o->tol;
    no->upsample = o->upsample;
    no->threads = threads;
}

mr_status mr_nufft_q_sums(mr_backend *be, const int64_t matrix[3], const float *traj, int64_t m,
                          const mr_nufft_op_opts *opts, int nk, const float *const *a, const int *real, float *const *q)
{
    mr_nufft_op_opts o;
    if (opts)
        o = *opts;
    else
        mr_nufft_op_opts_default(&o);
    mr_nufft_opts no;
    nufft_opts_of(&o, mr_backend_threads(be), &no);
    return q_sums(be, matrix, traj, m, &no, nk, a, real, q);
}

static mr_status nufft_forward(void *p, const float *x, float *y)
{
    const nufft_data *d = p;
    if (d->nq.gctx) {
        mr_status st = mr_gpu_nufft_type2(d->gpu, d->nq.c, x, 0, y);
        return st == MR_OK ? mr_gpu_scale_rows(d->nq.gctx, d->nq.m, d->nq.c, d->s, y, y) : st;
    }
    mr_status st = mr_nufft_type2(d->cpu, d->nq.c, x, y);
    if (st != MR_OK)
        return st;
    for (int64_t c = 0; c < d->nq.c; c++)
        for (int64_t k = 0; k < d->nq.m; k++) {
            y[2 * (c * d->nq.m + k)] *= d->s[k];
            y[2 * (c * d->nq.m + k) + 1] *= d->s[k];
        }
    return MR_OK;
}

static mr_status nufft_adjoint(void *p, const float *y, float *x)
{
    const nufft_data *d = p;
    for (int64_t c = 0; c < d->nq.c; c++) {
        const float *yc = y + 2 * c * d->nq.m;
        float *xc = x + 2 * c * d->n;
        mr_progress_part part;
        const mr_progress coil = mr_progress_part_of(&part, d->progress, c, d->nq.c);
        mr_progress_report(&coil, "F^H d", 0, 1);
        mr_status st;
        if (d->nq.gctx) {
            st = mr_gpu_scale_rows(d->nq.gctx, d->nq.m, 1, d->s, yc, d->a);
            if (st == MR_OK)
                st = mr_gpu_nufft_type1(d->gpu, 1, d->a, 0, 0, xc);
        } else {
            for (int64_t k = 0; k < d->nq.m; k++) {
                d->a[2 * k] = d->s[k] * yc[2 * k];
                d->a[2 * k + 1] = d->s[k] * yc[2 * k + 1];
            }
            st = mr_nufft_type1(d->cpu, 1, d->a, 0, xc);
        }
        if (st != MR_OK)
            return st;
        mr_progress_report(&coil, "F^H d", 1, 1);
    }
    return MR_OK;
}

static mr_status nufft_normal(void *p, const float *x, float *y)
{
    const nufft_data *d = p;
    return mr_linop_forward(d->nq.tp, x, y);
}

/* Q = type 1 of the real weights qw onto the Q grid, with a plan made for it and freed right after
 * (mr_q_compute_fn). */
static mr_status compute_q(void *ctx, const float *qw, float *q)
{
    nufft_data *d = ctx;
    mr_progress_report(d->progress, "Q", 0, 1);
    const int real = 1;
    mr_status st = q_sums(d->be, d->nq.matrix, d->traj, d->nq.m, &d->nopts, 1, &qw, &real, &q);
    if (st == MR_OK)
        mr_progress_report(d->progress, "Q", 1, 1);
    return st;
}

void mr_nufft_op_bytes(int gpu, const int64_t matrix[3], int64_t m, const mr_nufft_params *pi,
                       const mr_nufft_params *pq, int fast_normal, int64_t *host, int64_t *dev)
{
    const mr_grid gi = mr_grid_image(matrix), gq = mr_grid_q(matrix);
    const int64_t nq = mr_grid_size(&gq), vecs = m * 4 + m * 8;
    const int64_t toeplitz = mr_toeplitz_bytes(matrix); /* GPU and host alike */
    int64_t img, qplan;
    if (gpu) {
        mr_gpu_nufft_kernel k[2];
        const mr_nufft_params *pp[2] = {pi, pq};
        for (int i = 0; i < 2; i++) {
            memset(&k[i], 0, sizeof k[i]);
            k[i].f64 = pp[i]->precision == MR_NUFFT_PREC_F64;
            k[i].width = pp[i]->width;
            k[i].degree = pp[i]->degree;
            memcpy(k[i].fine, pp[i]->fine, sizeof k[i].fine);
        }
        img = mr_gpu_nufft_bytes(&gi, m, &k[0]);
        qplan = fast_normal ? mr_gpu_nufft_bytes(&gq, m, &k[1]) : 0;
    } else {
        img = mr_nufft_host_bytes(pi, m);
        qplan = fast_normal ? mr_nufft_host_bytes(pq, m) : 0;
    }
    const int64_t qa = qplan + nq * 8 + m * 4, qb = nq * 8 + toeplitz;
    const int64_t total = img + vecs + (fast_normal ? (qa > qb ? qa : qb) : 0);
    *dev = gpu ? total : 0;
    *host = gpu ? m * 3 * 4 * 2 : total;
}

static void engine_text(char *buf, size_t size, int gpu, const mr_nufft_params *p, double tol)
{
    snprintf(buf, size, "%s nufft tol %.0e w%d s%.3g d%d %s", gpu ? "gpu" : "cpu", tol, p->width, p->upsample,
             p->degree, p->precision == MR_NUFFT_PREC_F64 ? "f64" : "f32");
}

mr_status mr_linop_nufft_create(mr_linop **out, mr_backend *be, const int64_t matrix[3], const float *traj, int64_t m,
                                const float *weights, int64_t ncoils, const mr_nufft_op_opts *opts, mr_nudft_info *info,
                                mr_nufft_op_info *ninfo)
{
    *out = NULL;
    mr_nufft_op_opts o;
    if (opts)
        o = *opts;
    else
        mr_nufft_op_opts_default(&o);
    mr_nudft_info dummy;
    mr_nufft_op_info ndummy;
    if (!info)
        info = &dummy;
    if (!ninfo)
        ninfo = &ndummy;
    memset(info, 0, sizeof *info);
    memset(ninfo, 0, sizeof *ninfo);
    info->q_source = "";
    const double t_setup = mr_now();
    nufft_data *d = calloc(1, sizeof *d);
    float *s = NULL, *qw = NULL;
    mr_status st = d ? mr_qnormal_begin(&d->nq, be, matrix, traj, m, weights, ncoils, o.basis, &s, &qw)
                     : mr_error(MR_ENOMEM, "nufft operator: out of memory");
    if (st != MR_OK) {
        free(d);
        return st;
    }
    d->be = mr_backend_ref(be);
    d->n = matrix[0] * matrix[1] * matrix[2];
    d->threads = mr_backend_threads(be);
    d->progress = o.progress;
    d->traj = traj;
    nufft_opts_of(&o, d->threads, &d->nopts);

    const mr_grid gi = mr_grid_image(matrix), gq = mr_grid_q(matrix);
    mr_nufft_params pi, pq;
    memset(&pq, 0, sizeof pq);
    st = mr_nufft_op_params(d->nq.gctx != NULL, &gi, m, &d->nopts, &pi);
    if (st == MR_OK && o.fast_normal)
        st = mr_nufft_op_params(d->nq.gctx != NULL, &gq, m, &d->nopts, &pq);
    if (st == MR_OK) {
        const mr_nufft_params *pp[2] = {&pi, &pq};
        for (int i = 0; i < 2; i++) {
            ninfo->width[i] = pp[i]->width;
            ninfo->upsample[i] = pp[i]->upsample;
            ninfo->f64[i] = pp[i]->precision == MR_NUFFT_PREC_F64;
            memcpy(ninfo->fine[i], pp[i]->fine, sizeof ninfo->fine[i]);
            ninfo->bound[i] = pp[i]->bound;
        }
        mr_nufft_op_bytes(d->nq.gctx != NULL, matrix, m, &pi, &pq, o.fast_normal, &ninfo->host_bytes,
                          &ninfo->device_bytes);
        if (d->nq.gctx) {
            int64_t fr = 0, tot = 0;
            st = mr_gpu_memory(mr_backend_gpu_index(be), &fr, &tot);
            if (st == MR_OK && ninfo->device_bytes > fr)
                st = mr_error(MR_ENOMEM,
                              "nufft operator: %lldx%lldx%lld voxels, %lld samples need %.2f GB of GPU memory, %.2f GB "
                              "of %.2f GB are free",
                              (long long)matrix[0], (long long)matrix[1], (long long)matrix[2], (long long)m,
                              ninfo->device_bytes * 1e-9, fr * 1e-9, tot * 1e-9);
        }
    }
    const double t_engine = mr_now();
    if (st == MR_OK)
        st = d->nq.gctx ? gpu_plan(d, &gi, &pi, &d->gpu) : mr_nufft_create(&d->cpu, &gi, traj, m, &d->nopts);
    info->engine_seconds = mr_now() - t_engine;
    info->engine = MR_PRECISION_AUTO;
    snprintf(info->engine_name, sizeof info->engine_name, "%s nufft (tol %.0e: width %d, upsampling %.3g, %s)",
             d->nq.gctx ? "gpu" : "cpu", o.tol, pi.width, pi.upsample,
             pi.precision == MR_NUFFT_PREC_F64 ? "float64" : "float32");
    if (st == MR_OK) {
        if (d->nq.gctx) {
            if (!(d->s = mr_backend_upload(be, m, s)) || !(d->a = mr_backend_alloc(be, m)))
                st = MR_ENOMEM;
        } else {
            d->s = s;
            s = NULL;
            if (!(d->a = malloc((size_t)m * 2 * sizeof(float))))
                st = mr_error(MR_ENOMEM, "nufft operator: out of memory for %lld samples", (long long)m);
        }
    }
    if (st == MR_OK && o.fast_normal) {
        char engine[96];
        engine_text(engine, sizeof engine, d->nq.gctx != NULL, &pq, o.tol);
        st = mr_qnormal_make(&d->nq, traj, qw, o.basis, engine, o.q_store, compute_q, d, info);
    }
    d->traj = NULL;
    free(s);
    free(qw);
    if (st != MR_OK) {
        nufft_destroy(d);
        return st;
    }
    info->plan_seconds = mr_now() - t_setup - info->q_seconds;
    mr_log(MR_LOG_DEBUG, "nufft operator: %s; Q grid: width %d, upsampling %.3g, fine %lldx%lldx%lld; working set %.3g GB "
                         "(%s)",
           info->engine_name, pq.width, pq.upsample, (long long)pq.fine[0], (long long)pq.fine[1],
           (long long)pq.fine[2], (d->nq.gctx ? ninfo->device_bytes : ninfo->host_bytes) * 1e-9, d->nq.gctx ? "GPU" : "host");
    const int64_t dom[4] = {matrix[0], matrix[1], matrix[2], ncoils}, cod[4] = {m, 1, 1, ncoils};
    const mr_linop_ops ops = {nufft_forward, nufft_adjoint, o.fast_normal ? nufft_normal : NULL, nufft_destroy};
    return mr_qnormal_linop(&d->nq, out, dom, cod, &ops, d);
}
