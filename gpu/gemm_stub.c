/* Built instead of gpu/gemm.cu when mrirecon is configured without CUDA: every GPU entry point returns
 * MR_ENODEV (the option helpers are in gpu/gemm_opts.c, built either way). */
#include "gemm.h"

static mr_status gemm_nocuda(void) { return mr_error(MR_ENODEV, "this mrirecon was built without CUDA"); }

mr_status mr_gemm_create(mr_gemm_plan **out, const float *traj, int64_t m, const mr_gemm_opts *o)
{
    (void)traj;
    (void)m;
    (void)o;
    if (out)
        *out = NULL;
    return gemm_nocuda();
}

void mr_gemm_destroy(mr_gemm_plan *p) { (void)p; }

mr_status mr_gemm_load(void) { return gemm_nocuda(); }

const char *mr_gemm_adjoint_kernel(const mr_gemm_plan *p, mr_gemm_precision prec)
{
    (void)p;
    (void)prec;
    return "none";
}

int mr_gemm_wgmma_available(int device)
{
    (void)device;
    return 0;
}

void mr_gemm_release(mr_gemm_plan *p) { (void)p; }

mr_status mr_gemm_set_stream(mr_gemm_plan *p, void *stream)
{
    (void)p;
    (void)stream;
    return gemm_nocuda();
}

mr_status mr_gemm_adjoint_planes_dev(mr_gemm_plan *p, const mr_grid *g, mr_gemm_precision prec, const float *d_a,
                                     int real_weights, const int64_t *planes, int64_t nplanes, void *d_out,
                                     mr_gemm_type out_type)
{
    (void)p;
    (void)g;
    (void)prec;
    (void)d_a;
    (void)real_weights;
    (void)planes;
    (void)nplanes;
    (void)d_out;
    (void)out_type;
    return gemm_nocuda();
}

mr_status mr_gemm_adjoint_slab_dev(mr_gemm_plan *p, const mr_grid *g, mr_gemm_precision prec, const float *d_a,
                                   int real_weights, int64_t z0, int64_t z1, void *d_out, mr_gemm_type out_type)
{
    (void)p;
    (void)g;
    (void)prec;
    (void)d_a;
    (void)real_weights;
    (void)z0;
    (void)z1;
    (void)d_out;
    (void)out_type;
    return gemm_nocuda();
}

mr_status mr_gemm_forward_dev(mr_gemm_plan *p, const mr_grid *g, mr_gemm_precision prec, const float *d_x, int64_t m0,
                              int64_t m1, void *d_out, mr_gemm_type out_type)
{
    (void)p;
    (void)g;
    (void)prec;
    (void)d_x;
    (void)m0;
    (void)m1;
    (void)d_out;
    (void)out_type;
    return gemm_nocuda();
}

mr_status mr_gemm_adjoint(mr_gemm_plan *p, const mr_grid *g, mr_gemm_precision prec, const float *a, int real_weights,
                          void *out, mr_gemm_type out_type)
{
    (void)p;
    (void)g;
    (void)prec;
    (void)a;
    (void)real_weights;
    (void)out;
    (void)out_type;
    return gemm_nocuda();
}

mr_status mr_gemm_forward(mr_gemm_plan *p, const mr_grid *g, mr_gemm_precision prec, const float *x, void *out,
                          mr_gemm_type out_type)
{
    (void)p;
    (void)g;
    (void)prec;
    (void)x;
    (void)out;
    (void)out_type;
    return gemm_nocuda();
}

double mr_gemm_last_ms(const mr_gemm_plan *p)
{
    (void)p;
    return 0.0;
}

mr_status mr_gemm_plane_split(const mr_grid *g, int real_weights, int parts, int part, int64_t *planes,
                              int64_t *nplanes)
{
    (void)g;
    (void)real_weights;
    (void)parts;
    (void)part;
    (void)planes;
    if (nplanes)
        *nplanes = 0;
    return gemm_nocuda();
}
