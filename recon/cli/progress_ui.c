#include "progress_ui.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../../base/log.h"

#define MR_PROGRESS_DEFAULT_DELAY 1.0
#define MR_PROGRESS_REDRAW_S 0.1

static void erase_bar(void *ctx)
{
    mr_progress_ui *ui = ctx;
    if (ui->drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        ui->drawn = 0;
    }
}

/* "12.3 s, about 18 s left" */
static void times(char *buf, size_t size, double elapsed, double frac)
{
    if (frac > 0 && frac < 1)
        snprintf(buf, size, "%.1f s, about %.0f s left", elapsed, elapsed * (1 - frac) / frac);
    else
        snprintf(buf, size, "%.1f s", elapsed);
}

static void draw_bar(mr_progress_ui *ui, double frac, double elapsed)
{
    struct winsize ws;
    const int width = ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20 ? ws.ws_col : 80;
    const int bw = width >= 100 ? 30 : 20;
    char bar[32], t[64], line[256];
    const int fill = (int)(frac * bw);
    for (int i = 0; i < bw; i++)
        bar[i] = i < fill ? '#' : '-';
    bar[bw] = '\0';
    times(t, sizeof t, elapsed, frac);
    snprintf(line, sizeof line, "%s [%s] %3d%%  %s", ui->stage, bar, (int)(frac * 100), t);
    if ((int)strlen(line) > width - 1)
        line[width - 1] = '\0';
    fprintf(stderr, "\r\033[K%s", line);
    fflush(stderr);
    ui->drawn = 1;
}

static void on_report(void *ctx, const char *stage, double done, double total)
{
    mr_progress_ui *ui = ctx;
    const double now = mr_now();
    if (!stage)
        stage = "work";
    if (ui->ended || strcmp(stage, ui->stage) != 0) { /* a new stage */
        erase_bar(ui);
        snprintf(ui->stage, sizeof ui->stage, "%s", stage);
        ui->t0 = now;
        ui->last = 0;
        ui->shown = 0;
        ui->decile = -1;
        ui->ended = 0;
    }
    const double elapsed = now - ui->t0;
    const double frac = total > 0 ? fmin(fmax(done / total, 0.0), 1.0) : 1.0;
    if (frac >= 1.0) { /* the stage ends: one line when it was shown or took longer than the delay */
        ui->ended = 1;
        erase_bar(ui);
        if (ui->shown || elapsed >= ui->delay) {
            fprintf(stderr, "mrirecon: progress: %s done in %.1f s\n", ui->stage, elapsed);
            fflush(stderr);
        }
        return;
    }
    if (!ui->shown && elapsed < ui->delay)
        return;
    ui->shown = 1;
    if (ui->mode == 2) {
        if (ui->drawn && now - ui->last < MR_PROGRESS_REDRAW_S)
            return;
        ui->last = now;
        draw_bar(ui, frac, elapsed);
        return;
    }
    const int decile = (int)(frac * 10);
    if (decile <= ui->decile)
        return;
    ui->decile = decile;
    char t[64];
    times(t, sizeof t, elapsed, frac);
    fprintf(stderr, "mrirecon: progress: %s %d%% (%s)\n", ui->stage, decile * 10, t);
    fflush(stderr);
}

void mr_progress_ui_init(mr_progress_ui *ui, int quiet)
{
    memset(ui, 0, sizeof *ui);
    ui->mode = quiet ? 0 : (isatty(STDERR_FILENO) ? 2 : 1);
    ui->delay = MR_PROGRESS_DEFAULT_DELAY;
    const char *env = getenv("MR_PROGRESS_DELAY");
    if (env && *env) {
        char *end;
        double v = strtod(env, &end);
        if (*end == '\0' && isfinite(v) && v >= 0)
            ui->delay = v;
    }
    ui->ended = 1;
    ui->sink.fn = ui->mode ? on_report : NULL;
    ui->sink.ctx = ui;
    if (ui->mode == 2)
        mr_log_set_before_line(erase_bar, ui);
}

const mr_progress *mr_progress_ui_sink(mr_progress_ui *ui) { return &ui->sink; }

void mr_progress_ui_end(mr_progress_ui *ui)
{
    erase_bar(ui);
    if (ui->mode == 2)
        mr_log_set_before_line(NULL, NULL);
    ui->sink.fn = NULL;
}
