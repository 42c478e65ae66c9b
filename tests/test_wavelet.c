/* The wavelet operator (solver/wavelet.h) on the host: the filters, the layout, and on 1D, 2D and 3D
 * matrices of even, odd and prime sizes and several orders, with and without a shift, every property
 * of tests/wavelet_check.h (float64 reference, perfect reconstruction, isometry, projection,
 * adjointness); the detail mask, the random shifts, the error paths, and the same bits on 1 and 2
 * threads.
 *
 * Filter bounds (double): sum_k h[k] h[k+2m] = delta_m and sum_k g[k] h[k+2m] = 0 within 1e-13,
 * sum h = sqrt 2 within 1e-13, vanishing moments |sum_k g[k] k^p| / sum_k |g[k]| k^p <= 1e-10 for
 * p < N, db1..db3 against their closed forms within 1e-14 (measured over db1..db10: orthonormality
 * <= 1.6e-15, moments <= 1.6e-15; closed forms <= 3.4e-16).
 * Operator bounds: tests/wavelet_check.h.
 *
 * MR_TEST_BENCH=1 also times forward + adjoint at 128^2, 256^2, 64^3 and 128^3 (printed, never checked). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wavelet_check.h"

static uint64_t rng;

static void filters(void)
{
    for (int order = 1; order <= MR_WAVELET_MAX_ORDER; order++) {
        const int taps = 2 * order;
        double h[2 * MR_WAVELET_MAX_ORDER], g[2 * MR_WAVELET_MAX_ORDER];
        CHECK_OK(mr_wavelet_filter(order, h));
        for (int k = 0; k < taps; k++)
            g[k] = (k % 2 ? -1.0 : 1.0) * h[taps - 1 - k];
        double orth = 0, cross = 0, sum = 0, moments = 0;
        for (int m = -order + 1; m < order; m++) {
            double hh = 0, gh = 0;
            for (int k = 0; k < taps; k++)
                if (k + 2 * m >= 0 && k + 2 * m < taps) {
                    hh += h[k] * h[k + 2 * m];
                    gh += g[k] * h[k + 2 * m];
                }
            orth = fmax(orth, fabs(hh - (m == 0)));
            cross = fmax(cross, fabs(gh));
        }
        for (int k = 0; k < taps; k++)
            sum += h[k];
        for (int p = 0; p < order; p++) {
            double s = 0, a = 0;
            for (int k = 0; k < taps; k++) {
                s += g[k] * pow(k, p);
                a += fabs(g[k]) * pow(k, p);
            }
            moments = fmax(moments, fabs(s) / a);
        }
        char what[128];
        snprintf(what, sizeof what, "db%d: max |sum h[k] h[k+2m] - delta_m|", order);
        CHECK_LE(what, orth, 1e-13);
        snprintf(what, sizeof what, "db%d: max |sum g[k] h[k+2m]|", order);
        CHECK_LE(what, cross, 1e-13);
        snprintf(what, sizeof what, "db%d: |sum h - sqrt 2|", order);
        CHECK_LE(what, fabs(sum - sqrt(2.0)), 1e-13);
        snprintf(what, sizeof what, "db%d: vanishing moments p < %d, relative", order, order);
        CHECK_LE(what, moments, 1e-10);
    }
    /* closed forms (Daubechies, Ten Lectures on Wavelets, table 6.1's db2 and db3 in radicals) */
    const double r3 = sqrt(3.0), r10 = sqrt(10.0), t = sqrt(5.0 + 2.0 * sqrt(10.0)), s2 = sqrt(2.0);
    const double db1[2] = {1 / s2, 1 / s2};
    const double db2[4] = {(1 + r3) / (4 * s2), (3 + r3) / (4 * s2), (3 - r3) / (4 * s2), (1 - r3) / (4 * s2)};
    const double db3[6] = {(1 + r10 + t) / (16 * s2),          (5 + r10 + 3 * t) / (16 * s2),
                           (10 - 2 * r10 + 2 * t) / (16 * s2), (10 - 2 * r10 - 2 * t) / (16 * s2),
                           (5 + r10 - 3 * t) / (16 * s2),      (1 + r10 - t) / (16 * s2)};
    const double *closed[3] = {db1, db2, db3};
    for (int order = 1; order <= 3; order++) {
        double h[6], worst = 0;
        CHECK_OK(mr_wavelet_filter(order, h));
        for (int k = 0; k < 2 * order; k++)
            worst = fmax(worst, fabs(h[k] - closed[order - 1][k]));
        char what[96];
        snprintf(what, sizeof what, "db%d against its closed form, max abs difference", order);
        CHECK_LE(what, worst, 1e-14);
    }
    double h[2];
    CHECK(mr_wavelet_filter(0, h) == MR_EINVAL);
    CHECK(mr_wavelet_filter(MR_WAVELET_MAX_ORDER + 1, h) == MR_EINVAL);
}

typedef struct {
    int64_t matrix[3];
    int order, levels;
    int want_levels[3];
    int64_t want_padded[3];
} layout_case;

static void layouts(void)
{
    const layout_case cases[] = {
        {{128, 128, 1}, 4, 0, {4, 4, 0}, {128, 128, 1}},
        {{100, 60, 1}, 4, 0, {3, 2, 0}, {104, 60, 1}},
        {{16, 1, 1}, 4, 0, {1, 0, 0}, {16, 1, 1}},
        {{97, 31, 7}, 3, 0, {4, 2, 0}, {112, 32, 7}},
        {{1, 1, 33}, 2, 0, {0, 0, 3}, {1, 1, 40}},
        {{64, 64, 5}, 1, 6, {6, 6, 2}, {64, 64, 8}},
        {{2, 1, 1}, 1, 1, {1, 0, 0}, {2, 1, 1}},
        {{80, 41, 1}, 10, 0, {2, 1, 0}, {80, 42, 1}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const layout_case *k = &cases[c];
        const mr_wavelet_opts o = {k->order, k->levels};
        mr_wavelet_info in;
        CHECK_OK(mr_wavelet_layout(k->matrix, &o, &in));
        int ok = in.order == k->order && in.taps == 2 * k->order, most = 0;
        int64_t coeffs = 1;
        for (int a = 0; a < 3; a++) {
            ok = ok && in.levels[a] == k->want_levels[a] && in.padded[a] == k->want_padded[a] &&
                 in.approx[a] == k->want_padded[a] >> k->want_levels[a] && in.matrix[a] == k->matrix[a];
            coeffs *= k->want_padded[a];
            most = k->want_levels[a] > most ? k->want_levels[a] : most;
        }
        ok = ok && in.coeffs == coeffs && in.max_levels == most;
        if (!ok)
            fprintf(stderr, "layout %lldx%lldx%lld db%d levels %d: got levels %d %d %d padded %lld %lld %lld\n",
                    (long long)k->matrix[0], (long long)k->matrix[1], (long long)k->matrix[2], k->order, k->levels,
                    in.levels[0], in.levels[1], in.levels[2], (long long)in.padded[0], (long long)in.padded[1],
                    (long long)in.padded[2]);
        CHECK(ok);
    }
    /* the automatic rule keeps the coarsest band at least 2N long */
    for (int64_t n = 2; n <= 300; n++)
        for (int order = 1; order <= MR_WAVELET_MAX_ORDER; order++) {
            const int64_t m[3] = {n, 1, 1};
            const mr_wavelet_opts o = {order, 0};
            mr_wavelet_info in;
            const mr_status st = mr_wavelet_layout(m, &o, &in);
            if (n < 4 * order) {
                CHECK(st == MR_EINVAL);
                continue;
            }
            const int l = in.levels[0];
            if (st != MR_OK || l < 1 || n < (int64_t)(2 * order) << l || n >= (int64_t)(2 * order) << (l + 1) ||
                in.padded[0] % ((int64_t)1 << l) || in.padded[0] < n || in.padded[0] - n >= ((int64_t)1 << l)) {
                fprintf(stderr, "automatic levels: n %lld db%d -> %d levels, padded %lld\n", (long long)n, order, l,
                        (long long)in.padded[0]);
                CHECK(0);
            }
        }
    mr_wavelet_info in;
    const int64_t m[3] = {64, 64, 1}, tiny[3] = {7, 7, 1}, bad[3] = {0, 4, 1};
    const mr_wavelet_opts o0 = {0, 0}, o11 = {11, 0}, neg = {4, -1};
    CHECK(mr_wavelet_layout(m, &o0, &in) == MR_EINVAL);
    CHECK(mr_wavelet_layout(m, &o11, &in) == MR_EINVAL);
    CHECK(mr_wavelet_layout(m, &neg, &in) == MR_EINVAL);
    CHECK(mr_wavelet_layout(tiny, NULL, &in) == MR_EINVAL);
    printf("too small: %s\n", mr_last_error());
    CHECK(strstr(mr_last_error(), "7x7x1") != NULL);
    CHECK(mr_wavelet_layout(bad, NULL, &in) != MR_OK);
}

static void settings(mr_backend *be)
{
    const int64_t m[3] = {40, 24, 1};
    mr_linop *w = NULL, *id = NULL;
    CHECK_OK(mr_linop_wavelet_create(&w, be, m, NULL));
    if (!w)
        return;
    mr_wavelet_info in;
    CHECK_OK(mr_linop_wavelet_info(w, &in));
    CHECK(in.order == 4 && in.levels[0] == 2 && in.levels[1] == 1 && in.padded[0] == 40 && in.padded[1] == 24);
    /* the shift is taken mod P */
    const int64_t s[3] = {-1, 2 * 24 + 5, 7};
    int64_t got[3];
    CHECK_OK(mr_linop_wavelet_set_shift(w, s));
    CHECK_OK(mr_linop_wavelet_get_shift(w, got));
    CHECK(got[0] == 39 && got[1] == 5 && got[2] == 0);
    /* the mask: 0 exactly on the approximation corner [0,10) x [0,12) */
    float *mask = malloc((size_t)in.coeffs * sizeof(float));
    CHECK_OK(mr_linop_wavelet_detail_mask(w, mask));
    int64_t zeros = 0, wrong = 0;
    for (int64_t v = 0; v < in.coeffs; v++) {
        const int64_t x = v % in.padded[0], y = v / in.padded[0];
        const float want = x < 10 && y < 12 ? 0.0f : 1.0f;
        zeros += mask[v] == 0.0f;
        wrong += mask[v] != want;
    }
    CHECK(zeros == 120 && wrong == 0);
    free(mask);
    /* random shifts: reproducible from the seed, within [0, 2^L), covering the range */
    uint64_t s1 = 2024, s2 = 2024;
    int seen[4][2] = {{0}};
    int same = 1, inside = 1;
    for (int i = 0; i < 400; i++) {
        int64_t a[3], b[3];
        mr_wavelet_random_shift(&s1, &in, a);
        mr_wavelet_random_shift(&s2, &in, b);
        same = same && memcmp(a, b, sizeof a) == 0;
        inside = inside && a[0] >= 0 && a[0] < 4 && a[1] >= 0 && a[1] < 2 && a[2] == 0;
        if (inside)
            seen[a[0]][a[1]]++;
    }
    CHECK(same && inside);
    int all = 1;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 2; j++)
            all = all && seen[i][j] > 0;
    CHECK(all);
    /* functions on an operator that is not a wavelet */
    const int64_t dims[4] = {40, 24, 1, 1};
    CHECK_OK(mr_linop_identity(&id, be, dims, 1.0));
    CHECK(mr_linop_wavelet_set_shift(id, s) == MR_EINVAL);
    CHECK(mr_linop_wavelet_info(id, &in) == MR_EINVAL);
    printf("not a wavelet: %s\n", mr_last_error());
    mr_linop_free(id);
    mr_linop_free(w);
    mr_linop *none = (mr_linop *)1;
    const int64_t tiny[3] = {6, 6, 6};
    CHECK(mr_linop_wavelet_create(&none, be, tiny, NULL) == MR_EINVAL && none == NULL);
}

/* The host transform gives the same bits on 1 and 2 threads (every line is filtered by the same code,
 * whichever thread takes it); 64^3 is above the size that goes parallel. */
static void thread_count(void)
{
    const int64_t m[3] = {64, 64, 64}, n = 64 * 64 * 64, shift[3] = {3, 1, 6};
    mr_backend *one = wc_backend(MR_DEVICE_CPU, 1), *two = wc_backend(MR_DEVICE_CPU, 2);
    mr_linop *w1 = NULL, *w2 = NULL;
    if (one && two) {
        CHECK_OK(mr_linop_wavelet_create(&w1, one, m, NULL));
        CHECK_OK(mr_linop_wavelet_create(&w2, two, m, NULL));
    }
    if (w1 && w2) {
        CHECK_OK(mr_linop_wavelet_set_shift(w1, shift));
        CHECK_OK(mr_linop_wavelet_set_shift(w2, shift));
        float *x = test_random_normal(&rng, 2 * n), *a = malloc((size_t)n * 2 * sizeof(float));
        float *b = malloc((size_t)n * 2 * sizeof(float)), *u = malloc((size_t)n * 2 * sizeof(float));
        CHECK_OK(mr_linop_forward(w1, x, a));
        CHECK_OK(mr_linop_forward(w2, x, b));
        CHECK(memcmp(a, b, (size_t)n * 2 * sizeof(float)) == 0);
        CHECK_OK(mr_linop_adjoint(w1, a, u));
        CHECK_OK(mr_linop_adjoint(w2, a, b));
        CHECK(memcmp(u, b, (size_t)n * 2 * sizeof(float)) == 0);
        free(x);
        free(a);
        free(b);
        free(u);
    }
    mr_linop_free(w1);
    mr_linop_free(w2);
    mr_backend_free(one);
    mr_backend_free(two);
}

int main(void)
{
    rng = test_seed();
    mr_backend *be = wc_backend(MR_DEVICE_CPU, 2);
    if (be) {
        filters();
        layouts();
        wc_run_cases(be, NULL, &rng, 0);
        settings(be);
        thread_count();
        if (getenv("MR_TEST_BENCH"))
            wc_bench(be);
    }
    mr_backend_free(be);
    return test_finish("test_wavelet");
}
