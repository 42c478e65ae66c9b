/* `mrirecon bench`: the ladder of the exact sums (CPU | GPU naive | + constant memory | + SFU trig |
 * + tuned | + multi-voxel) for Q and F^H d, the GPU tuning sweep and the end-to-end reconstruction.
 * Timings are medians of o->reps runs after one warm-up: CUDA events for the GPU rows
 * (mr_gpu_nudft_last_ms: chunk uploads and kernels, not the host packing or the result copy), wall
 * clock for the CPU rows. */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../gpu/gemm.h"
#include "../../gpu/gpu.h"
#include "../../gpu/gpu_ops.h"
#include "../../gpu/sums.h"
#include "../../io/fsutil.h"
#include "../../io/json.h"
#include "../../io/kspace_h5.h"
#include "../../io/q_cache.h"
#include "../../base/log.h"
#include "../../phantoms/noise.h"
#include "../../phantoms/scan.h"
#include "../../solver/nudft.h"
#include "../pipeline/pipeline.h"
#include "../report/report.h"

#define BENCH_MAX_ROWS 64

typedef enum { IMPL_CPU = 0, IMPL_NAIVE, IMPL_CONSTANT, IMPL_SFU, IMPL_TUNED, IMPL_MULTIVOXEL, IMPL_COUNT } bench_impl;

static const char *const impl_names[IMPL_COUNT] = {"cpu", "gpu naive", "gpu +constant", "gpu +sfu trig",
                                                   "gpu +tuned", "gpu +multi-voxel"};

typedef struct {
    char kernel[8];   /* "Q" or "FHd" */
    char impl[48];
    char config[MR_DEVICE_TEXT]; /* GPU kernel configuration; for the CPU the kernel level (avx512, avx2, portable) */
    double ms;        /* median time of the timed part */
    double scale;     /* whole-grid time = ms * scale (1 when the whole grid was timed) */
    double pairs;     /* pairs of the whole grid */
    double rel_l2;    /* vs float64 on the accuracy rows; NAN when not measured */
} bench_row;

typedef struct {
    const mr_bench_opts *o;
    FILE *out;
    int64_t matrix[3], m;
    float *traj, *wreal, *wcplx; /* the problem: [M][3], [M], [M][2] */
    int gpu;                     /* GPU rows requested and a GPU present */
    int gpu_index;               /* the GPU of those rows */
    char device_desc[256];
    bench_row rows[BENCH_MAX_ROWS];
    int nrows;
    /* end-to-end: BENCH_E2E_RUNS runs (cold Q cache, warm Q cache, accurate trig) */
    int have_e2e[3];
    double e2e_total[3], e2e_q[3], e2e_fhd[3], e2e_solve[3], e2e_psnr[3], e2e_psnr_bl[3];
    char e2e_backend[3][128], e2e_sums[3][128], e2e_q_source[3][32];
} bench_ctx;

#define BENCH_E2E_RUNS 3
static const char *const e2e_labels[BENCH_E2E_RUNS] = {"cold Q cache", "warm Q cache", "accurate trig"};

void mr_bench_opts_default(mr_bench_opts *o)
{
    memset(o, 0, sizeof *o);
    o->problem = "book";
    o->device.kind = MR_DEVICE_AUTO;
    o->device.index = -1;
    o->what = "all";
    o->reps = 5;
    o->threads = 0;
    o->cpu_pairs = 2e10;
    o->gpu_slow_pairs = 6e11;
    o->accuracy_rows = 4;
    o->sweep = 0;
    o->sweep_m = 32768;
    o->iters = 60;
    o->scratch = NULL;
    o->json = NULL;
    o->seed = 1;
    o->rows = "all";
    o->precision = "all";
    o->gemm_cublas = 0;
}

mr_status mr_bench_parse_problem(const char *text, int64_t matrix[3], int64_t *m)
{
    if (!text)
        return mr_error(MR_EINVAL, "--problem: missing");
    if (strcmp(text, "book") == 0) {
        matrix[0] = matrix[1] = matrix[2] = 128;
        *m = 284592; /* 1078 kooshball spokes x 264 readout samples */
        return MR_OK;
    }
    if (strcmp(text, "2d") == 0) {
        matrix[0] = matrix[1] = 128;
        matrix[2] = 1;
        *m = 32768;
        return MR_OK;
    }
    long long nx, ny, nz, mm;
    char tail;
    if (sscanf(text, "%lld,%lld,%lld:%lld%c", &nx, &ny, &nz, &mm, &tail) != 4)
        return mr_error(MR_EINVAL, "--problem '%s': expected book, 2d or NX,NY,NZ:M (e.g. 64,64,1:20000)", text);
    matrix[0] = nx;
    matrix[1] = ny;
    matrix[2] = nz;
    mr_status st = mr_matrix_check(matrix, "--problem");
    if (st != MR_OK)
        return st;
    if (mm < 1 || mm > MR_MAX_SAMPLES)
        return mr_error(MR_EINVAL, "--problem '%s': M = %lld outside [1, %lld]", text, mm, (long long)MR_MAX_SAMPLES);
    *m = mm;
    return MR_OK;
}

/* ---- random problem ---------------------------------------------------------------------------- */

/* Trajectory uniform in the Nyquist box [-N/2, N/2) per axis (kz = 0 in 2D), weights a real in
 * [0.05, 1.05) (like |Phi|^2 w) and a complex uniform in the unit square. */
static mr_status bench_problem(bench_ctx *c)
{
    const int64_t m = c->m;
    c->traj = malloc((size_t)m * 3 * sizeof(float));
    c->wreal = malloc((size_t)m * sizeof(float));
    c->wcplx = malloc((size_t)m * 2 * sizeof(float));
    if (!c->traj || !c->wreal || !c->wcplx)
        return mr_error(MR_ENOMEM, "bench: out of memory for %lld samples", (long long)m);
    mr_rng r;
    mr_rng_seed(&r, c->o->seed, MR_RNG_STREAM_TRAJ);
    for (int64_t j = 0; j < m; j++) {
        for (int a = 0; a < 3; a++)
            c->traj[3 * j + a] = c->matrix[a] > 1 ? (float)((mr_rng_uniform(&r) - 0.5) * (double)c->matrix[a]) : 0.0f;
        c->wreal[j] = (float)(0.05 + mr_rng_uniform(&r));
        c->wcplx[2 * j] = (float)(mr_rng_uniform(&r) - 0.5);
        c->wcplx[2 * j + 1] = (float)(mr_rng_uniform(&r) - 0.5);
    }
    return MR_OK;
}

/* ---- grids and subsets ------------------------------------------------------------------------- */

/* Rows (iz*ny + iy) r0 .. r0+nr-1 of g as a grid of their own (same positions): whole planes when
 * nr is a multiple of ny, else nr rows inside one plane. */
static mr_grid bench_subgrid(const mr_grid *g, int64_t r0, int64_t nr)
{
    mr_grid s = *g;
    const int64_t ny = g->n[1];
    const int64_t z0 = r0 / ny, y0 = r0 % ny;
    if (y0 == 0 && nr % ny == 0) {
        s.n[2] = nr / ny;
        s.center[2] = g->center[2] - z0;
    } else {
        s.n[1] = nr;
        s.n[2] = 1;
        s.center[1] = g->center[1] - y0;
        s.center[2] = g->center[2] - z0;
    }
    return s;
}

/* The timed part of a row: the whole grid, or about max_pairs worth of rows from the middle. */
static mr_grid bench_timed_grid(const mr_grid *g, int64_t m, double max_pairs, double *scale)
{
    const int64_t rows = g->n[1] * g->n[2];
    const double per_row = (double)g->n[0] * (double)m;
    *scale = 1.0;
    if (max_pairs <= 0 || per_row * (double)rows <= max_pairs)
        return *g;
    int64_t nr = (int64_t)ceil(max_pairs / per_row);
    if (nr >= g->n[1]) { /* whole planes */
        int64_t planes = (nr + g->n[1] - 1) / g->n[1];
        if (planes >= g->n[2])
            return *g;
        nr = planes * g->n[1];
        const int64_t z0 = (g->n[2] - planes) / 2;
        *scale = (double)rows / (double)nr;
        return bench_subgrid(g, z0 * g->n[1], nr);
    }
    const int64_t r0 = (g->n[2] / 2) * g->n[1] + (g->n[1] - nr) / 2;
    *scale = (double)rows / (double)nr;
    return bench_subgrid(g, r0, nr);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ---- accuracy: a few voxel rows against the float64 reference ---------------------------------- */

typedef struct {
    int n;
    mr_grid g[16];
    double *ref[16];
} bench_acc;

static void acc_free(bench_acc *a)
{
    for (int i = 0; i < a->n; i++)
        free(a->ref[i]);
    a->n = 0;
}

/* Adds the squared difference of a row (n floats) from its reference and the reference's square to
 * sums[0] and sums[1]. */
static void acc_row(const float *row, const double *ref, int64_t n, double sums[2])
{
    for (int64_t v = 0; v < n; v++) {
        const double d = (double)row[v] - ref[v];
        sums[0] += d * d;
        sums[1] += ref[v] * ref[v];
    }
}

static mr_status acc_prepare(bench_ctx *c, const mr_grid *g, const float *w, int real, bench_acc *a)
{
    memset(a, 0, sizeof *a);
    int n = c->o->accuracy_rows;
    if (n > 16)
        n = 16;
    const int64_t rows = g->n[1] * g->n[2];
    if (n > rows)
        n = (int)rows;
    for (int i = 0; i < n; i++) {
        const int64_t r = (rows * (2 * i + 1)) / (2 * n); /* spread over the volume */
        a->g[i] = bench_subgrid(g, r, 1);
        a->ref[i] = malloc((size_t)g->n[0] * 2 * sizeof(double));
        if (!a->ref[i]) {
            acc_free(a);
            return mr_error(MR_ENOMEM, "bench: out of memory for the reference rows");
        }
        a->n = i + 1;
        mr_nudft_adjoint_ref(&a->g[i], c->traj, w, real, c->m, a->ref[i]);
    }
    return MR_OK;
}

/* Relative L2 of an implementation on the accuracy rows. */
static mr_status acc_measure(bench_ctx *c, const bench_acc *a, const float *w, int real, bench_impl impl,
                             mr_gpu_nudft *gp, double *rel)
{
    *rel = NAN;
    if (a->n == 0)
        return MR_OK;
    const int64_t nx = a->g[0].n[0];
    float *out = malloc((size_t)nx * 2 * sizeof(float));
    if (!out)
        return mr_error(MR_ENOMEM, "bench: out of memory");
    double sums[2] = {0.0, 0.0};
    mr_status st = MR_OK;
    for (int i = 0; i < a->n && st == MR_OK; i++) {
        if (impl == IMPL_CPU)
            st = mr_nudft_adjoint(&a->g[i], c->traj, w, real, c->m, out, c->o->threads);
        else
            st = mr_gpu_nudft_adjoint(gp, &a->g[i], w, real, out, (mr_gpu_variant)(impl - IMPL_NAIVE));
        if (st == MR_OK)
            acc_row(out, a->ref[i], 2 * nx, sums);
    }
    free(out);
    if (st == MR_OK)
        *rel = sums[1] > 0 ? sqrt(sums[0] / sums[1]) : NAN;
    return st;
}

/* ---- one ladder row ---------------------------------------------------------------------------- */

static mr_status bench_time_row(bench_ctx *c, const mr_grid *g, int real, bench_impl impl, mr_gpu_nudft *gp,
                                const bench_acc *acc)
{
    const mr_bench_opts *o = c->o;
    const float *w = real ? c->wreal : c->wcplx;
    const double max_pairs =
        impl == IMPL_CPU ? o->cpu_pairs : (impl == IMPL_NAIVE || impl == IMPL_CONSTANT) ? o->gpu_slow_pairs : 0.0;
    double scale = 1.0;
    const mr_grid tg = bench_timed_grid(g, c->m, max_pairs, &scale);
    const int64_t nv = mr_grid_size(&tg);
    float *out = malloc((size_t)nv * 2 * sizeof(float));
    double *t = malloc((size_t)(o->reps + 1) * sizeof(double));
    if (!out || !t) {
        free(out);
        free(t);
        return mr_error(MR_ENOMEM, "bench: out of memory for %lld voxels", (long long)nv);
    }
    if (c->nrows >= BENCH_MAX_ROWS) {
        free(out);
        free(t);
        return mr_error(MR_EINTERNAL, "bench: too many rows");
    }
    bench_row *r = &c->rows[c->nrows];
    memset(r, 0, sizeof *r);
    snprintf(r->kernel, sizeof r->kernel, "%s", real ? "Q" : "FHd");
    snprintf(r->impl, sizeof r->impl, "%s", impl_names[impl]);
    if (impl != IMPL_CPU) {
        mr_gpu_config cfg;
        mr_gpu_variant_config((mr_gpu_variant)(impl - IMPL_NAIVE), real, &cfg);
        snprintf(r->config, sizeof r->config, "T%d C%d U%d V%d%s m%d", cfg.threads, cfg.chunk, cfg.unroll,
                 cfg.voxels, cfg.rotate ? "rot" : "", cfg.mode);
    } else { /* the instruction-set level of the CPU kernels (MR_CPU_KERNEL may force a lower one) */
        const char *level = mr_nudft_kernel_name();
        snprintf(r->config, sizeof r->config, "%s", level ? level : "-");
    }
    mr_log(MR_LOG_INFO, "bench: %s %s on %lld voxels x %lld samples", r->kernel, r->impl, (long long)nv,
           (long long)c->m);
    mr_status st = MR_OK;
    char stage[96];
    snprintf(stage, sizeof stage, "bench %s %s", r->kernel, r->impl);
    for (int i = 0; i <= o->reps && st == MR_OK; i++) { /* i = 0: warm-up */
        mr_progress_part part; /* run i of reps + 1 */
        const mr_progress run = mr_progress_part_of(&part, o->progress, i, o->reps + 1);
        if (impl == IMPL_CPU) {
            const double t0 = mr_now();
            st = mr_nudft_adjoint_progress(&tg, c->traj, w, real, c->m, out, o->threads, &run, stage);
            t[i] = (mr_now() - t0) * 1e3;
        } else {
            mr_progress_report(&run, stage, 0, 1);
            st = mr_gpu_nudft_adjoint(gp, &tg, w, real, out, (mr_gpu_variant)(impl - IMPL_NAIVE));
            t[i] = mr_gpu_nudft_last_ms(gp);
            if (st == MR_OK)
                mr_progress_report(&run, stage, 1, 1);
        }
    }
    if (st == MR_OK) {
        r->ms = median(t + 1, o->reps);
        r->scale = scale;
        r->pairs = (double)mr_grid_size(g) * (double)c->m;
        st = acc_measure(c, acc, w, real, impl, gp, &r->rel_l2);
    }
    if (st == MR_OK)
        c->nrows++;
    free(out);
    free(t);
    return st;
}

/* ---- the GEMM rows (gpu/gemm.h) ----------------------------------------------------------------- */

/* Relative L2 of a GEMM mode on the accuracy rows (double output for fp64: its error is below float's). */
static mr_status gemm_acc(const bench_acc *a, const float *w, int real, mr_gemm_plan *gp,
                          mr_gemm_precision prec, double *rel)
{
    *rel = NAN;
    if (a->n == 0)
        return MR_OK;
    const int64_t nx = a->g[0].n[0];
    double *out = malloc((size_t)nx * 2 * sizeof(double));
    if (!out)
        return mr_error(MR_ENOMEM, "bench: out of memory");
    const mr_gemm_type ot = prec == MR_GEMM_FP64 ? MR_GEMM_F64 : MR_GEMM_F32;
    double num = 0.0, den = 0.0;
    mr_status st = MR_OK;
    for (int i = 0; i < a->n && st == MR_OK; i++) {
        st = mr_gemm_adjoint(gp, &a->g[i], prec, w, real, out, ot);
        for (int64_t v = 0; v < 2 * nx && st == MR_OK; v++) {
            const double o = ot == MR_GEMM_F64 ? out[v] : (double)((const float *)out)[v];
            num += (o - a->ref[i][v]) * (o - a->ref[i][v]);
            den += a->ref[i][v] * a->ref[i][v];
        }
    }
    free(out);
    if (st == MR_OK)
        *rel = den > 0 ? sqrt(num / den) : NAN;
    return st;
}

/* The GEMM rows of the ladder, in order: engine, precision, and what the config column says. */
static const struct {
    mr_gemm_precision prec;
    mr_gemm_engine engine;
    const char *impl;   /* after "gpu gemm <precision>" in the implementation column */
    const char *config;
} gemm_rows[] = {
    {MR_GEMM_TF32X3, MR_GEMM_ENGINE_MMA, "", "mma.sync TF32 x3"},
    {MR_GEMM_TF32X3, MR_GEMM_ENGINE_WGMMA, " wgmma", "wgmma TF32 x3"}, /* where available (compute capability 9.0) */
    {MR_GEMM_TF32X3, MR_GEMM_ENGINE_CUBLAS, " cublas", "cuBLAS GemmEx TF32 x3"}, /* with --gemm-cublas only */
    {MR_GEMM_FP64, MR_GEMM_ENGINE_AUTO, "", "cuBLAS DGEMM"},
    {MR_GEMM_FP16X3, MR_GEMM_ENGINE_MMA, "", "mma.sync FP16 x3, scaled"},
};

/* One GEMM row (gemm_rows[row]): the whole grid, median of the device times (mr_gemm_last_ms: tables cached by the
 * warm-up, weights uploaded and result copied back outside the timed part). */
static mr_status bench_gemm_row(bench_ctx *c, const mr_grid *g, int real, int row, const bench_acc *acc)
{
    const mr_bench_opts *o = c->o;
    const mr_gemm_precision prec = gemm_rows[row].prec;
    const mr_gemm_engine engine = gemm_rows[row].engine;
    const float *w = real ? c->wreal : c->wcplx;
    if (c->nrows >= BENCH_MAX_ROWS)
        return mr_error(MR_EINTERNAL, "bench: too many rows");
    mr_gemm_opts go;
    mr_gemm_opts_default(&go);
    go.device = c->gpu_index;
    go.engine = engine;
    go.variant = c->o->gemm_variant;
    go.split_samples = c->o->gemm_ksplit;
    go.max_columns = c->o->gemm_columns;
    mr_gemm_plan *gp = NULL;
    mr_status st = mr_gemm_create(&gp, c->traj, c->m, &go);
    if (st != MR_OK)
        return st;
    const int64_t nv = mr_grid_size(g);
    const mr_gemm_type ot = prec == MR_GEMM_FP64 ? MR_GEMM_F64 : MR_GEMM_F32;
    void *out = malloc((size_t)nv * 2 * (ot == MR_GEMM_F64 ? sizeof(double) : sizeof(float)));
    double *t = malloc((size_t)(o->reps + 1) * sizeof(double));
    if (!out || !t)
        st = mr_error(MR_ENOMEM, "bench: out of memory for %lld voxels", (long long)nv);
    bench_row *r = &c->rows[c->nrows];
    memset(r, 0, sizeof *r);
    snprintf(r->kernel, sizeof r->kernel, "%s", real ? "Q" : "FHd");
    snprintf(r->impl, sizeof r->impl, "gpu gemm %s%s", mr_gemm_precision_name(prec), gemm_rows[row].impl);
    snprintf(r->config, sizeof r->config, "%s%s", gemm_rows[row].config, real ? ", Hermitian" : "");
    mr_log(MR_LOG_INFO, "bench: %s %s on %lld voxels x %lld samples", r->kernel, r->impl, (long long)nv,
           (long long)c->m);
    for (int i = 0; i <= o->reps && st == MR_OK; i++) { /* i = 0: warm-up (builds the tables) */
        st = mr_gemm_adjoint(gp, g, prec, w, real, out, ot);
        t[i] = mr_gemm_last_ms(gp);
    }
    if (st == MR_OK) {
        r->ms = median(t + 1, o->reps);
        r->scale = 1.0;
        r->pairs = (double)nv * (double)c->m;
        st = gemm_acc(acc, w, real, gp, prec, &r->rel_l2);
    }
    if (st == MR_OK)
        c->nrows++;
    free(out);
    free(t);
    mr_gemm_destroy(gp);
    return st;
}

static void print_row(FILE *out, const bench_row *r)
{
    const double s = r->ms * r->scale * 1e-3;
    const double flop = strcmp(r->kernel, "Q") == 0 ? MR_BENCH_FLOP_Q : MR_BENCH_FLOP_FHD;
    char acc[32] = "-";
    if (!isnan(r->rel_l2))
        snprintf(acc, sizeof acc, "%.2e", r->rel_l2);
    fprintf(out, "%-4s %-17s %12.3f %10.3e %10.1f %9s  %s%s\n", r->kernel, r->impl, s * 1e3, r->pairs / s,
            r->pairs * flop / s * 1e-9, acc, r->config, r->scale > 1.0 ? " (extrapolated)" : "");
}

static mr_status bench_ladder(bench_ctx *c)
{
    const mr_bench_opts *o = c->o;
    mr_gpu_nudft *gp = NULL;
    mr_status st = MR_OK;
    if (c->gpu && (st = mr_gpu_nudft_create(&gp, c->gpu_index, c->traj, c->m)) != MR_OK)
        return st;
    fprintf(c->out, "\n%-4s %-17s %12s %10s %10s %9s  %s\n", "sum", "implementation", "time_ms", "pairs/s", "GFLOP/s",
            "rel_L2", "config");
    for (int real = 1; real >= 0 && st == MR_OK; real--) {
        const mr_grid g = real ? mr_grid_q(c->matrix) : mr_grid_image(c->matrix);
        bench_acc acc;
        memset(&acc, 0, sizeof acc);
        mr_log(MR_LOG_INFO, "bench: float64 reference on %d rows of the %s grid", o->accuracy_rows, real ? "Q" : "F^H d");
        st = acc_prepare(c, &g, real ? c->wreal : c->wcplx, real, &acc);
        for (int impl = 0; impl < IMPL_COUNT && st == MR_OK && strcmp(o->rows, "gemm") != 0; impl++) {
            if (impl != IMPL_CPU && !c->gpu)
                break;
            st = bench_time_row(c, &g, real, (bench_impl)impl, gp, &acc);
            if (st == MR_OK) {
                print_row(c->out, &c->rows[c->nrows - 1]);
                fflush(c->out);
            }
        }
        /* the tensor-core rows (gemm_rows) */
        for (int k = 0; k < (int)(sizeof gemm_rows / sizeof gemm_rows[0]) && st == MR_OK && c->gpu &&
                        strcmp(o->rows, "ladder") != 0;
             k++) {
            if ((gemm_rows[k].engine == MR_GEMM_ENGINE_CUBLAS && !o->gemm_cublas) ||
                (gemm_rows[k].engine == MR_GEMM_ENGINE_WGMMA && !mr_gemm_wgmma_available(c->gpu_index)) ||
                (strcmp(o->precision, "all") != 0 && strcmp(o->precision, mr_gemm_precision_name(gemm_rows[k].prec)) != 0))
                continue;
            st = bench_gemm_row(c, &g, real, k, &acc);
            if (st == MR_OK) {
                print_row(c->out, &c->rows[c->nrows - 1]);
                fflush(c->out);
            }
        }
        acc_free(&acc);
    }
    mr_gpu_nudft_destroy(gp);
    return st;
}

/* ---- the sweep --------------------------------------------------------------------------------- */

static mr_status bench_sweep(bench_ctx *c)
{
    const mr_bench_opts *o = c->o;
    const int64_t msave = c->m;
    c->m = o->sweep_m < c->m ? o->sweep_m : c->m; /* the first sweep_m samples of the problem */
    mr_gpu_nudft *gp = NULL;
    mr_status st = mr_gpu_nudft_create(&gp, c->gpu_index, c->traj, c->m);
    if (st != MR_OK) {
        c->m = msave;
        return st;
    }
    fprintf(c->out, "\nsweep: %lldx%lldx%lld, %lld samples; median of %d runs; pairs/s\n", (long long)c->matrix[0],
            (long long)c->matrix[1], (long long)c->matrix[2], (long long)c->m, o->reps);
    fprintf(c->out, "%-30s %12s %12s\n", "config", "Q", "FHd");
    double best[2][2] = {{0, 0}, {0, 0}}; /* [rotate][real] */
    int besti[2][2] = {{-1, -1}, {-1, -1}};
    const mr_grid gq = mr_grid_q(c->matrix), gi = mr_grid_image(c->matrix);
    float *out = malloc((size_t)mr_grid_size(&gq) * 2 * sizeof(float));
    double *t = malloc((size_t)(o->reps + 1) * sizeof(double));
    if (!out || !t)
        st = mr_error(MR_ENOMEM, "bench: out of memory for the sweep");
    for (int i = 0; i < mr_gpu_config_count() && st == MR_OK; i++) {
        mr_gpu_config cfg;
        if ((st = mr_gpu_config_get(i, &cfg)) != MR_OK)
            break;
        if (cfg.mode < MR_GPU_MODE_SFU)
            continue;
        double rate[2];
        for (int real = 1; real >= 0 && st == MR_OK; real--) {
            const mr_grid *g = real ? &gq : &gi;
            for (int k = 0; k <= o->reps && st == MR_OK; k++) {
                st = mr_gpu_nudft_adjoint_config(gp, g, real ? c->wreal : c->wcplx, real, out, &cfg);
                t[k] = mr_gpu_nudft_last_ms(gp);
            }
            if (st != MR_OK)
                break;
            rate[real] = (double)mr_grid_size(g) * (double)c->m / (median(t + 1, o->reps) * 1e-3);
            if (rate[real] > best[cfg.rotate][real]) {
                best[cfg.rotate][real] = rate[real];
                besti[cfg.rotate][real] = i;
            }
        }
        if (st != MR_OK)
            break;
        char name[64];
        snprintf(name, sizeof name, "T%d C%d U%d V%d%s m%d", cfg.threads, cfg.chunk, cfg.unroll, cfg.voxels,
                 cfg.rotate ? "rot" : "", cfg.mode);
        fprintf(c->out, "%-30s %12.4e %12.4e\n", name, rate[1], rate[0]);
        fflush(c->out);
    }
    for (int rot = 0; rot <= 1 && st == MR_OK; rot++)
        for (int real = 1; real >= 0; real--) {
            mr_gpu_config cfg;
            if (besti[rot][real] < 0 || mr_gpu_config_get(besti[rot][real], &cfg) != MR_OK)
                continue;
            fprintf(c->out, "best %-10s %-3s: T%d C%d U%d V%d%s m%d  %.4e pairs/s\n", rot ? "rotation" : "direct",
                    real ? "Q" : "FHd", cfg.threads, cfg.chunk, cfg.unroll, cfg.voxels, cfg.rotate ? "rot" : "",
                    cfg.mode, best[rot][real]);
        }
    free(out);
    free(t);
    mr_gpu_nudft_destroy(gp);
    c->m = msave;
    return st;
}

/* The engine --precision asks for (all: the default) where the runs are on a GPU. */
static mr_precision bench_precision(const bench_ctx *c)
{
    mr_precision p = MR_PRECISION_AUTO;
    if (c->gpu && strcmp(c->o->precision, "all") != 0 && mr_precision_parse(c->o->precision, &p) != MR_OK)
        mr_clear_error();
    return p;
}

/* ---- Q (and F^H d) through the operator's engine on one GPU and on several (--what q) ----------------- */

/* Median wall time of reps calls after one warm-up (which builds the tables), in ms. */
static mr_status time_sums(bench_ctx *c, mr_gpu_sums *s, const mr_grid *g, const float *d_a, int real, float *d_out,
                           double *ms)
{
    double *t = malloc((size_t)(c->o->reps + 1) * sizeof(double));
    if (!t)
        return mr_error(MR_ENOMEM, "bench: out of memory");
    mr_status st = MR_OK;
    for (int i = 0; i <= c->o->reps && st == MR_OK; i++) {
        const double t0 = mr_now();
        st = mr_gpu_sums_adjoint(s, g, d_a, real, d_out, MR_GEMM_F32);
        t[i] = (mr_now() - t0) * 1e3;
    }
    if (st == MR_OK)
        *ms = median(t + 1, c->o->reps);
    free(t);
    return st;
}

/* Relative L2 of a whole grid held on the host (h, [n][2] floats of grid g) on the accuracy rows. */
static double acc_of_grid(const bench_acc *a, const mr_grid *g, const float *h)
{
    double sums[2] = {0.0, 0.0};
    for (int i = 0; i < a->n; i++) {
        /* the row's offset in g: its first voxel's (y, z) from the sub-grid's centre shift */
        const int64_t iy = g->center[1] - a->g[i].center[1], iz = g->center[2] - a->g[i].center[2];
        acc_row(h + 2 * (size_t)((iz * g->n[1] + iy) * g->n[0]), a->ref[i], 2 * g->n[0], sums);
    }
    return sums[1] > 0 ? sqrt(sums[0] / sums[1]) : NAN;
}

/* Split against one part, plane by plane: the overall relative L2, and where it differs (planes whose
 * difference holds more than 1e-12 of the grid's energy) into where[]. */
static double split_diff(const mr_grid *g, const float *one, const float *split, char *where, size_t size)
{
    const int64_t plane = 2 * g->n[0] * g->n[1];
    double num = 0.0, den = 0.0;
    double *pn = calloc((size_t)g->n[2], sizeof(double));
    for (int64_t z = 0; z < g->n[2]; z++) {
        double n = 0.0;
        for (int64_t i = z * plane; i < (z + 1) * plane; i++) {
            const double d = (double)split[i] - one[i];
            n += d * d;
            den += (double)one[i] * one[i];
        }
        num += n;
        if (pn)
            pn[z] = n;
    }
    where[0] = 0;
    int64_t bad = 0, first = -1, last = -1;
    for (int64_t z = 0; pn && z < g->n[2]; z++)
        if (pn[z] > 1e-12 * den) {
            bad++;
            last = z;
            if (first < 0)
                first = z;
        }
    if (bad > 0)
        snprintf(where, size, "%lld of %lld planes differ, z %lld .. %lld", (long long)bad, (long long)g->n[2],
                 (long long)first, (long long)last);
    free(pn);
    return den > 0 ? sqrt(num / den) : 0.0;
}

/* The split must give the one-part sums to rounding: the same products, other passes. */
#define BENCH_SPLIT_TOL 1e-6

static mr_status bench_q(bench_ctx *c)
{
    const mr_bench_opts *o = c->o;
    int gpus[MR_DEVICE_MAX_GPUS], ngpus = 0;
    mr_status st = mr_device_resolve_gpus(o->device, gpus, &ngpus);
    if (st != MR_OK)
        return st;
    if (ngpus == 0)
        return mr_error(MR_ENODEV, "bench --what q times the GPU sums: it needs --device gpu, gpu:all or gpu:N,M,...");
    mr_gpu_ctx *ctx = NULL;
    if ((st = mr_gpu_ctx_create(&ctx, gpus[0])) != MR_OK)
        return st;
    const mr_grid gq = mr_grid_q(c->matrix), gi = mr_grid_image(c->matrix);
    const mr_grid *grids[2] = {&gq, &gi};
    const int64_t nq = mr_grid_size(&gq), ni = mr_grid_size(&gi);
    float *dw = mr_gpu_alloc(ctx, c->m), *da = mr_gpu_alloc(ctx, 2 * c->m);
    float *dq1 = mr_gpu_alloc(ctx, 2 * nq), *dq = mr_gpu_alloc(ctx, 2 * nq), *df = mr_gpu_alloc(ctx, 2 * ni);
    float *df1 = mr_gpu_alloc(ctx, 2 * ni);
    float *h1 = malloc((size_t)nq * 2 * sizeof(float)), *h2 = malloc((size_t)nq * 2 * sizeof(float));
    bench_acc acc[2];
    memset(acc, 0, sizeof acc);
    if (!dw || !da || !dq1 || !dq || !df || !df1 || !h1 || !h2)
        st = mr_error(MR_ENOMEM, "bench: no memory for the Q grid (%lld points) and its copies", (long long)nq);
    if (st == MR_OK && (st = mr_gpu_upload(ctx, dw, c->wreal, c->m)) == MR_OK)
        st = mr_gpu_upload(ctx, da, c->wcplx, 2 * c->m);
    /* the float64 reference on a few voxel rows of each grid */
    if (st == MR_OK && (st = acc_prepare(c, &gq, c->wreal, 1, &acc[0])) == MR_OK)
        st = acc_prepare(c, &gi, c->wcplx, 0, &acc[1]);
    char list[MR_DEVICE_TEXT];
    mr_device_format(o->device, list, sizeof list);
    fprintf(c->out, "\nQ (%lldx%lldx%lld grid) and F^H d through the operator's engine (gpu/sums.h) on 1 GPU and on "
                    "%d (%s); wall time per call, median of %d after a warm-up; rel_L2 against the float64 "
                    "reference on %d voxel rows; the split is compared with one part on the whole grid\n",
            (long long)gq.n[0], (long long)gq.n[1], (long long)gq.n[2], ngpus, list, o->reps, acc[0].n);
    fprintf(c->out, "%-4s %-17s %12s %10s %10s %9s  %s\n", "sum", "engine", "time_ms", "pairs/s", "GFLOP/s", "rel_L2",
            "gpus");
    int mismatch = 0;
    for (int e = MR_SUMS_SFU; e <= MR_SUMS_FP16X3 && st == MR_OK; e++) {
        const mr_sums_engine eng = (mr_sums_engine)e;
        if (strcmp(o->precision, "all") != 0 && strcmp(o->precision, mr_sums_engine_name(eng)) != 0)
            continue;
        double q_one = 0;
        for (int split = 0; split < (ngpus > 1 ? 2 : 1) && st == MR_OK; split++) {
            mr_gpu_sums_opts so;
            memset(&so, 0, sizeof so);
            so.engine = eng;
            so.devices = gpus;
            so.ndevices = split ? ngpus : 1;
            so.gemm_split_samples = o->gemm_ksplit;
            so.gemm_max_columns = o->gemm_columns;
            mr_gpu_sums *s = NULL;
            if ((st = mr_gpu_sums_create(&s, ctx, c->traj, c->m, &so)) != MR_OK)
                break;
            float *outs[2] = {split ? dq : dq1, split ? df : df1};
            double ms[2] = {0, 0}, rel[2] = {NAN, NAN}, srel[2] = {NAN, NAN};
            char where[2][96] = {"", ""};
            for (int k = 0; k < 2 && st == MR_OK; k++) {
                const int64_t n = k ? ni : nq;
                st = time_sums(c, s, grids[k], k ? da : dw, !k, outs[k], &ms[k]);
                if (k == 0)
                    mr_gpu_sums_trim(s);
                if (st == MR_OK && (st = mr_gpu_download(ctx, h2, outs[k], 2 * n)) == MR_OK)
                    rel[k] = acc_of_grid(&acc[k], grids[k], h2);
                if (st == MR_OK && split && (st = mr_gpu_download(ctx, h1, k ? df1 : dq1, 2 * n)) == MR_OK) {
                    srel[k] = split_diff(grids[k], h1, h2, where[k], sizeof where[k]);
                    if (!(srel[k] <= BENCH_SPLIT_TOL))
                        mismatch = 1;
                }
            }
            for (int k = 0; k < 2 && st == MR_OK && c->nrows < BENCH_MAX_ROWS; k++) {
                bench_row *r = &c->rows[c->nrows++];
                memset(r, 0, sizeof *r);
                snprintf(r->kernel, sizeof r->kernel, "%s", k ? "FHd" : "Q");
                snprintf(r->impl, sizeof r->impl, "sums %s x%d", mr_sums_engine_name(eng), split ? ngpus : 1);
                if (split)
                    snprintf(r->config, sizeof r->config, "%s", list);
                else
                    snprintf(r->config, sizeof r->config, "gpu:%d", gpus[0]);
                r->ms = ms[k];
                r->scale = 1.0;
                r->pairs = (double)(k ? ni : nq) * (double)c->m;
                r->rel_l2 = rel[k];
                print_row(c->out, r);
            }
            for (int k = 0; k < 2 && st == MR_OK && split; k++)
                fprintf(c->out, "     %s %s split vs one part: rel_L2 %.2e%s%s%s\n", k ? "FHd" : "Q",
                        mr_sums_engine_name(eng), srel[k], srel[k] <= BENCH_SPLIT_TOL ? "" : " MISMATCH",
                        where[k][0] ? "; " : "", where[k]);
            if (st == MR_OK && !split)
                q_one = ms[0];
            if (st == MR_OK && split)
                fprintf(c->out, "     Q %s: %.2fx one GPU on %d GPUs\n", mr_sums_engine_name(eng), q_one / ms[0],
                        ngpus);
            fflush(c->out);
            mr_gpu_sums_destroy(s);
        }
    }
    if (st == MR_OK && mismatch)
        st = mr_error(MR_EINTERNAL, "bench: the split sums differ from one part by more than %g (MISMATCH above)",
                      BENCH_SPLIT_TOL);
    acc_free(&acc[0]);
    acc_free(&acc[1]);
    mr_gpu_free(ctx, dw);
    mr_gpu_free(ctx, da);
    mr_gpu_free(ctx, dq1);
    mr_gpu_free(ctx, dq);
    mr_gpu_free(ctx, df);
    mr_gpu_free(ctx, df1);
    free(h1);
    free(h2);
    mr_gpu_ctx_destroy(ctx);
    return st;
}

/* ---- end to end -------------------------------------------------------------------------------- */

static void e2e_capture(void *ctx, const mr_report *r)
{
    bench_ctx *c = (bench_ctx *)((void **)ctx)[0];
    const int k = *(const int *)((void **)ctx)[1];
    c->have_e2e[k] = 1;
    c->e2e_total[k] = r->t_total;
    c->e2e_q[k] = r->t_q;
    c->e2e_fhd[k] = r->t_fhd;
    c->e2e_solve[k] = r->t_solve;
    c->e2e_psnr[k] = r->nmethods > 0 && r->m[0].have_metrics[MR_TRUTH_IMAGE] ? r->m[0].metrics[MR_TRUTH_IMAGE].psnr_db
                                                                              : NAN;
    c->e2e_psnr_bl[k] = r->nmethods > 0 && r->m[0].have_metrics[MR_TRUTH_BANDLIMITED]
                            ? r->m[0].metrics[MR_TRUTH_BANDLIMITED].psnr_db
                            : NAN;
    snprintf(c->e2e_backend[k], sizeof c->e2e_backend[k], "%s", r->backend);
    snprintf(c->e2e_sums[k], sizeof c->e2e_sums[k], "%s", r->sums);
    snprintf(c->e2e_q_source[k], sizeof c->e2e_q_source[k], "%s", r->q_source ? r->q_source : "");
}

static mr_status bench_e2e(bench_ctx *c)
{
    const mr_bench_opts *o = c->o;
    char dir[1024], scan[1100], outdir[1100];
    if (o->scratch)
        snprintf(dir, sizeof dir, "%s", o->scratch);
    else
        snprintf(dir, sizeof dir, "%s/mrirecon-bench", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    mr_status st = mr_mkdir_p(dir);
    if (st != MR_OK)
        return st;
    const int is3d = c->matrix[2] > 1;
    if ((st = mr_path_join(scan, sizeof scan, dir, is3d ? "book.h5" : "phantom2d.h5")) != MR_OK)
        return st;
    /* the scan: the book's kooshball (3D) or the default radial scan (2D), Shepp-Logan, noiseless */
    mr_scan_params sp;
    mr_scan_params_default(&sp);
    const int64_t mat[3] = {c->matrix[0], c->matrix[1], is3d ? c->matrix[2] : 1};
    mr_traj_params_default(&sp.traj, is3d ? MR_TRAJ_KOOSHBALL : MR_TRAJ_RADIAL2D, mat);
    if (is3d && c->matrix[0] == 128 && c->matrix[1] == 128 && c->matrix[2] == 128) {
        sp.traj.spokes = 1078;
        sp.traj.readout = 264;
    }
    mr_kspace *ks = NULL;
    double t0 = mr_now();
    if ((st = mr_scan_simulate(&sp, &ks)) != MR_OK)
        return st;
    st = mr_kspace_write(scan, ks);
    fprintf(c->out, "\nend to end: %s (%lldx%lldx%lld, %lld samples, %s), written in %.1f s\n", scan,
            (long long)ks->matrix[0], (long long)ks->matrix[1], (long long)ks->matrix[2], (long long)ks->nsamples,
            ks->traj_kind, mr_now() - t0);
    mr_kspace_free(ks);
    if (st != MR_OK)
        return st;
    /* runs 0 and 1: the default engine (or --precision), Q computed into an emptied cache and read back;
     * run 2 (GPU only): the SFU kernels with accurate sincosf, no cache */
    char qdir[1100];
    if ((st = mr_path_join(qdir, sizeof qdir, dir, "qcache")) != MR_OK)
        return st;
    mr_q_cache_clear(qdir);
    const int nruns = c->gpu ? BENCH_E2E_RUNS : 2;
    for (int k = 0; k < nruns && st == MR_OK; k++) {
        mr_recon_opts ro;
        mr_recon_opts_default(&ro);
        ro.iters = o->iters;
        ro.method = "cg";
        mr_op_opts_set_device(&ro.op, o->device);
        ro.op.device = c->gpu ? MR_DEVICE_GPU : MR_DEVICE_CPU;
        ro.op.gpu_index = c->gpu ? c->gpu_index : -1;
        ro.op.threads = o->threads;
        ro.op.exact_trig = k == 2;
        ro.op.precision = k == 2 ? MR_PRECISION_AUTO : bench_precision(c);
        ro.q_cache = k == 2 ? "off" : qdir;
        ro.force = 1; /* the bench's own scratch folder: a re-run replaces the files */
        ro.progress = o->progress;
        void *ctx[2] = {c, &k};
        ro.on_report = e2e_capture;
        ro.on_report_ctx = ctx;
        char name[32];
        snprintf(name, sizeof name, "recon-%d", k);
        if ((st = mr_path_join(outdir, sizeof outdir, dir, name)) != MR_OK)
            break;
        mr_log(MR_LOG_INFO, "bench: end-to-end reconstruction (%s) into %s", e2e_labels[k], outdir);
        st = mr_recon_run(scan, outdir, &ro);
        if (st == MR_OK && c->have_e2e[k])
            fprintf(c->out,
                    "  %-14s %s, %s: total %.3f s (Q %.3f s %s, F^H d %.3f s, %d CG iterations %.3f s), PSNR %.2f dB "
                    "(band-limited truth %.2f dB)\n",
                    e2e_labels[k], c->e2e_backend[k], c->e2e_sums[k], c->e2e_total[k], c->e2e_q[k],
                    c->e2e_q_source[k], c->e2e_fhd[k], o->iters, c->e2e_solve[k], c->e2e_psnr[k], c->e2e_psnr_bl[k]);
    }
    if (st == MR_OK && c->have_e2e[0] && c->have_e2e[2])
        fprintf(c->out, "  PSNR %s - accurate trig: %+.4f dB (image truth)\n", c->e2e_sums[0],
                c->e2e_psnr[0] - c->e2e_psnr[2]);
    return st;
}

/* ---- JSON -------------------------------------------------------------------------------------- */

/* `, "name": value` (null when not finite) */
/* ", "name": value" (io/json.h: null when not finite; strings escaped) */
static void json_num(FILE *f, const char *name, double v)
{
    fprintf(f, ", \"%s\": ", name);
    mr_json_number(f, v, 6);
}

static void json_str(FILE *f, const char *sep, const char *name, const char *v)
{
    fprintf(f, "%s\"%s\": ", sep, name);
    mr_json_string(f, v);
}

static mr_status bench_json(const bench_ctx *c, const char *path)
{
    char tmp[4096];
    FILE *f = NULL;
    mr_status st = mr_open_tmp(path, tmp, sizeof tmp, &f);
    if (st != MR_OK)
        return st;
    json_str(f, "{\n  ", "problem", c->o->problem);
    fprintf(f, ",\n  \"matrix\": [%lld, %lld, %lld],\n  \"samples\": %lld,\n", (long long)c->matrix[0],
            (long long)c->matrix[1], (long long)c->matrix[2], (long long)c->m);
    json_str(f, "  ", "device", c->device_desc);
    fprintf(f, ",\n  \"flop_per_pair\": {\"FHd\": %d, \"Q\": %d},\n  \"reps\": %d,\n", MR_BENCH_FLOP_FHD,
            MR_BENCH_FLOP_Q, c->o->reps);
    fprintf(f, "  \"rows\": [");
    for (int i = 0; i < c->nrows; i++) {
        const bench_row *r = &c->rows[i];
        const double s = r->ms * r->scale * 1e-3;
        fprintf(f, "%s\n    {", i ? "," : "");
        json_str(f, "", "sum", r->kernel);
        json_str(f, ", ", "impl", r->impl);
        json_str(f, ", ", "config", r->config);
        json_num(f, "seconds", s);
        json_num(f, "timed_fraction", 1.0 / r->scale);
        json_num(f, "pairs", r->pairs);
        json_num(f, "pairs_per_s", r->pairs / s);
        json_num(f, "rel_l2", r->rel_l2);
        fprintf(f, "}");
    }
    fprintf(f, "\n  ],\n  \"e2e\": [");
    int first = 1;
    for (int k = 0; k < BENCH_E2E_RUNS; k++) {
        if (!c->have_e2e[k])
            continue;
        fprintf(f, "%s\n    {", first ? "" : ",");
        json_str(f, "", "run", e2e_labels[k]);
        json_str(f, ", ", "backend", c->e2e_backend[k]);
        json_str(f, ", ", "sums", c->e2e_sums[k]);
        json_str(f, ", ", "q_source", c->e2e_q_source[k]);
        json_num(f, "total_s", c->e2e_total[k]);
        json_num(f, "q_s", c->e2e_q[k]);
        json_num(f, "fhd_s", c->e2e_fhd[k]);
        json_num(f, "solve_s", c->e2e_solve[k]);
        json_num(f, "psnr_db", c->e2e_psnr[k]);
        json_num(f, "psnr_bandlimited_db", c->e2e_psnr_bl[k]);
        fprintf(f, "}");
        first = 0;
    }
    fprintf(f, "\n  ]\n}\n");
    return mr_close_commit(f, tmp, path);
}

/* ---- entry ------------------------------------------------------------------------------------- */

mr_status mr_bench_run(const mr_bench_opts *o, FILE *out)
{
    bench_ctx c;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.out = out;
    if (o->reps < 1)
        return mr_error(MR_EINVAL, "--reps %d: need at least 1", o->reps);
    mr_status st = mr_bench_parse_problem(o->problem, c.matrix, &c.m);
    if (st != MR_OK)
        return st;
    int gpu = -1;
    if ((st = mr_device_resolve(o->device, &gpu)) != MR_OK)
        return st;
    if (gpu >= 0) {
        if ((st = mr_gpu_describe(gpu, c.device_desc, sizeof c.device_desc)) != MR_OK)
            return st;
        c.gpu = 1;
        c.gpu_index = gpu;
    } else {
        snprintf(c.device_desc, sizeof c.device_desc, "cpu");
    }
    if (o->sweep && !c.gpu)
        return mr_error(MR_ENODEV, "bench --sweep needs a GPU (--device gpu and a usable CUDA device)");
    if (!o->rows || (strcmp(o->rows, "all") != 0 && strcmp(o->rows, "ladder") != 0 && strcmp(o->rows, "gemm") != 0))
        return mr_error(MR_EINVAL, "--rows '%s': expected all, ladder or gemm", o->rows ? o->rows : "");
    mr_precision prec = MR_PRECISION_AUTO;
    if (!o->precision || (strcmp(o->precision, "all") != 0 &&
                          (mr_precision_parse(o->precision, &prec) != MR_OK || prec == MR_PRECISION_AUTO)))
        return mr_error(MR_EINVAL, "--precision '%s': expected all, sfu, tf32x3, fp16x3 or fp64",
                        o->precision ? o->precision : "");
    const int kernels = strcmp(o->what, "kernels") == 0 || strcmp(o->what, "all") == 0;
    const int e2e = strcmp(o->what, "e2e") == 0 || strcmp(o->what, "all") == 0;
    const int qsplit = strcmp(o->what, "q") == 0;
    if (!kernels && !e2e && !qsplit)
        return mr_error(MR_EINVAL, "--what '%s': expected kernels, e2e, q or all", o->what);

    fprintf(out, "mrirecon bench: problem %s (%lldx%lldx%lld voxels, %lld samples; Q on the %lldx%lldx%lld grid), "
                 "device %s\n",
            o->problem, (long long)c.matrix[0], (long long)c.matrix[1], (long long)c.matrix[2], (long long)c.m,
            (long long)(c.matrix[0] > 1 ? 2 * c.matrix[0] : 1), (long long)(c.matrix[1] > 1 ? 2 * c.matrix[1] : 1),
            (long long)(c.matrix[2] > 1 ? 2 * c.matrix[2] : 1), c.device_desc);
    fprintf(out, "random trajectory in the Nyquist box and random weights (seed %llu); median of %d runs after a "
                 "warm-up;\nGFLOP/s at %d FLOP per pair for F^H d and %d for Q (recon/bench/bench.h); rel_L2 vs float64 "
                 "on %d voxel rows;\nCPU rows (--threads %d, 0 = all cores) and the GPU naive/constant rows time a band "
                 "of voxel rows (about %.0e / %.0e pairs)\nand extrapolate linearly to the whole grid where marked.\n",
            (unsigned long long)o->seed, o->reps, MR_BENCH_FLOP_FHD, MR_BENCH_FLOP_Q, o->accuracy_rows, o->threads,
            o->cpu_pairs, o->gpu_slow_pairs);
    if ((st = bench_problem(&c)) == MR_OK) {
        if (o->sweep)
            st = bench_sweep(&c);
        else if (qsplit)
            st = bench_q(&c);
        else if (kernels)
            st = bench_ladder(&c);
    }
    if (st == MR_OK && e2e && !o->sweep)
        st = bench_e2e(&c);
    if (st == MR_OK && o->json)
        st = bench_json(&c, o->json);
    free(c.traj);
    free(c.wreal);
    free(c.wcplx);
    return st;
}
