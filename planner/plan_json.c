/*
 * plan_json.c - the planner's answer as JSON for programs (`gpuplan plan
 * --json`).  The only planner file that includes cJSON.  Wall-clock
 * timings are left out so that the same inputs give the same bytes; the
 * plan file itself (plan.json) is written by the simulator's
 * sim_plan_write().
 */
#include "plan_internal.h"

#include <math.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

/* A number, or null when it is not finite (JSON has no NaN). */
static void add_num(cJSON *o, const char *k, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

/* A number when present (and finite), else null. */
static void add_opt(cJSON *o, const char *k, double v, int present)
{
	add_num(o, k, present ? v : NAN);
}

/* Adds to p the date the source states for c's rate (null: not stated)
 * and, when o knows today, its age in days and whether it is older than
 * o->max_price_age_days (unknown counts as stale). */
static void price_date_fields(cJSON *p, const struct plan_candidate *c,
			      const struct plan_opts *o)
{
	const char *d = plan_candidate_price_date(c);
	long age = o && o->today_days > 0 ? price_date_age_days(d, o->today_days)
					  : PRICE_AGE_UNKNOWN;

	if (d[0])
		cJSON_AddStringToObject(p, "price_date", d);
	else
		cJSON_AddNullToObject(p, "price_date");
	if (!o || o->today_days <= 0)
		return;
	add_opt(p, "price_age_days", (double)age, age != PRICE_AGE_UNKNOWN);
	cJSON_AddBoolToObject(p, "price_stale",
			      age == PRICE_AGE_UNKNOWN || age > o->max_price_age_days);
}

/* Adds candidate c's interruptions (failures; spot: preemptions too)
 * over the share fraction of its job, and the effective training time
 * they leave, as p's "interruptions" object. */
static void interrupt_fields(cJSON *p, const struct plan_candidate *c, double fraction,
			     const struct plan_opts *o)
{
	cJSON *x = cJSON_AddObjectToObject(p, "interruptions");

	add_num(x, "failures_per_gpu_hour", o->failures_per_gpu_hour);
	add_num(x, "preemptions_per_node_hour", c->spot ? o->preempt_per_node_hour : 0);
	add_opt(x, "mtbf_s", c->interrupt.mtbf_s, c->interrupt.mtbf_s > 0);
	add_num(x, "expected", c->interrupt.expected * fraction);
	add_num(x, "checkpoint_interval_s", c->interrupt.interval_s);
	cJSON_AddStringToObject(x, "checkpoint_interval_from",
				c->interrupt.pinned ? "pinned" : "young-daly");
	add_num(x, "restart_s", o->restart_s);
	add_num(x, "waste", c->interrupt.waste);
	add_num(x, "effective_training_time", 1.0 - c->interrupt.waste);
}

/* Adds one candidate's figures to p: where it runs, its parallelism, the
 * simulator's step, the time and cost of the job (scaled by fraction, the
 * share of the job it trains), the commitment, the interruptions (failures
 * and, on spot, preemptions) and the spot preemption model.
 * The keys plan --json and compare --json share. */
static void candidate_fields(cJSON *p, const struct plan_candidate *c,
			     const struct price_offering *of, double fraction,
			     const struct plan_opts *o)
{
	cJSON *x;

	cJSON_AddStringToObject(p, "provider", of->provider);
	cJSON_AddStringToObject(p, "instance_type", of->instance_type);
	cJSON_AddStringToObject(p, "region", of->region);
	cJSON_AddStringToObject(p, "gpu", c->cluster.gpu.name);
	cJSON_AddBoolToObject(p, "spot", c->spot);
	cJSON_AddStringToObject(p, "purchase", price_purchase_str(c->purchase));
	price_date_fields(p, c, o);
	cJSON_AddNumberToObject(p, "nodes", c->nodes);
	/* Only where the offering is rented in whole units larger than the
	 * plan (an UltraServer): the nodes paid for. */
	if (c->billed_nodes > c->nodes)
		cJSON_AddNumberToObject(p, "billed_nodes", c->billed_nodes);
	cJSON_AddNumberToObject(p, "gpus_per_node", c->cluster.gpus_per_node);
	cJSON_AddNumberToObject(p, "gpus", c->nodes * c->cluster.gpus_per_node);
	cJSON_AddNumberToObject(p, "tp", c->par.tp);
	cJSON_AddNumberToObject(p, "pp", c->par.pp);
	cJSON_AddNumberToObject(p, "dp", c->par.dp);
	cJSON_AddNumberToObject(p, "cp", c->par.cp);
	cJSON_AddNumberToObject(p, "mbs", c->par.mbs);
	cJSON_AddNumberToObject(p, "gbs", c->par.gbs);
	cJSON_AddNumberToObject(p, "grad_accum", c->res.grad_accum);
	cJSON_AddNumberToObject(p, "zero", c->par.zero);
	cJSON_AddStringToObject(p, "recompute", sim_recompute_str(c->par.recompute));
	cJSON_AddNumberToObject(p, "interleave", c->par.interleave);
	cJSON_AddNumberToObject(p, "ep", c->par.ep);
	cJSON_AddNumberToObject(p, "etp", c->par.etp);
	if (c->par.ep > 1) {
		cJSON_AddStringToObject(p, "ep_dispatcher", sim_ep_dispatcher_names[c->par.ep_flex]);
		cJSON_AddBoolToObject(p, "ep_overlap", c->par.ep_overlap);
	}
	cJSON_AddStringToObject(p, "precision", sim_precision_str(c->par.precision));
	if (c->par.stack != SIM_STACK_UNSTATED)
		cJSON_AddStringToObject(p, "stack", sim_stack_names[c->par.stack]);
	cJSON_AddNumberToObject(p, "nvlink_domain", sim_cluster_domain(&c->cluster));
	add_num(p, "step_time_s", c->res.step_time_s);
	add_num(p, "tokens_per_s", c->res.tokens_per_s);
	add_num(p, "mfu", c->res.mfu);
	add_num(p, "memory_per_gpu_bytes", c->res.memory.total);
	add_num(p, "memory_capacity_bytes", c->res.memory.capacity);
	/* fine-tuning and offload: only where a plan has them, so that
	 * pre-training answers keep their bytes */
	if (c->par.ft.method != SIM_FT_NONE || c->par.ft.offload != SIM_OFFLOAD_NONE) {
		cJSON_AddStringToObject(p, "finetune", sim_ft_method_names[c->par.ft.method]);
		cJSON_AddStringToObject(p, "offload", sim_offload_names[c->par.ft.offload]);
		add_num(p, "host_memory_per_node_bytes", c->res.memory.host);
		add_num(p, "host_memory_capacity_bytes", c->res.memory.host_capacity);
	}
	add_num(p, "time_to_train_s", c->time_s * fraction);
	add_num(p, "cost_usd", c->cost_usd * fraction);
	add_num(p, "usd_per_hour", c->usd_per_hour);
	/* the bound of its purchase option and whose it is ("policy":
	 * gpuplan's, not the provider's) */
	cJSON_AddNumberToObject(p, "node_limit", c->limit.nodes);
	cJSON_AddStringToObject(p, "node_limit_by", price_limit_str(c->limit.why));
	add_num(p, "upfront_usd", c->upfront_usd * fraction);
	x = cJSON_AddObjectToObject(p, "costs");
	add_num(x, "compute_usd", c->costs.compute_usd * fraction);
	add_num(x, "storage_usd", c->costs.storage_usd * fraction);
	add_num(x, "checkpoint_bytes", c->costs.ckpt_bytes);
	add_num(x, "checkpoint_write_s", c->costs.ckpt_write_s);
	add_num(x, "checkpoint_interval_s", c->costs.ckpt_interval_s);
	add_num(x, "checkpoint_overhead", c->costs.ckpt_overhead);
	add_num(x, "provision_s", c->costs.provision_s);
	add_num(x, "startup_s", c->costs.startup_s);
	add_num(x, "billed_s", c->costs.charged_s * fraction);
	if (c->costs.discount > 0) {
		x = cJSON_AddObjectToObject(p, "commitment");
		add_num(x, "discount", c->costs.discount);
		add_num(x, "term_s", c->costs.term_s);
		add_num(x, "share", o->commitment_share);
		add_num(x, "charged_s", c->costs.charged_s);
		add_num(x, "on_demand_cost_usd", c->costs.on_demand_cost_usd);
		add_num(x, "breakeven_share", c->costs.breakeven_share);
	} else {
		cJSON_AddNullToObject(p, "commitment");
	}
	if (c->purchase == PRICE_PURCHASE_BLOCK && c->block) {
		x = cJSON_AddObjectToObject(p, "capacity_block");
		add_num(x, "usd_per_instance_hour", c->block->usd_per_hour);
		add_num(x, "days", c->costs.charged_s / 86400.0);
		cJSON_AddNumberToObject(x, "min_nodes", c->block->min_nodes);
		cJSON_AddNumberToObject(x, "max_nodes", c->block->max_nodes);
		cJSON_AddNumberToObject(x, "min_days", c->block->min_days);
		cJSON_AddNumberToObject(x, "max_days", c->block->max_days);
		cJSON_AddStringToObject(x, "source", c->block->source);
		cJSON_AddStringToObject(x, "product", price_block_product(c->block));
		cJSON_AddStringToObject(x, "kind", price_block_kind(c->block));
		cJSON_AddStringToObject(x, "payment", c->block->payment == PRICE_PAYMENT_MONTHLY
							      ? "monthly" : "upfront");
	} else {
		cJSON_AddNullToObject(p, "capacity_block");
	}
	interrupt_fields(p, c, fraction, o);
	if (c->spot) {
		x = cJSON_AddObjectToObject(p, "preemption");
		add_num(x, "rate_per_node_hour", o->preempt_per_node_hour);
		add_num(x, "mtbf_s", c->interrupt.mtbf_s);
		add_num(x, "checkpoint_write_s", c->interrupt.ckpt_write_s);
		add_num(x, "checkpoint_interval_s", c->interrupt.interval_s);
		add_num(x, "restart_s", o->restart_s);
		add_num(x, "waste", c->interrupt.waste);
	} else {
		cJSON_AddNullToObject(p, "preemption");
	}
}

static cJSON *row_json(const struct plan_row *row, const struct plan_job *job,
		       const struct plan_opts *o)
{
	const struct plan_candidate *c = &row->c;
	cJSON *p = cJSON_CreateObject(), *x;
	const char *loss;
	double lf;

	cJSON_AddNumberToObject(p, "rank", row->rank);
	cJSON_AddStringToObject(p, "job", job->name);
	cJSON_AddStringToObject(p, "model", job->model.name);
	cJSON_AddNumberToObject(p, "phase", row->phase);
	add_num(p, "fraction", row->fraction);
	candidate_fields(p, c, c->offering, row->fraction, o);
	cJSON_AddStringToObject(p, "binding", plan_binding_str(row->binding));
	lf = plan_largest_loss(&c->res, &loss);
	x = cJSON_AddObjectToObject(p, "largest_loss");
	cJSON_AddStringToObject(x, "name", loss);
	add_num(x, "fraction", lf);
	x = cJSON_AddObjectToObject(p, "sensitivity");
	add_num(x, "factor", o->sensitivity);
	add_num(x, "inter_node_bw_time_to_train_s", row->sens_bw_time_s);
	add_num(x, "inter_node_bw_cost_usd", row->sens_bw_cost_usd);
	add_num(x, "flops_time_to_train_s", row->sens_flops_time_s);
	add_num(x, "flops_cost_usd", row->sens_flops_cost_usd);
	add_opt(p, "replay_step_time_s", row->replay_step_s, row->replay_step_s > 0);
	cJSON_AddNumberToObject(p, "folded_regions", row->folded_regions);
	return p;
}

char *plan_candidate_to_json(const struct plan_candidate *c,
			     const struct price_offering *of, const struct plan_opts *o)
{
	cJSON *p = cJSON_CreateObject();
	char *s;

	candidate_fields(p, c, of ? of : c->offering, 1.0, o);
	s = cJSON_PrintUnformatted(p);
	cJSON_Delete(p);
	return s;
}

char *plan_result_to_json(const struct plan_result *r, const struct plan_job *jobs,
			  size_t n_jobs)
{
	cJSON *root = cJSON_CreateObject(), *plans, *x;
	const struct plan_nearest *n = &r->nearest;
	const struct plan_opts *o = &r->opts;
	char *s;

	cJSON_AddStringToObject(root, "schema", "gpuplan.plans/1");
	cJSON_AddBoolToObject(root, "feasible", r->feasible);
	cJSON_AddStringToObject(root, "objective", plan_objective_str(r->objective));
	if (!r->feasible)
		cJSON_AddStringToObject(root, "why", r->why);
	else
		cJSON_AddStringToObject(root, "binding", plan_binding_str(r->binding));
	x = cJSON_AddObjectToObject(root, "constraints");
	add_opt(x, "budget_usd", o->budget_usd, o->budget_usd >= 0);
	add_opt(x, "hourly_budget_usd", o->hourly_budget_usd, o->hourly_budget_usd >= 0);
	add_opt(x, "deadline_s", o->deadline_s, o->deadline_s > 0);
	cJSON_AddNumberToObject(x, "phases", o->phases);
	cJSON_AddNumberToObject(x, "max_gpus", o->filter.max_gpus);
	cJSON_AddStringToObject(x, "framework", plan_framework_str(o->filter.framework));
	add_opt(x, "max_duration_s", o->max_duration_s, o->max_duration_s > 0);
	add_opt(x, "max_spot_duration_s", o->max_spot_duration_s, o->max_spot_duration_s > 0);
	cJSON_AddBoolToObject(x, "monthly_budget", o->monthly_budget);
	if (r->feasible) {
		add_num(root, "total_cost_usd", r->total_cost_usd);
		add_num(root, "total_usd_per_hour", r->total_usd_per_hour);
		add_num(root, "makespan_s", r->makespan_s);
		cJSON_AddBoolToObject(root, "optimal", r->optimal);
	}
	plans = cJSON_AddArrayToObject(root, "plans");
	for (size_t i = 0; i < r->n_rows; i++) {
		const struct plan_row *row = &r->rows[i];

		if ((size_t)row->job < n_jobs)
			cJSON_AddItemToArray(plans, row_json(row, &jobs[row->job], o));
	}
	x = cJSON_AddObjectToObject(root, "nearest");
	add_opt(x, "cheapest_cost_usd", n->cheapest_cost_usd, n->cheapest_cost_usd >= 0);
	add_opt(x, "fastest_time_to_train_s", n->fastest_time_s, n->fastest_time_s >= 0);
	add_opt(x, "lowest_usd_per_hour", n->lowest_usd_per_hour, n->lowest_usd_per_hour >= 0);
	add_opt(x, "smallest_gpu_memory_that_fits_bytes", n->smallest_fit_memory_bytes,
		n->smallest_fit_memory_bytes >= 0);
	add_opt(x, "least_memory_needed_bytes", n->smallest_need_bytes,
		n->smallest_need_bytes >= 0);
	if (!r->feasible && n->have_over_max) {
		/* the fastest plan refused for its duration: what it would take */
		cJSON *y = cJSON_AddObjectToObject(x, "over_max_duration");

		candidate_fields(y, &n->over_max, n->over_max.offering, 1.0, o);
	} else {
		cJSON_AddNullToObject(x, "over_max_duration");
	}
	add_opt(x, "least_host_memory_needed_bytes", n->smallest_host_need_bytes,
		n->smallest_host_need_bytes > 0);
	add_opt(x, "host_memory_bytes", n->host_capacity_bytes, n->smallest_host_need_bytes > 0);
	x = cJSON_AddObjectToObject(root, "assumptions");
	add_num(x, "failures_per_gpu_hour", o->failures_per_gpu_hour);
	add_num(x, "preempt_per_node_hour", o->preempt_per_node_hour);
	add_num(x, "restart_s", o->restart_s);
	add_num(x, "checkpoint_bytes_per_s_per_node", o->ckpt_bytes_per_s_per_node);
	add_num(x, "checkpoint_bytes_per_param", PLAN_CKPT_BYTES_PER_PARAM);
	add_num(x, "switch_s", o->switch_s);
	/* null: Young/Daly's per plan (PLAN_CKPT_INTERVAL_AUTO) */
	add_opt(x, "checkpoint_interval_s", o->ckpt_interval_s, o->ckpt_interval_s >= 0);
	cJSON_AddNumberToObject(x, "checkpoints_kept", o->ckpt_keep);
	add_num(x, "storage_usd_per_gb_month", o->storage_usd_per_gb_month);
	add_num(x, "commitment_share", o->commitment_share);
	x = cJSON_AddObjectToObject(root, "stats");
	cJSON_AddNumberToObject(x, "offerings", (double)r->stats.offerings);
	cJSON_AddNumberToObject(x, "machines", (double)r->stats.machines);
	cJSON_AddNumberToObject(x, "configs_enumerated", (double)r->stats.enumerated);
	cJSON_AddNumberToObject(x, "configs_simulated", (double)r->stats.simulated);
	cJSON_AddNumberToObject(x, "configs_fit", (double)r->stats.fit);
	cJSON_AddNumberToObject(x, "frontier_columns", (double)r->stats.frontier);
	cJSON_AddNumberToObject(x, "milp_solves", (double)r->stats.milp_solves);
	s = cJSON_Print(root);
	cJSON_Delete(root);
	return s;
}

char *plan_frontier_to_json(const struct plan_candidate *c, size_t n,
			    const struct plan_job *job, const struct plan_opts *o)
{
	cJSON *root = cJSON_CreateObject(), *pts;
	char *s;

	cJSON_AddStringToObject(root, "schema", "gpuplan.frontier/1");
	cJSON_AddStringToObject(root, "model", job->model.name);
	add_num(root, "tokens", job->tokens);
	pts = cJSON_AddArrayToObject(root, "points");
	for (size_t i = 0; i < n; i++) {
		const struct plan_candidate *p = &c[i];
		cJSON *x = cJSON_CreateObject();

		cJSON_AddStringToObject(x, "provider", p->offering->provider);
		cJSON_AddStringToObject(x, "instance_type", p->offering->instance_type);
		cJSON_AddStringToObject(x, "region", p->offering->region);
		cJSON_AddStringToObject(x, "gpu", p->cluster.gpu.name);
		cJSON_AddBoolToObject(x, "spot", p->spot);
		cJSON_AddStringToObject(x, "purchase", price_purchase_str(p->purchase));
		price_date_fields(x, p, NULL);
		cJSON_AddNumberToObject(x, "nodes", p->nodes);
		cJSON_AddNumberToObject(x, "gpus", p->nodes * p->cluster.gpus_per_node);
		cJSON_AddNumberToObject(x, "tp", p->par.tp);
		cJSON_AddNumberToObject(x, "pp", p->par.pp);
		cJSON_AddNumberToObject(x, "dp", p->par.dp);
		cJSON_AddNumberToObject(x, "cp", p->par.cp);
		cJSON_AddNumberToObject(x, "mbs", p->par.mbs);
		cJSON_AddNumberToObject(x, "grad_accum", p->res.grad_accum);
		cJSON_AddNumberToObject(x, "zero", p->par.zero);
		cJSON_AddStringToObject(x, "recompute", sim_recompute_str(p->par.recompute));
		cJSON_AddNumberToObject(x, "interleave", p->par.interleave);
		add_num(x, "mfu", p->res.mfu);
		add_num(x, "time_to_train_s", p->time_s);
		add_num(x, "cost_usd", p->cost_usd);
		add_num(x, "usd_per_hour", p->usd_per_hour);
		interrupt_fields(x, p, 1, o);
		cJSON_AddItemToArray(pts, x);
	}
	s = cJSON_Print(root);
	cJSON_Delete(root);
	return s;
}
