/* The encoding operator F of a non-Cartesian scan: an object with forward, adjoint and a fast
 * normal, backed by the CPU or the GPU (chosen at create time).
 *
 *   F:      image x [Nz][Ny][Nx][2]  ->  k-space y [M][2],  y_m = Phi(k_m) sum_n x_n e^{-i2pi k_m.r_n} / N
 *   F^H W:  y -> x,  x_n = sum_m w_m conj(Phi(k_m)) y_m e^{+i2pi k_m.r_n} / N
 *   normal: x -> F^H W F x, by Toeplitz embedding: zero-pad to the 2N grid, multiply by FFT(Q),
 *           crop, where Q(r) = sum_m w_m |Phi(k_m)|^2 e^{+i2pi k_m.r} / N^2 on the Q grid.
 * N = Nx*Ny*Nz, w = weights (1 when NULL), Phi = basis transform (box: prod sinc(k_a/N_a); dirac: 1).
 *
 * create() does the expensive work once (copies the trajectory, computes Q on the chosen backend,
 * FFTW plans); the apply functions only compute; destroy() frees everything. */
#ifndef MR_OP_H
#define MR_OP_H

#include <stdint.h>

#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { MR_BASIS_BOX = 0, MR_BASIS_DIRAC = 1 } mr_basis;
typedef enum { MR_DEVICE_AUTO = 0, MR_DEVICE_CPU = 1, MR_DEVICE_GPU = 2 } mr_device_kind;

typedef struct {
    mr_basis basis;        /* default MR_BASIS_BOX */
    mr_device_kind device; /* default MR_DEVICE_AUTO */
    int gpu_index;         /* with MR_DEVICE_GPU/AUTO: which device, -1 = first usable (default) */
    int threads;           /* CPU threads (OpenMP and FFTW), <= 0: all cores (default 0) */
    int fast_normal;       /* 1 (default): compute Q and apply the normal by Toeplitz embedding;
                              0: normal = adjoint(forward(x)) */
    int exact_trig;        /* GPU: 1 = accurate sincosf instead of the SFU (accuracy comparison) */
} mr_op_opts;

void mr_op_opts_default(mr_op_opts *o);

/* Parse "auto", "cpu", "gpu", "gpu:N" into o->device / o->gpu_index. */
mr_status mr_op_parse_device(const char *text, mr_op_opts *o);

typedef struct mr_op mr_op;

typedef struct {
    double q_seconds;    /* time to compute Q (0 when fast_normal == 0) */
    double plan_seconds; /* FFTW planning and other setup */
    int64_t q_pairs;     /* (voxel, sample) pairs evaluated for Q */
    char backend[128];   /* "cpu (2 threads)" or "gpu:0 NVIDIA H200" */
} mr_op_info;

/* matrix {Nx, Ny, Nz}; traj [M][3] and weights [M] (NULL: all ones) are copied.
 * *out is owned by the caller (mr_op_destroy). */
mr_status mr_op_create(mr_op **out, const int64_t matrix[3], const float *traj, int64_t m, const float *weights,
                       const mr_op_opts *opts);
void mr_op_destroy(mr_op *op);

mr_status mr_op_forward(mr_op *op, const float *x, float *y); /* y = F x */
mr_status mr_op_adjoint(mr_op *op, const float *y, float *x); /* x = F^H W y */
mr_status mr_op_normal(mr_op *op, const float *x, float *y);  /* y = F^H W F x */

void mr_op_get_info(const mr_op *op, mr_op_info *info);
int64_t mr_op_image_size(const mr_op *op); /* Nx*Ny*Nz */
int64_t mr_op_nsamples(const mr_op *op);

#ifdef __cplusplus
}
#endif
#endif
