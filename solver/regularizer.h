/* Quadratic regularisers for the CG normal equations (F^H W F + lambda R^H R) x = F^H W d.
 *
 *   identity:  R = I, so R^H R x = x.
 *   gradient:  R = forward differences along every axis a with N_a > 1, Neumann boundary (the
 *              difference across the last voxel of a row is 0, no wrap-around), so
 *              (R^H R x)_n = sum_a [ (x_n - x_{n-1})  if n_a > 0 ] + [ (x_n - x_{n+1}) if n_a < N_a-1 ],
 *              the negative Laplacian with reflecting boundaries.
 *
 * Images are [Nz][Ny][Nx][2] interleaved complex float on the host. */
#ifndef MR_REGULARIZER_H
#define MR_REGULARIZER_H

#include <stdint.h>

#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { MR_REG_IDENTITY = 0, MR_REG_GRADIENT = 1 } mr_reg_kind;

typedef struct {
    mr_reg_kind kind;
    int64_t matrix[3]; /* Nx, Ny, Nz */
    int threads;       /* <= 0: the OpenMP default */
} mr_regularizer;

/* "identity" | "gradient" -> kind; MR_EINVAL naming the text otherwise. */
mr_status mr_reg_parse(const char *text, mr_reg_kind *kind);
const char *mr_reg_name(mr_reg_kind kind);

/* out = R^H R in. `reg` is a mr_regularizer* (void* so that it is a CG apply callback).
 * in and out must not overlap. */
mr_status mr_reg_apply(void *reg, const float *in, float *out);

/* ||R x||^2 in double (the penalty value; tests check <x, R^H R x> against it). */
double mr_reg_value(const mr_regularizer *reg, const float *x);

#ifdef __cplusplus
}
#endif
#endif
