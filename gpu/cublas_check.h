/* cuBLAS for gpu/gemm.cu: the entry points, loaded at run time like cuFFT (gpu/cublas_load.cu; linked
 * statically instead with -DMR_CUBLAS_STATIC=ON), and the one way every cuBLAS call is checked (the
 * cuBLAS twin of cuda_check.h):
 *
 *   mr_status st = MR_CB(mr_cb.dgemm(...));
 *
 * evaluates the call once; on failure it records "file:line: call: status name" with mr_error() and
 * returns MR_ENOMEM for CUBLAS_STATUS_ALLOC_FAILED and MR_ECUDA for every other failure. mr_cb is
 * valid after mr_gemm_load() returned MR_OK (gpu/gemm.h); mr_gemm_create calls it. */
#ifndef MR_CUBLAS_CHECK_H
#define MR_CUBLAS_CHECK_H

#include <cublas_v2.h>

#include "../base/status.h"

/* GemmEx and GemmStridedBatchedEx have C++ overloads in the header: their C signatures spelled out */
typedef cublasStatus_t (*mr_cublas_gemm_ex_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                               const void *, const void *, cudaDataType, int, const void *,
                                               cudaDataType, int, const void *, void *, cudaDataType, int,
                                               cublasComputeType_t, cublasGemmAlgo_t);
typedef cublasStatus_t (*mr_cublas_gemm_sb_ex_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                                  const void *, const void *, cudaDataType, int, long long int,
                                                  const void *, cudaDataType, int, long long int, const void *, void *,
                                                  cudaDataType, int, long long int, int, cublasComputeType_t,
                                                  cublasGemmAlgo_t);

typedef struct {
    decltype(&cublasCreate_v2) create;
    decltype(&cublasDestroy_v2) destroy;
    decltype(&cublasSetStream_v2) set_stream;
    decltype(&cublasDgemm_v2) dgemm;
    decltype(&cublasZgemm_v2) zgemm;
    mr_cublas_gemm_ex_fn gemm_ex;
    mr_cublas_gemm_sb_ex_fn gemm_strided_batched_ex;
    decltype(&cublasGetStatusName) status_name;
    decltype(&cublasGetStatusString) status_string;
} mr_cublas_api;

extern mr_cublas_api mr_cb;

static inline mr_status mr_cublas_check(cublasStatus_t s, const char *call, const char *file, int line)
{
    if (s == CUBLAS_STATUS_SUCCESS)
        return MR_OK;
    return mr_error(s == CUBLAS_STATUS_ALLOC_FAILED ? MR_ENOMEM : MR_ECUDA, "%s:%d: %s: %s (%s)", file, line, call,
                    mr_cb.status_name(s), mr_cb.status_string(s));
}

#define MR_CB(call) mr_cublas_check((call), #call, __FILE__, __LINE__)

#endif
