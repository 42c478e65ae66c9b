/* Helpers shared by the I/O tests (tests/test_io_*.c): scratch files. Header-only because each
 * test is built from its own source plus testutil.c. */
#ifndef MR_IO_TESTUTIL_H
#define MR_IO_TESTUTIL_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Remove the plain files of a scratch directory (one level) and the directory itself. */
static inline void io_test_rmdir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char p[2048];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (remove(p) != 0)
            rmdir(p);
    }
    closedir(d);
    rmdir(dir);
}

/* 1 when a path exists. */
static inline int io_test_exists(const char *path) { return access(path, F_OK) == 0; }

/* Number of entries of dir whose name starts with prefix (to find stray temporary files). */
static inline int io_test_count_prefix(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
            n++;
    closedir(d);
    return n;
}

#endif
