/* The CPU NUFFT (nufft.h; the maths in docs/NUFFT.md).
 *
 * Plan: every sample's fine-grid coordinate u_a = k_a n_f,a / scale_a (reduced into [0, n_f,a)) is kept
 * as its first footprint index j0 = ceil(u - w/2) and the offset v = 2 (j0 - u + w/2) - 1, in the
 * order of a counting sort by (slab of the slowest axis, bin of the middle axis, bin of the fastest):
 * the samples of one slab touch only that slab and the next (slabs at least w cells thick, an even
 * number of them), so even slabs spread in parallel, then odd ones, with no atomics and the same bits
 * for any thread count; within a slab, neighbours in memory are neighbours on the grid.
 *
 *   type 1:  spread a -> fine grid; FFT (e^{+i}); out[v] = grid[p mod n_f] / phi^(p)
 *   type 2:  grid[p mod n_f] = x[v] / phi^(p), 0 elsewhere; FFT (e^{-i}); interpolate at every u_m
 *
 * The plan's fine grid is one buffer reused by every coil of a call. */
#include "nufft.h"

#include <fftw3.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"
#include "fft.h"
#include "kb.h"

/* bins of the sort within a slab: cells along the fastest and the middle active axis */
#define BIN_FAST 32
#define BIN_MID 8
/* Below this much work (fine-grid points, and sample-point updates) a transform runs on one thread: it takes
 * a few milliseconds, and each of its parallel passes ends in a barrier, which costs far more than it saves
 * when the cores are shared (as solver/toeplitz.c TP_SERIAL_POINTS) */
#define SERIAL_POINTS (1 << 18)
#define SERIAL_UPDATES (1 << 23)
/* |k / scale| beyond this many periods is refused (keeps the reduction into [0, n_f) exact enough) */
#define MAX_PERIODS 1e6

struct mr_nufft {
    mr_nufft_params par;
    mr_grid g;
    int64_t m;
    int threads;
    int wpad;            /* the width rounded up to 8 (the kernel's evaluation runs over whole vectors) */
    int64_t nfine;       /* points of the fine grid */
    int nslabs;          /* even >= 2, or 1 (serial spreading) */
    int pad_rows;        /* spreading may write a row's padding (x is not the slab axis: 2D and 3D) */
    int64_t *slab_start; /* [nslabs + 1] offsets into the sorted order */
    int64_t *perm;       /* sorted position -> caller's sample index */
    int32_t *base;       /* [M][3] first footprint index j0 per axis (sorted order; may be < 0) */
    void *frac;          /* [M][3] offsets v in the plan's type */
    void *coef;          /* [degree + 1][MR_NUFFT_MAX_WIDTH] polynomial coefficients in the plan's type */
    void *grid;          /* [nfine][2] the fine grid (fftw(f)_malloc) */
    int64_t gb, gbx;     /* lines per group of the y and z passes, rows per group of the x pass */
    void *fbuf;          /* per thread [fbuf_stride] complex: the passes' line buffers (fftw(f)_malloc) */
    size_t fbuf_stride;  /* complex elements per thread buffer (a multiple of 8: equal alignment) */
    void *plan[3][2];    /* fftwf_plan or fftw_plan per axis: [a][0] e^{+i} (type 1), [a][1] e^{-i} (type 2) */
    double *deconv[3];   /* [n_a] 1 / phi^ per axis (NULL for a spreader) */
    double cpc[3];       /* fine-grid cells per cycle/FOV per axis: n_f / scale, or the spreader's */
    double t_spread, t_fft, t_deconv; /* the FFT's passes include the deconvolution (fused); t_deconv 0 */
};

/* The extents the FFT passes use (nufft_impl.h). */
typedef struct {
    int64_t nx, ny, nz, nfx, nfy, nfz, plane, gb, gbx;
    const double *dx, *dy, *dz;
} pass_geom;

static pass_geom pass_geom_of(const mr_nufft *p)
{
    const pass_geom g = {p->g.n[0], p->g.n[1], p->g.n[2], p->par.fine[0], p->par.fine[1], p->par.fine[2],
                         p->par.fine[0] * p->par.fine[1], p->gb, p->gbx, p->deconv[0], p->deconv[1], p->deconv[2]};
    return g;
}

/* CALL(VW) with the padded width as a literal (8, 16 or 24): loops of a fixed length, vectorised. */
#define NUFFT_BY_WPAD(p, CALL)                                                                                \
    do {                                                                                                      \
        if ((p)->wpad == 8)                                                                                   \
            CALL(8);                                                                                          \
        else if ((p)->wpad == 16)                                                                             \
            CALL(16);                                                                                         \
        else                                                                                                  \
            CALL(24);                                                                                         \
    } while (0)

/* lines per group of the strided passes (gathered into a buffer [len][gb], line index fastest) */
#define LINES_PER_GROUP 16

#define NUFFT_FLT float
#define NUFFT_SFX(x) x##_f32
#define NUFFT_EXEC(plan, buf) fftwf_execute_dft((fftwf_plan)(plan), (fftwf_complex *)(buf), (fftwf_complex *)(buf))
#include "nufft_impl.h"
#undef NUFFT_FLT
#undef NUFFT_SFX
#undef NUFFT_EXEC
#define NUFFT_FLT double
#define NUFFT_SFX(x) x##_f64
#define NUFFT_EXEC(plan, buf) fftw_execute_dft((fftw_plan)(plan), (fftw_complex *)(buf), (fftw_complex *)(buf))
#include "nufft_impl.h"
#undef NUFFT_FLT
#undef NUFFT_SFX
#undef NUFFT_EXEC

static int is_f64(const mr_nufft *p) { return p->par.precision == MR_NUFFT_PREC_F64; }

void mr_nufft_destroy(mr_nufft *p)
{
    if (!p)
        return;
    for (int a = 0; a < 3; a++)
        for (int d = 0; d < 2; d++) {
            if (is_f64(p))
                mr_fft64_destroy((fftw_plan)p->plan[a][d]);
            else
                mr_fft_destroy((fftwf_plan)p->plan[a][d]);
        }
    if (is_f64(p)) {
        fftw_free(p->grid);
        fftw_free(p->fbuf);
    } else {
        fftwf_free(p->grid);
        fftwf_free(p->fbuf);
    }
    free(p->slab_start);
    free(p->perm);
    free(p->base);
    free(p->frac);
    free(p->coef);
    for (int a = 0; a < 3; a++)
        free(p->deconv[a]);
    free(p);
}

const mr_nufft_params *mr_nufft_get_params(const mr_nufft *p) { return &p->par; }
int64_t mr_nufft_samples(const mr_nufft *p) { return p->m; }
int64_t mr_nufft_bytes(const mr_nufft *p) { return mr_nufft_host_bytes(&p->par, p->m); }

void mr_nufft_last_times(const mr_nufft *p, double *spread_s, double *fft_s, double *deconv_s)
{
    if (spread_s)
        *spread_s = p->t_spread;
    if (fft_s)
        *fft_s = p->t_fft;
    if (deconv_s)
        *deconv_s = p->t_deconv;
}

/* One group plan of len-point transforms, in place on the thread buffers: gb lines interleaved ([len][gb],
 * stride gb) or, contiguous, gb rows one after the other ([gb][len]); single-threaded (OpenMP splits the
 * groups). */
static void *plan_group(const mr_nufft *p, int64_t len, int64_t gb, int contiguous, int sign)
{
    if (is_f64(p)) {
        fftw_iodim d = {(int)len, contiguous ? 1 : (int)gb, contiguous ? 1 : (int)gb};
        fftw_iodim h = {(int)gb, contiguous ? (int)len : 1, contiguous ? (int)len : 1};
        fftw_complex *b = (fftw_complex *)p->fbuf;
        return mr_fft64_plan_guru(1, &d, 1, &h, b, b, sign, 1);
    }
    fftwf_iodim d = {(int)len, contiguous ? 1 : (int)gb, contiguous ? 1 : (int)gb};
    fftwf_iodim h = {(int)gb, contiguous ? (int)len : 1, contiguous ? (int)len : 1};
    fftwf_complex *b = (fftwf_complex *)p->fbuf;
    return mr_fft_plan_guru(1, &d, 1, &h, b, b, sign, 1);
}

/* The line buffers and the group plans of the passes (nufft_impl.h). */
static mr_status plan_ffts(mr_nufft *p)
{
    const size_t fl = is_f64(p) ? sizeof(double) : sizeof(float);
    const int64_t rows = p->g.n[1] * p->g.n[2];
    int64_t lmax = 1;
    for (int a = 0; a < 3; a++)
        lmax = p->par.fine[a] > lmax ? p->par.fine[a] : lmax;
    p->gb = LINES_PER_GROUP;
    p->gbx = rows < LINES_PER_GROUP ? rows : LINES_PER_GROUP;
    const int64_t need = lmax * p->gb > p->par.fine[0] * p->gbx ? lmax * p->gb : p->par.fine[0] * p->gbx;
    p->fbuf_stride = (size_t)(need + 7) / 8 * 8;
    const size_t bytes = p->fbuf_stride * (size_t)p->threads * 2 * fl;
    p->fbuf = is_f64(p) ? (void *)fftw_malloc(bytes) : (void *)fftwf_malloc(bytes);
    if (!p->fbuf)
        return mr_error(MR_ENOMEM, "nufft: out of memory for the FFT line buffers (%zu bytes)", bytes);
    memset(p->fbuf, 0, bytes);
    for (int a = 0; a < 3; a++) {
        if (p->par.fine[a] < 2)
            continue;
        for (int d = 0; d < 2; d++) {
            const int sign = d == 0 ? FFTW_BACKWARD : FFTW_FORWARD;
            p->plan[a][d] = a == 0 ? plan_group(p, p->par.fine[0], p->gbx, 1, sign)
                                   : plan_group(p, p->par.fine[a], p->gb, 0, sign);
            if (!p->plan[a][d])
                return mr_error(MR_EFFT, "nufft: FFTW could not plan %lld-point transforms (axis %d)",
                                (long long)p->par.fine[a], a);
        }
    }
    return MR_OK;
}

/* Coordinates, bins and the counting sort (see the top of the file). */
static mr_status sort_samples(mr_nufft *p, const float *traj)
{
    const int64_t m = p->m;
    const int w = p->par.width;
    int slow = -1, mid = -1, fast = -1;
    for (int a = 2; a >= 0; a--)
        if (p->par.active[a]) {
            if (slow < 0)
                slow = a;
            else if (mid < 0)
                mid = a;
            else
                fast = a;
        }
    if (fast < 0 && mid >= 0) { /* two active axes: the faster one is "fast" */
        fast = mid;
        mid = -1;
    }
    const int64_t nfs = slow >= 0 ? p->par.fine[slow] : 1;
    int64_t ns = nfs / w;
    if (ns & 1)
        ns--;
    p->nslabs = ns >= 2 ? (int)ns : 1;
    p->pad_rows = p->par.active[0] && slow != 0;
    const int64_t nbm = mid >= 0 ? (p->par.fine[mid] + BIN_MID - 1) / BIN_MID : 1;
    const int64_t nbf = fast >= 0 ? (p->par.fine[fast] + BIN_FAST - 1) / BIN_FAST : 1;
    const int64_t nkeys = (int64_t)p->nslabs * nbm * nbf;
    int64_t *key = malloc((size_t)m * sizeof *key);
    int64_t *count = calloc((size_t)nkeys + 1, sizeof *count);
    int32_t *base = malloc((size_t)m * 3 * sizeof *base);
    double *off = malloc((size_t)m * 3 * sizeof *off);
    p->perm = malloc((size_t)m * sizeof *p->perm);
    p->base = malloc((size_t)m * 3 * sizeof *p->base);
    p->frac = malloc((size_t)m * 3 * (is_f64(p) ? sizeof(double) : sizeof(float)));
    p->slab_start = calloc((size_t)p->nslabs + 1, sizeof *p->slab_start);
    mr_status st = MR_OK;
    if (!key || !count || !base || !off || !p->perm || !p->base || !p->frac || !p->slab_start) {
        st = mr_error(MR_ENOMEM, "nufft: out of memory sorting %lld samples", (long long)m);
        goto done;
    }
    for (int64_t k = 0; k < m && st == MR_OK; k++) {
        int64_t wrapped[3] = {0, 0, 0};
        for (int a = 0; a < 3; a++) {
            base[3 * k + a] = 0;
            off[3 * k + a] = 0.0;
            const double kk = traj[3 * k + a];
            if (!isfinite(kk) || fabs(kk * p->cpc[a] / (double)p->par.fine[a]) > MAX_PERIODS) {
                st = mr_error(MR_EINVAL, "nufft: sample %lld has k[%d] = %g, not finite or beyond %g periods",
                              (long long)k, a, kk, MAX_PERIODS);
                break;
            }
            if (!p->par.active[a])
                continue;
            const double nf = (double)p->par.fine[a];
            double u = kk * p->cpc[a];
            u -= nf * floor(u / nf);
            if (u >= nf)
                u -= nf;
            const double j0 = ceil(u - 0.5 * w);
            base[3 * k + a] = (int32_t)j0;
            off[3 * k + a] = 2.0 * (j0 - u + 0.5 * w) - 1.0;
            wrapped[a] = j0 < 0 ? (int64_t)j0 + p->par.fine[a] : (int64_t)j0;
        }
        if (st != MR_OK)
            break;
        const int64_t sl = slow >= 0 ? wrapped[slow] * p->nslabs / nfs : 0;
        const int64_t bm = mid >= 0 ? wrapped[mid] / BIN_MID : 0;
        const int64_t bf = fast >= 0 ? wrapped[fast] / BIN_FAST : 0;
        key[k] = (sl * nbm + bm) * nbf + bf;
        count[key[k] + 1]++;
    }
    if (st != MR_OK)
        goto done;
    for (int64_t b = 0; b < nkeys; b++)
        count[b + 1] += count[b];
    for (int s = 0; s <= p->nslabs; s++)
        p->slab_start[s] = count[(int64_t)s * nbm * nbf];
    for (int64_t k = 0; k < m; k++) {
        const int64_t pos = count[key[k]]++;
        p->perm[pos] = k;
        for (int a = 0; a < 3; a++) {
            p->base[3 * pos + a] = base[3 * k + a];
            if (is_f64(p))
                ((double *)p->frac)[3 * pos + a] = off[3 * k + a];
            else
                ((float *)p->frac)[3 * pos + a] = (float)off[3 * k + a];
        }
    }
done:
    free(key);
    free(count);
    free(base);
    free(off);
    return st;
}

mr_status mr_nufft_create(mr_nufft **out, const mr_grid *g, const float *traj, int64_t m, const mr_nufft_opts *o)
{
    *out = NULL;
    mr_nufft_opts def;
    if (!o) {
        mr_nufft_opts_default(&def);
        o = &def;
    }
    if (!g || !traj || m < 1 || m > MR_MAX_SAMPLES)
        return mr_error(MR_EINVAL, "nufft: need a grid, a trajectory and 1..%lld samples (got %lld)",
                        (long long)MR_MAX_SAMPLES, (long long)m);
    mr_nufft *p = calloc(1, sizeof *p);
    if (!p)
        return mr_error(MR_ENOMEM, "nufft: out of memory for the plan");
    p->g = *g;
    p->m = m;
    p->threads = mr_kb_threads(o->threads);
    mr_nufft_opts oo = *o;
    oo.threads = p->threads;
    mr_status st = mr_nufft_params_choose(g, m, &oo, MR_NUFFT_ON_CPU, &p->par);
    if (st != MR_OK) {
        free(p);
        return st;
    }
    p->wpad = (p->par.width + 7) & ~7;
    for (int a = 0; a < 3; a++)
        p->cpc[a] = (double)p->par.fine[a] / (double)g->scale[a];
    {
        double updates = (double)m;
        for (int a = 0; a < 3; a++)
            updates *= p->par.active[a] ? p->par.width : 1;
        if (p->par.fine[0] * p->par.fine[1] * p->par.fine[2] < SERIAL_POINTS && updates < SERIAL_UPDATES)
            p->threads = 1;
    }
    const int f64 = is_f64(p);
    const size_t fl = f64 ? sizeof(double) : sizeof(float);
    p->nfine = p->par.fine[0] * p->par.fine[1] * p->par.fine[2];
    p->coef = malloc((size_t)(p->par.degree + 1) * MR_NUFFT_MAX_WIDTH * fl);
    p->grid = f64 ? (void *)fftw_malloc((size_t)p->nfine * 2 * fl) : (void *)fftwf_malloc((size_t)p->nfine * 2 * fl);
    for (int a = 0; a < 3; a++)
        p->deconv[a] = malloc((size_t)g->n[a] * sizeof(double));
    if (!p->coef || !p->grid || !p->deconv[0] || !p->deconv[1] || !p->deconv[2]) {
        st = mr_error(MR_ENOMEM, "nufft: out of memory for a %lldx%lldx%lld fine grid (%.3g GB)",
                      (long long)p->par.fine[0], (long long)p->par.fine[1], (long long)p->par.fine[2],
                      (double)p->nfine * 2 * (double)fl * 1e-9);
        goto fail;
    }
    for (int d = 0; d <= p->par.degree; d++)
        for (int i = 0; i < MR_NUFFT_MAX_WIDTH; i++) {
            const double c = i < p->par.width ? p->par.coef[d][i] : 0.0;
            if (f64)
                ((double *)p->coef)[d * MR_NUFFT_MAX_WIDTH + i] = c;
            else
                ((float *)p->coef)[d * MR_NUFFT_MAX_WIDTH + i] = (float)c;
        }
    for (int a = 0; a < 3; a++)
        mr_nufft_deconv(&p->par, g, a, p->deconv[a]);
    if ((st = sort_samples(p, traj)) != MR_OK || (st = plan_ffts(p)) != MR_OK)
        goto fail;
    mr_log(MR_LOG_DEBUG,
           "nufft: grid %lldx%lldx%lld, %lld samples, tol -> w %d, beta %.2f, sigma %.3g, degree %d (fit %.1e), "
           "fine %lldx%lldx%lld, %s, %d slabs, %d threads",
           (long long)g->n[0], (long long)g->n[1], (long long)g->n[2], (long long)m, p->par.width, p->par.beta,
           p->par.upsample, p->par.degree, p->par.fit_error, (long long)p->par.fine[0], (long long)p->par.fine[1],
           (long long)p->par.fine[2], f64 ? "float64" : "float32", p->nslabs, p->threads);
    *out = p;
    return MR_OK;
fail:
    mr_nufft_destroy(p);
    return st;
}

static mr_status type1(mr_nufft *p, int64_t ncoils, const void *a, int in_f64, int real, void *out)
{
    if (!p || !a || !out || ncoils < 1)
        return mr_error(MR_EINVAL, "nufft type 1: need a plan, arrays and at least one coil");
    const int64_t nv = mr_grid_size(&p->g), stride_in = real ? p->m : 2 * p->m;
    const size_t in_sz = in_f64 ? sizeof(double) : sizeof(float);
    p->t_spread = p->t_fft = p->t_deconv = 0.0;
    for (int64_t c = 0; c < ncoils; c++) {
        const void *ac = (const char *)a + (size_t)(c * stride_in) * in_sz;
        void *oc = (char *)out + (size_t)(c * 2 * nv) * in_sz;
        const double t0 = mr_now();
        if (is_f64(p))
            spread_f64(p, ac, in_f64, real, (double *)p->grid, 2);
        else
            spread_f32(p, ac, in_f64, real, (float *)p->grid, 2);
        const double t1 = mr_now();
        if (is_f64(p))
            type1_passes_f64(p, (double *)p->grid, oc, in_f64);
        else
            type1_passes_f32(p, (float *)p->grid, oc, in_f64);
        p->t_spread += t1 - t0;
        p->t_fft += mr_now() - t1;
    }
    return MR_OK;
}

static mr_status type2(mr_nufft *p, int64_t ncoils, const void *x, int f64, void *out)
{
    if (!p || !x || !out || ncoils < 1)
        return mr_error(MR_EINVAL, "nufft type 2: need a plan, arrays and at least one coil");
    const int64_t nv = mr_grid_size(&p->g);
    const size_t sz = f64 ? sizeof(double) : sizeof(float);
    p->t_spread = p->t_fft = p->t_deconv = 0.0;
    for (int64_t c = 0; c < ncoils; c++) {
        const void *xc = (const char *)x + (size_t)(c * 2 * nv) * sz;
        void *oc = (char *)out + (size_t)(c * 2 * p->m) * sz;
        const double t0 = mr_now();
        if (is_f64(p))
            type2_passes_f64(p, xc, f64, (double *)p->grid);
        else
            type2_passes_f32(p, xc, f64, (float *)p->grid);
        const double t1 = mr_now();
        if (is_f64(p))
            interp_f64(p, (const double *)p->grid, oc, f64, 2);
        else
            interp_f32(p, (const float *)p->grid, oc, f64, 2);
        p->t_fft += t1 - t0;
        p->t_spread += mr_now() - t1;
    }
    return MR_OK;
}

mr_status mr_nufft_type1(mr_nufft *p, int64_t ncoils, const float *a, int real_weights, float *out)
{
    return type1(p, ncoils, a, 0, real_weights, out);
}

mr_status mr_nufft_type1_f64(mr_nufft *p, int64_t ncoils, const double *a, int real_weights, double *out)
{
    return type1(p, ncoils, a, 1, real_weights, out);
}

mr_status mr_nufft_type2(mr_nufft *p, int64_t ncoils, const float *x, float *out)
{
    return type2(p, ncoils, x, 0, out);
}

mr_status mr_nufft_type2_f64(mr_nufft *p, int64_t ncoils, const double *x, double *out)
{
    return type2(p, ncoils, x, 1, out);
}

mr_status mr_nufft_spreader_create(mr_nufft **out, const int64_t n[3], const double cells_per_cycle[3], int width,
                                   mr_nufft_kernel_fn fn, void *ctx, const float *traj, int64_t m, int threads)
{
    *out = NULL;
    if (!traj || !fn || m < 1 || m > MR_MAX_SAMPLES || width < 2 || width > MR_NUFFT_MAX_WIDTH)
        return mr_error(MR_EINVAL, "nufft spreader: need a trajectory, 1..%lld samples and a kernel 2..%d cells wide",
                        (long long)MR_MAX_SAMPLES, MR_NUFFT_MAX_WIDTH);
    for (int a = 0; a < 3; a++)
        if (n[a] < 1 || (n[a] > 1 && (n[a] < width || !(cells_per_cycle[a] > 0) || !isfinite(cells_per_cycle[a]))))
            return mr_error(MR_EINVAL, "nufft spreader: axis %d has %lld points (at least the width %d) and %g cells per "
                                       "cycle",
                            a, (long long)n[a], width, cells_per_cycle[a]);
    mr_nufft *p = calloc(1, sizeof *p);
    if (!p)
        return mr_error(MR_ENOMEM, "nufft spreader: out of memory");
    p->m = m;
    p->threads = mr_kb_threads(threads);
    p->par.width = width;
    p->par.precision = MR_NUFFT_PREC_F32;
    p->par.upsample = 1.0;
    for (int a = 0; a < 3; a++) {
        p->par.n[a] = p->par.fine[a] = n[a];
        p->par.active[a] = n[a] > 1;
        p->par.dim += p->par.active[a];
        p->cpc[a] = n[a] > 1 ? cells_per_cycle[a] : 1.0;
        p->g.n[a] = n[a];
        p->g.scale[a] = 1;
    }
    mr_nufft_fit(&p->par, fn, ctx, 1e-7);
    p->wpad = (width + 7) & ~7;
    p->nfine = n[0] * n[1] * n[2];
    p->coef = malloc((size_t)(p->par.degree + 1) * MR_NUFFT_MAX_WIDTH * sizeof(float));
    mr_status st = p->coef ? MR_OK : mr_error(MR_ENOMEM, "nufft spreader: out of memory");
    for (int d = 0; st == MR_OK && d <= p->par.degree; d++)
        for (int i = 0; i < MR_NUFFT_MAX_WIDTH; i++)
            ((float *)p->coef)[d * MR_NUFFT_MAX_WIDTH + i] = i < width ? (float)p->par.coef[d][i] : 0.0f;
    if (st == MR_OK)
        st = sort_samples(p, traj);
    if (st != MR_OK) {
        mr_nufft_destroy(p);
        return st;
    }
    *out = p;
    return MR_OK;
}

mr_status mr_nufft_spread_real(mr_nufft *p, const float *v, float *grid)
{
    if (!p || !v || !grid || p->fbuf)
        return mr_error(MR_EINVAL, "nufft spreader: need a spreader plan and arrays");
    const double t0 = mr_now();
    spread_f32(p, v, 0, 1, grid, 1);
    p->t_spread = mr_now() - t0;
    return MR_OK;
}

mr_status mr_nufft_interp_real(mr_nufft *p, const float *grid, float *v)
{
    if (!p || !v || !grid || p->fbuf)
        return mr_error(MR_EINVAL, "nufft spreader: need a spreader plan and arrays");
    const double t0 = mr_now();
    interp_f32(p, grid, v, 0, 1);
    p->t_spread = mr_now() - t0;
    return MR_OK;
}
