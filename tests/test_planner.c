/*
 * test_planner.c - the planner: the GLPK MILP against exhaustive search on
 * random small instances (one phase with several jobs sharing budget and
 * availability, two phases), its guarantees (never over budget, deadline
 * or availability; more budget never slower), GLPK's error hook, the spot
 * interruption model, Pareto pruning, and the whole pipeline on an inline
 * catalog (zero budget, one GPU, a model that fits nowhere, context
 * parallelism searched for long sequences), and for models with experts
 * the expert layouts searched only where legal, the offering's NVLink
 * domain, the precision and the frameworks' MoE rules, with a dense
 * answer kept as it was.
 */
#include "testutil.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan.h"
#include "plan_internal.h"
#include "plan_published.h"
#include "sim_comm.h"

/* ---- a small deterministic generator (tests must not depend on libc's
 * rand() sequence) -------------------------------------------------------- */

static uint64_t rng_state;

static void rng_seed(uint64_t s) { rng_state = s * 2654435761u + 1; }

static double rng_unit(void)
{
	/* xorshift64* (Vigna 2016) */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (double)((rng_state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

static int rng_int(int lo, int hi) { return lo + (int)(rng_unit() * (hi - lo + 1)); }

/* ---- exhaustive search over the same columns ----------------------------- */

#define MAX_COLS 32
#define MAX_JOBS 4
#define TOL 1e-9

struct exh {
	int found;
	double primary, secondary;
};

static double prio(const struct plan_milp *m, int j) { return m->priority ? m->priority[j] : 1; }
static double deadline(const struct plan_milp *m, int j) { return m->deadline_s ? m->deadline_s[j] : -1; }

static void exh_offer(struct exh *e, double primary, double secondary)
{
	if (!e->found || primary < e->primary * (1 - 1e-12) ||
	    (primary <= e->primary * (1 + 1e-12) && secondary < e->secondary)) {
		e->found = 1;
		e->primary = primary;
		e->secondary = secondary;
	}
}

/* One phase: every assignment of one column per job. */
static void exh_one_phase(const struct plan_milp *m, int j, int *pick, struct exh *e)
{
	if (j == m->n_jobs) {
		double cost = 0, rate = 0, wtime = 0;
		int used[MAX_COLS] = { 0 };

		for (int k = 0; k < m->n_jobs; k++) {
			const struct plan_column *c = &m->cols[pick[k]];

			cost += c->cost_usd;
			rate += c->usd_per_hour;
			wtime += prio(m, k) * c->time_s;
			if (deadline(m, k) >= 0 && c->time_s > deadline(m, k) * (1 + TOL))
				return;
			if (c->group >= 0)
				used[c->group] += c->nodes;
		}
		if (m->budget_usd >= 0 && cost > m->budget_usd * (1 + TOL))
			return;
		if (m->hourly_budget_usd >= 0 && rate > m->hourly_budget_usd * (1 + TOL))
			return;
		for (int g = 0; g < m->n_groups; g++)
			if (m->avail_nodes[g] > 0 && used[g] > m->avail_nodes[g])
				return;
		if (m->objective == PLAN_OBJECTIVE_TIME)
			exh_offer(e, wtime, cost);
		else
			exh_offer(e, cost, wtime);
		return;
	}
	for (size_t i = 0; i < m->n_cols; i++)
		if (m->cols[i].job == j && !(m->exclude && m->exclude[i])) {
			pick[j] = (int)i;
			exh_one_phase(m, j + 1, pick, e);
		}
}

/* Two phases, one job: every single column, and every pair (a, b) with the
 * share f on a; time and cost are linear in f, so the optimum over the
 * feasible interval of f is at one of its ends. */
static void exh_two_phase(const struct plan_milp *m, struct exh *e)
{
	double s = m->switch_s;

	for (size_t a = 0; a < m->n_cols; a++) {
		const struct plan_column *A = &m->cols[a];

		if (m->exclude && m->exclude[a])
			continue;
		for (size_t b = a; b < m->n_cols; b++) {
			const struct plan_column *B = &m->cols[b];
			double lo = 0, hi = 1, rate, sw_t, sw_c;
			/* constraint rows: alpha f <= beta */
			double alpha[2], beta[2];
			int nrow = 0;

			if (m->exclude && m->exclude[b])
				continue;
			if (a == b) {
				lo = hi = 1;
				rate = A->usd_per_hour;
				sw_t = sw_c = 0;
			} else {
				rate = fmax(A->usd_per_hour, B->usd_per_hour);
				sw_t = s;
				sw_c = plan_switch_cost_usd(s, rate);
			}
			if (m->hourly_budget_usd >= 0 && rate > m->hourly_budget_usd * (1 + TOL))
				continue;
			if (A->group >= 0 && m->avail_nodes[A->group] > 0 &&
			    A->nodes > m->avail_nodes[A->group])
				continue;
			if (B->group >= 0 && m->avail_nodes[B->group] > 0 &&
			    B->nodes > m->avail_nodes[B->group])
				continue;
			/* time(f) = Tb + f (Ta - Tb) + sw_t; cost likewise */
			if (m->budget_usd >= 0) {
				alpha[nrow] = A->cost_usd - B->cost_usd;
				beta[nrow++] = m->budget_usd * (1 + TOL) - B->cost_usd - sw_c;
			}
			if (deadline(m, 0) >= 0) {
				alpha[nrow] = A->time_s - B->time_s;
				beta[nrow++] = deadline(m, 0) * (1 + TOL) - B->time_s - sw_t;
			}
			for (int r = 0; r < nrow; r++) {
				if (alpha[r] > 0)
					hi = fmin(hi, beta[r] / alpha[r]);
				else if (alpha[r] < 0)
					lo = fmax(lo, beta[r] / alpha[r]);
				else if (beta[r] < 0)
					hi = -1;
			}
			if (lo > hi)
				continue;
			for (int end = 0; end < 2; end++) {
				double f = end ? hi : lo;
				double t = B->time_s + f * (A->time_s - B->time_s) + sw_t;
				double c = B->cost_usd + f * (A->cost_usd - B->cost_usd) + sw_c;

				if (a == b) {
					t = A->time_s;
					c = A->cost_usd;
				}
				if (m->objective == PLAN_OBJECTIVE_TIME)
					exh_offer(e, prio(m, 0) * t, c);
				else
					exh_offer(e, c, prio(m, 0) * t);
			}
		}
	}
}

/* Checks a MILP solution against every constraint of m. */
static void assert_solution_feasible(const struct plan_milp *m,
				     const struct plan_milp_solution *sol)
{
	int used_by_group[MAX_COLS] = { 0 };
	int per_job[MAX_JOBS] = { 0 };
	double share[MAX_JOBS] = { 0 };
	int nodes_max[MAX_JOBS][MAX_COLS];

	memset(nodes_max, 0, sizeof(nodes_max));
	for (size_t i = 0; i < m->n_cols; i++) {
		const struct plan_column *c = &m->cols[i];

		if (!sol->used[i])
			continue;
		assert_true(!(m->exclude && m->exclude[i]));
		per_job[c->job]++;
		share[c->job] += sol->frac[i];
		if (c->group >= 0 && c->nodes > nodes_max[c->job][c->group])
			nodes_max[c->job][c->group] = c->nodes;
	}
	for (int j = 0; j < m->n_jobs; j++) {
		assert_true(per_job[j] >= 1 && per_job[j] <= m->phases);
		assert_near(share[j], 1.0, 1e-9);
		if (deadline(m, j) >= 0)
			assert_true(sol->time_s[j] <= deadline(m, j) * (1 + 1e-6));
		for (int g = 0; g < m->n_groups; g++)
			used_by_group[g] += nodes_max[j][g];
	}
	for (int g = 0; g < m->n_groups; g++)
		if (m->avail_nodes[g] > 0)
			assert_true(used_by_group[g] <= m->avail_nodes[g]);
	if (m->budget_usd >= 0)
		assert_true(sol->cost_usd <= m->budget_usd * (1 + 1e-6));
	if (m->hourly_budget_usd >= 0)
		assert_true(sol->usd_per_hour <= m->hourly_budget_usd * (1 + 1e-6));
}

/* A random instance: n_jobs jobs, 2..per_job columns each on 1..3
 * offerings, consistent costs (time x rate) with noise. */
struct instance {
	struct plan_milp m;
	struct plan_column cols[MAX_COLS];
	double priority[MAX_JOBS], deadline[MAX_JOBS];
	int avail[MAX_COLS];
	unsigned char exclude[MAX_COLS];
};

static void instance_random(struct instance *in, int n_jobs, int per_job, int phases)
{
	double cost_sum = 0, time_sum = 0;
	size_t n = 0;

	memset(in, 0, sizeof(*in));
	plan_milp_init(&in->m);
	in->m.n_jobs = n_jobs;
	in->m.n_groups = rng_int(1, 3);
	for (int g = 0; g < in->m.n_groups; g++)
		in->avail[g] = rng_unit() < 0.3 ? 0 : rng_int(2, 12);
	for (int j = 0; j < n_jobs; j++) {
		int k = rng_int(2, per_job);
		double jc = 0, jt = 0;

		for (int i = 0; i < k; i++) {
			struct plan_column *c = &in->cols[n++];
			double rate_per_node = 5 + 95 * rng_unit();

			c->job = j;
			c->group = rng_int(-1, in->m.n_groups - 1);
			c->nodes = rng_int(1, 8);
			c->time_s = 3600 * (10 + 2000 * rng_unit()) / c->nodes;
			c->usd_per_hour = rate_per_node * c->nodes;
			c->cost_usd = c->time_s / 3600 * c->usd_per_hour * (0.8 + 0.4 * rng_unit());
			jc += c->cost_usd / k;
			jt += c->time_s / k;
		}
		in->priority[j] = rng_int(1, 4);
		in->deadline[j] = rng_unit() < 0.5 ? -1 : jt * (0.3 + 1.2 * rng_unit());
		cost_sum += jc;
		time_sum += jt;
	}
	for (size_t i = 0; i < n; i++)
		in->exclude[i] = rng_unit() < 0.1;
	in->m.cols = in->cols;
	in->m.n_cols = n;
	in->m.priority = in->priority;
	in->m.deadline_s = in->deadline;
	in->m.avail_nodes = in->avail;
	in->m.exclude = in->exclude;
	in->m.phases = phases;
	in->m.switch_s = rng_unit() < 0.2 ? 0 : 3600 * rng_unit();
	in->m.budget_usd = rng_unit() < 0.2 ? -1 : cost_sum * (0.4 + 1.2 * rng_unit());
	in->m.hourly_budget_usd = rng_unit() < 0.7 ? -1 : 100 + 800 * rng_unit() * n_jobs;
	in->m.objective = rng_unit() < 0.5 ? PLAN_OBJECTIVE_TIME : PLAN_OBJECTIVE_COST;
	(void)time_sum;
}

/* Solves in with GLPK and by exhaustion; the optima must agree. */
static void check_instance(struct instance *in, int *n_feasible)
{
	struct plan_milp_solution sol;
	struct exh e = { 0 };
	int pick[MAX_JOBS];
	enum rc rc;

	if (in->m.phases == 1)
		exh_one_phase(&in->m, 0, pick, &e);
	else
		exh_two_phase(&in->m, &e);
	rc = plan_milp_solve(&in->m, &sol);
	if (!e.found) {
		assert_int_equal(rc, RC_INFEASIBLE);
		return;
	}
	assert_int_equal(rc, RC_OK);
	(*n_feasible)++;
	assert_true(sol.optimal);
	assert_near(sol.objective, e.primary, 1e-6);
	assert_solution_feasible(&in->m, &sol);
	plan_milp_solution_release(&sol);
}

/* 150 random one-phase instances with 1..3 jobs that share the budget,
 * the hourly budget and each offering's availability. */
static void test_plan_milp_solve_matches_exhaustive_one_phase(void **state)
{
	struct instance in;
	int feasible = 0;

	(void)state;
	rng_seed(1);
	for (int t = 0; t < 150; t++) {
		instance_random(&in, rng_int(1, 3), 6, 1);
		check_instance(&in, &feasible);
	}
	/* The generator must produce both outcomes, or the test proves little. */
	assert_true(feasible > 40 && feasible < 150);
}

/* 100 random two-phase instances (one job, fractions over up to two
 * columns, switch time and cost). */
static void test_plan_milp_solve_matches_exhaustive_two_phase(void **state)
{
	struct instance in;
	int feasible = 0;

	(void)state;
	rng_seed(2);
	for (int t = 0; t < 100; t++) {
		instance_random(&in, 1, 8, 2);
		check_instance(&in, &feasible);
	}
	assert_true(feasible > 30 && feasible < 100);
}

/* Two phases mix a slow cheap column and a fast dear one to meet a
 * deadline neither cheap column meets alone: spot 100 h at $10/h ($1000),
 * on-demand 40 h at $50/h ($2000), deadline 70 h, no switch time.  f on
 * spot: 100 f + 40 (1 - f) = 70 -> f = 0.5; cost 500 + 1000 = $1500, less
 * than on-demand alone. */
static void test_plan_milp_solve_two_phase_meets_deadline(void **state)
{
	struct plan_column cols[2] = {
		{ .job = 0, .group = -1, .nodes = 1, .time_s = 100 * 3600.0,
		  .cost_usd = 1000, .usd_per_hour = 10 },
		{ .job = 0, .group = -1, .nodes = 1, .time_s = 40 * 3600.0,
		  .cost_usd = 2000, .usd_per_hour = 50 },
	};
	double dl = 70 * 3600.0;
	struct plan_milp m;
	struct plan_milp_solution sol;

	(void)state;
	plan_milp_init(&m);
	m.n_jobs = 1;
	m.cols = cols;
	m.n_cols = 2;
	m.deadline_s = &dl;
	m.objective = PLAN_OBJECTIVE_COST;
	m.phases = 2;
	m.switch_s = 0;
	assert_int_equal(plan_milp_solve(&m, &sol), RC_OK);
	assert_near(sol.frac[0], 0.5, 1e-6);
	assert_near(sol.cost_usd, 1500, 1e-6);
	assert_near(sol.time_s[0], dl, 1e-6);
	plan_milp_solution_release(&sol);
	/* With one phase only on-demand meets the deadline: $2000. */
	m.phases = 1;
	assert_int_equal(plan_milp_solve(&m, &sol), RC_OK);
	assert_int_equal(sol.used[1], 1);
	assert_near(sol.cost_usd, 2000, 1e-9);
	plan_milp_solution_release(&sol);
}

/* A larger budget never gives a slower answer: the feasible set only
 * grows.  Sweep the budget upward on random 2-job instances. */
static void test_plan_milp_solve_budget_monotone(void **state)
{
	struct instance in;

	(void)state;
	rng_seed(3);
	for (int t = 0; t < 20; t++) {
		double prev = DBL_MAX;

		instance_random(&in, 2, 6, 1);
		in.m.objective = PLAN_OBJECTIVE_TIME;
		in.m.hourly_budget_usd = -1;
		for (int k = 1; k <= 6; k++) {
			struct plan_milp_solution sol;

			in.m.budget_usd = 2000.0 * k * k;
			if (plan_milp_solve(&in.m, &sol) != RC_OK)
				continue;
			assert_true(sol.objective <= prev * (1 + 1e-9));
			prev = sol.objective;
			plan_milp_solution_release(&sol);
		}
	}
}

/* Two jobs want the same offering, which has 8 nodes: each job's fastest
 * column takes 6 nodes, so one of them must fall back.  Job 0 has priority
 * 3, so it keeps the fast column: 3 x 10 + 1 x 30 = 60 h beats
 * 3 x 20 + 1 x 12 = 72 h. */
static void test_plan_milp_solve_shared_availability(void **state)
{
	struct plan_column cols[4] = {
		{ .job = 0, .group = 0, .nodes = 6, .time_s = 10 * 3600.0, .cost_usd = 600, .usd_per_hour = 60 },
		{ .job = 0, .group = 0, .nodes = 2, .time_s = 20 * 3600.0, .cost_usd = 400, .usd_per_hour = 20 },
		{ .job = 1, .group = 0, .nodes = 6, .time_s = 12 * 3600.0, .cost_usd = 720, .usd_per_hour = 60 },
		{ .job = 1, .group = 0, .nodes = 2, .time_s = 30 * 3600.0, .cost_usd = 600, .usd_per_hour = 20 },
	};
	double pr[2] = { 3, 1 };
	int avail = 8;
	struct plan_milp m;
	struct plan_milp_solution sol;

	(void)state;
	plan_milp_init(&m);
	m.n_jobs = 2;
	m.priority = pr;
	m.cols = cols;
	m.n_cols = 4;
	m.avail_nodes = &avail;
	m.n_groups = 1;
	assert_int_equal(plan_milp_solve(&m, &sol), RC_OK);
	assert_int_equal(sol.used[0], 1);
	assert_int_equal(sol.used[3], 1);
	assert_near(sol.objective, 60 * 3600.0, 1e-9);
	plan_milp_solution_release(&sol);
	/* With 12 nodes both take the fast column. */
	avail = 12;
	assert_int_equal(plan_milp_solve(&m, &sol), RC_OK);
	assert_int_equal(sol.used[0] + sol.used[2], 2);
	plan_milp_solution_release(&sol);
}

/* A block paid up front counts whole in its month against a monthly cap
 * (plan_column.budget_usd_per_hour), not at its hourly rate: the faster
 * column is cheap by the hour but pays 2000 per 730 h up front. */
static void test_plan_milp_solve_upfront_counts_in_month(void **state)
{
	struct plan_column cols[2] = {
		{ .job = 0, .group = -1, .nodes = 8, .time_s = 10 * 3600.0, .cost_usd = 5000,
		  .usd_per_hour = 500, .budget_usd_per_hour = 2000 },
		{ .job = 0, .group = -1, .nodes = 8, .time_s = 20 * 3600.0, .cost_usd = 20000,
		  .usd_per_hour = 1000 },
	};
	struct plan_milp m;
	struct plan_milp_solution sol;

	(void)state;
	plan_milp_init(&m);
	m.n_jobs = 1;
	m.cols = cols;
	m.n_cols = 2;
	m.hourly_budget_usd = 1500;
	assert_int_equal(plan_milp_solve(&m, &sol), RC_OK);
	assert_int_equal(sol.used[0], 0);
	assert_int_equal(sol.used[1], 1);
	plan_milp_solution_release(&sol);
	/* counted at its rate, it would win */
	cols[0].budget_usd_per_hour = 0;
	assert_int_equal(plan_milp_solve(&m, &sol), RC_OK);
	assert_int_equal(sol.used[0], 1);
	plan_milp_solution_release(&sol);
}

/* Zero budget: nothing costs nothing, so infeasible (never a crash or a
 * GLPK abort); an empty column set is rejected before GLPK sees it. */
static void test_plan_milp_solve_degenerate(void **state)
{
	struct plan_column col = { .job = 0, .group = -1, .nodes = 1, .time_s = 3600,
				   .cost_usd = 10, .usd_per_hour = 10 };
	struct plan_milp m;
	struct plan_milp_solution sol;

	(void)state;
	plan_milp_init(&m);
	m.n_jobs = 1;
	m.cols = &col;
	m.n_cols = 1;
	m.budget_usd = 0;
	assert_int_equal(plan_milp_solve(&m, &sol), RC_INFEASIBLE);
	m.budget_usd = 10;
	assert_int_equal(plan_milp_solve(&m, &sol), RC_OK);
	assert_int_equal(sol.used[0], 1);
	plan_milp_solution_release(&sol);
	m.n_cols = 0;
	assert_int_equal(plan_milp_solve(&m, &sol), RC_INPUT);
	m.n_cols = 1;
	col.time_s = NAN;
	assert_int_equal(plan_milp_solve(&m, &sol), RC_INPUT);
	col.time_s = 3600;
	m.phases = 3;
	assert_int_equal(plan_milp_solve(&m, &sol), RC_INPUT);
}

/* GLPK's error path: an invalid call is caught by the hook, its message
 * captured, RC_ERR returned; GLPK still works afterwards. */
static void test_plan_lp_fault_probe_caught(void **state)
{
	char msg[256];
	struct plan_column col = { .job = 0, .group = -1, .nodes = 1, .time_s = 3600,
				   .cost_usd = 10, .usd_per_hour = 10 };
	struct plan_milp m;
	struct plan_milp_solution sol;

	(void)state;
	assert_int_equal(plan_lp_fault_probe(msg, sizeof(msg)), RC_ERR);
	assert_non_null(strstr(msg, "out of range"));
	plan_milp_init(&m);
	m.n_jobs = 1;
	m.cols = &col;
	m.n_cols = 1;
	assert_int_equal(plan_milp_solve(&m, &sol), RC_OK);
	plan_milp_solution_release(&sol);
}

/* --dump-lp writes CPLEX LP format with the budget row. */
static void test_plan_milp_solve_dump_lp(void **state)
{
	struct instance in;
	struct plan_milp_solution sol;
	char path[] = "/tmp/test_planner_lp_XXXXXX";
	char buf[4096] = "";
	FILE *f;
	int fd;
	size_t n;

	(void)state;
	rng_seed(4);
	instance_random(&in, 2, 4, 1);
	in.m.budget_usd = 1e12;
	in.m.hourly_budget_usd = -1;
	in.m.deadline_s = NULL;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	in.m.dump_lp_path = path;
	assert_int_equal(plan_milp_solve(&in.m, &sol), RC_OK);
	plan_milp_solution_release(&sol);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	unlink(path);
	assert_non_null(strstr(buf, "Minimize"));
	assert_non_null(strstr(buf, "budget:"));
	/* the y columns are integer (GLPK writes 0..1 integers as Generals) */
	assert_non_null(strstr(buf, "Generals"));
}

/* ---- the interruption model and Pareto pruning --------------------------- */

/* Spot, no failures: 1e9 parameters on 10 nodes at 0.01 preemptions per
 * node-hour: MTBF M = 3600 / 0.1 = 36000 s; checkpoint C = 1e9 x 14 B /
 * (10 x 1 GB/s) = 1.4 s; Daly's interval sqrt(2 C M) [1 + sqrt(x) / 3 +
 * x / 9] - C with x = C / 2M = 1.9444e-5: 317.4901573 x 1.0014721 - 1.4
 * = 316.5575 s (Young's sqrt(2 C M) = 317.49 s); over W = 1e6 s of work
 * the wall is W (M / tau) e^(R/M) (e^((tau + C)/M) - 1) = W x 1.0173137:
 * waste 1 - 1 / 1.0173137 = 0.0170190 (Young's first order 0.0171526),
 * and 1.0173137e6 / 36000 = 28.2587 preemptions expected. */
static void test_plan_interrupt_model_spot(void **state)
{
	struct plan_opts o;
	struct plan_interrupt p;

	(void)state;
	plan_opts_init(&o);
	o.failures_per_gpu_hour = 0;
	assert_int_equal(plan_interrupt_model(1e9 * 14, 80, 10, 1, 1e6, &o, &p), 0);
	assert_near(p.mtbf_s, 36000, 1e-12);
	assert_near(p.ckpt_write_s, 1.4, 1e-12);
	assert_near(p.interval_s, 316.5575, 1e-6);
	assert_near(p.waste, 0.0170190, 1e-5);
	assert_near(p.expected, 28.2587, 1e-5);
	assert_false(p.pinned);
	/* 10000 nodes: M = 36 s, shorter than the restart: dropped. */
	assert_int_equal(plan_interrupt_model(1e9 * 14, 80000, 10000, 1, 1e6, &o, &p), -1);
	/* Off spot, nothing interrupts: one checkpoint, at the end, C / W. */
	assert_int_equal(plan_interrupt_model(1e9 * 14, 80, 10, 0, 1e6, &o, &p), 0);
	assert_near(p.interval_s, 1e6, 1e-12);
	assert_near(p.waste, 1 - 1 / (1 + 1.4 / 1e6), 1e-9);
	assert_true(p.expected == 0);
	/* A pinned hour without interruptions: 1 + C / 3600. */
	o.ckpt_interval_s = 3600;
	assert_int_equal(plan_interrupt_model(1e9 * 14, 80, 10, 0, 1e6, &o, &p), 0);
	assert_true(p.pinned);
	assert_near(p.interval_s, 3600, 1e-12);
	assert_near(p.waste, 1 - 1 / (1 + 1.4 / 3600), 1e-9);
	/* None: nothing written, nothing redone. */
	o.ckpt_interval_s = 0;
	assert_int_equal(plan_interrupt_model(1e9 * 14, 80, 10, 0, 1e6, &o, &p), 0);
	assert_true(p.interval_s == 0 && p.waste == 0);
}

/* Daly 2006's own examples (its figs. 3-5): C = 5 min at M = 24 h, 6 h
 * and 15 min gives 117, 57 and 9.1 min.  One GPU failing 1/M per hour. */
static void test_plan_interrupt_model_daly_examples(void **state)
{
	static const double m_h[] = { 24, 6, 0.25 }, tau_min[] = { 117, 57, 9.1 };
	struct plan_opts o;
	struct plan_interrupt p;

	(void)state;
	plan_opts_init(&o);
	for (int i = 0; i < 3; i++) {
		o.failures_per_gpu_hour = 1 / m_h[i];
		o.restart_s = 600;
		/* 300 s of checkpoint on one node at 1 GB/s; Ts = 500 h */
		(void)plan_interrupt_model(300e9, 1, 1, 0, 500 * 3600.0, &o, &p);
		assert_near(p.mtbf_s, m_h[i] * 3600, 1e-12);
		assert_true(fabs(p.interval_s / 60 - tau_min[i]) < 0.5);
	}
}

/* The Llama 3 405B pre-training run (Dubey et al. 2024, sec. 3.3.4): 466
 * interruptions in a 54-day snapshot on 16,384 H100, more than 90%
 * effective training time.  At the default rate 466 / (54 x 24 x 16384)
 * = 2.194628e-5 per GPU-hour, 16,384 GPUs fail once every M = 3600 /
 * (2.194628e-5 x 16384) = 10012.02 s (2.78 h).  A 405e9-parameter
 * checkpoint (14 B/param, 5.67 TB) from 2048 nodes at 1 GB/s takes C =
 * 2.768555 s; Daly's interval: sqrt(2 C M) = 235.452 s, x = C / 2M =
 * 1.38262e-4, tau = 235.452 x 1.0039349 - 2.7686 = 233.610 s.  Wall per
 * work: (M / tau) e^(R/M) (e^((tau + C)/M) - 1) with R = 300 s: 42.8578
 * x 1.030417 x 0.0238904 = 1.0550345, waste 0.0521637: effective
 * training time 94.8% (> 90%).  Work W = 54 d / 1.0550345 = 4.422225e6 s
 * takes the 54 days, in which 54 x 86400 / M = 466.0 interruptions are
 * expected. */
static void test_plan_interrupt_model_llama3_405b(void **state)
{
	struct plan_opts o;
	struct plan_interrupt p;

	(void)state;
	plan_opts_init(&o);
	assert_near(o.failures_per_gpu_hour, 2.194628e-5, 1e-6);
	assert_int_equal(plan_interrupt_model(405e9 * 14, 16384, 2048, 0, 4.422225e6, &o, &p), 0);
	assert_near(p.mtbf_s, 10012.02, 1e-6);
	assert_near(p.ckpt_write_s, 2.768555, 1e-6);
	assert_near(p.interval_s, 233.610, 1e-5);
	assert_near(p.waste, 0.0521637, 1e-5);
	assert_true(1 - p.waste > 0.90);
	assert_near(p.expected, 466.0, 1e-5);
	/* A day on 8 GPUs barely changes: a 8e9-parameter checkpoint (112 s
	 * from one node), M = 2.0505e7 s (237 d), tau = 67697 s: waste
	 * 0.33%, 0.0042 interruptions expected. */
	assert_int_equal(plan_interrupt_model(8e9 * 14, 8, 1, 0, 86400, &o, &p), 0);
	assert_near(p.interval_s, 67697.27, 1e-5);
	assert_near(p.waste, 0.0033161, 1e-4);
	assert_near(p.expected, 0.0042277, 1e-4);
}

static void test_plan_pareto_keeps_undominated(void **state)
{
	struct plan_candidate c[5];

	(void)state;
	memset(c, 0, sizeof(c));
	/* (time, cost, nodes) */
	c[0].time_s = 10; c[0].cost_usd = 100; c[0].nodes = 8;
	c[1].time_s = 20; c[1].cost_usd = 50; c[1].nodes = 4;
	c[2].time_s = 25; c[2].cost_usd = 60; c[2].nodes = 4;   /* dominated by c[1] */
	c[3].time_s = 30; c[3].cost_usd = 55; c[3].nodes = 2;   /* fewer nodes: kept */
	c[4].time_s = 10; c[4].cost_usd = 100; c[4].nodes = 8;  /* duplicate of c[0] */
	assert_int_equal(plan_pareto(c, 5), 3);
	assert_true(c[0].time_s == 10 && c[1].time_s == 20 && c[2].time_s == 30);
}

/* ---- the whole pipeline on an inline catalog ------------------------------- */

/* Two GPUs, four offerings.  Figures are round, not real: what matters is
 * that the pipeline's guarantees hold on any catalog. */
static struct price_gpu test_gpus[2];
static struct price_offering test_offers[4];
static struct price_catalog test_cat;
static struct sim_model test_model;

static void catalog_init(void)
{
	memset(test_gpus, 0, sizeof(test_gpus));
	memset(test_offers, 0, sizeof(test_offers));
	snprintf(test_gpus[0].name, sizeof(test_gpus[0].name), "BIG-80GB");
	test_gpus[0].memory_bytes = 80e9;
	test_gpus[0].hbm_bytes_per_s = 3e12;
	test_gpus[0].bf16_flops_per_s = 1e15;
	test_gpus[0].intra_bytes_per_s = 450e9;
	test_gpus[0].nvlink = 1;
	test_gpus[0].p2p = 1;
	snprintf(test_gpus[1].name, sizeof(test_gpus[1].name), "SMALL-24GB");
	test_gpus[1].memory_bytes = 24e9;
	test_gpus[1].hbm_bytes_per_s = 0.9e12;
	test_gpus[1].bf16_flops_per_s = 0.3e15;
	test_gpus[1].intra_bytes_per_s = 32e9;

	snprintf(test_offers[0].provider, PRICE_NAME_MAX, "acloud");
	snprintf(test_offers[0].instance_type, PRICE_NAME_MAX, "big8");
	snprintf(test_offers[0].gpu, PRICE_NAME_MAX, "BIG-80GB");
	snprintf(test_offers[0].region, PRICE_NAME_MAX, "east");
	test_offers[0].gpus_per_node = 8;
	test_offers[0].on_demand_usd_per_hour = 80;
	test_offers[0].spot_usd_per_hour = 30;
	test_offers[0].inter_node_bytes_per_s = 400e9;
	test_offers[0].max_nodes = 16;
	test_offers[0].spot_capacity_nodes = 16;
	test_offers[1] = test_offers[0];
	snprintf(test_offers[1].region, PRICE_NAME_MAX, "west");
	test_offers[1].on_demand_usd_per_hour = 90;
	test_offers[1].spot_usd_per_hour = -1;
	test_offers[1].max_nodes = 0;
	test_offers[1].capacity_nodes = 512;
	test_offers[2] = test_offers[0];
	snprintf(test_offers[2].instance_type, PRICE_NAME_MAX, "big1");
	test_offers[2].gpus_per_node = 1;
	test_offers[2].on_demand_usd_per_hour = 11;
	test_offers[2].spot_usd_per_hour = -1;
	test_offers[2].max_nodes = 4;
	snprintf(test_offers[3].provider, PRICE_NAME_MAX, "bcloud");
	snprintf(test_offers[3].instance_type, PRICE_NAME_MAX, "small8");
	snprintf(test_offers[3].gpu, PRICE_NAME_MAX, "SMALL-24GB");
	snprintf(test_offers[3].region, PRICE_NAME_MAX, "east");
	test_offers[3].gpus_per_node = 8;
	test_offers[3].on_demand_usd_per_hour = 12;
	test_offers[3].spot_usd_per_hour = 4;
	test_offers[3].inter_node_bytes_per_s = 25e9;
	test_offers[3].capacity_nodes = 512;
	test_offers[3].spot_capacity_nodes = 512;
	memset(&test_cat, 0, sizeof(test_cat));
	test_cat.gpus = test_gpus;
	test_cat.n_gpus = 2;
	test_cat.offers = test_offers;
	test_cat.n_offers = 4;

	/* A 1.3B GPT (24 layers, hidden 2048) */
	memset(&test_model, 0, sizeof(test_model));
	snprintf(test_model.name, sizeof(test_model.name), "gpt-1.3b");
	test_model.layers = 24;
	test_model.hidden = 2048;
	test_model.heads = 16;
	test_model.kv_heads = 16;
	test_model.ffn = 8192;
	test_model.vocab = 50304;
	test_model.seq = 2048;
	test_model.mlp = SIM_MLP_GELU;
	test_model.tied_embeddings = 1;
	test_model.gbs = 256;
}

static void assert_rows_within(const struct plan_result *r, const struct plan_opts *o)
{
	for (size_t i = 0; i < r->n_rows; i++) {
		const struct plan_candidate *c = &r->rows[i].c;

		assert_true(c->res.fits);
		assert_true(c->res.memory.total <= c->res.memory.capacity);
		assert_true(c->nodes * c->cluster.gpus_per_node <= o->filter.max_gpus);
		assert_true(c->nodes * c->cluster.gpus_per_node >= o->filter.min_gpus);
		{
			struct price_node_limit l;

			price_offering_node_limit(c->offering, c->spot, &l);
			assert_true(c->nodes <= l.nodes);
			assert_int_equal(c->limit.nodes, l.nodes);
		}
		if (o->budget_usd >= 0)
			assert_true(c->cost_usd * r->rows[i].fraction <= o->budget_usd * (1 + 1e-9));
		if (o->deadline_s > 0 && r->rows[i].fraction == 1)
			assert_true(c->time_s <= o->deadline_s * (1 + 1e-9));
		/* tp x pp x dp x cp GPUs, the batch exactly covered */
		assert_int_equal(c->par.tp * c->par.pp * c->par.dp * c->par.cp,
				 c->nodes * c->cluster.gpus_per_node);
		assert_int_equal(c->par.mbs * c->par.dp * c->res.grad_accum, c->par.gbs);
	}
	if (r->feasible && o->budget_usd >= 0)
		assert_true(r->total_cost_usd <= o->budget_usd * (1 + 1e-9));
}

static void test_plan_run_within_budget(void **state)
{
	struct plan_job job;
	struct plan_opts o;
	struct plan_result r;

	(void)state;
	catalog_init();
	plan_job_init(&job, &test_model, 100e9);
	plan_opts_init(&o);
	o.budget_usd = 20000;
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &r), RC_OK);
	assert_true(r.feasible);
	assert_int_equal(r.objective, PLAN_OBJECTIVE_TIME);
	assert_true(r.n_rows >= 3);
	assert_int_equal(r.rows[0].rank, 1);
	assert_rows_within(&r, &o);
	/* Alternatives are on other offerings or rates, no faster than the
	 * answer (they were available to the MILP too). */
	for (size_t i = 1; i < r.n_rows; i++) {
		assert_true(r.rows[i].c.offering != r.rows[0].c.offering ||
			    r.rows[i].c.spot != r.rows[0].c.spot);
		assert_true(r.rows[i].c.time_s >= r.rows[0].c.time_s * (1 - 1e-9));
	}
	/* Alternatives are ranked by the event-driven replay: their time
	 * scaled by replayed / analytic step time never decreases. */
	for (size_t i = 2; i < r.n_rows; i++) {
		const struct plan_row *a = &r.rows[i - 1], *b = &r.rows[i];
		double ta = a->c.time_s, tb = b->c.time_s;

		if (a->replay_step_s > 0)
			ta *= a->replay_step_s / a->c.res.step_time_s;
		if (b->replay_step_s > 0)
			tb *= b->replay_step_s / b->c.res.step_time_s;
		assert_true(ta <= tb * (1 + 1e-12));
		assert_int_equal(b->rank, (int)i + 1);
	}
	/* Sensitivity: 20% less FLOP/s is slower, never faster. */
	assert_true(r.rows[0].sens_flops_time_s > r.rows[0].c.time_s);
	assert_true(r.stats.simulated > 0 && r.stats.frontier > 0);
	plan_result_release(&r);
}

/* More budget never gives a slower answer, through the whole pipeline. */
static void test_plan_run_budget_monotone(void **state)
{
	struct plan_job job;
	struct plan_opts o;
	double prev = DBL_MAX;
	int feasible = 0;

	(void)state;
	catalog_init();
	plan_job_init(&job, &test_model, 100e9);
	plan_opts_init(&o);
	o.top = 1;
	for (double b = 500; b <= 200000; b *= 2) {
		struct plan_result r;
		enum rc rc;

		o.budget_usd = b;
		rc = plan_run(&job, 1, &test_cat, &o, &r);
		if (rc == RC_OK) {
			feasible++;
			assert_true(r.makespan_s <= prev * (1 + 1e-9));
			prev = r.makespan_s;
			assert_rows_within(&r, &o);
		} else {
			assert_int_equal(rc, RC_INFEASIBLE);
			assert_int_equal(feasible, 0); /* once feasible, stays feasible */
		}
		plan_result_release(&r);
	}
	assert_true(feasible >= 5);
}

/* Zero budget: exit status 3's case, with the cheapest plan's cost as the
 * nearest answer. */
static void test_plan_run_zero_budget_infeasible(void **state)
{
	struct plan_job job;
	struct plan_opts o;
	struct plan_result r;

	(void)state;
	catalog_init();
	plan_job_init(&job, &test_model, 100e9);
	plan_opts_init(&o);
	o.budget_usd = 0;
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &r), RC_INFEASIBLE);
	assert_false(r.feasible);
	assert_non_null(strstr(r.why, "budget"));
	assert_true(r.nearest.cheapest_cost_usd > 0);
	assert_true(r.nearest.fastest_time_s > 0);
	assert_true(r.nearest.smallest_fit_memory_bytes == 24e9);
	plan_result_release(&r);
	/* The nearest answer is feasible: a budget of exactly the cheapest
	 * plan's cost gives that plan. */
	o.budget_usd = r.nearest.cheapest_cost_usd * (1 + 1e-9);
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &r), RC_OK);
	assert_near(r.total_cost_usd, o.budget_usd, 1e-6);
	plan_result_release(&r);
}

/* A plan longer than --max-duration is no answer: the refusal names the
 * limit and keeps the fastest plan refused, which the limit just above it
 * returns. */
static void test_plan_run_max_duration(void **state)
{
	struct plan_job job;
	struct plan_opts o;
	struct plan_result r;
	double fastest;

	(void)state;
	catalog_init();
	plan_job_init(&job, &test_model, 100e9);
	plan_opts_init(&o);
	o.max_duration_s = 0;
	o.max_spot_duration_s = 0;
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &r), RC_OK);
	fastest = r.makespan_s;
	plan_result_release(&r);
	o.max_duration_s = fastest / 2;
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &r), RC_INFEASIBLE);
	assert_true(r.nearest.have_over_max);
	assert_near(r.nearest.over_max.time_s, fastest, 1e-9);
	assert_non_null(strstr(r.why, "--max-duration"));
	plan_result_release(&r);
	o.max_duration_s = fastest * 1.001;
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &r), RC_OK);
	for (size_t i = 0; i < r.n_rows; i++)
		assert_true(r.rows[i].c.time_s <= o.max_duration_s);
	plan_result_release(&r);
	/* spot: held at most max_spot_duration_s */
	o.max_duration_s = 0;
	o.max_spot_duration_s = fastest / 2;
	o.filter.spot = 1;
	if (plan_run(&job, 1, &test_cat, &o, &r) == RC_OK)
		for (size_t i = 0; i < r.n_rows; i++)
			assert_true(r.rows[i].c.time_s <= o.max_spot_duration_s);
	plan_result_release(&r);
}

/* The same offering in another region at the same price and bound is one
 * row (folded_regions), and no alternative repeats it. */
static void test_plan_run_folds_regions(void **state)
{
	struct plan_job job;
	struct plan_opts o;
	struct plan_result r;

	(void)state;
	catalog_init();
	/* west sells big8 as east does */
	test_offers[1].on_demand_usd_per_hour = 80;
	test_offers[1].spot_usd_per_hour = 30;
	test_offers[1].max_nodes = 16;
	test_offers[1].capacity_nodes = 0;
	plan_job_init(&job, &test_model, 100e9);
	plan_opts_init(&o);
	gp_strlcpy(o.filter.gpu, "BIG-80GB", sizeof(o.filter.gpu));
	o.filter.spot = 0;
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &r), RC_OK);
	assert_string_equal(r.rows[0].c.offering->instance_type, "big8");
	assert_int_equal(r.rows[0].folded_regions, 1);
	assert_int_equal(plan_same_offering(&r.rows[0].c, &test_offers[1 - (int)(r.rows[0].c.offering - test_offers)], &o), 1);
	for (size_t i = 1; i < r.n_rows; i++)
		assert_false(strcmp(r.rows[i].c.offering->instance_type, "big8") == 0 &&
			     r.rows[i].c.purchase == r.rows[0].c.purchase);
	plan_result_release(&r);
	/* another price: another row, nothing folded */
	test_offers[1].on_demand_usd_per_hour = 81;
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &r), RC_OK);
	assert_int_equal(r.rows[0].folded_regions, 0);
	plan_result_release(&r);
}

/* One GPU: the 1.3B model fits on one 80 GB GPU (big1), the only
 * one-GPU offering. */
static void test_plan_run_one_gpu(void **state)
{
	struct plan_job job;
	struct plan_opts o;
	struct plan_result r;

	(void)state;
	catalog_init();
	plan_job_init(&job, &test_model, 10e9);
	plan_opts_init(&o);
	o.filter.max_gpus = 1;
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &r), RC_OK);
	assert_int_equal(r.rows[0].c.nodes * r.rows[0].c.cluster.gpus_per_node, 1);
	assert_string_equal(r.rows[0].c.offering->instance_type, "big1");
	assert_int_equal(r.rows[0].c.par.tp * r.rows[0].c.par.pp * r.rows[0].c.par.dp, 1);
	assert_int_equal(r.n_rows, 1); /* nothing else has one GPU */
	plan_result_release(&r);
}

/* A model that fits nowhere (2T parameters on at most 8 GPUs): infeasible,
 * the reason says memory, and the least memory any configuration needs
 * exceeds the largest GPU. */
static void test_plan_run_fits_nowhere(void **state)
{
	struct plan_job job;
	struct plan_opts o;
	struct plan_result r;
	struct sim_model m;

	(void)state;
	catalog_init();
	m = test_model;
	m.layers = 128;
	m.hidden = 36864;
	m.heads = 128;
	m.kv_heads = 128;
	m.ffn = 4 * 36864;
	plan_job_init(&job, &m, 1e12);
	plan_opts_init(&o);
	o.filter.max_gpus = 8;
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &r), RC_INFEASIBLE);
	assert_non_null(strstr(r.why, "fits in GPU memory"));
	assert_true(r.nearest.smallest_fit_memory_bytes < 0);
	assert_true(r.nearest.smallest_need_bytes > r.nearest.largest_gpu_bytes);
	assert_true(r.nearest.largest_gpu_bytes == 80e9);
	plan_result_release(&r);
}

/* A deadline alone: the objective becomes cost, and the answer meets the
 * deadline; a longer deadline is never dearer. */
static void test_plan_run_deadline_least_cost(void **state)
{
	struct plan_job job;
	struct plan_opts o;
	struct plan_result r;
	double prev = DBL_MAX;

	(void)state;
	catalog_init();
	plan_job_init(&job, &test_model, 100e9);
	plan_opts_init(&o);
	for (double days = 1; days <= 64; days *= 2) {
		o.deadline_s = days * 86400;
		if (plan_run(&job, 1, &test_cat, &o, &r) == RC_OK) {
			assert_int_equal(r.objective, PLAN_OBJECTIVE_COST);
			assert_true(r.makespan_s <= o.deadline_s * (1 + 1e-9));
			assert_true(r.total_cost_usd <= prev * (1 + 1e-9));
			prev = r.total_cost_usd;
			assert_rows_within(&r, &o);
		}
		plan_result_release(&r);
	}
	assert_true(prev < DBL_MAX);
}

/* Filters: spot only, one GPU type, pinned TP and ZeRO. */
static void test_plan_run_filters(void **state)
{
	struct plan_job job;
	struct plan_opts o;
	struct plan_result r;

	(void)state;
	catalog_init();
	plan_job_init(&job, &test_model, 100e9);
	plan_opts_init(&o);
	o.filter.spot = 1;
	snprintf(o.filter.gpu, sizeof(o.filter.gpu), "big-80gb");
	o.filter.tp = 2;
	o.filter.zero = 1;
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &r), RC_OK);
	for (size_t i = 0; i < r.n_rows; i++) {
		assert_int_equal(r.rows[i].c.spot, 1);
		assert_string_equal(r.rows[i].c.cluster.gpu.name, "BIG-80GB");
		assert_int_equal(r.rows[i].c.par.tp, 2);
		assert_int_equal(r.rows[i].c.par.zero, 1);
		/* spot plans carry their preemption overhead */
		assert_true(r.rows[i].c.interrupt.preempts_per_hour > 0 &&
			    r.rows[i].c.interrupt.waste > 0);
	}
	plan_result_release(&r);
	snprintf(o.filter.gpu, sizeof(o.filter.gpu), "no-such-gpu");
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &r), RC_USAGE);
	plan_result_release(&r);
}

/* Two jobs share acloud/east's 16 nodes and one budget: the answer never
 * uses more than 16 nodes there, and stays within the budget. */
static void test_plan_run_two_jobs_share(void **state)
{
	struct plan_job jobs[2];
	struct plan_opts o;
	struct plan_result r;
	int east = 0;

	(void)state;
	catalog_init();
	test_offers[1].on_demand_usd_per_hour = 1000; /* make east the place to be */
	test_offers[3].on_demand_usd_per_hour = 1000;
	test_offers[3].spot_usd_per_hour = 1000;
	plan_job_init(&jobs[0], &test_model, 200e9);
	plan_job_init(&jobs[1], &test_model, 100e9);
	snprintf(jobs[1].name, sizeof(jobs[1].name), "second");
	jobs[1].priority = 2;
	plan_opts_init(&o);
	/* $60k rules out west at $1000/node-hour (job 0 alone costs ~$0.5M
	 * there, whatever the node count); alone, each job would take all 16
	 * of east's nodes. */
	o.budget_usd = 60000;
	o.filter.spot = 0;
	assert_int_equal(plan_run(jobs, 2, &test_cat, &o, &r), RC_OK);
	assert_int_equal(r.n_answer_rows, 2);
	for (size_t i = 0; i < r.n_rows; i++)
		if (r.rows[i].c.offering == &test_offers[0])
			east += r.rows[i].c.nodes;
	assert_true(east <= 16);
	assert_true(east > 8); /* both jobs want it */
	assert_rows_within(&r, &o);
	plan_result_release(&r);
}

/* Two phases: spot (slow, cheap) then on-demand (fast, dear) meets a
 * deadline that spot alone misses, cheaper than on-demand alone. */
static void test_plan_run_two_phases(void **state)
{
	struct plan_job job;
	struct plan_opts o;
	struct plan_result one, two;

	(void)state;
	catalog_init();
	test_offers[1].on_demand_usd_per_hour = -1;
	test_offers[2].on_demand_usd_per_hour = -1;
	test_offers[3].on_demand_usd_per_hour = -1;
	test_offers[3].spot_usd_per_hour = -1;
	test_offers[0].max_nodes = 1;
	plan_job_init(&job, &test_model, 300e9);
	plan_opts_init(&o);
	o.switch_s = 0;
	/* spot and on-demand on 1 node of big8: find their times */
	o.objective = PLAN_OBJECTIVE_COST;
	o.filter.spot = 1;
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &one), RC_OK);
	o.filter.spot = 0;
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &two), RC_OK);
	assert_true(one.makespan_s > two.makespan_s);
	o.filter.spot = -1;
	o.deadline_s = (one.makespan_s + two.makespan_s) / 2;
	plan_result_release(&one);
	plan_result_release(&two);
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &one), RC_OK);
	assert_int_equal(one.rows[0].c.spot, 0); /* one phase: on-demand only */
	o.phases = 2;
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &two), RC_OK);
	assert_int_equal(two.n_answer_rows, 2);
	assert_int_equal(two.rows[0].c.spot, 1); /* spot first */
	assert_int_equal(two.rows[1].c.spot, 0);
	assert_near(two.rows[0].fraction + two.rows[1].fraction, 1.0, 1e-9);
	assert_true(two.makespan_s <= o.deadline_s * (1 + 1e-6));
	assert_true(two.total_cost_usd < one.total_cost_usd);
	plan_result_release(&one);
	plan_result_release(&two);
}

/* ---- what can be bought: networks, capacity, overheads ---------------------- */

/* An offering without a network figure is planned as one node, however
 * much faster more would be, and the answer says the network binds. */
static void test_plan_run_no_network_one_node(void **state)
{
	struct plan_job job;
	struct plan_opts o;
	struct plan_result r;

	(void)state;
	catalog_init();
	test_offers[0].inter_node_bytes_per_s = 0;
	plan_job_init(&job, &test_model, 100e9);
	plan_opts_init(&o);
	snprintf(o.filter.provider, sizeof(o.filter.provider), "acloud");
	snprintf(o.filter.region, sizeof(o.filter.region), "east");
	o.filter.spot = 0;
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &r), RC_OK);
	for (size_t i = 0; i < r.n_rows; i++)
		if (r.rows[i].c.offering == &test_offers[0])
			assert_int_equal(r.rows[i].c.nodes, 1);
	assert_ptr_equal(r.rows[0].c.offering, &test_offers[0]);
	assert_int_equal(r.binding, PLAN_BINDING_AVAILABILITY);
	assert_int_equal(r.rows[0].c.limit.why, PRICE_LIMIT_NETWORK);
	plan_result_release(&r);
	/* with the network, the same ask clusters */
	test_offers[0].inter_node_bytes_per_s = 400e9;
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &r), RC_OK);
	assert_true(r.rows[0].c.nodes > 1);
	plan_result_release(&r);
	/* a single-GPU VM without a network (a cloud's 1-GPU shape): one GPU,
	 * though its capacity row would sell four */
	catalog_init();
	test_offers[2].inter_node_bytes_per_s = 0;
	snprintf(o.filter.provider, sizeof(o.filter.provider), "acloud");
	o.filter.max_gpus = 4;
	o.filter.spot = 0;
	o.filter.region[0] = '\0';
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &r), RC_OK);
	for (size_t i = 0; i < r.n_rows; i++)
		if (r.rows[i].c.offering == &test_offers[2])
			assert_int_equal(r.rows[i].c.nodes * r.rows[i].c.cluster.gpus_per_node, 1);
	plan_result_release(&r);
	snprintf(o.filter.region, sizeof(o.filter.region), "east");
	snprintf(o.filter.gpu, sizeof(o.filter.gpu), "BIG-80GB");
	o.filter.min_gpus = 1;
	o.filter.max_gpus = 2;
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &r), RC_OK);
	assert_ptr_equal(r.rows[0].c.offering, &test_offers[2]);
	assert_int_equal(r.rows[0].c.nodes, 1);
	assert_int_equal(r.rows[0].c.limit.why, PRICE_LIMIT_NETWORK);
	plan_result_release(&r);
}

/* Spot is bounded apart from on-demand, and the bound binds. */
static void test_plan_run_spot_bound_binds(void **state)
{
	struct plan_job job;
	struct plan_opts o;
	struct plan_result r;

	(void)state;
	catalog_init();
	test_offers[0].spot_capacity_nodes = 2;
	plan_job_init(&job, &test_model, 100e9);
	plan_opts_init(&o);
	snprintf(o.filter.provider, sizeof(o.filter.provider), "acloud");
	snprintf(o.filter.region, sizeof(o.filter.region), "east");
	o.filter.spot = 1;
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &r), RC_OK);
	assert_int_equal(r.rows[0].c.nodes, 2);
	assert_int_equal(r.binding, PLAN_BINDING_AVAILABILITY);
	assert_int_equal(r.rows[0].c.limit.why, PRICE_LIMIT_SPOT);
	assert_rows_within(&r, &o);
	plan_result_release(&r);
	/* on demand the same offering goes to its capacity's 16 nodes */
	o.filter.spot = 0;
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &r), RC_OK);
	assert_true(r.rows[0].c.nodes > 2);
	assert_true(r.rows[0].c.nodes <= 16);
	plan_result_release(&r);
}

/* A quota binds one job, and two jobs on two offerings it covers share
 * it: their GPUs add up to at most the quota. */
static void test_plan_run_quota_shared(void **state)
{
	struct plan_job jobs[2];
	struct plan_opts o;
	struct plan_result r;
	struct price_quota q;
	int gpus = 0;

	(void)state;
	catalog_init();
	memset(&q, 0, sizeof(q));
	snprintf(q.provider, sizeof(q.provider), "acloud");
	snprintf(q.region, sizeof(q.region), "*");
	snprintf(q.gpu, sizeof(q.gpu), "BIG-80GB");
	q.max_gpus = 39;
	test_cat.quotas = &q;
	test_cat.n_quotas = 1;
	for (int i = 0; i < 3; i++)
		test_offers[i].quota = &q;
	plan_job_init(&jobs[0], &test_model, 100e9);
	plan_opts_init(&o);
	snprintf(o.filter.gpu, sizeof(o.filter.gpu), "BIG-80GB");
	o.filter.spot = 0;
	/* one job: 39 GPUs is 4 whole nodes of 8 (the batch of 256 divides
	 * by 32 GPUs' DP), and the quota says it binds */
	assert_int_equal(plan_run(jobs, 1, &test_cat, &o, &r), RC_OK);
	assert_int_equal(r.rows[0].c.nodes, 4);
	assert_int_equal(r.binding, PLAN_BINDING_AVAILABILITY);
	assert_int_equal(r.rows[0].c.limit.why, PRICE_LIMIT_QUOTA);
	plan_result_release(&r);
	/* two jobs at once: together within the quota, east and west alike */
	plan_job_init(&jobs[1], &test_model, 100e9);
	snprintf(jobs[1].name, sizeof(jobs[1].name), "second");
	assert_int_equal(plan_run(jobs, 2, &test_cat, &o, &r), RC_OK);
	for (size_t i = 0; i < r.n_answer_rows; i++)
		gpus += r.rows[i].c.nodes * r.rows[i].c.cluster.gpus_per_node;
	assert_int_equal(r.n_answer_rows, 2);
	assert_true(gpus <= 39);
	assert_true(gpus >= 16); /* both jobs run: neither is starved */
	plan_result_release(&r);
}

/* Whole billing increments and a minimum, by hand. */
static void test_plan_billed_s(void **state)
{
	struct price_offering of;

	(void)state;
	memset(&of, 0, sizeof(of));
	assert_near(plan_billed_s(1234.5, &of), 1234.5, 1e-12); /* not stated */
	of.billing_increment_s = 3600;
	assert_near(plan_billed_s(3601, &of), 7200, 1e-12);
	assert_near(plan_billed_s(3600, &of), 3600, 1e-12);
	of.billing_increment_s = 1;
	of.min_billing_s = 60;
	assert_near(plan_billed_s(30, &of), 60, 1e-12);
	assert_near(plan_billed_s(90.2, &of), 91, 1e-12);
	of.billing_increment_s = 86400; /* by the day */
	of.min_billing_s = 86400;
	assert_near(plan_billed_s(1.5 * 3600, &of), 86400, 1e-12);
}

/* Provisioning adds time, start-up adds time and cost, billing rounds the
 * billed hours up: cost = rate x billed(start-up + training) + storage. */
static void test_plan_run_overheads(void **state)
{
	struct plan_job job;
	struct plan_opts o;
	struct plan_result r, base;
	const struct plan_candidate *c;
	double work, billed;

	(void)state;
	catalog_init();
	plan_job_init(&job, &test_model, 2e9);
	plan_opts_init(&o);
	snprintf(o.filter.provider, sizeof(o.filter.provider), "acloud");
	snprintf(o.filter.region, sizeof(o.filter.region), "east");
	o.filter.spot = 0;
	o.ckpt_interval_s = 0;
	o.failures_per_gpu_hour = 0;
	o.startup_s = 0;
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &base), RC_OK);
	test_offers[0].provision_s = 900;
	test_offers[0].billing_increment_s = 3600;
	o.startup_s = 600;
	o.top = 1;
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &r), RC_OK);
	c = &r.rows[0].c;
	assert_near(c->costs.provision_s, 900, 1e-12);
	assert_near(c->costs.startup_s, 600, 1e-12);
	work = sim_time_to_train_s(&c->res, job.tokens);
	assert_near(c->time_s, 900 + 600 + work, 1e-9);
	billed = ceil((600 + work) / 3600 - 1e-9) * 3600;
	assert_near(c->costs.charged_s, billed, 1e-9);
	assert_near(c->costs.billed_extra_s, billed - 600 - work, 1e-6);
	assert_near(c->cost_usd, billed / 3600 * c->usd_per_hour + c->costs.storage_usd, 1e-9);
	/* the overheads make every answer slower than without them */
	assert_true(r.makespan_s > base.makespan_s);
	plan_result_release(&r);
	plan_result_release(&base);
}

/* On the shipped catalog, no candidate clusters an offering without a
 * network figure or past its capacity, and spot stays within its bound. */
static void test_plan_frontier_shipped_limits(void **state)
{
	struct price_opts po;
	struct price_catalog cat;
	struct plan_job job;
	struct plan_opts o;
	struct plan_candidate *c = NULL;
	struct plan_stats st;
	size_t n = 0, multi = 0;

	(void)state;
	catalog_init();
	price_opts_init(&po);
	po.data_dir = TEST_DATA_DIR;
	po.user_dir = "/nonexistent-gpuplan-user-dir";
	assert_int_equal(price_catalog_load(&cat, &po), RC_OK);
	plan_job_init(&job, &test_model, 100e9);
	plan_opts_init(&o);
	memset(&st, 0, sizeof(st));
	assert_int_equal(plan_frontier(&job, &cat, &o, &c, &n, &st, NULL), RC_OK);
	assert_true(n > 0);
	for (size_t i = 0; i < n; i++) {
		const struct price_offering *of = c[i].offering;

		if (!(of->inter_node_bytes_per_s > 0))
			assert_int_equal(c[i].nodes, 1);
		if (c[i].spot)
			assert_true(c[i].nodes <= (of->spot_capacity_nodes > 0 ? of->spot_capacity_nodes : 1));
		/* a stated bound, else gpuplan's policy, else one node */
		assert_true(c[i].nodes <= (of->max_nodes > 0 ? of->max_nodes
					   : of->capacity_nodes > 0 ? of->capacity_nodes
					   : of->policy_nodes > 0 ? of->policy_nodes : 1));
		multi += c[i].nodes > 1;
	}
	assert_true(multi > 0);
	free(c);
	price_catalog_release(&cat);
}

/* ---- context parallelism searched for long sequences ----------------------- */

/* A 6.4B GELU model (8 layers, hidden 4096, 32 heads, ffn 16384, vocab
 * 32000) at 64K tokens a sequence, for the context-parallel tests. */
static struct sim_model long_model(void)
{
	struct sim_model m = test_model;

	snprintf(m.name, sizeof(m.name), "long-64k");
	m.layers = 8;
	m.hidden = 4096;
	m.heads = 32;
	m.kv_heads = 32;
	m.ffn = 16384;
	m.vocab = 32000;
	m.seq = 65536;
	m.gbs = 8;
	return m;
}

/* No cp = 1 plan fits a 16 GB GPU sold one to a node (so tp = 1); cp > 1,
 * searched without --cp, does.  By hand, for cp = 1, s = 65536, b = 1,
 * h = 4096, V = 32000, 2-byte activations, flash attention: the last
 * pipeline stage holds at least one layer and the logits.  One layer's
 * activations are 34 s h = 34 x 65536 x 4096 = 9.13e9 bytes (Korthikanti
 * et al. 2022, sec. 4.1; stored without recomputation or selective, held
 * while the layer is recomputed with full), the fp32 logits 4 s V =
 * 4 x 65536 x 32000 = 8.39e9 (sec. 4.3): 17.5e9 > 16e9 before any weight,
 * whatever pp, dp, ZeRO stage or recomputation.  Both terms scale with
 * the local sequence s / cp: 8.76e9 at cp = 2 leaves room for the rest. */
static void test_plan_run_cp_only_fit(void **state)
{
	struct sim_model m;
	struct plan_job job;
	struct plan_opts o;
	struct plan_result r;

	(void)state;
	catalog_init();
	test_gpus[1].memory_bytes = 16e9;
	test_offers[3].gpus_per_node = 1;
	m = long_model();
	plan_job_init(&job, &m, 1e9);
	plan_opts_init(&o);
	snprintf(o.filter.gpu, sizeof(o.filter.gpu), "SMALL-24GB");
	o.filter.cp = 1;
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &r), RC_INFEASIBLE);
	assert_non_null(strstr(r.why, "fits in GPU memory"));
	assert_true(r.nearest.smallest_need_bytes > 17.5e9);
	plan_result_release(&r);

	o.filter.cp = 0;
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &r), RC_OK);
	assert_true(r.rows[0].c.par.cp >= 2);
	assert_int_equal(r.rows[0].c.par.tp, 1);
	assert_rows_within(&r, &o);
	for (size_t i = 0; i < r.n_rows; i++)
		assert_true(r.rows[i].c.par.cp >= 2);
	plan_result_release(&r);
}

/* On one 8-GPU node, where cp = 1 plans fit, cp > 1 is chosen because it
 * is faster: a Llama-3-8B shape (32 layers, hidden 4096, 32 heads, 8 KV
 * heads, SwiGLU 14336, vocab 128256) at 32K tokens.  Per layer forward,
 * tp 4 with sequence parallelism moves two all-gathers and two
 * reduce-scatters of s h 2 bytes = 268 MB, 3/4 of each through every
 * rank: 805 MB; cp 4 all-gathers K and V of the 8 KV heads, 2 x 2 s x
 * 8 x 128 = 134 MB, 3/4 of it 101 MB, hidden behind attention (Megatron-
 * Core's ring attention).  Same GPUs, less exposed communication. */
static void test_plan_run_cp_faster(void **state)
{
	struct sim_model m = test_model;
	struct plan_job job;
	struct plan_opts o;
	struct plan_result r;
	double t_cp1, comm_cp1;

	(void)state;
	catalog_init();
	m.layers = 32;
	m.hidden = 4096;
	m.heads = 32;
	m.kv_heads = 8;
	m.ffn = 14336;
	m.vocab = 128256;
	m.mlp = SIM_MLP_SWIGLU;
	m.tied_embeddings = 0;
	m.seq = 32768;
	m.gbs = 64;
	plan_job_init(&job, &m, 10e9);
	plan_opts_init(&o);
	snprintf(o.filter.gpu, sizeof(o.filter.gpu), "BIG-80GB");
	o.filter.min_gpus = o.filter.max_gpus = 8;
	o.filter.cp = 1;
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &r), RC_OK);
	assert_int_equal(r.rows[0].c.par.cp, 1);
	comm_cp1 = r.rows[0].c.res.breakdown.tp_comm_s;
	assert_true(comm_cp1 > 0);
	t_cp1 = r.makespan_s;
	plan_result_release(&r);

	o.filter.cp = 0;
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &r), RC_OK);
	assert_true(r.rows[0].c.par.cp > 1);
	assert_int_equal(r.rows[0].c.nodes * r.rows[0].c.cluster.gpus_per_node, 8);
	assert_true(r.makespan_s < t_cp1 * (1 - 1e-3));
	/* the exposed communication is what shrinks */
	assert_true(r.rows[0].c.res.breakdown.cp_comm_s + r.rows[0].c.res.breakdown.tp_comm_s <
		    comm_cp1 / 2);
	assert_rows_within(&r, &o);
	plan_result_release(&r);
}

/* Configurations enumerated without --cp, and with --cp 1 (the search
 * before cp was searched). */
static void enumerated_free_and_cp1(const struct sim_model *m, struct plan_stats *free_cp,
				    struct plan_stats *cp1)
{
	struct plan_job job;
	struct plan_opts o;
	struct plan_result r;

	plan_job_init(&job, m, 100e9);
	plan_opts_init(&o);
	o.budget_usd = 1e9;
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &r), RC_OK);
	*free_cp = r.stats;
	plan_result_release(&r);
	o.filter.cp = 1;
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &r), RC_OK);
	*cp1 = r.stats;
	plan_result_release(&r);
}

/* cp is searched only where a rank keeps 4096 tokens of a sequence of
 * 8192 or more: at 4096 (and 2048) the search is exactly the one with cp
 * fixed at 1; at 8192 it grows; cp values sim_check would refuse (2 cp
 * must divide the sequence) are skipped, not enumerated. */
static void test_plan_enumerate_cp_only_long_sequences(void **state)
{
	struct sim_model m;
	struct plan_stats a, b;

	(void)state;
	catalog_init();
	m = test_model;
	enumerated_free_and_cp1(&m, &a, &b);
	assert_int_equal(a.enumerated, b.enumerated);
	assert_int_equal(a.simulated, b.simulated);
	m.seq = 4096;
	enumerated_free_and_cp1(&m, &a, &b);
	assert_int_equal(a.enumerated, b.enumerated);
	assert_int_equal(a.simulated, b.simulated);
	assert_int_equal(a.rejected_check, b.rejected_check);
	m.seq = 8192;
	enumerated_free_and_cp1(&m, &a, &b);
	assert_true(a.enumerated > b.enumerated);
	/* 16386 = 2 x 8193: cp 2 and 4 leave 4096 tokens a rank or more,
	 * but 2 cp divides 16386 for neither. */
	m.seq = 16386;
	enumerated_free_and_cp1(&m, &a, &b);
	assert_int_equal(a.enumerated, b.enumerated);
	assert_int_equal(a.rejected_check, b.rejected_check);
}

/* Where pp x v does not divide the layers, the search tries the
 * simulator's split and the one Megatron-Bridge gives DeepSeek-V3 (every
 * virtual stage ceil(L / n) layers, the last the rest beside the loss):
 * 30 layers over pp 4 are 8, 8, 8 and 6; over pp 2 they split evenly
 * and only the simulator's split is searched. */
static void test_plan_enumerate_last_stage_split(void **state)
{
	struct sim_model m = test_model;
	struct plan_job job;
	struct plan_opts o;
	struct plan_stats st;
	struct plan_candidate *c = NULL;
	size_t n = 0;
	int stated = 0, own_uneven = 0, pp4 = 0;

	(void)state;
	catalog_init();
	m.layers = 30;
	plan_job_init(&job, &m, 10e9);
	plan_opts_init(&o);
	assert_int_equal(plan_enumerate(&job, &test_cat, &o, &c, &n, &st, NULL), RC_OK);
	for (size_t i = 0; i < n; i++) {
		const struct sim_parallel *q = &c[i].par;
		int k = q->pp * q->interleave, even = (m.layers + k - 1) / k;

		if (q->pp_last_layers > 0) {
			assert_true(q->pp > 1 && m.layers % k != 0);
			assert_int_equal(q->pp_last_layers, m.layers - (k - 1) * even);
			stated++;
			if (q->pp == 4 && q->interleave == 1) {
				assert_int_equal(q->pp_last_layers, 6);
				pp4++;
			}
		} else if (q->pp > 1 && m.layers % k) {
			own_uneven++;
		}
	}
	assert_true(stated > 0);
	assert_true(own_uneven > 0);
	assert_true(pp4 > 0);
	free(c);
}

/* ---- mixture of experts: the expert search, the offering's NVLink domain,
 * the precision and the framework's MoE rules ---------------------------- */

/* A small MoE (8 layers, hidden 1024, 16 heads; 16 routed experts of
 * width 512, top 2, one shared; the first layer dense). */
static struct sim_model moe_model(void)
{
	struct sim_model m = test_model;

	snprintf(m.name, sizeof(m.name), "moe-16x");
	m.layers = 8;
	m.hidden = 1024;
	m.heads = 16;
	m.kv_heads = 16;
	m.ffn = 4096;
	m.mlp = SIM_MLP_SWIGLU;
	m.vocab = 32000;
	m.seq = 2048;
	m.gbs = 64;
	m.experts = 16;
	m.top_k = 2;
	m.expert_ffn = 512;
	m.shared_experts = 1;
	m.dense_layers = 1;
	return m;
}

/* Every candidate of job on test_cat with o, checked for what every
 * candidate must be: a layout sim_check accepts, ep dividing the experts
 * and the attention's tp x cp x dp over etp, etp 1 or a divisor of tp.
 * Returns the count with ep > 1. */
static size_t expert_layouts_legal(const struct plan_job *job, const struct plan_opts *o,
				   struct plan_stats *st)
{
	const struct sim_model *m = &job->model;
	struct plan_candidate *c = NULL;
	size_t n = 0, with_ep = 0;

	memset(st, 0, sizeof(*st));
	assert_int_equal(plan_enumerate(job, &test_cat, o, &c, &n, st, NULL), RC_OK);
	assert_true(n > 0);
	for (size_t i = 0; i < n; i++) {
		const struct sim_parallel *q = &c[i].par;

		assert_int_equal(sim_check(m, q, &c[i].cluster, NULL, 0), RC_OK);
		assert_true(q->ep >= 1 && q->etp >= 1);
		assert_int_equal(m->experts % q->ep, 0);
		assert_int_equal((q->tp * q->cp * q->dp / q->etp) % q->ep, 0);
		assert_true(q->etp == 1 || q->tp % q->etp == 0);
		with_ep += q->ep > 1;
	}
	free(c);
	return with_ep;
}

/* EP and ETP are searched for a model with experts, and only where
 * legal: every configuration the search hands the simulator passes
 * sim_check (none rejected: within 8 GPUs and with 512 sequences a batch,
 * mbs x dp x pp divides the batch, so the interleaved schedule's rule,
 * the one sim_check judges for the enumeration, never refuses one);
 * DeepSpeed's layouts take ep from dp, etp 1 or tp, and no ZeRO-3; --ep
 * and --etp pin them; bad pins are usage errors before the search. */
static void test_plan_enumerate_experts_where_legal(void **state)
{
	struct sim_model m;
	struct plan_job job;
	struct plan_opts o;
	struct plan_stats st;
	struct plan_candidate *c = NULL;
	size_t n = 0;

	(void)state;
	catalog_init();
	m = moe_model();
	m.gbs = 512;
	plan_job_init(&job, &m, 10e9);
	plan_opts_init(&o);
	o.filter.max_gpus = 8;
	expert_layouts_legal(&job, &o, &st);
	assert_int_equal(st.rejected_check, 0);
	/* there ep 8 is searched (and kept where pinned) */
	o.filter.ep = 8;
	assert_true(expert_layouts_legal(&job, &o, &st) > 0);
	assert_int_equal(st.rejected_check, 0);
	o.filter.ep = 0;
	o.filter.max_gpus = PLAN_DEFAULT_MAX_GPUS;
	assert_true(expert_layouts_legal(&job, &o, &st) > 0);

	o.filter.framework = PLAN_FRAMEWORK_DEEPSPEED;
	assert_true(expert_layouts_legal(&job, &o, &st) > 0);
	assert_int_equal(plan_enumerate(&job, &test_cat, &o, &c, &n, &st, NULL), RC_OK);
	for (size_t i = 0; i < n; i++) {
		const struct sim_parallel *q = &c[i].par;

		assert_int_equal(q->dp % q->ep, 0);
		assert_true(q->etp == 1 || q->etp == q->tp);
		assert_true(q->zero <= 2);
		assert_int_equal(q->ep_flex, 0);
		assert_int_equal(q->ep_overlap, 0);
	}
	free(c);

	plan_opts_init(&o);
	o.filter.ep = 4;
	o.filter.etp = 2;
	assert_true(expert_layouts_legal(&job, &o, &st) > 0);
	assert_int_equal(plan_enumerate(&job, &test_cat, &o, &c, &n, &st, NULL), RC_OK);
	for (size_t i = 0; i < n; i++)
		assert_true(c[i].par.ep == 4 && c[i].par.etp == 2);
	free(c);

	/* 3 divides neither 16 experts nor their width 512 */
	o.filter.etp = 0;
	o.filter.ep = 3;
	assert_int_equal(plan_enumerate(&job, &test_cat, &o, &c, &n, &st, NULL), RC_USAGE);
	o.filter.ep = 0;
	o.filter.etp = 3;
	assert_int_equal(plan_enumerate(&job, &test_cat, &o, &c, &n, &st, NULL), RC_USAGE);
	/* a dense model has no experts to spread */
	plan_job_init(&job, &test_model, 10e9);
	o.filter.etp = 0;
	o.filter.ep = 2;
	assert_int_equal(plan_enumerate(&job, &test_cat, &o, &c, &n, &st, NULL), RC_USAGE);
	o.filter.ep = 0;
	assert_int_equal(expert_layouts_legal(&job, &o, &st), 0);
	assert_int_equal(plan_enumerate(&job, &test_cat, &o, &c, &n, &st, NULL), RC_OK);
	for (size_t i = 0; i < n; i++) {
		assert_true(c[i].par.ep == 1 && c[i].par.etp == 1);
		assert_int_equal(c[i].par.precision, SIM_PRECISION_BF16);
	}
	free(c);
}

/* A dense job's answer is the one the planner gave before it searched
 * experts, precisions and NVLink domains (main at d7a181d: the same
 * configurations enumerated, simulated and fitting, the same answer to
 * the last bit), on a catalog whose offerings state no domain.  The
 * frontier has 63 points, not d7a181d's 53, since ranks are placed DP
 * inside PP (Megatron-Core's order): pipelined layouts sum their
 * gradients on fewer nodes and send between stages across them, and
 * their fill and drain wait for a send a hop.  Since the peak holds the
 * larger of the loss's buffers (6 bytes a logit, was 4) and one layer's
 * backward, not their sum, two configurations fewer fit and one fewer is
 * simulated; the answer is the same. */
static void test_plan_run_dense_unchanged(void **state)
{
	struct plan_job job;
	struct plan_opts o;
	struct plan_result r;
	const struct plan_candidate *c;

	(void)state;
	catalog_init();
	plan_job_init(&job, &test_model, 100e9);
	plan_opts_init(&o);
	o.budget_usd = 20000;
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &r), RC_OK);
	assert_int_equal(r.stats.enumerated, 24456);
	assert_int_equal(r.stats.simulated, 16743);
	assert_int_equal(r.stats.fit, 16640);
	assert_int_equal(r.stats.frontier, 63);
	c = &r.rows[0].c;
	assert_string_equal(c->offering->region, "west");
	assert_int_equal(c->nodes, 32);
	assert_true(c->par.tp == 4 && c->par.pp == 1 && c->par.dp == 64 && c->par.cp == 1);
	assert_true(c->par.mbs == 4 && c->par.zero == 2 && c->par.interleave == 1);
	assert_int_equal(c->par.recompute, SIM_RECOMPUTE_SELECTIVE);
	assert_true(c->par.ep == 1 && c->par.etp == 1);
	assert_near(c->res.step_time_s, 0.085407693465898674, 1e-12);
	plan_result_release(&r);
}

/* Clusters built from an offering take its NVLink domain
 * (price_nvlink_domain: the offering's figure, else the GPU's): an NVL72
 * GPU sold as 4-GPU nodes is one machine with a 72-GPU domain, and the
 * same nodes stated as their own domains another.  On that Blackwell GPU
 * a model with experts trains in MXFP8 with Megatron-Core's flex
 * dispatcher. */
static void test_plan_enumerate_domain_from_offering(void **state)
{
	struct sim_model m = moe_model();
	struct price_gpu gpu = test_gpus[0];
	struct price_offering of[2];
	struct price_catalog cat;
	struct plan_job job;
	struct plan_opts o;
	struct plan_stats st;
	struct plan_candidate *c = NULL;
	size_t n = 0, seen[2] = { 0, 0 };

	(void)state;
	catalog_init();
	gpu = test_gpus[0];
	snprintf(gpu.name, sizeof(gpu.name), "GB200");
	gpu.fp8_flops_per_s = 2 * gpu.bf16_flops_per_s;
	gpu.nvlink_domain = 72;
	of[0] = test_offers[0];
	snprintf(of[0].gpu, PRICE_NAME_MAX, "GB200");
	snprintf(of[0].instance_type, PRICE_NAME_MAX, "nvl72");
	of[0].gpus_per_node = 4;
	of[0].max_nodes = 18;
	of[1] = of[0];
	snprintf(of[1].instance_type, PRICE_NAME_MAX, "nvl4");
	of[1].nvlink_domain = 4;
	memset(&cat, 0, sizeof(cat));
	cat.gpus = &gpu;
	cat.n_gpus = 1;
	cat.offers = of;
	cat.n_offers = 2;
	plan_job_init(&job, &m, 10e9);
	plan_opts_init(&o);
	memset(&st, 0, sizeof(st));
	assert_int_equal(plan_enumerate(&job, &cat, &o, &c, &n, &st, NULL), RC_OK);
	assert_int_equal(st.machines, 2);
	for (size_t i = 0; i < n; i++) {
		int k = c[i].offering == &of[1];

		assert_int_equal(c[i].cluster.nvlink_domain, k ? 4 : 72);
		assert_int_equal(c[i].par.precision, SIM_PRECISION_MXFP8);
		if (c[i].par.ep > 1)
			assert_int_equal(c[i].par.ep_flex, 1);
		seen[k]++;
	}
	assert_true(seen[0] > 0 && seen[1] > 0);
	free(c);
}

/* auto is each GPU's recipe (MXFP8 on Blackwell, FP8 with an FP8 rate,
 * else BF16); the default is auto with experts and BF16 without; a
 * pinned rate the GPU lacks rules the GPU out. */
static void test_plan_precision_pick(void **state)
{
	struct sim_model dense = test_model, moe = moe_model();
	struct price_gpu a100 = test_gpus[0], h100 = test_gpus[0], b200 = test_gpus[0];
	enum plan_precision p;

	(void)state;
	catalog_init();
	snprintf(h100.name, sizeof(h100.name), "H100-SXM5-80GB");
	h100.fp8_flops_per_s = 2 * h100.bf16_flops_per_s;
	snprintf(b200.name, sizeof(b200.name), "B200");
	b200.fp8_flops_per_s = 2 * b200.bf16_flops_per_s;
	assert_int_equal(plan_precision_pick(PLAN_PRECISION_DEFAULT, &dense, &b200),
			 SIM_PRECISION_BF16);
	assert_int_equal(plan_precision_pick(PLAN_PRECISION_DEFAULT, &moe, &b200),
			 SIM_PRECISION_MXFP8);
	assert_int_equal(plan_precision_pick(PLAN_PRECISION_DEFAULT, &moe, &h100),
			 SIM_PRECISION_FP8);
	assert_int_equal(plan_precision_pick(PLAN_PRECISION_DEFAULT, &moe, &a100),
			 SIM_PRECISION_BF16);
	assert_int_equal(plan_precision_pick(PLAN_PRECISION_AUTO, &dense, &h100),
			 SIM_PRECISION_FP8);
	assert_int_equal(plan_precision_pick(PLAN_PRECISION_BF16, &moe, &b200),
			 SIM_PRECISION_BF16);
	assert_int_equal(plan_precision_pick(PLAN_PRECISION_MXFP8, &moe, &h100), -1);
	assert_int_equal(plan_precision_pick(PLAN_PRECISION_FP8, &moe, &a100), -1);
	assert_int_equal(plan_precision_pick(PLAN_PRECISION_FP8, &moe, &b200), SIM_PRECISION_FP8);
	assert_int_equal(plan_precision_parse("MXFP8", &p), RC_OK);
	assert_int_equal(p, PLAN_PRECISION_MXFP8);
	assert_int_equal(plan_precision_parse("nvfp4", &p), RC_USAGE);
	assert_int_equal(plan_precision_parse("default", &p), RC_USAGE);
}

/* Megatron-LM overlaps TP's collectives (--tp-comm-overlap) with
 * sequence parallelism and the distributed optimizer on NVLink, not
 * under Megatron-FSDP; DeepSpeed never; a plan for no framework keeps
 * its own. */
static void test_plan_framework_tp_overlap(void **state)
{
	static const struct {
		enum plan_framework fw;
		int tp, zero, seq_parallel, nvlink, before, want;
	} cases[] = {
		{ PLAN_FRAMEWORK_MEGATRON, 4, 1, 1, 1, 0, 1 },
		{ PLAN_FRAMEWORK_MEGATRON, 4, 1, 1, 0, 0, 0 },   /* no NVLink (RTX 4090) */
		{ PLAN_FRAMEWORK_MEGATRON, 4, 3, 1, 1, 0, 0 },   /* Megatron-FSDP */
		{ PLAN_FRAMEWORK_MEGATRON, 4, 1, 0, 1, 0, 0 },   /* no sequence parallelism */
		{ PLAN_FRAMEWORK_MEGATRON, 1, 1, 1, 1, 0, 0 },   /* no TP */
		{ PLAN_FRAMEWORK_DEEPSPEED, 4, 1, 1, 1, 1, 0 },
		{ PLAN_FRAMEWORK_ANY, 4, 1, 1, 1, 1, 1 },        /* keeps its own */
	};
	struct price_gpu gpu = test_gpus[0];
	struct sim_parallel q;

	(void)state;
	catalog_init();
	for (size_t i = 0; i < GP_ARRAY_LEN(cases); i++) {
		sim_parallel_init(&q);
		q.tp = cases[i].tp;
		q.dp = 2;
		q.zero = cases[i].zero;
		q.seq_parallel = cases[i].seq_parallel;
		q.tp_overlap = cases[i].before;
		gpu.nvlink = cases[i].nvlink;
		plan_framework_price(cases[i].fw, &test_model, &gpu, &q);
		assert_int_equal(q.tp_overlap, cases[i].want);
	}
}

/* A DeepSpeed plan prices pipeline sends as its PipelineEngine runs them
 * (pp_send_whole), a Megatron-LM one as 1F1B's split exchanges.  By hand,
 * the 1.3B GPT at tp 2, pp 4, one 2048-token sequence a micro-batch: the
 * activation is 2048 x 2048 x 2 bytes = 8 MiB.  A DeepSpeed stage sends
 * and receives it whole, one after the other, 4 transfers a micro-batch
 * and chunk plus one a hop each way for the fill and the drain:
 * (4 M v + 2 x 3) x p2p(8 MiB); Megatron-LM (2 M v + 6) x p2p(4 MiB).
 * Nothing else in the step moves with it, so the DeepSpeed step is
 * longer by the difference. */
static void test_plan_framework_pp_send(void **state)
{
	struct plan_job job;
	struct plan_opts o;
	struct plan_stats st;
	struct plan_candidate *c = NULL;
	size_t n = 0, checked = 0;

	(void)state;
	catalog_init();
	plan_job_init(&job, &test_model, 10e9);
	plan_opts_init(&o);
	o.filter.framework = PLAN_FRAMEWORK_DEEPSPEED;
	o.filter.tp = 2;
	o.filter.pp = 4;
	o.filter.max_gpus = 16;
	assert_int_equal(plan_enumerate(&job, &test_cat, &o, &c, &n, &st, NULL), RC_OK);
	assert_true(n > 0);
	for (size_t i = 0; i < n; i++) {
		struct sim_parallel q = c[i].par;
		struct sim_result split, meg;
		struct sim_link l;
		double act = (double)q.mbs * 2048 * 2048 * 2, mv, whole_s, split_s;

		assert_int_equal(q.pp_send_whole, 1);
		sim_group_link(&c[i].cluster, 4, 2 * q.cp * q.dp, &l);
		mv = (double)(job.model.gbs / (q.mbs * q.dp)) * q.interleave;
		whole_s = (4 * mv + 6) * sim_p2p_s(act, &l);
		split_s = (2 * mv + 6) * sim_p2p_s(act / 2, &l);
		assert_near(c[i].res.breakdown.pp_comm_s, whole_s, 1e-12);
		q.pp_send_whole = 0;
		sim_step(&job.model, &q, &c[i].cluster, &split);
		assert_near(split.breakdown.pp_comm_s, split_s, 1e-12);
		assert_true(whole_s > split_s);
		assert_near(c[i].res.step_time_s - split.step_time_s, whole_s - split_s, 1e-9);
		/* the same layout under Megatron-LM sends split */
		plan_framework_price(PLAN_FRAMEWORK_MEGATRON, &job.model, &c[i].cluster.gpu, &q);
		assert_int_equal(q.pp_send_whole, 0);
		sim_step(&job.model, &q, &c[i].cluster, &meg);
		assert_near(meg.breakdown.pp_comm_s, split_s, 1e-12);
		checked++;
	}
	assert_true(checked > 0);
	free(c);
}

/* Megatron-LM gathers FP8-trained weights in FP8 (--fp8-param-gather)
 * where ZeRO gathers them; DeepSpeed and bf16 plans do not. */
static void test_plan_framework_fp8_param_gather(void **state)
{
	static const struct {
		enum plan_framework fw;
		enum sim_precision prec;
		int zero, want;
	} cases[] = {
		{ PLAN_FRAMEWORK_MEGATRON, SIM_PRECISION_FP8, 1, 1 },
		{ PLAN_FRAMEWORK_MEGATRON, SIM_PRECISION_MXFP8, 3, 1 },
		{ PLAN_FRAMEWORK_MEGATRON, SIM_PRECISION_FP8, 0, 0 },
		{ PLAN_FRAMEWORK_MEGATRON, SIM_PRECISION_BF16, 1, 0 },
		{ PLAN_FRAMEWORK_DEEPSPEED, SIM_PRECISION_FP8, 1, 0 },
	};
	struct sim_parallel q;

	(void)state;
	catalog_init();
	for (size_t i = 0; i < GP_ARRAY_LEN(cases); i++) {
		sim_parallel_init(&q);
		q.dp = 8;
		q.zero = cases[i].zero;
		q.precision = cases[i].prec;
		q.fp8_param_gather = !cases[i].want;
		plan_framework_price(cases[i].fw, &test_model, &test_gpus[0], &q);
		assert_int_equal(q.fp8_param_gather, cases[i].want);
	}
}

/* Megatron-LM's MoE rules: the flex dispatcher on Hopper and Blackwell
 * only, the all-to-all overlap with ep > 1 and without full
 * recomputation, and with pp > 1 only interleaved; DeepSpeed: neither,
 * ep from dp, etp 1 or tp, no ZeRO-3 with experts. */
static void test_plan_framework_moe_rules(void **state)
{
	struct sim_model moe = moe_model();
	struct price_gpu a100 = test_gpus[0], h100 = test_gpus[0];
	struct sim_parallel q;

	(void)state;
	catalog_init();
	snprintf(h100.name, sizeof(h100.name), "H100-SXM5-80GB");
	sim_parallel_init(&q);
	q.tp = 2;
	q.dp = 8;
	q.ep = 8;
	q.recompute = SIM_RECOMPUTE_SELECTIVE;
	plan_framework_price(PLAN_FRAMEWORK_MEGATRON, &moe, &h100, &q);
	assert_true(q.ep_flex == 1 && q.ep_overlap == 1);
	plan_framework_price(PLAN_FRAMEWORK_MEGATRON, &moe, &a100, &q);
	assert_true(q.ep_flex == 0 && q.ep_overlap == 1);
	q.recompute = SIM_RECOMPUTE_FULL;
	plan_framework_price(PLAN_FRAMEWORK_MEGATRON, &moe, &h100, &q);
	assert_true(q.ep_flex == 1 && q.ep_overlap == 0);
	q.recompute = SIM_RECOMPUTE_NONE;
	q.pp = 2;
	plan_framework_price(PLAN_FRAMEWORK_MEGATRON, &moe, &h100, &q);
	assert_int_equal(q.ep_overlap, 0);
	q.interleave = 2;
	plan_framework_price(PLAN_FRAMEWORK_MEGATRON, &moe, &h100, &q);
	assert_int_equal(q.ep_overlap, 1);
	/* the older release keeps the flex dispatcher but not the overlap */
	q.stack = SIM_STACK_TE214;
	plan_framework_price(PLAN_FRAMEWORK_MEGATRON, &moe, &h100, &q);
	assert_true(q.ep_flex == 1 && q.ep_overlap == 0);
	q.stack = SIM_STACK_TE216;
	plan_framework_price(PLAN_FRAMEWORK_MEGATRON, &moe, &h100, &q);
	assert_int_equal(q.ep_overlap, 1);
	plan_framework_price(PLAN_FRAMEWORK_DEEPSPEED, &moe, &h100, &q);
	assert_true(q.ep_flex == 0 && q.ep_overlap == 0);
	q.ep = 1;
	plan_framework_price(PLAN_FRAMEWORK_MEGATRON, &moe, &h100, &q);
	assert_true(q.ep_flex == 0 && q.ep_overlap == 0);

	q.ep = 8;
	q.etp = 1;
	assert_true(plan_framework_runs_experts(PLAN_FRAMEWORK_DEEPSPEED, &q));
	q.ep = 16;
	assert_false(plan_framework_runs_experts(PLAN_FRAMEWORK_DEEPSPEED, &q));
	assert_true(plan_framework_runs_experts(PLAN_FRAMEWORK_MEGATRON, &q));
	q.ep = 4;
	q.etp = 2;
	assert_true(plan_framework_runs_experts(PLAN_FRAMEWORK_DEEPSPEED, &q));
	q.tp = 4;
	assert_false(plan_framework_runs_experts(PLAN_FRAMEWORK_DEEPSPEED, &q));
	assert_int_equal(plan_framework_max_zero(PLAN_FRAMEWORK_DEEPSPEED, &moe, 1), 2);
	assert_int_equal(plan_framework_max_zero(PLAN_FRAMEWORK_DEEPSPEED, &test_model, 1), 3);
	assert_int_equal(plan_framework_max_zero(PLAN_FRAMEWORK_MEGATRON, &moe, 1), 3);
	assert_int_equal(plan_framework_max_zero(PLAN_FRAMEWORK_MEGATRON, &moe, 2), 1);
}

/* Each framework runs the offload its sources show: Megatron-LM the
 * optimizer in host memory with its distributed optimizer (ZeRO-1) and
 * nothing on NVMe; DeepSpeed host memory from ZeRO-1, NVMe at ZeRO-3
 * only; gpuplan execute ("any") every one sim_check accepts. */
static void test_plan_framework_offload_rules(void **state)
{
	(void)state;
	for (int z = 0; z <= 3; z++) {
		assert_true(plan_framework_runs_offload(PLAN_FRAMEWORK_MEGATRON, z, SIM_OFFLOAD_NONE));
		assert_true(plan_framework_runs_offload(PLAN_FRAMEWORK_DEEPSPEED, z, SIM_OFFLOAD_NONE));
		assert_true(plan_framework_runs_offload(PLAN_FRAMEWORK_ANY, z, SIM_OFFLOAD_NVME));
		assert_false(plan_framework_runs_offload(PLAN_FRAMEWORK_MEGATRON, z, SIM_OFFLOAD_NVME));
		assert_int_equal(plan_framework_runs_offload(PLAN_FRAMEWORK_MEGATRON, z, SIM_OFFLOAD_CPU),
				 z == 1);
		assert_int_equal(plan_framework_runs_offload(PLAN_FRAMEWORK_DEEPSPEED, z, SIM_OFFLOAD_CPU),
				 z >= 1);
		assert_int_equal(plan_framework_runs_offload(PLAN_FRAMEWORK_DEEPSPEED, z, SIM_OFFLOAD_NVME),
				 z == 3);
	}
	assert_string_equal(plan_framework_title(PLAN_FRAMEWORK_DEEPSPEED), "DeepSpeed");
	assert_string_equal(plan_framework_title(PLAN_FRAMEWORK_MEGATRON), "Megatron-LM");
}

/* The EP all-to-all is a loss the answer can name. */
static void test_plan_largest_loss_ep(void **state)
{
	struct sim_result r;
	const char *name;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.step_time_s = 10;
	r.breakdown.compute_s = 6;
	r.breakdown.dp_comm_exposed_s = 1;
	r.breakdown.ep_comm_s = 3;
	assert_near(plan_largest_loss(&r, &name), 0.3, 1e-12);
	assert_string_equal(name, "ep comm");
}

static void test_plan_result_to_json_keys(void **state)
{
	static const char *keys[] = {
		"\"provider\"", "\"instance_type\"", "\"region\"", "\"gpu\"", "\"spot\"",
		"\"nodes\"", "\"gpus\"", "\"tp\"", "\"pp\"", "\"dp\"", "\"cp\"", "\"mbs\"",
		"\"grad_accum\"", "\"zero\"", "\"recompute\"", "\"interleave\"",
		"\"step_time_s\"", "\"tokens_per_s\"", "\"mfu\"", "\"memory_per_gpu_bytes\"",
		"\"time_to_train_s\"", "\"cost_usd\"", "\"usd_per_hour\"", "\"binding\"",
		"\"plans\"",
	};
	struct plan_job job;
	struct plan_opts o;
	struct plan_result r;
	char *a, *b;

	(void)state;
	catalog_init();
	plan_job_init(&job, &test_model, 100e9);
	plan_opts_init(&o);
	o.budget_usd = 20000;
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &r), RC_OK);
	a = plan_result_to_json(&r, &job, 1);
	for (size_t k = 0; k < GP_ARRAY_LEN(keys); k++)
		assert_non_null(strstr(a, keys[k]));
	plan_result_release(&r);
	/* Same inputs, same bytes. */
	assert_int_equal(plan_run(&job, 1, &test_cat, &o, &r), RC_OK);
	b = plan_result_to_json(&r, &job, 1);
	assert_string_equal(a, b);
	free(a);
	free(b);
	plan_result_release(&r);
}

/* Jobs file: columns by name, count and duration suffixes, one error
 * line naming file:line:col for a bad cell, and no two jobs of one name
 * (each names its plan file). */
static void test_plan_jobs_load(void **state)
{
	struct sim_model_table t = { &test_model, 1 };
	char path[] = "/tmp/test_planner_jobs_XXXXXX";
	struct plan_job *jobs;
	size_t n;
	FILE *f;
	int fd;

	(void)state;
	catalog_init();
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fprintf(f, "priority,model,tokens,deadline,name\n2,gpt-1.3b,300B,30d,\n,GPT-1.3B,1T,,big\n");
	fclose(f);
	assert_int_equal(plan_jobs_load(path, &t, &jobs, &n), RC_OK);
	assert_int_equal(n, 2);
	assert_string_equal(jobs[1].name, "big");
	assert_near(jobs[0].tokens, 300e9, 1e-12);
	assert_near(jobs[0].deadline_s, 30 * 86400.0, 1e-12);
	assert_near(jobs[0].priority, 2, 1e-12);
	assert_true(jobs[1].deadline_s < 0);
	assert_near(jobs[1].priority, 1, 1e-12);
	free(jobs);
	f = fopen(path, "w");
	fprintf(f, "model,tokens\ngpt-1.3b,lots\n");
	fclose(f);
	assert_int_equal(plan_jobs_load(path, &t, &jobs, &n), RC_INPUT);
	f = fopen(path, "w");
	fprintf(f, "model,deadline\ngpt-1.3b,30d\n");
	fclose(f);
	assert_int_equal(plan_jobs_load(path, &t, &jobs, &n), RC_INPUT);
	f = fopen(path, "w");
	fprintf(f, "model,tokens\ngpt-1.3b,300B\nGPT-1.3B,1T\n");
	fclose(f);
	assert_int_equal(plan_jobs_load(path, &t, &jobs, &n), RC_INPUT);
	unlink(path);
}

/* published.csv: the fastest row of a model and GPU wins, a GPU named by
 * any case is kept by its catalog name, and a bad cell (a speed of 0, an
 * unknown GPU, an empty run, a column it does not read) or a missing
 * column is refused in one line. */
static void test_plan_published_load(void **state)
{
	static const char *const bad[] = {
		"model,gpu,tokens_per_s_per_gpu,run,source\nm,BIG-80GB,0,r,s\n",
		"model,gpu,tokens_per_s_per_gpu,run,source\nm,HUGE-1TB,10,r,s\n",
		"model,gpu,tokens_per_s_per_gpu,run,source\nm,BIG-80GB,10,,s\n",
		"model,gpu,tokens_per_s_per_gpu,run,source,date\nm,BIG-80GB,10,r,s,x\n",
	};
	char path[] = "/tmp/test_planner_published_XXXXXX";
	struct plan_published_table t = { NULL, 0 };
	const struct plan_published *p;
	FILE *f;
	int fd;

	(void)state;
	catalog_init();
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fprintf(f, "model,gpu,tokens_per_s_per_gpu,run,source\n"
		   "m,big-80gb,100,\"slow, 8 GPUs\",a paper\nm,BIG-80GB,250,fast,a table\n"
		   "m,SMALL-24GB,50,small,a table\n");
	fclose(f);
	assert_int_equal(plan_published_load(path, &test_cat, &t), RC_OK);
	assert_int_equal(t.n, 3);
	p = plan_published_best(&t, "m", "BIG-80GB");
	assert_non_null(p);
	assert_near(p->tokens_per_s_per_gpu, 250, 1e-12);
	assert_string_equal(p->run, "fast");
	assert_string_equal(t.rows[0].gpu, "BIG-80GB");
	assert_string_equal(t.rows[0].run, "slow, 8 GPUs");
	assert_null(plan_published_best(&t, "other", "BIG-80GB"));
	assert_null(plan_published_best(NULL, "m", "BIG-80GB"));
	plan_published_release(&t);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		f = fopen(path, "w");
		fputs(bad[i], f);
		fclose(f);
		assert_int_equal(plan_published_load(path, &test_cat, &t), RC_INPUT);
		assert_null(t.rows);
	}
	/* one line: the first missing column at the header's line, the
	 * first of two bad rows */
	{
		static const char *const text[] = {
			"model,gpu,run,source\n",
			"model,gpu,tokens_per_s_per_gpu,run,source\nm,BIG-80GB,0,r,s\nm,NONE,1,r,s\n",
		};
		static const char *const said[] = {
			"1: expected a column 'tokens_per_s_per_gpu', found none",
			"2:3: tokens_per_s_per_gpu: expected a number above 0 and at most 1e9, found '0'",
		};
		struct test_stderr cap;
		char want[512], *err;

		for (size_t i = 0; i < sizeof(text) / sizeof(text[0]); i++) {
			f = fopen(path, "w");
			fputs(text[i], f);
			fclose(f);
			test_stderr_begin(&cap);
			assert_int_equal(plan_published_load(path, &test_cat, &t), RC_INPUT);
			err = test_stderr_end(&cap);
			snprintf(want, sizeof(want), "error: %s:%s\n", path, said[i]);
			assert_string_equal(err, want);
			free(err);
		}
	}
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_milp_solve_matches_exhaustive_one_phase),
		cmocka_unit_test(test_plan_milp_solve_matches_exhaustive_two_phase),
		cmocka_unit_test(test_plan_milp_solve_two_phase_meets_deadline),
		cmocka_unit_test(test_plan_milp_solve_budget_monotone),
		cmocka_unit_test(test_plan_milp_solve_shared_availability),
		cmocka_unit_test(test_plan_milp_solve_degenerate),
		cmocka_unit_test(test_plan_milp_solve_upfront_counts_in_month),
		cmocka_unit_test(test_plan_lp_fault_probe_caught),
		cmocka_unit_test(test_plan_milp_solve_dump_lp),
		cmocka_unit_test(test_plan_interrupt_model_spot),
		cmocka_unit_test(test_plan_interrupt_model_daly_examples),
		cmocka_unit_test(test_plan_interrupt_model_llama3_405b),
		cmocka_unit_test(test_plan_pareto_keeps_undominated),
		cmocka_unit_test(test_plan_run_within_budget),
		cmocka_unit_test(test_plan_run_budget_monotone),
		cmocka_unit_test(test_plan_run_zero_budget_infeasible),
		cmocka_unit_test(test_plan_run_max_duration),
		cmocka_unit_test(test_plan_run_folds_regions),
		cmocka_unit_test(test_plan_run_one_gpu),
		cmocka_unit_test(test_plan_run_fits_nowhere),
		cmocka_unit_test(test_plan_run_deadline_least_cost),
		cmocka_unit_test(test_plan_run_filters),
		cmocka_unit_test(test_plan_run_two_jobs_share),
		cmocka_unit_test(test_plan_run_two_phases),
		cmocka_unit_test(test_plan_run_no_network_one_node),
		cmocka_unit_test(test_plan_run_spot_bound_binds),
		cmocka_unit_test(test_plan_run_quota_shared),
		cmocka_unit_test(test_plan_billed_s),
		cmocka_unit_test(test_plan_run_overheads),
		cmocka_unit_test(test_plan_frontier_shipped_limits),
		cmocka_unit_test(test_plan_run_cp_only_fit),
		cmocka_unit_test(test_plan_run_cp_faster),
		cmocka_unit_test(test_plan_enumerate_cp_only_long_sequences),
		cmocka_unit_test(test_plan_enumerate_last_stage_split),
		cmocka_unit_test(test_plan_enumerate_experts_where_legal),
		cmocka_unit_test(test_plan_run_dense_unchanged),
		cmocka_unit_test(test_plan_enumerate_domain_from_offering),
		cmocka_unit_test(test_plan_precision_pick),
		cmocka_unit_test(test_plan_framework_tp_overlap),
		cmocka_unit_test(test_plan_framework_pp_send),
		cmocka_unit_test(test_plan_framework_fp8_param_gather),
		cmocka_unit_test(test_plan_framework_moe_rules),
		cmocka_unit_test(test_plan_framework_offload_rules),
		cmocka_unit_test(test_plan_largest_loss_ep),
		cmocka_unit_test(test_plan_result_to_json_keys),
		cmocka_unit_test(test_plan_jobs_load),
		cmocka_unit_test(test_plan_published_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
