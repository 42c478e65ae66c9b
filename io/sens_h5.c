#include "sens_h5.h"

#include <stdlib.h>

#include "h5util.h"

mr_status mr_sens_read(const char *path, const int64_t matrix[3], int64_t ncoils, float **maps)
{
    *maps = NULL;
    hid_t file = H5I_INVALID_HID, ds = H5I_INVALID_HID;
    mr_status st = mr_h5_open_read(path, &file);
    if (st != MR_OK)
        return st;
    const char *name = "/kspace/sens";
    int e = mr_h5_exists(file, path, name);
    if (e == 0) {
        name = "/sens";
        e = mr_h5_exists(file, path, name);
    }
    hsize_t dims[5];
    const hsize_t want[5] = {(hsize_t)ncoils, (hsize_t)matrix[2], (hsize_t)matrix[1], (hsize_t)matrix[0], 2};
    if (e < 0) {
        st = MR_EIO;
    } else if (e == 0) {
        st = mr_error(MR_EFORMAT, "%s: no coil maps (neither /kspace/sens nor /sens)", path);
    } else if ((st = mr_h5_open_f32(file, path, name, 5, &ds, dims)) == MR_OK) {
        for (int i = 0; i < 5 && st == MR_OK; i++)
            if (dims[i] != want[i])
                st = mr_error(MR_EFORMAT,
                              "%s: %s is %llux%llux%llux%llux%llu, expected %llux%llux%llux%llux2 ([C][Nz][Ny][Nx][2] "
                              "of the scan)",
                              path, name, (unsigned long long)dims[0], (unsigned long long)dims[1],
                              (unsigned long long)dims[2], (unsigned long long)dims[3], (unsigned long long)dims[4],
                              (unsigned long long)want[0], (unsigned long long)want[1], (unsigned long long)want[2],
                              (unsigned long long)want[3]);
    }
    float *buf = NULL;
    if (st == MR_OK && !(buf = malloc((size_t)(ncoils * matrix[0] * matrix[1] * matrix[2]) * 2 * sizeof(float))))
        st = mr_error(MR_ENOMEM, "%s: out of memory for %lld coil maps", path, (long long)ncoils);
    if (st == MR_OK)
        st = mr_h5_read_f32(ds, path, name, 5, dims, buf);
    mr_h5_close(&ds);
    mr_h5_close(&file);
    if (st != MR_OK) {
        free(buf);
        return st;
    }
    *maps = buf;
    return MR_OK;
}
