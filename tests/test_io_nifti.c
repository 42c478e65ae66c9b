/* NIfTI-1 output (io/nifti.c): the header fields read back byte by byte at the offsets of the
 * NIfTI-1 standard (nifti1.h), the voxel data, the placement (voxel N/2 at the scan's position,
 * one voxel step along each axis = the direction times the voxel size, LPS -> RAS), the qform
 * rotation rebuilt from its quaternion equal to the sform's, 2D and 3D, magnitude and complex; the
 * atomic write. Where libniftiio is installed (Debian libnifti2-dev), the files are also read with
 * it and its qto_xyz / sto_xyz matrices and data compared (tests/nifti_testutil.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/nifti.h"
#include "io_testutil.h"
#include "nifti_testutil.h"
#include "testutil.h"

int main(void)
{
    const char *dir = test_tmpdir("io_nifti");
    uint64_t rng = test_seed();
    char path[1024];
    /* 2D magnitude, no geometry */
    {
        const int64_t n[3] = {5, 4, 1};
        const float fov[3] = {200, 160, 5};
        float img[2 * 20];
        for (int i = 0; i < 40; i++)
            img[i] = (float)(test_normal(&rng));
        snprintf(path, sizeof path, "%s/mag2d.nii", dir);
        CHECK_OK(mr_nifti_write(path, img, n, fov, MR_NIFTI_MAGNITUDE));
        nifti_check_file(path, img, n, fov, 0, NULL);
        snprintf(path, sizeof path, "%s/cplx2d_nofov.nii", dir);
        CHECK_OK(mr_nifti_write(path, img, n, NULL, MR_NIFTI_COMPLEX));
        nifti_check_file(path, img, n, NULL, 1, NULL);
    }
    /* 3D complex and magnitude, oblique geometry (a rotation about an arbitrary axis) */
    {
        const int64_t n[3] = {6, 5, 4};
        const float fov[3] = {240, 200, 80};
        float *img = malloc(2 * 120 * sizeof *img);
        for (int i = 0; i < 240; i++)
            img[i] = (float)test_normal(&rng);
        mr_geometry g;
        const double t = 0.4, ax[3] = {0.48, 0.6, 0.64}; /* unit axis */
        /* Rodrigues: R = cos t I + (1 - cos t) a a^T + sin t [a]x */
        const double K[3][3] = {{0, -ax[2], ax[1]}, {ax[2], 0, -ax[0]}, {-ax[1], ax[0], 0}};
        double R[3][3];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                R[i][j] = (i == j ? cos(t) : 0) + (1 - cos(t)) * ax[i] * ax[j] + sin(t) * K[i][j];
        for (int i = 0; i < 3; i++) {
            g.read_dir[i] = (float)R[i][0];
            g.phase_dir[i] = (float)R[i][1];
            g.slice_dir[i] = (float)R[i][2];
        }
        g.position[0] = 12.5f;
        g.position[1] = -30.0f;
        g.position[2] = 41.0f;
        snprintf(path, sizeof path, "%s/cplx3d.nii", dir);
        CHECK_OK(mr_nifti_write_geometry(path, img, n, fov, MR_NIFTI_COMPLEX, &g, "test volume"));
        nifti_check_file(path, img, n, fov, 1, &g);
        snprintf(path, sizeof path, "%s/mag3d.nii", dir);
        CHECK_OK(mr_nifti_write_geometry(path, img, n, fov, MR_NIFTI_MAGNITUDE, &g, NULL));
        nifti_check_file(path, img, n, fov, 0, &g);
        /* a left-handed frame (slice direction flipped): qfac -1 */
        for (int i = 0; i < 3; i++)
            g.slice_dir[i] = -g.slice_dir[i];
        snprintf(path, sizeof path, "%s/lefthanded.nii", dir);
        CHECK_OK(mr_nifti_write_geometry(path, img, n, fov, MR_NIFTI_MAGNITUDE, &g, NULL));
        nifti_check_file(path, img, n, fov, 0, &g);
        /* refused: a matrix NIfTI-1 cannot hold; nothing written */
        const int64_t huge[3] = {40000, 1, 1};
        snprintf(path, sizeof path, "%s/huge.nii", dir);
        CHECK(mr_nifti_write(path, img, huge, NULL, MR_NIFTI_MAGNITUDE) == MR_EINVAL);
        CHECK(!io_test_exists(path));
        free(img);
    }
    CHECK(io_test_count_prefix(dir, ".") == 2); /* only . and ..: no temporary files left */
    io_test_rmdir(dir);
    return test_finish("test_io_nifti");
}
