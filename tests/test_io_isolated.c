/* mr_h5_read_in_child (io/h5util.h): the reader runs in a child process only, once, and its result
 * comes back through the pipe (this process never runs it); a reader that crashes, aborts or loops
 * gives a clean refusal naming the file and the signal; a refusal in the child comes back with its
 * status and message; the child cannot allocate more than its budget (an 8 GiB request fails there
 * without touching memory) unless the reader allows it (mr_child_memory_allow); the file read is the
 * one open as the descriptor, whatever is renamed over its path meanwhile (the rename-between-check-
 * and-open crash: the child and this process read different files). (libhdf5's own crashes on damaged
 * files are what this is for: tests/fuzz/regress/<reader>-libhdf5, docs/FUZZING.md.) */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/child.h"
#include "io/fsutil.h"
#include "io/h5util.h"
#include "io/input.h"
#include "io/kspace_h5.h"
#include "io_testutil.h"
#include "testutil.h"

static int reader_calls; /* in this process */

typedef struct {
    int calls;       /* in this process */
    int64_t matrix0; /* what the reader read */
} probe;

static mr_status read_ok(hid_t file, const char *path, void *ctx)
{
    probe *p = ctx;
    reader_calls++;
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
    reader_calls++;
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

/* asks for `gib` GiB (allowed first when `allow`) and writes to all of it: in a child with a memory budget
 * an allocation beyond it fails; one the reader allows works */
static mr_status read_large(const char *path, probe *p, size_t bytes, int allow)
{
    if (allow)
        mr_child_memory_allow((int64_t)bytes);
    char *big = malloc(bytes);
    if (!big)
        return mr_error(MR_ENOMEM, "%s: out of memory for %zu MiB (as it should be)", path, bytes >> 20);
    memset(big, 1 + allow, bytes);
    p->calls = big[bytes - 1];
    free(big);
    if (allow)
        mr_child_memory_allow(-(int64_t)bytes);
    return MR_OK;
}

static mr_status read_big(hid_t file, const char *path, void *ctx)
{
    (void)file;
    return read_large(path, ctx, (size_t)8 << 30, 0);
}

static mr_status read_allowed(hid_t file, const char *path, void *ctx)
{
    (void)file;
    return read_large(path, ctx, (size_t)200 << 20, 1);
}

static mr_status send_probe(void *ctx, int fd) { return mr_pipe_put(fd, ctx, sizeof(probe)); }
static mr_status recv_probe(void *ctx, int fd, int file_fd, const char *label)
{
    (void)label, (void)file_fd;
    return mr_pipe_get(fd, ctx, sizeof(probe));
}

static mr_status read_path(const char *path, mr_h5_reader reader, probe *p)
{
    const mr_h5_isolated how = {reader, send_probe, recv_probe, 0};
    return mr_h5_read_path_in_child(path, &how, p);
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
    CHECK_OK(read_path(path, read_ok, &p));
    printf("accepted               -> reader ran %d time(s) in the child, %d here; matrix[0] = %lld\n", p.calls,
           reader_calls, (long long)p.matrix0);
    CHECK(p.calls == 1);       /* once, in the child, and its result came back */
    CHECK(reader_calls == 0);  /* never here */
    CHECK(p.matrix0 == 7);

    probe q = {0, 0};
    mr_status st = read_path(path, read_refuse, &q);
    expect_refused("refused by the reader", st, path, "refused by the reader", MR_ENOTSUP);
    CHECK(q.calls == 0 && reader_calls == 0); /* a refusal: nothing comes back */

    /* (under ASan the child reports the segfault itself and exits with status 1) */
    st = read_path(path, read_segv, &q);
    expect_refused("segfault", st, path, "damaged or hostile file refused", MR_EFORMAT);
    st = read_path(path, read_abort, &q);
    expect_refused("abort", st, path, "crashed", MR_EFORMAT);
    st = read_path(path, read_loop, &q);
    expect_refused("endless loop", st, path, "CPU time", MR_EFORMAT);

    /* the child's memory: a request beyond its budget fails there (no memory is taken); an allowance
       lets the reader have what it has checked */
    st = read_path(path, read_big, &q);
    expect_refused("8 GiB in the child", st, path, "out of memory for 8192 MiB", MR_ENOMEM);
    probe a = {0, 0};
    CHECK_OK(read_path(path, read_allowed, &a));
    CHECK(a.calls == 2);

    /* a file that cannot be opened is refused with the usual message */
    char missing[1100];
    snprintf(missing, sizeof missing, "%s/missing.h5", dir);
    st = read_path(missing, read_ok, &p);
    expect_refused("missing file", st, missing, "cannot open", MR_EIO);

    /* rename over the path between opening and reading: the file that was opened is read (before, the
       child checked one file and this process then opened another: a crash inside libhdf5) */
    char other[1100], garbage[1100];
    snprintf(other, sizeof other, "%s/other.h5", dir);
    snprintf(garbage, sizeof garbage, "%s/garbage.h5", dir);
    const int64_t m2[3] = {9, 4, 1};
    mr_kspace *ks2 = NULL, *back = NULL;
    CHECK_OK(mr_kspace_create(&ks2, m2, 5, 2));
    CHECK_OK(mr_kspace_write(other, ks2));
    mr_kspace_free(ks2);
    mr_input *in = NULL;
    CHECK_OK(mr_input_open(other, NULL, &in));
    FILE *g = fopen(garbage, "wb");
    CHECK(g != NULL);
    if (g) { /* an HDF5 signature and then nothing valid */
        static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
        fwrite(sig, 1, 8, g);
        for (int i = 0; i < 4000; i++)
            fputc(i * 7 & 0xff, g);
        fclose(g);
    }
    CHECK(rename(garbage, other) == 0);
    st = in ? mr_input_read(in, 0, &back) : MR_EINVAL;
    printf("renamed over after open -> %s: %s\n", mr_strerror(st), st == MR_OK ? "the opened file's scan" : mr_last_error());
    CHECK(st == MR_OK && back && back->matrix[0] == 9 && back->ncoils == 2);
    mr_kspace_free(back);
    mr_input_close(in);

    /* a large scan's values are read once, by this process, from its own descriptor (the child sends
       where they are: io/h5util.h deferred reads): the reading child never holds them */
    char large[1100];
    snprintf(large, sizeof large, "%s/large.h5", dir);
    const int64_t ml[3] = {64, 64, 1};
    mr_kspace *big = NULL, *got = NULL, *here = NULL;
    CHECK_OK(mr_kspace_create(&big, ml, (int64_t)1 << 21, 2)); /* 56 MiB of trajectory and data */
    for (int64_t i = 0; big && i < 3 * big->nsamples; i++)
        big->traj[i] = (float)((i * 7919) % 64 - 32);
    for (int64_t i = 0; big && i < 4 * big->nsamples; i++)
        big->data[i] = (float)((i * 104729) % 1000) * 1e-3f;
    CHECK_OK(mr_kspace_write(large, big));
    mr_kspace_free(big);
    /* in a process of its own, so that its only child is the reading one: the child's peak resident set
       against what it had at the fork (its parent's resident pages, shared, count there too) */
    int res[2];
    CHECK(pipe(res) == 0);
    const pid_t helper = fork();
    if (helper == 0) {
        close(res[0]);
        FILE *f = fopen("/proc/self/statm", "r");
        unsigned long long size = 0, resident = 0;
        if (f) {
            if (fscanf(f, "%llu %llu", &size, &resident) != 2)
                resident = 0;
            fclose(f);
        }
        mr_kspace *k = NULL;
        double out[2] = {-1, (double)resident * (double)sysconf(_SC_PAGESIZE) / 1048576.0};
        if (mr_kspace_read(large, &k) == MR_OK) {
            struct rusage kids;
            getrusage(RUSAGE_CHILDREN, &kids);
            out[0] = kids.ru_maxrss / 1024.0;
        }
        mr_kspace_free(k);
        mr_write_full(res[1], out, sizeof out);
        _exit(0);
    }
    close(res[1]);
    double peak[2] = {-1, 0};
    CHECK(mr_read_full(res[0], peak, sizeof peak) == sizeof peak);
    close(res[0]);
    waitpid(helper, NULL, 0);
    CHECK_OK(mr_kspace_read(large, &got));
    hid_t lf;
    CHECK_OK(mr_h5_open_read(large, &lf));
    CHECK_OK(mr_kspace_read_file(lf, large, &here)); /* the same file read in this process by libhdf5 */
    H5Fclose(lf);
    CHECK(got && here && io_test_scan_diff(got, here) == NULL);
    printf("a 56 MiB scan through the isolated reader: %s; the reading child's peak %.1f MiB (%.1f at the fork)\n",
           got && here && !io_test_scan_diff(got, here) ? "bit-identical" : "DIFFERENT", peak[0], peak[1]);
    CHECK(peak[0] > 0);
    CHECK_LE("the reading child's peak resident memory beyond what it had at the fork, MiB", peak[0] - peak[1], 24);
    mr_kspace_free(got);
    mr_kspace_free(here);

    io_test_rmdir(dir);
    return test_finish("test_io_isolated");
}
