/* The reconstruction report: everything `mrirecon recon` measured, gathered in one struct by
 * recon/pipeline/pipeline.c and written as report.json, report.md and metrics.csv (each atomically).
 *
 * Ownership: a mr_report is filled by the pipeline; the history arrays it points to are owned by
 * the pipeline and valid while the report is (the on_report callback of mr_recon_opts borrows it
 * for the duration of the call). */
#ifndef MR_REPORT_H
#define MR_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "../../base/status.h"
#include "../../io/geometry.h"
#include "../../io/json.h"
#include "../../solver/metrics.h"

#define MR_REPORT_MAX_METHODS 8
#define MR_REPORT_MAX_TERMS 8

/* The truths a scan may carry: /truth/image (voxel-averaged) and /truth/bandlimited. */
typedef enum { MR_TRUTH_IMAGE = 0, MR_TRUTH_BANDLIMITED = 1, MR_TRUTH_COUNT = 2 } mr_truth_kind;
const char *mr_truth_name(mr_truth_kind t); /* "image", "bandlimited" */

/* One prior term of an iterative method: lambda f(R x). */
typedef struct {
    const char *name;      /* "tv", "gradient", ... */
    const char *penalty;   /* "l2", "l1", "l1-l2" (solver/prox.h) */
    double lambda;
    double lambda_rel;     /* lambda / diag(E^H E) at the centre */
    char from[256];        /* how lambda was chosen (solver/autolambda.h) */
    const double *history; /* lambda f(R x_k) [iterations + 1], or NULL */
} mr_report_term;

typedef struct {
    char method[32];        /* "iterative", "cg", "gridding-kb", "gridding-bilinear" */
    double seconds;         /* the method's own time: iterative = operator setup (Q, plans) + F^H d + solve;
                               gridding = DCF + gridding setup and apply */
    int iterations;         /* solver iterations run; 0 for gridding */
    const char *stop;       /* the solver's stop reason; NULL for gridding */
    const char *solver;     /* the solver that ran ("cg", "fista", "admm", "pdhg"); NULL for gridding */
    const char *history_name; /* what history holds: "relative residual" (CG), "relative change" */
    double final_history;   /* history[iterations]; NAN for gridding */
    const double *history;  /* [iterations + 1]; NULL for gridding */
    const double *objective; /* [iterations + 1]: 1/2 ||E x_k - d||^2 + the terms; or NULL */
    const double *data_term; /* [iterations + 1]: 1/2 ||E x_k - d||^2; or NULL */
    int nterms;
    mr_report_term terms[MR_REPORT_MAX_TERMS];
    double lipschitz, step, rho; /* FISTA/PDHG's L and step, ADMM's final rho (NAN where not used) */
    int restarts, inner_iterations; /* FISTA's restarts, ADMM's CG iterations in all */
    int preconditioned;             /* ADMM: its x-updates' CG was preconditioned (solver/problem.h) */
    int64_t normal_apps;            /* applications of E^H E by the solver (its cost unit) */
    const double *psnr;      /* PSNR per iteration [iterations + 1] against psnr_truth; or NULL */
    mr_truth_kind psnr_truth;
    double t_solve;    /* the solver, without the PSNR monitor */
    double t_monitor;  /* time in the per-iteration PSNR monitor */
    double t_gridding; /* gridding: create + apply */
    int have_metrics[MR_TRUTH_COUNT];
    mr_metrics metrics[MR_TRUTH_COUNT];
} mr_report_method;

typedef struct mr_report {
    const char *input; /* the scan file as given */
    int64_t matrix[3];
    int64_t nsamples, ncoils;
    char traj_kind[64], phantom[64];
    double noise_sigma;          /* < 0 unknown */
    int64_t samples_outside;     /* samples outside the Nyquist box [-N/2, N/2] (warned) */
    int has_truth[MR_TRUTH_COUNT];

    /* the options as given (report.json "options"): written by write_options(options_ctx, obj); NULL: none */
    void (*write_options)(const void *ctx, mr_json_obj *obj);
    const void *options_ctx;

    /* settings used */
    const char *method, *basis, *device, *dcf;
    char reg[128];     /* the priors of --reg ("tv", "tv,wavelet:0.5") */
    const char *solver; /* --solver as asked ("auto", ...); each method's own: mr_report_method.solver */
    int iters, threads, kernel_width;
    double tol, lambda, oversample;
    char backend[128]; /* where CG ran (solver/backend.h), or "cpu" when only gridding ran */
    const char *precision; /* --precision as asked (solver/linop.h: auto, sfu, tf32x3, fp64) */
    char sums[128];        /* the engine that computed Q and F^H d (mr_nudft_info.engine_name); "" without CG */
    /* the encoding model of the iterative methods (solver/encoding.h): "" without one */
    char model[16];          /* "exact" or "nufft" */
    char model_why[256];     /* why: "requested", "auto: ..." */
    char model_text[384];    /* one line: model, engine, tolerance, error */
    double model_bound;      /* its error bound (relative) */
    double model_error[2];   /* --check: measured relative error of F^H and F; -1 not measured */
    /* the field map (solver/linop_field.h): field_model "" without correction */
    char field_model[16];    /* "exact", "frequency", "time" */
    char field_source[1100]; /* where the map came from */
    int field_segments;
    double field_bound[2];   /* max and rms of the segmentation's bound (0 for exact) */
    double field_measured;   /* --check: measured model error; -1 not measured */
    double field_range[4];   /* omega min, max (Hz), t min, max (s) */
    const char *q_source;  /* "computed", "computed, stored", "store" (the Q cache); NULL without CG */
    const char *q_cache;   /* the Q cache directory, or "off"; NULL without CG */
    const char *sens;        /* coil handling: "none" (one coil, no maps), "file" (SENSE with given maps),
                                "estimate" (SENSE with maps estimated from the data), "rss" */
    const char *sens_source; /* "file": where the maps came from (the scan or --sens-maps FILE); else NULL */
    double normal_diag; /* the centre diagonal element of F^H F (scale for lambda); NAN if not computed */
    /* the first term of the first iterative method (its lambda, lambda / normal_diag, how it was chosen);
     * every term of every method: mr_report_method.terms */
    double lambda_rel;  /* NAN without an iterative method */
    char lambda_from[256];

    /* the input and the read stage (recon/pipeline/volumes.h) */
    const char *format;       /* "mrirecon-kspace", "ismrmrd", "bart" */
    int volume, volumes;      /* the volume reconstructed (0-based) and how many the input holds */
    char volume_label[96];    /* its name: the output folder when the input holds several */
    int prewhitened;          /* 1: the coils were whitened with the input's noise scans */
    int64_t noise_samples;    /* noise samples per coil in the input (0: no noise scans) */
    int64_t sens_calib[3];    /* sens "estimate": the calibration grid of the map estimation */
    const char *sens_method;  /* sens "estimate": "espirit" or "walsh" (recon/pipeline/sens_estimate.h) */
    int64_t sens_kernels[2];  /* ESPIRiT: kernels kept of the calibration matrix's columns */
    double sens_cropped;      /* ESPIRiT: the fraction of voxels whose maps are 0 */
    double sens_seconds;      /* the estimate's time */
    int sens_on_gpu;          /* 1: ESPIRiT's per-voxel stage ran on the GPU */
    const char *noise_from;   /* where sigma came from: "file", "noise scans", "estimated", "none" */
    double noise_sigma_se;    /* "estimated": its standard error */
    int64_t coils_before;     /* --coils-compress: the coils of the scan (0: not compressed) */
    double coil_energy;       /* --coils-compress: the fraction of the data's energy kept */
    int truth_weighted;       /* 1: the truths were weighted by the root-sum-of-squares of the scan's own
                                 maps (sens "estimate": what unit-norm maps reconstruct) */
    /* the images written (matrix above is theirs) */
    float fov_mm[3];          /* field of view of the image grid in mm; 0 where unknown */
    int64_t grid[3];          /* the reconstruction grid when the images were cropped to reconSpace; else 0 */
    const mr_geometry *geometry; /* where the volume sits in the scanner (ISMRMRD), or NULL */
    const char *nifti;        /* image_<method>.nii: "magnitude", "complex" or "none" */
    const int64_t *slice;     /* the planes of 3D pictures: voxel {x, y, z} (recon --slice), or NULL: the centre */
    unsigned formats;         /* image formats written (bit f: io/image_io.h mr_image_format); 0: the default
                                 (recon/report/outputs.h MR_OUTPUT_DEFAULT_FORMATS) */

    /* per-stage wall times in seconds (0 when the stage did not run) */
    double t_read, t_op_create, t_q, t_plan, t_fhd, t_solve, t_dcf, t_gridding, t_write, t_total;
    double t_device_init; /* CG on a GPU: making the device usable (CUDA context); part of t_op_create */
    double t_fft_plan;    /* FFT planning (FFTW or cuFFT) and the kernel spectrum; part of t_plan */
    double t_sums_setup;  /* making the engine of the exact sums (cuBLAS, plans); part of t_plan */
    double t_scan;        /* after the read, before the methods: coil compression, the noise level, the field
                             map, the coil maps */
    double t_problem;     /* iterative methods: their problems (lambda, Lipschitz constants) and the images
                             back to the host */
    double t_score;       /* the metrics against the truth and the crop to the output grid */
    long peak_rss_kib; /* getrusage ru_maxrss at the end of the run */

    /* pictures */
    double window_hi;          /* magnitude PNGs and compare.png map [0, window_hi] to black..white */
    const char *window_from;   /* "max of the truth image", ... or (no truth) window_text */
    char window_text[96];      /* no truth: "the 99.5th percentile of |cg|" */
    double error_gain;         /* compare.png error maps are |I - I0| x gain */
    mr_truth_kind compare_truth;

    int nmethods;
    mr_report_method m[MR_REPORT_MAX_METHODS];
    /* the images of m[0..nmethods), complex [Nz][Ny][Nx][2] on the matrix above; set for the on_report
       callback of mr_recon_opts (borrowed for the call), NULL elsewhere */
    const float *const *images;
} mr_report;

mr_status mr_report_write_json(const char *path, const mr_report *r);
/* The body of report.json into f (the C API's report, recon/api/api.h). */
void mr_report_print_json(FILE *f, const mr_report *r);
mr_status mr_report_write_md(const char *path, const mr_report *r);
/* header exactly: method,truth,mse,psnr_db,snr_db,percent_error,seconds; one row per (method,
 * truth), or one row per method with empty metric fields when the scan has no truth. */
mr_status mr_report_write_csv(const char *path, const mr_report *r);

#endif
