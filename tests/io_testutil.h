/* Helpers shared by the I/O tests (tests/test_io_*.c) and the fuzz seed writer (tests/fuzz/):
 * scratch files, keeping copies of the files a test builds as a fuzzing seed corpus, and
 * rewriting a float32 dataset with other storage (chunks, filters, byte order) through the plain
 * HDF5 API. Header-only because each test is built from its own source plus testutil.c. */
#ifndef MR_IO_TESTUTIL_H
#define MR_IO_TESTUTIL_H

#include <dirent.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/kspace_h5.h"
#include "testutil.h"

/* Remove the plain files of a scratch directory (one level) and the directory itself. */
static inline void io_test_rmdir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char p[2048];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (remove(p) != 0)
            rmdir(p);
    }
    closedir(d);
    rmdir(dir);
}

/* 1 when a path exists. */
static inline int io_test_exists(const char *path) { return access(path, F_OK) == 0; }

/* Two float arrays of n values bit for bit, or both absent. */
static inline int io_test_same_floats(const float *a, const float *b, size_t n)
{
    return (!a && !b) || (a && b && memcmp(a, b, n * sizeof(float)) == 0);
}

/* The first part in which two scans differ (every field: sizes, arrays bit for bit, metadata), or NULL
 * when they are the same. */
static inline const char *io_test_scan_diff(const mr_kspace *a, const mr_kspace *b)
{
    if (!a || !b)
        return "a scan is missing";
    if (memcmp(a->matrix, b->matrix, sizeof a->matrix) || a->nsamples != b->nsamples || a->ncoils != b->ncoils)
        return "sizes";
    const size_t m = (size_t)a->nsamples, c = (size_t)a->ncoils, nv = (size_t)mr_kspace_voxels(a);
    if (memcmp(a->fov_mm, b->fov_mm, sizeof a->fov_mm))
        return "fov_mm";
    if (!io_test_same_floats(a->traj, b->traj, 3 * m))
        return "traj";
    if (!io_test_same_floats(a->data, b->data, 2 * m * c))
        return "data";
    if (!io_test_same_floats(a->weights, b->weights, m))
        return "weights";
    if (!io_test_same_floats(a->truth, b->truth, nv) || !io_test_same_floats(a->truth_bl, b->truth_bl, nv))
        return "truth";
    if (!io_test_same_floats(a->sens, b->sens, 2 * c * nv))
        return "sens";
    if (strcmp(a->traj_kind, b->traj_kind) || strcmp(a->phantom, b->phantom))
        return "traj_kind or phantom";
    if (memcmp(&a->noise_sigma, &b->noise_sigma, sizeof a->noise_sigma) ||
        memcmp(&a->snr_db, &b->snr_db, sizeof a->snr_db) || a->noise_seed != b->noise_seed)
        return "noise";
    return NULL;
}

/* Number of entries of dir whose name starts with prefix (to find stray temporary files). */
static inline int io_test_count_prefix(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
            n++;
    closedir(d);
    return n;
}

/* Write a valid random 2D scan to path: matrix nx x ny, m samples (|k| within the Nyquist box),
 * c coils of normal data, weights, truth images when `truth`, trajectory kind "random2d". The scan
 * is returned in *out (owned by the caller) or freed when out is NULL. */
static inline void io_test_write_scan(const char *path, uint64_t *rng, int nx, int ny, int m, int c, int truth,
                                      mr_kspace **out)
{
    const int64_t matrix[3] = {nx, ny, 1};
    mr_kspace *ks = NULL;
    CHECK_OK(mr_kspace_create(&ks, matrix, m, c));
    CHECK_OK(mr_kspace_alloc_weights(ks));
    if (truth)
        CHECK_OK(mr_kspace_alloc_truth(ks));
    for (int i = 0; i < m * 3; i++)
        ks->traj[i] = (float)(nx * (test_uniform(rng) - 0.5));
    for (int i = 0; i < m * c * 2; i++)
        ks->data[i] = (float)test_normal(rng);
    for (int i = 0; i < m; i++)
        ks->weights[i] = (float)test_uniform(rng);
    for (int i = 0; truth && i < nx * ny; i++)
        ks->truth[i] = ks->truth_bl[i] = (float)test_uniform(rng);
    snprintf(ks->traj_kind, sizeof ks->traj_kind, "random2d");
    CHECK_OK(mr_kspace_write(path, ks));
    if (out)
        *out = ks;
    else
        mr_kspace_free(ks);
}

/* Copy file src to dst; 0 on success. */
static inline int io_test_copy(const char *src, const char *dst)
{
    FILE *in = fopen(src, "rb"), *out = in ? fopen(dst, "wb") : NULL;
    int rc = in && out ? 0 : -1;
    char buf[65536];
    size_t n;
    while (rc == 0 && in && (n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            rc = -1;
    if (in)
        fclose(in);
    if (out && fclose(out) != 0)
        rc = -1;
    return rc;
}

/* Seed-corpus directory given on a test's command line (argv[1]), or NULL: created, and emptied of
 * the files a previous run kept there. */
static inline const char *io_test_keep_dir(int argc, char **argv)
{
    if (argc < 2)
        return NULL;
    const char *dir = argv[1];
    char part[2048];
    snprintf(part, sizeof part, "%s", dir);
    for (char *c = part + 1; *c; c++) /* mkdir -p */
        if (*c == '/') {
            *c = '\0';
            mkdir(part, 0777);
            *c = '/';
        }
    mkdir(dir, 0777);
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "cannot open the seed directory %s\n", dir);
        exit(1);
    }
    struct dirent *e;
    char p[2048];
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "ok-", 3) == 0 || strncmp(e->d_name, "bad-", 4) == 0) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            remove(p);
        }
    closedir(d);
    return dir;
}

/* Keep a copy of `path` as <dir>/<prefix><name>.h5 (prefix "ok-": the reader must accept it,
 * "bad-": it must refuse it; tests/fuzz/fuzz_driver.c checks both). No-op when dir is NULL. */
static inline void io_test_keep(const char *dir, const char *prefix, const char *name, const char *path)
{
    if (!dir)
        return;
    char dst[2048];
    snprintf(dst, sizeof dst, "%s/%s%s.h5", dir, prefix, name);
    if (io_test_copy(path, dst) != 0)
        fprintf(stderr, "cannot keep %s as %s\n", path, dst);
}

/* Make the open k-space file f one of another writer: remove the promise of a checksum on every dataset
 * (the /kspace attribute "checksum", io/h5util.h mr_h5_promise_checksums), so that a test can replace
 * a dataset with one stored otherwise. No-op when there is none. */
static inline void io_test_unpromise(hid_t f)
{
    if (H5Aexists_by_name(f, "/kspace", "checksum", H5P_DEFAULT) > 0)
        H5Adelete_by_name(f, "/kspace", "checksum", H5P_DEFAULT);
}

/* Replace the float32 dataset `name` of the open file f by one with the same values, stored with
 * the creation properties dcpl (H5P_DEFAULT: contiguous) as file type ftype (e.g.
 * H5T_IEEE_F32BE). Attributes of the dataset are not copied; without a fletcher32 filter in dcpl the
 * file's checksum promise goes (io_test_unpromise). 0 on success. */
static inline int io_test_rewrite(hid_t f, const char *name, hid_t dcpl, hid_t ftype)
{
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    hid_t s = d < 0 ? -1 : H5Dget_space(d);
    hssize_t n = s < 0 ? -1 : H5Sget_simple_extent_npoints(s);
    float *buf = n > 0 ? malloc((size_t)n * sizeof(float)) : NULL;
    int rc = buf && H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0 ? 0 : -1;
    if (d >= 0)
        H5Dclose(d);
    if (rc == 0 && H5Ldelete(f, name, H5P_DEFAULT) < 0)
        rc = -1;
    unsigned flags = 0, cd[4];
    size_t ncd = 4;
    if (dcpl == H5P_DEFAULT || H5Pget_filter_by_id2(dcpl, H5Z_FILTER_FLETCHER32, &flags, &ncd, cd, 0, NULL, NULL) < 0)
        io_test_unpromise(f); /* stored without a checksum: a file of another writer */
    d = rc == 0 ? H5Dcreate2(f, name, ftype, s, H5P_DEFAULT, dcpl, H5P_DEFAULT) : -1;
    if (d < 0 || H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
        rc = -1;
    if (d >= 0)
        H5Dclose(d);
    if (s >= 0)
        H5Sclose(s);
    free(buf);
    return rc;
}

/* A dataset creation property list: chunked with the given chunk dims, then the filters named by
 * the letters of `filters` in order ('s' shuffle, 'd' deflate level 6, 'f' fletcher32). */
static inline hid_t io_test_dcpl(int rank, const hsize_t *chunk, const char *filters)
{
    hid_t p = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(p, rank, chunk);
    for (const char *c = filters; *c; c++) {
        if (*c == 's')
            H5Pset_shuffle(p);
        else if (*c == 'd')
            H5Pset_deflate(p, 6);
        else if (*c == 'f')
            H5Pset_fletcher32(p);
    }
    return p;
}

/* Replace attribute `name` of obj by n elements (0: a scalar) of file type ftype, written from buf
 * as memory type mtype. 0 on success. */
static inline int io_test_set_attr(hid_t obj, const char *name, hid_t ftype, hid_t mtype, int n, const void *buf)
{
    if (H5Aexists(obj, name) > 0 && H5Adelete(obj, name) < 0)
        return -1;
    hsize_t dims[1] = {(hsize_t)n};
    hid_t s = n > 0 ? H5Screate_simple(1, dims, NULL) : H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(obj, name, ftype, s, H5P_DEFAULT, H5P_DEFAULT);
    int rc = a >= 0 && H5Awrite(a, mtype, buf) >= 0 ? 0 : -1;
    if (a >= 0)
        H5Aclose(a);
    H5Sclose(s);
    return rc;
}

/* Set the scalar string attribute `attr` of object `obj` to s, as variable-length (vlen 1) or
 * fixed-length (strlen bytes, NUL-padded) with character set cset, the way h5py writes str
 * (variable-length UTF-8) and numpy bytes (fixed-length ASCII). 0 on success. */
static inline int io_test_string_attr(hid_t obj, const char *attr, const char *s, int vlen, H5T_cset_t cset)
{
    if (H5Aexists(obj, attr) > 0 && H5Adelete(obj, attr) < 0)
        return -1;
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, vlen ? H5T_VARIABLE : (strlen(s) ? strlen(s) : 1));
    H5Tset_strpad(t, vlen ? H5T_STR_NULLTERM : H5T_STR_NULLPAD);
    H5Tset_cset(t, cset);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(obj, attr, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    int rc = a >= 0 && H5Awrite(a, t, vlen ? (const void *)&s : (const void *)s) >= 0 ? 0 : -1;
    if (a >= 0)
        H5Aclose(a);
    H5Sclose(sp);
    H5Tclose(t);
    return rc;
}

/* The integer attribute /kspace/version of an mrirecon k-space file; -1 when it cannot be read. */
static inline int io_file_version(const char *path)
{
    int32_t v = -1;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t g = H5Gopen2(f, "/kspace", H5P_DEFAULT);
    hid_t a = H5Aopen(g, "version", H5P_DEFAULT);
    if (H5Aread(a, H5T_NATIVE_INT32, &v) < 0)
        v = -1;
    H5Aclose(a);
    H5Gclose(g);
    H5Fclose(f);
    return v;
}

#endif
