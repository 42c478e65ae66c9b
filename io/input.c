/* The content-based k-space reader (see input.h). */
#include "input.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/child.h"
#include "cfl.h"
#include "fsutil.h"
#include "h5util.h"
#include "kspace_h5.h"

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
    int fd;               /* HDF5: the file, open since mr_input_open: every read is of this file */
    mr_ismrmrd *ismrmrd;  /* ISMRMRD: the index (without a file: volumes are read in a child) */
    mr_kspace *scan;      /* mrirecon: the scan read at open, until mr_input_read hands it over */
    char traj[4096], ksp[4096]; /* BART array names */
};

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* A BART input named by `path`: NAME.hdr / NAME.cfl / NAME of either array of the pair, or the
 * prefix. 1 with the pair's names filled when both headers exist (a header that is not one is then
 * refused by the reader with its reason, not taken for another format); -1 (message recorded) when
 * `path` names one array of a pair whose other header is missing; 0 when it is no BART input. */
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
    const int have_t = mr_is_regular_file(th), have_k = mr_is_regular_file(kh);
    if (have_t && have_k)
        return 1;
    if (named || have_t || have_k) {
        mr_error(MR_EFORMAT, "%s: a BART header, but its partner is missing: BART input is a pair %s + %s (.hdr/.cfl), "
                             "or give the trajectory with {traj} NAME (the k-space and trajectory arrays of 'bart "
                             "phantom -k -t NAME')",
                 path, traj, ksp);
        return -1;
    }
    return 0;
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

/* ---- HDF5 inputs: read in a child, once (io/h5util.h mr_h5_read_in_child) ---------------------------
 * At open, one child decides the format and reads what there is to read at once: a mrirecon scan
 * whole, an ISMRMRD file's index (headers, trajectories, noise: mr_ismrmrd_open); the result comes
 * back through a pipe. A volume of an ISMRMRD file is read later, in a child of its own, from the
 * index and the same descriptor. This process never runs libhdf5 on the file, and reads it once. */

typedef struct {
    mr_input_format format;
    const mr_read_opts *opts;
    mr_kspace *scan;
    mr_ismrmrd *index;
} open_job;

static mr_status open_read(hid_t file, const char *path, void *ctx)
{
    open_job *j = ctx;
    mr_status st = mr_input_h5_format(file, path, &j->format);
    if (st != MR_OK)
        return st;
    if (j->format == MR_INPUT_ISMRMRD)
        return mr_ismrmrd_open(file, path, j->opts, &j->index);
    return mr_kspace_read_file(file, path, &j->scan);
}

static mr_status open_send(void *ctx, int fd)
{
    open_job *j = ctx;
    const int32_t format = (int32_t)j->format;
    mr_status st = mr_pipe_put(fd, &format, sizeof format);
    if (j->format == MR_INPUT_ISMRMRD) {
        if (st == MR_OK)
            st = mr_ismrmrd_send_index(fd, j->index);
        mr_ismrmrd_close(j->index);
        j->index = NULL;
        return st;
    }
    if (st != MR_OK) {
        mr_kspace_free(j->scan);
        j->scan = NULL;
        return st;
    }
    st = mr_kspace_send(fd, j->scan);
    j->scan = NULL;
    return st;
}

static mr_status open_recv(void *ctx, int fd, int file_fd, const char *label)
{
    open_job *j = ctx;
    int32_t format = 0;
    mr_status st = mr_pipe_get(fd, &format, sizeof format);
    if (st != MR_OK)
        return st;
    if (format == MR_INPUT_ISMRMRD)
        st = mr_ismrmrd_recv_index(fd, label, j->opts, &j->index);
    else if (format == MR_INPUT_MRIRECON)
        st = mr_kspace_recv(fd, file_fd, label, &j->scan);
    else
        st = mr_error(MR_EINTERNAL, "%s: the reading process sent a damaged answer", label);
    if (st == MR_OK)
        j->format = (mr_input_format)format;
    return st;
}

static const mr_h5_isolated open_isolated = {open_read, open_send, open_recv, 1};

/* An ISMRMRD volume in a child: the index attached to the file again, the volume read. */
typedef struct {
    mr_ismrmrd *index;
    int volume;
    mr_kspace *ks;
} volume_job;

static mr_status volume_read(hid_t file, const char *path, void *ctx)
{
    (void)path;
    volume_job *j = ctx;
    mr_status st = mr_ismrmrd_attach(j->index, file);
    if (st == MR_OK)
        st = mr_ismrmrd_read_volume(j->index, j->volume, &j->ks);
    mr_ismrmrd_detach(j->index);
    return st;
}

static mr_status volume_send(void *ctx, int fd)
{
    volume_job *j = ctx;
    mr_status st = mr_kspace_send(fd, j->ks);
    j->ks = NULL;
    return st;
}

static mr_status volume_recv(void *ctx, int fd, int file_fd, const char *label)
{
    (void)file_fd; /* the variable-length data of ISMRMRD travel as values */
    return mr_kspace_recv(fd, -1, label, &((volume_job *)ctx)->ks);
}

static const mr_h5_isolated volume_isolated = {volume_read, volume_send, volume_recv, 0};

mr_status mr_input_open(const char *path, const mr_read_opts *opts, mr_input **out)
{
    *out = NULL;
    mr_input *in = calloc(1, sizeof *in);
    if (!in)
        return mr_error(MR_ENOMEM, "%s: out of memory", path);
    in->fd = -1;
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
    else if (!mr_is_regular_file(path) || ends_with(path, ".hdr") || ends_with(path, ".cfl") || mr_cfl_is_header(path))
        bart = find_bart(path, in->traj, in->ksp, sizeof in->traj);
    if (bart < 0) {
        free(in);
        return MR_EFORMAT;
    }
    if (bart) {
        in->format = MR_INPUT_BART;
    } else if ((st = mr_file_open_private(path, &in->fd)) == MR_OK) {
        open_job job = {MR_INPUT_MRIRECON, &in->opts, NULL, NULL};
        st = mr_h5_read_in_child(in->fd, path, &open_isolated, &job);
        in->format = job.format;
        in->scan = job.scan;
        in->ismrmrd = job.index;
        if (st == MR_OK && in->ismrmrd)
            mr_ismrmrd_detach(in->ismrmrd); /* read here (no child could be made): the file is closed */
    }
    if (st == MR_OK)
        st = check_units_apply(in);
    if (st != MR_OK) {
        mr_input_close(in);
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
    case MR_INPUT_ISMRMRD: {
        volume_job job = {in->ismrmrd, index, NULL};
        st = mr_h5_read_in_child(in->fd, in->path, &volume_isolated, &job);
        *out = job.ks;
        return st; /* the reader applies traj_sign itself */
    }
    case MR_INPUT_BART:
        st = mr_cfl_read_scan(in->traj, in->ksp, &in->opts, 0, out);
        break;
    default:
        if (in->scan) { /* read at open: handed over */
            *out = in->scan;
            in->scan = NULL;
            st = MR_OK;
        } else { /* asked for again: read again, from the same file */
            st = mr_h5_read_in_child(in->fd, in->path, &mr_kspace_h5_isolated, out);
        }
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
    mr_kspace_free(in->scan);
    if (in->fd >= 0)
        close(in->fd);
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
        st = mr_error(MR_EINVAL, "%s: holds %d volumes (slices, contrasts, repetitions, ...): choose one with {volume} "
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
