/* mrirecon validate: placeholder until its issue lands; owned by the engineer who implements it. */
#include <stdio.h>

#include "commands.h"
#include "opts.h"

int mr_cmd_validate(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "mrirecon validate: not implemented yet\n");
    return MR_EXIT_FAILURE;
}
