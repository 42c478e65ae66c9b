/* The encoding operator (op.h): CPU backend, GPU backend for Q and F^H d, Toeplitz normal.
 *
 * F x:      y_m = Phi_m / N * sum_n x_n e^{-i2pi k_m.r_n}          (CPU: mr_nudft_forward)
 * F^H W y:  x_n = sum_m a_m e^{+i2pi k_m.r_n},  a_m = w_m Phi_m y_m / N   (Phi is real)
 * Q:        Q(r) = sum_m a_m e^{+i2pi k_m.r} on mr_grid_q,  a_m = w_m Phi_m^2 / N^2  (real weights)
 * normal:   mr_toeplitz_apply with that Q, or F^H W (F x) when fast_normal == 0. */
#include "op.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gpu/gpu.h"
#include "../base/grid.h"
#include "../base/log.h"
#include "nudft.h"
#include "toeplitz.h"

struct mr_op {
    int64_t matrix[3];
    int64_t nvox, m;
    mr_op_opts opts;
    int threads;
    float *traj;  /* [M][3] */
    float *w;     /* [M] weights (ones when none were given) */
    float *phi;   /* [M] basis transform Phi(k_m) (real) */
    float *a;     /* [M][2] scratch: the adjoint's weights */
    float *ytmp;  /* [M][2] scratch: F x inside the normal without fast_normal */
    mr_toeplitz *tp;
    mr_gpu_nudft *gpu; /* NULL: CPU backend */
    int gpu_device;
    mr_op_info info;
};

void mr_op_opts_default(mr_op_opts *o)
{
    o->basis = MR_BASIS_BOX;
    o->device = MR_DEVICE_AUTO;
    o->gpu_index = -1;
    o->threads = 0;
    o->fast_normal = 1;
    o->exact_trig = 0;
}

mr_status mr_op_parse_device(const char *text, mr_op_opts *o)
{
    if (!text)
        return mr_error(MR_EINVAL, "--device: missing value (auto, cpu, gpu or gpu:N)");
    if (strcmp(text, "auto") == 0) {
        o->device = MR_DEVICE_AUTO;
        o->gpu_index = -1;
        return MR_OK;
    }
    if (strcmp(text, "cpu") == 0) {
        o->device = MR_DEVICE_CPU;
        o->gpu_index = -1;
        return MR_OK;
    }
    if (strcmp(text, "gpu") == 0) {
        o->device = MR_DEVICE_GPU;
        o->gpu_index = -1;
        return MR_OK;
    }
    if (strncmp(text, "gpu:", 4) == 0 && text[4] >= '0' && text[4] <= '9') {
        char *end = NULL;
        long v = strtol(text + 4, &end, 10);
        if (*end == '\0' && v >= 0 && v < 1024) {
            o->device = MR_DEVICE_GPU;
            o->gpu_index = (int)v;
            return MR_OK;
        }
    }
    return mr_error(MR_EINVAL, "--device: '%s' is not auto, cpu, gpu or gpu:N (N = 0, 1, ...)", text);
}

static double sinc(double x)
{
    if (x == 0.0)
        return 1.0;
    const double px = 3.141592653589793238462643383279 * x;
    return sin(px) / px;
}

void mr_op_destroy(mr_op *op)
{
    if (!op)
        return;
    mr_toeplitz_destroy(op->tp);
    mr_gpu_nudft_destroy(op->gpu);
    free(op->traj);
    free(op->w);
    free(op->phi);
    free(op->a);
    free(op->ytmp);
    free(op);
}

/* Pick the backend; on the GPU, op->gpu is set. */
static mr_status choose_backend(mr_op *op)
{
    const mr_device_kind dev = op->opts.device;
    if (dev == MR_DEVICE_CPU)
        return MR_OK;
    const int count = mr_gpu_count();
    if (dev == MR_DEVICE_GPU) {
        if (count <= 0)
            return mr_error(MR_ENODEV, "--device gpu: no usable GPU (no CUDA device, no driver, or mrirecon was "
                                       "built without CUDA); use --device cpu or auto");
        if (op->opts.gpu_index >= count)
            return mr_error(MR_ENODEV, "--device gpu:%d: only %d usable GPU(s) (gpu:0..gpu:%d)", op->opts.gpu_index,
                            count, count - 1);
    } else if (dev != MR_DEVICE_AUTO) {
        return mr_error(MR_EINVAL, "operator: unknown device kind %d", (int)dev);
    }
    if (count <= 0) {
        mr_log(MR_LOG_INFO, "no usable GPU, running on the CPU");
        return MR_OK;
    }
    if (op->opts.gpu_index >= count) {
        mr_log(MR_LOG_INFO, "gpu:%d is not usable (%d usable GPU(s)), running on the CPU", op->opts.gpu_index, count);
        return MR_OK;
    }
    op->gpu_device = op->opts.gpu_index < 0 ? 0 : op->opts.gpu_index;
    mr_status st = mr_gpu_nudft_create(&op->gpu, op->gpu_device, op->traj, op->m);
    if (st != MR_OK) {
        op->gpu = NULL;
        if (dev == MR_DEVICE_GPU)
            return st;
        mr_log(MR_LOG_WARN, "GPU %d unusable (%s), running on the CPU", op->gpu_device, mr_last_error());
        mr_clear_error();
    }
    return MR_OK;
}

/* out = sum_m a_m e^{+i2pi k_m.r} on g, on the operator's backend. With AUTO, a GPU failure falls
 * back to the CPU (with a warning) and the CPU is used from then on. */
static mr_status op_sum(mr_op *op, const mr_grid *g, const float *a, int real_weights, float *out)
{
    if (op->gpu) {
        const mr_gpu_variant v = op->opts.exact_trig ? MR_GPU_CONSTANT : MR_GPU_BEST;
        mr_status st = mr_gpu_nudft_adjoint(op->gpu, g, a, real_weights, out, v);
        if (st == MR_OK || op->opts.device == MR_DEVICE_GPU)
            return st;
        mr_log(MR_LOG_WARN, "GPU %d failed (%s), continuing on the CPU", op->gpu_device, mr_last_error());
        mr_clear_error();
        mr_gpu_nudft_destroy(op->gpu);
        op->gpu = NULL;
        snprintf(op->info.backend, sizeof op->info.backend, "cpu (%d threads)", op->threads);
    }
    return mr_nudft_adjoint(g, op->traj, a, real_weights, op->m, out, op->threads);
}

static mr_status compute_q(mr_op *op)
{
    const mr_grid gq = mr_grid_q(op->matrix);
    const int64_t nq = mr_grid_size(&gq);
    float *q = malloc((size_t)nq * 2 * sizeof(float));
    if (!q)
        return mr_error(MR_ENOMEM, "operator: out of memory for Q (%lld voxels)", (long long)nq);
    const double n2 = (double)op->nvox * (double)op->nvox;
    for (int64_t k = 0; k < op->m; k++) /* real weights in the first M floats of the scratch */
        op->a[k] = (float)((double)op->w[k] * (double)op->phi[k] * (double)op->phi[k] / n2);
    const double t0 = mr_now();
    mr_status st = op_sum(op, &gq, op->a, 1, q);
    op->info.q_seconds = mr_now() - t0;
    op->info.q_pairs = nq > INT64_MAX / op->m ? INT64_MAX : nq * op->m;
    if (st == MR_OK)
        st = mr_toeplitz_create(&op->tp, op->matrix, q, op->threads);
    free(q);
    return st;
}

mr_status mr_op_create(mr_op **out, const int64_t matrix[3], const float *traj, int64_t m, const float *weights,
                       const mr_op_opts *opts)
{
    if (!out)
        return mr_error(MR_EINVAL, "mr_op_create: no output pointer");
    *out = NULL;
    mr_status st = mr_matrix_check(matrix, "operator");
    if (st != MR_OK)
        return st;
    if (!traj || m < 1 || m > MR_MAX_SAMPLES)
        return mr_error(MR_EINVAL, "operator: %lld samples (need 1..%lld and a trajectory)", (long long)m,
                        (long long)MR_MAX_SAMPLES);
    mr_op_opts o;
    if (opts)
        o = *opts;
    else
        mr_op_opts_default(&o);
    if (o.basis != MR_BASIS_BOX && o.basis != MR_BASIS_DIRAC)
        return mr_error(MR_EINVAL, "operator: unknown basis %d", (int)o.basis);
    for (int64_t k = 0; k < m; k++) {
        for (int a = 0; a < 3; a++)
            if (!isfinite(traj[3 * k + a]))
                return mr_error(MR_EINVAL, "operator: trajectory sample %lld axis %d is not finite", (long long)k, a);
        if (weights && !(isfinite(weights[k]) && weights[k] >= 0.0f))
            return mr_error(MR_EINVAL, "operator: weight %lld = %g is not a finite non-negative number",
                            (long long)k, (double)weights[k]);
    }

    const double t_setup = mr_now();
    mr_op *op = calloc(1, sizeof *op);
    if (!op)
        return mr_error(MR_ENOMEM, "operator: out of memory");
    memcpy(op->matrix, matrix, sizeof op->matrix);
    op->nvox = matrix[0] * matrix[1] * matrix[2];
    op->m = m;
    op->opts = o;
    op->threads = o.threads > 0 ? o.threads : omp_get_max_threads();
    op->traj = malloc((size_t)m * 3 * sizeof(float));
    op->w = malloc((size_t)m * sizeof(float));
    op->phi = malloc((size_t)m * sizeof(float));
    op->a = malloc((size_t)m * 2 * sizeof(float));
    if (!op->traj || !op->w || !op->phi || !op->a) {
        mr_op_destroy(op);
        return mr_error(MR_ENOMEM, "operator: out of memory for %lld samples", (long long)m);
    }
    memcpy(op->traj, traj, (size_t)m * 3 * sizeof(float));
    for (int64_t k = 0; k < m; k++) {
        op->w[k] = weights ? weights[k] : 1.0f;
        double phi = 1.0;
        if (o.basis == MR_BASIS_BOX)
            for (int a = 0; a < 3; a++)
                if (matrix[a] > 1)
                    phi *= sinc((double)traj[3 * k + a] / (double)matrix[a]);
        op->phi[k] = (float)phi;
    }

    st = choose_backend(op);
    if (st != MR_OK) {
        mr_op_destroy(op);
        return st;
    }
    if (op->gpu) {
        char desc[96];
        if (mr_gpu_describe(op->gpu_device, desc, sizeof desc) != MR_OK)
            desc[0] = '\0';
        snprintf(op->info.backend, sizeof op->info.backend, "gpu:%d %s", op->gpu_device, desc);
    } else {
        snprintf(op->info.backend, sizeof op->info.backend, "cpu (%d threads)", op->threads);
    }

    if (o.fast_normal) {
        st = compute_q(op);
    } else {
        op->ytmp = malloc((size_t)m * 2 * sizeof(float));
        if (!op->ytmp)
            st = mr_error(MR_ENOMEM, "operator: out of memory for %lld samples", (long long)m);
    }
    if (st != MR_OK) {
        mr_op_destroy(op);
        return st;
    }
    op->info.plan_seconds = mr_now() - t_setup - op->info.q_seconds;
    *out = op;
    return MR_OK;
}

mr_status mr_op_forward(mr_op *op, const float *x, float *y)
{
    if (!op || !x || !y)
        return mr_error(MR_EINVAL, "mr_op_forward: null argument");
    const mr_grid g = mr_grid_image(op->matrix);
    mr_status st = mr_nudft_forward(&g, op->traj, x, op->m, y, op->threads);
    if (st != MR_OK)
        return st;
    const float inv_n = (float)(1.0 / (double)op->nvox);
    for (int64_t k = 0; k < op->m; k++) {
        const float s = op->phi[k] * inv_n;
        y[2 * k] *= s;
        y[2 * k + 1] *= s;
    }
    return MR_OK;
}

mr_status mr_op_adjoint(mr_op *op, const float *y, float *x)
{
    if (!op || !x || !y)
        return mr_error(MR_EINVAL, "mr_op_adjoint: null argument");
    const float inv_n = (float)(1.0 / (double)op->nvox);
    for (int64_t k = 0; k < op->m; k++) {
        const float s = op->w[k] * op->phi[k] * inv_n;
        op->a[2 * k] = s * y[2 * k];
        op->a[2 * k + 1] = s * y[2 * k + 1];
    }
    const mr_grid g = mr_grid_image(op->matrix);
    return op_sum(op, &g, op->a, 0, x);
}

mr_status mr_op_normal(mr_op *op, const float *x, float *y)
{
    if (!op || !x || !y)
        return mr_error(MR_EINVAL, "mr_op_normal: null argument");
    if (op->tp)
        return mr_toeplitz_apply(op->tp, x, y);
    mr_status st = mr_op_forward(op, x, op->ytmp);
    return st == MR_OK ? mr_op_adjoint(op, op->ytmp, y) : st;
}

void mr_op_get_info(const mr_op *op, mr_op_info *info)
{
    if (op && info)
        *info = op->info;
}

int64_t mr_op_image_size(const mr_op *op) { return op ? op->nvox : 0; }

int64_t mr_op_nsamples(const mr_op *op) { return op ? op->m : 0; }
