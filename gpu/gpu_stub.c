/* Built instead of the CUDA sources when mrirecon is configured without CUDA. */
#include <math.h>

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

mr_gpu_variant mr_gpu_variant_for_grid(int device, const mr_grid *g, int real_weights)
{
    (void)device, (void)g, (void)real_weights;
    return MR_GPU_BEST;
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

/* ---- gpu/gpu_ops.h and the device entry points of gpu/gpu.h ------------------------------------ */
#include "gpu_ops.h"

static mr_status no_cuda(void) { return mr_error(MR_ENODEV, "this mrirecon was built without CUDA"); }

mr_status mr_gpu_nudft_adjoint_dev(mr_gpu_nudft *p, mr_gpu_ctx *c, const mr_grid *g, const float *d_a, int real_weights,
                                   float *d_out, mr_gpu_variant variant)
{
    (void)p, (void)c, (void)g, (void)d_a, (void)real_weights, (void)d_out, (void)variant;
    return no_cuda();
}

mr_status mr_gpu_nudft_forward_dev(mr_gpu_nudft *p, mr_gpu_ctx *c, const mr_grid *g, const float *d_x, float *d_out,
                                   int exact_trig)
{
    (void)p, (void)c, (void)g, (void)d_x, (void)d_out, (void)exact_trig;
    return no_cuda();
}

mr_status mr_gpu_ctx_create(mr_gpu_ctx **out, int device)
{
    (void)device;
    *out = NULL;
    return no_cuda();
}

void mr_gpu_ctx_destroy(mr_gpu_ctx *c) { (void)c; }
int mr_gpu_ctx_device(const mr_gpu_ctx *c) { return (void)c, -1; }
mr_status mr_gpu_ctx_status(mr_gpu_ctx *c) { return (void)c, no_cuda(); }
mr_status mr_gpu_ctx_sync(mr_gpu_ctx *c) { return (void)c, no_cuda(); }

float *mr_gpu_alloc(mr_gpu_ctx *c, int64_t nfloats)
{
    (void)c, (void)nfloats;
    no_cuda();
    return NULL;
}

void mr_gpu_free(mr_gpu_ctx *c, void *p) { (void)c, (void)p; }

mr_status mr_gpu_upload(mr_gpu_ctx *c, float *dev_dst, const float *host_src, int64_t nfloats)
{
    (void)c, (void)dev_dst, (void)host_src, (void)nfloats;
    return no_cuda();
}

mr_status mr_gpu_download(mr_gpu_ctx *c, float *host_dst, const float *dev_src, int64_t nfloats)
{
    (void)c, (void)host_dst, (void)dev_src, (void)nfloats;
    return no_cuda();
}

void mr_gpu_vec_zero(mr_gpu_ctx *c, int64_t n, float *x) { (void)c, (void)n, (void)x; }
void mr_gpu_vec_copy(mr_gpu_ctx *c, int64_t n, float *dst, const float *src) { (void)c, (void)n, (void)dst, (void)src; }

void mr_gpu_vec_dot(mr_gpu_ctx *c, int64_t n, const float *x, const float *y, double out[2])
{
    (void)c, (void)n, (void)x, (void)y;
    out[0] = out[1] = 0.0;
}

double mr_gpu_vec_norm(mr_gpu_ctx *c, int64_t n, const float *x) { return (void)c, (void)n, (void)x, 0.0; }
void mr_gpu_vec_ewise(mr_gpu_ctx *c, mr_ew_op op, int64_t n, float *out, const float *x, const float *y,
                      const mr_ew_args *args)
{
    (void)c, (void)op, (void)n, (void)out, (void)x, (void)y, (void)args;
}
double mr_gpu_vec_ewise_reduce(mr_gpu_ctx *c, mr_ewr_op op, int64_t n, const float *x, const mr_ew_args *args)
{
    (void)c, (void)op, (void)n, (void)x, (void)args;
    return NAN;
}

double mr_gpu_vec_mag_dist2(mr_gpu_ctx *c, int64_t n, const float *x, const float *t)
{
    return (void)c, (void)n, (void)x, (void)t, 0.0;
}

mr_status mr_gpu_scale_rows(mr_gpu_ctx *c, int64_t m, int64_t batch, const float *s, const float *in, float *out)
{
    (void)c, (void)m, (void)batch, (void)s, (void)in, (void)out;
    return no_cuda();
}

mr_status mr_gpu_sens_forward(mr_gpu_ctx *c, int64_t n, int64_t ncoils, const float *maps, const float *x, float *y)
{
    (void)c, (void)n, (void)ncoils, (void)maps, (void)x, (void)y;
    return no_cuda();
}

mr_status mr_gpu_sens_adjoint(mr_gpu_ctx *c, int64_t n, int64_t ncoils, const float *maps, const float *y, float *x)
{
    (void)c, (void)n, (void)ncoils, (void)maps, (void)x, (void)y;
    return no_cuda();
}

mr_status mr_gpu_sens_normal(mr_gpu_ctx *c, int64_t n, int64_t ncoils, const float *maps, const float *x, float *y)
{
    (void)c, (void)n, (void)ncoils, (void)maps, (void)x, (void)y;
    return no_cuda();
}

mr_status mr_gpu_fd_forward(mr_gpu_ctx *c, const int64_t matrix[3], const float *x, float *g)
{
    (void)c, (void)matrix, (void)x, (void)g;
    return no_cuda();
}

mr_status mr_gpu_fd_adjoint(mr_gpu_ctx *c, const int64_t matrix[3], const float *g, float *x)
{
    (void)c, (void)matrix, (void)x, (void)g;
    return no_cuda();
}

mr_status mr_gpu_fd_normal(mr_gpu_ctx *c, const int64_t matrix[3], const float *x, float *y)
{
    (void)c, (void)matrix, (void)x, (void)y;
    return no_cuda();
}

mr_status mr_gpu_toeplitz_create(mr_gpu_toeplitz **out, mr_gpu_ctx *c, const int64_t matrix[3], const float *q)
{
    (void)c, (void)matrix, (void)q;
    *out = NULL;
    return no_cuda();
}

mr_status mr_gpu_toeplitz_apply(mr_gpu_toeplitz *t, int64_t batch, const float *x, float *y)
{
    (void)t, (void)batch, (void)x, (void)y;
    return no_cuda();
}

mr_status mr_gpu_toeplitz_circulant_solve(mr_gpu_toeplitz *t, double a, double g, double s, const float *r, float *z)
{
    (void)t, (void)a, (void)g, (void)s, (void)r, (void)z;
    return no_cuda();
}

void mr_gpu_toeplitz_destroy(mr_gpu_toeplitz *t) { (void)t; }
double mr_gpu_toeplitz_plan_seconds(const mr_gpu_toeplitz *t) { return (void)t, 0.0; }

mr_status mr_gpu_fft_load(void) { return no_cuda(); }

void mr_gpu_warm_up(const int *gpus, int n) { (void)gpus, (void)n; }
void mr_gpu_release(int device) { (void)device; }

mr_status mr_gpu_fetch(int device, float *host_dst, const float *dev_src, int64_t nfloats)
{
    (void)device, (void)host_dst, (void)dev_src, (void)nfloats;
    return no_cuda();
}

mr_status mr_gpu_memory(int device, int64_t *free_bytes, int64_t *total_bytes)
{
    (void)device;
    *free_bytes = *total_bytes = 0;
    return mr_error(MR_ENODEV, "this mrirecon was built without CUDA");
}
