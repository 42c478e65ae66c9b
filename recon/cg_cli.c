/* The shared CG options (see cg_cli.h). */
#include "cg_cli.h"

#include <string.h>

const char *const mr_cg_cli_regs[] = {"gradient", "identity", NULL};
const char *const mr_cg_cli_bases[] = {"dirac", "box", NULL};

void mr_cg_cli_init(mr_cg_cli *c, const mr_recon_opts *d)
{
    c->lambda = d->lambda;
    c->lambda_rel = d->lambda_rel;
    c->reg = d->reg;
    c->basis = d->op.basis == MR_BASIS_DIRAC ? "dirac" : "box";
}

int mr_cg_cli_apply(const mr_cmd_spec *spec, const mr_cg_cli *c, mr_recon_opts *o)
{
    if (c->lambda >= 0 && c->lambda_rel >= 0)
        return mr_opts_usage(spec, "--lambda %g and --lambda-rel %g exclude each other", c->lambda, c->lambda_rel);
    o->lambda = c->lambda;
    o->lambda_rel = c->lambda_rel;
    o->reg = c->reg;
    o->op.basis = strcmp(c->basis, "box") == 0 ? MR_BASIS_BOX : MR_BASIS_DIRAC;
    return MR_EXIT_OK;
}
