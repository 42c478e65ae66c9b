/* The exact NUDFT operator and the Toeplitz normal of linop.h, on the host (solver/nudft.h,
 * solver/toeplitz.h) or on the device (gpu/sums.h: the engine of the exact sums, on one GPU or
 * several; gpu/gpu_ops.h).
 *
 * Per coil c, with s_m = sqrt(w_m) Phi_m / N (real):
 *   forward  y_c = s * nudft_forward(x_c)          (sum over the image grid, then scaled per sample)
 *   adjoint  x_c = nudft_adjoint(s * y_c)          (complex weights a_m = s_m y_c,m)
 *   normal   Toeplitz with Q = nudft_adjoint(w Phi^2 / N^2) on mr_grid_q   (real weights)
 * The sums are raw (solver/nudft.h conventions) whatever computes them: the scaling by s is applied
 * here. On a GPU backend every vector and Q stay on the device; only the trajectory and the per-sample
 * factors are uploaded, once. With a Q store (opts.q_store) Q is taken from it when it holds Q for this
 * key (trajectory, Q weights, grid, basis, engine) and given to it after it was computed; on a GPU the
 * copy of a computed Q back to the host and the store's save run in a background thread (q_saver) while
 * the reconstruction goes on, joined when the operator is freed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/grid.h"
#include "../base/log.h"
#include "../gpu/gpu_ops.h"
#include "../gpu/sums.h"
#include "linop.h"
#include "linop_qnormal.h"
#include "nudft.h"
#include "toeplitz.h"

void mr_nudft_opts_default(mr_nudft_opts *o)
{
    o->basis = MR_BASIS_BOX;
    o->fast_normal = 1;
    o->exact_trig = 0;
    o->precision = MR_PRECISION_AUTO;
    o->q_store = NULL;
    o->progress = NULL;
    o->sums.fn = NULL;
    o->sums.ctx = NULL;
    o->memory_limit = 0;
    o->sums.name = NULL;
}

/* The GPU precisions are the engines of gpu/sums.h, one up (MR_PRECISION_AUTO first): names and mapping. */
_Static_assert(MR_PRECISION_SFU == MR_SUMS_SFU + 1 && MR_PRECISION_TF32X3 == MR_SUMS_TF32X3 + 1 &&
                   MR_PRECISION_FP64 == MR_SUMS_FP64 + 1 && MR_PRECISION_FP16X3 == MR_SUMS_FP16X3 + 1,
               "mr_precision lists mr_sums_engine in its order after auto");

const char *mr_precision_name(mr_precision p)
{
    if (p == MR_PRECISION_AUTO)
        return "auto";
    return p > MR_PRECISION_AUTO && p <= MR_PRECISION_FP16X3 ? mr_sums_engine_name((mr_sums_engine)(p - 1))
                                                              : "unknown";
}

mr_status mr_precision_parse(const char *text, mr_precision *p)
{
    for (int i = 0; text && i <= MR_PRECISION_FP16X3; i++)
        if (strcmp(text, mr_precision_name((mr_precision)i)) == 0) {
            *p = (mr_precision)i;
            return MR_OK;
        }
    return mr_error(MR_EINVAL, "'%s' is not auto, sfu, tf32x3, fp16x3 or fp64", text ? text : "(null)");
}

/* ---- the Toeplitz normal ----------------------------------------------------------------------- */

typedef struct {
    mr_toeplitz *cpu;
    mr_gpu_toeplitz *gpu;
    int64_t c;
} tp_data;

static void tp_destroy(void *p)
{
    tp_data *d = p;
    if (!d)
        return;
    mr_toeplitz_destroy(d->cpu);
    mr_gpu_toeplitz_destroy(d->gpu);
    free(d);
}

static mr_status tp_apply(void *p, const float *x, float *y)
{
    const tp_data *d = p;
    if (d->gpu)
        return mr_gpu_toeplitz_apply(d->gpu, d->c, x, y);
    return mr_toeplitz_apply_batch(d->cpu, d->c, x, y);
}

mr_status mr_linop_symbol_solve(const mr_linop_symbol *sym, const float *r, float *z)
{
    const tp_data *d = sym && sym->tp ? mr_linop_data(sym->tp, tp_apply) : NULL;
    if (!d)
        return mr_error(MR_EINVAL, "circulant solve: the model has no Toeplitz normal");
    if (!(sym->a >= 0 && sym->g >= 0 && sym->s >= 0 && sym->a + sym->g + sym->s > 0) ||
        !isfinite(sym->a + sym->g + sym->s))
        return mr_error(MR_EINVAL, "circulant solve: a %g, g %g, s %g (need >= 0, sum > 0)", sym->a, sym->g, sym->s);
    if (d->gpu)
        return mr_gpu_toeplitz_circulant_solve(d->gpu, sym->a, sym->g, sym->s, r, z);
    return mr_toeplitz_circulant_solve(d->cpu, sym->a, sym->g, sym->s, r, z);
}

mr_status mr_linop_toeplitz_create(mr_linop **out, mr_backend *be, const int64_t matrix[3], const float *q,
                                   int64_t ncoils, double *fft_plan_seconds)
{
    *out = NULL;
    mr_status st = mr_matrix_check(matrix, "Toeplitz operator");
    if (st != MR_OK)
        return st;
    if (!be || !q || ncoils < 1 || ncoils > MR_MAX_COILS)
        return mr_error(MR_EINVAL, "Toeplitz operator: %lld coils (need 1..%d), Q and a backend", (long long)ncoils,
                        MR_MAX_COILS);
    tp_data *d = calloc(1, sizeof *d);
    if (!d)
        return mr_error(MR_ENOMEM, "Toeplitz operator: out of memory");
    d->c = ncoils;
    const double t0 = mr_now();
    if (mr_backend_on_gpu(be))
        st = mr_gpu_toeplitz_create(&d->gpu, mr_backend_gpu_ctx(be), matrix, q);
    else
        st = mr_toeplitz_create(&d->cpu, matrix, q, mr_backend_threads(be));
    if (fft_plan_seconds)
        *fft_plan_seconds = d->gpu ? mr_gpu_toeplitz_plan_seconds(d->gpu) : mr_now() - t0;
    if (st != MR_OK) {
        tp_destroy(d);
        return st;
    }
    const int64_t dims[4] = {matrix[0], matrix[1], matrix[2], ncoils};
    const mr_linop_ops ops = {tp_apply, tp_apply, NULL, tp_destroy};
    return mr_linop_create(out, be, dims, dims, &ops, d);
}

/* ---- the NUDFT --------------------------------------------------------------------------------- */

typedef struct {
    mr_backend *be;
    struct mr_gpu_ctx *gctx; /* NULL on the host */
    mr_gpu_sums *sums;       /* the GPU's engine of the exact sums */
    mr_qnormal nq;           /* the Toeplitz normal and its Q (linop_qnormal.h) */
    int64_t matrix[3], n, m, c;
    int threads;
    const mr_progress *progress; /* borrowed, may be NULL */
    float *traj; /* host [M][3] (host backend, or a sums provider) */
    mr_nudft_sums provider; /* mr_nudft_opts.sums: Q and F^H d from it when set */
    float *s;    /* [M] sqrt(w) Phi / N, in the backend's memory */
    float *a;    /* [M][2] adjoint weights, in the backend's memory */
} nudft_data;

static void nudft_destroy(void *p)
{
    nudft_data *d = p;
    if (!d)
        return;
    const mr_vecops *v = mr_backend_vecops(d->be);
    mr_qnormal_release(&d->nq);
    mr_gpu_sums_destroy(d->sums);
    v->release(v->ctx, d->s);
    v->release(v->ctx, d->a);
    free(d->traj);
    mr_backend_free(d->be);
    free(d);
}

/* ---- the sums provider (mr_nudft_opts.sums): out (backend memory) = the sum over g with the host
 * weights a (real [M] or complex [M][2]); on a GPU backend the result goes through a host copy. */
static mr_status provider_sum(const nudft_data *d, const mr_grid *g, const float *a, int real_weights, float *out,
                              const mr_progress *p, const char *stage)
{
    const int64_t n = mr_grid_size(g);
    float *h = d->gctx ? malloc((size_t)n * 2 * sizeof *h) : out;
    if (!h)
        return mr_error(MR_ENOMEM, "operator: out of memory for %s on %lld voxels", stage, (long long)n);
    mr_progress_report(p, stage, 0, 1);
    mr_status st = d->provider.fn(d->provider.ctx, g, d->traj, a, real_weights, d->m, h);
    if (st == MR_OK && d->gctx) {
        const mr_vecops *v = mr_backend_vecops(d->be);
        st = v->from_host(v->ctx, n, out, h);
    }
    if (d->gctx)
        free(h);
    if (st == MR_OK)
        mr_progress_report(p, stage, 1, 1);
    return st;
}

/* F^H d of one coil through the provider: a = s y_c (y_c in the backend's memory). */
static mr_status provider_adjoint(const nudft_data *d, const mr_grid *g, const float *yc, float *xc,
                                  const mr_progress *p)
{
    float *a = malloc((size_t)d->m * 2 * sizeof *a);
    if (!a)
        return mr_error(MR_ENOMEM, "operator: out of memory for %lld samples", (long long)d->m);
    mr_status st = MR_OK;
    if (d->gctx) { /* scaled on the device, then brought to the host */
        const mr_vecops *v = mr_backend_vecops(d->be);
        st = mr_gpu_scale_rows(d->gctx, d->m, 1, d->s, yc, d->a);
        if (st == MR_OK)
            st = v->to_host(v->ctx, d->m, a, d->a);
    } else {
        for (int64_t k = 0; k < d->m; k++) {
            a[2 * k] = d->s[k] * yc[2 * k];
            a[2 * k + 1] = d->s[k] * yc[2 * k + 1];
        }
    }
    if (st == MR_OK)
        st = provider_sum(d, g, a, 0, xc, p, "F^H d");
    free(a);
    return st;
}
/* ---- end of the sums provider */

static mr_status nudft_forward(void *p, const float *x, float *y)
{
    const nudft_data *d = p;
    const mr_grid g = mr_grid_image(d->matrix);
    for (int64_t c = 0; c < d->c; c++) {
        const float *xc = x + 2 * c * d->n;
        float *yc = y + 2 * c * d->m;
        mr_status st = d->gctx ? mr_gpu_sums_forward(d->sums, &g, xc, yc)
                               : mr_nudft_forward(&g, d->traj, xc, d->m, yc, d->threads);
        if (st != MR_OK)
            return st;
    }
    if (d->gctx)
        return mr_gpu_scale_rows(d->gctx, d->m, d->c, d->s, y, y);
    for (int64_t c = 0; c < d->c; c++)
        for (int64_t k = 0; k < d->m; k++) {
            y[2 * (c * d->m + k)] *= d->s[k];
            y[2 * (c * d->m + k) + 1] *= d->s[k];
        }
    return MR_OK;
}

static mr_status nudft_adjoint(void *p, const float *y, float *x)
{
    const nudft_data *d = p;
    const mr_grid g = mr_grid_image(d->matrix);
    for (int64_t c = 0; c < d->c; c++) {
        const float *yc = y + 2 * c * d->m;
        float *xc = x + 2 * c * d->n;
        mr_progress_part part;
        const mr_progress coil = mr_progress_part_of(&part, d->progress, c, d->c);
        mr_status st;
        if (d->provider.fn) {
            st = provider_adjoint(d, &g, yc, xc, &coil);
        } else if (d->gctx) {
            mr_progress_report(&coil, "F^H d", 0, 1);
            st = mr_gpu_scale_rows(d->gctx, d->m, 1, d->s, yc, d->a);
            if (st == MR_OK)
                st = mr_gpu_sums_adjoint(d->sums, &g, d->a, 0, xc, MR_GEMM_F32);
            if (st == MR_OK)
                mr_progress_report(&coil, "F^H d", 1, 1);
        } else {
            for (int64_t k = 0; k < d->m; k++) {
                d->a[2 * k] = d->s[k] * yc[2 * k];
                d->a[2 * k + 1] = d->s[k] * yc[2 * k + 1];
            }
            st = mr_nudft_adjoint_progress(&g, d->traj, d->a, 0, d->m, xc, d->threads, &coil, "F^H d");
        }
        if (st != MR_OK)
            return st;
    }
    return MR_OK;
}

static mr_status nudft_normal(void *p, const float *x, float *y)
{
    const nudft_data *d = p;
    return mr_linop_forward(d->nq.tp, x, y);
}

/* Who computes the sums (info->engine, engine_name), and on a GPU backend the engine object. */
static mr_status make_engine(nudft_data *d, const float *traj, const mr_nudft_opts *o, mr_nudft_info *info)
{
    if (!d->gctx) {
        if (o->precision != MR_PRECISION_AUTO)
            return mr_error(MR_EINVAL, "precision %s runs on a GPU, but this operator runs on %s (use {device} gpu, or "
                                       "{precision} auto for the CPU kernels)",
                            mr_precision_name(o->precision), mr_backend_name(d->be));
        const char *level = mr_nudft_kernel_name();
        info->engine = MR_PRECISION_AUTO;
        snprintf(info->engine_name, sizeof info->engine_name, "cpu %s kernels", level ? level : "(unavailable)");
        return MR_OK;
    }
    int ngpus = 0;
    const int *gpus = mr_backend_gpus(d->be, &ngpus);
    mr_gpu_sums_opts so;
    memset(&so, 0, sizeof so);
    so.exact_trig = o->exact_trig;
    so.devices = gpus;
    so.ndevices = ngpus;
    const mr_grid gmax = o->fast_normal ? mr_grid_q(d->matrix) : mr_grid_image(d->matrix);
    memcpy(so.grid_n, gmax.n, sizeof so.grid_n);
    so.max_bytes = o->memory_limit;
    char why[512] = "";
    if (o->precision != MR_PRECISION_AUTO)
        so.engine = (mr_sums_engine)(o->precision - 1);
    else if (o->exact_trig)
        so.engine = MR_SUMS_SFU;
    else
        so.engine = mr_gpu_sums_choose(mr_backend_gpu_index(d->be), d->matrix, d->m, why, sizeof why);
    info->engine = (mr_precision)(so.engine + 1);
    static const char *const what[] = {"CUDA-core kernels, rung by grid size", "tensor-core GEMM, split TF32",
                                       "tensor-core DGEMM, float64", "tensor-core GEMM, split FP16, scaled"};
    const int n = snprintf(info->engine_name, sizeof info->engine_name, "gpu %s (%s)", mr_sums_engine_name(so.engine),
                           so.engine == MR_SUMS_SFU && o->exact_trig ? "constant-memory kernel, accurate sincosf"
                                                                      : what[so.engine]);
    if (ngpus > 1 && n > 0 && (size_t)n < sizeof info->engine_name)
        snprintf(info->engine_name + n, sizeof info->engine_name - (size_t)n, " on %d GPUs", ngpus);
    if (why[0])
        mr_log(MR_LOG_DEBUG, "exact sums: precision auto chose %s", why);
    return mr_gpu_sums_create(&d->sums, d->gctx, traj, d->m, &so);
}

/* Q (on mr_grid_q, real weights qw = w Phi^2 / N^2) into q, in the backend's memory (mr_q_compute_fn). */
static mr_status compute_q(void *ctx, const float *qw, float *q)
{
    nudft_data *d = ctx;
    const mr_grid gq = mr_grid_q(d->matrix);
    if (d->provider.fn)
        return provider_sum(d, &gq, qw, 1, q, d->progress, "Q");
    if (!d->gctx)
        return mr_nudft_adjoint_progress(&gq, d->traj, qw, 1, d->m, q, d->threads, d->progress, "Q");
    const mr_vecops *v = mr_backend_vecops(d->be);
    mr_progress_report(d->progress, "Q", 0, 1);
    float *dqw = mr_backend_upload(d->be, d->m, qw);
    mr_status st = dqw ? mr_gpu_sums_adjoint(d->sums, &gq, dqw, 1, q, MR_GEMM_F32) : MR_ENOMEM;
    v->release(v->ctx, dqw);
    if (st == MR_OK)
        mr_progress_report(d->progress, "Q", 1, 1);
    mr_gpu_sums_trim(d->sums); /* the Q grid's tables are not needed again */
    return st;
}

mr_status mr_linop_nudft_create(mr_linop **out, mr_backend *be, const int64_t matrix[3], const float *traj, int64_t m,
                                const float *weights, int64_t ncoils, const mr_nudft_opts *opts, mr_nudft_info *info)
{
    *out = NULL;
    mr_nudft_opts o;
    if (opts)
        o = *opts;
    else
        mr_nudft_opts_default(&o);
    mr_nudft_info dummy;
    if (!info)
        info = &dummy;
    memset(info, 0, sizeof *info);
    info->q_source = "";
    const double t_setup = mr_now();
    nudft_data *d = calloc(1, sizeof *d);
    float *s = NULL, *qw = NULL;
    mr_status st = d ? mr_qnormal_begin(&d->nq, be, matrix, traj, m, weights, ncoils, o.basis, &s, &qw)
                     : mr_error(MR_ENOMEM, "operator: out of memory");
    if (st != MR_OK) {
        free(d);
        return st;
    }
    d->be = mr_backend_ref(be);
    d->gctx = d->nq.gctx;
    memcpy(d->matrix, matrix, sizeof d->matrix);
    d->n = matrix[0] * matrix[1] * matrix[2];
    d->m = m;
    d->c = ncoils;
    d->threads = mr_backend_threads(be);
    d->progress = o.progress;
    d->provider = o.sums;
    const double t_engine = mr_now();
    st = make_engine(d, traj, &o, info);
    if (st == MR_OK && o.sums.fn) /* Q and F^H d come from the provider; the engine runs the forward only */
        snprintf(info->engine_name, sizeof info->engine_name, "%s", o.sums.name ? o.sums.name : "sums provider");
    info->engine_seconds = mr_now() - t_engine;
    if (st != MR_OK) {
    } else if (d->gctx) {
        if (!(d->s = mr_backend_upload(be, m, s)) || !(d->a = mr_backend_alloc(be, m)))
            st = MR_ENOMEM;
        if (st == MR_OK && d->provider.fn && !(d->traj = malloc((size_t)m * 3 * sizeof(float))))
            st = mr_error(MR_ENOMEM, "operator: out of memory for %lld samples", (long long)m);
        if (st == MR_OK && d->traj) /* the sums provider takes the trajectory from the host */
            memcpy(d->traj, traj, (size_t)m * 3 * sizeof(float));
    } else {
        d->s = s;
        s = NULL;
        d->traj = malloc((size_t)m * 3 * sizeof(float));
        d->a = malloc((size_t)m * 2 * sizeof(float));
        if (!d->traj || !d->a)
            st = mr_error(MR_ENOMEM, "operator: out of memory for %lld samples", (long long)m);
        else
            memcpy(d->traj, traj, (size_t)m * 3 * sizeof(float));
    }
    if (st == MR_OK && o.fast_normal) {
        char engine[96];
        const mr_grid gq = mr_grid_q(matrix);
        if (d->provider.fn) /* its bits are its own (e.g. the MPI split: recon/cluster/mpi_recon.h) */
            snprintf(engine, sizeof engine, "sums provider");
        else if (d->sums)
            mr_gpu_sums_describe(d->sums, &gq, 1, engine, sizeof engine);
        else
            snprintf(engine, sizeof engine, "cpu %s", mr_nudft_kernel_name() ? mr_nudft_kernel_name() : "-");
        st = mr_qnormal_make(&d->nq, traj, qw, o.basis, engine, o.q_store, compute_q, d, info);
    }
    free(s);
    free(qw);
    if (st != MR_OK) {
        nudft_destroy(d);
        return st;
    }
    info->plan_seconds = mr_now() - t_setup - info->q_seconds;
    const int64_t dom[4] = {matrix[0], matrix[1], matrix[2], ncoils}, cod[4] = {m, 1, 1, ncoils};
    const mr_linop_ops ops = {nudft_forward, nudft_adjoint, o.fast_normal ? nudft_normal : NULL, nudft_destroy};
    return mr_qnormal_linop(&d->nq, out, dom, cod, &ops, d);
}
