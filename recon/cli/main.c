/* mrirecon: command dispatcher. The only place that turns statuses into exit codes is each
 * command's entry point; main only picks the command. */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    {"recon", mr_cmd_recon, "reconstruct a scan (total variation by default; other priors, CG, gridding)"},
    {"validate", mr_cmd_validate, "run the book's validation experiment and print the table"},
    {"bench", mr_cmd_bench, "benchmark the Q and F^H d kernels and the whole pipeline"},
    {"batch", mr_cmd_batch, "reconstruct many scans with progress, summaries and resume"},
    {"cache", mr_cmd_cache, "show or empty the Q cache (list, size, clear)"},
};

static void usage(FILE *out)
{
    fprintf(out, "Usage: mrirecon COMMAND [OPTIONS] [ARGS]\n\n"
                 "Iterative non-Cartesian MRI reconstruction (sparsity priors, exact sums or NUFFT, Toeplitz normal,\n"
                 "SENSE, field maps, gridding baselines).\n\n"
                 "Commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n'mrirecon COMMAND --help' (or 'mrirecon help COMMAND') describes a command. 'mrirecon --version'\n"
                 "prints the version and the CPU kernel levels this machine runs (MR_CPU_KERNEL=avx512|avx2|portable\n"
                 "forces one).\n"
                 "Exit status: 0 success, 1 run-time failure, 2 usage error.\n");
}

/* OpenMP's threads wait for each other at every barrier. libgomp's default (OMP_WAIT_POLICY and
 * GOMP_SPINCOUNT unset) spins 300,000 times before it sleeps, which on a loaded machine turns each barrier
 * into a lost time slice: the 2D 128^2 TV default took 4.8-7.4 s instead of 0.4 s with another process busy
 * on a 2-core machine (AMD EPYC, 2026-11-27; BART 0.5-0.7 s there). A short spin (1,000) keeps the idle
 * machine's speed and sleeps soon enough on a loaded one (docs/RECON.md, "Threads", has the measurements).
 * libgomp reads its settings before main runs, so the spin count is set by running this program again with
 * it, once, unless the user chose a policy (OMP_WAIT_POLICY or GOMP_SPINCOUNT set) or the executable is not
 * ours (a tool such as valgrind runs it). */
#define MR_OPENMP_SPIN "1000"

static void short_openmp_spin(char **argv)
{
    if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT"))
        return;
    char exe[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return;
    exe[n] = '\0';
    const char *base = strrchr(exe, '/');
    base = base ? base + 1 : exe;
    if (strncmp(base, "mrirecon", 8) != 0)
        return;
    if (setenv("GOMP_SPINCOUNT", MR_OPENMP_SPIN, 1) != 0)
        return;
    execv(exe, argv);
    unsetenv("GOMP_SPINCOUNT"); /* exec failed: run on as we are */
}

int main(int argc, char **argv)
{
    short_openmp_spin(argv);
    mr_error_set_spelling("--", '-', ""); /* the library's {name} settings are our options (base/status.h) */
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
        /* third line: the OpenMP wait settings this process runs with (short_openmp_spin) */
        const char *policy = getenv("OMP_WAIT_POLICY"), *spin = getenv("GOMP_SPINCOUNT");
        printf("\nopenmp wait: OMP_WAIT_POLICY %s, GOMP_SPINCOUNT %s\n", policy ? policy : "unset", spin ? spin : "unset");
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
