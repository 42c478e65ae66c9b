/* Assemble a simulated scan (scan.h). */
#include "scan.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../base/log.h"
#include "../io/fieldmap.h"
#include "coils.h"
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
    p->coils = 0;
    p->marker = 0;
    p->dwell_s = 0.0;
    p->te_s = 0.0;
    mr_field_params_default(&p->field);
}

/* Readout times into ks->time (scan.h); the samples per readout come from the trajectory kind. */
static mr_status simulate_times(const mr_scan_params *p, mr_kspace *ks)
{
    if (p->traj.kind == MR_TRAJ_RANDOM2D)
        return mr_error(MR_EINVAL, "phantom: the random trajectory has no readouts, so no readout timing ({dwell})");
    int64_t echo = 0;
    mr_status st = mr_kspace_alloc_time(ks);
    if (st == MR_OK)
        st = mr_field_times(ks->traj, ks->nsamples, p->traj.readout, p->te_s, p->dwell_s, ks->time, &echo);
    if (st == MR_OK)
        mr_log(MR_LOG_DEBUG, "phantom: readouts of %lld samples, %.3f ms each, echo at sample %lld",
               (long long)p->traj.readout, 1e3 * p->dwell_s * (double)p->traj.readout, (long long)echo);
    return st;
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
    if (p->marker)
        ph = (mr_phantom_kind)(ph | MR_PHANTOM_MARKER);
    if (p->coils < 0 || p->coils > MR_MAX_COILS)
        return mr_error(MR_EINVAL, "phantom: %lld coils is outside 1..%d", (long long)p->coils, MR_MAX_COILS);
    const int field = mr_field_present(&p->field);
    if (field && !(p->dwell_s > 0))
        return mr_error(MR_EINVAL, "phantom: a field map needs the readout timing (a dwell time > 0)");
    mr_kspace *ks = NULL;
    mr_coils *coils = NULL;
    double t0 = mr_now();
    st = mr_kspace_create(&ks, p->traj.matrix, m, p->coils > 0 ? p->coils : 1);
    if (st != MR_OK)
        return st;
    snprintf(ks->traj_kind, sizeof ks->traj_kind, "%s", mr_traj_kind_name(p->traj.kind));
    snprintf(ks->phantom, sizeof ks->phantom, "%s", mr_phantom_name(ph));
    for (int a = 0; a < 3; a++)
        ks->fov_mm[a] = (p->fov_mm > 0 && (a < 2 || ks->matrix[2] > 1)) ? (float)p->fov_mm : 0.0f;
    if ((st = mr_traj_generate(&p->traj, ks->traj)) != MR_OK)
        goto fail;
    if (p->dwell_s > 0 && (st = simulate_times(p, ks)) != MR_OK)
        goto fail;
    if (p->coils > 0 && ((st = mr_coils_create(&coils, ph, p->coils)) != MR_OK ||
                         (st = mr_kspace_alloc_sens(ks)) != MR_OK ||
                         (st = mr_coils_maps(coils, ks->matrix, ks->sens)) != MR_OK))
        goto fail;
    if (field) {
        if ((st = mr_field_kspace(&p->field, ph, coils, ks->matrix, ks->traj, ks->time, m, ks->data, 0)) != MR_OK ||
            (st = mr_kspace_alloc_fieldmap(ks)) != MR_OK ||
            (st = mr_field_map(&p->field, ks->matrix, ks->fieldmap)) != MR_OK)
            goto fail;
    } else if ((st = coils ? mr_coils_kspace(coils, ks->traj, m, ks->data)
                           : mr_phantom_kspace(ph, ks->traj, m, ks->data)) != MR_OK) {
        goto fail;
    }
    mr_log(MR_LOG_DEBUG, "phantom: %lld samples x %lld coil(s) of analytic k-space in %.2f s", (long long)m,
           (long long)ks->ncoils, mr_now() - t0);
    if (p->noise) { /* one sigma for every coil, from the mean power of all coils' data */
        double sigma;
        const int64_t all = m * ks->ncoils;
        if ((st = mr_noise_sigma(ks->data, all, p->snr_db, &sigma)) != MR_OK)
            goto fail;
        mr_noise_add(ks->data, all, sigma, p->seed);
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
    mr_coils_free(coils);
    *out = ks;
    return MR_OK;
fail:
    mr_coils_free(coils);
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
    char coils[160] = "";
    int n = 0;
    if (ks->sens)
        n = snprintf(coils, sizeof coils, ", %lld coil%s with maps", (long long)ks->ncoils, ks->ncoils > 1 ? "s" : "");
    double flo, fhi, tlo, thi;
    mr_kspace_field_range(ks, &flo, &fhi, &tlo, &thi);
    if (ks->time && n >= 0 && (size_t)n < sizeof coils)
        n += snprintf(coils + n, sizeof coils - (size_t)n, ", readout times %.3g..%.3g ms", 1e3 * tlo, 1e3 * thi);
    if (ks->fieldmap && n >= 0 && (size_t)n < sizeof coils)
        snprintf(coils + n, sizeof coils - (size_t)n, ", field %.4g..%.4g Hz", flo, fhi);
    if (mr_kspace_is_3d(ks))
        snprintf(buf, size, "%s: 3D %lldx%lldx%lld, %lld samples%s, %s, %s, %s", path, (long long)ks->matrix[0],
                 (long long)ks->matrix[1], (long long)ks->matrix[2], (long long)ks->nsamples, coils, ks->traj_kind,
                 ks->phantom, noise);
    else
        snprintf(buf, size, "%s: 2D %lldx%lld, %lld samples%s, %s, %s, %s", path, (long long)ks->matrix[0],
                 (long long)ks->matrix[1], (long long)ks->nsamples, coils, ks->traj_kind, ks->phantom, noise);
}
