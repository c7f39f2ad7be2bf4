/*
 * cmd_frontier.c - `gpuplan frontier`: the whole cost-versus-time Pareto
 * frontier of one job across every offering (no budget or deadline),
 * fastest first, as a table, as JSON (--json), or as CSV (--csv FILE) for
 * plotting; each plan with its expected interruptions and effective
 * training time.  The flags it shares with `plan` live in cli_plan.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_plan.h"
#include "plot.h"
#include "progress.h"

enum { OPT_CSV = PCLI_FIRST_FREE, OPT_PLOT, OPT_BUDGET, OPT_DEADLINE };

static void help(void)
{
	printf("usage: gpuplan frontier --model NAME --tokens N [--csv FILE] [--plot FILE] [options]\n\n"
	       "Prints every plan no other plan beats in both time to train and cost, across\n"
	       "all offerings that pass the filters, fastest first.  Each point is the fastest\n"
	       "fitting parallel configuration for its offering and node count.\n\n"
	       "  --csv FILE            also write the frontier as CSV (default none)\n"
	       "  --plot FILE           draw cost against time to FILE.png or FILE.svg with\n"
	       "                        gnuplot, one marker per GPU type, the chosen plan ringed\n"
	       "                        (default none; without gnuplot the data and a script\n"
	       "                        are written as FILE.csv and FILE.gp)\n"
	       "  --budget USD          mark the fastest plan within it, drawn as a line\n"
	       "                        (default none)\n"
	       "  --deadline DUR        mark the cheapest plan within it (the fastest within\n"
	       "                        both when a budget is given too), drawn as a line\n"
	       "                        (default none; with neither, the fastest is marked)\n"
	       "  -q, --quiet           no progress or notes on stderr (default off)\n"
	       "  -h, --help            this help\n");
	plan_cli_help(stdout);
	printf("\nexit status: 0 ok, 2 bad usage or input, 3 nothing fits\n");
}

static enum rc write_csv(const char *path, const struct plan_candidate *c, size_t n)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		gp_error("%s: cannot write: %s", path, strerror(errno));
		return RC_ERR;
	}
	fprintf(f, "provider,instance_type,region,gpu,spot,nodes,gpus,tp,pp,dp,cp,mbs,grad_accum,"
		   "zero,recompute,interleave,step_time_s,tokens_per_s,mfu,memory_per_gpu_bytes,"
		   "time_to_train_s,cost_usd,usd_per_hour,ep,etp,precision,expected_interruptions,"
		   "effective_training_time\n");
	for (size_t i = 0; i < n; i++) {
		const struct plan_candidate *p = &c[i];

		fprintf(f, "%s,%s,%s,%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%s,%d,%.6g,%.6g,%.4f,%.6g,%.6g,%.2f,%.4f,%d,%d,%s,%.6g,%.6g\n",
			p->offering->provider, p->offering->instance_type, p->offering->region,
			p->cluster.gpu.name, p->spot, p->nodes, p->nodes * p->cluster.gpus_per_node,
			p->par.tp, p->par.pp, p->par.dp, p->par.cp, p->par.mbs, p->res.grad_accum,
			p->par.zero, plan_cli_recompute(p->par.recompute), p->par.interleave,
			p->res.step_time_s, p->res.tokens_per_s, p->res.mfu, p->res.memory.total,
			p->time_s, p->cost_usd, p->usd_per_hour, p->par.ep, p->par.etp,
			sim_precision_str(p->par.precision), p->interrupt.expected,
			1.0 - p->interrupt.waste);
	}
	if (fclose(f) != 0) {
		gp_error("%s: cannot write: %s", path, strerror(errno));
		return RC_ERR;
	}
	return RC_OK;
}

/* What the INTR and EFF columns hold, at which rates: one line. */
static void print_interrupts(const struct plan_opts *o, const struct plan_candidate *c, size_t n)
{
	int spot = 0;
	char a[32];

	for (size_t i = 0; i < n; i++)
		spot |= c[i].spot;
	printf("interruptions: INTR expected over each plan's time (failures %.3g/GPU-hour x its "
	       "GPUs; --failure-rate", o->failures_per_gpu_hour);
	if (spot)
		printf(", spot preemptions %g/node-hour x its nodes", o->preempt_per_node_hour);
	printf("), each a restart of %s and the work since the last checkpoint redone; EFF the "
	       "effective training time they and the checkpoints leave (Young/Daly interval; in "
	       "TIME)\n", unit_fmt_duration(a, sizeof(a), o->restart_s));
}

/* The point `gpuplan plan` would answer with these limits on one job:
 * the fastest within the budget (and deadline), the cheapest within the
 * deadline alone, the fastest without either.  c is fastest first.
 * Returns its index, or -1 when no point meets the limits. */
static long choose(const struct plan_candidate *c, size_t n, double budget_usd, double deadline_s)
{
	long best = -1;

	for (size_t i = 0; i < n; i++) {
		if ((budget_usd >= 0 && c[i].cost_usd > budget_usd) ||
		    (deadline_s > 0 && c[i].time_s > deadline_s))
			continue;
		if (budget_usd >= 0 || !(deadline_s > 0))
			return (long)i;
		if (best < 0 || c[i].cost_usd < c[best].cost_usd)
			best = (long)i;
	}
	return best;
}

enum rc cmd_frontier(int argc, char **argv)
{
	static const struct option longopts[] = {
		PLAN_CLI_OPTIONS,
		{ "csv", required_argument, NULL, OPT_CSV },
		{ "plot", required_argument, NULL, OPT_PLOT },
		{ "budget", required_argument, NULL, OPT_BUDGET },
		{ "deadline", required_argument, NULL, OPT_DEADLINE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct plan_cli pc;
	struct plan_cli_data d;
	struct plan_candidate *c = NULL;
	struct plan_stats st;
	struct plan_nearest nn;
	const char *csv = NULL, *plot = NULL;
	struct gp_progress *prog;
	enum plot_format pf;
	double budget = -1, deadline = -1;
	long chosen = -1;
	size_t n = 0;
	enum rc rc = RC_OK;
	int ch;

	plan_cli_init(&pc);
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
		if (plan_cli_flag(&pc, ch, optarg, &rc)) {
			if (rc != RC_OK)
				return rc;
			continue;
		}
		switch (ch) {
		case OPT_CSV: csv = optarg; break;
		case OPT_PLOT:
			plot = optarg;
			if ((rc = plot_check_path("--plot", optarg, &pf)) != RC_OK)
				return rc;
			break;
		case OPT_BUDGET:
			if ((rc = cli_parse_usd("--budget", optarg, &budget)) != RC_OK)
				return rc;
			break;
		case OPT_DEADLINE:
			if ((rc = cli_parse_duration("--deadline", optarg, &deadline)) != RC_OK)
				return rc;
			if (!(deadline > 0)) {
				gp_error("--deadline: expected a duration > 0, found '%s'", optarg);
				return RC_USAGE;
			}
			break;
		case 'q': gp_log_quiet(1); break;
		case 'h': help(); return RC_OK;
		default: return cli_bad_option("frontier", optopt, argv[optind - 1]);
		}
	}
	if (optind < argc) {
		gp_error("frontier: expected options only, found '%s'", argv[optind]);
		return RC_USAGE;
	}
	if (pc.jobs_path) {
		gp_error("frontier: expected --model and --tokens, found --jobs");
		return RC_USAGE;
	}
	rc = plan_cli_load(&pc, "frontier", &d);
	if (rc != RC_OK)
		return rc;
	prog = gp_progress_start("frontier: searching", 0);
	rc = plan_frontier(&d.jobs[0], &d.cat, &pc.opts, &c, &n, &st, &nn);
	gp_progress_done(prog);
	if (rc == RC_OK)
		chosen = choose(c, n, budget, deadline);
	if (rc == RC_INFEASIBLE) {
		char a[32];

		if (nn.smallest_fit_memory_bytes >= 0)
			gp_error("frontier: %s: plans fit in GPU memory, but none can be bought: the "
				 "job outlasts the longest term of every capacity block that fits it, "
				 "or interruptions (failures, spot preemptions) would waste half its "
				 "time", d.jobs[0].name);
		else
			gp_error("frontier: %s: no configuration fits on the offerings considered "
				 "(the most frugal needs %s per GPU)", d.jobs[0].name,
				 unit_fmt_bytes(a, sizeof(a), nn.smallest_need_bytes));
	}
	if (rc == RC_OK && csv)
		rc = write_csv(csv, c, n);
	if (rc == RC_OK && pc.json) {
		char *js = plan_frontier_to_json(c, n, &d.jobs[0], &pc.opts);

		printf("%s\n", js);
		free(js);
	} else if (rc == RC_OK) {
		char off[256], tt[32], cost[32], rate[32], gpus[32], par[64], tok[32], intr[32],
			eff[16];
		int wl = 12;

		for (size_t i = 0; i < n; i++) {
			int nl = (int)strlen(plan_cli_layout(par, sizeof(par), &c[i].par));

			if (nl > wl)
				wl = nl;
		}

		printf("gpuplan frontier: %s, %s tokens: %zu Pareto-optimal plans (fastest first)",
		       d.jobs[0].name, unit_fmt_count(tok, sizeof(tok), d.jobs[0].tokens), n);
		if (pc.opts.filter.framework != PLAN_FRAMEWORK_ANY)
			printf(", layouts %s runs", plan_framework_str(pc.opts.filter.framework));
		printf("\n\n");
		printf("%-48s %-12s %-*s %-5s %-6s %-9s %-13s %-9s %-7s %s\n", "OFFERING", "GPUS", wl,
		       "TP/PP/DP/CP", "ZERO", "MFU", "TIME", "COST", "USD/H", "INTR", "EFF");
		for (size_t i = 0; i < n; i++) {
			const struct plan_candidate *p = &c[i];

			snprintf(gpus, sizeof(gpus), "%dx%d=%d", p->nodes, p->cluster.gpus_per_node,
				 p->nodes * p->cluster.gpus_per_node);
			/* tp x pp x dp x cp is the GPU count, as in plan's table */
			plan_cli_layout(par, sizeof(par), &p->par);
			printf("%-48s %-12s %-*s %-5d %-6.1f %-9s %-13s %-9s %-7s %s\n",
			       plan_cli_offering(off, sizeof(off), p), gpus, wl, par, p->par.zero,
			       100.0 * p->res.mfu,
			       unit_fmt_duration(tt, sizeof(tt), p->time_s),
			       unit_fmt_usd(cost, sizeof(cost), p->cost_usd),
			       unit_fmt_usd(rate, sizeof(rate), p->usd_per_hour),
			       cli_fmt_expected(intr, sizeof(intr), p->interrupt.expected),
			       cli_fmt_effective(eff, sizeof(eff), p->interrupt.waste));
		}
		if (budget >= 0 || deadline > 0) {
			const char *lim = budget >= 0 && deadline > 0 ? "budget and deadline"
					  : budget >= 0 ? "budget" : "deadline";

			if (chosen >= 0)
				printf("\nchosen within the %s (as `gpuplan plan` would): %s, %d GPUs, "
				       "%s for %s\n", lim, plan_cli_offering(off, sizeof(off), &c[chosen]),
				       c[chosen].nodes * c[chosen].cluster.gpus_per_node,
				       unit_fmt_duration(tt, sizeof(tt), c[chosen].time_s),
				       unit_fmt_usd(cost, sizeof(cost), c[chosen].cost_usd));
			else
				printf("\nchosen: none: no plan of the frontier meets the %s\n", lim);
		}
		{
			const struct plan_candidate **cs = xcalloc(n ? n : 1, sizeof(*cs));

			for (size_t i = 0; i < n; i++)
				cs[i] = &c[i];
			printf("\n");
			print_interrupts(&pc.opts, c, n);
			plan_cli_print_price_ages(&pc, cs, n);
			free(cs);
		}
		printf("search: %zu offerings (%zu machines), %zu configurations simulated in %.2f s\n",
		       st.offerings, st.machines, st.simulated, st.enumerate_s);
		fflush(stdout);
		if (csv)
			gp_info("frontier written to %s", csv);
	}
	if (rc == RC_OK && plot) {
		fflush(stdout);
		rc = plot_frontier_chart(c, n, &d.jobs[0], chosen, budget, deadline, "--plot", plot);
	}
	free(c);
	plan_cli_release(&d);
	return rc;
}
