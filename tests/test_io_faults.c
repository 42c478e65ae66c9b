/* Output faults: every writer (HDF5 k-space and image files, PNG pictures, text files through
 * io/fsutil.h) on a full disk and in a read-only directory fails with a message that names the file
 * and the reason, leaves no temporary file, and leaves the final path as it was (absent, or an
 * earlier file with its content intact): files appear whole or not at all.
 *
 * Full disk: simulated in a child process with a file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored):
 * write(2) then fails with EFBIG at the limit exactly where a full disk fails with ENOSPC, through
 * the same code paths (docs/FORMAT.md records a run on a real full tmpfs as well). Read-only
 * directory: a directory of mode 0555, written by a child that is not root (as root the child drops
 * to uid/gid 65534 first, since root ignores permission bits). */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/fsutil.h"
#include "io/image_h5.h"
#include "io/image_png.h"
#include "io/kspace_h5.h"
#include "phantoms/scan.h"
#include "testutil.h"

static mr_kspace *scan;
static float *image; /* 64 x 64 complex */
static const int64_t matrix[3] = {64, 64, 1};

static mr_status write_kspace(const char *path) { return mr_kspace_write(path, scan); }

static mr_status write_image(const char *path)
{
    mr_image_meta meta;
    memset(&meta, 0, sizeof meta);
    meta.method = "cg";
    return mr_image_h5_write(path, image, matrix, &meta);
}

static mr_status write_png(const char *path)
{
    /* noise does not compress: 256 x 256 x 16 bits stay far above the 2 KiB limit */
    static float pix[256 * 256];
    uint32_t x = 12345;
    for (int i = 0; i < 256 * 256; i++) {
        x = x * 1664525u + 1013904223u;
        pix[i] = (float)(x >> 8) / 16777216.0f;
    }
    return mr_png_write_gray(path, pix, 256, 256, 0.0, 1.0, 16);
}

static mr_status write_text(const char *path)
{
    char tmp[4096];
    FILE *f;
    mr_status st = mr_open_tmp(path, tmp, sizeof tmp, &f);
    if (st != MR_OK)
        return st;
    for (int i = 0; i < 20000; i++)
        fprintf(f, "line %d of a long report\n", i);
    return mr_close_commit(f, tmp, path);
}

static mr_status write_bytes(const char *path)
{
    static char buf[100000];
    memset(buf, 'x', sizeof buf);
    return mr_write_file(path, buf, sizeof buf);
}

typedef struct {
    const char *name, *file;
    mr_status (*write)(const char *path);
} writer;

static const writer writers[] = {
    {"k-space HDF5", "scan.h5", write_kspace}, {"image HDF5", "image.h5", write_image},
    {"PNG", "picture.png", write_png},         {"text (stdio)", "report.md", write_text},
    {"bytes (write(2))", "blob.bin", write_bytes},
};
#define NWRITERS ((int)(sizeof writers / sizeof writers[0]))

/* Run w in a child that applies `fault` first; the child exits 0 when the write failed with a
 * message naming the file and containing `reason`, 2 when it succeeded, 3 on another message,
 * 77 when the fault could not be set up. */
static int run_child(const writer *w, const char *path, const char *reason, int (*fault)(void))
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (!fault())
            _exit(77);
        mr_status st = w->write(path);
        if (st == MR_OK)
            _exit(2);
        const char *msg = mr_last_error();
        printf("  %s: %s\n", w->name, msg);
        fflush(stdout);
        _exit(strstr(msg, path) && strstr(msg, reason) ? 0 : 3);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int limit_file_size(void)
{
    signal(SIGXFSZ, SIG_IGN); /* a write past the limit then fails with EFBIG instead of killing */
    struct rlimit rl = {2048, 2048};
    return setrlimit(RLIMIT_FSIZE, &rl) == 0;
}

static int drop_root(void)
{
    if (geteuid() != 0)
        return 1;
    return setgroups(0, NULL) == 0 && setgid(65534) == 0 && setuid(65534) == 0;
}

/* Temporary files of fsutil's naming (".<name>.tmp<pid>") left in dir; prints them. */
static int leftovers(const char *dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strstr(e->d_name, ".tmp")) {
            printf("  left behind: %s/%s\n", dir, e->d_name);
            n++;
        }
    closedir(d);
    return n;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = calloc(1, 4096);
    if (buf && fread(buf, 1, 4095, f) == 0 && ferror(f)) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

static void check_full_disk(const char *root)
{
    char dir[600], path[700], label[200];
    snprintf(dir, sizeof dir, "%s/full", root);
    mkdir(dir, 0755);
    printf("full disk (file-size limit 2 KiB, EFBIG):\n");
    for (int i = 0; i < NWRITERS; i++) {
        const writer *w = &writers[i];
        snprintf(path, sizeof path, "%s/%s", dir, w->file);
        /* odd writers: an earlier file is in place and must survive whole */
        const int earlier = i % 2;
        if (earlier) {
            FILE *f = fopen(path, "wb");
            if (f) {
                fputs("the earlier file", f);
                fclose(f);
            }
        }
        const int rc = run_child(w, path, strerror(EFBIG), limit_file_size);
        snprintf(label, sizeof label, "%s on a full disk: fails, naming the file and the reason (child exit)", w->name);
        CHECK_LE(label, rc, 0);
        struct stat sb;
        if (earlier) {
            char *text = slurp(path);
            snprintf(label, sizeof label, "%s on a full disk: the earlier file is intact", w->name);
            test_checks++;
            if (!text || strcmp(text, "the earlier file") != 0) {
                test_failures++;
                fprintf(stderr, "FAIL: %s: now '%.40s'\n", label, text ? text : "(missing)");
            }
            free(text);
        } else {
            CHECK(stat(path, &sb) != 0); /* nothing at the final path */
        }
        CHECK(leftovers(dir) == 0);
    }
}

static void check_read_only(const char *root)
{
    char dir[600], path[700], label[200];
    snprintf(dir, sizeof dir, "%s/readonly", root);
    mkdir(dir, 0555);
    chmod(dir, 0555);
    chmod(root, 0755); /* the child (uid 65534 under root) must reach it */
    printf("read-only directory:\n");
    for (int i = 0; i < NWRITERS; i++) {
        const writer *w = &writers[i];
        snprintf(path, sizeof path, "%s/%s", dir, w->file);
        const int rc = run_child(w, path, strerror(EACCES), drop_root);
        if (rc == 77 || rc == 2) { /* could not drop privileges, or permissions do not apply here */
            printf("  %s: read-only directory not enforceable here (child exit %d), not checked\n", w->name, rc);
            continue;
        }
        snprintf(label, sizeof label, "%s in a read-only directory: fails, naming the file and the reason", w->name);
        CHECK_LE(label, rc, 0);
        struct stat sb;
        CHECK(stat(path, &sb) != 0);
        CHECK(leftovers(dir) == 0);
    }
    chmod(dir, 0755);
}

int main(void)
{
    mr_scan_params sp;
    mr_scan_params_default(&sp);
    mr_traj_params_default(&sp.traj, MR_TRAJ_RADIAL2D, matrix);
    CHECK_OK(mr_scan_simulate(&sp, &scan));
    image = calloc(64 * 64 * 2, sizeof(float));
    if (!scan || !image)
        return test_finish("test_io_faults");
    for (int i = 0; i < 64 * 64 * 2; i++)
        image[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
    const char *root = test_tmpdir("io_faults");
    check_full_disk(root);
    check_read_only(root);
    mr_kspace_free(scan);
    free(image);
    if (test_failures == 0) {
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", root);
    }
    return test_finish("test_io_faults");
}
