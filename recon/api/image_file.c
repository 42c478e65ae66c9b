/* recon/api/image_file.h: an image to a file named as convert names it. */
#include "image_file.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../io/fsutil.h"
#include "../report/outputs.h"

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

mr_status mr_image_file_format(const char *to, const char *out, mr_image_format *f)
{
    static const struct {
        const char *to;
        mr_image_format f;
    } names[] = {{"mrirecon", MR_IMAGE_H5}, {"bart", MR_IMAGE_CFL}, {"nifti", MR_IMAGE_NIFTI},
                 {"mrd", MR_IMAGE_MRD},     {"dicom", MR_IMAGE_DICOM}, {"png", MR_IMAGE_PNG}};
    if (to) {
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (!strcmp(to, names[i].to)) {
                *f = names[i].f;
                return MR_OK;
            }
        for (int k = 0; k < MR_IMAGE_FORMATS; k++)
            if (!strcmp(to, mr_image_format_name((mr_image_format)k))) {
                *f = (mr_image_format)k;
                return MR_OK;
            }
        return mr_error(MR_EINVAL, "image format '%s' is not one of mrirecon (h5), bart (cfl), nifti, mrd, dicom, png",
                        to);
    }
    struct stat sb;
    if (ends_with(out, ".h5") || ends_with(out, ".hdf5"))
        *f = MR_IMAGE_H5;
    else if (ends_with(out, ".nii"))
        *f = MR_IMAGE_NIFTI;
    else if (ends_with(out, ".mrd") || ends_with(out, ".ismrmrd"))
        *f = MR_IMAGE_MRD;
    else if (ends_with(out, ".png"))
        *f = MR_IMAGE_PNG;
    else if (ends_with(out, ".dcm") || ends_with(out, "/") || (stat(out, &sb) == 0 && S_ISDIR(sb.st_mode)))
        *f = MR_IMAGE_DICOM;
    else
        *f = MR_IMAGE_CFL;
    return MR_OK;
}

/* The name the writer gets: BART without .hdr/.cfl, DICOM a file prefix (the folder created). */
static mr_status target_name(mr_image_format f, const char *out, char *target, size_t size)
{
    if ((size_t)snprintf(target, size, "%s", out) >= size)
        return mr_error(MR_EINVAL, "%s: path too long", out);
    if (f == MR_IMAGE_CFL) {
        const size_t n = strlen(target);
        if (n > 4 && (ends_with(target, ".hdr") || ends_with(target, ".cfl")))
            target[n - 4] = '\0';
    }
    if (f != MR_IMAGE_DICOM)
        return MR_OK;
    if (!mr_dicom_available())
        return mr_error(MR_ENOTSUP, "%s", MR_IMAGE_FILE_NO_DICOM);
    size_t n = strlen(target);
    if (ends_with(out, ".dcm")) {
        target[n - 4] = '\0';
        n -= 4;
        if (n + 2 > size)
            return mr_error(MR_EINVAL, "%s: path too long", out);
        strcat(target, "_");
        return MR_OK;
    }
    mr_status st = mr_mkdir_p(out);
    if (st != MR_OK)
        return st;
    while (n > 1 && target[n - 1] == '/')
        target[--n] = '\0';
    if (n + 4 > size)
        return mr_error(MR_EINVAL, "%s: path too long", out);
    strcat(target, "/IM");
    return MR_OK;
}

mr_status mr_image_file_write(mr_image_format f, const char *out, const mr_image *im, const mr_image_write_opts *o,
                              char *target, size_t size)
{
    char name[4200];
    mr_status st = target_name(f, out, name, sizeof name);
    if (st != MR_OK)
        return st;
    if (target)
        snprintf(target, size, "%s", name);
    if (f != MR_IMAGE_PNG)
        return mr_image_write(f, name, im, o);
    /* the picture recon draws: 3D labelled planes */
    const int64_t n = im->matrix[0] * im->matrix[1] * im->matrix[2];
    float *mag = malloc((size_t)n * sizeof *mag);
    if (!mag)
        return mr_error(MR_ENOMEM, "%s: out of memory for a %lld-voxel picture", out, (long long)n);
    for (int64_t v = 0; v < n; v++)
        mag[v] = hypotf(im->data[2 * v], im->data[2 * v + 1]);
    const double hi = o && o->window_hi > o->window_lo ? o->window_hi : 0;
    st = mr_outputs_picture(name, mag, im->matrix, NULL, hi);
    free(mag);
    return st;
}
