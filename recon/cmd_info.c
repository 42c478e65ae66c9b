/* mrirecon info: validate a k-space file (mr_kspace_read) and print what it holds: text by default,
 * one JSON object with --json. Exit 0 valid, 1 unreadable or malformed, 2 usage error. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../io/kspace_h5.h"
#include "commands.h"
#include "opts.h"

typedef struct {
    double kmin[3], kmax[3], kabs_max;
    int64_t outside; /* samples outside the Nyquist box [-N/2, N/2] of some axis */
    double wmin, wmax, wsum;
    double tmin, tmax, blmin, blmax;
    double data_rms; /* sqrt(mean over coils and samples of |d|^2) */
} scan_stats;

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

static void print_text(const char *path, const mr_kspace *ks, const scan_stats *s)
{
    const int64_t *n = ks->matrix;
    const int is3d = mr_kspace_is_3d(ks);
    printf("file          %s\n", path);
    printf("format        %s version %d\n", MR_FORMAT_NAME, MR_FORMAT_VERSION);
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
    printf("data rms      %g\n", s->data_rms);
}

static void json_string(const char *s)
{
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if (*p < 0x20)
            printf("\\u%04x", *p);
        else
            putchar(*p);
    }
    putchar('"');
}

/* A JSON number, or null where JSON has none (infinities). */
static void json_number(double v)
{
    if (isfinite(v))
        printf("%.9g", v);
    else
        printf("null");
}

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

static void print_json(const char *path, const mr_kspace *ks, const scan_stats *s)
{
    printf("{");
    json_key("file", 1);
    json_string(path);
    json_key("format", 0);
    json_string(MR_FORMAT_NAME);
    json_key("version", 0);
    printf("%d", MR_FORMAT_VERSION);
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
    json_key("data_rms", 0);
    json_number(s->data_rms);
    printf("\n}\n");
}

int mr_cmd_info(int argc, char **argv)
{
    int json = 0, verbose = 0, quiet = 0;
    const mr_opt opts[] = {
        {"json", 0, MR_OPT_FLAG, &json, NULL, "print one JSON object instead of text", NULL, 0, -1},
        {"verbose", 'v', MR_OPT_FLAG, &verbose, NULL, "more diagnostics on stderr", NULL, 0, -1},
        {"quiet", 'q', MR_OPT_FLAG, &quiet, NULL, "only errors on stderr", NULL, 0, -1},
    };
    const mr_cmd_spec spec = {
        "info",
        "SCAN.h5",
        "Validate a k-space file and print what it holds.",
        "Reads the whole file with the same checks as every other command (docs/FORMAT.md) and prints\n"
        "its matrix, sample and coil counts, trajectory extent against the Nyquist box [-N/2, N/2],\n"
        "weights, truth images, noise level and data RMS. Exit 1 when the file is unreadable or malformed.",
        opts,
        (int)(sizeof opts / sizeof opts[0]),
        1,
        1,
    };
    mr_opts_result res;
    int rc = mr_opts_begin(&spec, argc, argv, &res, &verbose, &quiet);
    if (rc != MR_OPTS_GO)
        return rc;
    const char *path = res.positional[0];
    mr_kspace *ks = NULL;
    mr_status st = mr_kspace_read(path, &ks);
    if (st != MR_OK) {
        fprintf(stderr, "mrirecon info: %s\n", mr_last_error());
        mr_opts_free(&res);
        return MR_EXIT_FAILURE;
    }
    scan_stats s;
    measure(ks, &s);
    if (json)
        print_json(path, ks, &s);
    else
        print_text(path, ks, &s);
    mr_kspace_free(ks);
    mr_opts_free(&res);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "mrirecon info: cannot write to stdout\n");
        return MR_EXIT_FAILURE;
    }
    return MR_EXIT_OK;
}
