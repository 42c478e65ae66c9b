/* The non-uniform FFT on one GPU (the method of solver/nufft.h and docs/NUFFT.md, the kernel's
 * parameters computed by the caller: solver/nufft_kernel.h), behind a plain C interface:
 *
 *   type 1:  out[v] = sum_m a_m exp(+i 2 pi k_m . r_v)     over the voxels v of an mr_grid
 *   type 2:  out[m] = sum_v x_v exp(-i 2 pi k_m . r_v)
 *
 * Plan (create): the samples' fine-grid coordinates (first footprint index and offset per axis), binned
 * into tiles of the fine grid and put in tile order by a stable radix sort of (tile, sample); the tiles
 * coloured into classes whose tiles, with the kernel's halo, do not overlap (per axis a greedy colouring
 * of the periodic axis, usually 2 classes, combined: 8 in 3D); the kernel's polynomial coefficients and
 * deconvolution factors uploaded; one cuFFT plan of the fine grid.
 * Type 1: every non-empty tile is one thread block (a tile with more than MR_GPU_NUFFT_SPLIT samples: one
 * per part, each part's region stored whole in a scratch slot, the parts added in order by a second kernel)
 * that spreads into the tile (plus the kernel's halo) in shared memory: the kernel values of a batch of
 * samples are computed once into shared memory, then the block's threads cover one sample's footprint
 * together, sample after sample (no atomics; a barrier between samples), and the tile's cells are added to
 * the fine grid (periodic wrap) without atomics, one launch per class, the classes in a fixed order. Every
 * sum therefore has one order: type 1 gives the same bits on every run (iterative solvers amplify even
 * last-bit differences; docs/NUFFT.md). Then cuFFT (e^{+i}), deconvolution and crop into out.
 * Type 2: deconvolution into the zeroed fine grid; cuFFT (e^{-i}); one thread per sample in tile order
 * (neighbours read neighbouring cells) interpolates. Float32 or float64 arithmetic (the plan's); the
 * arrays of a call may be float or double either way.
 *
 * Everything runs on the context's stream, asynchronously (errors at the next waiting call, as
 * gpu_ops.h). Without CUDA, gpu/nufft_stub.c provides these functions (MR_ENODEV; mr_gpu_nufft_bytes
 * still computes).
 *
 * Ownership: create copies what it needs (host arrays borrowed for the call); *out belongs to the caller
 * and borrows the context (destroy it first). One call at a time per plan. */
#ifndef MR_GPU_NUFFT_H
#define MR_GPU_NUFFT_H

#include <stdint.h>

#include "../base/grid.h"
#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MR_GPU_NUFFT_MAX_WIDTH 16  /* kernels wider than this run on the CPU only */
#define MR_GPU_NUFFT_COEF_STRIDE 24 /* the coefficient rows' length (solver/nufft_kernel.h MR_NUFFT_MAX_WIDTH) */
#define MR_GPU_NUFFT_MAX_DEGREE 24
#define MR_GPU_NUFFT_BATCH 64      /* samples whose kernel values a spreading block holds at once */
#define MR_GPU_NUFFT_SPLIT 256     /* type 1: a tile with more samples is cut into parts of this many */
#define MR_GPU_NUFFT_SCRATCH (128LL << 20) /* type 1: bytes of the split tiles' parts per launch (more: more
                                              launches; a tile with more parts takes what it needs) */

typedef struct mr_gpu_ctx mr_gpu_ctx; /* gpu/gpu_ops.h */

/* The kernel of a transform (the caller's solver/nufft_kernel.h parameters, in plain arrays). */
typedef struct {
    int f64;                 /* arithmetic: 0 float32, 1 float64 */
    int width;               /* 2..MR_GPU_NUFFT_MAX_WIDTH */
    int degree;              /* 1..MR_GPU_NUFFT_MAX_DEGREE */
    int64_t fine[3];         /* fine grid per axis (1 on axes where the grid has n = 1) */
    const double *coef;      /* [degree + 1][MR_GPU_NUFFT_COEF_STRIDE], host, borrowed for create */
    const double *deconv[3]; /* [g->n[a]] 1 / phi^ per axis, host, borrowed for create */
    /* tuning (0: the default) */
    int64_t smem_limit;      /* shared memory a spreading block may take (bytes); 0: the device's opt-in limit
                                (create), 96 KB for the estimates */
    int64_t scratch_limit;   /* bytes of split tiles' parts per type-1 launch; 0: MR_GPU_NUFFT_SCRATCH (a smaller
                                one only means more launches: the same bits) */
} mr_gpu_nufft_kernel;

typedef struct mr_gpu_nufft mr_gpu_nufft;

/* Device bytes a plan of grid g, m samples and kernel k takes at its peak (fine grid, cuFFT's work area
 * estimate, sorted samples, bins, factors; the plan's temporary arrays included). Plain arithmetic with a
 * cuFFT work area the size of the fine grid when cuFFT cannot be asked (also without CUDA). */
int64_t mr_gpu_nufft_bytes(const mr_grid *g, int64_t m, const mr_gpu_nufft_kernel *k);

/* The tile (bin) extents the plan of kernel k takes (1 on inactive axes): the largest of a fixed list whose
 * shared memory (tile + kernel's halo, coefficients, a batch of samples) fits k->smem_limit (0: 96 KB);
 * returns those bytes. */
int64_t mr_gpu_nufft_tiles(const mr_gpu_nufft_kernel *k, int bin[3]);

/* traj: host [M][3] cycles/FOV (validated by the caller: finite). MR_ENOMEM (a clear message with the
 * bytes) when the device cannot hold the plan; MR_EINVAL for a kernel out of range. */
mr_status mr_gpu_nufft_create(mr_gpu_nufft **out, mr_gpu_ctx *c, const mr_grid *g, const float *traj, int64_t m,
                              const mr_gpu_nufft_kernel *k);
void mr_gpu_nufft_destroy(mr_gpu_nufft *p); /* NULL is fine */

/* Type 1 of `ncoils` weight vectors d_a (device: complex [C][M][2], or real [C][M] with real_weights) into
 * d_out (device [C][size(g)][2]); io_f64: the arrays hold doubles instead of floats. */
mr_status mr_gpu_nufft_type1(mr_gpu_nufft *p, int64_t ncoils, const void *d_a, int real_weights, int io_f64,
                             void *d_out);
/* Type 2 of `ncoils` images d_x (device [C][size(g)][2]) into d_out (device [C][M][2]). */
mr_status mr_gpu_nufft_type2(mr_gpu_nufft *p, int64_t ncoils, const void *d_x, int io_f64, void *d_out);

/* The tile (bin) extents, the non-empty tiles and the classes type 1 runs them in, for diagnostics. */
void mr_gpu_nufft_describe(const mr_gpu_nufft *p, int bin[3], int64_t *tiles, int *classes);

#ifdef __cplusplus
}
#endif
#endif
