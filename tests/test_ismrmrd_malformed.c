/* Malformed ISMRMRD input: a valid file written by libismrmrd, made invalid in one way each (bad,
 * hostile or inconsistent XML, Cartesian acquisitions, inconsistent channel counts, NaN values,
 * impossible discards, indices beyond the header's limits, stored lengths that disagree with the
 * headers, wrong dataset types, a declared size the file does not store, no imaging data,
 * unidentifiable trajectory units, a singular noise covariance: found by the read stage's
 * prewhitening, recon/pipeline/volumes.h; a dwell time of 3e38 us or -1 us; a stored data length of 0x7fffffff).
 * Each must fail with MR_EFORMAT and one message naming the problem, leaving no output (the handle and
 * scan pointers stay NULL), and no process may take more than a bounded amount of memory doing so.
 * SKIP (77) without libismrmrd. */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "testutil.h"

#ifndef MR_HAVE_ISMRMRD
int main(void)
{
    printf("test_ismrmrd_malformed: SKIP (built without libismrmrd: apt-get install libismrmrd-dev)\n");
    return TEST_SKIP;
}
#else

#include "base/log.h"
#include "io/input.h"
#include "recon/pipeline/volumes.h"
#include "ismrmrd_testutil.h"
#include "phantoms/scan.h"

int main(void)
{
    mr_log_set_level(MR_LOG_ERROR);
    const char *dir = test_tmpdir("ismrmrd_malformed");
    mr_scan_params p;
    mr_scan_params_default(&p);
    const int64_t matrix[3] = {32, 32, 1};
    mr_traj_params_default(&p.traj, MR_TRAJ_RADIAL2D, matrix);
    p.truth = p.weights = 0;
    mr_kspace *one = NULL, *ks = NULL;
    CHECK_OK(mr_scan_simulate(&p, &one));
    if (!one)
        return test_finish("test_ismrmrd_malformed");
    const int64_t C = 3;
    CHECK_OK(mr_kspace_create(&ks, one->matrix, one->nsamples, C));
    memcpy(ks->traj, one->traj, (size_t)one->nsamples * 3 * sizeof(float));
    for (int64_t c = 0; c < C; c++)
        for (int64_t i = 0; i < 2 * one->nsamples; i++)
            ks->data[2 * c * one->nsamples + i] = one->data[i] * (float)(1 + c);
    memcpy(ks->fov_mm, one->fov_mm, sizeof ks->fov_mm);
    snprintf(ks->traj_kind, sizeof ks->traj_kind, "%s", one->traj_kind);
    ism_opts o;
    ism_opts_default(&o);
    o.readout = p.traj.readout;
    o.noise_acqs = 2;

    char path[1200];
    /* the starting point is valid */
    snprintf(path, sizeof path, "%s/valid.h5", dir);
    CHECK(ism_write(path, ks, &o) == 0);
    mr_kspace *got = NULL;
    CHECK_OK(mr_input_read_path(path, NULL, -1, &got));
    mr_kspace_free(got);

    for (int k = 0; k < ISM_NCORRUPTIONS; k++) {
        const ism_corruption *c = &ism_corruptions[k];
        snprintf(path, sizeof path, "%s/%s.h5", dir, c->name);
        int made = ism_write_corrupt(path, ks, &o, c->name) == 0;
        CHECK(made);
        if (!made) {
            fprintf(stderr, "could not make %s\n", c->name);
            continue;
        }
        mr_input *in = NULL;
        mr_kspace *out = NULL;
        mr_status st = mr_input_open(path, NULL, &in);
        for (int v = 0; st == MR_OK && v < mr_input_nvolumes(in); v++) {
            st = mr_volume_read(in, v, 1, &out, NULL); /* the read stage: prewhitening included */
            if (st == MR_OK) {
                mr_kspace_free(out);
                out = NULL;
            }
        }
        mr_input_close(in);
        const char *msg = mr_last_error();
        int ok = st == MR_EFORMAT && out == NULL && strstr(msg, c->expect) != NULL && strstr(msg, path) != NULL &&
                 !strchr(msg, '\n');
        CHECK(ok);
        printf("%s: %s: %s (%s)\n", ok ? "ok" : "FAIL", c->name, msg, mr_strerror(st));
        if (!ok)
            fprintf(stderr, "%s: expected MR_EFORMAT and a message with '%s', got %s: %s\n", c->name, c->expect,
                    mr_strerror(st), msg);
    }
    /* bounded memory: the files are a few tens of KiB; no process of this test (the reading children
       included: the 0x7fffffff data length made libhdf5 allocate and touch 8 GiB there, then here) may have
       held more than a small fixed amount (the sanitizer builds' shadow memory included) */
    struct rusage self, kids;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    CHECK_LE("peak resident memory of this process, MiB", self.ru_maxrss / 1024.0, 512);
    CHECK_LE("peak resident memory of its reading children, MiB", kids.ru_maxrss / 1024.0, 512);
    mr_kspace_free(one);
    mr_kspace_free(ks);
    return test_finish("test_ismrmrd_malformed");
}
#endif
