/* Options that apply only to some reconstruction methods: one table, used by recon and batch to refuse
 * an option the chosen --method would ignore (usage error, exit 2, naming the option and the methods it
 * applies to) instead of running without it. */
#ifndef MR_APPLIES_H
#define MR_APPLIES_H

#include "opts.h"

/* MR_EXIT_OK when every given option applies to a method of the list `method` (recon/pipeline/methods.h; NULL: the
 * default);
 * otherwise the usage message is printed and MR_EXIT_USAGE returned. */
int mr_method_options_check(const mr_cmd_spec *spec, const mr_opts_result *res, const char *method);

#endif
