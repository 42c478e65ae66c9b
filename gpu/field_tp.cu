/* The normal of the segmented field model on the device (gpu/field.h mr_gpu_field_tp_*; the maths of
 * solver/linop_field_tp.c): per coil, the L padded images C_l . x in one batched cuFFT, the L^2 spectrum
 * products into a second buffer, one batched inverse, the crop weighted by conj(C_l) and summed. The
 * spectra: each kernel Q arranged circulantly (gpu/toeplitz.cu), transformed, divided by P; a pair that
 * uses a kernel's conjugate mirror conj(Q(-r)) multiplies by conj(H). cuFFT through gpu/toeplitz.cu's
 * loader (gpu_internal.h). */
#include <stdlib.h>

#include <cuda_runtime.h>

#include "cuda_check.h"
#include "field.h"
#include "gpu_internal.h"

/* the extents every kernel needs: image grid n, 2N grid p, their sizes */
struct ft_geom {
    long long n[3], p[3], nn, pp;
};

struct mr_gpu_field_tp {
    mr_gpu_ctx *c;
    ft_geom g;
    int L, nk;
    int *kidx; /* device [L][L]: kernel index, negative (-1 - k) for the conjugate of kernel k */
    float2 *h, *coef, *x, *y; /* [nk][P], [L][N], [L][P], [L][P] */
    int plan;                 /* batched over the L grids */
};

/* X_l[j] = C_l[v] x[v] where the P-grid point j holds voxel v, else 0; every l */
static __global__ void k_pad_mul(ft_geom g, int L, const float2 *coef, const float2 *x, float2 *X)
{
    MR_GRID_STRIDE(i, g.pp * L)
    {
        const long long l = i / g.pp, j = i - l * g.pp;
        const long long j0 = j % g.p[0], j1 = (j / g.p[0]) % g.p[1], j2 = j / (g.p[0] * g.p[1]);
        float2 r = make_float2(0.0f, 0.0f);
        if (j0 < g.n[0] && j1 < g.n[1] && j2 < g.n[2]) {
            const long long v = (j2 * g.n[1] + j1) * g.n[0] + j0;
            const float2 cv = coef[l * g.nn + v], xv = x[v];
            r = make_float2(cv.x * xv.x - cv.y * xv.y, cv.x * xv.y + cv.y * xv.x);
        }
        X[i] = r;
    }
}

/* Y_l[j] = sum_l' H_{l l'}[j] X_l'[j] */
static __global__ void k_products(long long pp, int L, const int *kidx, const float2 *h, const float2 *X, float2 *Y)
{
    MR_GRID_STRIDE(i, pp * L)
    {
        const long long l = i / pp, j = i - l * pp;
        float sr = 0.0f, si = 0.0f;
        for (int lp = 0; lp < L; lp++) {
            const int k = kidx[l * L + lp];
            const float2 hv = h[(long long)(k < 0 ? -1 - k : k) * pp + j], u = X[(long long)lp * pp + j];
            const float hi = k < 0 ? -hv.y : hv.y;
            sr += hv.x * u.x - hi * u.y;
            si += hv.x * u.y + hi * u.x;
        }
        Y[i] = make_float2(sr, si);
    }
}

/* y[v] = sum_l conj(C_l[v]) Y_l[j(v)] */
static __global__ void k_crop_sum(ft_geom g, int L, const float2 *coef, const float2 *Y, float2 *y)
{
    MR_GRID_STRIDE(v, g.nn)
    {
        const long long i0 = v % g.n[0], i1 = (v / g.n[0]) % g.n[1], i2 = v / (g.n[0] * g.n[1]);
        const long long j = (i2 * g.p[1] + i1) * g.p[0] + i0;
        float sr = 0.0f, si = 0.0f;
        for (int l = 0; l < L; l++) {
            const float2 cv = coef[(long long)l * g.nn + v], u = Y[(long long)l * g.pp + j];
            sr += cv.x * u.x + cv.y * u.y;
            si += cv.x * u.y - cv.y * u.x;
        }
        y[v] = make_float2(sr, si);
    }
}

void mr_gpu_field_tp_destroy(mr_gpu_field_tp *t)
{
    if (!t)
        return;
    mr_gpu_fft_destroy(t->plan);
    mr_gpu_free(t->c, t->kidx);
    mr_gpu_free(t->c, t->h);
    mr_gpu_free(t->c, t->coef);
    mr_gpu_free(t->c, t->x);
    mr_gpu_free(t->c, t->y);
    free(t);
}

mr_status mr_gpu_field_tp_create(mr_gpu_field_tp **out, mr_gpu_ctx *c, const int64_t matrix[3], int L, int nk,
                                 const int *kidx, const int *kconj, const float *const *q, const float *coef)
{
    *out = NULL;
    mr_gpu_field_tp *t = (mr_gpu_field_tp *)calloc(1, sizeof *t);
    int *hk = (int *)malloc((size_t)L * L * sizeof(int));
    if (!t || !hk) {
        free(t);
        free(hk);
        return mr_error(MR_ENOMEM, "GPU field normal: out of host memory");
    }
    t->c = c;
    t->L = L;
    t->nk = nk;
    t->plan = -1;
    ft_geom *g = &t->g;
    g->nn = g->pp = 1;
    int dims[3], rank = 0;
    for (int a = 2; a >= 0; a--) {
        g->n[a] = matrix[a];
        g->p[a] = matrix[a] > 1 ? 2 * matrix[a] : 1;
        g->nn *= g->n[a];
        g->pp *= g->p[a];
        if (g->p[a] > 1)
            dims[rank++] = (int)g->p[a];
    }
    for (int i = 0; i < L * L; i++)
        hk[i] = kconj[i] ? -1 - kidx[i] : kidx[i];
    mr_status st = MR_OK;
    /* the int table travels as floats' bits (mr_gpu_upload copies 4-byte words) */
    if (!(t->kidx = (int *)mr_gpu_alloc(c, L * L)) || !(t->h = (float2 *)mr_gpu_alloc(c, 2 * nk * t->g.pp)) ||
        !(t->coef = (float2 *)mr_gpu_alloc(c, 2 * L * t->g.nn)) || !(t->x = (float2 *)mr_gpu_alloc(c, 2 * L * t->g.pp)) ||
        !(t->y = (float2 *)mr_gpu_alloc(c, 2 * L * t->g.pp)))
        st = MR_ENOMEM;
    if (st == MR_OK)
        st = mr_gpu_upload(c, (float *)t->kidx, (const float *)hk, L * L);
    if (st == MR_OK)
        st = MR_CU(cudaMemcpyAsync(t->coef, coef, (size_t)(L * t->g.nn) * sizeof(float2), cudaMemcpyDeviceToDevice,
                                   mr_gpu_ctx_stream(c)));
    int plan1 = -1;
    if (st == MR_OK && rank > 0)
        st = mr_gpu_fft_plan(&t->plan, c, rank, dims, L, 0);
    if (st == MR_OK && rank > 0)
        st = mr_gpu_fft_plan(&plan1, c, rank, dims, 1, 0);
    for (int k = 0; k < nk && st == MR_OK; k++) { /* H_k = FFT(arranged Q_k) / P */
        float2 *hk2 = t->h + (long long)k * t->g.pp;
        st = mr_gpu_toeplitz_arrange(c, matrix, q[k], (float *)hk2);
        if (st == MR_OK && rank > 0)
            st = mr_gpu_fft_exec(plan1, hk2, 0);
        if (st == MR_OK) {
            const mr_ew_args scale = {1.0 / (double)t->g.pp, 0.0, 0.0, NULL, 1};
            mr_gpu_vec_ewise(c, MR_EW_AXPBY, t->g.pp, (float *)hk2, (const float *)hk2, NULL, &scale);
            st = mr_gpu_ctx_status(c);
        }
    }
    if (st == MR_OK)
        st = mr_gpu_ctx_sync(c);
    mr_gpu_fft_destroy(plan1);
    free(hk);
    if (st != MR_OK) {
        mr_gpu_field_tp_destroy(t);
        return st;
    }
    *out = t;
    return MR_OK;
}

mr_status mr_gpu_field_tp_apply(mr_gpu_field_tp *t, int64_t ncoils, const float *d_x, float *d_y)
{
    const ft_geom g = t->g;
    cudaStream_t s = mr_gpu_ctx_stream(t->c);
    const long long lp = (long long)t->L * t->g.pp;
    for (int64_t c = 0; c < ncoils; c++) {
        k_pad_mul<<<mr_gpu_blocks(lp), MR_GPU_THREADS, 0, s>>>(g, t->L, t->coef, (const float2 *)d_x + c * t->g.nn, t->x);
        mr_status st = mr_gpu_ctx_launched(t->c, "field normal: padding");
        if (st == MR_OK && t->plan >= 0)
            st = mr_gpu_fft_exec(t->plan, t->x, 0);
        if (st == MR_OK) {
            k_products<<<mr_gpu_blocks(lp), MR_GPU_THREADS, 0, s>>>(t->g.pp, t->L, t->kidx, t->h, t->x, t->y);
            st = mr_gpu_ctx_launched(t->c, "field normal: spectrum products");
        }
        if (st == MR_OK && t->plan >= 0)
            st = mr_gpu_fft_exec(t->plan, t->y, 1);
        if (st == MR_OK) {
            k_crop_sum<<<mr_gpu_blocks(t->g.nn), MR_GPU_THREADS, 0, s>>>(g, t->L, t->coef, t->y,
                                                                         (float2 *)d_y + c * t->g.nn);
            st = mr_gpu_ctx_launched(t->c, "field normal: crop");
        }
        if (st != MR_OK)
            return mr_gpu_ctx_fail(t->c, st);
    }
    return MR_OK;
}
