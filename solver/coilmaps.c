/* Coil maps: Walsh adaptive combination on a calibration grid, interpolated to the image matrix
 * (see coilmaps.h). */
#include "coilmaps.h"

#include <complex.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "../base/grid.h"
#include "../base/log.h"
#include "dcf.h"
#include "gridding.h"

typedef double complex cplx;

#define POWER_ITERS 300
#define POWER_TOL 1e-10

void mr_coilmaps_opts_default(mr_coilmaps_opts *o)
{
    o->window = 3;
    o->calib = 0;
    o->calib_max = 0;
    o->threshold = 1e-3;
    o->threads = 0;
}

static int active(const int64_t matrix[3], int a) { return matrix[a] > 1; }

static int cap_of(const int64_t matrix[3], const mr_coilmaps_opts *o)
{
    if (o->calib_max > 0)
        return o->calib_max;
    return matrix[2] > 1 ? 24 : 32;
}

mr_status mr_coilmaps_calib_size(const int64_t matrix[3], const float *traj, int64_t m, const mr_coilmaps_opts *o,
                                 int64_t small[3])
{
    mr_coilmaps_opts def;
    if (!o) {
        mr_coilmaps_opts_default(&def);
        o = &def;
    }
    const int cap = cap_of(matrix, o);
    int64_t R[3], dim[3];
    for (int a = 0; a < 3; a++) {
        R[a] = active(matrix, a) ? (matrix[a] / 2 < cap / 2 + 1 ? matrix[a] / 2 : cap / 2 + 1) : 0;
        dim[a] = 2 * R[a] + 1;
    }
    const int64_t ncell = dim[0] * dim[1] * dim[2];
    unsigned char *hit = calloc((size_t)ncell, 1);
    if (!hit)
        return mr_error(MR_ENOMEM, "coil maps: out of memory");
    for (int64_t i = 0; i < m; i++) {
        int64_t c[3], inside = 1;
        for (int a = 0; a < 3; a++) {
            double k = traj[3 * i + a];
            c[a] = active(matrix, a) ? (int64_t)floor(k + 0.5) : 0;
            inside &= c[a] >= -R[a] && c[a] <= R[a];
        }
        if (inside)
            hit[((c[2] + R[2]) * dim[1] + (c[1] + R[1])) * dim[0] + (c[0] + R[0])] = 1;
    }
    /* the fully sampled radius: the distance of the nearest cell no sample fell into */
    double rc = 1e30;
    for (int64_t z = 0; z < dim[2]; z++)
        for (int64_t y = 0; y < dim[1]; y++)
            for (int64_t x = 0; x < dim[0]; x++) {
                if (hit[(z * dim[1] + y) * dim[0] + x])
                    continue;
                double dx = (double)(x - R[0]), dy = (double)(y - R[1]), dz = (double)(z - R[2]);
                rc = fmin(rc, sqrt(dx * dx + dy * dy + dz * dz));
            }
    free(hit);
    for (int a = 0; a < 3; a++) {
        if (!active(matrix, a)) {
            small[a] = 1;
            continue;
        }
        int64_t e = rc > 1e29 ? cap : 2 * (int64_t)floor(rc);
        e = e < 8 ? 8 : (e > cap ? cap : e);
        small[a] = e > matrix[a] ? matrix[a] : e;
    }
    if (rc < 4)
        mr_log(MR_LOG_WARN, "coil maps: the trajectory samples the k-space centre fully only to radius %.1f; the "
                            "calibration images (%lldx%lldx%lld) are undersampled",
               rc, (long long)small[0], (long long)small[1], (long long)small[2]);
    return MR_OK;
}

/* Dominant eigenvector of the Hermitian R (C x C, row-major) by power iteration from v (unit norm,
 * replaced by the result); returns the eigenvalue. */
static double power_iteration(const cplx *R, int64_t C, cplx *v, cplx *tmp)
{
    double lambda = 0;
    for (int it = 0; it < POWER_ITERS; it++) {
        double nrm = 0;
        for (int64_t i = 0; i < C; i++) {
            cplx s = 0;
            for (int64_t j = 0; j < C; j++)
                s += R[i * C + j] * v[j];
            tmp[i] = s;
            nrm += creal(s * conj(s));
        }
        nrm = sqrt(nrm);
        if (!(nrm > 0))
            return 0;
        double change = 0;
        for (int64_t i = 0; i < C; i++) {
            cplx nv = tmp[i] / nrm;
            change += creal((nv - v[i]) * conj(nv - v[i]));
            v[i] = nv;
        }
        lambda = nrm;
        if (change < POWER_TOL)
            break;
    }
    return lambda;
}

/* x(r) of coil c */
static cplx pix(const float *imgs, int64_t ns, int64_t c, int64_t r)
{
    return imgs[2 * (c * ns + r)] + I * imgs[2 * (c * ns + r) + 1];
}

/* Fill voxels outside the mask with the (renormalised) mean of filled 6-neighbours, pass by pass. */
static mr_status fill_outside(cplx *v, unsigned char *filled, const int64_t n[3], int64_t C)
{
    const int64_t ns = n[0] * n[1] * n[2];
    unsigned char *next = malloc((size_t)ns);
    cplx *acc = malloc((size_t)C * sizeof *acc);
    if (!next || !acc) {
        free(next);
        free(acc);
        return mr_error(MR_ENOMEM, "coil maps: out of memory");
    }
    int64_t left = 0;
    for (int64_t r = 0; r < ns; r++)
        left += !filled[r];
    while (left > 0) {
        memcpy(next, filled, (size_t)ns);
        int64_t done = 0;
        for (int64_t z = 0; z < n[2]; z++)
            for (int64_t y = 0; y < n[1]; y++)
                for (int64_t x = 0; x < n[0]; x++) {
                    const int64_t r = (z * n[1] + y) * n[0] + x;
                    if (filled[r])
                        continue;
                    const int64_t nb[6][3] = {{x - 1, y, z}, {x + 1, y, z}, {x, y - 1, z},
                                              {x, y + 1, z}, {x, y, z - 1}, {x, y, z + 1}};
                    int cnt = 0;
                    for (int64_t c = 0; c < C; c++)
                        acc[c] = 0;
                    for (int k = 0; k < 6; k++) {
                        const int64_t *p = nb[k];
                        if (p[0] < 0 || p[1] < 0 || p[2] < 0 || p[0] >= n[0] || p[1] >= n[1] || p[2] >= n[2])
                            continue;
                        const int64_t q = (p[2] * n[1] + p[1]) * n[0] + p[0];
                        if (!filled[q])
                            continue;
                        for (int64_t c = 0; c < C; c++)
                            acc[c] += v[q * C + c];
                        cnt++;
                    }
                    if (!cnt)
                        continue;
                    double nrm = 0;
                    for (int64_t c = 0; c < C; c++)
                        nrm += creal(acc[c] * conj(acc[c]));
                    nrm = sqrt(nrm);
                    for (int64_t c = 0; c < C; c++)
                        v[r * C + c] = nrm > 0 ? acc[c] / nrm : 0;
                    next[r] = 1;
                    done++;
                }
        memcpy(filled, next, (size_t)ns);
        left -= done;
        if (done == 0)
            break;
    }
    free(next);
    free(acc);
    return left == 0 ? MR_OK : mr_error(MR_EINVAL, "coil maps: the coil images hold no signal");
}

/* The global virtual coil v_ref: the dominant eigenvector of G = sum_r x x^H over the calibration grid
 * (G zeroed by the caller; tmp: C scratch). */
static mr_status global_virtual_coil(const float *imgs, int64_t ns, int64_t C, cplx *G, cplx *vref, cplx *tmp)
{
    for (int64_t r = 0; r < ns; r++)
        for (int64_t i = 0; i < C; i++) {
            const cplx xi = pix(imgs, ns, i, r);
            for (int64_t j = 0; j < C; j++)
                G[i * C + j] += xi * conj(pix(imgs, ns, j, r));
        }
    for (int64_t i = 0; i < C; i++)
        vref[i] = 1.0 / sqrt((double)C);
    if (!(power_iteration(G, C, vref, tmp) > 0))
        return mr_error(MR_EINVAL, "coil maps: the coil images are all zero");
    return MR_OK;
}

/* R = sum of x x^H over the window of half-width h around voxel (x, y, z) of the calibration grid
 * (Hermitian, both triangles filled); xr: C scratch. */
static void window_correlation(const float *imgs, int64_t C, const int64_t small[3], int64_t x, int64_t y, int64_t z,
                               int h, cplx *xr, cplx *R)
{
    const int64_t ns = small[0] * small[1] * small[2];
    memset(R, 0, (size_t)(C * C) * sizeof *R);
    for (int64_t zz = z - h; zz <= z + h; zz++)
        for (int64_t yy = y - h; yy <= y + h; yy++)
            for (int64_t xx = x - h; xx <= x + h; xx++) {
                if (xx < 0 || yy < 0 || zz < 0 || xx >= small[0] || yy >= small[1] || zz >= small[2])
                    continue;
                const int64_t q = (zz * small[1] + yy) * small[0] + xx;
                for (int64_t c = 0; c < C; c++)
                    xr[c] = pix(imgs, ns, c, q);
                for (int64_t i = 0; i < C; i++)
                    for (int64_t j = 0; j <= i; j++)
                        R[i * C + j] += xr[i] * conj(xr[j]);
            }
    for (int64_t i = 0; i < C; i++)
        for (int64_t j = i + 1; j < C; j++)
            R[i * C + j] = conj(R[j * C + i]);
}

/* Per voxel of the calibration grid: the dominant eigenvector v (C per voxel) of the window's correlation
 * matrix, its phase aligned to v_ref, and its eigenvalue lam. Returns non-zero when a thread's scratch
 * could not be allocated. */
static int local_eigenvectors(const float *imgs, int64_t C, const int64_t small[3], const mr_coilmaps_opts *o,
                              const cplx *vref, cplx *v, double *lam)
{
    const int64_t ns = small[0] * small[1] * small[2];
    const int h = o->window / 2;
    int failed = 0;
#pragma omp parallel num_threads(o->threads > 0 ? o->threads : omp_get_max_threads())
    {
        cplx *R = malloc((size_t)(C * C) * sizeof *R), *w = malloc((size_t)C * sizeof *w),
             *t = malloc((size_t)C * sizeof *t), *xr = malloc((size_t)C * sizeof *xr);
        if (!R || !w || !t || !xr) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 16)
        for (int64_t r = 0; r < ns; r++) {
            if (!R || !w || !t || !xr)
                continue;
            const int64_t x = r % small[0], y = (r / small[0]) % small[1], z = r / (small[0] * small[1]);
            window_correlation(imgs, C, small, x, y, z, h, xr, R);
            memcpy(w, vref, (size_t)C * sizeof *w);
            lam[r] = power_iteration(R, C, w, t);
            /* phase of the virtual coil's projection removed: v_ref^H v real >= 0 */
            cplx p = 0;
            for (int64_t c = 0; c < C; c++)
                p += conj(vref[c]) * w[c];
            const cplx rot = cabs(p) > 0 ? conj(p) / cabs(p) : 1;
            for (int64_t c = 0; c < C; c++)
                v[r * C + c] = w[c] * rot;
        }
        free(R);
        free(w);
        free(t);
        free(xr);
    }
    return failed;
}

/* filled[r]: voxel r's eigenvalue is >= threshold x the largest (and > 0); returns how many are. */
static int64_t threshold_mask(const double *lam, int64_t ns, double threshold, unsigned char *filled)
{
    double lmax = 0;
    for (int64_t r = 0; r < ns; r++)
        lmax = fmax(lmax, lam[r]);
    int64_t kept = 0;
    for (int64_t r = 0; r < ns; r++) {
        filled[r] = lam[r] >= threshold * lmax && lam[r] > 0;
        kept += filled[r];
    }
    return kept;
}

/* The maps on the image matrix (same FOV): v trilinearly interpolated from the calibration grid,
 * renormalised per voxel. */
static void interpolate_to_matrix(const cplx *v, int64_t C, const int64_t small[3], const int64_t matrix[3],
                                  int threads, float *maps)
{
    const int64_t N = matrix[0] * matrix[1] * matrix[2];
#pragma omp parallel for schedule(static) num_threads(threads > 0 ? threads : omp_get_max_threads())
    for (int64_t z = 0; z < matrix[2]; z++) {
        cplx *acc = malloc((size_t)C * sizeof *acc);
        if (!acc)
            continue; /* cannot happen in practice; leaves zeros */
        for (int64_t y = 0; y < matrix[1]; y++)
            for (int64_t x = 0; x < matrix[0]; x++) {
                const int64_t idx[3] = {x, y, z};
                int64_t j0[3], j1[3];
                double f[3];
                for (int a = 0; a < 3; a++) {
                    double tpos = small[a] > 1 ? (double)(idx[a] - matrix[a] / 2) * (double)small[a] / (double)matrix[a] +
                                                     (double)(small[a] / 2)
                                               : 0.0;
                    double fl = floor(tpos);
                    j0[a] = (int64_t)fl;
                    f[a] = tpos - fl;
                    j1[a] = j0[a] + 1;
                    if (j0[a] < 0) {
                        j0[a] = j1[a] = 0;
                        f[a] = 0;
                    }
                    if (j1[a] > small[a] - 1) {
                        j1[a] = small[a] - 1;
                        if (j0[a] > small[a] - 1)
                            j0[a] = small[a] - 1;
                    }
                }
                for (int64_t c = 0; c < C; c++)
                    acc[c] = 0;
                for (int corner = 0; corner < 8; corner++) {
                    double wgt = 1;
                    int64_t q[3];
                    for (int a = 0; a < 3; a++) {
                        int hi = (corner >> a) & 1;
                        q[a] = hi ? j1[a] : j0[a];
                        wgt *= hi ? f[a] : 1 - f[a];
                    }
                    if (wgt == 0)
                        continue;
                    const int64_t s = (q[2] * small[1] + q[1]) * small[0] + q[0];
                    for (int64_t c = 0; c < C; c++)
                        acc[c] += wgt * v[s * C + c];
                }
                double nrm = 0;
                for (int64_t c = 0; c < C; c++)
                    nrm += creal(acc[c] * conj(acc[c]));
                nrm = sqrt(nrm);
                const int64_t r = (z * matrix[1] + y) * matrix[0] + x;
                for (int64_t c = 0; c < C; c++) {
                    const cplx m = nrm > 0 ? acc[c] / nrm : 0;
                    maps[2 * (c * N + r)] = (float)creal(m);
                    maps[2 * (c * N + r) + 1] = (float)cimag(m);
                }
            }
        free(acc);
    }
}

mr_status mr_coilmaps_from_images(const float *imgs, int64_t C, const int64_t small[3], const int64_t matrix[3],
                                  const mr_coilmaps_opts *o, float *maps)
{
    mr_coilmaps_opts def;
    if (!o) {
        mr_coilmaps_opts_default(&def);
        o = &def;
    }
    if (C < 1 || C > 4096)
        return mr_error(MR_EINVAL, "coil maps: %lld coils", (long long)C);
    if (o->window < 1 || o->window > 15 || o->window % 2 == 0)
        return mr_error(MR_EINVAL, "coil maps: window %d is not an odd number in 1..15", o->window);
    mr_status st = mr_matrix_check(small, "coil maps: calibration grid");
    if (st == MR_OK)
        st = mr_matrix_check(matrix, "coil maps: image matrix");
    if (st != MR_OK)
        return st;
    const int64_t ns = small[0] * small[1] * small[2];
    cplx *v = malloc((size_t)(ns * C) * sizeof *v);
    double *lam = malloc((size_t)ns * sizeof *lam);
    unsigned char *filled = malloc((size_t)ns);
    cplx *G = calloc((size_t)(C * C), sizeof *G), *vref = malloc((size_t)C * sizeof *vref),
         *tmp = malloc((size_t)C * sizeof *tmp);
    if (!v || !lam || !filled || !G || !vref || !tmp) {
        st = mr_error(MR_ENOMEM, "coil maps: out of memory for %lld coils on %lld voxels", (long long)C, (long long)ns);
        goto done;
    }
    if ((st = global_virtual_coil(imgs, ns, C, G, vref, tmp)) != MR_OK)
        goto done;
    if (local_eigenvectors(imgs, C, small, o, vref, v, lam)) {
        st = mr_error(MR_ENOMEM, "coil maps: out of memory for the correlation matrices");
        goto done;
    }
    const int64_t kept = threshold_mask(lam, ns, o->threshold, filled);
    mr_log(MR_LOG_DEBUG, "coil maps: %lld coils, calibration grid %lldx%lldx%lld, %lld of %lld voxels above the "
                         "threshold",
           (long long)C, (long long)small[0], (long long)small[1], (long long)small[2], (long long)kept, (long long)ns);
    if ((st = fill_outside(v, filled, small, C)) != MR_OK)
        goto done;
    interpolate_to_matrix(v, C, small, matrix, o->threads, maps);
done:
    free(v);
    free(lam);
    free(filled);
    free(G);
    free(vref);
    free(tmp);
    return st;
}

mr_status mr_coilmaps_grid(const int64_t matrix[3], const float *traj, int64_t m, const float *data, int64_t C,
                           const int64_t grid[3], int taper, int threads, float *imgs)
{
    /* the samples inside the box, optionally Hann-tapered toward its edge */
    int64_t msub = 0;
    for (int64_t i = 0; i < m; i++) {
        int in = 1;
        for (int a = 0; a < 3; a++)
            in &= !active(matrix, a) || fabs((double)traj[3 * i + a]) < 0.5 * (double)grid[a];
        msub += in;
    }
    if (msub < 16)
        return mr_error(MR_EINVAL, "coil maps: only %lld samples inside the %lldx%lldx%lld calibration region",
                        (long long)msub, (long long)grid[0], (long long)grid[1], (long long)grid[2]);
    const int64_t ns = grid[0] * grid[1] * grid[2];
    mr_status st = MR_OK;
    int64_t *idx = malloc((size_t)msub * sizeof *idx);
    float *tsub = malloc((size_t)msub * 3 * sizeof *tsub), *w = malloc((size_t)msub * sizeof *w),
          *tap = malloc((size_t)msub * sizeof *tap), *vals = malloc((size_t)msub * 2 * sizeof *vals);
    mr_gridding *g = NULL;
    if (!idx || !tsub || !w || !tap || !vals) {
        st = mr_error(MR_ENOMEM, "coil maps: out of memory");
        goto done;
    }
    msub = 0;
    for (int64_t i = 0; i < m; i++) {
        int in = 1;
        double t = 1;
        for (int a = 0; a < 3; a++) {
            if (!active(matrix, a))
                continue;
            double k = traj[3 * i + a];
            in &= fabs(k) < 0.5 * (double)grid[a];
            double c = cos(M_PI * k / (double)grid[a]);
            t *= c * c;
        }
        if (!in)
            continue;
        idx[msub] = i;
        memcpy(tsub + 3 * msub, traj + 3 * i, 3 * sizeof(float));
        tap[msub] = taper ? (float)t : 1.0f;
        msub++;
    }
    if ((st = mr_dcf_pipe(grid, tsub, msub, 0, threads, w)) != MR_OK)
        goto done;
    mr_gridding_opts gopt;
    mr_gridding_opts_default(&gopt);
    gopt.threads = threads;
    if ((st = mr_gridding_create(&g, grid, tsub, msub, &gopt)) != MR_OK)
        goto done;
    for (int64_t c = 0; c < C && st == MR_OK; c++) {
        for (int64_t s = 0; s < msub; s++) {
            const float *d = data + 2 * (c * m + idx[s]);
            vals[2 * s] = d[0] * tap[s];
            vals[2 * s + 1] = d[1] * tap[s];
        }
        st = mr_gridding_apply(g, vals, w, imgs + 2 * c * ns);
    }
done:
    mr_gridding_destroy(g);
    free(idx);
    free(tsub);
    free(w);
    free(tap);
    free(vals);
    return st;
}

mr_status mr_coilmaps_estimate(const int64_t matrix[3], const float *traj, int64_t m, const float *data, int64_t C,
                               const mr_coilmaps_opts *o, float *maps, int64_t small_out[3])
{
    mr_coilmaps_opts def;
    if (!o) {
        mr_coilmaps_opts_default(&def);
        o = &def;
    }
    int64_t small[3];
    mr_status st = MR_OK;
    if (o->calib > 0) {
        for (int a = 0; a < 3; a++)
            small[a] = active(matrix, a) ? (o->calib < matrix[a] ? o->calib : matrix[a]) : 1;
    } else if ((st = mr_coilmaps_calib_size(matrix, traj, m, o, small)) != MR_OK) {
        return st;
    }
    if (small_out)
        memcpy(small_out, small, sizeof small);
    const int64_t ns = small[0] * small[1] * small[2];
    float *imgs = malloc((size_t)(ns * C) * 2 * sizeof *imgs);
    if (!imgs)
        return mr_error(MR_ENOMEM, "coil maps: out of memory");
    st = mr_coilmaps_grid(matrix, traj, m, data, C, small, 1, o->threads, imgs);
    if (st == MR_OK)
        st = mr_coilmaps_from_images(imgs, C, small, matrix, o, maps);
    free(imgs);
    return st;
}
