/* Fuzz target: the image reader (io/image_h5.c, mr_image_h5_read_file) on a whole file; batch reads
 * image files back from output folders, which a user may have replaced. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_target.h"
#include "io/h5util.h"
#include "io/image_h5.h"
#include "io/kspace.h"

int mr_fuzz_one(const uint8_t *data, size_t size)
{
    static float sentinel;
    float *img = &sentinel;
    int64_t matrix[3] = {0, 0, 0};
    hid_t file;
    mr_clear_error();
    mr_status st = mr_h5_open_memory(data, size, MR_FUZZ_INPUT_NAME, &file);
    if (st == MR_OK) {
        st = mr_image_h5_read_file(file, MR_FUZZ_INPUT_NAME, &img, matrix);
        mr_fuzz_close_file(&file);
    } else {
        img = NULL;
    }
    mr_fuzz_after(st);
    if (st != MR_OK) {
        mr_fuzz_require(img == NULL, "the output is not NULL after a refusal");
        return 0;
    }
    mr_fuzz_require(img != NULL, "accepted without an image");
    mr_fuzz_require(mr_matrix_check(matrix, "fuzz") == MR_OK, "matrix outside the limits");
    const int64_t n = matrix[0] * matrix[1] * matrix[2] * 2;
    for (int64_t i = 0; i < n; i++)
        mr_fuzz_require(isfinite(img[i]), "non-finite pixel");
    free(img);
    return 1;
}

int mr_fuzz_file(const char *path)
{
    float *img = NULL;
    int64_t matrix[3];
    mr_clear_error();
    mr_status st = mr_image_h5_read(path, &img, matrix);
    mr_fuzz_require(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) == 0, "an HDF5 object is left open");
    mr_fuzz_require(st == MR_OK ? img != NULL : img == NULL && strstr(mr_last_error(), path) != NULL,
                    "the public reader broke its promise");
    free(img);
    return st == MR_OK;
}
