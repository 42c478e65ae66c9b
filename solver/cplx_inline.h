/* Complex double arithmetic for hot loops, written out in real arithmetic: C's a * b on complex types
 * follows Annex G (a NaN check on every product, a library call when it fires), which keeps the
 * compiler from vectorising the loop. Header-only, internal to solver/ (the dense linear algebra of
 * herm_eig.c, espirit.c, coil_compress.c). */
#ifndef MR_CPLX_INLINE_H
#define MR_CPLX_INLINE_H

#include <complex.h>

typedef double complex mr_cplx;

/* a b */
static inline mr_cplx mr_cmul(mr_cplx a, mr_cplx b)
{
    return CMPLX(creal(a) * creal(b) - cimag(a) * cimag(b), creal(a) * cimag(b) + cimag(a) * creal(b));
}

/* a conj(b) */
static inline mr_cplx mr_cmulc(mr_cplx a, mr_cplx b)
{
    return CMPLX(creal(a) * creal(b) + cimag(a) * cimag(b), cimag(a) * creal(b) - creal(a) * cimag(b));
}

/* |a|^2 */
static inline double mr_cabs2(mr_cplx a) { return creal(a) * creal(a) + cimag(a) * cimag(a); }

#endif
