/* The NUFFT operator (mr_linop_nufft_create) against the exact NUDFT operator on the host, and the
 * encoding factory (solver/encoding.h):
 *   - forward, adjoint and normal of the NUFFT operator vs the exact one (relative L2 <= OP_FACTOR x tol
 *     plus the exact float32 kernels' own error), 2D and 3D, several coils, weights, box and Dirac bases;
 *   - adjointness and normal = adjoint(forward) (linop_check.h);
 *   - Q: type 1 of w Phi^2 / N^2 onto the 2N grid vs the float64 direct sum, 3D, tolerances 1e-3..1e-12;
 *   - the Q store sees the NUFFT's own key (a second operator takes Q from it, the same bits);
 *   - the factory: the model table, auto's choice and reason, the check's measured errors, and a problem
 *     beyond the memory limit refused with the bytes needed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "linop_check.h"
#include "solver/encoding.h"
#include "solver/nudft.h"
#include "solver/nufft.h"
#include "testutil.h"

/* The operator's error bound over its tolerance (docs/NUFFT.md), and the exact float32 kernels' own error. */
#define OP_FACTOR 10.0
#define EXACT_ERR 2e-6

static uint64_t rng;

/* out = op(in) on host arrays through the backend (linop_check.h). */
static float *apply(mr_linop *op, lc_fn f, const float *in, int64_t nin, int64_t nout)
{
    float *out = malloc((size_t)nout * 2 * sizeof(float));
    CHECK_OK(lc_apply(op, f, in, nin, out, nout));
    return out;
}

static void versus_exact(mr_backend *be, const int64_t matrix[3], int64_t m, int64_t nc, mr_basis basis, double tol)
{
    float *traj = test_random_traj(&rng, matrix, m), *w = test_random_weights(&rng, m);
    mr_nudft_opts eo;
    mr_nudft_opts_default(&eo);
    eo.basis = basis;
    mr_nufft_op_opts no;
    mr_nufft_op_opts_default(&no);
    no.basis = basis;
    no.tol = tol;
    mr_linop *ex = NULL, *nu = NULL;
    mr_nudft_info ni;
    mr_nufft_op_info nn;
    CHECK_OK(mr_linop_nudft_create(&ex, be, matrix, traj, m, w, nc, &eo, NULL));
    CHECK_OK(mr_linop_nufft_create(&nu, be, matrix, traj, m, w, nc, &no, &ni, &nn));
    if (ex && nu) {
        const int64_t nd = mr_linop_dom_size(nu), ncod = mr_linop_cod_size(nu);
        float *x = test_random_normal(&rng, 2 * nd), *y = test_random_normal(&rng, 2 * ncod);
        float *f1 = apply(ex, mr_linop_forward, x, nd, ncod), *f2 = apply(nu, mr_linop_forward, x, nd, ncod);
        float *a1 = apply(ex, mr_linop_adjoint, y, ncod, nd), *a2 = apply(nu, mr_linop_adjoint, y, ncod, nd);
        float *n1 = apply(ex, mr_linop_normal, x, nd, nd), *n2 = apply(nu, mr_linop_normal, x, nd, nd);
        const double bound = OP_FACTOR * tol + EXACT_ERR;
        char what[200];
        snprintf(what, sizeof what, "%lldx%lldx%lld M %lld C %lld %s tol %.0e (%s): forward vs exact",
                 (long long)matrix[0], (long long)matrix[1], (long long)matrix[2], (long long)m, (long long)nc,
                 basis == MR_BASIS_BOX ? "box" : "dirac", tol, ni.engine_name);
        CHECK_LE(what, test_rel_l2_ff(f2, f1, 2 * ncod), bound);
        snprintf(what, sizeof what, "%lldx%lldx%lld tol %.0e: adjoint vs exact", (long long)matrix[0],
                 (long long)matrix[1], (long long)matrix[2], tol);
        CHECK_LE(what, test_rel_l2_ff(a2, a1, 2 * nd), bound);
        snprintf(what, sizeof what, "%lldx%lldx%lld tol %.0e (Q: width %d, sigma %.3g): normal vs exact",
                 (long long)matrix[0], (long long)matrix[1], (long long)matrix[2], tol, nn.width[1], nn.upsample[1]);
        CHECK_LE(what, test_rel_l2_ff(n2, n1, 2 * nd), bound);
        CHECK(strcmp(ni.q_source, "computed") == 0);
        CHECK(nn.host_bytes > 0 && nn.device_bytes == 0);
        snprintf(what, sizeof what, "nufft operator %lldx%lldx%lld tol %.0e", (long long)matrix[0],
                 (long long)matrix[1], (long long)matrix[2], tol);
        lc_check(what, nu, &rng, tol < 1e-6 ? 1e-6 : 1e-5, fmax(1e-4, OP_FACTOR * tol));
        free(x);
        free(y);
        free(f1);
        free(f2);
        free(a1);
        free(a2);
        free(n1);
        free(n2);
    }
    mr_linop_free(ex);
    mr_linop_free(nu);
    free(traj);
    free(w);
}

/* Q of the NUFFT (type 1 of the operator's Q weights on the 2N grid) against the float64 sum. */
static void q_versus_exact(void)
{
    const int64_t matrix[3] = {10, 12, 9}, m = 1500;
    const mr_grid gq = mr_grid_q(matrix);
    const int64_t nq = mr_grid_size(&gq);
    float *traj = test_random_traj(&rng, matrix, m), *w = test_random_weights(&rng, m);
    float *qw = malloc((size_t)m * sizeof *qw);
    double *qwd = malloc((size_t)m * sizeof *qwd), *ref = malloc((size_t)nq * 2 * sizeof *ref);
    double *q = malloc((size_t)nq * 2 * sizeof *q);
    const double inv_n = 1.0 / (double)(matrix[0] * matrix[1] * matrix[2]);
    for (int64_t k = 0; k < m; k++) {
        double phi = 1.0;
        for (int a = 0; a < 3; a++) {
            const double x = M_PI * traj[3 * k + a] / (double)matrix[a];
            phi *= x == 0 ? 1.0 : sin(x) / x;
        }
        qw[k] = (float)(w[k] * phi * phi * inv_n * inv_n);
        qwd[k] = qw[k];
    }
    mr_nudft_adjoint_ref(&gq, traj, qw, 1, m, ref);
    static const double tols[] = {1e-3, 1e-6, 1e-9, 1e-12};
    for (int t = 0; t < 4; t++) {
        mr_nufft_opts o;
        mr_nufft_opts_default(&o);
        o.tol = tols[t];
        mr_nufft *p = NULL;
        CHECK_OK(mr_nufft_create(&p, &gq, traj, m, &o));
        if (!p)
            continue;
        CHECK_OK(mr_nufft_type1_f64(p, 1, qwd, 1, q));
        char what[128];
        snprintf(what, sizeof what, "Q 20x24x18 (3D, real weights) tol %.0e: relative L2 vs float64 direct sum", tols[t]);
        CHECK_LE(what, test_rel_l2_dd(q, ref, 2 * nq), OP_FACTOR * fmax(tols[t], mr_nufft_get_params(p)->bound));
        mr_nufft_destroy(p);
    }
    free(traj);
    free(w);
    free(qw);
    free(qwd);
    free(ref);
    free(q);
}

/* A store in memory: one entry. */
typedef struct {
    mr_q_store base;
    mr_q_key key;
    float *q;
    int64_t nq;
    int loads, hits, saves;
} mem_store;

static int mem_load(mr_q_store *s, const mr_q_key *key, float *q)
{
    mem_store *ms = (mem_store *)s;
    ms->loads++;
    if (!ms->q || strcmp(ms->key.engine, key->engine) != 0 || ms->key.m != key->m)
        return 0;
    memcpy(q, ms->q, (size_t)ms->nq * 2 * sizeof(float));
    ms->hits++;
    return 1;
}

static void mem_save(mr_q_store *s, const mr_q_key *key, float *q)
{
    mem_store *ms = (mem_store *)s;
    ms->saves++;
    free(ms->q);
    ms->q = q;
    ms->key = *key;
}

static void q_store(mr_backend *be)
{
    const int64_t matrix[3] = {16, 14, 1}, m = 600;
    float *traj = test_random_traj(&rng, matrix, m);
    mem_store ms;
    memset(&ms, 0, sizeof ms);
    ms.base.load = mem_load;
    ms.base.save = mem_save;
    const mr_grid gq = mr_grid_q(matrix);
    ms.nq = mr_grid_size(&gq);
    mr_nufft_op_opts no;
    mr_nufft_op_opts_default(&no);
    no.q_store = &ms.base;
    mr_linop *a = NULL, *b = NULL;
    mr_nudft_info ia, ib;
    CHECK_OK(mr_linop_nufft_create(&a, be, matrix, traj, m, NULL, 1, &no, &ia, NULL));
    CHECK_OK(mr_linop_nufft_create(&b, be, matrix, traj, m, NULL, 1, &no, &ib, NULL));
    printf("Q store: first %s, second %s; key engine '%s'\n", ia.q_source, ib.q_source, ms.key.engine);
    CHECK(strcmp(ia.q_source, "computed, stored") == 0);
    CHECK(strcmp(ib.q_source, "store") == 0);
    CHECK(strstr(ms.key.engine, "nufft") != NULL);
    if (a && b) {
        const int64_t nd = mr_linop_dom_size(a);
        float *x = test_random_normal(&rng, 2 * nd);
        float *na = apply(a, mr_linop_normal, x, nd, nd), *nb = apply(b, mr_linop_normal, x, nd, nd);
        CHECK(memcmp(na, nb, (size_t)nd * 2 * sizeof(float)) == 0);
        free(x);
        free(na);
        free(nb);
    }
    mr_linop_free(a);
    mr_linop_free(b);
    free(ms.q);
    free(traj);
}

static void factory(mr_backend *be)
{
    for (int i = 0; i < MR_MODEL_COUNT; i++) {
        mr_model m;
        CHECK_OK(mr_model_parse(mr_model_name((mr_model)i), &m));
        CHECK(m == (mr_model)i);
        CHECK(strlen(mr_model_help((mr_model)i)) > 0);
    }
    mr_model mm;
    CHECK(mr_model_parse("fast", &mm) == MR_EINVAL);
    printf("bad model: %s\n", mr_last_error());
    CHECK(strstr(mr_last_error(), "'fast' is not auto, exact or nufft") != NULL);

    const int64_t matrix[3] = {24, 20, 1}, m = 1500;
    float *traj = test_random_traj(&rng, matrix, m);
    static const mr_model models[] = {MR_MODEL_EXACT, MR_MODEL_NUFFT, MR_MODEL_AUTO};
    for (int i = 0; i < 3; i++) {
        mr_encoding_opts o;
        mr_encoding_opts_default(&o);
        o.model = models[i];
        o.check = 1;
        mr_linop *e = NULL;
        mr_encoding_info info;
        CHECK_OK(mr_encoding_create(&e, be, matrix, traj, m, NULL, 2, &o, &info));
        printf("model %s: %s\n", mr_model_name(models[i]), info.description);
        CHECK(info.model == MR_MODEL_EXACT || info.model == MR_MODEL_NUFFT);
        if (models[i] != MR_MODEL_AUTO)
            CHECK(info.model == models[i]);
        CHECK(info.est_seconds[MR_MODEL_EXACT] > 0 && info.est_seconds[MR_MODEL_NUFFT] > 0);
        CHECK(info.check_voxels >= 4 && info.check_samples >= 4);
        char what[96];
        snprintf(what, sizeof what, "factory %s: measured error of F^H", mr_model_name(info.model));
        CHECK_LE(what, info.error_adjoint, OP_FACTOR * o.tol + EXACT_ERR);
        snprintf(what, sizeof what, "factory %s: measured error of F", mr_model_name(info.model));
        CHECK_LE(what, info.error_forward, OP_FACTOR * o.tol + EXACT_ERR);
        if (e) {
            CHECK(mr_linop_dom_size(e) == 24 * 20 * 2 && mr_linop_cod_size(e) == m * 2);
            lc_check("factory operator", e, &rng, 1e-5, 1e-4);
        }
        mr_linop_free(e);
    }
    /* a tighter tolerance than the float32 exact sums reach: auto takes the NUFFT in float64 */
    mr_encoding_opts o;
    mr_encoding_opts_default(&o);
    o.tol = 1e-10;
    mr_encoding_info info;
    CHECK_OK(mr_encoding_choose(be, matrix, m, 1, &o, &info));
    printf("tol 1e-10: %s (%s)\n", mr_model_name(info.model), info.why);
    CHECK(info.model == MR_MODEL_NUFFT);
    /* beyond the memory limit: refused with the bytes needed, for each model */
    for (int i = 0; i < 3; i++) {
        mr_encoding_opts_default(&o);
        o.model = models[i];
        o.memory_limit = 4096;
        mr_linop *e = NULL;
        CHECK(mr_encoding_create(&e, be, matrix, traj, m, NULL, 1, &o, &info) == MR_ENOMEM);
        printf("refused (%s): %s\n", mr_model_name(models[i]), mr_last_error());
        CHECK(strstr(mr_last_error(), "needs") != NULL && strstr(mr_last_error(), "GB") != NULL);
        CHECK(e == NULL);
    }
    free(traj);
}

int main(void)
{
    rng = test_seed();
    mr_backend *be = NULL;
    const mr_device_sel cpu = {MR_DEVICE_CPU, -1, 0, 0, {0}};
    CHECK_OK(mr_backend_create(&be, cpu, 2));
    if (!be)
        return test_finish("test_nufft_op");
    const int64_t m2[3] = {32, 28, 1}, m3[3] = {12, 10, 14};
    versus_exact(be, m2, 2000, 2, MR_BASIS_BOX, 1e-6);
    versus_exact(be, m2, 2000, 1, MR_BASIS_DIRAC, 1e-3);
    versus_exact(be, m3, 2500, 3, MR_BASIS_DIRAC, 1e-6);
    versus_exact(be, m3, 2500, 1, MR_BASIS_BOX, 1e-9);
    q_versus_exact();
    q_store(be);
    factory(be);
    mr_backend_free(be);
    return test_finish("test_nufft_op");
}
