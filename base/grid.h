/* The voxel grids every layer shares, and the size limits of a scan. The bottom layer: it includes
 * nothing of mrirecon's but base/status.h, so that solver/, gpu/ and io/ can all use it. */
#ifndef MR_GRID_H
#define MR_GRID_H

#include <stdint.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest matrix edge and voxel count the reader accepts (sanity bounds, see docs/FORMAT.md). */
#define MR_MAX_MATRIX_EDGE 4096
#define MR_MAX_VOXELS ((int64_t)1 << 31)
#define MR_MAX_SAMPLES ((int64_t)1 << 31)
#define MR_MAX_COILS 1024

/* Check the matrix: each edge 1..MR_MAX_MATRIX_EDGE and the product within MR_MAX_VOXELS,
 * computed without overflow. `what` names the source in the message. */
mr_status mr_matrix_check(const int64_t matrix[3], const char *what);

/* The arguments of an image writer: MR_EINVAL naming "PATH: image" when the matrix fails
 * mr_matrix_check, or "PATH: no image to write" when img is NULL. */
mr_status mr_image_write_check(const char *path, const void *img, const int64_t matrix[3]);

/* A regular grid of voxel positions in FOV units: along axis a, index i sits at
 * r = (i - center[a]) / scale[a].  Image grid (F^H d, forward): n = N, center = N/2 (integer
 * division), scale = N.  Q grid (Toeplitz): n = 2N, center = N, scale = N, on every axis with
 * N > 1 (a 2D scan keeps n[2] = 1, center[2] = 0). Stored x fastest: index = (iz*ny + iy)*nx + ix. */
typedef struct {
    int64_t n[3];
    int64_t center[3];
    int64_t scale[3];
} mr_grid;

/* The image grid and the Q grid of a matrix, as described above. */
static inline mr_grid mr_grid_image(const int64_t matrix[3])
{
    mr_grid g;
    for (int a = 0; a < 3; a++) {
        g.n[a] = matrix[a];
        g.center[a] = matrix[a] / 2;
        g.scale[a] = matrix[a];
    }
    return g;
}

static inline mr_grid mr_grid_q(const int64_t matrix[3])
{
    mr_grid g;
    for (int a = 0; a < 3; a++) {
        int up = matrix[a] > 1;
        g.n[a] = up ? 2 * matrix[a] : 1;
        g.center[a] = up ? matrix[a] : 0;
        g.scale[a] = matrix[a];
    }
    return g;
}

static inline int64_t mr_grid_size(const mr_grid *g) { return g->n[0] * g->n[1] * g->n[2]; }

#ifdef __cplusplus
}
#endif
#endif
