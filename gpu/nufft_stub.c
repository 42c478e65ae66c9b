/* Built instead of gpu/nufft.cu when mrirecon is configured without CUDA: the GPU NUFFT needs a GPU
 * (mr_gpu_nufft_bytes and mr_gpu_nufft_tiles, plain arithmetic, are in gpu/nufft_size.c). */
#include <stddef.h>

#include "nufft.h"

static mr_status nufft_nocuda(void) { return mr_error(MR_ENODEV, "this mrirecon was built without CUDA"); }

mr_status mr_gpu_nufft_create(mr_gpu_nufft **out, mr_gpu_ctx *c, const mr_grid *g, const float *traj, int64_t m,
                              const mr_gpu_nufft_kernel *k)
{
    (void)c, (void)g, (void)traj, (void)m, (void)k;
    if (out)
        *out = NULL;
    return nufft_nocuda();
}

void mr_gpu_nufft_destroy(mr_gpu_nufft *p) { (void)p; }

mr_status mr_gpu_nufft_type1(mr_gpu_nufft *p, int64_t ncoils, const void *d_a, int real_weights, int io_f64,
                             void *d_out)
{
    (void)p, (void)ncoils, (void)d_a, (void)real_weights, (void)io_f64, (void)d_out;
    return nufft_nocuda();
}

mr_status mr_gpu_nufft_type2(mr_gpu_nufft *p, int64_t ncoils, const void *d_x, int io_f64, void *d_out)
{
    (void)p, (void)ncoils, (void)d_x, (void)io_f64, (void)d_out;
    return nufft_nocuda();
}

void mr_gpu_nufft_describe(const mr_gpu_nufft *p, int bin[3], int64_t *tiles, int *classes)
{
    (void)p;
    bin[0] = bin[1] = bin[2] = 0;
    *tiles = 0;
    *classes = 0;
}
