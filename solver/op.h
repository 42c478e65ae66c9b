/* The encoding operator of a single-coil scan with host-memory arguments: a thin convenience wrapper
 * around a backend (solver/backend.h) and the NUDFT operator of solver/linop.h, for callers that
 * want one object (tests, benchmarks). The reconstruction pipeline builds its operators from
 * solver/linop.h directly.
 *
 *   E:      image x [Nz][Ny][Nx][2]  ->  k-space y [M][2],  y_m = sqrt(w_m) Phi(k_m) / N sum_n x_n e^{-i2pi k_m.r_n}
 *   E^H:    y -> x,  x_n = sum_m sqrt(w_m) Phi(k_m) y_m e^{+i2pi k_m.r_n} / N
 *   normal: x -> E^H E x = F^H W F x by Toeplitz embedding (zero-pad to the 2N grid, multiply by
 *           FFT(Q), crop), Q(r) = sum_m w_m Phi(k_m)^2 e^{+i2pi k_m.r} / N^2 on the Q grid.
 * N = Nx*Ny*Nz, w = weights (1 when NULL: then E = F, E^H = F^H), Phi = basis transform (box:
 * prod sinc(k_a/N_a); dirac: 1). E^H d with unit weights is the F^H d of the book.
 *
 * create() does the expensive work once (backend, Q on it, FFT plans); the apply functions only
 * compute (on a GPU backend they copy their arguments to the device and the result back); destroy()
 * frees everything. */
#ifndef MR_OP_H
#define MR_OP_H

#include <stdint.h>

#include "../base/status.h"
#include "backend.h"
#include "linop.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    mr_basis basis;        /* default MR_BASIS_BOX */
    mr_device_kind device; /* default MR_DEVICE_AUTO */
    int gpu_index;         /* with MR_DEVICE_GPU/AUTO: which device, -1 = first usable (default) */
    int threads;           /* CPU threads (OpenMP and FFTW), <= 0: all cores (default 0) */
    int fast_normal;       /* 1 (default): compute Q and apply the normal by Toeplitz embedding;
                              0: normal = adjoint(forward(x)) */
    int exact_trig;        /* GPU: 1 = accurate sincosf instead of the SFU (accuracy comparison) */
    mr_nudft_sums sums;    /* Q and F^H d from this provider (solver/linop.h); default none */
    mr_precision precision; /* engine of the exact sums (linop.h); default MR_PRECISION_AUTO */
    int gpu_all;            /* the rest of a device request (backend.h): gpu:all */
    int ngpus;              /* gpu:N,M,...: the GPUs sharing the exact sums (0: one device) */
    int gpus[MR_DEVICE_MAX_GPUS];
} mr_op_opts;

void mr_op_opts_default(mr_op_opts *o);

/* The device request of o, and o's device fields from a request. */
static inline mr_device_sel mr_op_opts_device(const mr_op_opts *o)
{
    mr_device_sel s = {.kind = o->device, .index = o->gpu_index, .all = o->gpu_all, .ngpus = o->ngpus};
    for (int i = 0; i < o->ngpus && i < MR_DEVICE_MAX_GPUS; i++)
        s.gpus[i] = o->gpus[i];
    return s;
}
static inline void mr_op_opts_set_device(mr_op_opts *o, mr_device_sel s)
{
    o->device = s.kind;
    o->gpu_index = s.index;
    o->gpu_all = s.all;
    o->ngpus = s.ngpus;
    for (int i = 0; i < s.ngpus && i < MR_DEVICE_MAX_GPUS; i++)
        o->gpus[i] = s.gpus[i];
}
/* The NUDFT options (solver/linop.h) of o. */
void mr_op_opts_nudft(const mr_op_opts *o, mr_nudft_opts *out);

typedef struct mr_op mr_op;

typedef struct {
    double q_seconds;    /* time to compute Q (0 when fast_normal == 0) */
    double plan_seconds; /* everything else in create (device initialisation not included) */
    double fft_plan_seconds; /* of which FFT planning */
    double init_seconds; /* making the device usable (CUDA context); 0 on the CPU */
    int64_t q_pairs;     /* (voxel, sample) pairs evaluated for Q */
    char backend[128];   /* "cpu (2 threads)" or "gpu:0 NVIDIA H200 (...)" */
} mr_op_info;

/* matrix {Nx, Ny, Nz}; traj [M][3] and weights [M] (NULL: all ones) are copied.
 * *out is owned by the caller (mr_op_destroy). */
mr_status mr_op_create(mr_op **out, const int64_t matrix[3], const float *traj, int64_t m, const float *weights,
                       const mr_op_opts *opts);
void mr_op_destroy(mr_op *op);

/* Host arrays; x [N][2], y [M][2]; input and output may be the same array. */
mr_status mr_op_forward(mr_op *op, const float *x, float *y); /* y = E x */
mr_status mr_op_adjoint(mr_op *op, const float *y, float *x); /* x = E^H y */
mr_status mr_op_normal(mr_op *op, const float *x, float *y);  /* y = E^H E x */

void mr_op_get_info(const mr_op *op, mr_op_info *info);
int64_t mr_op_image_size(const mr_op *op); /* Nx*Ny*Nz */
int64_t mr_op_nsamples(const mr_op *op);
/* The operator and its backend, borrowed (valid until mr_op_destroy). */
mr_linop *mr_op_linop(const mr_op *op);
mr_backend *mr_op_backend(const mr_op *op);

#ifdef __cplusplus
}
#endif
#endif
