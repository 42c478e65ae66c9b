/* The output folder of one reconstruction (`mrirecon recon -o OUTDIR`, recon/pipeline/pipeline.h): a run's
 * files appear together or not at all, and two runs never mix in one folder.
 *
 *   check   before any work: OUTDIR may be absent, empty, or hold files that are not reconstruction
 *           outputs; a folder that holds another run's outputs (mr_outdir_is_output) is refused
 *           unless force.
 *   begin   the files are written into a hidden staging folder: <parent>/.<name>.mrirecon-partial-<pid>
 *           when OUTDIR does not exist (missing parents are created, and removed again on abort),
 *           else OUTDIR/.mrirecon-partial-<pid>.
 *   commit  force: the earlier run's outputs in OUTDIR are removed (only files mr_outdir_is_output
 *           names, never anything else); then the staged files move into OUTDIR (one rename of the
 *           staging folder when OUTDIR did not exist, else one rename per file) and the staging
 *           folder goes.
 *   abort   the staging folder and everything in it are removed (a failed run leaves nothing).
 * Staging folders of runs that died (their process is gone) are removed by begin. */
#ifndef MR_OUTDIR_H
#define MR_OUTDIR_H

#include "../../base/status.h"

#define MR_OUTDIR_PATH 4096

typedef struct {
    char final[MR_OUTDIR_PATH];   /* OUTDIR */
    char stage[MR_OUTDIR_PATH];   /* where the writers write */
    char created[MR_OUTDIR_PATH]; /* the outermost parent folder begin created ("" when none) */
    int fresh;                    /* OUTDIR did not exist at begin */
    int force;
} mr_outdir;

/* Whether a file name is one `recon` writes: report.json, report.md, metrics.csv, convergence.png,
 * convergence_<method>.png, compare.png, image_<method>.h5/.png/.nii/.nii.gz. */
int mr_outdir_is_output(const char *name);

/* MR_EINVAL ("... holds the outputs of another run ...; --force replaces them") when OUTDIR holds
 * outputs and !force; MR_EIO when it exists but is not a readable, writable folder, or cannot be
 * created (its deepest existing parent is not writable). No side effects. */
mr_status mr_outdir_check(const char *outdir, int force);

/* Check again and create the staging folder; od->stage is where to write. */
mr_status mr_outdir_begin(mr_outdir *od, const char *outdir, int force);
/* Publish the staged files (see above). On failure the staging folder is removed. */
mr_status mr_outdir_commit(mr_outdir *od);
/* After a writer failed: the last error message names OUTDIR's paths instead of the staging folder's,
 * then mr_outdir_abort. Returns st. */
mr_status mr_outdir_fail(mr_outdir *od, mr_status st);
/* Remove the staging folder, its files and the parents begin created. */
void mr_outdir_abort(mr_outdir *od);

/* After a successful --force run into outdir: remove what an earlier run with another volume layout
 * left there. Sub-folders (not hidden, not named in keep[0..nkeep)) that hold nothing but
 * reconstruction outputs (mr_outdir_is_output) are removed with their files; folders holding anything
 * else are left alone. top_files 0: the reconstruction outputs directly in outdir are removed too,
 * except metrics.csv (a multi-volume run writes only that one there). */
mr_status mr_outdir_prune(const char *outdir, const char *const *keep, int nkeep, int top_files);

#endif
