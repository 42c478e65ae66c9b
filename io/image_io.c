/* Images in and out of every format (see image_io.h). */
#include "image_io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../base/log.h"
#include "cfl.h"
#include "fsutil.h"
#include "h5util.h"
#include "image_h5.h"
#include "image_png.h"
#include "mrd_image.h"
#include "nifti.h"

static const char *const format_names[MR_IMAGE_FORMATS] = {"h5", "png", "nifti", "cfl", "mrd", "dicom"};

const char *mr_image_format_name(mr_image_format f)
{
    return f >= 0 && f < MR_IMAGE_FORMATS ? format_names[f] : "?";
}

mr_status mr_image_formats_parse(const char *list, unsigned *set)
{
    *set = 0;
    if (!list || !list[0])
        return mr_error(MR_EINVAL, "an empty list of formats (choose from h5, png, nifti, cfl, mrd, dicom, all)");
    const char *p = list;
    while (*p) {
        const char *end = strchr(p, ',');
        const size_t n = end ? (size_t)(end - p) : strlen(p);
        unsigned bit = 0;
        if (n == 3 && !strncmp(p, "all", 3))
            bit = (1u << MR_IMAGE_FORMATS) - 1;
        for (int f = 0; f < MR_IMAGE_FORMATS; f++)
            if (strlen(format_names[f]) == n && !strncmp(p, format_names[f], n))
                bit = 1u << f;
        if (!bit)
            return mr_error(MR_EINVAL, "'%.*s' is not an image format (h5, png, nifti, cfl, mrd, dicom, all)", (int)n,
                            p);
        if (*set & bit)
            return mr_error(MR_EINVAL, "'%.*s' is listed twice", (int)n, p);
        *set |= bit;
        p += n;
        if (*p == ',' && !*++p)
            return mr_error(MR_EINVAL, "'%s' ends with a comma", list);
    }
    return MR_OK;
}

void mr_image_formats_text(unsigned set, char *buf, size_t size)
{
    size_t n = 0;
    if (size)
        buf[0] = '\0';
    for (int f = 0; f < MR_IMAGE_FORMATS; f++)
        if (set & (1u << f)) {
            int k = snprintf(buf + n, n < size ? size - n : 0, "%s%s", n ? "," : "", format_names[f]);
            if (k > 0)
                n += (size_t)k;
        }
}

void mr_image_free(mr_image *im)
{
    if (!im)
        return;
    free(im->data);
    free(im);
}

void mr_image_write_opts_default(mr_image_write_opts *o)
{
    memset(o, 0, sizeof *o);
    o->series_number = 1;
}

/* [Nz][Ny][Nx] magnitudes of im */
static float *magnitudes(const mr_image *im, const char *path)
{
    const int64_t n = im->matrix[0] * im->matrix[1] * im->matrix[2];
    float *mag = malloc((size_t)n * sizeof *mag);
    if (!mag) {
        mr_error(MR_ENOMEM, "%s: out of memory for a %lld-voxel image", path, (long long)n);
        return NULL;
    }
    for (int64_t v = 0; v < n; v++)
        mag[v] = hypotf(im->data[2 * v], im->data[2 * v + 1]);
    return mag;
}

mr_status mr_image_write(mr_image_format f, const char *path, const mr_image *im, const mr_image_write_opts *o)
{
    mr_image_write_opts def;
    if (!o) {
        mr_image_write_opts_default(&def);
        o = &def;
    }
    const mr_geometry *g = im->has_geometry ? &im->geometry : NULL;
    const char *desc = o->description ? o->description : "mrirecon";
    switch (f) {
    case MR_IMAGE_H5: {
        mr_image_meta meta = {im->method, 0, NULL, 0, im->fov_mm, g};
        return mr_image_h5_write(path, im->data, im->matrix, &meta);
    }
    case MR_IMAGE_PNG: {
        float *mag = magnitudes(im, path);
        if (!mag)
            return MR_ENOMEM;
        mr_status st = mr_png_write_volume(path, mag, im->matrix, o->window_lo, o->window_hi, 8);
        free(mag);
        return st;
    }
    case MR_IMAGE_NIFTI:
        return mr_nifti_write_geometry(path, im->data, im->matrix, im->fov_mm,
                                       o->nifti_complex ? MR_NIFTI_COMPLEX : MR_NIFTI_MAGNITUDE, g,
                                       strlen(desc) <= 79 ? desc : NULL);
    case MR_IMAGE_CFL: {
        /* BART's image dims: READ, PHS1, PHS2 = x, y, z; the same bytes. The "# mrirecon" section (skipped
           by BART) keeps the FOV. */
        mr_cfl_extra extra;
        memset(&extra, 0, sizeof extra);
        extra.present = 1;
        memcpy(extra.matrix, im->matrix, sizeof extra.matrix);
        memcpy(extra.fov_mm, im->fov_mm, sizeof extra.fov_mm);
        return mr_cfl_write(path, 3, im->matrix, im->data, &extra);
    }
    case MR_IMAGE_MRD: {
        char var[48];
        snprintf(var, sizeof var, "image_%s", im->method[0] ? im->method : "0");
        mr_mrd_image_opts mo = {var, im->fov_mm, g, o->series_number, desc};
        return mr_mrd_image_write(path, im->data, im->matrix, &mo);
    }
    case MR_IMAGE_DICOM: {
        mr_dicom_opts d = {o->study, o->series_number, desc, im->fov_mm, g, NULL, NULL, NULL, 0};
        return mr_dicom_write_series(path, im->data, im->matrix, &d, NULL);
    }
    default:
        return mr_error(MR_EINVAL, "%s: image format %d", path, (int)f);
    }
}

/* ---- reading ----------------------------------------------------------------------------------- */

typedef enum { KIND_NONE = 0, KIND_H5, KIND_NIFTI, KIND_CFL, KIND_MRD } image_kind;

/* The BART array name of path: NAME for NAME, NAME.hdr or NAME.cfl when NAME.hdr is a BART header. */
static int cfl_name(const char *path, char *name, size_t size)
{
    snprintf(name, size, "%s", path);
    size_t n = strlen(name);
    if (n > 4 && (!strcmp(name + n - 4, ".hdr") || !strcmp(name + n - 4, ".cfl")))
        name[n - 4] = '\0';
    char hdr[4200];
    snprintf(hdr, sizeof hdr, "%s.hdr", name);
    return mr_cfl_is_header(hdr);
}

/* 1 when path names one array of a BART k-space pair: NAME_traj or NAME_ksp (BART's names for them, the
 * partner present or not), or any name whose partners NAME_traj + NAME_ksp both exist. */
static int cfl_pair(const char *path, const char *name)
{
    const size_t n = strlen(name);
    if ((n > 4 && !strcmp(name + n - 4, "_ksp")) || (n > 5 && !strcmp(name + n - 5, "_traj")))
        return 1;
    char traj[4096], ksp[4096], th[4200], kh[4200];
    if (mr_cfl_pair_names(path, traj, ksp, sizeof traj) != MR_OK) {
        mr_clear_error();
        return 0;
    }
    snprintf(th, sizeof th, "%s.hdr", traj);
    snprintf(kh, sizeof kh, "%s.hdr", ksp);
    return mr_cfl_is_header(th) && mr_cfl_is_header(kh);
}

/* A BART array whose first dimension is 1, 2 or 3 is k-space ([1, R, S, C]) or a trajectory ([3, R, S]), as
 * BART's non-Cartesian arrays are, not an image. */
static int cfl_kspace_shape(const char *name)
{
    int64_t dims[MR_CFL_DIMS];
    if (mr_cfl_read_header(name, dims, NULL) != MR_OK) {
        mr_clear_error();
        return 0;
    }
    return dims[0] <= 3;
}

static image_kind probe(const char *path)
{
    char name[4100];
    if (mr_file_starts_with(path, 344, "n+1", 4))
        return KIND_NIFTI;
    if (mr_file_starts_with(path, 0, "\x89HDF\r\n\x1a\n", 8))
        return KIND_H5;
    if (cfl_name(path, name, sizeof name) && !cfl_pair(path, name) && !cfl_kspace_shape(name))
        return KIND_CFL;
    return KIND_NONE;
}

/* KIND_H5 for /image (ours), KIND_MRD for MRD images (/dataset without raw data), else KIND_NONE. */
static mr_status h5_kind(hid_t file, const char *path, void *ctx)
{
    int present = 0;
    mr_status st = mr_h5_lookup(file, path, "/image", &present);
    *(image_kind *)ctx = st == MR_OK && present ? KIND_H5 : mr_mrd_image_probe(file, path) ? KIND_MRD : KIND_NONE;
    return st;
}

/* probe(), with HDF5 files told apart by their groups, looked up after a child process opened the file (a
 * damaged file that crashes libhdf5 is then no image, not a crash). */
static image_kind probe_kind(const char *path)
{
    image_kind k = probe(path);
    if (k != KIND_H5)
        return k;
    if (mr_h5_probe_in_child(path, h5_kind, &k, sizeof k) != MR_OK || (k != KIND_H5 && k != KIND_MRD))
        k = KIND_NONE;
    mr_clear_error();
    return k;
}

int mr_image_probe(const char *path) { return probe_kind(path) != KIND_NONE; }

/* A BART array [X, Y, Z, 1, ...] as an image; other non-trivial dims are refused (a k-space or coil
 * array is not an image). The "# mrirecon" section gives the FOV when its matrix agrees. */
static mr_status read_cfl(const char *path, const char *name, mr_image *im)
{
    int64_t dims[MR_CFL_DIMS];
    mr_cfl_extra extra;
    mr_status st = mr_cfl_read(name, dims, &extra, &im->data);
    if (st != MR_OK)
        return st;
    for (int d = 3; d < MR_CFL_DIMS; d++)
        if (dims[d] != 1)
            return mr_error(MR_EFORMAT, "%s: BART dimension %d is %lld: not an image [X, Y, Z] (pick one with 'bart "
                                        "slice %d 0')",
                            path, d, (long long)dims[d], d);
    memcpy(im->matrix, dims, sizeof im->matrix);
    if (extra.present && !memcmp(extra.matrix, im->matrix, sizeof im->matrix))
        memcpy(im->fov_mm, extra.fov_mm, sizeof im->fov_mm);
    return MR_OK;
}

mr_status mr_image_read(const char *path, mr_image **out)
{
    *out = NULL;
    mr_image *im = calloc(1, sizeof *im);
    if (!im)
        return mr_error(MR_ENOMEM, "out of memory");
    char name[4100];
    mr_status st;
    int nimages = 0;
    switch (probe_kind(path)) {
    case KIND_MRD:
        st = mr_mrd_image_read(path, &im->data, im->matrix, im->fov_mm, &im->geometry, &im->has_geometry, &nimages);
        if (st == MR_OK && nimages > 1)
            mr_log(MR_LOG_INFO, "%s: the first of %d images", path, nimages);
        break;
    case KIND_NIFTI:
        st = mr_nifti_read(path, &im->data, im->matrix, im->fov_mm, &im->geometry, &im->has_geometry);
        break;
    case KIND_H5: {
        mr_image_h5_info info;
        st = mr_image_h5_read_info(path, &im->data, im->matrix, &info);
        if (st == MR_OK) {
            memcpy(im->fov_mm, info.fov_mm, sizeof im->fov_mm);
            im->has_geometry = info.has_geometry;
            im->geometry = info.geometry;
            snprintf(im->method, sizeof im->method, "%s", info.method);
        }
        break;
    }
    case KIND_CFL:
        cfl_name(path, name, sizeof name);
        st = read_cfl(path, name, im);
        break;
    default:
        st = mr_error(MR_EFORMAT, "%s: not an image mrirecon reads (an HDF5 image with /image, an MRD image, a "
                                  "NIfTI-1 .nii, a BART array)",
                      path);
    }
    if (st != MR_OK) {
        mr_image_free(im);
        return st;
    }
    *out = im;
    return MR_OK;
}
