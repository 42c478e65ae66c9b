/* mrirecon batch over MPI ranks: the root's queue and the workers' side of the protocol, as hooks
 * of recon/batch/batch.c's runner (recon/cluster/mpi_batch.h describes the behaviour, docs/CLUSTER.md the use).
 *
 * Messages (one fixed struct, a few hundred bytes, sent eagerly; tags are the comm's):
 *   worker -> root: HELLO (pid, host, machine id), REQUEST (one of my workers is idle),
 *                   RESULT (scan, state, seconds, reason), HEARTBEAT (every 2 s), BYE (done)
 *   root -> worker: ASSIGN (scan index into the shared list), NOMORE (queue empty), STOP
 * Every rank holds the same list (sent by the root), so a scan is named by its index. */
#include "mpi_batch.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "../../base/child.h"
#include "../../base/grid.h"
#include "../../base/log.h"
#include "../../io/h5util.h"

#define HEARTBEAT_S 2.0
#define LIVENESS_S 1.0    /* the root checks its workers this often */
#define STOP_WAIT_S 0.5   /* a stopping root waits this long for the workers' last reports */
#define END_WAIT_S 3.0    /* the root's last wait for workers' goodbyes (their children die within 2 s) */

enum { M_HELLO = 1, M_REQUEST, M_ASSIGN, M_NOMORE, M_STOP, M_RESULT, M_HEARTBEAT, M_BYE };

typedef struct {
    int32_t type, scan, state, pad;
    int64_t pid;
    double seconds;
    char host[64];
    char machine[96];
    char text[512];
} msg;

enum { PEER_RUNNING = 0, PEER_DONE, PEER_LOST, PEER_ABANDONED };

typedef struct {
    int status;
    double last_seen;
    int64_t pid;
    char host[64], machine[96];
} peer;

struct mr_mpi_batch {
    mr_comm *comm;
    int rank, size;
    double timeout;
    char machine[96];
    mr_batch_sched sched;
    mr_batch_list *list;
    int *order; /* root: the queue */
    /* root */
    peer *peers;
    int *owner; /* [count] rank running the scan elsewhere, or -1 */
    int inflight, lost, stop_sent;
    double stop_deadline, last_check;
    /* worker */
    int *queue, qhead, qtail; /* handed to this rank, not yet started */
    int *assigned, nassigned; /* every scan handed to this rank */
    int requested, nomore, stop, root_lost;
    double request_time, last_heartbeat, root_seen;
    int64_t root_pid;
    char root_machine[96];
};

/* ---- messages ------------------------------------------------------------------------------- */

static void msg_init(msg *m, int type)
{
    memset(m, 0, sizeof *m);
    m->type = type;
}

static mr_status send_msg(mr_mpi_batch *b, int dest, int type, int scan)
{
    msg m;
    msg_init(&m, type);
    m.scan = scan;
    return mr_comm_send(b->comm, dest, &m, sizeof m);
}

/* Receive one waiting message; 0 when none. A message of the wrong size is dropped (logged). */
static int recv_msg(mr_mpi_batch *b, msg *m, int *src)
{
    size_t n = 0;
    while (mr_comm_probe(b->comm, src, &n)) {
        if (mr_comm_recv(b->comm, *src, m, sizeof *m) != MR_OK) {
            mr_log(MR_LOG_WARN, "batch: rank %d: %s", b->rank, mr_last_error());
            return 0;
        }
        if (n == sizeof *m)
            return 1;
        mr_log(MR_LOG_WARN, "batch: rank %d: dropped a message of %zu bytes from rank %d", b->rank, n, *src);
    }
    return 0;
}

/* 1 when a process on the same machine (same boot and PID namespace) is known to be gone. */
static int process_gone(const char *mine, const char *theirs, int64_t pid)
{
    return mine[0] && strcmp(mine, theirs) == 0 && pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* ---- the root -------------------------------------------------------------------------------- */

static void lose_rank(mr_mpi_batch *b, mr_batch_runner *r, int rank, const char *why)
{
    peer *p = &b->peers[rank];
    if (p->status != PEER_RUNNING)
        return;
    p->status = PEER_LOST;
    b->lost++;
    mr_log(MR_LOG_WARN, "batch: rank %d (%s, pid %lld) lost: %s; its running scans are marked failed (--resume redoes them)",
           rank, p->host[0] ? p->host : "?", (long long)p->pid, why);
    for (int i = 0; i < b->list->count; i++)
        if (b->owner[i] == rank) {
            mr_batch_scan *s = &b->list->scans[i];
            s->state = MR_BATCH_FAILED;
            snprintf(s->reason, sizeof s->reason, "rank %d (%s) was lost while running this scan (%s); --resume redoes it",
                     rank, p->host[0] ? p->host : "?", why);
            b->owner[i] = -1;
            b->inflight--;
            mr_batch_finished_elsewhere(r, i);
        }
}

static void root_message(mr_mpi_batch *b, mr_batch_runner *r, int src, const msg *m, int stopping)
{
    peer *p = &b->peers[src];
    if (p->status == PEER_LOST || p->status == PEER_ABANDONED) {
        /* declared lost but alive after all: it must not start anything more */
        if (m->type == M_REQUEST || m->type == M_HELLO)
            send_msg(b, src, M_STOP, -1);
        if (m->type == M_BYE)
            p->status = PEER_DONE;
        return;
    }
    switch (m->type) {
    case M_HELLO:
        p->pid = m->pid;
        memcpy(p->host, m->host, sizeof p->host);
        p->host[sizeof p->host - 1] = '\0';
        memcpy(p->machine, m->machine, sizeof p->machine);
        p->machine[sizeof p->machine - 1] = '\0';
        break;
    case M_REQUEST: {
        int i = stopping ? -1 : mr_batch_take(r);
        if (i < 0) {
            send_msg(b, src, stopping ? M_STOP : M_NOMORE, -1);
            break;
        }
        b->owner[i] = src;
        b->inflight++;
        if (send_msg(b, src, M_ASSIGN, i) != MR_OK)
            lose_rank(b, r, src, mr_last_error());
        else
            mr_log(MR_LOG_DEBUG, "batch: %s -> rank %d", b->list->scans[i].name, src);
        break;
    }
    case M_RESULT: {
        int i = m->scan;
        if (i < 0 || i >= b->list->count || b->owner[i] != src ||
            (m->state != MR_BATCH_DONE_NOW && m->state != MR_BATCH_FAILED && m->state != MR_BATCH_INTERRUPTED)) {
            mr_log(MR_LOG_WARN, "batch: rank %d reported scan %d (state %d), which it was not running", src, i,
                   m->state);
            break;
        }
        mr_batch_scan *s = &b->list->scans[i];
        s->state = (mr_batch_state)m->state;
        s->seconds = m->seconds;
        snprintf(s->reason, sizeof s->reason, "%.*s", (int)sizeof m->text - 1, m->text);
        b->owner[i] = -1;
        b->inflight--;
        mr_batch_finished_elsewhere(r, i);
        break;
    }
    case M_HEARTBEAT:
        break;
    case M_BYE:
        p->status = PEER_DONE;
        break;
    default:
        mr_log(MR_LOG_WARN, "batch: unknown message %d from rank %d", m->type, src);
    }
}

static int root_poll(void *ctx, mr_batch_runner *r, int stopping)
{
    mr_mpi_batch *b = ctx;
    double now = mr_now();
    msg m;
    int src;
    while (recv_msg(b, &m, &src)) {
        b->peers[src].last_seen = now;
        root_message(b, r, src, &m, stopping);
    }
    if (stopping && !b->stop_sent) {
        for (int k = 1; k < b->size; k++)
            if (b->peers[k].status == PEER_RUNNING)
                send_msg(b, k, M_STOP, -1);
        b->stop_sent = 1;
        b->stop_deadline = now + STOP_WAIT_S;
    }
    if (now - b->last_check >= LIVENESS_S) {
        b->last_check = now;
        for (int k = 1; k < b->size; k++) {
            peer *p = &b->peers[k];
            if (p->status != PEER_RUNNING)
                continue;
            char why[128];
            double stuck = 0;
            if (process_gone(b->machine, p->machine, p->pid)) {
                lose_rank(b, r, k, "its process is gone");
            } else if (now - p->last_seen > b->timeout) {
                snprintf(why, sizeof why, "no message for %.0f s", now - p->last_seen);
                lose_rank(b, r, k, why);
            } else if (mr_comm_pending(b->comm, k, &stuck) > 0 && stuck > b->timeout) {
                snprintf(why, sizeof why, "it took no message for %.0f s", stuck);
                lose_rank(b, r, k, why);
            }
        }
    }
    if (b->stop_sent && now > b->stop_deadline) {
        /* the summary must not wait: what has not been reported by now counts as interrupted */
        for (int i = 0; i < b->list->count; i++)
            if (b->owner[i] >= 0) {
                mr_batch_scan *s = &b->list->scans[i];
                s->state = MR_BATCH_INTERRUPTED;
                snprintf(s->reason, sizeof s->reason, "interrupted (rank %d did not report)", b->owner[i]);
                b->owner[i] = -1;
                b->inflight--;
                mr_batch_finished_elsewhere(r, i);
            }
        for (int k = 1; k < b->size; k++)
            if (b->peers[k].status == PEER_RUNNING)
                b->peers[k].status = PEER_ABANDONED;
    }
    return 0;
}

static int root_busy(void *ctx, int stopping)
{
    (void)stopping;
    mr_mpi_batch *b = ctx;
    if (b->inflight > 0)
        return 1;
    for (int k = 1; k < b->size; k++)
        if (b->peers[k].status == PEER_RUNNING)
            return 1;
    return 0;
}

/* ---- a worker -------------------------------------------------------------------------------- */

static int worker_next(void *ctx)
{
    mr_mpi_batch *b = ctx;
    if (b->qhead < b->qtail)
        return b->queue[b->qhead++];
    if (!b->requested && !b->nomore && !b->stop && !b->root_lost) {
        if (send_msg(b, 0, M_REQUEST, -1) == MR_OK) {
            b->requested = 1;
            b->request_time = mr_now();
        } else {
            mr_log(MR_LOG_WARN, "batch: rank %d cannot reach rank 0: %s", b->rank, mr_last_error());
            b->root_lost = 1;
        }
    }
    return -1;
}

static int worker_poll(void *ctx, mr_batch_runner *r, int stopping)
{
    (void)r;
    (void)stopping;
    mr_mpi_batch *b = ctx;
    double now = mr_now();
    msg m;
    int src;
    while (recv_msg(b, &m, &src)) {
        if (src != 0)
            continue;
        b->root_seen = now;
        if (m.type == M_ASSIGN && m.scan >= 0 && m.scan < b->list->count && b->qtail < b->list->count) {
            b->queue[b->qtail++] = m.scan;
            b->assigned[b->nassigned++] = m.scan;
            b->requested = 0;
        } else if (m.type == M_NOMORE) {
            b->nomore = 1;
            b->requested = 0;
        } else if (m.type == M_STOP) {
            b->stop = 1;
        } else {
            mr_log(MR_LOG_WARN, "batch: rank %d: unexpected message %d (scan %d) from rank 0", b->rank, m.type, m.scan);
        }
    }
    if (!b->root_lost && now - b->last_heartbeat >= HEARTBEAT_S) {
        b->last_heartbeat = now;
        if (send_msg(b, 0, M_HEARTBEAT, -1) != MR_OK)
            b->root_lost = 1;
    }
    if (!b->root_lost && (process_gone(b->machine, b->root_machine, b->root_pid) ||
                          (b->requested && now - b->request_time > b->timeout))) {
        mr_log(MR_LOG_WARN, "batch: rank %d: rank 0 is gone or silent; stopping", b->rank);
        b->root_lost = 1;
    }
    return b->stop || b->root_lost;
}

static void worker_done(void *ctx, const mr_batch_list *l, int scan)
{
    mr_mpi_batch *b = ctx;
    const mr_batch_scan *s = &l->scans[scan];
    msg m;
    msg_init(&m, M_RESULT);
    m.scan = scan;
    m.state = (int32_t)s->state;
    m.seconds = s->seconds;
    snprintf(m.text, sizeof m.text, "%s", s->reason);
    if (!b->root_lost && mr_comm_send(b->comm, 0, &m, sizeof m) != MR_OK)
        b->root_lost = 1;
}

static int worker_busy(void *ctx, int stopping)
{
    mr_mpi_batch *b = ctx;
    if (stopping || b->stop || b->root_lost)
        return 0;
    return !b->nomore || b->qhead < b->qtail;
}

/* ---- set-up and end ------------------------------------------------------------------------- */

mr_status mr_mpi_batch_create(mr_comm *comm, double rank_timeout, mr_mpi_batch **out)
{
    *out = NULL;
    mr_mpi_batch *b = calloc(1, sizeof *b);
    if (!b)
        return mr_error(MR_ENOMEM, "batch: out of memory");
    b->comm = comm;
    b->rank = mr_comm_rank(comm);
    b->size = mr_comm_size(comm);
    b->timeout = rank_timeout > 0 ? rank_timeout : 60;
    mr_comm_machine_id(b->machine, sizeof b->machine);
    *out = b;
    return MR_OK;
}

double mr_mpi_batch_timeout(const mr_mpi_batch *b) { return b ? b->timeout : 0; }

void mr_mpi_batch_free(mr_mpi_batch *b)
{
    if (!b)
        return;
    free(b->order);
    free(b->peers);
    free(b->owner);
    free(b->queue);
    free(b->assigned);
    free(b);
}

/* The head of the list message. */
typedef struct {
    int32_t status, count;
    int64_t bytes; /* of the packed paths and names that follow */
    int64_t root_pid;
    char machine[96];
    char text[960];
} list_head;

/* Stable order by cost, descending (ties in input order). */
static mr_status order_by_cost(const mr_batch_list *l, int **order)
{
    double *cost = calloc((size_t)l->count, sizeof *cost);
    int *o = malloc((size_t)l->count * sizeof *o);
    if (!cost || !o) {
        free(cost);
        free(o);
        return mr_error(MR_ENOMEM, "batch: out of memory");
    }
    if (mr_batch_costs(l, cost) != MR_OK)
        mr_log(MR_LOG_WARN, "batch: no cost estimates (%s): scans run in input order", mr_last_error());
    for (int i = 0; i < l->count; i++)
        o[i] = i;
    /* insertion sort: stable, and lists are at most thousands long */
    for (int i = 1; i < l->count; i++) {
        int v = o[i], j = i;
        while (j > 0 && cost[o[j - 1]] < cost[v]) {
            o[j] = o[j - 1];
            j--;
        }
        o[j] = v;
    }
    if (l->count > 0)
        mr_log(MR_LOG_INFO, "batch: queue by estimated cost, first %s (%.3g), last %s (%.3g)", l->scans[o[0]].name,
               cost[o[0]], l->scans[o[l->count - 1]].name, cost[o[l->count - 1]]);
    free(cost);
    *order = o;
    return MR_OK;
}

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

mr_status mr_mpi_batch_share_list(mr_mpi_batch *b, mr_batch_list *l, mr_status collect_status)
{
    list_head h;
    memset(&h, 0, sizeof h);
    char *buf = NULL;
    if (b->rank == 0) {
        h.status = (int32_t)collect_status;
        if (collect_status == MR_OK && l->count == 0)
            h.status = (int32_t)mr_error(MR_EINVAL, "no scans found in the inputs");
        if (h.status == MR_OK)
            h.status = (int32_t)order_by_cost(l, &b->order);
        int64_t bytes = 0;
        for (int i = 0; h.status == MR_OK && i < l->count; i++)
            bytes += (int64_t)strlen(l->scans[i].path) + strlen(l->scans[i].name) + 2;
        if (h.status == MR_OK && !(buf = malloc((size_t)(bytes > 0 ? bytes : 1))))
            h.status = mr_error(MR_ENOMEM, "batch: out of memory for the list of %d scans", l->count);
        if (h.status != MR_OK)
            snprintf(h.text, sizeof h.text, "%s", mr_last_error());
        else {
            char *p = buf;
            for (int i = 0; i < l->count; i++) {
                size_t a = strlen(l->scans[i].path) + 1, c = strlen(l->scans[i].name) + 1;
                memcpy(p, l->scans[i].path, a);
                memcpy(p + a, l->scans[i].name, c);
                p += a + c;
            }
            h.count = l->count;
            h.bytes = bytes;
        }
        h.root_pid = (int64_t)getpid();
        memcpy(h.machine, b->machine, sizeof h.machine);
    }
    mr_status st = mr_comm_bcast(b->comm, &h, sizeof h, 0);
    if (st != MR_OK) {
        free(buf);
        return st;
    }
    if (h.status != MR_OK) {
        free(buf);
        mr_status code = h.status > 0 && h.status < MR_STATUS_COUNT ? (mr_status)h.status : MR_EINTERNAL;
        return b->rank == 0 ? code : mr_error(code, "%s", h.text);
    }
    b->root_pid = h.root_pid;
    memcpy(b->root_machine, h.machine, sizeof b->root_machine);
    b->root_machine[sizeof b->root_machine - 1] = '\0';
    if (b->rank != 0 && (h.count < 0 || h.bytes < 0 || !(buf = malloc((size_t)(h.bytes > 0 ? h.bytes : 1)))))
        st = mr_error(MR_ENOMEM, "batch: out of memory for the list of %d scans", (int)h.count);
    st = mr_comm_agree(b->comm, st); /* everybody has the buffer before the second broadcast */
    if (st == MR_OK)
        st = mr_comm_bcast(b->comm, buf, (size_t)h.bytes, 0);
    if (st == MR_OK && b->rank != 0) {
        memset(l, 0, sizeof *l);
        l->scans = calloc((size_t)(h.count > 0 ? h.count : 1), sizeof *l->scans);
        if (!l->scans)
            st = mr_error(MR_ENOMEM, "batch: out of memory");
        const char *p = buf, *end = buf + h.bytes;
        for (int i = 0; st == MR_OK && i < h.count; i++) {
            /* path NUL name NUL */
            size_t left = (size_t)(end - p), a = strnlen(p, left);
            size_t left2 = a < left ? left - a - 1 : 0, c = a < left ? strnlen(p + a + 1, left2) : 0;
            if (a >= left || c >= left2) {
                st = mr_error(MR_EINTERNAL, "batch: the list from rank 0 is malformed at scan %d", i);
                break;
            }
            l->scans[i].path = dup_n(p, a);
            l->scans[i].name = dup_n(p + a + 1, c);
            l->count = i + 1;
            if (!l->scans[i].path || !l->scans[i].name)
                st = mr_error(MR_ENOMEM, "batch: out of memory");
            p += a + c + 2;
        }
    }
    free(buf);
    st = mr_comm_agree(b->comm, st);
    if (st != MR_OK)
        return st;
    b->list = l;
    int n = l->count > 0 ? l->count : 1;
    if (b->rank == 0) {
        b->peers = calloc((size_t)b->size, sizeof *b->peers);
        b->owner = malloc((size_t)n * sizeof *b->owner);
        if (b->peers && b->owner) {
            double now = mr_now();
            for (int i = 0; i < n; i++)
                b->owner[i] = -1;
            for (int k = 0; k < b->size; k++)
                b->peers[k].last_seen = now;
            b->peers[0].status = PEER_DONE; /* the root is not its own peer */
        }
    } else {
        b->queue = malloc((size_t)n * sizeof *b->queue);
        b->assigned = malloc((size_t)n * sizeof *b->assigned);
    }
    st = (b->rank == 0 ? b->peers && b->owner : b->queue && b->assigned) ? MR_OK
                                                                          : mr_error(MR_ENOMEM, "batch: out of memory");
    return mr_comm_agree(b->comm, st);
}

void mr_mpi_batch_configure(mr_mpi_batch *b, mr_batch_config *cfg)
{
    memset(&b->sched, 0, sizeof b->sched);
    b->sched.ctx = b;
    if (b->rank == 0) {
        b->sched.root = 1;
        b->sched.poll = root_poll;
        b->sched.busy = root_busy;
        b->last_check = mr_now();
        cfg->order = b->order;
    } else {
        b->sched.next = worker_next;
        b->sched.poll = worker_poll;
        b->sched.done = worker_done;
        b->sched.busy = worker_busy;
        b->last_heartbeat = b->root_seen = mr_now();
        msg m;
        msg_init(&m, M_HELLO);
        m.pid = (int64_t)getpid();
        snprintf(m.host, sizeof m.host, "%.63s", mr_comm_host(b->comm));
        memcpy(m.machine, b->machine, sizeof m.machine);
        if (mr_comm_send(b->comm, 0, &m, sizeof m) != MR_OK)
            b->root_lost = 1;
        cfg->progress = 0; /* the root reports */
    }
    cfg->sched = &b->sched;
}

int mr_mpi_batch_end(mr_mpi_batch *b, mr_batch_list *l, mr_status st)
{
    if (b->rank != 0) {
        if (b->root_lost)
            return 1;
        const char *why = st != MR_OK ? mr_last_error() : "";
        for (int k = 0; k < b->nassigned; k++) {
            mr_batch_scan *s = &l->scans[b->assigned[k]];
            if (s->state == MR_BATCH_DONE_NOW || s->state == MR_BATCH_FAILED)
                continue;
            if (s->state != MR_BATCH_INTERRUPTED) { /* handed to us but never started */
                s->state = st != MR_OK ? MR_BATCH_FAILED : MR_BATCH_INTERRUPTED;
                snprintf(s->reason, sizeof s->reason, "%s%s", st != MR_OK ? "rank could not run it: " : "not started (interrupted)",
                         why);
                worker_done(b, l, b->assigned[k]);
            }
        }
        send_msg(b, 0, M_BYE, -1);
        return 0;
    }
    /* the root: tell whoever still waits to stop, and wait a little for the goodbyes */
    double deadline = mr_now() + END_WAIT_S;
    int waiting = 0;
    for (int k = 1; k < b->size; k++)
        if (b->peers && b->peers[k].status == PEER_RUNNING) {
            send_msg(b, k, M_STOP, -1);
            waiting++;
        }
    while (waiting > 0 && mr_now() < deadline) {
        msg m;
        int src;
        if (recv_msg(b, &m, &src)) {
            peer *p = &b->peers[src];
            if (m.type == M_BYE && p->status == PEER_RUNNING) {
                p->status = PEER_DONE;
                waiting--;
            } else if (m.type == M_RESULT && m.scan >= 0 && m.scan < l->count && b->owner[m.scan] == src) {
                mr_batch_scan *s = &l->scans[m.scan]; /* a late report of a scan already counted */
                s->state = (mr_batch_state)m.state;
                s->seconds = m.seconds;
                snprintf(s->reason, sizeof s->reason, "%.*s", (int)sizeof m.text - 1, m.text);
                b->owner[m.scan] = -1;
            } else if (m.type == M_REQUEST) {
                send_msg(b, src, M_STOP, -1);
            }
            continue;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return b->lost;
}

/* ---- the node's share ------------------------------------------------------------------------ */

int mr_mpi_node_gpus(const mr_comm *c, int ngpu, int *gpus)
{
    int lr = mr_comm_local_rank(c), ls = mr_comm_local_size(c), n = 0;
    if (ngpu <= 0)
        return 0;
    if (ngpu >= ls) {
        for (int g = lr; g < ngpu; g += ls)
            gpus[n++] = g;
    } else {
        gpus[n++] = lr % ngpu;
    }
    return n;
}

int mr_mpi_node_cores(const mr_comm *c)
{
    int bound = 0, cpus = mr_comm_affinity_cpus(&bound);
    if (bound)
        return cpus;
    int ls = mr_comm_local_size(c), lr = mr_comm_local_rank(c);
    int share = cpus / ls + (lr < cpus % ls ? 1 : 0);
    return share > 0 ? share : 1;
}

/* ---- costs ----------------------------------------------------------------------------------- */

/* samples x voxels x (coils + 2^dims) from the header of one scan file; 0 when unreadable. */
static double scan_cost(const char *path)
{
    hid_t file = H5I_INVALID_HID, grp = H5I_INVALID_HID, dt = H5I_INVALID_HID, dd = H5I_INVALID_HID;
    hsize_t tdims[2] = {0, 0}, ddims[3] = {0, 0, 0};
    int64_t matrix[3] = {0, 0, 0};
    double cost = 0;
    if (mr_h5_open_read(path, &file) == MR_OK && mr_h5_open_group(file, path, "/kspace", &grp) == MR_OK &&
        mr_h5_attr_read(grp, path, "/kspace", "matrix", H5T_INTEGER, H5T_NATIVE_INT64, matrix, 3, NULL) == MR_OK &&
        mr_matrix_check(matrix, path) == MR_OK && mr_h5_open_f32(file, path, "/kspace/traj", 2, &dt, tdims) == MR_OK &&
        mr_h5_open_f32(file, path, "/kspace/data", 3, &dd, ddims) == MR_OK) {
        double voxels = (double)matrix[0] * (double)matrix[1] * (double)matrix[2];
        cost = (double)tdims[0] * voxels * ((double)ddims[0] + (matrix[2] > 1 ? 8.0 : 4.0));
    }
    mr_h5_close(&dd);
    mr_h5_close(&dt);
    mr_h5_close(&grp);
    mr_h5_close(&file);
    return cost;
}

static void costs_child(void *ctx, void *out)
{
    const mr_batch_list *l = ctx;
    double *cost = out;
    mr_h5_quiet();
    for (int i = 0; i < l->count; i++)
        cost[i] = scan_cost(l->scans[i].path);
}

mr_status mr_batch_costs(const mr_batch_list *l, double *cost)
{
    size_t want = (size_t)l->count * sizeof *cost;
    for (int i = 0; i < l->count; i++)
        cost[i] = 0;
    /* headers read in a child: this process never opens the user's files with libhdf5 */
    const long r = mr_run_in_child(costs_child, (void *)l, cost, want, NULL, NULL);
    const size_t got = r > 0 ? (size_t)r : 0;
    for (size_t i = got / sizeof *cost; i < (size_t)l->count; i++)
        cost[i] = 0; /* the child failed part way: the rest keep input order at the end */
    if (got < want)
        return mr_error(MR_EIO, "batch: the header reader stopped after %zu of %d scans", got / sizeof *cost, l->count);
    return MR_OK;
}
