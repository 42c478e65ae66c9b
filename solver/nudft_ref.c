/* The textbook non-uniform DFTs in float64: one sin/cos per (voxel, sample) pair, double accumulators.
 * Slow on purpose; every fast kernel (CPU and GPU) is tested against these. The phase k.r (+ f t with
 * the field term) is reduced to [-1/2, 1/2] cycles in double before sin/cos, so the reference is
 * accurate to ~1e-15 relative. */
#include <math.h>
#include <stddef.h>

#include "nudft.h"

#define REF_TWO_PI 6.283185307179586476925286766559

/* Position of index i along axis a of grid g, in FOV units. */
static double ref_pos(const mr_grid *g, int a, int64_t i)
{
    return (double)(i - g->center[a]) / (double)g->scale[a];
}

/* e^{+i 2 pi t} with t reduced to the nearest integer first. */
static void ref_phasor(double t, double *c, double *s)
{
    t -= nearbyint(t);
    *c = cos(REF_TWO_PI * t);
    *s = sin(REF_TWO_PI * t);
}

/* The phase in cycles of voxel v and sample k: k.r_v (+ f_v t_k with a field). */
static double ref_phase(const mr_grid *g, const float *traj, const float *time, const float *field, int64_t v,
                        int64_t k)
{
    const int64_t ix = v % g->n[0], iy = (v / g->n[0]) % g->n[1], iz = v / (g->n[0] * g->n[1]);
    const float *kk = traj + 3 * k;
    const double t = (double)kk[0] * ref_pos(g, 0, ix) + (double)kk[1] * ref_pos(g, 1, iy) +
                     (double)kk[2] * ref_pos(g, 2, iz);
    return field ? t + (double)field[v] * (double)time[k] : t;
}

static void adjoint_ref(const mr_grid *g, const float *traj, const float *time, const float *field, const float *a,
                        int real_weights, int64_t m, double *out)
{
    const int64_t nv = mr_grid_size(g);
#pragma omp parallel for schedule(static)
    for (int64_t v = 0; v < nv; v++) {
        double re = 0.0, im = 0.0;
        for (int64_t k = 0; k < m; k++) {
            double c, s;
            ref_phasor(ref_phase(g, traj, time, field, v, k), &c, &s);
            const double ar = real_weights ? (double)a[k] : (double)a[2 * k];
            const double ai = real_weights ? 0.0 : (double)a[2 * k + 1];
            re += ar * c - ai * s;
            im += ar * s + ai * c;
        }
        out[2 * v] = re;
        out[2 * v + 1] = im;
    }
}

static void forward_ref(const mr_grid *g, const float *traj, const float *time, const float *field, const float *x,
                        int64_t m, double *out)
{
    const int64_t nv = mr_grid_size(g);
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < m; k++) {
        double re = 0.0, im = 0.0;
        for (int64_t v = 0; v < nv; v++) {
            double c, s;
            ref_phasor(ref_phase(g, traj, time, field, v, k), &c, &s);
            /* x e^{-i phase} */
            re += (double)x[2 * v] * c + (double)x[2 * v + 1] * s;
            im += (double)x[2 * v + 1] * c - (double)x[2 * v] * s;
        }
        out[2 * k] = re;
        out[2 * k + 1] = im;
    }
}

void mr_nudft_adjoint_ref(const mr_grid *g, const float *traj, const float *a, int real_weights, int64_t m,
                          double *out)
{
    adjoint_ref(g, traj, NULL, NULL, a, real_weights, m, out);
}

void mr_nudft_forward_ref(const mr_grid *g, const float *traj, const float *x, int64_t m, double *out)
{
    forward_ref(g, traj, NULL, NULL, x, m, out);
}

void mr_nudft_field_adjoint_ref(const mr_grid *g, const float *traj, const float *time, const float *field,
                                const float *a, int64_t m, double *out)
{
    adjoint_ref(g, traj, time, field, a, 0, m, out);
}

void mr_nudft_field_forward_ref(const mr_grid *g, const float *traj, const float *time, const float *field,
                                const float *x, int64_t m, double *out)
{
    forward_ref(g, traj, time, field, x, m, out);
}
