/* The backends of solver/backend.h: the host table (solver/vecops.c) or a device context with the
 * device table (gpu/gpu_ops.h), chosen once. */
#include "backend.h"

#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/child.h"
#include "../base/log.h"
#include "../base/memory.h"
#include "../gpu/gpu.h"
#include "../gpu/gpu_ops.h"

struct mr_backend {
    int refs;
    int gpu; /* device index, -1 = host */
    int gpus[MR_DEVICE_MAX_GPUS], ngpus; /* the GPUs sharing the exact sums (gpus[0] == gpu) */
    int threads;
    mr_vecops ops;
    mr_vecops_cpu_ctx cpu;
    mr_gpu_ctx *ctx;
    double init_seconds;
    char name[160];
};

static mr_status bad_device(const char *text)
{
    return mr_error(MR_EINVAL, "'%s' is not auto, cpu, gpu, gpu:N, gpu:N,M,... or gpu:all (N = 0, 1, ...)", text);
}

mr_status mr_device_parse(const char *text, mr_device_sel *out)
{
    if (!text)
        return mr_error(MR_EINVAL, "missing value (auto, cpu, gpu, gpu:N, gpu:N,M,... or gpu:all)");
    mr_device_sel s;
    memset(&s, 0, sizeof s);
    s.kind = MR_DEVICE_AUTO;
    s.index = -1;
    if (strcmp(text, "cpu") == 0) {
        s.kind = MR_DEVICE_CPU;
    } else if (strcmp(text, "gpu") == 0) {
        s.kind = MR_DEVICE_GPU;
    } else if (strcmp(text, "gpu:all") == 0) {
        s.kind = MR_DEVICE_GPU;
        s.all = 1;
    } else if (strncmp(text, "gpu:", 4) == 0) {
        int list[MR_DEVICE_MAX_GPUS], n = 0;
        for (const char *p = text + 4;;) { /* N(,N)*: digits only, no sign, no blanks */
            if (*p < '0' || *p > '9')
                return bad_device(text);
            char *end = NULL;
            const long v = strtol(p, &end, 10);
            if (v >= 1024)
                return bad_device(text);
            if (n == MR_DEVICE_MAX_GPUS)
                return mr_error(MR_EINVAL, "'%s': at most %d GPUs can share one reconstruction", text,
                                MR_DEVICE_MAX_GPUS);
            list[n++] = (int)v;
            if (*end == '\0')
                break;
            if (*end != ',')
                return bad_device(text);
            p = end + 1;
        }
        s.kind = MR_DEVICE_GPU;
        s.index = list[0];
        if (n > 1) {
            s.ngpus = n;
            memcpy(s.gpus, list, (size_t)n * sizeof *list);
        }
    } else if (strcmp(text, "auto") != 0) {
        return bad_device(text);
    }
    *out = s;
    return MR_OK;
}

void mr_device_format(mr_device_sel sel, char *buf, size_t size)
{
    if (sel.kind != MR_DEVICE_GPU) {
        snprintf(buf, size, "%s", sel.kind == MR_DEVICE_CPU ? "cpu" : "auto");
    } else if (sel.all) {
        snprintf(buf, size, "gpu:all");
    } else if (sel.ngpus > 1) {
        size_t used = (size_t)snprintf(buf, size, "gpu:");
        for (int i = 0; i < sel.ngpus && used < size; i++)
            used += (size_t)snprintf(buf + used, size - used, "%s%d", i ? "," : "", sel.gpus[i]);
    } else if (sel.index >= 0) {
        snprintf(buf, size, "gpu:%d", sel.index);
    } else {
        snprintf(buf, size, "gpu");
    }
}

mr_status mr_device_resolve_gpus(mr_device_sel sel, int *gpus, int *n)
{
    *n = 0;
    if (sel.kind == MR_DEVICE_CPU)
        return MR_OK;
    if (sel.kind != MR_DEVICE_GPU && sel.kind != MR_DEVICE_AUTO)
        return mr_error(MR_EINVAL, "unknown device kind %d", (int)sel.kind);
    const int count = mr_gpu_count();
    char req[MR_DEVICE_TEXT];
    mr_device_format(sel, req, sizeof req);
    /* the GPUs asked for: the main one first */
    int want[MR_DEVICE_MAX_GPUS], nw = 0;
    want[nw++] = sel.index >= 0 ? sel.index : (sel.ngpus > 1 ? sel.gpus[0] : 0);
    for (int i = 1; i < sel.ngpus && nw < MR_DEVICE_MAX_GPUS; i++)
        want[nw++] = sel.gpus[i];
    for (int d = 0; sel.all && d < count && nw < MR_DEVICE_MAX_GPUS; d++)
        if (d != want[0])
            want[nw++] = d;
    int worst = -1;
    for (int i = 0; i < nw; i++)
        worst = want[i] > worst ? want[i] : worst;
    if (sel.kind == MR_DEVICE_GPU) {
        if (count <= 0)
            return mr_error(MR_ENODEV, "{device} %s: no usable GPU (no CUDA device, no driver, or mrirecon was "
                                       "built without CUDA); use {device} cpu or auto",
                            req);
        if (worst >= count)
            return mr_error(MR_ENODEV, "{device} %s: only %d usable GPU(s) (gpu:0..gpu:%d)", req, count, count - 1);
    } else if (count <= 0 || worst >= count) {
        if (count <= 0)
            mr_log(MR_LOG_INFO, "no usable GPU, running on the CPU");
        else
            mr_log(MR_LOG_INFO, "%s is not usable (%d usable GPU(s)), running on the CPU", req, count);
        return MR_OK;
    }
    memcpy(gpus, want, (size_t)nw * sizeof *want);
    *n = nw;
    mr_gpu_warm_up(gpus, nw); /* libraries and contexts made in the background, e.g. while the scan is read */
    return MR_OK;
}

void mr_device_init_start(void) { mr_background_start(); }
void mr_device_release_start(int gpu) { mr_gpu_release(gpu); }

mr_status mr_device_resolve(mr_device_sel sel, int *gpu)
{
    int gpus[MR_DEVICE_MAX_GPUS], n = 0;
    mr_status st = mr_device_resolve_gpus(sel, gpus, &n);
    *gpu = st == MR_OK && n > 0 ? gpus[0] : -1;
    return st;
}

/* ---- the device table: thin adapters from mr_vecops to gpu/gpu_ops.h ------------------------- */

static float *dev_alloc(void *c, int64_t n) { return mr_gpu_alloc(c, 2 * (n > 0 ? n : 1)); }
static void dev_release(void *c, float *x) { mr_gpu_free(c, x); }
static void dev_zero(void *c, int64_t n, float *x) { mr_gpu_vec_zero(c, n, x); }
static void dev_copy(void *c, int64_t n, float *d, const float *s) { mr_gpu_vec_copy(c, n, d, s); }
static void dev_dot(void *c, int64_t n, const float *x, const float *y, double out[2]) { mr_gpu_vec_dot(c, n, x, y, out); }
static double dev_norm(void *c, int64_t n, const float *x) { return mr_gpu_vec_norm(c, n, x); }
static void dev_ewise(void *c, mr_ew_op op, int64_t n, float *out, const float *x, const float *y, const mr_ew_args *a)
{
    mr_gpu_vec_ewise(c, op, n, out, x, y, a);
}
static double dev_ewise_reduce(void *c, mr_ewr_op op, int64_t n, const float *x, const mr_ew_args *a)
{
    return mr_gpu_vec_ewise_reduce(c, op, n, x, a);
}
static mr_status dev_to_host(void *c, int64_t n, float *h, const float *s) { return mr_gpu_download(c, h, s, 2 * n); }
static mr_status dev_from_host(void *c, int64_t n, float *d, const float *h) { return mr_gpu_upload(c, d, h, 2 * n); }
static double dev_mag_dist2(void *c, int64_t n, const float *x, const float *t) { return mr_gpu_vec_mag_dist2(c, n, x, t); }
static mr_status dev_status(void *c) { return mr_gpu_ctx_status(c); }

static void device_table(mr_vecops *ops, mr_gpu_ctx *ctx)
{
    ops->ctx = ctx;
    ops->alloc = dev_alloc;
    ops->release = dev_release;
    ops->zero = dev_zero;
    ops->copy = dev_copy;
    ops->dot = dev_dot;
    ops->norm = dev_norm;
    ops->ewise = dev_ewise;
    ops->ewise_reduce = dev_ewise_reduce;
    ops->to_host = dev_to_host;
    ops->from_host = dev_from_host;
    ops->mag_dist2 = dev_mag_dist2;
    ops->status = dev_status;
}

mr_status mr_backend_create(mr_backend **out, mr_device_sel sel, int threads)
{
    if (!out)
        return mr_error(MR_EINVAL, "mr_backend_create: no output pointer");
    *out = NULL;
    int gpus[MR_DEVICE_MAX_GPUS], ngpus = 0;
    const double t0 = mr_now();
    mr_status st = mr_device_resolve_gpus(sel, gpus, &ngpus);
    if (st != MR_OK)
        return st;
    const int gpu = ngpus > 0 ? gpus[0] : -1;
    mr_backend *b = calloc(1, sizeof *b);
    if (!b)
        return mr_error(MR_ENOMEM, "backend: out of memory");
    b->refs = 1;
    b->gpu = gpu;
    b->ngpus = ngpus;
    memcpy(b->gpus, gpus, (size_t)ngpus * sizeof *gpus);
    b->threads = threads > 0 ? threads : omp_get_max_threads();
    if (gpu < 0) {
        mr_vecops_cpu_init(&b->ops, &b->cpu, b->threads);
        snprintf(b->name, sizeof b->name, "cpu (%d thread%s)", b->threads, b->threads > 1 ? "s" : "");
        *out = b;
        return MR_OK;
    }
    (void)mr_background_wait(); /* the device initialisation queued by the resolve, usually under way already */
    st = mr_gpu_ctx_create(&b->ctx, gpu);
    /* the GPU backend needs cuFFT (the Toeplitz normal): a GPU without it is not usable, and knowing it
     * now keeps the choice in one place. Its load counts as device initialisation. */
    if (st == MR_OK && (st = mr_gpu_fft_load()) != MR_OK && sel.kind == MR_DEVICE_AUTO) {
        mr_log(MR_LOG_INFO, "gpu:%d is not usable (%s), running on the CPU", gpu, mr_last_error());
        mr_clear_error();
        mr_gpu_ctx_destroy(b->ctx);
        free(b);
        const mr_device_sel cpu = {.kind = MR_DEVICE_CPU, .index = -1};
        return mr_backend_create(out, cpu, threads);
    }
    if (st != MR_OK) {
        mr_gpu_ctx_destroy(b->ctx);
        free(b);
        if (st == MR_ENODEV && sel.kind == MR_DEVICE_GPU) {
            char why[512], req[MR_DEVICE_TEXT];
            snprintf(why, sizeof why, "%s", mr_last_error());
            mr_device_format(sel, req, sizeof req);
            return mr_error(st, "{device} %s: %s", req, why);
        }
        return st;
    }
    b->init_seconds = mr_now() - t0;
    device_table(&b->ops, b->ctx);
    char desc[96]; /* "gpu:N " + desc fits b->name */
    if (mr_gpu_describe(gpu, desc, sizeof desc) != MR_OK) {
        desc[0] = '\0';
        mr_clear_error();
    }
    char sums[MR_DEVICE_TEXT] = ""; /* several GPUs: "gpu:0,1" */
    if (ngpus > 1) {
        mr_device_sel list = {.kind = MR_DEVICE_GPU, .index = gpu, .ngpus = ngpus};
        memcpy(list.gpus, gpus, (size_t)ngpus * sizeof *gpus);
        mr_device_format(list, sums, sizeof sums);
    }
    snprintf(b->name, sizeof b->name, "gpu:%d %s%s%s", gpu, desc, sums[0] ? "; sums on " : "", sums);
    *out = b;
    return MR_OK;
}

mr_backend *mr_backend_ref(mr_backend *b)
{
    if (b)
        b->refs++;
    return b;
}

void mr_backend_free(mr_backend *b)
{
    if (!b || --b->refs > 0)
        return;
    mr_gpu_ctx_destroy(b->ctx);
    free(b);
}

int mr_backend_on_gpu(const mr_backend *b) { return b && b->gpu >= 0; }
int mr_backend_gpu_index(const mr_backend *b) { return b ? b->gpu : -1; }
const int *mr_backend_gpus(const mr_backend *b, int *n)
{
    *n = b ? b->ngpus : 0;
    return b ? b->gpus : NULL;
}
int mr_backend_threads(const mr_backend *b) { return b ? b->threads : 1; }
const mr_vecops *mr_backend_vecops(const mr_backend *b) { return &b->ops; }
const char *mr_backend_name(const mr_backend *b) { return b ? b->name : ""; }
struct mr_gpu_ctx *mr_backend_gpu_ctx(const mr_backend *b) { return b ? b->ctx : NULL; }
double mr_backend_init_seconds(const mr_backend *b) { return b ? b->init_seconds : 0.0; }

float *mr_backend_alloc(const mr_backend *b, int64_t n)
{
    if (!b->ctx) { /* host memory: a vector larger than what is left is refused with the number needed */
        char what[sizeof b->name + 64];
        snprintf(what, sizeof what, "%s: a vector of %lld complex elements", b->name, (long long)n);
        if (mr_mem_check((uint64_t)(n > 0 ? n : 1) * 2 * sizeof(float), what) != MR_OK)
            return NULL;
    }
    float *x = b->ops.alloc(b->ops.ctx, n);
    if (!x)
        mr_error(MR_ENOMEM, "%s: out of memory for a vector of %lld complex elements", b->name, (long long)n);
    return x;
}

float *mr_backend_alloc_zero(const mr_backend *b, int64_t n)
{
    float *x = mr_backend_alloc(b, n);
    if (x)
        b->ops.zero(b->ops.ctx, n, x);
    return x;
}

struct mr_upload_job {
    const mr_backend *b;
    int64_t nfloats;
    const float *host;
    float **dev;
    mr_status st;
    char why[1024]; /* mr_error's message of the copying thread */
    pthread_t thread;
    int started;
};

/* nfloats host floats into the backend's vector dev */
static mr_status copy_in(const mr_backend *b, float *dev, const float *host, int64_t nfloats)
{
    if (b->ctx)
        return mr_gpu_upload(b->ctx, dev, host, nfloats);
    memcpy(dev, host, (size_t)nfloats * sizeof(float));
    return MR_OK;
}

static void *upload_run(void *arg)
{
    mr_upload_job *j = arg;
    j->st = copy_in(j->b, *j->dev, j->host, j->nfloats);
    if (j->st != MR_OK)
        snprintf(j->why, sizeof j->why, "%s", mr_last_error());
    return NULL;
}

mr_status mr_backend_upload_start(const mr_backend *b, int64_t nfloats, const float *host, float **dev,
                                  mr_upload_job **job)
{
    *job = NULL;
    if (!(*dev = mr_backend_alloc(b, (nfloats + 1) / 2)))
        return MR_ENOMEM;
    mr_upload_job *j = calloc(1, sizeof *j);
    if (!j) {
        b->ops.release(b->ops.ctx, *dev);
        *dev = NULL;
        return mr_error(MR_ENOMEM, "out of memory for an upload");
    }
    *j = (mr_upload_job){.b = b, .nfloats = nfloats, .host = host, .dev = dev};
    j->started = pthread_create(&j->thread, NULL, upload_run, j) == 0;
    if (!j->started)
        upload_run(j); /* no thread: now */
    *job = j;
    return MR_OK;
}

mr_status mr_backend_upload_wait(mr_upload_job *j)
{
    if (!j)
        return MR_OK;
    if (j->started)
        pthread_join(j->thread, NULL);
    mr_status st = j->st;
    if (st != MR_OK) {
        mr_error(st, "%s", j->why);
        j->b->ops.release(j->b->ops.ctx, *j->dev);
        *j->dev = NULL;
    }
    free(j);
    return st;
}

float *mr_backend_upload(const mr_backend *b, int64_t nfloats, const float *host)
{
    float *x = mr_backend_alloc(b, (nfloats + 1) / 2);
    if (x && copy_in(b, x, host, nfloats) != MR_OK) {
        b->ops.release(b->ops.ctx, x);
        return NULL;
    }
    return x;
}
