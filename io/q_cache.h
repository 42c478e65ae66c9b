/* The Q cache: the point-spread kernel Q of the Toeplitz normal (solver/linop.h), which depends only on
 * the trajectory, the weights, the grid, the basis and the engine that summed it, kept on disk so that
 * later runs with the same trajectory (a batch of scans, a repeated reconstruction) read it instead of
 * computing it. It implements the mr_q_store interface the NUDFT operator takes (mr_nudft_opts.q_store),
 * and the mr_dcf_store interface of the Pipe-Menon weights (solver/dcf.h), which depend only on the
 * trajectory and the matrix: gridding runs on one protocol's trajectory then skip the DCF iterations.
 * docs/RECON.md ("The Q cache") is the user's description.
 *
 * Where: the directory given to mr_q_cache_open (`--q-cache DIR`), else $MRIRECON_CACHE_DIR/q, else
 * $XDG_CACHE_HOME/mrirecon/q, else $HOME/.cache/mrirecon/q (created when needed). `--q-cache off` or
 * MRIRECON_CACHE_DIR=off disables it.
 *
 * Entries: one file q-<32 hex digits>.mrq per key, named by a 128-bit hash of the key (program version,
 * engine text, basis, matrix, M, the trajectory and the Q weights, byte for byte). The file holds the
 * whole key as well, and a hit requires it to match in full, so a hash collision is a miss, never a
 * wrong Q. A hit returns exactly the bits that were stored.
 *
 * Integrity: a header (magic, format version, sizes, key, the program version) protected by its own
 * 64-bit hash, and a 64-bit checksum of the payload (a hash of the 64-bit hashes of its 4 MiB pieces, so
 * that a hit reads and checks the file on all cores). A file of the wrong size (truncated), with a bad header
 * or a payload that does not match its hash is ignored with a warning (never used) and replaced by the
 * next store of that key.
 *
 * Files are opened without following symbolic links and without blocking, and only regular files are
 * used: an entry or lock replaced by a link or a FIFO is ignored (a miss, or no lock), never followed or
 * waited on. The folders the cache makes are 0700 whatever the umask.
 *
 * Concurrency (the workers of `mrirecon batch` are separate processes): entries are written to a
 * temporary file in the cache directory and renamed into place when complete (rename(2) is atomic
 * within a file system), so a reader sees a whole file or none. A miss takes an exclusive lock
 * (flock(2) on q-<hash>.lock) until its Q is stored; another process missing the same key waits for
 * the lock (up to MR_Q_CACHE_WAIT_S seconds, then it computes Q itself) and then reads the entry, so
 * concurrent scans with one trajectory compute Q once. Locks of a crashed process are released by the
 * kernel. The write itself runs in a background thread while the reconstruction goes on;
 * mr_q_cache_close waits for it.
 *
 * Size: at most max_bytes in entries (default 4 GiB, or MRIRECON_Q_CACHE_MAX_MB); after each store the
 * least recently used entries (mtime, refreshed on every hit) are removed until the rest fits. A Q larger
 * than the limit is not stored. Temporary files older than an hour (a crashed writer), and lock files older
 * than an hour that nobody holds (a process that crashed while computing Q), are removed then too.
 *
 * Ownership: mr_q_cache_open's object belongs to the caller (mr_q_cache_close, after every save: free
 * the NUDFT operators that use it first). Its functions may be called from several threads (the NUDFT
 * operator saves a computed Q from a background thread); every load that misses must be followed by one
 * save (NULL when Q could not be made), and while it has not come other loads of this object wait for it
 * (at most MR_Q_CACHE_WAIT_S seconds). Nothing here fails a reconstruction: a cache that cannot be read
 * or written is a miss or a skipped store, with a warning. */
#ifndef MR_Q_CACHE_H
#define MR_Q_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "../base/status.h"
#include "../solver/dcf.h"
#include "../solver/linop.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MR_Q_CACHE_DEFAULT_MAX_BYTES (4LL << 30)
#define MR_Q_CACHE_WAIT_S 900

typedef struct mr_q_cache mr_q_cache;

/* The default directory into buf: "" when MRIRECON_CACHE_DIR=off; MR_EINVAL when no variable gives one
 * (no MRIRECON_CACHE_DIR, XDG_CACHE_HOME or HOME). */
mr_status mr_q_cache_default_dir(char *buf, size_t size);

/* Open (creating the directory) the cache in dir (NULL: the default directory; "off": none, *out = NULL
 * and MR_OK). max_bytes <= 0: the default limit. MR_EIO naming the directory when it cannot be created. */
mr_status mr_q_cache_open(mr_q_cache **out, const char *dir, int64_t max_bytes);

/* The store interface for mr_nudft_opts.q_store (borrowed for the cache's lifetime). */
mr_q_store *mr_q_cache_store(mr_q_cache *c);
/* The store interface for mr_dcf_pipe_opts.store (borrowed for the cache's lifetime): Pipe-Menon weights in
 * the same directory, files, locks, checks and size limit as Q (the key: the trajectory, the matrix and the
 * method text of solver/dcf.h, whose text tells the entries apart from Q's); the file holds the trajectory
 * and the weights. A corrupt entry is rejected with the same warning and computed again. */
mr_dcf_store *mr_q_cache_dcf_store(mr_q_cache *c);
const char *mr_q_cache_dir(const mr_q_cache *c);

/* What the report should say about a Q whose operator reported q_source (solver/linop.h
 * mr_nudft_info.q_source) with this cache: waits for the background write of the last save, and when
 * q_source is "computed, stored" but that save did not leave an entry in place, returns
 * "computed, not stored (<why>)" in buf (e.g. "the cache write failed: No space left on device", or the
 * size limit); otherwise q_source itself. c NULL: q_source. */
const char *mr_q_cache_source(mr_q_cache *c, const char *q_source, char *buf, size_t size);

/* Wait for a background write, release a lock still held, free. NULL is fine. */
void mr_q_cache_close(mr_q_cache *c);

typedef struct {
    int64_t hits, misses, stores; /* stores: entries written completely */
    int64_t rejected;             /* files ignored as corrupt, truncated or of another format */
    int64_t evicted;              /* entries removed to stay under the limit */
} mr_q_cache_stats;

/* The counts of this object so far; waits for a background write first, so stores are final. */
void mr_q_cache_get_stats(mr_q_cache *c, mr_q_cache_stats *s);

/* Remove every entry, lock and temporary file of the cache in dir (the files it makes, nothing else);
 * the directory stays. A missing directory is fine. Returns the number of files removed. */
int64_t mr_q_cache_clear(const char *dir);

/* The file of a key (for tests and diagnostics): "<dir>/q-<hash>.mrq". */
mr_status mr_q_cache_path(const mr_q_cache *c, const mr_q_key *key, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
