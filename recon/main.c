/* mrirecon: command dispatcher. The only place that turns statuses into exit codes is each
 * command's entry point; main only picks the command. */
#include <stdio.h>
#include <string.h>

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
    {"convert", mr_cmd_convert, "convert k-space between mrirecon HDF5, ISMRMRD (input) and BART"},
    {"recon", mr_cmd_recon, "reconstruct a scan (CG least squares, gridding baselines)"},
    {"validate", mr_cmd_validate, "run the book's validation experiment and print the table"},
    {"bench", mr_cmd_bench, "benchmark the Q and F^H d kernels and the whole pipeline"},
    {"batch", mr_cmd_batch, "reconstruct many scans with progress, summaries and resume"},
};

static void usage(FILE *out)
{
    fprintf(out, "Usage: mrirecon COMMAND [OPTIONS] [ARGS]\n\n"
                 "Iterative non-Cartesian MRI reconstruction (exact F^H d and Q, Toeplitz CG, gridding).\n\n"
                 "Commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n'mrirecon COMMAND --help' (or 'mrirecon help COMMAND') describes a command. 'mrirecon --version'\n"
                 "prints the version.\n"
                 "Exit status: 0 success, 1 run-time failure, 2 usage error.\n");
}

int main(int argc, char **argv)
{
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
        printf("mrirecon %s\n", MR_VERSION);
        return MR_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "mrirecon: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return MR_EXIT_USAGE;
}
