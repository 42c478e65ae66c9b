/* The device initialisation as background work (gpu_ops.h mr_gpu_warm_up, base/child.h): the slow
 * one-time parts of making GPUs usable, each on a thread of its own; and the context's teardown at the end
 * (mr_gpu_release). Their failures are not reported
 * here: the first real use (mr_gpu_ctx_create, mr_gpu_fft_load, mr_gemm_load) meets them again and
 * reports them with its own message. */
#include <cuda_runtime.h>

#include "../base/child.h"
#include "gemm.h"
#include "gpu_ops.h"

/* cuFFT and cuBLAS (hundreds of MB mapped); the outcome stays with the libraries (gpu/dl.h) */
static void warm_libraries(int unused)
{
    (void)unused;
    if (mr_gpu_fft_load() != MR_OK)
        mr_clear_error();
    if (mr_gemm_load() != MR_OK)
        mr_clear_error();
}

/* The device's primary context, which every later cudaSetDevice(device) of any thread then binds to */
static void warm_context(int device)
{
    if (cudaSetDevice(device) == cudaSuccess)
        (void)cudaFree(0);
    (void)cudaGetLastError(); /* this thread's error state only */
}

/* The context's teardown: what the process would otherwise pay at exit, after its last output */
static void release_context(int device)
{
    if (cudaSetDevice(device) == cudaSuccess) {
        (void)cudaDeviceSynchronize();
        (void)cudaDeviceReset();
    }
    (void)cudaGetLastError();
}

void mr_gpu_release(int device)
{
    if (device < 0)
        return;
    if (mr_background_queue(release_context, device) == 0)
        mr_background_start();
}

void mr_gpu_warm_up(const int *gpus, int n)
{
    (void)mr_background_queue(warm_libraries, 0);
    for (int i = 0; i < n; i++)
        (void)mr_background_queue(warm_context, gpus[i]);
}
