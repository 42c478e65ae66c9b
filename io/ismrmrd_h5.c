/* ISMRMRD reader on plain HDF5 (see ismrmrd_h5.h; docs/FORMAT.md section 5 is normative).
 *
 * The acquisition layout is ISMRMRD 1.x's (include/ismrmrd/ismrmrd.h, libsrc/dataset.c of
 * ismrmrd/ismrmrd): <group>/data is a rank-1 dataset of the compound {head, traj, data}, where head
 * is the AcquisitionHeader compound, traj a variable-length float sequence [samples][traj_dims]
 * (dimension fastest) and data a variable-length float sequence [channels][samples][re, im]
 * (sample fastest within a channel). Members are matched by name (HDF5 compound conversion), so
 * the reader does not depend on the file's member order or padding.
 *
 * This file owns the handle: detecting the dataset group, opening and closing, attaching a file to an
 * index, and the index through a pipe. The rest of the reader: io/ismrmrd_records.c (the HDF5 reads),
 * io/ismrmrd_index.c (the passes that build the index), io/ismrmrd_volume.c (reading a volume); what
 * they share is in io/ismrmrd_internal.h. */
#include "ismrmrd_h5.h"
#include "ismrmrd_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/child.h"
#include "../base/log.h"

static const char *const kind_names[MR_ACQ_KINDS] = {"imaging",  "noise",    "calibration", "navigation",
                                                     "phasecorr", "feedback", "dummy",      "other"};

const char *mr_acq_kind_name(mr_acq_kind k) { return (k >= 0 && k < MR_ACQ_KINDS) ? kind_names[k] : "?"; }
/* ---- open / close ---------------------------------------------------------------------------------- */

typedef struct {
    char first[256];
    int count;
    const char *label;
} group_scan;

static herr_t scan_group(hid_t loc, const char *name, const H5L_info_t *info, void *ud)
{
    group_scan *g = ud;
    if (info->type != H5L_TYPE_HARD)
        return 0;
    char p[300];
    if (snprintf(p, sizeof p, "/%s/xml", name) >= (int)sizeof p)
        return 0;
    /* a group (H5Gopen2 fails on anything else) holding both children */
    hid_t grp = H5Gopen2(loc, name, H5P_DEFAULT);
    if (grp < 0)
        return 0;
    H5Gclose(grp);
    /* hard links only (mr_h5_lookup): a soft or external "data" would be followed when opened */
    if (mr_h5_exists(loc, g->label, p) <= 0)
        return 0;
    snprintf(p, sizeof p, "/%s/data", name);
    if (mr_h5_exists(loc, g->label, p) <= 0)
        return 0;
    if (g->count++ == 0)
        snprintf(g->first, sizeof g->first, "/%s", name);
    return 0;
}

int mr_ismrmrd_detect(hid_t file, const char *label, char *group, size_t size)
{
    int a = mr_h5_exists(file, label, "/dataset/xml");
    int b = a > 0 ? mr_h5_exists(file, label, "/dataset/data") : 0;
    if (a < 0 || b < 0)
        return -1;
    if (a > 0 && b > 0) {
        snprintf(group, size, "/dataset");
        return 1;
    }
    group_scan g = {{0}, 0, label};
    if (H5Literate(file, H5_INDEX_NAME, H5_ITER_INC, NULL, scan_group, &g) < 0) {
        mr_error(MR_EIO, "%s: cannot list the root group", label);
        return -1;
    }
    if (g.count == 0)
        return 0;
    if (g.count > 1)
        mr_log(MR_LOG_WARN, "%s: %d groups hold an ISMRMRD dataset; reading %s", label, g.count, g.first);
    snprintf(group, size, "%s", g.first);
    return 1;
}
/* A handle without file, index or volumes yet (NULL: out of memory, recorded). */
static mr_ismrmrd *new_handle(const char *label, const mr_read_opts *opts)
{
    mr_ismrmrd *r = calloc(1, sizeof *r);
    if (!r) {
        mr_error(MR_ENOMEM, "%s: out of memory", label);
        return NULL;
    }
    r->file = r->dset = r->t_head = r->t_rec_head = r->t_rec_traj = r->t_rec_data = r->t_rec_full = H5I_INVALID_HID;
    snprintf(r->label, sizeof r->label, "%s", label);
    if (opts)
        r->opts = *opts;
    else
        mr_read_opts_default(&r->opts);
    if (r->opts.traj_sign != -1)
        r->opts.traj_sign = 1;
    return r;
}

mr_status mr_ismrmrd_open(hid_t file, const char *label, const mr_read_opts *opts, mr_ismrmrd **out)
{
    *out = NULL;
    mr_h5_quiet();
    mr_ismrmrd *r = new_handle(label, opts);
    if (!r)
        return MR_ENOMEM;
    r->file = file;
    mr_status st = MR_OK;
    int found = mr_ismrmrd_detect(file, label, r->sum.group, sizeof r->sum.group);
    if (found < 0)
        st = MR_EIO;
    else if (found == 0)
        st = mr_error(MR_EFORMAT, "%s: no ISMRMRD dataset (a group with 'xml' and 'data', e.g. /dataset)", label);
    else
        st = ismrmrd_h5_open_dataset(r);
    if (st != MR_OK) {
        mr_ismrmrd_close(r);
        return st;
    }
    *out = r;
    return MR_OK;
}

void mr_ismrmrd_detach(mr_ismrmrd *r)
{
    if (!r)
        return;
    mr_h5_close(&r->t_rec_full);
    mr_h5_close(&r->t_rec_data);
    mr_h5_close(&r->t_rec_traj);
    mr_h5_close(&r->t_rec_head);
    mr_h5_close(&r->t_head);
    mr_h5_close(&r->dset);
    r->file = H5I_INVALID_HID;
}

mr_status mr_ismrmrd_attach(mr_ismrmrd *r, hid_t file)
{
    mr_ismrmrd_detach(r);
    mr_h5_quiet();
    r->file = file;
    int64_t n = 0;
    mr_status st = ismrmrd_h5_open_records(r, 0, r->sum.acquisitions, &n);
    if (st != MR_OK)
        mr_ismrmrd_detach(r);
    return st;
}

void mr_ismrmrd_close(mr_ismrmrd *r)
{
    if (!r)
        return;
    for (int v = 0; v < r->nvol; v++)
        free(r->vol[v].avg);
    free(r->vol);
    free(r->slots);
    free(r->acq_vol);
    free(r->sum.noise_cov);
    mr_ismrmrd_detach(r);
    free(r);
}

/* ---- the index through a pipe -------------------------------------------------------------------- */

#define INDEX_MAGIC 0x58444e49u /* "INDX" */

typedef struct {
    uint32_t magic;
    int32_t nvol;
    int32_t noise_cov; /* 1: sum.noise_cov [C][C][2] follows */
    int32_t pad;
    mr_ismrmrd_summary sum; /* noise_cov zeroed */
} index_head;

typedef struct {
    vol_key key;
    mr_volume_info info;
} index_volume;

mr_status mr_ismrmrd_send_index(int fd, const mr_ismrmrd *r)
{
    if (!r->acq_vol || r->nvol < 1)
        return mr_error(MR_EINVAL, "%s: no index to send", r->label);
    index_head h;
    memset(&h, 0, sizeof h);
    h.magic = INDEX_MAGIC;
    h.nvol = r->nvol;
    h.noise_cov = r->sum.noise_cov != NULL;
    h.sum = r->sum;
    h.sum.noise_cov = NULL;
    mr_status st = mr_pipe_put(fd, &h, sizeof h);
    if (st == MR_OK && h.noise_cov)
        st = mr_pipe_put(fd, r->sum.noise_cov, (size_t)(2 * r->sum.channels * r->sum.channels) * sizeof(double));
    for (int v = 0; st == MR_OK && v < r->nvol; v++) {
        index_volume iv;
        memset(&iv, 0, sizeof iv);
        iv.key = r->vol[v].key;
        iv.info = r->vol[v].info;
        st = mr_pipe_put(fd, &iv, sizeof iv);
    }
    if (st == MR_OK)
        st = mr_pipe_put(fd, r->acq_vol, (size_t)r->sum.acquisitions * sizeof *r->acq_vol);
    return st;
}

/* The index as this reader makes it: counts within the limits, strings terminated, every
 * acquisition's volume one of them (or noise, or skipped) and each volume's count of acquisitions as
 * the headers said; the caller has it from another process. */
static mr_status check_index(const mr_ismrmrd *r)
{
    const mr_ismrmrd_summary *s = &r->sum;
    const int terminated = memchr(s->group, 0, sizeof s->group) && memchr(s->hdr.vendor, 0, sizeof s->hdr.vendor) &&
                           memchr(s->hdr.model, 0, sizeof s->hdr.model) &&
                           memchr(s->hdr.patient_position, 0, sizeof s->hdr.patient_position);
    int ok = terminated && s->acquisitions >= 1 && s->acquisitions <= MR_ISMRMRD_MAX_ACQUISITIONS &&
             r->nvol >= 1 && r->nvol <= MR_ISMRMRD_MAX_VOLUMES && s->hdr.nencodings >= 1 &&
             s->hdr.nencodings <= MR_MRD_MAX_ENCODINGS && s->channels >= 1 && s->channels <= MR_MAX_COILS &&
             (s->traj_dims == 2 || s->traj_dims == 3);
    for (int e = 0; ok && e < s->hdr.nencodings; e++)
        ok = memchr(s->hdr.enc[e].trajectory, 0, sizeof s->hdr.enc[e].trajectory) &&
             memchr(s->hdr.enc[e].traj_identifier, 0, sizeof s->hdr.enc[e].traj_identifier) &&
             s->units[e] >= MR_UNITS_AUTO && s->units[e] < MR_UNITS_COUNT;
    int64_t *count = ok ? calloc((size_t)r->nvol, sizeof *count) : NULL;
    ok = ok && count;
    for (int64_t i = 0; ok && i < s->acquisitions; i++) {
        const int32_t v = r->acq_vol[i];
        ok = v == VOL_NOISE || v == VOL_SKIPPED || (v >= 0 && v < r->nvol);
        if (ok && v >= 0)
            count[v]++;
    }
    for (int v = 0; ok && v < r->nvol; v++) {
        const mr_volume_info *vi = &r->vol[v].info;
        ok = vi->encoding >= 0 && vi->encoding < s->hdr.nencodings && vi->acquisitions == count[v] &&
             vi->samples >= 1 && vi->samples <= MR_MAX_SAMPLES && vi->averages >= 1 &&
             mr_matrix_check(vi->matrix, r->label) == MR_OK;
    }
    for (int64_t i = 0; ok && s->noise_cov && i < 2 * s->channels * s->channels; i++)
        ok = isfinite(s->noise_cov[i]);
    free(count);
    return ok ? MR_OK : mr_error(MR_EINTERNAL, "%s: the reading process sent a damaged index", r->label);
}

mr_status mr_ismrmrd_recv_index(int fd, const char *label, const mr_read_opts *opts, mr_ismrmrd **out)
{
    *out = NULL;
    index_head h;
    mr_status st = mr_pipe_get(fd, &h, sizeof h);
    if (st != MR_OK)
        return st;
    if (h.magic != INDEX_MAGIC || h.nvol < 1 || h.nvol > MR_ISMRMRD_MAX_VOLUMES || h.sum.acquisitions < 1 ||
        h.sum.acquisitions > MR_ISMRMRD_MAX_ACQUISITIONS || h.sum.channels < 1 || h.sum.channels > MR_MAX_COILS)
        return mr_error(MR_EINTERNAL, "%s: the reading process sent a damaged index", label);
    mr_ismrmrd *r = new_handle(label, opts);
    if (!r)
        return MR_ENOMEM;
    r->sum = h.sum;
    r->sum.noise_cov = NULL;
    const size_t ncov = (size_t)(2 * h.sum.channels * h.sum.channels);
    if (h.noise_cov && !(r->sum.noise_cov = malloc(ncov * sizeof(double))))
        st = mr_error(MR_ENOMEM, "%s: out of memory", label);
    if (st == MR_OK && h.noise_cov)
        st = mr_pipe_get(fd, r->sum.noise_cov, ncov * sizeof(double));
    if (st == MR_OK && !(r->vol = calloc((size_t)h.nvol, sizeof *r->vol)))
        st = mr_error(MR_ENOMEM, "%s: out of memory", label);
    for (int v = 0; st == MR_OK && v < h.nvol; v++) {
        index_volume iv;
        if ((st = mr_pipe_get(fd, &iv, sizeof iv)) == MR_OK) {
            r->vol[v].key = iv.key;
            r->vol[v].info = iv.info;
            r->nvol = r->cap_vol = v + 1;
        }
    }
    const size_t nacq = (size_t)h.sum.acquisitions;
    if (st == MR_OK && !(r->acq_vol = malloc(nacq * sizeof *r->acq_vol)))
        st = mr_error(MR_ENOMEM, "%s: out of memory for %zu acquisitions", label, nacq);
    if (st == MR_OK)
        st = mr_pipe_get(fd, r->acq_vol, nacq * sizeof *r->acq_vol);
    if (st == MR_OK)
        st = check_index(r);
    if (st != MR_OK) {
        mr_ismrmrd_close(r);
        return st;
    }
    *out = r;
    return MR_OK;
}

const mr_ismrmrd_summary *mr_ismrmrd_summary_get(const mr_ismrmrd *r) { return &r->sum; }

int mr_ismrmrd_nvolumes(const mr_ismrmrd *r) { return r->nvol; }

const mr_volume_info *mr_ismrmrd_volume(const mr_ismrmrd *r, int i)
{
    return (i >= 0 && i < r->nvol) ? &r->vol[i].info : NULL;
}
