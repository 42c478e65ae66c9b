/* One reconstruction over MPI ranks: rank 0's sums provider and the other ranks' service loop
 * (recon/cluster/mpi_recon.h describes the protocol). The error messages name no rank: a failure on a rank
 * > 0 reaches rank 0 through mr_comm_agree, or stderr through serve_split (cmd_recon.c), both of
 * which prefix "rank R (host): ". */
#include "mpi_recon.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../base/log.h"
#include "../cli/opts.h"

enum { REQ_SUM = 1, REQ_END = 2 };

/* The header of a request (rank 0 -> every other rank, mr_comm_send). */
typedef struct {
    int32_t kind;         /* REQ_SUM or REQ_END */
    int32_t real_weights; /* REQ_SUM: a is real [m] (else complex [m][2]) */
    int32_t new_traj;     /* REQ_SUM: the trajectory follows (else the previous request's) */
    int32_t code;         /* REQ_END: rank 0's exit status */
    int64_t m;            /* REQ_SUM: the samples */
    mr_grid g;            /* REQ_SUM: the grid of the sums */
} request;

struct mr_mpi_recon {
    mr_comm *comm; /* borrowed */
    mr_split_opts so;
    float *traj; /* the trajectory of the last request, [m][3] (m = 0: none) */
    int64_t m;
    float *a;    /* ranks > 0: the weights of the request */
    int64_t a_cap;
    int broken;  /* rank 0: a message failed part way; the job cannot go on (mr_mpi_recon_end fails) */
};

mr_status mr_mpi_recon_create(mr_comm *comm, const mr_split_opts *so, mr_mpi_recon **out)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return mr_error(MR_ENOMEM, "out of memory");
    (*out)->comm = comm;
    (*out)->so = *so;
    return MR_OK;
}

void mr_mpi_recon_free(mr_mpi_recon *r)
{
    if (!r)
        return;
    free(r->traj);
    free(r->a);
    free(r);
}

static mr_status send_all(mr_mpi_recon *r, const request *q)
{
    for (int dest = 1; dest < mr_comm_size(r->comm); dest++) {
        mr_status st = mr_comm_send(r->comm, dest, q, sizeof *q);
        if (st != MR_OK) {
            r->broken = 1;
            return st;
        }
    }
    return MR_OK;
}

/* (Re)allocate the trajectory copy for m samples; on failure none is kept. */
static mr_status keep_traj(mr_mpi_recon *r, int64_t m)
{
    free(r->traj);
    r->m = 0;
    r->traj = malloc((size_t)m * 3 * sizeof *r->traj);
    if (!r->traj)
        return mr_error(MR_ENOMEM, "out of memory for a trajectory of %lld samples", (long long)m);
    return MR_OK;
}

mr_status mr_mpi_recon_sums(void *ctx, const mr_grid *g, const float *traj, const float *a, int real_weights,
                            int64_t m, float *out)
{
    mr_mpi_recon *r = ctx;
    if (mr_comm_rank(r->comm) != 0)
        return mr_error(MR_EINVAL, "split sums: requested on rank %d (rank 0 only)", mr_comm_rank(r->comm));
    if (r->broken)
        return mr_error(MR_EIO, "split sums: an earlier message to the ranks failed");
    if (!g || !traj || !a || !out || m < 1 || m > MR_MAX_SAMPLES)
        return mr_error(MR_EINVAL, "split sums: null array or %lld samples", (long long)m);
    request q = {.kind = REQ_SUM, .real_weights = real_weights != 0, .m = m, .g = *g};
    q.new_traj = !(r->traj && r->m == m && memcmp(r->traj, traj, (size_t)m * 3 * sizeof *traj) == 0);
    mr_status st = send_all(r, &q);
    if (st != MR_OK)
        return st;
    st = q.new_traj ? keep_traj(r, m) : MR_OK;
    st = mr_comm_agree(r->comm, st); /* every rank has its buffers */
    if (st != MR_OK) {
        r->m = 0; /* as on the other ranks: the next request sends the trajectory again */
        return st;
    }
    if (q.new_traj) {
        memcpy(r->traj, traj, (size_t)m * 3 * sizeof *traj);
        st = mr_comm_bcast(r->comm, r->traj, (size_t)m * 3 * sizeof *traj, 0);
        r->m = st == MR_OK ? m : 0;
    }
    /* the root only reads its buffer */
    if (st == MR_OK)
        st = mr_comm_bcast(r->comm, (void *)a, (size_t)m * (real_weights ? 1 : 2) * sizeof *a, 0);
    if (st != MR_OK) {
        r->broken = 1;
        return st;
    }
    mr_split_stats stats;
    st = mr_mpi_adjoint_split(r->comm, g, traj, a, real_weights, m, out, &r->so, &stats);
    if (st == MR_OK)
        mr_log(MR_LOG_DEBUG, "split %s over %d ranks: %lld planes here, slowest rank %.3f s, gather %.3f s, total %.3f s",
               real_weights ? "Q" : "F^H d", stats.ranks, (long long)stats.planes, stats.compute_max_s, stats.gather_s,
               stats.total_s);
    return st;
}

mr_status mr_mpi_recon_end(mr_mpi_recon *r, int code)
{
    const request q = {.kind = REQ_END, .code = code};
    return r->broken ? mr_error(MR_EIO, "the ranks are out of step after a failed message") : send_all(r, &q);
}

/* Wait for rank 0's next request without spinning (rank 0 may compute for minutes meanwhile). */
static mr_status wait_request(mr_mpi_recon *r, request *q)
{
    const struct timespec nap = {0, 1000000}; /* 1 ms: negligible next to a sum */
    int src = -1;
    size_t n = 0;
    while (!mr_comm_probe(r->comm, &src, &n))
        nanosleep(&nap, NULL);
    if (src != 0 || n != sizeof *q)
        return mr_error(MR_EIO, "unexpected message of %zu bytes from rank %d", n, src);
    return mr_comm_recv(r->comm, src, q, sizeof *q);
}

/* This rank's buffers for request q. */
static mr_status prepare(mr_mpi_recon *r, const request *q)
{
    if (q->m < 1 || q->m > MR_MAX_SAMPLES)
        return mr_error(MR_EINVAL, "request for %lld samples", (long long)q->m);
    if (!q->new_traj && q->m != r->m)
        return mr_error(MR_EINVAL, "request for %lld samples without a trajectory", (long long)q->m);
    mr_status st = q->new_traj ? keep_traj(r, q->m) : MR_OK;
    const int64_t na = q->m * (q->real_weights ? 1 : 2);
    if (st == MR_OK && na > r->a_cap) {
        free(r->a);
        r->a_cap = 0;
        if (!(r->a = malloc((size_t)na * sizeof *r->a)))
            return mr_error(MR_ENOMEM, "out of memory for %lld weights", (long long)q->m);
        r->a_cap = na;
    }
    return st;
}

mr_status mr_mpi_recon_serve(mr_mpi_recon *r, int *code)
{
    *code = MR_EXIT_FAILURE;
    for (;;) {
        request q;
        mr_status st = wait_request(r, &q);
        if (st != MR_OK)
            return st;
        if (q.kind == REQ_END) {
            *code = q.code;
            return MR_OK;
        }
        if (q.kind != REQ_SUM)
            return mr_error(MR_EIO, "unknown request %d from rank 0", (int)q.kind);
        st = mr_comm_agree(r->comm, prepare(r, &q));
        if (st != MR_OK) { /* rank 0 reports it; its next request sends the trajectory again */
            r->m = 0;
            mr_clear_error();
            continue;
        }
        if (q.new_traj) {
            st = mr_comm_bcast(r->comm, r->traj, (size_t)q.m * 3 * sizeof *r->traj, 0);
            r->m = st == MR_OK ? q.m : 0;
        }
        if (st == MR_OK)
            st = mr_comm_bcast(r->comm, r->a, (size_t)q.m * (q.real_weights ? 1 : 2) * sizeof *r->a, 0);
        if (st != MR_OK)
            return st;
        /* a failure here is every rank's (agreed inside): rank 0 reports it */
        if (mr_mpi_adjoint_split(r->comm, &q.g, r->traj, r->a, q.real_weights, q.m, NULL, &r->so, NULL) != MR_OK)
            mr_clear_error();
    }
}
