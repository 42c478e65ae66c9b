/* io/json.h: the JSON writer. */
#include "json.h"

#include <math.h>

void mr_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

void mr_json_number(FILE *f, double v, int digits)
{
    if (isfinite(v))
        fprintf(f, "%.*g", digits, v);
    else
        fputs("null", f); /* JSON has no inf/nan */
}

mr_json_obj mr_json_begin(FILE *f)
{
    fputc('{', f);
    mr_json_obj o = {f, 2, 0};
    return o;
}

void mr_json_key(mr_json_obj *o, const char *key)
{
    fprintf(o->f, "%s%*s", o->n++ ? ",\n" : "\n", o->indent, "");
    mr_json_string(o->f, key);
    fputs(": ", o->f);
}

void mr_json_num(mr_json_obj *o, const char *key, double v)
{
    mr_json_key(o, key);
    mr_json_number(o->f, v, 9);
}

void mr_json_int(mr_json_obj *o, const char *key, long long v)
{
    mr_json_key(o, key);
    fprintf(o->f, "%lld", v);
}

void mr_json_str(mr_json_obj *o, const char *key, const char *v)
{
    mr_json_key(o, key);
    mr_json_string(o->f, v);
}

void mr_json_bool(mr_json_obj *o, const char *key, int v)
{
    mr_json_key(o, key);
    fputs(v ? "true" : "false", o->f);
}

void mr_json_array(mr_json_obj *o, const char *key, const double *v, int n)
{
    mr_json_key(o, key);
    fputc('[', o->f);
    for (int i = 0; i < n; i++) {
        if (i)
            fputs(", ", o->f);
        mr_json_number(o->f, v[i], 9);
    }
    fputc(']', o->f);
}

mr_json_obj mr_json_open(mr_json_obj *parent, const char *key)
{
    if (key)
        mr_json_key(parent, key);
    else
        fprintf(parent->f, "%s%*s", parent->n++ ? ",\n" : "\n", parent->indent, "");
    fputc('{', parent->f);
    mr_json_obj o = {parent->f, parent->indent + 2, 0};
    return o;
}

void mr_json_close(mr_json_obj *o)
{
    if (o->n)
        fprintf(o->f, "\n%*s}", o->indent - 2, "");
    else
        fputc('}', o->f);
}
