/* The CPU NUFFT (solver/nufft.h) against the exact sums in float64 (mr_nudft_adjoint_ref,
 * mr_nudft_forward_ref) on random problems in 1D, 2D and 3D, image grids (odd and even sizes) and the
 * 2N grid of Q, samples up to two cells beyond the Nyquist box, tolerances 1e-3 .. 1e-12 with both
 * upsampling factors (2 and 1.25):
 *
 *   relative L2 error  <=  NUFFT_ERR_FACTOR x max(tol, the parameters' bound)
 *
 * (the bound exceeds tol only where a factor is forced that the automatic choice would not take: 1.25 at
 * 1e-12, whose deconvolution magnifies float64's rounding)
 *
 * and: type 2 is the adjoint of type 1 (in float64), several coils in one call equal one call per coil,
 * real weights equal complex weights with zero imaginary parts, the bits do not depend on the thread
 * count, the parameters follow the tolerance (width, precision, fit), bad input is refused. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solver/nudft.h"
#include "solver/nufft.h"
#include "test_op_random.h"
#include "testutil.h"

/* The error bound's factor over the requested tolerance (docs/NUFFT.md: the measured worst case over
 * these problems is under 3x), and the bound of mr_nufft_params. */
#define NUFFT_ERR_FACTOR 10.0

static uint64_t rng;

static float *random_values(int64_t n)
{
    float *v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)test_normal(&rng);
    return v;
}

/* One problem: type 1 (complex and real weights) and type 2 against the float64 sums; the worst
 * relative error is returned. */
static double one_case(const char *label, const mr_grid *g, int64_t m, double tol, double sigma,
                       mr_nufft_precision prec)
{
    const int64_t nv = mr_grid_size(g);
    float *traj = test_random_traj_grid(&rng, g, m, 2.0), *a = random_values(2 * m), *x = random_values(2 * nv);
    double *ref1 = malloc((size_t)nv * 2 * sizeof *ref1), *ref1r = malloc((size_t)nv * 2 * sizeof *ref1r);
    double *ref2 = malloc((size_t)m * 2 * sizeof *ref2);
    double *ad = malloc((size_t)m * 2 * sizeof *ad), *xd = malloc((size_t)nv * 2 * sizeof *xd);
    double *o1 = malloc((size_t)nv * 2 * sizeof *o1), *o1r = malloc((size_t)nv * 2 * sizeof *o1r);
    double *o2 = malloc((size_t)m * 2 * sizeof *o2);
    float *ar = malloc((size_t)m * sizeof *ar);
    double *ard = malloc((size_t)m * sizeof *ard);
    for (int64_t i = 0; i < 2 * m; i++)
        ad[i] = a[i];
    for (int64_t i = 0; i < m; i++)
        ard[i] = ar[i] = a[2 * i];
    for (int64_t i = 0; i < 2 * nv; i++)
        xd[i] = x[i];
    mr_nudft_adjoint_ref(g, traj, a, 0, m, ref1);
    mr_nudft_adjoint_ref(g, traj, ar, 1, m, ref1r);
    mr_nudft_forward_ref(g, traj, x, m, ref2);
    mr_nufft_opts o;
    mr_nufft_opts_default(&o);
    o.tol = tol;
    o.upsample = sigma;
    o.precision = prec;
    mr_nufft *p = NULL;
    double worst = INFINITY;
    CHECK_OK(mr_nufft_create(&p, g, traj, m, &o));
    if (p) {
        const mr_nufft_params *par = mr_nufft_get_params(p);
        CHECK_OK(mr_nufft_type1_f64(p, 1, ad, 0, o1));
        CHECK_OK(mr_nufft_type1_f64(p, 1, ard, 1, o1r));
        CHECK_OK(mr_nufft_type2_f64(p, 1, xd, o2));
        const double e1 = test_rel_l2_dd(o1, ref1, 2 * nv), e1r = test_rel_l2_dd(o1r, ref1r, 2 * nv);
        const double e2 = test_rel_l2_dd(o2, ref2, 2 * m);
        worst = fmax(e1, fmax(e1r, e2));
        const int f32 = par->precision == MR_NUFFT_PREC_F32;
        const double bound = NUFFT_ERR_FACTOR * fmax(tol, par->bound);
        printf("%-12s n %4lldx%4lldx%3lld M %6lld tol %.0e sigma %.2f %s w %2d deg %2d fine %4lldx%4lldx%3lld: "
               "type1 %.2e real %.2e type2 %.2e (x tol %.2f; bound %.1e amp %.0f)\n",
               label, (long long)g->n[0], (long long)g->n[1], (long long)g->n[2], (long long)m, tol, par->upsample,
               f32 ? "f32" : "f64", par->width, par->degree, (long long)par->fine[0], (long long)par->fine[1],
               (long long)par->fine[2], e1, e1r, e2, worst / tol, par->bound, par->amp);
        char what[160];
        snprintf(what, sizeof what, "%s tol %.0e sigma %.2f: worst relative L2 error", label, tol, par->upsample);
        CHECK_LE(what, worst, bound);
        mr_nufft_destroy(p);
    }
    free(traj);
    free(a);
    free(x);
    free(ref1);
    free(ref1r);
    free(ref2);
    free(ad);
    free(xd);
    free(o1);
    free(o1r);
    free(o2);
    free(ar);
    free(ard);
    return worst;
}

static void accuracy(void)
{
    static const double tols[] = {1e-3, 1e-6, 1e-9, 1e-12};
    const int64_t m1[3] = {97, 1, 1}, m2[3] = {24, 19, 1}, m3[3] = {12, 9, 10};
    const int64_t q2[3] = {12, 10, 1};
    mr_grid g1 = mr_grid_image(m1), g2 = mr_grid_image(m2), g3 = mr_grid_image(m3), gq = mr_grid_q(q2);
    for (int t = 0; t < 4; t++)
        for (int s = 0; s < 2; s++) {
            const double sigma = s ? 1.25 : 2.0;
            one_case("1D image", &g1, 300, tols[t], sigma, MR_NUFFT_PREC_AUTO);
            one_case("2D image", &g2, 700, tols[t], sigma, MR_NUFFT_PREC_AUTO);
            one_case("3D image", &g3, 900, tols[t], sigma, MR_NUFFT_PREC_AUTO);
            one_case("2D Q grid", &gq, 500, tols[t], sigma, MR_NUFFT_PREC_AUTO);
        }
    /* float64 at a float32 tolerance, and the automatic factor */
    one_case("3D image", &g3, 900, 1e-6, 2.0, MR_NUFFT_PREC_F64);
    one_case("2D image", &g2, 700, 1e-6, 0.0, MR_NUFFT_PREC_AUTO);
}

/* <type2(x), y> = <x, type1(y)> in float64 (the same kernel both ways: adjoint to rounding). */
static void adjointness(void)
{
    const int64_t mat[3] = {20, 17, 6};
    const mr_grid g = mr_grid_image(mat);
    const int64_t nv = mr_grid_size(&g), m = 800;
    float *traj = test_random_traj_grid(&rng, &g, m, 3.0);
    double *x = malloc((size_t)nv * 2 * sizeof *x), *y = malloc((size_t)m * 2 * sizeof *y);
    double *fx = malloc((size_t)m * 2 * sizeof *fx), *fy = malloc((size_t)nv * 2 * sizeof *fy);
    for (int64_t i = 0; i < 2 * nv; i++)
        x[i] = test_normal(&rng);
    for (int64_t i = 0; i < 2 * m; i++)
        y[i] = test_normal(&rng);
    static const double tols[] = {1e-3, 1e-6, 1e-12};
    for (int t = 0; t < 3; t++) {
        mr_nufft_opts o;
        mr_nufft_opts_default(&o);
        o.tol = tols[t];
        mr_nufft *p = NULL;
        CHECK_OK(mr_nufft_create(&p, &g, traj, m, &o));
        if (!p)
            continue;
        CHECK_OK(mr_nufft_type2_f64(p, 1, x, fx));
        CHECK_OK(mr_nufft_type1_f64(p, 1, y, 0, fy));
        double lr = 0, li = 0, rr = 0, ri = 0, nfx = 0, ny = 0;
        for (int64_t k = 0; k < m; k++) { /* <F x, y> = sum conj(fx) y */
            lr += fx[2 * k] * y[2 * k] + fx[2 * k + 1] * y[2 * k + 1];
            li += fx[2 * k] * y[2 * k + 1] - fx[2 * k + 1] * y[2 * k];
            nfx += fx[2 * k] * fx[2 * k] + fx[2 * k + 1] * fx[2 * k + 1];
            ny += y[2 * k] * y[2 * k] + y[2 * k + 1] * y[2 * k + 1];
        }
        for (int64_t v = 0; v < nv; v++) { /* <x, F^H y> */
            rr += x[2 * v] * fy[2 * v] + x[2 * v + 1] * fy[2 * v + 1];
            ri += x[2 * v] * fy[2 * v + 1] - x[2 * v + 1] * fy[2 * v];
        }
        const int f32 = mr_nufft_get_params(p)->precision == MR_NUFFT_PREC_F32;
        char what[128];
        snprintf(what, sizeof what, "adjointness tol %.0e (%s): |<Fx,y> - <x,F^H y>| / (||Fx|| ||y||)", tols[t],
                 f32 ? "float32" : "float64");
        CHECK_LE(what, hypot(lr - rr, li - ri) / sqrt(nfx * ny), f32 ? 1e-6 : 1e-13);
        mr_nufft_destroy(p);
    }
    free(traj);
    free(x);
    free(y);
    free(fx);
    free(fy);
}

/* Three coils in one call = three calls; 1 and 2 threads give the same bits (float32 API). */
static void coils_and_threads(void)
{
    const int64_t mat[3] = {40, 36, 1};
    const mr_grid g = mr_grid_q(mat);
    const int64_t nv = mr_grid_size(&g), m = 3000, nc = 3;
    float *traj = test_random_traj_grid(&rng, &g, m, 1.0), *a = random_values(2 * m * nc), *x = random_values(2 * nv * nc);
    float *o1 = malloc((size_t)(nv * nc) * 2 * sizeof *o1), *o1b = malloc((size_t)(nv * nc) * 2 * sizeof *o1b);
    float *o2 = malloc((size_t)(m * nc) * 2 * sizeof *o2), *o2b = malloc((size_t)(m * nc) * 2 * sizeof *o2b);
    mr_nufft_opts o;
    mr_nufft_opts_default(&o);
    o.threads = 2;
    mr_nufft *p = NULL, *p1 = NULL;
    CHECK_OK(mr_nufft_create(&p, &g, traj, m, &o));
    o.threads = 1;
    CHECK_OK(mr_nufft_create(&p1, &g, traj, m, &o));
    if (p && p1) {
        CHECK_OK(mr_nufft_type1(p, nc, a, 0, o1));
        CHECK_OK(mr_nufft_type2(p, nc, x, o2));
        int same1 = 1, same2 = 1;
        for (int64_t c = 0; c < nc; c++) {
            CHECK_OK(mr_nufft_type1(p1, 1, a + 2 * c * m, 0, o1b + 2 * c * nv));
            CHECK_OK(mr_nufft_type2(p1, 1, x + 2 * c * nv, o2b + 2 * c * m));
        }
        same1 = memcmp(o1, o1b, (size_t)(nv * nc) * 2 * sizeof *o1) == 0;
        same2 = memcmp(o2, o2b, (size_t)(m * nc) * 2 * sizeof *o2) == 0;
        printf("coils: 3 coils in one call with 2 threads = 3 calls with 1 thread: type1 %s, type2 %s\n",
               same1 ? "same bits" : "DIFFERENT", same2 ? "same bits" : "DIFFERENT");
        CHECK(same1);
        CHECK(same2);
    }
    mr_nufft_destroy(p);
    mr_nufft_destroy(p1);
    free(traj);
    free(a);
    free(x);
    free(o1);
    free(o1b);
    free(o2);
    free(o2b);
}

/* The parameters follow the tolerance; bad input is refused with a message. */
static void parameters(void)
{
    const int64_t mat[3] = {64, 64, 64};
    const mr_grid g = mr_grid_image(mat);
    mr_nufft_opts o;
    mr_nufft_opts_default(&o);
    mr_nufft_params p;
    int last_w = 0;
    for (int e = 2; e <= 12; e++) {
        const double tol = e == 6 ? 1e-6 : pow(10.0, -e);
        o.tol = tol;
        o.upsample = 2.0;
        CHECK_OK(mr_nufft_params_choose(&g, 100000, &o, MR_NUFFT_ON_CPU, &p));
        CHECK(p.width >= last_w);
        CHECK(p.precision == (tol >= MR_NUFFT_F32_MIN_TOL ? MR_NUFFT_PREC_F32 : MR_NUFFT_PREC_F64));
        CHECK_LE("kernel estimate vs tolerance", p.bound, 2.0 * tol);
        CHECK(p.fine[0] == 128 && p.fine[1] == 128 && p.fine[2] == 128);
        last_w = p.width;
        o.upsample = 0.0; /* the automatic factor meets the tolerance too */
        CHECK_OK(mr_nufft_params_choose(&g, 100000, &o, MR_NUFFT_ON_CPU, &p));
        CHECK_LE("automatic factor: estimate vs tolerance", p.bound, 2.0 * tol);
    }
    /* float32 at sigma 1.25 cannot reach 1e-6: the automatic precision takes float64 there */
    o.tol = 1e-6;
    o.upsample = 1.25;
    CHECK_OK(mr_nufft_params_choose(&g, 100000, &o, MR_NUFFT_ON_CPU, &p));
    CHECK(p.precision == MR_NUFFT_PREC_F64);
    static const double bad_tol[] = {0.5, 1e-13, -1.0};
    for (int i = 0; i < 3; i++) {
        o.tol = bad_tol[i];
        o.upsample = 0;
        CHECK(mr_nufft_params_choose(&g, 10, &o, MR_NUFFT_ON_CPU, &p) == MR_EINVAL);
    }
    o.tol = 1e-6;
    o.upsample = 1.1;
    CHECK(mr_nufft_params_choose(&g, 10, &o, MR_NUFFT_ON_CPU, &p) == MR_EINVAL);
    o.upsample = 0;
    o.precision = MR_NUFFT_PREC_F32;
    o.tol = 1e-9;
    CHECK(mr_nufft_params_choose(&g, 10, &o, MR_NUFFT_ON_CPU, &p) == MR_EINVAL);
    float traj[6] = {1.0f, 2.0f, 3.0f, NAN, 0.0f, 0.0f};
    mr_nufft *pl = NULL;
    mr_nufft_opts_default(&o);
    CHECK(mr_nufft_create(&pl, &g, traj, 2, &o) == MR_EINVAL);
    printf("non-finite sample refused: %s\n", mr_last_error());
    CHECK(pl == NULL);
}

int main(void)
{
    rng = test_seed();
    parameters();
    accuracy();
    adjointness();
    coils_and_threads();
    return test_finish("test_nufft");
}
