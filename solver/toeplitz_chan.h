/* One value of T. Chan's circulant of the Toeplitz normal of Q (solver/toeplitz.h), written once for the host
 * (solver/toeplitz.c) and the device (gpu/toeplitz.cu):
 *
 *   c[m] = sum over s in {0,1}^3 of prod_a w_a Q(m - s N),  w_a = (N_a - m_a) / N_a for s_a = 0, m_a / N_a for
 *   s_a = 1 (m_a in [0, N_a)),
 *
 * in double. Q grid index i sits at offset i - N_a (mr_grid_q), so offset m_a is index m_a + N_a and offset
 * m_a - N_a is index m_a; an axis with N_a = 1 has one Q point (s_a = 1 contributes nothing). */
#ifndef MR_TOEPLITZ_CHAN_H
#define MR_TOEPLITZ_CHAN_H

#ifdef __CUDACC__
#define MR_CHAN_FN static inline __host__ __device__
#else
#define MR_CHAN_FN static inline
#endif

/* n: the image grid, p: the Q grid (2 N_a, or 1), q: [p2][p1][p0][2], m: the voxel; c: its value [2]. */
MR_CHAN_FN void mr_toeplitz_chan(const long long n[3], const long long p[3], const float *q, const long long m[3],
                                 double c[2])
{
    c[0] = c[1] = 0;
    for (int sel = 0; sel < 8; sel++) {
        double w = 1;
        long long src[3];
        for (int a = 0; a < 3; a++) {
            const int s = (sel >> a) & 1;
            if (n[a] == 1) {
                w = s ? 0.0 : w;
                src[a] = 0;
            } else {
                w *= s ? (double)m[a] / (double)n[a] : (double)(n[a] - m[a]) / (double)n[a];
                src[a] = s ? m[a] : m[a] + n[a];
            }
        }
        if (w == 0)
            continue;
        const float *v = q + 2 * ((src[2] * p[1] + src[1]) * p[0] + src[0]);
        c[0] += w * v[0];
        c[1] += w * v[1];
    }
}

#endif
