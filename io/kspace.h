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

#include "../base/grid.h"
#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MR_FORMAT_NAME "mrirecon-kspace"
/* Version 2 adds /kspace/sens, version 3 the readout times /kspace/time and the field map
 * /kspace/fieldmap. Files are written with the lowest version that holds their content (1 without coil
 * maps, times or field map), so older readers still read what they can; the reader takes 1..3. */
#define MR_FORMAT_VERSION 3

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
    float *sens;     /* [C][Nz][Ny][Nx][2] complex coil sensitivity maps, owned, NULL when absent */
    float *time;     /* [M] readout time t_m of each sample in seconds (from the excitation; the time of the
                        off-resonance phase e^{-i 2 pi omega(r) t_m}), owned, NULL when unknown */
    float *fieldmap; /* [Nz][Ny][Nx] off-resonance omega(r) in Hz at the voxel centres, owned, NULL when
                        absent */

    /* Descriptive metadata; empty strings / negative numbers when unknown. */
    char traj_kind[64];   /* e.g. "radial2d", "spiral2d", "kooshball" */
    char phantom[64];     /* e.g. "shepp-logan-2d" */
    double noise_sigma;   /* std. dev. of the complex noise per real/imag part; < 0 unknown */
    double snr_db;        /* target SNR the noise was drawn for; meaningful if noise_sigma > 0 */
    uint64_t noise_seed;
} mr_kspace;

/* Allocate a scan with traj and data arrays for the given sizes (zero-filled), no weights and no
 * truth. Validates sizes (matrix edges 1..MR_MAX_MATRIX_EDGE, product <= MR_MAX_VOXELS,
 * 1 <= M <= MR_MAX_SAMPLES, 1 <= C <= MR_MAX_COILS) and, for large arrays, the memory available
 * (base/memory.h: MR_ENOMEM with the number needed); in a reading child, the arrays count as allowed
 * (base/child.h mr_child_memory_allow). Likewise the optional arrays. *out is owned by the caller. */
mr_status mr_kspace_create(mr_kspace **out, const int64_t matrix[3], int64_t nsamples, int64_t ncoils);

/* Allocate (zero-filled) the optional arrays. */
mr_status mr_kspace_alloc_weights(mr_kspace *ks);
mr_status mr_kspace_alloc_truth(mr_kspace *ks);    /* both truth and truth_bl */
mr_status mr_kspace_alloc_sens(mr_kspace *ks);     /* C maps */
mr_status mr_kspace_alloc_time(mr_kspace *ks);     /* [M] */
mr_status mr_kspace_alloc_fieldmap(mr_kspace *ks); /* [Nz][Ny][Nx] */

void mr_kspace_free(mr_kspace *ks); /* NULL is fine */

static inline int64_t mr_kspace_voxels(const mr_kspace *ks)
{
    return ks->matrix[0] * ks->matrix[1] * ks->matrix[2];
}

static inline int mr_kspace_is_3d(const mr_kspace *ks) { return ks->matrix[2] > 1; }

/* sqrt(sum_c |S_c(v)|^2): the root-sum-of-squares of the coil maps at voxel v (ks->sens != NULL). */
double mr_kspace_sens_rss(const mr_kspace *ks, int64_t voxel);

/* Samples with |k_a| > N_a/2 (1 + 1e-6) on some axis, i.e. outside the Nyquist box; *worst (may be
 * NULL) receives the largest |k_a| / (N_a/2) over all samples and axes. */
int64_t mr_kspace_count_outside(const mr_kspace *ks, double *worst);

/* A scan through a pipe, from the process that read it to the one that uses it (io/h5util.h
 * mr_h5_read_in_child). mr_kspace_send takes ks: each array is freed as soon as it is written (so the
 * two processes do not both hold the whole scan), ks itself at the end, also on failure. mr_kspace_recv
 * allocates and checks on its side what the reader promises (sizes within the limits, every value
 * finite, weights >= 0): *out owned by the caller; MR_EIO when the stream ends early. An array the
 * reading child deferred (io/h5util.h mr_h5_deferred) travels as its plan and is read here from file_fd
 * (-1: none accepted). */
mr_status mr_kspace_send(int fd, mr_kspace *ks);
mr_status mr_kspace_recv(int fd, int file_fd, const char *label, mr_kspace **out);

#ifdef __cplusplus
}
#endif
#endif

