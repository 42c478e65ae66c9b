/* Readout times and field maps in files (docs/FORMAT.md 1.2, format version 3; io/fieldmap.h):
 *  - a scan with /kspace/time and /kspace/fieldmap is written as version 3 and read back bit for bit;
 *    without them the version stays 1 (old readers still read it);
 *  - the compact timing (readout_te_s, readout_dwell_s, readout_samples, readout_echo_sample) expands to
 *    t = te + (j - echo) dwell per readout; three of the four attributes are refused naming the missing one;
 *  - a field map from an HDF5 /fieldmap ([Ny][Nx], units rad/s, fov_mm) and from NIfTI-1 (int16 with
 *    scl_slope, float32) is resampled onto the scan's matrix: a linear field comes back exactly
 *    (trilinear interpolation of a linear function; float rounding, bound 1e-4 Hz);
 *  - refusals name the file and what is wrong: a scan without readout times (MR_EINVAL), a field of view
 *    that differs by more than 1 %, a 3D map for a 2D scan, a gzip file, a file of another kind. */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/fieldmap.h"
#include "io/kspace_h5.h"
#include "io_testutil.h"
#include "testutil.h"

static char path_buf[4096];
static const char *tmp(const char *name)
{
    snprintf(path_buf, sizeof path_buf, "%s/%s", test_tmpdir("field_io"), name);
    return path_buf;
}

/* a small radial scan with or without times and a field */
static mr_kspace *scan(int timed, int field, const int64_t matrix[3])
{
    mr_scan_params sp;
    mr_scan_params_default(&sp);
    mr_traj_params_default(&sp.traj, MR_TRAJ_RADIAL2D, matrix);
    sp.traj.spokes = 8;
    sp.traj.readout = 16;
    sp.truth = 0;
    if (timed) {
        sp.dwell_s = 4e-6;
        sp.te_s = 2e-3;
    }
    if (field)
        CHECK_OK(mr_field_parse("c=10,x=100,y=-50", &sp.field));
    mr_kspace *ks = NULL;
    CHECK_OK(mr_scan_simulate(&sp, &ks));
    return ks;
}

static void set_attr(const char *path, const char *obj, const char *name, hid_t type, const void *v, hsize_t n)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t o = H5Oopen(f, obj, H5P_DEFAULT);
    hid_t s = n > 1 ? H5Screate_simple(1, &n, NULL) : H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(o, name, type, s, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(a >= 0 && H5Awrite(a, type, v) >= 0);
    H5Aclose(a);
    H5Sclose(s);
    H5Oclose(o);
    H5Fclose(f);
}

static void round_trip(void)
{
    const int64_t matrix[3] = {16, 16, 1};
    mr_kspace *ks = scan(1, 1, matrix), *back = NULL;
    if (!ks)
        return;
    CHECK(ks->time && ks->fieldmap);
    CHECK_OK(mr_kspace_write(tmp("v3.h5"), ks));
    CHECK(io_file_version(tmp("v3.h5")) == 3);
    CHECK_OK(mr_kspace_read(tmp("v3.h5"), &back));
    if (back) {
        CHECK(back->time && !memcmp(back->time, ks->time, (size_t)ks->nsamples * sizeof(float)));
        CHECK(back->fieldmap && !memcmp(back->fieldmap, ks->fieldmap, 16 * 16 * sizeof(float)));
        CHECK_OK(mr_kspace_check_field(back, "v3.h5"));
    }
    mr_kspace_free(back);
    back = NULL;
    /* the radial spoke's echo is its middle sample: t = te + (j - 8) dwell */
    CHECK_LE("radial readout time at the echo sample - te (s)", fabs(ks->time[8] - 2e-3), 1e-9);
    CHECK_LE("radial readout time of sample 0 - (te - 8 dwell) (s)", fabs(ks->time[0] - (2e-3 - 32e-6)), 1e-9);

    /* without times or field: version 1 */
    mr_kspace *plain = scan(0, 0, matrix);
    CHECK_OK(mr_kspace_write(tmp("v1.h5"), plain));
    CHECK(io_file_version(tmp("v1.h5")) == 1);
    /* the compact timing expands */
    const double te = 3e-3, dwell = 5e-6;
    const int64_t rs = 16, echo = 4;
    set_attr(tmp("v1.h5"), "/kspace", "readout_te_s", H5T_NATIVE_DOUBLE, &te, 1);
    set_attr(tmp("v1.h5"), "/kspace", "readout_dwell_s", H5T_NATIVE_DOUBLE, &dwell, 1);
    set_attr(tmp("v1.h5"), "/kspace", "readout_samples", H5T_NATIVE_INT64, &rs, 1);
    CHECK(mr_kspace_read(tmp("v1.h5"), &back) == MR_EFORMAT && strstr(mr_last_error(), "readout_echo_sample") &&
          strstr(mr_last_error(), "v1.h5"));
    printf("three of the four timing attributes -> %s\n", mr_last_error());
    set_attr(tmp("v1.h5"), "/kspace", "readout_echo_sample", H5T_NATIVE_INT64, &echo, 1);
    CHECK_OK(mr_kspace_read(tmp("v1.h5"), &back));
    if (back && back->time) {
        double worst = 0;
        for (int64_t k = 0; k < back->nsamples; k++)
            worst = fmax(worst, fabs(back->time[k] - (te + (double)(k % rs - echo) * dwell)));
        CHECK_LE("compact timing: max |t - (te + (j - echo) dwell)| (s)", worst, 1e-9);
    } else {
        CHECK(back && back->time);
    }
    mr_kspace_free(back);
    mr_kspace_free(plain);
    mr_kspace_free(ks);
}

/* linear test field at FOV position r */
static double lin(double x, double y) { return 12.0 + 80.0 * x - 40.0 * y; }

static void write_h5_map(const char *path, int64_t n, double fov, int rad)
{
    float *v = malloc((size_t)(n * n) * sizeof(float));
    for (int64_t iy = 0; iy < n; iy++)
        for (int64_t ix = 0; ix < n; ix++)
            v[iy * n + ix] = (float)(lin((double)(ix - n / 2) / (double)n, (double)(iy - n / 2) / (double)n) *
                                     (rad ? 2 * M_PI : 1.0));
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const hsize_t dims[2] = {(hsize_t)n, (hsize_t)n};
    hid_t s = H5Screate_simple(2, dims, NULL);
    hid_t d = H5Dcreate2(f, "/fieldmap", H5T_IEEE_F32LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    H5Dclose(d);
    H5Sclose(s);
    H5Fclose(f);
    const float fovs[3] = {(float)fov, (float)fov, 0};
    set_attr(path, "/fieldmap", "fov_mm", H5T_NATIVE_FLOAT, fovs, 3);
    if (rad) {
        hid_t t = H5Tcopy(H5T_C_S1);
        H5Tset_size(t, 5);
        set_attr(path, "/fieldmap", "units", t, "rad/s", 1);
        H5Tclose(t);
    }
    free(v);
}

/* NIfTI-1 single file, little endian: int16 (datatype 4) scaled by slope, or float32 (16) */
static void write_nifti(const char *path, int64_t nx, int64_t ny, int64_t nz, double vox_mm, int as_int16)
{
    unsigned char h[352];
    memset(h, 0, sizeof h);
    const int32_t hs = 348;
    memcpy(h, &hs, 4);
    const int16_t dim[8] = {nz > 1 ? 3 : 2, (int16_t)nx, (int16_t)ny, (int16_t)nz, 1, 1, 1, 1};
    memcpy(h + 40, dim, sizeof dim);
    const int16_t dt = as_int16 ? 4 : 16, bp = as_int16 ? 16 : 32;
    memcpy(h + 70, &dt, 2);
    memcpy(h + 72, &bp, 2);
    const float pix[8] = {1, (float)vox_mm, (float)vox_mm, (float)vox_mm, 1, 1, 1, 1};
    memcpy(h + 76, pix, sizeof pix);
    const float off = 352, slope = as_int16 ? 0.01f : 0.0f, inter = 0;
    memcpy(h + 108, &off, 4);
    memcpy(h + 112, &slope, 4);
    memcpy(h + 116, &inter, 4);
    h[123] = 2; /* mm */
    memcpy(h + 344, "n+1", 4);
    FILE *fp = fopen(path, "wb");
    fwrite(h, 1, sizeof h, fp);
    for (int64_t v = 0; v < nx * ny * nz; v++) {
        const int64_t ix = v % nx, iy = (v / nx) % ny;
        const double w = lin((double)(ix - nx / 2) / (double)nx, (double)(iy - ny / 2) / (double)ny);
        if (as_int16) {
            const int16_t q = (int16_t)lrint(w / 0.01);
            fwrite(&q, 2, 1, fp);
        } else {
            const float q = (float)w;
            fwrite(&q, 4, 1, fp);
        }
    }
    fclose(fp);
}

/* the attached map of a 32x32 scan against the linear field; bound in Hz */
static void check_attached(const char *what, const mr_kspace *ks, double bound)
{
    double worst = 0;
    for (int64_t iy = 0; iy < 32; iy++)
        for (int64_t ix = 0; ix < 32; ix++)
            worst = fmax(worst, fabs(ks->fieldmap[iy * 32 + ix] - lin((ix - 16) / 32.0, (iy - 16) / 32.0)));
    char label[200];
    snprintf(label, sizeof label, "%s: max |attached - linear field| (Hz)", what);
    CHECK_LE(label, worst, bound);
}

static void maps_from_files(void)
{
    const int64_t matrix[3] = {32, 32, 1};
    mr_kspace *ks = scan(1, 0, matrix), *untimed = scan(0, 0, matrix);
    if (!ks || !untimed)
        return;
    mr_fieldmap *fm = NULL;
    /* HDF5, 64^2 in rad/s -> 32^2 */
    write_h5_map(tmp("fm64.h5"), 64, 240, 1);
    CHECK_OK(mr_fieldmap_read(tmp("fm64.h5"), MR_FIELD_UNITS_AUTO, &fm));
    if (fm) {
        CHECK(fm->matrix[0] == 64 && fm->matrix[1] == 64 && fm->matrix[2] == 1 && fabs(fm->fov_mm[0] - 240) < 1e-3);
        CHECK_OK(mr_fieldmap_attach(ks, "scan.h5", fm));
        check_attached("HDF5 /fieldmap 64^2 rad/s -> 32^2", ks, 1e-4);
        /* asking for Hz when the file says rad/s is refused */
        mr_fieldmap *bad = NULL;
        CHECK(mr_fieldmap_read(tmp("fm64.h5"), MR_FIELD_UNITS_HZ, &bad) == MR_EINVAL && !bad);
        printf("units disagree -> %s\n", mr_last_error());
        /* a scan without readout times: the library error names both files and what is missing */
        CHECK(mr_fieldmap_attach(untimed, "untimed.h5", fm) == MR_EINVAL);
        printf("no readout times -> %s\n", mr_last_error());
        CHECK(strstr(mr_last_error(), "untimed.h5") && strstr(mr_last_error(), "fm64.h5") &&
              strstr(mr_last_error(), "no readout times"));
        CHECK(mr_kspace_check_field(untimed, "untimed.h5") == MR_EINVAL && strstr(mr_last_error(), "untimed.h5"));
    }
    mr_fieldmap_free(fm);
    fm = NULL;
    /* FOV mismatch */
    write_h5_map(tmp("fm200.h5"), 64, 200, 0);
    CHECK_OK(mr_fieldmap_read(tmp("fm200.h5"), MR_FIELD_UNITS_AUTO, &fm));
    if (fm) {
        CHECK(mr_fieldmap_attach(ks, "scan.h5", fm) == MR_EINVAL && strstr(mr_last_error(), "fm200.h5") &&
              strstr(mr_last_error(), "240"));
        printf("field of view differs -> %s\n", mr_last_error());
    }
    mr_fieldmap_free(fm);
    fm = NULL;
    /* NIfTI int16 with slope, 48^2 of 5 mm = 240 mm */
    write_nifti(tmp("fm.nii"), 48, 48, 1, 5.0, 1);
    CHECK_OK(mr_fieldmap_read(tmp("fm.nii"), MR_FIELD_UNITS_AUTO, &fm));
    if (fm) {
        CHECK(fm->matrix[0] == 48 && fabs(fm->fov_mm[1] - 240) < 1e-3);
        CHECK_OK(mr_fieldmap_attach(ks, "scan.h5", fm));
        check_attached("NIfTI int16 x 0.01 48^2 -> 32^2", ks, 0.011); /* the int16 quantisation, 0.005 Hz */
    }
    mr_fieldmap_free(fm);
    fm = NULL;
    write_nifti(tmp("fm32.nii"), 32, 32, 1, 7.5, 0);
    CHECK_OK(mr_fieldmap_read(tmp("fm32.nii"), MR_FIELD_UNITS_AUTO, &fm));
    if (fm) {
        CHECK_OK(mr_fieldmap_attach(ks, "scan.h5", fm));
        check_attached("NIfTI float32 32^2 (same matrix: copied)", ks, 1e-5);
    }
    mr_fieldmap_free(fm);
    fm = NULL;
    /* a 3D map for a 2D scan */
    write_nifti(tmp("fm3d.nii"), 32, 32, 4, 7.5, 0);
    CHECK_OK(mr_fieldmap_read(tmp("fm3d.nii"), MR_FIELD_UNITS_AUTO, &fm));
    if (fm) {
        CHECK(mr_fieldmap_attach(ks, "scan.h5", fm) == MR_EINVAL && strstr(mr_last_error(), "2D"));
        printf("3D map, 2D scan -> %s\n", mr_last_error());
    }
    mr_fieldmap_free(fm);
    fm = NULL;
    /* files of other kinds */
    FILE *fp = fopen(tmp("fm.nii.gz"), "wb");
    fputs("\x1f\x8b\x08 not really", fp);
    fclose(fp);
    CHECK(mr_fieldmap_read(tmp("fm.nii.gz"), MR_FIELD_UNITS_AUTO, &fm) == MR_EFORMAT && strstr(mr_last_error(), "gunzip"));
    fp = fopen(tmp("text.txt"), "wb");
    fputs("hello", fp);
    fclose(fp);
    CHECK(mr_fieldmap_read(tmp("text.txt"), MR_FIELD_UNITS_AUTO, &fm) == MR_EFORMAT && strstr(mr_last_error(), "text.txt"));
    CHECK(mr_fieldmap_read(tmp("missing.nii"), MR_FIELD_UNITS_AUTO, &fm) == MR_EIO && !fm);
    /* an HDF5 file without a map */
    mr_kspace *plain = scan(0, 0, matrix);
    CHECK_OK(mr_kspace_write(tmp("nomap.h5"), plain));
    CHECK(mr_fieldmap_read(tmp("nomap.h5"), MR_FIELD_UNITS_AUTO, &fm) == MR_EFORMAT &&
          strstr(mr_last_error(), "no field map"));
    printf("HDF5 without a map -> %s\n", mr_last_error());
    /* units */
    mr_field_units u;
    CHECK(mr_field_units_parse("rad/s", &u) == MR_OK && u == MR_FIELD_UNITS_RAD_S);
    CHECK(mr_field_units_parse("tesla", &u) == MR_EINVAL);
    mr_kspace_free(plain);
    mr_kspace_free(ks);
    mr_kspace_free(untimed);
}

int main(void)
{
    round_trip();
    maps_from_files();
    return test_finish("test_field_io");
}
