/* Reader options on the command line (see read_cli.h). */
#include "read_cli.h"

#include <stdlib.h>
#include <string.h>

#include "../base/grid.h"

const char *const mr_read_cli_units[] = {"auto", "cycles", "normalized", "radians", "per-m", NULL};
const char *const mr_read_cli_signs[] = {"+1", "-1", NULL};
const char *const mr_read_cli_onoff[] = {"on", "off", NULL};
const char *const mr_read_cli_spaces[] = {"encoded", "recon", NULL};
const char *const mr_read_cli_averages[] = {"combine", "separate", NULL};

void mr_read_cli_init(mr_read_cli *c)
{
    c->units = "auto";
    c->sign = "+1";
    c->prewhiten = "on";
    c->space = "encoded";
    c->averages = "combine";
    c->matrix = NULL;
    c->fov = NULL;
}

mr_status mr_read_cli_apply(const mr_read_cli *c, mr_read_opts *o, int *prewhiten)
{
    mr_read_opts_default(o);
    mr_status st = mr_traj_units_parse(c->units, &o->traj_units);
    if (st != MR_OK)
        return mr_error(MR_EINVAL, "--traj-units: '%s' is not one of auto, cycles, normalized, radians, per-m",
                        c->units);
    o->traj_sign = strcmp(c->sign, "-1") == 0 ? -1 : 1;
    if (prewhiten)
        *prewhiten = strcmp(c->prewhiten, "off") != 0;
    o->space = strcmp(c->space, "recon") == 0 ? MR_SPACE_RECON : MR_SPACE_ENCODED;
    o->averages = strcmp(c->averages, "separate") == 0 ? MR_AVERAGES_SEPARATE : MR_AVERAGES_COMBINE;
    if (c->matrix) {
        double v[3];
        const int syntax = mr_opts_parse_list3(c->matrix, v);
        int64_t m[3] = {1, 1, 1};
        if (syntax < 2)
            return mr_error(MR_EINVAL, "--matrix: '%s' is not NX,NY or NX,NY,NZ", c->matrix);
        if (mr_opts_parse_matrix(c->matrix, m) != syntax)
            return mr_error(MR_EINVAL, "--matrix: '%s': each edge must be an integer in 1..%d", c->matrix,
                            MR_MAX_MATRIX_EDGE);
        memcpy(o->matrix, m, sizeof m);
    }
    if (c->fov) {
        double v[3];
        int n = mr_opts_parse_list3(c->fov, v);
        if (n != 1 && n != 3)
            return mr_error(MR_EINVAL, "--fov: '%s' is not MM or MM,MM,MM", c->fov);
        for (int a = 0; a < 3; a++) {
            double x = v[n == 1 ? 0 : a];
            if (!(x > 0) || x > 1e6)
                return mr_error(MR_EINVAL, "--fov: '%s': each value must be in (0, 1e6] mm", c->fov);
            o->fov_mm[a] = (float)x;
        }
    }
    return MR_OK;
}
