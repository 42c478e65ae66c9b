/* The reconstruction's NIfTI output and ISMRMRD volumes through the pipeline (mr_recon_run):
 *  1. mrirecon input (2D 64^2 radial, FOV 240 mm): image_cg.nii read back byte by byte (and with
 *     libniftiio where installed): dims, datatype, pixdim = FOV/N, aligned placement, and voxels equal
 *     to image_cg.h5 (|x| as float32, or x bit for bit with --nifti complex); --nifti none writes none;
 *     every method gets its .nii.
 *  2. ISMRMRD (written by libismrmrd's C API; this part SKIPs without it): 2 slices with readout
 *     oversampling (encodedSpace 128 x 64, FOV 500 x 250 mm; reconSpace 64 x 64, 250 x 250 mm). recon
 *     writes OUT/slice000/ and OUT/slice001/ and OUT/metrics.csv; each image is cropped to reconSpace
 *     and equals the centre crop of the same reconstruction of the encoded grid read into our own
 *     format (relative L2 <= 1e-6; measured 0); the NIfTI header has the reconSpace dims and voxel size
 *     and the scanner placement of the slice (position z = 5 mm x slice); --volume 1 writes into OUT
 *     itself, bit-identical to OUT/slice001; --volume 2 is refused naming the count, creating nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/image_h5.h"
#include "io/input.h"
#include "io/kspace_h5.h"
#include "nifti_testutil.h"
#include "recon/pipeline/pipeline.h"
#include "scan_testutil.h"
#include "testutil.h"

#ifdef MR_HAVE_ISMRMRD
#include "ismrmrd_testutil.h"
#endif

static mr_status recon(const char *scan, const char *out, const char *method, const char *nifti, int volume)
{
    mr_recon_opts o;
    mr_recon_opts_default(&o);
    o.method = method;
    o.iters = 10;
    o.nifti = nifti;
    o.volume = volume;
    o.op.device = MR_DEVICE_CPU;
    o.op.threads = 2; /* the same reduction order in every run (the comparisons below are exact) */
    return mr_recon_run(scan, out, &o);
}

static int exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* OUT/name into buf */
static const char *in_dir(char *buf, size_t size, const char *dir, const char *name)
{
    snprintf(buf, size, "%s/%s", dir, name);
    return buf;
}

/* image_<method>.h5 of dir; NULL on failure */
static float *read_image(const char *dir, const char *method, int64_t m[3])
{
    char p[1400], name[64];
    snprintf(name, sizeof name, "image_%s.h5", method);
    float *img = NULL;
    CHECK_OK(mr_image_h5_read(in_dir(p, sizeof p, dir, name), &img, m));
    return img;
}

static void phantom_outputs(const char *dir)
{
    char scan[1100], out[1200], p[1400];
    snprintf(scan, sizeof scan, "%s/sl64.h5", dir);
    mr_kspace *ks = test_radial_scan(64, 101, 128, 0);
    if (!ks)
        return;
    CHECK_OK(mr_kspace_write(scan, ks));
    const float fov[3] = {ks->fov_mm[0], ks->fov_mm[1], ks->fov_mm[2]};
    CHECK(fov[0] == 240.0f && fov[1] == 240.0f);
    mr_kspace_free(ks);
    const char *kinds[2] = {"magnitude", "complex"};
    for (int k = 0; k < 2; k++) {
        snprintf(out, sizeof out, "%s/nifti_%s", dir, kinds[k]);
        CHECK_OK(recon(scan, out, k ? "cg" : "all", kinds[k], -1));
        int64_t m[3];
        float *img = read_image(out, "cg", m);
        if (img) {
            CHECK(m[0] == 64 && m[1] == 64 && m[2] == 1);
            nifti_check_file(in_dir(p, sizeof p, out, "image_cg.nii"), img, m, fov, k, NULL);
        }
        free(img);
    }
    snprintf(out, sizeof out, "%s/nifti_magnitude", dir);
    CHECK(exists(in_dir(p, sizeof p, out, "image_gridding-kb.nii")));
    CHECK(exists(in_dir(p, sizeof p, out, "image_gridding-bilinear.nii")));
    snprintf(out, sizeof out, "%s/nifti_none", dir);
    CHECK_OK(recon(scan, out, "cg", "none", -1));
    CHECK(exists(in_dir(p, sizeof p, out, "image_cg.h5")) && !exists(in_dir(p, sizeof p, out, "image_cg.nii")));
}

#ifdef MR_HAVE_ISMRMRD
static int count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int n = 0, c;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

static void ismrmrd_volumes(const char *dir)
{
    char mrd[1100], out[1200], sub[1300], p[1400];
    snprintf(mrd, sizeof mrd, "%s/oversampled.mrd", dir);
    mr_kspace *ks = test_radial_scan(64, 101, 128, 0);
    if (!ks)
        return;
    for (int a = 0; a < 3; a++)
        ks->fov_mm[a] = 250.0f;
    ism_opts o;
    ism_opts_default(&o);
    o.readout = 128;
    o.oversample = 2;
    o.slices = 2;
    CHECK(ism_write(mrd, ks, &o) == 0);
    mr_kspace_free(ks);

    snprintf(out, sizeof out, "%s/vol", dir);
    CHECK_OK(recon(mrd, out, "cg", "magnitude", -1));
    CHECK(count_lines(in_dir(p, sizeof p, out, "metrics.csv")) == 3);
    FILE *f = fopen(p, "r");
    char head[128] = "";
    if (f) {
        CHECK(fgets(head, sizeof head, f) != NULL);
        fclose(f);
    }
    CHECK(strncmp(head, "volume,method,", 14) == 0);

    mr_input *in = NULL;
    CHECK_OK(mr_input_open(mrd, NULL, &in));
    if (!in)
        return;
    CHECK(mr_input_nvolumes(in) == 2);
    for (int s = 0; s < 2 && s < mr_input_nvolumes(in); s++) {
        const mr_volume_info *vi = mr_input_volume(in, s);
        CHECK(vi->matrix[0] == 128 && vi->matrix[1] == 64 && vi->recon_matrix[0] == 64 && vi->recon_matrix[1] == 64);
        CHECK(vi->geometry.position[2] == 5.0f * (float)s);
        snprintf(sub, sizeof sub, "%s/slice%03d", out, s);
        int64_t m[3];
        float *img = read_image(sub, "cg", m);
        if (!img)
            continue;
        CHECK(m[0] == 64 && m[1] == 64 && m[2] == 1);
        nifti_check_file(in_dir(p, sizeof p, sub, "image_cg.nii"), img, m, vi->recon_fov_mm, 0, &vi->geometry);
        /* the reference: the encoded grid as our own format, reconstructed, then cropped here */
        mr_kspace *enc = NULL;
        char ref[1300], refout[1300];
        snprintf(ref, sizeof ref, "%s/encoded%d.h5", dir, s);
        snprintf(refout, sizeof refout, "%s/encoded%d", dir, s);
        CHECK_OK(mr_input_read(in, s, &enc));
        if (enc)
            CHECK_OK(mr_kspace_write(ref, enc));
        mr_kspace_free(enc);
        CHECK_OK(recon(ref, refout, "cg", "none", -1));
        int64_t mf[3];
        float *full = read_image(refout, "cg", mf);
        if (full) {
            CHECK(mf[0] == 128 && mf[1] == 64);
            float *crop = malloc((size_t)(64 * 64) * 2 * sizeof *crop);
            mr_image_crop_center(full, mf, crop, m);
            double d = 0, b = 0;
            for (int64_t i = 0; i < 2 * 64 * 64; i++) {
                d += ((double)img[i] - crop[i]) * ((double)img[i] - crop[i]);
                b += (double)crop[i] * crop[i];
            }
            printf("slice %d: cropped image vs the crop of the encoded-grid reconstruction: relative L2 %.3g\n", s,
                   sqrt(d / b));
            CHECK_LE("ISMRMRD recon, cropped to reconSpace, vs crop of the encoded-grid recon (relative L2)",
                     sqrt(d / b), 1e-6);
            free(crop);
        }
        free(full);
        free(img);
    }
    mr_input_close(in);

    /* --volume 1: into OUT itself, the same image as OUT/slice001 */
    snprintf(sub, sizeof sub, "%s/one", dir);
    CHECK_OK(recon(mrd, sub, "cg", "magnitude", 1));
    int64_t m1[3], m2[3];
    float *a = read_image(sub, "cg", m1);
    float *b = read_image(in_dir(p, sizeof p, out, "slice001"), "cg", m2);
    CHECK(a && b && memcmp(m1, m2, sizeof m1) == 0 && memcmp(a, b, (size_t)(m1[0] * m1[1] * m1[2]) * 8) == 0);
    CHECK(exists(in_dir(p, sizeof p, sub, "image_cg.nii")) && !exists(in_dir(p, sizeof p, sub, "slice001")));
    free(a);
    free(b);
    snprintf(sub, sizeof sub, "%s/none", dir);
    CHECK(recon(mrd, sub, "cg", "magnitude", 2) == MR_EINVAL);
    CHECK(strstr(mr_last_error(), "--volume 2") != NULL && strstr(mr_last_error(), "holds 2 volume") != NULL);
    printf("message: %s\n", mr_last_error());
    CHECK(!exists(sub));
}
#endif

int main(void)
{
    const char *dir = test_tmpdir("recon_ismrmrd_nifti");
    phantom_outputs(dir);
#ifdef MR_HAVE_ISMRMRD
    ismrmrd_volumes(dir);
#else
    printf("test_recon_ismrmrd_nifti: ISMRMRD part skipped (built without libismrmrd)\n");
#endif
    return test_finish("test_recon_ismrmrd_nifti");
}
