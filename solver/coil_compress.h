/* Coil compression by the SVD of the data (docs/COILMAPS.md, "Coil compression"; Buehrer et al., MRM
 * 57:1131, 2007; Huang et al., MRI 26:133, 2008): every coil costs an F^H d and a Toeplitz product per
 * CG iteration, and many-coil arrays carry far fewer independent sensitivity patterns than coils.
 *
 * The coil covariance of the data R = sum_m d_m d_m^H (C x C, over every sample m; d_m the C-vector of
 * the coils' values) has eigenvectors u_1..u_C (eigenvalues descending, solver/herm_eig.h). The K virtual
 * coils are y_k = u_k^H d = sum_c conj(u_ck) d_c: they keep the fraction sum_{k<=K} lambda_k / sum lambda
 * of the data's energy (the best any K linear combinations can), and because the data are linear in the
 * sensitivities, the virtual coils' maps are the same combinations of the maps, S'_k = sum_c conj(u_ck)
 * S_c: SENSE with (y, S') is consistent. U is unitary, so white coil noise of sigma per part stays
 * white with the same sigma (mr_kspace.noise_sigma is unchanged).
 *
 * Host arrays, borrowed for the duration of each call; complex values are (re, im) float pairs. */
#ifndef MR_COIL_COMPRESS_H
#define MR_COIL_COMPRESS_H

#include <stdint.h>

#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int64_t ncoils;   /* C */
    int64_t nvirtual; /* K */
    double *u;        /* [C][K] complex (re, im): virtual coil k = sum_c conj(u[c][k]) x_c; owned */
    double *energy;   /* [C] eigenvalues of R, descending; owned */
    double retained;  /* sum_{k < K} energy / sum energy, 0..1 */
} mr_coil_compress;

/* The compression of data [C][M][2] to K virtual coils (1 <= K <= C), or, with K = 0, to the fewest
 * that retain at least `keep` (0 < keep <= 1) of the energy. *out's arrays are malloc'ed (free with
 * mr_coil_compress_free). threads <= 0: all cores. MR_EINVAL (sizes, non-finite data, all-zero data),
 * MR_ENOMEM, MR_EINTERNAL. */
mr_status mr_coil_compress_plan(const float *data, int64_t m, int64_t ncoils, int64_t k, double keep, int threads,
                                mr_coil_compress *out);

/* out[k][i] = sum_c conj(u[c][k]) in[c][i] for i < n: data (n = M samples) or coil maps (n = voxels).
 * in [C][n][2], out [K][n][2]; out must not overlap in. */
mr_status mr_coil_compress_apply(const mr_coil_compress *cc, const float *in, int64_t n, float *out, int threads);

void mr_coil_compress_free(mr_coil_compress *cc); /* the arrays; NULL-safe, idempotent */

#ifdef __cplusplus
}
#endif
#endif
