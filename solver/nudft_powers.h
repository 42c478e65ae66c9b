/* The powers adjoint NUDFT: out[v] = sum_m a_m e^{+i2pi k_m.r_v} (docs/OPERATOR.md), written once
 * against the vector names of solver/nudft_simd.h and compiled per instruction set (AVX-512 and AVX2 +
 * FMA: solver/nudft_avx512.c, solver/nudft_avx2.c, which include this file once each).
 *
 * SIMD lanes run over voxel offsets, not samples. A row is cut into blocks of 2J voxels (J = 16, 32
 * or 64) around a centre c half-way between two voxels; voxel c +/- (j + 1/2) receives
 *   sum_m b_m e^{+/- i2pi dkx_m (j + 1/2)},   b_m = a_m e^{i2pi (k_m . r_c)}   (exact, per block),
 * and with b = u + iv, e^{i2pi dkx (j+1/2)} = C_j + i S_j (a per-sample table, exact, shared by all
 * rows and blocks):
 *   plus side:  (P - Q) + i (R + T),   minus side: (P + Q) + i (T - R),
 *   P = sum u C, Q = sum v S, R = sum u S, T = sum v C,
 * i.e. 4 FMAs per sample for 2 x PW_VL voxels (PW_VL = 16 floats per AVX-512 register, 8 per AVX2
 * register), accumulators in registers, no rotation chain and no horizontal reduction. A pass over a
 * tile covers PW_ACC_VECTORS offset vectors per side (4 with AVX-512's 32 registers, 2 with AVX2's
 * 16); blocks wider than one pass take several passes over the same tile. Samples come in tiles of PW_TILE (the table, 32 KiB, stays in L1); each
 * tile's sums are added to float row accumulators, flushed into double ones every PW_FLUSH tiles.
 * Chunks of rows go to the threads dynamically; every row is computed by one thread in the same
 * order whatever the thread count or schedule. Real weights: mirrored rows as in mr_nudft_tasks; the
 * mirror entries that fall outside the computed row (the unpaired column ix = 0 of even x axes) are
 * computed afterwards as one column pass (pw_column0), or summed directly on other grids. */
#ifndef NUDFT_ISA
#error "solver/nudft_powers.h is included by solver/nudft_avx512.c and solver/nudft_avx2.c only"
#endif
#include <string.h>

#include "nudft_simd.h"

#if defined(PW_HAVE_VECTORS)

#define PW_J 64               /* table width: offsets j + 1/2 for j < PW_J (the widest block has J = 64) */
#define PW_TILE 64            /* samples per tile: table 2 x 64 x 64 floats */
#define PW_FLUSH 8            /* tiles summed in float before the double accumulators */
#define PW_CHUNK_VOXELS 32768    /* at most this many row voxels per chunk (accumulators in L2) */
#define PW_MIN_CHUNK_VOXELS 4096 /* at least this many (amortises the per-tile table) */
#define PW_CHUNKS_PER_THREAD 2   /* chunks handed out per thread (dynamic schedule) */

typedef struct {
    int64_t start; /* first row index of the block */
    int nj;        /* J = 16 nj voxel pairs, 32 nj voxels */
} pw_block;

/* Cut a row of len voxels into blocks; returns the count, *padded = the covered length. */
static int64_t plan_blocks(int64_t len, pw_block *b, int64_t *padded)
{
    int64_t n = 0, pos = 0;
    while (pos < len) {
        const int64_t rem = len - pos;
        const int nj = rem >= 96 ? 4 : rem > 32 ? 2 : 1;
        b[n].start = pos;
        b[n].nj = nj;
        n++;
        pos += 32 * nj;
    }
    *padded = pos;
    return n;
}

/* tc/ts[m][j] = cos/sin(2 pi dkx_m (j + 1/2)), j < PW_J, from 32-bit fixed-point phases
 * h + j d (h = dkx/2, d = dkx, each rounded to 2^-33 cycles; the integer arithmetic is exact modulo
 * one cycle), so the phase of entry j is off by at most (j + 1) 2^-33 <= 2^-27 cycles: no double
 * arithmetic per entry. */
static void pw_table(const double *restrict dkx, float *restrict tc, float *restrict ts)
{
    for (int m = 0; m < PW_TILE; m++) {
        const uint32_t h = nudft_fixed32(0.5 * dkx[m]), d = nudft_fixed32(dkx[m]);
        float *restrict c = tc + m * PW_J, *restrict s = ts + m * PW_J;
#pragma omp simd simdlen(PW_VL)
        for (int j = 0; j < PW_J; j++)
            nudft_sincos_fixed32(h + (uint32_t)j * d, &s[j], &c[j]);
    }
}

/* Sums of one tile over the offset vectors [q0, q0 + G) of a block (PW_VL offsets each) into its
 * float accumulators re/im (index 0 = the block's first voxel; half = J, the offsets per side).
 * G and NU are compile-time constants after inlining: NU samples are interleaved so that the
 * 4 G NU = 4 PW_ACC_VECTORS accumulators are independent chains that hide the FMA latency. */
PW_INLINE void pw_accumulate(const int G, const int NU, const int half, const int q0, const float *restrict bu,
                                 const float *restrict bv, const float *restrict tc, const float *restrict ts,
                                 float *restrict re, float *restrict im)
{
    pw_vf acc_p[PW_ACC_VECTORS][PW_ACC_VECTORS], acc_q[PW_ACC_VECTORS][PW_ACC_VECTORS];
    pw_vf acc_r[PW_ACC_VECTORS][PW_ACC_VECTORS], acc_t[PW_ACC_VECTORS][PW_ACC_VECTORS];
    for (int u = 0; u < NU; u++)
        for (int q = 0; q < G; q++)
            acc_p[u][q] = acc_q[u][q] = acc_r[u][q] = acc_t[u][q] = pw_zero();
    for (int m = 0; m < PW_TILE; m += NU)
        for (int u = 0; u < NU; u++) {
            const pw_vf vu = pw_set1(bu[m + u]), vv = pw_set1(bv[m + u]);
            const float *c = tc + (m + u) * PW_J + PW_VL * q0, *s = ts + (m + u) * PW_J + PW_VL * q0;
            for (int q = 0; q < G; q++) {
                pw_vf vc = pw_load(c + PW_VL * q), vs = pw_load(s + PW_VL * q);
                pw_in_register(&vc, &vs);
                acc_p[u][q] = pw_fmadd(vu, vc, acc_p[u][q]);
                acc_q[u][q] = pw_fmadd(vv, vs, acc_q[u][q]);
                acc_r[u][q] = pw_fmadd(vu, vs, acc_r[u][q]);
                acc_t[u][q] = pw_fmadd(vv, vc, acc_t[u][q]);
            }
        }
    for (int q = 0; q < G; q++) {
        pw_vf p = acc_p[0][q], qq = acc_q[0][q], r = acc_r[0][q], t = acc_t[0][q];
        for (int u = 1; u < NU; u++) {
            p = pw_add(p, acc_p[u][q]);
            qq = pw_add(qq, acc_q[u][q]);
            r = pw_add(r, acc_r[u][q]);
            t = pw_add(t, acc_t[u][q]);
        }
        const int off = PW_VL * (q0 + q);
        /* plus side: voxel half + off + lane */
        float *pr = re + half + off, *pi = im + half + off;
        pw_storeu(pr, pw_add(pw_loadu(pr), pw_sub(p, qq)));
        pw_storeu(pi, pw_add(pw_loadu(pi), pw_add(r, t)));
        /* minus side: voxel half - 1 - (off + lane), i.e. lanes reversed from half - off - PW_VL on */
        float *mr = re + half - off - PW_VL, *mi = im + half - off - PW_VL;
        pw_storeu(mr, pw_add(pw_loadu(mr), pw_reverse(pw_add(p, qq))));
        pw_storeu(mi, pw_add(pw_loadu(mi), pw_reverse(pw_sub(t, r))));
    }
}

/* One (row, block) of one tile in passes of at most PW_ACC_VECTORS offset vectors per side (the
 * register budget); a block narrower than one pass interleaves samples instead. */
PW_INLINE void pw_block_tile(int nj, const float *restrict bu, const float *restrict bv, const float *restrict tc,
                                 const float *restrict ts, float *restrict re, float *restrict im)
{
    const int half = 16 * nj, nq = half / PW_VL; /* offset vectors per side: 1, 2, 4 or 8 */
#if PW_ACC_VECTORS == 4
    if (nq >= 4) {
        for (int q0 = 0; q0 < nq; q0 += 4)
            pw_accumulate(4, 1, half, q0, bu, bv, tc, ts, re, im);
    } else if (nq == 2) {
        pw_accumulate(2, 2, half, 0, bu, bv, tc, ts, re, im);
    } else {
        pw_accumulate(1, 4, half, 0, bu, bv, tc, ts, re, im);
    }
#elif PW_ACC_VECTORS == 2
    for (int q0 = 0; q0 < nq; q0 += 2) /* nq >= 2 with 8 floats per vector */
        pw_accumulate(2, 1, half, q0, bu, bv, tc, ts, re, im);
#else
#error "PW_ACC_VECTORS must be 2 or 4"
#endif
}

/* One voxel at offsets (x, y, z), summed directly over every sample (double sum). */
static void pw_direct(const nudft_samples *p, double x, double y, double z, float *out)
{
    double sr = 0.0, si = 0.0;
    const double *dkx = p->dk[0], *dky = p->dk[1], *dkz = p->dk[2];
#pragma omp simd simdlen(PW_VL) reduction(+ : sr, si)
    for (int64_t k = 0; k < p->mp; k++) {
        const double t = dkx[k] * x + dky[k] * y + dkz[k] * z;
        float s, c;
        nudft_sincos_2pi(t, &s, &c);
        sr += (double)NUDFT_FMA(p->ar[k], c, -p->ai[k] * s);
        si += (double)NUDFT_FMA(p->ar[k], s, p->ai[k] * c);
    }
    out[0] = (float)sr;
    out[1] = (float)si;
}

typedef struct {
    const mr_grid *g;
    const nudft_samples *p;
    const nudft_task *tasks;
    const pw_block *blocks;
    int64_t nblocks, lenp, chunk;
    int direct_missing; /* mirror entries outside the computed row: 1 sum them here, 0 the caller does */
    float *out;
    mr_progress_rows *prog; /* finished tasks (rows) are counted here */
} pw_job;

/* Per-thread work arrays. */
typedef struct {
    float *tc, *ts; /* [PW_TILE][PW_J] */
    double *phi;    /* [PW_TILE] */
    float *bu, *bv; /* [PW_TILE] */
    float *facc;    /* [chunk][2][lenp] */
    double *dacc;   /* [chunk][2][lenp] */
} pw_work;

/* Tasks [t0, t1) (at most job->chunk of them): accumulate over all samples, then write the rows. */
static void pw_chunk(const pw_job *job, pw_work *w, int64_t t0, int64_t t1)
{
    const mr_grid *g = job->g;
    const nudft_samples *p = job->p;
    const int64_t lenp = job->lenp, nrow = t1 - t0, ntiles = p->mp / PW_TILE;
    const int64_t nx = g->n[0], ny = g->n[1], cx = g->center[0];
    memset(w->facc, 0, (size_t)(nrow * 2 * lenp) * sizeof(float));
    memset(w->dacc, 0, (size_t)(nrow * 2 * lenp) * sizeof(double));
    for (int64_t tile = 0; tile < ntiles; tile++) {
        const int64_t k0 = tile * PW_TILE;
        const double *restrict dkx = p->dk[0] + k0, *restrict dky = p->dk[1] + k0, *restrict dkz = p->dk[2] + k0;
        const float *restrict ar = p->ar + k0, *restrict ai = p->ai + k0;
        pw_table(dkx, w->tc, w->ts);
        for (int64_t i = 0; i < nrow; i++) {
            const nudft_task *tk = &job->tasks[t0 + i];
            const double y = (double)(tk->iy - g->center[1]), z = (double)(tk->iz - g->center[2]);
            double *restrict phi = w->phi;
            float *restrict bu = w->bu, *restrict bv = w->bv;
#pragma omp simd simdlen(PW_VL)
            for (int k = 0; k < PW_TILE; k++)
                phi[k] = dky[k] * y + dkz[k] * z;
            float *re = w->facc + i * 2 * lenp, *im = re + lenp;
            for (int64_t b = 0; b < job->nblocks; b++) {
                const pw_block *bl = &job->blocks[b];
                const double xc = (double)(bl->start - cx) + 16.0 * bl->nj - 0.5; /* block centre */
#pragma omp simd simdlen(PW_VL)
                for (int k = 0; k < PW_TILE; k++) {
                    const double t = phi[k] + dkx[k] * xc;
                    float s, c;
                    nudft_sincos_2pi(t, &s, &c);
                    bu[k] = NUDFT_FMA(ar[k], c, -ai[k] * s);
                    bv[k] = NUDFT_FMA(ar[k], s, ai[k] * c);
                }
                if (bl->nj == 4)
                    pw_block_tile(4, bu, bv, w->tc, w->ts, re + bl->start, im + bl->start);
                else if (bl->nj == 2)
                    pw_block_tile(2, bu, bv, w->tc, w->ts, re + bl->start, im + bl->start);
                else
                    pw_block_tile(1, bu, bv, w->tc, w->ts, re + bl->start, im + bl->start);
            }
        }
        if ((tile + 1) % PW_FLUSH == 0 || tile == ntiles - 1) {
            const int64_t n = nrow * 2 * lenp;
            float *restrict f = w->facc;
            double *restrict d = w->dacc;
#pragma omp simd
            for (int64_t i = 0; i < n; i++) {
                d[i] += (double)f[i];
                f[i] = 0.0f;
            }
        }
    }
    for (int64_t i = 0; i < nrow; i++) {
        const nudft_task *tk = &job->tasks[t0 + i];
        const double *re = w->dacc + i * 2 * lenp, *im = re + lenp;
        float *row = job->out + 2 * (tk->iz * ny + tk->iy) * nx;
        for (int64_t ix = 0; ix < nx; ix++) {
            row[2 * ix] = (float)re[ix];
            row[2 * ix + 1] = (float)im[ix];
        }
        if (!tk->mirror)
            continue;
        const int64_t my = 2 * g->center[1] - tk->iy, mz = 2 * g->center[2] - tk->iz;
        float *mrow = job->out + 2 * (mz * ny + my) * nx;
        for (int64_t ix = 0; ix < nx; ix++) {
            const int64_t own = 2 * cx - ix; /* our voxel at the opposite offset */
            if (own >= 0 && own < nx) {
                mrow[2 * ix] = (float)re[own];
                mrow[2 * ix + 1] = -(float)im[own];
            } else if (job->direct_missing) {
                pw_direct(p, (double)(ix - cx), (double)(my - g->center[1]), (double)(mz - g->center[2]),
                          mrow + 2 * ix);
            }
        }
    }
}

/* Run a job over all its tasks (rows split statically between the threads). */
static mr_status pw_run(pw_job *job, const nudft_samples *p, const nudft_task *tasks, int64_t ntasks, int threads)
{
    pw_block *blocks = malloc((size_t)(job->g->n[0] / 32 + 2) * sizeof *blocks);
    if (!blocks)
        return mr_error(MR_ENOMEM, "mr_nudft_adjoint: out of memory");
    job->p = p;
    job->tasks = tasks;
    job->blocks = blocks;
    job->nblocks = plan_blocks(job->g->n[0], blocks, &job->lenp);
    /* Chunks of rows, handed out dynamically (several per thread, so that a thread slowed down by
     * another process does not hold up the call); each row is still computed by one thread in a
     * fixed order, so the bits do not depend on the schedule. A chunk is small enough for its
     * accumulators to stay in L2 and large enough to amortise its per-tile table. */
    const int64_t max_rows = PW_CHUNK_VOXELS / job->lenp > 0 ? PW_CHUNK_VOXELS / job->lenp : 1;
    const int64_t min_rows = PW_MIN_CHUNK_VOXELS / job->lenp > 0 ? PW_MIN_CHUNK_VOXELS / job->lenp : 1;
    int64_t rows = (ntasks + PW_CHUNKS_PER_THREAD * threads - 1) / (PW_CHUNKS_PER_THREAD * threads);
    rows = rows < min_rows ? min_rows : rows;
    rows = rows > max_rows ? max_rows : rows;
    job->chunk = rows;
    const int64_t nchunks = (ntasks + rows - 1) / rows;
    int failed = 0;
#pragma omp parallel num_threads(threads)
    {
        pw_work w;
        const size_t acc_n = (size_t)((rows < ntasks ? rows : ntasks) * 2 * job->lenp);
        w.tc = nudft_alloc(2 * PW_TILE * PW_J * sizeof(float));
        w.phi = nudft_alloc(PW_TILE * sizeof(double));
        w.bu = nudft_alloc(2 * PW_TILE * sizeof(float));
        w.facc = nudft_alloc(acc_n * sizeof(float));
        w.dacc = nudft_alloc(acc_n * sizeof(double));
        const int ok = w.tc && w.phi && w.bu && w.facc && w.dacc;
        if (!ok) {
#pragma omp atomic write
            failed = 1;
        }
        w.ts = ok ? w.tc + PW_TILE * PW_J : NULL;
        w.bv = ok ? w.bu + PW_TILE : NULL;
#pragma omp for schedule(dynamic, 1)
        for (int64_t c = 0; c < nchunks; c++)
            if (ok) {
                const int64_t t1 = (c + 1) * rows < ntasks ? (c + 1) * rows : ntasks;
                pw_chunk(job, &w, c * rows, t1);
                mr_progress_rows_add(job->prog, t1 - c * rows);
                mr_progress_rows_poll(job->prog);
            }
        free(w.tc);
        free(w.phi);
        free(w.bu);
        free(w.facc);
        free(w.dacc);
    }
    free(blocks);
    if (failed)
        return mr_error(MR_ENOMEM, "mr_nudft_adjoint: out of memory for a %lldx%lldx%lld grid",
                        (long long)job->g->n[0], (long long)job->g->n[1], (long long)job->g->n[2]);
    return MR_OK;
}

/* The x = 0 column of every row, as rows along y: the same samples with the axes permuted
 * (y becomes the row axis, z the row index, x a constant offset -cx). Written into out[row][0]. */
static mr_status pw_column0(const mr_grid *g, const nudft_samples *p, float *out, int threads)
{
    const int64_t nx = g->n[0], ny = g->n[1], nz = g->n[2];
    mr_grid gc;
    gc.n[0] = ny;
    gc.n[1] = nz;
    gc.n[2] = 1;
    gc.center[0] = g->center[1];
    gc.center[1] = g->center[2];
    gc.center[2] = g->center[0]; /* index 0 on this axis sits at offset -cx */
    gc.scale[0] = g->scale[1];
    gc.scale[1] = g->scale[2];
    gc.scale[2] = g->scale[0];
    nudft_samples pc = *p;
    pc.dk[0] = p->dk[1];
    pc.dk[1] = p->dk[2];
    pc.dk[2] = p->dk[0];
    int64_t ntasks = 0;
    nudft_task *tasks = mr_nudft_tasks(&gc, 0, &ntasks);
    float *col = malloc((size_t)(ny * nz) * 2 * sizeof(float));
    if (!tasks || !col) {
        free(tasks);
        free(col);
        return mr_error(MR_ENOMEM, "mr_nudft_adjoint: out of memory");
    }
    mr_progress_rows none;
    mr_progress_rows_init(&none, NULL, NULL, 0); /* one column: not worth reporting */
    pw_job job;
    job.g = &gc;
    job.out = col;
    job.direct_missing = 1;
    job.prog = &none;
    mr_status st = pw_run(&job, &pc, tasks, ntasks, threads);
    if (st == MR_OK)
        for (int64_t r = 0; r < ny * nz; r++) {
            out[2 * r * nx] = col[2 * r];
            out[2 * r * nx + 1] = col[2 * r + 1];
        }
    free(tasks);
    free(col);
    return st;
}

mr_status NUDFT_NAME(mr_nudft_adjoint_powers)(const mr_grid *g, const float *traj, const float *a, int real_weights,
                                             int64_t m, float *out, int threads, const mr_progress *progress,
                                             const char *stage)
{
    nudft_samples p;
    nudft_task *tasks;
    int64_t ntasks;
    mr_status st = mr_nudft_adjoint_setup(g, traj, a, real_weights, m, out, 0, &threads, &p, &tasks, &ntasks);
    if (st != MR_OK)
        return st;
    /* Mirrored rows miss the entries whose opposite offset lies outside the row: ix < 2cx - nx + 1
     * or ix > 2cx. When that is exactly the column ix = 0 (even axes, the Q grid), it is computed for
     * all rows at once as rows along y, instead of one direct sum per row. */
    const int64_t nx = g->n[0], cx = g->center[0];
    const int column0 = real_weights && 2 * cx - nx + 1 == 1 && nx > 1;
    mr_progress_rows prog;
    mr_progress_rows_init(&prog, progress, stage, ntasks);
    pw_job job;
    job.g = g;
    job.out = out;
    job.direct_missing = !column0;
    job.prog = &prog;
    st = pw_run(&job, &p, tasks, ntasks, threads);
    if (st == MR_OK && column0)
        st = pw_column0(g, &p, out, threads);
    if (st == MR_OK)
        mr_progress_rows_finish(&prog);
    free(tasks);
    mr_nudft_samples_free(&p);
    return st;
}

#else /* the compiler did not target this instruction set: the dispatcher never calls this */

mr_status NUDFT_NAME(mr_nudft_adjoint_powers)(const mr_grid *g, const float *traj, const float *a, int real_weights,
                                             int64_t m, float *out, int threads, const mr_progress *progress,
                                             const char *stage)
{
    (void)progress;
    (void)stage;
    (void)g;
    (void)traj;
    (void)a;
    (void)real_weights;
    (void)m;
    (void)out;
    (void)threads;
    return mr_error(MR_ENOTSUP, "mr_nudft_adjoint: this build has no %s kernels", NUDFT_ISA_NAME);
}

#endif
