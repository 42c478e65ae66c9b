/* mr_h5_read_isolated: a reader that crashes, aborts or loops in the child process gives a clean
 * refusal naming the file and the signal; a refusal in the child comes back with its status and
 * message and the file is not read here; an accepted file is read once more here, and only here
 * do the reader's results land. (libhdf5's own crashes on damaged files are what this is for:
 * tests/fuzz/regress/<reader>-libhdf5, docs/FUZZING.md.) */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "io/h5util.h"
#include "io/kspace_h5.h"
#include "io_testutil.h"
#include "testutil.h"

typedef struct {
    int calls;       /* in this process */
    int64_t matrix0; /* what the reader read */
} probe;

static mr_status read_ok(hid_t file, const char *path, void *ctx)
{
    probe *p = ctx;
    p->calls++;
    hid_t g;
    mr_status st = mr_h5_open_group(file, path, "/kspace", &g);
    if (st != MR_OK)
        return st;
    int64_t m[3];
    st = mr_h5_attr_read(g, path, "/kspace", "matrix", H5T_INTEGER, H5T_NATIVE_INT64, m, 3, NULL);
    mr_h5_close(&g);
    p->matrix0 = m[0];
    return st;
}

static mr_status read_segv(hid_t file, const char *path, void *ctx)
{
    (void)file, (void)path, (void)ctx;
    raise(SIGSEGV);
    return MR_OK;
}

static mr_status read_abort(hid_t file, const char *path, void *ctx)
{
    (void)file, (void)path, (void)ctx;
    abort();
}

static mr_status read_refuse(hid_t file, const char *path, void *ctx)
{
    (void)file;
    ((probe *)ctx)->calls++;
    return mr_error(MR_ENOTSUP, "%s: /kspace: refused by the reader", path);
}

/* an endless loop, ended by the child's CPU-time limit (lowered for the test below) */
static mr_status read_loop(hid_t file, const char *path, void *ctx)
{
    (void)file, (void)path, (void)ctx;
    struct rlimit cpu = {1, 2};
    setrlimit(RLIMIT_CPU, &cpu);
    volatile unsigned long spin = 0;
    for (;;)
        spin++;
    return MR_OK;
}

static void expect_refused(const char *label, mr_status st, const char *path, const char *text, mr_status want)
{
    const char *msg = mr_last_error();
    printf("%-22s -> %s: %s\n", label, mr_strerror(st), msg);
    CHECK(st == want);
    CHECK(strstr(msg, path) != NULL);
    if (!strstr(msg, text))
        fprintf(stderr, "%s: the message should contain '%s'\n", label, text);
    CHECK(strstr(msg, text) != NULL);
}

int main(void)
{
    const char *dir = test_tmpdir("io_isolated");
    char path[1024];
    snprintf(path, sizeof path, "%s/scan.h5", dir);
    const int64_t matrix[3] = {7, 5, 1};
    mr_kspace *ks = NULL;
    CHECK_OK(mr_kspace_create(&ks, matrix, 3, 1));
    CHECK_OK(mr_kspace_write(path, ks));
    mr_kspace_free(ks);

    probe p = {0, 0};
    CHECK_OK(mr_h5_read_isolated(path, read_ok, &p));
    printf("accepted               -> reader ran %d time(s) here, matrix[0] = %lld\n", p.calls, (long long)p.matrix0);
    CHECK(p.calls == 1); /* the child's call does not count here */
    CHECK(p.matrix0 == 7);

    probe q = {0, 0};
    mr_status st = mr_h5_read_isolated(path, read_refuse, &q);
    expect_refused("refused by the reader", st, path, "refused by the reader", MR_ENOTSUP);
    CHECK(q.calls == 0); /* a refusal in the child is not repeated here */

    /* (under ASan the child reports the segfault itself and exits with status 1) */
    st = mr_h5_read_isolated(path, read_segv, NULL);
    expect_refused("segfault", st, path, "damaged or hostile file refused", MR_EFORMAT);
    st = mr_h5_read_isolated(path, read_abort, NULL);
    expect_refused("abort", st, path, "crashed", MR_EFORMAT);
    st = mr_h5_read_isolated(path, read_loop, NULL);
    expect_refused("endless loop", st, path, "CPU time", MR_EFORMAT);

    /* a file that cannot be opened is refused by the child, with the usual message */
    char missing[1100];
    snprintf(missing, sizeof missing, "%s/missing.h5", dir);
    st = mr_h5_read_isolated(missing, read_ok, &p);
    expect_refused("missing file", st, missing, "cannot open", MR_EIO);

    io_test_rmdir(dir);
    return test_finish("test_io_isolated");
}
