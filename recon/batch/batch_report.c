/* mrirecon batch: summary.csv, summary.md and summary.html from the scans' states and the
 * metrics.csv and thumbnails in their folders. summary.html is one self-contained page: inline CSS
 * and JS, pictures as data: URIs, nothing fetched from the network. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../io/fsutil.h"
#include "batch.h"

#define MAX_THUMB_BYTES (4 << 20)

/* ---- metrics.csv ---------------------------------------------------------------------------- */

enum { COL_METHOD, COL_TRUTH, COL_MSE, COL_PSNR, COL_SNR, COL_PERR, COL_SECONDS, NCOLS };
static const char *const col_names[NCOLS] = {"method", "truth", "mse", "psnr_db", "snr_db", "percent_error", "seconds"};

typedef struct {
    char f[NCOLS][64];
} metric_row;

typedef struct {
    metric_row *rows;
    int n;
    char problem[128]; /* why metrics are missing, "" when read */
} scan_metrics;

/* Split one CSV line in place at commas (metrics.csv has no quoted fields). */
static int split_csv(char *line, char **fields, int max)
{
    int n = 0;
    char *p = line;
    size_t len = strlen(p);
    while (len > 0 && (p[len - 1] == '\n' || p[len - 1] == '\r'))
        p[--len] = '\0';
    while (n < max) {
        fields[n++] = p;
        char *c = strchr(p, ',');
        if (!c)
            break;
        *c = '\0';
        p = c + 1;
    }
    return n;
}

static void read_metrics(const char *outdir, const char *name, scan_metrics *m)
{
    memset(m, 0, sizeof *m);
    char path[4096];
    int k = snprintf(path, sizeof path, "%s/%s/metrics.csv", outdir, name);
    FILE *f = k > 0 && (size_t)k < sizeof path ? fopen(path, "r") : NULL;
    if (!f) {
        snprintf(m->problem, sizeof m->problem, "no metrics.csv");
        return;
    }
    char line[1024];
    char *fields[32];
    int idx[NCOLS];
    for (int c = 0; c < NCOLS; c++)
        idx[c] = -1;
    if (!fgets(line, sizeof line, f)) {
        snprintf(m->problem, sizeof m->problem, "empty metrics.csv");
        fclose(f);
        return;
    }
    int nh = split_csv(line, fields, 32);
    for (int i = 0; i < nh; i++)
        for (int c = 0; c < NCOLS; c++)
            if (strcmp(fields[i], col_names[c]) == 0)
                idx[c] = i;
    if (idx[COL_METHOD] < 0) {
        snprintf(m->problem, sizeof m->problem, "metrics.csv has no 'method' column");
        fclose(f);
        return;
    }
    int cap = 0;
    while (fgets(line, sizeof line, f)) {
        int nf = split_csv(line, fields, 32);
        if (nf == 1 && fields[0][0] == '\0')
            continue;
        if (m->n == cap) {
            cap = cap ? 2 * cap : 8;
            metric_row *r = realloc(m->rows, (size_t)cap * sizeof *r);
            if (!r)
                break;
            m->rows = r;
        }
        metric_row *r = &m->rows[m->n++];
        for (int c = 0; c < NCOLS; c++)
            snprintf(r->f[c], sizeof r->f[c], "%s", idx[c] >= 0 && idx[c] < nf ? fields[idx[c]] : "");
    }
    fclose(f);
}

/* ---- escaping ------------------------------------------------------------------------------- */

static void csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
    }
    fputc('"', f);
}

/* A log as one CSV field: newlines become the two characters \n and backslashes \\, so every
 * scan stays one line of the file (grep-able); quoted as csv_field does. */
static void csv_log(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        if (*s == '"')
            fputs("\"\"", f);
        else if (*s == '\\')
            fputs("\\\\", f);
        else if (*s == '\n')
            fputs("\\n", f);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static void html_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f);
        }
    }
}

static void md_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|' || *s == '\\' || *s == '`' || *s == '*' || *s == '_' || *s == '<' || *s == '[')
            fputc('\\', f);
        fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
    }
}

static const char *state_text(mr_batch_state s)
{
    switch (s) {
    case MR_BATCH_DONE_NOW: return "ok";
    case MR_BATCH_RESUMED: return "ok";
    case MR_BATCH_FAILED: return "failed";
    case MR_BATCH_INTERRUPTED: return "interrupted";
    default: return "not run";
    }
}

static int state_ok(mr_batch_state s)
{
    return s == MR_BATCH_DONE_NOW || s == MR_BATCH_RESUMED;
}

/* ---- base64 and pictures -------------------------------------------------------------------- */

char *mr_base64(const unsigned char *data, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc((n + 2) / 3 * 4 + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)data[i] << 16;
        if (i + 1 < n)
            v |= (unsigned)data[i + 1] << 8;
        if (i + 2 < n)
            v |= data[i + 2];
        out[o++] = tab[(v >> 18) & 63];
        out[o++] = tab[(v >> 12) & 63];
        out[o++] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? tab[v & 63] : '=';
    }
    out[o] = '\0';
    return out;
}

/* "data:image/png;base64,..." of OUTDIR/<name>/<file>, or NULL when absent. */
static char *png_data_uri(const char *outdir, const char *name, const char *file)
{
    char path[4096];
    int k = snprintf(path, sizeof path, "%s/%s/%s", outdir, name, file);
    if (k < 0 || (size_t)k >= sizeof path)
        return NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    unsigned char *buf = malloc(MAX_THUMB_BYTES);
    size_t n = buf ? fread(buf, 1, MAX_THUMB_BYTES, f) : 0;
    fclose(f);
    char *b64 = n > 8 && n < MAX_THUMB_BYTES && memcmp(buf, "\x89PNG", 4) == 0 ? mr_base64(buf, n) : NULL;
    free(buf);
    if (!b64)
        return NULL;
    static const char prefix[] = "data:image/png;base64,";
    size_t len = strlen(b64);
    char *uri = malloc(sizeof prefix + len);
    if (uri) {
        memcpy(uri, prefix, sizeof prefix - 1);
        memcpy(uri + sizeof prefix - 1, b64, len + 1);
    }
    free(b64);
    return uri;
}

/* ---- the three files ------------------------------------------------------------------------ */

typedef struct {
    char method[64], truth[64];
} pair;

static int find_pair(const pair *p, int n, const char *method, const char *truth)
{
    for (int i = 0; i < n; i++)
        if (strcmp(p[i].method, method) == 0 && strcmp(p[i].truth, truth) == 0)
            return i;
    return -1;
}

/* 1 when pairs[p] is the first pair of its method (one time column per method) */
static int first_of_method(const pair *pairs, int p)
{
    for (int q = 0; q < p; q++)
        if (strcmp(pairs[q].method, pairs[p].method) == 0)
            return 0;
    return 1;
}

/* One item per scan that did not finish: item[0] name item[1] state item[2] path item[3] reason
 * item[4], the text escaped by esc. */
static void write_unfinished(FILE *f, const mr_batch_list *l, void (*esc)(FILE *, const char *),
                             const char *const item[5])
{
    for (int i = 0; i < l->count; i++) {
        const mr_batch_scan *s = &l->scans[i];
        if (state_ok(s->state))
            continue;
        fputs(item[0], f);
        esc(f, s->name);
        fputs(item[1], f);
        fputs(state_text(s->state), f);
        fputs(item[2], f);
        esc(f, s->path);
        fputs(item[3], f);
        esc(f, s->reason);
        fputs(item[4], f);
    }
}

/* OUTDIR/<name> opened under a temporary name (path and tmp hold 4096 bytes). */
static mr_status open_summary(const char *outdir, const char *name, char *path, char *tmp, FILE **f)
{
    mr_status st = mr_path_join(path, 4096, outdir, name);
    return st == MR_OK ? mr_open_tmp(path, tmp, 4096, f) : st;
}

static mr_status write_csv(const char *outdir, const mr_batch_list *l, const scan_metrics *m)
{
    char path[4096], tmp[4096];
    FILE *f;
    mr_status st = open_summary(outdir, "summary.csv", path, tmp, &f);
    if (st != MR_OK)
        return st;
    fprintf(f, "scan,input,status,method,truth,mse,psnr_db,snr_db,percent_error,seconds,scan_seconds,reason,"
               "log_tail\n");
    for (int i = 0; i < l->count; i++) {
        const mr_batch_scan *s = &l->scans[i];
        int rows = state_ok(s->state) ? m[i].n : 0;
        for (int r = 0; r < (rows ? rows : 1); r++) {
            csv_field(f, s->name);
            fputc(',', f);
            csv_field(f, s->path);
            fprintf(f, ",%s,", state_text(s->state));
            for (int c = 0; c < NCOLS; c++) {
                if (rows)
                    csv_field(f, m[i].rows[r].f[c]);
                fputc(',', f);
            }
            fprintf(f, "%.3f,", s->seconds);
            csv_field(f, state_ok(s->state) ? m[i].problem : s->reason);
            fputc(',', f);
            if (s->log)
                csv_log(f, s->log);
            fputc('\n', f);
        }
    }
    return mr_close_commit(f, tmp, path);
}

/* The end of each failed scan's log as a fenced block (a fence longer than any backtick run in it). */
static void write_md_logs(FILE *f, const mr_batch_list *l)
{
    for (int i = 0; i < l->count; i++) {
        const mr_batch_scan *s = &l->scans[i];
        if (!s->log)
            continue;
        int run = 0, longest = 0;
        for (const char *c = s->log; *c; c++) {
            run = *c == '`' ? run + 1 : 0;
            longest = run > longest ? run : longest;
        }
        static const char ticks[] = "````````````````````````````````";
        const int plain = longest + 1 >= (int)sizeof ticks; /* absurd runs: shown as quotes instead */
        const int fence = plain || longest < 3 ? 3 : longest + 1;
        fprintf(f, "\n### ");
        md_text(f, s->name);
        fprintf(f, ": the last %d lines of .logs/", MR_BATCH_LOG_LINES);
        md_text(f, s->name);
        fprintf(f, ".log\n\n%.*s\n", fence, ticks);
        for (const char *c = s->log; *c; c++)
            fputc(plain && *c == '`' ? '\'' : *c, f);
        fprintf(f, "\n%.*s\n", fence, ticks);
    }
}

/* A metric of metrics.csv with `decimals` digits after the point (its text when it is not a number:
 * empty, inf, nan). */
static void md_number(FILE *f, const char *v, int decimals)
{
    char *end = NULL;
    const double x = v[0] ? strtod(v, &end) : 0;
    if (v[0] && end && *end == '\0' && isfinite(x))
        fprintf(f, "%.*f", decimals, x);
    else
        md_text(f, v);
}

static mr_status write_md(const char *outdir, const mr_batch_list *l, const scan_metrics *m, const char *title,
                          const char *when, const int counts[3])
{
    char path[4096], tmp[4096];
    FILE *f;
    mr_status st = open_summary(outdir, "summary.md", path, tmp, &f);
    if (st != MR_OK)
        return st;
    fprintf(f, "# ");
    md_text(f, title);
    fprintf(f, "\n\n%s. %d scans: %d succeeded, %d failed, %d not finished.\n\n", when, l->count, counts[0],
            counts[1], counts[2]);
    fprintf(f, "| Scan | Status | Method | Truth | PSNR (dB) | SNR (dB) | Error (%%) | Method time (s) | Scan time (s) |\n");
    fprintf(f, "|---|---|---|---|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < l->count; i++) {
        const mr_batch_scan *s = &l->scans[i];
        int rows = state_ok(s->state) ? m[i].n : 0;
        for (int r = 0; r < (rows ? rows : 1); r++) {
            fputs("| ", f);
            md_text(f, s->name);
            fprintf(f, " | %s | ", state_text(s->state));
            if (rows) {
                const metric_row *mr = &m[i].rows[r];
                md_text(f, mr->f[COL_METHOD]);
                fputs(" | ", f);
                md_text(f, mr->f[COL_TRUTH]);
                fputs(" | ", f);
                md_number(f, mr->f[COL_PSNR], 2);
                fputs(" | ", f);
                md_number(f, mr->f[COL_SNR], 2);
                fputs(" | ", f);
                md_number(f, mr->f[COL_PERR], 2);
                fputs(" | ", f);
                md_number(f, mr->f[COL_SECONDS], 3);
            } else {
                fputs(" |  |  |  |  | ", f);
            }
            fprintf(f, " | %.2f |\n", s->seconds);
        }
    }
    if (counts[1] + counts[2] > 0) {
        static const char *const item[5] = {"- **", "** (", ", input ", "): ", "\n"};
        fprintf(f, "\n## Scans that did not finish\n\n");
        write_unfinished(f, l, md_text, item);
        write_md_logs(f, l);
    }
    return mr_close_commit(f, tmp, path);
}

static const char html_head[] =
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    "<style>\n"
    "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;background:#fafafa}\n"
    "h1{font-size:1.4em;margin:0 0 .3em}\n"
    "p.meta{color:#555;margin:.2em 0 1em}\n"
    "table{border-collapse:collapse;background:#fff;box-shadow:0 1px 3px rgba(0,0,0,.15)}\n"
    "th,td{border:1px solid #ddd;padding:3px 6px;text-align:right;vertical-align:middle}\n"
    "th{font-size:.9em}\n"
    "div.wrap{overflow-x:auto}\n"
    "td.name,td.status,th.name{text-align:left}\n"
    "th{background:#eef2f7;cursor:pointer;user-select:none;position:sticky;top:0;white-space:nowrap}\n"
    "th:hover{background:#dde6f0}\n"
    "th[aria-sort=ascending]::after{content:\" \\25B2\"}\n"
    "th[aria-sort=descending]::after{content:\" \\25BC\"}\n"
    "th.nosort{cursor:default;text-align:center}\n"
    "tr.failed td{background:#fdecec}\n"
    "tr.interrupted td{background:#fff6e0}\n"
    "td.pic{text-align:center;padding:2px}\n"
    "td.pic img{height:96px;width:auto;image-rendering:pixelated;display:block;margin:auto}\n"
    "span.reason{display:block;color:#a11;font-size:.85em;max-width:28em;white-space:normal}\n"
    "details.log{text-align:left;font-size:.8em;max-width:40em}\n"
    "details.log pre{white-space:pre-wrap;margin:.3em 0;background:#f4f4f4;padding:.3em}\n"
    "td.ok{color:#176317}\n"
    "ul.failed li{margin:.2em 0}\n"
    "</style>\n";

static const char html_script[] =
    "<script>\n"
    "(function(){\n"
    "'use strict';\n"
    "var table=document.getElementById('scans');\n"
    "var heads=table.tHead.rows[0].cells;\n"
    "function key(td){var v=td.getAttribute('data-v');if(v===null)v=td.textContent.trim();\n"
    "  var n=parseFloat(v);return {n:(v===''||isNaN(n))?null:n,s:v.toLowerCase(),e:v===''};}\n"
    "function cmp(a,b,dir){if(a.e!==b.e)return a.e?1:-1;\n"
    "  if(a.n!==null&&b.n!==null)return (a.n-b.n)*dir;\n"
    "  if(a.n!==null)return -1;if(b.n!==null)return 1;\n"
    "  return a.s<b.s?-dir:(a.s>b.s?dir:0);}\n"
    "function sortBy(c,dir){var body=table.tBodies[0];\n"
    "  var rows=Array.prototype.slice.call(body.rows);\n"
    "  rows.forEach(function(r,i){r._i=i;});\n"
    "  rows.sort(function(x,y){return cmp(key(x.cells[c]),key(y.cells[c]),dir)||x._i-y._i;});\n"
    "  rows.forEach(function(r){body.appendChild(r);});\n"
    "  for(var i=0;i<heads.length;i++)heads[i].removeAttribute('aria-sort');\n"
    "  heads[c].setAttribute('aria-sort',dir>0?'ascending':'descending');}\n"
    "Array.prototype.forEach.call(heads,function(th,c){\n"
    "  if(th.classList.contains('nosort'))return;\n"
    "  th.title='click to sort';\n"
    "  th.addEventListener('click',function(){sortBy(c,th.getAttribute('aria-sort')==='ascending'?-1:1);});});\n"
    /* #selftest: sort by every sortable column both ways and check the order, for the page test */
    "if(location.hash==='#selftest'){var ok=true;\n"
    "  Array.prototype.forEach.call(heads,function(th,c){if(th.classList.contains('nosort'))return;\n"
    "    [1,-1].forEach(function(dir){sortBy(c,dir);var rows=table.tBodies[0].rows;\n"
    "      for(var i=1;i<rows.length;i++)if(cmp(key(rows[i-1].cells[c]),key(rows[i].cells[c]),dir)>0)ok=false;});});\n"
    "  sortBy(0,1);document.body.setAttribute('data-selftest',ok?'pass':'fail');}\n"
    "document.body.setAttribute('data-ok','1');\n"
    "})();\n"
    "</script>\n";

/* A numeric cell: the exact value sorts (data-v) and shows as a tooltip; `decimals` are shown. */
static void html_num(FILE *f, const char *v, int decimals)
{
    char *end = NULL;
    double x = v[0] ? strtod(v, &end) : 0;
    fputs("<td data-v=\"", f);
    html_text(f, v);
    if (v[0] && end && *end == '\0') {
        fputs("\" title=\"", f);
        html_text(f, v);
        fprintf(f, "\">%.*f</td>", decimals, x);
    } else {
        fputs("\">", f);
        html_text(f, v);
        fputs("</td>", f);
    }
}

static mr_status write_html(const char *outdir, const mr_batch_list *l, const scan_metrics *m, const char *title,
                            const char *when, const int counts[3])
{
    /* columns: every (method, truth) pair and every method, in order of first appearance */
    pair *pairs = NULL;
    int npairs = 0, cap = 0;
    for (int i = 0; i < l->count; i++) {
        if (!state_ok(l->scans[i].state))
            continue;
        for (int r = 0; r < m[i].n; r++) {
            const metric_row *mr = &m[i].rows[r];
            if (find_pair(pairs, npairs, mr->f[COL_METHOD], mr->f[COL_TRUTH]) >= 0)
                continue;
            if (npairs == cap) {
                cap = cap ? 2 * cap : 8;
                pair *p = realloc(pairs, (size_t)cap * sizeof *p);
                if (!p) {
                    free(pairs);
                    return mr_error(MR_ENOMEM, "batch: out of memory writing summary.html");
                }
                pairs = p;
            }
            snprintf(pairs[npairs].method, sizeof pairs[npairs].method, "%s", mr->f[COL_METHOD]);
            snprintf(pairs[npairs].truth, sizeof pairs[npairs].truth, "%s", mr->f[COL_TRUTH]);
            npairs++;
        }
    }
    char path[4096], tmp[4096];
    FILE *f;
    mr_status st = open_summary(outdir, "summary.html", path, tmp, &f);
    if (st != MR_OK) {
        free(pairs);
        return st;
    }
    fputs(html_head, f);
    fputs("<title>", f);
    html_text(f, title);
    fputs("</title>\n</head>\n<body>\n<h1>", f);
    html_text(f, title);
    fprintf(f, "</h1>\n<p class=\"meta\">%s. %d scans: %d succeeded, %d failed, %d not finished. "
               "Click a column header to sort. Pictures: magnitude of the reconstruction and |I &minus; I<sub>0</sub>| "
               "against the truth (window 0&ndash;25%% of the truth's maximum).</p>\n",
            when, l->count, counts[0], counts[1], counts[2]);
    fputs("<div class=\"wrap\"><table id=\"scans\">\n<thead><tr><th class=\"name\">Scan</th><th class=\"name\">Status</th>"
          "<th class=\"nosort\">Image</th><th class=\"nosort\">Error</th><th>Scan time (s)</th>",
          f);
    for (int p = 0; p < npairs; p++) {
        const char *t = pairs[p].truth[0] ? pairs[p].truth : "no truth";
        static const char *const what[3] = {"PSNR (dB)", "SNR (dB)", "Error (%)"};
        for (int k = 0; k < 3; k++) {
            fputs("<th>", f);
            html_text(f, pairs[p].method);
            fputs(" / ", f);
            html_text(f, t);
            fprintf(f, "<br>%s</th>", what[k]);
        }
    }
    for (int p = 0; p < npairs; p++)
        if (first_of_method(pairs, p)) {
            fputs("<th>", f);
            html_text(f, pairs[p].method);
            fputs("<br>time (s)</th>", f);
        }
    fputs("</tr></thead>\n<tbody>\n", f);
    for (int i = 0; i < l->count; i++) {
        const mr_batch_scan *s = &l->scans[i];
        int ok = state_ok(s->state);
        fprintf(f, "<tr class=\"scan %s\"><td class=\"name\" title=\"", ok ? "ok" : state_text(s->state));
        html_text(f, s->path);
        fputs("\">", f);
        html_text(f, s->name);
        fprintf(f, "</td><td class=\"status%s\">%s", ok ? " ok" : "", state_text(s->state));
        if (!ok) {
            fputs("<span class=\"reason\">", f);
            html_text(f, s->reason);
            fputs("</span>", f);
            if (s->log) {
                fprintf(f, "<details class=\"log\"><summary>log (last %d lines)</summary><pre>", MR_BATCH_LOG_LINES);
                html_text(f, s->log);
                fputs("</pre></details>", f);
            }
        } else if (m[i].problem[0]) {
            fputs("<span class=\"reason\">", f);
            html_text(f, m[i].problem);
            fputs("</span>", f);
        }
        fputs("</td>", f);
        const char *pics[2] = {MR_BATCH_THUMB, MR_BATCH_ERRMAP};
        const char *alts[2] = {"reconstruction", "error map"};
        for (int k = 0; k < 2; k++) {
            char *uri = ok ? png_data_uri(outdir, s->name, pics[k]) : NULL;
            if (uri) {
                fprintf(f, "<td class=\"pic\"><img alt=\"%s of ", alts[k]);
                html_text(f, s->name);
                fprintf(f, "\" src=\"%s\"></td>", uri);
            } else {
                fputs("<td class=\"pic\">&mdash;</td>", f);
            }
            free(uri);
        }
        fprintf(f, "<td data-v=\"%.3f\">%.2f</td>", s->seconds, s->seconds);
        for (int p = 0; p < npairs; p++) {
            const metric_row *mr = NULL;
            for (int r = 0; ok && r < m[i].n && !mr; r++)
                if (strcmp(m[i].rows[r].f[COL_METHOD], pairs[p].method) == 0 &&
                    strcmp(m[i].rows[r].f[COL_TRUTH], pairs[p].truth) == 0)
                    mr = &m[i].rows[r];
            html_num(f, mr ? mr->f[COL_PSNR] : "", 2);
            html_num(f, mr ? mr->f[COL_SNR] : "", 2);
            html_num(f, mr ? mr->f[COL_PERR] : "", 2);
        }
        for (int p = 0; p < npairs; p++) {
            if (!first_of_method(pairs, p))
                continue;
            const metric_row *mr = NULL;
            for (int r = 0; ok && r < m[i].n && !mr; r++)
                if (strcmp(m[i].rows[r].f[COL_METHOD], pairs[p].method) == 0)
                    mr = &m[i].rows[r];
            html_num(f, mr ? mr->f[COL_SECONDS] : "", 3);
        }
        fputs("</tr>\n", f);
    }
    fputs("</tbody>\n</table></div>\n", f);
    if (counts[1] + counts[2] > 0) {
        static const char *const item[5] = {"<li><b>", "</b> (", ", <code>", "</code>): ", "</li>\n"};
        fputs("<h2>Scans that did not finish</h2>\n<ul class=\"failed\">\n", f);
        write_unfinished(f, l, html_text, item);
        fputs("</ul>\n", f);
    }
    fputs(html_script, f);
    fputs("</body>\n</html>\n", f);
    free(pairs);
    return mr_close_commit(f, tmp, path);
}

mr_status mr_batch_write_summary(const char *outdir, const mr_batch_list *l, const char *title)
{
    scan_metrics *m = calloc((size_t)(l->count ? l->count : 1), sizeof *m);
    if (!m)
        return mr_error(MR_ENOMEM, "batch: out of memory writing the summary");
    int counts[3] = {0, 0, 0}; /* ok, failed, not finished */
    for (int i = 0; i < l->count; i++) {
        mr_batch_state s = l->scans[i].state;
        counts[state_ok(s) ? 0 : (s == MR_BATCH_FAILED ? 1 : 2)]++;
        if (state_ok(s))
            read_metrics(outdir, l->scans[i].name, &m[i]);
    }
    char when[64];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "Written %Y-%m-%d %H:%M:%S UTC", &tm);
    mr_status st = write_csv(outdir, l, m);
    if (st == MR_OK)
        st = write_md(outdir, l, m, title, when, counts);
    if (st == MR_OK)
        st = write_html(outdir, l, m, title, when, counts);
    for (int i = 0; i < l->count; i++)
        free(m[i].rows);
    free(m);
    return st;
}
