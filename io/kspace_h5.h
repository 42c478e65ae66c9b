/* The HDF5 k-space file (docs/FORMAT.md). */
#ifndef MR_KSPACE_H5_H
#define MR_KSPACE_H5_H

#include <hdf5.h>

#include "h5util.h"
#include "kspace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Read and validate a scan. Every size, rank, type and count is checked before anything is
 * allocated; on failure *out is NULL and the message names the file and dataset. *out is owned by
 * the caller (mr_kspace_free). The file is read once, in a child process (mr_h5_read_path_in_child),
 * so that a file that crashes, hangs or inflates libhdf5 is refused instead. */
mr_status mr_kspace_read(const char *path, mr_kspace **out);

/* The same from an HDF5 file that is already open (e.g. mr_h5_open_memory for bytes in memory);
 * `name` names it in messages. The file stays open and owned by the caller. */
mr_status mr_kspace_read_file(hid_t file, const char *name, mr_kspace **out);

/* mr_kspace_read_file as an isolated reader (io/h5util.h mr_h5_read_in_child; ctx: mr_kspace **). */
extern const mr_h5_isolated mr_kspace_h5_isolated;

/* Write a scan (traj, data, optional weights, optional truth images, attributes). The file
 * appears under `path` only when complete (temporary name + rename). */
mr_status mr_kspace_write(const char *path, const mr_kspace *ks);

#ifdef __cplusplus
}
#endif
#endif
