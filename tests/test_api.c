/* The C API of libmrirecon (recon/api/api.h) without Python, so that its memory handling runs under the
 * sanitizers (CI's ASan + UBSan + leak step; the Python tests cannot load a sanitizer build):
 *  - a phantom made with the phantom command's options, copied out and into a new scan bit for bit;
 *  - recon of that scan in memory and of the same scan written to a file: the same images and reports'
 *    metrics; every volume/method accessor, and the sizes checked on copies;
 *  - usage errors (MR_API_USAGE) with the commands' messages, run-time errors naming the file or array;
 *  - images written and read back; the option table and help texts.
 * Linked with recon/api/api.c itself (CMakeLists.txt), not with the shared library. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "recon/api/api.h"
#include "testutil.h"

static const char *const phantom_args[] = {"--matrix=24", "--spokes=30", "--readout=48", "--snr=30", "--seed=2",
                                           "--coils=2", "--quiet"};
#define NPHANTOM ((int)(sizeof phantom_args / sizeof phantom_args[0]))

/* A copy of an array of s (its size from the library), or NULL when absent. */
static float *array_copy(const mr_api_scan *s, int array, int64_t *n)
{
    *n = mr_api_scan_size(s, array);
    if (*n == 0)
        return NULL;
    float *a = malloc((size_t)*n * sizeof *a);
    CHECK(a != NULL);
    if (a)
        CHECK_OK(mr_api_scan_get(s, array, a, *n));
    return a;
}

/* The same scan rebuilt through mr_api_scan_create + mr_api_scan_set. */
static mr_api_scan *rebuild(const mr_api_scan *s)
{
    mr_api_scan_info info;
    mr_api_scan_info_get(s, &info);
    snprintf(info.name, sizeof info.name, "%s", "rebuilt");
    mr_api_scan *c = NULL;
    CHECK_OK(mr_api_scan_create(&info, &c));
    for (int a = 0; c && a < MR_API_ARRAYS; a++) {
        int64_t n;
        float *v = array_copy(s, a, &n);
        if (v)
            CHECK_OK(mr_api_scan_set(c, a, v, n));
        free(v);
    }
    for (int a = 0; c && a < MR_API_ARRAYS; a++) { /* bit for bit */
        int64_t n, m;
        float *x = array_copy(s, a, &n), *y = array_copy(c, a, &m);
        CHECK(n == m && (!x || memcmp(x, y, (size_t)n * sizeof *x) == 0));
        free(x);
        free(y);
    }
    return c;
}

static float *image_of(const mr_api_result *r, int v, int m, int64_t *n)
{
    mr_api_image_info info;
    CHECK_OK(mr_api_result_image_info(r, v, m, &info));
    *n = 2 * info.matrix[0] * info.matrix[1] * info.matrix[2];
    float *img = malloc((size_t)*n * sizeof *img);
    CHECK(img != NULL);
    if (img)
        CHECK_OK(mr_api_result_image(r, v, m, img, *n));
    CHECK(mr_api_result_image(r, v, m, img, *n - 1) == MR_EINVAL); /* the size is checked */
    return img;
}

static void check_recon(const mr_api_scan *scan, const char *path)
{
    static const char *const args[] = {"--method=iterative,gridding-kb", "--iters=8", "--quiet"};
    mr_api_result *a = NULL, *b = NULL;
    CHECK_OK(mr_api_recon(NULL, scan, 3, args, &a));
    CHECK_OK(mr_api_recon(path, NULL, 3, args, &b));
    if (!a || !b) {
        mr_api_result_free(a);
        mr_api_result_free(b);
        return;
    }
    CHECK(mr_api_result_volumes(a) == 1 && mr_api_result_volumes(b) == 1);
    CHECK(mr_api_result_methods(a, 0) == 2 && mr_api_result_methods(b, 0) == 2);
    CHECK(!strcmp(mr_api_result_label(a, 0), "volume0"));
    CHECK(strstr(mr_api_result_report(a, 0), "\"metrics\"") != NULL);
    CHECK(strstr(mr_api_result_report(b, 0), path) != NULL);
    for (int m = 0; m < 2; m++) {
        mr_api_image_info ia, ib;
        CHECK_OK(mr_api_result_image_info(a, 0, m, &ia));
        CHECK_OK(mr_api_result_image_info(b, 0, m, &ib));
        CHECK(!strcmp(ia.method, m ? "gridding-kb" : "iterative") && !strcmp(ia.method, ib.method));
        CHECK(ia.matrix[0] == 24 && ia.matrix[1] == 24 && ia.matrix[2] == 1 && ia.fov_mm[0] == 240.0f);
        int64_t n, n2;
        float *x = image_of(a, 0, m, &n), *y = image_of(b, 0, m, &n2);
        int same = n == n2 && x && y && memcmp(x, y, (size_t)n * sizeof *x) == 0;
        if (!same)
            fprintf(stderr, "method %s: the image from memory differs from the file's\n", ia.method);
        CHECK(same);
        free(x);
        free(y);
    }
    CHECK(mr_api_result_methods(a, 1) == 0 && strstr(mr_api_last_error(), "no volume 1") != NULL);
    mr_api_result_free(a);
    mr_api_result_free(b);
}

static void check_errors(const mr_api_scan *scan, const char *dir)
{
    mr_api_result *r = NULL;
    static const char *const unknown[] = {"--foo"};
    CHECK(mr_api_recon(NULL, scan, 1, unknown, &r) == MR_API_USAGE && r == NULL);
    CHECK(!strcmp(mr_api_last_error(), "mrirecon recon: unknown option '--foo'"));
    CHECK(!strcmp(mr_api_status_name(MR_API_USAGE), "USAGE") && !strcmp(mr_api_status_name(MR_EFORMAT), "EFORMAT"));
    static const char *const bad_iters[] = {"--iters=abc"};
    CHECK(mr_api_recon(NULL, scan, 1, bad_iters, &r) == MR_API_USAGE);
    CHECK(!strcmp(mr_api_last_error(), "mrirecon recon: --iters expects an integer, got 'abc'"));
    static const char *const help[] = {"--help"};
    CHECK(mr_api_recon(NULL, scan, 1, help, &r) == MR_API_USAGE);
    static const char *const reader[] = {"--traj-units=cycles"};
    CHECK(mr_api_recon(NULL, scan, 1, reader, &r) == MR_API_USAGE);
    CHECK(strstr(mr_api_last_error(), "--traj-units applies to reading a scan file") != NULL);
    static const char *const suite[] = {"--suite=x"};
    mr_api_scan *s = NULL;
    CHECK(mr_api_phantom(1, suite, &s) == MR_API_USAGE && s == NULL);
    char missing[512];
    snprintf(missing, sizeof missing, "%s/missing.h5", dir);
    CHECK(mr_api_scan_read(missing, 0, NULL, &s) != MR_OK && s == NULL);
    CHECK(strstr(mr_api_last_error(), missing) != NULL);
    CHECK(mr_api_recon(missing, NULL, 0, NULL, &r) != MR_OK && r == NULL);
    CHECK(mr_api_recon(NULL, NULL, 0, NULL, &r) == MR_EINVAL);
    /* arrays: sizes and values checked */
    mr_api_scan_info info;
    mr_api_scan_info_get(scan, &info);
    snprintf(info.name, sizeof info.name, "%s", "mine");
    CHECK_OK(mr_api_scan_create(&info, &s));
    float t[3] = {0, 0, 0};
    CHECK(mr_api_scan_set(s, MR_API_TRAJ, t, 3) == MR_EINVAL && strstr(mr_api_last_error(), "mine: trajectory"));
    const int64_t n = mr_api_scan_size(s, MR_API_TRAJ);
    float *traj = calloc((size_t)n, sizeof *traj);
    traj[7] = NAN;
    CHECK(mr_api_scan_set(s, MR_API_TRAJ, traj, n) == MR_EINVAL);
    CHECK(!strcmp(mr_api_last_error(), "mine: trajectory: non-finite value nan at flat index 7"));
    CHECK(mr_api_scan_get(s, MR_API_SENS, traj, n) == MR_EINVAL && strstr(mr_api_last_error(), "no sens"));
    CHECK(mr_api_scan_set(s, 99, traj, n) == MR_EINVAL);
    free(traj);
    mr_api_scan_free(s);
    info.nsamples = 0;
    CHECK(mr_api_scan_create(&info, &s) == MR_EINVAL && strstr(mr_api_last_error(), "mine: k-space: 0 samples"));
}

static void check_images(const char *dir)
{
    enum { NX = 6, NY = 5, NZ = 2 };
    float img[2 * NX * NY * NZ];
    for (int i = 0; i < 2 * NX * NY * NZ; i++)
        img[i] = (float)(i % 7) - 2.5f * (float)(i % 3);
    mr_api_image_info info;
    memset(&info, 0, sizeof info);
    info.matrix[0] = NX;
    info.matrix[1] = NY;
    info.matrix[2] = NZ;
    info.fov_mm[0] = 60;
    info.fov_mm[1] = 50;
    info.fov_mm[2] = 8;
    snprintf(info.method, sizeof info.method, "%s", "test");
    static const char *const names[] = {"a.h5", "b.nii", "c.mrd", "d"};
    for (int k = 0; k < 4; k++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        CHECK_OK(mr_api_image_write(path, k == 3 ? "cfl" : NULL, img, &info, 1, 0, NULL));
        mr_api_image *im = NULL;
        CHECK_OK(mr_api_image_read(path, &im));
        if (!im)
            continue;
        mr_api_image_info back;
        mr_api_image_info_get(im, &back);
        CHECK(back.matrix[0] == NX && back.matrix[1] == NY && back.matrix[2] == NZ);
        float got[2 * NX * NY * NZ];
        CHECK_OK(mr_api_image_get(im, got, 2 * NX * NY * NZ));
        CHECK(memcmp(got, img, sizeof img) == 0);
        mr_api_image_free(im);
    }
    char path[600];
    snprintf(path, sizeof path, "%s/x.tif", dir);
    CHECK(mr_api_image_write(path, "tiff", img, &info, 0, 0, NULL) == MR_EINVAL);
    CHECK(strstr(mr_api_last_error(), "image format 'tiff'") != NULL);
}

static void check_tables(void)
{
    char *text = NULL;
    CHECK_OK(mr_api_options("recon", &text));
    CHECK(text && strstr(text, "output\to\tstring\t\n") && strstr(text, "sens\t\tchoice\tauto|file|"));
    mr_api_free(text);
    CHECK_OK(mr_api_help("phantom", &text));
    CHECK(text && !strncmp(text, "Usage: mrirecon phantom [OPTIONS]", 33));
    mr_api_free(text);
    CHECK_OK(mr_api_options("read", &text));
    CHECK(text && strstr(text, "volume\t\tint\t\n"));
    mr_api_free(text);
    CHECK(mr_api_help("bench", &text) == MR_EINVAL && text == NULL);
    CHECK(mr_api_version() == MR_API_VERSION && mr_api_sizeof("scan_info") == sizeof(mr_api_scan_info));
}

int main(void)
{
    const char *dir = test_tmpdir("api");
    mr_api_scan *scan = NULL;
    CHECK_OK(mr_api_phantom(NPHANTOM, phantom_args, &scan));
    if (!scan)
        return test_finish("test_api");
    mr_api_scan_info info;
    mr_api_scan_info_get(scan, &info);
    CHECK(info.matrix[0] == 24 && info.nsamples == 30 * 48 && info.ncoils == 2 && !strcmp(info.format, "phantom"));
    CHECK(mr_api_scan_size(scan, MR_API_SENS) == 2 * 2 * 24 * 24 && mr_api_scan_size(scan, MR_API_TIME) == 0);
    mr_api_scan *copy = rebuild(scan);
    char path[600];
    snprintf(path, sizeof path, "%s/scan.h5", dir);
    CHECK_OK(mr_api_scan_write(copy, path, NULL, 0));
    mr_api_scan *read = NULL;
    static const char *const quiet[] = {"-q"};
    CHECK_OK(mr_api_scan_read(path, 1, quiet, &read));
    if (read) {
        mr_api_scan_info ri;
        mr_api_scan_info_get(read, &ri);
        CHECK(!strcmp(ri.format, "mrirecon-kspace") && !strcmp(ri.name, path) && ri.volumes == 1);
    }
    check_recon(copy, path);
    check_errors(scan, dir);
    check_images(dir);
    check_tables();
    mr_api_scan_free(read);
    mr_api_scan_free(copy);
    mr_api_scan_free(scan);
    return test_finish("test_api");
}
