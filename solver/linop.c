/* The operator object and its compositions (linop.h). Work vectors live in the backend's memory;
 * those that only some applications need (the default normal's, a chain's normal buffer) are made
 * on first use. */
#include "linop.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct mr_linop {
    int refs;
    int64_t dom[4], cod[4];
    int64_t nd, nc; /* sizes */
    mr_backend *be;
    const mr_vecops *v;
    mr_linop_ops ops;
    void *data;
    float *tmp; /* default normal: F x (cod size), made on first use */
    mr_linop_symbol sym; /* the normal's model (linop.h); known = 0 unless a constructor set it */
};

void mr_linop_set_symbol(mr_linop *op, const mr_linop_symbol *sym) { op->sym = *sym; }
mr_linop_symbol mr_linop_symbol_of(const mr_linop *op) { return op->sym; }

/* A model that is a multiple of the identity (a diagonal operator's, as the model sees it). */
static int symbol_scalar(const mr_linop_symbol *y) { return y->known && !y->tp && y->a == 0 && y->g == 0; }

static mr_linop_symbol symbol_scaled(mr_linop_symbol y, double f)
{
    y.a *= f;
    y.g *= f;
    y.s *= f;
    return y;
}

static int64_t product(const int64_t d[4]) { return d[0] * d[1] * d[2] * d[3]; }

mr_status mr_linop_create(mr_linop **out, mr_backend *be, const int64_t dom[4], const int64_t cod[4],
                          const mr_linop_ops *ops, void *data)
{
    mr_status st = MR_OK;
    if (!out || !be || !ops || !ops->forward || !ops->adjoint)
        st = mr_error(MR_EINVAL, "mr_linop_create: missing output, backend or functions");
    for (int i = 0; st == MR_OK && i < 4; i++)
        if (dom[i] < 1 || cod[i] < 1 || dom[i] > ((int64_t)1 << 40) || cod[i] > ((int64_t)1 << 40))
            st = mr_error(MR_EINVAL, "mr_linop_create: extent %d is %lld -> %lld, expected 1..2^40", i,
                          (long long)dom[i], (long long)cod[i]);
    mr_linop *op = st == MR_OK ? calloc(1, sizeof *op) : NULL;
    if (st == MR_OK && !op)
        st = mr_error(MR_ENOMEM, "linear operator: out of memory");
    if (st != MR_OK) {
        if (ops && ops->destroy)
            ops->destroy(data);
        if (out)
            *out = NULL;
        return st;
    }
    op->refs = 1;
    memcpy(op->dom, dom, sizeof op->dom);
    memcpy(op->cod, cod, sizeof op->cod);
    op->nd = product(dom);
    op->nc = product(cod);
    op->be = mr_backend_ref(be);
    op->v = mr_backend_vecops(be);
    op->ops = *ops;
    op->data = data;
    *out = op;
    return MR_OK;
}

mr_linop *mr_linop_ref(mr_linop *op)
{
    if (op)
        op->refs++;
    return op;
}

void mr_linop_free(mr_linop *op)
{
    if (!op || --op->refs > 0)
        return;
    if (op->ops.destroy)
        op->ops.destroy(op->data);
    op->v->release(op->v->ctx, op->tmp);
    mr_backend_free(op->be);
    free(op);
}

/* A function's status, or a failure the device kept from asynchronous work. */
static mr_status settle(const mr_linop *op, mr_status st)
{
    if (st == MR_OK && op->v->status)
        st = op->v->status(op->v->ctx);
    return st;
}

static mr_status check_args(const mr_linop *op, const void *in, const void *out, const char *what)
{
    if (!op || !in || !out)
        return mr_error(MR_EINVAL, "mr_linop_%s: null argument", what);
    if (in == out)
        return mr_error(MR_EINVAL, "mr_linop_%s: input and output must not be the same vector", what);
    return MR_OK;
}

mr_status mr_linop_forward(mr_linop *op, const float *x, float *y)
{
    mr_status st = check_args(op, x, y, "forward");
    return st == MR_OK ? settle(op, op->ops.forward(op->data, x, y)) : st;
}

mr_status mr_linop_adjoint(mr_linop *op, const float *y, float *x)
{
    mr_status st = check_args(op, y, x, "adjoint");
    return st == MR_OK ? settle(op, op->ops.adjoint(op->data, y, x)) : st;
}

/* A work vector of n complex elements in *slot, made on first use. */
static mr_status scratch(const mr_linop *op, float **slot, int64_t n)
{
    if (*slot)
        return MR_OK;
    *slot = mr_backend_alloc(op->be, n);
    return *slot ? MR_OK : MR_ENOMEM;
}

mr_status mr_linop_normal(mr_linop *op, const float *x, float *y)
{
    mr_status st = check_args(op, x, y, "normal");
    if (st != MR_OK)
        return st;
    if (op->ops.normal)
        return settle(op, op->ops.normal(op->data, x, y));
    if ((st = scratch(op, &op->tmp, op->nc)) != MR_OK)
        return st;
    st = op->ops.forward(op->data, x, op->tmp);
    if (st == MR_OK)
        st = op->ops.adjoint(op->data, op->tmp, y);
    return settle(op, st);
}

int64_t mr_linop_dom_size(const mr_linop *op) { return op ? op->nd : 0; }
int64_t mr_linop_cod_size(const mr_linop *op) { return op ? op->nc : 0; }
void mr_linop_dom(const mr_linop *op, int64_t dims[4]) { memcpy(dims, op->dom, sizeof op->dom); }
void mr_linop_cod(const mr_linop *op, int64_t dims[4]) { memcpy(dims, op->cod, sizeof op->cod); }
mr_backend *mr_linop_backend(const mr_linop *op) { return op ? op->be : NULL; }
void *mr_linop_data(const mr_linop *op, mr_linop_fn forward) { return op && op->ops.forward == forward ? op->data : NULL; }

/* ---- compositions ----------------------------------------------------------------------------- */

typedef struct {
    mr_linop *a, *b;
    const mr_vecops *v;
    mr_backend *be;
    float *t1, *t2; /* chain: cod(A) each (t2 for the normal); sum: cod and dom */
} pair_data;

static void pair_destroy(void *p)
{
    pair_data *d = p;
    if (!d)
        return;
    d->v->release(d->v->ctx, d->t1);
    d->v->release(d->v->ctx, d->t2);
    mr_linop_free(d->a);
    mr_linop_free(d->b);
    free(d);
}

static mr_status pair_make(pair_data **out, mr_linop *a, mr_linop *b, const char *what)
{
    *out = NULL;
    if (!a || !b)
        return mr_error(MR_EINVAL, "mr_linop_%s: null operator", what);
    if (a->be != b->be)
        return mr_error(MR_EINVAL, "mr_linop_%s: the operators live on different backends (%s, %s)", what,
                        mr_backend_name(a->be), mr_backend_name(b->be));
    pair_data *d = calloc(1, sizeof *d);
    if (!d)
        return mr_error(MR_ENOMEM, "mr_linop_%s: out of memory", what);
    d->a = mr_linop_ref(a);
    d->b = mr_linop_ref(b);
    d->v = a->v;
    d->be = a->be;
    *out = d;
    return MR_OK;
}

static mr_status chain_forward(void *p, const float *x, float *y)
{
    pair_data *d = p;
    mr_status st = mr_linop_forward(d->a, x, d->t1);
    return st == MR_OK ? mr_linop_forward(d->b, d->t1, y) : st;
}

static mr_status chain_adjoint(void *p, const float *y, float *x)
{
    pair_data *d = p;
    mr_status st = mr_linop_adjoint(d->b, y, d->t1);
    return st == MR_OK ? mr_linop_adjoint(d->a, d->t1, x) : st;
}

/* A^H normal(B) A x */
static mr_status chain_normal(void *p, const float *x, float *y)
{
    pair_data *d = p;
    mr_status st = scratch(d->a, &d->t2, d->a->nc);
    if (st == MR_OK)
        st = mr_linop_forward(d->a, x, d->t1);
    if (st == MR_OK)
        st = mr_linop_normal(d->b, d->t1, d->t2);
    return st == MR_OK ? mr_linop_adjoint(d->a, d->t2, y) : st;
}

mr_status mr_linop_chain(mr_linop **out, mr_linop *a, mr_linop *b)
{
    pair_data *d;
    *out = NULL;
    mr_status st = pair_make(&d, a, b, "chain");
    if (st == MR_OK && a->nc != b->nd) {
        st = mr_error(MR_EINVAL, "mr_linop_chain: the first operator gives %lld elements, the second takes %lld",
                      (long long)a->nc, (long long)b->nd);
    }
    if (st == MR_OK && !(d->t1 = mr_backend_alloc(d->be, a->nc)))
        st = MR_ENOMEM;
    if (st != MR_OK) {
        pair_destroy(d);
        return st;
    }
    const mr_linop_ops ops = {chain_forward, chain_adjoint, chain_normal, pair_destroy};
    st = mr_linop_create(out, a->be, a->dom, b->cod, &ops, d);
    if (st == MR_OK && symbol_scalar(&a->sym) && b->sym.known) /* A^H (model of B) A */
        (*out)->sym = symbol_scaled(b->sym, a->sym.s);
    else if (st == MR_OK && symbol_scalar(&b->sym) && a->sym.known)
        (*out)->sym = symbol_scaled(a->sym, b->sym.s);
    return st;
}

static mr_status sum_forward(void *p, const float *x, float *y)
{
    pair_data *d = p;
    mr_status st = mr_linop_forward(d->a, x, y);
    if (st == MR_OK)
        st = mr_linop_forward(d->b, x, d->t1);
    if (st == MR_OK)
        mr_vec_axpy(d->v, d->a->nc, y, 1.0, d->t1);
    return st;
}

static mr_status sum_adjoint(void *p, const float *y, float *x)
{
    pair_data *d = p;
    mr_status st = mr_linop_adjoint(d->a, y, x);
    if (st == MR_OK)
        st = mr_linop_adjoint(d->b, y, d->t2);
    if (st == MR_OK)
        mr_vec_axpy(d->v, d->a->nd, x, 1.0, d->t2);
    return st;
}

mr_status mr_linop_sum(mr_linop **out, mr_linop *a, mr_linop *b)
{
    pair_data *d;
    *out = NULL;
    mr_status st = pair_make(&d, a, b, "sum");
    if (st == MR_OK && (a->nd != b->nd || a->nc != b->nc))
        st = mr_error(MR_EINVAL, "mr_linop_sum: sizes differ (%lld -> %lld and %lld -> %lld)", (long long)a->nd,
                      (long long)a->nc, (long long)b->nd, (long long)b->nc);
    if (st == MR_OK && (!(d->t1 = mr_backend_alloc(d->be, a->nc)) || !(d->t2 = mr_backend_alloc(d->be, a->nd))))
        st = MR_ENOMEM;
    if (st != MR_OK) {
        pair_destroy(d);
        return st;
    }
    const mr_linop_ops ops = {sum_forward, sum_adjoint, NULL, pair_destroy};
    return mr_linop_create(out, a->be, a->dom, a->cod, &ops, d);
}

/* ---- scaled identity -------------------------------------------------------------------------- */

typedef struct {
    const mr_vecops *v;
    int64_t n;
    double s;
} scale_data;

static mr_status scale_apply(const scale_data *d, double s, const float *x, float *y)
{
    d->v->copy(d->v->ctx, d->n, y, x);
    if (s != 1.0)
        mr_vec_scale(d->v, d->n, y, s);
    return MR_OK;
}

static mr_status identity_forward(void *p, const float *x, float *y)
{
    const scale_data *d = p;
    return scale_apply(d, d->s, x, y);
}

static mr_status identity_normal(void *p, const float *x, float *y)
{
    const scale_data *d = p;
    return scale_apply(d, d->s * d->s, x, y);
}

mr_status mr_linop_identity(mr_linop **out, mr_backend *be, const int64_t dims[4], double s)
{
    if (!isfinite(s))
        return mr_error(MR_EINVAL, "mr_linop_identity: scale %g is not finite", s);
    if (!be)
        return mr_error(MR_EINVAL, "mr_linop_identity: no backend");
    scale_data *d = malloc(sizeof *d);
    if (!d)
        return mr_error(MR_ENOMEM, "mr_linop_identity: out of memory");
    d->v = mr_backend_vecops(be);
    d->n = product(dims);
    d->s = s;
    const mr_linop_ops ops = {identity_forward, identity_forward, identity_normal, free};
    mr_status st = mr_linop_create(out, be, dims, dims, &ops, d);
    if (st == MR_OK)
        (*out)->sym = (mr_linop_symbol){1, NULL, 0, 0, s * s};
    return st;
}

/* ---- A^H A as an operator ---------------------------------------------------------------------- */

static mr_status normal_of_apply(void *p, const float *x, float *y) { return mr_linop_normal(p, x, y); }
static void normal_of_destroy(void *p) { mr_linop_free(p); }

mr_status mr_linop_normal_of(mr_linop **out, mr_linop *a)
{
    if (!a)
        return mr_error(MR_EINVAL, "mr_linop_normal_of: null operator");
    const mr_linop_ops ops = {normal_of_apply, normal_of_apply, NULL, normal_of_destroy};
    return mr_linop_create(out, a->be, a->dom, a->dom, &ops, mr_linop_ref(a));
}

mr_status mr_linop_normal_system(mr_linop **out, mr_linop *e, mr_linop *r, double lambda)
{
    *out = NULL;
    if (!e || !(lambda >= 0) || !isfinite(lambda))
        return mr_error(MR_EINVAL, "mr_linop_normal_system: no operator or lambda %g is not finite and >= 0", lambda);
    mr_linop *ne = NULL, *nr = NULL, *lam = NULL, *reg = NULL;
    mr_status st = mr_linop_normal_of(&ne, e);
    if (st != MR_OK || lambda == 0) {
        *out = ne;
        return st;
    }
    st = mr_linop_identity(&lam, e->be, e->dom, lambda);
    if (st == MR_OK && r) {
        st = mr_linop_normal_of(&nr, r);
        if (st == MR_OK)
            st = mr_linop_chain(&reg, nr, lam);
    } else if (st == MR_OK) {
        reg = mr_linop_ref(lam);
    }
    if (st == MR_OK)
        st = mr_linop_sum(out, ne, reg);
    mr_linop_free(ne);
    mr_linop_free(nr);
    mr_linop_free(lam);
    mr_linop_free(reg);
    return st;
}
