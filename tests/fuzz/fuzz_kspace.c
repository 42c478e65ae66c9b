/* Fuzz target: the k-space reader (io/kspace_h5.c, mr_kspace_read_file) on a whole file. */
#include <math.h>
#include <string.h>

#include "fuzz_target.h"
#include "io/h5util.h"
#include "io/kspace_h5.h"

/* Every float finite; returns their sum so that each element is touched (ASan checks the bounds). */
static double sum_finite(const float *v, int64_t n, const char *what)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) {
        mr_fuzz_require(isfinite(v[i]), what);
        s += v[i];
    }
    return s;
}

static volatile double sink; /* keeps the sums, so that every value is read */

int mr_fuzz_one(const uint8_t *data, size_t size)
{
    static int sentinel;
    mr_kspace *ks = (mr_kspace *)&sentinel;
    hid_t file;
    mr_clear_error();
    mr_status st = mr_h5_open_memory(data, size, MR_FUZZ_INPUT_NAME, &file);
    if (st == MR_OK) {
        st = mr_kspace_read_file(file, MR_FUZZ_INPUT_NAME, &ks);
        mr_h5_close(&file);
    } else {
        ks = NULL;
    }
    mr_fuzz_after(st);
    if (st != MR_OK) {
        mr_fuzz_require(ks == NULL, "the output is not NULL after a refusal");
        return 0;
    }
    /* the promises of mr_kspace_read (docs/FORMAT.md, validation) */
    mr_fuzz_require(ks != NULL, "accepted without a scan");
    mr_fuzz_require(mr_matrix_check(ks->matrix, "fuzz") == MR_OK, "matrix outside the limits");
    mr_fuzz_require(ks->nsamples >= 1 && ks->nsamples <= MR_MAX_SAMPLES, "sample count outside the limits");
    mr_fuzz_require(ks->ncoils >= 1 && ks->ncoils <= MR_MAX_COILS, "coil count outside the limits");
    const int64_t nvox = mr_kspace_voxels(ks);
    double s = sum_finite(ks->traj, ks->nsamples * 3, "non-finite trajectory");
    s += sum_finite(ks->data, ks->nsamples * ks->ncoils * 2, "non-finite data");
    if (ks->weights) {
        s += sum_finite(ks->weights, ks->nsamples, "non-finite weight");
        for (int64_t i = 0; i < ks->nsamples; i++)
            mr_fuzz_require(ks->weights[i] >= 0, "negative weight");
    }
    if (ks->truth)
        s += sum_finite(ks->truth, nvox, "non-finite truth");
    if (ks->truth_bl)
        s += sum_finite(ks->truth_bl, nvox, "non-finite band-limited truth");
    sink = s;
    for (int a = 0; a < 3; a++)
        mr_fuzz_require(isfinite(ks->fov_mm[a]) && ks->fov_mm[a] >= 0, "fov_mm not finite and >= 0");
    mr_fuzz_require(memchr(ks->traj_kind, 0, sizeof ks->traj_kind) && memchr(ks->phantom, 0, sizeof ks->phantom),
                    "unterminated string");
    mr_fuzz_require(isfinite(ks->noise_sigma) && !isnan(ks->snr_db), "noise attributes not as documented");
    double worst;
    (void)mr_kspace_count_outside(ks, &worst);
    mr_kspace_free(ks);
    return 1;
}

int mr_fuzz_file(const char *path)
{
    mr_kspace *ks = NULL;
    mr_clear_error();
    mr_status st = mr_kspace_read(path, &ks);
    mr_fuzz_require(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) == 0, "an HDF5 object is left open");
    mr_fuzz_require(st == MR_OK ? ks != NULL : ks == NULL && strstr(mr_last_error(), path) != NULL,
                    "the public reader broke its promise");
    mr_kspace_free(ks);
    return st == MR_OK;
}
