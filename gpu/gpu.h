/* The CUDA backend of the exact non-uniform DFTs, behind a plain C interface. When mrirecon is
 * built without CUDA (MR_CUDA=OFF or no nvcc), gpu/gpu_stub.c provides these functions: the count
 * is 0 and everything else returns MR_ENODEV.
 *
 * Same sums as solver/nudft.h:  out[v] = sum_m a_m exp(+i 2 pi k_m . r_v)  over an mr_grid. */
#ifndef MR_GPU_H
#define MR_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "../base/grid.h"
#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Number of usable CUDA devices. 0 when built without CUDA, when there is no driver or no device
 * (that is an answer, not an error). Never fails. */
int mr_gpu_count(void);

/* "NVIDIA H200 (132 SMs, 139 GiB)" */
mr_status mr_gpu_describe(int device, char *buf, size_t size);

/* Kernel variants: the book's optimisation ladder. MR_GPU_BEST is what the operator uses. */
typedef enum {
    MR_GPU_NAIVE = 0,  /* samples read from global memory, accurate sincosf */
    MR_GPU_CONSTANT,   /* samples streamed through __constant__ memory in chunks, accurate sincosf */
    MR_GPU_SFU,        /* + hardware __sincosf after range reduction */
    MR_GPU_TUNED,      /* + the tuned block size / chunk / unroll */
    MR_GPU_MULTIVOXEL, /* + several voxels along x per thread by complex rotation */
    MR_GPU_BEST = MR_GPU_MULTIVOXEL
} mr_gpu_variant;

typedef struct mr_gpu_nudft mr_gpu_nudft;

/* Upload the trajectory [M][3] once; device buffers are kept and reused across calls.
 * *out owned by the caller (mr_gpu_nudft_destroy). */
mr_status mr_gpu_nudft_create(mr_gpu_nudft **out, int device, const float *traj, int64_t m);
void mr_gpu_nudft_destroy(mr_gpu_nudft *p);

/* out[v] = sum_m a_m e^{+i2pi k_m.r_v} on grid g; a complex [M][2] or real [M]; out [n][2] host
 * memory. Voxels are split into passes when device memory is short. */
mr_status mr_gpu_nudft_adjoint(mr_gpu_nudft *p, const mr_grid *g, const float *a, int real_weights, float *out,
                               mr_gpu_variant variant);

/* Time of the last kernel work in milliseconds (CUDA events), for the benchmark. */
double mr_gpu_nudft_last_ms(const mr_gpu_nudft *p);

/* ---- added by the GPU engineer (issue 5): explicit kernel configurations for the tuning sweep,
 * the ladder of `mrirecon bench` and the tests. ------------------------------------------------ */

/* How a kernel reads the samples and evaluates e^{i 2 pi t}. */
typedef enum {
    MR_GPU_MODE_GLOBAL = 0, /* samples from global memory, accurate sincosf */
    MR_GPU_MODE_CONST = 1,  /* samples from __constant__ chunks, accurate sincosf */
    MR_GPU_MODE_SFU = 2,    /* samples from __constant__ chunks, float phase reduced to [-1/2, 1/2] turns,
                               hardware __sincosf */
    MR_GPU_MODE_SFU_FIXED = 3 /* as MR_GPU_MODE_SFU with the phase in 32-bit fixed-point turns: integer
                                 arithmetic modulo one turn is the range reduction (exact) */
} mr_gpu_mode;

/* One compiled instantiation of the kernel template (gpu/nudft.cu). */
typedef struct {
    int threads; /* threads per block */
    int chunk;   /* samples per __constant__ chunk (one upload each) */
    int unroll;  /* samples per unrolled step of the inner loop */
    int voxels;  /* consecutive voxels along x per thread */
    int rotate;  /* 0: one sincos per (voxel, sample) pair; 1: one per sample for the first voxel, the
                    other voxels by complex rotation (MR_GPU_MULTIVOXEL) */
    int mode;    /* mr_gpu_mode */
} mr_gpu_config;

/* The compiled configurations: i in [0, mr_gpu_config_count()). 0 configurations without CUDA. */
int mr_gpu_config_count(void);
mr_status mr_gpu_config_get(int i, mr_gpu_config *cfg);

/* The configuration a ladder variant runs for real (Q) or complex (F^H d) weights. */
void mr_gpu_variant_config(mr_gpu_variant variant, int real_weights, mr_gpu_config *cfg);

/* The rung the operator runs on grid g of `device` (issue 10: by size, because the multi-voxel rung has
 * one thread per 32 voxels and leaves most SMs idle on small grids, e.g. 3.4x slower than the SFU rung
 * on 2D 128^2): MR_GPU_MULTIVOXEL when its threads give every SM a block, else MR_GPU_TUNED (one thread
 * per 4 voxels) when its threads do, else MR_GPU_SFU (one thread per voxel). MR_GPU_BEST without CUDA. */
mr_gpu_variant mr_gpu_variant_for_grid(int device, const mr_grid *g, int real_weights);

/* mr_gpu_nudft_adjoint with an explicit configuration (one of mr_gpu_config_get's); MR_EINVAL when
 * it was not compiled. */
mr_status mr_gpu_nudft_adjoint_config(mr_gpu_nudft *p, const mr_grid *g, const float *a, int real_weights,
                                      float *out, const mr_gpu_config *cfg);

/* Cap the voxels of one pass (0 = no cap, the default); passes are otherwise only used when device
 * memory is short. For tests of the multi-pass path. */
void mr_gpu_nudft_set_max_pass(mr_gpu_nudft *p, int64_t voxels);

/* ---- added by the operator engineer (issue 9): device-pointer entry points, so that with
 * --device gpu the data stay on the device (solver/linop_nudft.c). -------------------------------- */

typedef struct mr_gpu_ctx mr_gpu_ctx; /* gpu/gpu_ops.h */

/* mr_gpu_nudft_adjoint with the weights d_a (complex [M][2] or real [M]) and the output d_out [n][2] in
 * device memory of p's device: the weights are packed into records on the device and streamed to the
 * constant buffers from there. Runs after the work queued on c's stream and returns when the result
 * is complete. c must be on p's device. */
mr_status mr_gpu_nudft_adjoint_dev(mr_gpu_nudft *p, mr_gpu_ctx *c, const mr_grid *g, const float *d_a, int real_weights,
                                   float *d_out, mr_gpu_variant variant);

/* The forward sum out[m] = sum_v x_v exp(-i 2 pi k_m . r_v) over grid g (solver/nudft.h), x [n][2] and
 * out [M][2] in device memory: one thread per sample, the voxels in shared-memory tiles, the phase in
 * 32-bit fixed-point turns (exact range reduction), hardware __sincosf (accurate sincosf with
 * exact_trig), float sums per tile added into double. Runs on c's stream (asynchronous). */
mr_status mr_gpu_nudft_forward_dev(mr_gpu_nudft *p, mr_gpu_ctx *c, const mr_grid *g, const float *d_x, float *d_out,
                                   int exact_trig);

#ifdef __cplusplus
}
#endif
#endif
