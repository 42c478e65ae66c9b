/* Times the NUFFT's type 1 (and type 2) on a kooshball trajectory, on the GPU (gpu/nufft.h) or the CPU
 * (solver/nufft.h), and measures its error against float64 direct sums at sample modes. Optionally
 * writes the points and strengths (binary, for another library's benchmark of the same problem) and reads
 * that library's result to measure its error the same way.
 *
 *   tool_nufft_bench [--device gpu|cpu] [--n N] [--spokes S] [--readout R] [--tol T] [--upsample U]
 *                    [--reps K] [--check MODES] [--type 1|2] [--write FILE] [--compare FILE]
 *
 * Modes: N^3 (3D), the image grid of the matrix (centre N/2, the mrirecon convention = CMCL ordering);
 * points x = 2 pi k / N in [-pi, pi) with FINUFFT's sign +1 for type 1. --write FILE: int64 M, int64 N,
 * then M x 3 doubles (x, y, z) and M complex doubles (c), and the check's mode indices. --compare FILE:
 * N^3 complex64 modes (x fastest) of the other library's type 1, measured at the same check modes.
 * Output: one line per measurement on stdout. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "gpu/gpu.h"
#include "gpu/gpu_ops.h"
#include "gpu/nufft.h"
#include "phantoms/traj.h"
#include "solver/nufft.h"

static int cmp_d(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The float64 direct sum at mode v: sum_m c_m e^{+i 2 pi k_m . r_v}. */
static void direct(const mr_grid *g, const float *traj, const double *c, int64_t m, int64_t v, double out[2])
{
    const int64_t ix = v % g->n[0], iy = (v / g->n[0]) % g->n[1], iz = v / (g->n[0] * g->n[1]);
    const double r[3] = {(double)(ix - g->center[0]) / g->scale[0], (double)(iy - g->center[1]) / g->scale[1],
                         (double)(iz - g->center[2]) / g->scale[2]};
    double re = 0, im = 0;
#pragma omp parallel for reduction(+ : re, im)
    for (int64_t k = 0; k < m; k++) {
        const double ph = 2.0 * M_PI * (traj[3 * k] * r[0] + traj[3 * k + 1] * r[1] + traj[3 * k + 2] * r[2]);
        re += c[2 * k] * cos(ph) - c[2 * k + 1] * sin(ph);
        im += c[2 * k] * sin(ph) + c[2 * k + 1] * cos(ph);
    }
    out[0] = re;
    out[1] = im;
}

/* Relative L2 error over the check modes of a float image (complex, x fastest). */
static double check_error(const mr_grid *g, const float *img, const int64_t *modes, int nmodes, const double *ref)
{
    double e = 0, r = 0;
    for (int i = 0; i < nmodes; i++) {
        const double dr = img[2 * modes[i]] - ref[2 * i], di = img[2 * modes[i] + 1] - ref[2 * i + 1];
        e += dr * dr + di * di;
        r += ref[2 * i] * ref[2 * i] + ref[2 * i + 1] * ref[2 * i + 1];
    }
    (void)g;
    return sqrt(e / r);
}

int main(int argc, char **argv)
{
    const char *device = "gpu", *write = NULL, *compare = NULL;
    int64_t n = 128, spokes = 1078, readout = 264;
    double tol = 1e-6, upsample = 0.0;
    int reps = 10, nmodes = 200, type = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--device"))
            device = argv[i + 1];
        else if (!strcmp(argv[i], "--n"))
            n = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--spokes"))
            spokes = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--readout"))
            readout = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--tol"))
            tol = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--upsample"))
            upsample = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps"))
            reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--check"))
            nmodes = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--type"))
            type = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--write"))
            write = argv[i + 1];
        else if (!strcmp(argv[i], "--compare"))
            compare = argv[i + 1];
        else {
            fprintf(stderr, "tool_nufft_bench: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    const int gpu = strcmp(device, "gpu") == 0;
    if (gpu && mr_gpu_count() <= 0) {
        fprintf(stderr, "tool_nufft_bench: no GPU\n");
        return 77;
    }
    const int64_t matrix[3] = {n, n, n};
    mr_traj_params tp;
    mr_traj_params_default(&tp, MR_TRAJ_KOOSHBALL, matrix);
    tp.spokes = spokes;
    tp.readout = readout;
    int64_t m = 0;
    if (mr_traj_count(&tp, &m) != MR_OK) {
        fprintf(stderr, "tool_nufft_bench: %s\n", mr_last_error());
        return 2;
    }
    float *traj = malloc((size_t)m * 3 * sizeof(float));
    double *c = malloc((size_t)m * 2 * sizeof(double));
    float *cf = malloc((size_t)m * 2 * sizeof(float));
    const mr_grid g = mr_grid_image(matrix);
    const int64_t nv = mr_grid_size(&g);
    float *img = malloc((size_t)nv * 2 * sizeof(float));
    mr_traj_generate(&tp, traj);
    uint64_t r = 12345;
    for (int64_t i = 0; i < 2 * m; i++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        c[i] = (double)(r >> 11) / 9007199254740992.0 - 0.5;
        cf[i] = (float)c[i];
        c[i] = cf[i]; /* the reference sums the float inputs both libraries get */
    }
    int64_t *modes = malloc((size_t)nmodes * sizeof(int64_t));
    double *ref = malloc((size_t)nmodes * 2 * sizeof(double));
    for (int i = 0; i < nmodes; i++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        modes[i] = (int64_t)(r % (uint64_t)nv);
    }
    const double t_ref = mr_now();
    for (int i = 0; i < nmodes; i++)
        direct(&g, traj, c, m, modes[i], ref + 2 * i);
    fprintf(stderr, "reference: %d modes in %.1f s\n", nmodes, mr_now() - t_ref);
    if (write) {
        FILE *f = fopen(write, "wb");
        if (!f) {
            fprintf(stderr, "tool_nufft_bench: cannot write %s\n", write);
            return 1;
        }
        fwrite(&m, sizeof m, 1, f);
        fwrite(&n, sizeof n, 1, f);
        for (int64_t k = 0; k < m; k++)
            for (int a = 0; a < 3; a++) {
                const double x = 2.0 * M_PI * (double)traj[3 * k + a] / (double)n;
                fwrite(&x, sizeof x, 1, f);
            }
        fwrite(c, sizeof(double), (size_t)(2 * m), f);
        fclose(f);
    }
    if (compare) {
        FILE *f = fopen(compare, "rb");
        if (!f || fread(img, sizeof(float), (size_t)(2 * nv), f) != (size_t)(2 * nv)) {
            fprintf(stderr, "tool_nufft_bench: cannot read %lld modes from %s\n", (long long)nv, compare);
            return 1;
        }
        fclose(f);
        printf("compare %s: N %lld M %lld: error %.3e vs float64 direct sums at %d modes\n", compare, (long long)n,
               (long long)m, check_error(&g, img, modes, nmodes, ref), nmodes);
    }
    mr_nufft_opts o;
    mr_nufft_opts_default(&o);
    o.tol = tol;
    o.upsample = upsample;
    mr_nufft_params p;
    if (mr_nufft_params_choose(&g, m, &o, gpu ? MR_NUFFT_ON_GPU : MR_NUFFT_ON_CPU, &p) != MR_OK) {
        fprintf(stderr, "tool_nufft_bench: %s\n", mr_last_error());
        return 2;
    }
    double *times = malloc((size_t)reps * sizeof(double));
    double t_plan = 0;
    mr_status st = MR_OK;
    if (gpu) {
        mr_gpu_ctx *ctx = NULL;
        mr_gpu_nufft *plan = NULL;
        st = mr_gpu_ctx_create(&ctx, 0);
        mr_gpu_nufft_kernel k;
        memset(&k, 0, sizeof k);
        k.f64 = p.precision == MR_NUFFT_PREC_F64;
        k.width = p.width;
        k.degree = p.degree;
        k.coef = &p.coef[0][0];
        double *dec[3];
        for (int a = 0; a < 3; a++) {
            k.fine[a] = p.fine[a];
            dec[a] = malloc((size_t)n * sizeof(double));
            mr_nufft_deconv(&p, &g, a, dec[a]);
            k.deconv[a] = dec[a];
        }
        float *dc = st == MR_OK ? mr_gpu_alloc(ctx, 2 * m) : NULL, *dimg = st == MR_OK ? mr_gpu_alloc(ctx, 2 * nv) : NULL;
        if (st == MR_OK && dc && dimg)
            st = mr_gpu_upload(ctx, dc, cf, 2 * m);
        double t0 = mr_now();
        if (st == MR_OK)
            st = mr_gpu_nufft_create(&plan, ctx, &g, traj, m, &k);
        if (st == MR_OK)
            st = mr_gpu_ctx_sync(ctx);
        t_plan = mr_now() - t0;
        for (int i = 0; i <= reps && st == MR_OK; i++) { /* the first run warms up */
            t0 = mr_now();
            st = type == 1 ? mr_gpu_nufft_type1(plan, 1, dc, 0, 0, dimg) : mr_gpu_nufft_type2(plan, 1, dimg, 0, dc);
            if (st == MR_OK)
                st = mr_gpu_ctx_sync(ctx);
            if (i > 0)
                times[i - 1] = mr_now() - t0;
        }
        if (st == MR_OK && type == 1)
            st = mr_gpu_nufft_type1(plan, 1, dc, 0, 0, dimg);
        if (st == MR_OK && type == 1)
            st = mr_gpu_download(ctx, img, dimg, 2 * nv);
        int bin[3];
        int64_t nsub = 0;
        if (plan)
            mr_gpu_nufft_describe(plan, bin, &nsub);
        fprintf(stderr, "gpu plan: tiles %dx%dx%d, %lld subproblems\n", bin[0], bin[1], bin[2], (long long)nsub);
        mr_gpu_nufft_destroy(plan);
        mr_gpu_free(ctx, dc);
        mr_gpu_free(ctx, dimg);
        mr_gpu_ctx_destroy(ctx);
        for (int a = 0; a < 3; a++)
            free(dec[a]);
    } else {
        mr_nufft *plan = NULL;
        double t0 = mr_now();
        st = mr_nufft_create(&plan, &g, traj, m, &o);
        t_plan = mr_now() - t0;
        for (int i = 0; i <= reps && st == MR_OK; i++) {
            t0 = mr_now();
            st = type == 1 ? mr_nufft_type1(plan, 1, cf, 0, img) : mr_nufft_type2(plan, 1, img, cf);
            if (i > 0)
                times[i - 1] = mr_now() - t0;
        }
        if (st == MR_OK && type == 1)
            st = mr_nufft_type1(plan, 1, cf, 0, img);
        mr_nufft_destroy(plan);
    }
    if (st != MR_OK) {
        fprintf(stderr, "tool_nufft_bench: %s\n", mr_last_error());
        return 1;
    }
    qsort(times, (size_t)reps, sizeof *times, cmp_d);
    printf("mrirecon %s type %d: N %lld M %lld tol %.0e: w %d sigma %.3g fine %lld %s: plan %.4f s, execute median "
           "%.4f s (min %.4f, %d runs)",
           device, type, (long long)n, (long long)m, tol, p.width, p.upsample, (long long)p.fine[0],
           p.precision == MR_NUFFT_PREC_F64 ? "float64" : "float32", t_plan, times[reps / 2], times[0], reps);
    if (type == 1)
        printf(", error %.3e vs float64 direct sums at %d modes", check_error(&g, img, modes, nmodes, ref), nmodes);
    printf("\n");
    free(traj);
    free(c);
    free(cf);
    free(img);
    free(modes);
    free(ref);
    free(times);
    return 0;
}
