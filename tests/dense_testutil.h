/* Dense complex linear algebra for the tests' float64 references (header-only). */
#ifndef MR_DENSE_TESTUTIL_H
#define MR_DENSE_TESTUTIL_H

#include <complex.h>
#include <stdlib.h>
#include <string.h>

/* Solve M x = b (n x n, complex, row-major; M and b unchanged) by Gaussian elimination with partial pivoting. */
static inline void direct_solve(int n, const double complex *M, const double complex *b, double complex *x)
{
    double complex *a = malloc((size_t)n * (n + 1) * sizeof *a);
    for (int i = 0; i < n; i++) {
        memcpy(a + i * (n + 1), M + i * n, (size_t)n * sizeof *a);
        a[i * (n + 1) + n] = b[i];
    }
    for (int c = 0; c < n; c++) {
        int piv = c;
        for (int i = c + 1; i < n; i++)
            if (cabs(a[i * (n + 1) + c]) > cabs(a[piv * (n + 1) + c]))
                piv = i;
        for (int k = 0; k <= n; k++) {
            double complex t = a[c * (n + 1) + k];
            a[c * (n + 1) + k] = a[piv * (n + 1) + k];
            a[piv * (n + 1) + k] = t;
        }
        for (int i = c + 1; i < n; i++) {
            double complex f = a[i * (n + 1) + c] / a[c * (n + 1) + c];
            for (int k = c; k <= n; k++)
                a[i * (n + 1) + k] -= f * a[c * (n + 1) + k];
        }
    }
    for (int i = n - 1; i >= 0; i--) {
        double complex s = a[i * (n + 1) + n];
        for (int k = i + 1; k < n; k++)
            s -= a[i * (n + 1) + k] * x[k];
        x[i] = s / a[i * (n + 1) + i];
    }
    free(a);
}

#endif
