/* Reading one volume of an ISMRMRD file into an mr_kspace (see ismrmrd_h5.h, mr_ismrmrd_read_volume):
 * its acquisitions' kept samples, the trajectory converted to cycles/FOV of the chosen grid, readout
 * times, averages combined when their trajectories are identical, the noise level from the noise
 * scans. This file owns that conversion; the records come from io/ismrmrd_records.c. */
#include "ismrmrd_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"

/* ---- reading a volume ------------------------------------------------------------------------------ */

typedef struct {
    uint16_t average;
    int64_t offset, count; /* samples in the volume's arrays */
} acq_span;

/* Copy one acquisition's kept samples into ks at sample offset pos, converting the trajectory. */
static void copy_acquisition(const mem_head *h, const float *traj, const float *data,
                             const double f[3], int64_t kz_cycles, mr_kspace *ks, int64_t pos)
{
    const int td = h->trajectory_dimensions;
    const int64_t ns = h->number_of_samples, M = ks->nsamples;
    const int64_t q0 = h->discard_pre, q1 = ns - h->discard_post;
    const int is3d = ks->matrix[2] > 1;
    for (int64_t q = q0; q < q1; q++) {
        float *k = ks->traj + 3 * (pos + q - q0);
        k[0] = (float)((double)traj[q * td] * f[0]);
        k[1] = (float)((double)traj[q * td + 1] * f[1]);
        if (td == 3)
            k[2] = is3d ? (float)((double)traj[q * td + 2] * f[2]) : 0.0f;
        else
            k[2] = is3d ? (float)((double)kz_cycles * f[2]) : 0.0f;
    }
    for (int64_t c = 0; c < ks->ncoils; c++)
        memcpy(ks->data + 2 * (c * M + pos), data + 2 * (c * ns + q0), (size_t)(q1 - q0) * 2 * sizeof(float));
}

/* Average identical-trajectory averages in place (shrinks ks); 0 when they are not identical. */
static int combine_averages(mr_kspace *ks, const acq_span *sp, int64_t nacq, int navg)
{
    /* group spans by average, in file order */
    int64_t per = nacq / navg;
    if (per * navg != nacq)
        return 0;
    uint16_t *avgs = malloc((size_t)navg * sizeof *avgs);
    int64_t **lists = calloc((size_t)navg, sizeof *lists);
    int64_t *fill = calloc((size_t)navg, sizeof *fill);
    int ok = avgs && lists && fill;
    int na = 0;
    for (int64_t i = 0; ok && i < nacq; i++) {
        int a = 0;
        while (a < na && avgs[a] != sp[i].average)
            a++;
        if (a == na) {
            if (na == navg) {
                ok = 0;
                break;
            }
            avgs[na] = sp[i].average;
            lists[na] = malloc((size_t)per * sizeof **lists);
            if (!lists[na]) {
                ok = 0;
                break;
            }
            na++;
        }
        if (fill[a] == per) {
            ok = 0;
            break;
        }
        lists[a][fill[a]++] = i;
    }
    ok = ok && na == navg;
    /* the j-th acquisition of every average: same length and bit-identical trajectory */
    for (int64_t j = 0; ok && j < per; j++) {
        const acq_span *s0 = &sp[lists[0][j]];
        for (int a = 1; ok && a < navg; a++) {
            const acq_span *sa = &sp[lists[a][j]];
            ok = sa->count == s0->count &&
                 memcmp(ks->traj + 3 * sa->offset, ks->traj + 3 * s0->offset, (size_t)s0->count * 3 * sizeof(float)) ==
                     0;
        }
    }
    if (ok) {
        /* mean into the first average's samples, then compact in its order */
        const int64_t M = ks->nsamples;
        int64_t out = 0;
        for (int64_t j = 0; j < per; j++) {
            const acq_span *s0 = &sp[lists[0][j]];
            memmove(ks->traj + 3 * out, ks->traj + 3 * s0->offset, (size_t)s0->count * 3 * sizeof(float));
            if (ks->time)
                memmove(ks->time + out, ks->time + s0->offset, (size_t)s0->count * sizeof(float));
            out += s0->count;
        }
        const int64_t M2 = out;
        for (int64_t c = 0; c < ks->ncoils; c++) {
            float *d = ks->data + 2 * c * M;
            float *o = ks->data + 2 * c * M2; /* c * M2 <= c * M: forward compaction is safe */
            int64_t w = 0;
            for (int64_t j = 0; j < per; j++) {
                for (int64_t q = 0; q < sp[lists[0][j]].count; q++) {
                    double re = 0, im = 0;
                    for (int a = 0; a < navg; a++) {
                        const int64_t src = sp[lists[a][j]].offset + q;
                        re += d[2 * src];
                        im += d[2 * src + 1];
                    }
                    o[2 * w] = (float)(re / navg);
                    o[2 * w + 1] = (float)(im / navg);
                    w++;
                }
            }
        }
        ks->nsamples = M2;
    }
    for (int a = 0; lists && a < na; a++)
        free(lists[a]);
    free(lists);
    free(avgs);
    free(fill);
    return ok;
}

static const char *kind_for(const char *traj, int is3d, int stack)
{
    if (!strcmp(traj, "radial") || !strcmp(traj, "goldenangle")) {
        if (stack)
            return "stack-of-stars";
        if (is3d)
            return "kooshball";
        return strcmp(traj, "radial") ? "golden2d" : "radial2d";
    }
    if (!strcmp(traj, "spiral"))
        return stack ? "stack-of-spirals" : (is3d ? "spiral3d" : "spiral2d");
    return NULL;
}

typedef struct {
    mr_kspace *ks;
    acq_span *spans;
    int64_t max_acq, nacq, pos;
    const double *f;
    int64_t e2_center;
    int64_t untimed; /* acquisitions without a sample_time_us > 0 */
} volume_ctx;

/* Readout times of one acquisition's kept samples (docs/FORMAT.md 5, "Readout times"): the header's TE of
 * its contrast (the first TE when there are fewer) + (sample - center_sample) * sample_time_us. */
static void acquisition_times(const mr_mrd_header *hdr, const mem_head *h, float *t, volume_ctx *v)
{
    const double te = 1e-3 * hdr->te_ms[h->idx.contrast < hdr->nte ? h->idx.contrast : 0];
    const double dwell = 1e-6 * (double)h->sample_time_us;
    v->untimed += !(dwell > 0);
    for (int64_t q = h->discard_pre; q < (int64_t)h->number_of_samples - h->discard_post; q++)
        t[q - h->discard_pre] = (float)(te + (double)(q - h->center_sample) * dwell);
}

static mr_status volume_record(mr_ismrmrd *r, int64_t acq, const mem_head *h, const hvl_t *traj, const hvl_t *data,
                               void *ctx)
{
    volume_ctx *v = ctx;
    const int64_t kept = (int64_t)h->number_of_samples - h->discard_pre - h->discard_post;
    if (v->nacq >= v->max_acq || v->pos + kept > v->ks->nsamples)
        return mr_error(MR_EFORMAT, "%s: acquisition %lld disagrees with the headers read before", r->label,
                        (long long)acq);
    copy_acquisition(h, traj->p, data->p, v->f, (int64_t)h->idx.kspace_encode_step_2 - v->e2_center, v->ks, v->pos);
    if (v->ks->time)
        acquisition_times(&r->sum.hdr, h, v->ks->time + v->pos, v);
    v->spans[v->nacq].average = h->idx.average;
    v->spans[v->nacq].offset = v->pos;
    v->spans[v->nacq].count = kept;
    v->nacq++;
    v->pos += kept;
    return MR_OK;
}

mr_status mr_ismrmrd_read_volume(mr_ismrmrd *r, int index, mr_kspace **out)
{
    *out = NULL;
    if (index < 0 || index >= r->nvol)
        return mr_error(MR_EINVAL, "%s: volume %d does not exist (the file holds %d, 0..%d)", r->label, index,
                        r->nvol, r->nvol - 1);
    if (r->dset < 0)
        return mr_error(MR_EINVAL, "%s: volume %d: the index has no file to read from (mr_ismrmrd_attach)", r->label,
                        index);
    const mr_ismrmrd_summary *s = &r->sum;
    const mr_volume_info *vi = &r->vol[index].info;
    const int e = vi->encoding;
    const mr_mrd_encoding *en = &s->hdr.enc[e];
    mr_kspace *ks = NULL;
    mr_status st = mr_kspace_create(&ks, vi->matrix, vi->samples, s->channels);
    if (st != MR_OK)
        return st;
    /* the conversion factor to cycles per FOV of the chosen grid, per axis */
    int64_t nenc[3], nrec[3];
    double fenc[3], frec[3], f[3];
    ismrmrd_h5_enc_spaces(r, e, nenc, fenc, nrec, frec);
    for (int a = 0; a < 3; a++) {
        double u = (a == 2 && s->traj_dims == 2) ? 1.0 : ismrmrd_h5_unit_factor(s->units[e], nenc[a], fenc[a]);
        double sp = 1.0;
        if (r->opts.space == MR_SPACE_RECON)
            sp = (fenc[a] > 0 && frec[a] > 0) ? frec[a] / fenc[a] : (double)nrec[a] / (double)nenc[a];
        f[a] = u * sp * r->opts.traj_sign;
    }
    const int64_t e2_center = en->limits[MR_LIMIT_E2].present ? en->limits[MR_LIMIT_E2].center : nenc[2] / 2;

    volume_ctx vc = {ks, malloc((size_t)vi->acquisitions * sizeof(acq_span)), vi->acquisitions, 0, 0, f, e2_center, 0};
    acq_span *spans = vc.spans;
    if (s->hdr.nte > 0 && mr_kspace_alloc_time(ks) != MR_OK)
        st = MR_ENOMEM;
    else if (!spans)
        st = mr_error(MR_ENOMEM, "%s: out of memory", r->label);
    else
        st = ismrmrd_h5_scan_records(r, index, 1, 1, "trajectory/data", volume_record, &vc);
    const int64_t pos = vc.pos, nacq = vc.nacq;
    if (st == MR_OK && (pos != ks->nsamples || nacq != vi->acquisitions))
        st = mr_error(MR_EFORMAT, "%s: volume %d: read %lld samples of %lld acquisitions, the headers announced %lld "
                                  "of %lld",
                      r->label, index, (long long)pos, (long long)nacq, (long long)ks->nsamples,
                      (long long)vi->acquisitions);
    if (st != MR_OK) {
        free(spans);
        mr_kspace_free(ks);
        return st;
    }
    if (vi->average < 0 && vi->averages > 1) {
        if (combine_averages(ks, spans, nacq, vi->averages))
            mr_log(MR_LOG_INFO, "%s: volume %d: %d averages with identical trajectories averaged (%lld samples)",
                   r->label, index, vi->averages, (long long)ks->nsamples);
        else
            mr_log(MR_LOG_INFO, "%s: volume %d: %d averages with different trajectories pooled (%lld samples)",
                   r->label, index, vi->averages, (long long)ks->nsamples);
    }
    free(spans);
    if (vc.untimed && ks->time) { /* no times rather than wrong ones */
        mr_log(MR_LOG_INFO, "%s: volume %d: %lld acquisitions have no sample_time_us: no readout times", r->label,
               index, (long long)vc.untimed);
        free(ks->time);
        ks->time = NULL;
    }
    memcpy(ks->fov_mm, vi->fov_mm, sizeof ks->fov_mm);
    const char *kind = kind_for(en->trajectory, ks->matrix[2] > 1, s->stack);
    snprintf(ks->traj_kind, sizeof ks->traj_kind, "%s%s", kind ? "" : "ismrmrd-",
             kind ? kind : (en->trajectory[0] ? en->trajectory : "unknown"));
    mr_h5_text_clean(ks->traj_kind); /* the header's text, whatever it holds, as our files store names */
    if (s->noise_cov) {
        /* noise power per complex sample, scaled from the noise scans' to the imaging bandwidth */
        double tr = 0;
        for (int64_t c = 0; c < s->channels; c++)
            tr += s->noise_cov[2 * (c * s->channels + c)];
        double scale = (s->noise_dwell_us > 0 && s->imaging_dwell_us > 0)
                           ? (double)s->noise_dwell_us / (double)s->imaging_dwell_us
                           : 1.0;
        double sigma = sqrt(tr * scale / (2.0 * (double)s->channels));
        double p = 0;
        const int64_t nd = 2 * ks->nsamples * ks->ncoils;
        for (int64_t i = 0; i < nd; i++)
            p += (double)ks->data[i] * ks->data[i];
        p /= (double)(ks->nsamples * ks->ncoils);
        ks->noise_sigma = sigma;
        ks->snr_db = sigma > 0 && p > 0 ? 10 * log10(p / (2 * sigma * sigma)) : 0;
        ks->noise_seed = 0;
    }
    int64_t outside = mr_kspace_count_outside(ks, NULL);
    if (outside > ks->nsamples / 100)
        mr_log(MR_LOG_WARN, "%s: volume %d: %lld of %lld samples lie outside the Nyquist box of the %lldx%lldx%lld "
                            "matrix: check the trajectory units (%s)",
               r->label, index, (long long)outside, (long long)ks->nsamples, (long long)ks->matrix[0],
               (long long)ks->matrix[1], (long long)ks->matrix[2], mr_traj_units_name(s->units[e]));
    *out = ks;
    return MR_OK;
}
