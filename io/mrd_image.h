/* Images as ISMRMRD/MRD 1.x HDF5 (the image part of the ISMRMRD format, https://ismrmrd.github.io),
 * written directly with HDF5 like the raw-data reader (io/ismrmrd_h5.h: no libismrmrd needed to build;
 * the test reads the files back with libismrmrd where it is installed). docs/FORMAT.md section 9.
 *
 * Layout (what libismrmrd's ismrmrd_append_image writes and ismrmrd_read_image reads): the group
 * /dataset/<var> holds
 *   header      compound ImageHeader [n] (extensible), one per image
 *   data        compound {real, imag} float32 [n][channels][Nz][Ny][Nx] (extensible in n)
 *   attributes  variable-length string [n]: the image's meta attributes as ismrmrdMeta XML
 * with one complex image (data_type CXFLOAT, image_type COMPLEX) of the whole volume, matrix_size
 * {Nx, Ny, Nz}, field_of_view the FOV in mm (voxel 1 mm where unknown), and the placement of
 * io/geometry.h: position = the point of voxel N/2 (LPS mm), read_dir/phase_dir/slice_dir the
 * directions of the image axes x, y, z (the default geometry when the scan had none). */
#ifndef MR_MRD_IMAGE_H
#define MR_MRD_IMAGE_H

#include <hdf5.h>
#include <stdint.h>

#include "../base/status.h"
#include "geometry.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const char *var;      /* the image variable (group) under /dataset, e.g. "image_cg"; NULL: "image_0" */
    const float *fov_mm;  /* [3] or NULL; 0 on an axis: unknown */
    const mr_geometry *geometry; /* or NULL: the default geometry */
    int series_index;     /* image_series_index (one per reconstruction method) */
    const char *comment;  /* stored as the meta attribute ImageComment (e.g. "mrirecon cg"); NULL: none */
} mr_mrd_image_opts;

/* Write img (complex [Nz][Ny][Nx][2], borrowed) as one MRD image to path, atomically (built in memory,
 * temporary name + rename). */
mr_status mr_mrd_image_write(const char *path, const float *img, const int64_t matrix[3], const mr_mrd_image_opts *o);

/* Read the first image (by name) of /dataset of an MRD file: the first image of that variable, complex
 * (CXFLOAT/CXDOUBLE) or real (any integer or float type; imaginary part 0), one channel, into *img
 * (malloc'd complex [Nz][Ny][Nx][2], the caller's), its matrix, field_of_view (fov_mm, 0 where unset) and
 * placement (*has_geometry 0 when the directions are unusable). *nimages (may be NULL): how many images
 * the variable holds. Read like every HDF5 input (io/h5util.h: checked before allocating, in a child
 * process first); MR_EFORMAT naming the file and dataset otherwise. */
mr_status mr_mrd_image_read(const char *path, float **img, int64_t matrix[3], float fov_mm[3], mr_geometry *geometry,
                            int *has_geometry, int *nimages);

/* 1 when an open HDF5 file looks like MRD images: /dataset without /kspace and without raw data
 * (/dataset/data). */
int mr_mrd_image_probe(hid_t file, const char *path);

#ifdef __cplusplus
}
#endif
#endif
