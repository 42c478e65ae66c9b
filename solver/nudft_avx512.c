/* The AVX-512 level of the CPU NUDFT kernels (solver/nudft_simd.h): this file is compiled with
 * -mavx512f -mavx512dq -mavx512vl -mavx512bw -mavx2 -mfma (CMakeLists.txt) and entered only through
 * solver/nudft.c's dispatcher on CPUs that report all of them. */
#define NUDFT_ISA avx512
#define NUDFT_ISA_NAME "avx512"
#define NUDFT_VECTORS_AVX512 1
#define NUDFT_FWD_VL 16
#include "nudft_powers.h"
#include "nudft_forward.h"
#include "nudft_field.h"
