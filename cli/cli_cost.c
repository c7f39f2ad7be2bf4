/*
 * cli_cost.c - the cost-model flags that plan, frontier and compare share:
 * reserved (committed) purchase options and how much of a term a job
 * carries, the hardware the user owns and what owning costs, checkpoint
 * storage; loading commitments.csv and hardware.csv; and the lines that
 * explain an answer's costs beyond its hourly rate.  Front-end code only:
 * the cost models live in pricing/price_cost.c and the planner.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_plan.h"

void cost_cli_init(struct cost_cli *cc)
{
	memset(cc, 0, sizeof(*cc));
	price_owned_opts_init(&cc->owned);
}

/* "16xRTX4090" or "16x RTX4090". */
static enum rc parse_have(const char *arg, struct cost_cli_have *h)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(arg, &end, 10);
	if (end == arg || errno || n < 1 || n > 65536 || (*end != 'x' && *end != 'X')) {
		gp_error("--have: expected COUNTxGPU such as 16xRTX4090, found '%s'", arg);
		return RC_USAGE;
	}
	end++;
	while (*end == ' ')
		end++;
	if (!*end) {
		gp_error("--have: expected a GPU name after the count, found '%s'", arg);
		return RC_USAGE;
	}
	h->count = (int)n;
	h->gpu = end;
	return RC_OK;
}

/* Years: "3", "3y", "3yr"; or a duration ("18w", "540d"). */
static int parse_years(const char *s, double *out)
{
	char *end;
	double v, secs;

	errno = 0;
	v = strtod(s, &end);
	if (end != s && !errno && (!*end || strcmp(end, "y") == 0 || strcmp(end, "yr") == 0)) {
		*out = v;
		return 0;
	}
	if (unit_parse_duration(s, &secs) != RC_OK)
		return -1;
	*out = secs / (PRICE_HOURS_PER_YEAR * 3600.0);
	return 0;
}

/* --owned amortisation=3y,usd-per-kwh=0.15,pue=1.2,utilisation=0.7 */
static enum rc parse_owned(const char *arg, struct price_owned_opts *o)
{
	struct price_owned_opts t = *o;
	char buf[512], why[160], *save = NULL, *kv;

	if (gp_strlcpy(buf, arg, sizeof(buf)) != 0) {
		gp_error("--owned: expected at most %zu characters, found %zu", sizeof(buf) - 1,
			 strlen(arg));
		return RC_USAGE;
	}
	for (kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		double *dst = NULL;
		int bad;

		if (!eq) {
			gp_error("--owned: expected KEY=VALUE, found '%s'", kv);
			return RC_USAGE;
		}
		*eq++ = '\0';
		if (strcmp(kv, "amortisation") == 0 || strcmp(kv, "amortization") == 0) {
			bad = parse_years(eq, &t.amortisation_years) != 0;
		} else {
			if (strcmp(kv, "usd-per-kwh") == 0 || strcmp(kv, "electricity") == 0)
				dst = &t.usd_per_kwh;
			else if (strcmp(kv, "pue") == 0)
				dst = &t.pue;
			else if (strcmp(kv, "utilisation") == 0 || strcmp(kv, "utilization") == 0)
				dst = &t.utilisation;
			else {
				gp_error("--owned: expected a key among amortisation, usd-per-kwh, pue, utilisation, found '%s'",
					 kv);
				return RC_USAGE;
			}
			bad = unit_parse_double(eq, dst) != RC_OK;
		}
		if (bad) {
			gp_error("--owned: %s: expected a number, found '%s'", kv, eq);
			return RC_USAGE;
		}
	}
	if (price_owned_opts_check(&t, why, sizeof(why)) != RC_OK) {
		gp_error("--owned: %s", why);
		return RC_USAGE;
	}
	*o = t;
	return RC_OK;
}

int cost_cli_flag(struct plan_cli *pc, int code, const char *arg, enum rc *rc)
{
	struct cost_cli *cc = &pc->cost;
	struct plan_opts *o = &pc->opts;
	double v;

	*rc = RC_OK;
	switch (code) {
	case PCLI_RESERVED: cc->reserved = 1; break;
	case PCLI_COMMIT_SHARE:
		*rc = cli_parse_double("--commitment-share", arg, 0, 1, &v);
		if (*rc == RC_OK && v > 1) {
			gp_error("--commitment-share: expected a fraction from 0 to 1, found '%s'", arg);
			*rc = RC_USAGE;
		}
		o->commitment_share = v;
		cc->reserved = 1;
		break;
	case PCLI_COMMITMENTS:
		cc->commitments_path = arg;
		cc->reserved = 1;
		break;
	case PCLI_HAVE:
		if (cc->n_have == COST_CLI_MAX_HAVE) {
			gp_error("--have: expected at most %d, found more", COST_CLI_MAX_HAVE);
			*rc = RC_USAGE;
			break;
		}
		*rc = parse_have(arg, &cc->have[cc->n_have]);
		if (*rc == RC_OK)
			cc->n_have++;
		break;
	case PCLI_HARDWARE: cc->hardware_path = arg; break;
	case PCLI_BLOCKS: cc->blocks_path = arg; break;
	case PCLI_OWNED:
		*rc = parse_owned(arg, &cc->owned);
		cc->owned_given = 1;
		break;
	case PCLI_STORAGE_PRICE:
		*rc = cli_parse_double("--storage-price", arg, 0, CLI_STORAGE_USD_MAX, &o->storage_usd_per_gb_month);
		break;
	case PCLI_CKPT_KEEP: *rc = cli_parse_int("--ckpt-keep", arg, 0, 1000, &o->ckpt_keep); break;
	case PCLI_CKPT_INTERVAL:
		/* auto: Young/Daly's; 0: no checkpoints (durations are
		 * otherwise > 0). */
		if (strcmp(arg, "auto") == 0)
			o->ckpt_interval_s = PLAN_CKPT_INTERVAL_AUTO;
		else if (strcmp(arg, "0") == 0)
			o->ckpt_interval_s = 0;
		else
			*rc = cli_parse_duration("--ckpt-interval", arg, &o->ckpt_interval_s);
		break;
	default:
		return 0;
	}
	return 1;
}

void cost_cli_help(FILE *f)
{
	fprintf(f,
		"cost models (stated with every answer):\n"
		"  --reserved            also price 1- and 3-year commitments (data/commitments.csv:\n"
		"                        published discounts off on-demand); default off\n"
		"  --commitment-share F  fraction of the committed term's cost this job carries,\n"
		"                        0..1 (default %g: the whole term; less when other work\n"
		"                        fills the rest); implies --reserved\n"
		"  --commitments FILE    commitment discounts (default data/commitments.csv)\n"
		"  --have NxGPU          plan and frontier: GPUs you own, e.g. 16xRTX4090\n"
		"                        (repeatable): an offering with that availability,\n"
		"                        charged its running cost only (power; the purchase is\n"
		"                        sunk); machine from hardware.csv\n"
		"  --hardware FILE       machines and prices (default data/hardware.csv); with\n"
		"                        --have, or in compare\n"
		"  --owned K=V,...       with --have, or in compare: owning costs,\n"
		"                        amortisation=YEARS (default %g), usd-per-kwh=USD\n"
		"                        (default %g), pue=RATIO (default %g), utilisation=F\n"
		"                        (default %g: share of the life the machine is busy)\n"
		"  --storage-price USD   checkpoint storage per GB-month (default %g, S3 Standard)\n"
		"  --ckpt-keep N         checkpoints kept in storage (default %d)\n"
		"  --ckpt-interval DUR   checkpoint interval: auto (default: Young/Daly against\n"
		"                        the plan's failures and spot preemptions), a duration\n"
		"                        to pin one, or 0 for none\n"
		"  --blocks FILE|none    capacity blocks, a purchase option beside on-demand, spot\n"
		"                        and reserved: instances for a term of whole days paid up\n"
		"                        front at their own rate (default data/blocks.csv: AWS\n"
		"                        EC2 Capacity Blocks for ML); none: not priced\n",
		PLAN_DEFAULT_COMMITMENT_SHARE, PRICE_DEFAULT_AMORTISATION_YEARS,
		PRICE_DEFAULT_USD_PER_KWH, PRICE_DEFAULT_PUE, PRICE_DEFAULT_UTILISATION,
		PLAN_DEFAULT_STORAGE_USD_PER_GB_MONTH, PLAN_DEFAULT_CKPT_KEEP);
}

static enum rc load_hardware(struct plan_cli *pc, struct plan_cli_data *d)
{
	char path[4096];

	if (d->hardware.rows)
		return RC_OK;
	if (pc->cost.hardware_path)
		snprintf(path, sizeof(path), "%s", pc->cost.hardware_path);
	else
		snprintf(path, sizeof(path), "%s/hardware.csv", cli_data_dir());
	return price_hardware_load(path, &d->cat, &d->hardware);
}

/* Adds the offering of one --have. */
static enum rc add_have(struct plan_cli *pc, struct plan_cli_data *d, const struct cost_cli_have *hv)
{
	const struct price_gpu *g = price_gpu_resolve(&d->cat, "--have", hv->gpu);
	const struct price_hardware *h;
	struct price_hardware m;
	struct price_owned_cost oc;
	int nodes = 1;

	if (!g)
		return RC_USAGE;
	h = price_hardware_for_gpu(&d->hardware, g->name);
	if (!h) {
		gp_error("--have: expected a GPU with a machine in hardware.csv, found %s", g->name);
		gp_hint("add a row for it (name, gpu, gpus, price_usd, host_power_w, ...) or pass --hardware FILE");
		return RC_USAGE;
	}
	m = *h;
	if (hv->count <= h->gpus) {
		/* Fewer GPUs than the machine holds: one machine with that many. */
		m.gpus = hv->count;
	} else if (hv->count % h->gpus) {
		gp_error("--have: expected a multiple of %d (GPUs per %s machine), found %d", h->gpus,
			 h->name, hv->count);
		return RC_USAGE;
	} else {
		nodes = hv->count / h->gpus;
	}
	if (price_owned_cost(&m, g, &pc->cost.owned, &oc) != 0) {
		gp_error("--have: %s: expected a tdp_w figure in gpus.csv to cost its power, found none",
			 g->name);
		return RC_INPUT;
	}
	/* Planning with what is already owned: the purchase is sunk, so an
	 * owned hour costs its power only. */
	price_catalog_add_owned(&d->cat, &m, nodes, oc.power_usd_per_hour);
	return RC_OK;
}

enum rc cost_cli_load(struct plan_cli *pc, struct plan_cli_data *d)
{
	struct cost_cli *cc = &pc->cost;
	char path[4096];
	enum rc rc;

	/* Capacity blocks are priced whenever a table of them is there: a
	 * purchase option like spot, not a cost model one asks for. */
	if (!cc->blocks_path || strcmp(cc->blocks_path, "none") != 0) {
		FILE *f;

		if (cc->blocks_path)
			snprintf(path, sizeof(path), "%s", cc->blocks_path);
		else
			snprintf(path, sizeof(path), "%s/blocks.csv", cli_data_dir());
		f = cc->blocks_path ? NULL : fopen(path, "r");
		if (cc->blocks_path || f) {
			if (f)
				fclose(f);
			rc = price_blocks_load(path, &d->blocks);
			if (rc != RC_OK)
				return rc;
			pc->opts.blocks = &d->blocks;
		}
	}
	if (cc->reserved) {
		if (cc->commitments_path)
			snprintf(path, sizeof(path), "%s", cc->commitments_path);
		else
			snprintf(path, sizeof(path), "%s/commitments.csv", cli_data_dir());
		rc = price_commitments_load(path, &d->cat, &d->commitments);
		if (rc != RC_OK)
			return rc;
		pc->opts.commitments = &d->commitments;
	}
	/* The machines and owning costs price owned GPUs only: named without
	 * any, they would change nothing, and the user would not know. */
	if (cc->n_have == 0 && !cc->need_hardware && (cc->hardware_path || cc->owned_given)) {
		gp_error("%s: prices GPUs you own, expected --have NxGPU with it (or gpuplan "
			 "compare), found none", cc->hardware_path ? "--hardware" : "--owned");
		return RC_USAGE;
	}
	if (cc->n_have > 0 || cc->need_hardware) {
		rc = load_hardware(pc, d);
		if (rc != RC_OK)
			return rc;
	}
	for (int i = 0; i < cc->n_have; i++) {
		rc = add_have(pc, d, &cc->have[i]);
		if (rc != RC_OK)
			return rc;
	}
	return RC_OK;
}

static const struct price_commitment *row_commitment(const struct plan_result *r,
						     const struct plan_candidate *c)
{
	return price_commitment_find(r->opts.commitments, c->offering,
				     price_purchase_term_months(c->purchase));
}

static void print_reserved(const struct plan_result *r, const struct plan_row *row)
{
	const struct plan_candidate *c = &row->c;
	const struct plan_cost_parts *k = &c->costs;
	const struct price_commitment *cm = row_commitment(r, c);
	char a[32], b[32], t[32], u[32], w[32];

	printf("%s: %.1f%% off on-demand (%s %s, %s); committed %s, the job runs %s and carries "
	       "%.0f%% of the commitment: billed %s = %s against %s on demand; ",
	       price_purchase_str(c->purchase), 100.0 * k->discount, cm ? cm->provider : "",
	       cm ? cm->instance_prefix : "", cm ? cm->price_date : "",
	       unit_fmt_duration(t, sizeof(t), k->term_s), unit_fmt_duration(u, sizeof(u), c->time_s),
	       100.0 * r->opts.commitment_share, unit_fmt_duration(w, sizeof(w), k->charged_s),
	       unit_fmt_usd(a, sizeof(a), k->compute_usd * row->fraction),
	       unit_fmt_usd(b, sizeof(b), k->on_demand_cost_usd * row->fraction));
	if (k->breakeven_share >= 1)
		printf("cheaper even carrying the whole term\n");
	else
		printf("cheaper only if this job carries at most %.1f%% of the term (other work "
		       "for the rest of it; --commitment-share)\n", 100.0 * k->breakeven_share);
}

static void print_owned(const struct plan_cli *pc, const struct plan_cli_data *d,
			const struct plan_candidate *c)
{
	const struct price_gpu *g = price_gpu_find(&d->cat, c->offering->gpu);
	const struct price_owned_opts *o = &pc->cost.owned;
	int gpn = c->offering->gpus_per_node;
	double host = 0;
	char a[32];

	for (size_t i = 0; i < d->hardware.n; i++)
		if (strcmp(d->hardware.rows[i].name, c->offering->instance_type) == 0)
			host = d->hardware.rows[i].host_power_w;
	printf("owned: %d x %s (%d x %s): running cost only, the purchase is sunk and not charged: "
	       "%.0f W per machine (%d x %.0f W TDP + %.0f W host) x PUE %.2f x $%.3f/kWh = %s/h "
	       "per machine (gpuplan compare prices buying)\n",
	       c->nodes * gpn, c->offering->gpu, c->nodes, c->offering->instance_type,
	       (g ? g->tdp_w : 0) * gpn + host, gpn, g ? g->tdp_w : 0, host, o->pue, o->usd_per_kwh,
	       unit_fmt_usd(a, sizeof(a), c->offering->on_demand_usd_per_hour));
}

static void print_storage(const struct plan_result *r, const struct plan_row *row)
{
	const struct plan_candidate *c = &row->c;
	const struct plan_cost_parts *k = &c->costs;
	const struct plan_interrupt *ip = &c->interrupt;
	const struct plan_opts *o = &r->opts;
	char a[32], b[32], t[32], u[32];

	printf("checkpoints: %.0f GB each (%g bytes/param), ", k->ckpt_bytes / UNIT_GB,
	       PLAN_CKPT_BYTES_PER_PARAM);
	if (!(k->ckpt_interval_s > 0))
		printf("none written (--ckpt-interval 0): an interruption starts over");
	else if (!ip->pinned && ip->optimum_s > k->ckpt_interval_s)
		printf("written at the end only in %s (the Young/Daly interval, %s, outlasts the run)",
		       unit_fmt_duration(b, sizeof(b), k->ckpt_write_s),
		       unit_fmt_duration(a, sizeof(a), ip->optimum_s));
	else
		printf("written every %s in %s (%s; +%.2f%% wall time, included)",
		       unit_fmt_duration(a, sizeof(a), k->ckpt_interval_s),
		       unit_fmt_duration(b, sizeof(b), k->ckpt_write_s),
		       ip->pinned ? "--ckpt-interval" : "Young/Daly", 100.0 * k->ckpt_overhead);
	printf("; %d kept at $%g/GB-month for %s: %s, included\n", o->ckpt_keep,
	       o->storage_usd_per_gb_month, unit_fmt_duration(t, sizeof(t), c->time_s * row->fraction),
	       unit_fmt_usd(u, sizeof(u), k->storage_usd * row->fraction));
}

const char *plan_cli_row_tag(char *buf, size_t size, const struct plan_result *r,
			     const struct plan_row *row, const struct plan_job *jobs)
{
	int jobs_n = 0, phases = 0;
	const char *ph = row->phase == 1 ? "1a" : "1b";

	for (size_t i = 0; i < r->n_answer_rows; i++) {
		jobs_n |= r->rows[i].job != row->job;
		phases |= r->rows[i].job == row->job && r->rows[i].phase == 2;
	}
	if (r->n_answer_rows <= 1)
		buf[0] = '\0';
	else if (jobs_n && phases)
		snprintf(buf, size, " (%s %s)", jobs[row->job].name, ph);
	else if (jobs_n)
		snprintf(buf, size, " (%s)", jobs[row->job].name);
	else
		snprintf(buf, size, " (%s)", ph);
	return buf;
}

/* "interruptions: 2.5 expected (failures 2.19e-05/GPU-hour x 512 GPUs:
 * one every 3.7 d); ... effective training time 98.9% ..." */
static void print_interrupts(const struct plan_result *r, const struct plan_row *row,
			     const char *tag)
{
	const struct plan_candidate *c = &row->c;
	const struct plan_interrupt *ip = &c->interrupt;
	const struct plan_opts *o = &r->opts;
	char a[32], b[32], n[32], e[16];

	printf("interruptions%s: %s expected (failures %.3g/GPU-hour x %d GPUs", tag,
	       cli_fmt_expected(n, sizeof(n), ip->expected * row->fraction), o->failures_per_gpu_hour,
	       c->nodes * c->cluster.gpus_per_node);
	if (c->spot)
		printf(", spot preemptions %g/node-hour x %d nodes", o->preempt_per_node_hour,
		       c->nodes);
	if (ip->mtbf_s > 0)
		printf(": one every %s", unit_fmt_duration(a, sizeof(a), ip->mtbf_s));
	printf("), each a restart of %s and the work since the last checkpoint redone: "
	       "effective training time %s (+%.2f%% wall time with the checkpoints, included)\n",
	       unit_fmt_duration(b, sizeof(b), o->restart_s), cli_fmt_effective(e, sizeof(e), ip->waste),
	       100.0 * (1.0 / (1.0 - ip->waste) - 1.0));
}

/* "whole days up to 14 days, then weeks, up to 182 days" */
static void block_terms(char *buf, size_t size, const struct price_block *b)
{
	int n = snprintf(buf, size, "%d-%d instances, %d-%d days in steps of %d day%s", b->min_nodes,
			 b->max_nodes, b->min_days, b->max_days, b->step_days,
			 b->step_days == 1 ? "" : "s");

	if (b->long_step_days > 0 && n > 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, " (of %d days beyond %d days)", b->long_step_days,
			 b->long_from_days);
}

static void print_block(const struct plan_row *row)
{
	const struct plan_candidate *c = &row->c;
	const struct price_block *b = c->block;
	char a[32], t[32], terms[160];
	int aws;

	if (!b)
		return;
	aws = gp_streq_nocase(c->offering->provider, "aws");
	block_terms(terms, sizeof(terms), b);
	printf("%s: %s of %d x %s in %s for %.0f days, paid %s at $%g per instance-hour "
	       "(%s, %s): %s; terms %s; no preemption; %sthe job runs %s\n",
	       price_block_kind(b), price_block_product(b), c->billed_nodes,
	       c->offering->instance_type, c->offering->region, c->costs.charged_s / 86400.0,
	       b->payment == PRICE_PAYMENT_UPFRONT ? "up front" : "monthly as the term runs",
	       b->usd_per_hour, b->source, b->price_date,
	       unit_fmt_usd(a, sizeof(a), c->costs.compute_usd * row->fraction), terms,
	       aws ? "the operating system fee is not included; "
		   : "the provider approves each request, lead time not published; ",
	       unit_fmt_duration(t, sizeof(t), c->time_s * row->fraction));
}

void cost_cli_print_notes(const struct plan_result *r, const struct plan_cli *pc,
			  const struct plan_cli_data *d)
{
	for (size_t i = 0; i < r->n_answer_rows; i++) {
		const struct plan_row *row = &r->rows[i];
		char tag[PRICE_NAME_MAX + 16];

		if (row->c.purchase == PRICE_PURCHASE_BLOCK)
			print_block(row);
		if (row->c.costs.discount > 0)
			print_reserved(r, row);
		if (row->c.purchase == PRICE_PURCHASE_OWNED)
			print_owned(pc, d, &row->c);
		if (i == 0)
			print_storage(r, row);
		print_interrupts(r, row, plan_cli_row_tag(tag, sizeof(tag), r, row, d->jobs));
	}
	if (pc->cost.reserved && r->opts.commitments) {
		int any = 0;

		for (size_t i = 0; i < r->n_answer_rows; i++)
			any |= r->rows[i].c.costs.discount > 0;
		if (!any)
			printf("reserved: considered (%zu commitments), none cheaper for this job at a "
			       "%.0f%% share of the term\n", r->opts.commitments->n,
			       100.0 * r->opts.commitment_share);
	}
}
