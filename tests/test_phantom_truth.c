/* Truth images: the voxel-averaged truth against a finer direct average; the band-limited truth
 * against a direct double-precision Fourier sum (checks the FFT layout, phases and Nyquist
 * weights), real, and close to the voxel-averaged truth away from edges; orientation. */
#include <math.h>
#include <stdlib.h>

#include "phantoms/shepp_logan.h"
#include "testutil.h"

#define PI 3.14159265358979323846

/* direct band-limited value at voxel (ix, iy, iz): sum_k w(k) F(k) exp(+i 2 pi k.r) */
static void direct_bl(mr_phantom_kind kind, const int64_t n[3], const int64_t v[3], double out[2])
{
    double r[3], re = 0, im = 0;
    for (int a = 0; a < 3; a++)
        r[a] = (double)(v[a] - n[a] / 2) / (double)n[a];
    int64_t h[3];
    for (int a = 0; a < 3; a++)
        h[a] = n[a] / 2;
    for (int64_t kz = -h[2]; kz <= h[2]; kz++)
        for (int64_t ky = -h[1]; ky <= h[1]; ky++)
            for (int64_t kx = -h[0]; kx <= h[0]; kx++) {
                double k[3] = {(double)kx, (double)ky, (double)kz}, f[2], w = 1;
                int64_t kk[3] = {kx, ky, kz};
                for (int a = 0; a < 3; a++)
                    if (n[a] > 1 && n[a] % 2 == 0 && (kk[a] == h[a] || kk[a] == -h[a]))
                        w *= 0.5;
                mr_phantom_kspace_at(kind, k, f);
                double ph = 2 * PI * (k[0] * r[0] + k[1] * r[1] + k[2] * r[2]);
                re += w * (f[0] * cos(ph) - f[1] * sin(ph));
                im += w * (f[0] * sin(ph) + f[1] * cos(ph));
            }
    out[0] = re;
    out[1] = im;
}

static void check_bl_direct(mr_phantom_kind kind, const int64_t n[3], uint64_t *st)
{
    int64_t nv = n[0] * n[1] * n[2];
    float *bl = malloc((size_t)nv * sizeof *bl);
    double max_imag = -1;
    CHECK_OK(mr_phantom_truth_bandlimited(kind, n, bl, &max_imag));
    printf("%s %lldx%lldx%lld: max |imag| of the band-limited truth %.3g\n", mr_phantom_name(kind), (long long)n[0],
           (long long)n[1], (long long)n[2], max_imag);
    CHECK_LE("band-limited truth: max |imaginary part| (real phantom, float FFT)", max_imag, 1e-5);
    double worst = 0, wim = 0;
    for (int i = 0; i < 6; i++) {
        int64_t v[3];
        for (int a = 0; a < 3; a++)
            v[a] = (int64_t)(test_uniform(st) * (double)n[a]);
        if (i == 0)
            v[0] = v[1] = v[2] = 0;
        double d[2];
        direct_bl(kind, n, v, d);
        worst = fmax(worst, fabs(bl[(v[2] * n[1] + v[1]) * n[0] + v[0]] - d[0]));
        wim = fmax(wim, fabs(d[1]));
    }
    CHECK_LE("band-limited truth vs direct double sum (float FFT rounding)", worst, 2e-5);
    CHECK_LE("direct sum: |imaginary part| (Nyquist weights make it real)", wim, 1e-12);
    free(bl);
}

/* interior: voxels whose (2e+1)^d neighbourhood in the voxel-averaged truth is constant */
static void check_interior(mr_phantom_kind kind, const int64_t n[3], int e, double mean_bound, double max_bound)
{
    int64_t nv = n[0] * n[1] * n[2];
    float *t = malloc((size_t)nv * sizeof *t), *bl = malloc((size_t)nv * sizeof *bl);
    CHECK_OK(mr_phantom_truth(kind, n, t));
    CHECK_OK(mr_phantom_truth_bandlimited(kind, n, bl, NULL));
    int ez = n[2] > 1 ? e : 0;
    double sum = 0, worst = 0;
    int64_t count = 0;
    for (int64_t z = ez; z < n[2] - ez; z++)
        for (int64_t y = e; y < n[1] - e; y++)
            for (int64_t x = e; x < n[0] - e; x++) {
                float c = t[(z * n[1] + y) * n[0] + x];
                int flat = 1;
                for (int64_t dz = -ez; dz <= ez && flat; dz++)
                    for (int64_t dy = -e; dy <= e && flat; dy++)
                        for (int64_t dx = -e; dx <= e && flat; dx++)
                            flat = t[((z + dz) * n[1] + y + dy) * n[0] + x + dx] == c;
                if (!flat)
                    continue;
                double d = fabs(bl[(z * n[1] + y) * n[0] + x] - c);
                sum += d;
                worst = fmax(worst, d);
                count++;
            }
    printf("%s interior (%lld voxels, no edge within %d): mean |bl - avg| %.4g, max %.4g\n", mr_phantom_name(kind),
           (long long)count, e, sum / (double)count, worst);
    CHECK_GE("interior voxels", count, nv / 10);
    CHECK_LE("interior mean |band-limited - voxel-averaged| (Gibbs tails)", sum / (double)count, mean_bound);
    CHECK_LE("interior max |band-limited - voxel-averaged| (Gibbs tails)", worst, max_bound);
    /* mass: sum of the voxel-averaged truth / N = F(0) up to the sub-sampled boundary error */
    double mass = 0, f0[2], k0[3] = {0, 0, 0};
    for (int64_t i = 0; i < nv; i++)
        mass += t[i];
    mr_phantom_kspace_at(kind, k0, f0);
    CHECK_LE("|sum(truth)/N - F(0)| / F(0)", fabs(mass / (double)nv - f0[0]) / f0[0], 0.01);
    free(t);
    free(bl);
}

static void check_average(uint64_t *st)
{
    const int64_t n[3] = {64, 64, 1};
    float *t = malloc(64 * 64 * sizeof *t);
    CHECK_OK(mr_phantom_truth(MR_PHANTOM_SL2D, n, t));
    /* against a 64 x 64 sub-sampled average of random voxels: only sub-cells straddling a
     * boundary are misclassified; one boundary crossing a voxel straddles at most 2 x 8 of the
     * 8 x 8 sub-cells, each worth |jump|/64 <= 1/64 of the average, so |diff| <= 16/64 = 0.25 */
    double worst = 0, row[64];
    for (int i = 0; i < 200; i++) {
        int64_t x = (int64_t)(test_uniform(st) * 64), y = (int64_t)(test_uniform(st) * 64);
        double acc = 0;
        for (int sy = 0; sy < 64; sy++) {
            double r0[3] = {(x - 32 + (0.5 / 64 - 0.5)) / 64.0, (y - 32 + ((sy + 0.5) / 64 - 0.5)) / 64.0, 0};
            mr_phantom_values_row(MR_PHANTOM_SL2D, r0, 1.0 / 64 / 64, 64, row);
            for (int sx = 0; sx < 64; sx++)
                acc += row[sx];
        }
        worst = fmax(worst, fabs(t[y * 64 + x] - acc / 4096));
    }
    CHECK_LE("voxel average (8x8) vs 64x64 sub-sampled average, 200 voxels", worst, 0.25);
    /* orientation: the three small ellipses (textbook y = -0.605) sit at the bottom of the picture
     * (large iy), where the value is 0.3; the same distance above the centre it is 0.2 */
    const int64_t n2[3] = {128, 128, 1};
    float *t2 = malloc(128 * 128 * sizeof *t2);
    CHECK_OK(mr_phantom_truth(MR_PHANTOM_SL2D, n2, t2));
    printf("orientation: f(iy=103) = %.3f, f(iy=25) = %.3f\n", t2[103 * 128 + 64], t2[25 * 128 + 64]);
    CHECK_LE("bottom small ellipse |f - 0.3|", fabs(t2[103 * 128 + 64] - 0.3), 1e-6);
    CHECK_LE("top, same distance |f - 0.2|", fabs(t2[25 * 128 + 64] - 0.2), 1e-6);
    free(t);
    free(t2);
    mr_status s = mr_phantom_truth(MR_PHANTOM_SL2D, (const int64_t[3]){8, 8, 2}, NULL);
    CHECK(s == MR_EINVAL);
}

int main(void)
{
    uint64_t st = test_seed();
    check_bl_direct(MR_PHANTOM_SL2D, (const int64_t[3]){32, 32, 1}, &st);
    check_bl_direct(MR_PHANTOM_SL2D, (const int64_t[3]){25, 18, 1}, &st);
    check_bl_direct(MR_PHANTOM_SL3D, (const int64_t[3]){12, 10, 8}, &st);
    check_interior(MR_PHANTOM_SL2D, (const int64_t[3]){128, 128, 1}, 4, 0.02, 0.1);
    check_interior(MR_PHANTOM_SL3D, (const int64_t[3]){48, 48, 48}, 3, 0.03, 0.15);
    check_average(&st);
    return test_finish("test_phantom_truth");
}
