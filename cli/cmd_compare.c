/*
 * cmd_compare.c - `gpuplan compare`: rent or buy, across GPU types, for
 * one training job on a given number of GPUs.  For every GPU it asks the
 * planner (plan_run, the same search `plan` uses, filtered to that GPU and
 * GPU count, least cost) twice: once over the price table's offerings
 * (renting), once over the machine of hardware.csv priced at its owning
 * cost per hour (buying: purchase amortised over its busy hours plus power
 * with the facility's PUE).  It prints time to train, total cost, cost per
 * billion tokens, the cost per GPU-hour of owning with its parts, and the
 * months of use after which buying beats renting, then every assumption
 * with its source; or all of it as JSON (--json, cmd_compare_json.c).  No
 * cost model lives here: pricing/price_cost.c and the planner hold them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_plan.h"
#include "cmd_compare.h"

enum { OPT_GPUS = PCLI_FIRST_FREE, OPT_VS };

#define COMPARE_DEFAULT_GPUS 8

static void help(void)
{
	printf("usage: gpuplan compare --model NAME --tokens N [--gpus N] [--gpu NAME] [options]\n\n"
	       "Rent or buy: for every GPU type with an on-demand offering or a machine in\n"
	       "hardware.csv, the cheapest way to train the job on N GPUs when renting (the\n"
	       "price table) and when buying (hardware.csv at its owning cost per hour), with\n"
	       "time to train, total cost, cost per billion tokens, the owning cost per\n"
	       "GPU-hour with its parts, and the months of use after which buying beats\n"
	       "renting the same GPU.  Assumptions and their sources follow the table.\n"
	       "--json prints all of it as one JSON document (schema gpuplan.compare/1).\n\n"
	       "  --gpus N              GPUs per option (default %d: one 8-GPU machine)\n"
	       "  --vs GPU              also the break-even of each bought option against\n"
	       "                        renting this GPU on as many GPUs (default: the same GPU\n"
	       "                        only), e.g. --gpu RTX4090 --vs H100\n"
	       "  -q, --quiet           no progress or notes on stderr (default off)\n"
	       "  -h, --help            this help\n",
	       COMPARE_DEFAULT_GPUS);
	plan_cli_help(stdout);
	printf("\nexit status: 0 ok, 2 bad usage or input, 3 nothing fits on N GPUs of any type\n");
}

static int by_cost(const void *pa, const void *pb)
{
	const struct compare_entry *a = pa, *b = pb;

	if (a->best_cost != b->best_cost)
		return a->best_cost < b->best_cost ? -1 : 1;
	return strcmp(a->gpu->name, b->gpu->name);
}

/* The least-cost plan of job on exactly n GPUs of gpu over cat.  Returns
 * RC_OK with *out filled, RC_INFEASIBLE, or an error status. */
static enum rc cheapest(const struct plan_job *job, const struct price_catalog *cat,
			const struct plan_opts *base, const struct price_gpu *gpu, int n,
			struct plan_candidate *out)
{
	struct plan_opts o = *base;
	struct plan_result res;
	enum rc rc;

	gp_strlcpy(o.filter.gpu, gpu->name, sizeof(o.filter.gpu));
	o.filter.min_gpus = o.filter.max_gpus = n;
	o.objective = PLAN_OBJECTIVE_COST;
	o.budget_usd = o.hourly_budget_usd = o.deadline_s = -1;
	o.phases = 1;
	o.top = 1;
	o.dump_lp_path = NULL;
	/* The GPU count is the user's: the table says how long that many
	 * take, so neither --max-duration nor the spot policy refuses it. */
	o.max_duration_s = o.max_spot_duration_s = 0;
	rc = plan_run(job, 1, cat, &o, &res);
	if (rc == RC_OK)
		*out = res.rows[0].c;
	plan_result_release(&res);
	return rc;
}

/* Months of use at the assumed utilisation after which the purchase is
 * paid back by what renting would have cost beyond the power: purchase /
 * ((rent - power) per token x tokens per month on the owned machines). */
static double breakeven_months(const struct compare_entry *e, const struct plan_candidate *rent,
			       const struct plan_job *job, const struct price_owned_opts *oo)
{
	double rent_per_tok = rent->costs.compute_usd / job->tokens;
	double power_per_tok = e->oc.power_usd_per_hour * e->machines * e->buy.time_s / 3600.0 /
			       job->tokens;
	double tok_per_month = job->tokens / e->buy.time_s * 3600.0 * UNIT_HOURS_PER_MONTH *
			       oo->utilisation;
	double saving = (rent_per_tok - power_per_tok) * tok_per_month;

	if (!(saving > 0))
		return -1;
	return e->bought.price_usd * e->machines / saving;
}

static enum rc compare_gpu(const struct plan_cli *pc, const struct plan_cli_data *d,
			   const struct plan_opts *base, int n, struct compare_entry *e)
{
	const struct plan_job *job = &d->jobs[0];
	struct plan_opts rent_opts = *base;
	enum rc rc;

	/* Renting reads the products `plan` reads: on-demand, reserved with
	 * --reserved and the reservations of blocks.csv (a capacity block,
	 * a calendar-mode reservation), spot only when the user asks. */
	if (rent_opts.filter.spot < 0)
		rent_opts.filter.spot = 0;
	rc = cheapest(job, &d->cat, &rent_opts, e->gpu, n, &e->rent);
	if (rc != RC_OK && rc != RC_INFEASIBLE)
		return rc;
	e->have_rent = rc == RC_OK;

	e->hw = price_hardware_for_gpu(&d->hardware, e->gpu->name);
	if (e->hw) {
		e->bought = *e->hw;
		/* Cards are sold one by one: fewer than the row lists cost
		 * their share of its price (the host is not priced anyway). */
		if (e->hw->cards_only && n < e->hw->gpus) {
			e->bought.price_usd = e->hw->price_usd * n / e->hw->gpus;
			e->bought.gpus = n;
		}
	}
	if (!e->hw) {
		e->why_no_buy = "no machine in hardware.csv";
	} else if (n % e->bought.gpus) {
		e->why_no_buy = "GPU count not a multiple of the machine's";
	} else if (price_owned_cost(&e->bought, e->gpu, &pc->cost.owned, &e->oc) != 0) {
		e->why_no_buy = "no TDP figure in gpus.csv";
	} else {
		struct price_catalog own;
		struct plan_opts buy_opts = *base;

		/* The owned machines alone, priced at their full owning cost. */
		memset(&own, 0, sizeof(own));
		own.gpus = d->cat.gpus;
		own.n_gpus = d->cat.n_gpus;
		own.gpus_path = d->cat.gpus_path;
		e->machines = n / e->bought.gpus;
		price_catalog_add_owned(&own, &e->bought, e->machines, e->oc.usd_per_hour);
		buy_opts.filter.spot = -1;
		buy_opts.filter.provider[0] = buy_opts.filter.region[0] = '\0';
		buy_opts.commitments = NULL;
		buy_opts.blocks = NULL;
		rc = cheapest(job, &own, &buy_opts, e->gpu, n, &e->buy);
		/* The candidate points into own.offers, about to be freed: keep
		 * a copy (entries move when sorted, so no pointer to it). */
		e->buy_offering = own.offers[0];
		e->buy.offering = NULL;
		free(own.offers);
		if (rc != RC_OK && rc != RC_INFEASIBLE)
			return rc;
		e->have_buy = rc == RC_OK;
		if (!e->have_buy)
			e->why_no_buy = "does not fit on the machine";
	}
	e->breakeven_months = NAN;
	if (e->have_buy && e->have_rent)
		e->breakeven_months = breakeven_months(e, &e->rent, job, &pc->cost.owned);
	e->best_cost = INFINITY;
	if (e->have_rent)
		e->best_cost = e->rent.cost_usd;
	if (e->have_buy && e->buy.cost_usd < e->best_cost)
		e->best_cost = e->buy.cost_usd;
	return RC_OK;
}

static void print_row(const char *gpu, const char *option, const char *where,
		      const struct plan_candidate *c, double tokens, double usd_per_gpu_hour,
		      const char *breakeven)
{
	char t[32], cost[32], per[32], rate[32], eff[16], intr[32];

	snprintf(rate, sizeof(rate), "$%.2f", usd_per_gpu_hour);
	cli_fmt_effective(eff, sizeof(eff), c->interrupt.waste);
	printf("%-16s %-6s %-72s %-9s %-12s %-10s %-9s %-8s ", gpu, option, where,
	       unit_fmt_duration(t, sizeof(t), c->time_s), unit_fmt_usd(cost, sizeof(cost), c->cost_usd),
	       unit_fmt_usd(per, sizeof(per), c->cost_usd / (tokens / 1e9)), rate,
	       cli_fmt_expected(intr, sizeof(intr), c->interrupt.expected));
	if (*breakeven)
		printf("%-7s %s\n", eff, breakeven);
	else
		printf("%s\n", eff);
}

static void print_entry(const struct compare_entry *e, const struct plan_job *job,
			const struct price_owned_opts *oo, const struct plan_opts *o)
{
	char where[512], be[64], a[32];

	if (e->have_rent) {
		const struct price_offering *of = e->rent.offering;

		plan_cli_offering(where, sizeof(where), &e->rent);
		(void)of;
		print_row(e->gpu->name, "rent", where, &e->rent, job->tokens,
			  e->rent.usd_per_hour / (e->rent.nodes * e->rent.cluster.gpus_per_node), "");
	}
	if (e->have_buy) {
		char age[48] = "";
		long days = price_date_age_days(e->bought.price_date, o->today_days);

		/* a purchase price carries its date and age, as a rental does */
		if (o->today_days > 0 && days >= 0)
			snprintf(age, sizeof(age), ", %ld days old%s", days,
				 days > o->max_price_age_days ? ", stale" : "");
		if (e->bought.gpus < e->hw->gpus)
			snprintf(where, sizeof(where), "%d cards of %s (%s, %s%s)", e->bought.gpus,
				 e->bought.name, unit_fmt_usd(a, sizeof(a), e->bought.price_usd),
				 e->bought.price_date, age);
		else
			snprintf(where, sizeof(where), "%d x %s (%s, %s%s)%s", e->machines,
				 e->bought.name, unit_fmt_usd(a, sizeof(a), e->bought.price_usd),
				 e->bought.price_date, age, e->bought.cards_only ? " cards only" : "");
		if (isnan(e->breakeven_months))
			snprintf(be, sizeof(be), "no rental to compare");
		else if (e->breakeven_months < 0)
			snprintf(be, sizeof(be), "never (renting costs less than power)");
		else
			snprintf(be, sizeof(be), "%.1f months%s", e->breakeven_months,
				 e->bought.cards_only ? " (host not priced)" : "");
		print_row(e->have_rent ? "" : e->gpu->name, "buy", where, &e->buy, job->tokens,
			  e->oc.usd_per_gpu_hour, be);
		/* The owning cost per GPU-hour with its parts. */
		printf("%-16s %-6s = $%.3f purchase (%s / (%g y x %.0f h x %.0f%%) / %d GPUs) + $%.3f "
		       "power (%.0f W x PUE %g x $%g/kWh / %d GPUs)\n",
		       "", "", e->oc.capex_usd_per_gpu_hour, unit_fmt_usd(a, sizeof(a), e->bought.price_usd),
		       oo->amortisation_years, PRICE_HOURS_PER_YEAR, 100.0 * oo->utilisation,
		       e->bought.gpus, e->oc.power_usd_per_gpu_hour, e->oc.power_w, oo->pue,
		       oo->usd_per_kwh, e->bought.gpus);
	} else if (e->have_rent) {
		printf("%-16s %-6s %s\n", "", "buy", e->why_no_buy);
	}
}

/* Each bought option against renting vs's GPU: cost of this job on both,
 * and the months after which buying has paid for itself. */
static void print_vs(const struct compare_entry *vs, const struct compare_entry *ents,
		     size_t n_ents, const struct plan_job *job, const struct price_owned_opts *oo)
{
	const struct plan_candidate *r = &vs->rent;
	char a[32], b[32], c[32], d[32];

	printf("\nagainst renting %s (%s %s, %s): %s for %s\n", vs->gpu->name,
	       r->offering->provider, r->offering->instance_type, price_purchase_str(r->purchase),
	       unit_fmt_duration(a, sizeof(a), r->time_s), unit_fmt_usd(b, sizeof(b), r->cost_usd));
	for (size_t i = 0; i < n_ents; i++) {
		const struct compare_entry *e = &ents[i];
		double m;

		if (!e->have_buy)
			continue;
		m = breakeven_months(e, r, job, oo);
		printf("  buy %d x %s: %s for %s (%s of it purchase); ", e->machines * e->bought.gpus,
		       e->gpu->name, unit_fmt_duration(c, sizeof(c), e->buy.time_s),
		       unit_fmt_usd(d, sizeof(d), e->buy.cost_usd),
		       unit_fmt_usd(a, sizeof(a), e->oc.capex_usd_per_hour * e->machines *
				    e->buy.time_s / 3600.0));
		if (m < 0)
			printf("never breaks even (renting costs less than its power)\n");
		else
			printf("breaks even after %.1f months at %.0f%% use%s\n", m, 100 * oo->utilisation,
			       e->bought.cards_only ? " (host not priced)" : "");
	}
}

/* The interruption model's line: its rates, and what the INTR and EFF
 * columns hold (each row's expected interruptions and effective training
 * time, in TIME). */
static void print_interrupts(const struct plan_opts *o, int n)
{
	char a[32];

	printf("  interruptions failures %.3g/GPU-hour x %d GPUs (Llama 3's rate; --failure-rate): "
	       "one every %s", o->failures_per_gpu_hour, n,
	       unit_fmt_duration(a, sizeof(a), o->failures_per_gpu_hour > 0
						? 3600.0 / (o->failures_per_gpu_hour * n) : INFINITY));
	if (o->filter.spot == 1)
		printf(", and spot preemptions %g/node-hour", o->preempt_per_node_hour);
	printf("; INTR expected over a row's TIME, each a restart of %s and the work since the "
	       "last checkpoint redone; EFF the effective training time they and the checkpoints "
	       "leave (in TIME)\n", unit_fmt_duration(a, sizeof(a), o->restart_s));
}

static void print_assumptions(const struct plan_cli *pc, const struct plan_cli_data *d,
			      const struct compare_entry *ents, size_t n_ents, int n)
{
	const struct price_owned_opts *oo = &pc->cost.owned;
	const struct plan_opts *o = &pc->opts;
	char iv[48], r[32];
	int any_cards = 0;

	for (size_t i = 0; i < n_ents; i++)
		any_cards |= ents[i].have_buy && ents[i].bought.cards_only;
	printf("\nassumptions (sources in data/SOURCES.md):\n");
	printf("  throughput   the planner's search and analytic simulator on exactly %d GPUs of each\n"
	       "               type, least cost: rent over %s, buy over the machine alone\n",
	       n, d->cat.user_table ? "data/prices.csv with your rows" : "data/prices.csv");
	printf("  rent         the cheapest %s offering of the price table, or a reservation of "
	       "blocks.csv (capacity blocks, calendar-mode reservations) as plan reads them%s\n",
	       o->filter.spot == 1 ? "spot" : "on-demand",
	       o->commitments ? ", reserved terms from commitments.csv included" : "");
	printf("  buy          the lowest price per GPU in %s; dated vendor or list prices%s\n",
	       pc->cost.hardware_path ? pc->cost.hardware_path : "data/hardware.csv",
	       any_cards ? "; \"cards only\" rows leave the host unpriced, so their costs are lower bounds" : "");
	printf("  amortisation straight line over %g years of which %.0f%% busy: purchase / (%g y x "
	       "8760 h x %.0f%%) per hour of use (--owned amortisation=,utilisation=)\n",
	       oo->amortisation_years, 100.0 * oo->utilisation, oo->amortisation_years,
	       100.0 * oo->utilisation);
	printf("  power        GPUs at TDP (gpus.csv) + host (hardware.csv) x PUE %g x $%g/kWh "
	       "(--owned pue=,usd-per-kwh=); planning defaults, not measurements; idle power not "
	       "charged\n", oo->pue, oo->usd_per_kwh);
	if (o->ckpt_interval_s > 0)
		snprintf(iv, sizeof(iv), "every %s", unit_fmt_duration(r, sizeof(r), o->ckpt_interval_s));
	else
		snprintf(iv, sizeof(iv), o->ckpt_interval_s == 0 ? "none" : "every Young/Daly interval");
	printf("  checkpoints  %g bytes/param, %s (--ckpt-interval), %d kept at $%g/GB-month "
	       "(S3 Standard, first 50 TB)\n", PLAN_CKPT_BYTES_PER_PARAM, iv, o->ckpt_keep,
	       o->storage_usd_per_gb_month);
	print_interrupts(o, n);
	printf("  break-even   months of use at %.0f%% utilisation after which buying beats renting "
	       "the same GPU: purchase / ((rent - power) per token x tokens per month owned)\n",
	       100.0 * oo->utilisation);
	printf("  not included staff, colocation rent, network gear beyond the machine, financing, "
	       "resale value\n");
}

enum rc cmd_compare(int argc, char **argv)
{
	static const struct option longopts[] = {
		PLAN_CLI_OPTIONS,
		{ "gpus", required_argument, NULL, OPT_GPUS },
		{ "vs", required_argument, NULL, OPT_VS },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct plan_cli pc;
	struct plan_cli_data d;
	struct compare_entry *ents = NULL, vs;
	const char *vs_name = NULL;
	size_t n_ents = 0;
	int n = COMPARE_DEFAULT_GPUS, ch;
	enum rc rc = RC_OK;

	plan_cli_init(&pc);
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "hq", longopts, NULL)) != -1) {
		if (plan_cli_flag(&pc, ch, optarg, &rc)) {
			if (rc != RC_OK)
				return rc;
			continue;
		}
		switch (ch) {
		case OPT_GPUS: rc = cli_parse_int("--gpus", optarg, 1, 1 << 20, &n); break;
		case OPT_VS: vs_name = optarg; break;
		case 'q': gp_log_quiet(1); break;
		case 'h': help(); return RC_OK;
		default: return cli_bad_option("compare", optopt, argv[optind - 1]);
		}
		if (rc != RC_OK)
			return rc;
	}
	if (optind < argc) {
		gp_error("compare: expected options only, found '%s'", argv[optind]);
		return RC_USAGE;
	}
	if (pc.jobs_path) {
		gp_error("compare: expected --model and --tokens, found --jobs");
		return RC_USAGE;
	}
	if (pc.cost.n_have) {
		gp_error("compare: expected no --have (compare prices buying; plan --have plans with what you own)");
		return RC_USAGE;
	}
	pc.cost.need_hardware = 1;
	rc = plan_cli_load(&pc, "compare", &d);
	if (rc != RC_OK)
		return rc;
	ents = xcalloc(d.cat.n_gpus ? d.cat.n_gpus : 1, sizeof(*ents));
	for (size_t i = 0; i < d.cat.n_gpus && rc == RC_OK; i++) {
		const struct price_gpu *g = &d.cat.gpus[i];
		struct compare_entry *e = &ents[n_ents];

		if (pc.opts.filter.gpu[0] && price_gpu_find(&d.cat, pc.opts.filter.gpu) != g)
			continue;
		if (!price_gpu_eligible(g, NULL, 0))
			continue;
		/* The slot may hold a GPU type that had no answer. */
		memset(e, 0, sizeof(*e));
		e->gpu = g;
		rc = compare_gpu(&pc, &d, &pc.opts, n, e);
		if (rc == RC_OK && (e->have_rent || e->have_buy))
			n_ents++;
	}
	if (rc == RC_OK && pc.opts.filter.gpu[0] && !price_gpu_find(&d.cat, pc.opts.filter.gpu)) {
		price_gpu_resolve(&d.cat, "--gpu", pc.opts.filter.gpu);
		rc = RC_USAGE;
	}
	if (rc == RC_OK && n_ents == 0) {
		gp_error("compare: %s: no GPU type trains it on %d GPUs (memory or batch)",
			 d.jobs[0].name, n);
		rc = RC_INFEASIBLE;
	}
	/* --vs: the rented plan every bought one is held against */
	memset(&vs, 0, sizeof(vs));
	if (rc == RC_OK && vs_name) {
		vs.gpu = price_gpu_resolve(&d.cat, "--vs", vs_name);
		if (!vs.gpu)
			rc = RC_USAGE;
		else
			rc = compare_gpu(&pc, &d, &pc.opts, n, &vs);
		if (rc == RC_OK && !vs.have_rent) {
			gp_error("--vs: expected a GPU rented on %d GPUs, found no plan of %s that fits",
				 n, vs.gpu->name);
			rc = RC_INFEASIBLE;
		}
	}
	if (rc == RC_OK)
		qsort(ents, n_ents, sizeof(*ents), by_cost);
	if (rc == RC_OK && pc.json) {
		struct compare_report rep = {
			.job = &d.jobs[0], .gpus = n, .ents = ents, .n_ents = n_ents,
			.opts = &pc.opts, .owned = &pc.cost.owned,
			.user_prices = d.cat.user_table, .hardware_path = pc.cost.hardware_path,
		};
		char *js = compare_to_json(&rep);

		printf("%s\n", js);
		free(js);
	} else if (rc == RC_OK) {
		char tok[32];

		printf("gpuplan compare: %s, %s tokens on %d GPUs; cheapest first\n\n", d.jobs[0].name,
		       unit_fmt_count(tok, sizeof(tok), d.jobs[0].tokens), n);
		printf("%-16s %-6s %-72s %-9s %-12s %-10s %-9s %-8s %-7s %s\n", "GPU", "OPTION",
		       "WHERE", "TIME", "COST", "USD/B-TOK", "USD/GPU-H", "INTR", "EFF", "BREAK-EVEN");
		for (size_t i = 0; i < n_ents; i++)
			print_entry(&ents[i], &d.jobs[0], &pc.cost.owned, &pc.opts);
		if (vs.have_rent)
			print_vs(&vs, ents, n_ents, &d.jobs[0], &pc.cost.owned);
		print_assumptions(&pc, &d, ents, n_ents, n);
	}
	free(ents);
	plan_cli_release(&d);
	return rc;
}
