/* Comparing coil maps voxel by voxel, for the coil-map tests and tools/tool_sens_maps.c (header-only, no
 * test harness needed). Maps are [C][N][2] floats. */
#ifndef MR_MAPS_TESTUTIL_H
#define MR_MAPS_TESTUTIL_H

#include <math.h>
#include <stdint.h>

/* At voxel v: ns = ||s||^2, nt = ||t||^2 and the phase-free distance of the unit maps,
 * sqrt(2 - 2 |<s, t>| / (||s|| ||t||)) (0 when either is 0). */
static inline double maps_distance(const float *s, const float *t, int64_t C, int64_t N, int64_t v, double *ns,
                                   double *nt)
{
    double a = 0, b = 0, pr = 0, pi = 0;
    for (int64_t c = 0; c < C; c++) {
        const float *x = s + 2 * (c * N + v), *y = t + 2 * (c * N + v);
        a += (double)x[0] * x[0] + (double)x[1] * x[1];
        b += (double)y[0] * y[0] + (double)y[1] * y[1];
        pr += (double)x[0] * y[0] + (double)x[1] * y[1];
        pi += (double)x[0] * y[1] - (double)x[1] * y[0];
    }
    *ns = a;
    *nt = b;
    if (!(a > 0 && b > 0))
        return 0;
    return sqrt(fmax(0.0, 2 - 2 * sqrt(pr * pr + pi * pi) / sqrt(a * b)));
}

#endif
