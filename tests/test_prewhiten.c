/* Noise prewhitening (solver/prewhiten.c):
 *  - with strongly correlated, unequal coil noise, the SNR of the matched-filter coil combination
 *    (the known-sensitivity combination SENSE performs) is measured on simulated samples with and
 *    without prewhitening: prewhitened it must be higher, and within 3% of the theoretical optimum
 *    sqrt(s^H Psi^-1 s); without, it must match its own theory |s^H s|^2 / (s^H Psi s);
 *  - the whitened noise has covariance sigma_ref^2 I (estimated from independent samples);
 *  - W L = sigma_ref I against a float64 check, mr_prewhiten_apply against a float64 product;
 *  - one coil: W = 1 exactly; a duplicated channel (singular Psi) is refused naming the coil. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solver/prewhiten.h"
#include "testutil.h"

#define C 6

/* noise n = A z with A[i][j] = g_i rho^(i-j) (j <= i): correlated, unequal coils */
static void draw_noise(double complex *n, const double A[C][C], uint64_t *rng)
{
    double complex z[C];
    for (int j = 0; j < C; j++)
        z[j] = test_normal(rng) + I * test_normal(rng);
    for (int i = 0; i < C; i++) {
        n[i] = 0;
        for (int j = 0; j <= i; j++)
            n[i] += A[i][j] * z[j];
    }
}

/* SNR of y_m = s^H x_m / (s^H s): |mean| / std */
static double combined_snr(const float *x, const double complex *s, int64_t M)
{
    double complex ss = 0, mean = 0;
    for (int c = 0; c < C; c++)
        ss += conj(s[c]) * s[c];
    double complex *y = malloc((size_t)M * sizeof *y);
    for (int64_t m = 0; m < M; m++) {
        double complex v = 0;
        for (int c = 0; c < C; c++)
            v += conj(s[c]) * (x[2 * (c * M + m)] + I * x[2 * (c * M + m) + 1]);
        y[m] = v / ss;
        mean += y[m];
    }
    mean /= (double)M;
    double var = 0;
    for (int64_t m = 0; m < M; m++)
        var += creal((y[m] - mean) * conj(y[m] - mean));
    var /= (double)(M - 1);
    free(y);
    return cabs(mean) / sqrt(var);
}

/* S samples of the correlated noise into x ([C][S] complex) */
static void fill_noise(float *x, int64_t S, const double A[C][C], uint64_t *rng)
{
    double complex n[C];
    for (int64_t m = 0; m < S; m++) {
        draw_noise(n, A, rng);
        for (int c = 0; c < C; c++) {
            x[2 * (c * S + m)] = (float)creal(n[c]);
            x[2 * (c * S + m) + 1] = (float)cimag(n[c]);
        }
    }
}

/* noise scan -> Psi estimate psi -> W (checked: the estimate against the true Psi) */
static void estimate_whitener(const double A[C][C], double complex Psi[C][C], float *noise, int64_t S, uint64_t *rng,
                              double psi[2 * C * C], double w[2 * C * C])
{
    fill_noise(noise, S, A, rng);
    mr_noise_cov_accumulate(psi, C, noise, S);
    for (int i = 0; i < 2 * C * C; i++)
        psi[i] /= (double)S;
    double est = 0;
    for (int i = 0; i < C; i++)
        for (int j = 0; j < C; j++)
            est = fmax(est, cabs(psi[2 * (i * C + j)] + I * psi[2 * (i * C + j) + 1] - Psi[i][j]) /
                                sqrt(creal(Psi[i][i]) * creal(Psi[j][j])));
    /* each element's standard error is at most sqrt(Psi_ii Psi_jj / S): allow 5 of them */
    CHECK_LE("covariance estimate vs truth, |error| / sqrt(Psi_ii Psi_jj)", est, 5 / sqrt((double)S));
    CHECK_OK(mr_prewhiten_matrix(psi, C, w));
}

/* W L = sigma_ref I, with L the float64 Cholesky factor of psi */
static void check_whitener_cholesky(const double psi[2 * C * C], const double w[2 * C * C])
{
    double complex L[C][C] = {{0}};
    for (int j = 0; j < C; j++) {
        double complex d = psi[2 * (j * C + j)];
        for (int k = 0; k < j; k++)
            d -= L[j][k] * conj(L[j][k]);
        L[j][j] = csqrt(d);
        for (int i = j + 1; i < C; i++) {
            double complex v = psi[2 * (i * C + j)] + I * psi[2 * (i * C + j) + 1];
            for (int k = 0; k < j; k++)
                v -= L[i][k] * conj(L[j][k]);
            L[i][j] = v / L[j][j];
        }
    }
    double tr = 0;
    for (int c = 0; c < C; c++)
        tr += psi[2 * (c * C + c)];
    const double sref = sqrt(tr / C);
    double e = 0;
    for (int i = 0; i < C; i++)
        for (int j = 0; j < C; j++) {
            double complex v = 0;
            for (int k = 0; k < C; k++)
                v += (w[2 * (i * C + k)] + I * w[2 * (i * C + k) + 1]) * L[k][j];
            e = fmax(e, cabs(v - (i == j ? sref : 0)) / sref);
        }
    CHECK_LE("W L - sigma_ref I (relative)", e, 1e-12);
}

/* mr_prewhiten_apply vs a float64 product on random data */
static void check_apply(const double w[2 * C * C], uint64_t *rng)
{
    const int64_t M = 777;
    float *x = malloc((size_t)(C * M) * 2 * sizeof *x);
    double *ref = malloc((size_t)(C * M) * 2 * sizeof *ref);
    for (int64_t i = 0; i < 2 * C * M; i++)
        x[i] = (float)test_normal(rng);
    for (int64_t m = 0; m < M; m++)
        for (int i = 0; i < C; i++) {
            double complex v = 0;
            for (int j = 0; j < C; j++)
                v += (w[2 * (i * C + j)] + I * w[2 * (i * C + j) + 1]) * (x[2 * (j * M + m)] + I * x[2 * (j * M + m) + 1]);
            ref[2 * (i * M + m)] = creal(v);
            ref[2 * (i * M + m) + 1] = cimag(v);
        }
    mr_prewhiten_apply(w, C, x, M);
    CHECK_LE("mr_prewhiten_apply vs float64, relative L2", test_rel_l2(x, ref, 2 * C * M), 1e-6);
    free(x);
    free(ref);
}

/* the whitened noise of new samples: covariance sigma_ref^2 I */
static void check_whitened_noise(const double A[C][C], const double psi[2 * C * C], const double w[2 * C * C],
                                 float *noise, int64_t S, uint64_t *rng)
{
    fill_noise(noise, S, A, rng);
    mr_prewhiten_apply(w, C, noise, S);
    double wpsi[2 * C * C] = {0};
    mr_noise_cov_accumulate(wpsi, C, noise, S);
    double tr = 0, off = 0, diag = 0;
    for (int c = 0; c < C; c++)
        tr += psi[2 * (c * C + c)];
    const double s2 = tr / C;
    for (int i = 0; i < C; i++)
        for (int j = 0; j < C; j++) {
            double v = hypot(wpsi[2 * (i * C + j)], wpsi[2 * (i * C + j) + 1]) / (double)S;
            if (i == j)
                diag = fmax(diag, fabs(v - s2) / s2);
            else
                off = fmax(off, v / s2);
        }
    CHECK_LE("whitened noise: diagonal vs sigma_ref^2 (relative)", diag, 0.05);
    CHECK_LE("whitened noise: largest off-diagonal / sigma_ref^2", off, 0.05);
    printf("correlation before %.3f, after %.3f\n", mr_noise_max_correlation(psi, C), off);
}

/* s^H Psi^-1 s by solving Psi y = s with Gauss-Jordan on a copy */
static double complex inverse_quadratic_form(double complex Psi[C][C], const double complex s[C])
{
    double complex P[C][C + 1];
    for (int i = 0; i < C; i++) {
        for (int j = 0; j < C; j++)
            P[i][j] = Psi[i][j];
        P[i][C] = s[i];
    }
    for (int k = 0; k < C; k++)
        for (int i = 0; i < C; i++) {
            if (i == k)
                continue;
            double complex f = P[i][k] / P[k][k];
            for (int j = k; j <= C; j++)
                P[i][j] -= f * P[k][j];
        }
    double complex q = 0;
    for (int i = 0; i < C; i++)
        q += conj(s[i]) * P[i][C] / P[i][i];
    return q;
}

/* SNR of the matched-filter combination, measured, with and without prewhitening */
static void check_snr(const double A[C][C], double complex Psi[C][C], const double complex s[C],
                      const double w[2 * C * C], uint64_t *rng)
{
    const int64_t M = 40000;
    const double a = 2.0; /* signal amplitude: per-sample SNR ~ 1, so the mean is known to ~0.5% */
    float *x = malloc((size_t)(C * M) * 2 * sizeof *x);
    double complex n[C];
    for (int64_t m = 0; m < M; m++) {
        draw_noise(n, A, rng);
        for (int c = 0; c < C; c++) {
            double complex v = a * s[c] + n[c];
            x[2 * (c * M + m)] = (float)creal(v);
            x[2 * (c * M + m) + 1] = (float)cimag(v);
        }
    }
    const double snr_plain = combined_snr(x, s, M);
    /* whitened data and whitened sensitivities */
    float sw[2 * C];
    for (int c = 0; c < C; c++) {
        sw[2 * c] = (float)creal(s[c]);
        sw[2 * c + 1] = (float)cimag(s[c]);
    }
    mr_prewhiten_apply(w, C, sw, 1);
    mr_prewhiten_apply(w, C, x, M);
    double complex s2[C];
    for (int c = 0; c < C; c++)
        s2[c] = sw[2 * c] + I * sw[2 * c + 1];
    const double snr_white = combined_snr(x, s2, M);
    /* theory: plain |s^H s|^2 / (s^H Psi s); optimum a^2 s^H Psi^-1 s (via the true Psi) */
    double complex ss = 0, sps = 0;
    for (int i = 0; i < C; i++) {
        ss += conj(s[i]) * s[i];
        for (int j = 0; j < C; j++)
            sps += conj(s[i]) * Psi[i][j] * s[j];
    }
    const double theory_plain = a * creal(ss) / sqrt(creal(sps));
    const double theory_opt = a * sqrt(creal(inverse_quadratic_form(Psi, s)));
    printf("SNR of the combination: without prewhitening %.4f (theory %.4f), with %.4f (optimum %.4f)\n", snr_plain,
           theory_plain, snr_white, theory_opt);
    CHECK_LE("SNR without prewhitening vs its theory (relative)", fabs(snr_plain - theory_plain) / theory_plain, 0.03);
    CHECK_LE("SNR with prewhitening vs the optimum (relative)", fabs(snr_white - theory_opt) / theory_opt, 0.03);
    CHECK_GE("SNR gain of prewhitening (with / without)", snr_white / snr_plain, 1.1);
    free(x);
}

/* one coil: W = 1 exactly; a duplicated channel is refused */
static void check_one_coil_and_singular(void)
{
    double p1[2] = {3.7, 0}, w1[2];
    CHECK_OK(mr_prewhiten_matrix(p1, 1, w1));
    CHECK(w1[0] == 1.0 && w1[1] == 0.0);
    double p2[8] = {1, 0, 1, 0, 1, 0, 1, 0}, w2[8];
    CHECK(mr_prewhiten_matrix(p2, 2, w2) == MR_EINVAL);
    printf("ok: singular covariance refused: %s\n", mr_last_error());
}

int main(void)
{
    uint64_t rng = test_seed();
    double A[C][C] = {{0}};
    const double rho = 0.85;
    for (int i = 0; i < C; i++)
        for (int j = 0; j <= i; j++)
            A[i][j] = (0.5 + 0.3 * i) * pow(rho, (double)(i - j));
    double complex s[C]; /* sensitivities of one voxel */
    for (int c = 0; c < C; c++)
        s[c] = (0.4 + 0.15 * c) * cexp(I * 0.9 * c);

    /* the true covariance Psi = 2 A A^T (complex noise, unit variance per part) */
    double complex Psi[C][C];
    for (int i = 0; i < C; i++)
        for (int j = 0; j < C; j++) {
            Psi[i][j] = 0;
            for (int k = 0; k < C; k++)
                Psi[i][j] += 2 * A[i][k] * A[j][k];
        }

    const int64_t S = 40000;
    float *noise = malloc((size_t)(C * S) * 2 * sizeof *noise);
    double psi[2 * C * C] = {0}, w[2 * C * C];
    estimate_whitener(A, Psi, noise, S, &rng, psi, w);
    check_whitener_cholesky(psi, w);
    check_apply(w, &rng);
    check_whitened_noise(A, psi, w, noise, S, &rng);
    check_snr(A, Psi, s, w, &rng);
    check_one_coil_and_singular();
    free(noise);
    return test_finish("test_prewhiten");
}
