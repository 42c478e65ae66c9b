/* What every fuzz target shares (fuzz_target.h). */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "fuzz_target.h"

void mr_fuzz_require(int cond, const char *what)
{
    if (cond)
        return;
    fprintf(stderr, "fuzz target: broken promise: %s (last message: %s)\n", what, mr_last_error());
    abort();
}

void mr_fuzz_after(int st)
{
    /* everything the reader opened must be closed again, on success and on failure */
    mr_fuzz_require(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) == 0, "an HDF5 object is left open");
    if (st != MR_OK) {
        const char *msg = mr_last_error();
        mr_fuzz_require(msg[0] != '\0', "a refusal without a message");
        mr_fuzz_require(strstr(msg, MR_FUZZ_INPUT_NAME) != NULL, "a refusal whose message does not name the file");
    }
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
