/* The AVX2 + FMA level of the CPU NUDFT kernels (solver/nudft_simd.h): this file is compiled with
 * -mavx2 -mfma (CMakeLists.txt) and entered only through solver/nudft.c's dispatcher on CPUs that
 * report AVX2 and FMA. */
#define NUDFT_ISA avx2
#define NUDFT_ISA_NAME "avx2"
#define NUDFT_VECTORS_AVX2 1
#define NUDFT_FWD_VL 8
#include "nudft_powers.h"
#include "nudft_forward.h"
#include "nudft_field.h"
