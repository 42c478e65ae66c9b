/* tool_imgcmp A.h5 B.h5 [TOL]: exit 0 when the two reconstructed image files (docs/FORMAT.md, "Image
 * files") hold the same matrix and bit-identical /image data (or, with TOL, a relative L2 difference
 * ||A - B|| / ||B|| <= TOL, printed), 1 when they differ, 2 when one cannot be read. Attributes
 * (timings) are not compared. Used by the CLI regression scripts, which must not depend on the HDF5
 * command-line tools. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/image_h5.h"

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: tool_imgcmp A.h5 B.h5 [TOL]\n");
        return 2;
    }
    float *img[2] = {NULL, NULL};
    int64_t matrix[2][3];
    for (int i = 0; i < 2; i++)
        if (mr_image_h5_read(argv[1 + i], &img[i], matrix[i]) != MR_OK) {
            fprintf(stderr, "tool_imgcmp: %s\n", mr_last_error());
            free(img[0]);
            return 2;
        }
    int same = memcmp(matrix[0], matrix[1], sizeof matrix[0]) == 0;
    const size_t n = (size_t)(matrix[0][0] * matrix[0][1] * matrix[0][2]) * 2;
    if (same && argc == 4) {
        double d = 0, b = 0;
        for (size_t i = 0; i < n; i++) {
            d += ((double)img[0][i] - img[1][i]) * ((double)img[0][i] - img[1][i]);
            b += (double)img[1][i] * img[1][i];
        }
        double r = b > 0 ? sqrt(d / b) : sqrt(d);
        same = r <= atof(argv[3]);
        fprintf(stderr, "tool_imgcmp: relative L2 difference %g (tolerance %s)\n", r, argv[3]);
    } else if (same) {
        same = memcmp(img[0], img[1], n * sizeof(float)) == 0;
    }
    if (!same)
        fprintf(stderr, "tool_imgcmp: %s and %s differ\n", argv[1], argv[2]);
    free(img[0]);
    free(img[1]);
    return same ? 0 : 1;
}
