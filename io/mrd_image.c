/* ISMRMRD/MRD images (see mrd_image.h). The compound types use libismrmrd's member names; their
 * layout in the file is ours (readers address members by name). */
#include "mrd_image.h"

#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/child.h"
#include "../base/grid.h"
#include "../base/memory.h"
#include "h5util.h"

#define MRD_VERSION 1
#define MRD_CXFLOAT 7       /* ISMRMRD_CXFLOAT */
#define MRD_IMTYPE_COMPLEX 5 /* ISMRMRD_IMTYPE_COMPLEX */

typedef struct {
    uint16_t version, data_type;
    uint64_t flags;
    uint32_t measurement_uid;
    uint16_t matrix_size[3];
    float field_of_view[3];
    uint16_t channels;
    float position[3], read_dir[3], phase_dir[3], slice_dir[3], patient_table_position[3];
    uint16_t average, slice, contrast, phase, repetition, set;
    uint32_t acquisition_time_stamp;
    uint32_t physiology_time_stamp[3];
    uint16_t image_type, image_index, image_series_index;
    int32_t user_int[8];
    float user_float[8];
    uint32_t attribute_string_len;
} mrd_image_header;

/* The ImageHeader compound (memory layout = the struct above). */
static hid_t header_type(void)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(mrd_image_header));
    hid_t u16x3 = mr_h5_array_type(H5T_NATIVE_UINT16, 3), f32x3 = mr_h5_array_type(H5T_NATIVE_FLOAT, 3),
          u32x3 = mr_h5_array_type(H5T_NATIVE_UINT32, 3), i32x8 = mr_h5_array_type(H5T_NATIVE_INT32, 8),
          f32x8 = mr_h5_array_type(H5T_NATIVE_FLOAT, 8);
#define M(name, type) H5Tinsert(t, #name, HOFFSET(mrd_image_header, name), type)
    M(version, H5T_NATIVE_UINT16);
    M(data_type, H5T_NATIVE_UINT16);
    M(flags, H5T_NATIVE_UINT64);
    M(measurement_uid, H5T_NATIVE_UINT32);
    M(matrix_size, u16x3);
    M(field_of_view, f32x3);
    M(channels, H5T_NATIVE_UINT16);
    M(position, f32x3);
    M(read_dir, f32x3);
    M(phase_dir, f32x3);
    M(slice_dir, f32x3);
    M(patient_table_position, f32x3);
    M(average, H5T_NATIVE_UINT16);
    M(slice, H5T_NATIVE_UINT16);
    M(contrast, H5T_NATIVE_UINT16);
    M(phase, H5T_NATIVE_UINT16);
    M(repetition, H5T_NATIVE_UINT16);
    M(set, H5T_NATIVE_UINT16);
    M(acquisition_time_stamp, H5T_NATIVE_UINT32);
    M(physiology_time_stamp, u32x3);
    M(image_type, H5T_NATIVE_UINT16);
    M(image_index, H5T_NATIVE_UINT16);
    M(image_series_index, H5T_NATIVE_UINT16);
    M(user_int, i32x8);
    M(user_float, f32x8);
    M(attribute_string_len, H5T_NATIVE_UINT32);
#undef M
    H5Tclose(u16x3);
    H5Tclose(f32x3);
    H5Tclose(u32x3);
    H5Tclose(i32x8);
    H5Tclose(f32x8);
    return t;
}

static hid_t complex_type(void)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, 2 * sizeof(float));
    H5Tinsert(t, "real", 0, H5T_NATIVE_FLOAT);
    H5Tinsert(t, "imag", sizeof(float), H5T_NATIVE_FLOAT);
    return t;
}

/* An extensible (in dim 0) chunked dataset of `rank` dims, written whole from buf. */
static mr_status write_dataset(hid_t group, const char *path, const char *name, hid_t type, int rank,
                               const hsize_t *dims, const hsize_t *chunk, const void *buf)
{
    hsize_t maxdims[5];
    for (int i = 0; i < rank; i++)
        maxdims[i] = i == 0 ? H5S_UNLIMITED : dims[i];
    hid_t space = H5Screate_simple(rank, dims, maxdims), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t ds = H5I_INVALID_HID;
    mr_status st = MR_OK;
    if (space < 0 || dcpl < 0 || H5Pset_obj_track_times(dcpl, 0) < 0 || H5Pset_chunk(dcpl, rank, chunk) < 0 ||
        (ds = H5Dcreate2(group, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0 ||
        H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
        st = mr_error(MR_EIO, "%s: cannot write the MRD image's %s", path, name);
    if (ds >= 0)
        H5Dclose(ds);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (space >= 0)
        H5Sclose(space);
    return st;
}

/* The ismrmrdMeta XML of the image: names and values are ours (no markup characters in them). */
static void meta_xml(char *buf, size_t size, const mr_mrd_image_opts *o)
{
    int n = snprintf(buf, size, "<?xml version=\"1.0\"?><ismrmrdMeta>");
    if (o && o->comment && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, "<meta><name>ImageComment</name><value>%s</value></meta>", o->comment);
    if ((size_t)n < size)
        snprintf(buf + n, size - (size_t)n, "<meta><name>ImageProcessingHistory</name><value>mrirecon %s</value>"
                                            "</meta></ismrmrdMeta>",
                 MR_VERSION);
}

static int plain_text(const char *s)
{
    for (; s && *s; s++)
        if (*s == '<' || *s == '>' || *s == '&' || (unsigned char)*s < 0x20)
            return 0;
    return 1;
}

mr_status mr_mrd_image_write(const char *path, const float *img, const int64_t matrix[3], const mr_mrd_image_opts *o)
{
    mr_status st = mr_image_write_check(path, img, matrix);
    if (st != MR_OK)
        return st;
    const char *var = o && o->var ? o->var : "image_0";
    if (!var[0] || strchr(var, '/') || strlen(var) > 64 || !plain_text(var) || (o && !plain_text(o->comment)))
        return mr_error(MR_EINVAL, "%s: bad MRD image name '%s' or comment", path, var);
    mrd_image_header h;
    memset(&h, 0, sizeof h);
    h.version = MRD_VERSION;
    h.data_type = MRD_CXFLOAT;
    h.channels = 1;
    h.image_type = MRD_IMTYPE_COMPLEX;
    h.image_series_index = (uint16_t)(o ? o->series_index : 0);
    double d[3];
    mr_voxel_size_mm(matrix, o ? o->fov_mm : NULL, d);
    mr_geometry g;
    if (o && o->geometry) {
        double dir[3][3];
        if (!mr_geometry_frame(o->geometry, dir))
            return mr_error(MR_EINVAL, "%s: the geometry has no usable read and phase directions", path);
        g = *o->geometry;
        for (int i = 0; i < 3; i++) {
            g.read_dir[i] = (float)dir[i][0];
            g.phase_dir[i] = (float)dir[i][1];
            g.slice_dir[i] = (float)dir[i][2];
        }
    } else {
        mr_geometry_default(&g);
    }
    for (int a = 0; a < 3; a++) {
        h.matrix_size[a] = (uint16_t)matrix[a];
        h.field_of_view[a] = (float)(d[a] * (double)matrix[a]);
        h.position[a] = g.position[a];
        h.read_dir[a] = g.read_dir[a];
        h.phase_dir[a] = g.phase_dir[a];
        h.slice_dir[a] = g.slice_dir[a];
    }
    char meta[512];
    meta_xml(meta, sizeof meta, o);
    h.attribute_string_len = (uint32_t)strlen(meta);

    char tmp[4096], name[96];
    hid_t file, grp = H5I_INVALID_HID, sub = H5I_INVALID_HID, ht = H5I_INVALID_HID, ct = H5I_INVALID_HID,
                st_type = H5I_INVALID_HID;
    if ((st = mr_h5_create_tmp(path, tmp, sizeof tmp, &file)) != MR_OK)
        return st;
    snprintf(name, sizeof name, "%s", var);
    grp = mr_h5_create_group(file, "/dataset");
    sub = grp >= 0 ? mr_h5_create_group(grp, name) : H5I_INVALID_HID;
    ht = header_type();
    ct = complex_type();
    st_type = H5Tcopy(H5T_C_S1);
    if (grp < 0 || sub < 0 || ht < 0 || ct < 0 || st_type < 0 || H5Tset_size(st_type, H5T_VARIABLE) < 0) {
        st = mr_error(MR_EIO, "%s: cannot create the MRD image group /dataset/%s", path, name);
        goto done;
    }
    const hsize_t one = 1;
    st = write_dataset(sub, path, "header", ht, 1, &one, &one, &h);
    const hsize_t dims[5] = {1, 1, (hsize_t)matrix[2], (hsize_t)matrix[1], (hsize_t)matrix[0]};
    const hsize_t chunk[5] = {1, 1, 1, (hsize_t)matrix[1], (hsize_t)matrix[0]};
    if (st == MR_OK)
        st = write_dataset(sub, path, "data", ct, 5, dims, chunk, img);
    const char *strings[1] = {meta};
    if (st == MR_OK)
        st = write_dataset(sub, path, "attributes", st_type, 1, &one, &one, strings);
done:
    if (st_type >= 0)
        H5Tclose(st_type);
    if (ct >= 0)
        H5Tclose(ct);
    if (ht >= 0)
        H5Tclose(ht);
    mr_h5_close(&sub);
    mr_h5_close(&grp);
    return mr_h5_close_commit(file, tmp, path, st);
}

/* ---- reading (mrirecon convert: MRD images of other programs, e.g. Gadgetron's) ------------------ */

typedef struct {
    uint16_t matrix_size[3];
    float field_of_view[3];
    uint16_t channels;
    float position[3], read_dir[3], phase_dir[3], slice_dir[3];
} mrd_read_header;

/* The members read from the header (by name; the file may hold more). */
static hid_t read_header_type(void)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(mrd_read_header));
    hid_t u16x3 = mr_h5_array_type(H5T_NATIVE_UINT16, 3), f32x3 = mr_h5_array_type(H5T_NATIVE_FLOAT, 3);
    H5Tinsert(t, "matrix_size", HOFFSET(mrd_read_header, matrix_size), u16x3);
    H5Tinsert(t, "field_of_view", HOFFSET(mrd_read_header, field_of_view), f32x3);
    H5Tinsert(t, "channels", HOFFSET(mrd_read_header, channels), H5T_NATIVE_UINT16);
    H5Tinsert(t, "position", HOFFSET(mrd_read_header, position), f32x3);
    H5Tinsert(t, "read_dir", HOFFSET(mrd_read_header, read_dir), f32x3);
    H5Tinsert(t, "phase_dir", HOFFSET(mrd_read_header, phase_dir), f32x3);
    H5Tinsert(t, "slice_dir", HOFFSET(mrd_read_header, slice_dir), f32x3);
    H5Tclose(u16x3);
    H5Tclose(f32x3);
    return t;
}

typedef struct {
    char name[256];
    int count;
} first_image;

/* One hard link at a time: its name, then stop the iteration (1); soft and external links are passed. */
static herr_t find_image(hid_t group, const char *name, const H5L_info_t *info, void *ctx)
{
    (void)group;
    first_image *f = ctx;
    if (info->type != H5L_TYPE_HARD || strlen(name) >= sizeof f->name)
        return 0;
    snprintf(f->name, sizeof f->name, "%s", name);
    f->count = 1;
    return 1;
}

typedef struct {
    float **img;
    int64_t *matrix;
    float *fov_mm;
    mr_geometry *geometry;
    int *nimages;
} mrd_out;

/* Open a dataset of the image group and run the safety check (io/h5util.h). */
static mr_status open_checked(hid_t file, const char *path, const char *name, hid_t *ds, mr_h5_dataset_info *info)
{
    int present = 0;
    mr_status st = mr_h5_lookup(file, path, name, &present);
    if (st != MR_OK)
        return st;
    if (!present)
        return mr_error(MR_EFORMAT, "%s: %s is missing (not an MRD image)", path, name);
    *ds = H5Dopen2(file, name, H5P_DEFAULT);
    if (*ds < 0)
        return mr_error(MR_EFORMAT, "%s: %s cannot be opened", path, name);
    return mr_h5_dataset_check(*ds, path, name, info);
}

static mr_status read_mrd(hid_t file, const char *path, void *ctx)
{
    mrd_out *o = ctx;
    *o->img = NULL;
    hid_t grp = H5I_INVALID_HID, hds = H5I_INVALID_HID, dds = H5I_INVALID_HID, ht = H5I_INVALID_HID,
          ct = H5I_INVALID_HID, ftype = H5I_INVALID_HID;
    mrd_read_header *heads = NULL;
    float *buf = NULL;
    first_image f = {"", 0};
    mr_status st = mr_h5_open_group(file, path, "/dataset", &grp);
    if (st != MR_OK)
        return st;
    hsize_t idx = 0;
    /* the first link of /dataset by name that holds an image (header + data), skipping xml and raw data */
    char hname[600], dname[600];
    int found = 0;
    while (!found && idx < 100000 && H5Literate(grp, H5_INDEX_NAME, H5_ITER_INC, &idx, find_image, &f) > 0) {
        snprintf(hname, sizeof hname, "/dataset/%s/header", f.name);
        snprintf(dname, sizeof dname, "/dataset/%s/data", f.name);
        int ph = 0, pd = 0;
        if (mr_h5_lookup(file, path, hname, &ph) == MR_OK && mr_h5_lookup(file, path, dname, &pd) == MR_OK && ph &&
            pd && strcmp(f.name, "data") != 0)
            found = 1;
        f.count = 0;
    }
    mr_clear_error();
    mr_h5_close(&grp);
    if (!found)
        return mr_error(MR_EFORMAT, "%s: no image in /dataset (a group with header and data)", path);
    mr_h5_dataset_info hi, di;
    if ((st = open_checked(file, path, hname, &hds, &hi)) != MR_OK || (st = open_checked(file, path, dname, &dds, &di)) != MR_OK)
        goto done;
    if (hi.rank != 1 || di.rank != 5 || hi.dims[0] != di.dims[0]) {
        st = mr_error(MR_EFORMAT, "%s: %s is not [n] or %s not [n][channels][z][y][x] of the same n", path, hname, dname);
        goto done;
    }
    ftype = H5Dget_type(dds);
    const H5T_class_t cls = ftype >= 0 ? H5Tget_class(ftype) : H5T_NO_CLASS;
    const int cplx = cls == H5T_COMPOUND;
    if (!cplx && cls != H5T_INTEGER && cls != H5T_FLOAT) {
        st = mr_error(MR_EFORMAT, "%s: %s has a datatype that is neither a number nor {real, imag}", path, dname);
        goto done;
    }
    if (cplx && (H5Tget_nmembers(ftype) != 2 || H5Tget_member_index(ftype, "real") < 0 ||
                 H5Tget_member_index(ftype, "imag") < 0)) {
        st = mr_error(MR_EFORMAT, "%s: %s is a compound other than {real, imag}", path, dname);
        goto done;
    }
    const int64_t m[3] = {(int64_t)di.dims[4], (int64_t)di.dims[3], (int64_t)di.dims[2]};
    char what[1100];
    snprintf(what, sizeof what, "%s: %s", path, dname);
    if ((st = mr_matrix_check(m, what)) != MR_OK)
        goto done;
    if (di.dims[1] != 1) {
        st = mr_error(MR_EFORMAT, "%s: %s has %llu channels (only single-channel images are converted)", path, dname,
                      (unsigned long long)di.dims[1]);
        goto done;
    }
    if (di.npoints > ((uint64_t)1 << 31)) {
        st = mr_error(MR_EFORMAT, "%s: %s holds %llu values (at most 2^31 are read)", path, dname,
                      (unsigned long long)di.npoints);
        goto done;
    }
    ht = read_header_type();
    heads = malloc((size_t)hi.npoints * sizeof *heads);
    ct = complex_type();
    buf = malloc((size_t)di.npoints * (cplx ? 2 : 1) * sizeof(float));
    if (!heads || !buf) {
        st = mr_error(MR_ENOMEM, "%s: out of memory for the MRD image", path);
        goto done;
    }
    if ((st = mr_h5_dataset_read(hds, &hi, path, hname, ht, heads)) != MR_OK ||
        (st = mr_h5_dataset_read(dds, &di, path, dname, cplx ? ct : H5T_NATIVE_FLOAT, buf)) != MR_OK)
        goto done;
    if (heads[0].matrix_size[0] != m[0] || heads[0].matrix_size[1] != m[1] || heads[0].matrix_size[2] != m[2]) {
        st = mr_error(MR_EFORMAT, "%s: the header's matrix_size %ux%ux%u differs from the data's %lldx%lldx%lld", path,
                      heads[0].matrix_size[0], heads[0].matrix_size[1], heads[0].matrix_size[2], (long long)m[0],
                      (long long)m[1], (long long)m[2]);
        goto done;
    }
    /* image 0 as complex [Nz][Ny][Nx][2] */
    const int64_t n = m[0] * m[1] * m[2];
    float *img = malloc((size_t)n * 2 * sizeof *img);
    if (!img) {
        st = mr_error(MR_ENOMEM, "%s: out of memory", path);
        goto done;
    }
    for (int64_t v = 0; v < n; v++) {
        img[2 * v] = cplx ? buf[2 * v] : buf[v];
        img[2 * v + 1] = cplx ? buf[2 * v + 1] : 0.0f;
    }
    const int64_t bad = mr_h5_first_nonfinite(img, (size_t)(2 * n));
    if (bad >= 0) {
        free(img);
        st = mr_error(MR_EFORMAT, "%s: %s: a value of voxel %lld is not finite", path, dname, (long long)(bad / 2));
        goto done;
    }
    for (int a = 0; a < 3; a++) {
        const float fov = heads[0].field_of_view[a];
        o->fov_mm[a] = isfinite(fov) && fov > 0 && fov < 1e6 ? fov : 0.0f;
        o->geometry->position[a] = heads[0].position[a];
        o->geometry->read_dir[a] = heads[0].read_dir[a];
        o->geometry->phase_dir[a] = heads[0].phase_dir[a];
        o->geometry->slice_dir[a] = heads[0].slice_dir[a];
    }
    memcpy(o->matrix, m, sizeof m);
    *o->nimages = (int)(di.dims[0] > 1000000 ? 1000000 : di.dims[0]);
    *o->img = img;
done:
    free(heads);
    free(buf);
    if (ftype >= 0)
        H5Tclose(ftype);
    if (ht >= 0)
        H5Tclose(ht);
    if (ct >= 0)
        H5Tclose(ct);
    mr_h5_close(&hds);
    mr_h5_close(&dds);
    return st;
}

/* The child's image to this process: matrix, count, FOV, placement, voxels; checked again here. */
static mr_status send_mrd(void *ctx, int fd)
{
    mrd_out *o = ctx;
    mr_status st = mr_pipe_put(fd, o->matrix, 3 * sizeof *o->matrix);
    if (st == MR_OK)
        st = mr_pipe_put(fd, o->nimages, sizeof *o->nimages);
    if (st == MR_OK)
        st = mr_pipe_put(fd, o->fov_mm, 3 * sizeof *o->fov_mm);
    if (st == MR_OK)
        st = mr_pipe_put(fd, o->geometry, sizeof *o->geometry);
    if (st == MR_OK)
        st = mr_pipe_put(fd, *o->img, (size_t)(o->matrix[0] * o->matrix[1] * o->matrix[2]) * 2 * sizeof(float));
    free(*o->img);
    *o->img = NULL;
    return st;
}

static mr_status recv_mrd(void *ctx, int fd, int file_fd, const char *label)
{
    (void)file_fd;
    mrd_out *o = ctx;
    int64_t m[3];
    int count = 0;
    float fov[3];
    mr_geometry g;
    char what[1100];
    snprintf(what, sizeof what, "%s: the MRD image", label);
    mr_status st = mr_pipe_get(fd, m, sizeof m);
    if (st == MR_OK)
        st = mr_pipe_get(fd, &count, sizeof count);
    if (st == MR_OK)
        st = mr_pipe_get(fd, fov, sizeof fov);
    if (st == MR_OK)
        st = mr_pipe_get(fd, &g, sizeof g);
    if (st == MR_OK && (st = mr_matrix_check(m, what)) == MR_OK && (count < 1 || count > 1000000))
        st = mr_error(MR_EINTERNAL, "%s: the reading process sent %d images", label, count);
    const float *vals[5] = {fov, g.position, g.read_dir, g.phase_dir, g.slice_dir};
    for (int k = 0; k < 5 && st == MR_OK; k++)
        for (int a = 0; a < 3; a++)
            if (!isfinite(vals[k][a])) {
                st = mr_error(MR_EINTERNAL, "%s: the reading process sent a non-finite geometry", label);
                break;
            }
    const size_t n = st == MR_OK ? (size_t)(m[0] * m[1] * m[2]) * 2 : 0;
    float *buf = NULL;
    if (st == MR_OK && (st = mr_mem_check(n * sizeof(float), what)) == MR_OK && !(buf = malloc(n * sizeof(float))))
        st = mr_error(MR_ENOMEM, "%s: out of memory for the image", label);
    if (st == MR_OK)
        st = mr_pipe_get(fd, buf, n * sizeof(float));
    for (size_t i = 0; st == MR_OK && i < n; i++)
        if (!isfinite(buf[i]))
            st = mr_error(MR_EINTERNAL, "%s: the reading process sent a non-finite value", label);
    if (st != MR_OK) {
        free(buf);
        return st;
    }
    memcpy(o->matrix, m, sizeof m);
    memcpy(o->fov_mm, fov, sizeof fov);
    *o->geometry = g;
    *o->nimages = count;
    *o->img = buf;
    return MR_OK;
}

static const mr_h5_isolated mrd_isolated = {read_mrd, send_mrd, recv_mrd, 0};

mr_status mr_mrd_image_read(const char *path, float **img, int64_t matrix[3], float fov_mm[3], mr_geometry *geometry,
                            int *has_geometry, int *nimages)
{
    *img = NULL;
    int count = 0;
    mrd_out o = {img, matrix, fov_mm, geometry, &count};
    mr_status st = mr_h5_read_path_in_child(path, &mrd_isolated, &o);
    if (st != MR_OK)
        return st;
    double dir[3][3];
    *has_geometry = mr_geometry_frame(geometry, dir) && !mr_geometry_is_default(geometry);
    if (nimages)
        *nimages = count;
    return MR_OK;
}

int mr_mrd_image_probe(hid_t file, const char *path)
{
    return mr_h5_exists(file, path, "/dataset") == 1 && mr_h5_exists(file, path, "/kspace") == 0 &&
           !(mr_h5_exists(file, path, "/dataset/data") == 1);
}
