/* The forward NUDFT out[m] = sum_v x_v e^{-i2pi k_m.r_v} (docs/OPERATOR.md), written once and
 * compiled per instruction set: included by solver/nudft.c (portable), solver/nudft_avx2.c and
 * solver/nudft_avx512.c, each with its own NUDFT_ISA and NUDFT_FWD_VL (the SIMD length of the loops
 * over samples).
 *
 * Samples outer (OpenMP over tiles of NUDFT_FTILE, SIMD lanes), voxels inner. Per block of
 * NUDFT_BLOCK voxels the phasor p0 = e^{-i2pi k.r} of its first voxel is computed exactly (phase in
 * double, reduced, float polynomials); the block sum sum_j x_j s^j is a polynomial in the step
 * s = e^{-i2pi dkx}, evaluated by Horner's rule within each sub-block of NUDFT_SUB voxels and again in
 * s^NUDFT_SUB across the sub-blocks (independent chains that hide the FMA latency), then times p0.
 * Float within a block, double across blocks and rows. Every sample is computed by one thread in a
 * fixed order: the bits do not depend on the thread count. */
#ifndef NUDFT_ISA
#error "solver/nudft_forward.h is included by the per-level kernel files only"
#endif
#include <string.h>

#include "nudft_simd.h"

#define NUDFT_FTILE 128 /* samples per tile (a multiple of every NUDFT_FWD_VL) */

/* acc_m += p0_m * sum_{j < len} x_j s_m^j over one block (len <= NUDFT_BLOCK, x zero padded to a
 * multiple of NUDFT_SUB), by Horner's rule: within a sub-block in s, across sub-blocks in s^SUB. */
static void horner_block(int64_t n, const float *restrict p0r, const float *restrict p0i, const float *restrict sr,
                         const float *restrict si, const float *restrict s8r, const float *restrict s8i,
                         const float *restrict x, int64_t nsub, double *restrict accr, double *restrict acci)
{
#pragma omp simd simdlen(NUDFT_FWD_VL)
    for (int64_t k = 0; k < n; k++) {
        const float qr = sr[k], qi = si[k], q8r = s8r[k], q8i = s8i[k];
        float gr = 0.0f, gi = 0.0f;
        for (int64_t b = nsub - 1; b >= 0; b--) {
            const float *xb = x + 2 * NUDFT_SUB * b;
            float hr = xb[2 * (NUDFT_SUB - 1)], hi = xb[2 * (NUDFT_SUB - 1) + 1];
            for (int j = NUDFT_SUB - 2; j >= 0; j--) {
                const float tr = NUDFT_FMA(hr, qr, NUDFT_FMA(-hi, qi, xb[2 * j]));
                hi = NUDFT_FMA(hr, qi, NUDFT_FMA(hi, qr, xb[2 * j + 1]));
                hr = tr;
            }
            const float tr = NUDFT_FMA(gr, q8r, NUDFT_FMA(-gi, q8i, hr));
            gi = NUDFT_FMA(gr, q8i, NUDFT_FMA(gi, q8r, hi));
            gr = tr;
        }
        accr[k] += (double)NUDFT_FMA(p0r[k], gr, -p0i[k] * gi);
        acci[k] += (double)NUDFT_FMA(p0r[k], gi, p0i[k] * gr);
    }
}

mr_status NUDFT_NAME(mr_nudft_forward)(const mr_grid *g, const float *traj, const float *x, int64_t m, float *out,
                                      int threads)
{
    if (!mr_nudft_check_args(g, traj, x, m, out, "mr_nudft_forward"))
        return MR_EINVAL;
    threads = nudft_threads(threads);
    const int64_t nx = g->n[0], ny = g->n[1], nz = g->n[2];
    const int64_t rowcap = nudft_round_up(nx, NUDFT_BLOCK);
    nudft_samples p;
    mr_status st = mr_nudft_samples_init(&p, g, traj, NULL, 0, m, -1.0, 1, threads);
    if (st != MR_OK)
        return st;
    /* per thread: phi, accr, acci (double) and p0r, p0i (float) per tile sample; a padded row of x */
    const size_t per = (size_t)NUDFT_FTILE * (3 * sizeof(double) + 2 * sizeof(float)) + 2 * (size_t)rowcap * sizeof(float);
    void *scratch = nudft_alloc((size_t)threads * per);
    if (!scratch) {
        mr_nudft_samples_free(&p);
        return mr_error(MR_ENOMEM, "mr_nudft_forward: out of memory");
    }
    const int64_t ntiles = (m + NUDFT_FTILE - 1) / NUDFT_FTILE; /* mp covers every tile */
#pragma omp parallel num_threads(threads)
    {
        char *base = (char *)scratch + (size_t)omp_get_thread_num() * per;
        double *phi = (double *)base, *accr = phi + NUDFT_FTILE, *acci = accr + NUDFT_FTILE;
        float *p0r = (float *)(acci + NUDFT_FTILE), *p0i = p0r + NUDFT_FTILE, *xrow = p0i + NUDFT_FTILE;
        memset(xrow, 0, 2 * (size_t)rowcap * sizeof(float));
#pragma omp for schedule(dynamic, 1) /* one tile each */
        for (int64_t tile = 0; tile < ntiles; tile++) {
            const int64_t t0 = tile * NUDFT_FTILE;
            const double *restrict dkx = p.dk[0] + t0, *restrict dky = p.dk[1] + t0, *restrict dkz = p.dk[2] + t0;
            for (int64_t k = 0; k < NUDFT_FTILE; k++)
                accr[k] = acci[k] = 0.0;
            for (int64_t iz = 0; iz < nz; iz++)
                for (int64_t iy = 0; iy < ny; iy++) {
                    const double y = (double)(iy - g->center[1]), z = (double)(iz - g->center[2]);
                    /* rows whose length is a multiple of NUDFT_SUB are read in place, others are
                       copied into the zero-padded row buffer */
                    const float *xr = x + 2 * (iz * ny + iy) * nx;
                    if (nx % NUDFT_SUB) {
                        memcpy(xrow, xr, 2 * (size_t)nx * sizeof(float));
                        xr = xrow;
                    }
#pragma omp simd simdlen(NUDFT_FWD_VL)
                    for (int64_t k = 0; k < NUDFT_FTILE; k++)
                        phi[k] = dky[k] * y + dkz[k] * z;
                    for (int64_t b0 = 0; b0 < nx; b0 += NUDFT_BLOCK) {
                        const double xs = (double)(b0 - g->center[0]);
#pragma omp simd simdlen(NUDFT_FWD_VL)
                        for (int64_t k = 0; k < NUDFT_FTILE; k++) {
                            const double t = phi[k] + dkx[k] * xs;
                            nudft_sincos_2pi(t, &p0i[k], &p0r[k]);
                        }
                        const int64_t len = nx - b0 < NUDFT_BLOCK ? nx - b0 : NUDFT_BLOCK;
                        horner_block(NUDFT_FTILE, p0r, p0i, p.s1r + t0, p.s1i + t0, p.s8r + t0, p.s8i + t0,
                                     xr + 2 * b0, nudft_round_up(len, NUDFT_SUB) / NUDFT_SUB, accr, acci);
                    }
                }
            nudft_store_tile(out + 2 * t0, accr, acci, t0 + NUDFT_FTILE < m ? NUDFT_FTILE : m - t0);
        }
    }
    free(scratch);
    mr_nudft_samples_free(&p);
    return MR_OK;
}
