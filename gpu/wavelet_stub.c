/* Built instead of gpu/wavelet.cu when mrirecon is configured without CUDA: no GPU backend exists then,
 * so these are never reached through solver/wavelet.c; they fail with MR_ENODEV. */
#include "wavelet.h"

static mr_status wavelet_nocuda(void) { return mr_error(MR_ENODEV, "this mrirecon was built without CUDA"); }

mr_status mr_gpu_wavelet_create(mr_gpu_wavelet **out, mr_gpu_ctx *c, const mr_wavelet_geom *g)
{
    (void)c, (void)g;
    if (out)
        *out = NULL;
    return wavelet_nocuda();
}

void mr_gpu_wavelet_destroy(mr_gpu_wavelet *w) { (void)w; }

mr_status mr_gpu_wavelet_forward(mr_gpu_wavelet *w, const int64_t shift[3], const float *x, float *y)
{
    (void)w, (void)shift, (void)x, (void)y;
    return wavelet_nocuda();
}

mr_status mr_gpu_wavelet_adjoint(mr_gpu_wavelet *w, const int64_t shift[3], const float *y, float *x)
{
    (void)w, (void)shift, (void)y, (void)x;
    return wavelet_nocuda();
}
