/* `mrirecon batch`: many scans, one child process each, with progress, summaries and resume
 * (docs/BATCH.md is the user-facing description).
 *
 * Layout of OUTDIR:
 *   <name>/                 one finished scan (what the job wrote) + .done (completion marker)
 *   .<name>.partial/        a scan in progress; renamed to <name>/ only when complete
 *   .logs/<name>.log        stderr and stdout of the scan's child process
 *   summary.csv, summary.md, summary.html
 *
 * The library part knows nothing about reconstruction: the job is a callback run in a forked
 * child, so the runner can be tested with jobs that crash, hang or fail.
 *
 * Ownership: mr_batch_list owns its scans and strings, the logs included (mr_batch_list_free). */
#ifndef MR_BATCH_H
#define MR_BATCH_H

#include <stddef.h>

#include "../../base/status.h"

/* The marker file in each finished scan folder. */
#define MR_BATCH_DONE ".done"
/* Thumbnails written by the job into the scan folder (optional; used by summary.html). */
#define MR_BATCH_THUMB ".thumb.png"
#define MR_BATCH_ERRMAP ".error.png"

typedef enum {
    MR_BATCH_PENDING = 0, /* not started */
    MR_BATCH_DONE_NOW,    /* finished in this run */
    MR_BATCH_RESUMED,     /* finished in an earlier run, left untouched */
    MR_BATCH_FAILED,      /* the job failed, crashed or timed out; see reason */
    MR_BATCH_INTERRUPTED  /* killed because the batch was interrupted */
} mr_batch_state;

/* A failed scan keeps the end of its log for the summaries: at most this many lines, this many bytes. */
#define MR_BATCH_LOG_LINES 20
#define MR_BATCH_LOG_BYTES 4096

/* The longest option fingerprint a .done marker holds, with its NUL. */
#define MR_BATCH_FINGERPRINT_MAX 4096

typedef struct {
    char *path;     /* input file as resolved (relative list entries joined to the list's folder) */
    char *name;     /* unique output folder name (basename without .h5/.mrd/_ksp.cfl, disambiguated) */
    mr_batch_state state;
    char reason[512]; /* why it failed */
    char *log;        /* failed scans: the last MR_BATCH_LOG_LINES lines of .logs/<name>.log (at most
                         MR_BATCH_LOG_BYTES, control characters but tab shown as '?'); NULL otherwise */
    double seconds;   /* wall time of the child (or the earlier run's, when resumed) */
} mr_batch_scan;

typedef struct {
    mr_batch_scan *scans;
    int count;
} mr_batch_list;

/* Expand inputs into scans, in input order: a directory contributes its *.h5, *.mrd and BART
 * *_ksp.cfl files (not recursive, sorted by name); "@FILE" or a file ending in .txt/.lst is a list
 * (one path per line, relative paths relative to the list's folder, '#' starts a comment, blank
 * lines ignored; an entry may be a scan file or a directory, not another list); anything else is a
 * scan file (it need not exist: a missing file fails as a scan, with its reason). The same file
 * given twice (same device and inode) is kept once. Names: the basename without ".h5", ".mrd" or
 * "_ksp.cfl"; a name taken by an earlier scan, or reserved (summary.*, names starting with '.'),
 * gets "-2", "-3", ... */
mr_status mr_batch_collect(const char *const *inputs, int ninputs, mr_batch_list *out);
void mr_batch_list_free(mr_batch_list *l);

/* What one child gets to know about where it runs. */
typedef struct {
    int worker;    /* 0..jobs-1 */
    int gpu;       /* device index, or -1 for the CPU */
    int threads;   /* CPU threads for this worker */
} mr_batch_slot;

/* The job run in a child process: reconstruct `scan` into the existing, empty folder `outdir`.
 * Returning non-OK fails the scan with mr_last_error() as its reason. */
typedef mr_status (*mr_batch_job)(const char *scan, const char *outdir, const mr_batch_slot *slot, void *ctx);

typedef enum { MR_BATCH_FRESH = 0, MR_BATCH_RESUME, MR_BATCH_FORCE } mr_batch_mode;

struct mr_batch_sched; /* below: a batch spread over several processes */

typedef struct {
    const char *outdir;
    mr_batch_mode mode;
    int jobs;            /* workers >= 1 */
    const int *gpus;     /* gpus[w] = device of worker w, or NULL for CPU workers */
    int threads;         /* threads per worker */
    double timeout;      /* seconds per scan, 0 = none */
    const char *fingerprint; /* options that change results; stored in .done, compared on resume; shorter
                                than MR_BATCH_FINGERPRINT_MAX */
    int progress;        /* 0 none, 1 lines per finished scan, 2 redrawn bar (terminal) */
    mr_batch_job job;
    void *ctx;
    const int *order;                   /* the queue: scan indices in the order to run them; NULL = input order */
    const struct mr_batch_sched *sched; /* several processes (MPI: recon/cluster/mpi_batch.c); NULL = this one alone */
} mr_batch_config;

/* Prepare OUTDIR: FRESH refuses a non-empty existing OUTDIR (MR_EINVAL); RESUME and FORCE remove
 * stale .partial folders. Then run every scan not already finished (with RESUME: final folder
 * with a .done that matches the input's size and mtime and the fingerprint), `jobs` at a time,
 * each in its own child. Sets each scan's state. *interrupted is set when SIGINT or SIGTERM
 * stopped the batch (children killed, partial folders removed). Returns non-OK only for errors of
 * the batch itself (OUTDIR unusable, fork failed); failing scans are not errors. */
mr_status mr_batch_run(const mr_batch_config *cfg, mr_batch_list *list, int *interrupted);

/* ---- a batch spread over several processes (MPI ranks: recon/cluster/mpi_batch.c) -------------------
 * One process, the root, owns the queue: it prepares OUTDIR, decides what --resume keeps, runs
 * scans itself and hands out the others, reports progress; the summary is written by its caller.
 * The other processes (workers) run what the root hands them, with the same child-process
 * machinery (the same OUTDIR on a shared file system), and report each result. The hooks are
 * called from mr_batch_run's loop (about 50 rounds per second), never from a signal handler. */
typedef struct mr_batch_runner mr_batch_runner; /* the running batch, handed to the root's poll */

typedef struct mr_batch_sched {
    int root; /* 1: the root; 0: a worker (skips preparing OUTDIR and the --resume check) */
    void *ctx;
    /* Worker: the index of the next scan handed to this process, or -1 (none now). */
    int (*next)(void *ctx);
    /* Every round: exchange messages. The root hands out scans (mr_batch_take) and records the
     * results of the others (mr_batch_finished_elsewhere). `stopping`: this process is stopping
     * (signal, error, or told so). Returns 1 when the batch must stop (a worker told by the root). */
    int (*poll)(void *ctx, mr_batch_runner *r, int stopping);
    /* A scan run by this process finished: its state, reason and seconds are set. */
    void (*done)(void *ctx, const mr_batch_list *l, int scan);
    /* Root: scans running elsewhere, or processes not yet finished; worker: 1 while more work may
     * come. mr_batch_run returns when this and the local workers are idle. */
    int (*busy)(void *ctx, int stopping);
} mr_batch_sched;

/* Root, from poll: the next scan of the queue for another process (-1: none left). It stays
 * MR_BATCH_PENDING until mr_batch_finished_elsewhere. */
int mr_batch_take(mr_batch_runner *r);
/* Root, from poll: the state, reason and seconds of scan were set from another process's report
 * (progress counts it; a failed scan's log is read from OUTDIR/.logs for the summaries). */
void mr_batch_finished_elsewhere(mr_batch_runner *r, int scan);
/* The scans of the running batch. */
mr_batch_list *mr_batch_runner_list(mr_batch_runner *r);

/* Write summary.csv, summary.md and summary.html into outdir from the scans' states and their
 * folders' metrics.csv and thumbnails. `title` heads the pages. */
mr_status mr_batch_write_summary(const char *outdir, const mr_batch_list *list, const char *title);

/* The thumbnails of one finished scan for summary.html (MR_BATCH_THUMB, MR_BATCH_ERRMAP in
 * outdir): magnitude of image_cg.h5 (else the first image_*.h5) and, when the scan has a truth,
 * |I - I0| against /truth/image (else /truth/bandlimited), at most 128 pixels a side. */
mr_status mr_batch_thumbnails(const char *scan, const char *outdir);

/* Number of usable GPUs, asked in a short-lived child so that this process never initialises
 * CUDA (a CUDA context does not survive fork). 0 on any failure. */
int mr_batch_gpu_count(void);

/* Base64 of n bytes into a malloc'd NUL-terminated string (NULL when out of memory). */
char *mr_base64(const unsigned char *data, size_t n);

#endif
