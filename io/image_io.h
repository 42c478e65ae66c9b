/* Reconstructed images in and out of every format mrirecon speaks, for `recon --format` and
 * `mrirecon convert` (docs/FORMAT.md, "Orientation" and sections 3, 6, 7, 9, 10). One convention for
 * all of them: voxel (x, y, z) is stored x fastest ([Nz][Ny][Nx]); x = the readout axis = BART's dim 0
 * = NIfTI's i = DICOM's column = ISMRMRD's matrix_size[0]; pictures show x to the right and y downward
 * (row 0 at the top); the placement (io/geometry.h) is the scan's or the default one.
 *
 * Every writer is a plain C function (callable from other languages); each writes atomically. */
#ifndef MR_IMAGE_IO_H
#define MR_IMAGE_IO_H

#include <stddef.h>
#include <stdint.h>

#include "../base/status.h"
#include "dicom.h"
#include "geometry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An image in memory. */
typedef struct {
    int64_t matrix[3];    /* {Nx, Ny, Nz} */
    float *data;          /* complex [Nz][Ny][Nx][2]; owned (mr_image_free) */
    float fov_mm[3];      /* 0 where unknown */
    int has_geometry;     /* 1: geometry is the scanner placement; 0: the default placement applies */
    mr_geometry geometry;
    char method[32];      /* "cg", "gridding-kb", ... or "" */
} mr_image;

void mr_image_free(mr_image *im); /* NULL is fine */

/* The image formats. */
typedef enum {
    MR_IMAGE_H5 = 0, /* our HDF5 image (io/image_h5.h): image_<method>.h5 */
    MR_IMAGE_PNG,    /* magnitude picture (io/image_png.h): image_<method>.png */
    MR_IMAGE_NIFTI,  /* NIfTI-1 (io/nifti.h): image_<method>.nii */
    MR_IMAGE_CFL,    /* BART array [Nx, Ny, Nz] complex (io/cfl.h): image_<method>.hdr/.cfl */
    MR_IMAGE_MRD,    /* ISMRMRD/MRD image (io/mrd_image.h): image_<method>.mrd */
    MR_IMAGE_DICOM,  /* DICOM MR series (io/dicom.h): image_<method>_0001.dcm ... one file per slice */
    MR_IMAGE_FORMATS
} mr_image_format;

/* "h5", "png", "nifti", "cfl", "mrd", "dicom" */
const char *mr_image_format_name(mr_image_format f);

/* A comma-separated list of format names into a bit set (bit f for format f); MR_EINVAL naming the
 * unknown or repeated word. "all" is every format. */
mr_status mr_image_formats_parse(const char *list, unsigned *set);

/* The bit set back as text into buf ("h5,png,nifti"). */
void mr_image_formats_text(unsigned set, char *buf, size_t size);

/* Options of mr_image_write. */
typedef struct {
    int nifti_complex;         /* NIfTI: complex64 instead of float32 magnitude */
    double window_lo, window_hi; /* PNG: the grey window; hi <= lo: [0, max] */
    const char *description;   /* NIfTI descrip / DICOM SeriesDescription / MRD ImageComment; NULL: "mrirecon" */
    const mr_dicom_study *study; /* DICOM: the study the series belongs to; NULL: a study of its own */
    int series_number;         /* DICOM SeriesNumber, MRD image_series_index (>= 1) */
} mr_image_write_opts;

void mr_image_write_opts_default(mr_image_write_opts *o);

/* Write im as format f to path: a file (h5, png, nifti, mrd), a BART name (cfl: path.hdr + path.cfl,
 * path given without extension) or a file-name prefix (dicom: path0001.dcm, ... one per slice; the
 * folder must exist). o may be NULL (the defaults). */
mr_status mr_image_write(mr_image_format f, const char *path, const mr_image *im, const mr_image_write_opts *o);

/* What mr_image_read recognises, by content: our HDF5 image (/image), an MRD image (HDF5 /dataset without
 * raw data: its first image, io/mrd_image.h), NIfTI-1 (.nii), a BART array
 * (NAME, NAME.hdr or NAME.cfl) that is not one of a k-space pair (named NAME_traj or NAME_ksp, or
 * with both NAME_traj and NAME_ksp present) and whose first dimension is at least 4 (BART's
 * non-Cartesian k-space [1, R, S, C] and trajectory [3, R, S] arrays are not images). 1 when path is one of them. A BART k-space array named otherwise (`--traj`) looks like an
 * image here: the caller decides by the options. */
int mr_image_probe(const char *path);

/* Read an image file (any of mr_image_probe's kinds) into *out (the caller's, mr_image_free).
 * MR_EFORMAT naming the file when it is none of them or malformed. */
mr_status mr_image_read(const char *path, mr_image **out);

#ifdef __cplusplus
}
#endif
#endif
