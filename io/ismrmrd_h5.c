/* ISMRMRD reader on plain HDF5 (see ismrmrd_h5.h; docs/FORMAT.md section 5 is normative).
 *
 * The acquisition layout is ISMRMRD 1.x's (include/ismrmrd/ismrmrd.h, libsrc/dataset.c of
 * ismrmrd/ismrmrd): <group>/data is a rank-1 dataset of the compound {head, traj, data}, where head
 * is the AcquisitionHeader compound, traj a variable-length float sequence [samples][traj_dims]
 * (dimension fastest) and data a variable-length float sequence [channels][samples][re, im]
 * (sample fastest within a channel). Members are matched by name (HDF5 compound conversion), so
 * the reader does not depend on the file's member order or padding. */
#include "ismrmrd_h5.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/child.h"
#include "../base/log.h"
#include "../base/noise_cov.h"
#include "h5util.h"

#define BLOCK 1024 /* acquisitions per HDF5 read */

/* ISMRMRD_ACQ_* flag bits (ismrmrd.h): bit (value - 1) of head.flags */
#define ACQ_BIT(v) ((uint64_t)1 << ((v) - 1))
#define ACQ_IS_NOISE_MEASUREMENT ACQ_BIT(19)
#define ACQ_IS_PARALLEL_CALIBRATION ACQ_BIT(20)
#define ACQ_IS_PARALLEL_CALIBRATION_AND_IMAGING ACQ_BIT(21)
#define ACQ_IS_NAVIGATION_DATA ACQ_BIT(23)
#define ACQ_IS_PHASECORR_DATA ACQ_BIT(24)
#define ACQ_IS_HPFEEDBACK_DATA ACQ_BIT(26)
#define ACQ_IS_DUMMYSCAN_DATA ACQ_BIT(27)
#define ACQ_IS_RTFEEDBACK_DATA ACQ_BIT(28)
#define ACQ_IS_SURFACECOILCORRECTIONSCAN_DATA ACQ_BIT(29)
#define ACQ_IS_PHASE_STABILIZATION_REFERENCE ACQ_BIT(30)
#define ACQ_IS_PHASE_STABILIZATION ACQ_BIT(31)

#define VOL_NOISE (-2)
#define VOL_SKIPPED (-1)

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

static const char *const kind_names[MR_ACQ_KINDS] = {"imaging",  "noise",    "calibration", "navigation",
                                                     "phasecorr", "feedback", "dummy",      "other"};

const char *mr_acq_kind_name(mr_acq_kind k) { return (k >= 0 && k < MR_ACQ_KINDS) ? kind_names[k] : "?"; }

static mr_acq_kind classify(uint64_t f)
{
    if (f & ACQ_IS_NOISE_MEASUREMENT)
        return MR_ACQ_NOISE;
    if ((f & ACQ_IS_PARALLEL_CALIBRATION) && !(f & ACQ_IS_PARALLEL_CALIBRATION_AND_IMAGING))
        return MR_ACQ_CALIBRATION;
    if (f & ACQ_IS_NAVIGATION_DATA)
        return MR_ACQ_NAVIGATION;
    if (f & ACQ_IS_PHASECORR_DATA)
        return MR_ACQ_PHASECORR;
    if (f & (ACQ_IS_HPFEEDBACK_DATA | ACQ_IS_RTFEEDBACK_DATA))
        return MR_ACQ_FEEDBACK;
    if (f & ACQ_IS_DUMMYSCAN_DATA)
        return MR_ACQ_DUMMY;
    if (f & (ACQ_IS_SURFACECOILCORRECTIONSCAN_DATA | ACQ_IS_PHASE_STABILIZATION_REFERENCE |
             ACQ_IS_PHASE_STABILIZATION))
        return MR_ACQ_OTHER;
    return MR_ACQ_IMAGING;
}

/* ---- HDF5 types --------------------------------------------------------------------------------- */

static hid_t array_type(hid_t base, hsize_t n) { return H5Tarray_create2(base, 1, &n); }

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
    hid_t mask = array_type(H5T_NATIVE_UINT64, 16), f3 = array_type(H5T_NATIVE_FLOAT, 3);
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

static mr_status read_xml(mr_ismrmrd *r, const char *name)
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

/* ---- volumes ------------------------------------------------------------------------------------- */

static uint64_t key_hash(const vol_key *k)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < 7; i++) {
        h ^= k->v[i];
        h *= 1099511628211ull;
    }
    return h;
}

static mr_status rehash(mr_ismrmrd *r, int64_t nslots)
{
    int32_t *s = malloc((size_t)nslots * sizeof *s);
    if (!s)
        return mr_error(MR_ENOMEM, "%s: out of memory for the volume table", r->label);
    for (int64_t i = 0; i < nslots; i++)
        s[i] = -1;
    for (int v = 0; v < r->nvol; v++) {
        uint64_t h = key_hash(&r->vol[v].key) & (uint64_t)(nslots - 1);
        while (s[h] >= 0)
            h = (h + 1) & (uint64_t)(nslots - 1);
        s[h] = v;
    }
    free(r->slots);
    r->slots = s;
    r->nslots = nslots;
    return MR_OK;
}

/* Index of the volume with key k, created when new. */
static mr_status find_volume(mr_ismrmrd *r, const vol_key *k, int64_t acq, int *out)
{
    if (!r->slots || 2 * (int64_t)(r->nvol + 1) > r->nslots) {
        mr_status st = rehash(r, r->nslots ? 2 * r->nslots : 64);
        if (st != MR_OK)
            return st;
    }
    uint64_t h = key_hash(k) & (uint64_t)(r->nslots - 1);
    while (r->slots[h] >= 0) {
        if (memcmp(&r->vol[r->slots[h]].key, k, sizeof *k) == 0) {
            *out = r->slots[h];
            return MR_OK;
        }
        h = (h + 1) & (uint64_t)(r->nslots - 1);
    }
    if (r->nvol >= MR_ISMRMRD_MAX_VOLUMES)
        return mr_error(MR_EFORMAT, "%s: acquisition %lld starts volume %d; more than %d volumes", r->label,
                        (long long)acq, r->nvol + 1, MR_ISMRMRD_MAX_VOLUMES);
    if (r->nvol == r->cap_vol) {
        int cap = r->cap_vol ? 2 * r->cap_vol : 16;
        volume *nv = realloc(r->vol, (size_t)cap * sizeof *nv);
        if (!nv)
            return mr_error(MR_ENOMEM, "%s: out of memory for the volume table", r->label);
        r->vol = nv;
        r->cap_vol = cap;
    }
    volume *v = &r->vol[r->nvol];
    memset(v, 0, sizeof *v);
    v->key = *k;
    r->slots[h] = r->nvol;
    *out = r->nvol++;
    return MR_OK;
}

static mr_status note_average(mr_ismrmrd *r, volume *v, uint16_t avg)
{
    for (int i = 0; i < v->navg; i++)
        if (v->avg[i] == avg)
            return MR_OK;
    if (v->navg == v->cap_avg) {
        int cap = v->cap_avg ? 2 * v->cap_avg : 4;
        uint16_t *na = realloc(v->avg, (size_t)cap * sizeof *na);
        if (!na)
            return mr_error(MR_ENOMEM, "%s: out of memory", r->label);
        v->avg = na;
        v->cap_avg = cap;
    }
    v->avg[v->navg++] = avg;
    return MR_OK;
}

static int key_cmp(const void *a, const void *b)
{
    const volume *x = a, *y = b;
    for (int i = 0; i < 7; i++)
        if (x->key.v[i] != y->key.v[i])
            return x->key.v[i] < y->key.v[i] ? -1 : 1;
    return 0;
}

/* Sort the volumes by key (encoding, slice, contrast, phase, repetition, set, average) and renumber
 * acq_vol accordingly. */
static mr_status sort_volumes(mr_ismrmrd *r)
{
    for (int v = 0; v < r->nvol; v++)
        r->vol[v].info.average = (int)v; /* remember the old index */
    qsort(r->vol, (size_t)r->nvol, sizeof *r->vol, key_cmp);
    int32_t *map = malloc((size_t)(r->nvol ? r->nvol : 1) * sizeof *map);
    if (!map)
        return mr_error(MR_ENOMEM, "%s: out of memory", r->label);
    for (int v = 0; v < r->nvol; v++)
        map[r->vol[v].info.average] = v;
    for (int64_t i = 0; i < r->sum.acquisitions; i++)
        if (r->acq_vol[i] >= 0)
            r->acq_vol[i] = map[r->acq_vol[i]];
    free(map);
    free(r->slots);
    r->slots = NULL;
    r->nslots = 0;
    return MR_OK;
}

/* ---- block reads ------------------------------------------------------------------------------- */

/* Read the headers of acquisitions [start, start + n) into heads (rec_head[n]). */
static mr_status read_heads(mr_ismrmrd *r, int64_t start, int64_t n, rec_head *heads)
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

/* ---- pass 1: headers ------------------------------------------------------------------------------ */

static int mask_nonzero(const uint64_t *m)
{
    for (int i = 0; i < 16; i++)
        if (m[i])
            return 1;
    return 0;
}

/* idx counter value and the limit it must respect */
static mr_status check_limit(const mr_ismrmrd *r, int64_t acq, const mr_mrd_encoding *en, mr_mrd_limit_kind k,
                             unsigned value)
{
    const mr_mrd_limit *l = &en->limits[k];
    if (l->present && (int64_t)value > l->maximum)
        return mr_error(MR_EFORMAT, "%s: acquisition %lld: idx.%s = %u exceeds the header's encodingLimits %s maximum %lld",
                        r->label, (long long)acq, mr_mrd_limit_name(k), value, mr_mrd_limit_name(k),
                        (long long)l->maximum);
    return MR_OK;
}

static mr_status check_channels(mr_ismrmrd *r, int64_t acq, const mem_head *h, const char *kind)
{
    mr_ismrmrd_summary *s = &r->sum;
    if (h->active_channels < 1 || h->active_channels > MR_MAX_COILS)
        return mr_error(MR_EFORMAT, "%s: acquisition %lld (%s): active_channels is %u, expected 1..%d", r->label,
                        (long long)acq, kind, h->active_channels, MR_MAX_COILS);
    if (s->hdr.receiver_channels >= 0 && h->active_channels > s->hdr.receiver_channels)
        return mr_error(MR_EFORMAT, "%s: acquisition %lld (%s): %u active channels, but the header's receiverChannels "
                                    "is %lld",
                        r->label, (long long)acq, kind, h->active_channels, (long long)s->hdr.receiver_channels);
    if (s->channels == 0) {
        s->channels = h->active_channels;
        r->first_channels_acq = acq;
    } else if (h->active_channels != s->channels) {
        return mr_error(MR_EFORMAT, "%s: acquisition %lld (%s) has %u active channels, acquisition %lld has %lld",
                        r->label, (long long)acq, kind, h->active_channels, (long long)r->first_channels_acq,
                        (long long)s->channels);
    }
    if (mask_nonzero(h->channel_mask)) {
        if (!r->have_mask) {
            memcpy(r->mask, h->channel_mask, sizeof r->mask);
            r->have_mask = 1;
        } else if (memcmp(r->mask, h->channel_mask, sizeof r->mask) != 0) {
            return mr_error(MR_EFORMAT, "%s: acquisition %lld (%s): its channel_mask selects other coils than the "
                                        "earlier acquisitions'",
                            r->label, (long long)acq, kind);
        }
    }
    return MR_OK;
}

static mr_status add_imaging(mr_ismrmrd *r, int64_t acq, const mem_head *h)
{
    mr_ismrmrd_summary *s = &r->sum;
    const unsigned ns = h->number_of_samples;
    if (h->encoding_space_ref >= s->hdr.nencodings)
        return mr_error(MR_EFORMAT, "%s: acquisition %lld: encoding_space_ref %u, but the header has %d encoding(s)",
                        r->label, (long long)acq, h->encoding_space_ref, s->hdr.nencodings);
    const mr_mrd_encoding *en = &s->hdr.enc[h->encoding_space_ref];
    if (h->trajectory_dimensions == 0)
        return mr_error(MR_EFORMAT,
                        "%s: acquisition %lld has no trajectory (trajectory_dimensions 0; header trajectory '%s'): "
                        "mrirecon reads non-Cartesian acquisitions with trajectories only",
                        r->label, (long long)acq, en->trajectory[0] ? en->trajectory : "absent");
    if (h->trajectory_dimensions != 2 && h->trajectory_dimensions != 3)
        return mr_error(MR_EFORMAT, "%s: acquisition %lld: trajectory_dimensions is %u, expected 2 or 3", r->label,
                        (long long)acq, h->trajectory_dimensions);
    if (s->traj_dims == 0)
        s->traj_dims = h->trajectory_dimensions;
    else if (h->trajectory_dimensions != s->traj_dims)
        return mr_error(MR_EFORMAT, "%s: acquisition %lld: trajectory_dimensions %u, earlier acquisitions have %d",
                        r->label, (long long)acq, h->trajectory_dimensions, s->traj_dims);
    if ((unsigned)h->discard_pre + h->discard_post >= ns)
        return mr_error(MR_EFORMAT, "%s: acquisition %lld: discard_pre %u + discard_post %u leave none of its %u samples",
                        r->label, (long long)acq, h->discard_pre, h->discard_post, ns);
    if (h->center_sample >= ns)
        return mr_error(MR_EFORMAT, "%s: acquisition %lld: center_sample %u is not below number_of_samples %u",
                        r->label, (long long)acq, h->center_sample, ns);
    static const mr_mrd_limit_kind lk[] = {MR_LIMIT_AVERAGE, MR_LIMIT_SLICE, MR_LIMIT_CONTRAST, MR_LIMIT_PHASE,
                                           MR_LIMIT_REPETITION, MR_LIMIT_SET, MR_LIMIT_SEGMENT};
    const unsigned lv[] = {h->idx.average, h->idx.slice,      h->idx.contrast, h->idx.phase,
                           h->idx.repetition, h->idx.set, h->idx.segment};
    for (size_t i = 0; i < sizeof lk / sizeof lk[0]; i++) {
        mr_status st = check_limit(r, acq, en, lk[i], lv[i]);
        if (st != MR_OK)
            return st;
    }
    /* stack of stars: a 2D trajectory on a 3D encoded matrix, kz from kspace_encode_step_2 */
    if (h->trajectory_dimensions == 2 && en->encoded.matrix[2] > 1) {
        const mr_mrd_limit *l2 = &en->limits[MR_LIMIT_E2];
        int64_t center = l2->present ? l2->center : en->encoded.matrix[2] / 2;
        int64_t kz = (int64_t)h->idx.kspace_encode_step_2 - center;
        if (2 * llabs(kz) > en->encoded.matrix[2])
            return mr_error(MR_EFORMAT,
                            "%s: acquisition %lld: kspace_encode_step_2 %u (kz %lld about centre %lld) lies outside the "
                            "encoded matrix z = %lld",
                            r->label, (long long)acq, h->idx.kspace_encode_step_2, (long long)kz, (long long)center,
                            (long long)en->encoded.matrix[2]);
        s->stack = 1;
    }
    vol_key k = {{h->encoding_space_ref, h->idx.slice, h->idx.contrast, h->idx.phase, h->idx.repetition, h->idx.set,
                  r->opts.averages == MR_AVERAGES_SEPARATE ? h->idx.average : 0xffff}};
    int v = -1;
    mr_status st = find_volume(r, &k, acq, &v);
    if (st != MR_OK)
        return st;
    volume *vol = &r->vol[v];
    const int64_t kept = (int64_t)ns - h->discard_pre - h->discard_post;
    if (vol->info.samples > MR_MAX_SAMPLES - kept)
        return mr_error(MR_EFORMAT, "%s: acquisition %lld: volume (slice %u, contrast %u, repetition %u, ...) exceeds "
                                    "%lld samples",
                        r->label, (long long)acq, h->idx.slice, h->idx.contrast, h->idx.repetition,
                        (long long)MR_MAX_SAMPLES);
    if (vol->info.acquisitions == 0) {
        memcpy(vol->info.geometry.position, h->position, sizeof h->position);
        memcpy(vol->info.geometry.read_dir, h->read_dir, sizeof h->read_dir);
        memcpy(vol->info.geometry.phase_dir, h->phase_dir, sizeof h->phase_dir);
        memcpy(vol->info.geometry.slice_dir, h->slice_dir, sizeof h->slice_dir);
    }
    vol->info.samples += kept;
    vol->info.acquisitions++;
    if (s->imaging_dwell_us <= 0)
        s->imaging_dwell_us = h->sample_time_us;
    r->acq_vol[acq] = v;
    return note_average(r, vol, h->idx.average);
}

static mr_status pass_headers(mr_ismrmrd *r)
{
    mr_ismrmrd_summary *s = &r->sum;
    rec_head *heads = malloc(BLOCK * sizeof *heads);
    if (!heads)
        return mr_error(MR_ENOMEM, "%s: out of memory", r->label);
    mr_status st = MR_OK;
    for (int64_t start = 0; st == MR_OK && start < s->acquisitions; start += BLOCK) {
        int64_t n = s->acquisitions - start < BLOCK ? s->acquisitions - start : BLOCK;
        if ((st = read_heads(r, start, n, heads)) != MR_OK)
            break;
        for (int64_t i = 0; st == MR_OK && i < n; i++) {
            const mem_head *h = &heads[i].head;
            const int64_t acq = start + i;
            mr_acq_kind kind = classify(h->flags);
            s->count[kind]++;
            r->acq_vol[acq] = VOL_SKIPPED;
            if (kind != MR_ACQ_IMAGING && kind != MR_ACQ_NOISE)
                continue;
            for (int a = 0; a < 3; a++)
                if (!isfinite(h->position[a]) || !isfinite(h->read_dir[a]) || !isfinite(h->phase_dir[a]) ||
                    !isfinite(h->slice_dir[a]) || !isfinite(h->sample_time_us)) {
                    st = mr_error(MR_EFORMAT, "%s: acquisition %lld: non-finite position, direction or sample_time_us",
                                  r->label, (long long)acq);
                    break;
                }
            if (st != MR_OK)
                break;
            /* a dwell time (it scales the noise level: lambda); 0 when the writer did not know it */
            if (h->sample_time_us != 0 && !(h->sample_time_us >= 1e-3f && h->sample_time_us <= 1e6f)) {
                st = mr_error(MR_EFORMAT, "%s: acquisition %lld (%s): sample_time_us %g is not a dwell time (0 when "
                                          "unknown, else 0.001 to 1e6 microseconds)",
                              r->label, (long long)acq, mr_acq_kind_name(kind), (double)h->sample_time_us);
                break;
            }
            if (h->number_of_samples == 0) {
                st = mr_error(MR_EFORMAT, "%s: acquisition %lld (%s) has number_of_samples 0", r->label,
                              (long long)acq, mr_acq_kind_name(kind));
                break;
            }
            if ((st = check_channels(r, acq, h, mr_acq_kind_name(kind))) != MR_OK)
                break;
            r->declared_bytes += (double)h->number_of_samples *
                                 ((kind == MR_ACQ_IMAGING ? h->trajectory_dimensions : 0) + 2.0 * h->active_channels) *
                                 sizeof(float);
            if (kind == MR_ACQ_NOISE) {
                r->acq_vol[acq] = VOL_NOISE;
                if (s->noise_samples > MR_MAX_SAMPLES - h->number_of_samples) {
                    st = mr_error(MR_EFORMAT, "%s: the noise scans hold more than %lld samples", r->label,
                                  (long long)MR_MAX_SAMPLES);
                    break;
                }
                if (s->noise_samples == 0)
                    s->noise_dwell_us = h->sample_time_us;
                s->noise_samples += h->number_of_samples;
                continue;
            }
            st = add_imaging(r, acq, h);
        }
    }
    free(heads);
    if (st != MR_OK)
        return st;
    /* variable-length data live in the file's global heaps, which HDF5 never compresses: headers that
     * announce more bytes than the file has are refused before anything is allocated for them */
    hsize_t fsize = 0;
    if (H5Fget_filesize(r->file, &fsize) >= 0 && r->declared_bytes > (double)fsize)
        return mr_error(MR_EFORMAT, "%s: the acquisition headers announce %.0f bytes of trajectory and data, more than "
                                    "the file's %llu bytes",
                        r->label, r->declared_bytes, (unsigned long long)fsize);
    if (s->count[MR_ACQ_IMAGING] == 0)
        return mr_error(MR_EFORMAT, "%s: no imaging acquisitions (%lld acquisitions: %lld noise, %lld skipped by their "
                                    "flags)",
                        r->label, (long long)s->acquisitions, (long long)s->count[MR_ACQ_NOISE],
                        (long long)(s->acquisitions - s->count[MR_ACQ_NOISE]));
    return sort_volumes(r);
}

/* ---- grids and units ------------------------------------------------------------------------------ */

/* 1 when the encoding's volumes are 3D (3D trajectory or stack of stars on a 3D encoded matrix). */
static int enc_is_3d(const mr_ismrmrd *r, int e)
{
    const mr_mrd_encoding *en = &r->sum.hdr.enc[e];
    return en->encoded.matrix[2] > 1 && (r->sum.traj_dims == 3 || r->sum.stack);
}

/* Encoded / recon matrix and FOV of encoding e; z collapsed to 1 for 2D. */
static void enc_spaces(const mr_ismrmrd *r, int e, int64_t nenc[3], double fenc[3], int64_t nrec[3], double frec[3])
{
    const mr_mrd_encoding *en = &r->sum.hdr.enc[e];
    const int is3d = enc_is_3d(r, e);
    for (int a = 0; a < 3; a++) {
        nenc[a] = en->encoded.matrix[a];
        fenc[a] = en->encoded.have_fov ? en->encoded.fov_mm[a] : 0;
        nrec[a] = en->recon.have_matrix ? en->recon.matrix[a] : nenc[a];
        frec[a] = en->recon.have_fov ? en->recon.fov_mm[a] : fenc[a];
    }
    if (!is3d) {
        nenc[2] = 1;
        nrec[2] = 1;
    }
}

/* cycles per encoded FOV per unit of the stored value, on axis a */
static double unit_factor(mr_traj_units u, int64_t n, double fov_mm)
{
    switch (u) {
    case MR_UNITS_NORMALIZED:
        return (double)n;
    case MR_UNITS_RADIANS:
        return (double)n / (2 * M_PI);
    case MR_UNITS_PER_M:
        return fov_mm / 1000.0;
    default:
        return 1.0;
    }
}

#define FIT_LO 0.4
#define FIT_HI 1.05

void mr_ismrmrd_units_fits(const mr_ismrmrd_summary *s, int e, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int u = MR_UNITS_CYCLES; u < MR_UNITS_COUNT && used < size; u++) {
        const double lo = s->units_fit_min[e][u], hi = s->units_fit[e][u];
        const char *name = mr_traj_units_name((mr_traj_units)u);
        int k;
        if (hi == 0)
            k = snprintf(buf + used, size - used, "%s%s n/a", used ? ", " : "", name);
        else if (hi - lo <= 1e-3 * hi)
            k = snprintf(buf + used, size - used, "%s%s %.3g", used ? ", " : "", name, hi);
        else
            k = snprintf(buf + used, size - used, "%s%s %.3g..%.3g", used ? ", " : "", name, lo, hi);
        if (k < 0)
            break;
        used += (size_t)k;
    }
}

static mr_status detect_units(mr_ismrmrd *r, int e)
{
    mr_ismrmrd_summary *s = &r->sum;
    int64_t nenc[3], nrec[3];
    double fenc[3], frec[3];
    enc_spaces(r, e, nenc, fenc, nrec, frec);
    const int naxes = s->traj_dims == 3 && nenc[2] > 1 ? 3 : 2; /* stored axes measured against the box */
    int have_fov = 1;
    for (int a = 0; a < naxes; a++)
        have_fov &= fenc[a] > 0;
    for (int u = MR_UNITS_CYCLES; u < MR_UNITS_COUNT; u++) {
        if (u == MR_UNITS_PER_M && !have_fov) {
            s->units_fit[e][u] = s->units_fit_min[e][u] = 0;
            continue;
        }
        double hi = 0, lo = INFINITY;
        for (int a = 0; a < naxes; a++) {
            /* the edge of the Nyquist box [-N/2, N/2] in this unit */
            double edge = 0.5 * (double)nenc[a] / unit_factor((mr_traj_units)u, nenc[a], fenc[a]);
            double f = s->kmax[e][a] / edge;
            hi = f > hi ? f : hi;
            lo = f < lo ? f : lo;
        }
        s->units_fit[e][u] = hi;
        s->units_fit_min[e][u] = lo;
    }
    if (r->opts.traj_units != MR_UNITS_AUTO) {
        if (r->opts.traj_units == MR_UNITS_PER_M && !have_fov)
            return mr_error(MR_EINVAL, "%s: trajectory units per-m need the encoded field of view, which the header "
                                       "of encoding %d does not give",
                            r->label, e);
        s->units[e] = r->opts.traj_units;
        s->units_detected[e] = 0;
        double fit = s->units_fit[e][r->opts.traj_units];
        if (fit > FIT_HI)
            mr_log(MR_LOG_WARN, "%s: encoding %d: with {traj-units} %s the trajectory reaches %.3g times the Nyquist "
                                "box edge",
                   r->label, e, mr_traj_units_name(r->opts.traj_units), fit);
        return MR_OK;
    }
    /* plausible units: on every axis the trajectory reaches between FIT_LO and FIT_HI of the box
     * edge; units that convert with the same factor (e.g. per-m with a 1000 mm FOV and cycles) are
     * one choice */
    int pick = -1, other = -1;
    for (int u = MR_UNITS_CYCLES; u < MR_UNITS_COUNT; u++) {
        if (!(s->units_fit_min[e][u] >= FIT_LO && s->units_fit[e][u] <= FIT_HI))
            continue;
        if (pick < 0) {
            pick = u;
            continue;
        }
        int same = 1;
        for (int a = 0; a < naxes; a++) {
            double f1 = unit_factor((mr_traj_units)pick, nenc[a], fenc[a]);
            double f2 = unit_factor((mr_traj_units)u, nenc[a], fenc[a]);
            same &= fabs(f1 - f2) <= 1e-6 * fabs(f1);
        }
        if (!same)
            other = u;
    }
    char fits[300] = "max |k| / Nyquist edge: ";
    mr_ismrmrd_units_fits(s, e, fits + strlen(fits), sizeof fits - strlen(fits));
    if (pick < 0)
        return mr_error(MR_EFORMAT,
                        "%s: encoding %d: the trajectory's range (max |k| %g, %g, %g) fits none of the units (%s; a "
                        "fit needs %.2f..%.2f on every axis): give them with {traj-units}",
                        r->label, e, s->kmax[e][0], s->kmax[e][1], s->kmax[e][2], fits, FIT_LO, FIT_HI);
    if (other >= 0)
        return mr_error(MR_EFORMAT, "%s: encoding %d: the trajectory units are ambiguous, %s or %s (%s): give them "
                                    "with {traj-units}",
                        r->label, e, mr_traj_units_name((mr_traj_units)pick), mr_traj_units_name((mr_traj_units)other),
                        fits);
    s->units[e] = (mr_traj_units)pick;
    s->units_detected[e] = 1;
    mr_log(MR_LOG_INFO, "%s: encoding %d: trajectory units detected: %s (%s)", r->label, e,
           mr_traj_units_name((mr_traj_units)pick), fits);
    return MR_OK;
}

/* ---- reading records block by block -------------------------------------------------------------- */

#define VOL_ANY_IMAGING (-3)

/* Called for each record scan_records reads: its header and the variable-length members asked for
 * (their lengths already checked against the header). */
typedef mr_status (*record_fn)(mr_ismrmrd *r, int64_t acq, const mem_head *h, const hvl_t *traj, const hvl_t *data,
                               void *ctx);

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
static mr_status scan_records(mr_ismrmrd *r, int32_t want, int with_traj, int with_data, const char *what,
                              record_fn fn, void *ctx)
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
        if ((st = read_heads(r, start, n, heads)) != MR_OK)
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

/* ---- pass 2: trajectories ------------------------------------------------------------------------ */

static mr_status traj_record(mr_ismrmrd *r, int64_t acq, const mem_head *h, const hvl_t *traj, const hvl_t *data,
                             void *ctx)
{
    (void)data, (void)ctx;
    mr_ismrmrd_summary *s = &r->sum;
    const float *t = traj->p;
    const int td = h->trajectory_dimensions, e = h->encoding_space_ref;
    for (int64_t q = h->discard_pre; q < (int64_t)h->number_of_samples - h->discard_post; q++)
        for (int a = 0; a < td; a++) {
            const float v = t[q * td + a];
            if (!isfinite(v))
                return mr_error(MR_EFORMAT, "%s: acquisition %lld: trajectory value %g at sample %lld, axis %d",
                                r->label, (long long)acq, (double)v, (long long)q, a);
            s->kmax[e][a] = fabs(v) > s->kmax[e][a] ? fabs(v) : s->kmax[e][a];
        }
    s->have_imaging[e] = 1;
    return MR_OK;
}

static mr_status pass_traj(mr_ismrmrd *r)
{
    mr_ismrmrd_summary *s = &r->sum;
    mr_status st = scan_records(r, VOL_ANY_IMAGING, 1, 0, "trajectory", traj_record, NULL);
    if (st != MR_OK)
        return st;
    for (int e = 0; e < s->hdr.nencodings; e++) {
        if (!s->have_imaging[e])
            continue;
        if (s->traj_dims == 3 && !enc_is_3d(r, e) && s->kmax[e][2] > 1e-6 * fmax(s->kmax[e][0], s->kmax[e][1]))
            return mr_error(MR_EFORMAT, "%s: encoding %d: the trajectory has kz values up to %g, but the encoded "
                                        "matrix z is %lld (2D)",
                            r->label, e, s->kmax[e][2], (long long)s->hdr.enc[e].encoded.matrix[2]);
        if (s->kmax[e][0] == 0 && s->kmax[e][1] == 0)
            return mr_error(MR_EFORMAT, "%s: encoding %d: every trajectory value is 0", r->label, e);
        if ((st = detect_units(r, e)) != MR_OK)
            return st;
    }
    return MR_OK;
}

/* ---- pass 3: noise ----------------------------------------------------------------------------- */

typedef struct {
    double *psi;
    int warned;
} noise_ctx;

static mr_status noise_record(mr_ismrmrd *r, int64_t acq, const mem_head *h, const hvl_t *traj, const hvl_t *data,
                              void *ctx)
{
    (void)acq, (void)traj;
    noise_ctx *n = ctx;
    if (!n->warned && h->sample_time_us != r->sum.noise_dwell_us) {
        mr_log(MR_LOG_WARN, "%s: noise acquisitions have different sample times (%g and %g us)", r->label,
               (double)r->sum.noise_dwell_us, (double)h->sample_time_us);
        n->warned = 1;
    }
    mr_noise_cov_accumulate(n->psi, r->sum.channels, data->p, h->number_of_samples);
    return MR_OK;
}

static mr_status pass_noise(mr_ismrmrd *r)
{
    mr_ismrmrd_summary *s = &r->sum;
    const int64_t C = s->channels;
    if (s->count[MR_ACQ_NOISE] == 0)
        return MR_OK;
    noise_ctx n = {calloc((size_t)(C * C) * 2, sizeof(double)), 0};
    if (!n.psi)
        return mr_error(MR_ENOMEM, "%s: out of memory", r->label);
    mr_status st = scan_records(r, VOL_NOISE, 0, 1, "data", noise_record, &n);
    if (st != MR_OK) {
        free(n.psi);
        return st;
    }
    double *psi = n.psi;
    for (int64_t i = 0; i < 2 * C * C; i++)
        psi[i] /= (double)s->noise_samples;
    s->noise_cov = psi;
    s->noise_max_corr = mr_noise_max_correlation(psi, C);
    return MR_OK;
}

/* ---- volume geometry ------------------------------------------------------------------------------ */

static mr_status fill_volume_info(mr_ismrmrd *r)
{
    for (int v = 0; v < r->nvol; v++) {
        volume *vol = &r->vol[v];
        mr_volume_info *vi = &vol->info;
        const int e = vol->key.v[0];
        vi->encoding = e;
        vi->slice = vol->key.v[1];
        vi->contrast = vol->key.v[2];
        vi->phase = vol->key.v[3];
        vi->repetition = vol->key.v[4];
        vi->set = vol->key.v[5];
        vi->average = vol->key.v[6] == 0xffff ? -1 : vol->key.v[6];
        vi->averages = vol->navg;
        int64_t nenc[3], nrec[3];
        double fenc[3], frec[3];
        enc_spaces(r, e, nenc, fenc, nrec, frec);
        const int rec = r->opts.space == MR_SPACE_RECON;
        for (int a = 0; a < 3; a++) {
            vi->matrix[a] = rec ? nrec[a] : nenc[a];
            vi->fov_mm[a] = (float)(rec ? frec[a] : fenc[a]);
            vi->recon_matrix[a] = nrec[a];
            vi->recon_fov_mm[a] = (float)frec[a];
        }
        char what[1200];
        snprintf(what, sizeof what, "%s: encoding %d %s space", r->label, e, rec ? "recon" : "encoded");
        mr_status st = mr_matrix_check(vi->matrix, what);
        if (st != MR_OK)
            return MR_EFORMAT;
    }
    return MR_OK;
}

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

/* Open <group>/data and check its datatype (an ISMRMRD 1.x acquisition list) and dataspace (rank 1,
 * acquisitions within the limit; when `expect` > 0 exactly that many); *n the acquisitions. With
 * `storage`, also what it stores against what it declares (every record's fixed part, every chunk). */
static mr_status open_records(mr_ismrmrd *r, int storage, int64_t expect, int64_t *n_out)
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

static mr_status open_dataset(mr_ismrmrd *r)
{
    mr_ismrmrd_summary *s = &r->sum;
    char name[300];
    snprintf(name, sizeof name, "%s/xml", s->group);
    mr_status st = read_xml(r, name);
    if (st != MR_OK || (st = open_records(r, 1, 0, &s->acquisitions)) != MR_OK)
        return st;
    /* justified by the records the dataset stores (open_records) */
    mr_child_memory_allow((int64_t)((size_t)s->acquisitions * sizeof *r->acq_vol));
    r->acq_vol = malloc((size_t)s->acquisitions * sizeof *r->acq_vol);
    if (!r->acq_vol)
        return mr_error(MR_ENOMEM, "%s: out of memory for %lld acquisitions", r->label, (long long)s->acquisitions);
    if ((st = pass_headers(r)) != MR_OK || (st = fill_volume_info(r)) != MR_OK || (st = pass_traj(r)) != MR_OK ||
        (st = pass_noise(r)) != MR_OK)
        return st;
    return MR_OK;
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
        st = open_dataset(r);
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
    mr_status st = open_records(r, 0, r->sum.acquisitions, &n);
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

/* ---- reading a volume ------------------------------------------------------------------------------ */

typedef struct {
    uint16_t average;
    int64_t offset, count; /* samples in the volume's arrays */
} acq_span;

/* Copy one acquisition's kept samples into ks at sample offset pos, converting the trajectory. */
static void copy_acquisition(const mem_head *h, const float *traj, const float *data,
                             const double f[3], int64_t kz_cycles, mr_kspace *ks, int64_t pos)
{
    const int td = h->trajectory_dimensions;
    const int64_t ns = h->number_of_samples, M = ks->nsamples;
    const int64_t q0 = h->discard_pre, q1 = ns - h->discard_post;
    const int is3d = ks->matrix[2] > 1;
    for (int64_t q = q0; q < q1; q++) {
        float *k = ks->traj + 3 * (pos + q - q0);
        k[0] = (float)((double)traj[q * td] * f[0]);
        k[1] = (float)((double)traj[q * td + 1] * f[1]);
        if (td == 3)
            k[2] = is3d ? (float)((double)traj[q * td + 2] * f[2]) : 0.0f;
        else
            k[2] = is3d ? (float)((double)kz_cycles * f[2]) : 0.0f;
    }
    for (int64_t c = 0; c < ks->ncoils; c++)
        memcpy(ks->data + 2 * (c * M + pos), data + 2 * (c * ns + q0), (size_t)(q1 - q0) * 2 * sizeof(float));
}

/* Average identical-trajectory averages in place (shrinks ks); 0 when they are not identical. */
static int combine_averages(mr_kspace *ks, const acq_span *sp, int64_t nacq, int navg)
{
    /* group spans by average, in file order */
    int64_t per = nacq / navg;
    if (per * navg != nacq)
        return 0;
    uint16_t *avgs = malloc((size_t)navg * sizeof *avgs);
    int64_t **lists = calloc((size_t)navg, sizeof *lists);
    int64_t *fill = calloc((size_t)navg, sizeof *fill);
    int ok = avgs && lists && fill;
    int na = 0;
    for (int64_t i = 0; ok && i < nacq; i++) {
        int a = 0;
        while (a < na && avgs[a] != sp[i].average)
            a++;
        if (a == na) {
            if (na == navg) {
                ok = 0;
                break;
            }
            avgs[na] = sp[i].average;
            lists[na] = malloc((size_t)per * sizeof **lists);
            if (!lists[na]) {
                ok = 0;
                break;
            }
            na++;
        }
        if (fill[a] == per) {
            ok = 0;
            break;
        }
        lists[a][fill[a]++] = i;
    }
    ok = ok && na == navg;
    /* the j-th acquisition of every average: same length and bit-identical trajectory */
    for (int64_t j = 0; ok && j < per; j++) {
        const acq_span *s0 = &sp[lists[0][j]];
        for (int a = 1; ok && a < navg; a++) {
            const acq_span *sa = &sp[lists[a][j]];
            ok = sa->count == s0->count &&
                 memcmp(ks->traj + 3 * sa->offset, ks->traj + 3 * s0->offset, (size_t)s0->count * 3 * sizeof(float)) ==
                     0;
        }
    }
    if (ok) {
        /* mean into the first average's samples, then compact in its order */
        const int64_t M = ks->nsamples;
        int64_t out = 0;
        for (int64_t j = 0; j < per; j++) {
            const acq_span *s0 = &sp[lists[0][j]];
            memmove(ks->traj + 3 * out, ks->traj + 3 * s0->offset, (size_t)s0->count * 3 * sizeof(float));
            if (ks->time)
                memmove(ks->time + out, ks->time + s0->offset, (size_t)s0->count * sizeof(float));
            out += s0->count;
        }
        const int64_t M2 = out;
        for (int64_t c = 0; c < ks->ncoils; c++) {
            float *d = ks->data + 2 * c * M;
            float *o = ks->data + 2 * c * M2; /* c * M2 <= c * M: forward compaction is safe */
            int64_t w = 0;
            for (int64_t j = 0; j < per; j++) {
                for (int64_t q = 0; q < sp[lists[0][j]].count; q++) {
                    double re = 0, im = 0;
                    for (int a = 0; a < navg; a++) {
                        const int64_t src = sp[lists[a][j]].offset + q;
                        re += d[2 * src];
                        im += d[2 * src + 1];
                    }
                    o[2 * w] = (float)(re / navg);
                    o[2 * w + 1] = (float)(im / navg);
                    w++;
                }
            }
        }
        ks->nsamples = M2;
    }
    for (int a = 0; lists && a < na; a++)
        free(lists[a]);
    free(lists);
    free(avgs);
    free(fill);
    return ok;
}

static const char *kind_for(const char *traj, int is3d, int stack)
{
    if (!strcmp(traj, "radial") || !strcmp(traj, "goldenangle")) {
        if (stack)
            return "stack-of-stars";
        if (is3d)
            return "kooshball";
        return strcmp(traj, "radial") ? "golden2d" : "radial2d";
    }
    if (!strcmp(traj, "spiral"))
        return stack ? "stack-of-spirals" : (is3d ? "spiral3d" : "spiral2d");
    return NULL;
}

typedef struct {
    mr_kspace *ks;
    acq_span *spans;
    int64_t max_acq, nacq, pos;
    const double *f;
    int64_t e2_center;
    int64_t untimed; /* acquisitions without a sample_time_us > 0 */
} volume_ctx;

/* Readout times of one acquisition's kept samples (docs/FORMAT.md 5, "Readout times"): the header's TE of
 * its contrast (the first TE when there are fewer) + (sample - center_sample) * sample_time_us. */
static void acquisition_times(const mr_mrd_header *hdr, const mem_head *h, float *t, volume_ctx *v)
{
    const double te = 1e-3 * hdr->te_ms[h->idx.contrast < hdr->nte ? h->idx.contrast : 0];
    const double dwell = 1e-6 * (double)h->sample_time_us;
    v->untimed += !(dwell > 0);
    for (int64_t q = h->discard_pre; q < (int64_t)h->number_of_samples - h->discard_post; q++)
        t[q - h->discard_pre] = (float)(te + (double)(q - h->center_sample) * dwell);
}

static mr_status volume_record(mr_ismrmrd *r, int64_t acq, const mem_head *h, const hvl_t *traj, const hvl_t *data,
                               void *ctx)
{
    volume_ctx *v = ctx;
    const int64_t kept = (int64_t)h->number_of_samples - h->discard_pre - h->discard_post;
    if (v->nacq >= v->max_acq || v->pos + kept > v->ks->nsamples)
        return mr_error(MR_EFORMAT, "%s: acquisition %lld disagrees with the headers read before", r->label,
                        (long long)acq);
    copy_acquisition(h, traj->p, data->p, v->f, (int64_t)h->idx.kspace_encode_step_2 - v->e2_center, v->ks, v->pos);
    if (v->ks->time)
        acquisition_times(&r->sum.hdr, h, v->ks->time + v->pos, v);
    v->spans[v->nacq].average = h->idx.average;
    v->spans[v->nacq].offset = v->pos;
    v->spans[v->nacq].count = kept;
    v->nacq++;
    v->pos += kept;
    return MR_OK;
}

mr_status mr_ismrmrd_read_volume(mr_ismrmrd *r, int index, mr_kspace **out)
{
    *out = NULL;
    if (index < 0 || index >= r->nvol)
        return mr_error(MR_EINVAL, "%s: volume %d does not exist (the file holds %d, 0..%d)", r->label, index,
                        r->nvol, r->nvol - 1);
    if (r->dset < 0)
        return mr_error(MR_EINVAL, "%s: volume %d: the index has no file to read from (mr_ismrmrd_attach)", r->label,
                        index);
    const mr_ismrmrd_summary *s = &r->sum;
    const mr_volume_info *vi = &r->vol[index].info;
    const int e = vi->encoding;
    const mr_mrd_encoding *en = &s->hdr.enc[e];
    mr_kspace *ks = NULL;
    mr_status st = mr_kspace_create(&ks, vi->matrix, vi->samples, s->channels);
    if (st != MR_OK)
        return st;
    /* the conversion factor to cycles per FOV of the chosen grid, per axis */
    int64_t nenc[3], nrec[3];
    double fenc[3], frec[3], f[3];
    enc_spaces(r, e, nenc, fenc, nrec, frec);
    for (int a = 0; a < 3; a++) {
        double u = (a == 2 && s->traj_dims == 2) ? 1.0 : unit_factor(s->units[e], nenc[a], fenc[a]);
        double sp = 1.0;
        if (r->opts.space == MR_SPACE_RECON)
            sp = (fenc[a] > 0 && frec[a] > 0) ? frec[a] / fenc[a] : (double)nrec[a] / (double)nenc[a];
        f[a] = u * sp * r->opts.traj_sign;
    }
    const int64_t e2_center = en->limits[MR_LIMIT_E2].present ? en->limits[MR_LIMIT_E2].center : nenc[2] / 2;

    volume_ctx vc = {ks, malloc((size_t)vi->acquisitions * sizeof(acq_span)), vi->acquisitions, 0, 0, f, e2_center, 0};
    acq_span *spans = vc.spans;
    if (s->hdr.nte > 0 && mr_kspace_alloc_time(ks) != MR_OK)
        st = MR_ENOMEM;
    else if (!spans)
        st = mr_error(MR_ENOMEM, "%s: out of memory", r->label);
    else
        st = scan_records(r, index, 1, 1, "trajectory/data", volume_record, &vc);
    const int64_t pos = vc.pos, nacq = vc.nacq;
    if (st == MR_OK && (pos != ks->nsamples || nacq != vi->acquisitions))
        st = mr_error(MR_EFORMAT, "%s: volume %d: read %lld samples of %lld acquisitions, the headers announced %lld "
                                  "of %lld",
                      r->label, index, (long long)pos, (long long)nacq, (long long)ks->nsamples,
                      (long long)vi->acquisitions);
    if (st != MR_OK) {
        free(spans);
        mr_kspace_free(ks);
        return st;
    }
    if (vi->average < 0 && vi->averages > 1) {
        if (combine_averages(ks, spans, nacq, vi->averages))
            mr_log(MR_LOG_INFO, "%s: volume %d: %d averages with identical trajectories averaged (%lld samples)",
                   r->label, index, vi->averages, (long long)ks->nsamples);
        else
            mr_log(MR_LOG_INFO, "%s: volume %d: %d averages with different trajectories pooled (%lld samples)",
                   r->label, index, vi->averages, (long long)ks->nsamples);
    }
    free(spans);
    if (vc.untimed && ks->time) { /* no times rather than wrong ones */
        mr_log(MR_LOG_INFO, "%s: volume %d: %lld acquisitions have no sample_time_us: no readout times", r->label,
               index, (long long)vc.untimed);
        free(ks->time);
        ks->time = NULL;
    }
    memcpy(ks->fov_mm, vi->fov_mm, sizeof ks->fov_mm);
    const char *kind = kind_for(en->trajectory, ks->matrix[2] > 1, s->stack);
    snprintf(ks->traj_kind, sizeof ks->traj_kind, "%s%s", kind ? "" : "ismrmrd-",
             kind ? kind : (en->trajectory[0] ? en->trajectory : "unknown"));
    mr_h5_text_clean(ks->traj_kind); /* the header's text, whatever it holds, as our files store names */
    if (s->noise_cov) {
        /* noise power per complex sample, scaled from the noise scans' to the imaging bandwidth */
        double tr = 0;
        for (int64_t c = 0; c < s->channels; c++)
            tr += s->noise_cov[2 * (c * s->channels + c)];
        double scale = (s->noise_dwell_us > 0 && s->imaging_dwell_us > 0)
                           ? (double)s->noise_dwell_us / (double)s->imaging_dwell_us
                           : 1.0;
        double sigma = sqrt(tr * scale / (2.0 * (double)s->channels));
        double p = 0;
        const int64_t nd = 2 * ks->nsamples * ks->ncoils;
        for (int64_t i = 0; i < nd; i++)
            p += (double)ks->data[i] * ks->data[i];
        p /= (double)(ks->nsamples * ks->ncoils);
        ks->noise_sigma = sigma;
        ks->snr_db = sigma > 0 && p > 0 ? 10 * log10(p / (2 * sigma * sigma)) : 0;
        ks->noise_seed = 0;
    }
    int64_t outside = mr_kspace_count_outside(ks, NULL);
    if (outside > ks->nsamples / 100)
        mr_log(MR_LOG_WARN, "%s: volume %d: %lld of %lld samples lie outside the Nyquist box of the %lldx%lldx%lld "
                            "matrix: check the trajectory units (%s)",
               r->label, index, (long long)outside, (long long)ks->nsamples, (long long)ks->matrix[0],
               (long long)ks->matrix[1], (long long)ks->matrix[2], mr_traj_units_name(s->units[e]));
    *out = ks;
    return MR_OK;
}
