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

/* What Pipe-Menon weights are a function of (the key of a store across runs): the trajectory, the
 * matrix (which axes are active) and the method text, which names everything else the bits depend on
 * (iterations, momentum, kernel, grid spacing, arithmetic). */
typedef struct {
    int64_t matrix[3];
    int64_t m;
    const float *traj; /* [M][3], borrowed for the call */
    char method[96];
} mr_dcf_key;

/* A store for Pipe-Menon weights across runs (io/q_cache.h keeps them on disk next to Q). The contract is
 * mr_q_store's (solver/linop.h): load before computing (1 and w [M] filled on a hit, 0 on a miss; a broken
 * entry is a miss, with a warning); after a miss exactly one save, with a malloc'd copy of the weights now
 * owned by the store (NULL when they could not be computed). Never fails the computation. */
typedef struct mr_dcf_store mr_dcf_store;
struct mr_dcf_store {
    int (*load)(mr_dcf_store *s, const mr_dcf_key *key, float *w);
    void (*save)(mr_dcf_store *s, const mr_dcf_key *key, float *w);
};

#define MR_DCF_PIPE_DEFAULT_ITERS 10
#define MR_DCF_PIPE_DEFAULT_MOMENTUM 0.5

typedef struct {
    int iters;       /* <= 0: MR_DCF_PIPE_DEFAULT_ITERS */
    double momentum; /* beta of the accelerated update (docs/GRIDDING.md), 0 <= beta < 1; 0: the plain
                        Pipe-Menon update. Default MR_DCF_PIPE_DEFAULT_MOMENTUM */
    int threads;     /* <= 0: all cores */
    const mr_progress *progress; /* the iterations as the stage "DCF" (base/progress.h); NULL: none. Borrowed */
    mr_dcf_store *store;         /* NULL: no store across runs (the per-process cache, dcf_cache.h, still
                                    answers repeated calls). Borrowed for the call */
} mr_dcf_pipe_opts;

void mr_dcf_pipe_opts_default(mr_dcf_pipe_opts *o);

/* Pipe-Menon iterative weights from the trajectory alone (any trajectory), scaled as above. o NULL: the
 * defaults. MR_EINVAL for a momentum outside [0, 1). */
mr_status mr_dcf_pipe_run(const int64_t matrix[3], const float *traj, int64_t m, const mr_dcf_pipe_opts *o, float *w);
/* The same with the default momentum and no store. iters <= 0: the default count. threads <= 0: all cores. */
mr_status mr_dcf_pipe(const int64_t matrix[3], const float *traj, int64_t m, int iters, int threads, float *w);

#ifdef __cplusplus
}
#endif
#endif
