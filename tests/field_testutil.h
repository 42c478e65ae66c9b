/* Random problems shared by the field-operator tests (test_field_exact, test_linop_field): a trajectory
 * inside the Nyquist box (tests/test_op_random.h), weights, readout times uniform in 2..15 ms and a
 * smooth field map of about -60..100 Hz (a constant, linear terms and a cosine bump). */
#ifndef MR_FIELD_TESTUTIL_H
#define MR_FIELD_TESTUTIL_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solver/backend.h"
#include "solver/linop_field.h"
#include "test_op_random.h"

typedef struct {
    int64_t matrix[3], m;
    float *traj, *time, *field, *w;
} field_problem;

static inline field_problem field_problem_make(uint64_t *rng, const int64_t matrix[3], int64_t m)
{
    field_problem p;
    memcpy(p.matrix, matrix, sizeof p.matrix);
    p.m = m;
    p.traj = test_random_traj(rng, matrix, m);
    p.w = test_random_weights(rng, m);
    p.time = malloc((size_t)m * sizeof(float));
    const int64_t n = matrix[0] * matrix[1] * matrix[2];
    p.field = malloc((size_t)n * sizeof(float));
    for (int64_t k = 0; k < m; k++)
        p.time[k] = (float)(2e-3 + 13e-3 * test_uniform(rng));
    for (int64_t v = 0; v < n; v++) {
        const double x = (double)(v % matrix[0]) / (double)matrix[0] - 0.5;
        const double y = (double)((v / matrix[0]) % matrix[1]) / (double)matrix[1] - 0.5;
        p.field[v] = (float)(20 + 130 * x + 40 * y + 25 * cos(6 * x * y));
    }
    return p;
}

static inline void field_problem_free(field_problem *p)
{
    free(p->traj);
    free(p->time);
    free(p->field);
    free(p->w);
}

/* A host backend of 2 threads (NULL after a failed CHECK). */
/* The options of the tier comparisons: `model` with 4 segments, the model error measured, the NUFFT tier
 * made in *tier (with *ctx) for the caller to set as o->tier. */
static inline void field_tier_setup(mr_field_tier *tier, mr_field_tier_nufft_ctx *ctx, mr_field_opts *o,
                                    mr_field_model model)
{
    mr_field_tier_nufft(tier, ctx, NULL);
    mr_field_opts_default(o);
    o->model = model;
    o->segments = 4;
    o->check = 1;
}

static inline mr_backend *field_cpu_backend(void)
{
    mr_backend *be = NULL;
    const mr_device_sel cpu = {.kind = MR_DEVICE_CPU, .index = -1};
    CHECK_OK(mr_backend_create(&be, cpu, 2));
    return be;
}

#endif
