/* Field maps from files of their own, geometry checks and resampling (fieldmap.h). */
#include "fieldmap.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../base/child.h"
#include "../base/log.h"
#include "../base/memory.h"
#include "h5util.h"

#define TWO_PI 6.283185307179586476925286766559

static const char *const unit_names[] = {"auto", "hz", "rad/s"};

const char *mr_field_units_name(mr_field_units u)
{
    return (unsigned)u <= MR_FIELD_UNITS_RAD_S ? unit_names[u] : "unknown";
}

mr_status mr_field_units_parse(const char *text, mr_field_units *u)
{
    for (int i = 0; text && i <= MR_FIELD_UNITS_RAD_S; i++)
        if (!strcmp(text, unit_names[i])) {
            *u = (mr_field_units)i;
            return MR_OK;
        }
    return mr_error(MR_EINVAL, "'%s' is not auto, hz or rad/s", text ? text : "(null)");
}

void mr_fieldmap_free(mr_fieldmap *f)
{
    if (!f)
        return;
    free(f->hz);
    free(f);
}

/* Units and finiteness of a map just read: values to Hz. */
static mr_status finish_values(mr_fieldmap *f, mr_field_units units)
{
    const int64_t n = f->matrix[0] * f->matrix[1] * f->matrix[2];
    for (int64_t v = 0; v < n; v++) {
        if (!isfinite(f->hz[v]))
            return mr_error(MR_EFORMAT, "%s: value %g at voxel %lld is not finite", f->source, (double)f->hz[v],
                            (long long)v);
        if (units == MR_FIELD_UNITS_RAD_S)
            f->hz[v] = (float)((double)f->hz[v] / TWO_PI);
    }
    return MR_OK;
}

/* ---- HDF5 ------------------------------------------------------------------------------------------ */

typedef struct {
    mr_field_units units;
    mr_fieldmap *out;
} h5_job;

static mr_status read_h5(hid_t file, const char *path, void *ctx)
{
    h5_job *job = ctx;
    mr_fieldmap *f = job->out;
    hid_t ds = H5I_INVALID_HID, grp = H5I_INVALID_HID;
    const char *name = "/kspace/fieldmap";
    int e = mr_h5_exists(file, path, name);
    if (e == 0) {
        name = "/fieldmap";
        e = mr_h5_exists(file, path, name);
    }
    if (e < 0)
        return MR_EIO;
    if (e == 0)
        return mr_error(MR_EFORMAT, "%s: no field map (neither /kspace/fieldmap nor /fieldmap)", path);
    snprintf(f->source, sizeof f->source, "%s:%s", path, name);
    hsize_t dims[3] = {1, 1, 1};
    int rank = 3;
    mr_status st = mr_h5_open_f32(file, path, name, 3, &ds, dims);
    if (st != MR_OK && !strcmp(name, "/fieldmap")) { /* [Ny][Nx] */
        mr_clear_error();
        rank = 2;
        st = mr_h5_open_f32(file, path, name, 2, &ds, dims + 1);
    }
    if (st != MR_OK)
        return st;
    for (int a = 0; a < 3; a++)
        f->matrix[a] = (int64_t)dims[2 - a];
    char what[1200];
    snprintf(what, sizeof what, "%s: %s", path, name);
    st = mr_matrix_check(f->matrix, what);
    /* the extent: the scan file's group attribute, or the dataset's own */
    const int in_scan = !strcmp(name, "/kspace/fieldmap");
    mr_field_units units = job->units;
    if (st == MR_OK && in_scan)
        st = mr_h5_open_group(file, path, "/kspace", &grp);
    int have_fov = 0;
    if (st == MR_OK) /* absent: unknown (0) */
        st = mr_h5_attr_read(in_scan ? grp : ds, path, in_scan ? "/kspace" : name, "fov_mm", H5T_FLOAT, H5T_NATIVE_FLOAT,
                             f->fov_mm, 3, &have_fov);
    for (int a = 0; a < 3 && st == MR_OK; a++)
        if (!isfinite(f->fov_mm[a]) || f->fov_mm[a] < 0)
            st = mr_error(MR_EFORMAT, "%s: attribute fov_mm[%d] = %g is not a finite number >= 0", what, a,
                          (double)f->fov_mm[a]);
    if (st == MR_OK && !in_scan) {
        char text[16] = "";
        int have = 0;
        st = mr_h5_attr_read_string(ds, path, name, "units", text, sizeof text, &have);
        if (st == MR_OK && have) {
            const mr_field_units stated = !strcmp(text, "Hz") || !strcmp(text, "hz") ? MR_FIELD_UNITS_HZ
                                          : !strcmp(text, "rad/s")                   ? MR_FIELD_UNITS_RAD_S
                                                                                     : MR_FIELD_UNITS_AUTO;
            if (stated == MR_FIELD_UNITS_AUTO)
                st = mr_error(MR_EFORMAT, "%s: attribute units = '%s' is not Hz or rad/s", what, text);
            else if (units == MR_FIELD_UNITS_AUTO)
                units = stated;
            else if (units != stated)
                st = mr_error(MR_EINVAL, "%s: the file says units = '%s' but %s was asked for", what, text,
                              mr_field_units_name(units));
        }
    }
    const int64_t n = f->matrix[0] * f->matrix[1] * f->matrix[2];
    free(f->hz);
    f->hz = NULL;
    if (st == MR_OK && !(f->hz = malloc((size_t)n * sizeof(float))))
        st = mr_error(MR_ENOMEM, "%s: out of memory for %lld voxels", what, (long long)n);
    if (st == MR_OK)
        st = mr_h5_read_f32(ds, path, name, rank, rank == 3 ? dims : dims + 1, f->hz);
    if (st == MR_OK)
        st = finish_values(f, units);
    mr_h5_close(&grp);
    mr_h5_close(&ds);
    return st;
}

/* The child's result to this process: the matrix, the extent, the source and the values (Hz). */
static mr_status send_h5(void *ctx, int fd)
{
    mr_fieldmap *f = ((h5_job *)ctx)->out;
    const size_t n = (size_t)(f->matrix[0] * f->matrix[1] * f->matrix[2]);
    mr_status st = mr_pipe_put(fd, f->matrix, sizeof f->matrix);
    if (st == MR_OK)
        st = mr_pipe_put(fd, f->fov_mm, sizeof f->fov_mm);
    if (st == MR_OK)
        st = mr_pipe_put(fd, f->source, sizeof f->source);
    if (st == MR_OK)
        st = mr_pipe_put(fd, f->hz, n * sizeof(float));
    free(f->hz);
    f->hz = NULL;
    return st;
}

static mr_status recv_h5(void *ctx, int fd, int file_fd, const char *label)
{
    (void)file_fd;
    mr_fieldmap *f = ((h5_job *)ctx)->out;
    mr_fieldmap got;
    memset(&got, 0, sizeof got);
    char what[1200];
    snprintf(what, sizeof what, "%s: the field map", label);
    mr_status st = mr_pipe_get(fd, got.matrix, sizeof got.matrix);
    if (st == MR_OK)
        st = mr_pipe_get(fd, got.fov_mm, sizeof got.fov_mm);
    if (st == MR_OK)
        st = mr_pipe_get(fd, got.source, sizeof got.source);
    if (st == MR_OK && (st = mr_matrix_check(got.matrix, what)) == MR_OK) {
        for (int a = 0; a < 3 && st == MR_OK; a++)
            if (!isfinite(got.fov_mm[a]) || got.fov_mm[a] < 0)
                st = mr_error(MR_EINTERNAL, "%s: the reading process sent an invalid extent", label);
        if (st == MR_OK && memchr(got.source, '\0', sizeof got.source) == NULL)
            st = mr_error(MR_EINTERNAL, "%s: the reading process sent an unterminated name", label);
    }
    const size_t n = st == MR_OK ? (size_t)(got.matrix[0] * got.matrix[1] * got.matrix[2]) : 0;
    if (st == MR_OK && (st = mr_mem_check(n * sizeof(float), what)) == MR_OK && !(got.hz = malloc(n * sizeof(float))))
        st = mr_error(MR_ENOMEM, "%s: out of memory for %zu voxels", what, n);
    if (st == MR_OK)
        st = mr_pipe_get(fd, got.hz, n * sizeof(float));
    for (size_t v = 0; st == MR_OK && v < n; v++)
        if (!isfinite(got.hz[v]))
            st = mr_error(MR_EINTERNAL, "%s: the reading process sent a non-finite value", label);
    if (st != MR_OK) {
        free(got.hz);
        return st;
    }
    free(f->hz);
    *f = got;
    return MR_OK;
}

static const mr_h5_isolated h5_isolated = {read_h5, send_h5, recv_h5, 0};

/* ---- NIfTI-1 --------------------------------------------------------------------------------------- */

static uint16_t rd16(const unsigned char *p, int swap)
{
    return swap ? (uint16_t)(p[0] << 8 | p[1]) : (uint16_t)(p[1] << 8 | p[0]);
}

static uint32_t rd32(const unsigned char *p, int swap)
{
    return swap ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
                : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static float rdf32(const unsigned char *p, int swap)
{
    const uint32_t b = rd32(p, swap);
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

/* One voxel of NIfTI datatype dt (bytes per voxel `size`) as double. */
static double nifti_value(const unsigned char *p, int dt, int swap)
{
    switch (dt) {
    case 2: /* uint8 */
        return p[0];
    case 256: /* int8 */
        return (signed char)p[0];
    case 4: /* int16 */
        return (int16_t)rd16(p, swap);
    case 512: /* uint16 */
        return rd16(p, swap);
    case 8: /* int32 */
        return (int32_t)rd32(p, swap);
    case 768: /* uint32 */
        return rd32(p, swap);
    case 16: /* float32 */
        return rdf32(p, swap);
    default: { /* 64: float64 */
        uint64_t b = 0;
        for (int i = 0; i < 8; i++)
            b |= (uint64_t)p[swap ? 7 - i : i] << (8 * i);
        double d;
        memcpy(&d, &b, sizeof d);
        return d;
    }
    }
}

static int nifti_bytes(int dt)
{
    switch (dt) {
    case 2:
    case 256:
        return 1;
    case 4:
    case 512:
        return 2;
    case 8:
    case 768:
    case 16:
        return 4;
    case 64:
        return 8;
    default:
        return 0;
    }
}

static mr_status read_nifti(const char *path, const unsigned char *h, FILE *fp, long long fsize,
                            mr_field_units units, mr_fieldmap *f)
{
    snprintf(f->source, sizeof f->source, "%s", path);
    const int swap = rd32(h, 0) != 348;
    int16_t dim[8];
    for (int i = 0; i < 8; i++)
        dim[i] = (int16_t)rd16(h + 40 + 2 * i, swap);
    const int dt = (int16_t)rd16(h + 70, swap), bytes = nifti_bytes(dt);
    if (dim[0] < 1 || dim[0] > 7)
        return mr_error(MR_EFORMAT, "%s: NIfTI dim[0] = %d is not 1..7", path, dim[0]);
    for (int i = 1; i <= dim[0]; i++)
        if (dim[i] < 1 || (i > 3 && dim[i] != 1))
            return mr_error(MR_EFORMAT, "%s: NIfTI dim[%d] = %d: a field map is one 2D or 3D volume", path, i, dim[i]);
    if (!bytes)
        return mr_error(MR_EFORMAT, "%s: NIfTI datatype %d is not an integer or float32/float64 type", path, dt);
    for (int a = 0; a < 3; a++)
        f->matrix[a] = a < dim[0] ? dim[a + 1] : 1;
    mr_status st = mr_matrix_check(f->matrix, path);
    if (st != MR_OK)
        return st;
    const int xyzt = h[123] & 7;
    const double unit_mm = xyzt == 1 ? 1000.0 : xyzt == 3 ? 1e-3 : 1.0; /* metres, microns; else mm */
    for (int a = 0; a < 3; a++) {
        const double pd = a < dim[0] ? fabs((double)rdf32(h + 76 + 4 * (a + 1), swap)) : 0.0;
        f->fov_mm[a] = isfinite(pd) && pd > 0 ? (float)(pd * unit_mm * (double)f->matrix[a]) : 0.0f;
    }
    const double off = rdf32(h + 108, swap);
    double slope = rdf32(h + 112, swap), inter = rdf32(h + 116, swap);
    if (!isfinite(slope) || slope == 0) { /* the standard's "no scaling" */
        slope = 1;
        inter = 0;
    }
    if (!isfinite(inter))
        inter = 0;
    const long long n = f->matrix[0] * f->matrix[1] * f->matrix[2];
    if (!isfinite(off) || off < 352 || off > 1e9 || (long long)off + n * bytes > fsize)
        return mr_error(MR_EFORMAT, "%s: NIfTI vox_offset %g and %lld voxels of %d bytes do not fit the %lld-byte file",
                        path, off, n, bytes, fsize);
    unsigned char *raw = malloc((size_t)(n * bytes));
    f->hz = malloc((size_t)n * sizeof(float));
    if (!raw || !f->hz) {
        free(raw);
        return mr_error(MR_ENOMEM, "%s: out of memory for %lld voxels", path, n);
    }
    if (fseek(fp, (long)off, SEEK_SET) != 0 || fread(raw, (size_t)bytes, (size_t)n, fp) != (size_t)n) {
        free(raw);
        return mr_error(MR_EIO, "%s: cannot read the %lld voxels: %s", path, n, strerror(errno));
    }
    for (long long v = 0; v < n; v++)
        f->hz[v] = (float)(slope * nifti_value(raw + v * bytes, dt, swap) + inter);
    free(raw);
    return finish_values(f, units == MR_FIELD_UNITS_AUTO ? MR_FIELD_UNITS_HZ : units);
}

mr_status mr_fieldmap_read(const char *path, mr_field_units units, mr_fieldmap **out)
{
    *out = NULL;
    mr_fieldmap *f = calloc(1, sizeof *f);
    if (!f)
        return mr_error(MR_ENOMEM, "field map: out of memory");
    FILE *fp = fopen(path, "rb");
    struct stat sb;
    unsigned char h[352];
    mr_status st = MR_OK;
    if (!fp || fstat(fileno(fp), &sb) != 0)
        st = mr_error(MR_EIO, "%s: cannot open: %s", path, strerror(errno));
    else if (!S_ISREG(sb.st_mode))
        st = mr_error(MR_EIO, "%s: not a regular file", path);
    const size_t got = st == MR_OK ? fread(h, 1, sizeof h, fp) : 0;
    static const unsigned char h5sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    if (st != MR_OK) {
    } else if (got >= 8 && !memcmp(h, h5sig, 8)) {
        fclose(fp);
        fp = NULL;
        h5_job job = {units, f};
        st = mr_h5_read_path_in_child(path, &h5_isolated, &job);
    } else if (got >= 348 && (rd32(h, 0) == 348 || rd32(h, 1) == 348) && !memcmp(h + 344, "n+1", 4)) {
        st = read_nifti(path, h, fp, (long long)sb.st_size, units, f);
    } else if (got >= 2 && h[0] == 0x1f && h[1] == 0x8b) {
        st = mr_error(MR_EFORMAT, "%s: a gzip file: decompress a .nii.gz first (gunzip)", path);
    } else {
        st = mr_error(MR_EFORMAT, "%s: neither HDF5 nor a single-file NIfTI-1 image (.nii, magic \"n+1\")", path);
    }
    if (fp)
        fclose(fp);
    if (st != MR_OK) {
        mr_fieldmap_free(f);
        return st;
    }
    *out = f;
    return MR_OK;
}

/* ---- on a scan -------------------------------------------------------------------------------------- */

mr_status mr_kspace_check_field(const mr_kspace *ks, const char *scan_label)
{
    if (ks->fieldmap && ks->time)
        return MR_OK;
    if (!ks->fieldmap)
        return mr_error(MR_EINVAL, "%s: no field map (/kspace/fieldmap; or give one from a file of its own)",
                        scan_label);
    return mr_error(MR_EINVAL, "%s: has a field map but no readout times (/kspace/time or the readout_* attributes; "
                               "from ISMRMRD: sample_time_us and the header's TE): off-resonance cannot be corrected",
                    scan_label);
}

/* Trilinear weights along one axis: the map's continuous index of the scan's voxel i. */
static void axis_weights(int64_t i, int64_t n_scan, int64_t n_map, int64_t *i0, int64_t *i1, double *w)
{
    if (n_map == 1) {
        *i0 = *i1 = 0;
        *w = 0;
        return;
    }
    const double r = (double)(i - n_scan / 2) / (double)n_scan; /* FOV units */
    double u = r * (double)n_map + (double)(n_map / 2);
    u = u < 0 ? 0 : u > (double)(n_map - 1) ? (double)(n_map - 1) : u;
    *i0 = (int64_t)floor(u);
    *i1 = *i0 + 1 < n_map ? *i0 + 1 : *i0;
    *w = u - (double)*i0;
}

mr_status mr_fieldmap_attach(mr_kspace *ks, const char *scan_label, const mr_fieldmap *fm)
{
    if (!ks->time)
        return mr_error(MR_EINVAL, "%s: no readout times (/kspace/time or the readout_* attributes; from ISMRMRD: "
                                   "sample_time_us and the header's TE): the field map %s cannot be used",
                        scan_label, fm->source);
    if (ks->matrix[2] == 1 && fm->matrix[2] > 1)
        return mr_error(MR_EINVAL, "%s: a 3D field map (%lldx%lldx%lld) for the 2D scan %s: give the slice's map",
                        fm->source, (long long)fm->matrix[0], (long long)fm->matrix[1], (long long)fm->matrix[2],
                        scan_label);
    for (int a = 0; a < 3; a++)
        if (fm->fov_mm[a] > 0 && ks->fov_mm[a] > 0 && ks->matrix[a] > 1 &&
            fabs((double)fm->fov_mm[a] - ks->fov_mm[a]) > 0.01 * ks->fov_mm[a])
            return mr_error(MR_EINVAL, "%s covers %g mm along %c but the scan %s has a field of view of %g mm: the "
                                       "field map must cover the scan's FOV (within 1 %%)",
                            fm->source, (double)fm->fov_mm[a], "xyz"[a], scan_label, (double)ks->fov_mm[a]);
    const int64_t n = mr_kspace_voxels(ks);
    float *hz = malloc((size_t)n * sizeof(float));
    if (!hz)
        return mr_error(MR_ENOMEM, "%s: out of memory for the field map", scan_label);
    const int same = fm->matrix[0] == ks->matrix[0] && fm->matrix[1] == ks->matrix[1] && fm->matrix[2] == ks->matrix[2];
    if (same)
        memcpy(hz, fm->hz, (size_t)n * sizeof(float));
    else {
        mr_log(MR_LOG_INFO, "field map %s: resampled from %lldx%lldx%lld to the scan's %lldx%lldx%lld (trilinear)",
               fm->source, (long long)fm->matrix[0], (long long)fm->matrix[1], (long long)fm->matrix[2],
               (long long)ks->matrix[0], (long long)ks->matrix[1], (long long)ks->matrix[2]);
#pragma omp parallel for schedule(static)
        for (int64_t v = 0; v < n; v++) {
            const int64_t idx[3] = {v % ks->matrix[0], (v / ks->matrix[0]) % ks->matrix[1],
                                    v / (ks->matrix[0] * ks->matrix[1])};
            int64_t lo[3], hi[3];
            double w[3];
            for (int a = 0; a < 3; a++)
                axis_weights(idx[a], ks->matrix[a], fm->matrix[a], &lo[a], &hi[a], &w[a]);
            double s = 0;
            for (int c = 0; c < 8; c++) {
                const int64_t x = c & 1 ? hi[0] : lo[0], y = c & 2 ? hi[1] : lo[1], z = c & 4 ? hi[2] : lo[2];
                const double wt = (c & 1 ? w[0] : 1 - w[0]) * (c & 2 ? w[1] : 1 - w[1]) * (c & 4 ? w[2] : 1 - w[2]);
                s += wt * (double)fm->hz[(z * fm->matrix[1] + y) * fm->matrix[0] + x];
            }
            hz[v] = (float)s;
        }
    }
    if (ks->fieldmap)
        mr_log(MR_LOG_INFO, "%s: its field map is replaced by %s", scan_label, fm->source);
    free(ks->fieldmap);
    ks->fieldmap = hz;
    return MR_OK;
}

static void range_of(const float *v, int64_t n, double *lo, double *hi)
{
    *lo = *hi = 0;
    if (!v)
        return;
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        *lo = fmin(*lo, v[i]);
        *hi = fmax(*hi, v[i]);
    }
}

void mr_kspace_field_range(const mr_kspace *ks, double *fmin, double *fmax, double *tmin, double *tmax)
{
    range_of(ks->fieldmap, mr_kspace_voxels(ks), fmin, fmax);
    range_of(ks->time, ks->nsamples, tmin, tmax);
}
