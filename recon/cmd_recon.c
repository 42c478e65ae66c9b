/* mrirecon recon SCAN -o OUTDIR [options]: one scan (any input format, every volume) through
 * recon/pipeline.c. Prints a short result table per volume on stdout; diagnostics (and the CG
 * progress with -v) go to stderr. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../base/log.h"
#include "cg_cli.h"
#include "commands.h"
#include "opts.h"
#include "outdir.h"
#include "pipeline.h"
#include "progress_ui.h"
#include "read_cli.h"
#include "report.h"

static void print_table(void *ctx, const mr_report *r)
{
    (void)ctx;
    if (r->volumes > 1)
        printf("volume %d of %d: %s\n", r->volume + 1, r->volumes, r->volume_label);
    printf("%-18s %12s %16s %10s\n", "method", "psnr_image", "psnr_bandlimited", "seconds");
    for (int i = 0; i < r->nmethods; i++) {
        const mr_report_method *m = &r->m[i];
        char a[32] = "-", b[32] = "-";
        if (m->have_metrics[MR_TRUTH_IMAGE])
            snprintf(a, sizeof a, "%.2f dB", m->metrics[MR_TRUTH_IMAGE].psnr_db);
        if (m->have_metrics[MR_TRUTH_BANDLIMITED])
            snprintf(b, sizeof b, "%.2f dB", m->metrics[MR_TRUTH_BANDLIMITED].psnr_db);
        printf("%-18s %12s %16s %10.3f\n", m->method, a, b, m->seconds);
    }
}

int mr_cmd_recon(int argc, char **argv)
{
    mr_recon_opts o;
    mr_recon_opts_default(&o);
    const char *outdir = NULL;
    mr_cg_cli cg;
    mr_cg_cli_init(&cg, &o);
    mr_device_sel device = {.kind = MR_DEVICE_AUTO, .index = -1};
    int verbose = 0, quiet = 0;
    static const char *const methods[] = {"cg", "gridding-bilinear", "gridding-kb", "all", NULL};
    static const char *const dcfs[] = {"pipe", "file", "analytic", NULL};
    static const char *const senses[] = {"auto", "file", "estimate", "rss", NULL};
    static const char *const niftis[] = {"magnitude", "complex", "none", NULL};
    mr_read_cli rdc;
    mr_read_cli_init(&rdc);
    const mr_opt table[] = {
        {"output", 'o', MR_OPT_STRING, &outdir, "OUTDIR", "output directory (created; required)", NULL, 0, -1},
        {"method", 'm', MR_OPT_CHOICE, &o.method, "M", "reconstruction method", methods, 0, -1},
        {"iters", 0, MR_OPT_INT, &o.iters, "N", "CG iterations", NULL, 1, 100000},
        {"tol", 0, MR_OPT_DOUBLE, &o.tol, "T", "stop CG when ||r_k||/||r_0|| <= T (0: run all iterations)", NULL, 0,
         1},
        MR_CG_CLI_OPTS(&cg),
        {"device", 0, MR_OPT_DEVICE, &device, "D", MR_OPT_HELP_DEVICE, NULL, 0, -1},
        {"precision", 0, MR_OPT_PRECISION, &o.op.precision, "P", MR_OPT_HELP_PRECISION, NULL, 0, -1},
        {"q-cache", 0, MR_OPT_STRING, &o.q_cache, "DIR", MR_OPT_HELP_Q_CACHE, NULL, 0, -1},
        {"threads", 0, MR_OPT_INT, &o.op.threads, "T", "CPU threads (0: all cores)", NULL, 0, 4096},
        {"sens", 0, MR_OPT_CHOICE, &o.sens, "S",
         "coils: file = SENSE with coil maps (the scan's /kspace/sens or --sens-maps), estimate = SENSE with maps "
         "estimated from the data (Walsh/Inati), rss = each coil alone + root-sum-of-squares, auto = file when maps "
         "exist, else estimate",
         senses, 0, -1},
        {"sens-maps", 0, MR_OPT_STRING, &o.sens_maps, "FILE",
         "coil maps from FILE (HDF5 /kspace/sens or /sens, [C][Nz][Ny][Nx][2]) instead of the scan's", NULL, 0, -1},
        {"dcf", 0, MR_OPT_CHOICE, &o.dcf, "W", "gridding density compensation: Pipe-Menon from the trajectory, the file's /kspace/weights, or analytic (radial only)", dcfs,
         0, -1},
        {"oversample", 0, MR_OPT_DOUBLE, &o.oversample, "S", "Kaiser-Bessel grid oversampling", NULL, 1.125, 4},
        {"kernel-width", 0, MR_OPT_INT, &o.kernel_width, "W", "Kaiser-Bessel kernel width in grid cells", NULL, 4, 8},
        {"volume", 0, MR_OPT_INT, &o.volume, "N",
         "reconstruct volume N alone into OUTDIR (-1: every volume, each into OUTDIR/<volume>/; 'mrirecon info' "
         "lists them)",
         NULL, -1, 1000000},
        {"nifti", 0, MR_OPT_CHOICE, &o.nifti, "K", "image_<method>.nii: magnitude (float32), complex (complex64) or none",
         niftis, 0, -1},
        MR_READ_CLI_OPTS(&rdc),
        {"force", 0, MR_OPT_FLAG, &o.force, NULL,
         "OUTDIR may hold an earlier run's outputs: replace them (only the files recon writes are removed)", NULL, 0,
         -1},
        {"verbose", 'v', MR_OPT_FLAG, &verbose, NULL, "more diagnostics (CG residual per iteration)", NULL, 0, -1},
        {"quiet", 'q', MR_OPT_FLAG, &quiet, NULL, "only warnings and errors on stderr", NULL, 0, -1},
    };
    const mr_cmd_spec spec = {
        "recon",
        "SCAN",
        "reconstruct a scan (CG least squares, gridding baselines)",
        "SCAN is any k-space input, recognised by its content: mrirecon HDF5, ISMRMRD (.h5/.mrd; multi-coil\n"
        "data prewhitened with the noise scans unless --prewhiten off) or a BART pair (NAME_traj + NAME_ksp\n"
        "[+ NAME_sens]). Solves (F^H F + lambda R^H R) x = F^H d by conjugate gradients from x = 0\n"
        "(Toeplitz normal operator with the exact Q), and/or grids the density-compensated samples\n"
        "(bilinear or Kaiser-Bessel). Writes into OUTDIR: image_<method>.h5/.png/.nii (NIfTI-1, voxel size\n"
        "from the FOV, scanner placement from ISMRMRD), convergence.png (CG), compare.png (--method all),\n"
        "report.json, report.md, metrics.csv. An ISMRMRD scan with several volumes (slices, contrasts,\n"
        "repetitions, ...) is reconstructed volume by volume into OUTDIR/<volume>/ (e.g. OUTDIR/slice001/),\n"
        "with OUTDIR/metrics.csv over all of them; --volume N reconstructs one into OUTDIR. An ISMRMRD\n"
        "volume reconstructed on its encodedSpace grid (readout oversampling) is cropped to reconSpace.\n"
        "Nothing is written when the input or an option is invalid, or any stage fails: the files are\n"
        "written into a hidden staging folder and appear in OUTDIR together. An OUTDIR holding another\n"
        "run's outputs is refused (exit 2) unless --force. Multi-coil scans: SENSE, one operator\n"
        "sum_c S_c^H F^H F S_c and one CG on the combined image, with the coil maps of the scan\n"
        "(/kspace/sens), of --sens-maps, or estimated from the data (the default without maps: unit-norm\n"
        "maps, so the image is weighted by the coils' root-sum-of-squares); --sens rss reconstructs each\n"
        "coil alone and combines them by root-sum-of-squares.\n"
        "--device gpu: CG runs on the GPU (data uploaded once, Q, F^H d, the Toeplitz FFTs, the\n"
        "regulariser and every CG vector operation there); gridding always runs on the CPU; without a\n"
        "usable GPU it is an error for every method.",
        table,
        (int)(sizeof table / sizeof table[0]),
        1,
        1,
    };
    mr_opts_result res;
    int rc = mr_opts_begin(&spec, argc, argv, &res, &verbose, &quiet);
    if (rc != MR_OPTS_GO)
        return rc;
    const char *scan = res.positional[0];
    mr_opts_free(&res);
    if (!outdir || !outdir[0])
        return mr_opts_usage(&spec, "missing -o OUTDIR");
    if (o.sens_maps && (!strcmp(o.sens, "rss") || !strcmp(o.sens, "estimate")))
        return mr_opts_usage(&spec, "--sens-maps %s and --sens %s exclude each other", o.sens_maps, o.sens);
    if (o.op.precision != MR_PRECISION_AUTO && device.kind == MR_DEVICE_CPU)
        return mr_opts_usage(&spec, "--precision %s runs on a GPU; with --device cpu only auto",
                             mr_precision_name(o.op.precision));
    if ((rc = mr_cg_cli_apply(&spec, &cg, &o)) != MR_EXIT_OK)
        return rc;
    if (mr_read_cli_apply(&rdc, &o.read, &o.prewhiten) != MR_OK)
        return mr_opts_usage(&spec, "%s", mr_last_error());
    if (mr_outdir_check(outdir, o.force) == MR_EINVAL) /* another run's outputs: a usage error, as in batch */
        return mr_opts_usage(&spec, "%s", mr_last_error());
    mr_op_opts_set_device(&o.op, device);
    o.on_report = print_table;
    mr_progress_ui ui;
    mr_progress_ui_init(&ui, quiet);
    o.progress = mr_progress_ui_sink(&ui);
    mr_status st = mr_recon_run(scan, outdir, &o);
    mr_progress_ui_end(&ui);
    if (st != MR_OK) {
        fprintf(stderr, "mrirecon recon: %s\n", mr_last_error());
        return MR_EXIT_FAILURE;
    }
    return MR_EXIT_OK;
}
