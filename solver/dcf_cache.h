/* The per-process cache behind mr_dcf_pipe (solver/dcf.h): Pipe-Menon weights are kept for the
 * last few (trajectory, matrix, iteration count) keys, found by a 64-bit hash of the trajectory
 * bytes and confirmed by comparing the stored copy, so that repeated calls in one run do not
 * recompute. Thread-safe. Exposed for tests and diagnostics. */
#ifndef MR_DCF_CACHE_H
#define MR_DCF_CACHE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Entries kept (least recently inserted is replaced). */
#define MR_DCF_CACHE_ENTRIES 4

/* Calls answered from the cache, and Pipe-Menon computations run, since the start (or the last
 * mr_dcf_cache_clear). Either pointer may be NULL. */
void mr_dcf_cache_stats(int64_t *hits, int64_t *computed);

/* Drop every entry and reset the counters. */
void mr_dcf_cache_clear(void);

#ifdef __cplusplus
}
#endif
#endif
