/* tool_mpi_split: check and time the split adjoint sums (recon/cluster/mpi_split.h) on random inputs.
 *
 *   mpirun -n P tool_mpi_split [--what q|fhd] [--grid q|image] [--dims 2|3] [--matrix N] [--samples M]
 *                              [--device cpu|gpu] [--threads T] [--mirror auto|on|off]
 *                              [--reps R] [--check] [--expect-identical] [--seed S]
 *
 * Rank 0 draws a random trajectory inside the Nyquist box and random weights (real for Q on the
 * Q grid, complex for F^H d on the image grid; --grid overrides the grid) and broadcasts them; every rank then takes part in
 * R calls of mr_mpi_adjoint_split (--device gpu: each rank on GPU local-rank mod count). Rank 0
 * prints the times of each call and a RESULT line with the medians.
 * --check: rank 0 also runs the one-process kernel (the same one: CPU or its GPU) and compares:
 * bit-identical voxels, max |difference|, relative L2; and both against a float64 direct sum on
 * up to 2000 voxels, fewer for large M (at most 2e9 sample-voxel pairs; relative L2 <= 1e-5
 * required, as tests/test_nudft.c). --expect-identical
 * requires bit-identical results where recon/cluster/mpi_split.h promises them (CPU: F^H d, and Q with the
 * mirror on the portable kernel, MR_CPU_KERNEL=portable); elsewhere, and without it, relative L2 <= 1e-6 from
 * the one-process result is required. Exit 0 pass, 1 fail, 2 usage. Without MPI (or without mpirun) it runs as one rank. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "gpu/gpu.h"
#include "recon/cluster/mpi_comm.h"
#include "recon/cluster/mpi_split.h"
#include "solver/nudft.h"

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;

static double uniform(void) /* [0, 1) */
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (double)(g_rng >> 11) / 9007199254740992.0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* float64 direct sum at voxel v of g */
static void ref_voxel(const mr_grid *g, const float *traj, const float *a, int real_weights, int64_t m, int64_t v,
                      double out[2])
{
    int64_t ix = v % g->n[0], iy = (v / g->n[0]) % g->n[1], iz = v / (g->n[0] * g->n[1]);
    double r[3] = {(double)(ix - g->center[0]) / (double)g->scale[0], (double)(iy - g->center[1]) / (double)g->scale[1],
                   (double)(iz - g->center[2]) / (double)g->scale[2]};
    double re = 0, im = 0;
    for (int64_t k = 0; k < m; k++) {
        double ph = 2 * M_PI * (traj[3 * k] * r[0] + traj[3 * k + 1] * r[1] + traj[3 * k + 2] * r[2]);
        double c = cos(ph), s = sin(ph);
        double ar = real_weights ? a[k] : a[2 * k], ai = real_weights ? 0 : a[2 * k + 1];
        re += ar * c - ai * s;
        im += ar * s + ai * c;
    }
    out[0] = re;
    out[1] = im;
}

static int usage(void)
{
    fprintf(stderr, "usage: tool_mpi_split [--what q|fhd] [--grid q|image] [--dims 2|3] [--matrix N] [--samples M] [--device cpu|gpu]\n"
                    "       [--threads T] [--mirror auto|on|off] [--reps R] [--check] [--expect-identical] [--seed S]\n");
    return 2;
}

/* The command line (see the header comment), validated; real: Q's real weights (--what q). */
typedef struct {
    const char *what, *device, *mirror, *grid;
    int dims, threads, reps, check, expect_identical, real;
    int64_t n, m;
} split_args;

/* 0, or usage()'s 2; --seed moves g_rng */
static int parse_args(int argc, char **argv, split_args *A)
{
    *A = (split_args){.what = "q", .device = "cpu", .mirror = "auto", .dims = 2, .reps = 1, .n = 32};
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(arg, "--check") == 0)
            A->check = 1;
        else if (strcmp(arg, "--expect-identical") == 0)
            A->expect_identical = A->check = 1;
        else if (!val)
            return usage();
        else if (strcmp(arg, "--what") == 0)
            A->what = val, i++;
        else if (strcmp(arg, "--grid") == 0)
            A->grid = val, i++;
        else if (strcmp(arg, "--dims") == 0)
            A->dims = atoi(val), i++;
        else if (strcmp(arg, "--matrix") == 0)
            A->n = atoll(val), i++;
        else if (strcmp(arg, "--samples") == 0)
            A->m = atoll(val), i++;
        else if (strcmp(arg, "--device") == 0)
            A->device = val, i++;
        else if (strcmp(arg, "--threads") == 0)
            A->threads = atoi(val), i++;
        else if (strcmp(arg, "--mirror") == 0)
            A->mirror = val, i++;
        else if (strcmp(arg, "--reps") == 0)
            A->reps = atoi(val), i++;
        else if (strcmp(arg, "--seed") == 0)
            g_rng ^= (uint64_t)atoll(val) * 0xD1B54A32D192ED03ull, i++;
        else
            return usage();
    }
    A->real = strcmp(A->what, "q") == 0;
    if (!A->grid)
        A->grid = A->real ? "q" : "image";
    if ((!A->real && strcmp(A->what, "fhd") != 0) || (strcmp(A->grid, "q") != 0 && strcmp(A->grid, "image") != 0) ||
        (A->dims != 2 && A->dims != 3) || A->n < 2 || A->n > 1024 || A->reps < 1 || A->reps > 1000 || A->m < 0 ||
        (strcmp(A->device, "cpu") != 0 && strcmp(A->device, "gpu") != 0) ||
        (strcmp(A->mirror, "auto") != 0 && strcmp(A->mirror, "on") != 0 && strcmp(A->mirror, "off") != 0))
        return usage();
    if (A->m == 0)
        A->m = A->dims == 2 ? 4 * A->n * A->n : A->n * A->n * A->n / 2;
    return 0;
}

/* Rank 0 draws the trajectory and the weights (a: [m] real or [m][2] complex), every rank receives them. */
static mr_status draw_and_share(mr_comm *comm, const split_args *A, mr_status st, float *traj, float *a)
{
    const int64_t m = A->m;
    const int rank = mr_comm_rank(comm);
    if (st == MR_OK && rank == 0)
        for (int64_t k = 0; k < m; k++) {
            for (int ax = 0; ax < 3; ax++)
                traj[3 * k + ax] = ax < A->dims ? (float)((uniform() - 0.5) * (double)A->n) : 0.0f;
            a[2 * k] = (float)(A->real ? uniform() : uniform() - 0.5);
            a[2 * k + 1] = (float)(uniform() - 0.5);
        }
    if (A->real && st == MR_OK && rank == 0) /* real weights: a is [m] */
        for (int64_t k = 0; k < m; k++)
            a[k] = a[2 * k];
    st = mr_comm_agree(comm, st);
    if (st == MR_OK)
        st = mr_comm_bcast(comm, traj, (size_t)m * 3 * sizeof *traj, 0);
    if (st == MR_OK)
        st = mr_comm_bcast(comm, a, (size_t)m * 2 * sizeof *a, 0);
    return st;
}

/* The split options of the command line and this rank's GPU; rank 0 prints the run's line. */
static mr_status choose_device(mr_comm *comm, const split_args *A, const mr_grid *g, mr_status st, mr_split_opts *o)
{
    mr_split_opts_default(o);
    o->threads = A->threads;
    o->mirror = strcmp(A->mirror, "on") == 0 ? 1 : strcmp(A->mirror, "off") == 0 ? 0 : -1;
    if (strcmp(A->device, "gpu") == 0) {
        int count = mr_gpu_count();
        if (count == 0)
            st = mr_error(MR_ENODEV, "--device gpu: no usable GPU on %s", mr_comm_host(comm));
        else
            o->device = mr_comm_local_rank(comm) % count;
    }
    st = mr_comm_agree(comm, st);
    const int ranks = mr_comm_size(comm);
    if (mr_comm_rank(comm) == 0 && st == MR_OK) {
        char gpu[128] = "cpu";
        if (o->device >= 0)
            mr_gpu_describe(o->device, gpu, sizeof gpu);
        printf("split %s %dD N=%lld: grid %lldx%lldx%lld, %lld samples, %d rank%s, device %s (rank 0), threads %d, "
               "mirror %s\n",
               A->what, A->dims, (long long)A->n, (long long)g->n[0], (long long)g->n[1], (long long)g->n[2],
               (long long)A->m, ranks, ranks > 1 ? "s" : "", gpu, A->threads, A->mirror);
    }
    return st;
}

/* What --check measured: the one-process run's time, its agreement with the split result, both
 * against float64 direct sums on every step-th voxel. */
typedef struct {
    double one_s, maxdiff, l2d, l2, ref_split, ref_one;
    int64_t identical, step;
} split_check;

/* the split result out against the one-process result one and the float64 direct sums */
static void compare_results(const mr_grid *g, const float *traj, const float *a, int real, int64_t m,
                            const float *out, const float *one, split_check *c)
{
    const int64_t nv = mr_grid_size(g);
    for (int64_t v = 0; v < 2 * nv; v++) {
        double d = fabs((double)out[v] - (double)one[v]);
        c->maxdiff = d > c->maxdiff ? d : c->maxdiff;
        c->l2d += d * d;
        c->l2 += (double)one[v] * one[v];
    }
    for (int64_t v = 0; v < nv; v++)
        c->identical += memcmp(out + 2 * v, one + 2 * v, 2 * sizeof *out) == 0;
    /* float64 direct sums on about nref voxels (all of them when fewer) */
    double es = 0, eo = 0, rr = 0;
    for (int64_t v = 0; v < nv; v += c->step) {
        double ref[2];
        ref_voxel(g, traj, a, real, m, v, ref);
        for (int k = 0; k < 2; k++) {
            es += (out[2 * v + k] - ref[k]) * (out[2 * v + k] - ref[k]);
            eo += (one[2 * v + k] - ref[k]) * (one[2 * v + k] - ref[k]);
            rr += ref[k] * ref[k];
        }
    }
    c->ref_split = sqrt(es / rr);
    c->ref_one = sqrt(eo / rr);
}

/* --check on rank 0: runs the one-process kernel, compares, prints the check's lines; 1 when it fails */
static int check_one_process(const split_args *A, const mr_grid *g, const float *traj, const float *a,
                             const float *out, const mr_split_opts *o, split_check *c)
{
    const int64_t nv = mr_grid_size(g), m = A->m;
    const int real = A->real;
    mr_status st = MR_OK;
    float *one = malloc((size_t)nv * 2 * sizeof *one);
    double t0 = mr_now();
    mr_gpu_nudft *p = NULL;
    if (!one)
        st = mr_error(MR_ENOMEM, "out of memory");
    else if (o->device < 0)
        st = mr_nudft_adjoint(g, traj, a, real, m, one, A->threads);
    else if ((st = mr_gpu_nudft_create(&p, o->device, traj, m)) == MR_OK)
        st = mr_gpu_nudft_adjoint(p, g, a, real, one, o->variant);
    c->one_s = mr_now() - t0;
    mr_gpu_nudft_destroy(p);
    if (st == MR_OK)
        compare_results(g, traj, a, real, m, out, one, c);
    else
        fprintf(stderr, "tool_mpi_split: one-process run: %s\n", mr_last_error());
    free(one);
    double rel = c->l2 > 0 ? sqrt(c->l2d / c->l2) : sqrt(c->l2d);
    printf("  check: one process %.4f s; %lld of %lld voxels bit-identical, max |diff| %.3g, relative L2 %.3g; "
           "against float64 (%lld voxels): split %.3g, one process %.3g\n",
           c->one_s, (long long)c->identical, (long long)nv, c->maxdiff, rel, (long long)((nv + c->step - 1) / c->step),
           c->ref_split, c->ref_one);
    /* the CPU kernel mr_nudft_adjoint runs: the portable rotation kernel, or a "powers" one */
    const char *kernel = mr_nudft_kernel_name();
    int rotation = kernel && strcmp(kernel, "portable") == 0;
    int mirrored = real && (o->mirror > 0 || (o->mirror < 0 && o->device < 0));
    int want_identical = A->expect_identical && o->device < 0 && (!real || (mirrored && rotation));
    printf("  expected: %s (CPU kernel %s)\n", want_identical ? "bit-identical" : "relative L2 <= 1e-6",
           kernel ? kernel : "?");
    int fail = st != MR_OK || c->ref_split > 1e-5 || (want_identical ? c->identical != nv : rel > 1e-6);
    if (fail)
        printf("  FAIL: %s\n", st != MR_OK ? mr_last_error()
                               : c->ref_split > 1e-5 ? "split result differs from float64 by more than 1e-5"
                               : c->identical != nv && rel <= 1e-6 ? "split result not bit-identical to the one-process result"
                                                  : "split result differs from one process by more than 1e-6");
    return fail;
}

int main(int argc, char **argv)
{
    split_args A;
    if (parse_args(argc, argv, &A) != 0)
        return 2; /* the usage was printed */
    const int64_t n = A.n, m = A.m;
    const int real = A.real, reps = A.reps;

    mr_comm *comm = NULL;
    if (mr_comm_init(&comm) != MR_OK) {
        fprintf(stderr, "tool_mpi_split: %s\n", mr_last_error());
        return 1;
    }
    const int rank = mr_comm_rank(comm), ranks = mr_comm_size(comm);
    int64_t matrix[3] = {n, n, A.dims == 3 ? n : 1};
    mr_grid g = strcmp(A.grid, "q") == 0 ? mr_grid_q(matrix) : mr_grid_image(matrix);
    const int64_t nv = mr_grid_size(&g);
    float *traj = malloc((size_t)m * 3 * sizeof *traj), *a = malloc((size_t)m * 2 * sizeof *a);
    float *out = rank == 0 ? malloc((size_t)nv * 2 * sizeof *out) : NULL;
    mr_status st = traj && a && (rank != 0 || out) ? MR_OK : mr_error(MR_ENOMEM, "out of memory");
    st = draw_and_share(comm, &A, st, traj, a);
    mr_split_opts o;
    st = choose_device(comm, &A, &g, st, &o);
    double *tc = calloc((size_t)reps, sizeof *tc), *tg = calloc((size_t)reps, sizeof *tg),
           *tt = calloc((size_t)reps, sizeof *tt);
    if (!tc || !tg || !tt)
        st = mr_error(MR_ENOMEM, "out of memory");
    for (int r = 0; r < reps && st == MR_OK; r++) {
        mr_split_stats s;
        st = mr_mpi_adjoint_split(comm, &g, traj, a, real, m, out, &o, &s);
        if (st != MR_OK)
            break;
        tc[r] = s.compute_max_s;
        tg[r] = s.gather_s;
        tt[r] = s.total_s;
        if (rank == 0)
            printf("  call %d: compute %.4f s (slowest rank; rank 0 %.4f s, %lld planes), gather %.4f s, total %.4f s\n",
                   r + 1, s.compute_max_s, s.compute_s, (long long)s.planes, s.gather_s, s.total_s);
    }
    int fail = st != MR_OK;
    if (fail && rank == 0)
        fprintf(stderr, "tool_mpi_split: %s\n", mr_last_error());
    if (!fail && rank == 0) {
        split_check c = {0};
        int64_t nref = 2000000000 / m < 2000 ? 2000000000 / m : 2000;
        nref = nref < 16 ? 16 : nref;
        c.step = nv > nref ? nv / nref : 1;
        if (A.check)
            fail = check_one_process(&A, &g, traj, a, out, &o, &c);
        double mc = median(tc, reps), mg = median(tg, reps), mt = median(tt, reps);
        printf("RESULT what=%s dims=%d N=%lld M=%lld ranks=%d device=%s threads=%d reps=%d compute_s=%.6f gather_s=%.6f "
               "total_s=%.6f",
               A.what, A.dims, (long long)n, (long long)m, ranks, A.device, A.threads, reps, mc, mg, mt);
        if (A.check)
            printf(" one_s=%.6f speedup_compute=%.3f speedup_total=%.3f identical=%lld/%lld rel_l2=%.3g", c.one_s,
                   mc > 0 ? c.one_s / mc : 0, mt > 0 ? c.one_s / mt : 0, (long long)c.identical, (long long)nv,
                   c.l2 > 0 ? sqrt(c.l2d / c.l2) : 0);
        printf(" %s\n", fail ? "FAIL" : "ok");
        fflush(stdout);
    }
    free(tc);
    free(tg);
    free(tt);
    free(traj);
    free(a);
    free(out);
    /* rank 0's verdict for everybody, so that mpirun's status is the tool's */
    int verdict = mr_comm_agree(comm, fail ? MR_EINTERNAL : MR_OK) == MR_OK ? 0 : 1;
    mr_comm_finalize(comm);
    return verdict;
}
