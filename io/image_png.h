/* PNG output through libpng. Every writer writes to a temporary name and renames when complete. */
#ifndef MR_IMAGE_PNG_H
#define MR_IMAGE_PNG_H

#include <stdint.h>

#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Grayscale PNG of a real image `pix` (row-major, h rows of w, row 0 at the top). Values are
 * mapped linearly from the window [lo, hi] to [0, 2^bitdepth - 1] and clipped. bitdepth 8 or 16. */
mr_status mr_png_write_gray(const char *path, const float *pix, int w, int h, double lo, double hi, int bitdepth);

/* 8-bit RGB PNG from rgb[h][w][3] (plots, montages). */
mr_status mr_png_write_rgb(const char *path, const uint8_t *rgb, int w, int h);

/* Magnitude picture of a volume given as magnitudes mag[Nz][Ny][Nx]: 2D -> the image; 3D -> a
 * montage of the three central orthogonal slices (axial z=Nz/2 | coronal y=Ny/2 | sagittal x=Nx/2)
 * side by side (top-aligned, 4 black columns apart; layout in image_png.c and docs/FORMAT.md).
 * Window [lo, hi]; hi <= lo means [0, max]. */
mr_status mr_png_write_volume(const char *path, const float *mag, const int64_t matrix[3], double lo, double hi,
                              int bitdepth);

#define MR_MONTAGE_GAP 4 /* black columns between the panels of a 3D montage */

/* Montage geometry of mr_png_write_volume and the pixels of it, for callers that compose larger
 * pictures (compare.png, thumbnails): fills out[h][w] (malloc'd, caller frees). */
mr_status mr_volume_montage(const float *mag, const int64_t matrix[3], float **out, int *w, int *h);

/* The same with the planes through voxel at[3] (axial z = at[2], coronal y = at[1], sagittal x = at[0])
 * instead of the centre; at NULL: the centre N/2. MR_EINVAL naming the axis for an index outside it. */
mr_status mr_volume_montage_at(const float *mag, const int64_t matrix[3], const int64_t at[3], float **out, int *w,
                               int *h);

/* Read a grayscale PNG back (tests): *pix malloc'd [h][w] in raw sample units (0..255 or
 * 0..65535); *bitdepth set. Caller frees. */
mr_status mr_png_read_gray(const char *path, float **pix, int *w, int *h, int *bitdepth);

#ifdef __cplusplus
}
#endif
#endif
