/* libmrirecon's C API: the small, stable surface of the shared library for other languages. The Python
 * package (python/mrirecon, docs/PYTHON.md) calls it through ctypes; nothing else of the library is
 * exported from libmrirecon.so (recon/api/api.map).
 *
 * Conventions
 *  - A function that can fail returns an int status: 0 (MR_OK) on success; else a code of base/status.h
 *    (MR_EINVAL, MR_EFORMAT, MR_EIO, ...) for a run-time failure (the command's exit 1), or MR_API_USAGE
 *    for a usage error (the command's exit 2: an unknown option, a bad value, options that exclude each
 *    other). mr_api_last_error() then holds the message, the text the command prints: "mrirecon recon:
 *    unknown option '--foo'" for a usage error, "scan.h5: /kspace/traj has rank 3, expected 2" for a
 *    failure. mr_api_status_name names the code ("EINVAL", "USAGE").
 *  - Options are the command's own arguments without the command name, e.g. {"--method=cg",
 *    "--reg=gradient"}, parsed with the command's option table (recon/cli/cmd_args.h), so every option of
 *    `mrirecon recon` and `mrirecon phantom` works here with the same names, values, defaults, checks and
 *    messages; mr_api_options lists a table, mr_api_help prints its --help. "--help" itself is a usage
 *    error here (nothing is printed).
 *  - Arrays cross as float32 in the layouts of io/kspace.h (complex = interleaved re, im; images
 *    [Nz][Ny][Nx], x fastest). The library copies: *_set from the caller's buffer, *_get into the
 *    caller's buffer, whose size in floats is checked against the array's.
 *  - Handles are opaque and owned by the caller; every *_free takes NULL. Strings returned as char ** are
 *    the caller's (mr_api_free); strings returned as const char * are borrowed from their handle.
 *  - One call at a time per process (FFTW planning and the log level are process-wide): the Python package
 *    holds a lock. Diagnostics go to stderr as the commands write them (recon's -q/-v set the level).
 *
 * Version: MR_API_VERSION changes when a signature or struct below changes (mr_api_version tells the
 * library's, so that a binding can refuse a library it does not know). */
#ifndef MR_API_H
#define MR_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MR_API_VERSION 1
#define MR_API_USAGE 100 /* a usage error (the commands exit 2) */

int mr_api_version(void);
const char *mr_api_last_error(void);      /* this thread's last message; "" when none */
const char *mr_api_status_name(int status); /* "OK", "EINVAL", ..., "USAGE"; "UNKNOWN" otherwise */
void mr_api_free(void *p);                  /* a char ** result */
/* sizeof of the API's structs ("scan_info", "image_info", "geometry"; 0 for another name): a binding
 * checks its own layout against these. */
size_t mr_api_sizeof(const char *name);

/* The option table of `command` ("recon", "phantom", or "read": the options of mr_api_scan_read), one
 * option per line: NAME TAB SHORT TAB TYPE TAB CHOICES, with SHORT "" or one letter, TYPE one of flag,
 * int, double, string, choice, list, device, precision, and CHOICES the |-separated values of a choice
 * ("" otherwise). *text is the caller's. MR_EINVAL for an unknown command. */
int mr_api_options(const char *command, char **text);

/* The --help text of `command` (as `mrirecon COMMAND --help` prints it). */
int mr_api_help(const char *command, char **text);

/* ---- scans ---------------------------------------------------------------------------------------- */

typedef struct mr_api_scan mr_api_scan;

/* The arrays of a scan (M samples, C coils, Nx Ny Nz voxels); sizes in floats. */
typedef enum {
    MR_API_TRAJ = 0,     /* [M][3] k in cycles per FOV (required)                     3 M */
    MR_API_DATA = 1,     /* [C][M] complex samples (required)                         2 C M */
    MR_API_WEIGHTS = 2,  /* [M] density compensation, >= 0                            M */
    MR_API_TRUTH = 3,    /* [Nz][Ny][Nx] real voxel-averaged truth                    N */
    MR_API_TRUTH_BL = 4, /* [Nz][Ny][Nx] real band-limited truth                      N */
    MR_API_SENS = 5,     /* [C][Nz][Ny][Nx] complex coil maps                         2 C N */
    MR_API_TIME = 6,     /* [M] readout time of each sample in seconds                M */
    MR_API_FIELDMAP = 7, /* [Nz][Ny][Nx] off-resonance in Hz                          N */
    MR_API_ARRAYS = 8
} mr_api_array;

/* Where an image sits in the scanner (io/geometry.h, LPS mm): present = 0 for the default placement. */
typedef struct {
    int present;
    float position[3], read_dir[3], phase_dir[3], slice_dir[3];
} mr_api_geometry;

/* What a scan is besides its arrays. */
typedef struct {
    int64_t matrix[3];      /* Nx, Ny, Nz (Nz = 1 for 2D) */
    int64_t nsamples;       /* M */
    int64_t ncoils;         /* C */
    float fov_mm[3];        /* 0 where unknown */
    double noise_sigma;     /* noise std. dev. per real/imaginary part; < 0 unknown */
    double snr_db;          /* the SNR the noise was drawn for (phantoms) */
    uint64_t noise_seed;
    char traj_kind[64];     /* "radial2d", ...; "" unknown */
    char phantom[64];       /* "shepp-logan-2d", ...; "" for measured data */
    char name[1024];        /* names the scan in messages and the report: the file read, or a name given */
    /* where it came from (mr_api_scan_read; otherwise format "arrays", volume 0 of 1) */
    char format[32];        /* "mrirecon-kspace", "ismrmrd", "bart", "arrays", "phantom" */
    int volume, volumes;    /* the volume read and how many the file holds */
    char label[96];         /* its name ("slice001", "volume0") */
    int prewhitened;        /* 1: the coils were whitened with the file's noise scans when read */
    int64_t noise_samples;  /* noise samples per coil in the file */
    /* the reconstruction grid and placement (ISMRMRD; or given): has_grid = 1 when recon_* and geometry
       apply. recon_matrix/recon_fov_mm: the reconSpace grid the images are cropped to (= matrix: no crop) */
    int has_grid;
    int64_t recon_matrix[3];
    float recon_fov_mm[3];
    mr_api_geometry geometry;
} mr_api_scan_info;

/* Read a scan file as `mrirecon recon` reads it (mrirecon HDF5, ISMRMRD, BART; by content), with the
 * reader options of recon (argv: --traj-units, --traj-sign, --prewhiten, --space, --averages, --matrix,
 * --fov, --traj) and --volume N (default -1: the file must hold one volume). The data are prewhitened with
 * the file's noise scans unless --prewhiten off (what the reconstruction of the file gets). */
int mr_api_scan_read(const char *path, int argc, const char *const *argv, mr_api_scan **out);

/* A scan of info's sizes and description (matrix, nsamples, ncoils, fov, noise, names, grid) with every
 * array zero (the required ones) or absent (the others): fill them with mr_api_scan_set. */
int mr_api_scan_create(const mr_api_scan_info *info, mr_api_scan **out);

/* Copy an array in (nfloats must be its size; non-finite values and negative weights are refused,
 * naming the scan, the array and the index) or out. An absent optional array: mr_api_scan_size 0, and
 * mr_api_scan_get fails. */
int mr_api_scan_set(mr_api_scan *s, int array, const float *src, int64_t nfloats);
int mr_api_scan_get(const mr_api_scan *s, int array, float *dst, int64_t nfloats);
int64_t mr_api_scan_size(const mr_api_scan *s, int array);
void mr_api_scan_info_get(const mr_api_scan *s, mr_api_scan_info *info);

/* Write the scan: format "mrirecon" (HDF5, docs/FORMAT.md) or "bart" (path is the prefix: path_traj,
 * path_ksp[, path_sens] .hdr/.cfl; bart_scale: data times sqrt(Nx Ny Nz), as convert --bart-scale);
 * NULL: by name (.h5/.hdf5 mrirecon, else bart). */
int mr_api_scan_write(const mr_api_scan *s, const char *path, const char *format, int bart_scale);
void mr_api_scan_free(mr_api_scan *s);

/* A simulated scan with `mrirecon phantom`'s options (argv; -o FILE also writes it there; --suite is
 * refused: the command writes the suite). */
int mr_api_phantom(int argc, const char *const *argv, mr_api_scan **out);

/* ---- reconstruction ------------------------------------------------------------------------------- */

typedef struct mr_api_result mr_api_result;

/* Reconstruct the scan file `path` (scan NULL) or the scan in memory (path NULL; copied; its name names
 * it) with `mrirecon recon`'s options (argv, without SCAN). Without -o nothing is written; with -o OUTDIR
 * every file the command writes is written there too. The result holds, per volume (every volume of a
 * multi-volume file unless --volume N), each method's image and the report (report.json's text). */
int mr_api_recon(const char *path, const mr_api_scan *scan, int argc, const char *const *argv, mr_api_result **out);

/* What an image is: its grid, voxel size, placement and method. */
typedef struct {
    int64_t matrix[3];
    float fov_mm[3];
    mr_api_geometry geometry;
    char method[32];
} mr_api_image_info;

int mr_api_result_volumes(const mr_api_result *r);
int mr_api_result_methods(const mr_api_result *r, int volume);
const char *mr_api_result_label(const mr_api_result *r, int volume);   /* the volume's name */
const char *mr_api_result_report(const mr_api_result *r, int volume);  /* report.json's text */
int mr_api_result_image_info(const mr_api_result *r, int volume, int method, mr_api_image_info *info);
/* Copy method `method`'s complex image of volume `volume` (2 Nx Ny Nz floats). */
int mr_api_result_image(const mr_api_result *r, int volume, int method, float *dst, int64_t nfloats);
void mr_api_result_free(mr_api_result *r);

/* ---- images --------------------------------------------------------------------------------------- */

/* Write a complex image data[Nz][Ny][Nx][2] (info: matrix, fov, geometry, method; fov 0 = unknown) to
 * path as recon/api/image_file.h names it: format "h5" (or "mrirecon"), "png", "nifti", "cfl" (or "bart"),
 * "mrd", "dicom", or NULL (by path's name). nifti_complex: complex64 NIfTI instead of the magnitude;
 * window_hi > 0: the PNG's grey window [0, window_hi] (else [0, max]); description: NIfTI descrip /
 * DICOM series / MRD comment (NULL: "mrirecon <method>"). */
int mr_api_image_write(const char *path, const char *format, const float *data, const mr_api_image_info *info,
                       int nifti_complex, double window_hi, const char *description);

typedef struct mr_api_image mr_api_image;

/* Read an image file (our HDF5 image, NIfTI-1, an MRD image, a BART array; io/image_io.h). */
int mr_api_image_read(const char *path, mr_api_image **out);
void mr_api_image_info_get(const mr_api_image *im, mr_api_image_info *info);
int mr_api_image_get(const mr_api_image *im, float *dst, int64_t nfloats);
void mr_api_image_free(mr_api_image *im);

#ifdef __cplusplus
}
#endif
#endif
