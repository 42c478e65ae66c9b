/* Readout times from ISMRMRD (docs/FORMAT.md 5, "Readout times"): the header's
 * sequenceParameters/TE (ms, one per contrast) and each acquisition's sample_time_us and center_sample
 * give t = TE + (q - center_sample) sample_time_us for its sample q, after discard_pre/post; a header
 * without TE gives no times (and then a field map is refused by io/fieldmap.h). Files are written with
 * libismrmrd's own API (tests/ismrmrd_testutil.h: center_sample = discard_pre + R/2, 2.5 us); SKIP
 * without libismrmrd. Two averages are combined: the times must stay those of one average. */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#ifdef MR_HAVE_ISMRMRD
#include "io/fieldmap.h"
#include "io/input.h"
#include "io/ismrmrd_h5.h"
#include "ismrmrd_testutil.h"

/* Insert `text` before </ismrmrdHeader> of path's XML header. */
static void add_to_header(const char *path, const char *text)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, "/dataset/xml", H5P_DEFAULT);
    hid_t t = H5Dget_type(d);
    char *xml = NULL;
    CHECK(H5Tis_variable_str(t) > 0 && H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, &xml) >= 0 && xml);
    H5Tclose(t);
    H5Dclose(d);
    H5Fclose(f);
    if (!xml)
        return;
    char *end = strstr(xml, "</ismrmrdHeader>");
    CHECK(end != NULL);
    char buf[8192];
    snprintf(buf, sizeof buf, "%.*s%s\n</ismrmrdHeader>\n", (int)(end - xml), xml, text);
    free(xml);
    CHECK(ism_replace_xml(path, buf) == 0);
}

static mr_kspace *read_volume0(const char *path)
{
    mr_read_opts ro;
    mr_read_opts_default(&ro);
    mr_input *in = NULL;
    mr_kspace *ks = NULL;
    CHECK_OK(mr_input_open(path, &ro, &in));
    if (in)
        CHECK_OK(mr_input_read(in, 0, &ks));
    mr_input_close(in);
    return ks;
}

int main(void)
{
    const int64_t matrix[3] = {16, 16, 1};
    mr_scan_params sp;
    mr_scan_params_default(&sp);
    mr_traj_params_default(&sp.traj, MR_TRAJ_RADIAL2D, matrix);
    sp.traj.spokes = 6;
    sp.traj.readout = 20;
    sp.truth = 0;
    mr_kspace *ks = NULL;
    CHECK_OK(mr_scan_simulate(&sp, &ks));
    if (!ks)
        return test_finish("test_ismrmrd_field");
    ism_opts o;
    ism_opts_default(&o);
    o.readout = 20;
    o.discard_pre = 2;
    o.discard_post = 1;
    o.averages = 2;
    char path[1024];
    snprintf(path, sizeof path, "%s/timed.h5", test_tmpdir("ismrmrd_field"));
    CHECK(ism_write(path, ks, &o) == 0);

    /* no TE in the header: no times, and a field map is refused */
    mr_kspace *got = read_volume0(path);
    CHECK(got && !got->time);
    if (got) {
        mr_fieldmap fm = {{16, 16, 1}, {0, 0, 0}, calloc(256, sizeof(float)), "fm.nii"};
        CHECK(mr_fieldmap_attach(got, path, &fm) == MR_EINVAL && strstr(mr_last_error(), "no readout times") &&
              strstr(mr_last_error(), "timed.h5"));
        printf("ISMRMRD without TE + field map -> %s\n", mr_last_error());
        free(fm.hz);
    }
    mr_kspace_free(got);

    /* with TE = 4.5 ms: t = 4.5 ms + (q - center_sample) * 2.5 us, center_sample = discard_pre + 10 */
    add_to_header(path, "  <sequenceParameters><TR>10</TR><TE>4.5</TE><TE>9</TE></sequenceParameters>");
    got = read_volume0(path);
    CHECK(got && got->time && got->nsamples == ks->nsamples); /* the two averages combined */
    if (got && got->time) {
        double worst = 0;
        for (int64_t k = 0; k < got->nsamples; k++) {
            const int64_t q = k % 20 + o.discard_pre; /* the stored sample index */
            worst = fmax(worst, fabs(got->time[k] - (4.5e-3 + (double)(q - (o.discard_pre + 10)) * 2.5e-6)));
        }
        CHECK_LE("ISMRMRD times: max |t - (TE + (q - center_sample) dwell)| (s)", worst, 1e-9);
    }
    mr_kspace_free(got);
    mr_kspace_free(ks);
    return test_finish("test_ismrmrd_field");
}
#else
int main(void)
{
    printf("libismrmrd not found at build time: SKIP\n");
    return TEST_SKIP;
}
#endif
