/* mr_gemm_load (gpu/gemm.h): cuBLAS's entry points for gpu/gemm.cu. By default the library is loaded
 * at run time (dlopen: the path CMake found, then its soname, then the usual sonames), so a CUDA build
 * starts where cuBLAS is missing and only the GEMM engines fail, with MR_ENODEV naming the library
 * (docs/GPU.md, "Linking cuBLAS"). With -DMR_CUBLAS_STATIC=ON it is linked statically and this only
 * fills the table. */
#include <stdio.h>

#include "cublas_check.h"
#include "dl.h"
#include "gemm.h"

#ifndef MR_CUBLAS_LIBRARY
#define MR_CUBLAS_LIBRARY "libcublas.so"
#endif
#ifndef MR_CUBLAS_SONAME
#define MR_CUBLAS_SONAME "libcublas.so"
#endif

mr_cublas_api mr_cb;

#ifdef MR_CUBLAS_STATIC
mr_status mr_gemm_load(void)
{
    mr_cb.create = cublasCreate_v2;
    mr_cb.destroy = cublasDestroy_v2;
    mr_cb.set_stream = cublasSetStream_v2;
    mr_cb.dgemm = cublasDgemm_v2;
    mr_cb.zgemm = cublasZgemm_v2;
    mr_cb.gemm_ex = static_cast<mr_cublas_gemm_ex_fn>(cublasGemmEx);
    mr_cb.gemm_strided_batched_ex = static_cast<mr_cublas_gemm_sb_ex_fn>(cublasGemmStridedBatchedEx);
    mr_cb.status_name = cublasGetStatusName;
    mr_cb.status_string = cublasGetStatusString;
    return MR_OK;
}
#else
static const char *const cublas_names[] = {MR_CUBLAS_LIBRARY, MR_CUBLAS_SONAME, "libcublas.so.13", "libcublas.so.12",
                                           "libcublas.so", NULL};
/* in the order of mr_cublas_api */
static const char *const cublas_symbols[] = {"cublasCreate_v2",       "cublasDestroy_v2",
                                             "cublasSetStream_v2",    "cublasDgemm_v2",
                                             "cublasZgemm_v2",        "cublasGemmEx",
                                             "cublasGemmStridedBatchedEx", "cublasGetStatusName",
                                             "cublasGetStatusString", NULL};
static void *cublas_fns[9];
static mr_dl_lib cublas_lib = {"cuBLAS", cublas_names, cublas_symbols, cublas_fns, MR_DL_STATE};

mr_status mr_gemm_load(void)
{
    static_assert(sizeof cublas_fns == sizeof(mr_cublas_api), "one entry point per field of mr_cublas_api");
    mr_status st = mr_dl_load(&cublas_lib);
    if (st != MR_OK) {
        char why[768];
        snprintf(why, sizeof why, "%s", mr_last_error());
        return mr_error(st, "GPU GEMM sums: %s", why);
    }
    mr_cb.create = (decltype(mr_cb.create))cublas_fns[0];
    mr_cb.destroy = (decltype(mr_cb.destroy))cublas_fns[1];
    mr_cb.set_stream = (decltype(mr_cb.set_stream))cublas_fns[2];
    mr_cb.dgemm = (decltype(mr_cb.dgemm))cublas_fns[3];
    mr_cb.zgemm = (decltype(mr_cb.zgemm))cublas_fns[4];
    mr_cb.gemm_ex = (decltype(mr_cb.gemm_ex))cublas_fns[5];
    mr_cb.gemm_strided_batched_ex = (decltype(mr_cb.gemm_strided_batched_ex))cublas_fns[6];
    mr_cb.status_name = (decltype(mr_cb.status_name))cublas_fns[7];
    mr_cb.status_string = (decltype(mr_cb.status_string))cublas_fns[8];
    return MR_OK;
}
#endif
