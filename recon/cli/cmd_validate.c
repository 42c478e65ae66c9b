/* mrirecon validate -o DIR [options]: the book's experiment (recon/bench/validate.c). stdout carries the
 * result table only; progress goes to stderr. */
#include <stdio.h>
#include <string.h>

#include "cg_cli.h"
#include "commands.h"
#include "opts.h"
#include "progress_ui.h"
#include "../bench/validate.h"

int mr_cmd_validate(int argc, char **argv)
{
    mr_validate_opts o;
    mr_validate_opts_default(&o);
    mr_recon_opts cg_opts;
    mr_recon_opts_default(&cg_opts);
    mr_cg_cli cg;
    mr_cg_cli_init(&cg, &cg_opts);
    mr_device_sel device = {.kind = MR_DEVICE_AUTO, .index = -1};
    int verbose = 0, quiet = 0, seed = 1;
    static const char *const dcfs[] = {"pipe", "file", "analytic", NULL};
    const mr_opt table[] = {
        {"output", 'o', MR_OPT_STRING, &o.outdir, "DIR", "where scans, reconstructions and validation.md go (required)",
         NULL, 0, -1},
        {"size", 0, MR_OPT_INT, &o.size, "N",
         "matrix edge N (128 = the book's; smaller keeps the samples per voxel: spokes ~ N^2, readout ~ N)", NULL, 8,
         512},
        {"iters", 0, MR_OPT_INT_OR_0, &o.iters, "N", MR_OPT_HELP_ITERS, NULL, 1, 100000},
        {"snr", 0, MR_OPT_DOUBLE, &o.snr_db, "DB", "SNR of the noisy scan in dB", NULL, -50, 200},
        {"seed", 0, MR_OPT_INT, &seed, "S", "noise seed", NULL, 0, 1000000000},
        {"device", 0, MR_OPT_DEVICE, &device, "D", MR_OPT_HELP_DEVICE, NULL, 0, -1},
        {"precision", 0, MR_OPT_PRECISION, &o.op.precision, "P", MR_OPT_HELP_PRECISION, NULL, 0, -1},
        {"threads", 0, MR_OPT_INT, &o.op.threads, "T", "CPU threads (0: all cores)", NULL, 0, 4096},
        MR_CG_CLI_OPTS(&cg, &cg_opts),
        {"dcf", 0, MR_OPT_CHOICE, &o.dcf, "W", "gridding density compensation (file: the scan's analytic weights)",
         dcfs, 0, -1},
        {"verbose", 'v', MR_OPT_FLAG, &verbose, NULL, "more diagnostics", NULL, 0, -1},
        {"quiet", 'q', MR_OPT_FLAG, &quiet, NULL, "only warnings and errors on stderr", NULL, 0, -1},
    };
    const mr_cmd_spec spec = {
        "validate",
        "",
        "run the book's validation experiment and print the table",
        "Simulates the book's 3D experiment: Shepp-Logan, 128^3 matrix, kooshball 1078 spokes x 264\n"
        "readout = 284,592 samples of analytic k-space, once noiseless and once with complex Gaussian\n"
        "noise at --snr, reconstructs both with CG, Kaiser-Bessel gridding and bilinear gridding\n"
        "(as 'mrirecon recon --method all') and prints one Markdown table: PSNR, SNR and percent\n"
        "error against /truth/image and /truth/bandlimited, and seconds per method. --size N runs the\n"
        "same design scaled to N^3 (spokes round(1078 (N/128)^2), readout round(264 N/128)) for quick\n"
        "runs (the full size took 3 minutes on 2 CPU cores). Writes into DIR: scan_noiseless.h5,\n"
        "scan_snr<S>.h5, recon_noiseless/, recon_snr<S>/ and validation.md. Gridding uses Pipe-Menon density\n"
        "compensation by default (--dcf). CG uses the defaults of 'mrirecon recon' (automatic lambda, gradient\n"
        "regulariser, Dirac basis); the book's unregularised protocol is --lambda 0 --reg identity --basis box.",
        table,
        (int)(sizeof table / sizeof table[0]),
        0,
        0,
    };
    mr_opts_result res;
    int rc = mr_opts_begin(&spec, argc, argv, &res, &verbose, &quiet);
    if (rc != MR_OPTS_GO)
        return rc;
    mr_opts_free(&res); /* no positional arguments */
    if (!o.outdir || !o.outdir[0])
        return mr_opts_usage(&spec, "missing -o DIR");
    if ((rc = mr_cg_cli_apply(&spec, &cg, &cg_opts)) != MR_EXIT_OK ||
        (rc = mr_opts_check_precision(&spec, o.op.precision, device)) != MR_EXIT_OK)
        return rc;
    o.lambda = cg_opts.lambda;
    o.lambda_rel = cg_opts.lambda_rel;
    o.reg = cg_opts.reg;
    o.solver = cg_opts.solver;
    o.model = cg_opts.model;
    o.nufft_tol = cg_opts.nufft_tol;
    o.check = cg_opts.check;
    if (cg_opts.fieldmap || strcmp(cg_opts.fieldmap_model, "auto"))
        return mr_opts_usage(&spec, "%s", "the --fieldmap options do not apply: the book's phantom has no field");
    o.op.basis = cg_opts.op.basis;
    mr_op_opts_set_device(&o.op, device);
    o.seed = (uint64_t)seed;
    mr_progress_ui ui;
    mr_progress_ui_init(&ui, quiet);
    o.progress = mr_progress_ui_sink(&ui);
    mr_status st = mr_validate_run(&o, stdout);
    mr_progress_ui_end(&ui);
    if (st != MR_OK) {
        fprintf(stderr, "mrirecon validate: %s\n", mr_last_error());
        return MR_EXIT_FAILURE;
    }
    return MR_EXIT_OK;
}
