/* Element-wise maps and reductions over interleaved complex float vectors, each written ONCE here and
 * run by both backends: the host loops of solver/vecops.c (OpenMP) and the one templated kernel of
 * gpu/ewise.cu. Pure arithmetic, no dependencies: every body is an inline function that C and CUDA
 * both compile (host and device).
 *
 * A map computes, for every element i < n of the call,
 *   MR_EW_AXPBY        out_i = a x_i + b y_i            (y may be NULL when b = 0)
 *   MR_EW_SOFT         out_i = x_i max(0, 1 - t w_i / |x_i|)       complex soft-thresholding:
 *                                                                  the prox of t sum_i w_i |x_i|
 *   MR_EW_PROJ         out_i = x_i / max(1, |x_i| / (t w_i))       projection onto |.| <= t w_i
 *   MR_EW_GROUP_SOFT   for each group i < n of G = groups elements x_{g n + i}, g < G (the layout of
 *                      the finite differences: component g of voxel i at g n + i):
 *                      out_g,i = x_g,i max(0, 1 - t w_i / ||x_.,i||)  the prox of t sum_i w_i ||x_.,i||
 *                      (isotropic total variation)
 *   MR_EW_GROUP_PROJ   out_g,i = x_g,i / max(1, ||x_.,i|| / (t w_i))
 * with w_i = 1 when w is NULL. out may be x or y (element by element, each read before it is written).
 * A reduction returns, in double,
 *   MR_EWR_L1          sum_i w_i |x_i|
 *   MR_EWR_GROUP_L2    sum_i w_i ||x_.,i||   (groups as above)
 * The float arithmetic of the maps is the same on both backends up to the compiler's contraction of
 * multiply-adds; reductions accumulate in double. */
#ifndef MR_EWISE_H
#define MR_EWISE_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define MR_EW_FN static inline __host__ __device__
#else
#define MR_EW_FN static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* X(name): the maps, in one list (the enum, the names, the kernel instantiations come from it). */
#define MR_EW_MAPS(X) X(AXPBY) X(SOFT) X(PROJ) X(GROUP_SOFT) X(GROUP_PROJ)
#define MR_EW_REDUCTIONS(X) X(L1) X(GROUP_L2)

typedef enum {
#define MR_EW_ENUM(name) MR_EW_##name,
    MR_EW_MAPS(MR_EW_ENUM)
#undef MR_EW_ENUM
    MR_EW_COUNT
} mr_ew_op;

typedef enum {
#define MR_EWR_ENUM(name) MR_EWR_##name,
    MR_EW_REDUCTIONS(MR_EWR_ENUM)
#undef MR_EWR_ENUM
    MR_EWR_COUNT
} mr_ewr_op;

/* The arguments of a map or reduction. Pointers are in the memory of the table that runs it. */
typedef struct {
    double a, b;     /* AXPBY */
    double t;        /* threshold / radius of SOFT, PROJ and the GROUP ones */
    const float *w;  /* real weights [n] (per element, or per group), or NULL: all 1 */
    int64_t groups;  /* G of the GROUP ones (>= 1): x, y, out hold G n complex elements */
} mr_ew_args;

/* |z| of a complex number, without overflow for any finite float */
MR_EW_FN float mr_ew_abs(float re, float im) { return hypotf(re, im); }

/* The factor that multiplies x: soft-thresholding max(0, 1 - tau / r), projection 1 / max(1, r / tau). */
MR_EW_FN float mr_ew_soft_factor(float r, float tau) { return r > tau ? 1.0f - tau / r : 0.0f; }
MR_EW_FN float mr_ew_proj_factor(float r, float tau) { return r > tau ? tau / r : 1.0f; }

MR_EW_FN float mr_ew_weight(const mr_ew_args *a, int64_t i) { return a->w ? a->w[i] : 1.0f; }

/* Element (or group) i of map OP. n is the call's count (the group stride). */
MR_EW_FN void mr_ew_apply(int op, int64_t i, int64_t n, float *out, const float *x, const float *y,
                          const mr_ew_args *a)
{
    if (op == MR_EW_AXPBY) {
        const float fa = (float)a->a, fb = (float)a->b;
        if (fb == 0.0f) { /* y may be NULL */
            out[2 * i] = fa * x[2 * i];
            out[2 * i + 1] = fa * x[2 * i + 1];
        } else {
            const float re = fa * x[2 * i] + fb * y[2 * i], im = fa * x[2 * i + 1] + fb * y[2 * i + 1];
            out[2 * i] = re;
            out[2 * i + 1] = im;
        }
    } else if (op == MR_EW_SOFT || op == MR_EW_PROJ) {
        const float tau = (float)a->t * mr_ew_weight(a, i), re = x[2 * i], im = x[2 * i + 1];
        const float r = mr_ew_abs(re, im);
        const float f = op == MR_EW_SOFT ? mr_ew_soft_factor(r, tau) : mr_ew_proj_factor(r, tau);
        out[2 * i] = f * re;
        out[2 * i + 1] = f * im;
    } else { /* GROUP_SOFT, GROUP_PROJ */
        const float tau = (float)a->t * mr_ew_weight(a, i);
        float s = 0.0f;
        for (int64_t g = 0; g < a->groups; g++) {
            const float re = x[2 * (g * n + i)], im = x[2 * (g * n + i) + 1];
            s += re * re + im * im;
        }
        const float r = sqrtf(s);
        const float f = op == MR_EW_GROUP_SOFT ? mr_ew_soft_factor(r, tau) : mr_ew_proj_factor(r, tau);
        for (int64_t g = 0; g < a->groups; g++) {
            const int64_t k = g * n + i;
            out[2 * k] = f * x[2 * k];
            out[2 * k + 1] = f * x[2 * k + 1];
        }
    }
}

/* Term i of reduction OP, in double. */
MR_EW_FN double mr_ew_term(int op, int64_t i, int64_t n, const float *x, const mr_ew_args *a)
{
    const double w = mr_ew_weight(a, i);
    if (op == MR_EWR_L1)
        return w * hypot((double)x[2 * i], (double)x[2 * i + 1]);
    double s = 0.0; /* GROUP_L2 */
    for (int64_t g = 0; g < a->groups; g++) {
        const double re = x[2 * (g * n + i)], im = x[2 * (g * n + i) + 1];
        s += re * re + im * im;
    }
    return w * sqrt(s);
}

#ifdef __cplusplus
}
#endif
#endif
