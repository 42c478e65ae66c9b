/* The spreading kernel of the non-uniform FFT (solver/nufft.h, gpu/nufft.h) and how its parameters
 * follow the requested tolerance: the "exponential of semicircle" (ES) kernel of Barnett, Magland &
 * af Klinteberg (SIAM J. Sci. Comput. 41, 2019), in fine-grid cells t (|t| <= w/2):
 *
 *   phi(t) = exp(beta (sqrt(1 - (2t/w)^2) - 1))
 *
 * with width w and shape beta from the tolerance eps and the upsampling factor sigma (fine grid
 * n_f >= sigma n per axis):
 *   sigma = 2:     w = ceil(log10(1/eps)) + 1,                       beta = 2.30 w
 *   other sigma:   w = ceil(ln(1/eps) / (pi sqrt(1 - 1/sigma))),      beta = 0.97 pi (1 - 1/(2 sigma)) w
 * (the published estimates; measured against float64 direct sums the error is 0.1-3.5x eps,
 * docs/NUFFT.md). Where the tolerance needs a width beyond MR_NUFFT_MAX_WIDTH the factor cannot be
 * used (1.25 below about 1e-14).
 * The arithmetic's own floor: the deconvolution divides by phi^ down to phi^(1/(2 sigma)), which
 * magnifies the rounding of the grid sums by amp = phi^(0) / phi^(1/(2 sigma)) (2.4 at sigma = 2,
 * w = 7; 93 at sigma = 1.25, w = 10): about 4 u amp with u the unit roundoff, so float32 reaches
 * 1e-6 at sigma = 2 but only about 2e-5 at 1.25.
 * A sample at fine coordinate u touches the w points j0 .. j0 + w - 1, j0 = ceil(u - w/2); with
 * v = 2 (j0 - u + w/2) - 1 in [-1, 1) the w kernel values are polynomials of v: phi(j0 + i - u) =
 * sum_d coef[d][i] v^d (Chebyshev interpolation on each of the w cells, converted to powers of v:
 * Horner evaluation of all w values at once, no exp per point). The deconvolution factor of mode p
 * on an axis with fine size n_f is 1 / phi^(p / n_f), phi^ the kernel's Fourier transform computed by
 * Gauss-Legendre quadrature.
 *
 * Plain arithmetic, no allocation beyond what the caller owns: also used to size the GPU plans. */
#ifndef MR_NUFFT_KERNEL_H
#define MR_NUFFT_KERNEL_H

#include <stdint.h>

#include "../base/grid.h"
#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MR_NUFFT_MAX_WIDTH 24
#define MR_NUFFT_MAX_DEGREE 24
#define MR_NUFFT_TOL_MIN 1e-12
#define MR_NUFFT_TOL_MAX 1e-1
/* Tolerances down to this run in float32; tighter ones in float64 (float32's rounding of the grid
 * sums and FFTs sits near 1e-7 relative). */
#define MR_NUFFT_F32_MIN_TOL 1e-6

typedef enum { MR_NUFFT_PREC_AUTO = 0, MR_NUFFT_PREC_F32 = 1, MR_NUFFT_PREC_F64 = 2 } mr_nufft_precision;

/* Where the transform runs: the cost model's constants differ. */
typedef enum { MR_NUFFT_ON_CPU = 0, MR_NUFFT_ON_GPU = 1 } mr_nufft_target;

typedef struct {
    double tol;                   /* requested relative error (MR_NUFFT_TOL_MIN..MAX); default 1e-6 */
    double upsample;              /* 0 (default): 2 or 1.25, the faster by the cost model; else sigma in [1.25, 3] */
    mr_nufft_precision precision; /* AUTO (default): float32 for tol >= MR_NUFFT_F32_MIN_TOL, else float64 */
    int threads;                  /* host threads, <= 0: all cores */
} mr_nufft_opts;

void mr_nufft_opts_default(mr_nufft_opts *o);

/* The resolved parameters of one transform. */
typedef struct {
    int width;          /* w, kernel width in fine-grid cells (1 on inactive axes: see active) */
    int degree;         /* polynomial degree of the kernel's per-cell fit */
    double beta;        /* ES shape */
    double upsample;    /* sigma */
    mr_nufft_precision precision; /* F32 or F64 */
    int64_t n[3];       /* modes per axis (the grid's n) */
    int64_t fine[3];    /* fine grid per axis: an FFT-friendly even size >= max(sigma n, 2w); 1 where n = 1 */
    int active[3];      /* axes with n > 1 */
    int dim;            /* number of active axes (0: a single voxel) */
    double bound;       /* the error estimate: the kernel's (10^-(w-1) at sigma 2, exp(-pi w sqrt(1 - 1/sigma))
                           otherwise), plus the arithmetic's floor 4 u amp, plus the fit's error times amp */
    double amp;         /* phi^(0) / phi^(1/(2 sigma)): the deconvolution's largest magnification */
    double fit_error;   /* max |polynomial - phi| over the cells, relative to phi(0) = 1 */
    double cost;        /* the cost model's estimate in seconds, one coil, type 1 (spreading + FFT) */
    double coef[MR_NUFFT_MAX_DEGREE + 1][MR_NUFFT_MAX_WIDTH]; /* coef[d][i]: phi at point i, power d of v */
} mr_nufft_params;

/* Parameters of a transform on grid g (its n; the modes are g's voxels) for m samples: o->tol and
 * o->upsample as above; with upsample 0 the factors 2 and 1.25 are costed for `target` and the faster
 * of those whose bound meets the tolerance taken (2 when neither does). MR_EINVAL naming the value for
 * a tolerance or factor out of range, or a factor whose kernel would be wider than MR_NUFFT_MAX_WIDTH. */
mr_status mr_nufft_params_choose(const mr_grid *g, int64_t m, const mr_nufft_opts *o, mr_nufft_target target,
                                 mr_nufft_params *out);

/* A kernel as a function of the offset t in grid cells (|t| <= width/2); ctx is the caller's. */
typedef double (*mr_nufft_kernel_fn)(void *ctx, double t);

/* Fit p->coef (p->width cells) to fn: the lowest degree whose largest error is within want (or within twice
 * the best any degree reaches); sets p->degree and p->fit_error. */
void mr_nufft_fit(mr_nufft_params *p, mr_nufft_kernel_fn fn, void *ctx, double want);

/* phi(t) of the parameters (0 outside |t| <= w/2). */
double mr_nufft_kernel(const mr_nufft_params *p, double t);

/* The kernel's Fourier transform int phi(t) e^{-i 2 pi xi t} dt at xi (cycles per fine cell). */
double mr_nufft_kernel_ft(const mr_nufft_params *p, double xi);

/* Deconvolution factors of axis a of grid g: out[i] = 1 / phi^((i - g->center[a]) / fine[a]) for
 * i < g->n[a] (1 on an inactive axis). out holds g->n[a] doubles. */
void mr_nufft_deconv(const mr_nufft_params *p, const mr_grid *g, int a, double *out);

/* Bytes of the largest buffers of one transform of these parameters with m samples on the host:
 * the fine grid (complex, the precision's size), the sorted samples, the deconvolution vectors. */
int64_t mr_nufft_host_bytes(const mr_nufft_params *p, int64_t m);

#ifdef __cplusplus
}
#endif
#endif
