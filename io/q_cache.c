/* io/q_cache.h: the Q cache on disk. */
#include "q_cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "../base/grid.h"
#include "../base/log.h"
#include "../base/parallel.h"
#include "fsutil.h"

#ifndef MR_VERSION
#define MR_VERSION "unknown"
#endif

#define QC_MAGIC "MRQCACHE"
#define QC_FORMAT 2 /* 2: the payload checksum is a hash of the hashes of its pieces */
#define QC_ENDIAN 0x01020304
#define QC_CHUNK (4u << 20) /* bytes read or hashed at a time */
#define QC_STALE_TMP_S 3600
#define QC_THREADS 16 /* at most, reading and checking an entry */

/* ---- xxHash64 (libxxhash, Debian libxxhash-dev; header-only: XXH_INLINE_ALL, so the binary needs no
 * libxxhash.so), fast enough to check 134 MB in a few tens of milliseconds. The same values as the hand-written
 * XXH64 it replaced (checked on 143 lengths x 3 seeds), so existing cache files stay valid. ------------------ */

typedef XXH64_state_t qc_hash;

static void hash_init(qc_hash *h, uint64_t seed) { XXH64_reset(h, seed); }
static void hash_update(qc_hash *h, const void *data, size_t n) { XXH64_update(h, data, n); }
static uint64_t hash_final(const qc_hash *h) { return XXH64_digest(h); }
static uint64_t hash_of(const void *data, size_t n, uint64_t seed) { return XXH64(data, n, seed); }

/* ---- the payload checksum: a hash of the hashes of its pieces (QC_CHUNK bytes each, never across the
 * boundary of the key data and Q), so that reading and checking run on all cores ------------------------ */

typedef struct {
    char *mem;    /* where the piece is (or goes) in memory */
    uint64_t off; /* its offset in the file */
    size_t n;
} qc_piece;

/* The pieces of a payload: key data (key_bytes at key_mem) then Q (q_bytes at q_mem), from file offset
 * base. *pieces malloc'd (NULL when out of memory); returns the count. */
static int payload_pieces(char *key_mem, size_t key_bytes, char *q_mem, size_t q_bytes, uint64_t base,
                          qc_piece **pieces)
{
    const int n = (int)((key_bytes + QC_CHUNK - 1) / QC_CHUNK + (q_bytes + QC_CHUNK - 1) / QC_CHUNK);
    qc_piece *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
    *pieces = p;
    if (!p)
        return 0;
    int i = 0;
    char *mem[2] = {key_mem, q_mem};
    const size_t len[2] = {key_bytes, q_bytes};
    const uint64_t start[2] = {base, base + key_bytes};
    for (int r = 0; r < 2; r++)
        for (size_t o = 0; o < len[r]; o += QC_CHUNK, i++) {
            p[i].mem = mem[r] + o;
            p[i].off = start[r] + o;
            p[i].n = len[r] - o < QC_CHUNK ? len[r] - o : QC_CHUNK;
        }
    return i;
}

/* Read (or write) all n bytes at file offset off (pread/pwrite), through short transfers and EINTR: 0, or
 * -1. */
static int transfer(int fd, void *buf, size_t n, int writing, uint64_t off)
{
    char *p = buf;
    while (n > 0) {
        const size_t step = n > ((size_t)1 << 30) ? ((size_t)1 << 30) : n;
        const ssize_t r = writing ? pwrite(fd, p, step, (off_t)off) : pread(fd, p, step, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
        off += (uint64_t)r;
    }
    return 0;
}

/* The pieces read (fd >= 0: pread at their offsets) and hashed by several threads (base/parallel.h:
 * a process forked after using the cache, the workers of `batch`, must be able to use it again). */
typedef struct {
    const qc_piece *pc;
    int fd;
    uint64_t *ph;
    int bad;
} qc_hash_work;

static int hash_piece(void *ctx, int64_t i, int slot)
{
    (void)slot;
    qc_hash_work *w = ctx;
    const qc_piece *p = &w->pc[i];
    if (w->fd >= 0 && transfer(w->fd, p->mem, p->n, 0, p->off) != 0) {
        __atomic_store_n(&w->bad, 1, __ATOMIC_RELAXED);
        return 1;
    }
    w->ph[i] = hash_of(p->mem, p->n, (uint64_t)i);
    return 0;
}

/* The payload checksum of np pieces. fd >= 0: each piece is read from the file first, on up to
 * QC_THREADS threads (a hit waits for this); fd < 0: the pieces are in memory, hashed on this thread
 * (the background writer). 0 with *out, or -1 when out of memory or a read failed. */
static int pieces_hash(const qc_piece *pc, int np, int fd, uint64_t *out)
{
    qc_hash_work w = {pc, fd, malloc((size_t)(np > 0 ? np : 1) * sizeof(uint64_t)), 0};
    if (!w.ph)
        return -1;
    (void)mr_par_for(np, fd >= 0 ? QC_THREADS : 1, hash_piece, &w);
    if (!w.bad)
        *out = hash_of(w.ph, (size_t)np * sizeof *w.ph, 11);
    free(w.ph);
    return w.bad ? -1 : 0;
}

/* ---- the file format ------------------------------------------------------------------------------- */

typedef struct {
    char magic[8];
    uint32_t format, header_bytes;
    uint64_t key_hash[2];
    int64_t matrix[3], m, nq;
    int32_t basis, endian;
    char engine[96];
    char program[32];
    uint64_t payload_bytes; /* traj [M][3] + qw [M] + Q [nq][2], floats */
    uint64_t payload_hash;
    uint64_t header_hash; /* of every byte above */
} qc_header;

/* What an entry is a function of, and how big its result is: a Q (mr_q_key: the trajectory and the Q
 * weights, nq = the Q grid's size, [nq][2] floats) or Pipe-Menon weights (mr_dcf_key, solver/dcf.h: the
 * trajectory alone, nq = M, [M] floats). The engine text tells the two apart (and is part of the hash). */
typedef struct {
    int64_t matrix[3], m;
    const float *traj; /* [M][3] */
    const float *qw;   /* [M], or NULL (weights: no Q weights) */
    int32_t basis;
    const char *engine;
    int64_t nq;      /* the header's count */
    int ncomp;       /* floats per value: 2 (Q, complex), 1 (weights) */
    int is_q;        /* 1: a Q (its outcome is the report's Q source), 0: Pipe-Menon weights */
    const char *what; /* for messages: "Q", "the DCF weights" */
} qc_key;

/* "Q is" or "the DCF weights are", for messages. */
static const char *what_is(int is_q) { return is_q ? "Q is" : "the DCF weights are"; }

static qc_key key_of_q(const mr_q_key *k)
{
    const mr_grid g = mr_grid_q(k->matrix);
    qc_key q = {{k->matrix[0], k->matrix[1], k->matrix[2]}, k->m, k->traj, k->qw, (int32_t)k->basis, k->engine,
                mr_grid_size(&g), 2, 1, "Q"};
    return q;
}

static qc_key key_of_dcf(const mr_dcf_key *k)
{
    qc_key q = {{k->matrix[0], k->matrix[1], k->matrix[2]}, k->m, k->traj, NULL, 0, k->method, k->m, 1, 0,
                "the DCF weights"};
    return q;
}

/* The payload: the key's data (traj [M][3] then qw [M], when it has Q weights), then the result [nq][ncomp],
 * floats. */
static size_t key_data_bytes(const qc_key *k) { return (size_t)k->m * (k->qw ? 4 : 3) * sizeof(float); }
static size_t q_bytes(const qc_key *k) { return (size_t)k->nq * (size_t)k->ncomp * sizeof(float); }
static uint64_t payload_bytes(const qc_key *k) { return (uint64_t)key_data_bytes(k) + q_bytes(k); }

/* The 128-bit hash naming a key's file: everything a Q depends on, byte for byte. */
static void key_hash(const qc_key *k, uint64_t out[2])
{
    for (int s = 0; s < 2; s++) {
        qc_hash h;
        hash_init(&h, s ? 0x9e3779b97f4a7c15ULL : 0x51ed27a3c0ffee11ULL);
        char fixed[160];
        memset(fixed, 0, sizeof fixed);
        snprintf(fixed, sizeof fixed, "mrq%d %s %s", QC_FORMAT, MR_VERSION, k->engine);
        hash_update(&h, fixed, sizeof fixed);
        const int64_t dims[5] = {k->matrix[0], k->matrix[1], k->matrix[2], k->m, (int64_t)k->basis};
        hash_update(&h, dims, sizeof dims);
        hash_update(&h, k->traj, (size_t)k->m * 3 * sizeof(float));
        if (k->qw)
            hash_update(&h, k->qw, (size_t)k->m * sizeof(float));
        out[s] = hash_final(&h);
    }
}

static uint64_t hash_header(const qc_header *hd) { return hash_of(hd, offsetof(qc_header, header_hash), 7); }

/* The header of key k, but for its two hashes: the writer fills them once the payload is hashed. */
static void fill_header(qc_header *hd, const qc_key *k, const uint64_t kh[2])
{
    memset(hd, 0, sizeof *hd);
    memcpy(hd->magic, QC_MAGIC, 8);
    hd->format = QC_FORMAT;
    hd->header_bytes = (uint32_t)sizeof *hd;
    hd->key_hash[0] = kh[0];
    hd->key_hash[1] = kh[1];
    memcpy(hd->matrix, k->matrix, sizeof hd->matrix);
    hd->m = k->m;
    hd->nq = k->nq;
    hd->basis = k->basis;
    hd->endian = QC_ENDIAN;
    snprintf(hd->engine, sizeof hd->engine, "%s", k->engine);
    snprintf(hd->program, sizeof hd->program, "%s", MR_VERSION);
    hd->payload_bytes = payload_bytes(k);
}

/* ---- the cache object ------------------------------------------------------------------------------- */

typedef struct {
    char final[4200], tmp[4200], lock_path[4200];
    qc_header hd;
    float *key_data; /* traj [M][3] then qw [M], copied */
    float *q;        /* owned */
    size_t key_bytes, q_bytes;
    int lock_fd;
    int is_q; /* a Q (its outcome is the report's), not DCF weights */
    int64_t max_bytes;
    const char *dir;
    int stored;   /* out: the entry is in place */
    char why[160]; /* out: why not, when it is not */
    int64_t evicted;
} qc_job;

struct mr_q_cache {
    mr_q_store store; /* first: the interface */
    mr_dcf_store dcf_store; /* the same cache for Pipe-Menon weights */
    pthread_mutex_t mu; /* the object is used from the operator's threads: load, save, stats, close */
    pthread_cond_t cv;
    int pending;        /* loads that missed and whose save has not come yet: other loads wait for them */
    char dir[4096];
    int64_t max_bytes;
    int lock_fd;              /* held after a miss until its save */
    uint64_t lock_hash[2];
    qc_job *job;              /* the last write, until join_writer counts it */
    int last_save;            /* the outcome of the last save of a Q: 1 stored, 0 not (why in last_why), -1 none */
    char last_why[160];
    pthread_t writer;         /* runs job when writing is 1 */
    int writing;
    mr_q_cache_stats stats;
};

static void file_name(const mr_q_cache *c, const uint64_t kh[2], const char *suffix, char *buf, size_t size)
{
    snprintf(buf, size, "%s/q-%016llx%016llx%s", c->dir, (unsigned long long)kh[0], (unsigned long long)kh[1], suffix);
}

mr_status mr_q_cache_path(const mr_q_cache *c, const mr_q_key *key, char *buf, size_t size)
{
    if (!c || !key || !buf)
        return mr_error(MR_EINVAL, "mr_q_cache_path: NULL argument");
    uint64_t kh[2];
    const qc_key k = key_of_q(key);
    key_hash(&k, kh);
    file_name(c, kh, ".mrq", buf, size);
    return MR_OK;
}

mr_status mr_q_cache_default_dir(char *buf, size_t size)
{
    const char *root = getenv("MRIRECON_CACHE_DIR");
    if (root && strcmp(root, "off") == 0) {
        snprintf(buf, size, "%s", "");
        return MR_OK;
    }
    int n;
    if (root && root[0]) {
        n = snprintf(buf, size, "%s/q", root);
    } else if (getenv("XDG_CACHE_HOME") && getenv("XDG_CACHE_HOME")[0] == '/') {
        n = snprintf(buf, size, "%s/mrirecon/q", getenv("XDG_CACHE_HOME"));
    } else if (getenv("HOME") && getenv("HOME")[0]) {
        n = snprintf(buf, size, "%s/.cache/mrirecon/q", getenv("HOME"));
    } else {
        return mr_error(MR_EINVAL, "Q cache: no directory (set MRIRECON_CACHE_DIR, XDG_CACHE_HOME or HOME, or give "
                                   "{q-cache} DIR)");
    }
    if (n < 0 || (size_t)n >= size)
        return mr_error(MR_EINVAL, "Q cache: the directory name is too long");
    return MR_OK;
}

/* ---- reading ------------------------------------------------------------------------------------------ */

static int reject(mr_q_cache *c, const qc_key *k, const char *path, const char *why)
{
    mr_log(MR_LOG_WARN, "Q cache: %s: %s; ignored (%s computed again and the entry replaced)", path, why,
           what_is(k->is_q));
    c->stats.rejected++;
    return 0;
}

/* 1: a whole, valid entry of exactly this key was read into q. 0 otherwise (warned when corrupt).
 * *seen: the file examined (st_ino 0: none); a file identical to *seen on entry is not examined again,
 * so that the check after taking the lock does not warn twice about one damaged file. */
static int read_entry(mr_q_cache *c, const qc_key *k, const uint64_t kh[2], float *q, struct stat *seen)
{
    char path[4200];
    file_name(c, kh, ".mrq", path, sizeof path);
    /* never through a symbolic link, never blocking (a FIFO planted as an entry) */
    const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    struct stat sb;
    if (fd < 0 && errno == ELOOP && lstat(path, &sb) == 0) {
        if (seen->st_ino != sb.st_ino || seen->st_dev != sb.st_dev)
            reject(c, k, path, "a symbolic link, not a cache entry");
        *seen = sb;
        return 0;
    }
    if (fd < 0 || fstat(fd, &sb) != 0) {
        if (fd >= 0)
            close(fd);
        memset(seen, 0, sizeof *seen);
        return 0;
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        if (seen->st_ino != sb.st_ino || seen->st_dev != sb.st_dev)
            reject(c, k, path, "not a regular file");
        *seen = sb;
        return 0;
    }
    if (seen->st_ino == sb.st_ino && seen->st_dev == sb.st_dev && seen->st_size == sb.st_size &&
        seen->st_mtim.tv_sec == sb.st_mtim.tv_sec && seen->st_mtim.tv_nsec == sb.st_mtim.tv_nsec) {
        close(fd); /* the same file as before: the same verdict */
        return 0;
    }
    *seen = sb;
    int ok = 0;
    qc_header hd;
    const uint64_t want = sizeof hd + payload_bytes(k);
    float *key_data = NULL;
    if ((uint64_t)sb.st_size != want) {
        char why[160];
        snprintf(why, sizeof why, "%lld bytes, expected %llu (truncated or not a Q cache file)",
                 (long long)sb.st_size, (unsigned long long)want);
        reject(c, k, path, why);
        goto done;
    }
    if (transfer(fd, &hd, sizeof hd, 0, 0) != 0 || memcmp(hd.magic, QC_MAGIC, 8) != 0 || hd.format != QC_FORMAT ||
        hd.header_bytes != sizeof hd || hd.endian != QC_ENDIAN ||
        hd.header_hash != hash_header(&hd)) {
        reject(c, k, path, "the header is damaged or of another format");
        goto done;
    }
    if (hd.key_hash[0] != kh[0] || hd.key_hash[1] != kh[1] || hd.m != k->m || hd.nq != k->nq ||
        memcmp(hd.matrix, k->matrix, sizeof hd.matrix) != 0 || hd.basis != k->basis ||
        strncmp(hd.engine, k->engine, sizeof hd.engine) != 0 || strncmp(hd.program, MR_VERSION, sizeof hd.program) != 0 ||
        hd.payload_bytes != payload_bytes(k)) {
        mr_log(MR_LOG_DEBUG, "Q cache: %s holds another key (hash collision): a miss", path);
        goto done;
    }
    /* the payload read and hashed piece by piece on all cores: the key's data into a buffer (compared in
     * full below), Q straight into q */
    key_data = malloc(key_data_bytes(k));
    qc_piece *pc = NULL;
    const int np =
        key_data ? payload_pieces((char *)key_data, key_data_bytes(k), (char *)q, q_bytes(k), sizeof hd, &pc) : 0;
    if (!pc) {
        mr_log(MR_LOG_WARN, "Q cache: no memory to read %s: a miss", path);
        goto done;
    }
    uint64_t payload_hash = 0;
    const int bad = pieces_hash(pc, np, fd, &payload_hash);
    free(pc);
    if (bad) {
        reject(c, k, path, "a read failed or no memory to check it");
        goto done;
    }
    if (payload_hash != hd.payload_hash) {
        reject(c, k, path, "the checksum of the data does not match (corrupt)");
        goto done;
    }
    if (memcmp(key_data, k->traj, (size_t)k->m * 3 * sizeof(float)) != 0 ||
        (k->qw && memcmp(key_data + 3 * k->m, k->qw, (size_t)k->m * sizeof(float)) != 0)) {
        mr_log(MR_LOG_DEBUG, "Q cache: %s holds another trajectory or weights (hash collision): a miss", path);
        goto done;
    }
    ok = 1;
    (void)futimens(fd, NULL); /* recently used: the eviction keeps it */
done:
    free(key_data);
    close(fd);
    return ok;
}

/* ---- locking ------------------------------------------------------------------------------------------ */

static void unlock(int *fd)
{
    if (*fd >= 0) {
        (void)flock(*fd, LOCK_UN);
        close(*fd);
    }
    *fd = -1;
}

/* Releases a held key lock and removes its lock file, but only while the path still names the inode this
 * process locked: another process may have made a fresh lock file there after an earlier holder removed
 * the old one, and that one is not ours to remove. Whoever opened the old inode before its removal locks
 * it next, finds the entry (or computes Q), and finds nothing to remove. */
static void drop_lock(int *fd, const char *path)
{
    struct stat held, named;
    if (*fd >= 0 && fstat(*fd, &held) == 0 && lstat(path, &named) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino)
        (void)unlink(path);
    unlock(fd);
}

/* Open the lock file at path (created when create), a regular file only: never through a symbolic link
 * (a link to a missing path would make us create that file), never blocking (a FIFO); -1 otherwise. */
static int open_lock(const char *path, int create)
{
    const int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | (create ? O_CREAT : 0), 0600);
    struct stat sb;
    if (fd >= 0 && (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))) {
        close(fd);
        errno = 0;
        return -1;
    }
    return fd;
}

/* The key's lock: 1 when held (fd in *out), 0 when it could not be taken (no lock file, one that is not a
 * regular file, or waited too long: the caller goes on without it). */
static int take_lock(mr_q_cache *c, const uint64_t kh[2], int *out)
{
    char path[4200];
    file_name(c, kh, ".lock", path, sizeof path);
    *out = -1;
    const int fd = open_lock(path, 1);
    if (fd < 0) {
        mr_log(MR_LOG_WARN, "Q cache: %s: cannot use it as a lock file (%s); going on without the lock", path,
               errno ? strerror(errno) : "not a regular file");
        return 0;
    }
    int waited = 0;
    const double t0 = mr_now();
    while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK && errno != EINTR) {
            close(fd);
            return 0;
        }
        if (!waited)
            mr_log(MR_LOG_INFO, "Q cache: another process is computing this Q; waiting for it");
        waited = 1;
        if (mr_now() - t0 > MR_Q_CACHE_WAIT_S) {
            mr_log(MR_LOG_WARN, "Q cache: waited %d s for another process's Q; computing it here", MR_Q_CACHE_WAIT_S);
            close(fd);
            return 0;
        }
        const struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    *out = fd;
    return 1;
}

static void join_writer(mr_q_cache *c);

/* With c->mu held: wait while a Q of this process is being computed (its save may be of this very key,
 * often from another thread: the NUDFT operator's background saver). A save that never comes (a caller
 * that broke the load/save contract) is waited for MR_Q_CACHE_WAIT_S seconds, then given up. */
static void wait_pending(mr_q_cache *c)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += MR_Q_CACHE_WAIT_S;
    while (c->pending > 0)
        if (pthread_cond_timedwait(&c->cv, &c->mu, &until) == ETIMEDOUT && c->pending > 0) {
            mr_log(MR_LOG_WARN, "Q cache: waited %d s for the store of a Q computed in this process; going on",
                   MR_Q_CACHE_WAIT_S);
            c->pending = 0;
        }
}

/* A load of either kind (qc_key): 1 and q filled on a hit; 0 on a miss, which holds the key's lock (when it
 * could be taken) until its save. */
static int cache_load(mr_q_cache *c, const qc_key *k, float *q)
{
    pthread_mutex_lock(&c->mu);
    wait_pending(c);
    join_writer(c); /* this process's own last entry is complete (and its lock released) */
    unlock(&c->lock_fd);
    uint64_t kh[2];
    key_hash(k, kh);
    struct stat seen;
    memset(&seen, 0, sizeof seen);
    int fd = -1, hit = read_entry(c, k, kh, q, &seen);
    if (!hit && take_lock(c, kh, &fd) && read_entry(c, k, kh, q, &seen)) { /* computed meanwhile by the holder */
        char path[4200];
        file_name(c, kh, ".lock", path, sizeof path);
        drop_lock(&fd, path); /* this lock file may be new, made after the holder removed its own */
        hit = 1;
    }
    if (hit) {
        c->stats.hits++;
    } else {
        c->lock_fd = fd;
        c->lock_hash[0] = kh[0];
        c->lock_hash[1] = kh[1];
        c->stats.misses++;
        c->pending++;
    }
    pthread_mutex_unlock(&c->mu);
    return hit;
}

/* ---- writing ------------------------------------------------------------------------------------------ */

typedef struct {
    char path[4200];
    int64_t size;
    time_t mtime;
} qc_entry;

static int cmp_mtime(const void *a, const void *b)
{
    const qc_entry *x = a, *y = b;
    return x->mtime < y->mtime ? -1 : x->mtime > y->mtime;
}

/* q-<hash>.mrq, q-<hash>.lock, .q-<hash>.tmpXXXXXX */
static int cache_file(const char *name, int *is_entry, int *is_tmp)
{
    const size_t len = strlen(name);
    *is_entry = strncmp(name, "q-", 2) == 0 && len > 4 && strcmp(name + len - 4, ".mrq") == 0;
    *is_tmp = strncmp(name, ".q-", 3) == 0 && strstr(name, ".tmp") != NULL;
    return *is_entry || *is_tmp || (strncmp(name, "q-", 2) == 0 && len > 5 && strcmp(name + len - 5, ".lock") == 0);
}

int64_t mr_q_cache_clear(const char *dir)
{
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d)
        return 0;
    int64_t removed = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        int entry, tmp;
        char path[4200];
        if (!cache_file(de->d_name, &entry, &tmp) || mr_path_join(path, sizeof path, dir, de->d_name) != MR_OK)
            continue;
        removed += unlink(path) == 0;
    }
    closedir(d);
    return removed;
}

/* A lock file older than QC_STALE_TMP_S that nobody holds (its process crashed while computing Q, or
 * went on without the cache): removed. One that is held stays. */
static void remove_stale_lock(const char *path)
{
    int fd = open_lock(path, 0);
    if (fd < 0)
        return;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0)
        drop_lock(&fd, path);
    else
        close(fd);
}

/* Remove the least recently used entries until the rest fits in max_bytes (never `keep`), and
 * temporary files and unheld lock files older than QC_STALE_TMP_S. */
static int64_t evict(const char *dir, int64_t max_bytes, const char *keep)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    qc_entry *e = NULL;
    size_t n = 0, cap = 0;
    int64_t total = 0, removed = 0;
    const time_t now = time(NULL);
    struct dirent *de;
    while ((de = readdir(d))) {
        int entry, tmp;
        char path[4200];
        struct stat sb;
        if (!cache_file(de->d_name, &entry, &tmp) || mr_path_join(path, sizeof path, dir, de->d_name) != MR_OK ||
            lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
            continue;
        if (!entry) { /* a temporary or lock file */
            if (now - sb.st_mtime > QC_STALE_TMP_S) {
                if (tmp)
                    (void)unlink(path);
                else
                    remove_stale_lock(path);
            }
            continue;
        }
        total += sb.st_size;
        if (strcmp(path, keep) == 0)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            qc_entry *ne = realloc(e, cap * sizeof *e);
            if (!ne)
                break;
            e = ne;
        }
        snprintf(e[n].path, sizeof e[n].path, "%s", path);
        e[n].size = sb.st_size;
        e[n].mtime = sb.st_mtime;
        n++;
    }
    closedir(d);
    if (total > max_bytes && n > 0) {
        qsort(e, n, sizeof *e, cmp_mtime);
        for (size_t i = 0; i < n && total > max_bytes; i++)
            if (unlink(e[i].path) == 0) {
                total -= e[i].size;
                removed++;
                mr_log(MR_LOG_DEBUG, "Q cache: removed %s (least recently used)", e[i].path);
            }
    }
    free(e);
    return removed;
}

static void *write_job(void *arg)
{
    qc_job *j = arg;
    qc_piece *pc = NULL;
    const int np = payload_pieces((char *)j->key_data, j->key_bytes, (char *)j->q, j->q_bytes, 0, &pc);
    const int hashed = pc && pieces_hash(pc, np, -1, &j->hd.payload_hash) == 0;
    free(pc);
    j->hd.header_hash = hash_header(&j->hd);
    if (!hashed)
        errno = ENOMEM;
    const int fd = hashed ? mkstemp(j->tmp) : -1;
    int ok = fd >= 0 && transfer(fd, &j->hd, sizeof j->hd, 1, 0) == 0 &&
             transfer(fd, j->key_data, j->key_bytes, 1, sizeof j->hd) == 0 &&
             transfer(fd, j->q, j->q_bytes, 1, sizeof j->hd + j->key_bytes) == 0;
    if (fd >= 0) {
        (void)fchmod(fd, 0644);
        ok = close(fd) == 0 && ok;
    }
    if (ok && rename(j->tmp, j->final) == 0) {
        j->stored = 1;
        j->evicted = evict(j->dir, j->max_bytes, j->final);
    } else {
        snprintf(j->why, sizeof j->why, "the cache write failed: %s", strerror(errno));
        mr_log(MR_LOG_WARN, "Q cache: cannot write %s: %s (%s not cached)", j->final, strerror(errno),
               what_is(j->is_q));
        if (fd >= 0)
            (void)unlink(j->tmp);
    }
    /* the entry is in place (or will not be): waiting processes go on now, and the lock file goes too */
    drop_lock(&j->lock_fd, j->lock_path);
    free(j->q);
    j->q = NULL;
    free(j->key_data);
    j->key_data = NULL;
    return NULL;
}

/* The last write finished (its thread joined, when it has one), counted, and its job freed. */
static void join_writer(mr_q_cache *c)
{
    if (!c->job)
        return;
    if (c->writing)
        pthread_join(c->writer, NULL);
    c->writing = 0;
    c->stats.stores += c->job->stored;
    c->stats.evicted += c->job->evicted;
    if (c->job->is_q) { /* the report's Q source is about Q, not about DCF weights saved after it */
        c->last_save = c->job->stored;
        snprintf(c->last_why, sizeof c->last_why, "%s", c->job->why);
    }
    free(c->job);
    c->job = NULL;
}

static void save_locked(mr_q_cache *c, const qc_key *k, float *q);

static void cache_save(mr_q_cache *c, const qc_key *k, float *q)
{
    pthread_mutex_lock(&c->mu);
    save_locked(c, k, q);
    if (c->pending > 0)
        c->pending--;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

static void save_locked(mr_q_cache *c, const qc_key *k, float *q)
{
    join_writer(c);
    uint64_t kh[2];
    key_hash(k, kh);
    int lock_fd = -1;
    if (c->lock_fd >= 0 && c->lock_hash[0] == kh[0] && c->lock_hash[1] == kh[1]) {
        lock_fd = c->lock_fd; /* handed to the writer, released when the entry is in place */
        c->lock_fd = -1;
    }
    unlock(&c->lock_fd);
    const uint64_t bytes = sizeof(qc_header) + payload_bytes(k);
    qc_job *j = q ? calloc(1, sizeof *j) : NULL;
    if (k->is_q)
        c->last_save = 0;
    char why[160];
    snprintf(why, sizeof why, "%s",
             q ? "no memory for the cache write" : k->is_q ? "no Q to store" : "no weights to store");
    if (q && (uint64_t)c->max_bytes < bytes) {
        snprintf(why, sizeof why, "%s take%s %.0f MB, more than the cache's limit of %.0f MB", k->what,
                 k->is_q ? "s" : "", (double)bytes * 1e-6, (double)c->max_bytes * 1e-6);
        mr_log(MR_LOG_INFO, "Q cache: %s: not stored", why);
    } else if (q && j && (j->key_data = malloc(key_data_bytes(k)))) {
        memcpy(j->key_data, k->traj, (size_t)k->m * 3 * sizeof(float));
        if (k->qw)
            memcpy(j->key_data + 3 * k->m, k->qw, (size_t)k->m * sizeof(float));
        j->key_bytes = key_data_bytes(k);
        j->q = q;
        j->q_bytes = q_bytes(k);
        j->lock_fd = lock_fd;
        j->is_q = k->is_q;
        j->max_bytes = c->max_bytes;
        j->dir = c->dir;
        file_name(c, kh, ".mrq", j->final, sizeof j->final);
        file_name(c, kh, ".lock", j->lock_path, sizeof j->lock_path);
        snprintf(j->tmp, sizeof j->tmp, "%s/.q-%016llx%016llx.tmpXXXXXX", c->dir, (unsigned long long)kh[0],
                 (unsigned long long)kh[1]);
        fill_header(&j->hd, k, kh);
        c->job = j;
        if (pthread_create(&c->writer, NULL, write_job, j) == 0) {
            c->writing = 1;
        } else { /* no thread: write it now */
            write_job(j);
            join_writer(c);
        }
        return;
    }
    if (k->is_q)
        snprintf(c->last_why, sizeof c->last_why, "%s", why);
    if (j)
        free(j->key_data);
    free(j);
    free(q);
    char path[4200]; /* nothing to store: the lock file goes (see write_job) */
    file_name(c, kh, ".lock", path, sizeof path);
    drop_lock(&lock_fd, path);
}

/* ---- the two interfaces ---------------------------------------------------------------------------------- */

static int qc_load(mr_q_store *s, const mr_q_key *k, float *q)
{
    const qc_key key = key_of_q(k);
    return cache_load((mr_q_cache *)s, &key, q);
}

static void qc_save(mr_q_store *s, const mr_q_key *k, float *q)
{
    const qc_key key = key_of_q(k);
    cache_save((mr_q_cache *)s, &key, q);
}

static mr_q_cache *cache_of_dcf(mr_dcf_store *s) { return (mr_q_cache *)((char *)s - offsetof(mr_q_cache, dcf_store)); }

static int dcf_load(mr_dcf_store *s, const mr_dcf_key *k, float *w)
{
    const qc_key key = key_of_dcf(k);
    return cache_load(cache_of_dcf(s), &key, w);
}

static void dcf_save(mr_dcf_store *s, const mr_dcf_key *k, float *w)
{
    const qc_key key = key_of_dcf(k);
    cache_save(cache_of_dcf(s), &key, w);
}

/* ---- open / close ------------------------------------------------------------------------------------- */

mr_status mr_q_cache_open(mr_q_cache **out, const char *dir, int64_t max_bytes)
{
    if (!out)
        return mr_error(MR_EINVAL, "mr_q_cache_open: out is NULL");
    *out = NULL;
    char buf[4096];
    if (!dir) {
        mr_status st = mr_q_cache_default_dir(buf, sizeof buf);
        if (st != MR_OK)
            return st;
        dir = buf;
    }
    if (!dir[0] || strcmp(dir, "off") == 0)
        return MR_OK;
    if (strlen(dir) >= sizeof buf - 64)
        return mr_error(MR_EINVAL, "Q cache: the directory name is too long");
    if (max_bytes <= 0) {
        max_bytes = MR_Q_CACHE_DEFAULT_MAX_BYTES;
        const char *env = getenv("MRIRECON_Q_CACHE_MAX_MB");
        if (env && env[0]) {
            char *end = NULL;
            const double mb = strtod(env, &end);
            if (*end || !(mb >= 0 && mb < 1e12))
                mr_log(MR_LOG_WARN, "MRIRECON_Q_CACHE_MAX_MB='%s' is not a size in MB; using %lld MB", env,
                       (long long)(max_bytes >> 20));
            else
                max_bytes = (int64_t)(mb * 1048576.0);
        }
    }
    /* the folders it makes are private (0700) whatever the umask: an entry is trusted once its checksums
     * match, so nobody else may write there */
    char created[8];
    mr_status st = mr_mkdir_p_mode(dir, 0700, created, sizeof created);
    if (st != MR_OK) {
        char why[1024];
        snprintf(why, sizeof why, "%s", mr_last_error());
        return mr_error(MR_EIO, "Q cache: cannot use the directory %s: %s", dir, why);
    }
    struct stat sb;
    if (stat(dir, &sb) == 0 && (sb.st_mode & (S_IWGRP | S_IWOTH)))
        mr_log(MR_LOG_WARN, "Q cache: %s is writable by other users (mode %03o): they could replace its entries",
               dir, (unsigned)(sb.st_mode & 0777));
    mr_q_cache *c = calloc(1, sizeof *c);
    if (!c)
        return mr_error(MR_ENOMEM, "Q cache: out of memory");
    c->store.load = qc_load;
    c->store.save = qc_save;
    c->dcf_store.load = dcf_load;
    c->dcf_store.save = dcf_save;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    snprintf(c->dir, sizeof c->dir, "%s", dir);
    c->max_bytes = max_bytes;
    c->lock_fd = -1;
    c->last_save = -1;
    *out = c;
    return MR_OK;
}

mr_q_store *mr_q_cache_store(mr_q_cache *c) { return c ? &c->store : NULL; }
mr_dcf_store *mr_q_cache_dcf_store(mr_q_cache *c) { return c ? &c->dcf_store : NULL; }
const char *mr_q_cache_dir(const mr_q_cache *c) { return c ? c->dir : ""; }

void mr_q_cache_get_stats(mr_q_cache *c, mr_q_cache_stats *s)
{
    pthread_mutex_lock(&c->mu);
    join_writer(c);
    *s = c->stats;
    pthread_mutex_unlock(&c->mu);
}

const char *mr_q_cache_source(mr_q_cache *c, const char *q_source, char *buf, size_t size)
{
    if (!c || !q_source || strcmp(q_source, "computed, stored") != 0 || !buf || size == 0)
        return q_source;
    pthread_mutex_lock(&c->mu);
    join_writer(c);
    const int stored = c->last_save == 1;
    if (!stored)
        snprintf(buf, size, "computed, not stored (%s)", c->last_save == 0 ? c->last_why : "no store was made");
    pthread_mutex_unlock(&c->mu);
    return stored ? q_source : buf;
}

void mr_q_cache_close(mr_q_cache *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    join_writer(c);
    unlock(&c->lock_fd);
    pthread_mutex_unlock(&c->mu);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
}
