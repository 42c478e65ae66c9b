/* The book's validation experiment (the job behind `mrirecon validate`): a 3D Shepp-Logan scan
 * on a kooshball trajectory (128^3 matrix, 1078 spokes x 264 readout = 284,592 samples at full
 * size), simulated noiseless and with noise, reconstructed by every method (CG, Kaiser-Bessel and
 * bilinear gridding through mr_recon_run), and one table of PSNR, SNR, percent error against both
 * truths and time per method.
 *
 * Files in outdir (created): scan_noiseless.h5, scan_snr<S>.h5, recon_noiseless/, recon_snr<S>/
 * (everything mr_recon_run writes), validation.md (the table with its settings). Each file is
 * written atomically. */
#ifndef MR_VALIDATE_H
#define MR_VALIDATE_H

#include <stdint.h>
#include <stdio.h>

#include "../../base/progress.h"
#include "../../base/status.h"
#include "../../solver/encoding.h"
#include "../../solver/op.h"
#include "../../solver/problem.h"

#define MR_VALIDATE_BOOK_SIZE 128
#define MR_VALIDATE_BOOK_SPOKES 1078
#define MR_VALIDATE_BOOK_READOUT 264

typedef struct {
    int size;           /* matrix edge N (default 128, the book's) */
    int iters;          /* iterations of the iterative methods (default 0: the solvers' defaults) */
    mr_solver_kind solver; /* as mr_recon_opts.solver (default auto) */
    mr_model model;        /* as mr_recon_opts.model, nufft_tol, check */
    double nufft_tol;
    int check;
    double snr_db;      /* SNR of the noisy scan (default 30 dB) */
    uint64_t seed;      /* noise seed (default 1) */
    const char *outdir; /* required */
    const char *dcf;    /* gridding density compensation, as mr_recon_opts.dcf (default "pipe": on the
                           undersampled kooshball the analytic |k|^2 weights amplify the streaks) */
    mr_op_opts op;      /* basis, device, threads (defaults: those of mr_recon_opts_default) */
    double lambda;      /* CG regularisation weight, as mr_recon_opts.lambda (default: automatic; the book's
                           unregularised protocol is lambda 0, reg identity, basis box) */
    double lambda_rel;  /* as mr_recon_opts.lambda_rel (default: not given) */
    const char *reg;    /* as mr_recon_opts.reg (default: its default) */
    const mr_progress *progress; /* as mr_recon_opts.progress, plus the simulation (default NULL) */
} mr_validate_opts;

void mr_validate_opts_default(mr_validate_opts *o);

/* The design at matrix edge n, keeping the book's samples per voxel: spokes =
 * round(1078 (n/128)^2), readout = round(264 n/128) (at least 1 and 2), and the target sample count
 * round(284592 (n/128)^3) that spokes x readout approximates. */
void mr_validate_design(int n, int64_t *spokes, int64_t *readout, int64_t *target_samples);

/* Run the experiment. The table (Markdown) goes to `table` (stdout for the command; may be NULL),
 * and into outdir/validation.md together with the settings. Progress goes to stderr (mr_log). */
mr_status mr_validate_run(const mr_validate_opts *o, FILE *table);

#endif
