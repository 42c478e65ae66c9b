/* The proximal maps of solver/prox.h and the element-wise maps of base/ewise.h on the host table, on
 * fresh random inputs:
 *   - every prox against its closed form computed here in double (error 1e-6 relative to ||v||: float
 *     arithmetic);
 *   - optimality: f(p) + ||p - v||^2 / (2t) <= the same at p + random perturbations (the prox is the
 *     minimiser; slack 1e-6 of f(v) + ||v||^2 / (2t));
 *   - the conjugate prox against Moreau's identity prox_{s (lf)*}(v) = v - s prox_{lf/s}(v/s), computed
 *     from the primal prox (relative 1e-5), and the dual ball it projects onto;
 *   - the penalty values against double sums (relative 1e-9: the table accumulates in double);
 *   - AXPBY (with aliasing), weights, t = 0, and the check of bad sizes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solver/prox.h"
#include "test_op_random.h"
#include "testutil.h"

static uint64_t rng;
static mr_vecops v;
static mr_vecops_cpu_ctx vctx;

/* |z| of group i (G components with stride n) in double */
static double group_norm(const float *z, int64_t n, int64_t g, int64_t i)
{
    double s = 0;
    for (int64_t k = 0; k < g; k++)
        s += (double)z[2 * (k * n + i)] * z[2 * (k * n + i)] + (double)z[2 * (k * n + i) + 1] * z[2 * (k * n + i) + 1];
    return sqrt(s);
}

/* f(z) in double */
static double penalty(const mr_prox *p, const float *z)
{
    double s = 0;
    if (p->kind == MR_PENALTY_L2) {
        for (int64_t i = 0; i < 2 * p->n; i++)
            s += 0.5 * (double)z[i] * z[i];
        return s;
    }
    for (int64_t i = 0; i < p->n; i++)
        s += (p->w ? p->w[i] : 1.0) * group_norm(z, p->n, p->groups, i);
    return s;
}

/* the closed form of prox_{t f}(v) in double */
static void closed_form(const mr_prox *p, double t, const float *in, double *out)
{
    const int64_t n = p->n, g = p->groups;
    for (int64_t i = 0; i < n; i++) {
        double f;
        if (p->kind == MR_PENALTY_L2) {
            f = 1.0 / (1.0 + t);
        } else {
            const double r = group_norm(in, n, g, i), tau = t * (p->w ? p->w[i] : 1.0);
            f = r > tau ? 1.0 - tau / r : 0.0;
        }
        for (int64_t k = 0; k < g; k++)
            for (int c = 0; c < 2; c++)
                out[2 * (k * n + i) + c] = f * in[2 * (k * n + i) + c];
    }
}

static void one_case(mr_penalty kind, int64_t n, int64_t groups, int weighted, double t)
{
    char what[200];
    const int64_t m = n * groups;
    float *w = NULL;
    if (weighted) {
        w = malloc((size_t)n * sizeof *w);
        for (int64_t i = 0; i < n; i++)
            w[i] = i % 7 == 3 ? 0.0f : (float)(0.2 + 2.0 * test_uniform(&rng));
    }
    mr_prox p = {kind, n, groups, w};
    CHECK_OK(mr_prox_check(&p));
    float *in = test_random_normal(&rng, 2 * m), *out = malloc((size_t)m * 2 * sizeof(float));
    double *ref = malloc((size_t)m * 2 * sizeof(double));
    mr_prox_apply(&v, &p, t, in, out);
    closed_form(&p, t, in, ref);
    /* relative to the input: an output near 0 (|v| just above the threshold) has a large relative error */
    double err = 0, vin = 0;
    for (int64_t i = 0; i < 2 * m; i++) {
        err += (out[i] - ref[i]) * (out[i] - ref[i]);
        vin += (double)in[i] * in[i];
    }
    snprintf(what, sizeof what, "prox %s n %lld G %lld%s t %g: ||prox - closed form|| / ||v||", mr_penalty_name(kind),
             (long long)n, (long long)groups, weighted ? " weighted" : "", t);
    CHECK_LE(what, sqrt(err / vin), 1e-6);

    /* optimality: the objective at out is not above its value at perturbed points */
    const double scale = penalty(&p, in) + vin / (2 * t); /* the objective's size at v */
    double best = penalty(&p, out);
    double d2 = 0;
    for (int64_t i = 0; i < 2 * m; i++)
        d2 += ((double)out[i] - in[i]) * ((double)out[i] - in[i]);
    best += d2 / (2 * t);
    float *q = malloc((size_t)m * 2 * sizeof(float));
    double worst = -INFINITY;
    for (int trial = 0; trial < 20; trial++) {
        const double eps = 1e-3 * pow(10.0, -(trial % 4));
        for (int64_t i = 0; i < 2 * m; i++)
            q[i] = out[i] + (float)(eps * test_normal(&rng));
        double e = penalty(&p, q), qd = 0;
        for (int64_t i = 0; i < 2 * m; i++)
            qd += ((double)q[i] - in[i]) * ((double)q[i] - in[i]);
        e += qd / (2 * t);
        worst = fmax(worst, (best - e) / scale);
    }
    snprintf(what, sizeof what, "prox %s n %lld: objective at the prox minus at perturbed points (relative to f(v) + ||v||^2/2t)",
             mr_penalty_name(kind), (long long)n);
    CHECK_LE(what, worst, 1e-6);

    /* the value */
    snprintf(what, sizeof what, "value %s n %lld G %lld: vs double sum", mr_penalty_name(kind), (long long)n,
             (long long)groups);
    const double pv = penalty(&p, in);
    CHECK_LE(what, fabs(mr_prox_value(&v, &p, in) - pv) / pv, 1e-9);

    /* conjugate prox against Moreau, and its ball */
    const double lambda = 0.3 + test_uniform(&rng), s = 0.2 + 3 * test_uniform(&rng);
    float *c = malloc((size_t)m * 2 * sizeof(float)), *vs = calloc((size_t)m * 2, sizeof(float));
    mr_prox_conj_apply(&v, &p, lambda, s, in, c);
    for (int64_t i = 0; i < 2 * m; i++)
        vs[i] = (float)(in[i] / s);
    closed_form(&p, lambda / s, vs, ref);
    for (int64_t i = 0; i < 2 * m; i++)
        ref[i] = in[i] - s * ref[i];
    snprintf(what, sizeof what, "conjugate prox %s n %lld lambda %.3g s %.3g: vs Moreau's identity",
             mr_penalty_name(kind), (long long)n, lambda, s);
    CHECK_LE(what, test_rel_l2(c, ref, 2 * m), 1e-5);
    if (kind != MR_PENALTY_L2) {
        double over = 0;
        for (int64_t i = 0; i < n; i++)
            over = fmax(over, group_norm(c, n, groups, i) - lambda * (w ? w[i] : 1.0) * (1 + 1e-6));
        snprintf(what, sizeof what, "conjugate prox %s: inside the dual ball, largest excess", mr_penalty_name(kind));
        CHECK_LE(what, over, 0.0);
    }
    /* in place and t = 0 */
    memcpy(q, in, (size_t)m * 2 * sizeof(float));
    mr_prox_apply(&v, &p, t, q, q);
    snprintf(what, sizeof what, "prox %s in place", mr_penalty_name(kind));
    CHECK_LE(what, test_rel_l2_ff(q, out, 2 * m), 0.0);
    mr_prox_apply(&v, &p, 0.0, in, q);
    snprintf(what, sizeof what, "prox %s with t = 0 is the identity", mr_penalty_name(kind));
    CHECK_LE(what, test_rel_l2_ff(q, in, 2 * m), 0.0);
    free(w);
    free(in);
    free(out);
    free(ref);
    free(q);
    free(c);
    free(vs);
}

static void axpby(void)
{
    const int64_t n = 70001; /* above the parallel threshold */
    float *x = test_random_normal(&rng, 2 * n), *y = test_random_normal(&rng, 2 * n);
    float *o = malloc((size_t)n * 2 * sizeof(float));
    double *ref = malloc((size_t)n * 2 * sizeof(double));
    for (int64_t i = 0; i < 2 * n; i++)
        ref[i] = 0.75 * x[i] - 1.5 * y[i];
    mr_vec_axpby(&v, n, o, 0.75, x, -1.5, y);
    CHECK_LE("axpby vs double", test_rel_l2(o, ref, 2 * n), 1e-7);
    mr_vec_axpby(&v, n, y, 0.75, x, -1.5, y); /* out aliases y */
    CHECK_LE("axpby into y vs double", test_rel_l2(y, ref, 2 * n), 1e-7);
    for (int64_t i = 0; i < 2 * n; i++)
        ref[i] = -2.0 * x[i];
    mr_vec_scale(&v, n, x, -2.0);
    CHECK_LE("scale vs double", test_rel_l2(x, ref, 2 * n), 0.0);
    free(x);
    free(y);
    free(o);
    free(ref);
}

int main(void)
{
    rng = test_seed();
    mr_vecops_cpu_init(&v, &vctx, 2);
    const int64_t sizes[] = {1, 5, 4096, 70001};
    for (int s = 0; s < 4; s++)
        for (int weighted = 0; weighted < 2; weighted++) {
            const double t = 0.05 + 2.0 * test_uniform(&rng);
            one_case(MR_PENALTY_L2, sizes[s], 1, weighted, t);
            one_case(MR_PENALTY_L1, sizes[s], 1, weighted, t);
            one_case(MR_PENALTY_L12, sizes[s], 1 + s % 3, weighted, t);
            one_case(MR_PENALTY_L12, sizes[s], 3, weighted, t);
        }
    axpby();
    /* bad fields */
    mr_prox bad = {MR_PENALTY_L1, 10, 2, NULL};
    CHECK(mr_prox_check(&bad) == MR_EINVAL);
    bad.kind = MR_PENALTY_L12;
    bad.n = 0;
    CHECK(mr_prox_check(&bad) == MR_EINVAL);
    bad.kind = (mr_penalty)7;
    bad.n = 3;
    CHECK(mr_prox_check(&bad) == MR_EINVAL);
    return test_finish("test_prox");
}
