/* The content-based k-space reader (see input.h). */
#include "input.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cfl.h"
#include "h5util.h"
#include "kspace_h5.h"

/* ---- read options ---------------------------------------------------------------------------------- */

static const char *const unit_names[MR_UNITS_COUNT] = {"auto", "cycles", "normalized", "radians", "per-m"};

void mr_read_opts_default(mr_read_opts *o)
{
    memset(o, 0, sizeof *o);
    o->traj_units = MR_UNITS_AUTO;
    o->traj_sign = 1;
    o->space = MR_SPACE_ENCODED;
    o->averages = MR_AVERAGES_COMBINE;
}

const char *mr_traj_units_name(mr_traj_units u)
{
    return (u >= 0 && u < MR_UNITS_COUNT) ? unit_names[u] : "?";
}

mr_status mr_traj_units_parse(const char *text, mr_traj_units *u)
{
    for (int i = 0; i < MR_UNITS_COUNT; i++)
        if (text && strcmp(text, unit_names[i]) == 0) {
            *u = (mr_traj_units)i;
            return MR_OK;
        }
    return mr_error(MR_EINVAL, "trajectory units '%s' are not one of auto, cycles, normalized, radians, per-m",
                    text ? text : "(null)");
}

const char *mr_input_format_name(mr_input_format f)
{
    switch (f) {
    case MR_INPUT_MRIRECON:
        return MR_FORMAT_NAME;
    case MR_INPUT_ISMRMRD:
        return "ismrmrd";
    case MR_INPUT_BART:
        return "bart";
    }
    return "?";
}

/* ---- the handle ------------------------------------------------------------------------------------- */

struct mr_input {
    mr_input_format format;
    char path[4096];
    mr_read_opts opts;
    mr_ismrmrd *ismrmrd;
    char traj[4096], ksp[4096]; /* BART array names */
    struct stat checked;        /* HDF5: the file as the child of mr_input_open found it */
};

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int is_regular(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* A BART input named by `path`: NAME.hdr / NAME.cfl / NAME of either array of the pair, or the
 * prefix. 1 with the pair's names filled when both headers exist and look like BART headers. */
static int find_bart(const char *path, char *traj, char *ksp, size_t size)
{
    char hdr[4200];
    int named = 0;
    if (ends_with(path, ".hdr"))
        named = mr_cfl_is_header(path);
    else if (ends_with(path, ".cfl")) {
        snprintf(hdr, sizeof hdr, "%.*s.hdr", (int)(strlen(path) - 4), path);
        named = mr_cfl_is_header(hdr);
    } else {
        snprintf(hdr, sizeof hdr, "%s.hdr", path);
        named = mr_cfl_is_header(hdr);
    }
    if (mr_cfl_pair_names(path, traj, ksp, size) != MR_OK)
        return 0;
    char th[4200], kh[4200];
    snprintf(th, sizeof th, "%s.hdr", traj);
    snprintf(kh, sizeof kh, "%s.hdr", ksp);
    int pair = mr_cfl_is_header(th) && mr_cfl_is_header(kh);
    if (named && !pair) {
        mr_error(MR_EFORMAT, "%s: a BART header, but its partner is missing: BART input is a pair %s + %s (.hdr/.cfl), "
                             "or give the trajectory with --traj NAME (the k-space and trajectory arrays of 'bart "
                             "phantom -k -t NAME')",
                 path, traj, ksp);
        return -1;
    }
    return pair;
}

/* A BART k-space array named by path with its trajectory named by opts->bart_traj (--traj). */
static int named_bart(const char *path, const char *traj_path, char *traj, char *ksp, size_t size)
{
    const char *const given[2] = {path, traj_path};
    char *const name[2] = {ksp, traj};
    for (int i = 0; i < 2; i++) {
        const size_t n = strlen(given[i]);
        const size_t keep = n > 4 && (ends_with(given[i], ".hdr") || ends_with(given[i], ".cfl")) ? n - 4 : n;
        char hdr[4200];
        if (keep + 1 > size || snprintf(hdr, sizeof hdr, "%.*s.hdr", (int)keep, given[i]) >= (int)sizeof hdr) {
            mr_error(MR_EINVAL, "%s: path too long", given[i]);
            return -1;
        }
        snprintf(name[i], size, "%.*s", (int)keep, given[i]);
        if (!mr_cfl_is_header(hdr)) {
            mr_error(MR_EFORMAT, "%s: %s is not a BART array (no BART header %s)", given[i],
                     i ? "--traj" : "the k-space", hdr);
            return -1;
        }
    }
    return 1;
}

static mr_status check_units_apply(const mr_input *in)
{
    if (in->format != MR_INPUT_ISMRMRD && in->opts.traj_units != MR_UNITS_AUTO &&
        in->opts.traj_units != MR_UNITS_CYCLES)
        return mr_error(MR_EINVAL, "%s: %s trajectories are in cycles/FOV by definition; trajectory units '%s' apply to "
                                   "ISMRMRD input only",
                        in->path, mr_input_format_name(in->format), mr_traj_units_name(in->opts.traj_units));
    return MR_OK;
}

mr_status mr_input_h5_format(hid_t file, const char *label, mr_input_format *format)
{
    char group[256];
    int k = mr_h5_exists(file, label, "/kspace");
    int m = k == 0 ? mr_ismrmrd_detect(file, label, group, sizeof group) : 0;
    if (k < 0 || m < 0)
        return MR_EIO;
    if (k > 0)
        *format = MR_INPUT_MRIRECON;
    else if (m > 0)
        *format = MR_INPUT_ISMRMRD;
    else
        return mr_error(MR_EFORMAT, "%s: an HDF5 file, but neither a mrirecon k-space file (no /kspace group) nor "
                                    "ISMRMRD (no /dataset with xml and data)",
                        label);
    return MR_OK;
}

/* The child's check of an HDF5 input (mr_h5_check_isolated): the format, then everything that is read
 * here later, read and dropped: a mrirecon k-space file's whole scan (mr_input_read), an ISMRMRD
 * file's index and every volume (mr_ismrmrd_check). So one child takes a crash of libhdf5 on
 * anything decoded later here, and a queued background task (base/child.h: the device
 * initialisation) starts as that child is forked and runs while both read. */
typedef struct {
    mr_input_format format;
    const mr_read_opts *opts;
} h5_check_ctx;

static mr_status h5_check(hid_t file, const char *path, void *ctx)
{
    h5_check_ctx *c = ctx;
    mr_status st = mr_input_h5_format(file, path, &c->format);
    if (st != MR_OK)
        return st;
    if (c->format == MR_INPUT_ISMRMRD)
        return mr_ismrmrd_check(file, path, c->opts);
    mr_kspace *ks = NULL;
    st = mr_kspace_read_file(file, path, &ks);
    mr_kspace_free(ks);
    return st;
}

/* Still the file the child read: same device, inode, size and modification time. */
static int same_file(const struct stat *a, const char *path)
{
    struct stat b;
    return stat(path, &b) == 0 && a->st_dev == b.st_dev && a->st_ino == b.st_ino && a->st_size == b.st_size &&
           a->st_mtim.tv_sec == b.st_mtim.tv_sec && a->st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}

static mr_status read_scan(hid_t file, const char *path, void *out) { return mr_kspace_read_file(file, path, out); }

mr_status mr_input_open(const char *path, const mr_read_opts *opts, mr_input **out)
{
    *out = NULL;
    mr_input *in = calloc(1, sizeof *in);
    if (!in)
        return mr_error(MR_ENOMEM, "%s: out of memory", path);
    if (snprintf(in->path, sizeof in->path, "%s", path) >= (int)sizeof in->path) {
        free(in);
        return mr_error(MR_EINVAL, "%s: path too long", path);
    }
    if (opts)
        in->opts = *opts;
    else
        mr_read_opts_default(&in->opts);
    mr_status st = MR_OK;
    /* BART: a text header, or a name whose .hdr is one */
    int bart = 0;
    if (in->opts.bart_traj)
        bart = named_bart(path, in->opts.bart_traj, in->traj, in->ksp, sizeof in->traj);
    else if (!is_regular(path) || ends_with(path, ".hdr") || ends_with(path, ".cfl") || mr_cfl_is_header(path))
        bart = find_bart(path, in->traj, in->ksp, sizeof in->traj);
    if (bart < 0) {
        free(in);
        return MR_EFORMAT;
    }
    if (bart) {
        in->format = MR_INPUT_BART;
    } else {
        /* HDF5: the usual checks and messages (missing, empty, not HDF5, truncated); the whole file is
         * read in a child process first, which takes a crash of libhdf5 on a damaged file (h5_check) */
        hid_t file;
        if (stat(path, &in->checked) != 0)
            memset(&in->checked, 0, sizeof in->checked); /* mr_h5_open_read says why */
        h5_check_ctx check = {MR_INPUT_MRIRECON, &in->opts};
        if ((st = mr_h5_check_isolated(path, h5_check, &check)) != MR_OK ||
            (st = mr_h5_open_read(path, &file)) != MR_OK) {
            free(in);
            return st;
        }
        st = mr_input_h5_format(file, path, &in->format);
        H5Fclose(file);
        if (st != MR_OK) {
            free(in);
            return st;
        }
    }
    if ((st = check_units_apply(in)) == MR_OK && in->format == MR_INPUT_ISMRMRD)
        st = mr_ismrmrd_open_path(path, &in->opts, &in->ismrmrd);
    if (st != MR_OK) {
        free(in);
        return st;
    }
    *out = in;
    return MR_OK;
}

mr_input_format mr_input_get_format(const mr_input *in) { return in->format; }
const char *mr_input_path(const mr_input *in) { return in->path; }

int mr_input_nvolumes(const mr_input *in) { return in->ismrmrd ? mr_ismrmrd_nvolumes(in->ismrmrd) : 1; }

const mr_volume_info *mr_input_volume(const mr_input *in, int index)
{
    return in->ismrmrd ? mr_ismrmrd_volume(in->ismrmrd, index) : NULL;
}

const mr_ismrmrd_summary *mr_input_ismrmrd(const mr_input *in)
{
    return in->ismrmrd ? mr_ismrmrd_summary_get(in->ismrmrd) : NULL;
}

const double *mr_input_noise_cov(const mr_input *in, int64_t *nsamples)
{
    const mr_ismrmrd_summary *s = mr_input_ismrmrd(in);
    const double *psi = s ? s->noise_cov : NULL;
    if (nsamples)
        *nsamples = psi ? s->noise_samples : 0;
    return psi;
}

const char *mr_input_bart_traj(const mr_input *in) { return in->format == MR_INPUT_BART ? in->traj : ""; }
const char *mr_input_bart_ksp(const mr_input *in) { return in->format == MR_INPUT_BART ? in->ksp : ""; }

mr_status mr_input_read(mr_input *in, int index, mr_kspace **out)
{
    *out = NULL;
    const int n = mr_input_nvolumes(in);
    if (index < 0 || index >= n)
        return mr_error(MR_EINVAL, "%s: volume %d does not exist (the file holds %d: 0..%d)", in->path, index, n,
                        n - 1);
    mr_status st;
    switch (in->format) {
    case MR_INPUT_ISMRMRD:
        return mr_ismrmrd_read_volume(in->ismrmrd, index, out); /* applies traj_sign itself */
    case MR_INPUT_BART:
        st = mr_cfl_read_scan(in->traj, in->ksp, &in->opts, 0, out);
        break;
    default: /* read in mr_input_open's child already, unless the file has changed since */
        st = same_file(&in->checked, in->path) ? mr_h5_read_checked(in->path, read_scan, out)
                                               : mr_kspace_read(in->path, out);
        break;
    }
    if (st == MR_OK && in->opts.traj_sign == -1)
        for (int64_t i = 0; i < 3 * (*out)->nsamples; i++)
            (*out)->traj[i] = -(*out)->traj[i];
    return st;
}

void mr_input_close(mr_input *in)
{
    if (!in)
        return;
    mr_ismrmrd_close(in->ismrmrd);
    free(in);
}

mr_status mr_input_read_path(const char *path, const mr_read_opts *opts, int volume, mr_kspace **out)
{
    *out = NULL;
    mr_input *in;
    mr_status st = mr_input_open(path, opts, &in);
    if (st != MR_OK)
        return st;
    const int n = mr_input_nvolumes(in);
    if (volume < 0 && n > 1)
        st = mr_error(MR_EINVAL, "%s: holds %d volumes (slices, contrasts, repetitions, ...): choose one with --volume "
                                 "(0..%d; 'mrirecon info' lists them)",
                      path, n, n - 1);
    else
        st = mr_input_read(in, volume < 0 ? 0 : volume, out);
    mr_input_close(in);
    return st;
}

void mr_image_crop_center(const float *in, const int64_t nin[3], float *out, const int64_t nout[3])
{
    for (int64_t z = 0; z < nout[2]; z++)
        for (int64_t y = 0; y < nout[1]; y++)
            for (int64_t x = 0; x < nout[0]; x++) {
                const int64_t sx = x - nout[0] / 2 + nin[0] / 2, sy = y - nout[1] / 2 + nin[1] / 2,
                              sz = z - nout[2] / 2 + nin[2] / 2;
                float *o = out + 2 * ((z * nout[1] + y) * nout[0] + x);
                if (sx < 0 || sy < 0 || sz < 0 || sx >= nin[0] || sy >= nin[1] || sz >= nin[2]) {
                    o[0] = o[1] = 0;
                    continue;
                }
                const float *i = in + 2 * ((sz * nin[1] + sy) * nin[0] + sx);
                o[0] = i[0];
                o[1] = i[1];
            }
}
