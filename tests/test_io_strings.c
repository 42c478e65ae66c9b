/* String attributes as other tools write them (issue 14): h5py writes a Python str as a scalar
 * variable-length UTF-8 string, numpy bytes as fixed-length ASCII; other writers use fixed-length
 * UTF-8 or variable-length ASCII, and Fortran ones space padding. The k-space reader must accept
 * each of the four (ASCII, UTF-8) x (fixed, variable) combinations, and space- and NUL-terminated
 * padding, in every string attribute it reads (format, trajectory, phantom), returning exactly
 * the text written; strings that are not text are refused with the attribute's name. */
#include <hdf5.h>
#include <string.h>

#include "io/kspace_h5.h"
#include "io_testutil.h"
#include "testutil.h"

static void write_scan(const char *path)
{
    const int64_t matrix[3] = {4, 4, 1};
    mr_kspace *ks = NULL;
    CHECK_OK(mr_kspace_create(&ks, matrix, 5, 1));
    for (int i = 0; i < 5 * 3; i++)
        ks->traj[i] = (float)(i % 3) - 1;
    CHECK_OK(mr_kspace_write(path, ks));
    mr_kspace_free(ks);
}

/* Set the three string attributes of /kspace in one way; with_pad: fixed-length with the given
 * padding (and 3 bytes of room), else io_test_string_attr. */
static void set_strings(const char *path, int vlen, H5T_cset_t cset, H5T_str_t pad, int with_pad,
                        const char *trajectory, const char *phantom)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT), g = H5Gopen2(f, "/kspace", H5P_DEFAULT);
    CHECK(f >= 0 && g >= 0);
    const char *names[3] = {"format", "trajectory", "phantom"};
    const char *values[3] = {MR_FORMAT_NAME, trajectory, phantom};
    for (int i = 0; i < 3; i++) {
        if (!with_pad) {
            CHECK(io_test_string_attr(g, names[i], values[i], vlen, cset) == 0);
            continue;
        }
        /* fixed length with room to spare, padded as asked */
        size_t n = strlen(values[i]) + 3;
        char buf[128];
        memset(buf, pad == H5T_STR_SPACEPAD ? ' ' : '\0', sizeof buf);
        memcpy(buf, values[i], strlen(values[i]));
        if (H5Aexists(g, names[i]) > 0)
            CHECK(H5Adelete(g, names[i]) >= 0);
        hid_t t = H5Tcopy(H5T_C_S1);
        H5Tset_size(t, n);
        H5Tset_strpad(t, pad);
        H5Tset_cset(t, cset);
        hid_t s = H5Screate(H5S_SCALAR);
        hid_t a = H5Acreate2(g, names[i], t, s, H5P_DEFAULT, H5P_DEFAULT);
        CHECK(a >= 0 && H5Awrite(a, t, buf) >= 0);
        H5Aclose(a);
        H5Sclose(s);
        H5Tclose(t);
    }
    H5Gclose(g);
    H5Fclose(f);
}

static int read_back(const char *label, const char *path, const char *trajectory, const char *phantom)
{
    mr_kspace *ks = NULL;
    mr_status st = mr_kspace_read(path, &ks);
    printf("%-34s -> %s%s%s", label, mr_strerror(st), st ? ": " : "", st ? mr_last_error() : "");
    CHECK_OK(st);
    int same = 0;
    if (ks) {
        printf(" trajectory '%s', phantom '%s'", ks->traj_kind, ks->phantom);
        same = strcmp(ks->traj_kind, trajectory) == 0 && strcmp(ks->phantom, phantom) == 0;
        if (!same)
            fprintf(stderr, "\n%s: read back '%s' / '%s', written '%s' / '%s'\n", label, ks->traj_kind, ks->phantom,
                    trajectory, phantom);
        CHECK(same);
    }
    printf("\n");
    mr_kspace_free(ks);
    return same;
}

static void expect_refused(const char *label, const char *path, const char *attr)
{
    mr_kspace *ks = NULL;
    mr_status st = mr_kspace_read(path, &ks);
    const char *msg = mr_last_error();
    printf("%-34s -> %s: %s\n", label, mr_strerror(st), msg);
    CHECK(st == MR_EFORMAT && ks == NULL);
    CHECK(strstr(msg, path) != NULL && strstr(msg, attr) != NULL);
    mr_kspace_free(ks);
}

int main(void)
{
    const char *dir = test_tmpdir("io_strings");
    char path[1024];
    snprintf(path, sizeof path, "%s/scan.h5", dir);
    /* UTF-8 text beyond ASCII: an en dash, a Greek mu, a CJK character, an emoji (4 bytes) */
    const char *utf8_phantom = "Shepp\xe2\x80\x93Logan \xce\xbc-\xe6\xb0\xb4 \xf0\x9f\xa7\xa0";
    int good = 0, cases = 0;

    /* the four combinations; UTF-8 ones carry non-ASCII text */
    static const struct {
        const char *label;
        int vlen;
        H5T_cset_t cset;
    } combos[4] = {
        {"variable-length UTF-8 (h5py str)", 1, H5T_CSET_UTF8},
        {"variable-length ASCII", 1, H5T_CSET_ASCII},
        {"fixed-length UTF-8", 0, H5T_CSET_UTF8},
        {"fixed-length ASCII (numpy bytes)", 0, H5T_CSET_ASCII},
    };
    for (int i = 0; i < 4; i++) {
        write_scan(path);
        const char *phantom = combos[i].cset == H5T_CSET_UTF8 ? utf8_phantom : "shepp-logan-2d";
        set_strings(path, combos[i].vlen, combos[i].cset, H5T_STR_NULLPAD, 0, "radial2d", phantom);
        good += read_back(combos[i].label, path, "radial2d", phantom);
        cases++;
    }
    /* fixed length with room to spare: space padding (Fortran), NUL termination, NUL padding */
    static const struct {
        const char *label;
        H5T_str_t pad;
    } pads[3] = {{"fixed ASCII, space-padded", H5T_STR_SPACEPAD},
                 {"fixed UTF-8, NUL-terminated", H5T_STR_NULLTERM},
                 {"fixed ASCII, NUL-padded", H5T_STR_NULLPAD}};
    for (int i = 0; i < 3; i++) {
        write_scan(path);
        set_strings(path, 0, i == 1 ? H5T_CSET_UTF8 : H5T_CSET_ASCII, pads[i].pad, 1, "spiral2d", "sl");
        good += read_back(pads[i].label, path, "spiral2d", "sl");
        cases++;
    }
    /* refusals: another format (a variable-length string is still compared with ours), text that
     * is not UTF-8, a name longer than the 63 bytes of mr_kspace's fields */
    char longname[80];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    static const struct {
        const char *label, *attr, *quoted;
    } bad[3] = {{"variable-length UTF-8 other format", "format", "'format'"},
                {"invalid UTF-8", "trajectory", "'trajectory'"},
                {"79 bytes for a 63-byte field", "phantom", "'phantom'"}};
    const char *values[3] = {"ismrmrd", "radial\xc3(", longname};
    for (int i = 0; i < 3; i++) {
        write_scan(path);
        hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT), g = H5Gopen2(f, "/kspace", H5P_DEFAULT);
        CHECK(io_test_string_attr(g, bad[i].attr, values[i], 1, H5T_CSET_UTF8) == 0);
        H5Gclose(g);
        H5Fclose(f);
        expect_refused(bad[i].label, path, bad[i].quoted);
    }

    printf("%d of %d string encodings read back exactly\n", good, cases);
    CHECK_GE("encodings read back", good, cases);
    io_test_rmdir(dir);
    return test_finish("test_io_strings");
}
