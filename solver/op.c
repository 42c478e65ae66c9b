/* The single-coil operator with host arguments (op.h): a backend and the NUDFT operator of linop.h.
 * On the host the arrays are handed straight to the operator (through a work copy when the caller
 * passes the same array in and out); on a GPU they go through two device vectors. */
#include "op.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mr_op {
    mr_backend *be;
    mr_linop *e;
    int64_t n, m;
    float *din, *dout; /* [max(N, M)][2] each, in the backend's memory */
    mr_op_info info;
};

void mr_op_opts_default(mr_op_opts *o)
{
    o->basis = MR_BASIS_BOX;
    o->device = MR_DEVICE_AUTO;
    o->gpu_index = -1;
    o->threads = 0;
    o->fast_normal = 1;
    o->exact_trig = 0;
    o->sums.fn = NULL;
    o->sums.ctx = NULL;
    o->precision = MR_PRECISION_AUTO;
    o->gpu_all = 0;
    o->ngpus = 0;
    memset(o->gpus, 0, sizeof o->gpus);
}

void mr_op_opts_nudft(const mr_op_opts *o, mr_nudft_opts *out)
{
    mr_nudft_opts_default(out);
    out->basis = o->basis;
    out->fast_normal = o->fast_normal;
    out->exact_trig = o->exact_trig;
    out->sums = o->sums;
    out->precision = o->precision;
}

void mr_op_destroy(mr_op *op)
{
    if (!op)
        return;
    if (op->be) {
        const mr_vecops *v = mr_backend_vecops(op->be);
        v->release(v->ctx, op->din);
        v->release(v->ctx, op->dout);
    }
    mr_linop_free(op->e);
    mr_backend_free(op->be);
    free(op);
}

mr_status mr_op_create(mr_op **out, const int64_t matrix[3], const float *traj, int64_t m, const float *weights,
                       const mr_op_opts *opts)
{
    if (!out)
        return mr_error(MR_EINVAL, "mr_op_create: no output pointer");
    *out = NULL;
    mr_op_opts o;
    if (opts)
        o = *opts;
    else
        mr_op_opts_default(&o);
    mr_op *op = calloc(1, sizeof *op);
    if (!op)
        return mr_error(MR_ENOMEM, "operator: out of memory");
    mr_status st = mr_backend_create(&op->be, mr_op_opts_device(&o), o.threads);
    mr_nudft_opts no;
    mr_op_opts_nudft(&o, &no);
    mr_nudft_info ni;
    if (st == MR_OK)
        st = mr_linop_nudft_create(&op->e, op->be, matrix, traj, m, weights, 1, &no, &ni);
    if (st == MR_OK) {
        op->n = mr_linop_dom_size(op->e);
        op->m = m;
        const int64_t len = op->n > m ? op->n : m;
        op->din = mr_backend_alloc(op->be, len);
        op->dout = op->din ? mr_backend_alloc(op->be, len) : NULL;
        if (!op->dout)
            st = MR_ENOMEM;
    }
    if (st != MR_OK) {
        mr_op_destroy(op);
        return st;
    }
    op->info.q_seconds = ni.q_seconds;
    op->info.plan_seconds = ni.plan_seconds;
    op->info.fft_plan_seconds = ni.fft_plan_seconds;
    op->info.q_pairs = ni.q_pairs;
    op->info.init_seconds = mr_backend_init_seconds(op->be);
    snprintf(op->info.backend, sizeof op->info.backend, "%s", mr_backend_name(op->be));
    *out = op;
    return MR_OK;
}

typedef mr_status (*apply_fn)(mr_linop *, const float *, float *);

/* out (nout) = f(in (nin)) with host arrays; on the host without copies when in != out. */
static mr_status apply_host(mr_op *op, apply_fn f, const float *in, int64_t nin, float *out, int64_t nout)
{
    if (!op || !in || !out)
        return mr_error(MR_EINVAL, "mr_op: null argument");
    const mr_vecops *v = mr_backend_vecops(op->be);
    if (!mr_backend_on_gpu(op->be) && in != out)
        return f(op->e, in, out);
    mr_status st = v->from_host(v->ctx, nin, op->din, in);
    if (st == MR_OK)
        st = f(op->e, op->din, op->dout);
    if (st == MR_OK)
        st = v->to_host(v->ctx, nout, out, op->dout);
    return st;
}

mr_status mr_op_forward(mr_op *op, const float *x, float *y)
{
    return apply_host(op, mr_linop_forward, x, op ? op->n : 0, y, op ? op->m : 0);
}

mr_status mr_op_adjoint(mr_op *op, const float *y, float *x)
{
    return apply_host(op, mr_linop_adjoint, y, op ? op->m : 0, x, op ? op->n : 0);
}

mr_status mr_op_normal(mr_op *op, const float *x, float *y)
{
    return apply_host(op, mr_linop_normal, x, op ? op->n : 0, y, op ? op->n : 0);
}

void mr_op_get_info(const mr_op *op, mr_op_info *info)
{
    if (op && info)
        *info = op->info;
}

int64_t mr_op_image_size(const mr_op *op) { return op ? op->n : 0; }
int64_t mr_op_nsamples(const mr_op *op) { return op ? op->m : 0; }
mr_linop *mr_op_linop(const mr_op *op) { return op ? op->e : NULL; }
mr_backend *mr_op_backend(const mr_op *op) { return op ? op->be : NULL; }
