/* Replays files through a fuzz target without libFuzzer (fuzz_target.h):
 *   fuzz_<reader>_replay [--min N] PATH... [--isolated PATH...]
 * PATH is a file or a directory (its plain files, one level). Paths after --isolated go through
 * the public reader with its child process (inputs that crash libhdf5 in-process). A file named ok-* must be accepted
 * and bad-* refused (the seed writers name them so); anything else may go either way but must not
 * crash. Exit 0 when every expectation held and at least N files were read, else 1. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/child.h"
#include "base/status.h"
#include "fuzz_target.h"
#include "io/h5util.h"

#define MR_FUZZ_MAX_INPUT (64 << 20)

static int nfiles, naccepted, nwrong, isolated;

static int replay_bytes(const char *path);

static void replay(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    int want = strncmp(base, "ok-", 3) == 0 ? 1 : strncmp(base, "bad-", 4) == 0 ? 0 : -1;
    int accepted = isolated ? mr_fuzz_file(path) : replay_bytes(path);
    if (accepted < 0)
        return;
    nfiles++;
    naccepted += accepted;
    if (want >= 0 && accepted != want) {
        nwrong++;
        fprintf(stderr, "%s: %s, expected %s%s%s\n", path, accepted ? "accepted" : "refused",
                want ? "acceptance" : "refusal", accepted ? "" : ": ", accepted ? "" : mr_last_error());
    } else if (getenv("MR_FUZZ_VERBOSE")) {
        printf("%s%s: %s%s%s\n", isolated ? "(isolated) " : "", base, accepted ? "accepted" : "refused",
               accepted ? "" : ": ", accepted ? "" : mr_last_error());
    }
}

/* The target on the bytes of path: 1 accepted, 0 refused, -1 unreadable (counted as wrong). */
static int replay_bytes(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: cannot open\n", path);
        nwrong++;
        return -1;
    }
    unsigned char *buf = malloc(MR_FUZZ_MAX_INPUT);
    size_t n = buf ? fread(buf, 1, MR_FUZZ_MAX_INPUT, f) : 0;
    fclose(f);
    if (!buf) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    /* an exact-size copy, so that ASan sees a read past the end of the input */
    unsigned char *data = malloc(n ? n : 1);
    memcpy(data, buf, n);
    free(buf);
    /* the memory of a reading child (io/h5util.h mr_h5_read_in_child): what libhdf5 is asked for by a
       size in a damaged file fails here as it would there (a variable-length length of 0x7fffffff made it
       take 8 GiB), instead of taking the machine's memory */
    mr_memory_budget(MR_H5_CHILD_MEMORY + 2 * (uint64_t)n);
    int accepted = mr_fuzz_one(data, n);
    mr_memory_budget(0);
    free(data);
    return accepted;
}

int main(int argc, char **argv)
{
    long min = 0;
    int i = 1;
    if (argc > 2 && strcmp(argv[1], "--min") == 0) {
        min = strtol(argv[2], NULL, 10);
        i = 3;
    }
    if (i >= argc) {
        fprintf(stderr, "usage: %s [--min N] FILE-OR-DIRECTORY...\n", argv[0]);
        return 2;
    }
    for (; i < argc; i++) {
        struct stat sb;
        if (strcmp(argv[i], "--isolated") == 0) {
            isolated = 1;
            continue;
        }
        if (stat(argv[i], &sb) != 0) {
            fprintf(stderr, "%s: does not exist\n", argv[i]);
            nwrong++;
            continue;
        }
        if (!S_ISDIR(sb.st_mode)) {
            replay(argv[i]);
            continue;
        }
        DIR *d = opendir(argv[i]);
        struct dirent *e;
        char p[4096];
        while (d && (e = readdir(d)) != NULL) {
            snprintf(p, sizeof p, "%s/%s", argv[i], e->d_name);
            if (e->d_name[0] != '.' && stat(p, &sb) == 0 && S_ISREG(sb.st_mode))
                replay(p);
        }
        if (d)
            closedir(d);
    }
    printf("%s: %d files replayed, %d accepted, %d refused, %d not as expected\n", argv[0], nfiles, naccepted,
           nfiles - naccepted, nwrong);
    if (nfiles < min) {
        fprintf(stderr, "%s: only %d files, at least %ld expected (was the seed corpus written?)\n", argv[0], nfiles,
                min);
        return 1;
    }
    return nwrong ? 1 : 0;
}
