/* Trajectories and their analytic density compensation (traj.h, docs/PHANTOMS.md). */
#include "traj.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../io/kspace.h"
#include "noise.h"

#define PI 3.14159265358979323846

static const char *const kind_names[] = {
#define MR_TRAJ_NAME(name, text) text,
    MR_TRAJ_TABLE(MR_TRAJ_NAME)
#undef MR_TRAJ_NAME
};

const char *mr_traj_kind_name(mr_traj_kind kind)
{
    return (kind >= 0 && kind < MR_TRAJ_COUNT) ? kind_names[kind] : NULL;
}

mr_status mr_traj_kind_parse(const char *text, mr_traj_kind *kind)
{
    for (int i = 0; i < MR_TRAJ_COUNT; i++)
        if (text && strcmp(text, kind_names[i]) == 0) {
            *kind = (mr_traj_kind)i;
            return MR_OK;
        }
    return mr_error(MR_EINVAL, "unknown trajectory '%s'", text ? text : "(null)");
}

int mr_traj_kind_is_3d(mr_traj_kind kind)
{
    return kind == MR_TRAJ_KOOSHBALL || kind == MR_TRAJ_STACK_OF_STARS || kind == MR_TRAJ_STACK_OF_SPIRALS;
}

static int is_spiral(mr_traj_kind k) { return k == MR_TRAJ_SPIRAL2D || k == MR_TRAJ_STACK_OF_SPIRALS; }
static int is_stack(mr_traj_kind k) { return k == MR_TRAJ_STACK_OF_STARS || k == MR_TRAJ_STACK_OF_SPIRALS; }

static int64_t max_inplane(const int64_t matrix[3]) { return matrix[0] > matrix[1] ? matrix[0] : matrix[1]; }

double mr_traj_spiral_turns(const mr_traj_params *p)
{
    if (p->turns > 0)
        return p->turns;
    return (double)max_inplane(p->matrix) / (2.0 * (double)(p->interleaves > 0 ? p->interleaves : 1));
}

/* Archimedean arm in normalised units: rho = A theta, theta in [0, Theta], Theta = 2 pi T,
 * A = 1/(2 Theta) so that rho(Theta) = 1/2. Arc length s(theta) = A/2 (theta sqrt(1+theta^2) +
 * asinh theta). */
static double arc_length(double a, double th) { return 0.5 * a * (th * sqrt(1.0 + th * th) + asinh(th)); }

/* theta with s(theta) = s, by Newton's method from below (s is convex, so iterates from a
 * lower guess increase monotonically). */
static double arc_inverse(double a, double s, double theta_max)
{
    if (s <= 0)
        return 0.0;
    double th = fmin(s / a, sqrt(2.0 * s / a));
    for (int it = 0; it < 100; it++) {
        double d = (arc_length(a, th) - s) / (a * sqrt(1.0 + th * th));
        th -= d;
        if (fabs(d) <= 1e-15 * (1.0 + th))
            break;
    }
    return th < theta_max ? th : theta_max;
}

int64_t mr_traj_spiral_readout(const mr_traj_params *p, double spacing)
{
    double theta_max = 2.0 * PI * mr_traj_spiral_turns(p);
    double a = 1.0 / (2.0 * theta_max);
    double len = arc_length(a, theta_max) * (double)max_inplane(p->matrix); /* cycles/FOV */
    int64_t r = (int64_t)ceil(len / spacing) + 1;
    return r < 2 ? 2 : r;
}

void mr_traj_params_default(mr_traj_params *p, mr_traj_kind kind, const int64_t matrix[3])
{
    memset(p, 0, sizeof *p);
    p->kind = kind;
    memcpy(p->matrix, matrix, sizeof p->matrix);
    int64_t n2 = max_inplane(matrix);
    int64_t n3 = n2 > matrix[2] ? n2 : matrix[2];
    p->readout = 2 * (kind == MR_TRAJ_KOOSHBALL ? n3 : n2);
    p->spokes = kind == MR_TRAJ_KOOSHBALL ? (int64_t)lround(PI * (double)n3 * (double)n3 / 2.0)
                                          : (int64_t)lround(PI * (double)n2 / 2.0);
    if (p->spokes < 1)
        p->spokes = 1;
    p->interleaves = 16;
    p->turns = 0;
    p->partitions = matrix[2];
    p->samples = 2 * matrix[0] * matrix[1];
    p->seed = 1;
    if (is_spiral(kind))
        p->readout = mr_traj_spiral_readout(p, 0.5);
}

/* a * b with an upper bound; 0 when the product exceeds it. */
static int64_t mul_capped(int64_t a, int64_t b, int64_t cap)
{
    if (a <= 0 || b <= 0 || a > cap / b)
        return 0;
    return a * b;
}

mr_status mr_traj_count(const mr_traj_params *p, int64_t *m)
{
    *m = 0;
    const char *name = mr_traj_kind_name(p->kind);
    if (!name)
        return mr_error(MR_EINVAL, "trajectory: unknown kind %d", (int)p->kind);
    mr_status st = mr_matrix_check(p->matrix, name);
    if (st != MR_OK)
        return st;
    int is3d = mr_traj_kind_is_3d(p->kind);
    if (!is3d && p->matrix[2] != 1)
        return mr_error(MR_EINVAL, "%s: a 2D trajectory needs Nz = 1, got %lld", name, (long long)p->matrix[2]);
    if (is3d && p->matrix[2] < 2)
        return mr_error(MR_EINVAL, "%s: a 3D trajectory needs Nz >= 2, got %lld", name, (long long)p->matrix[2]);
    const int64_t cap = MR_MAX_SAMPLES;
    int64_t count = 0;
    if (p->kind == MR_TRAJ_RANDOM2D) {
        if (p->samples < 1 || p->samples > cap)
            return mr_error(MR_EINVAL, "%s: samples = %lld is outside 1..%lld", name, (long long)p->samples,
                            (long long)cap);
        *m = p->samples;
        return MR_OK;
    }
    if (p->readout < 2 || p->readout > cap)
        return mr_error(MR_EINVAL, "%s: readout = %lld is outside 2..%lld", name, (long long)p->readout,
                        (long long)cap);
    if (is_spiral(p->kind)) {
        if (p->interleaves < 1 || p->interleaves > cap)
            return mr_error(MR_EINVAL, "%s: interleaves = %lld must be >= 1", name, (long long)p->interleaves);
        if (!(p->turns >= 0) || !isfinite(p->turns) || p->turns > 1e6)
            return mr_error(MR_EINVAL, "%s: turns = %g must be 0 (automatic) or in (0, 1e6]", name, p->turns);
        count = mul_capped(p->interleaves, p->readout, cap);
    } else {
        if (p->spokes < 1 || p->spokes > cap)
            return mr_error(MR_EINVAL, "%s: spokes = %lld must be >= 1", name, (long long)p->spokes);
        count = mul_capped(p->spokes, p->readout, cap);
    }
    if (is_stack(p->kind)) {
        if (p->partitions < 1 || p->partitions > cap)
            return mr_error(MR_EINVAL, "%s: partitions = %lld must be >= 1", name, (long long)p->partitions);
        count = mul_capped(count, p->partitions, cap);
    }
    if (count < 1)
        return mr_error(MR_EINVAL, "%s: the trajectory would have more than %lld samples", name, (long long)cap);
    *m = count;
    return MR_OK;
}

/* Spoke angle in [0, pi). */
static double spoke_angle(mr_traj_kind kind, int64_t s, int64_t nspokes)
{
    if (kind == MR_TRAJ_GOLDEN2D)
        return fmod((double)s * MR_GOLDEN_ANGLE, PI);
    return PI * (double)s / (double)nspokes;
}

/* Normalised readout radius of sample j: (j - R/2)/R, in [-1/2, 1/2). */
static double readout_rho(int64_t j, int64_t r) { return (double)(j - r / 2) / (double)r; }

static void put(float *t, double kx, double ky, double kz)
{
    t[0] = (float)kx;
    t[1] = (float)ky;
    t[2] = (float)kz;
}

/* In-plane star (radial spokes, uniform angles) for one partition at kz. */
static void gen_star(const mr_traj_params *p, mr_traj_kind angles, double kz, float *t)
{
    const double nx = (double)p->matrix[0], ny = (double)p->matrix[1];
    for (int64_t s = 0; s < p->spokes; s++) {
        double th = spoke_angle(angles, s, p->spokes), c = cos(th), sn = sin(th);
        for (int64_t j = 0; j < p->readout; j++, t += 3) {
            double rho = readout_rho(j, p->readout);
            put(t, rho * nx * c, rho * ny * sn, kz);
        }
    }
}

/* Arm angles theta_j (j = 0..R-1), uniform in arc length. */
static void spiral_thetas(const mr_traj_params *p, double *theta)
{
    double theta_max = 2.0 * PI * mr_traj_spiral_turns(p);
    double a = 1.0 / (2.0 * theta_max);
    double len = arc_length(a, theta_max);
    for (int64_t j = 0; j < p->readout; j++)
        theta[j] = j == p->readout - 1 ? theta_max
                                       : arc_inverse(a, len * (double)j / (double)(p->readout - 1), theta_max);
}

static void gen_spiral(const mr_traj_params *p, const double *theta, double kz, float *t)
{
    const double nx = (double)p->matrix[0], ny = (double)p->matrix[1];
    double a = 1.0 / (2.0 * theta[p->readout - 1]);
    for (int64_t l = 0; l < p->interleaves; l++) {
        double rot = 2.0 * PI * (double)l / (double)p->interleaves;
        for (int64_t j = 0; j < p->readout; j++, t += 3) {
            double rho = a * theta[j], al = theta[j] + rot;
            put(t, rho * nx * cos(al), rho * ny * sin(al), kz);
        }
    }
}

/* Kooshball spoke direction s of S: equal-area rings in z over the upper hemisphere,
 * azimuth advanced by the golden angle of the circle, 2 pi (1 - 1/phi) = pi (3 - sqrt 5). */
static void koosh_dir(int64_t s, int64_t nspokes, double d[3])
{
    double z = ((double)s + 0.5) / (double)nspokes;
    double az = fmod((double)s * PI * (3.0 - sqrt(5.0)), 2.0 * PI);
    double rxy = sqrt(fmax(0.0, 1.0 - z * z));
    d[0] = rxy * cos(az);
    d[1] = rxy * sin(az);
    d[2] = z;
}

static double partition_kz(const mr_traj_params *p, int64_t part)
{
    return (double)(part - p->partitions / 2) * (double)p->matrix[2] / (double)p->partitions;
}

mr_status mr_traj_generate(const mr_traj_params *p, float *traj)
{
    int64_t m;
    mr_status st = mr_traj_count(p, &m);
    if (st != MR_OK)
        return st;
    const double nx = (double)p->matrix[0], ny = (double)p->matrix[1], nz = (double)p->matrix[2];
    double *theta = NULL;
    if (is_spiral(p->kind)) {
        theta = malloc((size_t)p->readout * sizeof *theta);
        if (!theta)
            return mr_error(MR_ENOMEM, "%s: out of memory", mr_traj_kind_name(p->kind));
        spiral_thetas(p, theta);
    }
    switch (p->kind) {
    case MR_TRAJ_RADIAL2D:
    case MR_TRAJ_GOLDEN2D:
        gen_star(p, p->kind, 0.0, traj);
        break;
    case MR_TRAJ_SPIRAL2D:
        gen_spiral(p, theta, 0.0, traj);
        break;
    case MR_TRAJ_RANDOM2D: {
        mr_rng r;
        mr_rng_seed(&r, p->seed, MR_RNG_STREAM_TRAJ);
        for (int64_t i = 0; i < m; i++) {
            double u = mr_rng_uniform(&r) - 0.5, v = mr_rng_uniform(&r) - 0.5;
            put(traj + 3 * i, u * nx, v * ny, 0.0);
        }
        break;
    }
    case MR_TRAJ_KOOSHBALL:
        for (int64_t s = 0; s < p->spokes; s++) {
            double d[3];
            koosh_dir(s, p->spokes, d);
            for (int64_t j = 0; j < p->readout; j++) {
                double rho = readout_rho(j, p->readout);
                put(traj + 3 * (s * p->readout + j), rho * nx * d[0], rho * ny * d[1], rho * nz * d[2]);
            }
        }
        break;
    case MR_TRAJ_STACK_OF_STARS:
        for (int64_t q = 0; q < p->partitions; q++)
            gen_star(p, MR_TRAJ_RADIAL2D, partition_kz(p, q), traj + 3 * q * p->spokes * p->readout);
        break;
    case MR_TRAJ_STACK_OF_SPIRALS:
        for (int64_t q = 0; q < p->partitions; q++)
            gen_spiral(p, theta, partition_kz(p, q), traj + 3 * q * p->interleaves * p->readout);
        break;
    default:
        break;
    }
    free(theta);
    return MR_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Angular share of each spoke over [0, pi): half the gaps to its two neighbours (circularly).
 * dth [S]; tmp [2S] scratch. */
static void spoke_shares(mr_traj_kind kind, int64_t nspokes, double *dth, double *tmp)
{
    if (kind != MR_TRAJ_GOLDEN2D || nspokes == 1) {
        for (int64_t s = 0; s < nspokes; s++)
            dth[s] = PI / (double)nspokes;
        return;
    }
    for (int64_t s = 0; s < nspokes; s++) {
        tmp[2 * s] = spoke_angle(kind, s, nspokes);
        tmp[2 * s + 1] = (double)s;
    }
    qsort(tmp, (size_t)nspokes, 2 * sizeof(double), cmp_double);
    for (int64_t i = 0; i < nspokes; i++) {
        double prev = i > 0 ? tmp[2 * (i - 1)] : tmp[2 * (nspokes - 1)] - PI;
        double next = i < nspokes - 1 ? tmp[2 * (i + 1)] : tmp[0] + PI;
        dth[(int64_t)tmp[2 * i + 1]] = 0.5 * (next - prev);
    }
}

/* Weights of one star (in-plane area, before the Nx Ny scale), samples in generation order. */
static void weights_star(const mr_traj_params *p, const double *dth, double scale, float *w)
{
    double drho = 1.0 / (double)p->readout;
    for (int64_t s = 0; s < p->spokes; s++)
        for (int64_t j = 0; j < p->readout; j++, w++) {
            double rho = fabs(readout_rho(j, p->readout));
            /* the centre disk of radius drho/2 is shared among the spokes by angle */
            *w = (float)(scale * (rho > 0 ? dth[s] * rho * drho : dth[s] * drho * drho / 4.0));
        }
}

/* Spiral: dA = rho drho dalpha = A^2 theta dtheta dphi in (theta, arm-rotation) coordinates;
 * each arm stands for dphi = 2 pi/L; the first sample gets the centre disk shared by the arms. */
static void weights_spiral(const mr_traj_params *p, const double *theta, double scale, float *w)
{
    int64_t r = p->readout, nl = p->interleaves;
    double a = 1.0 / (2.0 * theta[r - 1]);
    for (int64_t l = 0; l < nl; l++)
        for (int64_t j = 0; j < r; j++, w++) {
            double v;
            if (j == 0) {
                double r1 = a * theta[1];
                v = PI * 0.25 * r1 * r1 / (double)nl;
            } else {
                double d = j < r - 1 ? 0.5 * (theta[j + 1] - theta[j - 1]) : 0.5 * (theta[j] - theta[j - 1]);
                v = 2.0 * PI / (double)nl * a * a * theta[j] * d;
            }
            *w = (float)(scale * v);
        }
}

mr_status mr_traj_weights(const mr_traj_params *p, float *w)
{
    int64_t m;
    mr_status st = mr_traj_count(p, &m);
    if (st != MR_OK)
        return st;
    const double nx = (double)p->matrix[0], ny = (double)p->matrix[1], nz = (double)p->matrix[2];
    double *buf = NULL;
    size_t nbuf = 0;
    if (is_spiral(p->kind))
        nbuf = (size_t)p->readout;
    else if (p->kind != MR_TRAJ_RANDOM2D)
        nbuf = 3 * (size_t)p->spokes;
    if (nbuf) {
        buf = malloc(nbuf * sizeof *buf);
        if (!buf)
            return mr_error(MR_ENOMEM, "%s: out of memory for weights", mr_traj_kind_name(p->kind));
    }
    switch (p->kind) {
    case MR_TRAJ_RADIAL2D:
    case MR_TRAJ_GOLDEN2D:
        spoke_shares(p->kind, p->spokes, buf, buf + p->spokes);
        weights_star(p, buf, nx * ny, w);
        break;
    case MR_TRAJ_STACK_OF_STARS: {
        spoke_shares(MR_TRAJ_RADIAL2D, p->spokes, buf, buf + p->spokes);
        int64_t per = p->spokes * p->readout;
        for (int64_t q = 0; q < p->partitions; q++)
            weights_star(p, buf, nx * ny * nz / (double)p->partitions, w + q * per);
        break;
    }
    case MR_TRAJ_SPIRAL2D:
    case MR_TRAJ_STACK_OF_SPIRALS: {
        spiral_thetas(p, buf);
        int64_t per = p->interleaves * p->readout;
        double dz = p->kind == MR_TRAJ_STACK_OF_SPIRALS ? nz / (double)p->partitions : 1.0;
        for (int64_t q = 0; q < (p->kind == MR_TRAJ_STACK_OF_SPIRALS ? p->partitions : 1); q++)
            weights_spiral(p, buf, nx * ny * dz, w + q * per);
        break;
    }
    case MR_TRAJ_RANDOM2D:
        for (int64_t i = 0; i < m; i++)
            w[i] = (float)(nx * ny / (double)m);
        break;
    case MR_TRAJ_KOOSHBALL: {
        /* each of the 2S half-spokes stands for a solid angle 4 pi/(2S) */
        double drho = 1.0 / (double)p->readout, dom = 2.0 * PI / (double)p->spokes, scale = nx * ny * nz;
        for (int64_t s = 0; s < p->spokes; s++)
            for (int64_t j = 0; j < p->readout; j++) {
                double rho = fabs(readout_rho(j, p->readout));
                double v = rho > 0 ? dom * rho * rho * drho : (4.0 * PI / 3.0) * pow(drho / 2.0, 3) / (double)p->spokes;
                w[s * p->readout + j] = (float)(scale * v);
            }
        break;
    }
    default:
        break;
    }
    free(buf);
    return MR_OK;
}
