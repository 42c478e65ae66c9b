/* Off-resonance-corrected encoding operators (docs/RECON.md "Field maps", docs/OPERATOR.md).
 *
 * With the readout time t_m of every sample (seconds) and a field map omega_n (Hz) at the voxel
 * centres, the encoding of coil images {Nx,Ny,Nz,C} into k-space {M,1,1,C} becomes, per coil,
 *
 *   (E x)_m = s_m sum_n x_n e^{-i 2 pi (k_m . r_n + omega_n t_m)},   s_m = sqrt(w_m) Phi(k_m) / N,
 *
 * the contract of mr_linop_nudft_create (solver/linop.h) with the field term: it chains with
 * mr_linop_sens_create for SENSE and enters mr_linop_normal_system and the problem objects like any E.
 *
 * Two models:
 *  - exact: the sums of solver/nudft.h mr_nudft_field_* (CPU) or gpu/field.h (GPU, CUDA cores), one
 *    phase per (voxel, sample) pair; no Toeplitz form exists, so normal = adjoint after forward.
 *    The reference.
 *  - segmented (fast): a rank-L factorisation of the field term over the rectangle
 *    [omega_min, omega_max] x [t_min, t_max] the scan spans,
 *
 *      e^{-i 2 pi omega t} ~ sum_l B_l(t) C_l(omega),   E ~ sum_l diag(B_l) F diag(C_l),
 *
 *    F the field-free Fourier operator of a tier (below). Frequency segmentation (default):
 *    B_l(t) = e^{-i 2 pi w_l (t - t_c)} at L equally spaced frequencies w_l, C_l least-squares
 *    interpolators over the times; time segmentation: C_l(omega) = e^{-i 2 pi omega tau_l} at L equally
 *    spaced times, B_l least-squares interpolators over the field (Sutton, Noll and Fessler 2003). Both
 *    fits are least squares on Chebyshev points of the other variable, lightly regularised. L is the
 *    smallest with max |e^{-i2pi omega t} - sum_l B_l C_l| <= tol over a dense grid of the rectangle
 *    (the bound: the relative error of every (voxel, sample) term, hence of E in any norm of its
 *    terms). The normal is Toeplitz per segment pair (Fessler et al. 2005):
 *
 *      E^H E = sum_{l,l'} diag(C_l)^H T_{l l'} diag(C_l'),   T_{l l'} the Toeplitz operator of
 *      Q_{l l'}(r) = sum_m w_m Phi_m^2 / N^2 conj(B_l(t_m)) B_l'(t_m) e^{+i 2 pi k_m . r},
 *
 *    applied with 2L FFTs of the 2N grid and L^2 spectrum products per coil. With frequency
 *    segmentation conj(B_l) B_l' depends on l' - l only: L kernels to sum (and their conjugate
 *    mirrors), against L(L+1)/2 for time segmentation.
 *
 * The tier: the fast model takes its field-free F and its kernel sums from a factory (mr_field_tier),
 * so that another implementation of the Fourier operator (the NUFFT of issue 21) drops in; the default
 * is the exact NUDFT (mr_linop_nudft_create without its own normal, Q sums of solver/nudft.h or
 * gpu/sums.h).
 *
 * Ownership: as solver/linop.h. traj, time, fieldmap and weights are host arrays, copied. */
#ifndef MR_LINOP_FIELD_H
#define MR_LINOP_FIELD_H

#include <stdint.h>

#include "../base/progress.h"
#include "../base/status.h"
#include "linop.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the Fourier tier ------------------------------------------------------------------------- */

typedef struct mr_field_tier mr_field_tier;
struct mr_field_tier {
    const char *name; /* "exact", "nufft", ...: reported */
    /* F: coil images {Nx,Ny,Nz,C} -> k-space {M,1,1,C}, (F x)_c,m = s_m sum_n x_c,n e^{-i2pi k_m.r_n} with
     * s = sqrt(w) Phi / N (basis `basis`), the contract of mr_linop_nudft_create; its normal is never
     * used. weights may be NULL (all ones). engine (size bytes) receives what computes it. */
    mr_status (*create)(const mr_field_tier *t, mr_backend *be, const int64_t matrix[3], const float *traj,
                        int64_t m, const float *weights, int64_t ncoils, mr_basis basis, mr_linop **out,
                        char *engine, size_t size);
    /* nk Toeplitz kernels: q[j] (the backend's memory, [mr_grid_size(mr_grid_q(matrix))][2] each, allocated
     * by the caller) = sum_m w_m Phi_m^2 / N^2 b[j][m] e^{+i2pi k_m.r} on mr_grid_q(matrix), for complex
     * per-sample factors b [nk][M][2] (host). */
    mr_status (*kernels)(const mr_field_tier *t, mr_backend *be, const int64_t matrix[3], const float *traj,
                         int64_t m, const float *weights, mr_basis basis, const float *b, int nk, float *const *q);
    void *ctx; /* the implementation's; borrowed (must outlive the operators made with the tier) */
};

/* The exact NUDFT tier: F = mr_linop_nudft_create with nudft's precision, progress and sums provider
 * (fast_normal off, basis from the call); kernels by mr_nudft_adjoint (host) or the GPU engine
 * (gpu/sums.h; nudft's precision). nudft (may be NULL: defaults) is copied into *ctx, which t->ctx
 * points to: ctx must outlive t. */
typedef struct {
    mr_nudft_opts nudft;
} mr_field_tier_exact_ctx;
void mr_field_tier_exact(mr_field_tier *t, mr_field_tier_exact_ctx *ctx, const mr_nudft_opts *nudft);

/* The NUFFT tier: F = mr_linop_nufft_create with nufft's tolerance and upsampling (fast_normal off, basis
 * from the call); the kernels by type-1 NUFFTs onto the Q grid, one plan for all (mr_nufft_q_sums), each
 * to about the tolerance. nufft (may be NULL: defaults) is copied into *ctx, which must outlive t. */
typedef struct {
    mr_nufft_op_opts nufft;
} mr_field_tier_nufft_ctx;
void mr_field_tier_nufft(mr_field_tier *t, mr_field_tier_nufft_ctx *ctx, const mr_nufft_op_opts *nufft);

/* ---- options and report ------------------------------------------------------------------------ */

typedef enum {
    MR_FIELD_MODEL_EXACT = 0,     /* the exact sums, normal = adjoint after forward */
    MR_FIELD_MODEL_FREQUENCY = 1, /* frequency segmentation + Toeplitz normal (the default) */
    MR_FIELD_MODEL_TIME = 2       /* time segmentation + Toeplitz normal */
} mr_field_model;

/* "exact", "frequency", "time"; parse returns MR_EINVAL naming the text. */
const char *mr_field_model_name(mr_field_model m);
mr_status mr_field_model_parse(const char *text, mr_field_model *m);

#define MR_FIELD_MAX_SEGMENTS 64

typedef struct {
    mr_field_model model; /* default MR_FIELD_MODEL_FREQUENCY */
    double tol;           /* segmented: the bound to meet, 1e-6..0.5 (default 1e-3) */
    int segments;         /* segmented: 0 (default) from tol; 1..MR_FIELD_MAX_SEGMENTS forces L */
    int fast_normal;      /* segmented: 1 (default) Toeplitz normal; 0: adjoint after forward */
    int check;            /* 1: measure the model error against the exact model at create (one exact forward
                             of a random image; default 0) */
    mr_basis basis;       /* default MR_BASIS_BOX, as mr_nudft_opts */
    const mr_field_tier *tier;   /* segmented: NULL (default) = the exact NUDFT tier with `nudft` */
    mr_nudft_opts nudft;         /* the default tier's options (precision, progress, sums provider); its
                                    basis and fast_normal are ignored */
    const mr_progress *progress; /* stages "field segments", "field kernels", "field check"; NULL: none */
} mr_field_opts;

void mr_field_opts_default(mr_field_opts *o);

typedef struct {
    mr_field_model model;
    int segments;                /* L (0 for the exact model) */
    double omega_min, omega_max; /* the field map's range, Hz */
    double t_min, t_max;         /* the readout times' range, s */
    double bound_max;            /* max |e^{-i2pi omega t} - sum_l B_l C_l| over the rectangle (0 for exact) */
    double bound_rms;            /* its root mean square over the rectangle */
    double measured;             /* with check: ||E x - E_exact x|| / ||E_exact x|| for a random image x (one
                                    coil); -1 not measured */
    int64_t kernels;             /* Toeplitz kernels summed (0: none) */
    char tier[32];               /* the tier's name ("" for exact) */
    char engine[128];            /* what computes the sums */
    double fit_seconds;          /* choosing L and the interpolators */
    double kernel_seconds;       /* summing the Toeplitz kernels and their spectra */
    double setup_seconds;        /* all of create */
    double check_seconds;        /* the measurement (included in setup_seconds) */
} mr_field_info;

/* ---- the operators ------------------------------------------------------------------------------ */

/* The exact model: E as above (basis as given), normal = adjoint after forward. time [M] and fieldmap
 * [Nz][Ny][Nx] are required (MR_EINVAL naming what is missing), finite. */
mr_status mr_linop_field_exact_create(mr_linop **out, mr_backend *be, const int64_t matrix[3], const float *traj,
                                      const float *time, const float *fieldmap, int64_t m, const float *weights,
                                      int64_t ncoils, mr_basis basis);

/* E with the model of opts (exact or segmented); info (may be NULL) receives the report. */
mr_status mr_linop_field_create(mr_linop **out, mr_backend *be, const int64_t matrix[3], const float *traj,
                                const float *time, const float *fieldmap, int64_t m, const float *weights,
                                int64_t ncoils, const mr_field_opts *opts, mr_field_info *info);

/* The segments the model needs for the bound tol over the rectangle (no operator made): *segments and
 * the achieved bounds (any may be NULL). For planning and the tests; the same rule as create. */
mr_status mr_field_segments_for(mr_field_model model, double omega_min, double omega_max, double t_min, double t_max,
                                double tol, int *segments, double *bound_max, double *bound_rms);

#ifdef __cplusplus
}
#endif
#endif
