/* Internals shared by the files that implement io/h5util.h (io/h5util.c, io/h5_child.c,
 * io/h5_check.c, io/h5_read.c, io/h5_attr.c). Not part of the library's interface: readers and
 * writers use io/h5util.h only. */
#ifndef MR_H5UTIL_INTERNAL_H
#define MR_H5UTIL_INTERNAL_H

#include <hdf5.h>
#include <stddef.h>

#include "../base/status.h"
#include "h5util.h"

/* HDF5's reason for the last failure (io/h5util.c). */
typedef struct {
    char text[256];
} h5_reason;

/* " (HDF5: <innermost description>)" or "", in r->text */
const char *h5_why(h5_reason *r);

/* The name of a datatype class for messages: "integer", "float", ... (io/h5util.c). */
const char *h5_class_name(H5T_class_t c);

/* dims as "3x4x2" (brackets 0) or a position as "[0][64][0]" (brackets 1) into buf (io/h5util.c);
 * h5_format_dims: the first form. */
void h5_format_list(char *buf, size_t size, int rank, const hsize_t *v, int brackets);
void h5_format_dims(char *buf, size_t size, int rank, const hsize_t *dims);

/* The next chunk origin after `origin` (row-major over the chunk grid); 0 after the last
 * (io/h5_check.c). */
int h5_next_chunk(const mr_h5_dataset_info *info, hsize_t *origin);

/* The stored size of the chunk at `origin` (its position "[0][64]" into at[96]); a chunk the index does
 * not have is missing, an error (io/h5_check.c). */
mr_status h5_chunk_size(hid_t ds, const mr_h5_dataset_info *info, const char *path, const char *name,
                        const hsize_t *origin, hsize_t *size, char *at);

#endif
