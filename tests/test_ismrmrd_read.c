/* ISMRMRD input (io/ismrmrd_h5.h through io/input.c) against files written by libismrmrd's own C
 * API: 2D radial and golden-angle, 3D kooshball, single and multi-coil, with noise scans, in every
 * trajectory unit and both signs, with discarded samples, several slices / repetitions / averages.
 * Each file must read back to the samples of the mrirecon scan it was written from (bit-identical
 * for cycles/FOV, relative error <= 1e-6 for the units that need a conversion), and prewhitening
 * must equal W = sigma_ref L^{-1} applied to those samples. SKIP (77) without libismrmrd. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#ifndef MR_HAVE_ISMRMRD
int main(void)
{
    printf("test_ismrmrd_read: SKIP (built without libismrmrd: apt-get install libismrmrd-dev)\n");
    return TEST_SKIP;
}
#else

#include "base/log.h"
#include "io/input.h"
#include "io/kspace_h5.h"
#include "ismrmrd_testutil.h"
#include "phantoms/scan.h"
#include "recon/pipeline/volumes.h"
#include "solver/prewhiten.h"

static char dir[1024];

/* A phantom scan; C > 1: coil c holds the data times a constant complex sensitivity. */
static mr_kspace *make_scan(mr_traj_kind kind, int64_t n, int64_t C)
{
    mr_scan_params p;
    mr_scan_params_default(&p);
    const int64_t matrix[3] = {n, n, mr_traj_kind_is_3d(kind) ? n : 1};
    mr_traj_params_default(&p.traj, kind, matrix);
    p.weights = 0;
    p.truth = 0;
    mr_kspace *one = NULL;
    if (mr_scan_simulate(&p, &one) != MR_OK) {
        fprintf(stderr, "phantom: %s\n", mr_last_error());
        return NULL;
    }
    if (C == 1)
        return one;
    mr_kspace *ks = NULL;
    if (mr_kspace_create(&ks, one->matrix, one->nsamples, C) != MR_OK) {
        mr_kspace_free(one);
        return NULL;
    }
    memcpy(ks->traj, one->traj, (size_t)one->nsamples * 3 * sizeof(float));
    memcpy(ks->fov_mm, one->fov_mm, sizeof ks->fov_mm);
    memcpy(ks->traj_kind, one->traj_kind, sizeof ks->traj_kind);
    for (int64_t c = 0; c < C; c++) {
        const double sr = cos(0.7 * (double)c) * (1 + 0.1 * (double)c), si = sin(0.7 * (double)c);
        for (int64_t m = 0; m < one->nsamples; m++) {
            const float *d = one->data + 2 * m;
            ks->data[2 * (c * ks->nsamples + m)] = (float)(sr * d[0] - si * d[1]);
            ks->data[2 * (c * ks->nsamples + m) + 1] = (float)(sr * d[1] + si * d[0]);
        }
    }
    mr_kspace_free(one);
    return ks;
}

static int64_t readout_of(const mr_kspace *ks)
{
    mr_traj_params p;
    mr_traj_kind k;
    mr_traj_kind_parse(ks->traj_kind, &k);
    mr_traj_params_default(&p, k, ks->matrix);
    return p.readout;
}

/* the writer's defaults for ks: one acquisition per spoke */
static ism_opts opts_for(const mr_kspace *ks)
{
    ism_opts o;
    ism_opts_default(&o);
    o.readout = readout_of(ks);
    return o;
}

/* write ks as ISMRMRD to dir/name (path receives the name); a failed write is a failed check */
static void write_named(const char *name, const mr_kspace *ks, const ism_opts *o, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", dir, name);
    int bad = ism_write(path, ks, o);
    CHECK(bad == 0);
    if (bad)
        fprintf(stderr, "writing %s with libismrmrd failed\n", path);
}

/* max |a - b| / max |b| over traj and data; -1 on a shape mismatch */
static double rel_diff(const float *a, const float *b, int64_t n)
{
    double dmax = 0, bmax = 0;
    for (int64_t i = 0; i < n; i++) {
        dmax = fmax(dmax, fabs((double)a[i] - b[i]));
        bmax = fmax(bmax, fabs((double)b[i]));
    }
    return bmax > 0 ? dmax / bmax : dmax;
}

static void compare(const char *what, const mr_kspace *got, const mr_kspace *want, double scale, double tol)
{
    char label[256];
    int same = got && got->nsamples == want->nsamples && got->ncoils == want->ncoils &&
               memcmp(got->matrix, want->matrix, sizeof got->matrix) == 0;
    snprintf(label, sizeof label, "%s: same shape", what);
    CHECK(same);
    if (!same) {
        if (got)
            fprintf(stderr, "  got %lld samples x %lld coils, matrix %lld %lld %lld; want %lld x %lld\n",
                    (long long)got->nsamples, (long long)got->ncoils, (long long)got->matrix[0],
                    (long long)got->matrix[1], (long long)got->matrix[2], (long long)want->nsamples,
                    (long long)want->ncoils);
        return;
    }
    const int64_t nd = 2 * want->nsamples * want->ncoils;
    float *w = malloc((size_t)nd * sizeof *w);
    for (int64_t i = 0; i < nd; i++)
        w[i] = (float)(scale * want->data[i]);
    snprintf(label, sizeof label, "%s: trajectory rel. diff", what);
    double t = rel_diff(got->traj, want->traj, 3 * want->nsamples);
    if (tol == 0) {
        CHECK(memcmp(got->traj, want->traj, (size_t)want->nsamples * 3 * sizeof(float)) == 0);
        CHECK(memcmp(got->data, w, (size_t)nd * sizeof(float)) == 0);
        printf("ok: %s: bit-identical trajectory and data\n", what);
    } else {
        CHECK_LE(label, t, tol);
        snprintf(label, sizeof label, "%s: data rel. diff", what);
        CHECK_LE(label, rel_diff(got->data, w, nd), tol);
    }
    free(w);
}

static mr_kspace *read_file(const char *path, const mr_read_opts *o, int vol, int *nvol, mr_input **keep)
{
    mr_input *in = NULL;
    mr_kspace *ks = NULL;
    if (mr_input_open(path, o, &in) != MR_OK) {
        fprintf(stderr, "%s: open failed: %s\n", path, mr_last_error());
        return NULL;
    }
    if (nvol)
        *nvol = mr_input_nvolumes(in);
    if (mr_input_read(in, vol, &ks) != MR_OK)
        fprintf(stderr, "%s: read failed: %s\n", path, mr_last_error());
    if (keep)
        *keep = in;
    else
        mr_input_close(in);
    return ks;
}

static void test_units(mr_traj_kind kind, int64_t n, int64_t C)
{
    mr_kspace *ks = make_scan(kind, n, C);
    CHECK(ks != NULL);
    if (!ks)
        return;
    char path[1200];
    for (int u = MR_UNITS_CYCLES; u < MR_UNITS_COUNT; u++)
        for (int sign = 1; sign >= -1; sign -= 2) {
            ism_opts o = opts_for(ks);
            o.units = (mr_traj_units)u;
            o.sign = sign;
            char name[128];
            snprintf(name, sizeof name, "%s_%lldc_%s_%d.h5", ks->traj_kind, (long long)C,
                     mr_traj_units_name((mr_traj_units)u), sign);
            write_named(name, ks, &o, path, sizeof path);
            mr_read_opts ro;
            mr_read_opts_default(&ro);
            ro.traj_sign = sign;
            mr_input *in = NULL;
            mr_kspace *got = read_file(path, &ro, 0, NULL, &in);
            char what[1400];
            snprintf(what, sizeof what, "%s, %lld coil(s), units %s, sign %+d", ks->traj_kind, (long long)C,
                     mr_traj_units_name((mr_traj_units)u), sign);
            if (in) {
                const mr_ismrmrd_summary *s = mr_input_ismrmrd(in);
                CHECK(mr_input_get_format(in) == MR_INPUT_ISMRMRD);
                CHECK(s && s->units[0] == (mr_traj_units)u && s->units_detected[0] == 1);
                if (s && s->units[0] != (mr_traj_units)u)
                    fprintf(stderr, "%s: detected %s\n", what, mr_traj_units_name(s->units[0]));
                CHECK(s && s->channels == C && s->count[MR_ACQ_IMAGING] == ks->nsamples / o.readout);
                mr_input_close(in);
            }
            compare(what, got, ks, 1.0, u == MR_UNITS_CYCLES ? 0 : 1e-6);
            if (got)
                CHECK(strcmp(got->traj_kind, ks->traj_kind) == 0 || kind == MR_TRAJ_KOOSHBALL);
            mr_kspace_free(got);
        }
    mr_kspace_free(ks);
}

static void test_noise(void)
{
    const int64_t C = 4;
    mr_kspace *ks = make_scan(MR_TRAJ_RADIAL2D, 32, C);
    CHECK(ks != NULL);
    if (!ks)
        return;
    ism_opts o = opts_for(ks);
    o.noise_acqs = 64;
    o.noise_sigma = 0.01;
    o.noise_rho = 0.6;
    char path[1200];
    write_named("noise.h5", ks, &o, path, sizeof path);
    mr_read_opts ro;
    mr_read_opts_default(&ro);
    /* the reader returns the data as stored, and the covariance with them */
    mr_input *in = NULL;
    mr_kspace *raw = read_file(path, &ro, 0, NULL, &in);
    compare("noise scans: the reader leaves the data as stored", raw, ks, 1.0, 0);
    mr_kspace_free(raw);
    /* the read stage (recon/pipeline/volumes.h) whitens them, or not */
    mr_kspace *white = NULL, *off = NULL;
    mr_volume_desc wd, od;
    memset(&wd, 0, sizeof wd);
    memset(&od, 0, sizeof od);
    if (in) {
        CHECK_OK(mr_volume_read(in, 0, 0, &off, &od));
        CHECK_OK(mr_volume_read(in, 0, 1, &white, &wd));
    }
    CHECK(in != NULL && white != NULL && off != NULL);
    if (off) {
        CHECK(od.prewhitened == 0 && od.noise_samples == o.noise_acqs * o.readout);
        compare("noise scans, --prewhiten off", off, ks, 1.0, 0);
    }
    if (in && white) {
        const mr_ismrmrd_summary *s = mr_input_ismrmrd(in);
        int64_t ns = 0;
        CHECK(s->count[MR_ACQ_NOISE] == o.noise_acqs && s->noise_samples == o.noise_acqs * o.readout);
        CHECK(s->noise_cov != NULL && mr_input_noise_cov(in, &ns) == s->noise_cov && ns == s->noise_samples);
        CHECK(wd.prewhitened == 1 && wd.noise_samples == s->noise_samples && wd.noise_max_corr == s->noise_max_corr);
        /* the estimated covariance against the true one, 2 sigma^2 A A^H */
        double worst = 0;
        for (int64_t i = 0; i < C; i++)
            for (int64_t j = 0; j < C; j++) {
                double t = 0;
                for (int64_t k = 0; k <= (i < j ? i : j); k++)
                    t += pow(o.noise_rho, (double)(i - k)) * pow(o.noise_rho, (double)(j - k));
                t *= 2 * o.noise_sigma * o.noise_sigma;
                double e = hypot(s->noise_cov[2 * (i * C + j)] - t, s->noise_cov[2 * (i * C + j) + 1]);
                worst = fmax(worst, e / (2 * o.noise_sigma * o.noise_sigma));
            }
        /* 64 x readout samples: the estimate's relative std. dev. is about 1/sqrt(8000) ~ 0.011 */
        CHECK_LE("noise covariance vs truth, max abs error / (2 sigma^2)", worst, 0.06);
        CHECK_GE("largest coil noise correlation", s->noise_max_corr, 0.5);
        /* expected: W applied to the stored samples */
        double *w = malloc((size_t)(C * C) * 2 * sizeof *w);
        CHECK_OK(mr_prewhiten_matrix(s->noise_cov, C, w));
        mr_kspace *want = make_scan(MR_TRAJ_RADIAL2D, 32, C);
        mr_prewhiten_apply(w, C, want->data, want->nsamples);
        compare("noise scans, prewhitened", white, want, 1.0, 0);
        CHECK(white->noise_sigma > 0);
        free(w);
        mr_kspace_free(want);
    }
    mr_kspace_free(white);
    mr_kspace_free(off);
    mr_input_close(in);
    mr_kspace_free(ks);
}

static void test_volumes(void)
{
    mr_kspace *ks = make_scan(MR_TRAJ_GOLDEN2D, 32, 2);
    CHECK(ks != NULL);
    if (!ks)
        return;
    ism_opts o = opts_for(ks);
    o.slices = 2;
    o.repetitions = 3;
    o.discard_pre = 3;
    o.discard_post = 2;
    o.noise_acqs = 2;
    o.units = MR_UNITS_NORMALIZED;
    char path[1200];
    write_named("volumes.h5", ks, &o, path, sizeof path);
    mr_read_opts ro;
    mr_read_opts_default(&ro);
    mr_input *in = NULL;
    if (mr_input_open(path, &ro, &in) != MR_OK) {
        CHECK_OK(MR_EFORMAT);
        mr_kspace_free(ks);
        return;
    }
    CHECK(mr_input_nvolumes(in) == 6);
    /* another file renamed over the path after the open: every volume still comes from the file that was
       opened (read in a child each, through the descriptor the open kept) */
    char keep[1300], other[1300];
    snprintf(keep, sizeof keep, "%s.keep", path);
    snprintf(other, sizeof other, "%s.other", path);
    CHECK(link(path, keep) == 0);
    FILE *g = fopen(other, "wb");
    CHECK(g != NULL);
    if (g) {
        fputs("not the file that was opened", g);
        fclose(g);
    }
    CHECK(rename(other, path) == 0);
    for (int v = 0; v < mr_input_nvolumes(in); v++) {
        const mr_volume_info *vi = mr_input_volume(in, v);
        /* sorted by (encoding, slice, contrast, phase, repetition, set) */
        CHECK(vi && vi->slice == v / 3 && vi->repetition == v % 3 && vi->average == -1);
        CHECK(vi && vi->samples == ks->nsamples && vi->acquisitions == ks->nsamples / o.readout);
        CHECK(vi && fabsf(vi->geometry.position[2] - 5.0f * (float)vi->slice) == 0);
        mr_kspace *got = NULL;
        CHECK_OK(mr_input_read(in, v, &got));
        char what[128];
        snprintf(what, sizeof what, "volume %d (slice %d, repetition %d), discard 3 + 2", v, vi ? vi->slice : -1,
                 vi ? vi->repetition : -1);
        compare(what, got, ks, 1 + (vi ? vi->slice + vi->repetition : 0), 1e-6);
        mr_kspace_free(got);
    }
    mr_kspace *none = NULL;
    CHECK(mr_input_read(in, 6, &none) == MR_EINVAL && none == NULL);
    mr_input_close(in);
    CHECK(rename(keep, path) == 0);
    /* mr_input_read_path refuses to pick one of several volumes */
    mr_kspace *one = NULL;
    CHECK(mr_input_read_path(path, &ro, -1, &one) == MR_EINVAL && one == NULL);
    CHECK(strstr(mr_last_error(), "--volume") != NULL);
    CHECK_OK(mr_input_read_path(path, &ro, 4, &one));
    compare("mr_input_read_path volume 4", one, ks, 1 + 1 + 1, 1e-6);
    mr_kspace_free(one);

    /* averages: identical copies are averaged (combine) or kept apart (separate) */
    o = opts_for(ks);
    o.averages = 3;
    write_named("averages.h5", ks, &o, path, sizeof path);
    mr_read_opts_default(&ro);
    int nvol = 0;
    mr_kspace *avg = read_file(path, &ro, 0, &nvol, NULL);
    CHECK(nvol == 1);
    compare("3 identical averages, combined", avg, ks, 1.0, 0);
    mr_kspace_free(avg);
    ro.averages = MR_AVERAGES_SEPARATE;
    avg = read_file(path, &ro, 2, &nvol, NULL);
    CHECK(nvol == 3);
    compare("3 averages, separate, the third", avg, ks, 1.0, 0);
    mr_kspace_free(avg);
    mr_kspace_free(ks);
}

/* Readout oversampling: encodedSpace 2N x N with FOV 2x in x, reconSpace N x N. --space encoded gives
 * the 2N x N grid with kx per encoded FOV (twice the scan's), --space recon the scan itself. */
static void test_oversampling(void)
{
    mr_kspace *ks = make_scan(MR_TRAJ_RADIAL2D, 32, 1);
    CHECK(ks != NULL);
    if (!ks)
        return;
    ism_opts o = opts_for(ks);
    o.oversample = 2;
    char path[1200];
    write_named("oversampled.h5", ks, &o, path, sizeof path);
    mr_read_opts ro;
    mr_read_opts_default(&ro);
    ro.space = MR_SPACE_RECON;
    mr_input *in = NULL;
    mr_kspace *rec = read_file(path, &ro, 0, NULL, &in);
    compare("oversampled readout, --space recon", rec, ks, 1.0, 0);
    const mr_volume_info *vi = in ? mr_input_volume(in, 0) : NULL;
    CHECK(vi && vi->matrix[0] == 32 && vi->recon_matrix[0] == 32 && vi->fov_mm[0] == ks->fov_mm[0]);
    mr_input_close(in);
    ro.space = MR_SPACE_ENCODED;
    mr_kspace *enc = read_file(path, &ro, 0, NULL, NULL);
    CHECK(enc && enc->matrix[0] == 64 && enc->matrix[1] == 32 && enc->fov_mm[0] == 2 * ks->fov_mm[0]);
    int same = enc && enc->nsamples == ks->nsamples;
    for (int64_t m = 0; same && m < ks->nsamples; m++)
        same = enc->traj[3 * m] == 2 * ks->traj[3 * m] && enc->traj[3 * m + 1] == ks->traj[3 * m + 1];
    CHECK(same);
    printf("%s: oversampled readout, --space encoded: 64x32 grid, kx per encoded FOV\n", same ? "ok" : "FAIL");
    mr_kspace_free(enc);
    mr_kspace_free(rec);
    mr_kspace_free(ks);
}

/* The fuzzing entry point: mr_ismrmrd_open on an HDF5 file image in memory (no file on disk). */
static void test_file_image(void)
{
    mr_kspace *ks = make_scan(MR_TRAJ_RADIAL2D, 32, 2);
    CHECK(ks != NULL);
    if (!ks)
        return;
    ism_opts o = opts_for(ks);
    o.noise_acqs = 4;
    char path[1200];
    write_named("image.h5", ks, &o, path, sizeof path);
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    if (!f) {
        mr_kspace_free(ks);
        return;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = malloc((size_t)size);
    CHECK(fread(buf, 1, (size_t)size, f) == (size_t)size);
    fclose(f);
    remove(path);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_core(fapl, 1 << 20, 0);
    H5Pset_file_image(fapl, buf, (size_t)size);
    hid_t file = H5Fopen("in-memory image", H5F_ACC_RDONLY, fapl);
    CHECK(file >= 0);
    mr_read_opts ro;
    mr_read_opts_default(&ro);
    mr_ismrmrd *r = NULL;
    mr_kspace *got = NULL;
    CHECK_OK(mr_ismrmrd_open(file, "in-memory image", &ro, &r));
    if (r)
        CHECK_OK(mr_ismrmrd_read_volume(r, 0, &got));
    compare("HDF5 file image in memory", got, ks, 1.0, 0);
    mr_kspace_free(got);
    mr_ismrmrd_close(r);
    H5Fclose(file);
    H5Pclose(fapl);
    free(buf);
    mr_kspace_free(ks);
}

static void test_ambiguous(void)
{
    /* an 8x8 matrix: radians (edge pi) and cycles (edge 4) both fit a trajectory reaching pi */
    mr_kspace *ks = make_scan(MR_TRAJ_RADIAL2D, 8, 1);
    CHECK(ks != NULL);
    if (!ks)
        return;
    ism_opts o = opts_for(ks);
    o.units = MR_UNITS_RADIANS;
    char path[1200];
    write_named("ambiguous.h5", ks, &o, path, sizeof path);
    mr_read_opts ro;
    mr_read_opts_default(&ro);
    mr_input *in = NULL;
    mr_status st = mr_input_open(path, &ro, &in);
    CHECK(st == MR_EFORMAT && in == NULL);
    CHECK(strstr(mr_last_error(), "ambiguous") != NULL && strstr(mr_last_error(), "--traj-units") != NULL);
    printf("ok: ambiguous units: %s\n", mr_last_error());
    ro.traj_units = MR_UNITS_RADIANS;
    mr_kspace *got = read_file(path, &ro, 0, NULL, NULL);
    compare("8x8, radians given", got, ks, 1.0, 1e-6);
    mr_kspace_free(got);
    mr_kspace_free(ks);
}

int main(void)
{
    mr_log_set_level(MR_LOG_WARN);
    mr_error_set_spelling("--", '-', ""); /* the library's {name} settings as mrirecon writes them (recon/cli/main.c) */
    snprintf(dir, sizeof dir, "%s", test_tmpdir("ismrmrd_read"));
    test_units(MR_TRAJ_RADIAL2D, 32, 1);
    test_units(MR_TRAJ_GOLDEN2D, 32, 3);
    test_units(MR_TRAJ_KOOSHBALL, 20, 2); /* 12: cycles and radians would both fit */
    test_noise();
    test_volumes();
    test_ambiguous();
    test_file_image();
    test_oversampling();
    return test_finish("test_ismrmrd_read");
}
#endif
