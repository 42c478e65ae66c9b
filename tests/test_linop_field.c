/* The segmented field-corrected operators of solver/linop_field.h on the host (the exact one:
 * test_field_exact):
 *  - segmented (frequency and time): adjoint test (1e-5), Toeplitz normal against adjoint(forward) (1e-4,
 *    as test_toeplitz); the measured error against the exact model decreases as segments are added and the
 *    interpolators' bound follows; with the segment count chosen for a tolerance both the bound and the
 *    measured error meet it; the chooser needs more segments for more cycles of field phase;
 *  - composition with SENSE maps and a regularised normal system, CG on it;
 *  - the NUFFT tier against the exact tier (same model and segments, 2D and 3D): forward, adjoint and
 *    normal within 1e-5, its adjoint test, its measured model error within the bound;
 *  - refusals name what is missing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "field_testutil.h"
#include "linop_check.h"
#include "solver/cg.h"
#include "solver/linop_field.h"

static uint64_t rng;

static void segmented(mr_backend *be, mr_field_model model)
{
    const int64_t matrix[3] = {24, 20, 1};
    field_problem p = field_problem_make(&rng, matrix, 900);
    const char *name = mr_field_model_name(model);
    char label[200];
    mr_field_opts o;
    mr_field_opts_default(&o);
    o.model = model;
    o.check = 1;
    o.basis = MR_BASIS_DIRAC;
    double prev = INFINITY, prev_bound = INFINITY;
    for (int L = 1; L <= 7; L++) {
        o.segments = L;
        mr_field_info info;
        mr_linop *e = NULL;
        CHECK_OK(mr_linop_field_create(&e, be, matrix, p.traj, p.time, p.field, p.m, p.w, 1, &o, &info));
        if (!e)
            continue;
        printf("%s segmentation, %d segments: bound %.3e (rms %.3e), measured %.3e, %lld kernels\n", name, L,
               info.bound_max, info.bound_rms, info.measured, (long long)info.kernels);
        CHECK(info.segments == L && info.kernels == (model == MR_FIELD_MODEL_FREQUENCY ? L : L * (L + 1) / 2));
        snprintf(label, sizeof label, "%s, %d segments: measured error <= previous (L-1) error x 1.05", name, L);
        CHECK_LE(label, info.measured, 1.05 * prev);
        snprintf(label, sizeof label, "%s, %d segments: bound <= previous bound x 1.05", name, L);
        CHECK_LE(label, info.bound_max, 1.05 * prev_bound);
        snprintf(label, sizeof label, "%s, %d segments: measured error <= the bound", name, L);
        CHECK_LE(label, info.measured, info.bound_max * 1.01 + 1e-6);
        prev = info.measured;
        prev_bound = info.bound_max;
        if (L == 3 || L == 7) {
            snprintf(label, sizeof label, "%s, %d segments, 1 coil", name, L);
            lc_check(label, e, &rng, 1e-5, 1e-4);
        }
        mr_linop_free(e);
    }
    CHECK_LE("7 segments: measured error", prev, 1e-3);
    mr_linop *bad = NULL;
    o.tol = 0.9;
    CHECK(mr_linop_field_create(&bad, be, matrix, p.traj, p.time, p.field, p.m, NULL, 1, &o, NULL) == MR_EINVAL && !bad);
    /* the segment count from a tolerance */
    static const double tols[] = {1e-2, 1e-3, 1e-5};
    for (int i = 0; i < 3; i++) {
        o.segments = 0;
        o.tol = tols[i];
        mr_field_info info;
        mr_linop *e = NULL;
        CHECK_OK(mr_linop_field_create(&e, be, matrix, p.traj, p.time, p.field, p.m, p.w, 2, &o, &info));
        printf("%s, tol %g: %d segments, bound %.3e, measured %.3e\n", name, tols[i], info.segments, info.bound_max,
               info.measured);
        snprintf(label, sizeof label, "%s, tol %g: bound", name, tols[i]);
        CHECK_LE(label, info.bound_max, tols[i]);
        snprintf(label, sizeof label, "%s, tol %g: measured error against the exact model", name, tols[i]);
        CHECK_LE(label, info.measured, tols[i]);
        if (e && i == 1) {
            snprintf(label, sizeof label, "%s, tol 1e-3, 2 coils", name);
            lc_check(label, e, &rng, 1e-5, 1e-4);
        }
        mr_linop_free(e);
    }
    field_problem_free(&p);
}

/* The NUFFT tier (mr_field_tier_nufft) against the exact tier, same model and segments: the same
 * operator to the NUFFT's tolerance (1e-6, float32), its own adjoint test, and the measured model error
 * within the interpolators' bound. */
static void nufft_tier(mr_backend *be, mr_field_model model, const int64_t matrix[3], int64_t m)
{
    field_problem p = field_problem_make(&rng, matrix, m);
    mr_field_tier tier;
    mr_field_tier_nufft_ctx tctx;
    mr_field_opts o;
    field_tier_setup(&tier, &tctx, &o, model);
    o.basis = MR_BASIS_DIRAC;
    mr_linop *ex = NULL, *nu = NULL;
    mr_field_info ie, in;
    CHECK_OK(mr_linop_field_create(&ex, be, matrix, p.traj, p.time, p.field, p.m, p.w, 2, &o, &ie));
    o.tier = &tier;
    CHECK_OK(mr_linop_field_create(&nu, be, matrix, p.traj, p.time, p.field, p.m, p.w, 2, &o, &in));
    char label[200];
    snprintf(label, sizeof label, "%s, %lldx%lldx%lld, 4 segments, 2 coils, nufft tier", mr_field_model_name(model),
             (long long)matrix[0], (long long)matrix[1], (long long)matrix[2]);
    if (ex && nu) {
        printf("%s: tier '%s', engine %s, measured %.3e (exact tier %.3e), bound %.3e\n", label, in.tier, in.engine,
               in.measured, ie.measured, in.bound_max);
        CHECK(!strcmp(in.tier, "nufft"));
        lc_agree_pair(label, "NUFFT tier vs exact tier", nu, ex, &rng, 1e-5, 1e-5);
        lc_check(label, nu, &rng, 1e-5, 1e-4);
        char what[260];
        snprintf(what, sizeof what, "%s: measured error against the exact model <= the bound", label);
        CHECK_LE(what, in.measured, in.bound_max * 1.01 + 1e-5);
    }
    mr_linop_free(ex);
    mr_linop_free(nu);
    field_problem_free(&p);
}

/* SENSE maps chained with the fast model, a regularised normal system, CG */
static void composition(mr_backend *be)
{
    const int64_t matrix[3] = {16, 16, 1}, n = 256, nc = 3;
    field_problem p = field_problem_make(&rng, matrix, 800);
    float *maps = test_random_normal(&rng, 2 * n * nc);
    mr_linop *s = NULL, *e = NULL, *se = NULL, *fd = NULL, *sys = NULL;
    mr_field_opts o;
    mr_field_opts_default(&o);
    CHECK_OK(mr_linop_sens_create(&s, be, matrix, nc, maps));
    CHECK_OK(mr_linop_field_create(&e, be, matrix, p.traj, p.time, p.field, p.m, p.w, nc, &o, NULL));
    if (s && e && mr_linop_chain(&se, s, e) == MR_OK) {
        lc_check("SENSE maps then the frequency-segmented model", se, &rng, 1e-5, 1e-4);
        CHECK_OK(mr_linop_fd_create(&fd, be, matrix));
        CHECK_OK(mr_linop_normal_system(&sys, se, fd, 1e-3));
        if (sys) {
            float *b = test_random_normal(&rng, 2 * n), *x = calloc((size_t)n * 2, sizeof(float));
            mr_cg_opts co;
            mr_cg_opts_default(&co);
            co.iters = 30;
            mr_cg_result res;
            CHECK_OK(mr_cg_solve_linop(sys, b, x, &co, &res));
            CHECK_LE("CG on the field-corrected SENSE system: relative residual after 30 iterations", res.final_rel_resid,
                     1e-2);
            mr_cg_result_free(&res);
            free(b);
            free(x);
        }
    }
    mr_linop_free(sys);
    mr_linop_free(fd);
    mr_linop_free(se);
    mr_linop_free(e);
    mr_linop_free(s);
    free(maps);
    field_problem_free(&p);
}

static void chooser(void)
{
    int prev = 0;
    for (int i = 0; i < 4; i++) {
        const double range = 50.0 * (1 << i); /* Hz, over a 10 ms readout: 0.5 .. 4 cycles */
        int lf = 0, lt = 0;
        double bf = 0, bt = 0;
        CHECK_OK(mr_field_segments_for(MR_FIELD_MODEL_FREQUENCY, -range / 2, range / 2, 0.0, 0.01, 1e-3, &lf, &bf, NULL));
        CHECK_OK(mr_field_segments_for(MR_FIELD_MODEL_TIME, -range / 2, range / 2, 0.0, 0.01, 1e-3, &lt, &bt, NULL));
        printf("%.0f Hz x 10 ms (%.1f cycles), tol 1e-3: frequency %d segments (bound %.2e), time %d (bound %.2e)\n",
               range, range * 0.01, lf, bf, lt, bt);
        CHECK(lf >= prev && bf <= 1e-3 && bt <= 1e-3 && lf == lt);
        prev = lf;
    }
    /* a constant field or one readout time: one segment, exactly */
    int l = 0;
    double b = 1;
    CHECK_OK(mr_field_segments_for(MR_FIELD_MODEL_FREQUENCY, 40, 40, 0.0, 0.02, 1e-6, &l, &b, NULL));
    CHECK(l == 1 && b <= 1e-6);
    CHECK(mr_field_segments_for(MR_FIELD_MODEL_FREQUENCY, -5000, 5000, 0, 0.05, 1e-6, &l, NULL, NULL) == MR_EINVAL);
    printf("500 cycles -> %s\n", mr_last_error());
}

int main(void)
{
    rng = test_seed();
    mr_backend *be = field_cpu_backend();
    if (!be)
        return test_finish("test_linop_field");
    segmented(be, MR_FIELD_MODEL_FREQUENCY);
    segmented(be, MR_FIELD_MODEL_TIME);
    composition(be);
    const int64_t m2[3] = {24, 20, 1}, m3[3] = {12, 10, 8};
    nufft_tier(be, MR_FIELD_MODEL_FREQUENCY, m2, 900);
    nufft_tier(be, MR_FIELD_MODEL_TIME, m2, 900);
    nufft_tier(be, MR_FIELD_MODEL_FREQUENCY, m3, 1500);
    nufft_tier(be, MR_FIELD_MODEL_TIME, m3, 1500);
    chooser();
    mr_backend_free(be);
    return test_finish("test_linop_field");
}
