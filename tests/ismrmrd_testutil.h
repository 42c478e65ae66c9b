/* Test helper: write an mr_kspace as an ISMRMRD file with libismrmrd's own C API (ismrmrd/ismrmrd.h,
 * ismrmrd/dataset.h), the reference implementation our reader must agree with. Header-only (each
 * test is one source file); compiled only with MR_HAVE_ISMRMRD (CMake finds libismrmrd-dev).
 *
 * The scan's samples are cut into acquisitions of `readout` samples each (our phantoms order
 * samples readout fastest, so an acquisition is one spoke or interleaf). The trajectory is stored
 * in the chosen units (and sign); noise acquisitions with a known coil covariance may precede the
 * imaging ones; the scan may be repeated as several slices / repetitions (data scaled by 1 + copy
 * index, so that volumes differ) or averages (identical copies). */
#ifndef MR_ISMRMRD_TESTUTIL_H
#define MR_ISMRMRD_TESTUTIL_H
#ifdef MR_HAVE_ISMRMRD

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <ismrmrd/dataset.h>
#include <ismrmrd/ismrmrd.h>
#pragma GCC diagnostic pop

#include "io/kspace.h"
#include "io/read_opts.h"
#include "testutil.h"

typedef struct {
    mr_traj_units units;   /* CYCLES, NORMALIZED, RADIANS or PER_M */
    int sign;              /* +1 or -1: the stored trajectory is sign * k */
    int64_t readout;       /* samples per acquisition; must divide the scan's sample count */
    int noise_acqs;        /* noise acquisitions (each `readout` samples) written first */
    double noise_sigma;    /* per real/imag part of the independent noise before mixing */
    double noise_rho;      /* coil noise mixing: A[i][j] = rho^(i-j) (j <= i), noise = A z; < 0: every
                              coil the same noise (a singular covariance) */
    uint64_t seed;
    int slices, repetitions, averages; /* >= 1 copies of the scan */
    int discard_pre, discard_post;     /* extra samples around each readout (flagged for discard) */
    const char *trajectory;            /* header <trajectory>; NULL: from the scan's traj_kind */
    int traj_dims;                     /* 0: 2 for a 2D scan, 3 for 3D; 3 forces a 3D trajectory */
    int oversample;                    /* 1, or 2: encodedSpace twice the scan's matrix and FOV in x (readout
                                          oversampling), reconSpace the scan's; kx stored per encoded FOV */
} ism_opts;

static inline void ism_opts_default(ism_opts *o)
{
    memset(o, 0, sizeof *o);
    o->units = MR_UNITS_CYCLES;
    o->sign = 1;
    o->noise_sigma = 1.0;
    o->seed = 7;
    o->slices = o->repetitions = o->averages = 1;
    o->oversample = 1;
}

/* the stored value of k (cycles/FOV) on an axis with matrix n and FOV fov_mm */
static inline float ism_to_units(float k, mr_traj_units u, int64_t n, double fov_mm)
{
    switch (u) {
    case MR_UNITS_NORMALIZED:
        return (float)((double)k / (double)n);
    case MR_UNITS_RADIANS:
        return (float)(2 * M_PI * (double)k / (double)n);
    case MR_UNITS_PER_M:
        return (float)((double)k * 1000.0 / fov_mm);
    default:
        return k;
    }
}

static inline const char *ism_traj_name(const char *kind)
{
    if (!strcmp(kind, "radial2d") || !strcmp(kind, "kooshball") || !strcmp(kind, "stack-of-stars"))
        return "radial";
    if (!strcmp(kind, "golden2d"))
        return "goldenangle";
    if (!strncmp(kind, "spiral", 6) || !strcmp(kind, "stack-of-spirals"))
        return "spiral";
    return "other";
}

/* Correlated complex noise for C coils: n = A z (A as in ism_opts) */
static inline void ism_noise(float *n, int64_t C, int64_t S, double sigma, double rho, uint64_t *rng)
{
    double *z = malloc((size_t)C * 2 * sizeof *z);
    for (int64_t s = 0; s < S; s++) {
        for (int64_t c = 0; c < 2 * C; c++)
            z[c] = sigma * test_normal(rng);
        for (int64_t i = 0; i < C; i++) {
            double re = 0, im = 0, w = 1;
            if (rho < 0) {
                n[2 * (i * S + s)] = (float)z[0];
                n[2 * (i * S + s) + 1] = (float)z[1];
                continue;
            }
            for (int64_t j = i; j >= 0; j--, w *= rho) {
                re += w * z[2 * j];
                im += w * z[2 * j + 1];
            }
            n[2 * (i * S + s)] = (float)re;
            n[2 * (i * S + s) + 1] = (float)im;
        }
    }
    free(z);
}

/* Write the header; 0 on success. */
static inline int ism_write_header(ISMRMRD_Dataset *d, const mr_kspace *ks, const ism_opts *o)
{
    double fov[3];
    for (int a = 0; a < 3; a++)
        fov[a] = ks->fov_mm[a] > 0 ? ks->fov_mm[a] : 256.0;
    char xml[4096];
    snprintf(xml, sizeof xml,
             "<?xml version=\"1.0\"?>\n"
             "<ismrmrdHeader xmlns=\"http://www.ismrm.org/ISMRMRD\">\n"
             "  <acquisitionSystemInformation><receiverChannels>%lld</receiverChannels></acquisitionSystemInformation>\n"
             "  <experimentalConditions><H1resonanceFrequency_Hz>63500000</H1resonanceFrequency_Hz></experimentalConditions>\n"
             "  <encoding>\n"
             "    <encodedSpace><matrixSize><x>%lld</x><y>%lld</y><z>%lld</z></matrixSize>\n"
             "      <fieldOfView_mm><x>%.9g</x><y>%.9g</y><z>%.9g</z></fieldOfView_mm></encodedSpace>\n"
             "    <reconSpace><matrixSize><x>%lld</x><y>%lld</y><z>%lld</z></matrixSize>\n"
             "      <fieldOfView_mm><x>%.9g</x><y>%.9g</y><z>%.9g</z></fieldOfView_mm></reconSpace>\n"
             "    <encodingLimits>\n"
             "      <slice><minimum>0</minimum><maximum>%d</maximum><center>0</center></slice>\n"
             "      <repetition><minimum>0</minimum><maximum>%d</maximum><center>0</center></repetition>\n"
             "      <average><minimum>0</minimum><maximum>%d</maximum><center>0</center></average>\n"
             "    </encodingLimits>\n"
             "    <trajectory>%s</trajectory>\n"
             "  </encoding>\n"
             "</ismrmrdHeader>\n",
             (long long)ks->ncoils, (long long)(o->oversample * ks->matrix[0]), (long long)ks->matrix[1],
             (long long)ks->matrix[2], o->oversample * fov[0], fov[1], fov[2], (long long)ks->matrix[0],
             (long long)ks->matrix[1], (long long)ks->matrix[2],
             fov[0], fov[1], fov[2], o->slices - 1, o->repetitions - 1, o->averages - 1,
             o->trajectory ? o->trajectory : ism_traj_name(ks->traj_kind));
    return ismrmrd_write_header(d, xml) != ISMRMRD_NOERROR;
}

/* Write ks to path (replacing it). Returns 0 on success. */
static inline int ism_write(const char *path, const mr_kspace *ks, const ism_opts *o)
{
    remove(path);
    const int64_t M = ks->nsamples, C = ks->ncoils, R = o->readout;
    if (R < 1 || M % R != 0 || R + o->discard_pre + o->discard_post > 65535) {
        fprintf(stderr, "ism_write: readout %lld does not divide %lld samples\n", (long long)R, (long long)M);
        return 1;
    }
    const int td = o->traj_dims ? o->traj_dims : (ks->matrix[2] > 1 ? 3 : 2);
    double fov[3];
    for (int a = 0; a < 3; a++)
        fov[a] = ks->fov_mm[a] > 0 ? ks->fov_mm[a] : 256.0;
    ISMRMRD_Dataset d;
    if (ismrmrd_init_dataset(&d, path, "/dataset") != ISMRMRD_NOERROR || ismrmrd_open_dataset(&d, true) != ISMRMRD_NOERROR)
        return 1;
    int bad = ism_write_header(&d, ks, o);
    ISMRMRD_Acquisition acq;
    ismrmrd_init_acquisition(&acq);
    uint64_t rng = o->seed;
    const int64_t ns = R + o->discard_pre + o->discard_post;
    /* noise scans */
    float *noise = malloc((size_t)(C * R) * 2 * sizeof *noise);
    for (int q = 0; !bad && q < o->noise_acqs; q++) {
        ismrmrd_init_acquisition_header(&acq.head);
        acq.head.number_of_samples = (uint16_t)R;
        acq.head.active_channels = acq.head.available_channels = (uint16_t)C;
        acq.head.trajectory_dimensions = 0;
        acq.head.sample_time_us = 5.0f;
        acq.head.scan_counter = (uint32_t)q;
        ismrmrd_set_flag(&acq.head.flags, ISMRMRD_ACQ_IS_NOISE_MEASUREMENT);
        ismrmrd_make_consistent_acquisition(&acq);
        ism_noise(noise, C, R, o->noise_sigma, o->noise_rho, &rng);
        for (int64_t c = 0; c < C; c++)
            for (int64_t s = 0; s < R; s++)
                acq.data[c * R + s] = noise[2 * (c * R + s)] + noise[2 * (c * R + s) + 1] * I;
        bad = ismrmrd_append_acquisition(&d, &acq) != ISMRMRD_NOERROR;
    }
    free(noise);
    uint32_t counter = (uint32_t)o->noise_acqs;
    for (int sl = 0; !bad && sl < o->slices; sl++)
        for (int rep = 0; !bad && rep < o->repetitions; rep++)
            for (int av = 0; !bad && av < o->averages; av++) {
                const float scale = (float)(1 + sl + rep); /* averages: identical copies */
                for (int64_t a0 = 0; !bad && a0 < M; a0 += R) {
                    ismrmrd_init_acquisition_header(&acq.head);
                    acq.head.number_of_samples = (uint16_t)ns;
                    acq.head.active_channels = acq.head.available_channels = (uint16_t)C;
                    acq.head.trajectory_dimensions = (uint16_t)td;
                    acq.head.discard_pre = (uint16_t)o->discard_pre;
                    acq.head.discard_post = (uint16_t)o->discard_post;
                    acq.head.center_sample = (uint16_t)(o->discard_pre + R / 2);
                    acq.head.sample_time_us = 2.5f;
                    acq.head.scan_counter = counter++;
                    acq.head.idx.slice = (uint16_t)sl;
                    acq.head.idx.repetition = (uint16_t)rep;
                    acq.head.idx.average = (uint16_t)av;
                    acq.head.idx.kspace_encode_step_1 = (uint16_t)(a0 / R);
                    acq.head.read_dir[0] = acq.head.phase_dir[1] = acq.head.slice_dir[2] = 1.0f;
                    acq.head.position[2] = (float)(5 * sl);
                    ismrmrd_make_consistent_acquisition(&acq);
                    for (int64_t q = 0; q < ns; q++) {
                        const int64_t m = a0 + q - o->discard_pre; /* sample of the scan */
                        const int keep = q >= o->discard_pre && q < o->discard_pre + R;
                        for (int a = 0; a < td; a++) {
                            const int os = a == 0 ? o->oversample : 1; /* per encoded FOV */
                            acq.traj[q * td + a] =
                                keep ? (float)o->sign * ism_to_units((float)os * ks->traj[3 * m + a], o->units,
                                                                      os * ks->matrix[a], os * fov[a])
                                     : 1e3f; /* discarded: far out, must be ignored */
                        }
                        for (int64_t c = 0; c < C; c++)
                            acq.data[c * ns + q] =
                                keep ? scale * ks->data[2 * (c * M + m)] + scale * ks->data[2 * (c * M + m) + 1] * I
                                     : 1e6f;
                    }
                    bad = ismrmrd_append_acquisition(&d, &acq) != ISMRMRD_NOERROR;
                }
            }
    ismrmrd_cleanup_acquisition(&acq);
    if (ismrmrd_close_dataset(&d) != ISMRMRD_NOERROR)
        bad = 1;
    return bad;
}


/* ---- corrupting a written file (malformed-input tests), with plain HDF5 ----------------------- */

/* Write acquisition i of /dataset/data through memtype (a compound with the members to replace). */
static inline int ism_write_element(const char *path, hsize_t i, hid_t memtype, const void *buf)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t d = f >= 0 ? H5Dopen2(f, "/dataset/data", H5P_DEFAULT) : -1;
    hid_t fs = d >= 0 ? H5Dget_space(d) : -1, ms = H5Screate(H5S_SCALAR);
    int bad = d < 0 || fs < 0 || H5Sselect_elements(fs, H5S_SELECT_SET, 1, &i) < 0 ||
              H5Dwrite(d, memtype, ms, fs, H5P_DEFAULT, buf) < 0;
    H5Sclose(ms);
    if (fs >= 0)
        H5Sclose(fs);
    if (d >= 0)
        H5Dclose(d);
    if (f >= 0)
        H5Fclose(f);
    return bad;
}

/* Overwrite the uint16 header member `member` (or idx.`sub` when member is "idx") of acquisition i. */
static inline int ism_patch_u16(const char *path, hsize_t i, const char *member, const char *sub, uint16_t value)
{
    hid_t leaf = H5Tcreate(H5T_COMPOUND, 2);
    H5Tinsert(leaf, sub ? sub : member, 0, H5T_NATIVE_UINT16);
    hid_t mid = leaf;
    if (sub) {
        mid = H5Tcreate(H5T_COMPOUND, 2);
        H5Tinsert(mid, member, 0, leaf);
    }
    hid_t top = H5Tcreate(H5T_COMPOUND, 2);
    H5Tinsert(top, "head", 0, mid);
    int bad = ism_write_element(path, i, top, &value);
    H5Tclose(top);
    if (sub)
        H5Tclose(mid);
    H5Tclose(leaf);
    return bad;
}

/* Overwrite the float header member `member` (e.g. sample_time_us) of acquisition i. */
static inline int ism_patch_f32(const char *path, hsize_t i, const char *member, float value)
{
    hid_t leaf = H5Tcreate(H5T_COMPOUND, sizeof(float));
    H5Tinsert(leaf, member, 0, H5T_NATIVE_FLOAT);
    hid_t top = H5Tcreate(H5T_COMPOUND, sizeof(float));
    H5Tinsert(top, "head", 0, leaf);
    int bad = ism_write_element(path, i, top, &value);
    H5Tclose(top);
    H5Tclose(leaf);
    return bad;
}

/* Set the stored length of acquisition i's variable-length "data" (the last member of libismrmrd's record,
 * one record per chunk) to `len` in the file's bytes, leaving its values as they are: a length no writer
 * would store, as a damaged or hostile file has. The record is read raw (H5Dread_chunk), its data
 * descriptor (length, heap address, index: 16 bytes at its end) must hold `was`, and the record's bytes
 * are found in the file and patched. */
static inline int ism_patch_vlen_length(const char *path, hsize_t i, uint32_t was, uint32_t len)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = f >= 0 ? H5Dopen2(f, "/dataset/data", H5P_DEFAULT) : -1;
    hsize_t size = 0, off[1] = {i};
    uint32_t mask = 0;
    unsigned char *rec = NULL;
    int bad = d < 0 || H5Dget_chunk_storage_size(d, off, &size) < 0 || size < 16 || !(rec = malloc((size_t)size)) ||
              H5Dread_chunk(d, H5P_DEFAULT, off, &mask, rec) < 0;
    if (d >= 0)
        H5Dclose(d);
    if (f >= 0)
        H5Fclose(f);
    uint32_t stored = 0;
    if (!bad)
        memcpy(&stored, rec + size - 16, 4);
    bad = bad || stored != was;
    FILE *io = bad ? NULL : fopen(path, "r+b");
    long at = -1;
    if (io) { /* the record's bytes in the file */
        fseek(io, 0, SEEK_END);
        const long n = ftell(io);
        unsigned char *all = n > 0 ? malloc((size_t)n) : NULL;
        fseek(io, 0, SEEK_SET);
        if (all && fread(all, 1, (size_t)n, io) == (size_t)n)
            for (long k = 0; k + (long)size <= n && at < 0; k++)
                if (memcmp(all + k, rec, (size_t)size) == 0)
                    at = k;
        free(all);
        if (at >= 0) {
            fseek(io, at + (long)size - 16, SEEK_SET);
            bad = fwrite(&len, 4, 1, io) != 1;
        }
        bad = fclose(io) != 0 || bad || at < 0;
    }
    free(rec);
    return bad || !io;
}

/* Replace the variable-length member "traj" or "data" of acquisition i by n floats. */
static inline int ism_patch_vlen(const char *path, hsize_t i, const char *member, const float *vals, size_t n)
{
    hid_t vl = H5Tvlen_create(H5T_NATIVE_FLOAT), top = H5Tcreate(H5T_COMPOUND, sizeof(hvl_t));
    H5Tinsert(top, member, 0, vl);
    hvl_t h = {n, (void *)vals};
    int bad = ism_write_element(path, i, top, &h);
    H5Tclose(top);
    H5Tclose(vl);
    return bad;
}

/* Replace /dataset/xml by `xml` (NULL: delete it). */
static inline int ism_replace_xml(const char *path, const char *xml)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0)
        return 1;
    int bad = H5Ldelete(f, "/dataset/xml", H5P_DEFAULT) < 0;
    if (!bad && xml) {
        hid_t t = H5Tcopy(H5T_C_S1);
        H5Tset_size(t, H5T_VARIABLE);
        hsize_t one = 1;
        hid_t sp = H5Screate_simple(1, &one, NULL);
        hid_t d = H5Dcreate2(f, "/dataset/xml", t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        bad = d < 0 || H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, &xml) < 0;
        if (d >= 0)
            H5Dclose(d);
        H5Sclose(sp);
        H5Tclose(t);
    }
    H5Fclose(f);
    return bad;
}

/* Set the number of acquisitions of /dataset/data (extendible, chunked as libismrmrd makes it). */
static inline int ism_set_extent(const char *path, hsize_t n)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t d = f >= 0 ? H5Dopen2(f, "/dataset/data", H5P_DEFAULT) : -1;
    int bad = d < 0 || H5Dset_extent(d, &n) < 0;
    if (d >= 0)
        H5Dclose(d);
    if (f >= 0)
        H5Fclose(f);
    return bad;
}

/* Replace /dataset/data by a float dataset (not an acquisition list). */
static inline int ism_replace_data_float(const char *path)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0)
        return 1;
    int bad = H5Ldelete(f, "/dataset/data", H5P_DEFAULT) < 0;
    hsize_t n = 4;
    float v[4] = {1, 2, 3, 4};
    hid_t sp = H5Screate_simple(1, &n, NULL);
    hid_t d = bad ? -1 : H5Dcreate2(f, "/dataset/data", H5T_NATIVE_FLOAT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    bad = bad || d < 0 || H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0;
    if (d >= 0)
        H5Dclose(d);
    H5Sclose(sp);
    H5Fclose(f);
    return bad;
}

/* Replace /dataset/data by a compound {head {number_of_samples}, traj, data} missing most members. */
static inline int ism_replace_data_partial(const char *path)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0)
        return 1;
    int bad = H5Ldelete(f, "/dataset/data", H5P_DEFAULT) < 0;
    typedef struct {
        uint16_t ns;
        hvl_t traj, data;
    } rec;
    hid_t head = H5Tcreate(H5T_COMPOUND, 2), vl = H5Tvlen_create(H5T_NATIVE_FLOAT);
    H5Tinsert(head, "number_of_samples", 0, H5T_NATIVE_UINT16);
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(rec));
    H5Tinsert(t, "head", HOFFSET(rec, ns), head);
    H5Tinsert(t, "traj", HOFFSET(rec, traj), vl);
    H5Tinsert(t, "data", HOFFSET(rec, data), vl);
    float z[4] = {0, 0, 0, 0};
    rec r = {2, {4, z}, {4, z}};
    hsize_t n = 1;
    hid_t sp = H5Screate_simple(1, &n, NULL);
    hid_t d = bad ? -1 : H5Dcreate2(f, "/dataset/data", t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    bad = bad || d < 0 || H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, &r) < 0;
    if (d >= 0)
        H5Dclose(d);
    H5Sclose(sp);
    H5Tclose(t);
    H5Tclose(vl);
    H5Tclose(head);
    H5Fclose(f);
    return bad;
}

/* The malformed files of the tests: each is a valid file (2D radial, C coils, readout R, noise
 * scans first) made invalid in one way; `expect` is a phrase the error message must hold. */
typedef struct {
    const char *name;
    const char *expect;
} ism_corruption;

static const ism_corruption ism_corruptions[] = {
    {"xml-syntax", "malformed XML"},
    {"xml-doctype", "DOCTYPE"},
    {"xml-root", "root element"},
    {"xml-noencoding", "no <encoding>"},
    {"xml-badnumber", "expected an integer"},
    {"no-xml", "neither"},
    {"cartesian", "no trajectory"},
    {"channels", "channels"},
    {"nan-data", "non-finite data"},
    {"nan-traj", "trajectory value"},
    {"discard", "discard_pre"},
    {"encoding-ref", "encoding_space_ref"},
    {"slice-limit", "exceeds"},
    {"traj-length", "trajectory holds"},
    {"samples-huge", "more than the file's"},
    {"traj-longer", "more trajectory values than their headers announce"},
    {"data-length", "data holds"},
    {"not-compound", "not a compound"},
    {"missing-member", "no member"},
    {"huge-extent", "stores only"},
    {"empty", "holds no acquisitions"},
    {"noise-only", "no imaging acquisitions"},
    {"units-none", "fits none"},
    {"noise-singular", "positive definite"},
    {"noise-dwell", "sample_time_us 3e+38"},       /* was accepted: lambda 4.6e32, silently */
    {"dwell-negative", "sample_time_us -1"},
    {"data-length-huge", "cannot read the trajectory/data"}, /* 0x7fffffff: 8 GiB asked for, twice, before */
};
#define ISM_NCORRUPTIONS ((int)(sizeof ism_corruptions / sizeof ism_corruptions[0]))

/* Write a valid file from ks (o as given: noise_acqs >= 2 expected) and corrupt it by `name`.
 * Returns 0 on success. */
static inline int ism_write_corrupt(const char *path, const mr_kspace *ks, const ism_opts *base, const char *name)
{
    ism_opts o = *base;
    const int64_t C = ks->ncoils, R = o.readout;
    const hsize_t first = (hsize_t)o.noise_acqs; /* the first imaging acquisition */
    mr_kspace *scaled = NULL;
    if (!strcmp(name, "noise-singular"))
        o.noise_rho = -1; /* every coil the same noise: a singular covariance */
    if (!strcmp(name, "units-none")) {
        /* 50 times the Nyquist box in cycles: no unit fits */
        if (mr_kspace_create(&scaled, ks->matrix, ks->nsamples, ks->ncoils) != MR_OK)
            return 1;
        for (int64_t i = 0; i < 3 * ks->nsamples; i++)
            scaled->traj[i] = 50 * ks->traj[i];
        memcpy(scaled->data, ks->data, (size_t)(ks->nsamples * ks->ncoils) * 2 * sizeof(float));
        memcpy(scaled->fov_mm, ks->fov_mm, sizeof scaled->fov_mm);
        memcpy(scaled->traj_kind, ks->traj_kind, sizeof scaled->traj_kind);
    }
    int bad = ism_write(path, scaled ? scaled : ks, &o);
    mr_kspace_free(scaled);
    if (bad)
        return bad;
    /* the longest replacement: the data (2 R C) or the too-long trajectory (2 R + 128) */
    const int64_t nbuf = 2 * R * C + 3 * R + 128;
    float *buf = malloc((size_t)nbuf * sizeof *buf);
    for (int64_t i = 0; i < nbuf; i++)
        buf[i] = 0.25f;
    if (!strcmp(name, "xml-syntax"))
        bad = ism_replace_xml(path, "<ismrmrdHeader><encoding><encodedSpace>");
    else if (!strcmp(name, "xml-doctype"))
        bad = ism_replace_xml(path, "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [<!ENTITY lol \"lol\">"
                                    "<!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">]>\n"
                                    "<ismrmrdHeader>&lol2;</ismrmrdHeader>");
    else if (!strcmp(name, "xml-root"))
        bad = ism_replace_xml(path, "<notIsmrmrd><encoding/></notIsmrmrd>");
    else if (!strcmp(name, "xml-noencoding"))
        bad = ism_replace_xml(path, "<ismrmrdHeader xmlns=\"http://www.ismrm.org/ISMRMRD\"><version>1</version>"
                                    "</ismrmrdHeader>");
    else if (!strcmp(name, "xml-badnumber"))
        bad = ism_replace_xml(path, "<ismrmrdHeader><encoding><encodedSpace><matrixSize><x>abc</x><y>32</y><z>1</z>"
                                    "</matrixSize></encodedSpace><trajectory>radial</trajectory></encoding>"
                                    "</ismrmrdHeader>");
    else if (!strcmp(name, "no-xml"))
        bad = ism_replace_xml(path, NULL);
    else if (!strcmp(name, "cartesian"))
        bad = ism_patch_u16(path, first + 1, "trajectory_dimensions", NULL, 0);
    else if (!strcmp(name, "channels"))
        bad = ism_patch_u16(path, first + 2, "active_channels", NULL, (uint16_t)(C > 1 ? C - 1 : 2));
    else if (!strcmp(name, "nan-data")) {
        buf[7] = NAN;
        bad = ism_patch_vlen(path, first + 3, "data", buf, (size_t)(2 * R * C));
    } else if (!strcmp(name, "nan-traj")) {
        buf[5] = NAN;
        bad = ism_patch_vlen(path, first + 3, "traj", buf, (size_t)(2 * R));
    } else if (!strcmp(name, "discard"))
        bad = ism_patch_u16(path, first, "discard_pre", NULL, (uint16_t)R);
    else if (!strcmp(name, "encoding-ref"))
        bad = ism_patch_u16(path, first, "encoding_space_ref", NULL, 3);
    else if (!strcmp(name, "slice-limit"))
        bad = ism_patch_u16(path, first + 1, "idx", "slice", 7);
    else if (!strcmp(name, "samples-huge"))
        bad = ism_patch_u16(path, first + 1, "number_of_samples", NULL, 65535);
    else if (!strcmp(name, "traj-length"))
        bad = ism_patch_vlen(path, first + 2, "traj", buf, (size_t)(2 * R - 2));
    else if (!strcmp(name, "traj-longer"))
        bad = ism_patch_vlen(path, first, "traj", buf, (size_t)(2 * R + 2 * 64));
    else if (!strcmp(name, "data-length"))
        bad = ism_patch_vlen(path, first + 2, "data", buf, (size_t)(2 * R * C - 2));
    else if (!strcmp(name, "not-compound"))
        bad = ism_replace_data_float(path);
    else if (!strcmp(name, "missing-member"))
        bad = ism_replace_data_partial(path);
    else if (!strcmp(name, "huge-extent"))
        bad = ism_set_extent(path, 10000000);
    else if (!strcmp(name, "empty"))
        bad = ism_set_extent(path, 0);
    else if (!strcmp(name, "noise-only"))
        bad = ism_set_extent(path, first);
    else if (!strcmp(name, "noise-dwell"))
        bad = ism_patch_f32(path, 0, "sample_time_us", 3e38f);
    else if (!strcmp(name, "dwell-negative"))
        bad = ism_patch_f32(path, first + 1, "sample_time_us", -1.0f);
    else if (!strcmp(name, "data-length-huge"))
        bad = ism_patch_vlen_length(path, first + 4, (uint32_t)(2 * R * C), 0x7fffffffu);
    else if (!strcmp(name, "units-none") || !strcmp(name, "noise-singular"))
        bad = 0;
    else
        bad = 1;
    free(buf);
    return bad;
}

#endif
#endif
