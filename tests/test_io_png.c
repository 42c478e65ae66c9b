/* PNG writers: 8/16-bit grayscale with the window mapping, RGB, the 3D montage; every picture is
 * read back twice, with mr_png_read_gray and with libpng's simplified API (independent of our
 * reader, and of our 16-bit byte order), and compared pixel by pixel with values computed here
 * from the documented mapping. Failed writes leave neither the file nor a temporary file. */
#include <math.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/image_png.h"
#include "io_testutil.h"
#include "testutil.h"

static uint64_t rng;

/* The documented window mapping (io/image_png.c), written out independently. */
static long expected_sample(float x, double lo, double hi, long maxv)
{
    if (isnan(x))
        return 0;
    double t = ((double)x - lo) / (hi - lo) * (double)maxv;
    if (t <= 0)
        return 0;
    if (t >= (double)maxv)
        return maxv;
    return lround(t);
}

/* Pixels through libpng's simplified API: gray 8-bit, gray 16-bit (linear, no gamma change), or
 * RGB 8-bit; values as longs. NULL on failure. */
static long *libpng_read(const char *path, png_uint_32 format, int *w, int *h, png_uint_32 *file_format)
{
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&img, path)) {
        fprintf(stderr, "libpng: %s: %s\n", path, img.message);
        return NULL;
    }
    *file_format = img.format;
    img.format = format;
    size_t n = PNG_IMAGE_SIZE(img);
    void *buf = malloc(n);
    long *out = NULL;
    if (buf && png_image_finish_read(&img, NULL, buf, 0, NULL)) {
        size_t count = (size_t)img.width * img.height * PNG_IMAGE_SAMPLE_CHANNELS(format);
        out = malloc(count * sizeof(long));
        for (size_t i = 0; out && i < count; i++)
            out[i] = (format & PNG_FORMAT_FLAG_LINEAR) ? ((png_uint_16 *)buf)[i] : ((png_byte *)buf)[i];
        *w = (int)img.width;
        *h = (int)img.height;
    } else {
        fprintf(stderr, "libpng: %s: %s\n", path, img.message);
        png_image_free(&img);
    }
    free(buf);
    return out;
}

/* Read `path` both ways and compare with the window mapping of pix. */
static void check_gray(const char *label, const char *path, const float *pix, int w, int h, double lo, double hi,
                       int bitdepth)
{
    long maxv = (1L << bitdepth) - 1;
    float *ours = NULL;
    int w1 = 0, h1 = 0, d1 = 0, w2 = 0, h2 = 0;
    png_uint_32 ff = 0;
    CHECK_OK(mr_png_read_gray(path, &ours, &w1, &h1, &d1));
    long *theirs = libpng_read(path, bitdepth == 16 ? PNG_FORMAT_LINEAR_Y : PNG_FORMAT_GRAY, &w2, &h2, &ff);
    CHECK(ours && theirs);
    CHECK(w1 == w && h1 == h && d1 == bitdepth && w2 == w && h2 == h);
    CHECK((ff & PNG_FORMAT_FLAG_COLOR) == 0 && ((ff & PNG_FORMAT_FLAG_LINEAR) != 0) == (bitdepth == 16));
    long bad1 = 0, bad2 = 0, clipped = 0;
    if (ours && theirs && w1 == w && h1 == h && w2 == w && h2 == h)
        for (long i = 0; i < (long)w * h; i++) {
            long e = expected_sample(pix[i], lo, hi, maxv);
            bad1 += (long)ours[i] != e;
            bad2 += theirs[i] != e;
            clipped += e == 0 || e == maxv;
        }
    else
        bad1 = bad2 = -1;
    printf("%s: %dx%d %d-bit, window [%g, %g]: %ld pixels at 0 or max; mismatches: ours %ld, libpng %ld\n", label, w, h,
           bitdepth, lo, hi, clipped, bad1, bad2);
    CHECK(bad1 == 0 && bad2 == 0);
    free(ours);
    free(theirs);
}

static void gray_tests(const char *dir)
{
    int w = 5 + (int)(60 * test_uniform(&rng)), h = 5 + (int)(60 * test_uniform(&rng));
    double lo = -1 + test_uniform(&rng), hi = lo + 0.5 + 3 * test_uniform(&rng);
    float *pix = malloc((size_t)w * h * sizeof(float));
    for (int i = 0; i < w * h; i++) /* 20% below and above the window, to exercise the clipping */
        pix[i] = (float)(lo + (hi - lo) * (1.4 * test_uniform(&rng) - 0.2));
    pix[0] = NAN;
    pix[1] = INFINITY;
    pix[2] = -INFINITY;
    pix[3] = (float)lo;
    pix[4] = (float)hi;
    char path[1024];
    snprintf(path, sizeof path, "%s/gray8.png", dir);
    CHECK_OK(mr_png_write_gray(path, pix, w, h, lo, hi, 8));
    check_gray("gray8", path, pix, w, h, lo, hi, 8);
    snprintf(path, sizeof path, "%s/gray16.png", dir);
    CHECK_OK(mr_png_write_gray(path, pix, w, h, lo, hi, 16));
    check_gray("gray16", path, pix, w, h, lo, hi, 16);

    /* refusals: no file appears */
    snprintf(path, sizeof path, "%s/refused.png", dir);
    CHECK(mr_png_write_gray(path, pix, w, h, lo, hi, 12) == MR_EINVAL);
    CHECK(mr_png_write_gray(path, pix, w, h, hi, lo, 8) == MR_EINVAL);
    CHECK(mr_png_write_gray(path, pix, 0, h, lo, hi, 8) == MR_EINVAL);
    CHECK(!io_test_exists(path));
    free(pix);
}

static void rgb_test(const char *dir)
{
    int w = 3 + (int)(40 * test_uniform(&rng)), h = 3 + (int)(40 * test_uniform(&rng));
    uint8_t *rgb = malloc((size_t)w * h * 3);
    for (int i = 0; i < w * h * 3; i++)
        rgb[i] = (uint8_t)(256 * test_uniform(&rng));
    char path[1024];
    snprintf(path, sizeof path, "%s/rgb.png", dir);
    CHECK_OK(mr_png_write_rgb(path, rgb, w, h));
    int w2 = 0, h2 = 0;
    png_uint_32 ff = 0;
    long *back = libpng_read(path, PNG_FORMAT_RGB, &w2, &h2, &ff);
    long bad = back ? 0 : -1;
    for (int i = 0; back && w2 == w && h2 == h && i < w * h * 3; i++)
        bad += back[i] != rgb[i];
    printf("rgb: %dx%d read back %dx%d, color %d, mismatching bytes %ld\n", w, h, w2, h2,
           (ff & PNG_FORMAT_FLAG_COLOR) != 0, bad);
    CHECK(w2 == w && h2 == h && (ff & PNG_FORMAT_FLAG_COLOR) && bad == 0);
    /* our gray reader refuses a color picture */
    float *pix = NULL;
    int a, b, c;
    CHECK(mr_png_read_gray(path, &pix, &a, &b, &c) == MR_EFORMAT && pix == NULL);
    printf("gray reader on rgb: %s\n", mr_last_error());
    free(back);
    free(rgb);
}

/* The montage of the documented layout, built here from the volume directly. */
static float *expected_montage(const float *v, const int64_t n[3], int *w, int *h)
{
    const int gap = 4;
    int nx = (int)n[0], ny = (int)n[1], nz = (int)n[2];
    *w = nz == 1 ? nx : 2 * nx + ny + 2 * gap;
    *h = nz == 1 ? ny : (ny > nz ? ny : nz);
    float *m = calloc((size_t)*w * *h, sizeof(float));
    for (int r = 0; r < *h; r++)
        for (int col = 0; col < *w; col++) {
            float val = 0;
            if (nz == 1) {
                val = v[r * nx + col];
            } else if (col < nx) {
                if (r < ny)
                    val = v[((nz / 2) * ny + r) * nx + col];
            } else if (col >= nx + gap && col < 2 * nx + gap) {
                if (r < nz)
                    val = v[(r * ny + ny / 2) * nx + (col - nx - gap)];
            } else if (col >= 2 * nx + 2 * gap) {
                if (r < nz)
                    val = v[(r * ny + (col - 2 * nx - 2 * gap)) * nx + nx / 2];
            }
            m[r * *w + col] = val;
        }
    return m;
}

static void volume_test(const char *dir, int is3d, int bitdepth)
{
    int64_t n[3] = {3 + (int64_t)(20 * test_uniform(&rng)), 3 + (int64_t)(20 * test_uniform(&rng)),
                    is3d ? 2 + (int64_t)(20 * test_uniform(&rng)) : 1};
    size_t nv = (size_t)(n[0] * n[1] * n[2]);
    float *v = malloc(nv * sizeof(float));
    double mx = 0;
    for (size_t i = 0; i < nv; i++) {
        v[i] = (float)(5 * test_uniform(&rng));
        mx = v[i] > mx ? v[i] : mx;
    }
    int ew, eh, mw = 0, mh = 0;
    float *expect = expected_montage(v, n, &ew, &eh);
    float *m = NULL;
    CHECK_OK(mr_volume_montage(v, n, &m, &mw, &mh));
    CHECK(m && mw == ew && mh == eh && memcmp(m, expect, (size_t)ew * eh * sizeof(float)) == 0);
    char path[1024], label[64];
    snprintf(path, sizeof path, "%s/volume%d-%d.png", dir, is3d, bitdepth);
    snprintf(label, sizeof label, "volume %lldx%lldx%lld", (long long)n[0], (long long)n[1], (long long)n[2]);
    CHECK_OK(mr_png_write_volume(path, v, n, 0, 0, bitdepth)); /* hi <= lo: window [0, max] */
    check_gray(label, path, expect, ew, eh, 0, mx, bitdepth);
    free(m);
    free(expect);
    free(v);
}

static void failed_writes(const char *dir)
{
    float pix[4] = {0, 1, 2, 3};
    char path[1024];
    snprintf(path, sizeof path, "%s/no-such-dir/x.png", dir);
    CHECK(mr_png_write_gray(path, pix, 2, 2, 0, 3, 8) == MR_EIO);
    printf("unwritable directory: %s\n", mr_last_error());
    CHECK(!io_test_exists(path));
    /* the final name is a directory: libpng writes the temporary file, the rename fails, the
     * temporary file is removed */
    snprintf(path, sizeof path, "%s/taken.png", dir);
    mkdir(path, 0777);
    CHECK(mr_png_write_gray(path, pix, 2, 2, 0, 3, 8) == MR_EIO);
    printf("final name is a directory: %s\n", mr_last_error());
    CHECK(io_test_count_prefix(dir, ".taken.png.tmp") == 0);
    rmdir(path);
    /* reading something that is not a PNG */
    snprintf(path, sizeof path, "%s/not.png", dir);
    FILE *f = fopen(path, "wb");
    fputs("not a png at all", f);
    fclose(f);
    float *out = NULL;
    int a, b, c;
    CHECK(mr_png_read_gray(path, &out, &a, &b, &c) == MR_EFORMAT && out == NULL);
    printf("not a png: %s\n", mr_last_error());
}

int main(void)
{
    rng = test_seed();
    const char *dir = test_tmpdir("io_png");
    gray_tests(dir);
    rgb_test(dir);
    volume_test(dir, 0, 8);
    volume_test(dir, 1, 8);
    volume_test(dir, 1, 16);
    failed_writes(dir);
    CHECK(io_test_count_prefix(dir, ".") == 2); /* no temporary file left behind */
    io_test_rmdir(dir);
    return test_finish("test_io_png");
}
