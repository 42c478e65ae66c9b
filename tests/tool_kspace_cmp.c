/* tool_kspace_cmp A B [TOL] [-- read options]: compare two k-space inputs of any format (io/input.h;
 * each must hold one volume, or pass "A@N" for volume N): exit 0 when the matrices, sample and coil
 * counts agree, coil maps are in both (bit-identical) or neither, and trajectory and data are
 * bit-identical (TOL absent or 0) or within the relative
 * tolerance max|a - b| / max|b| <= TOL; 1 when they differ (the differences on stderr); 2 when one
 * cannot be read. Read options after "--": units=U sign=-1 (the data as stored: never prewhitened). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/input.h"

static double rel(const float *a, const float *b, int64_t n)
{
    double d = 0, m = 0;
    for (int64_t i = 0; i < n; i++) {
        d = fmax(d, fabs((double)a[i] - b[i]));
        m = fmax(m, fabs((double)b[i]));
    }
    return m > 0 ? d / m : d;
}

static mr_kspace *load(const char *arg, const mr_read_opts *o)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", arg);
    int vol = -1;
    char *at = strrchr(path, '@');
    if (at) {
        vol = atoi(at + 1);
        *at = '\0';
    }
    mr_kspace *ks = NULL;
    if (mr_input_read_path(path, o, vol, &ks) != MR_OK)
        fprintf(stderr, "tool_kspace_cmp: %s\n", mr_last_error());
    return ks;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: tool_kspace_cmp A B [TOL] [-- units=U sign=-1]\n");
        return 2;
    }
    double tol = 0;
    mr_read_opts o;
    mr_read_opts_default(&o);
    int i = 3;
    if (i < argc && strcmp(argv[i], "--") != 0)
        tol = atof(argv[i++]);
    if (i < argc && !strcmp(argv[i], "--"))
        for (i++; i < argc; i++) {
            if (!strncmp(argv[i], "units=", 6))
                mr_traj_units_parse(argv[i] + 6, &o.traj_units);
            else if (!strcmp(argv[i], "sign=-1"))
                o.traj_sign = -1;
        }
    mr_kspace *a = load(argv[1], &o), *b = load(argv[2], &o);
    if (!a || !b) {
        mr_kspace_free(a);
        mr_kspace_free(b);
        return 2;
    }
    int same = memcmp(a->matrix, b->matrix, sizeof a->matrix) == 0 && a->nsamples == b->nsamples &&
               a->ncoils == b->ncoils;
    if (!same)
        fprintf(stderr, "tool_kspace_cmp: shapes differ: %lldx%lldx%lld %lld x %lld vs %lldx%lldx%lld %lld x %lld\n",
                (long long)a->matrix[0], (long long)a->matrix[1], (long long)a->matrix[2], (long long)a->nsamples,
                (long long)a->ncoils, (long long)b->matrix[0], (long long)b->matrix[1], (long long)b->matrix[2],
                (long long)b->nsamples, (long long)b->ncoils);
    if (same) {
        const int64_t nt = 3 * a->nsamples, nd = 2 * a->nsamples * a->ncoils;
        if (tol == 0) {
            int t = memcmp(a->traj, b->traj, (size_t)nt * sizeof(float)) == 0;
            int d = memcmp(a->data, b->data, (size_t)nd * sizeof(float)) == 0;
            if (!t || !d)
                fprintf(stderr, "tool_kspace_cmp: not bit-identical: trajectory %s, data %s (rel. %g, %g)\n",
                        t ? "same" : "differs", d ? "same" : "differs", rel(a->traj, b->traj, nt),
                        rel(a->data, b->data, nd));
            same = t && d;
        } else {
            double rt = rel(a->traj, b->traj, nt), rd = rel(a->data, b->data, nd);
            fprintf(stderr, "tool_kspace_cmp: relative difference trajectory %g, data %g (tolerance %g)\n", rt, rd,
                    tol);
            same = rt <= tol && rd <= tol;
        }
    }
    /* coil maps: both or neither, and then bit-identical (they are never converted or scaled) */
    if (same && (!a->sens != !b->sens)) {
        fprintf(stderr, "tool_kspace_cmp: coil maps in %s only\n", a->sens ? argv[1] : argv[2]);
        same = 0;
    } else if (same && a->sens) {
        const int64_t ns = 2 * mr_kspace_voxels(a) * a->ncoils;
        if (memcmp(a->sens, b->sens, (size_t)ns * sizeof(float)) != 0) {
            fprintf(stderr, "tool_kspace_cmp: coil maps not bit-identical (rel. %g)\n", rel(a->sens, b->sens, ns));
            same = 0;
        }
    }
    mr_kspace_free(a);
    mr_kspace_free(b);
    return same ? 0 : 1;
}
