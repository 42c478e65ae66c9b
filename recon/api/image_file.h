/* One image to one file, named as `mrirecon convert` names its output: shared by convert
 * (recon/cli/cmd_convert.c) and the C API's image writer (recon/api/api.h, Python's mrirecon.write_image).
 *
 *   format by name (convert --to: mrirecon, bart, nifti, mrd, dicom, png; or io/image_io.h's names: h5,
 *   cfl, ...) or, without one, by OUT: .h5/.hdf5 our HDF5 image, .nii NIfTI-1, .mrd/.ismrmrd an MRD
 *   image, .png a picture, .dcm or a folder (existing, or a name ending in '/') DICOM, anything else a
 *   BART name;
 *   BART: OUT.hdr + OUT.cfl (OUT given with or without the extension);
 *   DICOM: OUT a folder (created) of IM0001.dcm ..., or with OUT.dcm the files OUT_0001.dcm ...;
 *   PNG: the picture recon draws (a 3D volume as its three labelled planes, recon/report/outputs.h). */
#ifndef MR_IMAGE_FILE_H
#define MR_IMAGE_FILE_H

#include <stddef.h>

#include "../../io/image_io.h"

/* Why DICOM cannot be written (a build without DCMTK). */
#define MR_IMAGE_FILE_NO_DICOM                                                                                   \
    "DICOM output: this mrirecon was built without DICOM support (DCMTK: install libdcmtk-dev and rebuild, "      \
    "scripts/setup.sh)"

/* The format for `to` (NULL: by OUT's name). MR_EINVAL naming `to` when it is no format. */
mr_status mr_image_file_format(const char *to, const char *out, mr_image_format *f);

/* Write im as format f to OUT (o may be NULL: the defaults; PNG: the grey window [0, o->window_hi], or
 * [0, max] when that is <= 0). target (may be NULL) receives what was written: the BART name, the DICOM
 * file prefix, else OUT. MR_ENOTSUP for DICOM in a build without DCMTK. */
mr_status mr_image_file_write(mr_image_format f, const char *out, const mr_image *im, const mr_image_write_opts *o,
                              char *target, size_t size);

#endif
