/* Which options each reconstruction method reads (see applies.h). */
#include "applies.h"

#include <string.h>

#include "../pipeline/methods.h"

enum { ITERATIVE = 1, CG = 2, KB = 4, BILINEAR = 8 };
#define ITER (ITERATIVE | CG)

int mr_method_options_check(const mr_cmd_spec *spec, const mr_opts_result *res, const char *method)
{
    static const struct {
        const char *name;
        unsigned methods;
        const char *which;
    } rules[] = {
        {"iters", ITER, "the iterative methods (iterative, cg)"},
        {"tol", ITER, "the iterative methods (iterative, cg)"},
        {"lambda", ITER, "the iterative methods (iterative, cg)"},
        {"lambda-rel", ITER, "the iterative methods (iterative, cg)"},
        {"reg", ITER, "the iterative methods (iterative, cg)"},
        {"solver", ITERATIVE, "the iterative method (cg always runs CG)"},
        {"basis", ITER, "the iterative methods (iterative, cg)"},
        {"precision", ITER, "the iterative methods (the exact sums on a GPU)"},
        {"q-cache", ITER | KB | BILINEAR,
         "the iterative methods (Q) and gridding with --dcf pipe (the Pipe-Menon weights)"},
        {"dcf", KB | BILINEAR, "gridding (gridding-kb, gridding-bilinear)"},
        {"oversample", KB, "Kaiser-Bessel gridding (gridding-kb)"},
        {"kernel-width", KB, "Kaiser-Bessel gridding (gridding-kb)"},
    };
    mr_method_list list;
    if (mr_method_list_parse(method ? method : "iterative", &list) != MR_OK)
        return mr_opts_usage(spec, "--method: %s", mr_last_error());
    static const unsigned bit[MR_METHOD_COUNT] = {ITERATIVE, CG, KB, BILINEAR};
    unsigned run = 0;
    for (int i = 0; i < list.n; i++)
        run |= bit[list.kind[i]];
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (!(rules[i].methods & run) && mr_opts_given(spec, res, rules[i].name))
            return mr_opts_usage(spec, "--%s applies to %s, which --method %s does not run", rules[i].name,
                                 rules[i].which, method);
    return MR_EXIT_OK;
}
