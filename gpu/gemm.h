/* The exact non-uniform DFTs as matrix products on the tensor cores (issue 10), behind a plain C
 * interface. Same sums as solver/nudft.h and gpu/gpu.h:
 *
 *   adjoint:  out[v] = sum_m a_m exp(+i 2 pi k_m . r_v)      over an mr_grid (F^H d: image grid, complex a;
 *                                                            Q: the 2N grid, real a)
 *   forward:  out[m] = sum_v x_v exp(-i 2 pi k_m . r_v)
 *
 * The phase is separable, e^{i2pi k.r} = e^{i2pi kx x} e^{i2pi ky y} e^{i2pi kz z}: with per-axis tables
 * (N x M entries each, built on the device in float64 with exact range reduction) every (y, z) column
 * of the output is one row of a matrix product whose contraction runs over the M samples. The x axis is
 * folded about the middle of the grid so that its table is real (cos and sin rows): half the FLOPs of a
 * complex product. Real weights additionally use the Hermitian symmetry out[-r] = conj(out[r]).
 * docs/GPU.md ("Exact sums as matrix products") has the derivation, the kernels and the error analysis.
 *
 * Precision modes:
 *   MR_GEMM_TF32X3  split TF32 on the tensor cores: A = A_hi + A_lo, A.B ~ A_hi.B_hi + A_hi.B_lo + A_lo.B_hi
 *                   with FP32 accumulation (rel. L2 ~1e-6); our own kernel on the warpgroup MMA (wgmma,
 *                   compute capability 9.0: the default there), our mma.sync kernel (the default elsewhere),
 *                   or cuBLAS.
 *   MR_GEMM_FP64    float64 tables and DGEMM on the FP64 tensor cores (cuBLAS): the exact sum in double
 *                   (rel. L2 ~1e-14).
 *   MR_GEMM_FP16X3  split FP16 (the same three products, mma.sync m16n8k16: twice the work per tensor-core
 *                   instruction) with the weights scaled by a power of two into FP16's range (rel. L2
 *                   ~1e-6); our kernel only. The forward runs as MR_GEMM_TF32X3.
 *
 * When mrirecon is built without CUDA, gpu/gemm_stub.c provides these functions: they return
 * MR_ENODEV (the option helpers still work). Complex arrays are interleaved (re, im). */
#ifndef MR_GEMM_H
#define MR_GEMM_H

#include <stddef.h>
#include <stdint.h>

#include "../base/grid.h"
#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { MR_GEMM_TF32X3 = 0, MR_GEMM_FP64 = 1, MR_GEMM_FP16X3 = 2 } mr_gemm_precision;

/* Element type of a complex output array: interleaved float or interleaved double. */
typedef enum { MR_GEMM_F32 = 0, MR_GEMM_F64 = 1 } mr_gemm_type;

/* Who multiplies in MR_GEMM_TF32X3 (MR_GEMM_FP64 always uses cuBLAS DGEMM, MR_GEMM_FP16X3 our kernel). */
typedef enum {
    MR_GEMM_ENGINE_AUTO = 0, /* the fastest measured (docs/BENCHMARKS.md): WGMMA where available, else MMA */
    MR_GEMM_ENGINE_MMA = 1,  /* our fused mma.sync kernel: the (y,z) rows formed on the fly, no big operand */
    MR_GEMM_ENGINE_CUBLAS = 2, /* cublasGemmStridedBatchedEx, CUBLAS_COMPUTE_32F_FAST_TF32, operands materialised */
    MR_GEMM_ENGINE_WGMMA = 3   /* our fused kernel on the warpgroup MMA (wgmma) of sm_90a: compute capability 9.0
                                  and a build for sm_90a only (mr_gemm_wgmma_available) */
} mr_gemm_engine;

typedef struct {
    int device;            /* CUDA device of the plan */
    double mem_fraction;   /* share of the free device memory the work space may take per call (0.5) */
    int64_t max_columns;   /* cap on the (y,z) columns per pass (0: sized from memory); tests force passes */
    int64_t max_samples;   /* cap on the samples per chunk of the cuBLAS paths (0: sized from memory) */
    int split_samples;     /* samples per K split of the MMA kernel (multiple of 32; 0: 4096) */
    int hermitian;         /* real weights: use out[-r] = conj(out[r]) (1, the default) */
    mr_gemm_engine engine; /* for MR_GEMM_TF32X3 */
    int variant;           /* MMA kernel variant, for tuning (0: the default; the list is in gpu/gemm.cu and
                              docs/GPU.md) */
    int64_t max_work_bytes; /* cap on the work space budget of a call in bytes (0: mem_fraction alone) */
} mr_gemm_opts;

typedef struct mr_gemm_plan mr_gemm_plan;

void mr_gemm_opts_default(mr_gemm_opts *o);

/* Load cuBLAS (once per process, thread-safe; later calls return at once): MR_OK, or MR_ENODEV naming
 * the library and why it could not be loaded (it is loaded at run time, docs/GPU.md "Linking cuBLAS").
 * mr_gemm_create calls it. */
mr_status mr_gemm_load(void);

/* 1 when the wgmma engine runs on CUDA device `device` (gemm.cu built for sm_90a and compute capability
 * 9.0), else 0; 0 without CUDA. */
int mr_gemm_wgmma_available(int device);

/* Device memory the tables of grid g take for M samples (the plan keeps them per grid, two grids):
 * (ceil(nx / MR_GEMM_ROW_ALIGN) MR_GEMM_ROW_ALIGN + 2 ny + 2 nz) * ceil(M / MR_GEMM_SAMPLE_ALIGN)
 * MR_GEMM_SAMPLE_ALIGN values of 4 (tf32x3) or 8 (fp64) bytes. Plain arithmetic: also without CUDA. */
#define MR_GEMM_ROW_ALIGN 128
#define MR_GEMM_SAMPLE_ALIGN 32
int64_t mr_gemm_table_bytes(const mr_grid *g, int64_t m, mr_gemm_precision prec);

/* "tf32x3" / "fp64" / "fp16x3"; parse returns MR_EINVAL naming the text. */
const char *mr_gemm_precision_name(mr_gemm_precision p);
mr_status mr_gemm_precision_parse(const char *text, mr_gemm_precision *p);

/* Upload the trajectory [M][3] (host, cycles/FOV; copied) to o->device and create the cuBLAS handle
 * and a stream. Tables (per grid and precision, cached: two grids) and work space (grown on demand,
 * kept) are allocated by the calls. o NULL: defaults. *out owned by the caller (mr_gemm_destroy). */
mr_status mr_gemm_create(mr_gemm_plan **out, const float *traj, int64_t m, const mr_gemm_opts *o);
void mr_gemm_destroy(mr_gemm_plan *p);

/* The kernel the plan's adjoint runs in precision prec, in words: "tf32x3 wgmma", "tf32x3 mma v0".. "v3",
 * "tf32x3 cublas", "fp16x3 mma" or "fp64 dgemm". The bits of a sum depend on it (the Q cache keys on it). */
const char *mr_gemm_adjoint_kernel(const mr_gemm_plan *p, mr_gemm_precision prec);

/* Free the tables and the work space the plan keeps (the next call rebuilds what it needs), e.g. once Q
 * is done and only the image grid is used from then on. */
void mr_gemm_release(mr_gemm_plan *p);

/* Run the plan's work on this stream (a cudaStream_t of the plan's device; NULL: the plan's own). */
mr_status mr_gemm_set_stream(mr_gemm_plan *p, void *stream);

/* ---- device entry points: every pointer is device memory of the plan's device; each call returns
 * when its result is complete in d_out (the stream is synchronised). ---------------------------- */

/* Adjoint on the planes iz = planes[0..nplanes) (distinct, any order) of grid g: d_out receives
 * nplanes planes of n[0] x n[1] complex values, in list order ([slot][iy][ix]), of out_type.
 * d_a: complex [M][2] floats, or real [M] with real_weights. With real weights (and opts.hermitian)
 * a plane whose mirror plane (2 center_z - iz) is also in the list is taken from it by symmetry, so a
 * mirror-closed list (mr_gemm_plane_split) costs about half. */
mr_status mr_gemm_adjoint_planes_dev(mr_gemm_plan *p, const mr_grid *g, mr_gemm_precision prec, const float *d_a,
                                     int real_weights, const int64_t *planes, int64_t nplanes, void *d_out,
                                     mr_gemm_type out_type);

/* The voxel slab of planes [z0, z1): d_out holds (z1 - z0) n[1] n[0] complex values. */
mr_status mr_gemm_adjoint_slab_dev(mr_gemm_plan *p, const mr_grid *g, mr_gemm_precision prec, const float *d_a,
                                   int real_weights, int64_t z0, int64_t z1, void *d_out, mr_gemm_type out_type);

/* Forward for the samples [m0, m1): d_x the whole image on grid g (complex floats, [iz][iy][ix]);
 * d_out receives m1 - m0 complex values of out_type. */
mr_status mr_gemm_forward_dev(mr_gemm_plan *p, const mr_grid *g, mr_gemm_precision prec, const float *d_x, int64_t m0,
                              int64_t m1, void *d_out, mr_gemm_type out_type);

/* ---- host convenience (tests, bench): host arrays, whole grid / all samples. ------------------- */

/* a: [M][2] or [M] floats; out: mr_grid_size(g) complex values of out_type. */
mr_status mr_gemm_adjoint(mr_gemm_plan *p, const mr_grid *g, mr_gemm_precision prec, const float *a, int real_weights,
                          void *out, mr_gemm_type out_type);
/* x: mr_grid_size(g) complex floats; out: M complex values of out_type. */
mr_status mr_gemm_forward(mr_gemm_plan *p, const mr_grid *g, mr_gemm_precision prec, const float *x, void *out,
                          mr_gemm_type out_type);

/* Device time of the last call in milliseconds (CUDA events around its kernels and GEMMs; for the
 * host wrappers without the host<->device copies; the first call on a grid includes its tables). */
double mr_gemm_last_ms(const mr_gemm_plan *p);

/* Planes for part `part` of `parts` GPUs sharing one adjoint: balanced, and for real weights closed
 * under the mirror iz -> 2 center_z - iz, so each part keeps the Hermitian saving. planes must hold
 * g->n[2] entries; *nplanes receives the count (may be 0 when parts > planes). */
mr_status mr_gemm_plane_split(const mr_grid *g, int real_weights, int parts, int part, int64_t *planes,
                              int64_t *nplanes);

#ifdef __cplusplus
}
#endif
#endif
