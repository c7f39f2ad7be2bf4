/*
 * plan.c - the planner's pipeline: enumerate each job's candidates
 * (plan_enum.c), hand the frontier columns to the MILP (plan_lp.c), rank
 * alternatives by re-solving without the offerings already shown, say
 * which constraint binds, re-simulate the chosen plans (event-driven
 * replay of the schedule, and what-ifs with less inter-node bandwidth or
 * achieved FLOP/s), and explain an infeasible ask.
 *
 * It prints nothing to stdout and formats nothing for people: the CLI
 * does that from struct plan_result.
 */
#include "plan_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_event.h"

void plan_row_to_sim_plan(const struct plan_row *row, const struct plan_job *job,
			  struct sim_plan *p)
{
	const struct plan_candidate *c = &row->c;

	memset(p, 0, sizeof(*p));
	p->model = job->model;
	p->par = c->par;
	p->cluster = c->cluster;
	p->offering = *c->offering;
	/* The date of the rate the plan is priced at: a capacity block's own. */
	gp_strlcpy(p->offering.price_date, plan_candidate_price_date(c), sizeof(p->offering.price_date));
	p->spot = c->spot;
	p->purchase = c->purchase;
	p->nodes = c->nodes;
	p->tokens = job->tokens * row->fraction;
	if (row->fraction >= 1) {
		p->epochs = job->epochs;
		p->dataset_tokens = job->dataset_tokens;
	}
	p->usd_per_gpu_hour = c->usd_per_hour / (c->billed_nodes * c->cluster.gpus_per_node);
	p->result = c->res;
	p->time_to_train_s = c->time_s * row->fraction;
	p->cost_usd = c->cost_usd * row->fraction;
	p->ckpt_interval_s = c->costs.ckpt_interval_s;
	p->ckpt_keep = c->costs.ckpt_keep;
}

void plan_interrupts_to_sim(const struct plan_candidate *c, double fraction,
			    const struct plan_opts *o, struct sim_interrupts *out)
{
	memset(out, 0, sizeof(*out));
	out->stated = 1;
	out->failures_per_gpu_hour = o->failures_per_gpu_hour;
	out->preemptions_per_node_hour = c->spot ? o->preempt_per_node_hour : 0;
	out->restart_s = o->restart_s;
	out->ckpt_bytes_per_s_per_node = o->ckpt_bytes_per_s_per_node;
	out->mtbf_s = c->interrupt.mtbf_s;
	out->expected = c->interrupt.expected * fraction;
	out->effective = 1.0 - c->interrupt.waste;
}

void plan_result_release(struct plan_result *r)
{
	if (!r)
		return;
	free(r->rows);
	r->rows = NULL;
	r->n_rows = 0;
}

/* ---- validation ---------------------------------------------------------- */

static enum rc validate(const struct plan_job *jobs, size_t n_jobs, const struct plan_opts *o)
{
	if (n_jobs == 0) {
		gp_error("plan: expected at least one job, found none");
		return RC_USAGE;
	}
	if (o->phases != 1 && o->phases != 2) {
		gp_error("--phases: expected 1 or 2, found %d", o->phases);
		return RC_USAGE;
	}
	if (o->top < 1) {
		gp_error("--top: expected an integer >= 1, found %d", o->top);
		return RC_USAGE;
	}
	if (!isfinite(o->budget_usd) || !isfinite(o->hourly_budget_usd) ||
	    !isfinite(o->deadline_s) || !(o->milp_time_limit_s > 0) ||
	    !(o->switch_s >= 0) || !(o->preempt_per_node_hour >= 0) ||
	    !(o->failures_per_gpu_hour >= 0) || !isfinite(o->failures_per_gpu_hour) ||
	    !(o->restart_s >= 0) || !(o->ckpt_bytes_per_s_per_node > 0) ||
	    !(o->sensitivity > 0 && o->sensitivity <= 1)) {
		gp_error("plan: expected finite budgets and deadline, positive time limit and checkpoint bandwidth, failure and preemption rates >= 0, sensitivity in (0, 1]");
		return RC_USAGE;
	}
	if (o->deadline_s == 0) {
		gp_error("--deadline: expected a duration > 0, found 0");
		return RC_USAGE;
	}
	if (!(o->commitment_share >= 0 && o->commitment_share <= 1) ||
	    !(o->storage_usd_per_gb_month >= 0) || !isfinite(o->storage_usd_per_gb_month) ||
	    o->ckpt_keep < 0 || !isfinite(o->ckpt_interval_s) ||
	    !(o->ckpt_interval_s >= 0 || o->ckpt_interval_s == PLAN_CKPT_INTERVAL_AUTO)) {
		gp_error("plan: expected a commitment share in [0, 1], a storage price >= 0, checkpoints kept >= 0 and a checkpoint interval >= 0 (or auto)");
		return RC_USAGE;
	}
	for (size_t j = 0; j < n_jobs; j++) {
		const struct plan_job *jb = &jobs[j];

		if (!(jb->tokens > 0) || !isfinite(jb->tokens)) {
			gp_error("job %s: tokens: expected a count > 0, found %g", jb->name, jb->tokens);
			return RC_INPUT;
		}
		if (!(jb->priority > 0) || !isfinite(jb->priority)) {
			gp_error("job %s: priority: expected a number > 0, found %g", jb->name,
				 jb->priority);
			return RC_INPUT;
		}
		if (jb->gbs < 0 || !isfinite(jb->deadline_s) || jb->deadline_s == 0) {
			gp_error("job %s: expected gbs >= 0 and a deadline > 0", jb->name);
			return RC_INPUT;
		}
	}
	return RC_OK;
}

static double job_deadline(const struct plan_job *j, const struct plan_opts *o)
{
	return j->deadline_s > 0 ? j->deadline_s : o->deadline_s;
}

static enum plan_objective resolve_objective(const struct plan_job *jobs, size_t n_jobs,
					     const struct plan_opts *o)
{
	int any_deadline = 0;

	if (o->objective != PLAN_OBJECTIVE_AUTO)
		return o->objective;
	for (size_t j = 0; j < n_jobs; j++)
		if (job_deadline(&jobs[j], o) > 0)
			any_deadline = 1;
	return any_deadline && o->budget_usd < 0 && o->hourly_budget_usd < 0
		       ? PLAN_OBJECTIVE_COST : PLAN_OBJECTIVE_TIME;
}

static void nearest_init(struct plan_nearest *n)
{
	memset(n, 0, sizeof(*n));
	n->cheapest_cost_usd = -1;
	n->fastest_time_s = -1;
	n->lowest_usd_per_hour = -1;
	n->smallest_fit_memory_bytes = -1;
	n->smallest_need_bytes = -1;
	n->largest_gpu_bytes = 0;
	n->smallest_host_need_bytes = -1;
	n->host_capacity_bytes = 0;
	n->offload_searched = 0;
	n->all_one_node_network = 0;
	n->one_node_example = NULL;
}

/* Several jobs at once: costs and rates add up, the slowest job and the
 * most demanding memory decide. */
static void nearest_merge(struct plan_nearest *all, const struct plan_nearest *one, int first)
{
	if (first) {
		*all = *one;
		return;
	}
	all->cheapest_cost_usd = one->cheapest_cost_usd < 0 || all->cheapest_cost_usd < 0
					 ? -1 : all->cheapest_cost_usd + one->cheapest_cost_usd;
	all->lowest_usd_per_hour = one->lowest_usd_per_hour < 0 || all->lowest_usd_per_hour < 0
					   ? -1 : all->lowest_usd_per_hour + one->lowest_usd_per_hour;
	all->fastest_time_s = fmax(all->fastest_time_s, one->fastest_time_s);
	all->smallest_fit_memory_bytes = one->smallest_fit_memory_bytes < 0 ||
						 all->smallest_fit_memory_bytes < 0
						 ? -1 : fmax(all->smallest_fit_memory_bytes,
							     one->smallest_fit_memory_bytes);
	all->smallest_need_bytes = fmax(all->smallest_need_bytes, one->smallest_need_bytes);
	all->largest_gpu_bytes = fmax(all->largest_gpu_bytes, one->largest_gpu_bytes);
	if (one->have_over_max && !all->have_over_max) {
		all->over_max = one->over_max;
		all->have_over_max = 1;
	}
	all->offload_searched |= one->offload_searched;
	all->all_one_node_network &= one->all_one_node_network;
	if (one->smallest_host_need_bytes > all->smallest_host_need_bytes) {
		all->smallest_host_need_bytes = one->smallest_host_need_bytes;
		all->host_capacity_bytes = one->host_capacity_bytes;
	}
}

/* ---- the work shared by plan_run's steps ---------------------------------- */

struct run {
	const struct plan_job *jobs;
	size_t n_jobs;
	const struct price_catalog *cat;
	const struct plan_opts *o;
	enum plan_objective objective;
	struct plan_candidate *cands;  /* all jobs' frontier columns */
	size_t n_cands;
	struct plan_column *cols;      /* parallel to cands */
	int *avail;                    /* GPUs per availability group:
					* offerings, then the user's quotas
					* (availability_group) */
	int n_groups;
	double *priority, *deadline;   /* per job */
	struct plan_milp milp;
	struct plan_result *out;
};

/* The MILP's availability group of offering of: the user's quota on it,
 * which every offering it bounds shares (concurrent jobs together stay
 * within it), else the offering itself.  Both count GPUs. */
static int availability_group(const struct price_catalog *cat, const struct price_offering *of)
{
	if (of->quota)
		return (int)(cat->n_offers + (size_t)(of->quota - cat->quotas));
	return (int)(of - cat->offers);
}

static void run_release(struct run *r)
{
	free(r->cands);
	free(r->cols);
	free(r->avail);
	free(r->priority);
	free(r->deadline);
}

static void rows_push(struct plan_result *out, const struct plan_row *row)
{
	out->rows = xrealloc(out->rows, (out->n_rows + 1) * sizeof(*out->rows));
	out->rows[out->n_rows++] = *row;
}

/* Appends the rows of one MILP answer; phases of a job go cheapest rate
 * first (spot capacity first, then the dearer plan that meets the
 * deadline).  Returns the count appended. */
static size_t rows_from_solution(struct run *r, const struct plan_milp_solution *sol, int rank)
{
	size_t added = 0;

	for (size_t j = 0; j < r->n_jobs; j++) {
		size_t idx[2];
		int k = 0;

		for (size_t i = 0; i < r->n_cands && k < 2; i++)
			if (sol->used[i] && r->cols[i].job == (int)j)
				idx[k++] = i;
		if (k == 2 && r->cands[idx[1]].usd_per_hour < r->cands[idx[0]].usd_per_hour) {
			size_t t = idx[0];

			idx[0] = idx[1];
			idx[1] = t;
		}
		for (int p = 0; p < k; p++) {
			struct plan_row row;

			memset(&row, 0, sizeof(row));
			row.rank = rank;
			row.job = (int)j;
			row.phase = p + 1;
			row.fraction = sol->frac[idx[p]];
			row.c = r->cands[idx[p]];
			rows_push(r->out, &row);
			added++;
		}
	}
	return added;
}

/* Heuristic reasons read off one plan when no constraint of the MILP is
 * what decided it. */
static enum plan_binding binding_from_plan(const struct run *r, const struct plan_candidate *c)
{
	const struct plan_filter *f = &r->o->filter;
	int gpus = c->nodes * c->cluster.gpus_per_node;

	if (r->objective == PLAN_OBJECTIVE_TIME) {
		if (c->max_nodes_hit)
			return PLAN_BINDING_AVAILABILITY;
		if ((long)gpus * 2 > f->max_gpus)
			return PLAN_BINDING_MAX_GPUS;
		if ((long)c->par.dp * c->par.mbs >= c->par.gbs)
			return PLAN_BINDING_BATCH;
		if (c->nofit_step_s > 0 && c->nofit_step_s < c->res.step_time_s)
			return PLAN_BINDING_MEMORY;
	} else if (c->smaller_nofit) {
		return PLAN_BINDING_MEMORY;
	}
	return PLAN_BINDING_NONE;
}

/* An alternative's binding: a better plan on the same offering and rate
 * that a constraint rules out, else what the plan itself shows. */
static enum plan_binding binding_of_alternative(const struct run *r, const struct plan_row *row)
{
	const struct plan_candidate *c = &row->c;
	double dl = r->deadline[row->job];
	enum plan_binding b = PLAN_BINDING_NONE;

	for (size_t i = 0; i < r->n_cands && b == PLAN_BINDING_NONE; i++) {
		const struct plan_candidate *d = &r->cands[i];
		int better;

		if (r->cols[i].job != row->job || d->offering != c->offering ||
		    d->purchase != c->purchase)
			continue;
		better = r->objective == PLAN_OBJECTIVE_TIME ? d->time_s < c->time_s
							     : d->cost_usd < c->cost_usd;
		if (!better)
			continue;
		if (r->o->budget_usd >= 0 && d->cost_usd > r->o->budget_usd)
			b = PLAN_BINDING_BUDGET;
		else if (r->o->hourly_budget_usd >= 0 && d->usd_per_hour > r->o->hourly_budget_usd)
			b = PLAN_BINDING_HOURLY_BUDGET;
		else if (dl > 0 && d->time_s > dl)
			b = PLAN_BINDING_DEADLINE;
	}
	return b != PLAN_BINDING_NONE ? b : binding_from_plan(r, c);
}

/* The answer's binding: the first constraint whose removal gives a
 * strictly better optimum; else what the plan shows. */
static enum plan_binding binding_of_answer(struct run *r, double objective,
					   const struct plan_candidate *main)
{
	enum plan_binding kinds[] = { PLAN_BINDING_BUDGET, PLAN_BINDING_HOURLY_BUDGET,
				      PLAN_BINDING_DEADLINE, PLAN_BINDING_AVAILABILITY };
	int any_avail = 0;

	for (int i = 0; i < r->n_groups; i++)
		any_avail |= r->avail[i] > 0;
	for (size_t k = 0; k < GP_ARRAY_LEN(kinds); k++) {
		struct plan_milp m = r->milp;
		struct plan_milp_solution sol;
		int *no_avail = NULL;
		enum rc rc;
		int better;

		m.dump_lp_path = NULL;
		switch (kinds[k]) {
		case PLAN_BINDING_BUDGET:
			if (m.budget_usd < 0)
				continue;
			m.budget_usd = -1;
			break;
		case PLAN_BINDING_HOURLY_BUDGET:
			if (m.hourly_budget_usd < 0)
				continue;
			m.hourly_budget_usd = -1;
			break;
		case PLAN_BINDING_DEADLINE:
			if (r->objective != PLAN_OBJECTIVE_COST)
				continue;
			m.deadline_s = NULL;
			break;
		default:
			if (!any_avail)
				continue;
			no_avail = xcalloc((size_t)r->n_groups, sizeof(int));
			m.avail_nodes = no_avail;
			break;
		}
		rc = plan_milp_solve(&m, &sol);
		r->out->stats.milp_solves++;
		r->out->stats.milp_s += rc == RC_OK ? sol.solve_s : 0;
		free(no_avail);
		if (rc != RC_OK)
			continue;
		better = sol.objective < objective * (1 - 1e-9);
		plan_milp_solution_release(&sol);
		if (better)
			return kinds[k];
	}
	return binding_from_plan(r, main);
}

/* Re-simulates c on a changed cluster and re-prices it. */
static int resimulate(const struct plan_job *job, const struct plan_opts *o,
		      struct plan_candidate *c)
{
	if (sim_check(&job->model, &c->par, &c->cluster, NULL, 0) != RC_OK)
		return -1;
	sim_step(&job->model, &c->par, &c->cluster, &c->res);
	return plan_candidate_price(c, job, o);
}

/* What-ifs and the event-driven replay for one row. */
static void row_recheck(const struct plan_job *job, const struct plan_opts *o,
			struct plan_row *row)
{
	struct plan_candidate c;
	struct sim_event_result er;
	double f = o->sensitivity;

	row->sens_bw_time_s = row->sens_bw_cost_usd = NAN;
	row->sens_flops_time_s = row->sens_flops_cost_usd = NAN;
	c = row->c;
	if (c.nodes == 1) {
		/* No inter-node traffic: bandwidth does not matter. */
		row->sens_bw_time_s = c.time_s * row->fraction;
		row->sens_bw_cost_usd = c.cost_usd * row->fraction;
	} else if (c.cluster.inter_bytes_per_s > 0) {
		c.cluster.inter_bytes_per_s *= f;
		if (resimulate(job, o, &c) == 0) {
			row->sens_bw_time_s = c.time_s * row->fraction;
			row->sens_bw_cost_usd = c.cost_usd * row->fraction;
		}
	}
	c = row->c;
	c.cluster.gpu.bf16_flops_per_s *= f;
	c.cluster.gpu.fp8_flops_per_s *= f;
	c.cluster.gpu.tf32_flops_per_s *= f;
	c.cluster.gpu.fp32_flops_per_s *= f;
	if (resimulate(job, o, &c) == 0) {
		row->sens_flops_time_s = c.time_s * row->fraction;
		row->sens_flops_cost_usd = c.cost_usd * row->fraction;
	}
	memset(&er, 0, sizeof(er));
	if (sim_event_simulate(&job->model, &row->c.par, &row->c.cluster, 0, &er, NULL, NULL,
			       NULL, 0) == RC_OK)
		row->replay_step_s = er.step_time_s;
	sim_event_result_release(&er);
}

/* Why nothing was chosen, as one line, from the nearest feasible figures. */
static void explain_infeasible(struct run *r)
{
	struct plan_result *out = r->out;
	const struct plan_nearest *n = &out->nearest;
	const struct plan_opts *o = r->o;
	char a[32], b[32];

	if (o->budget_usd >= 0 && n->cheapest_cost_usd >= 0 && o->budget_usd < n->cheapest_cost_usd) {
		snprintf(out->why, sizeof(out->why),
			 "the budget %s is below the cheapest plan's cost %s",
			 unit_fmt_usd(a, sizeof(a), o->budget_usd),
			 unit_fmt_usd(b, sizeof(b), n->cheapest_cost_usd));
		return;
	}
	if (o->hourly_budget_usd >= 0 && n->lowest_usd_per_hour >= 0 &&
	    o->hourly_budget_usd < n->lowest_usd_per_hour) {
		snprintf(out->why, sizeof(out->why),
			 "the hourly budget %s/h is below the cheapest cluster's rate %s/h",
			 unit_fmt_usd(a, sizeof(a), o->hourly_budget_usd),
			 unit_fmt_usd(b, sizeof(b), n->lowest_usd_per_hour));
		return;
	}
	for (size_t j = 0; j < r->n_jobs; j++) {
		double dl = r->deadline[j], fastest = -1;

		if (dl <= 0)
			continue;
		for (size_t i = 0; i < r->n_cands; i++)
			if (r->cols[i].job == (int)j && (fastest < 0 || r->cands[i].time_s < fastest))
				fastest = r->cands[i].time_s;
		if (fastest > dl) {
			snprintf(out->why, sizeof(out->why),
				 "%s: the deadline %s is shorter than the fastest plan's %s",
				 r->jobs[j].name, unit_fmt_duration(a, sizeof(a), dl),
				 unit_fmt_duration(b, sizeof(b), fastest));
			return;
		}
	}
	if (n->have_over_max)
		snprintf(out->why, sizeof(out->why),
			 "no plan within --max-duration %s meets the budget, deadline and availability "
			 "together; faster plans need more GPUs than are offered",
			 unit_fmt_duration(a, sizeof(a), o->max_duration_s));
	else
		snprintf(out->why, sizeof(out->why),
			 "no choice of plans meets the budget, deadline and availability together");
}

/* Nothing could even be simulated into a fitting plan. */
static void explain_nothing_fits(struct run *r, size_t j)
{
	struct plan_result *out = r->out;
	const struct plan_nearest *n = &out->nearest;
	char a[32], b[32];

	if (out->stats.offerings == 0) {
		snprintf(out->why, sizeof(out->why), "%s: no offering passes the filters",
			 r->jobs[j].name);
	} else if (out->stats.simulated == 0) {
		snprintf(out->why, sizeof(out->why),
			 "%s: no parallel configuration is possible within the GPU limits and the global batch",
			 r->jobs[j].name);
	} else if (n->have_over_max) {
		const struct plan_candidate *c = &n->over_max;
		int spot = c->spot && !(r->o->max_duration_s > 0 && c->time_s > r->o->max_duration_s);
		char lim[32];

		unit_fmt_duration(lim, sizeof(lim), spot ? r->o->max_spot_duration_s
							 : r->o->max_duration_s);
		snprintf(out->why, sizeof(out->why), "%s: every plan that fits lasts longer than %s%s): "
			 "the fastest takes %s on %d GPUs", r->jobs[j].name,
			 spot ? "a spot fleet is held (--max-spot-duration "
			      : "a plan may (--max-duration ", lim,
			 unit_fmt_duration(a, sizeof(a), c->time_s),
			 c->nodes * c->cluster.gpus_per_node);
	} else if (n->smallest_fit_memory_bytes >= 0) {
		/* plan_candidate_price refused every fitting plan */
		snprintf(out->why, sizeof(out->why),
			 "%s: plans fit in GPU memory, but none can be bought: the job outlasts the "
			 "longest term of every capacity block that fits it, or interruptions "
			 "would waste half its time", r->jobs[j].name);
	} else if (n->smallest_host_need_bytes > 0 &&
		   n->smallest_need_bytes <= n->largest_gpu_bytes) {
		/* offload fitted the GPUs; the host's memory bound it */
		snprintf(out->why, sizeof(out->why),
			 "%s: no configuration fits in host memory: with offload the most frugal "
			 "that fits the GPUs needs %s of host memory a node, the host has %s",
			 r->jobs[j].name, unit_fmt_bytes(a, sizeof(a), n->smallest_host_need_bytes),
			 unit_fmt_bytes(b, sizeof(b), n->host_capacity_bytes));
	} else {
		snprintf(out->why, sizeof(out->why),
			 "%s: no configuration fits in GPU memory: the most frugal needs %s per GPU, the largest GPU considered has %s%s",
			 r->jobs[j].name, unit_fmt_bytes(a, sizeof(a), n->smallest_need_bytes),
			 unit_fmt_bytes(b, sizeof(b), n->largest_gpu_bytes),
			 n->all_one_node_network
				 ? ", on one node: no offering considered has a cluster network figure"
				 : "");
	}
}

static double elapsed_s(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (t1.tv_nsec - t0->tv_nsec) * 1e-9;
}

/* The row's objective with its time scaled by the event-driven replay
 * (which overlaps pipeline transfers the analytic model counts in full);
 * the analytic figure where the replay could not run.  Rental cost is
 * proportional to time, so both objectives scale alike. */
static double replayed_objective(const struct plan_row *row, enum plan_objective obj)
{
	double f = 1;

	if (row->replay_step_s > 0 && row->c.res.step_time_s > 0)
		f = row->replay_step_s / row->c.res.step_time_s;
	return (obj == PLAN_OBJECTIVE_COST ? row->c.cost_usd : row->c.time_s) * f;
}

struct keyed_row {
	double key;
	struct plan_row row;
};

static int by_key_then_rank(const void *pa, const void *pb)
{
	const struct keyed_row *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->row.rank - b->row.rank; /* keep the MILP's order on ties */
}

/* Re-ranks the alternatives (rows after the answer) by their replayed
 * objective, as DESIGN.md's step 5 asks.  The answer itself stays: the
 * MILP proved it satisfies every constraint. */
static void rerank_by_replay(struct plan_result *out)
{
	size_t n = out->n_rows - 1;
	struct keyed_row *k;

	if (out->n_rows < 3)
		return;
	k = xmalloc(n * sizeof(*k));
	for (size_t i = 0; i < n; i++) {
		k[i].row = out->rows[i + 1];
		k[i].key = replayed_objective(&k[i].row, out->objective);
	}
	qsort(k, n, sizeof(*k), by_key_then_rank);
	for (size_t i = 0; i < n; i++) {
		out->rows[i + 1] = k[i].row;
		out->rows[i + 1].rank = (int)i + 2;
	}
	free(k);
}

/* Ranks alternatives (one job): re-solve with the offerings already shown
 * excluded, up to o->top answers. */
static enum rc rank_alternatives(struct run *r)
{
	unsigned char *exclude = xcalloc(r->n_cands, 1);
	struct plan_milp m = r->milp;
	enum rc rc = RC_OK;

	m.dump_lp_path = NULL;
	m.exclude = exclude;
	for (int rank = 2; rank <= r->o->top; rank++) {
		struct plan_milp_solution sol;
		size_t before = r->out->n_rows;

		/* Shown: the offering and purchase of every row, and the same
		 * thing at the same price in other regions (folded into the
		 * row), so that each alternative is another choice. */
		for (size_t k = 0; k < before; k++)
			for (size_t i = 0; i < r->n_cands; i++)
				if (r->cands[i].purchase == r->out->rows[k].c.purchase &&
				    (r->cands[i].offering == r->out->rows[k].c.offering ||
				     plan_same_offering(&r->out->rows[k].c, r->cands[i].offering,
							r->o)))
					exclude[i] = 1;
		rc = plan_milp_solve(&m, &sol);
		r->out->stats.milp_solves++;
		if (rc != RC_OK)
			break;
		r->out->stats.milp_s += sol.solve_s;
		rows_from_solution(r, &sol, rank);
		plan_milp_solution_release(&sol);
	}
	free(exclude);
	return rc == RC_INFEASIBLE ? RC_OK : rc;
}

enum rc plan_run(const struct plan_job *jobs, size_t n_jobs,
		 const struct price_catalog *cat, const struct plan_opts *o,
		 struct plan_result *out)
{
	struct run r;
	struct plan_milp_solution sol;
	struct timespec t0;
	enum rc rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(out, 0, sizeof(*out));
	nearest_init(&out->nearest);
	out->opts = *o;
	memset(&r, 0, sizeof(r));
	rc = validate(jobs, n_jobs, o);
	if (rc != RC_OK)
		return rc;
	r.jobs = jobs;
	r.n_jobs = n_jobs;
	r.cat = cat;
	r.o = o;
	r.out = out;
	r.objective = resolve_objective(jobs, n_jobs, o);
	out->objective = r.objective;
	r.priority = xcalloc(n_jobs, sizeof(double));
	r.deadline = xcalloc(n_jobs, sizeof(double));

	/* 1-2. Candidates and each offering's frontier, per job. */
	for (size_t j = 0; j < n_jobs; j++) {
		struct plan_candidate *c;
		struct plan_nearest nj;
		size_t n;

		nearest_init(&nj);
		rc = plan_enumerate(&jobs[j], cat, o, &c, &n, &out->stats, &nj);
		if (rc != RC_OK)
			goto done;
		nearest_merge(&out->nearest, &nj, j == 0);
		r.priority[j] = jobs[j].priority;
		r.deadline[j] = job_deadline(&jobs[j], o);
		if (r.deadline[j] <= 0)
			r.deadline[j] = -1;
		if (n == 0) {
			free(c);
			explain_nothing_fits(&r, j);
			rc = RC_INFEASIBLE;
			goto done;
		}
		r.cands = xrealloc(r.cands, (r.n_cands + n) * sizeof(*r.cands));
		r.cols = xrealloc(r.cols, (r.n_cands + n) * sizeof(*r.cols));
		for (size_t i = 0; i < n; i++) {
			struct plan_column *col = &r.cols[r.n_cands + i];

			r.cands[r.n_cands + i] = c[i];
			col->job = (int)j;
			col->group = availability_group(cat, c[i].offering);
			/* the GPUs it rents, whole units of an UltraServer */
			col->nodes = c[i].billed_nodes * c[i].cluster.gpus_per_node;
			col->time_s = c[i].time_s;
			col->cost_usd = c[i].cost_usd;
			col->usd_per_hour = c[i].usd_per_hour;
			col->budget_usd_per_hour = 0;
			/* A monthly cap counts an up-front payment whole in the
			 * month it is paid, not spread over the term; nothing
			 * is paid in the months after. */
			if (o->monthly_budget && c[i].upfront_usd > 0)
				col->budget_usd_per_hour = c[i].upfront_usd / UNIT_HOURS_PER_MONTH;
		}
		r.n_cands += n;
		free(c);
	}
	out->stats.frontier = r.n_cands;

	/* 3. The MILP. */
	r.n_groups = (int)(cat->n_offers + cat->n_quotas);
	r.avail = xcalloc((size_t)r.n_groups, sizeof(int));
	for (size_t i = 0; i < cat->n_offers; i++) {
		const struct price_offering *of = &cat->offers[i];
		struct price_node_limit lim;

		const struct price_block *b = price_block_find(o->blocks, of);

		/* On demand bounds spot too (the spot bound is per column); a
		 * capacity block may hold more than on-demand is sold by. */
		price_offering_node_limit(of, 0, &lim);
		if (b) {
			struct price_node_limit bl;

			price_block_node_limit(of, b, &bl);
			if (bl.nodes > lim.nodes)
				lim = bl;
		}
		r.avail[i] = (lim.nodes > 0 ? lim.nodes : 1) * (of->gpus_per_node > 0 ? of->gpus_per_node : 1);
	}
	for (size_t q = 0; q < cat->n_quotas; q++)
		r.avail[cat->n_offers + q] = cat->quotas[q].max_gpus > 0 ? cat->quotas[q].max_gpus : 1;
	plan_milp_init(&r.milp);
	r.milp.n_jobs = (int)n_jobs;
	r.milp.priority = r.priority;
	r.milp.deadline_s = r.deadline;
	r.milp.cols = r.cols;
	r.milp.n_cols = r.n_cands;
	r.milp.avail_nodes = r.avail;
	r.milp.n_groups = r.n_groups;
	r.milp.budget_usd = o->budget_usd;
	r.milp.hourly_budget_usd = o->hourly_budget_usd;
	r.milp.objective = r.objective;
	r.milp.phases = o->phases;
	r.milp.switch_s = o->switch_s;
	r.milp.time_limit_s = o->milp_time_limit_s;
	r.milp.dump_lp_path = o->dump_lp_path;
	rc = plan_milp_solve(&r.milp, &sol);
	out->stats.milp_solves++;
	if (rc == RC_INFEASIBLE)
		explain_infeasible(&r);
	if (rc != RC_OK)
		goto done;
	out->stats.milp_s += sol.solve_s;
	out->feasible = 1;
	out->optimal = sol.optimal;
	out->total_cost_usd = sol.cost_usd;
	out->total_usd_per_hour = sol.usd_per_hour;
	for (size_t j = 0; j < n_jobs; j++)
		out->makespan_s = fmax(out->makespan_s, sol.time_s[j]);
	out->n_answer_rows = rows_from_solution(&r, &sol, 1);
	{
		/* The main row: the largest share of the first job. */
		const struct plan_row *main = &out->rows[0];

		for (size_t k = 1; k < out->n_answer_rows; k++)
			if (out->rows[k].job == 0 && out->rows[k].fraction > main->fraction)
				main = &out->rows[k];
		out->binding = binding_of_answer(&r, sol.objective, &main->c);
	}
	plan_milp_solution_release(&sol);
	for (size_t k = 0; k < out->n_answer_rows; k++)
		out->rows[k].binding = out->binding;

	/* 4. Alternatives (one job), then re-simulation of every row. */
	if (n_jobs == 1) {
		rc = rank_alternatives(&r);
		if (rc != RC_OK)
			goto done;
		for (size_t k = out->n_answer_rows; k < out->n_rows; k++)
			out->rows[k].binding = binding_of_alternative(&r, &out->rows[k]);
	}
	for (size_t k = 0; k < out->n_rows; k++) {
		row_recheck(&jobs[out->rows[k].job], o, &out->rows[k]);
		for (size_t i = 0; i < cat->n_offers; i++)
			out->rows[k].folded_regions +=
				plan_same_offering(&out->rows[k].c, &cat->offers[i], o);
	}
	if (n_jobs == 1 && out->n_answer_rows == 1)
		rerank_by_replay(out);
	rc = RC_OK;
done:
	run_release(&r);
	out->stats.total_s = elapsed_s(&t0);
	return rc;
}

static int by_time_then_cost(const void *pa, const void *pb)
{
	const struct plan_candidate *a = pa, *b = pb;

	if (a->time_s != b->time_s)
		return a->time_s < b->time_s ? -1 : 1;
	return a->cost_usd < b->cost_usd ? -1 : a->cost_usd > b->cost_usd;
}

enum rc plan_frontier(const struct plan_job *job, const struct price_catalog *cat,
		      const struct plan_opts *o, struct plan_candidate **out,
		      size_t *n, struct plan_stats *stats, struct plan_nearest *nearest)
{
	struct plan_candidate *c;
	struct plan_nearest nn;
	struct plan_stats st;
	size_t k = 0, m;
	enum rc rc;

	*out = NULL;
	*n = 0;
	memset(&st, 0, sizeof(st));
	nearest_init(&nn);
	rc = validate(job, 1, o);
	if (rc != RC_OK)
		return rc;
	rc = plan_enumerate(job, cat, o, &c, &m, &st, &nn);
	if (stats)
		*stats = st;
	if (nearest)
		*nearest = nn;
	if (rc != RC_OK)
		return rc;
	if (m == 0) {
		free(c);
		return RC_INFEASIBLE;
	}
	/* Across offerings only time and cost count. */
	qsort(c, m, sizeof(*c), by_time_then_cost);
	for (size_t i = 0; i < m; i++)
		if (k == 0 || c[i].cost_usd < c[k - 1].cost_usd)
			c[k++] = c[i];
	*out = c;
	*n = k;
	return RC_OK;
}
