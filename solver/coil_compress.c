/* Coil compression by the SVD of the data (see coil_compress.h). */
#include "coil_compress.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "../base/grid.h"
#include "cplx_inline.h"
#include "herm_eig.h"

void mr_coil_compress_free(mr_coil_compress *cc)
{
    if (!cc)
        return;
    free(cc->u);
    free(cc->energy);
    cc->u = cc->energy = NULL;
}

mr_status mr_coil_compress_plan(const float *data, int64_t m, int64_t C, int64_t k, double keep, int threads,
                                mr_coil_compress *out)
{
    if (!data || !out || m < 1 || C < 1 || C > MR_MAX_COILS || k < 0 || k > C || (k == 0 && !(keep > 0 && keep <= 1)))
        return mr_error(MR_EINVAL, "coil compression: %lld coils to %lld (keep %g), %lld samples", (long long)C,
                        (long long)k, keep, (long long)m);
    memset(out, 0, sizeof *out);
    for (int64_t i = 0; i < 2 * m * C; i++)
        if (!isfinite(data[i]))
            return mr_error(MR_EINVAL, "coil compression: sample %lld of coil %lld is not finite", (long long)(i / 2 % m),
                            (long long)(i / 2 / m));
    const int nt = threads > 0 ? threads : omp_get_max_threads();
    mr_cplx *R = calloc((size_t)(C * C), sizeof *R), *V = malloc((size_t)(C * C) * sizeof *V);
    double *w = malloc((size_t)C * sizeof *w);
    mr_status st = MR_OK;
    if (!R || !V || !w) {
        st = mr_error(MR_ENOMEM, "coil compression: out of memory for %lld coils", (long long)C);
        goto done;
    }
    /* R[i][j] = sum_m d_i,m conj(d_j,m): per thread over a fixed split of the samples, summed in order,
     * so the result does not depend on the scheduling */
    const int64_t chunks = 64;
    mr_cplx *part = calloc((size_t)(chunks * C * C), sizeof *part);
    if (!part) {
        st = mr_error(MR_ENOMEM, "coil compression: out of memory for %lld coils", (long long)C);
        goto done;
    }
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
    for (int64_t ch = 0; ch < chunks; ch++) {
        const int64_t a = m * ch / chunks, b = m * (ch + 1) / chunks;
        mr_cplx *p = part + ch * C * C;
        for (int64_t i = 0; i < C; i++)
            for (int64_t j = 0; j <= i; j++) {
                const float *di = data + 2 * i * m, *dj = data + 2 * j * m;
                double sr = 0, si = 0;
                for (int64_t s = a; s < b; s++) {
                    sr += (double)di[2 * s] * dj[2 * s] + (double)di[2 * s + 1] * dj[2 * s + 1];
                    si += (double)di[2 * s + 1] * dj[2 * s] - (double)di[2 * s] * dj[2 * s + 1];
                }
                p[i * C + j] = CMPLX(sr, si);
            }
    }
    for (int64_t ch = 0; ch < chunks; ch++)
        for (int64_t i = 0; i < C; i++)
            for (int64_t j = 0; j <= i; j++)
                R[i * C + j] += part[ch * C * C + i * C + j];
    free(part);
    for (int64_t i = 0; i < C; i++)
        for (int64_t j = 0; j < i; j++)
            R[j * C + i] = conj(R[i * C + j]);
    if ((st = mr_herm_eig(C, (double *)R, w, (double *)V, C, 1)) != MR_OK)
        goto done;
    double total = 0;
    for (int64_t i = 0; i < C; i++)
        total += fmax(w[i], 0.0);
    if (!(total > 0)) {
        st = mr_error(MR_EINVAL, "coil compression: the data are all zero");
        goto done;
    }
    if (k == 0) { /* the fewest virtual coils that keep `keep` of the energy */
        double acc = 0;
        while (k < C && acc < keep * total * (1 - 1e-12))
            acc += fmax(w[C - 1 - k++], 0.0);
    }
    out->u = malloc((size_t)(C * k) * 2 * sizeof *out->u);
    out->energy = malloc((size_t)C * sizeof *out->energy);
    if (!out->u || !out->energy) {
        mr_coil_compress_free(out);
        st = mr_error(MR_ENOMEM, "coil compression: out of memory");
        goto done;
    }
    double kept = 0;
    for (int64_t i = 0; i < C; i++)
        out->energy[i] = fmax(w[C - 1 - i], 0.0);
    for (int64_t j = 0; j < k; j++) {
        /* eigenvector of the j-th largest eigenvalue: row C - 1 - j of V; its phase is fixed so that its
         * largest component is real positive (the virtual coils are then reproducible) */
        const mr_cplx *v = V + (C - 1 - j) * C;
        int64_t big = 0;
        for (int64_t c = 1; c < C; c++)
            big = mr_cabs2(v[c]) > mr_cabs2(v[big]) ? c : big;
        const mr_cplx ph = cabs(v[big]) > 0 ? conj(v[big]) / cabs(v[big]) : 1;
        for (int64_t c = 0; c < C; c++) {
            const mr_cplx u = mr_cmul(v[c], ph);
            out->u[2 * (c * k + j)] = creal(u);
            out->u[2 * (c * k + j) + 1] = cimag(u);
        }
        kept += out->energy[j];
    }
    out->ncoils = C;
    out->nvirtual = k;
    out->retained = kept / total;
done:
    free(R);
    free(V);
    free(w);
    return st;
}

mr_status mr_coil_compress_apply(const mr_coil_compress *cc, const float *in, int64_t n, float *out, int threads)
{
    if (!cc || !cc->u || !in || !out || n < 1)
        return mr_error(MR_EINVAL, "coil compression: nothing to apply (%lld values)", (long long)n);
    const int64_t C = cc->ncoils, K = cc->nvirtual;
    const int nt = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < K; k++) {
            double sr = 0, si = 0;
            for (int64_t c = 0; c < C; c++) { /* conj(u) x */
                const double ur = cc->u[2 * (c * K + k)], ui = cc->u[2 * (c * K + k) + 1];
                const double xr = in[2 * (c * n + i)], xi = in[2 * (c * n + i) + 1];
                sr += ur * xr + ui * xi;
                si += ur * xi - ui * xr;
            }
            out[2 * (k * n + i)] = (float)sr;
            out[2 * (k * n + i) + 1] = (float)si;
        }
    return MR_OK;
}
