/* What every fuzz target shares (fuzz_target.h). */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "fuzz_target.h"
#include "io/h5util.h"
#include "io/kspace.h"

void mr_fuzz_require(int cond, const char *what)
{
    if (cond)
        return;
    fprintf(stderr, "fuzz target: broken promise: %s (last message: %s)\n", what, mr_last_error());
    abort();
}

/* The file the target opened from memory, once it has closed it (mr_fuzz_close_file). */
static hid_t closed_file = H5I_INVALID_HID;

void mr_fuzz_close_file(hid_t *file)
{
    closed_file = *file;
    mr_h5_close(file);
}

/* Files still open after the reader returned: the target's own file, closed by mr_fuzz_close_file,
 * is libhdf5's fault when it stays open: its H5Fclose failed (seen with HDF5 1.10.8: a failed H5Dopen2
 * on a damaged object header leaves a pinned metadata-cache entry, "Pinned entry count not
 * decreasing", and a second H5Fclose crashes inside libhdf5). That is reported on a line scripts/fuzz.sh
 * classifies as libhdf5; the public reader never opens such a file in its own process
 * (mr_h5_read_in_child), which the containment replay checks. Any other file is a broken promise. */
static void files_closed(void)
{
    hid_t ids[16];
    const ssize_t n = H5Fget_obj_ids(H5F_OBJ_ALL, H5F_OBJ_FILE, 16, ids);
    for (ssize_t i = 0; i < n; i++)
        mr_fuzz_require(closed_file != H5I_INVALID_HID && ids[i] == closed_file, "a file is left open");
    closed_file = H5I_INVALID_HID;
    if (n > 0) {
        fprintf(stderr, "fuzz target: libhdf5 fault: in H5Fclose: the file cannot be closed after the read (last "
                        "message: %s)\n", mr_last_error());
        abort();
    }
}

void mr_fuzz_after(int st)
{
    /* everything the reader opened must be closed again, on success and on failure */
    mr_fuzz_require(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_DATASET | H5F_OBJ_GROUP | H5F_OBJ_DATATYPE | H5F_OBJ_ATTR) == 0,
                    "an HDF5 object is left open");
    files_closed();
    mr_fuzz_message(st);
}

void mr_fuzz_message(int st)
{
    if (st != MR_OK) {
        const char *msg = mr_last_error();
        mr_fuzz_require(msg[0] != '\0', "a refusal without a message");
        mr_fuzz_require(strstr(msg, MR_FUZZ_INPUT_NAME) != NULL, "a refusal whose message does not name the file");
    }
}

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

void mr_fuzz_check_kspace(const mr_kspace *ks)
{
    /* the promises of the scan readers (docs/FORMAT.md, validation) */
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
    if (ks->sens)
        s += sum_finite(ks->sens, nvox * ks->ncoils * 2, "non-finite coil map");
    sink = s;
    for (int a = 0; a < 3; a++)
        mr_fuzz_require(isfinite(ks->fov_mm[a]) && ks->fov_mm[a] >= 0, "fov_mm not finite and >= 0");
    mr_fuzz_require(memchr(ks->traj_kind, 0, sizeof ks->traj_kind) && memchr(ks->phantom, 0, sizeof ks->phantom),
                    "unterminated string");
    mr_fuzz_require(isfinite(ks->noise_sigma) && !isnan(ks->snr_db), "noise attributes not as documented");
    double worst;
    (void)mr_kspace_count_outside(ks, &worst);
}

/* libFuzzer calls this once. libhdf5 keeps freed blocks on its own free lists and hands them out
 * again, which hides its use-after-free bugs from ASan and makes them depend on earlier inputs;
 * with no free-list memory every block goes back to malloc at once. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    H5set_free_list_limits(0, 0, 0, 0, 0, 0);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mr_fuzz_one(data, size);
    return 0;
}
