/* The options of the iterative methods every command that reconstructs shares (recon, batch, validate):
 * put MR_CG_CLI_OPTS(&cli) into the command's option table, then mr_cg_cli_apply after parsing.
 *
 *   --reg LIST        the priors (recon/pipeline/priors.h): tv, wavelet, gradient, identity, comma-separated, NAME:W weighted
 *   --solver S        auto | cg | fista | admm | pdhg (solver/problem.h)
 *   --lambda L        absolute regularisation weight (of each prior, times its weight)
 *   --lambda-rel R    lambda = R x diag(E^H E) at the centre voxel
 *                     (neither: automatic from the scan's noise level, solver/autolambda.h)
 *   --basis B         dirac | box
 * Defaults are those of mr_recon_opts_default (recon/pipeline/pipeline.h). */
#ifndef MR_CG_CLI_H
#define MR_CG_CLI_H

#include "opts.h"
#include "../pipeline/pipeline.h"
#include "../pipeline/priors.h"

typedef struct {
    double lambda, lambda_rel; /* < 0: not given */
    const char *reg, *basis, *solver, *model;
} mr_cg_cli;

extern const char *const mr_cg_cli_bases[];
extern const char *const mr_cg_cli_solvers[];
extern const char *const mr_cg_cli_models[];
extern const char *const mr_cg_cli_field_models[];
extern const char *const mr_cg_cli_field_units[];

/* Defaults from d (mr_recon_opts_default). */
void mr_cg_cli_init(mr_cg_cli *c, const mr_recon_opts *d);

#define MR_CG_CLI_OPTS(c, o)                                                                                     \
    {"lambda", 0, MR_OPT_DOUBLE, &(c)->lambda, "L",                                                           \
     "regularisation weight, absolute (automatic: from the scan's noise level; docs/RECON.md)", NULL, 0, 1e30}, \
    {"lambda-rel", 0, MR_OPT_DOUBLE, &(c)->lambda_rel, "R",                                                   \
     "regularisation weight relative to diag(E^H E) at the centre voxel (lambda = R x diag)", NULL, 0, 1e30},  \
    {"reg", 0, MR_OPT_STRING, &(c)->reg, "LIST", mr_prior_help(), NULL, 0, -1},                             \
    {"solver", 0, MR_OPT_CHOICE, &(c)->solver, "S",                                                           \
     "solver of the iterative method (auto: cg for quadratic priors, fista for the wavelet alone, else admm)",          \
     mr_cg_cli_solvers, 0, -1},                                                                               \
    {"basis", 0, MR_OPT_CHOICE, &(c)->basis, "B", "voxel basis function of the encoding model", mr_cg_cli_bases, 0,  \
     -1},                                                                                                     \
    {"model", 0, MR_OPT_CHOICE, &(c)->model, "M",                                                             \
     "encoding model of the iterative methods: exact = the exact sums (the reference), nufft = a non-uniform "  \
     "FFT to --nufft-tol, auto = the faster that fits the memory (docs/NUFFT.md)",                             \
     mr_cg_cli_models, 0, -1},                                                                                \
    {"nufft-tol", 0, MR_OPT_DOUBLE, &(o)->nufft_tol, "T", "the NUFFT's relative tolerance (float64 below 1e-6)", \
     NULL, 1e-12, 0.1},                                                                                       \
    {"check", 0, MR_OPT_FLAG, &(o)->check, NULL,                                                              \
     "measure the encoding model's error against float64 direct sums (and the field model's against the exact " \
     "field model) at plan time, into the report", NULL, 0, -1},                                              \
    {"fieldmap", 0, MR_OPT_STRING, &(o)->fieldmap, "FILE",                                                    \
     "off-resonance field map in Hz (HDF5 or NIfTI, resampled to the matrix) instead of the scan's "           \
     "/kspace/fieldmap; needs the scan's readout times (docs/RECON.md, Field maps)", NULL, 0, -1},             \
    {"fieldmap-model", 0, MR_OPT_CHOICE, &(o)->fieldmap_model, "M",                                           \
     "field-map correction: auto = frequency segmentation when the scan (or --fieldmap) has a map and the scan " \
     "has readout times, off = none, exact = the exact field sums (slow; the reference), frequency, time",      \
     mr_cg_cli_field_models, 0, -1},                                                                          \
    {"fieldmap-tol", 0, MR_OPT_DOUBLE, &(o)->fieldmap_tol, "T",                                               \
     "the segmented field models' approximation bound", NULL, 1e-6, 0.5},                                     \
    {"fieldmap-units", 0, MR_OPT_CHOICE, &(o)->fieldmap_units, "U",                                           \
     "units of --fieldmap (auto: the file's `units` attribute, else Hz)", mr_cg_cli_field_units, 0, -1}

/* Into o (lambda, lambda_rel, reg, solver, op.basis). MR_EXIT_USAGE (message printed) when both --lambda and
 * --lambda-rel were given, --reg is not a list of priors, or --method not a list of methods; else MR_EXIT_OK. */
int mr_cg_cli_apply(const mr_cmd_spec *spec, const mr_cg_cli *c, mr_recon_opts *o);

#endif
