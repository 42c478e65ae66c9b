/* The measurements behind `mrirecon bench` (recon/cli/cmd_bench.c): the book's optimisation ladder for
 * the two exact sums (Q on the 2N grid, F^H d on the N grid), the GPU tuning sweep and the
 * end-to-end reconstruction. Results are printed on `out` (a table) and optionally written as JSON.
 *
 * Work per (voxel, sample) pair, as counted for GFLOP/s (range reduction and index arithmetic are
 * not counted; sin and cos count one each):
 *   phase k.r:       3 mul + 2 add            = 5
 *   sin, cos:                                  = 2
 *   F^H d, complex a: a e^{i t} + accumulate   = 4 mul + 4 add = 8    -> MR_BENCH_FLOP_FHD = 15
 *   Q, real a:        a e^{i t} + accumulate   = 2 mul + 2 add = 4    -> MR_BENCH_FLOP_Q   = 11 */
#ifndef MR_BENCH_H
#define MR_BENCH_H

#include <stdint.h>
#include <stdio.h>

#include "../../base/progress.h"
#include "../../base/status.h"
#include "../../solver/backend.h"

#define MR_BENCH_FLOP_FHD 15
#define MR_BENCH_FLOP_Q 11

typedef struct {
    const char *problem;  /* "book" (128^3, 284592 samples), "2d" (128^2, 32768), "NX,NY,NZ:M" */
    mr_device_sel device; /* cpu: CPU rows only; gpu[:N]: CPU and GPU rows; auto: gpu if usable */
    const char *what;     /* "kernels", "e2e", "all", or "q": Q and F^H d through the operator's engine
                             (gpu/sums.h) on one GPU and on the GPUs of `device` (gpu:all, gpu:N,M,...) */
    int reps;             /* timed runs per row (median), after one warm-up; >= 1 */
    int threads;          /* CPU threads, 0 = all cores */
    double cpu_pairs;     /* CPU rows: time a subset of voxel rows of about this many pairs per run
                             and extrapolate linearly (0: always the whole grid) */
    double gpu_slow_pairs;/* the same for the naive and constant-memory GPU rows */
    int accuracy_rows;    /* voxel rows per sum checked against the float64 reference (0: skip) */
    int sweep;            /* 1: run the tuning sweep instead of the ladder */
    int64_t sweep_m;      /* samples of the sweep problem (matrix from `problem`) */
    int iters;            /* CG iterations of the end-to-end run */
    const char *scratch;  /* directory for the end-to-end scan and outputs */
    const char *json;     /* write results here (NULL: no JSON) */
    uint64_t seed;        /* random trajectory and weights */
    const char *rows;     /* "all": CPU, GPU ladder and GEMM rows; "ladder": without the GEMM rows; "gemm": only them */
    const char *precision;/* "all", "sfu", "tf32x3" or "fp64": the GEMM rows of the ladder (sfu: none), the engines
                             of --what q, and the engine of the end-to-end runs (all: the default, auto) */
    int gemm_cublas;      /* 1: also the tf32x3 row with the cuBLAS engine */
    int gemm_variant;     /* MMA kernel variant of the tf32x3 rows (mr_gemm_opts.variant) */
    int gemm_ksplit;      /* samples per K split of the MMA kernel (mr_gemm_opts.split_samples; 0: its default) */
    int gemm_columns;     /* columns per GEMM pass (mr_gemm_opts.max_columns; 0: sized from free memory) */
    const mr_progress *progress; /* the timed runs of each row and the end-to-end run report here (NULL: none) */
} mr_bench_opts;

void mr_bench_opts_default(mr_bench_opts *o);

/* Parse o->problem into a matrix and a sample count; MR_EINVAL naming the text otherwise. */
mr_status mr_bench_parse_problem(const char *text, int64_t matrix[3], int64_t *m);

/* Run what o asks for; the table goes to `out`, progress to stderr (mr_log). */
mr_status mr_bench_run(const mr_bench_opts *o, FILE *out);

#endif
