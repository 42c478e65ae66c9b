/* solver/metrics: MSE, PSNR, SNR and percent error on hand-made images, the expected values
 * derived here from the definitions (I = |recon|, I0 = |truth|, no rescaling). */
#include <math.h>
#include <stdlib.h>

#include "solver/metrics.h"
#include "testutil.h"

static int cmp_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    /* 1. Four voxels. truth {1, -2, 2, 4} -> I0 = {1, 2, 2, 4};
     *    recon (0.6+0.8i, 3i, -2, 2.4+3.2i) -> I = {1, 3, 2, 4}; I - I0 = {0, 1, 0, 0}.
     *    MSE = 1/4, sqrt(MSE) = 1/2, max I0 = 4, mean I0^2 = (1+4+4+16)/4 = 25/4, RMS(I0) = 5/2.
     *    PSNR = 20 log10(4 / 0.5) = 20 log10 8; SNR = 20 log10(2.5 / 0.5) = 20 log10 5;
     *    percent error = 100 * 0.5 / 2.5 = 20. */
    const float truth[4] = {1, -2, 2, 4};
    const float recon[8] = {0.6f, 0.8f, 0, 3, -2, 0, 2.4f, 3.2f};
    mr_metrics m;
    CHECK_OK(mr_metrics_compute(recon, 1, truth, 4, &m));
    CHECK_LE("|mse - 0.25|", fabs(m.mse - 0.25), 1e-6);
    CHECK_LE("|psnr - 20log10(8)|", fabs(m.psnr_db - 20 * log10(8.0)), 1e-5);
    CHECK_LE("|snr - 20log10(5)|", fabs(m.snr_db - 20 * log10(5.0)), 1e-5);
    CHECK_LE("|percent error - 20|", fabs(m.percent_error - 20), 1e-5);
    CHECK_LE("|max truth - 4|", fabs(m.max_truth - 4), 0);

    /* 2. Real recon path, absolute values: recon {-1, 3, -2, 4} has the same magnitudes. */
    const float recon_real[4] = {-1, 3, -2, 4};
    mr_metrics mr;
    CHECK_OK(mr_metrics_compute(recon_real, 0, truth, 4, &mr));
    CHECK_LE("real path: |psnr - 20log10(8)|", fabs(mr.psnr_db - 20 * log10(8.0)), 1e-5);
    CHECK_LE("psnr helper matches", fabs(mr_metrics_psnr(recon, 1, truth, 4) - m.psnr_db), 1e-12);

    /* 3. Random positive truth plus a constant c: I - I0 = c everywhere, so MSE = c^2,
     *    PSNR = 20 log10(max I0 / c), SNR = 20 log10(RMS(I0) / c), percent = 100 c / RMS(I0),
     *    with max and RMS computed here from the truth. */
    uint64_t s = test_seed();
    enum { N = 1000 };
    float *t = malloc(N * sizeof *t), *r = malloc(2 * N * sizeof *r);
    const double c = 0.125;
    double mx = 0, s2 = 0;
    for (int i = 0; i < N; i++) {
        t[i] = (float)(0.5 + test_uniform(&s));
        r[2 * i] = (float)(t[i] + c); /* exact in float: t in [0.5, 1.5), c = 2^-3 */
        r[2 * i + 1] = 0;
        mx = fmax(mx, t[i]);
        s2 += (double)t[i] * t[i];
    }
    double rms = sqrt(s2 / N);
    CHECK_OK(mr_metrics_compute(r, 1, t, N, &m));
    printf("offset case: mse %.9g psnr %.6f snr %.6f percent %.6f\n", m.mse, m.psnr_db, m.snr_db, m.percent_error);
    CHECK_LE("offset: |mse - c^2| / c^2", fabs(m.mse - c * c) / (c * c), 1e-6);
    CHECK_LE("offset: |psnr - expected|", fabs(m.psnr_db - 20 * log10(mx / c)), 1e-5);
    CHECK_LE("offset: |snr - expected|", fabs(m.snr_db - 20 * log10(rms / c)), 1e-5);
    CHECK_LE("offset: |percent - expected|", fabs(m.percent_error - 100 * c / rms), 1e-5);

    /* 4. Identical images: MSE 0, PSNR +inf; empty input rejected. */
    CHECK_OK(mr_metrics_compute(t, 0, t, N, &m));
    CHECK(m.mse == 0 && isinf(m.psnr_db) && m.psnr_db > 0);
    CHECK(mr_metrics_compute(t, 0, t, 0, &m) == MR_EINVAL);
    free(t);
    free(r);

    /* 5. Percentile (nearest rank) against sorting: random magnitudes with many ties, complex and
     *    real, every rank from the ends to the middle; NaN values are skipped. */
    for (int trial = 0; trial < 40; trial++) {
        const int n = 1 + (int)(test_uniform(&s) * 3000);
        float *img = malloc(2 * (size_t)n * sizeof *img);
        double *mag = malloc((size_t)n * sizeof *mag);
        if (!img || !mag) {
            free(img);
            free(mag);
            break;
        }
        int finite = 0;
        for (int i = 0; i < n; i++) {
            /* few distinct values on odd trials (ties), continuous otherwise */
            const double v = trial & 1 ? floor(test_uniform(&s) * 5) : test_normal(&s);
            img[2 * i] = (float)v;
            img[2 * i + 1] = trial % 4 == 2 ? (float)v : 0.0f;
            if (trial % 8 == 3 && i % 7 == 0)
                img[2 * i] = NAN;
            else
                mag[finite++] = hypotf(img[2 * i], img[2 * i + 1]);
        }
        for (int a = 1; a < finite; a++) /* insertion sort: the reference */
            for (int b = a; b > 0 && mag[b - 1] > mag[b]; b--) {
                const double x = mag[b];
                mag[b] = mag[b - 1];
                mag[b - 1] = x;
            }
        const double pcts[] = {0, 0.1, 1, 37.5, 50, 99, 99.5, 100};
        for (size_t k = 0; k < sizeof pcts / sizeof pcts[0]; k++) {
            double got = -1;
            CHECK_OK(mr_metrics_percentile(img, 1, n, pcts[k], &got));
            long rank = (long)ceil(pcts[k] / 100.0 * finite) - 1;
            rank = rank < 0 ? 0 : (rank >= finite ? finite - 1 : rank);
            const double want = finite ? mag[rank] : NAN;
            if (finite ? got != want : !isnan(got))
                printf("percentile %g of %d values (%d finite): %.9g, sorting gives %.9g\n", pcts[k], n, finite, got,
                       want);
            CHECK(finite ? got == want : isnan(got));
        }
        free(img);
        free(mag);
    }
    /* large images take the parallel radix selection: the same values as sorting */
    for (int trial = 0; trial < 3; trial++) {
        const int n = 200003 + 70001 * trial, cplx = trial != 1;
        float *img = malloc((size_t)n * 2 * sizeof(float)), *mag = malloc((size_t)n * sizeof(float));
        CHECK(img && mag);
        if (!img || !mag)
            break;
        int finite = 0;
        for (int i = 0; i < n; i++) {
            const double u = test_uniform(&s);
            /* magnitudes over many binades, with repeated values, zeros, and non-finite voxels */
            img[2 * i] = (float)(i % 97 == 0 ? 0.0 : i % 89 == 0 ? 0.5 : ldexp(u, (int)(u * 40) - 20));
            img[2 * i + 1] = (float)test_normal(&s) * (trial == 2 ? 1e-30f : 1.0f);
            if (i % 1009 == 5)
                img[2 * i] = i % 2 ? INFINITY : NAN;
        }
        for (int i = 0; i < n; i++) {
            const float v = cplx ? hypotf(img[2 * i], img[2 * i + 1]) : fabsf(img[i]);
            if (isfinite(v))
                mag[finite++] = v;
        }
        qsort(mag, (size_t)finite, sizeof *mag, cmp_float);
        const double pcts[] = {0, 1e-4, 37.5, 50, 99, 99.5, 100};
        for (size_t k = 0; k < sizeof pcts / sizeof pcts[0]; k++) {
            double got = -1;
            CHECK_OK(mr_metrics_percentile(img, cplx, n, pcts[k], &got));
            long rank = (long)ceil(pcts[k] / 100.0 * finite) - 1;
            rank = rank < 0 ? 0 : (rank >= finite ? finite - 1 : rank);
            if (got != mag[rank])
                printf("percentile %g of %d values (%d finite, %s): %.9g, sorting gives %.9g\n", pcts[k], n, finite,
                       cplx ? "complex" : "real", got, mag[rank]);
            CHECK(got == mag[rank]);
        }
        free(img);
        free(mag);
    }
    const float three[3] = {3, -1, 2};
    double p50 = 0;
    CHECK_OK(mr_metrics_percentile(three, 0, 3, 50, &p50));
    CHECK(p50 == 2); /* |x| = {3, 1, 2}: the 2nd smallest */
    CHECK(mr_metrics_percentile(three, 0, 3, 101, &p50) == MR_EINVAL);
    CHECK(mr_metrics_percentile(three, 0, 0, 50, &p50) == MR_EINVAL);
    return test_finish("test_metrics");
}
