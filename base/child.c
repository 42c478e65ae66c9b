/* Work in a forked child, and background work that never runs across a fork (see child.h). */
#define _GNU_SOURCE /* F_SETPIPE_SZ */
#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "memory.h"

/* In a build with AddressSanitizer: an allocation the sanitizer's allocator cannot serve returns NULL, as
 * glibc's malloc does (it aborts by default), so that a reader running with a memory budget
 * (mr_child_limits.memory_bytes, mr_memory_budget) refuses a hostile size the same way in every build. */
#if defined(__SANITIZE_ADDRESS__)
#define MR_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MR_ASAN 1
#endif
#endif
#ifdef MR_ASAN
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }
#endif

/* ---- background work ------------------------------------------------------------------------------ */

typedef struct {
    mr_background_fn fn;
    int arg;
    pthread_t thread;
} bg_task;

/* bg_mu guards everything below; a task's thread never takes it, so joining while holding it is safe */
static pthread_mutex_t bg_mu = PTHREAD_MUTEX_INITIALIZER;
static bg_task bg_queued[MR_BACKGROUND_MAX], bg_running[MR_BACKGROUND_MAX];
static int bg_nqueued, bg_nrunning;
static mr_background_stats bg_stats;
static int bg_handlers; /* 1: the fork and exit handlers are registered */

static void *bg_main(void *arg)
{
    const bg_task *t = arg; /* its slot stays put until the thread is joined */
    t->fn(t->arg);
    return NULL;
}

static void bg_join_locked(void)
{
    for (int i = 0; i < bg_nrunning; i++)
        pthread_join(bg_running[i].thread, NULL);
    bg_nrunning = 0;
}

static void bg_start_locked(int at_fork)
{
    for (int i = 0; i < bg_nqueued; i++) {
        bg_task *t = &bg_running[bg_nrunning];
        *t = bg_queued[i];
        if (pthread_create(&t->thread, NULL, bg_main, t) == 0)
            bg_nrunning++;
        else
            t->fn(t->arg); /* no thread: the work is needed anyway */
        bg_stats.started++;
        bg_stats.started_at_fork += at_fork;
    }
    bg_nqueued = 0;
}

/* Before a fork: no task may be running across it. */
static void bg_join_for_fork_locked(void)
{
    if (bg_nrunning == 0)
        return;
    const double t0 = mr_now();
    bg_join_locked();
    bg_stats.fork_waits++;
    bg_stats.fork_wait_s += mr_now() - t0;
}

/* pthread_atfork: prepare joins (and holds bg_mu across the fork, so nothing starts in between); the
 * parent goes on; the child forgets its parent's queue (it never starts it) and has no tasks running. */
static void bg_prepare(void)
{
    pthread_mutex_lock(&bg_mu);
    bg_join_for_fork_locked();
}

static void bg_parent(void) { pthread_mutex_unlock(&bg_mu); }

static void bg_child(void)
{
    bg_nqueued = 0;
    bg_nrunning = 0;
    pthread_mutex_unlock(&bg_mu);
}

static void bg_at_exit(void)
{
    pthread_mutex_lock(&bg_mu);
    bg_join_locked(); /* queued tasks are dropped */
    bg_nqueued = 0;
    pthread_mutex_unlock(&bg_mu);
}

static void bg_register(void)
{
    bg_handlers = pthread_atfork(bg_prepare, bg_parent, bg_child) == 0 && atexit(bg_at_exit) == 0;
}

int mr_background_queue(mr_background_fn fn, int arg)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (pthread_once(&once, bg_register) != 0 || !bg_handlers)
        return -1; /* without a way to join it, no thread */
    pthread_mutex_lock(&bg_mu);
    int found = 0;
    for (int i = 0; i < bg_nqueued; i++)
        found |= bg_queued[i].fn == fn && bg_queued[i].arg == arg;
    for (int i = 0; i < bg_nrunning; i++)
        found |= bg_running[i].fn == fn && bg_running[i].arg == arg;
    int rc = 0;
    if (!found && bg_nqueued + bg_nrunning >= MR_BACKGROUND_MAX)
        rc = -1;
    else if (!found)
        bg_queued[bg_nqueued++] = (bg_task){.fn = fn, .arg = arg};
    pthread_mutex_unlock(&bg_mu);
    return rc;
}

void mr_background_start(void)
{
    pthread_mutex_lock(&bg_mu);
    bg_start_locked(0);
    pthread_mutex_unlock(&bg_mu);
}

double mr_background_wait(void)
{
    const double t0 = mr_now();
    pthread_mutex_lock(&bg_mu);
    bg_start_locked(0);
    bg_join_locked();
    pthread_mutex_unlock(&bg_mu);
    return mr_now() - t0;
}

void mr_background_get_stats(mr_background_stats *s)
{
    pthread_mutex_lock(&bg_mu);
    *s = bg_stats;
    s->queued = bg_nqueued;
    s->running = bg_nrunning;
    pthread_mutex_unlock(&bg_mu);
}

/* ---- the child ------------------------------------------------------------------------------------ */

void mr_write_full(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

mr_status mr_pipe_put(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    for (size_t done = 0; done < n;) {
        ssize_t w = write(fd, p + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return mr_error(MR_EIO, "the stream to the other process ended after %zu of %zu bytes (%s)", done, n,
                            w < 0 ? strerror(errno) : "no progress");
        done += (size_t)w;
    }
    return MR_OK;
}

mr_status mr_pipe_get(int fd, void *buf, size_t n)
{
    const size_t got = mr_read_full(fd, buf, n);
    return got == n ? MR_OK : mr_error(MR_EIO, "the stream from the other process ended after %zu of %zu bytes", got, n);
}

size_t mr_read_full(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return got;
}

/* The memory budget of this process when it is a child made with one (mr_child_limits.memory_bytes):
 * the address space it had at the fork, the budget and what was allowed since. Only the child's single
 * thread touches these. */
static uint64_t mem_base, mem_budget;
static int64_t mem_allowed;

static void apply_memory_limit(void)
{
    struct rlimit as;
    if (getrlimit(RLIMIT_AS, &as) != 0)
        return;
    const int64_t want = (int64_t)(mem_base + mem_budget) + mem_allowed;
    rlim_t soft = want > 0 ? (rlim_t)want : 0;
    if (as.rlim_max != RLIM_INFINITY && soft > as.rlim_max)
        soft = as.rlim_max;
    as.rlim_cur = soft;
    setrlimit(RLIMIT_AS, &as);
}

void mr_child_memory_allow(int64_t bytes)
{
    if (mem_budget == 0)
        return;
    mem_allowed += bytes;
    apply_memory_limit();
}

static struct rlimit budget_saved; /* the limit before mr_memory_budget */

void mr_memory_budget(uint64_t bytes)
{
    if (bytes == 0) {
        if (mem_budget > 0)
            setrlimit(RLIMIT_AS, &budget_saved);
        mem_base = mem_budget = 0;
        mem_allowed = 0;
        return;
    }
    if (mem_budget == 0 && getrlimit(RLIMIT_AS, &budget_saved) != 0)
        return;
    const uint64_t base = mr_mem_mapped();
    if (base == 0)
        return;
    mem_base = base;
    mem_budget = bytes;
    mem_allowed = 0;
    apply_memory_limit();
}

/* In the child: the limits of a process expected to be sacrificed. */
static void limit_child(const mr_child_limits *l)
{
    if (!l)
        return;
    if (l->memory_bytes > 0) {
        const uint64_t base = mr_mem_mapped();
        if (base > 0) {
            mem_base = base;
            mem_budget = l->memory_bytes;
            mem_allowed = 0;
            apply_memory_limit();
        }
    }
    if (l->cpu_seconds == 0)
        return;
    struct rlimit cpu = {l->cpu_seconds, l->cpu_seconds + 5}, core = {0, 0};
    setrlimit(RLIMIT_CPU, &cpu);
    setrlimit(RLIMIT_CORE, &core);
    FILE *adj = fopen("/proc/self/oom_score_adj", "w");
    if (adj) {
        fputs("1000", adj);
        fclose(adj);
    }
}

/* Fork with a pipe: the child end in *child_fd (the child only), the parent's in *parent_fd. Joins the
 * background tasks first and starts the queued ones on the parent's side. Returns fork's pid (0 in the
 * child), -1 when no pipe or no child could be made. */
static pid_t fork_with_pipe(int *parent_fd, int *child_fd)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    fflush(stdout);
    fflush(stderr);
    /* joined here, before fork() runs any atfork handler (a library's may take locks a task holds) */
    pthread_mutex_lock(&bg_mu);
    bg_join_for_fork_locked();
    pthread_mutex_unlock(&bg_mu);
#ifdef F_SETPIPE_SZ
    /* results of megabytes: a larger pipe moves them with fewer switches between the two processes */
    (void)fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
#endif
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        *child_fd = fds[1];
        return 0;
    }
    /* the queued background work runs while the child does */
    pthread_mutex_lock(&bg_mu);
    bg_stats.forks++;
    bg_start_locked(1);
    pthread_mutex_unlock(&bg_mu);
    close(fds[1]);
    *parent_fd = fds[0];
    return pid;
}

static int reap(pid_t pid)
{
    int ws = 0;
    pid_t w;
    while ((w = waitpid(pid, &ws, 0)) < 0 && errno == EINTR)
        ;
    return w == pid ? ws : 0;
}

long mr_run_in_child(void (*fn)(void *ctx, void *out), void *ctx, void *out, size_t n,
                     const mr_child_limits *limits, int *wait_status)
{
    int pfd = -1, cfd = -1;
    const pid_t pid = fork_with_pipe(&pfd, &cfd);
    if (pid < 0)
        return -1;
    if (pid == 0) {
        limit_child(limits);
        fn(ctx, out);
        mr_write_full(cfd, out, n);
        close(cfd);
        _exit(0);
    }
    const size_t got = mr_read_full(pfd, out, n);
    close(pfd);
    const int ws = reap(pid);
    if (wait_status)
        *wait_status = ws;
    return (long)got;
}

mr_status mr_run_in_child_stream(void (*produce)(void *pctx, int fd), void *pctx,
                                 mr_status (*consume)(void *cctx, int fd), void *cctx,
                                 const mr_child_limits *limits, int *wait_status, int *ran)
{
    int pfd = -1, cfd = -1;
    if (ran)
        *ran = 0;
    if (wait_status)
        *wait_status = 0;
    const pid_t pid = fork_with_pipe(&pfd, &cfd);
    if (pid < 0)
        return MR_OK;
    if (pid == 0) {
        signal(SIGPIPE, SIG_IGN);
        limit_child(limits);
        produce(pctx, cfd);
        close(cfd);
        _exit(0);
    }
    const mr_status st = consume(cctx, pfd);
    /* a child that still writes finds the pipe closed (EPIPE) and ends; one that closed it is ending */
    close(pfd);
    const int ws = reap(pid);
    if (wait_status)
        *wait_status = ws;
    if (ran)
        *ran = 1;
    return st;
}
