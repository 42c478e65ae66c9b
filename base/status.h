/* Status codes shared by every layer of mrirecon.
 *
 * Library functions return an mr_status; on failure they also record a human-readable message
 * (naming the file, dataset, option or value at fault) with mr_error(), which the caller may read
 * back with mr_last_error() until the next failure on the same thread. Only main() turns a status
 * into an exit code. */
#ifndef MR_STATUS_H
#define MR_STATUS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, text): one table makes the enum and mr_strerror(). */
#define MR_STATUS_TABLE(X)                                              \
    X(OK, "success")                                                    \
    X(EINVAL, "invalid argument")                                       \
    X(ENOMEM, "out of memory")                                          \
    X(EIO, "input/output error")                                        \
    X(EFORMAT, "malformed input file")                                  \
    X(ENODEV, "no usable GPU")                                          \
    X(ECUDA, "CUDA error")                                              \
    X(EFFT, "FFT planning failed")                                      \
    X(ENOTSUP, "not supported")                                         \
    X(EINTR, "interrupted")                                             \
    X(EINTERNAL, "internal error")

typedef enum {
#define MR_STATUS_ENUM(name, text) MR_##name,
    MR_STATUS_TABLE(MR_STATUS_ENUM)
#undef MR_STATUS_ENUM
    MR_STATUS_COUNT
} mr_status;

/* The longest message mr_last_error() returns, with its NUL: room for two paths of PATH_MAX and the
 * reason. Buffers that keep a copy of a message should be this large. */
#define MR_ERROR_MAX 16384

/* Static text for a status ("invalid argument"); never NULL. */
const char *mr_strerror(mr_status s);

/* Record a printf-style message for the current thread and return s unchanged, so that
 * `return mr_error(MR_EFORMAT, "%s: /kspace/traj has rank %d, expected 2", path, rank);`
 * is the one way to fail. A message longer than MR_ERROR_MAX - 1 bytes keeps its beginning and its end
 * (where the reason is) with " ... " for the middle. */
mr_status mr_error(mr_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The message of the last mr_error() on this thread ("" when none). Borrowed: valid until the
 * next mr_error() on this thread. */
const char *mr_last_error(void);

/* Forget the last message on this thread. */
void mr_clear_error(void);

/* Library code states facts; how a user spells a setting is the application's business. A library message
 * names a setting by its parameter name in braces, "choose one with {volume}", and mr_error (and
 * mr_error_spell for other text) writes it the way the application set once, before any thread starts:
 * the command line sets ("--", '-', "") so the user reads "--volume"; with nothing set the name stands as
 * written ("volume"). A name is a lower-case letter, then lower-case letters, digits and '-'; `sep` replaces the '-' (e.g. '_' for
 * keyword arguments). The prefix and suffix may not contain '%' (MR_EINVAL). */
mr_status mr_error_set_spelling(const char *prefix, char sep, const char *suffix);

/* The text `fmt` with every {name} spelled (as above) into buf (at most size bytes, NUL-terminated,
 * truncated when longer); returns buf. For log lines that name a setting. */
const char *mr_error_spell(const char *fmt, char *buf, size_t size);

/* A printf format with its {name}s spelled, for mr_error and mr_log: buf, or fmt itself when it names no
 * setting or the spelled format does not fit in size bytes (it is never cut). */
const char *mr_error_format(const char *fmt, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
