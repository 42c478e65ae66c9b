/* The wavelet transform of solver/wavelet.h on the device (gpu/wavelet.h).
 *
 * One launch per level and axis, out of place: a thread computes one output pair along the pass axis
 * (analysis: a[i] and d[i] from u[2i .. 2i+taps-1]; synthesis: u[2t] and u[2t+1] from a[t-j], d[t-j]),
 * neighbouring threads take neighbouring x, so every read and write of a warp is coalesced whichever
 * the axis, and the overlapping taps of neighbours hit the cache: each pass reads its region about
 * once from memory and writes it once.
 *
 * Buffers: y (the coefficients), x (the image) and two work vectors of the padded size. Forward: the
 * passes of a level go back and forth between the work vectors and the last one writes y, except its
 * approximation corner (the next level's input), which goes to a work vector ("alt"); the first pass
 * reads the image through the padding and the shift. Adjoint: the first pass of a level reads its
 * details from y and the approximation corner from the previous level's work vector ("alt"), the
 * last pass of level 0 writes the image through the shift and the crop. So no pass reads what it
 * writes, and nothing is copied besides the passes. */
#include <cuda_runtime.h>
#include <stdlib.h>

#include "gpu_internal.h"
#include "wavelet.h"

struct mr_gpu_wavelet {
    mr_gpu_ctx *c;
    mr_wavelet_geom g;
    float2 *work[2];
};

/* A pass's geometry, by value in the kernel parameters. */
struct wl_pass {
    int r[3];          /* the region of this level */
    int sub[3];        /* the approximation corner (the next level's region), read or written via alt */
    int n[3], p[3], s[3]; /* image extents, padded extents, shift */
    long long st[3];   /* strides of the padded grid */
    long long ist[3];  /* strides of the image */
    int taps;
    float lo[MR_WAVELET_MAX_TAPS], hi[MR_WAVELET_MAX_TAPS];
};

/* Thread t -> coordinates q in the region with the pass axis halved (x fastest). */
template <int AXIS> __device__ inline void wl_coords(const wl_pass &g, long long t, int q[3])
{
    int h[3] = {g.r[0], g.r[1], g.r[2]};
    h[AXIS] >>= 1;
    q[0] = (int)(t % h[0]);
    const long long u = t / h[0];
    q[1] = (int)(u % h[1]);
    q[2] = (int)(u / h[1]);
}

/* p mod n for p >= 0 (one subtraction unless the line is shorter than the filter). */
__device__ inline int wl_wrap(int p, int n)
{
    if (p >= n)
        p -= n;
    return p >= n ? p % n : p;
}

/* The image index of padded position q under the shift s (valid when < the image extent). */
__device__ inline int wl_unshift(int q, int s, int p) { return q >= s ? q - s : q - s + p; }

/* The other axes of a thread: offset on the padded grid, whether it lies in the approximation corner
 * along them, and (IMG) its image offset and whether that is inside the image. */
template <int AXIS, bool IMG>
__device__ inline void wl_line(const wl_pass &g, const int q[3], long long *off, bool *low, long long *ioff,
                               bool *inside)
{
    *off = 0;
    *ioff = 0;
    *low = true;
    *inside = true;
#pragma unroll
    for (int b = 0; b < 3; b++) {
        if (b == AXIS)
            continue;
        *off += q[b] * g.st[b];
        *low = *low && q[b] < g.sub[b];
        if (IMG) {
            const int v = wl_unshift(q[b], g.s[b], g.p[b]);
            *inside = *inside && v < g.n[b];
            *ioff += v * g.ist[b];
        }
    }
}

/* Analysis of one output pair: a[i], d[i] from u[2i .. 2i+taps-1] (u: the padded grid src, or the
 * image through the shift and the padding when IMG); d to dst, a to dst or, in the approximation
 * corner, to dst_alt when given. */
template <int AXIS, bool IMG>
__device__ inline void wl_analyse(const wl_pass &g, const int q[3], long long off, bool low, long long ioff,
                                  bool inside, const float2 *__restrict__ src, float2 *__restrict__ dst,
                                  float2 *__restrict__ dst_alt)
{
    const int n = g.r[AXIS], i = q[AXIS];
    float ar = 0, ai = 0, dr = 0, di = 0;
    if (inside) {
#pragma unroll
        for (int k = 0; k < MR_WAVELET_MAX_TAPS; k++) {
            if (k < g.taps) {
                const int pos = wl_wrap(2 * i + k, n);
                float2 u;
                if (IMG) {
                    const int v = wl_unshift(pos, g.s[AXIS], g.p[AXIS]);
                    u = v < g.n[AXIS] ? src[ioff + v * g.ist[AXIS]] : make_float2(0.0f, 0.0f);
                } else {
                    u = src[off + pos * g.st[AXIS]];
                }
                ar = fmaf(g.lo[k], u.x, ar);
                ai = fmaf(g.lo[k], u.y, ai);
                dr = fmaf(g.hi[k], u.x, dr);
                di = fmaf(g.hi[k], u.y, di);
            }
        }
    }
    dst[off + (long long)(i + n / 2) * g.st[AXIS]] = make_float2(dr, di);
    float2 *ao = dst_alt && low ? dst_alt : dst;
    ao[off + (long long)i * g.st[AXIS]] = make_float2(ar, ai);
}

/* Synthesis of one output pair: u[2t], u[2t+1] from a[t-j], d[t-j] of src (a from src_alt in the
 * approximation corner when given) to the padded grid dst, or to the image through the shift and the
 * crop when IMG. */
template <int AXIS, bool IMG>
__device__ inline void wl_synthesise(const wl_pass &g, const int q[3], long long off, bool low, long long ioff,
                                     bool inside, const float2 *__restrict__ src, const float2 *__restrict__ src_alt,
                                     float2 *__restrict__ dst)
{
    const int half = g.r[AXIS] / 2, t = q[AXIS];
    const float2 *as = src_alt && low ? src_alt : src;
    float ur = 0, ui = 0, vr = 0, vi = 0; /* u[2t], u[2t+1] */
#pragma unroll
    for (int j = 0; j < MR_WAVELET_MAX_TAPS / 2; j++) {
        if (2 * j < g.taps) {
            int i = t - j;
            if (i < 0)
                i += half;
            if (i < 0)
                i = (i % half + half) % half;
            const float2 a = as[off + (long long)i * g.st[AXIS]];
            const float2 d = src[off + (long long)(i + half) * g.st[AXIS]];
            ur = fmaf(g.lo[2 * j], a.x, fmaf(g.hi[2 * j], d.x, ur));
            ui = fmaf(g.lo[2 * j], a.y, fmaf(g.hi[2 * j], d.y, ui));
            vr = fmaf(g.lo[2 * j + 1], a.x, fmaf(g.hi[2 * j + 1], d.x, vr));
            vi = fmaf(g.lo[2 * j + 1], a.y, fmaf(g.hi[2 * j + 1], d.y, vi));
        }
    }
    if (IMG) {
        if (inside) {
            const int v0 = wl_unshift(2 * t, g.s[AXIS], g.p[AXIS]), v1 = wl_unshift(2 * t + 1, g.s[AXIS], g.p[AXIS]);
            if (v0 < g.n[AXIS])
                dst[ioff + v0 * g.ist[AXIS]] = make_float2(ur, ui);
            if (v1 < g.n[AXIS])
                dst[ioff + v1 * g.ist[AXIS]] = make_float2(vr, vi);
        }
    } else {
        dst[off + (long long)(2 * t) * g.st[AXIS]] = make_float2(ur, ui);
        dst[off + (long long)(2 * t + 1) * g.st[AXIS]] = make_float2(vr, vi);
    }
}

/* One pass along AXIS over the level's region, a thread per output pair: analysis, or synthesis (SYN). */
template <int AXIS, bool IMG, bool SYN>
__global__ void k_wl_pass(const wl_pass g, const float2 *__restrict__ src, const float2 *__restrict__ src_alt,
                          float2 *__restrict__ dst, float2 *__restrict__ dst_alt)
{
    const long long total = (long long)g.r[0] * g.r[1] * g.r[2] / 2;
    MR_GRID_STRIDE(t, total)
    {
        int q[3];
        wl_coords<AXIS>(g, t, q);
        long long off, ioff;
        bool low, inside;
        wl_line<AXIS, IMG>(g, q, &off, &low, &ioff, &inside);
        if (SYN)
            wl_synthesise<AXIS, IMG>(g, q, off, low, ioff, inside, src, src_alt, dst);
        else
            wl_analyse<AXIS, IMG>(g, q, off, low, ioff, inside, src, dst, dst_alt);
    }
}

/* ---- host side -------------------------------------------------------------------------------- */

static int wl_max_levels(const mr_wavelet_geom *g)
{
    int l = 0;
    for (int a = 0; a < 3; a++)
        l = g->levels[a] > l ? g->levels[a] : l;
    return l;
}

/* The geometry of level j's passes (its region, the next level's as the corner). */
static wl_pass wl_level(const mr_gpu_wavelet *w, const int64_t shift[3], int j)
{
    const mr_wavelet_geom *g = &w->g;
    wl_pass p;
    for (int a = 0; a < 3; a++) {
        p.r[a] = (int)(g->padded[a] >> (j < g->levels[a] ? j : g->levels[a]));
        p.sub[a] = (int)(g->padded[a] >> (j + 1 < g->levels[a] ? j + 1 : g->levels[a]));
        p.n[a] = (int)g->matrix[a];
        p.p[a] = (int)g->padded[a];
        p.s[a] = (int)shift[a];
    }
    p.st[0] = p.ist[0] = 1;
    p.st[1] = g->padded[0];
    p.st[2] = g->padded[0] * g->padded[1];
    p.ist[1] = g->matrix[0];
    p.ist[2] = g->matrix[0] * g->matrix[1];
    p.taps = g->taps;
    for (int k = 0; k < MR_WAVELET_MAX_TAPS; k++) {
        p.lo[k] = k < g->taps ? g->lo[k] : 0.0f;
        p.hi[k] = k < g->taps ? g->hi[k] : 0.0f;
    }
    return p;
}

template <bool IMG, bool SYN>
static void wl_launch_kind(int axis, const wl_pass &p, cudaStream_t s, const float2 *src, const float2 *src_alt,
                           float2 *dst, float2 *dst_alt)
{
    const unsigned b = mr_gpu_blocks((long long)p.r[0] * p.r[1] * p.r[2] / 2);
    if (axis == 0)
        k_wl_pass<0, IMG, SYN><<<b, MR_GPU_THREADS, 0, s>>>(p, src, src_alt, dst, dst_alt);
    else if (axis == 1)
        k_wl_pass<1, IMG, SYN><<<b, MR_GPU_THREADS, 0, s>>>(p, src, src_alt, dst, dst_alt);
    else
        k_wl_pass<2, IMG, SYN><<<b, MR_GPU_THREADS, 0, s>>>(p, src, src_alt, dst, dst_alt);
}

/* One pass on the context's stream; img: the image is read (analysis) or written (synthesis). */
static mr_status wl_launch(mr_gpu_wavelet *w, int axis, bool img, bool syn, const wl_pass &p, const float2 *src,
                           const float2 *src_alt, float2 *dst, float2 *dst_alt)
{
    const cudaStream_t s = mr_gpu_ctx_stream(w->c);
    if (img && syn)
        wl_launch_kind<true, true>(axis, p, s, src, src_alt, dst, dst_alt);
    else if (img)
        wl_launch_kind<true, false>(axis, p, s, src, src_alt, dst, dst_alt);
    else if (syn)
        wl_launch_kind<false, true>(axis, p, s, src, src_alt, dst, dst_alt);
    else
        wl_launch_kind<false, false>(axis, p, s, src, src_alt, dst, dst_alt);
    return mr_gpu_ctx_launched(w->c, syn ? "wavelet adjoint" : "wavelet forward");
}

/* The axes transformed at level j, in x, y, z order; returns their count. */
static int wl_axes(const mr_wavelet_geom *g, int j, int axes[3])
{
    int k = 0;
    for (int a = 0; a < 3; a++)
        if (g->levels[a] > j)
            axes[k++] = a;
    return k;
}

mr_status mr_gpu_wavelet_create(mr_gpu_wavelet **out, mr_gpu_ctx *c, const mr_wavelet_geom *g)
{
    *out = NULL;
    if (g->taps < 2 || g->taps > MR_WAVELET_MAX_TAPS || (g->taps & 1) || wl_max_levels(g) < 1)
        return mr_error(MR_EINVAL, "GPU wavelet: %d taps, %d levels", g->taps, wl_max_levels(g));
    mr_gpu_wavelet *w = (mr_gpu_wavelet *)calloc(1, sizeof *w);
    if (!w)
        return mr_error(MR_ENOMEM, "GPU wavelet: out of memory");
    w->c = c;
    w->g = *g;
    const int64_t n = g->padded[0] * g->padded[1] * g->padded[2];
    for (int i = 0; i < 2; i++)
        if (!(w->work[i] = (float2 *)mr_gpu_alloc(c, 2 * n))) {
            mr_gpu_wavelet_destroy(w);
            return MR_ENOMEM; /* mr_gpu_alloc named the size */
        }
    *out = w;
    return MR_OK;
}

void mr_gpu_wavelet_destroy(mr_gpu_wavelet *w)
{
    if (!w)
        return;
    mr_gpu_free(w->c, w->work[0]);
    mr_gpu_free(w->c, w->work[1]);
    free(w);
}

mr_status mr_gpu_wavelet_forward(mr_gpu_wavelet *w, const int64_t shift[3], const float *x, float *y)
{
    const int levels = wl_max_levels(&w->g);
    const float2 *src = (const float2 *)x;
    int cur = -1; /* the work vector src is, -1: neither */
    bool img = true;
    for (int j = 0; j < levels; j++) {
        const wl_pass p = wl_level(w, shift, j);
        int axes[3];
        const int k = wl_axes(&w->g, j, axes);
        for (int i = 0; i < k; i++) {
            const int other = cur == 0 ? 1 : 0;
            const bool last = i == k - 1;
            float2 *dst = last ? (float2 *)y : w->work[other];
            float2 *alt = last && j < levels - 1 ? w->work[other] : NULL;
            const mr_status st = wl_launch(w, axes[i], img, false, p, src, NULL, dst, alt);
            if (st != MR_OK)
                return st;
            img = false;
            if (!last || alt) {
                src = last ? alt : dst;
                cur = other;
            }
        }
    }
    return MR_OK;
}

mr_status mr_gpu_wavelet_adjoint(mr_gpu_wavelet *w, const int64_t shift[3], const float *y, float *x)
{
    const int levels = wl_max_levels(&w->g);
    int cur = -1; /* the work vector holding the last pass's output, -1: none yet */
    for (int j = levels - 1; j >= 0; j--) {
        const wl_pass p = wl_level(w, shift, j);
        int axes[3];
        const int k = wl_axes(&w->g, j, axes);
        for (int i = 0; i < k; i++) {
            const int axis = axes[k - 1 - i], other = cur == 0 ? 1 : 0;
            const float2 *src = i == 0 ? (const float2 *)y : w->work[cur];
            const float2 *alt = i == 0 && cur >= 0 ? w->work[cur] : NULL;
            const bool img = j == 0 && i == k - 1;
            const mr_status st = wl_launch(w, axis, img, true, p, src, alt, img ? (float2 *)x : w->work[other], NULL);
            if (st != MR_OK)
                return st;
            cur = other;
        }
    }
    return MR_OK;
}
