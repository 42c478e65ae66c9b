/* Simulated coils (coils.h). The design (docs/PHANTOMS.md):
 *   2D: frequencies f_j = j / 4 cycles/FOV, j in Z^2, |f_j| <= 3/4 (29 terms);
 *   3D: f_j = j / 3, j in Z^3, |f_j| <= 2/3 (33 terms);
 *   sigma = 0.3 FOV; coil c at angle theta_c = 2 pi c / C on a circle of radius 0.6 FOV around the
 *   centre (3D: in the plane z = 0, or alternately at z = -0.2 and +0.2 when C >= 4);
 *   psi_c = 2 pi c / C; A makes the mean of sum_c |S_c|^2 over the head equal 1 (coils.h). */
#include "coils.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/grid.h"

#define PI 3.14159265358979323846
#define COIL_SIGMA 0.3
#define COIL_RADIUS 0.6
#define COIL_Z 0.2

struct mr_coils {
    mr_phantom_kind kind;
    int64_t nc;
    int nf;
    double f[64][3]; /* the frequencies f_j */
    double *a;       /* [C][nf][2] coefficients a_cj */
};

static void coil_position(const mr_coils *c, int64_t coil, double p[3])
{
    const double th = 2.0 * PI * (double)coil / (double)c->nc;
    p[0] = COIL_RADIUS * cos(th);
    p[1] = COIL_RADIUS * sin(th);
    p[2] = (mr_phantom_is_3d(c->kind) && c->nc >= 4) ? (coil % 2 ? COIL_Z : -COIL_Z) : 0.0;
}

/* sum_j a_j e^{i 2 pi f_j . r} for one coil, unnormalised when a is the raw table. */
static void eval_sum(const mr_coils *c, const double *a, const double r[3], double out[2])
{
    double re = 0, im = 0;
    for (int j = 0; j < c->nf; j++) {
        const double ph = 2.0 * PI * (c->f[j][0] * r[0] + c->f[j][1] * r[1] + c->f[j][2] * r[2]);
        const double cs = cos(ph), sn = sin(ph);
        re += a[2 * j] * cs - a[2 * j + 1] * sn;
        im += a[2 * j] * sn + a[2 * j + 1] * cs;
    }
    out[0] = re;
    out[1] = im;
}

/* Visit the midpoints of the normalisation grid that lie inside the head: sum, min, max of
 * sum_c |S_c|^2. */
static void grid_stats(const mr_coils *c, double *mean, double *mn, double *mx)
{
    const int is3d = mr_phantom_is_3d(c->kind);
    const int n = is3d ? 32 : 128, nz = is3d ? n : 1;
    double sum = 0, lo = INFINITY, hi = 0;
    int64_t count = 0;
    for (int iz = 0; iz < nz; iz++)
        for (int iy = 0; iy < n; iy++)
            for (int ix = 0; ix < n; ix++) {
                const double r[3] = {(ix + 0.5) / n - 0.5, (iy + 0.5) / n - 0.5, is3d ? (iz + 0.5) / n - 0.5 : 0.0};
                if (!mr_phantom_inside(c->kind, r))
                    continue;
                double s2 = 0;
                for (int64_t k = 0; k < c->nc; k++) {
                    double v[2];
                    eval_sum(c, c->a + 2 * k * c->nf, r, v);
                    s2 += v[0] * v[0] + v[1] * v[1];
                }
                sum += s2;
                lo = fmin(lo, s2);
                hi = fmax(hi, s2);
                count++;
            }
    *mean = count ? sum / (double)count : 0.0;
    *mn = lo;
    *mx = hi;
}

mr_status mr_coils_create(mr_coils **out, mr_phantom_kind kind, int64_t ncoils)
{
    *out = NULL;
    if (ncoils < 1 || ncoils > MR_MAX_COILS)
        return mr_error(MR_EINVAL, "coils: %lld coils is outside 1..%d", (long long)ncoils, MR_MAX_COILS);
    mr_coils *c = calloc(1, sizeof *c);
    if (!c)
        return mr_error(MR_ENOMEM, "coils: out of memory");
    c->kind = kind;
    c->nc = ncoils;
    const int is3d = mr_phantom_is_3d(kind);
    const double step = is3d ? 1.0 / 3.0 : 0.25, fmax = is3d ? 2.0 / 3.0 : 0.75;
    const int jmax = is3d ? 2 : 3, jz = is3d ? jmax : 0;
    for (int z = -jz; z <= jz; z++)
        for (int y = -jmax; y <= jmax; y++)
            for (int x = -jmax; x <= jmax; x++) {
                const double f[3] = {x * step, y * step, z * step};
                if (f[0] * f[0] + f[1] * f[1] + f[2] * f[2] > fmax * fmax + 1e-12)
                    continue;
                memcpy(c->f[c->nf++], f, sizeof f);
            }
    c->a = malloc((size_t)ncoils * (size_t)c->nf * 2 * sizeof(double));
    if (!c->a) {
        mr_coils_free(c);
        return mr_error(MR_ENOMEM, "coils: out of memory for %lld coils", (long long)ncoils);
    }
    for (int64_t k = 0; k < ncoils; k++) {
        double p[3];
        coil_position(c, k, p);
        const double psi = 2.0 * PI * (double)k / (double)ncoils;
        for (int j = 0; j < c->nf; j++) {
            const double *f = c->f[j];
            const double g = exp(-2.0 * PI * PI * COIL_SIGMA * COIL_SIGMA * (f[0] * f[0] + f[1] * f[1] + f[2] * f[2]));
            const double ph = psi - 2.0 * PI * (f[0] * p[0] + f[1] * p[1] + f[2] * p[2]);
            c->a[2 * (k * c->nf + j)] = g * cos(ph);
            c->a[2 * (k * c->nf + j) + 1] = g * sin(ph);
        }
    }
    double mean, lo, hi;
    grid_stats(c, &mean, &lo, &hi);
    const double scale = 1.0 / sqrt(mean);
    for (int64_t i = 0; i < 2 * ncoils * c->nf; i++)
        c->a[i] *= scale;
    *out = c;
    return MR_OK;
}

void mr_coils_free(mr_coils *c)
{
    if (!c)
        return;
    free(c->a);
    free(c);
}

int64_t mr_coils_count(const mr_coils *c) { return c->nc; }

void mr_coils_value(const mr_coils *c, int64_t coil, const double r[3], double out[2])
{
    eval_sum(c, c->a + 2 * coil * c->nf, r, out);
}

void mr_coils_sum2_stats(const mr_coils *c, double *mean, double *min, double *max) { grid_stats(c, mean, min, max); }

mr_status mr_coils_maps(const mr_coils *c, const int64_t matrix[3], float *maps)
{
    mr_status st = mr_matrix_check(matrix, "coil maps");
    if (st != MR_OK)
        return st;
    const int64_t nx = matrix[0], ny = matrix[1], nz = matrix[2], n = nx * ny * nz;
#pragma omp parallel for schedule(static)
    for (int64_t v = 0; v < n; v++) {
        const int64_t ix = v % nx, iy = (v / nx) % ny, iz = v / (nx * ny);
        const double r[3] = {(double)(ix - nx / 2) / (double)nx, (double)(iy - ny / 2) / (double)ny,
                             (double)(iz - nz / 2) / (double)nz};
        for (int64_t k = 0; k < c->nc; k++) {
            double s[2];
            eval_sum(c, c->a + 2 * k * c->nf, r, s);
            maps[2 * (k * n + v)] = (float)s[0];
            maps[2 * (k * n + v) + 1] = (float)s[1];
        }
    }
    return MR_OK;
}

mr_status mr_coils_kspace(const mr_coils *c, const float *traj, int64_t m, float *data)
{
    if (!traj || !data || m < 1)
        return mr_error(MR_EINVAL, "coil k-space: bad arguments (m = %lld)", (long long)m);
    const int nf = c->nf;
    const int64_t nc = c->nc;
#pragma omp parallel
    {
        double g[64][2]; /* rhohat(k - f_j), shared by every coil */
#pragma omp for schedule(static)
        for (int64_t i = 0; i < m; i++) {
            for (int j = 0; j < nf; j++) {
                const double k[3] = {traj[3 * i] - c->f[j][0], traj[3 * i + 1] - c->f[j][1],
                                     traj[3 * i + 2] - c->f[j][2]};
                mr_phantom_kspace_at(c->kind, k, g[j]);
            }
            for (int64_t k = 0; k < nc; k++) {
                const double *a = c->a + 2 * k * nf;
                double re = 0, im = 0;
                for (int j = 0; j < nf; j++) {
                    re += a[2 * j] * g[j][0] - a[2 * j + 1] * g[j][1];
                    im += a[2 * j] * g[j][1] + a[2 * j + 1] * g[j][0];
                }
                data[2 * (k * m + i)] = (float)re;
                data[2 * (k * m + i) + 1] = (float)im;
            }
        }
    }
    return MR_OK;
}
