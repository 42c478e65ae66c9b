/* The shared CG options (see cg_cli.h). */
#include "cg_cli.h"

#include <string.h>

#include "../pipeline/methods.h"
#include "../pipeline/priors.h"

const char *const mr_cg_cli_bases[] = {"dirac", "box", NULL};
const char *const mr_cg_cli_models[] = {"auto", "exact", "nufft", NULL};
const char *const mr_cg_cli_field_models[] = {"auto", "off", "exact", "frequency", "time", NULL};
const char *const mr_cg_cli_field_units[] = {"auto", "hz", "rad/s", NULL};
const char *const mr_cg_cli_solvers[] = {
#define MR_SOLVER_TEXT(name, text) text,
    MR_SOLVER_TABLE(MR_SOLVER_TEXT)
#undef MR_SOLVER_TEXT
    NULL};

void mr_cg_cli_init(mr_cg_cli *c, const mr_recon_opts *d)
{
    c->lambda = d->lambda;
    c->lambda_rel = d->lambda_rel;
    c->reg = d->reg;
    c->solver = mr_solver_name(d->solver);
    c->model = mr_model_name(d->model);
    c->basis = d->op.basis == MR_BASIS_DIRAC ? "dirac" : "box";
}

int mr_cg_cli_apply(const mr_cmd_spec *spec, const mr_cg_cli *c, mr_recon_opts *o)
{
    if (c->lambda >= 0 && c->lambda_rel >= 0)
        return mr_opts_usage(spec, "--lambda %g and --lambda-rel %g exclude each other", c->lambda, c->lambda_rel);
    mr_prior_list priors;
    if (mr_prior_list_parse(c->reg, &priors) != MR_OK)
        return mr_opts_usage(spec, "--reg: %s", mr_last_error());
    mr_method_list methods;
    if (o->method && mr_method_list_parse(o->method, &methods) != MR_OK)
        return mr_opts_usage(spec, "--method: %s", mr_last_error());
    o->lambda = c->lambda;
    o->lambda_rel = c->lambda_rel;
    o->reg = c->reg;
    if (mr_solver_parse(c->solver, &o->solver) != MR_OK)
        return mr_opts_usage(spec, "--solver: %s", mr_last_error());
    o->op.basis = strcmp(c->basis, "box") == 0 ? MR_BASIS_BOX : MR_BASIS_DIRAC;
    if (mr_model_parse(c->model, &o->model) != MR_OK)
        return mr_opts_usage(spec, "--model: %s", mr_last_error());
    if (mr_recon_opts_check(o) != MR_OK) /* the combinations (e.g. --solver cg with --reg tv) */
        return mr_opts_usage(spec, "%s", mr_last_error());
    return MR_EXIT_OK;
}
