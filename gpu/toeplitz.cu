/* The Toeplitz normal on the device (gpu_ops.h; the maths of solver/toeplitz.h) on the 2N grid (P_a = 2 N_a,
 * axes with N_a = 1 stay 1), applied per image as
 *   pad x into the P grid (zeros outside [0, N_a)) -> FFT -> multiply by the real spectrum H ->
 *   inverse FFT -> crop the first N_a entries per axis,
 * with H = Re FFT(c) / P, c = Q arranged circulantly (c[j] = Q_grid[(j + N_a) mod P_a], 0 where
 * j_a = N_a).
 *
 * The transforms are memory-bound (a 512^3 grid is 1.07 GB per pass), so they are pruned by slabs: with
 * the slowest axis s of the grid (z in 3D, y in 2D), the padded image is non-zero only in the first N_s
 * slabs, and only those slabs are needed after the inverse. The forward transform is the FFT over the
 * faster axes of those N_s slabs alone (one plan, `lo`, batched over the slabs: they are contiguous),
 * then the 1D FFT along s over every line (`hi`, strided); the inverse is `hi` then `lo` on the first N_s
 * slabs. That skips half the work of every pass but the one along s (60 CG iterations at 256^3: 0.25
 * against 0.31 s on an H200, docs/GPU.md). The kernel's own spectrum (not zero outside) runs `lo` on both halves. A grid with one
 * axis longer than 1 has a single 1D plan. Where P_s is a power of 2 from 8 to 1024, the applications do the
 * s axis, H and its inverse in one kernel on the lines' lower halves (gpu/toeplitz_column.cu), and only the
 * first N_s slabs are padded; `hi` then serves the spectrum in create alone. Where every axis's P_a is such a
 * power, the applications take no cuFFT at all (`lines`): one kernel pads the fastest axis's rows and
 * transforms them, another the middle axis, then the fused s axis, and back, the last kernel writing the
 * cropped image; `lo` then serves the spectrum alone too (docs/GPU.md, "Every axis by line kernels").
 * MR_GPU_TOEPLITZ (for benchmarks and tests): `full` takes one unpruned plan of the whole grid, `cufft` the
 * pruned cuFFT plans everywhere, `column` the fused s axis with cuFFT's slab transforms.
 *
 * cuFFT is loaded at run time with dlopen (the library the build found, then the usual sonames), so
 * the program links no cuFFT and starts where it is missing; the GPU Toeplitz then fails with
 * MR_ENODEV naming the library. The four entry points used are looked up once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cufft.h>

#include "../base/log.h"
#include "cuda_check.h"
#include "cufft_api.h"
#include "dl.h"
#include "../solver/toeplitz.h"
#include "../solver/toeplitz_chan.h"
#include "gpu_internal.h"

#ifndef MR_CUFFT_LIBRARY
#define MR_CUFFT_LIBRARY "libcufft.so"
#endif
#ifndef MR_CUFFT_SONAME
#define MR_CUFFT_SONAME "libcufft.so"
#endif

static const char *const cufft_names[] = {MR_CUFFT_LIBRARY, MR_CUFFT_SONAME, "libcufft.so.12", "libcufft.so.13",
                                          "libcufft.so.11", "libcufft.so", NULL};
/* in the order of mr_cufft_api's members (gpu/cufft_api.h) */
static const char *const cufft_symbols[] = {"cufftPlanMany", "cufftSetStream", "cufftExecC2C", "cufftDestroy",
                                            "cufftExecZ2Z", "cufftEstimateMany", NULL};
static mr_cufft_api cufft_api;
static mr_dl_lib cufft_lib = {"cuFFT", cufft_names, cufft_symbols, (void **)&cufft_api, MR_DL_STATE};
#define CUFFT_PLAN_MANY (cufft_api.plan_many)
#define CUFFT_SET_STREAM (cufft_api.set_stream)
#define CUFFT_EXEC (cufft_api.exec_c2c)
#define CUFFT_DESTROY (cufft_api.destroy)

const mr_cufft_api *mr_cufft(void) { return &cufft_api; }

mr_status mr_gpu_fft_load(void)
{
    mr_status st = mr_dl_load(&cufft_lib);
    if (st == MR_OK)
        return MR_OK;
    char why[768];
    snprintf(why, sizeof why, "%s", mr_last_error());
    return mr_error(st, "GPU Toeplitz operator: %s", why);
}

mr_status mr_cufft_check(cufftResult r, const char *what)
{
    if (r == CUFFT_SUCCESS)
        return MR_OK;
    return mr_error(r == CUFFT_ALLOC_FAILED ? MR_ENOMEM : MR_ECUDA, "cuFFT: %s failed with code %d", what, (int)r);
}

struct mr_gpu_toeplitz {
    mr_gpu_ctx *c;
    long long n[3], p[3], nn, pp; /* image and 2N-grid extents, sizes */
    float2 *work;                 /* [P] */
    float *h;                     /* [P] */
    /* cuFFT plans (-1: none): `plan` of the whole grid (a 1D grid, or MR_GPU_TOEPLITZ=full), else `lo` (the
     * faster axes, batched over slabs of `slab` points) and `hi` (the slowest axis, stride `slab`), the first
     * nslow slabs being the padded image's */
    int plan, lo, hi;
    long long slab, nslow;
    int slow;   /* the slowest axis with P_a > 1 (-1: none) */
    int column; /* 1: the slowest axis by the fused kernel (gpu/toeplitz_column.cu) in the applications */
    float2 *tw; /* its twiddles [P_slow] */
    /* 1: every axis by the line kernels of gpu/toeplitz_column.cu (no cuFFT in the applications): the axes
     * with P_a > 1, fastest first, act[0 .. nact); the twiddles of act[i] in twa[i] (i < nact - 1), the
     * slowest axis's in tw */
    int lines, nact, act[3];
    float2 *twa[2];
    double plan_s;
    float *lam;   /* [N] the circulant approximation's eigenvalues (solver/toeplitz.h) */
    double lam0;  /* the one at frequency 0 */
    int cplan;    /* its N-grid transform (-1: none, a 1x1x1 grid) */
};

/* What every kernel needs: extents of both grids. */
struct mr_tp_geom {
    long long n[3], p[3], nn, pp;
};

static mr_tp_geom geom_of(const mr_gpu_toeplitz *t)
{
    mr_tp_geom g;
    for (int a = 0; a < 3; a++) {
        g.n[a] = t->n[a];
        g.p[a] = t->p[a];
    }
    g.nn = t->nn;
    g.pp = t->pp;
    return g;
}

/* Kernels over a grid use a 3D launch: x over axis 0 (256 per block), blockIdx.y/z = axes 1 and 2. */
static dim3 grid3(long long n0, long long n1, long long n2)
{
    return dim3((unsigned)((n0 + MR_GPU_THREADS - 1) / MR_GPU_THREADS), (unsigned)n1, (unsigned)n2);
}

/* c[j] = Q at offset j (j < N_a) or j - 2N_a (j > N_a) per axis; 0 where j_a = N_a on an axis with P_a > 1. */
__global__ void k_arrange(mr_tp_geom g, const float2 *q, float2 *c)
{
    const long long jj[3] = {(long long)blockIdx.x * blockDim.x + threadIdx.x, blockIdx.y, blockIdx.z};
    if (jj[0] >= g.p[0])
        return;
    long long src[3];
    bool unused = false;
    for (int a = 0; a < 3; a++) {
        if (g.p[a] == 1) {
            src[a] = 0;
            continue;
        }
        unused |= jj[a] == g.n[a];
        src[a] = jj[a] + g.n[a] < g.p[a] ? jj[a] + g.n[a] : jj[a] - g.n[a];
    }
    c[(jj[2] * g.p[1] + jj[1]) * g.p[0] + jj[0]] =
        unused ? make_float2(0.0f, 0.0f) : q[(src[2] * g.p[1] + src[1]) * g.p[0] + src[0]];
}

__global__ void k_real_scaled(long long n, const float2 *c, float *h, float scale)
{
    MR_GRID_STRIDE(i, n) h[i] = c[i].x * scale;
}

__global__ void k_pad(mr_tp_geom g, const float2 *x, float2 *w)
{
    const long long j0 = (long long)blockIdx.x * blockDim.x + threadIdx.x, j1 = blockIdx.y, j2 = blockIdx.z;
    if (j0 >= g.p[0])
        return;
    w[(j2 * g.p[1] + j1) * g.p[0] + j0] = (j0 < g.n[0] && j1 < g.n[1] && j2 < g.n[2])
                                                 ? x[(j2 * g.n[1] + j1) * g.n[0] + j0]
                                                 : make_float2(0.0f, 0.0f);
}

__global__ void k_multiply(long long n, float2 *w, const float *h)
{
    MR_GRID_STRIDE(i, n)
    {
        const float f = h[i];
        float2 v = w[i];
        v.x *= f;
        v.y *= f;
        w[i] = v;
    }
}

__global__ void k_crop(mr_tp_geom g, const float2 *w, float2 *y)
{
    const long long i0 = (long long)blockIdx.x * blockDim.x + threadIdx.x, i1 = blockIdx.y, i2 = blockIdx.z;
    if (i0 < g.n[0])
        y[(i2 * g.n[1] + i1) * g.n[0] + i0] = w[(i2 * g.p[1] + i1) * g.p[0] + i0];
}

/* Chan's circulant on the N grid (solver/toeplitz_chan.h, the host's formula). */
__global__ void k_chan(mr_tp_geom g, const float *q, float2 *c)
{
    const long long m[3] = {(long long)blockIdx.x * blockDim.x + threadIdx.x, blockIdx.y, blockIdx.z};
    if (m[0] >= g.n[0])
        return;
    double v[2];
    mr_toeplitz_chan(g.n, g.p, q, m, v);
    c[(m[2] * g.n[1] + m[1]) * g.n[0] + m[0]] = make_float2((float)v[0], (float)v[1]);
}

/* z[k] /= max(a lam[k] + g sum_a 4 sin^2(pi k_a / N_a) + s, floor) * N (the inverse transform's 1/N). */
__global__ void k_circ_divide(mr_tp_geom g, float2 *z, const float *lam, double a, double gw, double s, double floor)
{
    const long long k[3] = {(long long)blockIdx.x * blockDim.x + threadIdx.x, blockIdx.y, blockIdx.z};
    if (k[0] >= g.n[0])
        return;
    const long long i = (k[2] * g.n[1] + k[1]) * g.n[0] + k[0];
    float gs = 0; /* single precision: a preconditioner's model */
    for (int ax = 0; ax < 3; ax++) {
        const float sn = sinpif((float)k[ax] / (float)g.n[ax]);
        gs += 4.0f * sn * sn;
    }
    const double l = lam[i];
    double den = a * (l > 0 ? l : 0.0) + gw * gs + s;
    den = den > floor ? den : floor;
    const float f = (float)(1.0 / (den * (double)g.nn));
    float2 v = z[i];
    v.x *= f;
    v.y *= f;
    z[i] = v;
}

/* t->lam, t->lam0 and t->cplan from the device Q (t->work as scratch). */
static mr_status make_circulant(mr_gpu_toeplitz *t, const float *q)
{
    int dims[3], rank = 0;
    for (int a = 2; a >= 0; a--) /* slowest axis first for cuFFT */
        if (t->n[a] > 1)
            dims[rank++] = (int)t->n[a];
    if (!(t->lam = mr_gpu_alloc(t->c, t->nn)))
        return MR_ENOMEM;
    mr_status st = rank ? mr_gpu_fft_plan(&t->cplan, t->c, rank, dims, 1, 0) : MR_OK;
    const mr_tp_geom g = geom_of(t);
    cudaStream_t s = mr_gpu_ctx_stream(t->c);
    if (st == MR_OK) {
        k_chan<<<grid3(t->n[0], t->n[1], t->n[2]), MR_GPU_THREADS, 0, s>>>(g, q, t->work);
        st = mr_gpu_ctx_launched(t->c, "circulant approximation");
    }
    if (st == MR_OK && t->cplan >= 0)
        st = mr_gpu_fft_exec(t->cplan, t->work, 0);
    if (st == MR_OK) {
        k_real_scaled<<<mr_gpu_blocks(t->nn), MR_GPU_THREADS, 0, s>>>(t->nn, t->work, t->lam, 1.0f);
        st = mr_gpu_ctx_launched(t->c, "circulant eigenvalues");
    }
    float l0 = 0;
    if (st == MR_OK)
        st = MR_CU(cudaMemcpyAsync(&l0, t->lam, sizeof l0, cudaMemcpyDeviceToHost, s));
    if (st == MR_OK)
        st = mr_gpu_ctx_sync(t->c);
    t->lam0 = l0;
    return st;
}

mr_status mr_gpu_toeplitz_circulant_solve(mr_gpu_toeplitz *t, double a, double g, double s, const float *r, float *z)
{
    cudaStream_t cs = mr_gpu_ctx_stream(t->c);
    mr_status st = MR_OK;
    if (z != r)
        st = MR_CU(cudaMemcpyAsync(z, r, (size_t)t->nn * sizeof(float2), cudaMemcpyDeviceToDevice, cs));
    if (st == MR_OK && t->cplan >= 0)
        st = mr_gpu_fft_exec(t->cplan, (float2 *)z, 0);
    if (st == MR_OK) {
        const double floor = MR_TOEPLITZ_CIRC_FLOOR * (a * t->lam0 + 12.0 * g + s);
        k_circ_divide<<<grid3(t->n[0], t->n[1], t->n[2]), MR_GPU_THREADS, 0, cs>>>(geom_of(t), (float2 *)z, t->lam,
                                                                                     a, g, s, floor);
        st = mr_gpu_ctx_launched(t->c, "circulant division");
    }
    if (st == MR_OK && t->cplan >= 0)
        st = mr_gpu_fft_exec(t->cplan, (float2 *)z, 1);
    return st == MR_OK ? MR_OK : mr_gpu_ctx_fail(t->c, st);
}

void mr_gpu_toeplitz_destroy(mr_gpu_toeplitz *t)
{
    if (!t)
        return;
    mr_gpu_fft_destroy(t->cplan);
    mr_gpu_free(t->c, t->lam);
    mr_gpu_fft_destroy(t->plan);
    mr_gpu_fft_destroy(t->lo);
    mr_gpu_fft_destroy(t->hi);
    mr_gpu_free(t->c, t->work);
    mr_gpu_free(t->c, t->h);
    mr_gpu_free(t->c, t->tw);
    for (int i = 0; i < 2; i++)
        mr_gpu_free(t->c, t->twa[i]);
    free(t);
}

double mr_gpu_toeplitz_plan_seconds(const mr_gpu_toeplitz *t) { return t ? t->plan_s : 0.0; }

/* `lo` on the padded image's slabs, and on the other half too unless `padded`. */
static mr_status slabs(mr_gpu_toeplitz *t, int inverse, int padded)
{
    mr_status st = mr_gpu_fft_exec(t->lo, t->work, inverse);
    if (st == MR_OK && !padded)
        st = mr_gpu_fft_exec(t->lo, t->work + t->nslow * t->slab, inverse);
    return st;
}

/* One transform of the P grid in place: of a padded image (forward) or to be cropped (inverse) when
 * `padded`, else of the whole grid. */
static mr_status transform(mr_gpu_toeplitz *t, int inverse, int padded)
{
    if (t->lo < 0)
        return t->plan >= 0 ? mr_gpu_fft_exec(t->plan, t->work, inverse) : MR_OK; /* no plan: a 1x1x1 grid */
    mr_status st = inverse ? MR_OK : slabs(t, 0, padded);
    if (st == MR_OK)
        st = mr_gpu_fft_exec(t->hi, t->work, inverse);
    return st == MR_OK && inverse ? slabs(t, 1, padded) : st;
}

/* The plans of t (t->n, t->p set): see the top of the file. */
static mr_status make_plans(mr_gpu_toeplitz *t)
{
    int dims[3], rank = 0, slow = -1;
    for (int a = 2; a >= 0; a--) /* slowest axis first for cuFFT */
        if (t->p[a] > 1) {
            dims[rank++] = (int)t->p[a];
            if (slow < 0)
                slow = a;
        }
    if (rank == 0)
        return MR_OK;
    const char *env = getenv("MR_GPU_TOEPLITZ");
    if (rank == 1 || (env && !strcmp(env, "full")))
        return mr_gpu_fft_plan(&t->plan, t->c, rank, dims, 1, 0);
    t->slow = slow;
    t->nslow = t->n[slow];
    t->slab = t->pp / t->p[slow];
    t->column = !(env && !strcmp(env, "cufft")) && mr_gpu_tp_column_supported(t->p[slow]);
    t->lines = t->column && !(env && !strcmp(env, "column"));
    for (int a = 0; a < 3; a++)
        if (t->p[a] > 1) {
            t->act[t->nact++] = a;
            t->lines &= mr_gpu_tp_column_supported(t->p[a]);
        }
    mr_status st = mr_gpu_fft_plan(&t->lo, t->c, rank - 1, dims + 1, (int)t->nslow, 0);
    if (st == MR_OK && t->column)
        st = mr_gpu_tp_column_prepare(t->c, t->p[slow], &t->tw);
    for (int i = 0; st == MR_OK && t->lines && i < t->nact - 1; i++)
        st = mr_gpu_tp_column_prepare(t->c, t->p[t->act[i]], &t->twa[i]);
    /* `hi` transforms the kernel's spectrum in create; with the fused kernel it goes after that */
    return st == MR_OK ? mr_gpu_fft_plan(&t->hi, t->c, 1, dims, (int)t->slab, (int)t->slab) : st;
}

mr_status mr_gpu_toeplitz_create(mr_gpu_toeplitz **out, mr_gpu_ctx *c, const int64_t matrix[3], const float *q)
{
    *out = NULL;
    mr_gpu_toeplitz *t = (mr_gpu_toeplitz *)calloc(1, sizeof *t);
    if (!t)
        return mr_error(MR_ENOMEM, "GPU Toeplitz operator: out of host memory");
    t->c = c;
    t->nn = t->pp = 1;
    t->plan = t->lo = t->hi = t->cplan = t->slow = -1;
    for (int a = 0; a < 3; a++) {
        t->n[a] = matrix[a];
        t->p[a] = matrix[a] > 1 ? 2 * matrix[a] : 1;
        t->nn *= t->n[a];
        t->pp *= t->p[a];
    }
    const double t0 = mr_now();
    mr_status st = MR_OK;
    if (!(t->work = (float2 *)mr_gpu_alloc(c, 2 * t->pp)) || !(t->h = mr_gpu_alloc(c, t->pp)))
        st = MR_ENOMEM;
    if (st == MR_OK)
        st = make_plans(t);
    if (st == MR_OK) { /* the kernel spectrum */
        const mr_tp_geom g = geom_of(t);
        cudaStream_t s = mr_gpu_ctx_stream(c);
        k_arrange<<<grid3(t->p[0], t->p[1], t->p[2]), MR_GPU_THREADS, 0, s>>>(g, (const float2 *)q, t->work);
        st = mr_gpu_ctx_launched(c, "Toeplitz kernel arrangement");
        if (st == MR_OK)
            st = transform(t, 0, 0);
        if (st == MR_OK) {
            k_real_scaled<<<mr_gpu_blocks(t->pp), MR_GPU_THREADS, 0, s>>>(t->pp, t->work, t->h, (float)(1.0 / (double)t->pp));
            st = mr_gpu_ctx_launched(c, "Toeplitz kernel spectrum");
        }
        if (st == MR_OK)
            st = mr_gpu_ctx_sync(c);
    }
    if (st == MR_OK && t->column) { /* the applications need no `hi` (nor its work area), the line kernels no `lo` */
        mr_gpu_fft_destroy(t->hi);
        t->hi = -1;
        if (t->lines) {
            mr_gpu_fft_destroy(t->lo);
            t->lo = -1;
        }
    }
    if (st == MR_OK)
        st = make_circulant(t, q);
    t->plan_s = mr_now() - t0;
    if (st != MR_OK) {
        mr_gpu_toeplitz_destroy(t);
        return st;
    }
    *out = t;
    return MR_OK;
}

/* ---- shared with gpu/field.cu (gpu_internal.h) ----------------------------------------------------- */

mr_status mr_gpu_fft_plan(int *plan, mr_gpu_ctx *c, int rank, const int *dims, int batch, int stride)
{
    mr_status st = mr_gpu_fft_load();
    cufftHandle h = 0;
    int n = dims[0];
    if (st == MR_OK && stride > 0) /* rank 1: a line's points `stride` apart, consecutive lines 1 apart */
        st = mr_cufft_check(CUFFT_PLAN_MANY(&h, 1, &n, &n, stride, 1, &n, stride, 1, CUFFT_C2C, batch),
                            "planning the strided transforms");
    else if (st == MR_OK)
        st = mr_cufft_check(CUFFT_PLAN_MANY(&h, rank, (int *)dims, NULL, 1, 0, NULL, 1, 0, CUFFT_C2C, batch), "planning");
    if (st == MR_OK && (st = mr_cufft_check(CUFFT_SET_STREAM(h, mr_gpu_ctx_stream(c)), "setting the stream")) != MR_OK)
        (void)CUFFT_DESTROY(h);
    *plan = st == MR_OK ? (int)h : -1;
    return st;
}

mr_status mr_gpu_fft_exec(int plan, float2 *data, int inverse)
{
    return mr_cufft_check(CUFFT_EXEC((cufftHandle)plan, (cufftComplex *)data, (cufftComplex *)data,
                                  inverse ? CUFFT_INVERSE : CUFFT_FORWARD),
                       inverse ? "inverse transform" : "forward transform");
}

void mr_gpu_fft_destroy(int plan)
{
    if (plan >= 0)
        (void)CUFFT_DESTROY((cufftHandle)plan);
}

mr_status mr_gpu_toeplitz_arrange(mr_gpu_ctx *c, const int64_t matrix[3], const float *q, float *out)
{
    mr_tp_geom g;
    g.nn = g.pp = 1;
    for (int a = 0; a < 3; a++) {
        g.n[a] = matrix[a];
        g.p[a] = matrix[a] > 1 ? 2 * matrix[a] : 1;
        g.nn *= g.n[a];
        g.pp *= g.p[a];
    }
    k_arrange<<<grid3(g.p[0], g.p[1], g.p[2]), MR_GPU_THREADS, 0, mr_gpu_ctx_stream(c)>>>(g, (const float2 *)q,
                                                                                             (float2 *)out);
    return mr_gpu_ctx_launched(c, "Toeplitz kernel arrangement");
}

/* The padded image in t->work transformed, multiplied by H and transformed back (the part the crop keeps):
 * the slabs' transforms around the fused slow axis (gpu/toeplitz_column.cu), or cuFFT's transforms around a
 * multiplication pass. */
static mr_status convolve(mr_gpu_toeplitz *t)
{
    mr_status st;
    if (t->column) {
        st = slabs(t, 0, 1);
        if (st == MR_OK)
            st = mr_gpu_tp_column(t->c, t->work, t->h, t->tw, t->slab, t->p[t->slow]);
        return st == MR_OK ? slabs(t, 1, 1) : st;
    }
    st = transform(t, 0, 1);
    if (st == MR_OK) {
        k_multiply<<<mr_gpu_blocks(t->pp), MR_GPU_THREADS, 0, mr_gpu_ctx_stream(t->c)>>>(t->pp, t->work, t->h);
        st = mr_gpu_ctx_launched(t->c, "Toeplitz multiplication");
    }
    return st == MR_OK ? transform(t, 1, 1) : st;
}

/* One image x -> y through the line kernels alone: the fastest axis's rows padded and transformed, the middle
 * axis's lines (3 axes), the slowest axis fused with H, and back (gpu/toeplitz_column.cu). */
static mr_status apply_lines(mr_gpu_toeplitz *t, const float2 *x, float2 *y)
{
    const int a0 = t->act[0], a1 = t->act[1], three = t->nact == 3;
    const long long n1 = t->n[a1], p1 = t->p[a1], n2 = three ? t->n[t->act[2]] : 1, rows = n1 * n2;
    float2 *w = t->work;
    mr_status st = mr_gpu_tp_rows(t->c, 0, w, (float2 *)x, t->twa[0], t->p[a0], n1, p1, rows);
    if (st == MR_OK && three) /* lines along a1: stride P_a0, P_a0 positions, the N_a2 slabs of the image */
        st = mr_gpu_tp_lines(t->c, 0, w, t->twa[1], p1, t->p[a0], t->p[a0], n2, t->slab);
    if (st == MR_OK)
        st = mr_gpu_tp_column(t->c, w, t->h, t->tw, t->slab, t->p[t->slow]);
    if (st == MR_OK && three)
        st = mr_gpu_tp_lines(t->c, 1, w, t->twa[1], p1, t->p[a0], t->p[a0], n2, t->slab);
    return st == MR_OK ? mr_gpu_tp_rows(t->c, 1, w, y, t->twa[0], t->p[a0], n1, p1, rows) : st;
}

mr_status mr_gpu_toeplitz_apply(mr_gpu_toeplitz *t, int64_t batch, const float *x, float *y)
{
    if (t->lines) {
        for (int64_t b = 0; b < batch; b++) {
            const mr_status st = apply_lines(t, (const float2 *)x + b * t->nn, (float2 *)y + b * t->nn);
            if (st != MR_OK)
                return mr_gpu_ctx_fail(t->c, st);
        }
        return MR_OK;
    }
    const mr_tp_geom g = geom_of(t);
    cudaStream_t s = mr_gpu_ctx_stream(t->c);
    /* the fused path reads only the first nslow slabs: only those are padded */
    long long e[3] = {t->p[0], t->p[1], t->p[2]};
    if (t->column)
        e[t->slow] = t->nslow;
    for (int64_t b = 0; b < batch; b++) {
        k_pad<<<grid3(e[0], e[1], e[2]), MR_GPU_THREADS, 0, s>>>(g, (const float2 *)x + b * t->nn, t->work);
        mr_status st = mr_gpu_ctx_launched(t->c, "Toeplitz padding");
        if (st == MR_OK)
            st = convolve(t);
        if (st == MR_OK) {
            k_crop<<<grid3(t->n[0], t->n[1], t->n[2]), MR_GPU_THREADS, 0, s>>>(g, t->work, (float2 *)y + b * t->nn);
            st = mr_gpu_ctx_launched(t->c, "Toeplitz crop");
        }
        if (st != MR_OK)
            return mr_gpu_ctx_fail(t->c, st);
    }
    return MR_OK;
}
