/* Non-Cartesian trajectories in cycles/FOV (io/kspace.h conventions), with their sample counts
 * and analytic density compensation. Exact formulas and extents: docs/PHANTOMS.md.
 *
 * Notation: rho in [-1/2, 1/2) is the normalised radius, k_a = rho_a * N_a per axis, so an
 * anisotropic matrix gets an elliptical (ellipsoidal) k-space support inside its Nyquist box
 * [-N_a/2, N_a/2]. Samples are ordered readout fastest, then spoke/interleaf, then partition. */
#ifndef MR_TRAJ_H
#define MR_TRAJ_H

#include <stdint.h>

#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MR_TRAJ_TABLE(X)                                                                       \
    X(RADIAL2D, "radial2d")                                                                    \
    X(GOLDEN2D, "golden2d")                                                                    \
    X(SPIRAL2D, "spiral2d")                                                                    \
    X(RANDOM2D, "random2d")                                                                    \
    X(KOOSHBALL, "kooshball")                                                                  \
    X(STACK_OF_STARS, "stack-of-stars")                                                        \
    X(STACK_OF_SPIRALS, "stack-of-spirals")

typedef enum {
#define MR_TRAJ_ENUM(name, text) MR_TRAJ_##name,
    MR_TRAJ_TABLE(MR_TRAJ_ENUM)
#undef MR_TRAJ_ENUM
    MR_TRAJ_COUNT
} mr_traj_kind;

/* Golden angle for radial spokes through the centre: 180 deg * (sqrt 5 - 1)/2 = 111.246 deg. */
#define MR_GOLDEN_ANGLE (3.14159265358979323846 * 0.61803398874989484820)

typedef struct {
    mr_traj_kind kind;
    int64_t matrix[3];   /* Nx, Ny, Nz; Nz = 1 for the 2D kinds, >= 2 for the 3D kinds */
    int64_t spokes;      /* radial2d, golden2d, kooshball; per partition for stack-of-stars */
    int64_t readout;     /* samples per spoke or per spiral interleaf, >= 2 */
    int64_t interleaves; /* spiral kinds: L >= 1 */
    double turns;        /* spiral kinds: turns per interleaf; 0 = Nyquist, max(Nx, Ny)/(2 L) */
    int64_t partitions;  /* stack kinds: kz partitions P >= 1 */
    int64_t samples;     /* random2d: total count */
    uint64_t seed;       /* random2d: drawn from (seed, MR_RNG_STREAM_TRAJ) */
} mr_traj_params;

/* "radial2d", ...; NULL for an unknown kind. */
const char *mr_traj_kind_name(mr_traj_kind kind);
/* Parse a kind name (the strings above); MR_EINVAL naming the text otherwise. */
mr_status mr_traj_kind_parse(const char *text, mr_traj_kind *kind);
int mr_traj_kind_is_3d(mr_traj_kind kind);

/* Fill p with the fully sampled defaults of `kind` for `matrix` (docs/PHANTOMS.md): radial
 * readout 2 max(N), spokes round(pi N/2) (2D, per partition) or round(pi N^2/2) (kooshball),
 * spiral 16 interleaves at Nyquist turns with readout for <= 1/2 cycle/FOV along the arm,
 * partitions Nz, random 2 Nx Ny samples, seed 1. */
void mr_traj_params_default(mr_traj_params *p, mr_traj_kind kind, const int64_t matrix[3]);

/* Validate p and return the exact sample count M (<= MR_MAX_SAMPLES). Messages name the field. */
mr_status mr_traj_count(const mr_traj_params *p, int64_t *m);

/* The spiral turns per interleaf actually used (p->turns, or the Nyquist value when 0). */
double mr_traj_spiral_turns(const mr_traj_params *p);

/* Readout samples per interleaf that keep the spacing along a spiral arm <= `spacing`
 * cycles/FOV (in units of max(Nx, Ny)), for p's matrix, interleaves and turns. */
int64_t mr_traj_spiral_readout(const mr_traj_params *p, double spacing);

/* Write the trajectory: traj [M][3] (M from mr_traj_count), kz = 0 for the 2D kinds.
 * Deterministic: the same p gives the same bytes. */
mr_status mr_traj_generate(const mr_traj_params *p, float *traj);

/* Analytic density compensation for p's trajectory: the k-space area (2D, (cycles/FOV)^2) or
 * volume (3D) each sample stands for, from the known geometry (radial: angular gap x |k| x
 * readout step; kooshball: solid angle x |k|^2 x step; spiral: polar area element of the arm
 * family; random: box area / M; stacks: in-plane weight x kz step). w [M], caller's. */
mr_status mr_traj_weights(const mr_traj_params *p, float *w);

#ifdef __cplusplus
}
#endif
#endif
