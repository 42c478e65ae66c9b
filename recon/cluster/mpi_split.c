/* The adjoint sums split into slabs across MPI ranks (recon/cluster/mpi_split.h explains the split).
 *
 * Notation: s is the slab axis (z in 3D, y in 2D), q the other row axis (y in 3D; z, of size 1, in
 * 2D); a "plane" is one index along s (nx * n_q voxels, contiguous in storage). With real weights
 * the point mirror of voxel (x, y, z) is (2cx - x, 2cy - y, 2cz - z); plane i mirrors plane
 * 2c_s - i. */
#include "mpi_split.h"

#include <stdlib.h>
#include <string.h>

#include "../../base/log.h"
#include "../../solver/nudft.h"

void mr_split_opts_default(mr_split_opts *o)
{
    o->device = -1;
    o->threads = 0;
    o->variant = MR_GPU_BEST;
    o->mirror = -1;
}

typedef struct {
    const mr_split_opts *o;
    const float *traj, *a;
    int real_weights;
    int64_t m;
    mr_gpu_nudft *gpu;
} kernel_ctx;

/* out[v] for the voxels of sub (a grid of the same axes as the whole one, other extents/centres). */
static mr_status run_kernel(kernel_ctx *k, const mr_grid *sub, float *out)
{
    if (mr_grid_size(sub) == 0)
        return MR_OK;
    if (k->o->device < 0)
        return mr_nudft_adjoint(sub, k->traj, k->a, k->real_weights, k->m, out, k->o->threads);
    if (!k->gpu) {
        mr_status st = mr_gpu_nudft_create(&k->gpu, k->o->device, k->traj, k->m);
        if (st != MR_OK)
            return st;
    }
    return mr_gpu_nudft_adjoint(k->gpu, sub, k->a, k->real_weights, out, k->o->variant);
}

/* sub := g restricted to indices [lo, lo + n) along axis ax (index j of sub is index lo + j of g). */
static mr_grid restrict_axis(const mr_grid *g, int ax, int64_t lo, int64_t n)
{
    mr_grid sub = *g;
    sub.n[ax] = n;
    sub.center[ax] = g->center[ax] - lo;
    return sub;
}

/* The planes this rank computes with the kernel, as runs of consecutive planes of one kind. */
typedef struct {
    int64_t p0, p1; /* [p0, p1) along s */
    int paired;     /* 1: planes whose mirror plane is in the grid (and not below them) */
} run;

/* Deal the computed planes out to the ranks: rank r gets units [u*r/P, u*(r+1)/P) of the list of
 * planes to compute (every plane, or with mirror those that are not the mirror of a later one).
 * Writes this rank's runs (at most 3 with mirror, 1 without); returns their count. */
static int plan_runs(const mr_grid *g, int s, int mirror, int nranks, int rank, run *runs)
{
    const int64_t ns = g->n[s], c = g->center[s];
    /* unit u -> plane: with mirror the units are the planes i with 2c - i outside [0, ns) or
       2c - i <= i, in increasing order */
    int64_t units = 0;
    for (int64_t i = 0; i < ns; i++) {
        int64_t mi = 2 * c - i;
        units += !mirror || mi < 0 || mi >= ns || mi <= i;
    }
    const int64_t u0 = units * rank / nranks, u1 = units * (rank + 1) / nranks;
    int nr = 0;
    int64_t u = 0;
    for (int64_t i = 0; i < ns && u < u1; i++) {
        int64_t mi = 2 * c - i;
        int unpaired = mi < 0 || mi >= ns;
        if (mirror && !unpaired && mi > i)
            continue; /* filled from its mirror */
        if (u++ < u0)
            continue;
        int paired = mirror && !unpaired;
        if (nr > 0 && runs[nr - 1].p1 == i && runs[nr - 1].paired == paired)
            runs[nr - 1].p1 = i + 1;
        else
            runs[nr++] = (run){i, i + 1, paired};
    }
    return nr;
}

/* One output piece of this rank: planes [p0, p1) of the result, at `at` floats into the buffer. */
typedef struct {
    int64_t p0, p1, at;
} piece;

/* The planes mirrored from the paired run [p0, p1): [l0, l1) (empty when the run is the middle plane
 * only). */
static void mirror_planes(int64_t c, const run *r, int64_t *l0, int64_t *l1)
{
    int64_t first = r->p0 > c ? r->p0 : c + 1; /* the planes of the run above the middle one */
    *l0 = 2 * c - (r->p1 - 1);
    *l1 = 2 * c - first + 1;
    if (*l1 < *l0)
        *l1 = *l0;
}

/* A paired run: compute it on the x axis extended to the mirror offsets, keep its own x range, fill
 * the mirror planes by conjugation and compute their rows without a mirror (B rows) directly. */
static mr_status paired_run(kernel_ctx *k, const mr_grid *g, int s, int q, const run *r, float *own, float *low)
{
    const int64_t nx = g->n[0], cx = g->center[0], nq = g->n[q], cq = g->center[q], c = g->center[s];
    const int64_t own_lo = -cx, own_hi = nx - 1 - cx;
    const int64_t ext_lo = own_lo < -own_hi ? own_lo : -own_hi, ext_hi = own_hi > -own_lo ? own_hi : -own_lo;
    const int64_t ex = ext_hi - ext_lo + 1, planes = r->p1 - r->p0;
    mr_grid sub = restrict_axis(g, s, r->p0, planes);
    sub.n[0] = ex;
    sub.center[0] = -ext_lo;
    float *t = malloc((size_t)(ex * nq * planes) * 2 * sizeof *t);
    if (!t)
        return mr_error(MR_ENOMEM, "split: out of memory for %lld planes of %lld x %lld voxels", (long long)planes,
                        (long long)ex, (long long)nq);
    mr_status st = run_kernel(k, &sub, t);
    int64_t l0, l1;
    mirror_planes(c, r, &l0, &l1);
    for (int64_t i = r->p0; st == MR_OK && i < r->p1; i++)
        for (int64_t iq = 0; iq < nq; iq++) {
            const float *trow = t + 2 * ((i - r->p0) * nq + iq) * ex;
            memcpy(own + 2 * ((i - r->p0) * nq + iq) * nx, trow + 2 * (own_lo - ext_lo), (size_t)nx * 2 * sizeof *own);
            const int64_t mi = 2 * c - i, mq = 2 * cq - iq;
            if (mi >= i || mq < 0 || mq >= nq)
                continue; /* the middle plane mirrors itself (the kernel did it); no mirror row */
            float *lrow = low + 2 * ((mi - l0) * nq + mq) * nx;
            for (int64_t ix = 0; ix < nx; ix++) {
                const int64_t j = -(ix - cx) - ext_lo; /* our voxel at the opposite offset */
                lrow[2 * ix] = trow[2 * j];
                lrow[2 * ix + 1] = -trow[2 * j + 1];
            }
        }
    free(t);
    /* rows of the mirror planes whose own mirror row is outside the grid: [0, 2cq - nq + 1) and
       (2cq, nq), computed directly like the one-process kernel computes them */
    const int64_t yr[2][2] = {{0, 2 * cq - nq + 1}, {2 * cq + 1, nq}};
    for (int b = 0; st == MR_OK && b < 2 && l1 > l0; b++) {
        const int64_t y0 = yr[b][0] > 0 ? yr[b][0] : 0, y1 = yr[b][1] < nq ? yr[b][1] : nq;
        if (y1 <= y0)
            continue;
        mr_grid bg = restrict_axis(g, s, l0, l1 - l0);
        bg = restrict_axis(&bg, q, y0, y1 - y0);
        float *bt = malloc((size_t)mr_grid_size(&bg) * 2 * sizeof *bt);
        if (!bt)
            return mr_error(MR_ENOMEM, "split: out of memory");
        st = run_kernel(k, &bg, bt);
        for (int64_t i = 0; st == MR_OK && i < l1 - l0; i++)
            for (int64_t iq = y0; iq < y1; iq++)
                memcpy(low + 2 * (i * nq + iq) * nx, bt + 2 * (i * (y1 - y0) + iq - y0) * nx,
                       (size_t)nx * 2 * sizeof *low);
        free(bt);
    }
    return st;
}

mr_status mr_mpi_adjoint_split(mr_comm *comm, const mr_grid *g, const float *traj, const float *a, int real_weights,
                               int64_t m, float *out, const mr_split_opts *opts, mr_split_stats *stats)
{
    const double t_start = mr_now();
    mr_split_opts o;
    if (opts)
        o = *opts;
    else
        mr_split_opts_default(&o);
    const int rank = mr_comm_rank(comm), nranks = mr_comm_size(comm);
    const int s = g->n[2] > 1 ? 2 : 1, q = s == 2 ? 1 : 2;
    const int mirror = real_weights && (o.mirror > 0 || (o.mirror < 0 && o.device < 0));
    const int64_t plane = g->n[0] * g->n[q]; /* voxels */
    mr_status st = MR_OK;
    for (int ax = 0; ax < 3; ax++)
        if (g->n[ax] < 1 || g->scale[ax] < 1)
            st = mr_error(MR_EINVAL, "split: grid axis %d has n = %lld, scale = %lld", ax, (long long)g->n[ax],
                          (long long)g->scale[ax]);
    if (st == MR_OK && (!traj || !a || m < 1 || (rank == 0 && !out)))
        st = mr_error(MR_EINVAL, "split: null array or %lld samples", (long long)m);
    st = mr_comm_agree(comm, st);
    if (st != MR_OK)
        return st;

    run runs[3];
    const int nruns = plan_runs(g, s, mirror, nranks, rank, runs);
    piece pieces[6];
    int np = 0;
    int64_t floats = 0, computed = 0;
    for (int i = 0; i < nruns; i++) {
        pieces[np++] = (piece){runs[i].p0, runs[i].p1, floats};
        floats += 2 * (runs[i].p1 - runs[i].p0) * plane;
        computed += runs[i].p1 - runs[i].p0;
        if (runs[i].paired) {
            int64_t l0, l1;
            mirror_planes(g->center[s], &runs[i], &l0, &l1);
            if (l1 > l0) {
                pieces[np++] = (piece){l0, l1, floats};
                floats += 2 * (l1 - l0) * plane;
            }
        }
    }
    float *mine = malloc((size_t)(floats > 0 ? floats : 1) * sizeof *mine);
    if (!mine)
        st = mr_error(MR_ENOMEM, "split: rank %d: out of memory for %lld floats", rank, (long long)floats);
    kernel_ctx k = {&o, traj, a, real_weights, m, NULL};
    const double t0 = mr_now();
    for (int i = 0, p = 0; st == MR_OK && i < nruns; i++, p++) {
        if (!runs[i].paired) {
            mr_grid sub = restrict_axis(g, s, runs[i].p0, runs[i].p1 - runs[i].p0);
            st = run_kernel(&k, &sub, mine + pieces[p].at);
            continue;
        }
        int64_t l0, l1;
        mirror_planes(g->center[s], &runs[i], &l0, &l1);
        float *low = l1 > l0 ? mine + pieces[p + 1].at : NULL;
        st = paired_run(&k, g, s, q, &runs[i], mine + pieces[p].at, low);
        p += l1 > l0;
    }
    const double compute = mr_now() - t0;
    mr_gpu_nudft_destroy(k.gpu);
    st = mr_comm_agree(comm, st);
    const double compute_max = mr_comm_max(comm, compute);
    const double t1 = mr_now();
    if (st == MR_OK) {
        mr_comm_run cr[6];
        for (int i = 0; i < np; i++)
            cr[i] = (mr_comm_run){pieces[i].at, 2 * pieces[i].p0 * plane, 2 * (pieces[i].p1 - pieces[i].p0) * plane};
        st = mr_comm_gather_runs(comm, 0, mine, cr, np, out, 2 * mr_grid_size(g), 1);
    }
    free(mine);
    if (stats) {
        stats->compute_s = compute;
        stats->compute_max_s = compute_max;
        stats->gather_s = mr_now() - t1;
        stats->total_s = mr_now() - t_start;
        stats->planes = computed;
        stats->ranks = nranks;
    }
    return st;
}
