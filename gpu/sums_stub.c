/* Built instead of gpu/sums.cu when mrirecon is configured without CUDA: the sums need a GPU. */
#include <stdio.h>

#include "sums.h"

static mr_status sums_nocuda(void) { return mr_error(MR_ENODEV, "this mrirecon was built without CUDA"); }

mr_sums_engine mr_gpu_sums_choose(int device, const int64_t matrix[3], int64_t m, char *why, size_t why_size)
{
    (void)device, (void)matrix, (void)m;
    if (why && why_size)
        snprintf(why, why_size, "sfu: built without CUDA");
    return MR_SUMS_SFU;
}

mr_status mr_gpu_sums_create(mr_gpu_sums **out, mr_gpu_ctx *c, const float *traj, int64_t m,
                             const mr_gpu_sums_opts *o)
{
    (void)c, (void)traj, (void)m, (void)o;
    if (out)
        *out = NULL;
    return sums_nocuda();
}

void mr_gpu_sums_destroy(mr_gpu_sums *s) { (void)s; }

mr_status mr_gpu_sums_adjoint(mr_gpu_sums *s, const mr_grid *g, const float *d_a, int real_weights, void *d_out,
                              mr_gemm_type out_type)
{
    (void)s, (void)g, (void)d_a, (void)real_weights, (void)d_out, (void)out_type;
    return sums_nocuda();
}

mr_status mr_gpu_sums_forward(mr_gpu_sums *s, const mr_grid *g, const float *d_x, float *d_out)
{
    (void)s, (void)g, (void)d_x, (void)d_out;
    return sums_nocuda();
}

void mr_gpu_sums_trim(mr_gpu_sums *s) { (void)s; }

void mr_gpu_sums_describe(const mr_gpu_sums *s, const mr_grid *g, int real_weights, char *buf, size_t size)
{
    (void)s, (void)g, (void)real_weights;
    if (buf && size)
        buf[0] = '\0';
}

int mr_gpu_sums_parts(const mr_gpu_sums *s)
{
    (void)s;
    return 0;
}
