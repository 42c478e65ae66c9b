/* Test helper: read a NIfTI-1 file back byte by byte at the offsets of the standard (nifti1.h) and
 * check it against the image it was written from (header, placement, qform vs sform, voxels), and
 * with libniftiio where the test is built with it (MR_HAVE_NIFTILIB; Debian libnifti2-dev).
 * Header-only: each test is its own program. Used by test_io_nifti and the reconstruction tests. */
#ifndef MR_NIFTI_TESTUTIL_H
#define MR_NIFTI_TESTUTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/geometry.h"
#include "testutil.h"

#ifdef MR_HAVE_NIFTILIB
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nifti1_io.h>
#pragma GCC diagnostic pop
#endif

static inline unsigned char *nifti_slurp(const char *path, long *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    *size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)*size);
    if (b && fread(b, 1, (size_t)*size, f) != (size_t)*size) {
        free(b);
        b = NULL;
    }
    fclose(f);
    return b;
}

static inline int nifti_i16(const unsigned char *h, int off)
{
    return (int16_t)(h[off] | (h[off + 1] << 8));
}
static inline int32_t nifti_i32(const unsigned char *h, int off)
{
    return (int32_t)((uint32_t)h[off] | ((uint32_t)h[off + 1] << 8) | ((uint32_t)h[off + 2] << 16) |
                     ((uint32_t)h[off + 3] << 24));
}
static inline float nifti_f32(const unsigned char *h, int off)
{
    uint32_t u = (uint32_t)nifti_i32(h, off);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* world (RAS) of voxel (i, j, k) from the header's srows */
static inline void nifti_sform_apply(const unsigned char *h, const double ijk[3], double xyz[3])
{
    for (int r = 0; r < 3; r++) {
        xyz[r] = nifti_f32(h, 280 + 16 * r + 12);
        for (int c = 0; c < 3; c++)
            xyz[r] += nifti_f32(h, 280 + 16 * r + 4 * c) * ijk[c];
    }
}

/* path must hold img [n][2] (complex; magnitude files: |img| as float32) with voxel size fov/n
 * (1 mm without a FOV) and, with g, the scanner placement; else the default placement (io/geometry.h). */
static inline void nifti_check_file(const char *path, const float *img, const int64_t n[3], const float fov[3],
                                    int cplx, const mr_geometry *g)
{
    long size = 0;
    unsigned char *b = nifti_slurp(path, &size);
    CHECK(b != NULL);
    if (!b)
        return;
    const int64_t nv = n[0] * n[1] * n[2];
    const int bytes = cplx ? 8 : 4;
    CHECK(size == 352 + nv * bytes);
    CHECK(nifti_i32(b, 0) == 348);
    CHECK(memcmp(b + 344, "n+1", 4) == 0);
    CHECK(nifti_i16(b, 40) == 3 && nifti_i16(b, 42) == n[0] && nifti_i16(b, 44) == n[1] && nifti_i16(b, 46) == n[2]);
    CHECK(nifti_i16(b, 70) == (cplx ? 32 : 16) && nifti_i16(b, 72) == 8 * bytes);
    CHECK(nifti_f32(b, 108) == 352.0f);
    CHECK((b[123] & 7) == 2); /* mm */
    double d[3];
    for (int a = 0; a < 3; a++) {
        d[a] = fov && fov[a] > 0 ? (double)fov[a] / (double)n[a] : 1.0;
        CHECK_LE("pixdim vs FOV/N", fabs(nifti_f32(b, 80 + 4 * a) - d[a]), 1e-6 * d[a]);
    }
    const int code = g ? 1 : 2;
    CHECK(nifti_i16(b, 252) == code && nifti_i16(b, 254) == code);
    /* placement: voxel N/2 at the position (RAS), one step along axis a = direction * d[a]; without a
     * geometry the default one (io/geometry.h): x -> patient left, y -> posterior, z -> head, i.e. RAS
     * directions (-1, 0, 0), (0, -1, 0), (0, 0, 1) (docs/FORMAT.md, Orientation) */
    double pos[3] = {0, 0, 0}, dirs[3][3] = {{-1, 0, 0}, {0, -1, 0}, {0, 0, 1}};
    if (g)
        for (int i = 0; i < 3; i++) {
            const double flip = i < 2 ? -1 : 1;
            pos[i] = flip * g->position[i];
            dirs[0][i] = flip * g->read_dir[i];
            dirs[1][i] = flip * g->phase_dir[i];
            dirs[2][i] = flip * g->slice_dir[i];
        }
    double c[3] = {(double)(n[0] / 2), (double)(n[1] / 2), (double)(n[2] / 2)}, w[3];
    nifti_sform_apply(b, c, w);
    double err = 0;
    for (int i = 0; i < 3; i++)
        err = fmax(err, fabs(w[i] - pos[i]));
    CHECK_LE("centre voxel vs position (mm)", err, 1e-4);
    for (int a = 0; a < 3; a++) {
        double c1[3] = {c[0], c[1], c[2]}, w1[3];
        c1[a] += 1;
        nifti_sform_apply(b, c1, w1);
        double e = 0;
        for (int i = 0; i < 3; i++)
            e = fmax(e, fabs(w1[i] - w[i] - dirs[a][i] * d[a]));
        CHECK_LE("voxel step vs direction * size (mm)", e, 1e-5);
    }
    /* qform: R(b, c, d) * diag(d) * diag(1, 1, qfac) must equal the sform's 3x3 part */
    const double qb = nifti_f32(b, 256), qc = nifti_f32(b, 260), qd = nifti_f32(b, 264), qfac = nifti_f32(b, 76) < 0 ? -1 : 1;
    const double qa = sqrt(fmax(0, 1 - (qb * qb + qc * qc + qd * qd)));
    const double R[3][3] = {{qa * qa + qb * qb - qc * qc - qd * qd, 2 * (qb * qc - qa * qd), 2 * (qb * qd + qa * qc)},
                            {2 * (qb * qc + qa * qd), qa * qa + qc * qc - qb * qb - qd * qd, 2 * (qc * qd - qa * qb)},
                            {2 * (qb * qd - qa * qc), 2 * (qc * qd + qa * qb), qa * qa + qd * qd - qc * qc - qb * qb}};
    double qerr = 0;
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++)
            qerr = fmax(qerr, fabs(R[i][j] * d[j] * (j == 2 ? qfac : 1) - nifti_f32(b, 280 + 16 * i + 4 * j)));
        qerr = fmax(qerr, fabs(nifti_f32(b, 268 + 4 * i) - nifti_f32(b, 280 + 16 * i + 12)));
    }
    CHECK_LE("qform (quaternion) vs sform, relative to the voxel size", qerr / fmax(d[0], fmax(d[1], d[2])), 1e-6);
    /* voxels */
    int64_t bad = -1;
    for (int64_t v = 0; v < nv && bad < 0; v++) {
        const float *p = img + 2 * v;
        if (cplx) {
            if (nifti_f32(b, (int)(352 + 8 * v)) != p[0] || nifti_f32(b, (int)(352 + 8 * v + 4)) != p[1])
                bad = v;
        } else { /* the magnitude to within one float rounding (the writer's formula is not hypot's) */
            const double h = hypot(p[0], p[1]);
            if (!(fabs((double)nifti_f32(b, (int)(352 + 4 * v)) - h) <= 0x1p-23 * h))
                bad = v;
        }
    }
    CHECK(bad < 0);
    if (bad >= 0)
        fprintf(stderr, "%s: voxel %lld differs\n", path, (long long)bad);
#ifdef MR_HAVE_NIFTILIB
    nifti_image *nim = nifti_image_read(path, 1);
    CHECK(nim != NULL);
    if (nim) {
        CHECK(nim->nx == n[0] && nim->ny == n[1] && nim->nz == n[2]);
        CHECK(nim->datatype == (cplx ? NIFTI_TYPE_COMPLEX64 : NIFTI_TYPE_FLOAT32));
        CHECK_LE("libniftiio dx", fabs(nim->dx - d[0]), 1e-6 * d[0]);
        double e = 0;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 4; j++) {
                e = fmax(e, fabs(nim->qto_xyz.m[i][j] - nim->sto_xyz.m[i][j]));
                e = fmax(e, fabs(nim->sto_xyz.m[i][j] - nifti_f32(b, 280 + 16 * i + 4 * j)));
            }
        CHECK_LE("libniftiio qto_xyz vs sto_xyz vs our srows, relative to the voxel size", e / fmax(d[0], fmax(d[1], d[2])), 1e-6);
        CHECK(memcmp(nim->data, b + 352, (size_t)(nv * bytes)) == 0);
        printf("ok: %s read by libniftiio: %dx%dx%d, datatype %d\n", path, nim->nx, nim->ny, nim->nz, nim->datatype);
        nifti_image_free(nim);
    }
#endif
    free(b);
}

#endif
