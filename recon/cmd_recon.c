/* mrirecon recon SCAN.h5 -o OUTDIR [options]: one scan through recon/pipeline.c. Prints a short
 * result table on stdout; diagnostics (and the CG progress with -v) go to stderr. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../base/log.h"
#include "commands.h"
#include "opts.h"
#include "pipeline.h"
#include "report.h"

static void print_table(void *ctx, const mr_report *r)
{
    (void)ctx;
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
    const char *outdir = NULL, *basis = "box";
    mr_device_sel device = {.kind = MR_DEVICE_AUTO, .index = -1};
    int verbose = 0, quiet = 0;
    static const char *const methods[] = {"cg", "gridding-bilinear", "gridding-kb", "all", NULL};
    static const char *const regs[] = {"identity", "gradient", NULL};
    static const char *const bases[] = {"box", "dirac", NULL};
    static const char *const dcfs[] = {"pipe", "file", "analytic", NULL};
    static const char *const senses[] = {"auto", "file", "rss", NULL};
    const mr_opt table[] = {
        {"output", 'o', MR_OPT_STRING, &outdir, "OUTDIR", "output directory (created; required)", NULL, 0, -1},
        {"method", 'm', MR_OPT_CHOICE, &o.method, "M", "reconstruction method", methods, 0, -1},
        {"iters", 0, MR_OPT_INT, &o.iters, "N", "CG iterations", NULL, 1, 100000},
        {"tol", 0, MR_OPT_DOUBLE, &o.tol, "T", "stop CG when ||r_k||/||r_0|| <= T (0: run all iterations)", NULL, 0,
         1},
        {"lambda", 0, MR_OPT_DOUBLE, &o.lambda, "L", "regularisation weight (absolute; see report.md for the scale)",
         NULL, 0, 1e30},
        {"reg", 0, MR_OPT_CHOICE, &o.reg, "R", "regulariser R in lambda ||R x||^2 (gradient: forward differences, Neumann boundary)",
         regs, 0, -1},
        {"basis", 0, MR_OPT_CHOICE, &basis, "B", "voxel basis function", bases, 0, -1},
        {"device", 0, MR_OPT_DEVICE, &device, "D", MR_OPT_HELP_DEVICE, NULL, 0, -1},
        {"precision", 0, MR_OPT_PRECISION, &o.op.precision, "P", MR_OPT_HELP_PRECISION, NULL, 0, -1},
        {"q-cache", 0, MR_OPT_STRING, &o.q_cache, "DIR", MR_OPT_HELP_Q_CACHE, NULL, 0, -1},
        {"threads", 0, MR_OPT_INT, &o.op.threads, "T", "CPU threads (0: all cores)", NULL, 0, 4096},
        {"sens", 0, MR_OPT_CHOICE, &o.sens, "S",
         "coils: file = SENSE with coil maps (the scan's /kspace/sens or --sens-maps), rss = each coil alone + "
         "root-sum-of-squares, auto = file when maps exist, else rss",
         senses, 0, -1},
        {"sens-maps", 0, MR_OPT_STRING, &o.sens_maps, "FILE",
         "coil maps from FILE (HDF5 /kspace/sens or /sens, [C][Nz][Ny][Nx][2]) instead of the scan's", NULL, 0, -1},
        {"dcf", 0, MR_OPT_CHOICE, &o.dcf, "W", "gridding density compensation: Pipe-Menon from the trajectory, the file's /kspace/weights, or analytic (radial only)", dcfs,
         0, -1},
        {"oversample", 0, MR_OPT_DOUBLE, &o.oversample, "S", "Kaiser-Bessel grid oversampling", NULL, 1.125, 4},
        {"kernel-width", 0, MR_OPT_INT, &o.kernel_width, "W", "Kaiser-Bessel kernel width in grid cells", NULL, 4, 8},
        {"verbose", 'v', MR_OPT_FLAG, &verbose, NULL, "more diagnostics (CG residual per iteration)", NULL, 0, -1},
        {"quiet", 'q', MR_OPT_FLAG, &quiet, NULL, "only warnings and errors on stderr", NULL, 0, -1},
    };
    const mr_cmd_spec spec = {
        "recon",
        "SCAN.h5",
        "reconstruct a scan (CG least squares, gridding baselines)",
        "Solves (F^H F + lambda R^H R) x = F^H d by conjugate gradients from x = 0 (Toeplitz normal\n"
        "operator with the exact Q), and/or grids the density-compensated samples (bilinear or\n"
        "Kaiser-Bessel). Writes into OUTDIR: image_<method>.h5/.png, convergence.png (CG),\n"
        "compare.png (--method all), report.json, report.md, metrics.csv. Nothing is written when the\n"
        "input or an option is invalid. Multi-coil scans: SENSE with the coil maps when the scan has them\n"
        "(/kspace/sens) or --sens-maps is given: one operator sum_c S_c^H F^H F S_c and one CG on the\n"
        "combined image; otherwise each coil alone, combined by root-sum-of-squares (--sens rss).\n"
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
    if (o.sens_maps && !strcmp(o.sens, "rss"))
        return mr_opts_usage(&spec, "--sens-maps %s and --sens rss exclude each other", o.sens_maps);
    if (o.op.precision != MR_PRECISION_AUTO && device.kind == MR_DEVICE_CPU)
        return mr_opts_usage(&spec, "--precision %s runs on a GPU; with --device cpu only auto",
                             mr_precision_name(o.op.precision));
    mr_op_opts_set_device(&o.op, device);
    o.op.basis = basis[0] == 'd' ? MR_BASIS_DIRAC : MR_BASIS_BOX;
    o.on_report = print_table;
    mr_status st = mr_recon_run(scan, outdir, &o);
    if (st != MR_OK) {
        fprintf(stderr, "mrirecon recon: %s\n", mr_last_error());
        return MR_EXIT_FAILURE;
    }
    return MR_EXIT_OK;
}
