/* Modified Shepp-Logan phantoms: point values, analytic k-space, voxel-averaged and band-limited
 * truth images (see shepp_logan.h and docs/PHANTOMS.md). */
#include "shepp_logan.h"

#include <fftw3.h>
#include <math.h>
#include <stdlib.h>

#include "../io/kspace.h"
#include "../solver/fft.h"

#define PI 3.14159265358979323846
#define NSHAPES 10
#define MAXSHAPES (NSHAPES + 1) /* + the orientation marker */

/* Textbook tables in [-1, 1] coordinates, y up, angle in degrees counter-clockwise about z:
 * intensity, semi-axes a b c, centre x0 y0 z0, phi. */
typedef struct {
    double rho, a, b, c, x0, y0, z0, phi;
} shape_row;

/* Toft's modified Shepp-Logan (MATLAB phantom 'Modified Shepp-Logan'); c, z0 unused. */
static const shape_row sl2d[NSHAPES] = {
    {1.0, 0.69, 0.92, 0, 0, 0, 0, 0},          {-0.8, 0.6624, 0.874, 0, 0, -0.0184, 0, 0},
    {-0.2, 0.11, 0.31, 0, 0.22, 0, 0, -18},    {-0.2, 0.16, 0.41, 0, -0.22, 0, 0, 18},
    {0.1, 0.21, 0.25, 0, 0, 0.35, 0, 0},       {0.1, 0.046, 0.046, 0, 0, 0.1, 0, 0},
    {0.1, 0.046, 0.046, 0, 0, -0.1, 0, 0},     {0.1, 0.046, 0.023, 0, -0.08, -0.605, 0, 0},
    {0.1, 0.023, 0.023, 0, 0, -0.606, 0, 0},   {0.1, 0.023, 0.046, 0, 0.06, -0.605, 0, 0},
};

/* MATLAB phantom3d 'Modified Shepp-Logan' with theta = psi = 0 (rotation about z only) and the
 * centres taken in the image frame. */
static const shape_row sl3d[NSHAPES] = {
    {1.0, 0.69, 0.92, 0.81, 0, 0, 0, 0},           {-0.8, 0.6624, 0.874, 0.78, 0, -0.0184, 0, 0},
    {-0.2, 0.11, 0.31, 0.22, 0.22, 0, 0, -18},     {-0.2, 0.16, 0.41, 0.28, -0.22, 0, 0, 18},
    {0.1, 0.21, 0.25, 0.41, 0, 0.35, -0.15, 0},    {0.1, 0.046, 0.046, 0.05, 0, 0.1, 0.25, 0},
    {0.1, 0.046, 0.046, 0.05, 0, -0.1, 0.25, 0},   {0.1, 0.046, 0.023, 0.05, -0.08, -0.605, 0, 0},
    {0.1, 0.023, 0.023, 0.02, 0, -0.606, 0, 0},    {0.1, 0.023, 0.046, 0.02, 0.06, -0.605, 0, 0},
};

/* The orientation marker (MR_PHANTOM_MARKER), in FOV units (no flip: these are our image axes):
 * intensity 1, an ellipse elongated along x (so a transposition changes its shape as well as its
 * place), outside the head near the corner of small x and small y, i.e. the top-left corner of
 * every picture (docs/FORMAT.md, "Orientation"); in 3D an ellipsoid reaching from z = -0.3 to 0.1: through the
 * central axial plane (the first panel of every 3D picture) and off-centre in z, so a z flip shows too. */
static const shape_row marker_2d = {1.0, 0.07, 0.035, 0, -0.34, -0.37, 0, 0};
static const shape_row marker_3d = {1.0, 0.07, 0.035, 0.2, -0.34, -0.37, -0.1, 0};

/* One shape in FOV units: body coordinates u = R(-phi)(r - centre). */
typedef struct {
    double rho, ax[3], ctr[3], cs, sn;
    double half[3]; /* axis-aligned bounding box half-widths */
} shape;

static void shape_set(shape *s, const shape_row *t, double scale, double yflip, int is3d)
{
    double phi = yflip * t->phi * PI / 180.0;
    s->rho = t->rho;
    s->ax[0] = scale * t->a;
    s->ax[1] = scale * t->b;
    s->ax[2] = is3d ? scale * t->c : 1.0;
    s->ctr[0] = scale * t->x0;
    s->ctr[1] = yflip * scale * t->y0;
    s->ctr[2] = is3d ? scale * t->z0 : 0.0;
    s->cs = cos(phi);
    s->sn = sin(phi);
    s->half[0] = sqrt(pow(s->ax[0] * s->cs, 2) + pow(s->ax[1] * s->sn, 2));
    s->half[1] = sqrt(pow(s->ax[0] * s->sn, 2) + pow(s->ax[1] * s->cs, 2));
    s->half[2] = s->ax[2];
}

int mr_phantom_is_3d(mr_phantom_kind kind) { return (kind & MR_PHANTOM_SL3D) != 0; }

/* The textbook tables scaled by 1/2 into the FOV with y flipped (angle -> -angle, y0 -> -y0), then the
 * marker when the kind has it. Returns the number of shapes. */
static int shapes_get(mr_phantom_kind kind, shape s[MAXSHAPES])
{
    const int is3d = mr_phantom_is_3d(kind);
    const shape_row *t = is3d ? sl3d : sl2d;
    for (int i = 0; i < NSHAPES; i++)
        shape_set(&s[i], &t[i], 0.5, -1.0, is3d);
    if (!(kind & MR_PHANTOM_MARKER))
        return NSHAPES;
    shape_set(&s[NSHAPES], is3d ? &marker_3d : &marker_2d, 1.0, 1.0, is3d);
    return NSHAPES + 1;
}

const char *mr_phantom_name(mr_phantom_kind kind)
{
    static const char *const names[] = {"shepp-logan-2d", "shepp-logan-3d", "shepp-logan-2d-marker",
                                        "shepp-logan-3d-marker"};
    return names[kind & 3];
}

static int shape_contains(const shape *s, int is3d, double x, double y, double z)
{
    double dx = x - s->ctr[0], dy = y - s->ctr[1];
    double u = (s->cs * dx + s->sn * dy) / s->ax[0];
    double v = (-s->sn * dx + s->cs * dy) / s->ax[1];
    double w = is3d ? (z - s->ctr[2]) / s->ax[2] : 0.0;
    return u * u + v * v + w * w <= 1.0;
}

void mr_phantom_values_row(mr_phantom_kind kind, const double r0[3], double dx, int64_t n, double *out)
{
    shape s[MAXSHAPES];
    const int ns = shapes_get(kind, s);
    int is3d = mr_phantom_is_3d(kind);
    for (int64_t i = 0; i < n; i++) {
        double f = 0, x = r0[0] + (double)i * dx;
        for (int j = 0; j < ns; j++)
            if (shape_contains(&s[j], is3d, x, r0[1], r0[2]))
                f += s[j].rho;
        out[i] = f;
    }
}

int mr_phantom_inside(mr_phantom_kind kind, const double r[3])
{
    shape s[MAXSHAPES];
    shapes_get(kind, s);
    return shape_contains(&s[0], mr_phantom_is_3d(kind), r[0], r[1], r[2]);
}

double mr_phantom_value(mr_phantom_kind kind, const double r[3])
{
    double f;
    mr_phantom_values_row(kind, r, 0.0, 1, &f);
    return f;
}

/* Fourier transform of the unit disk at radius kappa: J1(2 pi kappa)/kappa -> pi at 0. */
static double disk_ft(double kappa)
{
    double x = 2.0 * PI * kappa;
    if (x < 1e-4) /* J1(x)/x = 1/2 - x^2/16 + ..., times 2 pi */
        return 2.0 * PI * (0.5 - x * x / 16.0);
    return j1(x) / kappa;
}

/* Fourier transform of the unit ball: (sin x - x cos x)/(2 pi^2 kappa^3), x = 2 pi kappa ->
 * 4 pi/3 at 0; the series avoids the cancellation for small x. */
static double ball_ft(double kappa)
{
    double x = 2.0 * PI * kappa;
    double num;
    if (x < 0.1) {
        double x2 = x * x;
        /* sin x - x cos x = x^3/3 - x^5/30 + x^7/840 - x^9/45360 + ...; kappa^3 = x^3/(8 pi^3) */
        return 4.0 * PI * (1.0 / 3.0 - x2 / 30.0 + x2 * x2 / 840.0 - x2 * x2 * x2 / 45360.0);
    }
    num = sin(x) - x * cos(x);
    return num / (2.0 * PI * PI * kappa * kappa * kappa);
}

static void kspace_shapes(const shape *s, int ns, int is3d, const double k[3], double out[2])
{
    double re = 0, im = 0;
    double kz = is3d ? k[2] : 0.0;
    for (int i = 0; i < ns; i++) {
        double kx = s[i].cs * k[0] + s[i].sn * k[1];
        double ky = -s[i].sn * k[0] + s[i].cs * k[1];
        double qa = s[i].ax[0] * kx, qb = s[i].ax[1] * ky, qc = is3d ? s[i].ax[2] * kz : 0.0;
        double val;
        if (is3d)
            val = s[i].rho * s[i].ax[0] * s[i].ax[1] * s[i].ax[2] * ball_ft(sqrt(qa * qa + qb * qb + qc * qc));
        else
            val = s[i].rho * s[i].ax[0] * s[i].ax[1] * disk_ft(sqrt(qa * qa + qb * qb));
        double ph = -2.0 * PI * (k[0] * s[i].ctr[0] + k[1] * s[i].ctr[1] + kz * s[i].ctr[2]);
        re += val * cos(ph);
        im += val * sin(ph);
    }
    out[0] = re;
    out[1] = im;
}

void mr_phantom_kspace_at(mr_phantom_kind kind, const double k[3], double out[2])
{
    shape s[MAXSHAPES];
    const int ns = shapes_get(kind, s);
    kspace_shapes(s, ns, mr_phantom_is_3d(kind), k, out);
}

mr_status mr_phantom_kspace(mr_phantom_kind kind, const float *traj, int64_t m, float *data)
{
    if (!traj || !data || m < 1)
        return mr_error(MR_EINVAL, "phantom k-space: bad arguments (m = %lld)", (long long)m);
    shape s[MAXSHAPES];
    const int ns = shapes_get(kind, s);
    int is3d = mr_phantom_is_3d(kind);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < m; i++) {
        double k[3] = {traj[3 * i], traj[3 * i + 1], traj[3 * i + 2]}, v[2];
        kspace_shapes(s, ns, is3d, k, v);
        data[2 * i] = (float)v[0];
        data[2 * i + 1] = (float)v[1];
    }
    return MR_OK;
}

static mr_status check_matrix(mr_phantom_kind kind, const int64_t matrix[3], const char *what)
{
    mr_status st = mr_matrix_check(matrix, what);
    if (st != MR_OK)
        return st;
    if (!mr_phantom_is_3d(kind) && matrix[2] != 1)
        return mr_error(MR_EINVAL, "%s: the 2D phantom needs Nz = 1, got %lld", what, (long long)matrix[2]);
    return MR_OK;
}

mr_status mr_phantom_truth(mr_phantom_kind kind, const int64_t matrix[3], float *truth)
{
    mr_status st = check_matrix(kind, matrix, "truth image");
    if (st != MR_OK)
        return st;
    shape s[MAXSHAPES];
    const int ns = shapes_get(kind, s);
    int is3d = mr_phantom_is_3d(kind);
    const int64_t nx = matrix[0], ny = matrix[1], nz = matrix[2];
    const int sub = is3d ? MR_PHANTOM_SUB_3D : MR_PHANTOM_SUB_2D;
    const int subz = is3d ? sub : 1;
    const double inv = 1.0 / ((double)sub * sub * subz);
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t row = 0; row < ny * nz; row++) {
        int64_t iy = row % ny, iz = row / ny;
        double yc = (double)(iy - ny / 2) / (double)ny, zc = is3d ? (double)(iz - nz / 2) / (double)nz : 0.0;
        /* shapes whose bounding box meets this row of voxels */
        int act[MAXSHAPES], nact = 0;
        for (int i = 0; i < ns; i++) {
            if (fabs(yc - s[i].ctr[1]) > s[i].half[1] + 0.5 / (double)ny)
                continue;
            if (is3d && fabs(zc - s[i].ctr[2]) > s[i].half[2] + 0.5 / (double)nz)
                continue;
            act[nact++] = i;
        }
        for (int64_t ix = 0; ix < nx; ix++) {
            double xc = (double)(ix - nx / 2) / (double)nx;
            double acc = 0;
            for (int a = 0; a < nact; a++) {
                const shape *sh = &s[act[a]];
                if (fabs(xc - sh->ctr[0]) > sh->half[0] + 0.5 / (double)nx)
                    continue;
                int hits = 0;
                for (int pz = 0; pz < subz; pz++) {
                    double z = is3d ? zc + ((pz + 0.5) / subz - 0.5) / (double)nz : 0.0;
                    for (int py = 0; py < sub; py++) {
                        double y = yc + ((py + 0.5) / sub - 0.5) / (double)ny;
                        for (int px = 0; px < sub; px++) {
                            double x = xc + ((px + 0.5) / sub - 0.5) / (double)nx;
                            hits += shape_contains(sh, is3d, x, y, z);
                        }
                    }
                }
                acc += sh->rho * hits;
            }
            truth[(iz * ny + iy) * nx + ix] = (float)(acc * inv);
        }
    }
    return MR_OK;
}

/* The Cartesian frequencies that land in FFT bin q of an N-point axis: k = q or q - N, and for
 * even N > 1 the Nyquist bin q = N/2 holds both +N/2 and -N/2 with weight 1/2 each. */
typedef struct {
    int n;
    double k[2], w[2];
} bin_terms;

static void axis_bins(int64_t n, bin_terms *b)
{
    for (int64_t q = 0; q < n; q++) {
        if (n > 1 && n % 2 == 0 && q == n / 2) {
            b[q].n = 2;
            b[q].k[0] = (double)(n / 2);
            b[q].k[1] = -(double)(n / 2);
            b[q].w[0] = b[q].w[1] = 0.5;
        } else {
            b[q].n = 1;
            b[q].k[0] = (double)(q <= n / 2 ? q : q - n);
            b[q].w[0] = 1.0;
        }
    }
}

mr_status mr_phantom_truth_bandlimited(mr_phantom_kind kind, const int64_t matrix[3], float *truth,
                                       double *max_imag)
{
    mr_status st = check_matrix(kind, matrix, "band-limited truth");
    if (st != MR_OK)
        return st;
    const int64_t nx = matrix[0], ny = matrix[1], nz = matrix[2], nvox = nx * ny * nz;
    bin_terms *bx = malloc((size_t)nx * sizeof *bx), *by = malloc((size_t)ny * sizeof *by),
              *bz = malloc((size_t)nz * sizeof *bz);
    fftwf_complex *buf = fftwf_malloc((size_t)nvox * sizeof *buf);
    if (!bx || !by || !bz || !buf) {
        st = mr_error(MR_ENOMEM, "band-limited truth: out of memory for %lld voxels", (long long)nvox);
        goto done;
    }
    axis_bins(nx, bx);
    axis_bins(ny, by);
    axis_bins(nz, bz);
    int dims[3] = {(int)nz, (int)ny, (int)nx};
    int rank = nz > 1 ? 3 : 2;
    fftwf_plan plan = mr_fft_plan_dft(rank, dims + (3 - rank), buf, FFTW_BACKWARD, 1);
    if (!plan) {
        st = mr_error(MR_EFFT, "band-limited truth: FFTW could not plan a %lldx%lldx%lld transform", (long long)nx,
                      (long long)ny, (long long)nz);
        goto done;
    }
    shape s[MAXSHAPES];
    const int ns = shapes_get(kind, s);
    int is3d = mr_phantom_is_3d(kind);
    const double c[3] = {(double)(nx / 2), (double)(ny / 2), (double)(nz / 2)};
    const double n[3] = {(double)nx, (double)ny, (double)nz};
    /* Bin value: sum of w F(k) exp(-i 2 pi k.c/N) over its frequencies, so that the backward DFT
     * out[j] = sum_q in[q] exp(+i 2 pi q.j/N) evaluates sum_k w F(k) exp(+i 2 pi k.(j - c)/N). */
#pragma omp parallel for schedule(static)
    for (int64_t idx = 0; idx < nvox; idx++) {
        const bin_terms *t[3] = {&bx[idx % nx], &by[(idx / nx) % ny], &bz[idx / (nx * ny)]};
        double re = 0, im = 0;
        for (int a = 0; a < t[2]->n; a++)
            for (int b = 0; b < t[1]->n; b++)
                for (int e = 0; e < t[0]->n; e++) {
                    double k[3] = {t[0]->k[e], t[1]->k[b], t[2]->k[a]}, f[2];
                    double w = t[0]->w[e] * t[1]->w[b] * t[2]->w[a];
                    kspace_shapes(s, ns, is3d, k, f);
                    double ph = -2.0 * PI * (k[0] * c[0] / n[0] + k[1] * c[1] / n[1] + k[2] * c[2] / n[2]);
                    double cp = cos(ph), sp = sin(ph);
                    re += w * (f[0] * cp - f[1] * sp);
                    im += w * (f[0] * sp + f[1] * cp);
                }
        buf[idx][0] = (float)re;
        buf[idx][1] = (float)im;
    }
    fftwf_execute(plan);
    mr_fft_destroy(plan);
    double worst = 0;
    for (int64_t i = 0; i < nvox; i++) {
        truth[i] = buf[i][0];
        worst = fmax(worst, fabs(buf[i][1]));
    }
    if (max_imag)
        *max_imag = worst;
done:
    free(bx);
    free(by);
    free(bz);
    if (buf)
        fftwf_free(buf);
    return st;
}
