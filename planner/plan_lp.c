/*
 * plan_lp.c - the planner's MILP, solved with GLPK: choose, for every job,
 * one frontier column (or, with two phases, fractions of its tokens over up
 * to two columns run one after the other) under a total budget, an hourly
 * budget, per-job deadlines and per-offering availability shared by jobs
 * that run at the same time.  The only file that includes <glpk.h>.
 *
 * Formulation (time in hours, money in USD; j a job, c a column of job j,
 * g an offering):
 *   y_c in {0,1}             column c is used
 *   f_c in [0,1]             share of job j's tokens on c (f_c = y_c with
 *                            one phase)
 *   sum_c f_c = 1            every job is trained completely
 *   f_c <= y_c, sum_c y_c <= 2          (two phases)
 *   time_j = sum_c T_c f_c + s (sum_c y_c - 1)      (s: switch time)
 *   r_j >= rate_c y_c        the job's dearest phase (two phases)
 *   w_j >= k r_j - k Rmax_j (2 - sum_c y_c), w_j >= 0
 *                            switch cost: the switch time k = s/3600 h at
 *                            the dearer rate, only when two plans are used
 *                            (big-M with M = k Rmax_j, exact because w_j
 *                            only ever hurts)
 *   sum_c C_c f_c + sum_j w_j <= budget
 *   sum_j r_j <= hourly budget          (sum_c rate_c y_c with one phase)
 *   time_j <= deadline_j
 *   n_jg >= nodes_c y_c, sum_j n_jg <= avail_g     (one phase: sum of
 *                            nodes_c y_c over the group directly)
 * Objective: least sum_j priority_j time_j, or least total cost; then,
 * among optima, the other one (lexicographic, a second solve with the
 * first objective bounded by its optimum).
 *
 * GLPK aborts the process on bad arguments, so the problem is validated
 * here first, and glp_error_hook catches whatever remains: the hook frees
 * GLPK's environment and longjmps back, the message GLPK wrote (captured
 * by a terminal hook, never printed) is reported, and the call returns
 * RC_ERR.  Terminal output is off; glp_intopt runs under a time limit.
 * This file does not enumerate or simulate: it sees numbers only.
 */
#include "plan_internal.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <glpk.h>

/* ---- the error guard --------------------------------------------------- */

struct lp_guard {
	jmp_buf jb;
	char msg[512];
	size_t len;
};

/* Terminal hook: keep GLPK's text (the error message among it) for our
 * own one-line report; returning non-zero suppresses GLPK's printing. */
static int guard_term(void *info, const char *s)
{
	struct lp_guard *g = info;
	size_t n = strlen(s);

	if (g->len + n >= sizeof(g->msg)) {
		g->len = 0;
		n = n >= sizeof(g->msg) ? sizeof(g->msg) - 1 : n;
	}
	memcpy(g->msg + g->len, s, n);
	g->len += n;
	g->msg[g->len] = '\0';
	return 1;
}

/* Error hook: GLPK is in an undefined state; free all of it (the problem
 * object included) and return to the guarded call. */
static void guard_error(void *info)
{
	struct lp_guard *g = info;

	glp_free_env();
	longjmp(g->jb, 1);
}

static void guard_arm(struct lp_guard *g)
{
	g->msg[0] = '\0';
	g->len = 0;
	glp_term_out(GLP_OFF);
	glp_term_hook(guard_term, g);
	glp_error_hook(guard_error, g);
}

static void guard_disarm(void)
{
	glp_error_hook(NULL, NULL);
	glp_term_hook(NULL, NULL);
}

/* GLPK's message as one line: the first line of what it wrote. */
static void guard_message(const struct lp_guard *g, char *out, size_t size)
{
	size_t n = strcspn(g->msg, "\n");

	if (n == 0) {
		snprintf(out, size, "internal error");
		return;
	}
	if (n >= size)
		n = size - 1;
	memcpy(out, g->msg, n);
	out[n] = '\0';
}

enum rc plan_lp_fault_probe(char *msg, size_t size)
{
	struct lp_guard g;
	glp_prob *P;

	guard_arm(&g);
	if (setjmp(g.jb)) {
		guard_message(&g, msg, size);
		return RC_ERR;
	}
	P = glp_create_prob();
	glp_add_cols(P, 1);
	/* Column 2 does not exist: glp_set_col_bnds reports "j = 2; column
	 * number out of range" and would abort() without the hook. */
	glp_set_col_bnds(P, 2, GLP_DB, 0.0, 1.0);
	glp_delete_prob(P);
	guard_disarm();
	if (size)
		msg[0] = '\0';
	return RC_OK;
}

/* ---- validation -------------------------------------------------------- */

static int finite_ge(double v, double lo) { return isfinite(v) && v >= lo; }

static enum rc milp_validate(const struct plan_milp *m)
{
	if (m->n_jobs < 1 || !m->cols || m->n_cols == 0 || m->n_cols > INT_MAX / 8) {
		gp_error("plan: milp: expected at least one job and one column, found %d jobs and %zu columns",
			 m->n_jobs, m->n_cols);
		return RC_INPUT;
	}
	if (m->phases != 1 && m->phases != 2) {
		gp_error("plan: milp: expected 1 or 2 phases, found %d", m->phases);
		return RC_INPUT;
	}
	if (m->objective != PLAN_OBJECTIVE_TIME && m->objective != PLAN_OBJECTIVE_COST) {
		gp_error("plan: milp: expected objective time or cost");
		return RC_INPUT;
	}
	if (!(isfinite(m->time_limit_s) && m->time_limit_s > 0) || !finite_ge(m->switch_s, 0) ||
	    !isfinite(m->budget_usd) || !isfinite(m->hourly_budget_usd) ||
	    m->n_groups < 0 || (m->n_groups > 0 && !m->avail_nodes)) {
		gp_error("plan: milp: expected a positive time limit, finite budgets and a non-negative switch time");
		return RC_INPUT;
	}
	for (int g = 0; g < m->n_groups; g++)
		if (m->avail_nodes[g] < 0) {
			gp_error("plan: milp: group %d: expected availability >= 0, found %d",
				 g, m->avail_nodes[g]);
			return RC_INPUT;
		}
	for (int j = 0; j < m->n_jobs; j++) {
		if (m->priority && !(isfinite(m->priority[j]) && m->priority[j] > 0)) {
			gp_error("plan: milp: job %d: expected a priority > 0, found %g", j + 1,
				 m->priority[j]);
			return RC_INPUT;
		}
		if (m->deadline_s && !isfinite(m->deadline_s[j])) {
			gp_error("plan: milp: job %d: expected a finite deadline", j + 1);
			return RC_INPUT;
		}
	}
	for (size_t i = 0; i < m->n_cols; i++) {
		const struct plan_column *c = &m->cols[i];

		if (c->job < 0 || c->job >= m->n_jobs || c->group < -1 ||
		    c->group >= m->n_groups || c->nodes < 1 ||
		    !(isfinite(c->time_s) && c->time_s > 0) || !finite_ge(c->cost_usd, 0) ||
		    !finite_ge(c->usd_per_hour, 0)) {
			gp_error("plan: milp: column %zu: expected job, group in range, nodes >= 1, time > 0, cost and rate >= 0 (found job %d group %d nodes %d time %g cost %g rate %g)",
				 i, c->job, c->group, c->nodes, c->time_s, c->cost_usd,
				 c->usd_per_hour);
			return RC_INPUT;
		}
	}
	return RC_OK;
}

static double job_deadline(const struct plan_milp *m, int j)
{
	return m->deadline_s ? m->deadline_s[j] : -1;
}

static double job_priority(const struct plan_milp *m, int j)
{
	return m->priority ? m->priority[j] : 1.0;
}

/* What column c spends against the hourly budget: its rate, or more where
 * it pays up front within a monthly cap (plan_column.budget_usd_per_hour). */
static double budget_rate(const struct plan_column *c)
{
	return c->budget_usd_per_hour > 0 ? c->budget_usd_per_hour : c->usd_per_hour;
}

/* With one phase a column that breaks a constraint on its own can never be
 * chosen; with two, one that breaks the hourly budget or availability on
 * its own cannot either (budget and deadline may be met by mixing). */
static int column_admissible(const struct plan_milp *m, size_t i)
{
	const struct plan_column *c = &m->cols[i];
	double dl = job_deadline(m, c->job);

	if (m->exclude && m->exclude[i])
		return 0;
	if (m->hourly_budget_usd >= 0 && budget_rate(c) > m->hourly_budget_usd)
		return 0;
	if (c->group >= 0 && m->avail_nodes[c->group] > 0 &&
	    c->nodes > m->avail_nodes[c->group])
		return 0;
	if (m->phases == 1) {
		if (m->budget_usd >= 0 && c->cost_usd > m->budget_usd)
			return 0;
		if (dl >= 0 && c->time_s > dl)
			return 0;
	}
	return 1;
}

/* 1 when column d can replace column c in any solution without breaking a
 * constraint or worsening an objective: same job, no slower, no dearer,
 * no higher rate (hourly budget and switch cost), and no scarcer capacity
 * (an unlimited offering, or c's own offering with no more nodes).  Also
 * true when used together: f_c T_c + f_d T_d + s >= T_d, and likewise for
 * cost. */
static int column_dominates(const struct plan_milp *m, const struct plan_column *d,
			    const struct plan_column *c)
{
	int d_free = d->group < 0 || m->avail_nodes[d->group] == 0;

	if (d->job != c->job || d->time_s > c->time_s || d->cost_usd > c->cost_usd ||
	    d->usd_per_hour > c->usd_per_hour || budget_rate(d) > budget_rate(c))
		return 0;
	return d_free || (d->group == c->group && d->nodes <= c->nodes);
}

static int identical(const struct plan_column *a, const struct plan_column *b)
{
	return a->time_s == b->time_s && a->cost_usd == b->cost_usd &&
	       a->usd_per_hour == b->usd_per_hour && budget_rate(a) == budget_rate(b) &&
	       a->group == b->group && a->nodes == b->nodes;
}

/* An exact presolve: drops every kept column another kept column
 * dominates (of identical ones, all but the first).  Frontier columns of
 * different offerings often dominate each other; GLPK's branch and bound
 * then has far fewer binaries.  Returns the columns left. */
static size_t prune_dominated(const struct plan_milp *m, unsigned char *keep)
{
	size_t left = 0;

	for (size_t i = 0; i < m->n_cols; i++) {
		if (!keep[i])
			continue;
		for (size_t k = 0; k < m->n_cols; k++) {
			if (k == i || !keep[k] || !column_dominates(m, &m->cols[k], &m->cols[i]))
				continue;
			if (identical(&m->cols[k], &m->cols[i]) && k > i)
				continue;
			keep[i] = 0;
			break;
		}
		left += keep[i];
	}
	return left;
}

/* ---- building the problem ---------------------------------------------- */

struct lp_map {
	int *ycol, *fcol;        /* per input column; 0 = not in the problem */
	int *rcol, *wcol;        /* per job; 0 = none */
	int *ncol;               /* per job x group; 0 = none */
	int n;                   /* GLPK columns */
	double *obj_time, *obj_cost; /* [n + 1], index 0 = constant */
	int *ind;                /* scratch for rows, [n + 1] */
	double *val;
	double *x;               /* solution, [n + 1] */
	double *save;            /* the first stage's solution, [n + 1] */
};

static void map_release(struct lp_map *mp)
{
	free(mp->ycol);
	free(mp->fcol);
	free(mp->rcol);
	free(mp->wcol);
	free(mp->ncol);
	free(mp->obj_time);
	free(mp->obj_cost);
	free(mp->ind);
	free(mp->val);
	free(mp->x);
	free(mp->save);
}

/* Numbers the GLPK columns before GLPK is touched, so that every array
 * can be allocated outside the guarded region. */
static void map_init(struct lp_map *mp, const struct plan_milp *m, const unsigned char *keep)
{
	int njg = m->n_jobs * (m->n_groups > 0 ? m->n_groups : 1);
	int k = 0;

	memset(mp, 0, sizeof(*mp));
	mp->ycol = xcalloc(m->n_cols, sizeof(int));
	mp->fcol = xcalloc(m->n_cols, sizeof(int));
	mp->rcol = xcalloc((size_t)m->n_jobs, sizeof(int));
	mp->wcol = xcalloc((size_t)m->n_jobs, sizeof(int));
	mp->ncol = xcalloc((size_t)njg, sizeof(int));
	for (size_t i = 0; i < m->n_cols; i++)
		if (keep[i])
			mp->ycol[i] = ++k;
	if (m->phases == 2) {
		for (size_t i = 0; i < m->n_cols; i++)
			if (keep[i])
				mp->fcol[i] = ++k;
		for (int j = 0; j < m->n_jobs; j++) {
			mp->rcol[j] = ++k;
			mp->wcol[j] = ++k;
		}
		for (size_t i = 0; i < m->n_cols; i++) {
			const struct plan_column *c = &m->cols[i];
			int *nc;

			if (!keep[i] || c->group < 0 || m->avail_nodes[c->group] == 0)
				continue;
			nc = &mp->ncol[c->job * m->n_groups + c->group];
			if (!*nc)
				*nc = ++k;
		}
	}
	mp->n = k;
	mp->obj_time = xcalloc((size_t)k + 1, sizeof(double));
	mp->obj_cost = xcalloc((size_t)k + 1, sizeof(double));
	mp->ind = xcalloc((size_t)k + 1, sizeof(int));
	mp->val = xcalloc((size_t)k + 1, sizeof(double));
	mp->x = xcalloc((size_t)k + 1, sizeof(double));
	mp->save = xcalloc((size_t)k + 1, sizeof(double));
}

/* The column carrying column i's share of tokens. */
static int share_col(const struct lp_map *mp, const struct plan_milp *m, size_t i)
{
	return m->phases == 2 ? mp->fcol[i] : mp->ycol[i];
}

static int add_row(glp_prob *P, const char *name, int type, double lo, double up,
		   int len, const int *ind, const double *val)
{
	int r = glp_add_rows(P, 1);

	glp_set_row_name(P, r, name);
	glp_set_row_bnds(P, r, type, lo, up);
	if (len > 0)
		glp_set_mat_row(P, r, len, ind, val);
	return r;
}

/* Builds the whole problem into P (inside the guard). */
static void lp_build(glp_prob *P, const struct plan_milp *m, const unsigned char *keep,
		     struct lp_map *mp)
{
	double k = m->switch_s / 3600.0;
	char name[64];
	int len;

	glp_set_prob_name(P, "gpuplan");
	glp_set_obj_name(P, m->objective == PLAN_OBJECTIVE_TIME ? "weighted_hours" : "usd");
	glp_set_obj_dir(P, GLP_MIN);
	glp_add_cols(P, mp->n);
	for (size_t i = 0; i < m->n_cols; i++) {
		const struct plan_column *c = &m->cols[i];
		double w = job_priority(m, c->job);

		if (!keep[i])
			continue;
		snprintf(name, sizeof(name), "y%zu", i);
		glp_set_col_name(P, mp->ycol[i], name);
		glp_set_col_kind(P, mp->ycol[i], GLP_BV);
		if (m->phases == 2) {
			snprintf(name, sizeof(name), "f%zu", i);
			glp_set_col_name(P, mp->fcol[i], name);
			glp_set_col_bnds(P, mp->fcol[i], GLP_DB, 0.0, 1.0);
			/* time_j = sum T f + k (sum y - 1) */
			mp->obj_time[mp->ycol[i]] += w * k;
		}
		mp->obj_time[share_col(mp, m, i)] += w * c->time_s / 3600.0;
		mp->obj_cost[share_col(mp, m, i)] += c->cost_usd;
	}
	if (m->phases == 2) {
		for (int j = 0; j < m->n_jobs; j++) {
			snprintf(name, sizeof(name), "r%d", j);
			glp_set_col_name(P, mp->rcol[j], name);
			glp_set_col_bnds(P, mp->rcol[j], GLP_LO, 0.0, 0.0);
			snprintf(name, sizeof(name), "w%d", j);
			glp_set_col_name(P, mp->wcol[j], name);
			glp_set_col_bnds(P, mp->wcol[j], GLP_LO, 0.0, 0.0);
			mp->obj_cost[mp->wcol[j]] += 1.0;
			mp->obj_time[0] -= job_priority(m, j) * k;
		}
		for (int j = 0; j < m->n_jobs; j++)
			for (int g = 0; g < m->n_groups; g++) {
				int c = mp->ncol[j * m->n_groups + g];

				if (!c)
					continue;
				snprintf(name, sizeof(name), "n%d_%d", j, g);
				glp_set_col_name(P, c, name);
				glp_set_col_bnds(P, c, GLP_LO, 0.0, 0.0);
			}
	}

	/* Every job trained completely, with at most `phases` plans. */
	for (int j = 0; j < m->n_jobs; j++) {
		len = 0;
		for (size_t i = 0; i < m->n_cols; i++)
			if (keep[i] && m->cols[i].job == j) {
				mp->ind[++len] = share_col(mp, m, i);
				mp->val[len] = 1.0;
			}
		snprintf(name, sizeof(name), "job%d", j);
		add_row(P, name, GLP_FX, 1.0, 1.0, len, mp->ind, mp->val);
		if (m->phases == 2) {
			len = 0;
			for (size_t i = 0; i < m->n_cols; i++)
				if (keep[i] && m->cols[i].job == j) {
					mp->ind[++len] = mp->ycol[i];
					mp->val[len] = 1.0;
				}
			snprintf(name, sizeof(name), "phases%d", j);
			add_row(P, name, GLP_UP, 0.0, 2.0, len, mp->ind, mp->val);
		}
	}
	if (m->phases == 2)
		for (size_t i = 0; i < m->n_cols; i++) {
			const struct plan_column *c = &m->cols[i];

			if (!keep[i])
				continue;
			mp->ind[1] = mp->fcol[i];
			mp->val[1] = 1.0;
			mp->ind[2] = mp->ycol[i];
			mp->val[2] = -1.0;
			snprintf(name, sizeof(name), "link%zu", i);
			add_row(P, name, GLP_UP, 0.0, 0.0, 2, mp->ind, mp->val);
			mp->ind[1] = mp->ycol[i];
			mp->val[1] = budget_rate(c);
			mp->ind[2] = mp->rcol[c->job];
			mp->val[2] = -1.0;
			snprintf(name, sizeof(name), "rate%zu", i);
			add_row(P, name, GLP_UP, 0.0, 0.0, 2, mp->ind, mp->val);
		}

	/* Switch cost (two phases): w_j >= k r_j - k Rmax_j (2 - sum y). */
	if (m->phases == 2 && k > 0)
		for (int j = 0; j < m->n_jobs; j++) {
			double rmax = 0;

			len = 0;
			for (size_t i = 0; i < m->n_cols; i++)
				if (keep[i] && m->cols[i].job == j && m->cols[i].usd_per_hour > rmax)
					rmax = m->cols[i].usd_per_hour;
			for (size_t i = 0; i < m->n_cols; i++)
				if (keep[i] && m->cols[i].job == j) {
					mp->ind[++len] = mp->ycol[i];
					mp->val[len] = k * rmax;
				}
			mp->ind[++len] = mp->rcol[j];
			mp->val[len] = k;
			mp->ind[++len] = mp->wcol[j];
			mp->val[len] = -1.0;
			snprintf(name, sizeof(name), "switch%d", j);
			add_row(P, name, GLP_UP, 0.0, 2.0 * k * rmax, len, mp->ind, mp->val);
		}

	if (m->budget_usd >= 0) {
		len = 0;
		for (int c = 1; c <= mp->n; c++)
			if (mp->obj_cost[c] != 0) {
				mp->ind[++len] = c;
				mp->val[len] = mp->obj_cost[c];
			}
		add_row(P, "budget", GLP_UP, 0.0, m->budget_usd, len, mp->ind, mp->val);
	}
	if (m->hourly_budget_usd >= 0) {
		len = 0;
		if (m->phases == 2) {
			for (int j = 0; j < m->n_jobs; j++) {
				mp->ind[++len] = mp->rcol[j];
				mp->val[len] = 1.0;
			}
		} else {
			for (size_t i = 0; i < m->n_cols; i++)
				if (keep[i]) {
					mp->ind[++len] = mp->ycol[i];
					mp->val[len] = budget_rate(&m->cols[i]);
				}
		}
		add_row(P, "hourly", GLP_UP, 0.0, m->hourly_budget_usd, len, mp->ind, mp->val);
	}
	for (int j = 0; j < m->n_jobs; j++) {
		double dl = job_deadline(m, j);

		if (dl < 0)
			continue;
		len = 0;
		for (size_t i = 0; i < m->n_cols; i++) {
			if (!keep[i] || m->cols[i].job != j)
				continue;
			mp->ind[++len] = share_col(mp, m, i);
			mp->val[len] = m->cols[i].time_s / 3600.0;
			if (m->phases == 2 && k > 0) {
				mp->ind[++len] = mp->ycol[i];
				mp->val[len] = k;
			}
		}
		snprintf(name, sizeof(name), "deadline%d", j);
		add_row(P, name, GLP_UP, 0.0, dl / 3600.0 + (m->phases == 2 ? k : 0.0),
			len, mp->ind, mp->val);
	}
	for (int g = 0; g < m->n_groups; g++) {
		if (m->avail_nodes[g] == 0)
			continue;
		len = 0;
		if (m->phases == 2) {
			for (size_t i = 0; i < m->n_cols; i++) {
				const struct plan_column *c = &m->cols[i];

				if (!keep[i] || c->group != g)
					continue;
				mp->ind[1] = mp->ycol[i];
				mp->val[1] = c->nodes;
				mp->ind[2] = mp->ncol[c->job * m->n_groups + g];
				mp->val[2] = -1.0;
				snprintf(name, sizeof(name), "nodes%zu", i);
				add_row(P, name, GLP_UP, 0.0, 0.0, 2, mp->ind, mp->val);
			}
			for (int j = 0; j < m->n_jobs; j++)
				if (mp->ncol[j * m->n_groups + g]) {
					mp->ind[++len] = mp->ncol[j * m->n_groups + g];
					mp->val[len] = 1.0;
				}
		} else {
			for (size_t i = 0; i < m->n_cols; i++)
				if (keep[i] && m->cols[i].group == g) {
					mp->ind[++len] = mp->ycol[i];
					mp->val[len] = m->cols[i].nodes;
				}
		}
		if (len == 0)
			continue;
		snprintf(name, sizeof(name), "avail%d", g);
		add_row(P, name, GLP_UP, 0.0, (double)m->avail_nodes[g], len, mp->ind, mp->val);
	}
}

static void set_objective(glp_prob *P, const struct lp_map *mp, const double *coef)
{
	for (int c = 0; c <= mp->n; c++)
		glp_set_obj_coef(P, c, coef[c]);
}

/* One glp_intopt.  Returns RC_OK (values in mp->x, *optimal set),
 * RC_INFEASIBLE, or RC_ERR with a reason in why. */
static enum rc lp_intopt(glp_prob *P, const struct plan_milp *m, struct lp_map *mp,
			 int *optimal, char *why, size_t size)
{
	glp_iocp parm;
	double lim_ms = m->time_limit_s * 1e3;
	int ret, st;

	glp_init_iocp(&parm);
	parm.msg_lev = GLP_MSG_OFF;
	parm.presolve = GLP_ON;
	parm.mir_cuts = GLP_ON;
	parm.cov_cuts = GLP_ON;
	parm.tm_lim = lim_ms >= INT_MAX ? INT_MAX : (lim_ms < 1 ? 1 : (int)lim_ms);
	ret = glp_intopt(P, &parm);
	st = glp_mip_status(P);
	switch (ret) {
	case 0:
		break;
	case GLP_ENOPFS:
		return RC_INFEASIBLE;
	case GLP_ETMLIM:
	case GLP_EMIPGAP:
	case GLP_ESTOP:
		if (st == GLP_FEAS || st == GLP_OPT)
			break;
		snprintf(why, size, "GLPK stopped at its time limit (%.3g s) before finding a feasible choice",
			 m->time_limit_s);
		return RC_ERR;
	case GLP_ENODFS:
		snprintf(why, size, "GLPK found the LP relaxation unbounded (no dual feasible solution)");
		return RC_ERR;
	case GLP_EROOT:
		snprintf(why, size, "GLPK found no optimal basis for the LP relaxation");
		return RC_ERR;
	case GLP_EBOUND:
		snprintf(why, size, "GLPK rejected a variable's bounds");
		return RC_ERR;
	default:
		snprintf(why, size, "GLPK failed (glp_intopt returned %d)", ret);
		return RC_ERR;
	}
	if (st == GLP_NOFEAS)
		return RC_INFEASIBLE;
	if (st != GLP_OPT && st != GLP_FEAS) {
		snprintf(why, size, "GLPK returned no integer solution (status %d)", st);
		return RC_ERR;
	}
	*optimal = st == GLP_OPT;
	for (int c = 1; c <= mp->n; c++)
		mp->x[c] = glp_mip_col_val(P, c);
	return RC_OK;
}

/* Builds, optionally dumps, and solves both lexicographic stages.  Runs
 * inside the error guard; the map's arrays are allocated by the caller. */
static enum rc lp_stages(const struct plan_milp *m, const unsigned char *keep,
			 struct lp_map *mp, int *optimal, char *why, size_t size)
{
	const double *first, *second;
	double best, bound;
	glp_prob *P;
	enum rc rc;
	int len = 0, opt2 = 0;

	first = m->objective == PLAN_OBJECTIVE_TIME ? mp->obj_time : mp->obj_cost;
	second = m->objective == PLAN_OBJECTIVE_TIME ? mp->obj_cost : mp->obj_time;
	P = glp_create_prob();
	lp_build(P, m, keep, mp);
	set_objective(P, mp, first);
	if (m->dump_lp_path && glp_write_lp(P, NULL, m->dump_lp_path) != 0) {
		glp_delete_prob(P);
		snprintf(why, size, "%s: cannot write the LP file", m->dump_lp_path);
		return RC_ERR;
	}
	glp_scale_prob(P, GLP_SF_AUTO);
	rc = lp_intopt(P, m, mp, optimal, why, size);
	if (rc != RC_OK) {
		glp_delete_prob(P);
		return rc;
	}

	/* Second stage: among the first objective's optima, the best in the
	 * other.  Keeps the first stage's answer if this one fails. */
	best = first[0];
	for (int c = 1; c <= mp->n; c++) {
		best += first[c] * mp->x[c];
		if (first[c] != 0) {
			mp->ind[++len] = c;
			mp->val[len] = first[c];
		}
	}
	bound = best - first[0] + 1e-9 * fmax(1.0, fabs(best));
	if (len > 0) {
		memcpy(mp->save, mp->x, ((size_t)mp->n + 1) * sizeof(double));
		add_row(P, "tie", GLP_UP, 0.0, bound, len, mp->ind, mp->val);
		set_objective(P, mp, second);
		if (lp_intopt(P, m, mp, &opt2, why, size) != RC_OK)
			memcpy(mp->x, mp->save, ((size_t)mp->n + 1) * sizeof(double));
		else
			*optimal = *optimal && opt2;
	}
	glp_delete_prob(P);
	return RC_OK;
}

/* lp_stages under the error guard: a GLPK error frees GLPK's environment
 * (the problem object with it) and comes back here as RC_ERR. */
static enum rc lp_solve_guarded(const struct plan_milp *m, const unsigned char *keep,
				struct lp_map *mp, int *optimal, char *why, size_t size)
{
	struct lp_guard g;
	enum rc rc;

	guard_arm(&g);
	if (setjmp(g.jb)) {
		char msg[256];

		guard_message(&g, msg, sizeof(msg));
		snprintf(why, size, "GLPK error: %s", msg);
		return RC_ERR;
	}
	rc = lp_stages(m, keep, mp, optimal, why, size);
	guard_disarm();
	return rc;
}

/* ---- solution ---------------------------------------------------------- */

double plan_switch_cost_usd(double switch_s, double usd_per_hour)
{
	return switch_s / 3600.0 * usd_per_hour;
}

void plan_milp_init(struct plan_milp *m)
{
	memset(m, 0, sizeof(*m));
	m->budget_usd = -1;
	m->hourly_budget_usd = -1;
	m->objective = PLAN_OBJECTIVE_TIME;
	m->phases = 1;
	m->switch_s = PLAN_DEFAULT_SWITCH_S;
	m->time_limit_s = PLAN_DEFAULT_MILP_TIME_LIMIT_S;
}

void plan_milp_solution_release(struct plan_milp_solution *sol)
{
	if (!sol)
		return;
	free(sol->frac);
	free(sol->used);
	free(sol->time_s);
	memset(sol, 0, sizeof(*sol));
}

/* Reads the chosen shares back, drops phases with a negligible share and
 * recomputes every figure from the columns themselves. */
static void solution_fill(const struct plan_milp *m, const unsigned char *keep,
			  const struct lp_map *mp, struct plan_milp_solution *sol)
{
	double *sum = xcalloc((size_t)m->n_jobs, sizeof(double));
	double *rmax = xcalloc((size_t)m->n_jobs, sizeof(double));
	int *count = xcalloc((size_t)m->n_jobs, sizeof(int));

	for (size_t i = 0; i < m->n_cols; i++) {
		double f;

		if (!keep[i])
			continue;
		/* A share below GLPK's feasibility tolerances is noise, not a
		 * phase worth a switch. */
		f = mp->x[share_col(mp, m, i)];
		if (mp->x[mp->ycol[i]] < 0.5 || f < 1e-6)
			continue;
		if (m->phases == 1)
			f = 1.0;
		sol->frac[i] = f > 1 ? 1 : f;
		sum[m->cols[i].job] += sol->frac[i];
	}
	sol->cost_usd = 0;
	sol->usd_per_hour = 0;
	sol->objective = 0;
	for (size_t i = 0; i < m->n_cols; i++) {
		const struct plan_column *c = &m->cols[i];

		if (sol->frac[i] == 0)
			continue;
		sol->frac[i] /= sum[c->job];
		sol->used[i] = 1;
		count[c->job]++;
		sol->time_s[c->job] += sol->frac[i] * c->time_s;
		sol->cost_usd += sol->frac[i] * c->cost_usd;
		if (c->usd_per_hour > rmax[c->job])
			rmax[c->job] = c->usd_per_hour;
	}
	for (int j = 0; j < m->n_jobs; j++) {
		if (count[j] > 1) {
			sol->time_s[j] += m->switch_s * (count[j] - 1);
			sol->cost_usd += plan_switch_cost_usd(m->switch_s, rmax[j]);
		}
		sol->usd_per_hour += rmax[j];
		if (m->objective == PLAN_OBJECTIVE_TIME)
			sol->objective += job_priority(m, j) * sol->time_s[j];
	}
	if (m->objective == PLAN_OBJECTIVE_COST)
		sol->objective = sol->cost_usd;
	free(sum);
	free(rmax);
	free(count);
}

enum rc plan_milp_solve(const struct plan_milp *m, struct plan_milp_solution *sol)
{
	unsigned char *keep;
	int *jobcols;
	struct lp_map mp;
	char why[512] = "";
	struct timespec t0, t1;
	enum rc rc;
	int optimal = 0;

	rc = milp_validate(m);
	if (rc != RC_OK)
		return rc;
	keep = xcalloc(m->n_cols, 1);
	jobcols = xcalloc((size_t)m->n_jobs, sizeof(int));
	for (size_t i = 0; i < m->n_cols; i++)
		keep[i] = (unsigned char)column_admissible(m, i);
	prune_dominated(m, keep);
	for (size_t i = 0; i < m->n_cols; i++)
		jobcols[m->cols[i].job] += keep[i];
	for (int j = 0; j < m->n_jobs; j++)
		if (jobcols[j] == 0) {
			free(keep);
			free(jobcols);
			return RC_INFEASIBLE;
		}
	free(jobcols);

	map_init(&mp, m, keep);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = lp_solve_guarded(m, keep, &mp, &optimal, why, sizeof(why));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (rc == RC_ERR)
		gp_error("plan: milp: %s", why);
	if (rc == RC_OK) {
		memset(sol, 0, sizeof(*sol));
		sol->frac = xcalloc(m->n_cols, sizeof(double));
		sol->used = xcalloc(m->n_cols, 1);
		sol->time_s = xcalloc((size_t)m->n_jobs, sizeof(double));
		solution_fill(m, keep, &mp, sol);
		sol->optimal = optimal;
		sol->solve_s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
		if (!optimal)
			gp_warn("plan: milp: GLPK stopped at its time limit (%.3g s); the answer is feasible but not proven optimal",
				m->time_limit_s);
	}
	map_release(&mp);
	free(keep);
	return rc;
}
