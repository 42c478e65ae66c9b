/* Coil sensitivity maps from an HDF5 file, for `mrirecon recon --sens-maps FILE` (docs/FORMAT.md):
 * the float32 dataset /kspace/sens (an mrirecon k-space file of version 2, e.g. another scan of the
 * same coils) or /sens, shaped [C][Nz][Ny][Nx][2] (complex, interleaved). */
#ifndef MR_SENS_H5_H
#define MR_SENS_H5_H

#include <stdint.h>

#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Read the maps of `path` for a scan with this matrix and coil count: the shape must be
 * [ncoils][Nz][Ny][Nx][2] and every value finite (MR_EFORMAT naming the file, the dataset and the
 * value otherwise). Read once, in a child process, as every reader of user files does
 * (io/h5util.h mr_h5_read_path_in_child). *maps is malloc'ed, owned by the caller (free). */
mr_status mr_sens_read(const char *path, const int64_t matrix[3], int64_t ncoils, float **maps);

#ifdef __cplusplus
}
#endif
#endif
