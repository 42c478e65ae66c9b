/* The options of the iterative methods every command that reconstructs shares (recon, batch, validate):
 * put MR_CG_CLI_OPTS(&cli) into the command's option table, then mr_cg_cli_apply after parsing.
 *
 *   --reg LIST        the priors (recon/priors.h): tv, wavelet, gradient, identity, comma-separated, NAME:W weighted
 *   --solver S        auto | cg | fista | admm | pdhg (solver/problem.h)
 *   --lambda L        absolute regularisation weight (of each prior, times its weight)
 *   --lambda-rel R    lambda = R x diag(E^H E) at the centre voxel
 *                     (neither: automatic from the scan's noise level, recon/autolambda.h)
 *   --basis B         dirac | box
 * Defaults are those of mr_recon_opts_default (recon/pipeline.h). */
#ifndef MR_CG_CLI_H
#define MR_CG_CLI_H

#include "opts.h"
#include "pipeline.h"
#include "priors.h"

typedef struct {
    double lambda, lambda_rel; /* < 0: not given */
    const char *reg, *basis, *solver;
} mr_cg_cli;

extern const char *const mr_cg_cli_bases[];
extern const char *const mr_cg_cli_solvers[];

/* Defaults from d (mr_recon_opts_default). */
void mr_cg_cli_init(mr_cg_cli *c, const mr_recon_opts *d);

#define MR_CG_CLI_OPTS(c)                                                                                     \
    {"lambda", 0, MR_OPT_DOUBLE, &(c)->lambda, "L",                                                           \
     "regularisation weight, absolute (automatic: from the scan's noise level; docs/RECON.md)", NULL, 0, 1e30}, \
    {"lambda-rel", 0, MR_OPT_DOUBLE, &(c)->lambda_rel, "R",                                                   \
     "regularisation weight relative to diag(E^H E) at the centre voxel (lambda = R x diag)", NULL, 0, 1e30},  \
    {"reg", 0, MR_OPT_STRING, &(c)->reg, "LIST", mr_prior_help(), NULL, 0, -1},                             \
    {"solver", 0, MR_OPT_CHOICE, &(c)->solver, "S",                                                           \
     "solver of the iterative method (auto: cg for quadratic priors, fista for the wavelet alone, else admm)",          \
     mr_cg_cli_solvers, 0, -1},                                                                               \
    {"basis", 0, MR_OPT_CHOICE, &(c)->basis, "B", "voxel basis function of the CG model", mr_cg_cli_bases, 0, -1}

/* Into o (lambda, lambda_rel, reg, solver, op.basis). MR_EXIT_USAGE (message printed) when both --lambda and
 * --lambda-rel were given, --reg is not a list of priors, or --method not a list of methods; else MR_EXIT_OK. */
int mr_cg_cli_apply(const mr_cmd_spec *spec, const mr_cg_cli *c, mr_recon_opts *o);

#endif
