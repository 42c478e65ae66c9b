/* Building the index of an ISMRMRD file (see ismrmrd_h5.h, the passes): the acquisitions classified
 * by their flags and grouped into volumes (pass 1, the headers), the trajectories' range and units
 * (pass 2), the noise covariance (pass 3), and each volume's grid. This file owns the passes, the
 * volume table and the units detection; the reads themselves are io/ismrmrd_records.c's. */
#include "ismrmrd_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/child.h"
#include "../base/log.h"
#include "../base/noise_cov.h"

/* ISMRMRD_ACQ_* flag bits (ismrmrd.h): bit (value - 1) of head.flags */
#define ACQ_BIT(v) ((uint64_t)1 << ((v) - 1))
#define ACQ_IS_NOISE_MEASUREMENT ACQ_BIT(19)
#define ACQ_IS_PARALLEL_CALIBRATION ACQ_BIT(20)
#define ACQ_IS_PARALLEL_CALIBRATION_AND_IMAGING ACQ_BIT(21)
#define ACQ_IS_NAVIGATION_DATA ACQ_BIT(23)
#define ACQ_IS_PHASECORR_DATA ACQ_BIT(24)
#define ACQ_IS_HPFEEDBACK_DATA ACQ_BIT(26)
#define ACQ_IS_DUMMYSCAN_DATA ACQ_BIT(27)
#define ACQ_IS_RTFEEDBACK_DATA ACQ_BIT(28)
#define ACQ_IS_SURFACECOILCORRECTIONSCAN_DATA ACQ_BIT(29)
#define ACQ_IS_PHASE_STABILIZATION_REFERENCE ACQ_BIT(30)
#define ACQ_IS_PHASE_STABILIZATION ACQ_BIT(31)

/* The array p (capacity *cap elements of elem bytes) with room for element n: p itself, or p doubled
 * when full (from first elements); NULL when out of memory (p is kept). */
static void *room_for_one(void *p, int *cap, int n, int first, size_t elem)
{
    if (n < *cap)
        return p;
    const int c = *cap ? 2 * *cap : first;
    void *q = realloc(p, (size_t)c * elem);
    if (q)
        *cap = c;
    return q;
}

static mr_acq_kind classify(uint64_t f)
{
    if (f & ACQ_IS_NOISE_MEASUREMENT)
        return MR_ACQ_NOISE;
    if ((f & ACQ_IS_PARALLEL_CALIBRATION) && !(f & ACQ_IS_PARALLEL_CALIBRATION_AND_IMAGING))
        return MR_ACQ_CALIBRATION;
    if (f & ACQ_IS_NAVIGATION_DATA)
        return MR_ACQ_NAVIGATION;
    if (f & ACQ_IS_PHASECORR_DATA)
        return MR_ACQ_PHASECORR;
    if (f & (ACQ_IS_HPFEEDBACK_DATA | ACQ_IS_RTFEEDBACK_DATA))
        return MR_ACQ_FEEDBACK;
    if (f & ACQ_IS_DUMMYSCAN_DATA)
        return MR_ACQ_DUMMY;
    if (f & (ACQ_IS_SURFACECOILCORRECTIONSCAN_DATA | ACQ_IS_PHASE_STABILIZATION_REFERENCE |
             ACQ_IS_PHASE_STABILIZATION))
        return MR_ACQ_OTHER;
    return MR_ACQ_IMAGING;
}
/* ---- volumes ------------------------------------------------------------------------------------- */

static uint64_t key_hash(const vol_key *k)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < 7; i++) {
        h ^= k->v[i];
        h *= 1099511628211ull;
    }
    return h;
}

static mr_status rehash(mr_ismrmrd *r, int64_t nslots)
{
    int32_t *s = malloc((size_t)nslots * sizeof *s);
    if (!s)
        return mr_error(MR_ENOMEM, "%s: out of memory for the volume table", r->label);
    for (int64_t i = 0; i < nslots; i++)
        s[i] = -1;
    for (int v = 0; v < r->nvol; v++) {
        uint64_t h = key_hash(&r->vol[v].key) & (uint64_t)(nslots - 1);
        while (s[h] >= 0)
            h = (h + 1) & (uint64_t)(nslots - 1);
        s[h] = v;
    }
    free(r->slots);
    r->slots = s;
    r->nslots = nslots;
    return MR_OK;
}

/* Index of the volume with key k, created when new. */
static mr_status find_volume(mr_ismrmrd *r, const vol_key *k, int64_t acq, int *out)
{
    if (!r->slots || 2 * (int64_t)(r->nvol + 1) > r->nslots) {
        mr_status st = rehash(r, r->nslots ? 2 * r->nslots : 64);
        if (st != MR_OK)
            return st;
    }
    uint64_t h = key_hash(k) & (uint64_t)(r->nslots - 1);
    while (r->slots[h] >= 0) {
        if (memcmp(&r->vol[r->slots[h]].key, k, sizeof *k) == 0) {
            *out = r->slots[h];
            return MR_OK;
        }
        h = (h + 1) & (uint64_t)(r->nslots - 1);
    }
    if (r->nvol >= MR_ISMRMRD_MAX_VOLUMES)
        return mr_error(MR_EFORMAT, "%s: acquisition %lld starts volume %d; more than %d volumes", r->label,
                        (long long)acq, r->nvol + 1, MR_ISMRMRD_MAX_VOLUMES);
    volume *nv = room_for_one(r->vol, &r->cap_vol, r->nvol, 16, sizeof *nv);
    if (!nv)
        return mr_error(MR_ENOMEM, "%s: out of memory for the volume table", r->label);
    r->vol = nv;
    volume *v = &r->vol[r->nvol];
    memset(v, 0, sizeof *v);
    v->key = *k;
    r->slots[h] = r->nvol;
    *out = r->nvol++;
    return MR_OK;
}

static mr_status note_average(mr_ismrmrd *r, volume *v, uint16_t avg)
{
    for (int i = 0; i < v->navg; i++)
        if (v->avg[i] == avg)
            return MR_OK;
    uint16_t *na = room_for_one(v->avg, &v->cap_avg, v->navg, 4, sizeof *na);
    if (!na)
        return mr_error(MR_ENOMEM, "%s: out of memory", r->label);
    v->avg = na;
    v->avg[v->navg++] = avg;
    return MR_OK;
}

static int key_cmp(const void *a, const void *b)
{
    const volume *x = a, *y = b;
    for (int i = 0; i < 7; i++)
        if (x->key.v[i] != y->key.v[i])
            return x->key.v[i] < y->key.v[i] ? -1 : 1;
    return 0;
}

/* Sort the volumes by key (encoding, slice, contrast, phase, repetition, set, average) and renumber
 * acq_vol accordingly. */
static mr_status sort_volumes(mr_ismrmrd *r)
{
    for (int v = 0; v < r->nvol; v++)
        r->vol[v].info.average = (int)v; /* remember the old index */
    qsort(r->vol, (size_t)r->nvol, sizeof *r->vol, key_cmp);
    int32_t *map = malloc((size_t)(r->nvol ? r->nvol : 1) * sizeof *map);
    if (!map)
        return mr_error(MR_ENOMEM, "%s: out of memory", r->label);
    for (int v = 0; v < r->nvol; v++)
        map[r->vol[v].info.average] = v;
    for (int64_t i = 0; i < r->sum.acquisitions; i++)
        if (r->acq_vol[i] >= 0)
            r->acq_vol[i] = map[r->acq_vol[i]];
    free(map);
    free(r->slots);
    r->slots = NULL;
    r->nslots = 0;
    return MR_OK;
}
/* ---- pass 1: headers ------------------------------------------------------------------------------ */

static int mask_nonzero(const uint64_t *m)
{
    for (int i = 0; i < 16; i++)
        if (m[i])
            return 1;
    return 0;
}

/* idx counter value and the limit it must respect */
static mr_status check_limit(const mr_ismrmrd *r, int64_t acq, const mr_mrd_encoding *en, mr_mrd_limit_kind k,
                             unsigned value)
{
    const mr_mrd_limit *l = &en->limits[k];
    if (l->present && (int64_t)value > l->maximum)
        return mr_error(MR_EFORMAT, "%s: acquisition %lld: idx.%s = %u exceeds the header's encodingLimits %s maximum %lld",
                        r->label, (long long)acq, mr_mrd_limit_name(k), value, mr_mrd_limit_name(k),
                        (long long)l->maximum);
    return MR_OK;
}

static mr_status check_channels(mr_ismrmrd *r, int64_t acq, const mem_head *h, const char *kind)
{
    mr_ismrmrd_summary *s = &r->sum;
    if (h->active_channels < 1 || h->active_channels > MR_MAX_COILS)
        return mr_error(MR_EFORMAT, "%s: acquisition %lld (%s): active_channels is %u, expected 1..%d", r->label,
                        (long long)acq, kind, h->active_channels, MR_MAX_COILS);
    if (s->hdr.receiver_channels >= 0 && h->active_channels > s->hdr.receiver_channels)
        return mr_error(MR_EFORMAT, "%s: acquisition %lld (%s): %u active channels, but the header's receiverChannels "
                                    "is %lld",
                        r->label, (long long)acq, kind, h->active_channels, (long long)s->hdr.receiver_channels);
    if (s->channels == 0) {
        s->channels = h->active_channels;
        r->first_channels_acq = acq;
    } else if (h->active_channels != s->channels) {
        return mr_error(MR_EFORMAT, "%s: acquisition %lld (%s) has %u active channels, acquisition %lld has %lld",
                        r->label, (long long)acq, kind, h->active_channels, (long long)r->first_channels_acq,
                        (long long)s->channels);
    }
    if (mask_nonzero(h->channel_mask)) {
        if (!r->have_mask) {
            memcpy(r->mask, h->channel_mask, sizeof r->mask);
            r->have_mask = 1;
        } else if (memcmp(r->mask, h->channel_mask, sizeof r->mask) != 0) {
            return mr_error(MR_EFORMAT, "%s: acquisition %lld (%s): its channel_mask selects other coils than the "
                                        "earlier acquisitions'",
                            r->label, (long long)acq, kind);
        }
    }
    return MR_OK;
}

static mr_status add_imaging(mr_ismrmrd *r, int64_t acq, const mem_head *h)
{
    mr_ismrmrd_summary *s = &r->sum;
    const unsigned ns = h->number_of_samples;
    if (h->encoding_space_ref >= s->hdr.nencodings)
        return mr_error(MR_EFORMAT, "%s: acquisition %lld: encoding_space_ref %u, but the header has %d encoding(s)",
                        r->label, (long long)acq, h->encoding_space_ref, s->hdr.nencodings);
    const mr_mrd_encoding *en = &s->hdr.enc[h->encoding_space_ref];
    if (h->trajectory_dimensions == 0)
        return mr_error(MR_EFORMAT,
                        "%s: acquisition %lld has no trajectory (trajectory_dimensions 0; header trajectory '%s'): "
                        "mrirecon reads non-Cartesian acquisitions with trajectories only",
                        r->label, (long long)acq, en->trajectory[0] ? en->trajectory : "absent");
    if (h->trajectory_dimensions != 2 && h->trajectory_dimensions != 3)
        return mr_error(MR_EFORMAT, "%s: acquisition %lld: trajectory_dimensions is %u, expected 2 or 3", r->label,
                        (long long)acq, h->trajectory_dimensions);
    if (s->traj_dims == 0)
        s->traj_dims = h->trajectory_dimensions;
    else if (h->trajectory_dimensions != s->traj_dims)
        return mr_error(MR_EFORMAT, "%s: acquisition %lld: trajectory_dimensions %u, earlier acquisitions have %d",
                        r->label, (long long)acq, h->trajectory_dimensions, s->traj_dims);
    if ((unsigned)h->discard_pre + h->discard_post >= ns)
        return mr_error(MR_EFORMAT, "%s: acquisition %lld: discard_pre %u + discard_post %u leave none of its %u samples",
                        r->label, (long long)acq, h->discard_pre, h->discard_post, ns);
    if (h->center_sample >= ns)
        return mr_error(MR_EFORMAT, "%s: acquisition %lld: center_sample %u is not below number_of_samples %u",
                        r->label, (long long)acq, h->center_sample, ns);
    static const mr_mrd_limit_kind lk[] = {MR_LIMIT_AVERAGE, MR_LIMIT_SLICE, MR_LIMIT_CONTRAST, MR_LIMIT_PHASE,
                                           MR_LIMIT_REPETITION, MR_LIMIT_SET, MR_LIMIT_SEGMENT};
    const unsigned lv[] = {h->idx.average, h->idx.slice,      h->idx.contrast, h->idx.phase,
                           h->idx.repetition, h->idx.set, h->idx.segment};
    for (size_t i = 0; i < sizeof lk / sizeof lk[0]; i++) {
        mr_status st = check_limit(r, acq, en, lk[i], lv[i]);
        if (st != MR_OK)
            return st;
    }
    /* stack of stars: a 2D trajectory on a 3D encoded matrix, kz from kspace_encode_step_2 */
    if (h->trajectory_dimensions == 2 && en->encoded.matrix[2] > 1) {
        const mr_mrd_limit *l2 = &en->limits[MR_LIMIT_E2];
        int64_t center = l2->present ? l2->center : en->encoded.matrix[2] / 2;
        int64_t kz = (int64_t)h->idx.kspace_encode_step_2 - center;
        if (2 * llabs(kz) > en->encoded.matrix[2])
            return mr_error(MR_EFORMAT,
                            "%s: acquisition %lld: kspace_encode_step_2 %u (kz %lld about centre %lld) lies outside the "
                            "encoded matrix z = %lld",
                            r->label, (long long)acq, h->idx.kspace_encode_step_2, (long long)kz, (long long)center,
                            (long long)en->encoded.matrix[2]);
        s->stack = 1;
    }
    vol_key k = {{h->encoding_space_ref, h->idx.slice, h->idx.contrast, h->idx.phase, h->idx.repetition, h->idx.set,
                  r->opts.averages == MR_AVERAGES_SEPARATE ? h->idx.average : 0xffff}};
    int v = -1;
    mr_status st = find_volume(r, &k, acq, &v);
    if (st != MR_OK)
        return st;
    volume *vol = &r->vol[v];
    const int64_t kept = (int64_t)ns - h->discard_pre - h->discard_post;
    if (vol->info.samples > MR_MAX_SAMPLES - kept)
        return mr_error(MR_EFORMAT, "%s: acquisition %lld: volume (slice %u, contrast %u, repetition %u, ...) exceeds "
                                    "%lld samples",
                        r->label, (long long)acq, h->idx.slice, h->idx.contrast, h->idx.repetition,
                        (long long)MR_MAX_SAMPLES);
    if (vol->info.acquisitions == 0) {
        memcpy(vol->info.geometry.position, h->position, sizeof h->position);
        memcpy(vol->info.geometry.read_dir, h->read_dir, sizeof h->read_dir);
        memcpy(vol->info.geometry.phase_dir, h->phase_dir, sizeof h->phase_dir);
        memcpy(vol->info.geometry.slice_dir, h->slice_dir, sizeof h->slice_dir);
    }
    vol->info.samples += kept;
    vol->info.acquisitions++;
    if (s->imaging_dwell_us <= 0)
        s->imaging_dwell_us = h->sample_time_us;
    r->acq_vol[acq] = v;
    return note_average(r, vol, h->idx.average);
}

static mr_status pass_headers(mr_ismrmrd *r)
{
    mr_ismrmrd_summary *s = &r->sum;
    rec_head *heads = malloc(BLOCK * sizeof *heads);
    if (!heads)
        return mr_error(MR_ENOMEM, "%s: out of memory", r->label);
    mr_status st = MR_OK;
    for (int64_t start = 0; st == MR_OK && start < s->acquisitions; start += BLOCK) {
        int64_t n = s->acquisitions - start < BLOCK ? s->acquisitions - start : BLOCK;
        if ((st = ismrmrd_h5_read_heads(r, start, n, heads)) != MR_OK)
            break;
        for (int64_t i = 0; st == MR_OK && i < n; i++) {
            const mem_head *h = &heads[i].head;
            const int64_t acq = start + i;
            mr_acq_kind kind = classify(h->flags);
            s->count[kind]++;
            r->acq_vol[acq] = VOL_SKIPPED;
            if (kind != MR_ACQ_IMAGING && kind != MR_ACQ_NOISE)
                continue;
            for (int a = 0; a < 3; a++)
                if (!isfinite(h->position[a]) || !isfinite(h->read_dir[a]) || !isfinite(h->phase_dir[a]) ||
                    !isfinite(h->slice_dir[a]) || !isfinite(h->sample_time_us)) {
                    st = mr_error(MR_EFORMAT, "%s: acquisition %lld: non-finite position, direction or sample_time_us",
                                  r->label, (long long)acq);
                    break;
                }
            if (st != MR_OK)
                break;
            /* a dwell time (it scales the noise level: lambda); 0 when the writer did not know it */
            if (h->sample_time_us != 0 && !(h->sample_time_us >= 1e-3f && h->sample_time_us <= 1e6f)) {
                st = mr_error(MR_EFORMAT, "%s: acquisition %lld (%s): sample_time_us %g is not a dwell time (0 when "
                                          "unknown, else 0.001 to 1e6 microseconds)",
                              r->label, (long long)acq, mr_acq_kind_name(kind), (double)h->sample_time_us);
                break;
            }
            if (h->number_of_samples == 0) {
                st = mr_error(MR_EFORMAT, "%s: acquisition %lld (%s) has number_of_samples 0", r->label,
                              (long long)acq, mr_acq_kind_name(kind));
                break;
            }
            if ((st = check_channels(r, acq, h, mr_acq_kind_name(kind))) != MR_OK)
                break;
            r->declared_bytes += (double)h->number_of_samples *
                                 ((kind == MR_ACQ_IMAGING ? h->trajectory_dimensions : 0) + 2.0 * h->active_channels) *
                                 sizeof(float);
            if (kind == MR_ACQ_NOISE) {
                r->acq_vol[acq] = VOL_NOISE;
                if (s->noise_samples > MR_MAX_SAMPLES - h->number_of_samples) {
                    st = mr_error(MR_EFORMAT, "%s: the noise scans hold more than %lld samples", r->label,
                                  (long long)MR_MAX_SAMPLES);
                    break;
                }
                if (s->noise_samples == 0)
                    s->noise_dwell_us = h->sample_time_us;
                s->noise_samples += h->number_of_samples;
                continue;
            }
            st = add_imaging(r, acq, h);
        }
    }
    free(heads);
    if (st != MR_OK)
        return st;
    /* variable-length data live in the file's global heaps, which HDF5 never compresses: headers that
     * announce more bytes than the file has are refused before anything is allocated for them */
    hsize_t fsize = 0;
    if (H5Fget_filesize(r->file, &fsize) >= 0 && r->declared_bytes > (double)fsize)
        return mr_error(MR_EFORMAT, "%s: the acquisition headers announce %.0f bytes of trajectory and data, more than "
                                    "the file's %llu bytes",
                        r->label, r->declared_bytes, (unsigned long long)fsize);
    if (s->count[MR_ACQ_IMAGING] == 0)
        return mr_error(MR_EFORMAT, "%s: no imaging acquisitions (%lld acquisitions: %lld noise, %lld skipped by their "
                                    "flags)",
                        r->label, (long long)s->acquisitions, (long long)s->count[MR_ACQ_NOISE],
                        (long long)(s->acquisitions - s->count[MR_ACQ_NOISE]));
    return sort_volumes(r);
}

/* ---- grids and units ------------------------------------------------------------------------------ */

/* 1 when the encoding's volumes are 3D (3D trajectory or stack of stars on a 3D encoded matrix). */
static int enc_is_3d(const mr_ismrmrd *r, int e)
{
    const mr_mrd_encoding *en = &r->sum.hdr.enc[e];
    return en->encoded.matrix[2] > 1 && (r->sum.traj_dims == 3 || r->sum.stack);
}

/* Encoded / recon matrix and FOV of encoding e; z collapsed to 1 for 2D. */
void ismrmrd_h5_enc_spaces(const mr_ismrmrd *r, int e, int64_t nenc[3], double fenc[3], int64_t nrec[3],
                           double frec[3])
{
    const mr_mrd_encoding *en = &r->sum.hdr.enc[e];
    const int is3d = enc_is_3d(r, e);
    for (int a = 0; a < 3; a++) {
        nenc[a] = en->encoded.matrix[a];
        fenc[a] = en->encoded.have_fov ? en->encoded.fov_mm[a] : 0;
        nrec[a] = en->recon.have_matrix ? en->recon.matrix[a] : nenc[a];
        frec[a] = en->recon.have_fov ? en->recon.fov_mm[a] : fenc[a];
    }
    if (!is3d) {
        nenc[2] = 1;
        nrec[2] = 1;
    }
}

/* cycles per encoded FOV per unit of the stored value, on axis a */
double ismrmrd_h5_unit_factor(mr_traj_units u, int64_t n, double fov_mm)
{
    switch (u) {
    case MR_UNITS_NORMALIZED:
        return (double)n;
    case MR_UNITS_RADIANS:
        return (double)n / (2 * M_PI);
    case MR_UNITS_PER_M:
        return fov_mm / 1000.0;
    default:
        return 1.0;
    }
}

#define FIT_LO 0.4
#define FIT_HI 1.05

void mr_ismrmrd_units_fits(const mr_ismrmrd_summary *s, int e, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int u = MR_UNITS_CYCLES; u < MR_UNITS_COUNT && used < size; u++) {
        const double lo = s->units_fit_min[e][u], hi = s->units_fit[e][u];
        const char *name = mr_traj_units_name((mr_traj_units)u);
        int k;
        if (hi == 0)
            k = snprintf(buf + used, size - used, "%s%s n/a", used ? ", " : "", name);
        else if (hi - lo <= 1e-3 * hi)
            k = snprintf(buf + used, size - used, "%s%s %.3g", used ? ", " : "", name, hi);
        else
            k = snprintf(buf + used, size - used, "%s%s %.3g..%.3g", used ? ", " : "", name, lo, hi);
        if (k < 0)
            break;
        used += (size_t)k;
    }
}

static mr_status detect_units(mr_ismrmrd *r, int e)
{
    mr_ismrmrd_summary *s = &r->sum;
    int64_t nenc[3], nrec[3];
    double fenc[3], frec[3];
    ismrmrd_h5_enc_spaces(r, e, nenc, fenc, nrec, frec);
    const int naxes = s->traj_dims == 3 && nenc[2] > 1 ? 3 : 2; /* stored axes measured against the box */
    int have_fov = 1;
    for (int a = 0; a < naxes; a++)
        have_fov &= fenc[a] > 0;
    for (int u = MR_UNITS_CYCLES; u < MR_UNITS_COUNT; u++) {
        if (u == MR_UNITS_PER_M && !have_fov) {
            s->units_fit[e][u] = s->units_fit_min[e][u] = 0;
            continue;
        }
        double hi = 0, lo = INFINITY;
        for (int a = 0; a < naxes; a++) {
            /* the edge of the Nyquist box [-N/2, N/2] in this unit */
            double edge = 0.5 * (double)nenc[a] / ismrmrd_h5_unit_factor((mr_traj_units)u, nenc[a], fenc[a]);
            double f = s->kmax[e][a] / edge;
            hi = f > hi ? f : hi;
            lo = f < lo ? f : lo;
        }
        s->units_fit[e][u] = hi;
        s->units_fit_min[e][u] = lo;
    }
    if (r->opts.traj_units != MR_UNITS_AUTO) {
        if (r->opts.traj_units == MR_UNITS_PER_M && !have_fov)
            return mr_error(MR_EINVAL, "%s: trajectory units per-m need the encoded field of view, which the header "
                                       "of encoding %d does not give",
                            r->label, e);
        s->units[e] = r->opts.traj_units;
        s->units_detected[e] = 0;
        double fit = s->units_fit[e][r->opts.traj_units];
        if (fit > FIT_HI)
            mr_log(MR_LOG_WARN, "%s: encoding %d: with {traj-units} %s the trajectory reaches %.3g times the Nyquist "
                                "box edge",
                   r->label, e, mr_traj_units_name(r->opts.traj_units), fit);
        return MR_OK;
    }
    /* plausible units: on every axis the trajectory reaches between FIT_LO and FIT_HI of the box
     * edge; units that convert with the same factor (e.g. per-m with a 1000 mm FOV and cycles) are
     * one choice */
    int pick = -1, other = -1;
    for (int u = MR_UNITS_CYCLES; u < MR_UNITS_COUNT; u++) {
        if (!(s->units_fit_min[e][u] >= FIT_LO && s->units_fit[e][u] <= FIT_HI))
            continue;
        if (pick < 0) {
            pick = u;
            continue;
        }
        int same = 1;
        for (int a = 0; a < naxes; a++) {
            double f1 = ismrmrd_h5_unit_factor((mr_traj_units)pick, nenc[a], fenc[a]);
            double f2 = ismrmrd_h5_unit_factor((mr_traj_units)u, nenc[a], fenc[a]);
            same &= fabs(f1 - f2) <= 1e-6 * fabs(f1);
        }
        if (!same)
            other = u;
    }
    char fits[300] = "max |k| / Nyquist edge: ";
    mr_ismrmrd_units_fits(s, e, fits + strlen(fits), sizeof fits - strlen(fits));
    if (pick < 0)
        return mr_error(MR_EFORMAT,
                        "%s: encoding %d: the trajectory's range (max |k| %g, %g, %g) fits none of the units (%s; a "
                        "fit needs %.2f..%.2f on every axis): give them with {traj-units}",
                        r->label, e, s->kmax[e][0], s->kmax[e][1], s->kmax[e][2], fits, FIT_LO, FIT_HI);
    if (other >= 0)
        return mr_error(MR_EFORMAT, "%s: encoding %d: the trajectory units are ambiguous, %s or %s (%s): give them "
                                    "with {traj-units}",
                        r->label, e, mr_traj_units_name((mr_traj_units)pick), mr_traj_units_name((mr_traj_units)other),
                        fits);
    s->units[e] = (mr_traj_units)pick;
    s->units_detected[e] = 1;
    mr_log(MR_LOG_INFO, "%s: encoding %d: trajectory units detected: %s (%s)", r->label, e,
           mr_traj_units_name((mr_traj_units)pick), fits);
    return MR_OK;
}
/* ---- pass 2: trajectories ------------------------------------------------------------------------ */

static mr_status traj_record(mr_ismrmrd *r, int64_t acq, const mem_head *h, const hvl_t *traj, const hvl_t *data,
                             void *ctx)
{
    (void)data, (void)ctx;
    mr_ismrmrd_summary *s = &r->sum;
    const float *t = traj->p;
    const int td = h->trajectory_dimensions, e = h->encoding_space_ref;
    for (int64_t q = h->discard_pre; q < (int64_t)h->number_of_samples - h->discard_post; q++)
        for (int a = 0; a < td; a++) {
            const float v = t[q * td + a];
            if (!isfinite(v))
                return mr_error(MR_EFORMAT, "%s: acquisition %lld: trajectory value %g at sample %lld, axis %d",
                                r->label, (long long)acq, (double)v, (long long)q, a);
            s->kmax[e][a] = fabs(v) > s->kmax[e][a] ? fabs(v) : s->kmax[e][a];
        }
    s->have_imaging[e] = 1;
    return MR_OK;
}

static mr_status pass_traj(mr_ismrmrd *r)
{
    mr_ismrmrd_summary *s = &r->sum;
    mr_status st = ismrmrd_h5_scan_records(r, VOL_ANY_IMAGING, 1, 0, "trajectory", traj_record, NULL);
    if (st != MR_OK)
        return st;
    for (int e = 0; e < s->hdr.nencodings; e++) {
        if (!s->have_imaging[e])
            continue;
        if (s->traj_dims == 3 && !enc_is_3d(r, e) && s->kmax[e][2] > 1e-6 * fmax(s->kmax[e][0], s->kmax[e][1]))
            return mr_error(MR_EFORMAT, "%s: encoding %d: the trajectory has kz values up to %g, but the encoded "
                                        "matrix z is %lld (2D)",
                            r->label, e, s->kmax[e][2], (long long)s->hdr.enc[e].encoded.matrix[2]);
        if (s->kmax[e][0] == 0 && s->kmax[e][1] == 0)
            return mr_error(MR_EFORMAT, "%s: encoding %d: every trajectory value is 0", r->label, e);
        if ((st = detect_units(r, e)) != MR_OK)
            return st;
    }
    return MR_OK;
}

/* ---- pass 3: noise ----------------------------------------------------------------------------- */

typedef struct {
    double *psi;
    int warned;
} noise_ctx;

static mr_status noise_record(mr_ismrmrd *r, int64_t acq, const mem_head *h, const hvl_t *traj, const hvl_t *data,
                              void *ctx)
{
    (void)acq, (void)traj;
    noise_ctx *n = ctx;
    if (!n->warned && h->sample_time_us != r->sum.noise_dwell_us) {
        mr_log(MR_LOG_WARN, "%s: noise acquisitions have different sample times (%g and %g us)", r->label,
               (double)r->sum.noise_dwell_us, (double)h->sample_time_us);
        n->warned = 1;
    }
    mr_noise_cov_accumulate(n->psi, r->sum.channels, data->p, h->number_of_samples);
    return MR_OK;
}

static mr_status pass_noise(mr_ismrmrd *r)
{
    mr_ismrmrd_summary *s = &r->sum;
    const int64_t C = s->channels;
    if (s->count[MR_ACQ_NOISE] == 0)
        return MR_OK;
    noise_ctx n = {calloc((size_t)(C * C) * 2, sizeof(double)), 0};
    if (!n.psi)
        return mr_error(MR_ENOMEM, "%s: out of memory", r->label);
    mr_status st = ismrmrd_h5_scan_records(r, VOL_NOISE, 0, 1, "data", noise_record, &n);
    if (st != MR_OK) {
        free(n.psi);
        return st;
    }
    double *psi = n.psi;
    for (int64_t i = 0; i < 2 * C * C; i++)
        psi[i] /= (double)s->noise_samples;
    s->noise_cov = psi;
    s->noise_max_corr = mr_noise_max_correlation(psi, C);
    return MR_OK;
}

/* ---- volume geometry ------------------------------------------------------------------------------ */

static mr_status fill_volume_info(mr_ismrmrd *r)
{
    for (int v = 0; v < r->nvol; v++) {
        volume *vol = &r->vol[v];
        mr_volume_info *vi = &vol->info;
        const int e = vol->key.v[0];
        vi->encoding = e;
        vi->slice = vol->key.v[1];
        vi->contrast = vol->key.v[2];
        vi->phase = vol->key.v[3];
        vi->repetition = vol->key.v[4];
        vi->set = vol->key.v[5];
        vi->average = vol->key.v[6] == 0xffff ? -1 : vol->key.v[6];
        vi->averages = vol->navg;
        int64_t nenc[3], nrec[3];
        double fenc[3], frec[3];
        ismrmrd_h5_enc_spaces(r, e, nenc, fenc, nrec, frec);
        const int rec = r->opts.space == MR_SPACE_RECON;
        for (int a = 0; a < 3; a++) {
            vi->matrix[a] = rec ? nrec[a] : nenc[a];
            vi->fov_mm[a] = (float)(rec ? frec[a] : fenc[a]);
            vi->recon_matrix[a] = nrec[a];
            vi->recon_fov_mm[a] = (float)frec[a];
        }
        char what[1200];
        snprintf(what, sizeof what, "%s: encoding %d %s space", r->label, e, rec ? "recon" : "encoded");
        mr_status st = mr_matrix_check(vi->matrix, what);
        if (st != MR_OK)
            return MR_EFORMAT;
    }
    return MR_OK;
}
mr_status ismrmrd_h5_open_dataset(mr_ismrmrd *r)
{
    mr_ismrmrd_summary *s = &r->sum;
    char name[300];
    snprintf(name, sizeof name, "%s/xml", s->group);
    mr_status st = ismrmrd_h5_read_xml(r, name);
    if (st != MR_OK || (st = ismrmrd_h5_open_records(r, 1, 0, &s->acquisitions)) != MR_OK)
        return st;
    /* justified by the records the dataset stores (ismrmrd_h5_open_records) */
    mr_child_memory_allow((int64_t)((size_t)s->acquisitions * sizeof *r->acq_vol));
    r->acq_vol = malloc((size_t)s->acquisitions * sizeof *r->acq_vol);
    if (!r->acq_vol)
        return mr_error(MR_ENOMEM, "%s: out of memory for %lld acquisitions", r->label, (long long)s->acquisitions);
    if ((st = pass_headers(r)) != MR_OK || (st = fill_volume_info(r)) != MR_OK || (st = pass_traj(r)) != MR_OK ||
        (st = pass_noise(r)) != MR_OK)
        return st;
    return MR_OK;
}
