/* Options of the scan readers (io/input.h, io/ismrmrd_h5.h, io/cfl.h): how to interpret what a
 * file does not say for itself. docs/FORMAT.md, "Reading other formats", is the normative text. */
#ifndef MR_READ_OPTS_H
#define MR_READ_OPTS_H

#include <stdint.h>

#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Units of a stored trajectory (docs/FORMAT.md, units table). N is the encoded matrix edge of the
 * axis, FOV the encoded field of view:
 *   CYCLES      cycles per FOV, Nyquist box [-N/2, N/2] (our own unit; BART's)
 *   NORMALIZED  cycles per sample (voxel), [-0.5, 0.5)          k_cycles = k * N
 *   RADIANS     radians per sample (voxel), [-pi, pi]            k_cycles = k * N / (2 pi)
 *   PER_M       1/m (spatial frequency), FOV in mm in the header  k_cycles = k * FOV_mm / 1000
 * AUTO: detected from the range of the trajectory and the header (io/ismrmrd_index.c). */
typedef enum {
    MR_UNITS_AUTO = 0,
    MR_UNITS_CYCLES,
    MR_UNITS_NORMALIZED,
    MR_UNITS_RADIANS,
    MR_UNITS_PER_M,
    MR_UNITS_COUNT
} mr_traj_units;

/* Which ISMRMRD encoding space becomes the reconstruction grid (matrix and FOV of the mr_kspace). */
typedef enum {
    MR_SPACE_ENCODED = 0, /* encodedSpace: the FOV the samples support (readout oversampling included) */
    MR_SPACE_RECON = 1    /* reconSpace: the FOV the scanner would show */
} mr_matrix_space;

/* What to do with several averages (ISMRMRD idx.average) of the same slice/contrast/...:
 * COMBINE: one volume; averages whose trajectories are identical are averaged sample by sample,
 *          otherwise their samples are pooled (the least-squares fit of pooled samples is the same
 *          as of averaged ones when the trajectories agree);
 * SEPARATE: one volume per average. */
typedef enum { MR_AVERAGES_COMBINE = 0, MR_AVERAGES_SEPARATE = 1 } mr_average_mode;

typedef struct {
    mr_traj_units traj_units; /* default AUTO */
    int traj_sign;            /* +1 (default): k as stored; -1: k negated (data recorded with e^{+i2pi k.r}) */
    mr_matrix_space space;    /* default ENCODED */
    mr_average_mode averages; /* default COMBINE */
    /* BART input only (a .cfl pair has no header): image matrix (0 = estimated as BART does,
       2 ceil(max |k_a|)) and field of view (0 = unknown). */
    int64_t matrix[3];
    float fov_mm[3];
    /* BART input only: the trajectory array (NAME, NAME.hdr or NAME.cfl; borrowed) of a k-space array
       named as BART names it (`bart phantom -k -t t k`: k + t), instead of the NAME_traj of a NAME_ksp
       pair. NULL (default): the pair's names. */
    const char *bart_traj;
} mr_read_opts;

void mr_read_opts_default(mr_read_opts *o);

/* "cycles", "normalized", "radians", "per-m", "auto" */
const char *mr_traj_units_name(mr_traj_units u);
/* The names above; MR_EINVAL naming the text otherwise. */
mr_status mr_traj_units_parse(const char *text, mr_traj_units *u);

#ifdef __cplusplus
}
#endif
#endif
