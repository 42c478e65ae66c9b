/* BART's .cfl/.hdr files (mrirecon/bart src/misc/io.c, src/misc/mmio.c) and the mapping between a
 * BART trajectory + k-space pair and an mr_kspace (docs/FORMAT.md section 6 is normative).
 *
 * A BART array "NAME" is two files: NAME.hdr, text ("# Dimensions" followed by the sizes, first
 * dimension fastest; other "# Keyword" sections are allowed and skipped), and NAME.cfl, the
 * complex float32 values (re, im) in the machine's byte order (little endian on every machine
 * mrirecon runs on), column-major (first dimension fastest), exactly prod(dims) values.
 *
 * Writers write both files through temporary names and rename them when complete. */
#ifndef MR_CFL_H
#define MR_CFL_H

#include <stdint.h>

#include "../base/status.h"
#include "kspace.h"
#include "read_opts.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MR_CFL_DIMS 16 /* BART's DIMS */

/* BART's dimension indices (src/misc/mri.h) used here */
#define MR_CFL_READ_DIM 0
#define MR_CFL_PHS1_DIM 1
#define MR_CFL_PHS2_DIM 2
#define MR_CFL_COIL_DIM 3
#define MR_CFL_MAPS_DIM 4

/* What the "# mrirecon" section of a header (written by mr_cfl_write_scan, skipped by BART) says. */
typedef struct {
    int present;
    int64_t matrix[3];
    float fov_mm[3];
    char trajectory[64];
} mr_cfl_extra;

/* 1 when the file at `path` starts like a BART header ("# Dimensions" or "# Header"); 0 otherwise
 * (also when it cannot be read). */
int mr_cfl_is_header(const char *path);

/* Parse NAME.hdr: dims (missing trailing ones are 1; more than MR_CFL_DIMS only when the extra
 * ones are 1), extra (may be NULL). Checks every size >= 1 and the product within 2^40 values. */
mr_status mr_cfl_read_header(const char *name, int64_t dims[MR_CFL_DIMS], mr_cfl_extra *extra);

/* Read NAME.hdr and NAME.cfl (whose size must be exactly prod(dims) * 8 bytes, checked before
 * allocating); *data (malloc'd [n][2]) is owned by the caller. Every value must be finite. */
mr_status mr_cfl_read(const char *name, int64_t dims[MR_CFL_DIMS], mr_cfl_extra *extra, float **data);

/* Write NAME.hdr and NAME.cfl (atomically each) with ndims dims; extra may be NULL. */
mr_status mr_cfl_write(const char *name, int ndims, const int64_t *dims, const float *data,
                       const mr_cfl_extra *extra);

/* The pair PREFIX_traj + PREFIX_ksp from a scan: traj dims [3, M] (kx, ky, kz in cycles/FOV,
 * imaginary part 0), ksp dims [1, M, 1, C], values copied unchanged unless bart_scale (then
 * multiplied by sqrt(Nx Ny Nz), BART's unitary NUFFT scaling); and, when the scan has coil maps,
 * PREFIX_sens dims [Nx, Ny, Nz, C] (the maps unchanged: BART's `pics` sensitivities). Matrix, FOV
 * and trajectory kind go into a "# mrirecon" section of every header. */
mr_status mr_cfl_write_scan(const char *prefix, const mr_kspace *ks, int bart_scale);

/* The pair back: traj [3 (or 2), R, S, 1, ...] and ksp [1, R, S, C, ...], every other dimension 1;
 * with PREFIX_sens next to PREFIX_ksp (its .hdr exists) also the coil maps [X, Y, Z, C] (one set:
 * MAPS and higher dimensions 1; the grid must be the image matrix). Matrix: opts->matrix when set,
 * else the "# mrirecon" section, else the maps' grid, else 2 ceil(max |k_a|) per axis (BART's
 * estimate_im_dims). FOV: opts->fov_mm, else the section, else unknown. bart_scale divides
 * the data by sqrt(Nx Ny Nz). `traj_name`/`ksp_name` are the array names (without extension). */
mr_status mr_cfl_read_scan(const char *traj_name, const char *ksp_name, const mr_read_opts *opts, int bart_scale,
                           mr_kspace **out);

/* Derive the partner of a BART array name: "x_ksp" <-> "x_traj"; also accepts names with a .cfl
 * or .hdr extension and a bare prefix "x" (then x_traj and x_ksp). Fills both names; MR_EINVAL
 * when the names do not fit or when neither pattern applies. */
mr_status mr_cfl_pair_names(const char *path, char *traj, char *ksp, size_t size);

#ifdef __cplusplus
}
#endif
#endif
