/* Coil noise covariance (see noise_cov.h). */
#include "noise_cov.h"

#include <math.h>

#define RE(a, i, j, n) (a)[2 * ((i) * (n) + (j))]
#define IM(a, i, j, n) (a)[2 * ((i) * (n) + (j)) + 1]

void mr_noise_cov_accumulate(double *psi_sum, int64_t C, const float *noise, int64_t S)
{
    for (int64_t i = 0; i < C; i++) {
        const float *ni = noise + 2 * i * S;
        for (int64_t j = 0; j <= i; j++) {
            const float *nj = noise + 2 * j * S;
            double re = 0, im = 0;
            for (int64_t s = 0; s < S; s++) {
                /* n_i conj(n_j) */
                re += (double)ni[2 * s] * nj[2 * s] + (double)ni[2 * s + 1] * nj[2 * s + 1];
                im += (double)ni[2 * s + 1] * nj[2 * s] - (double)ni[2 * s] * nj[2 * s + 1];
            }
            RE(psi_sum, i, j, C) += re;
            IM(psi_sum, i, j, C) += im;
            if (j != i) {
                RE(psi_sum, j, i, C) += re;
                IM(psi_sum, j, i, C) -= im;
            }
        }
    }
}

double mr_noise_max_correlation(const double *psi, int64_t C)
{
    double worst = 0;
    for (int64_t i = 0; i < C; i++)
        for (int64_t j = 0; j < C; j++) {
            if (i == j)
                continue;
            double d = sqrt(RE(psi, i, i, C) * RE(psi, j, j, C));
            double r = d > 0 ? hypot(RE(psi, i, j, C), IM(psi, i, j, C)) / d : 0;
            worst = r > worst ? r : worst;
        }
    return worst;
}
