/* One scan from file to pictures and report: the job behind `mrirecon recon`, reused by `batch`,
 * `validate` and `bench`. The stages are here; the coil combination is solver/coil_combine.h, the files
 * recon/report/outputs.h and recon/report/report.h.
 *
 * Device: resolved once, before the scan is read (solver/backend.h): an explicit GPU request without
 * a usable GPU fails for every method; CG runs on the chosen backend (with a GPU, the data go to the
 * device once and only the image comes back); gridding always runs on the CPU.
 *
 * Input: any format io/input.h reads (mrirecon HDF5, ISMRMRD, BART), through the read stage
 * recon/pipeline/volumes.h (opts.read, prewhitening with the noise scans). An input with several volumes
 * (ISMRMRD slices, contrasts, repetitions, ...) gives one reconstruction per volume, each in
 * outdir/<volume label>/ (recon/pipeline/volumes.h names them), and outdir/metrics.csv with a leading
 * "volume" column over all of them; opts.volume >= 0 reconstructs that volume alone into outdir.
 * The volumes run one after the other; a failing volume stops the run (the volumes finished before
 * it keep their folders; the message names the volume).
 *
 * Coils (C = coils of the scan; opts.sens):
 *   "file": SENSE. One operator E = F S (per-coil exact NUDFT after the sensitivity maps, one Q for
 *           every coil), one CG on the combined image: (sum_c S_c^H F^H F S_c + lambda R^H R) x =
 *           sum_c S_c^H F^H d_c. Maps from the scan's /kspace/sens or from opts.sens_maps. Gridding
 *           combines its coil images with the maps (solver/coil_combine.h).
 *   "rss":  every coil reconstructed alone (one operator for all), combined by root-sum-of-squares;
 *           CG's residual history is the combined sqrt(sum_c ||r_c,k||^2 / sum_c ||r_c,0||^2), no
 *           per-iteration PSNR.
 *   "estimate": SENSE with maps estimated from the data (recon/pipeline/sens_estimate.h: Walsh/Inati on the
 *           gridded k-space centre, solver/coilmaps.h); unit-norm maps, so the image is the object
 *           weighted by the coils' root-sum-of-squares sensitivity.
 *   "auto" (default): "file" when maps exist (the scan's or opts.sens_maps), else "estimate" for
 *           C > 1 (falling back to "rss" with a warning when the data hold too little of the k-space
 *           centre to estimate maps).
 *   One coil without maps is the plain single-coil reconstruction (the report says "none").
 *
 * Output folder (recon/pipeline/outdir.h): checked before any work (a folder holding another run's outputs is
 * refused unless opts.force); the files are written into a hidden staging folder and appear in outdir
 * together when everything succeeded; a failed run leaves nothing. Files (each written atomically):
 *   image_<method>.h5, image_<method>.png  for each method run
 *   image_<method>.nii                     NIfTI-1 (opts.nifti), voxel size from the FOV, placed with
 *                                          the ISMRMRD geometry when the input has one
 *   (an ISMRMRD volume reconstructed on an encodedSpace grid larger than its reconSpace with the same
 *    voxel size, i.e. readout oversampling, is cropped to reconSpace before anything is written)
 *   convergence.png                        when CG ran
 *   compare.png                            with method "all"
 *   report.json, report.md                 metrics per truth, per-stage times, settings
 *   metrics.csv                            one row per (method, truth):
 *        method,truth,mse,psnr_db,snr_db,percent_error,seconds
 *   (truth is "image" or "bandlimited"; when the scan has no truth, one row per method with
 *    empty metric fields) */
#ifndef MR_PIPELINE_H
#define MR_PIPELINE_H

#include "../../base/progress.h"
#include "../../base/status.h"
#include "../../io/json.h"
#include "../../io/read_opts.h"
#include "../../solver/encoding.h"
#include "../../solver/op.h"
#include "../../solver/problem.h"
#include "volumes.h"

struct mr_report; /* recon/report/report.h */

typedef struct {
    const char *method; /* a list of recon/pipeline/methods.h ("iterative" (default), "cg", "gridding-kb",
                           "gridding-bilinear", e.g. "iterative,gridding-kb"), or "all" */
    int iters;          /* iterations of the iterative methods; 0 (default): the solver's own default
                           (mr_solver_default_iters: CG 60, ADMM 50, FISTA and PDHG 100), else >= 1 */
    double tol;         /* stop when the solver's convergence measure (CG: relative residual; the others:
                           relative change of the image) <= tol; 0 = run all iterations */
    mr_solver_kind solver; /* the iterative method's solver (solver/problem.h); default MR_SOLVER_AUTO */
    double lambda;      /* regularisation weight: >= 0 absolute; < 0 (default): lambda_rel, else automatic
                           from the scan's noise level (solver/autolambda.h) */
    double lambda_rel;  /* >= 0: lambda = lambda_rel x diag(E^H E) at the centre voxel; < 0 (default): not
                           given. At most one of lambda and lambda_rel is >= 0 */
    const char *reg;    /* the iterative method's priors, a list of recon/pipeline/priors.h ("tv", "tv,wavelet:0.5", ...);
                           default MR_RECON_DEFAULT_REG. Method "cg" takes the list's quadratic priors, or
                           "gradient" when it has none */
    mr_op_opts op;      /* basis (default dirac: docs/RECON.md says why), device, threads */
    mr_model model;     /* the encoding model of the iterative methods (solver/encoding.h): auto (default),
                           exact, nufft */
    double nufft_tol;   /* the NUFFT's tolerance (default MR_ENCODING_TOL_DEFAULT) */
    int check;          /* 1: measure the model's error at plan time (the encoding and the field model) */
    const char *fieldmap;       /* field map file (HDF5 or NIfTI, io/fieldmap.h) instead of the scan's; NULL */
    const char *fieldmap_model; /* "auto" (default: frequency when the scan has a map and readout times, else
                                   off), "off", "exact", "frequency", "time" (solver/linop_field.h) */
    double fieldmap_tol;        /* the segmented models' bound (default 1e-3) */
    const char *fieldmap_units; /* "auto" (default), "hz", "rad/s" (io/fieldmap.h) */
    int coils_compress; /* >= 1: compress the coils to this many virtual coils after prewhitening
                           (recon/pipeline/sens_estimate.h); 0 (default): off */
    const char *sens;      /* "auto" (default), "file", "estimate" (= "espirit"), "espirit", "walsh" or "rss":
                              see above */
    const char *sens_maps; /* HDF5 file with the coil maps (io/sens_h5.h) instead of the scan's; NULL = none */
    const char *dcf;    /* gridding density compensation: "pipe" (default, Pipe-Menon from the trajectory),
                           "file" (the scan's /kspace/weights), "analytic" (radial only) */
    double oversample;  /* KB gridding grid oversampling, default 2 */
    int kernel_width;   /* KB kernel width in grid cells, default 6 */
    const char *q_cache; /* directory of the Q cache (io/q_cache.h); NULL (default): the default directory;
                            "off": Q is always computed */
    mr_read_opts read;  /* how the input is read (io/read_opts.h; default: mr_read_opts_default) */
    int prewhiten;      /* 1 (default): whiten the coils with the input's noise scans (recon/pipeline/volumes.h) */
    int volume;         /* -1 (default): every volume of the input; >= 0: that one, into outdir itself */
    const char *nifti;  /* image_<method>.nii: "magnitude" (default), "complex" or "none" */
    const int64_t *slice; /* 3D pictures: the planes through voxel {x, y, z} (borrowed; recon --slice); NULL
                             (default): through the centre */
    unsigned formats;   /* image formats to write (bit f: io/image_io.h mr_image_format; recon --format);
                           0 (default): h5, png, nifti (recon/report/outputs.h) */
    int force;          /* 1: OUTDIR may hold the outputs of an earlier run; they are replaced (only the
                           files recon writes are removed). 0 (default): such a folder is refused */
    /* Optional (default NULL): where the long stages report their progress (Q, F^H d, CG, DCF,
     * gridding; base/progress.h). Borrowed for the run. */
    const mr_progress *progress;
    /* Optional (default NULL): called once per volume after its successful run with everything the
     * report files hold (recon/report/report.h) and the images (report->images); the report is borrowed for
     * the duration of the call. With it set, outdir may be NULL: nothing is written (the C API,
     * recon/api/api.h). */
    void (*on_report)(void *ctx, const struct mr_report *report);
    void *on_report_ctx;
    /* The options as given, written by write_options(options_ctx, obj) into report.json's "options" object
     * (the command's option table: recon/cli/cmd_args.h); NULL: no such object. */
    void (*write_options)(const void *ctx, mr_json_obj *obj);
    const void *options_ctx;
    /* 1: the calling process makes no further use of the GPU after this run (the recon command): once a
     * single-volume run on one GPU has its images on the host, the device's context is torn down in the
     * background while the outputs are written (solver/backend.h mr_device_release_start), and the run
     * waits for it before it returns. Not with a sums provider (op.sums, e.g. MPI's split sums): it may
     * hold device objects of its own beyond the run. 0 (default): the context stays, as a library caller's process may
     * share it (e.g. with CuPy). */
    int release_device;
} mr_recon_opts;

/* The defaults of the iterative methods (docs/RECON.md gives the measurements behind them). */
#define MR_RECON_DEFAULT_REG "tv"

void mr_recon_opts_default(mr_recon_opts *o);

/* The checks of the options that need no input (methods, priors and solver together, lambdas, iterations,
 * choices): MR_EINVAL naming the options at fault. mr_recon_run makes them first; commands call this to
 * report a usage error before any work. */
mr_status mr_recon_opts_check(const mr_recon_opts *o);

/* Reconstruct `scan` into `outdir` (created if needed; NULL: no files, opts->on_report receives the
 * results). Diagnostics go to stderr through mr_log. */
mr_status mr_recon_run(const char *scan, const char *outdir, const mr_recon_opts *opts);

/* The same for a scan in memory: ks is owned by the run from this call on (freed by it, also on failure;
 * the run may change it: coil-weighted truth, an attached field map). desc (borrowed; may be NULL)
 * describes where it came from (recon/pipeline/volumes.h: the format, volume, prewhitening and the ISMRMRD
 * grid and geometry, so that the images are cropped and placed as mr_recon_run does for that volume);
 * NULL: one volume; format "arrays" where desc names none (format 0). `name` names the scan in messages and the report. opts->volume
 * must be -1 or 0. */
mr_status mr_recon_run_kspace(mr_kspace *ks, const mr_volume_desc *desc, const char *name, const char *outdir,
                              const mr_recon_opts *opts);

#endif
