/* Coil maps from the data (see sens_estimate.h). */
#include "sens_estimate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/log.h"
#include "../../gpu/espirit.h"
#include "../../solver/coil_compress.h"
#include "../../solver/coilmaps.h"
#include "../../solver/espirit.h"

static const char *const method_names[MR_SENS_METHOD_COUNT] = {"espirit", "walsh"};

const char *mr_sens_method_name(mr_sens_method m)
{
    return m >= 0 && m < MR_SENS_METHOD_COUNT ? method_names[m] : "?";
}

mr_status mr_sens_method_parse(const char *text, mr_sens_method *m)
{
    for (int i = 0; i < MR_SENS_METHOD_COUNT; i++)
        if (text && !strcmp(text, method_names[i])) {
            *m = (mr_sens_method)i;
            return MR_OK;
        }
    return mr_error(MR_EINVAL, "coil-map method '%s' is not one of espirit, walsh", text ? text : "");
}

void mr_sens_estimate_opts_default(mr_sens_estimate_opts *o)
{
    o->method = MR_SENS_METHOD_ESPIRIT;
    o->threads = 0;
    o->gpu = -1;
}

/* ESPIRiT: calibration on the host, the per-voxel stage on the host or the GPU */
static mr_status espirit(const mr_kspace *ks, const mr_sens_estimate_opts *o, float *m, mr_sens_estimate_info *info)
{
    mr_espirit_opts eo;
    mr_espirit_opts_default(&eo);
    eo.threads = o->threads;
    mr_espirit_calib cal;
    mr_status st = mr_espirit_calibrate(ks->matrix, ks->traj, ks->nsamples, ks->data, ks->ncoils, &eo, &cal);
    if (st != MR_OK)
        return st;
    const int64_t n = mr_kspace_voxels(ks);
    float *eig = malloc((size_t)n * sizeof *eig);
    if (!eig) {
        mr_espirit_calib_free(&cal);
        return mr_error(MR_ENOMEM, "out of memory for the ESPIRiT eigenvalues of %lld voxels", (long long)n);
    }
    if (o->gpu >= 0)
        st = mr_gpu_espirit_maps(o->gpu, &cal, ks->matrix, eo.crop, eo.iters, m, eig, NULL);
    else
        st = mr_espirit_maps(&cal, ks->matrix, &eo, m, eig);
    if (st == MR_OK) {
        int64_t cropped = 0;
        for (int64_t v = 0; v < n; v++)
            cropped += !(eig[v] >= eo.crop);
        memcpy(info->calib, cal.calib, sizeof info->calib);
        memcpy(info->kernel, cal.kernel, sizeof info->kernel);
        info->kernels = cal.nkernels;
        info->columns = cal.ncols;
        info->cropped = (double)cropped / (double)n;
        info->on_gpu = o->gpu >= 0;
    }
    free(eig);
    mr_espirit_calib_free(&cal);
    return st;
}

mr_status mr_sens_estimate_ex(const mr_kspace *ks, const char *label, const mr_sens_estimate_opts *o, float **maps,
                              mr_sens_estimate_info *info)
{
    mr_sens_estimate_opts def;
    if (!o) {
        mr_sens_estimate_opts_default(&def);
        o = &def;
    }
    mr_sens_estimate_info own;
    if (!info)
        info = &own;
    memset(info, 0, sizeof *info);
    info->method = o->method;
    *maps = NULL;
    const int64_t n = mr_kspace_voxels(ks);
    float *m = malloc((size_t)(n * ks->ncoils) * 2 * sizeof *m);
    if (!m)
        return mr_error(MR_ENOMEM, "%s: out of memory for %lld coil maps of %lld voxels", label,
                        (long long)ks->ncoils, (long long)n);
    const double t0 = mr_now();
    mr_status st;
    if (o->method == MR_SENS_METHOD_WALSH) {
        mr_coilmaps_opts co;
        mr_coilmaps_opts_default(&co);
        co.threads = o->threads;
        st = mr_coilmaps_estimate(ks->matrix, ks->traj, ks->nsamples, ks->data, ks->ncoils, &co, m, info->calib);
    } else {
        st = espirit(ks, o, m, info);
    }
    if (st != MR_OK) {
        char why[512]; /* mr_last_error's buffer is rewritten by mr_error */
        snprintf(why, sizeof why, "%s", mr_last_error());
        free(m);
        return mr_error(st, "%s: coil maps cannot be estimated from the data: %s", label, why);
    }
    info->seconds = mr_now() - t0;
    if (o->method == MR_SENS_METHOD_WALSH)
        mr_log(MR_LOG_INFO, "%s: %lld coil maps estimated from the data (Walsh/Inati, %lldx%lldx%lld calibration grid) "
                            "in %.3f s",
               label, (long long)ks->ncoils, (long long)info->calib[0], (long long)info->calib[1],
               (long long)info->calib[2], info->seconds);
    else
        mr_log(MR_LOG_INFO, "%s: %lld coil maps estimated from the data (ESPIRiT, %lldx%lldx%lld calibration region, "
                            "%lld of %lld kernels, %.0f%% of the voxels cropped%s) in %.3f s",
               label, (long long)ks->ncoils, (long long)info->calib[0], (long long)info->calib[1],
               (long long)info->calib[2], (long long)info->kernels, (long long)info->columns, 100 * info->cropped,
               info->on_gpu ? ", maps on the GPU" : "", info->seconds);
    *maps = m;
    return MR_OK;
}

mr_status mr_sens_estimate(const mr_kspace *ks, const char *label, int threads, float **maps, int64_t calib[3])
{
    mr_sens_estimate_opts o;
    mr_sens_estimate_opts_default(&o);
    o.threads = threads;
    mr_sens_estimate_info info;
    mr_status st = mr_sens_estimate_ex(ks, label, &o, maps, &info);
    if (st == MR_EINVAL) { /* e.g. a calibration region not larger than ESPIRiT's kernel: Walsh/Inati may do */
        mr_log(MR_LOG_WARN, "%s; trying the Walsh/Inati estimator instead", mr_last_error());
        o.method = MR_SENS_METHOD_WALSH;
        st = mr_sens_estimate_ex(ks, label, &o, maps, &info);
    }
    if (st == MR_OK && calib)
        memcpy(calib, info.calib, sizeof info.calib);
    return st;
}

mr_status mr_sens_compress_coils(mr_kspace *ks, const char *label, int64_t k, double keep, int threads,
                                 double *retained)
{
    if (retained)
        *retained = 1;
    if (ks->ncoils <= 1 || k >= ks->ncoils)
        return MR_OK;
    const double t0 = mr_now();
    mr_coil_compress cc;
    mr_status st = mr_coil_compress_plan(ks->data, ks->nsamples, ks->ncoils, k, keep, threads, &cc);
    if (st != MR_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", mr_last_error());
        return mr_error(st, "%s: %s", label, why);
    }
    const int64_t K = cc.nvirtual, n = mr_kspace_voxels(ks);
    float *data = malloc((size_t)(K * ks->nsamples) * 2 * sizeof *data),
          *sens = ks->sens ? malloc((size_t)(K * n) * 2 * sizeof *sens) : NULL;
    if (!data || (ks->sens && !sens)) {
        free(data);
        free(sens);
        mr_coil_compress_free(&cc);
        return mr_error(MR_ENOMEM, "%s: out of memory compressing %lld coils to %lld", label, (long long)ks->ncoils,
                        (long long)K);
    }
    st = mr_coil_compress_apply(&cc, ks->data, ks->nsamples, data, threads);
    if (st == MR_OK && sens)
        st = mr_coil_compress_apply(&cc, ks->sens, n, sens, threads);
    if (st != MR_OK) {
        free(data);
        free(sens);
        mr_coil_compress_free(&cc);
        return st;
    }
    mr_log(MR_LOG_INFO, "%s: %lld coils compressed to %lld virtual coils keeping %.2f%% of the data's energy%s in %.3f s",
           label, (long long)ks->ncoils, (long long)K, 100 * cc.retained, sens ? " (maps too)" : "", mr_now() - t0);
    free(ks->data);
    ks->data = data;
    if (sens) {
        free(ks->sens);
        ks->sens = sens;
    }
    ks->ncoils = K;
    if (retained)
        *retained = cc.retained;
    mr_coil_compress_free(&cc);
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
