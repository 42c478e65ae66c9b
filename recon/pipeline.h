/* One scan from file to pictures and report: the job behind `mrirecon recon`, reused by `batch`,
 * `validate` and `bench`. The stages are here; the coil combination is recon/combine.h, the files
 * recon/outputs.h and recon/report.h.
 *
 * Device: resolved once, before the scan is read (solver/backend.h): an explicit GPU request without
 * a usable GPU fails for every method; CG runs on the chosen backend (with a GPU, the data go to the
 * device once and only the image comes back); gridding always runs on the CPU.
 *
 * Coils (C = coils of the scan; opts.sens):
 *   "file": SENSE. One operator E = F S (per-coil exact NUDFT after the sensitivity maps, one Q for
 *           every coil), one CG on the combined image: (sum_c S_c^H F^H F S_c + lambda R^H R) x =
 *           sum_c S_c^H F^H d_c. Maps from the scan's /kspace/sens or from opts.sens_maps. Gridding
 *           combines its coil images with the maps (recon/combine.h).
 *   "rss":  every coil reconstructed alone (one operator for all), combined by root-sum-of-squares;
 *           CG's residual history is the combined sqrt(sum_c ||r_c,k||^2 / sum_c ||r_c,0||^2), no
 *           per-iteration PSNR.
 *   "auto" (default): "file" when maps exist (the scan's or opts.sens_maps), else "rss".
 *   One coil without maps is the plain single-coil reconstruction (the report says "none").
 *
 * Files written into outdir (each atomically: temporary name + rename):
 *   image_<method>.h5, image_<method>.png  for each method run
 *   convergence.png                        when CG ran
 *   compare.png                            with method "all"
 *   report.json, report.md                 metrics per truth, per-stage times, settings
 *   metrics.csv                            one row per (method, truth):
 *        method,truth,mse,psnr_db,snr_db,percent_error,seconds
 *   (truth is "image" or "bandlimited"; when the scan has no truth, one row per method with
 *    empty metric fields) */
#ifndef MR_PIPELINE_H
#define MR_PIPELINE_H

#include "../base/status.h"
#include "../solver/op.h"

struct mr_report; /* recon/report.h */

typedef struct {
    const char *method; /* "cg" (default), "gridding-bilinear", "gridding-kb", "all" */
    int iters;          /* CG iterations, default 60, >= 1 */
    double tol;         /* CG relative residual tolerance, 0 = run all iterations */
    double lambda;      /* regularisation weight, >= 0, default 0 */
    const char *reg;    /* "identity" (default) or "gradient" */
    mr_op_opts op;      /* basis, device, threads */
    const char *sens;      /* "auto" (default), "file" or "rss": see above */
    const char *sens_maps; /* HDF5 file with the coil maps (io/sens_h5.h) instead of the scan's; NULL = none */
    const char *dcf;    /* gridding density compensation: "pipe" (default, Pipe-Menon from the trajectory),
                           "file" (the scan's /kspace/weights), "analytic" (radial only) */
    double oversample;  /* KB gridding grid oversampling, default 2 */
    int kernel_width;   /* KB kernel width in grid cells, default 6 */
    const char *q_cache; /* directory of the Q cache (io/q_cache.h); NULL (default): the default directory;
                            "off": Q is always computed */
    /* Optional (default NULL): called once after a successful run with everything the report
     * files hold (recon/report.h); the report is borrowed for the duration of the call. */
    void (*on_report)(void *ctx, const struct mr_report *report);
    void *on_report_ctx;
} mr_recon_opts;

void mr_recon_opts_default(mr_recon_opts *o);

/* Reconstruct `scan` into `outdir` (created if needed). Diagnostics go to stderr through mr_log. */
mr_status mr_recon_run(const char *scan, const char *outdir, const mr_recon_opts *opts);

#endif
