/* Density compensation weights, scaled as the k-space area (2D, (cycles/FOV)^2) or volume (3D)
 * each sample stands for, so that gridding images come out in the phantom's intensity units. */
#ifndef MR_DCF_H
#define MR_DCF_H

#include <stdint.h>

#include "../base/progress.h"
#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* |k| (2D radial: 2D matrix) or |k|^2 (3D radial kooshball: 3D matrix) weights, scaled as above.
 * Only for trajectories whose spokes pass through the centre; with a 3D matrix every sample is
 * treated as kooshball, so do not use it for stack-of-stars. */
mr_status mr_dcf_analytic(const int64_t matrix[3], const float *traj, int64_t m, float *w);

/* Pipe-Menon iterative weights from the trajectory alone (any trajectory), scaled as above.
 * iters <= 0: the default count. threads <= 0: all cores. */
mr_status mr_dcf_pipe(const int64_t matrix[3], const float *traj, int64_t m, int iters, int threads, float *w);
/* The same, reporting its iterations to progress as the stage "DCF" (base/progress.h; may be NULL). */
mr_status mr_dcf_pipe_progress(const int64_t matrix[3], const float *traj, int64_t m, int iters, int threads, float *w,
                               const mr_progress *progress);

#ifdef __cplusplus
}
#endif
#endif
