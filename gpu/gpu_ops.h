/* The device side of the operators (solver/backend.h, solver/linop*.c), behind a plain C interface:
 * a device context (one CUDA device, one stream), device memory, the vector operations CG needs,
 * the element-wise operators (sensitivity maps, finite differences, per-sample scaling) and the
 * Toeplitz normal on the 2N grid with cuFFT. Built from gpu/ops.cu and gpu/toeplitz.cu; without CUDA
 * gpu/gpu_stub.c provides the same functions, which fail with MR_ENODEV.
 *
 * Vectors are interleaved complex float32 [n][2] in device memory unless a comment says otherwise;
 * n counts complex elements. Every function runs on the context's stream, asynchronously unless it
 * returns a number to the host (dot, norm, mag_dist2) or copies to or from the host, which wait for
 * the stream. A function that returns mr_status reports the failure of its own launches; a failure
 * of asynchronous work shows at the next waiting call and stays in the context: mr_gpu_ctx_status
 * returns it from then on (the device is unusable after most CUDA errors).
 *
 * Ownership: mr_gpu_ctx_create's context belongs to the caller (mr_gpu_ctx_destroy, after every
 * object made with it); device pointers from mr_gpu_alloc belong to the caller (mr_gpu_free). All
 * other pointers are borrowed for the call. */
#ifndef MR_GPU_OPS_H
#define MR_GPU_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "../base/ewise.h"
#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mr_gpu_ctx mr_gpu_ctx;

/* Make `device` current for this thread, create a stream and the reduction buffers. MR_ENODEV when the
 * device does not exist; MR_ECUDA when it cannot be initialised. */
mr_status mr_gpu_ctx_create(mr_gpu_ctx **out, int device);
void mr_gpu_ctx_destroy(mr_gpu_ctx *c); /* waits for the stream; NULL is fine */
int mr_gpu_ctx_device(const mr_gpu_ctx *c);
/* The first failure seen on this context (its message recorded again with mr_error), MR_OK if none. */
mr_status mr_gpu_ctx_status(mr_gpu_ctx *c);
/* Wait for the stream; MR_OK or the (sticky) failure. */
mr_status mr_gpu_ctx_sync(mr_gpu_ctx *c);

/* Free and total memory of CUDA device `device` now (cudaMemGetInfo), for plans that size themselves
 * before they allocate (gpu/sums.h, gpu/nufft.h, solver/encoding.h). MR_ENODEV / MR_ECUDA on failure. */
mr_status mr_gpu_memory(int device, int64_t *free_bytes, int64_t *total_bytes);

/* Device memory for nfloats floats (256-byte aligned); NULL with the reason recorded (mr_error) when
 * the device is out of memory or failed. */
float *mr_gpu_alloc(mr_gpu_ctx *c, int64_t nfloats);
void mr_gpu_free(mr_gpu_ctx *c, void *p); /* NULL is fine */
/* Host <-> device copies of nfloats floats; they wait for the stream. */
mr_status mr_gpu_upload(mr_gpu_ctx *c, float *dev_dst, const float *host_src, int64_t nfloats);
mr_status mr_gpu_download(mr_gpu_ctx *c, float *host_dst, const float *dev_src, int64_t nfloats);

/* ---- the vector operations of solver/vecops.h (same contracts; double accumulation) ---------- */
void mr_gpu_vec_zero(mr_gpu_ctx *c, int64_t n, float *x);
void mr_gpu_vec_copy(mr_gpu_ctx *c, int64_t n, float *dst, const float *src);
void mr_gpu_vec_dot(mr_gpu_ctx *c, int64_t n, const float *x, const float *y, double out[2]); /* sum conj(x) y */
double mr_gpu_vec_norm(mr_gpu_ctx *c, int64_t n, const float *x);
/* The maps and reductions of base/ewise.h (gpu/ewise.cu: one kernel template for all of them); args is a
 * host struct, its weights in device memory. */
void mr_gpu_vec_ewise(mr_gpu_ctx *c, mr_ew_op op, int64_t n, float *out, const float *x, const float *y,
                      const mr_ew_args *args);
double mr_gpu_vec_ewise_reduce(mr_gpu_ctx *c, mr_ewr_op op, int64_t n, const float *x, const mr_ew_args *args);
double mr_gpu_vec_mag_dist2(mr_gpu_ctx *c, int64_t n, const float *x, const float *t); /* sum (|x|-|t|)^2 */

/* ---- element-wise operators ------------------------------------------------------------------ */
/* out[b][j] = s[j] in[b][j] for b < batch, j < m; s real [m] (device); in == out allowed. */
mr_status mr_gpu_scale_rows(mr_gpu_ctx *c, int64_t m, int64_t batch, const float *s, const float *in, float *out);
/* Sensitivity maps S [C][n] (device): forward y[c][v] = S[c][v] x[v]; adjoint x[v] = sum_c conj(S[c][v])
 * y[c][v]; normal y[v] = sum_c |S[c][v]|^2 x[v]. */
mr_status mr_gpu_sens_forward(mr_gpu_ctx *c, int64_t n, int64_t ncoils, const float *maps, const float *x, float *y);
mr_status mr_gpu_sens_adjoint(mr_gpu_ctx *c, int64_t n, int64_t ncoils, const float *maps, const float *y, float *x);
mr_status mr_gpu_sens_normal(mr_gpu_ctx *c, int64_t n, int64_t ncoils, const float *maps, const float *x, float *y);
/* Forward differences on the matrix {Nx, Ny, Nz} (solver/regularizer.h): R x [D][N] with D the axes of
 * N_a > 1 in x, y, z order, 0 across the last voxel of a line (Neumann); R^H; R^H R. */
mr_status mr_gpu_fd_forward(mr_gpu_ctx *c, const int64_t matrix[3], const float *x, float *g);
mr_status mr_gpu_fd_adjoint(mr_gpu_ctx *c, const int64_t matrix[3], const float *g, float *x);
mr_status mr_gpu_fd_normal(mr_gpu_ctx *c, const int64_t matrix[3], const float *x, float *y);

/* ---- Toeplitz normal with cuFFT (the maths of solver/toeplitz.h) -------------------------------
 * A plain circular convolution on the whole 2N grid: zero-pad, cuFFT forward, multiply by the real
 * spectrum H of Q arranged circulantly, cuFFT inverse, crop. cuFFT is loaded at run time
 * (libcufft.so, see docs/GPU.md), so a CUDA build starts where it is missing; create fails then with
 * MR_ENODEV naming the library. */
typedef struct mr_gpu_toeplitz mr_gpu_toeplitz;
/* Load cuFFT (once per process, thread-safe; later calls return at once): MR_OK, or MR_ENODEV naming the
 * library and why it could not be loaded. The backend does this when it chooses a GPU, so that a GPU
 * without cuFFT counts as unusable up front. */
mr_status mr_gpu_fft_load(void);
/* Queue the device initialisation of `gpus` [n] as background work (base/child.h: it starts on the
 * parent's side of the next fork of mr_run_in_child, i.e. while a child reads the scan, or at
 * mr_background_start / mr_background_wait; it is never running across a fork): loading cuFFT and
 * cuBLAS (gpu/gemm.h), hundreds of MB, and the CUDA primary context of each GPU, each on a thread of
 * its own. mr_background_wait then finds them done; failures are met again, and reported, by
 * mr_gpu_ctx_create, mr_gpu_fft_load and mr_gemm_load. Queuing the same again is harmless (done work
 * returns at once). The backend calls it when it picks GPUs (solver/backend.c). Without CUDA it does
 * nothing. */
void mr_gpu_warm_up(const int *gpus, int n);
/* The device's primary context torn down (cudaDeviceReset) on a background thread (base/child.h), started
 * now, so that the driver's teardown (0.07 s on an H200, docs/BENCHMARKS.md) overlaps with host work. For
 * a process that is done with `device`: every object made on it freed, and nothing of any thread using it
 * again (a library whose caller may share the context, e.g. CuPy's, must not). mr_background_wait joins it;
 * the caller does so before it returns from main (the CUDA runtime's exit handlers may otherwise meet it
 * running). Without CUDA it does nothing. */
void mr_gpu_release(int device);
/* Copy nfloats floats of device memory of `device` to the host on a stream of its own, from any host
 * thread (e.g. a background thread while the main thread keeps using the device): the Q cache's copy of
 * Q is made this way. Returns when complete. */
mr_status mr_gpu_fetch(int device, float *host_dst, const float *dev_src, int64_t nfloats);
/* q: device, [mr_grid_size(mr_grid_q(matrix))][2], borrowed for the call. *out belongs to the caller
 * and borrows c (destroy it first). */
mr_status mr_gpu_toeplitz_create(mr_gpu_toeplitz **out, mr_gpu_ctx *c, const int64_t matrix[3], const float *q);
/* y = sum_n' Q(r_n - r_n') x_n' on `batch` consecutive images [batch][N]; x == y allowed. */
mr_status mr_gpu_toeplitz_apply(mr_gpu_toeplitz *t, int64_t batch, const float *x, float *y);
/* z = (a C + g G + s I)^-1 r with C the circulant approximation of the normal (solver/toeplitz.h), on one
 * image [N]; z == r allowed. */
mr_status mr_gpu_toeplitz_circulant_solve(mr_gpu_toeplitz *t, double a, double g, double s, const float *r, float *z);
void mr_gpu_toeplitz_destroy(mr_gpu_toeplitz *t);
/* Seconds create spent in cuFFT planning (loading the library the first time included). */
double mr_gpu_toeplitz_plan_seconds(const mr_gpu_toeplitz *t);

#ifdef __cplusplus
}
#endif
#endif
