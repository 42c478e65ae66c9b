/* Diagnostics on stderr. The level is process-wide and set once by main() from -v/-q; library
 * code only reads it. Results never go through here: they go to stdout or to files. */
#ifndef MR_LOG_H
#define MR_LOG_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { MR_LOG_ERROR = 0, MR_LOG_WARN = 1, MR_LOG_INFO = 2, MR_LOG_DEBUG = 3 } mr_log_level;

void mr_log_set_level(mr_log_level level);
mr_log_level mr_log_get_level(void);

/* Prints "mrirecon: <level>: message\n" to stderr when level <= the set level. */
void mr_log(mr_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* A function called before every printed line (e.g. to erase a progress bar drawn on the same
 * terminal line, recon/cli/progress_ui.h); NULL removes it. Set by a command's main thread only. */
void mr_log_set_before_line(void (*fn)(void *ctx), void *ctx);

/* Monotonic wall-clock seconds, for stage timings. */
double mr_now(void);

#ifdef __cplusplus
}
#endif
#endif
