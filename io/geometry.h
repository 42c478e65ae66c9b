/* Where a reconstructed volume sits in the scanner: the patient coordinate system of DICOM and
 * ISMRMRD (LPS: +x to the patient's left, +y posterior, +z head), in mm. The image axes x, y, z of
 * an mrirecon volume are the readout, phase and slice directions of the acquisition (the axes of
 * its trajectory), and the voxel at index N/2 (integer division) of each axis sits at `position`
 * (the point r = 0 of the forward model, docs/FORMAT.md section 2).
 *
 * Filled by the ISMRMRD reader; used by every image writer that places images (NIfTI, DICOM, MRD
 * image; docs/FORMAT.md "Orientation"). A volume without a geometry is placed with the default one
 * (mr_geometry_default): x -> patient left, y -> posterior, z -> head, centre at the origin, so that
 * every writer shows it the same way (an axial slice in radiological view: row 0 at the top =
 * anterior, column 0 at the left = the patient's right). */
#ifndef MR_GEOMETRY_H
#define MR_GEOMETRY_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    float position[3];  /* mm, LPS: the centre voxel */
    float read_dir[3];  /* unit vector of image axis x */
    float phase_dir[3]; /* unit vector of image axis y */
    float slice_dir[3]; /* unit vector of image axis z */
} mr_geometry;

/* The placement of a volume without one: position 0, read (1,0,0), phase (0,1,0), slice (0,0,1). */
void mr_geometry_default(mr_geometry *g);

/* 1 when g is the default placement (within 1e-5 in every component). */
int mr_geometry_is_default(const mr_geometry *g);

/* Voxel size in mm: FOV / N per axis, 1 mm where the FOV is unknown (fov_mm NULL or <= 0). */
void mr_voxel_size_mm(const int64_t matrix[3], const float fov_mm[3], double d[3]);

/* Orthonormal LPS direction columns dir[i][a] (component i of axis a) of g: read and phase
 * orthonormalised (Gram-Schmidt), slice orthogonalised, or read x phase when missing. Returns 0 (and
 * the default directions) when g is NULL or degenerate (no usable read or phase direction). */
int mr_geometry_frame(const mr_geometry *g, double dir[3][3]);

/* Voxel index (i, j, k) -> LPS mm: p = A[.][0..2] (i, j, k) + A[.][3], with voxel N/2 at the
 * position: A[i][a] = dir[i][a] d_a, A[i][3] = position_i - sum_a dir[i][a] d_a floor(N_a/2). g
 * NULL or degenerate: the default geometry. Returns 1 when g was used. */
int mr_geometry_affine(const int64_t matrix[3], const float fov_mm[3], const mr_geometry *g, double A[3][4]);

#ifdef __cplusplus
}
#endif
#endif
