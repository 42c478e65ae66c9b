/* Linear operators as objects that compose (after BART's linop_s, written our way).
 *
 * An operator A maps a domain vector x (dom_size complex elements) to a codomain vector y (cod_size
 * complex elements); both shapes are kept as four extents {n0, n1, n2, n3} (n0 fastest; images are
 * {Nx, Ny, Nz, 1}, coil images {Nx, Ny, Nz, C}, k-space {M, 1, 1, C}). Vectors are interleaved complex
 * float32 in the memory of the operator's backend (solver/backend.h): host memory or one GPU's.
 *
 *   forward:  y = A x
 *   adjoint:  x = A^H y
 *   normal:   y = A^H A x   (a fast path where the operator has one, else adjoint after forward)
 *
 * Compositions (all operators of one composition share one backend):
 *   chain(A, B) = B A          normal = A^H normal(B) A  (so a fast normal inside B is used)
 *   sum(A, B)   = A + B        normal = (A + B)^H (A + B) by adjoint after forward
 *   identity(s) = s I          normal = s^2 I            (s real)
 *   normal_of(A) = A^H A       forward = adjoint = normal(A): the Hermitian system CG solves
 * and the concrete operators below: sensitivity maps (image -> coil images), finite differences
 * (the gradient regulariser), the exact NUDFT (coil images -> coil k-space, exact sums, Toeplitz
 * normal) and the Toeplitz normal itself (one Q for every coil).
 *
 * Ownership: reference counted. Every constructor returns one reference owned by the caller
 * (mr_linop_free drops it). A composition takes its own references to its parts: the caller keeps
 * (and must free) its references, and may use a part in several compositions. An operator holds a
 * reference to its backend. Apply functions: x and y are borrowed for the call, must not overlap
 * and must have the operator's sizes in its backend's memory. An operator keeps work buffers: one
 * thread at a time. */
#ifndef MR_LINOP_H
#define MR_LINOP_H

#include <stdint.h>

#include "../base/grid.h"
#include "../base/progress.h"
#include "../base/status.h"
#include "backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mr_linop mr_linop;

/* An implementation: its data and functions (out = Op in). normal may be NULL (adjoint after
 * forward is used); destroy (may be NULL) frees data. */
typedef mr_status (*mr_linop_fn)(void *data, const float *in, float *out);
typedef struct {
    mr_linop_fn forward;
    mr_linop_fn adjoint;
    mr_linop_fn normal;
    void (*destroy)(void *data);
} mr_linop_ops;

/* A new operator from an implementation (for constructors): dom and cod extents (each >= 1), data
 * owned by the operator from now on -- also on failure, when ops->destroy(data) is called. */
mr_status mr_linop_create(mr_linop **out, mr_backend *be, const int64_t dom[4], const int64_t cod[4],
                          const mr_linop_ops *ops, void *data);

mr_linop *mr_linop_ref(mr_linop *op);
void mr_linop_free(mr_linop *op); /* NULL is fine */

mr_status mr_linop_forward(mr_linop *op, const float *x, float *y);
mr_status mr_linop_adjoint(mr_linop *op, const float *y, float *x);
mr_status mr_linop_normal(mr_linop *op, const float *x, float *y);

int64_t mr_linop_dom_size(const mr_linop *op);
int64_t mr_linop_cod_size(const mr_linop *op);
void mr_linop_dom(const mr_linop *op, int64_t dims[4]);
void mr_linop_cod(const mr_linop *op, int64_t dims[4]);
mr_backend *mr_linop_backend(const mr_linop *op); /* borrowed */

/* ---- compositions ----------------------------------------------------------------------------- */
/* B A: cod_size(A) == dom_size(B). */
mr_status mr_linop_chain(mr_linop **out, mr_linop *a, mr_linop *b);
/* A + B: equal domain and codomain sizes. */
mr_status mr_linop_sum(mr_linop **out, mr_linop *a, mr_linop *b);
/* s I on a vector of the given extents (s finite). */
mr_status mr_linop_identity(mr_linop **out, mr_backend *be, const int64_t dims[4], double s);
/* A^H A as an operator (Hermitian: forward = adjoint = normal(A)). */
mr_status mr_linop_normal_of(mr_linop **out, mr_linop *a);

/* The regularised normal system CG solves: E^H E + lambda R^H R (R given) or E^H E + lambda I (r NULL);
 * just E^H E when lambda = 0. r must map E's domain (e.g. mr_linop_fd_create). */
mr_status mr_linop_normal_system(mr_linop **out, mr_linop *e, mr_linop *r, double lambda);

/* ---- sensitivity maps: image {Nx,Ny,Nz,1} -> coil images {Nx,Ny,Nz,C} --------------------------
 * forward y_c = S_c x (voxel by voxel), adjoint x = sum_c conj(S_c) y_c, normal sum_c |S_c|^2 x.
 * maps: host [C][Nz][Ny][Nx][2], copied (to the device on a GPU backend). */
mr_status mr_linop_sens_create(mr_linop **out, mr_backend *be, const int64_t matrix[3], int64_t ncoils,
                               const float *maps);

/* ---- finite differences: image {Nx,Ny,Nz,1} -> {Nx,Ny,Nz,D} ------------------------------------
 * Forward differences along each of the D axes with N_a > 1 (x, y, z order), 0 across the last voxel
 * of a line (Neumann); normal = R^H R, the regulariser of solver/regularizer.h. */
mr_status mr_linop_fd_create(mr_linop **out, mr_backend *be, const int64_t matrix[3]);

/* ---- the exact non-uniform DFT ------------------------------------------------------------------ */
typedef enum { MR_BASIS_BOX = 0, MR_BASIS_DIRAC = 1 } mr_basis;

/* A provider of the operator's adjoint sums (Q and each coil's F^H d), in place of its own kernels:
 *   out[v] = sum_m a_m e^{+i2pi k_m.r_v}   over the voxels v of g (base/grid.h)
 * the sum of mr_nudft_adjoint (solver/nudft.h): a real [m] (Q, on mr_grid_q) or complex [m][2]
 * (F^H d of one coil, on mr_grid_image); traj [m][3] cycles/FOV; out [size(g)][2]. Host arrays,
 * borrowed for the call. E.g. recon/mpi_recon.h computes them split across MPI ranks. */
typedef mr_status (*mr_nudft_sums_fn)(void *ctx, const mr_grid *g, const float *traj, const float *a,
                                      int real_weights, int64_t m, float *out);
typedef struct {
    mr_nudft_sums_fn fn; /* NULL (default): the operator's own kernels (CPU or GPU) */
    void *ctx;           /* borrowed: must outlive the operator */
} mr_nudft_sums;

typedef struct {
    mr_basis basis;  /* default MR_BASIS_BOX */
    int fast_normal; /* 1 (default): Q and the Toeplitz normal; 0: normal = adjoint(forward) */
    int exact_trig;  /* GPU: accurate sincosf instead of the SFU (accuracy comparison); default 0 */
    const mr_progress *progress; /* stages "Q" (create) and "F^H d" (adjoint) are reported here (CPU: per
                                    row; GPU: per stage); NULL (default): none. Borrowed: must outlive
                                    the operator */
    mr_nudft_sums sums; /* Q and F^H d from this provider (on a GPU backend through host copies);
                           default none */
} mr_nudft_opts;

void mr_nudft_opts_default(mr_nudft_opts *o);

typedef struct {
    double q_seconds;    /* computing Q (0 without fast_normal) */
    double plan_seconds; /* everything else in create: copies, uploads, Phi, the kernel spectrum, FFT plans */
    double fft_plan_seconds; /* of which: FFT planning (FFTW or cuFFT) */
    int64_t q_pairs;     /* (voxel, sample) pairs of the Q sum */
} mr_nudft_info;

/* E: coil images {Nx,Ny,Nz,C} -> k-space {M,1,1,C}, the same operator for each of the C coils:
 *
 *   (E x)_c,m   = sqrt(w_m) Phi_m / N sum_n x_c,n e^{-i2pi k_m.r_n}
 *   (E^H y)_c,n = sum_m sqrt(w_m) Phi_m / N y_c,m e^{+i2pi k_m.r_n}
 *   E^H E       = per coil, the Toeplitz normal with Q(r) = sum_m w_m Phi_m^2 / N^2 e^{+i2pi k_m.r}
 *
 * N = Nx Ny Nz, w = weights (NULL: all ones, then E is the plain F of solver/op.h), Phi the basis
 * transform (box: prod sinc(k_a/N_a); dirac: 1). traj [M][3] and weights [M] are host arrays, copied.
 * create() does the expensive work once: Q (on the backend: CPU kernels or the GPU's), the kernel
 * spectrum and the FFT plans. info (may be NULL) receives the timings. */
mr_status mr_linop_nudft_create(mr_linop **out, mr_backend *be, const int64_t matrix[3], const float *traj, int64_t m,
                                const float *weights, int64_t ncoils, const mr_nudft_opts *opts, mr_nudft_info *info);

/* ---- the Toeplitz normal alone: {Nx,Ny,Nz,C} -> itself, y_c = sum_n' Q(r_n - r_n') x_c,n' per coil --
 * q [mr_grid_size(mr_grid_q(matrix))][2] in the backend's memory, borrowed for the call. Hermitian
 * when Q(-r) = conj Q(r) (true for every Q of the NUDFT). fft_plan_seconds (may be NULL) receives the
 * planning time. */
mr_status mr_linop_toeplitz_create(mr_linop **out, mr_backend *be, const int64_t matrix[3], const float *q,
                                   int64_t ncoils, double *fft_plan_seconds);

#ifdef __cplusplus
}
#endif
#endif
