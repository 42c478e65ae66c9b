/* A simulated 2D radial Shepp-Logan scan for the tests (phantoms/scan.h), noiseless, with C coils and
 * maps (coils > 0) or one coil without maps (coils = 0). Header-only: each test is its own program. */
#ifndef MR_SCAN_TESTUTIL_H
#define MR_SCAN_TESTUTIL_H

#include <math.h>

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

/* A simulated scan of any trajectory kind for the coil-map and noise tests: matrix edge^2 (2D) or edge^3
 * (is3d), the kind's fully sampled defaults with `spokes` spokes when > 0, `coils` simulated coils with
 * maps (0: one coil without maps), complex noise at snr_db (not finite: noiseless) drawn from `seed`,
 * truth images when `truth`, no density weights. Owned by the caller; NULL after a failed check. */
static inline mr_kspace *test_sim_scan(mr_traj_kind kind, int64_t edge, int is3d, int64_t spokes, int64_t coils,
                                       double snr_db, uint64_t seed, int truth)
{
    mr_scan_params sp;
    mr_scan_params_default(&sp);
    const int64_t mat[3] = {edge, edge, is3d ? edge : 1};
    mr_traj_params_default(&sp.traj, kind, mat);
    if (spokes > 0)
        sp.traj.spokes = spokes;
    sp.coils = coils;
    sp.noise = isfinite(snr_db);
    sp.snr_db = snr_db;
    sp.seed = seed;
    sp.truth = truth;
    sp.weights = 0;
    mr_kspace *ks = NULL;
    test_check_ok(__FILE__, __LINE__, "mr_scan_simulate", mr_scan_simulate(&sp, &ks));
    return ks;
}

#endif
