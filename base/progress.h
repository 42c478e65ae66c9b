/* Progress of long work. Library code never prints progress: it reports it through a callback that
 * the command installs (recon/cli/progress_ui.h shows it: a bar on a terminal, plain lines otherwise,
 * nothing with -q). A stage is reported as done = 0 when it starts, done = total when it ends, and
 * any values in between (units of the stage's own work: rows, iterations, coils).
 *
 * Threads: a sink is called from one thread at a time. OpenMP kernels count their finished work with
 * mr_progress_rows (an atomic counter any thread adds to) and only the master thread (thread 0) of
 * the team reports, rate-limited, so a kernel pays one atomic add per row.
 *
 * Ownership: an mr_progress is a plain value; the ctx it points to is the caller's and must outlive
 * every call that received the mr_progress. NULL (or fn NULL) means nobody listens. */
#ifndef MR_PROGRESS_H
#define MR_PROGRESS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* stage: text naming the work ("Q", "F^H d", "CG", "DCF", ...; valid for the call: a sink copies
 * what it keeps); done in [0, total]. */
typedef void (*mr_progress_fn)(void *ctx, const char *stage, double done, double total);

typedef struct {
    mr_progress_fn fn;
    void *ctx;
} mr_progress;

/* Report done of total units of stage (nothing when p or p->fn is NULL). */
void mr_progress_report(const mr_progress *p, const char *stage, double done, double total);

/* A part of a larger stage: reports of the part (0..total) become reports of the whole, as part
 * `index` of `count` equal parts (e.g. one coil of C). Returns the sink to hand to the part's work;
 * it points into *storage, which must outlive that work. outer may be NULL. */
typedef struct {
    const mr_progress *outer;
    double index, count;
} mr_progress_part;
mr_progress mr_progress_part_of(mr_progress_part *storage, const mr_progress *outer, int64_t index, int64_t count);

/* Rows (or any units) of one parallel kernel. Init on the calling thread before the parallel region;
 * inside it every thread calls mr_progress_rows_add after each unit and thread 0 also calls
 * mr_progress_rows_poll; after the region the calling thread calls mr_progress_rows_finish. */
typedef struct {
    const mr_progress *p; /* NULL: every call below returns at once */
    const char *stage;
    int64_t total;
    int64_t done;      /* atomic */
    double next_report; /* thread 0 only */
} mr_progress_rows;

/* Reports done = 0 (the stage starts). */
void mr_progress_rows_init(mr_progress_rows *r, const mr_progress *p, const char *stage, int64_t total);
void mr_progress_rows_add(mr_progress_rows *r, int64_t units);
/* Thread 0 of the team only (other threads return at once): reports at most every 0.1 s. */
void mr_progress_rows_poll(mr_progress_rows *r);
/* Reports done = total (the stage ends). */
void mr_progress_rows_finish(mr_progress_rows *r);

#ifdef __cplusplus
}
#endif
#endif
