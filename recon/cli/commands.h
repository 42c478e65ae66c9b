/* Entry points of the mrirecon commands. Each takes argv with argv[0] = the command name and
 * returns an exit code (MR_EXIT_OK, MR_EXIT_FAILURE, MR_EXIT_USAGE from opts.h). */
#ifndef MR_COMMANDS_H
#define MR_COMMANDS_H

int mr_cmd_phantom(int argc, char **argv);  /* recon/cli/cmd_phantom.c */
int mr_cmd_info(int argc, char **argv);     /* recon/cli/cmd_info.c */
int mr_cmd_recon(int argc, char **argv);    /* recon/cli/cmd_recon.c */
int mr_cmd_validate(int argc, char **argv); /* recon/cli/cmd_validate.c */
int mr_cmd_bench(int argc, char **argv);    /* recon/cli/cmd_bench.c */
int mr_cmd_batch(int argc, char **argv);    /* recon/cli/cmd_batch.c */
int mr_cmd_convert(int argc, char **argv);  /* recon/cli/cmd_convert.c */
int mr_cmd_cache(int argc, char **argv);    /* recon/cli/cmd_cache.c */

#endif
