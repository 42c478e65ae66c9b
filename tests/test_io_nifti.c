/* NIfTI-1 output (io/nifti.c): the header fields read back byte by byte at the offsets of the
 * NIfTI-1 standard (nifti1.h), the voxel data, the placement (voxel N/2 at the scan's position,
 * one voxel step along each axis = the direction times the voxel size, LPS -> RAS), the qform
 * rotation rebuilt from its quaternion equal to the sform's, 2D and 3D, magnitude and complex; the
 * atomic write. Where libniftiio is installed (Debian libnifti2-dev), the files are also read with
 * it and its qto_xyz / sto_xyz matrices and data compared. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/nifti.h"
#include "io_testutil.h"
#include "testutil.h"

#ifdef MR_HAVE_NIFTILIB
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nifti1_io.h>
#pragma GCC diagnostic pop
#endif

static unsigned char *slurp(const char *path, long *size)
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

static int i16(const unsigned char *h, int off) { return (int16_t)(h[off] | (h[off + 1] << 8)); }
static int32_t i32(const unsigned char *h, int off)
{
    return (int32_t)((uint32_t)h[off] | ((uint32_t)h[off + 1] << 8) | ((uint32_t)h[off + 2] << 16) |
                     ((uint32_t)h[off + 3] << 24));
}
static float f32(const unsigned char *h, int off)
{
    uint32_t u = (uint32_t)i32(h, off);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* world (RAS) of voxel (i, j, k) from the header's srows */
static void sform_apply(const unsigned char *h, const double ijk[3], double xyz[3])
{
    for (int r = 0; r < 3; r++) {
        xyz[r] = f32(h, 280 + 16 * r + 12);
        for (int c = 0; c < 3; c++)
            xyz[r] += f32(h, 280 + 16 * r + 4 * c) * ijk[c];
    }
}

static void check_file(const char *path, const float *img, const int64_t n[3], const float fov[3], int cplx,
                       const mr_geometry *g)
{
    long size = 0;
    unsigned char *b = slurp(path, &size);
    CHECK(b != NULL);
    if (!b)
        return;
    const int64_t nv = n[0] * n[1] * n[2];
    const int bytes = cplx ? 8 : 4;
    CHECK(size == 352 + nv * bytes);
    CHECK(i32(b, 0) == 348);
    CHECK(memcmp(b + 344, "n+1", 4) == 0);
    CHECK(i16(b, 40) == 3 && i16(b, 42) == n[0] && i16(b, 44) == n[1] && i16(b, 46) == n[2]);
    CHECK(i16(b, 70) == (cplx ? 32 : 16) && i16(b, 72) == 8 * bytes);
    CHECK(f32(b, 108) == 352.0f);
    CHECK((b[123] & 7) == 2); /* mm */
    double d[3];
    for (int a = 0; a < 3; a++) {
        d[a] = fov && fov[a] > 0 ? (double)fov[a] / (double)n[a] : 1.0;
        CHECK_LE("pixdim vs FOV/N", fabs(f32(b, 80 + 4 * a) - d[a]), 1e-6 * d[a]);
    }
    const int code = g ? 1 : 2;
    CHECK(i16(b, 252) == code && i16(b, 254) == code);
    /* placement: voxel N/2 at the position (RAS), one step along axis a = direction * d[a] */
    double pos[3] = {0, 0, 0}, dirs[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    if (g)
        for (int i = 0; i < 3; i++) {
            const double flip = i < 2 ? -1 : 1;
            pos[i] = flip * g->position[i];
            dirs[0][i] = flip * g->read_dir[i];
            dirs[1][i] = flip * g->phase_dir[i];
            dirs[2][i] = flip * g->slice_dir[i];
        }
    double c[3] = {(double)(n[0] / 2), (double)(n[1] / 2), (double)(n[2] / 2)}, w[3];
    sform_apply(b, c, w);
    double err = 0;
    for (int i = 0; i < 3; i++)
        err = fmax(err, fabs(w[i] - pos[i]));
    CHECK_LE("centre voxel vs position (mm)", err, 1e-4);
    for (int a = 0; a < 3; a++) {
        double c1[3] = {c[0], c[1], c[2]}, w1[3];
        c1[a] += 1;
        sform_apply(b, c1, w1);
        double e = 0;
        for (int i = 0; i < 3; i++)
            e = fmax(e, fabs(w1[i] - w[i] - dirs[a][i] * d[a]));
        CHECK_LE("voxel step vs direction * size (mm)", e, 1e-5);
    }
    /* qform: R(b, c, d) * diag(d) * diag(1, 1, qfac) must equal the sform's 3x3 part */
    const double qb = f32(b, 256), qc = f32(b, 260), qd = f32(b, 264), qfac = f32(b, 76) < 0 ? -1 : 1;
    const double qa = sqrt(fmax(0, 1 - (qb * qb + qc * qc + qd * qd)));
    const double R[3][3] = {{qa * qa + qb * qb - qc * qc - qd * qd, 2 * (qb * qc - qa * qd), 2 * (qb * qd + qa * qc)},
                            {2 * (qb * qc + qa * qd), qa * qa + qc * qc - qb * qb - qd * qd, 2 * (qc * qd - qa * qb)},
                            {2 * (qb * qd - qa * qc), 2 * (qc * qd + qa * qb), qa * qa + qd * qd - qc * qc - qb * qb}};
    double qerr = 0;
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++)
            qerr = fmax(qerr, fabs(R[i][j] * d[j] * (j == 2 ? qfac : 1) - f32(b, 280 + 16 * i + 4 * j)));
        qerr = fmax(qerr, fabs(f32(b, 268 + 4 * i) - f32(b, 280 + 16 * i + 12)));
    }
    CHECK_LE("qform (quaternion) vs sform, relative to the voxel size", qerr / fmax(d[0], fmax(d[1], d[2])), 1e-6);
    /* voxels */
    int64_t bad = -1;
    for (int64_t v = 0; v < nv && bad < 0; v++) {
        const float *p = img + 2 * v;
        if (cplx) {
            if (f32(b, (int)(352 + 8 * v)) != p[0] || f32(b, (int)(352 + 8 * v + 4)) != p[1])
                bad = v;
        } else if (f32(b, (int)(352 + 4 * v)) != (float)hypot(p[0], p[1])) {
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
                e = fmax(e, fabs(nim->sto_xyz.m[i][j] - f32(b, 280 + 16 * i + 4 * j)));
            }
        CHECK_LE("libniftiio qto_xyz vs sto_xyz vs our srows, relative to the voxel size", e / fmax(d[0], fmax(d[1], d[2])), 1e-6);
        CHECK(memcmp(nim->data, b + 352, (size_t)(nv * bytes)) == 0);
        printf("ok: %s read by libniftiio: %dx%dx%d, datatype %d\n", path, nim->nx, nim->ny, nim->nz, nim->datatype);
        nifti_image_free(nim);
    }
#endif
    free(b);
}

int main(void)
{
    const char *dir = test_tmpdir("io_nifti");
    uint64_t rng = test_seed();
    char path[1024];
    /* 2D magnitude, no geometry */
    {
        const int64_t n[3] = {5, 4, 1};
        const float fov[3] = {200, 160, 5};
        float img[2 * 20];
        for (int i = 0; i < 40; i++)
            img[i] = (float)(test_normal(&rng));
        snprintf(path, sizeof path, "%s/mag2d.nii", dir);
        CHECK_OK(mr_nifti_write(path, img, n, fov, MR_NIFTI_MAGNITUDE));
        check_file(path, img, n, fov, 0, NULL);
        snprintf(path, sizeof path, "%s/cplx2d_nofov.nii", dir);
        CHECK_OK(mr_nifti_write(path, img, n, NULL, MR_NIFTI_COMPLEX));
        check_file(path, img, n, NULL, 1, NULL);
    }
    /* 3D complex and magnitude, oblique geometry (a rotation about an arbitrary axis) */
    {
        const int64_t n[3] = {6, 5, 4};
        const float fov[3] = {240, 200, 80};
        float *img = malloc(2 * 120 * sizeof *img);
        for (int i = 0; i < 240; i++)
            img[i] = (float)test_normal(&rng);
        mr_geometry g;
        const double t = 0.4, ax[3] = {0.48, 0.6, 0.64}; /* unit axis */
        /* Rodrigues: R = cos t I + (1 - cos t) a a^T + sin t [a]x */
        const double K[3][3] = {{0, -ax[2], ax[1]}, {ax[2], 0, -ax[0]}, {-ax[1], ax[0], 0}};
        double R[3][3];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                R[i][j] = (i == j ? cos(t) : 0) + (1 - cos(t)) * ax[i] * ax[j] + sin(t) * K[i][j];
        for (int i = 0; i < 3; i++) {
            g.read_dir[i] = (float)R[i][0];
            g.phase_dir[i] = (float)R[i][1];
            g.slice_dir[i] = (float)R[i][2];
        }
        g.position[0] = 12.5f;
        g.position[1] = -30.0f;
        g.position[2] = 41.0f;
        snprintf(path, sizeof path, "%s/cplx3d.nii", dir);
        CHECK_OK(mr_nifti_write_geometry(path, img, n, fov, MR_NIFTI_COMPLEX, &g, "test volume"));
        check_file(path, img, n, fov, 1, &g);
        snprintf(path, sizeof path, "%s/mag3d.nii", dir);
        CHECK_OK(mr_nifti_write_geometry(path, img, n, fov, MR_NIFTI_MAGNITUDE, &g, NULL));
        check_file(path, img, n, fov, 0, &g);
        /* a left-handed frame (slice direction flipped): qfac -1 */
        for (int i = 0; i < 3; i++)
            g.slice_dir[i] = -g.slice_dir[i];
        snprintf(path, sizeof path, "%s/lefthanded.nii", dir);
        CHECK_OK(mr_nifti_write_geometry(path, img, n, fov, MR_NIFTI_MAGNITUDE, &g, NULL));
        check_file(path, img, n, fov, 0, &g);
        /* refused: a matrix NIfTI-1 cannot hold; nothing written */
        const int64_t huge[3] = {40000, 1, 1};
        snprintf(path, sizeof path, "%s/huge.nii", dir);
        CHECK(mr_nifti_write(path, img, huge, NULL, MR_NIFTI_MAGNITUDE) == MR_EINVAL);
        CHECK(!io_test_exists(path));
        free(img);
    }
    CHECK(io_test_count_prefix(dir, ".") == 2); /* only . and ..: no temporary files left */
    io_test_rmdir(dir);
    return test_finish("test_io_nifti");
}
