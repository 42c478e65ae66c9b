/* Declarative command-line options: each command describes its options in one table, and the same
 * table drives parsing, validation and --help. Exit-code convention of every command:
 * 0 success (and --help), 1 run-time failure, 2 usage error. */
#ifndef MR_OPTS_H
#define MR_OPTS_H

#include <stdint.h>
#include <stdio.h>

#include "../../base/status.h"
#include "../../io/json.h"
#include "../../solver/backend.h"
#include "../../solver/linop.h"

#define MR_EXIT_OK 0
#define MR_EXIT_FAILURE 1
#define MR_EXIT_USAGE 2

typedef enum {
    MR_OPT_FLAG,   /* int*: set to 1 when present */
    MR_OPT_INT,    /* int*, range-checked against [min, max] */
    MR_OPT_INT_OR_0, /* int*: 0 (a documented "0 = automatic" value) or [min, max]; --help: {0, min..max} */
    MR_OPT_DOUBLE, /* double*, range-checked against [min, max] */
    MR_OPT_STRING, /* const char**: points into argv */
    MR_OPT_CHOICE, /* const char**: must be one of `choices` (NULL-terminated) */
    MR_OPT_LIST,   /* mr_opt_list*: repeatable string option */
    MR_OPT_DEVICE, /* mr_device_sel*: auto, cpu, gpu, gpu:N, gpu:N,M,... or gpu:all (solver/backend.h) */
    MR_OPT_PRECISION /* mr_precision*: auto, sfu, tf32x3, fp16x3 or fp64 (solver/linop.h) */
} mr_opt_type;

/* Help texts of options several commands share (one wording). */
#define MR_OPT_HELP_PRECISION                                                                                     \
    "engine of the exact sums Q and F^H d on a GPU: tf32x3 = tensor cores in split TF32, fp16x3 = tensor cores "  \
    "in split FP16 with scaled weights (same accuracy), fp64 = tensor-core DGEMM (the sums in float64), sfu = "    \
    "the CUDA-core kernels; auto = tf32x3 on an H100/H200 (compute capability 9.0, its wgmma kernel), else "     \
    "fp16x3, or sfu where the GEMM does not fit or pay (docs/GPU.md); on the CPU only auto (its own kernels)"
#define MR_OPT_HELP_DEVICE                                                                                        \
    "where the reconstruction runs (auto: a GPU when one is usable; gpu:all or gpu:0,1: Q and F^H d split across " \
    "those GPUs, CG on the first)"
#define MR_OPT_HELP_METHOD                                                                                        \
    "reconstruction methods, comma-separated, or all: iterative (the priors of --reg by --solver; default), cg "   \
    "(the quadratic gradient prior by CG, the earlier default), gridding-kb, gridding-bilinear"
#define MR_OPT_HELP_ITERS "iterations of the iterative methods (0: the solver's default: 60 for CG, 50 for ADMM (x 8 inner CG iterations), 100 for FISTA and PDHG)"
#define MR_OPT_HELP_TOL                                                                                           \
    "stop the solver when its convergence measure <= T (CG: relative residual; the others: relative change of "   \
    "the image; 0: run every iteration)"
#define MR_OPT_HELP_Q_CACHE                                                                                       \
    "directory of the Q cache (Q is kept per trajectory, weights, grid, basis and precision; the Pipe-Menon "     \
    "density weights per trajectory and matrix), or off (default: $MRIRECON_CACHE_DIR/q, else "                 \
    "~/.cache/mrirecon/q; docs/RECON.md)"

typedef struct {
    const char **items; /* points into argv; owned by the parser (freed with mr_opts_free) */
    int count;
} mr_opt_list;

typedef struct {
    const char *name;    /* long name without dashes: "iters" -> --iters */
    char short_name;     /* 'o' -> -o; 0 for none */
    mr_opt_type type;
    void *dest;          /* see mr_opt_type; its initial value is the default shown in --help */
    const char *metavar; /* "N", "FILE"; NULL for flags */
    const char *help;
    const char *const *choices; /* for MR_OPT_CHOICE */
    double min, max;            /* for INT/DOUBLE; min > max means unchecked. DOUBLE: max = INFINITY (min =
                                   -INFINITY) accepts "inf" ("-inf"); NaN is never accepted */
} mr_opt;

typedef struct {
    const char *name;        /* "recon" */
    const char *args;        /* positional synopsis: "SCAN.h5" */
    const char *summary;     /* one line */
    const char *description; /* paragraphs printed after the usage line; may be NULL */
    const mr_opt *opts;
    int nopts;
    int min_positional, max_positional; /* max < 0: unlimited */
} mr_cmd_spec;

#define MR_OPTS_MAX 128 /* options in one table */

typedef struct {
    char **positional; /* borrowed from argv */
    int npositional;
    void *owned; /* internal */
    unsigned char given[MR_OPTS_MAX]; /* given[i]: option i of the table was on the command line */
} mr_opts_result;

/* 1 when the option `name` (long name) was given on the command line, whatever its value; 0 when it
 * was absent (its dest holds the default) or the table has no such option. For the checks that refuse
 * an option that cannot apply (a gridding option with --method cg, a reader option for another format).
 * res->given stays valid after mr_opts_free. */
int mr_opts_given(const mr_cmd_spec *spec, const mr_opts_result *res, const char *name);

/* Parse argv (argv[0] is the command name). Returns MR_EXIT_OK on success, -1 when --help was
 * printed to stdout (caller exits 0), MR_EXIT_USAGE after printing a message to stderr. Options
 * that are absent keep the value their dest already holds. */
int mr_opts_parse(const mr_cmd_spec *spec, int argc, char **argv, mr_opts_result *res);
void mr_opts_free(mr_opts_result *res);

/* Print the usage/help text generated from the table. */
void mr_opts_help(const mr_cmd_spec *spec, FILE *out);

/* The value an option's dest holds now, as text ("-" for an absent string, a list's items joined by ',',
 * doubles with 17 significant digits): what it parsed, else its default. Returns the length snprintf
 * would write (>= size: truncated). */
int mr_opts_value(const mr_opt *o, char *buf, size_t size);

/* "name=value name=value ..." over opts[0..n): every option with its value now (mr_opts_value), in table
 * order. A derived record of a table's settings (batch's --resume fingerprint): an option added to the
 * table enters it without anything written by hand. MR_EINVAL when it does not fit in size. */
mr_status mr_opts_fingerprint(const mr_opt *opts, int n, char *buf, size_t size);

/* Every option of opts[0..n) with its value now, as members of the JSON object o, in table order: report.json's
 * "options" (the same derived record as the fingerprint, typed): flags as true/false, integers and doubles as
 * numbers (doubles with 17 significant digits, null when not finite), an absent string or empty list as null,
 * a list as an array of strings, the rest as strings. */
void mr_opts_json(const mr_opt *opts, int n, mr_json_obj *o);

/* Standard -v/-q handling shared by every command: sets the log level. */
void mr_opts_apply_verbosity(int verbose, int quiet);

/* The start every command shares: mr_opts_parse, then -v/-q from the flags the table filled
 * (verbose, quiet may be NULL). Returns MR_OPTS_GO when the command should run (res holds the
 * positionals; free with mr_opts_free), otherwise the exit code to return at once (0 after --help,
 * 2 after a usage error) with res already freed. */
#define MR_OPTS_GO (-1)

/* Print "mrirecon <cmd>: <message>" and the --help hint to stderr; returns MR_EXIT_USAGE. For the
 * checks a table cannot express (a required option, a value parsed later). The first line, without the
 * hint, is also recorded as this thread's last error (mr_last_error), which the C API (recon/api/api.h)
 * turns into its usage error. */
int mr_opts_usage(const mr_cmd_spec *spec, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Whether this thread's usage messages (mr_opts_usage, --help) go to stderr / stdout: 1 (the default, the
 * commands) or 0 (the C API, which parses command lines without a terminal and reports the recorded
 * message instead). Returns the previous setting. */
int mr_opts_set_print(int on);

/* --precision other than auto with --device cpu (the precisions name GPU engines): the usage message and
 * MR_EXIT_USAGE; else MR_EXIT_OK. One rule for recon, batch and validate. */
int mr_opts_check_precision(const mr_cmd_spec *spec, mr_precision precision, mr_device_sel device);

/* An option value of one to three comma-separated numbers ("a", "a,b", "a,b,c") into v[0..n);
 * returns n, or 0 on a syntax error or a value that is not finite. */
int mr_opts_parse_list3(const char *text, double v[3]);

/* A matrix option ("N", "NX,NY", "NX,NY,NZ"): integer edges in 1..MR_MAX_MATRIX_EDGE (base/grid.h);
 * returns the count, 0 otherwise. */
int mr_opts_parse_matrix(const char *text, int64_t v[3]);

int mr_opts_begin(const mr_cmd_spec *spec, int argc, char **argv, mr_opts_result *res, const int *verbose,
                  const int *quiet);

#endif
