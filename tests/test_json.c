/* io/json.h: the escaping of strings (quotes, backslashes, control characters, UTF-8 passed through), numbers
 * (digits; NaN and infinities as null) and the layout of nested objects, byte for byte. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/json.h"
#include "testutil.h"

/* What code wrote to f, as a string in out (caller frees). */
#define CAPTURE(out, code)                                                                                       \
    do {                                                                                                         \
        size_t capture_size = 0;                                                                                 \
        FILE *f = open_memstream(&(out), &capture_size);                                                         \
        CHECK(f != NULL);                                                                                        \
        if (f) {                                                                                                 \
            code;                                                                                                \
            fclose(f);                                                                                           \
        }                                                                                                        \
    } while (0)

static void expect(const char *what, const char *got, const char *want)
{
    if (!got || strcmp(got, want)) {
        printf("FAIL: %s: got '%s', want '%s'\n", what, got ? got : "(nothing)", want);
        CHECK(0);
    } else {
        printf("ok: %s: %s\n", what, got);
    }
}

static void write_object(FILE *f)
{
    mr_json_obj top = mr_json_begin(f);
    mr_json_str(&top, "name", "x\"y");
    mr_json_int(&top, "n", -3);
    mr_json_num(&top, "v", NAN);
    mr_json_bool(&top, "ok", 1);
    const double a[3] = {1.5, INFINITY, 2};
    mr_json_array(&top, "a", a, 3);
    mr_json_obj in = mr_json_open(&top, "inner");
    mr_json_num(&in, "pi", 3.14159265358979);
    mr_json_close(&in);
    mr_json_obj empty = mr_json_open(&top, "empty");
    mr_json_close(&empty);
    mr_json_close(&top);
}

int main(void)
{
    char *s = NULL;
    static const struct {
        const char *what, *in, *want;
    } strings[] = {
        {"plain", "plain", "\"plain\""},
        {"quotes and backslashes", "a \"quoted\" \\ back\\slash", "\"a \\\"quoted\\\" \\\\ back\\\\slash\""},
        {"control characters", "tab\there\nnew\x01\x1f end", "\"tab\\u0009here\\u000anew\\u0001\\u001f end\""},
        {"UTF-8 and DEL pass through", "\xc2\xb5m, \xe2\x80\x94, \xf0\x9f\x99\x82, \x7f",
         "\"\xc2\xb5m, \xe2\x80\x94, \xf0\x9f\x99\x82, \x7f\""},
        {"NULL", NULL, "\"\""},
    };
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) {
        CAPTURE(s, mr_json_string(f, strings[i].in));
        expect(strings[i].what, s, strings[i].want);
        free(s);
    }

    CAPTURE(s, (mr_json_number(f, 1.0 / 3.0, 9), fputc(' ', f), mr_json_number(f, 1.0 / 3.0, 6), fputc(' ', f),
                mr_json_number(f, 1e-30, 9), fputc(' ', f), mr_json_number(f, -0.0, 9)));
    expect("numbers", s, "0.333333333 0.333333 1e-30 -0");
    free(s);
    CAPTURE(s, (mr_json_number(f, NAN, 9), fputc(' ', f), mr_json_number(f, INFINITY, 9), fputc(' ', f),
                mr_json_number(f, -INFINITY, 6)));
    expect("nan and infinities", s, "null null null");
    free(s);

    CAPTURE(s, write_object(f));
    expect("object", s,
           "{\n  \"name\": \"x\\\"y\",\n  \"n\": -3,\n  \"v\": null,\n  \"ok\": true,\n  \"a\": [1.5, null, 2],\n"
           "  \"inner\": {\n    \"pi\": 3.14159265\n  },\n  \"empty\": {}\n}");
    free(s);
    return test_finish("test_json");
}
