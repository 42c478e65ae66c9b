/* mrirecon convert IN OUT: k-space from any input format (chosen by content: mrirecon HDF5,
 * ISMRMRD, BART) to mrirecon's HDF5 format or a BART traj + ksp pair, one output per volume; or an
 * image (our HDF5 image, NIfTI-1, a BART array [X, Y, Z]) to any image format (io/image_io.h).
 * Every output is written under a temporary name and all of them are renamed into place only when
 * every volume has been read and written, so a failure leaves nothing behind. One line per written
 * file on stdout. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/log.h"
#include "../../io/cfl.h"
#include "../../io/fsutil.h"
#include "../../io/image_io.h"
#include "../../io/input.h"
#include "../../io/kspace_h5.h"
#include "commands.h"
#include "../api/image_file.h"
#include "opts.h"
#include "../report/outputs.h"
#include "read_cli.h"
#include "../pipeline/volumes.h"

typedef struct {
    char staged[4200];
    char final[4200];
} staged_file;

typedef struct {
    staged_file *f;
    int n, cap;
} staging;

static mr_status stage_add(staging *s, const char *staged, const char *final)
{
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 8;
        staged_file *nf = realloc(s->f, (size_t)cap * sizeof *nf);
        if (!nf)
            return mr_error(MR_ENOMEM, "out of memory");
        s->f = nf;
        s->cap = cap;
    }
    snprintf(s->f[s->n].staged, sizeof s->f[s->n].staged, "%s", staged);
    snprintf(s->f[s->n].final, sizeof s->f[s->n].final, "%s", final);
    s->n++;
    return MR_OK;
}

static void stage_discard(staging *s)
{
    for (int i = 0; i < s->n; i++)
        remove(s->f[i].staged);
}

static mr_status stage_commit(staging *s)
{
    for (int i = 0; i < s->n; i++) {
        mr_status st = mr_commit_file(s->f[i].staged, s->f[i].final);
        if (st != MR_OK) {
            for (int j = i + 1; j < s->n; j++)
                remove(s->f[j].staged);
            return st;
        }
    }
    return MR_OK;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* OUT for volume v of nvol: "scan.h5" -> "scan_v003.h5" (only when several are written) */
static mr_status volume_name(char *buf, size_t size, const char *out, int bart, int v, int several)
{
    char base[4096];
    snprintf(base, sizeof base, "%s", out);
    const char *ext = "";
    if (bart) {
        /* a prefix: strip .cfl/.hdr and _ksp/_traj */
        size_t n = strlen(base);
        if (ends_with(base, ".cfl") || ends_with(base, ".hdr"))
            base[n - 4] = '\0';
        n = strlen(base);
        if (ends_with(base, "_ksp"))
            base[n - 4] = '\0';
        else if (ends_with(base, "_traj"))
            base[n - 5] = '\0';
    } else {
        char *dot = strrchr(base, '.'), *slash = strrchr(base, '/');
        if (dot && (!slash || dot > slash) && dot != base) {
            ext = out + (dot - base);
            *dot = '\0';
        }
    }
    int k = several ? snprintf(buf, size, "%s_v%03d%s", base, v, ext) : snprintf(buf, size, "%s%s", base, ext);
    if (k < 0 || (size_t)k >= size)
        return mr_error(MR_EINVAL, "%s: output name too long", out);
    return MR_OK;
}

/* Write ks for `final` (an HDF5 path or a BART prefix) under staged names. */
static mr_status write_staged(staging *stg, const mr_kspace *ks, const char *final, int bart, int bart_scale)
{
    char staged[4200];
    mr_status st = mr_tmp_name(final, staged, sizeof staged);
    if (st != MR_OK)
        return st;
    if (!bart) {
        if ((st = mr_kspace_write(staged, ks)) != MR_OK)
            return st;
        return stage_add(stg, staged, final);
    }
    if ((st = mr_cfl_write_scan(staged, ks, bart_scale)) != MR_OK)
        return st;
    static const char *const parts[6] = {"_traj.hdr", "_traj.cfl", "_ksp.hdr", "_ksp.cfl", "_sens.hdr", "_sens.cfl"};
    for (int i = 0; i < (ks->sens ? 6 : 4) && st == MR_OK; i++) {
        char a[4300], b[4300];
        snprintf(a, sizeof a, "%s%s", staged, parts[i]);
        snprintf(b, sizeof b, "%s%s", final, parts[i]);
        st = stage_add(stg, a, b);
    }
    return st;
}

typedef struct {
    char *name;
    int64_t matrix[3], samples, coils;
    int maps;
} written;

static void describe(const written *w, int bart, const mr_volume_info *vi, int v)
{
    printf("%s%s: %lldx%lldx%lld, %lld samples x %lld coil(s)%s", w->name,
           bart ? (w->maps ? "_{traj,ksp,sens}.{hdr,cfl}" : "_{traj,ksp}.{hdr,cfl}") : "", (long long)w->matrix[0],
           (long long)w->matrix[1], (long long)w->matrix[2], (long long)w->samples, (long long)w->coils,
           w->maps ? " with coil maps" : "");
    if (vi) {
        printf(", volume %d (encoding %d, slice %d, contrast %d, phase %d, repetition %d, set %d", v, vi->encoding,
               vi->slice, vi->contrast, vi->phase, vi->repetition, vi->set);
        if (vi->average >= 0)
            printf(", average %d", vi->average);
        printf(")");
    }
    printf("\n");
}

/* convert IMAGE OUT: one image to one format, named as recon/api/image_file.h says. */
static int convert_image(const mr_cmd_spec *spec, const char *in_path, const char *out, const char *to,
                         const char *nifti)
{
    mr_image_format f;
    if (mr_image_file_format(to, out, &f) != MR_OK)
        return mr_opts_usage(spec, "%s", mr_last_error());
    if (nifti && f != MR_IMAGE_NIFTI)
        return mr_opts_usage(spec, "--nifti %s applies to NIfTI output; %s is written as %s", nifti, out,
                             mr_image_format_name(f));
    if (f == MR_IMAGE_DICOM && !mr_dicom_available())
        return mr_opts_usage(spec, "%s", MR_IMAGE_FILE_NO_DICOM);
    char target[4200] = "";
    mr_image *im = NULL;
    mr_status st = mr_image_read(in_path, &im);
    mr_image_write_opts o;
    mr_image_write_opts_default(&o);
    o.nifti_complex = nifti && !strcmp(nifti, "complex");
    char desc[64];
    snprintf(desc, sizeof desc, "mrirecon %.40s", im && im->method[0] ? im->method : "convert");
    o.description = desc;
    if (st == MR_OK)
        st = mr_image_file_write(f, out, im, &o, target, sizeof target);
    if (st == MR_OK)
        printf("%s%s: %s image %lldx%lldx%lld%s%s\n", target, f == MR_IMAGE_CFL ? ".{hdr,cfl}" : f == MR_IMAGE_DICOM ? "NNNN.dcm" : "",
               mr_image_format_name(f), (long long)im->matrix[0], (long long)im->matrix[1], (long long)im->matrix[2],
               im->has_geometry ? ", placed with the scan's geometry" : "",
               im->fov_mm[0] > 0 ? "" : " (voxel size unknown: 1 mm)");
    mr_image_free(im);
    if (st != MR_OK) {
        fprintf(stderr, "mrirecon convert: %s\n", mr_last_error());
        return MR_EXIT_FAILURE;
    }
    return fflush(stdout) == 0 && !ferror(stdout) ? MR_EXIT_OK : MR_EXIT_FAILURE;
}

/* Volume v of the input to its staged output `final`, recorded in *w (name, sizes) for the summary. */
static mr_status convert_volume(staging *stg, mr_input *in, const char *in_path, int v, int first, int white, int bart,
                                int bart_scale, const char *final, written *w)
{
    mr_kspace *ks = NULL;
    mr_volume_desc vd;
    mr_status st = mr_volume_read(in, v, white, &ks, &vd);
    if (st != MR_OK)
        return st;
    if (vd.prewhitened && v == first)
        mr_log(MR_LOG_INFO, "convert: coils prewhitened with the noise scans (%lld samples per coil, largest "
                            "correlation %.3f)",
               (long long)vd.noise_samples, vd.noise_max_corr);
    if (mr_input_get_format(in) == MR_INPUT_BART && bart_scale) {
        const double s = 1.0 / sqrt((double)mr_kspace_voxels(ks));
        for (int64_t i = 0; i < 2 * ks->nsamples * ks->ncoils; i++)
            ks->data[i] = (float)(ks->data[i] * s);
    }
    if (!bart && (ks->truth || ks->weights))
        mr_log(MR_LOG_DEBUG, "convert: truth images and weights are kept");
    if (bart && (ks->truth || ks->weights))
        mr_log(MR_LOG_INFO, "convert: BART output holds trajectory, k-space and coil maps only (weights and truth "
                            "images of %s are not converted)",
               in_path);
    st = write_staged(stg, ks, final, bart, bart_scale);
    if (st == MR_OK) {
        w->name = strdup(final);
        memcpy(w->matrix, ks->matrix, sizeof w->matrix);
        w->samples = ks->nsamples;
        w->coils = ks->ncoils;
        w->maps = ks->sens != NULL;
        mr_log(MR_LOG_DEBUG, "convert: volume %d staged for %s", v, final);
    }
    mr_kspace_free(ks);
    return st;
}

/* convert KSPACE OUT: volume `pick` (-1: every volume) of the input to mrirecon HDF5 or BART, every output
 * staged and renamed into place only when all are written; one line per output on stdout. */
static int convert_kspace(const mr_cmd_spec *spec, const char *in_path, const char *out, const mr_read_opts *ro,
                          int white, int pick, int bart, int bart_scale)
{
    mr_input *in = NULL;
    staging stg = {NULL, 0, 0};
    mr_status st = mr_input_open(in_path, ro, &in);
    if (st == MR_OK && bart_scale && !bart && mr_input_get_format(in) != MR_INPUT_BART) {
        mr_input_close(in);
        return mr_opts_usage(spec, "--bart-scale scales data to or from BART; neither %s (%s) nor %s is BART", in_path,
                             mr_input_format_name(mr_input_get_format(in)), out);
    }
    int nvol = st == MR_OK ? mr_input_nvolumes(in) : 0;
    if (st == MR_OK && pick >= nvol)
        st = mr_error(MR_EINVAL, "%s: --volume %d, but the input holds %d volume(s) (0..%d)", in_path, pick, nvol,
                      nvol - 1);
    const int first = pick >= 0 ? pick : 0, last = pick >= 0 ? pick : nvol - 1;
    const int several = pick < 0 && nvol > 1;
    written *names = NULL;
    if (st == MR_OK && !(names = calloc((size_t)nvol, sizeof *names)))
        st = mr_error(MR_ENOMEM, "out of memory");
    for (int v = first; st == MR_OK && v <= last; v++) {
        char final[4200];
        if ((st = volume_name(final, sizeof final, out, bart, v, several)) != MR_OK)
            break;
        st = convert_volume(&stg, in, in_path, v, first, white, bart, bart_scale, final, &names[v]);
    }
    if (st == MR_OK)
        st = stage_commit(&stg);
    else
        stage_discard(&stg);
    for (int v = first; st == MR_OK && v <= last; v++)
        describe(&names[v], bart, mr_input_volume(in, v), v);
    for (int v = 0; names && v < nvol; v++)
        free(names[v].name);
    free(names);
    free(stg.f);
    mr_input_close(in);
    if (st != MR_OK) {
        fprintf(stderr, "mrirecon convert: %s\n", mr_last_error());
        return MR_EXIT_FAILURE;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "mrirecon convert: cannot write to stdout\n");
        return MR_EXIT_FAILURE;
    }
    return MR_EXIT_OK;
}

int mr_cmd_convert(int argc, char **argv)
{
    const char *to = NULL, *volume = "all", *nifti = NULL;
    int bart_scale = 0, verbose = 0, quiet = 0;
    mr_read_cli rc;
    mr_read_cli_init(&rc);
    static const char *const formats[] = {"mrirecon", "bart", "nifti", "mrd", "dicom", "png", NULL};
    static const char *const niftis[] = {"magnitude", "complex", NULL};
    const mr_opt opts[] = {
        {"to", 0, MR_OPT_CHOICE, &to, "F",
         "output format (default by OUT's name: .h5/.hdf5 mrirecon, .nii nifti, .mrd mrd, .png png, .dcm or a folder "
         "dicom, else bart; k-space: mrirecon or bart)",
         formats, 0, -1},
        {"nifti", 0, MR_OPT_CHOICE, &nifti, "K", "NIfTI output of an image: magnitude (float32, default) or complex",
         niftis, 0, -1},
        {"volume", 0, MR_OPT_STRING, &volume, "N|all",
         "which volume of a multi-volume input ('mrirecon info' lists them); all: one output each", NULL, 0, -1},
        {"bart-scale", 0, MR_OPT_FLAG, &bart_scale, NULL,
         "scale the data by sqrt(Nx Ny Nz) to BART's unitary NUFFT (divide when reading BART); not bit-exact", NULL,
         0, -1},
        MR_READ_CLI_OPTS(&rc),
        {"verbose", 'v', MR_OPT_FLAG, &verbose, NULL, "more diagnostics on stderr", NULL, 0, -1},
        {"quiet", 'q', MR_OPT_FLAG, &quiet, NULL, "only warnings and errors on stderr", NULL, 0, -1},
    };
    const mr_cmd_spec spec = {
        "convert",
        "IN OUT",
        "Convert k-space between mrirecon's HDF5 format, ISMRMRD and BART; images to every format.",
        "IN is recognised by its content: mrirecon HDF5 (/kspace), ISMRMRD (/dataset/xml + /dataset/data: a\n"
        "non-Cartesian acquisition with trajectories, possibly several volumes) or a BART pair NAME_traj +\n"
        "NAME_ksp (.hdr/.cfl; give either file or the prefix NAME), with the coil maps NAME_sens when\n"
        "present. OUT is a mrirecon HDF5 file or a BART prefix (OUT_traj and OUT_ksp .hdr/.cfl are written,\n"
        "and OUT_sens, [X Y Z COIL] as 'bart pics' takes it, when the scan has coil maps /kspace/sens). An\n"
        "input with several volumes (slices, contrasts, repetitions, ...) gives one output per volume, named\n"
        "OUT_v000, OUT_v001, ... unless --volume picks one. Multi-coil ISMRMRD data are prewhitened with the\n"
        "noise scans (--prewhiten off keeps them as stored). Trajectories are stored in cycles/FOV and the\n"
        "data unchanged (BART uses the same sign, e^{-i 2 pi k r}; its NUFFT is scaled 1/sqrt(N) where ours\n"
        "is 1/N: images reconstructed by BART are ours / sqrt(Nx Ny Nz) unless --bart-scale). Mapping and\n"
        "units: docs/FORMAT.md.\n"
        "Nothing is written unless every volume converts.\n"
        "Images: IN an image (a reconstruction's image_<method>.h5, an ISMRMRD/MRD image such as Gadgetron\n"
        "writes (its first image), a NIfTI-1 .nii, a BART array [X Y Z] such as 'bart pics' writes) is\n"
        "written to OUT as chosen by --to or OUT's name: our HDF5 image (.h5), NIfTI-1 (.nii), ISMRMRD/MRD\n"
        "image (.mrd), PNG (.png), DICOM (a folder: OUT/IM0001.dcm ..., one MR image per slice; or OUT.dcm:\n"
        "OUT_0001.dcm ...) or BART (OUT.hdr/.cfl). The orientation and the scanner\n"        "placement (when IN has one) are kept: docs/FORMAT.md, Orientation.",
        opts,
        (int)(sizeof opts / sizeof opts[0]),
        2,
        2,
    };
    mr_opts_result res;
    int code = mr_opts_begin(&spec, argc, argv, &res, &verbose, &quiet);
    if (code != MR_OPTS_GO)
        return code;
    const char *in_path = res.positional[0], *out = res.positional[1];
    mr_opts_free(&res); /* res.given stays */
    if (!mr_opts_given(&spec, &res, "traj") && mr_image_probe(in_path)) {
        /* the k-space options have nothing to act on */
        static const char *const kspace_only[] = {"volume", "bart-scale", "traj-units", "traj-sign", "prewhiten",
                                                  "space", "averages", "matrix", "fov", "traj"};
        for (size_t i = 0; i < sizeof kspace_only / sizeof kspace_only[0]; i++)
            if (mr_opts_given(&spec, &res, kspace_only[i]))
                return mr_opts_usage(&spec, "--%s applies to k-space input; %s is an image", kspace_only[i], in_path);
        return convert_image(&spec, in_path, out, to, nifti);
    }
    if (nifti)
        return mr_opts_usage(&spec, "--nifti applies to image input; %s is k-space (reconstruct it: mrirecon recon)",
                             in_path);
    mr_read_opts ro;
    int white = 1;
    if (mr_read_cli_apply(&rc, &ro, &white) != MR_OK)
        return mr_opts_usage(&spec, "%s", mr_last_error());
    int pick = -1;
    if (strcmp(volume, "all") != 0) {
        char *end;
        errno = 0;
        long v = strtol(volume, &end, 10);
        if (errno || end == volume || *end || v < 0 || v > 1000000)
            return mr_opts_usage(&spec, "--volume: '%s' is not 'all' or a volume index >= 0", volume);
        pick = (int)v;
    }
    if (mr_read_cli_check(&spec, &res, &ro, in_path) != MR_OK)
        return mr_opts_usage(&spec, "%s", mr_last_error());
    if (to && strcmp(to, "mrirecon") && strcmp(to, "bart"))
        return mr_opts_usage(&spec, "--to %s writes images; %s is k-space (reconstruct it first: mrirecon recon)", to,
                             in_path);
    if (!to && (ends_with(out, ".mrd") || ends_with(out, ".ismrmrd") || ends_with(out, ".nii") ||
                ends_with(out, ".png") || ends_with(out, ".dcm")))
        return mr_opts_usage(&spec, "%s: an image format, but %s is k-space (mrirecon writes ISMRMRD raw data not at "
                                    "all; reconstruct first: mrirecon recon); give OUT as .h5 (mrirecon) or a BART "
                                    "prefix",
                             out, in_path);
    const int bart = to ? strcmp(to, "bart") == 0 : !(ends_with(out, ".h5") || ends_with(out, ".hdf5"));
    return convert_kspace(&spec, in_path, out, &ro, white, pick, bart, bart_scale);
}
