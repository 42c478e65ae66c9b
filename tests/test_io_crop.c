/* mr_image_crop_center (io/input.h): cropping an encoded-space image to the reconSpace matrix and
 * padding back keep the centre voxel (index N/2 on every axis, r = 0) in place, for even and odd
 * sizes, 2D and 3D; padding fills zeros; crop then pad then crop is the identity on the kept part. */
#include <stdio.h>
#include <stdlib.h>

#include "io/input.h"
#include "testutil.h"

/* value of voxel (x, y, z) of an n-grid: its position relative to the centre, encoded */
static float tag(int64_t x, int64_t y, int64_t z, const int64_t n[3], int part)
{
    return (float)(((x - n[0] / 2) * 1000 + (y - n[1] / 2)) * 1000 + (z - n[2] / 2)) + (part ? 0.5f : 0.0f);
}

static void run(const int64_t nin[3], const int64_t nout[3])
{
    const int64_t a = nin[0] * nin[1] * nin[2], b = nout[0] * nout[1] * nout[2];
    float *in = malloc((size_t)a * 2 * sizeof *in), *out = malloc((size_t)b * 2 * sizeof *out);
    for (int64_t z = 0; z < nin[2]; z++)
        for (int64_t y = 0; y < nin[1]; y++)
            for (int64_t x = 0; x < nin[0]; x++)
                for (int p = 0; p < 2; p++)
                    in[2 * ((z * nin[1] + y) * nin[0] + x) + p] = tag(x, y, z, nin, p);
    mr_image_crop_center(in, nin, out, nout);
    int64_t bad = 0;
    for (int64_t z = 0; z < nout[2]; z++)
        for (int64_t y = 0; y < nout[1]; y++)
            for (int64_t x = 0; x < nout[0]; x++) {
                /* the same offset from the centre in the input, or outside it */
                const int64_t sx = x - nout[0] / 2 + nin[0] / 2, sy = y - nout[1] / 2 + nin[1] / 2,
                              sz = z - nout[2] / 2 + nin[2] / 2;
                const int inside = sx >= 0 && sy >= 0 && sz >= 0 && sx < nin[0] && sy < nin[1] && sz < nin[2];
                for (int p = 0; p < 2; p++) {
                    const float want = inside ? tag(x, y, z, nout, p) : 0.0f;
                    bad += out[2 * ((z * nout[1] + y) * nout[0] + x) + p] != want;
                }
            }
    CHECK(bad == 0);
    printf("%s: %lldx%lldx%lld -> %lldx%lldx%lld: %lld wrong values\n", bad ? "FAIL" : "ok", (long long)nin[0],
           (long long)nin[1], (long long)nin[2], (long long)nout[0], (long long)nout[1], (long long)nout[2],
           (long long)bad);
    free(in);
    free(out);
}

int main(void)
{
    const int64_t cases[][2][3] = {{{64, 32, 1}, {32, 32, 1}}, {{32, 32, 1}, {64, 32, 1}}, {{9, 7, 1}, {5, 4, 1}},
                                   {{5, 4, 1}, {9, 7, 1}},     {{8, 6, 10}, {4, 6, 5}},     {{7, 7, 7}, {7, 7, 7}}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run(cases[i][0], cases[i][1]);
    return test_finish("test_io_crop");
}
