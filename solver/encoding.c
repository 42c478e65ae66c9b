/* The encoding operator, exact or NUFFT, chosen by a cost model (encoding.h; docs/NUFFT.md). */
#include "encoding.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"
#include "../base/memory.h"
#include "../gpu/gpu_ops.h"
#include "../gpu/sums.h"
#include "linop_qnormal.h"
#include "nudft.h"
#include "nufft.h"
#include "toeplitz.h"

static const struct {
    const char *name, *help;
} model_table[MR_MODEL_COUNT] = {
    {"auto", "the faster of exact and nufft that meets the tolerance and fits the memory (cost model)"},
    {"exact", "exact sums (the reference; cost voxels x samples)"},
    {"nufft", "non-uniform FFT to the requested tolerance (cost N log N + samples x width^d)"},
};

const char *mr_model_name(mr_model m) { return m >= 0 && m < MR_MODEL_COUNT ? model_table[m].name : "unknown"; }
const char *mr_model_help(mr_model m) { return m >= 0 && m < MR_MODEL_COUNT ? model_table[m].help : ""; }

mr_status mr_model_parse(const char *text, mr_model *m)
{
    for (int i = 0; text && i < MR_MODEL_COUNT; i++)
        if (strcmp(text, model_table[i].name) == 0) {
            *m = (mr_model)i;
            return MR_OK;
        }
    return mr_error(MR_EINVAL, "'%s' is not auto, exact or nufft", text ? text : "(null)");
}

void mr_encoding_opts_default(mr_encoding_opts *o)
{
    memset(o, 0, sizeof *o);
    o->model = MR_MODEL_AUTO;
    o->tol = MR_ENCODING_TOL_DEFAULT;
    o->upsample = 0.0;
    o->check = 0;
    o->memory_limit = 0;
    mr_nudft_opts_default(&o->op);
}

/* ---- the cost model ------------------------------------------------------------------------------------- */

/* Pair rates of the exact sums, (voxel, sample) pairs per second, Q and F^H d (docs/BENCHMARKS.md): the CPU
 * kernels per core (AVX-512 on 2 cores: Q 7.9e10, F^H d 4.8e10 effective), the GPU engines on the H200. */
#define EXACT_CPU_Q_PER_CORE 3.9e10
#define EXACT_CPU_FH_PER_CORE 2.4e10
static const double exact_gpu_rate[4][2] = {
    {4.0e12, 4.0e12},   /* sfu */
    {2.3e13, 1.17e13},  /* tf32x3 */
    {8.0e12, 8.3e12},   /* fp64 */
    {3.4e13, 1.75e13}}; /* fp16x3 */
/* The exact sums' error (relative L2 against float64; docs/OPERATOR.md, docs/GPU.md). */
static const double exact_gpu_error[4] = {1e-5, 1e-6, 1e-12, 1e-6};
#define EXACT_CPU_ERROR 3e-7

/* The exact engine of a GPU backend (as mr_linop_nudft_create picks it). */
static mr_sums_engine exact_engine(const mr_backend *be, const int64_t matrix[3], int64_t m, const mr_nudft_opts *op)
{
    if (op->precision != MR_PRECISION_AUTO)
        return (mr_sums_engine)(op->precision - 1);
    if (op->exact_trig)
        return MR_SUMS_SFU;
    return mr_gpu_sums_choose(mr_backend_gpu_index(be), matrix, m, NULL, 0);
}

/* The NUFFT's parameters on a backend (as linop_nufft.c picks them). */
static mr_status nufft_params(const mr_backend *be, const mr_grid *g, int64_t m, const mr_encoding_opts *o,
                              mr_nufft_params *p)
{
    mr_nufft_opts no;
    mr_nufft_opts_default(&no);
    no.tol = o->tol;
    no.upsample = o->upsample;
    no.threads = mr_backend_threads(be);
    return mr_nufft_op_params(mr_backend_on_gpu(be), g, m, &no, p);
}

/* The exact operator's own memory beside its sums: Q and the Toeplitz normal's grids, the per-sample arrays. */
static int64_t exact_fixed_bytes(const int64_t matrix[3], int64_t m, int fast_normal)
{
    const mr_grid gq = mr_grid_q(matrix);
    const int64_t nq = mr_grid_size(&gq);
    return (fast_normal ? nq * 8 + mr_toeplitz_bytes(matrix) : 0) + m * 32;
}

/* Working set of the exact operator: GPU: its sums within what the limit leaves them (gpu/sums.h: tables of
 * one chunk of samples and the work space) + the fixed part; host: the fixed part. *sums_cap: the cap
 * handed to the sums. */
static int64_t exact_bytes(const mr_backend *be, const int64_t matrix[3], int64_t m, mr_sums_engine e, int64_t limit,
                           int fast_normal, int64_t *sums_cap)
{
    const int64_t fixed = exact_fixed_bytes(matrix, m, fast_normal);
    *sums_cap = 0;
    if (!mr_backend_on_gpu(be))
        return fixed;
    const int64_t cap = limit - fixed;
    *sums_cap = cap > 0 ? cap : 1;
    return mr_gpu_sums_bytes(matrix, m, e, *sums_cap) + fixed;
}

mr_status mr_encoding_choose(const mr_backend *be, const int64_t matrix[3], int64_t m, int64_t ncoils,
                             const mr_encoding_opts *o, mr_encoding_info *info)
{
    mr_encoding_opts def;
    if (!o) {
        mr_encoding_opts_default(&def);
        o = &def;
    }
    memset(info, 0, sizeof *info);
    info->error_adjoint = info->error_forward = -1.0;
    if (!be)
        return mr_error(MR_EINVAL, "encoding: no backend");
    if (o->model < 0 || o->model >= MR_MODEL_COUNT)
        return mr_error(MR_EINVAL, "encoding: unknown model %d", (int)o->model);
    const int gpu = mr_backend_on_gpu(be), fast = o->op.fast_normal;
    const mr_grid gi = mr_grid_image(matrix), gq = mr_grid_q(matrix);
    /* the memory limit: the caller's, or what is free on the device now */
    int64_t limit = o->memory_limit;
    if (limit <= 0) {
        int64_t fr = 0, tot = 0;
        if (gpu && mr_gpu_memory(mr_backend_gpu_index(be), &fr, &tot) == MR_OK)
            limit = fr;
        else if (gpu)
            mr_clear_error();
        if (!gpu) { /* base/memory.h: MemAvailable, capped by the cgroup's room and RLIMIT_AS */
            const uint64_t av = mr_mem_available();
            limit = av >= (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)av;
        }
        if (limit <= 0)
            limit = INT64_MAX;
    }
    info->memory_limit = limit;

    /* the exact model */
    const double nv = (double)mr_grid_size(&gi), nqv = (double)mr_grid_size(&gq);
    const mr_sums_engine e = gpu ? exact_engine(be, matrix, m, &o->op) : MR_SUMS_SFU;
    double t_exact, err_exact;
    if (gpu) {
        t_exact = (fast ? nqv * (double)m / exact_gpu_rate[e][0] : 0.0) + (double)ncoils * nv * (double)m / exact_gpu_rate[e][1];
        err_exact = exact_gpu_error[e];
    } else {
        const double cores = (double)mr_backend_threads(be);
        t_exact = (fast ? nqv * (double)m / (EXACT_CPU_Q_PER_CORE * cores) : 0.0) +
                  (double)ncoils * nv * (double)m / (EXACT_CPU_FH_PER_CORE * cores);
        err_exact = EXACT_CPU_ERROR;
    }
    info->est_seconds[MR_MODEL_EXACT] = t_exact;
    info->est_bytes[MR_MODEL_EXACT] = exact_bytes(be, matrix, m, e, limit, fast, &info->sums_cap);

    /* the NUFFT model (unless the options name the exact sums: a GPU precision, accurate trig, a provider) */
    const int exact_only = o->op.precision != MR_PRECISION_AUTO || o->op.exact_trig || o->op.sums.fn;
    mr_nufft_params pi, pq;
    mr_status st = nufft_params(be, &gi, m, o, &pi);
    if (st == MR_OK)
        st = nufft_params(be, &gq, m, o, &pq);
    if (st != MR_OK)
        return st;
    const double t_nufft = (fast ? pq.cost : 0.0) + (double)ncoils * pi.cost;
    const double err_nufft = fast ? fmax(pi.bound, pq.bound) : pi.bound;
    info->est_seconds[MR_MODEL_NUFFT] = t_nufft;
    int64_t host_b = 0, dev_b = 0;
    mr_nufft_op_bytes(gpu, matrix, m, &pi, &pq, fast, &host_b, &dev_b);
    info->est_bytes[MR_MODEL_NUFFT] = gpu ? dev_b : host_b;

    const int fits_exact = info->est_bytes[MR_MODEL_EXACT] <= limit;
    const int fits_nufft = info->est_bytes[MR_MODEL_NUFFT] <= limit;
    const char *where = gpu ? "GPU" : "host";
    if (o->model == MR_MODEL_EXACT || (o->model == MR_MODEL_AUTO && exact_only)) {
        info->model = MR_MODEL_EXACT;
        snprintf(info->why, sizeof info->why, "%s", o->model == MR_MODEL_EXACT ? "requested" : "auto: the options name the exact sums' engine");
    } else if (o->model == MR_MODEL_NUFFT) {
        info->model = MR_MODEL_NUFFT;
        snprintf(info->why, sizeof info->why, "requested");
    } else {
        /* auto: the exact sums meet the tolerance where their own error is within it (the float32 engines at
         * the default 1e-6; a tighter tolerance takes the NUFFT in float64); of those that meet it and fit, the
         * faster */
        const int exact_ok = err_exact <= o->tol;
        if (exact_ok && fits_exact && (!fits_nufft || t_exact <= t_nufft)) {
            info->model = MR_MODEL_EXACT;
            snprintf(info->why, sizeof info->why, "auto: exact %.3g s vs nufft %.3g s estimated%s", t_exact, t_nufft,
                     fits_nufft ? "" : " (the nufft does not fit)");
        } else if (fits_nufft) {
            info->model = MR_MODEL_NUFFT;
            snprintf(info->why, sizeof info->why, "auto: nufft %.3g s vs exact %.3g s estimated%s", t_nufft, t_exact,
                     !exact_ok ? " (the exact sums' float32 error exceeds the tolerance)"
                     : !fits_exact ? " (the exact sums do not fit)" : "");
        } else {
            info->model = MR_MODEL_NUFFT; /* neither fits: refused below with the smaller need */
            if (fits_exact || info->est_bytes[MR_MODEL_EXACT] < info->est_bytes[MR_MODEL_NUFFT])
                info->model = MR_MODEL_EXACT;
            snprintf(info->why, sizeof info->why, "auto: neither model fits");
        }
    }
    const mr_model chosen = info->model;
    info->bound = chosen == MR_MODEL_EXACT ? err_exact : err_nufft;
    if (info->est_bytes[chosen] > limit)
        return mr_error(MR_ENOMEM,
                        "encoding: the %s model of %lldx%lldx%lld voxels, %lld samples, %lld coil(s) needs %.3g GB of "
                        "%s memory, %.3g GB are available%s",
                        mr_model_name(chosen), (long long)matrix[0], (long long)matrix[1], (long long)matrix[2],
                        (long long)m, (long long)ncoils, info->est_bytes[chosen] * 1e-9, where, limit * 1e-9,
                        o->model == MR_MODEL_AUTO ? " (the other model needs more)" : "");
    return MR_OK;
}

/* ---- the check: F^H and F at sample voxels and samples against float64 direct sums ---------------- */

/* The check's points: K of n, evenly spread (deterministic), at most `budget` / per pairs, at least 4. */
static int64_t check_count(int64_t n, double per, double budget)
{
    int64_t k = (int64_t)(budget / (per > 1 ? per : 1));
    if (k > 256)
        k = 256;
    if (k < 4)
        k = 4;
    return k < n ? k : n;
}

static double rel_err(const double *got, const double *ref, int64_t n)
{
    double e = 0, r = 0;
    for (int64_t i = 0; i < 2 * n; i++) {
        e += (got[i] - ref[i]) * (got[i] - ref[i]);
        r += ref[i] * ref[i];
    }
    return r > 0 ? sqrt(e / r) : sqrt(e);
}

static mr_status check_errors(mr_linop *op, mr_backend *be, const int64_t matrix[3], const float *traj, int64_t m,
                              const float *weights, int64_t ncoils, mr_basis basis, mr_encoding_info *info)
{
    const double t0 = mr_now();
    const mr_grid g = mr_grid_image(matrix);
    const int64_t n = mr_grid_size(&g), nd = n * ncoils, nc = m * ncoils;
    const mr_vecops *v = mr_backend_vecops(be);
    float *hy = calloc((size_t)nc * 2, sizeof(float)), *hx = calloc((size_t)nd * 2, sizeof(float));
    float *s = malloc((size_t)m * sizeof(float)), *qw = malloc((size_t)m * sizeof(float));
    float *dy = mr_backend_alloc(be, nc), *dx = mr_backend_alloc(be, nd);
    const int64_t kv = check_count(n, (double)m, 2e8), ks = check_count(m, (double)n, 2e8);
    double *got = malloc((size_t)(kv > ks ? kv : ks) * 2 * sizeof(double));
    double *ref = malloc((size_t)(kv > ks ? kv : ks) * 2 * sizeof(double));
    mr_status st = hy && hx && s && qw && dy && dx && got && ref ? MR_OK : MR_ENOMEM;
    if (st != MR_OK) {
        st = mr_error(MR_ENOMEM, "encoding check: out of memory");
        goto done;
    }
    mr_nudft_sample_factors(matrix, traj, m, weights, basis, s, qw);
    uint64_t r = 0x9E3779B97F4A7C15ULL; /* a fixed pseudo-random y (coil 0) and x (coil 0), others zero */
    for (int64_t i = 0; i < 2 * m; i++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        hy[i] = (float)((double)(r >> 11) / 9007199254740992.0 - 0.5);
    }
    if ((st = v->from_host(v->ctx, nc, dy, hy)) != MR_OK || (st = mr_linop_adjoint(op, dy, dx)) != MR_OK ||
        (st = v->to_host(v->ctx, nd, hx, dx)) != MR_OK)
        goto done;
    /* F^H y at kv voxels: x_v = sum_m s_m y_m e^{+i 2 pi k_m . r_v} */
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t j = 0; j < kv; j++) {
        const int64_t vox = j * (n / kv) + (n / kv) / 2;
        const int64_t ix = vox % g.n[0], iy = (vox / g.n[0]) % g.n[1], iz = vox / (g.n[0] * g.n[1]);
        const double rv[3] = {(double)(ix - g.center[0]) / (double)g.scale[0],
                              (double)(iy - g.center[1]) / (double)g.scale[1],
                              (double)(iz - g.center[2]) / (double)g.scale[2]};
        double re = 0, im = 0;
        for (int64_t k = 0; k < m; k++) {
            const double ph = 2.0 * M_PI * (traj[3 * k] * rv[0] + traj[3 * k + 1] * rv[1] + traj[3 * k + 2] * rv[2]);
            const double c = cos(ph), sn = sin(ph), a = s[k] * (double)hy[2 * k], b = s[k] * (double)hy[2 * k + 1];
            re += a * c - b * sn;
            im += a * sn + b * c;
        }
        ref[2 * j] = re;
        ref[2 * j + 1] = im;
        got[2 * j] = hx[2 * vox];
        got[2 * j + 1] = hx[2 * vox + 1];
    }
    info->error_adjoint = rel_err(got, ref, kv);
    info->check_voxels = kv;
    /* F x at ks samples, x = that adjoint (coil 0): y_m = s_m sum_v x_v e^{-i 2 pi k_m . r_v} */
    if ((st = mr_linop_forward(op, dx, dy)) != MR_OK || (st = v->to_host(v->ctx, nc, hy, dy)) != MR_OK)
        goto done;
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t j = 0; j < ks; j++) {
        const int64_t k = j * (m / ks) + (m / ks) / 2;
        double re = 0, im = 0;
        for (int64_t vox = 0; vox < n; vox++) {
            const int64_t ix = vox % g.n[0], iy = (vox / g.n[0]) % g.n[1], iz = vox / (g.n[0] * g.n[1]);
            const double ph = -2.0 * M_PI *
                              (traj[3 * k] * (double)(ix - g.center[0]) / (double)g.scale[0] +
                               traj[3 * k + 1] * (double)(iy - g.center[1]) / (double)g.scale[1] +
                               traj[3 * k + 2] * (double)(iz - g.center[2]) / (double)g.scale[2]);
            const double c = cos(ph), sn = sin(ph), a = hx[2 * vox], b = hx[2 * vox + 1];
            re += a * c - b * sn;
            im += a * sn + b * c;
        }
        ref[2 * j] = s[k] * re;
        ref[2 * j + 1] = s[k] * im;
        got[2 * j] = hy[2 * k];
        got[2 * j + 1] = hy[2 * k + 1];
    }
    info->error_forward = rel_err(got, ref, ks);
    info->check_samples = ks;
done:
    v->release(v->ctx, dy);
    v->release(v->ctx, dx);
    free(hy);
    free(hx);
    free(s);
    free(qw);
    free(got);
    free(ref);
    info->check_seconds = mr_now() - t0;
    return st;
}

mr_status mr_encoding_create(mr_linop **out, mr_backend *be, const int64_t matrix[3], const float *traj, int64_t m,
                             const float *weights, int64_t ncoils, const mr_encoding_opts *o, mr_encoding_info *info)
{
    *out = NULL;
    mr_encoding_opts def;
    mr_encoding_info dummy;
    if (!o) {
        mr_encoding_opts_default(&def);
        o = &def;
    }
    if (!info)
        info = &dummy;
    mr_status st = mr_matrix_check(matrix, "encoding");
    if (st == MR_OK && (m < 1 || ncoils < 1))
        st = mr_error(MR_EINVAL, "encoding: %lld samples, %lld coils", (long long)m, (long long)ncoils);
    if (st == MR_OK)
        st = mr_encoding_choose(be, matrix, m, ncoils, o, info);
    if (st != MR_OK)
        return st;
    if (info->model == MR_MODEL_EXACT) {
        mr_nudft_opts op = o->op;
        if (op.memory_limit <= 0 && mr_backend_on_gpu(be))
            op.memory_limit = info->sums_cap; /* the sums chunk their samples to stay within the limit */
        st = mr_linop_nudft_create(out, be, matrix, traj, m, weights, ncoils, &op, &info->op);
    } else {
        mr_nufft_op_opts no;
        mr_nufft_op_opts_default(&no);
        no.basis = o->op.basis;
        no.fast_normal = o->op.fast_normal;
        no.tol = o->tol;
        no.upsample = o->upsample;
        no.q_store = o->op.q_store;
        no.progress = o->op.progress;
        st = mr_linop_nufft_create(out, be, matrix, traj, m, weights, ncoils, &no, &info->op, &info->nufft);
    }
    if (st == MR_OK && o->check) {
        st = check_errors(*out, be, matrix, traj, m, weights, ncoils, o->op.basis, info);
        if (st != MR_OK) {
            mr_linop_free(*out);
            *out = NULL;
        }
    }
    if (st != MR_OK)
        return st;
    int n = snprintf(info->description, sizeof info->description, "%s (%s), ", mr_model_name(info->model),
                     info->op.engine_name);
    if (n > 0 && (size_t)n < sizeof info->description) {
        if (info->error_adjoint >= 0)
            n += snprintf(info->description + n, sizeof info->description - (size_t)n,
                          "error %.2g (F^H, %lld voxels) / %.2g (F, %lld samples) measured vs float64", info->error_adjoint,
                          (long long)info->check_voxels, info->error_forward, (long long)info->check_samples);
        else
            n += snprintf(info->description + n, sizeof info->description - (size_t)n, "error bound %.2g", info->bound);
    }
    if (n > 0 && (size_t)n < sizeof info->description)
        snprintf(info->description + n, sizeof info->description - (size_t)n, "; %s", info->why);
    mr_log(MR_LOG_INFO, "encoding: %s", info->description);
    return MR_OK;
}
