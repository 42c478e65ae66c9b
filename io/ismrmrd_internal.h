/* Internals shared by the files of the ISMRMRD reader (io/ismrmrd_h5.c: the handle; io/ismrmrd_records.c:
 * the HDF5 reads; io/ismrmrd_index.c: the passes that build the index; io/ismrmrd_volume.c: reading a
 * volume). Not part of the library's interface: callers use io/ismrmrd_h5.h only. */
#ifndef MR_ISMRMRD_INTERNAL_H
#define MR_ISMRMRD_INTERNAL_H

#include <hdf5.h>
#include <stdint.h>

#include "h5util.h"
#include "ismrmrd_h5.h"

#define BLOCK 1024 /* acquisitions per HDF5 read */

/* acq_vol values besides a volume index; VOL_ANY_IMAGING asks ismrmrd_h5_scan_records for every volume */
#define VOL_NOISE (-2)
#define VOL_SKIPPED (-1)
#define VOL_ANY_IMAGING (-3)

/* ---- the in-memory acquisition header (the members this reader uses) ------------------------- */

typedef struct {
    uint16_t kspace_encode_step_1, kspace_encode_step_2, average, slice, contrast, phase, repetition, set, segment;
} mem_idx;

typedef struct {
    uint64_t flags;
    uint32_t scan_counter;
    uint16_t number_of_samples, available_channels, active_channels;
    uint64_t channel_mask[16];
    uint16_t discard_pre, discard_post, center_sample, encoding_space_ref, trajectory_dimensions;
    float sample_time_us;
    float position[3], read_dir[3], phase_dir[3], slice_dir[3];
    mem_idx idx;
} mem_head;

typedef struct {
    mem_head head;
} rec_head;
/* every variable-length read uses this layout; a memory type may leave out traj or data */
typedef struct {
    mem_head head;
    hvl_t traj;
    hvl_t data;
} rec_full;

/* ---- the handle ------------------------------------------------------------------------------ */

typedef struct {
    uint16_t v[7]; /* encoding, slice, contrast, phase, repetition, set, average (0xffff: combined) */
} vol_key;

typedef struct {
    vol_key key;
    mr_volume_info info;
    uint16_t *avg; /* distinct averages seen */
    int navg, cap_avg;
} volume;

struct mr_ismrmrd {
    hid_t file;  /* borrowed; H5I_INVALID_HID for an index without its file (mr_ismrmrd_recv_index) */
    hid_t dset;
    hid_t t_head, t_rec_head, t_rec_traj, t_rec_data, t_rec_full;
    char label[1100];
    mr_read_opts opts;
    mr_ismrmrd_summary sum;
    int32_t *acq_vol; /* [acquisitions]: volume index, VOL_NOISE or VOL_SKIPPED */
    volume *vol;
    int nvol, cap_vol;
    int32_t *slots; /* hash of vol_key -> volume index, -1 empty */
    int64_t nslots;
    uint64_t mask[16];
    int have_mask;
    int64_t first_channels_acq;
    double declared_bytes; /* trajectory and data bytes the headers of imaging and noise acquisitions announce */
};

/* ---- io/ismrmrd_records.c ------------------------------------------------------------------------ */

/* Read the XML header string dataset `name` and parse it into r->sum.hdr. */
mr_status ismrmrd_h5_read_xml(mr_ismrmrd *r, const char *name);

/* Open <group>/data and check its datatype (an ISMRMRD 1.x acquisition list) and dataspace (rank 1,
 * acquisitions within the limit; when `expect` > 0 exactly that many); *n the acquisitions. With
 * `storage`, also what it stores against what it declares. Builds the handle's memory types. */
mr_status ismrmrd_h5_open_records(mr_ismrmrd *r, int storage, int64_t expect, int64_t *n_out);

/* Read the headers of acquisitions [start, start + n) into heads (rec_head[n]). */
mr_status ismrmrd_h5_read_heads(mr_ismrmrd *r, int64_t start, int64_t n, rec_head *heads);

/* Called for each record ismrmrd_h5_scan_records reads: its header and the variable-length members asked
 * for (their lengths already checked against the header). */
typedef mr_status (*record_fn)(mr_ismrmrd *r, int64_t acq, const mem_head *h, const hvl_t *traj, const hvl_t *data,
                               void *ctx);

/* Read, in file order and blocks of BLOCK, the acquisitions whose acq_vol is `want` (a volume index,
 * VOL_NOISE, or VOL_ANY_IMAGING) with their trajectory and/or data, and call fn for each. */
mr_status ismrmrd_h5_scan_records(mr_ismrmrd *r, int32_t want, int with_traj, int with_data,
                                  const char *what, record_fn fn, void *ctx);

/* ---- io/ismrmrd_index.c -------------------------------------------------------------------------- */

/* Read the XML header and the records of r->sum.group and build the index (the three passes, the
 * volumes' grids). */
mr_status ismrmrd_h5_open_dataset(mr_ismrmrd *r);

/* Encoded / recon matrix and FOV of encoding e; z collapsed to 1 for 2D. */
void ismrmrd_h5_enc_spaces(const mr_ismrmrd *r, int e, int64_t nenc[3], double fenc[3], int64_t nrec[3],
                           double frec[3]);

/* cycles per encoded FOV per unit of the stored value, on axis a */
double ismrmrd_h5_unit_factor(mr_traj_units u, int64_t n, double fov_mm);

#endif
