/* Simulated off-resonance (phantoms/field.h):
 *  - the analytic constant + linear field (k shifted by g t, phase e^{-i 2 pi c t}) against exact field
 *    sums over the phantom sampled on a fine grid (G = 256 per axis in 2D, the voxel-averaged truth,
 *    box basis): their difference is the fine grid's discretisation error (7e-3 relative on this 64^2
 *    spiral, from the highest k), which the same comparison without a field measures; bound: 1.1 x
 *    that + 1e-5, while the field changes the data by >= 0.1 (measured 0.35-0.6): a wrong sign or scale
 *    of any term would show as an error of that size;
 *  - the non-linear bump (sums on an oversampled grid, docs) against the same fine-grid sums of the whole
 *    field: same bound;
 *  - with coils: the analytic linear field of coils.h's maps against the fine sums of S_c rho;
 *  - the readout timing finds the echo (spiral-out: sample 0; radial: the middle) and the field map stored
 *    with a simulated scan is the field at the voxel centres;
 *  - the description parser names what it refuses. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "phantoms/field.h"
#include "phantoms/scan.h"
#include "solver/nudft.h"
#include "test_op_random.h"
#include "testutil.h"

#define G 256

/* the fine-grid reference of the field p for the phantom (coil c of coils, or none) */
static void fine_sums(const mr_field_params *p, const mr_coils *coils, int64_t c, const float *traj, const float *t,
                      int64_t m, float *out)
{
    const int64_t nf[3] = {G, G, 1};
    const int64_t n = G * G;
    float *truth = malloc((size_t)n * sizeof(float)), *f = malloc((size_t)n * sizeof(float));
    float *x = malloc((size_t)n * 2 * sizeof(float));
    CHECK_OK(mr_phantom_truth(MR_PHANTOM_SL2D, nf, truth));
    CHECK_OK(mr_field_map(p, nf, f));
    for (int64_t v = 0; v < n; v++) {
        double s[2] = {1, 0};
        const double r[3] = {(double)(v % G - G / 2) / G, (double)(v / G - G / 2) / G, 0};
        if (coils)
            mr_coils_value(coils, c, r, s);
        x[2 * v] = (float)(truth[v] * s[0]);
        x[2 * v + 1] = (float)(truth[v] * s[1]);
    }
    const mr_grid g = mr_grid_image(nf);
    CHECK_OK(mr_nudft_field_forward(&g, traj, t, f, x, m, out, 0));
    for (int64_t k = 0; k < m; k++) {
        double phi = 1;
        for (int a = 0; a < 2; a++) {
            const double u = M_PI * traj[3 * k + a] / G;
            phi *= u == 0 ? 1 : sin(u) / u;
        }
        out[2 * k] = (float)(out[2 * k] * phi / n);
        out[2 * k + 1] = (float)(out[2 * k + 1] * phi / n);
    }
    free(truth);
    free(f);
    free(x);
}

/* the simulated data of field p against the fine sums, relative to the same without a field */
static void compare(const char *what, const char *spec, int64_t ncoils)
{
    const int64_t matrix[3] = {64, 64, 1};
    mr_traj_params tp;
    mr_traj_params_default(&tp, MR_TRAJ_SPIRAL2D, matrix);
    tp.interleaves = 8;
    tp.readout = mr_traj_spiral_readout(&tp, 0.5);
    int64_t m;
    CHECK_OK(mr_traj_count(&tp, &m));
    float *traj = malloc((size_t)m * 3 * sizeof(float)), *t = malloc((size_t)m * sizeof(float));
    CHECK_OK(mr_traj_generate(&tp, traj));
    int64_t echo = -1;
    CHECK_OK(mr_field_times(traj, m, tp.readout, 1e-3, 10e-6, t, &echo));
    CHECK(echo == 0); /* spiral-out */
    mr_coils *coils = NULL;
    if (ncoils)
        CHECK_OK(mr_coils_create(&coils, MR_PHANTOM_SL2D, ncoils));
    const int64_t nc = ncoils ? ncoils : 1;
    mr_field_params p, none;
    CHECK_OK(mr_field_parse(spec, &p));
    mr_field_params_default(&none);
    float *d = malloc((size_t)(nc * m) * 2 * sizeof(float)), *d0 = malloc((size_t)(nc * m) * 2 * sizeof(float));
    float *ref = malloc((size_t)m * 2 * sizeof(float)), *ref0 = malloc((size_t)m * 2 * sizeof(float));
    CHECK_OK(mr_field_kspace(&p, MR_PHANTOM_SL2D, coils, matrix, traj, t, m, d, 0));
    CHECK_OK(mr_field_kspace(&none, MR_PHANTOM_SL2D, coils, matrix, traj, t, m, d0, 0));
    for (int64_t c = 0; c < nc; c++) {
        fine_sums(&p, coils, c, traj, t, m, ref);
        fine_sums(&none, coils, c, traj, t, m, ref0);
        const double e = test_rel_l2_ff(d + 2 * c * m, ref, 2 * m), e0 = test_rel_l2_ff(d0 + 2 * c * m, ref0, 2 * m);
        const double moved = test_rel_l2_ff(d + 2 * c * m, d0 + 2 * c * m, 2 * m);
        char label[256];
        printf("%s coil %lld: rel L2 to the %dx%d fine sums %.3e (without field %.3e); the field changes the data "
               "by %.3f\n",
               what, (long long)c, G, G, e, e0, moved);
        snprintf(label, sizeof label, "%s coil %lld: rel L2 simulated vs fine sums", what, (long long)c);
        CHECK_LE(label, e, 1.1 * e0 + 1e-5);
        snprintf(label, sizeof label, "%s coil %lld: the field changes the data (rel L2)", what, (long long)c);
        CHECK_GE(label, moved, 0.1);
    }
    mr_coils_free(coils);
    free(traj);
    free(t);
    free(d);
    free(d0);
    free(ref);
    free(ref0);
}

static void scan_and_parser(void)
{
    const int64_t matrix[3] = {32, 32, 1};
    mr_scan_params sp;
    mr_scan_params_default(&sp);
    mr_traj_params_default(&sp.traj, MR_TRAJ_RADIAL2D, matrix);
    sp.truth = 0;
    CHECK_OK(mr_field_parse("c=5,x=40", &sp.field));
    mr_kspace *ks = NULL;
    CHECK(mr_scan_simulate(&sp, &ks) == MR_EINVAL && strstr(mr_last_error(), "timing"));
    sp.dwell_s = 5e-6;
    CHECK_OK(mr_scan_simulate(&sp, &ks));
    if (ks) {
        CHECK(ks->fieldmap && ks->time);
        /* the echo of a radial spoke is its middle sample: t = 0 there */
        CHECK(ks->time[sp.traj.readout / 2] == 0.0f);
        double worst = 0;
        for (int64_t iy = 0; iy < 32; iy++)
            for (int64_t ix = 0; ix < 32; ix++)
                worst = fmax(worst, fabs(ks->fieldmap[iy * 32 + ix] - (5 + 40 * (ix - 16) / 32.0)));
        CHECK_LE("stored field map vs c + g.r at the voxel centres (Hz)", worst, 1e-5);
    }
    mr_kspace_free(ks);
    sp.traj.kind = MR_TRAJ_RANDOM2D;
    CHECK(mr_scan_simulate(&sp, &ks) == MR_EINVAL && strstr(mr_last_error(), "random"));

    mr_field_params p;
    CHECK_OK(mr_field_parse("c=1,x=2,y=3,z=4,blob=5,sigma=0.2,at=0.1:-0.2:0.3,oversample=3", &p));
    CHECK(p.offset_hz == 1 && p.grad_hz[0] == 2 && p.grad_hz[1] == 3 && p.grad_hz[2] == 4 && p.blob_hz == 5 &&
          p.blob_sigma == 0.2 && p.blob_at[2] == 0.3 && p.oversample == 3);
    CHECK(mr_field_nonlinear(&p) && mr_field_present(&p));
    static const char *const bad[] = {"q=1", "c=abc", "x", "sigma=0", "at=1", "at=0:2", "oversample=0", "c=1e9", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(mr_field_parse(bad[i], &p) == MR_EINVAL);
        printf("'%s' -> %s\n", bad[i], mr_last_error());
    }
}

int main(void)
{
    compare("linear 2D", "c=20,x=150,y=50", 0);
    compare("linear + bump 2D", "c=20,x=150,y=50,blob=60,sigma=0.12,at=0.05:0.15", 0);
    compare("linear 2D, 2 coils", "c=-30,x=-80,y=120", 2);
    scan_and_parser();
    return test_finish("test_phantom_field");
}
