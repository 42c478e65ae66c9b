/* Work in a forked child (see child.h). */
#include "child.h"

#include <errno.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* In the child: the limits of a process expected to be sacrificed. */
static void limit_child(const mr_child_limits *l)
{
    if (!l || l->cpu_seconds == 0)
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

long mr_run_in_child(void (*fn)(void *ctx, void *out), void *ctx, void *out, size_t n,
                     const mr_child_limits *limits, int *wait_status)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        limit_child(limits);
        fn(ctx, out);
        mr_write_full(fds[1], out, n);
        close(fds[1]);
        _exit(0);
    }
    close(fds[1]);
    const size_t got = mr_read_full(fds[0], out, n);
    close(fds[0]);
    int ws = 0;
    pid_t w;
    while ((w = waitpid(pid, &ws, 0)) < 0 && errno == EINTR)
        ;
    if (wait_status)
        *wait_status = w == pid ? ws : 0;
    return (long)got;
}
