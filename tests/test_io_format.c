/* The k-space file format: write/read round trips (all optional parts, none), the on-disk layout
 * checked with the HDF5 API independently of our reader, the writer's refusals, image files. */
#include <hdf5.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/h5util.h"
#include "io/image_h5.h"
#include "io/kspace_h5.h"
#include "io_testutil.h"
#include "testutil.h"

static uint64_t rng;

static void fill_normal(float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (float)test_normal(&rng);
}

static int64_t rand_between(int64_t lo, int64_t hi) { return lo + (int64_t)(test_uniform(&rng) * (double)(hi - lo + 1)); }

static mr_kspace *random_scan(int optional_parts, int is3d)
{
    int64_t matrix[3] = {rand_between(4, 24), rand_between(4, 24), is3d ? rand_between(2, 9) : 1};
    int64_t m = rand_between(1, 400), c = rand_between(1, 4);
    mr_kspace *ks = NULL;
    CHECK_OK(mr_kspace_create(&ks, matrix, m, c));
    if (!ks)
        return NULL;
    fill_normal(ks->traj, (size_t)m * 3);
    fill_normal(ks->data, (size_t)(m * c) * 2);
    if (!optional_parts)
        return ks;
    CHECK_OK(mr_kspace_alloc_weights(ks));
    CHECK_OK(mr_kspace_alloc_truth(ks));
    for (int64_t i = 0; i < m; i++)
        ks->weights[i] = (float)test_uniform(&rng);
    fill_normal(ks->truth, (size_t)mr_kspace_voxels(ks));
    fill_normal(ks->truth_bl, (size_t)mr_kspace_voxels(ks));
    for (int a = 0; a < 3; a++)
        ks->fov_mm[a] = (float)(100 + 200 * test_uniform(&rng));
    snprintf(ks->traj_kind, sizeof ks->traj_kind, "%s", is3d ? "kooshball" : "spiral2d");
    snprintf(ks->phantom, sizeof ks->phantom, "shepp-logan-%s \"quoted\"", is3d ? "3d" : "2d");
    ks->noise_sigma = test_uniform(&rng);
    ks->snr_db = 40 * test_uniform(&rng);
    ks->noise_seed = (uint64_t)1 << 63 | (uint64_t)rand_between(0, 1 << 30);
    return ks;
}

static void check_same(const mr_kspace *a, const mr_kspace *b)
{
    const char *diff = io_test_scan_diff(a, b);
    if (diff)
        fprintf(stderr, "the scans differ in: %s\n", diff);
    CHECK(diff == NULL);
}

/* Attribute `name` of obj read as memtype into buf with plain HDF5; 1 on success. */
static int attr_get(hid_t obj, const char *name, hid_t memtype, void *buf)
{
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    int ok = a >= 0 && H5Aread(a, memtype, buf) >= 0;
    if (a >= 0)
        H5Aclose(a);
    return ok;
}

/* Fixed-length string attribute into buf (NUL-terminated); its stored size, or -1. */
static long attr_string(hid_t obj, const char *name, char *buf, size_t size)
{
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    hid_t t = a >= 0 ? H5Aget_type(a) : H5I_INVALID_HID;
    long len = t >= 0 && H5Tget_class(t) == H5T_STRING ? (long)H5Tget_size(t) : -1;
    memset(buf, 0, size);
    if (len < 0 || (size_t)len >= size || H5Aread(a, t, buf) < 0)
        len = -1;
    if (t >= 0)
        H5Tclose(t);
    if (a >= 0)
        H5Aclose(a);
    return len;
}

/* The file as docs/FORMAT.md describes it, read with plain HDF5 calls. */
static void check_layout(const char *path, const mr_kspace *ks)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(f >= 0);
    hid_t d = H5Dopen2(f, "/kspace/traj", H5P_DEFAULT);
    hid_t t = H5Dget_type(d), s = H5Dget_space(d);
    hsize_t dims[3];
    CHECK(H5Tget_class(t) == H5T_FLOAT && H5Tget_size(t) == 4);
    CHECK(H5Sget_simple_extent_dims(s, dims, NULL) == 2 && dims[0] == (hsize_t)ks->nsamples && dims[1] == 3);
    H5Tclose(t);
    H5Sclose(s);
    H5Dclose(d);
    d = H5Dopen2(f, "/kspace/data", H5P_DEFAULT);
    s = H5Dget_space(d);
    CHECK(H5Sget_simple_extent_dims(s, dims, NULL) == 3 && dims[0] == (hsize_t)ks->ncoils &&
          dims[1] == (hsize_t)ks->nsamples && dims[2] == 2);
    H5Sclose(s);
    H5Dclose(d);
    hid_t g = H5Gopen2(f, "/kspace", H5P_DEFAULT);
    int32_t matrix[3] = {0, 0, 0}, version = 0;
    hid_t a = H5Aopen(g, "matrix", H5P_DEFAULT);
    t = H5Aget_type(a);
    CHECK(H5Tget_class(t) == H5T_INTEGER && H5Tget_size(t) == 4);
    H5Tclose(t);
    H5Aclose(a);
    CHECK(attr_get(g, "matrix", H5T_NATIVE_INT32, matrix));
    CHECK(matrix[0] == ks->matrix[0] && matrix[1] == ks->matrix[1] && matrix[2] == ks->matrix[2]);
    CHECK(attr_get(g, "version", H5T_NATIVE_INT32, &version) && version == 1);
    char fmt[32];
    CHECK(attr_string(g, "format", fmt, sizeof fmt) == (long)strlen("mrirecon-kspace"));
    CHECK(strcmp(fmt, "mrirecon-kspace") == 0);
    H5Gclose(g);
    if (ks->truth) {
        d = H5Dopen2(f, "/truth/image", H5P_DEFAULT);
        s = H5Dget_space(d);
        CHECK(H5Sget_simple_extent_dims(s, dims, NULL) == 3 && dims[0] == (hsize_t)ks->matrix[2] &&
              dims[1] == (hsize_t)ks->matrix[1] && dims[2] == (hsize_t)ks->matrix[0]);
        H5Sclose(s);
        H5Dclose(d);
    }
    H5Fclose(f);
}

static void round_trip(const char *dir, const char *name, int optional_parts, int is3d)
{
    char path[1024], tmp[1100];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    mr_kspace *ks = random_scan(optional_parts, is3d), *back = NULL;
    if (!ks)
        return;
    CHECK_OK(mr_kspace_write(path, ks));
    snprintf(tmp, sizeof tmp, "%s/.%s.tmp%ld", dir, name, (long)getpid());
    CHECK(!io_test_exists(tmp));
    CHECK_OK(mr_kspace_read(path, &back));
    printf("round trip %s: matrix %lldx%lldx%lld, M %lld, C %lld, optional parts %d\n", name,
           (long long)ks->matrix[0], (long long)ks->matrix[1], (long long)ks->matrix[2], (long long)ks->nsamples,
           (long long)ks->ncoils, optional_parts);
    if (back) {
        check_same(ks, back);
        if (!optional_parts) { /* absent attributes read back as the "unknown" values */
            CHECK(back->noise_sigma < 0 && back->fov_mm[0] == 0 && back->traj_kind[0] == 0 && back->phantom[0] == 0);
            CHECK(!back->weights && !back->truth && !back->truth_bl);
        }
    }
    check_layout(path, ks);
    mr_kspace_free(back);
    mr_kspace_free(ks);
}

static void writer_refusals(const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/refused.h5", dir);
    mr_kspace *ks = random_scan(1, 0);
    if (!ks)
        return;
    ks->data[5] = NAN;
    CHECK(mr_kspace_write(path, ks) != MR_OK);
    printf("NaN data refused: %s\n", mr_last_error());
    CHECK(strstr(mr_last_error(), "/kspace/data") != NULL);
    ks->data[5] = 0;
    ks->weights[0] = -1;
    CHECK(mr_kspace_write(path, ks) != MR_OK);
    printf("negative weight refused: %s\n", mr_last_error());
    CHECK(!io_test_exists(path));
    ks->weights[0] = 1;
    char bad[1100];
    snprintf(bad, sizeof bad, "%s/no-such-dir/x.h5", dir);
    CHECK(mr_kspace_write(bad, ks) == MR_EIO);
    printf("unwritable directory: %s\n", mr_last_error());
    CHECK(strstr(mr_last_error(), bad) != NULL);
    /* final name is a directory: the rename fails and the temporary file is removed */
    char asdir[1100], tmp[1200];
    snprintf(asdir, sizeof asdir, "%s/adir.h5", dir);
    mkdir(asdir, 0777);
    CHECK(mr_kspace_write(asdir, ks) == MR_EIO);
    printf("final name is a directory: %s\n", mr_last_error());
    snprintf(tmp, sizeof tmp, "%s/.adir.h5.tmp%ld", dir, (long)getpid());
    CHECK(!io_test_exists(tmp));
    rmdir(asdir);
    mr_kspace_free(ks);
}

static void image_round_trip(const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/image.h5", dir);
    const int64_t matrix[3] = {rand_between(3, 20), rand_between(3, 20), rand_between(1, 5)};
    size_t n = (size_t)(matrix[0] * matrix[1] * matrix[2]) * 2;
    float *img = malloc(n * sizeof(float));
    if (!img)
        return;
    fill_normal(img, n);
    const mr_image_attr attrs[] = {{"time_solve_s", 1.25}, {"lambda", 1e-3}};
    const float fov[3] = {240.0f, 200.0f, matrix[2] > 1 ? 30.0f : 0.0f};
    const mr_image_meta meta = {"cg", 17, attrs, 2, fov, NULL};
    CHECK_OK(mr_image_h5_write(path, img, matrix, &meta));
    float *back = NULL;
    int64_t m2[3] = {0, 0, 0};
    CHECK_OK(mr_image_h5_read(path, &back, m2));
    CHECK(memcmp(matrix, m2, sizeof m2) == 0);
    CHECK(back && memcmp(img, back, n * sizeof(float)) == 0);
    /* attributes, read with plain HDF5 */
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, "/image", H5P_DEFAULT);
    double v = 0;
    int32_t it = 0;
    char method[16];
    CHECK(attr_get(d, "lambda", H5T_NATIVE_DOUBLE, &v) && v == 1e-3);
    CHECK(attr_get(d, "iterations", H5T_NATIVE_INT32, &it) && it == 17);
    CHECK(attr_string(d, "method", method, sizeof method) == 2 && strcmp(method, "cg") == 0);
    /* the geometry: fov_mm and voxel_size_mm = fov / matrix, {x, y, z} */
    double fv[3] = {0, 0, 0}, vx[3] = {0, 0, 0};
    CHECK_OK(mr_h5_attr_read(d, path, "/image", "fov_mm", H5T_FLOAT, H5T_NATIVE_DOUBLE, fv, 3, NULL));
    CHECK_OK(mr_h5_attr_read(d, path, "/image", "voxel_size_mm", H5T_FLOAT, H5T_NATIVE_DOUBLE, vx, 3, NULL));
    for (int a = 0; a < 3; a++) {
        CHECK(fv[a] == (double)fov[a]);
        CHECK(fabs(vx[a] - (double)fov[a] / (double)matrix[a]) <= 1e-12 * fv[a]);
    }
    printf("image geometry: fov %g x %g x %g mm, voxel %g x %g x %g mm\n", fv[0], fv[1], fv[2], vx[0], vx[1], vx[2]);
    H5Dclose(d);
    H5Fclose(f);
    printf("image round trip: %lldx%lldx%lld, method '%s', iterations %d, lambda %g\n", (long long)matrix[0],
           (long long)matrix[1], (long long)matrix[2], method, it, v);
    /* a k-space file is not an image file, and vice versa */
    float *none = NULL;
    int64_t m3[3];
    char kpath[1024];
    snprintf(kpath, sizeof kpath, "%s/full2d.h5", dir);
    CHECK(mr_image_h5_read(kpath, &none, m3) == MR_EFORMAT && none == NULL);
    printf("k-space file as image: %s\n", mr_last_error());
    mr_kspace *ks = NULL;
    CHECK(mr_kspace_read(path, &ks) == MR_EFORMAT && ks == NULL);
    printf("image file as k-space: %s\n", mr_last_error());
    const mr_image_attr dup[] = {{"x", 1}, {"x", 2}};
    const mr_image_meta bad = {"cg", 1, dup, 2, NULL, NULL};
    CHECK(mr_image_h5_write(path, img, matrix, &bad) == MR_EINVAL);
    const mr_image_attr reserved[] = {{"fov_mm", 1}};
    const mr_image_meta bad2 = {"cg", 1, reserved, 1, NULL, NULL};
    CHECK(mr_image_h5_write(path, img, matrix, &bad2) == MR_EINVAL);
    /* no field of view: no geometry attributes */
    const mr_image_meta plain = {"cg", 1, attrs, 2, NULL, NULL};
    CHECK_OK(mr_image_h5_write(path, img, matrix, &plain));
    f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    d = H5Dopen2(f, "/image", H5P_DEFAULT);
    CHECK(H5Aexists(d, "fov_mm") == 0 && H5Aexists(d, "voxel_size_mm") == 0);
    H5Dclose(d);
    H5Fclose(f);
    free(back);
    free(img);
}

/* A file as another tool (h5py) might write it: variable-length string attributes, int64 matrix,
 * float32 noise attributes, big-endian float32 data, no format/version attributes. */
static void foreign_writer(const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/foreign.h5", dir);
    enum { FM = 7 };
    float traj[FM][3], data[1][FM][2];
    fill_normal(&traj[0][0], FM * 3);
    fill_normal(&data[0][0][0], FM * 2);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t g = H5Gcreate2(f, "/kspace", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const hsize_t td[2] = {FM, 3}, dd[3] = {1, FM, 2}, three[1] = {3};
    hid_t s = H5Screate_simple(2, td, NULL);
    hid_t d = H5Dcreate2(f, "/kspace/traj", H5T_IEEE_F32BE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, traj) >= 0);
    H5Dclose(d);
    H5Sclose(s);
    s = H5Screate_simple(3, dd, NULL);
    d = H5Dcreate2(f, "/kspace/data", H5T_IEEE_F32LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
    H5Dclose(d);
    H5Sclose(s);
    const int64_t matrix[3] = {16, 12, 1};
    s = H5Screate_simple(1, three, NULL);
    hid_t a = H5Acreate2(g, "matrix", H5T_STD_I64LE, s, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(H5Awrite(a, H5T_NATIVE_INT64, matrix) >= 0);
    H5Aclose(a);
    H5Sclose(s);
    hid_t vs = H5Tcopy(H5T_C_S1);
    H5Tset_size(vs, H5T_VARIABLE);
    const char *kind = "radial2d";
    s = H5Screate(H5S_SCALAR);
    a = H5Acreate2(g, "trajectory", vs, s, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(H5Awrite(a, vs, &kind) >= 0);
    H5Aclose(a);
    const float sigma = 0.25f, snr = 20.0f;
    a = H5Acreate2(g, "noise_sigma", H5T_IEEE_F32LE, s, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(H5Awrite(a, H5T_NATIVE_FLOAT, &sigma) >= 0);
    H5Aclose(a);
    a = H5Acreate2(g, "snr_db", H5T_IEEE_F32LE, s, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(H5Awrite(a, H5T_NATIVE_FLOAT, &snr) >= 0);
    H5Aclose(a);
    H5Sclose(s);
    H5Tclose(vs);
    H5Gclose(g);
    H5Fclose(f);
    mr_kspace *ks = NULL;
    CHECK_OK(mr_kspace_read(path, &ks));
    if (!ks)
        return;
    CHECK(ks->matrix[0] == 16 && ks->matrix[1] == 12 && ks->matrix[2] == 1 && ks->nsamples == FM && ks->ncoils == 1);
    CHECK(memcmp(ks->traj, traj, sizeof traj) == 0 && memcmp(ks->data, data, sizeof data) == 0);
    CHECK(strcmp(ks->traj_kind, "radial2d") == 0 && ks->noise_sigma == 0.25 && ks->snr_db == 20.0);
    printf("foreign file: vlen trajectory '%s', int64 matrix, big-endian traj, sigma %g, snr %g dB\n", ks->traj_kind,
           ks->noise_sigma, ks->snr_db);
    mr_kspace_free(ks);
}

int main(void)
{
    rng = test_seed();
    const char *dir = test_tmpdir("io_format");
    round_trip(dir, "full2d.h5", 1, 0);
    round_trip(dir, "full3d.h5", 1, 1);
    round_trip(dir, "bare2d.h5", 0, 0);
    round_trip(dir, "bare3d.h5", 0, 1);
    writer_refusals(dir);
    image_round_trip(dir);
    foreign_writer(dir);
    CHECK(io_test_count_prefix(dir, ".") == 2); /* only "." and "..": no temporary file left behind */
    io_test_rmdir(dir);
    return test_finish("test_io_format");
}
