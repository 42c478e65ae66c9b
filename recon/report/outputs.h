/* The files of one reconstruction (recon/pipeline/pipeline.h lists them): per method the image in the formats
 * of r->formats (io/image_io.h: image_<method>.h5, .png, .nii (r->nifti), .hdr/.cfl, .mrd,
 * _0001.dcm ...; voxel size from r->fov_mm, placed with r->geometry), convergence.png for CG,
 * compare.png when three methods ran, and the report files. Each file is written atomically
 * (temporary name + rename). */
#ifndef MR_OUTPUTS_H
#define MR_OUTPUTS_H

#include "../../base/status.h"
#include "../../io/image_io.h"
#include "report.h"

/* `recon --format`'s default: what recon wrote before the option existed. */
#define MR_OUTPUT_DEFAULT_FORMATS ((1u << MR_IMAGE_H5) | (1u << MR_IMAGE_PNG) | (1u << MR_IMAGE_NIFTI))

/* The image formats this report's run writes: r->formats (0: the default), less NIfTI with r->nifti
 * "none". */
unsigned mr_outputs_formats(const mr_report *r);

/* `--format LIST` (NULL: not given) and `--nifti K` of recon and batch into *set (0: the default):
 * MR_EINVAL with a message naming the option for an unknown format, for dicom in a build without DCMTK,
 * or for --nifti complex without nifti in the list. */
mr_status mr_outputs_parse_formats(const char *list, const char *nifti, unsigned *set);

/* The help text of --format (one wording for recon and batch). */
#define MR_OUTPUTS_FORMAT_HELP                                                                                    \
    "image files to write, a comma-separated list of h5 (image_<method>.h5), png, nifti (.nii), cfl (BART "        \
    ".hdr/.cfl), mrd (ISMRMRD image .mrd), dicom (one MR series per method: image_<method>_0001.dcm ...), or all " \
    "(docs/FORMAT.md; default h5,png,nifti)"

/* Create outdir and write the images of r->m[0..nmethods-1]: imgs[k] is method k's complex image
 * [Nz][Ny][Nx][2]; truth (real, may be NULL) is the reference of compare.png. Fills r->t_write. */
mr_status mr_outputs_write_images(const char *outdir, mr_report *r, const float *const *imgs, const float *truth);

/* The magnitude picture image_<method>.png: a 2D image as it is (one pixel per voxel, io/image_png.h); a 3D
 * volume as its three planes through voxel slice (NULL: the centre), each at least 192 pixels on its
 * longest edge, labelled with plane and index above the image (recon/report/plot.h mr_plot_volume). Grey levels
 * map [0, hi] (hi <= 0: [0, max]) to 0..255. */
mr_status mr_outputs_picture(const char *path, const float *mag, const int64_t matrix[3], const int64_t *slice,
                             double hi);

/* The compare.png tile label of a method ("CG", "KB gridding", "Bilinear"; else the name itself). */
const char *mr_outputs_method_label(const char *method);

/* report.json, report.md, metrics.csv. */
mr_status mr_outputs_write_reports(const char *outdir, const mr_report *r);

#endif
