/*
 * plan_internal.h - what the planner's files share and its tests may call,
 * beyond the public plan.h.  Not for other modules.
 */
#ifndef GPUPLAN_PLAN_INTERNAL_H
#define GPUPLAN_PLAN_INTERNAL_H

#include "plan.h"

/* Makes a deliberately invalid GLPK call under the same error guard that
 * plan_milp_solve uses, to prove the guard: GLPK's error is caught by the
 * hook, its message captured, and RC_ERR returned instead of an abort.
 * Returns RC_ERR with the captured GLPK message in msg[size] (prints
 * nothing), or RC_OK if GLPK did not complain. */
enum rc plan_lp_fault_probe(char *msg, size_t size);

/* 1 when a dominates b for the per-offering frontier: no worse in time,
 * cost and nodes, better in one. */
int plan_candidate_dominates(const struct plan_candidate *a,
			     const struct plan_candidate *b);

/* Reduces c[0..n) in place to its Pareto set over (time, cost, nodes);
 * returns the new count.  Order: fastest first. */
size_t plan_pareto(struct plan_candidate *c, size_t n);

/* Every (offering, spot) frontier of one job, concatenated, plus what the
 * enumeration saw.  Returns RC_OK (possibly with *n == 0), RC_USAGE or
 * RC_INPUT for bad options (message printed). */
enum rc plan_enumerate(const struct plan_job *job, const struct price_catalog *cat,
		       const struct plan_opts *o, struct plan_candidate **out,
		       size_t *n, struct plan_stats *stats,
		       struct plan_nearest *nearest);

/* The global batch in sequences the job uses (job, then opts, then model
 * preset, then 4 Mi tokens rounded to a power of two of sequences). */
int plan_job_gbs(const struct plan_job *job, const struct plan_opts *o);

/* Re-prices c (already simulated) for its offering, purchase option and
 * the job's tokens: usd_per_hour, preemption, checkpoints, time_s, costs
 * and cost_usd (a commitment billed as plan_reserved_charged_s says,
 * storage as plan_storage_cost_usd).  Returns 0, or -1 when the option is
 * not offered or the spot waste is too high. */
int plan_candidate_price(struct plan_candidate *c, const struct plan_job *job,
			 const struct plan_opts *o);

/* 1 when c lasts longer than a plan may (plan_opts.max_duration_s, and
 * max_spot_duration_s on spot). */
int plan_candidate_too_long(const struct plan_candidate *c, const struct plan_opts *o);

#endif
