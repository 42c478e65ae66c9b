/* Coil maps in files (docs/FORMAT.md, /kspace/sens, format version 2; io/sens_h5.h):
 *  - a scan with maps is written as version 2 and read back bit for bit; one without as version 1;
 *  - a version-1 file (no maps) is still read;
 *  - mr_sens_read takes /kspace/sens of a scan or /sens of a plain HDF5 file, and refuses (naming the
 *    file, the dataset and the shape or value) a wrong shape, a non-finite value, a missing dataset;
 *  - the k-space reader refuses maps whose shape does not match the scan. */
#include <hdf5.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/kspace_h5.h"
#include "io/sens_h5.h"
#include "io_testutil.h"
#include "testutil.h"

static mr_kspace *scan_with_maps(int64_t nc, int maps)
{
    const int64_t matrix[3] = {6, 5, 3};
    mr_kspace *ks = NULL;
    CHECK_OK(mr_kspace_create(&ks, matrix, 7, nc));
    if (!ks)
        return NULL;
    for (int64_t i = 0; i < 7 * 3; i++)
        ks->traj[i] = (float)(i % 5) - 2.0f;
    for (int64_t i = 0; i < 2 * 7 * nc; i++)
        ks->data[i] = (float)i * 0.25f;
    if (maps) {
        CHECK_OK(mr_kspace_alloc_sens(ks));
        for (int64_t i = 0; i < 2 * 90 * nc; i++)
            ks->sens[i] = (float)sin(0.1 * (double)i);
    }
    return ks;
}

/* A plain HDF5 file with one float32 dataset `name` of the given shape, values v (NULL: zeros). */
static void write_plain(const char *path, const char *name, int rank, const hsize_t *dims, const float *v)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t s = H5Screate_simple(rank, dims, NULL);
    hid_t d = H5Dcreate2(f, name, H5T_IEEE_F32LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    size_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= dims[i];
    float *buf = calloc(n, sizeof(float));
    if (v)
        memcpy(buf, v, n * sizeof(float));
    H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
    free(buf);
    H5Dclose(d);
    H5Sclose(s);
    H5Fclose(f);
}

int main(void)
{
    const char *dir = test_tmpdir("test_io_sens");
    char a[1100], b[1100], c[1100];
    snprintf(a, sizeof a, "%s/maps.h5", dir);
    snprintf(b, sizeof b, "%s/nomaps.h5", dir);
    snprintf(c, sizeof c, "%s/plain.h5", dir);

    mr_kspace *ks = scan_with_maps(2, 1), *kn = scan_with_maps(2, 0), *back = NULL;
    if (!ks || !kn)
        return test_finish("test_io_sens");
    CHECK_OK(mr_kspace_write(a, ks));
    CHECK_OK(mr_kspace_write(b, kn));
    CHECK(io_file_version(a) == 2);
    CHECK(io_file_version(b) == 1);
    CHECK_OK(mr_kspace_read(a, &back));
    if (back) {
        CHECK(back->sens && memcmp(back->sens, ks->sens, 2 * 90 * 2 * sizeof(float)) == 0);
        mr_kspace_free(back);
    }
    CHECK_OK(mr_kspace_read(b, &back));
    if (back) {
        CHECK(back->sens == NULL);
        mr_kspace_free(back);
    }

    /* mr_sens_read: /kspace/sens of a scan, /sens of a plain file */
    float *maps = NULL;
    CHECK_OK(mr_sens_read(a, ks->matrix, 2, &maps));
    CHECK(maps && memcmp(maps, ks->sens, 2 * 90 * 2 * sizeof(float)) == 0);
    free(maps);
    const hsize_t good[5] = {2, 3, 5, 6, 2};
    write_plain(c, "/sens", 5, good, ks->sens);
    CHECK_OK(mr_sens_read(c, ks->matrix, 2, &maps));
    CHECK(maps && memcmp(maps, ks->sens, 2 * 90 * 2 * sizeof(float)) == 0);
    free(maps);
    maps = NULL;

    /* refusals */
    CHECK(mr_sens_read(c, ks->matrix, 3, &maps) == MR_EFORMAT && maps == NULL);
    printf("message: %s\n", mr_last_error());
    CHECK(strstr(mr_last_error(), "plain.h5") && strstr(mr_last_error(), "2x3x5x6x2") &&
          strstr(mr_last_error(), "3x3x5x6x2"));
    const hsize_t wrong_rank[4] = {2, 3, 5, 12};
    write_plain(c, "/sens", 4, wrong_rank, NULL);
    CHECK(mr_sens_read(c, ks->matrix, 2, &maps) == MR_EFORMAT);
    CHECK(strstr(mr_last_error(), "rank 4") != NULL);
    float *bad = calloc(2 * 90 * 2, sizeof(float));
    bad[77] = NAN;
    write_plain(c, "/sens", 5, good, bad);
    CHECK(mr_sens_read(c, ks->matrix, 2, &maps) == MR_EFORMAT);
    printf("message: %s\n", mr_last_error());
    CHECK(strstr(mr_last_error(), "non-finite") != NULL);
    free(bad);
    write_plain(c, "/other", 5, good, NULL);
    CHECK(mr_sens_read(c, ks->matrix, 2, &maps) == MR_EFORMAT);
    CHECK(strstr(mr_last_error(), "no coil maps") != NULL);
    CHECK(mr_sens_read(b, ks->matrix, 2, &maps) == MR_EFORMAT); /* a scan without maps */

    /* the k-space reader: maps of another coil count */
    mr_kspace *k3 = scan_with_maps(3, 1);
    if (k3) {
        CHECK_OK(mr_kspace_write(c, k3));
        mr_kspace_free(k3);
        /* put 3 coils' maps next to 2 coils' data: rewrite /kspace/data with 2 coils */
        hid_t f = H5Fopen(c, H5F_ACC_RDWR, H5P_DEFAULT);
        io_test_unpromise(f);
        H5Ldelete(f, "/kspace/data", H5P_DEFAULT);
        const hsize_t dd[3] = {2, 7, 2};
        hid_t s = H5Screate_simple(3, dd, NULL);
        hid_t d = H5Dcreate2(f, "/kspace/data", H5T_IEEE_F32LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        float zeros[28] = {0};
        H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, zeros);
        H5Dclose(d);
        H5Sclose(s);
        H5Fclose(f);
        CHECK(mr_kspace_read(c, &back) == MR_EFORMAT && back == NULL);
        printf("message: %s\n", mr_last_error());
        CHECK(strstr(mr_last_error(), "/kspace/sens") != NULL);
    }
    mr_kspace_free(ks);
    mr_kspace_free(kn);
    io_test_rmdir(dir);
    return test_finish("test_io_sens");
}
