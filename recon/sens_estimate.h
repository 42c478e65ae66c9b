/* Coil maps from the data for `mrirecon recon --sens estimate` (also the default for a multi-coil
 * scan without maps): the Walsh/Inati estimator of solver/coilmaps.h on the gridded k-space centre
 * of the scan itself (docs/COILMAPS.md), and what the metrics need to stay meaningful with them.
 *
 * Scale: the estimated maps are unit-norm per voxel (sum_c |s_c|^2 = 1). The data only determine
 * the products S_c rho, so SENSE with such maps returns rho ||S||, the object weighted by the
 * root-sum-of-squares of the true sensitivities (as per-coil + RSS does, and as ESPIRiT's maps
 * do); a scan that stores its true maps (a simulated one) lets the metrics compare against the
 * truth weighted the same way (mr_sens_weight_truth). */
#ifndef MR_SENS_ESTIMATE_H
#define MR_SENS_ESTIMATE_H

#include <stdint.h>

#include "../base/status.h"
#include "../io/kspace.h"

/* Estimate the maps [C][Nz][Ny][Nx][2] of ks (malloc'ed into *maps, owned by the caller; free).
 * calib (may be NULL) receives the calibration grid used. threads <= 0: all cores. Errors of the
 * estimator (too few samples in the k-space centre, no signal) name the scan `label`. */
mr_status mr_sens_estimate(const mr_kspace *ks, const char *label, int threads, float **maps, int64_t calib[3]);

/* Multiply the scan's truth images (those present) in place by sqrt(sum_c |S_c|^2) of the scan's
 * own maps ks->sens: the image that unit-norm maps reconstruct. Returns 0 (and changes nothing)
 * when the scan has no maps or no truth, else 1. */
int mr_sens_weight_truth(mr_kspace *ks);

#endif
