/* NIfTI-1 writer (see nifti.h). Field offsets are those of nifti1.h's struct nifti_1_header; every
 * field is written explicitly in little-endian byte order, so the file does not depend on the
 * compiler's struct layout or the machine's byte order. */
#include "nifti.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"

#define NIFTI_DT_FLOAT32 16
#define NIFTI_DT_COMPLEX64 32
#define NIFTI_UNITS_MM 2
#define NIFTI_XFORM_SCANNER_ANAT 1
#define NIFTI_XFORM_ALIGNED_ANAT 2

static void put_i16(unsigned char *h, int off, int v)
{
    h[off] = (unsigned char)(v & 0xff);
    h[off + 1] = (unsigned char)((v >> 8) & 0xff);
}

static void put_i32(unsigned char *h, int off, int32_t v)
{
    uint32_t u = (uint32_t)v;
    for (int i = 0; i < 4; i++)
        h[off + i] = (unsigned char)((u >> (8 * i)) & 0xff);
}

static void put_f32(unsigned char *h, int off, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    put_i32(h, off, (int32_t)u);
}

/* |re + i im| of float parts: the products are exact in double and cannot overflow, so no hypot (whose
 * scaling makes it the slowest step of the writer) is needed; within an ulp of the float hypot. */
static float magnitude(const float *p) { return (float)sqrt((double)p[0] * p[0] + (double)p[1] * p[1]); }

/* The LPS affine (io/geometry.h; the default geometry without one) as RAS: rows x and y negated. The
 * direction columns (RAS) go to the qform. Returns whether the geometry was given and usable. */
static int make_affine(const int64_t matrix[3], const float fov_mm[3], const mr_geometry *g, double A[3][4],
                       double dir[3][3])
{
    const int known = mr_geometry_affine(matrix, fov_mm, g, A);
    mr_geometry_frame(known ? g : NULL, dir);
    for (int i = 0; i < 2; i++) /* LPS -> RAS */
        for (int j = 0; j < 4; j++) {
            A[i][j] = -A[i][j];
            if (j < 3)
                dir[i][j] = -dir[i][j];
        }
    return known;
}

void mr_nifti_affine(const int64_t matrix[3], const float fov_mm[3], const mr_geometry *geometry, double affine[3][4])
{
    double dir[3][3];
    make_affine(matrix, fov_mm, geometry, affine, dir);
}

/* Quaternion (b, c, d) and qfac of a rotation with orthonormal columns r (NIfTI-1 qform). */
static void quaternion(double r[3][3], double q[3], double *qfac)
{
    double det = r[0][0] * (r[1][1] * r[2][2] - r[1][2] * r[2][1]) - r[0][1] * (r[1][0] * r[2][2] - r[1][2] * r[2][0]) +
                 r[0][2] * (r[1][0] * r[2][1] - r[1][1] * r[2][0]);
    *qfac = 1.0;
    if (det < 0) {
        *qfac = -1.0;
        for (int i = 0; i < 3; i++)
            r[i][2] = -r[i][2];
    }
    double a = r[0][0] + r[1][1] + r[2][2] + 1.0, b, c, d;
    if (a > 0.5) {
        a = 0.5 * sqrt(a);
        b = 0.25 * (r[2][1] - r[1][2]) / a;
        c = 0.25 * (r[0][2] - r[2][0]) / a;
        d = 0.25 * (r[1][0] - r[0][1]) / a;
    } else {
        double xd = 1.0 + r[0][0] - (r[1][1] + r[2][2]), yd = 1.0 + r[1][1] - (r[0][0] + r[2][2]),
               zd = 1.0 + r[2][2] - (r[0][0] + r[1][1]);
        if (xd > 1.0) {
            b = 0.5 * sqrt(xd);
            c = 0.25 * (r[0][1] + r[1][0]) / b;
            d = 0.25 * (r[0][2] + r[2][0]) / b;
            a = 0.25 * (r[2][1] - r[1][2]) / b;
        } else if (yd > 1.0) {
            c = 0.5 * sqrt(yd);
            b = 0.25 * (r[0][1] + r[1][0]) / c;
            d = 0.25 * (r[1][2] + r[2][1]) / c;
            a = 0.25 * (r[0][2] - r[2][0]) / c;
        } else {
            d = 0.5 * sqrt(zd);
            b = 0.25 * (r[0][2] + r[2][0]) / d;
            c = 0.25 * (r[1][2] + r[2][1]) / d;
            a = 0.25 * (r[1][0] - r[0][1]) / d;
        }
        if (a < 0) {
            b = -b;
            c = -c;
            d = -d;
        }
    }
    q[0] = b;
    q[1] = c;
    q[2] = d;
}

mr_status mr_nifti_write_geometry(const char *path, const float *img, const int64_t matrix[3], const float fov_mm[3],
                                  mr_nifti_kind kind, const mr_geometry *geometry, const char *description)
{
    for (int a = 0; a < 3; a++)
        if (matrix[a] < 1 || matrix[a] > 32767)
            return mr_error(MR_EINVAL, "%s: matrix edge %lld cannot be stored in NIfTI-1 (1..32767)", path,
                            (long long)matrix[a]);
    if (fov_mm)
        for (int a = 0; a < 3; a++)
            if (!isfinite(fov_mm[a]) || fov_mm[a] < 0)
                return mr_error(MR_EINVAL, "%s: fov_mm[%d] = %g", path, a, (double)fov_mm[a]);
    if (description && strlen(description) > 79)
        return mr_error(MR_EINVAL, "%s: description longer than 79 characters", path);
    const int64_t n = matrix[0] * matrix[1] * matrix[2];
    const int cplx = kind == MR_NIFTI_COMPLEX;
    double A[3][4], dir[3][3], d[3], q[3], qfac;
    const int known = make_affine(matrix, fov_mm, geometry, A, dir);
    mr_voxel_size_mm(matrix, fov_mm, d);
    quaternion(dir, q, &qfac);

    unsigned char h[MR_NIFTI_VOX_OFFSET];
    memset(h, 0, sizeof h);
    put_i32(h, 0, MR_NIFTI_HEADER_BYTES); /* sizeof_hdr */
    h[38] = 'r';                          /* regular */
    h[39] = known ? (unsigned char)(1 | (2 << 2) | (3 << 4)) : 0; /* dim_info: freq x, phase y, slice z */
    put_i16(h, 40, 3);                                             /* dim[0] */
    for (int a = 0; a < 3; a++)
        put_i16(h, 42 + 2 * a, (int)matrix[a]);
    for (int a = 3; a < 7; a++)
        put_i16(h, 42 + 2 * a, 1);
    put_i16(h, 70, cplx ? NIFTI_DT_COMPLEX64 : NIFTI_DT_FLOAT32); /* datatype */
    put_i16(h, 72, cplx ? 64 : 32);                               /* bitpix */
    put_f32(h, 76, (float)qfac);                                  /* pixdim[0] */
    for (int a = 0; a < 3; a++)
        put_f32(h, 80 + 4 * a, (float)d[a]);
    for (int a = 3; a < 7; a++)
        put_f32(h, 80 + 4 * a, 1.0f);
    put_f32(h, 108, (float)MR_NIFTI_VOX_OFFSET); /* vox_offset */
    put_f32(h, 112, 0.0f);                       /* scl_slope 0: no scaling */
    put_f32(h, 116, 0.0f);                       /* scl_inter */
    h[123] = NIFTI_UNITS_MM;                     /* xyzt_units */
    if (!cplx) {                                 /* display range [0, max] */
        double mx = 0;
        for (int64_t v = 0; v < n; v++)
            mx = fmax(mx, magnitude(img + 2 * v));
        put_f32(h, 124, (float)mx); /* cal_max */
        put_f32(h, 128, 0.0f);      /* cal_min */
    }
    char descr[80];
    snprintf(descr, sizeof descr, "%s", description ? description : "mrirecon " MR_VERSION);
    memcpy(h + 148, descr, strlen(descr));
    const int code = known ? NIFTI_XFORM_SCANNER_ANAT : NIFTI_XFORM_ALIGNED_ANAT;
    put_i16(h, 252, code); /* qform_code */
    put_i16(h, 254, code); /* sform_code */
    for (int i = 0; i < 3; i++) {
        put_f32(h, 256 + 4 * i, (float)q[i]);     /* quatern_b, c, d */
        put_f32(h, 268 + 4 * i, (float)A[i][3]);  /* qoffset_x, y, z */
        for (int j = 0; j < 4; j++)
            put_f32(h, 280 + 16 * i + 4 * j, (float)A[i][j]); /* srow_x, y, z */
    }
    memcpy(h + 344, "n+1", 4); /* magic, NUL-terminated; bytes 348..351: no extension */

    char tmp[4200];
    FILE *f;
    mr_status st = mr_open_tmp(path, tmp, sizeof tmp, &f);
    if (st != MR_OK)
        return st;
    int ok = fwrite(h, 1, sizeof h, f) == sizeof h;
    /* voxels in chunks, little endian */
    enum { CHUNK = 4096 };
    unsigned char buf[CHUNK * 8];
    for (int64_t v0 = 0; ok && v0 < n; v0 += CHUNK) {
        int64_t k = n - v0 < CHUNK ? n - v0 : CHUNK;
        for (int64_t i = 0; i < k; i++) {
            const float *p = img + 2 * (v0 + i);
            if (cplx) {
                put_f32(buf, (int)(8 * i), p[0]);
                put_f32(buf, (int)(8 * i + 4), p[1]);
            } else {
                put_f32(buf, (int)(4 * i), magnitude(p));
            }
        }
        size_t bytes = (size_t)k * (cplx ? 8 : 4);
        ok = fwrite(buf, 1, bytes, f) == bytes;
    }
    if (!ok) {
        fclose(f);
        remove(tmp);
        return mr_error(MR_EIO, "%s: write failed", path);
    }
    return mr_close_commit(f, tmp, path);
}

mr_status mr_nifti_write(const char *path, const float *img, const int64_t matrix[3], const float fov_mm[3],
                         mr_nifti_kind kind)
{
    return mr_nifti_write_geometry(path, img, matrix, fov_mm, kind, NULL, NULL);
}
