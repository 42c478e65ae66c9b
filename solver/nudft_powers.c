/* The AVX-512 adjoint NUDFT: out[v] = sum_m a_m e^{+i2pi k_m.r_v} (docs/OPERATOR.md).
 *
 * SIMD lanes run over voxel offsets, not samples. A row is cut into blocks of 2J voxels (J = 16, 32
 * or 64) around a centre c half-way between two voxels; voxel c +/- (j + 1/2) receives
 *   sum_m b_m e^{+/- i2pi dkx_m (j + 1/2)},   b_m = a_m e^{i2pi (k_m . r_c)}   (exact, per block),
 * and with b = u + iv, e^{i2pi dkx (j+1/2)} = C_j + i S_j (a per-sample table, exact, shared by all
 * rows and blocks):
 *   plus side:  (P - Q) + i (R + T),   minus side: (P + Q) + i (T - R),
 *   P = sum u C, Q = sum v S, R = sum u S, T = sum v C,
 * i.e. 4 FMAs per sample for 2 x 16 voxels, accumulators in registers, no rotation chain and no
 * horizontal reduction. Samples come in tiles of PW_TILE (the table, 32 KiB, stays in L1); each
 * tile's sums are added to float row accumulators, flushed into double ones every PW_FLUSH tiles.
 * Chunks of rows go to the threads dynamically; every row is computed by one thread in the same
 * order whatever the thread count or schedule. Real weights: mirrored rows as in mr_nudft_tasks; the
 * mirror entries that fall outside the computed row (the unpaired column ix = 0 of even x axes) are
 * computed afterwards as one column pass (pw_column0), or summed directly on other grids. */
#include <string.h>

#include "nudft_internal.h"

#if defined(__AVX512F__)
#include <immintrin.h>

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

/* tc/ts[m][j] = cos/sin(2 pi dkx_m (j + 1/2)), phases reduced in double. */
static void pw_table(const double *restrict dkx, float *restrict tc, float *restrict ts)
{
    for (int m = 0; m < PW_TILE; m++) {
        const double d = dkx[m];
        float *c = tc + m * PW_J, *s = ts + m * PW_J;
#pragma omp simd simdlen(NUDFT_VL)
        for (int j = 0; j < PW_J; j++) {
            double t = d * ((double)j + 0.5);
            t -= nudft_round(t);
            nudft_sincos_2pi(t, &s[j], &c[j]);
        }
    }
}

/* Sums of one tile into the float accumulators re/im of the block (index 0 = its first voxel).
 * nj is a compile-time constant after inlining; 4/nj samples are interleaved so that 16
 * independent accumulators hide the FMA latency. */
static inline void pw_accumulate(const int nj, const float *restrict bu, const float *restrict bv,
                                 const float *restrict tc, const float *restrict ts, float *restrict re,
                                 float *restrict im)
{
    const int nu = 4 / nj;
    __m512 acc_p[4][4], acc_q[4][4], acc_r[4][4], acc_t[4][4];
    for (int u = 0; u < nu; u++)
        for (int q = 0; q < nj; q++)
            acc_p[u][q] = acc_q[u][q] = acc_r[u][q] = acc_t[u][q] = _mm512_setzero_ps();
    for (int m = 0; m < PW_TILE; m += nu)
        for (int u = 0; u < nu; u++) {
            const __m512 vu = _mm512_set1_ps(bu[m + u]), vv = _mm512_set1_ps(bv[m + u]);
            const float *c = tc + (m + u) * PW_J, *s = ts + (m + u) * PW_J;
            for (int q = 0; q < nj; q++) {
                const __m512 vc = _mm512_load_ps(c + 16 * q), vs = _mm512_load_ps(s + 16 * q);
                acc_p[u][q] = _mm512_fmadd_ps(vu, vc, acc_p[u][q]);
                acc_q[u][q] = _mm512_fmadd_ps(vv, vs, acc_q[u][q]);
                acc_r[u][q] = _mm512_fmadd_ps(vu, vs, acc_r[u][q]);
                acc_t[u][q] = _mm512_fmadd_ps(vv, vc, acc_t[u][q]);
            }
        }
    const int half = 16 * nj;
    const __m512i reverse = _mm512_set_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    for (int q = 0; q < nj; q++) {
        __m512 p = acc_p[0][q], qq = acc_q[0][q], r = acc_r[0][q], t = acc_t[0][q];
        for (int u = 1; u < nu; u++) {
            p = _mm512_add_ps(p, acc_p[u][q]);
            qq = _mm512_add_ps(qq, acc_q[u][q]);
            r = _mm512_add_ps(r, acc_r[u][q]);
            t = _mm512_add_ps(t, acc_t[u][q]);
        }
        /* plus side: voxel half + 16q + lane */
        float *pr = re + half + 16 * q, *pi = im + half + 16 * q;
        _mm512_storeu_ps(pr, _mm512_add_ps(_mm512_loadu_ps(pr), _mm512_sub_ps(p, qq)));
        _mm512_storeu_ps(pi, _mm512_add_ps(_mm512_loadu_ps(pi), _mm512_add_ps(r, t)));
        /* minus side: voxel half - 1 - (16q + lane), i.e. lanes reversed from half - 16(q+1) on */
        float *mr = re + half - 16 * (q + 1), *mi = im + half - 16 * (q + 1);
        const __m512 minus_re = _mm512_permutexvar_ps(reverse, _mm512_add_ps(p, qq));
        const __m512 minus_im = _mm512_permutexvar_ps(reverse, _mm512_sub_ps(t, r));
        _mm512_storeu_ps(mr, _mm512_add_ps(_mm512_loadu_ps(mr), minus_re));
        _mm512_storeu_ps(mi, _mm512_add_ps(_mm512_loadu_ps(mi), minus_im));
    }
}

/* One voxel at offsets (x, y, z), summed directly over every sample (double sum). */
static void pw_direct(const nudft_samples *p, double x, double y, double z, float *out)
{
    double sr = 0.0, si = 0.0;
    const double *dkx = p->dk[0], *dky = p->dk[1], *dkz = p->dk[2];
#pragma omp simd simdlen(NUDFT_VL) reduction(+ : sr, si)
    for (int64_t k = 0; k < p->mp; k++) {
        double t = dkx[k] * x + dky[k] * y + dkz[k] * z;
        t -= nudft_round(t);
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
#pragma omp simd simdlen(NUDFT_VL)
            for (int k = 0; k < PW_TILE; k++)
                phi[k] = dky[k] * y + dkz[k] * z;
            float *re = w->facc + i * 2 * lenp, *im = re + lenp;
            for (int64_t b = 0; b < job->nblocks; b++) {
                const pw_block *bl = &job->blocks[b];
                const double xc = (double)(bl->start - cx) + 16.0 * bl->nj - 0.5; /* block centre */
#pragma omp simd simdlen(NUDFT_VL)
                for (int k = 0; k < PW_TILE; k++) {
                    double t = phi[k] + dkx[k] * xc;
                    t -= nudft_round(t);
                    float s, c;
                    nudft_sincos_2pi(t, &s, &c);
                    bu[k] = NUDFT_FMA(ar[k], c, -ai[k] * s);
                    bv[k] = NUDFT_FMA(ar[k], s, ai[k] * c);
                }
                if (bl->nj == 4)
                    pw_accumulate(4, bu, bv, w->tc, w->ts, re + bl->start, im + bl->start);
                else if (bl->nj == 2)
                    pw_accumulate(2, bu, bv, w->tc, w->ts, re + bl->start, im + bl->start);
                else
                    pw_accumulate(1, bu, bv, w->tc, w->ts, re + bl->start, im + bl->start);
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
            if (ok)
                pw_chunk(job, &w, c * rows, (c + 1) * rows < ntasks ? (c + 1) * rows : ntasks);
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
    pw_job job;
    job.g = &gc;
    job.out = col;
    job.direct_missing = 1;
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

mr_status mr_nudft_adjoint_powers(const mr_grid *g, const float *traj, const float *a, int real_weights,
                                  int64_t m, float *out, int threads)
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
    pw_job job;
    job.g = g;
    job.out = out;
    job.direct_missing = !column0;
    st = pw_run(&job, &p, tasks, ntasks, threads);
    if (st == MR_OK && column0)
        st = pw_column0(g, &p, out, threads);
    free(tasks);
    mr_nudft_samples_free(&p);
    return st;
}

#else /* no AVX-512: the rotation kernel serves */

mr_status mr_nudft_adjoint_powers(const mr_grid *g, const float *traj, const float *a, int real_weights,
                                  int64_t m, float *out, int threads)
{
    (void)g;
    (void)traj;
    (void)a;
    (void)real_weights;
    (void)m;
    (void)out;
    (void)threads;
    return mr_error(MR_ENOTSUP, "mr_nudft_adjoint_powers: this build has no AVX-512");
}

#endif
