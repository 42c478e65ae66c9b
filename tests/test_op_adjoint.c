/* Adjointness of the operator: <E x, y> = <x, E^H y> (op.h: E = W^{1/2} F), 2D and 3D, box and dirac
 * bases, with and without weights.
 *
 * Bounds: for random complex x, y the difference relative to ||E x|| ||y|| is <= 1e-5; for
 * y = E x (so that the inner product is ||E x||^2, far from 0) the difference relative to the
 * inner product itself is <= 1e-5. */
#include <math.h>
#include <stdlib.h>

#include "solver/op.h"
#include "test_op_random.h"
#include "testutil.h"

static uint64_t rng;

/* <u, v> = sum conj(u) v in double; interleaved complex. */
static void dot(const float *u, const float *v, int64_t n, double *re, double *im)
{
    double r = 0, i = 0;
    for (int64_t k = 0; k < n; k++) {
        r += (double)u[2 * k] * v[2 * k] + (double)u[2 * k + 1] * v[2 * k + 1];
        i += (double)u[2 * k] * v[2 * k + 1] - (double)u[2 * k + 1] * v[2 * k];
    }
    *re = r;
    *im = i;
}

static double norm(const float *u, int64_t n)
{
    double s = 0;
    for (int64_t k = 0; k < 2 * n; k++)
        s += (double)u[k] * u[k];
    return sqrt(s);
}

static void check(const char *what, const int64_t matrix[3], int64_t m, mr_basis basis, int weighted)
{
    const int64_t nv = matrix[0] * matrix[1] * matrix[2];
    float *traj = test_random_traj(&rng, matrix, m), *w = test_random_weights(&rng, m);
    float *y = test_random_normal(&rng, 2 * m), *x = test_random_normal(&rng, 2 * nv);
    float *fhy = malloc((size_t)nv * 2 * sizeof(float));
    float *fx = malloc((size_t)m * 2 * sizeof(float)), *wy = malloc((size_t)m * 2 * sizeof(float));
    mr_op_opts o;
    mr_op_opts_default(&o);
    o.basis = basis;
    o.device = MR_DEVICE_CPU;
    o.fast_normal = 0;
    mr_op *op = NULL;
    CHECK_OK(mr_op_create(&op, matrix, traj, m, weighted ? w : NULL, &o));
    if (!op)
        return;
    char label[200];
    for (int pass = 0; pass < 2; pass++) {
        CHECK_OK(mr_op_forward(op, x, fx));
        if (pass == 1)
            for (int64_t k = 0; k < 2 * m; k++)
                y[k] = fx[k];
        CHECK_OK(mr_op_adjoint(op, y, fhy));
        for (int64_t k = 0; k < 2 * m; k++)
            wy[k] = y[k];
        double lr, li, rr, ri;
        dot(fx, wy, m, &lr, &li);
        dot(x, fhy, nv, &rr, &ri);
        const double diff = hypot(lr - rr, li - ri);
        if (pass == 0) {
            snprintf(label, sizeof label, "%s random y: |<Ex,y> - <x,E^H y>| / (||Ex|| ||y||)", what);
            CHECK_LE(label, diff / (norm(fx, m) * norm(wy, m)), 1e-5);
        } else {
            snprintf(label, sizeof label, "%s y = Ex: |<Ex,y> - <x,E^H y>| / |<Ex,y>|", what);
            CHECK_LE(label, diff / hypot(lr, li), 1e-5);
        }
    }
    mr_op_destroy(op);
    free(traj);
    free(w);
    free(x);
    free(fhy);
    free(y);
    free(fx);
    free(wy);
}

int main(void)
{
    rng = test_seed();
    const int64_t m2[3] = {31, 17, 1}, m3[3] = {13, 7, 5}, me[3] = {32, 32, 1};
    for (int b = 0; b < 2; b++)
        for (int wtd = 0; wtd < 2; wtd++) {
            const mr_basis basis = b ? MR_BASIS_DIRAC : MR_BASIS_BOX;
            char what[96];
            snprintf(what, sizeof what, "2D 31x17 %s %s", b ? "dirac" : "box", wtd ? "weighted" : "unweighted");
            check(what, m2, 1237, basis, wtd);
            snprintf(what, sizeof what, "3D 13x7x5 %s %s", b ? "dirac" : "box", wtd ? "weighted" : "unweighted");
            check(what, m3, 517, basis, wtd);
        }
    check("2D 32x32 box weighted", me, 2000, MR_BASIS_BOX, 1);
    return test_finish("test_op_adjoint");
}
