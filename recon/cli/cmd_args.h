/* The parsed command lines of `recon` and `phantom`: each command's option table (recon/cli/opts.h) lives in
 * one struct with what it parses into, so that the command (recon/cli/cmd_recon.c, recon/cli/cmd_phantom.c) and
 * the C API (recon/api/api.h, the Python package) read the same options with the same table, checks and
 * messages; an option added to a table works in both.
 *
 * Usage: *_init (the defaults and the table), optionally set the inputs marked below, *_parse with argv
 * (argv[0] = the command name). The strings of the result point into argv, which must outlive the
 * struct's use; the struct must not be copied (the table points into it). */
#ifndef MR_CMD_ARGS_H
#define MR_CMD_ARGS_H

#include <stdint.h>

#include "../../phantoms/scan.h"
#include "cg_cli.h"
#include "opts.h"
#include "../pipeline/pipeline.h"
#include "read_cli.h"

#define MR_CMD_ARGS_MAX_OPTS 64 /* options in one of these tables */

typedef struct {
    /* inputs (after mr_recon_args_init, before mr_recon_args_parse) */
    int need_outdir; /* 1 (the command): -o is required */
    int in_memory;   /* 1 (the C API's scan in memory): SCAN names it; reader options are refused */
    /* the result */
    mr_recon_opts o;       /* every option, checked; o.op's device is `device` */
    const char *scan;      /* SCAN */
    const char *outdir;    /* -o; NULL when absent */
    mr_device_sel device;  /* --device */
    int verbose, quiet;
    mr_cmd_spec spec;      /* the table, for later usage messages (mr_opts_usage) */
    mr_opts_result res;    /* res.given: which options were on the command line */
    /* internal: the table and what its options parse into */
    mr_opt table[MR_CMD_ARGS_MAX_OPTS];
    const mr_opt *block; /* the shared block: table[...] of every option that shapes the result */
    int nblock;
    mr_cg_cli cg;
    mr_read_cli rdc;
    const char *formats, *slice_text;
    int64_t slice[3];
} mr_recon_args;

void mr_recon_args_init(mr_recon_args *a);

/* Parse, then every check that needs no input besides SCAN's format (the reader options that apply to
 * it: mr_read_cli_check). Returns MR_OPTS_GO when the command should run; otherwise the exit code to
 * return at once, as mr_opts_begin: MR_EXIT_USAGE after a usage message (printed where mr_opts_set_print
 * allows, recorded as mr_last_error), MR_EXIT_OK after --help (printed likewise). */
int mr_recon_args_parse(mr_recon_args *a, int argc, char **argv);

/* The shared block of recon's table (a->block[0..a->nblock)): every option that shapes the result (method,
 * priors, model, coils, gridding, output formats, the readers' options, ...), as opposed to the command's
 * own (-o, --device, --threads, --q-cache, --force, -v, -q). batch puts the same block into its table, so an
 * option added to it is an option of both commands, with one help text, one validation and a place in
 * batch's --resume fingerprint (mr_recon_args_fingerprint).
 *
 * The checks of the block after parsing with a table that holds it (spec, res: that table's parse):
 * --sens-maps against --sens, --precision against a->device, the iterative methods' options (cg_cli), the
 * readers' options, --format/--nifti, the options that apply to some methods only, --slice. With scan
 * (NULL: skipped) also the reader options against that scan's format (or, a->in_memory, refused). Returns
 * MR_EXIT_OK, or MR_EXIT_USAGE after mr_opts_usage. */
int mr_recon_args_check(mr_recon_args *a, const mr_cmd_spec *spec, const mr_opts_result *res, const char *scan);

/* The block's settings as "name=value ..." (mr_opts_fingerprint): batch's --resume key. */
mr_status mr_recon_args_fingerprint(const mr_recon_args *a, char *buf, size_t size);

/* `mrirecon batch`'s command line: its own options (-o, --device, --jobs, --threads, --resume, --force,
 * --timeout, --rank-timeout, -v, -q) and recon's shared block, parsed into r (r.o: the recon options of every
 * scan; r.device: --device). Must not be copied (the table points into it). */
typedef struct {
    mr_recon_args r;
    const char *outdir;
    int jobs, threads, resume, force, verbose, quiet;
    double timeout, rank_timeout;
    mr_cmd_spec spec;
    mr_opts_result res; /* after a successful parse: the positionals (INPUT...); free with mr_opts_free */
    mr_opt table[MR_OPTS_MAX];
} mr_batch_args;

void mr_batch_args_init(mr_batch_args *b);

/* Parse and check (mr_recon_args_check without a scan: batch checks the reader options against its inputs).
 * Returns MR_OPTS_GO (b->res holds the inputs) or the exit code to return at once, as mr_recon_args_parse. */
int mr_batch_args_parse(mr_batch_args *b, int argc, char **argv);

typedef struct {
    /* input (after mr_phantom_args_init, before mr_phantom_args_parse) */
    int need_output; /* 1 (the command): -o FILE or --suite DIR is required */
    /* the result */
    mr_scan_params sp; /* the scan to simulate (mr_scan_simulate); not set with --suite */
    const char *out;   /* -o; NULL when absent */
    const char *suite; /* --suite DIR; NULL when absent */
    int verbose, quiet;
    mr_cmd_spec spec;
    mr_opts_result res;
    /* internal */
    mr_opt table[MR_CMD_ARGS_MAX_OPTS];
    const char *matrix, *traj, *weights, *fieldmap;
    int dim, spokes, readout, interleaves, partitions, samples, seed, no_truth, coils, marker;
    double snr, turns, fov, dwell_us, te_ms;
} mr_phantom_args;

void mr_phantom_args_init(mr_phantom_args *a);

/* Parse and derive the scan parameters; returns as mr_recon_args_parse. */
int mr_phantom_args_parse(mr_phantom_args *a, int argc, char **argv);

#endif
