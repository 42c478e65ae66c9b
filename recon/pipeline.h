/* One scan from file to pictures and report: the job behind `mrirecon recon`, reused by `batch`,
 * `validate` and `bench`.
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
    const char *dcf;    /* gridding density compensation: "pipe" (default, Pipe-Menon from the trajectory),
                           "file" (the scan's /kspace/weights), "analytic" (radial only) */
    double oversample;  /* KB gridding grid oversampling, default 2 */
    int kernel_width;   /* KB kernel width in grid cells, default 6 */
    /* Optional (default NULL): called once after a successful run with everything the report
     * files hold (recon/report.h); the report is borrowed for the duration of the call. */
    void (*on_report)(void *ctx, const struct mr_report *report);
    void *on_report_ctx;
} mr_recon_opts;

void mr_recon_opts_default(mr_recon_opts *o);

/* Reconstruct `scan` into `outdir` (created if needed). Diagnostics go to stderr through mr_log. */
mr_status mr_recon_run(const char *scan, const char *outdir, const mr_recon_opts *opts);

#endif
