/* Checked HDF5 helpers (see h5util.h). */
#include "h5util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fsutil.h"

void mr_h5_quiet(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

void mr_h5_close(hid_t *id)
{
    if (*id < 0)
        return;
    switch (H5Iget_type(*id)) {
    case H5I_FILE:
        H5Fclose(*id);
        break;
    case H5I_GROUP:
        H5Gclose(*id);
        break;
    case H5I_DATASET:
        H5Dclose(*id);
        break;
    case H5I_ATTR:
        H5Aclose(*id);
        break;
    case H5I_DATATYPE:
        H5Tclose(*id);
        break;
    case H5I_DATASPACE:
        H5Sclose(*id);
        break;
    case H5I_GENPROP_LST:
        H5Pclose(*id);
        break;
    default:
        break;
    }
    *id = H5I_INVALID_HID;
}

/* ---- HDF5's reason for the last failure --------------------------------------------------- */

typedef struct {
    char text[256];
} h5_reason;

static herr_t take_innermost(unsigned n, const H5E_error2_t *err, void *client)
{
    h5_reason *r = client;
    if (n == 0 && err && err->desc)
        snprintf(r->text, sizeof r->text, " (HDF5: %s)", err->desc);
    return 0;
}

/* " (HDF5: <innermost description>)" or "" */
static const char *h5_why(h5_reason *r)
{
    r->text[0] = '\0';
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, take_innermost, r);
    return r->text;
}

/* ---- files -------------------------------------------------------------------------------- */

mr_status mr_h5_open_read(const char *path, hid_t *file)
{
    *file = H5I_INVALID_HID;
    mr_h5_quiet();
    /* stat before opening: opening a FIFO or a device could block */
    struct stat sb;
    if (stat(path, &sb) != 0)
        return mr_error(MR_EIO, "%s: cannot open: %s", path, strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return mr_error(MR_EIO, "%s: not a regular file", path);
    FILE *f = fopen(path, "rb");
    if (!f)
        return mr_error(MR_EIO, "%s: cannot open: %s", path, strerror(errno));
    fclose(f);
    if (sb.st_size == 0)
        return mr_error(MR_EFORMAT, "%s: empty file (0 bytes), not an HDF5 file", path);
    htri_t is = H5Fis_hdf5(path);
    if (is <= 0)
        return mr_error(MR_EFORMAT, "%s: not an HDF5 file (no HDF5 signature)", path);
    hid_t id = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (id < 0) {
        h5_reason r;
        return mr_error(MR_EIO, "%s: HDF5 cannot open the file, damaged or truncated?%s", path, h5_why(&r));
    }
    *file = id;
    return MR_OK;
}

/* Files are built in memory (HDF5's core driver without a backing store) and written out by
 * mr_h5_close_commit with plain stdio: HDF5 itself never writes to the disk. A write that fails on
 * disk (full disk, quota, file-size limit) is then an ordinary fwrite/fsync error with its errno,
 * and no half-closed HDF5 file is left behind: with the sec2 driver a failed H5Fclose left HDF5
 * holding the file, and its exit handler crashed on it (HDF5 1.10, seen on a full disk). */
#define MR_H5_CORE_INCREMENT ((size_t)1 << 20)

mr_status mr_h5_create_tmp(const char *path, char *tmp, size_t tmp_size, hid_t *file)
{
    *file = H5I_INVALID_HID;
    mr_h5_quiet();
    mr_status st = mr_tmp_name(path, tmp, tmp_size);
    if (st != MR_OK)
        return st;
    /* no object timestamps, so the same content always gives the same bytes */
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fcpl >= 0)
        H5Pset_obj_track_times(fcpl, 0);
    const int core = fapl >= 0 && H5Pset_fapl_core(fapl, MR_H5_CORE_INCREMENT, 0) >= 0;
    hid_t id = core ? H5Fcreate(tmp, H5F_ACC_TRUNC, fcpl >= 0 ? fcpl : H5P_DEFAULT, fapl) : H5I_INVALID_HID;
    if (fcpl >= 0)
        H5Pclose(fcpl);
    if (fapl >= 0)
        H5Pclose(fapl);
    if (id < 0) {
        h5_reason r;
        return mr_error(MR_EIO, "%s: cannot create the file in memory%s", path, h5_why(&r));
    }
    *file = id;
    return MR_OK;
}

mr_status mr_h5_close_commit(hid_t file, const char *tmp, const char *path, mr_status st)
{
    (void)tmp; /* mr_write_file derives the same name */
    void *image = NULL;
    ssize_t size = -1;
    if (file >= 0 && st == MR_OK) {
        h5_reason r;
        if (H5Fflush(file, H5F_SCOPE_GLOBAL) < 0 || (size = H5Fget_file_image(file, NULL, 0)) <= 0)
            st = mr_error(MR_EIO, "%s: cannot finish the file in memory%s", path, h5_why(&r));
        else if (!(image = malloc((size_t)size)))
            st = mr_error(MR_ENOMEM, "%s: out of memory for the %lld-byte file", path, (long long)size);
        else if (H5Fget_file_image(file, image, (size_t)size) != size)
            st = mr_error(MR_EIO, "%s: cannot copy the file out of memory%s", path, h5_why(&r));
    }
    if (file >= 0 && H5Fclose(file) < 0 && st == MR_OK) { /* memory only: no I/O can fail here */
        h5_reason r;
        st = mr_error(MR_EIO, "%s: closing the file in memory failed%s", path, h5_why(&r));
    }
    if (st == MR_OK)
        st = mr_write_file(path, image, (size_t)size);
    free(image);
    return st;
}

/* ---- objects ------------------------------------------------------------------------------ */

int mr_h5_exists(hid_t file, const char *path, const char *name)
{
    char buf[256];
    size_t n = strlen(name);
    if (n == 0 || n >= sizeof buf || name[0] != '/') {
        mr_error(MR_EINTERNAL, "%s: bad object name '%s'", path, name);
        return -1;
    }
    memcpy(buf, name, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char c = buf[i];
        buf[i] = '\0';
        htri_t e = H5Lexists(file, buf, H5P_DEFAULT);
        buf[i] = c;
        if (e < 0) {
            h5_reason r;
            mr_error(MR_EIO, "%s: %s: cannot look up%s", path, name, h5_why(&r));
            return -1;
        }
        if (e == 0)
            return 0;
    }
    return 1;
}

mr_status mr_h5_open_group(hid_t file, const char *path, const char *name, hid_t *group)
{
    *group = H5I_INVALID_HID;
    int e = mr_h5_exists(file, path, name);
    if (e < 0)
        return MR_EIO;
    if (e == 0)
        return mr_error(MR_EFORMAT, "%s: %s: group is missing", path, name);
    hid_t g = H5Gopen2(file, name, H5P_DEFAULT);
    if (g < 0)
        return mr_error(MR_EFORMAT, "%s: %s: is not a group", path, name);
    *group = g;
    return MR_OK;
}

static const char *class_name(H5T_class_t c)
{
    switch (c) {
    case H5T_INTEGER:
        return "integer";
    case H5T_FLOAT:
        return "float";
    case H5T_STRING:
        return "string";
    case H5T_COMPOUND:
        return "compound";
    case H5T_ARRAY:
        return "array";
    case H5T_ENUM:
        return "enum";
    case H5T_VLEN:
        return "variable-length";
    default:
        return "non-numeric";
    }
}

/* "dims 3x4x2" into buf */
static void format_dims(char *buf, size_t size, int rank, const hsize_t *dims)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < rank && used < size; i++) {
        int k = snprintf(buf + used, size - used, "%s%llu", i ? "x" : "", (unsigned long long)dims[i]);
        if (k < 0)
            break;
        used += (size_t)k;
    }
}

mr_status mr_h5_open_f32(hid_t file, const char *path, const char *name, int rank, hid_t *dset, hsize_t *dims)
{
    *dset = H5I_INVALID_HID;
    hid_t ds = H5I_INVALID_HID, type = H5I_INVALID_HID, space = H5I_INVALID_HID, dcpl = H5I_INVALID_HID;
    mr_status st = MR_OK;
    int e = mr_h5_exists(file, path, name);
    if (e < 0)
        return MR_EIO;
    if (e == 0)
        return mr_error(MR_EFORMAT, "%s: %s: dataset is missing", path, name);
    ds = H5Dopen2(file, name, H5P_DEFAULT);
    if (ds < 0)
        return mr_error(MR_EFORMAT, "%s: %s: is not a dataset", path, name);
    type = H5Dget_type(ds);
    if (type < 0) {
        st = mr_error(MR_EFORMAT, "%s: %s: unreadable datatype", path, name);
        goto done;
    }
    H5T_class_t cls = H5Tget_class(type);
    size_t tsize = H5Tget_size(type);
    if (cls != H5T_FLOAT || tsize != 4) {
        st = mr_error(MR_EFORMAT, "%s: %s: datatype is %zu-byte %s, expected 4-byte float (float32)", path, name,
                      tsize, class_name(cls));
        goto done;
    }
    space = H5Dget_space(ds);
    if (space < 0 || H5Sget_simple_extent_type(space) != H5S_SIMPLE) {
        st = mr_error(MR_EFORMAT, "%s: %s: has a scalar or empty dataspace, expected rank %d", path, name, rank);
        goto done;
    }
    int r = H5Sget_simple_extent_ndims(space);
    if (r != rank) {
        st = mr_error(MR_EFORMAT, "%s: %s: has rank %d, expected %d", path, name, r, rank);
        goto done;
    }
    H5Sget_simple_extent_dims(space, dims, NULL);
    uint64_t count = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 1) {
            char d[96];
            format_dims(d, sizeof d, rank, dims);
            st = mr_error(MR_EFORMAT, "%s: %s: has an empty dimension (dims %s)", path, name, d);
            goto done;
        }
        if (dims[i] > ((uint64_t)1 << 40) || count > ((uint64_t)1 << 62) / dims[i]) {
            st = mr_error(MR_EFORMAT, "%s: %s: absurd dimension %llu", path, name, (unsigned long long)dims[i]);
            goto done;
        }
        count *= dims[i];
    }
    dcpl = H5Dget_create_plist(ds);
    if (dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CONTIGUOUS) {
        hsize_t stored = H5Dget_storage_size(ds);
        if (stored != count * 4) {
            char d[96];
            format_dims(d, sizeof d, rank, dims);
            st = mr_error(MR_EFORMAT, "%s: %s: declares %s float32 values (%llu bytes) but the file stores %llu bytes",
                          path, name, d, (unsigned long long)(count * 4), (unsigned long long)stored);
            goto done;
        }
    }
done:
    mr_h5_close(&dcpl);
    mr_h5_close(&space);
    mr_h5_close(&type);
    if (st != MR_OK)
        mr_h5_close(&ds);
    *dset = ds;
    return st;
}

int64_t mr_h5_first_nonfinite(const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return (int64_t)i;
    return -1;
}

void mr_h5_format_index(char *buf, size_t size, int64_t flat, int rank, const hsize_t *dims)
{
    int64_t idx[MR_H5_MAX_RANK] = {0};
    for (int i = rank - 1; i >= 0; i--) {
        idx[i] = flat % (int64_t)dims[i];
        flat /= (int64_t)dims[i];
    }
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < rank && used < size; i++) {
        int k = snprintf(buf + used, size - used, "[%lld]", (long long)idx[i]);
        if (k < 0)
            break;
        used += (size_t)k;
    }
}

mr_status mr_h5_read_f32(hid_t dset, const char *path, const char *name, int rank, const hsize_t *dims, float *buf)
{
    size_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= (size_t)dims[i];
    if (H5Dread(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        h5_reason r;
        return mr_error(MR_EIO, "%s: %s: read failed%s", path, name, h5_why(&r));
    }
    int64_t bad = mr_h5_first_nonfinite(buf, n);
    if (bad >= 0) {
        char at[96];
        mr_h5_format_index(at, sizeof at, bad, rank, dims);
        return mr_error(MR_EFORMAT, "%s: %s: non-finite value %g at %s (flat index %lld)", path, name,
                        (double)buf[bad], at, (long long)bad);
    }
    return MR_OK;
}

mr_status mr_h5_write_f32(hid_t loc, const char *path, const char *name, int rank, const hsize_t *dims,
                          const float *buf)
{
    mr_status st = MR_OK;
    hid_t space = H5Screate_simple(rank, dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (dcpl >= 0)
        H5Pset_obj_track_times(dcpl, 0); /* reproducible bytes */
    hid_t ds = space < 0 ? H5I_INVALID_HID
                         : H5Dcreate2(loc, name, H5T_IEEE_F32LE, space, H5P_DEFAULT,
                                      dcpl >= 0 ? dcpl : H5P_DEFAULT, H5P_DEFAULT);
    mr_h5_close(&dcpl);
    if (ds < 0 || H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        h5_reason r;
        st = mr_error(MR_EIO, "%s: %s: write failed%s", path, name, h5_why(&r));
    }
    mr_h5_close(&ds);
    mr_h5_close(&space);
    return st;
}

/* ---- attributes --------------------------------------------------------------------------- */

/* Open attribute `attr` if it exists: 1 opened, 0 absent, -1 error recorded. */
static int open_attr(hid_t obj, const char *path, const char *objname, const char *attr, hid_t *a)
{
    *a = H5I_INVALID_HID;
    htri_t e = H5Aexists(obj, attr);
    if (e < 0) {
        h5_reason r;
        mr_error(MR_EIO, "%s: %s attribute '%s': cannot look up%s", path, objname, attr, h5_why(&r));
        return -1;
    }
    if (e == 0)
        return 0;
    *a = H5Aopen(obj, attr, H5P_DEFAULT);
    if (*a < 0) {
        h5_reason r;
        mr_error(MR_EIO, "%s: %s attribute '%s': cannot open%s", path, objname, attr, h5_why(&r));
        return -1;
    }
    return 1;
}

/* Open attribute `attr` with its type and dataspace. Absent: an error when required (present is
 * NULL), else MR_OK with *a < 0. The caller closes *space, *type and *a. */
static mr_status attr_begin(hid_t obj, const char *path, const char *objname, const char *attr, int *present,
                            hid_t *a, hid_t *type, hid_t *space)
{
    *type = *space = H5I_INVALID_HID;
    if (present)
        *present = 0;
    int o = open_attr(obj, path, objname, attr, a);
    if (o < 0)
        return MR_EIO;
    if (o == 0)
        return present ? MR_OK : mr_error(MR_EFORMAT, "%s: %s attribute '%s' is missing", path, objname, attr);
    *type = H5Aget_type(*a);
    *space = H5Aget_space(*a);
    return MR_OK;
}

mr_status mr_h5_attr_read(hid_t obj, const char *path, const char *objname, const char *attr, H5T_class_t cls,
                          hid_t memtype, void *buf, int n, int *present)
{
    hid_t a, type, space;
    mr_status st = attr_begin(obj, path, objname, attr, present, &a, &type, &space);
    if (st != MR_OK || a < 0)
        return st;
    H5T_class_t c = type < 0 ? H5T_NO_CLASS : H5Tget_class(type);
    if (c != cls) {
        st = mr_error(MR_EFORMAT, "%s: %s attribute '%s' is of class %s, expected %s", path, objname, attr,
                      class_name(c), class_name(cls));
        goto done;
    }
    hssize_t npts = space < 0 ? -1 : H5Sget_simple_extent_npoints(space);
    int rank = space < 0 ? -1 : H5Sget_simple_extent_ndims(space);
    if (npts != n || rank > 1) {
        st = mr_error(MR_EFORMAT, "%s: %s attribute '%s' has %lld elements (rank %d), expected %d", path, objname, attr,
                      (long long)npts, rank, n);
        goto done;
    }
    if (H5Aread(a, memtype, buf) < 0) {
        h5_reason r;
        st = mr_error(MR_EFORMAT, "%s: %s attribute '%s': cannot read or convert%s", path, objname, attr,
                      h5_why(&r));
        goto done;
    }
    if (present)
        *present = 1;
done:
    mr_h5_close(&space);
    mr_h5_close(&type);
    mr_h5_close(&a);
    return st;
}

mr_status mr_h5_attr_read_string(hid_t obj, const char *path, const char *objname, const char *attr, char *buf,
                                 size_t size, int *present)
{
    hid_t a, type, space, mem = H5I_INVALID_HID;
    char *text = NULL;
    int vlen = 0;
    mr_status st = attr_begin(obj, path, objname, attr, present, &a, &type, &space);
    if (st != MR_OK || a < 0)
        return st;
    if (type < 0 || H5Tget_class(type) != H5T_STRING) {
        st = mr_error(MR_EFORMAT, "%s: %s attribute '%s' is not a string", path, objname, attr);
        goto done;
    }
    if (space < 0 || H5Sget_simple_extent_npoints(space) != 1) {
        st = mr_error(MR_EFORMAT, "%s: %s attribute '%s' is not a single string", path, objname, attr);
        goto done;
    }
    vlen = H5Tis_variable_str(type) > 0;
    mem = H5Tcopy(H5T_C_S1);
    if (vlen) {
        H5Tset_size(mem, H5T_VARIABLE);
        if (H5Aread(a, mem, &text) < 0) {
            st = mr_error(MR_EFORMAT, "%s: %s attribute '%s': cannot read", path, objname, attr);
            goto done;
        }
    } else {
        size_t len = H5Tget_size(type);
        if (len > 65536) {
            st = mr_error(MR_EFORMAT, "%s: %s attribute '%s' is %zu bytes long", path, objname, attr, len);
            goto done;
        }
        text = calloc(len + 1, 1);
        if (!text) {
            st = mr_error(MR_ENOMEM, "%s: out of memory", path);
            goto done;
        }
        H5Tset_size(mem, len);
        H5Tset_strpad(mem, H5T_STR_NULLPAD);
        if (H5Aread(a, mem, text) < 0) {
            st = mr_error(MR_EFORMAT, "%s: %s attribute '%s': cannot read", path, objname, attr);
            goto done;
        }
    }
    size_t len = text ? strlen(text) : 0;
    if (len >= size) {
        st = mr_error(MR_EFORMAT, "%s: %s attribute '%s' is %zu characters, longer than %zu", path, objname, attr,
                      len, size - 1);
        goto done;
    }
    memcpy(buf, text ? text : "", len + 1);
    if (present)
        *present = 1;
done:
    if (vlen)
        H5free_memory(text);
    else
        free(text);
    mr_h5_close(&mem);
    mr_h5_close(&space);
    mr_h5_close(&type);
    mr_h5_close(&a);
    return st;
}

mr_status mr_h5_attr_write(hid_t obj, const char *path, const char *attr, hid_t filetype, hid_t memtype,
                           const void *buf, int n)
{
    hsize_t dims[1] = {(hsize_t)n};
    hid_t space = n > 0 ? H5Screate_simple(1, dims, NULL) : H5Screate(H5S_SCALAR);
    hid_t a = space < 0 ? H5I_INVALID_HID : H5Acreate2(obj, attr, filetype, space, H5P_DEFAULT, H5P_DEFAULT);
    mr_status st = MR_OK;
    if (a < 0 || H5Awrite(a, memtype, buf) < 0) {
        h5_reason r;
        st = mr_error(MR_EIO, "%s: attribute '%s': write failed%s", path, attr, h5_why(&r));
    }
    mr_h5_close(&a);
    mr_h5_close(&space);
    return st;
}

mr_status mr_h5_attr_write_string(hid_t obj, const char *path, const char *attr, const char *s)
{
    hid_t type = H5Tcopy(H5T_C_S1);
    mr_status st = MR_OK;
    if (type < 0 || H5Tset_size(type, strlen(s) ? strlen(s) : 1) < 0 || H5Tset_strpad(type, H5T_STR_NULLPAD) < 0)
        st = mr_error(MR_EIO, "%s: attribute '%s': cannot make a string type", path, attr);
    else
        st = mr_h5_attr_write(obj, path, attr, type, type, s, 0);
    mr_h5_close(&type);
    return st;
}

hid_t mr_h5_create_group(hid_t file, const char *name)
{
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
    if (gcpl >= 0)
        H5Pset_obj_track_times(gcpl, 0); /* reproducible bytes */
    hid_t g = H5Gcreate2(file, name, H5P_DEFAULT, gcpl >= 0 ? gcpl : H5P_DEFAULT, H5P_DEFAULT);
    mr_h5_close(&gcpl);
    return g;
}
