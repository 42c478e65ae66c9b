/* The CUDA backend of the exact adjoint NUDFT (gpu/gpu.h): Q on the 2N grid and F^H d on the N grid,
 *
 *     out[v] = sum_m a_m exp(+i 2 pi k_m . r_v),
 *
 * after Kirk & Hwu ch. 8 / Stone et al. 2008: one thread per voxel (or per V consecutive voxels along
 * x), the samples streamed through __constant__ memory in chunks, coordinates and accumulators in
 * registers. One kernel template; threads per block, samples per chunk, unroll factor, voxels per
 * thread, memory/trig mode, real/complex weights and the constant buffer are its compile-time
 * parameters. The maths and the error bounds are in docs/GPU.md.
 *
 * Samples are packed on the host into one array of structs per call ("records" of float2 pairs):
 *   (kappa_x, kappa_y), (kappa_z, |a|)   kappa = k_a / scale_a (turns per voxel step), so that
 *                                       t = kappa . n with the integer offsets n_a = i_a - center_a
 *                                       held in registers; |a| the weight's magnitude
 *   [(phi, 0)]                          complex weights only: a = |a| e^{i 2 pi phi}
 *   [(u_re, u_im)]                      rotation kernels only: the step e^{i 2 pi kappa_x} along x, in
 *                                       float64 on the host (no per-thread sincos for it)
 * kappa and phi are float turns, or int32 fixed-point turns in MR_GPU_MODE_SFU_FIXED. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "../base/log.h"
#include "cuda_check.h"
#include "gpu.h"
#include "gpu_internal.h"

/* ---- device side ------------------------------------------------------------------------------- */

/* Two constant buffers (the chunk uploads alternate between them so that the upload of chunk c+1
 * overlaps the kernel on chunk c). 2 x 32000 bytes of the 64 KiB constant bank. Records are read as
 * float2 pairs (one 64-bit constant load each). */
#define MR_CBUF_PAIRS 4000
#define MR_CBUF_FLOATS (2 * MR_CBUF_PAIRS)
__constant__ float2 c_smp0[MR_CBUF_PAIRS];
__constant__ float2 c_smp1[MR_CBUF_PAIRS];

/* Record layout in float2 pairs: P0 = (kappa_x, kappa_y), P1 = (kappa_z, |a|),
 * complex: P2 = (phi, 0) with a = |a| e^{i 2 pi phi}; rotation (ROT): then (u_re, u_im). */
template <int REAL, int ROT> struct mr_layout {
    static constexpr int PAIRS = 2 + (REAL ? 0 : 1) + (ROT ? 1 : 0);
    static constexpr int U = 2 + (REAL ? 0 : 1); /* pair index of the step */
};

struct mr_kargs {
    float2 *out;        /* this pass's rows, [rows][nx] */
    const float2 *gsmp; /* MODE_GLOBAL: all records in device memory */
    int count;          /* records in this launch */
    int first;          /* 1: store, 0: add to out */
    unsigned nx, ny;    /* grid edges x, y */
    unsigned ngx;       /* voxel groups per row: ceil(nx / V) */
    unsigned ngroups;   /* groups in this pass: rows * ngx */
    unsigned row0;      /* first row (iz * ny + iy) of this pass */
    int cx, cy, cz;     /* grid centres */
};

/* The integer voxel offsets n_a = i_a - center_a of a thread's first voxel. */
struct mr_voxel {
    float fx, fy, fz; /* as floats (exact: |n| < 2^24) */
    int ix, iy, iz;   /* as integers (MODE_SFU_FIXED) */
};

template <int MODE, int BUF> __device__ __forceinline__ float2 mr_ld(const float2 *__restrict__ g, int i)
{
    if (MODE == MR_GPU_MODE_GLOBAL)
        return __ldg(g + i);
    return BUF ? c_smp1[i] : c_smp0[i];
}

/* t - rint(t) in [-1/2, 1/2] turns, exactly, by the 1.5 * 2^23 trick (two FADDs on the FMA pipe
 * instead of the slower rounding instruction); correct for |t| < 2^22 (for larger |t| float t has no
 * fraction left and the result is still t minus an integer). The _rn intrinsics keep the compiler
 * from contracting or reassociating it. */
__device__ __forceinline__ float mr_frac(float t)
{
    const float magic = 12582912.0f;
    return __fsub_rn(t, __fsub_rn(__fadd_rn(t, magic), magic));
}

/* sin and cos of 2 pi f, f in turns. */
template <int MODE> __device__ __forceinline__ void mr_cis(float f, float *s, float *c)
{
    const float two_pi = 6.28318530717958647692f;
    if (MODE == MR_GPU_MODE_GLOBAL || MODE == MR_GPU_MODE_CONST)
        sincosf(two_pi * f, s, c);
    else
        __sincosf(two_pi * f, s, c);
}

/* sin and cos of 2 pi t / 2^32 for a fixed-point phase t (int32 turns: the wrap-around of the
 * integer arithmetic is the range reduction, exactly). */
__device__ __forceinline__ void mr_cis_fixed(int t, float *s, float *c)
{
    const float scale = 6.28318530717958647692f / 4294967296.0f;
    __sincosf(__int2float_rn(t) * scale, s, c);
}

/* One sample j into the V accumulators of this thread (voxels ix0 .. ix0 + V - 1 of one row).
 * Complex weights arrive in polar form, a = |a| e^{i 2 pi phi}, with phi added to the phase, so that
 * both sums cost the same: a e^{i 2 pi t} = |a| e^{i 2 pi (t + phi)} (two FFMAs per pair, not four).
 * ROT = 0: every voxel its own range-reduced sincos (the phase of voxel v is t0 + v kappa_x);
 * ROT = 1: voxel 0 by sincos, voxel v by b_v = b_{v-1} u with u = e^{i 2 pi kappa_x}.
 * MODE_SFU_FIXED: kappa and phi are int32 fixed-point turns (2^32 = one turn) and the phase is integer
 * arithmetic modulo one turn; otherwise float turns reduced by mr_frac. */
template <int V, int ROT, int MODE, int REAL, int BUF>
__device__ __forceinline__ void mr_step(const float2 *__restrict__ g, int j, const mr_voxel &n, float *acr,
                                        float *aci)
{
    typedef mr_layout<REAL, ROT> L;
    const int b = j * L::PAIRS;
    const float2 p0 = mr_ld<MODE, BUF>(g, b), p1 = mr_ld<MODE, BUF>(g, b + 1);
    const float amag = p1.y;
    const float phi = REAL ? 0.0f : mr_ld<MODE, BUF>(g, b + 2).x;
    const bool fixed = MODE == MR_GPU_MODE_SFU_FIXED;
    /* phase of voxel 0: t0 (float turns) or it0 (fixed-point turns, unsigned so that it wraps) */
    float t0 = 0.0f;
    unsigned it0 = 0u, ikx = 0u;
    if (fixed) {
        ikx = (unsigned)__float_as_int(p0.x);
        it0 = ikx * (unsigned)n.ix + (unsigned)__float_as_int(p0.y) * (unsigned)n.iy +
              (unsigned)__float_as_int(p1.x) * (unsigned)n.iz;
        if (!REAL)
            it0 += (unsigned)__float_as_int(phi);
    } else {
        t0 = fmaf(p1.x, n.fz, fmaf(p0.y, n.fy, REAL ? p0.x * n.fx : fmaf(p0.x, n.fx, phi)));
    }
    if (!ROT) {
#pragma unroll
        for (int v = 0; v < V; v++) {
            float s, c;
            if (fixed)
                mr_cis_fixed((int)(it0 + (unsigned)v * ikx), &s, &c);
            else
                mr_cis<MODE>(mr_frac(v ? fmaf(p0.x, (float)v, t0) : t0), &s, &c);
            acr[v] = fmaf(amag, c, acr[v]);
            aci[v] = fmaf(amag, s, aci[v]);
        }
        return;
    }
    float s, c;
    if (fixed)
        mr_cis_fixed((int)it0, &s, &c);
    else
        mr_cis<MODE>(mr_frac(t0), &s, &c);
    float br = amag * c, bi = amag * s; /* a e^{i 2 pi t} */
    acr[0] += br;
    aci[0] += bi;
    const float2 u = mr_ld<MODE, BUF>(g, b + L::U);
#pragma unroll
    for (int v = 1; v < V; v++) {
        const float nr = fmaf(br, u.x, -bi * u.y);
        bi = fmaf(br, u.y, bi * u.x);
        br = nr;
        acr[v] += br;
        aci[v] += bi;
    }
}

template <int UNROLL, int V, int ROT, int MODE, int REAL, int BUF>
__device__ __forceinline__ void mr_samples(const float2 *__restrict__ g, int count, const mr_voxel &n, float *acr,
                                           float *aci)
{
    int j = 0;
#pragma unroll 1
    for (; j + UNROLL <= count; j += UNROLL) {
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            mr_step<V, ROT, MODE, REAL, BUF>(g, j + u, n, acr, aci);
    }
#pragma unroll 1
    for (; j < count; j++)
        mr_step<V, ROT, MODE, REAL, BUF>(g, j, n, acr, aci);
}

/* Grid-stride over voxel groups (a group = V consecutive voxels of one row), launched with at most
 * as many threads as are resident at once, so every launch is one balanced wave. */
template <int THREADS, int CHUNK, int UNROLL, int V, int ROT, int MODE, int REAL, int BUF>
__global__ void __launch_bounds__(THREADS) mr_nudft_kernel(const mr_kargs k)
{
    const unsigned stride = gridDim.x * THREADS;
    for (unsigned grp = blockIdx.x * THREADS + threadIdx.x; grp < k.ngroups; grp += stride) {
        const unsigned row = grp / k.ngx, xg = grp - row * k.ngx;
        const unsigned grow = k.row0 + row, iz = grow / k.ny, iy = grow - iz * k.ny;
        const unsigned ix0 = xg * V;
        mr_voxel n;
        n.ix = (int)ix0 - k.cx;
        n.iy = (int)iy - k.cy;
        n.iz = (int)iz - k.cz;
        n.fx = (float)n.ix;
        n.fy = (float)n.iy;
        n.fz = (float)n.iz;
        float acr[V], aci[V];
#pragma unroll
        for (int v = 0; v < V; v++)
            acr[v] = aci[v] = 0.0f;
        if (MODE != MR_GPU_MODE_GLOBAL && k.count == CHUNK) /* full chunk: trip count known */
            mr_samples<UNROLL, V, ROT, MODE, REAL, BUF>(k.gsmp, CHUNK, n, acr, aci);
        else
            mr_samples<UNROLL, V, ROT, MODE, REAL, BUF>(k.gsmp, k.count, n, acr, aci);
        float2 *o = k.out + (size_t)row * k.nx + ix0;
#pragma unroll
        for (int v = 0; v < V; v++) {
            if (ix0 + v < k.nx) {
                float2 r = make_float2(acr[v], aci[v]);
                if (!k.first) {
                    const float2 q = o[v];
                    r.x += q.x;
                    r.y += q.y;
                }
                o[v] = r;
            }
        }
    }
}

/* ---- the table of compiled configurations ---------------------------------------------------- */

typedef void (*mr_kfn)(const mr_kargs);

typedef struct {
    mr_gpu_config cfg;
    mr_kfn fn[2][2]; /* [real][buf] */
} mr_kentry;

#define MR_KFN(T, C, U, V, ROT, M, R, B) (mr_kfn)(mr_nudft_kernel<T, C, U, V, ROT, M, R, B>)
#define MR_KENTRY(T, C, U, V, ROT, M)                                                                \
    {                                                                                                \
        {T, C, U, V, ROT, M},                                                                        \
        {{MR_KFN(T, C, U, V, ROT, M, 0, 0), MR_KFN(T, C, U, V, ROT, M, 0, 1)},                       \
         {MR_KFN(T, C, U, V, ROT, M, 1, 0), MR_KFN(T, C, U, V, ROT, M, 1, 1)}},                      \
    }

/* The ladder's fixed rungs first, then the sweep grid (docs/BENCHMARKS.md has the measurements). */
static const mr_kentry mr_kernels[] = {
    MR_KENTRY(256, 1000, 1, 1, 0, MR_GPU_MODE_GLOBAL),
    MR_KENTRY(256, 256, 1, 1, 0, MR_GPU_MODE_CONST),
    MR_KENTRY(256, 256, 1, 1, 0, MR_GPU_MODE_SFU),
    /* one sincos per pair, V voxels per thread */
    MR_KENTRY(128, 256, 2, 4, 0, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(128, 256, 2, 8, 0, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(128, 256, 4, 4, 0, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(128, 256, 4, 8, 0, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(128, 512, 2, 4, 0, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(128, 512, 2, 8, 0, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(128, 512, 4, 4, 0, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(128, 512, 4, 8, 0, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(256, 256, 2, 4, 0, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(256, 256, 2, 8, 0, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(256, 256, 4, 4, 0, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(256, 256, 4, 8, 0, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(256, 512, 2, 4, 0, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(256, 512, 2, 8, 0, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(256, 512, 4, 4, 0, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(256, 512, 4, 8, 0, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(512, 256, 2, 4, 0, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(512, 256, 2, 8, 0, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(512, 256, 4, 4, 0, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(512, 256, 4, 8, 0, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(512, 512, 2, 4, 0, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(512, 512, 2, 8, 0, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(512, 512, 4, 4, 0, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(512, 512, 4, 8, 0, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(256, 256, 2, 4, 0, MR_GPU_MODE_SFU),
    MR_KENTRY(256, 256, 2, 8, 0, MR_GPU_MODE_SFU),
    MR_KENTRY(256, 512, 2, 4, 0, MR_GPU_MODE_SFU),
    MR_KENTRY(1024, 512, 2, 4, 0, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(1024, 512, 4, 4, 0, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(1024, 256, 2, 4, 0, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(256, 512, 2, 8, 0, MR_GPU_MODE_SFU),
    /* the first voxel by sincos, the others by complex rotation */
    MR_KENTRY(128, 256, 1, 16, 1, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(128, 256, 1, 32, 1, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(128, 256, 2, 16, 1, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(128, 256, 2, 32, 1, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(128, 512, 1, 16, 1, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(128, 512, 1, 32, 1, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(128, 512, 2, 16, 1, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(128, 512, 2, 32, 1, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(256, 256, 1, 16, 1, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(256, 256, 1, 32, 1, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(256, 256, 2, 16, 1, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(256, 256, 2, 32, 1, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(256, 512, 1, 16, 1, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(256, 512, 1, 32, 1, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(256, 512, 2, 16, 1, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(256, 512, 2, 32, 1, MR_GPU_MODE_SFU_FIXED),
    MR_KENTRY(256, 256, 1, 16, 1, MR_GPU_MODE_SFU),
    MR_KENTRY(256, 256, 1, 32, 1, MR_GPU_MODE_SFU),
};
#define MR_NKERNELS ((int)(sizeof mr_kernels / sizeof mr_kernels[0]))

/* The tuned rungs: [real] best of the sweep (docs/BENCHMARKS.md). */
static const mr_gpu_config mr_tuned[2] = {{512, 512, 2, 4, 0, MR_GPU_MODE_SFU_FIXED},
                                          {512, 512, 4, 4, 0, MR_GPU_MODE_SFU_FIXED}};
static const mr_gpu_config mr_multivoxel[2] = {{256, 512, 2, 32, 1, MR_GPU_MODE_SFU_FIXED},
                                               {256, 512, 2, 32, 1, MR_GPU_MODE_SFU_FIXED}};

static const mr_kentry *mr_find_kernel(const mr_gpu_config *c)
{
    for (int i = 0; i < MR_NKERNELS; i++) {
        const mr_gpu_config *e = &mr_kernels[i].cfg;
        if (e->threads == c->threads && e->chunk == c->chunk && e->unroll == c->unroll && e->voxels == c->voxels &&
            e->rotate == c->rotate && e->mode == c->mode)
            return &mr_kernels[i];
    }
    return NULL;
}

/* Floats per packed record (see mr_layout). */
static int mr_record_stride(int real, int rotate)
{
    return 2 * (2 + (real ? 0 : 1) + (rotate ? 1 : 0));
}

/* ---- the host object --------------------------------------------------------------------------- */

struct mr_gpu_nudft {
    int device;
    int64_t m;
    float *traj;          /* [M][3] host copy */
    double geo_scale[3];  /* scales the geometry below was computed for (0: none yet) */
    float *geo;           /* [M][8] kappa (float), kappa (int32 fixed point), u_re, u_im for geo_scale */
    float *stage;         /* pinned, [M][8] packed records */
    float2 *d_smp;        /* device records (MODE_GLOBAL), capacity d_smp_floats */
    size_t d_smp_floats;
    float2 *d_out;        /* device output of one pass, capacity d_out_voxels */
    int64_t d_out_voxels;
    float *h_out;         /* pinned output of one pass */
    int64_t h_out_voxels;
    int64_t max_pass;     /* 0 = no cap */
    cudaStream_t s_comp, s_copy;
    cudaEvent_t ev_up[2], ev_done[2], ev_t0, ev_t1;
    int sm_count;
    double last_ms;
    /* device-pointer entry points: the geometry on the device, and device-packed records */
    float *d_geo;          /* [M][8] as geo, for d_geo_scale */
    double d_geo_scale[3]; /* 0: none uploaded */
    float *d_stage;        /* [M][8] records packed on the device */
};

int mr_gpu_count(void)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) { /* no driver, insufficient driver, no device: an answer, not an error */
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

mr_status mr_gpu_describe(int device, char *buf, size_t size)
{
    if (!buf || size == 0)
        return mr_error(MR_EINVAL, "mr_gpu_describe: no buffer");
    buf[0] = '\0';
    const int n = mr_gpu_count();
    if (device < 0 || device >= n)
        return mr_error(MR_ENODEV, "GPU %d does not exist (%d usable CUDA devices)", device, n);
    cudaDeviceProp prop;
    mr_status st = MR_CU(cudaGetDeviceProperties(&prop, device));
    if (st != MR_OK)
        return st;
    snprintf(buf, size, "%s (%d SMs, %.0f GiB)", prop.name, prop.multiProcessorCount,
             (double)prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
    return MR_OK;
}

int mr_gpu_config_count(void) { return MR_NKERNELS; }

mr_status mr_gpu_config_get(int i, mr_gpu_config *cfg)
{
    if (i < 0 || i >= MR_NKERNELS)
        return mr_error(MR_EINVAL, "GPU kernel configuration %d out of range [0, %d)", i, MR_NKERNELS);
    *cfg = mr_kernels[i].cfg;
    return MR_OK;
}

void mr_gpu_variant_config(mr_gpu_variant variant, int real_weights, mr_gpu_config *cfg)
{
    const int r = real_weights ? 1 : 0;
    switch (variant) {
    case MR_GPU_NAIVE:
        *cfg = mr_kernels[0].cfg;
        break;
    case MR_GPU_CONSTANT:
        *cfg = mr_kernels[1].cfg;
        break;
    case MR_GPU_SFU:
        *cfg = mr_kernels[2].cfg;
        break;
    case MR_GPU_TUNED:
        *cfg = mr_tuned[r];
        break;
    case MR_GPU_MULTIVOXEL:
    default:
        *cfg = mr_multivoxel[r];
        break;
    }
}

mr_gpu_variant mr_gpu_variant_for_grid(int device, const mr_grid *g, int real_weights)
{
    int sms = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || sms < 1) {
        (void)cudaGetLastError();
        return MR_GPU_BEST;
    }
    const double voxels = (double)mr_grid_size(g);
    const mr_gpu_variant rungs[2] = {MR_GPU_MULTIVOXEL, MR_GPU_TUNED};
    for (int i = 0; i < 2; i++) {
        mr_gpu_config cfg;
        mr_gpu_variant_config(rungs[i], real_weights, &cfg);
        if (voxels / ((double)cfg.voxels * cfg.threads) >= sms) /* a block of its threads for every SM */
            return rungs[i];
    }
    return MR_GPU_SFU;
}

void mr_gpu_nudft_destroy(mr_gpu_nudft *p)
{
    if (!p)
        return;
    if (p->device >= 0)
        (void)cudaSetDevice(p->device);
    if (p->s_comp)
        (void)cudaStreamSynchronize(p->s_comp);
    if (p->s_copy)
        (void)cudaStreamSynchronize(p->s_copy);
    for (int b = 0; b < 2; b++) {
        if (p->ev_up[b])
            (void)cudaEventDestroy(p->ev_up[b]);
        if (p->ev_done[b])
            (void)cudaEventDestroy(p->ev_done[b]);
    }
    if (p->ev_t0)
        (void)cudaEventDestroy(p->ev_t0);
    if (p->ev_t1)
        (void)cudaEventDestroy(p->ev_t1);
    if (p->s_comp)
        (void)cudaStreamDestroy(p->s_comp);
    if (p->s_copy)
        (void)cudaStreamDestroy(p->s_copy);
    if (p->d_smp)
        (void)cudaFree(p->d_smp);
    if (p->d_out)
        (void)cudaFree(p->d_out);
    if (p->stage)
        (void)cudaFreeHost(p->stage);
    if (p->h_out)
        (void)cudaFreeHost(p->h_out);
    if (p->d_geo)
        (void)cudaFree(p->d_geo);
    if (p->d_stage)
        (void)cudaFree(p->d_stage);
    (void)cudaGetLastError();
    free(p->traj);
    free(p->geo);
    free(p);
}

mr_status mr_gpu_nudft_create(mr_gpu_nudft **out, int device, const float *traj, int64_t m)
{
    if (!out)
        return mr_error(MR_EINVAL, "mr_gpu_nudft_create: out is NULL");
    *out = NULL;
    if (!traj || m < 1 || m > MR_MAX_SAMPLES)
        return mr_error(MR_EINVAL, "mr_gpu_nudft_create: need a trajectory and 1 <= M <= %lld samples (M = %lld)",
                        (long long)MR_MAX_SAMPLES, (long long)m);
    const int n = mr_gpu_count();
    if (device < 0 || device >= n)
        return mr_error(MR_ENODEV, "GPU %d is not usable (%d CUDA devices found)", device, n);

    mr_gpu_nudft *p = (mr_gpu_nudft *)calloc(1, sizeof *p);
    if (!p)
        return mr_error(MR_ENOMEM, "mr_gpu_nudft_create: out of host memory");
    p->device = device;
    p->m = m;
    mr_status st = MR_OK;
    p->traj = (float *)malloc((size_t)m * 3 * sizeof(float));
    p->geo = (float *)malloc((size_t)m * 8 * sizeof(float));
    if (!p->traj || !p->geo) {
        st = mr_error(MR_ENOMEM, "mr_gpu_nudft_create: out of host memory for %lld samples", (long long)m);
        goto fail;
    }
    memcpy(p->traj, traj, (size_t)m * 3 * sizeof(float));
    if ((st = MR_CU(cudaSetDevice(device))) != MR_OK)
        goto fail;
    if ((st = MR_CU(cudaDeviceGetAttribute(&p->sm_count, cudaDevAttrMultiProcessorCount, device))) != MR_OK)
        goto fail;
    if ((st = MR_CU(cudaMallocHost((void **)&p->stage, (size_t)m * 8 * sizeof(float)))) != MR_OK)
        goto fail;
    if ((st = MR_CU(cudaStreamCreateWithFlags(&p->s_comp, cudaStreamNonBlocking))) != MR_OK ||
        (st = MR_CU(cudaStreamCreateWithFlags(&p->s_copy, cudaStreamNonBlocking))) != MR_OK)
        goto fail;
    for (int b = 0; b < 2; b++)
        if ((st = MR_CU(cudaEventCreateWithFlags(&p->ev_up[b], cudaEventDisableTiming))) != MR_OK ||
            (st = MR_CU(cudaEventCreateWithFlags(&p->ev_done[b], cudaEventDisableTiming))) != MR_OK)
            goto fail;
    if ((st = MR_CU(cudaEventCreate(&p->ev_t0))) != MR_OK || (st = MR_CU(cudaEventCreate(&p->ev_t1))) != MR_OK)
        goto fail;
    *out = p;
    return MR_OK;
fail:
    mr_gpu_nudft_destroy(p);
    return st;
}

double mr_gpu_nudft_last_ms(const mr_gpu_nudft *p) { return p ? p->last_ms : 0.0; }

void mr_gpu_nudft_set_max_pass(mr_gpu_nudft *p, int64_t voxels)
{
    if (p)
        p->max_pass = voxels > 0 ? voxels : 0;
}

/* Fixed-point turns: x mod 1 as uint32 (2^32 = one turn). */
static uint32_t mr_fixed_turns(double x)
{
    const double frac = x - floor(x); /* [0, 1] */
    return (uint32_t)((uint64_t)llround(frac * 4294967296.0) & 0xffffffffu);
}

/* kappa = k / scale as float turns and as int32 fixed-point turns (2^32 = one turn, taken modulo one
 * turn), and the x step e^{i 2 pi kappa_x}, in float64, for this grid's scales (cached). */
static void mr_update_geometry(mr_gpu_nudft *p, const mr_grid *g)
{
    if (p->geo_scale[0] == (double)g->scale[0] && p->geo_scale[1] == (double)g->scale[1] &&
        p->geo_scale[2] == (double)g->scale[2])
        return;
    const double two_pi = 6.283185307179586476925286766559;
    for (int64_t j = 0; j < p->m; j++) {
        const float *k = p->traj + 3 * j;
        float *o = p->geo + 8 * j;
        double kap[3];
        for (int a = 0; a < 3; a++) {
            kap[a] = (double)k[a] / (double)g->scale[a];
            o[a] = (float)kap[a];
            const uint32_t fixed = mr_fixed_turns(kap[a]);
            memcpy(&o[3 + a], &fixed, sizeof fixed);
        }
        const double t = kap[0] - nearbyint(kap[0]);
        o[6] = (float)cos(two_pi * t);
        o[7] = (float)sin(two_pi * t);
    }
    for (int a = 0; a < 3; a++)
        p->geo_scale[a] = (double)g->scale[a];
}

/* Records in the layout of mr_layout: (kx, ky), (kz, |a|) [, (phi, 0)] [, (u_re, u_im)]; kappa and
 * phi as float turns or (fixed) as int32 fixed-point bits. */
static void mr_pack(mr_gpu_nudft *p, const float *a, int real, int rotate, int fixed)
{
    const int st = mr_record_stride(real, rotate);
    const double inv_two_pi = 0.15915494309189533576888376337251;
    for (int64_t j = 0; j < p->m; j++) {
        const float *geo = p->geo + 8 * j;
        float *r = p->stage + (size_t)j * st;
        const float *kap = geo + (fixed ? 3 : 0);
        r[0] = kap[0];
        r[1] = kap[1];
        r[2] = kap[2];
        int o = 3;
        if (real) {
            r[o++] = a[j];
        } else {
            const double re = a[2 * j], im = a[2 * j + 1];
            const double phi = atan2(im, re) * inv_two_pi; /* turns, [-1/2, 1/2] */
            r[o++] = (float)hypot(re, im);
            if (fixed) {
                const uint32_t f = mr_fixed_turns(phi);
                memcpy(&r[o++], &f, sizeof f);
            } else {
                r[o++] = (float)phi;
            }
            r[o++] = 0.0f;
        }
        if (rotate) {
            r[o++] = geo[6];
            r[o++] = geo[7];
        }
    }
}

/* Ensure device output room for `voxels`; MR_ENOMEM (not recorded as fatal by the caller) when the
 * device is full. */
static mr_status mr_reserve_out(mr_gpu_nudft *p, int64_t voxels)
{
    if (p->d_out_voxels >= voxels)
        return MR_OK;
    if (p->d_out) {
        (void)cudaFree(p->d_out);
        p->d_out = NULL;
        p->d_out_voxels = 0;
    }
    mr_status st = MR_CU(cudaMalloc((void **)&p->d_out, (size_t)voxels * sizeof(float2)));
    if (st != MR_OK)
        return st;
    p->d_out_voxels = voxels;
    return MR_OK;
}

static mr_status mr_reserve_host_out(mr_gpu_nudft *p, int64_t voxels)
{
    if (p->h_out_voxels >= voxels)
        return MR_OK;
    if (p->h_out) {
        (void)cudaFreeHost(p->h_out);
        p->h_out = NULL;
        p->h_out_voxels = 0;
    }
    mr_status st = MR_CU(cudaMallocHost((void **)&p->h_out, (size_t)voxels * 2 * sizeof(float)));
    if (st != MR_OK)
        return st;
    p->h_out_voxels = voxels;
    return MR_OK;
}

/* Launch the chunks of one pass on s_comp (constant modes: uploads on s_copy, alternating buffers, from
 * the records at `rec`: pinned host memory or device memory, as `kind` says). MODE_GLOBAL reads
 * ka.gsmp. */
static mr_status mr_run_pass(mr_gpu_nudft *p, const mr_kentry *ke, int real, mr_kargs ka, const float *rec,
                             cudaMemcpyKind kind)
{
    const mr_gpu_config *c = &ke->cfg;
    const int st = mr_record_stride(real, c->rotate);
    int per_sm = 0;
    mr_status s = MR_CU(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, ke->fn[real][0], c->threads, 0));
    if (s != MR_OK)
        return s;
    if (per_sm < 1)
        per_sm = 1;
    const int64_t need = ((int64_t)ka.ngroups + c->threads - 1) / c->threads;
    const int64_t resident = (int64_t)per_sm * p->sm_count;
    const unsigned blocks = (unsigned)(need < resident ? need : resident);

    if (c->mode == MR_GPU_MODE_GLOBAL) {
        ka.count = (int)p->m;
        ka.first = 1;
        ke->fn[real][0]<<<blocks, c->threads, 0, p->s_comp>>>(ka);
        return MR_CU(cudaGetLastError());
    }
    const int64_t nchunks = (p->m + c->chunk - 1) / c->chunk;
    for (int64_t ch = 0; ch < nchunks; ch++) {
        const int b = (int)(ch & 1);
        const int64_t j0 = ch * c->chunk;
        const int cnt = (int)((p->m - j0) < c->chunk ? (p->m - j0) : c->chunk);
        /* buffer b was last read by kernel ch-2: wait for it before overwriting */
        if (ch >= 2 && (s = MR_CU(cudaStreamWaitEvent(p->s_copy, p->ev_done[b], 0))) != MR_OK)
            return s;
        const void *src = rec + (size_t)j0 * st;
        const size_t bytes = (size_t)cnt * st * sizeof(float);
        if ((s = MR_CU(b ? cudaMemcpyToSymbolAsync(c_smp1, src, bytes, 0, kind, p->s_copy)
                         : cudaMemcpyToSymbolAsync(c_smp0, src, bytes, 0, kind, p->s_copy))) != MR_OK)
            return s;
        if ((s = MR_CU(cudaEventRecord(p->ev_up[b], p->s_copy))) != MR_OK ||
            (s = MR_CU(cudaStreamWaitEvent(p->s_comp, p->ev_up[b], 0))) != MR_OK)
            return s;
        ka.count = cnt;
        ka.first = ch == 0;
        ke->fn[real][b]<<<blocks, c->threads, 0, p->s_comp>>>(ka);
        if ((s = MR_CU(cudaGetLastError())) != MR_OK)
            return s;
        if ((s = MR_CU(cudaEventRecord(p->ev_done[b], p->s_comp))) != MR_OK)
            return s;
    }
    return MR_OK;
}

static mr_kargs mr_make_kargs(const mr_grid *g, const mr_gpu_config *cfg);

/* The checks every entry point makes on the grid and the configuration; *ke and *stride on success. */
static mr_status mr_check_call(const mr_grid *g, const mr_gpu_config *cfg, int real, const mr_kentry **ke,
                               int *stride)
{
    for (int ax = 0; ax < 3; ax++)
        if (g->n[ax] < 1 || g->n[ax] > 2 * MR_MAX_MATRIX_EDGE || g->scale[ax] < 1 ||
            g->center[ax] < -(1 << 20) || g->center[ax] > (1 << 20))
            return mr_error(MR_EINVAL, "mr_gpu_nudft_adjoint: bad grid axis %d (n %lld, center %lld, scale %lld)",
                            ax, (long long)g->n[ax], (long long)g->center[ax], (long long)g->scale[ax]);
    const int64_t nv = mr_grid_size(g);
    if (nv > ((int64_t)1 << 32) - 1)
        return mr_error(MR_EINVAL, "mr_gpu_nudft_adjoint: %lld voxels exceed the GPU kernel's 2^32 - 1",
                        (long long)nv);
    *ke = mr_find_kernel(cfg);
    if (!*ke)
        return mr_error(MR_EINVAL,
                        "GPU kernel configuration threads=%d chunk=%d unroll=%d voxels=%d rotate=%d mode=%d was not "
                        "compiled",
                        cfg->threads, cfg->chunk, cfg->unroll, cfg->voxels, cfg->rotate, cfg->mode);
    *stride = mr_record_stride(real, cfg->rotate);
    if ((int64_t)cfg->chunk * *stride > MR_CBUF_FLOATS)
        return mr_error(MR_EINTERNAL, "GPU chunk of %d records of %d floats exceeds the constant buffer", cfg->chunk,
                        *stride);
    return MR_OK;
}

mr_status mr_gpu_nudft_adjoint_config(mr_gpu_nudft *p, const mr_grid *g, const float *a, int real_weights,
                                      float *out, const mr_gpu_config *cfg)
{
    if (!p || !g || !a || !out || !cfg)
        return mr_error(MR_EINVAL, "mr_gpu_nudft_adjoint: NULL argument");
    const int real = real_weights ? 1 : 0;
    const mr_kentry *ke = NULL;
    int stride = 0;
    mr_status chk = mr_check_call(g, cfg, real, &ke, &stride);
    if (chk != MR_OK)
        return chk;
    const int64_t nv = mr_grid_size(g);

    mr_status st = MR_CU(cudaSetDevice(p->device));
    if (st != MR_OK)
        return st;
    mr_update_geometry(p, g);
    mr_pack(p, a, real, cfg->rotate, cfg->mode == MR_GPU_MODE_SFU_FIXED);

    const int64_t nx = g->n[0], rows = g->n[1] * g->n[2];
    int64_t pass_rows = rows;
    if (p->max_pass > 0) {
        pass_rows = p->max_pass / nx;
        if (pass_rows < 1)
            pass_rows = 1;
    }
    /* device memory: the samples (global mode) must fit; the output is split into passes */
    if (cfg->mode == MR_GPU_MODE_GLOBAL && p->d_smp_floats < (size_t)p->m * stride) {
        if (p->d_smp)
            (void)cudaFree(p->d_smp);
        p->d_smp = NULL;
        p->d_smp_floats = 0;
        if ((st = MR_CU(cudaMalloc((void **)&p->d_smp, (size_t)p->m * stride * sizeof(float)))) != MR_OK)
            return st;
        p->d_smp_floats = (size_t)p->m * stride;
    }
    for (;;) {
        st = mr_reserve_out(p, pass_rows * nx);
        if (st == MR_OK)
            st = mr_reserve_host_out(p, pass_rows * nx);
        if (st != MR_ENOMEM)
            break;
        if (pass_rows == 1)
            return st;
        pass_rows = (pass_rows + 1) / 2;
        mr_log(MR_LOG_INFO, "GPU memory short: splitting the %lld voxels into passes of %lld", (long long)nv,
               (long long)(pass_rows * nx));
        mr_clear_error();
    }
    if (st != MR_OK)
        return st;

    mr_kargs ka = mr_make_kargs(g, cfg);
    ka.out = p->d_out;
    ka.gsmp = p->d_smp;

    float ms_total = 0.0f;
    for (int64_t r0 = 0; r0 < rows; r0 += pass_rows) {
        const int64_t nr = rows - r0 < pass_rows ? rows - r0 : pass_rows;
        ka.row0 = (unsigned)r0;
        ka.ngroups = (unsigned)(nr * ka.ngx);
        if ((st = MR_CU(cudaEventRecord(p->ev_t0, p->s_comp))) != MR_OK ||
            (st = MR_CU(cudaStreamWaitEvent(p->s_copy, p->ev_t0, 0))) != MR_OK)
            return st;
        if (cfg->mode == MR_GPU_MODE_GLOBAL &&
            (st = MR_CU(cudaMemcpyAsync(p->d_smp, p->stage, (size_t)p->m * stride * sizeof(float),
                                        cudaMemcpyHostToDevice, p->s_comp))) != MR_OK)
            return st;
        if ((st = mr_run_pass(p, ke, real, ka, p->stage, cudaMemcpyHostToDevice)) != MR_OK)
            return st;
        if ((st = MR_CU(cudaEventRecord(p->ev_t1, p->s_comp))) != MR_OK)
            return st;
        if ((st = MR_CU(cudaMemcpyAsync(p->h_out, p->d_out, (size_t)(nr * nx) * sizeof(float2),
                                        cudaMemcpyDeviceToHost, p->s_comp))) != MR_OK)
            return st;
        if ((st = MR_CU(cudaStreamSynchronize(p->s_comp))) != MR_OK)
            return st;
        float ms = 0.0f;
        if ((st = MR_CU(cudaEventElapsedTime(&ms, p->ev_t0, p->ev_t1))) != MR_OK)
            return st;
        ms_total += ms;
        memcpy(out + 2 * r0 * nx, p->h_out, (size_t)(nr * nx) * 2 * sizeof(float));
    }
    p->last_ms = ms_total;
    return MR_OK;
}

mr_status mr_gpu_nudft_adjoint(mr_gpu_nudft *p, const mr_grid *g, const float *a, int real_weights, float *out,
                               mr_gpu_variant variant)
{
    mr_gpu_config cfg;
    mr_gpu_variant_config(variant, real_weights, &cfg);
    return mr_gpu_nudft_adjoint_config(p, g, a, real_weights, out, &cfg);
}

/* ---- device-pointer entry points (issue 9) ------------------------------------------------------ */

/* The geometry of grid g on the device (uploaded when the grid's scales change; rare: the image and Q
 * grids of one matrix share them). */
static mr_status mr_device_geometry(mr_gpu_nudft *p, const mr_grid *g)
{
    mr_update_geometry(p, g);
    if (p->d_geo && p->d_geo_scale[0] == p->geo_scale[0] && p->d_geo_scale[1] == p->geo_scale[1] &&
        p->d_geo_scale[2] == p->geo_scale[2])
        return MR_OK;
    mr_status st = MR_OK;
    if (!p->d_geo)
        st = MR_CU(cudaMalloc((void **)&p->d_geo, (size_t)p->m * 8 * sizeof(float)));
    else
        st = MR_CU(cudaDeviceSynchronize()); /* earlier kernels may still read the old geometry */
    /* on s_comp and waited for: a plain cudaMemcpy from pageable memory may return before the data have
     * arrived, and the non-blocking streams do not wait for the legacy stream */
    if (st == MR_OK)
        st = MR_CU(cudaMemcpyAsync(p->d_geo, p->geo, (size_t)p->m * 8 * sizeof(float), cudaMemcpyHostToDevice,
                                   p->s_comp));
    if (st == MR_OK)
        st = MR_CU(cudaStreamSynchronize(p->s_comp));
    if (st != MR_OK)
        return st;
    memcpy(p->d_geo_scale, p->geo_scale, sizeof p->d_geo_scale);
    return MR_OK;
}

/* Fixed-point turns on the device, as mr_fixed_turns. */
__device__ unsigned mr_fixed_turns_dev(double x)
{
    const double frac = x - floor(x);
    return (unsigned)((unsigned long long)llround(frac * 4294967296.0) & 0xffffffffull);
}

/* The records of mr_pack, from the device geometry and device weights (words copied as bits). */
__global__ void k_pack(long long m, const unsigned *geo, const float *a, int real, int rotate, int fixed, int stride,
                       unsigned *rec)
{
    MR_GRID_STRIDE(j, m)
    {
        const unsigned *gj = geo + 8 * j;
        unsigned *r = rec + j * stride;
        const unsigned *kap = gj + (fixed ? 3 : 0);
        r[0] = kap[0];
        r[1] = kap[1];
        r[2] = kap[2];
        int o = 3;
        if (real) {
            r[o++] = __float_as_uint(a[j]);
        } else {
            const double re = a[2 * j], im = a[2 * j + 1];
            const double phi = atan2(im, re) * 0.15915494309189533576888376337251; /* turns */
            r[o++] = __float_as_uint((float)hypot(re, im));
            r[o++] = fixed ? mr_fixed_turns_dev(phi) : __float_as_uint((float)phi);
            r[o++] = 0u;
        }
        if (rotate) {
            r[o++] = gj[6];
            r[o++] = gj[7];
        }
    }
}

static mr_kargs mr_make_kargs(const mr_grid *g, const mr_gpu_config *cfg)
{
    mr_kargs ka;
    memset(&ka, 0, sizeof ka);
    ka.nx = (unsigned)g->n[0];
    ka.ny = (unsigned)g->n[1];
    ka.ngx = (unsigned)((g->n[0] + cfg->voxels - 1) / cfg->voxels);
    ka.cx = (int)g->center[0];
    ka.cy = (int)g->center[1];
    ka.cz = (int)g->center[2];
    return ka;
}

static mr_status mr_same_device(const mr_gpu_nudft *p, const mr_gpu_ctx *c)
{
    if (mr_gpu_ctx_device(c) != p->device)
        return mr_error(MR_EINVAL, "GPU NUDFT on device %d called with a context of device %d", p->device,
                        mr_gpu_ctx_device(c));
    return MR_OK;
}

mr_status mr_gpu_nudft_adjoint_dev(mr_gpu_nudft *p, mr_gpu_ctx *c, const mr_grid *g, const float *d_a, int real_weights,
                                   float *d_out, mr_gpu_variant variant)
{
    if (!p || !c || !g || !d_a || !d_out)
        return mr_error(MR_EINVAL, "mr_gpu_nudft_adjoint_dev: NULL argument");
    mr_gpu_config cfg;
    mr_gpu_variant_config(variant, real_weights, &cfg);
    const int real = real_weights ? 1 : 0;
    const mr_kentry *ke = NULL;
    int stride = 0;
    mr_status st = mr_check_call(g, &cfg, real, &ke, &stride);
    if (st == MR_OK)
        st = mr_same_device(p, c);
    if (st != MR_OK)
        return st;
    if ((st = MR_CU(cudaSetDevice(p->device))) != MR_OK || (st = mr_gpu_ctx_sync(c)) != MR_OK ||
        (st = mr_device_geometry(p, g)) != MR_OK)
        return mr_gpu_ctx_fail(c, st);
    if (!p->d_stage && (st = MR_CU(cudaMalloc((void **)&p->d_stage, (size_t)p->m * 8 * sizeof(float)))) != MR_OK)
        return st == MR_ENOMEM ? st : mr_gpu_ctx_fail(c, st);
    k_pack<<<mr_gpu_blocks(p->m), MR_GPU_THREADS, 0, p->s_comp>>>(
        (long long)p->m, (const unsigned *)p->d_geo, d_a, real, cfg.rotate, cfg.mode == MR_GPU_MODE_SFU_FIXED, stride,
        (unsigned *)p->d_stage);
    if ((st = MR_CU(cudaGetLastError())) != MR_OK)
        return mr_gpu_ctx_fail(c, st);

    mr_kargs ka = mr_make_kargs(g, &cfg);
    ka.gsmp = (const float2 *)p->d_stage;
    const int64_t nx = g->n[0], rows = g->n[1] * g->n[2];
    int64_t pass_rows = rows;
    if (p->max_pass > 0)
        pass_rows = p->max_pass / nx > 0 ? p->max_pass / nx : 1;
    /* the records are complete before the first upload: the copy stream waits for the pack kernel */
    if ((st = MR_CU(cudaEventRecord(p->ev_t0, p->s_comp))) != MR_OK ||
        (st = MR_CU(cudaStreamWaitEvent(p->s_copy, p->ev_t0, 0))) != MR_OK)
        return mr_gpu_ctx_fail(c, st);
    for (int64_t r0 = 0; r0 < rows && st == MR_OK; r0 += pass_rows) {
        const int64_t nr = rows - r0 < pass_rows ? rows - r0 : pass_rows;
        ka.out = (float2 *)d_out + r0 * nx;
        ka.row0 = (unsigned)r0;
        ka.ngroups = (unsigned)(nr * ka.ngx);
        /* the first uploads of a later pass overwrite buffers the previous pass's kernels read */
        if (r0 > 0 && ((st = MR_CU(cudaEventRecord(p->ev_t1, p->s_comp))) != MR_OK ||
                       (st = MR_CU(cudaStreamWaitEvent(p->s_copy, p->ev_t1, 0))) != MR_OK))
            break;
        st = mr_run_pass(p, ke, real, ka, p->d_stage, cudaMemcpyDeviceToDevice);
    }
    float ms = 0.0f;
    if (st == MR_OK && (st = MR_CU(cudaEventRecord(p->ev_t1, p->s_comp))) == MR_OK &&
        (st = MR_CU(cudaStreamSynchronize(p->s_comp))) == MR_OK)
        st = MR_CU(cudaEventElapsedTime(&ms, p->ev_t0, p->ev_t1));
    if (st != MR_OK)
        return mr_gpu_ctx_fail(c, st);
    p->last_ms = ms;
    return MR_OK;
}

/* y_m = sum_v x_v e^{-i 2 pi k_m.r_v}: one thread per sample; the voxels of each x row are read in
 * shared-memory tiles by the whole block; the phase advances along the row by one integer addition
 * of the fixed-point kappa_x (exact modulo one turn); sums of one tile in float, tiles in double. */
#define MR_FWD_TILE 256
template <int EXACT>
__global__ void __launch_bounds__(MR_FWD_TILE) k_forward(long long m, const unsigned *geo, const float2 *x, unsigned nx,
                                                         unsigned ny, unsigned nz, int cx, int cy, int cz, float2 *out)
{
    __shared__ float2 sx[MR_FWD_TILE];
    const long long j = (long long)blockIdx.x * MR_FWD_TILE + threadIdx.x;
    unsigned kx = 0, ky = 0, kz = 0;
    if (j < m) {
        kx = geo[8 * j + 3];
        ky = geo[8 * j + 4];
        kz = geo[8 * j + 5];
    }
    double ar = 0.0, ai = 0.0;
    const float scale = 6.28318530717958647692f / 4294967296.0f;
    for (unsigned row = 0; row < ny * nz; row++) {
        const unsigned iy = row % ny, iz = row / ny;
        const unsigned base = ky * (unsigned)((int)iy - cy) + kz * (unsigned)((int)iz - cz);
        for (unsigned x0 = 0; x0 < nx; x0 += MR_FWD_TILE) {
            const unsigned cnt = nx - x0 < MR_FWD_TILE ? nx - x0 : MR_FWD_TILE;
            __syncthreads();
            if (threadIdx.x < cnt)
                sx[threadIdx.x] = x[(size_t)row * nx + x0 + threadIdx.x];
            __syncthreads();
            unsigned ph = base + kx * (unsigned)((int)x0 - cx);
            float sr = 0.0f, si = 0.0f;
            for (unsigned t = 0; t < cnt; t++, ph += kx) {
                float s, c;
                if (EXACT)
                    sincospif((float)(int)ph * 4.656612873077393e-10f, &s, &c); /* pi * ph / 2^31 */
                else
                    __sincosf((float)(int)ph * scale, &s, &c);
                const float2 v = sx[t];
                sr = fmaf(v.x, c, fmaf(v.y, s, sr));
                si = fmaf(v.y, c, fmaf(-v.x, s, si));
            }
            ar += sr;
            ai += si;
        }
    }
    if (j < m)
        out[j] = make_float2((float)ar, (float)ai);
}

mr_status mr_gpu_nudft_forward_dev(mr_gpu_nudft *p, mr_gpu_ctx *c, const mr_grid *g, const float *d_x, float *d_out,
                                   int exact_trig)
{
    if (!p || !c || !g || !d_x || !d_out)
        return mr_error(MR_EINVAL, "mr_gpu_nudft_forward_dev: NULL argument");
    const mr_gpu_config any = {256, 512, 2, 32, 1, MR_GPU_MODE_SFU_FIXED};
    const mr_kentry *ke = NULL;
    int stride = 0;
    mr_status st = mr_check_call(g, &any, 0, &ke, &stride);
    if (st == MR_OK)
        st = mr_same_device(p, c);
    if (st != MR_OK)
        return st;
    if ((st = MR_CU(cudaSetDevice(p->device))) != MR_OK || (st = mr_device_geometry(p, g)) != MR_OK)
        return mr_gpu_ctx_fail(c, st);
    const unsigned blocks = (unsigned)((p->m + MR_FWD_TILE - 1) / MR_FWD_TILE);
    cudaStream_t s = mr_gpu_ctx_stream(c);
    if (exact_trig)
        k_forward<1><<<blocks, MR_FWD_TILE, 0, s>>>((long long)p->m, (const unsigned *)p->d_geo, (const float2 *)d_x,
                                                    (unsigned)g->n[0], (unsigned)g->n[1], (unsigned)g->n[2],
                                                    (int)g->center[0], (int)g->center[1], (int)g->center[2],
                                                    (float2 *)d_out);
    else
        k_forward<0><<<blocks, MR_FWD_TILE, 0, s>>>((long long)p->m, (const unsigned *)p->d_geo, (const float2 *)d_x,
                                                    (unsigned)g->n[0], (unsigned)g->n[1], (unsigned)g->n[2],
                                                    (int)g->center[0], (int)g->center[1], (int)g->center[2],
                                                    (float2 *)d_out);
    return mr_gpu_ctx_launched(c, "forward NUDFT");
}
