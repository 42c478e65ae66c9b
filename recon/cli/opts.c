#include "opts.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/grid.h"
#include "../../base/status.h"
#include "../../base/log.h"

static const mr_opt *find_long(const mr_cmd_spec *s, const char *name, size_t len)
{
    for (int i = 0; i < s->nopts; i++)
        if (strlen(s->opts[i].name) == len && strncmp(s->opts[i].name, name, len) == 0)
            return &s->opts[i];
    return NULL;
}

static const mr_opt *find_short(const mr_cmd_spec *s, char c)
{
    for (int i = 0; i < s->nopts; i++)
        if (s->opts[i].short_name == c)
            return &s->opts[i];
    return NULL;
}

/* The accepted values as --help and the errors show them: "{1..1000000}", "{0, 2..3}", "{-100..inf}";
 * integers as integers. "" when unchecked. */
static void format_range(const mr_opt *o, char *buf, size_t size)
{
    if (!(o->min <= o->max)) {
        buf[0] = '\0';
        return;
    }
    char lo[48], hi[48];
    if (o->type == MR_OPT_INT || o->type == MR_OPT_INT_OR_0) {
        snprintf(lo, sizeof lo, "%.0f", o->min);
        snprintf(hi, sizeof hi, "%.0f", o->max);
    } else {
        snprintf(lo, sizeof lo, "%g", o->min);
        snprintf(hi, sizeof hi, "%g", o->max);
    }
    snprintf(buf, size, "{%s%s..%s}", o->type == MR_OPT_INT_OR_0 && o->min > 0 ? "0, " : "", lo, hi);
}

static int in_range(const mr_opt *o, double v)
{
    return !(o->min <= o->max) || (v >= o->min && v <= o->max) || (o->type == MR_OPT_INT_OR_0 && v == 0);
}

static int set_value(const mr_cmd_spec *s, const mr_opt *o, const char *val)
{
    char range[128];
    format_range(o, range, sizeof range);
    char *end = NULL;
    switch (o->type) {
    case MR_OPT_FLAG:
        *(int *)o->dest = 1;
        return 0;
    case MR_OPT_INT:
    case MR_OPT_INT_OR_0: {
        errno = 0;
        long v = strtol(val, &end, 10);
        if (errno || end == val || *end || v < INT_MIN || v > INT_MAX)
            return mr_opts_usage(s, "--%s expects an integer, got '%s'", o->name, val);
        if (!in_range(o, (double)v))
            return mr_opts_usage(s, "--%s: %s is outside the accepted values %s", o->name, val, range);
        *(int *)o->dest = (int)v;
        return 0;
    }
    case MR_OPT_DOUBLE: {
        errno = 0;
        double v = strtod(val, &end);
        /* infinity only where the range reaches it (--snr inf) */
        const int inf_ok = isinf(v) && (v > 0 ? isinf(o->max) : isinf(o->min));
        if ((errno && !inf_ok) || end == val || *end || isnan(v) || (isinf(v) && !inf_ok))
            return mr_opts_usage(s, "--%s expects a %snumber, got '%s'", o->name,
                               isinf(o->max) || isinf(o->min) ? "" : "finite ", val);
        if (!in_range(o, v))
            return mr_opts_usage(s, "--%s: %s is outside the accepted values %s", o->name, val, range);
        *(double *)o->dest = v;
        return 0;
    }
    case MR_OPT_STRING:
        *(const char **)o->dest = val;
        return 0;
    case MR_OPT_CHOICE:
        for (const char *const *c = o->choices; *c; c++)
            if (strcmp(*c, val) == 0) {
                *(const char **)o->dest = *c;
                return 0;
            }
        return mr_opts_usage(s, "--%s: '%s' is not one of the choices (see --help)", o->name, val);
    case MR_OPT_DEVICE:
        if (mr_device_parse(val, o->dest) != MR_OK)
            return mr_opts_usage(s, "--%s: %s", o->name, mr_last_error());
        return 0;
    case MR_OPT_PRECISION:
        if (mr_precision_parse(val, o->dest) != MR_OK)
            return mr_opts_usage(s, "--%s: %s", o->name, mr_last_error());
        return 0;
    case MR_OPT_LIST: {
        mr_opt_list *l = o->dest;
        const char **items = realloc(l->items, (size_t)(l->count + 1) * sizeof *items);
        if (!items)
            return mr_opts_usage(s, "%s", "out of memory");
        items[l->count++] = val;
        l->items = items;
        return 0;
    }
    }
    return MR_EXIT_USAGE;
}

/* the commands print; the C API (recon/api/api.h) records only */
static _Thread_local int print_off;

int mr_opts_set_print(int on)
{
    const int was = !print_off;
    print_off = !on;
    return was;
}

int mr_opts_parse(const mr_cmd_spec *s, int argc, char **argv, mr_opts_result *res)
{
    memset(res, 0, sizeof *res);
    char **pos = calloc((size_t)argc + 1, sizeof *pos);
    if (!pos)
        return mr_opts_usage(s, "%s", "out of memory");
    res->positional = pos;
    res->owned = pos;
    int only_positional = 0;
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        if (only_positional || a[0] != '-' || a[1] == '\0') {
            pos[res->npositional++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_positional = 1;
            continue;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            if (!print_off)
                mr_opts_help(s, stdout);
            return -1;
        }
        const mr_opt *o;
        const char *inline_val = NULL;
        if (a[1] == '-') {
            const char *name = a + 2;
            const char *eq = strchr(name, '=');
            o = find_long(s, name, eq ? (size_t)(eq - name) : strlen(name));
            if (eq)
                inline_val = eq + 1;
        } else {
            if (a[2] != '\0')
                inline_val = a + 2; /* -ofoo */
            o = find_short(s, a[1]);
        }
        if (!o)
            return mr_opts_usage(s, "unknown option '%s'", a);
        if (o - s->opts < MR_OPTS_MAX)
            res->given[o - s->opts] = 1;
        if (o->type == MR_OPT_FLAG) {
            if (inline_val)
                return mr_opts_usage(s, "option '%s' takes no value", a);
            set_value(s, o, NULL);
            continue;
        }
        const char *val = inline_val;
        if (!val) {
            if (i + 1 >= argc)
                return mr_opts_usage(s, "option '%s' needs a value", a);
            val = argv[++i];
        }
        int rc = set_value(s, o, val);
        if (rc)
            return rc;
    }
    if (res->npositional < s->min_positional)
        return mr_opts_usage(s, "missing argument: expected %s", s->args ? s->args : "arguments");
    if (s->max_positional >= 0 && res->npositional > s->max_positional)
        return mr_opts_usage(s, "unexpected argument '%s'", pos[s->max_positional]);
    return MR_EXIT_OK;
}

int mr_opts_given(const mr_cmd_spec *spec, const mr_opts_result *res, const char *name)
{
    for (int i = 0; i < spec->nopts && i < MR_OPTS_MAX; i++)
        if (strcmp(spec->opts[i].name, name) == 0)
            return res->given[i];
    return 0;
}

void mr_opts_free(mr_opts_result *res)
{
    free(res->owned);
    res->owned = NULL;
    res->positional = NULL;
}

static void print_default(const mr_opt *o, FILE *out)
{
    switch (o->type) {
    /* a numeric default outside the accepted range means "chosen automatically" */
    case MR_OPT_INT:
    case MR_OPT_INT_OR_0: {
        int v = *(int *)o->dest;
        if (!in_range(o, v))
            fprintf(out, " (default: automatic)");
        else
            fprintf(out, " (default %d)", v);
        break;
    }
    case MR_OPT_DOUBLE: {
        double v = *(double *)o->dest;
        if (!in_range(o, v))
            fprintf(out, " (default: automatic)");
        else
            fprintf(out, " (default %g)", v);
        break;
    }
    case MR_OPT_STRING:
    case MR_OPT_CHOICE: {
        const char *v = *(const char **)o->dest;
        if (v)
            fprintf(out, " (default %s)", v);
        break;
    }
    case MR_OPT_DEVICE: {
        char v[MR_DEVICE_TEXT];
        mr_device_format(*(const mr_device_sel *)o->dest, v, sizeof v);
        fprintf(out, " (default %s)", v);
        break;
    }
    case MR_OPT_PRECISION:
        fprintf(out, " (default %s)", mr_precision_name(*(const mr_precision *)o->dest));
        break;
    default:
        break;
    }
}

void mr_opts_help(const mr_cmd_spec *s, FILE *out)
{
    fprintf(out, "Usage: mrirecon %s [OPTIONS]%s%s\n\n%s\n", s->name, s->args ? " " : "", s->args ? s->args : "",
            s->summary);
    if (s->description)
        fprintf(out, "\n%s\n", s->description);
    fprintf(out, "\nOptions:\n");
    for (int i = 0; i < s->nopts; i++) {
        const mr_opt *o = &s->opts[i];
        char lhs[96];
        int n = 0;
        if (o->short_name)
            n = snprintf(lhs, sizeof lhs, "  -%c, --%s", o->short_name, o->name);
        else
            n = snprintf(lhs, sizeof lhs, "      --%s", o->name);
        if (o->metavar && n > 0 && (size_t)n < sizeof lhs)
            snprintf(lhs + n, sizeof lhs - (size_t)n, " %s", o->metavar);
        fprintf(out, "%-30s %s", lhs, o->help);
        if (o->type == MR_OPT_DEVICE)
            fprintf(out, " [auto|cpu|gpu|gpu:N|gpu:N,M,...|gpu:all]");
        if (o->type == MR_OPT_PRECISION)
            fprintf(out, " [auto|sfu|tf32x3|fp16x3|fp64]");
        if (o->type == MR_OPT_CHOICE) {
            fprintf(out, " [");
            for (const char *const *c = o->choices; *c; c++)
                fprintf(out, "%s%s", c == o->choices ? "" : "|", *c);
            fprintf(out, "]");
        }
        if ((o->type == MR_OPT_INT || o->type == MR_OPT_INT_OR_0 || o->type == MR_OPT_DOUBLE) && o->min <= o->max) {
            char range[128];
            format_range(o, range, sizeof range);
            fprintf(out, " %s", range);
        }
        print_default(o, out);
        fputc('\n', out);
    }
    fprintf(out, "%-30s %s\n", "  -h, --help", "show this help and exit");
    /* a command whose description documents its own exit statuses replaces the standard line */
    if (!s->description || !strstr(s->description, "Exit status"))
        fprintf(out, "\nExit status: 0 success, 1 run-time failure, 2 usage error.\n");
}

int mr_opts_value(const mr_opt *o, char *buf, size_t size)
{
    switch (o->type) {
    case MR_OPT_FLAG:
    case MR_OPT_INT:
    case MR_OPT_INT_OR_0:
        return snprintf(buf, size, "%d", *(const int *)o->dest);
    case MR_OPT_DOUBLE:
        return snprintf(buf, size, "%.17g", *(const double *)o->dest);
    case MR_OPT_STRING:
    case MR_OPT_CHOICE: {
        const char *v = *(const char *const *)o->dest;
        return snprintf(buf, size, "%s", v ? v : "-");
    }
    case MR_OPT_DEVICE: {
        char v[MR_DEVICE_TEXT];
        mr_device_format(*(const mr_device_sel *)o->dest, v, sizeof v);
        return snprintf(buf, size, "%s", v);
    }
    case MR_OPT_PRECISION:
        return snprintf(buf, size, "%s", mr_precision_name(*(const mr_precision *)o->dest));
    case MR_OPT_LIST: {
        const mr_opt_list *l = o->dest;
        int n = snprintf(buf, size, "%s", l->count ? "" : "-");
        for (int i = 0; i < l->count && n >= 0; i++) {
            const size_t at = (size_t)n < size ? (size_t)n : size;
            n += snprintf(buf + at, size - at, "%s%s", i ? "," : "", l->items[i]);
        }
        return n;
    }
    }
    return snprintf(buf, size, "?");
}

mr_status mr_opts_fingerprint(const mr_opt *opts, int n, char *buf, size_t size)
{
    size_t at = 0;
    if (size)
        buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        int k = snprintf(buf + at, size - at, "%s%s=", i ? " " : "", opts[i].name);
        if (k >= 0 && (size_t)k < size - at) {
            at += (size_t)k;
            k = mr_opts_value(&opts[i], buf + at, size - at);
        }
        if (k < 0 || (size_t)k >= size - at)
            return mr_error(MR_EINVAL, "the options' fingerprint does not fit in %zu bytes (at --%s)", size,
                            opts[i].name);
        at += (size_t)k;
    }
    return MR_OK;
}

void mr_opts_json(const mr_opt *opts, int n, mr_json_obj *o)
{
    for (int i = 0; i < n; i++) {
        const mr_opt *p = &opts[i];
        switch (p->type) {
        case MR_OPT_FLAG:
            mr_json_bool(o, p->name, *(const int *)p->dest);
            break;
        case MR_OPT_INT:
        case MR_OPT_INT_OR_0:
            mr_json_int(o, p->name, *(const int *)p->dest);
            break;
        case MR_OPT_DOUBLE:
            mr_json_key(o, p->name);
            mr_json_number(o->f, *(const double *)p->dest, 17);
            break;
        case MR_OPT_LIST: {
            const mr_opt_list *l = p->dest;
            mr_json_key(o, p->name);
            if (!l->count)
                fputs("null", o->f);
            for (int k = 0; k < l->count; k++) {
                fputs(k ? ", " : "[", o->f);
                mr_json_string(o->f, l->items[k]);
            }
            if (l->count)
                fputs("]", o->f);
            break;
        }
        case MR_OPT_STRING:
        case MR_OPT_CHOICE:
            if (!*(const char *const *)p->dest) {
                mr_json_key(o, p->name);
                fputs("null", o->f);
                break;
            }
            /* fall through */
        default: {
            char v[4096];
            mr_opts_value(p, v, sizeof v);
            mr_json_str(o, p->name, v);
        }
        }
    }
}

void mr_opts_apply_verbosity(int verbose, int quiet)
{
    mr_log_set_level(quiet ? MR_LOG_WARN : (verbose ? MR_LOG_DEBUG : MR_LOG_INFO));
}

int mr_opts_begin(const mr_cmd_spec *spec, int argc, char **argv, mr_opts_result *res, const int *verbose,
                  const int *quiet)
{
    int rc = mr_opts_parse(spec, argc, argv, res);
    if (rc != MR_EXIT_OK) {
        mr_opts_free(res);
        return rc < 0 ? MR_EXIT_OK : rc;
    }
    mr_opts_apply_verbosity(verbose ? *verbose : 0, quiet ? *quiet : 0);
    return MR_OPTS_GO;
}

int mr_opts_usage(const mr_cmd_spec *spec, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    mr_error(MR_EINVAL, "mrirecon %s: %s", spec->name, msg);
    if (!print_off)
        fprintf(stderr, "mrirecon %s: %s\nTry 'mrirecon %s --help'.\n", spec->name, msg, spec->name);
    return MR_EXIT_USAGE;
}

int mr_opts_parse_list3(const char *text, double v[3])
{
    int n = 0;
    const char *p = text;
    while (p && n < 3) {
        char *end;
        errno = 0;
        double x = strtod(p, &end);
        if (errno || end == p || !isfinite(x))
            return 0;
        v[n++] = x;
        if (*end == '\0')
            return n;
        if (*end != ',')
            return 0;
        p = end + 1;
    }
    return 0;
}

int mr_opts_parse_matrix(const char *text, int64_t v[3])
{
    double x[3];
    const int n = mr_opts_parse_list3(text, x);
    for (int a = 0; a < n; a++) {
        if (x[a] != floor(x[a]) || x[a] < 1 || x[a] > MR_MAX_MATRIX_EDGE)
            return 0;
        v[a] = (int64_t)x[a];
    }
    return n;
}

int mr_opts_check_precision(const mr_cmd_spec *spec, mr_precision precision, mr_device_sel device)
{
    if (precision != MR_PRECISION_AUTO && device.kind == MR_DEVICE_CPU)
        return mr_opts_usage(spec, "--precision %s runs on a GPU; with --device cpu only auto",
                             mr_precision_name(precision));
    return MR_EXIT_OK;
}
