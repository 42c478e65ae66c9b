/* The dataset safety check (see h5util.h, mr_h5_dataset_check): before a reader allocates anything
 * from a dataset's sizes, its layout, filters, datatype, dataspace, chunks and stored bytes are checked
 * against what the header declares. This file owns that check and the chunk lookups it shares with the
 * reading of filtered chunks (io/h5_read.c, through io/h5util_internal.h). */
#include "h5util.h"
#include "h5util_internal.h"

#include <string.h>

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
            h5_format_dims(d, sizeof d, cr, info->chunk);
            return mr_error(MR_EFORMAT, "%s: %s: impossible chunk dims %s", path, name, d);
        }
    }
    if (!mul_bounded(elems, info->type_size, &info->chunk_bytes) || info->chunk_bytes > MR_H5_MAX_CHUNK_BYTES) {
        h5_format_dims(d, sizeof d, cr, info->chunk);
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
int h5_next_chunk(const mr_h5_dataset_info *info, hsize_t *origin)
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
mr_status h5_chunk_size(hid_t ds, const mr_h5_dataset_info *info, const char *path, const char *name,
                       const hsize_t *origin, hsize_t *size, char *at)
{
    h5_format_list(at, 96, info->rank, origin, 1);
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
    h5_format_dims(d, sizeof d, info->rank, info->dims);
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
            mr_status st = h5_chunk_size(ds, info, path, name, origin, &size, at);
            if (st != MR_OK)
                return st;
            if (size != info->chunk_bytes)
                return mr_error(MR_EFORMAT, "%s: %s: the unfiltered chunk at %s stores %llu bytes, not %llu", path, name,
                                at, (unsigned long long)size, (unsigned long long)info->chunk_bytes);
        } while (h5_next_chunk(info, origin));
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
            h5_format_dims(d, sizeof d, r, info.dims);
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
