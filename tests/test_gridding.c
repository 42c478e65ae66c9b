/* Gridding (solver/gridding.c) against the exact density-weighted adjoint
 *   img(r_n) = sum_m w_m d_m e^{+i 2 pi k_m . r_n}
 * computed in float64 by mr_nudft_adjoint_ref (dirac basis: a = w d), on random trajectories,
 * weights and data; bilinear gridding against a fully sampled Cartesian scan of a known image. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/kspace.h"
#include "solver/gridding.h"
#include "solver/nudft.h"
#include "testutil.h"

static uint64_t rng;

/* Random samples in [-N/2 - margin, N/2 + margin) per active axis, weights in [0.5, 1.5), data
 * complex normal. */
static void random_scan(const int64_t mat[3], int64_t m, double margin, float *traj, float *w, float *d)
{
    for (int64_t i = 0; i < m; i++) {
        for (int a = 0; a < 3; a++)
            traj[3 * i + a] = mat[a] > 1 ? (float)((test_uniform(&rng) - 0.5) * ((double)mat[a] + 2 * margin)) : 0.0f;
        w[i] = (float)(0.5 + test_uniform(&rng));
        d[2 * i] = (float)test_normal(&rng);
        d[2 * i + 1] = (float)test_normal(&rng);
    }
}

/* Relative L2 error of gridding vs the exact sum for one configuration. */
static double grid_vs_exact(const int64_t mat[3], int64_t m, double margin, const mr_gridding_opts *o, int threads2)
{
    int64_t n = mat[0] * mat[1] * mat[2];
    float *traj = malloc((size_t)m * 3 * sizeof *traj), *w = malloc((size_t)m * sizeof *w);
    float *d = malloc((size_t)m * 2 * sizeof *d), *a = malloc((size_t)m * 2 * sizeof *a);
    float *img = malloc((size_t)n * 2 * sizeof *img), *img2 = malloc((size_t)n * 2 * sizeof *img2);
    double *ref = malloc((size_t)n * 2 * sizeof *ref);
    random_scan(mat, m, margin, traj, w, d);
    for (int64_t i = 0; i < m; i++) {
        a[2 * i] = w[i] * d[2 * i];
        a[2 * i + 1] = w[i] * d[2 * i + 1];
    }
    mr_grid g = mr_grid_image(mat);
    mr_nudft_adjoint_ref(&g, traj, a, 0, m, ref);
    mr_gridding *gr = NULL;
    double err = INFINITY;
    CHECK_OK(mr_gridding_create(&gr, mat, traj, m, o));
    if (gr) {
        CHECK_OK(mr_gridding_apply(gr, d, w, img));
        err = test_rel_l2(img, ref, 2 * n);
        /* applying twice gives the same image (no state leaks between applies) */
        CHECK_OK(mr_gridding_apply(gr, d, w, img2));
        CHECK(memcmp(img, img2, (size_t)n * 2 * sizeof *img) == 0);
        mr_gridding_destroy(gr);
    }
    if (threads2) { /* the race-free spreading gives the same bits with 1 and 2 threads */
        mr_gridding_opts o1 = *o, o2 = *o;
        o1.threads = 1;
        o2.threads = 2;
        mr_gridding *g1 = NULL, *g2 = NULL;
        CHECK_OK(mr_gridding_create(&g1, mat, traj, m, &o1));
        CHECK_OK(mr_gridding_create(&g2, mat, traj, m, &o2));
        if (g1 && g2) {
            CHECK_OK(mr_gridding_apply(g1, d, w, img));
            CHECK_OK(mr_gridding_apply(g2, d, w, img2));
            double diff = 0;
            for (int64_t i = 0; i < 2 * n; i++)
                diff = fmax(diff, fabs((double)img[i] - img2[i]));
            CHECK_LE("max |1 thread - 2 threads| (spreading is deterministic; FFTW may differ by rounding)", diff,
                     1e-4 * sqrt((double)m));
        }
        mr_gridding_destroy(g1);
        mr_gridding_destroy(g2);
    }
    free(traj);
    free(w);
    free(d);
    free(a);
    free(img);
    free(img2);
    free(ref);
    return err;
}

/* Fully sampled Cartesian trajectory k in {-N/2 .. N - 1 - N/2} per active axis, data from a known
 * complex image by the forward model d = sum_n x_n e^{-i 2 pi k r_n} / N (float64), unit weights:
 * sum_k d_k e^{+i 2 pi k r} = x exactly (DFT orthogonality), and bilinear spreading of integer k is
 * exact, so gridding must reproduce x up to float rounding. */
static double bilinear_cartesian(const int64_t mat[3])
{
    int64_t n = mat[0] * mat[1] * mat[2], m = n;
    float *traj = malloc((size_t)m * 3 * sizeof *traj), *x = calloc((size_t)n * 2, sizeof *x);
    float *d = malloc((size_t)m * 2 * sizeof *d), *w = malloc((size_t)m * sizeof *w);
    float *img = malloc((size_t)n * 2 * sizeof *img);
    double *dd = malloc((size_t)m * 2 * sizeof *dd), *xd = malloc((size_t)n * 2 * sizeof *xd);
    int64_t i = 0;
    for (int64_t z = 0; z < mat[2]; z++)
        for (int64_t y = 0; y < mat[1]; y++)
            for (int64_t xx = 0; xx < mat[0]; xx++, i++) {
                traj[3 * i] = (float)(xx - mat[0] / 2);
                traj[3 * i + 1] = (float)(y - mat[1] / 2);
                traj[3 * i + 2] = (float)(z - mat[2] / 2);
                w[i] = 1.0f;
            }
    for (i = 0; i < 2 * n; i++) {
        x[i] = (float)test_normal(&rng);
        xd[i] = x[i];
    }
    mr_grid g = mr_grid_image(mat);
    mr_nudft_forward_ref(&g, traj, x, m, dd);
    for (i = 0; i < 2 * m; i++)
        d[i] = (float)(dd[i] / (double)n);
    mr_gridding_opts o;
    mr_gridding_opts_default(&o);
    o.kind = MR_GRIDDING_BILINEAR;
    mr_gridding *gr = NULL;
    double err = INFINITY;
    CHECK_OK(mr_gridding_create(&gr, mat, traj, m, &o));
    if (gr) {
        CHECK_OK(mr_gridding_apply(gr, d, w, img));
        err = test_rel_l2(img, xd, 2 * n);
        mr_gridding_destroy(gr);
    }
    free(traj);
    free(x);
    free(d);
    free(w);
    free(img);
    free(dd);
    free(xd);
    return err;
}

int main(void)
{
    rng = test_seed();
    mr_gridding_opts kb;
    mr_gridding_opts_default(&kb);
    CHECK(kb.kind == MR_GRIDDING_KB && kb.width == 6 && kb.oversample == 2.0);

    /* Kaiser-Bessel, W = 6, sigma = 2: <= 1e-3 (the brief's bound) */
    const int64_t m2a[3] = {32, 24, 1}, m2b[3] = {17, 23, 1}, m3a[3] = {12, 10, 8}, m3b[3] = {9, 11, 7};
    CHECK_LE("KB W6 s2 2D 32x24 rel L2 vs exact", grid_vs_exact(m2a, 700, 0.0, &kb, 1), 1e-3);
    CHECK_LE("KB W6 s2 2D 17x23 (odd) rel L2 vs exact", grid_vs_exact(m2b, 500, 0.0, &kb, 0), 1e-3);
    CHECK_LE("KB W6 s2 2D 32x24, k beyond the Nyquist box (periodic) rel L2", grid_vs_exact(m2a, 500, 5.0, &kb, 0),
             1e-3);
    CHECK_LE("KB W6 s2 3D 12x10x8 rel L2 vs exact", grid_vs_exact(m3a, 600, 0.0, &kb, 1), 1e-3);
    CHECK_LE("KB W6 s2 3D 9x11x7 (odd) rel L2 vs exact", grid_vs_exact(m3b, 400, 0.0, &kb, 0), 1e-3);

    /* other widths at sigma = 2 */
    mr_gridding_opts kb4 = kb, kb8 = kb;
    kb4.width = 4;
    kb8.width = 8;
    CHECK_LE("KB W4 s2 2D rel L2 vs exact", grid_vs_exact(m2a, 500, 0.0, &kb4, 0), 3e-3);
    CHECK_LE("KB W8 s2 2D rel L2 vs exact", grid_vs_exact(m2a, 500, 0.0, &kb8, 0), 1e-4);

    /* sigma = 1.25 (grid ceil(1.25 N) rounded up to an even 2^a 3^b 5^c 7^d): looser bound 3e-3 */
    mr_gridding_opts kb125 = kb;
    kb125.oversample = 1.25;
    CHECK_LE("KB W6 s1.25 2D 32x24 rel L2 vs exact", grid_vs_exact(m2a, 700, 0.0, &kb125, 0), 3e-3);
    CHECK_LE("KB W6 s1.25 3D 12x10x8 rel L2 vs exact", grid_vs_exact(m3a, 500, 0.0, &kb125, 0), 3e-3);

    /* bilinear: exact on a Cartesian trajectory, 2D and 3D, even and odd */
    const int64_t c2a[3] = {16, 12, 1}, c2b[3] = {15, 9, 1}, c3a[3] = {8, 6, 4}, c3b[3] = {7, 5, 3};
    CHECK_LE("bilinear 2D 16x12 Cartesian rel L2 vs known image", bilinear_cartesian(c2a), 1e-5);
    CHECK_LE("bilinear 2D 15x9 Cartesian rel L2 vs known image", bilinear_cartesian(c2b), 1e-5);
    CHECK_LE("bilinear 3D 8x6x4 Cartesian rel L2 vs known image", bilinear_cartesian(c3a), 1e-5);
    CHECK_LE("bilinear 3D 7x5x3 Cartesian rel L2 vs known image", bilinear_cartesian(c3b), 1e-5);

    /* bilinear on random samples runs; without deapodisation it is only a rough approximation of the
     * exact sum (the sinc^2 roll-off), measured and bounded loosely */
    mr_gridding_opts bl = kb;
    bl.kind = MR_GRIDDING_BILINEAR;
    CHECK_LE("bilinear 2D random samples rel L2 vs exact (no deapodisation)", grid_vs_exact(m2a, 600, 0.0, &bl, 1),
             0.75);
    CHECK_LE("bilinear 3D random samples rel L2 vs exact (no deapodisation)", grid_vs_exact(m3a, 600, 0.0, &bl, 0),
             0.9);

    /* bilinear units at DC: one sample at k = 0 with w = 1, d = 1 is the constant image 1 */
    {
        const int64_t mm[3] = {10, 7, 1};
        float t0[3] = {0, 0, 0}, d1[2] = {1, 0}, w1 = 1, im[140];
        mr_gridding *g1 = NULL;
        CHECK_OK(mr_gridding_create(&g1, mm, t0, 1, &bl));
        double dev = 0;
        if (g1) {
            CHECK_OK(mr_gridding_apply(g1, d1, &w1, im));
            for (int i = 0; i < 70; i++)
                dev = fmax(dev, fmax(fabs(im[2 * i] - 1.0), fabs(im[2 * i + 1])));
        }
        CHECK_LE("bilinear: |image - 1| for a unit DC sample", dev, 1e-6);
        mr_gridding_destroy(g1);
    }

    /* bad input: clear errors, no crash */
    float t1[3] = {0, 0, 0}, tnan[3] = {NAN, 0, 0};
    mr_gridding *gr = NULL;
    mr_gridding_opts bad = kb;
    bad.width = 3;
    CHECK(mr_gridding_create(&gr, m2a, t1, 1, &bad) == MR_EINVAL && gr == NULL);
    bad = kb;
    bad.oversample = 0.5;
    CHECK(mr_gridding_create(&gr, m2a, t1, 1, &bad) == MR_EINVAL && gr == NULL);
    CHECK(mr_gridding_create(&gr, m2a, tnan, 1, &kb) == MR_EINVAL && gr == NULL);
    printf("NaN trajectory message: %s\n", mr_last_error());
    CHECK(mr_gridding_create(&gr, m2a, t1, 0, &kb) == MR_EINVAL && gr == NULL);
    const int64_t zero[3] = {0, 4, 1};
    CHECK(mr_gridding_create(&gr, zero, t1, 1, &kb) != MR_OK && gr == NULL);
    return test_finish("test_gridding");
}
