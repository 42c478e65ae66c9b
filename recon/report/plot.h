/* Small raster graphics for the report: line plots (convergence.png) and text labels drawn with a
 * built-in 5x7 pixel font on a 9-row cell (digits, upper- and lower-case letters with descenders, a
 * few signs; MR_PLOT_TEXT_H rows tall, 6 columns per character, times the scale). Pictures are 8-bit RGB, rgb[h][w][3], row 0 at the top; written with mr_png_write_rgb. */
#ifndef MR_PLOT_H
#define MR_PLOT_H

#include <stdint.h>

#include "../../base/status.h"

typedef struct {
    const double *y;   /* [n] values at x = 0 .. n-1; borrowed; non-finite values are skipped */
    int n;
    uint8_t color[3];
    int log_scale;     /* axis shows log10(y); values <= 0 are skipped */
    const char *label; /* axis title, drawn in the series' colour */
} mr_plot_series;

#define MR_PLOT_TEXT_H 9

/* Draw text at (x, y) (top-left corner) with each font pixel as a scale x scale block; pixels
 * outside the picture are clipped. Returns the width drawn in pixels. */
int mr_plot_text(uint8_t *rgb, int w, int h, int x, int y, const char *text, const uint8_t color[3], int scale);

/* The same into a grey picture pix[h][w]: the text's pixels get `value`. */
int mr_plot_text_grey(float *pix, int w, int h, int x, int y, const char *text, float value, int scale);

/* The picture of a volume, magnitudes mag[Nz][Ny][Nx] (docs/FORMAT.md, Orientation): 2D -> the image
 * (x right, y down) enlarged zoom times; 3D -> the axial, coronal and sagittal planes through voxel at
 * (NULL: the centre N/2), side by side (io/image_png.h's montage) enlarged zoom times, under a band that
 * names each plane and its index ("axial z=32") in text_scale font pixels, drawn with label_value (the
 * band is 0). *out (malloc'd grey [h][w], mag's units) is the caller's. MR_EINVAL for `at` outside. */
mr_status mr_plot_volume(const float *mag, const int64_t matrix[3], const int64_t at[3], int zoom, int text_scale,
                         float label_value, float **out, int *w, int *h);

/* The zoom (1..8) that makes the longest edge of a volume's panels at least min_edge pixels. */
int mr_plot_volume_zoom(const int64_t matrix[3], int min_edge);

/* Fill a w x h picture: white background, a frame, grid lines, and 1 or 2 series against the
 * index; series 0 uses the left axis, series 1 (optional) the right axis, each with its own
 * range and tick labels. xlabel names the horizontal axis. MR_EINVAL for ns outside 1..2 or a
 * picture smaller than 200 x 120. */
mr_status mr_plot_lines(uint8_t *rgb, int w, int h, const mr_plot_series *s, int ns, const char *xlabel,
                        const char *title);

/* mr_plot_lines into a new picture, written atomically as PNG to path. */
mr_status mr_plot_write(const char *path, int w, int h, const mr_plot_series *s, int ns, const char *xlabel,
                        const char *title);

#endif
