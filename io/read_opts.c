/* Options of the scan readers (see read_opts.h). */
#include "read_opts.h"

#include <string.h>

static const char *const unit_names[MR_UNITS_COUNT] = {"auto", "cycles", "normalized", "radians", "per-m"};

void mr_read_opts_default(mr_read_opts *o)
{
    memset(o, 0, sizeof *o);
    o->traj_units = MR_UNITS_AUTO;
    o->traj_sign = 1;
    o->space = MR_SPACE_ENCODED;
    o->averages = MR_AVERAGES_COMBINE;
}

const char *mr_traj_units_name(mr_traj_units u)
{
    return (u >= 0 && u < MR_UNITS_COUNT) ? unit_names[u] : "?";
}

mr_status mr_traj_units_parse(const char *text, mr_traj_units *u)
{
    for (int i = 0; i < MR_UNITS_COUNT; i++)
        if (text && strcmp(text, unit_names[i]) == 0) {
            *u = (mr_traj_units)i;
            return MR_OK;
        }
    return mr_error(MR_EINVAL, "trajectory units '%s' are not one of auto, cycles, normalized, radians, per-m",
                    text ? text : "(null)");
}
