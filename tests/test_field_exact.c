/* The exact field-corrected operator (solver/linop_field.h mr_linop_field_exact_create) on the host:
 *  - adjoint test (bound 1e-5), forward against the float64 sums (1e-5);
 *  - on the analytic linear-field phantom E_exact(truth) matches the analytic data as closely as the
 *    field-free operator matches the field-free data (the difference is the discretisation of the
 *    phantom; bound 1.1 x + 1e-4);
 *  - refusals name what is missing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "field_testutil.h"
#include "linop_check.h"
#include "phantoms/field.h"
#include "phantoms/scan.h"
#include "solver/linop_field.h"
#include "solver/nudft.h"

static uint64_t rng;

static void exact_operator(mr_backend *be)
{
    const int64_t matrix[3] = {20, 14, 1};
    field_problem p = field_problem_make(&rng, matrix, 700);
    mr_linop *e = NULL;
    CHECK_OK(mr_linop_field_exact_create(&e, be, matrix, p.traj, p.time, p.field, p.m, p.w, 2, MR_BASIS_DIRAC));
    if (e) {
        lc_check("exact field operator, 2 coils", e, &rng, 1e-5, 1e-6);
        /* forward against the float64 sums times s = sqrt(w) / N (Dirac basis) */
        const int64_t n = 20 * 14;
        float *x = test_random_normal(&rng, 4 * n), *y = malloc((size_t)p.m * 4 * sizeof(float));
        double *ref = malloc((size_t)p.m * 2 * sizeof(double));
        CHECK_OK(lc_apply(e, mr_linop_forward, x, 2 * n, y, 2 * p.m));
        const mr_grid g = mr_grid_image(matrix);
        mr_nudft_field_forward_ref(&g, p.traj, p.time, p.field, x + 2 * n, p.m, ref);
        for (int64_t k = 0; k < p.m; k++) {
            ref[2 * k] *= sqrt(p.w[k]) / n;
            ref[2 * k + 1] *= sqrt(p.w[k]) / n;
        }
        CHECK_LE("exact field operator: coil 1 forward vs float64, rel L2", test_rel_l2(y + 2 * p.m, ref, 2 * p.m), 1e-5);
        free(x);
        free(y);
        free(ref);
    }
    mr_linop_free(e);
    /* refusals */
    mr_linop *bad = NULL;
    CHECK(mr_linop_field_exact_create(&bad, be, matrix, p.traj, NULL, p.field, p.m, NULL, 1, MR_BASIS_BOX) == MR_EINVAL &&
          strstr(mr_last_error(), "readout times") && !bad);
    CHECK(mr_linop_field_exact_create(&bad, be, matrix, p.traj, p.time, NULL, p.m, NULL, 1, MR_BASIS_BOX) == MR_EINVAL &&
          strstr(mr_last_error(), "field map") && !bad);
    field_problem_free(&p);
}

/* E_exact(truth) vs the analytic data with a linear field, against the same without a field */
static void analytic_phantom(mr_backend *be)
{
    const int64_t matrix[3] = {64, 64, 1};
    mr_scan_params sp;
    mr_scan_params_default(&sp);
    mr_traj_params_default(&sp.traj, MR_TRAJ_SPIRAL2D, matrix);
    sp.traj.interleaves = 8;
    sp.traj.readout = mr_traj_spiral_readout(&sp.traj, 0.5);
    sp.weights = 0;
    sp.dwell_s = 10e-6;
    sp.te_s = 1e-3;
    mr_kspace *nf = NULL, *wf = NULL;
    CHECK_OK(mr_scan_simulate(&sp, &nf));
    CHECK_OK(mr_field_parse("c=20,x=150,y=50", &sp.field));
    CHECK_OK(mr_scan_simulate(&sp, &wf));
    if (!nf || !wf) {
        mr_kspace_free(nf);
        mr_kspace_free(wf);
        return;
    }
    const int64_t n = 64 * 64, m = wf->nsamples;
    float *x = calloc((size_t)n * 2, sizeof(float)), *y = malloc((size_t)m * 2 * sizeof(float));
    for (int64_t v = 0; v < n; v++)
        x[2 * v] = wf->truth[v];
    mr_linop *e = NULL, *e0 = NULL;
    mr_nudft_opts no;
    mr_nudft_opts_default(&no);
    no.fast_normal = 0;
    CHECK_OK(mr_linop_field_exact_create(&e, be, matrix, wf->traj, wf->time, wf->fieldmap, m, NULL, 1, MR_BASIS_BOX));
    CHECK_OK(mr_linop_nudft_create(&e0, be, matrix, nf->traj, m, NULL, 1, &no, NULL));
    if (e && e0) {
        CHECK_OK(lc_apply(e, mr_linop_forward, x, n, y, m));
        const double err = test_rel_l2_ff(y, wf->data, 2 * m);
        CHECK_OK(lc_apply(e0, mr_linop_forward, x, n, y, m));
        const double err0 = test_rel_l2_ff(y, nf->data, 2 * m);
        printf("exact field operator on the truth vs analytic data: rel L2 %.4e (field-free pair: %.4e)\n", err, err0);
        CHECK_LE("exact field operator on the truth vs the analytic linear-field data, rel L2", err, 1.1 * err0 + 1e-4);
    }
    mr_linop_free(e);
    mr_linop_free(e0);
    free(x);
    free(y);
    mr_kspace_free(nf);
    mr_kspace_free(wf);
}

int main(void)
{
    rng = test_seed();
    mr_backend *be = field_cpu_backend();
    if (!be)
        return test_finish("test_field_exact");
    exact_operator(be);
    analytic_phantom(be);
    mr_backend_free(be);
    return test_finish("test_field_exact");
}
