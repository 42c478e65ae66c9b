/* A parallel loop on plain pthreads, for code that may run in a process forked after the parent used
 * threads: GNU OpenMP's thread pool does not survive fork (a forked child's first parallel region waits
 * for the parent's pool threads, which do not exist in the child), so the readers of user files (which
 * run in the reading child and in the workers of `batch`) and the Q cache use this instead of OpenMP.
 * The threads are made per call and take the indices from a shared counter. */
#ifndef MR_PARALLEL_H
#define MR_PARALLEL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MR_PAR_MAX_THREADS 64

/* A loop body: item i on the thread numbered slot (0 = the calling thread, below the number of
 * threads mr_par_for returns), e.g. to use that thread's own buffers. Nonzero stops the loop: the
 * items not yet taken are not run (those running finish). */
typedef int (*mr_par_body)(void *ctx, int64_t i, int slot);

/* body(ctx, i, slot) for every i in [0, n) (until a body returns nonzero) on up to max_threads threads
 * (the calling thread among them; at most the online CPUs and MR_PAR_MAX_THREADS); fewer when threads
 * cannot be made. Returns how many threads ran (>= 1); when it returns, every body has returned. */
int mr_par_for(int64_t n, int max_threads, mr_par_body body, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
