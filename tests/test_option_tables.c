/* The option tables are the one source of every derived list: this test walks recon's and batch's tables
 * (recon/cli/cmd_args.h) and checks, for every option and without naming any, that
 *   - it appears in its command's --help (the help is generated from the table);
 *   - every option of recon's shared block is an option of batch too (one block, not a copy);
 *   - a value outside its type's accepted values is refused as a usage error (the table validates:
 *     numbers against their range, choices against their names, precision and device by their parsers);
 *   - giving it a different value changes batch's --resume fingerprint when it belongs to the shared block
 *     (it shapes the result), and leaves the fingerprint alone when it is batch's own (-j, --timeout, ...);
 *   - it is a member of report.json's "options" object (the pipeline's write_options, which recon and batch
 *     set from the table) when it belongs to the shared block, with its new value when given one.
 * So an option added to the block is in --help, validated, in the fingerprint and in the report with nothing
 * added by hand.
 * Free-text options (STRING, LIST) have no table-level validation; their checks are the commands'. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recon/batch/batch.h"
#include "recon/cli/cmd_args.h"
#include "testutil.h"

/* What write(f, ctx) prints, malloc'ed (NULL when out of memory). */
static char *capture(void (*write)(FILE *f, const void *ctx), const void *ctx)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f)
        return NULL;
    write(f, ctx);
    fclose(f);
    return buf;
}

static void write_help(FILE *f, const void *spec) { mr_opts_help(spec, f); }

static char *help_text(const mr_cmd_spec *spec) { return capture(write_help, spec); }

/* Another value the option accepts (text for argv), different from its current one; NULL for a flag. */
static const char *other_value(const mr_opt *o, char *buf, size_t size)
{
    switch (o->type) {
    case MR_OPT_FLAG:
        return NULL;
    case MR_OPT_INT:
    case MR_OPT_INT_OR_0: {
        const int v = *(const int *)o->dest;
        snprintf(buf, size, "%d", v != (int)o->min ? (int)o->min : (int)o->max);
        return buf;
    }
    case MR_OPT_DOUBLE: {
        const double v = *(const double *)o->dest;
        snprintf(buf, size, "%.17g", v != o->min ? o->min : (isfinite(o->max) ? o->max : o->min + 1));
        return buf;
    }
    case MR_OPT_CHOICE: {
        const char *v = *(const char *const *)o->dest;
        for (const char *const *c = o->choices; *c; c++)
            if (!v || strcmp(*c, v)) {
                snprintf(buf, size, "%s", *c);
                return buf;
            }
        return "?";
    }
    case MR_OPT_PRECISION:
        return *(const mr_precision *)o->dest == MR_PRECISION_FP64 ? "sfu" : "fp64";
    case MR_OPT_DEVICE:
        return "cpu";
    case MR_OPT_STRING:
    case MR_OPT_LIST:
        return "some-other-value";
    }
    return "?";
}

/* A value the table must refuse, or NULL where the table does not validate (free text, flags). */
static const char *bad_value(const mr_opt *o, char *buf, size_t size)
{
    switch (o->type) {
    case MR_OPT_INT:
    case MR_OPT_INT_OR_0:
        if (!(o->min <= o->max))
            return "x";
        snprintf(buf, size, "%.0f", o->max + 1);
        return buf;
    case MR_OPT_DOUBLE:
        if (!(o->min <= o->max) || !isfinite(o->max))
            return "nan";
        snprintf(buf, size, "%.17g", o->max * 2 + 1);
        return buf;
    case MR_OPT_CHOICE:
    case MR_OPT_PRECISION:
    case MR_OPT_DEVICE:
        return "no-such-value";
    default:
        return NULL;
    }
}

/* Parse batch's table alone (no checks beyond the table's) with one option set; 1 when accepted. */
static int parse_batch_with(mr_batch_args *b, const char *name, const char *value)
{
    char opt[128];
    snprintf(opt, sizeof opt, "--%s", name);
    char *argv[8];
    int argc = 0;
    argv[argc++] = "batch";
    argv[argc++] = opt;
    if (value)
        argv[argc++] = (char *)value;
    argv[argc++] = "-o";
    argv[argc++] = "out";
    argv[argc++] = "scan.h5";
    argv[argc] = NULL;
    mr_opts_result res;
    const int rc = mr_opts_parse(&b->spec, argc, argv, &res);
    mr_opts_free(&res);
    return rc == MR_EXIT_OK;
}

/* report.json's "options" object as the pipeline writes it (mr_recon_opts.write_options); malloc'ed */
static void write_options(FILE *f, const void *args)
{
    const mr_recon_args *a = args;
    mr_json_obj top = mr_json_begin(f);
    if (a->o.write_options) {
        mr_json_obj obj = mr_json_open(&top, "options");
        a->o.write_options(a->o.options_ctx, &obj);
        mr_json_close(&obj);
    }
    mr_json_close(&top);
}

static char *report_options(const mr_recon_args *a) { return capture(write_options, a); }

/* The text of member name of the "options" object in json ("" when absent), into buf. */
static const char *member(const char *json, const char *name, char *buf, size_t size)
{
    char key[140];
    snprintf(key, sizeof key, "\n    \"%s\": ", name);
    const char *at = json ? strstr(json, key) : NULL;
    buf[0] = '\0';
    if (at) {
        at += strlen(key);
        const size_t n = strcspn(at, "\n");
        snprintf(buf, size, "%.*s", (int)(n < size ? n : size - 1), at);
    }
    return buf;
}

static int in_block(const mr_recon_args *r, const char *name)
{
    for (int i = 0; i < r->nblock; i++)
        if (!strcmp(r->block[i].name, name))
            return 1;
    return 0;
}

int main(void)
{
    mr_opts_set_print(0); /* the usage errors are expected: record, do not print */
    mr_recon_args *r = malloc(sizeof *r);
    mr_batch_args *b = malloc(sizeof *b);
    CHECK(r && b);
    if (!r || !b)
        return test_finish("test_option_tables");
    mr_recon_args_init(r);
    mr_batch_args_init(b);
    CHECK(r->nblock >= 30); /* method, iters, ..., the iterative, coil, gridding, output and reader options */

    /* 1. --help lists every option of each table */
    const mr_cmd_spec *specs[2] = {&r->spec, &b->spec};
    for (int s = 0; s < 2; s++) {
        char *help = help_text(specs[s]);
        CHECK(help != NULL);
        for (int i = 0; help && i < specs[s]->nopts; i++) {
            char want[128];
            snprintf(want, sizeof want, "--%s ", specs[s]->opts[i].name);
            if (!strstr(help, want)) {
                printf("FAIL: %s --help lacks '%s'\n", specs[s]->name, want);
                CHECK(0);
            }
        }
        free(help);
    }

    /* 2. recon's block is batch's: the same options, same types */
    for (int i = 0; i < r->nblock; i++) {
        int found = 0;
        for (int j = 0; j < b->spec.nopts; j++)
            found |= !strcmp(b->spec.opts[j].name, r->block[i].name) && b->spec.opts[j].type == r->block[i].type;
        if (!found) {
            printf("FAIL: recon's --%s is not an option of batch\n", r->block[i].name);
            CHECK(0);
        }
    }

    /* 3. validation by the table, and 4. the fingerprint, for every option of batch */
    char base[MR_BATCH_FINGERPRINT_MAX];
    CHECK_OK(mr_recon_args_fingerprint(&b->r, base, sizeof base));
    printf("default fingerprint (%zu bytes): %s\n", strlen(base), base);
    char *base_json = report_options(&b->r);
    CHECK(base_json != NULL && strstr(base_json, "\"options\": {") != NULL);
    printf("report.json options (defaults):%s\n", base_json ? strchr(base_json, '\n') : "");
    int n_in = 0, n_out = 0, n_refused = 0, n_report = 0;
    for (int i = 0; i < b->spec.nopts; i++) {
        const mr_opt *o = &b->spec.opts[i];
        if (!strcmp(o->name, "output"))
            continue;
        char key[128];
        snprintf(key, sizeof key, "%s=", o->name);
        const int shared = in_block(&b->r, o->name);
        int listed = 0;
        for (const char *at = strstr(base, key); at && !listed; at = strstr(at + 1, key))
            listed = at == base || at[-1] == ' ';
        if (listed != shared) {
            printf("FAIL: --%s: %s the fingerprint, but it is %s of the shared block\n", o->name,
                   listed ? "in" : "not in", shared ? "part" : "not part");
            CHECK(0);
        }
        char bad[64];
        const char *badv = bad_value(o, bad, sizeof bad);
        if (badv) {
            mr_batch_args *t = malloc(sizeof *t);
            CHECK(t != NULL);
            if (t) {
                mr_batch_args_init(t);
                if (parse_batch_with(t, o->name, badv)) {
                    printf("FAIL: batch --%s %s was accepted\n", o->name, badv);
                    CHECK(0);
                } else {
                    n_refused++;
                }
                free(t);
            }
        }
        mr_batch_args *t = malloc(sizeof *t);
        CHECK(t != NULL);
        if (!t)
            continue;
        mr_batch_args_init(t);
        char val[64];
        const char *v = other_value(&t->spec.opts[i], val, sizeof val);
        if (!parse_batch_with(t, o->name, v)) {
            printf("FAIL: batch --%s %s was refused: %s\n", o->name, v ? v : "", mr_last_error());
            CHECK(0);
        } else {
            char fp[MR_BATCH_FINGERPRINT_MAX];
            CHECK_OK(mr_recon_args_fingerprint(&t->r, fp, sizeof fp));
            const int changed = strcmp(fp, base) != 0;
            if (changed != shared) {
                printf("FAIL: batch --%s %s %s the fingerprint\n", o->name, v ? v : "",
                       changed ? "changed" : "did not change");
                CHECK(0);
            }
            n_in += shared;
            n_out += !shared;
            /* 5. the report: a member of "options" (the shared block only), with the new value */
            char *json = report_options(&t->r);
            char before[512], after[512];
            member(base_json, o->name, before, sizeof before);
            member(json, o->name, after, sizeof after);
            const int present = before[0] != '\0', moved = strcmp(before, after) != 0;
            if (present != shared || (shared && !moved)) {
                printf("FAIL: --%s %s: report options %s, value %s -> %s\n", o->name, v ? v : "",
                       present ? "list it" : "lack it", before, after);
                CHECK(0);
            }
            n_report += present && moved;
            free(json);
        }
        free(t);
    }
    printf("%d options in the fingerprint, %d of batch's own out of it, %d bad values refused by the table\n", n_in,
           n_out, n_refused);
    CHECK(n_in == r->nblock);
    printf("%d options in report.json's options, each with the value given\n", n_report);
    CHECK(n_report == r->nblock);
    free(base_json);
    CHECK(n_out == b->spec.nopts - r->nblock - 1);

    /* the whole of batch's parse with its defaults goes */
    char *argv[] = {"batch", "-o", "out", "scan.h5", NULL};
    mr_batch_args *t = malloc(sizeof *t);
    CHECK(t != NULL);
    if (t) {
        mr_batch_args_init(t);
        const int rc = mr_batch_args_parse(t, 4, argv);
        if (rc != MR_OPTS_GO)
            printf("FAIL: batch -o out scan.h5: %d (%s)\n", rc, mr_last_error());
        CHECK(rc == MR_OPTS_GO);
        if (rc == MR_OPTS_GO)
            mr_opts_free(&t->res);
        free(t);
    }
    free(r);
    free(b);
    return test_finish("test_option_tables");
}
