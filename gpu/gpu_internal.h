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
