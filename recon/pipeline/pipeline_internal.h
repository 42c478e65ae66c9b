/* Shared by the stages of one reconstruction (recon/pipeline/pipeline.c: options, read, coils, gridding, metrics,
 * files; recon/pipeline/iterative.c: the iterative methods): the state of one volume's run. */
#ifndef MR_PIPELINE_INTERNAL_H
#define MR_PIPELINE_INTERNAL_H

#include "../../io/fieldmap.h"
#include "../../io/kspace.h"
#include "../../io/q_cache.h"
#include "../../solver/linop_field.h"
#include "../../solver/problem.h"
#include "methods.h"
#include "pipeline.h"
#include "priors.h"
#include "../report/report.h"

typedef enum { SENS_NONE = 0, SENS_FILE = 1, SENS_RSS = 2, SENS_ESTIMATE = 3 } sens_mode;

struct mr_iter_objects; /* recon/pipeline/iterative.c: the operator, the data and the vectors on the backend */

/* What the options say, checked once per run. */
typedef struct {
    mr_method_list methods;
    mr_prior_list priors; /* --reg */
    int field;            /* -1: never (off); 0: auto (when the scan has a map and times); 1: required */
    mr_field_model field_model;
    mr_field_units field_units;
    mr_fieldmap *fieldmap; /* --fieldmap, read once per run; NULL: the scan's own */
} mr_run_plan;

typedef struct {
    mr_kspace *ks;
    int gpu;           /* resolved device: GPU index, -1 = host */
    sens_mode sens;
    const float *maps; /* SENS_FILE, SENS_ESTIMATE: [C][N][2], the scan's or maps_owned */
    float *maps_owned; /* read from --sens-maps, or estimated */
    int64_t calib[3];  /* SENS_ESTIMATE: the calibration grid */
    double t_resolve;  /* choosing the device (part of the device initialisation) */
    double t_fork_wait; /* forks of the read that waited for the background device initialisation (ditto) */
    int field;         /* 1: the iterative methods model the field map (solver/linop_field.h) */
    float *img[MR_METHOD_COUNT]; /* per entry of the method list: the complex image */
    float *weights;    /* the gridding DCF */
    /* per entry of the method list (iterative methods): the solver's result, and the combined residual
     * history of the per-coil (rss) path */
    mr_solve_result res[MR_METHOD_COUNT];
    double *hist[MR_METHOD_COUNT];
    struct mr_iter_objects *it; /* made by the first iterative method, shared by the others */
    mr_q_cache *qcache; /* open from the operator's creation (or the Pipe-Menon DCF) until the results are
                           written */
    char qcache_dir[4096]; /* its directory (the report's) */
    char q_source[200];    /* the report's q_source when the cache did not store what was computed */
} run_state;

/* The iterative method kind (MR_METHOD_ITERATIVE or MR_METHOD_CG) as entry `slot` of the method list: its
 * image into s->img[slot], its report into m. */
mr_status mr_iterative_run(run_state *s, const mr_recon_opts *o, const mr_run_plan *plan, int slot, mr_report *r,
                           mr_report_method *m);
void mr_iterative_free(run_state *s);

/* The Q cache of o->q_cache opened once per run (s->qcache; NULL when off or when it cannot be opened: a
 * warning saying that `what` is computed without it), its directory in the report. */
void mr_pipeline_open_q_cache(run_state *s, const mr_recon_opts *o, mr_report *r, const char *what);

#endif
