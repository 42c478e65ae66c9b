/* The scheduler hooks of recon/batch/batch.c (mr_batch_sched: how recon/cluster/mpi_batch.c spreads a batch over
 * MPI ranks), driven by in-process fakes, in every build:
 *  - root: the queue order (cfg->order) is followed by this process's workers and by the fake
 *    "other process", which takes scans with mr_batch_take and reports them some polls later with
 *    mr_batch_finished_elsewhere (one of them failed); every scan ends in the right state, run
 *    exactly once, and mr_batch_run waits while the other process is busy;
 *  - worker: only the scans next() hands over run (others untouched, OUTDIR not prepared, no
 *    --resume check), each reported once through done(); the run ends when busy() says so;
 *  - a worker told to stop by poll(): the batch ends as interrupted, pending scans marked so. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/fsutil.h"
#include "recon/batch/batch.h"
#include "testutil.h"

static mr_status ok_job(const char *scan, const char *outdir, const mr_batch_slot *slot, void *ctx)
{
    (void)scan;
    (void)slot;
    (void)ctx;
    char p[8300];
    snprintf(p, sizeof p, "%s/result.txt", outdir);
    FILE *f = fopen(p, "w");
    if (!f)
        return mr_error(MR_EIO, "cannot write %s", p);
    fputs("done\n", f);
    fclose(f);
    return MR_OK;
}

static int has_result(const char *out, const char *name)
{
    char p[8400];
    snprintf(p, sizeof p, "%s/%s/result.txt", out, name);
    struct stat sb;
    return stat(p, &sb) == 0;
}

static void make_list(const char *root, const char *sub, int n, mr_batch_list *l)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/%s", root, sub);
    mr_mkdir_p(dir);
    const char *inputs[1] = {dir};
    for (int i = 0; i < n; i++) {
        char p[4300];
        snprintf(p, sizeof p, "%s/s%d.h5", dir, i);
        FILE *f = fopen(p, "w");
        if (f) {
            fprintf(f, "scan %d\n", i);
            fclose(f);
        }
    }
    CHECK_OK(mr_batch_collect(inputs, 1, l));
    CHECK(l->count == n);
}

static mr_batch_config config(const char *out)
{
    mr_batch_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.outdir = out;
    cfg.mode = MR_BATCH_FRESH;
    cfg.jobs = 1;
    cfg.threads = 1;
    cfg.fingerprint = "x";
    cfg.job = ok_job;
    return cfg;
}

/* ---- root: a fake other process holding one scan at a time for a few polls -------------------- */

typedef struct {
    int holding, polls, took[16], ntook, queue_empty;
} fake_remote;

static int remote_poll(void *ctx, mr_batch_runner *r, int stopping)
{
    fake_remote *f = ctx;
    mr_batch_list *l = mr_batch_runner_list(r);
    if (f->holding >= 0 && ++f->polls >= 3) {
        mr_batch_scan *s = &l->scans[f->holding];
        s->state = f->ntook == 2 ? MR_BATCH_FAILED : MR_BATCH_DONE_NOW; /* its second scan fails */
        s->seconds = 0.25;
        if (s->state == MR_BATCH_FAILED)
            snprintf(s->reason, sizeof s->reason, "failed elsewhere");
        mr_batch_finished_elsewhere(r, f->holding);
        f->holding = -1;
    }
    if (f->holding < 0 && !f->queue_empty && !stopping) {
        int i = mr_batch_take(r);
        if (i < 0)
            f->queue_empty = 1;
        else if (f->ntook < 16) {
            f->took[f->ntook++] = i;
            f->holding = i;
            f->polls = 0;
        }
    }
    return 0;
}

static int remote_busy(void *ctx, int stopping)
{
    (void)stopping;
    const fake_remote *f = ctx;
    return f->holding >= 0 || !f->queue_empty;
}

static void test_root(const char *root)
{
    mr_batch_list l;
    make_list(root, "in-root", 6, &l);
    char out[4200];
    snprintf(out, sizeof out, "%s/out-root", root);
    fake_remote f = {-1, 0, {0}, 0, 0};
    mr_batch_sched sched = {1, &f, NULL, remote_poll, NULL, remote_busy};
    const int order[6] = {5, 4, 3, 2, 1, 0};
    mr_batch_config cfg = config(out);
    cfg.order = order;
    cfg.sched = &sched;
    int interrupted = 1;
    CHECK_OK(mr_batch_run(&cfg, &l, &interrupted));
    CHECK(interrupted == 0);
    CHECK(f.ntook >= 2);
    /* the queue's order: its head goes first (to whoever asks first: the other process, polled before
       the local launch), and the other process's scans come in queue order */
    CHECK(f.took[0] == 5);
    for (int k = 1; k < f.ntook; k++)
        CHECK(f.took[k] < f.took[k - 1]);
    int elsewhere[6] = {0};
    for (int k = 0; k < f.ntook; k++)
        elsewhere[f.took[k]] = 1;
    for (int i = 0; i < 6; i++) {
        const mr_batch_scan *s = &l.scans[i];
        if (!elsewhere[i]) { /* ran here */
            CHECK(s->state == MR_BATCH_DONE_NOW && has_result(out, s->name));
        } else { /* reported by the fake: nothing written here */
            CHECK(!has_result(out, s->name));
            CHECK(s->state == (i == f.took[1] ? MR_BATCH_FAILED : MR_BATCH_DONE_NOW));
            CHECK(s->seconds == 0.25);
        }
    }
    CHECK(strcmp(l.scans[f.took[1]].reason, "failed elsewhere") == 0);
    mr_batch_list_free(&l);
}

/* ---- a worker: runs what next() hands it ------------------------------------------------------ */

typedef struct {
    int give[4], ngive, given, done[8], ndone;
    int stop_after, polls; /* poll() says stop at this poll (0: never) */
    int forever;           /* busy() until told to stop */
} fake_root;

static int worker_next(void *ctx)
{
    fake_root *f = ctx;
    return f->given < f->ngive ? f->give[f->given++] : -1;
}

static int worker_poll(void *ctx, mr_batch_runner *r, int stopping)
{
    (void)r;
    (void)stopping;
    fake_root *f = ctx;
    return f->stop_after > 0 && ++f->polls >= f->stop_after;
}

static void worker_done(void *ctx, const mr_batch_list *l, int scan)
{
    (void)l;
    fake_root *f = ctx;
    if (f->ndone < 8)
        f->done[f->ndone++] = scan;
}

static int worker_busy(void *ctx, int stopping)
{
    const fake_root *f = ctx;
    return !stopping && (f->forever || f->given < f->ngive);
}

static void test_worker(const char *root)
{
    mr_batch_list l;
    make_list(root, "in-worker", 4, &l);
    char out[4200], logs[4300];
    snprintf(out, sizeof out, "%s/out-worker", root);
    snprintf(logs, sizeof logs, "%s/.logs", out);
    CHECK_OK(mr_mkdir_p(logs)); /* the root prepares OUTDIR */
    char stale[4300];
    snprintf(stale, sizeof stale, "%s/.s0.partial", out);
    CHECK_OK(mr_mkdir_p(stale)); /* the root's business, not a worker's */
    fake_root f = {{2, 1}, 2, 0, {0}, 0, 0, 0, 0};
    mr_batch_sched sched = {0, &f, worker_next, worker_poll, worker_done, worker_busy};
    mr_batch_config cfg = config(out);
    cfg.mode = MR_BATCH_RESUME;
    cfg.sched = &sched;
    cfg.jobs = 2;
    int interrupted = 1;
    CHECK_OK(mr_batch_run(&cfg, &l, &interrupted));
    CHECK(interrupted == 0);
    CHECK(f.ndone == 2 && ((f.done[0] == 2 && f.done[1] == 1) || (f.done[0] == 1 && f.done[1] == 2)));
    CHECK(has_result(out, "s1") && has_result(out, "s2"));
    CHECK(!has_result(out, "s0") && !has_result(out, "s3"));
    CHECK(l.scans[0].state == MR_BATCH_PENDING && l.scans[3].state == MR_BATCH_PENDING);
    struct stat sb;
    CHECK(stat(stale, &sb) == 0); /* left alone */
    mr_batch_list_free(&l);

    /* told to stop: the pending scans are interrupted */
    make_list(root, "in-stop", 4, &l);
    snprintf(out, sizeof out, "%s/out-stop", root);
    snprintf(logs, sizeof logs, "%s/.logs", out);
    CHECK_OK(mr_mkdir_p(logs));
    fake_root g = {{0}, 0, 0, {0}, 0, 5, 0, 1}; /* hands out nothing, stop at the 5th poll */
    mr_batch_sched stop = {0, &g, worker_next, worker_poll, worker_done, worker_busy};
    cfg = config(out);
    cfg.sched = &stop;
    CHECK_OK(mr_batch_run(&cfg, &l, &interrupted));
    CHECK(interrupted == 1);
    for (int i = 0; i < 4; i++)
        CHECK(l.scans[i].state == MR_BATCH_INTERRUPTED);
    CHECK(g.ndone == 0);
    mr_batch_list_free(&l);
}

int main(void)
{
    const char *root = test_tmpdir("batch_sched");
    test_root(root);
    test_worker(root);
    return test_finish("test_batch_sched");
}
