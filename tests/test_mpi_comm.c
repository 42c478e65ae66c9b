/* The parts of recon/cluster/mpi_comm.h and recon/cluster/mpi_split.h that run in one process, in every build (the
 * runs over several ranks are tests/mpi_split.sh and tests/mpi_batch.sh, in MPI builds):
 *  - mr_comm_check_runs: runs in any order accepted; overlap, out of range, a gap (with cover),
 *    negative counts refused, with messages naming the element;
 *  - a one-process communicator: rank 0 of 1, gather copies the runs into place and refuses bad ones;
 *  - mr_comm_launcher_size from the launchers' environment variables;
 *  - mr_mpi_node_gpus / mr_mpi_node_cores on one rank;
 *  - mr_mpi_adjoint_split on one rank equals mr_nudft_adjoint (Q with real weights on the Q grid
 *    and on the image grid, F^H d; 2D and 3D; bit-identical on the portable kernel and for F^H d,
 *    relative L2 <= 1e-6 with the powers kernels) on fresh random inputs, and refuses a missing
 *    output (tests/mpi_split.sh also checks the portable kernel, MR_CPU_KERNEL=portable). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "recon/cluster/mpi_batch.h"
#include "recon/cluster/mpi_comm.h"
#include "recon/cluster/mpi_split.h"
#include "solver/nudft.h"
#include "testutil.h"

static void test_check_runs(void)
{
    mr_comm_run ok[3] = {{0, 6, 4}, {4, 0, 6}, {10, 10, 2}};
    CHECK_OK(mr_comm_check_runs(ok, 3, 12, 1));
    CHECK(ok[0].dst == 0 && ok[1].dst == 6 && ok[2].dst == 10); /* sorted by dst */
    mr_comm_run overlap[2] = {{0, 0, 5}, {5, 4, 3}};
    CHECK(mr_comm_check_runs(overlap, 2, 12, 0) == MR_EINTERNAL);
    CHECK(strstr(mr_last_error(), "overlap at element 4") != NULL);
    mr_comm_run outside[1] = {{0, 10, 3}};
    CHECK(mr_comm_check_runs(outside, 1, 12, 0) == MR_EINTERNAL);
    CHECK(strstr(mr_last_error(), "outside the 12 elements") != NULL);
    mr_comm_run gap[2] = {{0, 0, 4}, {4, 6, 6}};
    CHECK(mr_comm_check_runs(gap, 2, 12, 1) == MR_EINTERNAL);
    CHECK(strstr(mr_last_error(), "deliver 10 of 12") != NULL);
    gap[0] = (mr_comm_run){0, 0, 4};
    gap[1] = (mr_comm_run){4, 6, 6};
    CHECK_OK(mr_comm_check_runs(gap, 2, 12, 0));
    mr_comm_run negative[1] = {{0, 0, -1}};
    CHECK(mr_comm_check_runs(negative, 1, 12, 0) == MR_EINTERNAL);
    if (test_failures)
        fprintf(stderr, "last message: %s\n", mr_last_error());
}

static void test_one_process(void)
{
    mr_comm *c = NULL;
    CHECK_OK(mr_comm_init(&c));
    if (!c)
        return;
    CHECK(mr_comm_rank(c) == 0 && mr_comm_size(c) == 1);
    CHECK(mr_comm_local_rank(c) == 0 && mr_comm_local_size(c) == 1);
    float send[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8];
    memset(out, 0, sizeof out);
    mr_comm_run runs[2] = {{4, 0, 4}, {0, 4, 4}};
    CHECK_OK(mr_comm_gather_runs(c, 0, send, runs, 2, out, 8, 1));
    CHECK(out[0] == 5 && out[3] == 8 && out[4] == 1 && out[7] == 4);
    mr_comm_run bad[1] = {{0, 2, 8}};
    CHECK(mr_comm_gather_runs(c, 0, send, bad, 1, out, 8, 0) == MR_EINTERNAL);
    CHECK(mr_comm_agree(c, MR_EIO) == MR_EIO);
    CHECK(mr_comm_max(c, 2.5) == 2.5);
    int gpus[4] = {-1, -1, -1, -1};
    CHECK(mr_mpi_node_gpus(c, 2, gpus) == 2 && gpus[0] == 0 && gpus[1] == 1);
    CHECK(mr_mpi_node_gpus(c, 0, gpus) == 0);
    int bound = 0, cpus = mr_comm_affinity_cpus(&bound);
    CHECK(cpus >= 1 && mr_mpi_node_cores(c) == cpus);
    mr_comm_finalize(c);
}

static void test_launcher_env(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS", "PMIX_RANK", "PMI_RANK"};
    char *saved[5];
    for (int i = 0; i < 5; i++) {
        const char *v = getenv(vars[i]);
        saved[i] = v ? strdup(v) : NULL;
        unsetenv(vars[i]);
    }
    CHECK(mr_comm_launcher_size() == 0);
    /* mr_comm_start (batch, recon): a plain process without a launcher; a binary without MPI
       started as one of several ranks refuses, naming the rebuild */
    mr_comm *c = (mr_comm *)&c;
    CHECK(mr_comm_start(&c) == MR_OK && c == NULL);
    setenv("OMPI_COMM_WORLD_SIZE", "3", 1);
    CHECK(mr_comm_launcher_size() == 3);
    if (!mr_comm_compiled()) {
        CHECK(mr_comm_start(&c) == MR_ENOTSUP && c == NULL);
        CHECK(strstr(mr_last_error(), "one of 3 MPI ranks") && strstr(mr_last_error(), "-DMR_MPI=ON"));
        printf("without MPI, as one of 3 ranks: %s\n", mr_last_error());
        mr_clear_error();
    }
    unsetenv("OMPI_COMM_WORLD_SIZE");
    setenv("PMIX_RANK", "0", 1);
    CHECK(mr_comm_launcher_size() == 1);
    unsetenv("PMIX_RANK");
    for (int i = 0; i < 5; i++)
        if (saved[i]) {
            setenv(vars[i], saved[i], 1);
            free(saved[i]);
        }
}

/* Split on one rank against the one-process kernel. */
static void test_split_one_rank(uint64_t *rng, int rotation)
{
    mr_comm *c = NULL;
    CHECK_OK(mr_comm_init(&c));
    if (!c)
        return;
    struct {
        int dims, real, qgrid;
        int64_t n;
    } cases[] = {{2, 1, 1, 12}, {3, 1, 1, 6}, {2, 1, 0, 11}, {3, 1, 0, 5}, {2, 0, 0, 12}, {3, 0, 0, 7}};
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        int64_t matrix[3] = {cases[t].n, cases[t].n, cases[t].dims == 3 ? cases[t].n : 1};
        mr_grid g = cases[t].qgrid ? mr_grid_q(matrix) : mr_grid_image(matrix);
        int64_t m = 300, nv = mr_grid_size(&g);
        float *traj = malloc((size_t)m * 3 * sizeof *traj), *a = malloc((size_t)m * 2 * sizeof *a);
        float *split = malloc((size_t)nv * 2 * sizeof *split), *one = malloc((size_t)nv * 2 * sizeof *one);
        if (!traj || !a || !split || !one) {
            CHECK(!"out of memory");
            free(traj), free(a), free(split), free(one);
            break;
        }
        for (int64_t k = 0; k < m; k++) {
            for (int ax = 0; ax < 3; ax++)
                traj[3 * k + ax] = ax < cases[t].dims ? (float)((test_uniform(rng) - 0.5) * (double)cases[t].n) : 0.0f;
            a[2 * k] = (float)test_uniform(rng);
            a[2 * k + 1] = (float)(test_uniform(rng) - 0.5);
        }
        mr_split_stats s;
        CHECK_OK(mr_mpi_adjoint_split(c, &g, traj, a, cases[t].real, m, split, NULL, &s));
        CHECK_OK(mr_nudft_adjoint(&g, traj, a, cases[t].real, m, one, 0));
        double d2 = 0, r2 = 0;
        int64_t same = 0;
        for (int64_t v = 0; v < nv; v++) {
            same += memcmp(split + 2 * v, one + 2 * v, 2 * sizeof *split) == 0;
            for (int k = 0; k < 2; k++) {
                double d = (double)split[2 * v + k] - one[2 * v + k];
                d2 += d * d;
                r2 += (double)one[2 * v + k] * one[2 * v + k];
            }
        }
        char what[160];
        snprintf(what, sizeof what, "%dD %s weights on the %s grid, N=%lld: relative L2 split vs one process",
                 cases[t].dims, cases[t].real ? "real" : "complex", cases[t].qgrid ? "Q" : "image", (long long)cases[t].n);
        CHECK_LE(what, sqrt(d2 / r2), 1e-6);
        if (rotation || !cases[t].real) {
            if (same != nv)
                fprintf(stderr, "%s: %lld of %lld voxels bit-identical\n", what, (long long)same, (long long)nv);
            CHECK(same == nv);
        }
        CHECK(s.ranks == 1 && s.planes > 0);
        free(traj);
        free(a);
        free(split);
        free(one);
    }
    float traj[3] = {0, 0, 0}, a = 1;
    int64_t matrix[3] = {4, 4, 1};
    mr_grid g = mr_grid_image(matrix);
    CHECK(mr_mpi_adjoint_split(c, &g, traj, &a, 1, 1, NULL, NULL, NULL) == MR_EINVAL);
    mr_comm_finalize(c);
}

int main(void)
{
    if (mr_comm_launcher_size() > 0) {
        fprintf(stderr, "test_mpi_comm: started by an MPI launcher; this test is for one process\n");
        return TEST_SKIP;
    }
    uint64_t rng = test_seed();
    const char *kernel = mr_nudft_kernel_name();
    int rotation = kernel && strcmp(kernel, "portable") == 0;
    test_check_runs();
    test_one_process();
    test_launcher_env();
    test_split_one_rank(&rng, rotation);
    return test_finish("test_mpi_comm");
}
