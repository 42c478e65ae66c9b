/* Minimal test helpers: every check prints what it compared and the values on failure. A test
 * program returns test_finish() (0 pass, 1 fail) or TEST_SKIP (77, ctest SKIP_RETURN_CODE). */
#ifndef MR_TESTUTIL_H
#define MR_TESTUTIL_H

#include <stdint.h>
#include <stdio.h>

#include "phantoms/scan.h"

#define TEST_SKIP 77

extern int test_failures;
extern int test_checks;

#define CHECK(cond)                                                                              \
    do {                                                                                         \
        test_checks++;                                                                           \
        if (!(cond)) {                                                                           \
            test_failures++;                                                                     \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);             \
        }                                                                                        \
    } while (0)

/* Relative/absolute bound: passes when value <= bound; prints both. */
#define CHECK_LE(what, value, bound) test_check_le(__FILE__, __LINE__, what, (double)(value), (double)(bound))
#define CHECK_GE(what, value, bound) test_check_ge(__FILE__, __LINE__, what, (double)(value), (double)(bound))
/* mr_status == MR_OK, printing mr_last_error() otherwise */
#define CHECK_OK(expr) test_check_ok(__FILE__, __LINE__, #expr, (int)(expr))

void test_check_le(const char *file, int line, const char *what, double value, double bound);
void test_check_ge(const char *file, int line, const char *what, double value, double bound);
void test_check_ok(const char *file, int line, const char *expr, int status);
int test_finish(const char *name);

/* Deterministic pseudo-random numbers for tests (xorshift64*), seeded from the time unless
 * MR_TEST_SEED is set; the seed is printed so that a failure can be replayed. */
uint64_t test_seed(void);
double test_uniform(uint64_t *state); /* [0, 1) */
double test_normal(uint64_t *state);

/* Relative L2 error ||a - b|| / ||b|| of float a against double b, n values. */
double test_rel_l2(const float *a, const double *b, int64_t n);
/* The same for two double arrays. */
double test_rel_l2_dd(const double *a, const double *b, int64_t n);
/* A scratch directory unique to this test run, made on the first call (the same one after that):
 * "$TMPDIR/mrtest-<name>-<pid>-XXXXXX" (mkdtemp). */
const char *test_tmpdir(const char *name);

/* A realistic phantom scan for the GPU tests: analytic Shepp-Logan k-space on `kind` with the given
 * spokes and readout, 30 dB noise, no truth images. Owned by the caller (mr_kspace_free); NULL after a
 * failed CHECK. */
mr_kspace *test_phantom_scan(mr_traj_kind kind, const int64_t matrix[3], int64_t spokes, int64_t readout);

#endif
