/* The wavelet operator (solver/wavelet.h) on a GPU backend (gpu/wavelet.cu): every property of
 * tests/wavelet_check.h (float64 reference, perfect reconstruction, isometry, projection, adjointness)
 * on the cases there (1D, 2D, 3D; even, odd and prime sizes; orders 1 to 10; shifts), and agreement
 * with the host operator on the same inputs. Skips (77) without a GPU.
 *
 * Bounds: tests/wavelet_check.h; GPU against CPU, forward and adjoint, relative L2 1e-5 (both float32,
 * the same taps in the same order; the device fuses multiply-adds; ~1e-7 expected).
 * It also prints (never checks) the time of forward + adjoint at 128^2, 256^2, 64^3 and 128^3. */
#include <stdlib.h>

#include "gpu/gpu.h"
#include "wavelet_check.h"

int main(void)
{
    if (mr_gpu_count() <= 0) {
        printf("no usable GPU: skipped\n");
        return TEST_SKIP;
    }
    uint64_t rng = test_seed();
    mr_backend *gpu = wc_backend(MR_DEVICE_GPU, 0), *cpu = wc_backend(MR_DEVICE_CPU, 0);
    if (gpu && cpu) {
        printf("backend: %s\n", mr_backend_name(gpu));
        wc_run_cases(gpu, cpu, &rng, 1e-5);
        wc_bench(gpu);
    }
    mr_backend_free(gpu);
    mr_backend_free(cpu);
    return test_finish("test_gpu_wavelet");
}
