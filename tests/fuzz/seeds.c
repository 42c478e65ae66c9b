/* Writes the valid part of the fuzzing seed corpus (the malformed and hostile parts come from
 * tests/test_io_malformed.c and tests/test_io_hostile.c, given a directory):
 *   fuzz_seeds ROOT
 * ROOT/kspace-valid/ok-*.h5: small scans of every trajectory kind, 2D and 3D, with and without
 *   weights and truth, several coils, noise attributes, and the same scan stored every way the
 *   reader accepts (chunked, shuffle/deflate/fletcher32 pipelines, big-endian, UTF-8 and
 *   variable-length strings);
 * ROOT/image/ok-*.h5 and bad-*.h5: image files, valid ones in each storage and broken ones;
 * ROOT/ismrmrd/ok-*.h5 and bad-*.h5 (only when built with libismrmrd, which writes them): ISMRMRD
 *   files of radial 2D scans with one and several coils and noise scans, 3D kooshball, stack of
 *   stars, spiral and golden-angle, trajectories in each unit and sign, several slices,
 *   repetitions and averages, discarded samples, an oversampled readout; and the malformed files
 *   of tests/test_ismrmrd_malformed.c (ism_corruptions).
 * Every file is read back here with the reader, so the corpus is known to be what its names say. */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "io/h5util.h"
#include "io/image_h5.h"
#include "io/input.h"
#include "io/kspace_h5.h"
#include "io_testutil.h"
#include "ismrmrd_testutil.h"
#include "phantoms/scan.h"
#include "testutil.h"

static char kdir[512], idir[512];
#ifdef MR_HAVE_ISMRMRD
static char mdir[512];
#endif
static int nwritten;

/* Small sampling of each kind (a few hundred samples at most), so that seeds stay a few KiB. */
static void small_traj(mr_traj_params *t, mr_traj_kind kind)
{
    const int is3d = mr_traj_kind_is_3d(kind);
    const int64_t matrix[3] = {is3d ? 6 : 8, is3d ? 6 : 8, is3d ? 4 : 1};
    mr_traj_params_default(t, kind, matrix);
    t->spokes = kind == MR_TRAJ_KOOSHBALL ? 10 : is3d ? 3 : 6;
    t->readout = is3d ? 6 : 8;
    t->interleaves = 2;
    t->partitions = 4;
    t->samples = 40;
    if (kind == MR_TRAJ_SPIRAL2D || kind == MR_TRAJ_STACK_OF_SPIRALS)
        t->readout = 12;
}

/* Write ks as ROOT/kspace-valid/ok-<name>.h5 and check that the reader accepts it. */
static void keep_scan(const mr_kspace *ks, const char *name, char *path, size_t size)
{
    snprintf(path, size, "%s/ok-%s.h5", kdir, name);
    CHECK_OK(mr_kspace_write(path, ks));
    mr_kspace *back = NULL;
    CHECK_OK(mr_kspace_read(path, &back));
    mr_kspace_free(back);
    nwritten++;
}

/* Copy the valid scan `src` to ok-<name>.h5 and change its storage with `change`. */
static void variant(const char *src, const char *name, void (*change)(hid_t f, const void *arg), const void *arg)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/ok-%s.h5", kdir, name);
    CHECK(io_test_copy(src, path) == 0);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    CHECK(f >= 0);
    change(f, arg);
    H5Fclose(f);
    mr_kspace *back = NULL;
    CHECK_OK(mr_kspace_read(path, &back));
    mr_kspace_free(back);
    nwritten++;
}

static const char *const datasets[] = {"/kspace/traj", "/kspace/data", "/kspace/weights", "/truth/image",
                                       "/truth/bandlimited"};

/* arg: the filter letters of io_test_dcpl; chunks of about a third of each dimension (edge chunks) */
static void chunked(hid_t f, const void *arg)
{
    for (size_t i = 0; i < sizeof datasets / sizeof datasets[0]; i++) {
        if (H5Lexists(f, datasets[i], H5P_DEFAULT) <= 0)
            continue;
        hid_t d = H5Dopen2(f, datasets[i], H5P_DEFAULT), s = H5Dget_space(d);
        hsize_t dims[3], chunk[3];
        int r = H5Sget_simple_extent_dims(s, dims, NULL);
        H5Sclose(s);
        H5Dclose(d);
        for (int k = 0; k < r; k++)
            chunk[k] = dims[k] > 2 ? (dims[k] + 2) / 3 : dims[k];
        hid_t dcpl = io_test_dcpl(r, chunk, arg);
        CHECK(io_test_rewrite(f, datasets[i], dcpl, H5T_IEEE_F32LE) == 0);
        H5Pclose(dcpl);
    }
}

static void big_endian(hid_t f, const void *arg)
{
    (void)arg;
    for (size_t i = 0; i < sizeof datasets / sizeof datasets[0]; i++)
        if (H5Lexists(f, datasets[i], H5P_DEFAULT) > 0)
            CHECK(io_test_rewrite(f, datasets[i], H5P_DEFAULT, H5T_IEEE_F32BE) == 0);
}

/* arg: "vlen-utf8", "fixed-utf8", "vlen-ascii" */
static void strings(hid_t f, const void *arg)
{
    const char *how = arg;
    const int vlen = strncmp(how, "vlen", 4) == 0;
    const H5T_cset_t cset = strstr(how, "utf8") ? H5T_CSET_UTF8 : H5T_CSET_ASCII;
    hid_t g = H5Gopen2(f, "/kspace", H5P_DEFAULT);
    CHECK(io_test_string_attr(g, "format", "mrirecon-kspace", vlen, cset) == 0);
    CHECK(io_test_string_attr(g, "trajectory", "radial2d", vlen, cset) == 0);
    CHECK(io_test_string_attr(g, "phantom", cset == H5T_CSET_UTF8 ? "Shepp\xe2\x80\x93Logan \xce\xbc" : "shepp-logan",
                              vlen, cset) == 0);
    H5Gclose(g);
}

static void write_kspace_seeds(void)
{
    char path[1100], first2d[1100] = "";
    for (int k = 0; k < MR_TRAJ_COUNT; k++) {
        for (int opt = 0; opt < 4; opt++) {
            const int weights = opt & 1, truth = opt >> 1;
            /* every combination for radial2d and kooshball, none and all for the others */
            if (opt == 1 || opt == 2)
                if (k != MR_TRAJ_RADIAL2D && k != MR_TRAJ_KOOSHBALL)
                    continue;
            mr_scan_params p;
            mr_scan_params_default(&p);
            small_traj(&p.traj, (mr_traj_kind)k);
            p.weights = weights;
            p.truth = truth;
            p.noise = opt == 3;
            p.snr_db = 20;
            mr_kspace *ks = NULL;
            CHECK_OK(mr_scan_simulate(&p, &ks));
            if (!ks)
                continue;
            char name[128];
            snprintf(name, sizeof name, "%s-w%d-t%d", mr_traj_kind_name((mr_traj_kind)k), weights, truth);
            keep_scan(ks, name, path, sizeof path);
            if (k == MR_TRAJ_RADIAL2D && opt == 3)
                snprintf(first2d, sizeof first2d, "%s", path);
            mr_kspace_free(ks);
        }
    }
    /* several coils, and a file with no optional attribute at all */
    const int64_t matrix[3] = {5, 7, 3};
    mr_kspace *ks = NULL;
    uint64_t rng = 7;
    CHECK_OK(mr_kspace_create(&ks, matrix, 20, 3));
    if (ks) {
        for (int i = 0; i < 20 * 3; i++)
            ks->traj[i] = (float)(test_uniform(&rng) * 5 - 2.5);
        for (int i = 0; i < 20 * 3 * 2; i++)
            ks->data[i] = (float)test_normal(&rng);
        ks->noise_sigma = -1;
        keep_scan(ks, "3coils-bare", path, sizeof path);
        mr_kspace_free(ks);
    }
    if (!first2d[0])
        return;
    static const char *const pipelines[] = {"", "d", "sd", "sdf", "f", "fd", "s", "fsd"};
    for (size_t i = 0; i < sizeof pipelines / sizeof pipelines[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "chunked-%s", pipelines[i][0] ? pipelines[i] : "plain");
        variant(first2d, name, chunked, pipelines[i]);
    }
    variant(first2d, "big-endian", big_endian, NULL);
    variant(first2d, "strings-vlen-utf8", strings, "vlen-utf8");
    variant(first2d, "strings-fixed-utf8", strings, "fixed-utf8");
    variant(first2d, "strings-vlen-ascii", strings, "vlen-ascii");
}

/* ---- image files -------------------------------------------------------------------------- */

static void keep_image(const char *name, const int64_t matrix[3], const char *filters, hid_t ftype, float poison)
{
    char path[1100];
    const int ok = strncmp(name, "ok-", 3) == 0;
    snprintf(path, sizeof path, "%s/%s.h5", idir, name);
    const size_t n = (size_t)(matrix[0] * matrix[1] * matrix[2]) * 2;
    float *img = malloc(n * sizeof(float));
    uint64_t rng = 11;
    for (size_t i = 0; i < n; i++)
        img[i] = (float)test_normal(&rng);
    const mr_image_attr extra[1] = {{"time_solve_s", 0.5}};
    const mr_image_meta meta = {"cg", 7, extra, 1, NULL, NULL};
    CHECK_OK(mr_image_h5_write(path, img, matrix, &meta));
    if (filters || ftype != H5T_IEEE_F32LE || poison != 0) {
        hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
        /* the rewrite drops /image's attributes: put matrix back */
        const hsize_t chunk[4] = {1, (hsize_t)(matrix[1] + 1) / 2, (hsize_t)matrix[0], 2};
        hid_t dcpl = filters ? io_test_dcpl(4, chunk, filters) : H5Pcreate(H5P_DATASET_CREATE);
        CHECK(io_test_rewrite(f, "/image", dcpl, ftype) == 0);
        H5Pclose(dcpl);
        hid_t d = H5Dopen2(f, "/image", H5P_DEFAULT);
        const int32_t m32[3] = {(int32_t)matrix[0], (int32_t)matrix[1] + (poison < 0), (int32_t)matrix[2]};
        hsize_t three = 3;
        hid_t s = H5Screate_simple(1, &three, NULL);
        hid_t a = H5Acreate2(d, "matrix", H5T_STD_I32BE, s, H5P_DEFAULT, H5P_DEFAULT);
        CHECK(H5Awrite(a, H5T_NATIVE_INT32, m32) >= 0);
        H5Aclose(a);
        H5Sclose(s);
        if (poison > 0) {
            img[n / 2] = poison * (float)HUGE_VAL;
            CHECK(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, img) >= 0);
        }
        H5Dclose(d);
        H5Fclose(f);
    }
    free(img);
    float *back = NULL;
    int64_t m[3];
    mr_status st = mr_image_h5_read(path, &back, m);
    CHECK(ok ? st == MR_OK : st != MR_OK);
    free(back);
    nwritten++;
}

static void write_image_seeds(void)
{
    const int64_t m2[3] = {6, 5, 1}, m3[3] = {4, 3, 3};
    keep_image("ok-image-2d", m2, NULL, H5T_IEEE_F32LE, 0);
    keep_image("ok-image-3d", m3, NULL, H5T_IEEE_F32LE, 0);
    keep_image("ok-image-sdf", m2, "sdf", H5T_IEEE_F32LE, 0);
    keep_image("ok-image-big-endian", m3, "", H5T_IEEE_F32BE, 0);
    keep_image("bad-image-inf", m2, NULL, H5T_IEEE_F32LE, 1);
    keep_image("bad-image-matrix", m3, "d", H5T_IEEE_F32LE, -1);
}

/* ---- ISMRMRD files ------------------------------------------------------------------------- */

#ifdef MR_HAVE_ISMRMRD
/* Every volume of path read (1) or the file refused (0). */
static int ismrmrd_accepted(const char *path)
{
    mr_input *in = NULL;
    mr_status st = mr_input_open(path, NULL, &in);
    for (int v = 0; st == MR_OK && v < mr_input_nvolumes(in); v++) {
        mr_kspace *ks = NULL;
        st = mr_input_read(in, v, &ks);
        mr_kspace_free(ks);
    }
    mr_input_close(in);
    return st == MR_OK;
}

/* A small scan of `kind` with `coils` simulated coils (0: one, without maps) and its readout. */
static mr_kspace *ismrmrd_scan(mr_traj_kind kind, int64_t coils, int64_t *readout)
{
    mr_scan_params p;
    mr_scan_params_default(&p);
    small_traj(&p.traj, kind);
    p.truth = p.weights = 0;
    p.coils = coils;
    mr_kspace *ks = NULL;
    CHECK_OK(mr_scan_simulate(&p, &ks));
    if (!ks)
        return NULL;
    /* one acquisition per spoke or interleaf where that divides the samples, else all in one */
    *readout = p.traj.readout >= 1 && ks->nsamples % p.traj.readout == 0 ? p.traj.readout : ks->nsamples;
    if (*readout > 1024)
        for (int64_t r = 1024; r >= 1; r--)
            if (ks->nsamples % r == 0) {
                *readout = r;
                break;
            }
    return ks;
}

typedef struct {
    const char *name; /* ok-* accepted; bad-*: refused (units ambiguous on these small matrices) */
    mr_traj_kind kind;
    int64_t coils;
    int noise_acqs, slices, repetitions, averages, discard, oversample, sign;
    mr_traj_units units;
} ismrmrd_seed;

static void write_ismrmrd_seeds(void)
{
    static const ismrmrd_seed seeds[] = {
        {"ok-radial2d-1coil", MR_TRAJ_RADIAL2D, 0, 0, 1, 1, 1, 0, 1, 1, MR_UNITS_CYCLES},
        {"ok-radial2d-4coils-noise", MR_TRAJ_RADIAL2D, 4, 3, 1, 1, 1, 0, 1, 1, MR_UNITS_CYCLES},
        {"ok-radial2d-normalized", MR_TRAJ_RADIAL2D, 2, 2, 1, 1, 1, 0, 1, 1, MR_UNITS_NORMALIZED},
        {"bad-ambiguous-radial2d-radians", MR_TRAJ_RADIAL2D, 2, 0, 1, 1, 1, 0, 1, 1, MR_UNITS_RADIANS},
        {"ok-radial2d-per-m", MR_TRAJ_RADIAL2D, 2, 0, 1, 1, 1, 0, 1, 1, MR_UNITS_PER_M},
        {"ok-radial2d-sign", MR_TRAJ_RADIAL2D, 0, 0, 1, 1, 1, 0, 1, -1, MR_UNITS_CYCLES},
        {"ok-radial2d-slices-reps", MR_TRAJ_RADIAL2D, 2, 2, 2, 2, 1, 0, 1, 1, MR_UNITS_CYCLES},
        {"ok-radial2d-averages", MR_TRAJ_RADIAL2D, 0, 0, 1, 1, 2, 0, 1, 1, MR_UNITS_CYCLES},
        {"ok-radial2d-discard", MR_TRAJ_RADIAL2D, 2, 0, 1, 1, 1, 2, 1, 1, MR_UNITS_NORMALIZED},
        {"ok-radial2d-oversampled", MR_TRAJ_RADIAL2D, 0, 0, 1, 1, 1, 0, 2, 1, MR_UNITS_CYCLES},
        {"bad-ambiguous-golden2d-radians", MR_TRAJ_GOLDEN2D, 0, 0, 1, 1, 1, 0, 1, 1, MR_UNITS_RADIANS},
        {"ok-spiral2d-per-m", MR_TRAJ_SPIRAL2D, 2, 2, 1, 1, 1, 0, 1, 1, MR_UNITS_PER_M},
        {"bad-ambiguous-kooshball-3d", MR_TRAJ_KOOSHBALL, 2, 2, 1, 1, 1, 0, 1, 1, MR_UNITS_CYCLES},
        {"ok-kooshball-3d-normalized", MR_TRAJ_KOOSHBALL, 0, 0, 1, 1, 1, 0, 1, 1, MR_UNITS_NORMALIZED},
        {"ok-stack-of-stars-radians", MR_TRAJ_STACK_OF_STARS, 0, 0, 1, 1, 1, 0, 1, 1, MR_UNITS_RADIANS},
    };
    char path[1100];
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        const ismrmrd_seed *e = &seeds[i];
        int64_t readout = 0;
        mr_kspace *ks = ismrmrd_scan(e->kind, e->coils, &readout);
        if (!ks)
            continue;
        ism_opts o;
        ism_opts_default(&o);
        o.readout = readout;
        o.noise_acqs = e->noise_acqs;
        o.noise_rho = 0.3;
        o.slices = e->slices;
        o.repetitions = e->repetitions;
        o.averages = e->averages;
        o.discard_pre = o.discard_post = e->discard;
        o.oversample = e->oversample;
        o.sign = e->sign;
        o.units = e->units;
        snprintf(path, sizeof path, "%s/%s.h5", mdir, e->name);
        CHECK(ism_write(path, ks, &o) == 0);
        const int want = strncmp(e->name, "ok-", 3) == 0, got = ismrmrd_accepted(path);
        CHECK(got == want);
        if (got != want)
            fprintf(stderr, "%s: %s: %s\n", path, got ? "accepted" : "refused", got ? "" : mr_last_error());
        nwritten++;
        mr_kspace_free(ks);
    }
    /* the malformed files, from a 3-coil radial scan with noise scans */
    int64_t readout = 0;
    mr_kspace *ks = ismrmrd_scan(MR_TRAJ_RADIAL2D, 3, &readout);
    if (!ks)
        return;
    ism_opts o;
    ism_opts_default(&o);
    o.readout = readout;
    o.noise_acqs = 2;
    for (int k = 0; k < ISM_NCORRUPTIONS; k++) {
        /* a singular noise covariance is the read stage's refusal (recon/pipeline/volumes.c prewhitens), not the
         * reader's: the reader accepts that file, so it is an ok- seed */
        const int reader_ok = !strcmp(ism_corruptions[k].name, "noise-singular");
        snprintf(path, sizeof path, "%s/%s-%s.h5", mdir, reader_ok ? "ok" : "bad", ism_corruptions[k].name);
        CHECK(ism_write_corrupt(path, ks, &o, ism_corruptions[k].name) == 0);
        const int refused = !ismrmrd_accepted(path);
        CHECK(refused != reader_ok);
        if (refused == reader_ok)
            fprintf(stderr, "%s: %s\n", path, refused ? "refused" : "accepted");
        nwritten++;
    }
    mr_kspace_free(ks);
}
#endif

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: fuzz_seeds DIRECTORY\n");
        return 2;
    }
    mr_h5_quiet();
    mr_log_set_level(MR_LOG_ERROR);
    char *args[2] = {argv[0], kdir};
    snprintf(kdir, sizeof kdir, "%s/kspace-valid", argv[1]);
    snprintf(idir, sizeof idir, "%s/image", argv[1]);
    io_test_keep_dir(2, args);
    args[1] = idir;
    io_test_keep_dir(2, args);
    write_kspace_seeds();
    write_image_seeds();
#ifdef MR_HAVE_ISMRMRD
    snprintf(mdir, sizeof mdir, "%s/ismrmrd", argv[1]);
    args[1] = mdir;
    io_test_keep_dir(2, args);
    write_ismrmrd_seeds();
    printf("fuzz_seeds: %d files in %s, %s and %s\n", nwritten, kdir, idir, mdir);
#else
    printf("fuzz_seeds: %d files in %s and %s (no ISMRMRD seeds: built without libismrmrd, apt-get install "
           "libismrmrd-dev)\n",
           nwritten, kdir, idir);
#endif
    CHECK_GE("seed files", nwritten, 30);
    return test_finish("fuzz_seeds");
}
