/*
 * progress.h - one line of progress on stderr for work that takes more
 * than about a second: the planner's search, a scaling sweep, a run, a
 * calibration.
 *
 * It draws only when stderr is a terminal and logging is not quiet
 * (gp_log_quiet, set by --quiet); piped or redirected stderr gets nothing,
 * so logs and test outputs stay clean.  Nothing is drawn during the first
 * GP_PROGRESS_DELAY_S seconds (or $GPUPLAN_PROGRESS_DELAY), so quick
 * commands never flicker.  A background thread redraws the line a few
 * times a second, so work that cannot report its own progress (one long
 * solver call) still shows that it is alive and for how long.  The line is
 * erased when the work is done; results are printed after that.
 *
 * It does not estimate time left: the planner's and the executor's phases
 * do not take equal time, so a countdown would mislead.
 */
#ifndef GPUPLAN_PROGRESS_H
#define GPUPLAN_PROGRESS_H

#include <stddef.h>
#include <stdio.h>

/* Seconds of silence before the first draw, and between redraws. */
#define GP_PROGRESS_DELAY_S 1.0
#define GP_PROGRESS_INTERVAL_S 0.1

struct gp_progress_opts {
	FILE *out;          /* stderr */
	int enabled;        /* 1: draw; default: out is a terminal and not quiet */
	double delay_s;     /* default GP_PROGRESS_DELAY_S or $GPUPLAN_PROGRESS_DELAY */
	double interval_s;  /* default GP_PROGRESS_INTERVAL_S */
};

/* Fills o with the defaults above (reads isatty(2), gp_log_is_quiet() and
 * the environment once, now). */
void gp_progress_opts_init(struct gp_progress_opts *o);

struct gp_progress;

/* Starts showing progress of "what" (e.g. "plan: searching") over total
 * steps (0: unknown, only the elapsed time is shown).  Returns a handle
 * for gp_progress_update/done; never NULL (a disabled indicator is a
 * handle that draws nothing).  what is copied. */
struct gp_progress *gp_progress_start(const char *what, size_t total);
/* The same with explicit options (tests, other streams). */
struct gp_progress *gp_progress_start_opts(const struct gp_progress_opts *o,
					   const char *what, size_t total);

/* Records that done of total steps are finished, with an optional short
 * detail ("512 GPUs"; NULL for none, copied).  Cheap: it only stores; the
 * drawing thread picks it up. */
void gp_progress_update(struct gp_progress *p, size_t done, const char *detail);

/* Stops the indicator, erases its line if one was drawn, and frees p.
 * Accepts NULL. */
void gp_progress_done(struct gp_progress *p);

/* Formats the line the indicator draws into buf[size]:
 * "what: done/total (pct%), detail, 3.2 s" (parts left out when unknown).
 * Returns buf. */
char *gp_progress_format(char *buf, size_t size, const char *what, size_t done,
			 size_t total, const char *detail, double elapsed_s);

#endif
