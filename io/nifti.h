/* NIfTI-1 image output (single-file .nii: the 348-byte header, a 4-byte empty extension flag, the
 * voxels from byte 352), written by our own ~200 lines rather than through libnifti: the header is
 * a fixed little-endian layout, and a library would add a dependency to the build (Debian's
 * libnifti2-dev is not on every machine mrirecon builds on) for no extra capability. The tests read
 * the files back with libniftiio where it is installed. docs/FORMAT.md section 7 is normative.
 *
 * Voxel size: FOV / N per axis (mm); an axis without a FOV gets 1 mm. Data: float32 magnitude
 * (datatype 16) or complex64 (datatype 32, (re, im) pairs), x fastest ([Nz][Ny][Nx], the same order
 * as every mrirecon image). 2D images are written with dim[0] = 3 and one slice.
 * Placement: with a geometry (io/geometry.h; from an ISMRMRD scan) qform and sform give the scanner
 * position (code 1, NIFTI_XFORM_SCANNER_ANAT), converted from LPS to NIfTI's RAS; without one both
 * use the default geometry of io/geometry.h (x -> left, y -> posterior, z -> head, the centre voxel N/2
 * at the origin; code 2, ALIGNED_ANAT), so that a viewer shows row 0 of our PNG at the top. */
#ifndef MR_NIFTI_H
#define MR_NIFTI_H

#include <stdint.h>

#include "../base/status.h"
#include "geometry.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { MR_NIFTI_MAGNITUDE = 0, MR_NIFTI_COMPLEX = 1 } mr_nifti_kind;

#define MR_NIFTI_HEADER_BYTES 348
#define MR_NIFTI_VOX_OFFSET 352

/* Write img [Nz][Ny][Nx][2] (complex, borrowed) to path (.nii), atomically (temporary name +
 * rename): |img| as float32 or img as complex64. fov_mm may be NULL (1 mm voxels). */
mr_status mr_nifti_write(const char *path, const float *img, const int64_t matrix[3], const float fov_mm[3],
                         mr_nifti_kind kind);

/* The same with the scanner geometry (NULL: unknown, as above) and a description (NULL or at most
 * 79 characters: the header's descrip field). */
mr_status mr_nifti_write_geometry(const char *path, const float *img, const int64_t matrix[3], const float fov_mm[3],
                                  mr_nifti_kind kind, const mr_geometry *geometry, const char *description);

/* The 4x4 voxel-to-world (RAS, mm) matrix the writer stores as sform for these arguments (rows
 * srow_x, srow_y, srow_z; the fourth row is 0 0 0 1). For tests and callers that place overlays. */
void mr_nifti_affine(const int64_t matrix[3], const float fov_mm[3], const mr_geometry *geometry, double affine[3][4]);

/* Read a single-file NIfTI-1 image (.nii) of up to 3 dimensions (further dims 1), either byte order,
 * datatypes uint8/int8/int16/uint16/int32/uint32/float32/float64 (scaled by scl_slope/scl_inter when
 * the slope is set) or complex64/complex128, into *img (malloc'd complex [Nz][Ny][Nx][2], the
 * caller's). fov_mm: |pixdim| x N per axis (mm; 0 where pixdim is unset). *has_geometry: 1 when the
 * sform (preferred) or qform places the image; then *geometry holds it in LPS (voxel N/2 at its
 * position; a voxel size from the transform's columns). Sizes are checked against the file before
 * anything is allocated; every value must be finite. .hdr/.img pairs and .nii.gz are refused. */
mr_status mr_nifti_read(const char *path, float **img, int64_t matrix[3], float fov_mm[3], mr_geometry *geometry,
                        int *has_geometry);

#ifdef __cplusplus
}
#endif
#endif
