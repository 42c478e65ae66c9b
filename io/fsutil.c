#define _XOPEN_SOURCE 700 /* nftw */
#include "fsutil.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

mr_status mr_tmp_name(const char *final_path, char *tmp, size_t tmp_size)
{
    const char *slash = strrchr(final_path, '/');
    int dirlen = slash ? (int)(slash - final_path + 1) : 0;
    const char *base = slash ? slash + 1 : final_path;
    int n = snprintf(tmp, tmp_size, "%.*s.%s.tmp%ld", dirlen, final_path, base, (long)getpid());
    if (n < 0 || (size_t)n >= tmp_size)
        return mr_error(MR_EINVAL, "%s: path too long", final_path);
    return MR_OK;
}

mr_status mr_commit_file(const char *tmp, const char *final_path)
{
    if (rename(tmp, final_path) != 0) {
        int e = errno;
        remove(tmp);
        return mr_error(MR_EIO, "%s: cannot move the finished file into place: %s", final_path, strerror(e));
    }
    return MR_OK;
}

mr_status mr_open_tmp(const char *final_path, char *tmp, size_t tmp_size, FILE **out)
{
    *out = NULL;
    mr_status st = mr_tmp_name(final_path, tmp, tmp_size);
    if (st != MR_OK)
        return st;
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return mr_error(MR_EIO, "%s: cannot create: %s", final_path, strerror(errno));
    *out = f;
    return MR_OK;
}

mr_status mr_close_commit(FILE *f, const char *tmp, const char *final_path)
{
    /* the first failure of: an earlier write (stdio keeps the error flag; errno still holds its
     * reason unless something failed since), fflush, fsync (data the file system accepted lazily
     * may fail only here), fclose */
    int err = ferror(f) ? (errno ? errno : EIO) : 0;
    errno = 0;
    if (!err && fflush(f) != 0)
        err = errno ? errno : EIO;
    if (!err && fsync(fileno(f)) != 0 && errno != EINVAL && errno != EROFS)
        err = errno;
    errno = 0;
    if (fclose(f) != 0 && !err)
        err = errno ? errno : EIO;
    if (err) {
        remove(tmp);
        return mr_error(MR_EIO, "%s: write failed: %s (nothing written)", final_path, strerror(err));
    }
    return mr_commit_file(tmp, final_path);
}

mr_status mr_write_file(const char *final_path, const void *data, size_t size)
{
    char tmp[4096];
    mr_status st = mr_tmp_name(final_path, tmp, sizeof tmp);
    if (st != MR_OK)
        return st;
    const int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        return mr_error(MR_EIO, "%s: cannot create: %s", final_path, strerror(errno));
    int err = 0;
    for (size_t done = 0; done < size && !err;) {
        const ssize_t n = write(fd, (const char *)data + done, size - done);
        if (n > 0)
            done += (size_t)n;
        else if (n < 0 && errno != EINTR)
            err = errno;
        else if (n == 0)
            err = EIO;
    }
    if (!err && fsync(fd) != 0 && errno != EINVAL && errno != EROFS)
        err = errno;
    if (close(fd) != 0 && !err && errno != EINTR)
        err = errno;
    if (err) {
        remove(tmp);
        return mr_error(MR_EIO, "%s: write failed: %s (nothing written)", final_path, strerror(err));
    }
    return mr_commit_file(tmp, final_path);
}

mr_status mr_mkdir_p(const char *dir)
{
    char created[8];
    return mr_mkdir_p_created(dir, created, sizeof created);
}

mr_status mr_mkdir_p_created(const char *dir, char *created, size_t size)
{
    char buf[4096];
    created[0] = '\0';
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof buf)
        return mr_error(MR_EINVAL, "bad directory name '%s'", dir);
    memcpy(buf, dir, n + 1);
    int made = 0;
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == '\0') {
            char c = buf[i];
            buf[i] = '\0';
            if (mkdir(buf, 0777) == 0) {
                if (!made)
                    snprintf(created, size, "%s", buf);
                made = 1;
            } else if (errno != EEXIST) {
                return mr_error(MR_EIO, "%s: cannot create directory: %s", buf, strerror(errno));
            }
            buf[i] = c;
        }
    }
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return mr_error(MR_EIO, "%s: not a directory", dir);
    return MR_OK;
}

mr_status mr_path_join(char *buf, size_t size, const char *dir, const char *name)
{
    int n = snprintf(buf, size, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= size)
        return mr_error(MR_EINVAL, "path too long: %s/%s", dir, name);
    return MR_OK;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int mr_remove_tree(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return errno == ENOENT ? 0 : -1;
    return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
