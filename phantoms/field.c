/* Off-resonance for simulated scans (field.h, docs/PHANTOMS.md). */
#include "field.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/grid.h"
#include "../base/log.h"
#include "../solver/nudft.h"

#define PI 3.14159265358979323846

void mr_field_params_default(mr_field_params *p)
{
    memset(p, 0, sizeof *p);
    p->blob_at[1] = 0.2;
    p->blob_sigma = 0.1;
}

/* A finite number that is all of text; 0 when not. */
static int parse_number(const char *text, double *v)
{
    char *end = NULL;
    *v = strtod(text, &end);
    return end != text && *end == '\0' && isfinite(*v);
}

static mr_status parse_at(const char *text, double at[3])
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", text);
    double v[3] = {0, 0, 0};
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
        if (n == 3 || !parse_number(tok, &v[n]) || fabs(v[n]) > 1.0)
            return mr_error(MR_EINVAL, "field map: at=%s is not X:Y[:Z] with each |value| <= 1 (FOV units)", text);
        n++;
    }
    if (n < 2)
        return mr_error(MR_EINVAL, "field map: at=%s is not X:Y[:Z] (FOV units)", text);
    memcpy(at, v, sizeof v);
    return MR_OK;
}

mr_status mr_field_parse(const char *spec, mr_field_params *p)
{
    mr_field_params_default(p);
    if (!spec || !spec[0])
        return mr_error(MR_EINVAL, "field map: empty description (KEY=VALUE,...: c, x, y, z, blob, sigma, at, "
                                   "oversample)");
    char buf[512];
    if (strlen(spec) >= sizeof buf)
        return mr_error(MR_EINVAL, "field map: description longer than %zu characters", sizeof buf - 1);
    snprintf(buf, sizeof buf, "%s", spec);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq)
            return mr_error(MR_EINVAL, "field map: '%s' is not KEY=VALUE (keys: c, x, y, z, blob, sigma, at, "
                                       "oversample)",
                            tok);
        *eq = '\0';
        const char *key = tok, *val = eq + 1;
        if (!strcmp(key, "at")) {
            mr_status st = parse_at(val, p->blob_at);
            if (st != MR_OK)
                return st;
            continue;
        }
        double v;
        if (!parse_number(val, &v))
            return mr_error(MR_EINVAL, "field map: %s=%s is not a finite number", key, val);
        if (!strcmp(key, "c"))
            p->offset_hz = v;
        else if (!strcmp(key, "x") || !strcmp(key, "y") || !strcmp(key, "z"))
            p->grad_hz[key[0] - 'x'] = v;
        else if (!strcmp(key, "blob"))
            p->blob_hz = v;
        else if (!strcmp(key, "sigma")) {
            if (!(v > 0 && v <= 10))
                return mr_error(MR_EINVAL, "field map: sigma=%s must lie in (0, 10] (FOV units)", val);
            p->blob_sigma = v;
        } else if (!strcmp(key, "oversample")) {
            if (v != floor(v) || v < 1 || v > 16)
                return mr_error(MR_EINVAL, "field map: oversample=%s must be an integer 1..16", val);
            p->oversample = (int)v;
        } else {
            return mr_error(MR_EINVAL, "field map: unknown key '%s' (c, x, y, z, blob, sigma, at, oversample)", key);
        }
        if (fabs(v) > 1e6)
            return mr_error(MR_EINVAL, "field map: %s=%s exceeds 1e6 Hz", key, val);
    }
    return MR_OK;
}

int mr_field_present(const mr_field_params *p)
{
    return p->offset_hz != 0 || p->grad_hz[0] != 0 || p->grad_hz[1] != 0 || p->grad_hz[2] != 0 || p->blob_hz != 0;
}

int mr_field_nonlinear(const mr_field_params *p) { return p->blob_hz != 0; }

/* The bump alone. */
static double bump(const mr_field_params *p, int is3d, const double r[3])
{
    if (p->blob_hz == 0)
        return 0.0;
    double d2 = 0;
    for (int a = 0; a < (is3d ? 3 : 2); a++)
        d2 += (r[a] - p->blob_at[a]) * (r[a] - p->blob_at[a]);
    return p->blob_hz * exp(-d2 / (2.0 * p->blob_sigma * p->blob_sigma));
}

double mr_field_value(const mr_field_params *p, int is3d, const double r[3])
{
    double f = p->offset_hz + p->grad_hz[0] * r[0] + p->grad_hz[1] * r[1];
    if (is3d)
        f += p->grad_hz[2] * r[2];
    return f + bump(p, is3d, r);
}

/* The voxel centre of linear index v of the matrix, FOV units. */
static void voxel_centre(const int64_t matrix[3], int64_t v, double r[3])
{
    const int64_t idx[3] = {v % matrix[0], (v / matrix[0]) % matrix[1], v / (matrix[0] * matrix[1])};
    for (int a = 0; a < 3; a++)
        r[a] = (double)(idx[a] - matrix[a] / 2) / (double)matrix[a];
}

mr_status mr_field_map(const mr_field_params *p, const int64_t matrix[3], float *hz)
{
    mr_status st = mr_matrix_check(matrix, "field map");
    if (st != MR_OK)
        return st;
    const int64_t n = matrix[0] * matrix[1] * matrix[2];
#pragma omp parallel for schedule(static)
    for (int64_t v = 0; v < n; v++) {
        double r[3];
        voxel_centre(matrix, v, r);
        hz[v] = (float)mr_field_value(p, matrix[2] > 1, r);
    }
    return MR_OK;
}

mr_status mr_field_times(const float *traj, int64_t m, int64_t readout, double te_s, double dwell_s, float *t,
                         int64_t *echo)
{
    if (!isfinite(te_s) || !isfinite(dwell_s) || !(dwell_s > 0))
        return mr_error(MR_EINVAL, "readout timing: echo time %g s and dwell %g s must be finite, the dwell > 0", te_s,
                        dwell_s);
    if (readout < 1 || m < 1 || m % readout != 0)
        return mr_error(MR_EINVAL, "readout timing: %lld samples are not whole readouts of %lld", (long long)m,
                        (long long)readout);
    int64_t e = 0;
    double best = INFINITY;
    for (int64_t j = 0; j < readout; j++) {
        const float *k = traj + 3 * j;
        const double r2 = (double)k[0] * k[0] + (double)k[1] * k[1] + (double)k[2] * k[2];
        if (r2 < best) {
            best = r2;
            e = j;
        }
    }
    for (int64_t i = 0; i < m; i++)
        t[i] = (float)(te_s + (double)(i % readout - e) * dwell_s);
    if (echo)
        *echo = e;
    return MR_OK;
}

/* Box basis of the fine grid at k (cycles/FOV). */
static double box_phi(const int64_t nf[3], const float *k)
{
    double phi = 1.0;
    for (int a = 0; a < 3; a++)
        if (nf[a] > 1 && k[a] != 0.0f) {
            const double x = PI * (double)k[a] / (double)nf[a];
            phi *= sin(x) / x;
        }
    return phi;
}

/* The bump's correction (field.h) added to data [C][M][2], before the constant's phase. k2 = k + g t. */
static mr_status add_bump(const mr_field_params *p, mr_phantom_kind kind, const mr_coils *coils,
                          const int64_t matrix[3], const float *k2, const float *t, int64_t m, float *data,
                          int threads)
{
    const int is3d = matrix[2] > 1;
    const int over = p->oversample > 0 ? p->oversample : (is3d ? 2 : 4);
    int64_t nf[3];
    for (int a = 0; a < 3; a++)
        nf[a] = matrix[a] > 1 ? over * matrix[a] : 1;
    mr_status st = mr_matrix_check(nf, "field map: the bump's fine grid (oversample x matrix)");
    if (st != MR_OK)
        return st;
    const int64_t n = nf[0] * nf[1] * nf[2], nc = coils ? mr_coils_count(coils) : 1;
    float *truth = malloc((size_t)n * sizeof(float)), *f = malloc((size_t)n * sizeof(float));
    float *x = malloc((size_t)n * 2 * sizeof(float));
    float *s1 = malloc((size_t)m * 2 * sizeof(float)), *s0 = malloc((size_t)m * 2 * sizeof(float));
    if (!truth || !f || !x || !s1 || !s0) {
        st = mr_error(MR_ENOMEM, "field map: out of memory for the %lldx%lldx%lld fine grid", (long long)nf[0],
                      (long long)nf[1], (long long)nf[2]);
        goto done;
    }
    const double t0 = mr_now();
    if ((st = mr_phantom_truth(kind, nf, truth)) != MR_OK)
        goto done;
#pragma omp parallel for schedule(static)
    for (int64_t v = 0; v < n; v++) {
        double r[3];
        voxel_centre(nf, v, r);
        f[v] = (float)bump(p, is3d, r);
    }
    const mr_grid g = mr_grid_image(nf);
    for (int64_t c = 0; c < nc && st == MR_OK; c++) {
#pragma omp parallel for schedule(static)
        for (int64_t v = 0; v < n; v++) {
            double s[2] = {1.0, 0.0}, r[3];
            if (coils && truth[v] != 0.0f) {
                voxel_centre(nf, v, r);
                mr_coils_value(coils, c, r, s);
            }
            x[2 * v] = (float)(truth[v] * s[0]);
            x[2 * v + 1] = (float)(truth[v] * s[1]);
        }
        if ((st = mr_nudft_field_forward(&g, k2, t, f, x, m, s1, threads)) != MR_OK ||
            (st = mr_nudft_forward(&g, k2, x, m, s0, threads)) != MR_OK)
            break;
        float *d = data + 2 * c * m;
        for (int64_t k = 0; k < m; k++) {
            const double w = box_phi(nf, k2 + 3 * k) / (double)n;
            d[2 * k] += (float)(w * ((double)s1[2 * k] - s0[2 * k]));
            d[2 * k + 1] += (float)(w * ((double)s1[2 * k + 1] - s0[2 * k + 1]));
        }
    }
    mr_log(MR_LOG_DEBUG, "phantom: non-linear field by exact sums on the %lldx%lldx%lld grid in %.2f s", (long long)nf[0],
           (long long)nf[1], (long long)nf[2], mr_now() - t0);
done:
    free(truth);
    free(f);
    free(x);
    free(s1);
    free(s0);
    return st;
}

mr_status mr_field_kspace(const mr_field_params *p, mr_phantom_kind kind, const mr_coils *coils,
                          const int64_t matrix[3], const float *traj, const float *t, int64_t m, float *data,
                          int threads)
{
    if (!traj || !t || !data || m < 1)
        return mr_error(MR_EINVAL, "field map: no trajectory, times or data");
    float *k2 = malloc((size_t)m * 3 * sizeof(float));
    if (!k2)
        return mr_error(MR_ENOMEM, "field map: out of memory for %lld samples", (long long)m);
    /* the linear part: k + g t on the axes of the matrix */
    for (int64_t k = 0; k < m; k++)
        for (int a = 0; a < 3; a++)
            k2[3 * k + a] = (float)((double)traj[3 * k + a] + (matrix[a] > 1 ? p->grad_hz[a] * (double)t[k] : 0.0));
    mr_status st = coils ? mr_coils_kspace(coils, k2, m, data) : mr_phantom_kspace(kind, k2, m, data);
    if (st == MR_OK && mr_field_nonlinear(p))
        st = add_bump(p, kind, coils, matrix, k2, t, m, data, threads);
    free(k2);
    if (st != MR_OK)
        return st;
    const int64_t nc = coils ? mr_coils_count(coils) : 1;
    for (int64_t k = 0; k < m; k++) { /* the constant: e^{-i 2 pi c t} */
        double ph = p->offset_hz * (double)t[k];
        ph -= nearbyint(ph);
        const double cr = cos(2.0 * PI * ph), ci = -sin(2.0 * PI * ph);
        for (int64_t c = 0; c < nc; c++) {
            float *d = data + 2 * (c * m + k);
            const double re = d[0], im = d[1];
            d[0] = (float)(re * cr - im * ci);
            d[1] = (float)(re * ci + im * cr);
        }
    }
    return MR_OK;
}
