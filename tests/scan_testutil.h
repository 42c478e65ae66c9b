/* A simulated 2D radial Shepp-Logan scan for the tests (phantoms/scan.h), noiseless, with C coils and
 * maps (coils > 0) or one coil without maps (coils = 0). Header-only: each test is its own program. */
#ifndef MR_SCAN_TESTUTIL_H
#define MR_SCAN_TESTUTIL_H

#include "phantoms/scan.h"
#include "testutil.h"

/* *out owned by the caller (mr_kspace_free); NULL (and a failed check) on failure. */
static inline mr_kspace *test_radial_scan(int64_t edge, int spokes, int readout, int64_t coils)
{
    mr_scan_params sp;
    mr_scan_params_default(&sp);
    const int64_t mat[3] = {edge, edge, 1};
    mr_traj_params_default(&sp.traj, MR_TRAJ_RADIAL2D, mat);
    sp.traj.spokes = spokes;
    sp.traj.readout = readout;
    sp.coils = coils;
    mr_kspace *ks = NULL;
    test_check_ok(__FILE__, __LINE__, "mr_scan_simulate", mr_scan_simulate(&sp, &ks));
    return ks;
}

#endif
