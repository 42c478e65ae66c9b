/* Reconstructed images as HDF5 (docs/FORMAT.md, "Image files"). */
#ifndef MR_IMAGE_H5_H
#define MR_IMAGE_H5_H

#include <hdf5.h>
#include <stdint.h>

#include "../base/status.h"
#include "geometry.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const char *key; /* attribute name, e.g. "time_solve_s" */
    double value;
} mr_image_attr;

typedef struct {
    const char *method;         /* "cg", "gridding-kb", ... */
    int iterations;             /* 0 for direct methods */
    const mr_image_attr *attrs; /* borrowed; extra numeric attributes (timings, lambda, ...) */
    int nattrs;
    const float *fov_mm; /* borrowed [3] {x, y, z}: the scan's field of view in mm (0 on an axis: unknown);
                            NULL or all 0: no geometry attributes */
    const mr_geometry *geometry; /* borrowed; the scanner placement (position_mm, read_dir, phase_dir,
                                    slice_dir: float64[3], LPS), or NULL: not written */
} mr_image_meta;

/* What an image file says besides the voxels (mr_image_h5_read_info). */
typedef struct {
    float fov_mm[3];      /* 0 where absent or unknown */
    int has_geometry;     /* 1: geometry holds the file's placement */
    mr_geometry geometry;
    char method[32];      /* "" when absent */
} mr_image_h5_info;

/* Write /image float32 [Nz][Ny][Nx][2] (complex) with attributes matrix, method, iterations, the
 * geometry (when fov_mm is known: fov_mm and voxel_size_mm = fov_mm / matrix, float64[3] {x, y, z},
 * 0 where unknown) and the numeric attrs. Atomic (temporary name + rename). img is borrowed. */
mr_status mr_image_h5_write(const char *path, const float *img, const int64_t matrix[3], const mr_image_meta *meta);

/* mr_image_h5_read plus the attributes fov_mm, the geometry and method into *info. */
mr_status mr_image_h5_read_info(const char *path, float **img, int64_t matrix[3], mr_image_h5_info *info);

/* Read /image back; *img (malloc'd, [n][2]) is owned by the caller. Validates like the k-space
 * reader, and like it reads once, in a child process (io/h5util.h mr_h5_read_path_in_child). */
mr_status mr_image_h5_read(const char *path, float **img, int64_t matrix[3]);

/* The same from an HDF5 file that is already open (mr_h5_open_read, mr_h5_open_memory); `name`
 * names it in messages. The file stays open and owned by the caller. */
mr_status mr_image_h5_read_file(hid_t file, const char *name, float **img, int64_t matrix[3]);

#ifdef __cplusplus
}
#endif
#endif
