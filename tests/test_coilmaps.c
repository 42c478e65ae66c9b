/* Coil-map estimation (solver/coilmaps.c) on smooth synthetic sensitivities:
 *  A. from coil images built on the calibration grid (object x sensitivity sampled there);
 *  B. from non-Cartesian k-space of the same object (exact NUDFT of object x sensitivity on the
 *     image grid): Nyquist radial, and undersampled golden-angle radial;
 *  C. 3D, from images on a calibration grid.
 * The true maps are S / ||S|| (unit norm per voxel) with the estimator's phase convention (see
 * map_error); the error is the RMS difference inside the object after removing one common phase:
 *     err = min_phi sqrt( sum_{r in object} ||s_est(r) e^{i phi} - s(r)||^2 / #object ).
 * Measured 2026-11-23 (default window 3): A 0.016, B Nyquist radial 0.022, B golden 40 spokes 0.041,
 * C 3D 0.026; the bounds are about twice that. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grid.h"
#include "phantoms/traj.h"
#include "solver/coilmaps.h"
#include "solver/nudft.h"
#include "testutil.h"

#define NC 8

/* r in FOV units (voxel i at (i - N/2)/N) */
static void voxel_pos(const int64_t n[3], int64_t idx, double r[3])
{
    const int64_t x = idx % n[0], y = (idx / n[0]) % n[1], z = idx / (n[0] * n[1]);
    r[0] = (double)(x - n[0] / 2) / (double)n[0];
    r[1] = (double)(y - n[1] / 2) / (double)n[1];
    r[2] = n[2] > 1 ? (double)(z - n[2] / 2) / (double)n[2] : 0.0;
}

/* coil c: a Gaussian profile centred outside the object on a ring, with a smooth phase */
static double complex sens(int c, const double r[3], int is3d)
{
    const double ang = 2 * M_PI * c / NC;
    const double p[3] = {0.6 * cos(ang), 0.6 * sin(ang), is3d ? 0.15 * ((c % 2) ? 1 : -1) : 0};
    double d2 = 0;
    for (int a = 0; a < 3; a++)
        d2 += (r[a] - p[a]) * (r[a] - p[a]);
    const double mag = exp(-d2 / (2 * 0.35 * 0.35));
    const double ph = 0.8 * c + 2.0 * (r[0] * cos(ang + 1) + r[1] * sin(ang + 1)) + (is3d ? 1.5 * r[2] : 0);
    return mag * cexp(I * ph);
}

/* object: an ellipse(oid) with a brighter rim, smooth interior variation and a smooth phase */
static double complex object(const double r[3], int is3d)
{
    const double e = (r[0] / 0.36) * (r[0] / 0.36) + (r[1] / 0.42) * (r[1] / 0.42) +
                     (is3d ? (r[2] / 0.38) * (r[2] / 0.38) : 0);
    if (e > 1)
        return 0;
    const double v = e > 0.8 ? 1.0 : 0.4 + 0.2 * cos(2 * M_PI * r[0]) + (r[1] > 0.1 && r[1] < 0.2 ? 0.3 : 0);
    return v * cexp(I * M_PI * (0.5 * r[1] - 0.3 * r[0]));
}

/* x_c(r) = object(r) S_c(r) on grid n: [C][n][2] */
static float *coil_images(const int64_t n[3], int is3d)
{
    const int64_t N = n[0] * n[1] * n[2];
    float *x = malloc((size_t)(NC * N) * 2 * sizeof *x);
    for (int64_t v = 0; v < N; v++) {
        double r[3];
        voxel_pos(n, v, r);
        const double complex o = object(r, is3d);
        for (int c = 0; c < NC; c++) {
            const double complex val = o * sens(c, r, is3d);
            x[2 * (c * N + v)] = (float)creal(val);
            x[2 * (c * N + v) + 1] = (float)cimag(val);
        }
    }
    return x;
}

/* Errors of estimated maps inside the object, against s = S / ||S|| per voxel:
 *  *local: phase-free, sqrt(mean_r min_phi ||s_est e^{i phi} - s||^2) = sqrt(mean(2 - 2 |s_est^H s|));
 *  return: with the estimator's phase convention applied to the truth (its phase referred to the
 *          virtual coil v: v^H s(r) real >= 0, v the dominant eigenvector of sum_r x x^H of the true
 *          coil images), then one common phase removed (v's own phase is arbitrary). */
static double map_error(const float *maps, const int64_t n[3], int is3d, double *local)
{
    const int64_t N = n[0] * n[1] * n[2];
    /* the true virtual coil */
    double complex G[NC][NC] = {{0}}, v[NC], t[NC];
    for (int64_t r = 0; r < N; r++) {
        double p[3];
        voxel_pos(n, r, p);
        const double complex o = object(p, is3d);
        if (o == 0)
            continue;
        for (int i = 0; i < NC; i++)
            for (int j = 0; j < NC; j++)
                G[i][j] += o * sens(i, p, is3d) * conj(o * sens(j, p, is3d));
    }
    for (int i = 0; i < NC; i++)
        v[i] = 1;
    for (int it = 0; it < 500; it++) {
        double nrm = 0;
        for (int i = 0; i < NC; i++) {
            t[i] = 0;
            for (int j = 0; j < NC; j++)
                t[i] += G[i][j] * v[j];
            nrm += creal(t[i] * conj(t[i]));
        }
        for (int i = 0; i < NC; i++)
            v[i] = t[i] / sqrt(nrm);
    }
    double complex corr = 0;
    double err = 0, loc = 0;
    int64_t cnt = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int64_t r = 0; r < N; r++) {
            double p[3];
            voxel_pos(n, r, p);
            if (cabs(object(p, is3d)) == 0)
                continue;
            double complex s[NC], proj = 0, dot = 0;
            double nrm = 0;
            for (int c = 0; c < NC; c++) {
                s[c] = sens(c, p, is3d);
                nrm += creal(s[c] * conj(s[c]));
            }
            nrm = sqrt(nrm);
            for (int c = 0; c < NC; c++) {
                s[c] /= nrm;
                proj += conj(v[c]) * s[c];
            }
            const double complex ref = conj(proj) / cabs(proj); /* the convention: v^H s real >= 0 */
            for (int c = 0; c < NC; c++) {
                const double complex est = maps[2 * (c * N + r)] + I * maps[2 * (c * N + r) + 1];
                if (!pass) {
                    corr += conj(est) * s[c] * ref;
                    dot += conj(est) * s[c];
                } else {
                    const double complex d = est * corr / cabs(corr) - s[c] * ref;
                    err += creal(d * conj(d));
                }
            }
            if (!pass) {
                loc += 2 - 2 * fmin(1.0, cabs(dot));
                cnt++;
            }
        }
    *local = sqrt(fmax(loc, 0) / (double)cnt);
    return sqrt(err / (double)cnt);
}

static void from_kspace(mr_traj_kind kind, int64_t spokes, double bound, const char *what)
{
    const int64_t n[3] = {64, 64, 1};
    mr_traj_params p;
    mr_traj_params_default(&p, kind, n);
    if (spokes > 0)
        p.spokes = spokes;
    int64_t m = 0;
    CHECK_OK(mr_traj_count(&p, &m));
    float *traj = malloc((size_t)m * 3 * sizeof *traj);
    CHECK_OK(mr_traj_generate(&p, traj));
    float *x = coil_images(n, 0);
    float *data = malloc((size_t)(NC * m) * 2 * sizeof *data);
    const mr_grid g = mr_grid_image(n);
    const int64_t N = n[0] * n[1] * n[2];
    for (int c = 0; c < NC; c++)
        CHECK_OK(mr_nudft_forward(&g, traj, x + 2 * c * N, m, data + 2 * c * m, 0));
    for (int64_t i = 0; i < 2 * NC * m; i++)
        data[i] /= (float)N; /* the forward model's 1/N (docs/FORMAT.md) */
    float *maps = malloc((size_t)(NC * N) * 2 * sizeof *maps);
    int64_t small[3];
    mr_coilmaps_opts o;
    mr_coilmaps_opts_default(&o);
    CHECK_OK(mr_coilmaps_estimate(n, traj, m, data, NC, &o, maps, small));
    double local, err = map_error(maps, n, 0, &local);
    printf("%s: %lld spokes, calibration grid %lldx%lld, map error %.4f (phase-free %.4f)\n", what,
           (long long)p.spokes, (long long)small[0], (long long)small[1], err, local);
    CHECK_LE(what, err, bound);
    free(traj);
    free(x);
    free(data);
    free(maps);
}

int main(void)
{
    /* A: images built on a 32x32 calibration grid, maps on 64x64 and 128x96 */
    {
        const int64_t small[3] = {32, 32, 1};
        float *x = coil_images(small, 0);
        const int64_t mats[2][3] = {{64, 64, 1}, {128, 96, 1}};
        for (int k = 0; k < 2; k++) {
            const int64_t N = mats[k][0] * mats[k][1];
            float *maps = malloc((size_t)(NC * N) * 2 * sizeof *maps);
            CHECK_OK(mr_coilmaps_from_images(x, NC, small, mats[k], NULL, maps));
            double local, err = map_error(maps, mats[k], 0, &local);
            printf("A: from 32x32 images to %lldx%lld: map error %.4f (phase-free %.4f)\n", (long long)mats[k][0],
                   (long long)mats[k][1], err, local);
            CHECK_LE("A: maps from calibration-grid images, relative RMS error in the object", err, 0.03);
            /* unit norm everywhere */
            double worst = 0;
            for (int64_t v = 0; v < N; v++) {
                double s = 0;
                for (int c = 0; c < NC; c++)
                    s += maps[2 * (c * N + v)] * maps[2 * (c * N + v)] +
                         maps[2 * (c * N + v) + 1] * maps[2 * (c * N + v) + 1];
                worst = fmax(worst, fabs(sqrt(s) - 1));
            }
            CHECK_LE("A: | ||s(r)|| - 1 | everywhere", worst, 1e-5);
            free(maps);
        }
        free(x);
    }
    /* B: from non-Cartesian k-space */
    from_kspace(MR_TRAJ_RADIAL2D, 0, 0.04, "B: Nyquist radial, relative RMS map error in the object");
    from_kspace(MR_TRAJ_GOLDEN2D, 40, 0.07, "B: golden-angle 40 spokes, relative RMS map error in the object");
    /* C: 3D */
    {
        const int64_t small[3] = {20, 20, 20}, mat[3] = {40, 40, 40};
        float *x = coil_images(small, 1);
        const int64_t N = mat[0] * mat[1] * mat[2];
        float *maps = malloc((size_t)(NC * N) * 2 * sizeof *maps);
        CHECK_OK(mr_coilmaps_from_images(x, NC, small, mat, NULL, maps));
        double local, err = map_error(maps, mat, 1, &local);
        printf("C: 3D from 20^3 images to 40^3: map error %.4f (phase-free %.4f)\n", err, local);
        CHECK_LE("C: 3D maps, relative RMS error in the object", err, 0.05);
        free(maps);
        free(x);
    }
    /* errors */
    {
        const int64_t small[3] = {8, 8, 1}, mat[3] = {16, 16, 1};
        float zero[2 * NC * 64] = {0}, maps[2 * NC * 256];
        CHECK(mr_coilmaps_from_images(zero, NC, small, mat, NULL, maps) == MR_EINVAL);
        mr_coilmaps_opts o;
        mr_coilmaps_opts_default(&o);
        o.window = 4;
        CHECK(mr_coilmaps_from_images(zero, NC, small, mat, &o, maps) == MR_EINVAL);
    }
    return test_finish("test_coilmaps");
}
