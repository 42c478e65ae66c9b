/* mrirecon info: validate a k-space file of any input format (io/input.h: mrirecon HDF5, ISMRMRD,
 * BART) and print what it holds: text by default, one JSON object with --json. For ISMRMRD also the
 * header, the acquisitions by kind, the detected trajectory units, the noise scans and every
 * volume (all of them are read and validated). Exit 0 valid, 1 unreadable or malformed, 2 usage
 * error. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../io/json.h"
#include "../../io/image_io.h"
#include "../../io/fieldmap.h"
#include "../../io/input.h"
#include "../../solver/noise_est.h"
#include "commands.h"
#include "opts.h"
#include "read_cli.h"
#include "../pipeline/volumes.h"

typedef struct {
    double kmin[3], kmax[3], kabs_max;
    int64_t outside; /* samples outside the Nyquist box [-N/2, N/2] of some axis */
    double wmin, wmax, wsum;
    double tmin, tmax, blmin, blmax;
    double data_rms; /* sqrt(mean over coils and samples of |d|^2) */
    double rss_min, rss_max, rss_mean; /* coil maps: sqrt(sum_c |S_c|^2) over the voxels */
    mr_noise_est_result noise;         /* sigma estimated from the data (noise_ok), else noise_why */
    int noise_ok;
    char noise_why[300];
} scan_stats;

/* sigma from the data (solver/noise_est.h), whatever the file states: recon uses it when the file
 * states none */
static void estimate_noise(const mr_kspace *ks, scan_stats *s)
{
    s->noise_ok = mr_noise_estimate(ks->matrix, ks->traj, ks->nsamples, ks->data, ks->ncoils, NULL, &s->noise) == MR_OK;
    if (!s->noise_ok)
        snprintf(s->noise_why, sizeof s->noise_why, "%s", mr_last_error());
}

static void print_noise_estimate_text(const scan_stats *s)
{
    if (!s->noise_ok) {
        printf("noise (data)  not estimated: %s\n", s->noise_why);
        return;
    }
    const mr_noise_est_result *e = &s->noise;
    double lo = INFINITY, hi = 0;
    for (int64_t c = 0; c < e->ncoils; c++) {
        lo = fmin(lo, e->sigma_coil[c]);
        hi = fmax(hi, e->sigma_coil[c]);
    }
    printf("noise (data)  sigma %.4g +- %.2g per real/imag part, estimated from the data (local noise subspaces of %lld "
           "%s, %lld values per coil)",
           e->sigma, e->sigma_se, (long long)e->groups, mr_noise_nbhd_name(e->nbhd), (long long)e->values);
    if (e->ncoils > 1)
        printf("; per coil %.4g..%.4g", lo, hi);
    if (e->support_from_image)
        printf("; object half-widths %.2f x %.2f x %.2f of the FOV from a low-resolution image", e->support[0],
               e->support[1], e->support[2]);
    printf("\n");
}

static void min_max(const float *v, int64_t n, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        *lo = v[i] < *lo ? v[i] : *lo;
        *hi = v[i] > *hi ? v[i] : *hi;
    }
}

static void measure(const mr_kspace *ks, scan_stats *s)
{
    memset(s, 0, sizeof *s);
    const int64_t m = ks->nsamples;
    for (int a = 0; a < 3; a++) {
        s->kmin[a] = INFINITY;
        s->kmax[a] = -INFINITY;
    }
    for (int64_t i = 0; i < m; i++) {
        const float *k = ks->traj + 3 * i;
        double r2 = 0;
        for (int a = 0; a < 3; a++) {
            s->kmin[a] = k[a] < s->kmin[a] ? k[a] : s->kmin[a];
            s->kmax[a] = k[a] > s->kmax[a] ? k[a] : s->kmax[a];
            r2 += (double)k[a] * k[a];
        }
        s->kabs_max = sqrt(r2) > s->kabs_max ? sqrt(r2) : s->kabs_max;
    }
    s->outside = mr_kspace_count_outside(ks, NULL);
    if (ks->weights) {
        min_max(ks->weights, m, &s->wmin, &s->wmax);
        for (int64_t i = 0; i < m; i++)
            s->wsum += ks->weights[i];
    }
    if (ks->truth)
        min_max(ks->truth, mr_kspace_voxels(ks), &s->tmin, &s->tmax);
    if (ks->truth_bl)
        min_max(ks->truth_bl, mr_kspace_voxels(ks), &s->blmin, &s->blmax);
    double e = 0;
    const int64_t nd = 2 * m * ks->ncoils;
    for (int64_t i = 0; i < nd; i++)
        e += (double)ks->data[i] * ks->data[i];
    s->data_rms = sqrt(e / (double)(m * ks->ncoils));
    if (ks->sens) {
        const int64_t n = mr_kspace_voxels(ks);
        double sum = 0;
        s->rss_min = INFINITY;
        for (int64_t v = 0; v < n; v++) {
            const double r = mr_kspace_sens_rss(ks, v);
            s->rss_min = fmin(s->rss_min, r);
            s->rss_max = fmax(s->rss_max, r);
            sum += r;
        }
        s->rss_mean = sum / (double)n;
    }
}

/* A name from the file for a terminal: control characters shown as '?'; "unknown" when empty. */
static void print_name(const char *label, const char *s)
{
    printf("%-14s", label);
    if (!s[0])
        fputs("unknown", stdout);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        putchar(*p < 0x20 || *p == 0x7f ? '?' : *p);
    putchar('\n');
}

static void print_format(const mr_input *in)
{
    printf("file          %s\n", mr_input_path(in));
    switch (mr_input_get_format(in)) {
    case MR_INPUT_MRIRECON:
        printf("format        %s version %d\n", MR_FORMAT_NAME, MR_FORMAT_VERSION);
        break;
    case MR_INPUT_ISMRMRD:
        printf("format        ismrmrd (group %s)\n", mr_input_ismrmrd(in)->group);
        break;
    case MR_INPUT_BART:
        printf("format        bart (%s + %s, .hdr/.cfl)\n", mr_input_bart_traj(in), mr_input_bart_ksp(in));
        break;
    }
}

static void print_text(const mr_kspace *ks, const scan_stats *s)
{
    const int64_t *n = ks->matrix;
    const int is3d = mr_kspace_is_3d(ks);
    if (is3d)
        printf("matrix        %lld x %lld x %lld (3D)\n", (long long)n[0], (long long)n[1], (long long)n[2]);
    else
        printf("matrix        %lld x %lld (2D)\n", (long long)n[0], (long long)n[1]);
    if (ks->fov_mm[0] > 0 || ks->fov_mm[1] > 0 || ks->fov_mm[2] > 0)
        printf("fov_mm        %g x %g x %g\n", ks->fov_mm[0], ks->fov_mm[1], ks->fov_mm[2]);
    else
        printf("fov_mm        unknown\n");
    printf("samples       %lld\n", (long long)ks->nsamples);
    printf("coils         %lld\n", (long long)ks->ncoils);
    if (ks->sens)
        printf("coil maps     %lld x %lld x %lld x %lld, root-sum-of-squares min %g  mean %g  max %g\n",
               (long long)ks->ncoils, (long long)n[2], (long long)n[1], (long long)n[0], s->rss_min, s->rss_mean,
               s->rss_max);
    else
        printf("coil maps     absent%s\n", ks->ncoils > 1 ? " (recon estimates them from the data)" : "");
    print_name("trajectory", ks->traj_kind);
    print_name("phantom", ks->phantom);
    printf("k extent      kx [%g, %g]  ky [%g, %g]  kz [%g, %g]  max |k| %g\n", s->kmin[0], s->kmax[0], s->kmin[1],
           s->kmax[1], s->kmin[2], s->kmax[2], s->kabs_max);
    printf("nyquist box   [%g, %g] x [%g, %g] x [%g, %g]: ", -0.5 * (double)n[0], 0.5 * (double)n[0],
           -0.5 * (double)n[1], 0.5 * (double)n[1], -0.5 * (double)n[2], 0.5 * (double)n[2]);
    if (s->outside == 0)
        printf("all samples inside\n");
    else
        printf("%lld samples outside (%.3g%%)\n", (long long)s->outside,
               100.0 * (double)s->outside / (double)ks->nsamples);
    if (ks->weights)
        printf("weights       min %g  max %g  sum %g\n", s->wmin, s->wmax, s->wsum);
    else
        printf("weights       absent\n");
    printf("truth         %s", ks->truth || ks->truth_bl ? "" : "absent");
    if (ks->truth)
        printf("image [%g, %g]%s", s->tmin, s->tmax, ks->truth_bl ? "  " : "");
    if (ks->truth_bl)
        printf("bandlimited [%g, %g]", s->blmin, s->blmax);
    printf("\n");
    if (ks->noise_sigma >= 0)
        printf("noise         sigma %g per real/imag part  target SNR %g dB  seed %llu\n", ks->noise_sigma,
               ks->snr_db, (unsigned long long)ks->noise_seed);
    else
        printf("noise         unknown\n");
    print_noise_estimate_text(s);
    printf("data rms      %g\n", s->data_rms);
    double flo, fhi, tlo, thi;
    mr_kspace_field_range(ks, &flo, &fhi, &tlo, &thi);
    if (ks->time)
        printf("readout time  %g .. %g ms\n", 1e3 * tlo, 1e3 * thi);
    else
        printf("readout time  absent (no field-map correction possible)\n");
    if (ks->fieldmap)
        printf("field map     %g .. %g Hz\n", flo, fhi);
    else
        printf("field map     absent\n");
}

/* JSON on stdout through io/json.h (one escaping for every JSON mrirecon writes) */
static void json_string(const char *s) { mr_json_string(stdout, s); }

/* A JSON number, or null where JSON has none (infinities). */
static void json_number(double v) { mr_json_number(stdout, v, 9); }

static void json_key(const char *key, int first)
{
    printf("%s\n  ", first ? "" : ",");
    json_string(key);
    printf(": ");
}

/* "key": "text", or "key": null for an empty (unknown) string */
static void json_text_or_null(const char *key, const char *text)
{
    json_key(key, 0);
    if (text[0])
        json_string(text);
    else
        printf("null");
}

/* "key": [lo, hi], or "key": null when absent */
static void json_pair(const char *key, int present, double lo, double hi)
{
    json_key(key, 0);
    if (!present) {
        printf("null");
        return;
    }
    printf("[");
    json_number(lo);
    printf(", ");
    json_number(hi);
    printf("]");
}

static void print_noise_estimate_json(const scan_stats *s)
{
    json_key("noise_estimate", 0);
    if (!s->noise_ok) {
        printf("{\"sigma\": null, \"error\": ");
        json_string(s->noise_why);
        printf("}");
        return;
    }
    const mr_noise_est_result *e = &s->noise;
    printf("{\"sigma\": ");
    json_number(e->sigma);
    printf(", \"standard_error\": ");
    json_number(e->sigma_se);
    printf(", \"source\": \"data\", \"method\": \"local noise subspaces\", \"neighbourhoods\": ");
    json_string(mr_noise_nbhd_name(e->nbhd));
    printf(", \"groups\": %lld, \"values_per_coil\": %lld, \"support\": [%.9g, %.9g, %.9g], "
           "\"support_from_image\": %s, \"sigma_per_coil\": [",
           (long long)e->groups, (long long)e->values, e->support[0], e->support[1], e->support[2],
           e->support_from_image ? "true" : "false");
    for (int64_t c = 0; c < e->ncoils; c++) {
        printf("%s", c ? ", " : "");
        json_number(e->sigma_coil[c]);
    }
    printf("]}");
}

/* the ISMRMRD part of the text output */
static void print_ismrmrd_text(const mr_input *in, const double *vol_rms, int detail, int white)
{
    const mr_ismrmrd_summary *s = mr_input_ismrmrd(in);
    const mr_mrd_header *h = &s->hdr;
    if (h->vendor[0] || h->model[0] || h->field_strength_t > 0) {
        printf("system        %s %s", h->vendor[0] ? h->vendor : "", h->model[0] ? h->model : "");
        if (h->field_strength_t > 0)
            printf(" %g T", h->field_strength_t);
        printf("\n");
    }
    for (int e = 0; e < h->nencodings; e++) {
        const mr_mrd_encoding *en = &h->enc[e];
        printf("encoding %-4d trajectory %s, encoded %lldx%lldx%lld (FOV %gx%gx%g mm), recon %lldx%lldx%lld (FOV "
               "%gx%gx%g mm)\n",
               e, en->trajectory[0] ? en->trajectory : "unknown", (long long)en->encoded.matrix[0],
               (long long)en->encoded.matrix[1], (long long)en->encoded.matrix[2], en->encoded.fov_mm[0],
               en->encoded.fov_mm[1], en->encoded.fov_mm[2],
               (long long)(en->recon.have_matrix ? en->recon.matrix[0] : en->encoded.matrix[0]),
               (long long)(en->recon.have_matrix ? en->recon.matrix[1] : en->encoded.matrix[1]),
               (long long)(en->recon.have_matrix ? en->recon.matrix[2] : en->encoded.matrix[2]),
               en->recon.have_fov ? en->recon.fov_mm[0] : en->encoded.fov_mm[0],
               en->recon.have_fov ? en->recon.fov_mm[1] : en->encoded.fov_mm[1],
               en->recon.have_fov ? en->recon.fov_mm[2] : en->encoded.fov_mm[2]);
        if (s->have_imaging[e]) {
            char fits[300];
            mr_ismrmrd_units_fits(s, e, fits, sizeof fits);
            printf("  traj units  %s (%s; max |k| / Nyquist edge: %s)\n", mr_traj_units_name(s->units[e]),
                   s->units_detected[e] ? "detected" : "given", fits);
        }
    }
    printf("acquisitions  %lld: imaging %lld, noise %lld", (long long)s->acquisitions,
           (long long)s->count[MR_ACQ_IMAGING], (long long)s->count[MR_ACQ_NOISE]);
    for (int k = MR_ACQ_CALIBRATION; k < MR_ACQ_KINDS; k++)
        if (s->count[k])
            printf(", %s %lld (skipped)", mr_acq_kind_name((mr_acq_kind)k), (long long)s->count[k]);
    printf("\n");
    printf("channels      %lld, trajectory dimensions %d%s\n", (long long)s->channels, s->traj_dims,
           s->stack ? " (kz from kspace_encode_step_2)" : "");
    if (s->noise_cov) {
        double lo = INFINITY, hi = 0;
        for (int64_t c = 0; c < s->channels; c++) {
            double v = sqrt(s->noise_cov[2 * (c * s->channels + c)] / 2);
            lo = fmin(lo, v);
            hi = fmax(hi, v);
        }
        printf("noise scans   %lld acquisitions, %lld samples per coil, sample time %g us (imaging %g us); noise "
               "sigma per coil %g..%g, largest correlation %.3f; prewhitening %s\n",
               (long long)s->count[MR_ACQ_NOISE], (long long)s->noise_samples, (double)s->noise_dwell_us,
               (double)s->imaging_dwell_us, lo, hi, s->noise_max_corr,
               white && s->channels > 1 ? "on" : (white ? "off (one coil)" : "off (--prewhiten off)"));
    } else {
        printf("noise scans   none (no prewhitening)\n");
    }
    const int nv = mr_input_nvolumes(in);
    printf("volumes       %d\n", nv);
    printf("  %5s %3s %5s %8s %5s %10s %3s %7s %12s %12s %14s %12s\n", "index", "enc", "slice", "contrast", "phase",
           "repetition", "set", "average", "acquisitions", "samples", "matrix", "data rms");
    for (int v = 0; v < nv; v++) {
        const mr_volume_info *vi = mr_input_volume(in, v);
        char mat[64], avg[16];
        snprintf(mat, sizeof mat, "%lldx%lldx%lld", (long long)vi->matrix[0], (long long)vi->matrix[1],
                 (long long)vi->matrix[2]);
        if (vi->average >= 0)
            snprintf(avg, sizeof avg, "%d", vi->average);
        else
            snprintf(avg, sizeof avg, "all(%d)", vi->averages);
        printf("  %5d %3d %5d %8d %5d %10d %3d %7s %12lld %12lld %14s %12.6g%s\n", v, vi->encoding, vi->slice,
               vi->contrast, vi->phase, vi->repetition, vi->set, avg, (long long)vi->acquisitions,
               (long long)vi->samples, mat, vol_rms[v], v == detail ? "  *" : "");
    }
    printf("volume %-6d (* above)\n", detail);
}

static void print_ismrmrd_json(const mr_input *in, const double *vol_rms, int white)
{
    const mr_ismrmrd_summary *s = mr_input_ismrmrd(in);
    json_key("ismrmrd", 0);
    printf("{\"group\": ");
    json_string(s->group);
    printf(", \"acquisitions\": %lld, \"counts\": {", (long long)s->acquisitions);
    for (int k = 0; k < MR_ACQ_KINDS; k++)
        printf("%s\"%s\": %lld", k ? ", " : "", mr_acq_kind_name((mr_acq_kind)k), (long long)s->count[k]);
    printf("}, \"channels\": %lld, \"trajectory_dimensions\": %d, \"encodings\": [", (long long)s->channels,
           s->traj_dims);
    for (int e = 0; e < s->hdr.nencodings; e++) {
        const mr_mrd_encoding *en = &s->hdr.enc[e];
        printf("%s{\"trajectory\": ", e ? ", " : "");
        json_string(en->trajectory);
        printf(", \"encoded_matrix\": [%lld, %lld, %lld], \"encoded_fov_mm\": [%.9g, %.9g, %.9g]",
               (long long)en->encoded.matrix[0], (long long)en->encoded.matrix[1], (long long)en->encoded.matrix[2],
               en->encoded.fov_mm[0], en->encoded.fov_mm[1], en->encoded.fov_mm[2]);
        if (s->have_imaging[e]) {
            printf(", \"traj_units\": \"%s\", \"traj_units_detected\": %s, \"units_fit\": {",
                   mr_traj_units_name(s->units[e]), s->units_detected[e] ? "true" : "false");
            for (int u = MR_UNITS_CYCLES; u < MR_UNITS_COUNT; u++) {
                printf("%s\"%s\": [", u > MR_UNITS_CYCLES ? ", " : "", mr_traj_units_name((mr_traj_units)u));
                json_number(s->units_fit_min[e][u]);
                printf(", ");
                json_number(s->units_fit[e][u]);
                printf("]");
            }
            printf("}");
        }
        printf("}");
    }
    printf("], \"noise\": ");
    if (s->noise_cov) {
        printf("{\"acquisitions\": %lld, \"samples_per_coil\": %lld, \"max_correlation\": ",
               (long long)s->count[MR_ACQ_NOISE], (long long)s->noise_samples);
        json_number(s->noise_max_corr);
        printf(", \"prewhitening\": %s}", white && s->channels > 1 ? "true" : "false");
    } else {
        printf("null");
    }
    printf("}");
    json_key("volumes", 0);
    printf("[");
    for (int v = 0; v < mr_input_nvolumes(in); v++) {
        const mr_volume_info *vi = mr_input_volume(in, v);
        printf("%s\n    {\"index\": %d, \"encoding\": %d, \"slice\": %d, \"contrast\": %d, \"phase\": %d, "
               "\"repetition\": %d, \"set\": %d, \"average\": %d, \"averages\": %d, \"acquisitions\": %lld, "
               "\"samples\": %lld, \"matrix\": [%lld, %lld, %lld], \"data_rms\": ",
               v ? "," : "", v, vi->encoding, vi->slice, vi->contrast, vi->phase, vi->repetition, vi->set,
               vi->average, vi->averages, (long long)vi->acquisitions, (long long)vi->samples,
               (long long)vi->matrix[0], (long long)vi->matrix[1], (long long)vi->matrix[2]);
        json_number(vol_rms[v]);
        printf("}");
    }
    printf("]");
}

static void print_json(const mr_input *in, const mr_kspace *ks, const scan_stats *s, const double *vol_rms,
                       int detail, int white)
{
    printf("{");
    json_key("file", 1);
    json_string(mr_input_path(in));
    json_key("format", 0);
    json_string(mr_input_format_name(mr_input_get_format(in)));
    if (mr_input_get_format(in) == MR_INPUT_MRIRECON) {
        json_key("version", 0);
        printf("%d", MR_FORMAT_VERSION);
    }
    if (mr_input_get_format(in) == MR_INPUT_ISMRMRD) {
        print_ismrmrd_json(in, vol_rms, white);
        json_key("volume", 0);
        printf("%d", detail);
    }
    json_key("matrix", 0);
    printf("[%lld, %lld, %lld]", (long long)ks->matrix[0], (long long)ks->matrix[1], (long long)ks->matrix[2]);
    json_key("dims", 0);
    printf("%d", mr_kspace_is_3d(ks) ? 3 : 2);
    json_key("fov_mm", 0);
    if (ks->fov_mm[0] > 0 || ks->fov_mm[1] > 0 || ks->fov_mm[2] > 0)
        printf("[%.9g, %.9g, %.9g]", ks->fov_mm[0], ks->fov_mm[1], ks->fov_mm[2]);
    else
        printf("null");
    json_key("samples", 0);
    printf("%lld", (long long)ks->nsamples);
    json_key("coils", 0);
    printf("%lld", (long long)ks->ncoils);
    json_key("coil_maps", 0);
    if (ks->sens) {
        printf("{\"shape\": [%lld, %lld, %lld, %lld], \"rss_min\": ", (long long)ks->ncoils, (long long)ks->matrix[2],
               (long long)ks->matrix[1], (long long)ks->matrix[0]);
        json_number(s->rss_min);
        printf(", \"rss_mean\": ");
        json_number(s->rss_mean);
        printf(", \"rss_max\": ");
        json_number(s->rss_max);
        printf("}");
    } else {
        printf("null");
    }
    json_text_or_null("trajectory", ks->traj_kind);
    json_text_or_null("phantom", ks->phantom);
    json_pair("kx_range", 1, s->kmin[0], s->kmax[0]);
    json_pair("ky_range", 1, s->kmin[1], s->kmax[1]);
    json_pair("kz_range", 1, s->kmin[2], s->kmax[2]);
    json_key("k_abs_max", 0);
    json_number(s->kabs_max);
    json_key("samples_outside_nyquist_box", 0);
    printf("%lld", (long long)s->outside);
    json_key("weights", 0);
    if (ks->weights) {
        printf("{\"min\": ");
        json_number(s->wmin);
        printf(", \"max\": ");
        json_number(s->wmax);
        printf(", \"sum\": ");
        json_number(s->wsum);
        printf("}");
    } else {
        printf("null");
    }
    double flo, fhi, tlo, thi;
    mr_kspace_field_range(ks, &flo, &fhi, &tlo, &thi);
    json_pair("readout_time_range_s", ks->time != NULL, tlo, thi);
    json_pair("fieldmap_range_hz", ks->fieldmap != NULL, flo, fhi);
    json_pair("truth_image_range", ks->truth != NULL, s->tmin, s->tmax);
    json_pair("truth_bandlimited_range", ks->truth_bl != NULL, s->blmin, s->blmax);
    json_key("noise", 0);
    if (ks->noise_sigma >= 0) {
        printf("{\"sigma\": ");
        json_number(ks->noise_sigma);
        printf(", \"snr_db\": ");
        json_number(ks->snr_db);
        printf(", \"seed\": %llu}", (unsigned long long)ks->noise_seed);
    } else {
        printf("null");
    }
    print_noise_estimate_json(s);
    json_key("data_rms", 0);
    json_number(s->data_rms);
    printf("\n}\n");
}

/* info on an image (io/image_io.h): its format, grid, voxel size, placement and intensity range. */
static int image_info(const char *path, int json)
{
    mr_image *im = NULL;
    if (mr_image_read(path, &im) != MR_OK) {
        fprintf(stderr, "mrirecon info: %s\n", mr_last_error());
        return MR_EXIT_FAILURE;
    }
    const int64_t n = im->matrix[0] * im->matrix[1] * im->matrix[2];
    double mx = 0;
    for (int64_t v = 0; v < n; v++)
        mx = fmax(mx, hypot(im->data[2 * v], im->data[2 * v + 1]));
    double d[3], A[3][4];
    mr_voxel_size_mm(im->matrix, im->fov_mm, d);
    mr_geometry_affine(im->matrix, im->fov_mm, im->has_geometry ? &im->geometry : NULL, A);
    if (json) {
        printf("{\n  \"kind\": \"image\",\n  \"matrix\": [%lld, %lld, %lld],\n  \"fov_mm\": [%.9g, %.9g, %.9g],\n"
               "  \"voxel_mm\": [%.9g, %.9g, %.9g],\n  \"scanner_geometry\": %s,\n  \"max_magnitude\": %.9g\n}\n",
               (long long)im->matrix[0], (long long)im->matrix[1], (long long)im->matrix[2], (double)im->fov_mm[0],
               (double)im->fov_mm[1], (double)im->fov_mm[2], d[0], d[1], d[2], im->has_geometry ? "true" : "false",
               mx);
    } else {
        printf("%s: image %lldx%lldx%lld, voxel %.4g x %.4g x %.4g mm%s, max |value| %.6g\n", path,
               (long long)im->matrix[0], (long long)im->matrix[1], (long long)im->matrix[2], d[0], d[1], d[2],
               im->fov_mm[0] > 0 ? "" : " (FOV unknown)", mx);
        printf("placement (%s): voxel (0,0,0) at LPS (%.2f, %.2f, %.2f) mm; x along (%.3f, %.3f, %.3f), y along "
               "(%.3f, %.3f, %.3f)\n",
               im->has_geometry ? "the scanner's" : "the default, docs/FORMAT.md Orientation", A[0][3], A[1][3], A[2][3],
               A[0][0] / d[0], A[1][0] / d[0], A[2][0] / d[0], A[0][1] / d[1], A[1][1] / d[1], A[2][1] / d[1]);
        if (im->method[0])
            printf("method: %s\n", im->method);
    }
    mr_image_free(im);
    return fflush(stdout) == 0 && !ferror(stdout) ? MR_EXIT_OK : MR_EXIT_FAILURE;
}

int mr_cmd_info(int argc, char **argv)
{
    int json = 0, verbose = 0, quiet = 0, volume = 0;
    mr_read_cli rc;
    mr_read_cli_init(&rc);
    const mr_opt opts[] = {
        {"json", 0, MR_OPT_FLAG, &json, NULL, "print one JSON object instead of text", NULL, 0, -1},
        {"volume", 0, MR_OPT_INT, &volume, "N", "the volume whose k-space statistics are printed (ISMRMRD)", NULL, 0,
         1e6},
        MR_READ_CLI_OPTS(&rc),
        {"verbose", 'v', MR_OPT_FLAG, &verbose, NULL, "more diagnostics on stderr", NULL, 0, -1},
        {"quiet", 'q', MR_OPT_FLAG, &quiet, NULL, "only errors on stderr", NULL, 0, -1},
    };
    const mr_cmd_spec spec = {
        "info",
        "SCAN",
        "Validate a k-space file and print what it holds.",
        "SCAN is recognised by its content: mrirecon HDF5, ISMRMRD (.h5/.mrd with /dataset) or a BART pair\n"
        "(NAME_traj + NAME_ksp [+ NAME_sens] .hdr/.cfl, given by either file or the prefix). Reads the whole\n"
        "file with the same checks as every other command (docs/FORMAT.md) and prints its matrix, sample and\n"
        "coil counts, the coil maps (shape, root-sum-of-squares range) when the file has them,\n"
        "trajectory extent against the Nyquist box [-N/2, N/2], weights, truth images, noise level and data\n"
        "RMS, and the noise level estimated from the data (docs/RECON.md, \"Noise level from the data\"). For\n"
        "ISMRMRD also the header's encodings, the acquisitions by kind (noise, skipped navigator,\n"
        "calibration, ... scans), the trajectory units used (detected or given) with how well each unit fits,\n"
        "the noise scans and every volume (slice, contrast, phase, repetition, set, average); the statistics\n"
        "are those of --volume N, prewhitened as recon and convert read it (--prewhiten off: as stored).\n"
        "An image (our HDF5 image, NIfTI-1, a BART array [X Y Z]) is described instead: grid, voxel size,\n"
        "placement (docs/FORMAT.md, Orientation) and largest magnitude.\n"
        "Exit 1 when the file is unreadable or malformed.",
        opts,
        (int)(sizeof opts / sizeof opts[0]),
        1,
        1,
    };
    mr_opts_result res;
    int code = mr_opts_begin(&spec, argc, argv, &res, &verbose, &quiet);
    if (code != MR_OPTS_GO)
        return code;
    const char *path = res.positional[0];
    if (!mr_opts_given(&spec, &res, "traj") && mr_image_probe(path)) { /* an image: no k-space options apply */
        for (int i = 0; i < spec.nopts; i++)
            if (res.given[i] && strcmp(opts[i].name, "json") && strcmp(opts[i].name, "verbose") &&
                strcmp(opts[i].name, "quiet")) {
                code = mr_opts_usage(&spec, "--%s applies to k-space input; %s is an image", opts[i].name, path);
                mr_opts_free(&res);
                return code;
            }
        code = image_info(path, json);
        mr_opts_free(&res);
        return code;
    }
    mr_read_opts ro;
    int white = 1;
    if (mr_read_cli_apply(&rc, &ro, &white) != MR_OK || mr_read_cli_check(&spec, &res, &ro, path) != MR_OK) {
        mr_opts_free(&res);
        return mr_opts_usage(&spec, "%s", mr_last_error());
    }
    mr_input *in = NULL;
    mr_kspace *ks = NULL;
    double *rms = NULL;
    mr_status st = mr_input_open(path, &ro, &in);
    const int nv = st == MR_OK ? mr_input_nvolumes(in) : 0;
    if (st == MR_OK && volume >= nv)
        st = mr_error(MR_EINVAL, "%s: --volume %d, but the file holds %d volume(s) (0..%d)", path, volume, nv, nv - 1);
    if (st == MR_OK && !(rms = calloc((size_t)nv, sizeof *rms)))
        st = mr_error(MR_ENOMEM, "out of memory");
    scan_stats s;
    memset(&s, 0, sizeof s);
    /* every volume is read (validated); the statistics of the chosen one are kept */
    for (int v = 0; st == MR_OK && v < nv; v++) {
        mr_kspace *k = NULL;
        if ((st = mr_volume_read(in, v, white, &k, NULL)) != MR_OK)
            break;
        scan_stats sv;
        measure(k, &sv);
        rms[v] = sv.data_rms;
        if (v == volume) {
            s = sv;
            estimate_noise(k, &s);
            ks = k;
        } else {
            mr_kspace_free(k);
        }
    }
    if (st != MR_OK) {
        fprintf(stderr, "mrirecon info: %s\n", mr_last_error());
        mr_kspace_free(ks);
        mr_input_close(in);
        free(rms);
        mr_opts_free(&res);
        return MR_EXIT_FAILURE;
    }
    if (json) {
        print_json(in, ks, &s, rms, volume, white);
    } else {
        print_format(in);
        if (mr_input_get_format(in) == MR_INPUT_ISMRMRD)
            print_ismrmrd_text(in, rms, volume, white);
        print_text(ks, &s);
    }
    mr_noise_est_result_free(&s.noise);
    mr_kspace_free(ks);
    mr_input_close(in);
    free(rms);
    mr_opts_free(&res);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "mrirecon info: cannot write to stdout\n");
        return MR_EXIT_FAILURE;
    }
    return MR_EXIT_OK;
}
