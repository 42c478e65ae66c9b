/* Our decoder of filtered chunks (mr_h5_dataset_read: fletcher32, deflate, shuffle undone here,
 * not by libhdf5) against libhdf5's encoder: random scans and images are written, every dataset is
 * rewritten with the HDF5 API as chunked with random chunk shapes (edge chunks included), one of
 * the 16 orderings of subsets of {shuffle, deflate, fletcher32}, in either byte order, and read
 * back; the values must be bit-identical to those written. */
#include <hdf5.h>
#include <stdlib.h>
#include <string.h>

#include "io/h5util.h"
#include "io/image_h5.h"
#include "io/kspace_h5.h"
#include "io_testutil.h"
#include "testutil.h"

static uint64_t rng;

static int64_t rand_between(int64_t lo, int64_t hi) { return lo + (int64_t)(test_uniform(&rng) * (double)(hi - lo + 1)); }

/* the 16 filter orders: "", s, d, f, sd, ds, sf, fs, df, fd, sdf, sfd, dsf, dfs, fsd, fds */
static const char *const pipelines[16] = {"", "s", "d", "f", "sd", "ds", "sf", "fs", "df", "fd", "sdf", "sfd", "dsf", "dfs", "fsd", "fds"};

/* Rewrite dataset `name` chunked with random chunk dims, the given pipeline and byte order. */
static void rechunk(hid_t f, const char *name, const char *pipeline, int big_endian, char *how, size_t how_size)
{
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT), s = H5Dget_space(d);
    hsize_t dims[4], chunk[4];
    int r = H5Sget_simple_extent_dims(s, dims, NULL);
    H5Sclose(s);
    H5Dclose(d);
    size_t used = (size_t)snprintf(how, how_size, "%s chunks ", name);
    for (int i = 0; i < r; i++) {
        chunk[i] = (hsize_t)rand_between(1, (int64_t)dims[i]);
        used += (size_t)snprintf(how + used, how_size - used, "%s%llu", i ? "x" : "", (unsigned long long)chunk[i]);
    }
    snprintf(how + used, how_size - used, " [%s] %s", pipeline, big_endian ? "BE" : "LE");
    hid_t dcpl = io_test_dcpl(r, chunk, pipeline);
    CHECK(io_test_rewrite(f, name, dcpl, big_endian ? H5T_IEEE_F32BE : H5T_IEEE_F32LE) == 0);
    H5Pclose(dcpl);
}

static int same(const float *a, const float *b, size_t n) { return a && b && memcmp(a, b, n * sizeof(float)) == 0; }

int main(void)
{
    rng = test_seed();
    const char *dir = test_tmpdir("io_chunked");
    char path[1024], how[5][160];
    snprintf(path, sizeof path, "%s/scan.h5", dir);
    int rounds = 0, exact = 0;
    static const char *const names[5] = {"/kspace/traj", "/kspace/data", "/kspace/weights", "/truth/image",
                                         "/truth/bandlimited"};
    for (int round = 0; round < 48; round++) {
        const int is3d = round % 2;
        const int64_t matrix[3] = {rand_between(3, 17), rand_between(3, 17), is3d ? rand_between(2, 7) : 1};
        const int64_t m = rand_between(1, 700), c = rand_between(1, 3);
        mr_kspace *ks = NULL;
        CHECK_OK(mr_kspace_create(&ks, matrix, m, c));
        if (!ks)
            continue;
        CHECK_OK(mr_kspace_alloc_weights(ks));
        CHECK_OK(mr_kspace_alloc_truth(ks));
        for (int64_t i = 0; i < m * 3; i++)
            ks->traj[i] = (float)(test_normal(&rng) * 4);
        for (int64_t i = 0; i < m * c * 2; i++)
            /* half the values repeat, so that deflate has something to compress */
            ks->data[i] = i % 2 ? (float)test_normal(&rng) : (float)(i % 7);
        for (int64_t i = 0; i < m; i++)
            ks->weights[i] = (float)test_uniform(&rng);
        for (int64_t i = 0; i < mr_kspace_voxels(ks); i++)
            ks->truth[i] = ks->truth_bl[i] = (float)(i % 5) * 0.25f;
        CHECK_OK(mr_kspace_write(path, ks));
        hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
        for (int k = 0; k < 5; k++)
            rechunk(f, names[k], pipelines[(round + 3 * k) % 16], (round + k) % 3 == 0, how[k], sizeof how[k]);
        H5Fclose(f);
        mr_kspace *back = NULL;
        mr_status st = mr_kspace_read(path, &back);
        CHECK_OK(st);
        const size_t nv = (size_t)mr_kspace_voxels(ks);
        int ok = st == MR_OK && same(back->traj, ks->traj, (size_t)m * 3) &&
                 same(back->data, ks->data, (size_t)(m * c) * 2) && same(back->weights, ks->weights, (size_t)m) &&
                 same(back->truth, ks->truth, nv) && same(back->truth_bl, ks->truth_bl, nv);
        if (!ok)
            for (int k = 0; k < 5; k++)
                fprintf(stderr, "round %d (%lldx%lldx%lld, M %lld, C %lld): %s\n", round, (long long)matrix[0],
                        (long long)matrix[1], (long long)matrix[2], (long long)m, (long long)c, how[k]);
        else if (round < 4)
            printf("round %d: %s; %s; ... read back bit-identical\n", round, how[0], how[1]);
        CHECK(ok);
        exact += ok;
        rounds++;
        mr_kspace_free(back);
        mr_kspace_free(ks);
    }
    /* an image, rank 4, through the same decoder */
    const int64_t im[3] = {9, 6, 4};
    const size_t n = 9 * 6 * 4 * 2;
    float *img = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        img[i] = (float)test_normal(&rng);
    snprintf(path, sizeof path, "%s/image.h5", dir);
    int images = 0;
    for (int p = 0; p < 16; p++) {
        CHECK_OK(mr_image_h5_write(path, img, im, NULL));
        hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
        /* the rewrite drops /image's attributes: matrix again */
        rechunk(f, "/image", pipelines[p], p % 2, how[0], sizeof how[0]);
        hid_t d = H5Dopen2(f, "/image", H5P_DEFAULT);
        const int32_t m32[3] = {9, 6, 4};
        CHECK_OK(mr_h5_attr_write(d, path, "matrix", H5T_STD_I32LE, H5T_NATIVE_INT32, m32, 3));
        H5Dclose(d);
        H5Fclose(f);
        float *back = NULL;
        int64_t bm[3];
        CHECK_OK(mr_image_h5_read(path, &back, bm));
        int ok = same(back, img, n);
        if (!ok)
            fprintf(stderr, "image: %s\n", how[0]);
        CHECK(ok);
        images += ok;
        free(back);
    }
    free(img);
    printf("%d of %d scans and %d of 16 images read back bit-identical through every filter order\n", exact, rounds,
           images);
    CHECK_GE("scans exact", exact, 48);
    CHECK_GE("images exact", images, 16);
    io_test_rmdir(dir);
    return test_finish("test_io_chunked");
}
