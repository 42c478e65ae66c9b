/* The option helpers of gpu/gemm.h and gpu/sums.h: plain C, built with and without CUDA. */
#include <string.h>

#include "gemm.h"
#include "sums.h"

static const char *const engine_names[] = {"sfu", "tf32x3", "fp64", "fp16x3"}; /* mr_sums_engine order */

const char *mr_sums_engine_name(mr_sums_engine e)
{
    return e >= MR_SUMS_SFU && e <= MR_SUMS_FP16X3 ? engine_names[e] : "unknown";
}

void mr_gemm_opts_default(mr_gemm_opts *o)
{
    memset(o, 0, sizeof *o);
    o->device = 0;
    o->mem_fraction = 0.5;
    o->split_samples = 4096;
    o->hermitian = 1;
    o->engine = MR_GEMM_ENGINE_AUTO;
    o->variant = 0;
}

static const char *const precision_names[] = {"tf32x3", "fp64", "fp16x3"};

const char *mr_gemm_precision_name(mr_gemm_precision p)
{
    return p >= MR_GEMM_TF32X3 && p <= MR_GEMM_FP16X3 ? precision_names[p] : "unknown";
}

mr_status mr_gemm_precision_parse(const char *text, mr_gemm_precision *p)
{
    for (int i = MR_GEMM_TF32X3; text && i <= MR_GEMM_FP16X3; i++)
        if (strcmp(text, precision_names[i]) == 0) {
            *p = (mr_gemm_precision)i;
            return MR_OK;
        }
    return mr_error(MR_EINVAL, "precision '%s': expected tf32x3, fp16x3 or fp64", text ? text : "(null)");
}

int64_t mr_gemm_table_bytes(const mr_grid *g, int64_t m, mr_gemm_precision prec)
{
    const int64_t rows = (g->n[0] + MR_GEMM_ROW_ALIGN - 1) / MR_GEMM_ROW_ALIGN * MR_GEMM_ROW_ALIGN;
    const int64_t kpad = (m + MR_GEMM_SAMPLE_ALIGN - 1) / MR_GEMM_SAMPLE_ALIGN * MR_GEMM_SAMPLE_ALIGN;
    return (rows + 2 * g->n[1] + 2 * g->n[2]) * kpad * (prec == MR_GEMM_FP64 ? 8 : 4);
}

int64_t mr_gpu_sums_layout(const mr_grid *g, int64_t m, mr_sums_engine e, int64_t cap, int *nchunks,
                           int64_t *work_bytes)
{
    *nchunks = 1;
    *work_bytes = 0;
    const int64_t nv = mr_grid_size(g);
    if (e == MR_SUMS_SFU) /* the kernels: staged samples and an output pass */
        return m * 8 * 4 + nv * 8;
    int64_t work = cap / 4;
    if (work > MR_SUMS_MAX_WORK)
        work = MR_SUMS_MAX_WORK;
    if (work < ((int64_t)256 << 20))
        work = (int64_t)256 << 20;
    *work_bytes = work;
    const int64_t es = e == MR_SUMS_FP64 ? 8 : 4;
    const int64_t rows = (g->n[0] + MR_GEMM_ROW_ALIGN - 1) / MR_GEMM_ROW_ALIGN * MR_GEMM_ROW_ALIGN;
    /* per sample: the x table (rows), the y and z tables (complex), the weights times the z table (every plane) */
    const int64_t per_sample = (rows + 2 * g->n[1] + 2 * g->n[2] + 2 * g->n[2]) * es;
    const int64_t align = MR_GEMM_SAMPLE_ALIGN;
    int64_t peak = per_sample * ((m + align - 1) / align * align) + work;
    if (peak <= cap)
        return peak;
    const int64_t acc = nv * 8, avail = cap - work - acc;
    int n = avail > 0 ? (int)((per_sample * m + avail - 1) / avail) : MR_SUMS_MAX_CHUNKS;
    if (n < 2)
        n = 2;
    if (n > MR_SUMS_MAX_CHUNKS)
        n = MR_SUMS_MAX_CHUNKS;
    const int64_t chunk = ((m + n - 1) / n + align - 1) / align * align;
    *nchunks = n;
    return per_sample * chunk + work + acc;
}

int64_t mr_gpu_sums_bytes(const int64_t matrix[3], int64_t m, mr_sums_engine e, int64_t cap)
{
    const mr_grid gq = mr_grid_q(matrix);
    int n;
    int64_t work;
    return mr_gpu_sums_layout(&gq, m, e, cap, &n, &work);
}
