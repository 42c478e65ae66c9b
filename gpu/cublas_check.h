/* The one way every cuBLAS call in gpu/ is checked (the cuBLAS twin of cuda_check.h).
 *
 *   mr_status st = MR_CB(cublasDgemm(...));
 *
 * evaluates the call once; on failure it records "file:line: call: status name" with mr_error() and
 * returns MR_ENOMEM for CUBLAS_STATUS_ALLOC_FAILED and MR_ECUDA for every other failure. */
#ifndef MR_CUBLAS_CHECK_H
#define MR_CUBLAS_CHECK_H

#include <cublas_v2.h>

#include "../base/status.h"

static inline mr_status mr_cublas_check(cublasStatus_t s, const char *call, const char *file, int line)
{
    if (s == CUBLAS_STATUS_SUCCESS)
        return MR_OK;
    return mr_error(s == CUBLAS_STATUS_ALLOC_FAILED ? MR_ENOMEM : MR_ECUDA, "%s:%d: %s: %s (%s)", file, line, call,
                    cublasGetStatusName(s), cublasGetStatusString(s));
}

#define MR_CB(call) mr_cublas_check((call), #call, __FILE__, __LINE__)

#endif
