/* Hostile HDF5 files (docs/FORMAT.md, "What is refused"): each case starts from a valid k-space
 * file and changes how one dataset or attribute is stored, with the plain HDF5 API, into a class
 * of file that makes HDF5 read other files, load plugins, allocate without bound, follow links or
 * convert odd types. The reader must refuse each bad-* case with a message naming the file, the
 * object and the reason, before HDF5 reads the data; it must never hang (cases whose link, external
 * file or virtual source is a named pipe would block in open(2) if HDF5 were allowed to follow
 * them). The ok-* cases are storage the reader must accept with the same values.
 *   test_io_hostile [DIR]: also keeps every file it built in DIR as a fuzzing seed. */
#include <hdf5.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "io/kspace_h5.h"
#include "io_testutil.h"
#include "testutil.h"

#define NX 8
#define NY 6
#define M 60
#define C 2

static uint64_t rng;
static char dir[512], fifo[600], other[600];
static const char *keep;
static int nbad, nok, refused_ok, accepted_ok;

static const float *valid_traj; /* the trajectory of the valid file, to compare accepted cases */

/* The same valid scan every time (the generator restarts from the test's seed). */
static void write_valid(const char *path, mr_kspace **out)
{
    static uint64_t seed;
    if (!seed)
        seed = rng;
    rng = seed;
    io_test_write_scan(path, &rng, NX, NY, M, C, 0, out);
}

/* ---- building blocks ----------------------------------------------------------------------- */

static void drop(hid_t f, const char *name)
{
    if (H5Lexists(f, name, H5P_DEFAULT) > 0)
        CHECK(H5Ldelete(f, name, H5P_DEFAULT) >= 0);
}

/* Create dataset `name` (replacing it) of type t, rank/dims, creation properties dcpl; write the
 * valid trajectory's values (as floats) when `write` and the sizes match. Returns 0 when HDF5
 * let us build it. */
static int make_ds(hid_t f, const char *name, hid_t t, int rank, const hsize_t *dims, hid_t dcpl, int write)
{
    drop(f, name);
    hid_t s = H5Screate_simple(rank, dims, NULL);
    hid_t d = H5Dcreate2(f, name, t, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    int rc = d >= 0 ? 0 : -1;
    if (d >= 0 && write)
        rc = H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, valid_traj) >= 0 ? 0 : -1;
    if (d >= 0)
        H5Dclose(d);
    H5Sclose(s);
    return rc;
}

static const hsize_t traj_dims[2] = {M, 3};

/* /kspace/traj as float32 [M][3] with dcpl, values written */
static int traj_with(hid_t f, hid_t dcpl) { return make_ds(f, "/kspace/traj", H5T_IEEE_F32LE, 2, traj_dims, dcpl, 1); }

/* /kspace/traj chunked in `nchunk` row blocks with the filters `filters` */
static hid_t traj_dcpl(const char *filters, hsize_t rows)
{
    const hsize_t chunk[2] = {rows, 3};
    return io_test_dcpl(2, chunk, filters);
}

/* Replace the raw bytes of the traj chunk at row `row` by buf[n] with filter mask `mask`. */
static int write_raw_chunk(hid_t f, hsize_t row, const void *buf, size_t n, uint32_t mask)
{
    hid_t d = H5Dopen2(f, "/kspace/traj", H5P_DEFAULT);
    const hsize_t off[2] = {row, 0};
    int rc = H5Dwrite_chunk(d, H5P_DEFAULT, mask, off, n, buf) >= 0 ? 0 : -1;
    H5Dclose(d);
    return rc;
}

/* zlib stream of n zero bytes (malloc'd), its length in *len */
static unsigned char *deflate_zeros(size_t n, size_t *len)
{
    unsigned char *zeros = calloc(n, 1);
    uLongf cap = compressBound((uLong)n);
    unsigned char *out = malloc(cap);
    CHECK(zeros && out && compress2(out, &cap, zeros, (uLong)n, 9) == Z_OK);
    free(zeros);
    *len = cap;
    return out;
}

/* ---- the cases ------------------------------------------------------------------------------ */

typedef int (*builder)(hid_t f, hid_t g); /* 0: built; 1: HDF5 cannot build it here (skipped) */

static int external_link(hid_t f, hid_t g)
{
    (void)g;
    drop(f, "/kspace/traj");
    return H5Lcreate_external(other, "/kspace/traj", f, "/kspace/traj", H5P_DEFAULT, H5P_DEFAULT) >= 0 ? 0 : -1;
}

static int external_link_fifo(hid_t f, hid_t g)
{
    (void)g;
    drop(f, "/kspace/traj");
    return H5Lcreate_external(fifo, "/kspace/traj", f, "/kspace/traj", H5P_DEFAULT, H5P_DEFAULT) >= 0 ? 0 : -1;
}

static int external_link_group(hid_t f, hid_t g)
{
    (void)g;
    /* the whole /kspace group lives in another (valid) file */
    CHECK(H5Lmove(f, "/kspace", f, "/moved", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    return H5Lcreate_external(other, "/kspace", f, "/kspace", H5P_DEFAULT, H5P_DEFAULT) >= 0 ? 0 : -1;
}

static int soft_link(hid_t f, hid_t g)
{
    (void)g;
    CHECK(H5Lmove(f, "/kspace/traj", f, "/kspace/traj_real", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    return H5Lcreate_soft("/kspace/traj_real", f, "/kspace/traj", H5P_DEFAULT, H5P_DEFAULT) >= 0 ? 0 : -1;
}

static int soft_link_cycle(hid_t f, hid_t g)
{
    (void)g;
    drop(f, "/kspace/traj");
    int rc = H5Lcreate_soft("/kspace/loop", f, "/kspace/traj", H5P_DEFAULT, H5P_DEFAULT) >= 0 ? 0 : -1;
    if (rc == 0)
        rc = H5Lcreate_soft("/kspace/traj", f, "/kspace/loop", H5P_DEFAULT, H5P_DEFAULT) >= 0 ? 0 : -1;
    return rc;
}

static int hard_link_cycle(hid_t f, hid_t g)
{
    (void)g;
    /* a group that contains itself and the root: harmless, nothing walks the tree */
    int rc = H5Lcreate_hard(f, "/", f, "/kspace/root", H5P_DEFAULT, H5P_DEFAULT) >= 0 ? 0 : -1;
    if (rc == 0)
        rc = H5Lcreate_hard(f, "/kspace", f, "/kspace/self", H5P_DEFAULT, H5P_DEFAULT) >= 0 ? 0 : -1;
    return rc;
}

static int hard_link_elsewhere(hid_t f, hid_t g)
{
    (void)g;
    /* /kspace/traj is a second hard link to a dataset stored under another name */
    CHECK(H5Lmove(f, "/kspace/traj", f, "/stored_traj", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    return H5Lcreate_hard(f, "/stored_traj", f, "/kspace/traj", H5P_DEFAULT, H5P_DEFAULT) >= 0 ? 0 : -1;
}

static int external_storage(hid_t f, hid_t g)
{
    (void)g;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    char raw[700];
    snprintf(raw, sizeof raw, "%s/traj.raw", dir);
    H5Pset_external(dcpl, raw, 0, M * 3 * 4);
    int rc = traj_with(f, dcpl);
    H5Pclose(dcpl);
    return rc;
}

static int external_storage_fifo(hid_t f, hid_t g)
{
    (void)g;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_external(dcpl, fifo, 0, M * 3 * 4);
    int rc = make_ds(f, "/kspace/traj", H5T_IEEE_F32LE, 2, traj_dims, dcpl, 0);
    H5Pclose(dcpl);
    return rc;
}

static int virtual_ds(hid_t f, hid_t g, const char *src)
{
    (void)g;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t vspace = H5Screate_simple(2, traj_dims, NULL), sspace = H5Screate_simple(2, traj_dims, NULL);
    int rc = H5Pset_virtual(dcpl, vspace, src, "/kspace/traj", sspace) >= 0 ? 0 : -1;
    if (rc == 0)
        rc = make_ds(f, "/kspace/traj", H5T_IEEE_F32LE, 2, traj_dims, dcpl, 0);
    H5Sclose(sspace);
    H5Sclose(vspace);
    H5Pclose(dcpl);
    return rc;
}
static int virtual_valid(hid_t f, hid_t g) { return virtual_ds(f, g, other); }
static int virtual_fifo(hid_t f, hid_t g) { return virtual_ds(f, g, fifo); }

/* an identity filter under a third-party id, registered only while writing */
static size_t identity(unsigned flags, size_t ncd, const unsigned cd[], size_t n, size_t *buf_size, void **buf)
{
    (void)flags, (void)ncd, (void)cd, (void)buf_size, (void)buf;
    return n;
}

static int third_party_filter(hid_t f, hid_t g)
{
    (void)g;
    const H5Z_class2_t cls = {H5Z_CLASS_T_VERS, 32000, 1, 1, "lzf (stand-in)", NULL, NULL, identity};
    if (H5Zregister(&cls) < 0)
        return -1;
    hid_t dcpl = traj_dcpl("", 20);
    H5Pset_filter(dcpl, 32000, H5Z_FLAG_MANDATORY, 0, NULL);
    int rc = traj_with(f, dcpl);
    H5Pclose(dcpl);
    H5Zunregister(32000);
    return rc;
}

static int builtin_filter(hid_t f, const char *which)
{
    hid_t dcpl = traj_dcpl("", 20);
    int rc = -1;
    if (strcmp(which, "szip") == 0) {
        if (H5Zfilter_avail(H5Z_FILTER_SZIP) <= 0) {
            H5Pclose(dcpl);
            return 1;
        }
        rc = H5Pset_szip(dcpl, H5_SZIP_NN_OPTION_MASK, 8);
    } else if (strcmp(which, "nbit") == 0) {
        rc = H5Pset_nbit(dcpl);
    } else {
        rc = H5Pset_scaleoffset(dcpl, H5Z_SO_FLOAT_DSCALE, 3);
    }
    if (rc >= 0)
        rc = traj_with(f, dcpl);
    H5Pclose(dcpl);
    return rc;
}
static int szip_filter(hid_t f, hid_t g) { (void)g; return builtin_filter(f, "szip"); }
static int nbit_filter(hid_t f, hid_t g) { (void)g; return builtin_filter(f, "nbit"); }
static int scaleoffset_filter(hid_t f, hid_t g) { (void)g; return builtin_filter(f, "scaleoffset"); }

static int deflate_twice(hid_t f, hid_t g)
{
    (void)g;
    hid_t dcpl = traj_dcpl("dd", 20);
    int rc = traj_with(f, dcpl);
    H5Pclose(dcpl);
    return rc;
}

/* One 20-row chunk (240 bytes) whose deflate stream inflates to `bytes`: a stream small enough to
 * be a plausible chunk is stopped while inflating; a large one already by its stored size. */
static int deflate_bomb(hid_t f, size_t bytes)
{
    hid_t dcpl = traj_dcpl("d", 20);
    int rc = traj_with(f, dcpl);
    H5Pclose(dcpl);
    size_t n;
    unsigned char *z = deflate_zeros(bytes, &n);
    if (rc == 0)
        rc = write_raw_chunk(f, 20, z, n, 0);
    free(z);
    return rc;
}

static int deflate_bomb_3mib(hid_t f, hid_t g) { (void)g; return deflate_bomb(f, (size_t)3 << 20); }
static int deflate_bomb_64mib(hid_t f, hid_t g) { (void)g; return deflate_bomb(f, (size_t)64 << 20); }

static int deflate_garbage(hid_t f, hid_t g)
{
    (void)g;
    hid_t dcpl = traj_dcpl("d", 20);
    int rc = traj_with(f, dcpl);
    H5Pclose(dcpl);
    unsigned char junk[64];
    for (int i = 0; i < 64; i++)
        junk[i] = (unsigned char)(37 * i + 11);
    junk[0] = 0x78, junk[1] = 0x9c; /* a zlib header, then nonsense */
    return rc ? rc : write_raw_chunk(f, 40, junk, sizeof junk, 0);
}

static int deflate_short(hid_t f, hid_t g)
{
    (void)g;
    hid_t dcpl = traj_dcpl("d", 20);
    int rc = traj_with(f, dcpl);
    H5Pclose(dcpl);
    size_t n;
    unsigned char *z = deflate_zeros(100, &n); /* a complete stream, but of 100 bytes, not 240 */
    if (rc == 0)
        rc = write_raw_chunk(f, 0, z, n, 0);
    free(z);
    return rc;
}

static int fletcher_wrong(hid_t f, hid_t g)
{
    (void)g;
    hid_t dcpl = traj_dcpl("f", 20);
    int rc = traj_with(f, dcpl);
    H5Pclose(dcpl);
    unsigned char raw[20 * 3 * 4 + 4];
    memcpy(raw, valid_traj + 20 * 3, 20 * 3 * 4);
    memset(raw + 240, 0x5a, 4);
    return rc ? rc : write_raw_chunk(f, 20, raw, sizeof raw, 0);
}

/* a filtered traj of 2^28 samples whose file holds only one 240-byte chunk */
static int deflate_ratio(hid_t f, hid_t g)
{
    (void)g;
    const hsize_t dims[2] = {(hsize_t)1 << 28, 3}, chunk[2] = {(hsize_t)1 << 18, 3};
    hid_t dcpl = io_test_dcpl(2, chunk, "d");
    H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
    int rc = make_ds(f, "/kspace/traj", H5T_IEEE_F32LE, 2, dims, dcpl, 0);
    H5Pclose(dcpl);
    const hsize_t ddims[3] = {C, (hsize_t)1 << 28, 2};
    hid_t dcpl2 = io_test_dcpl(3, (const hsize_t[3]){1, (hsize_t)1 << 18, 2}, "d");
    if (rc == 0)
        rc = make_ds(f, "/kspace/data", H5T_IEEE_F32LE, 3, ddims, dcpl2, 0);
    H5Pclose(dcpl2);
    drop(f, "/kspace/weights");
    size_t n;
    unsigned char *z = deflate_zeros(240, &n);
    if (rc == 0)
        rc = write_raw_chunk(f, 0, z, n, 0);
    free(z);
    return rc;
}

static int missing_chunk(hid_t f, hid_t g, const char *filters)
{
    (void)g;
    hid_t dcpl = traj_dcpl(filters, 20);
    int rc = make_ds(f, "/kspace/traj", H5T_IEEE_F32LE, 2, traj_dims, dcpl, 0);
    H5Pclose(dcpl);
    /* write rows 0..19 only */
    hid_t d = H5Dopen2(f, "/kspace/traj", H5P_DEFAULT), s = H5Dget_space(d);
    const hsize_t start[2] = {0, 0}, count[2] = {20, 3};
    H5Sselect_hyperslab(s, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t ms = H5Screate_simple(2, count, NULL);
    if (rc == 0)
        rc = H5Dwrite(d, H5T_NATIVE_FLOAT, ms, s, H5P_DEFAULT, valid_traj) >= 0 ? 0 : -1;
    H5Sclose(ms);
    H5Sclose(s);
    H5Dclose(d);
    return rc;
}
static int missing_chunk_plain(hid_t f, hid_t g) { return missing_chunk(f, g, ""); }
static int missing_chunk_deflate(hid_t f, hid_t g) { return missing_chunk(f, g, "d"); }

static int chunk_24mib(hid_t f, hid_t g)
{
    (void)g;
    const hsize_t dims[2] = {(hsize_t)1 << 21, 3};
    hid_t dcpl = io_test_dcpl(2, dims, "");
    int rc = make_ds(f, "/kspace/traj", H5T_IEEE_F32LE, 2, dims, dcpl, 0);
    H5Pclose(dcpl);
    return rc;
}

static int chunks_16m(hid_t f, hid_t g)
{
    (void)g;
    const hsize_t dims[2] = {(hsize_t)1 << 24, 3}, chunk[2] = {1, 3};
    hid_t dcpl = io_test_dcpl(2, chunk, "");
    int rc = make_ds(f, "/kspace/traj", H5T_IEEE_F32LE, 2, dims, dcpl, 0);
    H5Pclose(dcpl);
    return rc;
}

static int dims_overflow(hid_t f, hid_t g)
{
    (void)g;
    const hsize_t dims[3] = {(hsize_t)1 << 40, (hsize_t)1 << 40, 2}, chunk[3] = {1, 1 << 10, 2};
    hid_t dcpl = io_test_dcpl(3, chunk, "");
    int rc = make_ds(f, "/kspace/data", H5T_IEEE_F32LE, 3, dims, dcpl, 0);
    H5Pclose(dcpl);
    return rc < 0 ? 1 : 0;
}

static int zero_dims(hid_t f, hid_t g)
{
    (void)g;
    const hsize_t dims[2] = {0, 3}, maxd[2] = {H5S_UNLIMITED, 3}, chunk[2] = {16, 3};
    drop(f, "/kspace/traj");
    hid_t s = H5Screate_simple(2, dims, maxd), dcpl = io_test_dcpl(2, chunk, "d");
    hid_t d = H5Dcreate2(f, "/kspace/traj", H5T_IEEE_F32LE, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    int rc = d >= 0 ? 0 : -1;
    if (d >= 0)
        H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(s);
    return rc;
}

static int rank_9(hid_t f, hid_t g)
{
    (void)g;
    const hsize_t dims[9] = {1, 1, 1, 1, 1, 1, 1, M, 3};
    return make_ds(f, "/kspace/traj", H5T_IEEE_F32LE, 9, dims, H5P_DEFAULT, 1);
}

static int null_space(hid_t f, hid_t g)
{
    (void)g;
    drop(f, "/kspace/weights");
    hid_t s = H5Screate(H5S_NULL);
    hid_t d = H5Dcreate2(f, "/kspace/weights", H5T_IEEE_F32LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int rc = d >= 0 ? 0 : -1;
    if (d >= 0)
        H5Dclose(d);
    H5Sclose(s);
    return rc;
}

static int compound_traj(hid_t f, hid_t g)
{
    (void)g;
    hid_t t = H5Tcreate(H5T_COMPOUND, 12);
    H5Tinsert(t, "kx", 0, H5T_IEEE_F32LE);
    H5Tinsert(t, "ky", 4, H5T_IEEE_F32LE);
    H5Tinsert(t, "kz", 8, H5T_IEEE_F32LE);
    const hsize_t dims[2] = {M, 3};
    int rc = make_ds(f, "/kspace/traj", t, 2, dims, H5P_DEFAULT, 0);
    H5Tclose(t);
    return rc;
}

static int vlen_traj(hid_t f, hid_t g)
{
    (void)g;
    hid_t t = H5Tvlen_create(H5T_IEEE_F32LE);
    int rc = make_ds(f, "/kspace/traj", t, 2, traj_dims, H5P_DEFAULT, 0);
    H5Tclose(t);
    return rc;
}

static int array_traj(hid_t f, hid_t g)
{
    (void)g;
    const hsize_t three = 3, dims[2] = {M, 3};
    hid_t t = H5Tarray_create2(H5T_IEEE_F32LE, 1, &three);
    int rc = make_ds(f, "/kspace/traj", t, 2, dims, H5P_DEFAULT, 0);
    H5Tclose(t);
    return rc;
}

static int reference_traj(hid_t f, hid_t g)
{
    (void)g;
    return make_ds(f, "/kspace/traj", H5T_STD_REF_OBJ, 2, traj_dims, H5P_DEFAULT, 0);
}

/* a 4-byte float that is not IEEE binary32: 10-bit exponent, 21-bit mantissa */
static int odd_float_traj(hid_t f, hid_t g)
{
    (void)g;
    hid_t t = H5Tcopy(H5T_IEEE_F32LE);
    int rc = H5Tset_fields(t, 31, 21, 10, 0, 21) >= 0 && H5Tset_ebias(t, 511) >= 0 ? 0 : -1;
    if (rc == 0)
        rc = make_ds(f, "/kspace/traj", t, 2, traj_dims, H5P_DEFAULT, 1);
    H5Tclose(t);
    return rc;
}

static int committed_type(hid_t f, hid_t g, hid_t base)
{
    (void)g;
    hid_t t = H5Tcopy(base);
    int rc = H5Tcommit2(f, "/float_type", t, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) >= 0 ? 0 : -1;
    if (rc == 0)
        rc = make_ds(f, "/kspace/traj", t, 2, traj_dims, H5P_DEFAULT, H5Tget_class(base) == H5T_FLOAT);
    H5Tclose(t);
    return rc;
}
static int committed_float(hid_t f, hid_t g) { return committed_type(f, g, H5T_IEEE_F32BE); }
static int committed_int(hid_t f, hid_t g) { return committed_type(f, g, H5T_STD_I32LE); }

static int compact_traj(hid_t f, hid_t g)
{
    (void)g;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_layout(dcpl, H5D_COMPACT);
    int rc = traj_with(f, dcpl);
    H5Pclose(dcpl);
    return rc;
}

static int filtered_ok(hid_t f, const char *filters, hsize_t rows)
{
    hid_t dcpl = traj_dcpl(filters, rows);
    int rc = traj_with(f, dcpl);
    H5Pclose(dcpl);
    return rc;
}
static int chunked_sdf(hid_t f, hid_t g) { (void)g; return filtered_ok(f, "sdf", 7); }
static int chunked_fds(hid_t f, hid_t g) { (void)g; return filtered_ok(f, "fds", M); }

/* ---- attributes ---- */

static void set_attr(hid_t g, const char *name, hid_t t, int n, const void *buf)
{
    CHECK(io_test_set_attr(g, name, t, t, n, buf) == 0);
}

static int matrix_24bit(hid_t f, hid_t g)
{
    (void)f;
    hid_t t = H5Tcopy(H5T_STD_I32LE);
    H5Tset_precision(t, 24);
    const int32_t m[3] = {NX, NY, 1};
    set_attr(g, "matrix", t, 3, m);
    H5Tclose(t);
    return 0;
}

static int matrix_uint64_huge(hid_t f, hid_t g)
{
    (void)f;
    const uint64_t m[3] = {UINT64_MAX, NY, 1};
    set_attr(g, "matrix", H5T_STD_U64LE, 3, m);
    return 0;
}

static int matrix_be(hid_t f, hid_t g)
{
    (void)f;
    const int64_t m[3] = {NX, NY, 1};
    return io_test_set_attr(g, "matrix", H5T_STD_I64BE, H5T_NATIVE_INT64, 3, m);
}

static int sigma_half_float(hid_t f, hid_t g)
{
    (void)f;
    hid_t t = H5Tcopy(H5T_IEEE_F32LE);
    H5Tset_fields(t, 15, 10, 5, 0, 10);
    H5Tset_size(t, 2);
    H5Tset_ebias(t, 15);
    const float v = 0.5f;
    int rc = io_test_set_attr(g, "noise_sigma", t, H5T_NATIVE_FLOAT, 0, &v);
    H5Tclose(t);
    return rc;
}

static int matrix_compound(hid_t f, hid_t g)
{
    (void)f;
    hid_t t = H5Tcreate(H5T_COMPOUND, 8);
    H5Tinsert(t, "n", 0, H5T_NATIVE_INT64);
    const int64_t m[3] = {NX, NY, 1};
    set_attr(g, "matrix", t, 3, m);
    H5Tclose(t);
    return 0;
}

static int string_invalid_utf8(hid_t f, hid_t g)
{
    (void)f;
    return io_test_string_attr(g, "phantom", "shepp\xff\xfelogan", 1, H5T_CSET_UTF8);
}

static int string_control(hid_t f, hid_t g)
{
    (void)f;
    return io_test_string_attr(g, "trajectory", "radial\x1b[2J", 0, H5T_CSET_ASCII);
}

static int string_embedded_nul(hid_t f, hid_t g)
{
    (void)f;
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, 10);
    H5Tset_strpad(t, H5T_STR_NULLPAD);
    set_attr(g, "trajectory", t, 0, "radial\0xyz");
    H5Tclose(t);
    return 0;
}

static int string_array(hid_t f, hid_t g)
{
    (void)f;
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, 4);
    set_attr(g, "trajectory", t, 2, "abcdefgh");
    H5Tclose(t);
    return 0;
}

static int string_huge(hid_t f, hid_t g_old)
{
    /* a fixed-length string of 1 MiB needs dense attribute storage, which needs a version-2 object
     * header: /kspace is made again as a group of the HDF5 1.8 format (run_case opens this file
     * with those bounds), holding the old datasets and a matrix */
    (void)g_old;
    CHECK(H5Lmove(f, "/kspace", f, "/old", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    hid_t g = H5Gcreate2(f, "/kspace", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    static const char *const moved[] = {"traj", "data", "weights"};
    char from[64], to[64];
    for (int i = 0; i < 3; i++) {
        snprintf(from, sizeof from, "/old/%s", moved[i]);
        snprintf(to, sizeof to, "/kspace/%s", moved[i]);
        CHECK(H5Lmove(f, from, f, to, H5P_DEFAULT, H5P_DEFAULT) >= 0);
    }
    const int32_t m[3] = {NX, NY, 1};
    set_attr(g, "matrix", H5T_NATIVE_INT32, 3, m);
    const size_t n = (size_t)1 << 20;
    char *s = malloc(n);
    memset(s, 'x', n);
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, n);
    if (H5Aexists(g, "phantom") > 0)
        H5Adelete(g, "phantom");
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(g, "phantom", t, sp, H5P_DEFAULT, H5P_DEFAULT);
    int rc = a >= 0 && H5Awrite(a, t, s) >= 0 ? 0 : 1;
    if (a >= 0)
        H5Aclose(a);
    H5Sclose(sp);
    H5Tclose(t);
    H5Gclose(g);
    free(s);
    return rc;
}

typedef struct {
    const char *name;
    builder build;
    const char *names; /* NULL: must be accepted; else text the refusal must contain */
} hostile_case;

static const hostile_case cases[] = {
    {"external-link", external_link, "external link"},
    {"external-link-to-fifo", external_link_fifo, "external link"},
    {"external-link-group", external_link_group, "external link"},
    {"soft-link", soft_link, "soft link"},
    {"soft-link-cycle", soft_link_cycle, "soft link"},
    {"hard-link-cycle", hard_link_cycle, NULL},
    {"hard-link-elsewhere", hard_link_elsewhere, NULL},
    {"external-storage", external_storage, "external file"},
    {"external-storage-fifo", external_storage_fifo, "external file"},
    {"virtual-dataset", virtual_valid, "virtual dataset"},
    {"virtual-dataset-fifo", virtual_fifo, "virtual dataset"},
    {"third-party-filter", third_party_filter, "filter 32000"},
    {"szip-filter", szip_filter, "szip"},
    {"nbit-filter", nbit_filter, "nbit"},
    {"scaleoffset-filter", scaleoffset_filter, "scaleoffset"},
    {"deflate-twice", deflate_twice, "appears twice"},
    {"deflate-bomb-3MiB", deflate_bomb_3mib, "inflates to more than"},
    {"deflate-bomb-64MiB", deflate_bomb_64mib, "more than a 240-byte chunk needs"},
    {"deflate-garbage", deflate_garbage, "deflate stream"},
    {"deflate-short", deflate_short, "decodes to"},
    {"deflate-ratio", deflate_ratio, "deflate (at most 1032:1)"},
    {"fletcher32-wrong", fletcher_wrong, "fletcher32"},
    {"missing-chunk", missing_chunk_plain, "chunks"},
    {"missing-chunk-deflate", missing_chunk_deflate, "is missing"},
    {"chunk-24MiB", chunk_24mib, "16 MiB limit"},
    {"chunks-16M", chunks_16m, "chunks, more than"},
    {"dims-overflow", dims_overflow, "2^62"},
    {"zero-dims", zero_dims, "empty dimension"},
    {"null-dataspace", null_space, "null"},
    {"rank-9", rank_9, "rank 9"},
    {"compound-traj", compound_traj, "compound"},
    {"vlen-traj", vlen_traj, "variable-length"},
    {"array-traj", array_traj, "array"},
    {"reference-traj", reference_traj, "/kspace/traj"},
    {"odd-float-traj", odd_float_traj, "not IEEE binary32"},
    {"committed-float-be", committed_float, NULL},
    {"committed-int", committed_int, "integer"},
    {"compact-traj", compact_traj, NULL},
    {"chunked-sdf-edge", chunked_sdf, NULL},
    {"chunked-fds-one-big-chunk", chunked_fds, NULL},
    {"matrix-24-bit", matrix_24bit, "non-standard"},
    {"matrix-uint64-max", matrix_uint64_huge, "matrix"},
    {"matrix-big-endian", matrix_be, NULL},
    {"noise-sigma-half-float", sigma_half_float, "non-standard"},
    {"matrix-compound", matrix_compound, "compound"},
    {"string-invalid-utf8", string_invalid_utf8, "not valid UTF-8"},
    {"string-control-char", string_control, "control character"},
    {"string-embedded-nul", string_embedded_nul, "NUL byte"},
    {"string-array", string_array, "single string"},
    {"string-1MiB", string_huge, "more than 65536"},
};

static void run_case(const hostile_case *hc)
{
    char path[800];
    snprintf(path, sizeof path, "%s/%s.h5", dir, hc->name);
    write_valid(path, NULL);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (strstr(hc->name, "1MiB"))
        H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, fapl);
    H5Pclose(fapl);
    hid_t g = H5Gopen2(f, "/kspace", H5P_DEFAULT);
    CHECK(f >= 0 && g >= 0);
    io_test_unpromise(f); /* the case stores datasets its own way (no checksum promise) */
    int built = hc->build(f, g);
    H5Gclose(g);
    H5Fclose(f);
    if (built != 0) {
        printf("%-28s -> %s\n", hc->name, built > 0 ? "skipped (HDF5 cannot build it here)" : "BUILD FAILED");
        CHECK(built > 0);
        return;
    }
    static int sentinel;
    mr_kspace *ks = (mr_kspace *)&sentinel;
    mr_clear_error();
    mr_status st = mr_kspace_read(path, &ks);
    const char *msg = mr_last_error();
    printf("%-28s -> %s%s%s\n", hc->name, mr_strerror(st), st ? ": " : "", st ? msg : "");
    if (hc->names) {
        nbad++;
        int ok = st == MR_EFORMAT && ks == NULL && strstr(msg, path) && strstr(msg, hc->names);
        CHECK(st == MR_EFORMAT);
        CHECK(ks == NULL);
        CHECK(strstr(msg, path) != NULL);
        if (!strstr(msg, hc->names))
            fprintf(stderr, "%s: the message should contain '%s'\n", hc->name, hc->names);
        CHECK(strstr(msg, hc->names) != NULL);
        refused_ok += ok;
        io_test_keep(keep, "bad-", hc->name, path);
    } else {
        nok++;
        CHECK_OK(st);
        int same = st == MR_OK && ks && memcmp(ks->traj, valid_traj, sizeof(float) * M * 3) == 0;
        if (!same && st == MR_OK)
            fprintf(stderr, "%s: trajectory read back differs, first value %g (written %g)\n", hc->name,
                    (double)ks->traj[0], (double)valid_traj[0]);

        CHECK(same);
        accepted_ok += same;
        io_test_keep(keep, "ok-", hc->name, path);
    }
    if (st == MR_OK)
        mr_kspace_free(ks);
    /* the reader left nothing open */
    CHECK(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) == 0);
}

int main(int argc, char **argv)
{
    keep = io_test_keep_dir(argc, argv);
    rng = test_seed();
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    snprintf(dir, sizeof dir, "%s", test_tmpdir("io_hostile"));
    snprintf(fifo, sizeof fifo, "%s/pipe.h5", dir);
    snprintf(other, sizeof other, "%s/other.h5", dir);
    CHECK(mkfifo(fifo, 0666) == 0);
    mr_kspace *ks = NULL;
    write_valid(other, &ks);
    valid_traj = ks ? ks->traj : NULL;
    char raw[700];
    snprintf(raw, sizeof raw, "%s/traj.raw", dir);
    FILE *rf = fopen(raw, "wb");
    CHECK(rf && valid_traj && fwrite(valid_traj, 4, M * 3, rf) == M * 3);
    if (rf)
        fclose(rf);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(&cases[i]);
    printf("%d of %d hostile files refused as expected, %d of %d acceptable ones read back\n", refused_ok, nbad,
           accepted_ok, nok);
    CHECK_GE("hostile cases", nbad, 40);
    CHECK_GE("refused as expected", refused_ok, nbad);
    CHECK_GE("accepted as expected", accepted_ok, nok);
    mr_kspace_free(ks);
    io_test_rmdir(dir);
    return test_finish("test_io_hostile");
}
