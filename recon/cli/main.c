/* mrirecon: command dispatcher. The only place that turns statuses into exit codes is each
 * command's entry point; main only picks the command. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "../../base/cpu.h"
#include "../../base/status.h"
#include "commands.h"
#include "opts.h"

#ifndef MR_VERSION
#define MR_VERSION "dev"
#endif

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"phantom", mr_cmd_phantom, "write a simulated scan (analytic Shepp-Logan k-space) to an HDF5 file"},
    {"info", mr_cmd_info, "print what a k-space file holds (mrirecon, ISMRMRD or BART)"},
    {"convert", mr_cmd_convert, "convert k-space (mrirecon HDF5, ISMRMRD, BART) and images (to every format)"},
    {"recon", mr_cmd_recon, "reconstruct a scan (CG least squares, gridding baselines)"},
    {"validate", mr_cmd_validate, "run the book's validation experiment and print the table"},
    {"bench", mr_cmd_bench, "benchmark the Q and F^H d kernels and the whole pipeline"},
    {"batch", mr_cmd_batch, "reconstruct many scans with progress, summaries and resume"},
    {"cache", mr_cmd_cache, "show or empty the Q cache (list, size, clear)"},
};

static void usage(FILE *out)
{
    fprintf(out, "Usage: mrirecon COMMAND [OPTIONS] [ARGS]\n\n"
                 "Iterative non-Cartesian MRI reconstruction (exact F^H d and Q, Toeplitz CG, gridding).\n\n"
                 "Commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n'mrirecon COMMAND --help' (or 'mrirecon help COMMAND') describes a command. 'mrirecon --version'\n"
                 "prints the version and the CPU kernel levels this machine runs (MR_CPU_KERNEL=avx512|avx2|portable\n"
                 "forces one).\n"
                 "Exit status: 0 success, 1 run-time failure, 2 usage error.\n");
}

int main(int argc, char **argv)
{
    /* a file-size limit (ulimit -f) makes writes fail with EFBIG, reported like a full disk,
     * instead of killing the process with SIGXFSZ */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) {
        usage(stderr);
        return MR_EXIT_USAGE;
    }
    if (strcmp(argv[1], "help") == 0 && argc >= 3) { /* "mrirecon help recon" = "mrirecon recon --help" */
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
            if (strcmp(argv[2], commands[i].name) == 0) {
                char *help_argv[] = {argv[2], "--help", NULL};
                return commands[i].run(2, help_argv);
            }
        fprintf(stderr, "mrirecon help: unknown command '%s'\n\n", argv[2]);
        usage(stderr);
        return MR_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return MR_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        /* second line: the CPU kernel levels this machine runs, best first (.ci/run reads it) */
        printf("mrirecon %s\ncpu kernels:", MR_VERSION);
        for (int l = MR_CPU_LEVELS - 1; l >= 0; l--)
            if (mr_cpu_supported() & (1u << l))
                printf(" %s", mr_cpu_level_name((mr_cpu_level)l));
        printf("\n");
        return MR_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0) {
            /* an unusable MR_CPU_KERNEL is refused before any work (--help still works) */
            int help = 0;
            for (int a = 2; a < argc; a++)
                help |= !strcmp(argv[a], "--help") || !strcmp(argv[a], "-h");
            mr_cpu_level level;
            if (!help && mr_cpu_level_get(&level) != MR_OK) {
                fprintf(stderr, "mrirecon: error: %s\n", mr_last_error());
                return MR_EXIT_FAILURE;
            }
            return commands[i].run(argc - 1, argv + 1);
        }
    fprintf(stderr, "mrirecon: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return MR_EXIT_USAGE;
}
