/* The GPU NUFFT (gpu/nufft.h; the maths in docs/NUFFT.md).
 *
 * Layout: the fine grid is [nf_z][nf_y][nf_x] complex (x fastest), every sample is kept in tile order as
 * its first footprint index j0 per axis (int) and the offset v = 2 (j0 - u + w/2) - 1 in [-1, 1) (the
 * plan's type): the kernel's w values on an axis are the polynomials coef[d][i] v^d (Horner). Tiles are
 * bin_a cells per axis; a sample with floor(u) in the tile touches cells [b bin - w/2, b bin + bin + w/2),
 * so a block's shared tile has bin + w cells per axis starting at b bin - floor(w/2). Inactive axes (the
 * grid's n = 1) have one cell, weight 1.
 *
 * Templates: T the arithmetic (float, double), W the kernel width (2..MR_GPU_NUFFT_MAX_WIDTH), so the x
 * footprint is unrolled into registers; one switch picks the instantiation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cub/device/device_radix_sort.cuh>

#include "../base/log.h"
#include "cuda_check.h"
#include "cufft_api.h"
#include "gpu_internal.h"
#include "nufft.h"

#define SPREAD_THREADS 256
#define INTERP_THREADS 256
#define NCOEF ((MR_GPU_NUFFT_MAX_DEGREE + 1) * MR_GPU_NUFFT_COEF_STRIDE)

template <typename T> struct cpx_of;
template <> struct cpx_of<float> {
    typedef float2 t;
};
template <> struct cpx_of<double> {
    typedef double2 t;
};

/* What every kernel needs, by value. */
struct nufft_geom {
    int act[3];
    int w, deg;
    long long nf[3];
    long long n[3], center[3];
    int bin[3];
    long long nbins[3];
    int tile[3];
    int halo; /* floor(w / 2) */
};

/* One launch of type 1: the subproblems [sub[0], sub[1]) of p->subs, then k_reduce_tiles over the split
 * tiles [split[0], split[1]) of p->split. */
struct tile_group {
    long long sub[2], split[2];
};

struct mr_gpu_nufft {
    mr_gpu_ctx *c;
    int f64;
    nufft_geom G;
    long long m, nfine, nvox;
    int *perm;  /* [M] tile order -> caller's sample */
    int *base;  /* [M][3] first footprint index per axis */
    void *frac; /* [M][3] offsets (T) */
    /* [nsub] x: tile (linear), y: first sample, z: count, w: slot in scratch (-1: the tile is one subproblem) */
    int4 *subs;
    long long nsub;
    int4 *split; /* [nsplit] x: tile, y: first slot, z: parts: the tiles cut into parts */
    /* host [ngroups]: the launches of type 1, in order, each of one class (a class whose split tiles need more
     * scratch than scratch_limit takes several) */
    struct tile_group *groups;
    int ngroups, nclass;
    int64_t scratch_limit; /* bytes of parts per group (mr_gpu_nufft_kernel.scratch_limit) */
    void *scratch; /* [the most slots a group takes][tile cells] complex (T) */
    int tile_threads; /* threads of a tile block: the footprint's points rounded up to warps, at most 512 */
    void *coef;      /* [(deg + 1) * COEF_STRIDE] (T) */
    void *deconv[3]; /* [n_a] (T) */
    void *grid;      /* [nfine] complex (T) */
    cufftHandle plan;
    int have_plan;
    size_t shmem; /* dynamic shared memory of the spreading kernel */
};

/* ---- the kernel's values ------------------------------------------------------------------------- */

/* ker[i] = sum_d coef[d][i] v^d for i < W (coef in shared memory). */
template <typename T, int W> __device__ __forceinline__ void kernel_vals(const T *coef, int deg, T v, T *ker)
{
#pragma unroll
    for (int i = 0; i < W; i++)
        ker[i] = coef[deg * MR_GPU_NUFFT_COEF_STRIDE + i];
    for (int d = deg - 1; d >= 0; d--) {
#pragma unroll
        for (int i = 0; i < W; i++)
            ker[i] = ker[i] * v + coef[d * MR_GPU_NUFFT_COEF_STRIDE + i];
    }
}

/* The kernel's values on the three axes of one sample (offsets fr[3]); an inactive axis has the single
 * value 1 (kx is then 1, 0, 0, ...: the unrolled x loops may run over all W). */
template <typename T, int W>
__device__ __forceinline__ void axes_vals(const nufft_geom &G, const T *coef, const T *fr, T *kx, T *ky, T *kz)
{
    T *k[3] = {kx, ky, kz};
    for (int a = 0; a < 3; a++) {
        if (G.act[a]) {
            kernel_vals<T, W>(coef, G.deg, fr[a], k[a]);
        } else {
#pragma unroll
            for (int i = 0; i < W; i++)
                k[a][i] = i == 0 ? (T)1 : (T)0;
        }
    }
}

/* The kernel's coefficients into shared memory (the whole block; then a barrier). */
template <typename T> __device__ __forceinline__ void load_coef(T *coef, const T *coef_g, int deg)
{
    const int ncoef = (deg + 1) * MR_GPU_NUFFT_COEF_STRIDE;
    for (int i = threadIdx.x; i < ncoef; i += blockDim.x)
        coef[i] = coef_g[i];
    __syncthreads();
}

__device__ __forceinline__ long long wrap(long long j, long long n)
{
    j %= n;
    return j < 0 ? j + n : j;
}

template <typename T> __device__ __forceinline__ T read_in(const void *in, int f64, long long i)
{
    return f64 ? (T)((const double *)in)[i] : (T)((const float *)in)[i];
}

template <typename T> __device__ __forceinline__ void write_out(void *out, int f64, long long i, T re, T im)
{
    if (f64) {
        ((double *)out)[2 * i] = (double)re;
        ((double *)out)[2 * i + 1] = (double)im;
    } else {
        ((float *)out)[2 * i] = (float)re;
        ((float *)out)[2 * i + 1] = (float)im;
    }
}

/* ---- the plan: coordinates, tiles, the counting sort --------------------------------------------- */

/* Per sample (caller's order): first index and offset per axis, its tile, the tiles' sample counts, and
 * the sample's own index (the values the sort by tile carries along). */
template <typename T>
__global__ void k_coords(nufft_geom G, long long m, const float *traj, double sx, double sy, double sz, int *j0, T *fr,
                         int *tile_of, int *index, int *count)
{
    const double scale[3] = {sx, sy, sz};
    MR_GRID_STRIDE(k, m)
    {
        long long b[3] = {0, 0, 0};
        for (int a = 0; a < 3; a++) {
            int jj = 0;
            T f = 0;
            if (G.act[a]) {
                const double nf = (double)G.nf[a];
                double u = (double)traj[3 * k + a] * nf / scale[a];
                u -= nf * floor(u / nf);
                if (u >= nf)
                    u -= nf;
                if (u < 0)
                    u = 0;
                const double j = ceil(u - 0.5 * G.w);
                jj = (int)j;
                f = (T)(2.0 * (j - u + 0.5 * G.w) - 1.0);
                b[a] = (long long)floor(u) / G.bin[a];
            }
            j0[3 * k + a] = jj;
            fr[3 * k + a] = f;
        }
        const int t = (int)((b[2] * G.nbins[1] + b[1]) * G.nbins[0] + b[0]);
        tile_of[k] = t;
        index[k] = (int)k;
        atomicAdd(&count[t], 1);
    }
}

/* The samples in tile order: sorted[pos] is the caller's sample at position pos. */
template <typename T>
__global__ void k_sort(long long m, const int *sorted, const int *j0, const T *fr, int *perm, int *base, T *frac)
{
    MR_GRID_STRIDE(pos, m)
    {
        const long long k = sorted[pos];
        perm[pos] = (int)k;
        for (int a = 0; a < 3; a++) {
            base[3 * pos + a] = j0[3 * k + a];
            frac[3 * pos + a] = fr[3 * k + a];
        }
    }
}

/* ---- type 1: spreading ---------------------------------------------------------------------------- */

/* Shared memory of a tile block: the coefficients, then a batch of samples (kernel values [B][3][W], values,
 * local first indices), then the tile; the same layout as mr_gpu_nufft_tiles counts. */
template <typename T> __device__ __forceinline__ size_t align16(size_t b) { return (b + 15) / 16 * 16; }

/* The first fine-grid cell of tile t's region (the tile and the kernel's halo), per axis (0 on inactive axes). */
__device__ __forceinline__ void tile_origin(const nufft_geom &G, long long t, long long o[3])
{
    const long long bt[3] = {t % G.nbins[0], (t / G.nbins[0]) % G.nbins[1], t / (G.nbins[0] * G.nbins[1])};
    for (int d = 0; d < 3; d++)
        o[d] = G.act[d] ? bt[d] * G.bin[d] - G.halo : 0;
}

/* Adds the region of one tile, the sum of its `nparts` copies (`stride` cells apart, in order), to the fine
 * grid without atomics (the caller's launch holds tiles that do not overlap): the block's threads take the
 * region's distinct grid cells from `begin` (stepping by blockDim) up to `end`. A region longer than the fine
 * grid on an axis wraps onto itself: each grid cell is one thread's, the sum of every cell of the region that
 * lands on it, in one order. */
template <typename C>
__device__ void flush_region(const nufft_geom &G, const long long o[3], const C *parts, int nparts, long long stride,
                             C *grid, int begin, int end)
{
    const int tx = G.tile[0], ty = G.tile[1], tz = G.tile[2];
    const int ex = tx < G.nf[0] ? tx : (int)G.nf[0], ey = ty < G.nf[1] ? ty : (int)G.nf[1],
              ez = tz < G.nf[2] ? tz : (int)G.nf[2];
    const int last = ex * ey * ez < end ? ex * ey * ez : end;
    for (int i = begin + threadIdx.x; i < last; i += blockDim.x) {
        const int lx = i % ex, ly = (i / ex) % ey, lz = i / (ex * ey);
        C v;
        v.x = 0;
        v.y = 0;
        for (int q = 0; q < nparts; q++)
            for (int iz = lz; iz < tz; iz += ez)
                for (int iy = ly; iy < ty; iy += ey)
                    for (int ix = lx; ix < tx; ix += ex) {
                        const C c = parts[q * stride + (iz * ty + iy) * tx + ix];
                        v.x += c.x;
                        v.y += c.y;
                    }
        if (v.x == 0 && v.y == 0)
            continue;
        const long long gx = wrap(o[0] + lx, G.nf[0]), gy = wrap(o[1] + ly, G.nf[1]), gz = wrap(o[2] + lz, G.nf[2]);
        C *g = grid + (gz * G.nf[1] + gy) * G.nf[0] + gx;
        C sum = *g;
        sum.x += v.x;
        sum.y += v.y;
        *g = sum;
    }
}

/* One tile: the block's threads hold the tile (with the kernel's halo) in shared memory and cover the
 * footprint of one sample together, sample after sample in the sorted order, so no cell is written twice at
 * once (no atomics; one barrier per sample). Each thread takes the footprint points tid, tid + blockDim, ...
 * (blockDim >= 64: at most R of them), whose coordinates it works out once. Then the tile's cells are added
 * to the fine grid without atomics (flush_region): the launch holds the tiles of one class, whose regions do
 * not overlap (sort_samples), and the classes run one after the other. A tile with more than
 * MR_GPU_NUFFT_SPLIT samples is split into subproblems (sub.w >= 0: the slot) that each store their whole
 * region in `scratch`; k_reduce_tiles adds the slots in order. So every sum has one order, and type 1 gives
 * the same bits on every run. */
template <typename T, int W>
__global__ void k_spread_tile(nufft_geom G, const int4 *subs, const int *perm, const int *base, const T *frac,
                              const T *coef_g, const void *a, int a_f64, int real, typename cpx_of<T>::t *grid,
                              typename cpx_of<T>::t *scratch)
{
    typedef typename cpx_of<T>::t C;
    extern __shared__ __align__(16) unsigned char smem[];
    const int ncoef = (G.deg + 1) * MR_GPU_NUFFT_COEF_STRIDE;
    T *coef = (T *)smem;
    T *ker = (T *)(smem + align16<T>(ncoef * sizeof(T)));                     /* [B][3][W] */
    C *val = (C *)((unsigned char *)ker + align16<T>(MR_GPU_NUFFT_BATCH * 3 * W * sizeof(T)));
    int *corner = (int *)(val + MR_GPU_NUFFT_BATCH);                           /* [B][3]: [0] the tile index */
    C *tile = (C *)((unsigned char *)corner + align16<T>(MR_GPU_NUFFT_BATCH * 3 * sizeof(int)));
    const int tx = G.tile[0], ty = G.tile[1], tz = G.tile[2], cells = tx * ty * tz;
    const int4 sub = subs[blockIdx.x];
    for (int i = threadIdx.x; i < ncoef; i += blockDim.x)
        coef[i] = coef_g[i];
    for (int i = threadIdx.x; i < cells; i += blockDim.x) {
        tile[i].x = 0;
        tile[i].y = 0;
    }
    long long o[3];
    tile_origin(G, sub.x, o);
    const int wx = G.act[0] ? W : 1, wy = G.act[1] ? W : 1, wz = G.act[2] ? W : 1, fp = wx * wy * wz;
    /* this thread's footprint points (the same for every sample): their x, y, z and offset in the tile */
    /* rounds: blockDim is the footprint's points rounded up to warps, 64..512 (create) */
    constexpr int F3 = W * W * W, BD = F3 > 512 ? 512 : (F3 + 31) / 32 * 32, R = (F3 + BD - 1) / BD;
    int px[R], py[R], pz[R], poff[R];
#pragma unroll
    for (int r = 0; r < R; r++) {
        const int idx = threadIdx.x + r * blockDim.x;
        px[r] = idx % wx;
        py[r] = (idx / wx) % wy;
        pz[r] = idx < fp ? idx / (wx * wy) : -1; /* -1: no point */
        poff[r] = (pz[r] * ty + py[r]) * tx + px[r];
    }
    __syncthreads();
    for (int b0 = 0; b0 < sub.z; b0 += MR_GPU_NUFFT_BATCH) {
        const int nb = sub.z - b0 < MR_GPU_NUFFT_BATCH ? sub.z - b0 : MR_GPU_NUFFT_BATCH;
        if ((int)threadIdx.x < nb) {
            const int j = threadIdx.x;
            const long long s = sub.y + b0 + j, k = perm[s];
            axes_vals<T, W>(G, coef, frac + 3 * s, ker + (3 * j) * W, ker + (3 * j + 1) * W, ker + (3 * j + 2) * W);
            val[j].x = read_in<T>(a, a_f64, real ? k : 2 * k);
            val[j].y = real ? (T)0 : read_in<T>(a, a_f64, 2 * k + 1);
            int l[3];
            for (int d = 0; d < 3; d++)
                l[d] = G.act[d] ? (int)(base[3 * s + d] - o[d]) : 0;
            corner[3 * j] = (l[2] * ty + l[1]) * tx + l[0];
        }
        __syncthreads();
        for (int j = 0; j < nb; j++) {
            const C v = val[j];
            const T *kj = ker + 3 * j * W;
            const int c0 = corner[3 * j];
#pragma unroll
            for (int r = 0; r < R; r++) {
                if (pz[r] < 0)
                    break;
                const T w = kj[px[r]] * kj[W + py[r]] * kj[2 * W + pz[r]];
                C *c = tile + c0 + poff[r];
                c->x += v.x * w;
                if (!real)
                    c->y += v.y * w;
            }
            __syncthreads();
        }
    }
    if (sub.w >= 0) { /* a part of a split tile: the whole region into its slot */
        C *dst = scratch + (long long)sub.w * cells;
        for (int i = threadIdx.x; i < cells; i += blockDim.x)
            dst[i] = tile[i];
        return;
    }
    flush_region(G, o, tile, 1, cells, grid, 0, cells);
}

/* The split tiles of one group: split[blockIdx.x] = (tile, first slot, parts); their parts added in order, a
 * thread per cell (blockIdx.y: which blockDim cells of the region). */
template <typename T>
__global__ void k_reduce_tiles(nufft_geom G, const int4 *split, const typename cpx_of<T>::t *scratch,
                               typename cpx_of<T>::t *grid)
{
    const int4 sp = split[blockIdx.x];
    const long long cells = (long long)G.tile[0] * G.tile[1] * G.tile[2];
    long long o[3];
    tile_origin(G, sp.x, o);
    const int begin = (int)(blockIdx.y * blockDim.x);
    flush_region(G, o, scratch + (long long)sp.y * cells, sp.z, cells, grid, begin, begin + (int)blockDim.x);
}

/* out[v] = grid[p mod nf] / phi^(p) per axis: one thread per output voxel (x), blockIdx.y/z = y, z. */
template <typename T>
__global__ void k_deconv_out(nufft_geom G, const typename cpx_of<T>::t *grid, const T *dx, const T *dy, const T *dz,
                             void *out, int out_f64)
{
    const long long ix = (long long)blockIdx.x * blockDim.x + threadIdx.x, iy = blockIdx.y, iz = blockIdx.z;
    if (ix >= G.n[0])
        return;
    const long long fx = wrap(ix - G.center[0], G.nf[0]), fy = wrap(iy - G.center[1], G.nf[1]),
                    fz = wrap(iz - G.center[2], G.nf[2]);
    const typename cpx_of<T>::t v = grid[(fz * G.nf[1] + fy) * G.nf[0] + fx];
    const T s = dx[ix] * dy[iy] * dz[iz];
    write_out<T>(out, out_f64, (iz * G.n[1] + iy) * G.n[0] + ix, v.x * s, v.y * s);
}

/* ---- type 2: deconvolution into the grid, interpolation ------------------------------------------- */

template <typename T>
__global__ void k_deconv_in(nufft_geom G, const void *x, int in_f64, const T *dx, const T *dy, const T *dz,
                            typename cpx_of<T>::t *grid)
{
    const long long ix = (long long)blockIdx.x * blockDim.x + threadIdx.x, iy = blockIdx.y, iz = blockIdx.z;
    if (ix >= G.n[0])
        return;
    const long long fx = wrap(ix - G.center[0], G.nf[0]), fy = wrap(iy - G.center[1], G.nf[1]),
                    fz = wrap(iz - G.center[2], G.nf[2]);
    const long long i = (iz * G.n[1] + iy) * G.n[0] + ix;
    const T s = dx[ix] * dy[iy] * dz[iz];
    typename cpx_of<T>::t v;
    v.x = read_in<T>(x, in_f64, 2 * i) * s;
    v.y = read_in<T>(x, in_f64, 2 * i + 1) * s;
    grid[(fz * G.nf[1] + fy) * G.nf[0] + fx] = v;
}

template <typename T, int W>
__global__ void __launch_bounds__(INTERP_THREADS)
    k_interp(nufft_geom G, long long m, const int *perm, const int *base, const T *frac, const T *coef_g,
             const typename cpx_of<T>::t *grid, void *out, int out_f64)
{
    typedef typename cpx_of<T>::t C;
    __shared__ T coef[NCOEF];
    load_coef<T>(coef, coef_g, G.deg);
    const int wy = G.act[1] ? W : 1, wz = G.act[2] ? W : 1;
    MR_GRID_STRIDE(s, m)
    {
        T kx[W], ky[W], kz[W];
        long long ix[W];
        axes_vals<T, W>(G, coef, frac + 3 * s, kx, ky, kz);
#pragma unroll
        for (int x = 0; x < W; x++)
            ix[x] = G.act[0] ? wrap(base[3 * s] + x, G.nf[0]) : 0;
        T ar = 0, ai = 0;
        for (int z = 0; z < wz; z++) {
            const long long gz = G.act[2] ? wrap(base[3 * s + 2] + z, G.nf[2]) : 0;
            for (int y = 0; y < wy; y++) {
                const long long gy = G.act[1] ? wrap(base[3 * s + 1] + y, G.nf[1]) : 0;
                const C *row = grid + (gz * G.nf[1] + gy) * G.nf[0];
                T rr = 0, ri = 0;
#pragma unroll
                for (int x = 0; x < W; x++) {
                    const C v = row[ix[x]];
                    rr += kx[x] * v.x;
                    ri += kx[x] * v.y;
                }
                const T kzy = kz[z] * ky[y];
                ar += kzy * rr;
                ai += kzy * ri;
            }
        }
        write_out<T>(out, out_f64, perm[s], ar, ai);
    }
}

/* ---- dispatch on the width ------------------------------------------------------------------------- */

#define MR_W_CASES(F) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F(10) F(11) F(12) F(13) F(14) F(15) F(16)

template <typename T> static cudaError_t spread_attr(int w, size_t shmem)
{
#define MR_ATTR(W)                                                                                             \
    case W:                                                                                                    \
        return cudaFuncSetAttribute(k_spread_tile<T, W>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem);
    switch (w) { MR_W_CASES(MR_ATTR) }
#undef MR_ATTR
    return cudaErrorInvalidValue;
}

/* The groups in order (k_spread_tile, then k_reduce_tiles for the group's split tiles). */
template <typename T> static void launch_spread(const mr_gpu_nufft *p, cudaStream_t s, const void *a, int a_f64, int real)
{
    typedef typename cpx_of<T>::t C;
    for (int gi = 0; gi < p->ngroups; gi++) {
        const struct tile_group *g = &p->groups[gi];
        const long long first = g->sub[0], n = g->sub[1] - first, sfirst = g->split[0], ns = g->split[1] - sfirst;
        if (n == 0)
            continue;
#define MR_SPREAD(W)                                                                                           \
    case W:                                                                                                    \
        k_spread_tile<T, W><<<(unsigned)n, p->tile_threads, p->shmem, s>>>(                                     \
            p->G, p->subs + first, p->perm, p->base, (const T *)p->frac, (const T *)p->coef, a, a_f64, real,    \
            (C *)p->grid, (C *)p->scratch);                                                                    \
        break;
        switch (p->G.w) { MR_W_CASES(MR_SPREAD) }
#undef MR_SPREAD
        if (ns > 0) {
            const unsigned chunks = (unsigned)((p->G.tile[0] * p->G.tile[1] * p->G.tile[2] + SPREAD_THREADS - 1) /
                                               SPREAD_THREADS);
            k_reduce_tiles<T><<<dim3((unsigned)ns, chunks), SPREAD_THREADS, 0, s>>>(
                p->G, p->split + sfirst, (const C *)p->scratch, (C *)p->grid);
        }
    }
}

template <typename T> static void launch_interp(const mr_gpu_nufft *p, cudaStream_t s, void *out, int out_f64)
{
    typedef typename cpx_of<T>::t C;
    const unsigned blocks = mr_gpu_blocks(p->m);
#define MR_INTERP(W)                                                                                           \
    case W:                                                                                                    \
        k_interp<T, W><<<blocks, INTERP_THREADS, 0, s>>>(p->G, p->m, p->perm, p->base, (const T *)p->frac,       \
                                                         (const T *)p->coef, (const C *)p->grid, out, out_f64); \
        break;
    switch (p->G.w) { MR_W_CASES(MR_INTERP) }
#undef MR_INTERP
}

/* ---- the plan ---------------------------------------------------------------------------------------- */

void mr_gpu_nufft_destroy(mr_gpu_nufft *p)
{
    if (!p)
        return;
    if (p->have_plan)
        (void)mr_cufft()->destroy(p->plan);
    mr_gpu_free(p->c, p->perm);
    mr_gpu_free(p->c, p->base);
    mr_gpu_free(p->c, p->frac);
    mr_gpu_free(p->c, p->subs);
    mr_gpu_free(p->c, p->split);
    mr_gpu_free(p->c, p->scratch);
    free(p->groups);
    mr_gpu_free(p->c, p->coef);
    for (int a = 0; a < 3; a++)
        mr_gpu_free(p->c, p->deconv[a]);
    mr_gpu_free(p->c, p->grid);
    free(p);
}

void mr_gpu_nufft_describe(const mr_gpu_nufft *p, int bin[3], int64_t *tiles, int *classes)
{
    for (int a = 0; a < 3; a++)
        bin[a] = p->G.bin[a];
    *tiles = p->nsub;
    *classes = p->nclass;
}

/* Device memory of nbytes (a float allocation of the context); NULL after recording why. */
static void *dev_alloc(mr_gpu_ctx *c, size_t nbytes) { return mr_gpu_alloc(c, (int64_t)((nbytes + 3) / 4)); }

/* Upload n doubles as the plan's type. */
static void *upload_as(mr_gpu_nufft *p, const double *h, long long n, mr_status *st)
{
    const size_t fl = p->f64 ? sizeof(double) : sizeof(float);
    void *d = dev_alloc(p->c, (size_t)n * fl);
    void *tmp = malloc((size_t)n * fl);
    if (!d || !tmp) {
        free(tmp);
        mr_gpu_free(p->c, d);
        *st = MR_ENOMEM;
        return NULL;
    }
    for (long long i = 0; i < n; i++) {
        if (p->f64)
            ((double *)tmp)[i] = h[i];
        else
            ((float *)tmp)[i] = (float)h[i];
    }
    *st = MR_CU(cudaMemcpyAsync(d, tmp, (size_t)n * fl, cudaMemcpyHostToDevice, mr_gpu_ctx_stream(p->c)));
    if (*st == MR_OK)
        *st = mr_gpu_ctx_sync(p->c);
    free(tmp);
    if (*st != MR_OK) {
        mr_gpu_free(p->c, d);
        return NULL;
    }
    return d;
}

/* (samples, tile) pairs: most samples first, then the lower tile (one order on every run). */
static int by_count_desc(const void *a, const void *b)
{
    const longlong2 *x = (const longlong2 *)a, *y = (const longlong2 *)b;
    if (x->x != y->x)
        return x->x > y->x ? -1 : 1;
    return (x->y > y->y) - (x->y < y->y);
}

/* Does tile b's region (with the kernel's halo: [b bin - halo, b bin + bin + w - halo), periodic in nf) meet
 * tile b2's on this axis? */
static int tiles_meet(long long b, long long b2, int bin, int w, long long nf)
{
    const long long len = bin + w;
    if (len >= nf)
        return 1;
    long long d = ((b2 - b) * bin) % nf;
    if (d < 0)
        d += nf;
    return d < len || d > nf - len;
}

/* The classes of the tiles along one axis (cls[nb]): tiles of one class have disjoint regions (a greedy
 * colouring of the circle: every tile takes the first class none of whose tiles it meets). Returns the
 * number of classes. */
static int axis_classes(long long nb, int bin, int w, long long nf, int *cls)
{
    int n = 0;
    for (long long b = 0; b < nb; b++) {
        int c = 0;
        for (; c < n; c++) {
            long long b2 = 0;
            while (b2 < b && !(cls[b2] == c && tiles_meet(b, b2, bin, w, nf)))
                b2++;
            if (b2 == b)
                break;
        }
        cls[b] = c;
        if (c == n)
            n++;
    }
    return n;
}

/* The tiles' plan on the host, from their sample counts (h_count [ntiles]): the classes (axis_classes on
 * each axis, combined, x fastest), then the launches (p->groups): per class, its split tiles' parts first (a
 * new group whenever the scratch would pass p->scratch_limit), then its single tiles, most samples first, in
 * the class's last group, so that the longest blocks start first; the subproblems and split tiles uploaded
 * and the scratch allocated. */
static mr_status plan_tiles(mr_gpu_nufft *p, const int *h_count)
{
    const long long ntiles = p->G.nbins[0] * p->G.nbins[1] * p->G.nbins[2];
    const size_t fl = p->f64 ? sizeof(double) : sizeof(float);
    cudaStream_t s = mr_gpu_ctx_stream(p->c);
    mr_status st = MR_OK;
    int4 *h_subs = NULL, *h_split = NULL;
    long long *first_of = NULL, *by_class = NULL, *class_next = NULL;
    longlong2 *singles = NULL; /* (samples, tile) of one class's single tiles */
    int *axis_cls[3] = {NULL, NULL, NULL};
    int ncls[3] = {1, 1, 1};
    const long long nbx = p->G.nbins[0], nby = p->G.nbins[1];
    long long cells = 1, cap = 1, nsub = 0, nsplit = 0, ns = 0, nsp = 0, slots = 0;
    /* the classes: per axis, then combined (x fastest) */
    for (int a = 0; a < 3 && st == MR_OK; a++) {
        const long long nb = p->G.nbins[a];
        if (!(axis_cls[a] = (int *)malloc((size_t)nb * sizeof(int))))
            st = mr_error(MR_ENOMEM, "GPU NUFFT: out of host memory for the tile classes");
        else if (p->G.act[a])
            ncls[a] = axis_classes(nb, p->G.bin[a], p->G.w, p->G.nf[a], axis_cls[a]);
        else {
            axis_cls[a][0] = 0;
            ncls[a] = 1;
        }
    }
    if (st != MR_OK)
        goto out;
    p->nclass = ncls[0] * ncls[1] * ncls[2];
#define MR_TILE_CLASS(t)                                                                                        \
    ((axis_cls[2][(t) / (nbx * nby)] * ncls[1] + axis_cls[1][((t) / nbx) % nby]) * ncls[0] + axis_cls[0][(t) % nbx])
#define MR_PARTS(c) (((long long)(c) + MR_GPU_NUFFT_SPLIT - 1) / MR_GPU_NUFFT_SPLIT)
    for (int a = 0; a < 3; a++)
        cells *= p->G.tile[a];
    if (p->scratch_limit / (cells * 2 * (long long)fl) > 1)
        cap = p->scratch_limit / (cells * 2 * (long long)fl);
    /* the non-empty tiles by class (a counting sort, tiles ascending in each), their first samples */
    first_of = (long long *)malloc((size_t)ntiles * sizeof(long long));
    by_class = (long long *)malloc((size_t)ntiles * sizeof(long long));
    class_next = (long long *)calloc((size_t)p->nclass + 1, sizeof(long long));
    singles = (longlong2 *)malloc((size_t)ntiles * sizeof *singles);
    if (!first_of || !by_class || !class_next || !singles) {
        st = mr_error(MR_ENOMEM, "GPU NUFFT: out of host memory for %lld tiles", ntiles);
        goto out;
    }
    for (long long t = 0, acc = 0; t < ntiles; acc += h_count[t], t++) {
        first_of[t] = acc;
        if (h_count[t] == 0)
            continue;
        const long long np = MR_PARTS(h_count[t]);
        class_next[MR_TILE_CLASS(t) + 1]++;
        nsub += np;
        nsplit += np > 1;
    }
    for (int c = 0; c < p->nclass; c++)
        class_next[c + 1] += class_next[c];
    for (long long t = 0; t < ntiles; t++)
        if (h_count[t] > 0)
            by_class[class_next[MR_TILE_CLASS(t)]++] = t;
    h_subs = (int4 *)malloc((size_t)(nsub > 0 ? nsub : 1) * sizeof(int4));
    h_split = (int4 *)malloc((size_t)(nsplit > 0 ? nsplit : 1) * sizeof(int4));
    /* at most one group per class and one per split tile */
    p->groups = (struct tile_group *)malloc((size_t)(p->nclass + nsplit + 1) * sizeof *p->groups);
    if (!h_subs || !h_split || !p->groups) {
        st = mr_error(MR_ENOMEM, "GPU NUFFT: out of host memory for %lld subproblems", nsub);
        goto out;
    }
    /* per class (by_class[i..j), class_next[cl] now its end): its split tiles' parts first, then its single
     * tiles (see above) */
    for (long long cl = 0, i = 0; cl < p->nclass; i = class_next[cl++]) {
        const long long j = class_next[cl];
        if (j == i)
            continue;
        struct tile_group *g = &p->groups[p->ngroups++];
        g->sub[0] = ns;
        g->split[0] = nsp;
        long long used = 0, nsingle = 0;
        for (long long k = i; k < j; k++) {
            const long long t = by_class[k], c = h_count[t], np = MR_PARTS(c);
            if (np == 1) {
                singles[nsingle++] = make_longlong2(c, t);
                continue;
            }
            if (used > 0 && used + np > cap) { /* close this group, start another of the same class */
                g->sub[1] = ns;
                g->split[1] = nsp;
                g = &p->groups[p->ngroups++];
                g->sub[0] = ns;
                g->split[0] = nsp;
                used = 0;
            }
            h_split[nsp++] = make_int4((int)t, (int)used, (int)np, 0);
            for (long long q = 0; q < np; q++) {
                const long long f = q * MR_GPU_NUFFT_SPLIT;
                const long long len = c - f < MR_GPU_NUFFT_SPLIT ? c - f : MR_GPU_NUFFT_SPLIT;
                h_subs[ns++] = make_int4((int)t, (int)(first_of[t] + f), (int)len, (int)(used + q));
            }
            used += np;
            slots = used > slots ? used : slots;
        }
        qsort(singles, (size_t)nsingle, sizeof *singles, by_count_desc);
        for (long long k = 0; k < nsingle; k++)
            h_subs[ns++] = make_int4((int)singles[k].y, (int)first_of[singles[k].y], (int)singles[k].x, -1);
        g->sub[1] = ns;
        g->split[1] = nsp;
    }
#undef MR_PARTS
#undef MR_TILE_CLASS
    p->nsub = nsub;
    p->subs = (int4 *)dev_alloc(p->c, (size_t)(nsub > 0 ? nsub : 1) * sizeof(int4));
    p->split = (int4 *)dev_alloc(p->c, (size_t)(nsplit > 0 ? nsplit : 1) * sizeof(int4));
    p->scratch = dev_alloc(p->c, (size_t)(slots > 0 ? slots : 1) * (size_t)cells * 2 * fl);
    if (!p->subs || !p->split || !p->scratch) {
        st = mr_error(MR_ENOMEM, "GPU NUFFT: out of memory for %lld subproblems (%lld scratch tiles)", nsub, slots);
        goto out;
    }
    if (nsub > 0)
        st = MR_CU(cudaMemcpyAsync(p->subs, h_subs, (size_t)nsub * sizeof(int4), cudaMemcpyHostToDevice, s));
    if (st == MR_OK && nsplit > 0)
        st = MR_CU(cudaMemcpyAsync(p->split, h_split, (size_t)nsplit * sizeof(int4), cudaMemcpyHostToDevice, s));
    if (st == MR_OK)
        st = mr_gpu_ctx_sync(p->c); /* before the host arrays go */
out:
    free(h_subs);
    free(h_split);
    free(first_of);
    free(by_class);
    free(class_next);
    free(singles);
    for (int a = 0; a < 3; a++)
        free(axis_cls[a]);
    return st;
}

/* The sort (see the top of the file): coordinates and tile counts on the device; the samples put in tile
 * order by a stable radix sort of (tile, sample), so every run has the same order; the tiles' plan on the
 * host (plan_tiles). */
static mr_status sort_samples(mr_gpu_nufft *p, const mr_grid *g, const float *traj)
{
    const long long m = p->m, ntiles = p->G.nbins[0] * p->G.nbins[1] * p->G.nbins[2];
    const size_t fl = p->f64 ? sizeof(double) : sizeof(float);
    cudaStream_t s = mr_gpu_ctx_stream(p->c);
    float *d_traj = (float *)dev_alloc(p->c, (size_t)m * 3 * sizeof(float));
    int *j0 = (int *)dev_alloc(p->c, (size_t)m * 3 * sizeof(int));
    void *fr = dev_alloc(p->c, (size_t)m * 3 * fl);
    int *keys[2] = {(int *)dev_alloc(p->c, (size_t)m * sizeof(int)), (int *)dev_alloc(p->c, (size_t)m * sizeof(int))};
    int *vals[2] = {(int *)dev_alloc(p->c, (size_t)m * sizeof(int)), (int *)dev_alloc(p->c, (size_t)m * sizeof(int))};
    int *count = (int *)dev_alloc(p->c, (size_t)ntiles * sizeof(int));
    int *h_count = (int *)malloc((size_t)ntiles * sizeof(int));
    void *temp = NULL;
    size_t temp_bytes = 0;
    int end_bit = 1;
    while (end_bit < 31 && (1LL << end_bit) < ntiles)
        end_bit++;
    cub::DoubleBuffer<int> dk(keys[0], keys[1]), dv(vals[0], vals[1]);
    p->perm = (int *)dev_alloc(p->c, (size_t)m * sizeof(int));
    p->base = (int *)dev_alloc(p->c, (size_t)m * 3 * sizeof(int));
    p->frac = dev_alloc(p->c, (size_t)m * 3 * fl);
    mr_status st = MR_OK;
    if (!d_traj || !j0 || !fr || !keys[0] || !keys[1] || !vals[0] || !vals[1] || !count || !h_count || !p->perm ||
        !p->base || !p->frac) {
        st = mr_error(MR_ENOMEM, "GPU NUFFT: out of memory sorting %lld samples into %lld tiles", m, ntiles);
        goto done;
    }
    if ((st = MR_CU(cub::DeviceRadixSort::SortPairs(NULL, temp_bytes, dk, dv, (int)m, 0, end_bit, s))) != MR_OK)
        goto done;
    if (!(temp = dev_alloc(p->c, temp_bytes > 0 ? temp_bytes : 1))) {
        st = mr_error(MR_ENOMEM, "GPU NUFFT: out of memory sorting %lld samples into %lld tiles", m, ntiles);
        goto done;
    }
    if ((st = MR_CU(cudaMemcpyAsync(d_traj, traj, (size_t)m * 3 * sizeof(float), cudaMemcpyHostToDevice, s))) != MR_OK ||
        (st = MR_CU(cudaMemsetAsync(count, 0, (size_t)ntiles * sizeof(int), s))) != MR_OK)
        goto done;
    if (p->f64)
        k_coords<double><<<mr_gpu_blocks(m), MR_GPU_THREADS, 0, s>>>(p->G, m, d_traj, (double)g->scale[0],
                                                                       (double)g->scale[1], (double)g->scale[2], j0,
                                                                       (double *)fr, keys[0], vals[0], count);
    else
        k_coords<float><<<mr_gpu_blocks(m), MR_GPU_THREADS, 0, s>>>(p->G, m, d_traj, (double)g->scale[0],
                                                                      (double)g->scale[1], (double)g->scale[2], j0,
                                                                      (float *)fr, keys[0], vals[0], count);
    if ((st = mr_gpu_ctx_launched(p->c, "NUFFT coordinates")) != MR_OK ||
        (st = MR_CU(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, dk, dv, (int)m, 0, end_bit, s))) != MR_OK ||
        (st = MR_CU(cudaMemcpyAsync(h_count, count, (size_t)ntiles * sizeof(int), cudaMemcpyDeviceToHost, s))) != MR_OK ||
        (st = mr_gpu_ctx_sync(p->c)) != MR_OK)
        goto done;
    if ((st = plan_tiles(p, h_count)) != MR_OK)
        goto done;
    if (p->f64)
        k_sort<double><<<mr_gpu_blocks(m), MR_GPU_THREADS, 0, s>>>(m, dv.Current(), j0, (const double *)fr, p->perm,
                                                                     p->base, (double *)p->frac);
    else
        k_sort<float><<<mr_gpu_blocks(m), MR_GPU_THREADS, 0, s>>>(m, dv.Current(), j0, (const float *)fr, p->perm,
                                                                    p->base, (float *)p->frac);
    if ((st = mr_gpu_ctx_launched(p->c, "NUFFT sort")) == MR_OK)
        st = mr_gpu_ctx_sync(p->c); /* before the host arrays and the temporaries go */
done:
    free(h_count);
    mr_gpu_free(p->c, d_traj);
    mr_gpu_free(p->c, j0);
    mr_gpu_free(p->c, fr);
    for (int i = 0; i < 2; i++) {
        mr_gpu_free(p->c, keys[i]);
        mr_gpu_free(p->c, vals[i]);
    }
    mr_gpu_free(p->c, count);
    mr_gpu_free(p->c, temp);
    return st;
}

mr_status mr_gpu_nufft_create(mr_gpu_nufft **out, mr_gpu_ctx *c, const mr_grid *g, const float *traj, int64_t m,
                              const mr_gpu_nufft_kernel *k)
{
    *out = NULL;
    if (!c || !g || !traj || !k || m < 1 || m >= (1LL << 31) - 1)
        return mr_error(MR_EINVAL, "GPU NUFFT: need a context, a grid, a trajectory and 1..2^31-2 samples");
    if (k->width < 2 || k->width > MR_GPU_NUFFT_MAX_WIDTH || k->degree < 1 || k->degree > MR_GPU_NUFFT_MAX_DEGREE ||
        !k->coef)
        return mr_error(MR_EINVAL, "GPU NUFFT: kernel width %d (2..%d) or degree %d (1..%d) out of range", k->width,
                        MR_GPU_NUFFT_MAX_WIDTH, k->degree, MR_GPU_NUFFT_MAX_DEGREE);
    mr_gpu_nufft *p = (mr_gpu_nufft *)calloc(1, sizeof *p);
    if (!p)
        return mr_error(MR_ENOMEM, "GPU NUFFT: out of host memory");
    p->c = c;
    p->f64 = k->f64 != 0;
    p->scratch_limit = k->scratch_limit > 0 ? k->scratch_limit : MR_GPU_NUFFT_SCRATCH;
    p->m = m;
    nufft_geom *G = &p->G;
    G->w = k->width;
    G->deg = k->degree;
    G->halo = k->width / 2;
    mr_gpu_nufft_kernel kk = *k;
    if (kk.smem_limit <= 0) { /* the device's opt-in limit, less a little for the runtime */
        int optin = 0;
        if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, mr_gpu_ctx_device(c)) != cudaSuccess)
            optin = 48 * 1024;
        (void)cudaGetLastError();
        kk.smem_limit = optin > 48 * 1024 ? (int64_t)optin - 1024 : 48 * 1024;
        if (kk.smem_limit > 128 * 1024) /* two blocks per SM on H100/H200 */
            kk.smem_limit = 110 * 1024;
    }
    int bin[3];
    p->shmem = (size_t)mr_gpu_nufft_tiles(&kk, bin);
    p->nfine = p->nvox = 1;
    int dims[3], rank = 0;
    for (int a = 0; a < 3; a++) {
        G->act[a] = k->fine[a] > 1;
        G->nf[a] = k->fine[a];
        G->n[a] = g->n[a];
        G->center[a] = g->center[a];
        G->bin[a] = bin[a];
        G->nbins[a] = (k->fine[a] + bin[a] - 1) / bin[a];
        G->tile[a] = G->act[a] ? bin[a] + k->width : 1;
        p->nfine *= k->fine[a];
        p->nvox *= g->n[a];
    }
    for (int a = 2; a >= 0; a--)
        if (G->act[a])
            dims[rank++] = (int)G->nf[a];
    {
        int fp = 1;
        for (int a = 0; a < 3; a++)
            fp *= G->act[a] ? k->width : 1;
        fp = (fp + 31) / 32 * 32;
        p->tile_threads = fp > 512 ? 512 : fp < 64 ? 64 : fp;
    }
    const int64_t need = mr_gpu_nufft_bytes(g, m, k);
    size_t fr = 0, tot = 0;
    mr_status st = MR_CU(cudaSetDevice(mr_gpu_ctx_device(c)));
    if (st == MR_OK && (st = MR_CU(cudaMemGetInfo(&fr, &tot))) == MR_OK && (double)need > (double)fr) {
        st = mr_error(MR_ENOMEM,
                      "GPU NUFFT: a %lldx%lldx%lld fine grid with %lld samples needs %.2f GB of GPU memory, %.2f GB "
                      "are free",
                      G->nf[0], G->nf[1], G->nf[2], (long long)m, need * 1e-9, fr * 1e-9);
    }
    if (st == MR_OK && rank > 0)
        st = mr_gpu_fft_load();
    const size_t fl = p->f64 ? sizeof(double) : sizeof(float);
    if (st == MR_OK && !(p->grid = dev_alloc(c, (size_t)p->nfine * 2 * fl)))
        st = MR_ENOMEM;
    if (st == MR_OK) {
        double coef[NCOEF];
        memset(coef, 0, sizeof coef);
        memcpy(coef, k->coef, (size_t)(k->degree + 1) * MR_GPU_NUFFT_COEF_STRIDE * sizeof(double));
        p->coef = upload_as(p, coef, (long long)(k->degree + 1) * MR_GPU_NUFFT_COEF_STRIDE, &st);
    }
    for (int a = 0; a < 3 && st == MR_OK; a++) {
        const double one = 1.0;
        p->deconv[a] = upload_as(p, k->deconv[a] ? k->deconv[a] : &one, k->deconv[a] ? g->n[a] : 1, &st);
    }
    if (st == MR_OK)
        st = sort_samples(p, g, traj);
    if (st == MR_OK)
        st = p->f64 ? MR_CU(spread_attr<double>(k->width, p->shmem)) : MR_CU(spread_attr<float>(k->width, p->shmem));
    if (st == MR_OK && rank > 0) {
        const cufftType type = p->f64 ? CUFFT_Z2Z : CUFFT_C2C;
        st = mr_cufft_check(mr_cufft()->plan_many(&p->plan, rank, dims, NULL, 1, 0, NULL, 1, 0, type, 1),
                            "planning the NUFFT's fine grid");
        p->have_plan = st == MR_OK;
        if (st == MR_OK)
            st = mr_cufft_check(mr_cufft()->set_stream(p->plan, mr_gpu_ctx_stream(c)), "setting the stream");
    }
    if (st != MR_OK) {
        if (st == MR_ENOMEM)
            mr_error(MR_ENOMEM,
                     "GPU NUFFT: out of GPU memory planning a %lldx%lldx%lld fine grid with %lld samples (the plan "
                     "needs about %.2f GB; %.2f GB were free)",
                     G->nf[0], G->nf[1], G->nf[2], (long long)m, need * 1e-9, fr * 1e-9);
        mr_gpu_nufft_destroy(p);
        return st;
    }
    mr_log(MR_LOG_DEBUG,
           "GPU NUFFT: fine %lldx%lldx%lld, w %d, %s, tiles %dx%dx%d, %lld non-empty in %d classes, %zu B shared",
           G->nf[0], G->nf[1], G->nf[2], G->w, p->f64 ? "float64" : "float32", bin[0], bin[1], bin[2], p->nsub,
           p->nclass, p->shmem);
    *out = p;
    return MR_OK;
}

/* ---- execution ------------------------------------------------------------------------------------------ */

static dim3 vox_grid(const nufft_geom *G)
{
    return dim3((unsigned)((G->n[0] + MR_GPU_THREADS - 1) / MR_GPU_THREADS), (unsigned)G->n[1], (unsigned)G->n[2]);
}

static mr_status fft(mr_gpu_nufft *p, int dir)
{
    if (!p->have_plan)
        return MR_OK;
    if (p->f64)
        return mr_cufft_check(mr_cufft()->exec_z2z(p->plan, (cufftDoubleComplex *)p->grid,
                                                   (cufftDoubleComplex *)p->grid, dir),
                              "the NUFFT's transform");
    return mr_cufft_check(mr_cufft()->exec_c2c(p->plan, (cufftComplex *)p->grid, (cufftComplex *)p->grid, dir),
                          "the NUFFT's transform");
}

mr_status mr_gpu_nufft_type1(mr_gpu_nufft *p, int64_t ncoils, const void *d_a, int real_weights, int io_f64,
                             void *d_out)
{
    if (!p || !d_a || !d_out || ncoils < 1)
        return mr_error(MR_EINVAL, "GPU NUFFT type 1: need a plan, arrays and at least one coil");
    cudaStream_t s = mr_gpu_ctx_stream(p->c);
    const size_t io = io_f64 ? sizeof(double) : sizeof(float), fl = p->f64 ? sizeof(double) : sizeof(float);
    const long long in_stride = real_weights ? p->m : 2 * p->m;
    for (int64_t c = 0; c < ncoils; c++) {
        const void *a = (const char *)d_a + (size_t)(c * in_stride) * io;
        void *o = (char *)d_out + (size_t)(c * 2 * p->nvox) * io;
        mr_status st = MR_CU(cudaMemsetAsync(p->grid, 0, (size_t)p->nfine * 2 * fl, s));
        if (st != MR_OK)
            return mr_gpu_ctx_fail(p->c, st);
        if (p->f64)
            launch_spread<double>(p, s, a, io_f64, real_weights);
        else
            launch_spread<float>(p, s, a, io_f64, real_weights);
        if ((st = mr_gpu_ctx_launched(p->c, "NUFFT spreading")) != MR_OK)
            return st;
        if ((st = fft(p, CUFFT_INVERSE)) != MR_OK)
            return mr_gpu_ctx_fail(p->c, st);
        if (p->f64)
            k_deconv_out<double><<<vox_grid(&p->G), MR_GPU_THREADS, 0, s>>>(
                p->G, (const double2 *)p->grid, (const double *)p->deconv[0], (const double *)p->deconv[1],
                (const double *)p->deconv[2], o, io_f64);
        else
            k_deconv_out<float><<<vox_grid(&p->G), MR_GPU_THREADS, 0, s>>>(
                p->G, (const float2 *)p->grid, (const float *)p->deconv[0], (const float *)p->deconv[1],
                (const float *)p->deconv[2], o, io_f64);
        if ((st = mr_gpu_ctx_launched(p->c, "NUFFT deconvolution")) != MR_OK)
            return st;
    }
    return MR_OK;
}

mr_status mr_gpu_nufft_type2(mr_gpu_nufft *p, int64_t ncoils, const void *d_x, int io_f64, void *d_out)
{
    if (!p || !d_x || !d_out || ncoils < 1)
        return mr_error(MR_EINVAL, "GPU NUFFT type 2: need a plan, arrays and at least one coil");
    cudaStream_t s = mr_gpu_ctx_stream(p->c);
    const size_t io = io_f64 ? sizeof(double) : sizeof(float), fl = p->f64 ? sizeof(double) : sizeof(float);
    for (int64_t c = 0; c < ncoils; c++) {
        const void *x = (const char *)d_x + (size_t)(c * 2 * p->nvox) * io;
        void *o = (char *)d_out + (size_t)(c * 2 * p->m) * io;
        mr_status st = MR_CU(cudaMemsetAsync(p->grid, 0, (size_t)p->nfine * 2 * fl, s));
        if (st != MR_OK)
            return mr_gpu_ctx_fail(p->c, st);
        if (p->f64)
            k_deconv_in<double><<<vox_grid(&p->G), MR_GPU_THREADS, 0, s>>>(
                p->G, x, io_f64, (const double *)p->deconv[0], (const double *)p->deconv[1],
                (const double *)p->deconv[2], (double2 *)p->grid);
        else
            k_deconv_in<float><<<vox_grid(&p->G), MR_GPU_THREADS, 0, s>>>(
                p->G, x, io_f64, (const float *)p->deconv[0], (const float *)p->deconv[1], (const float *)p->deconv[2],
                (float2 *)p->grid);
        if ((st = mr_gpu_ctx_launched(p->c, "NUFFT deconvolution")) != MR_OK)
            return st;
        if ((st = fft(p, CUFFT_FORWARD)) != MR_OK)
            return mr_gpu_ctx_fail(p->c, st);
        if (p->f64)
            launch_interp<double>(p, s, o, io_f64);
        else
            launch_interp<float>(p, s, o, io_f64);
        if ((st = mr_gpu_ctx_launched(p->c, "NUFFT interpolation")) != MR_OK)
            return st;
    }
    return MR_OK;
}
