#include "outputs.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/log.h"
#include "../../io/fsutil.h"
#include "../../io/image_h5.h"
#include "../../io/image_io.h"
#include "../../io/image_png.h"
#include "compare.h"
#include "plot.h"

#define MR_PICTURE_MIN_PANEL 192 /* a 3D picture's planes: at least this many pixels (64^3: x3) */
#define MR_CONVERGENCE_W 800
#define MR_CONVERGENCE_H 480

unsigned mr_outputs_formats(const mr_report *r)
{
    unsigned set = r->formats ? r->formats : MR_OUTPUT_DEFAULT_FORMATS;
    if (r->nifti && !strcmp(r->nifti, "none"))
        set &= ~(1u << MR_IMAGE_NIFTI);
    return set;
}

mr_status mr_outputs_parse_formats(const char *list, const char *nifti, unsigned *set)
{
    *set = 0;
    if (!list)
        return MR_OK;
    if (mr_image_formats_parse(list, set) != MR_OK)
        return mr_error(MR_EINVAL, "--format: %s", mr_last_error());
    if ((*set & (1u << MR_IMAGE_DICOM)) && !mr_dicom_available())
        return mr_error(MR_EINVAL, "--format dicom: this mrirecon was built without DICOM support (DCMTK: install "
                                   "libdcmtk-dev and rebuild, scripts/setup.sh)");
    if (nifti && !strcmp(nifti, "complex") && !(*set & (1u << MR_IMAGE_NIFTI)))
        return mr_error(MR_EINVAL, "--nifti %s but --format %s writes no NIfTI", nifti, list);
    if (nifti && !strcmp(nifti, "none") && (*set & (1u << MR_IMAGE_NIFTI)))
        return mr_error(MR_EINVAL, "--nifti none but --format %s lists nifti", list);
    return MR_OK;
}

/* The method's image as an mr_image (borrowing img) with the report's grid and placement. */
static mr_image as_image(const mr_report *r, const mr_report_method *m, const float *img)
{
    mr_image im;
    memset(&im, 0, sizeof im);
    memcpy(im.matrix, r->matrix, sizeof im.matrix);
    im.data = (float *)img; /* borrowed: never freed here */
    memcpy(im.fov_mm, r->fov_mm, sizeof im.fov_mm);
    if (r->geometry) {
        im.has_geometry = 1;
        im.geometry = *r->geometry;
    }
    snprintf(im.method, sizeof im.method, "%s", m->method);
    return im;
}

/* image_<method>.nii (r->nifti: magnitude or complex), .hdr/.cfl, .mrd, _NNNN.dcm: mr_image_write with
 * the report's grid and placement. DICOM: one series per method (series number k + 1) of one study. */
static mr_status write_format(const char *outdir, const mr_report *r, int k, const float *img, mr_image_format f,
                              const mr_dicom_study *study)
{
    const mr_report_method *m = &r->m[k];
    static const char *const suffix[MR_IMAGE_FORMATS] = {".h5", ".png", ".nii", "", ".mrd", "_"};
    char name[96], path[4096], desc[80];
    snprintf(name, sizeof name, "image_%s%s", m->method, suffix[f]);
    snprintf(desc, sizeof desc, "mrirecon %.24s %.40s", m->method, r->volume_label);
    mr_image_write_opts o;
    mr_image_write_opts_default(&o);
    o.nifti_complex = r->nifti && !strcmp(r->nifti, "complex");
    o.description = desc;
    o.study = study;
    o.series_number = k + 1;
    const mr_image im = as_image(r, m, img);
    mr_status st = mr_path_join(path, sizeof path, outdir, name);
    return st == MR_OK ? mr_image_write(f, path, &im, &o) : st;
}

/* image_<method>.h5 */
static mr_status write_h5(const char *outdir, const mr_report *r, const mr_report_method *m, const float *img)
{
    char name[96], path[4096];
    const mr_image_attr attrs[] = {
        {"lambda", r->lambda},
        {"tol", r->tol},
        {"final_history", m->final_history},
        {"time_read_s", r->t_read},
        {"time_q_s", m->history ? r->t_q : 0},
        {"time_operator_create_s", m->history ? r->t_op_create : 0},
        {"time_fhd_s", m->history ? r->t_fhd : 0},
        {"time_solve_s", m->t_solve},
        {"time_dcf_s", m->history ? 0 : r->t_dcf},
        {"time_gridding_s", m->t_gridding},
        {"seconds", m->seconds},
        {"oversample", r->oversample},
        {"kernel_width", r->kernel_width},
        {"basis_dirac", strcmp(r->basis, "dirac") == 0},
    };
    mr_image_meta meta = {m->method, m->iterations, attrs, (int)(sizeof attrs / sizeof attrs[0]), r->fov_mm,
                          r->geometry};
    snprintf(name, sizeof name, "image_%s.h5", m->method);
    mr_status st = mr_path_join(path, sizeof path, outdir, name);
    return st == MR_OK ? mr_image_h5_write(path, img, r->matrix, &meta) : st;
}

mr_status mr_outputs_picture(const char *path, const float *mag, const int64_t matrix[3], const int64_t *slice,
                             double hi)
{
    const int64_t n = matrix[0] * matrix[1] * matrix[2];
    if (!(hi > 0)) {
        hi = 0;
        for (int64_t v = 0; v < n; v++)
            if (isfinite(mag[v]) && mag[v] > hi)
                hi = mag[v];
        hi = hi > 0 ? hi : 1;
    }
    if (matrix[2] == 1 && !slice)
        return mr_png_write_volume(path, mag, matrix, 0, hi, 8);
    float *pix = NULL;
    int w = 0, h = 0;
    mr_status st = mr_plot_volume(mag, matrix, slice, matrix[2] > 1 ? mr_plot_volume_zoom(matrix, MR_PICTURE_MIN_PANEL) : 1,
                                  2, (float)hi, &pix, &w, &h);
    if (st != MR_OK) {
        char why[1024];
        snprintf(why, sizeof why, "%s", mr_last_error()); /* mr_error writes the buffer it would read */
        return mr_error(st, "%s: --slice: %s", path, why);
    }
    st = mr_png_write_gray(path, pix, w, h, 0, hi, 8);
    free(pix);
    return st;
}

/* image_<method>.png: the magnitude in the report's window */
static mr_status write_png(const char *outdir, const mr_report *r, const mr_report_method *m, const float *img)
{
    const int64_t n = r->matrix[0] * r->matrix[1] * r->matrix[2];
    float *mag = malloc((size_t)n * sizeof(float));
    if (!mag)
        return mr_error(MR_ENOMEM, "out of memory for a %lld-voxel image", (long long)n);
    for (int64_t v = 0; v < n; v++)
        mag[v] = hypotf(img[2 * v], img[2 * v + 1]);
    char name[96], path[4096];
    snprintf(name, sizeof name, "image_%s.png", m->method);
    mr_status st = mr_path_join(path, sizeof path, outdir, name);
    if (st == MR_OK)
        st = mr_outputs_picture(path, mag, r->matrix, r->slice, isfinite(r->window_hi) ? r->window_hi : 0);
    free(mag);
    return st;
}

/* convergence.png for the first iterative method of the list, convergence_<method>.png for the others:
 * the solver's convergence measure (log scale) and the PSNR per iteration */
static mr_status write_convergence(const char *outdir, const mr_report *r, const mr_report_method *m)
{
    char name[96], path[4096], title[96];
    snprintf(name, sizeof name, "convergence.png");
    for (int i = 0; i < r->nmethods && &r->m[i] != m; i++)
        if (r->m[i].history) {
            snprintf(name, sizeof name, "convergence_%s.png", m->method);
            break;
        }
    mr_status st = mr_path_join(path, sizeof path, outdir, name);
    if (st != MR_OK)
        return st;
    char ylabel[64];
    snprintf(ylabel, sizeof ylabel, "%c%s", m->history_name[0] - ('a' - 'A'), m->history_name + 1);
    snprintf(title, sizeof title, "%s convergence (%s)", mr_outputs_method_label(m->method), m->solver);
    mr_plot_series s[2] = {
        {m->history, m->iterations + 1, {200, 30, 30}, 1, ylabel},
        {m->psnr, m->iterations + 1, {30, 70, 200}, 0, "PSNR (dB)"},
    };
    return mr_plot_write(path, MR_CONVERGENCE_W, MR_CONVERGENCE_H, s, m->psnr ? 2 : 1, "Iteration", title);
}

const char *mr_outputs_method_label(const char *method)
{
    if (!strcmp(method, "iterative"))
        return "Iterative";
    if (!strcmp(method, "cg"))
        return "CG";
    if (!strcmp(method, "gridding-kb"))
        return "KB gridding";
    if (!strcmp(method, "gridding-bilinear"))
        return "Bilinear";
    return method;
}

/* ---- the image files, written concurrently ----------------------------------------------------
 * The files do not depend on each other, and each writer is mostly one core's encoding (deflate,
 * float conversion) or a wait for the disk (fsync), so they run on threads of their own: the write
 * stage takes about as long as its slowest file instead of their sum. libhdf5 is not thread-safe: the
 * HDF5 images are written one after the other on one thread. No writer uses OpenMP. */

enum { FILE_H5, FILE_PNG, FILE_NIFTI, FILE_CFL, FILE_MRD, FILE_DICOM, FILE_CONVERGENCE, FILES_PER_METHOD };
#define MR_OUTPUT_SLOTS (MR_REPORT_MAX_METHODS * FILES_PER_METHOD + 1) /* + compare.png */

typedef struct {
    const char *outdir;
    const mr_report *r;
    const float *const *imgs;
    const float *truth;
    unsigned formats;        /* mr_outputs_formats */
    mr_dicom_study study;    /* the DICOM series of every method belong to one study */
    /* per file in the order a sequential writer takes them (method by method, then compare.png):
     * its outcome, and its message (mr_error's buffer is per thread) */
    mr_status st[MR_OUTPUT_SLOTS];
    char why[MR_OUTPUT_SLOTS][1024];
} outputs_job;

typedef struct {
    outputs_job *o;
    int kind; /* FILE_*, or FILES_PER_METHOD for compare.png */
    int method; /* -1: every method (FILE_H5) */
    pthread_t thread;
} outputs_task;

static void note(outputs_job *o, int slot, mr_status st)
{
    o->st[slot] = st;
    if (st != MR_OK)
        snprintf(o->why[slot], sizeof o->why[slot], "%s", mr_last_error());
}

static mr_status write_compare(const outputs_job *o)
{
    const mr_report *r = o->r;
    const int64_t n = r->matrix[0] * r->matrix[1] * r->matrix[2];
    const char *labels[MR_REPORT_MAX_METHODS];
    for (int k = 0; k < r->nmethods; k++)
        labels[k] = mr_outputs_method_label(r->m[k].method);
    double hi = r->window_hi;
    if (!isfinite(hi)) { /* no truth: the first image's maximum */
        hi = 0;
        for (int64_t v = 0; v < n; v++)
            hi = fmax(hi, hypot(o->imgs[0][2 * v], o->imgs[0][2 * v + 1]));
    }
    char path[4096];
    mr_status st = mr_path_join(path, sizeof path, o->outdir, "compare.png");
    return st == MR_OK
               ? mr_compare_write(path, r->matrix, r->slice, o->truth, o->imgs, labels, r->nmethods, hi, r->error_gain)
               : st;
}

static void *run_task(void *arg)
{
    outputs_task *t = arg;
    outputs_job *o = t->o;
    const mr_report *r = o->r;
    const int k = t->method;
    switch (t->kind) {
    case FILE_H5: /* the HDF5 files (ours, MRD) of every method, in order, on one thread (libhdf5 is not
                     thread-safe); after a failure the rest are not written */
        for (int i = 0, failed = 0; i < r->nmethods && !failed; i++) {
            if (o->formats & (1u << MR_IMAGE_H5)) {
                note(o, i * FILES_PER_METHOD + FILE_H5, write_h5(o->outdir, r, &r->m[i], o->imgs[i]));
                failed = o->st[i * FILES_PER_METHOD + FILE_H5] != MR_OK;
            }
            if (!failed && (o->formats & (1u << MR_IMAGE_MRD))) {
                note(o, i * FILES_PER_METHOD + FILE_MRD, write_format(o->outdir, r, i, o->imgs[i], MR_IMAGE_MRD, NULL));
                failed = o->st[i * FILES_PER_METHOD + FILE_MRD] != MR_OK;
            }
        }
        break;
    case FILE_PNG:
        note(o, k * FILES_PER_METHOD + FILE_PNG, write_png(o->outdir, r, &r->m[k], o->imgs[k]));
        break;
    case FILE_NIFTI:
        note(o, k * FILES_PER_METHOD + FILE_NIFTI, write_format(o->outdir, r, k, o->imgs[k], MR_IMAGE_NIFTI, NULL));
        break;
    case FILE_CFL:
        note(o, k * FILES_PER_METHOD + FILE_CFL, write_format(o->outdir, r, k, o->imgs[k], MR_IMAGE_CFL, NULL));
        break;
    case FILE_DICOM:
        note(o, k * FILES_PER_METHOD + FILE_DICOM,
             write_format(o->outdir, r, k, o->imgs[k], MR_IMAGE_DICOM, &o->study));
        break;
    case FILE_CONVERGENCE:
        note(o, k * FILES_PER_METHOD + FILE_CONVERGENCE, write_convergence(o->outdir, r, &r->m[k]));
        break;
    default:
        note(o, MR_REPORT_MAX_METHODS * FILES_PER_METHOD, write_compare(o));
        break;
    }
    return NULL;
}

mr_status mr_outputs_write_images(const char *outdir, mr_report *r, const float *const *imgs, const float *truth)
{
    double t0 = mr_now();
    if (r->nmethods > MR_REPORT_MAX_METHODS)
        return mr_error(MR_EINVAL, "%s: %d methods to write (at most %d)", outdir, r->nmethods, MR_REPORT_MAX_METHODS);
    if (r->slice && r->matrix[2] == 1)
        return mr_error(MR_EINVAL, "--slice chooses the planes of a 3D picture; this image is 2D (%lldx%lld): its "
                                   "picture is the whole image",
                        (long long)r->matrix[0], (long long)r->matrix[1]);
    mr_status st = mr_mkdir_p(outdir);
    if (st != MR_OK)
        return st;
    outputs_job o;
    memset(&o, 0, sizeof o);
    o.outdir = outdir;
    o.r = r;
    o.imgs = imgs;
    o.truth = truth;
    o.formats = mr_outputs_formats(r);
    if ((o.formats & (1u << MR_IMAGE_DICOM)) && (st = mr_dicom_study_new(&o.study)) != MR_OK)
        return st;
    outputs_task tasks[MR_OUTPUT_SLOTS];
    int nt = 0;
    tasks[nt++] = (outputs_task){.o = &o, .kind = FILE_H5, .method = -1};
    static const struct {
        int kind;
        mr_image_format format;
    } threaded[] = {{FILE_PNG, MR_IMAGE_PNG}, {FILE_NIFTI, MR_IMAGE_NIFTI}, {FILE_CFL, MR_IMAGE_CFL},
                    {FILE_DICOM, MR_IMAGE_DICOM}};
    for (int k = 0; k < r->nmethods; k++) {
        for (size_t i = 0; i < sizeof threaded / sizeof threaded[0]; i++)
            if (o.formats & (1u << threaded[i].format))
                tasks[nt++] = (outputs_task){.o = &o, .kind = threaded[i].kind, .method = k};
        if (r->m[k].history)
            tasks[nt++] = (outputs_task){.o = &o, .kind = FILE_CONVERGENCE, .method = k};
    }
    if (r->nmethods > 1)
        tasks[nt++] = (outputs_task){.o = &o, .kind = FILES_PER_METHOD, .method = -1};
    int started[MR_OUTPUT_SLOTS] = {0};
    for (int i = 1; i < nt; i++) /* task 0, the HDF5 images, is written here meanwhile */
        if (!(started[i] = pthread_create(&tasks[i].thread, NULL, run_task, &tasks[i]) == 0))
            run_task(&tasks[i]); /* no thread: in turn */
    run_task(&tasks[0]);
    for (int i = 1; i < nt; i++)
        if (started[i])
            pthread_join(tasks[i].thread, NULL);
    for (int i = 0; i < MR_OUTPUT_SLOTS && st == MR_OK; i++)
        if (o.st[i] != MR_OK)
            st = mr_error(o.st[i], "%s", o.why[i]);
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
