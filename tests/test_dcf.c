/* Density compensation (solver/dcf.c): Pipe-Menon on Cartesian and radial trajectories, analytic
 * radial weights, their agreement and units, the plain and accelerated updates against a float64
 * iteration written out here, and the per-process cache. Trajectories are built here (independent of
 * phantoms/). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/kspace.h"
#include "solver/dcf.h"
#include "solver/dcf_cache.h"
#include "solver/gridding.h"
#include "solver/kb.h"
#include "testutil.h"

static uint64_t rng;

/* 2D radial: S full-diameter spokes at angles pi s / S (+ a random rotation), R samples each at
 * k = (j - R/2) dk. */
static float *radial2d(int spokes, int readout, double dk)
{
    float *t = malloc((size_t)spokes * readout * 3 * sizeof *t);
    double rot = test_uniform(&rng) * M_PI / spokes;
    for (int s = 0; s < spokes; s++) {
        double th = M_PI * s / spokes + rot;
        for (int j = 0; j < readout; j++) {
            float *k = t + 3 * ((size_t)s * readout + j);
            double r = (j - readout / 2) * dk;
            k[0] = (float)(r * cos(th));
            k[1] = (float)(r * sin(th));
            k[2] = 0.0f;
        }
    }
    return t;
}

/* 3D kooshball: S full-diameter spokes with directions on a Fibonacci spiral over the upper
 * hemisphere, R samples each at k = (j - R/2) dk. */
static float *kooshball(int spokes, int readout, double dk)
{
    float *t = malloc((size_t)spokes * readout * 3 * sizeof *t);
    const double golden = M_PI * (3.0 - sqrt(5.0));
    for (int s = 0; s < spokes; s++) {
        double z = (s + 0.5) / spokes, rho = sqrt(1.0 - z * z), ph = golden * s;
        for (int j = 0; j < readout; j++) {
            float *k = t + 3 * ((size_t)s * readout + j);
            double r = (j - readout / 2) * dk;
            k[0] = (float)(r * rho * cos(ph));
            k[1] = (float)(r * rho * sin(ph));
            k[2] = (float)(r * z);
        }
    }
    return t;
}

static double radius(const float *k) { return sqrt((double)k[0] * k[0] + (double)k[1] * k[1] + (double)k[2] * k[2]); }

/* Pipe-Menon on a fully sampled Cartesian grid: every interior sample stands for 1 (cycle/FOV)^2. */
static void test_cartesian(void)
{
    const int64_t mat[3] = {40, 36, 1};
    int64_t m = mat[0] * mat[1];
    float *t = malloc((size_t)m * 3 * sizeof *t), *w = malloc((size_t)m * sizeof *w);
    for (int64_t i = 0; i < m; i++) {
        t[3 * i] = (float)(i % mat[0] - mat[0] / 2);
        t[3 * i + 1] = (float)(i / mat[0] - mat[1] / 2);
        t[3 * i + 2] = 0.0f;
    }
    CHECK_OK(mr_dcf_pipe(mat, t, m, 0, 0, w));
    /* interior: farther than the Pipe kernel's reach (2 cycles/FOV per pass, 4 for C = c*c) from
     * the edges, which see no samples beyond them and get larger weights */
    double dev = 0, lo = INFINITY, hi = 0;
    for (int64_t i = 0; i < m; i++) {
        lo = fmin(lo, w[i]);
        hi = fmax(hi, w[i]);
        if (fabs(t[3 * i]) <= mat[0] / 2 - 7 && fabs(t[3 * i + 1]) <= mat[1] / 2 - 7)
            dev = fmax(dev, fabs(w[i] - 1.0));
    }
    CHECK_LE("Pipe, Cartesian 40x36: max |w - 1| over the interior (7 cells from the edges)", dev, 5e-3);
    printf("Pipe, Cartesian: all weights in [%.4f, %.4f] (edges larger)\n", lo, hi);
    free(t);
    free(w);
}

/* Weighted sample density at q with an independent unit-integral Gaussian (sd s cycles/FOV):
 * rho(q) = sum_j w_j exp(-|q - k_j|^2 / (2 s^2)) / (2 pi s^2); 1 means the weights tile k-space. */
static double density2d(const float *t, const float *w, int64_t m, double qx, double qy, double s)
{
    double acc = 0;
    for (int64_t j = 0; j < m; j++) {
        double dx = qx - t[3 * j], dy = qy - t[3 * j + 1], r2 = dx * dx + dy * dy;
        if (r2 < 49 * s * s)
            acc += w[j] * exp(-r2 / (2 * s * s));
    }
    return acc / (2 * M_PI * s * s);
}

/* Pipe (*wp) and analytic (*wa) weights of trajectory t, both malloc'd. */
static void both_weights(const int64_t mat[3], const float *t, int64_t m, float **wp, float **wa)
{
    *wp = malloc((size_t)m * sizeof **wp);
    *wa = malloc((size_t)m * sizeof **wa);
    CHECK_OK(mr_dcf_pipe(mat, t, m, 0, 0, *wp));
    CHECK_OK(mr_dcf_analytic(mat, t, m, *wa));
}

/* Pipe vs analytic weights over the band lo <= |k| < hi: per sample (mean and max of
 * |w_pipe / w_analytic - 1|) and per ring of width 1 cycle/FOV (max of |sum w_pipe / sum w_analytic
 * - 1| over the ring). With a smoothing kernel of 2 cycles/FOV, Pipe weights vary from sample to
 * sample and spoke to spoke at the spacing of the samples (spatial frequencies of ~1 FOV and more,
 * outside the image, which the kernel cannot see), while the weighted density stays flat (the
 * Gaussian check); the rings are the comparison at the kernel's resolution. */
typedef struct {
    double mean, max, ring_max;
} agreement;

#define MAX_RINGS 256

static agreement band_agreement(const float *t, const float *wp, const float *wa, int64_t m, double lo, double hi)
{
    agreement a = {0, 0, 0};
    double rp[MAX_RINGS] = {0}, ra[MAX_RINGS] = {0};
    int64_t n = 0;
    for (int64_t i = 0; i < m; i++) {
        double r = radius(t + 3 * i);
        if (r < lo || r >= hi)
            continue;
        double rel = fabs(wp[i] / wa[i] - 1.0);
        a.mean += rel;
        a.max = fmax(a.max, rel);
        n++;
        int ring = (int)(r - lo);
        if (ring < MAX_RINGS) {
            rp[ring] += wp[i];
            ra[ring] += wa[i];
        }
    }
    for (int k = 0; k < MAX_RINGS; k++)
        if (ra[k] > 0)
            a.ring_max = fmax(a.ring_max, fabs(rp[k] / ra[k] - 1.0));
    a.mean /= (double)(n ? n : 1);
    return a;
}

static void test_radial2d(void)
{
    const int64_t mat[3] = {64, 64, 1};
    const int spokes = 101, readout = 128;
    const double dk = 0.5, kmax = readout / 2 * dk;
    int64_t m = (int64_t)spokes * readout;
    float *t = radial2d(spokes, readout, dk);
    float *wp, *wa;
    both_weights(mat, t, m, &wp, &wa);

    /* flatness: the weighted density (Gaussian sd 1.5 cycles/FOV) at 300 random points |q| < 0.75 K */
    double worst = 0;
    for (int i = 0; i < 300; i++) {
        double r = 0.75 * kmax * sqrt(test_uniform(&rng)), th = 2 * M_PI * test_uniform(&rng);
        double rho = density2d(t, wp, m, r * cos(th), r * sin(th), 1.5);
        worst = fmax(worst, fabs(rho - 1.0));
    }
    CHECK_LE("Pipe, radial 101x128: max |weighted density - 1| over |k| < 0.75 K (Gaussian sd 1.5)", worst, 0.03);
    worst = 0;
    for (int i = 0; i < 300; i++) {
        double r = 0.75 * kmax * sqrt(test_uniform(&rng)), th = 2 * M_PI * test_uniform(&rng);
        double rho = density2d(t, wa, m, r * cos(th), r * sin(th), 1.5);
        worst = fmax(worst, fabs(rho - 1.0));
    }
    CHECK_LE("analytic, radial 101x128: max |weighted density - 1| over 2 <= |k| < 0.75 K", worst, 0.05);

    /* analytic vs Pipe in the middle of the spokes */
    agreement ag = band_agreement(t, wp, wa, m, 0.25 * kmax, 0.75 * kmax);
    CHECK_LE("radial 2D: max over 1-cycle rings |sum w_pipe / sum w_analytic - 1|, K/4 <= |k| < 3K/4", ag.ring_max,
             0.01);
    CHECK_LE("radial 2D: mean per sample |w_pipe / w_analytic - 1|, K/4 <= |k| < 3K/4", ag.mean, 0.04);
    CHECK_LE("radial 2D: max per sample |w_pipe / w_analytic - 1|, K/4 <= |k| < 3K/4", ag.max, 0.15);
    double sum_a = 0, sum_p = 0;
    for (int64_t i = 0; i < m; i++) {
        sum_a += wa[i];
        sum_p += wp[i];
    }
    /* units: both tile the sampled disc, area pi K^2 */
    double disc = M_PI * kmax * kmax;
    CHECK_LE("analytic 2D: |sum w / (pi K^2) - 1|", fabs(sum_a / disc - 1.0), 0.01);
    CHECK_LE("Pipe 2D: |sum w / (pi K^2) - 1| (Pipe inflates the rim)", fabs(sum_p / disc - 1.0), 0.04);
    /* analytic centre: the disc of radius dk/2 shared by the spokes' k = 0 samples */
    for (int64_t i = 0; i < m; i++)
        if (radius(t + 3 * i) == 0.0) {
            CHECK_LE("analytic 2D: centre weight vs pi (dk/2)^2 / S", fabs(wa[i] / (M_PI * 0.0625 / spokes) - 1.0),
                     1e-5);
            break;
        }

    /* units end to end: a Gaussian blob f(r) = exp(-|r|^2 / (2 a^2)) has F(k) =
     * 2 pi a^2 exp(-2 pi^2 a^2 |k|^2); KB gridding with Pipe weights must give f at the voxels */
    const double a = 0.06;
    float *d = malloc((size_t)m * 2 * sizeof *d), *img = malloc((size_t)64 * 64 * 2 * sizeof *img);
    for (int64_t i = 0; i < m; i++) {
        double k2 = radius(t + 3 * i) * radius(t + 3 * i);
        d[2 * i] = (float)(2 * M_PI * a * a * exp(-2 * M_PI * M_PI * a * a * k2));
        d[2 * i + 1] = 0.0f;
    }
    mr_gridding *g = NULL;
    CHECK_OK(mr_gridding_create(&g, mat, t, m, NULL));
    if (g) {
        CHECK_OK(mr_gridding_apply(g, d, wp, img));
        double err = 0;
        for (int y = 0; y < 64; y++)
            for (int x = 0; x < 64; x++) {
                double rx = (x - 32) / 64.0, ry = (y - 32) / 64.0;
                double f = exp(-(rx * rx + ry * ry) / (2 * a * a));
                err = fmax(err, hypot(img[2 * (y * 64 + x)] - f, img[2 * (y * 64 + x) + 1]));
            }
        CHECK_LE("Gaussian blob, radial + Pipe + KB gridding: max |img - f| (peak 1)", err, 0.01);
        mr_gridding_destroy(g);
    }
    free(d);
    free(img);
    free(t);
    free(wp);
    free(wa);
}

static void test_kooshball(void)
{
    const int64_t mat[3] = {24, 24, 24};
    const int spokes = 900, readout = 48;
    const double dk = 0.5, kmax = readout / 2 * dk;
    int64_t m = (int64_t)spokes * readout;
    float *t = kooshball(spokes, readout, dk);
    float *wp, *wa;
    both_weights(mat, t, m, &wp, &wa);
    /* The analytic weights assume evenly spread spoke directions; the Fibonacci hemisphere is only
     * roughly even (Pipe follows its local clusters and gaps), so compare means and band sums. */
    double sum_a = 0, band_a = 0, band_p = 0;
    for (int64_t i = 0; i < m; i++) {
        double r = radius(t + 3 * i);
        sum_a += wa[i];
        if (r >= 0.2 * kmax && r <= 0.7 * kmax) {
            band_a += wa[i];
            band_p += wp[i];
        }
    }
    agreement ag = band_agreement(t, wp, wa, m, 0.2 * kmax, 0.7 * kmax);
    printf("kooshball, K/5 <= |k| < 0.7 K: per sample max |w_pipe/w_analytic - 1| = %.4f\n", ag.max);
    double ball = 4.0 / 3.0 * M_PI * kmax * kmax * kmax;
    CHECK_LE("analytic 3D: |sum w / (4/3 pi K^3) - 1|", fabs(sum_a / ball - 1.0), 0.02);
    CHECK_LE("kooshball 900x48: |sum w_pipe / sum w_analytic - 1| over K/5 <= |k| <= 0.7 K", fabs(band_p / band_a - 1),
             0.01);
    CHECK_LE("kooshball 900x48: max over 1-cycle shells |sum w_pipe / sum w_analytic - 1|, K/5 <= |k| < 0.7 K",
             ag.ring_max, 0.02);
    CHECK_LE("kooshball 900x48: mean per sample |w_pipe / w_analytic - 1| over K/5 <= |k| < 0.7 K", ag.mean, 0.05);
    free(t);
    free(wp);
    free(wa);
}

/* The Pipe-Menon iteration in float64, 2D, with the kernel evaluated directly (mr_kb_value, W = 6 cells,
 * beta = 7, 3 cells per cycle/FOV) on a dense grid of the integer cells j, footprint u - 3 <= j < u + 3:
 * independent of the spreading engine and its polynomial kernel. beta_m: the momentum (0: plain).
 * Returns w h^2 (the area scaling), h = 1/3. */
static void pipe_reference(const float *traj, int64_t m, int iters, double beta_m, double *w)
{
    double kmax = 0.0;
    for (int64_t i = 0; i < 2 * m; i++)
        kmax = fmax(kmax, fabs((double)traj[3 * (i / 2) + i % 2]));
    const int64_t g0 = (int64_t)ceil(3.0 * kmax) + 4, n = 2 * g0 + 1;
    int64_t j0[2 * 21 * 32]; /* the first cells [M][2], for test_updates' trajectory */
    CHECK(m <= 21 * 32);
    if (m > 21 * 32)
        return;
    /* one block: the grid, C w, the previous w, the kernel values [M][2][6] */
    double *grid = malloc((size_t)(n * n + 14 * m) * sizeof *grid);
    double *cw = grid + n * n, *prev = cw + m, *ker = prev + m;
    for (int64_t i = 0; i < m; i++)
        for (int a = 0; a < 2; a++) {
            const double u = 3.0 * traj[3 * i + a];
            j0[2 * i + a] = (int64_t)ceil(u - 3.0);
            for (int t = 0; t < 6; t++)
                ker[12 * i + 6 * a + t] = mr_kb_value(u - (double)(j0[2 * i + a] + t), 6, 7.0);
        }
    for (int64_t i = 0; i < m; i++)
        w[i] = prev[i] = 1.0;
    for (int it = 0; it < iters; it++) {
        memset(grid, 0, (size_t)(n * n) * sizeof *grid);
        for (int64_t i = 0; i < m; i++)
            for (int y = 0; y < 6; y++)
                for (int x = 0; x < 6; x++)
                    grid[(j0[2 * i + 1] + y + g0) * n + j0[2 * i] + x + g0] +=
                        w[i] * ker[12 * i + 6 + y] * ker[12 * i + x];
        for (int64_t i = 0; i < m; i++) {
            cw[i] = 0.0;
            for (int y = 0; y < 6; y++)
                for (int x = 0; x < 6; x++)
                    cw[i] += grid[(j0[2 * i + 1] + y + g0) * n + j0[2 * i] + x + g0] * ker[12 * i + 6 + y] *
                             ker[12 * i + x];
        }
        for (int64_t i = 0; i < m; i++) {
            double v = cw[i] > 0.0 ? w[i] / cw[i] : 0.0;
            if (beta_m > 0.0 && it >= 2 && v > 0.0 && prev[i] > 0.0)
                v *= pow(w[i] / prev[i], beta_m);
            prev[i] = w[i];
            w[i] = v;
        }
    }
    for (int64_t i = 0; i < m; i++)
        w[i] /= 9.0;
    free(grid);
}

/* mr_dcf_pipe_run, plain and accelerated, against pipe_reference on a small radial trajectory (with k
 * off the grid's cells), and the accelerated default against 20 plain updates. */
static void test_updates(void)
{
    const int64_t mat[3] = {16, 16, 1};
    const int spokes = 21, readout = 32;
    const int64_t m = (int64_t)spokes * readout;
    float *t = radial2d(spokes, readout, 0.5);
    float *w = malloc((size_t)m * sizeof *w);
    double *ref = malloc((size_t)m * sizeof *ref);
    const struct {
        int iters;
        double beta;
    } cases[] = {{20, 0.0}, {10, 0.5}, {12, 0.3}};
    for (int c = 0; c < 3; c++) {
        mr_dcf_pipe_opts o;
        mr_dcf_pipe_opts_default(&o);
        o.iters = cases[c].iters;
        o.momentum = cases[c].beta;
        CHECK_OK(mr_dcf_pipe_run(mat, t, m, &o, w));
        pipe_reference(t, m, cases[c].iters, cases[c].beta, ref);
        double err = 0.0, top = 0.0;
        for (int64_t i = 0; i < m; i++) {
            err = fmax(err, fabs(w[i] - ref[i]));
            top = fmax(top, ref[i]);
        }
        char what[120];
        snprintf(what, sizeof what, "Pipe %d updates, momentum %g, vs float64 reference: max |w - ref| / max ref",
                 cases[c].iters, cases[c].beta);
        CHECK_LE(what, err / top, 1e-5);
    }
    /* the default is 10 accelerated updates */
    mr_dcf_pipe_opts o;
    mr_dcf_pipe_opts_default(&o);
    CHECK(o.iters == 10 && o.momentum == 0.5);
    CHECK_OK(mr_dcf_pipe(mat, t, m, 0, 0, w));
    pipe_reference(t, m, 10, 0.5, ref);
    double err = 0.0, top = 0.0;
    for (int64_t i = 0; i < m; i++) {
        err = fmax(err, fabs(w[i] - ref[i]));
        top = fmax(top, ref[i]);
    }
    CHECK_LE("default Pipe (10 updates, momentum 0.5) vs float64 reference", err / top, 1e-5);
    o.momentum = 1.0;
    CHECK(mr_dcf_pipe_run(mat, t, m, &o, w) == MR_EINVAL);
    printf("momentum 1 message: %s\n", mr_last_error());
    o.momentum = -0.1;
    CHECK(mr_dcf_pipe_run(mat, t, m, &o, w) == MR_EINVAL);
    free(t);
    free(w);
    free(ref);
}

static void test_cache(void)
{
    const int64_t mat[3] = {32, 32, 1};
    const int spokes = 51, readout = 64;
    int64_t m = (int64_t)spokes * readout, hits, computed;
    float *t = radial2d(spokes, readout, 0.5);
    float *w1 = malloc((size_t)m * sizeof *w1), *w2 = malloc((size_t)m * sizeof *w2);
    mr_dcf_cache_clear();
    CHECK_OK(mr_dcf_pipe(mat, t, m, 0, 0, w1));
    CHECK_OK(mr_dcf_pipe(mat, t, m, 0, 1, w2)); /* another thread count: same key */
    mr_dcf_cache_stats(&hits, &computed);
    CHECK(hits == 1 && computed == 1);
    CHECK(memcmp(w1, w2, (size_t)m * sizeof *w1) == 0);
    /* a cache miss recomputes and gives the same bits as the first computation (determinism) */
    mr_dcf_cache_clear();
    CHECK_OK(mr_dcf_pipe(mat, t, m, 0, 1, w2));
    CHECK(memcmp(w1, w2, (size_t)m * sizeof *w1) == 0);
    /* a different trajectory, matrix or iteration count is a different key */
    t[7] += 0.01f;
    CHECK_OK(mr_dcf_pipe(mat, t, m, 0, 0, w2));
    const int64_t mat2[3] = {32, 30, 1};
    CHECK_OK(mr_dcf_pipe(mat2, t, m, 0, 0, w2));
    CHECK_OK(mr_dcf_pipe(mat2, t, m, 5, 0, w2));
    CHECK_OK(mr_dcf_pipe(mat2, t, m, 5, 0, w2));
    mr_dcf_pipe_opts o; /* another momentum */
    mr_dcf_pipe_opts_default(&o);
    o.iters = 5;
    o.momentum = 0.25;
    CHECK_OK(mr_dcf_pipe_run(mat2, t, m, &o, w2));
    mr_dcf_cache_stats(&hits, &computed);
    printf("cache: %lld hits, %lld computed\n", (long long)hits, (long long)computed);
    CHECK(hits == 1 && computed == 5);

    /* bad input */
    t[4] = NAN;
    CHECK(mr_dcf_pipe(mat, t, m, 0, 0, w2) == MR_EINVAL);
    printf("NaN message: %s\n", mr_last_error());
    CHECK(mr_dcf_analytic(mat, t, m, w2) == MR_EINVAL);
    float one[3] = {0, 0, 0};
    CHECK(mr_dcf_analytic(mat, one, 1, w2) == MR_EINVAL);
    free(t);
    free(w1);
    free(w2);
}

int main(void)
{
    rng = test_seed();
    test_cartesian();
    test_radial2d();
    test_kooshball();
    test_updates();
    test_cache();
    return test_finish("test_dcf");
}
