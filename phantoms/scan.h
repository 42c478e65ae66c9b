/* A simulated scan: trajectory + analytic Shepp-Logan k-space + optional noise, weights and truth
 * images, assembled into an mr_kspace (the job behind `mrirecon phantom` and the standard suite). */
#ifndef MR_SCAN_H
#define MR_SCAN_H

#include "../io/kspace.h"
#include "field.h"
#include "traj.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    mr_traj_params traj; /* kind and matrix pick the phantom: 2D kinds -> shepp-logan-2d */
    double snr_db;       /* used when noise != 0 */
    int noise;           /* 1: add complex Gaussian noise at snr_db, seeded by seed */
    uint64_t seed;       /* noise seed (the random trajectory uses traj.seed) */
    int truth;           /* 1: fill truth and truth_bl */
    int weights;         /* 1: analytic density compensation (mr_traj_weights) */
    double fov_mm;       /* per axis (z too for 3D); <= 0: unknown */
    int64_t coils;       /* 0: one coil without maps (the plain phantom); C >= 1: C simulated receive coils
                            with smooth maps and exact coil data (coils.h), maps stored in ks->sens */
    int marker;          /* 1: the phantom with the orientation marker (shepp_logan.h, MR_PHANTOM_MARKER) */
    double dwell_s;      /* > 0: readout timing stored in ks->time (field.h: t = te + (j - echo) dwell per
                            readout); 0 (default): no times */
    double te_s;         /* the echo time of every readout (default 0) */
    mr_field_params field; /* off-resonance (default none; needs dwell_s > 0): the data carry its phase
                              (field.h) and ks->fieldmap holds it at the voxel centres */
} mr_scan_params;

/* Defaults: noise off, seed 1, truth on, weights on, fov 240 mm, no coils, no timing, no field. traj is
 * left untouched. */
void mr_scan_params_default(mr_scan_params *p);

/* Build the scan; *out is owned by the caller (mr_kspace_free); NULL on failure. */
mr_status mr_scan_simulate(const mr_scan_params *p, mr_kspace **out);

/* One summary line for a written scan into buf: "PATH: 2D 128x128, 51456 samples, radial2d,
 * shepp-logan-2d, noiseless" (or "SNR 30 dB (sigma ..., seed ...)"). */
void mr_scan_describe(const mr_kspace *ks, const char *path, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
