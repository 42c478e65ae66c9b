/* The orthogonal Daubechies wavelet operator of wavelet.h: the filters (spectral factorisation in
 * double), the layout, the host transform (in place on the padded grid, OpenMP over blocks of lines)
 * and the operator on either backend (the device transform is gpu/wavelet.cu). */
#include "wavelet.h"

#include <complex.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "../base/grid.h"
#include "../gpu/gpu_ops.h"
#include "../gpu/wavelet.h"

_Static_assert(MR_WAVELET_MAX_TAPS == 2 * MR_WAVELET_MAX_ORDER, "the device geometry holds the longest filter");

/* ---- filters ---------------------------------------------------------------------------------- */

/* The roots of sum_k c[k] y^k (degree deg, c[deg] != 0) by Aberth's simultaneous iteration: cubic
 * convergence from points on a spiral, which no real-coefficient polynomial keeps symmetric. */
static void poly_roots(const double *c, int deg, double complex *y)
{
    for (int k = 0; k < deg; k++)
        y[k] = cpow(0.4 + 0.9 * I, k);
    for (int it = 0; it < 500; it++) {
        double moved = 0;
        for (int k = 0; k < deg; k++) {
            double complex p = c[deg], dp = 0;
            for (int j = deg - 1; j >= 0; j--) {
                dp = dp * y[k] + p;
                p = p * y[k] + c[j];
            }
            const double complex ratio = p / dp;
            double complex s = 0;
            for (int j = 0; j < deg; j++)
                if (j != k)
                    s += 1.0 / (y[k] - y[j]);
            const double complex step = ratio / (1.0 - ratio * s);
            y[k] -= step;
            moved = fmax(moved, cabs(step) / fmax(1.0, cabs(y[k])));
        }
        if (moved < 1e-17)
            break;
    }
}

mr_status mr_wavelet_filter(int order, double *lo)
{
    if (order < 1 || order > MR_WAVELET_MAX_ORDER)
        return mr_error(MR_EINVAL, "wavelet: order %d (Daubechies db1..db%d)", order, MR_WAVELET_MAX_ORDER);
    const int n = order, deg = n - 1, taps = 2 * n;
    double c[MR_WAVELET_MAX_ORDER];
    for (int k = 0; k <= deg; k++) { /* C(n-1+k, k) */
        double b = 1;
        for (int i = 1; i <= k; i++)
            b = b * (n - 1 + i) / i;
        c[k] = b;
    }
    double complex y[MR_WAVELET_MAX_ORDER];
    poly_roots(c, deg, y);
    /* R(z) = (z + 1)^n prod_k (z - z_k): each root y_k of P gives z + 1/z = 2 - 4 y_k (y = sin^2(w/2)
     * with z = e^{iw}); the root z_k inside the unit circle makes the extremal-phase factor. */
    double complex r[2 * MR_WAVELET_MAX_ORDER] = {1};
    for (int k = 0; k < taps - 1; k++) {
        double complex root = -1;
        if (k >= n) {
            const double complex b = 2 - 4 * y[k - n], s = csqrt(b * b - 4);
            root = (b + s) / 2;
            if (cabs(root) > 1)
                root = (b - s) / 2;
        }
        for (int j = k + 1; j >= 1; j--)
            r[j] = r[j - 1] - root * r[j];
        r[0] = -root * r[0];
    }
    /* h[t] is the coefficient of z^{taps-1-t}: the zeros of sum_t h[t] z^{-t} lie inside the circle */
    double sum = 0;
    for (int t = 0; t < taps; t++)
        sum += lo[t] = creal(r[taps - 1 - t]);
    for (int t = 0; t < taps; t++)
        lo[t] *= sqrt(2.0) / sum;
    return MR_OK;
}

/* ---- layout ----------------------------------------------------------------------------------- */

void mr_wavelet_opts_default(mr_wavelet_opts *o)
{
    o->order = 4;
    o->levels = 0;
}

mr_status mr_wavelet_layout(const int64_t matrix[3], const mr_wavelet_opts *o, mr_wavelet_info *info)
{
    mr_wavelet_opts def;
    if (!o) {
        mr_wavelet_opts_default(&def);
        o = &def;
    }
    mr_status st = mr_matrix_check(matrix, "wavelet operator");
    if (st != MR_OK)
        return st;
    if (o->order < 1 || o->order > MR_WAVELET_MAX_ORDER)
        return mr_error(MR_EINVAL, "wavelet: order %d (Daubechies db1..db%d)", o->order, MR_WAVELET_MAX_ORDER);
    if (o->levels < 0 || o->levels > 30)
        return mr_error(MR_EINVAL, "wavelet: %d levels (0 = automatic, or 1..30)", o->levels);
    memset(info, 0, sizeof *info);
    info->order = o->order;
    info->taps = 2 * o->order;
    info->coeffs = 1;
    for (int a = 0; a < 3; a++) {
        const int64_t n = matrix[a];
        int l = 0;
        if (n > 1 && o->levels > 0)
            while (l < o->levels && ((int64_t)2 << l) <= n)
                l++;
        else if (n > 1)
            while (n >= (int64_t)info->taps << (l + 1))
                l++;
        const int64_t q = (int64_t)1 << l;
        info->matrix[a] = n;
        info->levels[a] = l;
        info->padded[a] = (n + q - 1) / q * q;
        info->approx[a] = info->padded[a] >> l;
        info->coeffs *= info->padded[a];
        if (l > info->max_levels)
            info->max_levels = l;
    }
    if (info->max_levels == 0)
        return mr_error(MR_EINVAL,
                        "wavelet: matrix %lldx%lldx%lld is too small for db%d: an axis needs %d voxels for one level",
                        (long long)matrix[0], (long long)matrix[1], (long long)matrix[2], o->order,
                        o->levels > 0 ? 2 : 2 * info->taps);
    return MR_OK;
}

/* ---- the host transform ----------------------------------------------------------------------- */

/* Lines are filtered in blocks of WL_B neighbours (along x for the y and z passes, along y or z for
 * the x pass), gathered position-major into a small per-thread buffer (L1/L2-resident) so that the
 * tap loop runs over 2 WL_B contiguous floats and a strided pass reads 256-byte runs. 32 measured best
 * here against 8, 16 and 64 on 64^3 and 128^3 (8: 1.5x slower on 128^3). */
#define WL_B 32
#define WL_F (2 * WL_B)
/* Below this many multiply-adds a pass runs on one thread (as solver/linop_image.c's IMG_PARALLEL_MIN). */
#define WL_PARALLEL_MIN (1 << 20)

typedef struct {
    mr_backend *be; /* a reference */
    struct mr_gpu_ctx *gpu;
    mr_gpu_wavelet *dev;
    mr_wavelet_info info;
    mr_wavelet_geom geom;
    int64_t shift[3];   /* in [0, P_a) */
    float *work;        /* host: the padded grid, for the adjoint */
    float *lines;       /* host: threads x line_floats */
    int64_t line_floats;
    int threads;
} wl_data;

/* A block of nb <= WL_B lines of length n: element p of line b at data[base + p sa + b sb]. */
typedef struct {
    int64_t base, sa, sb, n;
    int nb;
} wl_block;

static void block_gather(const float *data, const wl_block *k, int64_t first, int64_t count, float *dst)
{
    if (k->nb < WL_B) /* the unused lanes are computed too: keep them finite */
        memset(dst, 0, (size_t)count * WL_F * sizeof(float));
    if (k->sb == 1) { /* the block's lines are neighbours in memory */
        for (int64_t p = 0; p < count; p++)
            memcpy(dst + p * WL_F, data + 2 * (k->base + (first + p) * k->sa), (size_t)k->nb * 2 * sizeof(float));
        return;
    }
    for (int b = 0; b < k->nb; b++)
        for (int64_t p = 0; p < count; p++) {
            const float *s = data + 2 * (k->base + (first + p) * k->sa + b * k->sb);
            dst[p * WL_F + 2 * b] = s[0];
            dst[p * WL_F + 2 * b + 1] = s[1];
        }
}

static void block_scatter(float *data, const wl_block *k, int64_t p, const float *v)
{
    for (int b = 0; b < k->nb; b++) {
        float *o = data + 2 * (k->base + p * k->sa + b * k->sb);
        o[0] = v[2 * b];
        o[1] = v[2 * b + 1];
    }
}

/* One analysis level along the block's lines, in place. ext: (n + taps) WL_F floats. */
static void block_analyse(float *data, const wl_block *k, const mr_wavelet_geom *g, float *ext)
{
    const int64_t n = k->n, half = n / 2;
    block_gather(data, k, 0, n, ext);
    for (int64_t p = n; p < n + g->taps - 2; p++) /* periodic continuation (several turns if n < taps) */
        memcpy(ext + p * WL_F, ext + (p - n) * WL_F, WL_F * sizeof(float));
    for (int64_t i = 0; i < half; i++) {
        float a[WL_F] = {0}, d[WL_F] = {0};
        const float *e = ext + 2 * i * WL_F;
        for (int t = 0; t < g->taps; t++) {
            const float h = g->lo[t], gg = g->hi[t];
            for (int q = 0; q < WL_F; q++) {
                a[q] += h * e[t * WL_F + q];
                d[q] += gg * e[t * WL_F + q];
            }
        }
        block_scatter(data, k, i, a);
        block_scatter(data, k, half + i, d);
    }
}

/* One synthesis level (the adjoint of block_analyse), in place. ext: (n + taps) WL_F floats. */
static void block_synthesise(float *data, const wl_block *k, const mr_wavelet_geom *g, float *ext)
{
    const int64_t half = k->n / 2, pre = g->taps / 2 - 1; /* a[t-j], j < taps/2: pre entries before a[0] */
    float *ea = ext, *ed = ext + (half + pre) * WL_F;
    block_gather(data, k, 0, half, ea + pre * WL_F);
    block_gather(data, k, half, half, ed + pre * WL_F);
    for (int64_t p = pre - 1; p >= 0; p--) { /* a[-1] = a[half-1], ... (several turns if half < pre) */
        memcpy(ea + p * WL_F, ea + (p + half) * WL_F, WL_F * sizeof(float));
        memcpy(ed + p * WL_F, ed + (p + half) * WL_F, WL_F * sizeof(float));
    }
    for (int64_t t = 0; t < half; t++) {
        float u0[WL_F] = {0}, u1[WL_F] = {0};
        for (int j = 0; j < g->taps / 2; j++) {
            const float *a = ea + (pre + t - j) * WL_F, *d = ed + (pre + t - j) * WL_F;
            const float h0 = g->lo[2 * j], h1 = g->lo[2 * j + 1], g0 = g->hi[2 * j], g1 = g->hi[2 * j + 1];
            for (int q = 0; q < WL_F; q++) {
                u0[q] += h0 * a[q] + g0 * d[q];
                u1[q] += h1 * a[q] + g1 * d[q];
            }
        }
        block_scatter(data, k, 2 * t, u0);
        block_scatter(data, k, 2 * t + 1, u1);
    }
}

/* The region of level j: R_j = [0, P_a >> min(j, L_a)) per axis. */
static void level_region(const mr_wavelet_info *in, int j, int64_t r[3])
{
    for (int a = 0; a < 3; a++)
        r[a] = in->padded[a] >> (j < in->levels[a] ? j : in->levels[a]);
}

/* Every line of the region r along axis, in place on the padded grid. */
static void host_pass(wl_data *d, float *data, int axis, const int64_t r[3], int synthesise)
{
    const int64_t *p = d->info.padded, st[3] = {1, p[0], p[0] * p[1]};
    const int bx = axis != 0 ? 0 : (r[1] > 1 ? 1 : 2), ox = 3 - axis - bx; /* block axis, other axis */
    const int64_t nblk = (r[bx] + WL_B - 1) / WL_B, tasks = nblk * r[ox];
    const int64_t work = r[0] * r[1] * r[2] * d->geom.taps;
    const int threads = work < WL_PARALLEL_MIN ? 1 : d->threads;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t task = 0; task < tasks; task++) {
        const int64_t blk = task % nblk, o = task / nblk, left = r[bx] - blk * WL_B;
        const wl_block k = {blk * WL_B * st[bx] + o * st[ox], st[axis], st[bx], r[axis],
                            (int)(left < WL_B ? left : WL_B)};
        float *ext = d->lines + omp_get_thread_num() * d->line_floats;
        if (synthesise)
            block_synthesise(data, &k, &d->geom, ext);
        else
            block_analyse(data, &k, &d->geom, ext);
    }
}

/* Between the image and the padded grid with the shift: to_padded, padded[p] = image[(p - s) mod P]
 * (0 where that is outside the image): S_s Z; else image[n] = padded[(n + s) mod P]: Z^H S_s^H. */
static void host_remap(const wl_data *d, const float *src, float *dst, int to_padded)
{
    const int64_t *n = d->info.matrix, *p = d->info.padded, *s = d->shift;
    const int64_t rows = p[1] * p[2];
    const int threads = d->info.coeffs < WL_PARALLEL_MIN ? 1 : d->threads;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t row = 0; row < rows; row++) {
        const int64_t py = row % p[1], pz = row / p[1];
        const int64_t iy = (py - s[1] + p[1]) % p[1], iz = (pz - s[2] + p[2]) % p[2];
        const int inside = iy < n[1] && iz < n[2];
        int64_t ix = (p[0] - s[0]) % p[0]; /* the image column of px = 0, then counted up */
        for (int64_t px = 0; px < p[0]; px++, ix = ix + 1 == p[0] ? 0 : ix + 1) {
            const int64_t pi = px + p[0] * row, ii = ix + n[0] * (iy + n[1] * iz);
            if (inside && ix < n[0]) {
                if (to_padded) {
                    dst[2 * pi] = src[2 * ii];
                    dst[2 * pi + 1] = src[2 * ii + 1];
                } else {
                    dst[2 * ii] = src[2 * pi];
                    dst[2 * ii + 1] = src[2 * pi + 1];
                }
            } else if (to_padded) {
                dst[2 * pi] = dst[2 * pi + 1] = 0.0f;
            }
        }
    }
}

static mr_status wl_forward(void *p, const float *x, float *y)
{
    wl_data *d = p;
    if (d->gpu)
        return mr_gpu_wavelet_forward(d->dev, d->shift, x, y);
    host_remap(d, x, y, 1);
    for (int j = 0; j < d->info.max_levels; j++) {
        int64_t r[3];
        level_region(&d->info, j, r);
        for (int a = 0; a < 3; a++)
            if (d->info.levels[a] > j)
                host_pass(d, y, a, r, 0);
    }
    return MR_OK;
}

static mr_status wl_adjoint(void *p, const float *y, float *x)
{
    wl_data *d = p;
    if (d->gpu)
        return mr_gpu_wavelet_adjoint(d->dev, d->shift, y, x);
    memcpy(d->work, y, (size_t)d->info.coeffs * 2 * sizeof(float));
    for (int j = d->info.max_levels - 1; j >= 0; j--) {
        int64_t r[3];
        level_region(&d->info, j, r);
        for (int a = 2; a >= 0; a--)
            if (d->info.levels[a] > j)
                host_pass(d, d->work, a, r, 1);
    }
    host_remap(d, d->work, x, 0);
    return MR_OK;
}

/* W^H W = I: the normal is a copy. */
static mr_status wl_normal(void *p, const float *x, float *y)
{
    const wl_data *d = p;
    const mr_vecops *v = mr_backend_vecops(d->be);
    v->copy(v->ctx, d->info.matrix[0] * d->info.matrix[1] * d->info.matrix[2], y, x);
    return MR_OK;
}

static void wl_destroy(void *p)
{
    wl_data *d = p;
    if (!d)
        return;
    mr_gpu_wavelet_destroy(d->dev);
    free(d->work);
    free(d->lines);
    mr_backend_free(d->be);
    free(d);
}

mr_status mr_linop_wavelet_create(mr_linop **out, mr_backend *be, const int64_t matrix[3], const mr_wavelet_opts *o)
{
    *out = NULL;
    if (!be)
        return mr_error(MR_EINVAL, "wavelet operator: no backend");
    mr_wavelet_info info;
    mr_status st = mr_wavelet_layout(matrix, o, &info);
    if (st != MR_OK)
        return st;
    wl_data *d = calloc(1, sizeof *d);
    if (!d)
        return mr_error(MR_ENOMEM, "wavelet operator: out of memory");
    d->be = mr_backend_ref(be);
    d->gpu = mr_backend_gpu_ctx(be);
    d->info = info;
    d->threads = mr_backend_threads(be);
    mr_wavelet_geom *g = &d->geom;
    double lo[MR_WAVELET_MAX_TAPS];
    st = mr_wavelet_filter(info.order, lo);
    g->taps = info.taps;
    for (int t = 0; t < g->taps; t++) {
        g->lo[t] = (float)lo[t];
        g->hi[t] = (float)((t & 1) ? -lo[g->taps - 1 - t] : lo[g->taps - 1 - t]);
    }
    for (int a = 0; a < 3; a++) {
        g->matrix[a] = info.matrix[a];
        g->padded[a] = info.padded[a];
        g->levels[a] = info.levels[a];
    }
    if (st == MR_OK && d->gpu) {
        st = mr_gpu_wavelet_create(&d->dev, d->gpu, g);
    } else if (st == MR_OK) {
        int64_t longest = 0;
        for (int a = 0; a < 3; a++)
            longest = info.padded[a] > longest ? info.padded[a] : longest;
        d->line_floats = (longest + g->taps) * WL_F;
        d->work = malloc((size_t)info.coeffs * 2 * sizeof(float));
        d->lines = malloc((size_t)(d->line_floats * d->threads) * sizeof(float));
        if (!d->work || !d->lines)
            st = mr_error(MR_ENOMEM, "wavelet operator: out of memory for %lld coefficients", (long long)info.coeffs);
    }
    if (st != MR_OK) {
        wl_destroy(d);
        return st;
    }
    const int64_t dom[4] = {matrix[0], matrix[1], matrix[2], 1};
    const int64_t cod[4] = {info.padded[0], info.padded[1], info.padded[2], 1};
    const mr_linop_ops ops = {wl_forward, wl_adjoint, wl_normal, wl_destroy};
    return mr_linop_create(out, be, dom, cod, &ops, d);
}

/* ---- queries and settings --------------------------------------------------------------------- */

static wl_data *wl_of(const mr_linop *w, const char *what)
{
    wl_data *d = mr_linop_data(w, wl_forward);
    if (!d)
        mr_error(MR_EINVAL, "%s: not a wavelet operator", what);
    return d;
}

mr_status mr_linop_wavelet_info(const mr_linop *w, mr_wavelet_info *info)
{
    const wl_data *d = wl_of(w, "mr_linop_wavelet_info");
    if (!d)
        return MR_EINVAL;
    *info = d->info;
    return MR_OK;
}

mr_status mr_linop_wavelet_set_shift(mr_linop *w, const int64_t shift[3])
{
    wl_data *d = wl_of(w, "mr_linop_wavelet_set_shift");
    if (!d)
        return MR_EINVAL;
    for (int a = 0; a < 3; a++) {
        const int64_t p = d->info.padded[a];
        d->shift[a] = (shift[a] % p + p) % p;
    }
    return MR_OK;
}

mr_status mr_linop_wavelet_get_shift(const mr_linop *w, int64_t shift[3])
{
    const wl_data *d = wl_of(w, "mr_linop_wavelet_get_shift");
    if (!d)
        return MR_EINVAL;
    memcpy(shift, d->shift, sizeof d->shift);
    return MR_OK;
}

mr_status mr_linop_wavelet_detail_mask(const mr_linop *w, float *host_mask)
{
    const wl_data *d = wl_of(w, "mr_linop_wavelet_detail_mask");
    if (!d)
        return MR_EINVAL;
    const int64_t *p = d->info.padded, *a = d->info.approx;
    for (int64_t v = 0; v < d->info.coeffs; v++) {
        const int64_t x = v % p[0], y = (v / p[0]) % p[1], z = v / (p[0] * p[1]);
        host_mask[v] = x < a[0] && y < a[1] && z < a[2] ? 0.0f : 1.0f;
    }
    return MR_OK;
}

void mr_wavelet_random_shift(uint64_t *state, const mr_wavelet_info *info, int64_t shift[3])
{
    for (int a = 0; a < 3; a++) {
        uint64_t z = (*state += 0x9e3779b97f4a7c15ull); /* splitmix64 */
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        shift[a] = info->levels[a] > 0 ? (int64_t)(z >> (64 - info->levels[a])) : 0;
    }
}
