/* base/parallel: every index run exactly once, on slots below the count returned; a nonzero body stops
 * the loop; and the loop works in a process forked after the parent ran one (the reason it is not
 * OpenMP: a forked child's first OpenMP region would wait for the parent's pool forever). */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/parallel.h"
#include "testutil.h"

typedef struct {
    int *count;        /* per index, atomic */
    int max_slot;      /* atomic */
    int64_t stop_at;   /* the body returns nonzero here (-1: never) */
    int64_t done;      /* atomic: bodies run */
} job;

static int body(void *ctx, int64_t i, int slot)
{
    job *j = ctx;
    __atomic_fetch_add(&j->count[i], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&j->done, 1, __ATOMIC_RELAXED);
    int m = __atomic_load_n(&j->max_slot, __ATOMIC_RELAXED);
    while (slot > m && !__atomic_compare_exchange_n(&j->max_slot, &m, slot, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
    return i == j->stop_at;
}

/* n indices on up to t threads: each run once, slots below the count returned; 0 when all is well. */
static int run_all(int64_t n, int t)
{
    job j = {calloc((size_t)(n > 0 ? n : 1), sizeof(int)), 0, -1, 0};
    if (!j.count)
        return 1;
    const int nth = mr_par_for(n, t, body, &j);
    int bad = nth < 1 || nth > (t > 1 ? t : 1) || j.max_slot >= nth || j.done != n;
    for (int64_t i = 0; i < n; i++)
        bad |= j.count[i] != 1;
    free(j.count);
    return bad;
}

int main(void)
{
    const int64_t sizes[] = {0, 1, 2, 7, 1000, 100003};
    const int threads[] = {1, 2, 4, 16, 200};
    for (size_t a = 0; a < sizeof sizes / sizeof sizes[0]; a++)
        for (size_t b = 0; b < sizeof threads / sizeof threads[0]; b++) {
            const int bad = run_all(sizes[a], threads[b]);
            if (bad)
                printf("n %lld, %d threads: an index not run exactly once, or a slot out of range\n",
                       (long long)sizes[a], threads[b]);
            CHECK(!bad);
        }

    /* stop: the body at index 0 returns nonzero; on one thread nothing after it runs */
    job j = {calloc(1000, sizeof(int)), 0, 0, 0};
    CHECK(j.count != NULL);
    if (j.count) {
        CHECK(mr_par_for(1000, 1, body, &j) == 1);
        CHECK(j.done == 1 && j.count[0] == 1);
        free(j.count);
    }

    /* in a forked child, after this process ran the loop on several threads (above) */
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        _exit(run_all(100003, 8) ? 3 : 0);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return test_finish("test_parallel");
}
