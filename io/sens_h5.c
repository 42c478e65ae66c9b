#include "sens_h5.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../base/child.h"
#include "../base/grid.h"
#include "../base/memory.h"
#include "h5util.h"

typedef struct {
    int64_t matrix[3], ncoils;
    float *maps;
} sens_job;

static size_t sens_floats(const sens_job *j) { return (size_t)(j->ncoils * j->matrix[0] * j->matrix[1] * j->matrix[2]) * 2; }

/* The maps of an open file (in the reading child): /kspace/sens or /sens of the scan's shape. */
static mr_status read_maps(hid_t file, const char *path, void *ctx)
{
    sens_job *j = ctx;
    hid_t ds = H5I_INVALID_HID;
    mr_status st = MR_OK;
    const char *name = "/kspace/sens";
    int e = mr_h5_exists(file, path, name);
    if (e == 0) {
        name = "/sens";
        e = mr_h5_exists(file, path, name);
    }
    hsize_t dims[5];
    const hsize_t want[5] = {(hsize_t)j->ncoils, (hsize_t)j->matrix[2], (hsize_t)j->matrix[1], (hsize_t)j->matrix[0], 2};
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
    const uint64_t bytes = sens_floats(j) * sizeof(float);
    if (st == MR_OK && (st = mr_mem_check(bytes, "the coil maps")) == MR_OK) {
        mr_child_memory_allow((int64_t)bytes); /* the dataset's shape, checked against its storage */
        if (!(j->maps = malloc((size_t)bytes)))
            st = mr_error(MR_ENOMEM, "%s: out of memory for %lld coil maps", path, (long long)j->ncoils);
    }
    if (st == MR_OK)
        st = mr_h5_read_f32(ds, path, name, 5, dims, j->maps);
    mr_h5_close(&ds);
    if (st != MR_OK) {
        free(j->maps);
        j->maps = NULL;
    }
    return st;
}

static mr_status send_maps(void *ctx, int fd)
{
    sens_job *j = ctx;
    mr_status st = mr_pipe_put(fd, j->maps, sens_floats(j) * sizeof(float));
    free(j->maps);
    j->maps = NULL;
    return st;
}

static mr_status recv_maps(void *ctx, int fd, int file_fd, const char *label)
{
    (void)file_fd;
    sens_job *j = ctx;
    const size_t n = sens_floats(j);
    mr_status st = mr_mem_check(n * sizeof(float), "the coil maps");
    float *buf = st == MR_OK ? malloc(n * sizeof(float)) : NULL;
    if (st == MR_OK && !buf)
        st = mr_error(MR_ENOMEM, "%s: out of memory for %lld coil maps", label, (long long)j->ncoils);
    if (st == MR_OK)
        st = mr_pipe_get(fd, buf, n * sizeof(float));
    for (size_t i = 0; st == MR_OK && i < n; i++)
        if (!isfinite(buf[i]))
            st = mr_error(MR_EINTERNAL, "%s: the reading process sent a non-finite coil map value", label);
    if (st != MR_OK) {
        free(buf);
        return st;
    }
    j->maps = buf;
    return MR_OK;
}

static const mr_h5_isolated sens_isolated = {read_maps, send_maps, recv_maps, 0};

mr_status mr_sens_read(const char *path, const int64_t matrix[3], int64_t ncoils, float **maps)
{
    *maps = NULL;
    char what[96];
    snprintf(what, sizeof what, "coil maps for a %lldx%lldx%lld scan", (long long)matrix[0], (long long)matrix[1],
             (long long)matrix[2]);
    mr_status st = mr_matrix_check(matrix, what);
    if (st != MR_OK)
        return st;
    if (ncoils < 1 || ncoils > MR_MAX_COILS)
        return mr_error(MR_EINVAL, "%s: %lld coils", path, (long long)ncoils);
    sens_job j = {{matrix[0], matrix[1], matrix[2]}, ncoils, NULL};
    st = mr_h5_read_path_in_child(path, &sens_isolated, &j);
    *maps = j.maps;
    return st;
}
