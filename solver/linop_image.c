/* Voxel-wise operators of linop.h: sensitivity maps and finite differences, on the host (OpenMP) or
 * on the device (gpu/gpu_ops.h). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "../base/grid.h"
#include "../gpu/gpu_ops.h"
#include "linop.h"
#include "regularizer.h"

/* Below this many complex multiply-adds (voxels x coils or axes) a loop runs on one thread: it takes
 * well under a millisecond there, and a parallel region costs more than it saves when the cores are
 * shared (the same reasoning as solver/toeplitz.c's TP_SERIAL_POINTS; a 2D 128^2 SENSE iteration with 8
 * coils went from ~20 ms to ~4 ms per iteration on the loaded 2-core machine). */
#define IMG_PARALLEL_MIN (1 << 20)
#define SENS_BLOCK 4096 /* voxels per partial sum of the maps' model (fixed: the bits do not depend on the threads) */

static int img_threads(const mr_backend *be, int64_t work)
{
    return work < IMG_PARALLEL_MIN ? 1 : mr_backend_threads(be);
}

/* ---- sensitivity maps -------------------------------------------------------------------------- */

typedef struct {
    mr_backend *be; /* borrowed from the operator */
    struct mr_gpu_ctx *gpu;
    int64_t n, c;
    float *maps; /* [C][n][2] in the backend's memory */
    float *sum2; /* host only: [n] sum_c |S_c|^2 */
} sens_data;

static void sens_destroy(void *p)
{
    sens_data *d = p;
    if (!d)
        return;
    const mr_vecops *v = mr_backend_vecops(d->be);
    v->release(v->ctx, d->maps);
    free(d->sum2);
    mr_backend_free(d->be);
    free(d);
}

static mr_status sens_forward(void *p, const float *x, float *y)
{
    const sens_data *d = p;
    if (d->gpu)
        return mr_gpu_sens_forward(d->gpu, d->n, d->c, d->maps, x, y);
    const int64_t n = d->n, nc = d->c;
#pragma omp parallel for num_threads(img_threads(d->be, n * nc)) schedule(static)
    for (int64_t v = 0; v < n; v++) {
        const float xr = x[2 * v], xi = x[2 * v + 1];
        for (int64_t c = 0; c < nc; c++) {
            const float *s = d->maps + 2 * (c * n + v);
            y[2 * (c * n + v)] = s[0] * xr - s[1] * xi;
            y[2 * (c * n + v) + 1] = s[0] * xi + s[1] * xr;
        }
    }
    return MR_OK;
}

static mr_status sens_adjoint(void *p, const float *y, float *x)
{
    const sens_data *d = p;
    if (d->gpu)
        return mr_gpu_sens_adjoint(d->gpu, d->n, d->c, d->maps, y, x);
    const int64_t n = d->n, nc = d->c;
#pragma omp parallel for num_threads(img_threads(d->be, n * nc)) schedule(static)
    for (int64_t v = 0; v < n; v++) {
        float re = 0, im = 0;
        for (int64_t c = 0; c < nc; c++) { /* conj(S) y */
            const float *s = d->maps + 2 * (c * n + v), *yc = y + 2 * (c * n + v);
            re += s[0] * yc[0] + s[1] * yc[1];
            im += s[0] * yc[1] - s[1] * yc[0];
        }
        x[2 * v] = re;
        x[2 * v + 1] = im;
    }
    return MR_OK;
}

static mr_status sens_normal(void *p, const float *x, float *y)
{
    const sens_data *d = p;
    if (d->gpu)
        return mr_gpu_sens_normal(d->gpu, d->n, d->c, d->maps, x, y);
    const int64_t n = d->n;
#pragma omp parallel for num_threads(img_threads(d->be, n)) schedule(static)
    for (int64_t v = 0; v < n; v++) {
        y[2 * v] = d->sum2[v] * x[2 * v];
        y[2 * v + 1] = d->sum2[v] * x[2 * v + 1];
    }
    return MR_OK;
}

mr_status mr_linop_sens_create(mr_linop **out, mr_backend *be, const int64_t matrix[3], int64_t ncoils,
                               const float *maps)
{
    *out = NULL;
    mr_status st = mr_matrix_check(matrix, "sensitivity operator");
    if (st != MR_OK)
        return st;
    if (!be || !maps || ncoils < 1 || ncoils > MR_MAX_COILS)
        return mr_error(MR_EINVAL, "sensitivity operator: %lld coils (need 1..%d), maps and a backend",
                        (long long)ncoils, MR_MAX_COILS);
    sens_data *d = calloc(1, sizeof *d);
    if (!d)
        return mr_error(MR_ENOMEM, "sensitivity operator: out of memory");
    d->be = mr_backend_ref(be);
    d->gpu = mr_backend_gpu_ctx(be);
    d->n = matrix[0] * matrix[1] * matrix[2];
    d->c = ncoils;
    /* the maps go to the backend while their sum below is made (on a GPU: tens of ms each for 32 coils) */
    mr_upload_job *up = NULL;
    st = mr_backend_upload_start(be, 2 * d->n * ncoils, maps, &d->maps, &up);
    if (st == MR_OK && !d->gpu && !(d->sum2 = malloc((size_t)d->n * sizeof(float))))
        st = mr_error(MR_ENOMEM, "sensitivity operator: out of memory for %lld voxels", (long long)d->n);
    if (st != MR_OK) {
        (void)mr_backend_upload_wait(up);
        sens_destroy(d);
        return st;
    }
    /* sum_c |S_c|^2 per voxel (in double): the host normal's factors (rounded to float), and the model of the
     * normal (linop.h): its mean, where the sum is nowhere far below it. Blocks of SENS_BLOCK voxels in parallel,
     * their sums added in block order: the bits do not depend on the thread count (256^3 x 8 coils: 1 GB of
     * maps, 0.17 s on one core of the AMD EPYC development machine). */
    const int64_t nb = (d->n + SENS_BLOCK - 1) / SENS_BLOCK;
    double *bsum = malloc((size_t)nb * 2 * sizeof(double));
    if (!bsum) {
        const long long nv = (long long)d->n;
        (void)mr_backend_upload_wait(up);
        sens_destroy(d);
        return mr_error(MR_ENOMEM, "sensitivity operator: out of memory for %lld voxels", nv);
    }
#pragma omp parallel for num_threads(img_threads(be, d->n * ncoils)) schedule(static)
    for (int64_t b = 0; b < nb; b++) {
        const int64_t v1 = (b + 1) * SENS_BLOCK < d->n ? (b + 1) * SENS_BLOCK : d->n;
        double sum = 0, lo = INFINITY;
        for (int64_t v = b * SENS_BLOCK; v < v1; v++) {
            double s2 = 0;
            for (int64_t c = 0; c < ncoils; c++) {
                const float *sv = maps + 2 * (c * d->n + v);
                s2 += (double)sv[0] * sv[0] + (double)sv[1] * sv[1];
            }
            if (d->sum2)
                d->sum2[v] = (float)s2;
            sum += s2;
            lo = s2 < lo ? s2 : lo;
        }
        bsum[2 * b] = sum;
        bsum[2 * b + 1] = lo;
    }
    double mean2 = 0, min2 = INFINITY;
    for (int64_t b = 0; b < nb; b++) {
        mean2 += bsum[2 * b];
        min2 = bsum[2 * b + 1] < min2 ? bsum[2 * b + 1] : min2;
    }
    free(bsum);
    mean2 /= (double)d->n;
    if ((st = mr_backend_upload_wait(up)) != MR_OK) {
        sens_destroy(d);
        return st;
    }
    const int64_t dom[4] = {matrix[0], matrix[1], matrix[2], 1}, cod[4] = {matrix[0], matrix[1], matrix[2], ncoils};
    const mr_linop_ops ops = {sens_forward, sens_adjoint, sens_normal, sens_destroy};
    st = mr_linop_create(out, be, dom, cod, &ops, d);
    if (st == MR_OK && min2 >= MR_SENS_MODEL_MIN * mean2)
        mr_linop_set_symbol(*out, &(mr_linop_symbol){1, NULL, 0, 0, mean2});
    return st;
}

/* ---- finite differences ------------------------------------------------------------------------ */

typedef struct {
    mr_backend *be;
    struct mr_gpu_ctx *gpu;
    int64_t matrix[3];
    mr_regularizer reg; /* host normal */
} fd_data;

static void fd_destroy(void *p)
{
    fd_data *d = p;
    if (d)
        mr_backend_free(d->be);
    free(d);
}

/* The active axes (N_a > 1) and their strides; returns their count. */
static int fd_axes(const int64_t m[3], int axes[3], int64_t stride[3])
{
    const int64_t s[3] = {1, m[0], m[0] * m[1]};
    int d = 0;
    for (int a = 0; a < 3; a++)
        if (m[a] > 1) {
            axes[d] = a;
            stride[d++] = s[a];
        }
    return d;
}

static mr_status fd_forward(void *p, const float *x, float *g)
{
    const fd_data *d = p;
    if (d->gpu)
        return mr_gpu_fd_forward(d->gpu, d->matrix, x, g);
    const int64_t *m = d->matrix, n = m[0] * m[1] * m[2];
    int axes[3];
    int64_t stride[3];
    const int na = fd_axes(m, axes, stride);
    if (na == 0) {
        memset(g, 0, (size_t)n * 2 * sizeof(float));
        return MR_OK;
    }
#pragma omp parallel for num_threads(img_threads(d->be, n * na)) schedule(static)
    for (int64_t v = 0; v < n; v++) {
        const int64_t idx[3] = {v % m[0], (v / m[0]) % m[1], v / (m[0] * m[1])};
        for (int k = 0; k < na; k++) {
            float *o = g + 2 * (k * n + v);
            if (idx[axes[k]] < m[axes[k]] - 1) {
                o[0] = x[2 * (v + stride[k])] - x[2 * v];
                o[1] = x[2 * (v + stride[k]) + 1] - x[2 * v + 1];
            } else {
                o[0] = o[1] = 0.0f;
            }
        }
    }
    return MR_OK;
}

static mr_status fd_adjoint(void *p, const float *g, float *x)
{
    const fd_data *d = p;
    if (d->gpu)
        return mr_gpu_fd_adjoint(d->gpu, d->matrix, g, x);
    const int64_t *m = d->matrix, n = m[0] * m[1] * m[2];
    int axes[3];
    int64_t stride[3];
    const int na = fd_axes(m, axes, stride);
#pragma omp parallel for num_threads(img_threads(d->be, n * na)) schedule(static)
    for (int64_t v = 0; v < n; v++) {
        const int64_t idx[3] = {v % m[0], (v / m[0]) % m[1], v / (m[0] * m[1])};
        float re = 0, im = 0;
        for (int k = 0; k < na; k++) {
            const float *gk = g + 2 * k * n;
            if (idx[axes[k]] > 0) {
                re += gk[2 * (v - stride[k])];
                im += gk[2 * (v - stride[k]) + 1];
            }
            if (idx[axes[k]] < m[axes[k]] - 1) {
                re -= gk[2 * v];
                im -= gk[2 * v + 1];
            }
        }
        x[2 * v] = re;
        x[2 * v + 1] = im;
    }
    return MR_OK;
}

static mr_status fd_normal(void *p, const float *x, float *y)
{
    fd_data *d = p;
    if (d->gpu)
        return mr_gpu_fd_normal(d->gpu, d->matrix, x, y);
    return mr_reg_apply(&d->reg, x, y);
}

mr_status mr_linop_fd_create(mr_linop **out, mr_backend *be, const int64_t matrix[3])
{
    *out = NULL;
    mr_status st = mr_matrix_check(matrix, "finite-difference operator");
    if (st != MR_OK)
        return st;
    if (!be)
        return mr_error(MR_EINVAL, "finite-difference operator: no backend");
    fd_data *d = calloc(1, sizeof *d);
    if (!d)
        return mr_error(MR_ENOMEM, "finite-difference operator: out of memory");
    d->be = mr_backend_ref(be);
    d->gpu = mr_backend_gpu_ctx(be);
    memcpy(d->matrix, matrix, sizeof d->matrix);
    d->reg.kind = MR_REG_GRADIENT;
    memcpy(d->reg.matrix, matrix, sizeof d->reg.matrix);
    d->reg.threads = mr_backend_threads(be);
    int axes[3];
    int64_t stride[3];
    const int na = fd_axes(matrix, axes, stride);
    const int64_t dom[4] = {matrix[0], matrix[1], matrix[2], 1};
    const int64_t cod[4] = {matrix[0], matrix[1], matrix[2], na > 0 ? na : 1};
    const mr_linop_ops ops = {fd_forward, fd_adjoint, fd_normal, fd_destroy};
    st = mr_linop_create(out, be, dom, cod, &ops, d);
    if (st == MR_OK) /* R^H R: the negative Laplacian (Neumann; the model's G is periodic) */
        mr_linop_set_symbol(*out, &(mr_linop_symbol){1, NULL, 0, 1, 0});
    return st;
}
