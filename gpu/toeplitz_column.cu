/* The Toeplitz normal's line transforms (gpu/toeplitz.cu, gpu_internal.h), each line of the 2N grid in shared
 * memory:
 *   the slowest axis s, fused (mr_gpu_tp_column): for every line along s (P = 2 N_s points, `slab` apart)
 *     FFT -> multiply by the real spectrum H -> inverse FFT, in one kernel. The padded image is zero in the
 *     upper half of every line (points N_s .. P-1), and the crop keeps only the lower half, so the kernel
 *     reads and writes only the lower halves. Against cuFFT's strided 1D plan, a multiplication pass and the
 *     inverse plan (three passes over the whole grid, each read and written, plus H), the grid is read half
 *     once, written half once and H read once;
 *   the middle axis (mr_gpu_tp_lines): forward from the lower half to the whole line, inverse from the whole
 *     line to the lower half, on the padded image's slabs;
 *   the fastest axis's rows (mr_gpu_tp_rows): forward from the image's row, padded, into the grid (the padding
 *     pass in the same kernel), inverse from the grid into the image's row (the crop in the same kernel).
 *
 * The FFT: Stockham autosort (Govindaraju et al., "High performance discrete Fourier transforms on
 * graphics processors", SC 2008), radix 8 with one radix-2 or radix-4 pass first when log2 P is not a
 * multiple of 3; P/8 threads per line, each holding 8 values per pass (one radix-8 iteration, two radix-4
 * or four radix-2 ones); twiddles from a table of e^{-2 pi i k / P} made in float64. The inverse is
 * conj(FFT(conj(.))): H is real, so the line is conjugated after the multiplication and at the store.
 * Lines of P = 8 .. 1024 points (a power of 2); others take the cuFFT path (mr_gpu_tp_column_supported).
 * Several lines per block: consecutive positions (coalesced loads and stores; the rows: consecutive points),
 * up to 512 threads, static shared memory (<= 37 KB), so that several blocks share an SM and one block's
 * loads overlap another's passes. A line's points are padded in shared memory (pad(): one slot after every 8)
 * so that the radix passes' strided stores fall on distinct banks. Measured (H200, `--method cg`, solve time,
 * docs/GPU.md): every axis by these kernels 0.281 s at 256^3 and 1.50 s with 8 coils, against 0.288 / 1.55 s
 * with the slowest axis alone fused and 0.340 / 1.96 s with cuFFT alone; without the padding 0.315 / 1.75 s
 * (the kernels are bound by shared memory). 128 and 256 threads per block gained less than 512; a first
 * version with 1024 threads, 16 lines and run-time sizes lost 12 % at 256^3. */
#include <math.h>

#include "cuda_check.h"
#include "gpu_internal.h"

#define TPC_MAX_P 1024
#define TPC_MAX_THREADS 512 /* per block (measured 128 / 256 / 512: 512 fastest, see the top) */
#define TPC_MAX_LINES 16

int mr_gpu_tp_column_supported(long long p) { return p >= 8 && p <= TPC_MAX_P && (p & (p - 1)) == 0; }

/* tw[k] = e^{-2 pi i k / p}, k < p, from float64 */
__global__ void k_twiddles(float2 *tw, int p)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < p) {
        double s, c;
        sincospi(-2.0 * (double)k / (double)p, &s, &c);
        tw[k] = make_float2((float)c, (float)s);
    }
}

/* A line's point k in shared memory: one slot of padding after every 8 points, so that the radix passes' strided
 * stores (points 8 j + r, 64 j + 8 r + b, ...) and the loads of consecutive points fall on distinct banks. */
__host__ __device__ constexpr unsigned pad(unsigned k) { return k + (k >> 3); }

__device__ __forceinline__ float2 cmul(float2 a, float2 b)
{
    return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

/* In-register DFT of R = 2, 4 or 8 points, natural order in and out: radix-2 decimation in frequency, then
 * the bit reversal. */
template <int R> __device__ __forceinline__ void dft(float2 *v)
{
    const float h = 0.70710678118654752f; /* e^{-i pi/4} = (h, -h) */
#pragma unroll
    for (int len = R; len >= 2; len /= 2)
#pragma unroll
        for (int i = 0; i < R; i += len)
#pragma unroll
            for (int k = 0; k < len / 2; k++) {
                const float2 a = v[i + k], b = v[i + k + len / 2];
                v[i + k] = make_float2(a.x + b.x, a.y + b.y);
                float2 d = make_float2(a.x - b.x, a.y - b.y);
                /* W_len^k = e^{-2 pi i k / len}: k / len is 0, 1/4, 1/8 or 3/8 */
                if (len == 4 && k == 1)
                    d = make_float2(d.y, -d.x);
                else if (len == 8 && k == 1)
                    d = make_float2(h * (d.x + d.y), h * (d.y - d.x));
                else if (len == 8 && k == 2)
                    d = make_float2(d.y, -d.x);
                else if (len == 8 && k == 3)
                    d = make_float2(h * (d.y - d.x), -h * (d.x + d.y));
                v[i + k + len / 2] = d;
            }
    if (R == 4) {
        const float2 t = v[1];
        v[1] = v[2];
        v[2] = t;
    } else if (R == 8) {
        float2 t = v[1];
        v[1] = v[4];
        v[4] = t;
        t = v[3];
        v[3] = v[6];
        v[6] = t;
    }
}

/* One Stockham pass of radix R over a line of P points (t in [0, P/8): this thread's index; NS: the length of
 * the sub-transforms done so far); tw the table of e^{-2 pi i k / P}. Everything but t is known at compile
 * time (the divisions are shifts). */
template <int R, int P, int NS> __device__ __forceinline__ void stockham_pass(float2 *d, const float2 *__restrict__ tw, unsigned t)
{
    constexpr unsigned it = 8 / R, tq = P / 8, stride = P / R, step = P / (NS * R);
    float2 v[8];
#pragma unroll
    for (unsigned i = 0; i < it; i++) {
        const unsigned j = t + i * tq, jm = j % NS;
#pragma unroll
        for (unsigned r = 0; r < R; r++) {
            float2 x = d[pad(j + r * stride)];
            if (NS > 1 && r && jm) /* W_{NS R}^{jm r} = W_P^{jm r step}, jm r < NS R */
                x = cmul(x, __ldg(tw + jm * r * step));
            v[i * R + r] = x;
        }
    }
    __syncthreads();
#pragma unroll
    for (unsigned i = 0; i < it; i++) {
        const unsigned j = t + i * tq, jm = j % NS;
        dft<R>(v + i * R);
        const unsigned dst = (j / NS) * NS * R + jm;
#pragma unroll
        for (unsigned r = 0; r < R; r++)
            d[pad(dst + r * NS)] = v[i * R + r];
    }
    __syncthreads();
}

template <int P, int NS> __device__ __forceinline__ void radix8_passes(float2 *d, const float2 *__restrict__ tw, unsigned t)
{
    if constexpr (NS < P) {
        stockham_pass<8, P, NS>(d, tw, t);
        radix8_passes<P, NS * 8>(d, tw, t);
    }
}

/* The forward DFT of a line of P = 2^LOGP points in place; every thread of the block calls it. */
template <int LOGP> __device__ __forceinline__ void line_fft(float2 *d, const float2 *__restrict__ tw, unsigned t)
{
    constexpr int P = 1 << LOGP;
    if constexpr (LOGP % 3 == 1) {
        stockham_pass<2, P, 1>(d, tw, t);
        radix8_passes<P, 2>(d, tw, t);
    } else if constexpr (LOGP % 3 == 2) {
        stockham_pass<4, P, 1>(d, tw, t);
        radix8_passes<P, 4>(d, tw, t);
    } else {
        radix8_passes<P, 1>(d, tw, t);
    }
}

template <int LOGP> __host__ __device__ constexpr int lines_of()
{
    constexpr int l = TPC_MAX_THREADS >> (LOGP - 3);
    return l < 1 ? 1 : (l > TPC_MAX_LINES ? TPC_MAX_LINES : l);
}

/* What a line kernel does with its lines (P points; the padded image fills the lower half, the crop keeps it):
 * TP_FUSED   lower half in, FFT, x H, inverse FFT, lower half out (the slowest axis);
 * TP_FORWARD lower half in (the upper half zero), FFT, the whole line out;
 * TP_INVERSE the whole line in, inverse FFT, lower half out.
 * The inverse is conj(FFT(conj(.))): the line is conjugated at the load (or after H, which is real) and at
 * the store. */
enum { TP_FUSED, TP_FORWARD, TP_INVERSE };

/* Lines of P = 2^LOGP points along a strided axis: blockDim.x = L x P/8 (L = lines_of), shared memory L x
 * PS float2 (line l at l PS, its point z at pad(z); PS = pad(P) + 1 is odd, which puts the lines' points on
 * different banks for the loads, the product and the stores). Line l of block (x, y) holds the points
 * w[y bstride + z stride + c], z < P, of position c = x L + l < ncol (consecutive positions: coalesced loads
 * and stores). TP_FUSED reads H at z stride + c (its one batch is the whole grid). */
template <int LOGP, int MODE>
__global__ void __launch_bounds__(TPC_MAX_THREADS)
    k_tp_lines(float2 *w, const float *h, const float2 *tw, long long stride, long long ncol, long long bstride)
{
    constexpr int P = 1 << LOGP, L = lines_of<LOGP>(), PS = (int)pad(P) + 1, NT = L * (P / 8), LOW = P / 2;
    constexpr int IN = MODE == TP_INVERSE ? P : LOW, OUT = MODE == TP_FORWARD ? P : LOW;
    __shared__ float2 sm[L * PS];
    const unsigned tid = threadIdx.x;
    const long long c0 = (long long)blockIdx.x * L;
    w += (long long)blockIdx.y * bstride;
#pragma unroll 4
    for (unsigned i = tid; i < L * P; i += NT) { /* consecutive threads: consecutive lines (coalesced) */
        const unsigned l = i % L, z = i / L;
        const long long c = c0 + l;
        float2 v = (z < IN && c < ncol) ? w[z * stride + c] : make_float2(0.0f, 0.0f);
        if (MODE == TP_INVERSE)
            v.y = -v.y;
        sm[l * PS + pad(z)] = v;
    }
    __syncthreads();
    const unsigned l = tid / (P / 8), t = tid % (P / 8);
    line_fft<LOGP>(sm + l * PS, tw, t);
    if (MODE == TP_FUSED) {
#pragma unroll 4
        for (unsigned i = tid; i < L * P; i += NT) { /* x H, conjugated for the inverse */
            const unsigned li = i % L, z = i / L;
            const long long c = c0 + li;
            const float f = c < ncol ? h[z * stride + c] : 0.0f;
            const float2 v = sm[li * PS + pad(z)];
            sm[li * PS + pad(z)] = make_float2(v.x * f, -v.y * f);
        }
        __syncthreads();
        line_fft<LOGP>(sm + l * PS, tw, t);
    }
#pragma unroll 4
    for (unsigned i = tid; i < L * OUT; i += NT) {
        const unsigned li = i % L, z = i / L;
        const long long c = c0 + li;
        if (c < ncol) {
            const float2 v = sm[li * PS + pad(z)];
            w[z * stride + c] = MODE == TP_FORWARD ? v : make_float2(v.x, -v.y);
        }
    }
}

/* Rows of P = 2^LOGP points along the fastest axis (contiguous), between the image (N = P/2 points a row) and
 * the grid: row r of nrows is (i1, i2) = (r mod n1, r / n1), the image's row (i2 n1 + i1) N and the grid's
 * (i2 p1 + i1) P. TP_FORWARD pads the image's row with zeros and writes its FFT into the grid (the padding
 * pass and the first transform in one); TP_INVERSE transforms the grid's row back and writes its first N
 * points into the image (the last transform and the crop). Same block layout as k_tp_lines; a row's points
 * are consecutive threads (coalesced). */
template <int LOGP, int MODE>
__global__ void __launch_bounds__(TPC_MAX_THREADS)
    k_tp_rows(float2 *w, float2 *img, const float2 *tw, long long n1, long long p1, long long nrows)
{
    constexpr int P = 1 << LOGP, L = lines_of<LOGP>(), PS = (int)pad(P) + 1, NT = L * (P / 8), N = P / 2;
    __shared__ float2 sm[L * PS];
    __shared__ long long goff[L], ioff[L];
    const unsigned tid = threadIdx.x;
    const long long r0 = (long long)blockIdx.x * L;
    if (tid < L) {
        const long long r = r0 + tid, i1 = r % n1, i2 = r / n1;
        goff[tid] = (i2 * p1 + i1) * P;
        ioff[tid] = (i2 * n1 + i1) * N;
    }
    __syncthreads();
#pragma unroll 4
    for (unsigned i = tid; i < L * P; i += NT) {
        const unsigned l = i / P, z = i % P;
        float2 v = make_float2(0.0f, 0.0f);
        if (r0 + l < nrows) {
            if (MODE == TP_FORWARD && z < N)
                v = img[ioff[l] + z];
            else if (MODE == TP_INVERSE) {
                v = w[goff[l] + z];
                v.y = -v.y;
            }
        }
        sm[l * PS + pad(z)] = v;
    }
    __syncthreads();
    const unsigned l = tid / (P / 8), t = tid % (P / 8);
    line_fft<LOGP>(sm + l * PS, tw, t);
#pragma unroll 4
    for (unsigned i = tid; i < L * P; i += NT) {
        const unsigned li = i / P, z = i % P;
        if (r0 + li >= nrows)
            continue;
        const float2 v = sm[li * PS + pad(z)];
        if (MODE == TP_FORWARD)
            w[goff[li] + z] = v;
        else if (z < N)
            img[ioff[li] + z] = make_float2(v.x, -v.y);
    }
}

mr_status mr_gpu_tp_column_prepare(mr_gpu_ctx *c, long long p, float2 **tw)
{
    *tw = NULL;
    if (!mr_gpu_tp_column_supported(p))
        return mr_error(MR_EINVAL, "GPU Toeplitz: no fused transform for lines of %lld points", p);
    if (!(*tw = (float2 *)mr_gpu_alloc(c, 2 * p)))
        return MR_ENOMEM;
    k_twiddles<<<(unsigned)((p + 255) / 256), 256, 0, mr_gpu_ctx_stream(c)>>>(*tw, (int)p);
    return mr_gpu_ctx_launched(c, "Toeplitz twiddles");
}

template <int LOGP, int MODE>
static void launch_lines(cudaStream_t s, float2 *w, const float *h, const float2 *tw, long long stride, long long ncol,
                         long long nbatch, long long bstride)
{
    constexpr int L = lines_of<LOGP>();
    const dim3 grid((unsigned)((ncol + L - 1) / L), (unsigned)nbatch);
    k_tp_lines<LOGP, MODE><<<grid, L * ((1 << LOGP) / 8), 0, s>>>(w, h, tw, stride, ncol, bstride);
}

template <int LOGP, int MODE>
static void launch_rows(cudaStream_t s, float2 *w, float2 *img, const float2 *tw, long long n1, long long p1,
                        long long nrows)
{
    constexpr int L = lines_of<LOGP>();
    k_tp_rows<LOGP, MODE><<<(unsigned)((nrows + L - 1) / L), L * ((1 << LOGP) / 8), 0, s>>>(w, img, tw, n1, p1, nrows);
}

/* The launcher of lines (rows = 0) or rows of p points in the given mode, by the template for p. */
template <int MODE>
static mr_status dispatch(cudaStream_t s, long long p, int rows, float2 *w, const float *h, float2 *img,
                          const float2 *tw, long long a, long long b, long long nb, long long bstride)
{
#define MR_TPC_CASE(LOGP)                                                                                              \
    case 1 << LOGP:                                                                                                    \
        if constexpr (MODE != TP_FUSED) {                                                                              \
            if (rows) {                                                                                                \
                launch_rows<LOGP, MODE>(s, w, img, tw, a, b, nb);                                                      \
                return MR_OK;                                                                                          \
            }                                                                                                          \
        }                                                                                                              \
            launch_lines<LOGP, MODE>(s, w, h, tw, a, b, nb, bstride);                                                  \
        return MR_OK;
    switch (p) {
        MR_TPC_CASE(3)
        MR_TPC_CASE(4)
        MR_TPC_CASE(5)
        MR_TPC_CASE(6)
        MR_TPC_CASE(7)
        MR_TPC_CASE(8)
        MR_TPC_CASE(9)
        MR_TPC_CASE(10)
    default:
        return mr_error(MR_EINVAL, "GPU Toeplitz: no line transform for %lld points", p);
    }
#undef MR_TPC_CASE
}

mr_status mr_gpu_tp_column(mr_gpu_ctx *c, float2 *w, const float *h, const float2 *tw, long long slab, long long p)
{
    mr_status st = dispatch<TP_FUSED>(mr_gpu_ctx_stream(c), p, 0, w, h, NULL, tw, slab, slab, 1, 0);
    return st == MR_OK ? mr_gpu_ctx_launched(c, "Toeplitz slow-axis transform") : st;
}

mr_status mr_gpu_tp_lines(mr_gpu_ctx *c, int inverse, float2 *w, const float2 *tw, long long p, long long stride,
                          long long ncol, long long nbatch, long long bstride)
{
    cudaStream_t s = mr_gpu_ctx_stream(c);
    mr_status st = inverse ? dispatch<TP_INVERSE>(s, p, 0, w, NULL, NULL, tw, stride, ncol, nbatch, bstride)
                           : dispatch<TP_FORWARD>(s, p, 0, w, NULL, NULL, tw, stride, ncol, nbatch, bstride);
    return st == MR_OK ? mr_gpu_ctx_launched(c, "Toeplitz middle-axis transform") : st;
}

mr_status mr_gpu_tp_rows(mr_gpu_ctx *c, int inverse, float2 *w, float2 *img, const float2 *tw, long long p,
                         long long n1, long long p1, long long nrows)
{
    cudaStream_t s = mr_gpu_ctx_stream(c);
    mr_status st = inverse ? dispatch<TP_INVERSE>(s, p, 1, w, NULL, img, tw, n1, p1, nrows, 0)
                           : dispatch<TP_FORWARD>(s, p, 1, w, NULL, img, tw, n1, p1, nrows, 0);
    return st == MR_OK ? mr_gpu_ctx_launched(c, inverse ? "Toeplitz row transform and crop" : "Toeplitz padding and row transform") : st;
}
