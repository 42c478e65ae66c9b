/* The instruction-set variants of the CPU NUDFT kernels: one source, compiled once per level.
 *
 * solver/nudft_powers.h (the powers adjoint) and solver/nudft_forward.h (the forward) are written
 * once against the names below and included by one translation unit per level:
 *   solver/nudft_avx512.c  (NUDFT_ISA avx512; per-file flags -mavx512f -mavx512dq -mavx512vl -mavx512bw
 *                           -mavx2 -mfma, CMakeLists.txt)
 *   solver/nudft_avx2.c    (NUDFT_ISA avx2; -mavx2 -mfma)
 *   solver/nudft.c         (NUDFT_ISA portable; the build's baseline flags, forward only: the portable
 *                           adjoint is the rotation kernel)
 * Only solver/nudft.c's dispatcher calls these functions, after base/cpu.h said the CPU runs the level:
 * code compiled for AVX-512 is never entered on a CPU without it. A translation unit whose compiler
 * did not get the flags (another architecture) defines the functions as MR_ENOTSUP stubs. */
#ifndef MR_NUDFT_SIMD_H
#define MR_NUDFT_SIMD_H

#include "nudft_internal.h"

/* The kernels of each level (same contracts as mr_nudft_adjoint_progress / mr_nudft_forward). */
#define NUDFT_LEVEL_DECL(isa)                                                                                 \
    mr_status mr_nudft_adjoint_powers_##isa(const mr_grid *g, const float *traj, const float *a, int real_weights, \
                                            int64_t m, float *out, int threads, const mr_progress *progress,  \
                                            const char *stage);                                               \
    mr_status mr_nudft_forward_##isa(const mr_grid *g, const float *traj, const float *x, int64_t m, float *out,  \
                                     int threads);
NUDFT_LEVEL_DECL(avx512)
NUDFT_LEVEL_DECL(avx2)
#undef NUDFT_LEVEL_DECL
mr_status mr_nudft_forward_portable(const mr_grid *g, const float *traj, const float *x, int64_t m, float *out,
                                    int threads);
/* The sums with an off-resonance term (solver/nudft_field.h), every level (same contracts as
 * mr_nudft_field_adjoint / mr_nudft_field_forward). */
#define NUDFT_FIELD_DECL(isa)                                                                                 \
    mr_status mr_nudft_field_adjoint_##isa(const mr_grid *g, const float *traj, const float *time,            \
                                           const float *field, const float *a, int64_t m, float *out,         \
                                           int threads);                                                      \
    mr_status mr_nudft_field_forward_##isa(const mr_grid *g, const float *traj, const float *time,            \
                                           const float *field, const float *x, int64_t m, float *out,         \
                                           int threads);
NUDFT_FIELD_DECL(avx512)
NUDFT_FIELD_DECL(avx2)
NUDFT_FIELD_DECL(portable)
#undef NUDFT_FIELD_DECL

#define NUDFT_CAT2(a, b) a##_##b
#define NUDFT_CAT(a, b) NUDFT_CAT2(a, b)
#define NUDFT_NAME(f) NUDFT_CAT(f, NUDFT_ISA) /* mr_nudft_forward -> mr_nudft_forward_avx2 */

/* ---- vectors of floats for the powers kernel --------------------------------------------------- */

/* The accumulation loops must be inlined with their compile-time block shape (register-resident
 * accumulators); GCC's heuristics do not always do it for these large bodies. */
#if defined(__GNUC__)
#define PW_INLINE static inline __attribute__((always_inline))
#else
#define PW_INLINE static inline
#endif
#if defined(NUDFT_VECTORS_AVX512) && defined(__AVX512F__)
#include <immintrin.h>
#define PW_VL 16         /* floats per register */
#define PW_ACC_VECTORS 4 /* offset vectors per pass: 4 x 4 accumulators use 16 of the 32 registers */
typedef __m512 pw_vf;
static inline pw_vf pw_zero(void) { return _mm512_setzero_ps(); }
static inline pw_vf pw_set1(float x) { return _mm512_set1_ps(x); }
static inline pw_vf pw_load(const float *p) { return _mm512_load_ps(p); }
static inline pw_vf pw_loadu(const float *p) { return _mm512_loadu_ps(p); }
static inline void pw_storeu(float *p, pw_vf v) { _mm512_storeu_ps(p, v); }
static inline pw_vf pw_fmadd(pw_vf a, pw_vf b, pw_vf c) { return _mm512_fmadd_ps(a, b, c); }
static inline pw_vf pw_add(pw_vf a, pw_vf b) { return _mm512_add_ps(a, b); }
static inline pw_vf pw_sub(pw_vf a, pw_vf b) { return _mm512_sub_ps(a, b); }
static inline pw_vf pw_reverse(pw_vf v)
{
    return _mm512_permutexvar_ps(_mm512_set_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), v);
}
#define PW_HAVE_VECTORS 1
#elif defined(NUDFT_VECTORS_AVX2) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define PW_VL 8
#define PW_ACC_VECTORS 2 /* 2 x 4 accumulators + 2 broadcasts + 2 table rows: 12 of the 16 registers
                            (3 x 4 spills with GCC 12) */
typedef __m256 pw_vf;
static inline pw_vf pw_zero(void) { return _mm256_setzero_ps(); }
static inline pw_vf pw_set1(float x) { return _mm256_set1_ps(x); }
static inline pw_vf pw_load(const float *p) { return _mm256_load_ps(p); }
static inline pw_vf pw_loadu(const float *p) { return _mm256_loadu_ps(p); }
static inline void pw_storeu(float *p, pw_vf v) { _mm256_storeu_ps(p, v); }
static inline pw_vf pw_fmadd(pw_vf a, pw_vf b, pw_vf c) { return _mm256_fmadd_ps(a, b, c); }
static inline pw_vf pw_add(pw_vf a, pw_vf b) { return _mm256_add_ps(a, b); }
static inline pw_vf pw_sub(pw_vf a, pw_vf b) { return _mm256_sub_ps(a, b); }
static inline pw_vf pw_reverse(pw_vf v)
{
    return _mm256_permutevar8x32_ps(v, _mm256_set_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
#define PW_HAVE_VECTORS 1
#endif

#if defined(PW_HAVE_VECTORS)
/* Keep two loaded table vectors in registers: each feeds two FMAs, and GCC would otherwise fold
 * the load into both, which doubles the loads and makes the loop load-bound (two vector loads per
 * cycle on Zen 3 and on Intel cores, as many as FMAs). An empty asm statement that "modifies" them. */
static inline void pw_in_register(pw_vf *a, pw_vf *b)
{
#if defined(__GNUC__)
    __asm__("" : "+v"(*a), "+v"(*b));
#else
    (void)a;
    (void)b;
#endif
}
#endif

#endif
