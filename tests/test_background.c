/* Background work that never runs across a fork (base/child.h), and the read it overlaps with:
 *   - a queued task does not start by itself; it starts on the parent's side of the next fork of
 *     mr_run_in_child and runs while the child does (the child sees it start through a pipe);
 *   - no task thread is alive in a child: a fork waits for running tasks (the child's copy of the
 *     task's memory shows it finished), and a child never starts what its parent queued;
 *   - the same task is not queued twice; a full queue refuses; mr_background_wait runs what is queued;
 *   - reading a mrirecon scan through mr_input_open + mr_input_read with a task pending gives the same
 *     bytes as the isolated reader, with one child in all (the task starts at its fork and never
 *     makes a fork wait); a file replaced after the open is read (and checked in a child) again. */
#include <poll.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/child.h"
#include "gpu/gpu_ops.h"
#include "io/input.h"
#include "io/kspace_h5.h"
#include "io_testutil.h"
#include "scan_testutil.h"
#include "testutil.h"

static int started_pipe[2] = {-1, -1}; /* the slow task writes one byte here when it starts */
static atomic_int slow_done, quick_runs, queue_runs;

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0)
        ;
}

static void slow_task(int ms)
{
    if (started_pipe[1] >= 0)
        mr_write_full(started_pipe[1], "s", 1);
    sleep_ms(ms);
    atomic_store(&slow_done, 1);
}

static void quick_task(int arg)
{
    (void)arg;
    atomic_fetch_add(&quick_runs, 1);
}

static void counting_task(int arg)
{
    (void)arg;
    atomic_fetch_add(&queue_runs, 1);
}

/* What a child saw. */
typedef struct {
    int running, queued;  /* its mr_background_stats */
    int saw_start;        /* the parent's task wrote its byte while this child ran */
    int slow_done;        /* the task's flag in the child's copy of memory */
    int quick_runs;       /* quick_task runs in the child */
} child_view;

static void look(child_view *v)
{
    mr_background_stats s;
    mr_background_get_stats(&s);
    v->running = s.running;
    v->queued = s.queued;
    v->slow_done = atomic_load(&slow_done);
    v->quick_runs = atomic_load(&quick_runs);
}

/* In the child: wait (up to 30 s) for the byte of a task that started in the parent after the fork. */
static void child_wait_for_start(void *ctx, void *out)
{
    (void)ctx;
    child_view *v = out;
    look(v);
    struct pollfd p = {started_pipe[0], POLLIN, 0};
    char c;
    v->saw_start = poll(&p, 1, 30000) == 1 && read(started_pipe[0], &c, 1) == 1;
}

static void child_look(void *ctx, void *out)
{
    (void)ctx;
    look(out);
}

/* In the child: whatever the child itself waits for must not be the parent's queue. */
static void child_wait(void *ctx, void *out)
{
    (void)ctx;
    (void)mr_background_wait();
    look(out);
}

static void test_fork_rules(void)
{
    CHECK(pipe(started_pipe) == 0);
    mr_background_stats s0, s;
    mr_background_get_stats(&s0);

    /* queued, not started; not queued twice */
    CHECK(mr_background_queue(slow_task, 300) == 0);
    CHECK(mr_background_queue(slow_task, 300) == 0);
    mr_background_get_stats(&s);
    CHECK(s.queued == 1 && s.running == 0 && s.started == s0.started);

    /* the fork starts it on the parent's side; the child runs meanwhile and has no task of its own */
    child_view v;
    memset(&v, 0, sizeof v);
    CHECK(mr_run_in_child(child_wait_for_start, NULL, &v, sizeof v, NULL, NULL) == (long)sizeof v);
    CHECK(v.saw_start == 1);
    CHECK(v.running == 0 && v.queued == 0);
    mr_background_get_stats(&s);
    CHECK(s.started == s0.started + 1 && s.started_at_fork == s0.started_at_fork + 1);
    CHECK(s.forks == s0.forks + 1);

    /* the next fork waits for it: in the child's copy of memory the task has finished */
    memset(&v, 0, sizeof v);
    CHECK(mr_run_in_child(child_look, NULL, &v, sizeof v, NULL, NULL) == (long)sizeof v);
    CHECK(v.slow_done == 1 && v.running == 0);
    mr_background_get_stats(&s);
    CHECK(s.running == 0 && atomic_load(&slow_done) == 1);
    fprintf(stderr, "forks that waited: %ld (%.3f s)\n", s.fork_waits - s0.fork_waits, s.fork_wait_s - s0.fork_wait_s);
    CHECK(s.fork_waits - s0.fork_waits <= 1);

    /* a child never starts its parent's queue; the parent starts it at that fork */
    atomic_store(&quick_runs, 0);
    CHECK(mr_background_queue(quick_task, 7) == 0);
    memset(&v, 0, sizeof v);
    CHECK(mr_run_in_child(child_wait, NULL, &v, sizeof v, NULL, NULL) == (long)sizeof v);
    CHECK(v.quick_runs == 0 && v.queued == 0 && v.running == 0);
    const double waited = mr_background_wait();
    CHECK(atomic_load(&quick_runs) == 1);
    CHECK_GE("mr_background_wait's seconds", waited, 0);
    mr_background_get_stats(&s);
    CHECK(s.running == 0 && s.queued == 0 && s.started_at_fork == s0.started_at_fork + 2);

    /* mr_background_start: now, no fork */
    CHECK(mr_background_queue(quick_task, 8) == 0);
    mr_background_start();
    (void)mr_background_wait();
    CHECK(atomic_load(&quick_runs) == 2);

    /* a full queue refuses; wait runs every queued task */
    atomic_store(&queue_runs, 0);
    int refused = 0;
    for (int i = 0; i <= MR_BACKGROUND_MAX; i++)
        refused += mr_background_queue(counting_task, i) != 0;
    CHECK(refused == 1);
    (void)mr_background_wait();
    CHECK(atomic_load(&queue_runs) == MR_BACKGROUND_MAX);
    close(started_pipe[0]);
    close(started_pipe[1]);
    started_pipe[0] = started_pipe[1] = -1;
}

/* Two reads of a scan alike in every part (io_testutil.h). */
static int same_scan(const mr_kspace *a, const mr_kspace *b) { return io_test_scan_diff(a, b) == NULL; }

static void test_read_overlapped(void)
{
    const char *dir = test_tmpdir("background");
    char path[1024];
    snprintf(path, sizeof path, "%s/scan.h5", dir);
    mr_kspace *ks = test_radial_scan(48, 60, 96, 4), *ref = NULL, *got = NULL;
    if (!ks)
        return;
    CHECK_OK(mr_kspace_write(path, ks));
    CHECK_OK(mr_kspace_read(path, &ref)); /* the isolated reader */
    CHECK(same_scan(ref, ks));

    mr_background_stats s0, s;
    mr_background_get_stats(&s0);
    atomic_store(&slow_done, 0);
    CHECK(mr_background_queue(slow_task, 400) == 0); /* longer than the read */
    mr_input *in = NULL;
    CHECK_OK(mr_input_open(path, NULL, &in));
    if (in) {
        CHECK(mr_input_get_format(in) == MR_INPUT_MRIRECON);
        mr_background_get_stats(&s);
        CHECK(s.forks == s0.forks + 1 && s.started_at_fork == s0.started_at_fork + 1);
        CHECK_OK(mr_input_read(in, 0, &got));
        CHECK(same_scan(got, ref));
        mr_background_get_stats(&s);
        CHECK(s.forks == s0.forks + 1);           /* the open's child was the only one */
        CHECK(s.fork_waits == s0.fork_waits);     /* and the task never made a fork wait */
        mr_kspace_free(got);
        got = NULL;

        /* the file replaced after the open: read again (in a child), from the file that was opened
           (its descriptor), not the new one the path names now */
        for (int64_t i = 0; i < 2 * ks->nsamples * ks->ncoils; i++)
            ks->data[i] = -ks->data[i];
        char tmp[1100];
        snprintf(tmp, sizeof tmp, "%s/scan2.h5", dir);
        CHECK_OK(mr_kspace_write(tmp, ks));
        CHECK(rename(tmp, path) == 0);
        CHECK_OK(mr_input_read(in, 0, &got));
        CHECK(got && same_scan(got, ref) && !same_scan(got, ks));
        mr_background_get_stats(&s);
        CHECK(s.forks == s0.forks + 2);
        mr_input_close(in);
    }
    (void)mr_background_wait();
    CHECK(atomic_load(&slow_done) == 1);
    mr_kspace_free(got);
    mr_kspace_free(ref);
    mr_kspace_free(ks);
    io_test_rmdir(dir);
}

/* The device initialisation as queued by the backend (gpu/warmup.cu), here for GPU 0 whether or not
 * there is one: it starts at a fork, finishes, and leaves no error behind (without a GPU, or without
 * CUDA, its tasks fail quietly; the real use reports). */
static void test_gpu_warm_up(void)
{
    mr_background_stats s0, s;
    mr_background_get_stats(&s0);
    const int gpus[1] = {0};
    mr_clear_error();
    mr_gpu_warm_up(gpus, 1);
    mr_gpu_warm_up(gpus, 1); /* not twice */
    mr_background_get_stats(&s);
    const int queued = s.queued;
    child_view v;
    memset(&v, 0, sizeof v);
    CHECK(mr_run_in_child(child_look, NULL, &v, sizeof v, NULL, NULL) == (long)sizeof v);
    CHECK(v.running == 0 && v.queued == 0);
    mr_background_get_stats(&s);
    CHECK(s.started_at_fork == s0.started_at_fork + queued);
    const double waited = mr_background_wait();
    fprintf(stderr, "GPU warm-up: %d task(s), waited %.3f s after the fork\n", queued, waited);
    mr_background_get_stats(&s);
    CHECK(s.running == 0 && s.queued == 0);
    CHECK(mr_last_error()[0] == '\0');
}

int main(void)
{
    test_fork_rules();
    test_read_overlapped();
    test_gpu_warm_up();
    return test_finish("test_background");
}
