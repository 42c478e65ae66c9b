/* Spreading onto / interpolation from a periodic Cartesian grid with a triangle or Kaiser-Bessel
 * kernel (see kb.h for the maths and the race-free slab scheme). */
#include "kb.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define KB_MAX_WIDTH 16
/* Kernel table samples per grid cell; linear interpolation error ~ (1/L)^2 beta^2 / 8 relative,
 * below 1e-7 for every width we allow. */
#define KB_TABLE_PER_CELL 4096
/* Largest |u| accepted (grid cells): keeps floor() and the int64 index arithmetic exact. */
#define KB_MAX_COORD 1e9

struct mr_kb_plan {
    int64_t n[3];
    int active[3];
    mr_kb_kernel kernel;
    int width;
    int threads;
    float *table; /* Kaiser: c(x) at x = i / KB_TABLE_PER_CELL, 0 <= x <= W/2 (+1 pad) */
    int64_t m;
    int64_t *order; /* sorted position -> caller's sample index */
    double *u;      /* [M][3] grid coordinates in sorted order */
    int nslabs;     /* even, or 1 (serial) */
    int64_t *slab_start; /* [nslabs + 1] offsets into order */
};

int mr_kb_threads(int threads) { return threads > 0 ? threads : omp_get_max_threads(); }

int mr_kb_plan_threads(const mr_kb_plan *p) { return p->threads; }

double mr_kb_beta(int width, double sigma)
{
    double t = (width / sigma) * (width / sigma) * (sigma - 0.5) * (sigma - 0.5) - 0.8;
    return t > 0 ? M_PI * sqrt(t) : 0.0;
}

/* Modified Bessel function of the first kind, order 0, by its power series (x <= ~40 here). */
static double bessel_i0(double x)
{
    double sum = 1.0, term = 1.0, q = 0.25 * x * x;
    for (int k = 1; k < 500; k++) {
        term *= q / ((double)k * k);
        sum += term;
        if (term < 1e-17 * sum)
            break;
    }
    return sum;
}

/* sinh(z)/z for z^2 = s (sin(|z|)/|z| when s < 0), continuous through 0. */
static double sinhc_sq(double s)
{
    if (fabs(s) < 1e-8)
        return 1.0 + s / 6.0;
    if (s > 0) {
        double z = sqrt(s);
        return sinh(z) / z;
    }
    double z = sqrt(-s);
    return sin(z) / z;
}

double mr_kb_ft(double x, int width, double beta)
{
    double pwx = M_PI * width * x;
    return sinhc_sq(beta * beta - pwx * pwx) / sinhc_sq(beta * beta);
}

double mr_kb_value(double x, int width, double beta)
{
    const double r = 2.0 * x / width;
    return fabs(r) <= 1.0 ? bessel_i0(beta * sqrt(1.0 - r * r)) / (width * sinhc_sq(beta * beta)) : 0.0;
}

int64_t mr_kb_fft_size(int64_t n)
{
    if (n <= 1)
        return 1;
    for (int64_t g = n + (n & 1);; g += 2) {
        int64_t r = g;
        static const int primes[] = {2, 3, 5, 7};
        for (int i = 0; i < 4; i++)
            while (r % primes[i] == 0)
                r /= primes[i];
        if (r == 1)
            return g;
    }
}

static int64_t wrap(int64_t j, int64_t n)
{
    int64_t r = j % n;
    return r < 0 ? r + n : r;
}

/* First grid index of the kernel footprint of coordinate u: the W points j with
 * -W/2 <= u - j < W/2 are j0 .. j0 + W - 1. */
static int64_t first_index(double u, int width) { return (int64_t)floor(u - 0.5 * width) + 1; }

static float kernel_value(const mr_kb_plan *p, double x)
{
    double ax = fabs(x);
    if (p->kernel == MR_KB_TRIANGLE)
        return ax < 1.0 ? (float)(1.0 - ax) : 0.0f;
    double t = ax * KB_TABLE_PER_CELL;
    int64_t i = (int64_t)t;
    if (i >= (int64_t)(0.5 * p->width * KB_TABLE_PER_CELL) + 1)
        return 0.0f;
    float f = (float)(t - (double)i);
    return p->table[i] + f * (p->table[i + 1] - p->table[i]);
}

/* Footprint of one sample along axis a: count indices (wrapped) and weights. */
static int axis_footprint(const mr_kb_plan *p, int a, double u, int64_t *idx, float *w)
{
    if (!p->active[a]) {
        idx[0] = 0;
        w[0] = 1.0f;
        return 1;
    }
    int64_t j0 = first_index(u, p->width);
    int64_t g = wrap(j0, p->n[a]);
    for (int i = 0; i < p->width; i++) {
        idx[i] = g;
        w[i] = kernel_value(p, u - (double)(j0 + i));
        if (++g == p->n[a])
            g = 0;
    }
    return p->width;
}

mr_status mr_kb_plan_create(mr_kb_plan **out, const int64_t n[3], const double scale[3], mr_kb_kernel kernel,
                            int width, double beta, const float *traj, int64_t m, int threads)
{
    *out = NULL;
    if (kernel == MR_KB_TRIANGLE && width != 2)
        return mr_error(MR_EINVAL, "kb: the triangle kernel has width 2, got %d", width);
    if (width < 2 || width > KB_MAX_WIDTH)
        return mr_error(MR_EINVAL, "kb: kernel width %d is outside 2..%d", width, KB_MAX_WIDTH);
    if (m < 1 || !traj)
        return mr_error(MR_EINVAL, "kb: need at least one sample, got %lld", (long long)m);
    for (int a = 0; a < 3; a++)
        if (n[a] < 1 || !(scale[a] > 0) || !isfinite(scale[a]))
            return mr_error(MR_EINVAL, "kb: bad grid axis %d (n = %lld, scale = %g)", a, (long long)n[a], scale[a]);
    if ((double)n[0] * (double)n[1] * (double)n[2] > 1e11)
        return mr_error(MR_EINVAL, "kb: grid %lldx%lldx%lld is too large", (long long)n[0], (long long)n[1],
                        (long long)n[2]);

    mr_kb_plan *p = calloc(1, sizeof *p);
    if (!p)
        return mr_error(MR_ENOMEM, "kb: out of memory for the plan");
    for (int a = 0; a < 3; a++) {
        p->n[a] = n[a];
        p->active[a] = n[a] > 1;
    }
    p->kernel = kernel;
    p->width = width;
    p->threads = mr_kb_threads(threads);
    p->m = m;
    mr_status st = MR_ENOMEM;
    int64_t *slab_of = NULL;

    if (kernel == MR_KB_KAISER) {
        int64_t len = (int64_t)(0.5 * width * KB_TABLE_PER_CELL) + 2;
        p->table = malloc((size_t)len * sizeof *p->table);
        if (!p->table)
            goto fail;
        for (int64_t i = 0; i < len; i++)
            p->table[i] = (float)mr_kb_value((double)i / KB_TABLE_PER_CELL, width, beta);
    }

    /* The slowest active axis carries the slabs. */
    int slow = -1;
    for (int a = 2; a >= 0 && slow < 0; a--)
        if (p->active[a])
            slow = a;
    int64_t gs = slow >= 0 ? n[slow] : 1;
    int64_t ns = gs / width;
    if (ns & 1)
        ns--;
    p->nslabs = ns >= 2 ? (int)(ns < 1 << 20 ? ns : 1 << 20) : 1;

    p->order = malloc((size_t)m * sizeof *p->order);
    p->u = malloc((size_t)m * 3 * sizeof *p->u);
    slab_of = malloc((size_t)m * sizeof *slab_of);
    p->slab_start = calloc((size_t)p->nslabs + 1, sizeof *p->slab_start);
    if (!p->order || !p->u || !slab_of || !p->slab_start)
        goto fail;
    for (int64_t i = 0; i < m; i++) {
        for (int a = 0; a < 3; a++) {
            double k = traj[3 * i + a];
            double u = k * scale[a];
            if (!isfinite(k) || (p->active[a] && fabs(u) > KB_MAX_COORD)) {
                st = mr_error(MR_EINVAL, "kb: sample %lld has k[%d] = %g, not finite or far outside the grid",
                              (long long)i, a, k);
                goto fail;
            }
        }
        int64_t s = 0;
        if (p->nslabs > 1)
            s = wrap(first_index(traj[3 * i + slow] * scale[slow], width), gs) * p->nslabs / gs;
        slab_of[i] = s;
        p->slab_start[s + 1]++;
    }
    for (int s = 0; s < p->nslabs; s++)
        p->slab_start[s + 1] += p->slab_start[s];
    {
        int64_t *fill = calloc((size_t)p->nslabs, sizeof *fill);
        if (!fill)
            goto fail;
        for (int64_t i = 0; i < m; i++) {
            int64_t pos = p->slab_start[slab_of[i]] + fill[slab_of[i]]++;
            p->order[pos] = i;
            for (int a = 0; a < 3; a++)
                p->u[3 * pos + a] = p->active[a] ? (double)traj[3 * i + a] * scale[a] : 0.0;
        }
        free(fill);
    }
    free(slab_of);
    *out = p;
    return MR_OK;
fail:
    if (st == MR_ENOMEM)
        mr_error(MR_ENOMEM, "kb: out of memory planning %lld samples", (long long)m);
    free(slab_of);
    mr_kb_plan_destroy(p);
    return st;
}

void mr_kb_plan_destroy(mr_kb_plan *p)
{
    if (!p)
        return;
    free(p->table);
    free(p->order);
    free(p->u);
    free(p->slab_start);
    free(p);
}

/* Spread sorted samples [b, e) onto the grid; ncomp is a literal at every call site so the
 * compiler specialises the inner loop. */
static inline void spread_range(const mr_kb_plan *p, const float *vals, int ncomp, float *grid, int64_t b, int64_t e)
{
    int64_t ix[KB_MAX_WIDTH], iy[KB_MAX_WIDTH], iz[KB_MAX_WIDTH];
    float wx[KB_MAX_WIDTH], wy[KB_MAX_WIDTH], wz[KB_MAX_WIDTH];
    const int64_t nx = p->n[0], ny = p->n[1];
    for (int64_t s = b; s < e; s++) {
        const double *u = p->u + 3 * s;
        int cx = axis_footprint(p, 0, u[0], ix, wx);
        int cy = axis_footprint(p, 1, u[1], iy, wy);
        int cz = axis_footprint(p, 2, u[2], iz, wz);
        const float *v = vals + ncomp * p->order[s];
        float v0 = v[0], v1 = ncomp == 2 ? v[1] : 0.0f;
        for (int a = 0; a < cz; a++)
            for (int c = 0; c < cy; c++) {
                float wzy = wz[a] * wy[c];
                float *row = grid + (size_t)ncomp * (size_t)((iz[a] * ny + iy[c]) * nx);
                for (int d = 0; d < cx; d++) {
                    float wt = wzy * wx[d];
                    row[ncomp * ix[d]] += wt * v0;
                    if (ncomp == 2)
                        row[2 * ix[d] + 1] += wt * v1;
                }
            }
    }
}

static void spread_impl(const mr_kb_plan *p, const float *vals, int ncomp, float *grid)
{
    int64_t total = (int64_t)ncomp * p->n[0] * p->n[1] * p->n[2];
#pragma omp parallel for num_threads(p->threads) schedule(static)
    for (int64_t i = 0; i < total; i++)
        grid[i] = 0.0f;
    if (p->nslabs == 1) {
        if (ncomp == 2)
            spread_range(p, vals, 2, grid, 0, p->m);
        else
            spread_range(p, vals, 1, grid, 0, p->m);
        return;
    }
    for (int color = 0; color < 2; color++) {
#pragma omp parallel for num_threads(p->threads) schedule(dynamic, 1)
        for (int s = color; s < p->nslabs; s += 2) {
            if (ncomp == 2)
                spread_range(p, vals, 2, grid, p->slab_start[s], p->slab_start[s + 1]);
            else
                spread_range(p, vals, 1, grid, p->slab_start[s], p->slab_start[s + 1]);
        }
    }
}

void mr_kb_spread(const mr_kb_plan *p, const float *vals, int ncomp, float *grid) { spread_impl(p, vals, ncomp, grid); }

void mr_kb_interp(const mr_kb_plan *p, const float *grid, int ncomp, float *vals)
{
    const int64_t nx = p->n[0], ny = p->n[1];
#pragma omp parallel for num_threads(p->threads) schedule(static)
    for (int64_t s = 0; s < p->m; s++) {
        int64_t ix[KB_MAX_WIDTH], iy[KB_MAX_WIDTH], iz[KB_MAX_WIDTH];
        float wx[KB_MAX_WIDTH], wy[KB_MAX_WIDTH], wz[KB_MAX_WIDTH];
        const double *u = p->u + 3 * s;
        int cx = axis_footprint(p, 0, u[0], ix, wx);
        int cy = axis_footprint(p, 1, u[1], iy, wy);
        int cz = axis_footprint(p, 2, u[2], iz, wz);
        double acc0 = 0.0, acc1 = 0.0;
        for (int a = 0; a < cz; a++)
            for (int c = 0; c < cy; c++) {
                double wzy = (double)wz[a] * wy[c];
                const float *row = grid + (size_t)ncomp * (size_t)((iz[a] * ny + iy[c]) * nx);
                double r0 = 0.0, r1 = 0.0;
                for (int d = 0; d < cx; d++) {
                    r0 += wx[d] * row[ncomp * ix[d]];
                    if (ncomp == 2)
                        r1 += wx[d] * row[2 * ix[d] + 1];
                }
                acc0 += wzy * r0;
                acc1 += wzy * r1;
            }
        float *v = vals + ncomp * p->order[s];
        v[0] = (float)acc0;
        if (ncomp == 2)
            v[1] = (float)acc1;
    }
}
