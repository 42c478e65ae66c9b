/* mrirecon bench [options]: the optimisation ladder of the exact sums Q and F^H d (CPU and each GPU
 * rung), the GPU tuning sweep and the end-to-end reconstruction (recon/bench/bench.c). Results on stdout,
 * progress on stderr. */
#include <stdio.h>

#include "../../base/log.h"
#include "../bench/bench.h"
#include "commands.h"
#include "opts.h"
#include "progress_ui.h"

int mr_cmd_bench(int argc, char **argv)
{
    mr_bench_opts o;
    mr_bench_opts_default(&o);
    int verbose = 0, quiet = 0, seed = 1, sweep_m = (int)o.sweep_m;
    static const char *const whats[] = {"kernels", "e2e", "all", "q", NULL};
    static const char *const rowsets[] = {"all", "ladder", "gemm", NULL};
    static const char *const precisions[] = {"all", "sfu", "tf32x3", "fp16x3", "fp64", NULL};
    const mr_opt table[] = {
        {"problem", 'p', MR_OPT_STRING, &o.problem, "P",
         "book (128^3 voxels, 284592 samples), 2d (128^2, 32768) or NX,NY,NZ:M", NULL, 0, -1},
        {"device", 0, MR_OPT_DEVICE, &o.device, "D",
         "cpu: CPU rows only; gpu or gpu:N: CPU and GPU rows; auto: gpu when one is usable; gpu:all or gpu:N,M,...: "
         "--what q compares one GPU with those, the end-to-end runs split the sums across them",
         NULL, 0, -1},
        {"what", 0, MR_OPT_CHOICE, &o.what, "W",
         "kernels (the ladder), e2e (file to image: cold and warm Q cache, accurate trig), all (both), or q (Q and "
         "F^H d through the operator's engine on 1 GPU and on the GPUs of --device)",
         whats, 0, -1},
        {"reps", 'r', MR_OPT_INT, &o.reps, "N", "timed runs per row (median), after one warm-up", NULL, 1, 1000},
        {"threads", 0, MR_OPT_INT, &o.threads, "T", "CPU threads (0: all cores)", NULL, 0, 4096},
        {"cpu-pairs", 0, MR_OPT_DOUBLE, &o.cpu_pairs, "X",
         "CPU rows time a band of voxel rows of about X (voxel, sample) pairs and extrapolate linearly "
         "(0: the whole grid)",
         NULL, 0, 1e18},
        {"gpu-slow-pairs", 0, MR_OPT_DOUBLE, &o.gpu_slow_pairs, "X",
         "the same for the GPU naive and constant-memory rows", NULL, 0, 1e18},
        {"accuracy-rows", 0, MR_OPT_INT, &o.accuracy_rows, "N",
         "voxel rows per sum compared with the float64 reference (0: no accuracy column)", NULL, 0, 16},
        {"sweep", 0, MR_OPT_FLAG, &o.sweep, NULL,
         "time every compiled SFU kernel configuration instead of the ladder (the tuning sweep)", NULL, 0, -1},
        {"sweep-samples", 0, MR_OPT_INT, &sweep_m, "M", "samples of the sweep problem", NULL, 1, 2147483647},
        {"rows", 0, MR_OPT_CHOICE, &o.rows, "R",
         "all: CPU, GPU ladder and tensor-core GEMM rows; ladder: without the GEMM rows; gemm: only the GEMM rows",
         rowsets, 0, -1},
        {"precision", 0, MR_OPT_CHOICE, &o.precision, "P",
         "GEMM rows of the ladder (sfu: none), engines of --what q, engine of the end-to-end runs (all: every row, "
         "the default engine)",
         precisions, 0, -1},
        {"gemm-cublas", 0, MR_OPT_FLAG, &o.gemm_cublas, NULL,
         "also time tf32x3 with the cuBLAS engine (GemmEx, operands materialised) next to our mma.sync kernel", NULL,
         0, -1},
        {"gemm-variant", 0, MR_OPT_INT, &o.gemm_variant, "V",
         "kernel variant of the mma.sync tf32x3 row, for tuning (0: the default; docs/GPU.md lists them)", NULL, 0, 3},
        {"gemm-ksplit", 0, MR_OPT_INT, &o.gemm_ksplit, "K",
         "samples per K split of the tf32x3 MMA kernel, a multiple of 32 (0: the default, 4096), for the GEMM rows "
         "and --what q",
         NULL, 0, 1 << 30},
        {"gemm-columns", 0, MR_OPT_INT, &o.gemm_columns, "C",
         "cap on the (y,z) columns per GEMM pass (0: sized from free memory), for the GEMM rows and --what q", NULL,
         0, 1 << 30},
        {"iters", 0, MR_OPT_INT, &o.iters, "N", "CG iterations of the end-to-end run", NULL, 1, 100000},
        {"scratch", 0, MR_OPT_STRING, &o.scratch, "DIR",
         "directory for the end-to-end scan and reconstructions (default $TMPDIR/mrirecon-bench)", NULL, 0, -1},
        {"json", 0, MR_OPT_STRING, &o.json, "FILE", "also write the results as JSON", NULL, 0, -1},
        {"seed", 0, MR_OPT_INT, &seed, "S", "seed of the random trajectory and weights", NULL, 1, 2147483647},
        {"verbose", 'v', MR_OPT_FLAG, &verbose, NULL, "progress on stderr", NULL, 0, -1},
        {"quiet", 'q', MR_OPT_FLAG, &quiet, NULL, "only warnings and errors on stderr", NULL, 0, -1},
    };
    const mr_cmd_spec spec = {
        "bench",
        "",
        "benchmark the Q and F^H d kernels and the whole pipeline",
        "Reproduces the book's optimisation ladder (Kirk & Hwu ch. 8): CPU (all cores) | GPU naive |\n"
        "+ constant memory | + SFU trig | + tuned | + multi-voxel, then the exact sums as matrix products on\n"
        "the tensor cores (gemm tf32x3, gemm fp64; docs/GPU.md), for Q (2N grid, real weights) and\n"
        "F^H d (N grid, complex weights): time, pairs/s, GFLOP/s (at the ladder's FLOP per pair) and the\n"
        "relative L2 error against the float64 reference. Slow rows time a band of voxel rows and\n"
        "extrapolate (marked). With --what\n"
        "e2e|all it also simulates the phantom scan (the book's kooshball for 3D problems) and runs the\n"
        "whole reconstruction (Q, F^H d, CG, PNG, report) three times: the default engine with an emptied Q cache,\n"
        "again with the cache warm, and the SFU kernels with accurate trig. --what q times Q and F^H d through\n"
        "the operator's engine on one GPU and split across the GPUs of --device (gpu:all, gpu:0,1).\n"
        "Examples:\n"
        "  mrirecon bench --device gpu --problem book --json bench.json\n"
        "  mrirecon bench --device cpu --problem 2d --what kernels --threads 2\n"
        "  mrirecon bench --device gpu --sweep --reps 3\n"
        "  mrirecon bench --device gpu --problem book --what kernels --rows gemm --gemm-cublas\n"
        "  mrirecon bench --device gpu:all --problem book --what q --precision tf32x3",
        table,
        (int)(sizeof table / sizeof table[0]),
        0,
        0,
    };
    mr_opts_result res;
    int rc = mr_opts_begin(&spec, argc, argv, &res, &verbose, &quiet);
    if (rc != MR_OPTS_GO)
        return rc;
    mr_opts_free(&res);
    int64_t matrix[3], m;
    if (mr_bench_parse_problem(o.problem, matrix, &m) != MR_OK)
        return mr_opts_usage(&spec, "%s", mr_last_error());
    o.seed = (uint64_t)seed;
    o.sweep_m = sweep_m;
    mr_progress_ui ui;
    mr_progress_ui_init(&ui, quiet);
    o.progress = mr_progress_ui_sink(&ui);
    mr_status st = mr_bench_run(&o, stdout);
    mr_progress_ui_end(&ui);
    if (st != MR_OK) {
        fprintf(stderr, "mrirecon bench: %s\n", mr_last_error());
        return MR_EXIT_FAILURE;
    }
    return MR_EXIT_OK;
}
