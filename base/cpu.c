#include "cpu.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

/* MR_BUILD_AVX2 / MR_BUILD_AVX512 are defined by CMakeLists.txt when the compiler could build the
 * kernels of that level (x86-64 and the -m flags accepted). */

static const char *const level_names[MR_CPU_LEVELS] = {"portable", "avx2", "avx512"};

const char *mr_cpu_level_name(mr_cpu_level level)
{
    return (unsigned)level < MR_CPU_LEVELS ? level_names[level] : "unknown";
}

static unsigned built_levels(void)
{
    unsigned b = 1u << MR_CPU_PORTABLE;
#if defined(MR_BUILD_AVX2)
    b |= 1u << MR_CPU_AVX2;
#endif
#if defined(MR_BUILD_AVX512)
    b |= 1u << MR_CPU_AVX512;
#endif
    return b;
}

/* What the CPU and OS can run. libgcc's __builtin_cpu_supports reports AVX/AVX2/FMA only when the
 * OS saves the YMM state and AVX-512 only when it saves the ZMM state (XGETBV). */
static unsigned cpu_levels(void)
{
    unsigned c = 1u << MR_CPU_PORTABLE;
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
    __builtin_cpu_init();
    const int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (avx2)
        c |= 1u << MR_CPU_AVX2;
    if (avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw"))
        c |= 1u << MR_CPU_AVX512;
#endif
    return c;
}

unsigned mr_cpu_supported(void) { return built_levels() & cpu_levels(); }

/* "avx2, portable" */
static void list_levels(unsigned set, char *buf, size_t size)
{
    buf[0] = '\0';
    for (int l = MR_CPU_LEVELS - 1; l >= 0; l--)
        if (set & (1u << l)) {
            size_t n = strlen(buf);
            snprintf(buf + n, size - n, "%s%s", n ? ", " : "", level_names[l]);
        }
}

mr_status mr_cpu_level_choose(const char *request, unsigned supported, mr_cpu_level *level)
{
    *level = MR_CPU_PORTABLE;
    supported |= 1u << MR_CPU_PORTABLE;
    char can[64];
    list_levels(supported, can, sizeof can);
    if (!request || !request[0] || !strcmp(request, "auto")) {
        for (int l = MR_CPU_LEVELS - 1; l >= 0; l--)
            if (supported & (1u << l)) {
                *level = (mr_cpu_level)l;
                break;
            }
        return MR_OK;
    }
    for (int l = 0; l < MR_CPU_LEVELS; l++) {
        if (strcmp(request, level_names[l]) != 0)
            continue;
        if (!(supported & (1u << l))) {
            const char *why = (built_levels() & (1u << l)) ? "this CPU cannot run them"
                                                           : "this build does not contain them (compiler or target "
                                                             "without that instruction set)";
            return mr_error(MR_ENOTSUP, "MR_CPU_KERNEL=%s: the %s kernels cannot be used: %s; available here: %s",
                            request, request, why, can);
        }
        *level = (mr_cpu_level)l;
        return MR_OK;
    }
    return mr_error(MR_EINVAL, "MR_CPU_KERNEL='%s': expected auto, avx512, avx2 or portable (available here: %s)",
                    request, can);
}

static pthread_once_t chosen_once = PTHREAD_ONCE_INIT;
static mr_status chosen_status;
static mr_cpu_level chosen_level;
static char chosen_message[512];
static atomic_int announced;

static void choose_once(void)
{
    chosen_status = mr_cpu_level_choose(getenv("MR_CPU_KERNEL"), mr_cpu_supported(), &chosen_level);
    if (chosen_status != MR_OK)
        snprintf(chosen_message, sizeof chosen_message, "%s", mr_last_error());
}

mr_status mr_cpu_level_get(mr_cpu_level *level)
{
    pthread_once(&chosen_once, choose_once);
    *level = chosen_level;
    if (chosen_status != MR_OK)
        return mr_error(chosen_status, "%s", chosen_message);
    if (mr_log_get_level() >= MR_LOG_DEBUG && !atomic_exchange(&announced, 1)) {
        char can[64];
        list_levels(mr_cpu_supported(), can, sizeof can);
        const char *env = getenv("MR_CPU_KERNEL");
        mr_log(MR_LOG_DEBUG, "cpu kernels: %s (this machine supports %s; MR_CPU_KERNEL %s%s)",
               level_names[chosen_level], can, env ? "=" : "unset", env ? env : "");
    }
    return MR_OK;
}
