/* The parts of recon/cluster/mpi_comm.h that do not need MPI, shared by recon/cluster/mpi_comm.c (MPI build) and
 * recon/cluster/mpi_comm_serial.c (plain build). */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpi_comm.h"

int mr_comm_launcher_size(void)
{
    /* Open MPI's mpirun, MPICH/Intel MPI (hydra) and Slurm's PMI-2 plugin announce the size; PMIx
     * (srun --mpi=pmix, prterun) only the rank */
    static const char *const sizes[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS", NULL};
    for (int i = 0; sizes[i]; i++) {
        const char *v = getenv(sizes[i]);
        if (v && *v) {
            int n = atoi(v);
            return n > 0 ? n : 1;
        }
    }
    if (getenv("PMIX_RANK") || getenv("PMI_RANK"))
        return 1;
    return 0;
}

mr_status mr_comm_start(mr_comm **out)
{
    *out = NULL;
    if (!mr_comm_compiled() && mr_comm_launcher_size() > 1)
        return mr_error(MR_ENOTSUP, "started as one of %d MPI ranks, but this mrirecon was built without MPI "
                                    "(rebuild with -DMR_MPI=ON, docs/CLUSTER.md)",
                        mr_comm_launcher_size());
    if (!mr_comm_launched())
        return MR_OK;
    return mr_comm_init(out);
}

static int cmp_dst(const void *a, const void *b)
{
    const mr_comm_run *x = a, *y = b;
    return x->dst < y->dst ? -1 : x->dst > y->dst;
}

mr_status mr_comm_check_runs(mr_comm_run *runs, int64_t nruns, int64_t out_len, int cover)
{
    for (int64_t i = 0; i < nruns; i++)
        if (runs[i].count < 0 || runs[i].src < 0 || runs[i].dst < 0 || runs[i].dst > out_len ||
            runs[i].count > out_len - runs[i].dst)
            return mr_error(MR_EINTERNAL, "gather: run %lld (dst %lld, count %lld) outside the %lld elements of the result",
                            (long long)i, (long long)runs[i].dst, (long long)runs[i].count, (long long)out_len);
    qsort(runs, (size_t)nruns, sizeof *runs, cmp_dst);
    int64_t end = 0, total = 0;
    for (int64_t i = 0; i < nruns; i++) {
        if (runs[i].count == 0)
            continue;
        if (runs[i].dst < end)
            return mr_error(MR_EINTERNAL, "gather: runs overlap at element %lld", (long long)runs[i].dst);
        end = runs[i].dst + runs[i].count;
        total += runs[i].count;
    }
    if (cover && total != out_len)
        return mr_error(MR_EINTERNAL, "gather: the ranks deliver %lld of %lld elements", (long long)total,
                        (long long)out_len);
    return MR_OK;
}

mr_status mr_comm_gather_local(int root, const float *send, const mr_comm_run *runs, int nruns, float *out,
                               int64_t out_len, int cover)
{
    if (root != 0 || nruns < 0 || (nruns > 0 && (!runs || !send || !out)))
        return mr_error(MR_EINVAL, "gather: root %d of 1, %d runs", root, nruns);
    mr_comm_run *sorted = malloc((size_t)(nruns > 0 ? nruns : 1) * sizeof *sorted);
    if (!sorted)
        return mr_error(MR_ENOMEM, "gather: out of memory");
    if (nruns > 0)
        memcpy(sorted, runs, (size_t)nruns * sizeof *runs);
    mr_status st = mr_comm_check_runs(sorted, nruns, out_len, cover);
    free(sorted);
    for (int i = 0; st == MR_OK && i < nruns; i++)
        memcpy(out + runs[i].dst, send + runs[i].src, (size_t)runs[i].count * sizeof *out);
    return st;
}

int mr_comm_affinity_cpus(int *bound)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online < 1)
        online = 1;
    int n = (int)online;
#ifdef __linux__
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        n = CPU_COUNT(&set);
#endif
    if (bound)
        *bound = n < online;
    return n;
}

void mr_comm_machine_id(char *buf, size_t size)
{
    buf[0] = '\0';
    char boot[64] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(boot, sizeof boot, f))
            boot[0] = '\0';
        fclose(f);
    }
    boot[strcspn(boot, "\n")] = '\0';
    struct stat sb;
    if (!boot[0] || stat("/proc/self/ns/pid", &sb) != 0)
        return;
    snprintf(buf, size, "%s/%llu", boot, (unsigned long long)sb.st_ino);
}
