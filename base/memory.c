/* Memory available to this process (see memory.h). */
#include "memory.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* The first unsigned number of a one-line file; 0 when absent or "max". */
static uint64_t read_number(const char *path)
{
    FILE *f = fopen(path, "r");
    unsigned long long v = 0;
    if (f) {
        if (fscanf(f, "%llu", &v) != 1)
            v = 0;
        fclose(f);
    }
    return (uint64_t)v;
}

static uint64_t meminfo_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kb = 0;
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        found = sscanf(line, "MemAvailable: %llu kB", &kb) == 1;
    if (f)
        fclose(f);
    return found ? (uint64_t)kb * 1024 : UINT64_MAX;
}

/* Room left in the memory cgroup: limit - usage (v2 first, then v1); UINT64_MAX without a limit. */
static uint64_t cgroup_room(void)
{
    static const char *const files[2][2] = {
        {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
        {"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"}};
    for (int v = 0; v < 2; v++) {
        const uint64_t limit = read_number(files[v][0]);
        if (limit == 0 || limit >= ((uint64_t)1 << 60)) /* absent, "max", or v1's "unlimited" */
            continue;
        const uint64_t used = read_number(files[v][1]);
        return limit > used ? limit - used : 0;
    }
    return UINT64_MAX;
}

/* RLIMIT_AS less what is mapped already; UINT64_MAX without a limit. */
static uint64_t address_room(void)
{
    struct rlimit as;
    if (getrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur == RLIM_INFINITY)
        return UINT64_MAX;
    const uint64_t mapped = mr_mem_mapped();
    return (uint64_t)as.rlim_cur > mapped ? (uint64_t)as.rlim_cur - mapped : 0;
}

uint64_t mr_mem_mapped(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long pages = 0;
    if (f) {
        if (fscanf(f, "%llu", &pages) != 1)
            pages = 0;
        fclose(f);
    }
    const long page = sysconf(_SC_PAGESIZE);
    return (uint64_t)pages * (uint64_t)(page > 0 ? page : 4096);
}

uint64_t mr_mem_available(void)
{
    uint64_t a = meminfo_available(), c = cgroup_room(), r = address_room();
    uint64_t m = a < c ? a : c;
    return m < r ? m : r;
}

void mr_mem_format(uint64_t bytes, char *buf, int size)
{
    static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    snprintf(buf, (size_t)size, u == 0 ? "%.0f %s" : (v < 10 ? "%.1f %s" : "%.0f %s"), v, units[u]);
}

mr_status mr_mem_check(uint64_t bytes, const char *what)
{
    if (bytes < MR_MEM_CHECK_FROM)
        return MR_OK;
    const uint64_t avail = mr_mem_available();
    if (avail == UINT64_MAX || bytes <= avail)
        return MR_OK;
    char need[32], have[32];
    mr_mem_format(bytes, need, sizeof need);
    mr_mem_format(avail, have, sizeof have);
    return mr_error(MR_ENOMEM, "%s needs %s of memory; %s available", what, need, have);
}
