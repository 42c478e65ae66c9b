/* The option helpers of gpu/gemm.h: plain C, built with and without CUDA. */
#include <string.h>

#include "gemm.h"

void mr_gemm_opts_default(mr_gemm_opts *o)
{
    memset(o, 0, sizeof *o);
    o->device = 0;
    o->mem_fraction = 0.5;
    o->split_samples = 4096;
    o->hermitian = 1;
    o->engine = MR_GEMM_ENGINE_AUTO;
    o->variant = 0;
}

const char *mr_gemm_precision_name(mr_gemm_precision p) { return p == MR_GEMM_FP64 ? "fp64" : "tf32x3"; }

mr_status mr_gemm_precision_parse(const char *text, mr_gemm_precision *p)
{
    if (text && strcmp(text, "tf32x3") == 0) {
        *p = MR_GEMM_TF32X3;
        return MR_OK;
    }
    if (text && strcmp(text, "fp64") == 0) {
        *p = MR_GEMM_FP64;
        return MR_OK;
    }
    return mr_error(MR_EINVAL, "precision '%s': expected tf32x3 or fp64", text ? text : "(null)");
}
