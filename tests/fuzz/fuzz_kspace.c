/* Fuzz target: the k-space reader (io/kspace_h5.c, mr_kspace_read_file) on a whole file. */
#include <string.h>

#include "fuzz_target.h"
#include "io/h5util.h"
#include "io/kspace_h5.h"

int mr_fuzz_one(const uint8_t *data, size_t size)
{
    static int sentinel;
    mr_kspace *ks = (mr_kspace *)&sentinel;
    hid_t file;
    mr_clear_error();
    mr_status st = mr_h5_open_memory(data, size, MR_FUZZ_INPUT_NAME, &file);
    if (st == MR_OK) {
        st = mr_kspace_read_file(file, MR_FUZZ_INPUT_NAME, &ks);
        mr_fuzz_close_file(&file);
    } else {
        ks = NULL;
    }
    mr_fuzz_after(st);
    if (st != MR_OK) {
        mr_fuzz_require(ks == NULL, "the output is not NULL after a refusal");
        return 0;
    }
    mr_fuzz_check_kspace(ks);
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
