/* recon/pipeline.h: the stages of one reconstruction: options -> device -> read -> coil handling ->
 * CG (operator, F^H d, solve on the backend) and/or DCF -> gridding -> metrics -> files
 * (recon/outputs.h). Everything is computed before OUTDIR is created, so a run that fails (bad input,
 * bad option, a failing stage) leaves no directory and no file behind. */
#include "pipeline.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../base/child.h"
#include "../base/log.h"
#include "../io/fsutil.h"
#include "../io/input.h"
#include "../io/q_cache.h"
#include "../io/sens_h5.h"
#include "../solver/backend.h"
#include "../solver/cg.h"
#include "../solver/dcf.h"
#include "../solver/gridding.h"
#include "../solver/linop.h"
#include "../solver/metrics.h"
#include "../solver/regularizer.h"
#include "autolambda.h"
#include "combine.h"
#include "outdir.h"
#include "outputs.h"
#include "report.h"
#include "sens_estimate.h"
#include "volumes.h"

#define MR_RECON_ERROR_GAIN 5.0
#define MR_RECON_WINDOW_PERCENTILE 99.5 /* display window without a truth image */

void mr_recon_opts_default(mr_recon_opts *o)
{
    memset(o, 0, sizeof *o);
    o->method = "cg";
    o->iters = 60;
    o->tol = 0;
    o->lambda = -1;     /* automatic (recon/autolambda.h) */
    o->lambda_rel = -1;
    o->reg = "gradient"; /* the regulariser the automatic lambda is measured with */
    mr_op_opts_default(&o->op);
    o->op.basis = MR_BASIS_DIRAC; /* measured better than the box basis on the standard suite (docs/RECON.md) */
    o->sens = "auto";
    o->sens_maps = NULL;
    o->dcf = "pipe";
    o->oversample = 2.0;
    o->kernel_width = 6;
    o->q_cache = NULL;
    mr_read_opts_default(&o->read);
    o->prewhiten = 1;
    o->volume = -1;
    o->nifti = "magnitude";
}

typedef enum { RUN_CG = 0, RUN_KB = 1, RUN_BILINEAR = 2 } run_kind;
static const char *const run_names[] = {"cg", "gridding-kb", "gridding-bilinear"};

typedef enum { SENS_NONE = 0, SENS_FILE = 1, SENS_RSS = 2, SENS_ESTIMATE = 3 } sens_mode;
static const char *const sens_names[] = {"none", "file", "rss", "estimate"};

static mr_status validate_opts(const mr_recon_opts *o, int run[3], mr_reg_kind *reg)
{
    const char *m = o->method ? o->method : "cg";
    run[RUN_CG] = !strcmp(m, "cg") || !strcmp(m, "all");
    run[RUN_KB] = !strcmp(m, "gridding-kb") || !strcmp(m, "all");
    run[RUN_BILINEAR] = !strcmp(m, "gridding-bilinear") || !strcmp(m, "all");
    if (!run[0] && !run[1] && !run[2])
        return mr_error(MR_EINVAL, "method '%s' is not one of cg, gridding-bilinear, gridding-kb, all", m);
    if (o->lambda >= 0 && o->lambda_rel >= 0)
        return mr_error(MR_EINVAL, "--lambda %g and --lambda-rel %g exclude each other", o->lambda, o->lambda_rel);
    if (!isfinite(o->lambda_rel))
        return mr_error(MR_EINVAL, "lambda_rel %g is not finite", o->lambda_rel);
    mr_status st = mr_cg_check_params(o->iters, o->lambda < 0 && !isnan(o->lambda) ? 0 : o->lambda, o->tol);
    if (st != MR_OK)
        return st;
    st = mr_reg_parse(o->reg ? o->reg : "identity", reg);
    if (st != MR_OK)
        return st;
    const char *d = o->dcf ? o->dcf : "pipe";
    if (strcmp(d, "file") && strcmp(d, "analytic") && strcmp(d, "pipe"))
        return mr_error(MR_EINVAL, "dcf '%s' is not one of pipe, file, analytic", d);
    const char *s = o->sens ? o->sens : "auto";
    if (strcmp(s, "auto") && strcmp(s, "file") && strcmp(s, "rss") && strcmp(s, "estimate"))
        return mr_error(MR_EINVAL, "sens '%s' is not one of auto, file, estimate, rss", s);
    if (o->sens_maps && (!strcmp(s, "rss") || !strcmp(s, "estimate")))
        return mr_error(MR_EINVAL, "--sens-maps %s and --sens %s exclude each other", o->sens_maps, s);
    const char *nii = o->nifti ? o->nifti : "magnitude";
    if (strcmp(nii, "magnitude") && strcmp(nii, "complex") && strcmp(nii, "none"))
        return mr_error(MR_EINVAL, "nifti '%s' is not one of magnitude, complex, none", nii);
    return MR_OK;
}

static int radial_kind(const char *kind)
{
    return !strcmp(kind, "radial2d") || !strcmp(kind, "golden2d") || !strcmp(kind, "kooshball");
}

/* ---- the run ----------------------------------------------------------------------------------- */

typedef struct {
    mr_kspace *ks;
    int gpu;           /* resolved device: GPU index, -1 = host */
    sens_mode sens;
    const float *maps; /* SENS_FILE, SENS_ESTIMATE: [C][N][2], the scan's or maps_owned */
    float *maps_owned; /* read from --sens-maps, or estimated */
    int64_t calib[3];  /* SENS_ESTIMATE: the calibration grid */
    double t_resolve;  /* choosing the device (part of the device initialisation) */
    double t_fork_wait; /* forks of the read that waited for the background device initialisation (ditto) */
    float *img[3];
    float *weights;
    double *hist; /* per-coil CG: the combined residual history */
    mr_cg_result cg;
    mr_q_cache *qcache; /* open from the operator's creation until the results are written */
    char qcache_dir[4096]; /* its directory (the report's) */
    char q_source[200];    /* the report's q_source when the cache did not store what was computed */
} run_state;

static void free_state(run_state *s)
{
    mr_kspace_free(s->ks);
    free(s->maps_owned);
    for (int i = 0; i < 3; i++)
        free(s->img[i]);
    free(s->weights);
    free(s->hist);
    mr_cg_result_free(&s->cg);
    mr_q_cache_close(s->qcache);
    s->qcache = NULL;
}

/* Which coil handling, and the maps it uses. */
static mr_status choose_sens(run_state *s, const mr_recon_opts *o, const char *scan, mr_report *r)
{
    const mr_kspace *ks = s->ks;
    const char *want = o->sens ? o->sens : "auto";
    if (o->sens_maps) {
        mr_status st = mr_sens_read(o->sens_maps, ks->matrix, ks->ncoils, &s->maps_owned);
        if (st != MR_OK)
            return st;
        s->maps = s->maps_owned;
        r->sens_source = o->sens_maps;
    } else if (!strcmp(want, "file") || (!strcmp(want, "auto") && ks->sens)) {
        if (!ks->sens)
            return mr_error(MR_EINVAL, "%s: --sens file, but the scan has no coil maps (/kspace/sens); give "
                                       "--sens-maps FILE or use --sens rss",
                            scan);
        s->maps = ks->sens;
        r->sens_source = scan;
    } else if (!strcmp(want, "estimate") || (!strcmp(want, "auto") && ks->ncoils > 1)) {
        mr_status st = mr_sens_estimate(ks, scan, o->op.threads, &s->maps_owned, s->calib);
        if (st != MR_OK && strcmp(want, "auto"))
            return st;
        if (st != MR_OK) /* auto: the per-coil path needs no maps */
            mr_log(MR_LOG_WARN, "%s; each coil is reconstructed alone instead (root-sum-of-squares)", mr_last_error());
        mr_clear_error();
        s->maps = s->maps_owned;
    }
    s->sens = s->maps ? (s->maps_owned && !o->sens_maps ? SENS_ESTIMATE : SENS_FILE)
                      : (ks->ncoils > 1 ? SENS_RSS : SENS_NONE);
    r->sens = sens_names[s->sens];
    if (s->sens == SENS_ESTIMATE)
        memcpy(r->sens_calib, s->calib, sizeof r->sens_calib);
    /* unit-norm maps and root-sum-of-squares both give rho ||S||: a scan that holds its true maps
       (simulated) and a truth is scored against the truth weighted the same way (sens_estimate.h) */
    if ((s->sens == SENS_ESTIMATE || s->sens == SENS_RSS) && mr_sens_weight_truth(s->ks)) {
        r->truth_weighted = 1;
        mr_log(MR_LOG_INFO, "%s: the metrics compare against the truth weighted by the root-sum-of-squares of the "
                            "scan's own coil maps (the image %s reconstructs)",
               scan, s->sens == SENS_RSS ? "root-sum-of-squares" : "SENSE with unit-norm maps");
    }
    if (s->sens == SENS_FILE)
        mr_log(MR_LOG_INFO, "%s: %lld coil(s), SENSE with the maps of %s", scan, (long long)ks->ncoils,
               r->sens_source);
    else if (s->sens == SENS_ESTIMATE)
        mr_log(MR_LOG_INFO, "%s: %lld coils, SENSE with the coil maps estimated from the data", scan,
               (long long)ks->ncoils);
    else if (s->sens == SENS_RSS)
        mr_log(MR_LOG_INFO, "%s: %lld coils: each reconstructed alone, combined by root-sum-of-squares", scan,
               (long long)ks->ncoils);
    return MR_OK;
}

/* ---- CG ---------------------------------------------------------------------------------------- */

/* Per-iteration PSNR on the backend: the truth as a complex vector there, the image never leaves. */
typedef struct {
    const mr_vecops *v;
    const float *truth;
    int64_t n;
    double peak;
} psnr_monitor;

static double psnr_of(void *ctx, const float *x)
{
    const psnr_monitor *p = ctx;
    const double mse = p->v->mag_dist2(p->v->ctx, p->n, x, p->truth) / (double)p->n;
    return 20.0 * log10(p->peak / sqrt(mse));
}

/* Where CG reports its iterations: the log (-v) and the progress sink. */
typedef struct {
    const int64_t *coil; /* NULL when CG runs on the whole image */
    int64_t ncoils;
    int iters;
    const mr_progress *progress;
} cg_progress;

static void log_progress(void *ctx, int iter, double rel_resid, double metric)
{
    const cg_progress *p = ctx;
    const int64_t *coil = p->coil;
    mr_progress_report(p->progress, "CG", (double)(coil ? *coil : 0) * p->iters + iter,
                       (double)p->ncoils * p->iters);
    char who[48] = "";
    if (coil)
        snprintf(who, sizeof who, " (coil %lld)", (long long)*coil);
    if (isfinite(metric))
        mr_log(MR_LOG_DEBUG, "cg: iteration %3d%s: relative residual %.4e, PSNR %.3f dB", iter, who, rel_resid,
               metric);
    else
        mr_log(MR_LOG_DEBUG, "cg: iteration %3d%s: relative residual %.4e", iter, who, rel_resid);
}

/* The system CG solves: E^H E (+ lambda R^H R, R = I or finite differences). */
static mr_status make_system(mr_linop **out, mr_linop *e, mr_reg_kind regk, double lambda)
{
    mr_linop *fd = NULL;
    int64_t dims[4];
    mr_linop_dom(e, dims);
    mr_status st = regk == MR_REG_GRADIENT && lambda > 0 ? mr_linop_fd_create(&fd, mr_linop_backend(e), dims) : MR_OK;
    if (st == MR_OK)
        st = mr_linop_normal_system(out, e, fd, lambda);
    mr_linop_free(fd);
    return st;
}

/* The operators and vectors of one CG run, all on one backend. */
typedef struct {
    mr_backend *be;
    const mr_vecops *v;
    mr_linop *f, *sens, *e, *sys;
    float *d, *b, *x, *truth;
} cg_objects;

static void cg_objects_free(cg_objects *c)
{
    if (c->v) {
        c->v->release(c->v->ctx, c->d);
        c->v->release(c->v->ctx, c->b);
        c->v->release(c->v->ctx, c->x);
        c->v->release(c->v->ctx, c->truth);
    }
    mr_linop_free(c->sys);
    mr_linop_free(c->e);
    mr_linop_free(c->sens);
    mr_linop_free(c->f);
    mr_backend_free(c->be);
}

/* diag(E^H E) at the centre voxel, <delta, E^H E delta>: a scale against which lambda can be judged. */
static mr_status normal_diag(cg_objects *c, const int64_t matrix[3], double *diag)
{
    const int64_t n = mr_linop_dom_size(c->e);
    const int64_t centre = ((matrix[2] / 2) * matrix[1] + matrix[1] / 2) * matrix[0] + matrix[0] / 2;
    float *delta = calloc((size_t)n * 2, sizeof(float));
    if (!delta)
        return mr_error(MR_ENOMEM, "out of memory for %lld-voxel images", (long long)n);
    delta[2 * centre] = 1.0f;
    mr_status st = c->v->from_host(c->v->ctx, n, c->x, delta);
    free(delta);
    if (st == MR_OK)
        st = mr_linop_normal(c->e, c->x, c->b);
    double dot[2] = {NAN, NAN};
    if (st == MR_OK)
        c->v->dot(c->v->ctx, n, c->x, c->b, dot);
    *diag = dot[0];
    return st;
}

/* The image scale s of the automatic lambda: the 99th percentile of |x_1|, x_1 = alpha b the first CG
 * iterate (alpha = ||b||^2 / <b, E^H E b>); c->x is scratch. */
static mr_status image_scale(cg_objects *c, int64_t n, double *scale)
{
    *scale = NAN;
    mr_status st = mr_linop_normal(c->e, c->b, c->x);
    if (st != MR_OK)
        return st;
    double bab[2] = {0, 0};
    c->v->dot(c->v->ctx, n, c->b, c->x, bab);
    const double bb = c->v->norm(c->v->ctx, n, c->b);
    float *host = malloc((size_t)n * 2 * sizeof(float));
    if (!host)
        return mr_error(MR_ENOMEM, "out of memory for a %lld-voxel image", (long long)n);
    double p = NAN;
    st = c->v->to_host(c->v->ctx, n, host, c->b);
    if (st == MR_OK)
        st = mr_metrics_percentile(host, 1, n, MR_AUTOLAMBDA_SCALE_PERCENTILE, &p);
    free(host);
    if (st == MR_OK && bab[0] > 0)
        *scale = bb * bb / bab[0] * p;
    return st;
}

/* Mean |d|^2 per sample over every coil (the SNR the messages quote). */
static double data_power(const mr_kspace *ks)
{
    const int64_t nd = 2 * ks->nsamples * ks->ncoils;
    double p = 0;
    for (int64_t i = 0; i < nd; i++)
        p += (double)ks->data[i] * ks->data[i];
    return p / (double)(ks->nsamples * ks->ncoils);
}

/* lambda for the right-hand side in c->b (the scale needs it), then the system c->sys. */
static mr_status choose_system(cg_objects *c, const run_state *s, const mr_recon_opts *o, mr_reg_kind regk,
                               mr_report *r)
{
    const mr_kspace *ks = s->ks;
    mr_lambda_inputs in = {o->lambda, o->lambda_rel, regk, ks->noise_sigma, r->normal_diag, NAN, 0};
    mr_status st = MR_OK;
    if (mr_lambda_needs_scale(o->lambda, o->lambda_rel, ks->noise_sigma))
        st = image_scale(c, mr_linop_dom_size(c->e), &in.scale);
    if (st != MR_OK)
        return st;
    in.data_power = data_power(ks);
    mr_lambda_choice ch;
    mr_lambda_choose(&in, &ch);
    r->lambda = ch.lambda;
    r->lambda_rel = ch.rel;
    snprintf(r->lambda_from, sizeof r->lambda_from, "%s", ch.from);
    mr_linop_free(c->sys);
    c->sys = NULL;
    return make_system(&c->sys, c->e, regk, ch.lambda);
}

static mr_status run_cg(run_state *s, const mr_recon_opts *o, mr_reg_kind regk, mr_report *r, mr_report_method *m)
{
    const mr_kspace *ks = s->ks;
    const int64_t n = mr_kspace_voxels(ks), M = ks->nsamples, ncoils = ks->ncoils;
    const int whole = s->sens != SENS_RSS; /* one CG on the whole image (else one per coil) */
    cg_objects c;
    memset(&c, 0, sizeof c);
    double t0 = mr_now();
    /* the device resolved at the start; an explicit request stays explicit, auto may still take the
     * host if the GPU turns out unusable (no cuFFT) */
    mr_device_sel sel = mr_op_opts_device(&o->op); /* keeps a list of GPUs for the sums */
    sel.kind = s->gpu < 0 ? MR_DEVICE_CPU : o->op.device == MR_DEVICE_GPU ? MR_DEVICE_GPU : MR_DEVICE_AUTO;
    sel.index = s->gpu;
    if (s->gpu >= 0)
        t0 -= s->t_resolve + s->t_fork_wait; /* the operator's setup includes choosing the device */
    mr_status st = mr_backend_create(&c.be, sel, o->op.threads);
    if (st != MR_OK)
        goto done;
    c.v = mr_backend_vecops(c.be);
    r->t_device_init = mr_backend_on_gpu(c.be) ? s->t_resolve + s->t_fork_wait + mr_backend_init_seconds(c.be) : 0.0;
    snprintf(r->backend, sizeof r->backend, "%s", mr_backend_name(c.be));

    mr_nudft_opts no;
    mr_op_opts_nudft(&o->op, &no);
    if (!s->qcache && (st = mr_q_cache_open(&s->qcache, o->q_cache, 0)) != MR_OK) {
        mr_log(MR_LOG_WARN, "%s; Q is computed without the cache", mr_last_error());
        mr_clear_error();
    }
    no.q_store = mr_q_cache_store(s->qcache);
    snprintf(s->qcache_dir, sizeof s->qcache_dir, "%s", s->qcache ? mr_q_cache_dir(s->qcache) : "off");
    r->q_cache = s->qcache_dir;
    no.progress = o->progress;
    mr_nudft_info info;
    st = mr_linop_nudft_create(&c.f, c.be, ks->matrix, ks->traj, M, NULL, s->maps ? ncoils : 1, &no, &info);
    if (st == MR_OK && s->maps) {
        st = mr_linop_sens_create(&c.sens, c.be, ks->matrix, ncoils, s->maps);
        if (st == MR_OK)
            st = mr_linop_chain(&c.e, c.sens, c.f);
    } else if (st == MR_OK) {
        c.e = mr_linop_ref(c.f);
    }
    if (st != MR_OK)
        goto done;
    r->t_q = info.q_seconds;
    r->q_source = info.q_source;
    snprintf(r->sums, sizeof r->sums, "%s", info.engine_name);
    r->t_plan = info.plan_seconds;
    r->t_fft_plan = info.fft_plan_seconds;
    r->t_sums_setup = info.engine_seconds;
    c.d = mr_backend_upload(c.be, 2 * M * ncoils, ks->data); /* the data go to the backend once */
    c.b = mr_backend_alloc(c.be, n);
    c.x = mr_backend_alloc(c.be, n);
    s->img[RUN_CG] = malloc((size_t)n * 2 * sizeof(float));
    if (!c.d || !c.b || !c.x || !s->img[RUN_CG]) {
        st = mr_error(MR_ENOMEM, "out of memory for the %lld-voxel CG vectors", (long long)n);
        goto done;
    }
    r->t_op_create = mr_now() - t0;
    mr_log(MR_LOG_INFO, "operator: %s, sums %s, Q in %.3f s (%s), setup %.3f s (device %.3f s, FFT plans %.3f s)",
           r->backend, info.engine_name, info.q_seconds, info.q_source, r->t_op_create, r->t_device_init,
           info.fft_plan_seconds);
    if ((st = normal_diag(&c, ks->matrix, &r->normal_diag)) != MR_OK)
        goto done;

    mr_cg_opts co;
    mr_cg_opts_default(&co);
    co.iters = o->iters;
    co.tol = o->tol;
    co.progress = log_progress;
    cg_progress cgp = {NULL, whole ? 1 : ncoils, o->iters, o->progress};
    co.progress_ctx = &cgp;
    const float *truth = ks->truth_bl ? ks->truth_bl : ks->truth;
    psnr_monitor mon = {c.v, NULL, n, 0};
    if (truth && whole) {
        float *tc = malloc((size_t)n * 2 * sizeof(float));
        if (!tc) {
            st = mr_error(MR_ENOMEM, "out of memory for a %lld-voxel image", (long long)n);
            goto done;
        }
        for (int64_t v = 0; v < n; v++) {
            tc[2 * v] = truth[v];
            tc[2 * v + 1] = 0.0f;
            mon.peak = fmax(mon.peak, fabs((double)truth[v]));
        }
        c.truth = mr_backend_upload(c.be, 2 * n, tc);
        free(tc);
        if (!c.truth) {
            st = MR_ENOMEM;
            goto done;
        }
        mon.truth = c.truth;
        co.metric = psnr_of;
        co.metric_ctx = &mon;
        m->psnr_truth = ks->truth_bl ? MR_TRUTH_BANDLIMITED : MR_TRUTH_IMAGE;
    }

    if (whole) {
        t0 = mr_now();
        if ((st = mr_linop_adjoint(c.e, c.d, c.b)) != MR_OK)
            goto done;
        r->t_fhd = mr_now() - t0;
        if ((st = choose_system(&c, s, o, regk, r)) != MR_OK)
            goto done;
        t0 = mr_now();
        if ((st = mr_cg_solve_linop(c.sys, c.b, c.x, &co, &s->cg)) != MR_OK ||
            (st = c.v->to_host(c.v->ctx, n, s->img[RUN_CG], c.x)) != MR_OK)
            goto done;
        m->t_monitor = s->cg.metric_seconds;
        m->t_solve = mr_now() - t0 - s->cg.metric_seconds;
        m->iterations = s->cg.iterations;
        m->stop = mr_cg_stop_name(s->cg.stop);
        m->final_rel_resid = s->cg.final_rel_resid;
        m->rel_resid = s->cg.rel_resid;
        m->psnr = s->cg.metric;
    } else {
        /* per coil, combined by root-sum-of-squares */
        mr_combine comb;
        float *xc = malloc((size_t)n * 2 * sizeof(float));
        s->hist = calloc((size_t)o->iters + 1, sizeof(double));
        st = !xc || !s->hist ? mr_error(MR_ENOMEM, "out of memory for %lld-voxel coil images", (long long)n)
                             : mr_combine_init(&comb, n, ncoils, NULL);
        if (st != MR_OK) {
            free(xc);
            goto done;
        }
        double r0sq = 0;
        mr_cg_stop first_stop = MR_CG_STOP_ITERS;
        int same_stop = 1;
        double lambda_lo = INFINITY, lambda_hi = 0;
        for (int64_t k = 0; k < ncoils && st == MR_OK; k++) {
            cgp.coil = &k;
            t0 = mr_now();
            if ((st = mr_linop_adjoint(c.e, c.d + 2 * M * k, c.b)) != MR_OK)
                break;
            r->t_fhd += mr_now() - t0;
            /* automatic lambda: each coil's own (its image has its own scale) */
            if ((st = choose_system(&c, s, o, regk, r)) != MR_OK)
                break;
            lambda_lo = fmin(lambda_lo, r->lambda);
            lambda_hi = fmax(lambda_hi, r->lambda);
            t0 = mr_now();
            if ((st = mr_cg_solve_linop(c.sys, c.b, c.x, &co, &s->cg)) != MR_OK ||
                (st = c.v->to_host(c.v->ctx, n, xc, c.x)) != MR_OK)
                break;
            m->t_solve += mr_now() - t0;
            same_stop &= k == 0 || s->cg.stop == first_stop;
            first_stop = s->cg.stop;
            mr_combine_add(&comb, k, xc);
            for (int i = 0; i <= o->iters; i++) { /* a coil that stopped early keeps its last residual */
                double rk = s->cg.rel_resid[i < s->cg.iterations ? i : s->cg.iterations] * s->cg.r0_norm;
                s->hist[i] += rk * rk;
            }
            r0sq += s->cg.r0_norm * s->cg.r0_norm;
            if (s->cg.iterations > m->iterations)
                m->iterations = s->cg.iterations;
            mr_cg_result_free(&s->cg);
        }
        if (st == MR_OK && lambda_hi > lambda_lo) { /* the report names the largest and the range */
            char from[sizeof r->lambda_from];
            snprintf(from, sizeof from, "%.190s; per coil from %.4g to %.4g", r->lambda_from, lambda_lo, lambda_hi);
            snprintf(r->lambda_from, sizeof r->lambda_from, "%s", from);
            r->lambda = lambda_hi;
            r->lambda_rel = lambda_hi / r->normal_diag;
        }
        if (st == MR_OK) {
            for (int i = 0; i <= o->iters; i++)
                s->hist[i] = r0sq > 0 ? sqrt(s->hist[i] / r0sq) : 0;
            mr_combine_finish(&comb, s->img[RUN_CG]);
            m->stop = same_stop ? mr_cg_stop_name(first_stop) : "different per coil";
            m->final_rel_resid = s->hist[m->iterations];
            m->rel_resid = s->hist;
        }
        mr_combine_free(&comb);
        free(xc);
        if (st != MR_OK)
            goto done;
    }
    r->t_solve = m->t_solve;
    m->seconds = r->t_op_create + r->t_fhd + m->t_solve;
    mr_log(MR_LOG_INFO, "cg: %d iterations (%s), relative residual %.3e, %.3f s", m->iterations, m->stop,
           m->final_rel_resid, m->t_solve);
done:
    cg_objects_free(&c);
    return st;
}

/* ---- gridding ---------------------------------------------------------------------------------- */

static mr_status get_weights(run_state *s, const char *dcf, int threads, const mr_progress *progress, mr_report *r)
{
    if (s->weights)
        return MR_OK;
    const mr_kspace *ks = s->ks;
    r->dcf = dcf;
    s->weights = malloc((size_t)ks->nsamples * sizeof(float));
    if (!s->weights)
        return mr_error(MR_ENOMEM, "out of memory for %lld weights", (long long)ks->nsamples);
    double t0 = mr_now();
    mr_status st = MR_OK;
    if (!strcmp(dcf, "file"))
        memcpy(s->weights, ks->weights, (size_t)ks->nsamples * sizeof(float)); /* presence checked earlier */
    else if (!strcmp(dcf, "analytic"))
        st = mr_dcf_analytic(ks->matrix, ks->traj, ks->nsamples, s->weights);
    else
        st = mr_dcf_pipe_progress(ks->matrix, ks->traj, ks->nsamples, 0, threads, s->weights, progress);
    r->t_dcf = mr_now() - t0;
    if (st == MR_OK)
        mr_log(MR_LOG_INFO, "dcf: %s weights in %.3f s", dcf, r->t_dcf);
    return st;
}

static mr_status run_gridding(run_state *s, const mr_recon_opts *o, run_kind which, mr_report *r,
                              mr_report_method *m)
{
    const mr_kspace *ks = s->ks;
    const int64_t n = mr_kspace_voxels(ks), ncoils = ks->ncoils;
    mr_status st = get_weights(s, o->dcf ? o->dcf : "pipe", o->op.threads, o->progress, r);
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
    const int single = s->sens == SENS_NONE;
    float *xc = single ? NULL : malloc((size_t)n * 2 * sizeof(float));
    mr_combine comb = {0, 0, NULL, NULL};
    if (!s->img[which] || (!single && !xc))
        st = mr_error(MR_ENOMEM, "out of memory for a %lld-voxel image", (long long)n);
    else if (!single)
        st = mr_combine_init(&comb, n, ncoils, s->maps);
    mr_gridding *grid = NULL;
    double t0 = mr_now();
    if (st == MR_OK)
        st = mr_gridding_create(&grid, ks->matrix, ks->traj, ks->nsamples, &go);
    for (int64_t c = 0; st == MR_OK && c < ncoils; c++) {
        mr_progress_report(o->progress, run_names[which], (double)c, (double)ncoils);
        st = mr_gridding_apply(grid, ks->data + 2 * ks->nsamples * c, s->weights, single ? s->img[which] : xc);
        if (st == MR_OK && !single)
            mr_combine_add(&comb, c, xc);
    }
    if (st == MR_OK)
        mr_progress_report(o->progress, run_names[which], (double)ncoils, (double)ncoils);
    if (st == MR_OK && !single)
        mr_combine_finish(&comb, s->img[which]);
    mr_gridding_destroy(grid);
    mr_combine_free(&comb);
    free(xc);
    if (st != MR_OK)
        return st;
    m->t_gridding = mr_now() - t0;
    r->t_gridding += m->t_gridding;
    m->seconds = r->t_dcf + m->t_gridding; /* the DCF is shared by both gridding methods */
    m->final_rel_resid = NAN;
    mr_log(MR_LOG_INFO, "%s: %.3f s", run_names[which], m->t_gridding);
    return MR_OK;
}

/* ---- the stages -------------------------------------------------------------------------------- */

/* The scan's description and checks that need the file (DCF choices). */
static mr_status describe_scan(const run_state *s, const mr_recon_opts *o, const int run[3], const char *scan,
                               mr_report *r)
{
    const mr_kspace *ks = s->ks;
    const char *dcf = o->dcf ? o->dcf : "pipe";
    const int grids = run[RUN_KB] || run[RUN_BILINEAR];
    if (grids && !strcmp(dcf, "file") && !ks->weights)
        return mr_error(MR_EINVAL, "%s: --dcf file, but the scan has no /kspace/weights", scan);
    if (grids && !strcmp(dcf, "analytic") && !radial_kind(ks->traj_kind))
        return mr_error(MR_EINVAL,
                        "%s: --dcf analytic needs a radial trajectory (radial2d, golden2d, kooshball), this one is '%s'",
                        scan, ks->traj_kind[0] ? ks->traj_kind : "unknown");
    memcpy(r->matrix, ks->matrix, sizeof r->matrix);
    memcpy(r->fov_mm, ks->fov_mm, sizeof r->fov_mm);
    r->nsamples = ks->nsamples;
    r->ncoils = ks->ncoils;
    snprintf(r->traj_kind, sizeof r->traj_kind, "%s", ks->traj_kind);
    snprintf(r->phantom, sizeof r->phantom, "%s", ks->phantom);
    r->noise_sigma = ks->noise_sigma;
    r->has_truth[MR_TRUTH_IMAGE] = ks->truth != NULL;
    r->has_truth[MR_TRUTH_BANDLIMITED] = ks->truth_bl != NULL;
    double worst;
    r->samples_outside = mr_kspace_count_outside(ks, &worst);
    if (r->samples_outside)
        mr_log(MR_LOG_WARN, "%s: %lld of %lld samples lie outside the Nyquist box [-N/2, N/2] (up to %.3g x N/2)",
               scan, (long long)r->samples_outside, (long long)ks->nsamples, worst);
    return MR_OK;
}

/* Metrics of every method against every truth, and the display window. */
static mr_status score(const run_state *s, const int run[3], mr_report *r)
{
    const mr_kspace *ks = s->ks;
    const int64_t n = mr_kspace_voxels(ks);
    const float *truths[MR_TRUTH_COUNT] = {ks->truth, ks->truth_bl};
    for (int i = 0, k = 0; i < 3; i++) {
        if (!run[i])
            continue;
        mr_report_method *m = &r->m[k++];
        for (int t = 0; t < MR_TRUTH_COUNT; t++) {
            if (!truths[t])
                continue;
            mr_status st = mr_metrics_compute(s->img[i], 1, truths[t], n, &m->metrics[t]);
            if (st != MR_OK)
                return st;
            m->have_metrics[t] = 1;
            mr_log(MR_LOG_INFO, "%s vs %s truth: PSNR %.2f dB, error %.2f %%", m->method,
                   mr_truth_name((mr_truth_kind)t), m->metrics[t].psnr_db, m->metrics[t].percent_error);
        }
    }
    /* display window: [0, max |truth|] when a truth exists (the voxel-averaged one first) */
    const float *wtruth = ks->truth ? ks->truth : ks->truth_bl;
    r->compare_truth = ks->truth_bl ? MR_TRUTH_BANDLIMITED : MR_TRUTH_IMAGE;
    if (wtruth) {
        double hi = 0;
        for (int64_t v = 0; v < n; v++)
            hi = fmax(hi, fabs((double)wtruth[v]));
        r->window_hi = hi;
        r->window_from = ks->truth ? "max of the truth image" : "max of the bandlimited truth";
    } else { /* no truth: the main (first) method's image itself, robustly (a few hot voxels do not
              * turn everything dark, and data at any intensity scale come out visible) */
        for (int i = 0; i < 3; i++)
            if (run[i]) {
                mr_status st = mr_metrics_percentile(s->img[i], 1, n, MR_RECON_WINDOW_PERCENTILE, &r->window_hi);
                if (st != MR_OK)
                    return st;
                snprintf(r->window_text, sizeof r->window_text, "the %gth percentile of |%s|",
                         MR_RECON_WINDOW_PERCENTILE, run_names[i]);
                r->window_from = r->window_text;
                break;
            }
        if (!(r->window_hi > 0)) /* an all-zero image */
            r->window_hi = 1;
    }
    return MR_OK;
}

/* ---- the input and the output grid ----------------------------------------------------------- */

/* What the read stage did, into the report. */
static void describe_volume(const mr_volume_desc *d, const mr_recon_opts *o, mr_report *r)
{
    r->format = mr_input_format_name(d->format);
    r->volume = d->index;
    r->volumes = d->count;
    snprintf(r->volume_label, sizeof r->volume_label, "%s", d->label);
    r->prewhitened = d->prewhitened;
    r->noise_samples = d->noise_samples;
    r->geometry = mr_volume_geometry(d);
    r->nifti = o->nifti ? o->nifti : "magnitude";
    if (d->prewhitened)
        mr_log(MR_LOG_INFO, "%s: coils prewhitened with the noise scans (%lld samples per coil, largest correlation "
                            "%.3f)",
               r->input, (long long)d->noise_samples, d->noise_max_corr);
    else if (d->noise_samples > 0)
        mr_log(MR_LOG_INFO, "%s: noise scans present, not prewhitened (%s)", r->input,
               o->prewhiten ? "one coil" : "--prewhiten off");
}

/* ISMRMRD volumes reconstructed on a larger encodedSpace grid: the images cut to reconSpace. */
static mr_status crop_to_output_grid(run_state *s, const mr_volume_desc *d, const int run[3], mr_report *r)
{
    int64_t out[3];
    float fov[3];
    if (!mr_volume_output_grid(d, s->ks->matrix, s->ks->fov_mm, out, fov) || s->ks->truth || s->ks->truth_bl)
        return MR_OK;
    const int64_t n = out[0] * out[1] * out[2];
    for (int i = 0; i < 3; i++) {
        if (!run[i])
            continue;
        float *c = malloc((size_t)n * 2 * sizeof *c);
        if (!c)
            return mr_error(MR_ENOMEM, "out of memory for a %lld-voxel image", (long long)n);
        mr_image_crop_center(s->img[i], s->ks->matrix, c, out);
        free(s->img[i]);
        s->img[i] = c;
    }
    mr_log(MR_LOG_INFO, "images cropped from the encodedSpace grid %lldx%lldx%lld to reconSpace %lldx%lldx%lld",
           (long long)s->ks->matrix[0], (long long)s->ks->matrix[1], (long long)s->ks->matrix[2], (long long)out[0],
           (long long)out[1], (long long)out[2]);
    memcpy(r->grid, s->ks->matrix, sizeof r->grid);
    memcpy(r->matrix, out, sizeof r->matrix);
    memcpy(r->fov_mm, fov, sizeof r->fov_mm);
    return MR_OK;
}

/* What every volume of one run shares: the options, checked once, and the device, resolved once. */
typedef struct {
    const char *scan;
    mr_recon_opts o;
    int run[3];
    mr_reg_kind regk;
    int gpu;
    double t_resolve;
} run_setup;

/* The time taken to open the input (counted as reading) and, of it, the time a fork waited for the
 * background device initialisation (counted as device initialisation instead). */
typedef struct {
    double total, fork_wait;
} open_time;

/* Seconds forks have waited for background work (base/child.h) since the process began. */
static double fork_wait_s(void)
{
    mr_background_stats b;
    mr_background_get_stats(&b);
    return b.fork_wait_s;
}

/* Volume v of `in` into outdir: read, coils, methods, metrics, files. ot: opening the input (the first
 * volume's, else zeros); t_start: when this volume's run began. */
static mr_status recon_volume(const run_setup *u, mr_input *in, int v, open_time ot, double t_start,
                              const char *outdir)
{
    mr_recon_opts o = u->o;
    const int *run = u->run;
    const mr_reg_kind regk = u->regk;
    const char *scan = u->scan;
    mr_status st;
    run_state s;
    memset(&s, 0, sizeof s);
    s.gpu = u->gpu;
    s.t_resolve = u->t_resolve;

    mr_report r;
    memset(&r, 0, sizeof r);
    char device[MR_DEVICE_TEXT];
    mr_device_format(mr_op_opts_device(&o.op), device, sizeof device);
    r.input = scan;
    r.method = o.method ? o.method : "cg";
    r.reg = mr_reg_name(regk);
    r.basis = o.op.basis == MR_BASIS_DIRAC ? "dirac" : "box";
    r.device = device;
    r.dcf = run[RUN_KB] || run[RUN_BILINEAR] ? (o.dcf ? o.dcf : "pipe") : "none (cg only)";
    r.iters = o.iters;
    r.tol = o.tol;
    r.lambda = o.lambda >= 0 ? o.lambda : 0; /* the one chosen, once CG ran */
    r.lambda_rel = NAN;
    snprintf(r.lambda_from, sizeof r.lambda_from, "%s", "not used (no CG)");
    r.oversample = o.oversample;
    r.kernel_width = o.kernel_width;
    r.threads = o.op.threads > 0 ? o.op.threads : omp_get_max_threads();
    r.precision = mr_precision_name(o.op.precision);
    r.normal_diag = NAN;
    r.error_gain = MR_RECON_ERROR_GAIN;
    snprintf(r.backend, sizeof r.backend, "cpu (%d threads)", r.threads);

    double t0 = mr_now();
    const double w0 = fork_wait_s();
    mr_volume_desc vd;
    if ((st = mr_volume_read(in, v, o.prewhiten, &s.ks, &vd)) != MR_OK)
        goto fail;
    s.t_fork_wait = ot.fork_wait + fork_wait_s() - w0;
    r.t_read = ot.total + mr_now() - t0 - s.t_fork_wait;
    describe_volume(&vd, &o, &r);
    if ((st = describe_scan(&s, &o, run, scan, &r)) != MR_OK || (st = choose_sens(&s, &o, scan, &r)) != MR_OK)
        goto fail;

    for (int i = 0; i < 3; i++) {
        if (!run[i])
            continue;
        mr_report_method *m = &r.m[r.nmethods++];
        snprintf(m->method, sizeof m->method, "%s", run_names[i]);
        st = i == RUN_CG ? run_cg(&s, &o, regk, &r, m) : run_gridding(&s, &o, (run_kind)i, &r, m);
        if (st != MR_OK)
            goto fail;
    }
    if ((st = score(&s, run, &r)) != MR_OK)
        goto fail;

    memcpy(r.fov_mm, s.ks->fov_mm, sizeof r.fov_mm);
    if ((st = crop_to_output_grid(&s, &vd, run, &r)) != MR_OK)
        goto fail;
    const float *imgs[3];
    for (int i = 0, k = 0; i < 3; i++)
        if (run[i])
            imgs[k++] = s.img[i];
    const float *ctruth = r.compare_truth == MR_TRUTH_BANDLIMITED ? s.ks->truth_bl : s.ks->truth;
    /* the files go into a staging folder and appear in OUTDIR together (recon/outdir.h) */
    mr_outdir od;
    if ((st = mr_outdir_begin(&od, outdir, o.force)) != MR_OK)
        goto fail;
    if ((st = mr_outputs_write_images(od.stage, &r, imgs, ctruth)) != MR_OK) {
        mr_outdir_fail(&od, st);
        goto fail;
    }
    /* what the cache really did: a failed background store is not "computed, stored" */
    r.q_source = mr_q_cache_source(s.qcache, r.q_source, s.q_source, sizeof s.q_source);
    mr_q_cache_close(s.qcache); /* its background write (a new Q) is complete: part of the run's time */
    s.qcache = NULL;
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        r.peak_rss_kib = ru.ru_maxrss;
    r.t_total = mr_now() - t_start;
    if ((st = mr_outputs_write_reports(od.stage, &r)) != MR_OK) {
        mr_outdir_fail(&od, st);
        goto fail;
    }
    if ((st = mr_outdir_commit(&od)) != MR_OK)
        goto fail;
    if (o.on_report)
        o.on_report(o.on_report_ctx, &r);
    free_state(&s);
    return MR_OK;
fail:
    free_state(&s);
    return st;
}

/* Every volume of a multi-volume input, each into outdir/<label>/, then outdir/metrics.csv. */
static mr_status recon_volumes(const run_setup *u, mr_input *in, open_time ot, const char *outdir)
{
    const int nvol = mr_input_nvolumes(in);
    char(*labels)[MR_VOLUME_LABEL_MAX] = malloc((size_t)nvol * sizeof *labels);
    if (!labels)
        return mr_error(MR_ENOMEM, "out of memory for %d volume names", nvol);
    mr_log(MR_LOG_INFO, "%s: %d volumes, each reconstructed into %s/<volume>/", u->scan, nvol, outdir);
    mr_status st = MR_OK;
    for (int v = 0; v < nvol && st == MR_OK; v++) {
        char dir[4096];
        mr_volume_label(in, v, labels[v], sizeof labels[v]);
        if ((st = mr_path_join(dir, sizeof dir, outdir, labels[v])) != MR_OK)
            break;
        mr_log(MR_LOG_INFO, "volume %d of %d: %s", v + 1, nvol, labels[v]);
        const open_time none = {0, 0};
        if ((st = recon_volume(u, in, v, v == 0 ? ot : none, mr_now(), dir)) != MR_OK) {
            char why[1024]; /* mr_last_error's buffer is rewritten by mr_error */
            snprintf(why, sizeof why, "%s", mr_last_error());
            if (v > 0)
                mr_error(st, "volume %d of %d (%s): %s (the %d volume(s) before it are complete in %s)", v + 1, nvol,
                         labels[v], why, v, outdir);
            else
                mr_error(st, "volume 1 of %d (%s): %s", nvol, labels[v], why);
        }
    }
    if (st == MR_OK)
        st = mr_volumes_write_metrics(outdir, (const char(*)[MR_VOLUME_LABEL_MAX])labels, nvol);
    if (st == MR_OK && u->o.force) { /* an earlier run's single-volume files and other volumes go */
        const char **keep = malloc((size_t)nvol * sizeof *keep);
        if (!keep)
            st = mr_error(MR_ENOMEM, "out of memory for %d volume names", nvol);
        for (int v = 0; keep && v < nvol; v++)
            keep[v] = labels[v];
        if (keep)
            st = mr_outdir_prune(outdir, keep, nvol, 0);
        free(keep);
    }
    free(labels);
    return st;
}

mr_status mr_recon_run(const char *scan, const char *outdir, const mr_recon_opts *opts)
{
    double t_start = mr_now();
    run_setup u;
    memset(&u, 0, sizeof u);
    u.scan = scan;
    u.o = *opts;
    mr_status st = validate_opts(&u.o, u.run, &u.regk);
    if (st != MR_OK)
        return st;
    if (!outdir || !outdir[0])
        return mr_error(MR_EINVAL, "no output directory given");
    if ((st = mr_outdir_check(outdir, u.o.force)) != MR_OK) /* before any work */
        return st;

    /* the device is decided once, for every method and volume, before anything is read */
    const double t_resolve = mr_now();
    if ((st = mr_device_resolve(mr_op_opts_device(&u.o.op), &u.gpu)) != MR_OK)
        return st;
    u.t_resolve = mr_now() - t_resolve;
    if (u.gpu >= 0 && (u.run[RUN_KB] || u.run[RUN_BILINEAR]))
        mr_log(MR_LOG_INFO, "gridding runs on the CPU (it has no GPU backend)");

    /* a GPU's initialisation was queued by the resolve: it starts as the open forks the child that
     * reads an HDF5 scan, so it overlaps with that read and the one here; otherwise now */
    mr_input *in = NULL;
    double t0 = mr_now();
    const double w0 = fork_wait_s();
    if ((st = mr_input_open(scan, &u.o.read, &in)) != MR_OK)
        return st;
    mr_device_init_start();
    const open_time ot = {mr_now() - t0, fork_wait_s() - w0};
    const int nvol = mr_input_nvolumes(in);
    if (u.o.volume >= nvol)
        st = mr_error(MR_EINVAL,
                      "%s: --volume %d, but the input holds %d volume(s) (0..%d; 'mrirecon info' lists them)", scan,
                      u.o.volume, nvol, nvol - 1);
    else if (u.o.volume >= 0 || nvol == 1) {
        st = recon_volume(&u, in, u.o.volume >= 0 ? u.o.volume : 0, ot, t_start, outdir);
        if (st == MR_OK && u.o.force)
            st = mr_outdir_prune(outdir, NULL, 0, 1); /* an earlier multi-volume run's folders go */
    } else
        st = recon_volumes(&u, in, ot, outdir);
    mr_input_close(in);
    return st;
}
