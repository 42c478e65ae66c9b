/* The image files of a reconstruction (recon/report/outputs.h), written concurrently:
 *   - every file is there and complete, and nothing else (no temporary file): image_<method>.h5 read
 *     back gives the images bit for bit, image_<method>.nii holds |image|, image_<method>.png and
 *     compare.png are byte for byte what their writers give when called one at a time, a second
 *     write gives the same bytes for every file;
 *   - a file that cannot be written fails the call with its own message, and with several failing
 *     the one a sequential writer meets first (method by method: h5, png, nii, convergence) is
 *     reported. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/fsutil.h"
#include "io/image_h5.h"
#include "io/image_png.h"
#include "io_testutil.h"
#include "nifti_testutil.h"
#include "recon/report/compare.h"
#include "recon/report/outputs.h"
#include "testutil.h"

#define NX 20
#define NY 16
#define NZ 6
#define NV (NX * NY * NZ)
#define ITERS 12

static const char *const methods[3] = {"cg", "gridding-kb", "gridding-bilinear"};

static void make_report(mr_report *r, const double *resid, const double *psnr)
{
    memset(r, 0, sizeof *r);
    r->matrix[0] = NX;
    r->matrix[1] = NY;
    r->matrix[2] = NZ;
    r->fov_mm[0] = 200;
    r->fov_mm[1] = 160;
    r->fov_mm[2] = 60;
    r->basis = "dirac";
    r->nifti = "magnitude";
    r->window_hi = 1.2;
    r->error_gain = 5;
    r->lambda = 1e-3;
    r->oversample = 2;
    r->kernel_width = 6;
    r->t_read = 0.25;
    r->nmethods = 3;
    for (int k = 0; k < 3; k++) {
        snprintf(r->m[k].method, sizeof r->m[k].method, "%s", methods[k]);
        r->m[k].final_history = k ? NAN : resid[ITERS];
        r->m[k].seconds = 1.0 + k;
    }
    r->m[0].iterations = ITERS;
    r->m[0].history = resid;
    r->m[0].history_name = "relative residual";
    r->m[0].solver = "cg";
    r->m[0].psnr = psnr;
}

static int same_bytes(const char *a, const char *b)
{
    long na = 0, nb = 0;
    unsigned char *x = nifti_slurp(a, &na), *y = nifti_slurp(b, &nb);
    const int same = x && y && na == nb && memcmp(x, y, (size_t)na) == 0;
    free(x);
    free(y);
    return same;
}

static void path_in(char *buf, size_t size, const char *dir, const char *name)
{
    CHECK_OK(mr_path_join(buf, size, dir, name));
}

int main(void)
{
    uint64_t seed = test_seed();
    float *imgs[3], *truth = malloc(NV * sizeof(float)), *mag = malloc(NV * sizeof(float));
    double resid[ITERS + 1], psnr[ITERS + 1];
    for (int k = 0; k < 3; k++) {
        imgs[k] = malloc(2 * NV * sizeof(float));
        for (int v = 0; v < 2 * NV; v++)
            imgs[k][v] = (float)(test_uniform(&seed) - 0.3);
    }
    for (int v = 0; v < NV; v++)
        truth[v] = (float)test_uniform(&seed);
    for (int i = 0; i <= ITERS; i++) {
        resid[i] = pow(0.5, i);
        psnr[i] = 10 + i;
    }
    const char *base = test_tmpdir("outputs");
    char a[1024], b[1024], ref[1024], p[1100], q[1100];
    path_in(a, sizeof a, base, "a");
    path_in(b, sizeof b, base, "b");
    path_in(ref, sizeof ref, base, "ref");
    mkdir(ref, 0777);
    mr_report r;
    make_report(&r, resid, psnr);
    const float *const *cimgs = (const float *const *)imgs;

    /* complete, and the same bytes twice */
    CHECK_OK(mr_outputs_write_images(a, &r, cimgs, truth));
    CHECK_GE("t_write", r.t_write, 0);
    CHECK_OK(mr_outputs_write_images(b, &r, cimgs, truth));
    CHECK(io_test_count_prefix(a, ".") == 2); /* "." and "..": no temporary file left */
    const char *exts[3] = {"h5", "png", "nii"};
    int files = 0;
    for (int k = 0; k < 3; k++)
        for (int e = 0; e < 3; e++) {
            char name[96];
            snprintf(name, sizeof name, "image_%s.%s", methods[k], exts[e]);
            path_in(p, sizeof p, a, name);
            path_in(q, sizeof q, b, name);
            files += io_test_exists(p);
            CHECK(same_bytes(p, q));
        }
    CHECK(files == 9);
    path_in(p, sizeof p, a, "convergence.png");
    path_in(q, sizeof q, b, "convergence.png");
    CHECK(io_test_exists(p) && same_bytes(p, q));

    for (int k = 0; k < 3; k++) {
        char name[96];
        /* the HDF5 image, bit for bit */
        snprintf(name, sizeof name, "image_%s.h5", methods[k]);
        path_in(p, sizeof p, a, name);
        float *back = NULL;
        int64_t m[3] = {0, 0, 0};
        CHECK_OK(mr_image_h5_read(p, &back, m));
        CHECK(back && m[0] == NX && m[1] == NY && m[2] == NZ && !memcmp(back, imgs[k], 2 * NV * sizeof(float)));
        free(back);
        /* the NIfTI magnitude */
        snprintf(name, sizeof name, "image_%s.nii", methods[k]);
        path_in(p, sizeof p, a, name);
        nifti_check_file(p, imgs[k], r.matrix, r.fov_mm, 0, NULL);
        /* the PNG as its writer makes it alone */
        for (int v = 0; v < NV; v++)
            mag[v] = hypotf(imgs[k][2 * v], imgs[k][2 * v + 1]);
        snprintf(name, sizeof name, "image_%s.png", methods[k]);
        path_in(p, sizeof p, a, name);
        path_in(q, sizeof q, ref, name);
        CHECK_OK(mr_outputs_picture(q, mag, r.matrix, NULL, r.window_hi));
        CHECK(same_bytes(p, q));
    }
    const char *labels[3];
    for (int k = 0; k < 3; k++)
        labels[k] = mr_outputs_method_label(methods[k]);
    path_in(p, sizeof p, a, "compare.png");
    path_in(q, sizeof q, ref, "compare.png");
    CHECK_OK(mr_compare_write(q, r.matrix, NULL, truth, cimgs, labels, 3, r.window_hi, r.error_gain));
    CHECK(same_bytes(p, q));

    /* one file fails: its message; two fail: the first in the sequential order */
    char c[1024];
    path_in(c, sizeof c, base, "c");
    mkdir(c, 0777);
    path_in(p, sizeof p, c, "image_gridding-kb.nii"); /* a directory where the file should go */
    CHECK(mkdir(p, 0777) == 0);
    mr_status st = mr_outputs_write_images(c, &r, cimgs, truth);
    CHECK(st != MR_OK && strstr(mr_last_error(), "image_gridding-kb.nii") != NULL);
    fprintf(stderr, "one failing file: %s\n", mr_last_error());
    path_in(q, sizeof q, c, "image_cg.png");
    remove(q); /* written by the call before */
    CHECK(mkdir(q, 0777) == 0);
    st = mr_outputs_write_images(c, &r, cimgs, truth);
    CHECK(st != MR_OK && strstr(mr_last_error(), "image_cg.png") != NULL);
    fprintf(stderr, "two failing files: %s\n", mr_last_error());
    rmdir(p);
    rmdir(q);

    io_test_rmdir(a);
    io_test_rmdir(b);
    io_test_rmdir(ref);
    io_test_rmdir(c);
    rmdir(base);
    for (int k = 0; k < 3; k++)
        free(imgs[k]);
    free(truth);
    free(mag);
    return test_finish("test_outputs");
}
