/* The exact field-corrected operator of solver/linop_field.h, on the host or one GPU:
 *
 *   forward y_c = s . field_forward(x_c), adjoint x_c = field_adjoint(s . y_c),  s = sqrt(w) Phi / N,
 *
 * with the sums of solver/nudft.h mr_nudft_field_* or gpu/field.h; no normal of its own (adjoint after
 * forward). Also the names and defaults shared with the segmented model (solver/linop_field_seg.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/grid.h"
#include "../gpu/field.h"
#include "../gpu/gpu_ops.h"
#include "linop_field.h"
#include "linop_field_internal.h"
#include "nudft.h"

static const char *const model_names[] = {"exact", "frequency", "time"};

const char *mr_field_model_name(mr_field_model m)
{
    return (unsigned)m <= MR_FIELD_MODEL_TIME ? model_names[m] : "unknown";
}

mr_status mr_field_model_parse(const char *text, mr_field_model *m)
{
    for (int i = 0; text && i <= MR_FIELD_MODEL_TIME; i++)
        if (!strcmp(text, model_names[i])) {
            *m = (mr_field_model)i;
            return MR_OK;
        }
    return mr_error(MR_EINVAL, "'%s' is not exact, frequency or time", text ? text : "(null)");
}

void mr_field_opts_default(mr_field_opts *o)
{
    memset(o, 0, sizeof *o);
    o->model = MR_FIELD_MODEL_FREQUENCY;
    o->tol = 1e-3;
    o->fast_normal = 1;
    o->basis = MR_BASIS_BOX;
    mr_nudft_opts_default(&o->nudft);
}

/* s_m = sqrt(w_m) Phi(k_m) / N (the scaling of mr_linop_nudft_create) into s [M]; qw (may be NULL) = s^2. */
void field_sample_scale(const int64_t matrix[3], const float *traj, int64_t m, const float *weights, mr_basis basis,
                         float *s, float *qw)
{
    const double inv_n = 1.0 / (double)(matrix[0] * matrix[1] * matrix[2]);
    for (int64_t k = 0; k < m; k++) {
        double phi = 1.0;
        for (int a = 0; a < 3 && basis == MR_BASIS_BOX; a++)
            if (matrix[a] > 1 && traj[3 * k + a] != 0.0f) {
                const double x = M_PI * (double)traj[3 * k + a] / (double)matrix[a];
                phi *= sin(x) / x;
            }
        const double v = sqrt(weights ? (double)weights[k] : 1.0) * phi * inv_n;
        if (s)
            s[k] = (float)v;
        if (qw)
            qw[k] = (float)(v * v);
    }
}

mr_status field_check_input(const int64_t matrix[3], const float *traj, const float *time, const float *fieldmap,
                             int64_t m, const float *weights, int64_t ncoils)
{
    mr_status st = mr_matrix_check(matrix, "field operator");
    if (st != MR_OK)
        return st;
    if (!traj || m < 1 || m > MR_MAX_SAMPLES || ncoils < 1 || ncoils > MR_MAX_COILS)
        return mr_error(MR_EINVAL, "field operator: %lld samples x %lld coils (need a trajectory, 1..%lld samples, "
                                   "1..%d coils)",
                        (long long)m, (long long)ncoils, (long long)MR_MAX_SAMPLES, MR_MAX_COILS);
    if (!time || !fieldmap)
        return mr_error(MR_EINVAL, "field operator: no %s (off-resonance correction needs the readout time of every "
                                   "sample and a field map)",
                        !time ? "readout times" : "field map");
    for (int64_t k = 0; k < m; k++) {
        if (!isfinite(traj[3 * k]) || !isfinite(traj[3 * k + 1]) || !isfinite(traj[3 * k + 2]) || !isfinite(time[k]))
            return mr_error(MR_EINVAL, "field operator: sample %lld has a non-finite position or time", (long long)k);
        if (weights && !(isfinite(weights[k]) && weights[k] >= 0))
            return mr_error(MR_EINVAL, "field operator: weight %lld = %g is not finite and >= 0", (long long)k,
                            (double)weights[k]);
    }
    const int64_t n = matrix[0] * matrix[1] * matrix[2];
    for (int64_t v = 0; v < n; v++)
        if (!isfinite(fieldmap[v]))
            return mr_error(MR_EINVAL, "field operator: field map value %lld is not finite", (long long)v);
    return MR_OK;
}

/* ---- the exact model ----------------------------------------------------------------------------- */

typedef struct {
    mr_backend *be;
    struct mr_gpu_ctx *gctx;
    mr_gpu_field *gpu;
    int64_t matrix[3], n, m, c;
    int threads;
    float *traj, *time, *field; /* host copies (host backend) */
    float *s;                   /* [M] real, backend memory (a complex vector of ceil(M/2)) */
    float *a;                   /* [M][2] work, backend memory */
} exact_data;

static void exact_destroy(void *p)
{
    exact_data *d = p;
    if (!d)
        return;
    const mr_vecops *v = mr_backend_vecops(d->be);
    mr_gpu_field_destroy(d->gpu);
    v->release(v->ctx, d->s);
    v->release(v->ctx, d->a);
    free(d->traj);
    free(d->time);
    free(d->field);
    mr_backend_free(d->be);
    free(d);
}

/* y[b][k] = s[k] x[b][k] on the backend (real s) */
static mr_status scale_samples(const exact_data *d, int64_t batch, const float *x, float *y)
{
    if (d->gctx)
        return mr_gpu_scale_rows(d->gctx, d->m, batch, d->s, x, y);
    for (int64_t b = 0; b < batch; b++)
        for (int64_t k = 0; k < d->m; k++) {
            y[2 * (b * d->m + k)] = d->s[k] * x[2 * (b * d->m + k)];
            y[2 * (b * d->m + k) + 1] = d->s[k] * x[2 * (b * d->m + k) + 1];
        }
    return MR_OK;
}

static mr_status exact_forward(void *p, const float *x, float *y)
{
    const exact_data *d = p;
    const mr_grid g = mr_grid_image(d->matrix);
    for (int64_t c = 0; c < d->c; c++) {
        mr_status st = d->gpu ? mr_gpu_field_forward(d->gpu, x + 2 * c * d->n, y + 2 * c * d->m)
                              : mr_nudft_field_forward(&g, d->traj, d->time, d->field, x + 2 * c * d->n, d->m,
                                                       y + 2 * c * d->m, d->threads);
        if (st != MR_OK)
            return st;
    }
    return scale_samples(d, d->c, y, y);
}

static mr_status exact_adjoint(void *p, const float *y, float *x)
{
    const exact_data *d = p;
    const mr_grid g = mr_grid_image(d->matrix);
    for (int64_t c = 0; c < d->c; c++) {
        mr_status st = scale_samples(d, 1, y + 2 * c * d->m, d->a);
        if (st == MR_OK)
            st = d->gpu ? mr_gpu_field_adjoint(d->gpu, d->a, x + 2 * c * d->n)
                        : mr_nudft_field_adjoint(&g, d->traj, d->time, d->field, d->a, d->m, x + 2 * c * d->n,
                                                 d->threads);
        if (st != MR_OK)
            return st;
    }
    return MR_OK;
}

mr_status mr_linop_field_exact_create(mr_linop **out, mr_backend *be, const int64_t matrix[3], const float *traj,
                                      const float *time, const float *fieldmap, int64_t m, const float *weights,
                                      int64_t ncoils, mr_basis basis)
{
    *out = NULL;
    if (!be)
        return mr_error(MR_EINVAL, "field operator: no backend");
    mr_status st = field_check_input(matrix, traj, time, fieldmap, m, weights, ncoils);
    if (st != MR_OK)
        return st;
    exact_data *d = calloc(1, sizeof *d);
    float *s = malloc((size_t)m * sizeof(float));
    if (!d || !s) {
        free(d);
        free(s);
        return mr_error(MR_ENOMEM, "field operator: out of memory for %lld samples", (long long)m);
    }
    *d = (exact_data){.be = mr_backend_ref(be),
                      .gctx = mr_backend_gpu_ctx(be),
                      .matrix = {matrix[0], matrix[1], matrix[2]},
                      .n = matrix[0] * matrix[1] * matrix[2],
                      .m = m,
                      .c = ncoils,
                      .threads = mr_backend_threads(be)};
    field_sample_scale(matrix, traj, m, weights, basis, s, NULL);
    if (d->gctx) {
        st = mr_gpu_field_create(&d->gpu, d->gctx, matrix, traj, time, fieldmap, m);
        if (st == MR_OK && (!(d->s = mr_backend_upload(be, m, s)) || !(d->a = mr_backend_alloc(be, m))))
            st = MR_ENOMEM;
    } else {
        d->s = s;
        s = NULL;
        d->traj = malloc((size_t)m * 3 * sizeof(float));
        d->time = malloc((size_t)m * sizeof(float));
        d->field = malloc((size_t)d->n * sizeof(float));
        d->a = malloc((size_t)m * 2 * sizeof(float));
        if (!d->traj || !d->time || !d->field || !d->a) {
            st = mr_error(MR_ENOMEM, "field operator: out of memory for %lld samples", (long long)m);
        } else {
            memcpy(d->traj, traj, (size_t)m * 3 * sizeof(float));
            memcpy(d->time, time, (size_t)m * sizeof(float));
            memcpy(d->field, fieldmap, (size_t)d->n * sizeof(float));
        }
    }
    free(s);
    if (st != MR_OK) {
        exact_destroy(d);
        return st;
    }
    const int64_t dom[4] = {matrix[0], matrix[1], matrix[2], ncoils}, cod[4] = {m, 1, 1, ncoils};
    const mr_linop_ops ops = {exact_forward, exact_adjoint, NULL, exact_destroy};
    return mr_linop_create(out, be, dom, cod, &ops, d);
}

