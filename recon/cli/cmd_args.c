/* recon/cli/cmd_args.h: the option tables of recon and phantom, their parsing and the checks that need no
 * input. The commands run what these return (recon/cli/cmd_recon.c, recon/cli/cmd_phantom.c); so does the C API
 * (recon/api/api.c). */
#include "cmd_args.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../base/grid.h"
#include "applies.h"
#include "../report/outputs.h"

/* ---- recon ------------------------------------------------------------------------------------- */

/* report.json's "options": the shared block's options with their values (mr_recon_opts.write_options) */
static void block_json(const void *ctx, mr_json_obj *obj)
{
    const mr_recon_args *a = ctx;
    mr_opts_json(a->block, a->nblock, obj);
}

void mr_recon_args_init(mr_recon_args *a)
{
    memset(a, 0, sizeof *a);
    mr_recon_opts *o = &a->o;
    mr_recon_opts_default(o);
    mr_cg_cli_init(&a->cg, o);
    a->device = (mr_device_sel){.kind = MR_DEVICE_AUTO, .index = -1};
    static const char *const dcfs[] = {"pipe", "file", "analytic", NULL};
    static const char *const senses[] = {"auto", "file", "estimate", "espirit", "walsh", "rss", NULL};
    static const char *const niftis[] = {"magnitude", "complex", "none", NULL};
    mr_read_cli_init(&a->rdc);
    /* the command's own options (where and how the run goes: not in the shared block) */
    const mr_opt head[] = {
        {"output", 'o', MR_OPT_STRING, &a->outdir, "OUTDIR", "output directory (created; required)", NULL, 0, -1},
    };
    const mr_opt tail[] = {
        {"device", 0, MR_OPT_DEVICE, &a->device, "D", MR_OPT_HELP_DEVICE, NULL, 0, -1},
        {"q-cache", 0, MR_OPT_STRING, &o->q_cache, "DIR", MR_OPT_HELP_Q_CACHE, NULL, 0, -1},
        {"threads", 0, MR_OPT_INT, &o->op.threads, "T", "CPU threads (0: all cores)", NULL, 0, 4096},
        {"force", 0, MR_OPT_FLAG, &o->force, NULL,
         "OUTDIR may hold an earlier run's outputs: replace them (only the files recon writes are removed)", NULL, 0,
         -1},
        {"verbose", 'v', MR_OPT_FLAG, &a->verbose, NULL, "more diagnostics (CG residual per iteration)", NULL, 0, -1},
        {"quiet", 'q', MR_OPT_FLAG, &a->quiet, NULL, "only warnings and errors on stderr", NULL, 0, -1},
    };
    /* the shared block: every option that shapes the result (also batch's, and its --resume fingerprint) */
    const mr_opt block[] = {
        {"method", 'm', MR_OPT_STRING, &o->method, "LIST", MR_OPT_HELP_METHOD, NULL, 0, -1},
        {"iters", 'n', MR_OPT_INT_OR_0, &o->iters, "N", MR_OPT_HELP_ITERS, NULL, 1, 100000},
        {"tol", 0, MR_OPT_DOUBLE, &o->tol, "T", MR_OPT_HELP_TOL, NULL, 0, 1},
        MR_CG_CLI_OPTS(&a->cg, o),
        {"precision", 0, MR_OPT_PRECISION, &o->op.precision, "P", MR_OPT_HELP_PRECISION, NULL, 0, -1},
        {"sens", 0, MR_OPT_CHOICE, &o->sens, "S",
         "coils: file = SENSE with coil maps (the scan's /kspace/sens or --sens-maps), estimate = SENSE with maps "
         "estimated from the data (ESPIRiT; walsh: Walsh/Inati), rss = each coil alone + root-sum-of-squares, auto "
         "= file when maps exist, else estimate",
         senses, 0, -1},
        {"coils-compress", 0, MR_OPT_INT, &o->coils_compress, "K",
         "compress the coils to K virtual coils (SVD) before anything else (0: off): every coil costs an F^H d",
         NULL, 0, MR_MAX_COILS},
        {"sens-maps", 0, MR_OPT_STRING, &o->sens_maps, "FILE",
         "coil maps from FILE (HDF5 /kspace/sens or /sens, [C][Nz][Ny][Nx][2]) instead of the scan's", NULL, 0, -1},
        {"dcf", 0, MR_OPT_CHOICE, &o->dcf, "W", "gridding density compensation: Pipe-Menon from the trajectory, the file's /kspace/weights, or analytic (radial only)", dcfs,
         0, -1},
        {"oversample", 0, MR_OPT_DOUBLE, &o->oversample, "S", "Kaiser-Bessel grid oversampling", NULL, 1.125, 4},
        {"kernel-width", 0, MR_OPT_INT, &o->kernel_width, "W", "Kaiser-Bessel kernel width in grid cells", NULL, 4, 8},
        {"volume", 0, MR_OPT_INT, &o->volume, "N",
         "reconstruct volume N alone into OUTDIR (-1: every volume, each into OUTDIR/<volume>/; 'mrirecon info' "
         "lists them)",
         NULL, -1, 1000000},
        {"nifti", 0, MR_OPT_CHOICE, &o->nifti, "K", "image_<method>.nii: magnitude (float32), complex (complex64) or none",
         niftis, 0, -1},
        {"format", 0, MR_OPT_STRING, &a->formats, "LIST", MR_OUTPUTS_FORMAT_HELP, NULL, 0, -1},
        {"slice", 0, MR_OPT_STRING, &a->slice_text, "X,Y,Z",
         "3D pictures (image_<method>.png, compare.png): the planes through voxel X,Y,Z instead of the centre", NULL,
         0, -1},
        MR_READ_CLI_OPTS(&a->rdc),
    };
    enum { NHEAD = sizeof head / sizeof head[0], NBLOCK = sizeof block / sizeof block[0] };
    enum { NTAIL = sizeof tail / sizeof tail[0] };
    _Static_assert(NHEAD + NBLOCK + NTAIL <= MR_CMD_ARGS_MAX_OPTS, "recon's table outgrew MR_CMD_ARGS_MAX_OPTS");
    memcpy(a->table, head, sizeof head);
    memcpy(a->table + NHEAD, block, sizeof block);
    memcpy(a->table + NHEAD + NBLOCK, tail, sizeof tail);
    a->block = a->table + NHEAD;
    a->nblock = NBLOCK;
    o->write_options = block_json;
    o->options_ctx = a;
    a->spec = (mr_cmd_spec){
        "recon",
        "SCAN",
        "reconstruct a scan (total variation by default; other priors, CG, gridding baselines)",
        "SCAN is any k-space input, recognised by its content: mrirecon HDF5, ISMRMRD (.h5/.mrd; multi-coil\n"
        "data prewhitened with the noise scans unless --prewhiten off) or a BART pair (NAME_traj + NAME_ksp\n"
        "[+ NAME_sens]). The iterative method (the default) minimises 1/2 ||E x - d||^2 + lambda R(x):\n"
        "total variation with lambda from the noise level (the file's, or estimated from the data) by\n"
        "ADMM (its CG x-updates preconditioned by a circulant model of the system; MR_PRECOND=off: plain\n"
        "CG); --reg chooses other priors (wavelet, both, or the quadratic gradient/identity, solved by\n"
        "CG), --solver the algorithm. E is the exact sums or a NUFFT (--model; auto picks by cost), with\n"
        "the Toeplitz normal operator. --method cg is the quadratic prior by conjugate gradients; the\n"
        "gridding methods grid the density-compensated samples (bilinear or Kaiser-Bessel). Writes into OUTDIR: image_<method>.h5/.png/.nii (NIfTI-1, voxel size\n"
        "from the FOV, scanner placement from ISMRMRD; --format adds BART .hdr/.cfl, ISMRMRD/MRD .mrd and\n"
        "DICOM _0001.dcm ..., all in one orientation: docs/FORMAT.md), convergence.png (CG), compare.png\n"
        "(--method all; 3D: the three planes through the centre or --slice X,Y,Z, labelled),\n"
        "report.json, report.md, metrics.csv. An ISMRMRD scan with several volumes (slices, contrasts,\n"
        "repetitions, ...) is reconstructed volume by volume into OUTDIR/<volume>/ (e.g. OUTDIR/slice001/),\n"
        "with OUTDIR/metrics.csv over all of them; --volume N reconstructs one into OUTDIR. An ISMRMRD\n"
        "volume reconstructed on its encodedSpace grid (readout oversampling) is cropped to reconSpace.\n"
        "Nothing is written when the input or an option is invalid, or any stage fails: the files are\n"
        "written into a hidden staging folder and appear in OUTDIR together. An OUTDIR holding another\n"
        "run's outputs is refused (exit 2) unless --force. Multi-coil scans: SENSE, one operator\n"
        "sum_c S_c^H F^H F S_c and one solve for the combined image, with the coil maps of the scan\n"
        "(/kspace/sens), of --sens-maps, or estimated from the data (the default without maps: ESPIRiT,\n"
        "calibrated on the k-space centre, maps zero outside the object; --sens walsh: Walsh/Inati);\n"
        "--sens rss reconstructs each coil alone and combines them by root-sum-of-squares.\n"
        "--device gpu: the iterative methods run on the GPU (data uploaded once, Q, F^H d, the Toeplitz\n"
        "FFTs, the priors' operators and proximal maps and every vector operation there); gridding always\n"
        "runs on the CPU; without a usable GPU it is an error for every method.\n"
        "Several ranks (MPI builds): 'mpirun -n P mrirecon recon SCAN -o OUTDIR ...' (or srun) computes\n"
        "Q and each F^H d in voxel slabs on every rank (its CPU cores, or with --device gpu or gpu:all\n"
        "its GPU by node-local rank; gpu:N, or a list gpu:N,M,..., GPU N on every rank: one GPU per\n"
        "rank) and gathers them on rank 0, which alone reads the scan, runs CG and gridding, and\n"
        "writes the outputs and logs (docs/CLUSTER.md). Every rank exits with rank 0's status.\n"
        "The same options reach the Python package (docs/PYTHON.md: mrirecon.recon(scan, method=...)).",
        a->table,
        NHEAD + NBLOCK + NTAIL,
        1,
        1,
    };
}

int mr_recon_args_check(mr_recon_args *a, const mr_cmd_spec *spec, const mr_opts_result *res, const char *scan)
{
    mr_recon_opts *o = &a->o;
    int rc;
    if (o->sens_maps && strcmp(o->sens, "auto") && strcmp(o->sens, "file"))
        return mr_opts_usage(spec, "--sens-maps %s and --sens %s exclude each other", o->sens_maps, o->sens);
    if ((rc = mr_opts_check_precision(spec, o->op.precision, a->device)) != MR_EXIT_OK)
        return rc;
    if ((rc = mr_cg_cli_apply(spec, &a->cg, o)) != MR_EXIT_OK)
        return rc;
    if (mr_read_cli_apply(&a->rdc, &o->read, &o->prewhiten) != MR_OK)
        return mr_opts_usage(spec, "%s", mr_last_error());
    if (mr_outputs_parse_formats(a->formats, mr_opts_given(spec, res, "nifti") ? o->nifti : NULL, &o->formats) !=
        MR_OK)
        return mr_opts_usage(spec, "%s", mr_last_error());
    if (scan && a->in_memory) { /* the reader options: those whose value lands in a->rdc */
        for (int i = 0; i < spec->nopts; i++) {
            const char *d = spec->opts[i].dest;
            if (res->given[i] && d >= (const char *)&a->rdc && d < (const char *)(&a->rdc + 1))
                return mr_opts_usage(spec, "--%s applies to reading a scan file; %s is a scan in memory (give the "
                                           "option when reading it)",
                                     spec->opts[i].name, scan);
        }
    } else if (scan && mr_read_cli_check(spec, res, &o->read, scan) != MR_OK) {
        return mr_opts_usage(spec, "%s", mr_last_error());
    }
    if ((rc = mr_method_options_check(spec, res, o->method)) != MR_EXIT_OK)
        return rc;
    if (a->slice_text) {
        double v[3];
        if (mr_opts_parse_list3(a->slice_text, v) != 3)
            return mr_opts_usage(spec, "--slice: '%s' is not X,Y,Z (voxel indices)", a->slice_text);
        for (int k = 0; k < 3; k++) {
            if (v[k] != floor(v[k]) || v[k] < 0 || v[k] >= MR_MAX_MATRIX_EDGE)
                return mr_opts_usage(spec, "--slice: '%s': each index must be an integer in 0..%d", a->slice_text,
                                     MR_MAX_MATRIX_EDGE - 1);
            a->slice[k] = (int64_t)v[k];
        }
        o->slice = a->slice;
    }
    return MR_EXIT_OK;
}

mr_status mr_recon_args_fingerprint(const mr_recon_args *a, char *buf, size_t size)
{
    return mr_opts_fingerprint(a->block, a->nblock, buf, size);
}

int mr_recon_args_parse(mr_recon_args *a, int argc, char **argv)
{
    mr_recon_opts *o = &a->o;
    const mr_cmd_spec *spec = &a->spec;
    int rc = mr_opts_begin(spec, argc, argv, &a->res, &a->verbose, &a->quiet);
    if (rc != MR_OPTS_GO)
        return rc;
    a->scan = a->res.positional[0]; /* into argv */
    mr_opts_free(&a->res);          /* res.given stays */
    if (a->need_outdir && (!a->outdir || !a->outdir[0]))
        return mr_opts_usage(spec, "missing -o OUTDIR");
    if (a->outdir && !a->outdir[0])
        return mr_opts_usage(spec, "-o: the output directory is empty");
    if ((rc = mr_recon_args_check(a, spec, &a->res, a->scan)) != MR_EXIT_OK)
        return rc;
    mr_op_opts_set_device(&o->op, a->device);
    return MR_OPTS_GO;
}

/* ---- batch ------------------------------------------------------------------------------------- */

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

void mr_batch_args_init(mr_batch_args *b)
{
    memset(b, 0, sizeof *b);
    mr_recon_args_init(&b->r);
    b->rank_timeout = 60;
    const mr_opt own[] = {
        {"output", 'o', MR_OPT_STRING, &b->outdir, "OUTDIR", "output folder (required)", NULL, 0, -1},
        {"device", 0, MR_OPT_DEVICE, &b->r.device, "D",
         "where the operator runs (gpu or gpu:all: one worker per GPU; gpu:N: every worker on GPU N; a list "
         "gpu:N,M,... counts as its first GPU: each scan runs on one GPU)",
         NULL, 0, -1},
        {"jobs", 'j', MR_OPT_INT, &b->jobs, "J", "scans reconstructed at once (0 = auto)", NULL, 0, 1024},
        {"threads", 't', MR_OPT_INT, &b->threads, "T", "CPU threads per worker (0 = max(1, cores/jobs))", NULL, 0, 4096},
        {"resume", 0, MR_OPT_FLAG, &b->resume, NULL, "finish an earlier batch in OUTDIR: redo only unfinished or changed scans",
         NULL, 0, -1},
        {"force", 0, MR_OPT_FLAG, &b->force, NULL, "redo every scan even though OUTDIR is not empty", NULL, 0, -1},
        {"timeout", 0, MR_OPT_DOUBLE, &b->timeout, "SEC", "kill a scan running longer than this (0 = never)", NULL, 0,
         1e9},
        {"q-cache", 0, MR_OPT_STRING, &b->r.o.q_cache, "DIR",
         "directory of the Q cache shared by the workers: scans with one trajectory compute Q once (default: "
         "$MRIRECON_CACHE_DIR/q, else ~/.cache/mrirecon/q; off: none; docs/RECON.md)",
         NULL, 0, -1},
        {"rank-timeout", 0, MR_OPT_DOUBLE, &b->rank_timeout, "SEC",
         "under mpirun: a rank silent this long is declared lost (its scans fail)", NULL, 1, 1e9},
    };
    const mr_opt verbosity[] = {
        {"verbose", 'v', MR_OPT_FLAG, &b->verbose, NULL, "more diagnostics", NULL, 0, -1},
        {"quiet", 'q', MR_OPT_FLAG, &b->quiet, NULL, "warnings and errors only, no progress", NULL, 0, -1},
    };
    enum { NOWN = sizeof own / sizeof own[0], NV = sizeof verbosity / sizeof verbosity[0] };
    _Static_assert(NOWN + MR_CMD_ARGS_MAX_OPTS + NV <= MR_OPTS_MAX, "batch's table outgrew MR_OPTS_MAX");
    const int nblock = b->r.nblock;
    memcpy(b->table, own, sizeof own);
    memcpy(b->table + NOWN, b->r.block, (size_t)nblock * sizeof *b->table);
    memcpy(b->table + NOWN + nblock, verbosity, sizeof verbosity);
    b->spec = (mr_cmd_spec){"batch", "INPUT... -o OUTDIR", "reconstruct many scans with progress, summaries and resume",
                            batch_description, b->table, NOWN + nblock + NV, 1, -1};
}

int mr_batch_args_parse(mr_batch_args *b, int argc, char **argv)
{
    const mr_cmd_spec *spec = &b->spec;
    int rc = mr_opts_begin(spec, argc, argv, &b->res, &b->verbose, &b->quiet);
    if (rc != MR_OPTS_GO)
        return rc;
    if ((!b->outdir || !b->outdir[0]) || (b->resume && b->force))
        rc = mr_opts_usage(spec, "%s", b->resume && b->force ? "--resume and --force exclude each other"
                                                             : "missing -o OUTDIR");
    else
        rc = mr_recon_args_check(&b->r, spec, &b->res, NULL);
    if (rc != MR_EXIT_OK) {
        mr_opts_free(&b->res);
        return rc;
    }
    return MR_OPTS_GO;
}

/* ---- phantom ----------------------------------------------------------------------------------- */

static const char *const traj_choices[] = {"radial",    "golden",         "spiral",           "random",
                                           "kooshball", "stack-of-stars", "stack-of-spirals", NULL};
static const mr_traj_kind traj_kinds[] = {MR_TRAJ_RADIAL2D,  MR_TRAJ_GOLDEN2D,       MR_TRAJ_SPIRAL2D,
                                          MR_TRAJ_RANDOM2D,  MR_TRAJ_KOOSHBALL,      MR_TRAJ_STACK_OF_STARS,
                                          MR_TRAJ_STACK_OF_SPIRALS};
static const char *const weight_choices[] = {"analytic", "none", NULL};

/* The trajectory options that shape only some kinds; one given for another kind would be ignored, so it is
 * refused (exit 2) naming the kinds it applies to. --seed shapes the noise and the random trajectory. */
static int check_traj_options(const mr_cmd_spec *spec, const mr_opts_result *res, mr_traj_kind kind,
                              const char *traj, int noisy)
{
    static const struct {
        const char *name;
        unsigned kinds; /* bit (1 << mr_traj_kind) */
        const char *which;
    } rules[] = {
        {"spokes", (1u << MR_TRAJ_RADIAL2D) | (1u << MR_TRAJ_GOLDEN2D) | (1u << MR_TRAJ_KOOSHBALL) |
                       (1u << MR_TRAJ_STACK_OF_STARS),
         "radial, golden, kooshball and stack-of-stars"},
        {"readout", ~(1u << MR_TRAJ_RANDOM2D), "every trajectory but random"},
        {"interleaves", (1u << MR_TRAJ_SPIRAL2D) | (1u << MR_TRAJ_STACK_OF_SPIRALS), "spiral and stack-of-spirals"},
        {"turns", (1u << MR_TRAJ_SPIRAL2D) | (1u << MR_TRAJ_STACK_OF_SPIRALS), "spiral and stack-of-spirals"},
        {"partitions", (1u << MR_TRAJ_STACK_OF_STARS) | (1u << MR_TRAJ_STACK_OF_SPIRALS),
         "stack-of-stars and stack-of-spirals"},
        {"samples", 1u << MR_TRAJ_RANDOM2D, "random"},
    };
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (mr_opts_given(spec, res, rules[i].name) && !(rules[i].kinds & (1u << kind)))
            return mr_opts_usage(spec, "--%s applies to %s trajectories, not to --traj %s", rules[i].name,
                                 rules[i].which, traj);
    if (mr_opts_given(spec, res, "seed") && !noisy && kind != MR_TRAJ_RANDOM2D)
        return mr_opts_usage(spec, "--seed seeds the noise (--snr) and the random trajectory; this scan has "
                                   "neither");
    return MR_EXIT_OK;
}

void mr_phantom_args_init(mr_phantom_args *a)
{
    memset(a, 0, sizeof *a);
    a->matrix = "128";
    a->weights = "analytic";
    a->interleaves = 16;
    a->seed = 1;
    a->snr = INFINITY;
    a->fov = 240;
    const mr_opt opts[] = {
        {"output", 'o', MR_OPT_STRING, &a->out, "FILE", "write the scan to FILE (HDF5, docs/FORMAT.md)", NULL, 0, -1},
        {"dim", 0, MR_OPT_INT_OR_0, &a->dim, "D",
         "2 or 3; 0 = from --matrix/--traj (3 values or a 3D trajectory: 3, else 2)", NULL, 2, 3},
        {"matrix", 0, MR_OPT_STRING, &a->matrix, "N|NX,NY[,NZ]", "image matrix; N means N^2 in 2D, N^3 in 3D", NULL, 0,
         -1},
        {"traj", 0, MR_OPT_CHOICE, &a->traj, "KIND", "trajectory (absent: radial in 2D, kooshball in 3D)", traj_choices, 0,
         -1},
        {"spokes", 0, MR_OPT_INT, &a->spokes, "S",
         "radial spokes (per partition for stack-of-stars); 0 = fully sampled: round(pi N/2), kooshball "
         "round(pi N^2/2)",
         NULL, 0, 1000000000},
        {"readout", 0, MR_OPT_INT_OR_0, &a->readout, "R",
         "samples per spoke or spiral interleaf; 0 = 2N (radial), <= 0.5 cycle/FOV along the arm (spiral)", NULL, 2,
         1000000000},
        {"interleaves", 0, MR_OPT_INT, &a->interleaves, "L", "spiral interleaves", NULL, 1, 1000000},
        {"turns", 0, MR_OPT_DOUBLE, &a->turns, "T",
         "spiral turns per interleaf; 0 = Nyquist, N/(2L); more L at fixed T undersamples", NULL, 0, 1e6},
        {"partitions", 0, MR_OPT_INT, &a->partitions, "P", "kz partitions of the stack kinds; 0 = Nz", NULL, 0, 1000000},
        {"samples", 0, MR_OPT_INT, &a->samples, "M", "random: number of samples; 0 = 2 Nx Ny", NULL, 0, 2147483647.0},
        {"snr", 0, MR_OPT_DOUBLE, &a->snr, "DB",
         "add complex Gaussian noise: SNR = 10 log10(mean|d|^2 / (2 sigma^2)); inf = noiseless", NULL, -100,
         INFINITY},
        {"seed", 0, MR_OPT_INT, &a->seed, "S", "seed of the noise and of the random trajectory", NULL, 0, 2147483647.0},
        {"no-truth", 0, MR_OPT_FLAG, &a->no_truth, NULL, "do not store the truth images", NULL, 0, -1},
        {"weights", 0, MR_OPT_CHOICE, &a->weights, "W", "density compensation stored with the scan", weight_choices, 0,
         -1},
        {"fov", 0, MR_OPT_DOUBLE, &a->fov, "MM", "field of view per axis in mm", NULL, 1e-3, 1e6},
        {"coils", 0, MR_OPT_INT, &a->coils, "C",
         "simulate C receive coils: smooth analytic maps (stored as /kspace/sens) and exact coil data; 0 = one "
         "coil without maps",
         NULL, 0, MR_MAX_COILS},
        {"marker", 0, MR_OPT_FLAG, &a->marker, NULL,
         "add the orientation marker: a bright ellipse outside the head at small x, y (in 3D from z = -0.3 to 0.1 FOV), the top-left "
         "corner of every picture (docs/FORMAT.md, Orientation)",
         NULL, 0, -1},
        {"dwell", 0, MR_OPT_DOUBLE, &a->dwell_us, "US",
         "readout timing: dwell time per sample in microseconds; stores the time of every sample (/kspace/time); 0 = "
         "no timing",
         NULL, 0, 1e6},
        {"te", 0, MR_OPT_DOUBLE, &a->te_ms, "MS",
         "echo time in ms: the time of each readout's sample nearest k = 0 (spiral-out: the first, radial: the "
         "middle)",
         NULL, -1e6, 1e6},
        {"fieldmap", 0, MR_OPT_STRING, &a->fieldmap, "SPEC",
         "off-resonance field (needs --dwell), KEY=VALUE,...: c=HZ constant, x=HZ,y=HZ,z=HZ linear (change across "
         "the FOV), blob=HZ Gaussian bump (sigma=S, at=X:Y[:Z] in FOV units, oversample=F fine grid); e.g. "
         "c=20,x=150,y=50",
         NULL, 0, -1},
        {"suite", 0, MR_OPT_STRING, &a->suite, "DIR",
         "write the standard suite (about 30 scans, manifest.csv, manifest.md) into DIR instead", NULL, 0, -1},
        {"verbose", 'v', MR_OPT_FLAG, &a->verbose, NULL, "more diagnostics on stderr", NULL, 0, -1},
        {"quiet", 'q', MR_OPT_FLAG, &a->quiet, NULL, "only warnings and errors on stderr", NULL, 0, -1},
    };
    _Static_assert(sizeof opts / sizeof opts[0] <= MR_CMD_ARGS_MAX_OPTS, "phantom's table outgrew MR_CMD_ARGS_MAX_OPTS");
    memcpy(a->table, opts, sizeof opts);
    a->spec = (mr_cmd_spec){
        .name = "phantom",
        .args = NULL,
        .summary = "Write a simulated scan: analytic Shepp-Logan k-space (no FFT of a sampled image) on a chosen "
        "trajectory.",
        .description = "The data are F(k_m), the exact Fourier transform of the modified Shepp-Logan phantom (2D: Toft's 10\n"
        "ellipses; 3D: 10 ellipsoids), so reconstructions come out in phantom intensity units. The file holds\n"
        "the trajectory (cycles/FOV), the samples, analytic density compensation weights and the truth images\n"
        "/truth/image (voxel average) and /truth/bandlimited (the phantom low-passed to the matrix's band).\n"
        "Defaults: 2D 128x128, radial 201 spokes x 256 readout, noiseless. The book's 3D scan (284,592 samples):\n"
        "  mrirecon phantom -o book.h5 --dim 3 --matrix 128 --traj kooshball --spokes 1078 --readout 264\n"
        "With --coils C the data are those of C simulated receive coils, d_c(k) = FT[S_c rho](k), exact for\n"
        "maps S_c that are short sums of complex exponentials; the maps are stored for SENSE (recon --sens).\n"
        "With --dwell (and --te) every sample's readout time is stored; --fieldmap adds off-resonance: a constant\n"
        "and linear field analytically (k shifted by g t, phase e^{-i 2 pi c t}), a non-linear bump by exact sums on\n"
        "a finer grid. The field map is stored as /kspace/fieldmap. Example (the field-map benchmark):\n"
        "  mrirecon phantom -o f.h5 --traj spiral --interleaves 16 --dwell 8 --te 2 --fieldmap c=20,x=150,y=50\n"
        "docs/PHANTOMS.md gives every formula. One summary line per written file goes to stdout.\n"
        "The same options make a scan in Python (docs/PYTHON.md: mrirecon.phantom(matrix=128, ...)).",
        .opts = a->table,
        .nopts = (int)(sizeof opts / sizeof opts[0]),
        .min_positional = 0,
        .max_positional = 0,
    };
}

int mr_phantom_args_parse(mr_phantom_args *a, int argc, char **argv)
{
    const mr_cmd_spec *spec = &a->spec;
    int rc = mr_opts_begin(spec, argc, argv, &a->res, &a->verbose, &a->quiet);
    if (rc != MR_OPTS_GO)
        return rc;
    mr_opts_free(&a->res); /* no positional arguments; res.given stays for mr_opts_given */
    if (a->suite) {
        /* the suite's scans have their own settings: any scan option would be ignored */
        for (int i = 0; i < spec->nopts; i++)
            if (a->res.given[i] && strcmp(a->table[i].name, "suite") && strcmp(a->table[i].name, "verbose") &&
                strcmp(a->table[i].name, "quiet")) {
                return mr_opts_usage(spec, "--%s does not apply to --suite DIR (the suite's scans have fixed "
                                           "settings: docs/VALIDATION.md)",
                                     a->table[i].name);
            }
        return MR_OPTS_GO;
    }
    if (a->need_output && !a->out)
        return mr_opts_usage(spec, "%s", "missing -o FILE (or --suite DIR)");

    const char *matrix = a->matrix, *traj = a->traj;
    int dim = a->dim;
    int64_t mat[3] = {0, 0, 0};
    int nvals = mr_opts_parse_matrix(matrix, mat);
    if (nvals == 0)
        return mr_opts_usage(spec, "--matrix: '%s' is not N, NX,NY or NX,NY,NZ with edges 1..4096", matrix);
    mr_traj_kind kind = MR_TRAJ_RADIAL2D;
    int traj_given = traj != NULL;
    for (int i = 0; traj && traj_choices[i]; i++)
        if (strcmp(traj, traj_choices[i]) == 0)
            kind = traj_kinds[i];
    if (dim == 0)
        dim = (nvals == 3 || (traj_given && mr_traj_kind_is_3d(kind))) ? 3 : 2;
    if (!traj_given)
        kind = dim == 3 ? MR_TRAJ_KOOSHBALL : MR_TRAJ_RADIAL2D;
    if (mr_traj_kind_is_3d(kind) != (dim == 3))
        return mr_opts_usage(spec, "--traj %s does not match the dimension (see --dim)", traj);
    if (dim == 2 && nvals == 3)
        return mr_opts_usage(spec, "--matrix %s has 3 values but the scan is 2D", matrix);
    if (nvals == 1)
        mat[1] = mat[2] = mat[0];
    if (dim == 2)
        mat[2] = 1;
    else if (nvals == 2)
        return mr_opts_usage(spec, "--matrix %s: a 3D matrix needs N or NX,NY,NZ", matrix);
    rc = check_traj_options(spec, &a->res, kind, traj_given ? traj : dim == 3 ? "kooshball" : "radial",
                            isfinite(a->snr));
    if (rc != MR_EXIT_OK)
        return rc;

    mr_scan_params *sp = &a->sp;
    mr_scan_params_default(sp);
    mr_traj_params *p = &sp->traj;
    mr_traj_params_default(p, kind, mat);
    if (a->spokes > 0)
        p->spokes = a->spokes;
    if (a->partitions > 0)
        p->partitions = a->partitions;
    if (a->samples > 0)
        p->samples = a->samples;
    p->seed = (uint64_t)a->seed;
    p->interleaves = a->interleaves;
    p->turns = a->turns;
    if (a->readout > 0)
        p->readout = a->readout;
    else if (kind == MR_TRAJ_SPIRAL2D || kind == MR_TRAJ_STACK_OF_SPIRALS)
        p->readout = mr_traj_spiral_readout(p, 0.5);
    int64_t m;
    if (mr_traj_count(p, &m) != MR_OK)
        return mr_opts_usage(spec, "%s", mr_last_error());
    sp->noise = isfinite(a->snr);
    sp->snr_db = sp->noise ? a->snr : 0.0;
    sp->seed = (uint64_t)a->seed;
    sp->truth = !a->no_truth;
    sp->weights = strcmp(a->weights, "analytic") == 0;
    sp->fov_mm = a->fov;
    sp->coils = a->coils;
    sp->marker = a->marker;
    sp->dwell_s = a->dwell_us * 1e-6;
    sp->te_s = a->te_ms * 1e-3;
    if (a->fieldmap) {
        if (mr_field_parse(a->fieldmap, &sp->field) != MR_OK)
            return mr_opts_usage(spec, "--fieldmap: %s", mr_last_error());
        if (!(a->dwell_us > 0))
            return mr_opts_usage(spec, "%s", "--fieldmap needs the readout timing: --dwell US (and --te MS)");
    }
    if (a->dwell_us > 0 && kind == MR_TRAJ_RANDOM2D)
        return mr_opts_usage(spec, "%s", "--dwell: the random trajectory has no readouts");
    return MR_OPTS_GO;
}

