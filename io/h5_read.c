/* Reading the values of a checked dataset (see h5util.h, mr_h5_dataset_read): filtered chunks go
 * through our own decoder (fletcher32, deflate capped at the chunk size, shuffle), never through
 * libhdf5's filters or plugins; in a reading child, float32 datasets are deferred instead: the child
 * records where their bytes are (the plan), and the parent reads and decodes them from its own
 * descriptor of the file (mr_h5_send_plan, mr_h5_recv_plan). This file owns the decoder and the
 * deferred reads. */
#include "h5util.h"
#include "h5util_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "../base/child.h"
#include "../base/parallel.h"

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
        if ((st = h5_chunk_size(ds, info, path, name, origin, &stored, c.at)) != MR_OK)
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
            h5_next_chunk(info, origin);
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
        h5_next_chunk(info, origin);
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

/* A reader's chunk buffers (each thread has its own). */
typedef struct {
    unsigned char *raw, *w[2];
    size_t raw_cap, w_cap[2];
} chunk_bufs;

static void chunk_bufs_free(chunk_bufs *b)
{
    free(b->w[1]);
    free(b->w[0]);
    free(b->raw);
}

/* One chunk of the plan: its stored bytes read at their offset, checked against the file's size and the
 * chunk's, unfiltered (checksum, inflate, shuffle), byte-swapped if need be and put in place in buf. */
static mr_status decode_extent(const plan_head *h, const plan_extent *e, int file_fd, uint64_t fsize,
                               const mr_h5_dataset_info *info, const char *label, const char *name, chunk_bufs *b,
                               float *buf)
{
    const size_t chunk_bytes = (size_t)h->chunk_bytes, raw_max = chunk_bytes + chunk_bytes / 16 + 4096;
    const size_t cap = chunk_bytes + 16;
    chunk_ctx c = {label, name, chunk_bytes, ""};
    if (e->offset > fsize || e->stored > fsize - e->offset)
        return mr_error(MR_EFORMAT, "%s: %s: %llu bytes at offset %llu lie outside the file (%llu bytes)", label, name,
                        (unsigned long long)e->stored, (unsigned long long)e->offset, (unsigned long long)fsize);
    h5_format_list(c.at, sizeof c.at, h->rank, e->origin, 1);
    if (e->stored > raw_max)
        return mr_error(MR_EFORMAT, "%s: %s: the chunk at %s stores %llu bytes, more than a %zu-byte chunk needs", label,
                        name, c.at, (unsigned long long)e->stored, chunk_bytes);
    if (!ensure(&b->raw, &b->raw_cap, (size_t)e->stored) || !ensure(&b->w[0], &b->w_cap[0], cap) ||
        !ensure(&b->w[1], &b->w_cap[1], cap))
        return mr_error(MR_ENOMEM, "%s: %s: out of memory for %zu-byte chunks", label, name, chunk_bytes);
    mr_status st = read_at(file_fd, b->raw, (size_t)e->stored, e->offset, label, name);
    const unsigned char *cur = b->raw;
    size_t len = (size_t)e->stored;
    for (int f = h->nfilters - 1; st == MR_OK && f >= 0; f--) {
        if (e->mask & (1u << f))
            continue;
        unsigned char *dst = cur == b->w[0] ? b->w[1] : b->w[0];
        st = unfilter((H5Z_filter_t)h->filter[f], 4, cur, &len, dst, cap, &cur, &c);
    }
    if (st == MR_OK && len != chunk_bytes)
        st = mr_error(MR_EFORMAT, "%s: %s: the chunk at %s decodes to %zu bytes, expected %zu", label, name, c.at, len,
                      chunk_bytes);
    if (st != MR_OK)
        return st;
    if (h->big_endian) {
        unsigned char *out = cur == b->w[1] ? b->w[1] : b->w[0];
        if (cur != out)
            memcpy(out, cur, chunk_bytes);
        swap32(out, chunk_bytes);
        cur = out;
    }
    scatter_chunk(info, e->origin, cur, sizeof(float), (unsigned char *)buf);
    return MR_OK;
}

/* The chunks of a plan on several threads (base/parallel.h: this runs in processes forked after
 * threads were used), each with its own buffers. */
#define MR_READ_THREADS 16
typedef struct {
    const plan_head *h;
    const plan_extent *ext;
    int file_fd;
    uint64_t fsize;
    const mr_h5_dataset_info *info;
    const char *label, *name;
    float *buf;
    chunk_bufs bufs[MR_READ_THREADS];
    unsigned char *failed;
} decode_job;

static int decode_one(void *ctx, int64_t k, int slot)
{
    decode_job *j = ctx;
    if (decode_extent(j->h, &j->ext[k], j->file_fd, j->fsize, j->info, j->label, j->name, &j->bufs[slot], j->buf) !=
        MR_OK)
        j->failed[k] = 1;
    return 0;
}

/* Every chunk of the plan, on up to MR_READ_THREADS threads (checksums and copies are most of a large
 * read's time). A chunk that failed is decoded again here, in order: the first that fails again gives
 * the message (the one the chunks in turn would give); one that now succeeds (memory was short on a
 * thread) is in place. */
static mr_status decode_extents(const plan_head *h, const plan_extent *ext, int file_fd, uint64_t fsize,
                                const mr_h5_dataset_info *info, const char *label, const char *name, float *buf)
{
    const int64_t n = (int64_t)h->nextents;
    decode_job j = {h, ext, file_fd, fsize, info, label, name, buf, {{NULL, {NULL, NULL}, 0, {0, 0}}},
                    calloc((size_t)n, 1)};
    if (!j.failed)
        return mr_error(MR_ENOMEM, "%s: out of memory", label);
    const int nth = mr_par_for(n, MR_READ_THREADS, decode_one, &j);
    mr_status st = MR_OK;
    for (int64_t k = 0; st == MR_OK && k < n; k++)
        if (j.failed[k])
            st = decode_extent(h, &ext[k], file_fd, fsize, info, label, name, &j.bufs[0], buf);
    for (int t = 0; t < nth; t++)
        chunk_bufs_free(&j.bufs[t]);
    free(j.failed);
    return st;
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
    if (h.chunked) {
        st = decode_extents(&h, ext, file_fd, fsize, &info, label, name, buf);
    } else if (ext[0].offset > fsize || ext[0].stored > fsize - ext[0].offset) {
        st = mr_error(MR_EFORMAT, "%s: %s: %llu bytes at offset %llu lie outside the file (%llu bytes)", label, name,
                      (unsigned long long)ext[0].stored, (unsigned long long)ext[0].offset, (unsigned long long)fsize);
    } else if (ext[0].stored != n * sizeof(float)) {
        st = mr_error(MR_EINTERNAL, "%s: %s: the reading process sent a damaged plan", label, name);
    } else if ((st = read_at(file_fd, buf, (size_t)ext[0].stored, ext[0].offset, label, name)) == MR_OK &&
               h.big_endian) {
        swap32((unsigned char *)buf, (size_t)ext[0].stored);
    }
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
