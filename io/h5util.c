/* Checked HDF5 helpers (see h5util.h). */
#include "h5util.h"

#include <H5PLpublic.h>
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "../base/child.h"
#include "../base/log.h"
#include "../base/memory.h"
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

/* ---- reading in a child, the result streamed back ------------------------------------------ */

/* What the child says first: a result follows (the reader's own stream, mr_h5_isolated.send), or the
 * end with the reader's status and message. */
#define FRAME_MAGIC 0x3548524du /* "MRH5" */
enum { FRAME_RESULT = 1, FRAME_END = 2 };
typedef struct {
    uint32_t magic, kind;
    int32_t status;
    uint32_t message_bytes; /* FRAME_END: the message follows */
} frame;

typedef struct {
    int fd;
    const char *label;
    const mr_h5_isolated *how;
    void *ctx;
    int complete; /* the parent got a whole answer (a result, or the end) */
} isolated_job;

/* In the child: open, read, and stream the result (or the refusal) to the parent. */
static void isolated_child(void *arg, int out)
{
    isolated_job *j = arg;
    hid_t file;
    mr_h5_defer(j->how->deferrable);
    mr_status st = mr_h5_open_fd(j->fd, j->label, &file);
    if (st == MR_OK) {
        st = j->how->read(file, j->label, j->ctx);
        mr_h5_close(&file);
    }
    frame f = {FRAME_MAGIC, st == MR_OK ? FRAME_RESULT : FRAME_END, (int32_t)st, 0};
    if (st == MR_OK) {
        if (mr_pipe_put(out, &f, sizeof f) == MR_OK)
            j->how->send(j->ctx, out);
        return;
    }
    const char *msg = mr_last_error()[0] ? mr_last_error() : mr_strerror(st);
    f.message_bytes = (uint32_t)strlen(msg);
    if (mr_pipe_put(out, &f, sizeof f) == MR_OK)
        mr_pipe_put(out, msg, f.message_bytes);
}

/* Here: the child's answer. A stream that ends early leaves j->complete 0 (the caller looks at how the
 * child ended). */
static mr_status isolated_parent(void *arg, int in)
{
    isolated_job *j = arg;
    frame f;
    mr_status st = mr_pipe_get(in, &f, sizeof f);
    if (st != MR_OK)
        return st;
    if (f.magic != FRAME_MAGIC || (f.kind != FRAME_RESULT && f.kind != FRAME_END))
        return mr_error(MR_EINTERNAL, "%s: the reading process sent a damaged answer", j->label);
    if (f.kind == FRAME_RESULT) {
        st = j->how->recv(j->ctx, in, j->fd, j->label);
        j->complete = st == MR_OK;
        return st;
    }
    char *msg = malloc(MR_ERROR_MAX);
    const size_t n = f.message_bytes < MR_ERROR_MAX ? f.message_bytes : MR_ERROR_MAX - 1;
    if (!msg || mr_pipe_get(in, msg, n) != MR_OK) {
        free(msg);
        return mr_error(MR_EINTERNAL, "%s: the reading process sent a damaged answer", j->label);
    }
    msg[n] = '\0';
    j->complete = 1;
    const mr_status code = f.status > 0 && f.status < MR_STATUS_COUNT ? (mr_status)f.status : MR_EFORMAT;
    mr_error(code, "%s", msg);
    free(msg);
    return code;
}

/* The refusal for a child that ended without a whole answer. */
static mr_status child_failed(const char *label, int ws, unsigned cpu_s)
{
    if (WIFSIGNALED(ws)) {
        const int sig = WTERMSIG(ws);
        if (sig == SIGXCPU)
            return mr_error(MR_EFORMAT,
                            "%s: HDF5 did not finish reading the file within %u s of CPU time; damaged or hostile "
                            "file refused",
                            label, cpu_s);
        if (sig == SIGKILL)
            return mr_error(MR_EFORMAT,
                            "%s: the process reading the file was killed (signal 9: out of memory, or over its %u s "
                            "of CPU time); damaged or hostile file refused",
                            label, cpu_s);
        return mr_error(MR_EFORMAT, "%s: HDF5 crashed reading the file (signal %d, %s); damaged or hostile file refused",
                        label, sig, strsignal(sig));
    }
    return mr_error(MR_EFORMAT, "%s: the process reading the file failed (exit status %d); damaged or hostile file refused",
                    label, WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
}

mr_status mr_h5_read_in_child(int fd, const char *label, const mr_h5_isolated *how, void *ctx)
{
    struct stat sb;
    const uint64_t size = fstat(fd, &sb) == 0 && sb.st_size > 0 ? (uint64_t)sb.st_size : 0;
    /* CPU time for the child: generous for a healthy file, finite for a looping libhdf5; memory: what
     * libhdf5 needs for itself and twice the file, plus what the reader allows for the arrays it has
     * checked (mr_child_memory_allow), so that libhdf5 cannot be made to allocate what a hostile size in
     * the file says */
    const mr_child_limits lim = {(unsigned)(120 + 60 * (double)size / (double)(1 << 30)),
                                 MR_H5_CHILD_MEMORY + 2 * size};
    isolated_job job = {fd, label, how, ctx, 0};
    int ws = 0, ran = 0;
    mr_status st = mr_run_in_child_stream(isolated_child, &job, isolated_parent, &job, &lim, &ws, &ran);
    if (!ran) { /* no child (no pipe, no fork): read here */
        hid_t file;
        if ((st = mr_h5_open_fd(fd, label, &file)) == MR_OK) {
            st = how->read(file, label, ctx);
            mr_h5_close(&file);
        }
        return st;
    }
    /* an answer cut short by the child's end (a crash, a limit) is the child's failure; one this process
       refused on its own (the values it read, a damaged stream), or a child that ended well, is not */
    if (!job.complete && !(WIFEXITED(ws) && WEXITSTATUS(ws) == 0))
        return child_failed(label, ws, lim.cpu_seconds);
    return st;
}

mr_status mr_h5_read_path_in_child(const char *path, const mr_h5_isolated *how, void *ctx)
{
    int fd;
    mr_status st = mr_file_open_private(path, &fd);
    if (st != MR_OK)
        return st;
    st = mr_h5_read_in_child(fd, path, how, ctx);
    close(fd);
    return st;
}

/* mr_h5_probe_in_child: the reader's fixed-size result crosses as bytes */
typedef struct {
    mr_h5_reader read;
    void *ctx;
    size_t size;
} probe_job;

static mr_status probe_read(hid_t file, const char *path, void *ctx)
{
    const probe_job *j = ctx;
    return j->read(file, path, j->ctx);
}

static mr_status probe_send(void *ctx, int fd)
{
    const probe_job *j = ctx;
    return mr_pipe_put(fd, j->ctx, j->size);
}

static mr_status probe_recv(void *ctx, int fd, int file_fd, const char *label)
{
    (void)file_fd;
    (void)label;
    const probe_job *j = ctx;
    return mr_pipe_get(fd, j->ctx, j->size);
}

mr_status mr_h5_probe_in_child(const char *path, mr_h5_reader read, void *ctx, size_t size)
{
    static const mr_h5_isolated how = {probe_read, probe_send, probe_recv, 0};
    probe_job j = {read, ctx, size};
    return mr_h5_read_path_in_child(path, &how, &j);
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

/* dims as "3x4x2" (brackets 0) or a position as "[0][64][0]" (brackets 1) into buf */
static void format_list(char *buf, size_t size, int rank, const hsize_t *v, int brackets)
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

static void format_dims(char *buf, size_t size, int rank, const hsize_t *dims) { format_list(buf, size, rank, dims, 0); }

/* ---- the dataset safety check ------------------------------------------------------------ */

#define MAX_ELEMENT_BYTES ((size_t)1 << 20)
#define MAX_PRODUCT ((uint64_t)1 << 62)

/* *out = a * b when it stays within MAX_PRODUCT; 0 otherwise */
static int mul_bounded(uint64_t a, uint64_t b, uint64_t *out)
{
    if (a != 0 && b > MAX_PRODUCT / a)
        return 0;
    *out = a * b;
    return 1;
}

static const char *filter_name(H5Z_filter_t id)
{
    switch (id) {
    case H5Z_FILTER_DEFLATE:
        return "deflate";
    case H5Z_FILTER_SHUFFLE:
        return "shuffle";
    case H5Z_FILTER_FLETCHER32:
        return "fletcher32";
    case H5Z_FILTER_SZIP:
        return "szip";
    case H5Z_FILTER_NBIT:
        return "nbit";
    case H5Z_FILTER_SCALEOFFSET:
        return "scaleoffset";
    default:
        return "a third-party filter";
    }
}

/* The filter pipeline: only deflate, shuffle and fletcher32, each at most once. */
static mr_status check_filters(hid_t dcpl, const char *path, const char *name, mr_h5_dataset_info *info)
{
    int nf = H5Pget_nfilters(dcpl);
    if (nf < 0)
        return mr_error(MR_EFORMAT, "%s: %s: unreadable filter pipeline", path, name);
    for (int i = 0; i < nf; i++) {
        unsigned flags = 0, cd[8] = {0}, config = 0;
        size_t ncd = 8;
        char fname[64] = "";
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof fname, fname, &config);
        if (id < 0)
            return mr_error(MR_EFORMAT, "%s: %s: unreadable filter %d of the pipeline", path, name, i);
        if (id != H5Z_FILTER_DEFLATE && id != H5Z_FILTER_SHUFFLE && id != H5Z_FILTER_FLETCHER32)
            return mr_error(MR_EFORMAT,
                            "%s: %s: compressed with filter %d (%s%s%.40s%s); only deflate, shuffle and "
                            "fletcher32 are read",
                            path, name, (int)id, filter_name(id), fname[0] ? " '" : "", fname, fname[0] ? "'" : "");
        for (int j = 0; j < info->nfilters; j++)
            if (info->filter[j] == id)
                return mr_error(MR_EFORMAT, "%s: %s: the %s filter appears twice in the pipeline", path, name,
                                filter_name(id));
        if (id == H5Z_FILTER_SHUFFLE) {
            if (ncd < 1)
                return mr_error(MR_EFORMAT, "%s: %s: shuffle filter without its element size", path, name);
            info->shuffle_size = cd[0];
        }
        info->filter[info->nfilters++] = id;
    }
    return MR_OK;
}

/* Chunk dims, chunk size and count (chunked layout). */
static mr_status check_chunks(hid_t dcpl, const char *path, const char *name, mr_h5_dataset_info *info)
{
    char d[160];
    int cr = H5Pget_chunk(dcpl, MR_H5_MAX_RANK, info->chunk);
    if (cr != info->rank || cr < 1)
        return mr_error(MR_EFORMAT, "%s: %s: chunks of rank %d for a dataspace of rank %d", path, name, cr,
                        info->rank);
    uint64_t elems = 1, count = 1;
    for (int i = 0; i < cr; i++) {
        uint64_t along = info->chunk[i] ? (info->dims[i] - 1) / info->chunk[i] + 1 : 0;
        if (info->chunk[i] < 1 || !mul_bounded(elems, info->chunk[i], &elems) || !mul_bounded(count, along, &count)) {
            format_dims(d, sizeof d, cr, info->chunk);
            return mr_error(MR_EFORMAT, "%s: %s: impossible chunk dims %s", path, name, d);
        }
    }
    if (!mul_bounded(elems, info->type_size, &info->chunk_bytes) || info->chunk_bytes > MR_H5_MAX_CHUNK_BYTES) {
        format_dims(d, sizeof d, cr, info->chunk);
        return mr_error(MR_EFORMAT, "%s: %s: chunks of %s x %zu bytes exceed the %llu MiB limit", path, name, d,
                        info->type_size, (unsigned long long)(MR_H5_MAX_CHUNK_BYTES >> 20));
    }
    if (count > MR_H5_MAX_CHUNKS)
        return mr_error(MR_EFORMAT, "%s: %s: %llu chunks, more than %llu", path, name, (unsigned long long)count,
                        (unsigned long long)MR_H5_MAX_CHUNKS);
    info->nchunks = count;
    return MR_OK;
}

/* The next chunk origin after `origin` (row-major over the chunk grid); 0 after the last. */
static int next_chunk(const mr_h5_dataset_info *info, hsize_t *origin)
{
    int i = info->rank - 1;
    while (i >= 0 && (origin[i] += info->chunk[i]) >= info->dims[i])
        origin[i--] = 0;
    return i >= 0;
}

/* The stored size of the chunk at `origin` (its position "[0][64]" into at[96]), from libhdf5's chunk
 * lookup, the one H5Dread_chunk uses as well, so that a buffer of this size is what H5Dread_chunk writes
 * into (a damaged index can give a chunk another size in libhdf5's other way to find it, the iteration
 * over all chunks; that one is also linear per call: checking every chunk with it took time quadratic in
 * the number of chunks). A chunk the index does not have is missing: libhdf5 would fill it in. For an
 * unfiltered dataset the lookup gives the nominal size; libhdf5 reads such chunks at that size. */
static mr_status chunk_size(hid_t ds, const mr_h5_dataset_info *info, const char *path, const char *name,
                            const hsize_t *origin, hsize_t *size, char *at)
{
    format_list(at, 96, info->rank, origin, 1);
    hsize_t n = 0;
    if (H5Dget_chunk_storage_size(ds, origin, &n) < 0 || n == 0) {
        h5_reason r;
        return mr_error(MR_EFORMAT, "%s: %s: the chunk at %s is missing%s", path, name, at, h5_why(&r));
    }
    *size = n;
    return MR_OK;
}

/* The bytes the file stores against the bytes the header declares. */
static mr_status check_storage(hid_t ds, const char *path, const char *name, const mr_h5_dataset_info *info)
{
    char d[160];
    format_dims(d, sizeof d, info->rank, info->dims);
    const unsigned long long want = info->bytes;
    const unsigned long long stored = H5Dget_storage_size(ds);
    if (info->layout == H5D_COMPACT || info->layout == H5D_CONTIGUOUS) {
        if (stored != want)
            return mr_error(MR_EFORMAT, "%s: %s: declares %s elements of %zu bytes (%llu bytes) but the file stores %llu bytes",
                            path, name, info->rank ? d : "1 (scalar)", info->type_size, want, stored);
        if (info->layout == H5D_COMPACT)
            return MR_OK;
        /* contiguous: the bytes must lie inside the file */
        haddr_t at = H5Dget_offset(ds);
        hsize_t fsize = 0;
        hid_t f = H5Iget_file_id(ds);
        herr_t ok = f < 0 ? -1 : H5Fget_filesize(f, &fsize);
        mr_h5_close(&f);
        if (ok < 0 || at == HADDR_UNDEF || at > fsize || want > fsize - at)
            return mr_error(MR_EFORMAT, "%s: %s: its %llu bytes at offset %llu lie outside the file (%llu bytes)", path,
                            name, want, (unsigned long long)at, (unsigned long long)fsize);
        return MR_OK;
    }
    if (info->nfilters == 0) {
        /* unfiltered chunks are stored whole: every chunk must be there, at its size (libhdf5
         * would fill a missing one with the fill value, and reads a chunk by the size it knows) */
        const unsigned long long need = info->nchunks * info->chunk_bytes;
        if (stored < need)
            return mr_error(MR_EFORMAT, "%s: %s: declares %s elements in %llu chunks (%llu bytes) but the file stores %llu bytes",
                            path, name, d, (unsigned long long)info->nchunks, need, stored);
        hsize_t origin[MR_H5_MAX_RANK] = {0}, size = 0;
        char at[96];
        do {
            mr_status st = chunk_size(ds, info, path, name, origin, &size, at);
            if (st != MR_OK)
                return st;
            if (size != info->chunk_bytes)
                return mr_error(MR_EFORMAT, "%s: %s: the unfiltered chunk at %s stores %llu bytes, not %llu", path, name,
                                at, (unsigned long long)size, (unsigned long long)info->chunk_bytes);
        } while (next_chunk(info, origin));
        return MR_OK;
    }
    int deflate = 0;
    for (int i = 0; i < info->nfilters; i++)
        deflate |= info->filter[i] == H5Z_FILTER_DEFLATE;
    const unsigned long long ratio = deflate ? MR_H5_DEFLATE_MAX_RATIO : 1;
    if (stored == 0 || want / ratio > stored)
        return mr_error(MR_EFORMAT,
                        "%s: %s: declares %s elements (%llu bytes) but the file stores %llu bytes, more than %s can "
                        "restore",
                        path, name, d, want, stored, deflate ? "deflate (at most 1032:1)" : "its filters");
    return MR_OK;
}

mr_status mr_h5_dataset_check(hid_t ds, const char *path, const char *name, mr_h5_dataset_info *out)
{
    mr_h5_dataset_info info;
    memset(&info, 0, sizeof info);
    hid_t dcpl = H5I_INVALID_HID, type = H5I_INVALID_HID, space = H5I_INVALID_HID;
    mr_status st = MR_OK;
    char d[160];

    /* storage properties first: asking a virtual dataset for its dataspace can make HDF5 open the
     * source files named in it */
    dcpl = H5Dget_create_plist(ds);
    if (dcpl < 0) {
        st = mr_error(MR_EFORMAT, "%s: %s: unreadable creation properties", path, name);
        goto done;
    }
    info.layout = H5Pget_layout(dcpl);
    if (info.layout == H5D_VIRTUAL) {
        st = mr_error(MR_EFORMAT, "%s: %s: is a virtual dataset (its data are read from other files); refused", path,
                      name);
        goto done;
    }
    if (info.layout != H5D_COMPACT && info.layout != H5D_CONTIGUOUS && info.layout != H5D_CHUNKED) {
        st = mr_error(MR_EFORMAT, "%s: %s: unknown storage layout %d", path, name, (int)info.layout);
        goto done;
    }
    int next = H5Pget_external_count(dcpl);
    if (next != 0) {
        char ename[128] = "?";
        off_t eoff;
        hsize_t esize;
        if (next > 0 && H5Pget_external(dcpl, 0, sizeof ename, ename, &eoff, &esize) >= 0)
            ename[sizeof ename - 1] = '\0';
        st = mr_error(MR_EFORMAT, "%s: %s: stores its data in %d external file(s) ('%s'...); refused", path, name, next,
                      ename);
        goto done;
    }
    if ((st = check_filters(dcpl, path, name, &info)) != MR_OK)
        goto done;
    if (info.nfilters > 0 && info.layout != H5D_CHUNKED) {
        st = mr_error(MR_EFORMAT, "%s: %s: filters on a dataset that is not chunked", path, name);
        goto done;
    }

    type = H5Dget_type(ds);
    info.type_size = type < 0 ? 0 : H5Tget_size(type);
    if (info.type_size == 0 || info.type_size > MAX_ELEMENT_BYTES) {
        st = mr_error(MR_EFORMAT, "%s: %s: unreadable datatype or elements of %zu bytes", path, name, info.type_size);
        goto done;
    }
    if (info.nfilters > 0 && (H5Tdetect_class(type, H5T_VLEN) > 0 || H5Tis_variable_str(type) > 0)) {
        st = mr_error(MR_EFORMAT, "%s: %s: variable-length data stored with filters; refused", path, name);
        goto done;
    }
    if (info.shuffle_size && info.shuffle_size != info.type_size) {
        st = mr_error(MR_EFORMAT, "%s: %s: shuffle filter set up for %zu-byte elements, the datatype has %zu bytes", path,
                      name, info.shuffle_size, info.type_size);
        goto done;
    }

    space = H5Dget_space(ds);
    H5S_class_t sc = space < 0 ? H5S_NO_CLASS : H5Sget_simple_extent_type(space);
    if (sc == H5S_SCALAR) {
        info.rank = 0;
        info.npoints = 1;
    } else if (sc == H5S_SIMPLE) {
        int r = H5Sget_simple_extent_ndims(space);
        if (r < 1 || r > MR_H5_MAX_RANK) {
            st = mr_error(MR_EFORMAT, "%s: %s: rank %d, more than %d", path, name, r, MR_H5_MAX_RANK);
            goto done;
        }
        info.rank = r;
        H5Sget_simple_extent_dims(space, info.dims, NULL);
        info.npoints = 1;
        for (int i = 0; i < r; i++) {
            format_dims(d, sizeof d, r, info.dims);
            if (info.dims[i] < 1) {
                st = mr_error(MR_EFORMAT, "%s: %s: has an empty dimension (dims %s)", path, name, d);
                goto done;
            }
            if (!mul_bounded(info.npoints, info.dims[i], &info.npoints)) {
                st = mr_error(MR_EFORMAT, "%s: %s: dims %s hold more than 2^62 elements", path, name, d);
                goto done;
            }
        }
    } else {
        st = mr_error(MR_EFORMAT, "%s: %s: has a null (empty) or unreadable dataspace", path, name);
        goto done;
    }
    if (!mul_bounded(info.npoints, info.type_size, &info.bytes)) {
        st = mr_error(MR_EFORMAT, "%s: %s: %llu elements of %zu bytes exceed 2^62 bytes", path, name,
                      (unsigned long long)info.npoints, info.type_size);
        goto done;
    }
    if (info.layout == H5D_CHUNKED && (st = check_chunks(dcpl, path, name, &info)) != MR_OK)
        goto done;
    st = check_storage(ds, path, name, &info);
done:
    mr_h5_close(&space);
    mr_h5_close(&type);
    mr_h5_close(&dcpl);
    if (out)
        *out = info;
    return st;
}

/* ---- reading, with our own decoder for filtered chunks --------------------------------------- */

/* HDF5's Fletcher-32 (H5_checksum_fletcher32): 16-bit big-endian words, sums folded every 360. */
static uint32_t fletcher32(const unsigned char *p, size_t len)
{
    uint32_t s1 = 0, s2 = 0;
    size_t words = len / 2;
    while (words) {
        size_t t = words > 360 ? 360 : words;
        words -= t;
        do {
            s1 += ((uint32_t)p[0] << 8) | p[1];
            p += 2;
            s2 += s1;
        } while (--t);
        s1 = (s1 & 0xffff) + (s1 >> 16);
        s2 = (s2 & 0xffff) + (s2 >> 16);
    }
    if (len % 2) {
        s1 += (uint32_t)p[0] << 8;
        s2 += s1;
        s1 = (s1 & 0xffff) + (s1 >> 16);
        s2 = (s2 & 0xffff) + (s2 >> 16);
    }
    s1 = (s1 & 0xffff) + (s1 >> 16);
    s2 = (s2 & 0xffff) + (s2 >> 16);
    return (s2 << 16) | s1;
}

typedef struct {
    const char *path, *name;
    size_t chunk_bytes;
    char at[96]; /* the chunk's position, for messages */
} chunk_ctx;

/* Undo one filter: src[len] -> *dst (capacity cap), or in place (fletcher32). *len is updated. */
static mr_status unfilter(H5Z_filter_t id, size_t elem, const unsigned char *src, size_t *len, unsigned char *dst,
                          size_t cap, const unsigned char **out, const chunk_ctx *c)
{
    size_t n = *len;
    if (id == H5Z_FILTER_FLETCHER32) {
        if (n < 4)
            return mr_error(MR_EFORMAT, "%s: %s: chunk %s is too short for its fletcher32 checksum", c->path, c->name,
                            c->at);
        n -= 4;
        const unsigned char *q = src + n;
        uint32_t stored = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
        uint32_t sum = fletcher32(src, n);
        uint32_t swapped = (sum >> 24) | ((sum >> 8) & 0xff00) | ((sum << 8) & 0xff0000) | (sum << 24);
        if (stored != sum && stored != swapped) /* HDF5 1.6 stored it byte-swapped; HDF5 accepts both */
            return mr_error(MR_EFORMAT, "%s: %s: chunk %s fails its fletcher32 checksum", c->path, c->name, c->at);
        *len = n;
        *out = src;
        return MR_OK;
    }
    if (id == H5Z_FILTER_DEFLATE) {
        z_stream z;
        memset(&z, 0, sizeof z);
        if (inflateInit(&z) != Z_OK)
            return mr_error(MR_ENOMEM, "%s: %s: cannot start inflating", c->path, c->name);
        z.next_in = (Bytef *)src;
        z.avail_in = (uInt)n;
        z.next_out = dst;
        z.avail_out = (uInt)cap;
        int zs = inflate(&z, Z_FINISH);
        size_t got = z.total_out;
        inflateEnd(&z);
        if (zs != Z_STREAM_END) {
            if (zs == Z_BUF_ERROR && got == cap)
                return mr_error(MR_EFORMAT, "%s: %s: chunk %s inflates to more than its %zu bytes; refused",
                                c->path, c->name, c->at, c->chunk_bytes);
            return mr_error(MR_EFORMAT, "%s: %s: chunk %s is not a complete deflate stream (zlib: %s)", c->path,
                            c->name, c->at, z.msg ? z.msg : "truncated");
        }
        *len = got;
        *out = dst;
        return MR_OK;
    }
    /* shuffle: byte j of element i was stored at j * count + i; a tail shorter than an element
     * is stored as is (H5Zshuffle.c) */
    if (n > cap)
        return mr_error(MR_EINTERNAL, "%s: %s: chunk %s larger than its buffer", c->path, c->name, c->at);
    size_t count = elem ? n / elem : 0;
    if (elem <= 1 || count <= 1) {
        *out = src;
        return MR_OK;
    }
    for (size_t j = 0; j < elem; j++)
        for (size_t i = 0; i < count; i++)
            dst[i * elem + j] = src[j * count + i];
    memcpy(dst + count * elem, src + count * elem, n - count * elem);
    *out = dst;
    return MR_OK;
}

/* Copy the part of a decoded chunk (chunk dims, elements of `elem` bytes) at `origin` that lies
 * inside the dataspace into the whole array `buf`. */
static void scatter_chunk(const mr_h5_dataset_info *info, const hsize_t *origin, const unsigned char *chunk,
                          size_t elem, unsigned char *buf)
{
    const int r = info->rank;
    hsize_t extent[MR_H5_MAX_RANK], idx[MR_H5_MAX_RANK] = {0};
    for (int i = 0; i < r; i++)
        extent[i] = info->chunk[i] < info->dims[i] - origin[i] ? info->chunk[i] : info->dims[i] - origin[i];
    const size_t row = (size_t)extent[r - 1] * elem;
    for (;;) {
        uint64_t src = 0, dst = 0;
        for (int i = 0; i < r; i++) {
            src = src * info->chunk[i] + idx[i];
            dst = dst * info->dims[i] + origin[i] + idx[i];
        }
        memcpy(buf + dst * elem, chunk + src * elem, row);
        int i = r - 2;
        while (i >= 0 && ++idx[i] == extent[i])
            idx[i--] = 0;
        if (i < 0)
            break;
    }
}

/* *buf grown to at least n bytes (its capacity in *cap); 0 when out of memory */
static int ensure(unsigned char **buf, size_t *cap, size_t n)
{
    if (*cap >= n)
        return 1;
    unsigned char *p = realloc(*buf, n);
    if (!p)
        return 0;
    *buf = p;
    *cap = n;
    return 1;
}

static mr_status read_filtered(hid_t ds, const mr_h5_dataset_info *info, const char *path, const char *name,
                               hid_t memtype, void *buf)
{
    const size_t fsize = info->type_size, msize = H5Tget_size(memtype);
    const size_t chunk_bytes = (size_t)info->chunk_bytes, nelem = chunk_bytes / fsize;
    /* stored chunks may be a little larger than the data (incompressible data, checksums) */
    const size_t raw_max = chunk_bytes + chunk_bytes / 16 + 4096;
    /* decoded chunks, with room for the checksums of filters applied before deflate, and for the
     * conversion to the memory type in place */
    const size_t conv = nelem * (fsize > msize ? fsize : msize);
    const size_t cap = conv > chunk_bytes + 16 ? conv : chunk_bytes + 16;
    mr_status st = MR_OK;
    hid_t ftype = H5Dget_type(ds);
    /* buffers grow as chunks need them: a header that declares big chunks costs nothing until the
     * file really holds data that decodes to that size */
    unsigned char *raw = NULL, *w[2] = {NULL, NULL}, *bkg = NULL;
    size_t raw_cap = 0, w_cap[2] = {0, 0};
    if (ftype < 0 || msize == 0 ||
        (H5Tget_class(memtype) == H5T_COMPOUND && !(bkg = calloc(nelem, msize)))) {
        st = mr_error(MR_ENOMEM, "%s: %s: out of memory for %zu-byte chunks", path, name, chunk_bytes);
        goto done;
    }
    chunk_ctx c = {path, name, chunk_bytes, ""};
    hsize_t origin[MR_H5_MAX_RANK] = {0};
    /* the file's type is the memory's (float32 little-endian on this machine): no conversion, the
       decoded chunk goes straight into place */
    const int same_type = H5Tequal(ftype, memtype) > 0;
    for (uint64_t k = 0; k < info->nchunks; k++) {
        hsize_t stored = 0;
        if ((st = chunk_size(ds, info, path, name, origin, &stored, c.at)) != MR_OK)
            goto done;
        if (stored > raw_max) {
            st = mr_error(MR_EFORMAT, "%s: %s: the chunk at %s stores %llu bytes, more than a %zu-byte chunk needs", path,
                          name, c.at, (unsigned long long)stored, chunk_bytes);
            goto done;
        }
        uint32_t skipped = 0;
        if (!ensure(&raw, &raw_cap, (size_t)stored) || !ensure(&w[0], &w_cap[0], cap) ||
            !ensure(&w[1], &w_cap[1], cap)) {
            st = mr_error(MR_ENOMEM, "%s: %s: out of memory for %zu-byte chunks", path, name, chunk_bytes);
            goto done;
        }
        if (H5Dread_chunk(ds, H5P_DEFAULT, origin, &skipped, raw) < 0) {
            h5_reason r;
            st = mr_error(MR_EIO, "%s: %s: cannot read the chunk at %s%s", path, name, c.at, h5_why(&r));
            goto done;
        }
        const unsigned char *cur = raw;
        size_t len = (size_t)stored;
        for (int f = info->nfilters - 1; f >= 0; f--) {
            if (skipped & (1u << f))
                continue; /* an optional filter that was not applied to this chunk */
            unsigned char *dst = cur == w[0] ? w[1] : w[0];
            if ((st = unfilter(info->filter[f], info->type_size, cur, &len, dst, cap, &cur, &c)) != MR_OK)
                goto done;
        }
        if (len != chunk_bytes) {
            st = mr_error(MR_EFORMAT, "%s: %s: the chunk at %s decodes to %zu bytes, expected %zu", path, name, c.at, len,
                          chunk_bytes);
            goto done;
        }
        if (same_type) {
            scatter_chunk(info, origin, cur, msize, buf);
            next_chunk(info, origin);
            continue;
        }
        /* convert in place, in a work buffer big enough for the memory type */
        unsigned char *out = cur == w[1] ? w[1] : w[0];
        if (cur != out)
            memcpy(out, cur, chunk_bytes);
        if (H5Tconvert(ftype, memtype, nelem, out, bkg, H5P_DEFAULT) < 0) {
            h5_reason r;
            st = mr_error(MR_EFORMAT, "%s: %s: cannot convert the chunk at %s%s", path, name, c.at, h5_why(&r));
            goto done;
        }
        scatter_chunk(info, origin, out, msize, buf);
        next_chunk(info, origin);
    }
done:
    mr_h5_close(&ftype);
    free(bkg);
    free(w[1]);
    free(w[0]);
    free(raw);
    return st;
}

/* ---- deferred reads: where the values are, for another process to read them ---------------------
 * In a reading child (mr_h5_read_in_child, for a reader that streams float32 arrays), a dataset of
 * float32 values need not be read there and copied through the pipe: the child records where its
 * bytes are in the file (contiguous: one extent; chunked: each chunk's address, stored size and
 * filter mask, from libhdf5's index) and the parent reads them through its own descriptor of the same
 * file and decodes them with the code above (fletcher32, deflate capped at the chunk size, shuffle,
 * byte order). The parent runs no libhdf5: it reads bytes at offsets and checks what it decodes
 * (sizes, checksums, finiteness). */

#define PLAN_MAGIC 0x4e4c5048u /* "HPLN" */
#define PLAN_MAX_CHUNKS 4096   /* libhdf5 finds chunk k by walking the index: k^2 / 2 steps in all */

typedef struct {
    uint64_t offset, stored;
    uint32_t mask, pad;
    hsize_t origin[MR_H5_MAX_RANK];
} plan_extent;

typedef struct {
    uint32_t magic;
    int32_t rank, chunked, big_endian, nfilters, pad;
    int32_t filter[3], pad2;
    uint64_t shuffle_size, chunk_bytes, nextents;
    hsize_t dims[MR_H5_MAX_RANK], chunk[MR_H5_MAX_RANK];
} plan_head;

typedef struct {
    const void *buf;
    plan_head h;
    plan_extent *ext;
} deferred;

static int defer_on;
static deferred *deferrals;
static int ndeferrals, cap_deferrals;

void mr_h5_defer(int on)
{
    defer_on = on;
    for (int i = 0; i < ndeferrals; i++)
        free(deferrals[i].ext);
    ndeferrals = 0; /* a new read: no earlier buffer is taken for one of its own */
}

static const deferred *deferral_of(const void *buf)
{
    for (int i = 0; buf && i < ndeferrals; i++)
        if (deferrals[i].buf == buf)
            return &deferrals[i];
    return NULL;
}

int mr_h5_deferred(const void *buf) { return deferral_of(buf) != NULL; }

/* The plan of ds (info from its check) for buf: 1 when recorded, 0 when it is read here instead (not a
 * float32 dataset, compact, too many chunks, or an index libhdf5 does not list in full). */
static int defer(hid_t ds, const mr_h5_dataset_info *info, hid_t memtype, const void *buf)
{
    if (!defer_on || info->layout == H5D_COMPACT || H5Tequal(memtype, H5T_NATIVE_FLOAT) <= 0 || info->type_size != 4 ||
        (info->layout == H5D_CHUNKED && info->nchunks > PLAN_MAX_CHUNKS))
        return 0;
    hid_t ftype = H5Dget_type(ds);
    const int fp32 = ftype >= 0 && H5Tget_class(ftype) == H5T_FLOAT && H5Tget_size(ftype) == 4;
    const int be = fp32 && H5Tget_order(ftype) == H5T_ORDER_BE;
    mr_h5_close(&ftype);
    if (!fp32)
        return 0;
    deferred d;
    memset(&d, 0, sizeof d);
    d.buf = buf;
    d.h.magic = PLAN_MAGIC;
    d.h.rank = info->rank;
    d.h.chunked = info->layout == H5D_CHUNKED;
    d.h.big_endian = be;
    d.h.nfilters = info->nfilters;
    for (int i = 0; i < info->nfilters; i++)
        d.h.filter[i] = (int32_t)info->filter[i];
    d.h.shuffle_size = info->shuffle_size;
    memcpy(d.h.dims, info->dims, sizeof d.h.dims);
    memcpy(d.h.chunk, info->chunk, sizeof d.h.chunk);
    d.h.chunk_bytes = info->chunk_bytes;
    d.h.nextents = d.h.chunked ? info->nchunks : 1;
    if (!(d.ext = calloc((size_t)d.h.nextents, sizeof *d.ext)))
        return 0;
    int ok = 1;
    if (!d.h.chunked) {
        const haddr_t at = H5Dget_offset(ds); /* inside the file: mr_h5_dataset_check */
        ok = at != HADDR_UNDEF;
        d.ext[0].offset = at;
        d.ext[0].stored = info->bytes;
    } else {
        /* every chunk once, at an origin on the chunk grid (libhdf5 1.10 wants the dataspace, not H5S_ALL) */
        hid_t space = H5Dget_space(ds);
        unsigned char *seen = calloc((size_t)info->nchunks, 1);
        ok = seen != NULL && space >= 0;
        for (uint64_t k = 0; ok && k < info->nchunks; k++) {
            plan_extent *e = &d.ext[k];
            haddr_t addr = HADDR_UNDEF;
            hsize_t size = 0;
            unsigned mask = 0;
            ok = H5Dget_chunk_info(ds, space, k, e->origin, &mask, &addr, &size) >= 0 && addr != HADDR_UNDEF &&
                 size > 0;
            uint64_t flat = 0;
            for (int i = 0; ok && i < info->rank; i++) {
                ok = e->origin[i] % info->chunk[i] == 0 && e->origin[i] < info->dims[i];
                flat = flat * ((info->dims[i] - 1) / info->chunk[i] + 1) + e->origin[i] / info->chunk[i];
            }
            ok = ok && flat < info->nchunks && !seen[flat];
            if (ok)
                seen[flat] = 1;
            e->offset = addr;
            e->stored = size;
            e->mask = mask;
        }
        free(seen);
        mr_h5_close(&space);
    }
    if (ok && ndeferrals == cap_deferrals) {
        const int cap = cap_deferrals ? 2 * cap_deferrals : 8;
        deferred *nd = realloc(deferrals, (size_t)cap * sizeof *nd);
        ok = nd != NULL;
        if (ok) {
            deferrals = nd;
            cap_deferrals = cap;
        }
    }
    if (!ok) {
        free(d.ext);
        return 0;
    }
    deferrals[ndeferrals++] = d;
    return 1;
}

mr_status mr_h5_send_plan(int fd, const void *buf)
{
    const deferred *d = deferral_of(buf);
    if (!d)
        return mr_error(MR_EINTERNAL, "no deferred read for this array");
    mr_status st = mr_pipe_put(fd, &d->h, sizeof d->h);
    return st == MR_OK ? mr_pipe_put(fd, d->ext, (size_t)d->h.nextents * sizeof *d->ext) : st;
}

/* Read n bytes at offset of the file fd (pread, all of them). */
static mr_status read_at(int fd, void *buf, size_t n, uint64_t offset, const char *label, const char *name)
{
    size_t got = 0;
    while (got < n) {
        const ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(offset + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return mr_error(MR_EIO, "%s: %s: read failed at byte %llu: %s", label, name,
                            (unsigned long long)(offset + got), r < 0 ? strerror(errno) : "end of file");
        got += (size_t)r;
    }
    return MR_OK;
}

static void swap32(unsigned char *p, size_t n)
{
    for (size_t i = 0; i + 4 <= n; i += 4) {
        unsigned char a = p[i], b = p[i + 1];
        p[i] = p[i + 3];
        p[i + 1] = p[i + 2];
        p[i + 2] = b;
        p[i + 3] = a;
    }
}

mr_status mr_h5_recv_plan(int fd, int file_fd, const char *label, const char *name, float *buf, size_t n)
{
    plan_head h;
    mr_status st = mr_pipe_get(fd, &h, sizeof h);
    if (st != MR_OK)
        return st;
    const size_t ext_bytes = (size_t)h.nextents * sizeof(plan_extent);
    uint64_t npoints = 1, nchunks = 1;
    int ok = h.magic == PLAN_MAGIC && h.rank >= 0 && h.rank <= MR_H5_MAX_RANK && h.nfilters >= 0 && h.nfilters <= 3 &&
             h.nextents >= 1 && h.nextents <= PLAN_MAX_CHUNKS && (h.chunked || h.nextents == 1);
    for (int i = 0; ok && i < h.rank; i++) {
        ok = h.dims[i] >= 1 && (!h.chunked || (h.chunk[i] >= 1 && h.chunk[i] <= h.dims[i]));
        npoints *= ok ? h.dims[i] : 1;
        nchunks *= ok && h.chunked ? (h.dims[i] - 1) / h.chunk[i] + 1 : 1;
    }
    ok = ok && npoints == n && (!h.chunked || (nchunks == h.nextents && h.chunk_bytes <= MR_H5_MAX_CHUNK_BYTES));
    if (!ok)
        return mr_error(MR_EINTERNAL, "%s: %s: the reading process sent a damaged plan", label, name);
    plan_extent *ext = malloc(ext_bytes);
    if (!ext)
        return mr_error(MR_ENOMEM, "%s: out of memory", label);
    if ((st = mr_pipe_get(fd, ext, ext_bytes)) != MR_OK) {
        free(ext);
        return st;
    }
    struct stat sb;
    const uint64_t fsize = fstat(file_fd, &sb) == 0 ? (uint64_t)sb.st_size : 0;
    mr_h5_dataset_info info; /* what scatter_chunk needs */
    memset(&info, 0, sizeof info);
    info.rank = h.rank;
    memcpy(info.dims, h.dims, sizeof info.dims);
    memcpy(info.chunk, h.chunk, sizeof info.chunk);
    const size_t chunk_bytes = (size_t)h.chunk_bytes, raw_max = chunk_bytes + chunk_bytes / 16 + 4096;
    const size_t cap = chunk_bytes + 16;
    unsigned char *raw = NULL, *w[2] = {NULL, NULL};
    size_t raw_cap = 0, w_cap[2] = {0, 0};
    chunk_ctx c = {label, name, chunk_bytes, ""};
    for (uint64_t k = 0; st == MR_OK && k < h.nextents; k++) {
        const plan_extent *e = &ext[k];
        if (e->offset > fsize || e->stored > fsize - e->offset) {
            st = mr_error(MR_EFORMAT, "%s: %s: %llu bytes at offset %llu lie outside the file (%llu bytes)", label, name,
                          (unsigned long long)e->stored, (unsigned long long)e->offset, (unsigned long long)fsize);
            break;
        }
        if (!h.chunked) {
            if (e->stored != n * sizeof(float))
                st = mr_error(MR_EINTERNAL, "%s: %s: the reading process sent a damaged plan", label, name);
            else if ((st = read_at(file_fd, buf, (size_t)e->stored, e->offset, label, name)) == MR_OK && h.big_endian)
                swap32((unsigned char *)buf, (size_t)e->stored);
            break;
        }
        format_list(c.at, sizeof c.at, h.rank, e->origin, 1);
        if (e->stored > raw_max) {
            st = mr_error(MR_EFORMAT, "%s: %s: the chunk at %s stores %llu bytes, more than a %zu-byte chunk needs", label,
                          name, c.at, (unsigned long long)e->stored, chunk_bytes);
            break;
        }
        if (!ensure(&raw, &raw_cap, (size_t)e->stored) || !ensure(&w[0], &w_cap[0], cap) || !ensure(&w[1], &w_cap[1], cap)) {
            st = mr_error(MR_ENOMEM, "%s: %s: out of memory for %zu-byte chunks", label, name, chunk_bytes);
            break;
        }
        if ((st = read_at(file_fd, raw, (size_t)e->stored, e->offset, label, name)) != MR_OK)
            break;
        const unsigned char *cur = raw;
        size_t len = (size_t)e->stored;
        for (int f = h.nfilters - 1; st == MR_OK && f >= 0; f--) {
            if (e->mask & (1u << f))
                continue;
            unsigned char *dst = cur == w[0] ? w[1] : w[0];
            st = unfilter((H5Z_filter_t)h.filter[f], 4, cur, &len, dst, cap, &cur, &c);
        }
        if (st == MR_OK && len != chunk_bytes)
            st = mr_error(MR_EFORMAT, "%s: %s: the chunk at %s decodes to %zu bytes, expected %zu", label, name, c.at,
                          len, chunk_bytes);
        if (st != MR_OK)
            break;
        if (h.big_endian) {
            unsigned char *out = cur == w[1] ? w[1] : w[0];
            if (cur != out)
                memcpy(out, cur, chunk_bytes);
            swap32(out, chunk_bytes);
            cur = out;
        }
        scatter_chunk(&info, e->origin, cur, sizeof(float), (unsigned char *)buf);
    }
    free(w[1]);
    free(w[0]);
    free(raw);
    free(ext);
    const int64_t bad = st == MR_OK ? mr_h5_first_nonfinite(buf, n) : -1;
    if (bad >= 0) {
        char at[96];
        mr_h5_format_index(at, sizeof at, bad, h.rank, h.dims);
        st = mr_error(MR_EFORMAT, "%s: %s: non-finite value %g at %s (flat index %lld)", label, name, (double)buf[bad], at,
                      (long long)bad);
    }
    return st;
}

mr_status mr_h5_dataset_read(hid_t ds, const mr_h5_dataset_info *info, const char *path, const char *name,
                             hid_t memtype, void *buf)
{
    if (defer(ds, info, memtype, buf))
        return MR_OK; /* the parent reads it */
    if (info->nfilters > 0)
        return read_filtered(ds, info, path, name, memtype, buf);
    if (H5Dread(ds, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        h5_reason r;
        return mr_error(MR_EIO, "%s: %s: read failed%s", path, name, h5_why(&r));
    }
    return MR_OK;
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
                      tsize, class_name(cls));
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

/* Integers of 1, 2, 4 or 8 bytes using all their bits; IEEE binary32 or binary64 floats. HDF5
 * converts anything else too, through its generic bit-field conversions; no writer of ours or of
 * the usual tools produces it. */
static int standard_number(hid_t type, H5T_class_t cls)
{
    size_t size = H5Tget_size(type);
    if (cls == H5T_INTEGER)
        return (size == 1 || size == 2 || size == 4 || size == 8) && H5Tget_precision(type) == 8 * size &&
               H5Tget_offset(type) == 0 && (H5Tget_order(type) == H5T_ORDER_LE || H5Tget_order(type) == H5T_ORDER_BE);
    return H5Tequal(type, H5T_IEEE_F32LE) > 0 || H5Tequal(type, H5T_IEEE_F32BE) > 0 ||
           H5Tequal(type, H5T_IEEE_F64LE) > 0 || H5Tequal(type, H5T_IEEE_F64BE) > 0;
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
    if (!standard_number(type, cls)) {
        st = mr_error(MR_EFORMAT, "%s: %s attribute '%s' is a non-standard %zu-byte %s type", path, objname, attr,
                      H5Tget_size(type), class_name(cls));
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

/* Offset of the first byte of s[len] that is not part of valid UTF-8 text without control
 * characters (C0, DEL), or -1 when all is well. ASCII is a subset. */
static long bad_text_at(const unsigned char *s, size_t len);

long mr_h5_text_bad_at(const char *s, size_t len) { return bad_text_at((const unsigned char *)s, len); }

void mr_h5_text_clean(char *s)
{
    size_t len = strlen(s);
    long bad;
    while ((bad = bad_text_at((const unsigned char *)s, len)) >= 0) {
        /* a control character or a byte that starts no character becomes '?'; a character cut off at the
           end (a truncated name) is dropped */
        const unsigned char c = (unsigned char)s[bad];
        size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
        if (n && (size_t)bad + n > len) {
            s[bad] = '\0';
            len = (size_t)bad;
        } else {
            s[bad] = '?';
        }
    }
}

static long bad_text_at(const unsigned char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        unsigned c = s[i];
        if (c < 0x80) {
            if (c < 0x20 || c == 0x7f)
                return (long)i;
            i++;
            continue;
        }
        size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
        if (n == 0 || i + n > len)
            return (long)i;
        unsigned lo = 0x80, hi = 0xbf; /* the second byte's range excludes overlong forms, surrogates, > U+10FFFF */
        if (c == 0xe0)
            lo = 0xa0;
        else if (c == 0xed)
            hi = 0x9f;
        else if (c == 0xf0)
            lo = 0x90;
        else if (c == 0xf4)
            hi = 0x8f;
        if (s[i + 1] < lo || s[i + 1] > hi)
            return (long)i;
        for (size_t k = 2; k < n; k++)
            if ((s[i + k] & 0xc0) != 0x80)
                return (long)i;
        i += n;
    }
    return -1;
}

mr_status mr_h5_attr_read_string(hid_t obj, const char *path, const char *objname, const char *attr, char *buf,
                                 size_t size, int *present)
{
    hid_t a, type, space, mem = H5I_INVALID_HID;
    char *text = NULL;
    size_t len = 0;
    int vlen = 0;
    mr_status st = attr_begin(obj, path, objname, attr, present, &a, &type, &space);
    if (st != MR_OK || a < 0)
        return st;
    if (type < 0 || H5Tget_class(type) != H5T_STRING) {
        st = mr_error(MR_EFORMAT, "%s: %s attribute '%s' is not a string", path, objname, attr);
        goto done;
    }
    if (space < 0 || H5Sget_simple_extent_npoints(space) != 1 || H5Sget_simple_extent_ndims(space) > 1) {
        st = mr_error(MR_EFORMAT, "%s: %s attribute '%s' is not a single string", path, objname, attr);
        goto done;
    }
    /* read in the file's character set: HDF5 does not convert between ASCII and UTF-8 */
    H5T_cset_t cset = H5Tget_cset(type);
    if (cset != H5T_CSET_ASCII && cset != H5T_CSET_UTF8) {
        st = mr_error(MR_EFORMAT, "%s: %s attribute '%s' has an unknown character set %d", path, objname, attr,
                      (int)cset);
        goto done;
    }
    vlen = H5Tis_variable_str(type) > 0;
    mem = H5Tcopy(H5T_C_S1);
    if (mem < 0 || H5Tset_cset(mem, cset) < 0) {
        st = mr_error(MR_EIO, "%s: %s attribute '%s': cannot make a string type", path, objname, attr);
        goto done;
    }
    if (vlen) {
        if (H5Tset_size(mem, H5T_VARIABLE) < 0 || H5Aread(a, mem, &text) < 0) {
            h5_reason r;
            text = NULL;
            st = mr_error(MR_EFORMAT, "%s: %s attribute '%s': cannot read the variable-length string%s", path,
                          objname, attr, h5_why(&r));
            goto done;
        }
        len = text ? strlen(text) : 0;
    } else {
        size_t n = H5Tget_size(type);
        if (n == 0 || n > MR_H5_MAX_STRING_BYTES) {
            st = mr_error(MR_EFORMAT, "%s: %s attribute '%s' is a %zu-byte string, more than %d", path, objname, attr,
                          n, MR_H5_MAX_STRING_BYTES);
            goto done;
        }
        text = calloc(n + 1, 1);
        if (!text) {
            st = mr_error(MR_ENOMEM, "%s: out of memory", path);
            goto done;
        }
        /* NUL-padded in memory: HDF5 strips a space-padded string's trailing spaces */
        if (H5Tset_size(mem, n) < 0 || H5Tset_strpad(mem, H5T_STR_NULLPAD) < 0 || H5Aread(a, mem, text) < 0) {
            h5_reason r;
            st = mr_error(MR_EFORMAT, "%s: %s attribute '%s': cannot read the string%s", path, objname, attr,
                          h5_why(&r));
            goto done;
        }
        len = strlen(text);
        for (size_t i = len; i < n; i++)
            if (text[i] != '\0') {
                st = mr_error(MR_EFORMAT, "%s: %s attribute '%s' holds a NUL byte at offset %zu inside the string",
                              path, objname, attr, len);
                goto done;
            }
    }
    long bad = bad_text_at((const unsigned char *)(text ? text : ""), len);
    if (bad >= 0) {
        st = mr_error(MR_EFORMAT, "%s: %s attribute '%s': byte %ld (0x%02x) is %s", path, objname, attr, bad,
                      (unsigned)(unsigned char)text[bad],
                      (unsigned char)text[bad] < 0x80 ? "a control character" : "not valid UTF-8");
        goto done;
    }
    if (len >= size) {
        st = mr_error(MR_EFORMAT, "%s: %s attribute '%s' is %zu bytes long, longer than %zu", path, objname, attr,
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
