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

#include "../../base/log.h"
#include "../batch/batch.h"
#include "cg_cli.h"
#include "commands.h"
#include "../cluster/mpi_batch.h"
#include "../cluster/mpi_comm.h"
#include "applies.h"
#include "opts.h"
#include "../report/outputs.h"
#include "../pipeline/pipeline.h"
#include "read_cli.h"

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

/* Under an MPI launcher: MPI up and, with two or more ranks, the batch's part of the job in *mb
 * (NULL: a batch of this process alone). A binary without MPI refuses to run as one of several
 * ranks: each would run the whole batch into the same OUTDIR. */
static mr_status start_mpi(mr_comm **comm, mr_mpi_batch **mb, double rank_timeout)
{
    *mb = NULL;
    mr_status st = mr_comm_start(comm);
    if (st == MR_OK && *comm && mr_comm_size(*comm) > 1)
        st = mr_mpi_batch_create(*comm, rank_timeout, mb);
    return st;
}

/* Release MPI (collective: every rank gets here) and pass the exit code through. A job that lost a
 * rank is ended with MPI_Abort instead: MPI_Finalize would wait for the lost rank forever. Either has
 * the rank timeout as its deadline. */
static int end_mpi(mr_comm *comm, mr_mpi_batch *mb, int code, int lost)
{
    /* MPI_Finalize and MPI_Abort with a deadline: a rank that never comes, or a runtime that lost a
       process (Open MPI 4.1 --enable-recovery), must not keep this process waiting */
    const double deadline = mb ? mr_mpi_batch_timeout(mb) : 0;
    mr_mpi_batch_free(mb);
    if (lost)
        mr_log(MR_LOG_WARN, "batch: ending the MPI job with MPI_Abort (exit status %d): a lost rank cannot take part "
                            "in MPI_Finalize", code);
    mr_comm_end(comm, code, lost, deadline);
    return code;
}

static const char batch_description[] =
    "Each INPUT is a scan file (mrirecon HDF5, ISMRMRD or a BART NAME_ksp, as 'mrirecon recon' reads\n"
    "them), a directory (its *.h5, *.mrd and BART *_ksp.cfl files, sorted by name, not recursive) or a list\n"
    "file (@FILE, or a name ending in .txt or .lst: one path per line, relative paths relative to the\n"
    "list file, '#' starts a comment). Each scan is reconstructed in its own child process into\n"
    "OUTDIR/<name>/ (the files of 'mrirecon recon', plus the marker .done and two thumbnails; a\n"
    "multi-volume ISMRMRD scan gets one folder per volume inside), where <name> is the file name without\n"
    ".h5/.mrd/_ksp.cfl (a repeated name gets -2, -3, ... in input order).\n"
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
    "\n"
    "Several hosts (MPI builds): 'mpirun -n P mrirecon batch ...' (or srun) shares the scans among\n"
    "P ranks: rank 0 hands them out, big scans first, runs some itself, prints the progress and\n"
    "writes the summary; OUTDIR must be on a file system all ranks share. --device, --jobs and\n"
    "--threads apply per rank: the ranks of a node split its GPUs (by node-local rank) or its\n"
    "cores. A rank that dies is reported and its running scans fail; --resume redoes them\n"
    "(docs/CLUSTER.md: Open MPI ends the whole job on a dead rank unless --enable-recovery).\n"
    "Exit status: 0 every scan succeeded, 1 some scans failed (or the batch itself failed),\n"
    "2 usage error (also: OUTDIR not empty without --resume/--force), 130 interrupted (SIGINT or\n"
    "SIGTERM: running scans are killed, their partial folders removed, the summary written).";

int mr_cmd_batch(int argc, char **argv)
{
    batch_job_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    mr_recon_opts_default(&ctx.recon);
    const char *outdir = NULL;
    mr_cg_cli cg;
    mr_cg_cli_init(&cg, &ctx.recon);
    mr_device_sel device = {.kind = MR_DEVICE_AUTO, .index = -1};
    int jobs = 0, threads = 0, resume = 0, force = 0, verbose = 0, quiet = 0;
    double timeout = 0, rank_timeout = 60;
    static const char *const dcfs[] = {"pipe", "file", "analytic", NULL};
    static const char *const senses[] = {"auto", "file", "estimate", "espirit", "walsh", "rss", NULL};
    static const char *const niftis[] = {"magnitude", "complex", "none", NULL};
    mr_read_cli rdc;
    mr_read_cli_init(&rdc);
    const char *formats = NULL;
    if (!ctx.recon.dcf)
        ctx.recon.dcf = "pipe";
    const mr_opt opts[] = {
        {"output", 'o', MR_OPT_STRING, &outdir, "OUTDIR", "output folder (required)", NULL, 0, -1},
        {"method", 'm', MR_OPT_STRING, &ctx.recon.method, "LIST", MR_OPT_HELP_METHOD, NULL, 0, -1},
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
        {"iters", 'n', MR_OPT_INT_OR_0, &ctx.recon.iters, "N", MR_OPT_HELP_ITERS, NULL, 1, 100000},
        {"tol", 0, MR_OPT_DOUBLE, &ctx.recon.tol, "TOL", MR_OPT_HELP_TOL, NULL, 0, 1},
        MR_CG_CLI_OPTS(&cg, &ctx.recon),
        {"dcf", 0, MR_OPT_CHOICE, &ctx.recon.dcf, "D", "gridding density compensation", dcfs, 0, -1},
        {"precision", 0, MR_OPT_PRECISION, &ctx.recon.op.precision, "P", MR_OPT_HELP_PRECISION, NULL, 0, -1},
        {"q-cache", 0, MR_OPT_STRING, &ctx.recon.q_cache, "DIR",
         "directory of the Q cache shared by the workers: scans with one trajectory compute Q once (default: "
         "$MRIRECON_CACHE_DIR/q, else ~/.cache/mrirecon/q; off: none; docs/RECON.md)",
         NULL, 0, -1},
        {"rank-timeout", 0, MR_OPT_DOUBLE, &rank_timeout, "SEC",
         "under mpirun: a rank silent this long is declared lost (its scans fail)", NULL, 1, 1e9},
        {"sens", 0, MR_OPT_CHOICE, &ctx.recon.sens, "S",
         "coils: the scan's maps (file), maps estimated from the data (estimate = espirit, or walsh), each coil + "
         "RSS (rss); auto = file when the scan has maps, else estimate",
         senses, 0, -1},
        {"coils-compress", 0, MR_OPT_INT, &ctx.recon.coils_compress, "K",
         "compress the coils to K virtual coils (SVD) before anything else (0: off)", NULL, 0, MR_MAX_COILS},
        {"volume", 0, MR_OPT_INT, &ctx.recon.volume, "N", "only volume N of every scan (-1: every volume)",
         NULL, -1, 1000000},
        {"nifti", 0, MR_OPT_CHOICE, &ctx.recon.nifti, "K", "image_<method>.nii: magnitude, complex or none", niftis, 0,
         -1},
        {"format", 0, MR_OPT_STRING, &formats, "LIST", MR_OUTPUTS_FORMAT_HELP, NULL, 0, -1},
        MR_READ_CLI_OPTS(&rdc),
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
    if ((rc = mr_cg_cli_apply(&spec, &cg, &ctx.recon)) != MR_EXIT_OK ||
        (rc = mr_opts_check_precision(&spec, ctx.recon.op.precision, device)) != MR_EXIT_OK) {
        mr_opts_free(&res);
        return rc;
    }
    if (mr_read_cli_apply(&rdc, &ctx.recon.read, &ctx.recon.prewhiten) != MR_OK ||
        mr_outputs_parse_formats(formats, mr_opts_given(&spec, &res, "nifti") ? ctx.recon.nifti : NULL,
                                 &ctx.recon.formats) != MR_OK) {
        mr_opts_free(&res);
        return mr_opts_usage(&spec, "%s", mr_last_error());
    }
    if ((rc = mr_method_options_check(&spec, &res, ctx.recon.method)) != MR_EXIT_OK) {
        mr_opts_free(&res);
        return rc;
    }

    /* under mpirun: one batch over all ranks (recon/cluster/mpi_batch.h); rank 0 alone collects the inputs */
    mr_comm *comm = NULL;
    mr_mpi_batch *mb = NULL;
    mr_status st = start_mpi(&comm, &mb, rank_timeout);
    if (st != MR_OK) {
        fprintf(stderr, "mrirecon batch: %s\n", mr_last_error());
        mr_opts_free(&res);
        mr_comm_finalize(comm);
        return MR_EXIT_FAILURE;
    }
    const int root = !mb || mr_comm_rank(comm) == 0;
    mr_batch_list list;
    memset(&list, 0, sizeof list);
    st = root ? mr_batch_collect((const char *const *)res.positional, res.npositional, &list) : MR_OK;
    mr_opts_free(&res);
    /* reader options that apply to none of the inputs' formats are refused (usage error): accepted when
       every option given applies to at least one scan */
    int usage = 0;
    for (int i = 0, ok = 0; root && st == MR_OK && !ok && i < list.count; i++) {
        ok = mr_read_cli_check(&spec, &res, &ctx.recon.read, list.scans[i].path) == MR_OK;
        if (!ok && i + 1 == list.count) {
            char why[1024];
            snprintf(why, sizeof why, "%s", mr_last_error()); /* mr_error writes the buffer it would read */
            st = mr_error(MR_EINVAL, "%s%s", why, list.count > 1 ? " (and so for every input of the batch)" : "");
            usage = 1;
        }
    }
    if (mb)
        st = mr_mpi_batch_share_list(mb, &list, st);
    if (st != MR_OK || list.count == 0) {
        if (root && usage)
            mr_opts_usage(&spec, "%s", mr_last_error());
        else if (root)
            fprintf(stderr, "mrirecon batch: %s\n", st != MR_OK ? mr_last_error() : "no scans found in the inputs");
        mr_batch_list_free(&list);
        return end_mpi(comm, mb, usage ? MR_EXIT_USAGE : MR_EXIT_FAILURE, 0);
    }

    /* workers: one per GPU, or CPU workers sharing the cores (of this rank's share of the node) */
    long cores = mb ? mr_mpi_node_cores(comm) : sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1)
        cores = 1;
    int ngpu = device.kind == MR_DEVICE_CPU ? 0 : mr_batch_gpu_count();
    st = MR_OK;
    if (device.kind == MR_DEVICE_GPU && (ngpu == 0 || device.index >= ngpu)) {
        char req[MR_DEVICE_TEXT];
        mr_device_format(device, req, sizeof req);
        st = mr_error(MR_ENODEV, "--device %s: %s", req, ngpu == 0 ? "no usable GPU" : "no such GPU (see --device gpu)");
    }
    if (device.index >= 0 && device.index >= ngpu)
        ngpu = 0; /* auto with gpu:N that does not exist: CPU workers */
    /* this process's GPUs: gpu:N pins every worker (of every rank) to GPU N; over MPI the ranks of a
       node split its GPUs by node-local rank */
    int *mine = malloc((size_t)(ngpu > 0 ? ngpu : 1) * sizeof *mine);
    int nmine = 0;
    if (!mine)
        st = mr_error(MR_ENOMEM, "out of memory");
    else if (ngpu > 0 && device.index >= 0)
        mine[nmine++] = device.index;
    else if (mb)
        nmine = mr_mpi_node_gpus(comm, ngpu, mine);
    else
        for (nmine = 0; nmine < ngpu; nmine++)
            mine[nmine] = nmine;
    if (mb)
        st = mr_comm_agree(comm, st);
    if (st != MR_OK) {
        if (root)
            fprintf(stderr, "mrirecon batch: %s\n", mr_last_error());
        free(mine);
        mr_batch_list_free(&list);
        return end_mpi(comm, mb, MR_EXIT_FAILURE, 0);
    }
    ngpu = nmine;
    ctx.cpu_only = ngpu == 0;
    ctx.gpu_required = device.kind == MR_DEVICE_GPU;
    if (jobs == 0)
        jobs = ngpu > 0 ? ngpu : (int)(cores / 4 > 1 ? cores / 4 : 1);
    if (jobs > list.count)
        jobs = list.count;
    if (threads == 0)
        threads = (int)(cores / jobs > 1 ? cores / jobs : 1);
    int *gpus = NULL;
    if (ngpu > 0) {
        gpus = malloc((size_t)jobs * sizeof *gpus);
        if (!gpus) {
            fprintf(stderr, "mrirecon batch: out of memory\n");
            free(mine);
            mr_batch_list_free(&list);
            return end_mpi(comm, mb, MR_EXIT_FAILURE, 0);
        }
        for (int w = 0; w < jobs; w++)
            gpus[w] = mine[w % ngpu];
    }
    free(mine);
    char where[300] = "";
    if (mb)
        snprintf(where, sizeof where, " on rank %d of %d (%s, local rank %d)", mr_comm_rank(comm), mr_comm_size(comm),
                 mr_comm_host(comm), mr_comm_local_rank(comm));
    mr_log(MR_LOG_INFO, "batch: %d scan%s, %d worker%s (%s), %d thread%s each%s", list.count, list.count > 1 ? "s" : "",
           jobs, jobs > 1 ? "s" : "", ngpu > 0 ? "GPU" : "CPU", threads, threads > 1 ? "s" : "", where);
    if (ngpu > 0)
        for (int w = 0; w < jobs; w++)
            mr_log(MR_LOG_DEBUG, "batch: worker %d on gpu:%d%s", w, gpus[w], where);
    char fingerprint[1024];
    snprintf(fingerprint, sizeof fingerprint,
             "method=%s iters=%d tol=%.17g lambda=%.17g lambda_rel=%.17g reg=%s solver=%s dcf=%s basis=%s sens=%s "
             "volume=%d nifti=%s units=%s sign=%s prewhiten=%s space=%s averages=%s matrix=%s fov=%s precision=%s%s%s "
             "model=%s nufft_tol=%.17g check=%d fieldmap=%s fieldmap_model=%s fieldmap_tol=%.17g fieldmap_units=%s "
             "coils_compress=%d",
             ctx.recon.method, ctx.recon.iters, ctx.recon.tol, ctx.recon.lambda, ctx.recon.lambda_rel, ctx.recon.reg,
             mr_solver_name(ctx.recon.solver),
             ctx.recon.dcf, cg.basis, ctx.recon.sens, ctx.recon.volume, ctx.recon.nifti, rdc.units, rdc.sign,
             rdc.prewhiten, rdc.space, rdc.averages, rdc.matrix ? rdc.matrix : "-", rdc.fov ? rdc.fov : "-",
             mr_precision_name(ctx.recon.op.precision), formats ? " format=" : "", formats ? formats : "",
             mr_model_name(ctx.recon.model), ctx.recon.nufft_tol, ctx.recon.check,
             ctx.recon.fieldmap ? ctx.recon.fieldmap : "-", ctx.recon.fieldmap_model, ctx.recon.fieldmap_tol,
             ctx.recon.fieldmap_units, ctx.recon.coils_compress);

    mr_batch_config cfg = {outdir,  resume ? MR_BATCH_RESUME : (force ? MR_BATCH_FORCE : MR_BATCH_FRESH),
                           jobs,    gpus,
                           threads, timeout,
                           fingerprint,
                           quiet ? 0 : (isatty(STDERR_FILENO) ? 2 : 1),
                           batch_job, &ctx,
                           NULL,    NULL};
    if (mb)
        mr_mpi_batch_configure(mb, &cfg);
    int interrupted = 0;
    st = mr_batch_run(&cfg, &list, &interrupted);
    free(gpus);
    int lost = mb ? mr_mpi_batch_end(mb, &list, st) : 0;
    if (!root) { /* a worker: rank 0 reports and writes the summary */
        if (st != MR_OK)
            fprintf(stderr, "mrirecon batch: rank %d: %s\n", mr_comm_rank(comm), mr_last_error());
        mr_batch_list_free(&list);
        return end_mpi(comm, mb, lost ? MR_EXIT_FAILURE : MR_EXIT_OK, lost);
    }
    if (st == MR_EINVAL) { /* OUTDIR not empty: nothing was touched */
        fprintf(stderr, "mrirecon batch: %s\n", mr_last_error());
        mr_batch_list_free(&list);
        return end_mpi(comm, mb, MR_EXIT_USAGE, lost);
    }
    int failed = st != MR_OK, started = 0;
    if (failed)
        fprintf(stderr, "mrirecon batch: %s\n", mr_last_error());
    for (int i = 0; i < list.count; i++)
        started |= list.scans[i].state != MR_BATCH_PENDING;
    if (!started) { /* OUTDIR unusable: nothing ran, nothing to summarise */
        mr_batch_list_free(&list);
        return end_mpi(comm, mb, interrupted ? MR_EXIT_INTERRUPTED : MR_EXIT_FAILURE, lost);
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
    if (!quiet) {
        char ranks[64] = "";
        if (lost)
            snprintf(ranks, sizeof ranks, "; %d rank%s lost", lost, lost > 1 ? "s" : "");
        fprintf(stderr, "batch: %d scans: %d succeeded, %d failed, %d not finished%s; summary in %s/summary.html\n",
                list.count, counts[0], counts[1], counts[2], ranks, outdir);
    }
    mr_batch_list_free(&list);
    if (interrupted)
        return end_mpi(comm, mb, MR_EXIT_INTERRUPTED, lost);
    return end_mpi(comm, mb, failed || counts[1] || counts[2] || lost ? MR_EXIT_FAILURE : MR_EXIT_OK, lost);
}
