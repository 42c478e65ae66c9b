/* The k-space reader against malformed files: each case starts from a valid file written by
 * mr_kspace_write and breaks one thing with the plain HDF5 API (or by bytes). Every case must be
 * rejected with a non-empty message naming the file (and the dataset or attribute at fault), with
 * *out left NULL.
 *   test_io_malformed [DIR]: also keeps every file it built in DIR (ok-valid.h5, bad-<case>.h5),
 *   the malformed part of the fuzzing seed corpus (tests/fuzz/, docs/FUZZING.md). */
#include <hdf5.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/kspace_h5.h"
#include "io_testutil.h"
#include "testutil.h"

#define NX 8
#define NY 6
#define M 50
#define C 2

static uint64_t rng;

/* ---- mutations (the file is open read-write; g is /kspace) --------------------------------- */

/* n zero doubles (the memory type of every replacement) */
static void *zeros(size_t n) { return calloc(n ? n : 1, sizeof(double)); }

/* Replace dataset `name` by one of the given file type and dims, filled with zeros of memtype
 * unless `write` is 0 (declared but never written). */
static void replace_ds(hid_t f, const char *name, hid_t ftype, hid_t mtype, int rank, const hsize_t *dims, int write)
{
    if (H5Lexists(f, name, H5P_DEFAULT) > 0)
        CHECK(H5Ldelete(f, name, H5P_DEFAULT) >= 0);
    hid_t s = rank > 0 ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR);
    hid_t d = H5Dcreate2(f, name, ftype, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(d >= 0);
    if (write) {
        size_t n = 1;
        for (int i = 0; i < rank; i++)
            n *= (size_t)dims[i];
        void *buf = zeros(n);
        CHECK(H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
        free(buf);
    }
    H5Dclose(d);
    H5Sclose(s);
}

/* Set element `at` of a float dataset to v. */
static void poke(hid_t f, const char *name, size_t at, float v)
{
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT), s = H5Dget_space(d);
    size_t n = (size_t)H5Sget_simple_extent_npoints(s);
    float *buf = malloc(n * sizeof(float));
    CHECK(H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
    buf[at] = v;
    CHECK(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
    free(buf);
    H5Sclose(s);
    H5Dclose(d);
}

/* Replace attribute `name` of g by n (0: scalar) values of type ftype from buf (memtype mtype). */
static void set_attr(hid_t g, const char *name, hid_t ftype, hid_t mtype, int n, const void *buf)
{
    CHECK(io_test_set_attr(g, name, ftype, mtype, n, buf) == 0);
}

static void no_data(hid_t f, hid_t g) { (void)g; CHECK(H5Ldelete(f, "/kspace/data", H5P_DEFAULT) >= 0); }
static void no_traj(hid_t f, hid_t g) { (void)g; CHECK(H5Ldelete(f, "/kspace/traj", H5P_DEFAULT) >= 0); }
static void no_group(hid_t f, hid_t g) { (void)g; CHECK(H5Ldelete(f, "/kspace", H5P_DEFAULT) >= 0); }
static void data_nan(hid_t f, hid_t g) { (void)g; poke(f, "/kspace/data", (size_t)(1 * M + 3) * 2, NAN); }
static void traj_inf(hid_t f, hid_t g) { (void)g; poke(f, "/kspace/traj", 7 * 3 + 1, INFINITY); }
static void weights_negative(hid_t f, hid_t g) { (void)g; poke(f, "/kspace/weights", 11, -0.5f); }
static void truth_bl_nan(hid_t f, hid_t g) { (void)g; poke(f, "/truth/bandlimited", 5, NAN); }
static void matrix_missing(hid_t f, hid_t g) { (void)f; CHECK(H5Adelete(g, "matrix") >= 0); }
static void format_other(hid_t f, hid_t g)
{
    (void)f;
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, 7);
    set_attr(g, "format", t, t, 0, "ismrmrd");
    H5Tclose(t);
}

typedef void (*mutation)(hid_t file, hid_t kspace_group);
typedef enum { T_NONE, T_F32, T_F64, T_I32 } dtype;

/* Replace a dataset (ds != NULL) or a /kspace attribute (attr != NULL) by one of type t, rank
 * (datasets; 0 = scalar) or n elements (attributes; 0 = scalar), dims, values (attributes). A
 * dataset is zero-filled unless unwritten is set. */
typedef struct {
    const char *ds, *attr;
    dtype t;
    int rank;
    hsize_t dims[3];
    double values[3];
    int unwritten;
} replacement;

typedef struct {
    const char *name;
    mutation mutate; /* or NULL: apply rep */
    replacement rep;
    const char *names; /* text the message must contain besides the path */
} bad_case;

#define DS(path, t, rank, d0, d1, d2) {path, NULL, t, rank, {d0, d1, d2}, {0, 0, 0}, 0}
#define ATTR(name, t, n, v0, v1, v2) {NULL, name, t, n, {0, 0, 0}, {v0, v1, v2}, 0}
#define NOREP {NULL, NULL, T_NONE, 0, {0, 0, 0}, {0, 0, 0}, 0}

static const bad_case cases[] = {
    {"missing-data", no_data, NOREP, "/kspace/data"},
    {"missing-traj", no_traj, NOREP, "/kspace/traj"},
    {"missing-group", no_group, NOREP, "/kspace"},
    {"traj-rank1", NULL, DS("/kspace/traj", T_F32, 1, M * 3, 0, 0), "/kspace/traj"},
    {"traj-scalar", NULL, DS("/kspace/traj", T_F32, 0, 0, 0, 0), "/kspace/traj"},
    {"traj-dims", NULL, DS("/kspace/traj", T_F32, 2, M, 2, 0), "/kspace/traj"},
    {"traj-int32", NULL, DS("/kspace/traj", T_I32, 2, M, 3, 0), "/kspace/traj"},
    {"data-float64", NULL, DS("/kspace/data", T_F64, 3, C, M, 2), "/kspace/data"},
    {"data-m-mismatch", NULL, DS("/kspace/data", T_F32, 3, C, M + 1, 2), "/kspace/data"},
    {"data-last-dim-3", NULL, DS("/kspace/data", T_F32, 3, C, M, 3), "/kspace/data"},
    {"data-1025-coils", NULL, DS("/kspace/data", T_F32, 3, 1025, M, 2), "/kspace/data"},
    /* a header that claims 2^30 samples the file does not hold: rejected before any allocation */
    {"traj-unwritten-2^30", NULL, {"/kspace/traj", NULL, T_F32, 2, {(hsize_t)1 << 30, 3, 0}, {0, 0, 0}, 1},
     "/kspace/traj"},
    {"data-nan", data_nan, NOREP, "/kspace/data"},
    {"traj-inf", traj_inf, NOREP, "/kspace/traj"},
    {"weights-negative", weights_negative, NOREP, "/kspace/weights"},
    {"weights-short", NULL, DS("/kspace/weights", T_F32, 1, M - 1, 0, 0), "/kspace/weights"},
    {"truth-shape", NULL, DS("/truth/image", T_F32, 3, 1, NY, NX + 1), "/truth/image"},
    {"truth-bl-nan", truth_bl_nan, NOREP, "/truth/bandlimited"},
    {"matrix-100000^3", NULL, ATTR("matrix", T_I32, 3, 100000, 100000, 100000), "matrix"},
    {"matrix-zero", NULL, ATTR("matrix", T_I32, 3, NX, 0, 1), "matrix"},
    {"matrix-2-elements", NULL, ATTR("matrix", T_I32, 2, NX, NY, 0), "matrix"},
    {"matrix-float", NULL, ATTR("matrix", T_F32, 3, NX, NY, 1), "matrix"},
    {"matrix-missing", matrix_missing, NOREP, "matrix"},
    {"format-other", format_other, NOREP, "format"},
    {"version-4", NULL, ATTR("version", T_I32, 0, 4, 0, 0), "version"},
    {"noise-sigma-nan", NULL, ATTR("noise_sigma", T_F64, 0, NAN, 0, 0), "noise_sigma"},
};

static hid_t file_type(dtype t)
{
    return t == T_F64 ? H5T_IEEE_F64LE : t == T_I32 ? H5T_STD_I32LE : H5T_IEEE_F32LE;
}

static void apply(hid_t f, hid_t g, const replacement *r)
{
    if (r->ds)
        replace_ds(f, r->ds, file_type(r->t), H5T_NATIVE_DOUBLE, r->rank, r->dims, !r->unwritten);
    else
        set_attr(g, r->attr, file_type(r->t), H5T_NATIVE_DOUBLE, r->rank, r->values);
}

/* ---- the valid file everything starts from ------------------------------------------------- */

static void write_valid(const char *path)
{
    mr_kspace *ks = NULL;
    io_test_write_scan(path, &rng, NX, NY, M, C, 1, &ks);
    if (!ks)
        return;
    /* and the noise attributes */
    ks->noise_sigma = 0.1;
    CHECK_OK(mr_kspace_write(path, ks));
    mr_kspace_free(ks);
}

static int rejected;

/* Read `path`, expect a failure naming the path (and `names`). */
static void expect_rejected(const char *label, const char *path, const char *names)
{
    static int sentinel;
    mr_kspace *ks = (mr_kspace *)&sentinel;
    mr_clear_error();
    mr_status st = mr_kspace_read(path, &ks);
    const char *msg = mr_last_error();
    printf("%-22s -> %s: %s\n", label, mr_strerror(st), msg);
    int ok = st != MR_OK && ks == NULL && msg[0] && strstr(msg, path) && (!names || strstr(msg, names));
    CHECK(st != MR_OK);
    CHECK(ks == NULL);
    CHECK(msg[0] != '\0');
    CHECK(strstr(msg, path) != NULL);
    if (names)
        CHECK(strstr(msg, names) != NULL);
    if (st == MR_OK)
        mr_kspace_free(ks);
    rejected += ok;
}

static void write_bytes(const char *path, const void *buf, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f)
        return;
    CHECK(fwrite(buf, 1, n, f) == n);
    fclose(f);
}

int main(int argc, char **argv)
{
    const char *keep = io_test_keep_dir(argc, argv);
    rng = test_seed();
    const char *dir = test_tmpdir("io_malformed");
    char path[1024];
    int ncases = 0;

    snprintf(path, sizeof path, "%s/valid.h5", dir);
    write_valid(path);
    mr_kspace *ks = NULL;
    CHECK_OK(mr_kspace_read(path, &ks)); /* the starting point is valid */
    mr_kspace_free(ks);
    io_test_keep(keep, "ok-", "valid", path);

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(path, sizeof path, "%s/%s.h5", dir, cases[i].name);
        write_valid(path);
        hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
        hid_t g = H5Gopen2(f, "/kspace", H5P_DEFAULT);
        CHECK(f >= 0 && g >= 0);
        io_test_unpromise(f); /* the case stores datasets its own way (no checksum promise) */
        if (cases[i].mutate)
            cases[i].mutate(f, g);
        else
            apply(f, g, &cases[i].rep);
        H5Gclose(g);
        H5Fclose(f);
        expect_rejected(cases[i].name, path, cases[i].names);
        io_test_keep(keep, "bad-", cases[i].name, path);
        ncases++;
    }

    /* /kspace is a dataset, not a group */
    snprintf(path, sizeof path, "%s/kspace-dataset.h5", dir);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const hsize_t d1[1] = {4};
    replace_ds(f, "/kspace", H5T_IEEE_F32LE, H5T_NATIVE_DOUBLE, 1, d1, 1);
    H5Fclose(f);
    expect_rejected("kspace-is-dataset", path, "/kspace");
    io_test_keep(keep, "bad-", "kspace-is-dataset", path);
    ncases++;

    /* a valid file cut in half */
    char valid[1024];
    snprintf(valid, sizeof valid, "%s/valid.h5", dir);
    FILE *in = fopen(valid, "rb");
    CHECK(in != NULL);
    if (in) {
        fseek(in, 0, SEEK_END);
        long size = ftell(in);
        fseek(in, 0, SEEK_SET);
        char *buf = malloc((size_t)size);
        CHECK(buf && fread(buf, 1, (size_t)size, in) == (size_t)size);
        fclose(in);
        snprintf(path, sizeof path, "%s/truncated.h5", dir);
        write_bytes(path, buf, (size_t)size / 2);
        printf("truncated %ld bytes to %ld\n", size, size / 2);
        expect_rejected("truncated-half", path, NULL);
        io_test_keep(keep, "bad-", "truncated-half", path);
        ncases++;
        free(buf);
    }

    snprintf(path, sizeof path, "%s/text.h5", dir);
    const char *text = "this is not an HDF5 file\n";
    write_bytes(path, text, strlen(text));
    expect_rejected("text-file", path, NULL);
    io_test_keep(keep, "bad-", "text-file", path);
    ncases++;

    snprintf(path, sizeof path, "%s/empty.h5", dir);
    write_bytes(path, "", 0);
    expect_rejected("empty-file", path, NULL);
    io_test_keep(keep, "bad-", "empty-file", path);
    ncases++;

    snprintf(path, sizeof path, "%s/does-not-exist.h5", dir);
    expect_rejected("nonexistent", path, NULL);
    ncases++;

    snprintf(path, sizeof path, "%s/a-directory.h5", dir);
    mkdir(path, 0777);
    expect_rejected("directory", path, NULL);
    rmdir(path);
    ncases++;

    /* a named pipe must be refused, not opened (opening it would block until a writer appears) */
    snprintf(path, sizeof path, "%s/fifo.h5", dir);
    if (mkfifo(path, 0666) == 0) {
        expect_rejected("fifo", path, NULL);
        ncases++;
    }

    printf("%d of %d malformed files rejected with a message naming the file and the culprit\n", rejected, ncases);
    CHECK_GE("malformed cases", ncases, 12);
    CHECK_GE("rejected as expected", rejected, ncases);
    io_test_rmdir(dir);
    return test_finish("test_io_malformed");
}
