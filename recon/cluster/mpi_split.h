/* The exact adjoint sums split across the ranks of an MPI job (docs/CLUSTER.md):
 *
 *   out[v] = sum_m a_m exp(+i 2 pi k_m . r_v)   over the voxels v of an mr_grid (base/grid.h)
 *
 * the same sum as mr_nudft_adjoint (solver/nudft.h) and mr_gpu_nudft_adjoint (gpu/gpu.h): F^H d on
 * the image grid with complex a, Q on the Q grid with real a. The grid is cut into slabs of whole
 * planes along z (rows along y in 2D); each rank computes its slabs with the CPU kernel or on its
 * GPU, and rank 0 gathers the result.
 *
 * Slabs. Direct: the planes are dealt out in equal contiguous slabs. With real weights on the CPU
 * (mirror, the default there), Q(-r) = conj Q(r) is used as the one-process CPU kernel uses it:
 * only the planes that are not the point mirror of another plane are computed (the upper half of
 * the Q grid and the unpaired plane 0), dealt out in equal shares, each computed on an x axis
 * extended to the mirror's offsets, and the mirror planes are filled by conjugation (the few rows
 * whose mirror lies outside the grid by one more small call). So every rank computes about 1/P of
 * what one process computes.
 *
 * Results: complex weights (F^H d) are bit-identical to the one-process call with the same kernel
 * (each voxel row is computed by the same code). Real weights with mirror are bit-identical to the
 * portable CPU kernel (MR_CPU_KERNEL=portable) and within float32 rounding of the "powers" kernels
 * (AVX2, AVX-512), whose blocks depend on the row length (relative L2 about 5e-8 on random inputs).
 * tests/mpi_split.sh checks both against the one-process result and a float64 reference.
 *
 * Every rank must pass the same grid, trajectory, weights and m (read the scan on every rank, or
 * mr_comm_bcast it from rank 0). Collective; every rank returns the same status. */
#ifndef MR_MPI_SPLIT_H
#define MR_MPI_SPLIT_H

#include <stdint.h>

#include "../../base/grid.h"
#include "../../base/status.h"
#include "../../gpu/gpu.h"
#include "mpi_comm.h"

typedef struct {
    int device;             /* -1 (default): the CPU kernel; >= 0: this rank's CUDA device */
    int threads;            /* CPU threads of this rank (<= 0: all cores) */
    mr_gpu_variant variant; /* GPU kernel variant (default MR_GPU_BEST) */
    int mirror;             /* real weights: -1 (default) on for the CPU, off for the GPU (as their
                               one-process kernels do); 0 off; 1 on */
} mr_split_opts;

void mr_split_opts_default(mr_split_opts *o);

typedef struct {
    double compute_s;     /* this rank's kernels and mirroring */
    double compute_max_s; /* the slowest rank's */
    double gather_s;      /* moving the slabs to rank 0, after the slowest rank finished */
    double total_s;       /* the whole call (as rank 0 sees it) */
    int64_t planes;       /* planes this rank computed with the kernel (mirrored ones not counted) */
    int ranks;
} mr_split_stats;

/* out: [n][2] floats (n = mr_grid_size(g)) on rank 0, NULL allowed elsewhere. a: real [m] when
 * real_weights, else complex [m][2]. traj [m][3] cycles/FOV. o NULL: defaults. stats may be NULL.
 * All pointers are borrowed for the call. */
mr_status mr_mpi_adjoint_split(mr_comm *comm, const mr_grid *g, const float *traj, const float *a, int real_weights,
                               int64_t m, float *out, const mr_split_opts *o, mr_split_stats *stats);

#endif
