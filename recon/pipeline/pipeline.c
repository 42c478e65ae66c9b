/* recon/pipeline/pipeline.h: the stages of one reconstruction: options -> device -> read -> coil handling ->
 * CG (operator, F^H d, solve on the backend) and/or DCF -> gridding -> metrics -> files
 * (recon/report/outputs.h). Everything is computed before OUTDIR is created, so a run that fails (bad input,
 * bad option, a failing stage) leaves no directory and no file behind. */
#include "pipeline.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../../base/child.h"
#include "../../base/log.h"
#include "../../io/fsutil.h"
#include "../../io/input.h"
#include "../../io/q_cache.h"
#include "../../io/sens_h5.h"
#include "../../solver/backend.h"
#include "../../solver/dcf.h"
#include "../../solver/gridding.h"
#include "../../solver/metrics.h"
#include "../../solver/noise_est.h"
#include "../../solver/coil_combine.h"
#include "outdir.h"
#include "../report/outputs.h"
#include "pipeline_internal.h"
#include "sens_estimate.h"
#include "volumes.h"

#define MR_RECON_ERROR_GAIN 5.0
#define MR_RECON_WINDOW_PERCENTILE 99.5 /* display window without a truth image */

void mr_recon_opts_default(mr_recon_opts *o)
{
    memset(o, 0, sizeof *o);
    o->method = "iterative";
    o->iters = 0; /* the solver's default */
    o->tol = 0;
    o->solver = MR_SOLVER_AUTO;
    o->lambda = -1;     /* automatic (solver/autolambda.h) */
    o->lambda_rel = -1;
    o->reg = MR_RECON_DEFAULT_REG;
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
    o->model = MR_MODEL_AUTO;
    o->nufft_tol = MR_ENCODING_TOL_DEFAULT;
    o->fieldmap_model = "auto";
    o->fieldmap_tol = 1e-3;
    o->fieldmap_units = "auto";
}

static const char *const sens_names[] = {"none", "file", "rss", "estimate"};

static mr_status validate_opts(const mr_recon_opts *o, mr_run_plan *plan)
{
    mr_status st = mr_method_list_parse(o->method ? o->method : "iterative", &plan->methods);
    if (st != MR_OK)
        return st;
    if (o->lambda >= 0 && o->lambda_rel >= 0)
        return mr_error(MR_EINVAL, "--lambda %g and --lambda-rel %g exclude each other", o->lambda, o->lambda_rel);
    if (!isfinite(o->lambda_rel) || (o->lambda >= 0 && !isfinite(o->lambda)) || isnan(o->lambda))
        return mr_error(MR_EINVAL, "lambda %g / lambda_rel %g is not finite", o->lambda, o->lambda_rel);
    if (o->iters < 0 || !(o->tol >= 0) || !isfinite(o->tol))
        return mr_error(MR_EINVAL, "iterations %d (0 = the solver's default, or >= 1) and tolerance %g (finite, >= 0)",
                        o->iters, o->tol);
    if ((unsigned)o->solver >= MR_SOLVER_COUNT)
        return mr_error(MR_EINVAL, "unknown solver %d", (int)o->solver);
    if ((st = mr_prior_list_parse(o->reg ? o->reg : MR_RECON_DEFAULT_REG, &plan->priors)) != MR_OK)
        return st;
    if (o->solver == MR_SOLVER_CG && mr_method_list_has(&plan->methods, MR_METHOD_ITERATIVE) &&
        !mr_prior_list_quadratic(&plan->priors))
        return mr_error(MR_EINVAL, "--solver cg solves quadratic priors only (gradient, identity), not --reg %s; "
                                   "use --solver auto, fista, admm or pdhg",
                        o->reg);
    if (o->solver == MR_SOLVER_FISTA && mr_method_list_has(&plan->methods, MR_METHOD_ITERATIVE)) {
        int nonsmooth = 0, fd = 0;
        for (int i = 0; i < plan->priors.n; i++) {
            const mr_prior_info *info = mr_prior_get(plan->priors.kind[i]);
            nonsmooth += info->penalty != MR_PENALTY_L2;
            fd |= info->penalty != MR_PENALTY_L2 && info->op == MR_PRIOR_OP_FD;
        }
        if (nonsmooth > 1 || fd)
            return mr_error(MR_EINVAL, "--solver fista takes one non-quadratic prior whose proximal map is known on "
                                       "the image (l1), not --reg %s; use --solver auto, admm or pdhg",
                            o->reg);
    }
    const char *d = o->dcf ? o->dcf : "pipe";
    if (strcmp(d, "file") && strcmp(d, "analytic") && strcmp(d, "pipe"))
        return mr_error(MR_EINVAL, "dcf '%s' is not one of pipe, file, analytic", d);
    const char *sn = o->sens ? o->sens : "auto";
    static const char *const senses[] = {"auto", "file", "estimate", "espirit", "walsh", "rss"};
    int known = 0;
    for (size_t i = 0; i < sizeof senses / sizeof senses[0]; i++)
        known |= !strcmp(sn, senses[i]);
    if (!known)
        return mr_error(MR_EINVAL, "sens '%s' is not one of auto, file, estimate, espirit, walsh, rss", sn);
    if (o->coils_compress < 0)
        return mr_error(MR_EINVAL, "--coils-compress %d: a number of virtual coils >= 1, or 0 (off)", o->coils_compress);
    if (o->sens_maps && (!strcmp(sn, "rss") || !strcmp(sn, "estimate") || !strcmp(sn, "espirit") || !strcmp(sn, "walsh")))
        return mr_error(MR_EINVAL, "--sens-maps %s and --sens %s exclude each other", o->sens_maps, sn);
    const char *nii = o->nifti ? o->nifti : "magnitude";
    if (strcmp(nii, "magnitude") && strcmp(nii, "complex") && strcmp(nii, "none"))
        return mr_error(MR_EINVAL, "nifti '%s' is not one of magnitude, complex, none", nii);
    if ((unsigned)o->model >= MR_MODEL_COUNT || !(o->nufft_tol >= 1e-12 && o->nufft_tol <= 0.1))
        return mr_error(MR_EINVAL, "model %d / NUFFT tolerance %g (1e-12..0.1)", (int)o->model, o->nufft_tol);
    /* the field: off, auto (when the scan carries a map and times) or one model, required */
    const char *fm = o->fieldmap_model ? o->fieldmap_model : "auto";
    plan->field = !strcmp(fm, "off") ? -1 : !strcmp(fm, "auto") ? (o->fieldmap ? 1 : 0) : 1;
    plan->field_model = MR_FIELD_MODEL_FREQUENCY;
    if (plan->field == 1 && strcmp(fm, "auto") && (st = mr_field_model_parse(fm, &plan->field_model)) != MR_OK)
        return mr_error(MR_EINVAL, "--fieldmap-model: '%s' is not auto, off, exact, frequency or time", fm);
    if (o->fieldmap && plan->field < 0)
        return mr_error(MR_EINVAL, "--fieldmap %s and --fieldmap-model off exclude each other", o->fieldmap);
    if (!(o->fieldmap_tol >= 1e-6 && o->fieldmap_tol <= 0.5))
        return mr_error(MR_EINVAL, "--fieldmap-tol %g is outside 1e-6..0.5", o->fieldmap_tol);
    if ((st = mr_field_units_parse(o->fieldmap_units ? o->fieldmap_units : "auto", &plan->field_units)) != MR_OK)
        return st;
    if (plan->field == 1 && o->model == MR_MODEL_NUFFT)
        return mr_error(MR_EINVAL, "--model nufft: the field-map models run on the exact sums (the NUFFT has no "
                                   "field term yet); use --model auto or exact, or --fieldmap-model off");
    return MR_OK;
}

mr_status mr_recon_opts_check(const mr_recon_opts *o)
{
    mr_run_plan plan;
    return validate_opts(o, &plan);
}

static int radial_kind(const char *kind)
{
    return !strcmp(kind, "radial2d") || !strcmp(kind, "golden2d") || !strcmp(kind, "kooshball");
}

/* ---- the run ----------------------------------------------------------------------------------- */

static void free_state(run_state *s)
{
    mr_iterative_free(s);
    mr_kspace_free(s->ks);
    free(s->maps_owned);
    for (int i = 0; i < MR_METHOD_COUNT; i++) {
        free(s->img[i]);
        free(s->hist[i]);
        mr_solve_result_free(&s->res[i]);
    }
    free(s->weights);
    mr_q_cache_close(s->qcache);
    s->qcache = NULL;
}

/* --coils-compress K: the scan's coils (data and maps) to K virtual coils, after prewhitening. */
static mr_status compress_coils(run_state *s, const mr_recon_opts *o, const char *scan, mr_report *r)
{
    if (o->coils_compress < 1 || s->ks->ncoils <= 1)
        return MR_OK;
    const int64_t before = s->ks->ncoils;
    double kept = 1;
    mr_status st = mr_sens_compress_coils(s->ks, scan, o->coils_compress, 1.0, o->op.threads, &kept);
    if (st != MR_OK)
        return st;
    r->coils_before = before;
    r->coil_energy = kept;
    mr_log(MR_LOG_INFO, "%s: %lld coils compressed to %lld virtual coils, %.4f of the data's energy kept", scan,
           (long long)before, (long long)s->ks->ncoils, kept);
    return MR_OK;
}

/* Where sigma comes from: the file, the noise scans (ISMRMRD), or the data (solver/noise_est.h) when
 * neither states it, so that the automatic lambda is never 0 for want of a noise level. */
static mr_status noise_level(run_state *s, const mr_recon_opts *o, const mr_volume_desc *vd, const char *scan,
                             mr_report *r)
{
    mr_kspace *ks = s->ks;
    if (ks->noise_sigma >= 0) {
        r->noise_from = vd->noise_samples > 0 ? "noise scans" : "file";
        return MR_OK;
    }
    mr_noise_est_opts no;
    mr_noise_est_opts_default(&no);
    no.threads = o->op.threads;
    mr_noise_est_result res;
    mr_status st = mr_noise_estimate(ks->matrix, ks->traj, ks->nsamples, ks->data, ks->ncoils, &no, &res);
    if (st != MR_OK) {
        mr_log(MR_LOG_WARN, "%s: the noise level could not be estimated from the data (%s): the automatic lambda is 0",
               scan, mr_last_error());
        mr_clear_error();
        r->noise_from = "none";
        return MR_OK;
    }
    ks->noise_sigma = res.sigma;
    r->noise_from = "estimated";
    r->noise_sigma_se = res.sigma_se;
    mr_log(MR_LOG_INFO, "%s: the scan states no noise level: sigma %.4g +- %.2g estimated from the data (%s, %lld "
                        "values per coil)",
           scan, res.sigma, res.sigma_se, mr_noise_nbhd_name(res.nbhd), (long long)res.values);
    mr_noise_est_result_free(&res);
    return MR_OK;
}

/* Whether the field map corrects this volume: --fieldmap's map put on the scan (resampled to its
 * matrix), then required (a model asked for: the scan must hold readout times) or automatic (when the
 * scan carries a map and times). */
static mr_status choose_field(run_state *s, const mr_run_plan *plan, const char *scan, mr_report *r)
{
    mr_status st = MR_OK;
    if (plan->fieldmap && (st = mr_fieldmap_attach(s->ks, scan, plan->fieldmap)) != MR_OK)
        return st;
    if (plan->field == 1 && (st = mr_kspace_check_field(s->ks, scan)) != MR_OK)
        return st;
    s->field = plan->field == 1 || (plan->field == 0 && s->ks->fieldmap && s->ks->time);
    if (s->field) {
        snprintf(r->field_source, sizeof r->field_source, "%s", plan->fieldmap ? plan->fieldmap->source : scan);
        mr_log(MR_LOG_INFO, "%s: field-map correction (%s model) with the map of %s", scan,
               mr_field_model_name(plan->field_model), r->field_source);
    } else if (s->ks->fieldmap && !s->ks->time) {
        mr_log(MR_LOG_WARN, "%s: the scan has a field map but no readout times: reconstructed without correction",
               scan);
    }
    return MR_OK;
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
    } else if (!strcmp(want, "estimate") || !strcmp(want, "espirit") || !strcmp(want, "walsh") ||
               (!strcmp(want, "auto") && ks->ncoils > 1)) {
        mr_sens_estimate_opts so;
        mr_sens_estimate_opts_default(&so);
        so.threads = o->op.threads;
        so.gpu = s->gpu; /* ESPIRiT's per-voxel stage on the run's GPU */
        so.method = !strcmp(want, "walsh") ? MR_SENS_METHOD_WALSH : MR_SENS_METHOD_ESPIRIT;
        mr_sens_estimate_info info;
        mr_status st = mr_sens_estimate_ex(ks, scan, &so, &s->maps_owned, &info);
        if (st == MR_ENOTSUP && so.gpu >= 0) { /* e.g. more coils than the GPU stage takes: the host */
            mr_clear_error();
            so.gpu = -1;
            st = mr_sens_estimate_ex(ks, scan, &so, &s->maps_owned, &info);
        }
        if (st != MR_OK && so.method == MR_SENS_METHOD_ESPIRIT && strcmp(want, "espirit")) {
            mr_log(MR_LOG_WARN, "%s; Walsh/Inati maps instead", mr_last_error()); /* estimate, auto: the fallback */
            mr_clear_error();
            so.method = MR_SENS_METHOD_WALSH;
            st = mr_sens_estimate_ex(ks, scan, &so, &s->maps_owned, &info);
        }
        if (st == MR_OK) {
            memcpy(s->calib, info.calib, sizeof s->calib);
            r->sens_method = mr_sens_method_name(info.method);
            r->sens_kernels[0] = info.kernels;
            r->sens_kernels[1] = info.columns;
            r->sens_cropped = info.cropped;
            r->sens_seconds = info.seconds;
            r->sens_on_gpu = info.on_gpu;
        }
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

/* ---- gridding ---------------------------------------------------------------------------------- */

void mr_pipeline_open_q_cache(run_state *s, const mr_recon_opts *o, mr_report *r, const char *what)
{
    if (!s->qcache && mr_q_cache_open(&s->qcache, o->q_cache, 0) != MR_OK) {
        mr_log(MR_LOG_WARN, "%s; %s computed without the cache", mr_last_error(), what);
        mr_clear_error();
    }
    snprintf(s->qcache_dir, sizeof s->qcache_dir, "%s", s->qcache ? mr_q_cache_dir(s->qcache) : "off");
    r->q_cache = s->qcache_dir;
}

/* The gridding weights once per run; Pipe-Menon's through the Q cache (io/q_cache.h mr_q_cache_dcf_store). */
static mr_status get_weights(run_state *s, const mr_recon_opts *o, mr_report *r)
{
    if (s->weights)
        return MR_OK;
    const mr_kspace *ks = s->ks;
    const char *dcf = o->dcf ? o->dcf : "pipe";
    r->dcf = dcf;
    s->weights = malloc((size_t)ks->nsamples * sizeof(float));
    if (!s->weights)
        return mr_error(MR_ENOMEM, "out of memory for %lld weights", (long long)ks->nsamples);
    double t0 = mr_now();
    mr_status st = MR_OK;
    if (!strcmp(dcf, "file")) {
        memcpy(s->weights, ks->weights, (size_t)ks->nsamples * sizeof(float)); /* presence checked earlier */
    } else if (!strcmp(dcf, "analytic")) {
        st = mr_dcf_analytic(ks->matrix, ks->traj, ks->nsamples, s->weights);
    } else {
        mr_pipeline_open_q_cache(s, o, r, "the DCF weights are");
        mr_dcf_pipe_opts po;
        mr_dcf_pipe_opts_default(&po);
        po.threads = o->op.threads;
        po.progress = o->progress;
        po.store = mr_q_cache_dcf_store(s->qcache);
        st = mr_dcf_pipe_run(ks->matrix, ks->traj, ks->nsamples, &po, s->weights);
    }
    r->t_dcf = mr_now() - t0;
    if (st == MR_OK)
        mr_log(MR_LOG_INFO, "dcf: %s weights in %.3f s", dcf, r->t_dcf);
    return st;
}

static mr_status run_gridding(run_state *s, const mr_recon_opts *o, mr_method_kind kind, int which, mr_report *r,
                              mr_report_method *m)
{
    const char *name = mr_method_name(kind);
    const mr_kspace *ks = s->ks;
    const int64_t n = mr_kspace_voxels(ks), ncoils = ks->ncoils;
    mr_status st = get_weights(s, o, r);
    if (st != MR_OK)
        return st;
    mr_gridding_opts go;
    mr_gridding_opts_default(&go);
    go.kind = kind == MR_METHOD_KB ? MR_GRIDDING_KB : MR_GRIDDING_BILINEAR;
    if (kind == MR_METHOD_KB) {
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
        mr_progress_report(o->progress, name, (double)c, (double)ncoils);
        st = mr_gridding_apply(grid, ks->data + 2 * ks->nsamples * c, s->weights, single ? s->img[which] : xc);
        if (st == MR_OK && !single)
            mr_combine_add(&comb, c, xc);
    }
    if (st == MR_OK)
        mr_progress_report(o->progress, name, (double)ncoils, (double)ncoils);
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
    m->final_history = NAN;
    mr_log(MR_LOG_INFO, "%s: %.3f s", name, m->t_gridding);
    return MR_OK;
}

/* ---- the stages -------------------------------------------------------------------------------- */

/* The scan's description and checks that need the file (DCF choices). */
static mr_status describe_scan(const run_state *s, const mr_recon_opts *o, const mr_run_plan *plan, const char *scan,
                               mr_report *r)
{
    const mr_kspace *ks = s->ks;
    const char *dcf = o->dcf ? o->dcf : "pipe";
    const int grids = mr_method_list_grids(&plan->methods);
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
static mr_status score(const run_state *s, const mr_run_plan *plan, mr_report *r)
{
    const mr_kspace *ks = s->ks;
    const int64_t n = mr_kspace_voxels(ks);
    const float *truths[MR_TRUTH_COUNT] = {ks->truth, ks->truth_bl};
    for (int i = 0; i < plan->methods.n; i++) {
        mr_report_method *m = &r->m[i];
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
        mr_status st = mr_metrics_percentile(s->img[0], 1, n, MR_RECON_WINDOW_PERCENTILE, &r->window_hi);
        if (st != MR_OK)
            return st;
        snprintf(r->window_text, sizeof r->window_text, "the %gth percentile of |%s|", MR_RECON_WINDOW_PERCENTILE,
                 mr_method_name(plan->methods.kind[0]));
        r->window_from = r->window_text;
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
    r->formats = o->formats;
    r->slice = o->slice;
    if (d->prewhitened)
        mr_log(MR_LOG_INFO, "%s: coils prewhitened with the noise scans (%lld samples per coil, largest correlation "
                            "%.3f)",
               r->input, (long long)d->noise_samples, d->noise_max_corr);
    else if (d->noise_samples > 0)
        mr_log(MR_LOG_INFO, "%s: noise scans present, not prewhitened (%s)", r->input,
               o->prewhiten ? "one coil" : "--prewhiten off");
}

/* ISMRMRD volumes reconstructed on a larger encodedSpace grid: the images cut to reconSpace. */
static mr_status crop_to_output_grid(run_state *s, const mr_volume_desc *d, const mr_run_plan *plan, mr_report *r)
{
    int64_t out[3];
    float fov[3];
    if (!mr_volume_output_grid(d, s->ks->matrix, s->ks->fov_mm, out, fov) || s->ks->truth || s->ks->truth_bl)
        return MR_OK;
    const int64_t n = out[0] * out[1] * out[2];
    for (int i = 0; i < plan->methods.n; i++) {
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
    mr_run_plan plan;
    int gpu;
    double t_resolve;
    const mr_volume_desc *mem_desc; /* a scan in memory: its description, or NULL (one volume, "arrays") */
    int release; /* 1: the GPU is released once the methods have run (mr_recon_opts.release_device) */
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

/* The description of a scan given in memory (mr_recon_run_kspace): desc's, or one volume of its own. */
static void memory_desc(const mr_volume_desc *desc, mr_volume_desc *d)
{
    memset(d, 0, sizeof *d);
    if (desc) {
        *d = *desc;
        return;
    }
    d->count = 1;
    snprintf(d->label, sizeof d->label, "%s", "volume0");
}

/* Volume v of `in` (or the scan `mem` in memory, owned from here on) into outdir (NULL: no files, the
 * on_report callback alone): read, coils, methods, metrics, files. ot: opening the input (the first
 * volume's, else zeros); t_start: when this volume's run began. */
static mr_status recon_volume(const run_setup *u, mr_input *in, int v, mr_kspace *mem, open_time ot,
                              double t_start, const char *outdir)
{
    mr_recon_opts o = u->o;
    const mr_run_plan *plan = &u->plan;
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
    r.write_options = o.write_options;
    r.options_ctx = o.options_ctx;
    r.method = o.method ? o.method : "iterative";
    mr_prior_list_format(&plan->priors, r.reg, sizeof r.reg);
    r.solver = mr_solver_name(o.solver);
    r.basis = o.op.basis == MR_BASIS_DIRAC ? "dirac" : "box";
    r.device = device;
    r.dcf = mr_method_list_grids(&plan->methods) ? (o.dcf ? o.dcf : "pipe") : "none (no gridding)";
    r.iters = o.iters;
    r.tol = o.tol;
    r.lambda = o.lambda >= 0 ? o.lambda : 0; /* the one chosen, once an iterative method ran */
    r.lambda_rel = NAN;
    snprintf(r.lambda_from, sizeof r.lambda_from, "%s", "not used (no iterative method)");
    r.oversample = o.oversample;
    r.kernel_width = o.kernel_width;
    r.threads = o.op.threads > 0 ? o.op.threads : omp_get_max_threads();
    r.precision = mr_precision_name(o.op.precision);
    r.normal_diag = NAN;
    r.model_error[0] = r.model_error[1] = r.field_measured = -1;
    r.error_gain = MR_RECON_ERROR_GAIN;
    snprintf(r.backend, sizeof r.backend, "cpu (%d threads)", r.threads);

    double t0 = mr_now();
    const double w0 = fork_wait_s();
    mr_volume_desc vd;
    if (mem) {
        s.ks = mem;
        memory_desc(u->mem_desc, &vd);
    } else if ((st = mr_volume_read(in, v, o.prewhiten, &s.ks, &vd)) != MR_OK)
        goto fail;
    s.t_fork_wait = ot.fork_wait + fork_wait_s() - w0;
    r.t_read = ot.total + mr_now() - t0 - s.t_fork_wait;
    describe_volume(&vd, &o, &r);
    if (mem && !vd.format)
        r.format = "arrays";
    t0 = mr_now();
    if ((st = compress_coils(&s, &o, scan, &r)) != MR_OK || (st = noise_level(&s, &o, &vd, scan, &r)) != MR_OK ||
        (st = describe_scan(&s, &o, plan, scan, &r)) != MR_OK || (st = choose_field(&s, plan, scan, &r)) != MR_OK ||
        (st = choose_sens(&s, &o, scan, &r)) != MR_OK)
        goto fail;
    r.t_scan = mr_now() - t0;

    for (int i = 0; i < plan->methods.n; i++) {
        const mr_method_kind kind = plan->methods.kind[i];
        mr_report_method *m = &r.m[r.nmethods++];
        snprintf(m->method, sizeof m->method, "%s", mr_method_name(kind));
        m->lipschitz = m->step = m->rho = NAN;
        st = mr_method_iterative(kind) ? mr_iterative_run(&s, &o, plan, i, &r, m)
                                       : run_gridding(&s, &o, kind, i, &r, m);
        if (st != MR_OK)
            goto fail;
    }
    if (u->release) { /* the images are on the host: the context's teardown overlaps with the outputs */
        mr_iterative_free(&s);
        mr_device_release_start(u->gpu);
    }
    t0 = mr_now();
    if ((st = score(&s, plan, &r)) != MR_OK)
        goto fail;

    memcpy(r.fov_mm, s.ks->fov_mm, sizeof r.fov_mm);
    if ((st = crop_to_output_grid(&s, &vd, plan, &r)) != MR_OK)
        goto fail;
    r.t_score = mr_now() - t0;
    const float *imgs[MR_METHOD_COUNT];
    for (int i = 0; i < plan->methods.n; i++)
        imgs[i] = s.img[i];
    const float *ctruth = r.compare_truth == MR_TRUTH_BANDLIMITED ? s.ks->truth_bl : s.ks->truth;
    /* the files go into a staging folder and appear in OUTDIR together (recon/pipeline/outdir.h) */
    mr_outdir od;
    memset(&od, 0, sizeof od);
    if (outdir && (st = mr_outdir_begin(&od, outdir, o.force)) != MR_OK)
        goto fail;
    if (outdir && (st = mr_outputs_write_images(od.stage, &r, imgs, ctruth)) != MR_OK) {
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
    t0 = mr_now();
    if (outdir && (st = mr_outputs_write_reports(od.stage, &r)) != MR_OK) {
        mr_outdir_fail(&od, st);
        goto fail;
    }
    const double t_reports = mr_now() - t0;
    if (outdir && (st = mr_outdir_commit(&od)) != MR_OK)
        goto fail;
    mr_log(MR_LOG_DEBUG, "after the report's total: the reports written in %.3f s, the outputs committed in %.3f s",
           t_reports, mr_now() - t0 - t_reports);
    r.images = imgs;
    if (o.on_report)
        o.on_report(o.on_report_ctx, &r);
    t0 = mr_now();
    free_state(&s);
    mr_log(MR_LOG_DEBUG, "the volume's host and device memory released in %.3f s (after the report's total)",
           mr_now() - t0);
    return MR_OK;
fail:
    free_state(&s);
    return st;
}

/* Every volume of a multi-volume input, each into outdir/<label>/, then outdir/metrics.csv (outdir NULL:
 * the on_report callback alone). */
static mr_status recon_volumes(const run_setup *u, mr_input *in, open_time ot, const char *outdir)
{
    const int nvol = mr_input_nvolumes(in);
    char(*labels)[MR_VOLUME_LABEL_MAX] = malloc((size_t)nvol * sizeof *labels);
    if (!labels)
        return mr_error(MR_ENOMEM, "out of memory for %d volume names", nvol);
    if (outdir)
        mr_log(MR_LOG_INFO, "%s: %d volumes, each reconstructed into %s/<volume>/", u->scan, nvol, outdir);
    mr_status st = MR_OK;
    for (int v = 0; v < nvol && st == MR_OK; v++) {
        char dir[4096];
        mr_volume_label(in, v, labels[v], sizeof labels[v]);
        if (outdir && (st = mr_path_join(dir, sizeof dir, outdir, labels[v])) != MR_OK)
            break;
        mr_log(MR_LOG_INFO, "volume %d of %d: %s", v + 1, nvol, labels[v]);
        const open_time none = {0, 0};
        if ((st = recon_volume(u, in, v, NULL, v == 0 ? ot : none, mr_now(), outdir ? dir : NULL)) != MR_OK) {
            char why[1024]; /* mr_last_error's buffer is rewritten by mr_error */
            snprintf(why, sizeof why, "%s", mr_last_error());
            if (v > 0)
                mr_error(st, "volume %d of %d (%s): %s (the %d volume(s) before it are complete in %s)", v + 1, nvol,
                         labels[v], why, v, outdir);
            else
                mr_error(st, "volume 1 of %d (%s): %s", nvol, labels[v], why);
        }
    }
    if (st == MR_OK && outdir)
        st = mr_volumes_write_metrics(outdir, (const char(*)[MR_VOLUME_LABEL_MAX])labels, nvol);
    if (st == MR_OK && outdir && u->o.force) { /* an earlier run's single-volume files and other volumes go */
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

/* mr_recon_run (mem NULL) and mr_recon_run_kspace (mem owned from here on). */
static mr_status run(const char *scan, mr_kspace *mem, const mr_volume_desc *mem_desc, const char *outdir,
                     const mr_recon_opts *opts)
{
    double t_start = mr_now();
    run_setup u;
    memset(&u, 0, sizeof u);
    u.scan = scan;
    u.o = *opts;
    u.mem_desc = mem_desc;
    mr_status st = validate_opts(&u.o, &u.plan);
    if (st == MR_OK && (outdir ? !outdir[0] : !u.o.on_report))
        st = mr_error(MR_EINVAL, "no output directory given");
    if (st == MR_OK && outdir)
        st = mr_outdir_check(outdir, u.o.force); /* before any work */
    if (st != MR_OK) {
        mr_kspace_free(mem);
        return st;
    }

    /* the device is decided once, for every method and volume, before anything is read */
    const double t_resolve = mr_now();
    if ((st = mr_device_resolve(mr_op_opts_device(&u.o.op), &u.gpu)) != MR_OK) {
        mr_kspace_free(mem);
        return st;
    }
    u.t_resolve = mr_now() - t_resolve;
    mr_log(MR_LOG_DEBUG, "device resolved in %.3f s (%s)", u.t_resolve, u.gpu >= 0 ? "a GPU" : "the CPU");
    if (u.gpu >= 0 && mr_method_list_grids(&u.plan.methods))
        mr_log(MR_LOG_INFO, "gridding runs on the CPU (it has no GPU backend)");

    /* a GPU's initialisation was queued by the resolve: it starts as the open forks the child that
     * reads an HDF5 scan, so it overlaps with that read and the one here; otherwise now */
    mr_input *in = NULL;
    double t0 = mr_now();
    const double w0 = fork_wait_s();
    if (u.o.fieldmap && (st = mr_fieldmap_read(u.o.fieldmap, u.plan.field_units, &u.plan.fieldmap)) != MR_OK) {
        mr_kspace_free(mem);
        return st;
    }
    if (!mem && (st = mr_input_open(scan, &u.o.read, &in)) != MR_OK) {
        mr_fieldmap_free(u.plan.fieldmap);
        return st;
    }
    mr_device_init_start();
    const open_time ot = {mr_now() - t0, fork_wait_s() - w0};
    const int nvol = mem ? 1 : mr_input_nvolumes(in);
    if (u.o.volume >= nvol) {
        st = mr_error(MR_EINVAL,
                      "%s: --volume %d, but the input holds %d volume(s) (0..%d; 'mrirecon info' lists them)", scan,
                      u.o.volume, nvol, nvol - 1);
        mr_kspace_free(mem);
    } else if (u.o.volume >= 0 || nvol == 1) {
        const mr_device_sel sel = mr_op_opts_device(&u.o.op);
        u.release = u.o.release_device && u.gpu >= 0 && !sel.all && sel.ngpus < 2 && !u.o.op.sums.fn;
        st = recon_volume(&u, in, u.o.volume >= 0 ? u.o.volume : 0, mem, ot, t_start, outdir);
        if (u.release) {
            const double waited = mr_background_wait();
            mr_log(MR_LOG_DEBUG, "waited %.3f s for the GPU's release", waited);
        }
        if (st == MR_OK && outdir && u.o.force)
            st = mr_outdir_prune(outdir, NULL, 0, 1); /* an earlier multi-volume run's folders go */
    } else
        st = recon_volumes(&u, in, ot, outdir);
    mr_input_close(in);
    mr_fieldmap_free(u.plan.fieldmap);
    return st;
}

mr_status mr_recon_run(const char *scan, const char *outdir, const mr_recon_opts *opts)
{
    return run(scan, NULL, NULL, outdir, opts);
}

mr_status mr_recon_run_kspace(mr_kspace *ks, const mr_volume_desc *desc, const char *name, const char *outdir,
                              const mr_recon_opts *opts)
{
    return run(name, ks, desc, outdir, opts);
}
