/* mrirecon batch: the two small pictures of each scan for summary.html, made in the scan's child
 * right after its reconstruction: the magnitude of the CG image (or of the first method's image
 * when CG did not run) and the error map |I - I0| against the truth (/truth/image, else
 * /truth/bandlimited). */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../io/fsutil.h"
#include "../../io/image_h5.h"
#include "../../io/image_png.h"
#include "../../io/kspace_h5.h"
#include "../../base/log.h"
#include "batch.h"
#include "../report/plot.h"

#define THUMB_MAX_EDGE 128
#define THUMB_MIN_PANEL 64
/* error maps are shown in the window [0, ERR_WINDOW * max |truth|] */
#define ERR_WINDOW 0.25

/* image_cg.h5 when present, else the first image_*.h5 by name. */
static mr_status pick_image(const char *outdir, char *path, size_t size)
{
    mr_status st = mr_path_join(path, size, outdir, "image_cg.h5");
    if (st != MR_OK)
        return st;
    FILE *f = fopen(path, "rb");
    if (f) {
        fclose(f);
        return MR_OK;
    }
    DIR *d = opendir(outdir);
    if (!d)
        return mr_error(MR_EIO, "batch: cannot read %s", outdir);
    char best[256] = "";
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, "image_", 6) == 0 && n > 9 && strcmp(e->d_name + n - 3, ".h5") == 0 &&
            n < sizeof best && (!best[0] || strcmp(e->d_name, best) < 0))
            memcpy(best, e->d_name, n + 1);
    }
    closedir(d);
    if (!best[0])
        return mr_error(MR_EIO, "batch: no image_*.h5 in %s", outdir);
    return mr_path_join(path, size, outdir, best);
}

/* A 2D image box-averaged down by an integer factor to at most THUMB_MAX_EDGE; a 3D volume as the picture
 * of its three planes through the centre, labelled with plane and index (recon/report/plot.h), each plane at least
 * THUMB_MIN_PANEL pixels (the summary shows it at its width). */
static mr_status thumb_write(const char *path, const float *vol, const int64_t matrix[3], double hi)
{
    float *pix;
    int w, h;
    mr_status st;
    if (matrix[2] > 1) {
        st = mr_plot_volume(vol, matrix, NULL, mr_plot_volume_zoom(matrix, THUMB_MIN_PANEL), 1,
                            (float)(hi > 0 ? hi : 1.0), &pix, &w, &h);
        if (st == MR_OK)
            st = mr_png_write_gray(path, pix, w, h, 0.0, hi > 0 ? hi : 1.0, 8);
        free(pix);
        return st;
    }
    st = mr_volume_montage(vol, matrix, &pix, &w, &h);
    if (st != MR_OK)
        return st;
    int edge = w > h ? w : h;
    int f = (edge + THUMB_MAX_EDGE - 1) / THUMB_MAX_EDGE;
    int tw = w / f, th = h / f;
    if (tw < 1 || th < 1)
        f = 1, tw = w, th = h;
    float *small = malloc((size_t)tw * (size_t)th * sizeof *small);
    if (!small) {
        free(pix);
        return mr_error(MR_ENOMEM, "batch: out of memory for a thumbnail");
    }
    for (int y = 0; y < th; y++)
        for (int x = 0; x < tw; x++) {
            double s = 0;
            for (int dy = 0; dy < f; dy++)
                for (int dx = 0; dx < f; dx++)
                    s += pix[(size_t)(y * f + dy) * (size_t)w + (size_t)(x * f + dx)];
            small[(size_t)y * (size_t)tw + (size_t)x] = (float)(s / (f * f));
        }
    free(pix);
    st = mr_png_write_gray(path, small, tw, th, 0.0, hi > 0 ? hi : 1.0, 8);
    free(small);
    return st;
}

mr_status mr_batch_thumbnails(const char *scan, const char *outdir)
{
    char imgpath[4096], path[4096];
    float *img = NULL, *mag = NULL;
    mr_kspace *ks = NULL;
    int64_t matrix[3];
    mr_status st = pick_image(outdir, imgpath, sizeof imgpath);
    if (st == MR_OK)
        st = mr_image_h5_read(imgpath, &img, matrix);
    if (st != MR_OK)
        return st;
    int64_t n = matrix[0] * matrix[1] * matrix[2];
    mag = malloc((size_t)n * sizeof *mag);
    if (!mag) {
        free(img);
        return mr_error(MR_ENOMEM, "batch: out of memory for %lld voxels", (long long)n);
    }
    double maxmag = 0;
    for (int64_t i = 0; i < n; i++) {
        mag[i] = hypotf(img[2 * i], img[2 * i + 1]);
        if (mag[i] > maxmag)
            maxmag = mag[i];
    }
    /* the truth, when the scan has one of the same size */
    const float *truth = NULL;
    if (mr_kspace_read(scan, &ks) == MR_OK && ks->matrix[0] == matrix[0] && ks->matrix[1] == matrix[1] &&
        ks->matrix[2] == matrix[2])
        truth = ks->truth ? ks->truth : ks->truth_bl;
    mr_clear_error();
    double maxtruth = 0;
    for (int64_t i = 0; truth && i < n; i++)
        if (fabsf(truth[i]) > maxtruth)
            maxtruth = fabsf(truth[i]);
    st = mr_path_join(path, sizeof path, outdir, MR_BATCH_THUMB);
    if (st == MR_OK)
        st = thumb_write(path, mag, matrix, truth ? maxtruth : maxmag);
    if (st == MR_OK && truth) {
        for (int64_t i = 0; i < n; i++)
            mag[i] = hypotf(img[2 * i] - truth[i], img[2 * i + 1]);
        st = mr_path_join(path, sizeof path, outdir, MR_BATCH_ERRMAP);
        if (st == MR_OK)
            st = thumb_write(path, mag, matrix, ERR_WINDOW * maxtruth);
    }
    mr_kspace_free(ks);
    free(mag);
    free(img);
    return st;
}
