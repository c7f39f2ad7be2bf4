/*
 * cmd_compare.h - what `gpuplan compare` finds, shared by its table
 * (cmd_compare.c) and its JSON (cmd_compare_json.c).
 */
#ifndef GPUPLAN_CMD_COMPARE_H
#define GPUPLAN_CMD_COMPARE_H

#include <stddef.h>

#include "plan.h"

/* One GPU type's answer: the cheapest rented plan and the plan on the
 * bought machines, each when there is one. */
struct compare_entry {
	const struct price_gpu *gpu;
	int have_rent, have_buy;
	struct plan_candidate rent, buy;  /* buy.offering is NULL: see buy_offering */
	struct price_offering buy_offering; /* the owned machines as priced */
	const struct price_hardware *hw;
	/* What is bought: hw, or for a cards-only row fewer cards than it
	 * lists, that many at its price per card. */
	struct price_hardware bought;
	int machines;
	struct price_owned_cost oc;      /* one machine */
	double breakeven_months;         /* < 0: never; NAN: no rent to compare */
	const char *why_no_buy;          /* NULL when bought */
	double best_cost;                /* for sorting */
};

/* The whole comparison and the assumptions behind it. */
struct compare_report {
	const struct plan_job *job;
	int gpus;                             /* GPUs per option */
	const struct compare_entry *ents;     /* cheapest first */
	size_t n_ents;
	const struct plan_opts *opts;         /* checkpoints, spot filter, commitments */
	const struct price_owned_opts *owned; /* amortisation, utilisation, power */
	int user_prices;                      /* the user's price rows were read */
	const char *hardware_path;            /* NULL: the shipped data/hardware.csv */
};

/* The comparison as JSON {"schema":"gpuplan.compare/1", "model", "tokens",
 * "gpus", "types":[{"gpu", "cheapest_cost_usd", "rent", "buy",
 * "why_no_buy", "breakeven", "breakeven_s"}], "assumptions"} with fixed
 * key order and no timings, so the same inputs give the same bytes; docs/
 * gpuplan.1 lists every key.  Caller frees with free(). */
char *compare_to_json(const struct compare_report *r);

#endif
