/* recon/pipeline.h: read -> validate -> operator (Q) -> F^H d -> CG, and/or DCF -> gridding ->
 * metrics -> output files. Everything is computed before OUTDIR is created, so a run that fails
 * (bad input, bad option, a failing stage) leaves no directory and no file behind.
 *
 * Multi-coil scans (C > 1): every coil is reconstructed on its own (one operator, one DCF and one
 * gridding plan shared by all coils) and the coil images are combined by root-sum-of-squares; the
 * image files then hold the (real, non-negative) combination. CG's residual history is the
 * combined one, sqrt(sum_c ||r_c,k||^2 / sum_c ||r_c,0||^2); no per-iteration PSNR (the combined
 * image exists only after the last coil). */
#include "pipeline.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../io/fsutil.h"
#include "../io/image_h5.h"
#include "../io/image_png.h"
#include "../io/kspace_h5.h"
#include "../base/log.h"
#include "../solver/cg.h"
#include "../solver/dcf.h"
#include "../solver/gridding.h"
#include "../solver/metrics.h"
#include "../solver/regularizer.h"
#include "../solver/vecops.h"
#include "compare.h"
#include "plot.h"
#include "report.h"

#define MR_RECON_ERROR_GAIN 5.0
#define MR_CONVERGENCE_W 800
#define MR_CONVERGENCE_H 480

void mr_recon_opts_default(mr_recon_opts *o)
{
    memset(o, 0, sizeof *o);
    o->method = "cg";
    o->iters = 60;
    o->tol = 0;
    o->lambda = 0;
    o->reg = "identity";
    mr_op_opts_default(&o->op);
    o->dcf = "pipe";
    o->oversample = 2.0;
    o->kernel_width = 6;
}

typedef enum { RUN_CG = 0, RUN_KB = 1, RUN_BILINEAR = 2 } run_kind;
static const char *const run_names[] = {"cg", "gridding-kb", "gridding-bilinear"};
static const char *const run_labels[] = {"CG", "KB", "BILINEAR"};

static mr_status validate_opts(const mr_recon_opts *o, int run[3], mr_reg_kind *reg)
{
    const char *m = o->method ? o->method : "cg";
    run[RUN_CG] = !strcmp(m, "cg") || !strcmp(m, "all");
    run[RUN_KB] = !strcmp(m, "gridding-kb") || !strcmp(m, "all");
    run[RUN_BILINEAR] = !strcmp(m, "gridding-bilinear") || !strcmp(m, "all");
    if (!run[0] && !run[1] && !run[2])
        return mr_error(MR_EINVAL, "method '%s' is not one of cg, gridding-bilinear, gridding-kb, all", m);
    mr_status st = mr_cg_check_params(o->iters, o->lambda, o->tol);
    if (st != MR_OK)
        return st;
    st = mr_reg_parse(o->reg ? o->reg : "identity", reg);
    if (st != MR_OK)
        return st;
    const char *d = o->dcf ? o->dcf : "pipe";
    if (strcmp(d, "file") && strcmp(d, "analytic") && strcmp(d, "pipe"))
        return mr_error(MR_EINVAL, "dcf '%s' is not one of pipe, file, analytic", d);
    return MR_OK;
}

static int radial_kind(const char *kind)
{
    return !strcmp(kind, "radial2d") || !strcmp(kind, "golden2d") || !strcmp(kind, "kooshball");
}

/* ---- CG callbacks ------------------------------------------------------------------------------ */

static mr_status normal_apply(void *op, const float *in, float *out) { return mr_op_normal(op, in, out); }

typedef struct {
    const float *truth;
    int64_t n;
} psnr_monitor;

static double psnr_of(void *ctx, const float *x)
{
    const psnr_monitor *p = ctx;
    return mr_metrics_psnr(x, 1, p->truth, p->n);
}

static void log_progress(void *ctx, int iter, double rel_resid, double metric)
{
    const int64_t *coil = ctx; /* NULL for a single-coil scan */
    char who[48] = "";
    if (coil)
        snprintf(who, sizeof who, " (coil %lld)", (long long)*coil);
    if (isfinite(metric))
        mr_log(MR_LOG_DEBUG, "cg: iteration %3d%s: relative residual %.4e, PSNR %.3f dB", iter, who, rel_resid,
               metric);
    else
        mr_log(MR_LOG_DEBUG, "cg: iteration %3d%s: relative residual %.4e", iter, who, rel_resid);
}

/* rss[v] += |x_v|^2 */
static void rss_add(float *rss, const float *x, int64_t n)
{
    for (int64_t v = 0; v < n; v++)
        rss[v] += x[2 * v] * x[2 * v] + x[2 * v + 1] * x[2 * v + 1];
}

/* img = sqrt(rss) + 0i */
static void rss_finish(float *img, const float *rss, int64_t n)
{
    for (int64_t v = 0; v < n; v++) {
        img[2 * v] = sqrtf(rss[v]);
        img[2 * v + 1] = 0;
    }
}

/* ---- the run ----------------------------------------------------------------------------------- */

typedef struct {
    mr_kspace *ks;
    mr_op *op;
    mr_gridding *grid;
    float *b;
    float *img[3];
    float *weights;
    float *mag;
    float *coil_img; /* C > 1: one coil's image */
    float *rss;      /* C > 1: sum over coils of |x_c|^2 */
    double *hist;    /* C > 1: combined CG residual history */
    mr_cg_result cg;
} run_state;

static void free_state(run_state *s)
{
    mr_kspace_free(s->ks);
    mr_op_destroy(s->op);
    mr_gridding_destroy(s->grid);
    free(s->b);
    for (int i = 0; i < 3; i++)
        free(s->img[i]);
    free(s->weights);
    free(s->mag);
    free(s->coil_img);
    free(s->rss);
    free(s->hist);
    mr_cg_result_free(&s->cg);
}

/* Buffers for a multi-coil combination (no-op for one coil). */
static mr_status coil_buffers(run_state *s, int64_t n)
{
    if (s->ks->ncoils == 1 || s->rss)
        return MR_OK;
    s->coil_img = malloc((size_t)n * 2 * sizeof(float));
    s->rss = malloc((size_t)n * sizeof(float));
    if (!s->coil_img || !s->rss)
        return mr_error(MR_ENOMEM, "out of memory for %lld-voxel coil images", (long long)n);
    return MR_OK;
}

static mr_status run_cg(run_state *s, const mr_recon_opts *o, mr_reg_kind regk, mr_report *r, mr_report_method *m)
{
    const mr_kspace *ks = s->ks;
    const int64_t n = mr_kspace_voxels(ks);
    double t0 = mr_now();
    mr_status st = mr_op_create(&s->op, ks->matrix, ks->traj, ks->nsamples, NULL, &o->op);
    if (st != MR_OK)
        return st;
    r->t_op_create = mr_now() - t0;
    mr_op_info info;
    mr_op_get_info(s->op, &info);
    r->t_q = info.q_seconds;
    r->t_plan = info.plan_seconds;
    snprintf(r->backend, sizeof r->backend, "%s", info.backend);
    mr_log(MR_LOG_INFO, "operator: %s, Q in %.3f s, setup %.3f s", info.backend, info.q_seconds, r->t_op_create);

    s->b = malloc((size_t)n * 2 * sizeof(float));
    s->img[RUN_CG] = malloc((size_t)n * 2 * sizeof(float));
    if (!s->b || !s->img[RUN_CG])
        return mr_error(MR_ENOMEM, "out of memory for %lld-voxel images", (long long)n);
    /* scale of the normal operator: (F^H F delta_c)_c at the centre voxel c, so that a lambda can be
     * judged against it (report only; one extra normal application) */
    {
        const int64_t c = ((ks->matrix[2] / 2) * ks->matrix[1] + ks->matrix[1] / 2) * ks->matrix[0] + ks->matrix[0] / 2;
        memset(s->img[RUN_CG], 0, (size_t)n * 2 * sizeof(float));
        s->img[RUN_CG][2 * c] = 1;
        float *col = malloc((size_t)n * 2 * sizeof(float));
        if (!col)
            return mr_error(MR_ENOMEM, "out of memory for %lld-voxel images", (long long)n);
        st = mr_op_normal(s->op, s->img[RUN_CG], col);
        r->normal_diag = col[2 * c];
        free(col);
        if (st != MR_OK)
            return st;
    }

    mr_vecops ops;
    mr_vecops_cpu_ctx vctx;
    mr_vecops_cpu_init(&ops, &vctx, o->op.threads);
    mr_regularizer reg = {regk, {ks->matrix[0], ks->matrix[1], ks->matrix[2]}, o->op.threads};
    mr_cg_opts co;
    mr_cg_opts_default(&co);
    co.iters = o->iters;
    co.tol = o->tol;
    co.lambda = o->lambda;
    co.normal = normal_apply;
    co.normal_ctx = s->op;
    co.reg = regk == MR_REG_IDENTITY ? NULL : mr_reg_apply;
    co.reg_ctx = &reg;
    psnr_monitor mon = {ks->truth_bl ? ks->truth_bl : ks->truth, n};
    const int64_t ncoils = ks->ncoils, M = ks->nsamples;
    if (mon.truth && ncoils == 1) {
        co.metric = psnr_of;
        co.metric_ctx = &mon;
        m->psnr_truth = ks->truth_bl ? MR_TRUTH_BANDLIMITED : MR_TRUTH_IMAGE;
    }
    co.progress = log_progress;
    st = coil_buffers(s, n);
    if (st != MR_OK)
        return st;
    if (ncoils > 1) {
        s->hist = calloc((size_t)o->iters + 1, sizeof(double));
        if (!s->hist)
            return mr_error(MR_ENOMEM, "out of memory for the residual history");
        memset(s->rss, 0, (size_t)n * sizeof(float));
    }
    double r0sq = 0;
    mr_cg_stop first_stop = MR_CG_STOP_ITERS;
    int same_stop = 1;
    for (int64_t c = 0; c < ncoils; c++) {
        float *x = ncoils == 1 ? s->img[RUN_CG] : s->coil_img;
        co.progress_ctx = ncoils == 1 ? NULL : &c;
        t0 = mr_now();
        st = mr_op_adjoint(s->op, ks->data + 2 * M * c, s->b);
        if (st != MR_OK)
            return st;
        r->t_fhd += mr_now() - t0;
        t0 = mr_now();
        st = mr_cg_solve(&ops, n, s->b, x, &co, &s->cg);
        if (st != MR_OK)
            return st;
        m->t_monitor += s->cg.metric_seconds;
        m->t_solve += mr_now() - t0 - s->cg.metric_seconds;
        if (c > 0 && s->cg.stop != first_stop)
            same_stop = 0;
        first_stop = s->cg.stop;
        if (ncoils == 1)
            break; /* s->cg holds the histories the report points to */
        rss_add(s->rss, x, n);
        for (int k = 0; k <= o->iters; k++) { /* a coil that stopped early keeps its last residual */
            double rk = s->cg.rel_resid[k < s->cg.iterations ? k : s->cg.iterations] * s->cg.r0_norm;
            s->hist[k] += rk * rk;
        }
        r0sq += s->cg.r0_norm * s->cg.r0_norm;
        if (s->cg.iterations > m->iterations)
            m->iterations = s->cg.iterations;
        mr_cg_result_free(&s->cg);
    }
    if (ncoils == 1) {
        m->iterations = s->cg.iterations;
        m->stop = mr_cg_stop_name(s->cg.stop);
        m->final_rel_resid = s->cg.final_rel_resid;
        m->rel_resid = s->cg.rel_resid;
        m->psnr = s->cg.metric;
    } else {
        for (int k = 0; k <= o->iters; k++)
            s->hist[k] = r0sq > 0 ? sqrt(s->hist[k] / r0sq) : 0;
        rss_finish(s->img[RUN_CG], s->rss, n);
        m->stop = same_stop ? mr_cg_stop_name(first_stop) : "different per coil";
        m->final_rel_resid = s->hist[m->iterations];
        m->rel_resid = s->hist;
    }
    r->t_solve = m->t_solve;
    m->seconds = r->t_op_create + r->t_fhd + m->t_solve;
    mr_log(MR_LOG_INFO, "cg: %d iterations (%s), relative residual %.3e, %.3f s", m->iterations, m->stop,
           m->final_rel_resid, m->t_solve);
    return MR_OK;
}

static mr_status get_weights(run_state *s, const char *dcf, int threads, mr_report *r)
{
    if (s->weights)
        return MR_OK;
    const mr_kspace *ks = s->ks;
    const char *use = dcf;
    r->dcf = use;
    s->weights = malloc((size_t)ks->nsamples * sizeof(float));
    if (!s->weights)
        return mr_error(MR_ENOMEM, "out of memory for %lld weights", (long long)ks->nsamples);
    double t0 = mr_now();
    mr_status st = MR_OK;
    if (!strcmp(use, "file"))
        memcpy(s->weights, ks->weights, (size_t)ks->nsamples * sizeof(float)); /* presence checked earlier */
    else if (!strcmp(use, "analytic"))
        st = mr_dcf_analytic(ks->matrix, ks->traj, ks->nsamples, s->weights);
    else
        st = mr_dcf_pipe(ks->matrix, ks->traj, ks->nsamples, 0, threads, s->weights);
    r->t_dcf = mr_now() - t0;
    if (st == MR_OK)
        mr_log(MR_LOG_INFO, "dcf: %s weights in %.3f s", use, r->t_dcf);
    return st;
}

static mr_status run_gridding(run_state *s, const mr_recon_opts *o, run_kind which, mr_report *r,
                              mr_report_method *m)
{
    const mr_kspace *ks = s->ks;
    const int64_t n = mr_kspace_voxels(ks);
    mr_status st = get_weights(s, o->dcf ? o->dcf : "pipe", o->op.threads, r);
    if (st != MR_OK)
        return st;
    mr_gridding_opts go;
    mr_gridding_opts_default(&go);
    go.kind = which == RUN_KB ? MR_GRIDDING_KB : MR_GRIDDING_BILINEAR;
    if (which == RUN_KB) {
        go.oversample = o->oversample;
        go.width = o->kernel_width;
    }
    go.threads = o->op.threads;
    s->img[which] = malloc((size_t)n * 2 * sizeof(float));
    if (!s->img[which])
        return mr_error(MR_ENOMEM, "out of memory for a %lld-voxel image", (long long)n);
    st = coil_buffers(s, n);
    if (st != MR_OK)
        return st;
    double t0 = mr_now();
    st = mr_gridding_create(&s->grid, ks->matrix, ks->traj, ks->nsamples, &go);
    if (st == MR_OK && ks->ncoils > 1)
        memset(s->rss, 0, (size_t)n * sizeof(float));
    for (int64_t c = 0; st == MR_OK && c < ks->ncoils; c++) {
        float *x = ks->ncoils == 1 ? s->img[which] : s->coil_img;
        st = mr_gridding_apply(s->grid, ks->data + 2 * ks->nsamples * c, s->weights, x);
        if (st == MR_OK && ks->ncoils > 1)
            rss_add(s->rss, x, n);
    }
    if (st == MR_OK && ks->ncoils > 1)
        rss_finish(s->img[which], s->rss, n);
    mr_gridding_destroy(s->grid);
    s->grid = NULL;
    if (st != MR_OK)
        return st;
    m->t_gridding = mr_now() - t0;
    r->t_gridding += m->t_gridding;
    m->seconds = r->t_dcf + m->t_gridding; /* the DCF is shared by both gridding methods */
    m->final_rel_resid = NAN;
    mr_log(MR_LOG_INFO, "%s: %.3f s", run_names[which], m->t_gridding);
    return MR_OK;
}

/* image_<method>.h5 and .png */
static mr_status write_image(const char *outdir, const mr_report *r, const mr_report_method *m, const float *img,
                             float *mag)
{
    const int64_t n = r->matrix[0] * r->matrix[1] * r->matrix[2];
    char name[96], path[4096];
    const mr_image_attr attrs[] = {
        {"lambda", r->lambda},
        {"tol", r->tol},
        {"final_relative_residual", m->final_rel_resid},
        {"time_read_s", r->t_read},
        {"time_q_s", m->rel_resid ? r->t_q : 0},
        {"time_operator_create_s", m->rel_resid ? r->t_op_create : 0},
        {"time_fhd_s", m->rel_resid ? r->t_fhd : 0},
        {"time_solve_s", m->t_solve},
        {"time_dcf_s", m->rel_resid ? 0 : r->t_dcf},
        {"time_gridding_s", m->t_gridding},
        {"seconds", m->seconds},
        {"oversample", r->oversample},
        {"kernel_width", r->kernel_width},
        {"basis_dirac", strcmp(r->basis, "dirac") == 0},
    };
    mr_image_meta meta = {m->method, m->iterations, attrs, (int)(sizeof attrs / sizeof attrs[0])};
    snprintf(name, sizeof name, "image_%s.h5", m->method);
    mr_status st = mr_path_join(path, sizeof path, outdir, name);
    if (st == MR_OK)
        st = mr_image_h5_write(path, img, r->matrix, &meta);
    if (st != MR_OK)
        return st;
    for (int64_t v = 0; v < n; v++)
        mag[v] = hypotf(img[2 * v], img[2 * v + 1]);
    snprintf(name, sizeof name, "image_%s.png", m->method);
    st = mr_path_join(path, sizeof path, outdir, name);
    if (st == MR_OK)
        st = mr_png_write_volume(path, mag, r->matrix, 0, isfinite(r->window_hi) ? r->window_hi : 0, 8);
    return st;
}

static mr_status write_convergence(const char *outdir, const mr_report_method *m)
{
    char path[4096];
    mr_status st = mr_path_join(path, sizeof path, outdir, "convergence.png");
    if (st != MR_OK)
        return st;
    mr_plot_series s[2] = {
        {m->rel_resid, m->iterations + 1, {200, 30, 30}, 1, "RESIDUAL"},
        {m->psnr, m->iterations + 1, {30, 70, 200}, 0, "PSNR DB"},
    };
    return mr_plot_write(path, MR_CONVERGENCE_W, MR_CONVERGENCE_H, s, m->psnr ? 2 : 1, "ITERATION",
                         "CG CONVERGENCE");
}

static mr_status write_outputs(const char *outdir, run_state *s, const int run[3], mr_report *r)
{
    double t0 = mr_now();
    mr_status st = mr_mkdir_p(outdir);
    if (st != MR_OK)
        return st;
    int k = 0;
    for (int i = 0; i < 3; i++) {
        if (!run[i])
            continue;
        st = write_image(outdir, r, &r->m[k], s->img[i], s->mag);
        if (st != MR_OK)
            return st;
        if (i == RUN_CG) {
            st = write_convergence(outdir, &r->m[k]);
            if (st != MR_OK)
                return st;
        }
        k++;
    }
    if (run[0] && run[1] && run[2]) {
        char path[4096];
        const float *imgs[3] = {s->img[RUN_CG], s->img[RUN_KB], s->img[RUN_BILINEAR]};
        const float *truth = r->compare_truth == MR_TRUTH_BANDLIMITED ? s->ks->truth_bl : s->ks->truth;
        double hi = r->window_hi;
        if (!isfinite(hi)) { /* no truth: the CG image's maximum */
            hi = 0;
            for (int64_t v = 0; v < mr_kspace_voxels(s->ks); v++)
                hi = fmax(hi, hypot(imgs[0][2 * v], imgs[0][2 * v + 1]));
        }
        st = mr_path_join(path, sizeof path, outdir, "compare.png");
        if (st == MR_OK)
            st = mr_compare_write(path, r->matrix, truth, imgs, run_labels, 3, hi, r->error_gain);
        if (st != MR_OK)
            return st;
    }
    r->t_write = mr_now() - t0;
    return MR_OK;
}

static mr_status write_reports(const char *outdir, const mr_report *r)
{
    static const char *const names[] = {"report.json", "report.md", "metrics.csv"};
    mr_status (*const writers[])(const char *, const mr_report *) = {mr_report_write_json, mr_report_write_md,
                                                                      mr_report_write_csv};
    char path[4096];
    for (int i = 0; i < 3; i++) {
        mr_status st = mr_path_join(path, sizeof path, outdir, names[i]);
        if (st == MR_OK)
            st = writers[i](path, r);
        if (st != MR_OK)
            return st;
    }
    return MR_OK;
}

mr_status mr_recon_run(const char *scan, const char *outdir, const mr_recon_opts *opts)
{
    double t_start = mr_now();
    mr_recon_opts o = *opts;
    int run[3];
    mr_reg_kind regk;
    mr_status st = validate_opts(&o, run, &regk);
    if (st != MR_OK)
        return st;
    if (!outdir || !outdir[0])
        return mr_error(MR_EINVAL, "no output directory given");

    run_state s;
    memset(&s, 0, sizeof s);
    mr_report r;
    memset(&r, 0, sizeof r);
    r.input = scan;
    r.method = o.method ? o.method : "cg";
    r.reg = mr_reg_name(regk);
    r.basis = o.op.basis == MR_BASIS_DIRAC ? "dirac" : "box";
    r.device = o.op.device == MR_DEVICE_CPU ? "cpu" : o.op.device == MR_DEVICE_GPU ? "gpu" : "auto";
    r.dcf = run[RUN_KB] || run[RUN_BILINEAR] ? (o.dcf ? o.dcf : "pipe") : "none (cg only)";
    r.iters = o.iters;
    r.tol = o.tol;
    r.lambda = o.lambda;
    r.oversample = o.oversample;
    r.kernel_width = o.kernel_width;
    r.threads = o.op.threads > 0 ? o.op.threads : omp_get_max_threads();
    r.normal_diag = NAN;
    r.error_gain = MR_RECON_ERROR_GAIN;
    snprintf(r.backend, sizeof r.backend, "cpu (%d threads)", r.threads);

    double t0 = mr_now();
    st = mr_kspace_read(scan, &s.ks);
    if (st != MR_OK)
        goto fail;
    r.t_read = mr_now() - t0;
    const mr_kspace *ks = s.ks;
    if (ks->ncoils > 1)
        mr_log(MR_LOG_INFO, "%s: %lld coils: each reconstructed alone, combined by root-sum-of-squares", scan,
               (long long)ks->ncoils);
    const char *dcf = o.dcf ? o.dcf : "pipe";
    if ((run[RUN_KB] || run[RUN_BILINEAR]) && !strcmp(dcf, "file") && !ks->weights) {
        st = mr_error(MR_EINVAL, "%s: --dcf file, but the scan has no /kspace/weights", scan);
        goto fail;
    }
    if ((run[RUN_KB] || run[RUN_BILINEAR]) && !strcmp(dcf, "analytic") && !radial_kind(ks->traj_kind)) {
        st = mr_error(MR_EINVAL,
                      "%s: --dcf analytic needs a radial trajectory (radial2d, golden2d, kooshball), this one is '%s'",
                      scan, ks->traj_kind[0] ? ks->traj_kind : "unknown");
        goto fail;
    }
    memcpy(r.matrix, ks->matrix, sizeof r.matrix);
    r.nsamples = ks->nsamples;
    r.ncoils = ks->ncoils;
    snprintf(r.traj_kind, sizeof r.traj_kind, "%s", ks->traj_kind);
    snprintf(r.phantom, sizeof r.phantom, "%s", ks->phantom);
    r.noise_sigma = ks->noise_sigma;
    r.has_truth[MR_TRUTH_IMAGE] = ks->truth != NULL;
    r.has_truth[MR_TRUTH_BANDLIMITED] = ks->truth_bl != NULL;
    double worst;
    r.samples_outside = mr_kspace_count_outside(ks, &worst);
    if (r.samples_outside)
        mr_log(MR_LOG_WARN, "%s: %lld of %lld samples lie outside the Nyquist box [-N/2, N/2] (up to %.3g x N/2)",
               scan, (long long)r.samples_outside, (long long)ks->nsamples, worst);

    const int64_t n = mr_kspace_voxels(ks);
    for (int i = 0; i < 3; i++) {
        if (!run[i])
            continue;
        mr_report_method *m = &r.m[r.nmethods++];
        snprintf(m->method, sizeof m->method, "%s", run_names[i]);
        st = i == RUN_CG ? run_cg(&s, &o, regk, &r, m) : run_gridding(&s, &o, (run_kind)i, &r, m);
        if (st != MR_OK)
            goto fail;
        const float *truths[MR_TRUTH_COUNT] = {ks->truth, ks->truth_bl};
        for (int k = 0; k < MR_TRUTH_COUNT; k++) {
            if (!truths[k])
                continue;
            st = mr_metrics_compute(s.img[i], 1, truths[k], n, &m->metrics[k]);
            if (st != MR_OK)
                goto fail;
            m->have_metrics[k] = 1;
            mr_log(MR_LOG_INFO, "%s vs %s truth: PSNR %.2f dB, error %.2f %%", m->method,
                   mr_truth_name((mr_truth_kind)k), m->metrics[k].psnr_db, m->metrics[k].percent_error);
        }
    }

    /* display window: [0, max |truth|] when a truth exists (the voxel-averaged one first) */
    const float *wtruth = ks->truth ? ks->truth : ks->truth_bl;
    r.compare_truth = ks->truth_bl ? MR_TRUTH_BANDLIMITED : MR_TRUTH_IMAGE;
    if (wtruth) {
        double hi = 0;
        for (int64_t v = 0; v < n; v++)
            hi = fmax(hi, fabs((double)wtruth[v]));
        r.window_hi = hi;
        r.window_from = ks->truth ? "max of the truth image" : "max of the bandlimited truth";
    } else {
        r.window_hi = NAN;
        r.window_from = "each image's own maximum";
    }
    s.mag = malloc((size_t)n * sizeof(float));
    if (!s.mag) {
        st = mr_error(MR_ENOMEM, "out of memory for a %lld-voxel image", (long long)n);
        goto fail;
    }

    st = write_outputs(outdir, &s, run, &r);
    if (st != MR_OK)
        goto fail;
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        r.peak_rss_kib = ru.ru_maxrss;
    r.t_total = mr_now() - t_start;
    st = write_reports(outdir, &r);
    if (st != MR_OK)
        goto fail;
    if (o.on_report)
        o.on_report(o.on_report_ctx, &r);
    free_state(&s);
    return MR_OK;
fail:
    free_state(&s);
    return st;
}
