/* The exact sums of the NUDFT operator on the GPU, behind one object: which engine computes them (the
 * CUDA-core kernels of the ladder, gpu/gpu.h, or the tensor-core matrix products, gpu/gemm.h) and on
 * how many GPUs (issue 10). solver/linop_nudft.c uses it for Q, F^H d and the forward of a GPU backend;
 * `mrirecon bench --what q` times it on one GPU and on several.
 *
 * Same sums as solver/nudft.h (raw: the operator applies its weight scaling):
 *   adjoint:  out[v] = sum_m a_m exp(+i 2 pi k_m . r_v)  over an mr_grid (real or complex a)
 *   forward:  out[m] = sum_v x_v exp(-i 2 pi k_m . r_v)
 *
 * Several GPUs (docs/GPU.md, "One reconstruction across GPUs"): the adjoint's grid is split into
 * parts, one per entry of the device list, computed at the same time on different GPUs (one host thread
 * per distinct GPU; the parts of a GPU listed twice one after the other, which exercises the split on
 * a one-GPU machine) and gathered into the output on the context's GPU with peer copies (NVLink where
 * the GPUs can reach each other, else through the host). Parts: the GEMM engines take the balanced
 * plane lists of mr_gemm_plane_split (for real weights closed under the Hermitian mirror, so every
 * part keeps the 2x saving); the kernel engine takes z slabs. The forward runs on the context's GPU.
 *
 * When mrirecon is built without CUDA, gpu/sums_stub.c provides these functions: they return MR_ENODEV
 * (mr_gpu_sums_choose returns MR_SUMS_SFU). */
#ifndef MR_SUMS_H
#define MR_SUMS_H

#include <stddef.h>
#include <stdint.h>

#include "../base/grid.h"
#include "../base/status.h"
#include "gemm.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MR_SUMS_MAX_PARTS 16
/* At most this many sample chunks (below). */
#define MR_SUMS_MAX_CHUNKS 64
/* The GEMM engines' work space per call: a quarter of the sums' memory cap, at most this. */
#define MR_SUMS_MAX_WORK ((int64_t)4 << 30)
/* The sums' default memory cap per GPU: 60 % of the free memory, at most this (the 256^3 scan with 2.3 M
 * samples then takes two chunks and about 25 GB in all, on an 80 GB H100 as on the H200). */
#define MR_SUMS_DEFAULT_CAP ((int64_t)30 << 30)

typedef enum {
    MR_SUMS_SFU = 0,    /* the ladder's CUDA-core kernels (fixed-point phase, hardware sincos), the rung chosen by
                           grid size (mr_gpu_variant_for_grid); with exact_trig the constant-memory rung */
    MR_SUMS_TF32X3 = 1, /* tensor-core GEMM in split TF32 (our wgmma kernel on compute capability 9.0, else our
                           mma.sync kernel; the forward with cuBLAS) */
    MR_SUMS_FP64 = 2,   /* tensor-core DGEMM: the sums in float64 */
    MR_SUMS_FP16X3 = 3  /* tensor-core GEMM in split FP16, weights scaled into FP16's range (our kernel) */
} mr_sums_engine;

typedef struct mr_gpu_ctx mr_gpu_ctx; /* gpu/gpu_ops.h */
typedef struct mr_gpu_sums mr_gpu_sums;

typedef struct {
    mr_sums_engine engine;
    int exact_trig;          /* MR_SUMS_SFU: accurate sincosf (adjoint: MR_GPU_CONSTANT; forward: sincospif) */
    const int *devices;      /* the GPUs sharing the adjoint; devices[0] must be the context's; repeats allowed.
                                NULL: the context's GPU alone */
    int ndevices;            /* entries of devices (1..MR_SUMS_MAX_PARTS) */
    int64_t gemm_max_columns; /* tests: columns per GEMM pass (mr_gemm_opts.max_columns); 0: from free memory */
    int gemm_split_samples;   /* tuning: samples per K split of the MMA kernel (mr_gemm_opts.split_samples); 0: default */
    /* Memory (issue 21): the GEMM engines keep per-axis tables of every sample (about 14 KB per sample on a 512^3
     * grid) and weight products per plane. With grid_n set, the samples are cut into chunks whose tables, the
     * work space and an accumulation grid fit max_bytes per GPU (mr_gpu_sums_layout): each chunk's sum is
     * added to the output and its tables freed before the next. */
    int64_t grid_n[3];        /* the largest grid the sums will be asked for (the Q grid); zeros: no chunks */
    int64_t max_bytes;        /* the cap per GPU; 0: 60 % of the GPU's free memory at create, at most
                                 MR_SUMS_DEFAULT_CAP */
} mr_gpu_sums_opts;

/* How the GEMM engines' sums of M samples on grids up to g fit in cap bytes per GPU: the work space
 * (mr_gemm_opts.max_work_bytes: a quarter of cap, at most MR_SUMS_MAX_WORK, at least 256 MB), the tables
 * and weight products of one chunk of samples at a time (*nchunks chunks; 1 when all fit), and, with several
 * chunks, a float accumulation grid. Returns the peak bytes (more than cap when even MR_SUMS_MAX_CHUNKS
 * chunks do not fit). The SFU engine: its buffers (*nchunks = 1). Plain arithmetic, also without CUDA. */
int64_t mr_gpu_sums_layout(const mr_grid *g, int64_t m, mr_sums_engine e, int64_t cap, int *nchunks,
                           int64_t *work_bytes);
/* The peak of the sums of an image matrix (its Q grid, the largest) within cap: mr_gpu_sums_layout. */
int64_t mr_gpu_sums_bytes(const int64_t matrix[3], int64_t m, mr_sums_engine e, int64_t cap);

/* "sfu", "tf32x3", "fp64", "fp16x3" */
const char *mr_sums_engine_name(mr_sums_engine e);

/* The engine the operator takes when the user leaves the choice to it, for an image matrix and M samples
 * on `device`; why (may be NULL) receives the reason in words. MR_SUMS_TF32X3 where its warpgroup-MMA kernel
 * runs (compute capability 9.0: the fastest there, docs/BENCHMARKS.md), else MR_SUMS_FP16X3 (faster than the
 * mma.sync tf32x3 and the kernels on every measured size), unless cuBLAS does not load, or the Q sum is so
 * small (< MR_SUMS_GEMM_MIN_PAIRS voxel-sample pairs) that loading cuBLAS costs more than it saves. (Tables
 * larger than the free memory are cut into sample chunks: mr_gpu_sums_opts.grid_n.) */
#define MR_SUMS_GEMM_MIN_PAIRS 0.0
mr_sums_engine mr_gpu_sums_choose(int device, const int64_t matrix[3], int64_t m, char *why, size_t why_size);

/* Upload the trajectory [M][3] (host, cycles/FOV; copied) to every listed GPU and make the engine's
 * plans there (GEMM: cuBLAS handles; kernels: their buffers; a context and peer access per extra GPU).
 * c is borrowed (destroy the sums first). *out owned by the caller (mr_gpu_sums_destroy). */
mr_status mr_gpu_sums_create(mr_gpu_sums **out, mr_gpu_ctx *c, const float *traj, int64_t m,
                             const mr_gpu_sums_opts *o);
void mr_gpu_sums_destroy(mr_gpu_sums *s); /* NULL is fine */

/* out = the adjoint sum on grid g. d_a: device memory of c's GPU, complex [M][2] or real [M] (real_weights);
 * d_out: c's GPU, mr_grid_size(g) complex values of out_type (MR_GEMM_F64 only with the GEMM engines).
 * Runs after the work queued on c's stream and returns when d_out is complete. */
mr_status mr_gpu_sums_adjoint(mr_gpu_sums *s, const mr_grid *g, const float *d_a, int real_weights, void *d_out,
                              mr_gemm_type out_type);

/* out[m] = the forward sum of the image d_x on grid g ([n][2] floats) into d_out ([M][2] floats), both on
 * c's GPU; runs after the work queued on c's stream, on c's GPU alone. */
mr_status mr_gpu_sums_forward(mr_gpu_sums *s, const mr_grid *g, const float *d_x, float *d_out);

/* Free the tables and work buffers kept for the grids used so far (e.g. Q's, once Q is done); later
 * calls make what they need again. */
void mr_gpu_sums_trim(mr_gpu_sums *s);

/* What computes the adjoint on grid g, precisely enough that equal texts give equal bits on equal GPUs
 * (the Q cache key): "gpu sfu T256 C512 U2 V32rot m3", "gpu tf32x3 mma v0", "gpu fp64 dgemm". */
void mr_gpu_sums_describe(const mr_gpu_sums *s, const mr_grid *g, int real_weights, char *buf, size_t size);

/* Parts of an adjoint (the length of the device list). */
int mr_gpu_sums_parts(const mr_gpu_sums *s);

#ifdef __cplusplus
}
#endif
#endif
