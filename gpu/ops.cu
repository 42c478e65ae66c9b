/* The device context, device memory, the vector operations of solver/vecops.h and the voxel-wise
 * operators (gpu_ops.h). Every kernel is a grid-stride loop with 256 threads per block on the
 * context's stream. Reductions (dot, norm, mag_dist2) accumulate in double: each thread over its
 * elements, then a block tree in shared memory, then the (fixed number of) block sums on the host,
 * so the result does not depend on timing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"
#include "cuda_check.h"
#include "gpu.h"
#include "gpu_internal.h"

#define MR_RED_BLOCKS 512

struct mr_gpu_ctx {
    int device;
    cudaStream_t s;
    double *d_part; /* [MR_RED_BLOCKS][2] block sums */
    double *h_part; /* pinned copy */
    mr_status err;  /* first failure */
    char msg[512];
};

cudaStream_t mr_gpu_ctx_stream(const mr_gpu_ctx *c) { return c->s; }

mr_status mr_gpu_ctx_fail(mr_gpu_ctx *c, mr_status st)
{
    if (st != MR_OK && c->err == MR_OK) {
        c->err = st;
        snprintf(c->msg, sizeof c->msg, "%s", mr_last_error());
    }
    return st;
}

mr_status mr_gpu_ctx_launched(mr_gpu_ctx *c, const char *what)
{
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess)
        return MR_OK;
    return mr_gpu_ctx_fail(c, mr_error(MR_ECUDA, "GPU %d: %s: %s (%s)", c->device, what, cudaGetErrorName(e),
                                       cudaGetErrorString(e)));
}

mr_status mr_gpu_ctx_create(mr_gpu_ctx **out, int device)
{
    *out = NULL;
    const int n = mr_gpu_count();
    if (device < 0 || device >= n)
        return mr_error(MR_ENODEV, "GPU %d is not usable (%d CUDA devices found)", device, n);
    mr_gpu_ctx *c = (mr_gpu_ctx *)calloc(1, sizeof *c);
    if (!c)
        return mr_error(MR_ENOMEM, "GPU context: out of host memory");
    c->device = device;
    mr_status st = MR_CU(cudaSetDevice(device));
    if (st == MR_OK)
        st = MR_CU(cudaFree(0)); /* create the CUDA context now, not inside the first timed call */
    if (st == MR_OK)
        st = MR_CU(cudaStreamCreateWithFlags(&c->s, cudaStreamNonBlocking));
    if (st == MR_OK)
        st = MR_CU(cudaMalloc((void **)&c->d_part, MR_RED_BLOCKS * 2 * sizeof(double)));
    if (st == MR_OK)
        st = MR_CU(cudaMallocHost((void **)&c->h_part, MR_RED_BLOCKS * 2 * sizeof(double)));
    if (st != MR_OK) {
        mr_gpu_ctx_destroy(c);
        return st;
    }
    *out = c;
    return MR_OK;
}

void mr_gpu_ctx_destroy(mr_gpu_ctx *c)
{
    if (!c)
        return;
    (void)cudaSetDevice(c->device);
    if (c->s) {
        (void)cudaStreamSynchronize(c->s);
        (void)cudaStreamDestroy(c->s);
    }
    if (c->d_part)
        (void)cudaFree(c->d_part);
    if (c->h_part)
        (void)cudaFreeHost(c->h_part);
    (void)cudaGetLastError();
    free(c);
}

int mr_gpu_ctx_device(const mr_gpu_ctx *c) { return c ? c->device : -1; }

mr_status mr_gpu_ctx_status(mr_gpu_ctx *c)
{
    if (c->err == MR_OK) {
        cudaError_t e = cudaStreamQuery(c->s); /* a failed kernel shows here without waiting */
        if (e != cudaSuccess && e != cudaErrorNotReady)
            mr_gpu_ctx_fail(c, mr_error(MR_ECUDA, "GPU %d: asynchronous failure: %s (%s)", c->device,
                                        cudaGetErrorName(e), cudaGetErrorString(e)));
    }
    if (c->err != MR_OK)
        return mr_error(c->err, "%s", c->msg);
    return MR_OK;
}

mr_status mr_gpu_ctx_sync(mr_gpu_ctx *c)
{
    mr_status st = MR_CU(cudaStreamSynchronize(c->s));
    if (st != MR_OK)
        return mr_gpu_ctx_fail(c, st);
    return mr_gpu_ctx_status(c);
}

mr_status mr_gpu_memory(int device, int64_t *free_bytes, int64_t *total_bytes)
{
    size_t fr = 0, tot = 0;
    int prev = -1;
    (void)cudaGetDevice(&prev);
    mr_status st = MR_CU(cudaSetDevice(device));
    if (st == MR_OK)
        st = MR_CU(cudaMemGetInfo(&fr, &tot));
    if (prev >= 0)
        (void)cudaSetDevice(prev);
    *free_bytes = (int64_t)fr;
    *total_bytes = (int64_t)tot;
    return st;
}

float *mr_gpu_alloc(mr_gpu_ctx *c, int64_t nfloats)
{
    void *p = NULL;
    mr_status st = MR_CU(cudaSetDevice(c->device));
    if (st == MR_OK)
        st = MR_CU(cudaMalloc(&p, (size_t)(nfloats > 0 ? nfloats : 1) * sizeof(float)));
    if (st != MR_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", mr_last_error());
        mr_error(st, "GPU %d: cannot allocate %.1f MiB: %s", c->device, (double)nfloats * 4.0 / 1048576.0, why);
        if (st != MR_ENOMEM) /* out of memory leaves the device usable; anything else does not */
            mr_gpu_ctx_fail(c, st);
        return NULL;
    }
    return (float *)p;
}

void mr_gpu_free(mr_gpu_ctx *c, void *p)
{
    if (!p)
        return;
    (void)c;
    if (cudaFree(p) != cudaSuccess)
        (void)cudaGetLastError();
}

/* A copy in either direction on the stream, waited for (from any host thread: the device is set first). */
static mr_status copy_wait(mr_gpu_ctx *c, void *dst, const void *src, int64_t nfloats, cudaMemcpyKind kind)
{
    mr_status st = MR_CU(cudaSetDevice(c->device));
    if (st == MR_OK)
        st = MR_CU(cudaMemcpyAsync(dst, src, (size_t)nfloats * sizeof(float), kind, c->s));
    if (st == MR_OK)
        st = MR_CU(cudaStreamSynchronize(c->s));
    return mr_gpu_ctx_fail(c, st);
}

mr_status mr_gpu_upload(mr_gpu_ctx *c, float *dev_dst, const float *host_src, int64_t nfloats)
{
    return copy_wait(c, dev_dst, host_src, nfloats, cudaMemcpyHostToDevice);
}

mr_status mr_gpu_download(mr_gpu_ctx *c, float *host_dst, const float *dev_src, int64_t nfloats)
{
    return copy_wait(c, host_dst, dev_src, nfloats, cudaMemcpyDeviceToHost);
}

/* ---- vector operations ------------------------------------------------------------------------- */

/* Block tree in shared memory: s[0..MR_GPU_THREADS) -> s[0]. */
__device__ void block_sum(double *s)
{
    __syncthreads();
    for (int w = MR_GPU_THREADS / 2; w > 0; w >>= 1) {
        if ((int)threadIdx.x < w)
            s[threadIdx.x] += s[threadIdx.x + w];
        __syncthreads();
    }
}

/* The terms of the reductions: each adds its element i to (a, b). */
struct dot_term { /* sum conj(x) y */
    const float2 *x, *y;
    __device__ void operator()(long long i, double &a, double &b) const
    {
        const float2 u = x[i], v = y[i];
        a += (double)u.x * v.x + (double)u.y * v.y;
        b += (double)u.x * v.y - (double)u.y * v.x;
    }
};
struct norm2_term { /* sum |x|^2 */
    const float2 *x;
    __device__ void operator()(long long i, double &a, double &) const
    {
        const float2 u = x[i];
        a += (double)u.x * u.x + (double)u.y * u.y;
    }
};
struct mag_dist2_term { /* sum (|x| - |y|)^2 */
    const float2 *x, *y;
    __device__ void operator()(long long i, double &a, double &) const
    {
        const float2 u = x[i], v = y[i];
        const double d = hypot((double)u.x, (double)u.y) - hypot((double)v.x, (double)v.y);
        a += d * d;
    }
};
template <int OP> struct ewise_term { /* the reductions of base/ewise.h */
    long long n;
    const float *x;
    mr_ew_args args;
    __device__ void operator()(long long i, double &a, double &) const { a += mr_ew_term(OP, i, n, x, &args); }
};

template <class Term> __global__ void k_reduce(long long n, Term term, double *part)
{
    __shared__ double s0[MR_GPU_THREADS], s1[MR_GPU_THREADS];
    double a = 0, b = 0;
    MR_GRID_STRIDE(i, n)
    {
        term(i, a, b);
    }
    s0[threadIdx.x] = a;
    s1[threadIdx.x] = b;
    block_sum(s0);
    block_sum(s1);
    if (threadIdx.x == 0) {
        part[2 * blockIdx.x] = s0[0];
        part[2 * blockIdx.x + 1] = s1[0];
    }
}

/* Launch a reduction over n terms and add the block sums on the host; NaN (and a recorded failure) on
 * error. */
template <class Term> static void reduce(mr_gpu_ctx *c, int64_t n, Term term, double out[2])
{
    out[0] = out[1] = NAN;
    if (c->err != MR_OK)
        return;
    long long b = ((long long)n + MR_GPU_THREADS - 1) / MR_GPU_THREADS;
    const unsigned blocks = (unsigned)(b < 1 ? 1 : (b > MR_RED_BLOCKS ? MR_RED_BLOCKS : b));
    k_reduce<Term><<<blocks, MR_GPU_THREADS, 0, c->s>>>((long long)n, term, c->d_part);
    if (mr_gpu_ctx_launched(c, "reduction") != MR_OK)
        return;
    mr_status st = MR_CU(cudaMemcpyAsync(c->h_part, c->d_part, blocks * 2 * sizeof(double), cudaMemcpyDeviceToHost, c->s));
    if (st == MR_OK)
        st = MR_CU(cudaStreamSynchronize(c->s));
    if (mr_gpu_ctx_fail(c, st) != MR_OK)
        return;
    double a = 0, bb = 0;
    for (unsigned i = 0; i < blocks; i++) {
        a += c->h_part[2 * i];
        bb += c->h_part[2 * i + 1];
    }
    out[0] = a;
    out[1] = bb;
}

/* The maps of base/ewise.h: one kernel, instantiated per map. */
template <int OP>
__global__ void k_ewise(long long n, float *out, const float *x, const float *y, mr_ew_args args)
{
    MR_GRID_STRIDE(i, n)
    {
        mr_ew_apply(OP, i, n, out, x, y, &args);
    }
}

void mr_gpu_vec_ewise(mr_gpu_ctx *c, mr_ew_op op, int64_t n, float *out, const float *x, const float *y,
                      const mr_ew_args *args)
{
    switch (op) {
#define MR_EW_LAUNCH(name)                                                                                   \
    case MR_EW_##name:                                                                                         \
        k_ewise<MR_EW_##name><<<mr_gpu_blocks(n), MR_GPU_THREADS, 0, c->s>>>((long long)n, out, x, y, *args);  \
        break;
        MR_EW_MAPS(MR_EW_LAUNCH)
#undef MR_EW_LAUNCH
    default:
        mr_gpu_ctx_fail(c, mr_error(MR_EINTERNAL, "GPU %d: element-wise map %d does not exist", c->device, (int)op));
        return;
    }
    mr_gpu_ctx_launched(c, "element-wise map");
}

double mr_gpu_vec_ewise_reduce(mr_gpu_ctx *c, mr_ewr_op op, int64_t n, const float *x, const mr_ew_args *args)
{
    double r[2] = {NAN, NAN};
    switch (op) {
#define MR_EWR_LAUNCH(name)                                                                                  \
    case MR_EWR_##name:                                                                                        \
        reduce(c, n, ewise_term<MR_EWR_##name>{(long long)n, x, *args}, r);                                     \
        break;
        MR_EW_REDUCTIONS(MR_EWR_LAUNCH)
#undef MR_EWR_LAUNCH
    default:
        mr_gpu_ctx_fail(c, mr_error(MR_EINTERNAL, "GPU %d: element-wise reduction %d does not exist", c->device,
                                    (int)op));
    }
    return r[0];
}

void mr_gpu_vec_zero(mr_gpu_ctx *c, int64_t n, float *x)
{
    mr_gpu_ctx_fail(c, MR_CU(cudaMemsetAsync(x, 0, (size_t)n * 2 * sizeof(float), c->s)));
}

void mr_gpu_vec_copy(mr_gpu_ctx *c, int64_t n, float *dst, const float *src)
{
    if (dst != src)
        mr_gpu_ctx_fail(c, MR_CU(cudaMemcpyAsync(dst, src, (size_t)n * 2 * sizeof(float), cudaMemcpyDeviceToDevice,
                                                 c->s)));
}

void mr_gpu_vec_dot(mr_gpu_ctx *c, int64_t n, const float *x, const float *y, double out[2])
{
    reduce(c, n, dot_term{(const float2 *)x, (const float2 *)y}, out);
}

double mr_gpu_vec_norm(mr_gpu_ctx *c, int64_t n, const float *x)
{
    double r[2];
    reduce(c, n, norm2_term{(const float2 *)x}, r);
    return sqrt(r[0]);
}

double mr_gpu_vec_mag_dist2(mr_gpu_ctx *c, int64_t n, const float *x, const float *t)
{
    double r[2];
    reduce(c, n, mag_dist2_term{(const float2 *)x, (const float2 *)t}, r);
    return r[0];
}

/* ---- voxel-wise operators ---------------------------------------------------------------------- */

__global__ void k_scale_rows(long long m, long long batch, const float *s, const float2 *in, float2 *out)
{
    MR_GRID_STRIDE(i, m * batch)
    {
        const float f = s[i % m];
        const float2 v = in[i];
        out[i] = make_float2(f * v.x, f * v.y);
    }
}

mr_status mr_gpu_scale_rows(mr_gpu_ctx *c, int64_t m, int64_t batch, const float *s, const float *in, float *out)
{
    k_scale_rows<<<mr_gpu_blocks(m * batch), MR_GPU_THREADS, 0, c->s>>>((long long)m, (long long)batch, s,
                                                                       (const float2 *)in, (float2 *)out);
    return mr_gpu_ctx_launched(c, "per-sample scaling");
}

__global__ void k_sens_forward(long long n, long long nc, const float2 *S, const float2 *x, float2 *y)
{
    MR_GRID_STRIDE(v, n)
    {
        const float2 u = x[v];
        for (long long c = 0; c < nc; c++) {
            const float2 s = S[c * n + v];
            y[c * n + v] = make_float2(s.x * u.x - s.y * u.y, s.x * u.y + s.y * u.x);
        }
    }
}

__global__ void k_sens_adjoint(long long n, long long nc, const float2 *S, const float2 *y, float2 *x)
{
    MR_GRID_STRIDE(v, n)
    {
        float re = 0, im = 0;
        for (long long c = 0; c < nc; c++) {
            const float2 s = S[c * n + v], u = y[c * n + v];
            re += s.x * u.x + s.y * u.y;
            im += s.x * u.y - s.y * u.x;
        }
        x[v] = make_float2(re, im);
    }
}

__global__ void k_sens_normal(long long n, long long nc, const float2 *S, const float2 *x, float2 *y)
{
    MR_GRID_STRIDE(v, n)
    {
        float s2 = 0;
        for (long long c = 0; c < nc; c++) {
            const float2 s = S[c * n + v];
            s2 += s.x * s.x + s.y * s.y;
        }
        const float2 u = x[v];
        y[v] = make_float2(s2 * u.x, s2 * u.y);
    }
}

mr_status mr_gpu_sens_forward(mr_gpu_ctx *c, int64_t n, int64_t ncoils, const float *maps, const float *x, float *y)
{
    k_sens_forward<<<mr_gpu_blocks(n), MR_GPU_THREADS, 0, c->s>>>(n, ncoils, (const float2 *)maps, (const float2 *)x,
                                                                   (float2 *)y);
    return mr_gpu_ctx_launched(c, "sensitivity forward");
}

mr_status mr_gpu_sens_adjoint(mr_gpu_ctx *c, int64_t n, int64_t ncoils, const float *maps, const float *y, float *x)
{
    k_sens_adjoint<<<mr_gpu_blocks(n), MR_GPU_THREADS, 0, c->s>>>(n, ncoils, (const float2 *)maps, (const float2 *)y,
                                                                   (float2 *)x);
    return mr_gpu_ctx_launched(c, "sensitivity adjoint");
}

mr_status mr_gpu_sens_normal(mr_gpu_ctx *c, int64_t n, int64_t ncoils, const float *maps, const float *x, float *y)
{
    k_sens_normal<<<mr_gpu_blocks(n), MR_GPU_THREADS, 0, c->s>>>(n, ncoils, (const float2 *)maps, (const float2 *)x,
                                                                  (float2 *)y);
    return mr_gpu_ctx_launched(c, "sensitivity normal");
}

/* Finite differences: the active axes (N_a > 1) in x, y, z order. */
struct mr_fd_geom {
    long long n[3], stride[3], total;
    int axes[3], na;
};

static mr_fd_geom fd_geom(const int64_t m[3])
{
    mr_fd_geom g;
    const long long s[3] = {1, (long long)m[0], (long long)(m[0] * m[1])};
    g.na = 0;
    for (int a = 0; a < 3; a++) {
        g.n[a] = m[a];
        if (m[a] > 1) {
            g.axes[g.na] = a;
            g.stride[g.na++] = s[a];
        }
    }
    g.total = (long long)(m[0] * m[1] * m[2]);
    return g;
}

__device__ __forceinline__ void fd_index(const mr_fd_geom &g, long long v, long long idx[3])
{
    idx[0] = v % g.n[0];
    idx[1] = (v / g.n[0]) % g.n[1];
    idx[2] = v / (g.n[0] * g.n[1]);
}

__global__ void k_fd_forward(mr_fd_geom g, const float2 *x, float2 *out)
{
    MR_GRID_STRIDE(v, g.total)
    {
        long long idx[3];
        fd_index(g, v, idx);
        const float2 u = x[v];
        for (int k = 0; k < g.na; k++) {
            const int a = g.axes[k];
            float2 d = make_float2(0.0f, 0.0f);
            if (idx[a] < g.n[a] - 1) {
                const float2 w = x[v + g.stride[k]];
                d = make_float2(w.x - u.x, w.y - u.y);
            }
            out[k * g.total + v] = d;
        }
        if (g.na == 0)
            out[v] = make_float2(0.0f, 0.0f);
    }
}

__global__ void k_fd_adjoint(mr_fd_geom g, const float2 *gr, float2 *x)
{
    MR_GRID_STRIDE(v, g.total)
    {
        long long idx[3];
        fd_index(g, v, idx);
        float re = 0, im = 0;
        for (int k = 0; k < g.na; k++) {
            const int a = g.axes[k];
            const float2 *gk = gr + k * g.total;
            if (idx[a] > 0) {
                re += gk[v - g.stride[k]].x;
                im += gk[v - g.stride[k]].y;
            }
            if (idx[a] < g.n[a] - 1) {
                re -= gk[v].x;
                im -= gk[v].y;
            }
        }
        x[v] = make_float2(re, im);
    }
}

/* (R^H R x)_n = sum_a [x_n - x_{n-1} if n_a > 0] + [x_n - x_{n+1} if n_a < N_a - 1], in double like the host */
__global__ void k_fd_normal(mr_fd_geom g, const float2 *x, float2 *y)
{
    MR_GRID_STRIDE(v, g.total)
    {
        long long idx[3];
        fd_index(g, v, idx);
        const float2 u = x[v];
        double re = 0, im = 0;
        for (int k = 0; k < g.na; k++) {
            const int a = g.axes[k];
            if (idx[a] > 0) {
                re += (double)u.x - x[v - g.stride[k]].x;
                im += (double)u.y - x[v - g.stride[k]].y;
            }
            if (idx[a] < g.n[a] - 1) {
                re += (double)u.x - x[v + g.stride[k]].x;
                im += (double)u.y - x[v + g.stride[k]].y;
            }
        }
        y[v] = make_float2((float)re, (float)im);
    }
}

mr_status mr_gpu_fd_forward(mr_gpu_ctx *c, const int64_t matrix[3], const float *x, float *g)
{
    const mr_fd_geom geo = fd_geom(matrix);
    k_fd_forward<<<mr_gpu_blocks(geo.total), MR_GPU_THREADS, 0, c->s>>>(geo, (const float2 *)x, (float2 *)g);
    return mr_gpu_ctx_launched(c, "finite differences");
}

mr_status mr_gpu_fd_adjoint(mr_gpu_ctx *c, const int64_t matrix[3], const float *g, float *x)
{
    const mr_fd_geom geo = fd_geom(matrix);
    k_fd_adjoint<<<mr_gpu_blocks(geo.total), MR_GPU_THREADS, 0, c->s>>>(geo, (const float2 *)g, (float2 *)x);
    return mr_gpu_ctx_launched(c, "finite differences adjoint");
}

mr_status mr_gpu_fd_normal(mr_gpu_ctx *c, const int64_t matrix[3], const float *x, float *y)
{
    const mr_fd_geom geo = fd_geom(matrix);
    k_fd_normal<<<mr_gpu_blocks(geo.total), MR_GPU_THREADS, 0, c->s>>>(geo, (const float2 *)x, (float2 *)y);
    return mr_gpu_ctx_launched(c, "finite differences normal");
}

mr_status mr_gpu_grow(void **p, size_t *bytes, size_t want)
{
    if (*bytes >= want)
        return MR_OK;
    if (*p)
        (void)cudaFree(*p);
    *p = NULL;
    *bytes = 0;
    mr_status st = MR_CU(cudaMalloc(p, want ? want : 1));
    if (st == MR_OK)
        *bytes = want;
    return st;
}

mr_status mr_gpu_fetch(int device, float *host_dst, const float *dev_src, int64_t nfloats)
{
    cudaStream_t s = NULL;
    mr_status st = MR_CU(cudaSetDevice(device));
    if (st == MR_OK)
        st = MR_CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    if (st == MR_OK)
        st = MR_CU(cudaMemcpyAsync(host_dst, dev_src, (size_t)nfloats * sizeof(float), cudaMemcpyDeviceToHost, s));
    if (st == MR_OK)
        st = MR_CU(cudaStreamSynchronize(s));
    if (s)
        (void)cudaStreamDestroy(s);
    return st;
}
