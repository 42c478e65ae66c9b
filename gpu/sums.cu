/* gpu/sums.h: the engine of the exact sums and their split across GPUs. Host code only: the kernels
 * are gpu/nudft.cu's and gpu/gemm.cu's.
 *
 * Threads: one host thread per distinct GPU of the list (the calling thread takes the context's GPU),
 * each making its GPU current and computing its parts in order; the CUDA current device is per host
 * thread, so the calling thread's stays the context's. Errors of a worker are recorded with their
 * message and raised again in the calling thread (mr_error is per thread). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "../base/log.h"
#include "cuda_check.h"
#include "gpu.h"
#include "gpu_internal.h"
#include "sums.h"

typedef struct {
    int device;
    mr_gpu_ctx *ctx;  /* the caller's on the main GPU, our own elsewhere */
    int own_ctx;
    mr_gpu_nudft *gn; /* MR_SUMS_SFU */
    mr_gemm_plan *gp[MR_SUMS_MAX_CHUNKS]; /* GEMM engines: one plan per chunk of samples */
    int nchunks;
    int64_t chunk0[MR_SUMS_MAX_CHUNKS + 1]; /* chunk c holds samples [chunk0[c], chunk0[c + 1]) */
    char *d_acc;      /* a chunk's planes before they are added to the output (several chunks) */
    size_t acc_bytes;
    int parts[MR_SUMS_MAX_PARTS], nparts;
    float *d_a;       /* other GPUs: the weights, copied from the main GPU */
    size_t a_bytes;
    char *d_part;     /* a part's planes before they go to their place in the output */
    size_t part_bytes;
    int64_t *planes;  /* [nz] host scratch */
    int64_t planes_cap;
    /* the outcome of the last call */
    mr_status st;
    char err[1024];
} sums_dev;

struct mr_gpu_sums {
    mr_gpu_ctx *c;
    int main_dev;
    mr_sums_engine engine;
    int exact_trig;
    int64_t m;
    int nparts, ndev;
    sums_dev dev[MR_SUMS_MAX_PARTS];
    /* the arguments of the running adjoint, read by the workers */
    const mr_grid *g;
    const float *d_a;
    int real;
    char *d_out;
    size_t es; /* bytes per complex output value */
    mr_gpu_variant rung;
};

/* The GEMM engines are the precisions of gpu/gemm.h, one up (MR_SUMS_SFU first). */
static_assert(MR_SUMS_TF32X3 == MR_GEMM_TF32X3 + 1 && MR_SUMS_FP64 == MR_GEMM_FP64 + 1 &&
                  MR_SUMS_FP16X3 == MR_GEMM_FP16X3 + 1,
              "mr_sums_engine lists mr_gemm_precision in its order after sfu");
static mr_gemm_precision gemm_prec(const mr_gpu_sums *s) { return (mr_gemm_precision)(s->engine - 1); }

mr_sums_engine mr_gpu_sums_choose(int device, const int64_t matrix[3], int64_t m, char *why, size_t why_size)
{
    char dummy[8];
    if (!why) {
        why = dummy;
        why_size = sizeof dummy;
    }
    const mr_grid gq = mr_grid_q(matrix);
    const double pairs = (double)mr_grid_size(&gq) * (double)m;
    if (pairs < MR_SUMS_GEMM_MIN_PAIRS) {
        snprintf(why, why_size, "sfu: a small problem (%.2g voxel-sample pairs in Q), where loading cuBLAS costs "
                                "more than the tensor cores save", pairs);
        return MR_SUMS_SFU;
    }
    if (mr_gemm_load() != MR_OK) {
        snprintf(why, why_size, "sfu: %s", mr_last_error());
        mr_clear_error();
        return MR_SUMS_SFU;
    }
    const double need = (double)mr_gemm_table_bytes(&gq, m, MR_GEMM_TF32X3); /* cut into chunks where it must */
    if (mr_gemm_wgmma_available(device)) {
        snprintf(why, why_size, "tf32x3: tensor-core GEMM in split TF32 on the warpgroup MMA (tables %.2f GB)",
                 need * 1e-9);
        return MR_SUMS_TF32X3;
    }
    snprintf(why, why_size, "fp16x3: tensor-core GEMM in split FP16 (tables %.2f GB)", need * 1e-9);
    return MR_SUMS_FP16X3;
}

/* ---- create / destroy ------------------------------------------------------------------------------ */

static void dev_free(sums_dev *d)
{
    if (d->device >= 0)
        (void)cudaSetDevice(d->device);
    for (int c = 0; c < MR_SUMS_MAX_CHUNKS; c++)
        mr_gemm_destroy(d->gp[c]);
    mr_gpu_nudft_destroy(d->gn);
    if (d->d_acc)
        (void)cudaFree(d->d_acc);
    if (d->d_a)
        (void)cudaFree(d->d_a);
    if (d->d_part)
        (void)cudaFree(d->d_part);
    if (d->own_ctx)
        mr_gpu_ctx_destroy(d->ctx);
    free(d->planes);
    (void)cudaGetLastError();
    memset(d, 0, sizeof *d);
    d->device = -1;
}

void mr_gpu_sums_destroy(mr_gpu_sums *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->ndev; i++)
        dev_free(&s->dev[i]);
    (void)cudaSetDevice(s->main_dev);
    free(s);
}

/* Let the two GPUs read each other's memory (NVLink/PCIe peer copies) where they can; where they cannot,
 * cudaMemcpyPeer goes through the host, so failure here only costs speed. */
static void enable_peer(int a, int b)
{
    int can = 0;
    if (a == b || cudaDeviceCanAccessPeer(&can, a, b) != cudaSuccess || !can) {
        (void)cudaGetLastError();
        return;
    }
    if (cudaSetDevice(a) == cudaSuccess) {
        cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
        if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled)
            mr_log(MR_LOG_DEBUG, "GPU sums: no peer access from GPU %d to GPU %d (%s)", a, b, cudaGetErrorName(e));
    }
    (void)cudaGetLastError();
}

static mr_status dev_setup(mr_gpu_sums *s, sums_dev *d, const float *traj, const mr_gpu_sums_opts *o)
{
    mr_status st = MR_OK;
    if (d->device == s->main_dev) {
        d->ctx = s->c;
    } else {
        if ((st = mr_gpu_ctx_create(&d->ctx, d->device)) != MR_OK)
            return st;
        d->own_ctx = 1;
        enable_peer(d->device, s->main_dev);
        enable_peer(s->main_dev, d->device);
    }
    if (s->engine == MR_SUMS_SFU)
        return mr_gpu_nudft_create(&d->gn, d->device, traj, s->m);
    /* the chunks of samples: all in one unless the largest grid's tables do not fit the cap */
    int64_t cap = o->max_bytes, work = 0;
    if (cap <= 0) {
        size_t fr = 0, tot = 0;
        if ((st = MR_CU(cudaSetDevice(d->device))) != MR_OK || (st = MR_CU(cudaMemGetInfo(&fr, &tot))) != MR_OK)
            return st;
        cap = (int64_t)(0.6 * (double)fr);
        if (cap > MR_SUMS_DEFAULT_CAP)
            cap = MR_SUMS_DEFAULT_CAP;
    }
    d->nchunks = 1;
    if (o->grid_n[0] > 0) {
        mr_grid g;
        for (int a = 0; a < 3; a++) {
            g.n[a] = o->grid_n[a];
            g.center[a] = g.n[a] / 2;
            g.scale[a] = g.n[a];
        }
        (void)mr_gpu_sums_layout(&g, s->m, s->engine, cap, &d->nchunks, &work);
    }
    const int64_t chunk = ((s->m + d->nchunks - 1) / d->nchunks + MR_GEMM_SAMPLE_ALIGN - 1) / MR_GEMM_SAMPLE_ALIGN *
                          MR_GEMM_SAMPLE_ALIGN;
    d->nchunks = (int)((s->m + chunk - 1) / chunk);
    for (int c = 0; c <= d->nchunks; c++)
        d->chunk0[c] = (int64_t)c * chunk < s->m ? (int64_t)c * chunk : s->m;
    mr_gemm_opts go;
    mr_gemm_opts_default(&go);
    go.device = d->device;
    go.max_columns = o->gemm_max_columns;
    go.split_samples = o->gemm_split_samples;
    go.max_work_bytes = work;
    for (int c = 0; c < d->nchunks && st == MR_OK; c++)
        st = mr_gemm_create(&d->gp[c], traj + 3 * d->chunk0[c], d->chunk0[c + 1] - d->chunk0[c], &go);
    if (st == MR_OK && d->nchunks > 1)
        mr_log(MR_LOG_DEBUG, "GPU sums: GPU %d: %lld samples in %d chunks of %lld (memory cap %.2f GB, work %.2f GB)",
               d->device, (long long)s->m, d->nchunks, (long long)chunk, cap * 1e-9, work * 1e-9);
    return st;
}

mr_status mr_gpu_sums_create(mr_gpu_sums **out, mr_gpu_ctx *c, const float *traj, int64_t m,
                             const mr_gpu_sums_opts *o)
{
    if (!out)
        return mr_error(MR_EINVAL, "mr_gpu_sums_create: out is NULL");
    *out = NULL;
    if (!c || !traj || !o || m < 1)
        return mr_error(MR_EINVAL, "mr_gpu_sums_create: need a context, a trajectory of M >= 1 samples and options");
    const int main_dev = mr_gpu_ctx_device(c);
    const int nd = o->devices ? o->ndevices : 1;
    if (nd < 1 || nd > MR_SUMS_MAX_PARTS || (o->devices && o->devices[0] != main_dev))
        return mr_error(MR_EINVAL, "GPU sums: %d devices listed, the first %d (need 1..%d, the first the context's "
                                   "GPU %d)",
                        nd, o->devices ? o->devices[0] : -1, MR_SUMS_MAX_PARTS, main_dev);
    if (o->engine < MR_SUMS_SFU || o->engine > MR_SUMS_FP16X3)
        return mr_error(MR_EINVAL, "GPU sums: unknown engine %d", (int)o->engine);
    mr_gpu_sums *s = (mr_gpu_sums *)calloc(1, sizeof *s);
    if (!s)
        return mr_error(MR_ENOMEM, "GPU sums: out of host memory");
    s->c = c;
    s->main_dev = main_dev;
    s->engine = o->engine;
    s->exact_trig = o->exact_trig;
    s->m = m;
    s->nparts = nd;
    for (int i = 0; i < MR_SUMS_MAX_PARTS; i++)
        s->dev[i].device = -1;
    /* one slot per distinct GPU, the main one first; each remembers its parts */
    for (int p = 0; p < nd; p++) {
        const int dv = o->devices ? o->devices[p] : main_dev;
        int k = 0;
        while (k < s->ndev && s->dev[k].device != dv)
            k++;
        if (k == s->ndev)
            s->dev[s->ndev++].device = dv;
        s->dev[k].parts[s->dev[k].nparts++] = p;
    }
    mr_status st = MR_OK;
    for (int k = 0; k < s->ndev && st == MR_OK; k++)
        st = dev_setup(s, &s->dev[k], traj, o);
    const mr_status back = MR_CU(cudaSetDevice(main_dev));
    if (st == MR_OK)
        st = back;
    if (st != MR_OK) {
        mr_gpu_sums_destroy(s);
        return st;
    }
    *out = s;
    return MR_OK;
}

int mr_gpu_sums_parts(const mr_gpu_sums *s) { return s ? s->nparts : 0; }

void mr_gpu_sums_describe(const mr_gpu_sums *s, const mr_grid *g, int real_weights, char *buf, size_t size)
{
    if (s->engine != MR_SUMS_SFU) {
        snprintf(buf, size, "gpu %s", mr_gemm_adjoint_kernel(s->dev[0].gp[0], gemm_prec(s))); /* the main GPU's */
        return;
    }
    const mr_gpu_variant v = s->exact_trig ? MR_GPU_CONSTANT : mr_gpu_variant_for_grid(s->main_dev, g, real_weights);
    mr_gpu_config cfg;
    mr_gpu_variant_config(v, real_weights, &cfg);
    snprintf(buf, size, "gpu sfu T%d C%d U%d V%d%s m%d", cfg.threads, cfg.chunk, cfg.unroll, cfg.voxels,
             cfg.rotate ? "rot" : "", cfg.mode);
}

void mr_gpu_sums_trim(mr_gpu_sums *s)
{
    if (!s)
        return;
    for (int k = 0; k < s->ndev; k++) {
        sums_dev *d = &s->dev[k];
        (void)cudaSetDevice(d->device);
        for (int c = 0; c < d->nchunks; c++)
            mr_gemm_release(d->gp[c]);
        if (d->d_acc)
            (void)cudaFree(d->d_acc);
        d->d_acc = NULL;
        d->acc_bytes = 0;
        if (d->d_part)
            (void)cudaFree(d->d_part);
        d->d_part = NULL;
        d->part_bytes = 0;
        (void)cudaGetLastError();
    }
    (void)cudaSetDevice(s->main_dev);
}

/* ---- the adjoint ------------------------------------------------------------------------------------ */

static int cmp_i64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The planes of part p, ascending. GEMM: the mirror-closed balanced lists; kernels: a z slab. */
static mr_status part_planes(const mr_gpu_sums *s, sums_dev *d, int p, int64_t *np)
{
    const mr_grid *g = s->g;
    const int64_t nz = g->n[2];
    if (d->planes_cap < nz) {
        free(d->planes);
        d->planes = (int64_t *)malloc((size_t)nz * sizeof(int64_t));
        d->planes_cap = d->planes ? nz : 0;
        if (!d->planes)
            return mr_error(MR_ENOMEM, "GPU sums: out of host memory");
    }
    if (s->nparts == 1 || s->engine == MR_SUMS_SFU) {
        const int64_t z0 = nz * p / s->nparts, z1 = nz * (p + 1) / s->nparts;
        for (int64_t z = z0; z < z1; z++)
            d->planes[z - z0] = z;
        *np = z1 - z0;
        return MR_OK;
    }
    mr_status st = mr_gemm_plane_split(g, s->real, s->nparts, p, d->planes, np);
    if (st == MR_OK)
        qsort(d->planes, (size_t)*np, sizeof(int64_t), cmp_i64);
    return st;
}

__global__ void k_add_f32(long long n, float *dst, const float *src)
{
    MR_GRID_STRIDE(i, n) dst[i] += src[i];
}

__global__ void k_add_f64(long long n, double *dst, const double *src)
{
    MR_GRID_STRIDE(i, n) dst[i] += src[i];
}

/* The GEMM sum of a part's planes over every chunk of samples into dst (bytes): chunk 0 into dst, each
 * later one into d_acc and added; with several chunks each chunk's tables are freed after its turn, so
 * one chunk's tables are held at a time. */
static mr_status chunked_adjoint(mr_gpu_sums *s, sums_dev *d, const float *a, const int64_t *pl, int64_t np,
                                 char *dst, size_t bytes)
{
    const mr_gemm_type ot = s->es == 16 ? MR_GEMM_F64 : MR_GEMM_F32;
    mr_status st = MR_OK;
    for (int c = 0; c < d->nchunks && st == MR_OK; c++) {
        const float *ac = a + (s->real ? 1 : 2) * d->chunk0[c];
        char *out = dst;
        if (c > 0) {
            if ((st = mr_gpu_grow((void **)&d->d_acc, &d->acc_bytes, bytes)) != MR_OK)
                return st;
            out = d->d_acc;
        }
        st = mr_gemm_adjoint_planes_dev(d->gp[c], s->g, gemm_prec(s), ac, s->real, pl, np, out, ot);
        if (st == MR_OK && c > 0) { /* the plan's stream is synchronised: add on the default stream and wait */
            const long long n = (long long)(bytes / (ot == MR_GEMM_F64 ? sizeof(double) : sizeof(float)));
            if (ot == MR_GEMM_F64)
                k_add_f64<<<mr_gpu_blocks(n), MR_GPU_THREADS>>>(n, (double *)dst, (const double *)out);
            else
                k_add_f32<<<mr_gpu_blocks(n), MR_GPU_THREADS>>>(n, (float *)dst, (const float *)out);
            st = MR_CU(cudaGetLastError());
            if (st == MR_OK)
                st = MR_CU(cudaDeviceSynchronize());
        }
        if (d->nchunks > 1)
            mr_gemm_release(d->gp[c]);
    }
    return st;
}

/* One part on d's GPU: compute its planes (ascending) and put them in place in s->d_out. */
static mr_status run_part(mr_gpu_sums *s, sums_dev *d, int p)
{
    const mr_grid *g = s->g;
    int64_t np = 0;
    mr_status st = part_planes(s, d, p, &np);
    if (st != MR_OK || np == 0)
        return st;
    const int64_t *pl = d->planes;
    const size_t plane = (size_t)(g->n[0] * g->n[1]) * s->es;
    const int is_main = d->device == s->main_dev;
    const int one_run = pl[np - 1] - pl[0] == np - 1;
    const float *a = is_main ? s->d_a : d->d_a;
    /* part 0 (on the main GPU) writes a single run straight into its place; every other part goes
     * through d_part and a peer copy, also a part of the main GPU listed again (so that a list like
     * gpu:0,0 takes the gather path of several GPUs on one) */
    char *dst = one_run && is_main && p == 0 ? s->d_out + (size_t)pl[0] * plane : NULL;
    if (!dst) {
        if ((st = mr_gpu_grow((void **)&d->d_part, &d->part_bytes, (size_t)np * plane)) != MR_OK)
            return st;
        dst = d->d_part;
    }
    if (s->engine == MR_SUMS_SFU) { /* slab [pl[0], pl[0] + np) as a grid of its own */
        mr_grid sub = *g;
        sub.n[2] = np;
        sub.center[2] = g->center[2] - pl[0];
        st = mr_gpu_nudft_adjoint_dev(d->gn, d->ctx, &sub, a, s->real, (float *)dst, s->rung);
    } else {
        st = chunked_adjoint(s, d, a, pl, np, dst, (size_t)np * plane);
    }
    if (st != MR_OK || dst != d->d_part)
        return st;
    /* the runs of consecutive planes to their place on the main GPU */
    cudaStream_t cs = mr_gpu_ctx_stream(d->ctx);
    for (int64_t i = 0; i < np && st == MR_OK;) {
        int64_t j = i + 1;
        while (j < np && pl[j] == pl[j - 1] + 1)
            j++;
        st = MR_CU(cudaMemcpyPeerAsync(s->d_out + (size_t)pl[i] * plane, s->main_dev, d->d_part + (size_t)i * plane,
                                       d->device, (size_t)(j - i) * plane, cs));
        i = j;
    }
    if (st == MR_OK)
        st = MR_CU(cudaStreamSynchronize(cs));
    return st;
}

/* Everything one GPU does in a call: the weights to it (other GPUs), then its parts. */
static void run_dev(mr_gpu_sums *s, sums_dev *d)
{
    mr_status st = MR_CU(cudaSetDevice(d->device));
    if (st == MR_OK && d->device != s->main_dev) {
        const size_t ab = (size_t)s->m * (s->real ? 1 : 2) * sizeof(float);
        if ((st = mr_gpu_grow((void **)&d->d_a, &d->a_bytes, ab)) == MR_OK) {
            cudaStream_t cs = mr_gpu_ctx_stream(d->ctx);
            st = MR_CU(cudaMemcpyPeerAsync(d->d_a, d->device, s->d_a, s->main_dev, ab, cs));
            if (st == MR_OK)
                st = MR_CU(cudaStreamSynchronize(cs));
        }
    }
    for (int i = 0; i < d->nparts && st == MR_OK; i++)
        st = run_part(s, d, d->parts[i]);
    d->st = st;
    if (st != MR_OK)
        snprintf(d->err, sizeof d->err, "GPU %d: %s", d->device, mr_last_error());
}

static void *run_dev_thread(void *arg)
{
    void **pair = (void **)arg;
    run_dev((mr_gpu_sums *)pair[0], (sums_dev *)pair[1]);
    return NULL;
}

mr_status mr_gpu_sums_adjoint(mr_gpu_sums *s, const mr_grid *g, const float *d_a, int real_weights, void *d_out,
                              mr_gemm_type out_type)
{
    if (!s || !g || !d_a || !d_out)
        return mr_error(MR_EINVAL, "mr_gpu_sums_adjoint: NULL argument");
    if (out_type == MR_GEMM_F64 && s->engine == MR_SUMS_SFU)
        return mr_error(MR_EINVAL, "GPU sums: the sfu kernels write float output, not double");
    if (out_type != MR_GEMM_F32 && out_type != MR_GEMM_F64)
        return mr_error(MR_EINVAL, "GPU sums: unknown output type %d", (int)out_type);
    mr_status st = MR_CU(cudaSetDevice(s->main_dev));
    if (st == MR_OK)
        st = mr_gpu_ctx_sync(s->c); /* d_a is complete */
    if (st != MR_OK)
        return st;
    s->g = g;
    s->d_a = d_a;
    s->real = real_weights ? 1 : 0;
    s->d_out = (char *)d_out;
    s->es = out_type == MR_GEMM_F64 ? 2 * sizeof(double) : 2 * sizeof(float);
    s->rung = s->exact_trig ? MR_GPU_CONSTANT : mr_gpu_variant_for_grid(s->main_dev, g, s->real);
    pthread_t th[MR_SUMS_MAX_PARTS];
    void *args[MR_SUMS_MAX_PARTS][2];
    int started[MR_SUMS_MAX_PARTS] = {0};
    for (int k = 1; k < s->ndev; k++) {
        args[k][0] = s;
        args[k][1] = &s->dev[k];
        started[k] = pthread_create(&th[k], NULL, run_dev_thread, args[k]) == 0;
        if (!started[k]) /* no thread: run it here afterwards */
            s->dev[k].st = MR_EINTERNAL;
    }
    run_dev(s, &s->dev[0]);
    for (int k = 1; k < s->ndev; k++) {
        if (started[k])
            pthread_join(th[k], NULL);
        else
            run_dev(s, &s->dev[k]);
    }
    (void)cudaSetDevice(s->main_dev);
    for (int k = 0; k < s->ndev; k++)
        if (s->dev[k].st != MR_OK)
            return mr_gpu_ctx_fail(s->c, mr_error(s->dev[k].st, "%s", s->dev[k].err));
    return MR_OK;
}

/* ---- the forward ------------------------------------------------------------------------------------- */

mr_status mr_gpu_sums_forward(mr_gpu_sums *s, const mr_grid *g, const float *d_x, float *d_out)
{
    if (!s || !g || !d_x || !d_out)
        return mr_error(MR_EINVAL, "mr_gpu_sums_forward: NULL argument");
    sums_dev *d = &s->dev[0];
    if (s->engine == MR_SUMS_SFU)
        return mr_gpu_nudft_forward_dev(d->gn, s->c, g, d_x, d_out, s->exact_trig);
    mr_status st = MR_CU(cudaSetDevice(s->main_dev));
    if (st == MR_OK)
        st = mr_gpu_ctx_sync(s->c); /* d_x is complete */
    for (int c = 0; c < d->nchunks && st == MR_OK; c++) {
        st = mr_gemm_forward_dev(d->gp[c], g, gemm_prec(s), d_x, 0, d->chunk0[c + 1] - d->chunk0[c],
                                 d_out + 2 * d->chunk0[c], MR_GEMM_F32);
        if (d->nchunks > 1)
            mr_gemm_release(d->gp[c]);
    }
    return st == MR_OK ? MR_OK : mr_gpu_ctx_fail(s->c, st);
}
