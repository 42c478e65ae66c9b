/* DICOM MR images (classic MR Image Storage, one file per slice) through DCMTK (Debian libdcmtk-dev),
 * behind a plain C interface; a build without DCMTK has a stub whose writer fails with MR_ENOTSUP and
 * says so (mr_dicom_available() = 0). docs/FORMAT.md section 10 lists every attribute written.
 *
 * Orientation (docs/FORMAT.md "Orientation"): row r, column c of slice k are voxel (x = c, y = r, z = k)
 * of the image: columns run along x (the readout), rows along y; ImageOrientationPatient = the
 * directions of x and y, ImagePositionPatient = the centre of voxel (0, 0, k), both in LPS mm from the
 * scan's geometry or the default one (io/geometry.h); PixelSpacing = (Δy, Δx).
 * Values: the magnitude as 16-bit unsigned integers with one RescaleSlope for the whole series
 * (max |img| / 65535, intercept 0), so stored value x slope = the image's intensity.
 * UIDs: UUID-derived (2.25.<a random 128-bit number>, DICOM PS3.5 B.2), no organisation root needed. */
#ifndef MR_DICOM_H
#define MR_DICOM_H

#include <stdint.h>

#include "../base/status.h"
#include "geometry.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MR_DICOM_UID_SIZE 65 /* 64 characters + NUL */

/* What the series of one reconstruction share: one study, one frame of reference. */
typedef struct {
    char study_uid[MR_DICOM_UID_SIZE];
    char frame_uid[MR_DICOM_UID_SIZE];
    char date[9], time[7]; /* StudyDate YYYYMMDD, StudyTime HHMMSS (UTC) */
} mr_dicom_study;

/* Fresh UIDs and the current date and time. */
mr_status mr_dicom_study_new(mr_dicom_study *s);

typedef struct {
    const mr_dicom_study *study;    /* borrowed; NULL: a new study of its own */
    int series_number;              /* SeriesNumber (>= 1); one series per reconstruction method */
    const char *series_description; /* e.g. "mrirecon cg" (at most 64 characters); NULL: "mrirecon" */
    const float *fov_mm;            /* [3] or NULL: voxel size FOV / N (1 mm where unknown) */
    const mr_geometry *geometry;    /* or NULL: the default geometry */
    const char *patient_name;       /* NULL: "mrirecon^phantom" */
    const char *patient_id;         /* NULL: "mrirecon" */
    const char *series_uid;         /* NULL: a new series; else this SeriesInstanceUID (the volumes of one
                                       multi-slice scan written as one series, call by call) */
    int first_instance;             /* InstanceNumber of the first slice - 1 (0: 1, 2, ...); with series_uid,
                                       the slices written before */
} mr_dicom_opts;

/* A fresh UUID-derived UID (2.25.<number>) into uid[MR_DICOM_UID_SIZE]: for a series_uid shared by calls. */
mr_status mr_dicom_uid_new(char *uid);

/* 1 when this build writes DICOM (built with DCMTK). */
int mr_dicom_available(void);

/* Write |img| (img complex [Nz][Ny][Nx][2], borrowed) as one series, one file per slice z named
 * <prefix>0001.dcm, <prefix>0002.dcm, ... (prefix "out/image_cg_" or "dir/IM"; its folder must exist),
 * each written atomically; *nfiles (may be NULL) receives the count. MR_ENOTSUP without DCMTK. */
mr_status mr_dicom_write_series(const char *prefix, const float *img, const int64_t matrix[3], const mr_dicom_opts *o,
                                int *nfiles);

#ifdef __cplusplus
}
#endif
#endif
