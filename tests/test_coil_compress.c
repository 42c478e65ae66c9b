/* Coil compression (solver/coil_compress.h, recon/pipeline/sens_estimate.h mr_sens_compress_coils), fixed seeds:
 *
 *  1. Data with exactly a K-dimensional coil subspace (8 coils = random combinations of 3 sources):
 *     compressed to 3 virtual coils, all the energy is kept (retained >= 1 - 1e-9, and ||y||^2 / ||d||^2
 *     = 1 to 1e-5), the virtual coils are orthonormal combinations (||U^H U - I|| <= 1e-12).
 *  2. A phantom scan (2D 64^2 radial, 8 coils, 30 dB): for every K the energy of the compressed data is
 *     the reported fraction (relative 1e-5) and the fractions grow with K to 1 at K = C, where d = U y is
 *     recovered to 1e-6; K = 0 with keep = 0.99 chooses the fewest coils keeping 99 %.
 *  3. Noise: white complex noise of sigma per part stays white with sigma (measured per part over
 *     2 x 10^5 values: within 1 %).
 *  4. SENSE (tests/sense_testutil.h, 20 CG iterations, 33 spokes, 30 dB) with the data and the true maps
 *     compressed to 5 virtual coils: within 0.3 dB of SENSE with all 8 (measured: 0.05 dB lower).
 *  5. mr_sens_compress_coils compresses a scan's data and maps in place; bad sizes are MR_EINVAL. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "phantoms/noise.h"
#include "phantoms/scan.h"
#include "recon/pipeline/sens_estimate.h"
#include "scan_testutil.h"
#include "sense_testutil.h"
#include "solver/coil_compress.h"
#include "testutil.h"

static double energy(const float *x, int64_t n)
{
    double e = 0;
    for (int64_t i = 0; i < n; i++)
        e += (double)x[i] * x[i];
    return e;
}

/* 2D 64^2 radial, 8 coils, 30 dB, seed 9 */
static mr_kspace *phantom(int64_t spokes) { return test_sim_scan(MR_TRAJ_RADIAL2D, 64, 0, spokes, 8, 30.0, 9, 1); }

static void exact_subspace(void)
{
    const int64_t C = 8, K = 3, m = 5000;
    uint64_t rng = 12345;
    double complex A[8][3];
    for (int c = 0; c < C; c++)
        for (int k = 0; k < K; k++)
            A[c][k] = test_normal(&rng) + I * test_normal(&rng);
    float *d = malloc((size_t)(C * m) * 2 * sizeof *d), *y = malloc((size_t)(K * m) * 2 * sizeof *y);
    for (int64_t s = 0; s < m; s++) {
        double complex z[3];
        for (int k = 0; k < K; k++)
            z[k] = test_normal(&rng) + I * test_normal(&rng);
        for (int c = 0; c < C; c++) {
            double complex v = 0;
            for (int k = 0; k < K; k++)
                v += A[c][k] * z[k];
            d[2 * (c * m + s)] = (float)creal(v);
            d[2 * (c * m + s) + 1] = (float)cimag(v);
        }
    }
    mr_coil_compress cc;
    CHECK_OK(mr_coil_compress_plan(d, m, C, K, 0, 2, &cc));
    if (cc.u) {
        CHECK_GE("rank-3 data, 3 virtual coils: retained energy", cc.retained, 1 - 1e-9);
        CHECK_OK(mr_coil_compress_apply(&cc, d, m, y, 2));
        CHECK_LE("rank-3 data: | ||y||^2 / ||d||^2 - 1 |", fabs(energy(y, 2 * K * m) / energy(d, 2 * C * m) - 1), 1e-5);
        double orth = 0;
        for (int a = 0; a < K; a++)
            for (int b = 0; b < K; b++) {
                double complex s = 0;
                for (int c = 0; c < C; c++)
                    s += conj(cc.u[2 * (c * K + a)] + I * cc.u[2 * (c * K + a) + 1]) *
                         (cc.u[2 * (c * K + b)] + I * cc.u[2 * (c * K + b) + 1]);
                orth = fmax(orth, cabs(s - (a == b ? 1.0 : 0.0)));
            }
        CHECK_LE("max |U^H U - I|", orth, 1e-12);
    }
    mr_coil_compress_free(&cc);
    free(d);
    free(y);
}

static void phantom_energy(void)
{
    mr_kspace *ks = phantom(0);
    if (!ks)
        return;
    const int64_t m = ks->nsamples, C = ks->ncoils;
    float *y = malloc((size_t)(C * m) * 2 * sizeof *y), *back = malloc((size_t)(C * m) * 2 * sizeof *back);
    const double total = energy(ks->data, 2 * C * m);
    double prev = 0;
    for (int64_t K = 1; K <= C; K++) {
        mr_coil_compress cc;
        CHECK_OK(mr_coil_compress_plan(ks->data, m, C, K, 0, 2, &cc));
        if (!cc.u)
            continue;
        CHECK_OK(mr_coil_compress_apply(&cc, ks->data, m, y, 2));
        const double frac = energy(y, 2 * K * m) / total;
        printf("8 coils -> %lld: retained %.6f, measured %.6f\n", (long long)K, cc.retained, frac);
        CHECK_LE("| energy of the compressed data / total - retained |", fabs(frac - cc.retained), 1e-5 * cc.retained);
        CHECK(cc.retained >= prev);
        prev = cc.retained;
        if (K == C) {
            /* d = U y */
            double err = 0;
            for (int64_t c = 0; c < C; c++)
                for (int64_t s = 0; s < m; s++) {
                    double complex v = 0;
                    for (int64_t k = 0; k < K; k++)
                        v += (cc.u[2 * (c * K + k)] + I * cc.u[2 * (c * K + k) + 1]) *
                             (y[2 * (k * m + s)] + I * y[2 * (k * m + s) + 1]);
                    back[2 * (c * m + s)] = (float)creal(v);
                    back[2 * (c * m + s) + 1] = (float)cimag(v);
                }
            for (int64_t i = 0; i < 2 * C * m; i++)
                err += ((double)back[i] - ks->data[i]) * ((double)back[i] - ks->data[i]);
            CHECK_LE("K = C: ||U y - d|| / ||d||", sqrt(err / total), 1e-6);
            CHECK_GE("K = C: retained", cc.retained, 1 - 1e-12);
        }
        mr_coil_compress_free(&cc);
    }
    mr_coil_compress cc;
    CHECK_OK(mr_coil_compress_plan(ks->data, m, C, 0, 0.99, 2, &cc));
    if (cc.u) {
        double below = 0;
        for (int64_t k = 0; k + 1 < cc.nvirtual; k++)
            below += cc.energy[k];
        double all = 0;
        for (int64_t k = 0; k < C; k++)
            all += cc.energy[k];
        printf("keep 0.99: %lld virtual coils, retained %.4f\n", (long long)cc.nvirtual, cc.retained);
        CHECK_GE("keep 0.99: retained", cc.retained, 0.99);
        CHECK_LE("keep 0.99: one virtual coil fewer would keep", below / all, 0.99);
    }
    mr_coil_compress_free(&cc);
    /* white noise stays white with the same sigma */
    const int64_t nn = 100000 / C;
    float *noise = malloc((size_t)(C * nn) * 2 * sizeof *noise), *cn = malloc((size_t)(C * nn) * 2 * sizeof *cn);
    memset(noise, 0, (size_t)(C * nn) * 2 * sizeof *noise);
    mr_noise_add(noise, C * nn, 0.5, 77);
    CHECK_OK(mr_coil_compress_plan(ks->data, m, C, 4, 0, 2, &cc));
    if (cc.u) {
        CHECK_OK(mr_coil_compress_apply(&cc, noise, nn, cn, 2));
        const double sd = sqrt(energy(cn, 2 * 4 * nn) / (double)(2 * 4 * nn));
        CHECK_LE("white noise of sigma 0.5 through 4 virtual coils: |sd / 0.5 - 1|", fabs(sd / 0.5 - 1), 0.01);
    }
    mr_coil_compress_free(&cc);
    free(noise);
    free(cn);
    free(y);
    free(back);
    mr_kspace_free(ks);
}

static void sense_and_scan(void)
{
    mr_kspace *ks = phantom(33);
    if (!ks)
        return;
    const int64_t N = mr_kspace_voxels(ks);
    float *ref = malloc((size_t)N * sizeof *ref);
    for (int64_t v = 0; v < N; v++)
        ref[v] = ks->truth_bl[v];
    const double all = test_sense_psnr(ks, ks->data, ks->sens, ks->ncoils, 20, ref);
    double retained = 0;
    CHECK_OK(mr_sens_compress_coils(ks, "phantom", 5, 0, 2, &retained));
    CHECK(ks->ncoils == 5);
    const double five = test_sense_psnr(ks, ks->data, ks->sens, ks->ncoils, 20, ref);
    printf("SENSE 64^2, 33 spokes, 30 dB: 8 coils %.2f dB, 5 virtual coils %.2f dB (retained %.4f)\n", all, five,
           retained);
    CHECK_GE("SENSE with 5 virtual coils - with all 8 (dB)", five - all, -0.3);
    /* nothing to do: one coil fewer than asked, or k >= C */
    CHECK_OK(mr_sens_compress_coils(ks, "phantom", 5, 0, 2, &retained));
    CHECK(ks->ncoils == 5 && retained == 1);
    mr_coil_compress cc;
    CHECK(mr_coil_compress_plan(ks->data, ks->nsamples, 5, 6, 0, 2, &cc) == MR_EINVAL);
    CHECK(mr_coil_compress_plan(ks->data, ks->nsamples, 5, 0, 1.5, 2, &cc) == MR_EINVAL);
    memset(ks->data, 0, (size_t)(ks->nsamples * 5) * 2 * sizeof *ks->data);
    CHECK(mr_coil_compress_plan(ks->data, ks->nsamples, 5, 2, 0, 2, &cc) == MR_EINVAL);
    free(ref);
    mr_kspace_free(ks);
}

int main(void)
{
    exact_subspace();
    phantom_energy();
    sense_and_scan();
    return test_finish("test_coil_compress");
}
