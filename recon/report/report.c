#include "report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../io/fsutil.h"
#include "../../io/json.h"
#include "../../solver/nudft.h"
#include "outputs.h"

const char *mr_truth_name(mr_truth_kind t) { return t == MR_TRUTH_BANDLIMITED ? "bandlimited" : "image"; }

/* ---- JSON (io/json.h) ---------------------------------------------------------------------- */

/* "read" (the input and the read stage) and "image" (the grid the images were written on). */
static void json_input(mr_json_obj *top, const mr_report *r)
{
    FILE *f = top->f;
    mr_json_obj rd = mr_json_open(top, "read");
    mr_json_str(&rd, "format", r->format ? r->format : "");
    mr_json_int(&rd, "volume", r->volume);
    mr_json_int(&rd, "volumes", r->volumes);
    mr_json_str(&rd, "volume_label", r->volume_label);
    mr_json_key(&rd, "prewhitened");
    fputs(r->prewhitened ? "true" : "false", f);
    mr_json_int(&rd, "noise_samples_per_coil", r->noise_samples);
    mr_json_close(&rd);
    mr_json_obj im = mr_json_open(top, "image");
    mr_json_key(&im, "matrix");
    fprintf(f, "[%lld, %lld, %lld]", (long long)r->matrix[0], (long long)r->matrix[1], (long long)r->matrix[2]);
    double fov[3], vox[3];
    for (int a = 0; a < 3; a++) {
        fov[a] = r->fov_mm[a] > 0 ? r->fov_mm[a] : NAN;
        vox[a] = fov[a] / (double)(r->matrix[a] > 0 ? r->matrix[a] : 1);
    }
    mr_json_array(&im, "fov_mm", fov, 3);
    mr_json_array(&im, "voxel_mm", vox, 3);
    mr_json_key(&im, "cropped_from");
    if (r->grid[0] > 0)
        fprintf(f, "[%lld, %lld, %lld]", (long long)r->grid[0], (long long)r->grid[1], (long long)r->grid[2]);
    else
        fputs("null", f);
    mr_json_key(&im, "scanner_geometry");
    fputs(r->geometry ? "true" : "false", f);
    mr_json_str(&im, "nifti", r->nifti ? r->nifti : "none");
    char formats[128];
    mr_image_formats_text(mr_outputs_formats(r), formats, sizeof formats);
    mr_json_str(&im, "formats", formats);
    mr_json_close(&im);
}

/* "settings": how the run was set up (the options as applied, the models and their bounds, coils, lambda). */
static void json_settings(mr_json_obj *top, const mr_report *r)
{
    FILE *f = top->f;
    mr_json_obj set = mr_json_open(top, "settings");
    mr_json_str(&set, "method", r->method);
    mr_json_int(&set, "iters", r->iters);
    mr_json_num(&set, "tol", r->tol);
    mr_json_num(&set, "lambda", r->lambda);
    mr_json_str(&set, "reg", r->reg);
    mr_json_str(&set, "solver", r->solver ? r->solver : "auto");
    mr_json_str(&set, "basis", r->basis);
    mr_json_str(&set, "device", r->device);
    mr_json_str(&set, "backend", r->backend);
    const char *cpu_kernels = mr_nudft_kernel_name();
    mr_json_str(&set, "cpu_kernels", cpu_kernels ? cpu_kernels : "none");
    mr_json_str(&set, "precision", r->precision ? r->precision : "auto");
    if (r->model[0]) {
        mr_json_str(&set, "model", r->model);
        mr_json_str(&set, "model_why", r->model_why);
        if (r->model_text[0])
            mr_json_str(&set, "model_description", r->model_text);
        if (!r->field_model[0])
            mr_json_num(&set, "model_bound", r->model_bound);
        if (r->model_error[0] >= 0) {
            mr_json_num(&set, "model_error_adjoint", r->model_error[0]);
            mr_json_num(&set, "model_error_forward", r->model_error[1]);
        }
    }
    if (r->field_model[0]) {
        mr_json_obj fo = mr_json_open(&set, "field");
        mr_json_str(&fo, "model", r->field_model);
        mr_json_str(&fo, "map", r->field_source);
        mr_json_int(&fo, "segments", r->field_segments);
        mr_json_num(&fo, "bound_max", r->field_bound[0]);
        mr_json_num(&fo, "bound_rms", r->field_bound[1]);
        if (r->field_measured >= 0)
            mr_json_num(&fo, "measured_error", r->field_measured);
        mr_json_array(&fo, "omega_range_hz", r->field_range, 2);
        mr_json_array(&fo, "time_range_s", r->field_range + 2, 2);
        mr_json_close(&fo);
    }
    if (r->sums[0]) {
        mr_json_str(&set, "sums", r->sums);
        mr_json_str(&set, "q_source", r->q_source ? r->q_source : "");
        mr_json_str(&set, "q_cache", r->q_cache ? r->q_cache : "off");
    }
    mr_json_str(&set, "noise_sigma_from", r->noise_from ? r->noise_from : "none");
    if (r->noise_from && !strcmp(r->noise_from, "estimated"))
        mr_json_num(&set, "noise_sigma_se", r->noise_sigma_se);
    if (r->coils_before > 0) {
        mr_json_int(&set, "coils_before_compression", r->coils_before);
        mr_json_num(&set, "coil_energy_retained", r->coil_energy);
    }
    mr_json_str(&set, "sens", r->sens ? r->sens : "none");
    if (r->sens_source)
        mr_json_str(&set, "sens_maps", r->sens_source);
    if (r->sens && !strcmp(r->sens, "estimate")) {
        const double cal[3] = {(double)r->sens_calib[0], (double)r->sens_calib[1], (double)r->sens_calib[2]};
        mr_json_array(&set, "sens_calibration_grid", cal, 3);
        if (r->sens_method) {
            mr_json_str(&set, "sens_method", r->sens_method);
            if (!strcmp(r->sens_method, "espirit")) {
                const double kc[2] = {(double)r->sens_kernels[0], (double)r->sens_kernels[1]};
                mr_json_array(&set, "sens_kernels_of_columns", kc, 2);
                mr_json_num(&set, "sens_cropped_fraction", r->sens_cropped);
            }
            mr_json_num(&set, "sens_seconds", r->sens_seconds);
            mr_json_key(&set, "sens_on_gpu");
            fputs(r->sens_on_gpu ? "true" : "false", f);
        }
    }
    mr_json_key(&set, "truth_weighted_by_maps_rss");
    fputs(r->truth_weighted ? "true" : "false", f);
    mr_json_int(&set, "threads", r->threads);
    mr_json_str(&set, "dcf", r->dcf);
    mr_json_num(&set, "oversample", r->oversample);
    mr_json_int(&set, "kernel_width", r->kernel_width);
    mr_json_num(&set, "normal_diagonal", r->normal_diag);
    mr_json_num(&set, "lambda_rel", r->lambda_rel);
    mr_json_str(&set, "lambda_from", r->lambda_from);
    mr_json_close(&set);
}

static void json_body(FILE *f, const mr_report *r)
{
    mr_json_obj top = mr_json_begin(f);
    mr_json_str(&top, "input", r->input);

    mr_json_obj scan = mr_json_open(&top, "scan");
    const int64_t *grid = r->grid[0] > 0 ? r->grid : r->matrix; /* the scan's matrix, before a crop */
    mr_json_key(&scan, "matrix");
    fprintf(f, "[%lld, %lld, %lld]", (long long)grid[0], (long long)grid[1], (long long)grid[2]);
    mr_json_int(&scan, "samples", r->nsamples);
    mr_json_int(&scan, "coils", r->ncoils);
    mr_json_str(&scan, "trajectory", r->traj_kind);
    mr_json_str(&scan, "phantom", r->phantom);
    mr_json_num(&scan, "noise_sigma", r->noise_sigma >= 0 ? r->noise_sigma : NAN);
    mr_json_int(&scan, "samples_outside_nyquist", r->samples_outside);
    mr_json_key(&scan, "truth");
    fprintf(f, "[%s%s%s]", r->has_truth[0] ? "\"image\"" : "", r->has_truth[0] && r->has_truth[1] ? ", " : "",
            r->has_truth[1] ? "\"bandlimited\"" : "");
    mr_json_close(&scan);
    json_input(&top, r);

    json_settings(&top, r);
    if (r->write_options) { /* the command line's options, from its table (recon/cli/opts.h mr_opts_json) */
        mr_json_obj opts = mr_json_open(&top, "options");
        r->write_options(r->options_ctx, &opts);
        mr_json_close(&opts);
    }

    mr_json_obj t = mr_json_open(&top, "timings_s");
    mr_json_num(&t, "read", r->t_read);
    mr_json_num(&t, "operator_create", r->t_op_create);
    mr_json_num(&t, "q", r->t_q);
    mr_json_num(&t, "plan", r->t_plan);
    mr_json_num(&t, "fft_plan", r->t_fft_plan);
    mr_json_num(&t, "sums_setup", r->t_sums_setup);
    mr_json_num(&t, "device_init", r->t_device_init);
    mr_json_num(&t, "fhd", r->t_fhd);
    mr_json_num(&t, "solve", r->t_solve);
    mr_json_num(&t, "dcf", r->t_dcf);
    mr_json_num(&t, "gridding", r->t_gridding);
    mr_json_num(&t, "scan", r->t_scan);
    mr_json_num(&t, "problem", r->t_problem);
    mr_json_num(&t, "score", r->t_score);
    mr_json_num(&t, "write", r->t_write);
    mr_json_num(&t, "total", r->t_total);
    mr_json_close(&t);
    mr_json_int(&top, "peak_memory_kib", r->peak_rss_kib);

    mr_json_obj disp = mr_json_open(&top, "display");
    const double window[2] = {0, r->window_hi};
    mr_json_array(&disp, "window", window, 2);
    mr_json_str(&disp, "window_from", r->window_from);
    if (r->has_truth[MR_TRUTH_IMAGE] || r->has_truth[MR_TRUTH_BANDLIMITED]) {
        mr_json_num(&disp, "error_gain", r->error_gain);
        mr_json_str(&disp, "compare_truth", mr_truth_name(r->compare_truth));
    }
    mr_json_close(&disp);

    mr_json_key(&top, "methods");
    fputc('[', f);
    mr_json_obj list = {f, 4, 0};
    for (int i = 0; i < r->nmethods; i++) {
        const mr_report_method *m = &r->m[i];
        mr_json_obj mo = mr_json_open(&list, NULL);
        mr_json_str(&mo, "method", m->method);
        mr_json_num(&mo, "seconds", m->seconds);
        mr_json_obj mm = mr_json_open(&mo, "metrics");
        for (int k = 0; k < MR_TRUTH_COUNT; k++) {
            if (!m->have_metrics[k])
                continue;
            mr_json_obj x = mr_json_open(&mm, mr_truth_name((mr_truth_kind)k));
            mr_json_num(&x, "mse", m->metrics[k].mse);
            mr_json_num(&x, "psnr_db", m->metrics[k].psnr_db);
            mr_json_num(&x, "snr_db", m->metrics[k].snr_db);
            mr_json_num(&x, "percent_error", m->metrics[k].percent_error);
            mr_json_num(&x, "max_truth", m->metrics[k].max_truth);
            mr_json_close(&x);
        }
        mr_json_close(&mm);
        mr_json_int(&mo, "iterations", m->iterations);
        if (m->history) {
            mr_json_str(&mo, "solver", m->solver);
            mr_json_str(&mo, "stop", m->stop);
            mr_json_num(&mo, "time_solve_s", m->t_solve);
            mr_json_num(&mo, "time_monitor_s", m->t_monitor);
            mr_json_str(&mo, "history_name", m->history_name);
            mr_json_num(&mo, "final_history", m->final_history);
            mr_json_array(&mo, "history", m->history, m->iterations + 1);
            if (!strcmp(m->history_name, "relative residual")) { /* the CG keys of earlier versions */
                mr_json_num(&mo, "final_relative_residual", m->final_history);
                mr_json_array(&mo, "residual_history", m->history, m->iterations + 1);
            }
            if (m->objective) {
                mr_json_array(&mo, "objective_history", m->objective, m->iterations + 1);
                mr_json_array(&mo, "data_term_history", m->data_term, m->iterations + 1);
            }
            mr_json_int(&mo, "normal_applications", m->normal_apps);
            if (isfinite(m->lipschitz))
                mr_json_num(&mo, "lipschitz", m->lipschitz);
            if (isfinite(m->step))
                mr_json_num(&mo, "step", m->step);
            if (isfinite(m->rho))
                mr_json_num(&mo, "rho", m->rho);
            if (!strcmp(m->solver, "fista"))
                mr_json_int(&mo, "restarts", m->restarts);
            if (!strcmp(m->solver, "admm")) {
                mr_json_int(&mo, "inner_iterations", m->inner_iterations);
                mr_json_str(&mo, "inner_preconditioner", m->preconditioned ? "circulant" : "none");
            }
            mr_json_key(&mo, "terms");
            fputc('[', f);
            mr_json_obj tl = {f, mo.indent + 2, 0};
            for (int j = 0; j < m->nterms; j++) {
                const mr_report_term *term = &m->terms[j];
                mr_json_obj to = mr_json_open(&tl, NULL);
                mr_json_str(&to, "prior", term->name);
                mr_json_str(&to, "penalty", term->penalty);
                mr_json_num(&to, "lambda", term->lambda);
                mr_json_num(&to, "lambda_rel", term->lambda_rel);
                mr_json_str(&to, "lambda_from", term->from);
                if (term->history)
                    mr_json_array(&to, "history", term->history, m->iterations + 1);
                mr_json_close(&to);
            }
            fputc(']', f);
            if (m->psnr) {
                mr_json_str(&mo, "psnr_history_truth", mr_truth_name(m->psnr_truth));
                mr_json_array(&mo, "psnr_history_db", m->psnr, m->iterations + 1);
            }
        } else {
            mr_json_num(&mo, "time_gridding_s", m->t_gridding);
        }
        mr_json_close(&mo);
    }
    fputs("\n  ]\n}\n", f);
}

/* ---- CSV -------------------------------------------------------------------------------------- */

static void cnum(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.9g", v);
    else if (isinf(v))
        fputs(v > 0 ? "inf" : "-inf", f);
    else
        fputs("nan", f);
}

static void csv_body(FILE *f, const mr_report *r)
{
    fputs("method,truth,mse,psnr_db,snr_db,percent_error,seconds\n", f);
    for (int i = 0; i < r->nmethods; i++) {
        const mr_report_method *m = &r->m[i];
        int rows = 0;
        for (int k = 0; k < MR_TRUTH_COUNT; k++) {
            if (!m->have_metrics[k])
                continue;
            const mr_metrics *x = &m->metrics[k];
            fprintf(f, "%s,%s,", m->method, mr_truth_name((mr_truth_kind)k));
            cnum(f, x->mse);
            fputc(',', f);
            cnum(f, x->psnr_db);
            fputc(',', f);
            cnum(f, x->snr_db);
            fputc(',', f);
            cnum(f, x->percent_error);
            fputc(',', f);
            cnum(f, m->seconds);
            fputc('\n', f);
            rows++;
        }
        if (!rows) {
            fprintf(f, "%s,,,,,,", m->method);
            cnum(f, m->seconds);
            fputc('\n', f);
        }
    }
}

/* ---- Markdown --------------------------------------------------------------------------------- */

static void mnum(FILE *f, const char *fmt, double v)
{
    if (isfinite(v))
        fprintf(f, fmt, v);
    else
        fputs(isinf(v) ? (v > 0 ? "inf" : "-inf") : "n/a", f);
}

/* The input, the read stage and the image grid, in words. */
static void md_input(FILE *f, const mr_report *r)
{
    if (r->format)
        fprintf(f, "\nRead as %s", r->format);
    if (r->volumes > 1)
        fprintf(f, ", volume %d of %d (`%s`)", r->volume + 1, r->volumes, r->volume_label);
    if (r->prewhitened)
        fprintf(f, "; coils prewhitened with the noise scans (%lld samples per coil)", (long long)r->noise_samples);
    else if (r->noise_samples > 0)
        fprintf(f, "; noise scans present (%lld samples per coil), not prewhitened", (long long)r->noise_samples);
    if (r->format)
        fputs(".\n", f);
    if (r->grid[0] > 0)
        fprintf(f, "Reconstructed on the encodedSpace grid %lld x %lld x %lld and cropped to reconSpace "
                   "%lld x %lld x %lld.\n",
                (long long)r->grid[0], (long long)r->grid[1], (long long)r->grid[2], (long long)r->matrix[0],
                (long long)r->matrix[1], (long long)r->matrix[2]);
    if (r->nifti && strcmp(r->nifti, "none"))
        fprintf(f, "NIfTI-1 images (%s), voxel %s %.4g x %.4g x %.4g mm, %s.\n", r->nifti,
                r->fov_mm[0] > 0 ? "" : "(FOV unknown: 1 mm per voxel)",
                r->fov_mm[0] > 0 ? r->fov_mm[0] / (double)r->matrix[0] : 1.0,
                r->fov_mm[1] > 0 ? r->fov_mm[1] / (double)r->matrix[1] : 1.0,
                r->fov_mm[2] > 0 ? r->fov_mm[2] / (double)r->matrix[2] : 1.0,
                r->geometry ? "placed in scanner coordinates" : "default placement (docs/FORMAT.md, Orientation)");
}

static void md_body(FILE *f, const mr_report *r)
{
    fprintf(f, "# mrirecon reconstruction report\n\n");
    fprintf(f, "Input: `%s`  \n", r->input);
    fprintf(f, "Scan: matrix %lld x %lld x %lld, %lld samples, %lld coil(s), trajectory `%s`, phantom `%s`",
            (long long)r->matrix[0], (long long)r->matrix[1], (long long)r->matrix[2], (long long)r->nsamples,
            (long long)r->ncoils, r->traj_kind[0] ? r->traj_kind : "unknown", r->phantom[0] ? r->phantom : "none");
    if (r->noise_sigma >= 0)
        fprintf(f, ", noise sigma %.4g (%s)", r->noise_sigma, r->noise_from ? r->noise_from : "file");
    fprintf(f, "  \nTruth images: %s%s%s\n", r->has_truth[0] ? "/truth/image " : "",
            r->has_truth[1] ? "/truth/bandlimited" : "", (r->has_truth[0] || r->has_truth[1]) ? "" : "none");
    md_input(f, r);
    if (r->sens && !strcmp(r->sens, "file"))
        fprintf(f, "\nSENSE: the %lld coil(s) were reconstructed together with the coil maps of `%s` (one operator, "
                   "one CG on the combined image); gridding combined its coil images with the same maps.\n",
                (long long)r->ncoils, r->sens_source ? r->sens_source : "?");
    else if (r->sens && !strcmp(r->sens, "estimate"))
        fprintf(f, "\nSENSE: the %lld coils were reconstructed together with coil maps estimated from the data "
                   "(%s on the gridded k-space centre, calibration grid %lldx%lldx%lld; docs/COILMAPS.md). The "
                   "maps are unit-norm, so the image is the object weighted by the coils' root-sum-of-squares "
                   "sensitivity%s.\n",
                (long long)r->ncoils,
                r->sens_method && !strcmp(r->sens_method, "walsh") ? "Walsh/Inati" : "ESPIRiT",
                (long long)r->sens_calib[0], (long long)r->sens_calib[1],
                (long long)r->sens_calib[2],
                r->truth_weighted ? "; the metrics compare against the truth weighted the same way (by the "
                                    "root-sum-of-squares of the scan's own maps)"
                                  : "");
    else if (r->ncoils > 1)
        fprintf(f, "\nThe %lld coils were reconstructed one by one and combined by root-sum-of-squares; the CG "
                   "residual is the combined sqrt(sum_c ||r_c||^2 / sum_c ||r_c,0||^2).\n",
                (long long)r->ncoils);
    if (r->samples_outside)
        fprintf(f, "\n**Warning:** %lld samples lie outside the Nyquist box [-N/2, N/2].\n",
                (long long)r->samples_outside);

    fprintf(f, "\n## Results\n\n| method | truth | MSE | PSNR (dB) | SNR (dB) | error (%%) | seconds |\n"
               "|---|---|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < r->nmethods; i++) {
        const mr_report_method *m = &r->m[i];
        int rows = 0;
        for (int k = 0; k < MR_TRUTH_COUNT; k++) {
            if (!m->have_metrics[k])
                continue;
            const mr_metrics *x = &m->metrics[k];
            fprintf(f, "| %s | %s | ", m->method, mr_truth_name((mr_truth_kind)k));
            mnum(f, "%.4g", x->mse);
            fputs(" | ", f);
            mnum(f, "%.2f", x->psnr_db);
            fputs(" | ", f);
            mnum(f, "%.2f", x->snr_db);
            fputs(" | ", f);
            mnum(f, "%.2f", x->percent_error);
            fprintf(f, " | %.3f |\n", m->seconds);
            rows++;
        }
        if (!rows)
            fprintf(f, "| %s | (none) | | | | | %.3f |\n", m->method, m->seconds);
    }
    fprintf(f, "\nMetrics are on magnitude images without rescaling: PSNR = 20 log10(max I0 / sqrt(MSE)), "
               "SNR = 20 log10(RMS(I0) / sqrt(MSE)), error = 100 RMS(I - I0) / RMS(I0). `seconds` is the method's "
               "own time (CG: operator setup + F^H d + solve; gridding: DCF + gridding).\n");

    for (int i = 0; i < r->nmethods; i++) {
        const mr_report_method *m = &r->m[i];
        if (!m->history)
            continue;
        fprintf(f, "\n## Convergence: %s\n\nSolver %s: %d iterations (stopped by %s), final %s %.3e.", m->method,
                m->solver, m->iterations, m->stop ? m->stop : "?", m->history_name, m->final_history);
        if (!strcmp(m->solver, "admm"))
            fprintf(f, " %d inner CG iterations in all, %s.", m->inner_iterations,
                    m->preconditioned ? "preconditioned by the circulant model of the x-update's system" : "not preconditioned");
        for (int j = 0; j < m->nterms; j++)
            fprintf(f, "%s prior %s (%s), lambda %.4g (%s)%s", j ? ";" : " Objective 1/2 ||E x - d||^2 +", m->terms[j].name,
                    m->terms[j].penalty, m->terms[j].lambda, m->terms[j].from, j + 1 == m->nterms ? "." : "");
        if (m->psnr)
            fprintf(f, " PSNR per iteration is against the %s truth.", mr_truth_name(m->psnr_truth));
        fprintf(f, "\n\n| iteration | %s |%s%s\n|---:|---:|%s%s\n", m->history_name, m->objective ? " objective |" : "",
                m->psnr ? " PSNR (dB) |" : "", m->objective ? "---:|" : "", m->psnr ? "---:|" : "");
        int step = m->iterations > 10 ? m->iterations / 10 : 1;
        for (int k = 0; k <= m->iterations; k += step) {
            fprintf(f, "| %d | %.3e |", k, m->history[k]);
            if (m->objective)
                fprintf(f, " %.6e |", m->objective[k]);
            if (m->psnr) {
                fputc(' ', f);
                mnum(f, "%.2f", m->psnr[k]);
                fputs(" |", f);
            }
            fputc('\n', f);
            if (k != m->iterations && k + step > m->iterations)
                k = m->iterations - step; /* always end on the last iteration */
        }
    }

    fprintf(f, "\n## Stage times (seconds)\n\n| read | operator setup | of which Q | F^H d | solve | DCF | gridding | "
               "write | total |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
               "| %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n",
            r->t_read, r->t_op_create, r->t_q, r->t_fhd, r->t_solve, r->t_dcf, r->t_gridding, r->t_write, r->t_total);
    fprintf(f, "\nOperator setup = device initialisation %.3f + Q %.3f + planning %.3f (of which FFT plans and the "
               "kernel spectrum %.3f). Peak memory (ru_maxrss): %.1f MiB. `write` covers the images and pictures; the "
               "report files are written after it.\n",
            r->t_device_init, r->t_q, r->t_plan, r->t_fft_plan, r->peak_rss_kib / 1024.0);

    fprintf(f, "\n## Settings\n\n| setting | value |\n|---|---|\n");
    fprintf(f, "| method | %s |\n| iters | %d%s |\n| tol | %g |\n| lambda | %g |\n| reg | %s |\n| solver | %s |\n"
               "| basis | %s |\n",
            r->method, r->iters, r->iters == 0 ? " (the solver's default)" : "", r->tol, r->lambda, r->reg,
            r->solver ? r->solver : "auto", r->basis);
    const char *cpu_kernels = mr_nudft_kernel_name();
    fprintf(f, "| device | %s |\n| backend | %s |\n| CPU kernels | %s |\n| threads | %d |\n| dcf | %s |\n"
               "| oversample | %g |\n| kernel width | %d |\n| sens | %s%s%s |\n",
            r->device, r->backend, cpu_kernels ? cpu_kernels : "none", r->threads, r->dcf, r->oversample,
            r->kernel_width, r->sens ? r->sens : "none", r->sens_source ? ": " : "",
            r->sens_source ? r->sens_source : "");
    if (r->model[0])
        fprintf(f, "| model | %s (%s)%s%s |\n", r->model, r->model_why, r->model_text[0] ? ": " : "", r->model_text);
    if (r->field_model[0])
        fprintf(f, "| field map | %s model, %d segment(s), bound %.2g max / %.2g rms, map %s |\n", r->field_model,
                r->field_segments, r->field_bound[0], r->field_bound[1], r->field_source);
    if (r->sums[0])
        fprintf(f, "| precision | %s: %s |\n| Q | %s (cache: %s) |\n", r->precision ? r->precision : "auto", r->sums,
                r->q_source ? r->q_source : "", r->q_cache ? r->q_cache : "off");
    if (isfinite(r->normal_diag))
        fprintf(f, "| diag(E^H E) at the centre | %.4g (lambda / diag = %.3g) |\n", r->normal_diag,
                r->lambda / r->normal_diag);
    fprintf(f, "| lambda chosen by | %s |\n", r->lambda_from);

    fprintf(f, "\n## Pictures\n\nMagnitude PNGs (image_<method>.png%s) map the window [0, %.4g] (%s) to "
               "black..white, clipped.",
            r->nmethods > 1 ? ", compare.png" : "", r->window_hi, r->window_from);
    const int truth = r->has_truth[MR_TRUTH_IMAGE] || r->has_truth[MR_TRUTH_BANDLIMITED];
    if (r->nmethods > 1 && truth)
        fprintf(f, " compare.png: top row truth | methods, bottom row error maps |I - I0| against the %s truth, "
                   "multiplied by a gain of x%g, same window.",
                mr_truth_name(r->compare_truth), r->error_gain);
    else if (r->nmethods > 1)
        fprintf(f, " compare.png: the methods side by side in the same window (the scan has no truth image to "
                   "compare with).");
    fputc('\n', f);
}

/* Write one report file atomically: temporary name, body, rename. */
static mr_status write_atomic(const char *path, const mr_report *r, void (*body)(FILE *, const mr_report *))
{
    char tmp[4200];
    FILE *f;
    mr_status st = mr_open_tmp(path, tmp, sizeof tmp, &f);
    if (st != MR_OK)
        return st;
    body(f, r);
    return mr_close_commit(f, tmp, path);
}

mr_status mr_report_write_json(const char *path, const mr_report *r) { return write_atomic(path, r, json_body); }
void mr_report_print_json(FILE *f, const mr_report *r) { json_body(f, r); }
mr_status mr_report_write_md(const char *path, const mr_report *r) { return write_atomic(path, r, md_body); }
mr_status mr_report_write_csv(const char *path, const mr_report *r) { return write_atomic(path, r, csv_body); }
