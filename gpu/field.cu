/* The device side of the field-corrected operators (gpu/field.h).
 *
 * Exact sums with the field term, CUDA cores:
 *   forward  y_m = sum_v x_v e^{-i2pi (k_m.r_v + f_v t_m)}: one thread per sample; the voxels of each
 *            x row (value and field) are read in shared-memory tiles by the whole block; k.r advances along
 *            the row by one integer addition of the fixed-point kappa_x (exact modulo one turn).
 *   adjoint  x_v = sum_m a_m e^{+i2pi (k_m.r_v + f_v t_m)}: one thread per voxel; the samples (fixed-point
 *            kappa, t, a) in shared-memory tiles; k.r by three integer multiply-adds.
 * Per pair: the fixed-point turns of k.r as a float in [-1/2, 1/2), plus f t in float turns reduced to
 * [-1/2, 1/2], reduced again, then __sincosf of 2 pi times that (|argument| <= pi: the SFU's accurate
 * range, ~4e-7 absolute). Sums of one tile in float, of the tiles in double.
 *
 * And the element-wise complex products of the segmented model (its normal: gpu/field_tp.cu). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "../base/grid.h"
#include "cuda_check.h"
#include "field.h"
#include "gpu_internal.h"

#define FT_TILE 256 /* threads per block, and samples or voxels per shared-memory tile */

/* x mod 1 as fixed-point turns (2^32 = one turn), as gpu/nudft.cu */
static unsigned fixed_turns(double x)
{
    const double frac = x - floor(x);
    return (unsigned)((unsigned long long)llround(frac * 4294967296.0) & 0xffffffffull);
}

/* (sr, si) += w e^{i 2 pi (th 2^-32 + ft)}: th fixed-point turns, ft float turns */
__device__ __forceinline__ void ft_madd(unsigned th, float ft, float2 w, float *sr, float *si)
{
    float u = (float)(int)th * 2.3283064365386963e-10f + (ft - rintf(ft));
    u -= rintf(u);
    float s, c;
    __sincosf(6.28318530717958647692f * u, &s, &c);
    *sr = fmaf(w.x, c, fmaf(-w.y, s, *sr));
    *si = fmaf(w.x, s, fmaf(w.y, c, *si));
}

struct mr_gpu_field {
    mr_gpu_ctx *c;
    long long m, n;
    unsigned nx, ny, nz;
    int cx, cy, cz;
    uint4 *smp; /* [M]: kappa x, y, z (fixed point), t (float bits) */
    float *field; /* [N] */
};

static __global__ void __launch_bounds__(FT_TILE) k_field_forward(long long m, const uint4 *smp, const float2 *x,
                                                           const float *field, unsigned nx, unsigned ny, unsigned nz,
                                                           int cx, int cy, int cz, float2 *out)
{
    __shared__ float2 sx[FT_TILE];
    __shared__ float sf[FT_TILE];
    const long long j = (long long)blockIdx.x * FT_TILE + threadIdx.x;
    uint4 k = make_uint4(0, 0, 0, 0);
    if (j < m)
        k = smp[j];
    const float t = -__uint_as_float(k.w); /* the forward's sign: e^{-i2pi (k.r + f t)} */
    double ar = 0.0, ai = 0.0;
    for (unsigned row = 0; row < ny * nz; row++) {
        const unsigned iy = row % ny, iz = row / ny;
        const unsigned base = 0u - (k.y * (unsigned)((int)iy - cy) + k.z * (unsigned)((int)iz - cz));
        for (unsigned x0 = 0; x0 < nx; x0 += FT_TILE) {
            const unsigned cnt = nx - x0 < FT_TILE ? nx - x0 : FT_TILE;
            __syncthreads();
            if (threadIdx.x < cnt) {
                sx[threadIdx.x] = x[(size_t)row * nx + x0 + threadIdx.x];
                sf[threadIdx.x] = field[(size_t)row * nx + x0 + threadIdx.x];
            }
            __syncthreads();
            unsigned ph = base - k.x * (unsigned)((int)x0 - cx);
            float sr = 0.0f, si = 0.0f;
            for (unsigned v = 0; v < cnt; v++, ph -= k.x)
                ft_madd(ph, sf[v] * t, sx[v], &sr, &si);
            ar += sr;
            ai += si;
        }
    }
    if (j < m)
        out[j] = make_float2((float)ar, (float)ai);
}

static __global__ void __launch_bounds__(FT_TILE) k_field_adjoint(long long m, const uint4 *smp, const float2 *a,
                                                           const float *field, long long n, unsigned nx, unsigned ny,
                                                           int cx, int cy, int cz, float2 *out)
{
    __shared__ uint4 sk[FT_TILE];
    __shared__ float2 sa[FT_TILE];
    const long long v = (long long)blockIdx.x * FT_TILE + threadIdx.x;
    unsigned ix = 0, iy = 0, iz = 0;
    float f = 0.0f;
    if (v < n) {
        ix = (unsigned)(v % nx);
        iy = (unsigned)((v / nx) % ny);
        iz = (unsigned)(v / ((long long)nx * ny));
        f = field[v];
    }
    const unsigned ox = (unsigned)((int)ix - cx), oy = (unsigned)((int)iy - cy), oz = (unsigned)((int)iz - cz);
    double ar = 0.0, ai = 0.0;
    for (long long j0 = 0; j0 < m; j0 += FT_TILE) {
        const int cnt = m - j0 < FT_TILE ? (int)(m - j0) : FT_TILE;
        __syncthreads();
        if ((int)threadIdx.x < cnt) {
            sk[threadIdx.x] = smp[j0 + threadIdx.x];
            sa[threadIdx.x] = a[j0 + threadIdx.x];
        }
        __syncthreads();
        float sr = 0.0f, si = 0.0f;
        for (int q = 0; q < cnt; q++) {
            const uint4 k = sk[q];
            ft_madd(k.x * ox + k.y * oy + k.z * oz, f * __uint_as_float(k.w), sa[q], &sr, &si);
        }
        ar += sr;
        ai += si;
    }
    if (v < n)
        out[v] = make_float2((float)ar, (float)ai);
}

mr_status mr_gpu_field_create(mr_gpu_field **out, mr_gpu_ctx *c, const int64_t matrix[3], const float *traj,
                              const float *time, const float *fieldmap, int64_t m)
{
    *out = NULL;
    mr_gpu_field *p = (mr_gpu_field *)calloc(1, sizeof *p);
    uint4 *h = (uint4 *)malloc((size_t)m * sizeof(uint4));
    if (!p || !h) {
        free(p);
        free(h);
        return mr_error(MR_ENOMEM, "GPU field sums: out of host memory for %lld samples", (long long)m);
    }
    p->c = c;
    p->m = m;
    p->n = matrix[0] * matrix[1] * matrix[2];
    p->nx = (unsigned)matrix[0];
    p->ny = (unsigned)matrix[1];
    p->nz = (unsigned)matrix[2];
    p->cx = (int)(matrix[0] / 2);
    p->cy = (int)(matrix[1] / 2);
    p->cz = (int)(matrix[2] / 2);
    for (int64_t k = 0; k < m; k++) {
        h[k].x = fixed_turns((double)traj[3 * k] / (double)matrix[0]);
        h[k].y = fixed_turns((double)traj[3 * k + 1] / (double)matrix[1]);
        h[k].z = fixed_turns((double)traj[3 * k + 2] / (double)matrix[2]);
        memcpy(&h[k].w, &time[k], sizeof(float));
    }
    mr_status st = MR_OK;
    if (!(p->smp = (uint4 *)mr_gpu_alloc(c, 4 * m)) || !(p->field = mr_gpu_alloc(c, p->n)))
        st = MR_ENOMEM;
    if (st == MR_OK)
        st = mr_gpu_upload(c, (float *)p->smp, (const float *)h, 4 * m);
    if (st == MR_OK)
        st = mr_gpu_upload(c, p->field, fieldmap, p->n);
    free(h);
    if (st != MR_OK) {
        mr_gpu_field_destroy(p);
        return st;
    }
    *out = p;
    return MR_OK;
}

void mr_gpu_field_destroy(mr_gpu_field *p)
{
    if (!p)
        return;
    mr_gpu_free(p->c, p->smp);
    mr_gpu_free(p->c, p->field);
    free(p);
}

mr_status mr_gpu_field_forward(mr_gpu_field *p, const float *d_x, float *d_y)
{
    const unsigned blocks = (unsigned)((p->m + FT_TILE - 1) / FT_TILE);
    k_field_forward<<<blocks, FT_TILE, 0, mr_gpu_ctx_stream(p->c)>>>(p->m, p->smp, (const float2 *)d_x, p->field, p->nx,
                                                                     p->ny, p->nz, p->cx, p->cy, p->cz, (float2 *)d_y);
    return mr_gpu_ctx_launched(p->c, "forward field sums");
}

mr_status mr_gpu_field_adjoint(mr_gpu_field *p, const float *d_a, float *d_x)
{
    const unsigned blocks = (unsigned)((p->n + FT_TILE - 1) / FT_TILE);
    k_field_adjoint<<<blocks, FT_TILE, 0, mr_gpu_ctx_stream(p->c)>>>(p->m, p->smp, (const float2 *)d_a, p->field, p->n,
                                                                     p->nx, p->ny, p->cx, p->cy, p->cz, (float2 *)d_x);
    return mr_gpu_ctx_launched(p->c, "adjoint field sums");
}

/* ---- element-wise ------------------------------------------------------------------------------- */

static __global__ void k_cmul(long long n, long long total, const float2 *v, int conj, int acc, const float2 *in, float2 *out)
{
    MR_GRID_STRIDE(i, total)
    {
        const float2 w = v[i % n], x = in[i];
        const float wi = conj ? -w.y : w.y;
        float2 r = make_float2(w.x * x.x - wi * x.y, w.x * x.y + wi * x.x);
        if (acc) {
            const float2 o = out[i];
            r.x += o.x;
            r.y += o.y;
        }
        out[i] = r;
    }
}

mr_status mr_gpu_field_cmul(mr_gpu_ctx *c, int64_t n, int64_t batch, const float *v, int conj, int accumulate,
                            const float *in, float *out)
{
    const long long total = (long long)(n * batch);
    k_cmul<<<mr_gpu_blocks(total), MR_GPU_THREADS, 0, mr_gpu_ctx_stream(c)>>>(
        (long long)n, total, (const float2 *)v, conj, accumulate, (const float2 *)in, (float2 *)out);
    return mr_gpu_ctx_launched(c, "field coefficients");
}

