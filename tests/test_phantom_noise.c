/* Noise: same seed -> same bytes, different seed -> different bytes, the measured SNR within
 * +-0.5 dB of the target for M >= 10^4 (the sample noise power of 2M Gaussian parts has a relative
 * std of 1/sqrt(M), i.e. 0.04 dB at M = 10^4), per-part std and mean as drawn; the whole simulated
 * scan is byte-identical for 1 and 2 threads. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "phantoms/noise.h"
#include "phantoms/scan.h"
#include "phantoms/shepp_logan.h"
#include "phantoms/traj.h"
#include "testutil.h"

static void test_noise(uint64_t seed)
{
    const int64_t mat[3] = {64, 64, 1};
    mr_traj_params p;
    mr_traj_params_default(&p, MR_TRAJ_RADIAL2D, mat); /* 101 spokes x 128 = 12928 samples */
    int64_t m;
    CHECK_OK(mr_traj_count(&p, &m));
    CHECK_GE("samples", m, 10000);
    float *t = malloc((size_t)m * 3 * sizeof *t), *clean = malloc((size_t)m * 2 * sizeof *clean);
    float *a = malloc((size_t)m * 2 * sizeof *a), *b = malloc((size_t)m * 2 * sizeof *b);
    CHECK_OK(mr_traj_generate(&p, t));
    CHECK_OK(mr_phantom_kspace(MR_PHANTOM_SL2D, t, m, clean));
    const double snrs[3] = {30, 20, 5};
    for (int i = 0; i < 3; i++) {
        double sigma = 0;
        CHECK_OK(mr_noise_sigma(clean, m, snrs[i], &sigma));
        memcpy(a, clean, (size_t)m * 2 * sizeof *a);
        memcpy(b, clean, (size_t)m * 2 * sizeof *b);
        mr_noise_add(a, m, sigma, seed);
        mr_noise_add(b, m, sigma, seed);
        CHECK(memcmp(a, b, (size_t)m * 2 * sizeof *a) == 0);
        memcpy(b, clean, (size_t)m * 2 * sizeof *b);
        mr_noise_add(b, m, sigma, seed + 1);
        CHECK(memcmp(a, b, (size_t)m * 2 * sizeof *a) != 0);
        double meas = mr_noise_measured_snr_db(clean, a, m);
        printf("target %.1f dB: sigma %.4g, measured %.3f dB\n", snrs[i], sigma, meas);
        CHECK_LE("|measured SNR - target| [dB]", fabs(meas - snrs[i]), 0.5);
        /* per-part statistics: mean within 5 std errors, variances of re and im within 5% */
        double mean[2] = {0, 0}, var[2] = {0, 0};
        for (int64_t j = 0; j < m; j++)
            for (int c = 0; c < 2; c++) {
                double d = (double)a[2 * j + c] - clean[2 * j + c];
                mean[c] += d;
                var[c] += d * d;
            }
        for (int c = 0; c < 2; c++) {
            mean[c] /= (double)m;
            var[c] /= (double)m;
            CHECK_LE("|noise mean| / (sigma/sqrt M)", fabs(mean[c]) / (sigma / sqrt((double)m)), 5);
            CHECK_LE("|noise var / sigma^2 - 1| (re, im)", fabs(var[c] / (sigma * sigma) - 1), 0.05);
        }
    }
    double s;
    memset(a, 0, (size_t)m * 2 * sizeof *a);
    CHECK(mr_noise_sigma(a, m, 20, &s) == MR_EINVAL);
    CHECK(mr_noise_sigma(clean, m, NAN, &s) == MR_EINVAL);
    /* the generator: uniform in [0, 1) with mean 1/2 */
    mr_rng r;
    mr_rng_seed(&r, seed, 7);
    double sum = 0, lo = 1, hi = 0;
    for (int i = 0; i < 100000; i++) {
        double u = mr_rng_uniform(&r);
        sum += u;
        lo = fmin(lo, u);
        hi = fmax(hi, u);
    }
    CHECK(lo >= 0 && hi < 1);
    CHECK_LE("|mean uniform - 1/2| / (1/sqrt(12 n))", fabs(sum / 1e5 - 0.5) / (1 / sqrt(12e5)), 5);
    free(t);
    free(clean);
    free(a);
    free(b);
}

/* the whole scan (k-space with OpenMP, truth images) does not depend on the thread count */
static void test_threads(uint64_t seed)
{
    const int64_t mat[3] = {24, 24, 16};
    mr_scan_params sp;
    mr_scan_params_default(&sp);
    mr_traj_params_default(&sp.traj, MR_TRAJ_STACK_OF_STARS, mat);
    sp.noise = 1;
    sp.snr_db = 20;
    sp.seed = seed;
    mr_kspace *k1 = NULL, *k2 = NULL;
    omp_set_num_threads(1);
    CHECK_OK(mr_scan_simulate(&sp, &k1));
    omp_set_num_threads(2);
    CHECK_OK(mr_scan_simulate(&sp, &k2));
    if (k1 && k2) {
        size_t m = (size_t)k1->nsamples, n = (size_t)mr_kspace_voxels(k1);
        CHECK(memcmp(k1->data, k2->data, m * 2 * sizeof(float)) == 0);
        CHECK(memcmp(k1->traj, k2->traj, m * 3 * sizeof(float)) == 0);
        CHECK(memcmp(k1->weights, k2->weights, m * sizeof(float)) == 0);
        CHECK(memcmp(k1->truth, k2->truth, n * sizeof(float)) == 0);
        CHECK(memcmp(k1->truth_bl, k2->truth_bl, n * sizeof(float)) == 0);
        CHECK(k1->noise_sigma > 0 && k1->snr_db == 20 && k1->noise_seed == seed);
        CHECK(strcmp(k1->traj_kind, "stack-of-stars") == 0 && strcmp(k1->phantom, "shepp-logan-3d") == 0);
        CHECK(k1->fov_mm[0] == 240.0f && k1->fov_mm[2] == 240.0f);
    }
    mr_kspace_free(k1);
    mr_kspace_free(k2);
}

int main(void)
{
    uint64_t seed = test_seed();
    test_noise(seed);
    test_threads(seed);
    return test_finish("test_phantom_noise");
}
