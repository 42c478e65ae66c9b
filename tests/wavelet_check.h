/* Checks of the wavelet operator (solver/wavelet.h) shared by test_wavelet (host) and test_gpu_wavelet
 * (device): an independent float64 reference and the properties every wavelet operator must have.
 *
 * The reference works on the padded grid in double complex, written from the definitions rather than
 * like the operator's code: one level along a line is the periodic correlation of the whole line with
 * h and with g, c[m] = sum_k f[k] u[(m + k) mod n] for every m, then downsampled (a[i] = c_h[2i],
 * d[i] = c_g[2i]); its adjoint scatters, u[(2i + k) mod n] += h[k] a[i] + g[k] d[i]. The shift and the
 * padding are applied by building the padded, shifted image explicitly.
 *
 * Bounds (relative L2 unless said; the operator computes in float32):
 *   forward and adjoint against the reference 1e-5 (measured ~1e-7);
 *   ||W x|| = ||x|| within 1e-6 relative; W^H W x = x 1e-6; W W^H c = c where P = N, and
 *   W W^H (W W^H c) = W W^H c (a projection) where P > N, 1e-6;
 *   adjointness 1e-5 and normal (a copy) against W^H W x 1e-6 (tests/linop_check.h). */
#ifndef MR_WAVELET_CHECK_H
#define MR_WAVELET_CHECK_H

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "linop_check.h"
#include "solver/wavelet.h"

/* One periodic level along the line of length n (stride sa) starting at base: analysis (adjoint 0)
 * or its transpose (adjoint 1), in place on double complex [..][2]. */
static inline void wref_line(double *v, int64_t base, int64_t sa, int64_t n, const double *h, const double *g,
                             int taps, int adjoint)
{
    double *u = calloc((size_t)(2 * n), sizeof(double)), *o = calloc((size_t)(2 * n), sizeof(double));
    for (int64_t m = 0; m < n; m++) {
        u[2 * m] = v[2 * (base + m * sa)];
        u[2 * m + 1] = v[2 * (base + m * sa) + 1];
    }
    const int64_t half = n / 2;
    if (!adjoint) {
        for (int64_t m = 0; m < n; m++) { /* the correlations at every m; the even ones are kept */
            double ch[2] = {0, 0}, cg[2] = {0, 0};
            for (int k = 0; k < taps; k++) {
                const int64_t idx = (m + k) % n;
                ch[0] += h[k] * u[2 * idx];
                ch[1] += h[k] * u[2 * idx + 1];
                cg[0] += g[k] * u[2 * idx];
                cg[1] += g[k] * u[2 * idx + 1];
            }
            if (m % 2 == 0) {
                o[2 * (m / 2)] = ch[0];
                o[2 * (m / 2) + 1] = ch[1];
                o[2 * (half + m / 2)] = cg[0];
                o[2 * (half + m / 2) + 1] = cg[1];
            }
        }
    } else {
        for (int64_t i = 0; i < half; i++)
            for (int k = 0; k < taps; k++) {
                const int64_t idx = (2 * i + k) % n;
                o[2 * idx] += h[k] * u[2 * i] + g[k] * u[2 * (half + i)];
                o[2 * idx + 1] += h[k] * u[2 * i + 1] + g[k] * u[2 * (half + i) + 1];
            }
    }
    for (int64_t m = 0; m < n; m++) {
        v[2 * (base + m * sa)] = o[2 * m];
        v[2 * (base + m * sa) + 1] = o[2 * m + 1];
    }
    free(u);
    free(o);
}

/* Every line along axis of the level-j region, of the padded grid v. */
static inline void wref_level(const mr_wavelet_info *in, double *v, int j, int axis, const double *h, const double *g,
                              int adjoint)
{
    int64_t r[3];
    for (int a = 0; a < 3; a++)
        r[a] = in->padded[a] >> (j < in->levels[a] ? j : in->levels[a]);
    const int64_t st[3] = {1, in->padded[0], in->padded[0] * in->padded[1]};
    for (int64_t z = 0; z < (axis == 2 ? 1 : r[2]); z++)
        for (int64_t y = 0; y < (axis == 1 ? 1 : r[1]); y++)
            for (int64_t x = 0; x < (axis == 0 ? 1 : r[0]); x++)
                wref_line(v, x + y * st[1] + z * st[2], st[axis], r[axis], h, g, in->taps, adjoint);
}

static inline void wref_filters(const mr_wavelet_info *in, double *h, double *g)
{
    mr_wavelet_filter(in->order, h);
    for (int k = 0; k < in->taps; k++)
        g[k] = (k % 2 ? -1.0 : 1.0) * h[in->taps - 1 - k];
}

/* Padded-grid index of image voxel (ix, iy, iz) under the shift. */
static inline int64_t wref_padded_index(const mr_wavelet_info *in, const int64_t shift[3], const int64_t i[3])
{
    int64_t p[3];
    for (int a = 0; a < 3; a++)
        p[a] = ((i[a] + shift[a]) % in->padded[a] + in->padded[a]) % in->padded[a];
    return p[0] + in->padded[0] * (p[1] + in->padded[1] * p[2]);
}

/* Between the image [N][2] and the padded grid [coeffs][2] under the shift, in double: to_padded,
 * padded = S_s Z image (padded zeroed first); else image = Z^H S_s^H padded. */
static inline void wref_remap(const mr_wavelet_info *in, const int64_t shift[3], double *image, double *padded,
                              int to_padded)
{
    if (to_padded)
        memset(padded, 0, (size_t)in->coeffs * 2 * sizeof(double));
    const int64_t *n = in->matrix;
    for (int64_t iz = 0; iz < n[2]; iz++)
        for (int64_t iy = 0; iy < n[1]; iy++)
            for (int64_t ix = 0; ix < n[0]; ix++) {
                const int64_t i[3] = {ix, iy, iz}, v = ix + n[0] * (iy + n[1] * iz), p = wref_padded_index(in, shift, i);
                double *from = to_padded ? image + 2 * v : padded + 2 * p, *to = to_padded ? padded + 2 * p : image + 2 * v;
                to[0] = from[0];
                to[1] = from[1];
            }
}

static inline double *wref_double(const float *x, int64_t n)
{
    double *d = malloc((size_t)n * sizeof(double));
    for (int64_t k = 0; k < n; k++)
        d[k] = x[k];
    return d;
}

/* c [coeffs][2] = W_s x, x the image [N][2] (float). */
static inline void wref_forward(const mr_wavelet_info *in, const int64_t shift[3], const float *x, double *c)
{
    double h[2 * MR_WAVELET_MAX_ORDER], g[2 * MR_WAVELET_MAX_ORDER];
    wref_filters(in, h, g);
    double *xd = wref_double(x, 2 * in->matrix[0] * in->matrix[1] * in->matrix[2]);
    wref_remap(in, shift, xd, c, 1);
    for (int j = 0; j < in->max_levels; j++)
        for (int a = 0; a < 3; a++)
            if (in->levels[a] > j)
                wref_level(in, c, j, a, h, g, 0);
    free(xd);
}

/* x [N][2] = W_s^H c, c [coeffs][2] (float). */
static inline void wref_adjoint(const mr_wavelet_info *in, const int64_t shift[3], const float *c, double *x)
{
    double h[2 * MR_WAVELET_MAX_ORDER], g[2 * MR_WAVELET_MAX_ORDER];
    wref_filters(in, h, g);
    double *v = wref_double(c, 2 * in->coeffs);
    for (int j = in->max_levels - 1; j >= 0; j--)
        for (int a = 2; a >= 0; a--)
            if (in->levels[a] > j)
                wref_level(in, v, j, a, h, g, 1);
    wref_remap(in, shift, x, v, 0);
    free(v);
}

/* Every property of one operator on its backend, with the given shift set first. */
static inline void wavelet_check(const char *label, mr_linop *w, const int64_t shift[3], uint64_t *rng)
{
    char what[320];
    mr_wavelet_info in;
    CHECK_OK(mr_linop_wavelet_info(w, &in));
    CHECK_OK(mr_linop_wavelet_set_shift(w, shift));
    const int64_t nx = in.matrix[0] * in.matrix[1] * in.matrix[2], nc = in.coeffs;
    CHECK(mr_linop_dom_size(w) == nx && mr_linop_cod_size(w) == nc);
    const int unitary = nx == nc;
    float *x = test_random_normal(rng, 2 * nx), *c = test_random_normal(rng, 2 * nc);
    float *wx = malloc((size_t)nc * 2 * sizeof(float)), *whc = malloc((size_t)nx * 2 * sizeof(float));
    float *xx = malloc((size_t)nx * 2 * sizeof(float)), *cc = malloc((size_t)nc * 2 * sizeof(float));
    float *ccc = malloc((size_t)nc * 2 * sizeof(float));
    double *ref_c = malloc((size_t)nc * 2 * sizeof(double)), *ref_x = malloc((size_t)nx * 2 * sizeof(double));

    lc_check(label, w, rng, 1e-5, 1e-6);
    CHECK_OK(lc_apply(w, mr_linop_forward, x, nx, wx, nc));
    CHECK_OK(lc_apply(w, mr_linop_adjoint, c, nc, whc, nx));
    wref_forward(&in, shift, x, ref_c);
    wref_adjoint(&in, shift, c, ref_x);
    snprintf(what, sizeof what, "%s: forward vs float64 reference", label);
    CHECK_LE(what, test_rel_l2(wx, ref_c, 2 * nc), 1e-5);
    snprintf(what, sizeof what, "%s: adjoint vs float64 reference", label);
    CHECK_LE(what, test_rel_l2(whc, ref_x, 2 * nx), 1e-5);

    snprintf(what, sizeof what, "%s: | ||W x|| / ||x|| - 1 |", label);
    CHECK_LE(what, fabs(lc_norm(wx, nc) / lc_norm(x, nx) - 1.0), 1e-6);
    CHECK_OK(lc_apply(w, mr_linop_adjoint, wx, nc, xx, nx));
    snprintf(what, sizeof what, "%s: W^H W x = x (perfect reconstruction)", label);
    CHECK_LE(what, test_rel_l2_ff(xx, x, 2 * nx), 1e-6);
    CHECK_OK(lc_apply(w, mr_linop_forward, whc, nx, cc, nc));
    if (unitary) {
        snprintf(what, sizeof what, "%s: W W^H c = c (unitary, P = N)", label);
        CHECK_LE(what, test_rel_l2_ff(cc, c, 2 * nc), 1e-6);
    } else {
        CHECK_OK(lc_apply(w, mr_linop_adjoint, cc, nc, xx, nx));
        CHECK_OK(lc_apply(w, mr_linop_forward, xx, nx, ccc, nc));
        snprintf(what, sizeof what, "%s: W W^H is a projection (idempotent)", label);
        CHECK_LE(what, test_rel_l2_ff(ccc, cc, 2 * nc), 1e-6);
        snprintf(what, sizeof what, "%s: ||W W^H c|| < ||c|| for random c (P > N)", label);
        CHECK_LE(what, lc_norm(cc, nc) / lc_norm(c, nc), 1.0 - 1e-6);
    }
    free(x);
    free(c);
    free(wx);
    free(whc);
    free(xx);
    free(cc);
    free(ccc);
    free(ref_c);
    free(ref_x);
}

/* A backend of one kind (its index the first usable), NULL after a failed check. */
static inline mr_backend *wc_backend(mr_device_kind kind, int threads)
{
    mr_backend *be = NULL;
    const mr_device_sel sel = {.kind = kind, .index = -1};
    CHECK_OK(mr_backend_create(&be, sel, threads));
    return be;
}

/* 1D (along x, y or z), 2D and 3D; even, odd and prime sizes; padded and not; orders 1 to 10; automatic
 * and explicit levels (64x64 db4 with 6 levels filters lines of 2 with 8 taps: several turns). */
typedef struct {
    int64_t matrix[3];
    int order, levels;
} wc_case;
static const wc_case wc_cases[] = {
    {{64, 1, 1}, 4, 0},   {{1, 40, 1}, 2, 0},   {{1, 1, 33}, 2, 0},   {{64, 48, 1}, 4, 0},  {{100, 60, 1}, 4, 0},
    {{97, 31, 1}, 3, 0},  {{37, 23, 1}, 1, 0},  {{33, 20, 17}, 2, 0}, {{16, 16, 16}, 4, 0}, {{1, 37, 23}, 1, 0},
    {{80, 41, 1}, 10, 0}, {{64, 64, 1}, 4, 6},  {{50, 30, 1}, 6, 0},  {{29, 24, 19}, 1, 3}, {{48, 1, 40}, 5, 0},
    {{67, 45, 38}, 4, 0}, {{256, 256, 1}, 4, 0},
};

/* Every case on be with no shift, a random one and an arbitrary one (negative, past P): the checks of
 * wavelet_check and, with host (another backend) given, forward and adjoint agreement with it within
 * against_bound (tests/linop_check.h lc_agree; the normals, copies, within 1e-6). */
static inline void wc_run_cases(mr_backend *be, mr_backend *host, uint64_t *rng, double against_bound)
{
    for (size_t c = 0; c < sizeof wc_cases / sizeof wc_cases[0]; c++) {
        const wc_case *k = &wc_cases[c];
        const mr_wavelet_opts o = {k->order, k->levels};
        mr_linop *w = NULL, *ref = NULL;
        CHECK_OK(mr_linop_wavelet_create(&w, be, k->matrix, &o));
        if (host)
            CHECK_OK(mr_linop_wavelet_create(&ref, host, k->matrix, &o));
        mr_wavelet_info in;
        if (w && mr_linop_wavelet_info(w, &in) == MR_OK) {
            int64_t shifts[3][3] = {{0, 0, 0}, {0, 0, 0}, {-7, 1001, 3}};
            mr_wavelet_random_shift(rng, &in, shifts[1]);
            for (int s = 0; s < 3; s++) {
                char label[200];
                snprintf(label, sizeof label, "%s db%d %lldx%lldx%lld (levels %d %d %d, padded %lldx%lldx%lld) shift %lld %lld %lld",
                         mr_backend_on_gpu(be) ? "gpu" : "cpu", k->order, (long long)k->matrix[0],
                         (long long)k->matrix[1], (long long)k->matrix[2], in.levels[0], in.levels[1], in.levels[2],
                         (long long)in.padded[0], (long long)in.padded[1], (long long)in.padded[2],
                         (long long)shifts[s][0], (long long)shifts[s][1], (long long)shifts[s][2]);
                wavelet_check(label, w, shifts[s], rng);
                if (ref && mr_linop_wavelet_set_shift(ref, shifts[s]) == MR_OK)
                    lc_agree(label, w, ref, rng, against_bound, 1e-6);
            }
        }
        mr_linop_free(w);
        mr_linop_free(ref);
    }
}

static inline double wc_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Print (never check) the time of forward + adjoint of db4 on be at 128^2, 256^2, 64^3 and 128^3, a
 * new random shift each time as cycle spinning does: the mean over reps applications queued back to
 * back, and the best single one (waited for each time). */
static inline void wc_bench(mr_backend *be)
{
    const int64_t sizes[4][3] = {{128, 128, 1}, {256, 256, 1}, {64, 64, 64}, {128, 128, 128}};
    const mr_vecops *v = mr_backend_vecops(be);
    for (int c = 0; c < 4; c++) {
        mr_linop *w = NULL;
        mr_wavelet_info in;
        CHECK_OK(mr_linop_wavelet_create(&w, be, sizes[c], NULL));
        if (!w || mr_linop_wavelet_info(w, &in) != MR_OK)
            continue;
        const int64_t n = mr_linop_dom_size(w), nc = mr_linop_cod_size(w);
        float *x = mr_backend_alloc_zero(be, n), *y = mr_backend_alloc(be, nc), one[2];
        const int reps = mr_backend_on_gpu(be) ? 100 : n > 1000000 ? 5 : n > 100000 ? 20 : 100;
        uint64_t seed = 1;
        double mean = 0, best = 1e30;
        for (int pass = 0; x && y && pass < 2; pass++) { /* pass 0: back to back; 1: each waited for */
            CHECK_OK(v->to_host(v->ctx, 1, one, y)); /* warm up and wait */
            const double t0 = wc_now();
            for (int r = 0; r < reps; r++) {
                const double t1 = wc_now();
                int64_t s[3];
                mr_wavelet_random_shift(&seed, &in, s);
                CHECK_OK(mr_linop_wavelet_set_shift(w, s));
                CHECK_OK(mr_linop_forward(w, x, y));
                CHECK_OK(mr_linop_adjoint(w, y, x));
                if (pass == 1) {
                    CHECK_OK(v->to_host(v->ctx, 1, one, x));
                    best = fmin(best, wc_now() - t1);
                }
            }
            if (pass == 0) {
                CHECK_OK(v->to_host(v->ctx, 1, one, x));
                mean = (wc_now() - t0) / reps;
            }
        }
        printf("bench: db4 %lldx%lldx%lld (levels %d %d %d) forward + adjoint: mean %.4f ms, best %.4f ms (%d reps, %s)\n",
               (long long)sizes[c][0], (long long)sizes[c][1], (long long)sizes[c][2], in.levels[0], in.levels[1],
               in.levels[2], 1e3 * mean, 1e3 * best, reps, mr_backend_name(be));
        v->release(v->ctx, x);
        v->release(v->ctx, y);
        mr_linop_free(w);
    }
}

#endif
