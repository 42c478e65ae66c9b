/* `mpirun -n P mrirecon batch ...`: one batch over the ranks of an MPI job (docs/CLUSTER.md).
 *
 * Rank 0 (the root) collects the inputs, orders them big scans first (samples x voxels from the
 * file headers), prepares OUTDIR, decides what --resume keeps, runs scans itself and hands the
 * others out on request; it alone prints the progress and writes the summary. Every other rank
 * (a worker) asks for a scan whenever one of its workers is idle, runs it with the per-scan child
 * process of recon/batch/batch.c in the same OUTDIR (a shared file system), and reports the result. All
 * ranks run their scans with the same code as a one-host batch, so the images are the same.
 *
 * Lost ranks: a worker sends a heartbeat every 2 s. The root declares a worker lost when the
 * worker's process is gone (same machine: kill(pid, 0)), it was silent for rank_timeout seconds, or
 * a message to it has not been taken for rank_timeout seconds. No MPI call of the root waits during the
 * batch (sends are MPI_Isend completed by MPI_Test, receives take only probed messages), so it notices
 * a lost rank within that time whatever the launcher does; the scans it was running are marked failed ("rank R was lost ...") and are not handed
 * out again (a scan that kills its rank would kill the next one too); their partial folders stay
 * for --resume, which redoes them. Whether the other ranks survive a dead rank at all is the
 * launcher's choice: Open MPI's mpirun ends the whole job unless run with --enable-recovery (then
 * the rank's SIGTERM arrives, the root writes the summary of what finished and exits 130).
 *
 * Ownership: mr_mpi_batch borrows the communicator; it owns the queue order it hands to
 * mr_batch_config (valid until mr_mpi_batch_free). */
#ifndef MR_MPI_BATCH_H
#define MR_MPI_BATCH_H

#include "../batch/batch.h"
#include "mpi_comm.h"

typedef struct mr_mpi_batch mr_mpi_batch;

/* The batch's part of an MPI job (comm of two or more ranks). rank_timeout: seconds of silence
 * after which the root declares a worker lost (and a worker waiting for an answer, the root). */
mr_status mr_mpi_batch_create(mr_comm *comm, double rank_timeout, mr_mpi_batch **out);
void mr_mpi_batch_free(mr_mpi_batch *b);
/* The rank timeout it was made with (0 for NULL). */
double mr_mpi_batch_timeout(const mr_mpi_batch *b);

/* The list of scans on every rank. Root: collect_status is the result of mr_batch_collect into *l
 * (with its message); on MR_OK the scans are ordered by cost and sent. Workers: *l (zeroed on
 * entry) receives the root's list. The root's failure is returned on every rank. Collective. */
mr_status mr_mpi_batch_share_list(mr_mpi_batch *b, mr_batch_list *l, mr_status collect_status);

/* Set cfg->sched (and on the root cfg->order) for this rank; says hello to the root. */
void mr_mpi_batch_configure(mr_mpi_batch *b, mr_batch_config *cfg);

/* After mr_batch_run returned st on this rank. Worker: reports the scans handed to it that did not
 * run (failed with st's message, or interrupted) and says goodbye. Root: releases the workers
 * still waiting (they are told to stop) and waits a few seconds for their goodbye. Returns the
 * number of ranks lost: on the root the workers it declared lost, on a worker 1 when it lost the
 * root. Then the job cannot end with MPI_Finalize (it would wait for the lost ranks forever):
 * the caller ends it with mr_comm_abort once the summary is written. */
int mr_mpi_batch_end(mr_mpi_batch *b, mr_batch_list *l, mr_status st);

/* This rank's share of its node: of ngpu GPUs, the ones for local rank lr of ls (g = lr, lr + ls,
 * ... when ngpu >= ls; else GPU lr mod ngpu, shared); the number written to gpus (at most
 * ngpu entries). cores: the CPUs of this rank: all of its affinity mask when the launcher bound
 * it, else the node's CPUs divided among its local ranks (at least 1). */
int mr_mpi_node_gpus(const mr_comm *c, int ngpu, int *gpus);
int mr_mpi_node_cores(const mr_comm *c);

/* Cost estimate of each scan for the queue: samples x voxels x (coils + 2^dims), the work of
 * F^H d per coil and of Q, from the file headers (no data read), in a short-lived child so this
 * process never touches HDF5. 0 for a file that cannot be read (it fails quickly anyway). */
mr_status mr_batch_costs(const mr_batch_list *l, double *cost);

#endif
