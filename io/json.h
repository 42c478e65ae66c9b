/* One JSON writer for every JSON file and stream mrirecon writes (report.json: recon/report/report.c;
 * `mrirecon info --json`: recon/cli/cmd_info.c; `mrirecon bench --json`: recon/bench/bench.c), so that
 * every string is escaped the same way:
 *
 *   strings   '"' and '\' as \" and \\, the control characters U+0000..U+001F as \u00XX, every other
 *             byte as it is (UTF-8 passes through; the writer does not check it); NULL writes "";
 *   numbers   printf's %.*g with the caller's significant digits; NaN and the infinities as null (JSON
 *             has none).
 *
 * An object (mr_json_obj) writes its fields one per line, indented: {\n  "a": 1,\n  "b": {...}\n}.
 * Output goes to a stdio stream; the caller checks the stream for errors (ferror, fclose). */
#ifndef MR_JSON_H
#define MR_JSON_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

void mr_json_string(FILE *f, const char *s);
void mr_json_number(FILE *f, double v, int digits);

/* An object being written: fields are separated and indented by the functions below. */
typedef struct {
    FILE *f;
    int indent; /* of the fields */
    int n;      /* fields written so far */
} mr_json_obj;

/* The top-level object: writes '{'; fields indented by 2. */
mr_json_obj mr_json_begin(FILE *f);
/* The separator, the indentation and "key": of the next field (its value is the caller's to write). */
void mr_json_key(mr_json_obj *o, const char *key);
void mr_json_num(mr_json_obj *o, const char *key, double v); /* %.9g, null when not finite */
void mr_json_int(mr_json_obj *o, const char *key, long long v);
void mr_json_str(mr_json_obj *o, const char *key, const char *v);
void mr_json_bool(mr_json_obj *o, const char *key, int v);
void mr_json_array(mr_json_obj *o, const char *key, const double *v, int n); /* [a, b, ...] of mr_json_num's */
/* A nested object as field key of parent (key NULL: the next element of an array the caller opened). */
mr_json_obj mr_json_open(mr_json_obj *parent, const char *key);
/* Close an object: '}' on its own line after fields, "{}" when it has none. */
void mr_json_close(mr_json_obj *o);

#ifdef __cplusplus
}
#endif
#endif
