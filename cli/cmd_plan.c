/*
 * cmd_plan.c - `gpuplan plan`: which GPUs to rent where, how many and
 * with which parallelism, within a budget or a deadline.  Parses flags,
 * calls plan_run(), prints the ranked table (or --json) and writes the best
 * plan with sim_plan_write().  The flags it shares with `frontier` and
 * `compare` live in cli_plan.c.  No planning logic lives here.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_plan.h"
#include "progress.h"

/* ---- plan --------------------------------------------------------------- */

enum {
	OPT_BUDGET = PCLI_FIRST_FREE, OPT_HOURLY, OPT_MONTHLY, OPT_DEADLINE, OPT_OBJECTIVE,
	OPT_PHASES, OPT_SWITCH, OPT_TOP, OPT_DUMP_LP, OPT_TIME_LIMIT, OPT_SENS,
};

static void help(void)
{
	printf("usage: gpuplan plan --model NAME --tokens N [--budget USD | --deadline DUR] [options]\n"
	       "       gpuplan plan --jobs FILE [--budget USD] [options]\n\n"
	       "Chooses the offering (GPU, provider, region, spot or on-demand), the number of\n"
	       "nodes and the parallel configuration that trains fastest within the budget, or\n"
	       "cheapest within the deadline: every configuration is simulated, each offering's\n"
	       "cost/time frontier kept, and a MILP (GLPK) chooses among them.  Prints a ranked\n"
	       "table and writes the best plan as JSON (gpuplan.plan/1).\n\n"
	       "constraints and objective:\n"
	       "  --budget USD          total budget: 250000, 250k, 1.5M, $1,500,000 (default none)\n"
	       "  --hourly-budget USD   spend rate cap per hour, all jobs together (default none)\n"
	       "  --monthly-budget USD  spend rate cap per month of %g hours (default none)\n"
	       "  --deadline DUR        time to train limit: 30d, 72h (default none; a jobs\n"
	       "                        file's deadline column overrides it per job)\n"
	       "  --objective time|cost least time (priority-weighted for several jobs) or least\n"
	       "                        cost (default: cost when only a deadline is given, else time)\n"
	       "  --phases 1|2          let a job split its tokens over two plans run one after the\n"
	       "                        other, e.g. spot then on-demand (default 1)\n"
	       "  --switch-time DUR     time lost switching plans (default %gs)\n"
	       "output:\n"
	       "  --top N               ranked answers, each on a different offering (default %d)\n"
	       "  -o, --output FILE     where to write the best plan (default ./plan.json); with\n"
	       "                        several jobs one file each, FILE-NAME.json (plan-NAME.json)\n"
	       "  --dump-lp FILE        write the MILP in CPLEX LP format (default none)\n"
	       "  --milp-time-limit DUR GLPK's time limit per solve (default %gs)\n"
	       "  --sensitivity F       what-if factor for bandwidth and FLOP/s (default %g)\n"
	       "  -q, --quiet           no progress or notes on stderr (default off)\n"
	       "  -h, --help            this help\n",
	       UNIT_HOURS_PER_MONTH, PLAN_DEFAULT_SWITCH_S, PLAN_DEFAULT_TOP,
	       PLAN_DEFAULT_MILP_TIME_LIMIT_S, PLAN_DEFAULT_SENSITIVITY);
	plan_cli_help(stdout);
	printf("\nexit status: 0 a plan, 2 bad usage or input, 3 no feasible plan (the nearest\n"
	       "feasible answers are printed), 1 solver or I/O failure\n");
}

static const char *binding_text(enum plan_binding b, enum plan_objective obj)
{
	switch (b) {
	case PLAN_BINDING_BUDGET:
		return "the budget: a faster plan exists but costs more";
	case PLAN_BINDING_HOURLY_BUDGET:
		return "the hourly budget: a faster plan exists but spends more per hour";
	case PLAN_BINDING_DEADLINE:
		return "the deadline: a cheaper plan exists but takes longer";
	case PLAN_BINDING_AVAILABILITY:
		return "availability: the offering's node limit is used up";
	case PLAN_BINDING_MAX_GPUS:
		return "--max-gpus: a larger cluster would be faster";
	case PLAN_BINDING_BATCH:
		return "the global batch: no more data parallelism without a larger batch";
	case PLAN_BINDING_MEMORY:
		return obj == PLAN_OBJECTIVE_TIME
			       ? "memory: a faster configuration of this size does not fit"
			       : "memory: fewer nodes do not fit the model";
	case PLAN_BINDING_NONE:
		break;
	}
	return obj == PLAN_OBJECTIVE_TIME ? "nothing: the fastest plan on the offerings considered"
					  : "nothing: the cheapest plan on the offerings considered";
}

/* What bounds c's node count, as a phrase after its kind (price_limit_str),
 * naming the product and its source, or gpuplan's policy as policy:
 * "one AWS EC2 Capacity Block holds at most 64 aws p5.48xlarge nodes
 * (aws-capacity-blocks-pricing)". */
static const char *limit_text(char *buf, size_t size, const struct plan_candidate *c)
{
	const struct price_offering *of = c->offering;
	const struct price_node_limit *l = &c->limit;
	const char *s = l->nodes == 1 ? "" : "s";

	switch (l->why) {
	case PRICE_LIMIT_NETWORK:
		snprintf(buf, size, "%s %s has no inter_node_gbps figure, so one node",
			 of->provider, of->instance_type);
		break;
	case PRICE_LIMIT_UNSTATED:
		snprintf(buf, size, "no source states how many %s %s nodes %s sells as one%s, and "
			 "gpuplan has no policy for it, so one node", of->provider,
			 of->instance_type, of->provider, c->spot ? " on spot" : "");
		break;
	case PRICE_LIMIT_CAPACITY:
		snprintf(buf, size, "%s sells %s %s as at most %d node%s (%s)", of->provider,
			 of->instance_type, price_purchase_str(c->purchase), l->nodes, s,
			 of->max_nodes > 0 ? "the price row's max_nodes" :
			 of->capacity_source[0] ? of->capacity_source : "capacity.csv");
		break;
	case PRICE_LIMIT_POLICY:
		snprintf(buf, size, "at most %d %s %s node%s %s without a quota: gpuplan policy, as "
			 "%s states no cluster bound for it; a quota replaces the policy (gpuplan "
			 "quotas update)", l->nodes, of->provider, of->instance_type, s,
			 price_purchase_str(c->purchase), of->provider);
		break;
	case PRICE_LIMIT_SPOT:
		snprintf(buf, size, "at most %d %s %s node%s on spot: gpuplan policy, as no provider "
			 "guarantees spot capacity", l->nodes, of->provider, of->instance_type, s);
		break;
	case PRICE_LIMIT_QUOTA:
		snprintf(buf, size, "your quota of %d %s in %s %s", l->quota_gpus, of->gpu,
			 of->provider, of->region);
		break;
	case PRICE_LIMIT_BLOCK:
		snprintf(buf, size, "one %s holds at most %d %s %s node%s (%s)",
			 price_block_product(c->block), l->nodes, of->provider, of->instance_type, s,
			 c->block ? c->block->source : "blocks.csv");
		break;
	case PRICE_LIMIT_NONE:
		snprintf(buf, size, "nothing");
		break;
	}
	return buf;
}

/* The framework line of an answer with offload: what runs it, with the
 * flag or stage that does, and why DeepSpeed where none was named. */
static void print_offload_framework(const struct plan_opts *o, const struct sim_parallel *q)
{
	int nvme = q->ft.offload == SIM_OFFLOAD_NVME;

	if (o->filter.framework == PLAN_FRAMEWORK_MEGATRON) {
		printf("framework: Megatron-LM, the optimizer in host memory (--optimizer-cpu-offload "
		       "with the distributed optimizer), priced as it runs the layout\n");
		return;
	}
	printf("framework: DeepSpeed ZeRO-%d, the optimizer%s %s (%s), priced as it runs the "
	       "layout%s\n", q->zero, q->zero == 3 ? " and weights" : "",
	       nvme ? "on NVMe" : "in host memory", nvme ? "ZeRO-Infinity" : "ZeRO-Offload",
	       o->filter.framework_stated ? ""
					  : "; Megatron-LM fits no layout here: it offloads only "
					    "the optimizer, to host memory, with ZeRO-1");
}

/* "second", "minute", "hour", "day", "week", else a duration. */
static const char *billing_unit(char *buf, size_t size, double s)
{
	static const struct { double s; const char *name; } units[] = {
		{ 1, "second" }, { 60, "minute" }, { 3600, "hour" }, { 86400, "day" },
		{ 7 * 86400, "week" },
	};

	for (size_t i = 0; i < GP_ARRAY_LEN(units); i++)
		if (s == units[i].s)
			return units[i].name;
	return unit_fmt_duration(buf, size, s);
}

static void pct(char *buf, size_t size, double v, double base)
{
	if (isfinite(v) && base > 0)
		snprintf(buf, size, "%+.1f%%", 100.0 * (v / base - 1));
	else
		snprintf(buf, size, "n/a");
}

/* The offering of row, with the regions folded into it:
 * "aws p5.48xlarge us-east-1 on-demand +3 regions". */
static const char *row_offering(char *buf, size_t size, const struct plan_row *row)
{
	size_t n;

	plan_cli_offering(buf, size, &row->c);
	if (row->folded_regions > 0 && (n = strlen(buf)) < size)
		snprintf(buf + n, size - n, " +%d region%s", row->folded_regions,
			 row->folded_regions == 1 ? "" : "s");
	return buf;
}

static void print_table(const struct plan_result *r, const struct plan_job *jobs, size_t n_jobs)
{
	char off[256], gpus[48], par[64], mb[32], mem[48], st[32], tps[32], tt[32], cost[32],
		rate[32], intr[32], eff[16];
	const char *loss;
	int w = 8, wl = 12;

	for (size_t i = 0; i < r->n_rows; i++) {
		int n = (int)strlen(row_offering(off, sizeof(off), &r->rows[i]));
		int nl = (int)strlen(plan_cli_layout(par, sizeof(par), &r->rows[i].c.par));

		if (n > w)
			w = n;
		if (nl > wl)
			wl = nl;
	}
	/* INTR and EFF as frontier and compare show them: the interruptions
	 * each row expects over its TIME and the effective training time */
	printf("%-3s %s%-*s  %-12s %-*s %-9s %-4s %-4s %-13s %-8s %-8s %-5s %-8s %-12s %-9s %-7s "
	       "%-7s %s\n", "#", n_jobs > 1 ? "JOB          " : "", w, "OFFERING", "GPUS", wl,
	       "TP/PP/DP/CP", "MBSxACC", "ZERO", "RCMP", "MEM/GPU", "STEP", "TOK/S", "MFU", "TIME",
	       "COST", "USD/H", "INTR", "EFF", "LARGEST LOSS");
	for (size_t i = 0; i < r->n_rows; i++) {
		const struct plan_row *row = &r->rows[i];
		const struct plan_candidate *c = &row->c;
		double lf = plan_largest_loss(&c->res, &loss);
		char rank[16], job[32] = "";

		snprintf(rank, sizeof(rank), "%d%s", row->rank,
			 row->fraction < 1 ? (row->phase == 1 ? "a" : "b") : "");
		if (n_jobs > 1)
			snprintf(job, sizeof(job), "%-12.12s ", jobs[row->job].name);
		snprintf(gpus, sizeof(gpus), "%dx%d=%d", c->nodes, c->cluster.gpus_per_node,
			 c->nodes * c->cluster.gpus_per_node);
		plan_cli_layout(par, sizeof(par), &c->par);
		snprintf(mb, sizeof(mb), "%dx%d", c->par.mbs, c->res.grad_accum);
		snprintf(mem, sizeof(mem), "%.0f/%.0f GB", c->res.memory.total / UNIT_GB,
			 c->res.memory.capacity / UNIT_GB);
		unit_fmt_duration(st, sizeof(st), c->res.step_time_s);
		unit_fmt_count(tps, sizeof(tps), c->res.tokens_per_s);
		unit_fmt_duration(tt, sizeof(tt), c->time_s * row->fraction);
		unit_fmt_usd(cost, sizeof(cost), c->cost_usd * row->fraction);
		unit_fmt_usd(rate, sizeof(rate), c->usd_per_hour);
		cli_fmt_expected(intr, sizeof(intr), c->interrupt.expected * row->fraction);
		cli_fmt_effective(eff, sizeof(eff), c->interrupt.waste);
		printf("%-3s %s%-*s  %-12s %-*s %-9s %-4d %-4s %-13s %-8s %-8s %-5.1f %-8s %-12s %-9s "
		       "%-7s %-7s %s %.0f%%\n", rank, job, w, row_offering(off, sizeof(off), row), gpus,
		       wl, par, mb, c->par.zero, plan_cli_recompute(c->par.recompute), mem, st, tps,
		       100.0 * c->res.mfu, tt, cost, rate, intr, eff, loss, 100.0 * lf);
	}
}

/* The regions folded into row (plan_same_offering), as ", "-separated names. */
static const char *folded_list(char *buf, size_t size, const struct plan_row *row,
			       const struct price_catalog *cat, const struct plan_opts *o)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < cat->n_offers && n < size; i++)
		if (plan_same_offering(&row->c, &cat->offers[i], o)) {
			snprintf(buf + n, size - n, "%s%s", n ? ", " : "", cat->offers[i].region);
			n = strlen(buf);
		}
	return buf;
}

/* The best alternative that is another choice: another GPU or another
 * purchase option than the answer's main row; NULL none shown. */
static const struct plan_row *runner_up(const struct plan_result *r)
{
	const struct plan_candidate *a = &r->rows[0].c;

	for (size_t i = r->n_answer_rows; i < r->n_rows; i++) {
		const struct plan_candidate *c = &r->rows[i].c;

		if (strcmp(c->offering->gpu, a->offering->gpu) != 0 || c->purchase != a->purchase ||
		    (c->purchase == PRICE_PURCHASE_BLOCK && c->block && a->block &&
		     strcmp(price_block_kind(c->block), price_block_kind(a->block)) != 0))
			return &r->rows[i];
	}
	return NULL;
}

static void print_explanation(const struct plan_result *r, const struct plan_job *jobs,
			      size_t n_jobs, const struct plan_cli *pc,
			      const struct price_catalog *cat,
			      const struct plan_published_table *pub)
{
	const struct plan_row *best = &r->rows[0];
	const struct plan_opts *o = &r->opts;
	char a[32], b[32], c[32], d[32], off[1024];

	printf("\nanswer: %s in %s for %s (%s/h)%s\n", n_jobs > 1 ? "all jobs" : jobs[0].name,
	       unit_fmt_duration(a, sizeof(a), r->makespan_s),
	       unit_fmt_usd(b, sizeof(b), r->total_cost_usd),
	       unit_fmt_usd(c, sizeof(c), r->total_usd_per_hour),
	       r->optimal ? "" : " (solver time limit: feasible, not proven optimal)");
	if (r->binding == PLAN_BINDING_AVAILABILITY)
		printf("binding: %s: %s\n", price_limit_str(best->c.limit.why),
		       limit_text(off, sizeof(off), &best->c));
	else
		printf("binding: %s\n", binding_text(r->binding, r->objective));
	for (size_t i = 0; i < r->n_answer_rows; i++)
		if (r->rows[i].fraction < 1)
			printf("phase %d of %s: %.1f%% of the tokens on %s\n", r->rows[i].phase,
			       jobs[r->rows[i].job].name, 100.0 * r->rows[i].fraction,
			       plan_cli_offering(off, sizeof(off), &r->rows[i].c));
	{
		double up = 0;

		for (size_t i = 0; i < r->n_answer_rows; i++)
			up += r->rows[i].c.upfront_usd * r->rows[i].fraction;
		if (up > 0)
			printf("up front: %s, paid when the %s is bought%s\n",
			       unit_fmt_usd(a, sizeof(a), up), price_block_product(best->c.block),
			       o->monthly_budget ? " (--monthly-budget counts it whole in that month)"
						 : "");
	}
	if (best->folded_regions > 0)
		printf("regions: the same at the same price in %s (folded into row 1)\n",
		       folded_list(off, sizeof(off), best, cat, o));
	if (n_jobs == 1) {
		const struct plan_row *ru = runner_up(r);

		if (ru)
			printf("runner-up: %s, %d GPUs: %s for %s (another %s)\n",
			       plan_cli_offering(off, sizeof(off), &ru->c),
			       ru->c.nodes * ru->c.cluster.gpus_per_node,
			       unit_fmt_duration(a, sizeof(a), ru->c.time_s * ru->fraction),
			       unit_fmt_usd(b, sizeof(b), ru->c.cost_usd * ru->fraction),
			       strcmp(ru->c.offering->gpu, best->c.offering->gpu) != 0
				       ? "GPU" : "purchase option");
		else
			printf("runner-up: none (no plan shown differs in GPU or purchase option; "
			       "--top shows more)\n");
	}
	/* an answer neither Megatron-LM nor DeepSpeed runs (plan_framework_max_zero)
	 * says so here, before export has to turn it into ZeRO-1 */
	for (size_t i = 0; o->filter.framework == PLAN_FRAMEWORK_ANY && i < r->n_answer_rows; i++) {
		const struct sim_parallel *q = &r->rows[i].c.par;

		if (q->zero > plan_framework_max_zero(PLAN_FRAMEWORK_MEGATRON,
						      &jobs[r->rows[i].job].model, q->pp)) {
			printf("frameworks: ZeRO-%d with pipeline parallelism (pp %d) runs under gpuplan "
			       "execute, not Megatron-LM or DeepSpeed; --framework megatron or "
			       "deepspeed plans layouts they run\n", q->zero, q->pp);
			break;
		}
	}
	if (jobs[0].ft.method == SIM_FT_LORA || jobs[0].ft.method == SIM_FT_QLORA)
		printf("framework: TRL with PEFT, Accelerate starting data parallelism with "
		       "DeepSpeed's ZeRO (export --format trl)\n");
	else if (o->filter.framework != PLAN_FRAMEWORK_ANY && r->n_answer_rows > 0 &&
		 r->rows[0].c.par.ft.offload != SIM_OFFLOAD_NONE)
		print_offload_framework(o, &r->rows[0].c.par);
	else if (o->filter.framework != PLAN_FRAMEWORK_ANY)
		printf("framework: %s, priced as it runs the layout (--framework %s or any to "
		       "plan for another)\n", plan_framework_title(o->filter.framework),
		       o->filter.framework == PLAN_FRAMEWORK_MEGATRON ? "deepspeed" : "megatron");
	for (size_t i = 0; i < r->n_answer_rows; i++) {
		const struct plan_candidate *s = &r->rows[i].c;
		const struct plan_cost_parts *k = &s->costs;
		const struct price_offering *of = s->offering;
		double extra = (k->startup_s + k->billed_extra_s) / 3600.0 * s->usd_per_hour;
		char inc[128], e[32], tag[PRICE_NAME_MAX + 16];

		printf("capacity%s: %d of at most %d node%s: %s\n",
		       plan_cli_row_tag(tag, sizeof(tag), r, &r->rows[i], jobs),
		       s->nodes, s->limit.nodes, s->limit.nodes == 1 ? "" : "s",
		       limit_text(off, sizeof(off), s));
		if (s->billed_nodes > s->nodes)
			printf("units: %s rents %s %s in whole units of %d nodes (%s): the plan "
			       "runs on %d and pays for %d\n", of->provider, of->instance_type,
			       of->region, s->limit.multiple,
			       of->capacity_source[0] ? of->capacity_source : "capacity.csv",
			       s->nodes, s->billed_nodes);
		if (s->purchase == PRICE_PURCHASE_OWNED)
			snprintf(inc, sizeof(inc), "owned, not billed");
		else if (s->purchase == PRICE_PURCHASE_BLOCK)
			snprintf(inc, sizeof(inc), "bought as %s, paid %s in whole days",
				 price_block_product(s->block),
				 s->block && s->block->payment == PRICE_PAYMENT_MONTHLY
					 ? "monthly" : "up front");
		else if (of->billing_increment_s > 0)
			snprintf(inc, sizeof(inc), "billed per %s%s%s",
				 billing_unit(a, sizeof(a), of->billing_increment_s),
				 of->min_billing_s > 0 ? ", minimum " : "",
				 of->min_billing_s > 0 ? unit_fmt_duration(b, sizeof(b), of->min_billing_s)
						       : "");
		else
			snprintf(inc, sizeof(inc), "billing unit not stated: billed as run");
		if (k->provision_s > 0)
			unit_fmt_duration(c, sizeof(c), k->provision_s);
		else
			snprintf(c, sizeof(c), "not stated");
		printf("overheads%s: provisioning %s, start-up %s (--startup, assumed), %s: "
		       "+%.1f%% time, %s, included\n", tag,
		       c, unit_fmt_duration(d, sizeof(d), k->startup_s), inc,
		       100.0 * (k->provision_s + k->startup_s) / fmax(s->time_s, 1e-9),
		       unit_fmt_usd(e, sizeof(e), extra));
	}
	for (size_t i = 0; i < r->n_answer_rows; i++) {
		const struct plan_row *row = &r->rows[i];
		struct sim_plan sp;

		plan_row_to_sim_plan(row, &jobs[row->job], &sp);
		plan_cli_print_layout(&sp, pub);
		ft_cli_print(&sp);
		ft_cli_print_memory(&sp);
	}
	{
		const struct plan_candidate *cs[8];
		size_t k = 0;

		for (size_t i = 0; i < r->n_answer_rows && k < GP_ARRAY_LEN(cs); i++)
			cs[k++] = &r->rows[i].c;
		plan_cli_print_price_ages(pc, cs, k);
	}
	{
		double t = best->c.time_s * best->fraction, k = best->c.cost_usd * best->fraction;
		char p1[16], p2[16];

		pct(p1, sizeof(p1), best->sens_bw_time_s, t);
		pct(p2, sizeof(p2), best->sens_flops_time_s, t);
		printf("sensitivity (row 1%s, %.0f%% lower): inter-node bandwidth -> %s (%s), %s; "
		       "achieved FLOP/s -> %s (%s), %s\n",
		       r->n_answer_rows > 1 ? (n_jobs > 1 ? ", first job" : "a") : "",
		       100.0 * (1 - o->sensitivity),
		       unit_fmt_duration(a, sizeof(a), best->sens_bw_time_s), p1,
		       unit_fmt_usd(b, sizeof(b), best->sens_bw_cost_usd),
		       unit_fmt_duration(c, sizeof(c), best->sens_flops_time_s), p2,
		       unit_fmt_usd(d, sizeof(d), best->sens_flops_cost_usd));
		(void)k;
	}
	if (best->replay_step_s > 0)
		printf("schedule replay (event-driven): step %s vs analytic %s\n",
		       unit_fmt_duration(a, sizeof(a), best->replay_step_s),
		       unit_fmt_duration(b, sizeof(b), best->c.res.step_time_s));
	printf("search: %zu offerings (%zu machines), %zu configurations enumerated, %zu simulated "
	       "(%s/s), %zu fit, %zu frontier columns; MILP %zu solves in %.3f s; total %.2f s\n",
	       r->stats.offerings, r->stats.machines, r->stats.enumerated, r->stats.simulated,
	       unit_fmt_count(a, sizeof(a), r->stats.enumerate_s > 0
					    ? r->stats.simulated / r->stats.enumerate_s : 0.0),
	       r->stats.fit, r->stats.frontier, r->stats.milp_solves, r->stats.milp_s,
	       r->stats.total_s);
}

static void print_nearest(const struct plan_result *r)
{
	const struct plan_nearest *n = &r->nearest;
	char a[32], b[32];

	/* the reason itself is stderr's error line */
	printf("nearest feasible answers:\n");
	if (n->cheapest_cost_usd >= 0)
		printf("  cheapest plan costs      %s (a budget of at least this)\n",
		       unit_fmt_usd(a, sizeof(a), n->cheapest_cost_usd));
	if (n->fastest_time_s >= 0)
		printf("  fastest plan takes       %s (a deadline of at least this)\n",
		       unit_fmt_duration(a, sizeof(a), n->fastest_time_s));
	if (n->lowest_usd_per_hour >= 0)
		printf("  cheapest cluster rate    %s/h (an hourly budget of at least this)\n",
		       unit_fmt_usd(a, sizeof(a), n->lowest_usd_per_hour));
	/* only where every plan was refused for its duration: else the
	 * lines above say what is nearest */
	if (n->have_over_max && n->fastest_time_s < 0) {
		const struct plan_candidate *c = &n->over_max;
		const struct plan_opts *o = &r->opts;
		int spot = c->spot && !(o->max_duration_s > 0 && c->time_s > o->max_duration_s);
		double lim = spot ? o->max_spot_duration_s : o->max_duration_s;
		int gpn = c->cluster.gpus_per_node > 0 ? c->cluster.gpus_per_node : 1;
		int gpus = c->nodes * gpn;
		/* GPU-hours stay (at best) the same on more GPUs: scaling out
		 * is never better than linear, so this many at least */
		long need = (long)ceil(gpus * c->time_s / lim / gpn) * gpn;
		char off[256], why[1024];

		printf("  fastest plan             %s on %d %s, %s: %s; bound: %s\n",
		       unit_fmt_duration(a, sizeof(a), c->time_s), gpus, c->offering->gpu,
		       unit_fmt_usd(b, sizeof(b), c->cost_usd), plan_cli_offering(off, sizeof(off), c),
		       limit_text(why, sizeof(why), c));
		const struct price_block *unpriced =
			price_block_find_unpriced(o->blocks, c->offering);

		/* the product that would sell it as a cluster, where the data
		 * names one no source prices: that, not a vague "more GPUs" */
		if (c->limit.why == PRICE_LIMIT_NETWORK && unpriced)
			printf("  what would make it fit   %s, which sells %s %s as a cluster (%s): "
			       "no source read gives its price (blocks.csv) or its nodes' network "
			       "(prices.csv inter_node_gbps), so it is not planned; or "
			       "--max-duration %s\n", price_block_product(unpriced),
			       c->offering->provider, c->offering->instance_type, unpriced->source,
			       unit_fmt_duration(a, sizeof(a), c->time_s));
		else if (c->limit.why == PRICE_LIMIT_NETWORK)
			printf("  what would make it fit   a product with a cluster network for %s "
			       "(%s %s is one node); or --max-duration %s\n", c->offering->gpu,
			       c->offering->provider, c->offering->instance_type,
			       unit_fmt_duration(a, sizeof(a), c->time_s));
		else if (spot)
			printf("  what would make it fit   the same nodes on demand or reserved, or "
			       "--max-spot-duration %s\n", unit_fmt_duration(a, sizeof(a), c->time_s));
		else
			printf("  what would make it fit   at least %ld %s GPUs to finish within %s, "
			       "about %s at this plan's rate%s: a quota for them (gpuplan quotas "
			       "update) or a reservation by request (capacity and lead time not "
			       "published); or --max-duration %s\n", need, c->offering->gpu,
			       unit_fmt_duration(b, sizeof(b), lim),
			       unit_fmt_usd(off, sizeof(off), c->cost_usd),
			       o->budget_usd >= 0 && c->cost_usd > o->budget_usd
				       ? ", so also a larger --budget" : "",
			       unit_fmt_duration(a, sizeof(a), c->time_s));
	}
	if (n->smallest_fit_memory_bytes >= 0)
		printf("  smallest GPU that fits   %.0f GB\n", n->smallest_fit_memory_bytes / UNIT_GB);
	else if (n->smallest_host_need_bytes > 0 && n->smallest_need_bytes <= n->largest_gpu_bytes)
		printf("  host memory that fits    %s a node: the most frugal configuration that fits "
		       "the GPUs with offload needs it, the host has %s; state more (--host "
		       "memory=, or nvme= for ZeRO-Infinity), or allow more GPUs\n",
		       unit_fmt_bytes(b, sizeof(b), n->smallest_host_need_bytes),
		       unit_fmt_bytes(a, sizeof(a), n->host_capacity_bytes));
	else if (n->smallest_need_bytes >= 0 && n->all_one_node_network && n->one_node_example) {
		const struct price_offering *of = n->one_node_example;
		const struct price_block *u = price_block_find_unpriced(r->opts.blocks, of);

		/* not "more GPUs": no source lets the model span nodes here */
		printf("  smallest GPU that fits   none on one node: the most frugal configuration "
		       "needs %s per GPU (largest considered %.0f GB)\n",
		       unit_fmt_bytes(b, sizeof(b), n->smallest_need_bytes),
		       n->largest_gpu_bytes / UNIT_GB);
		if (u)
			printf("  what would make it fit   %s, which sells %s %s as a cluster (%s): no "
			       "source read gives its price (blocks.csv) or its nodes' network "
			       "(prices.csv inter_node_gbps), so it is not planned\n",
			       price_block_product(u), of->provider, of->instance_type, u->source);
		else
			printf("  what would make it fit   a cluster network figure: every offering "
			       "considered is one node, as none states its inter-node bandwidth "
			       "(prices.csv inter_node_gbps; e.g. %s %s)\n", of->provider,
			       of->instance_type);
	} else if (n->smallest_need_bytes >= 0)
		printf("  smallest GPU that fits   none: the most frugal configuration needs %s per GPU"
		       " (largest considered %.0f GB); allow more GPUs or another model\n",
		       unit_fmt_bytes(b, sizeof(b), n->smallest_need_bytes),
		       n->largest_gpu_bytes / UNIT_GB);
}

/* Where nothing fits in GPU memory and offload was to be searched: the
 * machines it was not searched on for want of host figures, and how to
 * state them. */
static void print_offload_hint(const struct plan_result *r, const struct plan_cli *pc,
			       const struct plan_cli_data *d)
{
	const struct plan_filter *f = &pc->opts.filter;
	const struct price_gpu *want = f->gpu[0] ? price_gpu_find(&d->cat, f->gpu) : NULL;
	int owned = 0;
	size_t none = 0, stated = 0;

	if (r->nearest.smallest_fit_memory_bytes >= 0 || f->offload == SIM_OFFLOAD_NONE)
		return;
	/* nor is a model with experts offloaded (sim_check refuses it) */
	for (size_t j = 0; j < d->n_jobs && d->jobs[j].model.experts > 0; j++)
		if (j + 1 == d->n_jobs)
			return;
	for (size_t i = 0; i < d->cat.n_offers; i++) {
		const struct price_offering *of = &d->cat.offers[i];

		if (want && price_gpu_find(&d->cat, of->gpu) != want)
			continue;
		if (of->host.memory_bytes > 0 && of->host.cpu_cores > 0) {
			stated++;
			continue;
		}
		none++;
		owned |= of->owned;
	}
	if (!none)
		return;
	/* where --host (or hosts.csv) stated some, offload was searched
	 * there: say so, and which were left out */
	if (stated)
		printf("  offload                  searched on the %zu offering%s whose host is stated "
		       "(--host, hosts.csv), not on %zu other%s: no host memory and CPU cores "
		       "stated%s\n", stated, stated == 1 ? "" : "s", none, none == 1 ? "" : "s",
		       owned ? "; state your machine's with --host memory=512G,cores=32" : "");
	else
		printf("  offload                  not searched on %zu offering%s: no host memory and "
		       "CPU cores stated (hardware.csv, hosts.csv)%s\n", none, none == 1 ? "" : "s",
		       owned ? "; state your machine's with --host memory=512G,cores=32" : "");
}

/* 1 when a plan that fitted nothing under the default framework,
 * Megatron-LM, is tried again under DeepSpeed: full fine-tuning, offload
 * searched (a host was stated) and nothing fitting, no --framework given. */
static int moves_to_deepspeed(const struct plan_result *r, const struct plan_opts *o,
			      const struct plan_job *jobs, size_t n_jobs)
{
	const struct plan_filter *f = &o->filter;

	if (f->framework_stated || f->framework != PLAN_FRAMEWORK_MEGATRON ||
	    f->offload == SIM_OFFLOAD_NONE || r->nearest.smallest_fit_memory_bytes >= 0 ||
	    !r->nearest.offload_searched)
		return 0;
	for (size_t j = 0; j < n_jobs; j++)
		if (jobs[j].ft.method != SIM_FT_FULL || jobs[j].model.experts > 0)
			return 0;
	return 1;
}

/* The plan file of job j: path itself for one job, else path with the
 * job's name before the extension. */
static void job_plan_path(char *buf, size_t size, const char *path, const struct plan_job *j,
			  size_t n_jobs)
{
	const char *dot = strrchr(path, '.');

	if (n_jobs == 1)
		snprintf(buf, size, "%s", path);
	else if (dot && !strchr(dot, '/'))
		snprintf(buf, size, "%.*s-%s%s", (int)(dot - path), path, j->name, dot);
	else
		snprintf(buf, size, "%s-%s", path, j->name);
}

static enum rc write_plans(const struct plan_result *r, const struct plan_job *jobs,
			   size_t n_jobs, const char *path, const struct price_catalog *cat,
			   enum plan_framework fw)
{
	for (size_t j = 0; j < n_jobs; j++) {
		const struct plan_row *main = NULL;
		struct sim_plan sp;
		char file[4096];
		enum rc rc;

		for (size_t i = 0; i < r->n_answer_rows; i++)
			if (r->rows[i].job == (int)j && (!main || r->rows[i].fraction > main->fraction))
				main = &r->rows[i];
		if (!main)
			continue;
		job_plan_path(file, sizeof(file), path, &jobs[j], n_jobs);
		plan_row_to_sim_plan(main, &jobs[j], &sp);
		plan_interrupts_to_sim(&main->c, main->fraction, &r->opts, &sp.interrupts);
		gp_strlcpy(sp.command, cli_command_line(), sizeof(sp.command));
		gp_strlcpy(sp.catalog_digest, cat->digest, sizeof(sp.catalog_digest));
		sp.framework = sp.par.ft.method == SIM_FT_LORA || sp.par.ft.method == SIM_FT_QLORA ? 3
			       : fw == PLAN_FRAMEWORK_MEGATRON ? 1 : fw == PLAN_FRAMEWORK_DEEPSPEED ? 2 : 0;
		rc = sim_plan_write(file, &sp);
		if (rc != RC_OK)
			return rc;
		fflush(stdout);
		gp_info("plan written to %s", file);
	}
	return RC_OK;
}

enum rc cmd_plan(int argc, char **argv)
{
	static const struct option longopts[] = {
		PLAN_CLI_OPTIONS,
		{ "budget", required_argument, NULL, OPT_BUDGET },
		{ "hourly-budget", required_argument, NULL, OPT_HOURLY },
		{ "monthly-budget", required_argument, NULL, OPT_MONTHLY },
		{ "deadline", required_argument, NULL, OPT_DEADLINE },
		{ "objective", required_argument, NULL, OPT_OBJECTIVE },
		{ "phases", required_argument, NULL, OPT_PHASES },
		{ "switch-time", required_argument, NULL, OPT_SWITCH },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "dump-lp", required_argument, NULL, OPT_DUMP_LP },
		{ "milp-time-limit", required_argument, NULL, OPT_TIME_LIMIT },
		{ "sensitivity", required_argument, NULL, OPT_SENS },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct plan_cli pc;
	struct plan_cli_data d;
	struct plan_result res;
	struct plan_opts *o;
	const char *out_path = "plan.json";
	double monthly = -1, hourly = -1;
	enum rc rc = RC_OK;
	int c;

	plan_cli_init(&pc);
	o = &pc.opts;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
		if (plan_cli_flag(&pc, c, optarg, &rc)) {
			if (rc != RC_OK)
				return rc;
			continue;
		}
		switch (c) {
		case OPT_BUDGET: rc = cli_parse_usd("--budget", optarg, &o->budget_usd); break;
		case OPT_HOURLY: rc = cli_parse_usd("--hourly-budget", optarg, &hourly); break;
		case OPT_MONTHLY: rc = cli_parse_usd("--monthly-budget", optarg, &monthly); break;
		case OPT_DEADLINE:
			rc = cli_parse_duration("--deadline", optarg, &o->deadline_s);
			if (rc == RC_OK && !(o->deadline_s > 0)) {
				gp_error("--deadline: expected a duration > 0, found '%s'", optarg);
				rc = RC_USAGE;
			}
			break;
		case OPT_OBJECTIVE:
			if (plan_objective_parse(optarg, &o->objective) != RC_OK) {
				gp_error("--objective: expected time or cost, found '%s'", optarg);
				rc = RC_USAGE;
			}
			break;
		case OPT_PHASES: rc = cli_parse_int("--phases", optarg, 1, 2, &o->phases); break;
		case OPT_SWITCH: rc = cli_parse_duration("--switch-time", optarg, &o->switch_s); break;
		case OPT_TOP: rc = cli_parse_int("--top", optarg, 1, 100, &o->top); break;
		case OPT_DUMP_LP: o->dump_lp_path = optarg; break;
		case OPT_TIME_LIMIT:
			rc = cli_parse_duration("--milp-time-limit", optarg, &o->milp_time_limit_s);
			if (rc == RC_OK && !(o->milp_time_limit_s > 0)) {
				gp_error("--milp-time-limit: expected a duration > 0, found '%s'", optarg);
				rc = RC_USAGE;
			}
			break;
		case OPT_SENS:
			rc = cli_parse_double("--sensitivity", optarg, 0, 1, &o->sensitivity);
			if (rc == RC_OK && !(o->sensitivity > 0 && o->sensitivity <= 1)) {
				gp_error("--sensitivity: expected a factor in (0, 1], found '%s'", optarg);
				rc = RC_USAGE;
			}
			break;
		case 'o': out_path = optarg; break;
		case 'q': gp_log_quiet(1); break;
		case 'h': help(); return RC_OK;
		default: return cli_bad_option("plan", optopt, argv[optind - 1]);
		}
		if (rc != RC_OK)
			return rc;
	}
	if (optind < argc) {
		gp_error("plan: expected options only, found '%s'", argv[optind]);
		return RC_USAGE;
	}
	if (hourly >= 0 && monthly >= 0) {
		gp_error("--hourly-budget/--monthly-budget: expected one of them, found both");
		return RC_USAGE;
	}
	/* A monthly cap is a rate: 730 hours a month. */
	o->hourly_budget_usd = monthly >= 0 ? monthly / UNIT_HOURS_PER_MONTH : hourly;
	o->monthly_budget = monthly >= 0;
	if (!out_path[0]) {
		gp_error("--output: expected a file name, found ''");
		return RC_USAGE;
	}
	rc = plan_cli_load(&pc, "plan", &d);
	if (rc != RC_OK)
		return rc;
	{
		struct gp_progress *prog = gp_progress_start("plan: searching and solving", 0);

		rc = plan_run(d.jobs, d.n_jobs, &d.cat, o, &res);
		/* A full fine-tune that Megatron-LM fits nowhere, not even with
		 * its optimizer in host memory, is planned for DeepSpeed, whose
		 * ZeRO-3 offloads to host memory and NVMe (plan_framework_
		 * runs_offload), unless --framework named one. */
		if (rc == RC_INFEASIBLE && moves_to_deepspeed(&res, o, d.jobs, d.n_jobs)) {
			plan_result_release(&res);
			o->filter.framework = PLAN_FRAMEWORK_DEEPSPEED;
			rc = plan_run(d.jobs, d.n_jobs, &d.cat, o, &res);
		}
		gp_progress_done(prog);
	}
	if (rc == RC_OK || rc == RC_INFEASIBLE) {
		if (pc.json) {
			char *s = plan_result_to_json(&res, d.jobs, d.n_jobs);

			printf("%s\n", s);
			free(s);
		} else if (rc == RC_OK) {
			char tok[32], a[32];

			double tokens = 0;

			for (size_t j = 0; j < d.n_jobs; j++)
				tokens += d.jobs[j].tokens;
			if (d.n_jobs > 1)
				printf("gpuplan plan: %zu jobs, %s tokens in all, objective: least %s%s",
				       d.n_jobs, unit_fmt_count(tok, sizeof(tok), tokens),
				       plan_objective_str(res.objective),
				       res.objective == PLAN_OBJECTIVE_TIME ? " (priority-weighted)" : "");
			else
				printf("gpuplan plan: %s, %s tokens, objective: least %s", d.jobs[0].name,
				       unit_fmt_count(tok, sizeof(tok), tokens),
				       plan_objective_str(res.objective));
			if (o->budget_usd >= 0)
				printf(", budget %s", unit_fmt_usd(a, sizeof(a), o->budget_usd));
			if (o->hourly_budget_usd >= 0)
				printf(", %s/h", unit_fmt_usd(a, sizeof(a), o->hourly_budget_usd));
			if (o->deadline_s > 0)
				printf(", deadline %s", unit_fmt_duration(a, sizeof(a), o->deadline_s));
			if (d.jobs[0].ft.method == SIM_FT_LORA || d.jobs[0].ft.method == SIM_FT_QLORA)
				printf(", layouts trl runs");
			else if (o->filter.framework != PLAN_FRAMEWORK_ANY)
				printf(", layouts %s runs", plan_framework_str(o->filter.framework));
			printf("\n\n");
			print_table(&res, d.jobs, d.n_jobs);
			print_explanation(&res, d.jobs, d.n_jobs, &pc, &d.cat, &d.published);
			cost_cli_print_notes(&res, &pc, &d);
		} else {
			print_nearest(&res);
			print_offload_hint(&res, &pc, &d);
		}
	}
	if (rc == RC_OK)
		rc = write_plans(&res, d.jobs, d.n_jobs, out_path, &d.cat, o->filter.framework);
	else if (rc == RC_INFEASIBLE)
		gp_error("plan: no feasible plan: %s", res.why);
	plan_result_release(&res);
	plan_cli_release(&d);
	return rc;
}
