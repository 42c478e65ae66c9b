/* Toeplitz normal (Q + FFTs, fast_normal = 1) against F^H (W (F x)) computed with the exact kernels
 * (fast_normal = 0): relative L2 <= 1e-4 on random x, 2D and 3D, odd and even sizes, with weights,
 * box and dirac bases; in-place application (x == y) gives the same result; one thread gives the
 * same bits as the default thread count (OMP_NUM_THREADS=2 under ctest). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solver/op.h"
#include "test_op_random.h"
#include "testutil.h"

static uint64_t rng;

static void check(const char *what, const int64_t matrix[3], int64_t m, mr_basis basis, int weighted)
{
    const int64_t nv = matrix[0] * matrix[1] * matrix[2];
    float *traj = test_random_traj(&rng, matrix, m), *w = test_random_weights(&rng, m);
    float *x = test_random_normal(&rng, 2 * nv);
    float *yt = malloc((size_t)nv * 2 * sizeof(float)), *ys = malloc((size_t)nv * 2 * sizeof(float));
    mr_op_opts o;
    mr_op_opts_default(&o);
    o.basis = basis;
    o.device = MR_DEVICE_CPU;
    mr_op *fast = NULL, *slow = NULL;
    CHECK_OK(mr_op_create(&fast, matrix, traj, m, weighted ? w : NULL, &o));
    o.fast_normal = 0;
    CHECK_OK(mr_op_create(&slow, matrix, traj, m, weighted ? w : NULL, &o));
    if (fast && slow) {
        char label[200];
        CHECK_OK(mr_op_normal(fast, x, yt));
        CHECK_OK(mr_op_normal(slow, x, ys));
        snprintf(label, sizeof label, "%s: Toeplitz normal vs F^H W F x, rel L2", what);
        CHECK_LE(label, test_rel_l2_ff(yt, ys, 2 * nv), 1e-4);
        CHECK_OK(mr_op_normal(fast, x, x)); /* in place, and a second application reuses the buffers */
        snprintf(label, sizeof label, "%s: in-place second application vs first, rel L2", what);
        CHECK_LE(label, test_rel_l2_ff(x, yt, 2 * nv), 0.0);
        mr_op_info info;
        mr_op_get_info(fast, &info);
        CHECK(info.q_pairs > 0 && info.q_seconds >= 0.0);
        /* the same bits with one thread (Q, the kernel spectrum and the passes do not depend on it) */
        mr_op *one = NULL;
        o.fast_normal = 1;
        o.threads = 1;
        CHECK_OK(mr_op_create(&one, matrix, traj, m, weighted ? w : NULL, &o));
        if (one) {
            CHECK_OK(mr_op_normal(one, yt, ys));
            CHECK_OK(mr_op_normal(fast, yt, x));
            snprintf(label, sizeof label, "%s: 1 thread vs default threads, max |difference|", what);
            double worst = 0.0;
            for (int64_t i = 0; i < 2 * nv; i++)
                worst = fmax(worst, fabs((double)x[i] - ys[i]));
            CHECK_LE(label, worst, 0.0);
        }
        mr_op_destroy(one);
    }
    mr_op_destroy(fast);
    mr_op_destroy(slow);
    free(traj);
    free(w);
    free(x);
    free(yt);
    free(ys);
}

int main(void)
{
    rng = test_seed();
    const int64_t m2[3] = {31, 17, 1}, m3[3] = {13, 7, 5}, me[3] = {32, 24, 1}, m3e[3] = {8, 6, 4};
    check("2D 31x17 box weighted", m2, 1237, MR_BASIS_BOX, 1);
    check("2D 31x17 dirac unweighted", m2, 1237, MR_BASIS_DIRAC, 0);
    check("2D 32x24 box weighted", me, 1500, MR_BASIS_BOX, 1);
    check("3D 13x7x5 box weighted", m3, 517, MR_BASIS_BOX, 1);
    check("3D 13x7x5 dirac unweighted", m3, 517, MR_BASIS_DIRAC, 0);
    check("3D 8x6x4 box weighted", m3e, 700, MR_BASIS_BOX, 1);
    const int64_t thin[3] = {1, 9, 1}, flat[3] = {6, 1, 5};
    check("1x9 (axis of 1) box weighted", thin, 200, MR_BASIS_BOX, 1);
    check("6x1x5 (middle axis of 1) dirac weighted", flat, 300, MR_BASIS_DIRAC, 1);
    const int64_t m3l[3] = {32, 32, 32}; /* 2^18 points on the 2N grid: the multi-threaded passes */
    check("3D 32x32x32 box weighted", m3l, 1500, MR_BASIS_BOX, 1);
    return test_finish("test_toeplitz");
}
