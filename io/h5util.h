/* Checked HDF5 helpers shared by the k-space and image readers/writers (io/kspace_h5.c,
 * io/image_h5.c). Every function returns an mr_status and, on failure, records one message of
 * the form "<file>: <object>: <what is wrong>" (mr_error), so that the callers only add context.
 * HDF5's own error-stack printing is switched off (mr_h5_quiet); where HDF5 knows why an
 * operation failed, its innermost reason is appended to our message.
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

#define MR_H5_MAX_RANK 5

/* Turn off HDF5's automatic error-stack printing, so users see only our messages. */
void mr_h5_quiet(void);

/* Open an existing file read-only after checking, in this order, that it can be opened at all
 * (MR_EIO with strerror), is a regular non-empty file and carries the HDF5 signature
 * (MR_EFORMAT), and that HDF5 can open it (MR_EIO, e.g. a truncated file). */
mr_status mr_h5_open_read(const char *path, hid_t *file);

/* Create the file that will become `path`: built in memory (HDF5 core driver, no backing store),
 * tmp receives the temporary name it is written under at commit (io/fsutil.h mr_tmp_name). Nothing
 * is written to the disk before mr_h5_close_commit. */
mr_status mr_h5_create_tmp(const char *path, char *tmp, size_t tmp_size, hid_t *file);

/* Close `file` (a file from mr_h5_create_tmp with every object inside already closed). When st is
 * MR_OK, write its image to tmp (fwrite, fflush, fsync, close; on any error tmp is removed and the
 * message names path and the errno, e.g. "No space left on device") and rename tmp to path.
 * Returns the first failure (st itself when it is not MR_OK); path is then untouched. */
mr_status mr_h5_close_commit(hid_t file, const char *tmp, const char *path, mr_status st);

/* 1 if the absolute object path `name` ("/kspace/traj") exists, walking it component by
 * component (a missing parent is "absent", not an error); 0 if absent; MR_EIO recorded and -1
 * returned when HDF5 fails. */
int mr_h5_exists(hid_t file, const char *path, const char *name);

/* Open the group `name`; MR_EFORMAT when it is missing or is not a group. */
mr_status mr_h5_open_group(hid_t file, const char *path, const char *name, hid_t *group);

/* Open the float32 dataset `name` (class float, 4 bytes) and check that it is a simple dataspace
 * of the given rank with every dimension >= 1; fills dims[rank]. Also checks that a contiguous
 * dataset really stores all of its bytes in the file, so that a lying header cannot make the
 * caller allocate what the file does not hold. */
mr_status mr_h5_open_f32(hid_t file, const char *path, const char *name, int rank, hid_t *dset, hsize_t *dims);

/* Read the whole float32 dataset (n values, dims as from mr_h5_open_f32) into buf and check that
 * every value is finite; the message names the first bad index as [i][j]... */
mr_status mr_h5_read_f32(hid_t dset, const char *path, const char *name, int rank, const hsize_t *dims, float *buf);

/* First non-finite value of v[n]: its index, or -1 when all are finite. */
int64_t mr_h5_first_nonfinite(const float *v, size_t n);

/* Format a flat index of an array of the given dims as "[i][j][k]" into buf. */
void mr_h5_format_index(char *buf, size_t size, int64_t flat, int rank, const hsize_t *dims);

/* Write a float32 dataset `name` (relative to loc) of the given rank and dims from buf. */
mr_status mr_h5_write_f32(hid_t loc, const char *path, const char *name, int rank, const hsize_t *dims,
                          const float *buf);

/* Numeric attribute `attr` of object `obj` (named objname in messages). When absent: *present = 0
 * and buf is untouched. When present it must have type class `cls` (H5T_INTEGER or H5T_FLOAT) and
 * exactly n elements (n == 1 also accepts a scalar); it is converted to `memtype` (e.g.
 * H5T_NATIVE_INT64) into buf. present may be NULL, which makes the attribute required. */
mr_status mr_h5_attr_read(hid_t obj, const char *path, const char *objname, const char *attr, H5T_class_t cls,
                          hid_t memtype, void *buf, int n, int *present);

/* String attribute (fixed or variable length) into buf (NUL-terminated). Longer than size-1 is an
 * error. present as above. */
mr_status mr_h5_attr_read_string(hid_t obj, const char *path, const char *objname, const char *attr, char *buf,
                                 size_t size, int *present);

/* Write a numeric attribute: n elements (n == 0: a scalar) stored as filetype from memtype. */
mr_status mr_h5_attr_write(hid_t obj, const char *path, const char *attr, hid_t filetype, hid_t memtype,
                           const void *buf, int n);

/* Write a scalar fixed-length (NUL-padded, strlen(s) bytes) string attribute. */
/* H5Gcreate2 without object timestamps (reproducible bytes); < 0 on failure. */
hid_t mr_h5_create_group(hid_t file, const char *name);

mr_status mr_h5_attr_write_string(hid_t obj, const char *path, const char *attr, const char *s);

/* H5Dclose / H5Gclose / H5Fclose when *id >= 0, then set *id to H5I_INVALID_HID. */
void mr_h5_close(hid_t *id);

#ifdef __cplusplus
}
#endif
#endif
