/* PNG output through libpng (see image_png.h).
 *
 * Window mapping (grayscale): with maxv = 2^bitdepth - 1 and t = (x - lo) / (hi - lo) * maxv in
 * double precision, the sample is 0 when x is NaN or t <= 0, maxv when t >= maxv, and
 * floor(t + 0.5) otherwise. 16-bit samples are stored big-endian, as PNG requires.
 *
 * Volume montage (mr_volume_montage, mr_png_write_volume): a 2D matrix (Nz = 1) gives the image
 * itself, w = Nx, h = Ny, row iy, column ix. A 3D matrix gives three panels side by side, each
 * top-aligned, separated by MONTAGE_GAP = 4 columns of zeros (black under any window with lo >= 0):
 *   axial    z = Nz/2: Nx wide, Ny tall, row iy, column ix
 *   coronal  y = Ny/2: Nx wide, Nz tall, row iz, column ix
 *   sagittal x = Nx/2: Ny wide, Nz tall, row iz, column iy
 * so w = 2 Nx + Ny + 2 MONTAGE_GAP and h = max(Ny, Nz); pixels below a shorter panel are 0.
 *
 * libpng errors are caught with setjmp (png_set_error_fn's handler longjmps) and become MR_EIO or
 * MR_EFORMAT with libpng's text; every writer writes to a temporary name and renames at the end.
 * All state the error path needs lives in a context owned by the caller of the setjmp function. */
#include "image_png.h"

#include <errno.h>
#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "kspace.h"
#include "../base/log.h"

#define MONTAGE_GAP MR_MONTAGE_GAP
#define PNG_MAX_EDGE 1000000

typedef struct {
    png_structp png;
    png_infop info;
    FILE *f;
    uint8_t *pixels; /* read: decoded rows (freed by the caller of read_body) */
    png_bytep *rows; /* read: row pointers into pixels (freed by the caller of read_body) */
    char msg[256];
} png_ctx;

static void on_png_error(png_structp png, png_const_charp msg)
{
    png_ctx *c = png_get_error_ptr(png);
    const int e = errno; /* a failed fwrite ("Write Error") leaves its reason here */
    snprintf(c->msg, sizeof c->msg, "%s%s%s", msg, e ? ": " : "", e ? strerror(e) : "");
    png_longjmp(png, 1);
}

static void on_png_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    mr_log(MR_LOG_DEBUG, "libpng: %s", msg);
}

static mr_status check_size(const char *path, int w, int h)
{
    if (w < 1 || h < 1 || w > PNG_MAX_EDGE || h > PNG_MAX_EDGE || (int64_t)w * h > ((int64_t)1 << 30))
        return mr_error(MR_EINVAL, "%s: picture size %dx%d is outside 1..%d per edge", path, w, h, PNG_MAX_EDGE);
    return MR_OK;
}

/* The libpng part of a write; returns 1 after a libpng error (message in c->msg). */
static int write_body(png_ctx *c, const uint8_t *buf, int w, int h, int bitdepth, int color_type, size_t rowbytes)
{
    if (setjmp(png_jmpbuf(c->png)))
        return 1;
    png_init_io(c->png, c->f);
    png_set_IHDR(c->png, c->info, (png_uint_32)w, (png_uint_32)h, bitdepth, color_type, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(c->png, c->info);
    for (int y = 0; y < h; y++)
        png_write_row(c->png, buf + (size_t)y * rowbytes);
    png_write_end(c->png, NULL);
    return 0;
}

/* Write rows already in PNG byte order through a temporary file. */
static mr_status write_png(const char *path, const uint8_t *buf, int w, int h, int bitdepth, int color_type,
                           size_t rowbytes)
{
    png_ctx c;
    memset(&c, 0, sizeof c);
    char tmp[4096];
    mr_status st = mr_open_tmp(path, tmp, sizeof tmp, &c.f);
    if (st != MR_OK)
        return st;
    c.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &c, on_png_error, on_png_warning);
    c.info = c.png ? png_create_info_struct(c.png) : NULL;
    if (!c.png || !c.info) {
        png_destroy_write_struct(&c.png, &c.info);
        fclose(c.f);
        remove(tmp);
        return mr_error(MR_ENOMEM, "%s: libpng: cannot create the writer", path);
    }
    errno = 0;
    int failed = write_body(&c, buf, w, h, bitdepth, color_type, rowbytes);
    png_destroy_write_struct(&c.png, &c.info);
    if (failed) {
        fclose(c.f);
        remove(tmp);
        return mr_error(MR_EIO, "%s: libpng: %s", path, c.msg);
    }
    return mr_close_commit(c.f, tmp, path);
}

static unsigned window_sample(float x, double lo, double hi, unsigned maxv)
{
    if (isnan(x))
        return 0;
    double t = ((double)x - lo) / (hi - lo) * (double)maxv;
    if (!(t > 0))
        return 0;
    if (t >= (double)maxv)
        return maxv;
    return (unsigned)floor(t + 0.5);
}

mr_status mr_png_write_gray(const char *path, const float *pix, int w, int h, double lo, double hi, int bitdepth)
{
    mr_status st = check_size(path, w, h);
    if (st != MR_OK)
        return st;
    if (bitdepth != 8 && bitdepth != 16)
        return mr_error(MR_EINVAL, "%s: PNG bit depth %d, expected 8 or 16", path, bitdepth);
    if (!isfinite(lo) || !isfinite(hi) || !(hi > lo))
        return mr_error(MR_EINVAL, "%s: bad window [%g, %g]", path, lo, hi);
    size_t bytes = (size_t)bitdepth / 8, rowbytes = (size_t)w * bytes;
    uint8_t *buf = malloc(rowbytes * (size_t)h);
    if (!buf)
        return mr_error(MR_ENOMEM, "%s: out of memory for a %dx%d picture", path, w, h);
    unsigned maxv = bitdepth == 8 ? 255u : 65535u;
    for (size_t i = 0; i < (size_t)w * (size_t)h; i++) {
        unsigned q = window_sample(pix[i], lo, hi, maxv);
        if (bytes == 1) {
            buf[i] = (uint8_t)q;
        } else {
            buf[2 * i] = (uint8_t)(q >> 8);
            buf[2 * i + 1] = (uint8_t)(q & 0xff);
        }
    }
    st = write_png(path, buf, w, h, bitdepth, PNG_COLOR_TYPE_GRAY, rowbytes);
    free(buf);
    return st;
}

mr_status mr_png_write_rgb(const char *path, const uint8_t *rgb, int w, int h)
{
    mr_status st = check_size(path, w, h);
    if (st != MR_OK)
        return st;
    return write_png(path, rgb, w, h, 8, PNG_COLOR_TYPE_RGB, (size_t)w * 3);
}

mr_status mr_volume_montage(const float *mag, const int64_t matrix[3], float **out, int *w, int *h)
{
    return mr_volume_montage_at(mag, matrix, NULL, out, w, h);
}

mr_status mr_volume_montage_at(const float *mag, const int64_t matrix[3], const int64_t at[3], float **out, int *w,
                               int *h)
{
    *out = NULL;
    mr_status st = mr_matrix_check(matrix, "montage");
    if (st != MR_OK)
        return mr_error(MR_EINVAL, "%s", mr_last_error());
    static const char axis[3] = {'x', 'y', 'z'};
    for (int a = 0; at && a < 3; a++)
        if (at[a] < 0 || at[a] >= matrix[a])
            return mr_error(MR_EINVAL, "slice %c = %lld is outside the image (0..%lld)", axis[a], (long long)at[a],
                            (long long)matrix[a] - 1);
    const int64_t nx = matrix[0], ny = matrix[1], nz = matrix[2];
    int64_t W, H;
    if (nz == 1) {
        W = nx;
        H = ny;
    } else {
        W = 2 * nx + ny + 2 * MONTAGE_GAP;
        H = ny > nz ? ny : nz;
    }
    float *m = calloc((size_t)(W * H), sizeof(float));
    if (!m)
        return mr_error(MR_ENOMEM, "montage: out of memory for %lldx%lld", (long long)W, (long long)H);
    if (nz == 1) {
        memcpy(m, mag, (size_t)(nx * ny) * sizeof(float));
    } else {
        const int64_t xc = at ? at[0] : nx / 2, yc = at ? at[1] : ny / 2, zc = at ? at[2] : nz / 2;
        const int64_t x1 = nx + MONTAGE_GAP, x2 = 2 * nx + 2 * MONTAGE_GAP;
        for (int64_t iy = 0; iy < ny; iy++)
            for (int64_t ix = 0; ix < nx; ix++)
                m[iy * W + ix] = mag[(zc * ny + iy) * nx + ix];
        for (int64_t iz = 0; iz < nz; iz++) {
            for (int64_t ix = 0; ix < nx; ix++)
                m[iz * W + x1 + ix] = mag[(iz * ny + yc) * nx + ix];
            for (int64_t iy = 0; iy < ny; iy++)
                m[iz * W + x2 + iy] = mag[(iz * ny + iy) * nx + xc];
        }
    }
    *out = m;
    *w = (int)W;
    *h = (int)H;
    return MR_OK;
}

mr_status mr_png_write_volume(const char *path, const float *mag, const int64_t matrix[3], double lo, double hi,
                              int bitdepth)
{
    float *m;
    int w, h;
    mr_status st = mr_volume_montage(mag, matrix, &m, &w, &h);
    if (st != MR_OK)
        return st;
    if (!(hi > lo)) {
        double mx = 0;
        const int64_t n = matrix[0] * matrix[1] * matrix[2];
        for (int64_t i = 0; i < n; i++)
            if (isfinite(mag[i]) && mag[i] > mx)
                mx = mag[i];
        lo = 0;
        hi = mx > 0 ? mx : 1;
    }
    st = mr_png_write_gray(path, m, w, h, lo, hi, bitdepth);
    free(m);
    return st;
}

/* The libpng part of a read; returns 1 after a libpng error or an unsupported picture. */
static int read_body(png_ctx *c, int *w, int *h, int *bitdepth)
{
    if (setjmp(png_jmpbuf(c->png)))
        return 1;
    png_init_io(c->png, c->f);
    png_read_info(c->png, c->info);
    png_uint_32 pw, ph;
    int depth, color, interlace;
    png_get_IHDR(c->png, c->info, &pw, &ph, &depth, &color, &interlace, NULL, NULL);
    if (color != PNG_COLOR_TYPE_GRAY) {
        snprintf(c->msg, sizeof c->msg, "not a grayscale PNG (color type %d)", color);
        return 1;
    }
    if (pw > PNG_MAX_EDGE || ph > PNG_MAX_EDGE || (uint64_t)pw * ph > ((uint64_t)1 << 30)) {
        snprintf(c->msg, sizeof c->msg, "picture %ux%u is too large", (unsigned)pw, (unsigned)ph);
        return 1;
    }
    if (depth < 8)
        png_set_expand_gray_1_2_4_to_8(c->png);
    if (interlace != PNG_INTERLACE_NONE)
        png_set_interlace_handling(c->png);
    png_read_update_info(c->png, c->info);
    size_t rowbytes = png_get_rowbytes(c->png, c->info);
    c->pixels = malloc(rowbytes * ph);
    c->rows = malloc(ph * sizeof *c->rows);
    if (!c->pixels || !c->rows) {
        snprintf(c->msg, sizeof c->msg, "out of memory");
        return 1;
    }
    for (png_uint_32 y = 0; y < ph; y++)
        c->rows[y] = c->pixels + y * rowbytes;
    png_read_image(c->png, c->rows);
    png_read_end(c->png, NULL);
    *w = (int)pw;
    *h = (int)ph;
    *bitdepth = depth < 8 ? 8 : depth;
    return 0;
}

mr_status mr_png_read_gray(const char *path, float **pix, int *w, int *h, int *bitdepth)
{
    *pix = NULL;
    png_ctx c;
    memset(&c, 0, sizeof c);
    c.f = fopen(path, "rb");
    if (!c.f)
        return mr_error(MR_EIO, "%s: cannot open", path);
    c.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &c, on_png_error, on_png_warning);
    c.info = c.png ? png_create_info_struct(c.png) : NULL;
    if (!c.png || !c.info) {
        png_destroy_read_struct(&c.png, &c.info, NULL);
        fclose(c.f);
        return mr_error(MR_ENOMEM, "%s: libpng: cannot create the reader", path);
    }
    int pw = 0, ph = 0, depth = 0;
    int failed = read_body(&c, &pw, &ph, &depth);
    png_destroy_read_struct(&c.png, &c.info, NULL);
    fclose(c.f);
    free(c.rows);
    if (failed) {
        free(c.pixels);
        return mr_error(MR_EFORMAT, "%s: %s", path, c.msg);
    }
    size_t n = (size_t)pw * (size_t)ph;
    float *out = malloc(n * sizeof(float));
    if (!out) {
        free(c.pixels);
        return mr_error(MR_ENOMEM, "%s: out of memory", path);
    }
    for (size_t i = 0; i < n; i++)
        out[i] = depth == 16 ? (float)((c.pixels[2 * i] << 8) | c.pixels[2 * i + 1]) : (float)c.pixels[i];
    free(c.pixels);
    *pix = out;
    *w = pw;
    *h = ph;
    *bitdepth = depth;
    return MR_OK;
}
