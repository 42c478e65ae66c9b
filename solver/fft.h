/* The one door to FFTW's planner. FFTW's planner is not thread-safe and its thread count is a
 * global setting, so every plan in mrirecon is made and destroyed here, under one lock, with
 * fftwf_init_threads called once. Executing a plan needs no lock. */
#ifndef MR_FFT_H
#define MR_FFT_H

#include <fftw3.h>

/* fftwf_plan_guru_dft(rank, dims, howmany_rank, howmany, in, out, sign, FFTW_ESTIMATE) with
 * nthreads FFTW threads (<= 1: single-threaded). FFTW_ESTIMATE keeps results reproducible. NULL
 * when FFTW cannot plan. The plan is owned by the caller: release it with mr_fft_destroy. */
fftwf_plan mr_fft_plan_guru(int rank, const fftwf_iodim *dims, int howmany_rank, const fftwf_iodim *howmany,
                            fftwf_complex *in, fftwf_complex *out, int sign, int nthreads);

/* A plain in-place rank-r transform of a contiguous array n[0] x ... x n[r-1] (last index fastest). */
fftwf_plan mr_fft_plan_dft(int rank, const int *n, fftwf_complex *buf, int sign, int nthreads);

void mr_fft_destroy(fftwf_plan p); /* NULL is fine */

/* The same two in float64 (fftw3, threaded), for the NUFFT's tolerances below float32's reach
 * (solver/nufft.h). Same lock: FFTW's planners are used one at a time in mrirecon. */
fftw_plan mr_fft64_plan_guru(int rank, const fftw_iodim *dims, int howmany_rank, const fftw_iodim *howmany,
                             fftw_complex *in, fftw_complex *out, int sign, int nthreads);
void mr_fft64_destroy(fftw_plan p); /* NULL is fine */

#endif
