/* Work in a forked child process, its result passed back through a pipe: for work that may crash,
 * loop or leave state behind (libhdf5 on a hostile file, the CUDA driver, a reader's headers), so that
 * the calling process stays clean. POSIX only; the child never returns into the caller's code.
 *
 * And the other side of fork: background threads that are never alive across one (mr_background_*,
 * below), for slow one-time work that overlaps with the caller's, e.g. the device initialisation
 * while a child reads the scan. */
#ifndef MR_CHILD_H
#define MR_CHILD_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Write / read n bytes on fd, retrying after signals; stop at an error or end of file. mr_read_full
 * returns the bytes read (fewer than n: the writer died or closed early). */
void mr_write_full(int fd, const void *buf, size_t n);
size_t mr_read_full(int fd, void *buf, size_t n);

/* The same as a status, for streams between a child and its parent (mr_run_in_child_stream): MR_EIO
 * "the stream ended after X of N bytes" (a writer that died, or a reader that went away: EPIPE). */
mr_status mr_pipe_put(int fd, const void *buf, size_t n);
mr_status mr_pipe_get(int fd, void *buf, size_t n);

typedef struct {
    unsigned cpu_seconds; /* > 0: the child's CPU-time limit (SIGXCPU, then SIGKILL 5 s later) and, since
                             a crash is then expected of it, no core dump and first pick of the OOM killer */
    uint64_t memory_bytes; /* > 0: the child may map this many bytes beyond what it has at the fork
                              (RLIMIT_AS), plus what it is allowed later (mr_child_memory_allow): an
                              allocation a hostile file asks for fails (NULL) instead of taking the memory */
} mr_child_limits;

/* Fork; the child runs fn(ctx, out), sends out[0..n) to the parent and _exits (no atexit handlers, no
 * stdio flush). The parent receives into out and reaps the child. Returns the bytes received (n when
 * the child completed), or -1 when no child could be made (no pipe, no fork: run the work here if it
 * must be run). *wait_status (may be NULL) receives waitpid's status. limits NULL: none. */
long mr_run_in_child(void (*fn)(void *ctx, void *out), void *ctx, void *out, size_t n,
                     const mr_child_limits *limits, int *wait_status);

/* The same with a stream: the child runs produce(pctx, fd), writing its result to the pipe fd as it
 * goes (SIGPIPE ignored there: a write to a parent that stopped reading fails with EPIPE), then
 * _exits; meanwhile the parent runs consume(cctx, fd), reading it. When consume returns, the parent
 * closes its end (a child still writing gets EPIPE and ends) and reaps the child. Returns consume's
 * status; *ran (may be NULL) = 1, or 0 when no child could be made (no pipe, no fork: then nothing
 * ran, MR_OK is returned). *wait_status as above. Background tasks start at the fork as above. */
mr_status mr_run_in_child_stream(void (*produce)(void *pctx, int fd), void *pctx,
                                 mr_status (*consume)(void *cctx, int fd), void *cctx,
                                 const mr_child_limits *limits, int *wait_status, int *ran);

/* In a child made with limits->memory_bytes: allow `bytes` more (e.g. arrays whose sizes the data
 * justify, checked before they are allocated), or take back what was allowed (bytes < 0). A no-op in
 * any other process. */
void mr_child_memory_allow(int64_t bytes);

/* Give this process the memory budget a reading child has (mr_child_limits.memory_bytes): RLIMIT_AS at
 * what it maps now + bytes, then mr_child_memory_allow as in a child; 0 ends it (the limit as before).
 * For a process that runs a reader in-process on purpose, e.g. the fuzz targets' replay. */
void mr_memory_budget(uint64_t bytes);

/* ---- background work, never alive across a fork ------------------------------------------------
 * A fork while another thread holds a lock (the dynamic loader's, a library's, the CUDA driver's)
 * gives a child that deadlocks on it, and a half-made CUDA context does not survive a fork. So the
 * threads of these tasks are joined before every fork (explicitly in mr_run_in_child, and by a
 * pthread_atfork prepare handler for any other fork) and at exit. To overlap with a child's work
 * instead of making a fork wait, a queued task starts on the parent's side of the next fork of
 * mr_run_in_child, i.e. while the child runs; a child never starts what its parent queued.
 * A task must not call these functions, nor fork. */

#define MR_BACKGROUND_MAX 32 /* tasks queued or running at once */

typedef void (*mr_background_fn)(int arg);

/* Queue fn(arg) to run on a thread of its own. It starts right after the next fork of mr_run_in_child
 * (parent side), at mr_background_start or at mr_background_wait, whichever comes first. The same fn
 * and arg already queued or running is not queued twice. 0 when queued (or already there); -1 when it
 * cannot be (MR_BACKGROUND_MAX reached, or the fork and exit handlers that join it could not be
 * registered): whoever needs the work then does it itself. */
int mr_background_queue(mr_background_fn fn, int arg);

/* Start the queued tasks now (when no fork is coming). A task whose thread cannot be made runs here. */
void mr_background_start(void);

/* Start what is queued and wait until every task has finished; returns the seconds this call waited. */
double mr_background_wait(void);

/* Counters for reports and tests. */
typedef struct {
    int queued, running;    /* tasks now: waiting for their start, threads not yet joined */
    long started;           /* tasks started since the process began (inline runs included) */
    long started_at_fork;   /* of these, on the parent's side of a fork of mr_run_in_child */
    long forks;             /* children made by mr_run_in_child */
    long fork_waits;        /* forks that had to wait for running tasks */
    double fork_wait_s;     /* the seconds those forks waited */
} mr_background_stats;
void mr_background_get_stats(mr_background_stats *s);

#ifdef __cplusplus
}
#endif
#endif
