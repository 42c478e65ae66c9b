/* Built instead of gpu/field.cu when mrirecon is configured without CUDA: the field operators' device
 * side needs a GPU. */
#include "field.h"

static mr_status field_nocuda(void) { return mr_error(MR_ENODEV, "this mrirecon was built without CUDA"); }

mr_status mr_gpu_field_create(mr_gpu_field **out, mr_gpu_ctx *c, const int64_t matrix[3], const float *traj,
                              const float *time, const float *fieldmap, int64_t m)
{
    (void)c, (void)matrix, (void)traj, (void)time, (void)fieldmap, (void)m;
    if (out)
        *out = NULL;
    return field_nocuda();
}

mr_status mr_gpu_field_forward(mr_gpu_field *p, const float *d_x, float *d_y)
{
    (void)p, (void)d_x, (void)d_y;
    return field_nocuda();
}

mr_status mr_gpu_field_adjoint(mr_gpu_field *p, const float *d_a, float *d_x)
{
    (void)p, (void)d_a, (void)d_x;
    return field_nocuda();
}

void mr_gpu_field_destroy(mr_gpu_field *p) { (void)p; }

mr_status mr_gpu_field_cmul(mr_gpu_ctx *c, int64_t n, int64_t batch, const float *v, int conj, int accumulate,
                            const float *in, float *out)
{
    (void)c, (void)n, (void)batch, (void)v, (void)conj, (void)accumulate, (void)in, (void)out;
    return field_nocuda();
}

mr_status mr_gpu_field_tp_create(mr_gpu_field_tp **out, mr_gpu_ctx *c, const int64_t matrix[3], int L, int nk,
                                 const int *kidx, const int *kconj, const float *const *q, const float *coef)
{
    (void)c, (void)matrix, (void)L, (void)nk, (void)kidx, (void)kconj, (void)q, (void)coef;
    if (out)
        *out = NULL;
    return field_nocuda();
}

mr_status mr_gpu_field_tp_apply(mr_gpu_field_tp *t, int64_t ncoils, const float *d_x, float *d_y)
{
    (void)t, (void)ncoils, (void)d_x, (void)d_y;
    return field_nocuda();
}

void mr_gpu_field_tp_destroy(mr_gpu_field_tp *t) { (void)t; }
