#include "progress.h"

#include <omp.h>
#include <stddef.h>

#include "log.h"

#define MR_PROGRESS_POLL_S 0.1

void mr_progress_report(const mr_progress *p, const char *stage, double done, double total)
{
    if (p && p->fn)
        p->fn(p->ctx, stage, done, total);
}

static void part_report(void *ctx, const char *stage, double done, double total)
{
    const mr_progress_part *p = ctx;
    const double f = total > 0 ? done / total : 1.0;
    mr_progress_report(p->outer, stage, p->index + f, p->count);
}

mr_progress mr_progress_part_of(mr_progress_part *storage, const mr_progress *outer, int64_t index, int64_t count)
{
    storage->outer = outer;
    storage->index = (double)index;
    storage->count = (double)(count > 0 ? count : 1);
    mr_progress p = {outer && outer->fn ? part_report : NULL, storage};
    return p;
}

void mr_progress_rows_init(mr_progress_rows *r, const mr_progress *p, const char *stage, int64_t total)
{
    r->p = p && p->fn ? p : NULL;
    r->stage = stage;
    r->total = total;
    r->done = 0;
    r->next_report = 0;
    if (r->p) {
        r->next_report = mr_now() + MR_PROGRESS_POLL_S;
        mr_progress_report(r->p, stage, 0, (double)total);
    }
}

void mr_progress_rows_add(mr_progress_rows *r, int64_t units)
{
    if (!r->p)
        return;
#pragma omp atomic
    r->done += units;
}

void mr_progress_rows_poll(mr_progress_rows *r)
{
    if (!r->p || omp_get_thread_num() != 0)
        return;
    const double now = mr_now();
    if (now < r->next_report)
        return;
    r->next_report = now + MR_PROGRESS_POLL_S;
    int64_t done;
#pragma omp atomic read
    done = r->done;
    mr_progress_report(r->p, r->stage, (double)done, (double)r->total);
}

void mr_progress_rows_finish(mr_progress_rows *r)
{
    if (r->p)
        mr_progress_report(r->p, r->stage, (double)r->total, (double)r->total);
}
