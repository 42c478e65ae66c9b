/* Reading a user's HDF5 file in a child process (see h5util.h, mr_h5_read_in_child): the child opens
 * and reads the file under limits of CPU time and memory and streams its result (or its refusal) back
 * through a pipe; a child that crashes or runs out of its limits is a refused file, not a crash of
 * ours. This file owns that protocol and mr_h5_probe_in_child, its form for a fixed-size result. */
#include "h5util.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../base/child.h"
#include "fsutil.h"

/* ---- reading in a child, the result streamed back ------------------------------------------ */

/* What the child says first: a result follows (the reader's own stream, mr_h5_isolated.send), or the
 * end with the reader's status and message. */
#define FRAME_MAGIC 0x3548524du /* "MRH5" */
enum { FRAME_RESULT = 1, FRAME_END = 2 };
typedef struct {
    uint32_t magic, kind;
    int32_t status;
    uint32_t message_bytes; /* FRAME_END: the message follows */
} frame;

typedef struct {
    int fd;
    const char *label;
    const mr_h5_isolated *how;
    void *ctx;
    int complete; /* the parent got a whole answer (a result, or the end) */
} isolated_job;

/* In the child: open, read, and stream the result (or the refusal) to the parent. */
static void isolated_child(void *arg, int out)
{
    isolated_job *j = arg;
    hid_t file;
    mr_h5_defer(j->how->deferrable);
    mr_status st = mr_h5_open_fd(j->fd, j->label, &file);
    if (st == MR_OK) {
        st = j->how->read(file, j->label, j->ctx);
        mr_h5_close(&file);
    }
    frame f = {FRAME_MAGIC, st == MR_OK ? FRAME_RESULT : FRAME_END, (int32_t)st, 0};
    if (st == MR_OK) {
        if (mr_pipe_put(out, &f, sizeof f) == MR_OK)
            j->how->send(j->ctx, out);
        return;
    }
    const char *msg = mr_last_error()[0] ? mr_last_error() : mr_strerror(st);
    f.message_bytes = (uint32_t)strlen(msg);
    if (mr_pipe_put(out, &f, sizeof f) == MR_OK)
        mr_pipe_put(out, msg, f.message_bytes);
}

/* Here: the child's answer. A stream that ends early leaves j->complete 0 (the caller looks at how the
 * child ended). */
static mr_status isolated_parent(void *arg, int in)
{
    isolated_job *j = arg;
    frame f;
    mr_status st = mr_pipe_get(in, &f, sizeof f);
    if (st != MR_OK)
        return st;
    if (f.magic != FRAME_MAGIC || (f.kind != FRAME_RESULT && f.kind != FRAME_END))
        return mr_error(MR_EINTERNAL, "%s: the reading process sent a damaged answer", j->label);
    if (f.kind == FRAME_RESULT) {
        st = j->how->recv(j->ctx, in, j->fd, j->label);
        j->complete = st == MR_OK;
        return st;
    }
    char *msg = malloc(MR_ERROR_MAX);
    const size_t n = f.message_bytes < MR_ERROR_MAX ? f.message_bytes : MR_ERROR_MAX - 1;
    if (!msg || mr_pipe_get(in, msg, n) != MR_OK) {
        free(msg);
        return mr_error(MR_EINTERNAL, "%s: the reading process sent a damaged answer", j->label);
    }
    msg[n] = '\0';
    j->complete = 1;
    const mr_status code = f.status > 0 && f.status < MR_STATUS_COUNT ? (mr_status)f.status : MR_EFORMAT;
    mr_error(code, "%s", msg);
    free(msg);
    return code;
}

/* The refusal for a child that ended without a whole answer. */
static mr_status child_failed(const char *label, int ws, unsigned cpu_s)
{
    if (WIFSIGNALED(ws)) {
        const int sig = WTERMSIG(ws);
        if (sig == SIGXCPU)
            return mr_error(MR_EFORMAT,
                            "%s: HDF5 did not finish reading the file within %u s of CPU time; damaged or hostile "
                            "file refused",
                            label, cpu_s);
        if (sig == SIGKILL)
            return mr_error(MR_EFORMAT,
                            "%s: the process reading the file was killed (signal 9: out of memory, or over its %u s "
                            "of CPU time); damaged or hostile file refused",
                            label, cpu_s);
        return mr_error(MR_EFORMAT, "%s: HDF5 crashed reading the file (signal %d, %s); damaged or hostile file refused",
                        label, sig, strsignal(sig));
    }
    return mr_error(MR_EFORMAT, "%s: the process reading the file failed (exit status %d); damaged or hostile file refused",
                    label, WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
}

mr_status mr_h5_read_in_child(int fd, const char *label, const mr_h5_isolated *how, void *ctx)
{
    struct stat sb;
    const uint64_t size = fstat(fd, &sb) == 0 && sb.st_size > 0 ? (uint64_t)sb.st_size : 0;
    /* CPU time for the child: generous for a healthy file, finite for a looping libhdf5; memory: what
     * libhdf5 needs for itself and twice the file, plus what the reader allows for the arrays it has
     * checked (mr_child_memory_allow), so that libhdf5 cannot be made to allocate what a hostile size in
     * the file says */
    const mr_child_limits lim = {(unsigned)(120 + 60 * (double)size / (double)(1 << 30)),
                                 MR_H5_CHILD_MEMORY + 2 * size};
    isolated_job job = {fd, label, how, ctx, 0};
    int ws = 0, ran = 0;
    mr_status st = mr_run_in_child_stream(isolated_child, &job, isolated_parent, &job, &lim, &ws, &ran);
    if (!ran) { /* no child (no pipe, no fork): read here */
        hid_t file;
        if ((st = mr_h5_open_fd(fd, label, &file)) == MR_OK) {
            st = how->read(file, label, ctx);
            mr_h5_close(&file);
        }
        return st;
    }
    /* an answer cut short by the child's end (a crash, a limit) is the child's failure; one this process
       refused on its own (the values it read, a damaged stream), or a child that ended well, is not */
    if (!job.complete && !(WIFEXITED(ws) && WEXITSTATUS(ws) == 0))
        return child_failed(label, ws, lim.cpu_seconds);
    return st;
}

mr_status mr_h5_read_path_in_child(const char *path, const mr_h5_isolated *how, void *ctx)
{
    int fd;
    mr_status st = mr_file_open_private(path, &fd);
    if (st != MR_OK)
        return st;
    st = mr_h5_read_in_child(fd, path, how, ctx);
    close(fd);
    return st;
}

/* mr_h5_probe_in_child: the reader's fixed-size result crosses as bytes */
typedef struct {
    mr_h5_reader read;
    void *ctx;
    size_t size;
} probe_job;

static mr_status probe_read(hid_t file, const char *path, void *ctx)
{
    const probe_job *j = ctx;
    return j->read(file, path, j->ctx);
}

static mr_status probe_send(void *ctx, int fd)
{
    const probe_job *j = ctx;
    return mr_pipe_put(fd, j->ctx, j->size);
}

static mr_status probe_recv(void *ctx, int fd, int file_fd, const char *label)
{
    (void)file_fd;
    (void)label;
    const probe_job *j = ctx;
    return mr_pipe_get(fd, j->ctx, j->size);
}

mr_status mr_h5_probe_in_child(const char *path, mr_h5_reader read, void *ctx, size_t size)
{
    static const mr_h5_isolated how = {probe_read, probe_send, probe_recv, 0};
    probe_job j = {read, ctx, size};
    return mr_h5_read_path_in_child(path, &how, &j);
}
