#include "prox.h"

#include <math.h>
#include <stddef.h>

const char *mr_penalty_name(mr_penalty p)
{
    static const char *const names[] = {
#define MR_PENALTY_NAME(name, text) text,
        MR_PENALTY_TABLE(MR_PENALTY_NAME)
#undef MR_PENALTY_NAME
    };
    return (unsigned)p < MR_PENALTY_COUNT ? names[p] : "unknown";
}

mr_status mr_prox_check(const mr_prox *p)
{
    if (!p || (unsigned)p->kind >= MR_PENALTY_COUNT)
        return mr_error(MR_EINVAL, "prox: no penalty or an unknown kind");
    if (p->n < 1 || p->groups < 1 || (p->kind != MR_PENALTY_L12 && p->groups != 1))
        return mr_error(MR_EINVAL, "prox: %lld groups of %lld elements for penalty %s", (long long)p->n,
                        (long long)p->groups, mr_penalty_name(p->kind));
    return MR_OK;
}

static mr_ew_args args_of(const mr_prox *p, double t)
{
    mr_ew_args a = {0.0, 0.0, t, p->w, p->groups};
    return a;
}

void mr_prox_apply(const mr_vecops *v, const mr_prox *p, double t, const float *in, float *out)
{
    const mr_ew_args a = args_of(p, t);
    switch (p->kind) {
    case MR_PENALTY_L2:
        mr_vec_axpby(v, mr_prox_size(p), out, 1.0 / (1.0 + t), in, 0.0, NULL);
        break;
    case MR_PENALTY_L1:
        v->ewise(v->ctx, MR_EW_SOFT, p->n, out, in, NULL, &a);
        break;
    default:
        v->ewise(v->ctx, MR_EW_GROUP_SOFT, p->n, out, in, NULL, &a);
    }
}

void mr_prox_conj_apply(const mr_vecops *v, const mr_prox *p, double lambda, double s, const float *in, float *out)
{
    /* the conjugates of lambda times a norm are the indicators of the dual balls of radius lambda w_i */
    const mr_ew_args a = args_of(p, lambda);
    switch (p->kind) {
    case MR_PENALTY_L2: /* (lambda/2 ||.||^2)* = 1/(2 lambda) ||.||^2 */
        mr_vec_axpby(v, mr_prox_size(p), out, 1.0 / (1.0 + s / lambda), in, 0.0, NULL);
        break;
    case MR_PENALTY_L1:
        v->ewise(v->ctx, MR_EW_PROJ, p->n, out, in, NULL, &a);
        break;
    default:
        v->ewise(v->ctx, MR_EW_GROUP_PROJ, p->n, out, in, NULL, &a);
    }
}

double mr_prox_value(const mr_vecops *v, const mr_prox *p, const float *z)
{
    const mr_ew_args a = args_of(p, 0.0);
    switch (p->kind) {
    case MR_PENALTY_L2: {
        const double r = v->norm(v->ctx, mr_prox_size(p), z);
        return 0.5 * r * r;
    }
    case MR_PENALTY_L1:
        return v->ewise_reduce(v->ctx, MR_EWR_L1, p->n, z, &a);
    default:
        return v->ewise_reduce(v->ctx, MR_EWR_GROUP_L2, p->n, z, &a);
    }
}
