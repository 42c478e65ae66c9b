/* mrirecon cache [list|size|clear] [--dir DIR]: what the Q cache (io/q_cache.h) holds, and emptying it.
 * list: one line per entry (size, age, name) and the total; size: the total alone; clear: removes every
 * entry, lock and temporary file of the cache (mr_q_cache_clear: the files it makes, nothing else). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../../io/fsutil.h"
#include "../../io/q_cache.h"
#include "commands.h"
#include "opts.h"

/* q-<32 hex digits>.mrq: an entry */
static int entry_name(const char *name)
{
    if (strlen(name) != 2 + 32 + 4 || strncmp(name, "q-", 2) != 0 || strcmp(name + 34, ".mrq") != 0)
        return 0;
    for (int i = 2; i < 34; i++)
        if (!strchr("0123456789abcdef", name[i]))
            return 0;
    return 1;
}

int mr_cmd_cache(int argc, char **argv)
{
    const char *dir = NULL;
    int verbose = 0, quiet = 0;
    const mr_opt opts[] = {
        {"dir", 0, MR_OPT_STRING, &dir, "DIR", "the cache directory (default: as recon finds it)", NULL, 0, -1},
        {"verbose", 'v', MR_OPT_FLAG, &verbose, NULL, "more diagnostics on stderr", NULL, 0, -1},
        {"quiet", 'q', MR_OPT_FLAG, &quiet, NULL, "only warnings and errors on stderr", NULL, 0, -1},
    };
    const mr_cmd_spec spec = {
        "cache",
        "[list|size|clear]",
        "Show or empty the Q cache.",
        "CG keeps the Toeplitz kernel Q of each trajectory on disk so that later scans with the same\n"
        "trajectory skip computing it (docs/RECON.md, The Q cache). Where: --dir, else $MRIRECON_CACHE_DIR/q,\n"
        "else $XDG_CACHE_HOME/mrirecon/q, else ~/.cache/mrirecon/q. Size: at most 4 GiB (or\n"
        "MRIRECON_Q_CACHE_MAX_MB), least recently used entries removed first. list (default): every entry\n"
        "with its size and age, then the total; size: the total in bytes; clear: remove every entry, lock and\n"
        "temporary file of the cache (nothing else in the folder).",
        opts,
        (int)(sizeof opts / sizeof opts[0]),
        0,
        1,
    };
    mr_opts_result res;
    int code = mr_opts_begin(&spec, argc, argv, &res, &verbose, &quiet);
    if (code != MR_OPTS_GO)
        return code;
    const char *what = res.npositional ? res.positional[0] : "list";
    mr_opts_free(&res);
    if (strcmp(what, "list") && strcmp(what, "size") && strcmp(what, "clear"))
        return mr_opts_usage(&spec, "'%s' is not list, size or clear", what);
    char buf[4096];
    if (!dir) {
        if (mr_q_cache_default_dir(buf, sizeof buf) != MR_OK) {
            fprintf(stderr, "mrirecon cache: %s\n", mr_last_error());
            return MR_EXIT_FAILURE;
        }
        if (!buf[0]) {
            printf("the Q cache is off (MRIRECON_CACHE_DIR=off)\n");
            return MR_EXIT_OK;
        }
        dir = buf;
    }
    if (!strcmp(what, "clear")) {
        const int64_t n = mr_q_cache_clear(dir);
        printf("%s: removed %lld file(s)\n", dir, (long long)n);
        return MR_EXIT_OK;
    }
    DIR *d = opendir(dir);
    int64_t total = 0, count = 0;
    const time_t now = time(NULL);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char path[4400];
        struct stat sb;
        if (!entry_name(e->d_name) || mr_path_join(path, sizeof path, dir, e->d_name) != MR_OK ||
            stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
            continue;
        total += (int64_t)sb.st_size;
        count++;
        if (!strcmp(what, "list"))
            printf("%10.1f MiB  %8.1f h ago  %s\n", (double)sb.st_size / 1048576.0, difftime(now, sb.st_mtime) / 3600.0,
                   e->d_name);
    }
    if (d)
        closedir(d);
    const char *limit = getenv("MRIRECON_Q_CACHE_MAX_MB");
    if (!strcmp(what, "size"))
        printf("%lld\n", (long long)total);
    else
        printf("%s: %lld entr%s, %.1f MiB (limit %s MB%s)\n", dir, (long long)count, count == 1 ? "y" : "ies",
               (double)total / 1048576.0, limit && limit[0] ? limit : "4096",
               limit && limit[0] ? ", MRIRECON_Q_CACHE_MAX_MB" : ", the default");
    return fflush(stdout) == 0 && !ferror(stdout) ? MR_EXIT_OK : MR_EXIT_FAILURE;
}
