/* recon/cluster/mpi_comm.h without MPI: one process, rank 0 of 1 (the plain build). recon/cluster/mpi_comm.c is
 * the MPI implementation; exactly one of the two is compiled (MR_HAVE_MPI). */
#include "mpi_comm.h"

#ifndef MR_HAVE_MPI

#include <stdlib.h>
#include <unistd.h>

struct mr_comm {
    char host[256];
};

int mr_comm_compiled(void) { return 0; }

int mr_comm_launched(void) { return mr_comm_launcher_size() > 0; }

mr_status mr_comm_init(mr_comm **out)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return mr_error(MR_ENOMEM, "out of memory");
    if (gethostname((*out)->host, sizeof (*out)->host - 1) != 0)
        (*out)->host[0] = '\0';
    return MR_OK;
}

void mr_comm_finalize(mr_comm *c) { free(c); }

void mr_comm_abort(mr_comm *c, int code)
{
    (void)c;
    (void)code;
}

int mr_comm_rank(const mr_comm *c) { return (void)c, 0; }
int mr_comm_size(const mr_comm *c) { return (void)c, 1; }
int mr_comm_local_rank(const mr_comm *c) { return (void)c, 0; }
int mr_comm_local_size(const mr_comm *c) { return (void)c, 1; }
const char *mr_comm_host(const mr_comm *c) { return c->host; }

mr_status mr_comm_send(mr_comm *c, int dest, const void *buf, size_t n)
{
    (void)c;
    (void)buf;
    (void)n;
    return mr_error(MR_EINVAL, "send to rank %d: this is the only process", dest);
}

int mr_comm_pending(mr_comm *c, int dest, double *oldest_s)
{
    (void)c;
    (void)dest;
    if (oldest_s)
        *oldest_s = 0;
    return 0;
}

void mr_comm_end(mr_comm *c, int code, int abort_job, double deadline_s)
{
    (void)code;
    (void)abort_job;
    (void)deadline_s;
    mr_comm_finalize(c);
}

int mr_comm_probe(mr_comm *c, int *src, size_t *n)
{
    (void)c;
    (void)src;
    (void)n;
    return 0;
}

mr_status mr_comm_recv(mr_comm *c, int src, void *buf, size_t cap)
{
    (void)c;
    (void)buf;
    (void)cap;
    return mr_error(MR_EINVAL, "receive from rank %d: this is the only process", src);
}

mr_status mr_comm_agree(mr_comm *c, mr_status st) { return (void)c, st; }

mr_status mr_comm_bcast(mr_comm *c, void *buf, size_t n, int root)
{
    (void)c;
    (void)buf;
    (void)n;
    return root == 0 ? MR_OK : mr_error(MR_EINVAL, "broadcast from rank %d: this is the only process", root);
}

double mr_comm_max(mr_comm *c, double v) { return (void)c, v; }

mr_status mr_comm_gather_runs(mr_comm *c, int root, const float *send, const mr_comm_run *runs, int nruns,
                              float *out, int64_t out_len, int cover)
{
    (void)c;
    return mr_comm_gather_local(root, send, runs, nruns, out, out_len, cover);
}

#else
typedef int mr_comm_serial_unused; /* ISO C: a translation unit is not empty */
#endif
