/* One fuzz target = one reader of user files, fed a whole HDF5 file from memory through HDF5's core
 * driver (mr_h5_open_memory). Each tests/fuzz/fuzz_<reader>.c is built two ways (CMakeLists.txt,
 * the block at the end; docs/FUZZING.md):
 *  - fuzz_<reader>: with libFuzzer (MR_FUZZ=ON, clang, scripts/fuzz.sh), which calls
 *    LLVMFuzzerTestOneInput;
 *  - fuzz_<reader>_replay: with fuzz_driver.c, a plain program that replays files and
 *    directories through the same function (ctest runs it over the seed corpus and
 *    tests/fuzz/regress/<reader>, so that a build without clang still exercises every target),
 *    or, after --isolated, through the public reader (tests/fuzz/regress/<reader>-libhdf5).
 * A target aborts when the reader breaks one of its promises (a failure must leave no output,
 * name the input in its message and leave no HDF5 object open; an accepted file must hold only
 * values the reader promises), so libFuzzer and the replay both report it as a crash. */
#ifndef MR_FUZZ_TARGET_H
#define MR_FUZZ_TARGET_H

#include <stddef.h>
#include <stdint.h>

#include <hdf5.h>

#include "io/kspace.h"

/* The name the input is given in messages. */
#define MR_FUZZ_INPUT_NAME "fuzz-input.h5"

/* Run the target's reader on data[size]: 1 when it accepts the file, 0 when it refuses it. */
int mr_fuzz_one(const uint8_t *data, size_t size);

/* The public reader on the file at path (with its child-process isolation, mr_h5_read_in_child):
 * 1 accepted, 0 refused. For inputs that crash libhdf5 itself (tests/fuzz/regress/<reader>-libhdf5). */
int mr_fuzz_file(const char *path);

/* Close the file the target opened from memory (mr_h5_close) and remember it: a file libhdf5 then
 * cannot close is reported as libhdf5's fault by mr_fuzz_after, not as a broken promise. */
void mr_fuzz_close_file(hid_t *file);

/* abort() with a message when cond is false. */
void mr_fuzz_require(int cond, const char *what);

/* The checks every target makes after the reader returned st: no HDF5 object may stay open, and a
 * refusal must name the input in a non-empty message. */
void mr_fuzz_after(int st);
/* The second half of that: a refusal names the input in a non-empty message. */
void mr_fuzz_message(int st);

/* The promises every accepted scan keeps, whichever reader made it (sizes within the limits, every
 * value finite and read, weights >= 0, strings terminated); abort() when one is broken. */
void mr_fuzz_check_kspace(const mr_kspace *ks);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
