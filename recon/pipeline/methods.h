/* The reconstruction methods of `--method` (one table: names, kinds and --help come from it). A run
 * takes a comma-separated list of them, or "all" (every method, in the table's order); the images,
 * the report's rows and compare.png follow the list's order.
 *
 *   iterative          the model-based reconstruction: the priors of --reg solved by --solver
 *   cg                 the quadratic prior (--reg's quadratic priors, else gradient) by conjugate
 *                      gradients: the default of earlier versions, for comparison
 *   gridding-kb        Kaiser-Bessel gridding of the density-compensated samples
 *   gridding-bilinear  bilinear gridding of the density-compensated samples */
#ifndef MR_METHODS_H
#define MR_METHODS_H

#include <stddef.h>

#include "../../base/status.h"

/* X(name, text, iterative, help) */
#define MR_METHOD_TABLE(X)                                                                                     \
    X(ITERATIVE, "iterative", 1, "the priors of --reg by --solver (the default)")                             \
    X(CG, "cg", 1, "the quadratic prior (gradient) by CG: the earlier default")                                \
    X(KB, "gridding-kb", 0, "Kaiser-Bessel gridding")                                                          \
    X(BILINEAR, "gridding-bilinear", 0, "bilinear gridding")

typedef enum {
#define MR_METHOD_ENUM(name, text, it, help) MR_METHOD_##name,
    MR_METHOD_TABLE(MR_METHOD_ENUM)
#undef MR_METHOD_ENUM
    MR_METHOD_COUNT
} mr_method_kind;

typedef struct {
    int n;
    mr_method_kind kind[MR_METHOD_COUNT];
} mr_method_list;

const char *mr_method_name(mr_method_kind m);
int mr_method_iterative(mr_method_kind m); /* iterative and cg: 1; gridding: 0 */
/* "iterative, cg, gridding-kb, gridding-bilinear" for --help and messages. */
const char *mr_method_names(void);
/* "all", or a list "iterative,gridding-kb": each name once; MR_EINVAL naming the part at fault. */
mr_status mr_method_list_parse(const char *text, mr_method_list *out);
int mr_method_list_has(const mr_method_list *l, mr_method_kind m);
/* Whether any method of the list grids (needs the DCF). */
int mr_method_list_grids(const mr_method_list *l);

#endif
