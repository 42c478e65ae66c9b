/* A valid file with very many small chunks is read in time linear in the number of chunks: a scan whose
 * /kspace/data is stored in one-sample chunks (2^16 of them, 8 bytes each), unfiltered and with the
 * fletcher32 filter, and whose trajectory has one-sample chunks too. The per-chunk checks of io/h5_check.c
 * once looked every chunk up through libhdf5's iteration over all chunks (quadratic: 36 s at 2^15 chunks,
 * over 150 s at 2^16); now the reads must finish within a CPU-time limit far below that (RLIMIT_CPU:
 * SIGXCPU ends the test), a bound on work done rather than on wall-clock time, which holds on a loaded
 * machine. The values read back are bit-identical to the written ones. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "io/h5util.h"
#include "io/kspace_h5.h"
#include "io_testutil.h"
#include "testutil.h"

#define M (1 << 16)
#define CPU_LIMIT_S 60

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Rewrite traj and data of path in one-sample chunks (filter: 0 none, else fletcher32). */
static int rechunk(const char *path, int fletcher)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t dt = H5Pcreate(H5P_DATASET_CREATE), dd = H5Pcreate(H5P_DATASET_CREATE);
    const hsize_t ct[2] = {1, 3}, cd[3] = {1, 1, 2};
    int rc = f >= 0 && H5Pset_chunk(dt, 2, ct) >= 0 && H5Pset_chunk(dd, 3, cd) >= 0 ? 0 : -1;
    if (rc == 0 && fletcher && (H5Pset_fletcher32(dt) < 0 || H5Pset_fletcher32(dd) < 0))
        rc = -1;
    if (rc == 0)
        rc = io_test_rewrite(f, "/kspace/traj", dt, H5T_IEEE_F32LE);
    if (rc == 0)
        rc = io_test_rewrite(f, "/kspace/data", dd, H5T_IEEE_F32LE);
    H5Pclose(dt);
    H5Pclose(dd);
    if (f >= 0)
        H5Fclose(f);
    return rc;
}

int main(void)
{
    uint64_t rng = test_seed();
    const char *dir = test_tmpdir("io_many_chunks");
    char path[700];
    snprintf(path, sizeof path, "%s/scan.h5", dir);
    mr_kspace *ref = NULL;
    io_test_write_scan(path, &rng, 16, 16, M, 1, 0, &ref);
    /* a limit on the CPU time of everything below (the writes included): far above what a linear read
     * takes, far below what the quadratic one took */
    struct rlimit cpu = {(rlim_t)(cpu_seconds() + CPU_LIMIT_S), (rlim_t)(cpu_seconds() + CPU_LIMIT_S + 10)};
    CHECK(setrlimit(RLIMIT_CPU, &cpu) == 0);
    for (int fletcher = 0; fletcher <= 1 && ref; fletcher++) {
        char p[800];
        snprintf(p, sizeof p, "%s/chunks%d.h5", dir, fletcher);
        CHECK(io_test_copy(path, p) == 0);
        CHECK(rechunk(p, fletcher) == 0);
        hid_t file;
        mr_kspace *ks = NULL;
        const double t0 = cpu_seconds();
        CHECK_OK(mr_h5_open_read(p, &file));
        CHECK_OK(mr_kspace_read_file(file, p, &ks));
        H5Fclose(file);
        const double t = cpu_seconds() - t0;
        printf("%d one-sample chunks per dataset, %s: read in %.2f s of CPU time\n", M,
               fletcher ? "fletcher32" : "unfiltered", t);
        CHECK(ks && ks->nsamples == M);
        CHECK(ks && memcmp(ks->traj, ref->traj, (size_t)M * 3 * sizeof(float)) == 0);
        CHECK(ks && memcmp(ks->data, ref->data, (size_t)M * 2 * sizeof(float)) == 0);
        mr_kspace_free(ks);
    }
    mr_kspace_free(ref);
    if (test_failures == 0)
        io_test_rmdir(dir);
    return test_finish("test_io_many_chunks");
}
