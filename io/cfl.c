/* BART .cfl/.hdr arrays and the traj + ksp pair <-> mr_kspace mapping (see cfl.h). */
#include "cfl.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../base/log.h"
#include "fsutil.h"
#include "h5util.h"

#define MAX_HDR_BYTES 65536
#define MAX_VALUES ((int64_t)1 << 40)

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static mr_status file_name(char *buf, size_t size, const char *name, const char *ext)
{
    int n = snprintf(buf, size, "%s%s", name, ext);
    if (n < 0 || (size_t)n >= size)
        return mr_error(MR_EINVAL, "%s%s: path too long", name, ext);
    return MR_OK;
}

int mr_cfl_is_header(const char *path)
{
    return mr_file_starts_with(path, 0, "# Dimensions", 12) || mr_file_starts_with(path, 0, "# Header", 8);
}

/* ---- header ------------------------------------------------------------------------------------- */

static mr_status read_small_file(const char *path, size_t max, char **out, size_t *len)
{
    *out = NULL;
    struct stat sb;
    if (stat(path, &sb) != 0)
        return mr_error(MR_EIO, "%s: cannot open: %s", path, strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return mr_error(MR_EIO, "%s: not a regular file", path);
    if ((size_t)sb.st_size > max)
        return mr_error(MR_EFORMAT, "%s: %lld bytes, more than a BART header may have (%zu)", path,
                        (long long)sb.st_size, max);
    FILE *f = fopen(path, "rb");
    if (!f)
        return mr_error(MR_EIO, "%s: cannot open: %s", path, strerror(errno));
    char *buf = malloc((size_t)sb.st_size + 1);
    size_t n = buf ? fread(buf, 1, (size_t)sb.st_size, f) : 0;
    fclose(f);
    if (!buf || n != (size_t)sb.st_size) {
        free(buf);
        return mr_error(MR_EIO, "%s: read failed", path);
    }
    buf[n] = '\0';
    *len = n;
    *out = buf;
    return MR_OK;
}

/* Parse "matrix a b c" / "fov_mm a b c" / "trajectory name" lines of the mrirecon section. */
static mr_status parse_extra_line(const char *path, char *line, mr_cfl_extra *x)
{
    char key[32], v[3][64];
    int n = sscanf(line, "%31s %63s %63s %63s", key, v[0], v[1], v[2]);
    if (n < 1)
        return MR_OK;
    if (!strcmp(key, "matrix") || !strcmp(key, "fov_mm")) {
        if (n != 4)
            return mr_error(MR_EFORMAT, "%s: '# mrirecon' line '%.60s' needs 3 values", path, line);
        for (int a = 0; a < 3; a++) {
            char *end;
            errno = 0;
            if (key[0] == 'm') {
                long long m = strtoll(v[a], &end, 10);
                if (errno || *end || m < 1 || m > MR_MAX_MATRIX_EDGE)
                    return mr_error(MR_EFORMAT, "%s: '# mrirecon' matrix value '%s' is not in 1..%d", path, v[a],
                                    MR_MAX_MATRIX_EDGE);
                x->matrix[a] = m;
            } else {
                float f = strtof(v[a], &end);
                if (errno || *end || !isfinite(f) || f < 0)
                    return mr_error(MR_EFORMAT, "%s: '# mrirecon' fov_mm value '%s' is not a number >= 0", path, v[a]);
                x->fov_mm[a] = f;
            }
        }
    } else if (!strcmp(key, "trajectory") && n >= 2) {
        snprintf(x->trajectory, sizeof x->trajectory, "%s", v[0]);
    }
    return MR_OK;
}

mr_status mr_cfl_read_header(const char *name, int64_t dims[MR_CFL_DIMS], mr_cfl_extra *extra)
{
    char path[4096];
    mr_status st = file_name(path, sizeof path, name, ".hdr");
    if (st != MR_OK)
        return st;
    if (extra)
        memset(extra, 0, sizeof *extra);
    size_t len = 0;
    char *text = NULL;
    if ((st = read_small_file(path, MAX_HDR_BYTES, &text, &len)) != MR_OK)
        return st;
    if (memchr(text, '\0', len)) {
        free(text);
        return mr_error(MR_EFORMAT, "%s: binary content, not a BART header", path);
    }
    for (int i = 0; i < MR_CFL_DIMS; i++)
        dims[i] = 1;
    int have_dims = 0;
    const char *section = "";
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); st == MR_OK && line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#') {
            char *k = line + 1;
            while (*k == ' ')
                k++;
            section = k;
            if (!strncmp(k, "Dimensions", 10) && have_dims)
                st = mr_error(MR_EFORMAT, "%s: two '# Dimensions' sections", path);
            continue;
        }
        if (!strncmp(section, "Dimensions", 10) && !have_dims) {
            int nd = 0;
            char *p = line;
            for (;;) {
                while (*p == ' ' || *p == '\t' || *p == '\r')
                    p++;
                if (!*p)
                    break;
                char *end;
                errno = 0;
                long long v = strtoll(p, &end, 10);
                if (errno || end == p || v < 1) {
                    st = mr_error(MR_EFORMAT, "%s: dimension %d is '%.20s', expected an integer >= 1", path, nd, p);
                    break;
                }
                if (nd < MR_CFL_DIMS)
                    dims[nd] = v;
                else if (v != 1) {
                    st = mr_error(MR_EFORMAT, "%s: %d or more dimensions; mrirecon reads %d", path, nd + 1,
                                  MR_CFL_DIMS);
                    break;
                }
                nd++;
                p = end;
            }
            if (st == MR_OK && nd == 0)
                st = mr_error(MR_EFORMAT, "%s: '# Dimensions' lists no sizes", path);
            have_dims = 1;
        } else if (!strcmp(section, "mrirecon") && extra) {
            extra->present = 1;
            st = parse_extra_line(path, line, extra);
        }
    }
    free(text);
    if (st != MR_OK)
        return st;
    if (!have_dims)
        return mr_error(MR_EFORMAT, "%s: no '# Dimensions' section (not a BART header)", path);
    int64_t n = 1;
    for (int i = 0; i < MR_CFL_DIMS; i++) {
        if (dims[i] > MAX_VALUES / n)
            return mr_error(MR_EFORMAT, "%s: the dimensions hold more than 2^40 values", path);
        n *= dims[i];
    }
    return MR_OK;
}

static int64_t count_of(const int64_t dims[MR_CFL_DIMS])
{
    int64_t n = 1;
    for (int i = 0; i < MR_CFL_DIMS; i++)
        n *= dims[i];
    return n;
}

mr_status mr_cfl_read(const char *name, int64_t dims[MR_CFL_DIMS], mr_cfl_extra *extra, float **data)
{
    *data = NULL;
    mr_status st = mr_cfl_read_header(name, dims, extra);
    if (st != MR_OK)
        return st;
    char path[4096];
    if ((st = file_name(path, sizeof path, name, ".cfl")) != MR_OK)
        return st;
    const int64_t n = count_of(dims);
    struct stat sb;
    if (stat(path, &sb) != 0)
        return mr_error(MR_EIO, "%s: cannot open: %s", path, strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return mr_error(MR_EIO, "%s: not a regular file", path);
    if ((uint64_t)sb.st_size != (uint64_t)n * 8)
        return mr_error(MR_EFORMAT, "%s: %lld bytes, but its header declares %lld complex values (%lld bytes)", path,
                        (long long)sb.st_size, (long long)n, (long long)(n * 8));
    float *buf = malloc((size_t)n * 2 * sizeof(float));
    if (!buf)
        return mr_error(MR_ENOMEM, "%s: out of memory for %lld complex values", path, (long long)n);
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(buf, sizeof(float), (size_t)n * 2, f) : 0;
    if (f)
        fclose(f);
    if (got != (size_t)n * 2) {
        free(buf);
        return mr_error(MR_EIO, "%s: read failed", path);
    }
    int64_t bad = mr_h5_first_nonfinite(buf, (size_t)n * 2);
    if (bad >= 0) {
        float v = buf[bad];
        free(buf);
        return mr_error(MR_EFORMAT, "%s: non-finite value %g at complex index %lld", path, (double)v,
                        (long long)(bad / 2));
    }
    *data = buf;
    return MR_OK;
}

/* ---- writer ---------------------------------------------------------------------------------------- */

mr_status mr_cfl_write(const char *name, int ndims, const int64_t *dims, const float *data, const mr_cfl_extra *extra)
{
    char hdr[4096], cfl[4096], thdr[4200], tcfl[4200];
    mr_status st;
    if ((st = file_name(hdr, sizeof hdr, name, ".hdr")) != MR_OK || (st = file_name(cfl, sizeof cfl, name, ".cfl")) != MR_OK)
        return st;
    if (ndims < 1 || ndims > MR_CFL_DIMS)
        return mr_error(MR_EINVAL, "%s: %d dimensions", name, ndims);
    int64_t n = 1;
    for (int i = 0; i < ndims; i++)
        n *= dims[i];
    FILE *f;
    if ((st = mr_open_tmp(cfl, tcfl, sizeof tcfl, &f)) != MR_OK)
        return st;
    if (fwrite(data, sizeof(float), (size_t)n * 2, f) != (size_t)n * 2) {
        fclose(f);
        remove(tcfl);
        return mr_error(MR_EIO, "%s: write failed", cfl);
    }
    if ((st = mr_close_commit(f, tcfl, cfl)) != MR_OK)
        return st;
    if ((st = mr_open_tmp(hdr, thdr, sizeof thdr, &f)) != MR_OK) {
        remove(cfl);
        return st;
    }
    fprintf(f, "# Dimensions\n");
    for (int i = 0; i < MR_CFL_DIMS; i++)
        fprintf(f, "%lld ", (long long)(i < ndims ? dims[i] : 1));
    fprintf(f, "\n");
    if (extra && extra->present) {
        fprintf(f, "# mrirecon\nmatrix %lld %lld %lld\nfov_mm %.9g %.9g %.9g\n", (long long)extra->matrix[0],
                (long long)extra->matrix[1], (long long)extra->matrix[2], (double)extra->fov_mm[0],
                (double)extra->fov_mm[1], (double)extra->fov_mm[2]);
        if (extra->trajectory[0])
            fprintf(f, "trajectory %s\n", extra->trajectory);
    }
    fprintf(f, "# Creator\nmrirecon %s\n", MR_VERSION);
    if ((st = mr_close_commit(f, thdr, hdr)) != MR_OK)
        remove(cfl);
    return st;
}

/* a trajectory kind name that survives the whitespace-separated header line */
static void clean_name(char *dst, size_t size, const char *src)
{
    size_t j = 0;
    for (size_t i = 0; src[i] && j + 1 < size; i++) {
        unsigned char c = (unsigned char)src[i];
        dst[j++] = (c <= ' ' || c == '#' || c == 0x7f) ? '_' : (char)c;
    }
    dst[j] = '\0';
}

/* Remove NAME.hdr and NAME.cfl (a pair written before a later one failed). */
static void remove_array(const char *name)
{
    char p[4200];
    snprintf(p, sizeof p, "%s.hdr", name);
    remove(p);
    snprintf(p, sizeof p, "%s.cfl", name);
    remove(p);
}

mr_status mr_cfl_write_scan(const char *prefix, const mr_kspace *ks, int bart_scale)
{
    char tname[4096], kname[4096], sname[4096];
    mr_status st;
    if ((st = file_name(tname, sizeof tname, prefix, "_traj")) != MR_OK ||
        (st = file_name(kname, sizeof kname, prefix, "_ksp")) != MR_OK ||
        (st = file_name(sname, sizeof sname, prefix, "_sens")) != MR_OK)
        return st;
    const int64_t M = ks->nsamples, C = ks->ncoils;
    float *t = calloc((size_t)M * 6, sizeof(float));
    float *d = bart_scale ? malloc((size_t)(M * C) * 2 * sizeof(float)) : NULL;
    if (!t || (bart_scale && !d)) {
        free(t);
        free(d);
        return mr_error(MR_ENOMEM, "%s: out of memory", prefix);
    }
    for (int64_t m = 0; m < M; m++)
        for (int a = 0; a < 3; a++)
            t[2 * (3 * m + a)] = ks->traj[3 * m + a]; /* (k, 0) */
    if (bart_scale) {
        const double s = sqrt((double)mr_kspace_voxels(ks));
        for (int64_t i = 0; i < 2 * M * C; i++)
            d[i] = (float)(ks->data[i] * s);
    }
    mr_cfl_extra x;
    memset(&x, 0, sizeof x);
    x.present = 1;
    memcpy(x.matrix, ks->matrix, sizeof x.matrix);
    memcpy(x.fov_mm, ks->fov_mm, sizeof x.fov_mm);
    clean_name(x.trajectory, sizeof x.trajectory, ks->traj_kind);
    const int64_t tdims[2] = {3, M};
    const int64_t kdims[4] = {1, M, 1, C};
    st = mr_cfl_write(tname, 2, tdims, t, &x);
    if (st == MR_OK) {
        /* [C][M][2] is BART's [1][M][1][C] column-major layout already */
        st = mr_cfl_write(kname, 4, kdims, bart_scale ? d : ks->data, &x);
        if (st != MR_OK)
            remove_array(tname);
    }
    if (st == MR_OK && ks->sens) {
        /* [C][Nz][Ny][Nx][2] is BART's [X][Y][Z][COIL] column-major layout already; maps are not scaled */
        const int64_t sdims[4] = {ks->matrix[0], ks->matrix[1], ks->matrix[2], C};
        st = mr_cfl_write(sname, 4, sdims, ks->sens, &x);
        if (st != MR_OK) {
            remove_array(tname);
            remove_array(kname);
        }
    }
    free(t);
    free(d);
    return st;
}

/* ---- reader ---------------------------------------------------------------------------------------- */

static const char *dim_label(int i)
{
    static const char *const names[MR_CFL_DIMS] = {"READ",  "PHS1",  "PHS2",  "COIL", "MAPS",  "TE",
                                                   "COEFF", "COEFF2", "ITER", "CSHIFT", "TIME", "TIME2",
                                                   "LEVEL", "SLICE", "AVG",  "BATCH"};
    return (i >= 0 && i < MR_CFL_DIMS) ? names[i] : "?";
}

/* The maps that go with PREFIX_ksp: PREFIX_sens, when its header or its data file exists (1, name
 * filled). A broken or half pair is then read and refused with its reason, never passed over: the maps
 * change the model (estimated maps instead of the file's). */
static int sens_of(const char *ksp_name, char *name, size_t size)
{
    size_t n = strlen(ksp_name);
    if (!ends_with(ksp_name, "_ksp") || n + 2 >= size)
        return 0;
    snprintf(name, size, "%.*s_sens", (int)(n - 4), ksp_name);
    char hdr[4200], cfl[4200];
    struct stat sb;
    snprintf(hdr, sizeof hdr, "%s.hdr", name);
    snprintf(cfl, sizeof cfl, "%s.cfl", name);
    return lstat(hdr, &sb) == 0 || lstat(cfl, &sb) == 0;
}

/* BART coil maps: [X, Y, Z, COIL] with the scan's coils, every other dimension 1 (one set of maps). */
static mr_status check_sens_dims(const char *name, const int64_t sd[MR_CFL_DIMS], int64_t C)
{
    if (sd[MR_CFL_COIL_DIM] != C)
        return mr_error(MR_EFORMAT, "%s.hdr: %lld coil maps (dimension 3, COIL) for k-space of %lld coils", name,
                        (long long)sd[MR_CFL_COIL_DIM], (long long)C);
    for (int i = MR_CFL_MAPS_DIM; i < MR_CFL_DIMS; i++)
        if (sd[i] != 1)
            return mr_error(MR_EFORMAT, "%s.hdr: dimension %d (%s) is %lld; mrirecon takes one set of maps (pick one "
                                        "with 'bart slice %d 0')",
                            name, i, dim_label(i), (long long)sd[i], i);
    int64_t m[3] = {sd[0], sd[1], sd[2]};
    char what[4200];
    snprintf(what, sizeof what, "%s: coil map grid", name);
    if (mr_matrix_check(m, what) != MR_OK)
        return MR_EFORMAT;
    return MR_OK;
}

mr_status mr_cfl_read_scan(const char *traj_name, const char *ksp_name, const mr_read_opts *opts, int bart_scale,
                           mr_kspace **out)
{
    *out = NULL;
    int64_t td[MR_CFL_DIMS], kd[MR_CFL_DIMS], sd[MR_CFL_DIMS];
    mr_cfl_extra tx, kx;
    float *t = NULL, *k = NULL, *sens = NULL;
    mr_kspace *ks = NULL;
    char sens_name[4096];
    const int have_sens = sens_of(ksp_name, sens_name, sizeof sens_name);
    /* shapes first (headers only), then the values */
    mr_status st = mr_cfl_read_header(traj_name, td, &tx);
    if (st == MR_OK)
        st = mr_cfl_read_header(ksp_name, kd, &kx);
    if (st == MR_OK && have_sens)
        st = mr_cfl_read_header(sens_name, sd, NULL);
    if (st != MR_OK)
        return st;
    if (td[0] != 2 && td[0] != 3)
        return mr_error(MR_EFORMAT, "%s.hdr: first dimension is %lld, a BART trajectory has 3 (kx, ky, kz)",
                        traj_name, (long long)td[0]);
    if (kd[0] != 1)
        return mr_error(MR_EFORMAT, "%s.hdr: first dimension is %lld, BART non-Cartesian k-space has 1", ksp_name,
                        (long long)kd[0]);
    for (int i = 3; i < MR_CFL_DIMS; i++) {
        if (td[i] != 1)
            return mr_error(MR_EFORMAT, "%s.hdr: dimension %d (%s) is %lld; a trajectory varies only in dims 1, 2",
                            traj_name, i, dim_label(i), (long long)td[i]);
        if (i != MR_CFL_COIL_DIM && kd[i] != 1)
            return mr_error(MR_EFORMAT, "%s.hdr: dimension %d (%s) is %lld: several volumes in one BART file are not "
                                        "read (split them with 'bart slice')",
                            ksp_name, i, dim_label(i), (long long)kd[i]);
    }
    for (int i = 1; i <= 2; i++)
        if (td[i] != kd[i])
            return mr_error(MR_EFORMAT, "%s: dimension %d (%s) is %lld in the trajectory and %lld in the k-space",
                            ksp_name, i, dim_label(i), (long long)td[i], (long long)kd[i]);
    const int64_t M = td[1] * td[2], C = kd[MR_CFL_COIL_DIM];
    if (M > MR_MAX_SAMPLES || C > MR_MAX_COILS)
        return mr_error(MR_EFORMAT, "%s: %lld samples x %lld coils exceeds the limits (%lld, %d)", ksp_name,
                        (long long)M, (long long)C, (long long)MR_MAX_SAMPLES, MR_MAX_COILS);
    if (have_sens && (st = check_sens_dims(sens_name, sd, C)) != MR_OK)
        return st;
    if ((st = mr_cfl_read(traj_name, td, &tx, &t)) != MR_OK || (st = mr_cfl_read(ksp_name, kd, &kx, &k)) != MR_OK)
        goto done;
    const int nd = (int)td[0];
    double kmax[3] = {0, 0, 0};
    for (int64_t m = 0; m < M; m++)
        for (int a = 0; a < nd; a++) {
            const float *c = t + 2 * (nd * m + a);
            if (c[1] != 0) {
                st = mr_error(MR_EFORMAT, "%s.cfl: trajectory value %lld has imaginary part %g, expected 0",
                              traj_name, (long long)(nd * m + a), (double)c[1]);
                goto done;
            }
            kmax[a] = fabs(c[0]) > kmax[a] ? fabs(c[0]) : kmax[a];
        }
    if (kmax[0] == 0 && kmax[1] == 0 && kmax[2] == 0) {
        st = mr_error(MR_EFORMAT, "%s.cfl: every trajectory value is 0 (all %lld samples at the k-space centre): "
                                  "nothing to reconstruct an image from",
                      traj_name, (long long)M);
        goto done;
    }
    int64_t matrix[3];
    float fov[3] = {0, 0, 0};
    const mr_cfl_extra *x = tx.present ? &tx : (kx.present ? &kx : NULL);
    for (int a = 0; a < 3; a++) {
        if (opts && opts->matrix[a] > 0)
            matrix[a] = opts->matrix[a];
        else if (x && x->matrix[a] > 0)
            matrix[a] = x->matrix[a];
        else if (have_sens)
            matrix[a] = sd[a]; /* as BART's pics: the image is the maps' grid */
        else if (kmax[a] > 0.5 * MR_MAX_MATRIX_EDGE) { /* before converting: 2 ceil(1e30) overflows */
            st = mr_error(MR_EFORMAT, "%s.cfl: the trajectory reaches |k| = %g cycles/FOV on axis %c; the matrix "
                                      "estimated from it as BART does (2 ceil(max |k|)) would exceed %d: the matrix "
                                      "must be given (the header's '# mrirecon' section, or the read options)",
                          traj_name, kmax[a], "xyz"[a], MR_MAX_MATRIX_EDGE);
            goto done;
        } else
            matrix[a] = kmax[a] == 0 ? 1 : 2 * (int64_t)ceil(kmax[a]); /* BART's estimate_im_dims */
        if (opts && opts->fov_mm[a] > 0)
            fov[a] = opts->fov_mm[a];
        else if (x)
            fov[a] = x->fov_mm[a];
    }
    char what[4200];
    snprintf(what, sizeof what, "%s: image matrix", traj_name);
    if ((st = mr_matrix_check(matrix, what)) != MR_OK) {
        st = MR_EFORMAT;
        goto done;
    }
    if (matrix[2] == 1 && kmax[2] != 0) {
        st = mr_error(MR_EFORMAT, "%s: the trajectory has kz values up to %g but the matrix is 2D (%lldx%lldx1); give "
                                  "a 3D matrix",
                      traj_name, kmax[2], (long long)matrix[0], (long long)matrix[1]);
        goto done;
    }
    if (have_sens) {
        if (sd[0] != matrix[0] || sd[1] != matrix[1] || sd[2] != matrix[2]) {
            st = mr_error(MR_EFORMAT, "%s.hdr: coil maps of %lldx%lldx%lld for an image matrix of %lldx%lldx%lld",
                          sens_name, (long long)sd[0], (long long)sd[1], (long long)sd[2], (long long)matrix[0],
                          (long long)matrix[1], (long long)matrix[2]);
            goto done;
        }
        if ((st = mr_cfl_read(sens_name, sd, NULL, &sens)) != MR_OK)
            goto done;
    }
    if ((st = mr_kspace_create(&ks, matrix, M, C)) != MR_OK)
        goto done;
    for (int64_t m = 0; m < M; m++)
        for (int a = 0; a < 3; a++)
            ks->traj[3 * m + a] = a < nd ? t[2 * (nd * m + a)] : 0.0f;
    if (bart_scale) {
        const double s = 1.0 / sqrt((double)mr_kspace_voxels(ks));
        for (int64_t i = 0; i < 2 * M * C; i++)
            ks->data[i] = (float)(k[i] * s);
    } else {
        memcpy(ks->data, k, (size_t)(M * C) * 2 * sizeof(float));
    }
    if (sens) {
        ks->sens = sens; /* the same bytes as BART's [X][Y][Z][COIL] */
        sens = NULL;
    }
    memcpy(ks->fov_mm, fov, sizeof fov);
    snprintf(ks->traj_kind, sizeof ks->traj_kind, "%s", x && x->trajectory[0] ? x->trajectory : "bart");
    mr_h5_text_clean(ks->traj_kind);
    int64_t outside = mr_kspace_count_outside(ks, NULL);
    if (outside > 0)
        mr_log(MR_LOG_WARN, "%s: %lld samples lie outside the Nyquist box of the %lldx%lldx%lld matrix", traj_name,
               (long long)outside, (long long)matrix[0], (long long)matrix[1], (long long)matrix[2]);
done:
    free(t);
    free(k);
    free(sens);
    if (st != MR_OK) {
        mr_kspace_free(ks);
        return st;
    }
    *out = ks;
    return MR_OK;
}

mr_status mr_cfl_pair_names(const char *path, char *traj, char *ksp, size_t size)
{
    char base[4096];
    size_t n = strlen(path);
    if (n >= sizeof base)
        return mr_error(MR_EINVAL, "%s: path too long", path);
    memcpy(base, path, n + 1);
    if (ends_with(base, ".cfl") || ends_with(base, ".hdr"))
        base[n - 4] = '\0';
    char prefix[4096];
    snprintf(prefix, sizeof prefix, "%s", base);
    if (ends_with(base, "_ksp"))
        prefix[strlen(base) - 4] = '\0';
    else if (ends_with(base, "_traj"))
        prefix[strlen(base) - 5] = '\0';
    int a = snprintf(traj, size, "%s_traj", prefix), b = snprintf(ksp, size, "%s_ksp", prefix);
    if (a < 0 || b < 0 || (size_t)a >= size || (size_t)b >= size)
        return mr_error(MR_EINVAL, "%s: path too long", path);
    return MR_OK;
}
