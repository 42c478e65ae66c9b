/* mrirecon batch: reconstruct many scans, one child process per scan, with progress on stderr,
 * summaries (CSV, Markdown, one self-contained HTML page) and --resume. The machinery is in
 * recon/batch*.c; this file is the command line and the job each child runs (docs/BATCH.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "../base/log.h"
#include "batch.h"
#include "commands.h"
#include "opts.h"
#include "pipeline.h"

#define MR_EXIT_INTERRUPTED 130

typedef struct {
    mr_recon_opts recon;
    int cpu_only;     /* --device cpu, or auto on a machine without a usable GPU */
    int gpu_required; /* --device gpu: no fallback to the CPU */
} batch_job_ctx;

/* Runs in the scan's child process. */
static mr_status batch_job(const char *scan, const char *outdir, const mr_batch_slot *slot, void *ctx)
{
    const batch_job_ctx *c = ctx;
    mr_recon_opts o = c->recon;
    if (slot->gpu >= 0) {
        o.op.device = c->gpu_required ? MR_DEVICE_GPU : MR_DEVICE_AUTO;
        o.op.gpu_index = slot->gpu;
    } else if (c->cpu_only) {
        o.op.device = MR_DEVICE_CPU;
    }
    o.op.threads = slot->threads;
#ifdef _OPENMP
    omp_set_num_threads(slot->threads);
#endif
    mr_status st = mr_recon_run(scan, outdir, &o);
    if (st != MR_OK)
        return st;
    /* the pictures only decorate summary.html: a failure there does not fail the scan */
    if (mr_batch_thumbnails(scan, outdir) != MR_OK)
        mr_log(MR_LOG_WARN, "batch: no thumbnails for %s: %s", scan, mr_last_error());
    mr_clear_error();
    return MR_OK;
}

static const char batch_description[] =
    "Each INPUT is a scan file, a directory (its *.h5 files, sorted by name, not recursive) or a list\n"
    "file (@FILE, or a name ending in .txt or .lst: one path per line, relative paths relative to the\n"
    "list file, '#' starts a comment). Each scan is reconstructed in its own child process into\n"
    "OUTDIR/<name>/ (the files of 'mrirecon recon', plus the marker .done and two thumbnails),\n"
    "where <name> is the file name without .h5 (a repeated name gets -2, -3, ... in input order).\n"
    "A scan that cannot be read, fails, crashes or runs past --timeout is reported and skipped;\n"
    "the batch goes on. OUTDIR/summary.csv, summary.md and summary.html (one self-contained page,\n"
    "sortable, with thumbnails) list every scan with its metrics or the reason it failed.\n"
    "\n"
    "A scan's files appear in OUTDIR/.<name>.partial/ and are renamed to OUTDIR/<name>/ only when\n"
    "complete. An existing non-empty OUTDIR is refused unless --resume (keep the finished scans\n"
    "whose input and options are unchanged, redo the rest) or --force (redo every scan).\n"
    "\n"
    "Workers: with GPUs (--device auto or gpu) one worker per GPU by default; on the CPU\n"
    "--jobs 0 picks max(1, cores/4) workers. Each worker gets max(1, cores/jobs) threads unless\n"
    "--threads is given.\n"
    "\n"
    "Progress goes to stderr: a bar redrawn in place on a terminal, else one line per finished scan.\n"
    "Exit status: 0 every scan succeeded, 1 some scans failed (or the batch itself failed),\n"
    "2 usage error (also: OUTDIR not empty without --resume/--force), 130 interrupted (SIGINT or\n"
    "SIGTERM: running scans are killed, their partial folders removed, the summary written).";

int mr_cmd_batch(int argc, char **argv)
{
    batch_job_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    mr_recon_opts_default(&ctx.recon);
    const char *outdir = NULL, *basis = "box";
    mr_device_sel device = {.kind = MR_DEVICE_AUTO, .index = -1};
    int jobs = 0, threads = 0, resume = 0, force = 0, verbose = 0, quiet = 0;
    double timeout = 0;
    static const char *const methods[] = {"cg", "gridding-bilinear", "gridding-kb", "all", NULL};
    static const char *const regs[] = {"identity", "gradient", NULL};
    static const char *const dcfs[] = {"pipe", "file", "analytic", NULL};
    static const char *const bases[] = {"box", "dirac", NULL};
    if (!ctx.recon.method)
        ctx.recon.method = "cg";
    if (!ctx.recon.reg)
        ctx.recon.reg = "identity";
    if (!ctx.recon.dcf)
        ctx.recon.dcf = "pipe";
    const mr_opt opts[] = {
        {"output", 'o', MR_OPT_STRING, &outdir, "OUTDIR", "output folder (required)", NULL, 0, -1},
        {"method", 'm', MR_OPT_CHOICE, &ctx.recon.method, "M", "reconstruction method", methods, 0, -1},
        {"device", 0, MR_OPT_DEVICE, &device, "D",
         "where the operator runs (gpu or gpu:all: one worker per GPU; gpu:N: every worker on GPU N; a list "
         "gpu:N,M,... counts as its first GPU: each scan runs on one GPU)",
         NULL, 0, -1},
        {"jobs", 'j', MR_OPT_INT, &jobs, "J", "scans reconstructed at once (0 = auto)", NULL, 0, 1024},
        {"threads", 't', MR_OPT_INT, &threads, "T", "CPU threads per worker (0 = max(1, cores/jobs))", NULL, 0, 4096},
        {"resume", 0, MR_OPT_FLAG, &resume, NULL, "finish an earlier batch in OUTDIR: redo only unfinished or changed scans",
         NULL, 0, -1},
        {"force", 0, MR_OPT_FLAG, &force, NULL, "redo every scan even though OUTDIR is not empty", NULL, 0, -1},
        {"timeout", 0, MR_OPT_DOUBLE, &timeout, "SEC", "kill a scan running longer than this (0 = never)", NULL, 0,
         1e9},
        {"iters", 'n', MR_OPT_INT, &ctx.recon.iters, "N", "CG iterations", NULL, 1, 100000},
        {"tol", 0, MR_OPT_DOUBLE, &ctx.recon.tol, "TOL", "CG relative residual tolerance (0 = all iterations)", NULL,
         0, 1},
        {"lambda", 'l', MR_OPT_DOUBLE, &ctx.recon.lambda, "L", "regularisation weight", NULL, 0, 1e30},
        {"reg", 0, MR_OPT_CHOICE, &ctx.recon.reg, "R", "regulariser", regs, 0, -1},
        {"dcf", 0, MR_OPT_CHOICE, &ctx.recon.dcf, "D", "gridding density compensation", dcfs, 0, -1},
        {"basis", 0, MR_OPT_CHOICE, &basis, "B", "voxel basis function", bases, 0, -1},
        {"precision", 0, MR_OPT_PRECISION, &ctx.recon.op.precision, "P", MR_OPT_HELP_PRECISION, NULL, 0, -1},
        {"q-cache", 0, MR_OPT_STRING, &ctx.recon.q_cache, "DIR",
         "directory of the Q cache shared by the workers: scans with one trajectory compute Q once (default: "
         "$MRIRECON_CACHE_DIR/q, else ~/.cache/mrirecon/q; off: none; docs/RECON.md)",
         NULL, 0, -1},
        {"verbose", 'v', MR_OPT_FLAG, &verbose, NULL, "more diagnostics", NULL, 0, -1},
        {"quiet", 'q', MR_OPT_FLAG, &quiet, NULL, "warnings and errors only, no progress", NULL, 0, -1},
    };
    const mr_cmd_spec spec = {"batch", "INPUT... -o OUTDIR", "reconstruct many scans with progress, summaries and resume",
                              batch_description, opts, (int)(sizeof opts / sizeof opts[0]), 1, -1};
    mr_opts_result res;
    int rc = mr_opts_begin(&spec, argc, argv, &res, &verbose, &quiet);
    if (rc != MR_OPTS_GO)
        return rc;
    if ((!outdir || !outdir[0]) || (resume && force)) {
        mr_opts_free(&res);
        return mr_opts_usage(&spec, "%s", resume && force ? "--resume and --force exclude each other" : "missing -o OUTDIR");
    }
    ctx.recon.op.basis = strcmp(basis, "dirac") == 0 ? MR_BASIS_DIRAC : MR_BASIS_BOX;

    mr_batch_list list;
    mr_status st = mr_batch_collect((const char *const *)res.positional, res.npositional, &list);
    mr_opts_free(&res);
    if (st != MR_OK) {
        fprintf(stderr, "mrirecon batch: %s\n", mr_last_error());
        return MR_EXIT_FAILURE;
    }
    if (list.count == 0) {
        fprintf(stderr, "mrirecon batch: no scans found in the inputs\n");
        mr_batch_list_free(&list);
        return MR_EXIT_FAILURE;
    }

    /* workers: one per GPU, or CPU workers sharing the cores */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1)
        cores = 1;
    int ngpu = device.kind == MR_DEVICE_CPU ? 0 : mr_batch_gpu_count();
    if (device.kind == MR_DEVICE_GPU && (ngpu == 0 || device.index >= ngpu)) {
        char req[32];
        mr_device_format(device, req, sizeof req);
        fprintf(stderr, "mrirecon batch: --device %s: %s\n", req,
                ngpu == 0 ? "no usable GPU" : "no such GPU (see --device gpu)");
        mr_batch_list_free(&list);
        return MR_EXIT_FAILURE;
    }
    if (device.index >= 0 && device.index >= ngpu)
        ngpu = 0; /* auto with gpu:N that does not exist: CPU workers */
    ctx.cpu_only = ngpu == 0;
    ctx.gpu_required = device.kind == MR_DEVICE_GPU;
    if (jobs == 0)
        jobs = ngpu > 0 ? (device.index >= 0 ? 1 : ngpu) : (int)(cores / 4 > 1 ? cores / 4 : 1);
    if (jobs > list.count)
        jobs = list.count;
    if (threads == 0)
        threads = (int)(cores / jobs > 1 ? cores / jobs : 1);
    int *gpus = NULL;
    if (ngpu > 0) {
        gpus = malloc((size_t)jobs * sizeof *gpus);
        if (!gpus) {
            fprintf(stderr, "mrirecon batch: out of memory\n");
            mr_batch_list_free(&list);
            return MR_EXIT_FAILURE;
        }
        for (int w = 0; w < jobs; w++)
            gpus[w] = device.index >= 0 ? device.index : w % ngpu;
    }
    char fingerprint[512];
    snprintf(fingerprint, sizeof fingerprint, "method=%s iters=%d tol=%.17g lambda=%.17g reg=%s dcf=%s basis=%s",
             ctx.recon.method, ctx.recon.iters, ctx.recon.tol, ctx.recon.lambda, ctx.recon.reg, ctx.recon.dcf, basis);
    mr_log(MR_LOG_INFO, "batch: %d scan%s, %d worker%s (%s), %d thread%s each", list.count, list.count > 1 ? "s" : "",
           jobs, jobs > 1 ? "s" : "", ngpu > 0 ? "GPU" : "CPU", threads, threads > 1 ? "s" : "");

    mr_batch_config cfg = {outdir,  resume ? MR_BATCH_RESUME : (force ? MR_BATCH_FORCE : MR_BATCH_FRESH),
                           jobs,    gpus,
                           threads, timeout,
                           fingerprint,
                           quiet ? 0 : (isatty(STDERR_FILENO) ? 2 : 1),
                           batch_job, &ctx};
    int interrupted = 0;
    st = mr_batch_run(&cfg, &list, &interrupted);
    free(gpus);
    if (st == MR_EINVAL) { /* OUTDIR not empty: nothing was touched */
        fprintf(stderr, "mrirecon batch: %s\n", mr_last_error());
        mr_batch_list_free(&list);
        return MR_EXIT_USAGE;
    }
    int failed = st != MR_OK, started = 0;
    if (failed)
        fprintf(stderr, "mrirecon batch: %s\n", mr_last_error());
    for (int i = 0; i < list.count; i++)
        started |= list.scans[i].state != MR_BATCH_PENDING;
    if (!started) { /* OUTDIR unusable: nothing ran, nothing to summarise */
        mr_batch_list_free(&list);
        return interrupted ? MR_EXIT_INTERRUPTED : MR_EXIT_FAILURE;
    }
    int counts[3] = {0, 0, 0};
    for (int i = 0; i < list.count; i++) {
        mr_batch_state s = list.scans[i].state;
        counts[s == MR_BATCH_DONE_NOW || s == MR_BATCH_RESUMED ? 0 : (s == MR_BATCH_FAILED ? 1 : 2)]++;
    }
    char title[4200];
    snprintf(title, sizeof title, "mrirecon batch: %s", outdir);
    if (mr_batch_write_summary(outdir, &list, title) != MR_OK) {
        fprintf(stderr, "mrirecon batch: %s\n", mr_last_error());
        failed = 1;
    }
    if (!quiet)
        fprintf(stderr, "batch: %d scans: %d succeeded, %d failed, %d not finished; summary in %s/summary.html\n",
                list.count, counts[0], counts[1], counts[2], outdir);
    mr_batch_list_free(&list);
    if (interrupted)
        return MR_EXIT_INTERRUPTED;
    return failed || counts[1] || counts[2] ? MR_EXIT_FAILURE : MR_EXIT_OK;
}
