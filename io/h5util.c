/* Checked HDF5 helpers (see h5util.h): the generic part. This file owns HDF5's error reporting
 * (quiet, the reason for the last failure), opening files for reading (from a descriptor, a path or
 * memory), creating files in memory and committing them to disk, objects (links, groups), float32
 * datasets and the checksum promise of our own files. The rest of h5util.h is implemented in
 * io/h5_child.c (reading in a child process), io/h5_check.c (the dataset safety check),
 * io/h5_read.c (reading dataset values: the filter decoder, deferred reads) and io/h5_attr.c
 * (attributes and their text); what they share is in io/h5util_internal.h. */
#include "h5util.h"
#include "h5util_internal.h"

#include <H5PLpublic.h>
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/parallel.h"
#include "fsutil.h"

void mr_h5_quiet(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

/* Before a reader opens a file: quiet errors, and never load a filter plugin (a hostile file could
 * name any filter id, and HDF5 would search its plugin path for a library to load; we decode the
 * few filters we accept ourselves, mr_h5_dataset_read). */
static void harden(void)
{
    mr_h5_quiet();
    H5PLset_loading_state(0);
}

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

static herr_t take_innermost(unsigned n, const H5E_error2_t *err, void *client)
{
    h5_reason *r = client;
    if (n == 0 && err && err->desc)
        snprintf(r->text, sizeof r->text, " (HDF5: %s)", err->desc);
    return 0;
}

/* " (HDF5: <innermost description>)" or "" */
const char *h5_why(h5_reason *r)
{
    r->text[0] = '\0';
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, take_innermost, r);
    return r->text;
}

const char *mr_h5_why(char *buf, size_t size)
{
    h5_reason r;
    snprintf(buf, size, "%s", h5_why(&r));
    return buf;
}

/* ---- files -------------------------------------------------------------------------------- */

/* HDF5 looks for the superblock at offset 0, 512, 1024, 2048, ... : 1 when the file at fd has it */
static int fd_has_signature(int fd, uint64_t size)
{
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    unsigned char b[8];
    for (uint64_t at = 0; at + 8 <= size; at = at ? 2 * at : 512)
        if (pread(fd, b, 8, (off_t)at) == 8 && memcmp(b, sig, 8) == 0)
            return 1;
    return 0;
}

static mr_status open_unlinked(int fd, const char *label, uint64_t size, hid_t *file)
{
    if (size > SIZE_MAX / 2)
        return mr_error(MR_ENOMEM, "%s: too large to read into memory", label);
    unsigned char *buf = malloc((size_t)size);
    if (!buf)
        return mr_error(MR_ENOMEM, "%s: out of memory for the %llu-byte file (removed from its folder, so read into "
                                   "memory)",
                        label, (unsigned long long)size);
    size_t got = 0;
    while (got < size) {
        const ssize_t r = pread(fd, buf + got, (size_t)size - got, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    mr_status st = got == size ? mr_h5_open_memory(buf, (size_t)size, label, file)
                               : mr_error(MR_EIO, "%s: read failed: %s", label, errno ? strerror(errno) : "short read");
    free(buf); /* libhdf5 has its own copy */
    return st;
}

mr_status mr_h5_open_fd(int fd, const char *label, hid_t *file)
{
    *file = H5I_INVALID_HID;
    harden();
    struct stat sb;
    if (fstat(fd, &sb) != 0)
        return mr_error(MR_EIO, "%s: cannot open: %s", label, strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return mr_error(MR_EIO, "%s: not a regular file", label);
    if (sb.st_size == 0)
        return mr_error(MR_EFORMAT, "%s: empty file (0 bytes), not an HDF5 file", label);
    if (!fd_has_signature(fd, (uint64_t)sb.st_size))
        return mr_error(MR_EFORMAT, "%s: not an HDF5 file (no HDF5 signature)", label);
    /* libhdf5 opens by name, and resolves the name (realpath) first: the descriptor's own name
     * (/proc/self/fd/N), which is this very file whatever became of its path since. A file whose name
     * is gone (renamed over, removed) cannot be resolved: libhdf5 gets its bytes instead (read through
     * the descriptor, opened in memory). Without /proc: the path, after checking it names the file. */
    char name[64], *real = NULL;
    snprintf(name, sizeof name, "/proc/self/fd/%d", fd);
    struct stat byname;
    const char *open_as = name;
    if (stat(name, &byname) == 0 && byname.st_ino == sb.st_ino && byname.st_dev == sb.st_dev) {
        real = realpath(name, NULL);
        const int resolves = real && stat(real, &byname) == 0 && byname.st_ino == sb.st_ino && byname.st_dev == sb.st_dev;
        free(real);
        if (!resolves)
            return open_unlinked(fd, label, (uint64_t)sb.st_size, file);
    } else {
        if (stat(label, &byname) != 0 || byname.st_ino != sb.st_ino || byname.st_dev != sb.st_dev)
            return mr_error(MR_EIO, "%s: the file was replaced while it was being opened", label);
        open_as = label;
    }
    hid_t id = H5Fopen(open_as, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (id < 0) {
        h5_reason r;
        return mr_error(MR_EIO, "%s: HDF5 cannot open the file, damaged or truncated?%s", label, h5_why(&r));
    }
    *file = id;
    return MR_OK;
}

mr_status mr_h5_open_read(const char *path, hid_t *file)
{
    *file = H5I_INVALID_HID;
    int fd;
    mr_status st = mr_file_open_private(path, &fd);
    if (st != MR_OK)
        return st;
    st = mr_h5_open_fd(fd, path, file);
    close(fd); /* libhdf5 has its own descriptor of the same file */
    return st;
}

/* HDF5 looks for the superblock at offset 0, 512, 1024, 2048, ... */
static int has_signature(const unsigned char *b, size_t size)
{
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    for (size_t at = 0; at + 8 <= size; at = at ? 2 * at : 512)
        if (memcmp(b + at, sig, 8) == 0)
            return 1;
    return 0;
}

mr_status mr_h5_open_memory(const void *buf, size_t size, const char *name, hid_t *file)
{
    /* The core driver refuses a file image whose name exists on disk (it checks by opening it), and
     * it identifies open files by name: a unique name below /dev/null can never exist. */
    static atomic_ulong serial;
    *file = H5I_INVALID_HID;
    harden();
    if (!buf || size == 0)
        return mr_error(MR_EFORMAT, "%s: empty file (0 bytes), not an HDF5 file", name);
    if (!has_signature(buf, size))
        return mr_error(MR_EFORMAT, "%s: not an HDF5 file (no HDF5 signature)", name);
    char image[64];
    snprintf(image, sizeof image, "/dev/null/mrirecon-image-%lu", (unsigned long)atomic_fetch_add(&serial, 1));
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    hid_t id = H5I_INVALID_HID;
    if (fapl >= 0 && H5Pset_fapl_core(fapl, 1 << 16, 0) >= 0 && H5Pset_file_image(fapl, (void *)buf, size) >= 0)
        id = H5Fopen(image, H5F_ACC_RDONLY, fapl);
    mr_h5_close(&fapl);
    if (id < 0) {
        h5_reason r;
        return mr_error(MR_EIO, "%s: HDF5 cannot open the file, damaged or truncated?%s", name, h5_why(&r));
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

static const char *link_kind(H5L_type_t t)
{
    switch (t) {
    case H5L_TYPE_SOFT:
        return "a soft";
    case H5L_TYPE_EXTERNAL:
        return "an external";
    default:
        return "a user-defined";
    }
}

/* A refused link: its kind and, for soft and external links, where it points. */
static mr_status refuse_link(hid_t file, const char *path, const char *name, const H5L_info_t *li)
{
    char target[300] = "";
    if ((li->type == H5L_TYPE_SOFT || li->type == H5L_TYPE_EXTERNAL) && li->u.val_size > 0 &&
        li->u.val_size < 256) {
        char val[256];
        const char *efile = NULL, *eobj = NULL;
        unsigned flags;
        if (H5Lget_val(file, name, val, sizeof val, H5P_DEFAULT) >= 0) {
            val[sizeof val - 1] = '\0';
            if (li->type == H5L_TYPE_SOFT)
                snprintf(target, sizeof target, " to '%.256s'", val);
            else if (H5Lunpack_elink_val(val, li->u.val_size, &flags, &efile, &eobj) >= 0 && efile && eobj)
                snprintf(target, sizeof target, " to '%.120s:%.120s'", efile, eobj);
        }
    }
    return mr_error(MR_EFORMAT, "%s: %s: is %s link%s; only hard links inside the file are followed", path, name,
                    link_kind(li->type), target);
}

mr_status mr_h5_lookup(hid_t file, const char *path, const char *name, int *present)
{
    char buf[256];
    size_t n = strlen(name);
    *present = 0;
    if (n == 0 || n >= sizeof buf || name[0] != '/')
        return mr_error(MR_EINTERNAL, "%s: bad object name '%s'", path, name);
    memcpy(buf, name, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char c = buf[i];
        buf[i] = '\0';
        /* buf is the prefix up to this component; its parents were checked to be hard links to
         * groups, so H5Lexists follows only those */
        htri_t e = H5Lexists(file, buf, H5P_DEFAULT);
        H5L_info_t li;
        if (e > 0 && H5Lget_info(file, buf, &li, H5P_DEFAULT) < 0)
            e = -1;
        if (e < 0) {
            h5_reason r;
            return mr_error(MR_EIO, "%s: %s: cannot look up%s", path, buf, h5_why(&r));
        }
        if (e == 0)
            return MR_OK;
        if (li.type != H5L_TYPE_HARD)
            return refuse_link(file, path, buf, &li);
        if (c == '/') {
            H5O_info_t oi;
            if (H5Oget_info_by_name2(file, buf, &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0 || oi.type != H5O_TYPE_GROUP)
                return mr_error(MR_EFORMAT, "%s: %s: is not a group (looking up %s)", path, buf, name);
        }
        buf[i] = c;
    }
    *present = 1;
    return MR_OK;
}

int mr_h5_exists(hid_t file, const char *path, const char *name)
{
    int present;
    return mr_h5_lookup(file, path, name, &present) == MR_OK ? present : -1;
}

mr_status mr_h5_open_group(hid_t file, const char *path, const char *name, hid_t *group)
{
    *group = H5I_INVALID_HID;
    int present;
    mr_status st = mr_h5_lookup(file, path, name, &present);
    if (st != MR_OK)
        return st;
    if (!present)
        return mr_error(MR_EFORMAT, "%s: %s: group is missing", path, name);
    hid_t g = H5Gopen2(file, name, H5P_DEFAULT);
    if (g < 0)
        return mr_error(MR_EFORMAT, "%s: %s: is not a group", path, name);
    *group = g;
    return MR_OK;
}

const char *h5_class_name(H5T_class_t c)
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

/* dims as "3x4x2" (brackets 0) or a position as "[0][64][0]" (brackets 1) into buf */
void h5_format_list(char *buf, size_t size, int rank, const hsize_t *v, int brackets)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < rank && used < size; i++) {
        unsigned long long x = v[i];
        int k = brackets ? snprintf(buf + used, size - used, "[%llu]", x)
                         : snprintf(buf + used, size - used, "%s%llu", i ? "x" : "", x);
        if (k < 0)
            break;
        used += (size_t)k;
    }
}

void h5_format_dims(char *buf, size_t size, int rank, const hsize_t *dims) { h5_format_list(buf, size, rank, dims, 0); }

hid_t mr_h5_array_type(hid_t base, hsize_t n) { return H5Tarray_create2(base, 1, &n); }

hid_t mr_h5_create_group(hid_t file, const char *name)
{
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
    if (gcpl >= 0)
        H5Pset_obj_track_times(gcpl, 0); /* reproducible bytes */
    hid_t g = H5Gcreate2(file, name, H5P_DEFAULT, gcpl >= 0 ? gcpl : H5P_DEFAULT, H5P_DEFAULT);
    mr_h5_close(&gcpl);
    return g;
}

/* ---- float32 datasets ----------------------------------------------------------------------- */

mr_status mr_h5_open_f32(hid_t file, const char *path, const char *name, int rank, hid_t *dset, hsize_t *dims)
{
    *dset = H5I_INVALID_HID;
    hid_t ds = H5I_INVALID_HID, type = H5I_INVALID_HID;
    int present;
    mr_status st = mr_h5_lookup(file, path, name, &present);
    if (st != MR_OK)
        return st;
    if (!present)
        return mr_error(MR_EFORMAT, "%s: %s: dataset is missing", path, name);
    ds = H5Dopen2(file, name, H5P_DEFAULT);
    if (ds < 0)
        return mr_error(MR_EFORMAT, "%s: %s: is not a dataset", path, name);
    /* the datatype first (it names the most likely mistake), then the storage */
    type = H5Dget_type(ds);
    H5T_class_t cls = type < 0 ? H5T_NO_CLASS : H5Tget_class(type);
    size_t tsize = type < 0 ? 0 : H5Tget_size(type);
    if (cls != H5T_FLOAT || tsize != 4) {
        st = mr_error(MR_EFORMAT, "%s: %s: datatype is %zu-byte %s, expected 4-byte float (float32)", path, name,
                      tsize, h5_class_name(cls));
        goto done;
    }
    if (H5Tequal(type, H5T_IEEE_F32LE) <= 0 && H5Tequal(type, H5T_IEEE_F32BE) <= 0) {
        st = mr_error(MR_EFORMAT, "%s: %s: datatype is a 4-byte float but not IEEE binary32", path, name);
        goto done;
    }
    mr_h5_dataset_info info;
    if ((st = mr_h5_dataset_check(ds, path, name, &info)) != MR_OK)
        goto done;
    if (info.rank != rank) {
        st = info.rank == 0 ? mr_error(MR_EFORMAT, "%s: %s: has a scalar dataspace, expected rank %d", path, name, rank)
                            : mr_error(MR_EFORMAT, "%s: %s: has rank %d, expected %d", path, name, info.rank, rank);
        goto done;
    }
    memcpy(dims, info.dims, (size_t)rank * sizeof *dims);
done:
    mr_h5_close(&type);
    if (st != MR_OK)
        mr_h5_close(&ds);
    *dset = ds;
    return st;
}

/* Blocks of 64 Ki values scanned on several threads, each keeping the first index it met. */
typedef struct {
    const float *v;
    size_t n;
    int64_t first[MR_PAR_MAX_THREADS];
} nonfinite_job;

static int nonfinite_block(void *ctx, int64_t b, int slot)
{
    nonfinite_job *j = ctx;
    const size_t end = (size_t)(b + 1) * 65536 < j->n ? (size_t)(b + 1) * 65536 : j->n;
    for (size_t i = (size_t)b * 65536; i < end; i++)
        if (!isfinite(j->v[i])) {
            j->first[slot] = (int64_t)i < j->first[slot] ? (int64_t)i : j->first[slot];
            break;
        }
    return 0;
}

int64_t mr_h5_first_nonfinite(const float *v, size_t n)
{
    if (n < ((size_t)1 << 20)) {
        for (size_t i = 0; i < n; i++)
            if (!isfinite(v[i]))
                return (int64_t)i;
        return -1;
    }
    nonfinite_job j = {v, n, {0}};
    for (int t = 0; t < MR_PAR_MAX_THREADS; t++)
        j.first[t] = INT64_MAX;
    const int nth = mr_par_for((int64_t)((n + 65535) / 65536), 16, nonfinite_block, &j);
    int64_t first = INT64_MAX;
    for (int t = 0; t < nth; t++)
        first = j.first[t] < first ? j.first[t] : first;
    return first == INT64_MAX ? -1 : first;
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
    uint64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= dims[i];
    mr_h5_dataset_info info;
    mr_status st = mr_h5_dataset_check(dset, path, name, &info);
    if (st != MR_OK)
        return st;
    if (info.npoints != n)
        return mr_error(MR_EINTERNAL, "%s: %s: %llu values, the caller expects %llu", path, name,
                        (unsigned long long)info.npoints, (unsigned long long)n);
    if ((st = mr_h5_dataset_read(dset, &info, path, name, H5T_NATIVE_FLOAT, buf)) != MR_OK)
        return st;
    if (mr_h5_deferred(buf))
        return MR_OK; /* read, and checked, by the parent (mr_h5_recv_plan) */
    int64_t bad = mr_h5_first_nonfinite(buf, (size_t)n);
    if (bad >= 0) {
        char at[96];
        mr_h5_format_index(at, sizeof at, bad, rank, dims);
        return mr_error(MR_EFORMAT, "%s: %s: non-finite value %g at %s (flat index %lld)", path, name,
                        (double)buf[bad], at, (long long)bad);
    }
    return MR_OK;
}

/* Chunk dims of at most MR_H5_WRITE_CHUNK_BYTES (one chunk when the whole dataset fits): the leading
 * dimensions cut, the trailing ones whole as far as they fit. */
static void write_chunk_dims(int rank, const hsize_t *dims, size_t elem, hsize_t *chunk)
{
    uint64_t inner = elem; /* bytes of dims[i+1..] */
    for (int i = rank - 1; i >= 0; i--) {
        if (inner * dims[i] <= MR_H5_WRITE_CHUNK_BYTES) {
            chunk[i] = dims[i];
            inner *= dims[i];
            continue;
        }
        const uint64_t fit = MR_H5_WRITE_CHUNK_BYTES / inner;
        chunk[i] = fit >= 1 ? (hsize_t)fit : 1;
        for (int j = i - 1; j >= 0; j--)
            chunk[j] = 1;
        return;
    }
}

mr_status mr_h5_write_f32(hid_t loc, const char *path, const char *name, int rank, const hsize_t *dims,
                          const float *buf)
{
    mr_status st = MR_OK;
    hid_t space = H5Screate_simple(rank, dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hsize_t chunk[MR_H5_MAX_RANK];
    write_chunk_dims(rank, dims, sizeof(float), chunk);
    /* reproducible bytes (no timestamps); chunks with HDF5's fletcher32 checksum, which our reader
     * verifies (mr_h5_dataset_read): a damaged file of ours is refused, not read as other numbers */
    if (dcpl < 0 || H5Pset_obj_track_times(dcpl, 0) < 0 || H5Pset_chunk(dcpl, rank, chunk) < 0 ||
        H5Pset_fletcher32(dcpl) < 0) {
        mr_h5_close(&dcpl);
        mr_h5_close(&space);
        h5_reason r;
        return mr_error(MR_EIO, "%s: %s: cannot set up the dataset's storage%s", path, name, h5_why(&r));
    }
    hid_t ds = space < 0 ? H5I_INVALID_HID : H5Dcreate2(loc, name, H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    mr_h5_close(&dcpl);
    if (ds < 0 || H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        h5_reason r;
        st = mr_error(MR_EIO, "%s: %s: write failed%s", path, name, h5_why(&r));
    }
    mr_h5_close(&ds);
    mr_h5_close(&space);
    return st;
}

#define CHECKSUM_ATTR "checksum"
#define CHECKSUM_KIND "fletcher32"

mr_status mr_h5_promise_checksums(hid_t obj, const char *path)
{
    return mr_h5_attr_write_string(obj, path, CHECKSUM_ATTR, CHECKSUM_KIND);
}

mr_status mr_h5_checksums_promised(hid_t obj, const char *path, const char *objname, int *promised)
{
    char kind[32];
    int have = 0;
    *promised = 0;
    mr_status st = mr_h5_attr_read_string(obj, path, objname, CHECKSUM_ATTR, kind, sizeof kind, &have);
    if (st != MR_OK)
        return st;
    if (have && strcmp(kind, CHECKSUM_KIND) != 0)
        return mr_error(MR_EFORMAT, "%s: %s attribute '%s' is '%s', expected '%s'", path, objname, CHECKSUM_ATTR, kind,
                        CHECKSUM_KIND);
    *promised = have;
    return MR_OK;
}

mr_status mr_h5_require_checksum(hid_t ds, const char *path, const char *name)
{
    hid_t dcpl = H5Dget_create_plist(ds);
    unsigned flags = 0, cd[4];
    size_t ncd = 4;
    const int has = dcpl >= 0 && H5Pget_filter_by_id2(dcpl, H5Z_FILTER_FLETCHER32, &flags, &ncd, cd, 0, NULL, NULL) >= 0;
    mr_h5_close(&dcpl);
    if (!has)
        return mr_error(MR_EFORMAT, "%s: %s: stored without its fletcher32 checksum, although the file promises one "
                                    "for every dataset (damaged)",
                        path, name);
    return MR_OK;
}
