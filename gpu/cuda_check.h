/* The one way every CUDA runtime call in gpu/ is checked (included by the gpu/ .cu files only).
 *
 *   mr_status st = MR_CU(cudaMalloc(&p, bytes));
 *
 * evaluates the call once; on failure it records "file:line: call: error name (text)" with mr_error()
 * and returns MR_ENOMEM for cudaErrorMemoryAllocation (so the caller can split the work into passes)
 * and MR_ECUDA for every other error; MR_OK on success. The non-sticky error is cleared, so a later
 * cudaGetLastError() does not report it again. */
#ifndef MR_CUDA_CHECK_H
#define MR_CUDA_CHECK_H

#include <cuda_runtime.h>

#include "../base/status.h"

static inline mr_status mr_cuda_check(cudaError_t e, const char *call, const char *file, int line)
{
    if (e == cudaSuccess)
        return MR_OK;
    (void)cudaGetLastError();
    return mr_error(e == cudaErrorMemoryAllocation ? MR_ENOMEM : MR_ECUDA, "%s:%d: %s: %s (%s)", file, line, call,
                    cudaGetErrorName(e), cudaGetErrorString(e));
}

#define MR_CU(call) mr_cuda_check((call), #call, __FILE__, __LINE__)

#endif
