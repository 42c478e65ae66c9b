#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/status.h"

int test_failures = 0;
int test_checks = 0;

void test_check_le(const char *file, int line, const char *what, double value, double bound)
{
    test_checks++;
    int ok = value <= bound; /* NaN fails */
    fprintf(ok ? stdout : stderr, "%s:%d: %s: %s = %.6g (bound <= %.6g)\n", file, line, ok ? "ok" : "FAIL", what,
            value, bound);
    if (!ok)
        test_failures++;
}

void test_check_ge(const char *file, int line, const char *what, double value, double bound)
{
    test_checks++;
    int ok = value >= bound;
    fprintf(ok ? stdout : stderr, "%s:%d: %s: %s = %.6g (bound >= %.6g)\n", file, line, ok ? "ok" : "FAIL", what,
            value, bound);
    if (!ok)
        test_failures++;
}

void test_check_ok(const char *file, int line, const char *expr, int status)
{
    test_checks++;
    if (status != MR_OK) {
        test_failures++;
        fprintf(stderr, "%s:%d: FAIL: %s returned %s: %s\n", file, line, expr, mr_strerror((mr_status)status),
                mr_last_error());
    }
}

int test_finish(const char *name)
{
    if (test_checks == 0) {
        fprintf(stderr, "%s: no checks were made\n", name);
        return 1;
    }
    printf("%s: %d checks, %d failed\n", name, test_checks, test_failures);
    return test_failures ? 1 : 0;
}

uint64_t test_seed(void)
{
    const char *env = getenv("MR_TEST_SEED");
    uint64_t s = env ? strtoull(env, NULL, 10) : ((uint64_t)time(NULL) * 2654435761u) ^ (uint64_t)getpid();
    if (s == 0)
        s = 1;
    printf("seed %llu (replay with MR_TEST_SEED=%llu)\n", (unsigned long long)s, (unsigned long long)s);
    return s;
}

double test_uniform(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return (double)((x * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0);
}

double test_normal(uint64_t *state)
{
    double u1 = test_uniform(state), u2 = test_uniform(state);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

double test_rel_l2(const float *a, const double *b, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = (double)a[i] - b[i];
        num += d * d;
        den += b[i] * b[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

double test_rel_l2_dd(const double *a, const double *b, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        num += (a[i] - b[i]) * (a[i] - b[i]);
        den += b[i] * b[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

const char *test_tmpdir(const char *name)
{
    static char buf[512];
    if (buf[0]) /* made once per process */
        return buf;
    /* a new directory every time (mkdtemp): a folder left by a killed run whose pid comes round again
     * must not be reused (batch_sched then found its output folder "not empty") */
    const char *base = getenv("TMPDIR");
    snprintf(buf, sizeof buf, "%s/mrtest-%s-%ld-XXXXXX", base ? base : "/tmp", name, (long)getpid());
    if (!mkdtemp(buf)) {
        snprintf(buf, sizeof buf, "%s/mrtest-%s-%ld", base ? base : "/tmp", name, (long)getpid());
        mkdir(buf, 0777);
    }
    return buf;
}

mr_kspace *test_phantom_scan(mr_traj_kind kind, const int64_t matrix[3], int64_t spokes, int64_t readout)
{
    mr_scan_params sp;
    mr_scan_params_default(&sp);
    mr_traj_params_default(&sp.traj, kind, matrix);
    sp.traj.spokes = spokes;
    sp.traj.readout = readout;
    sp.noise = 1; /* a realistic scan: 30 dB SNR */
    sp.snr_db = 30.0;
    sp.truth = 0;
    mr_kspace *ks = NULL;
    CHECK_OK(mr_scan_simulate(&sp, &ks));
    return ks;
}
