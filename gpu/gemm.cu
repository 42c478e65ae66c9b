/* The exact sums as matrix products on the tensor cores (gpu/gemm.h; docs/GPU.md, "Exact sums as
 * matrix products", has the derivation and the error analysis).
 *
 * Notation. Grid g with edges nx, ny, nz; a "column" is one (iy, iz) line of nx voxels along x; a
 * request is a list of planes iz ("slots"). Per sample m (kappa = k / scale, turns per voxel step):
 *   x fold:  x = ix - cx = (s2 + t2) / 2 with s2 = nx - 1 - 2 cx and t2 = 2 ix - (nx - 1), so voxels
 *            ix and nx-1-ix share |t2|:  e^{i2pi kx x} = e^{i pi kx s2} (C + i sign(t2) S),
 *            C = cos(pi kx |t2|), S = sin(pi kx |t2|).  Table T: nx real rows (cos/sin per |t2|).
 *   Ay[iy][m] = e^{i 2pi ky (iy - cy)},  Bz[iz][m] = e^{i pi kx s2} e^{i 2pi kz (iz - cz)}  (complex).
 * Adjoint: with P[c][m] = a_m Ay[iy_c][m] Bz[iz_c][m] (complex) and the real GEMM D = P . T^T
 * (rows re/im of each column, one column of D per T row),
 *   out[ix][c] = U + i sign(t2) V,  U = D[c][cos row of |t2|], V = D[c][sin row].
 * Forward: F[c][row] from the image (x_hi + x_lo on cos rows, -i (x_hi - x_lo) on sin rows),
 *   G = F . T (contraction over the rows) and out[m] = sum_c conj(Ay Bz)[c][m] G[c][m].
 * Tables are built here on the device in float64 with exact range reduction (mr_turns), stored as
 * float (tf32x3) or double (fp64), samples padded with zeros to a multiple of 32. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "../base/log.h"
#include "cublas_check.h"
#include "cuda_check.h"
#include "gemm.h"
#include "gpu_internal.h"

/* ---- sizes of the MMA kernel ------------------------------------------------------------------- */

#define MR_BK 32      /* samples per pipeline stage */
#define MR_BC 64      /* (y,z) columns per CTA tile (128 real rows: re and im) */
#define MR_BM 128     /* real rows of P per CTA */
#define MR_BN 128     /* T rows per CTA */
#define MR_ZMAX 16    /* distinct planes in one column tile */
#define MR_STAGES 3   /* cp.async pipeline depth */
#define MR_TS_LD (MR_BK + 4)  /* smem row of T (floats): conflict-free B fragments */
#define MR_AY_LD (MR_BK + 4)  /* smem row of Ay and Bw (float2): conflict-free 64-bit reads in the formation */
#define MR_AFRAG (MR_BM / 16 * MR_BK / 8 * 32) /* float4 per A tile (hi or lo): [m16 tile][k8][lane] */
#define MR_THREADS 256
#define MR_KPAD_ALIGN 32
static_assert(MR_BN == MR_GEMM_ROW_ALIGN && MR_KPAD_ALIGN == MR_GEMM_SAMPLE_ALIGN, "mr_gemm_table_bytes (gemm.h)");

/* ---- device helpers ---------------------------------------------------------------------------- */

/* k * n2 / den turns reduced to [-1/2, 1/2], exactly up to one final rounding: k (float) times the
 * integer n2 is exact in double (24 + 21 bits), p - q den with the integer q = rint(p / den) is exact
 * (fma of integers and a multiple of k's last bit, no wider than p), and only r / den rounds. */
__device__ __forceinline__ double mr_turns(float k, int n2, double den)
{
    const double p = (double)k * (double)n2;
    const double q = rint(p / den);
    return fma(-q, den, p) / den;
}

/* Row r of the folded x table: |t2| and whether it is the sine row.
 * even n: rows (2p, 2p+1) = (cos, sin) of |t2| = 2p+1; odd n: row 0 = cos of t2 = 0, rows (2p-1, 2p) =
 * (cos, sin) of |t2| = 2p. */
__host__ __device__ __forceinline__ void mr_fold_row(int n, int r, int *t2, int *is_sin)
{
    if (n % 2 == 0) {
        *t2 = 2 * (r / 2) + 1;
        *is_sin = r & 1;
    } else if (r == 0) {
        *t2 = 0;
        *is_sin = 0;
    } else {
        *t2 = 2 * ((r + 1) / 2);
        *is_sin = !(r & 1);
    }
}

/* Pair p of the fold: the cos/sin rows and the two voxels (ix_hi has t2 > 0); rs = -1 and ix_lo = -1
 * for the centre voxel of an odd edge. */
__host__ __device__ __forceinline__ void mr_fold_pair(int n, int p, int *rc, int *rs, int *ix_hi, int *ix_lo)
{
    if (n % 2 == 0) {
        *rc = 2 * p;
        *rs = 2 * p + 1;
        *ix_hi = n / 2 + p;
        *ix_lo = n / 2 - 1 - p;
    } else if (p == 0) {
        *rc = 0;
        *rs = -1;
        *ix_hi = (n - 1) / 2;
        *ix_lo = -1;
    } else {
        *rc = 2 * p - 1;
        *rs = 2 * p;
        *ix_hi = (n - 1) / 2 + p;
        *ix_lo = (n - 1) / 2 - p;
    }
}

/* Grid geometry as kernel arguments. */
struct mr_gdev {
    int nx, ny, nz, cx, cy, cz;
    double dx, dy, dz; /* 2 * scale: the denominators of mr_turns */
};

static mr_gdev mr_gdev_of(const mr_grid *g)
{
    mr_gdev d;
    d.nx = (int)g->n[0];
    d.ny = (int)g->n[1];
    d.nz = (int)g->n[2];
    d.cx = (int)g->center[0];
    d.cy = (int)g->center[1];
    d.cz = (int)g->center[2];
    d.dx = 2.0 * (double)g->scale[0];
    d.dy = 2.0 * (double)g->scale[1];
    d.dz = 2.0 * (double)g->scale[2];
    return d;
}

template <typename R> struct mr_c2;
template <> struct mr_c2<float> {
    typedef float2 type;
    static __device__ __forceinline__ float2 make(double re, double im) { return make_float2((float)re, (float)im); }
};
template <> struct mr_c2<double> {
    typedef double2 type;
    static __device__ __forceinline__ double2 make(double re, double im) { return make_double2(re, im); }
};

/* Round a float to TF32 (10 explicit mantissa bits), to nearest (ties away from zero), exactly
 * representable in the tensor cores' input format: integer add and mask, no conversion instruction. */
__device__ __forceinline__ uint32_t mr_tf32(float x) { return (__float_as_uint(x) + 0x1000u) & 0xffffe000u; }

/* x = hi + lo, both TF32; |x - hi - lo| <= 2^-22 |x|. */
__device__ __forceinline__ void mr_split(float x, uint32_t *hi, uint32_t *lo)
{
    *hi = mr_tf32(x);
    *lo = mr_tf32(x - __uint_as_float(*hi));
}

/* The same split with the conversion instruction (cvt.rna: ties away, the same result). */
template <int CVT> __device__ __forceinline__ void mr_split_t(float x, uint32_t *hi, uint32_t *lo)
{
    if (!CVT) {
        mr_split(x, hi, lo);
        return;
    }
    uint32_t h, l;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(h) : "f"(x));
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(l) : "f"(x - __uint_as_float(h)));
    *hi = h;
    *lo = l;
}

/* ---- table kernels ----------------------------------------------------------------------------- */

/* Rows [0, nrows_pad): T (real, zero beyond nrows); then ny rows of Ay; then nz rows of Bz. Samples
 * beyond m are zero. */
template <typename R>
__global__ void mr_k_tables(const float *__restrict__ traj, long long m, long long kpad, mr_gdev gd, int nrows,
                            int nrows_pad, R *T, R *Ay, R *Bz)
{
    typedef typename mr_c2<R>::type C2;
    const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const int r = blockIdx.y;
    if (k >= kpad)
        return;
    const bool in = k < m;
    const float kx = in ? traj[3 * k] : 0.0f, ky = in ? traj[3 * k + 1] : 0.0f, kz = in ? traj[3 * k + 2] : 0.0f;
    if (r < nrows_pad) {
        R v = 0;
        if (in && r < nrows) {
            int t2, is_sin;
            mr_fold_row(gd.nx, r, &t2, &is_sin);
            double s, c;
            sincospi(2.0 * mr_turns(kx, t2, gd.dx), &s, &c);
            v = (R)(is_sin ? s : c);
        }
        T[(size_t)r * kpad + k] = v;
        return;
    }
    double s = 0.0, c = 0.0;
    if (r < nrows_pad + gd.ny) {
        const int iy = r - nrows_pad;
        if (in)
            sincospi(2.0 * mr_turns(ky, 2 * (iy - gd.cy), gd.dy), &s, &c);
        ((C2 *)Ay)[(size_t)iy * kpad + k] = mr_c2<R>::make(c, s);
        return;
    }
    const int iz = r - nrows_pad - gd.ny;
    if (in)
        sincospi(2.0 * (mr_turns(kx, gd.nx - 1 - 2 * gd.cx, gd.dx) + mr_turns(kz, 2 * (iz - gd.cz), gd.dz)), &s, &c);
    ((C2 *)Bz)[(size_t)iz * kpad + k] = mr_c2<R>::make(c, s);
}

/* The exponent e of the scale s = 2^e of a call: max |a| 2^e in [2^14, 2^15); 0 when the maximum is
 * zero or not finite (NaN and Inf then show in the result as they would without the scale). */
__device__ __forceinline__ int mr_fp16_scale_exp(const unsigned *amax)
{
    const float mx = __uint_as_float(*amax);
    if (!(mx > 0.0f) || !isfinite(mx))
        return 0;
    int e;
    (void)frexpf(mx, &e); /* mx = f 2^e, f in [0.5, 1) */
    e = 15 - e;
    return e < -120 ? -120 : e > 120 ? 120 : e;
}

/* Bw[slot][k] = s a_k Bz[planes[slot]][k] (the weights of this call on the requested planes); s = 1, or
 * the FP16 scale 2^mr_fp16_scale_exp(amax) when amax is given (MR_GEMM_FP16X3). */
template <typename R>
__global__ void mr_k_weighted(const R *Bz, const float *__restrict__ a, int real, long long m, long long kpad,
                              const int *__restrict__ planes, const unsigned *amax, R *Bw)
{
    const R sc = amax ? (R)ldexpf(1.0f, mr_fp16_scale_exp(amax)) : (R)1;
    typedef typename mr_c2<R>::type C2;
    const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const int slot = blockIdx.y;
    if (k >= kpad)
        return;
    C2 v = mr_c2<R>::make(0.0, 0.0);
    if (k < m) {
        const C2 b = ((const C2 *)Bz)[(size_t)planes[slot] * kpad + k];
        if (real) {
            const R w = sc * (R)a[k];
            v.x = w * b.x;
            v.y = w * b.y;
        } else {
            const R ar = sc * (R)a[2 * k], ai = sc * (R)a[2 * k + 1];
            v.x = ar * b.x - ai * b.y;
            v.y = ar * b.y + ai * b.x;
        }
    }
    ((C2 *)Bw)[(size_t)slot * kpad + k] = v;
}

/* ---- the fused split-TF32 kernel (adjoint) ----------------------------------------------------- *
 * CTA tile: 64 columns (128 real rows of P, re/im) x 128 rows of T, over the samples of one K split.
 * Per stage of 32 samples: T, Ay (per column) and Bw (per distinct plane of the tile) are copied to
 * shared memory with cp.async (3 stages in flight); the CTA forms P = Ay Bw once, splits it into TF32
 * hi/lo pairs in shared memory; 8 warps (2 x 4, 64 x 32 each) run mma.sync m16n8k8 with the B fragments
 * of T split on the fly. Per 8 samples and fragment: t = A_lo B_hi + A_hi B_lo + A_hi B_hi starting from
 * zero (the tensor core's truncating accumulation only ever sees 24 products), then acc += t in FP32
 * with round-to-nearest. Each K split writes its own partial sums; the combine kernel adds the splits
 * in double. */

struct mr_mma_args {
    const float *T;     /* [nrows_pad][kpad] */
    const float2 *Ay;   /* [ny][kpad] */
    const float2 *Bw;   /* [nslots][kpad] */
    const int4 *cols;   /* the pass's columns, MR_BC per tile: (iy or -1, slot, ...) */
    const int2 *tiles;  /* the pass's tiles: (first slot, distinct slots) */
    float *part;        /* [nsplit][nrows_pad][ld] */
    long long kpad;
    int ksplit;         /* samples per split, multiple of MR_BK */
    int ld;             /* 2 * columns of the pass */
    long long split_stride;
};

__device__ __forceinline__ void mr_cp16(void *smem, const void *gmem, int bytes)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(bytes));
}
__device__ __forceinline__ void mr_cp_commit(void) { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void mr_cp_wait(void) { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

/* d = a b + c with mma.sync of the given shape and types: four A, two B and four C/D registers per lane
 * for both shapes used here (m16n8k8 TF32, m16n8k16 FP16). */
#define MR_MMA_SYNC(shape_types)                                                                              \
    asm volatile("mma.sync.aligned." shape_types " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\n" \
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])                                             \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),   \
                   "f"(c[2]), "f"(c[3]))

__device__ __forceinline__ void mr_mma(float d[4], const uint32_t a[4], const uint32_t b[2], const float c[4])
{
    MR_MMA_SYNC("m16n8k8.row.col.f32.tf32.tf32.f32");
}

/* acc += A_lo B_hi + A_hi B_lo + A_hi B_hi with the products summed from zero on the tensor core (its
 * truncating accumulation sees one block only), then added in FP32 with round-to-nearest. */
typedef void (*mr_mma_fn)(float d[4], const uint32_t a[4], const uint32_t b[2], const float c[4]);
template <mr_mma_fn MMA>
__device__ __forceinline__ void mr_split3(float acc[4], const uint32_t ahi[4], const uint32_t alo[4], const uint32_t bhi[2],
                                          const uint32_t blo[2])
{
    const float zero4[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    float t[4];
    MMA(t, alo, bhi, zero4);
    MMA(t, ahi, blo, t);
    MMA(t, ahi, bhi, t);
#pragma unroll
    for (int e = 0; e < 4; e++)
        acc[e] += t[e];
}

struct mr_mma_smem {
    float *Ts;     /* [STAGES][BN][TS_LD] */
    float2 *Ays;   /* [STAGES][BC][AY_LD] */
    float2 *Bzs;   /* [STAGES][ZMAX][AY_LD] */
    int *yrow;     /* [BC] */
    int *zl;       /* [BC] */
};

/* Stage `stage` of the pipeline: T (row length TSLD floats), Ay and Bw (rows of AYLD float2). */
template <int TSLD, int AYLD>
__device__ __forceinline__ void mr_mma_load(const mr_mma_args &a, const mr_mma_smem &sm, int stage, long long k0,
                                              int j0, int2 td, int tid)
{
    float *ts = sm.Ts + stage * MR_BN * TSLD;
    for (int e = tid; e < MR_BN * (MR_BK / 4); e += MR_THREADS) {
        const int r = e / (MR_BK / 4), ch = e % (MR_BK / 4);
        mr_cp16(ts + r * TSLD + ch * 4, a.T + (size_t)(j0 + r) * a.kpad + k0 + ch * 4, 16);
    }
    float2 *ays = sm.Ays + stage * MR_BC * AYLD;
    for (int e = tid; e < MR_BC * (MR_BK / 2); e += MR_THREADS) {
        const int c = e / (MR_BK / 2), ch = e % (MR_BK / 2);
        const int y = sm.yrow[c];
        mr_cp16(ays + c * AYLD + ch * 2, a.Ay + (size_t)(y < 0 ? 0 : y) * a.kpad + k0 + ch * 2, y < 0 ? 0 : 16);
    }
    float2 *bzs = sm.Bzs + stage * MR_ZMAX * AYLD;
    for (int e = tid; e < td.y * (MR_BK / 2); e += MR_THREADS) {
        const int z = e / (MR_BK / 2), ch = e % (MR_BK / 2);
        mr_cp16(bzs + z * AYLD + ch * 2, a.Bw + (size_t)(td.x + z) * a.kpad + k0 + ch * 2, 16);
    }
}

/* One A fragment of P = Ay Bw, split into TF32 hi/lo: the m16 tile mt (8 columns: rows g = re, g + 8 = im
 * of column 8 mt + g) over the 8 samples k8 of stage st. Lane (g, q) computes the samples q and q + 4 of
 * column 8 mt + g, i.e. its own fragment registers {a0, a1, a2, a3} = {re(q), im(q), re(q+4), im(q+4)}
 * (the A layout of mma.sync m16n8k8 and of wgmma m64nNk8 alike). */
template <int CVT>
__device__ __forceinline__ void mr_mma_frag(const mr_mma_smem &sm, int st, int mt, int k8, int lane, uint32_t h[4],
                                            uint32_t l[4])
{
    const int g = lane >> 2, q = lane & 3;
    const int c = mt * 8 + g, k = k8 * 8 + q;
    const float2 *ay = sm.Ays + st * MR_BC * MR_AY_LD + c * MR_AY_LD + k;
    const float2 *bz = sm.Bzs + st * MR_ZMAX * MR_AY_LD + sm.zl[c] * MR_AY_LD + k;
    const float2 a0 = ay[0], a1 = ay[4], b0 = bz[0], b1 = bz[4];
    float v[4];
    v[0] = fmaf(a0.x, b0.x, -a0.y * b0.y);
    v[1] = fmaf(a0.x, b0.y, a0.y * b0.x);
    v[2] = fmaf(a1.x, b1.x, -a1.y * b1.y);
    v[3] = fmaf(a1.x, b1.y, a1.y * b1.x);
#pragma unroll
    for (int e = 0; e < 4; e++)
        mr_split_t<CVT>(v[e], &h[e], &l[e]);
}

template <int CVT>
__device__ __forceinline__ void mr_mma_form(const mr_mma_smem &sm, float4 *Ah, float4 *Al, int st, int u, int lane)
{
    uint32_t h[4], l[4]; /* unit u = (m16 tile u / 4, k8 = u % 4), stored as one float4 for hi and one for
                            lo: the MMA loads them back with one 128-bit load each, already in operand order */
    mr_mma_frag<CVT>(sm, st, u >> 2, u & 3, lane, h, l);
    const int idx = u * 32 + lane;
    Ah[idx] = make_float4(__uint_as_float(h[0]), __uint_as_float(h[1]), __uint_as_float(h[2]), __uint_as_float(h[3]));
    Al[idx] = make_float4(__uint_as_float(l[0]), __uint_as_float(l[1]), __uint_as_float(l[2]), __uint_as_float(l[3]));
}

/* The 16 fragments of a warp (64 x 32) over 8 samples: t = A_lo B_hi + A_hi B_lo + A_hi B_hi from zero,
 * acc += t (FP32, round to nearest). */
template <int CVT, int SP>
__device__ __forceinline__ void mr_mma_k8(const float4 *Ah, const float4 *Al, const float *ts, int k8, int wm, int wn,
                                          int lane, float acc[4][4][4], float sm_[4][4][4])
{
    const int g = lane >> 2, q = lane & 3;
    const float zero4[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    uint32_t bhi[4][2], blo[4][2];
#pragma unroll
    for (int ni = 0; ni < 4; ni++) {
        const float *bp = ts + (wn * 32 + ni * 8 + g) * MR_TS_LD + k8 * 8 + q;
        mr_split_t<CVT>(bp[0], &bhi[ni][0], &blo[ni][0]);
        mr_split_t<CVT>(bp[4], &bhi[ni][1], &blo[ni][1]);
    }
#pragma unroll
    for (int mi = 0; mi < 4; mi++) { /* one m16 tile's A registers live at a time */
        const int idx = ((wm * 4 + mi) * 4 + k8) * 32 + lane;
        const float4 h = Ah[idx], l = Al[idx];
        const uint32_t ahi[4] = {__float_as_uint(h.x), __float_as_uint(h.y), __float_as_uint(h.z), __float_as_uint(h.w)};
        const uint32_t alo[4] = {__float_as_uint(l.x), __float_as_uint(l.y), __float_as_uint(l.z), __float_as_uint(l.w)};
#pragma unroll
        for (int ni = 0; ni < 4; ni++) {
            if (SP) { /* cross terms into their own running accumulator, the big term from zero */
                float t[4];
                mr_mma(sm_[mi][ni], alo, bhi[ni], sm_[mi][ni]);
                mr_mma(sm_[mi][ni], ahi, blo[ni], sm_[mi][ni]);
                mr_mma(t, ahi, bhi[ni], zero4);
#pragma unroll
                for (int e = 0; e < 4; e++)
                    acc[mi][ni][e] += t[e];
            } else {
                mr_split3<mr_mma>(acc[mi][ni], ahi, alo, bhi[ni], blo[ni]);
            }
        }
    }
}

/* The partial sums of a CTA: D[j][2c + r], fragment rows g (re) and g + 8 (im) of column
 * wm*32 + mi*8 + g, T rows 2q, 2q+1 (the C layout of m16n8k8 and m16n8k16 alike). */
__device__ __forceinline__ void mr_mma_store(const mr_mma_args &a, const float acc[4][4][4], int tile, int j0, int split,
                                             int wm, int wn, int lane)
{
    const int g = lane >> 2, q = lane & 3;
    float *part = a.part + (size_t)split * a.split_stride;
#pragma unroll
    for (int mi = 0; mi < 4; mi++)
#pragma unroll
        for (int ni = 0; ni < 4; ni++) {
            const int cl = tile * MR_BC + wm * 32 + mi * 8 + g;
            const int j = j0 + wn * 32 + ni * 8 + 2 * q;
            *(float2 *)(part + (size_t)j * a.ld + 2 * cl) = make_float2(acc[mi][ni][0], acc[mi][ni][2]);
            *(float2 *)(part + (size_t)(j + 1) * a.ld + 2 * cl) = make_float2(acc[mi][ni][1], acc[mi][ni][3]);
        }
}

/* The CTA's start: shared memory after its A tiles (a_end) with rows of TSLD floats (T) and AYLD float2
 * (Ay, Bw), its column table, and the number of pipeline stages in its K split (blockIdx.z). */
template <int TSLD, int AYLD>
__device__ __forceinline__ int mr_mma_begin(const mr_mma_args &a, mr_mma_smem &sm, void *a_end, int2 *td)
{
    sm.Ts = (float *)a_end;
    sm.Ays = (float2 *)(sm.Ts + MR_STAGES * MR_BN * TSLD);
    sm.Bzs = sm.Ays + MR_STAGES * MR_BC * AYLD;
    sm.yrow = (int *)(sm.Bzs + MR_STAGES * MR_ZMAX * AYLD);
    sm.zl = sm.yrow + MR_BC;
    const int tid = threadIdx.x;
    *td = a.tiles[blockIdx.x];
    if (tid < MR_BC) {
        const int4 c = a.cols[(size_t)blockIdx.x * MR_BC + tid];
        sm.yrow[tid] = c.x;
        sm.zl[tid] = c.x >= 0 ? c.y - td->x : 0;
    }
    __syncthreads();
    const long long kbeg = (long long)blockIdx.z * a.ksplit;
    const long long kend = kbeg + a.ksplit < a.kpad ? kbeg + a.ksplit : a.kpad;
    return (int)((kend - kbeg) / MR_BK);
}

/* ---- the fused split-FP16 kernel (adjoint, MR_GEMM_FP16X3) ------------------------------------- *
 * The same tile, pipeline and double-buffered P as the split-TF32 kernel (variant 0: mr_k_mma with
 * mr_ops_fp16 below), with
 * mma.sync m16n8k16 on FP16 operands (twice the work per instruction of m16n8k8 TF32). FP16 has the
 * same 11-bit significand as TF32 but 5 exponent bits, so the weights of the call are scaled by a power
 * of two s (mr_fp16_scale_exp: max |a| s in [2^14, 2^15)) before the products, and the combine kernel
 * multiplies by 1/s (exact). With |Ay| = |Bz| = 1, |P| <= max |a| s < 65504: P = hi + lo with both in
 * FP16 (hi rounded to nearest even, lo = P - hi exact in FP32, then rounded), and the same for T
 * (|T| <= 1). The lo parts may be subnormal: FP16 subnormals are spaced 2^-24 apart (that the tensor
 * cores keep them shows in the measured error, docs/GPU.md), an absolute error <= 2^-25 of T's scale and
 * 2^-40 of P's largest entry, below the FP32
 * rounding of the tables. Per 16 samples and fragment: t = A_lo B_hi + A_hi B_lo + A_hi B_hi from zero,
 * acc += t in FP32 (the truncating accumulation of the tensor core sees 48 products). */

#define MR_TS16_LD (MR_BK + 8)  /* smem row of T (floats): conflict-free 64-bit B fragment loads */
#define MR_AY16_LD (MR_BK + 8)  /* smem row of Ay and Bw (float2): conflict-free 128-bit loads */
#define MR_AFRAG16 (MR_BM / 16 * MR_BK / 16 * 32) /* uint4 per A tile (hi or lo): [m16 tile][k16][lane] */

/* *amax = max over the M weights of |a_m| (non-negative floats order as their bit patterns). */
__global__ void mr_k_absmax(const float *__restrict__ a, int real, long long m, unsigned *amax)
{
    float mx = 0.0f;
    MR_GRID_STRIDE(k, m)
    {
        const float v = real ? fabsf(a[k]) : hypotf(a[2 * k], a[2 * k + 1]);
        mx = (v != v || mx != mx) ? __uint_as_float(0x7fc00000u) : fmaxf(mx, v); /* a NaN stays (scale 1) */
    }
    for (int o = 16; o > 0; o >>= 1)
        mx = __uint_as_float(max(__float_as_uint(mx), __float_as_uint(__shfl_xor_sync(0xffffffffu, mx, o))));
    if ((threadIdx.x & 31) == 0)
        atomicMax(amax, __float_as_uint(mx));
}

/* x = hi + lo in FP16 pairs: hi rounded to nearest even, lo the same rounding of x - hi (exact in FP32). */
__device__ __forceinline__ void mr_split16(float x0, float x1, uint32_t *hi, uint32_t *lo)
{
    const __half2 h = __floats2half2_rn(x0, x1);
    const float2 hf = __half22float2(h);
    const __half2 l = __floats2half2_rn(x0 - hf.x, x1 - hf.y);
    *hi = *(const uint32_t *)&h;
    *lo = *(const uint32_t *)&l;
}

__device__ __forceinline__ void mr_mma16(float d[4], const uint32_t a[4], const uint32_t b[2], const float c[4])
{
    MR_MMA_SYNC("m16n8k16.row.col.f32.f16.f16.f32");
}

/* One unit of P in m16n8k16 A-fragment order: unit u covers the m16 tile mt = u / 2 (rows g = re,
 * g + 8 = im of column 8 mt + g) and the 16 samples of kh = u % 2. Lane (g, q) computes the samples
 * 2q, 2q+1, 2q+8, 2q+9: registers {re(2q,2q+1), im(2q,2q+1), re(2q+8,2q+9), im(2q+8,2q+9)}. */
__device__ __forceinline__ void mr_mma16_form(const mr_mma_smem &sm, uint4 *Ah, uint4 *Al, int st, int u, int lane)
{
    const int mt = u >> 1, kh = u & 1, g = lane >> 2, q = lane & 3;
    const int c = mt * 8 + g, k = kh * 16 + 2 * q;
    const float2 *ay = sm.Ays + st * MR_BC * MR_AY16_LD + c * MR_AY16_LD + k;
    const float2 *bz = sm.Bzs + st * MR_ZMAX * MR_AY16_LD + sm.zl[c] * MR_AY16_LD + k;
    const float4 a0 = *(const float4 *)ay, a8 = *(const float4 *)(ay + 8);
    const float4 b0 = *(const float4 *)bz, b8 = *(const float4 *)(bz + 8);
    float re[4], im[4];
    re[0] = fmaf(a0.x, b0.x, -a0.y * b0.y);
    im[0] = fmaf(a0.x, b0.y, a0.y * b0.x);
    re[1] = fmaf(a0.z, b0.z, -a0.w * b0.w);
    im[1] = fmaf(a0.z, b0.w, a0.w * b0.z);
    re[2] = fmaf(a8.x, b8.x, -a8.y * b8.y);
    im[2] = fmaf(a8.x, b8.y, a8.y * b8.x);
    re[3] = fmaf(a8.z, b8.z, -a8.w * b8.w);
    im[3] = fmaf(a8.z, b8.w, a8.w * b8.z);
    uint32_t h[4], l[4];
    mr_split16(re[0], re[1], &h[0], &l[0]);
    mr_split16(im[0], im[1], &h[1], &l[1]);
    mr_split16(re[2], re[3], &h[2], &l[2]);
    mr_split16(im[2], im[3], &h[3], &l[3]);
    const int idx = u * 32 + lane;
    Ah[idx] = make_uint4(h[0], h[1], h[2], h[3]);
    Al[idx] = make_uint4(l[0], l[1], l[2], l[3]);
}

/* The 16 fragments of a warp (64 x 32) over the 16 samples kh. */
__device__ __forceinline__ void mr_mma16_k16(const uint4 *Ah, const uint4 *Al, const float *ts, int kh, int wm, int wn,
                                             int lane, float acc[4][4][4])
{
    const int g = lane >> 2, q = lane & 3;
    uint32_t bhi[4][2], blo[4][2];
#pragma unroll
    for (int ni = 0; ni < 4; ni++) {
        const float *bp = ts + (wn * 32 + ni * 8 + g) * MR_TS16_LD + kh * 16 + 2 * q;
        const float2 t0 = *(const float2 *)bp, t8 = *(const float2 *)(bp + 8);
        mr_split16(t0.x, t0.y, &bhi[ni][0], &blo[ni][0]);
        mr_split16(t8.x, t8.y, &bhi[ni][1], &blo[ni][1]);
    }
#pragma unroll
    for (int mi = 0; mi < 4; mi++) {
        const int idx = ((wm * 4 + mi) * 2 + kh) * 32 + lane;
        const uint4 h = Ah[idx], l = Al[idx];
        const uint32_t ahi[4] = {h.x, h.y, h.z, h.w}, alo[4] = {l.x, l.y, l.z, l.w};
#pragma unroll
        for (int ni = 0; ni < 4; ni++)
            mr_split3<mr_mma16>(acc[mi][ni], ahi, alo, bhi[ni], blo[ni]);
    }
}

/* ---- the pipeline of both split kernels ---------------------------------------------------------- *
 * An engine (Ops) gives the A fragment type, the samples per MMA step (KSTEP), the shared rows of T
 * (TSLD floats) and of Ay/Bw (AYLD float2), the A tile size (AFRAG fragments), forming one P unit and
 * one MMA step of a warp. A stage of MR_BK samples holds MR_BK / KSTEP steps, and the 8 warps form
 * (MR_BM / 16) (MR_BK / KSTEP) units: MR_BK / KSTEP each. */
template <int CVT, int SP> struct mr_ops_tf32 {
    typedef float4 frag;
    enum { KSTEP = 8, TSLD = MR_TS_LD, AYLD = MR_AY_LD, AFRAG = MR_AFRAG, SPLIT_ACC = SP };
    static __device__ __forceinline__ void form(const mr_mma_smem &sm, frag *h, frag *l, int st, int u, int lane)
    {
        mr_mma_form<CVT>(sm, h, l, st, u, lane);
    }
    static __device__ __forceinline__ void step(const frag *h, const frag *l, const float *ts, int k, int wm, int wn,
                                                int lane, float acc[4][4][4], float sacc[4][4][4])
    {
        mr_mma_k8<CVT, SP>(h, l, ts, k, wm, wn, lane, acc, sacc);
    }
};
struct mr_ops_fp16 {
    typedef uint4 frag;
    enum { KSTEP = 16, TSLD = MR_TS16_LD, AYLD = MR_AY16_LD, AFRAG = MR_AFRAG16, SPLIT_ACC = 0 };
    static __device__ __forceinline__ void form(const mr_mma_smem &sm, frag *h, frag *l, int st, int u, int lane)
    {
        mr_mma16_form(sm, h, l, st, u, lane);
    }
    static __device__ __forceinline__ void step(const frag *h, const frag *l, const float *ts, int k, int wm, int wn,
                                                int lane, float acc[4][4][4], float (*)[4][4])
    {
        mr_mma16_k16(h, l, ts, k, wm, wn, lane, acc);
    }
};

/* Shared memory after the A tiles (mr_mma_begin's layout): the pipeline stages of T (rows of tsld floats)
 * and of Ay and Bw (rows of ayld float2), and the column table. */
static constexpr size_t mr_mma_stage_bytes(int tsld, int ayld)
{
    return (size_t)MR_STAGES * MR_BN * tsld * sizeof(float) +
           (size_t)MR_STAGES * (MR_BC + MR_ZMAX) * ayld * sizeof(float2) + 2 * MR_BC * sizeof(int);
}

template <class Ops> static constexpr size_t mr_mma_smem_bytes(int db)
{
    return (size_t)(db ? 2 : 1) * 2 * Ops::AFRAG * sizeof(typename Ops::frag) +
           mr_mma_stage_bytes(Ops::TSLD, Ops::AYLD);
}

/* DB = 0: one A tile; per stage: barrier, form P, barrier, MMAs.
 * DB = 1: two A tiles; per stage one barrier, and P of the next stage is formed between the MMAs of
 * this one (one unit per warp after each step), so the tensor cores do not wait for it. */
template <class Ops, int DB> __global__ void __launch_bounds__(MR_THREADS, 1) mr_k_mma(const mr_mma_args a)
{
    typedef typename Ops::frag F;
    const int nstep = MR_BK / Ops::KSTEP;
    extern __shared__ __align__(16) unsigned char mr_smem[];
    F *const Ah = (F *)mr_smem, *const Al = Ah + (DB ? 2 : 1) * Ops::AFRAG;
    mr_mma_smem sm;
    int2 td;
    const int nk = mr_mma_begin<Ops::TSLD, Ops::AYLD>(a, sm, Al + (DB ? 2 : 1) * Ops::AFRAG, &td);
    const int tile = blockIdx.x, j0 = blockIdx.y * MR_BN, split = blockIdx.z;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const long long kbeg = (long long)split * a.ksplit;

    const int wm = warp >> 2, wn = warp & 3;
    float acc[4][4][4], sacc[4][4][4]; /* [m16 tile][n8 tile][fragment register] */
    float *const acc1 = &acc[0][0][0], *const sacc1 = &sacc[0][0][0];
#pragma unroll
    for (int i = 0; i < 64; i++)
        acc1[i] = sacc1[i] = 0.0f;

#pragma unroll
    for (int s = 0; s < MR_STAGES - 1; s++) {
        if (s < nk)
            mr_mma_load<Ops::TSLD, Ops::AYLD>(a, sm, s, kbeg + (long long)s * MR_BK, j0, td, tid);
        mr_cp_commit();
    }
    if (DB) {
        mr_cp_wait<MR_STAGES - 2>();
        __syncthreads();
        if (nk > 0)
#pragma unroll
            for (int i = 0; i < nstep; i++)
                Ops::form(sm, Ah, Al, 0, warp + 8 * i, lane);
    }
#pragma unroll 1
    for (int kt = 0; kt < nk; kt++) {
        const int st = kt % MR_STAGES;
        const float *ts = sm.Ts + st * MR_BN * Ops::TSLD;
        if (DB) {
            /* stage kt+1 landed, A tile kt formed and visible, everyone is done with iteration kt-1 */
            mr_cp_wait<MR_STAGES - 3>();
            __syncthreads();
            const int kn = kt + MR_STAGES - 1;
            if (kn < nk)
                mr_mma_load<Ops::TSLD, Ops::AYLD>(a, sm, kn % MR_STAGES, kbeg + (long long)kn * MR_BK, j0, td, tid);
            mr_cp_commit();
            const int b = kt & 1;
            const F *h = Ah + b * Ops::AFRAG, *l = Al + b * Ops::AFRAG;
            F *nh = Ah + (b ^ 1) * Ops::AFRAG, *nl = Al + (b ^ 1) * Ops::AFRAG;
            const bool next = kt + 1 < nk;
            const int sn = (kt + 1) % MR_STAGES;
#pragma unroll
            for (int k = 0; k < nstep; k++) {
                if (next)
                    Ops::form(sm, nh, nl, sn, warp + 8 * k, lane);
                Ops::step(h, l, ts, k, wm, wn, lane, acc, sacc);
            }
        } else {
            mr_cp_wait<MR_STAGES - 2>();
            __syncthreads();
#pragma unroll
            for (int i = 0; i < nstep; i++)
                Ops::form(sm, Ah, Al, st, warp + 8 * i, lane);
            const int kn = kt + MR_STAGES - 1;
            if (kn < nk)
                mr_mma_load<Ops::TSLD, Ops::AYLD>(a, sm, kn % MR_STAGES, kbeg + (long long)kn * MR_BK, j0, td, tid);
            mr_cp_commit();
            __syncthreads();
#pragma unroll
            for (int k = 0; k < nstep; k++)
                Ops::step(Ah, Al, ts, k, wm, wn, lane, acc, sacc);
        }
    }
    if (Ops::SPLIT_ACC)
#pragma unroll
        for (int i = 0; i < 64; i++)
            acc1[i] += sacc1[i];
    mr_mma_store(a, acc, tile, j0, split, wm, wn, lane);
}

#if defined(MR_HAVE_WGMMA)
#include "gemm_wgmma.cuh"
#endif

/* The compiled variants of the split-TF32 kernel (mr_gemm_opts.variant; docs/GPU.md has the
 * measurements), and the split-FP16 kernel. */
typedef struct {
    void (*fn)(const mr_mma_args);
    size_t smem; /* dynamic shared memory per CTA */
} mr_mma_variant;
#define MR_MMA_VARIANT(DB, ...) {mr_k_mma<__VA_ARGS__, DB>, mr_mma_smem_bytes<__VA_ARGS__>(DB)}
static const mr_mma_variant mr_mma_variants[] = {
    MR_MMA_VARIANT(1, mr_ops_tf32<0, 0>), /* 0: double-buffered P tile, integer split, one chain per fragment */
    MR_MMA_VARIANT(0, mr_ops_tf32<0, 0>), /* 1: single P tile, two barriers per stage */
    MR_MMA_VARIANT(1, mr_ops_tf32<1, 0>), /* 2: as 0 with cvt.rna for the split */
    MR_MMA_VARIANT(0, mr_ops_tf32<0, 1>), /* 3: as 1 with the cross terms in a running accumulator */
    MR_MMA_VARIANT(1, mr_ops_fp16),                /* the split-FP16 kernel (MR_GEMM_FP16X3), not a TF32 variant */
};
#define MR_MMA_FP16 4
#define MR_MMA_NVARIANTS MR_MMA_FP16 /* the TF32 variants the options may choose */

static mr_status mr_mma_attributes(int wgmma)
{
    for (size_t i = 0; i < sizeof mr_mma_variants / sizeof mr_mma_variants[0]; i++) {
        const mr_mma_variant *v = &mr_mma_variants[i];
        mr_status st = MR_CU(cudaFuncSetAttribute(v->fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)v->smem));
        if (st != MR_OK)
            return st;
    }
#if defined(MR_HAVE_WGMMA)
    if (wgmma)
        return MR_CU(cudaFuncSetAttribute(mr_k_wgmma, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          (int)mr_wg_smem_bytes()));
#else
    (void)wgmma;
#endif
    return MR_OK;
}

/* Whether the wgmma engine runs on this device: gemm.cu built for sm_90a and compute capability 9.0 (the
 * arch-specific code runs on no other). */
int mr_gemm_wgmma_available(int device)
{
#if defined(MR_HAVE_WGMMA)
    int major = 0, minor = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return major == 9 && minor == 0;
#else
    (void)device;
    return 0;
#endif
}

/* ---- combine: partial sums -> voxels (and their Hermitian mirrors) ------------------------------ */

/* Thread per (column c of the pass, fold pair p), c fastest (coalesced reads of the partials).
 * cols[c] = (iy or -1, slot, mirror iy, mirror slot or -1). D = sum over the splits of part[s][row][2c+r]
 * (double), out[ix_hi] = U + iV, out[ix_lo] = U - iV; a mirror column receives conj at 2 cx - ix. */
template <typename PT, typename OT>
__global__ void mr_k_combine(const PT *__restrict__ part, int nsplit, long long split_stride, int ld,
                             const int4 *__restrict__ cols, int ncols, int nx, int cx, long long plane, int ny,
                             const unsigned *amax, OT *out)
{
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const int npairs = (nx + 1) / 2;
    if (idx >= (long long)ncols * npairs)
        return;
    const int c = (int)(idx % ncols), p = (int)(idx / ncols);
    const int4 cd = cols[c];
    if (cd.x < 0)
        return;
    int rc, rs, ixh, ixl;
    mr_fold_pair(nx, p, &rc, &rs, &ixh, &ixl);
    double ur = 0, ui = 0, vr = 0, vi = 0;
    for (int s = 0; s < nsplit; s++) {
        const PT *b = part + (size_t)s * split_stride + 2 * (size_t)c;
        ur += (double)b[(size_t)rc * ld];
        ui += (double)b[(size_t)rc * ld + 1];
        if (rs >= 0) {
            vr += (double)b[(size_t)rs * ld];
            vi += (double)b[(size_t)rs * ld + 1];
        }
    }
    if (amax) { /* undo the FP16 scale of the weights (a power of two: exact) */
        const double inv = ldexp(1.0, -mr_fp16_scale_exp(amax));
        ur *= inv;
        ui *= inv;
        vr *= inv;
        vi *= inv;
    }
    const double hr = ur - vi, hi = ui + vr, lr = ur + vi, li = ui - vr;
    OT *o = out + 2 * ((size_t)cd.y * plane + (size_t)cd.x * nx);
    o[2 * ixh] = (OT)hr;
    o[2 * ixh + 1] = (OT)hi;
    if (ixl >= 0) {
        o[2 * ixl] = (OT)lr;
        o[2 * ixl + 1] = (OT)li;
    }
    if (cd.w >= 0) {
        OT *mo = out + 2 * ((size_t)cd.w * plane + (size_t)cd.z * nx);
        int m = 2 * cx - ixh;
        if (m >= 0 && m < nx) {
            mo[2 * m] = (OT)hr;
            mo[2 * m + 1] = (OT)(-hi);
        }
        m = 2 * cx - ixl;
        if (ixl >= 0 && m >= 0 && m < nx) {
            mo[2 * m] = (OT)lr;
            mo[2 * m + 1] = (OT)(-li);
        }
    }
}

/* ---- cuBLAS paths: materialised operands ------------------------------------------------------- */

/* Write (re, im) into rows r0 and r0 + 1 (stride ld) at column j of hi, and with SPLIT (float) the
 * TF32 split: hi parts into hi, lo parts into lo. */
template <typename R, int SPLIT>
__device__ __forceinline__ void mr_store_rows(R *hi, R *lo, size_t r0, size_t ld, size_t j, double re, double im)
{
    const size_t i0 = r0 * ld + j, i1 = i0 + ld;
    if (SPLIT) {
        uint32_t h, l;
        mr_split((float)re, &h, &l);
        hi[i0] = (R)__uint_as_float(h);
        lo[i0] = (R)__uint_as_float(l);
        mr_split((float)im, &h, &l);
        hi[i1] = (R)__uint_as_float(h);
        lo[i1] = (R)__uint_as_float(l);
    } else {
        hi[i0] = (R)re;
        hi[i1] = (R)im;
    }
}

/* Lt[2c + r][kk] = P[c][k0 + kk] (re, im), kk < kc, row length ldl; with SPLIT (float) hi into L and
 * lo into Llo. Padding columns are zero. */
template <typename R, int SPLIT>
__global__ void mr_k_lbuild(const R *Ay, const R *Bw, const int4 *__restrict__ cols, long long kpad, long long k0,
                            int kc, int ldl, R *L, R *Llo)
{
    typedef typename mr_c2<R>::type C2;
    const int kk = blockIdx.x * blockDim.x + threadIdx.x;
    const int c = blockIdx.y;
    if (kk >= kc)
        return;
    const int4 cd = cols[c];
    R pr = 0, pi = 0;
    if (cd.x >= 0) {
        const C2 ay = ((const C2 *)Ay)[(size_t)cd.x * kpad + k0 + kk];
        const C2 bw = ((const C2 *)Bw)[(size_t)cd.y * kpad + k0 + kk];
        pr = ay.x * bw.x - ay.y * bw.y;
        pi = ay.x * bw.y + ay.y * bw.x;
    }
    mr_store_rows<R, SPLIT>(L, Llo, 2 * (size_t)c, ldl, kk, pr, pi);
}

/* Th[j][kk], Tl[j][kk] (row length kc): the TF32 split of T[j][k0 + kk]. */
__global__ void mr_k_tsplit(const float *__restrict__ T, long long kpad, long long k0, int kc, float *Th, float *Tl)
{
    const int kk = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y;
    if (kk >= kc)
        return;
    uint32_t h, l;
    mr_split(T[(size_t)j * kpad + k0 + kk], &h, &l);
    Th[(size_t)j * kc + kk] = __uint_as_float(h);
    Tl[(size_t)j * kc + kk] = __uint_as_float(l);
}

/* D[e] (+)= sum_b slot[b][e] in double. */
__global__ void mr_k_slotsum(const float *__restrict__ slots, int nb, long long n, int first, double *D)
{
    const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n)
        return;
    double s = first ? 0.0 : D[e];
    for (int b = 0; b < nb; b++)
        s += (double)slots[(size_t)b * n + e];
    D[e] = s;
}

/* Forward: F[2c + r][j] (row length ldf) from the image x (complex floats, [iz][iy][ix]); cols (iy, iz).
 * With SPLIT, hi into F and lo into Flo. */
template <typename R, int SPLIT>
__global__ void mr_k_fbuild(const float *__restrict__ x, const int4 *__restrict__ cols, int nx, int ny, int nrows,
                            int ldf, R *F, R *Flo)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int c = blockIdx.y;
    if (j >= ldf)
        return;
    const int4 cd = cols[c];
    double fr = 0.0, fi = 0.0;
    if (cd.x >= 0 && j < nrows) {
        int t2, is_sin;
        mr_fold_row(nx, j, &t2, &is_sin);
        const float *row = x + 2 * ((size_t)cd.y * ny * nx + (size_t)cd.x * nx);
        const int ih = (t2 + nx - 1) / 2, il = (nx - 1 - t2) / 2;
        const double hr = row[2 * ih], hi = row[2 * ih + 1];
        const double lr = t2 ? (double)row[2 * il] : 0.0, li = t2 ? (double)row[2 * il + 1] : 0.0;
        if (is_sin) { /* -i (x_hi - x_lo) */
            fr = hi - li;
            fi = -(hr - lr);
        } else {
            fr = hr + lr;
            fi = hi + li;
        }
    }
    mr_store_rows<R, SPLIT>(F, Flo, 2 * (size_t)c, ldf, j, fr, fi);
}

/* Forward reduction over the columns of a pass: part[by][kk] = sum over the block's columns of
 * conj(Ay Bz)[c][k0 + kk] G[kk][c] (G column-major kc x 2 ncols, ld ldg). Block 32 x 8. */
template <typename R>
__global__ void mr_k_freduce(const R *__restrict__ G, int ldg, const R *__restrict__ Ay, const R *__restrict__ Bz,
                             const int4 *__restrict__ cols, int ncols, int cper, long long kpad, long long k0, int kc,
                             double2 *part)
{
    typedef typename mr_c2<R>::type C2;
    __shared__ double2 red[8][32];
    const int kk = blockIdx.x * 32 + threadIdx.x;
    const int c0 = blockIdx.y * cper, c1 = c0 + cper < ncols ? c0 + cper : ncols;
    double sr = 0.0, si = 0.0;
    if (kk < kc) {
        for (int c = c0 + threadIdx.y; c < c1; c += 8) {
            const int4 cd = cols[c];
            if (cd.x < 0)
                continue;
            const C2 ay = ((const C2 *)Ay)[(size_t)cd.x * kpad + k0 + kk];
            const C2 bz = ((const C2 *)Bz)[(size_t)cd.y * kpad + k0 + kk];
            const R pr = ay.x * bz.x - ay.y * bz.y, pi = ay.x * bz.y + ay.y * bz.x;
            const R gr = G[(size_t)(2 * c) * ldg + kk], gi = G[(size_t)(2 * c + 1) * ldg + kk];
            sr += (double)(pr * gr + pi * gi); /* conj(P) G */
            si += (double)(pr * gi - pi * gr);
        }
    }
    red[threadIdx.y][threadIdx.x] = make_double2(sr, si);
    __syncthreads();
    if (threadIdx.y == 0 && kk < kc) {
        for (int y = 1; y < 8; y++) {
            sr += red[y][threadIdx.x].x;
            si += red[y][threadIdx.x].y;
        }
        part[(size_t)blockIdx.y * kc + kk] = make_double2(sr, si);
    }
}

/* acc[off + kk] (+)= sum_y part[y][kk]. */
__global__ void mr_k_fsum(const double2 *__restrict__ part, int ny, int kc, long long off, int first, double2 *acc)
{
    const int kk = blockIdx.x * blockDim.x + threadIdx.x;
    if (kk >= kc)
        return;
    double2 s = first ? make_double2(0.0, 0.0) : acc[off + kk];
    for (int y = 0; y < ny; y++) {
        s.x += part[(size_t)y * kc + kk].x;
        s.y += part[(size_t)y * kc + kk].y;
    }
    acc[off + kk] = s;
}

template <typename OT> __global__ void mr_k_store(const double2 *__restrict__ acc, long long n, OT *out)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[2 * i] = (OT)acc[i].x;
        out[2 * i + 1] = (OT)acc[i].y;
    }
}

/* ---- the Hermitian edge: voxels of mirrored columns whose mirror voxel is off the grid ---------- *
 * E[iy][q] = sum_m Ay[iy][m] W[q][m],  W[q][m] = a_m e^{i2pi (kx (ix_e - cx) + kz (iz_q - cz))}: one
 * complex GEMM (ZGEMM) per edge x, operands in float64 with exact phases, chunked over the samples. */
__global__ void mr_k_edge_ops(const float *__restrict__ traj, const float *__restrict__ a, int real, long long m,
                              long long k0, int kc, mr_gdev gd, int ix, const int *__restrict__ qz, double2 *Ae,
                              double2 *W)
{
    const int kk = blockIdx.x * blockDim.x + threadIdx.x;
    const int r = blockIdx.y;
    if (kk >= kc)
        return;
    const long long k = k0 + kk;
    double s = 0.0, c = 0.0;
    if (r < gd.ny) {
        if (k < m)
            sincospi(2.0 * mr_turns(traj[3 * k + 1], 2 * (r - gd.cy), gd.dy), &s, &c);
        Ae[(size_t)r * kc + kk] = make_double2(c, s);
        return;
    }
    const int qi = r - gd.ny;
    double2 v = make_double2(0.0, 0.0);
    if (k < m) {
        sincospi(2.0 * (mr_turns(traj[3 * k], 2 * (ix - gd.cx), gd.dx) +
                        mr_turns(traj[3 * k + 2], 2 * (qz[qi] - gd.cz), gd.dz)),
                 &s, &c);
        const double ar = real ? (double)a[k] : (double)a[2 * k], ai = real ? 0.0 : (double)a[2 * k + 1];
        v = make_double2(ar * c - ai * s, ar * s + ai * c);
    }
    W[(size_t)qi * kc + kk] = v;
}

/* out[slot][iy][ix] = E[iy + q ny] for the edge columns (iy, slot, q). */
template <typename OT>
__global__ void mr_k_edge_store(const double2 *__restrict__ E, const int4 *__restrict__ ec, int n, int ny, int nx,
                                int ix, long long plane, OT *out)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const int4 e = ec[i];
    const double2 v = E[(size_t)e.z * ny + e.x];
    OT *o = out + 2 * ((size_t)e.y * plane + (size_t)e.x * nx + ix);
    o[0] = (OT)v.x;
    o[1] = (OT)v.y;
}

/* ---- host side --------------------------------------------------------------------------------- */

typedef struct {
    void *p;
    size_t bytes;
} mr_dbuf;

/* Grow-only device buffer; contents are not kept. */
static mr_status mr_dbuf_reserve(mr_dbuf *b, size_t bytes) { return mr_gpu_grow(&b->p, &b->bytes, bytes); }

static void mr_dbuf_free(mr_dbuf *b)
{
    if (b->p)
        (void)cudaFree(b->p);
    b->p = NULL;
    b->bytes = 0;
}

typedef struct {
    int valid, dbl;
    mr_grid g;
    int nrows, nrows_pad;
    mr_dbuf T, Ay, Bz;
    uint64_t used;
} mr_tables;

enum { MR_WS_BW, MR_WS_COLS, MR_WS_TILES, MR_WS_PLANES, MR_WS_PART, MR_WS_L, MR_WS_L2, MR_WS_T1, MR_WS_T2,
       MR_WS_SLOTS, MR_WS_ACC, MR_WS_ACCP, MR_WS_EA, MR_WS_EW, MR_WS_EC, MR_WS_EQ, MR_WS_ECOLS, MR_WS_IN,
       MR_WS_OUT, MR_WS_AMAX, MR_WS_COUNT };

struct mr_gemm_plan {
    mr_gemm_opts o;
    int64_t m, kpad;
    float *d_traj;
    cublasHandle_t cb;
    cudaStream_t own, s;
    cudaEvent_t ev0, ev1;
    mr_tables tab[2];
    uint64_t clock;
    mr_dbuf ws[MR_WS_COUNT];
    double last_ms;
    int wgmma; /* the tf32x3 adjoint runs mr_k_wgmma (engine WGMMA, or AUTO where it is available) */
};

const char *mr_gemm_adjoint_kernel(const mr_gemm_plan *p, mr_gemm_precision prec)
{
    static const char *const mma[] = {"tf32x3 mma v0", "tf32x3 mma v1", "tf32x3 mma v2", "tf32x3 mma v3"};
    static_assert(sizeof mma / sizeof mma[0] == MR_MMA_NVARIANTS, "a name per mma.sync variant");
    if (prec == MR_GEMM_FP64)
        return "fp64 dgemm";
    if (prec == MR_GEMM_FP16X3)
        return "fp16x3 mma";
    if (p->o.engine == MR_GEMM_ENGINE_CUBLAS)
        return "tf32x3 cublas";
    return p->wgmma ? "tf32x3 wgmma" : mma[p->o.variant];
}

static void mr_free_buffers(mr_gemm_plan *p)
{
    for (int i = 0; i < 2; i++) {
        mr_dbuf_free(&p->tab[i].T);
        mr_dbuf_free(&p->tab[i].Ay);
        mr_dbuf_free(&p->tab[i].Bz);
        p->tab[i].valid = 0;
    }
    for (int i = 0; i < MR_WS_COUNT; i++)
        mr_dbuf_free(&p->ws[i]);
}

void mr_gemm_release(mr_gemm_plan *p)
{
    if (!p)
        return;
    (void)cudaSetDevice(p->o.device);
    if (p->s)
        (void)cudaStreamSynchronize(p->s);
    mr_free_buffers(p);
    (void)cudaGetLastError();
}

void mr_gemm_destroy(mr_gemm_plan *p)
{
    if (!p)
        return;
    mr_gemm_release(p);
    if (p->d_traj)
        (void)cudaFree(p->d_traj);
    if (p->cb)
        (void)mr_cb.destroy(p->cb);
    if (p->ev0)
        (void)cudaEventDestroy(p->ev0);
    if (p->ev1)
        (void)cudaEventDestroy(p->ev1);
    if (p->own)
        (void)cudaStreamDestroy(p->own);
    (void)cudaGetLastError();
    free(p);
}

mr_status mr_gemm_create(mr_gemm_plan **out, const float *traj, int64_t m, const mr_gemm_opts *o)
{
    if (!out)
        return mr_error(MR_EINVAL, "mr_gemm_create: out is NULL");
    *out = NULL;
    if (!traj || m < 1 || m > MR_MAX_SAMPLES)
        return mr_error(MR_EINVAL, "mr_gemm_create: need a trajectory and 1 <= M <= %lld samples (M = %lld)",
                        (long long)MR_MAX_SAMPLES, (long long)m);
    mr_gemm_opts def;
    mr_gemm_opts_default(&def);
    if (!o)
        o = &def;
    if (o->split_samples < 0 || o->split_samples % MR_KPAD_ALIGN || o->mem_fraction < 0 || o->mem_fraction > 1 ||
        o->max_columns < 0 || o->max_samples < 0 || o->variant < 0 || o->variant >= MR_MMA_NVARIANTS ||
        o->engine < MR_GEMM_ENGINE_AUTO || o->engine > MR_GEMM_ENGINE_WGMMA)
        return mr_error(MR_EINVAL,
                        "mr_gemm_create: bad options (split_samples %d must be a multiple of %d, mem_fraction %g in "
                        "[0, 1], caps >= 0, variant %d in 0..%d, engine %d in %d..%d)",
                        o->split_samples, MR_KPAD_ALIGN, o->mem_fraction, o->variant, MR_MMA_NVARIANTS - 1,
                        (int)o->engine, (int)MR_GEMM_ENGINE_AUTO, (int)MR_GEMM_ENGINE_WGMMA);
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        n = 0;
    }
    if (o->device < 0 || o->device >= n)
        return mr_error(MR_ENODEV, "GPU %d is not usable (%d CUDA devices found)", o->device, n);
    const int wgmma_ok = mr_gemm_wgmma_available(o->device);
    if (o->engine == MR_GEMM_ENGINE_WGMMA && !wgmma_ok)
        return mr_error(MR_ENODEV, "the wgmma engine needs a GPU of compute capability 9.0 and a build for sm_90a "
                                   "(CMAKE_CUDA_ARCHITECTURES with 90); GPU %d does not qualify",
                        o->device);
    mr_status st = mr_gemm_load();
    if (st != MR_OK)
        return st;
    mr_gemm_plan *p = (mr_gemm_plan *)calloc(1, sizeof *p);
    if (!p)
        return mr_error(MR_ENOMEM, "mr_gemm_create: out of host memory");
    p->o = *o;
    p->wgmma = o->engine == MR_GEMM_ENGINE_WGMMA || (o->engine == MR_GEMM_ENGINE_AUTO && wgmma_ok);
    if (p->o.mem_fraction == 0)
        p->o.mem_fraction = def.mem_fraction;
    if (p->o.split_samples == 0)
        p->o.split_samples = def.split_samples;
    p->m = m;
    p->kpad = (m + MR_KPAD_ALIGN - 1) / MR_KPAD_ALIGN * MR_KPAD_ALIGN;
    if ((st = MR_CU(cudaSetDevice(o->device))) != MR_OK ||
        (st = MR_CU(cudaStreamCreateWithFlags(&p->own, cudaStreamNonBlocking))) != MR_OK ||
        (st = MR_CU(cudaEventCreate(&p->ev0))) != MR_OK || (st = MR_CU(cudaEventCreate(&p->ev1))) != MR_OK ||
        (st = MR_CU(cudaMalloc((void **)&p->d_traj, (size_t)m * 3 * sizeof(float)))) != MR_OK ||
        /* on the plan's own stream and waited for: a plain cudaMemcpy from pageable memory returns before its
         * DMA has landed, and the legacy stream does not order the non-blocking stream's table kernels after
         * it (they read samples still in flight: an intermittent wrong Q, test_gpu_gemm on the H200) */
        (st = MR_CU(cudaMemcpyAsync(p->d_traj, traj, (size_t)m * 3 * sizeof(float), cudaMemcpyHostToDevice,
                                    p->own))) != MR_OK ||
        (st = MR_CU(cudaStreamSynchronize(p->own))) != MR_OK ||
        (st = mr_mma_attributes(p->wgmma)) != MR_OK) {
        mr_gemm_destroy(p);
        return st;
    }
    p->s = p->own;
    *out = p;
    return MR_OK;
}

/* The cuBLAS handle, made on first use: the MMA adjoint of complex weights (F^H d) needs none, so a run
 * that takes Q from the cache never creates one. */
static mr_status mr_handle(mr_gemm_plan *p)
{
    mr_status st = MR_OK;
    if (!p->cb && (st = MR_CB(mr_cb.create(&p->cb))) != MR_OK)
        p->cb = NULL;
    if (st == MR_OK && (st = MR_CB(mr_cb.set_stream(p->cb, p->s))) != MR_OK) {
        (void)mr_cb.destroy(p->cb);
        p->cb = NULL;
    }
    return st;
}

mr_status mr_gemm_set_stream(mr_gemm_plan *p, void *stream)
{
    if (!p)
        return mr_error(MR_EINVAL, "mr_gemm_set_stream: plan is NULL");
    mr_status st = MR_CU(cudaSetDevice(p->o.device));
    if (st != MR_OK)
        return st;
    p->s = stream ? (cudaStream_t)stream : p->own;
    return p->cb ? MR_CB(mr_cb.set_stream(p->cb, p->s)) : MR_OK;
}

double mr_gemm_last_ms(const mr_gemm_plan *p) { return p ? p->last_ms : 0.0; }

static mr_status mr_check_grid(const mr_grid *g, const char *fn)
{
    if (!g)
        return mr_error(MR_EINVAL, "%s: grid is NULL", fn);
    for (int a = 0; a < 3; a++)
        if (g->n[a] < 1 || g->n[a] > 2 * MR_MAX_MATRIX_EDGE || g->scale[a] < 1 || g->scale[a] > 2 * MR_MAX_MATRIX_EDGE ||
            g->center[a] < -(1 << 16) || g->center[a] > (1 << 16))
            return mr_error(MR_EINVAL, "%s: bad grid axis %d (n %lld, center %lld, scale %lld)", fn, a,
                            (long long)g->n[a], (long long)g->center[a], (long long)g->scale[a]);
    return MR_OK;
}

static size_t mr_ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

/* The tables of grid g in float or double: cached (two entries, least recently used replaced). */
static mr_status mr_tables_get(mr_gemm_plan *p, const mr_grid *g, int dbl, mr_tables **out)
{
    p->clock++;
    int victim = -1;
    for (int i = 0; i < 2; i++) {
        mr_tables *t = &p->tab[i];
        if (t->valid && t->dbl == dbl && memcmp(&t->g, g, sizeof *g) == 0) {
            t->used = p->clock;
            *out = t;
            return MR_OK;
        }
        if (!t->valid && victim < 0)
            victim = i;
    }
    if (victim < 0)
        victim = p->tab[0].used <= p->tab[1].used ? 0 : 1;
    mr_tables *t = &p->tab[victim];
    t->valid = 0;
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    const int nrows = (int)g->n[0], nrows_pad = (int)mr_ceil_div((size_t)nrows, MR_BN) * MR_BN;
    mr_status st;
    if ((st = mr_dbuf_reserve(&t->T, (size_t)nrows_pad * p->kpad * es)) != MR_OK ||
        (st = mr_dbuf_reserve(&t->Ay, (size_t)g->n[1] * p->kpad * 2 * es)) != MR_OK ||
        (st = mr_dbuf_reserve(&t->Bz, (size_t)g->n[2] * p->kpad * 2 * es)) != MR_OK) {
        mr_dbuf_free(&t->T);
        mr_dbuf_free(&t->Ay);
        mr_dbuf_free(&t->Bz);
        return mr_error(st, "GPU GEMM: no device memory for the tables of the %lldx%lldx%lld grid (%.2f GB): %s",
                        (long long)g->n[0], (long long)g->n[1], (long long)g->n[2],
                        (double)((size_t)(nrows_pad + 2 * g->n[1] + 2 * g->n[2]) * p->kpad * es) * 1e-9,
                        mr_last_error());
    }
    const mr_gdev gd = mr_gdev_of(g);
    const dim3 grid((unsigned)mr_ceil_div((size_t)p->kpad, 256), (unsigned)(nrows_pad + g->n[1] + g->n[2]));
    if (dbl)
        mr_k_tables<double><<<grid, 256, 0, p->s>>>(p->d_traj, p->m, p->kpad, gd, nrows, nrows_pad,
                                                     (double *)t->T.p, (double *)t->Ay.p, (double *)t->Bz.p);
    else
        mr_k_tables<float><<<grid, 256, 0, p->s>>>(p->d_traj, p->m, p->kpad, gd, nrows, nrows_pad, (float *)t->T.p,
                                                    (float *)t->Ay.p, (float *)t->Bz.p);
    if ((st = MR_CU(cudaGetLastError())) != MR_OK)
        return st;
    t->valid = 1;
    t->dbl = dbl;
    t->g = *g;
    t->nrows = nrows;
    t->nrows_pad = nrows_pad;
    t->used = p->clock;
    *out = t;
    return MR_OK;
}

/* ---- column planning --------------------------------------------------------------------------- */

typedef struct {
    int4 *cols;        /* computed columns, padded per tile of MR_BC: (iy or -1, slot, mirror iy, mirror slot) */
    int2 *tiles;       /* (first slot, distinct slots) */
    int64_t ntiles;
    int nedge_x;       /* voxels along x of a mirrored column that have no mirror on the grid */
    int edge_x[2];
    int4 *ecols;       /* mirrored columns needing the edge: (iy, slot, q, 0) */
    int64_t necols;
    int *qslot;        /* distinct slots of ecols */
    int nq;
} mr_colplan;

static void mr_colplan_free(mr_colplan *c)
{
    free(c->cols);
    free(c->tiles);
    free(c->ecols);
    free(c->qslot);
    memset(c, 0, sizeof *c);
}

/* Columns of the planes list; with herm, each mirror pair (both in the list) is computed once, the
 * column with the smaller (slot, iy) key; self-mirror columns and columns whose mirror is off the grid
 * or off the list are computed. Tiles of MR_BC columns with at most MR_ZMAX distinct slots. */
static mr_status mr_colplan_build(const mr_grid *g, const int64_t *planes, int64_t np, int herm, mr_colplan *cp)
{
    memset(cp, 0, sizeof *cp);
    const int nx = (int)g->n[0], ny = (int)g->n[1], nz = (int)g->n[2];
    const int cx = (int)g->center[0], cy = (int)g->center[1], cz = (int)g->center[2];
    int *slot_of = (int *)malloc((size_t)nz * sizeof(int));
    if (!slot_of)
        return mr_error(MR_ENOMEM, "GPU GEMM: out of host memory");
    for (int z = 0; z < nz; z++)
        slot_of[z] = -1;
    for (int64_t s = 0; s < np; s++) {
        if (planes[s] < 0 || planes[s] >= nz || slot_of[planes[s]] >= 0) {
            const long long bad = (long long)planes[s];
            free(slot_of);
            return mr_error(MR_EINVAL, "GPU GEMM: plane %lld (entry %lld) is outside [0, %d) or repeated", bad,
                            (long long)s, nz);
        }
        slot_of[planes[s]] = (int)s;
    }
    if (herm) {
        for (int ix = 0; ix < nx; ix++)
            if (2 * cx - ix < 0 || 2 * cx - ix >= nx) {
                if (cp->nedge_x == 2) { /* a far-off-centre grid: the symmetry would not pay */
                    herm = 0;
                    cp->nedge_x = 0;
                    break;
                }
                cp->edge_x[cp->nedge_x++] = ix;
            }
    }
    const size_t maxcols = (size_t)np * ny;
    /* worst case one tile per MR_ZMAX... a new tile per slot when ny < MR_BC: bounded by cols + slots tiles */
    const size_t maxtiles = mr_ceil_div(maxcols, MR_BC) + (size_t)np + 1;
    cp->cols = (int4 *)malloc(maxtiles * MR_BC * sizeof(int4));
    cp->tiles = (int2 *)malloc(maxtiles * sizeof(int2));
    cp->ecols = (int4 *)malloc((maxcols ? maxcols : 1) * sizeof(int4));
    cp->qslot = (int *)malloc((size_t)(np ? np : 1) * sizeof(int));
    int *q_of = (int *)malloc((size_t)(np ? np : 1) * sizeof(int));
    if (!cp->cols || !cp->tiles || !cp->ecols || !cp->qslot || !q_of) {
        free(slot_of);
        free(q_of);
        mr_colplan_free(cp);
        return mr_error(MR_ENOMEM, "GPU GEMM: out of host memory for %lld columns", (long long)maxcols);
    }
    for (int64_t s = 0; s < np; s++)
        q_of[s] = -1;
    int64_t nt = 0, fill = MR_BC; /* columns in the current tile */
    for (int s = 0; s < (int)np; s++) {
        const int iz = (int)planes[s], mz = 2 * cz - iz;
        const int ms = (herm && mz >= 0 && mz < nz) ? slot_of[mz] : -1;
        for (int iy = 0; iy < ny; iy++) {
            const int my = 2 * cy - iy;
            const int in = ms >= 0 && my >= 0 && my < ny;
            if (in && (ms < s || (ms == s && my < iy))) { /* mirrored: taken from its partner */
                if (cp->nedge_x > 0) {
                    if (q_of[s] < 0) {
                        q_of[s] = cp->nq;
                        cp->qslot[cp->nq++] = s;
                    }
                    cp->ecols[cp->necols++] = make_int4(iy, s, q_of[s], 0);
                }
                continue;
            }
            if (fill == MR_BC || s - cp->tiles[nt - 1].x + 1 > MR_ZMAX) {
                for (; nt > 0 && fill < MR_BC; fill++) /* pad the current tile */
                    cp->cols[(nt - 1) * MR_BC + fill] = make_int4(-1, 0, -1, -1);
                cp->tiles[nt++] = make_int2(s, 1);
                fill = 0;
            }
            cp->tiles[nt - 1].y = s - cp->tiles[nt - 1].x + 1;
            const int self = in && ms == s && my == iy;
            cp->cols[(nt - 1) * MR_BC + fill++] = (in && !self) ? make_int4(iy, s, my, ms) : make_int4(iy, s, -1, -1);
        }
    }
    for (; nt > 0 && fill < MR_BC; fill++)
        cp->cols[(nt - 1) * MR_BC + fill] = make_int4(-1, 0, -1, -1);
    cp->ntiles = nt;
    free(slot_of);
    free(q_of);
    return MR_OK;
}

/* Work-space budget of one call in bytes. */
static size_t mr_budget(mr_gemm_plan *p)
{
    size_t fr = 0, tot = 0;
    if (cudaMemGetInfo(&fr, &tot) != cudaSuccess) {
        (void)cudaGetLastError();
        fr = 0;
    }
    size_t held = 0;
    for (int i = 0; i < MR_WS_COUNT; i++)
        held += p->ws[i].bytes;
    const size_t b = (size_t)((double)(fr + held) * p->o.mem_fraction);
    return p->o.max_work_bytes > 0 && b > (size_t)p->o.max_work_bytes ? (size_t)p->o.max_work_bytes : b;
}

static mr_status mr_begin(mr_gemm_plan *p)
{
    mr_status st = MR_CU(cudaSetDevice(p->o.device));
    if (st == MR_OK)
        st = MR_CU(cudaEventRecord(p->ev0, p->s));
    return st;
}

static mr_status mr_end(mr_gemm_plan *p)
{
    mr_status st = MR_CU(cudaGetLastError());
    if (st == MR_OK)
        st = MR_CU(cudaEventRecord(p->ev1, p->s));
    if (st == MR_OK)
        st = MR_CU(cudaStreamSynchronize(p->s));
    float ms = 0.0f;
    if (st == MR_OK && (st = MR_CU(cudaEventElapsedTime(&ms, p->ev0, p->ev1))) == MR_OK)
        p->last_ms = ms;
    return st;
}

static mr_status mr_upload(mr_gemm_plan *p, int which, const void *src, size_t bytes)
{
    mr_status st = mr_dbuf_reserve(&p->ws[which], bytes);
    if (st == MR_OK && bytes)
        st = MR_CU(cudaMemcpyAsync(p->ws[which].p, src, bytes, cudaMemcpyHostToDevice, p->s));
    if (st == MR_OK) /* the host arrays are freed by the caller after this returns */
        st = MR_CU(cudaStreamSynchronize(p->s));
    return st;
}

static unsigned mr_blocks(long long n, int threads) { return (unsigned)((n + threads - 1) / threads); }

/* Combine launch for a pass. */
template <typename PT>
static void mr_launch_combine(mr_gemm_plan *p, const PT *part, int nsplit, long long split_stride, int ld,
                              const int4 *cols, int ncols, const mr_grid *g, const unsigned *amax, void *out,
                              mr_gemm_type ot)
{
    const int npairs = (int)(g->n[0] + 1) / 2;
    const long long n = (long long)ncols * npairs;
    const long long plane = g->n[0] * g->n[1];
    if (ot == MR_GEMM_F64)
        mr_k_combine<PT, double><<<mr_blocks(n, 256), 256, 0, p->s>>>(part, nsplit, split_stride, ld, cols, ncols,
                                                                      (int)g->n[0], (int)g->center[0], plane,
                                                                      (int)g->n[1], amax, (double *)out);
    else
        mr_k_combine<PT, float><<<mr_blocks(n, 256), 256, 0, p->s>>>(part, nsplit, split_stride, ld, cols, ncols,
                                                                     (int)g->n[0], (int)g->center[0], plane,
                                                                     (int)g->n[1], amax, (float *)out);
}

/* Columns per pass (a multiple of MR_BC) for a per-column cost in bytes. */
static int64_t mr_pass_columns(mr_gemm_plan *p, size_t per_col, size_t fixed, int64_t ncols)
{
    const size_t budget = mr_budget(p);
    int64_t c = budget > fixed ? (int64_t)((budget - fixed) / (per_col ? per_col : 1)) : 0;
    if (p->o.max_columns > 0 && c > p->o.max_columns)
        c = p->o.max_columns;
    if (c > 65535 / MR_BC * MR_BC) /* launch grids put the pass's columns on gridDim.y */
        c = 65535 / MR_BC * MR_BC;
    c = c / MR_BC * MR_BC;
    if (c < MR_BC)
        c = MR_BC;
    return c < ncols ? c : ncols;
}

/* Samples per chunk of the cuBLAS paths (multiple of 32). */
static int64_t mr_chunk_samples(mr_gemm_plan *p, size_t per_sample, int64_t want)
{
    const size_t budget = mr_budget(p);
    int64_t k = (int64_t)(budget / (per_sample ? per_sample : 1));
    if (k > want)
        k = want;
    if (p->o.max_samples > 0 && k > p->o.max_samples)
        k = p->o.max_samples;
    k = k / MR_KPAD_ALIGN * MR_KPAD_ALIGN;
    if (k < MR_KPAD_ALIGN)
        k = MR_KPAD_ALIGN;
    return k < p->kpad ? k : p->kpad;
}

/* The MMA engine over the pass's tiles: split TF32 (the wgmma kernel where the plan uses it, else the
 * mma.sync variant of the options), or split FP16 when amax (the device maximum of |a|, which scaled Bw)
 * is given. */
static mr_status mr_adjoint_mma(mr_gemm_plan *p, const mr_grid *g, const mr_tables *t, const mr_colplan *cp,
                                const unsigned *amax, void *out, mr_gemm_type ot)
{
    int64_t ks = p->o.split_samples;
    while (mr_ceil_div((size_t)p->kpad, (size_t)ks) > 65535)
        ks *= 2;
    const int nsplit = (int)mr_ceil_div((size_t)p->kpad, (size_t)ks);
    const size_t per_col = (size_t)nsplit * t->nrows_pad * 2 * sizeof(float);
    const int64_t ncols = cp->ntiles * MR_BC;
    int64_t pc = mr_pass_columns(p, per_col, 0, ncols);
    mr_status st;
    for (;;) {
        st = mr_dbuf_reserve(&p->ws[MR_WS_PART], (size_t)pc * per_col);
        if (st != MR_ENOMEM || pc == MR_BC)
            break;
        mr_clear_error();
        pc = (pc / 2 + MR_BC - 1) / MR_BC * MR_BC;
    }
    if (st != MR_OK)
        return st;
    const int4 *dcols = (const int4 *)p->ws[MR_WS_COLS].p;
    const int2 *dtiles = (const int2 *)p->ws[MR_WS_TILES].p;
    for (int64_t c0 = 0; c0 < ncols; c0 += pc) {
        const int64_t nc = ncols - c0 < pc ? ncols - c0 : pc;
        mr_mma_args a;
        a.T = (const float *)t->T.p;
        a.Ay = (const float2 *)t->Ay.p;
        a.Bw = (const float2 *)p->ws[MR_WS_BW].p;
        a.cols = dcols + c0;
        a.tiles = dtiles + c0 / MR_BC;
        a.part = (float *)p->ws[MR_WS_PART].p;
        a.kpad = p->kpad;
        a.ksplit = (int)ks;
        a.ld = (int)(2 * nc);
        a.split_stride = (long long)t->nrows_pad * a.ld;
        const dim3 grid((unsigned)(nc / MR_BC), (unsigned)(t->nrows_pad / MR_BN), (unsigned)nsplit);
#if defined(MR_HAVE_WGMMA)
        if (!amax && p->wgmma)
            mr_k_wgmma<<<grid, MR_THREADS, mr_wg_smem_bytes(), p->s>>>(a);
        else
#endif
        {
            const mr_mma_variant *v = &mr_mma_variants[amax ? MR_MMA_FP16 : p->o.variant];
            v->fn<<<grid, MR_THREADS, v->smem, p->s>>>(a);
        }
        if ((st = MR_CU(cudaGetLastError())) != MR_OK)
            return st;
        mr_launch_combine<float>(p, a.part, nsplit, a.split_stride, a.ld, a.cols, (int)nc, g, amax, out, ot);
        if ((st = MR_CU(cudaGetLastError())) != MR_OK)
            return st;
    }
    return MR_OK;
}

/* The cuBLAS engines: per pass of columns, D[j][2c + r] accumulated in double over chunks of samples.
 * fp64: Lt chunk (double) and one DGEMM per chunk (beta = 1). tf32x3: Lt and T split into TF32 hi/lo,
 * three GEMMs per sub-chunk of 256 samples into float slots (batched), slots summed in double. */
#define MR_CUBLAS_SUB 256
static mr_status mr_adjoint_cublas(mr_gemm_plan *p, const mr_grid *g, const mr_tables *t, const mr_colplan *cp,
                                   void *out, mr_gemm_type ot, int dbl)
{
    const int64_t ncols = cp->ntiles * MR_BC;
    const int nrows = t->nrows;
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    mr_status st = mr_handle(p);
    if (st != MR_OK)
        return st;
    /* per column: D (double) rows; per (column, sample): L (1 or 2 copies) */
    int64_t pc = mr_pass_columns(p, (size_t)t->nrows_pad * 2 * sizeof(double) + (size_t)2 * 8192 * es * (dbl ? 1 : 2),
                                 0, ncols);
    const size_t per_sample = (size_t)2 * pc * es * (dbl ? 1 : 2) + (dbl ? 0 : (size_t)2 * nrows * sizeof(float)) +
                              (dbl ? 0 : (size_t)2 * pc * nrows * sizeof(float) / MR_CUBLAS_SUB);
    int64_t kc = mr_chunk_samples(p, per_sample, dbl ? 8192 : 4096);
    if (!dbl)
        kc = kc < MR_CUBLAS_SUB ? MR_CUBLAS_SUB : kc / MR_CUBLAS_SUB * MR_CUBLAS_SUB;
    if ((st = mr_dbuf_reserve(&p->ws[MR_WS_ACC], (size_t)pc * 2 * t->nrows_pad * sizeof(double))) != MR_OK ||
        (st = mr_dbuf_reserve(&p->ws[MR_WS_L], (size_t)2 * pc * kc * es)) != MR_OK)
        return st;
    if (!dbl && ((st = mr_dbuf_reserve(&p->ws[MR_WS_L2], (size_t)2 * pc * kc * es)) != MR_OK ||
                 (st = mr_dbuf_reserve(&p->ws[MR_WS_T1], (size_t)nrows * kc * es)) != MR_OK ||
                 (st = mr_dbuf_reserve(&p->ws[MR_WS_T2], (size_t)nrows * kc * es)) != MR_OK ||
                 (st = mr_dbuf_reserve(&p->ws[MR_WS_SLOTS],
                                       (size_t)(kc / MR_CUBLAS_SUB) * 2 * pc * nrows * sizeof(float))) != MR_OK))
        return st;
    const int4 *dcols = (const int4 *)p->ws[MR_WS_COLS].p;
    double *D = (double *)p->ws[MR_WS_ACC].p;
    for (int64_t c0 = 0; c0 < ncols; c0 += pc) {
        const int nc = (int)(ncols - c0 < pc ? ncols - c0 : pc);
        const int ld = 2 * nc;
        for (int64_t k0 = 0; k0 < p->kpad; k0 += kc) {
            const int kn = (int)(p->kpad - k0 < kc ? p->kpad - k0 : kc);
            const dim3 lg(mr_blocks(kn, 256), (unsigned)nc);
            if (dbl) {
                mr_k_lbuild<double, 0><<<lg, 256, 0, p->s>>>((const double *)t->Ay.p, (const double *)p->ws[MR_WS_BW].p,
                                                             dcols + c0, p->kpad, k0, kn, kn,
                                                             (double *)p->ws[MR_WS_L].p, NULL);
                const double one = 1.0, beta = k0 == 0 ? 0.0 : 1.0;
                st = MR_CB(mr_cb.dgemm(p->cb, CUBLAS_OP_T, CUBLAS_OP_N, ld, nrows, kn, &one,
                                       (const double *)p->ws[MR_WS_L].p, kn, (const double *)t->T.p + k0,
                                       (int)p->kpad, &beta, D, ld));
            } else {
                mr_k_lbuild<float, 1><<<lg, 256, 0, p->s>>>((const float *)t->Ay.p, (const float *)p->ws[MR_WS_BW].p,
                                                            dcols + c0, p->kpad, k0, kn, kn, (float *)p->ws[MR_WS_L].p,
                                                            (float *)p->ws[MR_WS_L2].p);
                mr_k_tsplit<<<dim3(mr_blocks(kn, 256), (unsigned)nrows), 256, 0, p->s>>>(
                    (const float *)t->T.p, p->kpad, k0, kn, (float *)p->ws[MR_WS_T1].p, (float *)p->ws[MR_WS_T2].p);
                /* full sub-chunks of MR_CUBLAS_SUB samples batched, the remainder as one more slot */
                const int nfull = kn / MR_CUBLAS_SUB, rem = kn % MR_CUBLAS_SUB;
                const long long sc = (long long)ld * nrows;
                const float one = 1.0f, zero = 0.0f;
                const char *Lh = (const char *)p->ws[MR_WS_L].p, *Ll = (const char *)p->ws[MR_WS_L2].p,
                           *Th = (const char *)p->ws[MR_WS_T1].p, *Tl = (const char *)p->ws[MR_WS_T2].p;
                const char *A[3] = {Ll, Lh, Lh}, *B[3] = {Th, Tl, Th};
                float *slots = (float *)p->ws[MR_WS_SLOTS].p;
                for (int i = 0; i < 3 && st == MR_OK && nfull > 0; i++)
                    st = MR_CB(mr_cb.gemm_strided_batched_ex(
                        p->cb, CUBLAS_OP_T, CUBLAS_OP_N, ld, nrows, MR_CUBLAS_SUB, &one, A[i], CUDA_R_32F, kn,
                        MR_CUBLAS_SUB, B[i], CUDA_R_32F, kn, MR_CUBLAS_SUB, i ? &one : &zero, slots, CUDA_R_32F, ld,
                        sc, nfull, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
                const size_t off = (size_t)nfull * MR_CUBLAS_SUB * sizeof(float);
                for (int i = 0; i < 3 && st == MR_OK && rem > 0; i++)
                    st = MR_CB(mr_cb.gemm_ex(p->cb, CUBLAS_OP_T, CUBLAS_OP_N, ld, nrows, rem, &one, A[i] + off,
                                            CUDA_R_32F, kn, B[i] + off, CUDA_R_32F, kn, i ? &one : &zero,
                                            slots + (size_t)nfull * sc, CUDA_R_32F, ld, CUBLAS_COMPUTE_32F_FAST_TF32,
                                            CUBLAS_GEMM_DEFAULT));
                if (st == MR_OK)
                    mr_k_slotsum<<<mr_blocks(sc, 256), 256, 0, p->s>>>(slots, nfull + (rem > 0), sc, k0 == 0, D);
            }
            if (st != MR_OK || (st = MR_CU(cudaGetLastError())) != MR_OK)
                return st;
        }
        mr_launch_combine<double>(p, D, 1, 0, ld, dcols + c0, nc, g, NULL, out, ot);
        if ((st = MR_CU(cudaGetLastError())) != MR_OK)
            return st;
    }
    return MR_OK;
}

/* The Hermitian edge voxels (see mr_k_edge_ops). */
static mr_status mr_adjoint_edge(mr_gemm_plan *p, const mr_grid *g, const float *d_a, int real, const int64_t *planes,
                                 const mr_colplan *cp, void *out, mr_gemm_type ot)
{
    if (cp->nedge_x == 0 || cp->necols == 0)
        return MR_OK;
    mr_status st = mr_handle(p);
    if (st != MR_OK)
        return st;
    const int ny = (int)g->n[1], nq = cp->nq;
    int *qz = (int *)malloc((size_t)nq * sizeof(int));
    if (!qz)
        return mr_error(MR_ENOMEM, "GPU GEMM: out of host memory");
    for (int i = 0; i < nq; i++)
        qz[i] = (int)planes[cp->qslot[i]];
    st = mr_upload(p, MR_WS_EQ, qz, (size_t)nq * sizeof(int));
    free(qz);
    if (st != MR_OK || (st = mr_upload(p, MR_WS_ECOLS, cp->ecols, (size_t)cp->necols * sizeof(int4))) != MR_OK)
        return st;
    const int64_t kc = mr_chunk_samples(p, (size_t)(ny + nq) * sizeof(double2), 16384);
    if ((st = mr_dbuf_reserve(&p->ws[MR_WS_EA], (size_t)ny * kc * sizeof(double2))) != MR_OK ||
        (st = mr_dbuf_reserve(&p->ws[MR_WS_EW], (size_t)nq * kc * sizeof(double2))) != MR_OK ||
        (st = mr_dbuf_reserve(&p->ws[MR_WS_EC], (size_t)ny * nq * sizeof(double2))) != MR_OK)
        return st;
    const mr_gdev gd = mr_gdev_of(g);
    const long long plane = g->n[0] * g->n[1];
    for (int e = 0; e < cp->nedge_x; e++) {
        for (int64_t k0 = 0; k0 < p->m; k0 += kc) {
            const int kn = (int)(p->m - k0 < kc ? p->m - k0 : kc);
            mr_k_edge_ops<<<dim3(mr_blocks(kn, 256), (unsigned)(ny + nq)), 256, 0, p->s>>>(
                p->d_traj, d_a, real, p->m, k0, kn, gd, cp->edge_x[e], (const int *)p->ws[MR_WS_EQ].p,
                (double2 *)p->ws[MR_WS_EA].p, (double2 *)p->ws[MR_WS_EW].p);
            if ((st = MR_CU(cudaGetLastError())) != MR_OK)
                return st;
            const cuDoubleComplex one = make_cuDoubleComplex(1.0, 0.0),
                                  beta = make_cuDoubleComplex(k0 == 0 ? 0.0 : 1.0, 0.0);
            if ((st = MR_CB(mr_cb.zgemm(p->cb, CUBLAS_OP_T, CUBLAS_OP_N, ny, nq, kn, &one,
                                        (const cuDoubleComplex *)p->ws[MR_WS_EA].p, kn,
                                        (const cuDoubleComplex *)p->ws[MR_WS_EW].p, kn, &beta,
                                        (cuDoubleComplex *)p->ws[MR_WS_EC].p, ny))) != MR_OK)
                return st;
        }
        const int n = (int)cp->necols;
        if (ot == MR_GEMM_F64)
            mr_k_edge_store<double><<<mr_blocks(n, 256), 256, 0, p->s>>>(
                (const double2 *)p->ws[MR_WS_EC].p, (const int4 *)p->ws[MR_WS_ECOLS].p, n, ny, (int)g->n[0],
                cp->edge_x[e], plane, (double *)out);
        else
            mr_k_edge_store<float><<<mr_blocks(n, 256), 256, 0, p->s>>>(
                (const double2 *)p->ws[MR_WS_EC].p, (const int4 *)p->ws[MR_WS_ECOLS].p, n, ny, (int)g->n[0],
                cp->edge_x[e], plane, (float *)out);
        if ((st = MR_CU(cudaGetLastError())) != MR_OK)
            return st;
    }
    return MR_OK;
}

static mr_status mr_check_call(mr_gemm_plan *p, const mr_grid *g, mr_gemm_precision prec, const void *in,
                               const void *out, mr_gemm_type ot, const char *fn)
{
    if (!p || !in || !out)
        return mr_error(MR_EINVAL, "%s: NULL argument", fn);
    if (prec != MR_GEMM_TF32X3 && prec != MR_GEMM_FP64 && prec != MR_GEMM_FP16X3)
        return mr_error(MR_EINVAL, "%s: unknown precision %d", fn, (int)prec);
    if (ot != MR_GEMM_F32 && ot != MR_GEMM_F64)
        return mr_error(MR_EINVAL, "%s: unknown output type %d", fn, (int)ot);
    return mr_check_grid(g, fn);
}

mr_status mr_gemm_adjoint_planes_dev(mr_gemm_plan *p, const mr_grid *g, mr_gemm_precision prec, const float *d_a,
                                     int real_weights, const int64_t *planes, int64_t nplanes, void *d_out,
                                     mr_gemm_type out_type)
{
    mr_status st = mr_check_call(p, g, prec, d_a, d_out, out_type, "mr_gemm_adjoint");
    if (st != MR_OK)
        return st;
    if (!planes || nplanes < 1 || nplanes > g->n[2])
        return mr_error(MR_EINVAL, "mr_gemm_adjoint: %lld planes requested, need 1 .. %lld", (long long)nplanes,
                        (long long)g->n[2]);
    if ((st = mr_begin(p)) != MR_OK)
        return st;
    const int dbl = prec == MR_GEMM_FP64;
    mr_tables *t = NULL;
    if ((st = mr_tables_get(p, g, dbl, &t)) != MR_OK)
        return st;
    mr_colplan cp;
    if ((st = mr_colplan_build(g, planes, nplanes, real_weights && p->o.hermitian, &cp)) != MR_OK)
        return st;
    int *pl = (int *)malloc((size_t)nplanes * sizeof(int));
    if (!pl) {
        mr_colplan_free(&cp);
        return mr_error(MR_ENOMEM, "GPU GEMM: out of host memory");
    }
    for (int64_t i = 0; i < nplanes; i++)
        pl[i] = (int)planes[i];
    st = mr_upload(p, MR_WS_PLANES, pl, (size_t)nplanes * sizeof(int));
    free(pl);
    if (st == MR_OK)
        st = mr_upload(p, MR_WS_COLS, cp.cols, (size_t)cp.ntiles * MR_BC * sizeof(int4));
    if (st == MR_OK)
        st = mr_upload(p, MR_WS_TILES, cp.tiles, (size_t)cp.ntiles * sizeof(int2));
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    if (st == MR_OK)
        st = mr_dbuf_reserve(&p->ws[MR_WS_BW], (size_t)nplanes * p->kpad * 2 * es);
    const unsigned *amax = NULL; /* FP16X3: max |a| on the device, for the scale of Bw */
    if (st == MR_OK && prec == MR_GEMM_FP16X3 && (st = mr_dbuf_reserve(&p->ws[MR_WS_AMAX], sizeof(unsigned))) == MR_OK &&
        (st = MR_CU(cudaMemsetAsync(p->ws[MR_WS_AMAX].p, 0, sizeof(unsigned), p->s))) == MR_OK) {
        amax = (const unsigned *)p->ws[MR_WS_AMAX].p;
        mr_k_absmax<<<mr_gpu_blocks(p->m), MR_GPU_THREADS, 0, p->s>>>(d_a, real_weights, p->m, (unsigned *)amax);
    }
    if (st == MR_OK) {
        const dim3 grid(mr_blocks(p->kpad, 256), (unsigned)nplanes);
        if (dbl)
            mr_k_weighted<double><<<grid, 256, 0, p->s>>>((const double *)t->Bz.p, d_a, real_weights, p->m, p->kpad,
                                                          (const int *)p->ws[MR_WS_PLANES].p, NULL,
                                                          (double *)p->ws[MR_WS_BW].p);
        else
            mr_k_weighted<float><<<grid, 256, 0, p->s>>>((const float *)t->Bz.p, d_a, real_weights, p->m, p->kpad,
                                                         (const int *)p->ws[MR_WS_PLANES].p, amax,
                                                         (float *)p->ws[MR_WS_BW].p);
        st = MR_CU(cudaGetLastError());
    }
    if (st == MR_OK && cp.ntiles > 0) {
        if (dbl)
            st = mr_adjoint_cublas(p, g, t, &cp, d_out, out_type, 1);
        else if (prec == MR_GEMM_TF32X3 && p->o.engine == MR_GEMM_ENGINE_CUBLAS)
            st = mr_adjoint_cublas(p, g, t, &cp, d_out, out_type, 0);
        else
            st = mr_adjoint_mma(p, g, t, &cp, amax, d_out, out_type);
    }
    if (st == MR_OK)
        st = mr_adjoint_edge(p, g, d_a, real_weights, planes, &cp, d_out, out_type);
    mr_colplan_free(&cp);
    if (st == MR_OK)
        st = mr_end(p);
    return st;
}

mr_status mr_gemm_adjoint_slab_dev(mr_gemm_plan *p, const mr_grid *g, mr_gemm_precision prec, const float *d_a,
                                   int real_weights, int64_t z0, int64_t z1, void *d_out, mr_gemm_type out_type)
{
    if (!g || z0 < 0 || z1 <= z0 || z1 > g->n[2])
        return mr_error(MR_EINVAL, "mr_gemm_adjoint_slab: slab [%lld, %lld) outside the grid's %lld planes",
                        (long long)z0, (long long)z1, g ? (long long)g->n[2] : 0LL);
    int64_t *pl = (int64_t *)malloc((size_t)(z1 - z0) * sizeof(int64_t));
    if (!pl)
        return mr_error(MR_ENOMEM, "GPU GEMM: out of host memory");
    for (int64_t z = z0; z < z1; z++)
        pl[z - z0] = z;
    mr_status st = mr_gemm_adjoint_planes_dev(p, g, prec, d_a, real_weights, pl, z1 - z0, d_out, out_type);
    free(pl);
    return st;
}

mr_status mr_gemm_forward_dev(mr_gemm_plan *p, const mr_grid *g, mr_gemm_precision prec, const float *d_x, int64_t m0,
                              int64_t m1, void *d_out, mr_gemm_type out_type)
{
    mr_status st = mr_check_call(p, g, prec, d_x, d_out, out_type, "mr_gemm_forward");
    if (st != MR_OK)
        return st;
    if (m0 < 0 || m1 <= m0 || m1 > p->m)
        return mr_error(MR_EINVAL, "mr_gemm_forward: samples [%lld, %lld) outside [0, %lld)", (long long)m0,
                        (long long)m1, (long long)p->m);
    if ((st = mr_begin(p)) != MR_OK || (st = mr_handle(p)) != MR_OK)
        return st;
    const int dbl = prec == MR_GEMM_FP64;
    mr_tables *t = NULL;
    if ((st = mr_tables_get(p, g, dbl, &t)) != MR_OK)
        return st;
    const int64_t nz = g->n[2];
    int64_t *all = (int64_t *)malloc((size_t)nz * sizeof(int64_t));
    if (!all)
        return mr_error(MR_ENOMEM, "GPU GEMM: out of host memory");
    for (int64_t z = 0; z < nz; z++)
        all[z] = z;
    mr_colplan cp;
    st = mr_colplan_build(g, all, nz, 0, &cp); /* slot = iz */
    free(all);
    if (st != MR_OK)
        return st;
    st = mr_upload(p, MR_WS_COLS, cp.cols, (size_t)cp.ntiles * MR_BC * sizeof(int4));
    const int64_t ncols = cp.ntiles * MR_BC;
    mr_colplan_free(&cp);
    if (st != MR_OK)
        return st;
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    const int nrows = t->nrows, ldf = t->nrows_pad;
    const int64_t nm = m1 - m0;
    const int CY = 16; /* column groups of the reduction */
    int64_t pc = mr_pass_columns(p, (size_t)2 * ldf * es * (dbl ? 1 : 2) + (size_t)2 * 8192 * es, 0, ncols);
    int64_t kc = mr_chunk_samples(p, (size_t)2 * pc * es + (dbl ? 0 : (size_t)2 * nrows * es) + CY * sizeof(double2),
                                  32768);
    if (kc > nm)
        kc = nm;
    const int4 *dcols = (const int4 *)p->ws[MR_WS_COLS].p;
    if ((st = mr_dbuf_reserve(&p->ws[MR_WS_L], (size_t)2 * pc * ldf * es)) != MR_OK ||
        (!dbl && (st = mr_dbuf_reserve(&p->ws[MR_WS_L2], (size_t)2 * pc * ldf * es)) != MR_OK) ||
        (st = mr_dbuf_reserve(&p->ws[MR_WS_SLOTS], (size_t)2 * pc * kc * es)) != MR_OK ||
        (!dbl && (st = mr_dbuf_reserve(&p->ws[MR_WS_T1], (size_t)nrows * kc * es)) != MR_OK) ||
        (!dbl && (st = mr_dbuf_reserve(&p->ws[MR_WS_T2], (size_t)nrows * kc * es)) != MR_OK) ||
        (st = mr_dbuf_reserve(&p->ws[MR_WS_ACC], (size_t)nm * sizeof(double2))) != MR_OK ||
        (st = mr_dbuf_reserve(&p->ws[MR_WS_ACCP], (size_t)CY * kc * sizeof(double2))) != MR_OK)
        return st;
    double2 *acc = (double2 *)p->ws[MR_WS_ACC].p;
    for (int64_t c0 = 0; c0 < ncols; c0 += pc) {
        const int nc = (int)(ncols - c0 < pc ? ncols - c0 : pc);
        const dim3 fg(mr_blocks(ldf, 128), (unsigned)nc);
        if (dbl)
            mr_k_fbuild<double, 0><<<fg, 128, 0, p->s>>>(d_x, dcols + c0, (int)g->n[0], (int)g->n[1], nrows, ldf,
                                                         (double *)p->ws[MR_WS_L].p, NULL);
        else
            mr_k_fbuild<float, 1><<<fg, 128, 0, p->s>>>(d_x, dcols + c0, (int)g->n[0], (int)g->n[1], nrows, ldf,
                                                        (float *)p->ws[MR_WS_L].p, (float *)p->ws[MR_WS_L2].p);
        if ((st = MR_CU(cudaGetLastError())) != MR_OK)
            return st;
        for (int64_t k0 = m0; k0 < m1; k0 += kc) {
            const int kn = (int)(m1 - k0 < kc ? m1 - k0 : kc);
            /* G (kn x 2nc, column-major, ld kn) = T[k0.., rows] . F^T */
            if (dbl) {
                const double one = 1.0, zero = 0.0;
                st = MR_CB(mr_cb.dgemm(p->cb, CUBLAS_OP_N, CUBLAS_OP_N, kn, 2 * nc, nrows, &one,
                                       (const double *)t->T.p + k0, (int)p->kpad, (const double *)p->ws[MR_WS_L].p,
                                       ldf, &zero, (double *)p->ws[MR_WS_SLOTS].p, kn));
            } else {
                mr_k_tsplit<<<dim3(mr_blocks(kn, 256), (unsigned)nrows), 256, 0, p->s>>>(
                    (const float *)t->T.p, p->kpad, k0, kn, (float *)p->ws[MR_WS_T1].p, (float *)p->ws[MR_WS_T2].p);
                const float one = 1.0f, zero = 0.0f;
                const void *A[3] = {p->ws[MR_WS_T2].p, p->ws[MR_WS_T1].p, p->ws[MR_WS_T1].p};
                const void *B[3] = {p->ws[MR_WS_L].p, p->ws[MR_WS_L2].p, p->ws[MR_WS_L].p};
                for (int i = 0; i < 3 && st == MR_OK; i++)
                    st = MR_CB(mr_cb.gemm_ex(p->cb, CUBLAS_OP_N, CUBLAS_OP_N, kn, 2 * nc, nrows, &one, A[i], CUDA_R_32F,
                                            kn, B[i], CUDA_R_32F, ldf, i ? &one : &zero, p->ws[MR_WS_SLOTS].p,
                                            CUDA_R_32F, kn, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
            }
            if (st != MR_OK)
                return st;
            const int cper = (int)mr_ceil_div((size_t)nc, CY);
            const dim3 rg(mr_blocks(kn, 32), (unsigned)CY), rb(32, 8);
            if (dbl)
                mr_k_freduce<double><<<rg, rb, 0, p->s>>>((const double *)p->ws[MR_WS_SLOTS].p, kn,
                                                          (const double *)t->Ay.p, (const double *)t->Bz.p,
                                                          dcols + c0, nc, cper, p->kpad, k0, kn,
                                                          (double2 *)p->ws[MR_WS_ACCP].p);
            else
                mr_k_freduce<float><<<rg, rb, 0, p->s>>>((const float *)p->ws[MR_WS_SLOTS].p, kn,
                                                         (const float *)t->Ay.p, (const float *)t->Bz.p, dcols + c0,
                                                         nc, cper, p->kpad, k0, kn, (double2 *)p->ws[MR_WS_ACCP].p);
            mr_k_fsum<<<mr_blocks(kn, 256), 256, 0, p->s>>>((const double2 *)p->ws[MR_WS_ACCP].p, CY, kn, k0 - m0,
                                                            c0 == 0, acc);
            if ((st = MR_CU(cudaGetLastError())) != MR_OK)
                return st;
        }
    }
    if (out_type == MR_GEMM_F64)
        mr_k_store<double><<<mr_blocks(nm, 256), 256, 0, p->s>>>(acc, nm, (double *)d_out);
    else
        mr_k_store<float><<<mr_blocks(nm, 256), 256, 0, p->s>>>(acc, nm, (float *)d_out);
    return mr_end(p);
}

/* ---- host wrappers ----------------------------------------------------------------------------- */

static size_t mr_type_size(mr_gemm_type t) { return t == MR_GEMM_F64 ? 2 * sizeof(double) : 2 * sizeof(float); }

mr_status mr_gemm_adjoint(mr_gemm_plan *p, const mr_grid *g, mr_gemm_precision prec, const float *a, int real_weights,
                          void *out, mr_gemm_type out_type)
{
    mr_status st = mr_check_call(p, g, prec, a, out, out_type, "mr_gemm_adjoint");
    if (st != MR_OK || (st = MR_CU(cudaSetDevice(p->o.device))) != MR_OK)
        return st;
    const size_t ab = (size_t)p->m * (real_weights ? 1 : 2) * sizeof(float);
    const size_t ob = (size_t)mr_grid_size(g) * mr_type_size(out_type);
    if ((st = mr_upload(p, MR_WS_IN, a, ab)) != MR_OK || (st = mr_dbuf_reserve(&p->ws[MR_WS_OUT], ob)) != MR_OK)
        return st;
    if ((st = mr_gemm_adjoint_slab_dev(p, g, prec, (const float *)p->ws[MR_WS_IN].p, real_weights, 0, g->n[2],
                                       p->ws[MR_WS_OUT].p, out_type)) != MR_OK)
        return st;
    return MR_CU(cudaMemcpy(out, p->ws[MR_WS_OUT].p, ob, cudaMemcpyDeviceToHost));
}

mr_status mr_gemm_forward(mr_gemm_plan *p, const mr_grid *g, mr_gemm_precision prec, const float *x, void *out,
                          mr_gemm_type out_type)
{
    mr_status st = mr_check_call(p, g, prec, x, out, out_type, "mr_gemm_forward");
    if (st != MR_OK || (st = MR_CU(cudaSetDevice(p->o.device))) != MR_OK)
        return st;
    const size_t xb = (size_t)mr_grid_size(g) * 2 * sizeof(float);
    const size_t ob = (size_t)p->m * mr_type_size(out_type);
    if ((st = mr_upload(p, MR_WS_IN, x, xb)) != MR_OK || (st = mr_dbuf_reserve(&p->ws[MR_WS_OUT], ob)) != MR_OK)
        return st;
    if ((st = mr_gemm_forward_dev(p, g, prec, (const float *)p->ws[MR_WS_IN].p, 0, p->m, p->ws[MR_WS_OUT].p,
                                  out_type)) != MR_OK)
        return st;
    return MR_CU(cudaMemcpy(out, p->ws[MR_WS_OUT].p, ob, cudaMemcpyDeviceToHost));
}

/* Units: mirror pairs {iz, 2cz - iz} (real weights) or single planes; part gets a contiguous run of
 * about units / parts of them, ordered from the centre plane outwards so that every part's cost is
 * one plane per unit. */
mr_status mr_gemm_plane_split(const mr_grid *g, int real_weights, int parts, int part, int64_t *planes,
                              int64_t *nplanes)
{
    if (!g || !planes || !nplanes || parts < 1 || part < 0 || part >= parts)
        return mr_error(MR_EINVAL, "mr_gemm_plane_split: bad arguments (parts %d, part %d)", parts, part);
    const int64_t nz = g->n[2], cz = g->center[2];
    *nplanes = 0;
    /* unit u: plane z_u and, with real weights, its mirror when on the grid and different */
    int64_t nunits = 0;
    for (int64_t z = 0; z < nz; z++) {
        const int64_t mz = 2 * cz - z;
        if (real_weights && mz >= 0 && mz < nz && mz < z)
            continue; /* belongs to the unit of mz */
        nunits++;
    }
    const int64_t u0 = nunits * part / parts, u1 = nunits * (part + 1) / parts;
    int64_t u = 0;
    for (int64_t z = 0; z < nz; z++) {
        const int64_t mz = 2 * cz - z;
        if (real_weights && mz >= 0 && mz < nz && mz < z)
            continue;
        if (u >= u0 && u < u1) {
            planes[(*nplanes)++] = z;
            if (real_weights && mz >= 0 && mz < nz && mz != z)
                planes[(*nplanes)++] = mz;
        }
        u++;
    }
    return MR_OK;
}
