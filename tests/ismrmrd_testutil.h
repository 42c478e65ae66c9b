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
    double noise_rho;      /* coil noise mixing: A[i][j] = rho^(i-j) (j <= i), noise = A z */
    uint64_t seed;
    int slices, repetitions, averages; /* >= 1 copies of the scan */
    int discard_pre, discard_post;     /* extra samples around each readout (flagged for discard) */
    const char *trajectory;            /* header <trajectory>; NULL: from the scan's traj_kind */
    int traj_dims;                     /* 0: 2 for a 2D scan, 3 for 3D; 3 forces a 3D trajectory */
} ism_opts;

static inline void ism_opts_default(ism_opts *o)
{
    memset(o, 0, sizeof *o);
    o->units = MR_UNITS_CYCLES;
    o->sign = 1;
    o->noise_sigma = 1.0;
    o->seed = 7;
    o->slices = o->repetitions = o->averages = 1;
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
             (long long)ks->ncoils, (long long)ks->matrix[0], (long long)ks->matrix[1], (long long)ks->matrix[2],
             fov[0], fov[1], fov[2], (long long)ks->matrix[0], (long long)ks->matrix[1], (long long)ks->matrix[2],
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
                        for (int a = 0; a < td; a++)
                            acq.traj[q * td + a] =
                                keep ? (float)o->sign * ism_to_units(ks->traj[3 * m + a], o->units, ks->matrix[a], fov[a])
                                     : 1e3f; /* discarded: far out, must be ignored */
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

#endif
#endif
