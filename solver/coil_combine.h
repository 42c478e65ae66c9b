/* Coil combination for the reconstructions that treat coils one by one (per-coil CG with --sens rss,
 * gridding): coil images x_c [n][2] are added one at a time and finished into one image [n][2].
 *
 *   RSS (maps == NULL):  img = sqrt(sum_c |x_c|^2) + 0i                   (magnitude only)
 *   maps S_c:            img = sum_c conj(S_c) x_c / sum_c |S_c|^2        (0 where sum_c |S_c|^2 = 0;
 *                        the least-squares combination when x_c = S_c rho, complex)
 *
 * Ownership: init allocates the accumulator (mr_combine_free releases it); maps are borrowed until
 * finish. */
#ifndef MR_COMBINE_H
#define MR_COMBINE_H

#include <stdint.h>

#include "../base/status.h"

typedef struct {
    int64_t n, ncoils;
    const float *maps; /* [C][n][2] or NULL (RSS) */
    double *acc;       /* [n] (RSS) or [n][2] */
} mr_combine;

mr_status mr_combine_init(mr_combine *c, int64_t n, int64_t ncoils, const float *maps);
void mr_combine_add(mr_combine *c, int64_t coil, const float *x);
void mr_combine_finish(const mr_combine *c, float *img);
void mr_combine_free(mr_combine *c);

#endif
