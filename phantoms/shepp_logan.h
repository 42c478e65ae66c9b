/* Modified Shepp-Logan phantoms (2D: Toft's 10 ellipses; 3D: 10 ellipsoids, MATLAB phantom3d's
 * modified table with rotation about z only), their analytic k-space and their truth images.
 * docs/PHANTOMS.md gives the tables and conventions.
 *
 * Coordinates follow io/kspace.h: r in FOV units, FOV = [-1/2, 1/2)^d, k in cycles/FOV. The
 * textbook [-1, 1] coordinates are scaled by 1/2 and y is flipped (our iy = 0 is y = -1/2 and is
 * drawn as the top PNG row), so pictures look like the usual head.
 *
 * Analytic k-space: F(k) = integral of f(r) exp(-i 2 pi k.r) dr over FOV units, which is exactly
 * what the forward model of io/kspace.h gives for a voxel-constant image; data d_m = F(k_m) make
 * reconstructions come out in phantom intensity units. */
#ifndef MR_SHEPP_LOGAN_H
#define MR_SHEPP_LOGAN_H

#include <stdint.h>

#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The 2D or 3D phantom, optionally with the orientation marker: a bright ellipse (ellipsoid) outside
 * the head near the corner of small x and y (in 3D from z = -0.3 to 0.1), elongated along x, so that a flip or a
 * transposition of the image axes shows (docs/PHANTOMS.md; docs/FORMAT.md "Orientation"). Its k-space
 * and truth images are as analytic as the rest. A kind is SL2D or SL3D, OR-ed with MARKER. */
typedef enum {
    MR_PHANTOM_SL2D = 0,
    MR_PHANTOM_SL3D = 1,
    MR_PHANTOM_MARKER = 2,
    MR_PHANTOM_SL2D_MARKER = MR_PHANTOM_SL2D | MR_PHANTOM_MARKER,
    MR_PHANTOM_SL3D_MARKER = MR_PHANTOM_SL3D | MR_PHANTOM_MARKER
} mr_phantom_kind;

/* "shepp-logan-2d" / "shepp-logan-3d", "-marker" appended with the marker (the mr_kspace.phantom
 * strings). */
const char *mr_phantom_name(mr_phantom_kind kind);

/* 1 for the 3D phantoms (with or without the marker). */
int mr_phantom_is_3d(mr_phantom_kind kind);

/* Intensity f(r) at one point (FOV units; r[2] ignored in 2D). */
double mr_phantom_value(mr_phantom_kind kind, const double r[3]);

/* 1 when r lies inside the phantom's outer ellipse (2D) or ellipsoid (3D): the head. */
int mr_phantom_inside(mr_phantom_kind kind, const double r[3]);

/* f at n points along x: out[i] = f(r0 + i dx x^), for images and numerical checks. */
void mr_phantom_values_row(mr_phantom_kind kind, const double r0[3], double dx, int64_t n, double *out);

/* Analytic F(k) at one point (cycles/FOV; k[2] ignored in 2D), double precision: out = (re, im). */
void mr_phantom_kspace_at(mr_phantom_kind kind, const double k[3], double out[2]);

/* F(k_m) for m samples: traj [m][3] (borrowed), data [m][2] (caller's). OpenMP over samples;
 * every sample is computed alone, so the bytes do not depend on the thread count. */
mr_status mr_phantom_kspace(mr_phantom_kind kind, const float *traj, int64_t m, float *data);

/* Voxel-averaged truth [Nz][Ny][Nx]: mean of f over MR_PHANTOM_SUB^d sub-samples per voxel
 * (midpoints of a regular sub-grid). matrix[2] must be 1 for the 2D phantom. */
#define MR_PHANTOM_SUB_2D 8
#define MR_PHANTOM_SUB_3D 4
mr_status mr_phantom_truth(mr_phantom_kind kind, const int64_t matrix[3], float *truth);

/* Band-limited truth [Nz][Ny][Nx]: sum over the Cartesian grid k_a in {-N_a/2 .. N_a/2} of
 * w(k) F(k) exp(+i 2 pi k.r_n) at the voxel centres, w = 1/2 per axis on the two Nyquist edges
 * of an even N_a (1 otherwise), real part stored; max_imag (NULL: not wanted) receives the
 * largest |imaginary part|, rounding only since the phantom is real. One FFTW (float) plan with
 * FFTW_ESTIMATE. */
mr_status mr_phantom_truth_bandlimited(mr_phantom_kind kind, const int64_t matrix[3], float *truth,
                                       double *max_imag);

#ifdef __cplusplus
}
#endif
#endif
