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
/* The implementation data of op when it was made by mr_linop_create with ops->forward == forward, else
 * NULL: a checked downcast for constructors that offer functions on their own operators (e.g. the
 * wavelet's shift, solver/wavelet.h). Borrowed for the operator's lifetime. */
void *mr_linop_data(const mr_linop *op, mr_linop_fn forward);

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

/* A model of an operator's normal on its domain's grid by matrices that the DFT diagonalises, for
 * preconditioners (solver/cg.h):
 *
 *   A^H A ~ a C + g G + s I,
 *
 * C the circulant approximation of the Toeplitz normal `tp` (solver/toeplitz.h; needed for a > 0, and for
 * every solve: its transforms), G the periodic negative Laplacian. The constructors set it: the NUDFT and
 * NUFFT operators with a Toeplitz normal {tp, a = 1} (per coil), the sensitivity maps {s = the mean over the
 * voxels of sum_c |S_c|^2} when that sum is at least MR_SENS_MODEL_MIN times its mean everywhere (maps that
 * vanish outside the object, as ESPIRiT's, have none: there the data term is 0 and a C is far from it, which
 * measured made the preconditioned CG stall, 21.4 against 40.6 dB on the README's 8-coil scan), the finite
 * differences {g = 1}, identity(s) {s^2}; chain(A, B) = B A keeps B's
 * model scaled by A's s when A's model is a multiple of I (so maps then the NUDFT give {tp, a = mean
 * sum_c |S_c|^2}), or A's scaled by B's; other compositions (sum, normal_of) and operators have none
 * (known = 0). */
#define MR_SENS_MODEL_MIN 0.25
typedef struct {
    int known;
    mr_linop *tp; /* borrowed: lives as long as the operator that carries the model */
    double a, g, s;
} mr_linop_symbol;
void mr_linop_set_symbol(mr_linop *op, const mr_linop_symbol *sym);
mr_linop_symbol mr_linop_symbol_of(const mr_linop *op);
/* z = (a C + g G + s I)^-1 r on one image of tp's grid, for a model with tp (r, z: tp's backend memory; z == r
 * allowed); MR_EINVAL when sym has no tp or a, g, s are not >= 0 with a positive sum. */
mr_status mr_linop_symbol_solve(const mr_linop_symbol *sym, const float *r, float *z);

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
 * borrowed for the call. E.g. recon/cluster/mpi_recon.h computes them split across MPI ranks. */
typedef mr_status (*mr_nudft_sums_fn)(void *ctx, const mr_grid *g, const float *traj, const float *a,
                                      int real_weights, int64_t m, float *out);
typedef struct {
    mr_nudft_sums_fn fn; /* NULL (default): the operator's own kernels (CPU or GPU) */
    void *ctx;           /* borrowed: must outlive the operator */
    const char *name;    /* what computes them, for reports (mr_nudft_info.engine_name); NULL: "sums
                            provider". Borrowed like ctx */
} mr_nudft_sums;
/* Who computes the exact sums Q, F^H d (and the forward) of the NUDFT operator on a GPU backend
 * (docs/GPU.md, "The engine of the exact sums"); the host always uses the CPU kernels (solver/nudft.h).
 * The rest of the pipeline keeps float32 whatever the engine: Q and F^H d are stored as float,
 * the Toeplitz FFTs and CG run in float32 (with double dot products). */
typedef enum {
    MR_PRECISION_AUTO = 0, /* host: the CPU kernels; GPU: the measured default (tf32x3 on compute
                              capability 9.0, else fp16x3, where it pays: gpu/sums.h) */
    MR_PRECISION_SFU = 1,  /* GPU: the CUDA-core kernels of the ladder (fixed-point phase, hardware sincos;
                              rung by grid size: multi-voxel on large grids, the SFU rung on small ones) */
    MR_PRECISION_TF32X3 = 2, /* GPU: matrix products on the tensor cores in split TF32 (gpu/gemm.h) */
    MR_PRECISION_FP64 = 3,   /* GPU: matrix products in float64 (DGEMM): exact sums in double, rounded to
                                float once at the end */
    MR_PRECISION_FP16X3 = 4  /* GPU: matrix products on the tensor cores in split FP16, the weights scaled by a
                                power of two (gpu/gemm.h): the accuracy of tf32x3 at twice the work per
                                tensor-core instruction */
} mr_precision;

/* "auto", "sfu", "tf32x3", "fp64", "fp16x3"; parse returns MR_EINVAL naming the text. */
const char *mr_precision_name(mr_precision p);
mr_status mr_precision_parse(const char *text, mr_precision *p);

/* What Q is a function of (the cache key): Q(r) = sum_m qw_m e^{+i2pi k_m.r} on mr_grid_q(matrix), and
 * the bits also depend on who summed. */
typedef struct {
    int64_t matrix[3];
    int64_t m;
    const float *traj; /* [M][3], borrowed for the call */
    const float *qw;   /* [M] real weights w Phi^2 / N^2 (they carry the weights, the basis and N); borrowed */
    mr_basis basis;
    char engine[96];   /* what computed Q, precisely enough that equal texts give equal bits: "cpu avx2",
                          "gpu sfu T256 C512 U2 V32rot m3", "gpu tf32x3 mma v0", "gpu fp64 dgemm" */
} mr_q_key;

/* A store for Q across runs (io/q_cache.h implements it on disk). The operator calls load before it
 * computes Q and, after a miss, save with what it computed: between the two the store may hold a lock
 * (so that another process waiting for the same Q takes it from the store instead of computing it too),
 * so every miss is followed by exactly one save, possibly from another thread (the GPU operator saves
 * from a background thread); a store used by several threads makes load and save thread-safe. */
typedef struct mr_q_store mr_q_store;
struct mr_q_store {
    /* 1 and q ([mr_grid_size(mr_grid_q(matrix))][2] host floats) filled on a hit; 0 on a miss (a broken
     * entry is a miss, with a warning). */
    int (*load)(mr_q_store *s, const mr_q_key *key, float *q);
    /* After a miss: q is a malloc'd host copy of Q, now owned by the store (it may be written in the
     * background); NULL when Q could not be computed (nothing is stored, the lock is released). Never
     * fails the operator: problems are warnings. */
    void (*save)(mr_q_store *s, const mr_q_key *key, float *q);
};

typedef struct {
    mr_basis basis;  /* default MR_BASIS_BOX */
    int fast_normal; /* 1 (default): Q and the Toeplitz normal; 0: normal = adjoint(forward) */
    int exact_trig;  /* GPU: accurate sincosf instead of the SFU (accuracy comparison); with AUTO precision
                        it selects the SFU engine's constant-memory rung; ignored by the GEMM engines,
                        whose tables are exact anyway. Default 0 */
    mr_precision precision; /* default MR_PRECISION_AUTO; a GPU precision on a host backend is MR_EINVAL */
    mr_q_store *q_store;    /* NULL (default): Q is always computed. Borrowed until the operator is freed:
                               on a GPU a computed Q is copied back and saved from a background thread
                               that mr_linop_free joins */
    const mr_progress *progress; /* stages "Q" (create) and "F^H d" (adjoint) are reported here (CPU: per
                                    row; GPU: per stage); NULL (default): none. Borrowed: must outlive
                                    the operator */
    mr_nudft_sums sums; /* Q and F^H d from this provider (on a GPU backend through host copies);
                           default none */
    int64_t memory_limit; /* GPU: bytes the exact sums may take per GPU (tables of a chunk of samples, work space:
                             gpu/sums.h mr_gpu_sums_layout); 0 (default): 60 % of the free memory at create, at
                             most 30 GB (MR_SUMS_DEFAULT_CAP) */
} mr_nudft_opts;

void mr_nudft_opts_default(mr_nudft_opts *o);

typedef struct {
    double q_seconds;    /* obtaining Q: computed, or read from the store (0 without fast_normal) */
    double plan_seconds; /* everything else in create: copies, uploads, Phi, the kernel spectrum, FFT plans */
    double fft_plan_seconds; /* of which: FFT planning (FFTW or cuFFT) */
    double engine_seconds;   /* of which: making the engine of the sums (GPU: loading cuBLAS, plans, peer access) */
    int64_t q_pairs;     /* (voxel, sample) pairs of the Q sum */
    mr_precision engine; /* the engine that ran (AUTO resolved; AUTO itself on the host) */
    char engine_name[128]; /* "cpu avx2 kernels", "gpu tf32x3 (tensor-core GEMM, split TF32)", ... */
    const char *q_source;  /* "computed", "computed, stored" (a store missed), "store" (a hit); "" without Q */
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

/* ---- the NUFFT: the same operator E as mr_linop_nudft_create, its sums approximated -------------------
 * (solver/nufft.h on the host, gpu/nufft.h on a GPU backend; docs/NUFFT.md). Same contract: coil images
 * {Nx,Ny,Nz,C} -> k-space {M,1,1,C}, the same weights, basis and scaling, the Toeplitz normal with one Q for
 * every coil (Q = type 1 of w Phi^2 / N^2 onto mr_grid_q, then mr_linop_toeplitz_create), so CG, SENSE and
 * the priors are unchanged. Forward = type 2, adjoint = type 1, each relative error about tol (the kernel's
 * bound: mr_nufft_op_info). */
typedef struct {
    mr_basis basis;     /* default MR_BASIS_BOX */
    int fast_normal;    /* 1 (default): Q and the Toeplitz normal; 0: normal = adjoint(forward) */
    double tol;         /* requested relative error of F, F^H and Q: 1e-12..1e-1, default 1e-6 (float32 down to
                           1e-6, float64 below, whatever the vectors: they stay float32) */
    double upsample;    /* 0 (default): 2 or 1.25 by the cost model; else the factor (1.25..3) */
    mr_q_store *q_store;         /* as mr_nudft_opts (the key's engine names the NUFFT and its parameters) */
    const mr_progress *progress; /* stages "Q" and "F^H d", as mr_nudft_opts */
} mr_nufft_op_opts;

void mr_nufft_op_opts_default(mr_nufft_op_opts *o);

/* What the NUFFT operator chose: the transforms of the image grid (F, F^H) and of the Q grid. */
typedef struct {
    int width[2];          /* [0] image grid, [1] Q grid (0 without fast_normal) */
    double upsample[2];
    int f64[2];            /* float64 arithmetic */
    int64_t fine[2][3];
    double bound[2];       /* the kernel's error estimate (relative), solver/nufft_kernel.h */
    int64_t host_bytes;    /* the largest host working set of create (plans, Q, Toeplitz), estimated up front */
    int64_t device_bytes;  /* the same on the GPU (0 on the host) */
} mr_nufft_op_info;

/* info (may be NULL): the fields every encoding operator reports (engine AUTO, engine_name "cpu nufft ..."
 * or "gpu nufft ...", q_pairs = size(Q grid) x M as for the exact sums); ninfo (may be NULL): the above.
 * A GPU plan that cannot fit is refused before anything is computed (MR_ENOMEM with the bytes needed). */
mr_status mr_linop_nufft_create(mr_linop **out, mr_backend *be, const int64_t matrix[3], const float *traj, int64_t m,
                                const float *weights, int64_t ncoils, const mr_nufft_op_opts *opts, mr_nudft_info *info,
                                mr_nufft_op_info *ninfo);

/* Type-1 sums onto the Q grid (mr_grid_q(matrix)) of nk weight vectors, one plan for all (opts: tol and
 * upsample; NULL defaults): q[j] (the backend's memory, [size][2]) = sum_m a_j,m e^{+i2pi k_m.r}, with
 * a[j] a host array, real [M] when real[j], else complex [M][2]. The kernels of Toeplitz operators with
 * per-sample factors (the field model's, solver/linop_field.h). */
mr_status mr_nufft_q_sums(mr_backend *be, const int64_t matrix[3], const float *traj, int64_t m,
                          const mr_nufft_op_opts *opts, int nk, const float *const *a, const int *real, float *const *q);

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
