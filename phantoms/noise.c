/* Complex Gaussian noise at an SNR (the generator: base/rng.h). */
#include "noise.h"

#include <math.h>

mr_status mr_noise_sigma(const float *data, int64_t m, double snr_db, double *sigma)
{
    if (!isfinite(snr_db))
        return mr_error(MR_EINVAL, "noise: SNR %g dB is not finite", snr_db);
    double p = 0;
    for (int64_t i = 0; i < 2 * m; i++)
        p += (double)data[i] * data[i];
    if (m < 1 || !(p > 0))
        return mr_error(MR_EINVAL, "noise: the data have no power, so an SNR of %g dB is undefined", snr_db);
    p /= (double)m;
    *sigma = sqrt(p / (2.0 * pow(10.0, snr_db / 10.0)));
    return MR_OK;
}

void mr_noise_add(float *data, int64_t m, double sigma, uint64_t seed)
{
    mr_rng r;
    mr_rng_seed(&r, seed, MR_RNG_STREAM_NOISE);
    for (int64_t i = 0; i < m; i++) {
        double g[2];
        mr_rng_normal2(&r, g);
        data[2 * i] = (float)(data[2 * i] + sigma * g[0]);
        data[2 * i + 1] = (float)(data[2 * i + 1] + sigma * g[1]);
    }
}

double mr_noise_measured_snr_db(const float *clean, const float *noisy, int64_t m)
{
    double ps = 0, pn = 0;
    for (int64_t i = 0; i < 2 * m; i++) {
        double d = (double)noisy[i] - clean[i];
        ps += (double)clean[i] * clean[i];
        pn += d * d;
    }
    return 10.0 * log10(ps / pn);
}
