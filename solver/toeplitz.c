/* Toeplitz-embedded normal operator (see toeplitz.h for the maths).
 *
 * The 2N-grid FFTs are done as 1D passes over groups of gb adjacent lines that are gathered into
 * a small per-thread buffer (L1/L2 resident), transformed by one FFTW plan (FFTW_ESTIMATE,
 * single-threaded, executed with fftwf_execute_dft on each thread's buffer) and scattered back.
 * Pruning: the padded input is zero beyond N_a along each axis and only the first N_a outputs are
 * kept, so
 *   x forward   on the Ny*Nz rows that hold data (zero padding written into the buffer),
 *   y forward   on the Nz planes that hold data,
 *   z forward, multiply by H, z inverse    fused per line group (3D; in 2D: y forward, H, y inverse),
 *   y inverse   on the Nz planes that are kept, writing only the first Ny outputs,
 *   x inverse   on the Ny*Nz kept rows, writing only the first Nx outputs.
 * Every line is transformed by the same code whatever thread takes it: results do not depend on
 * the thread count. OpenMP runs the line groups (static schedule); FFTW's own threads are not used
 * (one thread pool). The kernel spectrum H is computed once in create, by passes of the same line plans
 * over the whole 2P grid (OpenMP over line groups, with the applications' thread count). */
#include "toeplitz.h"

#include "fft.h"
#include "toeplitz_chan.h"

#include <fftw3.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* lines per group: buffer [P][gb] complex, line index fastest. Measured here: 8 suits the 2D
 * passes (256-point lines, small planes), 32 the 3D ones (fewer, larger strided gathers). */
#define TP_B_2D 8
#define TP_B_3D 32
/* Below this many points on the 2N grid one application takes a fraction of a millisecond on one
 * thread (0.3 ms for 256 x 256); splitting it adds three barriers, which cost far more than they save
 * when the cores are shared (measured here: 15 ms per application with 2 threads next to another busy
 * process, 0.3-0.5 ms with 1). */
#define TP_SERIAL_POINTS (1 << 18)

struct mr_toeplitz {
    int64_t n[3];       /* Nx, Ny, Nz */
    int64_t p[3];       /* 2N_a, or 1 where N_a = 1 */
    int threads;        /* OpenMP threads of the applications (1 on small grids, see TP_SERIAL_POINTS) */
    int gb;             /* lines per group */
    fftwf_complex *w1;  /* [Nz][Ny][Px]: after the x pass; after the inverse y pass */
    fftwf_complex *w2;  /* [Nz][Py][Px] (3D only): after the y pass, then the inverse z pass */
    fftwf_complex *buf; /* per thread [pmax][gb] */
    size_t buf_stride;  /* complex elements per thread buffer */
    float *h;           /* [Pz][Py][Px] real spectrum of c, scaled by 1/(Px Py Pz) */
    fftwf_plan fx, bx, fy, by, fz, bz;
    float *lam;         /* [Nz][Ny][Nx] eigenvalues of the circulant approximation (toeplitz.h) */
    double *gtab[3];    /* [N_a] 4 sin^2(pi k / N_a): G's eigenvalues are their sums over the axes */
    fftwf_plan cf[3], cb[3]; /* N_a-point line plans of its transforms (NULL where N_a = 1) */
    int req_threads;    /* threads asked for (the kernel spectrum, batches of small grids) */
    fftwf_complex *bw;  /* batches of small grids: per thread w1 | w2 | buf, made on first use */
    size_t bw_stride;   /* complex elements per thread */
};

/* gb transforms of length len: rows of the buffer when contiguous (x pass: [gb][len]),
 * columns otherwise ([len][gb]). In place. */
static fftwf_plan plan_group(int64_t len, int gb, int contiguous, fftwf_complex *buf, int sign)
{
    fftwf_iodim d, h;
    d.n = (int)len;
    d.is = d.os = contiguous ? 1 : gb;
    h.n = gb;
    h.is = h.os = contiguous ? (int)len : 1;
    /* single-threaded plans: OpenMP splits the lines */
    return mr_fft_plan_guru(1, &d, 1, &h, buf, buf, sign, 1);
}

void mr_toeplitz_destroy(mr_toeplitz *t)
{
    if (!t)
        return;
    fftwf_plan plans[6] = {t->fx, t->bx, t->fy, t->by, t->fz, t->bz};
    for (int i = 0; i < 6; i++)
        mr_fft_destroy(plans[i]);
    for (int a = 0; a < 3; a++) {
        mr_fft_destroy(t->cf[a]);
        mr_fft_destroy(t->cb[a]);
        free(t->gtab[a]);
    }
    fftwf_free(t->lam);
    fftwf_free(t->w1);
    fftwf_free(t->w2);
    fftwf_free(t->buf);
    fftwf_free(t->h);
    fftwf_free(t->bw);
    free(t);
}

/* Forward declarations of the line helpers (defined with the application below). */
static void gather(fftwf_complex *restrict buf, const fftwf_complex *restrict src, int64_t stride, int64_t nin,
                   int64_t len, int64_t nb, int64_t gb);
static void scatter(fftwf_complex *restrict dst, const fftwf_complex *restrict buf, int64_t stride, int64_t nout,
                    int64_t nb, int64_t gb);

/* Source index on the Q grid of circulant index j along one axis: Q grid index i sits at offset i - N,
 * offset j (j < N) or j - 2N (j > N); *unused when j = N (offset -N, never used by the cropped result). */
static int64_t circulant_source(int64_t j, int64_t n, int64_t p, int *unused)
{
    if (p == 1) /* the Q grid has n = 1 on this axis too */
        return 0;
    *unused |= j == n;
    return j + n < p ? j + n : j - n;
}

/* In place on a grid d [n2][n1][n0]: the unnormalised DFT along every axis whose plan pl[a] is not NULL (line
 * plans of plan_group), by passes of gb lines through each thread's buffer, OpenMP over line groups: every
 * line is transformed by the same code whatever thread takes it, so the result does not depend on the thread
 * count. */
static void grid_passes(const mr_toeplitz *t, fftwf_complex *d, const int64_t n[3], const fftwf_plan pl[3], int threads)
{
    const int64_t nx = n[0], ny = n[1], nz = n[2], plane = nx * ny, nrows = ny * nz, gb = t->gb;
#pragma omp parallel num_threads(threads)
    {
        fftwf_complex *buf = t->buf + (size_t)omp_get_thread_num() * t->buf_stride;
        if (pl[0]) {
#pragma omp for schedule(static)
            for (int64_t g = 0; g < (nrows + gb - 1) / gb; g++) { /* x: rows [gb][nx], contiguous */
                const int64_t r0 = g * gb, nb = nrows - r0 < gb ? nrows - r0 : gb;
                memcpy(buf, d + r0 * nx, (size_t)(nb * nx) * sizeof(fftwf_complex));
                if (nb < gb)
                    memset(buf + nb * nx, 0, (size_t)((gb - nb) * nx) * sizeof(fftwf_complex));
                fftwf_execute_dft(pl[0], buf, buf);
                memcpy(d + r0 * nx, buf, (size_t)(nb * nx) * sizeof(fftwf_complex));
            }
        }
        if (pl[1]) {
            const int64_t cgroups = (nx + gb - 1) / gb;
#pragma omp for schedule(static)
            for (int64_t g = 0; g < nz * cgroups; g++) { /* y: columns of every plane */
                const int64_t iz = g / cgroups, x0 = (g % cgroups) * gb, nb = nx - x0 < gb ? nx - x0 : gb;
                gather(buf, d + iz * plane + x0, nx, ny, ny, nb, gb);
                fftwf_execute_dft(pl[1], buf, buf);
                scatter(d + iz * plane + x0, buf, nx, ny, nb, gb);
            }
        }
        if (pl[2]) {
#pragma omp for schedule(static)
            for (int64_t g = 0; g < (plane + gb - 1) / gb; g++) { /* z: every (y, x) line */
                const int64_t l0 = g * gb, nb = plane - l0 < gb ? plane - l0 : gb;
                gather(buf, d + l0, plane, nz, nz, nb, gb);
                fftwf_execute_dft(pl[2], buf, buf);
                scatter(d + l0, buf, plane, nz, nb, gb);
            }
        }
    }
}

/* h = Re FFT(c) / (Px Py Pz), c = Q arranged circulantly, transformed by grid_passes with the line plans the
 * application uses (planning costs nothing extra). */
static mr_status build_spectrum(mr_toeplitz *t, const float *q, int threads)
{
    const int64_t px = t->p[0], py = t->p[1], pz = t->p[2];
    const int64_t ptot = px * py * pz;
    fftwf_complex *c = fftwf_alloc_complex((size_t)ptot);
    if (!c)
        return mr_error(MR_ENOMEM, "toeplitz: out of memory for the %lldx%lldx%lld kernel", (long long)px,
                        (long long)py, (long long)pz);
    const float scale = (float)(1.0 / (double)ptot);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t row = 0; row < py * pz; row++) {
        int unused = 0;
        const int64_t sy = circulant_source(row % py, t->n[1], py, &unused);
        const int64_t sz = circulant_source(row / py, t->n[2], pz, &unused);
        for (int64_t jx = 0; jx < px; jx++) {
            int un = unused;
            const int64_t sx = circulant_source(jx, t->n[0], px, &un);
            const float *src = q + 2 * ((sz * py + sy) * px + sx);
            c[row * px + jx][0] = un ? 0.0f : src[0];
            c[row * px + jx][1] = un ? 0.0f : src[1];
        }
    }
    const fftwf_plan pl[3] = {t->fx, py > 1 ? t->fy : NULL, pz > 1 ? t->fz : NULL};
    grid_passes(t, c, t->p, pl, threads);
    /* c is Hermitian (c[-j] = conj c[j]; the unpaired offsets -N_a are 0), so its spectrum is real */
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t i = 0; i < ptot; i++)
        t->h[i] = c[i][0] * scale;
    fftwf_free(c);
    return MR_OK;
}

/* ---- the circulant approximation (toeplitz.h) ------------------------------------------------------ */

/* lam = the eigenvalues of T. Chan's circulant (solver/toeplitz_chan.h), its DFT; real because c is Hermitian
 * like Q. */
static mr_status build_circulant(mr_toeplitz *t, const float *q)
{
    const int64_t nx = t->n[0], ny = t->n[1], nz = t->n[2], nn = nx * ny * nz;
    t->lam = fftwf_alloc_real((size_t)nn);
    fftwf_complex *c = fftwf_alloc_complex((size_t)nn);
    if (!t->lam || !c) {
        fftwf_free(c);
        return mr_error(MR_ENOMEM, "toeplitz: out of memory for the circulant approximation (%lld voxels)",
                        (long long)nn);
    }
    for (int a = 0; a < 3; a++) {
        if (!(t->gtab[a] = malloc((size_t)t->n[a] * sizeof(double)))) {
            fftwf_free(c);
            return mr_error(MR_ENOMEM, "toeplitz: out of memory");
        }
        for (int64_t k = 0; k < t->n[a]; k++) {
            const double sn = sin(M_PI * (double)k / (double)t->n[a]);
            t->gtab[a][k] = 4.0 * sn * sn;
        }
    }
    for (int a = 0; a < 3; a++)
        if (t->n[a] > 1) {
            t->cf[a] = plan_group(t->n[a], t->gb, a == 0, t->buf, FFTW_FORWARD);
            t->cb[a] = plan_group(t->n[a], t->gb, a == 0, t->buf, FFTW_BACKWARD);
            if (!t->cf[a] || !t->cb[a]) {
                fftwf_free(c);
                return mr_error(MR_EFFT, "toeplitz: FFTW could not plan the %lld-point line transforms",
                                (long long)t->n[a]);
            }
        }
    const long long n[3] = {nx, ny, nz}, p[3] = {t->p[0], t->p[1], t->p[2]};
#pragma omp parallel for schedule(static) num_threads(t->threads)
    for (int64_t i = 0; i < nn; i++) {
        const long long m[3] = {i % nx, (i / nx) % ny, i / (nx * ny)};
        double v[2];
        mr_toeplitz_chan(n, p, q, m, v);
        c[i][0] = (float)v[0];
        c[i][1] = (float)v[1];
    }
    grid_passes(t, c, t->n, t->cf, t->threads);
    for (int64_t i = 0; i < nn; i++)
        t->lam[i] = c[i][0];
    fftwf_free(c);
    return MR_OK;
}

mr_status mr_toeplitz_circulant_solve(mr_toeplitz *t, double a, double g, double s, const float *r, float *z)
{
    if (!t || !r || !z)
        return mr_error(MR_EINVAL, "toeplitz: null argument");
    const int64_t nx = t->n[0], ny = t->n[1], nz = t->n[2], nn = nx * ny * nz;
    if (z != r)
        memcpy(z, r, (size_t)nn * 2 * sizeof(float));
    fftwf_complex *d = (fftwf_complex *)z;
    grid_passes(t, d, t->n, t->cf, t->threads);
    const double floor = MR_TOEPLITZ_CIRC_FLOOR * (a * t->lam[0] + 12.0 * g + s), inv_n = 1.0 / (double)nn;
#pragma omp parallel for schedule(static) num_threads(t->threads)
    for (int64_t i = 0; i < nn; i++) {
        const double gs = t->gtab[0][i % nx] + t->gtab[1][(i / nx) % ny] + t->gtab[2][i / (nx * ny)];
        double den = a * (t->lam[i] > 0 ? t->lam[i] : 0.0) + g * gs + s;
        den = den > floor ? den : floor;
        const float f = (float)(inv_n / den);
        d[i][0] *= f;
        d[i][1] *= f;
    }
    grid_passes(t, d, t->n, t->cb, t->threads);
    return MR_OK;
}

mr_status mr_toeplitz_create(mr_toeplitz **out, const int64_t matrix[3], const float *q, int threads)
{
    if (!out)
        return mr_error(MR_EINVAL, "toeplitz: no output pointer");
    *out = NULL;
    if (!q)
        return mr_error(MR_EINVAL, "toeplitz: no Q array");
    for (int a = 0; a < 3; a++)
        if (matrix[a] < 1 || matrix[a] > (1 << 14))
            return mr_error(MR_EINVAL, "toeplitz: matrix[%d] = %lld is out of range", a, (long long)matrix[a]);
    mr_toeplitz *t = calloc(1, sizeof *t);
    if (!t)
        return mr_error(MR_ENOMEM, "toeplitz: out of memory");
    t->threads = threads > 0 ? threads : omp_get_max_threads();
    int64_t pmax = 1;
    for (int a = 0; a < 3; a++) {
        t->n[a] = matrix[a];
        t->p[a] = matrix[a] > 1 ? 2 * matrix[a] : 1;
        pmax = t->p[a] > pmax ? t->p[a] : pmax;
    }
    const int64_t ny = t->n[1], nz = t->n[2], px = t->p[0], py = t->p[1], pz = t->p[2];
    t->gb = pz > 1 ? TP_B_3D : TP_B_2D;
    if (px * py * pz < TP_SERIAL_POINTS)
        t->threads = 1;
    t->buf_stride = (size_t)(pmax * t->gb + 8); /* + 64 bytes: every thread's buffer equally aligned */
    /* batches of small grids use every thread asked for, even where one application uses one */
    const int nbuf = threads > 0 ? threads : omp_get_max_threads();
    t->req_threads = nbuf;
    t->w1 = fftwf_alloc_complex((size_t)(nz * ny * px));
    t->buf = fftwf_alloc_complex(t->buf_stride * (size_t)(nbuf > t->threads ? nbuf : t->threads));
    t->h = fftwf_alloc_real((size_t)(px * py * pz));
    if (pz > 1)
        t->w2 = fftwf_alloc_complex((size_t)(nz * py * px));
    if (!t->w1 || !t->buf || !t->h || (pz > 1 && !t->w2)) {
        mr_toeplitz_destroy(t);
        return mr_error(MR_ENOMEM, "toeplitz: out of memory for the %lldx%lldx%lld grid", (long long)px,
                        (long long)py, (long long)pz);
    }
    memset(t->buf, 0, t->buf_stride * (size_t)nbuf * sizeof(fftwf_complex));
    t->fx = plan_group(px, t->gb, 1, t->buf, FFTW_FORWARD);
    t->bx = plan_group(px, t->gb, 1, t->buf, FFTW_BACKWARD);
    t->fy = plan_group(py, t->gb, 0, t->buf, FFTW_FORWARD);
    t->by = plan_group(py, t->gb, 0, t->buf, FFTW_BACKWARD);
    if (pz > 1) {
        t->fz = plan_group(pz, t->gb, 0, t->buf, FFTW_FORWARD);
        t->bz = plan_group(pz, t->gb, 0, t->buf, FFTW_BACKWARD);
    }
    if (!t->fx || !t->bx || !t->fy || !t->by || (pz > 1 && (!t->fz || !t->bz))) {
        mr_toeplitz_destroy(t);
        return mr_error(MR_EFFT, "toeplitz: FFTW could not plan the %lldx%lldx%lld line transforms", (long long)px,
                        (long long)py, (long long)pz);
    }
    mr_status st = build_spectrum(t, q, t->threads); /* small grids: one thread, as the applications */
    if (st == MR_OK)
        st = build_circulant(t, q);
    if (st != MR_OK) {
        mr_toeplitz_destroy(t);
        return st;
    }
    *out = t;
    return MR_OK;
}

/* Gather lines l0..l0+nb-1 (adjacent in memory, `stride` apart along the transform axis) into
 * buf[j][b] for j < nin, zeros for nin <= j < len (and for b >= nb). */
static void gather(fftwf_complex *restrict buf, const fftwf_complex *restrict src, int64_t stride, int64_t nin,
                   int64_t len, int64_t nb, int64_t gb)
{
    if (nb == gb) { /* the common case: plain loops rather than many small memcpy calls */
        for (int64_t j = 0; j < nin; j++)
            for (int64_t b = 0; b < gb; b++) {
                buf[j * gb + b][0] = src[j * stride + b][0];
                buf[j * gb + b][1] = src[j * stride + b][1];
            }
    } else {
        memset(buf, 0, (size_t)(nin * gb) * sizeof(fftwf_complex));
        for (int64_t j = 0; j < nin; j++)
            memcpy(buf + j * gb, src + j * stride, (size_t)nb * sizeof(fftwf_complex));
    }
    memset(buf + nin * gb, 0, (size_t)((len - nin) * gb) * sizeof(fftwf_complex));
}

/* The first nout entries of lines 0..nb-1 of buf back to dst. */
static void scatter(fftwf_complex *restrict dst, const fftwf_complex *restrict buf, int64_t stride, int64_t nout,
                    int64_t nb, int64_t gb)
{
    if (nb == gb) {
        for (int64_t j = 0; j < nout; j++)
            for (int64_t b = 0; b < gb; b++) {
                dst[j * stride + b][0] = buf[j * gb + b][0];
                dst[j * stride + b][1] = buf[j * gb + b][1];
            }
        return;
    }
    for (int64_t j = 0; j < nout; j++)
        memcpy(dst + j * stride, buf + j * gb, (size_t)nb * sizeof(fftwf_complex));
}

/* buf[j][b] *= h[j * stride + b]: the spectrum of the lines in the buffer. */
static void multiply(fftwf_complex *restrict buf, const float *restrict h, int64_t stride, int64_t len, int64_t nb,
                     int64_t gb)
{
    for (int64_t j = 0; j < len; j++) {
        const float *hj = h + j * stride;
        fftwf_complex *bj = buf + j * gb;
        for (int64_t b = 0; b < nb; b++) {
            bj[b][0] *= hj[b];
            bj[b][1] *= hj[b];
        }
    }
}

/* The passes of one application (toeplitz.h); its `omp for` loops split the line groups among the
 * threads of the enclosing parallel region. buf: this thread's buffer. */
static void passes(const mr_toeplitz *t, const float *x, float *y, fftwf_complex *w1, fftwf_complex *w2,
                   fftwf_complex *buf)
{
    const int64_t nx = t->n[0], ny = t->n[1], nz = t->n[2];
    const int64_t px = t->p[0], py = t->p[1], pz = t->p[2], plane = px * py;
    const int64_t nrows = ny * nz;
    const int64_t gb = t->gb;
    const int64_t rgroups = (nrows + gb - 1) / gb;
    const int64_t cgroups = (px + gb - 1) / gb; /* column groups per plane */
    const int64_t lgroups = (plane + gb - 1) / gb;
    const fftwf_complex *xc = (const fftwf_complex *)x;
    fftwf_complex *yc = (fftwf_complex *)y;
    /* x forward: rows of x, zero padded, into w1 */
#pragma omp for schedule(static)
    for (int64_t g = 0; g < rgroups; g++) {
        const int64_t r0 = g * gb, nb = nrows - r0 < gb ? nrows - r0 : gb;
        for (int64_t b = 0; b < gb; b++) {
            fftwf_complex *row = buf + b * px;
            const int64_t len = b < nb ? nx : 0;
            if (len)
                memcpy(row, xc + (r0 + b) * nx, (size_t)nx * sizeof(fftwf_complex));
            memset(row + len, 0, (size_t)(px - len) * sizeof(fftwf_complex));
        }
        fftwf_execute_dft(t->fx, buf, buf);
        memcpy(w1 + r0 * px, buf, (size_t)(nb * px) * sizeof(fftwf_complex));
    }
    /* y forward on the Nz data planes; in 2D fused with H and the inverse y pass */
#pragma omp for schedule(static)
    for (int64_t g = 0; g < nz * cgroups; g++) {
        const int64_t iz = g / cgroups, x0 = (g % cgroups) * gb;
        const int64_t nb = px - x0 < gb ? px - x0 : gb;
        gather(buf, w1 + iz * ny * px + x0, px, ny, py, nb, gb);
        fftwf_execute_dft(t->fy, buf, buf);
        if (pz == 1) {
            multiply(buf, t->h + x0, px, py, nb, gb);
            fftwf_execute_dft(t->by, buf, buf);
            scatter(w1 + x0, buf, px, ny, nb, gb);
        } else {
            scatter(w2 + iz * plane + x0, buf, px, py, nb, gb);
        }
    }
    if (pz > 1) {
        /* z forward, H, z inverse: every (y, x) line, in place in w2's first Nz planes */
#pragma omp for schedule(static)
        for (int64_t g = 0; g < lgroups; g++) {
            const int64_t l0 = g * gb, nb = plane - l0 < gb ? plane - l0 : gb;
            gather(buf, w2 + l0, plane, nz, pz, nb, gb);
            fftwf_execute_dft(t->fz, buf, buf);
            multiply(buf, t->h + l0, plane, pz, nb, gb);
            fftwf_execute_dft(t->bz, buf, buf);
            scatter(w2 + l0, buf, plane, nz, nb, gb);
        }
        /* y inverse on the kept planes, first Ny outputs into w1 */
#pragma omp for schedule(static)
        for (int64_t g = 0; g < nz * cgroups; g++) {
            const int64_t iz = g / cgroups, x0 = (g % cgroups) * gb;
            const int64_t nb = px - x0 < gb ? px - x0 : gb;
            gather(buf, w2 + iz * plane + x0, px, py, py, nb, gb);
            fftwf_execute_dft(t->by, buf, buf);
            scatter(w1 + iz * ny * px + x0, buf, px, ny, nb, gb);
        }
    }
    /* x inverse on the kept rows, first Nx outputs into y */
#pragma omp for schedule(static)
    for (int64_t g = 0; g < rgroups; g++) {
        const int64_t r0 = g * gb, nb = nrows - r0 < gb ? nrows - r0 : gb;
        memcpy(buf, w1 + r0 * px, (size_t)(nb * px) * sizeof(fftwf_complex));
        fftwf_execute_dft(t->bx, buf, buf);
        for (int64_t b = 0; b < nb; b++)
            memcpy(yc + (r0 + b) * nx, buf + b * px, (size_t)nx * sizeof(fftwf_complex));
    }
}

mr_status mr_toeplitz_apply(mr_toeplitz *t, const float *x, float *y)
{
    if (!t || !x || !y)
        return mr_error(MR_EINVAL, "toeplitz: null argument");
#pragma omp parallel num_threads(t->threads)
    passes(t, x, y, t->w1, t->w2, t->buf + (size_t)omp_get_thread_num() * t->buf_stride);
    return MR_OK;
}

mr_status mr_toeplitz_apply_batch(mr_toeplitz *t, int64_t batch, const float *x, float *y)
{
    if (!t || !x || !y || batch < 1)
        return mr_error(MR_EINVAL, "toeplitz: null argument or batch %lld", (long long)batch);
    const int64_t n = t->n[0] * t->n[1] * t->n[2];
    const int nt = (int)(batch < t->req_threads ? batch : t->req_threads);
    if (t->threads > 1 || nt < 2) { /* a large grid: its lines are split, images one after the other */
        for (int64_t b = 0; b < batch; b++) {
            mr_status st = mr_toeplitz_apply(t, x + 2 * b * n, y + 2 * b * n);
            if (st != MR_OK)
                return st;
        }
        return MR_OK;
    }
    /* a small grid: one image per thread, each through the same single-threaded passes */
    /* offsets in multiples of 8 complex (64 bytes): every buffer aligned like the one the plans were made on */
    const size_t w1n = ((size_t)(t->n[2] * t->n[1] * t->p[0]) + 7) / 8 * 8;
    const size_t w2n = t->p[2] > 1 ? ((size_t)(t->n[2] * t->p[1] * t->p[0]) + 7) / 8 * 8 : 0;
    if (!t->bw) {
        t->bw_stride = w1n + w2n + t->buf_stride;
        t->bw = fftwf_alloc_complex(t->bw_stride * (size_t)t->req_threads);
        if (!t->bw)
            return mr_error(MR_ENOMEM, "toeplitz: out of memory for %d image buffers", t->req_threads);
        memset(t->bw, 0, t->bw_stride * (size_t)t->req_threads * sizeof(fftwf_complex));
    }
#pragma omp parallel num_threads(nt)
    {
        const int tid = omp_get_thread_num();
        fftwf_complex *set = t->bw + (size_t)tid * t->bw_stride;
        for (int64_t b = tid; b < batch; b += nt) {
#pragma omp parallel num_threads(1)
            passes(t, x + 2 * b * n, y + 2 * b * n, set, w2n ? set + w1n : NULL, set + w1n + w2n);
        }
    }
    return MR_OK;
}

