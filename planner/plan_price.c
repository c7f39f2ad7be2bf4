/*
 * plan_price.c - what a candidate costs and how long it takes: the
 * interruption model (failures and spot preemptions, Daly's checkpoint
 * interval), the global batch a job trains with, reserved and stored
 * hours, the rate of each purchase option, billing increments, and the
 * Pareto order of candidates.  plan_enum.c calls it for every simulated
 * configuration; it searches nothing itself and calls only the pricing
 * and simulator layers.
 */
#include "plan_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Daly 2006's higher-order optimum compute interval between checkpoints
 * of C seconds at M seconds between interruptions (its perturbation
 * solution; the paper's figs. 3-5 give 117, 57 and 9.1 min for C = 5 min,
 * M = 24 h, 6 h and 15 min).  Young 1974's sqrt(2 C M) is its first term. */
static double daly_interval_s(double c, double m)
{
	double x = c / (2.0 * m);

	if (c >= 2.0 * m)
		return m;
	return sqrt(2.0 * c * m) * (1.0 + sqrt(x) / 3.0 + x / 9.0) - c;
}

int plan_interrupt_model(double ckpt_bytes, int gpus, int nodes, int spot, double work_s,
			 const struct plan_opts *o, struct plan_interrupt *p)
{
	int none = o->ckpt_interval_s == 0;
	double rate, tau, c, ratio;

	memset(p, 0, sizeof(*p));
	p->failures_per_hour = o->failures_per_gpu_hour * gpus;
	p->preempts_per_hour = spot ? o->preempt_per_node_hour * nodes : 0;
	rate = (p->failures_per_hour + p->preempts_per_hour) / 3600.0; /* per second */
	if (rate > 0)
		p->mtbf_s = 1.0 / rate;
	/* All nodes write their shard of the checkpoint in parallel. */
	p->ckpt_write_s = ckpt_bytes / (nodes * o->ckpt_bytes_per_s_per_node);
	p->pinned = o->ckpt_interval_s >= 0;
	c = none ? 0 : p->ckpt_write_s;
	if (o->ckpt_interval_s > 0)
		tau = o->ckpt_interval_s;
	else if (!none && rate > 0 && c > 0)
		tau = p->optimum_s = daly_interval_s(c, p->mtbf_s);
	else
		tau = work_s;
	/* Past the end of the run there is nothing to save but the last. */
	tau = fmin(tau, work_s);
	if (!(tau > 0))
		return -1;
	p->interval_s = none ? 0 : tau;
	/* Wall time per second of work: every tau of work costs tau + C, and
	 * an interruption redoes the interrupted segment after a restart R
	 * (Daly 2006's complete model, exponential interarrivals); without
	 * interruptions only the checkpoints count, 1 + C / tau. */
	if (rate > 0) {
		double x = (tau + c) * rate;

		ratio = exp(o->restart_s * rate) * (expm1(x) / x) * (tau + c) / tau;
	} else {
		ratio = (tau + c) / tau;
	}
	if (!isfinite(ratio))
		return -1;
	p->waste = 1.0 - 1.0 / ratio;
	p->expected = work_s * ratio * rate;
	return p->waste < PLAN_MAX_INTERRUPT_WASTE ? 0 : -1;
}

int plan_job_gbs(const struct plan_job *job, const struct plan_opts *o)
{
	if (job->gbs > 0)
		return job->gbs;
	if (o->gbs > 0)
		return o->gbs;
	if (job->ft.method != SIM_FT_NONE)
		return SIM_FT_DEFAULT_GBS;
	return sim_model_gbs(&job->model);
}

double plan_reserved_charged_s(double time_s, int term_months, double share)
{
	double term_s = term_months / 12.0 * PRICE_HOURS_PER_YEAR * 3600.0;
	double terms = term_s > 0 ? ceil(time_s / term_s) : 0;
	double committed_s = (terms < 1 ? 1 : terms) * term_s;

	if (!(term_s > 0))
		return time_s;
	return fmax(time_s, share * committed_s);
}

double plan_storage_cost_usd(double ckpt_bytes, int keep, double usd_per_gb_month,
			     double time_s)
{
	return keep * ckpt_bytes / UNIT_GB * usd_per_gb_month *
	       (time_s / (UNIT_HOURS_PER_MONTH * 3600.0));
}

/* The per-node rate of a purchase option; < 0 when not offered. */
static double purchase_rate(const struct plan_candidate *c, const struct plan_opts *o,
			    double *discount)
{
	const struct price_offering *of = c->offering;
	const struct price_commitment *cm;

	*discount = 0;
	switch (c->purchase) {
	case PRICE_PURCHASE_SPOT:
		return of->spot_usd_per_hour;
	case PRICE_PURCHASE_RESERVED_1Y:
	case PRICE_PURCHASE_RESERVED_3Y:
		cm = price_commitment_find(o->commitments, of,
					   price_purchase_term_months(c->purchase));
		if (!cm)
			return -1;
		*discount = cm->discount;
		return of->on_demand_usd_per_hour * (1.0 - cm->discount);
	case PRICE_PURCHASE_BLOCK:
		return c->block ? c->block->usd_per_hour : -1;
	case PRICE_PURCHASE_ON_DEMAND:
	case PRICE_PURCHASE_OWNED:
		break;
	}
	return of->on_demand_usd_per_hour;
}

const char *plan_candidate_price_date(const struct plan_candidate *c)
{
	if (c->purchase == PRICE_PURCHASE_BLOCK && c->block)
		return c->block->price_date;
	return c->offering ? c->offering->price_date : "";
}

int plan_candidate_price(struct plan_candidate *c, const struct plan_job *job,
			 const struct plan_opts *o)
{
	struct plan_cost_parts *k = &c->costs;
	double discount, per_node = purchase_rate(c, o, &discount);
	/* a checkpoint holds what trains: LoRA's adapters, not the base */
	double params = sim_trainable_params(&job->model, &job->ft);
	double t;

	if (!(per_node >= 0))
		return -1;
	c->spot = c->purchase == PRICE_PURCHASE_SPOT;
	if (c->purchase == PRICE_PURCHASE_BLOCK)
		price_block_node_limit(c->offering, c->block, &c->limit);
	else
		price_offering_node_limit(c->offering, c->spot, &c->limit);
	/* An offering rented in whole units (an UltraServer) is paid for
	 * whole, however many of its nodes the job runs on. */
	c->billed_nodes = price_node_limit_billed(&c->limit, c->nodes);
	c->usd_per_hour = per_node * c->billed_nodes;
	t = sim_time_to_train_s(&c->res, job->tokens);
	if (!(t > 0) || !isfinite(t))
		return -1;
	memset(k, 0, sizeof(*k));
	k->ckpt_bytes = params * PLAN_CKPT_BYTES_PER_PARAM;
	k->ckpt_keep = o->ckpt_keep;
	if (plan_interrupt_model(k->ckpt_bytes, c->nodes * c->offering->gpus_per_node, c->nodes,
				 c->spot, t, o, &c->interrupt))
		return -1;
	k->ckpt_write_s = c->interrupt.ckpt_write_s;
	k->ckpt_interval_s = c->interrupt.interval_s;
	if (k->ckpt_interval_s > 0)
		k->ckpt_overhead = k->ckpt_write_s / k->ckpt_interval_s;
	/* The waste counts checkpoints, restarts and work redone. */
	t /= 1.0 - c->interrupt.waste;
	/* Fixed overheads: the nodes are requested (provisioning, not
	 * billed), the job starts (billed), then trains for t.  Billing
	 * rounds the billed run up to the offering's increment. */
	k->provision_s = c->offering->provision_s;
	k->startup_s = o->startup_s;
	c->time_s = k->provision_s + k->startup_s + t;
	t += k->startup_s;
	if (c->purchase == PRICE_PURCHASE_OWNED)
		k->charged_s = t;
	else if (c->purchase == PRICE_PURCHASE_BLOCK)
		/* Paid up front for the whole term: whole days; a job longer
		 * than one block's longest term is not offered one. */
		k->charged_s = price_block_billed_s(c->block, t);
	else
		k->charged_s = plan_billed_s(t, c->offering);
	if (!(k->charged_s >= 0))
		return -1;
	k->billed_extra_s = k->charged_s - t;
	if (discount > 0) {
		int months = price_purchase_term_months(c->purchase);

		k->discount = discount;
		k->term_s = plan_reserved_charged_s(t, months, 1.0);
		k->charged_s = plan_reserved_charged_s(t, months, o->commitment_share);
		k->on_demand_cost_usd = t / 3600.0 * c->offering->on_demand_usd_per_hour *
					c->billed_nodes;
		/* Reserved beats on-demand while share x term x (1 - d) < time. */
		k->breakeven_share = t / (k->term_s * (1.0 - discount));
	}
	k->compute_usd = k->charged_s / 3600.0 * c->usd_per_hour;
	k->storage_usd = plan_storage_cost_usd(k->ckpt_bytes, o->ckpt_keep,
					       o->storage_usd_per_gb_month, t);
	c->cost_usd = k->compute_usd + k->storage_usd;
	c->upfront_usd = c->purchase == PRICE_PURCHASE_BLOCK && c->block &&
				 c->block->payment == PRICE_PAYMENT_UPFRONT
			 ? k->compute_usd : 0;
	c->max_nodes_hit = c->nodes >= c->limit.nodes;
	return 0;
}

/* 1 when c lasts longer than a plan may (plan_opts.max_duration_s, and
 * max_spot_duration_s on spot). */
int plan_candidate_too_long(const struct plan_candidate *c, const struct plan_opts *o)
{
	if (o->max_duration_s > 0 && c->time_s > o->max_duration_s)
		return 1;
	return c->spot && o->max_spot_duration_s > 0 && c->time_s > o->max_spot_duration_s;
}


double plan_billed_s(double run_s, const struct price_offering *of)
{
	double b = run_s;

	/* A hair under a whole increment is that increment, not the next. */
	if (of->billing_increment_s > 0)
		b = ceil(run_s / of->billing_increment_s - 1e-9) * of->billing_increment_s;
	return fmax(b, of->min_billing_s);
}

int plan_candidate_dominates(const struct plan_candidate *a, const struct plan_candidate *b)
{
	if (a->time_s > b->time_s || a->cost_usd > b->cost_usd || a->nodes > b->nodes)
		return 0;
	return a->time_s < b->time_s || a->cost_usd < b->cost_usd || a->nodes < b->nodes;
}

static int by_time(const void *pa, const void *pb)
{
	const struct plan_candidate *a = pa, *b = pb;

	if (a->time_s != b->time_s)
		return a->time_s < b->time_s ? -1 : 1;
	if (a->cost_usd != b->cost_usd)
		return a->cost_usd < b->cost_usd ? -1 : 1;
	return a->nodes - b->nodes;
}

size_t plan_pareto(struct plan_candidate *c, size_t n)
{
	size_t k = 0;

	if (n == 0)
		return 0;
	qsort(c, n, sizeof(*c), by_time);
	for (size_t i = 0; i < n; i++) {
		int dominated = 0;

		/* Sorted by time, so only earlier entries can dominate. */
		for (size_t j = 0; j < k && !dominated; j++)
			dominated = plan_candidate_dominates(&c[j], &c[i]) ||
				    (c[j].time_s == c[i].time_s && c[j].cost_usd == c[i].cost_usd &&
				     c[j].nodes == c[i].nodes);
		if (!dominated)
			c[k++] = c[i];
	}
	return k;
}
