/* Fuzz target: the ISMRMRD reader (io/ismrmrd_*.c with its XML header parser io/mrd_xml.c, expat)
 * on a whole file, entered as io/input.c enters it: the format decided by mr_input_h5_format, then
 * mr_ismrmrd_open (the three passes over the acquisitions) and every volume read. An accepted file
 * is read again with the other options (averages kept apart, the recon space, no prewhitening, the
 * trajectory negated, units forced), which take other paths through the reader. */
#include <math.h>
#include <string.h>

#include "base/log.h"
#include "fuzz_target.h"
#include "io/h5util.h"
#include "io/input.h"

static void check_summary(const mr_ismrmrd *r)
{
    const mr_ismrmrd_summary *s = mr_ismrmrd_summary_get(r);
    const int nvol = mr_ismrmrd_nvolumes(r);
    mr_fuzz_require(nvol >= 1 && nvol <= MR_ISMRMRD_MAX_VOLUMES, "volume count outside the limits");
    mr_fuzz_require(s->acquisitions >= 1 && s->acquisitions <= MR_ISMRMRD_MAX_ACQUISITIONS,
                    "acquisition count outside the limits");
    mr_fuzz_require(s->channels >= 1 && s->channels <= MR_MAX_COILS, "channel count outside the limits");
    mr_fuzz_require(memchr(s->group, 0, sizeof s->group) != NULL, "unterminated group name");
    if (s->noise_cov)
        for (int64_t i = 0; i < s->channels * s->channels * 2; i++)
            mr_fuzz_require(isfinite(s->noise_cov[i]), "non-finite noise covariance");
    for (int e = 0; e < MR_MRD_MAX_ENCODINGS; e++)
        if (s->have_imaging[e]) {
            char fits[512]; /* what `mrirecon info` prints */
            mr_ismrmrd_units_fits(s, e, fits, sizeof fits);
            mr_fuzz_require(memchr(fits, 0, sizeof fits) != NULL, "unterminated units summary");
        }
    mr_fuzz_require(mr_ismrmrd_volume(r, -1) == NULL && mr_ismrmrd_volume(r, nvol) == NULL,
                    "a volume outside 0..n-1");
    for (int v = 0; v < nvol; v++) {
        const mr_volume_info *vi = mr_ismrmrd_volume(r, v);
        mr_fuzz_require(vi != NULL && vi->acquisitions >= 1 && vi->samples >= 1, "an empty volume");
        mr_fuzz_require(mr_matrix_check(vi->matrix, "fuzz") == MR_OK, "volume matrix outside the limits");
    }
}

/* The handle borrows the file: closing it (or a refusal) must leave the file the only open object. */
static void only_file_open(void)
{
    mr_fuzz_require(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) == 1, "an HDF5 object is left open");
}

/* Open the dataset with opts and read every volume: 1 accepted, 0 refused. */
static int read_all(hid_t file, const mr_read_opts *opts)
{
    mr_ismrmrd *r = NULL;
    mr_clear_error();
    mr_status st = mr_ismrmrd_open(file, MR_FUZZ_INPUT_NAME, opts, &r);
    if (st != MR_OK) {
        mr_fuzz_require(r == NULL, "a handle after a refusal");
        only_file_open();
        mr_fuzz_message(st);
        return 0;
    }
    check_summary(r);
    for (int v = 0; v < mr_ismrmrd_nvolumes(r); v++) {
        static int sentinel;
        mr_kspace *ks = (mr_kspace *)&sentinel;
        st = mr_ismrmrd_read_volume(r, v, &ks);
        if (st != MR_OK) {
            mr_fuzz_require(ks == NULL, "the output is not NULL after a refusal");
            break;
        }
        mr_fuzz_check_kspace(ks);
        mr_fuzz_require(ks->matrix[0] == mr_ismrmrd_volume(r, v)->matrix[0] &&
                            ks->matrix[1] == mr_ismrmrd_volume(r, v)->matrix[1] &&
                            ks->matrix[2] == mr_ismrmrd_volume(r, v)->matrix[2],
                        "a volume read with another matrix than announced");
        mr_kspace_free(ks);
    }
    mr_ismrmrd_close(r);
    only_file_open();
    mr_fuzz_message(st);
    return st == MR_OK;
}

int mr_fuzz_one(const uint8_t *data, size_t size)
{
    hid_t file;
    mr_input_format format = 0;
    mr_log_set_level(MR_LOG_ERROR); /* the reader's notes on units and averages, thousands a second */
    mr_clear_error();
    mr_status st = mr_h5_open_memory(data, size, MR_FUZZ_INPUT_NAME, &file);
    if (st != MR_OK) {
        mr_fuzz_after(st);
        return 0;
    }
    st = mr_input_h5_format(file, MR_FUZZ_INPUT_NAME, &format);
    int accepted = 0;
    if (st == MR_OK && format == MR_INPUT_ISMRMRD) {
        mr_read_opts opts;
        mr_read_opts_default(&opts);
        accepted = read_all(file, &opts);
        if (accepted) {
            opts.averages = MR_AVERAGES_SEPARATE;
            opts.space = MR_SPACE_RECON;
            opts.traj_sign = -1;
            opts.traj_units = (mr_traj_units)(1 + size % (MR_UNITS_COUNT - 1)); /* cycles .. per-m */
            (void)read_all(file, &opts);
        }
    }
    mr_fuzz_close_file(&file);
    mr_fuzz_after(st);
    return accepted;
}

int mr_fuzz_file(const char *path)
{
    mr_input *in = NULL;
    mr_clear_error();
    mr_status st = mr_input_open(path, NULL, &in);
    mr_fuzz_require(st == MR_OK ? in != NULL : in == NULL, "the public reader broke its promise (handle)");
    for (int v = 0; st == MR_OK && v < mr_input_nvolumes(in); v++) {
        mr_kspace *ks = NULL;
        st = mr_input_read(in, v, &ks);
        mr_fuzz_require(st == MR_OK ? ks != NULL : ks == NULL, "the public reader broke its promise (volume)");
        mr_kspace_free(ks);
    }
    mr_input_close(in);
    mr_fuzz_require(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) == 0, "an HDF5 object is left open");
    mr_fuzz_require(st == MR_OK || strstr(mr_last_error(), path) != NULL, "a refusal that does not name the file");
    return st == MR_OK;
}
