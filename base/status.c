#include "status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char last_message[MR_ERROR_MAX];

const char *mr_strerror(mr_status s)
{
    switch (s) {
#define MR_STATUS_TEXT(name, text) \
    case MR_##name:                \
        return text;
        MR_STATUS_TABLE(MR_STATUS_TEXT)
#undef MR_STATUS_TEXT
    case MR_STATUS_COUNT:
        break;
    }
    return "unknown status";
}

/* The head of a message longer than the buffer, before the " ... " that replaces its middle: a message
 * begins with what it is about (a path) and ends with why, and both are kept. */
#define HEAD_KEPT (MR_ERROR_MAX / 4)

mr_status mr_error(mr_status s, const char *fmt, ...)
{
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    const int n = vsnprintf(last_message, sizeof last_message, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof last_message) {
        char *full = malloc((size_t)n + 1);
        if (full) {
            vsnprintf(full, (size_t)n + 1, fmt, again);
            static const char mark[] = " ... ";
            const size_t tail = sizeof last_message - 1 - HEAD_KEPT - (sizeof mark - 1);
            memcpy(last_message, full, HEAD_KEPT);
            memcpy(last_message + HEAD_KEPT, mark, sizeof mark - 1);
            memcpy(last_message + HEAD_KEPT + sizeof mark - 1, full + n - tail, tail + 1);
            free(full);
        }
    }
    va_end(again);
    return s;
}

const char *mr_last_error(void) { return last_message; }

void mr_clear_error(void) { last_message[0] = '\0'; }
