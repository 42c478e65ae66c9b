#include "outputs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"
#include "../io/fsutil.h"
#include "../io/image_h5.h"
#include "../io/image_png.h"
#include "../io/nifti.h"
#include "compare.h"
#include "plot.h"

#define MR_CONVERGENCE_W 800
#define MR_CONVERGENCE_H 480

/* image_<method>.nii (r->nifti: magnitude or complex), placed with the scan's geometry when known. */
static mr_status write_nifti(const char *outdir, const mr_report *r, const mr_report_method *m, const float *img)
{
    if (!r->nifti || !strcmp(r->nifti, "none"))
        return MR_OK;
    char name[96], path[4096], desc[80];
    snprintf(name, sizeof name, "image_%s.nii", m->method);
    snprintf(desc, sizeof desc, "mrirecon %.24s %.40s", m->method, r->volume_label);
    mr_status st = mr_path_join(path, sizeof path, outdir, name);
    if (st == MR_OK)
        st = mr_nifti_write_geometry(path, img, r->matrix, r->fov_mm,
                                     !strcmp(r->nifti, "complex") ? MR_NIFTI_COMPLEX : MR_NIFTI_MAGNITUDE, r->geometry,
                                     desc);
    return st;
}

/* image_<method>.h5, .png and .nii; mag: [N] scratch */
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
    mr_image_meta meta = {m->method, m->iterations, attrs, (int)(sizeof attrs / sizeof attrs[0]), r->fov_mm};
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
    if (st == MR_OK)
        st = write_nifti(outdir, r, m, img);
    return st;
}

static mr_status write_convergence(const char *outdir, const mr_report_method *m)
{
    char path[4096];
    mr_status st = mr_path_join(path, sizeof path, outdir, "convergence.png");
    if (st != MR_OK)
        return st;
    mr_plot_series s[2] = {
        {m->rel_resid, m->iterations + 1, {200, 30, 30}, 1, "Relative residual"},
        {m->psnr, m->iterations + 1, {30, 70, 200}, 0, "PSNR (dB)"},
    };
    return mr_plot_write(path, MR_CONVERGENCE_W, MR_CONVERGENCE_H, s, m->psnr ? 2 : 1, "Iteration",
                         "CG convergence");
}

const char *mr_outputs_method_label(const char *method)
{
    if (!strcmp(method, "cg"))
        return "CG";
    if (!strcmp(method, "gridding-kb"))
        return "KB gridding";
    if (!strcmp(method, "gridding-bilinear"))
        return "Bilinear";
    return method;
}

mr_status mr_outputs_write_images(const char *outdir, mr_report *r, const float *const *imgs, const float *truth)
{
    double t0 = mr_now();
    const int64_t n = r->matrix[0] * r->matrix[1] * r->matrix[2];
    float *mag = malloc((size_t)n * sizeof(float));
    if (!mag)
        return mr_error(MR_ENOMEM, "out of memory for a %lld-voxel image", (long long)n);
    mr_status st = mr_mkdir_p(outdir);
    for (int k = 0; st == MR_OK && k < r->nmethods; k++) {
        st = write_image(outdir, r, &r->m[k], imgs[k], mag);
        if (st == MR_OK && r->m[k].rel_resid)
            st = write_convergence(outdir, &r->m[k]);
    }
    free(mag);
    if (st == MR_OK && r->nmethods == 3) {
        char path[4096];
        const char *labels[3];
        for (int k = 0; k < 3; k++)
            labels[k] = mr_outputs_method_label(r->m[k].method);
        double hi = r->window_hi;
        if (!isfinite(hi)) { /* no truth: the first image's maximum */
            hi = 0;
            for (int64_t v = 0; v < n; v++)
                hi = fmax(hi, hypot(imgs[0][2 * v], imgs[0][2 * v + 1]));
        }
        st = mr_path_join(path, sizeof path, outdir, "compare.png");
        if (st == MR_OK)
            st = mr_compare_write(path, r->matrix, truth, imgs, labels, 3, hi, r->error_gain);
    }
    r->t_write = mr_now() - t0;
    return st;
}

mr_status mr_outputs_write_reports(const char *outdir, const mr_report *r)
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
