/* mrirecon batch: the runner. Each scan runs in a forked child so that a crash, an abort or a
 * hang of one scan cannot take the batch down; outputs go to OUTDIR/.<name>.partial/ and are
 * renamed to OUTDIR/<name>/ only when the child succeeded (rename of a directory is atomic).
 *
 * The parent never touches HDF5, FFTW, OpenMP or CUDA: it only forks, waits, renames and reads
 * text, so every child starts from a clean library state. */
#include "batch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "../../gpu/gpu.h"
#include "../../base/child.h"
#include "../../io/fsutil.h"
#include "../../base/log.h"

#define PATH_MAX_LEN 4096

/* ---- file-system helpers ------------------------------------------------------------------- */

/* rm -r without following symbolic links. */
static int remove_tree(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(sb.st_mode))
        return unlink(path);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int rc = 0;
    struct dirent *e;
    char child[PATH_MAX_LEN];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (mr_path_join(child, sizeof child, path, e->d_name) != MR_OK || remove_tree(child) != 0)
            rc = -1;
    }
    closedir(d);
    if (rmdir(path) != 0)
        rc = -1;
    return rc;
}

static int is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static mr_status scan_path(char *buf, size_t size, const char *outdir, const char *name, const char *fmt)
{
    int n = snprintf(buf, size, fmt, outdir, name);
    if (n < 0 || (size_t)n >= size)
        return mr_error(MR_EINVAL, "batch: path too long for scan %s in %s", name, outdir);
    return MR_OK;
}
#define FINAL_FMT "%s/%s"
#define PARTIAL_FMT "%s/.%s.partial"
#define OLD_FMT "%s/.%s.old"
#define LOG_FMT "%s/.logs/%s.log"

/* ---- completion marker ---------------------------------------------------------------------- */

/* The part of the marker that must match for a finished scan to count on --resume. */
static mr_status marker_key(const char *scan, const char *fingerprint, char *key, size_t size)
{
    struct stat sb;
    if (stat(scan, &sb) != 0)
        return mr_error(MR_EIO, "%s: cannot read: %s", scan, strerror(errno));
    int n = snprintf(key, size, "mrirecon-batch-done 1\nsize %lld\nmtime %lld.%09ld\noptions %s\n",
                     (long long)sb.st_size, (long long)sb.st_mtim.tv_sec, (long)sb.st_mtim.tv_nsec,
                     fingerprint ? fingerprint : "");
    if (n < 0 || (size_t)n >= size)
        return mr_error(MR_EINVAL, "batch: option fingerprint too long");
    return MR_OK;
}

static mr_status marker_write(const char *dir, const char *key, double seconds)
{
    char path[PATH_MAX_LEN], tmp[PATH_MAX_LEN];
    mr_status st = mr_path_join(path, sizeof path, dir, MR_BATCH_DONE);
    FILE *f = NULL;
    if (st == MR_OK)
        st = mr_open_tmp(path, tmp, sizeof tmp, &f);
    if (st != MR_OK)
        return st;
    fprintf(f, "%sseconds %.6f\n", key, seconds);
    return mr_close_commit(f, tmp, path);
}

/* 1 when dir holds a marker starting with key; *seconds from it. */
static int marker_matches(const char *dir, const char *key, double *seconds)
{
    char path[PATH_MAX_LEN], buf[8192];
    if (mr_path_join(path, sizeof path, dir, MR_BATCH_DONE) != MR_OK)
        return 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    size_t k = strlen(key);
    if (n < k || memcmp(buf, key, k) != 0)
        return 0;
    *seconds = 0;
    if (strncmp(buf + k, "seconds ", 8) == 0)
        *seconds = strtod(buf + k + 8, NULL);
    return 1;
}

/* ---- OUTDIR preparation --------------------------------------------------------------------- */

static mr_status prepare_outdir(const mr_batch_config *cfg)
{
    const char *out = cfg->outdir;
    if (is_dir(out)) {
        DIR *d = opendir(out);
        if (!d)
            return mr_error(MR_EIO, "batch: cannot read %s: %s", out, strerror(errno));
        int nonempty = 0;
        struct dirent *e;
        char path[PATH_MAX_LEN];
        mr_status st = MR_OK;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            nonempty = 1;
            size_t len = strlen(e->d_name);
            if (cfg->mode != MR_BATCH_FRESH && e->d_name[0] == '.' &&
                ((len > 8 && strcmp(e->d_name + len - 8, ".partial") == 0) ||
                 (len > 4 && strcmp(e->d_name + len - 4, ".old") == 0))) {
                st = mr_path_join(path, sizeof path, out, e->d_name);
                if (st == MR_OK) {
                    mr_log(MR_LOG_INFO, "batch: removing unfinished %s", path);
                    if (remove_tree(path) != 0)
                        st = mr_error(MR_EIO, "batch: cannot remove stale %s: %s", path, strerror(errno));
                }
                if (st != MR_OK)
                    break;
            }
        }
        closedir(d);
        if (st != MR_OK)
            return st;
        if (nonempty && cfg->mode == MR_BATCH_FRESH)
            return mr_error(MR_EINVAL,
                            "output folder %s is not empty: use --resume to finish an earlier batch there, "
                            "or --force to redo every scan",
                            out);
    } else {
        mr_status st = mr_mkdir_p(out);
        if (st != MR_OK)
            return st;
    }
    char logs[PATH_MAX_LEN];
    mr_status st = mr_path_join(logs, sizeof logs, out, ".logs");
    if (st == MR_OK)
        st = mr_mkdir_p(logs);
    return st;
}

/* ---- signals -------------------------------------------------------------------------------- */

static volatile sig_atomic_t g_interrupt = 0;

static void on_signal(int sig)
{
    g_interrupt = sig;
}

/* ---- workers -------------------------------------------------------------------------------- */

typedef struct {
    pid_t pid; /* 0 = idle */
    int scan;
    int fd; /* read end of the status pipe */
    double start;
    int timed_out;
} worker;

/* For tests only (tests/mpi_batch.sh): with MR_TEST_SCAN_GATE=DIR, a scan's child announces itself in
 * DIR/<name>.<pid>.held and then waits until it can open the FIFO DIR/<name>.go that the test made,
 * i.e. until the test opens it for writing: the test then knows for certain which process is inside
 * which scan (e.g. to kill a rank there) instead of racing it. Without the FIFO the scan just runs. */
static void test_gate(const char *name)
{
    const char *dir = getenv("MR_TEST_SCAN_GATE");
    char go[PATH_MAX_LEN], held[PATH_MAX_LEN + 32];
    if (!dir || !dir[0] || snprintf(go, sizeof go, "%s/%s.go", dir, name) >= (int)sizeof go)
        return;
    snprintf(held, sizeof held, "%s/%s.%ld.held", dir, name, (long)getpid());
    char pid[32];
    const int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (mr_write_file(held, pid, (size_t)n) != MR_OK)
        return;
    int fd;
    while ((fd = open(go, O_RDONLY | O_CLOEXEC)) < 0 && errno == EINTR)
        ;
    if (fd >= 0) {
        char buf[64];
        while (read(fd, buf, sizeof buf) > 0) /* until the test closes its end */
            ;
        close(fd);
    }
}

/* In the child: run the job, write the marker, send the status message, exit. Never returns. */
static void child_main(const mr_batch_config *cfg, const mr_batch_scan *s, const mr_batch_slot *slot,
                       const char *partial, const char *logpath, int fd, pid_t parent)
{
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* the batch was killed: do not go on writing */
#endif
    if (getppid() != parent) /* it died before prctl took effect */
        _exit(1);
    int log = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (log >= 0) {
        dup2(log, STDOUT_FILENO);
        dup2(log, STDERR_FILENO);
        close(log);
    }
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) {
        dup2(devnull, STDIN_FILENO);
        close(devnull);
    }
    test_gate(s->name);
    double t0 = mr_now();
    char key[MR_BATCH_FINGERPRINT_MAX + 256];
    mr_clear_error();
    /* the identity is taken before reading, so that a file changed during the run is redone */
    mr_status st = marker_key(s->path, cfg->fingerprint, key, sizeof key);
    if (st == MR_OK)
        st = cfg->job(s->path, partial, slot, cfg->ctx);
    if (st == MR_OK)
        st = marker_write(partial, key, mr_now() - t0);
    if (st != MR_OK) {
        const char *msg = mr_last_error();
        if (!msg[0])
            msg = mr_strerror(st);
        fprintf(stderr, "mrirecon batch: %s: %s\n", s->path, msg);
        mr_write_full(fd, msg, strlen(msg));
    }
    fflush(stdout);
    fflush(stderr);
    close(fd);
    _exit(st == MR_OK ? 0 : 1);
}

/* The end of a log file: its last `lines` non-empty-terminated lines within the last `bytes`
 * bytes, trailing blank lines and spaces dropped, control characters other than newline and tab
 * shown as '?'. A malloc'd string, NULL when the log is missing, empty or memory is short. */
static char *log_end(const char *logpath, int lines, size_t bytes)
{
    FILE *f = fopen(logpath, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(bytes + 1);
    long len = 0;
    if (buf && fseek(f, 0, SEEK_END) == 0)
        len = ftell(f);
    const long from = len > (long)bytes ? len - (long)bytes : 0;
    size_t n = 0;
    if (buf && len > 0 && fseek(f, from, SEEK_SET) == 0)
        n = fread(buf, 1, bytes, f);
    fclose(f);
    if (!buf)
        return NULL;
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
        n--;
    buf[n] = '\0';
    size_t start = 0;
    if (from > 0) { /* the first line is cut: start after it */
        char *nl = memchr(buf, '\n', n);
        start = nl ? (size_t)(nl - buf) + 1 : 0;
    }
    int seen = 0;
    for (size_t i = n; i > start; i--)
        if (buf[i - 1] == '\n' && ++seen == lines) {
            start = i;
            break;
        }
    if (start >= n) {
        free(buf);
        return NULL;
    }
    for (size_t i = start; i < n; i++)
        if ((unsigned char)buf[i] < 0x20 && buf[i] != '\n' && buf[i] != '\t')
            buf[i] = '?';
    memmove(buf, buf + start, n - start + 1);
    return buf;
}

/* The last line of a log (a crash's assertion text, an error line) into out. */
static void log_tail(const char *log, char *out, size_t size)
{
    out[0] = '\0';
    if (!log)
        return;
    const char *line = strrchr(log, '\n');
    snprintf(out, size, "%s", line ? line + 1 : log);
}

static void read_message(int fd, char *out, size_t size)
{
    size_t n = 0;
    while (n + 1 < size) {
        ssize_t r = read(fd, out + n, size - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    out[n] = '\0';
    for (size_t i = 0; i < n; i++)
        if (out[i] == '\n' || out[i] == '\r')
            out[i] = ' ';
}

/* ---- progress ------------------------------------------------------------------------------- */

typedef struct {
    int mode, total, finished, ran, failed;
    double t0, last_draw;
    int drawn;
    int elsewhere; /* scans running in other processes (a batch over MPI ranks) */
} progress;

static void fmt_duration(double s, char *buf, size_t size)
{
    if (s < 0)
        s = 0;
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, size, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
    else
        snprintf(buf, size, "%ld:%02ld", t / 60, t % 60);
}

static int term_width(void)
{
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
        return ws.ws_col;
    return 80;
}

static void progress_clear(progress *p)
{
    if (p->mode == 2 && p->drawn) {
        fputs("\r\033[K", stderr);
        p->drawn = 0;
    }
}

static void progress_draw(progress *p, const mr_batch_list *l, const worker *w, int jobs, int force)
{
    if (p->mode != 2)
        return;
    double now = mr_now();
    if (!force && now - p->last_draw < 0.2)
        return;
    p->last_draw = now;
    const char *current = "";
    int running = 0;
    double newest = -1;
    running = p->elsewhere;
    for (int i = 0; i < jobs; i++)
        if (w[i].pid > 0) {
            running++;
            if (w[i].start > newest) {
                newest = w[i].start;
                current = l->scans[w[i].scan].name;
            }
        }
    char elapsed[32], eta[32];
    fmt_duration(now - p->t0, elapsed, sizeof elapsed);
    /* completions so far per second of this run (parallel workers included) predict the rest */
    int remaining = p->total - p->finished;
    if (p->ran > 0)
        fmt_duration((now - p->t0) / p->ran * remaining, eta, sizeof eta);
    else
        snprintf(eta, sizeof eta, "--:--");
    int width = term_width();
    char bar[41];
    int bw = width >= 100 ? 30 : 20;
    int fill = p->total ? p->finished * bw / p->total : bw;
    for (int i = 0; i < bw; i++)
        bar[i] = i < fill ? '#' : '-';
    bar[bw] = '\0';
    char more[32] = "", failed[32] = "";
    if (running > 1)
        snprintf(more, sizeof more, " (+%d)", running - 1);
    if (p->failed)
        snprintf(failed, sizeof failed, "  failed %d", p->failed);
    char line[512];
    snprintf(line, sizeof line, "[%s] %d/%d%s%s%s%s  elapsed %s  ETA %s", bar, p->finished, p->total, failed,
             current[0] ? "  " : "", current, more, elapsed, eta);
    if ((int)strlen(line) > width - 1)
        line[width - 1] = '\0';
    fprintf(stderr, "\r\033[K%s", line);
    fflush(stderr);
    p->drawn = 1;
}

static void progress_finished(progress *p, const mr_batch_scan *s)
{
    p->finished++;
    if (p->mode == 0)
        return;
    if (s->state == MR_BATCH_FAILED)
        p->failed++;
    if (p->mode == 2 && s->state != MR_BATCH_FAILED)
        return; /* the bar shows it */
    progress_clear(p);
    if (s->state == MR_BATCH_FAILED)
        fprintf(stderr, "batch: [%d/%d] %s FAILED %.2f s: %s\n", p->finished, p->total, s->name, s->seconds, s->reason);
    else
        fprintf(stderr, "batch: [%d/%d] %s ok %.2f s\n", p->finished, p->total, s->name, s->seconds);
    fflush(stderr);
}

/* ---- the run -------------------------------------------------------------------------------- */

struct mr_batch_runner {
    const mr_batch_config *cfg;
    mr_batch_list *l;
    progress p;
    int next; /* position in the queue (cfg->order, else input order) */
};

/* The next pending scan of the queue, or -1. */
static int queue_next(mr_batch_runner *r)
{
    while (r->next < r->l->count) {
        int i = r->cfg->order ? r->cfg->order[r->next] : r->next;
        r->next++;
        if (i >= 0 && i < r->l->count && r->l->scans[i].state == MR_BATCH_PENDING)
            return i;
    }
    return -1;
}

int mr_batch_take(mr_batch_runner *r)
{
    int i = queue_next(r);
    if (i >= 0) {
        r->p.elsewhere++;
        progress_draw(&r->p, r->l, NULL, 0, 1);
    }
    return i;
}

void mr_batch_finished_elsewhere(mr_batch_runner *r, int scan)
{
    if (r->p.elsewhere > 0)
        r->p.elsewhere--;
    r->p.ran++;
    mr_batch_scan *s = &r->l->scans[scan];
    free(s->log);
    s->log = NULL;
    char logpath[PATH_MAX_LEN];
    if (s->state == MR_BATCH_FAILED && scan_path(logpath, sizeof logpath, r->cfg->outdir, s->name, LOG_FMT) == MR_OK)
        s->log = log_end(logpath, MR_BATCH_LOG_LINES, MR_BATCH_LOG_BYTES); /* the log is on the shared OUTDIR */
    if (s->state != MR_BATCH_INTERRUPTED) /* as for the scans of this process */
        progress_finished(&r->p, s);
}

mr_batch_list *mr_batch_runner_list(mr_batch_runner *r) { return r->l; }

static mr_status launch(const mr_batch_config *cfg, mr_batch_list *l, int si, worker *ws, int wi)
{
    mr_batch_scan *s = &l->scans[si];
    char partial[PATH_MAX_LEN], logpath[PATH_MAX_LEN];
    mr_status st = scan_path(partial, sizeof partial, cfg->outdir, s->name, PARTIAL_FMT);
    if (st == MR_OK)
        st = scan_path(logpath, sizeof logpath, cfg->outdir, s->name, LOG_FMT);
    if (st != MR_OK)
        return st;
    if (remove_tree(partial) != 0 || mkdir(partial, 0777) != 0)
        return mr_error(MR_EIO, "batch: cannot create %s: %s", partial, strerror(errno));
    int fds[2];
    if (pipe(fds) != 0)
        return mr_error(MR_EIO, "batch: pipe: %s", strerror(errno));
    mr_batch_slot slot = {wi, cfg->gpus ? cfg->gpus[wi] : -1, cfg->threads};
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        return mr_error(MR_EIO, "batch: fork: %s", strerror(e));
    }
    if (pid == 0) {
        close(fds[0]);
        for (int i = 0; i < cfg->jobs; i++)
            if (ws[i].pid > 0)
                close(ws[i].fd);
        child_main(cfg, s, &slot, partial, logpath, fds[1], parent);
    }
    close(fds[1]);
    ws[wi].pid = pid;
    ws[wi].scan = si;
    ws[wi].fd = fds[0];
    ws[wi].start = mr_now();
    ws[wi].timed_out = 0;
    mr_log(MR_LOG_DEBUG, "batch: worker %d (pid %ld, %s%d, %d threads): %s", wi, (long)pid,
           slot.gpu >= 0 ? "gpu:" : "cpu", slot.gpu >= 0 ? slot.gpu : 0, slot.threads, s->path);
    return MR_OK;
}

/* Move the partial folder into place; an older final folder is replaced. */
static mr_status commit_scan(const char *outdir, const char *name)
{
    char partial[PATH_MAX_LEN], final[PATH_MAX_LEN], old[PATH_MAX_LEN];
    mr_status st = scan_path(partial, sizeof partial, outdir, name, PARTIAL_FMT);
    if (st == MR_OK)
        st = scan_path(final, sizeof final, outdir, name, FINAL_FMT);
    if (st == MR_OK)
        st = scan_path(old, sizeof old, outdir, name, OLD_FMT);
    if (st != MR_OK)
        return st;
    struct stat sb;
    int had_old = lstat(final, &sb) == 0;
    if (had_old && rename(final, old) != 0)
        return mr_error(MR_EIO, "batch: cannot move the earlier %s aside: %s", final, strerror(errno));
    if (rename(partial, final) != 0)
        return mr_error(MR_EIO, "batch: cannot move %s into place: %s", final, strerror(errno));
    if (had_old)
        remove_tree(old);
    return MR_OK;
}

static void finish_worker(const mr_batch_config *cfg, mr_batch_list *l, worker *w, int status, int stopping,
                          progress *p)
{
    mr_batch_scan *s = &l->scans[w->scan];
    char msg[512], logpath[PATH_MAX_LEN], partial[PATH_MAX_LEN], final[PATH_MAX_LEN];
    read_message(w->fd, msg, sizeof msg);
    close(w->fd);
    s->seconds = mr_now() - w->start;
    w->pid = 0;
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    /* a scan that completed is kept even when the batch is stopping */
    if (ok) {
        if (commit_scan(cfg->outdir, s->name) == MR_OK) {
            s->state = MR_BATCH_DONE_NOW;
            p->ran++;
            progress_finished(p, s);
            return;
        }
        snprintf(s->reason, sizeof s->reason, "%s", mr_last_error());
    } else if ((stopping || g_interrupt) && WIFSIGNALED(status) && !w->timed_out) {
        s->state = MR_BATCH_INTERRUPTED;
        snprintf(s->reason, sizeof s->reason, "interrupted");
    } else {
        char tail[400] = "";
        free(s->log);
        s->log = NULL;
        if (scan_path(logpath, sizeof logpath, cfg->outdir, s->name, LOG_FMT) == MR_OK)
            s->log = log_end(logpath, MR_BATCH_LOG_LINES, MR_BATCH_LOG_BYTES);
        log_tail(s->log, tail, sizeof tail);
        if (w->timed_out)
            snprintf(s->reason, sizeof s->reason, "timed out after %g s (killed)", cfg->timeout);
        else if (WIFSIGNALED(status))
            snprintf(s->reason, sizeof s->reason, "crashed: signal %d (%s)%s%s", WTERMSIG(status),
                     strsignal(WTERMSIG(status)), tail[0] ? "; last output: " : "", tail);
        else if (msg[0])
            snprintf(s->reason, sizeof s->reason, "%s", msg);
        else
            snprintf(s->reason, sizeof s->reason, "exited with status %d%s%s",
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1, tail[0] ? "; last output: " : "", tail);
    }
    if (s->state != MR_BATCH_INTERRUPTED)
        s->state = MR_BATCH_FAILED;
    if (scan_path(partial, sizeof partial, cfg->outdir, s->name, PARTIAL_FMT) == MR_OK)
        remove_tree(partial);
    /* a folder left from an earlier run no longer describes this input */
    if (s->state == MR_BATCH_FAILED && scan_path(final, sizeof final, cfg->outdir, s->name, FINAL_FMT) == MR_OK)
        remove_tree(final);
    p->ran++;
    if (s->state == MR_BATCH_FAILED)
        progress_finished(p, s);
}

mr_status mr_batch_run(const mr_batch_config *cfg, mr_batch_list *l, int *interrupted)
{
    *interrupted = 0;
    if (cfg->jobs < 1 || !cfg->job)
        return mr_error(MR_EINVAL, "batch: need at least one worker and a job");
    const mr_batch_sched *sched = cfg->sched;
    const int worker_role = sched && !sched->root; /* OUTDIR and the queue are the root's */
    mr_status st = worker_role ? MR_OK : prepare_outdir(cfg);
    if (st != MR_OK)
        return st;

    mr_batch_runner run = {cfg, l, {cfg->progress, l->count, 0, 0, 0, mr_now(), 0, 0, 0}, 0};
    progress *pp = &run.p;
    int resumed = 0;
    for (int i = 0; i < l->count; i++) {
        mr_batch_scan *s = &l->scans[i];
        s->state = MR_BATCH_PENDING;
        s->reason[0] = '\0';
        free(s->log);
        s->log = NULL;
        char final[PATH_MAX_LEN], key[MR_BATCH_FINGERPRINT_MAX + 256];
        if (cfg->mode == MR_BATCH_RESUME && !worker_role &&
            scan_path(final, sizeof final, cfg->outdir, s->name, FINAL_FMT) == MR_OK &&
            marker_key(s->path, cfg->fingerprint, key, sizeof key) == MR_OK &&
            marker_matches(final, key, &s->seconds)) {
            s->state = MR_BATCH_RESUMED;
            resumed++;
            pp->finished++;
        }
    }
    mr_clear_error();
    if (resumed && pp->mode)
        fprintf(stderr, "batch: %d of %d scans already finished, left as they are\n", resumed, l->count);

    worker *ws = calloc((size_t)cfg->jobs, sizeof *ws);
    if (!ws)
        return mr_error(MR_ENOMEM, "batch: out of memory");
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    g_interrupt = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);

    int active = 0, told_to_stop = 0;
    double kill_deadline = 0;
    st = MR_OK;
    for (;;) {
        int stopping = g_interrupt != 0 || st != MR_OK || told_to_stop;
        /* the other processes: messages, scans handed out or finished elsewhere */
        if (sched && sched->poll && sched->poll(sched->ctx, &run, stopping) && !stopping)
            stopping = told_to_stop = 1;
        /* launch into idle workers */
        for (int w = 0; w < cfg->jobs && !stopping; w++) {
            if (ws[w].pid > 0)
                continue;
            int si = worker_role ? sched->next(sched->ctx) : queue_next(&run);
            if (si < 0)
                break;
            st = launch(cfg, l, si, ws, w);
            if (st != MR_OK) {
                stopping = 1;
                break;
            }
            active++;
            progress_draw(pp, l, ws, cfg->jobs, 1);
        }
        if (active == 0 && !(sched && sched->busy(sched->ctx, stopping)))
            break;
        if (stopping) {
            double now = mr_now();
            if (kill_deadline == 0 && active > 0) {
                progress_clear(pp);
                if (g_interrupt)
                    fprintf(stderr, "batch: interrupted, stopping %d running scan%s\n", active, active > 1 ? "s" : "");
                for (int w = 0; w < cfg->jobs; w++)
                    if (ws[w].pid > 0)
                        kill(ws[w].pid, SIGTERM);
                kill_deadline = now + 2.0;
            } else if (now > kill_deadline) {
                for (int w = 0; w < cfg->jobs; w++)
                    if (ws[w].pid > 0)
                        kill(ws[w].pid, SIGKILL);
            }
        }
        /* reap */
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid > 0) {
            for (int w = 0; w < cfg->jobs; w++)
                if (ws[w].pid == pid) {
                    int si = ws[w].scan;
                    finish_worker(cfg, l, &ws[w], status, stopping, pp);
                    active--;
                    if (sched && sched->done)
                        sched->done(sched->ctx, l, si);
                    break;
                }
            continue; /* the next round launches and redraws */
        }
        if (cfg->timeout > 0) {
            double now = mr_now();
            for (int w = 0; w < cfg->jobs; w++)
                if (ws[w].pid > 0 && !ws[w].timed_out && now - ws[w].start > cfg->timeout) {
                    ws[w].timed_out = 1;
                    kill(ws[w].pid, SIGKILL);
                }
        }
        progress_draw(pp, l, ws, cfg->jobs, 0);
        struct timespec ts = {0, 20 * 1000 * 1000}; /* reaping latency, and the resolution of scan times */
        nanosleep(&ts, NULL);
    }
    progress_clear(pp);
    free(ws);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (g_interrupt || told_to_stop) {
        *interrupted = 1;
        for (int i = 0; i < l->count; i++)
            if (l->scans[i].state == MR_BATCH_PENDING) {
                l->scans[i].state = MR_BATCH_INTERRUPTED;
                snprintf(l->scans[i].reason, sizeof l->scans[i].reason, "not started (interrupted)");
            }
    }
    return st;
}

static void gpu_count_child(void *ctx, void *out)
{
    (void)ctx;
    *(int *)out = mr_gpu_count();
}

int mr_batch_gpu_count(void)
{
    int n = 0;
    return mr_run_in_child(gpu_count_child, NULL, &n, sizeof n, NULL, NULL) == (long)sizeof n && n > 0 ? n : 0;
}
