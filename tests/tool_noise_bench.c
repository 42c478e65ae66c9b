/* tool_noise_bench [--snr LIST] [--seeds S] [--no-residual] SCAN...: the candidate estimators of the
 * noise level sigma (docs/RECON.md, "Noise level from the data") on noiseless scans (any input format:
 * mrirecon HDF5, ISMRMRD, BART) with complex Gaussian noise added at each SNR of LIST (dB, comma
 * separated; "inf" = none; default inf,10,20,30,40,50), S seeds each (default 1; seed s + 1 for the
 * noise, mr_noise_add). The SNR is that of `mrirecon phantom --snr`: 10 log10(mean |d|^2 / (2 sigma^2))
 * over all coils. Candidates, each printed as estimate / true sigma (for the noiseless rows as
 * estimate / rms(data)):
 *   outer     1.4826 median |Re d|, |Im d| of the samples with |k|/k_max >= 0.9 (per axis k / (N/2))
 *   diff2     the same of (d_{j-1} - 2 d_j + d_{j+1}) / sqrt(6) over consecutive readout samples
 *             (both neighbours closer than 1 cycle/FOV)
 *   residual  1.4826 median of the parts of d - E x / sqrt((M - N)/M), x = 10 iterations of CG on
 *             E^H E x = E^H d (every coil, the exact NUDFT, Dirac basis; M <= N: n/a)
 *   subspace  solver/noise_est.h (the library's), with its standard error and time
 * One line per (scan, SNR, seed). Not a test: for the tables of docs/RECON.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "io/input.h"
#include "phantoms/noise.h"
#include "solver/backend.h"
#include "solver/cg.h"
#include "solver/linop.h"
#include "solver/noise_est.h"

#define MAD_TO_SIGMA 1.482602218505602

static int cmp_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* 1.4826 median of |v| over n values (sorted in place) */
static double mad_sigma(float *v, int64_t n)
{
    if (n < 1)
        return NAN;
    for (int64_t i = 0; i < n; i++)
        v[i] = fabsf(v[i]);
    qsort(v, (size_t)n, sizeof *v, cmp_float);
    return MAD_TO_SIGMA * (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

static double est_outer(const mr_kspace *ks, const float *d)
{
    const int64_t m = ks->nsamples;
    double rmax = 0;
    double *r = malloc((size_t)m * sizeof *r);
    for (int64_t i = 0; i < m; i++) {
        double s = 0;
        for (int a = 0; a < 3; a++)
            if (ks->matrix[a] > 1) {
                const double u = ks->traj[3 * i + a] / (0.5 * (double)ks->matrix[a]);
                s += u * u;
            }
        r[i] = sqrt(s);
        rmax = fmax(rmax, r[i]);
    }
    float *v = malloc((size_t)(2 * m * ks->ncoils) * sizeof *v);
    int64_t n = 0;
    for (int64_t c = 0; c < ks->ncoils; c++)
        for (int64_t i = 0; i < m; i++)
            if (r[i] >= 0.9 * rmax) {
                v[n++] = d[2 * (c * m + i)];
                v[n++] = d[2 * (c * m + i) + 1];
            }
    const double s = mad_sigma(v, n);
    free(r);
    free(v);
    return s;
}

static double dist(const float *t, int64_t i, int64_t j)
{
    double s = 0;
    for (int a = 0; a < 3; a++)
        s += ((double)t[3 * i + a] - t[3 * j + a]) * ((double)t[3 * i + a] - t[3 * j + a]);
    return sqrt(s);
}

static double est_diff2(const mr_kspace *ks, const float *d)
{
    const int64_t m = ks->nsamples;
    float *v = malloc((size_t)(2 * m * ks->ncoils) * sizeof *v);
    int64_t n = 0;
    for (int64_t c = 0; c < ks->ncoils; c++)
        for (int64_t j = 1; j + 1 < m; j++) {
            if (dist(ks->traj, j - 1, j) >= 1 || dist(ks->traj, j, j + 1) >= 1)
                continue;
            for (int p = 0; p < 2; p++)
                v[n++] = (float)((d[2 * (c * m + j - 1) + p] - 2.0 * d[2 * (c * m + j) + p] + d[2 * (c * m + j + 1) + p]) /
                                 sqrt(6.0));
        }
    const double s = n ? mad_sigma(v, n) : NAN;
    free(v);
    return s;
}

static double est_residual(const mr_kspace *ks, const float *d)
{
    const int64_t N = mr_kspace_voxels(ks), m = ks->nsamples, C = ks->ncoils;
    if (m <= N)
        return NAN;
    mr_backend *be = NULL;
    mr_linop *e = NULL, *sys = NULL;
    const mr_device_sel cpu = {.kind = MR_DEVICE_CPU, .index = -1};
    float *b = malloc((size_t)(2 * N * C) * sizeof *b), *x = calloc((size_t)(2 * N * C), sizeof *x),
          *r = malloc((size_t)(2 * m * C) * sizeof *r);
    double s = NAN;
    mr_nudft_opts no;
    mr_nudft_opts_default(&no);
    no.basis = MR_BASIS_DIRAC;
    if (mr_backend_create(&be, cpu, 0) == MR_OK &&
        mr_linop_nudft_create(&e, be, ks->matrix, ks->traj, m, NULL, C, &no, NULL) == MR_OK &&
        mr_linop_normal_of(&sys, e) == MR_OK && mr_linop_adjoint(e, d, b) == MR_OK) {
        mr_cg_opts co;
        mr_cg_opts_default(&co);
        co.iters = 10;
        mr_cg_result res;
        memset(&res, 0, sizeof res);
        if (mr_cg_solve_linop(sys, b, x, &co, &res) == MR_OK && mr_linop_forward(e, x, r) == MR_OK) {
            for (int64_t i = 0; i < 2 * m * C; i++)
                r[i] = d[i] - r[i];
            s = mad_sigma(r, 2 * m * C) / sqrt((double)(m - N) / (double)m);
        }
        mr_cg_result_free(&res);
    } else {
        fprintf(stderr, "tool_noise_bench: residual: %s\n", mr_last_error());
    }
    mr_linop_free(sys);
    mr_linop_free(e);
    mr_backend_free(be);
    free(b);
    free(x);
    free(r);
    return s;
}

int main(int argc, char **argv)
{
    const char *snrs = "inf,10,20,30,40,50";
    int seeds = 1, residual = 1, first = 1;
    mr_noise_est_opts no;
    mr_noise_est_opts_default(&no);
    for (; first < argc && argv[first][0] == '-'; first++) {
        if (!strcmp(argv[first], "--snr") && first + 1 < argc)
            snrs = argv[++first];
        else if (!strcmp(argv[first], "--seeds") && first + 1 < argc)
            seeds = atoi(argv[++first]);
        else if (!strcmp(argv[first], "--eps") && first + 1 < argc)
            no.eps = atof(argv[++first]);
        else if (!strcmp(argv[first], "--groups") && first + 1 < argc)
            no.max_groups = atoi(argv[++first]);
        else if (!strcmp(argv[first], "--segment") && first + 1 < argc)
            no.segment = atoi(argv[++first]);
        else if (!strcmp(argv[first], "--no-residual"))
            residual = 0;
        else {
            fprintf(stderr, "usage: tool_noise_bench [--snr LIST] [--seeds S] [--no-residual] [--eps E] [--groups G] [--segment L] SCAN...\n");
            return 2;
        }
    }
    mr_log_set_level(MR_LOG_WARN);
    printf("%-28s %5s %4s %10s | %8s %8s %8s %8s %8s %8s\n", "scan", "snr", "seed", "sigma", "outer", "diff2",
           "residual", "subspace", "se/sig", "sec");
    for (int f = first; f < argc; f++) {
        mr_kspace *ks = NULL;
        if (mr_input_read_path(argv[f], NULL, 0, &ks) != MR_OK) {
            fprintf(stderr, "tool_noise_bench: %s\n", mr_last_error());
            return 2;
        }
        const int64_t nd = ks->nsamples * ks->ncoils;
        float *d = malloc((size_t)(2 * nd) * sizeof *d);
        double p = 0;
        for (int64_t i = 0; i < 2 * nd; i++)
            p += (double)ks->data[i] * ks->data[i];
        const double rms = sqrt(p / (double)nd);
        const char *name = strrchr(argv[f], '/') ? strrchr(argv[f], '/') + 1 : argv[f];
        char list[256];
        snprintf(list, sizeof list, "%s", snrs);
        for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
            const double snr = strcmp(tok, "inf") ? atof(tok) : INFINITY;
            for (int s = 0; s < (isfinite(snr) ? seeds : 1); s++) {
                memcpy(d, ks->data, (size_t)(2 * nd) * sizeof *d);
                double sigma = 0;
                if (isfinite(snr)) {
                    mr_noise_sigma(d, nd, snr, &sigma);
                    mr_noise_add(d, nd, sigma, (uint64_t)s + 1);
                }
                const double ref = sigma > 0 ? sigma : rms;
                mr_noise_est_result r;
                const double t0 = mr_now();
                mr_status st = mr_noise_estimate(ks->matrix, ks->traj, ks->nsamples, d, ks->ncoils, &no, &r);
                const double t1 = mr_now() - t0;
                const double sub = st == MR_OK ? r.sigma : NAN, se = st == MR_OK ? r.sigma_se : NAN;
                if (st != MR_OK)
                    fprintf(stderr, "tool_noise_bench: %s: %s\n", name, mr_last_error());
                printf("%-28s %5s %4d %10.4g | %8.4f %8.4f %8.4f %8.4f %8.4f %8.3f\n", name, tok, s + 1, sigma,
                       est_outer(ks, d) / ref, est_diff2(ks, d) / ref, residual ? est_residual(ks, d) / ref : NAN,
                       sub / ref, se / ref, t1);
                fflush(stdout);
                if (st == MR_OK)
                    mr_noise_est_result_free(&r);
            }
        }
        free(d);
        mr_kspace_free(ks);
    }
    return 0;
}
