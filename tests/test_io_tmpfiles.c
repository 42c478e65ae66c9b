/* Temporary files in a shared output folder (io/fsutil.h): another user who plants symbolic links at
 * the names a writer used to choose (".<name>.tmp<pid>", and the staged "..<name>.tmp<pid>.tmp<pid>"
 * of `convert`) for the next few hundred process IDs must not get any file opened, followed or
 * truncated through them; every temporary name is new and unguessable; private folders are made
 * 0700 whatever the umask. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/fsutil.h"
#include "io/kspace_h5.h"
#include "io_testutil.h"
#include "testutil.h"

#define VICTIM_TEXT "the victim's content\n"
#define PIDS 400

static int victim_intact(const char *victim)
{
    char buf[64] = {0};
    FILE *f = fopen(victim, "rb");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    return n == strlen(VICTIM_TEXT) && strcmp(buf, VICTIM_TEXT) == 0;
}

/* Links at the names of the old scheme for this process and the next PIDS process IDs. */
static int plant(const char *dir, const char *name, const char *victim)
{
    int n = 0;
    for (long pid = getpid(); pid < (long)getpid() + PIDS; pid++) {
        char link[1200];
        snprintf(link, sizeof link, "%s/.%s.tmp%ld", dir, name, pid);
        n += symlink(victim, link) == 0;
        snprintf(link, sizeof link, "%s/..%s.tmp%ld.tmp%ld", dir, name, pid, pid);
        n += symlink(victim, link) == 0;
    }
    return n;
}

/* Entries of dir whose name contains ".tmp" and that are not symbolic links. */
static int temporaries(const char *dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        char p[1200];
        struct stat sb;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (strstr(e->d_name, ".tmp") && lstat(p, &sb) == 0 && !S_ISLNK(sb.st_mode)) {
            printf("  left behind: %s\n", p);
            n++;
        }
    }
    if (d)
        closedir(d);
    return n;
}

int main(void)
{
    const char *root = test_tmpdir("io_tmpfiles");
    char dir[700], victim[700], path[800];
    snprintf(dir, sizeof dir, "%s/shared", root);
    snprintf(victim, sizeof victim, "%s/victim.txt", root);
    CHECK(mkdir(dir, 0777) == 0 || errno == EEXIST);
    FILE *f = fopen(victim, "wb");
    CHECK(f != NULL);
    if (f) {
        fputs(VICTIM_TEXT, f);
        fclose(f);
    }

    /* 1. names: new at every call, in the destination folder, unguessable part of 12 hex digits */
    char a[900], b[900];
    snprintf(path, sizeof path, "%s/scan.h5", dir);
    CHECK_OK(mr_tmp_name(path, a, sizeof a));
    CHECK_OK(mr_tmp_name(path, b, sizeof b));
    printf("temporary names: %s, %s\n", a, b);
    CHECK(strcmp(a, b) != 0);
    CHECK(strncmp(a, dir, strlen(dir)) == 0 && strstr(a, "/.scan.h5.tmp") != NULL);

    /* 2. planted links at the old names: every writer goes around them */
    const int planted = plant(dir, "scan.h5", victim) + plant(dir, "data.bin", victim);
    printf("planted %d symbolic links to %s\n", planted, victim);
    CHECK(planted == 4 * PIDS);
    const int64_t matrix[3] = {6, 4, 1};
    mr_kspace *ks = NULL;
    CHECK_OK(mr_kspace_create(&ks, matrix, 5, 1));
    CHECK_OK(mr_kspace_write(path, ks));
    mr_kspace_free(ks);
    ks = NULL;
    CHECK_OK(mr_kspace_read(path, &ks));
    CHECK(ks && ks->nsamples == 5);
    mr_kspace_free(ks);
    char bin[800];
    snprintf(bin, sizeof bin, "%s/data.bin", dir);
    CHECK_OK(mr_write_file(bin, "0123456789", 10));
    FILE *tf = NULL;
    char tmp[900];
    CHECK_OK(mr_open_tmp(bin, tmp, sizeof tmp, &tf));
    if (tf) {
        fputs("abc", tf);
        CHECK_OK(mr_close_commit(tf, tmp, bin));
    }
    struct stat sb;
    CHECK(stat(bin, &sb) == 0 && sb.st_size == 3);
    CHECK(victim_intact(victim));
    printf("victim intact after writes through the planted folder: %s\n", victim_intact(victim) ? "yes" : "NO");
    CHECK(temporaries(dir) == 0);

    /* 3. mr_create_tmp: a new regular file, mode 0666 less the umask, never an existing name */
    int fd = -1;
    CHECK_OK(mr_create_tmp(bin, tmp, sizeof tmp, &fd));
    CHECK(fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size == 0);
    if (fd >= 0)
        close(fd);
    unlink(tmp);

    /* 4. a private folder is 0700 whatever the umask; an existing one keeps its mode */
    char priv[800], created[800];
    snprintf(priv, sizeof priv, "%s/a/b/c", root);
    const mode_t old = umask(0);
    CHECK_OK(mr_mkdir_p_mode(priv, 0700, created, sizeof created));
    umask(old);
    CHECK(stat(priv, &sb) == 0 && (sb.st_mode & 07777) == 0700);
    printf("private folder %s: mode %03o (created from %s)\n", priv, (unsigned)(sb.st_mode & 07777), created);
    snprintf(path, sizeof path, "%s/a", root);
    CHECK(stat(path, &sb) == 0 && (sb.st_mode & 07777) == 0700);
    CHECK(strcmp(created, path) == 0);

    if (test_failures == 0)
        mr_remove_tree(root);
    return test_finish("test_io_tmpfiles");
}
