/* compare.png: the methods side by side. Top row: truth | method 1 | method 2 | ...; bottom row:
 * the error maps |I - I0| multiplied by `gain` under the same window (empty tile under the
 * truth). 3D volumes are shown as the montage of the three planes through the centre
 * (mr_volume_montage), each plane at least 192 pixels on its longest edge (an integer zoom, nearest
 * neighbour, at most 8), labelled with the plane and its index; 2D tiles narrower than 256 pixels are
 * enlarged likewise. Every label sits in a band above its tile, never over the image. Without a truth:
 * one row of the methods. */
#ifndef MR_COMPARE_H
#define MR_COMPARE_H

#include <stdint.h>

#include "../../base/status.h"

/* truth: real [Nz][Ny][Nx] or NULL; imgs[i]: complex [Nz][Ny][Nx][2]; names[i]: tile labels.
 * Grey levels map [0, window_hi] to 0..255 (clipped). All borrowed. Written atomically. */
/* slice: the planes of a 3D volume through voxel {x, y, z}, or NULL: the centre. */
mr_status mr_compare_write(const char *path, const int64_t matrix[3], const int64_t *slice, const float *truth,
                           const float *const *imgs, const char *const *names, int nimgs, double window_hi, double gain);

#endif
