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
#include "cmd_args.h"
#include "commands.h"
#include "../cluster/mpi_batch.h"
#include "../cluster/mpi_comm.h"
#include "opts.h"
#include "../pipeline/pipeline.h"

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

/* The GPUs this process's workers use (*mine, *nmine; malloc'ed, also on failure: free it): none for --device
 * cpu; gpu:N pins every worker (of every rank) to GPU N; over MPI the ranks of a node split its GPUs by
 * node-local rank. --device gpu without a usable GPU (or gpu:N without GPU N) fails; auto with a gpu:N that
 * does not exist takes CPU workers. Under MPI every rank agrees on the outcome. */
static mr_status process_gpus(mr_device_sel device, mr_comm *comm, mr_mpi_batch *mb, int **mine, int *nmine)
{
    int ngpu = device.kind == MR_DEVICE_CPU ? 0 : mr_batch_gpu_count();
    mr_status st = MR_OK;
    if (device.kind == MR_DEVICE_GPU && (ngpu == 0 || device.index >= ngpu)) {
        char req[MR_DEVICE_TEXT];
        mr_device_format(device, req, sizeof req);
        st = mr_error(MR_ENODEV, "--device %s: %s", req, ngpu == 0 ? "no usable GPU" : "no such GPU (see --device gpu)");
    }
    if (device.index >= 0 && device.index >= ngpu)
        ngpu = 0; /* auto with gpu:N that does not exist: CPU workers */
    *nmine = 0;
    *mine = malloc((size_t)(ngpu > 0 ? ngpu : 1) * sizeof **mine);
    if (!*mine)
        st = mr_error(MR_ENOMEM, "out of memory");
    else if (ngpu > 0 && device.index >= 0)
        (*mine)[(*nmine)++] = device.index;
    else if (mb)
        *nmine = mr_mpi_node_gpus(comm, ngpu, *mine);
    else
        for (*nmine = 0; *nmine < ngpu; (*nmine)++)
            (*mine)[*nmine] = *nmine;
    if (mb)
        st = mr_comm_agree(comm, st);
    return st;
}

/* Rank 0 after the scans: summary.csv/.md/.html and the closing line; 1 when writing the summary failed.
 * counts: succeeded, failed, not finished. */
static int summarise(const char *outdir, const mr_batch_list *list, int lost, int quiet, int counts[3])
{
    int failed = 0;
    for (int i = 0; i < list->count; i++) {
        mr_batch_state s = list->scans[i].state;
        counts[s == MR_BATCH_DONE_NOW || s == MR_BATCH_RESUMED ? 0 : (s == MR_BATCH_FAILED ? 1 : 2)]++;
    }
    char title[4200];
    snprintf(title, sizeof title, "mrirecon batch: %s", outdir);
    if (mr_batch_write_summary(outdir, list, title) != MR_OK) {
        fprintf(stderr, "mrirecon batch: %s\n", mr_last_error());
        failed = 1;
    }
    if (!quiet) {
        char ranks[64] = "";
        if (lost)
            snprintf(ranks, sizeof ranks, "; %d rank%s lost", lost, lost > 1 ? "s" : "");
        fprintf(stderr, "batch: %d scans: %d succeeded, %d failed, %d not finished%s; summary in %s/summary.html\n",
                list->count, counts[0], counts[1], counts[2], ranks, outdir);
    }
    return failed;
}

/* The batch after its command line was parsed and checked (b->res holds the inputs; freed here). */
static int run_batch(mr_batch_args *b)
{
    batch_job_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.recon = b->r.o;
    const mr_cmd_spec spec = b->spec;
    mr_opts_result res = b->res;
    const char *outdir = b->outdir;
    const mr_device_sel device = b->r.device;
    int jobs = b->jobs, threads = b->threads;
    const int resume = b->resume, force = b->force, quiet = b->quiet;
    const double timeout = b->timeout, rank_timeout = b->rank_timeout;

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
    int *mine = NULL, ngpu = 0;
    st = process_gpus(device, comm, mb, &mine, &ngpu);
    if (st != MR_OK) {
        if (root)
            fprintf(stderr, "mrirecon batch: %s\n", mr_last_error());
        free(mine);
        mr_batch_list_free(&list);
        return end_mpi(comm, mb, MR_EXIT_FAILURE, 0);
    }
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
    /* the settings a finished scan must share to be kept by --resume: recon's shared option block, derived
       from its table (recon/cli/cmd_args.h), so that no option can be left out by hand */
    char fingerprint[MR_BATCH_FINGERPRINT_MAX];
    if (mr_recon_args_fingerprint(&b->r, fingerprint, sizeof fingerprint) != MR_OK) {
        fprintf(stderr, "mrirecon batch: %s\n", mr_last_error());
        free(gpus);
        mr_batch_list_free(&list);
        return end_mpi(comm, mb, MR_EXIT_FAILURE, 0);
    }

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
    failed |= summarise(outdir, &list, lost, quiet, counts);
    mr_batch_list_free(&list);
    if (interrupted)
        return end_mpi(comm, mb, MR_EXIT_INTERRUPTED, lost);
    return end_mpi(comm, mb, failed || counts[1] || counts[2] || lost ? MR_EXIT_FAILURE : MR_EXIT_OK, lost);
}

int mr_cmd_batch(int argc, char **argv)
{
    mr_batch_args *b = malloc(sizeof *b); /* the tables are large for a stack */
    if (!b) {
        fprintf(stderr, "mrirecon batch: out of memory\n");
        return MR_EXIT_FAILURE;
    }
    mr_batch_args_init(b);
    int rc = mr_batch_args_parse(b, argc, argv);
    if (rc != MR_OPTS_GO) {
        free(b);
        return rc;
    }
    rc = run_batch(b);
    free(b);
    return rc;
}
