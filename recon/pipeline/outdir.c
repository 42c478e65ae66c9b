/* The staged output folder of one reconstruction (see outdir.h). */
#include "outdir.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../base/log.h"
#include "../../io/fsutil.h"

#define STAGE_TAG ".mrirecon-partial-"

int mr_outdir_is_output(const char *name)
{
    static const char *const fixed[] = {"report.json", "report.md", "metrics.csv", "convergence.png", "compare.png"};
    static const char *const ext[] = {".h5", ".png", ".nii", ".nii.gz", ".hdr", ".cfl", ".mrd", ".dcm"};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (strcmp(name, fixed[i]) == 0)
            return 1;
    const size_t n = strlen(name);
    if (strncmp(name, "convergence_", 12) == 0 && n > 16 && strcmp(name + n - 4, ".png") == 0)
        return 1; /* the further iterative methods' plots (recon/report/outputs.c) */
    if (strncmp(name, "image_", 6) != 0)
        return 0;
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        const size_t e = strlen(ext[i]);
        if (n > 6 + e && strcmp(name + n - e, ext[i]) == 0)
            return 1;
    }
    return 0;
}

/* The first output file in dir (name into first), 0 when none; -1 (errno set) when dir cannot be read. */
static int find_output(const char *dir, char *first, size_t size)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int found = 0;
    struct dirent *e;
    char path[MR_OUTDIR_PATH + 256];
    while (!found && (e = readdir(d)) != NULL) {
        struct stat sb;
        if (!mr_outdir_is_output(e->d_name) || snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path ||
            lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
            continue;
        snprintf(first, size, "%s", e->d_name);
        found = 1;
    }
    closedir(d);
    return found;
}

/* The deepest existing ancestor of path (path itself excluded) into buf. */
static void existing_ancestor(const char *path, char *buf, size_t size)
{
    snprintf(buf, size, "%s", path);
    for (;;) {
        char *slash = strrchr(buf, '/');
        while (slash && slash > buf && slash[1] == '\0') { /* trailing slashes */
            *slash = '\0';
            slash = strrchr(buf, '/');
        }
        if (!slash) {
            snprintf(buf, size, ".");
            return;
        }
        if (slash == buf) {
            buf[1] = '\0';
            return;
        }
        *slash = '\0';
        struct stat sb;
        if (stat(buf, &sb) == 0)
            return;
    }
}

mr_status mr_outdir_check(const char *outdir, int force)
{
    struct stat sb;
    if (stat(outdir, &sb) != 0) {
        if (errno != ENOENT)
            return mr_error(MR_EIO, "output folder %s: %s", outdir, strerror(errno));
        char anc[MR_OUTDIR_PATH];
        existing_ancestor(outdir, anc, sizeof anc);
        if (access(anc, W_OK | X_OK) != 0)
            return mr_error(MR_EIO, "%s: cannot create directory: %s (in %s)", outdir, strerror(errno), anc);
        return MR_OK;
    }
    if (!S_ISDIR(sb.st_mode))
        return mr_error(MR_EIO, "output folder %s exists and is not a folder", outdir);
    char first[256];
    int found = find_output(outdir, first, sizeof first);
    if (found < 0)
        return mr_error(MR_EIO, "output folder %s cannot be read: %s", outdir, strerror(errno));
    if (!found && access(outdir, W_OK | X_OK) != 0)
        return mr_error(MR_EIO, "output folder %s: cannot write: %s", outdir, strerror(errno));
    if (found && !force)
        return mr_error(MR_EINVAL,
                        "output folder %s holds the outputs of another run (%s, ...): choose another folder, or "
                        "--force to replace them (only the files recon writes are removed)",
                        outdir, first);
    return MR_OK;
}

/* Remove staging folders named <prefix><pid> in dir whose process is gone. */
static void remove_stale(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    const size_t plen = strlen(prefix);
    struct dirent *e;
    char path[MR_OUTDIR_PATH + 256];
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, plen) != 0)
            continue;
        char *end;
        long pid = strtol(e->d_name + plen, &end, 10);
        if (*end || pid <= 0 || (pid != (long)getpid() && (kill((pid_t)pid, 0) == 0 || errno != ESRCH)))
            continue; /* not ours to judge, or its process still runs */
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path && mr_remove_tree(path) == 0)
            mr_log(MR_LOG_DEBUG, "removed the staging folder %s of an earlier run", path);
    }
    closedir(d);
}

/* final without trailing slashes; parent and base name. */
static mr_status split_path(const char *outdir, char *final, char *parent, char *base)
{
    size_t n = strlen(outdir);
    while (n > 1 && outdir[n - 1] == '/')
        n--;
    if (n == 0 || n >= MR_OUTDIR_PATH)
        return mr_error(MR_EINVAL, "bad output folder name '%s'", outdir);
    memcpy(final, outdir, n);
    final[n] = '\0';
    const char *slash = strrchr(final, '/');
    if (!slash) {
        snprintf(parent, MR_OUTDIR_PATH, ".");
        snprintf(base, MR_OUTDIR_PATH, "%s", final);
    } else {
        const size_t pl = slash == final ? 1 : (size_t)(slash - final);
        memcpy(parent, final, pl);
        parent[pl] = '\0';
        snprintf(base, MR_OUTDIR_PATH, "%s", slash + 1);
    }
    if (!strcmp(base, ".") || !strcmp(base, ".."))
        return mr_error(MR_EINVAL, "output folder '%s': give a folder name (it does not exist yet)", outdir);
    return MR_OK;
}

/* rmdir from dir up to (and including) top, while empty. */
static void remove_parents(const char *dir, const char *top)
{
    if (!top[0])
        return;
    char buf[MR_OUTDIR_PATH];
    snprintf(buf, sizeof buf, "%s", dir);
    const size_t tl = strlen(top);
    while (strlen(buf) >= tl && strncmp(buf, top, tl) == 0) {
        if (rmdir(buf) != 0)
            return;
        char *slash = strrchr(buf, '/');
        if (!slash || slash == buf)
            return;
        *slash = '\0';
    }
}

mr_status mr_outdir_begin(mr_outdir *od, const char *outdir, int force)
{
    memset(od, 0, sizeof *od);
    od->force = force;
    char parent[MR_OUTDIR_PATH], base[MR_OUTDIR_PATH];
    mr_status st = split_path(outdir, od->final, parent, base);
    if (st == MR_OK)
        st = mr_outdir_check(od->final, force);
    if (st != MR_OK)
        return st;
    struct stat sb;
    od->fresh = stat(od->final, &sb) != 0;
    char prefix[MR_OUTDIR_PATH + 32];
    int n;
    if (od->fresh) {
        if ((st = mr_mkdir_p_created(parent, od->created, sizeof od->created)) != MR_OK)
            return st;
        snprintf(prefix, sizeof prefix, ".%s%s", base, STAGE_TAG);
        remove_stale(parent, prefix);
        n = snprintf(od->stage, sizeof od->stage, "%s/%s%ld", parent, prefix, (long)getpid());
    } else {
        snprintf(prefix, sizeof prefix, "%s", STAGE_TAG);
        remove_stale(od->final, prefix);
        n = snprintf(od->stage, sizeof od->stage, "%s/%s%ld", od->final, prefix, (long)getpid());
    }
    if (n < 0 || n >= (int)sizeof od->stage) {
        remove_parents(parent, od->created);
        return mr_error(MR_EINVAL, "output folder name too long: %s", outdir);
    }
    mr_remove_tree(od->stage); /* an earlier run of this process that did not finish */
    if (mkdir(od->stage, 0777) != 0) {
        const int e = errno;
        remove_parents(parent, od->created);
        return mr_error(MR_EIO, "%s: cannot create directory: %s (staging folder %s)", od->final, strerror(e),
                        od->stage);
    }
    return MR_OK;
}

mr_status mr_outdir_fail(mr_outdir *od, mr_status st)
{
    /* the user knows OUTDIR, not the staging folder: name the final paths */
    const char *msg = mr_last_error();
    const size_t sl = strlen(od->stage);
    char out[2048];
    size_t o = 0;
    for (const char *p = msg; *p && o + 1 < sizeof out;) {
        if (sl && strncmp(p, od->stage, sl) == 0) {
            o += (size_t)snprintf(out + o, sizeof out - o, "%s", od->final);
            o = o < sizeof out ? o : sizeof out - 1;
            p += sl;
        } else {
            out[o++] = *p++;
        }
    }
    out[o] = '\0';
    if (sl && strstr(msg, od->stage))
        mr_error(st, "%s", out);
    mr_outdir_abort(od);
    return st;
}

void mr_outdir_abort(mr_outdir *od)
{
    if (od->stage[0])
        mr_remove_tree(od->stage);
    char parent[MR_OUTDIR_PATH], final[MR_OUTDIR_PATH], base[MR_OUTDIR_PATH];
    if (od->created[0] && split_path(od->final, final, parent, base) == MR_OK)
        remove_parents(parent, od->created);
    od->stage[0] = '\0';
}

/* Remove the outputs of an earlier run from dir. */
static mr_status clear_outputs(const char *dir)
{
    char name[256], path[MR_OUTDIR_PATH + 256];
    int found;
    while ((found = find_output(dir, name, sizeof name)) > 0) {
        snprintf(path, sizeof path, "%s/%s", dir, name);
        if (unlink(path) != 0)
            return mr_error(MR_EIO, "--force: cannot remove %s: %s", path, strerror(errno));
        mr_log(MR_LOG_DEBUG, "--force: removed %s", path);
    }
    if (found < 0)
        return mr_error(MR_EIO, "output folder %s cannot be read: %s", dir, strerror(errno));
    return MR_OK;
}

/* Move every file of od->stage into od->final; on failure the moved ones are removed again. */
static mr_status move_files(mr_outdir *od)
{
    DIR *d = opendir(od->stage);
    if (!d)
        return mr_error(MR_EIO, "%s: %s", od->stage, strerror(errno));
    mr_status st = MR_OK;
    struct dirent *e;
    char from[MR_OUTDIR_PATH + 256], to[MR_OUTDIR_PATH + 256];
    while (st == MR_OK && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(from, sizeof from, "%s/%s", od->stage, e->d_name);
        snprintf(to, sizeof to, "%s/%s", od->final, e->d_name);
        if (rename(from, to) != 0)
            st = mr_error(MR_EIO, "cannot move %s to %s: %s", from, to, strerror(errno));
    }
    if (st != MR_OK) { /* take back what moved: the run leaves nothing */
        rewinddir(d);
        while ((e = readdir(d)) != NULL)
            if (mr_outdir_is_output(e->d_name) && snprintf(to, sizeof to, "%s/%s", od->final, e->d_name) > 0 &&
                snprintf(from, sizeof from, "%s/%s", od->stage, e->d_name) > 0 && access(from, F_OK) != 0)
                unlink(to);
    }
    closedir(d);
    return st;
}

mr_status mr_outdir_commit(mr_outdir *od)
{
    mr_status st = MR_OK;
    if (od->fresh) {
        if (rename(od->stage, od->final) == 0) {
            od->stage[0] = '\0';
            return MR_OK;
        }
        if (errno != EEXIST && errno != ENOTEMPTY) {
            st = mr_error(MR_EIO, "cannot rename %s to %s: %s", od->stage, od->final, strerror(errno));
            mr_outdir_abort(od);
            return st;
        }
        /* OUTDIR appeared meanwhile: move the files in one by one, as into an existing folder */
        od->created[0] = '\0';
    }
    st = od->force ? clear_outputs(od->final) : mr_outdir_check(od->final, 0);
    if (st == MR_OK)
        st = move_files(od);
    if (st != MR_OK) {
        mr_outdir_abort(od);
        return st;
    }
    if (rmdir(od->stage) != 0)
        mr_log(MR_LOG_WARN, "cannot remove the staging folder %s: %s", od->stage, strerror(errno));
    od->stage[0] = '\0';
    return MR_OK;
}

/* 1 when dir holds only regular files that are reconstruction outputs (and at least one), else 0. */
static int only_outputs(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int ok = 1, any = 0;
    struct dirent *e;
    char path[MR_OUTDIR_PATH + 256];
    while (ok && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        struct stat sb;
        ok = mr_outdir_is_output(e->d_name) &&
             snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path && lstat(path, &sb) == 0 &&
             S_ISREG(sb.st_mode);
        any = 1;
    }
    closedir(d);
    return ok && any;
}

mr_status mr_outdir_prune(const char *outdir, const char *const *keep, int nkeep, int top_files)
{
    DIR *d = opendir(outdir);
    if (!d)
        return mr_error(MR_EIO, "output folder %s cannot be read: %s", outdir, strerror(errno));
    mr_status st = MR_OK;
    struct dirent *e;
    char path[MR_OUTDIR_PATH + 256];
    while (st == MR_OK && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || snprintf(path, sizeof path, "%s/%s", outdir, e->d_name) >= (int)sizeof path)
            continue;
        struct stat sb;
        if (lstat(path, &sb) != 0)
            continue;
        if (S_ISREG(sb.st_mode)) {
            if (!top_files && mr_outdir_is_output(e->d_name) && strcmp(e->d_name, "metrics.csv") != 0) {
                if (unlink(path) != 0)
                    st = mr_error(MR_EIO, "--force: cannot remove %s: %s", path, strerror(errno));
                else
                    mr_log(MR_LOG_INFO, "--force: removed %s (an earlier run's)", path);
            }
            continue;
        }
        int kept = 0;
        for (int i = 0; i < nkeep && !kept; i++)
            kept = strcmp(e->d_name, keep[i]) == 0;
        if (kept || !S_ISDIR(sb.st_mode) || !only_outputs(path))
            continue;
        if ((st = clear_outputs(path)) == MR_OK) {
            if (rmdir(path) != 0)
                st = mr_error(MR_EIO, "--force: cannot remove %s: %s", path, strerror(errno));
            else
                mr_log(MR_LOG_INFO, "--force: removed %s/ (an earlier run's volume)", path);
        }
    }
    closedir(d);
    return st;
}
