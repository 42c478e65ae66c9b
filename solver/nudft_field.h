/* The exact sums with an off-resonance term (solver/nudft.h, "field"), written once and compiled per
 * instruction set: included by solver/nudft.c (portable), solver/nudft_avx2.c and solver/nudft_avx512.c,
 * each with its own NUDFT_ISA and NUDFT_FWD_VL (the SIMD length of the loops over samples).
 *
 *   adjoint:  out[v] = sum_m a_m e^{+i2pi (k_m.r_v + f_v t_m)}
 *   forward:  out[m] = sum_v x_v e^{-i2pi (k_m.r_v + f_v t_m)}
 *
 * The field f_v (Hz) differs from voxel to voxel, so the phase is not linear along a row and the
 * recurrences of the plain kernels (rotation, powers, Horner) do not apply: every (voxel, sample) pair
 * gets its own phase, formed in double (dk.n + f_v t_m, cycles), reduced to a quarter cycle and turned
 * into sin and cos by the float polynomials of nudft_sincos_2pi (error ~1e-7 of a cycle). SIMD lanes
 * run over samples; sums in float within a tile of samples (adjoint) or a row of voxels (forward),
 * double across them. Every output element is computed by one thread in a fixed order: the bits do
 * not depend on the thread count. */
#ifndef NUDFT_ISA
#error "solver/nudft_field.h is included by the per-level kernel files only"
#endif
#include <string.h>

#include "nudft_simd.h"

#define NF_TILE 1024  /* adjoint: samples per tile (NUDFT_TILE: the padding of nudft_samples) */
#define NF_FTILE 128  /* forward: samples per tile */

/* The phase and the phasor of one pair, lane-parallel inside the callers' simd loops. */
#define NF_PHASOR(t, s, c) nudft_sincos_2pi((t), &(s), &(c))

/* acc[2 ix] += sum over the tile of a_m e^{+i2pi (phi_m + dkx_m x + f t_m)} for every voxel of a row. */
static void NUDFT_NAME(nf_adjoint_row)(const nudft_samples *p, const double *restrict tm, int64_t t0,
                                       const double *restrict phi, int64_t nx, int64_t cx, const float *restrict f,
                                       double *restrict acc)
{
    const double *restrict dkx = p->dk[0] + t0;
    const float *restrict ar = p->ar + t0, *restrict ai = p->ai + t0;
    const double *restrict tt = tm + t0;
    for (int64_t ix = 0; ix < nx; ix++) {
        const double x = (double)(ix - cx), fv = (double)f[ix];
        float sr = 0.0f, si = 0.0f;
#pragma omp simd simdlen(NUDFT_FWD_VL) reduction(+ : sr, si)
        for (int64_t k = 0; k < NF_TILE; k++) {
            float s, c;
            NF_PHASOR(phi[k] + dkx[k] * x + fv * tt[k], s, c);
            sr += NUDFT_FMA(ar[k], c, -ai[k] * s);
            si += NUDFT_FMA(ar[k], s, ai[k] * c);
        }
        acc[2 * ix] += sr;
        acc[2 * ix + 1] += si;
    }
}

mr_status NUDFT_NAME(mr_nudft_field_adjoint)(const mr_grid *g, const float *traj, const float *time, const float *field,
                                            const float *a, int64_t m, float *out, int threads)
{
    if (!mr_nudft_check_args(g, traj, a, m, out, "mr_nudft_field_adjoint"))
        return MR_EINVAL;
    threads = nudft_threads(threads);
    nudft_samples p;
    mr_status st = mr_nudft_samples_init(&p, g, traj, a, 0, m, +1.0, 0, threads);
    if (st != MR_OK)
        return st;
    const int64_t nx = g->n[0], ny = g->n[1], nz = g->n[2];
    /* per thread: the row phase of a tile, the row's double accumulators; shared: the times in double */
    const size_t per = (size_t)NF_TILE * sizeof(double) + 2 * (size_t)nx * sizeof(double);
    void *scratch = nudft_alloc((size_t)threads * per);
    double *tm = nudft_alloc((size_t)p.mp * sizeof(double));
    if (!scratch || !tm) {
        free(scratch);
        free(tm);
        mr_nudft_samples_free(&p);
        return mr_error(MR_ENOMEM, "mr_nudft_field_adjoint: out of memory for %lld samples", (long long)m);
    }
    for (int64_t k = 0; k < p.mp; k++)
        tm[k] = k < m ? (double)time[k] : 0.0;
#pragma omp parallel num_threads(threads)
    {
        char *base = (char *)scratch + (size_t)omp_get_thread_num() * per;
        double *phi = (double *)base, *acc = phi + NF_TILE;
#pragma omp for schedule(dynamic, 1) /* one row each */
        for (int64_t row = 0; row < ny * nz; row++) {
            const double y = (double)(row % ny - g->center[1]), z = (double)(row / ny - g->center[2]);
            memset(acc, 0, 2 * (size_t)nx * sizeof(double));
            for (int64_t t0 = 0; t0 < p.mp; t0 += NF_TILE) {
                const double *restrict dky = p.dk[1] + t0, *restrict dkz = p.dk[2] + t0;
#pragma omp simd simdlen(NUDFT_FWD_VL)
                for (int64_t k = 0; k < NF_TILE; k++)
                    phi[k] = dky[k] * y + dkz[k] * z;
                NUDFT_NAME(nf_adjoint_row)(&p, tm, t0, phi, nx, g->center[0], field + row * nx, acc);
            }
            float *o = out + 2 * row * nx;
            for (int64_t i = 0; i < 2 * nx; i++)
                o[i] = (float)acc[i];
        }
    }
    free(scratch);
    free(tm);
    mr_nudft_samples_free(&p);
    return MR_OK;
}

mr_status NUDFT_NAME(mr_nudft_field_forward)(const mr_grid *g, const float *traj, const float *time, const float *field,
                                            const float *x, int64_t m, float *out, int threads)
{
    if (!mr_nudft_check_args(g, traj, x, m, out, "mr_nudft_field_forward"))
        return MR_EINVAL;
    threads = nudft_threads(threads);
    const int64_t nx = g->n[0], ny = g->n[1], nz = g->n[2];
    nudft_samples p;
    mr_status st = mr_nudft_samples_init(&p, g, traj, NULL, 0, m, -1.0, 0, threads);
    if (st != MR_OK)
        return st;
    /* per thread: phi, the times and double accumulators (double), a row's float accumulators */
    const size_t per = (size_t)NF_FTILE * (4 * sizeof(double) + 2 * sizeof(float));
    void *scratch = nudft_alloc((size_t)threads * per);
    if (!scratch) {
        mr_nudft_samples_free(&p);
        return mr_error(MR_ENOMEM, "mr_nudft_field_forward: out of memory");
    }
    const int64_t ntiles = (m + NF_FTILE - 1) / NF_FTILE;
#pragma omp parallel num_threads(threads)
    {
        char *base = (char *)scratch + (size_t)omp_get_thread_num() * per;
        double *phi = (double *)base, *tt = phi + NF_FTILE, *accr = tt + NF_FTILE, *acci = accr + NF_FTILE;
        float *rr = (float *)(acci + NF_FTILE), *ri = rr + NF_FTILE;
#pragma omp for schedule(dynamic, 1) /* one tile each */
        for (int64_t tile = 0; tile < ntiles; tile++) {
            const int64_t t0 = tile * NF_FTILE, kend = t0 + NF_FTILE < m ? NF_FTILE : m - t0;
            const double *restrict dkx = p.dk[0] + t0, *restrict dky = p.dk[1] + t0, *restrict dkz = p.dk[2] + t0;
            for (int64_t k = 0; k < NF_FTILE; k++) {
                tt[k] = k < kend ? -(double)time[t0 + k] : 0.0; /* the forward's sign, like dk's */
                accr[k] = acci[k] = 0.0;
            }
            for (int64_t row = 0; row < ny * nz; row++) {
                const double y = (double)(row % ny - g->center[1]), z = (double)(row / ny - g->center[2]);
                const float *xr = x + 2 * row * nx, *fr = field + row * nx;
#pragma omp simd simdlen(NUDFT_FWD_VL)
                for (int64_t k = 0; k < NF_FTILE; k++) {
                    phi[k] = dky[k] * y + dkz[k] * z;
                    rr[k] = ri[k] = 0.0f;
                }
                for (int64_t ix = 0; ix < nx; ix++) {
                    const float vr = xr[2 * ix], vi = xr[2 * ix + 1];
                    if (vr == 0.0f && vi == 0.0f) /* e.g. outside the object of a phantom */
                        continue;
                    const double xs = (double)(ix - g->center[0]), fv = (double)fr[ix];
#pragma omp simd simdlen(NUDFT_FWD_VL)
                    for (int64_t k = 0; k < NF_FTILE; k++) {
                        float s, c; /* e^{-i2pi t}: dk and tt carry the sign */
                        NF_PHASOR(phi[k] + dkx[k] * xs + fv * tt[k], s, c);
                        rr[k] += NUDFT_FMA(vr, c, -vi * s);
                        ri[k] += NUDFT_FMA(vr, s, vi * c);
                    }
                }
                for (int64_t k = 0; k < NF_FTILE; k++) {
                    accr[k] += rr[k];
                    acci[k] += ri[k];
                }
            }
            nudft_store_tile(out + 2 * t0, accr, acci, kend);
        }
    }
    free(scratch);
    mr_nudft_samples_free(&p);
    return MR_OK;
}

#undef NF_PHASOR
#undef NF_TILE
#undef NF_FTILE
