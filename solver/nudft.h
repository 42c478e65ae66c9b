/* Exact non-uniform DFTs on the CPU: the two sums every reconstruction is built from.
 *
 *   adjoint:  out[v] = sum_m a_m exp(+i 2 pi k_m . r_v)            (F^H d with a = conj(Phi) w d / N,
 *                                                                  Q with a = |Phi|^2 w / N^2, real)
 *   forward:  out[m] = sum_v x_v exp(-i 2 pi k_m . r_v)
 *
 * r_v runs over an mr_grid (io/kspace.h). Complex arrays are interleaved float (re, im).
 * traj is [M][3] cycles/FOV. All pointers are borrowed for the call only. */
#ifndef MR_NUDFT_H
#define MR_NUDFT_H

#include <stdint.h>

#include "../base/grid.h"
#include "../base/progress.h"
#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fast float32 CPU kernels (OpenMP; the "powers" adjoint with AVX-512 or AVX2 + FMA, the portable
 * complex-rotation adjoint elsewhere; docs/OPERATOR.md). The instruction-set level is chosen once per
 * process (base/cpu.h: the best the CPU supports, or MR_CPU_KERNEL); a level that cannot run here is
 * MR_ENOTSUP / MR_EINVAL from these calls, with a message naming MR_CPU_KERNEL.
 * a is complex [M][2] when real_weights == 0, real [M] otherwise. threads <= 0: all cores.
 * Deterministic: the same inputs give the same bits for any thread count (at a given level). */
mr_status mr_nudft_adjoint(const mr_grid *g, const float *traj, const float *a, int real_weights, int64_t m,
                           float *out, int threads);
/* The same, reporting its rows to progress as `stage` (base/progress.h; progress may be NULL). */
mr_status mr_nudft_adjoint_progress(const mr_grid *g, const float *traj, const float *a, int real_weights, int64_t m,
                                    float *out, int threads, const mr_progress *progress, const char *stage);
mr_status mr_nudft_forward(const mr_grid *g, const float *traj, const float *x, int64_t m, float *out, int threads);

/* The exact sums with an off-resonance (field) term, the reference of the field-corrected operators
 * (solver/linop_field.h):
 *   adjoint:  out[v] = sum_m a_m exp(+i 2 pi (k_m . r_v + f_v t_m))        (a complex [M][2])
 *   forward:  out[m] = sum_v x_v exp(-i 2 pi (k_m . r_v + f_v t_m))
 * time [M]: t_m in seconds; field [mr_grid_size(g)]: f_v in Hz at g's voxels (x fastest). One phase and
 * one sin/cos per (voxel, sample) pair (no recurrence: f varies from voxel to voxel), float polynomials
 * after a reduction in double (solver/nudft_field.h). Same levels, threads and determinism as above. */
mr_status mr_nudft_field_adjoint(const mr_grid *g, const float *traj, const float *time, const float *field,
                                 const float *a, int64_t m, float *out, int threads);
mr_status mr_nudft_field_forward(const mr_grid *g, const float *traj, const float *time, const float *field,
                                 const float *x, int64_t m, float *out, int threads);

/* The level these kernels run at: "avx512", "avx2" or "portable" (static text); NULL when
 * MR_CPU_KERNEL asks for a level that cannot run here (the kernels then fail with the reason). */
const char *mr_nudft_kernel_name(void);

/* The plain textbook loops in float64 (one sin/cos per pair, double accumulators): the reference
 * every fast kernel (CPU and GPU) is tested against. Outputs are double, interleaved. */
void mr_nudft_adjoint_ref(const mr_grid *g, const float *traj, const float *a, int real_weights, int64_t m,
                          double *out);
void mr_nudft_forward_ref(const mr_grid *g, const float *traj, const float *x, int64_t m, double *out);
/* The same with the field term (time, field as for mr_nudft_field_*; complex a). */
void mr_nudft_field_adjoint_ref(const mr_grid *g, const float *traj, const float *time, const float *field,
                                const float *a, int64_t m, double *out);
void mr_nudft_field_forward_ref(const mr_grid *g, const float *traj, const float *time, const float *field,
                                const float *x, int64_t m, double *out);

#ifdef __cplusplus
}
#endif
#endif
