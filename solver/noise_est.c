/* Noise level from the data: local noise subspaces of k-space neighbourhoods (see noise_est.h). */
#include "noise_est.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/grid.h"
#include "coilmaps.h"
#include "herm_eig.h"
#include "metrics.h"

/* neighbourhoods are dealt into this many interleaved groups for the standard error */
#define SPLIT 16
/* consecutive samples further apart than this (cycles/FOV) end a readout run */
#define RUN_STEP 1.0
/* a neighbourhood needs at least this many samples */
#define MIN_NBHD 8
/* bound on the noise values kept in memory (floats) */
#define MAX_VALUES ((int64_t)1 << 25)
/* the pilot estimate uses directions with lambda / tr G below this; the final one those whose
 * expected leakage is at most LEAK_TAU of the noise variance (a bias of sigma <= LEAK_TAU / 2) */
#define PILOT_EPS 1e-8
#define LEAK_TAU 0.01
/* MAD -> sigma of a Gaussian: 1 / Phi^{-1}(3/4) */
#define MAD_TO_SIGMA 1.482602218505602

void mr_noise_est_opts_default(mr_noise_est_opts *o)
{
    memset(o, 0, sizeof *o);
    o->segment = 32;
    o->cell = 4.0;
    o->eps = 1e-4;
    o->max_groups = 512;
}

const char *mr_noise_nbhd_name(mr_noise_nbhd_kind kind)
{
    return kind == MR_NOISE_NBHD_CELLS ? "k-space cells" : "readout segments";
}

void mr_noise_est_result_free(mr_noise_est_result *r)
{
    if (!r)
        return;
    free(r->sigma_coil);
    free(r->sigma_coil_se);
    r->sigma_coil = r->sigma_coil_se = NULL;
}

/* Neighbourhoods: nbhd i is samples idx[off[i] .. off[i + 1] - 1]. */
typedef struct {
    int64_t count;
    int64_t *off; /* [count + 1] */
    int64_t *idx; /* sample indices */
} nbhds;

static void nbhds_free(nbhds *n)
{
    free(n->off);
    free(n->idx);
    memset(n, 0, sizeof *n);
}

static double step_between(const float *traj, int64_t i, const int act[3])
{
    double s = 0;
    for (int a = 0; a < 3; a++)
        if (act[a]) {
            const double d = (double)traj[3 * (i + 1) + a] - traj[3 * i + a];
            s += d * d;
        }
    return sqrt(s);
}

/* Runs of consecutive samples closer than RUN_STEP, cut into pieces of `seg` (a remainder of at
 * least seg/2 is a piece of its own). *covered: samples in pieces. */
static mr_status readout_segments(const float *traj, int64_t m, const int act[3], int seg, nbhds *out, int64_t *covered)
{
    memset(out, 0, sizeof *out);
    *covered = 0;
    int64_t cap = m / MIN_NBHD + 2;
    out->off = malloc((size_t)(cap + 1) * sizeof *out->off);
    out->idx = malloc((size_t)m * sizeof *out->idx);
    if (!out->off || !out->idx) {
        nbhds_free(out);
        return mr_error(MR_ENOMEM, "noise estimate: out of memory for %lld samples", (long long)m);
    }
    int64_t n = 0, used = 0;
    out->off[0] = 0;
    for (int64_t a = 0; a < m;) {
        int64_t b = a + 1;
        while (b < m && step_between(traj, b - 1, act) <= RUN_STEP)
            b++;
        for (int64_t s = a; s < b;) {
            int64_t len = b - s < seg ? b - s : seg;
            if (len < seg && len < seg / 2 && s > a) /* a short remainder */
                break;
            if (len < MIN_NBHD)
                break;
            for (int64_t i = 0; i < len; i++)
                out->idx[used + i] = s + i;
            used += len;
            out->off[++n] = used;
            s += len;
        }
        a = b;
    }
    out->count = n;
    *covered = used;
    return MR_OK;
}

typedef struct {
    int64_t key, idx;
} keyed_sample;

static int cmp_key(const void *pa, const void *pb)
{
    const keyed_sample *a = pa, *b = pb;
    return a->key < b->key ? -1 : a->key > b->key ? 1 : (a->idx > b->idx) - (a->idx < b->idx);
}

/* The samples of each cube of edge `cell` (at most maxn of them, the first in sample order). */
static mr_status cell_groups(const float *traj, int64_t m, const int act[3], double cell, int64_t maxn, nbhds *out)
{
    memset(out, 0, sizeof *out);
    double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    for (int a = 0; a < 3; a++) {
        lo[a] = INFINITY;
        hi[a] = -INFINITY;
    }
    for (int64_t i = 0; i < m; i++)
        for (int a = 0; a < 3; a++) {
            lo[a] = fmin(lo[a], traj[3 * i + a]);
            hi[a] = fmax(hi[a], traj[3 * i + a]);
        }
    int64_t lo_cell[3], span[3];
    for (int a = 0; a < 3; a++) {
        lo_cell[a] = act[a] ? (int64_t)floor(lo[a] / cell) : 0;
        span[a] = act[a] ? (int64_t)floor(hi[a] / cell) - lo_cell[a] + 1 : 1;
    }
    keyed_sample *ks = malloc((size_t)m * sizeof *ks);
    out->off = malloc((size_t)(m + 1) * sizeof *out->off);
    out->idx = malloc((size_t)m * sizeof *out->idx);
    if (!ks || !out->off || !out->idx) {
        free(ks);
        nbhds_free(out);
        return mr_error(MR_ENOMEM, "noise estimate: out of memory for %lld samples", (long long)m);
    }
    for (int64_t i = 0; i < m; i++) {
        int64_t key = 0;
        for (int a = 2; a >= 0; a--) {
            const int64_t c = act[a] ? (int64_t)floor(traj[3 * i + a] / cell) - lo_cell[a] : 0;
            key = key * span[a] + c;
        }
        ks[i] = (keyed_sample){key, i};
    }
    qsort(ks, (size_t)m, sizeof *ks, cmp_key);
    int64_t n = 0, used = 0;
    out->off[0] = 0;
    for (int64_t a = 0; a < m;) {
        int64_t b = a + 1;
        while (b < m && ks[b].key == ks[a].key)
            b++;
        if (b - a >= MIN_NBHD) {
            const int64_t len = b - a < maxn ? b - a : maxn;
            for (int64_t i = 0; i < len; i++)
                out->idx[used + i] = ks[a + i].idx;
            used += len;
            out->off[++n] = used;
        }
        a = b;
    }
    out->count = n;
    free(ks);
    return MR_OK;
}

static double sinc_pi(double x)
{
    if (fabs(x) < 1e-8)
        return 1.0;
    const double px = M_PI * x;
    return sin(px) / px;
}

/* Per neighbourhood: its candidate noise directions u (lambda_u / tr G < eps), their leakage factors
 * ratio[u] = lambda_u / tr G, the projections |Re y|, |Im y| of every coil, vals [C][2 nnoise], and
 * each coil's energy ||d_c||^2 over the neighbourhood: the expected signal in direction u is
 * ratio[u] ||s_c||^2 under the white prior (E|u^H s|^2 / E||s||^2 = lambda_u / tr G). */
typedef struct {
    float *vals;
    double *ratio;  /* [nnoise] */
    double *energy; /* [C] */
    int64_t nnoise;
} nbhd_result;

static mr_status project_noise(const float *traj, const float *data, int64_t m, int64_t C, const int64_t *idx,
                               int64_t L, const double h[3], const int act[3], double eps, nbhd_result *res,
                               double *G, double *w, double *V)
{
    memset(res, 0, sizeof *res);
    for (int64_t j = 0; j < L; j++)
        for (int64_t l = 0; l <= j; l++) {
            double g = 1;
            for (int a = 0; a < 3; a++)
                if (act[a])
                    g *= sinc_pi(2.0 * h[a] * ((double)traj[3 * idx[j] + a] - traj[3 * idx[l] + a]));
            G[2 * (j * L + l)] = G[2 * (l * L + j)] = g;
            G[2 * (j * L + l) + 1] = G[2 * (l * L + j) + 1] = 0;
        }
    mr_status st = mr_herm_eig(L, G, w, V, L, 1);
    if (st != MR_OK)
        return st;
    double trace = 0;
    for (int64_t j = 0; j < L; j++)
        trace += fmax(w[j], 0.0);
    int64_t n0 = 0;
    while (n0 < L && w[n0] < eps * trace)
        n0++;
    if (n0 == 0)
        return MR_OK;
    res->vals = malloc((size_t)(C * 2 * n0) * sizeof *res->vals);
    res->ratio = malloc((size_t)n0 * sizeof *res->ratio);
    res->energy = malloc((size_t)C * sizeof *res->energy);
    if (!res->vals || !res->ratio || !res->energy)
        return mr_error(MR_ENOMEM, "noise estimate: out of memory");
    res->nnoise = n0;
    for (int64_t r = 0; r < n0; r++)
        res->ratio[r] = fmax(w[r], 0.0) / trace;
    for (int64_t c = 0; c < C; c++) {
        const float *dc = data + 2 * c * m;
        double e = 0;
        for (int64_t j = 0; j < L; j++)
            e += (double)dc[2 * idx[j]] * dc[2 * idx[j]] + (double)dc[2 * idx[j] + 1] * dc[2 * idx[j] + 1];
        res->energy[c] = e;
        for (int64_t r = 0; r < n0; r++) {
            /* eigenvector r of the ascending set is row r of V, which holds the top L (all) */
            const double *u = V + 2 * r * L;
            double yr = 0, yi = 0; /* y = u^H d */
            for (int64_t j = 0; j < L; j++) {
                const double dr = dc[2 * idx[j]], di = dc[2 * idx[j] + 1];
                yr += u[2 * j] * dr + u[2 * j + 1] * di;
                yi += u[2 * j] * di - u[2 * j + 1] * dr;
            }
            res->vals[c * 2 * n0 + 2 * r] = (float)fabs(yr);
            res->vals[c * 2 * n0 + 2 * r + 1] = (float)fabs(yi);
        }
    }
    return MR_OK;
}

/* The median of v[n] (reordered), n >= 1: the mean of the two middle values for even n. */
static double median(float *v, int64_t n)
{
    const double hi = mr_select_kth(v, n, n / 2);
    if (n % 2)
        return hi;
    float lo = v[0]; /* the largest of v[0 .. n/2 - 1], all <= hi after the selection */
    for (int64_t i = 1; i < n / 2; i++)
        lo = v[i] > lo ? v[i] : lo;
    return 0.5 * (hi + lo);
}

/* sigma of coil c from the neighbourhoods in group g (g < 0: all); 0 values -> NAN. pilot <= 0: the
 * directions with ratio < PILOT_EPS; else those whose expected leakage ratio ||d_c||^2 is at most
 * LEAK_TAU of the noise variance 2 pilot^2. */
static double coil_sigma(const nbhd_result *res, int64_t nres, int64_t c, int g, double pilot, float *buf,
                         int64_t *count)
{
    int64_t n = 0;
    for (int64_t i = 0; i < nres; i++) {
        if (g >= 0 && i % SPLIT != g)
            continue;
        const nbhd_result *r = res + i;
        const float *v = r->vals + c * 2 * r->nnoise;
        for (int64_t u = 0; u < r->nnoise; u++) {
            const int keep = pilot > 0 ? r->ratio[u] * r->energy[c] <= LEAK_TAU * 2.0 * pilot * pilot
                                       : r->ratio[u] < PILOT_EPS;
            if (keep) {
                buf[n++] = v[2 * u];
                buf[n++] = v[2 * u + 1];
            }
        }
    }
    if (count)
        *count = n;
    return n ? MAD_TO_SIGMA * median(buf, n) : NAN;
}

static double std_error(const double *x, int n)
{
    double s = 0, s2 = 0;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(x[i])) {
            s += x[i];
            k++;
        }
    if (k < 2)
        return NAN;
    const double mean = s / k;
    for (int i = 0; i < n; i++)
        if (isfinite(x[i]))
            s2 += (x[i] - mean) * (x[i] - mean);
    return sqrt(s2 / (k - 1)) / sqrt((double)k);
}

/* The object's half-widths per axis (FOV units) from a low-resolution root-sum-of-squares image of the
 * k-space centre (solver/coilmaps.h mr_coilmaps_grid, up to 32^2 / 24^3): per axis the centred interval
 * holding 99.9 % of the image's energy, plus three of its voxels (the taper's blur and a margin). Returns 1
 * when some active axis is narrower than the FOV, else 0 (also when the image cannot be made: an error
 * is then cleared). */
static int object_support(const int64_t matrix[3], const float *traj, int64_t m, const float *data, int64_t C,
                          int threads, double h[3])
{
    int64_t g[3];
    for (int a = 0; a < 3; a++) {
        const int64_t cap = matrix[2] > 1 ? 24 : 32;
        g[a] = matrix[a] > 1 ? (matrix[a] < cap ? matrix[a] : cap) : 1;
        h[a] = 0.5;
    }
    const int64_t ng = g[0] * g[1] * g[2];
    float *imgs = malloc((size_t)(ng * C) * 2 * sizeof *imgs);
    double *rss = calloc((size_t)ng, sizeof *rss);
    int narrower = 0;
    if (!imgs || !rss || mr_coilmaps_grid(matrix, traj, m, data, C, g, 1, threads, imgs) != MR_OK) {
        mr_clear_error();
        goto done;
    }
    double peak = 0;
    for (int64_t v = 0; v < ng; v++) {
        for (int64_t c = 0; c < C; c++)
            rss[v] += (double)imgs[2 * (c * ng + v)] * imgs[2 * (c * ng + v)] +
                      (double)imgs[2 * (c * ng + v) + 1] * imgs[2 * (c * ng + v) + 1];
        peak = fmax(peak, rss[v]);
    }
    if (!(peak > 0))
        goto done;
    {
    /* per axis: the smallest |r| that holds 99.9 % of the image's energy (rss holds squares), so that a few
     * stray voxels (gridding artefacts in the corners) do not count */
    double *prof = calloc((size_t)(g[0] > g[1] ? (g[0] > g[2] ? g[0] : g[2]) : (g[1] > g[2] ? g[1] : g[2])),
                          sizeof *prof);
    if (!prof)
        goto done;
    for (int a = 0; a < 3; a++) {
        if (g[a] == 1)
            continue;
        double total = 0;
        memset(prof, 0, (size_t)g[a] * sizeof *prof);
        for (int64_t v = 0; v < ng; v++) {
            const int64_t j = a == 0 ? v % g[0] : (a == 1 ? (v / g[0]) % g[1] : v / (g[0] * g[1]));
            prof[j] += rss[v];
            total += rss[v];
        }
        /* grow the centred interval |j - g/2| <= e until it holds 99.9 % */
        double inside = 0, ext = 0.5;
        for (int64_t e = 0; e <= g[a] / 2; e++) {
            inside = 0;
            for (int64_t j = 0; j < g[a]; j++)
                inside += llabs(j - g[a] / 2) <= e ? prof[j] : 0;
            if (inside >= 0.999 * total) {
                ext = ((double)e + 0.5) / (double)g[a];
                break;
            }
        }
        h[a] = fmin(0.5, ext + 3.0 / (double)g[a]);
        narrower |= h[a] < 0.5 - 1e-9;
    }
    free(prof);
    }
done:
    free(imgs);
    free(rss);
    return narrower;
}

/* The estimate with the object inside the box of half-widths h (see noise_est.h); *none = 1 when no
 * neighbourhood has a noise direction. */
static mr_status estimate_with(const float *traj, int64_t m, const float *data, int64_t C, const mr_noise_est_opts *o,
                               const int act[3], const double h[3], mr_noise_est_result *out, int *none)
{
    mr_status st = MR_OK;
    nbhds nb;
    int64_t covered = 0;
    *none = 0;
    mr_noise_nbhd_kind kind = MR_NOISE_NBHD_READOUT;
    if ((st = readout_segments(traj, m, act, o->segment, &nb, &covered)) != MR_OK)
        return st;
    if (2 * covered < m) {
        nbhds_free(&nb);
        kind = MR_NOISE_NBHD_CELLS;
        if ((st = cell_groups(traj, m, act, o->cell, 2 * (int64_t)o->segment, &nb)) != MR_OK)
            return st;
    }
    int64_t lmax = 0;
    for (int64_t i = 0; i < nb.count; i++)
        lmax = nb.off[i + 1] - nb.off[i] > lmax ? nb.off[i + 1] - nb.off[i] : lmax;
    /* the neighbourhoods used: evenly spread, bounded so that the noise values fit in memory */
    int64_t want = o->max_groups;
    if (lmax > 0 && want * 2 * lmax * C > MAX_VALUES)
        want = MAX_VALUES / (2 * lmax * C) > SPLIT ? MAX_VALUES / (2 * lmax * C) : SPLIT;
    const int64_t used = nb.count < want ? nb.count : want;
    nbhd_result *res = calloc((size_t)(used ? used : 1), sizeof *res);
    float *buf = NULL;
    double *sg = NULL, *sgc = NULL;
    if (!res) {
        nbhds_free(&nb);
        return mr_error(MR_ENOMEM, "noise estimate: out of memory");
    }
    const int nt = o->threads > 0 ? o->threads : omp_get_max_threads();
    mr_status fail = MR_OK;
    char why[256] = "";
#pragma omp parallel num_threads(nt)
    {
        double *G = malloc((size_t)(2 * lmax * lmax) * sizeof *G), *w = malloc((size_t)lmax * sizeof *w),
               *V = malloc((size_t)(2 * lmax * lmax) * sizeof *V);
#pragma omp for schedule(dynamic, 4)
        for (int64_t i = 0; i < used; i++) {
            mr_status seen;
#pragma omp atomic read
            seen = fail;
            if (seen != MR_OK)
                continue;
            const int64_t which = used == nb.count ? i : i * nb.count / used;
            mr_status s = G && w && V ? MR_OK : mr_error(MR_ENOMEM, "noise estimate: out of memory");
            if (s == MR_OK)
                s = project_noise(traj, data, m, C, nb.idx + nb.off[which], nb.off[which + 1] - nb.off[which], h, act,
                                  o->eps, &res[i], G, w, V);
            if (s != MR_OK) {
#pragma omp critical(noise_est_fail)
                if (fail == MR_OK) {
                    snprintf(why, sizeof why, "%s", mr_last_error());
#pragma omp atomic write
                    fail = s;
                }
            }
        }
        free(G);
        free(w);
        free(V);
    }
    int64_t nvals = 0;
    for (int64_t i = 0; i < used; i++)
        nvals += 2 * res[i].nnoise;
    if (fail != MR_OK) {
        st = mr_error(fail, "%s", why);
        goto done;
    }
    if (nvals == 0) {
        *none = 1;
        st = mr_error(MR_EINVAL, "noise estimate: none of the %lld %s (%lld samples) samples k-space more densely than "
                                 "an object filling the FOV needs, so no direction of the data is free of signal "
                                 "(e.g. readouts without oversampling)",
                      (long long)nb.count, mr_noise_nbhd_name(kind), (long long)m);
        goto done;
    }
    buf = malloc((size_t)nvals * sizeof *buf);
    sg = malloc(SPLIT * sizeof *sg);
    sgc = calloc((size_t)(SPLIT * C), sizeof *sgc);
    memset(out, 0, sizeof *out);
    out->sigma_coil = malloc((size_t)C * sizeof *out->sigma_coil);
    out->sigma_coil_se = malloc((size_t)C * sizeof *out->sigma_coil_se);
    if (!buf || !sg || !sgc || !out->sigma_coil || !out->sigma_coil_se) {
        mr_noise_est_result_free(out);
        st = mr_error(MR_ENOMEM, "noise estimate: out of memory");
        goto done;
    }
    double sum2 = 0;
    int64_t kept_sum = 0;
    for (int64_t c = 0; c < C; c++) {
        int64_t kept = 0;
        double pilot = coil_sigma(res, used, c, -1, 0, buf, NULL);
        if (!(pilot > 0)) /* no direction clean enough for a pilot (or exactly zero data): use them all */
            pilot = coil_sigma(res, used, c, -1, INFINITY, buf, &kept);
        const double s = pilot > 0 ? coil_sigma(res, used, c, -1, pilot, buf, &kept) : pilot;
        kept_sum += kept;
        double per[SPLIT];
        for (int g = 0; g < SPLIT; g++) {
            per[g] = pilot > 0 ? coil_sigma(res, used, c, g, pilot, buf, NULL) : pilot;
            sgc[g * C + c] = per[g];
        }
        out->sigma_coil[c] = isfinite(s) ? s : 0;
        out->sigma_coil_se[c] = std_error(per, SPLIT);
        sum2 += out->sigma_coil[c] * out->sigma_coil[c];
    }
    for (int g = 0; g < SPLIT; g++) {
        double s2 = 0;
        for (int64_t c = 0; c < C; c++)
            s2 += sgc[g * C + c] * sgc[g * C + c];
        sg[g] = sqrt(s2 / (double)C); /* NAN when the group had no values */
    }
    out->sigma = sqrt(sum2 / (double)C);
    out->sigma_se = std_error(sg, SPLIT);
    out->ncoils = C;
    out->values = kept_sum / C;
    for (int a = 0; a < 3; a++)
        out->support[a] = act[a] ? h[a] : 0;
    out->groups = used;
    out->nbhd = kind;
done:
    for (int64_t i = 0; i < used; i++) {
        free(res[i].vals);
        free(res[i].ratio);
        free(res[i].energy);
    }
    free(res);
    free(buf);
    free(sg);
    free(sgc);
    nbhds_free(&nb);
    return st;
}

mr_status mr_noise_estimate(const int64_t matrix[3], const float *traj, int64_t m, const float *data, int64_t C,
                            const mr_noise_est_opts *o, mr_noise_est_result *out)
{
    mr_noise_est_opts def;
    if (!o) {
        mr_noise_est_opts_default(&def);
        o = &def;
    }
    mr_status st = mr_matrix_check(matrix, "noise estimate: image matrix");
    if (st != MR_OK)
        return st;
    if (!traj || !data || !out || m < 1 || C < 1 || C > MR_MAX_COILS)
        return mr_error(MR_EINVAL, "noise estimate: %lld samples, %lld coils", (long long)m, (long long)C);
    if (o->segment < MIN_NBHD || o->segment > 256 || !(o->cell > 0 && o->cell <= 64) || !(o->eps > 0 && o->eps < 1) ||
        o->max_groups < SPLIT)
        return mr_error(MR_EINVAL, "noise estimate: segment %d (8..256), cell %g (0..64], eps %g (0..1), max_groups %d "
                                   "(>= %d)",
                        o->segment, o->cell, o->eps, o->max_groups, SPLIT);
    int act[3];
    double h[3];
    for (int a = 0; a < 3; a++) {
        act[a] = matrix[a] > 1;
        h[a] = o->support[a] > 0 ? o->support[a] : 0.5;
        if (act[a] && !(h[a] <= 0.5))
            return mr_error(MR_EINVAL, "noise estimate: support half-width %g on axis %d is beyond the FOV (0..0.5]",
                            h[a], a);
    }
    for (int64_t i = 0; i < 2 * m * C; i++)
        if (!isfinite(data[i]))
            return mr_error(MR_EINVAL, "noise estimate: sample %lld of coil %lld is not finite", (long long)(i / 2 % m),
                            (long long)(i / 2 / m));
    for (int64_t i = 0; i < 3 * m; i++)
        if (!isfinite(traj[i]))
            return mr_error(MR_EINVAL, "noise estimate: trajectory entry %lld is not finite", (long long)i);
    const int given = o->support[0] > 0 || o->support[1] > 0 || o->support[2] > 0;
    int none = 0;
    st = estimate_with(traj, m, data, C, o, act, h, out, &none);
    if (given || st == MR_OK || !none)
        return st;
    /* no noise direction in the FOV box (readouts sampled at 1 cycle/FOV): the object's own extent, from a
     * low-resolution image, may leave some */
    char first[512];
    snprintf(first, sizeof first, "%s", mr_last_error());
    double h2[3];
    if (!object_support(matrix, traj, m, data, C, o->threads, h2))
        return mr_error(st, "%s; the object fills the FOV of a low-resolution image", first);
    st = estimate_with(traj, m, data, C, o, act, h2, out, &none);
    if (st == MR_OK) {
        out->support_from_image = 1;
        return MR_OK;
    }
    return mr_error(st, "%s; inside the object's extent from a low-resolution image (half-widths %.2f x %.2f x %.2f "
                        "of the FOV) neither",
                    first, h2[0], h2[1], h2[2]);
}

