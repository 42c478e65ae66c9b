/* The HDF5 k-space file, format "mrirecon-kspace" versions 1 to 3 (docs/FORMAT.md is normative).
 *
 * The reader validates in two passes: first every shape, type and attribute (nothing allocated
 * but stack buffers), then it allocates the scan and reads the arrays, checking their values.
 * The writer refuses a scan that the reader would refuse, and writes through a temporary name. */
#include "kspace_h5.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "h5util.h"

#define DS_TRAJ "/kspace/traj"
#define DS_DATA "/kspace/data"
#define DS_WEIGHTS "/kspace/weights"
#define DS_TRUTH "/truth/image"
#define DS_TRUTH_BL "/truth/bandlimited"
#define DS_SENS "/kspace/sens" /* version 2 */
#define DS_TIME "/kspace/time"         /* version 3 */
#define DS_FIELDMAP "/kspace/fieldmap" /* version 3 */

/* mr_h5_open_f32, and the dataset's checksum when the file promises one for each dataset. */
static mr_status open_f32(hid_t file, const char *path, const char *name, int rank, int checked, hid_t *ds,
                          hsize_t *dims)
{
    mr_status st = mr_h5_open_f32(file, path, name, rank, ds, dims);
    if (st == MR_OK && checked && (st = mr_h5_require_checksum(*ds, path, name)) != MR_OK)
        mr_h5_close(ds);
    return st;
}

/* Optional float32 dataset of exactly the expected dims: *present 0 when absent. */
static mr_status open_optional(hid_t file, const char *path, const char *name, int rank, const hsize_t *want,
                               const char *want_text, int checked, hid_t *ds, int *present)
{
    hsize_t dims[MR_H5_MAX_RANK];
    int exists;
    *present = 0;
    mr_status st = mr_h5_lookup(file, path, name, &exists);
    if (st != MR_OK || !exists)
        return st;
    st = open_f32(file, path, name, rank, checked, ds, dims);
    if (st != MR_OK)
        return st;
    for (int i = 0; i < rank; i++)
        if (dims[i] != want[i]) {
            mr_h5_close(ds);
            return mr_error(MR_EFORMAT, "%s: %s: dimension %d is %llu, expected %llu (%s)", path, name, i,
                            (unsigned long long)dims[i], (unsigned long long)want[i], want_text);
        }
    *present = 1;
    return MR_OK;
}

/* Negative weight: the first index, or -1. */
static int64_t first_negative(const float *w, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (w[i] < 0)
            return i;
    return -1;
}

/* Attributes of /kspace other than matrix into ks (already allocated). */
static mr_status read_meta(hid_t grp, const char *path, mr_kspace *ks)
{
    const char *g = "/kspace";
    int have = 0;
    char format[64];
    mr_status st = mr_h5_attr_read_string(grp, path, g, "format", format, sizeof format, &have);
    if (st != MR_OK)
        return st;
    if (have && strcmp(format, MR_FORMAT_NAME) != 0)
        return mr_error(MR_EFORMAT, "%s: %s attribute 'format' is '%s', expected '%s'", path, g, format,
                        MR_FORMAT_NAME);
    int64_t version = MR_FORMAT_VERSION;
    st = mr_h5_attr_read(grp, path, g, "version", H5T_INTEGER, H5T_NATIVE_INT64, &version, 1, &have);
    if (st != MR_OK)
        return st;
    if (version < 1 || version > MR_FORMAT_VERSION)
        return mr_error(MR_EFORMAT, "%s: %s attribute 'version' is %lld; this program reads versions 1..%d", path, g,
                        (long long)version, MR_FORMAT_VERSION);
    float fov[3] = {0, 0, 0};
    st = mr_h5_attr_read(grp, path, g, "fov_mm", H5T_FLOAT, H5T_NATIVE_FLOAT, fov, 3, &have);
    if (st != MR_OK)
        return st;
    for (int i = 0; i < 3; i++)
        if (!isfinite(fov[i]) || fov[i] < 0)
            return mr_error(MR_EFORMAT, "%s: %s attribute 'fov_mm'[%d] = %g is not a finite number >= 0", path, g, i,
                            (double)fov[i]);
    memcpy(ks->fov_mm, fov, sizeof fov);
    st = mr_h5_attr_read_string(grp, path, g, "trajectory", ks->traj_kind, sizeof ks->traj_kind, &have);
    if (st == MR_OK)
        st = mr_h5_attr_read_string(grp, path, g, "phantom", ks->phantom, sizeof ks->phantom, &have);
    if (st != MR_OK)
        return st;
    double sigma = -1.0, snr = 0.0;
    st = mr_h5_attr_read(grp, path, g, "noise_sigma", H5T_FLOAT, H5T_NATIVE_DOUBLE, &sigma, 1, &have);
    if (st != MR_OK)
        return st;
    if (!isfinite(sigma))
        return mr_error(MR_EFORMAT, "%s: %s attribute 'noise_sigma' = %g is not finite", path, g, sigma);
    st = mr_h5_attr_read(grp, path, g, "snr_db", H5T_FLOAT, H5T_NATIVE_DOUBLE, &snr, 1, &have);
    if (st != MR_OK)
        return st;
    if (isnan(snr))
        return mr_error(MR_EFORMAT, "%s: %s attribute 'snr_db' is NaN", path, g);
    uint64_t seed = 0;
    st = mr_h5_attr_read(grp, path, g, "noise_seed", H5T_INTEGER, H5T_NATIVE_UINT64, &seed, 1, &have);
    if (st != MR_OK)
        return st;
    ks->noise_sigma = sigma < 0 ? -1.0 : sigma;
    ks->snr_db = snr;
    ks->noise_seed = seed;
    return MR_OK;
}

/* Version 3's compact readout timing, used when /kspace/time is absent: every readout of R samples has
 * t = readout_te_s + (j - readout_echo_sample) readout_dwell_s for its sample j (docs/FORMAT.md 1.2).
 * *have 0 when the attributes are absent (all four or none). */
static mr_status read_timing(hid_t grp, const char *path, const mr_kspace *ks, double *te, double *dwell,
                             int64_t *samples, int64_t *echo, int *have)
{
    const char *g = "/kspace";
    static const char *const names[4] = {"readout_te_s", "readout_dwell_s", "readout_samples", "readout_echo_sample"};
    int got[4] = {0, 0, 0, 0};
    mr_status st = mr_h5_attr_read(grp, path, g, names[0], H5T_FLOAT, H5T_NATIVE_DOUBLE, te, 1, &got[0]);
    if (st == MR_OK)
        st = mr_h5_attr_read(grp, path, g, names[1], H5T_FLOAT, H5T_NATIVE_DOUBLE, dwell, 1, &got[1]);
    if (st == MR_OK)
        st = mr_h5_attr_read(grp, path, g, names[2], H5T_INTEGER, H5T_NATIVE_INT64, samples, 1, &got[2]);
    if (st == MR_OK)
        st = mr_h5_attr_read(grp, path, g, names[3], H5T_INTEGER, H5T_NATIVE_INT64, echo, 1, &got[3]);
    if (st != MR_OK)
        return st;
    *have = got[0] && got[1] && got[2] && got[3];
    for (int i = 0; i < 4 && !*have; i++)
        if (got[i] != got[0])
            return mr_error(MR_EFORMAT, "%s: %s has attribute '%s' but not '%s': the readout timing needs all of "
                                        "readout_te_s, readout_dwell_s, readout_samples and readout_echo_sample",
                            path, g, names[got[0] ? 0 : i], names[got[0] ? i : 0]);
    if (!*have)
        return MR_OK;
    if (!isfinite(*te) || !isfinite(*dwell) || !(*dwell > 0))
        return mr_error(MR_EFORMAT, "%s: %s: readout_te_s = %g and readout_dwell_s = %g must be finite, the dwell > 0",
                        path, g, *te, *dwell);
    if (*samples < 1 || ks->nsamples % *samples != 0 || *echo < 0 || *echo >= *samples)
        return mr_error(MR_EFORMAT, "%s: %s: readout_samples = %lld must divide the %lld samples and "
                                    "readout_echo_sample = %lld lie in 0..readout_samples-1",
                        path, g, (long long)*samples, (long long)ks->nsamples, (long long)*echo);
    return MR_OK;
}

static mr_status read_scan(hid_t file, const char *path, void *out) { return mr_kspace_read_file(file, path, out); }
static mr_status send_scan(void *ctx, int fd) { return mr_kspace_send(fd, *(mr_kspace **)ctx); }
static mr_status recv_scan(void *ctx, int fd, int file_fd, const char *label)
{
    return mr_kspace_recv(fd, file_fd, label, ctx);
}

const mr_h5_isolated mr_kspace_h5_isolated = {read_scan, send_scan, recv_scan, 1};

mr_status mr_kspace_read(const char *path, mr_kspace **out)
{
    *out = NULL;
    return mr_h5_read_path_in_child(path, &mr_kspace_h5_isolated, out);
}

mr_status mr_kspace_read_file(hid_t file, const char *path, mr_kspace **out)
{
    *out = NULL;
    hid_t grp = H5I_INVALID_HID, dtraj = H5I_INVALID_HID, ddata = H5I_INVALID_HID;
    hid_t dw = H5I_INVALID_HID, dtruth = H5I_INVALID_HID, dbl = H5I_INVALID_HID, dsens = H5I_INVALID_HID;
    hid_t dtime = H5I_INVALID_HID, dfield = H5I_INVALID_HID;
    hsize_t tdims[2], ddims[3];
    mr_kspace *ks = NULL;
    int have_w = 0, have_t = 0, have_bl = 0, have_s = 0, have_time = 0, have_field = 0;
    mr_status st;

    int checked = 0; /* the file promises a checksum on every dataset */
    if ((st = mr_h5_open_group(file, path, "/kspace", &grp)) != MR_OK ||
        (st = mr_h5_checksums_promised(grp, path, "/kspace", &checked)) != MR_OK)
        goto done;

    /* pass 1: shapes, types and the matrix; nothing is allocated */
    int64_t matrix[3];
    st = mr_h5_attr_read(grp, path, "/kspace", "matrix", H5T_INTEGER, H5T_NATIVE_INT64, matrix, 3, NULL);
    if (st != MR_OK)
        goto done;
    char what[1100];
    snprintf(what, sizeof what, "%s: /kspace attribute 'matrix'", path);
    if ((st = mr_matrix_check(matrix, what)) != MR_OK)
        goto done;

    if ((st = open_f32(file, path, DS_TRAJ, 2, checked, &dtraj, tdims)) != MR_OK)
        goto done;
    if (tdims[1] != 3) {
        st = mr_error(MR_EFORMAT, "%s: %s: second dimension is %llu, expected 3 (kx, ky, kz)", path, DS_TRAJ,
                      (unsigned long long)tdims[1]);
        goto done;
    }
    if (tdims[0] > (hsize_t)MR_MAX_SAMPLES) {
        st = mr_error(MR_EFORMAT, "%s: %s: %llu samples, more than %lld", path, DS_TRAJ,
                      (unsigned long long)tdims[0], (long long)MR_MAX_SAMPLES);
        goto done;
    }
    if ((st = open_f32(file, path, DS_DATA, 3, checked, &ddata, ddims)) != MR_OK)
        goto done;
    if (ddims[2] != 2) {
        st = mr_error(MR_EFORMAT, "%s: %s: last dimension is %llu, expected 2 (re, im)", path, DS_DATA,
                      (unsigned long long)ddims[2]);
        goto done;
    }
    if (ddims[1] != tdims[0]) {
        st = mr_error(MR_EFORMAT, "%s: %s: has %llu samples per coil but %s has %llu", path, DS_DATA,
                      (unsigned long long)ddims[1], DS_TRAJ, (unsigned long long)tdims[0]);
        goto done;
    }
    if (ddims[0] > MR_MAX_COILS) {
        st = mr_error(MR_EFORMAT, "%s: %s: %llu coils, more than %d", path, DS_DATA, (unsigned long long)ddims[0],
                      MR_MAX_COILS);
        goto done;
    }
    const hsize_t wdims[1] = {tdims[0]};
    if ((st = open_optional(file, path, DS_WEIGHTS, 1, wdims, "M, the number of samples", checked, &dw, &have_w)) != MR_OK)
        goto done;
    const hsize_t vdims[3] = {(hsize_t)matrix[2], (hsize_t)matrix[1], (hsize_t)matrix[0]};
    if ((st = open_optional(file, path, DS_TRUTH, 3, vdims, "[Nz][Ny][Nx] of the matrix", checked, &dtruth, &have_t)) != MR_OK)
        goto done;
    if ((st = open_optional(file, path, DS_TRUTH_BL, 3, vdims, "[Nz][Ny][Nx] of the matrix", checked, &dbl, &have_bl)) !=
        MR_OK)
        goto done;
    const hsize_t sdims[5] = {ddims[0], vdims[0], vdims[1], vdims[2], 2};
    if ((st = open_optional(file, path, DS_SENS, 5, sdims, "[C][Nz][Ny][Nx][2]: coils of /kspace/data, the matrix",
                            checked, &dsens, &have_s)) != MR_OK)
        goto done;
    if ((st = open_optional(file, path, DS_TIME, 1, wdims, "M, the number of samples", checked, &dtime, &have_time)) != MR_OK ||
        (st = open_optional(file, path, DS_FIELDMAP, 3, vdims, "[Nz][Ny][Nx] of the matrix", checked, &dfield, &have_field)) !=
            MR_OK)
        goto done;

    /* pass 2: allocate and read the values */
    if ((st = mr_kspace_create(&ks, matrix, (int64_t)tdims[0], (int64_t)ddims[0])) != MR_OK)
        goto done;
    size_t nvox = (size_t)mr_kspace_voxels(ks);
    if ((have_w && !(ks->weights = malloc((size_t)ks->nsamples * sizeof(float)))) ||
        (have_t && !(ks->truth = malloc(nvox * sizeof(float)))) ||
        (have_bl && !(ks->truth_bl = malloc(nvox * sizeof(float)))) ||
        (have_s && !(ks->sens = malloc((size_t)ks->ncoils * nvox * 2 * sizeof(float)))) ||
        (have_time && !(ks->time = malloc((size_t)ks->nsamples * sizeof(float)))) ||
        (have_field && !(ks->fieldmap = malloc(nvox * sizeof(float))))) {
        st = mr_error(MR_ENOMEM, "%s: out of memory for the optional arrays", path);
        goto done;
    }
    if ((st = mr_h5_read_f32(dtraj, path, DS_TRAJ, 2, tdims, ks->traj)) != MR_OK ||
        (st = mr_h5_read_f32(ddata, path, DS_DATA, 3, ddims, ks->data)) != MR_OK ||
        (have_w && (st = mr_h5_read_f32(dw, path, DS_WEIGHTS, 1, wdims, ks->weights)) != MR_OK) ||
        (have_t && (st = mr_h5_read_f32(dtruth, path, DS_TRUTH, 3, vdims, ks->truth)) != MR_OK) ||
        (have_bl && (st = mr_h5_read_f32(dbl, path, DS_TRUTH_BL, 3, vdims, ks->truth_bl)) != MR_OK) ||
        (have_s && (st = mr_h5_read_f32(dsens, path, DS_SENS, 5, sdims, ks->sens)) != MR_OK) ||
        (have_time && (st = mr_h5_read_f32(dtime, path, DS_TIME, 1, wdims, ks->time)) != MR_OK) ||
        (have_field && (st = mr_h5_read_f32(dfield, path, DS_FIELDMAP, 3, vdims, ks->fieldmap)) != MR_OK))
        goto done;
    if (have_w && !mr_h5_deferred(ks->weights)) { /* deferred: the process that reads them checks them */
        int64_t neg = first_negative(ks->weights, ks->nsamples);
        if (neg >= 0) {
            st = mr_error(MR_EFORMAT, "%s: %s: negative weight %g at [%lld]", path, DS_WEIGHTS,
                          (double)ks->weights[neg], (long long)neg);
            goto done;
        }
    }
    st = read_meta(grp, path, ks);
    if (st == MR_OK && !have_time) {
        double te = 0, dwell = 0;
        int64_t rs = 0, echo = 0;
        int have = 0;
        st = read_timing(grp, path, ks, &te, &dwell, &rs, &echo, &have);
        if (st == MR_OK && have && (st = mr_kspace_alloc_time(ks)) == MR_OK)
            for (int64_t k = 0; k < ks->nsamples; k++)
                ks->time[k] = (float)(te + (double)(k % rs - echo) * dwell);
    }

done:
    mr_h5_close(&dfield);
    mr_h5_close(&dtime);
    mr_h5_close(&dsens);
    mr_h5_close(&dbl);
    mr_h5_close(&dtruth);
    mr_h5_close(&dw);
    mr_h5_close(&ddata);
    mr_h5_close(&dtraj);
    mr_h5_close(&grp);
    if (st != MR_OK) {
        mr_kspace_free(ks);
        return st;
    }
    *out = ks;
    return MR_OK;
}

/* ---- writer ------------------------------------------------------------------------------- */

static mr_status check_finite(const char *path, const char *name, const float *v, int rank, const hsize_t *dims)
{
    size_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= (size_t)dims[i];
    int64_t bad = mr_h5_first_nonfinite(v, n);
    if (bad < 0)
        return MR_OK;
    char at[96];
    mr_h5_format_index(at, sizeof at, bad, rank, dims);
    return mr_error(MR_EINVAL, "%s: refusing to write %s: non-finite value %g at %s", path, name, (double)v[bad], at);
}

/* The reader's rules, applied to a scan in memory before it is written. */
static mr_status check_scan(const char *path, const mr_kspace *ks, const hsize_t *tdims, const hsize_t *ddims,
                            const hsize_t *vdims)
{
    char what[1100];
    snprintf(what, sizeof what, "%s: refusing to write", path);
    mr_status st = mr_matrix_check(ks->matrix, what);
    if (st != MR_OK)
        return mr_error(MR_EINVAL, "%s", mr_last_error());
    if (ks->nsamples < 1 || ks->nsamples > MR_MAX_SAMPLES || ks->ncoils < 1 || ks->ncoils > MR_MAX_COILS)
        return mr_error(MR_EINVAL, "%s: refusing to write %lld samples x %lld coils", path, (long long)ks->nsamples,
                        (long long)ks->ncoils);
    if (!ks->traj || !ks->data)
        return mr_error(MR_EINVAL, "%s: refusing to write a scan without trajectory or data", path);
    for (int i = 0; i < 3; i++)
        if (!isfinite(ks->fov_mm[i]) || ks->fov_mm[i] < 0)
            return mr_error(MR_EINVAL, "%s: refusing to write fov_mm[%d] = %g", path, i, (double)ks->fov_mm[i]);
    if (!isfinite(ks->noise_sigma) || isnan(ks->snr_db))
        return mr_error(MR_EINVAL, "%s: refusing to write noise_sigma %g, snr_db %g", path, ks->noise_sigma,
                        ks->snr_db);
    if (!memchr(ks->traj_kind, 0, sizeof ks->traj_kind) || !memchr(ks->phantom, 0, sizeof ks->phantom))
        return mr_error(MR_EINVAL, "%s: refusing to write an unterminated trajectory or phantom name", path);
    if (mr_h5_text_bad_at(ks->traj_kind, strlen(ks->traj_kind)) >= 0 ||
        mr_h5_text_bad_at(ks->phantom, strlen(ks->phantom)) >= 0)
        return mr_error(MR_EINVAL, "%s: refusing to write a trajectory or phantom name that is not text (control "
                                   "characters or invalid UTF-8): the reader would refuse it",
                        path);
    const hsize_t wdims[1] = {(hsize_t)ks->nsamples};
    if ((st = check_finite(path, DS_TRAJ, ks->traj, 2, tdims)) != MR_OK ||
        (st = check_finite(path, DS_DATA, ks->data, 3, ddims)) != MR_OK ||
        (ks->weights && (st = check_finite(path, DS_WEIGHTS, ks->weights, 1, wdims)) != MR_OK) ||
        (ks->truth && (st = check_finite(path, DS_TRUTH, ks->truth, 3, vdims)) != MR_OK) ||
        (ks->truth_bl && (st = check_finite(path, DS_TRUTH_BL, ks->truth_bl, 3, vdims)) != MR_OK))
        return st;
    const hsize_t sdims[5] = {(hsize_t)ks->ncoils, vdims[0], vdims[1], vdims[2], 2};
    if ((ks->sens && (st = check_finite(path, DS_SENS, ks->sens, 5, sdims)) != MR_OK) ||
        (ks->time && (st = check_finite(path, DS_TIME, ks->time, 1, wdims)) != MR_OK) ||
        (ks->fieldmap && (st = check_finite(path, DS_FIELDMAP, ks->fieldmap, 3, vdims)) != MR_OK))
        return st;
    if (ks->weights) {
        int64_t neg = first_negative(ks->weights, ks->nsamples);
        if (neg >= 0)
            return mr_error(MR_EINVAL, "%s: refusing to write %s: negative weight %g at [%lld]", path, DS_WEIGHTS,
                            (double)ks->weights[neg], (long long)neg);
    }
    return MR_OK;
}

static mr_status write_attrs(hid_t grp, const char *path, const mr_kspace *ks)
{
    const int32_t version = ks->time || ks->fieldmap ? 3 : ks->sens ? 2 : 1; /* the lowest that holds the content */
    const int32_t matrix[3] = {(int32_t)ks->matrix[0], (int32_t)ks->matrix[1], (int32_t)ks->matrix[2]};
    mr_status st = mr_h5_attr_write_string(grp, path, "format", MR_FORMAT_NAME);
    if (st == MR_OK)
        st = mr_h5_promise_checksums(grp, path); /* every dataset: mr_h5_write_f32's fletcher32 */
    if (st == MR_OK)
        st = mr_h5_attr_write(grp, path, "version", H5T_STD_I32LE, H5T_NATIVE_INT32, &version, 0);
    if (st == MR_OK)
        st = mr_h5_attr_write(grp, path, "matrix", H5T_STD_I32LE, H5T_NATIVE_INT32, matrix, 3);
    if (st == MR_OK && (ks->fov_mm[0] > 0 || ks->fov_mm[1] > 0 || ks->fov_mm[2] > 0))
        st = mr_h5_attr_write(grp, path, "fov_mm", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, ks->fov_mm, 3);
    if (st == MR_OK && ks->traj_kind[0])
        st = mr_h5_attr_write_string(grp, path, "trajectory", ks->traj_kind);
    if (st == MR_OK && ks->phantom[0])
        st = mr_h5_attr_write_string(grp, path, "phantom", ks->phantom);
    if (st == MR_OK && ks->noise_sigma >= 0) {
        st = mr_h5_attr_write(grp, path, "noise_sigma", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &ks->noise_sigma, 0);
        if (st == MR_OK)
            st = mr_h5_attr_write(grp, path, "snr_db", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &ks->snr_db, 0);
        if (st == MR_OK)
            st = mr_h5_attr_write(grp, path, "noise_seed", H5T_STD_U64LE, H5T_NATIVE_UINT64, &ks->noise_seed, 0);
    }
    return st;
}

mr_status mr_kspace_write(const char *path, const mr_kspace *ks)
{
    const hsize_t tdims[2] = {(hsize_t)ks->nsamples, 3};
    const hsize_t ddims[3] = {(hsize_t)ks->ncoils, (hsize_t)ks->nsamples, 2};
    const hsize_t wdims[1] = {(hsize_t)ks->nsamples};
    const hsize_t vdims[3] = {(hsize_t)ks->matrix[2], (hsize_t)ks->matrix[1], (hsize_t)ks->matrix[0]};
    mr_status st = check_scan(path, ks, tdims, ddims, vdims);
    if (st != MR_OK)
        return st;
    char tmp[4096];
    hid_t file, grp = H5I_INVALID_HID, tgrp = H5I_INVALID_HID;
    if ((st = mr_h5_create_tmp(path, tmp, sizeof tmp, &file)) != MR_OK)
        return st;
    grp = mr_h5_create_group(file, "/kspace");
    if (grp < 0) {
        st = mr_error(MR_EIO, "%s: cannot create group /kspace", path);
        goto done;
    }
    if ((st = write_attrs(grp, path, ks)) != MR_OK ||
        (st = mr_h5_write_f32(file, path, DS_TRAJ, 2, tdims, ks->traj)) != MR_OK ||
        (st = mr_h5_write_f32(file, path, DS_DATA, 3, ddims, ks->data)) != MR_OK ||
        (ks->weights && (st = mr_h5_write_f32(file, path, DS_WEIGHTS, 1, wdims, ks->weights)) != MR_OK))
        goto done;
    const hsize_t sdims[5] = {(hsize_t)ks->ncoils, vdims[0], vdims[1], vdims[2], 2};
    if ((ks->sens && (st = mr_h5_write_f32(file, path, DS_SENS, 5, sdims, ks->sens)) != MR_OK) ||
        (ks->time && (st = mr_h5_write_f32(file, path, DS_TIME, 1, wdims, ks->time)) != MR_OK) ||
        (ks->fieldmap && (st = mr_h5_write_f32(file, path, DS_FIELDMAP, 3, vdims, ks->fieldmap)) != MR_OK))
        goto done;
    if (ks->truth || ks->truth_bl) {
        tgrp = mr_h5_create_group(file, "/truth");
        if (tgrp < 0) {
            st = mr_error(MR_EIO, "%s: cannot create group /truth", path);
            goto done;
        }
        if ((ks->truth && (st = mr_h5_write_f32(file, path, DS_TRUTH, 3, vdims, ks->truth)) != MR_OK) ||
            (ks->truth_bl && (st = mr_h5_write_f32(file, path, DS_TRUTH_BL, 3, vdims, ks->truth_bl)) != MR_OK))
            goto done;
    }
done:
    mr_h5_close(&tgrp);
    mr_h5_close(&grp);
    return mr_h5_close_commit(file, tmp, path, st);
}
