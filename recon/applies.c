/* Which options each reconstruction method reads (see applies.h). */
#include "applies.h"

#include <string.h>

enum { CG = 1, KB = 2, BILINEAR = 4 };

int mr_method_options_check(const mr_cmd_spec *spec, const mr_opts_result *res, const char *method)
{
    static const struct {
        const char *name;
        unsigned methods;
        const char *which;
    } rules[] = {
        {"iters", CG, "CG"},
        {"tol", CG, "CG"},
        {"lambda", CG, "CG"},
        {"lambda-rel", CG, "CG"},
        {"reg", CG, "CG"},
        {"basis", CG, "CG"},
        {"precision", CG, "CG (the exact sums on a GPU)"},
        {"q-cache", CG, "CG (its Toeplitz kernel Q)"},
        {"dcf", KB | BILINEAR, "gridding (gridding-kb, gridding-bilinear)"},
        {"oversample", KB, "Kaiser-Bessel gridding (gridding-kb)"},
        {"kernel-width", KB, "Kaiser-Bessel gridding (gridding-kb)"},
    };
    const unsigned run = !strcmp(method, "all")                 ? (CG | KB | BILINEAR)
                         : !strcmp(method, "gridding-kb")       ? KB
                         : !strcmp(method, "gridding-bilinear") ? BILINEAR
                                                                : CG;
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (!(rules[i].methods & run) && mr_opts_given(spec, res, rules[i].name))
            return mr_opts_usage(spec, "--%s applies to %s, which --method %s does not run", rules[i].name,
                                 rules[i].which, method);
    return MR_EXIT_OK;
}
