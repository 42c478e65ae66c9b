/* ESPIRiT's per-voxel stage on a GPU (see espirit.h): one thread per voxel evaluates the lower
 * triangle of W(r) = sum_Delta w(Delta) e^{+i 2 pi Delta . r} (the per-axis phases by sincospif, the
 * coefficients read in the same order by every thread of a warp, so the loads are broadcasts), runs the
 * power iteration from the phase reference in float32, and writes the phase-referenced, cropped map
 * and the eigenvalue, exactly as mr_espirit_maps (solver/espirit.c) does in float64 on the host. The
 * per-thread arrays are sized by a compile-time coil bound (8, 16 or 32). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"
#include "cuda_check.h"
#include "espirit.h"
#include "gpu.h"

#define THREADS 256
#define MAX_SPAN 15 /* 2 x the largest kernel (8) - 1 */

struct espirit_args {
    const float2 *coef; /* [nd][T] the lower triangle (c' <= c, index c (c + 1) / 2 + c') */
    const float2 *vref; /* [C] */
    float2 *maps;       /* [C][N] */
    float *eig;         /* [N] or NULL */
    int64_t n[3];
    int span[3];
    int C;
    int iters;
    float crop;
};

__device__ static inline float2 cmul(float2 a, float2 b)
{
    return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

/* a conj(b) */
__device__ static inline float2 cmulc(float2 a, float2 b)
{
    return make_float2(a.x * b.x + a.y * b.y, a.y * b.x - a.x * b.y);
}

/* W s with W Hermitian, its lower triangle in w */
template <int MAXC> __device__ static void herm_matvec(const float2 *w, int C, const float2 *s, float2 *out)
{
    for (int i = 0; i < C; i++) {
        float2 acc = make_float2(0, 0);
        for (int j = 0; j < C; j++) {
            const float2 a = j <= i ? w[i * (i + 1) / 2 + j] : make_float2(w[j * (j + 1) / 2 + i].x, -w[j * (j + 1) / 2 + i].y);
            const float2 p = cmul(a, s[j]);
            acc.x += p.x;
            acc.y += p.y;
        }
        out[i] = acc;
    }
}

template <int MAXC> __global__ static void __launch_bounds__(THREADS) espirit_kernel(espirit_args a)
{
    const int64_t N = a.n[0] * a.n[1] * a.n[2];
    const int64_t v = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= N)
        return;
    const int64_t idx[3] = {v % a.n[0], (v / a.n[0]) % a.n[1], v / (a.n[0] * a.n[1])};
    float2 e[3][MAX_SPAN];
    for (int ax = 0; ax < 3; ax++) {
        /* r = (j - N/2) / N; the phase 2 pi Delta r as sincospif(2 Delta r) */
        const double r = (double)(idx[ax] - a.n[ax] / 2) / (double)a.n[ax];
        for (int d = 0; d < a.span[ax]; d++) {
            const double delta = (double)(d - (a.span[ax] - 1) / 2);
            double t = 2.0 * delta * r;
            t -= 2.0 * rint(0.5 * t); /* into [-1, 1]: exact in double, then float */
            float sn, cs;
            sincospif((float)t, &sn, &cs);
            e[ax][d] = make_float2(cs, sn);
        }
    }
    const int C = a.C, T = C * (C + 1) / 2;
    float2 w[MAXC * (MAXC + 1) / 2], s[MAXC], t[MAXC];
    for (int i = 0; i < T; i++)
        w[i] = make_float2(0, 0);
    const float2 *coef = a.coef;
    for (int dz = 0; dz < a.span[2]; dz++)
        for (int dy = 0; dy < a.span[1]; dy++) {
            const float2 ezy = cmul(e[2][dz], e[1][dy]);
            for (int dx = 0; dx < a.span[0]; dx++) {
                const float2 ph = cmul(ezy, e[0][dx]);
                for (int i = 0; i < T; i++) {
                    const float2 p = cmul(coef[i], ph);
                    w[i].x += p.x;
                    w[i].y += p.y;
                }
                coef += T;
            }
        }
    /* lambda_max <= tr W: below the crop no eigenvector is needed (as on the host) */
    float trace = 0;
    for (int c = 0; c < C; c++)
        trace += w[c * (c + 1) / 2 + c].x;
    if (a.crop > 0 && trace < a.crop) {
        for (int c = 0; c < C; c++)
            a.maps[(int64_t)c * N + v] = make_float2(0, 0);
        if (a.eig)
            a.eig[v] = trace;
        return;
    }
    for (int c = 0; c < C; c++)
        s[c] = a.vref[c];
    for (int it = 0; it < a.iters; it++) {
        herm_matvec<MAXC>(w, C, s, t);
        float nrm = 0;
        for (int c = 0; c < C; c++)
            nrm += t[c].x * t[c].x + t[c].y * t[c].y;
        nrm = sqrtf(nrm);
        if (!(nrm > 0))
            break;
        float change = 0;
        for (int c = 0; c < C; c++) {
            const float2 nv = make_float2(t[c].x / nrm, t[c].y / nrm);
            change += (nv.x - s[c].x) * (nv.x - s[c].x) + (nv.y - s[c].y) * (nv.y - s[c].y);
            s[c] = nv;
        }
        if (change < 1e-12f)
            break;
    }
    herm_matvec<MAXC>(w, C, s, t);
    float lam = 0;
    float2 p = make_float2(0, 0);
    for (int c = 0; c < C; c++) {
        lam += s[c].x * t[c].x + s[c].y * t[c].y; /* Re s^H W s */
        const float2 q = cmulc(s[c], a.vref[c]);   /* v_ref^H s */
        p.x += q.x;
        p.y += q.y;
    }
    const float ap = sqrtf(p.x * p.x + p.y * p.y);
    const float2 rot = ap > 0 ? make_float2(p.x / ap, -p.y / ap) : make_float2(1, 0);
    const bool keep = lam >= a.crop && lam > 0;
    for (int c = 0; c < C; c++)
        a.maps[(int64_t)c * N + v] = keep ? cmul(s[c], rot) : make_float2(0, 0);
    if (a.eig)
        a.eig[v] = lam;
}

mr_status mr_gpu_espirit_maps(int device, const mr_espirit_calib *cal, const int64_t matrix[3], double crop, int iters,
                              float *maps, float *eig, double *seconds)
{
    if (seconds)
        *seconds = 0;
    if (!cal || !cal->coef || !maps || iters < 1 || !(crop >= 0 && crop < 1))
        return mr_error(MR_EINVAL, "ESPIRiT on a GPU: no calibration, or iterations %d, crop %g", iters, crop);
    const int ndev = mr_gpu_count();
    if (device < 0 || device >= ndev)
        return mr_error(MR_ENODEV, "ESPIRiT on a GPU: GPU %d is not usable (%d CUDA devices found)", device, ndev);
    const int C = (int)cal->ncoils;
    if (C > MR_GPU_ESPIRIT_MAX_COILS)
        return mr_error(MR_ENOTSUP, "ESPIRiT on a GPU: %d coils, at most %d (compress the coils first)", C,
                        MR_GPU_ESPIRIT_MAX_COILS);
    for (int ax = 0; ax < 3; ax++)
        if (cal->span[ax] < 1 || cal->span[ax] > MAX_SPAN || ((matrix[ax] > 1) != (cal->kernel[ax] > 1)))
            return mr_error(MR_EINVAL, "ESPIRiT on a GPU: the calibration (span %lld on axis %d) does not fit the "
                                       "matrix %lldx%lldx%lld",
                            (long long)cal->span[ax], ax, (long long)matrix[0], (long long)matrix[1],
                            (long long)matrix[2]);
    const int64_t N = matrix[0] * matrix[1] * matrix[2], nd = cal->span[0] * cal->span[1] * cal->span[2];
    const int T = C * (C + 1) / 2;
    /* the coefficients' lower triangle and the reference, in float */
    float2 *h_coef = (float2 *)malloc((size_t)(nd * T) * sizeof(float2));
    float2 h_vref[MR_GPU_ESPIRIT_MAX_COILS];
    if (!h_coef)
        return mr_error(MR_ENOMEM, "ESPIRiT on a GPU: out of host memory");
    for (int64_t d = 0; d < nd; d++)
        for (int c = 0; c < C; c++)
            for (int c2 = 0; c2 <= c; c2++) {
                const double *w = cal->coef + 2 * ((d * C + c) * C + c2);
                h_coef[d * T + c * (c + 1) / 2 + c2] = make_float2((float)w[0], (float)w[1]);
            }
    for (int c = 0; c < C; c++)
        h_vref[c] = make_float2((float)cal->vref[2 * c], (float)cal->vref[2 * c + 1]);
    float2 *d_coef = NULL, *d_vref = NULL, *d_maps = NULL;
    float *d_eig = NULL;
    cudaEvent_t ev[2] = {NULL, NULL};
    mr_status st = MR_CU(cudaSetDevice(device));
    if (st == MR_OK)
        st = MR_CU(cudaMalloc((void **)&d_coef, (size_t)(nd * T) * sizeof(float2)));
    if (st == MR_OK)
        st = MR_CU(cudaMalloc((void **)&d_vref, (size_t)C * sizeof(float2)));
    if (st == MR_OK)
        st = MR_CU(cudaMalloc((void **)&d_maps, (size_t)(N * C) * sizeof(float2)));
    if (st == MR_OK && eig)
        st = MR_CU(cudaMalloc((void **)&d_eig, (size_t)N * sizeof(float)));
    if (st == MR_OK)
        st = MR_CU(cudaMemcpy(d_coef, h_coef, (size_t)(nd * T) * sizeof(float2), cudaMemcpyHostToDevice));
    if (st == MR_OK)
        st = MR_CU(cudaMemcpy(d_vref, h_vref, (size_t)C * sizeof(float2), cudaMemcpyHostToDevice));
    if (st == MR_OK)
        st = MR_CU(cudaEventCreate(&ev[0]));
    if (st == MR_OK)
        st = MR_CU(cudaEventCreate(&ev[1]));
    if (st == MR_OK) {
        espirit_args a;
        a.coef = d_coef;
        a.vref = d_vref;
        a.maps = d_maps;
        a.eig = d_eig;
        for (int ax = 0; ax < 3; ax++) {
            a.n[ax] = matrix[ax];
            a.span[ax] = (int)cal->span[ax];
        }
        a.C = C;
        a.iters = iters;
        a.crop = (float)crop;
        const unsigned blocks = (unsigned)((N + THREADS - 1) / THREADS);
        (void)cudaEventRecord(ev[0]);
        if (C <= 8)
            espirit_kernel<8><<<blocks, THREADS>>>(a);
        else if (C <= 16)
            espirit_kernel<16><<<blocks, THREADS>>>(a);
        else
            espirit_kernel<32><<<blocks, THREADS>>>(a);
        st = MR_CU(cudaGetLastError());
        (void)cudaEventRecord(ev[1]);
        if (st == MR_OK)
            st = MR_CU(cudaEventSynchronize(ev[1]));
        float ms = 0;
        if (st == MR_OK && seconds && cudaEventElapsedTime(&ms, ev[0], ev[1]) == cudaSuccess)
            *seconds = 1e-3 * ms;
    }
    if (st == MR_OK)
        st = MR_CU(cudaMemcpy(maps, d_maps, (size_t)(N * C) * sizeof(float2), cudaMemcpyDeviceToHost));
    if (st == MR_OK && eig)
        st = MR_CU(cudaMemcpy(eig, d_eig, (size_t)N * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < 2; i++)
        if (ev[i])
            (void)cudaEventDestroy(ev[i]);
    (void)cudaFree(d_coef);
    (void)cudaFree(d_vref);
    (void)cudaFree(d_maps);
    (void)cudaFree(d_eig);
    free(h_coef);
    if (st != MR_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", mr_last_error());
        return mr_error(st, "ESPIRiT on GPU %d: %s", device, why);
    }
    return MR_OK;
}
