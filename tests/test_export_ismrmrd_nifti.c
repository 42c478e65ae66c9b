/* Every image writer and reader on the phantom with the orientation marker (docs/FORMAT.md,
 * "Orientation"): a non-square 2D image and a 3D volume of complex values (the truth with a phase ramp)
 * through our HDF5 image, NIfTI-1, BART .hdr/.cfl, the MRD image, PNG and (where the build has DCMTK)
 * DICOM. Checks: dimensions, values (relative error; the magnitude for magnitude formats), the placement
 * (voxel -> LPS, also for a rotated scanner geometry), and where the marker lands: the centroid of
 * (image read back - the same phantom without the marker), in voxel indices, must be the marker's
 * centre x = -0.34, y = -0.37 (, z = -0.1) of the FOV, i.e. the top-left corner of every picture. A
 * flip or a transposition moves it by many voxels. MRD images are read back by our reader and with libismrmrd, NIfTI
 * files with libniftiio where the test is built with them (MR_HAVE_ISMRMRD, MR_HAVE_NIFTILIB). DICOM
 * files are validated by tests/cli_export.sh (dciodvfy, dcmdump, pydicom). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../io/image_io.h"
#include "../io/image_png.h"
#include "../phantoms/shepp_logan.h"
#include "testutil.h"

#ifdef MR_HAVE_ISMRMRD
#include <ismrmrd/dataset.h>
#include <ismrmrd/ismrmrd.h>
#endif
#ifdef MR_HAVE_NIFTILIB
#include <nifti1_io.h>
#endif

static const double marker_2d[3] = {-0.34, -0.37, 0}, marker_3d[3] = {-0.34, -0.37, -0.1};

/* Centroid (voxel indices) of max(a - b, 0) over the volume: the marker when a has it and b not. */
static void centroid(const float *a, const float *b, const int64_t m[3], double c[3])
{
    double s = 0, w[3] = {0, 0, 0};
    for (int64_t z = 0; z < m[2]; z++)
        for (int64_t y = 0; y < m[1]; y++)
            for (int64_t x = 0; x < m[0]; x++) {
                const int64_t v = (z * m[1] + y) * m[0] + x;
                const double d = fmax(0.0, (double)a[v] - (double)b[v]);
                s += d;
                w[0] += d * (double)x;
                w[1] += d * (double)y;
                w[2] += d * (double)z;
            }
    for (int a3 = 0; a3 < 3; a3++)
        c[a3] = s > 0 ? w[a3] / s : -1;
}

static void check_marker(const char *what, const float *mag, const float *plain, const int64_t m[3], const double mk[3])
{
    double c[3];
    centroid(mag, plain, m, c);
    double err = 0;
    for (int a = 0; a < (m[2] > 1 ? 3 : 2); a++)
        err = fmax(err, fabs(c[a] - (mk[a] * (double)m[a] + (double)(m[a] / 2))));
    printf("%s: marker centroid (%.2f, %.2f, %.2f), expected (%.2f, %.2f, %.2f)\n", what, c[0], c[1], c[2],
           mk[0] * (double)m[0] + (double)(m[0] / 2), mk[1] * (double)m[1] + (double)(m[1] / 2),
           mk[2] * (double)m[2] + (double)(m[2] / 2));
    CHECK_LE("marker centroid vs its place (voxels)", err, 1.0);
}

static float *magnitude(const float *img, int64_t n)
{
    float *m = malloc((size_t)n * sizeof *m);
    for (int64_t v = 0; v < n; v++)
        m[v] = hypotf(img[2 * v], img[2 * v + 1]);
    return m;
}

static double rel_err(const float *a, const float *b, int64_t n)
{
    double e = 0, s = 0;
    for (int64_t i = 0; i < n; i++) {
        e += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        s += (double)b[i] * b[i];
    }
    return sqrt(e / s);
}

static void check_placement(const char *what, const mr_image *got, const mr_image *want)
{
    double A[3][4], B[3][4], err = 0;
    mr_geometry_affine(got->matrix, got->fov_mm, got->has_geometry ? &got->geometry : NULL, A);
    mr_geometry_affine(want->matrix, want->fov_mm, want->has_geometry ? &want->geometry : NULL, B);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            err = fmax(err, fabs(A[i][j] - B[i][j]));
    printf("%s: placement max |diff| %.3g mm\n", what, err);
    CHECK_LE("voxel -> LPS affine vs written (mm)", err, 1e-3);
}

/* One volume through every format. */
static void run(const char *dir, mr_phantom_kind kind, const int64_t m[3], const mr_geometry *g)
{
    const int64_t n = m[0] * m[1] * m[2];
    float *truth = malloc((size_t)n * sizeof *truth), *plain = malloc((size_t)n * sizeof *plain);
    CHECK_OK(mr_phantom_truth(kind, m, truth));
    CHECK_OK(mr_phantom_truth((mr_phantom_kind)(kind & ~MR_PHANTOM_MARKER), m, plain));
    mr_image im;
    memset(&im, 0, sizeof im);
    memcpy(im.matrix, m, sizeof im.matrix);
    im.data = malloc((size_t)n * 2 * sizeof(float));
    for (int64_t v = 0; v < n; v++) { /* a phase ramp along x: complex formats must keep it */
        const double ph = 0.3 * (double)(v % m[0]);
        im.data[2 * v] = (float)(truth[v] * cos(ph));
        im.data[2 * v + 1] = (float)(truth[v] * sin(ph));
    }
    im.fov_mm[0] = 240.0f;
    im.fov_mm[1] = 180.0f;
    im.fov_mm[2] = m[2] > 1 ? 120.0f : 5.0f;
    if (g) {
        im.has_geometry = 1;
        im.geometry = *g;
    }
    snprintf(im.method, sizeof im.method, "cg");
    const double *mk = mr_phantom_is_3d(kind) ? marker_3d : marker_2d;
    float *mag = magnitude(im.data, n);
    check_marker("the written image", mag, plain, m, mk);
    char path[4096], label[64];
    snprintf(label, sizeof label, "%lldx%lldx%lld%s", (long long)m[0], (long long)m[1], (long long)m[2],
             g ? " rotated" : "");

    /* formats read back by mr_image_read: ours, NIfTI (magnitude and complex), BART, MRD */
    static const struct {
        mr_image_format f;
        const char *name;
        int cplx;
    } back[] = {{MR_IMAGE_H5, "x.h5", 1},   {MR_IMAGE_NIFTI, "x.nii", 0}, {MR_IMAGE_NIFTI, "xc.nii", 1},
                {MR_IMAGE_CFL, "x", 1},     {MR_IMAGE_MRD, "x.mrd", 1}};
    for (size_t i = 0; i < sizeof back / sizeof back[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, back[i].name);
        mr_image_write_opts o;
        mr_image_write_opts_default(&o);
        o.nifti_complex = back[i].cplx;
        CHECK_OK(mr_image_write(back[i].f, path, &im, &o));
        mr_image *got = NULL;
        CHECK_OK(mr_image_read(path, &got));
        if (!got)
            continue;
        printf("%s %s: read back %lldx%lldx%lld\n", label, back[i].name, (long long)got->matrix[0],
               (long long)got->matrix[1], (long long)got->matrix[2]);
        CHECK(got->matrix[0] == m[0] && got->matrix[1] == m[1] && got->matrix[2] == m[2]);
        float *gm = magnitude(got->data, n);
        if (back[i].cplx)
            CHECK_LE("complex values read back (relative L2)", rel_err(got->data, im.data, 2 * n), 1e-7);
        else
            CHECK_LE("magnitudes read back (relative L2)", rel_err(gm, mag, n), 1e-7);
        check_marker(back[i].name, gm, plain, m, mk);
        if (back[i].f != MR_IMAGE_CFL) /* BART keeps the FOV (our note) but has no placement */
            check_placement(back[i].name, got, &im);
        else
            CHECK_LE("BART FOV x read back", fabs(got->fov_mm[0] - im.fov_mm[0]), 1e-3);
        free(gm);
        mr_image_free(got);
    }
#ifdef MR_HAVE_NIFTILIB
    { /* libniftiio's view of the same file: its qto_xyz (RAS) is our LPS affine with x, y negated */
        snprintf(path, sizeof path, "%s/x.nii", dir);
        nifti_image *nim = nifti_image_read(path, 1);
        CHECK(nim != NULL);
        if (nim) {
            double A[3][4], err = 0;
            mr_geometry_affine(m, im.fov_mm, g, A);
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 4; j++)
                    err = fmax(err, fabs(nim->qto_xyz.m[i][j] - (i < 2 ? -A[i][j] : A[i][j])));
            CHECK_LE("libniftiio qto_xyz vs our placement (RAS, mm)", err, 1e-3);
            check_marker("x.nii by libniftiio", nim->data, plain, m, mk);
            nifti_image_free(nim);
        }
    }
#endif
#ifdef MR_HAVE_ISMRMRD
    { /* the MRD image as libismrmrd reads it */
        snprintf(path, sizeof path, "%s/x.mrd", dir);
        CHECK_OK(mr_image_write(MR_IMAGE_MRD, path, &im, NULL));
        ISMRMRD_Dataset ds;
        ismrmrd_init_dataset(&ds, path, "/dataset");
        CHECK(ismrmrd_open_dataset(&ds, false) == ISMRMRD_NOERROR);
        CHECK(ismrmrd_get_number_of_images(&ds, "image_cg") == 1);
        ISMRMRD_Image mi;
        ismrmrd_init_image(&mi);
        CHECK(ismrmrd_read_image(&ds, "image_cg", 0, &mi) == ISMRMRD_NOERROR);
        CHECK(mi.head.matrix_size[0] == m[0] && mi.head.matrix_size[1] == m[1] && mi.head.matrix_size[2] == m[2]);
        CHECK(mi.head.data_type == ISMRMRD_CXFLOAT && mi.head.channels == 1);
        if (mi.data && mi.head.matrix_size[0] == m[0] && mi.head.matrix_size[1] == m[1] &&
            mi.head.matrix_size[2] == m[2]) {
            CHECK_LE("MRD image values by libismrmrd (relative L2)", rel_err(mi.data, im.data, 2 * n), 1e-7);
            float *gm = magnitude(mi.data, n);
            check_marker("x.mrd by libismrmrd", gm, plain, m, mk);
            free(gm);
        }
        mr_image back_im = im;
        back_im.has_geometry = 1;
        for (int a = 0; a < 3; a++) {
            back_im.fov_mm[a] = mi.head.field_of_view[a];
            back_im.geometry.position[a] = mi.head.position[a];
            back_im.geometry.read_dir[a] = mi.head.read_dir[a];
            back_im.geometry.phase_dir[a] = mi.head.phase_dir[a];
            back_im.geometry.slice_dir[a] = mi.head.slice_dir[a];
        }
        check_placement("x.mrd header", &back_im, &im);
        ismrmrd_cleanup_image(&mi);
        ismrmrd_close_dataset(&ds);
    }
#endif
    /* PNG: 2D the image, 3D the montage whose first panel is the axial plane through the centre; the
     * marker of the 2D phantom must be in the picture's top-left corner */
    if (m[2] == 1) {
        snprintf(path, sizeof path, "%s/x.png", dir);
        mr_image_write_opts o;
        mr_image_write_opts_default(&o);
        o.window_hi = 1.0;
        CHECK_OK(mr_image_write(MR_IMAGE_PNG, path, &im, &o));
        float *pix = NULL;
        int w = 0, h = 0, bits = 0;
        CHECK_OK(mr_png_read_gray(path, &pix, &w, &h, &bits));
        CHECK(w == m[0] && h == m[1]);
        if (pix && w == m[0] && h == m[1]) {
            float *scaled = malloc((size_t)n * sizeof *scaled);
            for (int64_t v = 0; v < n; v++)
                scaled[v] = pix[v] / 255.0f;
            check_marker("x.png", scaled, plain, m, mk);
            free(scaled);
        }
        free(pix);
    }
    if (mr_dicom_available()) { /* written here; read back by tests/cli_export.sh */
        snprintf(path, sizeof path, "%s/IM", dir);
        CHECK_OK(mr_image_write(MR_IMAGE_DICOM, path, &im, NULL));
        snprintf(path, sizeof path, "%s/IM%04lld.dcm", dir, (long long)m[2]);
        FILE *f = fopen(path, "rb");
        CHECK(f != NULL);
        if (f)
            fclose(f);
    }
    free(mag);
    free(im.data);
    free(truth);
    free(plain);
}

int main(void)
{
    const char *dir = test_tmpdir("test_export");
    /* a rotated, shifted placement (oblique: read and phase in the x-y plane rotated by 30 degrees,
       tilted slice direction) */
    const double c = cos(0.5235987755982988), s = sin(0.5235987755982988);
    const mr_geometry g = {{12.5f, -7.0f, 33.0f},
                           {(float)c, (float)s, 0.0f},
                           {(float)-s, (float)c, 0.0f},
                           {0.0f, 0.0f, 1.0f}};
    run(dir, MR_PHANTOM_SL2D_MARKER, (const int64_t[3]){64, 48, 1}, NULL);
    run(dir, MR_PHANTOM_SL2D_MARKER, (const int64_t[3]){64, 48, 1}, &g);
    run(dir, MR_PHANTOM_SL3D_MARKER, (const int64_t[3]){32, 28, 24}, NULL);
    run(dir, MR_PHANTOM_SL3D_MARKER, (const int64_t[3]){32, 28, 24}, &g);
    /* the format list of recon --format */
    unsigned set = 0;
    char text[128];
    CHECK_OK(mr_image_formats_parse("h5,png,nifti", &set));
    mr_image_formats_text(set, text, sizeof text);
    CHECK(!strcmp(text, "h5,png,nifti"));
    CHECK_OK(mr_image_formats_parse("all", &set));
    CHECK(set == (1u << MR_IMAGE_FORMATS) - 1);
    CHECK(mr_image_formats_parse("h5,jpeg", &set) == MR_EINVAL);
    CHECK(mr_image_formats_parse("h5,h5", &set) == MR_EINVAL);
    CHECK(mr_image_formats_parse("h5,", &set) == MR_EINVAL);
    return test_finish("test_export_ismrmrd_nifti");
}
