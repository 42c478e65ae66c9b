/* The GPU NUFFT's tiles and its device memory (gpu/nufft.h): plain arithmetic, built with and without
 * CUDA, so that a plan's working set is known before anything is allocated. */
#include "nufft.h"

#include <stddef.h>

/* Shared memory one spreading block may take when the device's limit is not given (estimates). */
#define TILE_BUDGET_DEFAULT (96 * 1024)

static int64_t coef_bytes(const mr_gpu_nufft_kernel *k)
{
    const int64_t b = (int64_t)(k->degree + 1) * MR_GPU_NUFFT_COEF_STRIDE * (k->f64 ? 8 : 4);
    return (b + 15) / 16 * 16;
}

int64_t mr_gpu_nufft_tiles(const mr_gpu_nufft_kernel *k, int bin[3])
{
    static const int cand3[][3] = {{16, 16, 16}, {16, 16, 8}, {16, 8, 8}, {8, 8, 8}, {8, 8, 4}, {8, 4, 4},
                                   {4, 4, 4}, {4, 4, 2}, {2, 2, 2}, {1, 1, 1}};
    static const int cand2[][2] = {{64, 64}, {64, 32}, {32, 32}, {32, 16}, {16, 16}, {16, 8}, {8, 8}, {4, 4}, {1, 1}, {1, 1}};
    static const int cand1[] = {2048, 1024, 512, 256, 128, 64, 32, 16, 8, 1};
    int act[3], dim = 0;
    for (int a = 0; a < 3; a++) {
        act[a] = k->fine[a] > 1;
        dim += act[a];
    }
    const int64_t budget = k->smem_limit > 0 ? k->smem_limit : TILE_BUDGET_DEFAULT, cell = k->f64 ? 16 : 8;
    const int64_t es = k->f64 ? 8 : 4;
    const int64_t batch = (int64_t)MR_GPU_NUFFT_BATCH * (3 * k->width * es + 2 * es + 3 * 4);
    const int ncand = 10;
    int64_t bytes = 0;
    for (int c = 0; c < ncand; c++) {
        int want[3], j = 0;
        for (int a = 0; a < 3; a++) {
            if (!act[a]) {
                want[a] = 1;
                continue;
            }
            want[a] = dim == 3 ? cand3[c][j] : dim == 2 ? cand2[c][j] : cand1[c];
            j++;
        }
        int64_t cells = 1;
        for (int a = 0; a < 3; a++) {
            bin[a] = want[a];
            cells *= act[a] ? want[a] + k->width : 1;
        }
        bytes = coef_bytes(k) + (batch + 15) / 16 * 16 + cells * cell;
        if (bytes <= budget)
            break;
    }
    return bytes;
}

int64_t mr_gpu_nufft_bytes(const mr_grid *g, int64_t m, const mr_gpu_nufft_kernel *k)
{
    int bin[3];
    (void)mr_gpu_nufft_tiles(k, bin);
    const int64_t fl = k->f64 ? 8 : 4;
    int64_t nfine = 1, nbins = 1, nmodes = 0;
    for (int a = 0; a < 3; a++) {
        nfine *= k->fine[a];
        nbins *= (k->fine[a] + bin[a] - 1) / bin[a];
        nmodes += g->n[a];
    }
    const int64_t grid = nfine * 2 * fl, fft_work = grid; /* cuFFT's work area: at most the data, assumed */
    const int64_t sorted = m * (4 + 3 * 4 + 3 * fl);  /* permutation, first indices, offsets */
    /* plan only: the sort's keys and values (two buffers each) and its work space, first indices and
     * offsets in the caller's order, the trajectory */
    const int64_t temp = m * (4 * 4 + 3 * 4 + 3 * fl) + (int64_t)3 * 4 * m + m * 4 + ((int64_t)1 << 20);
    int64_t cells = 1;
    for (int a = 0; a < 3; a++)
        cells *= k->fine[a] > 1 ? bin[a] + k->width : 1;
    /* counts; the subproblems and split tiles; the scratch slots of the split tiles' parts: at most 2 m /
     * SPLIT in all (every split tile has more than SPLIT samples), at most MR_GPU_NUFFT_SCRATCH bytes a
     * launch unless one tile alone needs more (m / SPLIT + 1 parts at most) */
    const int64_t limit = k->scratch_limit > 0 ? k->scratch_limit : MR_GPU_NUFFT_SCRATCH;
    const int64_t parts = 2 * m / MR_GPU_NUFFT_SPLIT + 1, cap = limit / (cells * 2 * fl) + 1;
    const int64_t one = m / MR_GPU_NUFFT_SPLIT + 1, most = cap > one ? cap : one;
    const int64_t slots = parts < most ? parts : most;
    const int64_t bins = nbins * 4 + (nbins + parts) * 32 + slots * cells * 2 * fl;
    return grid + fft_work + sorted + temp + bins + nmodes * fl + coef_bytes(k);
}
