/* Assemble a simulated scan (scan.h). */
#include "scan.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../base/log.h"
#include "noise.h"
#include "shepp_logan.h"

void mr_scan_params_default(mr_scan_params *p)
{
    p->snr_db = 30.0;
    p->noise = 0;
    p->seed = 1;
    p->truth = 1;
    p->weights = 1;
    p->fov_mm = 240.0;
}

mr_status mr_scan_simulate(const mr_scan_params *p, mr_kspace **out)
{
    *out = NULL;
    int64_t m;
    mr_status st = mr_traj_count(&p->traj, &m);
    if (st != MR_OK)
        return st;
    if (p->noise && !isfinite(p->snr_db))
        return mr_error(MR_EINVAL, "phantom: SNR %g dB is not finite", p->snr_db);
    mr_phantom_kind ph = mr_traj_kind_is_3d(p->traj.kind) ? MR_PHANTOM_SL3D : MR_PHANTOM_SL2D;
    mr_kspace *ks = NULL;
    double t0 = mr_now();
    st = mr_kspace_create(&ks, p->traj.matrix, m, 1);
    if (st != MR_OK)
        return st;
    snprintf(ks->traj_kind, sizeof ks->traj_kind, "%s", mr_traj_kind_name(p->traj.kind));
    snprintf(ks->phantom, sizeof ks->phantom, "%s", mr_phantom_name(ph));
    for (int a = 0; a < 3; a++)
        ks->fov_mm[a] = (p->fov_mm > 0 && (a < 2 || ks->matrix[2] > 1)) ? (float)p->fov_mm : 0.0f;
    if ((st = mr_traj_generate(&p->traj, ks->traj)) != MR_OK)
        goto fail;
    if ((st = mr_phantom_kspace(ph, ks->traj, m, ks->data)) != MR_OK)
        goto fail;
    mr_log(MR_LOG_DEBUG, "phantom: %lld samples of analytic k-space in %.2f s", (long long)m, mr_now() - t0);
    if (p->noise) {
        double sigma;
        if ((st = mr_noise_sigma(ks->data, m, p->snr_db, &sigma)) != MR_OK)
            goto fail;
        mr_noise_add(ks->data, m, sigma, p->seed);
        ks->noise_sigma = sigma;
        ks->snr_db = p->snr_db;
        ks->noise_seed = p->seed;
    } else {
        ks->noise_sigma = 0.0;
        ks->snr_db = INFINITY; /* noiseless */
        ks->noise_seed = 0;
    }
    if (p->weights) {
        if ((st = mr_kspace_alloc_weights(ks)) != MR_OK || (st = mr_traj_weights(&p->traj, ks->weights)) != MR_OK)
            goto fail;
    }
    if (p->truth) {
        double t1 = mr_now();
        if ((st = mr_kspace_alloc_truth(ks)) != MR_OK ||
            (st = mr_phantom_truth(ph, ks->matrix, ks->truth)) != MR_OK ||
            (st = mr_phantom_truth_bandlimited(ph, ks->matrix, ks->truth_bl, NULL)) != MR_OK)
            goto fail;
        mr_log(MR_LOG_DEBUG, "phantom: truth images in %.2f s", mr_now() - t1);
    }
    *out = ks;
    return MR_OK;
fail:
    mr_kspace_free(ks);
    return st;
}

void mr_scan_describe(const mr_kspace *ks, const char *path, char *buf, size_t size)
{
    char noise[128];
    if (ks->noise_sigma > 0)
        snprintf(noise, sizeof noise, "SNR %g dB (sigma %.4g, seed %llu)", ks->snr_db, ks->noise_sigma,
                 (unsigned long long)ks->noise_seed);
    else
        snprintf(noise, sizeof noise, "noiseless");
    if (mr_kspace_is_3d(ks))
        snprintf(buf, size, "%s: 3D %lldx%lldx%lld, %lld samples, %s, %s, %s", path, (long long)ks->matrix[0],
                 (long long)ks->matrix[1], (long long)ks->matrix[2], (long long)ks->nsamples, ks->traj_kind,
                 ks->phantom, noise);
    else
        snprintf(buf, size, "%s: 2D %lldx%lld, %lld samples, %s, %s, %s", path, (long long)ks->matrix[0],
                 (long long)ks->matrix[1], (long long)ks->nsamples, ks->traj_kind, ks->phantom, noise);
}
