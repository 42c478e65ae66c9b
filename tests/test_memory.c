/* Memory checks before large allocations (base/memory.h): the memory available follows MemAvailable,
 * the cgroup and RLIMIT_AS; a request above it is refused with the number needed and what is there,
 * by the check itself, by a scan of that size (io/kspace.h mr_kspace_create) and by a vector of the host
 * backend (solver/backend.h) — the legal 2048x2048x64 matrix whose Toeplitz grid needs 16 GiB. */
#include <string.h>
#include <sys/resource.h>

#include "base/memory.h"
#include "io/kspace.h"
#include "solver/backend.h"
#include "testutil.h"

int main(void)
{
    const uint64_t avail = mr_mem_available();
    char text[32];
    mr_mem_format(avail, text, sizeof text);
    printf("available: %s\n", text);
    CHECK(avail > 0);
    mr_mem_format((uint64_t)16 << 30, text, sizeof text);
    CHECK(strcmp(text, "16 GiB") == 0);
    mr_mem_format((uint64_t)3 << 29, text, sizeof text);
    CHECK(strcmp(text, "1.5 GiB") == 0);
    CHECK_OK(mr_mem_check((uint64_t)1 << 20, "a small array")); /* below MR_MEM_CHECK_FROM: not looked at */

    /* a process limited to 256 MiB more than it maps */
    struct rlimit old;
    CHECK(getrlimit(RLIMIT_AS, &old) == 0);
    struct rlimit lim = {(rlim_t)(mr_mem_mapped() + ((uint64_t)256 << 20)), old.rlim_max};
    CHECK(setrlimit(RLIMIT_AS, &lim) == 0);
    const uint64_t room = mr_mem_available();
    mr_mem_format(room, text, sizeof text);
    printf("under RLIMIT_AS of 256 MiB more: available %s\n", text);
    CHECK(room <= ((uint64_t)256 << 20));
    mr_status st = mr_mem_check((uint64_t)1 << 30, "the test array");
    printf("1 GiB: %s\n", mr_last_error());
    CHECK(st == MR_ENOMEM && strstr(mr_last_error(), "the test array needs 1.0 GiB of memory; ") != NULL &&
          strstr(mr_last_error(), " available") != NULL);
    const int64_t matrix[3] = {64, 64, 1};
    mr_kspace *ks = NULL;
    st = mr_kspace_create(&ks, matrix, (int64_t)1 << 26, 4); /* (3 + 8) x 4 bytes x 2^26: 2.8 GiB */
    printf("a scan of 2^26 samples x 4 coils: %s\n", mr_last_error());
    CHECK(st == MR_ENOMEM && ks == NULL && strstr(mr_last_error(), "needs 2.8 GiB of memory") != NULL);
    mr_backend *be = NULL;
    CHECK_OK(mr_backend_create(&be, (mr_device_sel){.kind = MR_DEVICE_CPU, .index = -1}, 1));
    float *v = be ? mr_backend_alloc(be, (int64_t)1 << 31) : NULL; /* the 2N grid of 2048x2048x64 */
    printf("a host vector of 2^31 complex elements: %s\n", mr_last_error());
    CHECK(v == NULL && strstr(mr_last_error(), "a vector of 2147483648 complex elements needs 16 GiB of memory") != NULL);
    mr_backend_free(be);
    CHECK(setrlimit(RLIMIT_AS, &old) == 0);
    return test_finish("test_memory");
}
