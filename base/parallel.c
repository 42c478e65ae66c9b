#include "parallel.h"

#include <pthread.h>
#include <unistd.h>

typedef struct {
    int64_t n, next; /* next: atomic */
    int stop;        /* atomic */
    mr_par_body body;
    void *ctx;
} par_job;

typedef struct {
    par_job *job;
    int slot;
} par_arg;

static void par_run(par_job *j, int slot)
{
    while (!__atomic_load_n(&j->stop, __ATOMIC_RELAXED)) {
        const int64_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (i >= j->n)
            return;
        if (j->body(j->ctx, i, slot))
            __atomic_store_n(&j->stop, 1, __ATOMIC_RELAXED);
    }
}

static void *par_main(void *arg)
{
    par_arg *a = arg;
    par_run(a->job, a->slot);
    return NULL;
}

int mr_par_for(int64_t n, int max_threads, mr_par_body body, void *ctx)
{
    par_job j = {n, 0, 0, body, ctx};
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int64_t want = max_threads;
    want = want < cores ? want : cores;
    want = want < n ? want : n;
    want = want < MR_PAR_MAX_THREADS ? want : MR_PAR_MAX_THREADS;
    pthread_t th[MR_PAR_MAX_THREADS];
    par_arg args[MR_PAR_MAX_THREADS];
    int nth = 0; /* threads made besides this one: slots 1..nth */
    while (nth + 1 < want) {
        args[nth + 1] = (par_arg){&j, nth + 1};
        if (pthread_create(&th[nth], NULL, par_main, &args[nth + 1]) != 0)
            break;
        nth++;
    }
    par_run(&j, 0);
    for (int t = 0; t < nth; t++)
        pthread_join(th[t], NULL);
    return nth + 1;
}
