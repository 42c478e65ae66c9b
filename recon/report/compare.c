#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../io/image_png.h"
#include "plot.h"

#define MR_COMPARE_GAP 4
#define MR_COMPARE_MAX_TILES 8
#define MR_COMPARE_MIN_TILE 256 /* small 2D images are enlarged by an integer factor up to this width */
#define MR_COMPARE_MIN_PANEL 192 /* 3D: each plane enlarged to at least this many pixels (a 64^3 volume: x3) */
#define MR_COMPARE_TEXT 2       /* font scale of the labels */

/* Paint the picture `pix` (pw x ph, real), enlarged zoom times (nearest neighbour), into the
 * canvas at (x0, y0) as grey. */
static void blit(uint8_t *rgb, int w, int x0, int y0, const float *pix, int pw, int ph, int zoom, double hi)
{
    for (int y = 0; y < ph * zoom; y++)
        for (int x = 0; x < pw * zoom; x++) {
            double v = hi > 0 ? pix[(size_t)(y / zoom) * pw + x / zoom] / hi : 0;
            v = v < 0 ? 0 : v > 1 ? 1 : v;
            uint8_t g = (uint8_t)lround(255 * v);
            uint8_t *p = rgb + 3 * ((size_t)(y0 + y) * w + x0 + x);
            p[0] = p[1] = p[2] = g;
        }
}

/* A label in the band above a tile (never over the image). */
static void label(uint8_t *rgb, int w, int h, int x, int y, const char *text)
{
    const uint8_t yellow[3] = {255, 220, 0};
    mr_plot_text(rgb, w, h, x + 2, y, text, yellow, MR_COMPARE_TEXT);
}

mr_status mr_compare_write(const char *path, const int64_t matrix[3], const int64_t *slice, const float *truth,
                           const float *const *imgs, const char *const *names, int nimgs, double window_hi, double gain)
{
    if (nimgs < 1 || nimgs + 1 > MR_COMPARE_MAX_TILES)
        return mr_error(MR_EINVAL, "%s: %d images to compare (1..%d)", path, nimgs, MR_COMPARE_MAX_TILES - 1);
    const int64_t n = matrix[0] * matrix[1] * matrix[2];
    mr_status st = MR_OK;
    float *mag = malloc((size_t)n * sizeof *mag);
    float *tiles[2][MR_COMPARE_MAX_TILES] = {{NULL}};
    uint8_t *rgb = NULL;
    int tw = 0, th = 0;
    if (!mag) {
        st = mr_error(MR_ENOMEM, "%s: out of memory", path);
        goto done;
    }
    /* 2D: tiles narrower than MR_COMPARE_MIN_TILE enlarged; 3D: each plane to MR_COMPARE_MIN_PANEL */
    int zoom = mr_plot_volume_zoom(matrix, MR_COMPARE_MIN_PANEL);
    if (matrix[2] == 1)
        zoom = matrix[0] < MR_COMPARE_MIN_TILE ? (MR_COMPARE_MIN_TILE / (int)matrix[0] < 8 ? MR_COMPARE_MIN_TILE / (int)matrix[0] : 8) : 1;
    const float label_value = (float)(window_hi > 0 ? window_hi : 1);
    const int cols = nimgs + (truth ? 1 : 0), rows = truth ? 2 : 1;
    for (int c = 0; c < cols; c++) {
        int i = truth ? c - 1 : c; /* image index; -1 is the truth */
        for (int64_t v = 0; v < n; v++)
            mag[v] = i < 0 ? fabsf(truth[v]) : hypotf(imgs[i][2 * v], imgs[i][2 * v + 1]);
        st = mr_plot_volume(mag, matrix, slice, zoom, MR_COMPARE_TEXT, label_value, &tiles[0][c], &tw, &th);
        if (st != MR_OK)
            goto done;
        if (truth && i >= 0) {
            for (int64_t v = 0; v < n; v++)
                mag[v] = (float)(gain * fabs((double)mag[v] - fabs((double)truth[v])));
            int tw2, th2;
            st = mr_plot_volume(mag, matrix, slice, zoom, MR_COMPARE_TEXT, label_value, &tiles[1][c], &tw2, &th2);
            if (st != MR_OK)
                goto done;
        }
    }
    /* above every tile a band for its title (a 3D tile brings its own band naming the planes) */
    const int band = MR_PLOT_TEXT_H * MR_COMPARE_TEXT + 6;
    const int w = cols * tw + (cols + 1) * MR_COMPARE_GAP, h = rows * (th + band) + (rows + 1) * MR_COMPARE_GAP;
    rgb = malloc((size_t)w * h * 3);
    if (!rgb) {
        st = mr_error(MR_ENOMEM, "%s: out of memory for a %dx%d picture", path, w, h);
        goto done;
    }
    memset(rgb, 48, (size_t)w * h * 3); /* dark grey gaps */
    char text[64];
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            int x0 = MR_COMPARE_GAP + c * (tw + MR_COMPARE_GAP), y0 = MR_COMPARE_GAP + r * (th + band + MR_COMPARE_GAP) + band;
            int i = truth ? c - 1 : c;
            if (!tiles[r][c])
                continue; /* below the truth */
            blit(rgb, w, x0, y0, tiles[r][c], tw, th, 1, window_hi);
            if (r == 0)
                snprintf(text, sizeof text, "%s", i < 0 ? "Truth" : names[i]);
            else
                snprintf(text, sizeof text, "Error x%g", gain);
            label(rgb, w, h, x0, y0 - band + 3, text);
        }
    st = mr_png_write_rgb(path, rgb, w, h);
done:
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < MR_COMPARE_MAX_TILES; c++)
            free(tiles[r][c]);
    free(mag);
    free(rgb);
    return st;
}
