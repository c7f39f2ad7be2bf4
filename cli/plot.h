/*
 * plot.h - PNG and SVG charts drawn by gnuplot, for `frontier --plot`,
 * `simulate --plot` and `scaling --plot`.
 *
 * A command fills a struct plot with CSV rows (the data) and gnuplot
 * commands that read them from the datablock $data; plot_render() puts a
 * terminal (by the file's extension) and the datablock in front and pipes
 * the whole script to gnuplot.  Where gnuplot is not on PATH it writes the
 * data as FILE.csv and the script as FILE.gp instead (`gnuplot FILE.gp`
 * draws the chart later), warns, and still succeeds.
 *
 * It knows nothing of frontiers or step times: what to draw is the
 * commands' business.  Output formatting only; no model logic.
 */
#ifndef GPUPLAN_PLOT_H
#define GPUPLAN_PLOT_H

#include <stddef.h>

#include "common.h"

/* Chart size in pixels (SVG in its own units). */
#define PLOT_WIDTH 1000
#define PLOT_HEIGHT 620

enum plot_format { PLOT_PNG, PLOT_SVG };

/* Returns RC_OK with *out set from path's extension (.png or .svg, any
 * case), or RC_USAGE after "error: FLAG: expected ..." when the extension
 * is neither or path holds a quote-breaking character (newline). */
enum rc plot_check_path(const char *flag, const char *path, enum plot_format *out);

struct plot {
	char *data;       /* CSV: a header line, then rows */
	size_t data_len, data_cap;
	char *script;     /* gnuplot commands after the preamble */
	size_t script_len, script_cap;
	int height;       /* pixels; 0: PLOT_HEIGHT */
};

void plot_init(struct plot *p);
void plot_release(struct plot *p);

/* Appends one CSV line (a newline is added) to the data.  Text from
 * files goes in through gp_gnuplot_field; the datablock is written by
 * gp_gnuplot_datablock, so no row ends it. */
void plot_row(struct plot *p, const char *fmt, ...) GP_PRINTF(2, 3);
/* Appends one gnuplot command line (a newline is added) to the script. */
void plot_cmd(struct plot *p, const char *fmt, ...) GP_PRINTF(2, 3);

/* s as a gnuplot single-quoted string literal into buf[size]
 * (gp_gnuplot_quote; s is shortened first when the literal would not
 * fit, so the quotes stay whole).  Returns buf. */
char *plot_quote(char *buf, size_t size, const char *s);

/* Finds an executable named prog in $PATH; writes its path into
 * buf[size] and returns 1, or returns 0. */
int plot_find_program(const char *prog, char *buf, size_t size);

/* Draws p into path (PNG or SVG by extension) with gnuplot.  Returns
 * RC_OK when the chart was written (gnuplot's own messages pass through to
 * stderr), RC_OK with *fallback = 1 after a warning when gnuplot is not on
 * PATH and PATH.csv and PATH.gp (the extension replaced) were written
 * instead, RC_USAGE for a bad path, or RC_ERR after a message when gnuplot
 * fails or a file cannot be written; then an existing chart at path is
 * left as it was.  fallback may be NULL. */
enum rc plot_render(const struct plot *p, const char *flag, const char *path, int *fallback);

/* ---- the charts (cli/plot_charts.c) ------------------------------------ */

struct sim_plan;
struct plan_candidate;
struct plan_job;

/* `simulate --plot`: bars of where sp's step time goes (compute, TP, CP,
 * PP bubble, PP, exposed DP communication, optimizer) and where its memory
 * per GPU goes, with the GPU's capacity as a line.  Returns as
 * plot_render(). */
enum rc plot_breakdown_chart(const struct sim_plan *sp, const char *flag, const char *path);

/* `frontier --plot`: cost against time to train of the frontier c[0..n)
 * on log-log axes, one marker shape per GPU type, the staircase of the
 * frontier, c[chosen] ringed and labelled (chosen < 0: none), budget_usd
 * and deadline_s as dashed lines when > 0.  Returns as plot_render(). */
enum rc plot_frontier_chart(const struct plan_candidate *c, size_t n, const struct plan_job *job,
			    long chosen, double budget_usd, double deadline_s, const char *flag,
			    const char *path);

#endif
