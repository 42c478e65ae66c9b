#include "grid.h"

#include <stdio.h>

mr_status mr_matrix_check(const int64_t matrix[3], const char *what)
{
    int64_t prod = 1;
    for (int i = 0; i < 3; i++) {
        if (matrix[i] < 1 || matrix[i] > MR_MAX_MATRIX_EDGE)
            return mr_error(MR_EFORMAT, "%s: matrix[%d] = %lld is outside 1..%d", what, i,
                            (long long)matrix[i], MR_MAX_MATRIX_EDGE);
        prod *= matrix[i]; /* edges <= 4096, so the product of three fits in int64 */
    }
    if (prod > MR_MAX_VOXELS)
        return mr_error(MR_EFORMAT, "%s: matrix %lldx%lldx%lld has %lld voxels, more than %lld", what,
                        (long long)matrix[0], (long long)matrix[1], (long long)matrix[2], (long long)prod,
                        (long long)MR_MAX_VOXELS);
    return MR_OK;
}

mr_status mr_image_write_check(const char *path, const void *img, const int64_t matrix[3])
{
    char what[1100];
    snprintf(what, sizeof what, "%s: image", path);
    if (mr_matrix_check(matrix, what) != MR_OK)
        return mr_error(MR_EINVAL, "%s", mr_last_error());
    if (!img)
        return mr_error(MR_EINVAL, "%s: no image to write", path);
    return MR_OK;
}
