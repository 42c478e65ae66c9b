#include "fft.h"

#include <pthread.h>

static pthread_mutex_t planner_lock = PTHREAD_MUTEX_INITIALIZER;
static int threads_ready, threads64_ready; /* guarded by planner_lock */

fftwf_plan mr_fft_plan_guru(int rank, const fftwf_iodim *dims, int howmany_rank, const fftwf_iodim *howmany,
                            fftwf_complex *in, fftwf_complex *out, int sign, int nthreads)
{
    pthread_mutex_lock(&planner_lock);
    if (!threads_ready)
        threads_ready = fftwf_init_threads() != 0;
    if (threads_ready)
        fftwf_plan_with_nthreads(nthreads > 1 ? nthreads : 1);
    fftwf_plan p = fftwf_plan_guru_dft(rank, dims, howmany_rank, howmany, in, out, sign, FFTW_ESTIMATE);
    pthread_mutex_unlock(&planner_lock);
    return p;
}

fftwf_plan mr_fft_plan_dft(int rank, const int *n, fftwf_complex *buf, int sign, int nthreads)
{
    fftwf_iodim d[3];
    if (rank < 1 || rank > 3)
        return NULL;
    int stride = 1;
    for (int i = rank - 1; i >= 0; i--) {
        d[i].n = n[i];
        d[i].is = d[i].os = stride;
        stride *= n[i];
    }
    return mr_fft_plan_guru(rank, d, 0, NULL, buf, buf, sign, nthreads);
}

void mr_fft_destroy(fftwf_plan p)
{
    if (!p)
        return;
    pthread_mutex_lock(&planner_lock);
    fftwf_destroy_plan(p);
    pthread_mutex_unlock(&planner_lock);
}

fftw_plan mr_fft64_plan_guru(int rank, const fftw_iodim *dims, int howmany_rank, const fftw_iodim *howmany,
                             fftw_complex *in, fftw_complex *out, int sign, int nthreads)
{
    pthread_mutex_lock(&planner_lock);
    if (!threads64_ready)
        threads64_ready = fftw_init_threads() != 0;
    if (threads64_ready)
        fftw_plan_with_nthreads(nthreads > 1 ? nthreads : 1);
    fftw_plan p = fftw_plan_guru_dft(rank, dims, howmany_rank, howmany, in, out, sign, FFTW_ESTIMATE);
    pthread_mutex_unlock(&planner_lock);
    return p;
}

void mr_fft64_destroy(fftw_plan p)
{
    if (!p)
        return;
    pthread_mutex_lock(&planner_lock);
    fftw_destroy_plan(p);
    pthread_mutex_unlock(&planner_lock);
}
