/* cuFFT's entry points for the gpu/ .cu files, loaded at run time by gpu/toeplitz.cu (mr_gpu_fft_load,
 * gpu_ops.h): call mr_gpu_fft_load first; the table is valid once it returned MR_OK. */
#ifndef MR_CUFFT_API_H
#define MR_CUFFT_API_H

#include <cufft.h>

#include "../base/status.h"

typedef struct {
    cufftResult (*plan_many)(cufftHandle *, int, int *, int *, int, int, int *, int, int, cufftType, int);
    cufftResult (*set_stream)(cufftHandle, cudaStream_t);
    cufftResult (*exec_c2c)(cufftHandle, cufftComplex *, cufftComplex *, int);
    cufftResult (*destroy)(cufftHandle);
    cufftResult (*exec_z2z)(cufftHandle, cufftDoubleComplex *, cufftDoubleComplex *, int);
    cufftResult (*estimate_many)(int, int *, int *, int, int, int *, int, int, cufftType, int, size_t *);
} mr_cufft_api;

/* The loaded entry points (after mr_gpu_fft_load returned MR_OK). */
const mr_cufft_api *mr_cufft(void);

/* MR_OK, or MR_ENOMEM (allocation) / MR_ECUDA naming what failed and the code. */
mr_status mr_cufft_check(cufftResult r, const char *what);

#endif
