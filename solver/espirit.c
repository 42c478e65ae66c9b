/* ESPIRiT coil maps on the host (see espirit.h). */
#include "espirit.h"

#include <complex.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "../base/grid.h"
#include "../base/log.h"
#include "coilmaps.h"
#include "cplx_inline.h"
#include "herm_eig.h"

typedef mr_cplx cplx;

/* the gridding box exceeds the calibration region by this many points per side: its edge, where the
 * gridding kernel lacks the samples outside the box, is cut away */
#define GRID_PAD 2
/* power iteration stops when the iterate moves less than this (squared norm) */
#define POWER_TOL 1e-12

void mr_espirit_opts_default(mr_espirit_opts *o)
{
    memset(o, 0, sizeof *o);
    o->threshold = 3e-3;
    o->noise_floor = 4;
    o->crop = 0.9;
    o->iters = 30;
}

void mr_espirit_calib_free(mr_espirit_calib *c)
{
    if (!c)
        return;
    free(c->coef);
    free(c->vref);
    free(c->eig);
    c->coef = c->vref = c->eig = NULL;
}

static int active(const int64_t matrix[3], int a) { return matrix[a] > 1; }

/* out = the DFT along axis a of in (dims din, complex), table [nout][din[a]]: out[.., i, ..] =
 * sum_j tab[i][j] in[.., j, ..]; dout = din with dout[a] = nout. */
static void dft_axis(const cplx *in, const int64_t din[3], int a, int64_t nout, const cplx *tab, cplx *out, int nt)
{
    int64_t dout[3] = {din[0], din[1], din[2]};
    dout[a] = nout;
    const int64_t stride_in = a == 0 ? 1 : (a == 1 ? din[0] : din[0] * din[1]);
    const int64_t total = dout[0] * dout[1] * dout[2];
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t o = 0; o < total; o++) {
        const int64_t x = o % dout[0], y = (o / dout[0]) % dout[1], z = o / (dout[0] * dout[1]);
        const int64_t pos[3] = {x, y, z};
        const int64_t i = pos[a];
        int64_t base = 0; /* the input index with coordinate a = 0 */
        for (int b = 2; b >= 0; b--)
            base = base * din[b] + (b == a ? 0 : pos[b]);
        cplx s = 0;
        for (int64_t j = 0; j < din[a]; j++)
            s += mr_cmul(tab[i * din[a] + j], in[base + j * stride_in]);
        out[o] = s;
    }
}

/* X_c(kappa), kappa_a = i - calib_a / 2, of the coil images imgs [C][grid] (voxel j at (j - grid/2)/grid):
 * X [C][calib] */
static mr_status calib_kspace(const float *imgs, int64_t C, const int64_t grid[3], const int64_t calib[3], int nt,
                              cplx *X)
{
    const int64_t ng = grid[0] * grid[1] * grid[2], nc = calib[0] * calib[1] * calib[2];
    int64_t cap = ng > nc ? ng : nc;
    cplx *a = malloc((size_t)cap * sizeof *a), *b = malloc((size_t)cap * sizeof *b),
         *tab = malloc((size_t)(64 * 64) * sizeof *tab);
    if (!a || !b || !tab || calib[0] * grid[0] > 64 * 64 || calib[1] * grid[1] > 64 * 64 ||
        calib[2] * grid[2] > 64 * 64) {
        free(a);
        free(b);
        free(tab);
        return mr_error(MR_ENOMEM, "ESPIRiT: out of memory (or a calibration region beyond 64)");
    }
    for (int64_t c = 0; c < C; c++) {
        for (int64_t v = 0; v < ng; v++)
            a[v] = CMPLX(imgs[2 * (c * ng + v)], imgs[2 * (c * ng + v) + 1]);
        int64_t d[3] = {grid[0], grid[1], grid[2]};
        cplx *src = a, *dst = b;
        for (int ax = 0; ax < 3; ax++) {
            if (grid[ax] == 1)
                continue;
            for (int64_t i = 0; i < calib[ax]; i++)
                for (int64_t j = 0; j < grid[ax]; j++) {
                    const double kappa = (double)(i - calib[ax] / 2), r = (double)(j - grid[ax] / 2) / (double)grid[ax];
                    tab[i * grid[ax] + j] = cexp(-2 * M_PI * I * kappa * r);
                }
            dft_axis(src, d, ax, calib[ax], tab, dst, nt);
            d[ax] = calib[ax];
            cplx *t = src;
            src = dst;
            dst = t;
        }
        memcpy(X + c * nc, src, (size_t)nc * sizeof *X);
    }
    free(a);
    free(b);
    free(tab);
    return MR_OK;
}

/* The kernels kept: the eigenvalues of G >= threshold x the largest and >= noise_floor x the median (the
 * median lies among the eigenvalues of the noise when the signal subspace is less than half of them). */
typedef struct {
    double threshold, noise_floor;
} kept_rule;

static int64_t kept_count(const double *w, int64_t n, void *ctx)
{
    const kept_rule *k = ctx;
    const double floor_abs = fmax(k->threshold * w[n - 1], k->noise_floor * w[n / 2]);
    int64_t r = 0;
    while (r < n && w[n - 1 - r] >= floor_abs && w[n - 1 - r] > 0)
        r++;
    return r;
}

/* An eigenvector's global phase is arbitrary and the eigen-solver's choice jumps with one-ulp
 * changes of the data; fix it: the first coil holding at least half the largest magnitude is made
 * real and positive (a half, not the largest, so that coils of equal magnitude cannot swap). */
static void fix_global_phase(cplx *v, int64_t C)
{
    double amax = 0;
    for (int64_t c = 0; c < C; c++)
        amax = fmax(amax, cabs(v[c]));
    int64_t ref = 0;
    while (ref < C - 1 && cabs(v[ref]) < 0.5 * amax)
        ref++;
    const double a = cabs(v[ref]);
    if (!(a > 0))
        return;
    const cplx rot = conj(v[ref]) / a;
    for (int64_t c = 0; c < C; c++)
        v[c] *= rot;
}

/* G = sum_q a_q a_q^H over the patches a_q = [X_c(q + p)]_{(c, p)} of the calibration region, q in
 * Q = [0, cal - kern]^d: column (c, p) is c K + p. With s = q + p and Delta = p - p',
 *     G[(c, p), (c', p')] = sum_{s in p + Q} g(s),   g(s) = X_c(s) conj(X_c'(s - Delta)),
 * a box sum of g, read from its summed-area table: one table per (c, c', Delta) instead of one product
 * over the patches per entry (in 3D, 24^3 and kernel 4: 2.5x fewer operations; in 2D 5x). */
static mr_status gram_matrix(const cplx *X, int64_t C, const int64_t cal[3], const int64_t kern[3], int nt, cplx *G)
{
    const int64_t K = kern[0] * kern[1] * kern[2], n = K * C, nc = cal[0] * cal[1] * cal[2];
    const int64_t span[3] = {2 * kern[0] - 1, 2 * kern[1] - 1, 2 * kern[2] - 1};
    const int64_t nd = span[0] * span[1] * span[2], ntask = C * C * nd;
    const int64_t rows[3] = {cal[0] - kern[0] + 1, cal[1] - kern[1] + 1, cal[2] - kern[2] + 1};
    const int64_t e[3] = {cal[0] + 1, cal[1] + 1, cal[2] + 1}; /* the table has a zero border */
    int failed = 0;
#pragma omp parallel num_threads(nt)
    {
        cplx *tab = calloc((size_t)(e[0] * e[1] * e[2]), sizeof *tab);
        if (!tab) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 1)
        for (int64_t task = 0; task < ntask; task++) {
            const int64_t c = task / (C * nd), c2 = (task / nd) % C, d = task % nd;
            /* c' <= c; for c' = c only Delta >= 0 (lexicographically): the rest are the conjugates */
            if (!tab || c2 > c || (c2 == c && d < nd / 2))
                continue;
            const int64_t D[3] = {d % span[0] - (kern[0] - 1), (d / span[0]) % span[1] - (kern[1] - 1),
                                  d / (span[0] * span[1]) - (kern[2] - 1)};
            /* the summed-area table T(z, y, x) = sum of g over s < (z, y, x), border included */
            for (int64_t z = 0; z < cal[2]; z++)
                for (int64_t y = 0; y < cal[1]; y++) {
                    cplx run = 0;
                    for (int64_t x = 0; x < cal[0]; x++) {
                        const int64_t sx = x - D[0], sy = y - D[1], sz = z - D[2];
                        if (sx >= 0 && sy >= 0 && sz >= 0 && sx < cal[0] && sy < cal[1] && sz < cal[2])
                            run += mr_cmulc(X[c * nc + (z * cal[1] + y) * cal[0] + x],
                                            X[c2 * nc + (sz * cal[1] + sy) * cal[0] + sx]);
                        const int64_t o = ((z + 1) * e[1] + (y + 1)) * e[0] + (x + 1);
                        tab[o] = run + tab[o - e[0]] + tab[o - e[0] * e[1]] - tab[o - e[0] - e[0] * e[1]];
                    }
                }
            for (int64_t p = 0; p < K; p++) {
                const int64_t px = p % kern[0], py = (p / kern[0]) % kern[1], pz = p / (kern[0] * kern[1]);
                const int64_t qx = px - D[0], qy = py - D[1], qz = pz - D[2]; /* p' = p - Delta */
                if (qx < 0 || qy < 0 || qz < 0 || qx >= kern[0] || qy >= kern[1] || qz >= kern[2])
                    continue;
                /* the box [p, p + rows) per axis: inclusion-exclusion of its 8 corners */
                const int64_t lo[3] = {px, py, pz}, hi[3] = {px + rows[0], py + rows[1], pz + rows[2]};
                cplx box = 0;
                for (int corner = 0; corner < 8; corner++) {
                    int64_t at[3];
                    int sign = 1;
                    for (int a = 0; a < 3; a++) {
                        at[a] = (corner >> a) & 1 ? hi[a] : lo[a];
                        sign = (corner >> a) & 1 ? sign : -sign;
                    }
                    box += sign * tab[(at[2] * e[1] + at[1]) * e[0] + at[0]]; /* sign (-1)^(lo corners) */
                }
                const int64_t i = c * K + p, j = c2 * K + (qz * kern[1] + qy) * kern[0] + qx;
                G[i * n + j] = box;
                G[j * n + i] = conj(box);
            }
        }
        free(tab);
    }
    return failed ? mr_error(MR_ENOMEM, "ESPIRiT: out of memory for the Gram matrix") : MR_OK;
}

/* The calibration region cal (given, or where the trajectory samples the centre fully), the kernel kern
 * (k per active axis) and the gridding box grid (cal plus GRID_PAD per side). */
static mr_status calib_geometry(const int64_t matrix[3], const float *traj, int64_t m, const mr_espirit_opts *o, int k,
                                int64_t cal[3], int64_t kern[3], int64_t grid[3])
{
    if (o->calib > 0) {
        for (int a = 0; a < 3; a++)
            cal[a] = active(matrix, a) ? (o->calib < matrix[a] ? o->calib : matrix[a]) : 1;
    } else {
        mr_coilmaps_opts co;
        mr_coilmaps_opts_default(&co);
        co.calib_max = o->calib_max;
        mr_status st = mr_coilmaps_calib_size(matrix, traj, m, &co, cal);
        if (st != MR_OK)
            return st;
    }
    for (int a = 0; a < 3; a++) {
        kern[a] = active(matrix, a) ? k : 1;
        grid[a] = active(matrix, a) ? cal[a] + 2 * GRID_PAD : 1;
        if (active(matrix, a) && cal[a] < kern[a] + 1)
            return mr_error(MR_EINVAL, "ESPIRiT: calibration region %lld on axis %d is not larger than the kernel %lld",
                            (long long)cal[a], a, (long long)kern[a]);
    }
    return MR_OK;
}

/* The phase reference vref: the dominant eigenvector of S = sum_kappa X X^H (S zeroed by the caller; ws:
 * C eigenvalues), its global phase fixed. */
static mr_status phase_reference(const cplx *X, int64_t C, int64_t nc, cplx *S, double *ws, double *vref)
{
    for (int64_t v = 0; v < nc; v++)
        for (int64_t i = 0; i < C; i++)
            for (int64_t j = 0; j < C; j++)
                S[i * C + j] += mr_cmulc(X[i * nc + v], X[j * nc + v]);
    mr_status st = mr_herm_eig(C, (double *)S, ws, vref, 1, 1);
    if (st != MR_OK)
        return st;
    if (!(ws[C - 1] > 0))
        return mr_error(MR_EINVAL, "ESPIRiT: the calibration data hold no signal");
    fix_global_phase((cplx *)vref, C);
    return MR_OK;
}

/* P = sum over the kept eigenvectors (the r rows of V, n x n) of v v^H; coef (zeroed by the caller) =
 * w(Delta) from P: coef[Delta][c][c'] = sum over p - p' = Delta of P[(c, p), (c', p')] / K. */
static void kernel_weights(const cplx *V, int64_t r, int64_t C, const int64_t kern[3], const int64_t span[3], int nt,
                           cplx *P, cplx *coef)
{
    const int64_t K = kern[0] * kern[1] * kern[2], n = K * C;
#pragma omp parallel for schedule(dynamic, 4) num_threads(nt)
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            cplx s = 0;
            for (int64_t t = 0; t < r; t++)
                s += mr_cmulc(V[t * n + i], V[t * n + j]);
            P[i * n + j] = s;
        }
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t cc = 0; cc < C * C; cc++) {
        const int64_t c = cc / C, c2 = cc % C;
        for (int64_t p = 0; p < K; p++) {
            const int64_t px = p % kern[0], py = (p / kern[0]) % kern[1], pz = p / (kern[0] * kern[1]);
            for (int64_t p2 = 0; p2 < K; p2++) {
                const int64_t qx = p2 % kern[0], qy = (p2 / kern[0]) % kern[1], qz = p2 / (kern[0] * kern[1]);
                const int64_t d = ((pz - qz + kern[2] - 1) * span[1] + (py - qy + kern[1] - 1)) * span[0] +
                                  (px - qx + kern[0] - 1);
                coef[d * C * C + cc] += P[(c * K + p) * n + c2 * K + p2] / (double)K;
            }
        }
    }
}

mr_status mr_espirit_calibrate(const int64_t matrix[3], const float *traj, int64_t m, const float *data, int64_t C,
                               const mr_espirit_opts *o, mr_espirit_calib *out)
{
    mr_espirit_opts def;
    if (!o) {
        mr_espirit_opts_default(&def);
        o = &def;
    }
    memset(out, 0, sizeof *out);
    mr_status st = mr_matrix_check(matrix, "ESPIRiT: image matrix");
    if (st != MR_OK)
        return st;
    if (C < 1 || C > MR_MAX_COILS || m < 1 || !traj || !data)
        return mr_error(MR_EINVAL, "ESPIRiT: %lld coils, %lld samples", (long long)C, (long long)m);
    const int is3d = matrix[2] > 1;
    const int k = o->kernel > 0 ? o->kernel : (is3d ? 4 : 6);
    if (k < 2 || k > 8 || !(o->threshold > 0 && o->threshold < 1) || !(o->noise_floor >= 0) ||
        !(o->crop >= 0 && o->crop < 1) || o->iters < 1)
        return mr_error(MR_EINVAL, "ESPIRiT: kernel %d (2..8), threshold %g (0..1), noise floor %g (>= 0), crop %g "
                                   "[0..1), iterations %d",
                        k, o->threshold, o->noise_floor, o->crop, o->iters);
    const int nt = o->threads > 0 ? o->threads : omp_get_max_threads();
    double t0 = mr_now();
    int64_t cal[3], grid[3], kern[3];
    if ((st = calib_geometry(matrix, traj, m, o, k, cal, kern, grid)) != MR_OK)
        return st;
    const int64_t ng = grid[0] * grid[1] * grid[2], nc = cal[0] * cal[1] * cal[2];
    const int64_t K = kern[0] * kern[1] * kern[2], n = K * C;
    const int64_t rows[3] = {cal[0] - kern[0] + 1, cal[1] - kern[1] + 1, cal[2] - kern[2] + 1};
    const int64_t R = rows[0] * rows[1] * rows[2];
    float *imgs = malloc((size_t)(ng * C) * 2 * sizeof *imgs);
    cplx *X = malloc((size_t)(nc * C) * sizeof *X),
         *G = malloc((size_t)(n * n) * sizeof *G), *V = NULL, *S = calloc((size_t)(C * C), sizeof *S),
         *P = NULL;
    double *w = malloc((size_t)n * sizeof *w), *ws = malloc((size_t)C * sizeof *ws);
    out->vref = malloc((size_t)C * 2 * sizeof *out->vref);
    out->eig = malloc((size_t)n * sizeof *out->eig);
    if (!imgs || !X || !G || !S || !w || !ws || !out->vref || !out->eig) {
        st = mr_error(MR_ENOMEM, "ESPIRiT: out of memory for a %lldx%lld calibration matrix", (long long)R,
                      (long long)n);
        goto done;
    }
    if ((st = mr_coilmaps_grid(matrix, traj, m, data, C, grid, 0, o->threads, imgs)) != MR_OK ||
        (st = calib_kspace(imgs, C, grid, cal, nt, X)) != MR_OK)
        goto done;
    out->seconds_grid = mr_now() - t0;
    t0 = mr_now();
    if ((st = phase_reference(X, C, nc, S, ws, out->vref)) != MR_OK ||
        (st = gram_matrix(X, C, cal, kern, nt, G)) != MR_OK)
        goto done;
    out->seconds_gram = mr_now() - t0;
    t0 = mr_now();
    V = malloc((size_t)(n * n) * sizeof *V);
    if (!V) {
        st = mr_error(MR_ENOMEM, "ESPIRiT: out of memory for %lld eigenvectors", (long long)n);
        goto done;
    }
    kept_rule rule = {o->threshold, o->noise_floor};
    int64_t r = 0;
    if ((st = mr_herm_eig_top(n, (double *)G, w, (double *)V, kept_count, &rule, &r, o->threads)) != MR_OK)
        goto done;
    if (!(w[n - 1] > 0)) {
        st = mr_error(MR_EINVAL, "ESPIRiT: the calibration matrix is zero");
        goto done;
    }
    for (int64_t i = 0; i < n; i++)
        out->eig[i] = w[n - 1 - i];
    out->seconds_eig = mr_now() - t0;
    /* P = sum over the kept eigenvectors (the r rows of V) of v v^H; w(Delta) from P */
    P = malloc((size_t)(n * n) * sizeof *P);
    const int64_t span[3] = {2 * kern[0] - 1, 2 * kern[1] - 1, 2 * kern[2] - 1};
    const int64_t nd = span[0] * span[1] * span[2];
    cplx *coef = calloc((size_t)(nd * C * C), sizeof *coef);
    out->coef = (double *)coef;
    if (!P || !coef) {
        st = mr_error(MR_ENOMEM, "ESPIRiT: out of memory");
        goto done;
    }
    kernel_weights(V, r, C, kern, span, nt, P, coef);
    out->ncoils = C;
    for (int a = 0; a < 3; a++) {
        out->calib[a] = cal[a];
        out->kernel[a] = kern[a];
        out->span[a] = span[a];
    }
    out->ncols = n;
    out->nrows = R;
    out->nkernels = r;
    mr_log(MR_LOG_DEBUG, "ESPIRiT: calibration %lldx%lldx%lld, kernel %lldx%lldx%lld, %lld patches x %lld columns, "
                         "%lld kernels kept (threshold %g); grid %.3f s, Gram %.3f s, eigen %.3f s",
           (long long)cal[0], (long long)cal[1], (long long)cal[2], (long long)kern[0], (long long)kern[1],
           (long long)kern[2], (long long)R, (long long)n, (long long)r, o->threshold, out->seconds_grid,
           out->seconds_gram, out->seconds_eig);
done:
    free(imgs);
    free(X);
    free(G);
    free(V);
    free(S);
    free(P);
    free(w);
    free(ws);
    if (st != MR_OK)
        mr_espirit_calib_free(out);
    return st;
}

/* out[i] += in[i] e, i < n */
static void accumulate(mr_cplx *out, const mr_cplx *in, mr_cplx e, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        out[i] += mr_cmul(in[i], e);
}

/* Dominant eigenvector of the Hermitian W (C x C) by power iteration from s (unit norm, replaced);
 * returns the Rayleigh quotient s^H W s. */
static double power_iteration(const cplx *W, int64_t C, cplx *s, cplx *t, int iters)
{
    for (int it = 0; it < iters; it++) {
        double nrm = 0;
        for (int64_t i = 0; i < C; i++) {
            cplx v = 0;
            for (int64_t j = 0; j < C; j++)
                v += mr_cmul(W[i * C + j], s[j]);
            t[i] = v;
            nrm += mr_cabs2(v);
        }
        nrm = sqrt(nrm);
        if (!(nrm > 0))
            return 0;
        double change = 0;
        for (int64_t i = 0; i < C; i++) {
            const cplx v = t[i] / nrm;
            change += mr_cabs2(v - s[i]);
            s[i] = v;
        }
        if (change < POWER_TOL)
            break;
    }
    double lam = 0;
    for (int64_t i = 0; i < C; i++) {
        cplx v = 0;
        for (int64_t j = 0; j < C; j++)
            v += mr_cmul(W[i * C + j], s[j]);
        lam += creal(mr_cmulc(v, s[i]));
    }
    return lam;
}

mr_status mr_espirit_maps(const mr_espirit_calib *cal, const int64_t matrix[3], const mr_espirit_opts *o, float *maps,
                          float *eig)
{
    mr_espirit_opts def;
    if (!o) {
        mr_espirit_opts_default(&def);
        o = &def;
    }
    mr_status st = mr_matrix_check(matrix, "ESPIRiT: image matrix");
    if (st != MR_OK)
        return st;
    if (!cal || !cal->coef || !maps || o->iters < 1 || !(o->crop >= 0 && o->crop < 1))
        return mr_error(MR_EINVAL, "ESPIRiT maps: no calibration, or iterations %d, crop %g", o->iters, o->crop);
    for (int a = 0; a < 3; a++)
        if ((matrix[a] > 1) != (cal->kernel[a] > 1) && !(matrix[a] == 1 && cal->kernel[a] == 1))
            return mr_error(MR_EINVAL, "ESPIRiT maps: the calibration's dimensions do not match the matrix %lldx%lldx%lld",
                            (long long)matrix[0], (long long)matrix[1], (long long)matrix[2]);
    const int64_t C = cal->ncoils, CC = C * C, N = matrix[0] * matrix[1] * matrix[2];
    const int64_t *span = cal->span;
    const cplx *coef = (const cplx *)cal->coef, *vref = (const cplx *)cal->vref;
    const int nt = o->threads > 0 ? o->threads : omp_get_max_threads();
    /* per-axis phase tables E_a[d][j] = e^{+i 2 pi Delta (j - N/2)/N}, Delta = d - (span - 1)/2 */
    cplx *E[3] = {NULL, NULL, NULL};
    cplx *T1 = malloc((size_t)(span[2] * span[1] * matrix[0] * CC) * sizeof *T1);
    for (int a = 0; a < 3; a++) {
        E[a] = malloc((size_t)(span[a] * matrix[a]) * sizeof *E[a]);
        if (!E[a])
            continue;
        for (int64_t d = 0; d < span[a]; d++)
            for (int64_t j = 0; j < matrix[a]; j++) {
                const double delta = (double)(d - (span[a] - 1) / 2), r = (double)(j - matrix[a] / 2) / (double)matrix[a];
                E[a][d * matrix[a] + j] = cexp(2 * M_PI * I * delta * r);
            }
    }
    if (!T1 || !E[0] || !E[1] || !E[2]) {
        st = mr_error(MR_ENOMEM, "ESPIRiT maps: out of memory");
        goto done;
    }
    /* x first: T1[dz][dy][x][cc] = sum_dx w[dz][dy][dx][cc] E_x[dx][x] */
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t zy = 0; zy < span[2] * span[1]; zy++)
        for (int64_t x = 0; x < matrix[0]; x++) {
            cplx *t = T1 + (zy * matrix[0] + x) * CC;
            memset(t, 0, (size_t)CC * sizeof *t);
            for (int64_t dx = 0; dx < span[0]; dx++)
                accumulate(t, coef + (zy * span[0] + dx) * CC, E[0][dx * matrix[0] + x], CC);
        }
    int failed = 0;
#pragma omp parallel num_threads(nt)
    {
        cplx *T2 = malloc((size_t)(span[2] * matrix[0] * CC) * sizeof *T2), *W = malloc((size_t)CC * sizeof *W),
             *s = malloc((size_t)C * sizeof *s), *t = malloc((size_t)C * sizeof *t);
        if (!T2 || !W || !s || !t) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 1)
        for (int64_t y = 0; y < matrix[1]; y++) {
            if (!T2 || !W || !s || !t)
                continue;
            /* y next: T2[dz][x][cc] = sum_dy T1[dz][dy][x][cc] E_y[dy][y] */
            for (int64_t dz = 0; dz < span[2]; dz++)
                for (int64_t x = 0; x < matrix[0]; x++) {
                    cplx *o2 = T2 + (dz * matrix[0] + x) * CC;
                    memset(o2, 0, (size_t)CC * sizeof *o2);
                    for (int64_t dy = 0; dy < span[1]; dy++)
                        accumulate(o2, T1 + ((dz * span[1] + dy) * matrix[0] + x) * CC, E[1][dy * matrix[1] + y], CC);
                }
            for (int64_t z = 0; z < matrix[2]; z++)
                for (int64_t x = 0; x < matrix[0]; x++) {
                    /* z last: W = sum_dz T2[dz][x] E_z[dz][z] */
                    memset(W, 0, (size_t)CC * sizeof *W);
                    for (int64_t dz = 0; dz < span[2]; dz++)
                        accumulate(W, T2 + (dz * matrix[0] + x) * CC, E[2][dz * matrix[2] + z], CC);
                    /* lambda_max <= tr W: below the crop no eigenvector is needed (most of the outside) */
                    double trace = 0;
                    for (int64_t c = 0; c < C; c++)
                        trace += creal(W[c * C + c]);
                    double lam = trace;
                    if (o->crop == 0 || trace >= o->crop) {
                        for (int64_t c = 0; c < C; c++)
                            s[c] = vref[c];
                        lam = power_iteration(W, C, s, t, o->iters);
                    }
                    cplx p = 0;
                    for (int64_t c = 0; c < C; c++)
                        p += conj(vref[c]) * s[c];
                    const cplx rot = cabs(p) > 0 ? conj(p) / cabs(p) : 1;
                    const int keep = lam >= o->crop && lam > 0;
                    const int64_t v = (z * matrix[1] + y) * matrix[0] + x;
                    for (int64_t c = 0; c < C; c++) {
                        const cplx mv = keep ? s[c] * rot : 0;
                        maps[2 * (c * N + v)] = (float)creal(mv);
                        maps[2 * (c * N + v) + 1] = (float)cimag(mv);
                    }
                    if (eig)
                        eig[v] = (float)lam;
                }
        }
        free(T2);
        free(W);
        free(s);
        free(t);
    }
    if (failed)
        st = mr_error(MR_ENOMEM, "ESPIRiT maps: out of memory");
done:
    free(T1);
    for (int a = 0; a < 3; a++)
        free(E[a]);
    return st;
}

mr_status mr_espirit_estimate(const int64_t matrix[3], const float *traj, int64_t m, const float *data, int64_t C,
                              const mr_espirit_opts *o, float *maps, int64_t calib_out[3])
{
    mr_espirit_calib cal;
    mr_status st = mr_espirit_calibrate(matrix, traj, m, data, C, o, &cal);
    if (st != MR_OK)
        return st;
    if (calib_out)
        memcpy(calib_out, cal.calib, sizeof cal.calib);
    st = mr_espirit_maps(&cal, matrix, o, maps, NULL);
    mr_espirit_calib_free(&cal);
    return st;
}
