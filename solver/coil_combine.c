#include "coil_combine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

mr_status mr_combine_init(mr_combine *c, int64_t n, int64_t ncoils, const float *maps)
{
    memset(c, 0, sizeof *c);
    c->n = n;
    c->ncoils = ncoils;
    c->maps = maps;
    c->acc = calloc((size_t)n * (maps ? 2 : 1), sizeof(double));
    return c->acc ? MR_OK : mr_error(MR_ENOMEM, "out of memory for a %lld-voxel coil combination", (long long)n);
}

void mr_combine_add(mr_combine *c, int64_t coil, const float *x)
{
    if (!c->maps) {
        for (int64_t v = 0; v < c->n; v++)
            c->acc[v] += (double)x[2 * v] * x[2 * v] + (double)x[2 * v + 1] * x[2 * v + 1];
        return;
    }
    const float *s = c->maps + 2 * coil * c->n;
    for (int64_t v = 0; v < c->n; v++) { /* conj(S) x */
        c->acc[2 * v] += (double)s[2 * v] * x[2 * v] + (double)s[2 * v + 1] * x[2 * v + 1];
        c->acc[2 * v + 1] += (double)s[2 * v] * x[2 * v + 1] - (double)s[2 * v + 1] * x[2 * v];
    }
}

void mr_combine_finish(const mr_combine *c, float *img)
{
    for (int64_t v = 0; v < c->n; v++) {
        if (!c->maps) {
            img[2 * v] = (float)sqrt(c->acc[v]);
            img[2 * v + 1] = 0.0f;
            continue;
        }
        double s2 = 0;
        for (int64_t k = 0; k < c->ncoils; k++) {
            const float *s = c->maps + 2 * (k * c->n + v);
            s2 += (double)s[0] * s[0] + (double)s[1] * s[1];
        }
        img[2 * v] = s2 > 0 ? (float)(c->acc[2 * v] / s2) : 0.0f;
        img[2 * v + 1] = s2 > 0 ? (float)(c->acc[2 * v + 1] / s2) : 0.0f;
    }
}

void mr_combine_free(mr_combine *c)
{
    free(c->acc);
    c->acc = NULL;
}
