/* The GPU NUFFT (gpu/nufft.h) and the NUFFT operator on a GPU backend, against float64 direct sums and the
 * CPU NUFFT (solver/nufft.h):
 *   - type 1 (complex and real weights) and type 2 in 1D, 2D, 3D, image and Q grids, float32 and float64
 *     plans, tolerances 1e-3..1e-12: relative L2 vs the float64 sums <= ERR_FACTOR x max(tol, bound), and
 *     vs the CPU plan of the same parameters;
 *   - several coils in one call, adjointness (float64);
 *   - the operator (mr_linop_nufft_create) on the GPU vs the same on the host: forward, adjoint, normal;
 *     the adjoint and normal checks of linop_check.h;
 *   - the exact operator's sums cut into sample chunks (mr_nudft_opts.memory_limit) vs uncut;
 *   - the factory on the GPU (auto's reason, the check), and problems too large for the GPU refused with
 *     the bytes needed (a plan, the factory), never an out-of-memory crash.
 * Skips (77) without a usable GPU. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"
#include "gpu/gpu_ops.h"
#include "gpu/nufft.h"
#include "gpu/sums.h"
#include "linop_check.h"
#include "solver/encoding.h"
#include "solver/nudft.h"
#include "solver/nufft.h"
#include "testutil.h"

#define ERR_FACTOR 10.0

static uint64_t rng;

/* How many of n values of `size` bytes differ in their bits between a and b. */
static int64_t values_differ(const void *a, const void *b, int64_t n, size_t size)
{
    int64_t d = 0;
    for (int64_t i = 0; i < n; i++)
        d += memcmp((const char *)a + i * size, (const char *)b + i * size, size) != 0;
    return d;
}

/* A GPU plan with the parameters the CPU plan p chose; scratch_limit: mr_gpu_nufft_kernel's (0: the default). */
static int64_t scratch_limit;
static mr_status gpu_plan_like(mr_gpu_ctx *c, const mr_grid *g, const float *traj, int64_t m, const mr_nufft_params *p,
                               mr_gpu_nufft **out)
{
    mr_gpu_nufft_kernel k;
    memset(&k, 0, sizeof k);
    k.f64 = p->precision == MR_NUFFT_PREC_F64;
    k.scratch_limit = scratch_limit;
    k.width = p->width;
    k.degree = p->degree;
    k.coef = &p->coef[0][0];
    double *dec[3];
    for (int a = 0; a < 3; a++) {
        k.fine[a] = p->fine[a];
        dec[a] = malloc((size_t)g->n[a] * sizeof(double));
        mr_nufft_deconv(p, g, a, dec[a]);
        k.deconv[a] = dec[a];
    }
    mr_status st = mr_gpu_nufft_create(out, c, g, traj, m, &k);
    for (int a = 0; a < 3; a++)
        free(dec[a]);
    return st;
}

/* One problem: GPU type 1 (complex, real) and type 2 in double I/O vs the float64 sums and the CPU plan;
 * type 1 again must give the same bits (the spreading has one summation order). */
static void one_case(mr_gpu_ctx *c, const char *label, const mr_grid *g, int64_t m, double tol, double sigma,
                     int64_t ncoils)
{
    const int64_t nv = mr_grid_size(g);
    float *traj = test_random_traj_grid(&rng, g, m, 2.0);
    float *a = malloc((size_t)(m * ncoils) * 2 * sizeof *a), *ar = malloc((size_t)m * sizeof *ar);
    float *x = malloc((size_t)nv * 2 * sizeof *x);
    double *ad = malloc((size_t)(m * ncoils) * 2 * sizeof *ad), *ard = malloc((size_t)m * sizeof *ard);
    double *xd = malloc((size_t)nv * 2 * sizeof *xd);
    for (int64_t i = 0; i < 2 * m * ncoils; i++)
        ad[i] = a[i] = (float)test_normal(&rng);
    for (int64_t i = 0; i < m; i++)
        ard[i] = ar[i] = (float)(0.1 + test_uniform(&rng));
    for (int64_t i = 0; i < 2 * nv; i++)
        xd[i] = x[i] = (float)test_normal(&rng);
    double *ref1 = malloc((size_t)(nv * ncoils) * 2 * sizeof *ref1), *ref1r = malloc((size_t)nv * 2 * sizeof *ref1r);
    double *ref2 = malloc((size_t)m * 2 * sizeof *ref2);
    for (int64_t cc = 0; cc < ncoils; cc++)
        mr_nudft_adjoint_ref(g, traj, a + 2 * cc * m, 0, m, ref1 + 2 * cc * nv);
    mr_nudft_adjoint_ref(g, traj, ar, 1, m, ref1r);
    mr_nudft_forward_ref(g, traj, x, m, ref2);
    mr_nufft_opts o;
    mr_nufft_opts_default(&o);
    o.tol = tol;
    o.upsample = sigma;
    mr_nufft *cp = NULL;
    mr_gpu_nufft *gp = NULL;
    CHECK_OK(mr_nufft_create(&cp, g, traj, m, &o));
    if (cp)
        CHECK_OK(gpu_plan_like(c, g, traj, m, mr_nufft_get_params(cp), &gp));
    double *g1 = malloc((size_t)(nv * ncoils) * 2 * sizeof *g1), *g1r = malloc((size_t)nv * 2 * sizeof *g1r);
    double *g2 = malloc((size_t)m * 2 * sizeof *g2), *c1 = malloc((size_t)(nv * ncoils) * 2 * sizeof *c1);
    float *da = mr_gpu_alloc(c, 2 * 2 * m * ncoils), *dar = mr_gpu_alloc(c, 2 * m), *dx = mr_gpu_alloc(c, 2 * 2 * nv);
    float *d1 = mr_gpu_alloc(c, 2 * 2 * nv * ncoils), *d2 = mr_gpu_alloc(c, 2 * 2 * m);
    if (cp && gp && da && dar && dx && d1 && d2) {
        const mr_nufft_params *par = mr_nufft_get_params(cp);
        CHECK_OK(mr_gpu_upload(c, da, (const float *)ad, 2 * 2 * m * ncoils));
        CHECK_OK(mr_gpu_upload(c, dar, (const float *)ard, 2 * m));
        CHECK_OK(mr_gpu_upload(c, dx, (const float *)xd, 2 * 2 * nv));
        CHECK_OK(mr_gpu_nufft_type1(gp, ncoils, da, 0, 1, d1));
        CHECK_OK(mr_gpu_download(c, (float *)g1, d1, 2 * 2 * nv * ncoils));
        CHECK_OK(mr_gpu_nufft_type1(gp, ncoils, da, 0, 1, d1));
        CHECK_OK(mr_gpu_download(c, (float *)c1, d1, 2 * 2 * nv * ncoils));
        const int64_t ndiff = values_differ(g1, c1, 2 * nv * ncoils, sizeof *g1);
        char same[160];
        snprintf(same, sizeof same, "GPU %s tol %.0e sigma %.2f: type 1 twice, values whose bits differ", label, tol,
                 par->upsample);
        CHECK_LE(same, ndiff, 0);
        CHECK_OK(mr_gpu_nufft_type1(gp, 1, dar, 1, 1, d1));
        CHECK_OK(mr_gpu_download(c, (float *)g1r, d1, 2 * 2 * nv));
        CHECK_OK(mr_gpu_nufft_type2(gp, 1, dx, 1, d2));
        CHECK_OK(mr_gpu_download(c, (float *)g2, d2, 2 * 2 * m));
        CHECK_OK(mr_gpu_ctx_sync(c));
        CHECK_OK(mr_nufft_type1_f64(cp, ncoils, ad, 0, c1));
        const double e1 = test_rel_l2_dd(g1, ref1, 2 * nv * ncoils), e1r = test_rel_l2_dd(g1r, ref1r, 2 * nv);
        const double e2 = test_rel_l2_dd(g2, ref2, 2 * m), ec = test_rel_l2_dd(g1, c1, 2 * nv * ncoils);
        int bin[3];
        int64_t ntiles;
        int nclass;
        mr_gpu_nufft_describe(gp, bin, &ntiles, &nclass);
        printf("%-10s n %4lldx%4lldx%3lld M %6lld C %lld tol %.0e sigma %.2f %s w %2d tiles %dx%dx%d (%lld, %d classes): "
               "type1 %.2e real %.2e type2 %.2e, vs CPU %.2e\n",
               label, (long long)g->n[0], (long long)g->n[1], (long long)g->n[2], (long long)m, (long long)ncoils, tol,
               par->upsample, par->precision == MR_NUFFT_PREC_F64 ? "f64" : "f32", par->width, bin[0], bin[1], bin[2],
               (long long)ntiles, nclass, e1, e1r, e2, ec);
        char what[160];
        const double bound = ERR_FACTOR * fmax(tol, par->bound);
        snprintf(what, sizeof what, "GPU %s tol %.0e sigma %.2f: worst relative L2 vs float64 sums", label, tol,
                 par->upsample);
        CHECK_LE(what, fmax(e1, fmax(e1r, e2)), bound);
        snprintf(what, sizeof what, "GPU %s tol %.0e: type 1 vs the CPU plan", label, tol);
        CHECK_LE(what, ec, bound);
    }
    mr_gpu_free(c, da);
    mr_gpu_free(c, dar);
    mr_gpu_free(c, dx);
    mr_gpu_free(c, d1);
    mr_gpu_free(c, d2);
    mr_gpu_nufft_destroy(gp);
    mr_nufft_destroy(cp);
    free(traj);
    free(a);
    free(ar);
    free(x);
    free(ad);
    free(ard);
    free(xd);
    free(ref1);
    free(ref1r);
    free(ref2);
    free(g1);
    free(g1r);
    free(g2);
    free(c1);
}

/* The split tiles' parts run in as many launches as the scratch limit asks (1 byte: one split tile per
 * launch) with the same bits: the grouping never changes a sum's order. 60000 samples over 5x5x5 tiles:
 * about 480 a tile, so every class has split tiles. */
static void grouping_same_bits(mr_gpu_ctx *c)
{
    const int64_t n[3] = {37, 35, 33}, m = 60000;
    const mr_grid g = mr_grid_image(n);
    const int64_t nv = mr_grid_size(&g);
    float *traj = test_random_traj_grid(&rng, &g, m, 2.0), *a = test_random_normal(&rng, 2 * m);
    mr_nufft_opts o;
    mr_nufft_opts_default(&o);
    mr_nufft *cp = NULL;
    mr_gpu_nufft *gp[2] = {NULL, NULL};
    CHECK_OK(mr_nufft_create(&cp, &g, traj, m, &o));
    for (int i = 0; i < 2 && cp; i++) {
        scratch_limit = i ? 1 : 0;
        CHECK_OK(gpu_plan_like(c, &g, traj, m, mr_nufft_get_params(cp), &gp[i]));
    }
    scratch_limit = 0;
    float *da = mr_gpu_alloc(c, 2 * m), *d1 = mr_gpu_alloc(c, 2 * nv);
    float *r[2] = {malloc((size_t)nv * 2 * sizeof(float)), malloc((size_t)nv * 2 * sizeof(float))};
    if (gp[0] && gp[1] && da && d1) {
        CHECK_OK(mr_gpu_upload(c, da, a, 2 * m));
        for (int i = 0; i < 2; i++) {
            CHECK_OK(mr_gpu_nufft_type1(gp[i], 1, da, 0, 0, d1));
            CHECK_OK(mr_gpu_download(c, r[i], d1, 2 * nv));
        }
        CHECK_LE("type 1 with one split tile per launch against the default launches: values whose bits differ",
                 values_differ(r[0], r[1], 2 * nv, sizeof(float)), 0);
    }
    mr_gpu_free(c, da);
    mr_gpu_free(c, d1);
    for (int i = 0; i < 2; i++) {
        mr_gpu_nufft_destroy(gp[i]);
        free(r[i]);
    }
    mr_nufft_destroy(cp);
    free(traj);
    free(a);
}

static void transforms(mr_gpu_ctx *c)
{
    const int64_t m1[3] = {97, 1, 1}, m2[3] = {40, 33, 1}, m3[3] = {16, 13, 14}, q3[3] = {10, 8, 9};
    const mr_grid g1 = mr_grid_image(m1), g2 = mr_grid_image(m2), g3 = mr_grid_image(m3), gq = mr_grid_q(q3);
    static const double tols[] = {1e-3, 1e-6, 1e-9, 1e-12};
    for (int t = 0; t < 4; t++) {
        one_case(c, "1D image", &g1, 400, tols[t], 2.0, 1);
        one_case(c, "2D image", &g2, 2000, tols[t], 2.0, 1);
        one_case(c, "3D image", &g3, 3000, tols[t], 2.0, 1);
        one_case(c, "3D Q grid", &gq, 3000, tols[t], 2.0, 1);
        if (tols[t] >= 1e-9) { /* 1.25: kernels up to the GPU's width 16 */
            one_case(c, "2D image", &g2, 2000, tols[t], 1.25, 1);
            one_case(c, "3D image", &g3, 3000, tols[t], 1.25, 1);
        }
    }
    one_case(c, "3D coils", &g3, 3000, 1e-6, 0.0, 3);
    /* many samples in few tiles (thousands per tile, one block each) */
    const int64_t small[3] = {8, 8, 8};
    const mr_grid gs = mr_grid_image(small);
    one_case(c, "3D dense", &gs, 20000, 1e-6, 2.0, 1);
    /* several tiles per axis, an odd count (the periodic colouring needs a third class) and a partial last
     * tile: 5x5x5 tiles of 16 over a 74x70x66 fine grid; 2D 5x5 tiles of 64 over 300x262 */
    const int64_t big3[3] = {37, 35, 33}, big2[3] = {150, 131, 1};
    const mr_grid gb3 = mr_grid_image(big3), gb2 = mr_grid_image(big2);
    one_case(c, "3D tiles", &gb3, 30000, 1e-6, 2.0, 2);
    one_case(c, "2D tiles", &gb2, 20000, 1e-9, 2.0, 1);
    grouping_same_bits(c);
}

/* The operator on the GPU vs on the host. */
static void operator_gpu_vs_cpu(mr_backend *bg, mr_backend *bc)
{
    const int64_t matrix[3] = {20, 18, 16}, m = 6000, nc = 2;
    float *traj = test_random_traj(&rng, matrix, m), *w = test_random_weights(&rng, m);
    mr_nufft_op_opts no;
    mr_nufft_op_opts_default(&no);
    mr_linop *og = NULL, *oc = NULL;
    mr_nudft_info ig;
    mr_nufft_op_info ng;
    CHECK_OK(mr_linop_nufft_create(&og, bg, matrix, traj, m, w, nc, &no, &ig, &ng));
    CHECK_OK(mr_linop_nufft_create(&oc, bc, matrix, traj, m, w, nc, &no, NULL, NULL));
    if (og && oc) {
        printf("GPU operator: %s, Q %.3f s, device working set %.3g GB\n", ig.engine_name, ig.q_seconds,
               ng.device_bytes * 1e-9);
        const int64_t nd = mr_linop_dom_size(og), ncod = mr_linop_cod_size(og);
        float *x = test_random_normal(&rng, 2 * nd), *y = test_random_normal(&rng, 2 * ncod);
        float *p = malloc((size_t)(nd > ncod ? nd : ncod) * 2 * sizeof(float));
        float *q = malloc((size_t)(nd > ncod ? nd : ncod) * 2 * sizeof(float));
        static const char *const names[] = {"forward", "adjoint", "normal"};
        const lc_fn fns[] = {mr_linop_forward, mr_linop_adjoint, mr_linop_normal};
        for (int i = 0; i < 3; i++) {
            const float *in = i == 1 ? y : x;
            const int64_t nin = i == 1 ? ncod : nd, nout = i == 0 ? ncod : nd;
            CHECK_OK(lc_apply(og, fns[i], in, nin, p, nout));
            CHECK_OK(lc_apply(oc, fns[i], in, nin, q, nout));
            char what[96];
            snprintf(what, sizeof what, "NUFFT operator %s: GPU vs host", names[i]);
            CHECK_LE(what, test_rel_l2_ff(p, q, 2 * nout), ERR_FACTOR * no.tol);
        }
        lc_check("GPU NUFFT operator", og, &rng, 1e-5, 1e-4);
        free(x);
        free(y);
        free(p);
        free(q);
    }
    mr_linop_free(og);
    mr_linop_free(oc);
    free(traj);
    free(w);
}

/* The exact operator with its GEMM sums cut into sample chunks vs uncut. */
static void exact_chunks(mr_backend *bg)
{
    const int64_t matrix[3] = {32, 32, 32}, m = 60000;
    float *traj = test_random_traj(&rng, matrix, m);
    mr_nudft_opts o;
    mr_nudft_opts_default(&o);
    mr_linop *a = NULL, *b = NULL;
    CHECK_OK(mr_linop_nudft_create(&a, bg, matrix, traj, m, NULL, 1, &o, NULL));
    const mr_grid gq = mr_grid_q(matrix);
    o.memory_limit = ((int64_t)256 << 20) + mr_grid_size(&gq) * 8 + ((int64_t)60 << 20); /* about 4 chunks */
    int nchunks = 0;
    int64_t work = 0;
    const int64_t peak = mr_gpu_sums_layout(&gq, m, MR_SUMS_TF32X3, o.memory_limit, &nchunks, &work);
    printf("exact sums within %.3g GB: %d chunks, peak %.3g GB\n", o.memory_limit * 1e-9, nchunks, peak * 1e-9);
    CHECK(nchunks >= 2);
    CHECK_LE("chunked sums' peak vs the cap", (double)peak, (double)o.memory_limit);
    mr_nudft_info info;
    CHECK_OK(mr_linop_nudft_create(&b, bg, matrix, traj, m, NULL, 1, &o, &info));
    if (a && b) {
        const int64_t nd = mr_linop_dom_size(a), ncod = mr_linop_cod_size(a);
        float *x = test_random_normal(&rng, 2 * nd), *y = test_random_normal(&rng, 2 * ncod);
        float *p = malloc((size_t)ncod * 2 * sizeof(float)), *q = malloc((size_t)ncod * 2 * sizeof(float));
        static const char *const names[] = {"forward", "adjoint", "normal (Q)"};
        const lc_fn fns[] = {mr_linop_forward, mr_linop_adjoint, mr_linop_normal};
        for (int i = 0; i < 3; i++) {
            const float *in = i == 1 ? y : x;
            const int64_t nin = i == 1 ? ncod : nd, nout = i == 0 ? ncod : nd;
            CHECK_OK(lc_apply(a, fns[i], in, nin, p, nout));
            CHECK_OK(lc_apply(b, fns[i], in, nin, q, nout));
            char what[256];
            snprintf(what, sizeof what, "exact operator %s (%s): chunked vs whole", names[i], info.engine_name);
            CHECK_LE(what, test_rel_l2_ff(q, p, 2 * nout), 1e-5);
        }
        free(x);
        free(y);
        free(p);
        free(q);
    }
    mr_linop_free(a);
    mr_linop_free(b);
    free(traj);
}

static void factory_and_limits(mr_gpu_ctx *c, mr_backend *bg)
{
    const int64_t matrix[3] = {24, 24, 24}, m = 20000;
    float *traj = test_random_traj(&rng, matrix, m);
    static const mr_model models[] = {MR_MODEL_EXACT, MR_MODEL_NUFFT, MR_MODEL_AUTO};
    for (int i = 0; i < 3; i++) {
        mr_encoding_opts o;
        mr_encoding_opts_default(&o);
        o.model = models[i];
        o.check = 1;
        mr_linop *e = NULL;
        mr_encoding_info info;
        CHECK_OK(mr_encoding_create(&e, bg, matrix, traj, m, NULL, 1, &o, &info));
        printf("GPU model %s: %s; estimates exact %.3g s / %.3g GB, nufft %.3g s / %.3g GB\n", mr_model_name(models[i]),
               info.description, info.est_seconds[MR_MODEL_EXACT], info.est_bytes[MR_MODEL_EXACT] * 1e-9,
               info.est_seconds[MR_MODEL_NUFFT], info.est_bytes[MR_MODEL_NUFFT] * 1e-9);
        CHECK_LE("GPU factory: measured error of F^H", info.error_adjoint, ERR_FACTOR * 1e-6);
        CHECK_LE("GPU factory: measured error of F", info.error_forward, ERR_FACTOR * 1e-6);
        mr_linop_free(e);
    }
    /* too large for the GPU: refused with the numbers, by the factory and by a plan */
    const int64_t huge[3] = {2048, 2048, 2048};
    mr_encoding_opts o;
    mr_encoding_opts_default(&o);
    mr_encoding_info info;
    for (int i = 0; i < 3; i++) {
        o.model = models[i];
        CHECK(mr_encoding_choose(bg, huge, 100000000, 8, &o, &info) == MR_ENOMEM);
        printf("refused (%s): %s\n", mr_model_name(models[i]), mr_last_error());
        CHECK(strstr(mr_last_error(), "needs") != NULL);
    }
    const mr_grid gh = mr_grid_image(huge);
    mr_nufft_opts no;
    mr_nufft_opts_default(&no);
    mr_nufft_params p;
    CHECK_OK(mr_nufft_params_choose(&gh, m, &no, MR_NUFFT_ON_GPU, &p));
    float *t = test_random_traj_grid(&rng, &gh, m, 0.0);
    mr_gpu_nufft *plan = NULL;
    CHECK(gpu_plan_like(c, &gh, t, m, &p, &plan) == MR_ENOMEM);
    printf("GPU plan refused: %s\n", mr_last_error());
    CHECK(plan == NULL);
    CHECK_OK(mr_gpu_ctx_status(c)); /* the device is still fine */
    free(t);
    free(traj);
}

int main(void)
{
    rng = test_seed();
    if (mr_gpu_count() <= 0) {
        printf("no GPU: skipped\n");
        return TEST_SKIP;
    }
    mr_gpu_ctx *c = NULL;
    CHECK_OK(mr_gpu_ctx_create(&c, 0));
    mr_backend *bg = NULL, *bc = NULL;
    const mr_device_sel gpu = {MR_DEVICE_GPU, 0, 0, 0, {0}}, cpu = {MR_DEVICE_CPU, -1, 0, 0, {0}};
    CHECK_OK(mr_backend_create(&bg, gpu, 0));
    CHECK_OK(mr_backend_create(&bc, cpu, 0));
    if (c && bg && bc) {
        transforms(c);
        operator_gpu_vs_cpu(bg, bc);
        exact_chunks(bg);
        factory_and_limits(c, bg);
    }
    mr_backend_free(bg);
    mr_backend_free(bc);
    mr_gpu_ctx_destroy(c);
    return test_finish("test_gpu_nufft");
}
