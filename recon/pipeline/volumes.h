/* The read stage of every command that reconstructs or converts a scan (recon, batch, convert,
 * info): one volume of any input (io/input.h: mrirecon HDF5, ISMRMRD, BART), as the reconstruction
 * gets it, prewhitened across coils with the input's noise scans (solver/prewhiten.h) unless that is
 * switched off, named (for the output folder of a multi-volume input) and described (for the logs
 * and the report); and the output grid of an ISMRMRD volume (reconSpace crop, geometry).
 *
 * The readers in io/ never change the data: the ISMRMRD reader returns the noise covariance with the
 * scan (mr_input_noise_cov), and this stage decides what to do with it.
 *
 * Ownership: `in` is borrowed; the mr_kspace of mr_volume_read belongs to the caller
 * (mr_kspace_free); desc->info points into `in` and lives as long as it. */
#ifndef MR_VOLUMES_H
#define MR_VOLUMES_H

#include <stddef.h>
#include <stdint.h>

#include "../../base/status.h"
#include "../../io/geometry.h"
#include "../../io/input.h"

/* Longest volume label ("enc1_slice012_contrast003_phase004_rep005_set006_avg007" and the like). */
#define MR_VOLUME_LABEL_MAX 96

typedef struct {
    int index;                      /* the volume read */
    int count;                      /* volumes in the input */
    char label[MR_VOLUME_LABEL_MAX]; /* mr_volume_label */
    mr_input_format format;
    const mr_volume_info *info;     /* ISMRMRD: indices, reconSpace, geometry (borrowed); else NULL */
    int prewhitened;                /* 1: the coil data were whitened with the noise covariance */
    int64_t noise_samples;          /* noise samples per coil in the input (0: no noise scans) */
    double noise_max_corr;          /* largest coil noise correlation before whitening (0 without noise) */
} mr_volume_desc;

/* Read volume `index` of `in`; with prewhiten (and noise scans in the input, and more than one
 * coil) whiten the coils: d := W d, W = sigma_ref L^{-1} from the noise covariance (docs/FORMAT.md,
 * "Noise scans and prewhitening"). A covariance that is not positive definite is MR_EFORMAT naming
 * the file and --prewhiten off. desc (may be NULL) receives what was done. */
mr_status mr_volume_read(mr_input *in, int index, int prewhiten, mr_kspace **out, mr_volume_desc *desc);

/* The name of volume `index` from the indices that differ between the input's volumes, e.g.
 * "slice001", "slice000_rep002", "contrast1_avg0"; "volume000" style when nothing differs (or for a
 * single-volume input, "volume0"). Unique within the input (the indices are the volumes' key). */
void mr_volume_label(const mr_input *in, int index, char *buf, size_t size);

/* The grid an image of this volume is written on: the reconSpace matrix and FOV when the volume was
 * reconstructed on a larger encodedSpace grid with the same voxel size (readout oversampling),
 * else the scan's own. Returns 1 when that is a crop (then mr_image_crop_center from `matrix` to
 * out_matrix), 0 when the image is written as reconstructed. fov may be 0 where unknown. */
int mr_volume_output_grid(const mr_volume_desc *desc, const int64_t matrix[3], const float fov_mm[3],
                          int64_t out_matrix[3], float out_fov_mm[3]);

/* The scanner geometry of the volume (ISMRMRD), or NULL. */
const mr_geometry *mr_volume_geometry(const mr_volume_desc *desc);

/* outdir/metrics.csv of a multi-volume run: the rows of every outdir/<labels[v]>/metrics.csv under
 * one header, each with a leading "volume" column (the label). Written atomically. */
mr_status mr_volumes_write_metrics(const char *outdir, const char (*labels)[MR_VOLUME_LABEL_MAX], int n);

#endif
