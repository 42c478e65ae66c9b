/* How much memory this process can still get, and a check before a large allocation, so that a job
 * too big for the machine is refused with the number it needs instead of being killed (or swapping)
 * half way through. Linux; elsewhere "unknown" and every check passes. */
#ifndef MR_MEMORY_H
#define MR_MEMORY_H

#include <stdint.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Allocations from this size on are checked by the callers that allocate on behalf of a file or a
 * problem (readers, the host backend). */
#define MR_MEM_CHECK_FROM ((uint64_t)64 << 20)

/* Bytes this process can still get: the kernel's MemAvailable (/proc/meminfo), capped by the memory
 * cgroup's room (v2 memory.max - memory.current, v1 memory.limit_in_bytes - memory.usage_in_bytes)
 * and by RLIMIT_AS less the address space already mapped. UINT64_MAX when none of them is known. */
uint64_t mr_mem_available(void);

/* The address space this process maps now (/proc/self/statm); 0 when unknown. */
uint64_t mr_mem_mapped(void);

/* MR_OK when `bytes` fit in mr_mem_available() (or bytes < MR_MEM_CHECK_FROM); otherwise MR_ENOMEM
 * with "<what> needs 16.0 GiB of memory; 7.3 GiB are available". */
mr_status mr_mem_check(uint64_t bytes, const char *what);

/* "16.0 GiB", "512 MiB", "12 KiB" into buf. */
void mr_mem_format(uint64_t bytes, char *buf, int size);

#ifdef __cplusplus
}
#endif
#endif
