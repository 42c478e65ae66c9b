#include "priors.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/log.h"
#include "pipeline.h"

static const mr_prior_info priors[] = {
#define MR_PRIOR_INFO(name, text, pen, op, rule, k, help) {text, pen, op, rule, k, help},
    MR_PRIOR_TABLE(MR_PRIOR_INFO)
#undef MR_PRIOR_INFO
};

const mr_prior_info *mr_prior_get(mr_prior_kind p) { return (unsigned)p < MR_PRIOR_COUNT ? &priors[p] : NULL; }

const char *mr_prior_names(void)
{
    static char names[256];
    if (!names[0])
        for (int i = 0; i < MR_PRIOR_COUNT; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", priors[i].name);
    return names;
}

const char *mr_prior_help(void)
{
    static char help[1024];
    if (!help[0]) {
        snprintf(help, sizeof help, "priors of the iterative method, comma-separated; NAME:W multiplies that prior's "
                                    "lambda by W:");
        for (int i = 0; i < MR_PRIOR_COUNT; i++)
            snprintf(help + strlen(help), sizeof help - strlen(help), "%s %s (%s)", i ? "," : "", priors[i].name,
                     priors[i].help);
    }
    return help;
}

mr_status mr_prior_list_parse(const char *text, mr_prior_list *out)
{
    memset(out, 0, sizeof *out);
    if (!text || !text[0])
        return mr_error(MR_EINVAL, "no prior given (one or more of %s, comma-separated)", mr_prior_names());
    const char *p = text;
    for (;;) {
        const size_t len = strcspn(p, ",");
        char item[64];
        if (len == 0 || len >= sizeof item)
            return mr_error(MR_EINVAL, "'%s': an empty or too long prior in the list", text);
        memcpy(item, p, len);
        item[len] = '\0';
        double w = 1.0;
        char *colon = strchr(item, ':');
        if (colon) {
            char *end = NULL;
            *colon = '\0';
            w = strtod(colon + 1, &end);
            if (end == colon + 1 || *end || !(w > 0) || !isfinite(w))
                return mr_error(MR_EINVAL, "'%s': the weight of %s must be a number > 0", text, item);
        }
        int k = 0;
        while (k < MR_PRIOR_COUNT && strcmp(item, priors[k].name))
            k++;
        if (k == MR_PRIOR_COUNT)
            return mr_error(MR_EINVAL, "'%s' is not a prior (%s)", item, mr_prior_names());
        for (int i = 0; i < out->n; i++)
            if (out->kind[i] == (mr_prior_kind)k)
                return mr_error(MR_EINVAL, "'%s': %s is listed twice", text, item);
        if (out->n == MR_PROBLEM_MAX_TERMS)
            return mr_error(MR_EINVAL, "'%s': at most %d priors", text, MR_PROBLEM_MAX_TERMS);
        out->kind[out->n] = (mr_prior_kind)k;
        out->weight[out->n++] = w;
        if (!p[len])
            return MR_OK;
        p += len + 1;
    }
}

int mr_prior_list_quadratic(const mr_prior_list *l)
{
    for (int i = 0; i < l->n; i++)
        if (priors[l->kind[i]].penalty != MR_PENALTY_L2)
            return 0;
    return 1;
}

void mr_prior_list_format(const mr_prior_list *l, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < l->n && used < size; i++) {
        int w = l->weight[i] != 1.0
                    ? snprintf(buf + used, size - used, "%s%s:%g", i ? "," : "", priors[l->kind[i]].name, l->weight[i])
                    : snprintf(buf + used, size - used, "%s%s", i ? "," : "", priors[l->kind[i]].name);
        used += w > 0 ? (size_t)w : 0;
    }
}

/* The wavelet and its detail mask on the backend. */
static mr_status make_wavelet(mr_prior_ops *o, mr_backend *be, const int64_t matrix[3])
{
    mr_status st = mr_linop_wavelet_create(&o->wavelet, be, matrix, NULL);
    if (st == MR_OK)
        st = mr_linop_wavelet_info(o->wavelet, &o->winfo);
    float *mask = st == MR_OK ? malloc((size_t)o->winfo.coeffs * sizeof(float)) : NULL;
    if (st == MR_OK && !mask)
        st = mr_error(MR_ENOMEM, "wavelet prior: out of memory for %lld coefficients", (long long)o->winfo.coeffs);
    if (st == MR_OK)
        st = mr_linop_wavelet_detail_mask(o->wavelet, mask);
    if (st == MR_OK && !(o->wmask = mr_backend_upload(be, o->winfo.coeffs, mask)))
        st = MR_ENOMEM;
    free(mask);
    o->wstate = MR_PRIOR_WAVELET_SEED;
    if (st == MR_OK)
        mr_log(MR_LOG_INFO, "wavelet prior: db%d, levels %d x %d x %d, padded to %lld x %lld x %lld, cycle spinning "
                            "from seed %d",
               o->winfo.order, o->winfo.levels[0], o->winfo.levels[1], o->winfo.levels[2],
               (long long)o->winfo.padded[0], (long long)o->winfo.padded[1], (long long)o->winfo.padded[2],
               MR_PRIOR_WAVELET_SEED);
    return st;
}

mr_status mr_prior_ops_make(mr_prior_ops *o, const mr_prior_list *l, mr_backend *be, const int64_t matrix[3])
{
    memset(o, 0, sizeof *o);
    mr_status st = MR_OK;
    for (int i = 0; st == MR_OK && i < l->n; i++) {
        const mr_prior_op op = priors[l->kind[i]].op;
        if (op == MR_PRIOR_OP_FD && !o->fd)
            st = mr_linop_fd_create(&o->fd, be, matrix);
        else if (op == MR_PRIOR_OP_WAVELET && !o->wavelet)
            st = make_wavelet(o, be, matrix);
    }
    if (st != MR_OK)
        mr_prior_ops_free(o);
    return st;
}

void mr_prior_ops_free(mr_prior_ops *o)
{
    if (o->wmask && o->wavelet) {
        const mr_vecops *v = mr_backend_vecops(mr_linop_backend(o->wavelet));
        v->release(v->ctx, o->wmask);
    }
    mr_linop_free(o->fd);
    mr_linop_free(o->wavelet);
    memset(o, 0, sizeof *o);
}

/* A new cycle-spinning shift before each use of the wavelet's proximal map. */
static void wavelet_refresh(void *ctx, int iter)
{
    mr_prior_ops *o = ctx;
    int64_t shift[3];
    (void)iter;
    mr_wavelet_random_shift(&o->wstate, &o->winfo, shift);
    mr_linop_wavelet_set_shift(o->wavelet, shift); /* cannot fail on the operator made above */
}

mr_status mr_prior_add_term(mr_problem *p, const mr_prior_list *l, int i, mr_prior_ops *o, double lambda)
{
    const mr_prior_info *info = &priors[l->kind[i]];
    mr_term t;
    memset(&t, 0, sizeof t);
    t.name = info->name;
    t.penalty = info->penalty;
    t.lambda = lambda;
    if (info->op == MR_PRIOR_OP_FD) {
        t.op = o->fd;
    } else if (info->op == MR_PRIOR_OP_WAVELET) {
        t.op = o->wavelet;
        t.weights = o->wmask;
        t.tight = 1; /* W^H W = I: the prox on the image is W^H soft(W x) */
        t.refresh = wavelet_refresh;
        t.refresh_ctx = o;
    }
    return mr_problem_add_term(p, &t);
}
