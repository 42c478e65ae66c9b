/* mrirecon recon SCAN -o OUTDIR [options]: one scan (any input format, every volume) through
 * recon/pipeline/pipeline.c. Prints a short result table per volume on stdout; diagnostics (and the CG
 * progress with -v) go to stderr. The option table and its checks are recon/cli/cmd_args.c (shared with
 * the C API, recon/api/api.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/log.h"
#include "../../gpu/gpu.h"
#include "../../solver/nudft.h"
#include "cmd_args.h"
#include "commands.h"
#include "../cluster/mpi_batch.h"
#include "../cluster/mpi_comm.h"
#include "../cluster/mpi_recon.h"
#include "opts.h"
#include "../pipeline/outdir.h"
#include "../pipeline/pipeline.h"
#include "progress_ui.h"
#include "../report/report.h"

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

/* Under mpirun with several ranks: MPI up, and in *split this rank's part of the split sums
 * (recon/cluster/mpi_recon.h): the CPU cores of its share of the node, or with a GPU requested (or auto and
 * GPUs present) its GPU by node-local rank as the batch picks them (gpu:N, or a list's first GPU N: GPU N
 * on every rank; each rank's sums run on one GPU).
 * Collective: every rank gets the same status. *split stays NULL for a plain process or one rank.
 * *gpu: the GPU of this rank's sums (-1: the CPU), where rank 0 also runs CG. */
static mr_status start_split(mr_comm **comm, mr_mpi_recon **split, mr_device_sel device, int threads, int *gpu,
                             char *engine, size_t engine_size)
{
    *split = NULL;
    *gpu = -1;
    mr_status st = mr_comm_start(comm);
    if (st != MR_OK || !*comm || mr_comm_size(*comm) < 2)
        return st;
    mr_split_opts so;
    mr_split_opts_default(&so);
    so.threads = threads > 0 ? threads : mr_mpi_node_cores(*comm);
    const int ngpu = device.kind == MR_DEVICE_CPU ? 0 : mr_gpu_count();
    if (ngpu > 0 && device.index >= 0 && device.index < ngpu) {
        so.device = device.index;
    } else if (ngpu > 0 && device.index < 0) {
        int mine[64];
        if (mr_mpi_node_gpus(*comm, ngpu < 64 ? ngpu : 64, mine) > 0)
            so.device = mine[0];
    }
    if (device.kind == MR_DEVICE_GPU && so.device < 0) { /* the other ranks' messages get "rank R (host): " */
        char req[MR_DEVICE_TEXT];
        mr_device_format(device, req, sizeof req);
        st = mr_error(MR_ENODEV, "--device %s: %s", req, ngpu == 0 ? "no usable GPU" : "no such GPU");
    }
    if (st == MR_OK)
        st = mr_mpi_recon_create(*comm, &so, split);
    *gpu = so.device;
    st = mr_comm_agree(*comm, st);
    if (st != MR_OK) {
        mr_mpi_recon_free(*split);
        *split = NULL;
        return st;
    }
    /* what the ranks really run (for the report): mpi_split's CUDA-core kernels on a GPU, else the CPU
       kernels; the ranks may differ */
    const double on_gpu = so.device >= 0 ? 1 : 0, any_gpu = mr_comm_max(*comm, on_gpu),
                 all_gpu = -mr_comm_max(*comm, -on_gpu);
    const char *level = mr_nudft_kernel_name();
    char cpu[40];
    snprintf(cpu, sizeof cpu, "cpu %.16s kernels", level ? level : "(unavailable)");
    const char *gpu_kernels = "gpu sfu (CUDA-core kernels)";
    if (all_gpu > 0)
        snprintf(engine, engine_size, "MPI split over %d ranks: %s on every rank's GPU", mr_comm_size(*comm),
                 gpu_kernels);
    else if (any_gpu > 0)
        snprintf(engine, engine_size, "MPI split over %d ranks: %s where a rank has a GPU, else %s",
                 mr_comm_size(*comm), gpu_kernels, cpu);
    else
        snprintf(engine, engine_size, "MPI split over %d ranks: %s on every rank", mr_comm_size(*comm), cpu);
    mr_log(MR_LOG_DEBUG, "recon: rank %d of %d (%s, local rank %d): sums on %s%d%s", mr_comm_rank(*comm),
           mr_comm_size(*comm), mr_comm_host(*comm), mr_comm_local_rank(*comm), so.device >= 0 ? "gpu:" : "",
           so.device >= 0 ? so.device : so.threads, so.device >= 0 ? "" : " CPU threads");
    return MR_OK;
}

/* The end of a run over ranks: rank 0 tells the others its exit status; MPI released (collective), or
 * the job ended with MPI_Abort when the ranks are out of step. Returns code. */
static int end_split(mr_comm *comm, mr_mpi_recon *split, int code)
{
    if (split && mr_comm_rank(comm) == 0 && mr_mpi_recon_end(split, code) != MR_OK) {
        fprintf(stderr, "mrirecon recon: %s; ending the MPI job with MPI_Abort\n", mr_last_error());
        mr_comm_abort(comm, code != MR_EXIT_OK ? code : MR_EXIT_FAILURE);
    }
    mr_mpi_recon_free(split);
    mr_comm_finalize(comm);
    return code;
}

/* Ranks > 0: compute rank 0's sums until it ends; exit with its status. */
static int serve_split(mr_comm *comm, mr_mpi_recon *split)
{
    mr_log_set_level(MR_LOG_ERROR); /* rank 0 alone logs (it reports the other ranks' failures) */
    int code = MR_EXIT_FAILURE;
    if (mr_mpi_recon_serve(split, &code) != MR_OK) {
        fprintf(stderr, "mrirecon recon: rank %d (%s): %s; ending the MPI job with MPI_Abort\n", mr_comm_rank(comm),
                mr_comm_host(comm), mr_last_error());
        mr_comm_abort(comm, MR_EXIT_FAILURE);
    }
    mr_mpi_recon_free(split);
    mr_comm_finalize(comm);
    return code;
}

int mr_cmd_recon(int argc, char **argv)
{
    mr_recon_args a;
    mr_recon_args_init(&a);
    a.need_outdir = 1;
    int rc = mr_recon_args_parse(&a, argc, argv);
    if (rc != MR_OPTS_GO)
        return rc;
    const mr_cmd_spec spec = a.spec;
    const char *scan = a.scan, *outdir = a.outdir;
    mr_recon_opts o = a.o;
    mr_device_sel device = a.device;
    const int quiet = a.quiet;

    /* under mpirun with several ranks: rank 0 reconstructs, the others compute its sums' slabs */
    mr_comm *comm = NULL;
    mr_mpi_recon *split = NULL;
    int split_gpu = -1;
    char split_engine[128] = "";
    mr_status st = start_split(&comm, &split, device, o.op.threads, &split_gpu, split_engine, sizeof split_engine);
    if (st != MR_OK) {
        if (!comm || mr_comm_rank(comm) == 0)
            fprintf(stderr, "mrirecon recon: %s\n", mr_last_error());
        mr_comm_finalize(comm);
        return MR_EXIT_FAILURE;
    }
    if (split && mr_comm_rank(comm) > 0)
        return serve_split(comm, split);
    if (split) {
        o.op.sums.fn = mr_mpi_recon_sums;
        o.op.sums.ctx = split;
        o.op.sums.name = split_engine;
        mr_log(MR_LOG_INFO, "recon: Q and F^H d split over %d MPI ranks; rank 0 on %s", mr_comm_size(comm),
               mr_comm_host(comm));
    }
    if (mr_outdir_check(outdir, o.force) == MR_EINVAL) /* another run's outputs: a usage error, as in batch */
        return end_split(comm, split, mr_opts_usage(&spec, "%s", mr_last_error()));
    if (split && split_gpu >= 0) /* CG on the GPU of rank 0's slabs */
        device.index = split_gpu;
    mr_op_opts_set_device(&o.op, device);
    o.on_report = print_table;
    /* this process is done with the GPU after the run: its teardown overlaps with the outputs
     * (MR_GPU_RELEASE=exit keeps it for the process's end, for comparisons) */
    const char *rel = getenv("MR_GPU_RELEASE");
    o.release_device = !(rel && !strcmp(rel, "exit"));
    mr_progress_ui ui;
    mr_progress_ui_init(&ui, quiet);
    o.progress = mr_progress_ui_sink(&ui);
    st = mr_recon_run(scan, outdir, &o);
    mr_progress_ui_end(&ui);
    if (st != MR_OK) {
        fprintf(stderr, "mrirecon recon: %s\n", mr_last_error());
        return end_split(comm, split, MR_EXIT_FAILURE);
    }
    return end_split(comm, split, MR_EXIT_OK);
}
