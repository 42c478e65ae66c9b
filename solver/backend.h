/* Where an operator's vectors live, and the vector operations there: the host (OpenMP threads) or
 * one CUDA device (gpu/gpu_ops.h). Every operator (solver/linop.h) is made on a backend, and CG
 * takes its mr_vecops from it, so the same solver runs on host or device memory.
 *
 * The choice is made once, at create time: MR_DEVICE_CPU is the host; MR_DEVICE_GPU needs a usable
 * GPU (otherwise MR_ENODEV with a message naming the request); MR_DEVICE_AUTO takes the GPU when one
 * is usable and otherwise the host, with one info line. "Usable" means a CUDA device exists and, when
 * the backend is made, cuFFT loads (the GPU Toeplitz normal needs it). Nothing falls back later: a
 * device failure is an error.
 *
 * Ownership: reference counted. mr_backend_create returns one reference; mr_backend_ref adds one and
 * mr_backend_free drops one (the last frees it). Every operator holds a reference to its backend.
 * Not thread-safe: one backend (and its operators) is used by one thread at a time. */
#ifndef MR_BACKEND_H
#define MR_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "../base/status.h"
#include "vecops.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { MR_DEVICE_AUTO = 0, MR_DEVICE_CPU = 1, MR_DEVICE_GPU = 2 } mr_device_kind;

/* A device request: the kind and, for the GPU, the index (-1: the first usable one). */
typedef struct {
    mr_device_kind kind;
    int index;
} mr_device_sel;

/* "auto", "cpu", "gpu", "gpu:N" -> *out; MR_EINVAL with the message
 * "'TEXT' is not auto, cpu, gpu or gpu:N (N = 0, 1, ...)" otherwise (the caller names the option). */
mr_status mr_device_parse(const char *text, mr_device_sel *out);
/* "auto", "cpu", "gpu", "gpu:N" into buf. */
void mr_device_format(mr_device_sel sel, char *buf, size_t size);

/* Resolve a request without making anything: *gpu = the GPU index to use, or -1 for the host.
 * Explicit GPU requests fail (MR_ENODEV) when no such CUDA device exists; AUTO logs its choice once
 * per call when it takes the host. (Whether cuFFT loads is known only when the backend is made.) */
mr_status mr_device_resolve(mr_device_sel sel, int *gpu);

typedef struct mr_backend mr_backend;

/* threads: host threads (OpenMP, FFTW) for host work, <= 0: all cores. */
mr_status mr_backend_create(mr_backend **out, mr_device_sel sel, int threads);
mr_backend *mr_backend_ref(mr_backend *b);
void mr_backend_free(mr_backend *b); /* NULL is fine */

int mr_backend_on_gpu(const mr_backend *b); /* 1: vectors in device memory */
int mr_backend_gpu_index(const mr_backend *b); /* -1 on the host */
int mr_backend_threads(const mr_backend *b);   /* host threads (resolved, >= 1) */
const mr_vecops *mr_backend_vecops(const mr_backend *b); /* borrowed for the backend's lifetime */
/* "cpu (2 threads)" or "gpu:0 NVIDIA H200 (132 SMs, 139 GiB)" */
const char *mr_backend_name(const mr_backend *b);
/* The device context (gpu/gpu_ops.h) of a GPU backend, NULL on the host; borrowed. */
struct mr_gpu_ctx *mr_backend_gpu_ctx(const mr_backend *b);
/* Seconds create spent making the device usable (CUDA context, stream); 0 on the host. */
double mr_backend_init_seconds(const mr_backend *b);

/* Convenience on the backend's memory: a vector of n complex elements (NULL with an mr_error message
 * when out of memory), and a zeroed one. Release with mr_backend_vecops(b)->release. */
float *mr_backend_alloc(const mr_backend *b, int64_t n);
float *mr_backend_alloc_zero(const mr_backend *b, int64_t n);
/* A copy of nfloats host floats in the backend's memory (a vector of ceil(nfloats/2) complex elements:
 * real arrays may be uploaded too); NULL with a message on failure. */
float *mr_backend_upload(const mr_backend *b, int64_t nfloats, const float *host);

#ifdef __cplusplus
}
#endif
#endif
