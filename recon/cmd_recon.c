/* mrirecon recon SCAN -o OUTDIR [options]: one scan (any input format, every volume) through
 * recon/pipeline.c. Prints a short result table per volume on stdout; diagnostics (and the CG
 * progress with -v) go to stderr. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../base/log.h"
#include "../gpu/gpu.h"
#include "../solver/nudft.h"
#include "cg_cli.h"
#include "commands.h"
#include "mpi_batch.h"
#include "mpi_comm.h"
#include "mpi_recon.h"
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

/* Under mpirun with several ranks: MPI up, and in *split this rank's part of the split sums
 * (recon/mpi_recon.h): the CPU cores of its share of the node, or with a GPU requested (or auto and
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
        "usable GPU it is an error for every method.\n"
        "Several ranks (MPI builds): 'mpirun -n P mrirecon recon SCAN -o OUTDIR ...' (or srun) computes\n"
        "Q and each F^H d in voxel slabs on every rank (its CPU cores, or with --device gpu or gpu:all\n"
        "its GPU by node-local rank; gpu:N, or a list gpu:N,M,..., GPU N on every rank: one GPU per\n"
        "rank) and gathers them on rank 0, which alone reads the scan, runs CG and gridding, and\n"
        "writes the outputs and logs (docs/CLUSTER.md). Every rank exits with rank 0's status.",
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
    if ((rc = mr_opts_check_precision(&spec, o.op.precision, device)) != MR_EXIT_OK)
        return rc;
    if ((rc = mr_cg_cli_apply(&spec, &cg, &o)) != MR_EXIT_OK)
        return rc;
    if (mr_read_cli_apply(&rdc, &o.read, &o.prewhiten) != MR_OK)
        return mr_opts_usage(&spec, "%s", mr_last_error());

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
