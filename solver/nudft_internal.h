/* Internals shared by the CPU NUDFT kernels (solver/nudft.c: the shared parts, the portable kernels,
 * the dispatch; solver/nudft_powers.h and solver/nudft_forward.h, compiled once per instruction-set
 * level: solver/nudft_simd.h). Not part of the library's interface, except the explicit per-level
 * entry points at the end, which the tests and the benchmark call. */
#ifndef MR_NUDFT_INTERNAL_H
#define MR_NUDFT_INTERNAL_H

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../base/cpu.h"
#include "nudft.h"

#define NUDFT_TWO_PI 6.283185307179586476925286766559
#define NUDFT_VL 16      /* SIMD length of the portable loops, in floats */
#define NUDFT_TILE 1024  /* samples are padded to a multiple of this (a multiple of every tile size) */
#define NUDFT_SUB 8      /* rotation kernels: voxels per register block; s^8 is precomputed */
#define NUDFT_BLOCK 64   /* rotation kernels: voxels between exactly computed phasors (multiple of NUDFT_SUB) */

/* a*b + c with one rounding where the target has FMA instructions (fmaf is then inlined; GCC in ISO C
 * mode never contracts a*b + c by itself); a plain multiply-add elsewhere, where fmaf would be a slow
 * library call. */
#if defined(__FMA__) || defined(__AVX512F__)
#define NUDFT_FMA(a, b, c) fmaf((a), (b), (c))
#else
#define NUDFT_FMA(a, b, c) ((a) * (b) + (c))
#endif

static inline int64_t nudft_round_up(int64_t v, int64_t q) { return (v + q - 1) / q * q; }

static inline void *nudft_alloc(size_t bytes)
{
    size_t n = (size_t)nudft_round_up((int64_t)(bytes ? bytes : 1), 64);
    return aligned_alloc(64, n);
}

static inline int nudft_threads(int threads) { return threads > 0 ? threads : omp_get_max_threads(); }

/* Round to the nearest integer (ties away from even are irrelevant here), branch-free and
 * vectorisable; valid for |t| < 2^51. */
static inline double nudft_round(double t)
{
    const double magic = 6755399441055744.0; /* 1.5 * 2^52 */
    return (t + magic) - magic;
}

static inline float nudft_float_bits(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static inline uint32_t nudft_bits_float(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* sin and cos of 2 pi (u + iq/4) for |u| <= 1/8 cycle: Taylor polynomials of sin(2 pi u), cos(2 pi u)
 * in float (truncation < 2e-9), then the quadrant iq mod 4 by swapping and sign bits (branch-free,
 * vectorisable): odd iq swaps sin and cos; sin changes sign for iq = 2, 3 and cos for iq = 1, 2. */
static inline void nudft_sincos_quadrant(float u, uint32_t iq, float *s, float *c)
{
    const float u2 = u * u;
    const float s0 = (float)NUDFT_TWO_PI;
    const float s1 = (float)(-NUDFT_TWO_PI * NUDFT_TWO_PI * NUDFT_TWO_PI / 6.0);
    const float s2 = (float)(NUDFT_TWO_PI * NUDFT_TWO_PI * NUDFT_TWO_PI * NUDFT_TWO_PI * NUDFT_TWO_PI / 120.0);
    const float s3 = (float)(-NUDFT_TWO_PI * NUDFT_TWO_PI * NUDFT_TWO_PI * NUDFT_TWO_PI * NUDFT_TWO_PI *
                             NUDFT_TWO_PI * NUDFT_TWO_PI / 5040.0);
    const float s4 = (float)(NUDFT_TWO_PI * NUDFT_TWO_PI * NUDFT_TWO_PI * NUDFT_TWO_PI * NUDFT_TWO_PI *
                             NUDFT_TWO_PI * NUDFT_TWO_PI * NUDFT_TWO_PI * NUDFT_TWO_PI / 362880.0);
    const float c1 = (float)(-NUDFT_TWO_PI * NUDFT_TWO_PI / 2.0);
    const float c2 = (float)(NUDFT_TWO_PI * NUDFT_TWO_PI * NUDFT_TWO_PI * NUDFT_TWO_PI / 24.0);
    const float c3 = (float)(-NUDFT_TWO_PI * NUDFT_TWO_PI * NUDFT_TWO_PI * NUDFT_TWO_PI * NUDFT_TWO_PI *
                             NUDFT_TWO_PI / 720.0);
    const float c4 = (float)(NUDFT_TWO_PI * NUDFT_TWO_PI * NUDFT_TWO_PI * NUDFT_TWO_PI * NUDFT_TWO_PI *
                             NUDFT_TWO_PI * NUDFT_TWO_PI * NUDFT_TWO_PI / 40320.0);
    const float c5 = (float)(-NUDFT_TWO_PI * NUDFT_TWO_PI * NUDFT_TWO_PI * NUDFT_TWO_PI * NUDFT_TWO_PI *
                             NUDFT_TWO_PI * NUDFT_TWO_PI * NUDFT_TWO_PI * NUDFT_TWO_PI * NUDFT_TWO_PI /
                             3628800.0);
    const float sp = u * NUDFT_FMA(u2, NUDFT_FMA(u2, NUDFT_FMA(u2, NUDFT_FMA(u2, s4, s3), s2), s1), s0);
    const float cp = NUDFT_FMA(u2, NUDFT_FMA(u2, NUDFT_FMA(u2, NUDFT_FMA(u2, NUDFT_FMA(u2, c5, c4), c3), c2), c1), 1.0f);
    const float ss = (iq & 1u) ? cp : sp;
    const float cc = (iq & 1u) ? sp : cp;
    *s = nudft_float_bits(nudft_bits_float(ss) ^ ((iq & 2u) << 30));
    *c = nudft_float_bits(nudft_bits_float(cc) ^ (((iq + 1u) & 2u) << 30));
}

/* sin and cos of 2 pi t for |t| < 2^48 cycles: one reduction in double, q = round(4t) and
 * u = t - q/4 (exact: |u| <= 1/8, Sterbenz), u rounded to float (<= 2^-27 cycles). */
static inline void nudft_sincos_2pi(double t, float *s, float *c)
{
    const double q = nudft_round(4.0 * t);
    nudft_sincos_quadrant((float)(t - 0.25 * q), (uint32_t)(int32_t)q, s, c);
}

/* A phase in cycles as a 32-bit fixed-point fraction, t mod 1 in units of 2^-32 (rounded, so off by
 * at most 2^-33 cycles). Sums and integer multiples of such phases are exact modulo one cycle. */
static inline uint32_t nudft_fixed32(double t)
{
    const double f = t - floor(t); /* [0, 1], exact */
    return (uint32_t)(int64_t)nudft_round(f * 4294967296.0);
}

/* sin and cos of 2 pi th 2^-32: the quadrant from the top two bits (rounded to the nearest
 * quarter), the remainder |r| <= 2^29 converted to float (rounding <= 2^-28 cycles). */
static inline void nudft_sincos_fixed32(uint32_t th, float *s, float *c)
{
    const uint32_t r = th + (1u << 29);
    const int32_t rem = (int32_t)(r & ((1u << 30) - 1u)) - (1 << 29);
    nudft_sincos_quadrant((float)rem * 0x1p-32f, r >> 30, s, c);
}

/* out[2k], out[2k+1] = (float) accr[k], acci[k] for k < n: a tile's double sums stored. */
static inline void nudft_store_tile(float *out, const double *accr, const double *acci, int64_t n)
{
    for (int64_t k = 0; k < n; k++) {
        out[2 * k] = (float)accr[k];
        out[2 * k + 1] = (float)acci[k];
    }
}

/* The samples of one call, structure of arrays, padded to mp (a multiple of NUDFT_TILE) with
 * zero-weight samples at k = 0. dk[a] = sign * k_a / scale_a (cycles per grid step). */
typedef struct {
    int64_t m, mp;
    double *dk[3];
    float *ar, *ai;   /* weights (adjoint only; zero otherwise) */
    float *s1r, *s1i; /* e^{i 2 pi dkx}, rounded from double */
    float *s8r, *s8i; /* e^{i 2 pi NUDFT_SUB dkx}, rounded from double */
    void *mem;
} nudft_samples;

/* sign = +1 (adjoint, e^{+i...}) or -1 (forward). a may be NULL (forward). steps = 0 leaves the step
 * phasors s1, s8 unset (the powers kernel does not use them; they cost two libm sincos per sample). */
mr_status mr_nudft_samples_init(nudft_samples *p, const mr_grid *g, const float *traj, const float *a,
                                int real_weights, int64_t m, double sign, int steps, int threads);
void mr_nudft_samples_free(nudft_samples *p);

/* Rows of the adjoint. With real weights, Q(-r) = conj Q(r): a row (iy, iz) whose point mirror
 * (2cy - iy, 2cz - iz) lies in the grid and comes earlier in storage order is not a task of its own;
 * the task of the mirror (mirror = 1) writes it. Returns a malloc'd array (NULL: out of memory). */
typedef struct {
    int64_t iy, iz;
    int mirror;
} nudft_task;
nudft_task *mr_nudft_tasks(const mr_grid *g, int real_weights, int64_t *ntasks);

/* Validate the common arguments; 0 (with mr_error recorded, naming fn) when they are unusable. */
int mr_nudft_check_args(const mr_grid *g, const float *traj, const void *in, int64_t m, const void *out,
                        const char *fn);

/* Common start of the adjoint kernels: validate the arguments, resolve *threads, convert the samples
 * (sign +1; steps as for mr_nudft_samples_init), list the rows. On MR_OK the caller frees *tasks and
 * the samples. */
mr_status mr_nudft_adjoint_setup(const mr_grid *g, const float *traj, const float *a, int real_weights,
                                 int64_t m, const float *out, int steps, int *threads, nudft_samples *p,
                                 nudft_task **tasks, int64_t *ntasks);

/* mr_nudft_adjoint / mr_nudft_forward at a given level (same contracts), for tests and benchmarks
 * that compare the levels: MR_ENOTSUP (nothing run) when this CPU or build cannot run that level. */
mr_status mr_nudft_adjoint_level(mr_cpu_level level, const mr_grid *g, const float *traj, const float *a,
                                 int real_weights, int64_t m, float *out, int threads);
mr_status mr_nudft_forward_level(mr_cpu_level level, const mr_grid *g, const float *traj, const float *x, int64_t m,
                                 float *out, int threads);
mr_status mr_nudft_field_adjoint_level(mr_cpu_level level, const mr_grid *g, const float *traj, const float *time,
                                       const float *field, const float *a, int64_t m, float *out, int threads);
mr_status mr_nudft_field_forward_level(mr_cpu_level level, const mr_grid *g, const float *traj, const float *time,
                                       const float *field, const float *x, int64_t m, float *out, int threads);

#endif
