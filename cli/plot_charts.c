/*
 * plot_charts.c - the charts of `simulate --plot` (where the step time and
 * the memory go) and `frontier --plot` (cost against time to train), built
 * on plot.h.  Which plan is chosen, and every figure drawn, comes from the
 * caller; this file only lays them out.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_plan.h"
#include "plot.h"
#include "sim.h"

#define SECONDS_PER_DAY 86400.0

/* ---- simulate: step-time and memory breakdown ------------------------ */

static void bar(struct plot *p, const char *kind, const char *name, double value,
		double scale, const char *label, double total, int y)
{
	double pct = total > 0 ? 100.0 * value / total : 0;

	plot_row(p, "%s,%s,%.6g,%.2f,%d,%s (%.1f%%)", kind, name, value / scale, pct, y, label,
		 pct);
}

static void time_bar(struct plot *p, const char *name, double s, double scale, double step,
		     int y)
{
	char b[32];

	bar(p, "time", name, s, scale, unit_fmt_duration(b, sizeof(b), s), step, y);
}

static void mem_bar(struct plot *p, const char *name, double bytes, double total, int y)
{
	char b[32];

	bar(p, "memory", name, bytes, UNIT_GIB, unit_fmt_bytes(b, sizeof(b), bytes), total, y);
}

enum rc plot_breakdown_chart(const struct sim_plan *sp, const char *flag, const char *path)
{
	const struct sim_result *r = &sp->result;
	const struct sim_breakdown *b = &r->breakdown;
	const struct sim_memory *m = &r->memory;
	const struct sim_parallel *q = &sp->par;
	/* Seconds on the axis from 2 s a step, milliseconds below. */
	double scale = r->step_time_s >= 2 ? 1 : 1e-3;
	const char *unit = r->step_time_s >= 2 ? "seconds" : "milliseconds";
	struct plot p;
	char t[512], qt[600], b1[32], b2[32], b3[32], b4[32];
	double tmax, mmax;
	int fallback;
	enum rc rc;

	plot_init(&p);
	p.height = 780;
	/* Rows 1-8 the step time, rows 9-13 the memory per GPU (the units of
	 * the table `simulate` prints); y is the bar's place from the top of
	 * its panel. */
	plot_row(&p, "kind,name,value,percent,y,label");
	time_bar(&p, "compute", b->compute_s, scale, r->step_time_s, 0);
	time_bar(&p, "tp comm", b->tp_comm_s, scale, r->step_time_s, 1);
	time_bar(&p, "cp comm", b->cp_comm_s, scale, r->step_time_s, 2);
	time_bar(&p, "ep comm", b->ep_comm_s, scale, r->step_time_s, 3);
	time_bar(&p, "pp bubble", b->pp_bubble_s, scale, r->step_time_s, 4);
	time_bar(&p, "pp comm", b->pp_comm_s, scale, r->step_time_s, 5);
	time_bar(&p, "dp comm exposed", b->dp_comm_exposed_s, scale, r->step_time_s, 6);
	time_bar(&p, "optimizer", b->optimizer_s, scale, r->step_time_s, 7);
	mem_bar(&p, "weights", m->weights, m->total, 0);
	mem_bar(&p, "gradients", m->grads, m->total, 1);
	mem_bar(&p, "optimizer", m->optimizer, m->total, 2);
	mem_bar(&p, "activations", m->activations, m->total, 3);
	mem_bar(&p, "other", m->other, m->total, 4);

	tmax = fmax(fmax(b->compute_s, b->tp_comm_s), fmax(b->cp_comm_s, b->pp_bubble_s));
	tmax = fmax(tmax, b->ep_comm_s);
	tmax = fmax(tmax, fmax(fmax(b->pp_comm_s, b->dp_comm_exposed_s), b->optimizer_s)) / scale;
	mmax = fmax(fmax(m->weights, m->grads), fmax(m->optimizer, fmax(m->activations, m->other)));
	mmax = fmax(mmax, m->capacity) / UNIT_GIB;

	snprintf(t, sizeof(t), "%s on %d x %s: tp %d, pp %d, dp %d, cp %d, mbs %d x %d, zero %d, "
		 "recompute %s", sp->model.name, q->tp * q->pp * q->dp * q->cp,
		 sp->cluster.gpu.name, q->tp, q->pp, q->dp, q->cp, q->mbs, r->grad_accum, q->zero,
		 q->recompute == SIM_RECOMPUTE_FULL ? "full"
		 : q->recompute == SIM_RECOMPUTE_SELECTIVE ? "selective" : "none");
	plot_cmd(&p, "set multiplot layout 2,1 title %s", plot_quote(qt, sizeof(qt), t));
	plot_cmd(&p, "set style fill solid 0.85 border -1");
	plot_cmd(&p, "unset key");
	plot_cmd(&p, "set grid xtics lc rgb '#dddddd'");
	/* A reversed explicit range puts the first bar on top. */
	plot_cmd(&p, "set yrange [7.6:-0.6]");
	plot_cmd(&p, "set xrange [0:%.6g]", tmax > 0 ? tmax * 1.45 : 1);
	plot_cmd(&p, "set xlabel '%s per step'", unit);
	snprintf(t, sizeof(t), "step time %s: %s tokens/s, MFU %.1f%%",
		 unit_fmt_duration(b1, sizeof(b1), r->step_time_s),
		 unit_fmt_count(b2, sizeof(b2), r->tokens_per_s), 100.0 * r->mfu);
	plot_cmd(&p, "set title %s", plot_quote(qt, sizeof(qt), t));
	plot_cmd(&p, "plot $data every ::1::8 using ($3/2):5:($3/2):(0.35):yticlabels(2) "
		     "with boxxyerror lc rgb '#1f77b4', "
		     "'' every ::1::8 using 3:5:6 with labels left offset 0.6,0 font ',9'");
	plot_cmd(&p, "set yrange [4.6:-0.6]");
	plot_cmd(&p, "set xrange [0:%.6g]", mmax > 0 ? mmax * 1.25 : 1);
	plot_cmd(&p, "set xlabel 'GiB per GPU'");
	snprintf(t, sizeof(t), "memory per GPU %s of %s: %s", unit_fmt_bytes(b3, sizeof(b3), m->total),
		 unit_fmt_bytes(b4, sizeof(b4), m->capacity), r->fits ? "fits" : "does NOT fit");
	plot_cmd(&p, "set title %s", plot_quote(qt, sizeof(qt), t));
	plot_cmd(&p, "set arrow 1 from %.6g, graph 0 to %.6g, graph 1 nohead dt 2 lw 2 "
		     "lc rgb '#d62728'", m->capacity / UNIT_GIB, m->capacity / UNIT_GIB);
	plot_cmd(&p, "set label 1 'capacity' at %.6g, graph 0.95 right offset -0.5,0 "
		     "tc rgb '#d62728'", m->capacity / UNIT_GIB);
	plot_cmd(&p, "plot $data every ::9::13 using ($3/2):5:($3/2):(0.35):yticlabels(2) "
		     "with boxxyerror lc rgb '#ff7f0e', "
		     "'' every ::9::13 using 3:5:6 with labels left offset 0.6,0 font ',9'");
	plot_cmd(&p, "unset multiplot");
	rc = plot_render(&p, flag, path, &fallback);
	plot_release(&p);
	if (rc == RC_OK && !fallback)
		gp_info("plot written to %s", path);
	return rc;
}

/* ---- frontier: cost against time to train ---------------------------- */

/* gnuplot point types: filled circle, square, triangle, inverted
 * triangle, diamond, pentagon, then their open forms. */
static const int point_types[] = { 7, 5, 9, 11, 13, 15, 6, 4, 8, 10, 12, 14 };
static const char *const colors[] = { "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b",
				      "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#d62728" };

/* Major tics at 1, 2 and 5 times the powers of ten in [lo, hi], so a
 * log axis spanning less than two decades still reads; USD labels as
 * "$200k", others as plain numbers. */
static void log_tics(struct plot *p, const char *axis, double lo, double hi, int usd)
{
	static const double steps[] = { 1, 2, 5 };
	char list[2048], lab[48], num[32], q[64];
	size_t n = 0;

	if (!(lo > 0) || !(hi > lo))
		return;
	list[0] = '\0';
	for (double dec = pow(10, floor(log10(lo))); dec <= hi; dec *= 10)
		for (size_t i = 0; i < GP_ARRAY_LEN(steps); i++) {
			double v = dec * steps[i];

			if (v < lo || v > hi || n + 80 > sizeof(list))
				continue;
			if (usd)
				snprintf(lab, sizeof(lab), "$%s", unit_fmt_count(num, sizeof(num), v));
			else
				snprintf(lab, sizeof(lab), "%g", v);
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s %.6g",
					      n ? ", " : "", plot_quote(q, sizeof(q), lab), v);
		}
	if (n)
		plot_cmd(p, "set %s (%s)", axis, list);
}

enum rc plot_frontier_chart(const struct plan_candidate *c, size_t n, const struct plan_job *job,
			    long chosen, double budget_usd, double deadline_s, const char *flag,
			    const char *path)
{
	const char *gpus[64];
	size_t n_gpus = 0;
	double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
	char t[512], qt[600], a[32], b[32], off[256];
	struct plot p;
	int fallback;
	enum rc rc;

	plot_init(&p);
	plot_row(&p, "gpu,time_days,cost_usd,gpus,offering,chosen");
	for (size_t i = 0; i < n; i++) {
		const struct plan_candidate *x = &c[i];
		double d = x->time_s / SECONDS_PER_DAY;
		char *fg, *fo;
		size_t k;

		for (k = 0; k < n_gpus && strcmp(gpus[k], x->cluster.gpu.name); k++)
			;
		if (k == n_gpus && n_gpus < GP_ARRAY_LEN(gpus))
			gpus[n_gpus++] = x->cluster.gpu.name;
		fg = gp_gnuplot_field(x->cluster.gpu.name);
		fo = gp_gnuplot_field(plan_cli_offering(off, sizeof(off), x));
		plot_row(&p, "%s,%.6g,%.6g,%d,%s,%d", fg, d, x->cost_usd,
			 x->nodes * x->cluster.gpus_per_node, fo, (long)i == chosen);
		free(fg);
		free(fo);
		xlo = fmin(xlo, d);
		xhi = fmax(xhi, d);
		ylo = fmin(ylo, x->cost_usd);
		yhi = fmax(yhi, x->cost_usd);
	}
	if (budget_usd > 0) {
		ylo = fmin(ylo, budget_usd);
		yhi = fmax(yhi, budget_usd);
	}
	if (deadline_s > 0) {
		xlo = fmin(xlo, deadline_s / SECONDS_PER_DAY);
		xhi = fmax(xhi, deadline_s / SECONDS_PER_DAY);
	}
	snprintf(t, sizeof(t), "%s, %s tokens: cost against time to train (%zu Pareto-optimal plans)",
		 job->name, unit_fmt_count(a, sizeof(a), job->tokens), n);
	plot_cmd(&p, "set title %s", plot_quote(qt, sizeof(qt), t));
	plot_cmd(&p, "set logscale xy 10");
	plot_cmd(&p, "set xrange [%.6g:%.6g]", xlo / 1.6, xhi * 1.6);
	plot_cmd(&p, "set yrange [%.6g:%.6g]", ylo / 1.6, yhi * 1.6);
	log_tics(&p, "xtics", xlo / 1.6, xhi * 1.6, 0);
	log_tics(&p, "ytics", ylo / 1.6, yhi * 1.6, 1);
	plot_cmd(&p, "set grid xtics ytics lc rgb '#dddddd'");
	plot_cmd(&p, "set xlabel 'time to train (days)'");
	plot_cmd(&p, "set ylabel 'cost (USD)'");
	plot_cmd(&p, "set key outside right top box Left reverse width 2");
	if (budget_usd > 0) {
		plot_cmd(&p, "set arrow 1 from graph 0, first %.6g to graph 1, first %.6g nohead "
			     "dt 2 lw 2 lc rgb '#d62728'", budget_usd, budget_usd);
		plot_cmd(&p, "set label 1 %s at graph 0.99, first %.6g right offset 0,0.7 "
			     "tc rgb '#d62728'",
			 plot_quote(qt, sizeof(qt), (snprintf(t, sizeof(t), "budget $%s",
							      unit_fmt_count(b, sizeof(b), budget_usd)), t)),
			 budget_usd);
	}
	if (deadline_s > 0) {
		double d = deadline_s / SECONDS_PER_DAY;

		plot_cmd(&p, "set arrow 2 from first %.6g, graph 0 to first %.6g, graph 1 nohead "
			     "dt 2 lw 2 lc rgb '#2ca02c'", d, d);
		plot_cmd(&p, "set label 2 %s at first %.6g, graph 0.97 left offset 0.5,0 "
			     "tc rgb '#2ca02c'",
			 plot_quote(qt, sizeof(qt), (snprintf(t, sizeof(t), "deadline %s",
							      unit_fmt_duration(b, sizeof(b), deadline_s)), t)),
			 d);
	}
	if (chosen >= 0 && (size_t)chosen < n) {
		const struct plan_candidate *x = &c[chosen];

		snprintf(t, sizeof(t), "chosen: %d x %s, %s, $%s", x->nodes * x->cluster.gpus_per_node,
			 x->cluster.gpu.name, unit_fmt_duration(a, sizeof(a), x->time_s),
			 unit_fmt_count(b, sizeof(b), x->cost_usd));
		plot_cmd(&p, "set label 3 %s at first %.6g, first %.6g left offset 1.5,-1.2 "
			     "font ',9'", plot_quote(qt, sizeof(qt), t),
			 x->time_s / SECONDS_PER_DAY, x->cost_usd);
	}
	/* The frontier as a staircase, then one shape per GPU type, then a
	 * ring around the chosen plan. */
	plot_cmd(&p, "plot $data every ::1 using 2:3 with lines lw 1 lc rgb '#aaaaaa' "
		     "title 'frontier', \\");
	for (size_t k = 0; k < n_gpus; k++) {
		char *fg = gp_gnuplot_field(gpus[k]);

		plot_cmd(&p, "  '' every ::1 using (strcol(1) eq %s ? $2 : NaN):3 with points "
			     "pt %d ps 1.6 lc rgb '%s' title %s, \\", plot_quote(qt, sizeof(qt), fg),
			 point_types[k % GP_ARRAY_LEN(point_types)], colors[k % GP_ARRAY_LEN(colors)],
			 plot_quote(t, sizeof(t), gpus[k]));
		free(fg);
	}
	plot_cmd(&p, "  '' every ::1 using ($6 == 1 ? $2 : NaN):3 with points pt 6 ps 4 lw 2 "
		     "lc rgb '#000000' title 'chosen plan'");
	rc = plot_render(&p, flag, path, &fallback);
	plot_release(&p);
	if (rc == RC_OK && !fallback)
		gp_info("plot written to %s", path);
	return rc;
}
