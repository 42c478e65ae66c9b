/* Work in a forked child process, its result passed back through a pipe: for work that may crash,
 * loop or leave state behind (libhdf5 on a hostile file, the CUDA driver, a reader's headers), so that
 * the calling process stays clean. POSIX only; the child never returns into the caller's code. */
#ifndef MR_CHILD_H
#define MR_CHILD_H

#include <stddef.h>

/* Write / read n bytes on fd, retrying after signals; stop at an error or end of file. mr_read_full
 * returns the bytes read (fewer than n: the writer died or closed early). */
void mr_write_full(int fd, const void *buf, size_t n);
size_t mr_read_full(int fd, void *buf, size_t n);

typedef struct {
    unsigned cpu_seconds; /* > 0: the child's CPU-time limit (SIGXCPU, then SIGKILL 5 s later) and, since
                             a crash is then expected of it, no core dump and first pick of the OOM killer */
} mr_child_limits;

/* Fork; the child runs fn(ctx, out), sends out[0..n) to the parent and _exits (no atexit handlers, no
 * stdio flush). The parent receives into out and reaps the child. Returns the bytes received (n when
 * the child completed), or -1 when no child could be made (no pipe, no fork: run the work here if it
 * must be run). *wait_status (may be NULL) receives waitpid's status. limits NULL: none. */
long mr_run_in_child(void (*fn)(void *ctx, void *out), void *ctx, void *out, size_t n,
                     const mr_child_limits *limits, int *wait_status);

#endif
