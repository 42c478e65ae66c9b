/* Built instead of gpu/espirit.cu when mrirecon is configured without CUDA. */
#include "espirit.h"

mr_status mr_gpu_espirit_maps(int device, const mr_espirit_calib *cal, const int64_t matrix[3], double crop, int iters,
                              float *maps, float *eig, double *seconds)
{
    (void)device, (void)cal, (void)matrix, (void)crop, (void)iters, (void)maps, (void)eig;
    if (seconds)
        *seconds = 0;
    return mr_error(MR_ENODEV, "ESPIRiT on a GPU: this mrirecon was built without CUDA");
}
