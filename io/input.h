/* One reader for every k-space input, chosen by what the file holds, not by its name
 * (docs/FORMAT.md, "Reading other formats"):
 *   - an HDF5 file with a /kspace group: mrirecon's own format (io/kspace_h5.h);
 *   - an HDF5 file with an ISMRMRD dataset (/dataset/xml + /dataset/data): io/ismrmrd_h5.h, one or
 *     more volumes;
 *   - a BART header (a file starting with "# Dimensions"), given as NAME_ksp / NAME_traj (with or
 *     without .hdr/.cfl) or as the prefix NAME: io/cfl.h.
 *
 * Usage: mr_input_open, look at the volumes (ISMRMRD files may hold several: slices, contrasts,
 * repetitions, ...; the other formats hold one), mr_input_read one of them, mr_input_close. Or
 * mr_input_read_path for a file that must hold exactly one volume unless one is chosen.
 *
 * Ownership: the handle owns what it opened; summary and volume pointers are borrowed from it;
 * the mr_kspace of mr_input_read belongs to the caller (mr_kspace_free). */
#ifndef MR_INPUT_H
#define MR_INPUT_H

#include <stdint.h>

#include "../base/status.h"
#include "ismrmrd_h5.h"
#include "kspace.h"
#include "read_opts.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { MR_INPUT_MRIRECON = 1, MR_INPUT_ISMRMRD = 2, MR_INPUT_BART = 3 } mr_input_format;

/* "mrirecon-kspace", "ismrmrd", "bart" */
const char *mr_input_format_name(mr_input_format f);

typedef struct mr_input mr_input;

/* Open `path` and identify it by content. Errors: MR_EIO (cannot open), MR_EFORMAT (not a known
 * format, or malformed: for ISMRMRD every header, trajectory and noise scan is validated here). An
 * HDF5 input is opened once as a descriptor that the handle keeps, and read in child processes only
 * (io/h5util.h mr_h5_read_in_child), each part once: here a mrirecon scan whole (its errors come from
 * here) or an ISMRMRD file's index; an ISMRMRD volume in mr_input_read. So libhdf5 never runs on the
 * file in this process, and a file renamed over the path after the open is not what is read. */
mr_status mr_input_open(const char *path, const mr_read_opts *opts, mr_input **out);

/* The format of an open HDF5 file (mr_h5_open_read, mr_h5_open_memory), as mr_input_open decides it:
 * MRIRECON with a /kspace group, else ISMRMRD (mr_ismrmrd_detect); `label` names the file in
 * messages. Errors: MR_EIO (HDF5 failed), MR_EFORMAT (neither). */
mr_status mr_input_h5_format(hid_t file, const char *label, mr_input_format *format);

mr_input_format mr_input_get_format(const mr_input *in);
const char *mr_input_path(const mr_input *in);
int mr_input_nvolumes(const mr_input *in);
/* ISMRMRD only (NULL for the other formats or an index out of range). */
const mr_volume_info *mr_input_volume(const mr_input *in, int index);
const mr_ismrmrd_summary *mr_input_ismrmrd(const mr_input *in);
/* BART only: the trajectory and k-space array names ("" otherwise). */
const char *mr_input_bart_traj(const mr_input *in);
const char *mr_input_bart_ksp(const mr_input *in);

/* The coil noise covariance Psi [C][C][2] of the input's noise scans (ISMRMRD; base/noise_cov.h),
 * borrowed from the handle, and the noise samples per coil it was estimated from (*nsamples, may
 * be NULL); NULL and 0 when the input has no noise scans. The data are never whitened by the
 * readers: recon/pipeline/volumes.h applies it. */
const double *mr_input_noise_cov(const mr_input *in, int64_t *nsamples);

/* Read volume `index` (0 for the single-volume formats): a mrirecon scan read at open is handed over
 * (a second call reads it again), an ISMRMRD volume is read in a child from the handle's descriptor. */
mr_status mr_input_read(mr_input *in, int index, mr_kspace **out);

void mr_input_close(mr_input *in); /* NULL is fine */

/* Open, read one volume, close. volume < 0: the file must hold exactly one (otherwise MR_EINVAL
 * naming how many it holds); volume >= 0: that one. */
mr_status mr_input_read_path(const char *path, const mr_read_opts *opts, int volume, mr_kspace **out);

/* Centred crop or zero-padding of a complex image in[nin_z][nin_y][nin_x][2] to out[nout...][2],
 * keeping the voxel at index N/2 (our r = 0) in place on every axis: out voxel i holds in voxel
 * i - nout/2 + nin/2 (0 outside). For an encoded-space reconstruction cropped to the reconSpace
 * matrix (mr_volume_info.recon_matrix) when both have the same voxel size. */
void mr_image_crop_center(const float *in, const int64_t nin[3], float *out, const int64_t nout[3]);

#ifdef __cplusplus
}
#endif
#endif
