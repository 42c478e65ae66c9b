/* Reader options on the command line (see read_cli.h). */
#include "read_cli.h"

#include <stdlib.h>
#include <string.h>

#include "../../base/grid.h"
#include "../../io/cfl.h"
#include "../../io/h5util.h"
#include "../../io/input.h"

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
    c->traj = NULL;
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
    o->bart_traj = c->traj;
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

static mr_status h5_format(hid_t file, const char *path, void *ctx)
{
    return mr_input_h5_format(file, path, ctx);
}

/* BART's trajectory of the input (the --traj array, or NAME_traj of the pair): 1 when every kz is 0 or
 * it has only kx, ky; 0 otherwise or when it cannot be read. */
static int bart_traj_2d(const char *path, const mr_read_opts *o)
{
    char traj[4096], ksp[4096];
    if (o->bart_traj)
        snprintf(traj, sizeof traj, "%s", o->bart_traj);
    else if (mr_cfl_pair_names(path, traj, ksp, sizeof traj) != MR_OK)
        return 0;
    size_t n = strlen(traj);
    if (n > 4 && (!strcmp(traj + n - 4, ".hdr") || !strcmp(traj + n - 4, ".cfl")))
        traj[n - 4] = '\0';
    int64_t dims[MR_CFL_DIMS];
    float *t = NULL;
    int flat = 0;
    if (mr_cfl_read_header(traj, dims, NULL) == MR_OK && dims[0] == 2)
        flat = 1;
    else if (mr_cfl_read(traj, dims, NULL, &t) == MR_OK && dims[0] == 3) {
        int64_t m = 1;
        for (int d = 1; d < MR_CFL_DIMS; d++)
            m *= dims[d];
        flat = 1;
        for (int64_t i = 0; i < m && flat; i++)
            flat = t[2 * (3 * i + 2)] == 0.0f;
    }
    free(t);
    mr_clear_error();
    return flat;
}

mr_status mr_read_cli_check(const mr_cmd_spec *spec, const mr_opts_result *res, const mr_read_opts *o,
                            const char *path)
{
    static const char *const bart_only[] = {"matrix", "fov", "traj"};
    static const char *const ismrmrd_only[] = {"traj-units", "space", "averages", "prewhiten"};
    int any = 0;
    for (size_t i = 0; i < 3; i++)
        any |= mr_opts_given(spec, res, bart_only[i]);
    for (size_t i = 0; i < 4; i++)
        any |= mr_opts_given(spec, res, ismrmrd_only[i]);
    if (!any)
        return MR_OK;
    /* the format as mr_input_open decides it: BART by its headers, else HDF5 by its groups */
    mr_input_format f;
    char traj[4096], ksp[4096], th[4200], kh[4200];
    /* BART: the path is a header, or NAME.hdr of it (NAME, NAME.hdr, NAME.cfl), or one of a pair */
    int bart = mr_cfl_is_header(path);
    const size_t n = strlen(path);
    const size_t keep = n > 4 && (!strcmp(path + n - 4, ".hdr") || !strcmp(path + n - 4, ".cfl")) ? n - 4 : n;
    if (!bart && snprintf(th, sizeof th, "%.*s.hdr", (int)keep, path) < (int)sizeof th)
        bart = mr_cfl_is_header(th);
    if (!bart && mr_cfl_pair_names(path, traj, ksp, sizeof traj) == MR_OK) {
        snprintf(th, sizeof th, "%s.hdr", traj);
        snprintf(kh, sizeof kh, "%s.hdr", ksp);
        bart = mr_cfl_is_header(th) && mr_cfl_is_header(kh);
    }
    if (bart)
        f = MR_INPUT_BART;
    else if (mr_h5_probe_in_child(path, h5_format, &f, sizeof f) != MR_OK ||
             (f != MR_INPUT_MRIRECON && f != MR_INPUT_ISMRMRD)) {
        mr_clear_error();
        return MR_OK; /* not recognised: the read stage says why */
    }
    const char *name = mr_input_format_name(f);
    for (size_t i = 0; i < 3; i++)
        if (f != MR_INPUT_BART && mr_opts_given(spec, res, bart_only[i]))
            return mr_error(MR_EINVAL, "--%s applies to BART input only; %s is %s, whose file states %s", bart_only[i],
                            path, name, i == 2 ? "its own trajectory" : "its grid (matrix and field of view)");
    for (size_t i = 0; i < 4; i++)
        if (f != MR_INPUT_ISMRMRD && mr_opts_given(spec, res, ismrmrd_only[i]))
            return mr_error(MR_EINVAL, "--%s applies to ISMRMRD input only; %s is %s%s", ismrmrd_only[i], path, name,
                            i == 0 ? " (trajectories in cycles/FOV by definition)" : "");
    if (f == MR_INPUT_BART && o->matrix[2] > 1 && bart_traj_2d(path, o))
        return mr_error(MR_EINVAL, "--matrix %lld,%lld,%lld: the BART trajectory of %s has no kz (a 2D scan): a 3D "
                                   "grid would only repeat its image along z; give NX,NY",
                        (long long)o->matrix[0], (long long)o->matrix[1], (long long)o->matrix[2], path);
    return MR_OK;
}
