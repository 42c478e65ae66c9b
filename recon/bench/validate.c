/* The book's validation experiment (validate.h). */
#include "validate.h"

#include <math.h>
#include <string.h>
#include <time.h>

#include "../../io/fsutil.h"
#include "../../io/kspace_h5.h"
#include "../../base/log.h"
#include "../../phantoms/scan.h"
#include "../pipeline/pipeline.h"
#include "../report/report.h"

#define NCASES 2

typedef struct {
    int have;
    char method[32];
    double seconds;
    int have_metrics[MR_TRUTH_COUNT];
    mr_metrics metrics[MR_TRUTH_COUNT];
} method_row;

typedef struct {
    char name[32]; /* "noiseless", "snr30" */
    double t_simulate;
    int nmethods;
    method_row rows[MR_REPORT_MAX_METHODS];
    char backend[128];
    double lambda;         /* the CG weight used */
    char lambda_from[256]; /* how it was chosen */
} case_result;

void mr_validate_opts_default(mr_validate_opts *o)
{
    mr_recon_opts d;
    mr_recon_opts_default(&d);
    o->size = MR_VALIDATE_BOOK_SIZE;
    o->iters = 0; /* the solvers' defaults */
    o->lambda = d.lambda;
    o->lambda_rel = d.lambda_rel;
    o->reg = d.reg;
    o->solver = d.solver;
    o->model = d.model;
    o->nufft_tol = d.nufft_tol;
    o->check = d.check;
    o->snr_db = 30.0;
    o->seed = 1;
    o->outdir = NULL;
    o->dcf = "pipe";
    o->op = d.op;
    o->progress = NULL;
}

void mr_validate_design(int n, int64_t *spokes, int64_t *readout, int64_t *target_samples)
{
    double f = (double)n / MR_VALIDATE_BOOK_SIZE;
    int64_t s = (int64_t)llround(MR_VALIDATE_BOOK_SPOKES * f * f);
    int64_t r = (int64_t)llround(MR_VALIDATE_BOOK_READOUT * f);
    *spokes = s < 1 ? 1 : s;
    *readout = r < 2 ? 2 : r;
    *target_samples = (int64_t)llround((double)MR_VALIDATE_BOOK_SPOKES * MR_VALIDATE_BOOK_READOUT * f * f * f);
}

static void capture_report(void *ctx, const struct mr_report *r)
{
    case_result *c = ctx;
    c->nmethods = r->nmethods < MR_REPORT_MAX_METHODS ? r->nmethods : MR_REPORT_MAX_METHODS;
    for (int i = 0; i < c->nmethods; i++) {
        method_row *row = &c->rows[i];
        row->have = 1;
        snprintf(row->method, sizeof row->method, "%s", r->m[i].method);
        row->seconds = r->m[i].seconds;
        for (int t = 0; t < MR_TRUTH_COUNT; t++) {
            row->have_metrics[t] = r->m[i].have_metrics[t];
            row->metrics[t] = r->m[i].metrics[t];
        }
    }
    snprintf(c->backend, sizeof c->backend, "%s", r->backend);
    c->lambda = r->lambda;
    snprintf(c->lambda_from, sizeof c->lambda_from, "%s", r->lambda_from);
}

/* Simulate one case into outdir/scan_<name>.h5 and reconstruct it into outdir/recon_<name>. */
static mr_status run_case(const mr_validate_opts *o, int noisy, int64_t spokes, int64_t readout, case_result *c)
{
    if (noisy)
        snprintf(c->name, sizeof c->name, "snr%g", o->snr_db);
    else
        snprintf(c->name, sizeof c->name, "noiseless");
    char file[64], scan[4096], recon[4096];
    if (snprintf(file, sizeof file, "scan_%s.h5", c->name) >= (int)sizeof file)
        return mr_error(MR_EINVAL, "validate: case name '%s' is too long", c->name);
    mr_status st = mr_path_join(scan, sizeof scan, o->outdir, file);
    if (st != MR_OK)
        return st;
    if (snprintf(file, sizeof file, "recon_%s", c->name) >= (int)sizeof file)
        return mr_error(MR_EINVAL, "validate: case name '%s' is too long", c->name);
    if ((st = mr_path_join(recon, sizeof recon, o->outdir, file)) != MR_OK)
        return st;

    mr_scan_params sp;
    mr_scan_params_default(&sp);
    const int64_t matrix[3] = {o->size, o->size, o->size};
    mr_traj_params_default(&sp.traj, MR_TRAJ_KOOSHBALL, matrix);
    sp.traj.spokes = spokes;
    sp.traj.readout = readout;
    sp.noise = noisy;
    sp.snr_db = o->snr_db;
    sp.seed = o->seed;
    sp.truth = 1;
    sp.weights = 1;
    double t0 = mr_now();
    mr_kspace *ks = NULL;
    mr_progress_report(o->progress, "simulated scan", 0, 1);
    if ((st = mr_scan_simulate(&sp, &ks)) != MR_OK)
        return st;
    st = mr_kspace_write(scan, ks);
    mr_kspace_free(ks);
    if (st != MR_OK)
        return st;
    mr_progress_report(o->progress, "simulated scan", 1, 1);
    c->t_simulate = mr_now() - t0;
    mr_log(MR_LOG_INFO, "validate: %s: simulated %s in %.2f s", c->name, scan, c->t_simulate);

    mr_recon_opts ro;
    mr_recon_opts_default(&ro);
    ro.method = "all";
    ro.iters = o->iters;
    ro.lambda = o->lambda;
    ro.lambda_rel = o->lambda_rel;
    ro.reg = o->reg;
    ro.solver = o->solver;
    ro.model = o->model;
    ro.nufft_tol = o->nufft_tol;
    ro.check = o->check;
    ro.progress = o->progress;
    ro.force = 1; /* validate's own folder: a re-run replaces the earlier run's files */
    ro.op = o->op;
    ro.dcf = o->dcf;
    ro.on_report = capture_report;
    ro.on_report_ctx = c;
    st = mr_recon_run(scan, recon, &ro);
    if (st == MR_OK && c->nmethods == 0)
        st = mr_error(MR_EINTERNAL, "validate: %s: the reconstruction reported no methods", recon);
    return st;
}

static void fmt_metric(char *buf, size_t size, int have, double v)
{
    if (!have)
        snprintf(buf, size, "-");
    else if (!isfinite(v))
        snprintf(buf, size, "%s", v > 0 ? "inf" : "nan");
    else
        snprintf(buf, size, "%.2f", v);
}

static void print_table(FILE *f, const case_result *cases, int ncases)
{
    fprintf(f, "| data | method | PSNR image [dB] | PSNR bandlimited [dB] | SNR image [dB] | "
               "SNR bandlimited [dB] | error image [%%] | error bandlimited [%%] | seconds |\n");
    fprintf(f, "|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int c = 0; c < ncases; c++)
        for (int i = 0; i < cases[c].nmethods; i++) {
            const method_row *r = &cases[c].rows[i];
            char v[6][32];
            for (int t = 0; t < MR_TRUTH_COUNT; t++) {
                fmt_metric(v[t], sizeof v[t], r->have_metrics[t], r->metrics[t].psnr_db);
                fmt_metric(v[2 + t], sizeof v[2 + t], r->have_metrics[t], r->metrics[t].snr_db);
                fmt_metric(v[4 + t], sizeof v[4 + t], r->have_metrics[t], r->metrics[t].percent_error);
            }
            fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s | %.3f |\n", cases[c].name, r->method, v[0], v[1],
                    v[2], v[3], v[4], v[5], r->seconds);
        }
    fputc('\n', f);
    for (int c = 0; c < ncases; c++)
        fprintf(f, "CG lambda, %s: %.4g (%s)\n", cases[c].name, cases[c].lambda, cases[c].lambda_from);
}

static void print_header(FILE *f, const mr_validate_opts *o, int64_t spokes, int64_t readout, int64_t target,
                         const case_result *cases)
{
    fprintf(f, "3D Shepp-Logan, %d^3 matrix, kooshball %lld spokes x %lld readout = %lld samples "
               "(book: 128^3, 1078 x 264 = 284592; same samples per voxel would be %lld)\n",
            o->size, (long long)spokes, (long long)readout, (long long)(spokes * readout), (long long)target);
    fprintf(f, "CG %d iterations, lambda per case below (%s), basis %s, gridding DCF %s, noise seed %llu; backend %s\n\n",
            o->iters, o->reg, o->op.basis == MR_BASIS_DIRAC ? "dirac" : "box", o->dcf, (unsigned long long)o->seed,
            cases[0].backend[0] ? cases[0].backend : "cpu");
}

mr_status mr_validate_run(const mr_validate_opts *o, FILE *table)
{
    if (!o->outdir || !o->outdir[0])
        return mr_error(MR_EINVAL, "validate: no output directory");
    if (o->size < 2 || o->size > MR_MAX_MATRIX_EDGE)
        return mr_error(MR_EINVAL, "validate: size %d is outside 2..%d", o->size, MR_MAX_MATRIX_EDGE);
    if (!isfinite(o->snr_db))
        return mr_error(MR_EINVAL, "validate: SNR %g dB is not finite", o->snr_db);
    int64_t spokes, readout, target;
    mr_validate_design(o->size, &spokes, &readout, &target);
    mr_status st = mr_mkdir_p(o->outdir);
    if (st != MR_OK)
        return st;
    mr_log(MR_LOG_INFO, "validate: %d^3, kooshball %lld x %lld = %lld samples (target %lld)", o->size,
           (long long)spokes, (long long)readout, (long long)(spokes * readout), (long long)target);

    case_result cases[NCASES];
    memset(cases, 0, sizeof cases);
    double t0 = mr_now();
    for (int c = 0; c < NCASES; c++)
        if ((st = run_case(o, c, spokes, readout, &cases[c])) != MR_OK)
            return st;
    double total = mr_now() - t0;

    if (table) {
        print_header(table, o, spokes, readout, target, cases);
        print_table(table, cases, NCASES);
        fflush(table);
    }
    char path[4096], tmp[4200];
    if ((st = mr_path_join(path, sizeof path, o->outdir, "validation.md")) != MR_OK)
        return st;
    FILE *f = NULL;
    if ((st = mr_open_tmp(path, tmp, sizeof tmp, &f)) != MR_OK)
        return st;
    time_t now = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    fprintf(f, "# mrirecon validate (%s)\n\n", date);
    print_header(f, o, spokes, readout, target, cases);
    print_table(f, cases, NCASES);
    fprintf(f, "\nScan simulation: %.2f s (noiseless), %.2f s (%s); whole run %.1f s.\n", cases[0].t_simulate,
            cases[1].t_simulate, cases[1].name, total);
    return mr_close_commit(f, tmp, path);
}
