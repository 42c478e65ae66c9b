/* Where a reconstructed volume sits in the scanner: the patient coordinate system of DICOM and
 * ISMRMRD (LPS: +x to the patient's left, +y posterior, +z head), in mm. The image axes x, y, z of
 * an mrirecon volume are the readout, phase and slice directions of the acquisition (the axes of
 * its trajectory), and the voxel at index N/2 (integer division) of each axis sits at `position`.
 * Used by the NIfTI writer (io/nifti.h) to place images; filled by the ISMRMRD reader. */
#ifndef MR_GEOMETRY_H
#define MR_GEOMETRY_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    float position[3];  /* mm, LPS: the centre voxel */
    float read_dir[3];  /* unit vector of image axis x */
    float phase_dir[3]; /* unit vector of image axis y */
    float slice_dir[3]; /* unit vector of image axis z */
} mr_geometry;

#ifdef __cplusplus
}
#endif
#endif
