/* Placement of image volumes in patient coordinates (see geometry.h). */
#include "geometry.h"

#include <math.h>
#include <stddef.h>

void mr_geometry_default(mr_geometry *g)
{
    for (int i = 0; i < 3; i++) {
        g->position[i] = 0.0f;
        g->read_dir[i] = i == 0 ? 1.0f : 0.0f;
        g->phase_dir[i] = i == 1 ? 1.0f : 0.0f;
        g->slice_dir[i] = i == 2 ? 1.0f : 0.0f;
    }
}

int mr_geometry_is_default(const mr_geometry *g)
{
    mr_geometry d;
    mr_geometry_default(&d);
    double diff = 0;
    for (int i = 0; i < 3; i++)
        diff = fmax(diff, fabs(g->position[i]) + fabs(g->read_dir[i] - d.read_dir[i]) +
                              fabs(g->phase_dir[i] - d.phase_dir[i]) + fabs(g->slice_dir[i] - d.slice_dir[i]));
    return diff <= 1e-5;
}

void mr_voxel_size_mm(const int64_t matrix[3], const float fov_mm[3], double d[3])
{
    for (int a = 0; a < 3; a++)
        d[a] = (fov_mm && fov_mm[a] > 0 && isfinite(fov_mm[a])) ? (double)fov_mm[a] / (double)matrix[a] : 1.0;
}

static double norm3(const double v[3]) { return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }
static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

int mr_geometry_frame(const mr_geometry *g, double dir[3][3])
{
    for (int i = 0; i < 3; i++)
        for (int a = 0; a < 3; a++)
            dir[i][a] = i == a;
    if (!g)
        return 0;
    double u[3], v[3], w[3];
    for (int i = 0; i < 3; i++) {
        u[i] = g->read_dir[i];
        v[i] = g->phase_dir[i];
        w[i] = g->slice_dir[i];
    }
    const double nu = norm3(u);
    if (!(nu > 1e-6))
        return 0;
    for (int i = 0; i < 3; i++)
        u[i] /= nu;
    const double d = dot3(u, v);
    for (int i = 0; i < 3; i++)
        v[i] -= d * u[i];
    const double nv = norm3(v);
    if (!(nv > 1e-6))
        return 0;
    for (int i = 0; i < 3; i++)
        v[i] /= nv;
    if (norm3(w) > 1e-6) {
        const double du = dot3(u, w), dv = dot3(v, w);
        for (int i = 0; i < 3; i++)
            w[i] -= du * u[i] + dv * v[i];
    }
    double nw = norm3(w);
    if (!(nw > 1e-6)) { /* no usable slice direction: the right-handed normal */
        w[0] = u[1] * v[2] - u[2] * v[1];
        w[1] = u[2] * v[0] - u[0] * v[2];
        w[2] = u[0] * v[1] - u[1] * v[0];
        nw = norm3(w);
    }
    for (int i = 0; i < 3; i++) {
        dir[i][0] = u[i];
        dir[i][1] = v[i];
        dir[i][2] = w[i] / nw;
    }
    return 1;
}

int mr_geometry_affine(const int64_t matrix[3], const float fov_mm[3], const mr_geometry *g, double A[3][4])
{
    double dir[3][3], d[3];
    mr_voxel_size_mm(matrix, fov_mm, d);
    const int known = mr_geometry_frame(g, dir);
    for (int i = 0; i < 3; i++) {
        A[i][3] = known ? (double)g->position[i] : 0.0;
        for (int a = 0; a < 3; a++) {
            A[i][a] = dir[i][a] * d[a];
            A[i][3] -= dir[i][a] * d[a] * (double)(matrix[a] / 2); /* voxel N/2 sits at the position */
        }
    }
    return known;
}
