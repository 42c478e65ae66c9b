/* Cholesky and prewhitening (see prewhiten.h). All arithmetic in double. */
#include "prewhiten.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RE(a, i, j, n) (a)[2 * ((i) * (n) + (j))]
#define IM(a, i, j, n) (a)[2 * ((i) * (n) + (j)) + 1]

mr_status mr_prewhiten_matrix(const double *psi, int64_t C, double *w)
{
    if (C < 1)
        return mr_error(MR_EINVAL, "prewhitening: %lld coils", (long long)C);
    double trace = 0, dmax = 0;
    for (int64_t i = 0; i < C; i++) {
        for (int64_t j = 0; j < C; j++)
            if (!isfinite(RE(psi, i, j, C)) || !isfinite(IM(psi, i, j, C)))
                return mr_error(MR_EINVAL, "noise covariance [%lld][%lld] is not finite", (long long)i, (long long)j);
        trace += RE(psi, i, i, C);
        dmax = RE(psi, i, i, C) > dmax ? RE(psi, i, i, C) : dmax;
    }
    if (!(dmax > 0))
        return mr_error(MR_EINVAL, "noise covariance is zero: the noise scan holds no noise");
    double *L = calloc((size_t)(C * C) * 2, sizeof(double));
    if (!L)
        return mr_error(MR_ENOMEM, "prewhitening: out of memory for %lld coils", (long long)C);
    /* Cholesky: Psi = L L^H */
    for (int64_t j = 0; j < C; j++) {
        double d = RE(psi, j, j, C);
        for (int64_t k = 0; k < j; k++)
            d -= RE(L, j, k, C) * RE(L, j, k, C) + IM(L, j, k, C) * IM(L, j, k, C);
        if (!(d > 1e-12 * dmax)) {
            free(L);
            return mr_error(MR_EINVAL,
                            "noise covariance is not positive definite at coil %lld (pivot %g of max %g): a dead, "
                            "saturated or duplicated channel?",
                            (long long)j, d, dmax);
        }
        double ljj = sqrt(d);
        RE(L, j, j, C) = ljj;
        for (int64_t i = j + 1; i < C; i++) {
            double re = RE(psi, i, j, C), im = IM(psi, i, j, C);
            for (int64_t k = 0; k < j; k++) {
                /* L_ik conj(L_jk) */
                re -= RE(L, i, k, C) * RE(L, j, k, C) + IM(L, i, k, C) * IM(L, j, k, C);
                im -= IM(L, i, k, C) * RE(L, j, k, C) - RE(L, i, k, C) * IM(L, j, k, C);
            }
            RE(L, i, j, C) = re / ljj;
            IM(L, i, j, C) = im / ljj;
        }
    }
    /* W = sigma_ref L^{-1}: forward substitution, one column of the identity at a time */
    const double sref = sqrt(trace / (double)C);
    memset(w, 0, (size_t)(C * C) * 2 * sizeof(double));
    for (int64_t col = 0; col < C; col++) {
        for (int64_t i = col; i < C; i++) {
            double re = i == col ? 1.0 : 0.0, im = 0;
            for (int64_t k = col; k < i; k++) {
                /* L_ik X_kcol */
                re -= RE(L, i, k, C) * RE(w, k, col, C) - IM(L, i, k, C) * IM(w, k, col, C);
                im -= RE(L, i, k, C) * IM(w, k, col, C) + IM(L, i, k, C) * RE(w, k, col, C);
            }
            RE(w, i, col, C) = re / RE(L, i, i, C);
            IM(w, i, col, C) = im / RE(L, i, i, C);
        }
    }
    for (int64_t i = 0; i < 2 * C * C; i++)
        w[i] *= sref;
    free(L);
    return MR_OK;
}

void mr_prewhiten_apply(const double *w, int64_t C, float *data, int64_t M)
{
#pragma omp parallel for schedule(static)
    for (int64_t m = 0; m < M; m++) {
        /* rows from the last: row c reads coils j <= c, which are still unmodified */
        for (int64_t c = C - 1; c >= 0; c--) {
            double re = 0, im = 0;
            for (int64_t j = 0; j <= c; j++) {
                const double xr = data[2 * (j * M + m)], xi = data[2 * (j * M + m) + 1];
                re += RE(w, c, j, C) * xr - IM(w, c, j, C) * xi;
                im += RE(w, c, j, C) * xi + IM(w, c, j, C) * xr;
            }
            data[2 * (c * M + m)] = (float)re;
            data[2 * (c * M + m) + 1] = (float)im;
        }
    }
}
