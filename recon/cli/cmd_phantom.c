/* mrirecon phantom: write a simulated scan (analytic Shepp-Logan k-space on a chosen trajectory,
 * optional noise, analytic weights, truth images), or the standard suite with --suite DIR. The option
 * table and the scan parameters it gives are recon/cli/cmd_args.c (shared with the C API, recon/api/api.h). */
#include <stdio.h>

#include "../../io/kspace_h5.h"
#include "../../base/log.h"
#include "../../phantoms/scan.h"
#include "../../phantoms/suite.h"
#include "cmd_args.h"
#include "commands.h"
#include "opts.h"

int mr_cmd_phantom(int argc, char **argv)
{
    mr_phantom_args a;
    mr_phantom_args_init(&a);
    a.need_output = 1;
    const int rc = mr_phantom_args_parse(&a, argc, argv);
    if (rc != MR_OPTS_GO)
        return rc;
    if (a.suite) {
        mr_status st = mr_suite_write(a.suite, stdout);
        if (st != MR_OK) {
            fprintf(stderr, "mrirecon phantom: %s\n", mr_last_error());
            return MR_EXIT_FAILURE;
        }
        return MR_EXIT_OK;
    }
    const char *out = a.out;
    mr_kspace *ks = NULL;
    double t0 = mr_now();
    mr_status st = mr_scan_simulate(&a.sp, &ks);
    if (st == MR_OK)
        st = mr_kspace_write(out, ks);
    if (st != MR_OK) {
        mr_kspace_free(ks);
        fprintf(stderr, "mrirecon phantom: %s\n", mr_last_error());
        return MR_EXIT_FAILURE;
    }
    char line[512];
    mr_scan_describe(ks, out, line, sizeof line);
    printf("%s\n", line);
    mr_log(MR_LOG_INFO, "phantom: wrote %s in %.2f s", out, mr_now() - t0);
    mr_kspace_free(ks);
    return MR_EXIT_OK;
}
