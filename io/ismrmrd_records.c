/* The HDF5 side of the ISMRMRD reader (see ismrmrd_h5.h, io/ismrmrd_internal.h): the memory types of
 * the acquisition records, the check of the file's record type (an ISMRMRD 1.x acquisition list),
 * variable-length reads within a byte budget, the XML header string, <group>/data opened and checked,
 * and the records read in blocks (headers alone, or with their trajectory and/or data). This file owns
 * every libhdf5 read of the acquisitions; io/ismrmrd_index.c and io/ismrmrd_volume.c use them. */
#include "ismrmrd_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/child.h"

/* ---- HDF5 types --------------------------------------------------------------------------------- */

static hid_t make_head_type(void)
{
    hid_t idx = H5Tcreate(H5T_COMPOUND, sizeof(mem_idx));
    H5Tinsert(idx, "kspace_encode_step_1", HOFFSET(mem_idx, kspace_encode_step_1), H5T_NATIVE_UINT16);
    H5Tinsert(idx, "kspace_encode_step_2", HOFFSET(mem_idx, kspace_encode_step_2), H5T_NATIVE_UINT16);
    H5Tinsert(idx, "average", HOFFSET(mem_idx, average), H5T_NATIVE_UINT16);
    H5Tinsert(idx, "slice", HOFFSET(mem_idx, slice), H5T_NATIVE_UINT16);
    H5Tinsert(idx, "contrast", HOFFSET(mem_idx, contrast), H5T_NATIVE_UINT16);
    H5Tinsert(idx, "phase", HOFFSET(mem_idx, phase), H5T_NATIVE_UINT16);
    H5Tinsert(idx, "repetition", HOFFSET(mem_idx, repetition), H5T_NATIVE_UINT16);
    H5Tinsert(idx, "set", HOFFSET(mem_idx, set), H5T_NATIVE_UINT16);
    H5Tinsert(idx, "segment", HOFFSET(mem_idx, segment), H5T_NATIVE_UINT16);
    hid_t h = H5Tcreate(H5T_COMPOUND, sizeof(mem_head));
    hid_t mask = mr_h5_array_type(H5T_NATIVE_UINT64, 16), f3 = mr_h5_array_type(H5T_NATIVE_FLOAT, 3);
    H5Tinsert(h, "flags", HOFFSET(mem_head, flags), H5T_NATIVE_UINT64);
    H5Tinsert(h, "scan_counter", HOFFSET(mem_head, scan_counter), H5T_NATIVE_UINT32);
    H5Tinsert(h, "number_of_samples", HOFFSET(mem_head, number_of_samples), H5T_NATIVE_UINT16);
    H5Tinsert(h, "available_channels", HOFFSET(mem_head, available_channels), H5T_NATIVE_UINT16);
    H5Tinsert(h, "active_channels", HOFFSET(mem_head, active_channels), H5T_NATIVE_UINT16);
    H5Tinsert(h, "channel_mask", HOFFSET(mem_head, channel_mask), mask);
    H5Tinsert(h, "discard_pre", HOFFSET(mem_head, discard_pre), H5T_NATIVE_UINT16);
    H5Tinsert(h, "discard_post", HOFFSET(mem_head, discard_post), H5T_NATIVE_UINT16);
    H5Tinsert(h, "center_sample", HOFFSET(mem_head, center_sample), H5T_NATIVE_UINT16);
    H5Tinsert(h, "encoding_space_ref", HOFFSET(mem_head, encoding_space_ref), H5T_NATIVE_UINT16);
    H5Tinsert(h, "trajectory_dimensions", HOFFSET(mem_head, trajectory_dimensions), H5T_NATIVE_UINT16);
    H5Tinsert(h, "sample_time_us", HOFFSET(mem_head, sample_time_us), H5T_NATIVE_FLOAT);
    H5Tinsert(h, "position", HOFFSET(mem_head, position), f3);
    H5Tinsert(h, "read_dir", HOFFSET(mem_head, read_dir), f3);
    H5Tinsert(h, "phase_dir", HOFFSET(mem_head, phase_dir), f3);
    H5Tinsert(h, "slice_dir", HOFFSET(mem_head, slice_dir), f3);
    H5Tinsert(h, "idx", HOFFSET(mem_head, idx), idx);
    H5Tclose(mask);
    H5Tclose(f3);
    H5Tclose(idx);
    return h;
}

/* {head[, traj][, data]} of the given struct size and offsets (-1: member absent) */
static hid_t make_rec_type(hid_t head, size_t size, long traj_off, long data_off)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, size);
    hid_t vl = H5Tvlen_create(H5T_NATIVE_FLOAT);
    H5Tinsert(t, "head", 0, head);
    if (traj_off >= 0)
        H5Tinsert(t, "traj", (size_t)traj_off, vl);
    if (data_off >= 0)
        H5Tinsert(t, "data", (size_t)data_off, vl);
    H5Tclose(vl);
    return t;
}

/* ---- file type validation ----------------------------------------------------------------------- */

typedef struct {
    const char *name;
    H5T_class_t cls;
    int array_len; /* for H5T_ARRAY: the expected length */
} member_rule;

static const member_rule head_rules[] = {
    {"flags", H5T_INTEGER, 0},
    {"scan_counter", H5T_INTEGER, 0},
    {"number_of_samples", H5T_INTEGER, 0},
    {"available_channels", H5T_INTEGER, 0},
    {"active_channels", H5T_INTEGER, 0},
    {"channel_mask", H5T_ARRAY, 16},
    {"discard_pre", H5T_INTEGER, 0},
    {"discard_post", H5T_INTEGER, 0},
    {"center_sample", H5T_INTEGER, 0},
    {"encoding_space_ref", H5T_INTEGER, 0},
    {"trajectory_dimensions", H5T_INTEGER, 0},
    {"sample_time_us", H5T_FLOAT, 0},
    {"position", H5T_ARRAY, 3},
    {"read_dir", H5T_ARRAY, 3},
    {"phase_dir", H5T_ARRAY, 3},
    {"slice_dir", H5T_ARRAY, 3},
    {"idx", H5T_COMPOUND, 0},
};

static const char *const idx_members[] = {"kspace_encode_step_1", "kspace_encode_step_2", "average", "slice",
                                          "contrast", "phase", "repetition", "set", "segment"};

/* Member `name` of compound `t`: its type (caller closes), checked for class cls. */
static mr_status member_type(const char *label, const char *where, hid_t t, const char *name, H5T_class_t cls,
                             hid_t *out)
{
    *out = H5I_INVALID_HID;
    int i = H5Tget_member_index(t, name);
    if (i < 0)
        return mr_error(MR_EFORMAT, "%s: %s has no member '%s' (not an ISMRMRD 1.x acquisition)", label, where,
                        name);
    hid_t m = H5Tget_member_type(t, (unsigned)i);
    if (m < 0 || H5Tget_class(m) != cls) {
        if (m >= 0)
            H5Tclose(m);
        return mr_error(MR_EFORMAT, "%s: %s member '%s' has the wrong type class (not an ISMRMRD 1.x acquisition)",
                        label, where, name);
    }
    *out = m;
    return MR_OK;
}

static mr_status check_file_type(const char *label, const char *dname, hid_t ftype)
{
    char where[400];
    snprintf(where, sizeof where, "%.300s", dname);
    if (H5Tget_class(ftype) != H5T_COMPOUND)
        return mr_error(MR_EFORMAT, "%s: %s is not a compound dataset (not an ISMRMRD 1.x acquisition list)", label,
                        dname);
    hid_t head = H5I_INVALID_HID, m = H5I_INVALID_HID, sub = H5I_INVALID_HID;
    mr_status st = member_type(label, where, ftype, "head", H5T_COMPOUND, &head);
    for (int k = 0; st == MR_OK && k < 2; k++) {
        const char *name = k ? "data" : "traj";
        st = member_type(label, where, ftype, name, H5T_VLEN, &m);
        if (st != MR_OK)
            break;
        hid_t base = H5Tget_super(m);
        int ok = base >= 0 && H5Tget_class(base) == H5T_FLOAT;
        if (base >= 0)
            H5Tclose(base);
        mr_h5_close(&m);
        if (!ok)
            st = mr_error(MR_EFORMAT, "%s: %s member '%s' is not a variable-length float sequence", label, where,
                          name);
    }
    snprintf(where, sizeof where, "%.300s acquisition header", dname);
    for (size_t r = 0; st == MR_OK && r < sizeof head_rules / sizeof head_rules[0]; r++) {
        st = member_type(label, where, head, head_rules[r].name, head_rules[r].cls, &m);
        if (st != MR_OK)
            break;
        if (head_rules[r].cls == H5T_ARRAY) {
            hsize_t d[4] = {0};
            int nd = H5Tget_array_ndims(m);
            if (nd != 1 || H5Tget_array_dims2(m, d) != 1 || d[0] != (hsize_t)head_rules[r].array_len)
                st = mr_error(MR_EFORMAT, "%s: %s member '%s' is not an array of %d", label, where,
                              head_rules[r].name, head_rules[r].array_len);
        } else if (head_rules[r].cls == H5T_COMPOUND) {
            for (size_t j = 0; st == MR_OK && j < sizeof idx_members / sizeof idx_members[0]; j++) {
                char w2[420];
                snprintf(w2, sizeof w2, "%.400s.idx", where);
                st = member_type(label, w2, m, idx_members[j], H5T_INTEGER, &sub);
                mr_h5_close(&sub);
            }
        }
        mr_h5_close(&m);
    }
    mr_h5_close(&head);
    return st;
}

/* ---- variable-length reads with a byte budget ---------------------------------------------------- */

typedef struct {
    size_t budget, used;
    int refused;
} vlen_budget;

static void *vlen_alloc(size_t size, void *info)
{
    vlen_budget *b = info;
    if (size > b->budget - b->used) {
        b->refused = 1;
        return NULL;
    }
    b->used += size;
    return malloc(size ? size : 1);
}

static void vlen_free(void *p, void *info)
{
    (void)info;
    free(p);
}

static hid_t budget_dxpl(vlen_budget *b)
{
    hid_t x = H5Pcreate(H5P_DATASET_XFER);
    if (x >= 0 && H5Pset_vlen_mem_manager(x, vlen_alloc, b, vlen_free, b) < 0) {
        H5Pclose(x);
        return H5I_INVALID_HID;
    }
    return x;
}

/* ---- the XML header ------------------------------------------------------------------------------ */

mr_status ismrmrd_h5_read_xml(mr_ismrmrd *r, const char *name)
{
    const char *label = r->label;
    hid_t ds = H5I_INVALID_HID, type = H5I_INVALID_HID, space = H5I_INVALID_HID, mem = H5I_INVALID_HID;
    hid_t mspace = H5I_INVALID_HID, dxpl = H5I_INVALID_HID;
    char *text = NULL;
    int vlen = 0;
    vlen_budget budget = {MR_MRD_MAX_XML_BYTES + 1, 0, 0};
    mr_status st = MR_OK;
    char what[1400];
    snprintf(what, sizeof what, "%.1100s: %.280s", label, name);
    ds = H5Dopen2(r->file, name, H5P_DEFAULT);
    if (ds < 0)
        return mr_error(MR_EFORMAT, "%s: is not a dataset", what);
    type = H5Dget_type(ds);
    space = H5Dget_space(ds);
    if (type < 0 || H5Tget_class(type) != H5T_STRING) {
        st = mr_error(MR_EFORMAT, "%s: is not a string (the ISMRMRD XML header)", what);
        goto done;
    }
    hssize_t npoints = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
    if (npoints < 1) {
        st = mr_error(MR_EFORMAT, "%s: holds no string", what);
        goto done;
    }
    /* the first element only (libismrmrd writes one) */
    if (H5Sget_simple_extent_type(space) == H5S_SIMPLE) {
        int rank = H5Sget_simple_extent_ndims(space);
        if (rank != 1) {
            st = mr_error(MR_EFORMAT, "%s: has rank %d, expected a single string", what, rank);
            goto done;
        }
        hsize_t start = 0, count = 1;
        H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, NULL, &count, NULL);
    }
    mspace = H5Screate(H5S_SCALAR);
    mem = H5Tcopy(H5T_C_S1);
    vlen = H5Tis_variable_str(type) > 0;
    if (vlen) {
        H5Tset_size(mem, H5T_VARIABLE);
        dxpl = budget_dxpl(&budget);
        if (dxpl < 0 || H5Dread(ds, mem, mspace, space, dxpl, &text) < 0 || !text) {
            if (budget.refused)
                st = mr_error(MR_EFORMAT, "%s: the XML header is longer than %zu bytes", what, MR_MRD_MAX_XML_BYTES);
            else
                st = mr_error(MR_EFORMAT, "%s: cannot read the XML header string", what);
            text = NULL;
            goto done;
        }
    } else {
        size_t len = H5Tget_size(type);
        if (len > MR_MRD_MAX_XML_BYTES) {
            st = mr_error(MR_EFORMAT, "%s: the XML header is %zu bytes, more than %zu", what, len,
                          MR_MRD_MAX_XML_BYTES);
            goto done;
        }
        text = calloc(len + 1, 1);
        if (!text) {
            st = mr_error(MR_ENOMEM, "%s: out of memory", what);
            goto done;
        }
        H5Tset_size(mem, len);
        H5Tset_strpad(mem, H5T_STR_NULLPAD);
        if (H5Dread(ds, mem, mspace, space, H5P_DEFAULT, text) < 0) {
            st = mr_error(MR_EFORMAT, "%s: cannot read the XML header string", what);
            goto done;
        }
    }
    st = mr_mrd_header_parse(text, strlen(text), what, &r->sum.hdr);
done:
    free(text); /* vlen strings come from vlen_alloc (malloc) */
    mr_h5_close(&dxpl);
    mr_h5_close(&mem);
    mr_h5_close(&mspace);
    mr_h5_close(&space);
    mr_h5_close(&type);
    mr_h5_close(&ds);
    return st;
}
/* ---- block reads ------------------------------------------------------------------------------- */

/* Read the headers of acquisitions [start, start + n) into heads (rec_head[n]). */
mr_status ismrmrd_h5_read_heads(mr_ismrmrd *r, int64_t start, int64_t n, rec_head *heads)
{
    hid_t fs = H5Dget_space(r->dset), ms = H5I_INVALID_HID;
    hsize_t s = (hsize_t)start, c = (hsize_t)n;
    mr_status st = MR_OK;
    memset(heads, 0, (size_t)n * sizeof *heads); /* padding too: headers are compared with memcmp */
    ms = H5Screate_simple(1, &c, NULL);
    if (fs < 0 || ms < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, &s, NULL, &c, NULL) < 0 ||
        H5Dread(r->dset, r->t_rec_head, ms, fs, H5P_DEFAULT, heads) < 0)
        st = mr_error(MR_EIO, "%s: %s/data: cannot read acquisition headers %lld..%lld", r->label, r->sum.group,
                      (long long)start, (long long)(start + n - 1));
    mr_h5_close(&ms);
    mr_h5_close(&fs);
    return st;
}

/* Read records `idx` (n of them, ascending) with memory type `type` into buf, each variable-length
 * member allocated within `budget` bytes in all. The caller reclaims with reclaim(). */
static mr_status read_records(mr_ismrmrd *r, hid_t type, const hsize_t *idx, int64_t n, size_t budget, void *buf,
                              hid_t *dxpl_out, hid_t *ms_out, const char *what)
{
    *dxpl_out = H5I_INVALID_HID;
    *ms_out = H5I_INVALID_HID;
    vlen_budget *b = malloc(sizeof *b);
    if (!b)
        return mr_error(MR_ENOMEM, "%s: out of memory", r->label);
    b->budget = budget;
    b->used = 0;
    b->refused = 0;
    mr_child_memory_allow((int64_t)budget); /* bytes the headers announce (within the file's size) */
    hsize_t c = (hsize_t)n;
    hid_t fs = H5Dget_space(r->dset), ms = H5Screate_simple(1, &c, NULL), dxpl = budget_dxpl(b);
    mr_status st = MR_OK;
    memset(buf, 0, (size_t)n * H5Tget_size(type));
    if (fs < 0 || ms < 0 || dxpl < 0 || H5Sselect_elements(fs, H5S_SELECT_SET, (size_t)n, idx) < 0)
        st = mr_error(MR_EIO, "%s: %s/data: cannot select acquisitions", r->label, r->sum.group);
    else if (H5Dread(r->dset, type, ms, fs, dxpl, buf) < 0) {
        /* a stored length that disagrees with the headers: refused by the budget when it is within reach,
           else libhdf5 failed on its own (e.g. a length it cannot allocate for within the reading process's
           memory: an 8 GiB request for a 0x7fffffff data length) */
        char why[300];
        st = b->refused ? mr_error(MR_EFORMAT,
                                   "%s: %s/data: acquisitions %lld..%lld store more %s values than their headers "
                                   "announce (%zu bytes)",
                                   r->label, r->sum.group, (long long)idx[0], (long long)idx[n - 1], what, budget)
                        : mr_error(MR_EFORMAT, "%s: %s/data: cannot read the %s of acquisitions %lld..%lld (stored "
                                               "lengths the headers do not announce?)%s",
                                   r->label, r->sum.group, what, (long long)idx[0], (long long)idx[n - 1],
                                   mr_h5_why(why, sizeof why));
    }
    mr_h5_close(&fs);
    if (st != MR_OK) {
        /* HDF5 keeps what it allocated before a read failed: free it (the rest of buf is zero) */
        if (ms >= 0 && dxpl >= 0)
            H5Dvlen_reclaim(type, ms, dxpl, buf);
        mr_h5_close(&ms);
        mr_h5_close(&dxpl);
        mr_child_memory_allow(-(int64_t)budget);
        free(b);
        return st;
    }
    *dxpl_out = dxpl;
    *ms_out = ms;
    /* the budget stays alive with the dxpl: freed in reclaim() */
    return MR_OK;
}

static void reclaim(hid_t type, hid_t ms, hid_t dxpl, void *buf)
{
    if (dxpl >= 0) {
        H5Dvlen_reclaim(type, ms, dxpl, buf);
        H5MM_free_t f;
        void *fi = NULL, *ai = NULL;
        H5MM_allocate_t a;
        H5Pget_vlen_mem_manager(dxpl, &a, &ai, &f, &fi);
        if (ai)
            mr_child_memory_allow(-(int64_t)((vlen_budget *)ai)->budget);
        free(ai);
    }
    mr_h5_close(&ms);
    mr_h5_close(&dxpl);
}
/* Open <group>/data and check its datatype (an ISMRMRD 1.x acquisition list) and dataspace (rank 1,
 * acquisitions within the limit; when `expect` > 0 exactly that many); *n the acquisitions. With
 * `storage`, also what it stores against what it declares (every record's fixed part, every chunk). */
mr_status ismrmrd_h5_open_records(mr_ismrmrd *r, int storage, int64_t expect, int64_t *n_out)
{
    char name[300];
    snprintf(name, sizeof name, "%s/data", r->sum.group);
    r->dset = H5Dopen2(r->file, name, H5P_DEFAULT);
    if (r->dset < 0)
        return mr_error(MR_EFORMAT, "%s: %s is not a dataset", r->label, name);
    hid_t ftype = H5Dget_type(r->dset), space = H5Dget_space(r->dset), dcpl = H5Dget_create_plist(r->dset);
    mr_status st = ftype < 0 ? mr_error(MR_EFORMAT, "%s: %s: unreadable datatype", r->label, name)
                             : check_file_type(r->label, name, ftype);
    if (st == MR_OK) {
        int rank = space >= 0 && H5Sget_simple_extent_type(space) == H5S_SIMPLE ? H5Sget_simple_extent_ndims(space) : -1;
        hsize_t n = 0;
        if (rank == 1)
            H5Sget_simple_extent_dims(space, &n, NULL);
        if (rank != 1)
            st = mr_error(MR_EFORMAT, "%s: %s has rank %d, expected a 1-D list of acquisitions", r->label, name, rank);
        else if (n < 1)
            st = mr_error(MR_EFORMAT, "%s: %s holds no acquisitions", r->label, name);
        else if (n > (hsize_t)MR_ISMRMRD_MAX_ACQUISITIONS)
            st = mr_error(MR_EFORMAT, "%s: %s declares %llu acquisitions, more than %lld", r->label, name,
                          (unsigned long long)n, (long long)MR_ISMRMRD_MAX_ACQUISITIONS);
        else if (expect > 0 && (int64_t)n != expect)
            st = mr_error(MR_EFORMAT, "%s: %s holds %llu acquisitions, %lld when the file was opened", r->label, name,
                          (unsigned long long)n, (long long)expect);
        else if (storage) {
            /* a dataset that declares more records than it stores (no filters: each record takes at
             * least its fixed-size part on disk) is refused before anything is allocated for it */
            size_t rec = H5Tget_size(ftype);
            int filters = dcpl >= 0 ? H5Pget_nfilters(dcpl) : 0;
            hsize_t stored = H5Dget_storage_size(r->dset);
            if (filters == 0 && rec > 0 && stored / rec < n)
                st = mr_error(MR_EFORMAT, "%s: %s declares %llu acquisitions but stores only %llu bytes (%zu per "
                                          "acquisition)",
                              r->label, name, (unsigned long long)n, (unsigned long long)stored, rec);
        }
        *n_out = (int64_t)n;
    }
    mr_h5_close(&dcpl);
    mr_h5_close(&space);
    mr_h5_close(&ftype);
    /* the storage holds what the dataspace declares (every unfiltered chunk present at its size:
     * libhdf5 fills a missing one from the fill value, read past its end when the fill value is
     * smaller than a record), no external storage, no virtual dataset, no unknown filter */
    if (st != MR_OK || (storage && (st = mr_h5_dataset_check(r->dset, r->label, name, NULL)) != MR_OK))
        return st;
    r->t_head = make_head_type();
    r->t_rec_head = make_rec_type(r->t_head, sizeof(rec_head), -1, -1);
    r->t_rec_traj = make_rec_type(r->t_head, sizeof(rec_full), (long)HOFFSET(rec_full, traj), -1);
    r->t_rec_data = make_rec_type(r->t_head, sizeof(rec_full), -1, (long)HOFFSET(rec_full, data));
    r->t_rec_full =
        make_rec_type(r->t_head, sizeof(rec_full), (long)HOFFSET(rec_full, traj), (long)HOFFSET(rec_full, data));
    if (r->t_head < 0 || r->t_rec_head < 0 || r->t_rec_traj < 0 || r->t_rec_data < 0 || r->t_rec_full < 0)
        return mr_error(MR_EINTERNAL, "%s: cannot build the HDF5 memory types", r->label);
    return MR_OK;
}

/* ---- reading records block by block -------------------------------------------------------------- */

/* Check one record's data length and values; name the acquisition. */
static mr_status check_data(const mr_ismrmrd *r, int64_t acq, const mem_head *h, const hvl_t *d)
{
    const size_t want = 2 * (size_t)h->number_of_samples * h->active_channels;
    if (d->len != want)
        return mr_error(MR_EFORMAT, "%s: acquisition %lld: data holds %zu floats, its header announces %u samples x %u "
                                    "channels x 2 = %zu",
                        r->label, (long long)acq, d->len, h->number_of_samples, h->active_channels, want);
    int64_t bad = mr_h5_first_nonfinite(d->p, want);
    if (bad >= 0)
        return mr_error(MR_EFORMAT, "%s: acquisition %lld: non-finite data value %g at channel %lld, sample %lld",
                        r->label, (long long)acq, (double)((const float *)d->p)[bad],
                        (long long)(bad / 2 / h->number_of_samples), (long long)(bad / 2 % h->number_of_samples));
    return MR_OK;
}

/* Read, in file order and blocks of BLOCK, the acquisitions whose acq_vol is `want` (a volume index,
 * VOL_NOISE, or VOL_ANY_IMAGING for every volume) with their trajectory and/or data, within the byte
 * budget their headers announce, and call fn for each. */
mr_status ismrmrd_h5_scan_records(mr_ismrmrd *r, int32_t want, int with_traj, int with_data,
                                  const char *what, record_fn fn, void *ctx)
{
    const hid_t type = with_traj && with_data ? r->t_rec_full : (with_traj ? r->t_rec_traj : r->t_rec_data);
    rec_head *heads = malloc(BLOCK * sizeof *heads);
    rec_full *recs = malloc(BLOCK * sizeof *recs);
    hsize_t *idx = malloc(BLOCK * sizeof *idx);
    int32_t *which = malloc(BLOCK * sizeof *which);
    mr_status st = MR_OK;
    if (!heads || !recs || !idx || !which)
        st = mr_error(MR_ENOMEM, "%s: out of memory", r->label);
    const int64_t total = r->sum.acquisitions;
    for (int64_t start = 0; st == MR_OK && start < total; start += BLOCK) {
        const int64_t n = total - start < BLOCK ? total - start : BLOCK;
        int64_t nsel = 0;
        for (int64_t i = 0; i < n; i++) {
            const int32_t v = r->acq_vol[start + i];
            if (want == VOL_ANY_IMAGING ? v >= 0 : v == want) {
                which[nsel] = (int32_t)i;
                idx[nsel++] = (hsize_t)(start + i);
            }
        }
        if (nsel == 0)
            continue;
        if ((st = ismrmrd_h5_read_heads(r, start, n, heads)) != MR_OK)
            break;
        size_t budget = 0;
        for (int64_t j = 0; j < nsel; j++) {
            const mem_head *h = &heads[which[j]].head;
            budget += (size_t)h->number_of_samples *
                      ((with_traj ? h->trajectory_dimensions : 0) + (with_data ? 2 * (size_t)h->active_channels : 0)) *
                      sizeof(float);
        }
        hid_t dxpl, ms;
        if ((st = read_records(r, type, idx, nsel, budget, recs, &dxpl, &ms, what)) != MR_OK)
            break;
        for (int64_t j = 0; st == MR_OK && j < nsel; j++) {
            const mem_head *h = &recs[j].head;
            const int64_t acq = (int64_t)idx[j];
            const size_t tlen = (size_t)h->number_of_samples * h->trajectory_dimensions;
            if (memcmp(h, &heads[which[j]].head, sizeof *h) != 0)
                st = mr_error(MR_EFORMAT, "%s: acquisition %lld: its header changed between reads", r->label,
                              (long long)acq);
            else if (with_traj && recs[j].traj.len != tlen)
                st = mr_error(MR_EFORMAT, "%s: acquisition %lld: trajectory holds %zu values, its header announces "
                                          "%u samples x %u dimensions = %zu",
                              r->label, (long long)acq, recs[j].traj.len, h->number_of_samples,
                              h->trajectory_dimensions, tlen);
            else if (with_data)
                st = check_data(r, acq, h, &recs[j].data);
            if (st == MR_OK)
                st = fn(r, acq, h, &recs[j].traj, &recs[j].data, ctx);
        }
        reclaim(type, ms, dxpl, recs);
    }
    free(heads);
    free(recs);
    free(idx);
    free(which);
    return st;
}
