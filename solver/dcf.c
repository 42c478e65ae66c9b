/* Density compensation weights (dcf.h; derivations in docs/GRIDDING.md).
 *
 * Both functions return weights in k-space area (2D, (cycles/FOV)^2) or volume (3D) per sample, so
 * that sum_m w_m d_m e^{+i 2 pi k_m r} is in the phantom's intensity units. */
#include "dcf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/grid.h"
#include "../base/log.h"
#include "dcf_cache.h"
#include "kb.h"
#include "nufft.h"

/* ---- analytic radial weights ----------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static mr_status check_traj(const int64_t matrix[3], const float *traj, int64_t m, const float *w, const char *who)
{
    mr_status st = mr_matrix_check(matrix, who);
    if (st != MR_OK)
        return st;
    if (!traj || !w || m < 1)
        return mr_error(MR_EINVAL, "%s: need a trajectory and an output array of at least one sample", who);
    for (int64_t i = 0; i < 3 * m; i++)
        if (!isfinite(traj[i]))
            return mr_error(MR_EINVAL, "%s: sample %lld has a non-finite coordinate", who, (long long)(i / 3));
    return MR_OK;
}

/* Radial trajectories (spokes through or out from the centre, any order of spokes):
 *   dk = the readout step (median distance between consecutive samples),
 *   c  = rays per unit of radius (a full diameter counts twice), measured from the samples with
 *        K/4 <= |k| < 3K/4 (K = max |k|): c = count * dk / (K/2),
 *   2D: w = 2 pi |k| dk / c                  (annulus |k| +- dk/2 shared by the c rays),
 *   3D: w = (4 pi |k|^2 dk + pi dk^3/3) / c  (exact shell volume between |k| +- dk/2).
 * Samples with |k| < dk/4 (the centre) share the disc/ball of radius dk/2 equally. */
mr_status mr_dcf_analytic(const int64_t matrix[3], const float *traj, int64_t m, float *w)
{
    mr_status st = check_traj(matrix, traj, m, w, "dcf analytic");
    if (st != MR_OK)
        return st;
    if (m < 2)
        return mr_error(MR_EINVAL, "dcf analytic: a radial trajectory needs more than one sample");
    int three = matrix[2] > 1;
    double *steps = malloc((size_t)(m - 1) * sizeof *steps);
    if (!steps)
        return mr_error(MR_ENOMEM, "dcf analytic: out of memory");
    double kmax = 0.0;
    for (int64_t i = 0; i < m; i++) {
        const float *k = traj + 3 * i;
        double r = sqrt((double)k[0] * k[0] + (double)k[1] * k[1] + (three ? (double)k[2] * k[2] : 0.0));
        if (r > kmax)
            kmax = r;
        if (i + 1 < m) {
            double d0 = k[3] - k[0], d1 = k[4] - k[1], d2 = three ? k[5] - k[2] : 0.0;
            steps[i] = sqrt(d0 * d0 + d1 * d1 + d2 * d2);
        }
    }
    qsort(steps, (size_t)(m - 1), sizeof *steps, cmp_double);
    double dk = steps[(m - 1) / 2];
    free(steps);
    int64_t mid = 0, centre = 0;
    for (int64_t i = 0; i < m; i++) {
        const float *k = traj + 3 * i;
        double r = sqrt((double)k[0] * k[0] + (double)k[1] * k[1] + (three ? (double)k[2] * k[2] : 0.0));
        mid += r >= 0.25 * kmax && r < 0.75 * kmax;
        centre += r < 0.25 * dk;
    }
    if (!(dk > 0) || !(kmax > 2 * dk) || mid == 0)
        return mr_error(MR_EINVAL,
                        "dcf analytic: the trajectory does not look radial (readout step %g, max |k| %g); "
                        "use the Pipe-Menon weights instead",
                        dk, kmax);
    double rays = (double)mid * dk / (0.5 * kmax);
    double h = 0.5 * dk;
    double centre_w = centre ? (three ? 4.0 / 3.0 * M_PI * h * h * h : M_PI * h * h) / (double)centre : 0.0;
    for (int64_t i = 0; i < m; i++) {
        const float *k = traj + 3 * i;
        double r = sqrt((double)k[0] * k[0] + (double)k[1] * k[1] + (three ? (double)k[2] * k[2] : 0.0));
        double v;
        if (r < 0.25 * dk)
            v = centre_w;
        else if (three)
            v = (4.0 * M_PI * r * r * dk + M_PI * dk * dk * dk / 3.0) / rays;
        else
            v = 2.0 * M_PI * r * dk / rays;
        w[i] = (float)v;
    }
    mr_log(MR_LOG_DEBUG, "dcf analytic: %s radial, readout step %g, %.1f rays, %lld centre samples",
           three ? "3D" : "2D", dk, rays, (long long)centre);
    return MR_OK;
}

/* ---- Pipe-Menon ------------------------------------------------------------------------------ */

#define PIPE_WIDTH 6   /* Kaiser-Bessel width in grid cells */
#define PIPE_SCALE 3.0 /* grid cells per cycle/FOV: spacing h = 1/3, kernel support W h = 2 cycles/FOV */
#define PIPE_BETA 7.0  /* Kaiser-Bessel shape (see below) */
#define PIPE_MAX_GRID (1LL << 31)
/* The kernel is a compromise measured on three cases (docs/GRIDDING.md): a wide support or a
 * flat kernel inflates the weights on the rim of the sampled region (the last ~support cycles/FOV
 * see no samples beyond) and rings there; a narrow one with a sharp spectrum biases a Cartesian
 * lattice (the transform C(r h)^2 of c*c must be small at r = 1 FOV, where the lattice's
 * point-spread-function replicas sit) and makes undersampled weights lumpy. Support 2 cycles/FOV
 * with beta = 7: Cartesian interior weights 1 +- 0.3 %, 2D radial 128^2 KB gridding 39.0 dB vs the
 * bandlimited truth (analytic weights 38.6), 3D kooshball 64^3 (undersampled) 21.8 dB. */

typedef struct {
    uint64_t hash;
    int64_t matrix[3];
    int64_t m;
    int iters;
    double momentum;
    float *traj; /* [M][3] copy, to confirm a hash match */
    float *w;    /* [M] */
} cache_entry;

static cache_entry cache[MR_DCF_CACHE_ENTRIES];
static int cache_next;
static int64_t cache_hits, cache_computed;

static uint64_t hash_key(const int64_t matrix[3], const float *traj, int64_t m, int iters, double momentum)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    const unsigned char *b = (const unsigned char *)traj;
    size_t nb = (size_t)m * 3 * sizeof *traj;
    for (size_t i = 0; i < nb; i++)
        h = (h ^ b[i]) * 1099511628211ULL;
    for (int a = 0; a < 3; a++)
        h = (h ^ (uint64_t)matrix[a]) * 1099511628211ULL;
    uint64_t mb;
    memcpy(&mb, &momentum, sizeof mb);
    h = (h ^ (uint64_t)m) * 1099511628211ULL;
    h = (h ^ mb) * 1099511628211ULL;
    return (h ^ (uint64_t)iters) * 1099511628211ULL;
}

static int entry_matches(const cache_entry *e, uint64_t hash, const int64_t matrix[3], const float *traj, int64_t m,
                         int iters, double momentum)
{
    return e->traj && e->hash == hash && e->m == m && e->iters == iters && e->momentum == momentum &&
           memcmp(e->matrix, matrix, sizeof e->matrix) == 0 &&
           memcmp(e->traj, traj, (size_t)m * 3 * sizeof *traj) == 0;
}

static int cache_lookup(uint64_t hash, const int64_t matrix[3], const float *traj, int64_t m, int iters,
                        double momentum, float *w)
{
    int found = 0;
#pragma omp critical(mr_dcf_cache)
    {
        for (int i = 0; i < MR_DCF_CACHE_ENTRIES && !found; i++)
            if (entry_matches(&cache[i], hash, matrix, traj, m, iters, momentum)) {
                memcpy(w, cache[i].w, (size_t)m * sizeof *w);
                found = 1;
                cache_hits++;
            }
    }
    return found;
}

/* Best effort: a failed allocation only means no caching. */
static void cache_insert(uint64_t hash, const int64_t matrix[3], const float *traj, int64_t m, int iters,
                         double momentum, const float *w)
{
    float *t = malloc((size_t)m * 3 * sizeof *t), *c = malloc((size_t)m * sizeof *c);
    if (!t || !c) {
        free(t);
        free(c);
        return;
    }
    memcpy(t, traj, (size_t)m * 3 * sizeof *t);
    memcpy(c, w, (size_t)m * sizeof *c);
#pragma omp critical(mr_dcf_cache)
    {
        cache_entry *e = &cache[cache_next];
        cache_next = (cache_next + 1) % MR_DCF_CACHE_ENTRIES;
        free(e->traj);
        free(e->w);
        e->hash = hash;
        memcpy(e->matrix, matrix, sizeof e->matrix);
        e->m = m;
        e->iters = iters;
        e->momentum = momentum;
        e->traj = t;
        e->w = c;
    }
}

void mr_dcf_cache_stats(int64_t *hits, int64_t *computed)
{
#pragma omp critical(mr_dcf_cache)
    {
        if (hits)
            *hits = cache_hits;
        if (computed)
            *computed = cache_computed;
    }
}

void mr_dcf_cache_clear(void)
{
#pragma omp critical(mr_dcf_cache)
    {
        for (int i = 0; i < MR_DCF_CACHE_ENTRIES; i++) {
            free(cache[i].traj);
            free(cache[i].w);
            memset(&cache[i], 0, sizeof cache[i]);
        }
        cache_next = 0;
        cache_hits = cache_computed = 0;
    }
}

typedef struct {
    int width;
    double beta;
} pipe_kernel;

/* The unit-integral Kaiser-Bessel kernel c (solver/kb.h) as the spreader's kernel function. */
static double pipe_kernel_fn(void *ctx, double t)
{
    const pipe_kernel *k = ctx;
    return mr_kb_value(t, k->width, k->beta);
}

/* Pipe & Menon 1999: w <- w / (C w), (C w)_m = sum_j w_j (c*c)(u_m - u_j), computed by spreading w
 * onto a grid with the unit-integral Kaiser-Bessel kernel c and interpolating back with c: the NUFFT's
 * spreading engine (solver/nufft.h mr_nufft_spreader_create: samples sorted once into race-free slabs,
 * the kernel as per-cell polynomials, vectorised rows), iterated without FFTs. The grid
 * (spacing h = 1/PIPE_SCALE cycles/FOV) spans the trajectory's extent plus the kernel support, so
 * nothing wraps around. At the fixed point sum_j w_j (c*c)(u_m - u_j) = 1, i.e. the weights,
 * smoothed by the unit-integral k-space kernel K(k) = (c*c)(k/h)/h^d, have density 1 per unit
 * k-space area; so w h^d is the area (volume) each sample stands for.
 *
 * Accelerated update (heavy ball on log w, the same fixed point): from the third update on,
 *   w_{k+1} = w_k / (C w_k) * (w_k / w_{k-1})^beta,
 * i.e. log w takes the plain step plus beta times its last change. The plain step's slow modes (weight
 * patterns the smooth kernel barely sees) then move ~1/(1 - beta) times faster: 10 updates with beta = 0.5
 * give the gridding PSNR of 20 plain ones or better (docs/GRIDDING.md). The first two updates are plain:
 * the step from w = 1 changes w by up to the local density (30x), and carrying that would overshoot. */
static mr_status pipe_compute(const int64_t matrix[3], const float *traj, int64_t m, int iters, double beta,
                              int threads, float *w, const mr_progress *progress)
{
    int64_t n[3];
    double scale[3];
    double cells = 1.0, hd = 1.0;
    for (int a = 0; a < 3; a++) {
        double kmax = 0.0;
        if (matrix[a] > 1)
            for (int64_t i = 0; i < m; i++)
                kmax = fmax(kmax, fabs((double)traj[3 * i + a]));
        if (matrix[a] > 1 && kmax * PIPE_SCALE > 1e6)
            return mr_error(MR_EINVAL, "dcf pipe: |k[%d]| reaches %g cycles/FOV, far outside any grid", a, kmax);
        /* span 2 kmax plus the kernel support plus one cell, even; at least two kernel widths */
        int64_t g = (int64_t)ceil(2.0 * kmax * PIPE_SCALE) + PIPE_WIDTH + 2;
        g += g & 1;
        if (g < 2 * PIPE_WIDTH)
            g = 2 * PIPE_WIDTH;
        n[a] = matrix[a] > 1 ? g : 1;
        scale[a] = PIPE_SCALE;
        if (matrix[a] > 1)
            hd /= PIPE_SCALE;
        cells *= (double)n[a];
    }
    if (cells > (double)PIPE_MAX_GRID)
        return mr_error(MR_EINVAL, "dcf pipe: the trajectory spans a %lldx%lldx%lld density grid, too large",
                        (long long)n[0], (long long)n[1], (long long)n[2]);
    mr_nufft *plan = NULL;
    pipe_kernel kc = {PIPE_WIDTH, PIPE_BETA};
    mr_status st = mr_nufft_spreader_create(&plan, n, scale, PIPE_WIDTH, pipe_kernel_fn, &kc, traj, m, threads);
    if (st != MR_OK)
        return st;
    float *grid = malloc((size_t)cells * sizeof *grid);
    float *cw = malloc((size_t)m * sizeof *cw);
    float *prev = beta > 0.0 ? malloc((size_t)m * sizeof *prev) : NULL;
    if (!grid || !cw || (beta > 0.0 && !prev)) {
        free(grid);
        free(cw);
        free(prev);
        mr_nufft_destroy(plan);
        return mr_error(MR_ENOMEM, "dcf pipe: out of memory for a %lldx%lldx%lld density grid", (long long)n[0],
                        (long long)n[1], (long long)n[2]);
    }
    const int nt = mr_kb_threads(threads);
    const float bf = (float)beta;
    const int half = beta == 0.5;
    for (int64_t i = 0; i < m; i++)
        w[i] = 1.0f;
    for (int it = 0; it < iters && st == MR_OK; it++) {
        mr_progress_report(progress, "DCF", it, iters);
        if ((st = mr_nufft_spread_real(plan, w, grid)) != MR_OK || (st = mr_nufft_interp_real(plan, grid, cw)) != MR_OK)
            break;
        const int heavy = prev && it >= 2;
#pragma omp parallel for num_threads(nt) schedule(static)
        for (int64_t i = 0; i < m; i++) {
            float v = cw[i] > 0.0f ? w[i] / cw[i] : 0.0f;
            if (heavy && v > 0.0f && prev[i] > 0.0f) {
                const float r = w[i] / prev[i];
                v *= half ? sqrtf(r) : powf(r, bf);
            }
            if (prev)
                prev[i] = w[i];
            w[i] = v;
        }
    }
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t i = 0; i < m; i++)
        w[i] = (float)(w[i] * hd);
    mr_progress_report(progress, "DCF", iters, iters);
    free(grid);
    free(cw);
    free(prev);
    mr_nufft_destroy(plan);
    return st;
}

void mr_dcf_pipe_opts_default(mr_dcf_pipe_opts *o)
{
    memset(o, 0, sizeof *o);
    o->iters = MR_DCF_PIPE_DEFAULT_ITERS;
    o->momentum = MR_DCF_PIPE_DEFAULT_MOMENTUM;
}

mr_status mr_dcf_pipe(const int64_t matrix[3], const float *traj, int64_t m, int iters, int threads, float *w)
{
    mr_dcf_pipe_opts o;
    mr_dcf_pipe_opts_default(&o);
    o.iters = iters;
    o.threads = threads;
    return mr_dcf_pipe_run(matrix, traj, m, &o, w);
}

/* The store's key: everything the bits depend on besides the trajectory and matrix. */
static void store_key(mr_dcf_key *k, const int64_t matrix[3], const float *traj, int64_t m, int iters, double beta)
{
    memset(k, 0, sizeof *k);
    memcpy(k->matrix, matrix, sizeof k->matrix);
    k->m = m;
    k->traj = traj;
    snprintf(k->method, sizeof k->method, "dcf pipe-menon iters %d momentum %.17g kb W%d beta %.17g h 1/%g f32", iters,
             beta, PIPE_WIDTH, PIPE_BETA, PIPE_SCALE);
}

mr_status mr_dcf_pipe_run(const int64_t matrix[3], const float *traj, int64_t m, const mr_dcf_pipe_opts *o, float *w)
{
    mr_dcf_pipe_opts def;
    if (!o) {
        mr_dcf_pipe_opts_default(&def);
        o = &def;
    }
    mr_status st = check_traj(matrix, traj, m, w, "dcf pipe");
    if (st != MR_OK)
        return st;
    if (!(o->momentum >= 0.0 && o->momentum < 1.0))
        return mr_error(MR_EINVAL, "dcf pipe: momentum %g is outside [0, 1)", o->momentum);
    const int iters = o->iters > 0 ? o->iters : MR_DCF_PIPE_DEFAULT_ITERS;
    const double beta = o->momentum;
    uint64_t hash = hash_key(matrix, traj, m, iters, beta);
    if (cache_lookup(hash, matrix, traj, m, iters, beta, w)) {
        mr_log(MR_LOG_DEBUG, "dcf pipe: weights for %lld samples from the cache", (long long)m);
        return MR_OK;
    }
    mr_dcf_key key;
    store_key(&key, matrix, traj, m, iters, beta);
    if (o->store && o->store->load(o->store, &key, w)) {
        mr_log(MR_LOG_DEBUG, "dcf pipe: weights for %lld samples from the store", (long long)m);
        cache_insert(hash, matrix, traj, m, iters, beta, w);
        return MR_OK;
    }
    double t0 = mr_now();
    st = pipe_compute(matrix, traj, m, iters, beta, o->threads, w, o->progress);
    if (o->store) {
        float *copy = st == MR_OK ? malloc((size_t)m * sizeof *copy) : NULL;
        if (copy)
            memcpy(copy, w, (size_t)m * sizeof *copy);
        o->store->save(o->store, &key, copy);
    }
    if (st != MR_OK)
        return st;
#pragma omp critical(mr_dcf_cache)
    cache_computed++;
    cache_insert(hash, matrix, traj, m, iters, beta, w);
    mr_log(MR_LOG_DEBUG, "dcf pipe: %d iterations (momentum %g) over %lld samples in %.3f s", iters, beta, (long long)m,
           mr_now() - t0);
    return MR_OK;
}
