/* Checksums on our own files (io/h5util.h mr_h5_write_f32, mr_h5_promise_checksums): every dataset the
 * k-space and image writers store is chunked with HDF5's fletcher32 filter and the file promises it, so
 *   - one changed byte of the data (the trajectory, the samples, a truth image, an image) is refused,
 *     naming the dataset and the chunk, where it was read as another number before;
 *   - a dataset stored again without the filter in a file that promises it is refused;
 *   - a promise of another kind is refused;
 *   - files without the promise (older files of ours, other writers: contiguous, no checksum) still read,
 *     bit for bit.
 * The damaged files are kept for the fuzzing seed corpus (bad-*, argv[1]). */
#include <stdlib.h>
#include <string.h>

#include "io/h5util.h"
#include "io/image_h5.h"
#include "io/kspace_h5.h"
#include "io_testutil.h"
#include "testutil.h"

static const char *keep;

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    *n = 0;
    if (f && fseek(f, 0, SEEK_END) == 0) {
        long len = ftell(f);
        buf = len > 0 ? malloc((size_t)len) : NULL;
        if (buf && fseek(f, 0, SEEK_SET) == 0 && fread(buf, 1, (size_t)len, f) == (size_t)len)
            *n = (size_t)len;
    }
    if (f)
        fclose(f);
    return buf;
}

static int spit(const char *path, const unsigned char *buf, size_t n)
{
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(buf, 1, n, f) == n;
    if (f)
        ok = fclose(f) == 0 && ok;
    return ok;
}

/* Copy src to dst with one bit changed inside the stored bytes of `values` (16 floats as the file stores
 * them, little endian): 1 when they were found. */
static int damage(const char *src, const char *dst, const float *values)
{
    size_t n;
    unsigned char *buf = slurp(src, &n);
    int found = 0;
    for (size_t i = 0; buf && i + 64 <= n && !found; i++)
        if (memcmp(buf + i, values, 64) == 0) {
            buf[i + 21] ^= 0x08; /* a mantissa bit of the 6th value: still a finite number */
            found = 1;
        }
    found = found && spit(dst, buf, n);
    free(buf);
    return found;
}

static void expect_refused(const char *label, mr_status st, const char *text)
{
    const char *msg = mr_last_error();
    printf("%-44s -> %s: %s\n", label, mr_strerror(st), msg);
    CHECK(st == MR_EFORMAT);
    if (!strstr(msg, text))
        fprintf(stderr, "%s: the message should contain '%s'\n", label, text);
    CHECK(strstr(msg, text) != NULL);
}

static int has_fletcher(hid_t f, const char *name)
{
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    hid_t p = d >= 0 ? H5Dget_create_plist(d) : -1;
    unsigned flags = 0, cd[4];
    size_t ncd = 4;
    int yes = p >= 0 && H5Pget_layout(p) == H5D_CHUNKED &&
              H5Pget_filter_by_id2(p, H5Z_FILTER_FLETCHER32, &flags, &ncd, cd, 0, NULL, NULL) >= 0;
    if (p >= 0)
        H5Pclose(p);
    if (d >= 0)
        H5Dclose(d);
    return yes;
}

static void kspace_files(const char *dir, uint64_t *rng)
{
    char path[700], bad[800];
    snprintf(path, sizeof path, "%s/scan.h5", dir);
    mr_kspace *ref = NULL;
    /* 40000 samples x 3 coils: several chunks of data (1 MiB each) and truth images */
    io_test_write_scan(path, rng, 48, 40, 40000, 3, 1, &ref);
    if (!ref)
        return;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    const char *names[] = {"/kspace/traj", "/kspace/data", "/kspace/weights", "/truth/image", "/truth/bandlimited"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        printf("%s: chunked with fletcher32: %s\n", names[i], has_fletcher(f, names[i]) ? "yes" : "NO");
        CHECK(has_fletcher(f, names[i]));
    }
    CHECK(H5Aexists_by_name(f, "/kspace", "checksum", H5P_DEFAULT) > 0);
    H5Fclose(f);

    /* one bit changed in the trajectory, in the last coil's samples (a later chunk), in a truth image */
    struct {
        const char *name, *dataset;
        const float *at;
    } hits[] = {{"traj", "/kspace/traj", ref->traj + 3 * 1000},
                {"data", "/kspace/data", ref->data + 2 * (2 * 40000 + 30000)},
                {"truth", "/truth/image", ref->truth + 100}};
    for (size_t i = 0; i < sizeof hits / sizeof hits[0]; i++) {
        snprintf(bad, sizeof bad, "%s/damaged-%s.h5", dir, hits[i].name);
        CHECK(damage(path, bad, hits[i].at));
        mr_kspace *ks = NULL;
        char label[80];
        snprintf(label, sizeof label, "one bit changed in %s", hits[i].dataset);
        mr_status st = mr_kspace_read(bad, &ks);
        expect_refused(label, st, "fails its fletcher32 checksum");
        CHECK(strstr(mr_last_error(), hits[i].dataset) != NULL);
        CHECK(ks == NULL);
        char kept[60];
        snprintf(kept, sizeof kept, "checksum-damaged-%s", hits[i].name);
        io_test_keep(keep, "bad-", kept, bad);
    }

    /* two damaged chunks of /kspace/data (read on all threads): the message is the first chunk's, the
     * one a read in order gives, whichever thread met which first */
    {
        char one[800], two[800], msg_one[600] = "", msg_two[600] = "";
        snprintf(one, sizeof one, "%s/damaged-first.h5", dir);
        snprintf(two, sizeof two, "%s/damaged-both.h5", dir);
        CHECK(damage(path, one, ref->data + 2 * 1000));
        CHECK(damage(one, two, ref->data + 2 * (2 * 40000 + 30000)));
        for (int round = 0; round < 3; round++) {
            mr_kspace *ks = NULL;
            mr_status st = mr_kspace_read(round == 0 ? one : two, &ks);
            expect_refused(round == 0 ? "one damaged chunk" : "two damaged chunks", st, "fails its fletcher32 checksum");
            CHECK(ks == NULL);
            const char *what = strstr(mr_last_error(), ": /kspace/"); /* after the file's name */
            snprintf(round == 0 ? msg_one : msg_two, sizeof msg_one, "%s", what ? what : "(no dataset named)");
            if (round > 0)
                CHECK(strcmp(msg_one, msg_two) == 0);
        }
    }

    /* a dataset stored again without the filter, the promise kept */
    snprintf(bad, sizeof bad, "%s/unchecked.h5", dir);
    CHECK(io_test_copy(path, bad) == 0);
    f = H5Fopen(bad, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t w = H5Dopen2(f, "/kspace/weights", H5P_DEFAULT);
    float *wv = malloc(40000 * sizeof(float));
    CHECK(wv && H5Dread(w, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, wv) >= 0);
    H5Dclose(w);
    CHECK(H5Ldelete(f, "/kspace/weights", H5P_DEFAULT) >= 0);
    const hsize_t wd[1] = {40000};
    hid_t s = H5Screate_simple(1, wd, NULL);
    w = H5Dcreate2(f, "/kspace/weights", H5T_IEEE_F32LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(w >= 0 && H5Dwrite(w, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, wv) >= 0);
    H5Dclose(w);
    H5Sclose(s);
    free(wv);
    H5Fclose(f);
    mr_kspace *ks = NULL;
    expect_refused("weights stored again without a checksum", mr_kspace_read(bad, &ks),
                   "/kspace/weights: stored without its fletcher32 checksum");
    io_test_keep(keep, "bad-", "checksum-dropped", bad);

    /* a promise of another kind */
    snprintf(bad, sizeof bad, "%s/promise.h5", dir);
    CHECK(io_test_copy(path, bad) == 0);
    f = H5Fopen(bad, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t g = H5Gopen2(f, "/kspace", H5P_DEFAULT);
    CHECK(H5Adelete(g, "checksum") >= 0);
    CHECK_OK(mr_h5_attr_write_string(g, bad, "checksum", "crc32"));
    H5Gclose(g);
    H5Fclose(f);
    expect_refused("a checksum promise of another kind", mr_kspace_read(bad, &ks), "'checksum' is 'crc32'");
    io_test_keep(keep, "bad-", "checksum-kind", bad);

    /* an older file of ours: contiguous, no checksums, no promise: read bit for bit */
    char old[800];
    snprintf(old, sizeof old, "%s/old.h5", dir);
    CHECK(io_test_copy(path, old) == 0);
    f = H5Fopen(old, H5F_ACC_RDWR, H5P_DEFAULT);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        CHECK(io_test_rewrite(f, names[i], H5P_DEFAULT, H5T_IEEE_F32LE) == 0);
    CHECK(H5Aexists_by_name(f, "/kspace", "checksum", H5P_DEFAULT) == 0);
    H5Fclose(f);
    CHECK_OK(mr_kspace_read(old, &ks));
    const char *diff = io_test_scan_diff(ks, ref);
    printf("a file without checksums (as older versions wrote): %s\n", diff ? diff : "read bit for bit");
    CHECK(diff == NULL);
    io_test_keep(keep, "ok-", "checksum-none", old);
    mr_kspace_free(ks);
    CHECK_OK(mr_kspace_read(path, &ks));
    CHECK(io_test_scan_diff(ks, ref) == NULL);
    io_test_keep(keep, "ok-", "checksum-fletcher32", path);
    mr_kspace_free(ks);
    mr_kspace_free(ref);
}

static void image_files(const char *dir, uint64_t *rng)
{
    char path[700], bad[800];
    snprintf(path, sizeof path, "%s/image.h5", dir);
    const int64_t m[3] = {64, 64, 40};
    const size_t n = 64 * 64 * 40 * 2;
    float *img = malloc(n * sizeof(float));
    for (size_t i = 0; img && i < n; i++)
        img[i] = (float)test_normal(rng);
    CHECK_OK(mr_image_h5_write(path, img, m, NULL));
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(has_fletcher(f, "/image"));
    H5Fclose(f);
    snprintf(bad, sizeof bad, "%s/image-damaged.h5", dir);
    CHECK(damage(path, bad, img + n - 100));
    float *back = NULL;
    int64_t mb[3];
    expect_refused("one bit changed in an image file", mr_image_h5_read(bad, &back, mb), "fails its fletcher32");
    CHECK(back == NULL);
    CHECK_OK(mr_image_h5_read(path, &back, mb));
    CHECK(back && memcmp(back, img, n * sizeof(float)) == 0);
    free(back);
    free(img);
}

int main(int argc, char **argv)
{
    keep = io_test_keep_dir(argc, argv);
    uint64_t rng = test_seed();
    const char *dir = test_tmpdir("io_checksum");
    kspace_files(dir, &rng);
    image_files(dir, &rng);
    if (test_failures == 0)
        io_test_rmdir(dir);
    return test_finish("test_io_checksum");
}
