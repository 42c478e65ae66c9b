#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "status.h"

static mr_log_level current_level = MR_LOG_INFO;
static void (*before_line)(void *ctx);
static void *before_line_ctx;

void mr_log_set_before_line(void (*fn)(void *ctx), void *ctx)
{
    before_line = fn;
    before_line_ctx = ctx;
}

void mr_log_set_level(mr_log_level level) { current_level = level; }

mr_log_level mr_log_get_level(void) { return current_level; }

void mr_log(mr_log_level level, const char *fmt, ...)
{
    static const char *const names[] = {"error", "warning", "info", "debug"};
    if (level > current_level)
        return;
    char line[MR_ERROR_MAX], spelled[2048];
    const char *f = mr_error_format(fmt, spelled, sizeof spelled); /* {name}: a setting (base/status.h) */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, f, ap);
    va_end(ap);
    /* one fputs per line so lines from worker threads or processes do not interleave */
    char out[MR_ERROR_MAX + 64];
    snprintf(out, sizeof out, "mrirecon: %s: %s\n", names[level], line);
    if (before_line)
        before_line(before_line_ctx);
    fputs(out, stderr);
}

double mr_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
