/* The parts the exact NUDFT operator (linop_nudft.c) and the NUFFT operator (linop_nufft.c) share
 * (linop_qnormal.h): the input checks, the per-sample factors, and the Toeplitz normal with Q taken from
 * a store or computed by the operator's engine, a computed Q handed to the store (on a GPU from a
 * background thread). */
#include "linop_qnormal.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/grid.h"
#include "../base/log.h"
#include "../gpu/gpu_ops.h"

struct mr_q_saver {
    mr_q_store *store;
    mr_q_key key;     /* traj and qw point to the copies below */
    float *traj, *qw; /* owned copies of the key's data (the caller's arrays are borrowed for create only) */
    float *host;      /* owned, [nq][2]: handed to the store */
    const float *dq;  /* the device Q, kept by the operator until the thread is joined */
    int device;
    int64_t nq;
    pthread_t thread;
};

/* A computed Q (struct mr_q_saver) handed to the store from a background thread: the device-to-host copy (134 MB on the book
 * problem) and the store's write overlap F^H d and CG instead of delaying them. */
static void *q_saver_run(void *arg)
{
    struct mr_q_saver *sv = arg;
    mr_status st = mr_gpu_fetch(sv->device, sv->host, sv->dq, 2 * sv->nq);
    if (st != MR_OK) {
        mr_log(MR_LOG_WARN, "Q store: cannot copy Q from GPU %d (%s); Q is not stored", sv->device, mr_last_error());
        free(sv->host);
        sv->host = NULL;
    }
    sv->store->save(sv->store, &sv->key, sv->host); /* the store owns it now */
    sv->host = NULL;
    return NULL;
}


static double sinc(double x)
{
    if (x == 0.0)
        return 1.0;
    const double px = 3.141592653589793238462643383279 * x;
    return sin(px) / px;
}

mr_status mr_nudft_check_input(const int64_t matrix[3], const float *traj, int64_t m, const float *weights,
                               int64_t ncoils, mr_basis basis)
{
    mr_status st = mr_matrix_check(matrix, "operator");
    if (st != MR_OK)
        return st;
    if (!traj || m < 1 || m > MR_MAX_SAMPLES)
        return mr_error(MR_EINVAL, "operator: %lld samples (need 1..%lld and a trajectory)", (long long)m,
                        (long long)MR_MAX_SAMPLES);
    if (ncoils < 1 || ncoils > MR_MAX_COILS)
        return mr_error(MR_EINVAL, "operator: %lld coils (need 1..%d)", (long long)ncoils, MR_MAX_COILS);
    if (basis != MR_BASIS_BOX && basis != MR_BASIS_DIRAC)
        return mr_error(MR_EINVAL, "operator: unknown basis %d", (int)basis);
    for (int64_t k = 0; k < m; k++) {
        for (int a = 0; a < 3; a++)
            if (!isfinite(traj[3 * k + a]))
                return mr_error(MR_EINVAL, "operator: trajectory sample %lld axis %d is not finite", (long long)k, a);
        if (weights && !(isfinite(weights[k]) && weights[k] >= 0.0f))
            return mr_error(MR_EINVAL, "operator: weight %lld = %g is not a finite non-negative number",
                            (long long)k, (double)weights[k]);
    }
    return MR_OK;
}


void mr_nudft_sample_factors(const int64_t matrix[3], const float *traj, int64_t m, const float *weights,
                             mr_basis basis, float *s, float *qw)
{
    const double inv_n = 1.0 / (double)(matrix[0] * matrix[1] * matrix[2]);
    for (int64_t k = 0; k < m; k++) {
        double phi = 1.0;
        if (basis == MR_BASIS_BOX)
            for (int a = 0; a < 3; a++)
                if (matrix[a] > 1)
                    phi *= sinc((double)traj[3 * k + a] / (double)matrix[a]);
        const double w = weights ? (double)weights[k] : 1.0;
        s[k] = (float)(sqrt(w) * phi * inv_n);
        qw[k] = (float)(w * phi * phi * inv_n * inv_n);
    }
}

mr_status mr_qnormal_begin(mr_qnormal *d, mr_backend *be, const int64_t matrix[3], const float *traj, int64_t m,
                           const float *weights, int64_t ncoils, mr_basis basis, float **s, float **qw)
{
    *s = *qw = NULL;
    if (!be)
        return mr_error(MR_EINVAL, "operator: no backend");
    mr_status st = mr_nudft_check_input(matrix, traj, m, weights, ncoils, basis);
    if (st != MR_OK)
        return st;
    *s = malloc((size_t)m * sizeof(float));
    *qw = malloc((size_t)m * sizeof(float));
    if (!*s || !*qw) {
        free(*s);
        free(*qw);
        *s = *qw = NULL;
        return mr_error(MR_ENOMEM, "operator: out of memory for %lld samples", (long long)m);
    }
    mr_nudft_sample_factors(matrix, traj, m, weights, basis, *s, *qw);
    d->be = be;
    d->gctx = mr_backend_gpu_ctx(be);
    memcpy(d->matrix, matrix, sizeof d->matrix);
    d->m = m;
    d->c = ncoils;
    return MR_OK;
}

mr_status mr_qnormal_linop(const mr_qnormal *d, mr_linop **out, const int64_t dom[4], const int64_t cod[4],
                           const mr_linop_ops *ops, void *data)
{
    mr_linop *tp = d->tp;
    mr_status st = mr_linop_create(out, d->be, dom, cod, ops, data); /* data (and d with it) is gone on failure */
    if (st == MR_OK && tp && ops->normal)
        mr_linop_set_symbol(*out, &(mr_linop_symbol){1, tp, 1, 0, 0});
    return st;
}

void mr_qnormal_release(mr_qnormal *d)
{
    if (d->saver) {
        pthread_join(d->saver->thread, NULL);
        free(d->saver->traj);
        free(d->saver->qw);
        free(d->saver);
        d->saver = NULL;
    }
    if (d->be) {
        const mr_vecops *v = mr_backend_vecops(d->be);
        v->release(v->ctx, d->qkeep);
    }
    d->qkeep = NULL;
    mr_linop_free(d->tp);
    d->tp = NULL;
}

/* Hand the device Q to the store from a background thread (the key's data copied, host takes the copy of Q,
 * q stays alive as d->qkeep until destroy joins the thread). MR_OK when the thread runs. */
static mr_status start_saver(mr_qnormal *d, mr_q_store *store, const mr_q_key *key, float *host, float *q)
{
    struct mr_q_saver *sv = calloc(1, sizeof *sv);
    if (sv) {
        sv->traj = malloc((size_t)d->m * 3 * sizeof(float));
        sv->qw = malloc((size_t)d->m * sizeof(float));
    }
    if (!sv || !sv->traj || !sv->qw) {
        if (sv) {
            free(sv->traj);
            free(sv->qw);
        }
        free(sv);
        return MR_ENOMEM;
    }
    memcpy(sv->traj, key->traj, (size_t)d->m * 3 * sizeof(float));
    memcpy(sv->qw, key->qw, (size_t)d->m * sizeof(float));
    sv->store = store;
    sv->key = *key;
    sv->key.traj = sv->traj;
    sv->key.qw = sv->qw;
    sv->host = host;
    sv->dq = q;
    sv->device = mr_backend_gpu_index(d->be);
    const mr_grid gq = mr_grid_q(d->matrix);
    sv->nq = mr_grid_size(&gq);
    if (mr_gpu_ctx_sync(d->gctx) != MR_OK || pthread_create(&sv->thread, NULL, q_saver_run, sv) != 0) {
        mr_clear_error();
        free(sv->traj);
        free(sv->qw);
        free(sv);
        return MR_EINTERNAL;
    }
    d->saver = sv;
    d->qkeep = q;
    return MR_OK;
}

mr_status mr_qnormal_make(mr_qnormal *d, const float *traj, const float *qw, mr_basis basis, const char *engine,
                          mr_q_store *store, mr_q_compute_fn compute, void *ctx, mr_nudft_info *info)
{
    const mr_grid gq = mr_grid_q(d->matrix);
    const int64_t nq = mr_grid_size(&gq);
    const mr_vecops *v = mr_backend_vecops(d->be);
    float *q = mr_backend_alloc(d->be, nq);
    if (!q)
        return MR_ENOMEM;
    mr_q_key key;
    memset(&key, 0, sizeof key);
    memcpy(key.matrix, d->matrix, sizeof key.matrix);
    key.m = d->m;
    key.traj = traj;
    key.qw = qw;
    key.basis = basis;
    snprintf(key.engine, sizeof key.engine, "%s", engine);
    const double t0 = mr_now();
    /* the store reads into host memory: the host backend's q itself, or a copy for the device */
    float *hq = store ? (d->gctx ? malloc((size_t)nq * 2 * sizeof(float)) : q) : NULL;
    if (store && !hq)
        mr_log(MR_LOG_WARN, "Q store: no host memory for a %lld-point Q, computing Q without it", (long long)nq);
    mr_status st = MR_OK;
    int missed = 0; /* the store missed and waits for the entry (or NULL): save must be called */
    if (hq && store->load(store, &key, hq)) {
        st = d->gctx ? v->from_host(v->ctx, nq, q, hq) : MR_OK;
        info->q_source = "store";
    } else {
        st = compute(ctx, qw, q);
        info->q_source = "computed";
        missed = hq != NULL;
    }
    const mr_status st_q = st;
    info->q_seconds = mr_now() - t0;
    info->q_pairs = nq > INT64_MAX / d->m ? INT64_MAX : nq * d->m;
    if (st == MR_OK)
        st = mr_linop_toeplitz_create(&d->tp, d->be, d->matrix, q, d->c, &info->fft_plan_seconds);
    /* The store's copy of Q after the FFT plans: while the background copy of Q ran, cuFFT's planning
     * took 0.09-0.16 s instead of 0.003-0.01 s on the H200 (docs/BENCHMARKS.md). */
    if (missed) {
        float *own = NULL;
        if (st_q == MR_OK && d->gctx) {
            if (start_saver(d, store, &key, hq, q) == MR_OK) {
                hq = NULL;
                q = NULL; /* kept for the saver (d->qkeep) */
                info->q_source = "computed, stored";
            } else if (v->to_host(v->ctx, nq, hq, q) == MR_OK) { /* no thread: here and now */
                own = hq;
                hq = NULL;
            } else {
                mr_log(MR_LOG_WARN, "Q store: cannot copy Q from the GPU (%s); Q is not stored", mr_last_error());
                mr_clear_error();
            }
        } else if (st_q == MR_OK && (own = malloc((size_t)nq * 2 * sizeof(float)))) {
            memcpy(own, q, (size_t)nq * 2 * sizeof(float));
        }
        if (own)
            info->q_source = "computed, stored";
        if (q) /* not handed to a saver */
            store->save(store, &key, own);
    }
    if (d->gctx)
        free(hq);
    v->release(v->ctx, q);
    return st;
}

