/* The CPU NUFFT's inner loops for one floating-point type (included by solver/nufft.c twice:
 * NUFFT_FLT float with NUFFT_SFX(x) x##_f32, then double with x##_f64). The arrays of the caller may
 * be float or double whatever the plan's type (in_f64 / out_f64): values are converted as they are
 * read and written. See nufft.h and docs/NUFFT.md for the maths. */

/* The w kernel values of offset v in [-1, 1) (nufft_kernel.h): Horner on every point at once. */
static inline void NUFFT_SFX(kernel_vals)(const NUFFT_FLT *coef, int degree, int wpad, NUFFT_FLT v, NUFFT_FLT *ker)
{
    for (int i = 0; i < wpad; i++)
        ker[i] = coef[degree * MR_NUFFT_MAX_WIDTH + i];
    for (int d = degree - 1; d >= 0; d--)
        for (int i = 0; i < wpad; i++)
            ker[i] = ker[i] * v + coef[d * MR_NUFFT_MAX_WIDTH + i];
}

/* Footprint of sorted sample s along axis a: count, first index (wrapped), whether it is contiguous,
 * and the wrapped indices (when not) and the kernel values. */
static inline int NUFFT_SFX(axis)(const mr_nufft *p, const NUFFT_FLT *coef, int a, int64_t s, int64_t *idx,
                                  NUFFT_FLT *ker)
{
    if (!p->par.active[a]) {
        idx[0] = 0;
        ker[0] = 1;
        return 1;
    }
    const NUFFT_FLT *frac = (const NUFFT_FLT *)p->frac;
    NUFFT_SFX(kernel_vals)(coef, p->par.degree, p->wpad, frac[3 * s + a], ker);
    const int64_t nf = p->par.fine[a];
    int64_t j = p->base[3 * s + a];
    if (j < 0)
        j += nf;
    for (int i = 0; i < p->par.width; i++) {
        idx[i] = j;
        if (++j == nf)
            j = 0;
    }
    return p->par.width;
}

static inline double NUFFT_SFX(read)(const void *in, int f64, int64_t i)
{
    return f64 ? ((const double *)in)[i] : (double)((const float *)in)[i];
}

/* Spread the sorted samples [b, e) of one coil's values onto the complex fine grid. vw: the width padded
 * to 8, 16 or 24, a literal at every call so that the row update is a fixed-length vector loop (the padded
 * kernel values are 0; a row's padding stays in that row, which only this slab's thread writes). */
static inline void NUFFT_SFX(spread_range_w)(const mr_nufft *p, const NUFFT_FLT *coef, const void *in, int in_f64,
                                             int real, NUFFT_FLT *grid, int64_t b, int64_t e, const int vw,
                                             const int ncomp)
{
    int64_t ix[MR_NUFFT_MAX_WIDTH], iy[MR_NUFFT_MAX_WIDTH], iz[MR_NUFFT_MAX_WIDTH];
    NUFFT_FLT kx[MR_NUFFT_MAX_WIDTH], ky[MR_NUFFT_MAX_WIDTH], kz[MR_NUFFT_MAX_WIDTH], vx[2 * MR_NUFFT_MAX_WIDTH];
    const int64_t nfx = p->par.fine[0], nfy = p->par.fine[1];
    for (int64_t s = b; s < e; s++) {
        const int cx = NUFFT_SFX(axis)(p, coef, 0, s, ix, kx);
        const int cy = NUFFT_SFX(axis)(p, coef, 1, s, iy, ky);
        const int cz = NUFFT_SFX(axis)(p, coef, 2, s, iz, kz);
        const int64_t k = p->perm[s];
        const NUFFT_FLT vr = (NUFFT_FLT)NUFFT_SFX(read)(in, in_f64, real ? k : 2 * k);
        const NUFFT_FLT vi = real ? 0 : (NUFFT_FLT)NUFFT_SFX(read)(in, in_f64, 2 * k + 1);
        for (int i = 0; i < vw; i++) {
            if (ncomp == 2) {
                vx[2 * i] = kx[i] * vr;
                vx[2 * i + 1] = kx[i] * vi;
            } else {
                vx[i] = kx[i] * vr;
            }
        }
        const int padded = p->pad_rows && ix[0] + vw <= nfx;
        for (int c = 0; c < cz; c++)
            for (int d = 0; d < cy; d++) {
                const NUFFT_FLT kzy = kz[c] * ky[d];
                NUFFT_FLT *row = grid + ncomp * ((iz[c] * nfy + iy[d]) * nfx);
                if (padded) {
                    NUFFT_FLT *r = row + ncomp * ix[0];
                    for (int t = 0; t < ncomp * vw; t++)
                        r[t] += kzy * vx[t];
                } else {
                    for (int i = 0; i < cx; i++) {
                        row[ncomp * ix[i]] += kzy * vx[ncomp * i];
                        if (ncomp == 2)
                            row[2 * ix[i] + 1] += kzy * vx[2 * i + 1];
                    }
                }
            }
    }
}

/* ncomp 2: a complex grid; 1: a real grid (real values only). Literal arguments: specialised loops. */
static void NUFFT_SFX(spread_range)(const mr_nufft *p, const NUFFT_FLT *coef, const void *in, int in_f64, int real,
                                    NUFFT_FLT *grid, int64_t b, int64_t e, int ncomp)
{
#define NUFFT_SPREAD_W(VW)                                                                                    \
    do {                                                                                                      \
        if (ncomp == 2)                                                                                       \
            NUFFT_SFX(spread_range_w)(p, coef, in, in_f64, real, grid, b, e, VW, 2);                         \
        else                                                                                                  \
            NUFFT_SFX(spread_range_w)(p, coef, in, in_f64, 1, grid, b, e, VW, 1);                            \
    } while (0)
    NUFFT_BY_WPAD(p, NUFFT_SPREAD_W);
#undef NUFFT_SPREAD_W
}

/* grid := sum_m a_m phi(j - u_m): zeroed, then the slabs of one colour in parallel, then the other. */
static void NUFFT_SFX(spread)(const mr_nufft *p, const void *in, int in_f64, int real, NUFFT_FLT *grid, int ncomp)
{
    const NUFFT_FLT *coef = (const NUFFT_FLT *)p->coef;
    const int64_t total = ncomp * p->nfine;
#pragma omp parallel for num_threads(p->threads) schedule(static)
    for (int64_t i = 0; i < total; i++)
        grid[i] = 0;
    if (p->nslabs == 1) {
        NUFFT_SFX(spread_range)(p, coef, in, in_f64, real, grid, 0, p->m, ncomp);
        return;
    }
    for (int colour = 0; colour < 2; colour++) {
#pragma omp parallel for num_threads(p->threads) schedule(dynamic, 1)
        for (int s = colour; s < p->nslabs; s += 2)
            NUFFT_SFX(spread_range)(p, coef, in, in_f64, real, grid, p->slab_start[s], p->slab_start[s + 1], ncomp);
    }
}

/* out_m = sum_j grid_j phi(j - u_m) for the sorted samples [b, e) (written in the caller's order), complex;
 * vw as for spreading (padded kernel values are 0, so the padding reads add nothing). */
static inline void NUFFT_SFX(interp_range_w)(const mr_nufft *p, const NUFFT_FLT *coef, const NUFFT_FLT *grid,
                                             void *out, int out_f64, int64_t b, int64_t e, const int vw,
                                             const int ncomp)
{
    const int64_t nfx = p->par.fine[0], nfy = p->par.fine[1];
    int64_t ix[MR_NUFFT_MAX_WIDTH], iy[MR_NUFFT_MAX_WIDTH], iz[MR_NUFFT_MAX_WIDTH];
    NUFFT_FLT kx[MR_NUFFT_MAX_WIDTH], ky[MR_NUFFT_MAX_WIDTH], kz[MR_NUFFT_MAX_WIDTH], k2[2 * MR_NUFFT_MAX_WIDTH];
    for (int64_t s = b; s < e; s++) {
        const int cx = NUFFT_SFX(axis)(p, coef, 0, s, ix, kx);
        const int cy = NUFFT_SFX(axis)(p, coef, 1, s, iy, ky);
        const int cz = NUFFT_SFX(axis)(p, coef, 2, s, iz, kz);
        const int padded = cx > 1 && ix[0] + vw <= nfx; /* reads: any row may be padded */
        NUFFT_FLT acc[2 * MR_NUFFT_MAX_WIDTH];
        for (int i = 0; i < vw; i++) {
            k2[2 * i] = k2[2 * i + 1] = kx[i];
            acc[2 * i] = acc[2 * i + 1] = 0;
        }
        NUFFT_FLT ar = 0, ai = 0;
        for (int c = 0; c < cz; c++)
            for (int d = 0; d < cy; d++) {
                const NUFFT_FLT *row = grid + ncomp * ((iz[c] * nfy + iy[d]) * nfx);
                const NUFFT_FLT kzy = kz[c] * ky[d];
                if (padded) {
                    const NUFFT_FLT *r = row + ncomp * ix[0];
                    for (int t = 0; t < ncomp * vw; t++)
                        acc[t] += kzy * r[t];
                } else {
                    NUFFT_FLT rr = 0, ri = 0;
                    for (int i = 0; i < cx; i++) {
                        rr += kx[i] * row[ncomp * ix[i]];
                        if (ncomp == 2)
                            ri += kx[i] * row[2 * ix[i] + 1];
                    }
                    ar += kzy * rr;
                    ai += kzy * ri;
                }
            }
        if (padded) {
            if (ncomp == 2)
                for (int i = 0; i < vw; i++) {
                    ar += k2[2 * i] * acc[2 * i];
                    ai += k2[2 * i + 1] * acc[2 * i + 1];
                }
            else
                for (int i = 0; i < vw; i++)
                    ar += kx[i] * acc[i];
        }
        const int64_t k = p->perm[s];
        if (ncomp == 1) { /* a real result */
            if (out_f64)
                ((double *)out)[k] = ar;
            else
                ((float *)out)[k] = (float)ar;
        } else if (out_f64) {
            ((double *)out)[2 * k] = ar;
            ((double *)out)[2 * k + 1] = ai;
        } else {
            ((float *)out)[2 * k] = (float)ar;
            ((float *)out)[2 * k + 1] = (float)ai;
        }
    }
}

/* Interpolation at every sample; threads take contiguous runs of the sorted samples. ncomp 2: complex grid
 * and values; 1: real. */
static void NUFFT_SFX(interp)(const mr_nufft *p, const NUFFT_FLT *grid, void *out, int out_f64, int ncomp)
{
    const NUFFT_FLT *coef = (const NUFFT_FLT *)p->coef;
    const int64_t chunk = 1024, nchunks = (p->m + chunk - 1) / chunk;
#pragma omp parallel for num_threads(p->threads) schedule(static)
    for (int64_t c = 0; c < nchunks; c++) {
        const int64_t b = c * chunk, e = b + chunk < p->m ? b + chunk : p->m;
#define NUFFT_INTERP_W(VW)                                                                                    \
    do {                                                                                                      \
        if (ncomp == 2)                                                                                       \
            NUFFT_SFX(interp_range_w)(p, coef, grid, out, out_f64, b, e, VW, 2);                             \
        else                                                                                                  \
            NUFFT_SFX(interp_range_w)(p, coef, grid, out, out_f64, b, e, VW, 1);                             \
    } while (0)
        NUFFT_BY_WPAD(p, NUFFT_INTERP_W);
#undef NUFFT_INTERP_W
    }
}

/* Fine-grid index of output index i on axis a (p = i - center, taken modulo n_f). */
static inline int64_t NUFFT_SFX(fine_of)(const mr_nufft *p, int a, int64_t i)
{
    const int64_t nf = p->par.fine[a];
    return ((i - p->g.center[a]) % nf + nf) % nf;
}

typedef NUFFT_FLT NUFFT_SFX(cpx)[2];

/* The y pass's group g of a kept plane: the first of its nb (<= gb) adjacent columns. */
static inline NUFFT_SFX(cpx) *NUFFT_SFX(column_group)(const mr_nufft *p, const pass_geom *G, NUFFT_SFX(cpx) *grid,
                                                      int64_t g, int64_t cgroups, int64_t *nb)
{
    const int64_t iz = g / cgroups, x0 = (g % cgroups) * G->gb;
    *nb = G->nfx - x0 < G->gb ? G->nfx - x0 : G->gb;
    return grid + NUFFT_SFX(fine_of)(p, 2, iz) * G->plane + x0;
}

/* The fine-grid row of kept row r = iz n_y + iy. */
static inline NUFFT_SFX(cpx) *NUFFT_SFX(kept_row)(const mr_nufft *p, const pass_geom *G, NUFFT_SFX(cpx) *grid, int64_t r)
{
    return grid + (NUFFT_SFX(fine_of)(p, 2, r / G->ny) * G->nfy + NUFFT_SFX(fine_of)(p, 1, r % G->ny)) * G->nfx;
}

/* Type 1 after spreading: the FFT (e^{+i}) as passes of line groups, pruned to the outputs that are kept
 * (z on every line; y on the n_z kept planes; x on the n_z n_y kept rows), the x pass fused with the
 * deconvolution into out (caller's type). */
static void NUFFT_SFX(type1_passes)(const mr_nufft *p, NUFFT_FLT *grid_f, void *out, int out_f64)
{
    NUFFT_SFX(cpx) *grid = (NUFFT_SFX(cpx) *)grid_f;
    const pass_geom G = pass_geom_of(p);
#pragma omp parallel num_threads(p->threads)
    {
        NUFFT_SFX(cpx) *buf = (NUFFT_SFX(cpx) *)p->fbuf + (size_t)omp_get_thread_num() * p->fbuf_stride;
        if (G.nfz > 1) {
            const int64_t groups = (G.plane + G.gb - 1) / G.gb;
#pragma omp for schedule(static)
            for (int64_t g = 0; g < groups; g++) {
                const int64_t l0 = g * G.gb, nb = G.plane - l0 < G.gb ? G.plane - l0 : G.gb;
                for (int64_t j = 0; j < G.nfz; j++)
                    for (int64_t b = 0; b < G.gb; b++) {
                        buf[j * G.gb + b][0] = b < nb ? grid[j * G.plane + l0 + b][0] : 0;
                        buf[j * G.gb + b][1] = b < nb ? grid[j * G.plane + l0 + b][1] : 0;
                    }
                NUFFT_EXEC(p->plan[2][0], buf);
                for (int64_t i = 0; i < G.nz; i++) {
                    const int64_t j = NUFFT_SFX(fine_of)(p, 2, i);
                    memcpy(grid + j * G.plane + l0, buf + j * G.gb, (size_t)nb * sizeof *buf);
                }
            }
        }
        if (G.nfy > 1) {
            const int64_t cgroups = (G.nfx + G.gb - 1) / G.gb;
#pragma omp for schedule(static)
            for (int64_t g = 0; g < G.nz * cgroups; g++) {
                int64_t nb;
                NUFFT_SFX(cpx) *base = NUFFT_SFX(column_group)(p, &G, grid, g, cgroups, &nb);
                for (int64_t j = 0; j < G.nfy; j++)
                    for (int64_t b = 0; b < G.gb; b++) {
                        buf[j * G.gb + b][0] = b < nb ? base[j * G.nfx + b][0] : 0;
                        buf[j * G.gb + b][1] = b < nb ? base[j * G.nfx + b][1] : 0;
                    }
                NUFFT_EXEC(p->plan[1][0], buf);
                for (int64_t i = 0; i < G.ny; i++) {
                    const int64_t j = NUFFT_SFX(fine_of)(p, 1, i);
                    memcpy(base + j * G.nfx, buf + j * G.gb, (size_t)nb * sizeof *buf);
                }
            }
        }
        const int64_t rows = G.nz * G.ny, rgroups = (rows + G.gbx - 1) / G.gbx;
#pragma omp for schedule(static)
        for (int64_t g = 0; g < rgroups; g++) {
            const int64_t r0 = g * G.gbx, nb = rows - r0 < G.gbx ? rows - r0 : G.gbx;
            for (int64_t b = 0; b < G.gbx; b++) {
                if (b < nb)
                    memcpy(buf + b * G.nfx, NUFFT_SFX(kept_row)(p, &G, grid, r0 + b), (size_t)G.nfx * sizeof *buf);
                else
                    memset(buf + b * G.nfx, 0, (size_t)G.nfx * sizeof *buf);
            }
            if (G.nfx > 1)
                NUFFT_EXEC(p->plan[0][0], buf);
            for (int64_t b = 0; b < nb; b++) {
                const int64_t r = r0 + b, iz = r / G.ny, iy = r % G.ny;
                const double dzy = G.dz[iz] * G.dy[iy];
                const NUFFT_SFX(cpx) *src = buf + b * G.nfx;
                for (int64_t ix = 0; ix < G.nx; ix++) {
                    const int64_t fx = NUFFT_SFX(fine_of)(p, 0, ix);
                    const double s = dzy * G.dx[ix];
                    const int64_t o = 2 * (r * G.nx + ix);
                    if (out_f64) {
                        ((double *)out)[o] = s * src[fx][0];
                        ((double *)out)[o + 1] = s * src[fx][1];
                    } else {
                        ((float *)out)[o] = (float)(s * src[fx][0]);
                        ((float *)out)[o + 1] = (float)(s * src[fx][1]);
                    }
                }
            }
        }
    }
}

/* Type 2 before interpolation: x / phi^ placed on the fine grid and the FFT (e^{-i}) as passes pruned to
 * the input that is not zero (x on the n_z n_y rows with data, fused with the deconvolution; y on the n_z
 * planes with data; z on every line), reading only what earlier passes wrote (no zeroing of the grid). */
static void NUFFT_SFX(type2_passes)(const mr_nufft *p, const void *x, int in_f64, NUFFT_FLT *grid_f)
{
    NUFFT_SFX(cpx) *grid = (NUFFT_SFX(cpx) *)grid_f;
    const pass_geom G = pass_geom_of(p);
#pragma omp parallel num_threads(p->threads)
    {
        NUFFT_SFX(cpx) *buf = (NUFFT_SFX(cpx) *)p->fbuf + (size_t)omp_get_thread_num() * p->fbuf_stride;
        const int64_t rows = G.nz * G.ny, rgroups = (rows + G.gbx - 1) / G.gbx;
#pragma omp for schedule(static)
        for (int64_t g = 0; g < rgroups; g++) {
            const int64_t r0 = g * G.gbx, nb = rows - r0 < G.gbx ? rows - r0 : G.gbx;
            memset(buf, 0, (size_t)(G.gbx * G.nfx) * sizeof *buf);
            for (int64_t b = 0; b < nb; b++) {
                const int64_t r = r0 + b, iz = r / G.ny, iy = r % G.ny;
                const double dzy = G.dz[iz] * G.dy[iy];
                NUFFT_SFX(cpx) *dst = buf + b * G.nfx;
                for (int64_t ix = 0; ix < G.nx; ix++) {
                    const int64_t fx = NUFFT_SFX(fine_of)(p, 0, ix), o = 2 * (r * G.nx + ix);
                    const double s = dzy * G.dx[ix];
                    dst[fx][0] = (NUFFT_FLT)(s * NUFFT_SFX(read)(x, in_f64, o));
                    dst[fx][1] = (NUFFT_FLT)(s * NUFFT_SFX(read)(x, in_f64, o + 1));
                }
            }
            if (G.nfx > 1)
                NUFFT_EXEC(p->plan[0][1], buf);
            for (int64_t b = 0; b < nb; b++)
                memcpy(NUFFT_SFX(kept_row)(p, &G, grid, r0 + b), buf + b * G.nfx, (size_t)G.nfx * sizeof *buf);
        }
        if (G.nfy > 1) {
            const int64_t cgroups = (G.nfx + G.gb - 1) / G.gb;
#pragma omp for schedule(static)
            for (int64_t g = 0; g < G.nz * cgroups; g++) {
                int64_t nb;
                NUFFT_SFX(cpx) *base = NUFFT_SFX(column_group)(p, &G, grid, g, cgroups, &nb);
                memset(buf, 0, (size_t)(G.nfy * G.gb) * sizeof *buf);
                for (int64_t i = 0; i < G.ny; i++) {
                    const int64_t j = NUFFT_SFX(fine_of)(p, 1, i);
                    memcpy(buf + j * G.gb, base + j * G.nfx, (size_t)nb * sizeof *buf);
                }
                NUFFT_EXEC(p->plan[1][1], buf);
                for (int64_t j = 0; j < G.nfy; j++)
                    memcpy(base + j * G.nfx, buf + j * G.gb, (size_t)nb * sizeof *buf);
            }
        }
        if (G.nfz > 1) {
            const int64_t groups = (G.plane + G.gb - 1) / G.gb;
#pragma omp for schedule(static)
            for (int64_t g = 0; g < groups; g++) {
                const int64_t l0 = g * G.gb, nb = G.plane - l0 < G.gb ? G.plane - l0 : G.gb;
                memset(buf, 0, (size_t)(G.nfz * G.gb) * sizeof *buf);
                for (int64_t i = 0; i < G.nz; i++) {
                    const int64_t j = NUFFT_SFX(fine_of)(p, 2, i);
                    memcpy(buf + j * G.gb, grid + j * G.plane + l0, (size_t)nb * sizeof *buf);
                }
                NUFFT_EXEC(p->plan[2][1], buf);
                for (int64_t j = 0; j < G.nfz; j++)
                    memcpy(grid + j * G.plane + l0, buf + j * G.gb, (size_t)nb * sizeof *buf);
            }
        }
    }
}
