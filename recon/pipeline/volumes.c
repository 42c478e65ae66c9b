/* The read stage (see volumes.h). */
#include "volumes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/log.h"
#include "../../io/fsutil.h"
#include "../../solver/prewhiten.h"

static mr_status prewhiten(mr_input *in, mr_kspace *ks, const double *psi)
{
    const int64_t C = ks->ncoils;
    double *w = malloc((size_t)(C * C) * 2 * sizeof *w);
    if (!w)
        return mr_error(MR_ENOMEM, "%s: out of memory for the %lld-coil whitening matrix", mr_input_path(in),
                        (long long)C);
    mr_status st = mr_prewhiten_matrix(psi, C, w);
    if (st != MR_OK) {
        char why[512]; /* mr_last_error's buffer is rewritten by mr_error */
        snprintf(why, sizeof why, "%s", mr_last_error());
        free(w);
        return mr_error(MR_EFORMAT, "%s: noise scans: %s; give --prewhiten off to use the data as stored",
                        mr_input_path(in), why);
    }
    mr_prewhiten_apply(w, C, ks->data, ks->nsamples);
    free(w);
    return MR_OK;
}

mr_status mr_volume_read(mr_input *in, int index, int white, mr_kspace **out, mr_volume_desc *desc)
{
    *out = NULL;
    mr_volume_desc d;
    memset(&d, 0, sizeof d);
    d.index = index;
    d.count = mr_input_nvolumes(in);
    d.format = mr_input_get_format(in);
    d.info = mr_input_volume(in, index);
    mr_volume_label(in, index, d.label, sizeof d.label);
    const double *psi = mr_input_noise_cov(in, &d.noise_samples);
    mr_kspace *ks = NULL;
    mr_status st = mr_input_read(in, index, &ks);
    if (st != MR_OK)
        return st;
    if (psi) {
        const mr_ismrmrd_summary *s = mr_input_ismrmrd(in);
        d.noise_max_corr = s ? s->noise_max_corr : 0.0;
    }
    if (psi && white && ks->ncoils > 1) {
        if ((st = prewhiten(in, ks, psi)) != MR_OK) {
            mr_kspace_free(ks);
            return st;
        }
        d.prewhitened = 1;
    }
    if (desc)
        *desc = d;
    *out = ks;
    return MR_OK;
}

/* The key fields of a volume, in the order of the label. */
enum { KEY_ENC, KEY_SLICE, KEY_CONTRAST, KEY_PHASE, KEY_REP, KEY_SET, KEY_AVG, KEYS };
static const char *const key_names[KEYS] = {"enc", "slice", "contrast", "phase", "rep", "set", "avg"};

static void keys_of(const mr_volume_info *vi, int k[KEYS])
{
    k[KEY_ENC] = vi->encoding;
    k[KEY_SLICE] = vi->slice;
    k[KEY_CONTRAST] = vi->contrast;
    k[KEY_PHASE] = vi->phase;
    k[KEY_REP] = vi->repetition;
    k[KEY_SET] = vi->set;
    k[KEY_AVG] = vi->average;
}

void mr_volume_label(const mr_input *in, int index, char *buf, size_t size)
{
    const int n = mr_input_nvolumes(in);
    const mr_volume_info *vi = mr_input_volume(in, index);
    if (!vi || n <= 1) {
        snprintf(buf, size, "volume%d", index);
        return;
    }
    int mine[KEYS], first[KEYS], varies[KEYS] = {0}, widest[KEYS] = {0};
    keys_of(vi, mine);
    keys_of(mr_input_volume(in, 0), first);
    for (int v = 0; v < n; v++) {
        int k[KEYS];
        keys_of(mr_input_volume(in, v), k);
        for (int j = 0; j < KEYS; j++) {
            varies[j] |= k[j] != first[j];
            widest[j] = k[j] > widest[j] ? k[j] : widest[j];
        }
    }
    size_t used = 0;
    buf[0] = '\0';
    for (int j = 0; j < KEYS && used < size; j++) {
        if (!varies[j])
            continue;
        const int digits = widest[j] >= 1000 ? (widest[j] >= 10000 ? 5 : 4) : 3;
        int w = snprintf(buf + used, size - used, "%s%s%0*d", used ? "_" : "", key_names[j], digits, mine[j]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (!buf[0]) /* volumes that differ in nothing the label shows cannot exist; keep a name anyway */
        snprintf(buf, size, "volume%03d", index);
}

int mr_volume_output_grid(const mr_volume_desc *desc, const int64_t matrix[3], const float fov_mm[3],
                          int64_t out_matrix[3], float out_fov_mm[3])
{
    for (int a = 0; a < 3; a++) {
        out_matrix[a] = matrix[a];
        out_fov_mm[a] = fov_mm[a];
    }
    const mr_volume_info *vi = desc ? desc->info : NULL;
    if (!vi)
        return 0;
    int differs = 0;
    for (int a = 0; a < 3; a++) {
        const int64_t r = vi->recon_matrix[a];
        if (r < 1 || r > matrix[a])
            return 0;
        differs |= r != matrix[a];
        /* the same voxel size on every axis with a FOV on both grids */
        if (fov_mm[a] > 0 && vi->recon_fov_mm[a] > 0) {
            const double dv = (double)fov_mm[a] / (double)matrix[a], dr = (double)vi->recon_fov_mm[a] / (double)r;
            if (fabs(dv - dr) > 1e-4 * dv)
                return 0;
        } else if (r != matrix[a]) {
            return 0; /* a FOV is missing: the voxel size cannot be compared */
        }
    }
    if (!differs)
        return 0;
    for (int a = 0; a < 3; a++) {
        out_matrix[a] = vi->recon_matrix[a];
        out_fov_mm[a] = vi->recon_fov_mm[a] > 0 ? vi->recon_fov_mm[a] : fov_mm[a];
    }
    return 1;
}

const mr_geometry *mr_volume_geometry(const mr_volume_desc *desc)
{
    return desc && desc->info ? &desc->info->geometry : NULL;
}

mr_status mr_volumes_write_metrics(const char *outdir, const char (*labels)[MR_VOLUME_LABEL_MAX], int n)
{
    char path[4096], tmp[4200], part[4096];
    mr_status st = mr_path_join(path, sizeof path, outdir, "metrics.csv");
    FILE *f = NULL;
    if (st == MR_OK)
        st = mr_open_tmp(path, tmp, sizeof tmp, &f);
    if (st != MR_OK)
        return st;
    char line[4096];
    for (int v = 0; v < n && st == MR_OK; v++) {
        char sub[4096];
        if ((st = mr_path_join(sub, sizeof sub, outdir, labels[v])) != MR_OK ||
            (st = mr_path_join(part, sizeof part, sub, "metrics.csv")) != MR_OK)
            break;
        FILE *in = fopen(part, "r");
        if (!in) {
            st = mr_error(MR_EIO, "%s: cannot read it back", part);
            break;
        }
        for (int row = 0; fgets(line, sizeof line, in); row++) {
            if (row == 0) { /* the header, once */
                if (v == 0)
                    fprintf(f, "volume,%s", line);
                continue;
            }
            fprintf(f, "%s,%s", labels[v], line);
        }
        fclose(in);
    }
    if (st != MR_OK) {
        fclose(f);
        remove(tmp);
        return st;
    }
    return mr_close_commit(f, tmp, path);
}
