#include "plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../io/image_png.h"

/* 5x7 glyphs on a 9-row cell: rows 0..6 above the baseline, rows 7..8 the descenders of g, j, p, q, y
 * (without them g read as 9 and q as a raised 9); bit 4 = leftmost column. */
#define GLYPH_ROWS 9
typedef struct {
    char c;
    uint8_t rows[GLYPH_ROWS];
} glyph;

static const glyph font[] = {
    {'0', {0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E}}, {'1', {0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E}},
    {'2', {0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F}}, {'3', {0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E}},
    {'4', {0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02}}, {'5', {0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E}},
    {'6', {0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E}}, {'7', {0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08}},
    {'8', {0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E}}, {'9', {0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C}},
    {'A', {0x0E, 0x11, 0x11, 0x11, 0x1F, 0x11, 0x11}}, {'B', {0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E}},
    {'C', {0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E}}, {'D', {0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C}},
    {'E', {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F}}, {'F', {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10}},
    {'G', {0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F}}, {'H', {0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11}},
    {'I', {0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E}}, {'J', {0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C}},
    {'K', {0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11}}, {'L', {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F}},
    {'M', {0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11}}, {'N', {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11}},
    {'O', {0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}}, {'P', {0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10}},
    {'Q', {0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D}}, {'R', {0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11}},
    {'S', {0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E}}, {'T', {0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04}},
    {'U', {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}}, {'V', {0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04}},
    {'W', {0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A}}, {'X', {0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11}},
    {'Y', {0x11, 0x11, 0x11, 0x0A, 0x04, 0x04, 0x04}}, {'Z', {0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F}},
    {'.', {0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C}}, {'-', {0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00}},
    {'+', {0x00, 0x04, 0x04, 0x1F, 0x04, 0x04, 0x00}}, {':', {0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x0C, 0x00}},
    {'/', {0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00}}, {'=', {0x00, 0x00, 0x1F, 0x00, 0x1F, 0x00, 0x00}},
    {'(', {0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02}}, {')', {0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08}},
    {'|', {0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04}}, {'_', {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1F}},
    {'%', {0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03}}, {',', {0x00, 0x00, 0x00, 0x00, 0x0C, 0x04, 0x08}},
    {'a', {0x00, 0x00, 0x0E, 0x01, 0x0F, 0x11, 0x0F}}, {'b', {0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x1E}},
    {'c', {0x00, 0x00, 0x0E, 0x10, 0x10, 0x11, 0x0E}}, {'d', {0x01, 0x01, 0x0D, 0x13, 0x11, 0x11, 0x0F}},
    {'e', {0x00, 0x00, 0x0E, 0x11, 0x1F, 0x10, 0x0E}}, {'f', {0x06, 0x09, 0x08, 0x1C, 0x08, 0x08, 0x08}},
    {'g', {0x00, 0x00, 0x0F, 0x11, 0x11, 0x11, 0x0F, 0x01, 0x0E}}, {'h', {0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x11}},
    {'i', {0x04, 0x00, 0x0C, 0x04, 0x04, 0x04, 0x0E}}, {'j', {0x02, 0x00, 0x06, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C}},
    {'k', {0x10, 0x10, 0x12, 0x14, 0x18, 0x14, 0x12}}, {'l', {0x0C, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E}},
    {'m', {0x00, 0x00, 0x1A, 0x15, 0x15, 0x11, 0x11}}, {'n', {0x00, 0x00, 0x16, 0x19, 0x11, 0x11, 0x11}},
    {'o', {0x00, 0x00, 0x0E, 0x11, 0x11, 0x11, 0x0E}}, {'p', {0x00, 0x00, 0x1E, 0x11, 0x11, 0x11, 0x1E, 0x10, 0x10}},
    {'q', {0x00, 0x00, 0x0F, 0x11, 0x11, 0x11, 0x0F, 0x01, 0x01}}, {'r', {0x00, 0x00, 0x16, 0x19, 0x10, 0x10, 0x10}},
    {'s', {0x00, 0x00, 0x0F, 0x10, 0x0E, 0x01, 0x1E}}, {'t', {0x08, 0x08, 0x1C, 0x08, 0x08, 0x09, 0x06}},
    {'u', {0x00, 0x00, 0x11, 0x11, 0x11, 0x13, 0x0D}}, {'v', {0x00, 0x00, 0x11, 0x11, 0x11, 0x0A, 0x04}},
    {'w', {0x00, 0x00, 0x11, 0x11, 0x15, 0x15, 0x0A}}, {'x', {0x00, 0x00, 0x11, 0x0A, 0x04, 0x0A, 0x11}},
    {'y', {0x00, 0x00, 0x11, 0x11, 0x11, 0x11, 0x0F, 0x01, 0x0E}}, {'z', {0x00, 0x00, 0x1F, 0x02, 0x04, 0x08, 0x1F}},
};

static const uint8_t *glyph_rows(char c)
{
    for (size_t i = 0; i < sizeof font / sizeof font[0]; i++)
        if (font[i].c == c)
            return font[i].rows;
    return NULL; /* space and unknown characters: blank */
}

static void put(uint8_t *rgb, int w, int h, int x, int y, const uint8_t c[3])
{
    if (x < 0 || y < 0 || x >= w || y >= h)
        return;
    memcpy(rgb + 3 * ((size_t)y * w + x), c, 3);
}

/* Every pixel of text at (x, y) in font pixels of scale x scale: paint(ctx, px, py) for each; returns
 * the width. One walk for the RGB and the grey canvases. */
static int text_walk(int x, int y, const char *text, int scale, void (*paint)(void *ctx, int px, int py), void *ctx)
{
    int x0 = x;
    for (const char *p = text; *p; p++) {
        const uint8_t *rows = glyph_rows(*p);
        for (int r = 0; rows && r < GLYPH_ROWS; r++)
            for (int col = 0; col < 5; col++)
                if (rows[r] & (0x10 >> col))
                    for (int dy = 0; dy < scale; dy++)
                        for (int dx = 0; dx < scale; dx++)
                            paint(ctx, x + col * scale + dx, y + r * scale + dy);
        x += 6 * scale;
    }
    return x - x0;
}

typedef struct {
    uint8_t *rgb;
    float *grey;
    int w, h;
    const uint8_t *color;
    float value;
} canvas;

static void paint_rgb(void *ctx, int x, int y)
{
    const canvas *c = ctx;
    put(c->rgb, c->w, c->h, x, y, c->color);
}

static void paint_grey(void *ctx, int x, int y)
{
    const canvas *c = ctx;
    if (x >= 0 && y >= 0 && x < c->w && y < c->h)
        c->grey[(size_t)y * (size_t)c->w + (size_t)x] = c->value;
}

int mr_plot_text(uint8_t *rgb, int w, int h, int x, int y, const char *text, const uint8_t color[3], int scale)
{
    canvas c = {rgb, NULL, w, h, color, 0};
    return text_walk(x, y, text, scale, paint_rgb, &c);
}

int mr_plot_text_grey(float *pix, int w, int h, int x, int y, const char *text, float value, int scale)
{
    canvas c = {NULL, pix, w, h, NULL, value};
    return text_walk(x, y, text, scale, paint_grey, &c);
}

int mr_plot_volume_zoom(const int64_t matrix[3], int min_edge)
{
    int64_t edge = matrix[0];
    for (int a = 1; a < 3; a++)
        if (matrix[a] > 1 && matrix[a] > edge)
            edge = matrix[a];
    int64_t z = (min_edge + edge - 1) / edge;
    return z < 1 ? 1 : z > 8 ? 8 : (int)z;
}

mr_status mr_plot_volume(const float *mag, const int64_t matrix[3], const int64_t at[3], int zoom, int text_scale,
                         float label_value, float **out, int *w, int *h)
{
    *out = NULL;
    float *m;
    int mw, mh;
    mr_status st = mr_volume_montage_at(mag, matrix, at, &m, &mw, &mh);
    if (st != MR_OK)
        return st;
    zoom = zoom < 1 ? 1 : zoom;
    const int is3d = matrix[2] > 1;
    const int band = is3d ? MR_PLOT_TEXT_H * text_scale + 6 : 0;
    const int W = mw * zoom, H = mh * zoom + band;
    float *pix = calloc((size_t)W * (size_t)H, sizeof *pix);
    if (!pix) {
        free(m);
        return mr_error(MR_ENOMEM, "out of memory for a %dx%d picture", W, H);
    }
    for (int y = 0; y < mh * zoom; y++)
        for (int x = 0; x < W; x++)
            pix[(size_t)(y + band) * (size_t)W + (size_t)x] = m[(size_t)(y / zoom) * (size_t)mw + (size_t)(x / zoom)];
    free(m);
    if (is3d) { /* the plane and its index above each panel (the montage layout of io/image_png.h) */
        const int64_t c[3] = {at ? at[0] : matrix[0] / 2, at ? at[1] : matrix[1] / 2, at ? at[2] : matrix[2] / 2};
        const int64_t x0[3] = {0, matrix[0] + MR_MONTAGE_GAP, 2 * matrix[0] + 2 * MR_MONTAGE_GAP};
        char text[64];
        snprintf(text, sizeof text, "axial z=%lld", (long long)c[2]);
        mr_plot_text_grey(pix, W, H, (int)x0[0] * zoom + 2, 3, text, label_value, text_scale);
        snprintf(text, sizeof text, "coronal y=%lld", (long long)c[1]);
        mr_plot_text_grey(pix, W, H, (int)x0[1] * zoom + 2, 3, text, label_value, text_scale);
        snprintf(text, sizeof text, "sagittal x=%lld", (long long)c[0]);
        mr_plot_text_grey(pix, W, H, (int)x0[2] * zoom + 2, 3, text, label_value, text_scale);
    }
    *out = pix;
    *w = W;
    *h = H;
    return MR_OK;
}

static int text_width(const char *text, int scale) { return (int)strlen(text) * 6 * scale; }

static void line(uint8_t *rgb, int w, int h, int x0, int y0, int x1, int y1, const uint8_t c[3], int thick)
{
    int dx = abs(x1 - x0), dy = -abs(y1 - y0);
    int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1, err = dx + dy;
    for (;;) {
        for (int a = 0; a < thick; a++)
            for (int b = 0; b < thick; b++)
                put(rgb, w, h, x0 + a - thick / 2, y0 + b - thick / 2, c);
        if (x0 == x1 && y0 == y1)
            break;
        int e2 = 2 * err;
        if (e2 >= dy) {
            err += dy;
            x0 += sx;
        }
        if (e2 <= dx) {
            err += dx;
            y0 += sy;
        }
    }
}

/* A "nice" step (1, 2 or 5 times a power of ten) giving about `target` intervals over span. */
static double nice_step(double span, int target)
{
    double raw = span / target;
    double p = pow(10.0, floor(log10(raw)));
    double f = raw / p;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

static int usable(const mr_plot_series *s, int i, double *v)
{
    double y = s->y[i];
    if (!isfinite(y) || (s->log_scale && y <= 0))
        return 0;
    *v = s->log_scale ? log10(y) : y;
    return 1;
}

typedef struct {
    double lo, hi;
} range;

static range series_range(const mr_plot_series *s)
{
    range r = {INFINITY, -INFINITY};
    double v;
    for (int i = 0; i < s->n; i++)
        if (usable(s, i, &v)) {
            r.lo = fmin(r.lo, v);
            r.hi = fmax(r.hi, v);
        }
    if (!(r.lo <= r.hi)) {
        r.lo = 0;
        r.hi = 1;
    }
    if (s->log_scale) { /* whole decades */
        r.lo = floor(r.lo);
        r.hi = ceil(r.hi);
    } else {
        double pad = 0.05 * (r.hi - r.lo);
        r.lo -= pad;
        r.hi += pad;
    }
    if (r.hi - r.lo < 1e-12) {
        r.lo -= 0.5;
        r.hi += 0.5;
    }
    return r;
}

static void tick_label(char *buf, size_t size, double v, int log_scale, double step)
{
    if (log_scale)
        snprintf(buf, size, "1e%d", (int)lround(v));
    else if (step >= 1)
        snprintf(buf, size, "%.0f", v);
    else
        snprintf(buf, size, "%.*f", (int)ceil(-log10(step)), v);
}

mr_status mr_plot_lines(uint8_t *rgb, int w, int h, const mr_plot_series *s, int ns, const char *xlabel,
                        const char *title)
{
    if (ns < 1 || ns > 2 || w < 200 || h < 120)
        return mr_error(MR_EINVAL, "plot: %d series on %dx%d pixels (expected 1..2 series, at least 200x120)", ns, w,
                        h);
    const int sc = 2, ch = 7 * sc; /* font scale and character height */
    const int left = 6 * sc * 6 + 16, right = ns > 1 ? left : 24, top = ch + 16, bottom = 2 * ch + 24;
    const int pw = w - left - right, ph = h - top - bottom;
    const uint8_t black[3] = {0, 0, 0}, grid[3] = {225, 225, 225};
    memset(rgb, 255, (size_t)w * h * 3);

    int n = 0;
    for (int k = 0; k < ns; k++)
        n = s[k].n > n ? s[k].n : n;
    double xmax = n > 1 ? n - 1 : 1;
    double xstep = nice_step(xmax, 6);
    if (xstep < 1)
        xstep = 1;
    char buf[64];
    for (double xv = 0; xv <= xmax + 1e-9; xv += xstep) {
        int px = left + (int)lround(xv / xmax * (pw - 1));
        line(rgb, w, h, px, top, px, top + ph - 1, grid, 1);
        snprintf(buf, sizeof buf, "%.0f", xv);
        mr_plot_text(rgb, w, h, px - text_width(buf, sc) / 2, top + ph + 6, buf, black, sc);
    }
    if (xlabel)
        mr_plot_text(rgb, w, h, left + pw / 2 - text_width(xlabel, sc) / 2, top + ph + ch + 14, xlabel, black, sc);
    if (title)
        mr_plot_text(rgb, w, h, left + pw / 2 - text_width(title, sc) / 2, 6, title, black, sc);

    for (int k = 0; k < ns; k++) {
        range r = series_range(&s[k]);
        double step = s[k].log_scale ? 1 : nice_step(r.hi - r.lo, 5);
        if (s[k].log_scale && r.hi - r.lo > 8)
            step = ceil((r.hi - r.lo) / 8);
        for (double v = ceil(r.lo / step) * step; v <= r.hi + 1e-9 * step; v += step) {
            int py = top + ph - 1 - (int)lround((v - r.lo) / (r.hi - r.lo) * (ph - 1));
            if (k == 0)
                line(rgb, w, h, left, py, left + pw - 1, py, grid, 1);
            tick_label(buf, sizeof buf, v, s[k].log_scale, step);
            int tx = k == 0 ? left - 8 - text_width(buf, sc) : left + pw + 8;
            mr_plot_text(rgb, w, h, tx, py - ch / 2, buf, s[k].color, sc);
        }
        if (s[k].label) {
            int tx = k == 0 ? 4 : w - 4 - text_width(s[k].label, sc);
            mr_plot_text(rgb, w, h, tx, 6, s[k].label, s[k].color, sc);
        }
        int have_prev = 0, px0 = 0, py0 = 0;
        for (int i = 0; i < s[k].n; i++) {
            double v;
            if (!usable(&s[k], i, &v)) {
                have_prev = 0;
                continue;
            }
            int px = left + (int)lround(i / xmax * (pw - 1));
            int py = top + ph - 1 - (int)lround((v - r.lo) / (r.hi - r.lo) * (ph - 1));
            if (have_prev)
                line(rgb, w, h, px0, py0, px, py, s[k].color, 3);
            else
                line(rgb, w, h, px, py, px, py, s[k].color, 3);
            have_prev = 1;
            px0 = px;
            py0 = py;
        }
    }
    /* frame last so that curves touching the edge do not hide it */
    line(rgb, w, h, left, top, left + pw - 1, top, black, 1);
    line(rgb, w, h, left, top + ph - 1, left + pw - 1, top + ph - 1, black, 1);
    line(rgb, w, h, left, top, left, top + ph - 1, black, 1);
    line(rgb, w, h, left + pw - 1, top, left + pw - 1, top + ph - 1, black, 1);
    return MR_OK;
}

mr_status mr_plot_write(const char *path, int w, int h, const mr_plot_series *s, int ns, const char *xlabel,
                        const char *title)
{
    if (w < 1 || h < 1)
        return mr_error(MR_EINVAL, "%s: plot size %dx%d", path, w, h);
    uint8_t *rgb = malloc((size_t)w * h * 3);
    if (!rgb)
        return mr_error(MR_ENOMEM, "%s: out of memory for a %dx%d plot", path, w, h);
    mr_status st = mr_plot_lines(rgb, w, h, s, ns, xlabel, title);
    if (st == MR_OK)
        st = mr_png_write_rgb(path, rgb, w, h);
    free(rgb);
    return st;
}
