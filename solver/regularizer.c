#include "regularizer.h"

#include <omp.h>
#include <string.h>

#define MR_REG_PARALLEL_MIN 16384

mr_status mr_reg_parse(const char *text, mr_reg_kind *kind)
{
    if (text && strcmp(text, "identity") == 0)
        *kind = MR_REG_IDENTITY;
    else if (text && strcmp(text, "gradient") == 0)
        *kind = MR_REG_GRADIENT;
    else
        return mr_error(MR_EINVAL, "regulariser '%s' is not one of identity, gradient", text ? text : "(null)");
    return MR_OK;
}

const char *mr_reg_name(mr_reg_kind kind) { return kind == MR_REG_GRADIENT ? "gradient" : "identity"; }

static int reg_threads(const mr_regularizer *r, int64_t n)
{
    if (n < MR_REG_PARALLEL_MIN)
        return 1;
    return r->threads > 0 ? r->threads : omp_get_max_threads();
}

mr_status mr_reg_apply(void *regp, const float *in, float *out)
{
    const mr_regularizer *r = regp;
    const int64_t nx = r->matrix[0], ny = r->matrix[1], nz = r->matrix[2];
    const int64_t n = nx * ny * nz;
    if (r->kind == MR_REG_IDENTITY) {
        memcpy(out, in, (size_t)n * 2 * sizeof(float));
        return MR_OK;
    }
    if (r->kind != MR_REG_GRADIENT)
        return mr_error(MR_EINVAL, "regulariser kind %d is unknown", (int)r->kind);
    const int64_t stride[3] = {1, nx, nx * ny};
#pragma omp parallel for schedule(static) num_threads(reg_threads(r, n))
    for (int64_t v = 0; v < n; v++) {
        const int64_t idx[3] = {v % nx, (v / nx) % ny, v / (nx * ny)};
        double acc_re = 0, acc_im = 0;
        const double xr = in[2 * v], xi = in[2 * v + 1];
        for (int a = 0; a < 3; a++) {
            if (r->matrix[a] <= 1)
                continue;
            if (idx[a] > 0) {
                acc_re += xr - in[2 * (v - stride[a])];
                acc_im += xi - in[2 * (v - stride[a]) + 1];
            }
            if (idx[a] < r->matrix[a] - 1) {
                acc_re += xr - in[2 * (v + stride[a])];
                acc_im += xi - in[2 * (v + stride[a]) + 1];
            }
        }
        out[2 * v] = (float)acc_re;
        out[2 * v + 1] = (float)acc_im;
    }
    return MR_OK;
}

double mr_reg_value(const mr_regularizer *r, const float *x)
{
    const int64_t nx = r->matrix[0], ny = r->matrix[1], nz = r->matrix[2];
    const int64_t n = nx * ny * nz;
    double s = 0;
    if (r->kind == MR_REG_IDENTITY) {
        for (int64_t i = 0; i < 2 * n; i++)
            s += (double)x[i] * x[i];
        return s;
    }
    const int64_t stride[3] = {1, nx, nx * ny};
    for (int64_t v = 0; v < n; v++) {
        const int64_t idx[3] = {v % nx, (v / nx) % ny, v / (nx * ny)};
        for (int a = 0; a < 3; a++)
            if (r->matrix[a] > 1 && idx[a] < r->matrix[a] - 1) {
                double dr = (double)x[2 * (v + stride[a])] - x[2 * v];
                double di = (double)x[2 * (v + stride[a]) + 1] - x[2 * v + 1];
                s += dr * dr + di * di;
            }
    }
    return s;
}
