/* Shared by the gpu/ .cu files only: the device context's stream and failure record (gpu_ops.h),
 * and the launch geometry every element-wise kernel uses. */
#ifndef MR_GPU_INTERNAL_H
#define MR_GPU_INTERNAL_H

#include <cuda_runtime.h>

#include "../base/status.h"
#include "gpu_ops.h"

/* The context's stream (all of its work runs there). */
cudaStream_t mr_gpu_ctx_stream(const mr_gpu_ctx *c);
/* Record st (with the current mr_last_error message) as the context's first failure, unless one is
 * recorded already; returns st. */
mr_status mr_gpu_ctx_fail(mr_gpu_ctx *c, mr_status st);
/* The status of the last launch on the context (cudaGetLastError), recorded as a failure. */
mr_status mr_gpu_ctx_launched(mr_gpu_ctx *c, const char *what);

/* A grow-only device buffer on the current device: afterwards *p holds at least want bytes (*bytes its
 * size); a buffer that is too small is freed and allocated anew, its contents not kept. */
mr_status mr_gpu_grow(void **p, size_t *bytes, size_t want);

/* cuFFT through gpu/toeplitz.cu's run-time loader (gpu/toeplitz.cu, gpu/field_tp.cu): a plan of `batch`
 * consecutive complex grids dims[rank] (slowest axis first), or with stride > 0 (rank 1) of `batch` lines
 * of dims[0] points `stride` apart, consecutive lines 1 apart; on the context's stream (*plan -1 on
 * failure; cuFFT loaded on first use), executed in place, destroyed (-1 is fine). */
mr_status mr_gpu_fft_plan(int *plan, mr_gpu_ctx *c, int rank, const int *dims, int batch, int stride);
mr_status mr_gpu_fft_exec(int plan, float2 *data, int inverse);
void mr_gpu_fft_destroy(int plan);
/* The Toeplitz normal's slowest axis fused (gpu/toeplitz_column.cu): for every line of p points `slab` apart
 * in w (the 2N grid), FFT, multiply by the real h (the same layout), inverse FFT (unnormalised), reading
 * and writing the first p/2 points of each line (the rest taken as zero). For p a power of 2 in [8, 1024]
 * (supported); prepare once per p (the twiddle table, *tw, mr_gpu_free), before the first launch. */
int mr_gpu_tp_column_supported(long long p);
mr_status mr_gpu_tp_column_prepare(mr_gpu_ctx *c, long long p, float2 **tw); /* *tw: the twiddles [p] (mr_gpu_free) */
mr_status mr_gpu_tp_column(mr_gpu_ctx *c, float2 *w, const float *h, const float2 *tw, long long slab, long long p);
/* The other axes' line transforms of gpu/toeplitz_column.cu (p as mr_gpu_tp_column_supported, tw its twiddles):
 * lines of p points at w + b bstride + z stride + c (c < ncol, b < nbatch), forward (lower half in, the whole
 * line out) or inverse (the whole line in, lower half out); and the fastest axis's rows, forward from the
 * image (rows of p/2 points, padded) into the grid or inverse from the grid into the image (cropped), row r
 * < nrows being (r mod n1, r / n1) of the image's n1-row planes and of the grid's p1-row planes. */
mr_status mr_gpu_tp_lines(mr_gpu_ctx *c, int inverse, float2 *w, const float2 *tw, long long p, long long stride,
                          long long ncol, long long nbatch, long long bstride);
mr_status mr_gpu_tp_rows(mr_gpu_ctx *c, int inverse, float2 *w, float2 *img, const float2 *tw, long long p,
                         long long n1, long long p1, long long nrows);
/* out (device, the 2N grid [P][2]) = Q (device, mr_grid_q [nq][2]) arranged circulantly as the Toeplitz
 * normal does before its transform (solver/toeplitz.h), on the context's stream. */
mr_status mr_gpu_toeplitz_arrange(mr_gpu_ctx *c, const int64_t matrix[3], const float *q, float *out);

/* Blocks for a grid-stride loop over n items with 256 threads per block. */
#define MR_GPU_THREADS 256
static inline unsigned mr_gpu_blocks(long long n)
{
    long long b = (n + MR_GPU_THREADS - 1) / MR_GPU_THREADS;
    if (b < 1)
        b = 1;
    return (unsigned)(b > 8192 ? 8192 : b);
}

/* for (i = this thread's first item; i < n; i += all threads) */
#define MR_GRID_STRIDE(i, n)                                                                                   \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (long long)gridDim.x * blockDim.x)

#endif
