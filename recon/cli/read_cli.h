/* The command-line options of the scan readers (io/read_opts.h) and of the read stage
 * (recon/pipeline/volumes.h: prewhitening), shared by every command that reads k-space (recon, batch,
 * convert, info): put MR_READ_CLI_OPTS(&cli) into the
 * command's option table, then mr_read_cli_apply after parsing.
 *
 *   --traj-units auto|cycles|normalized|radians|per-m   ISMRMRD trajectory units (auto: detected)
 *   --traj-sign +1|-1                                   -1 negates the stored trajectory
 *   --prewhiten on|off                                  whiten coils with the noise scans (ISMRMRD)
 *   --space encoded|recon                               ISMRMRD grid: encodedSpace or reconSpace
 *   --averages combine|separate                         ISMRMRD averages: one volume or one each
 *   --matrix NX,NY[,NZ]                                 BART input: image matrix
 *   --fov MM[,MM,MM]                                    BART input: field of view
 *   --traj NAME                                         BART input: the trajectory array of a k-space
 *                                                       array named as BART names it (k + t) */
#ifndef MR_READ_CLI_H
#define MR_READ_CLI_H

#include "../../io/read_opts.h"
#include "opts.h"

typedef struct {
    const char *units, *sign, *prewhiten, *space, *averages, *matrix, *fov, *traj;
} mr_read_cli;

extern const char *const mr_read_cli_units[];
extern const char *const mr_read_cli_signs[];
extern const char *const mr_read_cli_onoff[];
extern const char *const mr_read_cli_spaces[];
extern const char *const mr_read_cli_averages[];

/* Defaults matching mr_read_opts_default. */
void mr_read_cli_init(mr_read_cli *c);

#define MR_READ_CLI_OPTS(c)                                                                                \
    {"traj-units", 0, MR_OPT_CHOICE, &(c)->units, "U",                                                     \
     "trajectory units of ISMRMRD input (auto: detected from the range and the header; docs/FORMAT.md)",   \
     mr_read_cli_units, 0, -1},                                                                            \
    {"traj-sign", 0, MR_OPT_CHOICE, &(c)->sign, "S",                                                       \
     "-1: negate the stored trajectory (data recorded with the opposite Fourier sign)", mr_read_cli_signs,  \
     0, -1},                                                                                               \
    {"prewhiten", 0, MR_OPT_CHOICE, &(c)->prewhiten, "X",                                                  \
     "ISMRMRD: whiten the coils with the noise scans' covariance (when the file has noise scans)",         \
     mr_read_cli_onoff, 0, -1},                                                                            \
    {"space", 0, MR_OPT_CHOICE, &(c)->space, "E",                                                          \
     "ISMRMRD: reconstruction grid from encodedSpace (oversampled FOV included) or reconSpace",            \
     mr_read_cli_spaces, 0, -1},                                                                           \
    {"averages", 0, MR_OPT_CHOICE, &(c)->averages, "A",                                                    \
     "ISMRMRD: averages in one volume (identical trajectories averaged) or one volume each",               \
     mr_read_cli_averages, 0, -1},                                                                         \
    {"matrix", 0, MR_OPT_STRING, &(c)->matrix, "NX,NY[,NZ]",                                               \
     "BART input: image matrix (default: the file's '# mrirecon' note, else the NAME_sens grid, else "       \
     "2 ceil(max |k|) as BART)",                                                                           \
     NULL, 0, -1},                                                                                         \
    {"fov", 0, MR_OPT_STRING, &(c)->fov, "MM[,MM,MM]", "BART input: field of view in mm (default: unknown)", \
     NULL, 0, -1},                                                                                         \
    {"traj", 0, MR_OPT_STRING, &(c)->traj, "NAME",                                                        \
     "BART input: the trajectory array of the k-space array SCAN, as BART names them (bart phantom -k -t "  \
     "NAME SCAN; default: SCAN is NAME_ksp and its trajectory NAME_traj)",                                 \
     NULL, 0, -1}

/* Fill o from the parsed strings, and *prewhiten (may be NULL) from --prewhiten: a processing step of
 * the read stage (recon/pipeline/volumes.h), not a reader option. MR_EINVAL with a message naming the option
 * on a bad value. */
mr_status mr_read_cli_apply(const mr_read_cli *c, mr_read_opts *o, int *prewhiten);

/* Refuse the reader options that cannot apply to the input `path` (the command's usage error, exit 2):
 * --matrix, --fov and --traj read BART input only (mrirecon and ISMRMRD files state their grid);
 * --traj-units, --space, --averages and --prewhiten read ISMRMRD input only; --matrix with NZ > 1 for a
 * BART trajectory without kz (every kz = 0: a 2D scan) would make a 3D image of 2D data. The input's
 * format is found as mr_input_open finds it (HDF5 files in a child process), without reading the data
 * (a BART trajectory is read for the last check). MR_OK when everything given applies, or when the
 * input cannot be recognised (the read stage then says why); MR_EINVAL naming the option otherwise. */
mr_status mr_read_cli_check(const mr_cmd_spec *spec, const mr_opts_result *res, const mr_read_opts *o,
                            const char *path);

#endif
