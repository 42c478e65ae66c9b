#define _XOPEN_SOURCE 700 /* nftw */
#include "fsutil.h"

#include <errno.h>
#include <ftw.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <fcntl.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* 64 bits nobody can guess: the kernel's random bytes, or (without them) the clock, the process and a
 * counter mixed by a 64-bit finaliser (splitmix64), still different for every name of this process. */
static uint64_t unguessable(void)
{
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) == (ssize_t)sizeof r)
        return r;
    static atomic_uint_fast64_t counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    r = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 17) ^
        (atomic_fetch_add(&counter, 1) * 0x9e3779b97f4a7c15ULL);
    r = (r ^ (r >> 30)) * 0xbf58476d1ce4e5b9ULL;
    r = (r ^ (r >> 27)) * 0x94d049bb133111ebULL;
    return r ^ (r >> 31);
}

mr_status mr_tmp_name(const char *final_path, char *tmp, size_t tmp_size)
{
    const char *slash = strrchr(final_path, '/');
    int dirlen = slash ? (int)(slash - final_path + 1) : 0;
    const char *base = slash ? slash + 1 : final_path;
    int n = snprintf(tmp, tmp_size, "%.*s.%s.tmp%ld.%012llx", dirlen, final_path, base, (long)getpid(),
                     (unsigned long long)(unguessable() & 0xffffffffffffULL));
    if (n < 0 || (size_t)n >= tmp_size)
        return mr_error(MR_EINVAL, "%s: path too long", final_path);
    return MR_OK;
}

mr_status mr_create_tmp(const char *final_path, char *tmp, size_t tmp_size, int *fd)
{
    *fd = -1;
    for (int attempt = 0; attempt < 64; attempt++) {
        mr_status st = mr_tmp_name(final_path, tmp, tmp_size);
        if (st != MR_OK)
            return st;
        /* never an existing file, and never through a symbolic link: a name planted by someone else
         * (even a dangling link) is EEXIST, and another name is tried */
        const int f = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (f >= 0) {
            *fd = f;
            return MR_OK;
        }
        if (errno != EEXIST)
            return mr_error(MR_EIO, "%s: cannot create: %s", final_path, strerror(errno));
    }
    return mr_error(MR_EIO, "%s: cannot create a temporary file next to it (64 names taken)", final_path);
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
    int fd;
    mr_status st = mr_create_tmp(final_path, tmp, tmp_size, &fd);
    if (st != MR_OK)
        return st;
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        const int e = errno;
        close(fd);
        remove(tmp);
        return mr_error(MR_EIO, "%s: cannot create: %s", final_path, strerror(e));
    }
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
    int fd;
    mr_status st = mr_create_tmp(final_path, tmp, sizeof tmp, &fd);
    if (st != MR_OK)
        return st;
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

mr_status mr_file_open_private(const char *path, int *fd)
{
    *fd = -1;
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; the descriptor is checked before use */
    const int f = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (f < 0)
        return mr_error(MR_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(f, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(f);
        return mr_error(MR_EIO, "%s: not a regular file", path);
    }
    const int flags = fcntl(f, F_GETFL);
    if (flags >= 0)
        (void)fcntl(f, F_SETFL, flags & ~O_NONBLOCK);
    *fd = f;
    return MR_OK;
}

mr_status mr_mkdir_p(const char *dir)
{
    char created[8];
    return mr_mkdir_p_created(dir, created, sizeof created);
}

mr_status mr_mkdir_p_created(const char *dir, char *created, size_t size)
{
    return mr_mkdir_p_mode(dir, 0777, created, size);
}

mr_status mr_mkdir_p_mode(const char *dir, unsigned mode, char *created, size_t size)
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
            if (mkdir(buf, (mode_t)mode) == 0) {
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

int mr_is_regular_file(const char *path)
{
    struct stat sb;
    return path && stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

int mr_file_starts_with(const char *path, long offset, const void *magic, size_t n)
{
    char buf[64];
    if (n > sizeof buf || !mr_is_regular_file(path))
        return 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    const int ok = fseek(f, offset, SEEK_SET) == 0 && fread(buf, 1, n, f) == n && memcmp(buf, magic, n) == 0;
    fclose(f);
    return ok;
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
