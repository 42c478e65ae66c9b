/* Checked HDF5 helpers shared by every reader and writer (io/kspace_h5.c, io/image_h5.c, and any
 * new reader of user files). Every function returns an mr_status and, on failure, records one
 * message of the form "<file>: <object>: <what is wrong>" (mr_error), so that the callers only add
 * context. HDF5's own error-stack printing is switched off (mr_h5_quiet); where HDF5 knows why an
 * operation failed, its innermost reason is appended to our message.
 *
 * Hostile files (docs/FORMAT.md, "What is refused"): a reader of user files opens the file with
 * mr_h5_open_read (or mr_h5_open_memory), finds objects with mr_h5_lookup (hard links only, never
 * soft, external or user-defined links), checks every dataset with mr_h5_dataset_check before it
 * allocates anything from the dataset's sizes, and reads values only with mr_h5_dataset_read
 * (or mr_h5_read_f32). Attributes go through mr_h5_attr_read / mr_h5_attr_read_string. HDF5
 * filter plugins are never loaded (H5PLset_loading_state(0) when a file is opened).
 *
 * Ownership: hid_t handles returned through out-parameters belong to the caller (H5Dclose,
 * H5Fclose, or mr_h5_close_commit for files created with mr_h5_create_tmp). Names and paths are
 * borrowed for the duration of the call. */
#ifndef MR_H5UTIL_H
#define MR_H5UTIL_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest dataspace rank any reader accepts (mr_h5_dataset_check). */
#define MR_H5_MAX_RANK 8
/* Largest chunk (uncompressed bytes) of a chunked dataset: a chunk is decoded whole in memory.
 * h5py's automatic chunks are at most 1 MiB; HDF5's default chunk cache holds 1 MiB. */
#define MR_H5_MAX_CHUNK_BYTES ((uint64_t)16 << 20)
/* Most chunks of one dataset (each is looked up in the chunk index on reading). */
#define MR_H5_MAX_CHUNKS ((uint64_t)1 << 22)
/* Largest expansion of deflate: 258-byte matches coded in about 2 bits (zlib's documented bound). */
#define MR_H5_DEFLATE_MAX_RATIO 1032
/* Longest fixed-length string attribute read. */
#define MR_H5_MAX_STRING_BYTES 65536

/* Turn off HDF5's automatic error-stack printing, so users see only our messages. */
void mr_h5_quiet(void);

/* " (HDF5: <why the last HDF5 call failed, innermost>)" into buf, or "" when HDF5 said nothing. */
const char *mr_h5_why(char *buf, size_t size);

/* Open an existing file read-only after checking, in this order, that it can be opened at all
 * (MR_EIO with strerror), is a regular non-empty file and carries the HDF5 signature
 * (MR_EFORMAT), and that HDF5 can open it (MR_EIO, e.g. a truncated file). */
mr_status mr_h5_open_read(const char *path, hid_t *file);

/* The same for a file open as fd (io/fsutil.h mr_file_open_private; `label` names it in messages):
 * HDF5 opens that very file (through /proc/self/fd; without /proc by the label, after checking that it
 * still names the same file), whatever became of its path. fd stays the caller's. */
mr_status mr_h5_open_fd(int fd, const char *label, hid_t *file);

/* Open the HDF5 file image buf[size] read-only through HDF5's core (in-memory) driver; HDF5 copies
 * the bytes, so buf is borrowed for the call only. `name` names the image in messages (it is not
 * opened). The same checks as mr_h5_open_read after the file-system ones: an HDF5 signature
 * (MR_EFORMAT) and that HDF5 can open it (MR_EIO). For fuzzing and for bytes that did not come
 * from a file. */
mr_status mr_h5_open_memory(const void *buf, size_t size, const char *name, hid_t *file);

/* A reader of an open HDF5 file (e.g. mr_kspace_read_file): fills what ctx points to. */
typedef mr_status (*mr_h5_reader)(hid_t file, const char *path, void *ctx);

/* How a reader's result crosses from the child that reads the file to this process
 * (mr_h5_read_in_child): read fills ctx in the child; send writes ctx's result to the pipe fd there
 * (it may free it as it goes); recv reads it here into ctx, checking it again (sizes, values), and
 * keeps nothing when it fails; file_fd is this process's descriptor of the file (for deferred reads).
 * ctx means the same to read and recv (e.g. mr_kspace **). */
typedef struct {
    mr_h5_reader read;
    mr_status (*send)(void *ctx, int fd);
    mr_status (*recv)(void *ctx, int fd, int file_fd, const char *label);
    int deferrable; /* send passes float32 datasets on as plans (mr_h5_send_plan) that recv executes on
                       file_fd (mr_h5_recv_plan): the child need not read their values at all */
} mr_h5_isolated;

/* Deferred reads, for a reader whose send knows them (mr_h5_isolated.deferrable): in the reading child,
 * mr_h5_defer(1) makes mr_h5_dataset_read of a float32 dataset (contiguous, or chunked in at most 4096
 * chunks, any of our filters, either byte order) record where its bytes are instead of reading them;
 * mr_h5_read_f32 then leaves its values unchecked. mr_h5_deferred(buf): 1 for such a buffer (whose
 * values are not there); mr_h5_send_plan writes its plan to the pipe. In the parent, mr_h5_recv_plan
 * reads the plan and then the values through file_fd, decoding them with our own code (fletcher32
 * verified, deflate capped at the chunk size, shuffle, byte order) and checking every value is finite
 * (the message names the dataset `name` and the index): the bytes are read once, by the process that
 * keeps them, and no libhdf5 runs there. buf holds n floats. */
void mr_h5_defer(int on);
int mr_h5_deferred(const void *buf);
mr_status mr_h5_send_plan(int fd, const void *buf);
mr_status mr_h5_recv_plan(int fd, int file_fd, const char *label, const char *name, float *buf, size_t n);

/* The memory a reading child may use besides twice the file and the arrays its reader allows. */
#define MR_H5_CHILD_MEMORY ((uint64_t)64 << 20)

/* Read the file open as fd (io/fsutil.h mr_file_open_private) in a child process (fork): the child opens
 * it (mr_h5_open_fd), runs how->read and streams the result back (how->send / how->recv), so the file is
 * read once, and only there. libhdf5 decodes a file's own structures (superblock, object headers, heaps,
 * B-trees) before any check of ours can run, and some damaged ones crash, hang or make it allocate what
 * a hostile size says (docs/FUZZING.md); the child takes that instead of this process: it runs under a
 * CPU-time limit (120 s + 60 s per GiB of file: libhdf5 looping) and a memory limit (RLIMIT_AS:
 * MR_H5_CHILD_MEMORY + twice the file + what the reader allows for arrays it has checked,
 * base/child.h mr_child_memory_allow), and a child killed by a signal or its limits gives MR_EFORMAT
 * naming the file and why. A refusal by the reader comes back with its status and message. This
 * process never runs libhdf5 on the file. `label` names the file in messages. When no child can be
 * made (no pipe, no fork) the file is read here instead. */
mr_status mr_h5_read_in_child(int fd, const char *label, const mr_h5_isolated *how, void *ctx);

/* The same for a path, opened here first (mr_file_open_private: its errors). */
mr_status mr_h5_read_path_in_child(const char *path, const mr_h5_isolated *how, void *ctx);

/* For a reader whose result is `size` plain bytes at ctx (a format or kind probe: no pointers): the
 * same, the bytes copied back as they are. The caller checks what came back (an enum in range). */
mr_status mr_h5_probe_in_child(const char *path, mr_h5_reader read, void *ctx, size_t size);

/* Create the file that will become `path`: built in memory (HDF5 core driver, no backing store),
 * tmp receives the temporary name it is written under at commit (io/fsutil.h mr_tmp_name). Nothing
 * is written to the disk before mr_h5_close_commit. */
mr_status mr_h5_create_tmp(const char *path, char *tmp, size_t tmp_size, hid_t *file);

/* Close `file` (a file from mr_h5_create_tmp with every object inside already closed). When st is
 * MR_OK, write its image to tmp (fwrite, fflush, fsync, close; on any error tmp is removed and the
 * message names path and the errno, e.g. "No space left on device") and rename tmp to path.
 * Returns the first failure (st itself when it is not MR_OK); path is then untouched. */
mr_status mr_h5_close_commit(hid_t file, const char *tmp, const char *path, mr_status st);

/* Look up the absolute object path `name` ("/kspace/traj") component by component: *present = 1
 * when every component exists, 0 when one is missing (a missing parent is "absent", not an error).
 * Only hard links are followed: a soft, external or user-defined link on the way is refused
 * (MR_EFORMAT, naming the link and its target), as is a parent that is not a group. MR_EIO when
 * HDF5 fails. */
mr_status mr_h5_lookup(hid_t file, const char *path, const char *name, int *present);

/* mr_h5_lookup as 1 (present), 0 (absent) or -1 (refused or failed; the message is recorded). */
int mr_h5_exists(hid_t file, const char *path, const char *name);

/* Open the group `name`; MR_EFORMAT when it is missing or is not a group. */
mr_status mr_h5_open_group(hid_t file, const char *path, const char *name, hid_t *group);

/* What mr_h5_dataset_check found out about a dataset. */
typedef struct {
    int rank;                      /* 0 for a scalar dataspace */
    hsize_t dims[MR_H5_MAX_RANK];  /* each >= 1 */
    uint64_t npoints;              /* product of dims (1 for a scalar) */
    size_t type_size;              /* bytes per element in the file */
    uint64_t bytes;                /* npoints * type_size */
    H5D_layout_t layout;           /* H5D_COMPACT, H5D_CONTIGUOUS or H5D_CHUNKED */
    hsize_t chunk[MR_H5_MAX_RANK]; /* chunk dims (chunked only) */
    uint64_t chunk_bytes;          /* bytes of one chunk (chunked only) */
    uint64_t nchunks;              /* chunks covering the dataspace (chunked only) */
    int nfilters;                  /* filters of the pipeline, in the order they were applied */
    H5Z_filter_t filter[3];        /* each of deflate, shuffle, fletcher32 at most once */
    size_t shuffle_size;           /* element size the shuffle filter was set up with */
} mr_h5_dataset_info;

/* The safety check every reader applies to a dataset before it allocates memory from its sizes or
 * reads a value (docs/FORMAT.md, "What is refused"). Refuses with MR_EFORMAT, naming the dataset:
 *  - a null dataspace, rank above MR_H5_MAX_RANK, an empty dimension, or sizes whose products
 *    (elements, bytes, chunks) overflow 2^62;
 *  - a datatype of variable size (variable-length sequences or strings) stored with filters, or
 *    one element larger than 1 MiB;
 *  - any layout other than compact, contiguous and chunked (virtual datasets read other files);
 *  - external storage (H5Pset_external: raw data in other files);
 *  - any filter other than deflate, shuffle and fletcher32 (each at most once; shuffle set up
 *    for the element size), which also keeps HDF5 from loading a plugin;
 *  - chunks larger than MR_H5_MAX_CHUNK_BYTES or more than MR_H5_MAX_CHUNKS of them;
 *  - storage that does not hold the declared data: compact and contiguous must store exactly
 *    `bytes` (contiguous ones inside the file), unfiltered chunked ones every chunk at exactly
 *    its size (each looked up), and filtered ones at least bytes / MR_H5_DEFLATE_MAX_RATIO
 *    (bytes with no deflate; each chunk is checked as it is decoded).
 * The datatype's class is not checked here (the caller knows what it expects). info may be NULL. */
mr_status mr_h5_dataset_check(hid_t ds, const char *path, const char *name, mr_h5_dataset_info *info);

/* Read the whole dataset (info from mr_h5_dataset_check of ds) into buf as memtype (a fixed-size
 * type; buf holds info->npoints elements). Filtered datasets are not given to HDF5's filter
 * pipeline: each chunk is read raw and decoded here (fletcher32 verified, deflate inflated with
 * its output capped at the chunk's size, so a decompression bomb fails instead of exhausting
 * memory, shuffle undone), then converted with H5Tconvert. Every chunk must be present. */
mr_status mr_h5_dataset_read(hid_t ds, const mr_h5_dataset_info *info, const char *path, const char *name,
                             hid_t memtype, void *buf);

/* Look up (mr_h5_lookup) and open the float32 dataset `name`, run mr_h5_dataset_check, and check
 * that its datatype is IEEE binary32 (either byte order) and its dataspace simple of the given
 * rank; fills dims[rank]. */
mr_status mr_h5_open_f32(hid_t file, const char *path, const char *name, int rank, hid_t *dset, hsize_t *dims);

/* Read the whole float32 dataset (n values, dims as from mr_h5_open_f32) into buf through
 * mr_h5_dataset_read and check that every value is finite; the message names the first bad index
 * as [i][j]... */
mr_status mr_h5_read_f32(hid_t dset, const char *path, const char *name, int rank, const hsize_t *dims, float *buf);

/* First non-finite value of v[n]: its index, or -1 when all are finite. */
int64_t mr_h5_first_nonfinite(const float *v, size_t n);

/* Format a flat index of an array of the given dims as "[i][j][k]" into buf. */
void mr_h5_format_index(char *buf, size_t size, int64_t flat, int rank, const hsize_t *dims);

/* Chunks of the datasets mr_h5_write_f32 writes: at most this many bytes (HDF5's chunk cache holds 1 MiB). */
#define MR_H5_WRITE_CHUNK_BYTES ((uint64_t)1 << 20)

/* Write a float32 dataset `name` (relative to loc) of the given rank and dims from buf: chunked (at most
 * MR_H5_WRITE_CHUNK_BYTES per chunk) with HDF5's fletcher32 checksum on every chunk, which
 * mr_h5_dataset_read verifies. */
mr_status mr_h5_write_f32(hid_t loc, const char *path, const char *name, int rank, const hsize_t *dims,
                          const float *buf);

/* The promise that every dataset of a file of ours carries a checksum: writers put the attribute
 * "checksum" = "fletcher32" on the object that holds them (mr_h5_promise_checksums); readers ask for it
 * (mr_h5_checksums_promised: *promised 1 or 0; any other value is MR_EFORMAT) and then refuse a dataset
 * without the filter (mr_h5_require_checksum: MR_EFORMAT naming it), so that a damaged file cannot drop
 * the checks by losing a filter. Files without the attribute (older ones, other writers) read as before;
 * a checksum that is present is always verified. */
mr_status mr_h5_promise_checksums(hid_t obj, const char *path);
mr_status mr_h5_checksums_promised(hid_t obj, const char *path, const char *objname, int *promised);
mr_status mr_h5_require_checksum(hid_t ds, const char *path, const char *name);

/* Numeric attribute `attr` of object `obj` (named objname in messages). When absent: *present = 0
 * and buf is untouched. When present it must have type class `cls` (H5T_INTEGER or H5T_FLOAT) and
 * a standard type (integers of 1, 2, 4 or 8 bytes using all their bits, IEEE binary32 or binary64
 * floats; either byte order) and exactly n elements (n == 1 also accepts a scalar); it is
 * converted to `memtype` (e.g. H5T_NATIVE_INT64) into buf. present may be NULL, which makes the
 * attribute required. */
mr_status mr_h5_attr_read(hid_t obj, const char *path, const char *objname, const char *attr, H5T_class_t cls,
                          hid_t memtype, void *buf, int n, int *present);

/* String attribute into buf (NUL-terminated): one string (scalar or 1 element), ASCII or UTF-8,
 * fixed length (NUL-terminated, NUL- or space-padded; at most MR_H5_MAX_STRING_BYTES) or variable
 * length (h5py's default for str). The text must be valid UTF-8 without control characters or
 * a NUL inside it. Longer than size-1 bytes is an error. present as above. */
mr_status mr_h5_attr_read_string(hid_t obj, const char *path, const char *objname, const char *attr, char *buf,
                                 size_t size, int *present);

/* Text as mr_h5_attr_read_string accepts it: the offset of the first byte of s[len] that is not valid
 * UTF-8 without control characters, or -1. mr_h5_text_clean makes a NUL-terminated string such text
 * in place (control characters and stray bytes become '?', a character cut off at the end is dropped):
 * for names taken from other formats (an ISMRMRD trajectory, a BART header) that our files store. */
long mr_h5_text_bad_at(const char *s, size_t len);
void mr_h5_text_clean(char *s);

/* Write a numeric attribute: n elements (n == 0: a scalar) stored as filetype from memtype. */
mr_status mr_h5_attr_write(hid_t obj, const char *path, const char *attr, hid_t filetype, hid_t memtype,
                           const void *buf, int n);

/* Write a scalar fixed-length (NUL-padded, strlen(s) bytes) ASCII string attribute. */
mr_status mr_h5_attr_write_string(hid_t obj, const char *path, const char *attr, const char *s);

/* H5Gcreate2 without object timestamps (reproducible bytes); < 0 on failure. */
hid_t mr_h5_create_group(hid_t file, const char *name);

/* The one-dimensional array type of n elements of base (a member of a compound type); H5Tclose it. */
hid_t mr_h5_array_type(hid_t base, hsize_t n);

/* H5Dclose / H5Gclose / H5Fclose when *id >= 0, then set *id to H5I_INVALID_HID. */
void mr_h5_close(hid_t *id);

#ifdef __cplusplus
}
#endif
#endif
