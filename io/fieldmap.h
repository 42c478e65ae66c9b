/* Field maps for off-resonance correction (docs/FORMAT.md section 1.2, docs/RECON.md "Field maps"):
 * read from a file of their own (HDF5 or NIfTI-1), checked against a scan's geometry, resampled to its
 * matrix and attached to it; and the check that a scan can be corrected at all (it needs the readout
 * time of every sample, mr_kspace.time).
 *
 * Files:
 *  - HDF5: the float32 dataset /kspace/fieldmap of an mrirecon k-space file (version 3; FOV from the
 *    group's fov_mm) or /fieldmap, [Nz][Ny][Nx] (or [Ny][Nx]) with the optional attributes fov_mm
 *    (3 floats) and units ("Hz" or "rad/s"); read in a child process first, like every HDF5 input.
 *  - NIfTI-1 single file (.nii, magic "n+1"): 2D or 3D, any of the integer and float datatypes, scaled
 *    by scl_slope/scl_inter, voxel size from pixdim (xyzt_units metres, mm or microns); the voxels are
 *    taken in file order (x fastest) on the scan's axes -- as mrirecon's own NIfTI output writes them --
 *    and the orientation matrices are not used.
 * Values are Hz (omega / 2 pi) unless the file or the caller says rad/s.
 *
 * Ownership: mr_fieldmap_read's map belongs to the caller (mr_fieldmap_free). */
#ifndef MR_FIELDMAP_H
#define MR_FIELDMAP_H

#include <stddef.h>
#include <stdint.h>

#include "../base/status.h"
#include "kspace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    MR_FIELD_UNITS_AUTO = 0, /* the HDF5 attribute `units` when present, else Hz */
    MR_FIELD_UNITS_HZ = 1,
    MR_FIELD_UNITS_RAD_S = 2 /* rad/s: divided by 2 pi */
} mr_field_units;

/* "auto", "hz", "rad/s"; parse returns MR_EINVAL naming the text. */
const char *mr_field_units_name(mr_field_units u);
mr_status mr_field_units_parse(const char *text, mr_field_units *u);

typedef struct {
    int64_t matrix[3];  /* Nx, Ny, Nz of the stored map */
    float fov_mm[3];    /* extent per axis in mm; 0 when the file does not say */
    float *hz;          /* [Nz][Ny][Nx] in Hz, owned */
    char source[1100];  /* "fm.nii", "scan.h5:/kspace/fieldmap": names the map in messages and reports */
} mr_fieldmap;

/* Read a field map file (the kind recognised by its content). MR_EFORMAT naming the file and the
 * object for anything malformed (shape, datatype, a non-finite value, units), MR_EIO when it cannot be
 * read. */
mr_status mr_fieldmap_read(const char *path, mr_field_units units, mr_fieldmap **out);
void mr_fieldmap_free(mr_fieldmap *f); /* NULL is fine */

/* Put fm on the scan: ks->fieldmap becomes fm resampled to ks's matrix (trilinear between voxel centres,
 * io/kspace.h positions, edges clamped; a copy when the matrices agree). Checks first:
 *  - the scan has readout times (ks->time), else MR_EINVAL "<scan_label>: no readout times (...): the
 *    field map <source> cannot be used";
 *  - the extents agree where both are known: |FOV_map - FOV_scan| <= 1 % per axis, else MR_EINVAL
 *    naming both;
 *  - a 2D scan takes a 2D map (Nz = 1).
 * A field map the scan had is replaced (an info line says so). */
mr_status mr_fieldmap_attach(mr_kspace *ks, const char *scan_label, const mr_fieldmap *fm);

/* A scan ready for field-map correction: MR_OK when it has both a field map and readout times;
 * MR_EINVAL naming scan_label and what is missing otherwise. */
mr_status mr_kspace_check_field(const mr_kspace *ks, const char *scan_label);

/* The range of the field map and of the times of ks (each NULL-safe: *lo = *hi = 0 when absent). */
void mr_kspace_field_range(const mr_kspace *ks, double *fmin, double *fmax, double *tmin, double *tmax);

#ifdef __cplusplus
}
#endif
#endif
