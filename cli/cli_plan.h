/*
 * cli_plan.h - what the commands that plan (`plan`, `frontier`, `compare`)
 * share: the job and filter flags, their help text, and loading the
 * catalog, the model presets and the jobs (cli/cli_plan.c); the cost-model
 * flags (cli/cli_cost.c).  Front-end code only; the planning itself is
 * planner/plan.h.
 */
#ifndef GPUPLAN_CLI_PLAN_H
#define GPUPLAN_CLI_PLAN_H

#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "cli_finetune.h"
#include "plan.h"
#include "plan_published.h"

/* Long-option codes of the shared flags (above any short option). */
enum {
	PCLI_MODEL = 256, PCLI_TOKENS, PCLI_JOBS, PCLI_MODELS, PCLI_GBS, PCLI_GBS_TOKENS,
	PCLI_GPU, PCLI_PROVIDER, PCLI_REGION, PCLI_SPOT, PCLI_NO_SPOT, PCLI_MAX_GPUS,
	PCLI_MIN_GPUS, PCLI_TP, PCLI_PP, PCLI_CP, PCLI_ZERO, PCLI_PREEMPT, PCLI_RESTART,
	PCLI_FAILURE_RATE, PCLI_STACK,
	PCLI_CKPT_BW, PCLI_JSON, PCLI_FRAMEWORK, PCLI_STARTUP,
	PCLI_RESERVED, PCLI_COMMIT_SHARE, PCLI_COMMITMENTS, PCLI_HAVE, PCLI_HARDWARE,
	PCLI_OWNED, PCLI_STORAGE_PRICE, PCLI_CKPT_KEEP, PCLI_CKPT_INTERVAL,
	PCLI_BLOCKS, PCLI_MAX_PRICE_AGE, PCLI_MAX_DURATION, PCLI_MAX_SPOT_DURATION, PCLI_EP, PCLI_ETP, PCLI_PRECISION,
	PCLI_FT, PCLI_FT_LAST = PCLI_FT + FT_CLI_N - 1,
	PCLI_FIRST_FREE
};

#define PLAN_CLI_OPTIONS \
	{ "model", required_argument, NULL, PCLI_MODEL }, \
	{ "tokens", required_argument, NULL, PCLI_TOKENS }, \
	{ "jobs", required_argument, NULL, PCLI_JOBS }, \
	{ "models", required_argument, NULL, PCLI_MODELS }, \
	{ "gbs", required_argument, NULL, PCLI_GBS }, \
	{ "gbs-tokens", required_argument, NULL, PCLI_GBS_TOKENS }, \
	{ "gpu", required_argument, NULL, PCLI_GPU }, \
	{ "provider", required_argument, NULL, PCLI_PROVIDER }, \
	{ "region", required_argument, NULL, PCLI_REGION }, \
	{ "spot", no_argument, NULL, PCLI_SPOT }, \
	{ "no-spot", no_argument, NULL, PCLI_NO_SPOT }, \
	{ "max-gpus", required_argument, NULL, PCLI_MAX_GPUS }, \
	{ "min-gpus", required_argument, NULL, PCLI_MIN_GPUS }, \
	{ "tp", required_argument, NULL, PCLI_TP }, \
	{ "pp", required_argument, NULL, PCLI_PP }, \
	{ "cp", required_argument, NULL, PCLI_CP }, \
	{ "ep", required_argument, NULL, PCLI_EP }, \
	{ "etp", required_argument, NULL, PCLI_ETP }, \
	{ "precision", required_argument, NULL, PCLI_PRECISION }, \
	{ "zero", required_argument, NULL, PCLI_ZERO }, \
	{ "framework", required_argument, NULL, PCLI_FRAMEWORK }, \
	{ "failure-rate", required_argument, NULL, PCLI_FAILURE_RATE }, \
	{ "stack", required_argument, NULL, PCLI_STACK }, \
	{ "preempt-rate", required_argument, NULL, PCLI_PREEMPT }, \
	{ "restart-time", required_argument, NULL, PCLI_RESTART }, \
	{ "ckpt-bw", required_argument, NULL, PCLI_CKPT_BW }, \
	{ "startup", required_argument, NULL, PCLI_STARTUP }, \
	{ "json", no_argument, NULL, PCLI_JSON }, \
	{ "max-price-age", required_argument, NULL, PCLI_MAX_PRICE_AGE }, \
	{ "max-duration", required_argument, NULL, PCLI_MAX_DURATION }, \
	{ "max-spot-duration", required_argument, NULL, PCLI_MAX_SPOT_DURATION }, \
	FT_CLI_OPTIONS(PCLI_FT), \
	COST_CLI_OPTIONS

/* The cost-model flags, shared by plan, frontier and compare
 * (cli/cli_cost.c). */
#define COST_CLI_OPTIONS \
	{ "reserved", no_argument, NULL, PCLI_RESERVED }, \
	{ "commitment-share", required_argument, NULL, PCLI_COMMIT_SHARE }, \
	{ "commitments", required_argument, NULL, PCLI_COMMITMENTS }, \
	{ "have", required_argument, NULL, PCLI_HAVE }, \
	{ "hardware", required_argument, NULL, PCLI_HARDWARE }, \
	{ "owned", required_argument, NULL, PCLI_OWNED }, \
	{ "storage-price", required_argument, NULL, PCLI_STORAGE_PRICE }, \
	{ "ckpt-keep", required_argument, NULL, PCLI_CKPT_KEEP }, \
	{ "ckpt-interval", required_argument, NULL, PCLI_CKPT_INTERVAL }, \
	{ "blocks", required_argument, NULL, PCLI_BLOCKS }

#define COST_CLI_MAX_HAVE 8

/* "--have 16xRTX4090": count GPUs the user owns, GPU name resolved at load. */
struct cost_cli_have {
	int count;
	const char *gpu;           /* as typed */
};

struct cost_cli {
	int reserved;                   /* --reserved or --commitment-share given */
	const char *commitments_path;   /* NULL: <data>/commitments.csv */
	const char *hardware_path;      /* NULL: <data>/hardware.csv */
	const char *blocks_path;        /* NULL: <data>/blocks.csv when there is
					 * one; "none": no capacity blocks */
	struct price_owned_opts owned;
	struct cost_cli_have have[COST_CLI_MAX_HAVE];
	int n_have;
	int need_hardware;              /* load hardware.csv even without --have */
	int owned_given;                /* --owned was named */
};

struct plan_cli {
	struct plan_opts opts;
	struct cost_cli cost;
	const char *model;
	double tokens;
	const char *jobs_path;
	const char *models_path;   /* NULL: <data>/models.csv */
	double gbs_tokens;         /* 0: not given */
	int json;
	struct ft_cli ft;          /* --finetune and its kin */
};

void plan_cli_init(struct plan_cli *pc);

/* Handles one shared flag.  Returns 1 when code is one of them (*rc set to
 * RC_OK or RC_USAGE after a message), 0 otherwise. */
int plan_cli_flag(struct plan_cli *pc, int code, const char *arg, enum rc *rc);

/* Prints the shared flags' help lines with their defaults. */
void plan_cli_help(FILE *f);

/* Loads the catalog, the model presets and the jobs (--jobs, or --model
 * with --tokens).  Returns RC_OK with everything filled (release with
 * plan_cli_release), or a status after a message. */
struct plan_cli_data {
	struct price_catalog cat;
	struct sim_model_table models;
	struct plan_job *jobs;
	size_t n_jobs;
	int have_cat, have_models;
	struct price_commitments commitments;   /* loaded with --reserved */
	struct price_hardware_table hardware;   /* loaded with --have (or by compare) */
	struct price_blocks blocks;             /* capacity blocks (blocks.csv) */
	struct plan_published_table published;  /* published.csv; empty without one */
};
enum rc plan_cli_load(struct plan_cli *pc, const char *cmd, struct plan_cli_data *d);
void plan_cli_release(struct plan_cli_data *d);

/* ---- cost models (cli/cli_cost.c) ---- */

void cost_cli_init(struct cost_cli *cc);
/* Handles one cost flag as plan_cli_flag does (returns 1 when code is one). */
int cost_cli_flag(struct plan_cli *pc, int code, const char *arg, enum rc *rc);
/* Prints the cost flags' help lines with their defaults and sources. */
void cost_cli_help(FILE *f);
/* After the catalog is loaded (plan_cli_load calls it): loads
 * commitments.csv when reserved options were asked for (setting
 * pc->opts.commitments), hardware.csv when --have was given or
 * pc->cost.need_hardware is 1, and appends the owned offerings of --have
 * to d->cat.  Returns RC_OK or a status after a message. */
enum rc cost_cli_load(struct plan_cli *pc, struct plan_cli_data *d);
/* Prints what the answer rows' costs are made of beyond the rate:
 * commitment terms, owned hardware's running cost, checkpoint storage. */
void cost_cli_print_notes(const struct plan_result *r, const struct plan_cli *pc,
			  const struct plan_cli_data *d);

/* Prints on stdout the date and age of the rates candidates cs[0..n) are
 * priced at ("prices: ..."), and warns on stderr when one is older than
 * pc's --max-price-age or states no date. */
void plan_cli_print_price_ages(const struct plan_cli *pc,
			       const struct plan_candidate *const *cs, size_t n);

/* The tag that names answer row row of r in the lines under the table
 * ("capacity (1a): ...") into buf (cli/cli_cost.c): "" for a single answer row, " (1a)" or
 * " (1b)" for the phases of one job, the job's name among several jobs
 * (" (llama3-8b)", " (llama3-8b 1a)" for its phases). */
const char *plan_cli_row_tag(char *buf, size_t size, const struct plan_result *r,
			     const struct plan_row *row, const struct plan_job *jobs);

/* "none", "sel" or "full". */
const char *plan_cli_recompute(enum sim_recompute r);

/* "aws p5.48xlarge us-east-1 spot" into buf. */
const char *plan_cli_offering(char *buf, size_t size, const struct plan_candidate *c);

/* A layout for the tables' TP/PP/DP/CP column into buf: "8/16/8/1", with
 * " v4" when interleaved and " ep64" (" etp2") with expert parallelism. */
const char *plan_cli_layout(char *buf, size_t size, const struct sim_parallel *q);

/* Prints the line that states an answer's whole layout: "layout    tp1
 * pp4 vp4 dp64 cp1 ep64 etp1 ...", with the expert data parallelism, the
 * NVLink domain, micro-batches, ZeRO stage, recomputation, precision, and
 * for expert parallelism the dispatcher and whether its all-to-alls
 * overlap; then the stack line and the published line (pub may be
 * NULL). */
void plan_cli_print_layout(const struct sim_plan *p, const struct plan_published_table *pub);
/* The line placing p's predicted tokens/s per GPU against the fastest
 * published run of its model on its GPU in pub (plan_published_best),
 * where one is known: within it, or exceeding every published run. */
void plan_cli_print_published(const struct sim_plan *p, const struct plan_published_table *pub);

#endif
