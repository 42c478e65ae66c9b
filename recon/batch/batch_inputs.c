/* mrirecon batch: expanding the command line's inputs into a list of scans with unique names. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../base/log.h"
#include "batch.h"

typedef struct {
    mr_batch_list *l;
    int cap;
    /* identities of the files already listed, to drop repeats */
    dev_t *dev;
    ino_t *ino;
} collector;

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The files a directory contributes: mrirecon/ISMRMRD HDF5 and the k-space half of BART pairs. */
static const char *const scan_suffixes[] = {".h5", ".mrd", "_ksp.cfl", NULL};

static int is_scan_name(const char *name)
{
    for (const char *const *x = scan_suffixes; *x; x++)
        if (ends_with(name, *x))
            return 1;
    return 0;
}

static mr_status add_scan(collector *c, const char *path)
{
    struct stat sb;
    int known = stat(path, &sb) == 0;
    if (known)
        for (int i = 0; i < c->l->count; i++)
            if (c->dev[i] == sb.st_dev && c->ino[i] == sb.st_ino) {
                mr_log(MR_LOG_INFO, "batch: %s is listed twice, kept once", path);
                return MR_OK;
            }
    if (c->l->count == c->cap) {
        int cap = c->cap ? 2 * c->cap : 16;
        mr_batch_scan *s = realloc(c->l->scans, (size_t)cap * sizeof *s);
        if (!s)
            return mr_error(MR_ENOMEM, "batch: out of memory for %d scans", cap);
        c->l->scans = s;
        dev_t *d = realloc(c->dev, (size_t)cap * sizeof *d);
        if (!d)
            return mr_error(MR_ENOMEM, "batch: out of memory for %d scans", cap);
        c->dev = d;
        ino_t *n = realloc(c->ino, (size_t)cap * sizeof *n);
        if (!n)
            return mr_error(MR_ENOMEM, "batch: out of memory for %d scans", cap);
        c->ino = n;
        c->cap = cap;
    }
    mr_batch_scan *s = &c->l->scans[c->l->count];
    memset(s, 0, sizeof *s);
    s->path = dup_str(path);
    if (!s->path)
        return mr_error(MR_ENOMEM, "batch: out of memory");
    /* without an identity (missing file: dev -1) the entry can never equal another one */
    c->dev[c->l->count] = known ? sb.st_dev : (dev_t)-1;
    c->ino[c->l->count] = known ? sb.st_ino : 0;
    c->l->count++;
    return MR_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static mr_status add_dir(collector *c, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return mr_error(MR_EIO, "batch: cannot read directory %s: %s", dir, strerror(errno));
    char **names = NULL;
    int n = 0, cap = 0;
    mr_status st = MR_OK;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || !is_scan_name(e->d_name))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 32;
            char **nn = realloc(names, (size_t)cap * sizeof *nn);
            if (!nn) {
                st = mr_error(MR_ENOMEM, "batch: out of memory listing %s", dir);
                break;
            }
            names = nn;
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        names[n] = malloc(len);
        if (!names[n]) {
            st = mr_error(MR_ENOMEM, "batch: out of memory listing %s", dir);
            break;
        }
        snprintf(names[n], len, "%s%s%s", dir, ends_with(dir, "/") ? "" : "/", e->d_name);
        n++;
    }
    closedir(d);
    if (st == MR_OK) {
        qsort(names, (size_t)n, sizeof *names, cmp_str);
        int files = 0;
        for (int i = 0; i < n && st == MR_OK; i++) {
            struct stat sb;
            if (stat(names[i], &sb) == 0 && S_ISDIR(sb.st_mode))
                continue; /* a folder named *.h5 is not a scan */
            st = add_scan(c, names[i]);
            files++;
        }
        if (st == MR_OK && files == 0)
            mr_log(MR_LOG_WARN, "batch: no scans (*.h5, *.mrd, *_ksp.cfl) in %s", dir);
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return st;
}

static mr_status add_path(collector *c, const char *path)
{
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return add_dir(c, path);
    return add_scan(c, path);
}

static mr_status add_list(collector *c, const char *list)
{
    FILE *f = fopen(list, "r");
    if (!f)
        return mr_error(MR_EIO, "batch: cannot open list file %s: %s", list, strerror(errno));
    const char *slash = strrchr(list, '/');
    int dirlen = slash ? (int)(slash - list) : 0;
    char line[4096], path[8192];
    int lineno = 0;
    mr_status st = MR_OK;
    while (st == MR_OK && fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n') {
            st = mr_error(MR_EINVAL, "batch: %s:%d: line too long", list, lineno);
            break;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *b = line;
        while (*b == ' ' || *b == '\t')
            b++;
        char *e = b + strlen(b);
        while (e > b && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
            *--e = '\0';
        if (!*b)
            continue;
        int n;
        if (b[0] == '/' || !slash)
            n = snprintf(path, sizeof path, "%s", b);
        else
            n = snprintf(path, sizeof path, "%.*s/%s", dirlen, list, b);
        if (n < 0 || (size_t)n >= sizeof path) {
            st = mr_error(MR_EINVAL, "batch: %s:%d: path too long", list, lineno);
            break;
        }
        st = add_path(c, path);
    }
    if (st == MR_OK && ferror(f))
        st = mr_error(MR_EIO, "batch: error reading list file %s", list);
    fclose(f);
    return st;
}

static int name_taken(const mr_batch_list *l, int upto, const char *name)
{
    static const char *const reserved[] = {"summary.csv", "summary.md", "summary.html", NULL};
    for (const char *const *r = reserved; *r; r++)
        if (strcmp(*r, name) == 0)
            return 1;
    for (int i = 0; i < upto; i++)
        if (strcmp(l->scans[i].name, name) == 0)
            return 1;
    return 0;
}

/* basename without ".h5", ".mrd" or "_ksp.cfl"; characters that are awkward in file names or pages become '_'; a
 * leading '.' (hidden, clashes with .partial folders) becomes '_' too. */
static mr_status assign_names(mr_batch_list *l)
{
    for (int i = 0; i < l->count; i++) {
        const char *p = l->scans[i].path;
        const char *slash = strrchr(p, '/');
        const char *base = slash ? slash + 1 : p;
        char stem[200];
        snprintf(stem, sizeof stem, "%s", base);
        size_t n = strlen(stem);
        for (const char *const *x = scan_suffixes; *x; x++)
            if (n > strlen(*x) && ends_with(stem, *x)) {
                stem[n - strlen(*x)] = '\0';
                break;
            }
        for (char *q = stem; *q; q++)
            if ((unsigned char)*q < 32 || *q == '/' || *q == '\\' || *q == '"' || *q == '\'' || *q == '<' ||
                *q == '>' || *q == '&' || *q == ',' || *q == '|' || *q == '`')
                *q = '_';
        if (stem[0] == '\0')
            snprintf(stem, sizeof stem, "_");
        else if (stem[0] == '.')
            stem[0] = '_';
        char name[224];
        snprintf(name, sizeof name, "%s", stem);
        for (int k = 2; name_taken(l, i, name); k++)
            snprintf(name, sizeof name, "%s-%d", stem, k);
        l->scans[i].name = dup_str(name);
        if (!l->scans[i].name)
            return mr_error(MR_ENOMEM, "batch: out of memory");
    }
    return MR_OK;
}

mr_status mr_batch_collect(const char *const *inputs, int ninputs, mr_batch_list *out)
{
    memset(out, 0, sizeof *out);
    collector c = {out, 0, NULL, NULL};
    mr_status st = MR_OK;
    for (int i = 0; i < ninputs && st == MR_OK; i++) {
        const char *in = inputs[i];
        if (in[0] == '@')
            st = add_list(&c, in + 1);
        else if (ends_with(in, ".txt") || ends_with(in, ".lst"))
            st = add_list(&c, in);
        else
            st = add_path(&c, in);
    }
    free(c.dev);
    free(c.ino);
    if (st == MR_OK)
        st = assign_names(out);
    if (st != MR_OK)
        mr_batch_list_free(out);
    return st;
}

void mr_batch_list_free(mr_batch_list *l)
{
    if (!l)
        return;
    for (int i = 0; i < l->count; i++) {
        free(l->scans[i].path);
        free(l->scans[i].name);
        free(l->scans[i].log);
    }
    free(l->scans);
    l->scans = NULL;
    l->count = 0;
}
