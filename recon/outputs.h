/* The files of one reconstruction (recon/pipeline.h lists them): per method image_<method>.h5,
 * .png and .nii (r->nifti, voxel size from r->fov_mm, placed with r->geometry), convergence.png for CG, compare.png when three methods ran, and the report files. Each file
 * is written atomically (temporary name + rename). */
#ifndef MR_OUTPUTS_H
#define MR_OUTPUTS_H

#include "../base/status.h"
#include "report.h"

/* Create outdir and write the images of r->m[0..nmethods-1]: imgs[k] is method k's complex image
 * [Nz][Ny][Nx][2]; truth (real, may be NULL) is the reference of compare.png. Fills r->t_write. */
mr_status mr_outputs_write_images(const char *outdir, mr_report *r, const float *const *imgs, const float *truth);

/* The compare.png tile label of a method ("CG", "KB gridding", "Bilinear"; else the name itself). */
const char *mr_outputs_method_label(const char *method);

/* report.json, report.md, metrics.csv. */
mr_status mr_outputs_write_reports(const char *outdir, const mr_report *r);

#endif
