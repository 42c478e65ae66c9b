/* Built instead of the CUDA sources when mrirecon is configured without CUDA. */
#include "gpu.h"

int mr_gpu_count(void) { return 0; }

mr_status mr_gpu_describe(int device, char *buf, size_t size)
{
    (void)device;
    if (size)
        buf[0] = '\0';
    return mr_error(MR_ENODEV, "this mrirecon was built without CUDA");
}

mr_status mr_gpu_nudft_create(mr_gpu_nudft **out, int device, const float *traj, int64_t m)
{
    (void)device;
    (void)traj;
    (void)m;
    *out = NULL;
    return mr_error(MR_ENODEV, "this mrirecon was built without CUDA");
}

void mr_gpu_nudft_destroy(mr_gpu_nudft *p) { (void)p; }

mr_status mr_gpu_nudft_adjoint(mr_gpu_nudft *p, const mr_grid *g, const float *a, int real_weights, float *out,
                               mr_gpu_variant variant)
{
    (void)p;
    (void)g;
    (void)a;
    (void)real_weights;
    (void)out;
    (void)variant;
    return mr_error(MR_ENODEV, "this mrirecon was built without CUDA");
}

double mr_gpu_nudft_last_ms(const mr_gpu_nudft *p)
{
    (void)p;
    return 0.0;
}

int mr_gpu_config_count(void) { return 0; }

mr_status mr_gpu_config_get(int i, mr_gpu_config *cfg)
{
    (void)i;
    (void)cfg;
    return mr_error(MR_ENODEV, "this mrirecon was built without CUDA");
}

void mr_gpu_variant_config(mr_gpu_variant variant, int real_weights, mr_gpu_config *cfg)
{
    (void)variant;
    (void)real_weights;
    cfg->threads = cfg->chunk = cfg->unroll = cfg->voxels = cfg->rotate = cfg->mode = 0;
}

mr_status mr_gpu_nudft_adjoint_config(mr_gpu_nudft *p, const mr_grid *g, const float *a, int real_weights,
                                      float *out, const mr_gpu_config *cfg)
{
    (void)p;
    (void)g;
    (void)a;
    (void)real_weights;
    (void)out;
    (void)cfg;
    return mr_error(MR_ENODEV, "this mrirecon was built without CUDA");
}

void mr_gpu_nudft_set_max_pass(mr_gpu_nudft *p, int64_t voxels)
{
    (void)p;
    (void)voxels;
}
