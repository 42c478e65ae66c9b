/* SENSE through the operator API (solver/linop.h, solver/cg.h) for the coil-map tests: x = `iters` CG
 * iterations on E^H E x = E^H d with E = F S (exact NUDFT, Dirac basis, no regularisation: the iteration
 * count is the regulariser), and the PSNR of |x| against a reference image. Header-only: each test is its
 * own program. */
#ifndef MR_SENSE_TESTUTIL_H
#define MR_SENSE_TESTUTIL_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/kspace.h"
#include "solver/backend.h"
#include "solver/cg.h"
#include "solver/linop.h"
#include "solver/metrics.h"
#include "testutil.h"

/* ks gives the matrix and trajectory; data [C][M][2] and maps [C][N][2] of C coils (C may differ from
 * ks->ncoils: virtual coils); ref [N] the image to score against. NAN after a failed check. */
static inline double test_sense_psnr(const mr_kspace *ks, const float *data, const float *maps, int64_t C, int iters,
                                     const float *ref)
{
    const int64_t N = mr_kspace_voxels(ks);
    mr_backend *be = NULL;
    const mr_device_sel cpu = {.kind = MR_DEVICE_CPU, .index = -1};
    mr_linop *f = NULL, *s = NULL, *e = NULL, *sys = NULL;
    float *b = (float *)malloc((size_t)N * 2 * sizeof *b), *x = (float *)calloc((size_t)N * 2, sizeof *x);
    double psnr = NAN;
    mr_nudft_opts no;
    mr_nudft_opts_default(&no);
    no.basis = MR_BASIS_DIRAC;
    test_check_ok(__FILE__, __LINE__, "mr_backend_create", mr_backend_create(&be, cpu, 2));
    if (be)
        test_check_ok(__FILE__, __LINE__, "mr_linop_nudft_create",
                      mr_linop_nudft_create(&f, be, ks->matrix, ks->traj, ks->nsamples, NULL, C, &no, NULL));
    if (f)
        test_check_ok(__FILE__, __LINE__, "mr_linop_sens_create", mr_linop_sens_create(&s, be, ks->matrix, C, maps));
    if (s)
        test_check_ok(__FILE__, __LINE__, "mr_linop_chain", mr_linop_chain(&e, s, f));
    if (e)
        test_check_ok(__FILE__, __LINE__, "mr_linop_normal_of", mr_linop_normal_of(&sys, e));
    if (sys && mr_linop_adjoint(e, data, b) == MR_OK) {
        mr_cg_opts co;
        mr_cg_opts_default(&co);
        co.iters = iters;
        mr_cg_result res;
        memset(&res, 0, sizeof res);
        test_check_ok(__FILE__, __LINE__, "mr_cg_solve_linop", mr_cg_solve_linop(sys, b, x, &co, &res));
        mr_cg_result_free(&res);
        psnr = mr_metrics_psnr(x, 1, ref, N);
    }
    mr_linop_free(sys);
    mr_linop_free(e);
    mr_linop_free(s);
    mr_linop_free(f);
    mr_backend_free(be);
    free(b);
    free(x);
    return psnr;
}

#endif
