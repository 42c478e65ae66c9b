/* Coil maps from the data for `mrirecon recon --sens estimate` (also the default for a multi-coil
 * scan without maps): ESPIRiT (solver/espirit.h, the default: it won by measurement, docs/COILMAPS.md)
 * or the Walsh/Inati estimator (solver/coilmaps.h), both on the gridded k-space centre of the scan
 * itself, and what the metrics need to stay meaningful with them.
 *
 * Scale: the estimated maps are unit-norm per voxel (sum_c |s_c|^2 = 1; ESPIRiT's are 0 outside the
 * object). The data only determine the products S_c rho, so SENSE with such maps returns rho ||S||,
 * the object weighted by the root-sum-of-squares of the true sensitivities (as per-coil + RSS does);
 * a scan that stores its true maps (a simulated one) lets the metrics compare against the truth
 * weighted the same way (mr_sens_weight_truth). */
#ifndef MR_SENS_ESTIMATE_H
#define MR_SENS_ESTIMATE_H

#include <stdint.h>

#include "../../base/status.h"
#include "../../io/kspace.h"

typedef enum { MR_SENS_METHOD_ESPIRIT = 0, MR_SENS_METHOD_WALSH = 1, MR_SENS_METHOD_COUNT } mr_sens_method;

/* "espirit", "walsh"; parse: MR_EINVAL naming the text. */
const char *mr_sens_method_name(mr_sens_method m);
mr_status mr_sens_method_parse(const char *text, mr_sens_method *m);

typedef struct {
    mr_sens_method method; /* default MR_SENS_METHOD_ESPIRIT */
    int threads;           /* host threads, <= 0: all cores */
    int gpu;               /* ESPIRiT's per-voxel stage on this GPU (>= 0; gpu/espirit.h), or the host (-1,
                              the default); Walsh always runs on the host */
} mr_sens_estimate_opts;

void mr_sens_estimate_opts_default(mr_sens_estimate_opts *o);

/* What was done, for the report. */
typedef struct {
    mr_sens_method method;
    int64_t calib[3];     /* the calibration grid (Walsh) or region (ESPIRiT) */
    int64_t kernel[3];    /* ESPIRiT: kernel edge per axis (1 on an inactive axis); Walsh: 0 */
    int64_t kernels;      /* ESPIRiT: kernels kept of `columns` */
    int64_t columns;
    double cropped;       /* ESPIRiT: the fraction of voxels whose maps are 0 */
    double seconds;       /* the whole estimate */
    int on_gpu;           /* 1: ESPIRiT's per-voxel stage ran on the GPU */
} mr_sens_estimate_info;

/* Estimate the maps [C][Nz][Ny][Nx][2] of ks (malloc'ed into *maps, owned by the caller; free). o may
 * be NULL (defaults); info may be NULL. Errors of the estimator (too few samples in the k-space
 * centre, no signal) and of the GPU name the scan `label`. */
mr_status mr_sens_estimate_ex(const mr_kspace *ks, const char *label, const mr_sens_estimate_opts *o, float **maps,
                              mr_sens_estimate_info *info);

/* The default method on the host: mr_sens_estimate_ex with threads, and Walsh/Inati (with a warning)
 * when ESPIRiT cannot calibrate (MR_EINVAL: a calibration region not larger than its kernel, ...); calib
 * (may be NULL) receives the calibration grid used. */
mr_status mr_sens_estimate(const mr_kspace *ks, const char *label, int threads, float **maps, int64_t calib[3]);

/* Compress the coils of ks in place to k virtual coils (solver/coil_compress.h; k = 0: the fewest that
 * keep `keep` of the data's energy, e.g. 0.99): the data and, when present, the maps (ks->ncoils becomes
 * the virtual count; noise_sigma is unchanged: the combination is unitary). For `--coils-compress K`.
 * retained (may be NULL) receives the fraction of the energy kept. A scan with one coil, or k >= its
 * coil count, is left as it is (retained 1). Errors name the scan `label`. */
mr_status mr_sens_compress_coils(mr_kspace *ks, const char *label, int64_t k, double keep, int threads,
                                 double *retained);

/* Multiply the scan's truth images (those present) in place by sqrt(sum_c |S_c|^2) of the scan's
 * own maps ks->sens: the image that unit-norm maps reconstruct. Returns 0 (and changes nothing)
 * when the scan has no maps or no truth, else 1. */
int mr_sens_weight_truth(mr_kspace *ks);

#endif
