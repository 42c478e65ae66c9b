/* One non-Cartesian scan in memory: trajectory, samples, optional weights, optional truth images.
 *
 * Conventions (docs/FORMAT.md is the normative text):
 *  - traj[m][3] in cycles per field of view; kz = 0 for 2D; the Nyquist box of an N matrix is
 *    [-N/2, N/2] per axis.
 *  - data[c][m][2]: complex samples (re, im) of coil c.
 *  - voxel (ix, iy, iz) sits at r = ((ix - Nx/2)/Nx, (iy - Ny/2)/Ny, (iz - Nz/2)/Nz) (integer
 *    division Nx/2), in FOV units;
 *    forward model d_m = sum_n rho_n Phi(k_m) exp(-i 2 pi k_m . r_n) / (Nx Ny Nz).
 *  - images are stored [Nz][Ny][Nx], x fastest.
 *
 * Ownership: an mr_kspace and every array it points to are owned by whoever created it
 * (mr_kspace_create, mr_kspace_read, a phantom generator) and released with mr_kspace_free. The
 * struct is plain so that readers, phantoms and operators can share arrays without copies. */
#ifndef MR_KSPACE_H
#define MR_KSPACE_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MR_FORMAT_NAME "mrirecon-kspace"
#define MR_FORMAT_VERSION 1
/* Largest matrix edge and voxel count the reader accepts (sanity bounds, see docs/FORMAT.md). */
#define MR_MAX_MATRIX_EDGE 4096
#define MR_MAX_VOXELS ((int64_t)1 << 31)
#define MR_MAX_SAMPLES ((int64_t)1 << 31)
#define MR_MAX_COILS 1024

typedef struct {
    int64_t matrix[3]; /* Nx, Ny, Nz; Nz = 1 for 2D */
    float fov_mm[3];   /* 0 when unknown */
    int64_t nsamples;  /* M >= 1 */
    int64_t ncoils;    /* C >= 1 */

    float *traj;     /* [M][3] cycles/FOV, owned */
    float *data;     /* [C][M][2], owned */
    float *weights;  /* [M] density compensation, owned, NULL when absent */
    float *truth;    /* [Nz][Ny][Nx] voxel-averaged truth, owned, NULL when absent */
    float *truth_bl; /* [Nz][Ny][Nx] band-limited truth, owned, NULL when absent */

    /* Descriptive metadata; empty strings / negative numbers when unknown. */
    char traj_kind[64];   /* e.g. "radial2d", "spiral2d", "kooshball" */
    char phantom[64];     /* e.g. "shepp-logan-2d" */
    double noise_sigma;   /* std. dev. of the complex noise per real/imag part; < 0 unknown */
    double snr_db;        /* target SNR the noise was drawn for; meaningful if noise_sigma > 0 */
    uint64_t noise_seed;
} mr_kspace;

/* Allocate a scan with traj and data arrays for the given sizes (zero-filled), no weights and no
 * truth. Validates sizes (matrix edges 1..MR_MAX_MATRIX_EDGE, product <= MR_MAX_VOXELS,
 * 1 <= M <= MR_MAX_SAMPLES, 1 <= C <= MR_MAX_COILS). *out is owned by the caller. */
mr_status mr_kspace_create(mr_kspace **out, const int64_t matrix[3], int64_t nsamples, int64_t ncoils);

/* Allocate (zero-filled) the optional arrays. */
mr_status mr_kspace_alloc_weights(mr_kspace *ks);
mr_status mr_kspace_alloc_truth(mr_kspace *ks);    /* both truth and truth_bl */

void mr_kspace_free(mr_kspace *ks); /* NULL is fine */

static inline int64_t mr_kspace_voxels(const mr_kspace *ks)
{
    return ks->matrix[0] * ks->matrix[1] * ks->matrix[2];
}

static inline int mr_kspace_is_3d(const mr_kspace *ks) { return ks->matrix[2] > 1; }

/* Samples with |k_a| > N_a/2 (1 + 1e-6) on some axis, i.e. outside the Nyquist box; *worst (may be
 * NULL) receives the largest |k_a| / (N_a/2) over all samples and axes. */
int64_t mr_kspace_count_outside(const mr_kspace *ks, double *worst);

/* Check the matrix: each edge 1..MR_MAX_MATRIX_EDGE and the product within MR_MAX_VOXELS,
 * computed without overflow. `what` names the source in the message. */
mr_status mr_matrix_check(const int64_t matrix[3], const char *what);

#ifdef __cplusplus
}
#endif
#endif

#ifndef MR_GRID_DEFINED
#define MR_GRID_DEFINED
#ifdef __cplusplus
extern "C" {
#endif
/* A regular grid of voxel positions in FOV units: along axis a, index i sits at
 * r = (i - center[a]) / scale[a].  Image grid (F^H d, forward): n = N, center = N/2 (integer
 * division), scale = N.  Q grid (Toeplitz): n = 2N, center = N, scale = N, on every axis with
 * N > 1 (a 2D scan keeps n[2] = 1, center[2] = 0). Stored x fastest: index = (iz*ny + iy)*nx + ix. */
typedef struct {
    int64_t n[3];
    int64_t center[3];
    int64_t scale[3];
} mr_grid;

/* The image grid and the Q grid of a matrix, as described above. */
static inline mr_grid mr_grid_image(const int64_t matrix[3])
{
    mr_grid g;
    for (int a = 0; a < 3; a++) {
        g.n[a] = matrix[a];
        g.center[a] = matrix[a] / 2;
        g.scale[a] = matrix[a];
    }
    return g;
}

static inline mr_grid mr_grid_q(const int64_t matrix[3])
{
    mr_grid g;
    for (int a = 0; a < 3; a++) {
        int up = matrix[a] > 1;
        g.n[a] = up ? 2 * matrix[a] : 1;
        g.center[a] = up ? matrix[a] : 0;
        g.scale[a] = matrix[a];
    }
    return g;
}

static inline int64_t mr_grid_size(const mr_grid *g) { return g->n[0] * g->n[1] * g->n[2]; }
#ifdef __cplusplus
}
#endif
#endif
