/* How a command shows the progress that library code reports (base/progress.h), on stderr:
 *
 *   a terminal (isatty(stderr)):  one bar line redrawn in place,
 *                                 "Q [########------------] 40%  12.3 s, about 18 s left"
 *   otherwise (a log file, a pipe): plain lines at every further 10 %,
 *                                 "mrirecon: progress: Q 40% (12.3 s, about 18 s left)"
 *   -q:                           nothing.
 *
 * A stage is shown only once it has run longer than the delay (1 s; the environment variable
 * MR_PROGRESS_DELAY=SECONDS changes it, e.g. 0 for tests), so short work stays silent; a stage that
 * was shown ends with "mrirecon: progress: Q done in 30.1 s". A log line printed meanwhile (mr_log)
 * erases the bar first; the next report draws it again.
 *
 * Ownership: the caller owns the mr_progress_ui (e.g. on its stack); the sink points to it, so it
 * must outlive every call that received the sink; mr_progress_ui_end before it goes away. One per
 * process at a time (it installs the log hook of base/log.h). */
#ifndef MR_PROGRESS_UI_H
#define MR_PROGRESS_UI_H

#include "../../base/progress.h"

typedef struct {
    int mode;     /* 0 off, 1 lines, 2 bar */
    double delay; /* seconds before a stage is shown */
    char stage[64];
    double t0;       /* when the current stage started */
    double last;     /* last bar draw */
    int shown;       /* the stage has been shown */
    int decile;      /* lines: the last 10 % step printed */
    int drawn;       /* bar: a bar is on the terminal line */
    int ended;       /* the current stage reported done = total */
    mr_progress sink;
} mr_progress_ui;

/* quiet: show nothing. */
void mr_progress_ui_init(mr_progress_ui *ui, int quiet);
/* The sink to hand to library code (NULL fn when off). */
const mr_progress *mr_progress_ui_sink(mr_progress_ui *ui);
/* Erase a bar still drawn and remove the log hook. */
void mr_progress_ui_end(mr_progress_ui *ui);

#endif
