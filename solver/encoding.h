/* The encoding operator of a reconstruction, chosen: the exact NUDFT (mr_linop_nudft_create: exact
 * sums) or the NUFFT (mr_linop_nufft_create: sums to a tolerance), both with one contract (linop.h:
 * coil images {Nx,Ny,Nz,C} -> k-space {M,1,1,C}, weights, basis, the Toeplitz normal with one Q), so that
 * CG, SENSE and the priors do not know which runs. `auto` takes the faster of the two that meet the
 * accuracy and fit the memory, by a cost model (voxels, samples, coils, device, memory); the result says
 * which model ran, why, and its error: the kernel's bound, or (check) the error measured at plan time on
 * sample voxels and samples against float64 direct sums. docs/NUFFT.md "Choosing the model".
 *
 * The recon layer's vocabulary (--model, --tol, --check) is the table here: mr_model_name /
 * mr_model_parse; MR_MODEL_COUNT entries in enum order. */
#ifndef MR_ENCODING_H
#define MR_ENCODING_H

#include <stddef.h>
#include <stdint.h>

#include "../base/status.h"
#include "backend.h"
#include "linop.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    MR_MODEL_AUTO = 0,  /* the faster model that meets the tolerance and fits (the default) */
    MR_MODEL_EXACT = 1, /* the exact sums (reference; the field-map model needs them) */
    MR_MODEL_NUFFT = 2  /* the non-uniform FFT to the tolerance */
} mr_model;
#define MR_MODEL_COUNT 3

/* "auto", "exact", "nufft"; parse returns MR_EINVAL "'TEXT' is not auto, exact or nufft". */
const char *mr_model_name(mr_model m);
mr_status mr_model_parse(const char *text, mr_model *m);
/* One line per model for --help: "exact sums (reference)", ... */
const char *mr_model_help(mr_model m);

#define MR_ENCODING_TOL_DEFAULT 1e-6

typedef struct {
    mr_model model;       /* default MR_MODEL_AUTO */
    double tol;           /* the NUFFT's tolerance, MR_NUFFT_TOL_MIN..MAX; default MR_ENCODING_TOL_DEFAULT */
    double upsample;      /* the NUFFT's factor: 0 (default) automatic, else 1.25..3 */
    int check;            /* 1: measure the chosen operator's error at plan time (F^H and F on sample voxels and
                             samples against float64 direct sums); default 0 */
    int64_t memory_limit; /* bytes the operator may take on its device (the GPU's, or the host's): 0 (default)
                             what is free there now; a model whose estimate exceeds it is not taken (auto) or
                             refused (MR_ENOMEM naming both numbers) */
    mr_nudft_opts op;     /* basis, fast_normal, q_store, progress for both models; precision, exact_trig and sums
                             for the exact one (a GPU precision or a sums provider means the exact model: auto
                             then keeps it) */
} mr_encoding_opts;

void mr_encoding_opts_default(mr_encoding_opts *o);

typedef struct {
    mr_model model;          /* the model that runs: MR_MODEL_EXACT or MR_MODEL_NUFFT */
    char why[256];           /* the reason in words ("auto: nufft 0.05 s vs exact 1.2 s estimated", "requested") */
    double bound;            /* the model's error estimate (relative): the exact sums' float32 engine, or the NUFFT
                                kernel's bound (the larger of its image and Q transforms) */
    double error_adjoint;    /* with check: measured relative L2 error of F^H y on check_voxels voxels; else -1 */
    double error_forward;    /* with check: the same for F x on check_samples samples; else -1 */
    int64_t check_voxels, check_samples;
    double check_seconds;    /* the check's time */
    double est_seconds[MR_MODEL_COUNT]; /* the cost model's estimates (Q + C F^H d), [MR_MODEL_EXACT] and
                                           [MR_MODEL_NUFFT]; [MR_MODEL_AUTO] unused */
    int64_t est_bytes[MR_MODEL_COUNT];  /* the working-set estimates on the operator's device, same indices */
    int64_t memory_limit;    /* the limit applied (bytes) */
    int64_t sums_cap;        /* GPU, exact model: the memory handed to its sums (mr_nudft_opts.memory_limit) */
    mr_nudft_info op;        /* the operator's own report (timings, engine, Q source) */
    mr_nufft_op_info nufft;  /* the NUFFT's parameters when it runs */
    char description[384];   /* one line for the report: model, engine, tolerance, error, why */
} mr_encoding_info;

/* The encoding operator of the scan (arguments as mr_linop_nudft_create). info may be NULL. MR_ENOMEM
 * naming the bytes needed and available when the requested model cannot fit (auto: when neither can). */
mr_status mr_encoding_create(mr_linop **out, mr_backend *be, const int64_t matrix[3], const float *traj, int64_t m,
                             const float *weights, int64_t ncoils, const mr_encoding_opts *o, mr_encoding_info *info);

/* The cost model alone (what create decides, without making anything): fills info's model, why,
 * est_seconds, est_bytes, bound and memory_limit. MR_ENOMEM as create. */
mr_status mr_encoding_choose(const mr_backend *be, const int64_t matrix[3], int64_t m, int64_t ncoils,
                             const mr_encoding_opts *o, mr_encoding_info *info);

#ifdef __cplusplus
}
#endif
#endif
