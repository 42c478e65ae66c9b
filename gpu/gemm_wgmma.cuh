/* The split-TF32 adjoint kernel on the warpgroup MMA of sm_90a (MR_GEMM_ENGINE_WGMMA), included by
 * gpu/gemm.cu after the helpers it shares with the mma.sync kernels (the tile, the cp.async stage loads,
 * the column table, the A-fragment formation and the partial-sum layout). Compiled only when gemm.cu is
 * built for sm_90a (MR_HAVE_WGMMA, CMakeLists.txt); the engine is offered on compute capability 9.0.
 *
 * CTA tile as in mr_k_mma: 64 columns (128 real rows of P) x 128 rows of T, 8 warps = 2 warpgroups.
 * Warp w owns the m16 tile w of P: it forms its A fragments (hi and lo) in its own registers, no shared
 * A tile. Warpgroup wg issues wgmma.mma_async m64n128k8 (A from registers, B = T from shared memory
 * through a matrix descriptor) for rows 64 wg .. 64 wg + 63 and all 128 T rows.
 *
 * T arrives per stage as float rows (cp.async, the staging of mr_mma_load); all threads split it into
 * TF32 hi and lo in the "core matrix" order wgmma reads without swizzle (8 T rows x 4 samples = 128
 * contiguous bytes per core matrix; core (n8, k4) at (8 n8 + k4) 128 bytes: LBO = 128 bytes between
 * neighbours in K, SBO = 1024 bytes between neighbours in N), double-buffered: stage kt + 1 is split while
 * the tensor cores run stage kt. Written by ordinary stores, read by the async proxy: each thread fences
 * (fence.proxy.async) before the barrier that publishes the buffer.
 *
 * Per pair of k8 steps (16 samples): t = sum of the six products A_lo B_hi, A_hi B_lo, A_hi B_hi from zero
 * (the tensor core's truncating accumulation sees 48 products, as in the split-FP16 kernel), then
 * acc += t in FP32 with round-to-nearest. Accumulators: acc and t, 64 floats each per thread. */

#define MR_WG_BUF (MR_BN * MR_BK) /* floats of one split T buffer (hi or lo) of a stage */
static_assert(MR_BM == 128 && MR_BN == 128 && MR_BK == 32 && MR_THREADS == 256,
              "the wgmma kernel's warp-to-tile map and its split loop assume this tile");

__device__ __forceinline__ uint64_t mr_wg_desc(const float *smem)
{
    const uint32_t a = (uint32_t)__cvta_generic_to_shared(smem);
    return (uint64_t)((a & 0x3FFFFu) >> 4) | ((uint64_t)(128 >> 4) << 16) | ((uint64_t)(1024 >> 4) << 32);
}

/* d (+)= a . B, m64n128k8, TF32 in, FP32 accumulate; scale_d = 0 starts from zero. */
__device__ __forceinline__ void mr_wgmma(float d[64], const uint32_t a[4], uint64_t desc, int scale_d)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "
                 "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "
                 "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, "
                 "%56, %57, %58, %59, %60, %61, %62, %63 "
                 "}, {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),
                   "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),
                   "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),
                   "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),
                   "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]),
                   "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]),
                   "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
                   "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(scale_d));
#endif
}

/* The synchronisation of the asynchronous MMA; empty in a pass for another architecture (the kernel is
 * only launched on compute capability 9.0, from the sm_90a code). */
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define MR_WG_ASM(text) asm volatile(text ::: "memory")
#else
#define MR_WG_ASM(text) ((void)0)
#endif
__device__ __forceinline__ void mr_wg_fence(void) { MR_WG_ASM("wgmma.fence.sync.aligned;\n"); }
__device__ __forceinline__ void mr_wg_commit(void) { MR_WG_ASM("wgmma.commit_group.sync.aligned;\n"); }
__device__ __forceinline__ void mr_wg_wait0(void) { MR_WG_ASM("wgmma.wait_group.sync.aligned 0;\n"); }
__device__ __forceinline__ void mr_proxy_fence(void) { MR_WG_ASM("fence.proxy.async.shared::cta;\n"); }

/* Registers the compiler must keep until here (the asynchronous MMA reads or writes them). */
template <int N> __device__ __forceinline__ void mr_wg_keep_f(float (&r)[N])
{
#pragma unroll
    for (int i = 0; i < N; i++)
        asm volatile("" : "+f"(r[i])::"memory");
}
template <int N> __device__ __forceinline__ void mr_wg_keep_u(uint32_t (&r)[N])
{
#pragma unroll
    for (int i = 0; i < N; i++)
        asm volatile("" : "+r"(r[i])::"memory");
}

/* Split stage `ts` of T (MR_BN rows of MR_TS_LD floats) into hi and lo in core-matrix order. Eight
 * consecutive threads take eight consecutive rows at one k4: conflict-free 128-bit loads (row stride 36
 * floats) and one contiguous 128-byte core matrix per store. */
__device__ __forceinline__ void mr_wg_split(const float *ts, float *hb, float *lb, int tid)
{
#pragma unroll
    for (int i = 0; i < MR_BN * MR_BK / 4 / MR_THREADS; i++) {
        const int e = tid + MR_THREADS * i;
        const int rr = e & 7, k4 = (e >> 3) & 7, n8 = e >> 6;
        const float4 v = *(const float4 *)(ts + (n8 * 8 + rr) * MR_TS_LD + 4 * k4);
        uint32_t h[4], l[4];
        mr_split(v.x, &h[0], &l[0]);
        mr_split(v.y, &h[1], &l[1]);
        mr_split(v.z, &h[2], &l[2]);
        mr_split(v.w, &h[3], &l[3]);
        const int off = (n8 * 8 + k4) * 32 + rr * 4;
        *(uint4 *)(hb + off) = make_uint4(h[0], h[1], h[2], h[3]);
        *(uint4 *)(lb + off) = make_uint4(l[0], l[1], l[2], l[3]);
    }
}

/* The A fragments (hi, lo) of warp w for the k8 steps 2 pr and 2 pr + 1 of stage st. */
struct mr_wg_a {
    uint32_t h0[4], l0[4], h1[4], l1[4];
};
__device__ __forceinline__ void mr_wg_form(const mr_mma_smem &sm, int st, int pr, int w, int lane, mr_wg_a &a)
{
    mr_mma_frag<0>(sm, st, w, 2 * pr, lane, a.h0, a.l0);
    mr_mma_frag<0>(sm, st, w, 2 * pr + 1, lane, a.h1, a.l1);
}

/* t = the six products of one pair of k8 steps (buffers hb, lb of the stage), issued and committed. */
__device__ __forceinline__ void mr_wg_issue(float t[64], mr_wg_a &a, const float *hb, const float *lb, int pr)
{
    const int o0 = 2 * (2 * pr) * 32, o1 = 2 * (2 * pr + 1) * 32; /* k4 = 2 k8: 2 k8 core matrices of 32 floats */
    mr_wg_fence();
    mr_wgmma(t, a.l0, mr_wg_desc(hb + o0), 0);
    mr_wgmma(t, a.h0, mr_wg_desc(lb + o0), 1);
    mr_wgmma(t, a.h0, mr_wg_desc(hb + o0), 1);
    mr_wgmma(t, a.l1, mr_wg_desc(hb + o1), 1);
    mr_wgmma(t, a.h1, mr_wg_desc(lb + o1), 1);
    mr_wgmma(t, a.h1, mr_wg_desc(hb + o1), 1);
    mr_wg_commit();
}

/* Wait for t, keep a's registers alive until then, acc += t. */
__device__ __forceinline__ void mr_wg_retire(float acc[64], float (&t)[64], mr_wg_a &a)
{
    mr_wg_wait0();
    mr_wg_keep_f(t);
    mr_wg_keep_u(a.h0);
    mr_wg_keep_u(a.l0);
    mr_wg_keep_u(a.h1);
    mr_wg_keep_u(a.l1);
#pragma unroll
    for (int i = 0; i < 64; i++)
        acc[i] += t[i];
}

__global__ void __launch_bounds__(MR_THREADS, 1) mr_k_wgmma(const mr_mma_args a)
{
    extern __shared__ __align__(16) unsigned char mr_smem[];
    float *const tb = (float *)mr_smem; /* [2 buffers][hi, lo][MR_WG_BUF] */
    mr_mma_smem sm;
    int2 td;
    const int nk = mr_mma_begin<MR_TS_LD, MR_AY_LD>(a, sm, tb + 4 * MR_WG_BUF, &td);
    const int tile = blockIdx.x, j0 = blockIdx.y * MR_BN, split = blockIdx.z;
    const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
    const long long kbeg = (long long)split * a.ksplit;

    float acc[64], t[64];
#pragma unroll
    for (int i = 0; i < 64; i++)
        acc[i] = t[i] = 0.0f;
    mr_wg_a A0, A1;

    for (int s = 0; s < 2; s++) {
        if (s < nk)
            mr_mma_load<MR_TS_LD, MR_AY_LD>(a, sm, s, kbeg + (long long)s * MR_BK, j0, td, tid);
        mr_cp_commit();
    }
    if (nk > 0) {
        mr_cp_wait<1>();
        __syncthreads();
        mr_wg_split(sm.Ts, tb, tb + MR_WG_BUF, tid);
        mr_proxy_fence();
        mr_wg_form(sm, 0, 0, w, lane, A0);
    }
#pragma unroll 1
    for (int kt = 0; kt < nk; kt++) {
        const int st = kt % MR_STAGES, b = kt & 1;
        /* stage kt + 1 landed; buffer b split and fenced; everyone done with iteration kt - 1 */
        mr_cp_wait<0>();
        __syncthreads();
        const int kn = kt + 2;
        if (kn < nk)
            mr_mma_load<MR_TS_LD, MR_AY_LD>(a, sm, kn % MR_STAGES, kbeg + (long long)kn * MR_BK, j0, td, tid);
        mr_cp_commit();
        const float *hb = tb + 2 * b * MR_WG_BUF, *lb = hb + MR_WG_BUF;

        mr_wg_issue(t, A0, hb, lb, 0);
        if (kt + 1 < nk) {
            float *nh = tb + 2 * (b ^ 1) * MR_WG_BUF;
            mr_wg_split(sm.Ts + ((kt + 1) % MR_STAGES) * MR_BN * MR_TS_LD, nh, nh + MR_WG_BUF, tid);
            mr_proxy_fence();
        }
        mr_wg_form(sm, st, 1, w, lane, A1);
        mr_wg_retire(acc, t, A0);

        mr_wg_issue(t, A1, hb, lb, 1);
        if (kt + 1 < nk)
            mr_wg_form(sm, (kt + 1) % MR_STAGES, 0, w, lane, A0);
        mr_wg_retire(acc, t, A1);
    }

    /* the partial sums: rows g (re) and g + 8 (im) of column 8 w + g; T rows 8 nb + 2q, + 1 */
    const int g = lane >> 2, q = lane & 3;
    float *part = a.part + (size_t)split * a.split_stride;
    const int cl = tile * MR_BC + w * 8 + g;
#pragma unroll
    for (int nb = 0; nb < MR_BN / 8; nb++) {
        const int j = j0 + nb * 8 + 2 * q;
        *(float2 *)(part + (size_t)j * a.ld + 2 * cl) = make_float2(acc[4 * nb], acc[4 * nb + 2]);
        *(float2 *)(part + (size_t)(j + 1) * a.ld + 2 * cl) = make_float2(acc[4 * nb + 1], acc[4 * nb + 3]);
    }
}

static constexpr size_t mr_wg_smem_bytes(void)
{
    return (size_t)4 * MR_WG_BUF * sizeof(float) + mr_mma_stage_bytes(MR_TS_LD, MR_AY_LD);
}
