#include "kspace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void *zalloc(size_t n, size_t size)
{
    return calloc(n ? n : 1, size);
}

mr_status mr_kspace_create(mr_kspace **out, const int64_t matrix[3], int64_t nsamples, int64_t ncoils)
{
    *out = NULL;
    mr_status st = mr_matrix_check(matrix, "k-space");
    if (st != MR_OK)
        return st;
    if (nsamples < 1 || nsamples > MR_MAX_SAMPLES)
        return mr_error(MR_EINVAL, "k-space: %lld samples is outside 1..%lld", (long long)nsamples,
                        (long long)MR_MAX_SAMPLES);
    if (ncoils < 1 || ncoils > MR_MAX_COILS)
        return mr_error(MR_EINVAL, "k-space: %lld coils is outside 1..%d", (long long)ncoils, MR_MAX_COILS);
    mr_kspace *ks = zalloc(1, sizeof *ks);
    if (!ks)
        return mr_error(MR_ENOMEM, "k-space: out of memory");
    memcpy(ks->matrix, matrix, sizeof ks->matrix);
    ks->nsamples = nsamples;
    ks->ncoils = ncoils;
    ks->noise_sigma = -1.0;
    ks->traj = zalloc((size_t)nsamples * 3, sizeof(float));
    ks->data = zalloc((size_t)(ncoils * nsamples) * 2, sizeof(float));
    if (!ks->traj || !ks->data) {
        mr_kspace_free(ks);
        return mr_error(MR_ENOMEM, "k-space: out of memory for %lld samples x %lld coils", (long long)nsamples,
                        (long long)ncoils);
    }
    *out = ks;
    return MR_OK;
}

mr_status mr_kspace_alloc_weights(mr_kspace *ks)
{
    if (!ks->weights)
        ks->weights = zalloc((size_t)ks->nsamples, sizeof(float));
    return ks->weights ? MR_OK : mr_error(MR_ENOMEM, "k-space: out of memory for weights");
}

mr_status mr_kspace_alloc_truth(mr_kspace *ks)
{
    size_t n = (size_t)mr_kspace_voxels(ks);
    if (!ks->truth)
        ks->truth = zalloc(n, sizeof(float));
    if (!ks->truth_bl)
        ks->truth_bl = zalloc(n, sizeof(float));
    return (ks->truth && ks->truth_bl) ? MR_OK : mr_error(MR_ENOMEM, "k-space: out of memory for truth images");
}

mr_status mr_kspace_alloc_sens(mr_kspace *ks)
{
    if (!ks->sens)
        ks->sens = zalloc((size_t)(ks->ncoils * mr_kspace_voxels(ks)) * 2, sizeof(float));
    return ks->sens ? MR_OK : mr_error(MR_ENOMEM, "k-space: out of memory for %lld coil maps", (long long)ks->ncoils);
}

mr_status mr_kspace_alloc_time(mr_kspace *ks)
{
    if (!ks->time)
        ks->time = zalloc((size_t)ks->nsamples, sizeof(float));
    return ks->time ? MR_OK : mr_error(MR_ENOMEM, "k-space: out of memory for %lld readout times", (long long)ks->nsamples);
}

mr_status mr_kspace_alloc_fieldmap(mr_kspace *ks)
{
    if (!ks->fieldmap)
        ks->fieldmap = zalloc((size_t)mr_kspace_voxels(ks), sizeof(float));
    return ks->fieldmap ? MR_OK : mr_error(MR_ENOMEM, "k-space: out of memory for the field map");
}

int64_t mr_kspace_count_outside(const mr_kspace *ks, double *worst)
{
    int64_t n = 0;
    double w = 0.0;
    for (int64_t i = 0; i < ks->nsamples; i++) {
        int out = 0;
        for (int a = 0; a < 3; a++) {
            double r = fabs((double)ks->traj[3 * i + a]) / (0.5 * (double)ks->matrix[a]);
            out |= r > 1 + 1e-6; /* float rounding of samples placed exactly on the edge */
            w = r > w ? r : w;
        }
        n += out;
    }
    if (worst)
        *worst = w;
    return n;
}

void mr_kspace_free(mr_kspace *ks)
{
    if (!ks)
        return;
    free(ks->traj);
    free(ks->data);
    free(ks->weights);
    free(ks->truth);
    free(ks->truth_bl);
    free(ks->sens);
    free(ks->time);
    free(ks->fieldmap);
    free(ks);
}

double mr_kspace_sens_rss(const mr_kspace *ks, int64_t v)
{
    const int64_t n = mr_kspace_voxels(ks);
    double s2 = 0;
    for (int64_t c = 0; c < ks->ncoils; c++) {
        const float *p = ks->sens + 2 * (c * n + v);
        s2 += (double)p[0] * p[0] + (double)p[1] * p[1];
    }
    return sqrt(s2);
}
