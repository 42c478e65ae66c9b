/* The Q cache (io/q_cache.h) and the NUDFT operator's use of it (solver/linop.h, mr_nudft_opts.q_store):
 *   - a hit returns exactly the stored bits; the operator built from a hit applies bit-identically;
 *   - a changed trajectory (one bit of one coordinate), weight, grid, basis or engine misses;
 *   - a corrupt payload byte, a damaged header, a truncated file and garbage of the right size are each
 *     ignored with a warning (counted as rejected, never returned) and replaced by the next store;
 *   - writers are atomic and concurrent processes agree: 4 forked processes storing and loading two keys
 *     only ever see complete, correct entries and leave no temporary or lock files; a process missing a key
 *     that another process is computing waits for it and reads its entry instead of computing it;
 *   - an entry of several checksum pieces (4 MiB each): a hit is bit-identical, and a changed byte in a
 *     middle piece, two whole pieces of Q swapped, and a cut at a piece boundary are each rejected;
 *   - threads of one process sharing one cache object: a load of a key whose save another thread still
 *     owes waits for it and hits (Q computed once), as with the GPU operator's background saver;
 *   - a cache that cannot be written does not fail the operator (a warning; the same Q);
 *   - the size limit evicts the least recently used entry; a Q larger than the limit is not stored;
 *   - a store removes temporary and unheld lock files older than an hour, never a held or recent one;
 *   - processes missing one key at the same moment leave no lock file, however their steps interleave;
 *   - planted files: a FIFO entry or lock never blocks, a lock linked to a missing path creates nothing,
 *     an entry that is a link is not read through; folders are 0700 under umask 000; a background store
 *     that fails is reported "computed, not stored (...)";
 *   - the default directory follows MRIRECON_CACHE_DIR (and "off");
 *   - Pipe-Menon weights (mr_q_cache_dcf_store, solver/dcf.h) in the same cache: a later process (the
 *     per-process cache cleared) gets the stored bits without computing; a changed trajectory bit, matrix,
 *     iteration count or momentum misses; a corrupt entry is rejected, computed again (the same bits) and
 *     replaced.
 * Fresh random keys each run (seeded, printed). */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/grid.h"
#include "base/log.h"
#include "io/q_cache.h"
#include "solver/backend.h"
#include "solver/dcf.h"
#include "solver/dcf_cache.h"
#include "solver/linop.h"
#include "test_op_random.h"
#include "testutil.h"

static uint64_t rng;

typedef struct {
    mr_q_key k;
    float *traj, *qw, *q; /* q: a "Q" made from the key, [nq][2] */
    int64_t nq;
} test_key;

static void make_key(test_key *t, int64_t nx, int64_t ny, int64_t m, const char *engine)
{
    memset(t, 0, sizeof *t);
    const int64_t matrix[3] = {nx, ny, 1};
    memcpy(t->k.matrix, matrix, sizeof matrix);
    t->k.m = m;
    t->traj = test_random_traj(&rng, matrix, m);
    t->qw = test_random_weights(&rng, m);
    t->k.traj = t->traj;
    t->k.qw = t->qw;
    t->k.basis = MR_BASIS_BOX;
    snprintf(t->k.engine, sizeof t->k.engine, "%s", engine);
    const mr_grid g = mr_grid_q(matrix);
    t->nq = mr_grid_size(&g);
    t->q = test_random_normal(&rng, 2 * t->nq);
}

static void free_key(test_key *t)
{
    free(t->traj);
    free(t->qw);
    free(t->q);
}

static float *copy_q(const test_key *t)
{
    float *c = malloc((size_t)t->nq * 2 * sizeof(float));
    if (c)
        memcpy(c, t->q, (size_t)t->nq * 2 * sizeof(float));
    return c;
}

/* load: 1 on a hit with the exact bits of t->q, 0 on a miss (then the lock is released with save NULL). */
static int load_key(mr_q_store *s, const test_key *t)
{
    float *out = calloc((size_t)t->nq * 2, sizeof(float));
    const int hit = s->load(s, &t->k, out);
    if (hit)
        CHECK(memcmp(out, t->q, (size_t)t->nq * 2 * sizeof(float)) == 0);
    else
        s->save(s, &t->k, NULL);
    free(out);
    return hit;
}

/* load, and after a miss store the key's Q; returns what load returned */
static int store_key(mr_q_store *s, const test_key *t)
{
    float *out = calloc((size_t)t->nq * 2, sizeof(float));
    const int hit = s->load(s, &t->k, out);
    if (!hit)
        s->save(s, &t->k, copy_q(t));
    free(out);
    return hit;
}

/* Change one byte of a file at offset (from the end when negative). */
static void poke(const char *path, long offset)
{
    FILE *f = fopen(path, "r+b");
    CHECK(f != NULL);
    if (!f)
        return;
    fseek(f, offset, offset < 0 ? SEEK_END : SEEK_SET);
    int c = fgetc(f);
    fseek(f, -1, SEEK_CUR);
    fputc(c ^ 0x5a, f);
    fclose(f);
}

static int64_t file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (int64_t)sb.st_size : -1;
}

/* Temporary and lock files in dir (names with ".tmp" or ".lock"): what a finished process must not leave. */
static int stray_files(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strstr(e->d_name, ".tmp") != NULL || strstr(e->d_name, ".lock") != NULL;
    if (d)
        closedir(d);
    return n;
}

/* A cache in dir (default limit) and its store; NULL (a failed check) when it cannot be opened. */
static mr_q_store *open_store(const char *dir, mr_q_cache **c)
{
    CHECK_OK(mr_q_cache_open(c, dir, 0));
    return mr_q_cache_store(*c);
}

static void hits_and_misses(const char *dir)
{
    mr_q_cache *c = NULL;
    mr_q_store *s = open_store(dir, &c);
    if (!s)
        return;
    test_key t;
    make_key(&t, 14, 9, 501, "test engine a");
    CHECK(load_key(s, &t) == 0);
    store_key(s, &t);
    CHECK(load_key(s, &t) == 1);
    char path[4300];
    CHECK_OK(mr_q_cache_path(c, &t.k, path, sizeof path));
    printf("entry %s: %lld bytes\n", path, (long long)file_size(path));

    /* every part of the key matters */
    const float saved_traj = t.traj[3 * 77 + 1], saved_w = t.qw[400];
    t.traj[3 * 77 + 1] = nextafterf(saved_traj, 1e9f);
    CHECK(load_key(s, &t) == 0); /* one bit of one trajectory coordinate */
    t.traj[3 * 77 + 1] = saved_traj;
    t.qw[400] = saved_w * 1.5f;
    CHECK(load_key(s, &t) == 0); /* one weight */
    t.qw[400] = saved_w;
    t.k.basis = MR_BASIS_DIRAC;
    CHECK(load_key(s, &t) == 0); /* the basis */
    t.k.basis = MR_BASIS_BOX;
    snprintf(t.k.engine, sizeof t.k.engine, "test engine b");
    CHECK(load_key(s, &t) == 0); /* the engine (precision) */
    snprintf(t.k.engine, sizeof t.k.engine, "test engine a");
    test_key g;
    make_key(&g, 14, 9, 501, "test engine a"); /* another grid, same samples */
    memcpy(g.traj, t.traj, (size_t)501 * 3 * sizeof(float));
    memcpy(g.qw, t.qw, (size_t)501 * sizeof(float));
    g.k.matrix[1] = 10;
    CHECK(load_key(s, &g) == 0);
    free_key(&g);
    CHECK(load_key(s, &t) == 1); /* the original still hits */

    /* damaged files are ignored (never returned), counted, and replaced by the next store */
    mr_q_cache_stats st0, st1;
    mr_q_cache_get_stats(c, &st0);
    const int64_t size = file_size(path);
    const long where[3] = {-4000, 40, 300}; /* a Q byte, the header (key hash), the trajectory */
    for (int i = 0; i < 5; i++) {
        if (i < 3) {
            poke(path, where[i]);
        } else if (i == 3) {
            CHECK(truncate(path, size / 2) == 0);
        } else {
            FILE *f = fopen(path, "wb"); /* garbage of exactly the right size */
            for (int64_t b = 0; f && b < size; b++)
                fputc((int)(test_uniform(&rng) * 256), f);
            if (f)
                fclose(f);
        }
        CHECK(store_key(s, &t) == 0); /* ignored, and replaced */
        CHECK(load_key(s, &t) == 1);
    }
    mr_q_cache_get_stats(c, &st1);
    printf("rejected %lld, hits %lld, misses %lld, stores %lld\n", (long long)st1.rejected, (long long)st1.hits,
           (long long)st1.misses, (long long)st1.stores);
    CHECK(st1.rejected - st0.rejected == 5);
    free_key(&t);
    mr_q_cache_close(c);
}

/* An entry of several checksum pieces: read on several threads, each piece's place is checked. */
static void large_entry(const char *dir)
{
    mr_q_cache *c = NULL;
    mr_q_store *s = open_store(dir, &c);
    if (!s)
        return;
    test_key t;
    make_key(&t, 640, 640, 3001, "large"); /* Q: 1280 x 1280 complex floats, 13 MB: 4 pieces of Q */
    CHECK(store_key(s, &t) == 0);
    CHECK(load_key(s, &t) == 1);
    char path[4300];
    CHECK_OK(mr_q_cache_path(c, &t.k, path, sizeof path));
    const int64_t size = file_size(path);
    const long piece = 4L << 20, qstart = (long)(size - t.nq * 8);
    printf("large entry: %lld bytes, Q from byte %ld\n", (long long)size, qstart);
    mr_q_cache_stats st0, st1;
    mr_q_cache_get_stats(c, &st0);
    /* one byte in the middle of the second piece of Q */
    poke(path, qstart + piece + piece / 2);
    CHECK(store_key(s, &t) == 0);
    CHECK(load_key(s, &t) == 1);
    /* the first two pieces of Q swapped: each piece hashes right, but not at its place */
    FILE *f = fopen(path, "r+b");
    char *a = malloc((size_t)piece), *b = malloc((size_t)piece);
    CHECK(f && a && b);
    if (f && a && b) {
        CHECK(fseek(f, qstart, SEEK_SET) == 0 && fread(a, 1, (size_t)piece, f) == (size_t)piece &&
              fread(b, 1, (size_t)piece, f) == (size_t)piece);
        CHECK(fseek(f, qstart, SEEK_SET) == 0 && fwrite(b, 1, (size_t)piece, f) == (size_t)piece &&
              fwrite(a, 1, (size_t)piece, f) == (size_t)piece);
    }
    if (f)
        fclose(f);
    free(a);
    free(b);
    CHECK(store_key(s, &t) == 0);
    CHECK(load_key(s, &t) == 1);
    /* cut at a piece boundary */
    CHECK(truncate(path, qstart + 2 * piece) == 0);
    CHECK(store_key(s, &t) == 0);
    CHECK(load_key(s, &t) == 1);
    mr_q_cache_get_stats(c, &st1);
    printf("large entry: rejected %lld\n", (long long)(st1.rejected - st0.rejected));
    CHECK(st1.rejected - st0.rejected == 3);
    free_key(&t);
    mr_q_cache_close(c);
}

/* Threads of one process and one cache object: the save of a miss comes from another thread (as the GPU
 * operator's background saver does) while a third thread loads the same key. */
typedef struct {
    mr_q_store *s;
    const test_key *t;
    int hit;
} thread_arg;

static void *late_save(void *p)
{
    thread_arg *a = p;
    const struct timespec ts = {0, 300 * 1000 * 1000}; /* copying Q back from the device */
    nanosleep(&ts, NULL);
    a->s->save(a->s, &a->t->k, copy_q(a->t));
    return NULL;
}

static void *second_load(void *p)
{
    thread_arg *a = p;
    a->hit = load_key(a->s, a->t);
    return NULL;
}

static void threads(const char *dir)
{
    mr_q_cache *c = NULL;
    mr_q_store *s = open_store(dir, &c);
    if (!s)
        return;
    test_key t;
    make_key(&t, 30, 22, 700, "threads");
    float *out = malloc((size_t)t.nq * 2 * sizeof(float));
    CHECK(s->load(s, &t.k, out) == 0); /* this thread computes Q; another one saves it */
    thread_arg sv = {s, &t, 0}, ld = {s, &t, -1};
    pthread_t th[2];
    const double t0 = mr_now();
    CHECK(pthread_create(&th[0], NULL, late_save, &sv) == 0);
    CHECK(pthread_create(&th[1], NULL, second_load, &ld) == 0);
    pthread_join(th[0], NULL);
    pthread_join(th[1], NULL);
    const double waited = mr_now() - t0;
    mr_q_cache_stats st;
    mr_q_cache_get_stats(c, &st);
    printf("threads: the second load waited %.3f s and %s; hits %lld, misses %lld, stores %lld\n", waited,
           ld.hit == 1 ? "hit" : "missed", (long long)st.hits, (long long)st.misses, (long long)st.stores);
    CHECK(ld.hit == 1);
    CHECK(st.misses == 1 && st.hits == 1 && st.stores == 1);
    CHECK_GE("seconds the second load waited for the save", waited, 0.25);
    free(out);
    free_key(&t);
    mr_q_cache_close(c);
}

static void eviction(const char *dir)
{
    test_key k[3];
    for (int i = 0; i < 3; i++)
        make_key(&k[i], 16, 16, 300, "evict");
    mr_q_cache *c = NULL;
    CHECK_OK(mr_q_cache_open(&c, dir, 1)); /* 1 byte: nothing fits */
    if (!c)
        return;
    store_key(mr_q_cache_store(c), &k[0]);
    mr_q_cache_stats st;
    mr_q_cache_get_stats(c, &st);
    CHECK(st.stores == 0);
    char path[3][4300];
    for (int i = 0; i < 3; i++)
        CHECK_OK(mr_q_cache_path(c, &k[i].k, path[i], sizeof path[i]));
    CHECK(file_size(path[0]) < 0);
    mr_q_cache_close(c);
    /* room for two entries and a half; an entry is Q (8 bytes a point), traj and weights (16 bytes a sample)
     * and the 232-byte header */
    const int64_t entry = (int64_t)(k[0].nq * 8 + 300 * 16 + 232);
    CHECK_OK(mr_q_cache_open(&c, dir, 5 * entry / 2));
    if (!c)
        return;
    mr_q_store *s = mr_q_cache_store(c);
    store_key(s, &k[0]);
    store_key(s, &k[1]);
    mr_q_cache_get_stats(c, &st);
    CHECK(st.stores == 2);
    const time_t now = time(NULL);
    for (int i = 0; i < 2; i++) { /* k0 used 100 s ago, k1 50 s ago */
        struct timespec ts[2] = {{now - 100 + 50 * i, 0}, {now - 100 + 50 * i, 0}};
        CHECK(utimensat(AT_FDCWD, path[i], ts, 0) == 0);
    }
    CHECK(load_key(s, &k[0]) == 1); /* now k0 is the most recently used one */
    store_key(s, &k[2]);
    mr_q_cache_get_stats(c, &st);
    CHECK(st.evicted == 1);
    CHECK(file_size(path[0]) > 0 && file_size(path[1]) < 0 && file_size(path[2]) > 0);
    printf("eviction: kept the recently used entry and the new one, removed the least recently used\n");
    mr_q_cache_close(c);
    for (int i = 0; i < 3; i++)
        free_key(&k[i]);
}

/* Leftovers of crashed processes: a store removes temporary files and lock files older than an hour,
 * but never a lock file some process holds, nor a recent file (it may belong to a running process). */
static void stale_files(const char *dir)
{
    test_key k;
    make_key(&k, 16, 12, 200, "stale");
    CHECK(mkdir(dir, 0755) == 0);
    static const char *const names[5] = {".q-00000000000000000000000000000001.tmpAbCdEf",
                                         ".q-00000000000000000000000000000002.tmpAbCdEf",
                                         "q-00000000000000000000000000000003.lock",
                                         "q-00000000000000000000000000000004.lock",
                                         "q-00000000000000000000000000000005.lock"};
    static const int old[5] = {1, 0, 1, 1, 0}, stays[5] = {0, 1, 0, 1, 1}; /* file 4 is held */
    char path[5][4300];
    int held = -1;
    const time_t now = time(NULL);
    for (int i = 0; i < 5; i++) {
        snprintf(path[i], sizeof path[i], "%s/%s", dir, names[i]);
        const int fd = open(path[i], O_RDWR | O_CREAT, 0644);
        CHECK(fd >= 0);
        const struct timespec ts[2] = {{now - (old[i] ? 7200 : 60), 0}, {now - (old[i] ? 7200 : 60), 0}};
        CHECK(fd >= 0 && futimens(fd, ts) == 0);
        if (i == 3) {
            CHECK(flock(fd, LOCK_EX | LOCK_NB) == 0); /* a process computing a long Q */
            held = fd;
        } else if (fd >= 0) {
            close(fd);
        }
    }
    mr_q_cache *c = NULL;
    mr_q_store *s = open_store(dir, &c);
    if (s)
        CHECK(store_key(s, &k) == 0);
    mr_q_cache_close(c); /* the store's eviction pass has run */
    for (int i = 0; i < 5; i++) {
        const int kept = file_size(path[i]) >= 0;
        printf("stale files: %s (%s%s): %s, expected %s\n", names[i], old[i] ? "2 h old" : "1 min old",
               i == 3 ? ", held" : "", kept ? "kept" : "removed", stays[i] ? "kept" : "removed");
        CHECK(kept == stays[i]);
    }
    if (held >= 0)
        close(held);
    free_key(&k);
}

/* Processes sharing the cache: every hit is the key's exact Q; no temporary file survives. */
static void concurrent(const char *dir)
{
    test_key k[2];
    make_key(&k[0], 40, 36, 2000, "concurrent a");
    make_key(&k[1], 40, 36, 2000, "concurrent b");
    const int nproc = 4;
    pid_t pid[4];
    for (int p = 0; p < nproc; p++) {
        pid[p] = fork();
        if (pid[p] == 0) {
            mr_log_set_level(MR_LOG_ERROR);
            int bad = 0;
            for (int round = 0; round < 12 && !bad; round++) {
                mr_q_cache *c = NULL;
                if (mr_q_cache_open(&c, dir, 0) != MR_OK || !c)
                    _exit(3);
                mr_q_store *s = mr_q_cache_store(c);
                for (int i = 0; i < 2; i++) {
                    test_key *t = &k[(i + p + round) % 2];
                    float *out = malloc((size_t)t->nq * 2 * sizeof(float));
                    if (s->load(s, &t->k, out))
                        bad |= memcmp(out, t->q, (size_t)t->nq * 2 * sizeof(float)) != 0;
                    else
                        s->save(s, &t->k, copy_q(t));
                    free(out);
                }
                mr_q_cache_stats st;
                mr_q_cache_get_stats(c, &st);
                bad |= st.rejected != 0;
                mr_q_cache_close(c);
                if (round % 3 == p % 3) /* now and then start over from an empty cache */
                    mr_q_cache_clear(dir);
            }
            _exit(bad ? 1 : 0);
        }
    }
    int all_ok = 1;
    for (int p = 0; p < nproc; p++) {
        int status = 0;
        waitpid(pid[p], &status, 0);
        all_ok &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    CHECK(all_ok);
    CHECK(stray_files(dir) == 0);
    printf("4 processes x 12 rounds x 2 keys: every hit exact, no temporary or lock file left\n");

    /* a miss waits for the process computing the same Q, then reads its entry */
    mr_q_cache_clear(dir);
    int ready[2];
    CHECK(pipe(ready) == 0);
    const pid_t holder = fork();
    if (holder == 0) {
        mr_q_cache *c = NULL;
        if (mr_q_cache_open(&c, dir, 0) != MR_OK || !c)
            _exit(3);
        mr_q_store *s = mr_q_cache_store(c);
        float *out = malloc((size_t)k[0].nq * 2 * sizeof(float));
        const int hit = s->load(s, &k[0].k, out); /* a miss: holds the lock */
        (void)!write(ready[1], "x", 1);
        const struct timespec ts = {0, 400 * 1000 * 1000}; /* "computing" */
        nanosleep(&ts, NULL);
        s->save(s, &k[0].k, copy_q(&k[0]));
        mr_q_cache_close(c);
        free(out);
        _exit(hit ? 1 : 0);
    }
    char x;
    CHECK(read(ready[0], &x, 1) == 1);
    mr_q_cache *c = NULL;
    CHECK_OK(mr_q_cache_open(&c, dir, 0));
    if (c) {
        const double t0 = mr_now();
        CHECK(load_key(mr_q_cache_store(c), &k[0]) == 1);
        const double waited = mr_now() - t0;
        /* the entry exists only once the other process has saved it, and this load computed nothing: it got
         * that process's Q. How long it waited depends on the scheduler (a loaded machine may run this
         * process only after the save), so the time is printed, not checked. */
        mr_q_cache_stats st;
        mr_q_cache_get_stats(c, &st);
        printf("waited %.3f s for the other process's Q, then read it (hits %lld, misses %lld)\n", waited,
               (long long)st.hits, (long long)st.misses);
        CHECK(st.hits == 1 && st.misses == 0 && st.stores == 0);
        mr_q_cache_close(c);
    }
    int status = 0;
    waitpid(holder, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(stray_files(dir) == 0); /* the waiter's lock file, too, is gone */
    close(ready[0]);
    close(ready[1]);
    free_key(&k[0]);
    free_key(&k[1]);
}

/* Processes that miss one key at the same moment: one computes it, the others wait for it or read it, and
 * no lock file is left behind, however their steps interleave. A process that found the entry only after
 * taking the lock may hold a lock file made after the computing process removed its own; that one must go
 * too (a leftover lock file in a batch's cache directory was seen once under load). */
static void racing_first_loads(const char *dir)
{
    test_key k;
    make_key(&k, 12, 10, 50, "racing");
    const int trials = 150, nproc = 3;
    int failed = 0, left = 0;
    for (int t = 0; t < trials; t++) {
        mr_q_cache_clear(dir); /* no cache at all: the processes also race to make the directory */
        (void)rmdir(dir);
        int go[2];
        CHECK(pipe(go) == 0);
        pid_t pid[3];
        for (int p = 0; p < nproc; p++) {
            pid[p] = fork();
            if (pid[p] == 0) {
                mr_log_set_level(MR_LOG_ERROR);
                char x;
                close(go[1]);
                if (read(go[0], &x, 1) != 0) /* all start when the pipe closes */
                    _exit(4);
                mr_q_cache *c = NULL;
                if (mr_q_cache_open(&c, dir, 0) != MR_OK || !c)
                    _exit(3);
                mr_q_store *s = mr_q_cache_store(c);
                float *out = malloc((size_t)k.nq * 2 * sizeof(float));
                int bad = 0;
                if (s->load(s, &k.k, out))
                    bad = memcmp(out, k.q, (size_t)k.nq * 2 * sizeof(float)) != 0;
                else
                    s->save(s, &k.k, copy_q(&k));
                mr_q_cache_close(c);
                free(out);
                _exit(bad);
            }
        }
        close(go[0]);
        close(go[1]);
        for (int p = 0; p < nproc; p++) {
            int status = 0;
            waitpid(pid[p], &status, 0);
            failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        }
        left += stray_files(dir) > 0;
    }
    printf("%d trials of %d processes missing one key at once: %d failed, %d left a lock or temporary file\n",
           trials, nproc, failed, left);
    CHECK(failed == 0);
    CHECK(left == 0);
    free_key(&k);
}

/* The operator takes Q from the store: the same bits as computing it. */
static void operator_store(const char *dir)
{
    const mr_device_sel cpu = {.kind = MR_DEVICE_CPU, .index = -1};
    mr_backend *be = NULL;
    CHECK_OK(mr_backend_create(&be, cpu, 2));
    mr_q_cache *c = NULL;
    CHECK_OK(mr_q_cache_open(&c, dir, 0));
    if (!be || !c)
        return;
    const int64_t matrix[3] = {20, 18, 1}, m = 900, n = 20 * 18;
    float *traj = test_random_traj(&rng, matrix, m), *w = test_random_weights(&rng, m);
    float *x = test_random_normal(&rng, 2 * n), *y[2];
    mr_nudft_opts o;
    mr_nudft_opts_default(&o);
    o.q_store = mr_q_cache_store(c);
    const char *want[3] = {"computed, stored", "store", "computed, stored"};
    for (int i = 0; i < 3; i++) {
        if (i == 2)
            w[5] *= 2.0f; /* other weights: another Q */
        mr_linop *op = NULL;
        mr_nudft_info info;
        CHECK_OK(mr_linop_nudft_create(&op, be, matrix, traj, m, w, 1, &o, &info));
        printf("operator %d: Q %s (%s)\n", i, info.q_source, info.engine_name);
        CHECK(strcmp(info.q_source, want[i]) == 0);
        if (i < 2) {
            y[i] = malloc((size_t)n * 2 * sizeof(float));
            CHECK_OK(mr_linop_normal(op, x, y[i]));
        }
        mr_linop_free(op);
    }
    CHECK(memcmp(y[0], y[1], (size_t)n * 2 * sizeof(float)) == 0);
    /* Q computed again without the store, and with a cache that cannot be written (its directory replaced
     * by a file): the operator works, and applies bit-identically to the one from the stored Q */
    w[5] /= 2.0f;
    mr_q_cache_stats qs;
    mr_q_cache_get_stats(c, &qs); /* waits for the background write of operator 2's Q: the directory goes next */
    CHECK(qs.stores == 2);
    char cmd[8500];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && touch '%s'", dir, dir);
    CHECK(system(cmd) == 0);
    mr_q_store *stores[2] = {NULL, o.q_store};
    mr_log(MR_LOG_INFO, "test: a warning that the cache cannot be written comes next");
    for (int i = 0; i < 2; i++) {
        o.q_store = stores[i];
        mr_linop *op = NULL;
        mr_nudft_info info;
        float *z = malloc((size_t)n * 2 * sizeof(float));
        CHECK_OK(mr_linop_nudft_create(&op, be, matrix, traj, m, w, 1, &o, &info));
        CHECK_OK(mr_linop_normal(op, x, z));
        printf("operator %s: Q %s\n", i ? "with an unwritable cache" : "without a store", info.q_source);
        CHECK(memcmp(y[1], z, (size_t)n * 2 * sizeof(float)) == 0);
        mr_linop_free(op);
        free(z);
    }
    mr_q_cache_get_stats(c, &qs);
    CHECK(qs.stores == 2); /* the two before; none in the file */
    /* a GPU precision on the host is refused */
    o.precision = MR_PRECISION_TF32X3;
    mr_linop *op = NULL;
    CHECK(mr_linop_nudft_create(&op, be, matrix, traj, m, w, 1, &o, NULL) == MR_EINVAL);
    CHECK(strstr(mr_last_error(), "tf32x3") != NULL);
    free(y[0]);
    free(y[1]);
    free(traj);
    free(w);
    free(x);
    mr_q_cache_close(c);
    mr_backend_free(be);
}

/* Files planted in the cache folder by someone else: an entry or lock that is a FIFO does not block, a
 * lock that is a symbolic link to a missing path does not make us create that file, an entry that is a
 * link is not read through; the folders the cache makes are 0700 under umask 000; a store that fails in
 * the background is reported as not stored (what report.json then says). */
static void hostile_files(const char *dir)
{
    const mode_t old_mask = umask(0);
    mr_q_cache *c = NULL;
    mr_q_store *s = open_store(dir, &c);
    umask(old_mask);
    if (!s)
        return;
    struct stat sb;
    CHECK(stat(dir, &sb) == 0 && (sb.st_mode & 0777) == 0700);
    printf("hostile: cache folder made under umask 000: mode %03o\n", (unsigned)(sb.st_mode & 0777));
    alarm(120); /* a load that blocks on a FIFO ends the test instead of hanging it */

    /* an entry that is a FIFO, and a lock that is a FIFO */
    test_key t;
    make_key(&t, 12, 10, 300, "hostile fifo");
    char entry[4300], lock[4300];
    CHECK_OK(mr_q_cache_path(c, &t.k, entry, sizeof entry));
    snprintf(lock, sizeof lock, "%.*s.lock", (int)(strlen(entry) - 4), entry);
    CHECK(mkfifo(entry, 0666) == 0);
    CHECK(mkfifo(lock, 0666) == 0);
    mr_q_cache_stats st0, st1;
    mr_q_cache_get_stats(c, &st0);
    CHECK(store_key(s, &t) == 0); /* a miss, without blocking; the store replaces the FIFO entry */
    mr_q_cache_get_stats(c, &st1);
    printf("hostile: FIFO entry and lock: miss, rejected %lld, stored %lld\n", (long long)(st1.rejected - st0.rejected),
           (long long)(st1.stores - st0.stores));
    CHECK(st1.rejected - st0.rejected == 1);
    CHECK(st1.stores - st0.stores == 1);
    CHECK(lstat(entry, &sb) == 0 && S_ISREG(sb.st_mode));
    CHECK(load_key(s, &t) == 1);
    CHECK(lstat(lock, &sb) == 0 && S_ISFIFO(sb.st_mode)); /* not ours: left alone */
    unlink(lock);
    free_key(&t);

    /* a lock that is a symbolic link to a missing file */
    make_key(&t, 12, 10, 301, "hostile link");
    CHECK_OK(mr_q_cache_path(c, &t.k, entry, sizeof entry));
    snprintf(lock, sizeof lock, "%.*s.lock", (int)(strlen(entry) - 4), entry);
    char target[4300];
    snprintf(target, sizeof target, "%s-planted-target", dir);
    unlink(target);
    CHECK(symlink(target, lock) == 0);
    CHECK(store_key(s, &t) == 0);
    CHECK(load_key(s, &t) == 1);
    CHECK(lstat(target, &sb) != 0);
    printf("hostile: lock linked to a missing file: that file %s\n", lstat(target, &sb) == 0 ? "was CREATED" : "stays absent");
    CHECK(lstat(lock, &sb) == 0 && S_ISLNK(sb.st_mode)); /* not ours: left alone */
    unlink(lock);

    /* an entry that is a link to a valid entry: not read through it (a miss, then replaced) */
    char copy[4300];
    snprintf(copy, sizeof copy, "%s-entry-copy", dir);
    CHECK(rename(entry, copy) == 0);
    CHECK(symlink(copy, entry) == 0);
    mr_q_cache_get_stats(c, &st0);
    CHECK(store_key(s, &t) == 0);
    mr_q_cache_get_stats(c, &st1);
    CHECK(st1.rejected - st0.rejected == 1);
    CHECK(lstat(entry, &sb) == 0 && S_ISREG(sb.st_mode));
    unlink(copy);
    free_key(&t);

    /* a store that fails in the background (file-size limit: EFBIG) is not "computed, stored" */
    make_key(&t, 40, 30, 400, "hostile full");
    char buf[200];
    float *out = malloc((size_t)t.nq * 2 * sizeof(float));
    CHECK(s->load(s, &t.k, out) == 0);
    struct rlimit fs, small = {4096, 4096};
    getrlimit(RLIMIT_FSIZE, &fs);
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    small.rlim_max = fs.rlim_max;
    CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
    mr_q_cache_get_stats(c, &st0);
    s->save(s, &t.k, copy_q(&t));
    const char *said = mr_q_cache_source(c, "computed, stored", buf, sizeof buf);
    setrlimit(RLIMIT_FSIZE, &fs);
    signal(SIGXFSZ, old_handler);
    mr_q_cache_get_stats(c, &st1);
    printf("hostile: a failed background store: stores %lld, the report says '%s'\n",
           (long long)(st1.stores - st0.stores), said);
    CHECK(st1.stores == st0.stores);
    CHECK(strncmp(said, "computed, not stored (the cache write failed: File too large", 60) == 0);
    CHECK(stray_files(dir) == 0);
    CHECK(store_key(s, &t) == 0); /* and a store that works says so */
    said = mr_q_cache_source(c, "computed, stored", buf, sizeof buf);
    CHECK(strcmp(said, "computed, stored") == 0);
    CHECK(strcmp(mr_q_cache_source(c, "store", buf, sizeof buf), "store") == 0);
    free(out);
    free_key(&t);
    alarm(0);
    mr_q_cache_close(c);
}

static void default_dir(void)
{
    char buf[4096];
    setenv("MRIRECON_CACHE_DIR", "/some/where", 1);
    CHECK_OK(mr_q_cache_default_dir(buf, sizeof buf));
    CHECK(strcmp(buf, "/some/where/q") == 0);
    setenv("MRIRECON_CACHE_DIR", "off", 1);
    CHECK_OK(mr_q_cache_default_dir(buf, sizeof buf));
    CHECK(buf[0] == '\0');
    mr_q_cache *c = (mr_q_cache *)&buf; /* must be set to NULL */
    CHECK_OK(mr_q_cache_open(&c, NULL, 0));
    CHECK(c == NULL);
    CHECK_OK(mr_q_cache_open(&c, "off", 0));
    CHECK(c == NULL);
    CHECK(mr_q_cache_store(NULL) == NULL);
    unsetenv("MRIRECON_CACHE_DIR");
}

/* The one entry file (q-*.mrq) in dir into path: 1 when there is exactly one. */
static int only_entry(const char *dir, char *path, size_t size)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (strncmp(e->d_name, "q-", 2) == 0 && strstr(e->d_name, ".mrq")) {
            const int len = snprintf(path, size, "%s/%s", dir, e->d_name);
            n += len > 0 && (size_t)len < size ? 1 : 99;
        }
    if (d)
        closedir(d);
    return n == 1;
}

/* One run of a "later process" (nothing in memory): the per-process counts of computations and the cache's
 * stats after it. */
static void later_run(mr_q_cache *c, const int64_t mat[3], const float *t, int64_t m, const mr_dcf_pipe_opts *o,
                      float *w, int64_t *computed, mr_q_cache_stats *st)
{
    mr_dcf_cache_clear();
    CHECK_OK(mr_dcf_pipe_run(mat, t, m, o, w));
    mr_dcf_cache_stats(NULL, computed);
    mr_q_cache_get_stats(c, st);
}

/* Pipe-Menon weights through the cache: computed once, then read by "later processes". */
static void dcf_store(const char *dir)
{
    const int spokes = 31, readout = 48;
    const int64_t m = (int64_t)spokes * readout, mat[3] = {24, 24, 1};
    float *t = malloc((size_t)m * 3 * sizeof *t), *w0 = malloc((size_t)m * sizeof *w0);
    float *w = malloc((size_t)m * sizeof *w);
    const double rot = test_uniform(&rng);
    for (int s = 0; s < spokes; s++)
        for (int j = 0; j < readout; j++) {
            float *k = t + 3 * ((int64_t)s * readout + j);
            const double th = M_PI * (s + rot) / spokes, r = (j - readout / 2) * 0.5;
            k[0] = (float)(r * cos(th));
            k[1] = (float)(r * sin(th));
            k[2] = 0.0f;
        }
    mr_q_cache *c = NULL;
    CHECK_OK(mr_q_cache_open(&c, dir, 0));
    mr_dcf_pipe_opts o;
    mr_dcf_pipe_opts_default(&o);
    o.store = mr_q_cache_dcf_store(c);
    int64_t hits, computed;
    mr_q_cache_stats st;
    mr_dcf_cache_clear();
    CHECK_OK(mr_dcf_pipe_run(mat, t, m, &o, w0));
    mr_q_cache_get_stats(c, &st);
    CHECK(st.misses == 1 && st.stores == 1 && st.hits == 0);
    /* a later process: nothing in memory, the entry on disk */
    later_run(c, mat, t, m, &o, w, &computed, &st);
    CHECK(st.hits == 1 && computed == 0);
    CHECK(memcmp(w, w0, (size_t)m * sizeof *w) == 0);
    /* the weights equal a computation without the store */
    mr_dcf_cache_clear();
    CHECK_OK(mr_dcf_pipe(mat, t, m, 0, 1, w));
    CHECK(memcmp(w, w0, (size_t)m * sizeof *w) == 0);
    char path[4200];
    CHECK(only_entry(dir, path, sizeof path));
    /* misses: one bit of one coordinate, the matrix, the iterations, the momentum */
    uint32_t bits;
    memcpy(&bits, &t[3 * 77], sizeof bits);
    bits ^= 1u;
    memcpy(&t[3 * 77], &bits, sizeof bits);
    mr_dcf_cache_clear();
    CHECK_OK(mr_dcf_pipe_run(mat, t, m, &o, w));
    bits ^= 1u;
    memcpy(&t[3 * 77], &bits, sizeof bits);
    const int64_t mat2[3] = {24, 22, 1};
    CHECK_OK(mr_dcf_pipe_run(mat2, t, m, &o, w));
    o.iters = 7;
    CHECK_OK(mr_dcf_pipe_run(mat, t, m, &o, w));
    o.iters = 0;
    o.momentum = 0.0;
    CHECK_OK(mr_dcf_pipe_run(mat, t, m, &o, w));
    o.momentum = MR_DCF_PIPE_DEFAULT_MOMENTUM;
    mr_dcf_cache_stats(&hits, &computed);
    mr_q_cache_get_stats(c, &st);
    printf("dcf store: hits %lld, misses %lld, stores %lld, computed %lld\n", (long long)st.hits,
           (long long)st.misses, (long long)st.stores, (long long)computed);
    CHECK(st.hits == 1 && st.misses == 5 && st.stores == 5 && computed == 4);
    /* a corrupt entry (the last weight's byte): rejected with a warning, computed again, replaced */
    poke(path, -1);
    later_run(c, mat, t, m, &o, w, &computed, &st);
    CHECK(st.rejected == 1 && computed == 1);
    CHECK(memcmp(w, w0, (size_t)m * sizeof *w) == 0);
    later_run(c, mat, t, m, &o, w, &computed, &st);
    CHECK(st.hits == 2 && st.rejected == 1 && computed == 0);
    CHECK(memcmp(w, w0, (size_t)m * sizeof *w) == 0);
    CHECK(stray_files(dir) == 0);
    mr_q_cache_close(c);
    free(t);
    free(w0);
    free(w);
}

int main(void)
{
    rng = test_seed();
    const char *tmp = test_tmpdir("q_cache");
    char dir[9][4200];
    for (int i = 0; i < 9; i++)
        snprintf(dir[i], sizeof dir[i], "%s/cache%d", tmp, i);
    hits_and_misses(dir[0]);
    eviction(dir[1]);
    concurrent(dir[2]);
    racing_first_loads(dir[6]);
    stale_files(dir[7]);
    operator_store(dir[3]);
    large_entry(dir[4]);
    threads(dir[5]);
    hostile_files(dir[8]);
    default_dir();
    char ddir[4200];
    snprintf(ddir, sizeof ddir, "%s/cache_dcf", tmp);
    dcf_store(ddir);
    return test_finish("test_q_cache");
}
