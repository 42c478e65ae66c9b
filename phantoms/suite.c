/* The standard phantom suite (suite.h). */
#include "suite.h"

#include <math.h>
#include <string.h>

#include "../io/fsutil.h"
#include "../io/kspace_h5.h"
#include "../base/log.h"

/* One row: matrix edge n (n^2 or n^3), kind, nominal undersampling, the count that undersamples
 * (spokes / interleaves / samples; 0 = the fully sampled default), spiral design interleaves
 * (sets the turns: Nyquist for that many arms), SNR (0 = noiseless), noise seed. */
typedef struct {
    const char *file;
    const char *description;
    int n;
    mr_traj_kind kind;
    int under;
    int count;
    int design_interleaves;
    double snr;
    int seed;
} row;

#define R2 MR_TRAJ_RADIAL2D
#define G2 MR_TRAJ_GOLDEN2D
#define S2 MR_TRAJ_SPIRAL2D
#define X2 MR_TRAJ_RANDOM2D
#define KB MR_TRAJ_KOOSHBALL
#define SS MR_TRAJ_STACK_OF_STARS
#define SP MR_TRAJ_STACK_OF_SPIRALS

static const row rows[] = {
    {"2d128_radial_full.h5", "standard 2D case: radial 201 spokes x 256, noiseless", 128, R2, 1, 0, 0, 0, 101},
    {"2d128_radial_full_snr30.h5", "standard 2D case at 30 dB", 128, R2, 1, 0, 0, 30, 102},
    {"2d64_radial_full.h5", "radial 101 spokes x 128 (Nyquist), noiseless", 64, R2, 1, 0, 0, 0, 201},
    {"2d64_radial_full_snr30.h5", "radial fully sampled, 30 dB", 64, R2, 1, 0, 0, 30, 202},
    {"2d64_radial_full_snr20.h5", "radial fully sampled, 20 dB", 64, R2, 1, 0, 0, 20, 203},
    {"2d64_radial_x4.h5", "radial 25 spokes (4x undersampled), noiseless", 64, R2, 4, 25, 0, 0, 204},
    {"2d64_radial_x4_snr30.h5", "radial 4x undersampled, 30 dB", 64, R2, 4, 25, 0, 30, 205},
    {"2d64_radial_x8.h5", "radial 13 spokes (8x undersampled), noiseless", 64, R2, 8, 13, 0, 0, 206},
    {"2d64_radial_x8_snr20.h5", "radial 8x undersampled, 20 dB", 64, R2, 8, 13, 0, 20, 207},
    {"2d64_golden_full.h5", "golden-angle radial 101 spokes, noiseless", 64, G2, 1, 0, 0, 0, 301},
    {"2d64_golden_x4.h5", "golden-angle radial 25 spokes (4x), noiseless", 64, G2, 4, 25, 0, 0, 302},
    {"2d64_golden_x4_snr30.h5", "golden-angle radial 25 spokes (4x), 30 dB", 64, G2, 4, 25, 0, 30, 303},
    {"2d64_golden_x8_snr20.h5", "golden-angle radial 13 spokes (8x), 20 dB", 64, G2, 8, 13, 0, 20, 304},
    {"2d64_spiral_full.h5", "spiral 16 interleaves at Nyquist, noiseless", 64, S2, 1, 16, 16, 0, 401},
    {"2d64_spiral_full_snr30.h5", "spiral 16 interleaves, 30 dB", 64, S2, 1, 16, 16, 30, 402},
    {"2d64_spiral_x4.h5", "spiral 4 of the 16-interleave design (4x), noiseless", 64, S2, 4, 4, 16, 0, 403},
    {"2d64_spiral_x4_snr20.h5", "spiral 4 of 16 interleaves (4x), 20 dB", 64, S2, 4, 4, 16, 20, 404},
    {"2d64_spiral_x8.h5", "spiral 2 of the 16-interleave design (8x), noiseless", 64, S2, 8, 2, 16, 0, 405},
    {"2d64_random_full.h5", "uniform random 8192 samples (2 per Cartesian point), noiseless", 64, X2, 1, 8192, 0, 0,
     501},
    {"2d64_random_x4.h5", "uniform random 2048 samples (4x fewer), 30 dB", 64, X2, 4, 2048, 0, 30, 502},
    {"3d16_kooshball_full.h5", "kooshball 402 spokes x 32 (Nyquist), noiseless", 16, KB, 1, 0, 0, 0, 601},
    {"3d16_stars_full.h5", "stack-of-stars 16 x 25 spokes x 32 (Nyquist), noiseless", 16, SS, 1, 0, 0, 0, 602},
    {"3d32_kooshball_x4.h5", "kooshball 402 spokes x 64 (4x), noiseless", 32, KB, 4, 402, 0, 0, 701},
    {"3d32_kooshball_x4_snr30.h5", "kooshball 402 spokes (4x), 30 dB", 32, KB, 4, 402, 0, 30, 702},
    {"3d32_kooshball_x8.h5", "kooshball 201 spokes x 64 (8x), noiseless", 32, KB, 8, 201, 0, 0, 703},
    {"3d32_kooshball_x8_snr20.h5", "kooshball 201 spokes (8x), 20 dB", 32, KB, 8, 201, 0, 20, 704},
    {"3d32_stars_x4.h5", "stack-of-stars 32 x 13 spokes x 64 (4x), noiseless", 32, SS, 4, 13, 0, 0, 801},
    {"3d32_stars_x4_snr30.h5", "stack-of-stars 32 x 13 spokes (4x), 30 dB", 32, SS, 4, 13, 0, 30, 802},
    {"3d32_stars_x8_snr20.h5", "stack-of-stars 32 x 6 spokes (8x), 20 dB", 32, SS, 8, 6, 0, 20, 803},
    {"3d32_spirals_x4.h5", "stack-of-spirals 32 x 1 of the 4-interleave design (4x), noiseless", 32, SP, 4, 1, 4, 0,
     901},
};

#define NROWS ((int)(sizeof rows / sizeof rows[0]))

int mr_suite_count(void) { return NROWS; }

mr_status mr_suite_entry_get(int i, mr_suite_entry *e)
{
    if (i < 0 || i >= NROWS)
        return mr_error(MR_EINVAL, "suite: no entry %d (0..%d)", i, NROWS - 1);
    const row *r = &rows[i];
    int is3d = mr_traj_kind_is_3d(r->kind);
    const int64_t mat[3] = {r->n, r->n, is3d ? r->n : 1};
    memset(e, 0, sizeof *e);
    e->file = r->file;
    e->description = r->description;
    e->undersampling = r->under;
    mr_scan_params_default(&e->scan);
    mr_traj_params *p = &e->scan.traj;
    mr_traj_params_default(p, r->kind, mat);
    if (r->design_interleaves > 0) {
        p->interleaves = r->design_interleaves;
        p->turns = mr_traj_spiral_turns(p); /* fixed by the full design */
        p->readout = mr_traj_spiral_readout(p, 0.5);
    }
    if (r->count > 0) {
        if (r->kind == MR_TRAJ_RANDOM2D)
            p->samples = r->count;
        else if (r->kind == MR_TRAJ_SPIRAL2D || r->kind == MR_TRAJ_STACK_OF_SPIRALS)
            p->interleaves = r->count;
        else
            p->spokes = r->count;
    }
    e->scan.noise = r->snr > 0;
    e->scan.snr_db = r->snr;
    e->scan.seed = (uint64_t)r->seed;
    return MR_OK;
}

/* The manifest columns of one entry: file, dim, matrix, trajectory, samples, undersampling,
 * snr_db ("inf" when noiseless), seed, description. */
#define NFIELDS 9
static void manifest_fields(const mr_suite_entry *e, int64_t samples, char f[NFIELDS][192])
{
    const mr_traj_params *p = &e->scan.traj;
    snprintf(f[0], 192, "%s", e->file);
    snprintf(f[1], 192, "%d", mr_traj_kind_is_3d(p->kind) ? 3 : 2);
    snprintf(f[2], 192, "%lldx%lldx%lld", (long long)p->matrix[0], (long long)p->matrix[1], (long long)p->matrix[2]);
    snprintf(f[3], 192, "%s", mr_traj_kind_name(p->kind));
    snprintf(f[4], 192, "%lld", (long long)samples);
    snprintf(f[5], 192, "%g", e->undersampling);
    if (e->scan.noise)
        snprintf(f[6], 192, "%g", e->scan.snr_db);
    else
        snprintf(f[6], 192, "inf");
    snprintf(f[7], 192, "%llu", (unsigned long long)e->scan.seed);
    snprintf(f[8], 192, "%s", e->description);
}

/* One manifest: CSV (markdown = 0) or a markdown table; header, then one row per entry. */
static mr_status write_manifest(const char *dir, const char *name, int markdown, const mr_suite_entry *es,
                                const int64_t *samples)
{
    static const char *const head[NFIELDS] = {"file",          "dim",    "matrix", "trajectory", "samples",
                                              "undersampling", "snr_db", "seed",   "description"};
    char path[4096], tmp[4200];
    FILE *f;
    mr_status st = mr_path_join(path, sizeof path, dir, name);
    if (st != MR_OK || (st = mr_open_tmp(path, tmp, sizeof tmp, &f)) != MR_OK)
        return st;
    if (markdown)
        fprintf(f, "# Standard phantom suite\n\nWritten by `mrirecon phantom --suite DIR` (docs/PHANTOMS.md). Every "
                   "file holds the analytic Shepp-Logan k-space, analytic density compensation weights and both "
                   "truth images (`/truth/image`, `/truth/bandlimited`). Undersampling is nominal, against the fully "
                   "sampled (Nyquist) design of the same kind; snr_db `inf` = noiseless.\n\n");
    for (int i = -1; i < NROWS; i++) {
        char fields[NFIELDS][192];
        if (i >= 0)
            manifest_fields(&es[i], samples[i], fields);
        for (int c = 0; c < NFIELDS; c++) {
            const char *v = i < 0 ? head[c] : fields[c];
            if (markdown)
                fprintf(f, "| %s ", v);
            else if (c == NFIELDS - 1 && i >= 0)
                fprintf(f, ",\"%s\"", v); /* the description may hold commas */
            else
                fprintf(f, "%s%s", c ? "," : "", v);
        }
        fprintf(f, markdown ? "|\n" : "\n");
        if (markdown && i < 0) {
            for (int c = 0; c < NFIELDS; c++)
                fprintf(f, "|---");
            fprintf(f, "|\n");
        }
    }
    return mr_close_commit(f, tmp, path);
}

mr_status mr_suite_write(const char *dir, FILE *summary)
{
    mr_status st = mr_mkdir_p(dir);
    if (st != MR_OK)
        return st;
    mr_suite_entry es[NROWS];
    int64_t samples[NROWS];
    for (int i = 0; i < NROWS; i++) {
        char path[4096], line[512];
        mr_kspace *ks = NULL;
        if ((st = mr_suite_entry_get(i, &es[i])) != MR_OK ||
            (st = mr_path_join(path, sizeof path, dir, es[i].file)) != MR_OK)
            return st;
        double t0 = mr_now();
        if ((st = mr_scan_simulate(&es[i].scan, &ks)) != MR_OK)
            return mr_error(st, "suite: %s: %s", es[i].file, mr_last_error());
        samples[i] = ks->nsamples;
        st = mr_kspace_write(path, ks);
        if (st == MR_OK && summary) {
            mr_scan_describe(ks, path, line, sizeof line);
            fprintf(summary, "%s\n", line);
        }
        mr_kspace_free(ks);
        if (st != MR_OK)
            return st;
        mr_log(MR_LOG_DEBUG, "suite: %s in %.2f s", es[i].file, mr_now() - t0);
    }
    if ((st = write_manifest(dir, "manifest.csv", 0, es, samples)) != MR_OK ||
        (st = write_manifest(dir, "manifest.md", 1, es, samples)) != MR_OK)
        return st;
    if (summary)
        fprintf(summary, "%s/manifest.csv: %d scans\n", dir, NROWS);
    return MR_OK;
}
