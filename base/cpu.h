/* Which SIMD variant of the CPU kernels this process runs (runtime dispatch, as FFTW and OpenBLAS do).
 *
 * One binary holds every variant the compiler could build: "avx512" (AVX-512 F/DQ/VL/BW + FMA),
 * "avx2" (AVX2 + FMA) and "portable" (the baseline of the build target, e.g. plain x86-64). The level
 * is decided once per process, on the first call of mr_cpu_level_get: the best level this CPU and
 * its operating system support (__builtin_cpu_supports, which also checks that the OS saves the
 * wide registers), or the level named by the environment variable MR_CPU_KERNEL
 * (auto | avx512 | avx2 | portable), which may force a lower level for testing. Asking for a level
 * this CPU or this build cannot run is an error (MR_ENOTSUP), never a crash: code compiled for a
 * level is only entered through the dispatchers, which run nothing above mr_cpu_supported(). */
#ifndef MR_CPU_H
#define MR_CPU_H

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { MR_CPU_PORTABLE = 0, MR_CPU_AVX2 = 1, MR_CPU_AVX512 = 2 } mr_cpu_level;
#define MR_CPU_LEVELS 3

/* "portable", "avx2", "avx512" (the MR_CPU_KERNEL spellings); static text. */
const char *mr_cpu_level_name(mr_cpu_level level);

/* Bit (1u << level) set for every level that this CPU and OS support and this build contains
 * (portable always). */
unsigned mr_cpu_supported(void);

/* The level of this process: chosen on the first call (thread-safe) from MR_CPU_KERNEL and
 * mr_cpu_supported(), the same answer afterwards. On failure (unknown name, or a level that cannot
 * run here) every call returns the same status and message. The first call made while the log level
 * is MR_LOG_DEBUG (--verbose) logs the choice and the levels this machine supports. */
mr_status mr_cpu_level_get(mr_cpu_level *level);

/* The rule behind mr_cpu_level_get, without the environment or the CPU (for tests): request is the
 * value of MR_CPU_KERNEL (NULL or "" or "auto": the best supported level), supported the bit set
 * of mr_cpu_supported(). */
mr_status mr_cpu_level_choose(const char *request, unsigned supported, mr_cpu_level *level);

#ifdef __cplusplus
}
#endif
#endif
