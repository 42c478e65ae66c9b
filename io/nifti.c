/* NIfTI-1 writer (see nifti.h). Field offsets are those of nifti1.h's struct nifti_1_header; every
 * field is written explicitly in little-endian byte order, so the file does not depend on the
 * compiler's struct layout or the machine's byte order. */
#include "nifti.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/grid.h"
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

/* ---- reading (mrirecon convert: images from other tools) ------------------------------------- */

typedef struct {
    const unsigned char *h;
    int swap; /* the file's byte order is the other one */
} nifti_hdr;

static uint32_t get_u32(const nifti_hdr *n, int off)
{
    const unsigned char *p = n->h + off;
    return n->swap ? (uint32_t)p[3] | (uint32_t)p[2] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[0] << 24
                   : (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int get_i16(const nifti_hdr *n, int off)
{
    const unsigned char *p = n->h + off;
    return (int16_t)(n->swap ? (uint16_t)(p[1] | p[0] << 8) : (uint16_t)(p[0] | p[1] << 8));
}

static float get_f32(const nifti_hdr *n, int off)
{
    uint32_t u = get_u32(n, off);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* One voxel value from raw bytes of `bytes` per component in the file's order: (re, im). */
static void get_voxel(const unsigned char *p, int dtype, int swap, double *re, double *im)
{
    unsigned char b[16];
    const int comp = dtype == 32 ? 4 : dtype == 1792 ? 8 : 0; /* complex component size */
    const int size = comp ? comp : dtype == 2 || dtype == 256 ? 1 : dtype == 4 || dtype == 512 ? 2 : dtype == 64 ? 8 : 4;
    const int parts = comp ? 2 : 1;
    double v[2] = {0, 0};
    for (int k = 0; k < parts; k++) {
        for (int i = 0; i < size; i++)
            b[i] = p[k * size + (swap ? size - 1 - i : i)];
        switch (dtype) {
        case 2: v[k] = b[0]; break;
        case 256: v[k] = (int8_t)b[0]; break;
        case 4: { int16_t x; memcpy(&x, b, 2); v[k] = x; break; }
        case 512: { uint16_t x; memcpy(&x, b, 2); v[k] = x; break; }
        case 8: { int32_t x; memcpy(&x, b, 4); v[k] = x; break; }
        case 768: { uint32_t x; memcpy(&x, b, 4); v[k] = x; break; }
        case 16: case 32: { float x; memcpy(&x, b, 4); v[k] = x; break; }
        default: { double x; memcpy(&x, b, 8); v[k] = x; break; } /* 64, 1792 */
        }
    }
    *re = v[0];
    *im = v[1];
}

static int dtype_bytes(int dtype)
{
    switch (dtype) {
    case 2: case 256: return 1;
    case 4: case 512: return 2;
    case 8: case 768: case 16: return 4;
    case 32: case 64: return 8;
    case 1792: return 16;
    default: return 0;
    }
}

/* The placement from the sform (preferred) or the qform, RAS -> LPS; 0 when neither is set. */
static int read_placement(const nifti_hdr *n, const int64_t m[3], double pix[3], mr_geometry *g)
{
    double A[3][4];
    if (get_i16(n, 254) > 0) {
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 4; j++)
                A[i][j] = get_f32(n, 280 + 16 * i + 4 * j);
    } else if (get_i16(n, 252) > 0) {
        double b = get_f32(n, 256), c = get_f32(n, 260), d = get_f32(n, 264);
        double a = sqrt(fmax(0.0, 1.0 - (b * b + c * c + d * d)));
        const double qfac = get_f32(n, 76) < 0 ? -1.0 : 1.0;
        const double R[3][3] = {{a * a + b * b - c * c - d * d, 2 * (b * c - a * d), 2 * (b * d + a * c)},
                                {2 * (b * c + a * d), a * a + c * c - b * b - d * d, 2 * (c * d - a * b)},
                                {2 * (b * d - a * c), 2 * (c * d + a * b), a * a + d * d - c * c - b * b}};
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++)
                A[i][j] = R[i][j] * pix[j] * (j == 2 ? qfac : 1.0);
            A[i][3] = get_f32(n, 268 + 4 * i);
        }
    } else {
        return 0;
    }
    float *dirs[3] = {g->read_dir, g->phase_dir, g->slice_dir};
    for (int j = 0; j < 3; j++) {
        const double len = sqrt(A[0][j] * A[0][j] + A[1][j] * A[1][j] + A[2][j] * A[2][j]);
        if (!(len > 0) || !isfinite(len))
            return 0;
        pix[j] = len;
        for (int i = 0; i < 3; i++)
            dirs[j][i] = (float)((i < 2 ? -1.0 : 1.0) * A[i][j] / len);
    }
    for (int i = 0; i < 3; i++) { /* the point of voxel N/2 */
        double p = A[i][3];
        for (int j = 0; j < 3; j++)
            p += A[i][j] * (double)(m[j] / 2);
        g->position[i] = (float)((i < 2 ? -1.0 : 1.0) * p);
    }
    return 1;
}

mr_status mr_nifti_read(const char *path, float **img, int64_t matrix[3], float fov_mm[3], mr_geometry *geometry,
                        int *has_geometry)
{
    *img = NULL;
    *has_geometry = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return mr_error(MR_EIO, "%s: cannot open", path);
    unsigned char h[MR_NIFTI_VOX_OFFSET];
    mr_status st = MR_OK;
    unsigned char *raw = NULL;
    float *out = NULL;
    if (fread(h, 1, MR_NIFTI_HEADER_BYTES, f) != MR_NIFTI_HEADER_BYTES) {
        st = mr_error(MR_EFORMAT, "%s: shorter than a NIfTI-1 header (348 bytes)", path);
        goto done;
    }
    nifti_hdr n = {h, 0};
    if (get_u32(&n, 0) != 348) {
        n.swap = 1;
        if (get_u32(&n, 0) != 348) {
            st = mr_error(MR_EFORMAT, "%s: not a NIfTI-1 file (sizeof_hdr is not 348)", path);
            goto done;
        }
    }
    if (memcmp(h + 344, "n+1", 4) != 0) {
        st = mr_error(MR_EFORMAT, "%s: not a single-file NIfTI-1 image (magic '%.3s'; .hdr/.img pairs are not read)",
                      path, (const char *)(h + 344));
        goto done;
    }
    const int ndim = get_i16(&n, 40);
    if (ndim < 2 || ndim > 7) {
        st = mr_error(MR_EFORMAT, "%s: dim[0] = %d (expected 2..7)", path, ndim);
        goto done;
    }
    int64_t m[3] = {1, 1, 1};
    for (int a = 1; a <= ndim; a++) {
        const int v = get_i16(&n, 40 + 2 * a);
        if (v < 1) {
            st = mr_error(MR_EFORMAT, "%s: dim[%d] = %d", path, a, v);
            goto done;
        }
        if (a <= 3)
            m[a - 1] = v;
        else if (v != 1) {
            st = mr_error(MR_EFORMAT, "%s: dim[%d] = %d: a series of volumes (only 3D images are converted)", path, a,
                          v);
            goto done;
        }
    }
    if ((st = mr_matrix_check(m, path)) != MR_OK)
        goto done;
    const int dtype = get_i16(&n, 70), bytes = dtype_bytes(dtype);
    if (!bytes) {
        st = mr_error(MR_EFORMAT, "%s: datatype %d is not read (integers, float32/64, complex64/128)", path, dtype);
        goto done;
    }
    const double off = get_f32(&n, 108);
    if (!(off >= 348) || off > 1e12 || off != floor(off)) {
        st = mr_error(MR_EFORMAT, "%s: vox_offset %g", path, off);
        goto done;
    }
    const int64_t nv = m[0] * m[1] * m[2];
    if (fseeko(f, 0, SEEK_END) != 0 || ftello(f) < (off_t)off + (off_t)nv * bytes) {
        st = mr_error(MR_EFORMAT, "%s: holds fewer bytes than its %lldx%lldx%lld voxels of %d bytes need", path,
                      (long long)m[0], (long long)m[1], (long long)m[2], bytes);
        goto done;
    }
    raw = malloc((size_t)nv * (size_t)bytes);
    out = malloc((size_t)nv * 2 * sizeof(float));
    if (!raw || !out) {
        st = mr_error(MR_ENOMEM, "%s: out of memory for %lld voxels", path, (long long)nv);
        goto done;
    }
    if (fseeko(f, (off_t)off, SEEK_SET) != 0 || fread(raw, (size_t)bytes, (size_t)nv, f) != (size_t)nv) {
        st = mr_error(MR_EIO, "%s: read failed", path);
        goto done;
    }
    double slope = get_f32(&n, 112), inter = get_f32(&n, 116);
    if (!(slope != 0) || !isfinite(slope) || !isfinite(inter)) { /* 0 or NaN: no scaling (NIfTI-1) */
        slope = 1;
        inter = 0;
    }
    for (int64_t v = 0; v < nv; v++) {
        double re, im;
        get_voxel(raw + v * bytes, dtype, n.swap, &re, &im);
        re = re * slope + inter;
        im *= slope;
        if (!isfinite(re) || !isfinite(im) || fabs(re) > 3e38 || fabs(im) > 3e38) {
            st = mr_error(MR_EFORMAT, "%s: voxel %lld is not a finite float32 value", path, (long long)v);
            goto done;
        }
        out[2 * v] = (float)re;
        out[2 * v + 1] = (float)im;
    }
    double pix[3];
    for (int a = 0; a < 3; a++) {
        pix[a] = fabs(get_f32(&n, 80 + 4 * a));
        if (!(pix[a] > 0) || !isfinite(pix[a]))
            pix[a] = 0;
    }
    const double unit = (h[123] & 7) == 1 ? 1000.0 : (h[123] & 7) == 3 ? 0.001 : 1.0; /* m, mm, um */
    *has_geometry = read_placement(&n, m, pix, geometry);
    if (*has_geometry && get_i16(&n, 254) != 1 && get_i16(&n, 252) != 1)
        *has_geometry = !mr_geometry_is_default(geometry); /* not placed in the scanner: only when it says more */
    for (int a = 0; a < 3; a++)
        fov_mm[a] = (float)(pix[a] * unit * (double)m[a]);
    if (*has_geometry && unit != 1.0)
        for (int i = 0; i < 3; i++)
            geometry->position[i] = (float)(geometry->position[i] * unit);
    memcpy(matrix, m, sizeof m);
    *img = out;
    out = NULL;
done:
    fclose(f);
    free(raw);
    free(out);
    return st;
}
