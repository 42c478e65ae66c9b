/* The plot font: every printable letter and digit of the labels draws something, and lower-case
 * letters are their own glyphs (not the upper-case ones: "PSNR dB" must not come out "PSNR DB"). */
#include <stdlib.h>
#include <string.h>

#include "recon/report/outputs.h"
#include "recon/report/plot.h"
#include "testutil.h"

#define W 16
#define H 12

/* The pixels one character sets, as a bitmap of the 5x7 cell (scale 1). */
static void render(char c, uint8_t out[W * H])
{
    uint8_t rgb[W * H * 3];
    const uint8_t ink[3] = {0, 0, 0};
    memset(rgb, 255, sizeof rgb);
    char text[2] = {c, 0};
    mr_plot_text(rgb, W, H, 1, 1, text, ink, 1);
    for (int i = 0; i < W * H; i++)
        out[i] = rgb[3 * i] == 0;
}

static int count(const uint8_t *b)
{
    int n = 0;
    for (int i = 0; i < W * H; i++)
        n += b[i];
    return n;
}

int main(void)
{
    uint8_t a[W * H], b[W * H];
    for (char c = 'a'; c <= 'z'; c++) {
        render(c, a);
        render((char)(c - 'a' + 'A'), b);
        if (count(a) == 0 || count(b) == 0 || memcmp(a, b, sizeof a) == 0) {
            fprintf(stderr, "glyph '%c': %d pixels, '%c': %d pixels, identical: %d\n", c, count(a), c - 'a' + 'A',
                    count(b), memcmp(a, b, sizeof a) == 0);
            CHECK(0);
        } else {
            CHECK(1);
        }
    }
    for (char c = '0'; c <= '9'; c++) {
        render(c, a);
        CHECK(count(a) > 0);
    }
    const char *signs = ".-+:/=()|_%,";
    for (const char *p = signs; *p; p++) {
        render(*p, a);
        CHECK(count(a) > 0);
    }
    render(' ', a);
    CHECK(count(a) == 0);
    /* the width of a string is 6 pixels per character at scale 1 */
    uint8_t rgb[64 * 12 * 3];
    const uint8_t ink[3] = {0, 0, 0};
    CHECK(mr_plot_text(rgb, 64, 12, 0, 0, "PSNR dB", ink, 1) == 6 * 7);
    /* the compare.png labels are written in proper case, and every character of them draws */
    const char *const methods[] = {"cg", "gridding-kb", "gridding-bilinear"};
    const char *const want[] = {"CG", "KB gridding", "Bilinear"};
    for (int i = 0; i < 3; i++) {
        const char *label = mr_outputs_method_label(methods[i]);
        if (strcmp(label, want[i]) != 0)
            fprintf(stderr, "label of %s: '%s', expected '%s'\n", methods[i], label, want[i]);
        CHECK(strcmp(label, want[i]) == 0);
        for (const char *p = label; *p; p++) {
            render(*p, a);
            CHECK(*p == ' ' || count(a) > 0);
        }
    }
    return test_finish("test_plot");
}
