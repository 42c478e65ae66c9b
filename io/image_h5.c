/* Reconstructed images as HDF5 (docs/FORMAT.md, "Image files"):
 *   /image float32 [Nz][Ny][Nx][2] (re, im), attributes matrix int32[3] {Nx, Ny, Nz}, method
 *   (string), iterations (int32), fov_mm and voxel_size_mm (float64[3], when the field of view is
 *   known) and one float64 scalar per mr_image_meta attr. */
#include "image_h5.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/child.h"
#include "../base/memory.h"
#include "h5util.h"
#include "kspace.h"

#define DS_IMAGE "/image"

static int reserved_name(const char *key)
{
    static const char *const reserved[] = {"matrix",   "method",      "iterations", "checksum", "fov_mm",
                                           "voxel_size_mm", "position_mm", "read_dir", "phase_dir",  "slice_dir"};
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
        if (strcmp(key, reserved[i]) == 0)
            return 1;
    return 0;
}

mr_status mr_image_h5_write(const char *path, const float *img, const int64_t matrix[3], const mr_image_meta *meta)
{
    mr_status st = mr_image_write_check(path, img, matrix);
    if (st != MR_OK)
        return st;
    if (meta)
        for (int i = 0; i < meta->nattrs; i++) {
            const char *key = meta->attrs[i].key;
            if (!key || !key[0] || reserved_name(key) || strchr(key, '/'))
                return mr_error(MR_EINVAL, "%s: bad image attribute name '%s'", path, key ? key : "(null)");
            for (int j = 0; j < i; j++)
                if (strcmp(meta->attrs[j].key, key) == 0)
                    return mr_error(MR_EINVAL, "%s: image attribute '%s' given twice", path, key);
        }
    const hsize_t dims[4] = {(hsize_t)matrix[2], (hsize_t)matrix[1], (hsize_t)matrix[0], 2};
    const int32_t m32[3] = {(int32_t)matrix[0], (int32_t)matrix[1], (int32_t)matrix[2]};
    char tmp[4096];
    hid_t file, ds = H5I_INVALID_HID;
    if ((st = mr_h5_create_tmp(path, tmp, sizeof tmp, &file)) != MR_OK)
        return st;
    if ((st = mr_h5_write_f32(file, path, DS_IMAGE, 4, dims, img)) != MR_OK)
        goto done;
    ds = H5Dopen2(file, DS_IMAGE, H5P_DEFAULT);
    if (ds < 0) {
        st = mr_error(MR_EIO, "%s: %s: cannot reopen to add attributes", path, DS_IMAGE);
        goto done;
    }
    st = mr_h5_attr_write(ds, path, "matrix", H5T_STD_I32LE, H5T_NATIVE_INT32, m32, 3);
    if (st == MR_OK)
        st = mr_h5_promise_checksums(ds, path);
    if (st == MR_OK && meta && meta->method && meta->method[0])
        st = mr_h5_attr_write_string(ds, path, "method", meta->method);
    if (st == MR_OK && meta) {
        const int32_t iters = meta->iterations;
        st = mr_h5_attr_write(ds, path, "iterations", H5T_STD_I32LE, H5T_NATIVE_INT32, &iters, 0);
    }
    if (st == MR_OK && meta && meta->fov_mm &&
        (meta->fov_mm[0] > 0 || meta->fov_mm[1] > 0 || meta->fov_mm[2] > 0)) {
        double fov[3], voxel[3];
        for (int a = 0; a < 3; a++) {
            fov[a] = meta->fov_mm[a] > 0 && isfinite(meta->fov_mm[a]) ? (double)meta->fov_mm[a] : 0.0;
            voxel[a] = fov[a] / (double)matrix[a];
        }
        st = mr_h5_attr_write(ds, path, "fov_mm", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, fov, 3);
        if (st == MR_OK)
            st = mr_h5_attr_write(ds, path, "voxel_size_mm", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, voxel, 3);
    }
    if (st == MR_OK && meta && meta->geometry) {
        const mr_geometry *g = meta->geometry;
        const float *const v[4] = {g->position, g->read_dir, g->phase_dir, g->slice_dir};
        static const char *const names[4] = {"position_mm", "read_dir", "phase_dir", "slice_dir"};
        for (int k = 0; st == MR_OK && k < 4; k++) {
            const double d[3] = {v[k][0], v[k][1], v[k][2]};
            st = mr_h5_attr_write(ds, path, names[k], H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, d, 3);
        }
    }
    for (int i = 0; st == MR_OK && meta && i < meta->nattrs; i++)
        st = mr_h5_attr_write(ds, path, meta->attrs[i].key, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &meta->attrs[i].value,
                              0);
done:
    mr_h5_close(&ds);
    return mr_h5_close_commit(file, tmp, path, st);
}

typedef struct {
    float **img;
    int64_t *matrix;
    mr_image_h5_info *info; /* NULL: the voxels only */
} image_out;

/* The optional attributes: fov_mm (float, 3), method (string), the four geometry vectors (all or none). */
static mr_status read_info(hid_t file, const char *path, mr_image_h5_info *info)
{
    memset(info, 0, sizeof *info);
    hid_t ds = H5Dopen2(file, DS_IMAGE, H5P_DEFAULT);
    if (ds < 0)
        return mr_error(MR_EFORMAT, "%s: %s: cannot open", path, DS_IMAGE);
    double v[4][3], fov[3];
    int present = 0, have = 0;
    mr_status st = mr_h5_attr_read(ds, path, DS_IMAGE, "fov_mm", H5T_FLOAT, H5T_NATIVE_DOUBLE, fov, 3, &present);
    for (int a = 0; st == MR_OK && present && a < 3; a++) {
        if (!isfinite(fov[a]) || fov[a] < 0 || fov[a] > 1e6)
            st = mr_error(MR_EFORMAT, "%s: %s attribute 'fov_mm'[%d] = %g is not in [0, 1e6] mm", path, DS_IMAGE, a,
                          fov[a]);
        info->fov_mm[a] = (float)fov[a];
    }
    if (st == MR_OK)
        st = mr_h5_attr_read_string(ds, path, DS_IMAGE, "method", info->method, sizeof info->method, &present);
    static const char *const names[4] = {"position_mm", "read_dir", "phase_dir", "slice_dir"};
    for (int k = 0; st == MR_OK && k < 4; k++) {
        st = mr_h5_attr_read(ds, path, DS_IMAGE, names[k], H5T_FLOAT, H5T_NATIVE_DOUBLE, v[k], 3, &present);
        have += present;
        for (int a = 0; st == MR_OK && present && a < 3; a++)
            if (!isfinite(v[k][a]) || fabs(v[k][a]) > 1e7)
                st = mr_error(MR_EFORMAT, "%s: %s attribute '%s'[%d] = %g", path, DS_IMAGE, names[k], a, v[k][a]);
    }
    if (st == MR_OK && have != 0 && have != 4)
        st = mr_error(MR_EFORMAT, "%s: %s: the geometry needs all of position_mm, read_dir, phase_dir, slice_dir",
                      path, DS_IMAGE);
    if (st == MR_OK && have == 4) {
        info->has_geometry = 1;
        for (int a = 0; a < 3; a++) {
            info->geometry.position[a] = (float)v[0][a];
            info->geometry.read_dir[a] = (float)v[1][a];
            info->geometry.phase_dir[a] = (float)v[2][a];
            info->geometry.slice_dir[a] = (float)v[3][a];
        }
    }
    mr_h5_close(&ds);
    return st;
}

static mr_status read_image(hid_t file, const char *path, void *ctx)
{
    image_out *o = ctx;
    mr_status st = mr_image_h5_read_file(file, path, o->img, o->matrix);
    if (st == MR_OK && o->info && (st = read_info(file, path, o->info)) != MR_OK) {
        free(*o->img);
        *o->img = NULL;
    }
    return st;
}


static mr_status send_image(void *ctx, int fd)
{
    image_out *o = ctx;
    mr_status st = mr_pipe_put(fd, o->matrix, 3 * sizeof *o->matrix);
    if (st == MR_OK)
        st = mr_pipe_put(fd, *o->img, (size_t)(o->matrix[0] * o->matrix[1] * o->matrix[2]) * 2 * sizeof(float));
    if (st == MR_OK && o->info)
        st = mr_pipe_put(fd, o->info, sizeof *o->info);
    free(*o->img);
    *o->img = NULL;
    return st;
}

static mr_status recv_image(void *ctx, int fd, int file_fd, const char *label)
{
    (void)file_fd;
    image_out *o = ctx;
    int64_t m[3];
    mr_status st = mr_pipe_get(fd, m, sizeof m);
    char what[96];
    snprintf(what, sizeof what, "the image of %s", label[0] ? "the file" : "?");
    if (st != MR_OK || (st = mr_matrix_check(m, what)) != MR_OK)
        return st;
    const size_t n = (size_t)(m[0] * m[1] * m[2]) * 2;
    if ((st = mr_mem_check(n * sizeof(float), what)) != MR_OK)
        return st;
    float *buf = malloc(n * sizeof(float));
    if (!buf)
        return mr_error(MR_ENOMEM, "%s: out of memory for the image", label);
    st = mr_pipe_get(fd, buf, n * sizeof(float));
    for (size_t i = 0; st == MR_OK && i < n; i++)
        if (!isfinite(buf[i]))
            st = mr_error(MR_EINTERNAL, "%s: the reading process sent a non-finite value", label);
    if (st == MR_OK && o->info && (st = mr_pipe_get(fd, o->info, sizeof *o->info)) == MR_OK) {
        /* what the child checked, checked again here: finite, bounded, a terminated method name */
        const mr_image_h5_info *f = o->info;
        const float *vals[5] = {f->fov_mm, f->geometry.position, f->geometry.read_dir, f->geometry.phase_dir,
                                f->geometry.slice_dir};
        for (int k = 0; k < 5 && st == MR_OK; k++)
            for (int a = 0; a < 3; a++)
                if (!isfinite(vals[k][a]) || fabsf(vals[k][a]) > 1e7f) {
                    st = mr_error(MR_EINTERNAL, "%s: the reading process sent an invalid image geometry", label);
                    break;
                }
        if (st == MR_OK && memchr(f->method, '\0', sizeof f->method) == NULL)
            st = mr_error(MR_EINTERNAL, "%s: the reading process sent an unterminated method name", label);
    }
    if (st != MR_OK) {
        free(buf);
        return st;
    }
    memcpy(o->matrix, m, sizeof m);
    *o->img = buf;
    return MR_OK;
}

static const mr_h5_isolated image_isolated = {read_image, send_image, recv_image, 0};

mr_status mr_image_h5_read_info(const char *path, float **img, int64_t matrix[3], mr_image_h5_info *info)
{
    *img = NULL;
    image_out o = {img, matrix, info};
    return mr_h5_read_path_in_child(path, &image_isolated, &o);
}

mr_status mr_image_h5_read(const char *path, float **img, int64_t matrix[3])
{
    *img = NULL;
    image_out o = {img, matrix, NULL};
    return mr_h5_read_path_in_child(path, &image_isolated, &o);
}

mr_status mr_image_h5_read_file(hid_t file, const char *path, float **img, int64_t matrix[3])
{
    *img = NULL;
    hid_t ds = H5I_INVALID_HID;
    hsize_t dims[4];
    float *buf = NULL;
    mr_status st;
    int64_t m[3];
    int checked = 0;
    if ((st = mr_h5_open_f32(file, path, DS_IMAGE, 4, &ds, dims)) != MR_OK ||
        (st = mr_h5_checksums_promised(ds, path, DS_IMAGE, &checked)) != MR_OK ||
        (checked && (st = mr_h5_require_checksum(ds, path, DS_IMAGE)) != MR_OK))
        goto done;
    if ((st = mr_h5_attr_read(ds, path, DS_IMAGE, "matrix", H5T_INTEGER, H5T_NATIVE_INT64, m, 3, NULL)) != MR_OK)
        goto done;
    char what[1100];
    snprintf(what, sizeof what, "%s: %s attribute 'matrix'", path, DS_IMAGE);
    if ((st = mr_matrix_check(m, what)) != MR_OK)
        goto done;
    if (dims[0] != (hsize_t)m[2] || dims[1] != (hsize_t)m[1] || dims[2] != (hsize_t)m[0] || dims[3] != 2) {
        st = mr_error(MR_EFORMAT, "%s: %s: dims %llux%llux%llux%llu do not match [Nz][Ny][Nx][2] of matrix %lldx%lldx%lld",
                      path, DS_IMAGE, (unsigned long long)dims[0], (unsigned long long)dims[1],
                      (unsigned long long)dims[2], (unsigned long long)dims[3], (long long)m[0], (long long)m[1],
                      (long long)m[2]);
        goto done;
    }
    const uint64_t bytes = (uint64_t)(m[0] * m[1] * m[2]) * 2 * sizeof(float);
    if ((st = mr_mem_check(bytes, "the image")) != MR_OK)
        goto done;
    mr_child_memory_allow((int64_t)bytes); /* checked against the dataset's storage */
    buf = malloc((size_t)bytes);
    if (!buf) {
        st = mr_error(MR_ENOMEM, "%s: out of memory for the image", path);
        goto done;
    }
    st = mr_h5_read_f32(ds, path, DS_IMAGE, 4, dims, buf);
done:
    mr_h5_close(&ds);
    if (st != MR_OK) {
        free(buf);
        return st;
    }
    memcpy(matrix, m, sizeof m);
    *img = buf;
    return MR_OK;
}
