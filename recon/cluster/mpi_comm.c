/* recon/cluster/mpi_comm.h with MPI: the only file of mrirecon that includes mpi.h. Compiled only in MPI
 * builds (MR_HAVE_MPI, set by CMakeLists.txt's MPI block); recon/cluster/mpi_comm_serial.c serves the
 * others.
 *
 * MPI is initialised only when a launcher started the process; otherwise the communicator is one
 * process and every call below takes the local path, so an MPI build started without mpirun
 * behaves like a plain build (and needs no running MPI runtime).
 *
 * The library works on a duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN, so an MPI failure
 * is a status with a message, not an abort of the job. */
#include "mpi_comm.h"

#ifdef MR_HAVE_MPI

#include <errno.h>
#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../base/log.h"

#define TAG_MSG 101  /* mr_comm_send / mr_comm_probe / mr_comm_recv */
#define TAG_DATA 102 /* mr_comm_gather_runs */
/* largest piece of one message, in elements (well below INT_MAX) */
#define PIECE ((int64_t)1 << 28)

/* A small message on its way (mr_comm_send): its own copy of the bytes, kept until MPI is done with it. */
typedef struct {
    MPI_Request req;
    void *buf;
    int dest;
    double since;
} pending_send;

struct mr_comm {
    int mpi;   /* MPI was initialised here (and is finalised by mr_comm_finalize) */
    int comms; /* world and local exist */
    MPI_Comm world, local;
    int rank, size, local_rank, local_size;
    char host[MPI_MAX_PROCESSOR_NAME + 1];
    pending_send *sends; /* mr_comm_send's messages not yet complete */
    int nsends, cap_sends;
};

/* The process that initialised MPI: its forked children (batch scans) must not use MPI. */
static pid_t g_mpi_pid;

int mr_comm_compiled(void) { return 1; }

int mr_comm_launched(void)
{
    if (g_mpi_pid != 0 && g_mpi_pid != getpid())
        return 0;
    return mr_comm_launcher_size() > 0;
}

static mr_status mpi_fail(int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING + 1];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
        len = 0;
    msg[len] = '\0';
    return mr_error(MR_EIO, "MPI: %s failed: %s", what, len ? msg : "unknown error");
}

mr_status mr_comm_init(mr_comm **out)
{
    *out = NULL;
    mr_comm *c = calloc(1, sizeof *c);
    if (!c)
        return mr_error(MR_ENOMEM, "out of memory");
    c->size = c->local_size = 1;
    c->world = c->local = MPI_COMM_NULL;
    if (gethostname(c->host, sizeof c->host - 1) != 0)
        c->host[0] = '\0';
    if (!mr_comm_launched()) {
        *out = c;
        return MR_OK;
    }
    int initialised = 0, provided = 0, rc;
    MPI_Initialized(&initialised);
    if (!initialised) {
        rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
        if (rc != MPI_SUCCESS) {
            free(c);
            return mr_error(MR_EIO, "MPI_Init failed (error %d)", rc);
        }
        c->mpi = 1;
        g_mpi_pid = getpid();
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = MPI_Comm_dup(MPI_COMM_WORLD, &c->world);
    if (rc == MPI_SUCCESS) {
        c->comms = 1;
        rc = MPI_Comm_set_errhandler(c->world, MPI_ERRORS_RETURN);
    }
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_rank(c->world, &c->rank);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_size(c->world, &c->size);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_split_type(c->world, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &c->local);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_rank(c->local, &c->local_rank);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_size(c->local, &c->local_size);
    if (rc != MPI_SUCCESS) {
        mr_status st = mpi_fail(rc, "setting up the communicators");
        mr_comm_finalize(c);
        return st;
    }
    int len = 0;
    if (MPI_Get_processor_name(c->host, &len) == MPI_SUCCESS)
        c->host[len] = '\0';
    *out = c;
    return MR_OK;
}

/* Complete what has completed of the pending sends (MPI_Test: never waits). */
static void progress_sends(mr_comm *c)
{
    for (int i = 0; i < c->nsends;) {
        int done = 0;
        if (MPI_Test(&c->sends[i].req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            done = 1; /* failed: MPI has released the request with its error */
        if (!done) {
            i++;
            continue;
        }
        free(c->sends[i].buf);
        c->sends[i] = c->sends[--c->nsends];
    }
}

/* Sends still pending after a last chance to complete until `deadline` (mr_now): cancelled and left;
 * their peers are gone or stuck, and MPI_Finalize or MPI_Abort follows. */
static void drain_sends(mr_comm *c, double deadline)
{
    for (;;) {
        progress_sends(c);
        if (c->nsends == 0 || mr_now() >= deadline)
            break;
        const struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    for (int i = 0; i < c->nsends; i++) {
        MPI_Cancel(&c->sends[i].req);
        MPI_Request_free(&c->sends[i].req);
        /* the buffer may still be read by MPI: it is left (a few hundred bytes, at the end of the job) */
    }
    c->nsends = 0;
}

void mr_comm_finalize(mr_comm *c)
{
    if (!c)
        return;
    if (c->comms) /* the last messages (e.g. rank 0's end of a split recon) reach live ranks first */
        drain_sends(c, mr_now() + 30.0);
    free(c->sends);
    if (c->comms) {
        if (c->local != MPI_COMM_NULL)
            MPI_Comm_free(&c->local);
        MPI_Comm_free(&c->world);
    }
    if (c->mpi)
        MPI_Finalize();
    free(c);
}

void mr_comm_abort(mr_comm *c, int code)
{
    if (c && c->comms) {
        fflush(stdout);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, code);
    }
}

/* ---- the end of a job, with a deadline ---------------------------------------------------------- */

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done, code;
    double seconds;
    const char *what;
} watchdog;

static void *watchdog_main(void *arg)
{
    watchdog *w = arg;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)w->seconds;
    pthread_mutex_lock(&w->mu);
    int rc = 0;
    while (!w->done && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&w->cv, &w->mu, &until);
    const int expired = !w->done;
    pthread_mutex_unlock(&w->mu);
    if (expired) {
        /* MPI is stuck (a rank that never comes, a runtime that lost a process): this process ends */
        fprintf(stderr, "mrirecon: warning: %s did not return within %.0f s; exiting with status %d\n", w->what,
                w->seconds, w->code);
        fflush(stderr);
        _exit(w->code);
    }
    return NULL;
}

void mr_comm_end(mr_comm *c, int code, int abort_job, double deadline_s)
{
    if (!c)
        return;
    if (!c->comms || deadline_s <= 0) {
        if (abort_job)
            mr_comm_abort(c, code);
        mr_comm_finalize(c);
        return;
    }
    watchdog w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, code, deadline_s,
                  abort_job ? "MPI_Abort" : "MPI_Finalize"};
    pthread_t th;
    const int armed = pthread_create(&th, NULL, watchdog_main, &w) == 0;
    if (abort_job) {
        drain_sends(c, mr_now() + 1.0);
        mr_comm_abort(c, code);
    }
    mr_comm_finalize(c);
    if (armed) {
        pthread_mutex_lock(&w.mu);
        w.done = 1;
        pthread_cond_signal(&w.cv);
        pthread_mutex_unlock(&w.mu);
        pthread_join(th, NULL);
    }
}

int mr_comm_rank(const mr_comm *c) { return c->rank; }
int mr_comm_size(const mr_comm *c) { return c->size; }
int mr_comm_local_rank(const mr_comm *c) { return c->local_rank; }
int mr_comm_local_size(const mr_comm *c) { return c->local_size; }
const char *mr_comm_host(const mr_comm *c) { return c->host; }

/* ---- small messages ------------------------------------------------------------------------- */

mr_status mr_comm_send(mr_comm *c, int dest, const void *buf, size_t n)
{
    if (c->size == 1 || dest < 0 || dest >= c->size || n > INT_MAX)
        return mr_error(MR_EINVAL, "send of %zu bytes to rank %d of %d", n, dest, c->size);
    progress_sends(c);
    if (c->nsends == c->cap_sends) {
        const int cap = c->cap_sends ? 2 * c->cap_sends : 16;
        pending_send *ns = realloc(c->sends, (size_t)cap * sizeof *ns);
        if (!ns)
            return mr_error(MR_ENOMEM, "send to rank %d: out of memory", dest);
        c->sends = ns;
        c->cap_sends = cap;
    }
    pending_send *p = &c->sends[c->nsends];
    if (!(p->buf = malloc(n ? n : 1)))
        return mr_error(MR_ENOMEM, "send to rank %d: out of memory", dest);
    memcpy(p->buf, buf, n);
    p->dest = dest;
    p->since = mr_now();
    const int rc = MPI_Isend(p->buf, (int)n, MPI_BYTE, dest, TAG_MSG, c->world, &p->req);
    if (rc != MPI_SUCCESS) {
        free(p->buf);
        return mpi_fail(rc, "MPI_Isend");
    }
    c->nsends++;
    progress_sends(c);
    return MR_OK;
}

int mr_comm_pending(mr_comm *c, int dest, double *oldest_s)
{
    progress_sends(c);
    int n = 0;
    double oldest = 0, now = mr_now();
    for (int i = 0; i < c->nsends; i++)
        if (c->sends[i].dest == dest) {
            n++;
            oldest = now - c->sends[i].since > oldest ? now - c->sends[i].since : oldest;
        }
    if (oldest_s)
        *oldest_s = oldest;
    return n;
}

int mr_comm_probe(mr_comm *c, int *src, size_t *n)
{
    if (c->size == 1)
        return 0;
    progress_sends(c);
    int flag = 0, count = 0;
    MPI_Status s;
    if (MPI_Iprobe(MPI_ANY_SOURCE, TAG_MSG, c->world, &flag, &s) != MPI_SUCCESS || !flag)
        return 0;
    if (MPI_Get_count(&s, MPI_BYTE, &count) != MPI_SUCCESS)
        count = 0;
    *src = s.MPI_SOURCE;
    *n = (size_t)count;
    return 1;
}

mr_status mr_comm_recv(mr_comm *c, int src, void *buf, size_t cap)
{
    if (c->size == 1 || src < 0 || src >= c->size)
        return mr_error(MR_EINVAL, "receive from rank %d of %d", src, c->size);
    int rc = MPI_Recv(buf, cap > INT_MAX ? INT_MAX : (int)cap, MPI_BYTE, src, TAG_MSG, c->world, MPI_STATUS_IGNORE);
    return rc == MPI_SUCCESS ? MR_OK : mpi_fail(rc, "MPI_Recv");
}

/* ---- collectives ---------------------------------------------------------------------------- */

mr_status mr_comm_agree(mr_comm *c, mr_status st)
{
    if (c->size == 1)
        return st;
    int mine = st != MR_OK ? c->rank : c->size, first = c->size;
    int rc = MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, c->world);
    if (rc != MPI_SUCCESS)
        return mpi_fail(rc, "MPI_Allreduce");
    if (first == c->size)
        return MR_OK;
    struct {
        int code;
        char host[64];
        char msg[960];
    } m;
    memset(&m, 0, sizeof m);
    if (c->rank == first) {
        m.code = (int)st;
        snprintf(m.host, sizeof m.host, "%.63s", c->host);
        snprintf(m.msg, sizeof m.msg, "%s", mr_last_error()[0] ? mr_last_error() : mr_strerror(st));
    }
    rc = MPI_Bcast(&m, (int)sizeof m, MPI_BYTE, first, c->world);
    if (rc != MPI_SUCCESS)
        return mpi_fail(rc, "MPI_Bcast");
    if (c->rank == first)
        return st;
    mr_status code = m.code > 0 && m.code < MR_STATUS_COUNT ? (mr_status)m.code : MR_EINTERNAL;
    return mr_error(code, "rank %d (%s): %s", first, m.host, m.msg);
}

mr_status mr_comm_bcast(mr_comm *c, void *buf, size_t n, int root)
{
    if (c->size == 1)
        return root == 0 ? MR_OK : mr_error(MR_EINVAL, "broadcast from rank %d of 1", root);
    char *p = buf;
    while (n > 0) {
        size_t k = n > (size_t)PIECE ? (size_t)PIECE : n;
        int rc = MPI_Bcast(p, (int)k, MPI_BYTE, root, c->world);
        if (rc != MPI_SUCCESS)
            return mpi_fail(rc, "MPI_Bcast");
        p += k;
        n -= k;
    }
    return MR_OK;
}

double mr_comm_max(mr_comm *c, double v)
{
    double r = v;
    if (c->size > 1 && MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_MAX, c->world) != MPI_SUCCESS)
        r = v;
    return r;
}

/* ---- gather ----------------------------------------------------------------------------------- */

mr_status mr_comm_gather_runs(mr_comm *c, int root, const float *send, const mr_comm_run *runs, int nruns,
                              float *out, int64_t out_len, int cover)
{
    if (c->size == 1)
        return mr_comm_gather_local(root, send, runs, nruns, out, out_len, cover);
    if (root < 0 || root >= c->size || nruns < 0 || (nruns > 0 && (!runs || !send)) || (c->rank == root && !out))
        return mr_error(MR_EINVAL, "gather: root %d of %d, %d runs", root, c->size, nruns);
    const int n = c->size;
    /* 1. the run tables to the root (MPI_Gather of the counts, MPI_Gatherv of the tables) */
    int *counts = NULL, *displs = NULL;
    mr_comm_run *all = NULL, *sorted = NULL;
    int64_t total_runs = 0;
    mr_status st = MR_OK;
    int rc;
    if (c->rank == root) {
        counts = calloc((size_t)n, sizeof *counts);
        displs = calloc((size_t)n, sizeof *displs);
        if (!counts || !displs)
            st = mr_error(MR_ENOMEM, "gather: out of memory");
    }
    int mine_bytes = nruns * (int)sizeof(mr_comm_run);
    rc = MPI_Gather(&mine_bytes, 1, MPI_INT, counts, 1, MPI_INT, root, c->world);
    if (rc != MPI_SUCCESS)
        st = mpi_fail(rc, "MPI_Gather");
    if (c->rank == root && st == MR_OK) {
        int64_t bytes = 0;
        for (int r = 0; r < n; r++) {
            if (counts[r] < 0 || counts[r] % (int)sizeof(mr_comm_run) != 0 || bytes + counts[r] > INT_MAX) {
                st = mr_error(MR_EINTERNAL, "gather: rank %d announces a run table of %d bytes", r, counts[r]);
                break;
            }
            displs[r] = (int)bytes;
            bytes += counts[r];
        }
        total_runs = bytes / (int64_t)sizeof(mr_comm_run);
        if (st == MR_OK) {
            all = malloc((size_t)(total_runs > 0 ? total_runs : 1) * sizeof *all);
            sorted = malloc((size_t)(total_runs > 0 ? total_runs : 1) * sizeof *sorted);
            if (!all || !sorted)
                st = mr_error(MR_ENOMEM, "gather: out of memory for %lld runs", (long long)total_runs);
        }
    }
    /* the root may have failed above: everybody still takes part in the Gatherv (with the root's
       buffers NULL the root's failure is agreed on right after) */
    rc = MPI_Gatherv(runs, mine_bytes, MPI_BYTE, st == MR_OK ? (void *)all : NULL, counts, displs, MPI_BYTE, root,
                     c->world);
    if (rc != MPI_SUCCESS && st == MR_OK)
        st = mpi_fail(rc, "MPI_Gatherv");
    /* 2. the root checks every run (bounds, overlap, coverage) before any data moves */
    if (c->rank == root && st == MR_OK) {
        memcpy(sorted, all, (size_t)total_runs * sizeof *all);
        st = mr_comm_check_runs(sorted, total_runs, out_len, cover);
    }
    st = mr_comm_agree(c, st);
    if (st != MR_OK)
        goto done;
    /* 3. data: pieces of at most PIECE floats, received straight into place */
    if (c->rank == root) {
        int64_t k = 0;
        for (int r = 0; r < n; r++) {
            const int nr = counts[r] / (int)sizeof(mr_comm_run);
            for (int i = 0; i < nr && st == MR_OK; i++, k++) {
                const mr_comm_run *u = &all[displs[r] / (int)sizeof(mr_comm_run) + i];
                if (r == root) {
                    memcpy(out + u->dst, send + u->src, (size_t)u->count * sizeof *out);
                    continue;
                }
                for (int64_t off = 0; off < u->count && st == MR_OK; off += PIECE) {
                    int len = (int)(u->count - off < PIECE ? u->count - off : PIECE);
                    rc = MPI_Recv(out + u->dst + off, len, MPI_FLOAT, r, TAG_DATA, c->world, MPI_STATUS_IGNORE);
                    if (rc != MPI_SUCCESS)
                        st = mpi_fail(rc, "MPI_Recv (gather)");
                }
            }
        }
    } else {
        for (int i = 0; i < nruns && st == MR_OK; i++)
            for (int64_t off = 0; off < runs[i].count && st == MR_OK; off += PIECE) {
                int len = (int)(runs[i].count - off < PIECE ? runs[i].count - off : PIECE);
                rc = MPI_Send(send + runs[i].src + off, len, MPI_FLOAT, root, TAG_DATA, c->world);
                if (rc != MPI_SUCCESS)
                    st = mpi_fail(rc, "MPI_Send (gather)");
            }
    }
    st = mr_comm_agree(c, st);
done:
    free(counts);
    free(displs);
    free(all);
    free(sorted);
    return st;
}

#else
typedef int mr_comm_mpi_unused; /* ISO C: a translation unit is not empty */
#endif
