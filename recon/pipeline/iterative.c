/* The iterative methods of a reconstruction (recon/pipeline/methods.h "iterative" and "cg"): the encoding operator
 * E on the chosen backend (made once per volume and shared by the iterative methods of the list), F^H d,
 * the priors' lambdas (solver/autolambda.h), the problem (solver/problem.h) and its solve; SENSE solves
 * once on the combined image, the per-coil (rss) path once per coil, combined by root-sum-of-squares.
 * With a GPU backend the data go to the device once and only the image comes back. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/log.h"
#include "../../solver/backend.h"
#include "../../solver/linop.h"
#include "../../solver/metrics.h"
#include "../../solver/autolambda.h"
#include "../../solver/coil_combine.h"
#include "pipeline_internal.h"

/* The operators and vectors the iterative methods share, all on one backend. */
struct mr_iter_objects {
    mr_backend *be;
    const mr_vecops *v;
    mr_linop *f, *sens, *e;
    float *d, *b, *x, *truth;
    mr_field_tier tier;           /* the field model's Fourier tier when it is the NUFFT (outlives f) */
    mr_field_tier_nufft_ctx tctx;
    double peak;    /* max |truth| (the PSNR monitor) */
    double scale;   /* s of the automatic lambda (whole image; NAN until computed) */
    double dn2;     /* ||d||^2 over every coil */
    double power;   /* mean |d|^2 per sample over every coil (the automatic lambda's SNR) */
};

void mr_iterative_free(run_state *s)
{
    struct mr_iter_objects *c = s->it;
    if (!c)
        return;
    if (c->v) {
        c->v->release(c->v->ctx, c->d);
        c->v->release(c->v->ctx, c->b);
        c->v->release(c->v->ctx, c->x);
        c->v->release(c->v->ctx, c->truth);
    }
    mr_linop_free(c->e);
    mr_linop_free(c->sens);
    mr_linop_free(c->f);
    mr_backend_free(c->be);
    free(c);
    s->it = NULL;
}

/* diag(E^H E) at the centre voxel, <delta, E^H E delta>: a scale against which lambda can be judged. */
static mr_status normal_diag(struct mr_iter_objects *c, const int64_t matrix[3], double *diag)
{
    const int64_t n = mr_linop_dom_size(c->e);
    const int64_t centre = ((matrix[2] / 2) * matrix[1] + matrix[1] / 2) * matrix[0] + matrix[0] / 2;
    const float one[2] = {1.0f, 0.0f}; /* the unit impulse at the centre, made where x lives */
    c->v->zero(c->v->ctx, n, c->x);
    mr_status st = c->v->from_host(c->v->ctx, 1, c->x + 2 * centre, one);
    if (st == MR_OK)
        st = mr_linop_normal(c->e, c->x, c->b);
    double dot[2] = {NAN, NAN};
    if (st == MR_OK)
        c->v->dot(c->v->ctx, n, c->x, c->b, dot);
    *diag = dot[0];
    return st;
}

/* The image scale s of the automatic lambda: the 99th percentile of |x_1|, x_1 = alpha b the first CG
 * iterate (alpha = ||b||^2 / <b, E^H E b>), for the right-hand side in c->b; c->x is scratch. */
static mr_status image_scale(struct mr_iter_objects *c, int64_t n, double *scale)
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

/* Mean |d|^2 per sample over every coil (the SNR the messages quote), and ||d||^2. */
static double data_power(const mr_kspace *ks, double *norm2)
{
    const int64_t nd = 2 * ks->nsamples * ks->ncoils;
    double p = 0;
    for (int64_t i = 0; i < nd; i++)
        p += (double)ks->data[i] * ks->data[i];
    *norm2 = p;
    return p / (double)(ks->nsamples * ks->ncoils);
}

/* E with the field map (solver/linop_field.h): its segments on the tier the encoding model would take;
 * the model and timings into r and info. */
static mr_status create_field_operator(run_state *s, const mr_recon_opts *o, const mr_run_plan *plan,
                                       const mr_encoding_opts *eo, int64_t fc, mr_report *r, mr_nudft_info *info)
{
    struct mr_iter_objects *c = s->it;
    const mr_kspace *ks = s->ks;
    const int64_t M = ks->nsamples;
    mr_field_opts fo;
    mr_field_opts_default(&fo);
    fo.model = plan->field_model;
    fo.tol = o->fieldmap_tol;
    fo.check = o->check;
    fo.basis = eo->op.basis;
    fo.nudft = eo->op;
    fo.progress = o->progress;
    mr_encoding_info ei;
    const char *tier_why = "requested";
    int nufft = o->model == MR_MODEL_NUFFT;
    if (o->model == MR_MODEL_AUTO && plan->field_model != MR_FIELD_MODEL_EXACT) {
        if (mr_encoding_choose(c->be, ks->matrix, M, fc, eo, &ei) == MR_OK) {
            nufft = ei.model == MR_MODEL_NUFFT;
            tier_why = ei.why;
        } else {
            mr_clear_error(); /* the field operator's own memory check speaks below */
        }
    }
    if (plan->field_model == MR_FIELD_MODEL_EXACT) {
        nufft = 0;
        tier_why = "the exact field model runs on the exact sums";
    }
    if (nufft) {
        mr_nufft_op_opts nuo;
        mr_nufft_op_opts_default(&nuo);
        nuo.tol = o->nufft_tol;
        nuo.progress = o->progress;
        mr_field_tier_nufft(&c->tier, &c->tctx, &nuo);
        fo.tier = &c->tier;
    }
    mr_field_info fi;
    mr_status st =
        mr_linop_field_create(&c->f, c->be, ks->matrix, ks->traj, ks->time, ks->fieldmap, M, NULL, fc, &fo, &fi);
    if (st == MR_OK) {
        snprintf(r->field_model, sizeof r->field_model, "%s", mr_field_model_name(fi.model));
        r->field_segments = fi.segments;
        r->field_bound[0] = fi.bound_max;
        r->field_bound[1] = fi.bound_rms;
        r->field_measured = fi.measured;
        const double range[4] = {fi.omega_min, fi.omega_max, fi.t_min, fi.t_max};
        memcpy(r->field_range, range, sizeof range);
        snprintf(r->model, sizeof r->model, "%s", nufft ? "nufft" : "exact");
        snprintf(r->model_why, sizeof r->model_why, "field map, %.200s", tier_why);
        snprintf(info->engine_name, sizeof info->engine_name, "%s", fi.engine);
        info->q_seconds = fi.kernel_seconds;
        info->plan_seconds = fi.setup_seconds - fi.kernel_seconds;
        info->q_source = fi.segments > 0 ? "computed (field kernels)" : "";
        mr_log(MR_LOG_INFO, "field map: %s model, %d segment(s), bound %.2g (max) %.2g (rms)%s, %.3f s",
               r->field_model, fi.segments, fi.bound_max, fi.bound_rms, fi.measured >= 0 ? ", measured below" : "",
               fi.setup_seconds);
        if (fi.measured >= 0)
            mr_log(MR_LOG_INFO, "field map: measured model error %.3g against the exact field model", fi.measured);
    }
    return st;
}

/* E of the encoding model: exact sums or NUFFT (solver/encoding.h); the model into r and info. */
static mr_status create_encoding_operator(run_state *s, const mr_encoding_opts *eo, int64_t fc, mr_report *r,
                                          mr_nudft_info *info)
{
    struct mr_iter_objects *c = s->it;
    const mr_kspace *ks = s->ks;
    mr_encoding_info ei;
    mr_status st = mr_encoding_create(&c->f, c->be, ks->matrix, ks->traj, ks->nsamples, NULL, fc, eo, &ei);
    if (st == MR_OK) {
        *info = ei.op;
        snprintf(r->model, sizeof r->model, "%s", mr_model_name(ei.model));
        snprintf(r->model_why, sizeof r->model_why, "%s", ei.why);
        snprintf(r->model_text, sizeof r->model_text, "%s", ei.description);
        r->model_bound = ei.bound;
        r->model_error[0] = ei.error_adjoint;
        r->model_error[1] = ei.error_forward;
        mr_log(MR_LOG_INFO, "model: %s", ei.description);
    }
    return st;
}

/* The truth of the per-iteration PSNR on the backend, real, and its peak |truth|. */
static mr_status upload_truth(struct mr_iter_objects *c, const float *truth, int64_t n)
{
    float *tc = malloc((size_t)n * 2 * sizeof(float));
    if (!tc)
        return mr_error(MR_ENOMEM, "out of memory for a %lld-voxel image", (long long)n);
    double peak = 0.0;
#pragma omp parallel for reduction(max : peak) schedule(static) if (n > 65536)
    for (int64_t v = 0; v < n; v++) {
        tc[2 * v] = truth[v];
        tc[2 * v + 1] = 0.0f;
        peak = fmax(peak, fabs((double)truth[v]));
    }
    c->peak = fmax(c->peak, peak);
    c->truth = mr_backend_upload(c->be, 2 * n, tc);
    free(tc);
    return c->truth ? MR_OK : MR_ENOMEM;
}

/* The backend, E, the data on it and the truth of the PSNR monitor: once per volume. */
static mr_status prepare(run_state *s, const mr_recon_opts *o, const mr_run_plan *plan, mr_report *r)
{
    const mr_kspace *ks = s->ks;
    const int64_t n = mr_kspace_voxels(ks), M = ks->nsamples, ncoils = ks->ncoils;
    struct mr_iter_objects *c = calloc(1, sizeof *c);
    if (!c)
        return mr_error(MR_ENOMEM, "out of memory");
    s->it = c;
    c->scale = NAN;
    double t0 = mr_now();
    /* the device resolved at the start; an explicit request stays explicit, auto may still take the
     * host if the GPU turns out unusable (no cuFFT) */
    mr_device_sel sel = mr_op_opts_device(&o->op); /* keeps a list of GPUs for the sums */
    sel.kind = s->gpu < 0 ? MR_DEVICE_CPU : o->op.device == MR_DEVICE_GPU ? MR_DEVICE_GPU : MR_DEVICE_AUTO;
    sel.index = s->gpu;
    if (s->gpu >= 0)
        t0 -= s->t_resolve + s->t_fork_wait; /* the operator's setup includes choosing the device */
    mr_status st = mr_backend_create(&c->be, sel, o->op.threads);
    if (st != MR_OK)
        return st;
    c->v = mr_backend_vecops(c->be);
    r->t_device_init = mr_backend_on_gpu(c->be) ? s->t_resolve + s->t_fork_wait + mr_backend_init_seconds(c->be) : 0.0;
    snprintf(r->backend, sizeof r->backend, "%s", mr_backend_name(c->be));

    mr_nudft_opts no;
    mr_op_opts_nudft(&o->op, &no);
    mr_pipeline_open_q_cache(s, o, r, "Q is");
    no.q_store = mr_q_cache_store(s->qcache);
    no.progress = o->progress;
    mr_nudft_info info;
    memset(&info, 0, sizeof info);
    info.q_source = "";
    const int64_t fc = s->maps ? ncoils : 1;
    mr_encoding_opts eo;
    mr_encoding_opts_default(&eo);
    eo.model = o->model;
    eo.tol = o->nufft_tol;
    eo.check = o->check;
    eo.op = no;
    if (s->field) /* the field map's operator */
        st = create_field_operator(s, o, plan, &eo, fc, r, &info);
    else /* the encoding model */
        st = create_encoding_operator(s, &eo, fc, r, &info);
    if (st == MR_OK && s->maps) {
        st = mr_linop_sens_create(&c->sens, c->be, ks->matrix, ncoils, s->maps);
        if (st == MR_OK)
            st = mr_linop_chain(&c->e, c->sens, c->f);
    } else if (st == MR_OK) {
        c->e = mr_linop_ref(c->f);
    }
    if (st != MR_OK)
        return st;
    r->t_q = info.q_seconds;
    r->q_source = info.q_source;
    snprintf(r->sums, sizeof r->sums, "%s", info.engine_name);
    r->t_plan = info.plan_seconds;
    r->t_fft_plan = info.fft_plan_seconds;
    r->t_sums_setup = info.engine_seconds;
    mr_upload_job *up = NULL; /* the data go to the backend once, while their power is summed */
    if ((st = mr_backend_upload_start(c->be, 2 * M * ncoils, ks->data, &c->d, &up)) != MR_OK)
        return st;
    c->power = data_power(ks, &c->dn2);
    if ((st = mr_backend_upload_wait(up)) != MR_OK)
        return st;
    c->b = mr_backend_alloc(c->be, n);
    c->x = mr_backend_alloc(c->be, n);
    if (!c->d || !c->b || !c->x)
        return mr_error(MR_ENOMEM, "out of memory for the %lld-voxel solver vectors", (long long)n);
    r->t_op_create = mr_now() - t0;
    mr_log(MR_LOG_INFO, "operator: %s, sums %s, Q in %.3f s (%s), setup %.3f s (device %.3f s, FFT plans %.3f s)",
           r->backend, info.engine_name, info.q_seconds, info.q_source, r->t_op_create, r->t_device_init,
           info.fft_plan_seconds);
    if ((st = normal_diag(c, ks->matrix, &r->normal_diag)) != MR_OK)
        return st;
    const float *truth = ks->truth_bl ? ks->truth_bl : ks->truth;
    if (truth && s->sens != SENS_RSS) /* the per-iteration PSNR on the backend: the image never leaves */
        return upload_truth(c, truth, n);
    return MR_OK;
}

static double psnr_of(void *ctx, const float *x)
{
    const struct mr_iter_objects *c = ctx;
    const int64_t n = mr_linop_dom_size(c->e);
    const double mse = c->v->mag_dist2(c->v->ctx, n, x, c->truth) / (double)n;
    return 20.0 * log10(c->peak / sqrt(mse));
}

/* Where the solver reports its iterations: the log (-v) and the progress sink. */
typedef struct {
    const char *method;
    int64_t coil, ncoils; /* coil -1: the whole image */
    int iters;
    const mr_progress *progress;
} iter_progress;

static void log_progress(void *ctx, int iter, double objective, double history, double metric)
{
    const iter_progress *p = ctx;
    mr_progress_report(p->progress, p->method, (double)(p->coil > 0 ? p->coil : 0) * p->iters + iter,
                       (double)p->ncoils * p->iters);
    char who[48] = "";
    if (p->coil >= 0)
        snprintf(who, sizeof who, " (coil %lld)", (long long)p->coil);
    char psnr[48] = "";
    if (isfinite(metric))
        snprintf(psnr, sizeof psnr, ", PSNR %.3f dB", metric);
    mr_log(MR_LOG_DEBUG, "%s: iteration %3d%s: objective %.6e, %.4e%s", p->method, iter, who, objective, history, psnr);
}

/* The priors a method solves: "iterative" the list of --reg; "cg" its quadratic ones, or gradient. */
static void method_priors(const mr_run_plan *plan, mr_method_kind kind, mr_prior_list *l)
{
    if (kind == MR_METHOD_ITERATIVE) {
        *l = plan->priors;
        return;
    }
    memset(l, 0, sizeof *l);
    for (int i = 0; i < plan->priors.n; i++)
        if (mr_prior_get(plan->priors.kind[i])->penalty == MR_PENALTY_L2) {
            l->kind[l->n] = plan->priors.kind[i];
            l->weight[l->n++] = plan->priors.weight[i];
        }
    if (l->n == 0) {
        l->kind[0] = MR_PRIOR_GRADIENT;
        l->weight[0] = 1.0;
        l->n = 1;
    }
}

/* The problem for the right-hand side in c->b: each prior's lambda (into m->terms), its term. */
static mr_status make_problem(run_state *s, const mr_recon_opts *o, const mr_prior_list *l, mr_prior_ops *ops,
                              double dn2, mr_report *r, mr_report_method *m, mr_problem **out)
{
    struct mr_iter_objects *c = s->it;
    const mr_kspace *ks = s->ks;
    mr_status st = mr_problem_create(out, c->e, c->b, dn2);
    const double power = c->power;
    int sparse = 0; /* the list's l1-type priors: their automatic lambdas share the prior's weight */
    for (int i = 0; i < l->n; i++)
        sparse += mr_prior_get(l->kind[i])->penalty != MR_PENALTY_L2;
    for (int i = 0; st == MR_OK && i < l->n; i++) {
        const mr_prior_info *info = mr_prior_get(l->kind[i]);
        mr_lambda_inputs in = {o->lambda, o->lambda_rel, info->k, info->rule, ks->noise_sigma, r->normal_diag,
                               NAN, power};
        if (mr_lambda_needs_scale(o->lambda, o->lambda_rel, ks->noise_sigma, info->rule)) {
            if (!isfinite(c->scale) || s->sens == SENS_RSS) /* per coil: each coil's own scale */
                st = image_scale(c, mr_linop_dom_size(c->e), &c->scale);
            in.scale = c->scale;
        }
        if (st != MR_OK)
            break;
        mr_lambda_choice ch;
        mr_lambda_choose(&in, &ch);
        mr_report_term *t = &m->terms[i];
        t->name = info->name;
        t->penalty = mr_penalty_name(info->penalty);
        const int automatic = o->lambda < 0 && o->lambda_rel < 0;
        const double share = automatic && info->penalty != MR_PENALTY_L2 && sparse > 1 ? 1.0 / sparse : 1.0;
        const double w = l->weight[i] * share;
        t->lambda = ch.lambda * w;
        t->lambda_rel = ch.rel * w;
        if (w != 1.0)
            snprintf(t->from, sizeof t->from, "%.200s, times %g%s", ch.from, w,
                     share != 1.0 ? " (shared by the list's sparsity priors)" : " (its weight)");
        else
            snprintf(t->from, sizeof t->from, "%s", ch.from);
        st = mr_prior_add_term(*out, l, i, ops, t->lambda);
    }
    m->nterms = l->n;
    return st;
}

/* The solver's options for the method (iterations 0: the solver's default, chosen once the solver is,
 * mr_solver_default_iters). */
static void solve_opts(const mr_recon_opts *o, mr_method_kind kind, mr_solve_opts *so)
{
    mr_solve_opts_default(so);
    so->solver = kind == MR_METHOD_CG ? MR_SOLVER_CG : o->solver;
    so->iters = o->iters;
    so->tol = o->tol;
}

/* The report's view of a solve (the arrays stay owned by s). */
static void describe_solve(const mr_solve_result *res, int nterms, mr_report_method *m)
{
    m->iterations = res->iterations;
    m->stop = res->stop;
    m->solver = mr_solver_name(res->solver);
    m->history_name = res->history_name;
    m->objective = res->objective;
    m->data_term = res->data_term;
    for (int j = 0; j < nterms && res->term_value; j++)
        m->terms[j].history = res->term_value + (size_t)j * (size_t)(res->iterations + 1);
    m->lipschitz = res->lipschitz;
    m->step = res->step;
    m->rho = res->rho;
    m->restarts = res->restarts;
    m->inner_iterations = res->inner_total;
    m->preconditioned = res->preconditioned;
    m->normal_apps = res->normal_apps;
}

/* One solve on the whole image (every coil model but rss): F^H d (once for every iterative method), the
 * problem, its solve; the problem into *p (freed by the caller). */
static mr_status solve_whole(run_state *s, const mr_recon_opts *o, int slot, int first, const mr_prior_list *l,
                             mr_prior_ops *ops, mr_solve_opts *so, iter_progress *ip, double dn2, mr_report *r,
                             mr_report_method *m, mr_problem **p)
{
    struct mr_iter_objects *c = s->it;
    const int64_t n = mr_kspace_voxels(s->ks);
    mr_solve_result *res = &s->res[slot];
    double t0 = mr_now();
    mr_status st;
    if (first || c->b == NULL) { /* F^H d once for every iterative method */
        if ((st = mr_linop_adjoint(c->e, c->d, c->b)) != MR_OK)
            return st;
        r->t_fhd = mr_now() - t0;
    }
    if ((st = make_problem(s, o, l, ops, dn2, r, m, p)) != MR_OK)
        return st;
    ip->iters = so->iters = mr_solve_iters(*p, so);
    if ((st = mr_problem_solve(*p, so, c->x, res)) != MR_OK ||
        (st = c->v->to_host(c->v->ctx, n, s->img[slot], c->x)) != MR_OK)
        return st;
    m->t_monitor = res->metric_seconds;
    m->t_solve = res->seconds - res->metric_seconds;
    m->psnr = res->metric;
    m->history = res->history;
    describe_solve(res, l->n, m);
    return MR_OK;
}

/* One solve per coil, combined by root-sum-of-squares: the history is the combined
 * sqrt(sum_c h_c,k^2 ||b_c||^2 / sum_c ||b_c||^2); each coil's automatic lambda its own (the report names
 * the largest and the range). The last coil's problem stays in *p (freed by the caller). */
static mr_status solve_per_coil(run_state *s, const mr_recon_opts *o, int slot, int first, const mr_prior_list *l,
                                mr_prior_ops *ops, mr_solve_opts *so, iter_progress *ip, mr_report *r,
                                mr_report_method *m, mr_problem **p)
{
    struct mr_iter_objects *c = s->it;
    const mr_kspace *ks = s->ks;
    const int64_t n = mr_kspace_voxels(ks), M = ks->nsamples, ncoils = ks->ncoils;
    mr_combine comb;
    float *xc = malloc((size_t)n * 2 * sizeof(float));
    mr_status st = !xc ? mr_error(MR_ENOMEM, "out of memory for %lld-voxel coil images", (long long)n)
                       : mr_combine_init(&comb, n, ncoils, NULL);
    if (st != MR_OK) {
        free(xc);
        return st;
    }
    double b0sq = 0, lambda_lo[MR_REPORT_MAX_TERMS], lambda_hi[MR_REPORT_MAX_TERMS];
    const char *first_stop = NULL;
    int same_stop = 1;
    for (int j = 0; j < MR_REPORT_MAX_TERMS; j++) {
        lambda_lo[j] = INFINITY;
        lambda_hi[j] = 0;
    }
    so->objective = 0; /* per coil the objective of a coil says little */
    for (int64_t k = 0; k < ncoils && st == MR_OK; k++) {
        ip->coil = k;
        double t0 = mr_now();
        if ((st = mr_linop_adjoint(c->e, c->d + 2 * M * k, c->b)) != MR_OK)
            break;
        if (first)
            r->t_fhd += mr_now() - t0;
        const double bn = c->v->norm(c->v->ctx, n, c->b);
        mr_problem_free(*p);
        *p = NULL;
        /* automatic lambda: each coil's own (its image has its own scale) */
        if ((st = make_problem(s, o, l, ops, 0.0, r, m, p)) != MR_OK)
            break;
        if (!s->hist[slot]) { /* the first coil's problem fixes the solver and so its iterations */
            ip->iters = so->iters = mr_solve_iters(*p, so);
            if (!(s->hist[slot] = calloc((size_t)so->iters + 1, sizeof(double)))) {
                st = mr_error(MR_ENOMEM, "out of memory for the history of %d iterations", so->iters);
                break;
            }
        }
        for (int j = 0; j < l->n; j++) {
            lambda_lo[j] = fmin(lambda_lo[j], m->terms[j].lambda);
            lambda_hi[j] = fmax(lambda_hi[j], m->terms[j].lambda);
        }
        mr_solve_result rc;
        if ((st = mr_problem_solve(*p, so, c->x, &rc)) != MR_OK)
            break;
        if ((st = c->v->to_host(c->v->ctx, n, xc, c->x)) == MR_OK) {
            m->t_solve += rc.seconds;
            same_stop &= !first_stop || !strcmp(rc.stop, first_stop);
            first_stop = rc.stop;
            mr_combine_add(&comb, k, xc);
            for (int i = 0; i <= so->iters; i++) { /* a coil that stopped early keeps its last value */
                const double hk = rc.history[i < rc.iterations ? i : rc.iterations] * bn;
                s->hist[slot][i] += hk * hk;
            }
            b0sq += bn * bn;
            if (rc.iterations > m->iterations)
                m->iterations = rc.iterations;
            m->solver = mr_solver_name(rc.solver);
            m->normal_apps += rc.normal_apps;
            m->history_name = rc.history_name;
        }
        mr_solve_result_free(&rc);
    }
    for (int j = 0; st == MR_OK && j < l->n; j++)
        if (lambda_hi[j] > lambda_lo[j]) { /* the report names the largest and the range */
            mr_report_term *t = &m->terms[j];
            char from[sizeof t->from];
            snprintf(from, sizeof from, "%.190s; per coil from %.4g to %.4g", t->from, lambda_lo[j], lambda_hi[j]);
            snprintf(t->from, sizeof t->from, "%s", from);
            t->lambda = lambda_hi[j];
            t->lambda_rel = lambda_hi[j] / r->normal_diag;
        }
    if (st == MR_OK) {
        for (int i = 0; i <= so->iters; i++)
            s->hist[slot][i] = b0sq > 0 ? sqrt(s->hist[slot][i] / b0sq) : 0;
        mr_combine_finish(&comb, s->img[slot]);
        m->stop = same_stop ? first_stop : "different per coil";
        m->history = s->hist[slot];
    }
    mr_combine_free(&comb);
    free(xc);
    return st;
}

mr_status mr_iterative_run(run_state *s, const mr_recon_opts *o, const mr_run_plan *plan, int slot, mr_report *r,
                           mr_report_method *m)
{
    const mr_kspace *ks = s->ks;
    const mr_method_kind kind = plan->methods.kind[slot];
    const int64_t n = mr_kspace_voxels(ks), ncoils = ks->ncoils;
    const int whole = s->sens != SENS_RSS; /* one solve on the whole image (else one per coil) */
    const int first = s->it == NULL;
    const double t_run = mr_now();
    /* both are set by the first method only; on a GPU t_op_create also holds the device's choice and the
     * wait for its background start, spent before this call */
    const double t_before =
        r->t_op_create + r->t_fhd + (first && s->gpu >= 0 ? s->t_resolve + s->t_fork_wait : 0.0);
    mr_status st = first ? prepare(s, o, plan, r) : MR_OK;
    if (st != MR_OK)
        return st;
    struct mr_iter_objects *c = s->it;
    mr_prior_list l;
    method_priors(plan, kind, &l);
    mr_prior_ops ops;
    if ((st = mr_prior_ops_make(&ops, &l, c->be, ks->matrix)) != MR_OK)
        return st;
    mr_solve_opts so;
    solve_opts(o, kind, &so);
    iter_progress ip = {m->method, whole ? -1 : 0, whole ? 1 : ncoils, so.iters, o->progress};
    so.progress = log_progress;
    so.progress_ctx = &ip;
    if (c->truth && whole) {
        so.metric = psnr_of;
        so.metric_ctx = c;
        m->psnr_truth = ks->truth_bl ? MR_TRUTH_BANDLIMITED : MR_TRUTH_IMAGE;
    }
    s->img[slot] = malloc((size_t)n * 2 * sizeof(float));
    if (!s->img[slot]) {
        mr_prior_ops_free(&ops);
        return mr_error(MR_ENOMEM, "out of memory for a %lld-voxel image", (long long)n);
    }
    mr_problem *p = NULL;
    if (whole)
        st = solve_whole(s, o, slot, first, &l, &ops, &so, &ip, c->dn2, r, m, &p);
    else
        st = solve_per_coil(s, o, slot, first, &l, &ops, &so, &ip, r, m, &p);
    if (st != MR_OK)
        goto done;
    m->final_history = m->history[m->iterations];
    r->t_solve += m->t_solve;
    m->seconds = r->t_op_create + r->t_fhd + m->t_solve;
    /* the rest of this method's time: the data and truth to the device, the problem (lambda, Lipschitz
     * constants), the image back to the host */
    r->t_problem += mr_now() - t_run - (r->t_op_create + r->t_fhd - t_before) - m->t_solve - m->t_monitor;
    if (isnan(r->lambda_rel) && m->nterms > 0) { /* the report's settings: the first method's first term */
        r->lambda = m->terms[0].lambda;
        r->lambda_rel = m->terms[0].lambda_rel;
        snprintf(r->lambda_from, sizeof r->lambda_from, "%s", m->terms[0].from);
    }
    mr_log(MR_LOG_INFO, "%s: %s, %d iterations (%s), %s %.3e, %.3f s", m->method, m->solver, m->iterations, m->stop,
           m->history_name, m->final_history, m->t_solve);
done:
    mr_problem_free(p);
    mr_prior_ops_free(&ops);
    return st;
}
