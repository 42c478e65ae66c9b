/* Status table and error messages; option-table parsing. */
#include <string.h>

#include "base/status.h"
#include "recon/cli/opts.h"
#include "testutil.h"

int main(void)
{
    CHECK(strcmp(mr_strerror(MR_OK), "success") == 0);
    for (int s = 0; s < MR_STATUS_COUNT; s++)
        CHECK(strlen(mr_strerror((mr_status)s)) > 0);
    CHECK(mr_error(MR_EFORMAT, "file %s: bad %d", "x.h5", 3) == MR_EFORMAT);
    CHECK(strcmp(mr_last_error(), "file x.h5: bad 3") == 0);
    /* a long path does not cost the reason: the beginning and the end are kept */
    static char path[20000];
    memset(path, 'p', sizeof path - 1);
    mr_error(MR_EFORMAT, "%s: /kspace/traj has rank 3, expected 2", path);
    const char *m = mr_last_error();
    printf("a message with a %zu-byte path: %zu bytes kept, ends '%s'\n", strlen(path), strlen(m), m + strlen(m) - 30);
    CHECK(strlen(m) == MR_ERROR_MAX - 1);
    CHECK(strncmp(m, "pppp", 4) == 0 && strstr(m, " ... ") != NULL);
    const char *reason = ": /kspace/traj has rank 3, expected 2";
    CHECK(strcmp(m + strlen(m) - strlen(reason), reason) == 0);
    static char mid[5000];
    memset(mid, 'q', sizeof mid - 1);
    mr_error(MR_EIO, "%s: cannot open: %s", mid, "No such file or directory"); /* fits whole */
    CHECK(strlen(mr_last_error()) == strlen(mid) + strlen(": cannot open: No such file or directory"));

    /* settings named {name} by the library, spelled as the application says */
    char b[64];
    mr_error(MR_EINVAL, "pick one with {volume} (0..%d); {traj-units} %s; {real, imag}; {Bad}; {-x}; {2}", 3, "{volume}");
    printf("default spelling: %s\n", mr_last_error());
    CHECK(strcmp(mr_last_error(), "pick one with volume (0..3); traj-units {volume}; {real, imag}; {Bad}; {-x}; {2}") == 0);
    CHECK(mr_error_set_spelling("--", '-', "") == MR_OK);
    mr_error(MR_EINVAL, "pick one with {volume} (0..%d); {traj-units} %s", 3, "{volume}");
    printf("command-line spelling: %s\n", mr_last_error());
    CHECK(strcmp(mr_last_error(), "pick one with --volume (0..3); --traj-units {volume}") == 0);
    CHECK(mr_error_set_spelling("", '_', "=") == MR_OK);
    CHECK(strcmp(mr_error_spell("{traj-units}radians", b, sizeof b), "traj_units=radians") == 0);
    CHECK(strcmp(mr_error_spell("{lambda-rel}{lambda-rel}", b, 12), "lambda_rel=") == 0); /* truncated */
    CHECK(mr_error_set_spelling("%s", '-', "") == MR_EINVAL && mr_error_set_spelling("", '-', "%n") == MR_EINVAL);
    CHECK(strcmp(mr_error_spell("{dwell}", b, sizeof b), "dwell=") == 0); /* a refused spelling changes nothing */
    CHECK(mr_error_set_spelling("", '-', "") == MR_OK);

    int iters = 60, flag = 0;
    double lambda = 0;
    const char *method = "cg";
    static const char *const methods[] = {"cg", "gridding-kb", NULL};
    const mr_opt opts[] = {
        {"iters", 0, MR_OPT_INT, &iters, "N", "iterations", NULL, 1, 100000},
        {"lambda", 0, MR_OPT_DOUBLE, &lambda, "L", "weight", NULL, 0, 1e30},
        {"method", 'm', MR_OPT_CHOICE, &method, "M", "method", methods, 0, -1},
        {"verbose", 'v', MR_OPT_FLAG, &flag, NULL, "more output", NULL, 0, -1},
    };
    const mr_cmd_spec spec = {"t", "FILE", "test", NULL, opts, 4, 1, 1};
    char *ok_argv[] = {"t", "--iters", "5", "--lambda=0.5", "-m", "gridding-kb", "-v", "f.h5", NULL};
    mr_opts_result r;
    CHECK(mr_opts_parse(&spec, 8, ok_argv, &r) == MR_EXIT_OK);
    CHECK(iters == 5 && lambda == 0.5 && strcmp(method, "gridding-kb") == 0 && flag == 1);
    CHECK(r.npositional == 1 && strcmp(r.positional[0], "f.h5") == 0);
    mr_opts_free(&r);

    char *bad1[] = {"t", "--iters", "0", "f", NULL};
    CHECK(mr_opts_parse(&spec, 4, bad1, &r) == MR_EXIT_USAGE);
    mr_opts_free(&r);
    char *bad2[] = {"t", "--method", "nope", "f", NULL};
    CHECK(mr_opts_parse(&spec, 4, bad2, &r) == MR_EXIT_USAGE);
    mr_opts_free(&r);
    char *bad3[] = {"t", NULL};
    CHECK(mr_opts_parse(&spec, 1, bad3, &r) == MR_EXIT_USAGE);
    mr_opts_free(&r);
    char *bad4[] = {"t", "--lambda", "1e", "f", NULL};
    CHECK(mr_opts_parse(&spec, 4, bad4, &r) == MR_EXIT_USAGE);
    mr_opts_free(&r);
    return test_finish("test_status");
}
