/* tool_ismrmrd_write IN.h5 OUT.h5 [options]: write the mrirecon scan IN as an ISMRMRD file with
 * libismrmrd's own C API (tests/ismrmrd_testutil.h), for the command-line tests. Exit 77 when built
 * without libismrmrd (the tests then SKIP), 2 on a usage or input error, 1 when writing fails.
 *   --units cycles|normalized|radians|per-m   stored trajectory units (default cycles)
 *   --sign 1|-1                               stored trajectory = sign * k
 *   --readout R                               samples per acquisition (default: the phantom's)
 *   --coils C --ref REF.h5                    C coils (constant complex sensitivities per coil);
 *                                             REF.h5 receives the same multi-coil scan in our format
 *   --noise N --rho R --sigma S               N noise acquisitions, coil mixing rho, sigma per part
 *   --slices S --repetitions R --averages A   copies of the scan (volumes)
 *   --discard PRE,POST                        extra samples around each readout, flagged for discard
 *   --corrupt KIND                            a malformed file (tests/ismrmrd_testutil.h list) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef MR_HAVE_ISMRMRD
int main(void)
{
    fprintf(stderr, "tool_ismrmrd_write: built without libismrmrd\n");
    return 77;
}
#else

#include "io/kspace_h5.h"
#include "ismrmrd_testutil.h"
#include "phantoms/traj.h"

/* test_normal for ism_noise (testutil.c is not linked into tools) */
double test_normal(uint64_t *s)
{
    double u1, u2;
    do {
        *s ^= *s >> 12;
        *s ^= *s << 25;
        *s ^= *s >> 27;
        u1 = (double)((*s * 2685821657736338717ull) >> 11) / 9007199254740992.0;
        *s ^= *s >> 12;
        *s ^= *s << 25;
        *s ^= *s >> 27;
        u2 = (double)((*s * 2685821657736338717ull) >> 11) / 9007199254740992.0;
    } while (u1 <= 0);
    return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: tool_ismrmrd_write IN.h5 OUT.h5 [options]\n");
        return 2;
    }
    ism_opts o;
    ism_opts_default(&o);
    int coils = 1;
    const char *ref = NULL, *corrupt = NULL;
    for (int i = 3; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "tool_ismrmrd_write: %s needs a value\n", a);
            return 2;
        }
        i++;
        if (!strcmp(a, "--units")) {
            if (mr_traj_units_parse(v, &o.units) != MR_OK || o.units == MR_UNITS_AUTO) {
                fprintf(stderr, "tool_ismrmrd_write: bad units %s\n", v);
                return 2;
            }
        } else if (!strcmp(a, "--sign"))
            o.sign = atoi(v) < 0 ? -1 : 1;
        else if (!strcmp(a, "--readout"))
            o.readout = atoll(v);
        else if (!strcmp(a, "--coils"))
            coils = atoi(v);
        else if (!strcmp(a, "--ref"))
            ref = v;
        else if (!strcmp(a, "--noise"))
            o.noise_acqs = atoi(v);
        else if (!strcmp(a, "--rho"))
            o.noise_rho = atof(v);
        else if (!strcmp(a, "--sigma"))
            o.noise_sigma = atof(v);
        else if (!strcmp(a, "--slices"))
            o.slices = atoi(v);
        else if (!strcmp(a, "--repetitions"))
            o.repetitions = atoi(v);
        else if (!strcmp(a, "--averages"))
            o.averages = atoi(v);
        else if (!strcmp(a, "--discard")) {
            if (sscanf(v, "%d,%d", &o.discard_pre, &o.discard_post) != 2) {
                fprintf(stderr, "tool_ismrmrd_write: --discard PRE,POST\n");
                return 2;
            }
        } else if (!strcmp(a, "--corrupt"))
            corrupt = v;
        else {
            fprintf(stderr, "tool_ismrmrd_write: unknown option %s\n", a);
            return 2;
        }
    }
    mr_kspace *one = NULL, *ks = NULL;
    if (mr_kspace_read(argv[1], &one) != MR_OK) {
        fprintf(stderr, "tool_ismrmrd_write: %s\n", mr_last_error());
        return 2;
    }
    if (o.readout == 0) {
        mr_traj_kind k;
        mr_traj_params p;
        if (mr_traj_kind_parse(one->traj_kind, &k) != MR_OK) {
            fprintf(stderr, "tool_ismrmrd_write: give --readout for trajectory '%s'\n", one->traj_kind);
            return 2;
        }
        mr_traj_params_default(&p, k, one->matrix);
        o.readout = p.readout;
    }
    if (coils < 1 || mr_kspace_create(&ks, one->matrix, one->nsamples, coils) != MR_OK) {
        fprintf(stderr, "tool_ismrmrd_write: bad coil count %d\n", coils);
        return 2;
    }
    memcpy(ks->traj, one->traj, (size_t)one->nsamples * 3 * sizeof(float));
    memcpy(ks->fov_mm, one->fov_mm, sizeof ks->fov_mm);
    memcpy(ks->traj_kind, one->traj_kind, sizeof ks->traj_kind);
    for (int c = 0; c < coils; c++) {
        /* coil 0 keeps the data bit for bit */
        const float sr = c ? (float)(cos(0.7 * c) * (1 + 0.1 * c)) : 1.0f, si = c ? (float)sin(0.7 * c) : 0.0f;
        for (int64_t m = 0; m < one->nsamples; m++) {
            const float *d = one->data + 2 * m;
            ks->data[2 * (c * ks->nsamples + m)] = c ? sr * d[0] - si * d[1] : d[0];
            ks->data[2 * (c * ks->nsamples + m) + 1] = c ? sr * d[1] + si * d[0] : d[1];
        }
    }
    if (ref && mr_kspace_write(ref, ks) != MR_OK) {
        fprintf(stderr, "tool_ismrmrd_write: %s\n", mr_last_error());
        return 1;
    }
    int bad = corrupt ? ism_write_corrupt(argv[2], ks, &o, corrupt) : ism_write(argv[2], ks, &o);
    mr_kspace_free(one);
    mr_kspace_free(ks);
    if (bad)
        fprintf(stderr, "tool_ismrmrd_write: writing %s failed\n", argv[2]);
    return bad ? 1 : 0;
}
#endif
