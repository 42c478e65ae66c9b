/* ESPIRiT's per-voxel stage on a GPU (solver/espirit.h, docs/COILMAPS.md "ESPIRiT"): from the host
 * calibration (mr_espirit_calibrate), every voxel's C x C operator W(r) = sum_Delta w(Delta)
 * e^{+i 2 pi Delta . r} is evaluated on the device, its dominant eigenvector found by power iteration
 * (float32, from the phase reference), phase-referenced and cropped as mr_espirit_maps does on the host.
 * One thread per voxel; C <= MR_GPU_ESPIRIT_MAX_COILS (more coils: compress them first,
 * solver/coil_compress.h). Built without CUDA, gpu/espirit_stub.c returns MR_ENODEV.
 *
 * maps [C][Nz][Ny][Nx][2] and eig [Nz][Ny][Nx] (may be NULL) are host arrays (the caller's); the
 * device memory is allocated and freed inside the call. */
#ifndef MR_GPU_ESPIRIT_H
#define MR_GPU_ESPIRIT_H

#include <stdint.h>

#include "../base/status.h"
#include "../solver/espirit.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MR_GPU_ESPIRIT_MAX_COILS 32

/* crop, iters as in mr_espirit_opts. Errors: MR_ENODEV (no CUDA / no such device), MR_ENOTSUP (more
 * coils than MR_GPU_ESPIRIT_MAX_COILS), MR_EINVAL, MR_ENOMEM, MR_ECUDA. *seconds (may be NULL) receives
 * the device time of the kernels (CUDA events). */
mr_status mr_gpu_espirit_maps(int device, const mr_espirit_calib *cal, const int64_t matrix[3], double crop, int iters,
                              float *maps, float *eig, double *seconds);

#ifdef __cplusplus
}
#endif
#endif
