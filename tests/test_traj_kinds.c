/* Every trajectory kind: exact sample counts, extents, determinism, golden-angle increments,
 * spiral Nyquist spacing, kooshball coverage, analytic weights summing to the support, and the
 * book's 3D scan size (128^3, 1078 spokes x 264 = 284,592 samples). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "phantoms/traj.h"
#include "testutil.h"

#define PI 3.14159265358979323846

static float *make(const mr_traj_params *p, int64_t *m)
{
    *m = 0;
    if (mr_traj_count(p, m) != MR_OK)
        return NULL;
    float *t = malloc((size_t)*m * 3 * sizeof *t);
    CHECK_OK(mr_traj_generate(p, t));
    return t;
}

/* count, extent, determinism, weights, for one parameter set; returns the trajectory */
static float *common(const mr_traj_params *p, int64_t expect_m, double support)
{
    const char *name = mr_traj_kind_name(p->kind);
    int64_t m;
    float *t = make(p, &m);
    printf("%s: %lld samples (expected %lld)\n", name, (long long)m, (long long)expect_m);
    CHECK(m == expect_m);
    if (!t)
        return NULL;
    double ext[3] = {0, 0, 0};
    for (int64_t i = 0; i < m; i++)
        for (int a = 0; a < 3; a++) {
            double v = fabs(t[3 * i + a]) - (double)p->matrix[a] / 2;
            if (v > ext[a])
                ext[a] = v;
            if (p->matrix[a] == 1)
                ext[a] = fmax(ext[a], fabs(t[3 * i + a]) + 0.0); /* 2D: kz must be 0 */
        }
    CHECK_LE("max(|k_x| - Nx/2, 0)", ext[0], 0);
    CHECK_LE("max(|k_y| - Ny/2, 0)", ext[1], 0);
    CHECK_LE("max(|k_z| - Nz/2, 0) (kz = 0 in 2D)", ext[2], 0);
    int64_t m2;
    float *t2 = make(p, &m2);
    CHECK(t2 && m2 == m && memcmp(t, t2, (size_t)m * 3 * sizeof *t) == 0);
    free(t2);
    float *w = malloc((size_t)m * sizeof *w);
    CHECK_OK(mr_traj_weights(p, w));
    double sum = 0, wmin = INFINITY;
    for (int64_t i = 0; i < m; i++) {
        sum += w[i];
        wmin = fmin(wmin, w[i]);
    }
    printf("%s: sum of weights %.6g, support %.6g\n", name, sum, support);
    CHECK_LE("|sum w / support - 1|", fabs(sum / support - 1), 0.02);
    CHECK_GE("min weight", wmin, 0);
    free(w);
    return t;
}

static double spoke_angle_of(const float *t, int64_t readout, int64_t s)
{
    const float *last = t + 3 * (s * readout + readout - 1); /* rho > 0 */
    return atan2(last[1], last[0]);
}

static void test_radial(void)
{
    const int64_t mat[3] = {64, 64, 1};
    mr_traj_params p;
    mr_traj_params_default(&p, MR_TRAJ_RADIAL2D, mat);
    CHECK(p.spokes == 101 && p.readout == 128);
    p.spokes = 37;
    p.readout = 90;
    float *t = common(&p, 37 * 90, PI / 4 * 64 * 64);
    /* readout: k = (j - R/2) N/R along the spoke, so the first sample sits at -N/2, the last at N/2 - N/R */
    double r0 = hypot(t[0], t[1]), rl = hypot(t[3 * 89], t[3 * 89 + 1]);
    CHECK_LE("|first radius - N/2|", fabs(r0 - 32), 1e-5);
    CHECK_LE("|last radius - (N/2 - N/R)|", fabs(rl - (32 - 64.0 / 90)), 1e-5);
    double worst = 0;
    for (int64_t s = 0; s < 37; s++) {
        double d = spoke_angle_of(t, 90, s) - PI * s / 37;
        worst = fmax(worst, fabs(d));
    }
    CHECK_LE("radial spoke angle - pi s/S", worst, 1e-6);
    free(t);

    /* odd readout, non-square matrix */
    const int64_t mat2[3] = {48, 32, 1};
    mr_traj_params_default(&p, MR_TRAJ_RADIAL2D, mat2);
    p.readout = 51;
    free(common(&p, p.spokes * 51, PI / 4 * 48 * 32));
}

static void test_golden(void)
{
    const int64_t mat[3] = {64, 64, 1};
    mr_traj_params p;
    mr_traj_params_default(&p, MR_TRAJ_GOLDEN2D, mat);
    p.spokes = 233;
    float *t = common(&p, 233 * p.readout, PI / 4 * 64 * 64);
    double ga = PI * (sqrt(5.0) - 1) / 2, worst = 0;
    for (int64_t s = 0; s + 1 < p.spokes; s++) {
        double d = spoke_angle_of(t, p.readout, s + 1) - spoke_angle_of(t, p.readout, s);
        d = fmod(d - ga, PI); /* increments are ga modulo pi */
        if (d > PI / 2)
            d -= PI;
        if (d < -PI / 2)
            d += PI;
        worst = fmax(worst, fabs(d));
    }
    printf("golden angle %.10f rad = %.8f deg\n", ga, ga * 180 / PI);
    CHECK_LE("golden increments - 111.246 deg (mod 180) [rad]", worst, 1e-5);
    CHECK_LE("|MR_GOLDEN_ANGLE - pi (sqrt5 - 1)/2|", fabs(MR_GOLDEN_ANGLE - ga), 1e-15);
    free(t);
}

/* arms: Nyquist spacing between neighbouring arms, rotation between interleaves, reach N/2 */
static void check_spiral_arms(const mr_traj_params *p, const float *t)
{
    int64_t r = p->readout, nl = p->interleaves;
    double n = (double)p->matrix[0];
    /* unwrap the angle along arm 0; rho/theta is the constant A of rho = A theta */
    double prev = atan2(t[4], t[3]), unwrapped = prev, amin = INFINITY, amax = 0, step = 0;
    for (int64_t j = 1; j < r; j++) {
        double ang = atan2(t[3 * j + 1], t[3 * j]), d = ang - prev;
        while (d > PI)
            d -= 2 * PI;
        while (d < -PI)
            d += 2 * PI;
        if (j > 1)
            unwrapped += d;
        prev = ang;
        double rad = hypot(t[3 * j], t[3 * j + 1]);
        if (unwrapped > 2 * PI) {
            double a = rad / unwrapped;
            amin = fmin(amin, a);
            amax = fmax(amax, a);
        }
        step = fmax(step, hypot(t[3 * j] - t[3 * j - 3], t[3 * j + 1] - t[3 * j - 2]));
    }
    /* the spacing between neighbouring arms at one angle is A * 2 pi / L (cycles/FOV) */
    double spacing = amax * 2 * PI / (double)nl;
    printf("spiral L=%lld: arm spacing %.6f (A in [%.6g, %.6g]), max step along arm %.4f\n", (long long)nl, spacing,
           amin, amax, step);
    CHECK_LE("spiral: spacing between neighbouring arms (Nyquist) [cycles/FOV]", spacing, 1.0 + 1e-4);
    CHECK_LE("spiral: relative spread of rho/theta (Archimedean)", (amax - amin) / amax, 1e-3);
    double rl = hypot(t[3 * (r - 1)], t[3 * (r - 1) + 1]);
    CHECK_LE("spiral: |last radius - N/2|", fabs(rl - n / 2), 1e-4);
    double worst = 0;
    for (int64_t l = 1; l < nl; l++) {
        double rot = 2 * PI * (double)l / (double)nl, c = cos(rot), s = sin(rot);
        for (int64_t j = 0; j < r; j++) {
            const float *a = t + 3 * j, *b = t + 3 * (l * r + j);
            worst = fmax(worst, hypot(c * a[0] - s * a[1] - b[0], s * a[0] + c * a[1] - b[1]));
        }
    }
    CHECK_LE("spiral: interleaf l = interleaf 0 rotated by 2 pi l/L", worst, 1e-4);
}

static void test_spiral(void)
{
    const int64_t mat[3] = {64, 64, 1};
    mr_traj_params p;
    const int64_t ls[3] = {1, 3, 16};
    for (int i = 0; i < 3; i++) {
        mr_traj_params_default(&p, MR_TRAJ_SPIRAL2D, mat);
        p.interleaves = ls[i];
        p.readout = mr_traj_spiral_readout(&p, 0.5);
        float *t = common(&p, ls[i] * p.readout, PI / 4 * 64 * 64);
        if (t)
            check_spiral_arms(&p, t);
        /* default readout: spacing along the arm <= 1/2 cycle/FOV */
        double step = 0;
        for (int64_t j = 1; t && j < p.readout; j++)
            step = fmax(step, hypot(t[3 * j] - t[3 * j - 3], t[3 * j + 1] - t[3 * j - 2]));
        CHECK_LE("spiral: step along the arm with the default readout", step, 0.5 + 1e-4);
        free(t);
    }
    /* any sample count */
    mr_traj_params_default(&p, MR_TRAJ_SPIRAL2D, mat);
    p.interleaves = 5;
    p.readout = 1001;
    free(common(&p, 5 * 1001, PI / 4 * 64 * 64));
}

static void test_random(uint64_t seed)
{
    const int64_t mat[3] = {40, 24, 1};
    mr_traj_params p;
    mr_traj_params_default(&p, MR_TRAJ_RANDOM2D, mat);
    p.samples = 12345;
    p.seed = seed;
    float *t = common(&p, 12345, 40.0 * 24);
    mr_traj_params q = p;
    q.seed = seed + 1;
    int64_t m;
    float *t2 = make(&q, &m);
    CHECK(t && t2 && memcmp(t, t2, (size_t)m * 3 * sizeof *t) != 0);
    /* uniform: mean ~ 0 (std of the mean N/sqrt(12 M)) */
    double mx = 0;
    for (int64_t i = 0; t && i < m; i++)
        mx += t[3 * i];
    mx /= (double)m;
    CHECK_LE("random: |mean kx| / (Nx / sqrt(12 M)) (5 sigma)", fabs(mx) / (40 / sqrt(12.0 * m)), 5);
    free(t);
    free(t2);
}

static void test_kooshball(uint64_t seed)
{
    const int64_t mat[3] = {32, 32, 32};
    mr_traj_params p;
    mr_traj_params_default(&p, MR_TRAJ_KOOSHBALL, mat);
    CHECK(p.spokes == 1608 && p.readout == 64);
    p.spokes = 400;
    float *t = common(&p, 400 * 64, PI / 6 * 32 * 32 * 32);
    /* coverage: the largest angle from a random line through the origin to the nearest spoke,
     * against the cap radius of the solid angle 2 pi/S each half-spoke stands for */
    uint64_t st = seed;
    double worst = 0;
    for (int i = 0; t && i < 2000; i++) {
        double v[3] = {test_normal(&st), test_normal(&st), test_normal(&st)};
        double nv = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]), best = 0;
        for (int64_t s = 0; s < p.spokes; s++) {
            const float *e = t + 3 * (s * p.readout + p.readout - 1);
            double ne = sqrt((double)e[0] * e[0] + (double)e[1] * e[1] + (double)e[2] * e[2]);
            best = fmax(best, fabs(v[0] * e[0] + v[1] * e[1] + v[2] * e[2]) / (nv * ne));
        }
        worst = fmax(worst, acos(fmin(1.0, best)));
    }
    double cap = acos(1 - 1.0 / p.spokes);
    printf("kooshball S=%lld: worst angle to the nearest spoke %.4f rad, cap radius %.4f rad\n", (long long)p.spokes,
           worst, cap);
    CHECK_LE("kooshball: worst gap / cap radius (even spread)", worst / cap, 2.0);
    free(t);

    /* the book's scan */
    const int64_t big[3] = {128, 128, 128};
    mr_traj_params_default(&p, MR_TRAJ_KOOSHBALL, big);
    p.spokes = 1078;
    p.readout = 264;
    int64_t m;
    CHECK_OK(mr_traj_count(&p, &m));
    printf("book scan: %lld samples\n", (long long)m);
    CHECK(m == 284592);
}

static void test_stacks(void)
{
    const int64_t mat[3] = {32, 32, 16};
    mr_traj_params p;
    mr_traj_params_default(&p, MR_TRAJ_STACK_OF_STARS, mat);
    CHECK(p.partitions == 16);
    p.spokes = 21;
    float *t = common(&p, 16 * 21 * 64, PI / 4 * 32 * 32 * 16);
    /* kz partitions at -Nz/2 .. Nz/2 - 1 */
    int ok = 1;
    for (int64_t q = 0; t && q < 16; q++)
        for (int64_t i = 0; i < 21 * 64; i++)
            ok &= t[3 * (q * 21 * 64 + i) + 2] == (float)(q - 8);
    CHECK(ok);
    free(t);
    p.partitions = 4; /* undersampled in kz: kz = (p - P/2) Nz/P */
    t = common(&p, 4 * 21 * 64, PI / 4 * 32 * 32 * 16);
    CHECK(t && t[2] == -8.0f && t[3 * (3 * 21 * 64) + 2] == 4.0f);
    free(t);

    mr_traj_params_default(&p, MR_TRAJ_STACK_OF_SPIRALS, mat);
    p.interleaves = 4;
    p.readout = 300;
    t = common(&p, 16 * 4 * 300, PI / 4 * 32 * 32 * 16);
    if (t)
        check_spiral_arms(&p, t);
    free(t);
}

static void test_errors(void)
{
    const int64_t mat[3] = {64, 64, 1}, mat3[3] = {64, 64, 64};
    mr_traj_params p;
    int64_t m;
    mr_traj_params_default(&p, MR_TRAJ_RADIAL2D, mat);
    p.spokes = 0;
    CHECK(mr_traj_count(&p, &m) == MR_EINVAL);
    printf("message: %s\n", mr_last_error());
    mr_traj_params_default(&p, MR_TRAJ_RADIAL2D, mat);
    p.readout = 1;
    CHECK(mr_traj_count(&p, &m) == MR_EINVAL);
    mr_traj_params_default(&p, MR_TRAJ_RADIAL2D, mat3);
    CHECK(mr_traj_count(&p, &m) == MR_EINVAL);
    mr_traj_params_default(&p, MR_TRAJ_KOOSHBALL, mat);
    CHECK(mr_traj_count(&p, &m) == MR_EINVAL);
    mr_traj_params_default(&p, MR_TRAJ_STACK_OF_STARS, mat3);
    p.spokes = 1 << 20;
    p.readout = 1 << 20;
    CHECK(mr_traj_count(&p, &m) == MR_EINVAL);
    printf("message: %s\n", mr_last_error());
    mr_traj_params_default(&p, MR_TRAJ_SPIRAL2D, mat);
    p.turns = -1;
    CHECK(mr_traj_count(&p, &m) == MR_EINVAL);
    mr_traj_kind k;
    CHECK(mr_traj_kind_parse("stack-of-spirals", &k) == MR_OK && k == MR_TRAJ_STACK_OF_SPIRALS);
    CHECK(mr_traj_kind_parse("zigzag", &k) == MR_EINVAL);
}

int main(void)
{
    uint64_t seed = test_seed();
    test_radial();
    test_golden();
    test_spiral();
    test_random(seed);
    test_kooshball(seed);
    test_stacks();
    test_errors();
    return test_finish("test_traj_kinds");
}
