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

int main(int argc, char **argv)
{
    const char *what = "q", *device = "cpu", *mirror = "auto", *grid = NULL;
    int dims = 2, threads = 0, reps = 1, check = 0, expect_identical = 0;
    int64_t n = 32, m = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(arg, "--check") == 0)
            check = 1;
        else if (strcmp(arg, "--expect-identical") == 0)
            expect_identical = check = 1;
        else if (!val)
            return usage();
        else if (strcmp(arg, "--what") == 0)
            what = val, i++;
        else if (strcmp(arg, "--grid") == 0)
            grid = val, i++;
        else if (strcmp(arg, "--dims") == 0)
            dims = atoi(val), i++;
        else if (strcmp(arg, "--matrix") == 0)
            n = atoll(val), i++;
        else if (strcmp(arg, "--samples") == 0)
            m = atoll(val), i++;
        else if (strcmp(arg, "--device") == 0)
            device = val, i++;
        else if (strcmp(arg, "--threads") == 0)
            threads = atoi(val), i++;
        else if (strcmp(arg, "--mirror") == 0)
            mirror = val, i++;
        else if (strcmp(arg, "--reps") == 0)
            reps = atoi(val), i++;
        else if (strcmp(arg, "--seed") == 0)
            g_rng ^= (uint64_t)atoll(val) * 0xD1B54A32D192ED03ull, i++;
        else
            return usage();
    }
    int real = strcmp(what, "q") == 0;
    if (!grid)
        grid = real ? "q" : "image";
    if ((!real && strcmp(what, "fhd") != 0) || (strcmp(grid, "q") != 0 && strcmp(grid, "image") != 0) || (dims != 2 && dims != 3) || n < 2 || n > 1024 || reps < 1 ||
        reps > 1000 || m < 0 || (strcmp(device, "cpu") != 0 && strcmp(device, "gpu") != 0) ||
        (strcmp(mirror, "auto") != 0 && strcmp(mirror, "on") != 0 && strcmp(mirror, "off") != 0))
        return usage();
    if (m == 0)
        m = dims == 2 ? 4 * n * n : n * n * n / 2;

    mr_comm *comm = NULL;
    if (mr_comm_init(&comm) != MR_OK) {
        fprintf(stderr, "tool_mpi_split: %s\n", mr_last_error());
        return 1;
    }
    const int rank = mr_comm_rank(comm), ranks = mr_comm_size(comm);
    int64_t matrix[3] = {n, n, dims == 3 ? n : 1};
    mr_grid g = strcmp(grid, "q") == 0 ? mr_grid_q(matrix) : mr_grid_image(matrix);
    const int64_t nv = mr_grid_size(&g);
    float *traj = malloc((size_t)m * 3 * sizeof *traj), *a = malloc((size_t)m * 2 * sizeof *a);
    float *out = rank == 0 ? malloc((size_t)nv * 2 * sizeof *out) : NULL;
    mr_status st = traj && a && (rank != 0 || out) ? MR_OK : mr_error(MR_ENOMEM, "out of memory");
    if (st == MR_OK && rank == 0)
        for (int64_t k = 0; k < m; k++) {
            for (int ax = 0; ax < 3; ax++)
                traj[3 * k + ax] = ax < dims ? (float)((uniform() - 0.5) * (double)n) : 0.0f;
            a[2 * k] = (float)(real ? uniform() : uniform() - 0.5);
            a[2 * k + 1] = (float)(uniform() - 0.5);
        }
    if (real && st == MR_OK && rank == 0) /* real weights: a is [m] */
        for (int64_t k = 0; k < m; k++)
            a[k] = a[2 * k];
    st = mr_comm_agree(comm, st);
    if (st == MR_OK)
        st = mr_comm_bcast(comm, traj, (size_t)m * 3 * sizeof *traj, 0);
    if (st == MR_OK)
        st = mr_comm_bcast(comm, a, (size_t)m * 2 * sizeof *a, 0);

    mr_split_opts o;
    mr_split_opts_default(&o);
    o.threads = threads;
    o.mirror = strcmp(mirror, "on") == 0 ? 1 : strcmp(mirror, "off") == 0 ? 0 : -1;
    if (strcmp(device, "gpu") == 0) {
        int count = mr_gpu_count();
        if (count == 0)
            st = mr_error(MR_ENODEV, "--device gpu: no usable GPU on %s", mr_comm_host(comm));
        else
            o.device = mr_comm_local_rank(comm) % count;
    }
    st = mr_comm_agree(comm, st);
    if (rank == 0 && st == MR_OK) {
        char gpu[128] = "cpu";
        if (o.device >= 0)
            mr_gpu_describe(o.device, gpu, sizeof gpu);
        printf("split %s %dD N=%lld: grid %lldx%lldx%lld, %lld samples, %d rank%s, device %s (rank 0), threads %d, "
               "mirror %s\n",
               what, dims, (long long)n, (long long)g.n[0], (long long)g.n[1], (long long)g.n[2], (long long)m, ranks,
               ranks > 1 ? "s" : "", gpu, threads, mirror);
    }
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
        double one_s = 0, maxdiff = 0, l2d = 0, l2 = 0, ref_split = 0, ref_one = 0;
        int64_t nref = 2000000000 / m < 2000 ? 2000000000 / m : 2000;
        nref = nref < 16 ? 16 : nref;
        int64_t identical = 0, step = nv > nref ? nv / nref : 1;
        if (check) {
            float *one = malloc((size_t)nv * 2 * sizeof *one);
            double t0 = mr_now();
            mr_gpu_nudft *p = NULL;
            if (!one)
                st = mr_error(MR_ENOMEM, "out of memory");
            else if (o.device < 0)
                st = mr_nudft_adjoint(&g, traj, a, real, m, one, threads);
            else if ((st = mr_gpu_nudft_create(&p, o.device, traj, m)) == MR_OK)
                st = mr_gpu_nudft_adjoint(p, &g, a, real, one, o.variant);
            one_s = mr_now() - t0;
            mr_gpu_nudft_destroy(p);
            if (st == MR_OK) {
                for (int64_t v = 0; v < 2 * nv; v++) {
                    double d = fabs((double)out[v] - (double)one[v]);
                    maxdiff = d > maxdiff ? d : maxdiff;
                    l2d += d * d;
                    l2 += (double)one[v] * one[v];
                }
                for (int64_t v = 0; v < nv; v++)
                    identical += memcmp(out + 2 * v, one + 2 * v, 2 * sizeof *out) == 0;
                /* float64 direct sums on about nref voxels (all of them when fewer) */
                double es = 0, eo = 0, rr = 0;
                for (int64_t v = 0; v < nv; v += step) {
                    double ref[2];
                    ref_voxel(&g, traj, a, real, m, v, ref);
                    for (int c = 0; c < 2; c++) {
                        es += (out[2 * v + c] - ref[c]) * (out[2 * v + c] - ref[c]);
                        eo += (one[2 * v + c] - ref[c]) * (one[2 * v + c] - ref[c]);
                        rr += ref[c] * ref[c];
                    }
                }
                ref_split = sqrt(es / rr);
                ref_one = sqrt(eo / rr);
            } else {
                fprintf(stderr, "tool_mpi_split: one-process run: %s\n", mr_last_error());
            }
            free(one);
            double rel = l2 > 0 ? sqrt(l2d / l2) : sqrt(l2d);
            printf("  check: one process %.4f s; %lld of %lld voxels bit-identical, max |diff| %.3g, relative L2 %.3g; "
                   "against float64 (%lld voxels): split %.3g, one process %.3g\n",
                   one_s, (long long)identical, (long long)nv, maxdiff, rel, (long long)((nv + step - 1) / step),
                   ref_split, ref_one);
            /* the CPU kernel mr_nudft_adjoint runs: the portable rotation kernel, or a "powers" one */
            const char *kernel = mr_nudft_kernel_name();
            int rotation = kernel && strcmp(kernel, "portable") == 0;
            int mirrored = real && (o.mirror > 0 || (o.mirror < 0 && o.device < 0));
            int want_identical = expect_identical && o.device < 0 && (!real || (mirrored && rotation));
            printf("  expected: %s (CPU kernel %s)\n", want_identical ? "bit-identical" : "relative L2 <= 1e-6",
                   kernel ? kernel : "?");
            fail = st != MR_OK || ref_split > 1e-5 || (want_identical ? identical != nv : rel > 1e-6);
            if (fail)
                printf("  FAIL: %s\n", st != MR_OK ? mr_last_error()
                                       : ref_split > 1e-5 ? "split result differs from float64 by more than 1e-5"
                                       : identical != nv && rel <= 1e-6 ? "split result not bit-identical to the one-process result"
                                                          : "split result differs from one process by more than 1e-6");
        }
        double mc = median(tc, reps), mg = median(tg, reps), mt = median(tt, reps);
        printf("RESULT what=%s dims=%d N=%lld M=%lld ranks=%d device=%s threads=%d reps=%d compute_s=%.6f gather_s=%.6f "
               "total_s=%.6f",
               what, dims, (long long)n, (long long)m, ranks, device, threads, reps, mc, mg, mt);
        if (check)
            printf(" one_s=%.6f speedup_compute=%.3f speedup_total=%.3f identical=%lld/%lld rel_l2=%.3g", one_s,
                   mc > 0 ? one_s / mc : 0, mt > 0 ? one_s / mt : 0, (long long)identical, (long long)nv,
                   l2 > 0 ? sqrt(l2d / l2) : 0);
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
