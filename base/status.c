#include "status.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_message[1024];

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

mr_status mr_error(mr_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    va_end(ap);
    return s;
}

const char *mr_last_error(void) { return last_message; }

void mr_clear_error(void) { last_message[0] = '\0'; }
