/* One reconstruction over the ranks of an MPI job: `mpirun -n P mrirecon recon SCAN -o OUTDIR`
 * (docs/CLUSTER.md).
 *
 * Rank 0 runs the whole reconstruction (reads the scan, CG, gridding, writes every output and log)
 * with mr_mpi_recon_sums as the sums provider of its NUDFT operator (mr_nudft_opts.sums,
 * solver/linop.h): each Q and each coil's F^H d becomes one request to every other rank, and all
 * ranks compute it together with mr_mpi_adjoint_split (recon/cluster/mpi_split.h: voxel slabs, gathered on
 * rank 0). The other ranks never open the scan: they wait in mr_mpi_recon_serve and receive what a
 * request needs by broadcast from rank 0 (the trajectory, only when it changed since the previous
 * request, and the weights).
 *
 * Protocol (all messages from rank 0): a small request header (mr_comm_send; the waiting ranks poll
 * for it and sleep, so an idle rank takes no CPU while rank 0 runs CG), then collectively: the
 * status of every rank's buffers (mr_comm_agree), the trajectory and weights (mr_comm_bcast), the
 * split. A failure on any rank (out of memory, GPU) fails that request on rank 0 with the rank's
 * message ("rank R (host): ..."); the ranks keep serving. mr_mpi_recon_end sends the end with rank
 * 0's exit status, which mr_mpi_recon_serve returns.
 *
 * Ownership: mr_mpi_recon_create allocates; mr_mpi_recon_free frees (the communicator is borrowed
 * and must outlive the object). */
#ifndef MR_MPI_RECON_H
#define MR_MPI_RECON_H

#include <stdint.h>

#include "../../base/grid.h"
#include "../../base/status.h"
#include "mpi_comm.h"
#include "mpi_split.h"

typedef struct mr_mpi_recon mr_mpi_recon;

/* so: this rank's share of the split (device, threads); copied. Not collective. */
mr_status mr_mpi_recon_create(mr_comm *comm, const mr_split_opts *so, mr_mpi_recon **out);
void mr_mpi_recon_free(mr_mpi_recon *r);

/* Rank 0: the sums provider (mr_nudft_sums_fn, ctx = the mr_mpi_recon): out[v] = sum_m a_m
 * e^{+i2pi k_m.r_v} over g, computed by all ranks. Host arrays, borrowed. */
mr_status mr_mpi_recon_sums(void *ctx, const mr_grid *g, const float *traj, const float *a, int real_weights,
                            int64_t m, float *out);

/* Rank 0: tell the other ranks that the reconstruction ended with exit status code (they return it
 * from mr_mpi_recon_serve). Call it once on every path out of the reconstruction. A failure (an
 * earlier message went wrong) means the job must end with mr_comm_abort. */
mr_status mr_mpi_recon_end(mr_mpi_recon *r, int code);

/* Ranks > 0: serve rank 0's requests until it ends; *code = its exit status. A failure of the
 * protocol itself (a message that went wrong: the ranks are out of step) is returned; then the
 * job must end with mr_comm_abort. */
mr_status mr_mpi_recon_serve(mr_mpi_recon *r, int *code);

#endif
