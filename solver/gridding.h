/* Gridding reconstructions: interpolate density-weighted samples onto a Cartesian grid, inverse
 * FFT, crop (and deapodize for Kaiser-Bessel). Image units follow docs/FORMAT.md: with weights
 * w_m equal to the k-space area (cycles/FOV)^2 or volume each sample represents, the image is
 *   img(r_n) ~= sum_m w_m d_m exp(+i 2 pi k_m . r_n),
 * i.e. in the phantom's intensity units. */
#ifndef MR_GRIDDING_H
#define MR_GRIDDING_H

#include <stdint.h>

#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { MR_GRIDDING_BILINEAR = 0, MR_GRIDDING_KB = 1 } mr_gridding_kind;

typedef struct {
    mr_gridding_kind kind;
    double oversample; /* KB: grid oversampling factor (default 2; e.g. 1.25); bilinear uses 1 */
    int width;         /* KB: kernel width in grid cells, 4..8 (default 6) */
    int threads;       /* <= 0: all cores */
} mr_gridding_opts;

void mr_gridding_opts_default(mr_gridding_opts *o);

typedef struct mr_gridding mr_gridding;

/* Plan once per trajectory (kernel tables, FFTW plans); traj [M][3] is copied.
 * *out owned by the caller. */
mr_status mr_gridding_create(mr_gridding **out, const int64_t matrix[3], const float *traj, int64_t m,
                             const mr_gridding_opts *opts);
/* img [Nz][Ny][Nx][2] from data [M][2] with density weights w [M] (NULL: all ones). */
mr_status mr_gridding_apply(mr_gridding *g, const float *data, const float *w, float *img);
void mr_gridding_destroy(mr_gridding *g);

#ifdef __cplusplus
}
#endif
#endif
