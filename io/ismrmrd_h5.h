/* ISMRMRD raw data (ISMRM raw data format 1.x: /dataset/xml + /dataset/data), read directly with
 * HDF5 (no libismrmrd), validated before anything large is allocated (docs/FORMAT.md, section 5).
 *
 * A file is opened in passes over the acquisitions, in blocks, so that memory stays bounded:
 *  1. the acquisition headers: every count, flag and index checked, acquisitions classified
 *     (imaging, noise, skipped kinds) and grouped into volumes (one per encoding space, slice,
 *     contrast, phase, repetition, set [, average]);
 *  2. the trajectories of the imaging acquisitions: lengths and values checked, the range measured
 *     per encoding space and the units detected (or taken from the options);
 *  3. the noise acquisitions, when there are any: the coil noise covariance (base/noise_cov.h),
 *     returned in the summary; the reader never changes the data with it (prewhitening is a
 *     processing step: solver/prewhiten.h, applied by recon/pipeline/volumes.h).
 * A volume is then read on demand into an mr_kspace: samples in the encoding space's units converted
 * to cycles/FOV of the chosen grid, averages combined or kept apart, the data as stored.
 *
 * Every variable-length read goes through an allocator with a byte budget computed from the
 * acquisition headers, so that a file whose stored lengths disagree with its headers fails with a
 * message instead of making HDF5 allocate what the headers do not announce.
 *
 * Ownership: mr_ismrmrd_open (and mr_ismrmrd_attach) borrows `file` until mr_ismrmrd_close or
 * mr_ismrmrd_detach (the caller closes it after). Summary and volume pointers are borrowed from the
 * handle. The mr_kspace of mr_ismrmrd_read_volume belongs to the caller. */
#ifndef MR_ISMRMRD_H5_H
#define MR_ISMRMRD_H5_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/status.h"
#include "geometry.h"
#include "kspace.h"
#include "mrd_xml.h"
#include "read_opts.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bounds the reader enforces (docs/FORMAT.md). */
#define MR_ISMRMRD_MAX_ACQUISITIONS ((int64_t)1 << 24)
#define MR_ISMRMRD_MAX_VOLUMES 65536

/* How the reader treats an acquisition, from its flags (ISMRMRD_ACQ_* bits of ismrmrd.h). */
typedef enum {
    MR_ACQ_IMAGING = 0,      /* no excluding flag (PARALLEL_CALIBRATION_AND_IMAGING included) */
    MR_ACQ_NOISE,            /* IS_NOISE_MEASUREMENT: noise covariance */
    MR_ACQ_CALIBRATION,      /* IS_PARALLEL_CALIBRATION only: skipped */
    MR_ACQ_NAVIGATION,       /* IS_NAVIGATION_DATA: skipped */
    MR_ACQ_PHASECORR,        /* IS_PHASECORR_DATA: skipped */
    MR_ACQ_FEEDBACK,         /* IS_HPFEEDBACK_DATA, IS_RTFEEDBACK_DATA: skipped */
    MR_ACQ_DUMMY,            /* IS_DUMMYSCAN_DATA: skipped */
    MR_ACQ_OTHER,            /* SURFACECOILCORRECTIONSCAN, PHASE_STABILIZATION(_REFERENCE): skipped */
    MR_ACQ_KINDS
} mr_acq_kind;

const char *mr_acq_kind_name(mr_acq_kind k); /* "imaging", "noise", "calibration", ... */

/* One volume: the imaging acquisitions that share an encoding space, slice, contrast, phase,
 * repetition and set (and average, with MR_AVERAGES_SEPARATE). */
typedef struct {
    int encoding;                  /* encoding_space_ref */
    int slice, contrast, phase, repetition, set;
    int average;                   /* -1 when averages are combined */
    int averages;                  /* distinct average indices in the volume */
    int64_t acquisitions;          /* imaging acquisitions */
    int64_t samples;               /* their samples after discard_pre/post, summed (before averaging) */
    int64_t matrix[3];             /* the mr_kspace grid (encoded or recon space, per the options) */
    float fov_mm[3];
    int64_t recon_matrix[3];       /* reconSpace (the encoded space when the header has none) */
    float recon_fov_mm[3];
    mr_geometry geometry;          /* of its first acquisition */
} mr_volume_info;

typedef struct {
    char group[256];               /* the dataset group, "/dataset" */
    mr_mrd_header hdr;             /* the parsed XML header */
    int64_t acquisitions;          /* records in <group>/data */
    int64_t count[MR_ACQ_KINDS];   /* acquisitions of each kind */
    int64_t channels;              /* active channels (the coils of every volume) */
    int traj_dims;                 /* trajectory_dimensions of the imaging acquisitions (2 or 3) */
    int stack;                     /* 1: 2D trajectory + kspace_encode_step_2 as kz (stack of stars) */
    /* per encoding space with imaging data */
    int have_imaging[MR_MRD_MAX_ENCODINGS];
    mr_traj_units units[MR_MRD_MAX_ENCODINGS];    /* the units used */
    int units_detected[MR_MRD_MAX_ENCODINGS];     /* 1 detected, 0 from the options */
    double units_fit[MR_MRD_MAX_ENCODINGS][MR_UNITS_COUNT];     /* max over axes of max|k_a| / edge_a(units) */
    double units_fit_min[MR_MRD_MAX_ENCODINGS][MR_UNITS_COUNT]; /* the same, min over axes; 0 n/a */
    double kmax[MR_MRD_MAX_ENCODINGS][3];         /* largest |k| per stored axis, as stored */
    /* noise */
    int64_t noise_samples;         /* per coil, over all noise acquisitions */
    float noise_dwell_us;          /* sample_time_us of the first noise acquisition */
    float imaging_dwell_us;        /* of the first imaging acquisition */
    double *noise_cov;             /* [C][C][2] Psi over all noise samples, NULL without noise scans;
                                      owned by the handle (not checked to be positive definite) */
    double noise_max_corr;         /* largest off-diagonal correlation coefficient */
} mr_ismrmrd_summary;

typedef struct mr_ismrmrd mr_ismrmrd;

/* 1 when `file` holds an ISMRMRD dataset: a group with "xml" and "data" children, "/dataset" or the
 * only such group at the root (its name into group); 0 when it does not; -1 with MR_EIO recorded
 * when HDF5 fails. */
int mr_ismrmrd_detect(hid_t file, const char *label, char *group, size_t size);

/* Open and index the dataset (the three passes above). `label` names the file in messages. */
mr_status mr_ismrmrd_open(hid_t file, const char *label, const mr_read_opts *opts, mr_ismrmrd **out);
/* The index (summary, volumes, which volume each acquisition belongs to) through a pipe, from the
 * child process that opened the file (io/input.c) to the one that keeps it: mr_ismrmrd_send_index
 * writes it (the handle stays the caller's); mr_ismrmrd_recv_index makes a handle of it, checked (counts
 * within the limits, strings terminated, the volumes consistent), that has no file: a volume is read
 * from it after mr_ismrmrd_attach, in a child again. opts: as given to mr_ismrmrd_open. */
mr_status mr_ismrmrd_send_index(int fd, const mr_ismrmrd *r);
mr_status mr_ismrmrd_recv_index(int fd, const char *label, const mr_read_opts *opts, mr_ismrmrd **out);

/* Give a handle its file again (open as `file`, borrowed until mr_ismrmrd_detach or close): the
 * acquisition dataset and its types, checked to be an acquisition list of as many acquisitions as the
 * index has (the storage was checked when the index was made; this is for the file it was made from,
 * e.g. open through the same descriptor). mr_ismrmrd_detach lets the file go (the index stays). */
mr_status mr_ismrmrd_attach(mr_ismrmrd *r, hid_t file);
void mr_ismrmrd_detach(mr_ismrmrd *r);

const mr_ismrmrd_summary *mr_ismrmrd_summary_get(const mr_ismrmrd *r);

/* "cycles 1, normalized 64, radians 10.2, per-m 0.24..0.48" (min..max over the axes where they
 * differ; per-m "n/a" without a FOV): how well each unit fits encoding e, for messages and info. */
void mr_ismrmrd_units_fits(const mr_ismrmrd_summary *s, int e, char *buf, size_t size);
int mr_ismrmrd_nvolumes(const mr_ismrmrd *r);
const mr_volume_info *mr_ismrmrd_volume(const mr_ismrmrd *r, int index); /* NULL out of range */

/* Read volume `index` (0..nvolumes-1): the handle must have its file (mr_ismrmrd_open, or attach). */
mr_status mr_ismrmrd_read_volume(mr_ismrmrd *r, int index, mr_kspace **out);

void mr_ismrmrd_close(mr_ismrmrd *r); /* NULL is fine */

#ifdef __cplusplus
}
#endif
#endif
