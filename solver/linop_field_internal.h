/* Internals of the field-corrected operators (solver/linop_field.h): the segment fit
 * (solver/linop_field_fit.c), the multi-kernel Toeplitz normal on the host
 * (solver/linop_field_tp.c). Not part of the library's interface; the tests call the fit. */
#ifndef MR_LINOP_FIELD_INTERNAL_H
#define MR_LINOP_FIELD_INTERNAL_H

#include <stdint.h>

#include "../base/status.h"
#include "linop_field.h"

/* ---- shared by solver/linop_field.c and solver/linop_field_seg.c ----------------------------------- */

/* s_m = sqrt(w_m) Phi(k_m) / N (the scaling of mr_linop_nudft_create) into s [M] and qw = s^2 (either may
 * be NULL); weights NULL: all ones. */
void field_sample_scale(const int64_t matrix[3], const float *traj, int64_t m, const float *weights, mr_basis basis,
                        float *s, float *qw);
/* The checks of every field operator's inputs; MR_EINVAL naming what is missing or wrong. */
mr_status field_check_input(const int64_t matrix[3], const float *traj, const float *time, const float *fieldmap,
                            int64_t m, const float *weights, int64_t ncoils);

/* ---- the fit ------------------------------------------------------------------------------------
 * The rectangle [w_c - W/2, w_c + W/2] x [t_c - T/2, t_c + T/2] (Hz x s) and L segments:
 *  frequency: B_l(t) = e^{-i2pi (w_c + s_l)(t - t_c)},            C_l(w) = e^{-i2pi w t_c} beta_l(w - w_c)
 *  time:      B_l(t) = e^{-i2pi w_c (t - t_c - s_l)} beta_l(t - t_c), C_l(w) = e^{-i2pi w (t_c + s_l)}
 * with nodes s_l = (l - (L-1)/2) D (D = W/L or T/L) and beta(v) = P y(v), y_k(v) = e^{-i2pi u_k v}: the
 * least-squares fit of e^{-i2pi u v} by sum_l beta_l e^{-i2pi u s_l} over K Chebyshev points u_k of the
 * other variable's centred interval, regularised by mu ||beta||^2 (mu = K (tol/100)^2). */
typedef struct {
    mr_field_model model; /* FREQUENCY or TIME */
    int L, K;
    double wc, tc, W, T;
    double step;  /* D */
    double *u;    /* [K] */
    double *proj; /* P, [L][K][2] */
    int ntab;     /* field_fit_tabulate: beta at ntab points of [-half, half], else 0 (beta evaluated directly) */
    double half;
    double *tab;  /* [ntab][L][2] */
} field_fit;

mr_status field_fit_make(field_fit *f, mr_field_model model, int L, double wmin, double wmax, double tmin,
                         double tmax, double tol);
void field_fit_free(field_fit *f);
/* Tabulate beta at `points` equally spaced values of its variable's centred interval: afterwards B_l or
 * C_l (whichever is fitted) interpolate beta linearly (error ~ (pi T)^2 D^2 / 8 |beta| for the table step
 * D, below 1e-7 with 8193 points over the ranges met) instead of K sin/cos and L K products per value. */
mr_status field_fit_tabulate(field_fit *f, int points);
/* B_l(t), l < L, into b [L][2]; C_l(w) into c [L][2]. */
void field_fit_b(const field_fit *f, double t, double *b);
void field_fit_c(const field_fit *f, double w, double *c);
/* max and rms of |e^{-i2pi w t} - sum_l B_l(t) C_l(w)| over a 97 x 97 grid of the rectangle. */
void field_fit_bound(const field_fit *f, double *max, double *rms);
/* The smallest L (<= MR_FIELD_MAX_SEGMENTS) with bound_max <= tol, its fit in *f (or L = segments when
 * segments > 0). MR_EINVAL naming the field range and readout length when even the largest L misses. */
mr_status field_fit_choose(field_fit *f, mr_field_model model, int segments, double wmin, double wmax, double tmin,
                           double tmax, double tol);

/* ---- the multi-kernel Toeplitz normal on the host --------------------------------------------------
 * y_c = sum_{l,l'} conj(C_l) . T_{l l'} (C_l' . x_c) per coil, T_{l l'} the circular convolution on the 2N
 * grid with spectrum H_{kidx[l][l']} (conjugated where kconj[l][l'] is 1). h: nk spectra [P][2] (already
 * divided by P), C: [L][N][2], both host, copied. */
typedef struct field_tp field_tp;
mr_status field_tp_create(field_tp **out, const int64_t matrix[3], int L, int nk, const int *kidx, const int *kconj,
                          const float *const *h, const float *coef, int threads);
mr_status field_tp_apply(field_tp *t, int64_t ncoils, const float *x, float *y);
void field_tp_destroy(field_tp *t);

/* The kernel spectrum of Q (mr_grid_q layout, host [nq][2]) into h [P][2], divided by P: the circulant
 * arrangement of solver/toeplitz.h, then a full FFT (host). */
mr_status field_tp_spectrum(const int64_t matrix[3], const float *q, float *h, int threads);

#endif
