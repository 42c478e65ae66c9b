/* The normal of the segmented field model on the host (solver/linop_field_internal.h):
 *
 *   y_c = sum_l conj(C_l) . crop IFFT( sum_l' H_{l l'} . FFT pad (C_l' . x_c) )
 *
 * on the 2N grid (2N_a per axis with N_a > 1), FFTW single precision, FFTW_ESTIMATE plans of the whole
 * grid (deterministic; solver/fft.h). Per coil: L forward transforms, L^2 spectrum products, L inverse
 * transforms. The spectra H come from field_tp_spectrum: Q arranged circulantly as in solver/toeplitz.h,
 * transformed, divided by P; a kernel used as its conjugate mirror conj(Q(-r)) has the spectrum conj(H). */
#include <stdlib.h>
#include <string.h>

#include "fft.h"
#include "linop_field_internal.h"

/* Below this many points of the 2N grid one application runs on one thread: splitting small transforms and
 * products adds barriers that cost more than they save on shared cores (solver/toeplitz.c measured the
 * same for the plain normal). */
#define FTP_SERIAL_POINTS (1 << 18)
#define FTP_BLOCK 128 /* points per block of the spectrum products (L x 1 KiB of accumulators) */

struct field_tp {
    int64_t n[3], p[3], nn, pp;
    int L, nk, threads;
    int *kidx, *kconj;   /* [L][L] */
    fftwf_complex *h;    /* [nk][P] */
    fftwf_complex *c;    /* [L][N] */
    fftwf_complex *x;    /* [L][P]: the transforms of C_l . x, then of the products */
    fftwf_plan fwd, inv; /* the L transforms of x, in place */
};

static void grid_p(const int64_t matrix[3], int64_t p[3], int64_t *pp)
{
    *pp = 1;
    for (int a = 0; a < 3; a++) {
        p[a] = matrix[a] > 1 ? 2 * matrix[a] : 1;
        *pp *= p[a];
    }
}

/* FFTW plan of `howmany` consecutive P grids (slowest axis first), in place on buf. NULL for 1-point grids. */
static fftwf_plan plan_p(const int64_t p[3], int howmany, fftwf_complex *buf, int sign, int threads)
{
    fftwf_iodim dims[3], many;
    int rank = 0;
    int64_t stride = p[0] * p[1];
    for (int a = 2; a >= 0; a--) {
        if (p[a] > 1) {
            dims[rank].n = (int)p[a];
            dims[rank].is = dims[rank].os = (int)stride;
            rank++;
        }
        stride /= a > 0 ? p[a - 1] : 1;
    }
    many.n = howmany;
    many.is = many.os = (int)(p[0] * p[1] * p[2]);
    return rank ? mr_fft_plan_guru(rank, dims, 1, &many, buf, buf, sign, threads) : NULL;
}

mr_status field_tp_spectrum(const int64_t matrix[3], const float *q, float *h, int threads)
{
    int64_t p[3], pp;
    grid_p(matrix, p, &pp);
    fftwf_complex *c = (fftwf_complex *)h;
#pragma omp parallel for schedule(static) num_threads(threads > 0 ? threads : 1)
    for (int64_t j = 0; j < pp; j++) {
        const int64_t jj[3] = {j % p[0], (j / p[0]) % p[1], j / (p[0] * p[1])};
        int64_t src[3];
        int unused = 0;
        for (int a = 0; a < 3; a++) { /* offset j (j < N) or j - 2N (j > N); N itself never enters the crop */
            if (p[a] == 1) {
                src[a] = 0;
                continue;
            }
            unused |= jj[a] == matrix[a];
            src[a] = jj[a] + matrix[a] < p[a] ? jj[a] + matrix[a] : jj[a] - matrix[a];
        }
        const float *s = q + 2 * ((src[2] * p[1] + src[1]) * p[0] + src[0]);
        c[j][0] = unused ? 0.0f : s[0];
        c[j][1] = unused ? 0.0f : s[1];
    }
    fftwf_plan f = plan_p(p, 1, c, FFTW_FORWARD, threads);
    if (pp > 1 && !f)
        return mr_error(MR_EFFT, "field normal: FFTW could not plan the %lldx%lldx%lld kernel transform", (long long)p[0],
                        (long long)p[1], (long long)p[2]);
    if (f)
        fftwf_execute(f);
    mr_fft_destroy(f);
    const float scale = (float)(1.0 / (double)pp);
    for (int64_t j = 0; j < 2 * pp; j++)
        h[j] *= scale;
    return MR_OK;
}

void field_tp_destroy(field_tp *t)
{
    if (!t)
        return;
    mr_fft_destroy(t->fwd);
    mr_fft_destroy(t->inv);
    fftwf_free(t->h);
    fftwf_free(t->c);
    fftwf_free(t->x);
    free(t->kidx);
    free(t->kconj);
    free(t);
}

mr_status field_tp_create(field_tp **out, const int64_t matrix[3], int L, int nk, const int *kidx, const int *kconj,
                          const float *const *h, const float *coef, int threads)
{
    *out = NULL;
    field_tp *t = calloc(1, sizeof *t);
    if (!t)
        return mr_error(MR_ENOMEM, "field normal: out of memory");
    memcpy(t->n, matrix, sizeof t->n);
    t->nn = matrix[0] * matrix[1] * matrix[2];
    grid_p(matrix, t->p, &t->pp);
    t->L = L;
    t->nk = nk;
    t->threads = threads > 0 && t->pp >= FTP_SERIAL_POINTS ? threads : 1;
    t->kidx = malloc((size_t)L * L * sizeof(int));
    t->kconj = malloc((size_t)L * L * sizeof(int));
    t->h = fftwf_alloc_complex((size_t)(nk * t->pp));
    t->c = fftwf_alloc_complex((size_t)(L * t->nn));
    t->x = fftwf_alloc_complex((size_t)(L * t->pp));
    if (!t->kidx || !t->kconj || !t->h || !t->c || !t->x) {
        const long long pp = (long long)t->pp;
        field_tp_destroy(t);
        return mr_error(MR_ENOMEM, "field normal: out of memory for %d segments on the %lld-point 2N grid", L, pp);
    }
    memcpy(t->kidx, kidx, (size_t)L * L * sizeof(int));
    memcpy(t->kconj, kconj, (size_t)L * L * sizeof(int));
    for (int k = 0; k < nk; k++)
        memcpy(t->h + k * t->pp, h[k], (size_t)t->pp * sizeof(fftwf_complex));
    memcpy(t->c, coef, (size_t)(L * t->nn) * sizeof(fftwf_complex));
    t->fwd = plan_p(t->p, L, t->x, FFTW_FORWARD, t->threads);
    t->inv = plan_p(t->p, L, t->x, FFTW_BACKWARD, t->threads);
    if (t->pp > 1 && (!t->fwd || !t->inv)) {
        field_tp_destroy(t);
        return mr_error(MR_EFFT, "field normal: FFTW could not plan the 2N-grid transforms of the %lldx%lldx%lld matrix",
                        (long long)matrix[0], (long long)matrix[1], (long long)matrix[2]);
    }
    *out = t;
    return MR_OK;
}

/* index of voxel v of the N grid on the P grid */
static int64_t on_p(const field_tp *t, int64_t v)
{
    const int64_t ix = v % t->n[0], iy = (v / t->n[0]) % t->n[1], iz = v / (t->n[0] * t->n[1]);
    return (iz * t->p[1] + iy) * t->p[0] + ix;
}

mr_status field_tp_apply(field_tp *t, int64_t ncoils, const float *x, float *y)
{
    const int L = t->L;
    const int64_t nn = t->nn, pp = t->pp;
    fftwf_complex *X = t->x;
    for (int64_t c = 0; c < ncoils; c++) {
        const fftwf_complex *xc = (const fftwf_complex *)x + c * nn;
        fftwf_complex *yc = (fftwf_complex *)y + c * nn;
        memset(X, 0, (size_t)(L * pp) * sizeof(fftwf_complex));
#pragma omp parallel for schedule(static) num_threads(t->threads)
        for (int64_t v = 0; v < nn; v++) { /* X_l = pad(C_l . x) */
            const int64_t j = on_p(t, v);
            for (int l = 0; l < L; l++) {
                const fftwf_complex *cl = t->c + l * nn;
                X[l * pp + j][0] = cl[v][0] * xc[v][0] - cl[v][1] * xc[v][1];
                X[l * pp + j][1] = cl[v][0] * xc[v][1] + cl[v][1] * xc[v][0];
            }
        }
        if (t->fwd)
            fftwf_execute(t->fwd);
#pragma omp parallel num_threads(t->threads)
        {
            /* blocks of FTP_BLOCK points: the L products accumulated in an L1-resident buffer by vector loops
               over the block, one per pair (l, l'), then written over the transforms */
            float yb[2 * MR_FIELD_MAX_SEGMENTS * FTP_BLOCK];
#pragma omp for schedule(static)
            for (int64_t j0 = 0; j0 < pp; j0 += FTP_BLOCK) {
                const int64_t nb = pp - j0 < FTP_BLOCK ? pp - j0 : FTP_BLOCK;
                memset(yb, 0, (size_t)(2 * L * FTP_BLOCK) * sizeof(float));
                for (int l = 0; l < L; l++)
                    for (int lp = 0; lp < L; lp++) {
                        const float *restrict h = (const float *)(t->h + t->kidx[l * L + lp] * pp + j0);
                        const float *restrict u = (const float *)(X + lp * pp + j0);
                        float *restrict acc = yb + 2 * l * FTP_BLOCK;
                        const float sg = t->kconj[l * L + lp] ? -1.0f : 1.0f;
#pragma omp simd
                        for (int64_t b = 0; b < nb; b++) {
                            const float hr = h[2 * b], hi = sg * h[2 * b + 1], ur = u[2 * b], ui = u[2 * b + 1];
                            acc[2 * b] += hr * ur - hi * ui;
                            acc[2 * b + 1] += hr * ui + hi * ur;
                        }
                    }
                for (int l = 0; l < L; l++)
                    memcpy(X + l * pp + j0, yb + 2 * l * FTP_BLOCK, (size_t)nb * sizeof(fftwf_complex));
            }
        }
        if (t->inv)
            fftwf_execute(t->inv);
#pragma omp parallel for schedule(static) num_threads(t->threads)
        for (int64_t v = 0; v < nn; v++) { /* y = sum_l conj(C_l) . crop(X_l) */
            const int64_t j = on_p(t, v);
            float sr = 0.0f, si = 0.0f;
            for (int l = 0; l < L; l++) {
                const fftwf_complex *cl = t->c + l * nn;
                sr += cl[v][0] * X[l * pp + j][0] + cl[v][1] * X[l * pp + j][1];
                si += cl[v][0] * X[l * pp + j][1] - cl[v][1] * X[l * pp + j][0];
            }
            yc[v][0] = sr;
            yc[v][1] = si;
        }
    }
    return MR_OK;
}
