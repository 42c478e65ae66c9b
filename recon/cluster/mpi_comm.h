/* The few MPI operations mrirecon uses, behind a small interface so that no other file includes
 * mpi.h (docs/CLUSTER.md). Two implementations, one compiled per build:
 *   recon/cluster/mpi_comm.c         with MPI (MR_MPI=ON, or AUTO and MPI found): MPI_COMM_WORLD
 *   recon/cluster/mpi_comm_serial.c  without: one process, rank 0 of 1
 * and recon/cluster/mpi_util.c, the parts both share (no MPI in it).
 * With MPI, MPI is initialised only when the process was started by an MPI launcher (mpirun,
 * srun with PMI/PMIx: mr_comm_launched); a plain start is one process as without MPI, so an MPI
 * build behaves like a plain one until it runs under mpirun.
 *
 * Every call on a communicator of several ranks marked "collective" must be made by all ranks in
 * the same order. Failures return mr_status with a message (MPI errors are returned, not fatal).
 *
 * Ownership: mr_comm_init allocates the communicator; mr_comm_finalize frees it (and finalises
 * MPI). Buffers are borrowed for the call. */
#ifndef MR_MPI_COMM_H
#define MR_MPI_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "../../base/status.h"

typedef struct mr_comm mr_comm;

/* 1 when this binary was built with MPI. */
int mr_comm_compiled(void);

/* The number of processes an MPI launcher started (the environment of Open MPI's mpirun, MPICH's
 * hydra, or PMI/PMIx as srun --mpi=pmix|pmi2 sets it): 0 when not started by one, 1 when the size
 * is not announced (PMIx). Read from the environment, so it works in builds without MPI too. */
int mr_comm_launcher_size(void);

/* 1 when this process was started by an MPI launcher (mr_comm_launcher_size() > 0) and is not a
 * forked child of a process that initialised MPI (such a child must never call MPI). */
int mr_comm_launched(void);

/* The world: MPI_Init (thread level FUNNELED: MPI is called from the main thread only) when
 * built with MPI and launched, else a one-process communicator. */
mr_status mr_comm_init(mr_comm **out);

/* The start of a command that can run over ranks (batch, recon): under an MPI launcher mr_comm_init
 * into *out, else *out = NULL (a plain process). A binary without MPI started as one of several
 * ranks is refused (MR_ENOTSUP, naming the rebuild): each rank would run the whole command alone. */
mr_status mr_comm_start(mr_comm **out);

/* MPI_Finalize when MPI was initialised; frees c. NULL is fine. Collective. */
void mr_comm_finalize(mr_comm *c);

/* End every rank of the job now (MPI_Abort) with exit status code, for a job that lost a rank:
 * MPI_Finalize would wait for it forever. Returns only when MPI is not initialised (one process);
 * for the command entry points only (it ends the process). */
void mr_comm_abort(mr_comm *c, int code);

int mr_comm_rank(const mr_comm *c);
int mr_comm_size(const mr_comm *c);
/* Rank among the ranks on this node (MPI_Comm_split_type SHARED) and their count. */
int mr_comm_local_rank(const mr_comm *c);
int mr_comm_local_size(const mr_comm *c);
/* Host name of this rank ("" when unknown). */
const char *mr_comm_host(const mr_comm *c);

/* End the job with a deadline: MPI_Abort (abort_job) or MPI_Finalize as mr_comm_abort and
 * mr_comm_finalize, but when MPI has not returned within deadline_s seconds (a rank that never takes part,
 * a runtime that lost a process: Open MPI 4.1 with --enable-recovery) the process exits with `code` on
 * its own (_exit). Frees c. For the command entry points only. */
void mr_comm_end(mr_comm *c, int code, int abort_job, double deadline_s);

/* ---- small point-to-point messages (the batch protocol, recon/cluster/mpi_batch.c) ------------------ */

/* Send n bytes (a small message) to rank dest without waiting: the bytes are copied and MPI_Isend
 * started; the send completes in the background, driven by the calls below (MPI_Test), never by a
 * blocking wait, so a receiver that died or stopped reading cannot block the sender. */
mr_status mr_comm_send(mr_comm *c, int dest, const void *buf, size_t n);

/* How many of this rank's sends to dest have not completed yet, and (*oldest_s, may be NULL) for how
 * many seconds the oldest of them has waited: a receiver that takes nothing for long is stuck or gone. */
int mr_comm_pending(mr_comm *c, int dest, double *oldest_s);

/* Non-blocking: 1 when a message sent with mr_comm_send waits, with its source and size. */
int mr_comm_probe(mr_comm *c, int *src, size_t *n);

/* Receive the waiting message from src (after mr_comm_probe reported it: the message is there, so the
 * receive completes without waiting for the sender); at most cap bytes. */
mr_status mr_comm_recv(mr_comm *c, int src, void *buf, size_t cap);

/* ---- collectives ---------------------------------------------------------------------------- */

/* Every rank's status to every rank: MR_OK when all passed st == MR_OK; otherwise the status and
 * message of the lowest failing rank ("rank R (host): message" on the others). Collective. */
mr_status mr_comm_agree(mr_comm *c, mr_status st);

/* Broadcast n bytes from root (any size: sent in pieces below INT_MAX). Collective. */
mr_status mr_comm_bcast(mr_comm *c, void *buf, size_t n, int root);

/* The largest value over the ranks, on every rank. Collective. */
double mr_comm_max(mr_comm *c, double v);

/* ---- gathering pieces of one array ---------------------------------------------------------- */

/* A run of floats: send[src .. src + count) of this rank goes to out[dst .. dst + count) on the
 * root. */
typedef struct {
    int64_t src, dst, count;
} mr_comm_run;

/* Gather every rank's runs into out (out_len floats, significant on root only; other ranks may
 * pass NULL). The root checks the runs of all ranks before any data moves: within out, not
 * overlapping, and (when cover) together covering out entirely. Data move in messages below
 * INT_MAX elements. Collective: every rank returns the same status. */
mr_status mr_comm_gather_runs(mr_comm *c, int root, const float *send, const mr_comm_run *runs, int nruns,
                              float *out, int64_t out_len, int cover);

/* The check of mr_comm_gather_runs, shared by both implementations: runs [nruns] of all ranks
 * (any order) within out_len, not overlapping and, when cover, covering it. Sorts runs by dst. */
mr_status mr_comm_check_runs(mr_comm_run *runs, int64_t nruns, int64_t out_len, int cover);

/* mr_comm_gather_runs on a communicator of one process (shared by both implementations). */
mr_status mr_comm_gather_local(int root, const float *send, const mr_comm_run *runs, int nruns, float *out,
                               int64_t out_len, int cover);

/* ---- the node ------------------------------------------------------------------------------- */

/* CPUs this process may run on (sched_getaffinity), and whether that is fewer than the node's
 * online CPUs (the launcher bound the process). */
int mr_comm_affinity_cpus(int *bound);

/* An identity of the machine and PID namespace ("boot-id/pid-namespace"): two ranks with the same
 * one can check each other's process IDs with kill(pid, 0). Empty when unknown. */
void mr_comm_machine_id(char *buf, size_t size);

#endif
