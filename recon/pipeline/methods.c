#include "methods.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    int iterative;
} methods[] = {
#define MR_METHOD_INFO(name, text, it, help) {text, it},
    MR_METHOD_TABLE(MR_METHOD_INFO)
#undef MR_METHOD_INFO
};

const char *mr_method_name(mr_method_kind m) { return (unsigned)m < MR_METHOD_COUNT ? methods[m].name : "unknown"; }
int mr_method_iterative(mr_method_kind m) { return (unsigned)m < MR_METHOD_COUNT && methods[m].iterative; }

const char *mr_method_names(void)
{
    static char names[256];
    if (!names[0])
        for (int i = 0; i < MR_METHOD_COUNT; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", methods[i].name);
    return names;
}

mr_status mr_method_list_parse(const char *text, mr_method_list *out)
{
    memset(out, 0, sizeof *out);
    if (text && !strcmp(text, "all")) {
        for (int i = 0; i < MR_METHOD_COUNT; i++)
            out->kind[out->n++] = (mr_method_kind)i;
        return MR_OK;
    }
    const char *p = text ? text : "";
    for (;;) {
        const size_t len = strcspn(p, ",");
        int k = 0;
        while (k < MR_METHOD_COUNT && !(strlen(methods[k].name) == len && !strncmp(p, methods[k].name, len)))
            k++;
        if (k == MR_METHOD_COUNT)
            return mr_error(MR_EINVAL, "method '%.*s' is not one of %s, or all", (int)len, p, mr_method_names());
        if (mr_method_list_has(out, (mr_method_kind)k))
            return mr_error(MR_EINVAL, "'%s': method %s is listed twice", text, methods[k].name);
        out->kind[out->n++] = (mr_method_kind)k;
        if (!p[len])
            return MR_OK;
        p += len + 1;
    }
}

int mr_method_list_has(const mr_method_list *l, mr_method_kind m)
{
    for (int i = 0; i < l->n; i++)
        if (l->kind[i] == m)
            return 1;
    return 0;
}

int mr_method_list_grids(const mr_method_list *l)
{
    for (int i = 0; i < l->n; i++)
        if (!mr_method_iterative(l->kind[i]))
            return 1;
    return 0;
}
