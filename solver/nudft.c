/* Fast exact non-uniform DFTs on the CPU (float32, OpenMP + SIMD): the parts every kernel shares
 * (sample layout, row tasks, argument checks), the portable kernels, and the dispatch between the
 * instruction-set levels (base/cpu.h: avx512, avx2, portable; solver/nudft_simd.h).
 * docs/OPERATOR.md explains the schemes and bounds their errors.
 *
 * Levels: avx512 and avx2 run the "powers" adjoint (solver/nudft_powers.h) and the Horner forward
 * (solver/nudft_forward.h) compiled for that instruction set; portable runs the "rotation" adjoint
 * below and the same Horner forward compiled with the build's baseline flags.
 *
 *  - samples are stored as a structure of arrays padded with zero-weight samples to a multiple of
 *    NUDFT_TILE, and processed in tiles that stay in L1;
 *  - rotation adjoint: voxels are visited along x in blocks of NUDFT_BLOCK. At the start of a block
 *    the phasor e^{i2pi k.r} is computed exactly: the phase k.r is formed and reduced to the nearest
 *    quarter cycle in double, then float polynomials give sin and cos (nudft_sincos_2pi). Inside the block the phasor is
 *    advanced by complex rotation with the per-sample step e^{i2pi kx/sx} (within a sub-block of
 *    NUDFT_SUB voxels) and e^{i2pi NUDFT_SUB kx/sx} (from one sub-block to the next), both rounded
 *    from double. A voxel is thus at most (NUDFT_SUB-1) + (NUDFT_BLOCK/NUDFT_SUB-1) rotations from an
 *    exact phasor. Voxels outer (OpenMP over rows), samples inner (SIMD lanes), NUDFT_SUB voxel
 *    accumulators per lane in registers; float sums within a tile, double sums across tiles.
 *    Real weights (Q): Q(-r) = conj Q(r), so only half of the rows are computed and mirrored.
 * Every output element is computed by one thread in a fixed order: results do not depend on the
 * thread count or the (dynamic) schedule. */
#include <string.h>

#include "../base/cpu.h"
#include "nudft_simd.h"

/* the portable forward: solver/nudft_forward.h with the baseline flags */
#define NUDFT_ISA portable
#define NUDFT_FWD_VL NUDFT_VL
#include "nudft_forward.h"
#include "nudft_field.h"

/* e^{i 2 pi t} rounded from double (steps: their error is repeated by every rotation). */
static void phasor_exact(double t, float *c, float *s)
{
    t -= nearbyint(t);
    *c = (float)cos(NUDFT_TWO_PI * t);
    *s = (float)sin(NUDFT_TWO_PI * t);
}

void mr_nudft_samples_free(nudft_samples *p) { free(p->mem); }

mr_status mr_nudft_samples_init(nudft_samples *p, const mr_grid *g, const float *traj, const float *a,
                                int real_weights, int64_t m, double sign, int steps, int threads)
{
    p->m = m;
    p->mp = nudft_round_up(m, NUDFT_TILE);
    const size_t mp = (size_t)p->mp;
    p->mem = nudft_alloc(mp * (3 * sizeof(double) + 6 * sizeof(float)));
    if (!p->mem)
        return mr_error(MR_ENOMEM, "nudft: out of memory for %lld samples", (long long)m);
    double *d = p->mem;
    for (int a_ = 0; a_ < 3; a_++)
        p->dk[a_] = d + a_ * mp;
    float *f = (float *)(d + 3 * mp);
    p->ar = f;
    p->ai = f + mp;
    p->s1r = f + 2 * mp;
    p->s1i = f + 3 * mp;
    p->s8r = f + 4 * mp;
    p->s8i = f + 5 * mp;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t k = 0; k < p->mp; k++) {
        for (int ax = 0; ax < 3; ax++)
            p->dk[ax][k] = k < m ? sign * (double)traj[3 * k + ax] / (double)g->scale[ax] : 0.0;
        if (k < m && a) {
            p->ar[k] = real_weights ? a[k] : a[2 * k];
            p->ai[k] = real_weights ? 0.0f : a[2 * k + 1];
        } else {
            p->ar[k] = 0.0f;
            p->ai[k] = 0.0f;
        }
        if (steps) {
            phasor_exact(p->dk[0][k], &p->s1r[k], &p->s1i[k]);
            phasor_exact(NUDFT_SUB * p->dk[0][k], &p->s8r[k], &p->s8i[k]);
        }
    }
    return MR_OK;
}

int mr_nudft_check_args(const mr_grid *g, const float *traj, const void *in, int64_t m, const void *out,
                        const char *fn)
{
    if (!g || !traj || !in || !out || m < 1) {
        mr_error(MR_EINVAL, "%s: null array or %lld samples", fn, (long long)m);
        return 0;
    }
    for (int a = 0; a < 3; a++)
        if (g->n[a] < 1 || g->scale[a] < 1) {
            mr_error(MR_EINVAL, "%s: grid axis %d has n = %lld, scale = %lld", fn, a, (long long)g->n[a],
                     (long long)g->scale[a]);
            return 0;
        }
    return 1;
}

/* ---- adjoint ---------------------------------------------------------------------------------- */

/* Per-thread scratch of the adjoint. */
typedef struct {
    double *phi;    /* [NUDFT_TILE] row phase ky*y + kz*z */
    float *br, *bi; /* [NUDFT_TILE] a * phasor at the current sub-block start */
    double *acc;    /* [2 * row capacity] double accumulators of one row */
} adj_scratch;

/* acc[j] += sum_m b_m s_m^j for j < NUDFT_SUB, and b_m <- b_m s8_m (the next sub-block's start).
 * n is a multiple of NUDFT_VL. Float sums over one tile. */
static void rotate_accumulate(int64_t n, float *restrict br, float *restrict bi, const float *restrict sr,
                              const float *restrict si, const float *restrict s8r, const float *restrict s8i,
                              double *restrict acc)
{
    float r0 = 0, i0 = 0, r1 = 0, i1 = 0, r2 = 0, i2 = 0, r3 = 0, i3 = 0;
    float r4 = 0, i4 = 0, r5 = 0, i5 = 0, r6 = 0, i6 = 0, r7 = 0, i7 = 0;
#pragma omp simd simdlen(NUDFT_VL) reduction(+ : r0, i0, r1, i1, r2, i2, r3, i3, r4, i4, r5, i5, r6, i6, r7, i7)
    for (int64_t k = 0; k < n; k++) {
        const float qr = sr[k], qi = si[k];
        float pr = br[k], pi = bi[k], t;
/* accumulate the current phasor-weighted sample into (R, I), then rotate it by one voxel */
#define NUDFT_STEP(R, I)                                                                                          \
    R += pr;                                                                                                      \
    I += pi;                                                                                                      \
    t = NUDFT_FMA(pr, qr, -pi * qi);                                                                                   \
    pi = NUDFT_FMA(pr, qi, pi * qr);                                                                                   \
    pr = t
        NUDFT_STEP(r0, i0);
        NUDFT_STEP(r1, i1);
        NUDFT_STEP(r2, i2);
        NUDFT_STEP(r3, i3);
        NUDFT_STEP(r4, i4);
        NUDFT_STEP(r5, i5);
        NUDFT_STEP(r6, i6);
        r7 += pr; /* the eighth voxel: the next sub-block restarts from b s^8 instead */
        i7 += pi;
#undef NUDFT_STEP
        const float ur = br[k], ui = bi[k];
        br[k] = NUDFT_FMA(ur, s8r[k], -ui * s8i[k]);
        bi[k] = NUDFT_FMA(ur, s8i[k], ui * s8r[k]);
    }
    acc[0] += r0;
    acc[1] += i0;
    acc[2] += r1;
    acc[3] += i1;
    acc[4] += r2;
    acc[5] += i2;
    acc[6] += r3;
    acc[7] += i3;
    acc[8] += r4;
    acc[9] += i4;
    acc[10] += r5;
    acc[11] += i5;
    acc[12] += r6;
    acc[13] += i6;
    acc[14] += r7;
    acc[15] += i7;
}

/* One row segment: acc[2j..2j+1] = sum_m a_m e^{i2pi (dkx (x0 + j) + dky y + dkz z)}, j < len.
 * acc must hold 2 * nudft_round_up(len, NUDFT_SUB) doubles. */
static void adjoint_row(const nudft_samples *p, double y, double z, int64_t x0, int64_t len, adj_scratch *w)
{
    const int64_t lenp = nudft_round_up(len, NUDFT_SUB);
    double *acc = w->acc;
    memset(acc, 0, (size_t)(2 * lenp) * sizeof(double));
    for (int64_t t0 = 0; t0 < p->mp; t0 += NUDFT_TILE) {
        const int64_t tn = NUDFT_TILE; /* mp is a multiple of the tile */
        const double *restrict dkx = p->dk[0] + t0, *restrict dky = p->dk[1] + t0, *restrict dkz = p->dk[2] + t0;
        const float *restrict ar = p->ar + t0, *restrict ai = p->ai + t0;
        double *restrict phi = w->phi;
        float *restrict br = w->br, *restrict bi = w->bi;
#pragma omp simd simdlen(NUDFT_VL)
        for (int64_t k = 0; k < tn; k++)
            phi[k] = dky[k] * y + dkz[k] * z;
        for (int64_t b0 = 0; b0 < lenp; b0 += NUDFT_BLOCK) {
            const double x = (double)(x0 + b0);
#pragma omp simd simdlen(NUDFT_VL)
            for (int64_t k = 0; k < tn; k++) {
                const double t = phi[k] + dkx[k] * x;
                float s, c;
                nudft_sincos_2pi(t, &s, &c);
                br[k] = NUDFT_FMA(ar[k], c, -ai[k] * s);
                bi[k] = NUDFT_FMA(ar[k], s, ai[k] * c);
            }
            const int64_t bend = b0 + NUDFT_BLOCK < lenp ? b0 + NUDFT_BLOCK : lenp;
            for (int64_t j0 = b0; j0 < bend; j0 += NUDFT_SUB)
                rotate_accumulate(tn, br, bi, p->s1r + t0, p->s1i + t0, p->s8r + t0, p->s8i + t0, acc + 2 * j0);
        }
    }
}

nudft_task *mr_nudft_tasks(const mr_grid *g, int real_weights, int64_t *ntasks)
{
    const int64_t ny = g->n[1], nz = g->n[2];
    nudft_task *tasks = malloc((size_t)(ny * nz) * sizeof *tasks);
    *ntasks = 0;
    if (!tasks)
        return NULL;
    for (int64_t iz = 0; iz < nz; iz++)
        for (int64_t iy = 0; iy < ny; iy++) {
            const int64_t my = 2 * g->center[1] - iy, mz = 2 * g->center[2] - iz;
            const int paired = real_weights && my >= 0 && my < ny && mz >= 0 && mz < nz;
            const int64_t lin = iz * ny + iy, mlin = mz * ny + my;
            if (paired && mlin > lin)
                continue; /* written by its mirror */
            tasks[*ntasks].iy = iy;
            tasks[*ntasks].iz = iz;
            tasks[*ntasks].mirror = paired && mlin < lin;
            (*ntasks)++;
        }
    return tasks;
}

mr_status mr_nudft_adjoint_setup(const mr_grid *g, const float *traj, const float *a, int real_weights,
                                 int64_t m, const float *out, int steps, int *threads, nudft_samples *p,
                                 nudft_task **tasks, int64_t *ntasks)
{
    if (!mr_nudft_check_args(g, traj, a, m, out, "mr_nudft_adjoint"))
        return MR_EINVAL;
    *threads = nudft_threads(*threads);
    mr_status st = mr_nudft_samples_init(p, g, traj, a, real_weights, m, +1.0, steps, *threads);
    if (st != MR_OK)
        return st;
    *tasks = mr_nudft_tasks(g, real_weights, ntasks);
    if (!*tasks) {
        mr_nudft_samples_free(p);
        return mr_error(MR_ENOMEM, "mr_nudft_adjoint: out of memory for the rows of a %lldx%lldx%lld grid",
                        (long long)g->n[0], (long long)g->n[1], (long long)g->n[2]);
    }
    return MR_OK;
}

/* The rotation kernel: a mirrored row is computed over the x offsets [ext_lo, ext_hi] that both it
 * and its mirror need. */
static mr_status adjoint_rotation(const mr_grid *g, const float *traj, const float *a, int real_weights,
                                    int64_t m, float *out, int threads, const mr_progress *progress,
                                    const char *stage)
{
    nudft_samples p;
    nudft_task *tasks;
    int64_t ntasks;
    mr_status st = mr_nudft_adjoint_setup(g, traj, a, real_weights, m, out, 1, &threads, &p, &tasks, &ntasks);
    if (st != MR_OK)
        return st;
    const int64_t nx = g->n[0], ny = g->n[1], cx = g->center[0];
    /* x offsets (ix - cx) of the row and of its mirror */
    const int64_t own_lo = -cx, own_hi = nx - 1 - cx;
    const int64_t ext_lo = own_lo < -own_hi ? own_lo : -own_hi, ext_hi = own_hi > -own_lo ? own_hi : -own_lo;
    const int64_t cap = nudft_round_up(ext_hi - ext_lo + 1, NUDFT_SUB);
    void *scratch = nudft_alloc((size_t)threads *
                                (size_t)(NUDFT_TILE * (sizeof(double) + 2 * sizeof(float)) + 2 * cap * sizeof(double)));
    if (!scratch) {
        free(tasks);
        mr_nudft_samples_free(&p);
        return mr_error(MR_ENOMEM, "mr_nudft_adjoint: out of memory for %lld rows", (long long)(ny * g->n[2]));
    }
    mr_progress_rows prog;
    mr_progress_rows_init(&prog, progress, stage, ntasks);

#pragma omp parallel num_threads(threads)
    {
        const int tid = omp_get_thread_num();
        char *base = (char *)scratch + (size_t)tid * (size_t)(NUDFT_TILE * (sizeof(double) + 2 * sizeof(float)) +
                                                               2 * cap * sizeof(double));
        adj_scratch w;
        w.phi = (double *)base;
        w.acc = w.phi + NUDFT_TILE;
        w.br = (float *)(w.acc + 2 * cap);
        w.bi = w.br + NUDFT_TILE;
#pragma omp for schedule(dynamic, 1) /* one row each; rows do not share state */
        for (int64_t t = 0; t < ntasks; t++) {
            const int64_t iy = tasks[t].iy, iz = tasks[t].iz;
            const double y = (double)(iy - g->center[1]), z = (double)(iz - g->center[2]);
            float *row = out + 2 * (iz * ny + iy) * nx;
            if (!tasks[t].mirror) {
                adjoint_row(&p, y, z, own_lo, nx, &w);
                for (int64_t ix = 0; ix < 2 * nx; ix++)
                    row[ix] = (float)w.acc[ix];
            } else {
                adjoint_row(&p, y, z, ext_lo, ext_hi - ext_lo + 1, &w);
                const int64_t my = 2 * g->center[1] - iy, mz = 2 * g->center[2] - iz;
                float *mrow = out + 2 * (mz * ny + my) * nx;
                for (int64_t ix = 0; ix < nx; ix++) {
                    const int64_t j = ix - cx - ext_lo;      /* own offset */
                    const int64_t mj = -(ix - cx) - ext_lo; /* mirror voxel ix sits at -offset of ours */
                    row[2 * ix] = (float)w.acc[2 * j];
                    row[2 * ix + 1] = (float)w.acc[2 * j + 1];
                    mrow[2 * ix] = (float)w.acc[2 * mj];
                    mrow[2 * ix + 1] = -(float)w.acc[2 * mj + 1];
                }
            }
            mr_progress_rows_add(&prog, 1);
            mr_progress_rows_poll(&prog);
        }
    }
    mr_progress_rows_finish(&prog);
    free(scratch);
    free(tasks);
    mr_nudft_samples_free(&p);
    return MR_OK;
}

/* ---- dispatch ---------------------------------------------------------------------------------- */

/* The one place that enters the code of a level; callers have checked that the CPU runs it. */
static mr_status adjoint_at(mr_cpu_level level, const mr_grid *g, const float *traj, const float *a,
                            int real_weights, int64_t m, float *out, int threads, const mr_progress *progress,
                            const char *stage)
{
    switch (level) {
    case MR_CPU_AVX512:
        return mr_nudft_adjoint_powers_avx512(g, traj, a, real_weights, m, out, threads, progress, stage);
    case MR_CPU_AVX2:
        return mr_nudft_adjoint_powers_avx2(g, traj, a, real_weights, m, out, threads, progress, stage);
    case MR_CPU_PORTABLE:
        break;
    }
    return adjoint_rotation(g, traj, a, real_weights, m, out, threads, progress, stage);
}

static mr_status forward_at(mr_cpu_level level, const mr_grid *g, const float *traj, const float *x, int64_t m,
                            float *out, int threads)
{
    switch (level) {
    case MR_CPU_AVX512:
        return mr_nudft_forward_avx512(g, traj, x, m, out, threads);
    case MR_CPU_AVX2:
        return mr_nudft_forward_avx2(g, traj, x, m, out, threads);
    case MR_CPU_PORTABLE:
        break;
    }
    return mr_nudft_forward_portable(g, traj, x, m, out, threads);
}

static mr_status check_level(mr_cpu_level level, const char *fn)
{
    if ((unsigned)level >= MR_CPU_LEVELS || !(mr_cpu_supported() & (1u << level)))
        return mr_error(MR_ENOTSUP, "%s: this CPU or build cannot run the %s kernels", fn, mr_cpu_level_name(level));
    return MR_OK;
}

mr_status mr_nudft_adjoint_progress(const mr_grid *g, const float *traj, const float *a, int real_weights, int64_t m,
                                    float *out, int threads, const mr_progress *progress, const char *stage)
{
    mr_cpu_level level;
    mr_status st = mr_cpu_level_get(&level);
    return st != MR_OK ? st : adjoint_at(level, g, traj, a, real_weights, m, out, threads, progress, stage);
}

mr_status mr_nudft_adjoint(const mr_grid *g, const float *traj, const float *a, int real_weights, int64_t m,
                           float *out, int threads)
{
    return mr_nudft_adjoint_progress(g, traj, a, real_weights, m, out, threads, NULL, NULL);
}

mr_status mr_nudft_forward(const mr_grid *g, const float *traj, const float *x, int64_t m, float *out, int threads)
{
    mr_cpu_level level;
    mr_status st = mr_cpu_level_get(&level);
    return st != MR_OK ? st : forward_at(level, g, traj, x, m, out, threads);
}

mr_status mr_nudft_adjoint_level(mr_cpu_level level, const mr_grid *g, const float *traj, const float *a,
                                 int real_weights, int64_t m, float *out, int threads)
{
    mr_status st = check_level(level, "mr_nudft_adjoint_level");
    return st != MR_OK ? st : adjoint_at(level, g, traj, a, real_weights, m, out, threads, NULL, NULL);
}

mr_status mr_nudft_forward_level(mr_cpu_level level, const mr_grid *g, const float *traj, const float *x, int64_t m,
                                 float *out, int threads)
{
    mr_status st = check_level(level, "mr_nudft_forward_level");
    return st != MR_OK ? st : forward_at(level, g, traj, x, m, out, threads);
}

/* ---- the sums with a field term (solver/nudft_field.h) ------------------------------------------ */

static int field_args_ok(const float *time, const float *field, const char *fn)
{
    if (time && field)
        return 1;
    mr_error(MR_EINVAL, "%s: no %s", fn, time ? "field map" : "readout times");
    return 0;
}

static mr_status field_at(mr_cpu_level level, int adjoint, const mr_grid *g, const float *traj, const float *time,
                          const float *field, const float *in, int64_t m, float *out, int threads)
{
    if (!field_args_ok(time, field, adjoint ? "mr_nudft_field_adjoint" : "mr_nudft_field_forward"))
        return MR_EINVAL;
    switch (level) {
    case MR_CPU_AVX512:
        return adjoint ? mr_nudft_field_adjoint_avx512(g, traj, time, field, in, m, out, threads)
                       : mr_nudft_field_forward_avx512(g, traj, time, field, in, m, out, threads);
    case MR_CPU_AVX2:
        return adjoint ? mr_nudft_field_adjoint_avx2(g, traj, time, field, in, m, out, threads)
                       : mr_nudft_field_forward_avx2(g, traj, time, field, in, m, out, threads);
    case MR_CPU_PORTABLE:
        break;
    }
    return adjoint ? mr_nudft_field_adjoint_portable(g, traj, time, field, in, m, out, threads)
                   : mr_nudft_field_forward_portable(g, traj, time, field, in, m, out, threads);
}

mr_status mr_nudft_field_adjoint(const mr_grid *g, const float *traj, const float *time, const float *field,
                                 const float *a, int64_t m, float *out, int threads)
{
    mr_cpu_level level;
    mr_status st = mr_cpu_level_get(&level);
    return st != MR_OK ? st : field_at(level, 1, g, traj, time, field, a, m, out, threads);
}

mr_status mr_nudft_field_forward(const mr_grid *g, const float *traj, const float *time, const float *field,
                                 const float *x, int64_t m, float *out, int threads)
{
    mr_cpu_level level;
    mr_status st = mr_cpu_level_get(&level);
    return st != MR_OK ? st : field_at(level, 0, g, traj, time, field, x, m, out, threads);
}

mr_status mr_nudft_field_adjoint_level(mr_cpu_level level, const mr_grid *g, const float *traj, const float *time,
                                       const float *field, const float *a, int64_t m, float *out, int threads)
{
    mr_status st = check_level(level, "mr_nudft_field_adjoint_level");
    return st != MR_OK ? st : field_at(level, 1, g, traj, time, field, a, m, out, threads);
}

mr_status mr_nudft_field_forward_level(mr_cpu_level level, const mr_grid *g, const float *traj, const float *time,
                                       const float *field, const float *x, int64_t m, float *out, int threads)
{
    mr_status st = check_level(level, "mr_nudft_field_forward_level");
    return st != MR_OK ? st : field_at(level, 0, g, traj, time, field, x, m, out, threads);
}

const char *mr_nudft_kernel_name(void)
{
    mr_cpu_level level;
    return mr_cpu_level_get(&level) == MR_OK ? mr_cpu_level_name(level) : NULL;
}
