/* recon/api/api.h: the C API of libmrirecon over the commands' option tables (recon/cli/cmd_args.h), the read
 * stage (recon/pipeline/volumes.h), the pipeline (recon/pipeline/pipeline.h) and the image writers (recon/api/image_file.h). */
#include "api.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/cpu.h"
#include "../../base/log.h"
#include "../../base/status.h"
#include "../../io/cfl.h"
#include "../../io/h5util.h"
#include "../../io/image_io.h"
#include "../../io/input.h"
#include "../../io/kspace_h5.h"
#include "../cli/cmd_args.h"
#include "image_file.h"
#include "../cli/opts.h"
#include "../pipeline/outdir.h"
#include "../pipeline/pipeline.h"
#include "../cli/read_cli.h"
#include "../report/report.h"
#include "../pipeline/volumes.h"

struct mr_api_scan {
    mr_kspace *ks;
    mr_api_scan_info info; /* the description; sizes mirror ks */
};

/* ---- status, strings, command lines -------------------------------------------------------------- */

/* The library's messages name a setting as {name} (base/status.h); the API's settings are the commands'
 * options (argv), so they are spelled as options, once, when the library is loaded. */
#if defined(__GNUC__)
__attribute__((constructor)) static void api_spelling(void) { mr_error_set_spelling("--", '-', ""); }
#endif

int mr_api_version(void) { return MR_API_VERSION; }

const char *mr_api_last_error(void) { return mr_last_error(); }

const char *mr_api_status_name(int status)
{
    if (status == MR_API_USAGE)
        return "USAGE";
    switch (status) {
#define MR_API_STATUS_NAME(name, text)                                                                            \
    case MR_##name:                                                                                               \
        return #name;
        MR_STATUS_TABLE(MR_API_STATUS_NAME)
#undef MR_API_STATUS_NAME
    default:
        return "UNKNOWN";
    }
}

void mr_api_free(void *p) { free(p); }

size_t mr_api_sizeof(const char *name)
{
    if (!name)
        return 0;
    if (!strcmp(name, "scan_info"))
        return sizeof(mr_api_scan_info);
    if (!strcmp(name, "image_info"))
        return sizeof(mr_api_image_info);
    if (!strcmp(name, "geometry"))
        return sizeof(mr_api_geometry);
    return 0;
}


/* argv for a command's parser: {command, args..., "--", positional} (the positional after "--", so that
 * a name starting with '-' is not an option); NULL positional: none. The caller frees the array. */
static char **command_line(const char *command, int argc, const char *const *argv, const char *positional, int *n)
{
    char **full = calloc((size_t)argc + 4, sizeof *full);
    if (!full) {
        mr_error(MR_ENOMEM, "out of memory");
        return NULL;
    }
    int k = 0;
    full[k++] = (char *)command;
    for (int i = 0; i < argc; i++)
        full[k++] = (char *)argv[i];
    if (positional) {
        full[k++] = "--";
        full[k++] = (char *)positional;
    }
    *n = k;
    return full;
}

/* A usage error found after parsing: recorded as the command prints it, nothing printed. */
static int api_usage(const mr_cmd_spec *spec, const char *msg)
{
    const int was = mr_opts_set_print(0);
    mr_opts_usage(spec, "%s", msg);
    mr_opts_set_print(was);
    return MR_API_USAGE;
}

/* Parse with the table of `spec` without printing; MR_OK or MR_API_USAGE. */
typedef int (*parse_fn)(void *args, int argc, char **argv);

static int parse_quiet(parse_fn parse, void *args, const mr_cmd_spec *spec, int argc, char **argv)
{
    const int was = mr_opts_set_print(0);
    const int rc = parse(args, argc, argv);
    mr_opts_set_print(was);
    if (rc == MR_OPTS_GO)
        return MR_OK;
    if (rc == MR_EXIT_OK) /* --help: printed nothing */
        mr_error(MR_EINVAL, "mrirecon %s: --help prints nothing here; the help function gives the text", spec->name);
    return MR_API_USAGE;
}

/* ---- the read options: recon's reader options and --volume ----------------------------------------- */

typedef struct {
    mr_read_cli rdc;
    int volume, verbose, quiet;
    mr_opt table[16];
    mr_cmd_spec spec;
    mr_opts_result res;
    const char *path;
} read_args;

static void read_args_init(read_args *a)
{
    memset(a, 0, sizeof *a);
    mr_read_cli_init(&a->rdc);
    a->volume = -1;
    const mr_opt table[] = {
        MR_READ_CLI_OPTS(&a->rdc),
        {"volume", 0, MR_OPT_INT, &a->volume, "N",
         "read volume N ('mrirecon info' lists them; -1: the file must hold one)", NULL, -1, 1000000},
        {"verbose", 'v', MR_OPT_FLAG, &a->verbose, NULL, "more diagnostics", NULL, 0, -1},
        {"quiet", 'q', MR_OPT_FLAG, &a->quiet, NULL, "only warnings and errors on stderr", NULL, 0, -1},
    };
    _Static_assert(sizeof table / sizeof table[0] <= sizeof a->table / sizeof a->table[0], "read's table");
    memcpy(a->table, table, sizeof table);
    a->spec = (mr_cmd_spec){"read",
                            "SCAN",
                            "read a scan (the C API: mr_api_scan_read; Python: mrirecon.read)",
                            "SCAN is read as `mrirecon recon` reads it, with its reader options.",
                            a->table,
                            (int)(sizeof table / sizeof table[0]),
                            1,
                            1};
}

static int read_args_parse(void *args, int argc, char **argv)
{
    read_args *a = args;
    int rc = mr_opts_begin(&a->spec, argc, argv, &a->res, &a->verbose, &a->quiet);
    if (rc != MR_OPTS_GO)
        return rc;
    a->path = a->res.positional[0];
    mr_opts_free(&a->res);
    return MR_OPTS_GO;
}

static int recon_parse(void *args, int argc, char **argv) { return mr_recon_args_parse(args, argc, argv); }
static int phantom_parse(void *args, int argc, char **argv) { return mr_phantom_args_parse(args, argc, argv); }

/* The tables the API knows, each in a heap struct (they are large). */
typedef union {
    mr_recon_args recon;
    mr_phantom_args phantom;
    read_args read;
} any_args;

static const mr_cmd_spec *spec_of(const char *command, any_args **out)
{
    *out = NULL;
    any_args *u = malloc(sizeof *u);
    if (!u) {
        mr_error(MR_ENOMEM, "out of memory");
        return NULL;
    }
    const mr_cmd_spec *spec = NULL;
    if (command && !strcmp(command, "recon")) {
        mr_recon_args_init(&u->recon);
        spec = &u->recon.spec;
    } else if (command && !strcmp(command, "phantom")) {
        mr_phantom_args_init(&u->phantom);
        spec = &u->phantom.spec;
    } else if (command && !strcmp(command, "read")) {
        read_args_init(&u->read);
        spec = &u->read.spec;
    } else {
        free(u);
        mr_error(MR_EINVAL, "unknown command '%s' (recon, phantom, read)", command ? command : "(null)");
        return NULL;
    }
    *out = u;
    return spec;
}

static const char *type_name(mr_opt_type t)
{
    switch (t) {
    case MR_OPT_FLAG:
        return "flag";
    case MR_OPT_INT:
    case MR_OPT_INT_OR_0:
        return "int";
    case MR_OPT_DOUBLE:
        return "double";
    case MR_OPT_STRING:
        return "string";
    case MR_OPT_CHOICE:
        return "choice";
    case MR_OPT_LIST:
        return "list";
    case MR_OPT_DEVICE:
        return "device";
    case MR_OPT_PRECISION:
        return "precision";
    }
    return "string";
}

/* text of a memory stream, or MR_ENOMEM */
static int stream_open(FILE **f, char **buf, size_t *len)
{
    *buf = NULL;
    *f = open_memstream(buf, len);
    return *f ? MR_OK : mr_error(MR_ENOMEM, "out of memory for a text");
}

static int stream_close(FILE *f, char **buf, char **text)
{
    const int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        free(*buf);
        return mr_error(MR_ENOMEM, "out of memory for a text");
    }
    *text = *buf;
    return MR_OK;
}

/* The option table as mr_api_options lists it. */
static void print_options(const mr_cmd_spec *spec, FILE *f)
{
    for (int i = 0; i < spec->nopts; i++) {
        const mr_opt *o = &spec->opts[i];
        fprintf(f, "%s\t", o->name);
        if (o->short_name)
            fputc(o->short_name, f);
        fprintf(f, "\t%s\t", type_name(o->type));
        for (const char *const *c = o->type == MR_OPT_CHOICE ? o->choices : NULL; c && *c; c++)
            fprintf(f, "%s%s", c == o->choices ? "" : "|", *c);
        fputc('\n', f);
    }
}

/* A text about a command's table: print(spec, f) into *text. */
static int command_text(const char *command, void (*print)(const mr_cmd_spec *, FILE *), char **text)
{
    *text = NULL;
    any_args *u;
    const mr_cmd_spec *spec = spec_of(command, &u);
    if (!spec)
        return MR_EINVAL;
    FILE *f;
    char *buf;
    size_t len;
    int st = stream_open(&f, &buf, &len);
    if (st == MR_OK) {
        print(spec, f);
        st = stream_close(f, &buf, text);
    }
    free(u);
    return st;
}

int mr_api_options(const char *command, char **text) { return command_text(command, print_options, text); }

int mr_api_help(const char *command, char **text) { return command_text(command, mr_opts_help, text); }

/* ---- scans ---------------------------------------------------------------------------------------- */

static float **array_of(mr_kspace *ks, int array)
{
    switch (array) {
    case MR_API_TRAJ:
        return &ks->traj;
    case MR_API_DATA:
        return &ks->data;
    case MR_API_WEIGHTS:
        return &ks->weights;
    case MR_API_TRUTH:
        return &ks->truth;
    case MR_API_TRUTH_BL:
        return &ks->truth_bl;
    case MR_API_SENS:
        return &ks->sens;
    case MR_API_TIME:
        return &ks->time;
    case MR_API_FIELDMAP:
        return &ks->fieldmap;
    default:
        return NULL;
    }
}

/* the names the Python package gives them */
static const char *const array_names[MR_API_ARRAYS] = {"trajectory", "data", "weights", "truth",
                                                       "truth_bandlimited", "sens", "time", "fieldmap"};

/* The size of an array of ks in floats (present or not). */
static int64_t array_floats(const mr_kspace *ks, int array)
{
    const int64_t m = ks->nsamples, c = ks->ncoils, n = mr_kspace_voxels(ks);
    static const int per[MR_API_ARRAYS] = {3, 2, 1, 1, 1, 2, 1, 1};
    const int64_t count[MR_API_ARRAYS] = {m, c * m, m, n, n, c * n, m, n};
    return array >= 0 && array < MR_API_ARRAYS ? per[array] * count[array] : 0;
}

int64_t mr_api_scan_size(const mr_api_scan *s, int array)
{
    float **p = s ? array_of(s->ks, array) : NULL;
    return p && *p ? array_floats(s->ks, array) : 0;
}

/* The description of a scan from its mr_kspace (sizes, metadata) and where it came from. */
static void info_from_kspace(mr_api_scan_info *info, const mr_kspace *ks)
{
    memcpy(info->matrix, ks->matrix, sizeof info->matrix);
    info->nsamples = ks->nsamples;
    info->ncoils = ks->ncoils;
    memcpy(info->fov_mm, ks->fov_mm, sizeof info->fov_mm);
    info->noise_sigma = ks->noise_sigma;
    info->snr_db = ks->snr_db;
    info->noise_seed = ks->noise_seed;
    snprintf(info->traj_kind, sizeof info->traj_kind, "%s", ks->traj_kind);
    snprintf(info->phantom, sizeof info->phantom, "%s", ks->phantom);
}

static void geometry_to_api(const mr_geometry *g, mr_api_geometry *a)
{
    memset(a, 0, sizeof *a);
    if (!g)
        return;
    a->present = 1;
    memcpy(a->position, g->position, sizeof a->position);
    memcpy(a->read_dir, g->read_dir, sizeof a->read_dir);
    memcpy(a->phase_dir, g->phase_dir, sizeof a->phase_dir);
    memcpy(a->slice_dir, g->slice_dir, sizeof a->slice_dir);
}

static void geometry_from_api(const mr_api_geometry *a, mr_geometry *g)
{
    memcpy(g->position, a->position, sizeof g->position);
    memcpy(g->read_dir, a->read_dir, sizeof g->read_dir);
    memcpy(g->phase_dir, a->phase_dir, sizeof g->phase_dir);
    memcpy(g->slice_dir, a->slice_dir, sizeof g->slice_dir);
}

static mr_api_scan *scan_new(mr_kspace *ks, const char *name)
{
    mr_api_scan *s = calloc(1, sizeof *s);
    if (!s) {
        mr_kspace_free(ks);
        mr_error(MR_ENOMEM, "out of memory");
        return NULL;
    }
    s->ks = ks;
    info_from_kspace(&s->info, ks);
    snprintf(s->info.name, sizeof s->info.name, "%s", name);
    snprintf(s->info.format, sizeof s->info.format, "%s", "arrays");
    s->info.volumes = 1;
    snprintf(s->info.label, sizeof s->info.label, "%s", "volume0");
    return s;
}

int mr_api_scan_read(const char *path, int argc, const char *const *argv, mr_api_scan **out)
{
    *out = NULL;
    if (!path)
        return mr_error(MR_EINVAL, "mr_api_scan_read: no path");
    read_args *a = malloc(sizeof *a);
    int n = 0;
    char **full = command_line("read", argc, argv, path, &n);
    if (!a || !full) {
        free(a);
        free(full);
        return mr_error(MR_ENOMEM, "out of memory");
    }
    read_args_init(a);
    int st = parse_quiet(read_args_parse, a, &a->spec, n, full);
    mr_read_opts ro;
    int white = 1;
    if (st == MR_OK && mr_read_cli_apply(&a->rdc, &ro, &white) != MR_OK)
        st = api_usage(&a->spec, mr_last_error());
    if (st == MR_OK && mr_read_cli_check(&a->spec, &a->res, &ro, path) != MR_OK)
        st = api_usage(&a->spec, mr_last_error());
    mr_input *in = NULL;
    if (st == MR_OK)
        st = mr_input_open(path, &ro, &in);
    const int nvol = st == MR_OK ? mr_input_nvolumes(in) : 0;
    if (st == MR_OK && a->volume >= nvol)
        st = mr_error(MR_EINVAL, "%s: --volume %d, but the input holds %d volume(s) (0..%d; 'mrirecon info' lists them)",
                      path, a->volume, nvol, nvol - 1);
    else if (st == MR_OK && a->volume < 0 && nvol > 1)
        st = mr_error(MR_EINVAL, "%s holds %d volumes (0..%d; 'mrirecon info' lists them): choose one with --volume N",
                      path, nvol, nvol - 1);
    mr_kspace *ks = NULL;
    mr_volume_desc vd;
    if (st == MR_OK)
        st = mr_volume_read(in, a->volume >= 0 ? a->volume : 0, white, &ks, &vd);
    mr_api_scan *s = st == MR_OK ? scan_new(ks, path) : NULL;
    if (st == MR_OK && !s)
        st = MR_ENOMEM;
    if (s) {
        mr_api_scan_info *i = &s->info;
        snprintf(i->format, sizeof i->format, "%s", mr_input_format_name(vd.format));
        i->volume = vd.index;
        i->volumes = vd.count;
        snprintf(i->label, sizeof i->label, "%s", vd.label);
        i->prewhitened = vd.prewhitened;
        i->noise_samples = vd.noise_samples;
        if (vd.info) {
            i->has_grid = 1;
            memcpy(i->recon_matrix, vd.info->recon_matrix, sizeof i->recon_matrix);
            memcpy(i->recon_fov_mm, vd.info->recon_fov_mm, sizeof i->recon_fov_mm);
            geometry_to_api(&vd.info->geometry, &i->geometry);
        }
        *out = s;
    }
    mr_input_close(in);
    free(full);
    free(a);
    return st;
}

int mr_api_scan_create(const mr_api_scan_info *info, mr_api_scan **out)
{
    *out = NULL;
    const char *name = info->name[0] ? info->name : "arrays";
    mr_kspace *ks = NULL;
    mr_status st = mr_kspace_create(&ks, info->matrix, info->nsamples, info->ncoils);
    if (st != MR_OK) {
        char why[1024];
        snprintf(why, sizeof why, "%s", mr_last_error());
        return mr_error(st, "%s: %s", name, why);
    }
    for (int a = 0; a < 3; a++)
        if (!isfinite(info->fov_mm[a]) || info->fov_mm[a] < 0) {
            mr_kspace_free(ks);
            return mr_error(MR_EINVAL, "%s: fov[%d] = %g mm is not a finite number >= 0 (0: unknown)", name, a,
                            (double)info->fov_mm[a]);
        }
    if (isnan(info->noise_sigma) || isinf(info->noise_sigma)) {
        mr_kspace_free(ks);
        return mr_error(MR_EINVAL, "%s: noise_sigma = %g is not finite (< 0: unknown)", name, info->noise_sigma);
    }
    memcpy(ks->fov_mm, info->fov_mm, sizeof ks->fov_mm);
    ks->noise_sigma = info->noise_sigma;
    ks->snr_db = isnan(info->snr_db) ? 0 : info->snr_db;
    ks->noise_seed = info->noise_seed;
    snprintf(ks->traj_kind, sizeof ks->traj_kind, "%s", info->traj_kind);
    snprintf(ks->phantom, sizeof ks->phantom, "%s", info->phantom);
    mr_api_scan *s = scan_new(ks, name);
    if (!s)
        return MR_ENOMEM;
    /* where it came from, kept for the reconstruction (its crop and placement) */
    mr_api_scan_info *i = &s->info;
    if (info->format[0])
        snprintf(i->format, sizeof i->format, "%s", info->format);
    i->volume = info->volume;
    i->volumes = info->volumes > 0 ? info->volumes : 1;
    if (info->label[0])
        snprintf(i->label, sizeof i->label, "%s", info->label);
    i->prewhitened = info->prewhitened;
    i->noise_samples = info->noise_samples;
    i->has_grid = info->has_grid;
    memcpy(i->recon_matrix, info->recon_matrix, sizeof i->recon_matrix);
    memcpy(i->recon_fov_mm, info->recon_fov_mm, sizeof i->recon_fov_mm);
    i->geometry = info->geometry;
    *out = s;
    return MR_OK;
}

int mr_api_scan_set(mr_api_scan *s, int array, const float *src, int64_t nfloats)
{
    float **p = array_of(s->ks, array);
    if (!p)
        return mr_error(MR_EINVAL, "%s: no array %d (0..%d)", s->info.name, array, MR_API_ARRAYS - 1);
    const char *what = array_names[array];
    const int64_t want = array_floats(s->ks, array);
    if (nfloats != want)
        return mr_error(MR_EINVAL, "%s: %s: %lld values given, the scan's sizes need %lld", s->info.name, what,
                        (long long)nfloats, (long long)want);
    const int64_t bad = mr_h5_first_nonfinite(src, (size_t)nfloats);
    if (bad >= 0)
        return mr_error(MR_EINVAL, "%s: %s: non-finite value %g at flat index %lld", s->info.name, what,
                        (double)src[bad], (long long)bad);
    for (int64_t i = 0; array == MR_API_WEIGHTS && i < nfloats; i++)
        if (src[i] < 0)
            return mr_error(MR_EINVAL, "%s: weights: negative weight %g at [%lld]", s->info.name, (double)src[i],
                            (long long)i);
    if (!*p) {
        *p = malloc((size_t)want * sizeof(float));
        if (!*p)
            return mr_error(MR_ENOMEM, "%s: out of memory for %s (%lld values)", s->info.name, what, (long long)want);
    }
    memcpy(*p, src, (size_t)want * sizeof(float));
    return MR_OK;
}

int mr_api_scan_get(const mr_api_scan *s, int array, float *dst, int64_t nfloats)
{
    float **p = array_of(s->ks, array);
    if (!p || !*p)
        return mr_error(MR_EINVAL, "%s: the scan has no %s", s->info.name, p ? array_names[array] : "such array");
    const int64_t want = array_floats(s->ks, array);
    if (nfloats != want)
        return mr_error(MR_EINVAL, "%s: %s holds %lld values, not %lld", s->info.name, array_names[array],
                        (long long)want, (long long)nfloats);
    memcpy(dst, *p, (size_t)want * sizeof(float));
    return MR_OK;
}

void mr_api_scan_info_get(const mr_api_scan *s, mr_api_scan_info *info) { *info = s->info; }

int mr_api_scan_write(const mr_api_scan *s, const char *path, const char *format, int bart_scale)
{
    const size_t n = strlen(path);
    const int h5 = n >= 3 && (!strcmp(path + n - 3, ".h5") || (n >= 5 && !strcmp(path + n - 5, ".hdf5")));
    if (format && strcmp(format, "mrirecon") && strcmp(format, "bart"))
        return mr_error(MR_EINVAL, "%s: scan format '%s' is not mrirecon or bart", path, format);
    const int bart = format ? !strcmp(format, "bart") : !h5;
    if (!bart && bart_scale)
        return mr_error(MR_EINVAL, "%s: the BART scaling applies to BART output", path);
    if (!bart)
        return mr_kspace_write(path, s->ks);
    return mr_cfl_write_scan(path, s->ks, bart_scale);
}

void mr_api_scan_free(mr_api_scan *s)
{
    if (!s)
        return;
    mr_kspace_free(s->ks);
    free(s);
}

int mr_api_phantom(int argc, const char *const *argv, mr_api_scan **out)
{
    *out = NULL;
    mr_phantom_args *a = malloc(sizeof *a);
    int n = 0;
    char **full = command_line("phantom", argc, argv, NULL, &n);
    if (!a || !full) {
        free(a);
        free(full);
        return mr_error(MR_ENOMEM, "out of memory");
    }
    mr_phantom_args_init(a);
    int st = parse_quiet(phantom_parse, a, &a->spec, n, full);
    if (st == MR_OK && a->suite)
        st = api_usage(&a->spec, "--suite writes the standard suite's files: run the command (mrirecon phantom "
                                 "--suite DIR)");
    mr_kspace *ks = NULL;
    if (st == MR_OK)
        st = mr_scan_simulate(&a->sp, &ks);
    if (st == MR_OK && a->out)
        st = mr_kspace_write(a->out, ks);
    if (st == MR_OK) {
        mr_api_scan *s = scan_new(ks, a->out ? a->out : "phantom");
        ks = NULL;
        if (!s)
            st = MR_ENOMEM;
        else {
            snprintf(s->info.format, sizeof s->info.format, "%s", "phantom");
            *out = s;
        }
    }
    mr_kspace_free(ks);
    free(full);
    free(a);
    return st;
}

/* ---- reconstruction ------------------------------------------------------------------------------- */

typedef struct {
    char label[MR_VOLUME_LABEL_MAX];
    int nmethods;
    mr_api_image_info info[MR_REPORT_MAX_METHODS];
    float *img[MR_REPORT_MAX_METHODS];
    char *report;
} api_volume;

struct mr_api_result {
    api_volume *v;
    int n, cap;
    mr_status failed; /* a copy that could not be made (the pipeline's callback cannot fail) */
};

static void result_volume_free(api_volume *v)
{
    for (int m = 0; m < v->nmethods; m++)
        free(v->img[m]);
    free(v->report);
}

/* the pipeline's on_report: every volume's images and report, copied */
static void collect(void *ctx, const mr_report *r)
{
    mr_api_result *res = ctx;
    if (res->failed)
        return;
    if (res->n == res->cap) {
        const int cap = res->cap ? 2 * res->cap : 4;
        api_volume *v = realloc(res->v, (size_t)cap * sizeof *v);
        if (!v) {
            res->failed = mr_error(MR_ENOMEM, "out of memory for the results");
            return;
        }
        res->v = v;
        res->cap = cap;
    }
    api_volume *v = &res->v[res->n];
    memset(v, 0, sizeof *v);
    snprintf(v->label, sizeof v->label, "%s", r->volume_label);
    const int64_t voxels = r->matrix[0] * r->matrix[1] * r->matrix[2];
    for (int m = 0; m < r->nmethods && m < MR_REPORT_MAX_METHODS; m++) {
        mr_api_image_info *i = &v->info[m];
        memcpy(i->matrix, r->matrix, sizeof i->matrix);
        memcpy(i->fov_mm, r->fov_mm, sizeof i->fov_mm);
        geometry_to_api(r->geometry, &i->geometry);
        snprintf(i->method, sizeof i->method, "%s", r->m[m].method);
        v->img[m] = malloc((size_t)voxels * 2 * sizeof(float));
        v->nmethods = m + 1;
        if (!v->img[m]) {
            result_volume_free(v);
            res->failed = mr_error(MR_ENOMEM, "out of memory for a %lld-voxel image", (long long)voxels);
            return;
        }
        memcpy(v->img[m], r->images[m], (size_t)voxels * 2 * sizeof(float));
    }
    FILE *f;
    char *buf;
    size_t len;
    if (stream_open(&f, &buf, &len) != MR_OK ||
        (mr_report_print_json(f, r), stream_close(f, &buf, &v->report)) != MR_OK) {
        result_volume_free(v);
        res->failed = MR_ENOMEM;
        return;
    }
    res->n++;
}

/* a deep copy of a scan for a run (which owns and may change what it gets) */
static mr_status kspace_copy(const mr_kspace *ks, mr_kspace **out)
{
    mr_kspace *c = malloc(sizeof *c);
    *out = NULL;
    if (!c)
        return mr_error(MR_ENOMEM, "out of memory for a copy of the scan");
    *c = *ks;
    for (int a = 0; a < MR_API_ARRAYS; a++)
        *array_of(c, a) = NULL;
    for (int a = 0; a < MR_API_ARRAYS; a++) {
        const float *src = *array_of((mr_kspace *)ks, a);
        float **dst = array_of(c, a);
        const size_t bytes = (size_t)array_floats(ks, a) * sizeof(float);
        if (src && !(*dst = malloc(bytes))) {
            mr_kspace_free(c);
            return mr_error(MR_ENOMEM, "out of memory for a copy of the scan");
        }
        if (src)
            memcpy(*dst, src, bytes);
    }
    *out = c;
    return MR_OK;
}

/* The description of a scan in memory for the pipeline (recon/pipeline/volumes.h): its format, volume and grid;
 * NULL (an own scan: format "arrays") when it came from no file and has no grid. */
static const mr_volume_desc *scan_desc(const mr_api_scan *s, mr_volume_desc *d, mr_volume_info *vi)
{
    const mr_api_scan_info *i = &s->info;
    memset(d, 0, sizeof *d);
    memset(vi, 0, sizeof *vi);
    static const mr_input_format formats[] = {MR_INPUT_MRIRECON, MR_INPUT_ISMRMRD, MR_INPUT_BART};
    for (size_t k = 0; k < sizeof formats / sizeof formats[0]; k++)
        if (!strcmp(i->format, mr_input_format_name(formats[k])))
            d->format = formats[k];
    if (!d->format && !i->has_grid)
        return NULL;
    d->index = i->volume;
    d->count = i->volumes > 0 ? i->volumes : 1;
    snprintf(d->label, sizeof d->label, "%s", i->label);
    d->prewhitened = i->prewhitened;
    d->noise_samples = i->noise_samples;
    if (i->has_grid) {
        memcpy(vi->matrix, i->matrix, sizeof vi->matrix);
        memcpy(vi->fov_mm, i->fov_mm, sizeof vi->fov_mm);
        memcpy(vi->recon_matrix, i->recon_matrix, sizeof vi->recon_matrix);
        memcpy(vi->recon_fov_mm, i->recon_fov_mm, sizeof vi->recon_fov_mm);
        if (i->geometry.present)
            geometry_from_api(&i->geometry, &vi->geometry);
        else
            mr_geometry_default(&vi->geometry);
        d->info = vi;
    }
    return d;
}

int mr_api_recon(const char *path, const mr_api_scan *scan, int argc, const char *const *argv, mr_api_result **out)
{
    *out = NULL;
    if (!path == !scan)
        return mr_error(MR_EINVAL, "mr_api_recon: give a scan file or a scan in memory (one of them)");
    mr_cpu_level level; /* an unusable MR_CPU_KERNEL is refused before any work, as the command does */
    if (mr_cpu_level_get(&level) != MR_OK)
        return MR_EINVAL;
    const char *name = path ? path : scan->info.name;
    mr_recon_args *a = malloc(sizeof *a);
    mr_api_result *res = calloc(1, sizeof *res);
    int n = 0;
    char **full = command_line("recon", argc, argv, name, &n);
    if (!a || !res || !full) {
        free(a);
        free(res);
        free(full);
        return mr_error(MR_ENOMEM, "out of memory");
    }
    mr_recon_args_init(a);
    a->in_memory = scan != NULL;
    int st = parse_quiet(recon_parse, a, &a->spec, n, full);
    /* another run's outputs in OUTDIR: a usage error, as in the command */
    if (st == MR_OK && a->outdir && mr_outdir_check(a->outdir, a->o.force) == MR_EINVAL)
        st = api_usage(&a->spec, mr_last_error());
    a->o.on_report = collect;
    a->o.on_report_ctx = res;
    if (st == MR_OK && scan) {
        mr_kspace *ks = NULL;
        mr_volume_desc d;
        mr_volume_info vi;
        const mr_volume_desc *desc = scan_desc(scan, &d, &vi);
        st = kspace_copy(scan->ks, &ks);
        if (st == MR_OK)
            st = mr_recon_run_kspace(ks, desc, name, a->outdir, &a->o);
    } else if (st == MR_OK) {
        st = mr_recon_run(path, a->outdir, &a->o);
    }
    if (st == MR_OK && res->failed)
        st = res->failed;
    free(full);
    free(a);
    if (st != MR_OK) {
        mr_api_result_free(res);
        return st;
    }
    *out = res;
    return MR_OK;
}

static const api_volume *volume_of(const mr_api_result *r, int volume)
{
    if (!r || volume < 0 || volume >= r->n) {
        mr_error(MR_EINVAL, "no volume %d in the result (%d)", volume, r ? r->n : 0);
        return NULL;
    }
    return &r->v[volume];
}

int mr_api_result_volumes(const mr_api_result *r) { return r ? r->n : 0; }

int mr_api_result_methods(const mr_api_result *r, int volume)
{
    const api_volume *v = volume_of(r, volume);
    return v ? v->nmethods : 0;
}

const char *mr_api_result_label(const mr_api_result *r, int volume)
{
    const api_volume *v = volume_of(r, volume);
    return v ? v->label : "";
}

const char *mr_api_result_report(const mr_api_result *r, int volume)
{
    const api_volume *v = volume_of(r, volume);
    return v ? v->report : "";
}

int mr_api_result_image_info(const mr_api_result *r, int volume, int method, mr_api_image_info *info)
{
    const api_volume *v = volume_of(r, volume);
    if (!v)
        return MR_EINVAL;
    if (method < 0 || method >= v->nmethods)
        return mr_error(MR_EINVAL, "no method %d in volume %d (%d)", method, volume, v->nmethods);
    *info = v->info[method];
    return MR_OK;
}

int mr_api_result_image(const mr_api_result *r, int volume, int method, float *dst, int64_t nfloats)
{
    mr_api_image_info info;
    memset(&info, 0, sizeof info);
    int st = mr_api_result_image_info(r, volume, method, &info);
    if (st != MR_OK)
        return st;
    const int64_t want = 2 * info.matrix[0] * info.matrix[1] * info.matrix[2];
    if (nfloats != want)
        return mr_error(MR_EINVAL, "the image holds %lld values, not %lld", (long long)want, (long long)nfloats);
    memcpy(dst, r->v[volume].img[method], (size_t)want * sizeof(float));
    return MR_OK;
}

void mr_api_result_free(mr_api_result *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->n; i++)
        result_volume_free(&r->v[i]);
    free(r->v);
    free(r);
}

/* ---- images --------------------------------------------------------------------------------------- */

struct mr_api_image {
    mr_image *im;
};

int mr_api_image_write(const char *path, const char *format, const float *data, const mr_api_image_info *info,
                       int nifti_complex, double window_hi, const char *description)
{
    mr_image_format f;
    mr_status st = mr_image_file_format(format, path, &f);
    if (st != MR_OK) {
        char why[1024];
        snprintf(why, sizeof why, "%s", mr_last_error());
        return mr_error(st, "%s: %s", path, why);
    }
    int64_t n = 1;
    for (int a = 0; a < 3; a++) {
        if (info->matrix[a] < 1 || info->matrix[a] > MR_MAX_MATRIX_EDGE)
            return mr_error(MR_EINVAL, "%s: image edge %d = %lld is outside 1..%d", path, a,
                            (long long)info->matrix[a], MR_MAX_MATRIX_EDGE);
        if (!isfinite(info->fov_mm[a]) || info->fov_mm[a] < 0)
            return mr_error(MR_EINVAL, "%s: fov[%d] = %g mm is not a finite number >= 0 (0: unknown)", path, a,
                            (double)info->fov_mm[a]);
        n *= info->matrix[a];
    }
    const int64_t bad = mr_h5_first_nonfinite(data, (size_t)(2 * n));
    if (bad >= 0)
        return mr_error(MR_EINVAL, "%s: the image has a non-finite value %g at flat index %lld (of its re, im pairs)",
                        path, (double)data[bad], (long long)bad);
    mr_image im;
    memset(&im, 0, sizeof im);
    memcpy(im.matrix, info->matrix, sizeof im.matrix);
    memcpy(im.fov_mm, info->fov_mm, sizeof im.fov_mm);
    im.data = (float *)data; /* read only: the writers do not change it */
    im.has_geometry = info->geometry.present;
    if (im.has_geometry)
        geometry_from_api(&info->geometry, &im.geometry);
    else
        mr_geometry_default(&im.geometry);
    snprintf(im.method, sizeof im.method, "%s", info->method);
    mr_image_write_opts o;
    mr_image_write_opts_default(&o);
    o.nifti_complex = nifti_complex;
    o.window_lo = 0;
    o.window_hi = window_hi > 0 ? window_hi : 0;
    char desc[64];
    snprintf(desc, sizeof desc, "mrirecon %.40s", info->method[0] ? info->method : "python");
    o.description = description ? description : desc;
    return mr_image_file_write(f, path, &im, &o, NULL, 0);
}

int mr_api_image_read(const char *path, mr_api_image **out)
{
    *out = NULL;
    mr_api_image *r = calloc(1, sizeof *r);
    if (!r)
        return mr_error(MR_ENOMEM, "out of memory");
    mr_status st = mr_image_read(path, &r->im);
    if (st != MR_OK) {
        free(r);
        return st;
    }
    *out = r;
    return MR_OK;
}

void mr_api_image_info_get(const mr_api_image *im, mr_api_image_info *info)
{
    memset(info, 0, sizeof *info);
    memcpy(info->matrix, im->im->matrix, sizeof info->matrix);
    memcpy(info->fov_mm, im->im->fov_mm, sizeof info->fov_mm);
    geometry_to_api(im->im->has_geometry ? &im->im->geometry : NULL, &info->geometry);
    snprintf(info->method, sizeof info->method, "%s", im->im->method);
}

int mr_api_image_get(const mr_api_image *im, float *dst, int64_t nfloats)
{
    const int64_t want = 2 * im->im->matrix[0] * im->im->matrix[1] * im->im->matrix[2];
    if (nfloats != want)
        return mr_error(MR_EINVAL, "the image holds %lld values, not %lld", (long long)want, (long long)nfloats);
    memcpy(dst, im->im->data, (size_t)want * sizeof(float));
    return MR_OK;
}

void mr_api_image_free(mr_api_image *im)
{
    if (!im)
        return;
    mr_image_free(im->im);
    free(im);
}
