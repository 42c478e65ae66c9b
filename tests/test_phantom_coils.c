/* Simulated coils (phantoms/coils.h): the coil data are the Fourier transform of S_c times the phantom.
 *
 *  - d_c(k) against a direct quadrature of S_c(r) rho(r) e^{-i2pi k.r} over the FOV (midpoint rule on a
 *    fine grid; rho by mr_phantom_values_row, S_c by mr_coils_value) at k = 0 and a few random k:
 *    2D 768^2 points, relative error <= 2e-3 of max_k |d_c(k)| (measured 5e-4); 3D 96^3 points, <= 1e-2
 *    (measured 1.3e-3); the quadrature's error at the ellipse edges, O(1/grid), dominates, and a wrong
 *    sign or shift of a frequency would give errors of order 1;
 *  - the stored maps equal S_c at the voxel centres (float rounding: <= 1e-6 relative);
 *  - sum_c |S_c|^2 has mean 1 over the head (1e-12) and lies in [0.2, 3] there (smooth, no holes);
 *  - the coils differ: |<S_0, S_1>| / (||S_0|| ||S_1||) < 0.95 over the head;
 *  - a simulated scan carries C coils of data and maps, with one noise sigma for all coils. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "phantoms/coils.h"
#include "phantoms/scan.h"
#include "testutil.h"

static uint64_t rng;

static void quadrature(mr_phantom_kind kind, int64_t ncoils, int grid, double bound)
{
    const int is3d = kind == MR_PHANTOM_SL3D;
    mr_coils *c = NULL;
    CHECK_OK(mr_coils_create(&c, kind, ncoils));
    if (!c)
        return;
    enum { NK = 5 };
    float traj[3 * NK];
    for (int j = 0; j < NK; j++)
        for (int a = 0; a < 3; a++)
            traj[3 * j + a] = j == 0 || (a == 2 && !is3d) ? 0.0f : (float)((test_uniform(&rng) - 0.5) * 12.0);
    float *data = malloc((size_t)ncoils * NK * 2 * sizeof(float));
    CHECK_OK(mr_coils_kspace(c, traj, NK, data));
    double *acc = calloc((size_t)ncoils * NK * 2, sizeof(double));
    double *rho = malloc((size_t)grid * sizeof(double));
    const double h = 1.0 / grid;
    const int gz = is3d ? grid : 1;
    for (int iz = 0; iz < gz; iz++)
        for (int iy = 0; iy < grid; iy++) {
            const double r0[3] = {-0.5 + 0.5 * h, -0.5 + (iy + 0.5) * h, is3d ? -0.5 + (iz + 0.5) * h : 0.0};
            mr_phantom_values_row(kind, r0, h, grid, rho);
            for (int ix = 0; ix < grid; ix++) {
                if (rho[ix] == 0)
                    continue;
                const double r[3] = {r0[0] + ix * h, r0[1], r0[2]};
                for (int64_t k = 0; k < ncoils; k++) {
                    double s[2];
                    mr_coils_value(c, k, r, s);
                    for (int j = 0; j < NK; j++) {
                        const double ph = -2.0 * M_PI * (traj[3 * j] * r[0] + traj[3 * j + 1] * r[1] + traj[3 * j + 2] * r[2]);
                        const double e[2] = {cos(ph), sin(ph)};
                        double *o = acc + 2 * (k * NK + j);
                        o[0] += rho[ix] * (s[0] * e[0] - s[1] * e[1]);
                        o[1] += rho[ix] * (s[0] * e[1] + s[1] * e[0]);
                    }
                }
            }
        }
    const double vol = is3d ? h * h * h : h * h;
    double worst = 0, peak = 0;
    for (int64_t i = 0; i < ncoils * NK; i++)
        peak = fmax(peak, hypot(data[2 * i], data[2 * i + 1]));
    for (int64_t i = 0; i < ncoils * NK; i++)
        worst = fmax(worst, hypot(data[2 * i] - acc[2 * i] * vol, data[2 * i + 1] - acc[2 * i + 1] * vol));
    char label[160];
    snprintf(label, sizeof label, "%s %lld coils: max |d_c(k) - quadrature| / max |d_c(k)| (%d^%d points)",
             is3d ? "3D" : "2D", (long long)ncoils, grid, is3d ? 3 : 2);
    CHECK_LE(label, worst / peak, bound);

    double mean, lo, hi;
    mr_coils_sum2_stats(c, &mean, &lo, &hi);
    printf("%s: sum_c |S_c|^2 over the head: mean %.12f, min %.3f, max %.3f\n", is3d ? "3D" : "2D", mean, lo, hi);
    CHECK_LE("|mean sum_c |S_c|^2 - 1| over the head", fabs(mean - 1.0), 1e-12);
    CHECK_GE("min sum_c |S_c|^2 over the head", lo, 0.2);
    CHECK_LE("max sum_c |S_c|^2 over the head", hi, 3.0);
    free(data);
    free(acc);
    free(rho);
    mr_coils_free(c);
}

/* Stored maps = S_c at the voxel centres; the coils are distinct. */
static void maps_and_scan(void)
{
    const int64_t matrix[3] = {32, 24, 1}, n = 32 * 24, nc = 4;
    mr_coils *c = NULL;
    CHECK_OK(mr_coils_create(&c, MR_PHANTOM_SL2D, nc));
    if (!c)
        return;
    CHECK(mr_coils_count(c) == nc);
    float *maps = malloc((size_t)n * nc * 2 * sizeof(float));
    CHECK_OK(mr_coils_maps(c, matrix, maps));
    double worst = 0, dot[2] = {0, 0}, n0 = 0, n1 = 0;
    for (int64_t v = 0; v < n; v++) {
        const int64_t ix = v % 32, iy = v / 32;
        const double r[3] = {(double)(ix - 16) / 32.0, (double)(iy - 12) / 24.0, 0.0};
        for (int64_t k = 0; k < nc; k++) {
            double s[2];
            mr_coils_value(c, k, r, s);
            const float *m = maps + 2 * (k * n + v);
            worst = fmax(worst, hypot(m[0] - s[0], m[1] - s[1]) / fmax(hypot(s[0], s[1]), 1e-3));
        }
        if (mr_phantom_inside(MR_PHANTOM_SL2D, r)) {
            const float *a = maps + 2 * v, *b = maps + 2 * (n + v);
            dot[0] += (double)a[0] * b[0] + (double)a[1] * b[1];
            dot[1] += (double)a[0] * b[1] - (double)a[1] * b[0];
            n0 += (double)a[0] * a[0] + (double)a[1] * a[1];
            n1 += (double)b[0] * b[0] + (double)b[1] * b[1];
        }
    }
    CHECK_LE("stored maps vs S_c at the voxel centres, max relative", worst, 1e-6);
    CHECK_LE("coil 0 vs coil 1: |<S_0,S_1>| / (||S_0|| ||S_1||) over the head", hypot(dot[0], dot[1]) / sqrt(n0 * n1), 0.95);
    free(maps);
    mr_coils_free(c);
    CHECK(mr_coils_create(&c, MR_PHANTOM_SL2D, 0) == MR_EINVAL);

    /* a simulated scan: C coils of data and maps, one sigma */
    mr_scan_params sp;
    mr_scan_params_default(&sp);
    mr_traj_params_default(&sp.traj, MR_TRAJ_RADIAL2D, matrix);
    sp.traj.spokes = 21;
    sp.traj.readout = 40;
    sp.coils = 3;
    sp.noise = 1;
    sp.snr_db = 20;
    mr_kspace *ks = NULL;
    CHECK_OK(mr_scan_simulate(&sp, &ks));
    if (ks) {
        CHECK(ks->ncoils == 3 && ks->sens != NULL && ks->noise_sigma > 0);
        CHECK(ks->data[0] != ks->data[2 * ks->nsamples]); /* the coils' data differ */
        mr_kspace_free(ks);
    }
    sp.coils = MR_MAX_COILS + 1;
    CHECK(mr_scan_simulate(&sp, &ks) == MR_EINVAL);
}

int main(void)
{
    rng = test_seed();
    quadrature(MR_PHANTOM_SL2D, 4, 768, 2e-3);
    quadrature(MR_PHANTOM_SL3D, 2, 96, 1e-2);
    maps_and_scan();
    return test_finish("test_phantom_coils");
}
