/* The Toeplitz normal's transform along the slowest axis, fused (gpu/toeplitz.cu, gpu_internal.h):
 *
 *   for every line of the 2N grid along its slowest axis s (P = 2 N_s points, `slab` apart):
 *     FFT -> multiply by the real spectrum H -> inverse FFT,
 *
 * in one kernel, the line in shared memory. The padded image is zero in the upper half of every line
 * (points N_s .. P-1), and the crop keeps only the lower half, so the kernel reads and writes only the
 * lower halves. Against cuFFT's strided 1D plan, a multiplication pass and the inverse plan (three passes
 * over the whole grid, each read and written, plus H), the grid is read half once, written half once and H
 * read once.
 *
 * The FFT: Stockham autosort (Govindaraju et al., "High performance discrete Fourier transforms on
 * graphics processors", SC 2008), radix 8 with one radix-2 or radix-4 pass first when log2 P is not a
 * multiple of 3; P/8 threads per line, each holding 8 values per pass (one radix-8 iteration, two radix-4
 * or four radix-2 ones); twiddles from a table of e^{-2 pi i k / P} made in float64. The inverse is
 * conj(FFT(conj(.))): H is real, so the line is conjugated after the multiplication and at the store.
 * Lines of P = 8 .. 1024 points (a power of 2); others take the cuFFT path (mr_gpu_tp_column_supported).
 * Several lines per block: consecutive positions within a slab (coalesced loads and stores), up to 512
 * threads, static shared memory (<= 33 KB), so that several blocks share an SM and one block's loads overlap
 * another's passes. Measured (H200, `--method cg`, solve time against cuFFT's three passes): 512 threads
 * per block 0.309 against 0.341 s at 256^3, 1.70 against 1.97 s with 8 coils, 0.050 against 0.057 s on the
 * book problem; 128 and 256 threads gained less (0.333 / 0.327 s at 256^3), a first version with 1024
 * threads, 16 lines and run-time sizes lost 12 % at 256^3. */
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
            float2 x = d[j + r * stride];
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
            d[dst + r * NS] = v[i * R + r];
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

/* Lines of P = 2^LOGP points: blockDim.x = L x P/8 (L = lines_of), shared memory L x (P + 1) float2 (line l at
 * l (P + 1): the padding puts the lines' points on different banks for the loads, the product and the
 * stores). Line l holds w[z slab + c] of position c = c0 + l in the slab; its lower half (z < P/2) is read
 * and written. */
template <int LOGP>
__global__ void __launch_bounds__(TPC_MAX_THREADS) k_tp_column(float2 *w, const float *h, const float2 *tw, long long slab)
{
    constexpr int P = 1 << LOGP, L = lines_of<LOGP>(), PS = P + 1, NT = L * (P / 8), LOW = P / 2;
    __shared__ float2 sm[L * PS];
    const unsigned tid = threadIdx.x;
    const long long c0 = (long long)blockIdx.x * L;
#pragma unroll 4
    for (unsigned i = tid; i < L * P; i += NT) { /* consecutive threads: consecutive lines (coalesced) */
        const unsigned l = i % L, z = i / L;
        const long long c = c0 + l;
        sm[l * PS + z] = (z < LOW && c < slab) ? w[z * slab + c] : make_float2(0.0f, 0.0f);
    }
    __syncthreads();
    const unsigned l = tid / (P / 8), t = tid % (P / 8);
    line_fft<LOGP>(sm + l * PS, tw, t);
#pragma unroll 4
    for (unsigned i = tid; i < L * P; i += NT) { /* x H, conjugated for the inverse */
        const unsigned li = i % L, z = i / L;
        const long long c = c0 + li;
        const float f = c < slab ? h[z * slab + c] : 0.0f;
        const float2 v = sm[li * PS + z];
        sm[li * PS + z] = make_float2(v.x * f, -v.y * f);
    }
    __syncthreads();
    line_fft<LOGP>(sm + l * PS, tw, t);
#pragma unroll 4
    for (unsigned i = tid; i < L * LOW; i += NT) {
        const unsigned li = i % L, z = i / L;
        const long long c = c0 + li;
        if (c < slab) {
            const float2 v = sm[li * PS + z];
            w[z * slab + c] = make_float2(v.x, -v.y);
        }
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

template <int LOGP> static void launch(cudaStream_t s, float2 *w, const float *h, const float2 *tw, long long slab)
{
    constexpr int L = lines_of<LOGP>();
    k_tp_column<LOGP><<<(unsigned)((slab + L - 1) / L), L * ((1 << LOGP) / 8), 0, s>>>(w, h, tw, slab);
}

mr_status mr_gpu_tp_column(mr_gpu_ctx *c, float2 *w, const float *h, const float2 *tw, long long slab, long long p)
{
    cudaStream_t s = mr_gpu_ctx_stream(c);
    switch (p) {
    case 8: launch<3>(s, w, h, tw, slab); break;
    case 16: launch<4>(s, w, h, tw, slab); break;
    case 32: launch<5>(s, w, h, tw, slab); break;
    case 64: launch<6>(s, w, h, tw, slab); break;
    case 128: launch<7>(s, w, h, tw, slab); break;
    case 256: launch<8>(s, w, h, tw, slab); break;
    case 512: launch<9>(s, w, h, tw, slab); break;
    case 1024: launch<10>(s, w, h, tw, slab); break;
    default: return mr_error(MR_EINVAL, "GPU Toeplitz: no fused transform for lines of %lld points", p);
    }
    return mr_gpu_ctx_launched(c, "Toeplitz slow-axis transform");
}
