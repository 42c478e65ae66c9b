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

/* At most this many GPUs share one reconstruction's exact sums (gpu:all takes the first ones). */
#define MR_DEVICE_MAX_GPUS 16
/* Room for any mr_device_format text ("gpu:0,1,...", 16 entries). */
#define MR_DEVICE_TEXT 96

/* A device request: the kind and, for the GPU, the index of the device the operators and CG run on
 * (-1: the first usable one). One reconstruction may spread the exact sums Q and F^H d over several
 * GPUs of the host (gpu/sums.h): `gpu:all` (every usable GPU, the first one runs CG) or a list
 * `gpu:N,M,...` (the first runs CG; a GPU listed twice computes two parts one after the other, which
 * tests the split on a one-GPU machine). A zero-initialised tail ({kind, index}) is a single device. */
typedef struct {
    mr_device_kind kind;
    int index;                    /* the GPU of the operators and CG; a list's first entry; -1: first usable */
    int all;                      /* gpu:all */
    int ngpus;                    /* gpu:N,M,...: entries of gpus (>= 2); 0 otherwise */
    int gpus[MR_DEVICE_MAX_GPUS]; /* the list, in the order given (gpus[0] == index) */
} mr_device_sel;

/* "auto", "cpu", "gpu", "gpu:N", "gpu:N,M,..." (up to MR_DEVICE_MAX_GPUS entries), "gpu:all" -> *out;
 * MR_EINVAL with the message "'TEXT' is not auto, cpu, gpu, gpu:N, gpu:N,M,... or gpu:all (N = 0, 1,
 * ...)" otherwise (the caller names the option). */
mr_status mr_device_parse(const char *text, mr_device_sel *out);
/* The request as text (the forms above) into buf (MR_DEVICE_TEXT bytes hold any). */
void mr_device_format(mr_device_sel sel, char *buf, size_t size);

/* Resolve a request: *gpu = the GPU index to use, or -1 for the host. Nothing is made here, but a
 * GPU's initialisation is queued (mr_device_resolve_gpus). Explicit GPU requests fail (MR_ENODEV)
 * when no such CUDA device exists (for a list: any entry); AUTO logs its choice once per call when it
 * takes the host. (Whether cuFFT loads is known only when the backend is made.) */
mr_status mr_device_resolve(mr_device_sel sel, int *gpu);
/* The same, with every GPU that shares the exact sums: gpus[0] = *gpu from mr_device_resolve, then
 * the other GPUs of gpu:all (ascending) or of the list (in order); *n = 0 for the host, 1 for one
 * GPU. gpus holds MR_DEVICE_MAX_GPUS entries. When it picks GPUs it queues their initialisation
 * (cuFFT and cuBLAS loaded, the CUDA context of each GPU; gpu/gpu_ops.h mr_gpu_warm_up) as background
 * work (base/child.h): it starts right after the next fork of mr_run_in_child (parent side: while the
 * child reading an HDF5 scan runs), at mr_device_init_start, or at the latest in mr_backend_create,
 * which waits for it; it never runs across a fork. */
mr_status mr_device_resolve_gpus(mr_device_sel sel, int *gpus, int *n);
/* Start the queued device initialisation now, if no fork started it yet (the input needed no child). */
void mr_device_init_start(void);
/* The end's counterpart, for a process done with GPU `gpu` (-1: nothing): its context is torn down on a
 * background thread from now on (gpu/gpu_ops.h mr_gpu_release), while the host writes its outputs. Every
 * backend and operator on it must be freed first, and mr_background_wait called before main returns.
 * Commands only: a library caller's process may share the context. */
void mr_device_release_start(int gpu);

typedef struct mr_backend mr_backend;

/* threads: host threads (OpenMP, FFTW) for host work, <= 0: all cores. */
mr_status mr_backend_create(mr_backend **out, mr_device_sel sel, int threads);
mr_backend *mr_backend_ref(mr_backend *b);
void mr_backend_free(mr_backend *b); /* NULL is fine */

int mr_backend_on_gpu(const mr_backend *b); /* 1: vectors in device memory */
int mr_backend_gpu_index(const mr_backend *b); /* -1 on the host */
/* The GPUs that share the exact sums of this backend's NUDFT operators (gpus[0] == the backend's GPU);
 * *n = 0 on the host. Borrowed for the backend's lifetime. */
const int *mr_backend_gpus(const mr_backend *b, int *n);
int mr_backend_threads(const mr_backend *b);   /* host threads (resolved, >= 1) */
const mr_vecops *mr_backend_vecops(const mr_backend *b); /* borrowed for the backend's lifetime */
/* "cpu (2 threads)" or "gpu:0 NVIDIA H200 (132 SMs, 139 GiB)" (with several GPUs: "...; sums on gpu:0,1") */
const char *mr_backend_name(const mr_backend *b);
/* The device context (gpu/gpu_ops.h) of a GPU backend, NULL on the host; borrowed. */
struct mr_gpu_ctx *mr_backend_gpu_ctx(const mr_backend *b);
/* Seconds create spent making the device usable: waiting for the background initialisation still
 * under way (mr_device_resolve_gpus), the stream, cuFFT; 0 on the host. */
double mr_backend_init_seconds(const mr_backend *b);

/* Convenience on the backend's memory: a vector of n complex elements (NULL with an mr_error message
 * when out of memory), and a zeroed one. Release with mr_backend_vecops(b)->release. */
float *mr_backend_alloc(const mr_backend *b, int64_t n);
float *mr_backend_alloc_zero(const mr_backend *b, int64_t n);
/* A copy of nfloats host floats in the backend's memory (a vector of ceil(nfloats/2) complex elements:
 * real arrays may be uploaded too); NULL with a message on failure. */
float *mr_backend_upload(const mr_backend *b, int64_t nfloats, const float *host);
/* The same on a thread of its own, so that the caller's host work overlaps with the copy (hundreds of MB of
 * coil maps from pageable memory: tens of ms): *dev = the vector (NULL on failure), valid once
 * mr_backend_upload_wait(*job) returned MR_OK (which frees the job; on failure it releases *dev and sets it
 * NULL). host must stay unchanged until then; the caller makes no other use of the backend meanwhile. Out
 * of threads it copies before it returns. NULL job: MR_ENOMEM with a message. */
typedef struct mr_upload_job mr_upload_job;
mr_status mr_backend_upload_start(const mr_backend *b, int64_t nfloats, const float *host, float **dev,
                                  mr_upload_job **job);
mr_status mr_backend_upload_wait(mr_upload_job *job);

#ifdef __cplusplus
}
#endif
#endif
