/* The analytic k-space of the 2D and 3D Shepp-Logan phantoms against a direct numerical Fourier
 * sum over a finely sampled phantom (midpoint rule on a G^d grid of the FOV, h = 1/G).
 *
 * Tolerance: the sampled sum differs from the integral only in the cells the shape boundaries
 * cross; for a convex shape those cells lie within sqrt(d) h of the boundary, so
 *   |F_num(k) - F(k)| <= sqrt(d) h sum_i |rho_i| P_i      (P_i = perimeter (2D) / surface (3D)),
 * an O(h) bound, whatever k is (|exp| = 1). P_i is computed from the textbook semi-axes (below,
 * Ramanujan's perimeter and Thomsen's surface formula, +2% for their approximation error).
 * That bound is loose because the cell errors have both signs; a second, tighter check uses the
 * random-sign estimate 4 sqrt(n_cells) h^d sum |rho| with n_cells = sum P_i / h^(d-1) boundary
 * cells (factor 4 of margin), which is what catches a misplaced or mis-rotated shape.
 * The test also checks F(0) = sum rho_i |E_i| (areas/volumes) to 1e-12 and that F(-k) =
 * conj F(k) (real phantom). */
#include <math.h>
#include <stdlib.h>

#include "phantoms/shepp_logan.h"
#include "testutil.h"

#define PI 3.14159265358979323846

/* Intensities and semi-axes in FOV units (textbook values / 2), for the bounds only. */
static const double rho[10] = {1, -0.8, -0.2, -0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1};
static const double ax2[10][2] = {{.69, .92},   {.6624, .874}, {.11, .31},   {.16, .41},   {.21, .25},
                                  {.046, .046}, {.046, .046},  {.046, .023}, {.023, .023}, {.023, .046}};
static const double ax3[10][3] = {{.69, .92, .81},   {.6624, .874, .78}, {.11, .31, .22},   {.16, .41, .28},
                                  {.21, .25, .41},   {.046, .046, .05},  {.046, .046, .05}, {.046, .023, .05},
                                  {.023, .023, .02}, {.023, .046, .02}};

static double bound_2d(double h)
{
    double s = 0;
    for (int i = 0; i < 10; i++) {
        double a = ax2[i][0] / 2, b = ax2[i][1] / 2;
        s += fabs(rho[i]) * 1.02 * PI * (3 * (a + b) - sqrt((3 * a + b) * (a + 3 * b)));
    }
    return sqrt(2.0) * h * s;
}

static double bound_3d(double h)
{
    double s = 0, p = 1.6075;
    for (int i = 0; i < 10; i++) {
        double a = ax3[i][0] / 2, b = ax3[i][1] / 2, c = ax3[i][2] / 2;
        double area = 4 * PI * pow((pow(a * b, p) + pow(a * c, p) + pow(b * c, p)) / 3, 1 / p);
        s += fabs(rho[i]) * 1.02 * area;
    }
    return sqrt(3.0) * h * s;
}

/* sum |rho_i| P_i / bound -> weighted boundary measure */
static double tight_bound(int is3d, double h)
{
    double meas = (is3d ? bound_3d(h) / sqrt(3.0) : bound_2d(h) / sqrt(2.0)) / h; /* sum |rho| P */
    double cells = meas / (is3d ? h * h : h);
    return 4.0 * sqrt(cells) * (is3d ? h * h * h : h * h);
}

/* sum rho |E| of the shapes; the orientation marker (intensity 1, semi-axes 0.07 x 0.035 (x 0.2) in FOV
 * units, phantoms/shepp_logan.c) adds its area or volume */
static double mass(mr_phantom_kind kind)
{
    const int is3d = mr_phantom_is_3d(kind);
    double s = 0;
    for (int i = 0; i < 10; i++)
        s += rho[i] * (is3d ? 4.0 / 3.0 * PI * ax3[i][0] * ax3[i][1] * ax3[i][2] / 8 : PI * ax2[i][0] * ax2[i][1] / 4);
    if (kind & MR_PHANTOM_MARKER)
        s += is3d ? 4.0 / 3.0 * PI * 0.07 * 0.035 * 0.2 : PI * 0.07 * 0.035;
    return s;
}

#define NK 6

/* Numerical sums for NK frequencies at once; the image is generated row by row. */
static void numeric(mr_phantom_kind kind, int g, const double k[NK][3], double out[NK][2])
{
    int is3d = mr_phantom_is_3d(kind), gz = is3d ? g : 1;
    double h = 1.0 / g;
    double *row = malloc((size_t)g * sizeof *row);
    double *px = malloc((size_t)NK * g * 2 * sizeof *px);
    for (int q = 0; q < NK; q++)
        for (int i = 0; i < g; i++) {
            double x = -0.5 + (i + 0.5) * h, ph = -2 * PI * k[q][0] * x;
            px[2 * (q * g + i)] = cos(ph);
            px[2 * (q * g + i) + 1] = sin(ph);
        }
    double acc[NK][2] = {{0}};
    for (int iz = 0; iz < gz; iz++)
        for (int iy = 0; iy < g; iy++) {
            double r0[3] = {-0.5 + 0.5 * h, -0.5 + (iy + 0.5) * h, is3d ? -0.5 + (iz + 0.5) * h : 0.0};
            mr_phantom_values_row(kind, r0, h, g, row);
            for (int q = 0; q < NK; q++) {
                double sr = 0, si = 0;
                const double *p = px + 2 * (size_t)q * g;
                for (int i = 0; i < g; i++) {
                    sr += row[i] * p[2 * i];
                    si += row[i] * p[2 * i + 1];
                }
                double ph = -2 * PI * (k[q][1] * r0[1] + k[q][2] * r0[2]), c = cos(ph), s = sin(ph);
                acc[q][0] += sr * c - si * s;
                acc[q][1] += sr * s + si * c;
            }
        }
    double vol = is3d ? h * h * h : h * h;
    for (int q = 0; q < NK; q++) {
        out[q][0] = acc[q][0] * vol;
        out[q][1] = acc[q][1] * vol;
    }
    free(row);
    free(px);
}

static void run(mr_phantom_kind kind, int g)
{
    int is3d = mr_phantom_is_3d(kind);
    const double k[NK][3] = {{0, 0, 0},       {1, 0, is3d ? 1 : 0},    {0, -3, is3d ? 2 : 0},
                             {5, -7, is3d ? -4 : 0}, {12.3, 20.7, is3d ? 6.5 : 0}, {-31.5, 8.25, is3d ? -17 : 0}};
    double num[NK][2];
    numeric(kind, g, k, num);
    double bound = is3d ? bound_3d(1.0 / g) : bound_2d(1.0 / g);
    for (int q = 0; q < NK; q++) {
        double ana[2], neg[2], mk[3] = {-k[q][0], -k[q][1], -k[q][2]};
        mr_phantom_kspace_at(kind, k[q], ana);
        mr_phantom_kspace_at(kind, mk, neg);
        double err = hypot(ana[0] - num[q][0], ana[1] - num[q][1]);
        printf("%s k = (%g, %g, %g): analytic %.8f%+.8fi numeric %.8f%+.8fi |diff| %.3g\n", mr_phantom_name(kind),
               k[q][0], k[q][1], k[q][2], ana[0], ana[1], num[q][0], num[q][1], err);
        CHECK_LE("|F_analytic - F_numeric| (O(h) boundary bound)", err, bound);
        CHECK_LE("|F_analytic - F_numeric| (random-sign estimate)", err, tight_bound(is3d, 1.0 / g));
        CHECK_LE("|F(-k) - conj F(k)|", hypot(neg[0] - ana[0], neg[1] + ana[1]), 1e-12);
        if (q == 0) {
            CHECK_LE("|F(0) - sum rho |E||", fabs(ana[0] - mass(kind)), 1e-12);
            CHECK_LE("|Im F(0)|", fabs(ana[1]), 1e-15);
        }
    }
    /* the float path agrees with the double one */
    float tr[3 * NK], d[2 * NK];
    for (int q = 0; q < NK; q++)
        for (int a = 0; a < 3; a++)
            tr[3 * q + a] = (float)k[q][a];
    CHECK_OK(mr_phantom_kspace(kind, tr, NK, d));
    double worst = 0;
    for (int q = 0; q < NK; q++) {
        double kk[3] = {tr[3 * q], tr[3 * q + 1], tr[3 * q + 2]}, ana[2];
        mr_phantom_kspace_at(kind, kk, ana);
        worst = fmax(worst, hypot(d[2 * q] - ana[0], d[2 * q + 1] - ana[1]));
    }
    CHECK_LE("float k-space vs double (rounding to float)", worst, 1e-6);
}

int main(void)
{
    run(MR_PHANTOM_SL2D, 4096);
    run(MR_PHANTOM_SL3D, 320);
    /* the orientation marker's analytic k-space is the transform of its image too */
    run(MR_PHANTOM_SL2D_MARKER, 2048);
    run(MR_PHANTOM_SL3D_MARKER, 256);
    return test_finish("test_phantom_kspace");
}
