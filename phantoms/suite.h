/* The standard phantom suite (issue 6): a fixed list of 2D and 3D scans covering the trajectory
 * kinds, full and 4x/8x undersampled acquisitions and noise levels, each with truth images, plus
 * DIR/manifest.csv and DIR/manifest.md. docs/PHANTOMS.md lists the scans. */
#ifndef MR_SUITE_H
#define MR_SUITE_H

#include <stdio.h>

#include "scan.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const char *file;        /* "2d64_radial_full.h5" */
    const char *description; /* one line */
    double undersampling;    /* nominal factor against the fully sampled design (1, 4, 8) */
    mr_scan_params scan;
} mr_suite_entry;

/* Number of scans in the suite. */
int mr_suite_count(void);

/* Entry i (0 <= i < mr_suite_count()) with its parameters filled in. */
mr_status mr_suite_entry_get(int i, mr_suite_entry *e);

/* Write every scan into dir (created if needed) and then the manifests, each file atomically
 * (temporary name + rename); re-running rewrites the same content. One line per written file
 * goes to `summary` when it is not NULL. */
mr_status mr_suite_write(const char *dir, FILE *summary);

#ifdef __cplusplus
}
#endif
#endif
