/* Coil maps from the data (see sens_estimate.h). */
#include "sens_estimate.h"

#include <stdio.h>
#include <stdlib.h>

#include "../base/log.h"
#include "../solver/coilmaps.h"

mr_status mr_sens_estimate(const mr_kspace *ks, const char *label, int threads, float **maps, int64_t calib[3])
{
    *maps = NULL;
    const int64_t n = mr_kspace_voxels(ks);
    float *m = malloc((size_t)(n * ks->ncoils) * 2 * sizeof *m);
    if (!m)
        return mr_error(MR_ENOMEM, "%s: out of memory for %lld coil maps of %lld voxels", label,
                        (long long)ks->ncoils, (long long)n);
    mr_coilmaps_opts o;
    mr_coilmaps_opts_default(&o);
    o.threads = threads;
    int64_t small[3] = {0, 0, 0};
    const double t0 = mr_now();
    mr_status st = mr_coilmaps_estimate(ks->matrix, ks->traj, ks->nsamples, ks->data, ks->ncoils, &o, m, small);
    if (st != MR_OK) {
        char why[512]; /* mr_last_error's buffer is rewritten by mr_error */
        snprintf(why, sizeof why, "%s", mr_last_error());
        free(m);
        return mr_error(st, "%s: coil maps cannot be estimated from the data: %s", label, why);
    }
    mr_log(MR_LOG_INFO, "%s: %lld coil maps estimated from the data (Walsh/Inati, %lldx%lldx%lld calibration grid) in "
                        "%.3f s",
           label, (long long)ks->ncoils, (long long)small[0], (long long)small[1], (long long)small[2], mr_now() - t0);
    if (calib)
        for (int a = 0; a < 3; a++)
            calib[a] = small[a];
    *maps = m;
    return MR_OK;
}

int mr_sens_weight_truth(mr_kspace *ks)
{
    if (!ks->sens || (!ks->truth && !ks->truth_bl))
        return 0;
    const int64_t n = mr_kspace_voxels(ks);
    for (int64_t v = 0; v < n; v++) {
        const double w = mr_kspace_sens_rss(ks, v);
        if (ks->truth)
            ks->truth[v] = (float)(ks->truth[v] * w);
        if (ks->truth_bl)
            ks->truth_bl[v] = (float)(ks->truth_bl[v] * w);
    }
    return 1;
}
