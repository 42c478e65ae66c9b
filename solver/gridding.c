/* Gridding reconstructions (see gridding.h and docs/GRIDDING.md).
 *
 * With u = k G/N (grid units) on a periodic grid of G points per axis and a kernel c of unit
 * integral, the gridded values g_j = sum_m a_m c(u_m - j) and their inverse DFT at r = p/N,
 *   sum_j g_j e^{+i 2 pi j p / G} ~= C(p/G) sum_m a_m e^{+i 2 pi k_m r}   (Poisson summation),
 * where C is the kernel's Fourier transform. So the image of voxel n (p = n - N/2) is FFTW's
 * backward (unnormalised, e^{+i}) transform at index p mod G, divided by C(p/G): by the
 * Kaiser-Bessel transform for MR_GRIDDING_KB, and by nothing for the bilinear baseline (its
 * triangle kernel leaves the sinc^2(p/N) roll-off in the image: the baseline's known weakness).
 * The aliases of C at p/G + l (l != 0) are the approximation error. */
#include "gridding.h"

#include "fft.h"

#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/grid.h"
#include "../base/log.h"
#include "kb.h"

struct mr_gridding {
    int64_t matrix[3];
    int64_t grid[3];
    mr_kb_plan *plan;
    int64_t m;
    int threads;
    float *vals;   /* [M][2] density-weighted samples */
    float *gbuf;   /* [G][2] grid, FFT in place */
    float *deapod[3]; /* [N_a] 1 / C(p/G) per axis */
    fftwf_plan fft;
};

void mr_gridding_opts_default(mr_gridding_opts *o)
{
    o->kind = MR_GRIDDING_KB;
    o->oversample = 2.0;
    o->width = 6;
    o->threads = 0;
}

static fftwf_plan plan_fft(int64_t nz, int64_t ny, int64_t nx, float *buf, int threads)
{
    int dims[3] = {(int)nz, (int)ny, (int)nx};
    return mr_fft_plan_dft(3, dims, (fftwf_complex *)buf, FFTW_BACKWARD, threads);
}

mr_status mr_gridding_create(mr_gridding **out, const int64_t matrix[3], const float *traj, int64_t m,
                             const mr_gridding_opts *opts)
{
    *out = NULL;
    mr_gridding_opts def;
    if (!opts) {
        mr_gridding_opts_default(&def);
        opts = &def;
    }
    mr_status st = mr_matrix_check(matrix, "gridding");
    if (st != MR_OK)
        return st;
    int kb = opts->kind == MR_GRIDDING_KB;
    if (opts->kind != MR_GRIDDING_KB && opts->kind != MR_GRIDDING_BILINEAR)
        return mr_error(MR_EINVAL, "gridding: unknown kind %d", (int)opts->kind);
    if (kb && (opts->width < 4 || opts->width > 8))
        return mr_error(MR_EINVAL, "gridding: Kaiser-Bessel kernel width %d is outside 4..8", opts->width);
    if (kb && !(opts->oversample >= 1.125 && opts->oversample <= 4.0))
        return mr_error(MR_EINVAL, "gridding: oversampling factor %g is outside 1.125..4", opts->oversample);

    mr_gridding *g = calloc(1, sizeof *g);
    if (!g)
        return mr_error(MR_ENOMEM, "gridding: out of memory");
    g->m = m;
    g->threads = mr_kb_threads(opts->threads);
    double scale[3], sigma_eff = 1.0;
    for (int a = 0; a < 3; a++) {
        g->matrix[a] = matrix[a];
        /* an axis of one voxel (z of a 2D scan) stays one plane: no spreading, no transform */
        g->grid[a] = kb && matrix[a] > 1 ? mr_kb_fft_size((int64_t)ceil(opts->oversample * (double)matrix[a] - 1e-9))
                                         : matrix[a];
        scale[a] = (double)g->grid[a] / (double)matrix[a];
        if (matrix[a] > 1 && scale[a] > sigma_eff)
            sigma_eff = scale[a];
    }
    /* beta from the nominal factor: the grid is at least that fine on every axis */
    double beta = kb ? mr_kb_beta(opts->width, opts->oversample) : 0.0;
    st = mr_kb_plan_create(&g->plan, g->grid, scale, kb ? MR_KB_KAISER : MR_KB_TRIANGLE, kb ? opts->width : 2, beta,
                           traj, m, g->threads);
    if (st != MR_OK) {
        mr_gridding_destroy(g);
        return st;
    }
    int64_t gsize = g->grid[0] * g->grid[1] * g->grid[2];
    g->vals = malloc((size_t)m * 2 * sizeof *g->vals);
    g->gbuf = fftwf_malloc((size_t)gsize * 2 * sizeof *g->gbuf);
    for (int a = 0; a < 3; a++)
        g->deapod[a] = malloc((size_t)matrix[a] * sizeof *g->deapod[a]);
    if (!g->vals || !g->gbuf || !g->deapod[0] || !g->deapod[1] || !g->deapod[2]) {
        st = mr_error(MR_ENOMEM, "gridding: out of memory for a %lldx%lldx%lld grid", (long long)g->grid[0],
                      (long long)g->grid[1], (long long)g->grid[2]);
        mr_gridding_destroy(g);
        return st;
    }
    for (int a = 0; a < 3; a++)
        for (int64_t i = 0; i < matrix[a]; i++) {
            double x = (double)(i - matrix[a] / 2) / (double)g->grid[a];
            g->deapod[a][i] = kb && matrix[a] > 1 ? (float)(1.0 / mr_kb_ft(x, opts->width, beta)) : 1.0f;
        }
    g->fft = plan_fft(g->grid[2], g->grid[1], g->grid[0], g->gbuf, g->threads);
    if (!g->fft) {
        st = mr_error(MR_EFFT, "gridding: FFTW could not plan a %lldx%lldx%lld transform", (long long)g->grid[0],
                      (long long)g->grid[1], (long long)g->grid[2]);
        mr_gridding_destroy(g);
        return st;
    }
    mr_log(MR_LOG_DEBUG, "gridding: %s, matrix %lldx%lldx%lld, grid %lldx%lldx%lld, sigma %.3g, %d threads",
           kb ? "Kaiser-Bessel" : "bilinear", (long long)matrix[0], (long long)matrix[1], (long long)matrix[2],
           (long long)g->grid[0], (long long)g->grid[1], (long long)g->grid[2], sigma_eff, g->threads);
    *out = g;
    return MR_OK;
}

mr_status mr_gridding_apply(mr_gridding *g, const float *data, const float *w, float *img)
{
    if (!g || !data || !img)
        return mr_error(MR_EINVAL, "gridding: NULL argument");
    const int64_t m = g->m;
#pragma omp parallel for num_threads(g->threads) schedule(static)
    for (int64_t i = 0; i < m; i++) {
        float wi = w ? w[i] : 1.0f;
        g->vals[2 * i] = wi * data[2 * i];
        g->vals[2 * i + 1] = wi * data[2 * i + 1];
    }
    mr_kb_spread(g->plan, g->vals, 2, g->gbuf);
    fftwf_execute(g->fft);

    const int64_t nx = g->matrix[0], ny = g->matrix[1], nz = g->matrix[2];
    const int64_t gx = g->grid[0], gy = g->grid[1], gz = g->grid[2];
    const float *dx = g->deapod[0], *dy = g->deapod[1], *dz = g->deapod[2];
    const float *buf = g->gbuf;
#pragma omp parallel for num_threads(g->threads) schedule(static)
    for (int64_t zy = 0; zy < nz * ny; zy++) {
        int64_t iz = zy / ny, iy = zy % ny;
        int64_t qz = (iz - nz / 2 + gz) % gz, qy = (iy - ny / 2 + gy) % gy;
        float dzy = dz[iz] * dy[iy];
        const float *src = buf + 2 * (qz * gy + qy) * gx;
        float *dst = img + 2 * zy * nx;
        for (int64_t ix = 0; ix < nx; ix++) {
            int64_t qx = (ix - nx / 2 + gx) % gx;
            float s = dzy * dx[ix];
            dst[2 * ix] = s * src[2 * qx];
            dst[2 * ix + 1] = s * src[2 * qx + 1];
        }
    }
    return MR_OK;
}

void mr_gridding_destroy(mr_gridding *g)
{
    if (!g)
        return;
    mr_fft_destroy(g->fft);
    mr_kb_plan_destroy(g->plan);
    free(g->vals);
    fftwf_free(g->gbuf);
    for (int a = 0; a < 3; a++)
        free(g->deapod[a]);
    free(g);
}
