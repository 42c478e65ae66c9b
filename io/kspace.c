#include "kspace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/child.h"
#include "../base/memory.h"
#include "h5util.h"

static void *zalloc(size_t n, size_t size)
{
    return calloc(n ? n : 1, size);
}

mr_status mr_kspace_create(mr_kspace **out, const int64_t matrix[3], int64_t nsamples, int64_t ncoils)
{
    *out = NULL;
    mr_status st = mr_matrix_check(matrix, "k-space");
    if (st != MR_OK)
        return st;
    if (nsamples < 1 || nsamples > MR_MAX_SAMPLES)
        return mr_error(MR_EINVAL, "k-space: %lld samples is outside 1..%lld", (long long)nsamples,
                        (long long)MR_MAX_SAMPLES);
    if (ncoils < 1 || ncoils > MR_MAX_COILS)
        return mr_error(MR_EINVAL, "k-space: %lld coils is outside 1..%d", (long long)ncoils, MR_MAX_COILS);
    const uint64_t bytes = (uint64_t)nsamples * (3 + 2 * (uint64_t)ncoils) * sizeof(float);
    char what[96];
    snprintf(what, sizeof what, "k-space of %lld samples x %lld coils", (long long)nsamples, (long long)ncoils);
    if ((st = mr_mem_check(bytes, what)) != MR_OK)
        return st;
    mr_child_memory_allow((int64_t)bytes); /* sizes a reader has checked against its file */
    mr_kspace *ks = zalloc(1, sizeof *ks);
    if (!ks)
        return mr_error(MR_ENOMEM, "k-space: out of memory");
    memcpy(ks->matrix, matrix, sizeof ks->matrix);
    ks->nsamples = nsamples;
    ks->ncoils = ncoils;
    ks->noise_sigma = -1.0;
    ks->traj = zalloc((size_t)nsamples * 3, sizeof(float));
    ks->data = zalloc((size_t)(ncoils * nsamples) * 2, sizeof(float));
    if (!ks->traj || !ks->data) {
        mr_kspace_free(ks);
        return mr_error(MR_ENOMEM, "k-space: out of memory for %lld samples x %lld coils", (long long)nsamples,
                        (long long)ncoils);
    }
    *out = ks;
    return MR_OK;
}

/* A large optional array: the memory check, then the child's allowance (base/child.h). */
static mr_status make_room(uint64_t bytes, const char *what)
{
    mr_status st = mr_mem_check(bytes, what);
    if (st == MR_OK)
        mr_child_memory_allow((int64_t)bytes);
    return st;
}

mr_status mr_kspace_alloc_weights(mr_kspace *ks)
{
    if (!ks->weights)
        ks->weights = zalloc((size_t)ks->nsamples, sizeof(float));
    return ks->weights ? MR_OK : mr_error(MR_ENOMEM, "k-space: out of memory for weights");
}

mr_status mr_kspace_alloc_truth(mr_kspace *ks)
{
    size_t n = (size_t)mr_kspace_voxels(ks);
    mr_status st = make_room(2 * n * sizeof(float), "truth images");
    if (st != MR_OK)
        return st;
    if (!ks->truth)
        ks->truth = zalloc(n, sizeof(float));
    if (!ks->truth_bl)
        ks->truth_bl = zalloc(n, sizeof(float));
    return (ks->truth && ks->truth_bl) ? MR_OK : mr_error(MR_ENOMEM, "k-space: out of memory for truth images");
}

mr_status mr_kspace_alloc_sens(mr_kspace *ks)
{
    mr_status st = make_room((uint64_t)(ks->ncoils * mr_kspace_voxels(ks)) * 2 * sizeof(float), "coil maps");
    if (st != MR_OK)
        return st;
    if (!ks->sens)
        ks->sens = zalloc((size_t)(ks->ncoils * mr_kspace_voxels(ks)) * 2, sizeof(float));
    return ks->sens ? MR_OK : mr_error(MR_ENOMEM, "k-space: out of memory for %lld coil maps", (long long)ks->ncoils);
}

mr_status mr_kspace_alloc_time(mr_kspace *ks)
{
    if (!ks->time)
        ks->time = zalloc((size_t)ks->nsamples, sizeof(float));
    return ks->time ? MR_OK : mr_error(MR_ENOMEM, "k-space: out of memory for %lld readout times", (long long)ks->nsamples);
}

mr_status mr_kspace_alloc_fieldmap(mr_kspace *ks)
{
    if (!ks->fieldmap)
        ks->fieldmap = zalloc((size_t)mr_kspace_voxels(ks), sizeof(float));
    return ks->fieldmap ? MR_OK : mr_error(MR_ENOMEM, "k-space: out of memory for the field map");
}

int64_t mr_kspace_count_outside(const mr_kspace *ks, double *worst)
{
    int64_t n = 0;
    double w = 0.0;
    for (int64_t i = 0; i < ks->nsamples; i++) {
        int out = 0;
        for (int a = 0; a < 3; a++) {
            double r = fabs((double)ks->traj[3 * i + a]) / (0.5 * (double)ks->matrix[a]);
            out |= r > 1 + 1e-6; /* float rounding of samples placed exactly on the edge */
            w = r > w ? r : w;
        }
        n += out;
    }
    if (worst)
        *worst = w;
    return n;
}

void mr_kspace_free(mr_kspace *ks)
{
    if (!ks)
        return;
    free(ks->traj);
    free(ks->data);
    free(ks->weights);
    free(ks->truth);
    free(ks->truth_bl);
    free(ks->sens);
    free(ks->time);
    free(ks->fieldmap);
    free(ks);
}

double mr_kspace_sens_rss(const mr_kspace *ks, int64_t v)
{
    const int64_t n = mr_kspace_voxels(ks);
    double s2 = 0;
    for (int64_t c = 0; c < ks->ncoils; c++) {
        const float *p = ks->sens + 2 * (c * n + v);
        s2 += (double)p[0] * p[0] + (double)p[1] * p[1];
    }
    return sqrt(s2);
}

/* ---- a scan through a pipe ------------------------------------------------------------------------ */

#define WIRE_MAGIC 0x4b53524du /* "MRSK" */
enum { HAVE_WEIGHTS = 1, HAVE_TRUTH = 2, HAVE_TRUTH_BL = 4, HAVE_SENS = 8, HAVE_TIME = 16, HAVE_FIELDMAP = 32 };
#define WIRE_ARRAYS 8

typedef struct {
    uint32_t magic, have;
    int64_t matrix[3], nsamples, ncoils;
    float fov_mm[3];
    uint32_t pad;
    double noise_sigma, snr_db;
    uint64_t noise_seed;
    char traj_kind[64], phantom[64];
} wire_head;

/* The arrays in the order they travel: pointer, floats, the `have` bit (0: always there). */
typedef struct {
    float **p;
    size_t n;
    unsigned bit;
    const char *name; /* the dataset of a mrirecon k-space file (io/kspace_h5.c) */
} wire_array;

static int wire_arrays(mr_kspace *ks, wire_array a[WIRE_ARRAYS])
{
    const size_t m = (size_t)ks->nsamples, c = (size_t)ks->ncoils, v = (size_t)mr_kspace_voxels(ks);
    const wire_array all[WIRE_ARRAYS] = {
        {&ks->traj, 3 * m, 0, "/kspace/traj"},
        {&ks->data, 2 * m * c, 0, "/kspace/data"},
        {&ks->weights, m, HAVE_WEIGHTS, "/kspace/weights"},
        {&ks->truth, v, HAVE_TRUTH, "/truth/image"},
        {&ks->truth_bl, v, HAVE_TRUTH_BL, "/truth/bandlimited"},
        {&ks->sens, 2 * c * v, HAVE_SENS, "/kspace/sens"},
        {&ks->time, m, HAVE_TIME, "/kspace/time"},
        {&ks->fieldmap, v, HAVE_FIELDMAP, "/kspace/fieldmap"},
    };
    memcpy(a, all, sizeof all);
    return WIRE_ARRAYS;
}

/* Before each array: its values follow, or the plan to read them from the file (io/h5util.h). */
enum { ARRAY_VALUES = 1, ARRAY_PLAN = 2 };

mr_status mr_kspace_send(int fd, mr_kspace *ks)
{
    wire_head h;
    memset(&h, 0, sizeof h);
    h.magic = WIRE_MAGIC;
    h.have = (ks->weights ? HAVE_WEIGHTS : 0) | (ks->truth ? HAVE_TRUTH : 0) | (ks->truth_bl ? HAVE_TRUTH_BL : 0) |
             (ks->sens ? HAVE_SENS : 0) | (ks->time ? HAVE_TIME : 0) | (ks->fieldmap ? HAVE_FIELDMAP : 0);
    memcpy(h.matrix, ks->matrix, sizeof h.matrix);
    h.nsamples = ks->nsamples;
    h.ncoils = ks->ncoils;
    memcpy(h.fov_mm, ks->fov_mm, sizeof h.fov_mm);
    h.noise_sigma = ks->noise_sigma;
    h.snr_db = ks->snr_db;
    h.noise_seed = ks->noise_seed;
    memcpy(h.traj_kind, ks->traj_kind, sizeof h.traj_kind);
    memcpy(h.phantom, ks->phantom, sizeof h.phantom);
    mr_status st = mr_pipe_put(fd, &h, sizeof h);
    wire_array a[WIRE_ARRAYS];
    const int n = wire_arrays(ks, a);
    for (int i = 0; i < n; i++) {
        if (st == MR_OK && *a[i].p) {
            const int32_t tag = mr_h5_deferred(*a[i].p) ? ARRAY_PLAN : ARRAY_VALUES;
            st = mr_pipe_put(fd, &tag, sizeof tag);
            if (st == MR_OK)
                st = tag == ARRAY_PLAN ? mr_h5_send_plan(fd, *a[i].p) : mr_pipe_put(fd, *a[i].p, a[i].n * sizeof(float));
        }
        free(*a[i].p); /* sent: this process no longer holds it while the other one fills its copy */
        *a[i].p = NULL;
    }
    mr_kspace_free(ks);
    return st;
}

static int64_t first_nonfinite(const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return (int64_t)i;
    return -1;
}

mr_status mr_kspace_recv(int fd, int file_fd, const char *label, mr_kspace **out)
{
    *out = NULL;
    wire_head h;
    mr_status st = mr_pipe_get(fd, &h, sizeof h);
    if (st != MR_OK)
        return st;
    if (h.magic != WIRE_MAGIC || !memchr(h.traj_kind, 0, sizeof h.traj_kind) || !memchr(h.phantom, 0, sizeof h.phantom))
        return mr_error(MR_EINTERNAL, "%s: the reading process sent a damaged scan header", label);
    mr_kspace *ks = NULL;
    if ((st = mr_kspace_create(&ks, h.matrix, h.nsamples, h.ncoils)) != MR_OK)
        return st;
    memcpy(ks->fov_mm, h.fov_mm, sizeof ks->fov_mm);
    ks->noise_sigma = h.noise_sigma;
    ks->snr_db = h.snr_db;
    ks->noise_seed = h.noise_seed;
    memcpy(ks->traj_kind, h.traj_kind, sizeof ks->traj_kind);
    memcpy(ks->phantom, h.phantom, sizeof ks->phantom);
    wire_array a[WIRE_ARRAYS];
    const int n = wire_arrays(ks, a);
    for (int i = 0; st == MR_OK && i < n; i++) {
        if (a[i].bit && !(h.have & a[i].bit))
            continue;
        if (a[i].bit == HAVE_WEIGHTS)
            st = mr_kspace_alloc_weights(ks);
        else if (a[i].bit == HAVE_TRUTH || a[i].bit == HAVE_TRUTH_BL)
            st = *a[i].p ? MR_OK : mr_kspace_alloc_truth(ks);
        else if (a[i].bit == HAVE_SENS)
            st = mr_kspace_alloc_sens(ks);
        else if (a[i].bit == HAVE_TIME)
            st = mr_kspace_alloc_time(ks);
        else if (a[i].bit == HAVE_FIELDMAP)
            st = mr_kspace_alloc_fieldmap(ks);
        int32_t tag = 0;
        if (st == MR_OK && (st = mr_pipe_get(fd, &tag, sizeof tag)) == MR_OK && tag != ARRAY_VALUES &&
            (tag != ARRAY_PLAN || file_fd < 0))
            st = mr_error(MR_EINTERNAL, "%s: the reading process sent a damaged scan", label);
        if (st == MR_OK && tag == ARRAY_PLAN) /* read here, through this process's descriptor, and checked */
            st = mr_h5_recv_plan(fd, file_fd, label, a[i].name, *a[i].p, a[i].n);
        else if (st == MR_OK)
            st = mr_pipe_get(fd, *a[i].p, a[i].n * sizeof(float));
        /* the reader's promise, checked again on this side: every value finite, weights >= 0 */
        const int64_t bad = st == MR_OK && tag == ARRAY_VALUES ? first_nonfinite(*a[i].p, a[i].n) : -1;
        if (bad >= 0)
            st = mr_error(MR_EINTERNAL, "%s: the reading process sent a non-finite %s value at %lld", label, a[i].name,
                          (long long)bad);
    }
    if (st == MR_OK && !(h.have & HAVE_TRUTH_BL)) { /* truth without the band-limited one (or the reverse) */
        free(ks->truth_bl);
        ks->truth_bl = NULL;
    }
    if (st == MR_OK && !(h.have & HAVE_TRUTH)) {
        free(ks->truth);
        ks->truth = NULL;
    }
    for (int64_t i = 0; st == MR_OK && ks->weights && i < ks->nsamples; i++)
        if (ks->weights[i] < 0)
            st = mr_error(MR_EFORMAT, "%s: /kspace/weights: negative weight %g at [%lld]", label, (double)ks->weights[i],
                          (long long)i);
    if (st != MR_OK) {
        mr_kspace_free(ks);
        return st;
    }
    *out = ks;
    return MR_OK;
}
