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

/* How {name} is written (mr_error_set_spelling); set once before threads start. */
static char spell_prefix[16], spell_suffix[16];
static char spell_sep = '-';

mr_status mr_error_set_spelling(const char *prefix, char sep, const char *suffix)
{
    prefix = prefix ? prefix : "";
    suffix = suffix ? suffix : "";
    if (strchr(prefix, '%') || strchr(suffix, '%') || sep == '%' || sep == '\0' || strlen(prefix) >= sizeof spell_prefix ||
        strlen(suffix) >= sizeof spell_suffix)
        return MR_EINVAL;
    snprintf(spell_prefix, sizeof spell_prefix, "%s", prefix);
    snprintf(spell_suffix, sizeof spell_suffix, "%s", suffix);
    spell_sep = sep;
    return MR_OK;
}

/* The length of the parameter name at t (just after a '{': a lower-case letter, then letters, digits and
 * '-') when a '}' closes it, else 0. */
static size_t param_name_length(const char *t)
{
    if (t[0] < 'a' || t[0] > 'z')
        return 0;
    size_t n = 1;
    while ((t[n] >= 'a' && t[n] <= 'z') || (t[n] >= '0' && t[n] <= '9') || t[n] == '-')
        n++;
    return n > 0 && t[n] == '}' ? n : 0;
}

/* mr_error_spell, returning the length of the whole spelled text (buf holds at most size - 1 bytes of it) */
static size_t spell(const char *fmt, char *buf, size_t size)
{
    size_t o = 0, need = 0;
#define PUT(ch)              \
    do {                     \
        need++;              \
        if (o + 1 < size)    \
            buf[o++] = (ch); \
    } while (0)
    for (const char *t = fmt; *t; t++) {
        const size_t n = *t == '{' ? param_name_length(t + 1) : 0;
        if (n == 0) {
            PUT(*t);
            continue;
        }
        for (const char *c = spell_prefix; *c; c++)
            PUT(*c);
        for (size_t i = 1; i <= n; i++)
            PUT(t[i] == '-' ? spell_sep : t[i]);
        for (const char *c = spell_suffix; *c; c++)
            PUT(*c);
        t += n + 1;
    }
#undef PUT
    buf[o] = '\0';
    return need;
}

const char *mr_error_spell(const char *fmt, char *buf, size_t size)
{
    if (buf && size > 0)
        spell(fmt, buf, size);
    return buf;
}

const char *mr_error_format(const char *fmt, char *buf, size_t size)
{
    if (!strchr(fmt, '{') || !buf || size == 0)
        return fmt;
    return spell(fmt, buf, size) < size ? buf : fmt; /* a cut format could end inside a conversion */
}

mr_status mr_error(mr_status s, const char *fmt, ...)
{
    /* {name} spelled in the format (never in the arguments: a path may hold braces); the spelling holds no
     * '%', so the format's conversions are those the compiler checked */
    char spelled[2048];
    const char *f = mr_error_format(fmt, spelled, sizeof spelled);
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    const int n = vsnprintf(last_message, sizeof last_message, f, ap);
    va_end(ap);
    if (n >= (int)sizeof last_message) {
        char *full = malloc((size_t)n + 1);
        if (full) {
            vsnprintf(full, (size_t)n + 1, f, again);
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
