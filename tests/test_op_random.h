/* Random inputs shared by the operator tests (test_nudft, test_op_adjoint, test_toeplitz): a
 * trajectory uniform inside the Nyquist box [-N_a/2, N_a/2) (k_a = 0 on axes with N_a = 1),
 * weights in [0.1, 1.1), standard normal values. Drawn from the tests' seeded generator. And a
 * float-vs-float relative L2 (testutil's test_rel_l2 compares float against double). */
#ifndef MR_TEST_OP_RANDOM_H
#define MR_TEST_OP_RANDOM_H

#include <math.h>
#include <stdlib.h>

#include "base/grid.h"
#include "testutil.h"

static inline float *test_random_traj(uint64_t *rng, const int64_t matrix[3], int64_t m)
{
    float *t = malloc((size_t)m * 3 * sizeof(float));
    for (int64_t k = 0; k < m; k++)
        for (int a = 0; a < 3; a++)
            t[3 * k + a] = matrix[a] > 1 ? (float)((test_uniform(rng) - 0.5) * (double)matrix[a]) : 0.0f;
    return t;
}

/* Uniform in [-scale_a/2 - margin, scale_a/2 + margin) on the axes of grid g with n_a > 1, else 0. */
static inline float *test_random_traj_grid(uint64_t *rng, const mr_grid *g, int64_t m, double margin)
{
    float *t = malloc((size_t)m * 3 * sizeof(float));
    for (int64_t k = 0; k < m; k++)
        for (int a = 0; a < 3; a++)
            t[3 * k + a] =
                g->n[a] > 1 ? (float)((test_uniform(rng) - 0.5) * ((double)g->scale[a] + 2 * margin)) : 0.0f;
    return t;
}

static inline float *test_random_weights(uint64_t *rng, int64_t m)
{
    float *w = malloc((size_t)m * sizeof(float));
    for (int64_t k = 0; k < m; k++)
        w[k] = (float)(0.1 + test_uniform(rng));
    return w;
}

static inline float *test_random_normal(uint64_t *rng, int64_t n)
{
    float *v = malloc((size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)test_normal(rng);
    return v;
}

/* Relative L2 ||a - b|| / ||b|| of two float arrays of n values. */
static inline double test_rel_l2_ff(const float *a, const float *b, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        den += (double)b[i] * b[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

#endif
