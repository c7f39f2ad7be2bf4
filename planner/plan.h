/*
 * plan.h - the planner: which offering, how many nodes and which parallel
 * configuration trains a model fastest within a budget, or cheapest within
 * a deadline.
 *
 * The pipeline (DESIGN.md, "The planner"):
 *   1. enumerate candidate configurations per offering and simulate each
 *      with the analytic model (sim_check + sim_step), dropping those that
 *      do not fit in memory;
 *   2. keep each offering's Pareto frontier of (time, cost, nodes);
 *   3. choose among the frontier columns with a MILP solved by GLPK
 *      (budget, hourly budget, deadline, availability shared by jobs,
 *      optionally two phases per job);
 *   4. re-simulate the chosen plans, explain which constraint binds and how
 *      sensitive the answer is.
 *
 * Ownership: functions never take ownership of their arguments.  Results
 * (struct plan_result, frontier arrays) belong to the caller and are freed
 * with the matching _release/_free.  Candidates point into the catalog
 * they were planned from (struct price_offering), so the catalog must
 * outlive them.  Nothing here prints to stdout.
 *
 * Layers (tests/layers/test_layers.sh): common < pricing < simulator <
 * planner < executor < cli; a file includes and calls only its own layer
 * and those before it.  The planner reads the
 * simulator, pricing and common; inside it, plan_opts.c is below the
 * enumeration (plan_enum.c), the MILP (plan_lp.c) and the pipeline
 * (plan.c), which calls both.
 */
#ifndef GPUPLAN_PLAN_H
#define GPUPLAN_PLAN_H

#include <stddef.h>

#include "common.h"
#include "price.h"
#include "sim.h"

#define PLAN_DEFAULT_MAX_GPUS 4096
#define PLAN_DEFAULT_TOP 5
/* Default MILP time limit (GLPK tm_lim) in seconds. */
#define PLAN_DEFAULT_MILP_TIME_LIMIT_S 10.0
/* Interruption model defaults, stated with every plan (plan_interrupt_model).
 * Failures: 466 job interruptions (419 unexpected, 47 planned) in a 54-day
 * snapshot of Llama 3 405B pre-training on 16,384 H100 (Dubey et al. 2024,
 * "The Llama 3 Herd of Models", sec. 3.3.4): 466 / (54 d x 24 h x 16,384
 * GPUs) = 2.195e-5 per GPU-hour; Meta's research clusters measured 2.34
 * and 6.50 failures per 1000 node-days of 8 A100 (Kokolis et al., HPCA
 * 2025) = 1.22e-5 and 3.39e-5 per GPU-hour, either side of it
 * (data/SOURCES.md).  Spot preemptions, restart and checkpoint bandwidth
 * are planning assumptions, not measurements: one preemption per node
 * every 100 node-hours, 5 minutes to get a replacement node and reload,
 * and a checkpoint write bandwidth of 1 GB/s per node to durable storage. */
#define PLAN_DEFAULT_FAILURES_PER_GPU_HOUR (466.0 / (54.0 * 24.0 * 16384.0))
#define PLAN_DEFAULT_PREEMPT_PER_NODE_HOUR 0.01
#define PLAN_DEFAULT_RESTART_S 300.0
#define PLAN_DEFAULT_CKPT_BYTES_PER_S_PER_NODE 1e9
/* Checkpoint bytes per parameter: bf16 weights (2) + fp32 master weights,
 * Adam m and v (4 + 4 + 4) (Rajbhandari et al., ZeRO, SC'20, sec. 3.1);
 * gradients are not saved. */
#define PLAN_CKPT_BYTES_PER_PARAM 14.0
/* A plan whose expected interruption waste (failures, spot preemptions)
 * exceeds this fraction of wall time is dropped: the job would spend most
 * of its time restarting. */
#define PLAN_MAX_INTERRUPT_WASTE 0.5
/* Switching a job from one plan to the next (--phases 2): write a
 * checkpoint, start the new cluster, reload. */
#define PLAN_DEFAULT_SWITCH_S 1800.0
/* Starting a job on nodes that are running: pulling the container image,
 * starting the ranks, initialising NCCL and the data loaders.  A planning
 * assumption, stated with every answer (--startup), billed like training;
 * provisioning (request to running nodes) is the offering's
 * (capacity.csv) and not billed. */
#define PLAN_DEFAULT_STARTUP_S 600.0
/* Answers that are plans (docs/plan.md, "Plans, not decades"): a plan
 * longer than a year is no answer; the longest published pre-training
 * runs take about two months (Llama 3 405B: 54 days of a 16,384-GPU run;
 * DeepSeek-V3: 2.788M H800 GPU-hours, about 57 days on 2,048), and a
 * GPU generation is sold for about a year before the next (on AWS: p5
 * with H100 in 2023, p5en with H200 in 2024, p6-b200 with B200 in May
 * 2025).  A spot fleet is reclaimable at any moment: gpuplan policy holds
 * one for at most 30 days. */
#define PLAN_DEFAULT_MAX_DURATION_S (365.0 * 86400.0)
#define PLAN_DEFAULT_MAX_SPOT_DURATION_S (30.0 * 86400.0)
/* Cost models beyond the hourly rate, stated with every plan.  Checkpoint
 * storage: S3 Standard, first 50 TB/month, USD 0.023 per GB-month
 * (aws.amazon.com/s3/pricing); the last two checkpoints kept.  The
 * checkpoint interval is Young/Daly's against the plan's interruption
 * rate (PLAN_CKPT_INTERVAL_AUTO) unless plan_opts.ckpt_interval_s pins
 * one; PLAN_DEFAULT_CKPT_INTERVAL_S is what an export or execute uses for
 * a plan file that states none.  A commitment's whole term is charged to
 * the job unless plan_opts.commitment_share says otherwise. */
#define PLAN_DEFAULT_STORAGE_USD_PER_GB_MONTH 0.023
#define PLAN_DEFAULT_CKPT_KEEP 2
#define PLAN_DEFAULT_CKPT_INTERVAL_S 3600.0
#define PLAN_CKPT_INTERVAL_AUTO (-1.0)
#define PLAN_DEFAULT_COMMITMENT_SHARE 1.0
/* Sensitivity: the best plan is re-simulated with inter-node bandwidth, or
 * achieved FLOP/s, scaled by this factor. */
#define PLAN_DEFAULT_SENSITIVITY 0.8

enum plan_objective {
	PLAN_OBJECTIVE_AUTO,  /* cost when only a deadline is given, else time */
	PLAN_OBJECTIVE_TIME,  /* least (priority-weighted) time to train */
	PLAN_OBJECTIVE_COST,  /* least total cost */
};

/* The constraint that decided an answer. */
enum plan_binding {
	PLAN_BINDING_NONE,          /* the unconstrained optimum */
	PLAN_BINDING_BUDGET,        /* total USD */
	PLAN_BINDING_HOURLY_BUDGET, /* USD per hour (or per month / 730) */
	PLAN_BINDING_DEADLINE,
	PLAN_BINDING_AVAILABILITY,  /* the offering's node limit (capacity,
				     * spot bound, quota, no network), shared
				     * by jobs: plan_candidate.limit says which */
	PLAN_BINDING_MAX_GPUS,      /* --max-gpus */
	PLAN_BINDING_BATCH,         /* global batch leaves no more data parallelism */
	PLAN_BINDING_MEMORY,        /* a faster configuration did not fit */
};

/* Returns a static lower-case name ("budget", "hourly-budget", ...). */
const char *plan_binding_str(enum plan_binding b);
/* Returns "time" or "cost" ("auto" for AUTO). */
const char *plan_objective_str(enum plan_objective o);
/* Parses "time" / "cost".  Returns RC_OK or RC_USAGE (nothing printed). */
enum rc plan_objective_parse(const char *s, enum plan_objective *out);

/* The framework that will run the plan, which bounds the layouts: any
 * (gpuplan execute runs every one), or one whose data parallelism cannot
 * shard gradients under pipeline parallelism (plan_framework_max_zero),
 * with the expert layouts and MoE communication it runs
 * (plan_framework_runs_experts, plan_framework_price). */
enum plan_framework {
	PLAN_FRAMEWORK_ANY,
	PLAN_FRAMEWORK_MEGATRON,
	PLAN_FRAMEWORK_DEEPSPEED,
};

/* Returns "any", "megatron" or "deepspeed". */
const char *plan_framework_str(enum plan_framework f);
/* Parses one of those.  Returns RC_OK or RC_USAGE (nothing printed). */
enum rc plan_framework_parse(const char *s, enum plan_framework *out);
/* The highest ZeRO stage framework f runs with pp pipeline stages for
 * model m (DeepSpeed: below 3 with experts). */
int plan_framework_max_zero(enum plan_framework f, const struct sim_model *m, int pp);
/* 1 when f runs offload off at ZeRO stage zero: Megatron-LM the
 * optimizer in host memory with ZeRO-1 only, DeepSpeed host memory from
 * ZeRO-1 and NVMe at ZeRO-3 only, "any" every one. */
int plan_framework_runs_offload(enum plan_framework f, int zero, enum sim_offload off);
/* Returns "Megatron-LM", "DeepSpeed" or "gpuplan execute". */
const char *plan_framework_title(enum plan_framework f);
/* 1 when f runs q's expert layout (ep x etp over tp x cp x dp): Megatron-
 * LM and "any" every one sim_check accepts (MoE parallel folding);
 * DeepSpeed ep dividing dp and etp 1 or tp (it carves expert groups out
 * of the data-parallel ranks).  1 for ep = etp = 1. */
int plan_framework_runs_experts(enum plan_framework f, const struct sim_parallel *q);
/* The loss the trainer of a plan for ft runs (sim_loss): TRL's
 * (transformers' eager fp32 cross-entropy) for LoRA and QLoRA, which
 * train under TRL (export --format trl) whatever the framework; else
 * Megatron-LM's fp32 vocab-parallel one, which Megatron-LM, Megatron-
 * DeepSpeed's scripts (DeepSpeed's) and gpuplan execute's head run. */
enum sim_loss plan_trainer_loss(const struct sim_finetune *ft);
/* Sets q's properties that depend on the framework running it on GPU g,
 * for its ZeRO stage, recomputation and expert layout: the gradients'
 * width, how ZeRO-2 reduces, which DP collectives overlap, the token
 * dispatcher and whether the EP all-to-alls overlap (sim_parallel).
 * Leaves q alone for "any". */
void plan_framework_price(enum plan_framework f, const struct sim_model *m,
			  const struct price_gpu *g, struct sim_parallel *q);

/* The GEMM precision of the linear layers a plan may use. */
enum plan_precision {
	PLAN_PRECISION_DEFAULT, /* auto for a model with experts, bf16 for a dense one */
	PLAN_PRECISION_AUTO,    /* each GPU's low-precision recipe (plan_precision_pick) */
	PLAN_PRECISION_BF16,
	PLAN_PRECISION_FP8,
	PLAN_PRECISION_MXFP8,
};

/* Returns "default", "auto", "bf16", "fp8" or "mxfp8". */
const char *plan_precision_str(enum plan_precision p);
/* Parses "auto", "bf16", "fp8" or "mxfp8".  Returns RC_OK or RC_USAGE
 * (nothing printed). */
enum rc plan_precision_parse(const char *s, enum plan_precision *out);
/* The precision (an enum sim_precision) plans of model m use on GPU g
 * under p: auto is MXFP8 where g runs it (Blackwell), else FP8 where g
 * has an FP8 rate, else BF16; a pinned FP8 or MXFP8 needs g's rate.
 * Returns -1 where g cannot run the pinned precision. */
int plan_precision_pick(enum plan_precision p, const struct sim_model *m,
			const struct price_gpu *g);

/* Which offerings and knobs may be used.  Empty strings and 0 mean free. */
struct plan_filter {
	char gpu[PRICE_NAME_MAX];      /* canonical name or alias */
	char provider[PRICE_NAME_MAX];
	char region[PRICE_NAME_MAX];
	int spot;                      /* -1 both, 0 on-demand only, 1 spot only */
	int min_gpus, max_gpus;
	int tp, pp, cp;                /* 0 = free */
	/* Expert and expert tensor parallelism, 0 = free: searched for a
	 * model with experts (ep dividing the experts and tp x cp x dp, etp
	 * 1 or a divisor of tp), 1 for a dense one. */
	int ep, etp;
	enum plan_precision precision; /* default PLAN_PRECISION_DEFAULT */
	int zero;                      /* -1 = free, else 0..3 */
	enum plan_framework framework; /* default PLAN_FRAMEWORK_ANY */
	enum sim_stack stack;          /* the release assumed (plan_opts_init: SIM_STACK_TE216) */
	/* 1 when the user named it (--framework): a full fine-tune that fits
	 * only with offload Megatron-LM does not run moves to DeepSpeed only
	 * where it was not named (cmd_plan) */
	int framework_stated;
	/* -1 (default): offload searched where nothing fits on the GPUs, CPU
	 * before NVMe; else an enum sim_offload every plan uses. */
	int offload;
};

struct plan_opts {
	struct plan_filter filter;
	double budget_usd;          /* total across jobs; < 0 none */
	double hourly_budget_usd;   /* summed over concurrent jobs; < 0 none */
	double deadline_s;          /* for jobs without their own; < 0 none */
	enum plan_objective objective;
	int phases;                 /* plans per job run in sequence: 1 or 2 */
	double switch_s;            /* time lost switching plans (phases 2) */
	int gbs;                    /* global batch, sequences; 0 = model's */
	double failures_per_gpu_hour; /* job interruptions by failure, any plan */
	double preempt_per_node_hour; /* spot plans only */
	double restart_s;           /* after an interruption, before training again */
	double ckpt_bytes_per_s_per_node;
	double milp_time_limit_s;
	int top;                    /* ranked answers to return */
	double sensitivity;         /* factor for the what-if re-simulations */
	const char *dump_lp_path;   /* CPLEX LP of the answer's MILP; NULL none */
	/* Cost models (plan_candidate_price): */
	const struct price_commitments *commitments; /* reserved columns; NULL none */
	double commitment_share;    /* of the committed term's cost this job carries, 0..1 */
	double storage_usd_per_gb_month;
	int ckpt_keep;              /* checkpoints kept in object storage */
	double ckpt_interval_s;     /* between checkpoints: PLAN_CKPT_INTERVAL_AUTO
				     * (default) Young/Daly; > 0 pinned; 0 none */
	double startup_s;           /* job start-up on running nodes (billed) */
	/* Capacity blocks (blocks.csv): a purchase option of every offering
	 * a block sells; NULL none. */
	const struct price_blocks *blocks;
	/* The age of the prices an answer used: today in days since
	 * 1970-01-01 (unit_today; 0: not known, no ages), and the age in days
	 * beyond which a price is stale (PRICE_DEFAULT_MAX_AGE_DAYS). */
	long today_days;
	double max_price_age_days;
	/* A plan longer than max_duration_s (a spot plan: longer than
	 * max_spot_duration_s) is not an answer; <= 0 none. */
	double max_duration_s;
	double max_spot_duration_s;
	/* 1: hourly_budget_usd is a monthly cap / UNIT_HOURS_PER_MONTH, and an
	 * up-front payment counts whole in the month it is paid. */
	int monthly_budget;
};

/* Fills o with the documented defaults (no budget, no deadline, objective
 * auto, phases 1, both spot and on-demand, 1..PLAN_DEFAULT_MAX_GPUS GPUs). */
void plan_opts_init(struct plan_opts *o);

/* One training job. */
struct plan_job {
	char name[PRICE_NAME_MAX];  /* for messages; model name by default */
	struct sim_model model;
	double tokens;              /* > 0 */
	double deadline_s;          /* < 0: plan_opts.deadline_s */
	double priority;            /* weight in the time objective; > 0 */
	int gbs;                    /* sequences; 0: plan_opts.gbs, then model
				     * (SIM_FT_DEFAULT_GBS when fine-tuning) */
	/* What the job trains (method, LoRA rank and targets; its offload
	 * is the plan's, plan_filter.offload); all 0: pre-training.  A
	 * fine-tuning job's checkpoints hold what it trains. */
	struct sim_finetune ft;
	/* Stated as epochs over a dataset (tokens = their product); 0 not. */
	double epochs, dataset_tokens;
};

/* Fills j for model m with tokens, no own deadline, priority 1. */
void plan_job_init(struct plan_job *j, const struct sim_model *m, double tokens);

/* Loads a jobs file (CSV with a header: model, tokens, and optionally
 * deadline, priority, gbs, name) resolving models in models.  Tokens use
 * count suffixes (1T), deadlines durations (30d); a job's name (its model's
 * by default) must differ from every other job's.  Returns RC_OK with *jobs
 * (caller frees with free()) and *n, RC_INPUT after one message naming
 * file:line:col, or RC_ERR when the file cannot be read. */
enum rc plan_jobs_load(const char *path, const struct sim_model_table *models,
		       struct plan_job **jobs, size_t *n);

/* Expected cost of interruptions for a plan: failures (per GPU-hour, any
 * plan) and preemptions (per node-hour, spot plans), one Poisson process
 * of their summed rate 1/M.  Checkpoints every tau seconds of work, each
 * taking C, a restart R after each interruption; the wall time of W
 * seconds of work is W (M / tau) e^(R/M) (e^((tau + C)/M) - 1) (Daly 2006,
 * the complete cost function, which Young 1974's first order
 * approximates), and tau, unless pinned, is Daly's higher-order optimum
 * sqrt(2 C M) [1 + sqrt(C / 2M) / 3 + (C / 2M) / 9] - C (M when C >= 2M),
 * at most W: a run shorter than the interval writes only its last
 * checkpoint. */
struct plan_interrupt {
	double failures_per_hour;   /* the job's: per GPU-hour x GPUs */
	double preempts_per_hour;   /* the job's: per node-hour x nodes (spot) */
	double mtbf_s;              /* M; 0 when neither happens */
	double ckpt_write_s;        /* C: time to write one checkpoint */
	double interval_s;          /* tau: work between checkpoints; 0 none */
	double optimum_s;           /* Daly's optimum before the cap at W; 0 when
				     * pinned or nothing interrupts */
	int pinned;                 /* tau is plan_opts.ckpt_interval_s's */
	double waste;               /* fraction of wall time lost: checkpoints,
				     * restarts, work redone */
	double expected;            /* interruptions expected over the wall time */
};

/* Fills p for W = work_s seconds of training on gpus GPUs in nodes nodes
 * (spot: preemptions too) writing checkpoints of ckpt_bytes, at o's rates,
 * restart and checkpoint interval.  Returns 0, or -1 when the waste is at
 * least PLAN_MAX_INTERRUPT_WASTE (the plan is dropped) or W is not > 0. */
int plan_interrupt_model(double ckpt_bytes, int gpus, int nodes, int spot, double work_s,
			 const struct plan_opts *o, struct plan_interrupt *p);

/* Where a candidate's cost comes from. */
struct plan_cost_parts {
	double compute_usd;         /* the cluster's rate x the hours charged */
	double storage_usd;         /* checkpoints kept in object storage */
	double ckpt_bytes;          /* one checkpoint (PLAN_CKPT_BYTES_PER_PARAM) */
	double ckpt_write_s;        /* writing one, all nodes in parallel */
	double ckpt_interval_s;     /* between checkpoints (plan_interrupt) */
	double ckpt_overhead;       /* wall-time fraction writing them */
	int ckpt_keep;              /* checkpoints kept (plan_opts.ckpt_keep) */
	double discount;            /* reserved: fraction off on-demand */
	double term_s;              /* reserved: committed time (whole terms) */
	double charged_s;           /* hours billed: time, or the share of the term */
	double on_demand_cost_usd;  /* reserved: the same plan at on-demand */
	double breakeven_share;     /* reserved: it beats on-demand while the job
				     * carries less than this share of the term;
				     * >= 1 means even the whole term */
	/* Fixed overheads, in time_s: */
	double provision_s;         /* request to running nodes; not billed */
	double startup_s;           /* plan_opts.startup_s; billed */
	double billed_extra_s;      /* billed beyond the run: whole billing
				     * increments and the minimum (per node) */
};

/* Seconds billed per node for run_s seconds on offering of: whole
 * billing_increment_s, at least min_billing_s (each 0: not stated, run_s
 * as it is). */
double plan_billed_s(double run_s, const struct price_offering *of);

/* Hours a reserved plan is billed for: the committed time is whole terms
 * covering the job, and the job carries share of it, never less than the
 * time it runs.  share 1 charges the whole term; share 0 only the hours
 * used.  Returns seconds. */
double plan_reserved_charged_s(double time_s, int term_months, double share);

/* Object-storage cost of keeping keep checkpoints of ckpt_bytes each for
 * time_s at usd_per_gb_month (730-hour months, 1 GB = 1e9 bytes). */
double plan_storage_cost_usd(double ckpt_bytes, int keep, double usd_per_gb_month,
			     double time_s);

/* One simulated candidate on one offering. */
struct plan_candidate {
	const struct price_offering *offering; /* into the catalog */
	const struct price_block *block; /* PRICE_PURCHASE_BLOCK: its block
					  * (into plan_opts.blocks); else NULL */
	int spot;                   /* purchase == PRICE_PURCHASE_SPOT */
	enum price_purchase purchase;
	struct plan_cost_parts costs;
	int nodes;
	int billed_nodes;           /* nodes paid for: nodes rounded up to the
				     * offering's unit (limit.multiple) */
	struct sim_parallel par;
	struct sim_cluster cluster;
	struct sim_result res;
	struct plan_interrupt interrupt; /* failures and spot preemptions */
	double usd_per_hour;        /* the whole cluster */
	double time_s;              /* all the job's tokens, interruptions and
				     * checkpoints included */
	double cost_usd;            /* compute (reserved: as charged) + storage */
	double nofit_step_s;        /* fastest non-fitting step at this size; 0 none */
	int smaller_nofit;          /* a smaller node count was tried and nothing fitted */
	struct price_node_limit limit; /* the most nodes this purchase allows */
	int max_nodes_hit;          /* nodes == limit.nodes (> 1, or 1 by a limit) */
	double upfront_usd;         /* paid when bought (a block paid up front:
				     * its whole term); 0 none */
};

/* The date the source states for the rate c is priced at ("YYYY-MM-DD"):
 * its capacity block's, else its offering's; "" when not stated. */
const char *plan_candidate_price_date(const struct plan_candidate *c);

/* ---- the MILP over frontier columns (planner/plan_lp.c) --------------- */

/* A column as the MILP sees it.  Tests build these inline. */
struct plan_column {
	int job;                /* 0..n_jobs-1 */
	int group;              /* availability group (plan_run: an offering,
				 * or a quota its offerings share), -1 none */
	int nodes;              /* >= 1 units of its group's availability
				 * (plan_run counts GPUs) */
	double time_s;          /* to train all of the job's tokens; > 0 */
	double cost_usd;        /* >= 0 */
	double usd_per_hour;    /* >= 0 */
	double budget_usd_per_hour; /* what counts against the hourly budget
				     * (an up-front payment in its month); 0:
				     * usd_per_hour */
};

struct plan_milp {
	int n_jobs;
	const double *priority;     /* [n_jobs], > 0; NULL: all 1 */
	const double *deadline_s;   /* [n_jobs], < 0 none; NULL: none */
	const struct plan_column *cols;
	size_t n_cols;
	const int *avail_nodes;     /* [n_groups], in the columns' units; 0 = unlimited */
	int n_groups;
	double budget_usd;          /* < 0 none */
	double hourly_budget_usd;   /* < 0 none */
	enum plan_objective objective; /* TIME or COST */
	int phases;                 /* 1 or 2 */
	double switch_s;            /* phases 2: time per switch */
	const unsigned char *exclude; /* [n_cols], 1 = may not be used; NULL */
	double time_limit_s;
	const char *dump_lp_path;   /* NULL: none */
};

void plan_milp_init(struct plan_milp *m);

/* The chosen fractions.  frac[c] is the share of column c's job's tokens
 * trained on column c (0 unused; 1 with one phase); used[c] is 1 when the
 * column is used.  time_s[j] and the totals are recomputed from the
 * chosen columns, not read back from GLPK. */
struct plan_milp_solution {
	double *frac;            /* [n_cols] */
	unsigned char *used;     /* [n_cols] */
	double *time_s;          /* [n_jobs], switch time included */
	double cost_usd;         /* total, switch cost included */
	double usd_per_hour;     /* peak: sum over jobs of the dearest phase */
	double objective;        /* weighted time (s) or cost (USD) */
	int optimal;             /* 0 when GLPK stopped at its time limit */
	double solve_s;          /* wall time in GLPK */
};

/* The cost of a switch for a job whose dearest phase costs usd_per_hour:
 * the switch time billed at that rate. */
double plan_switch_cost_usd(double switch_s, double usd_per_hour);

/* Solves m with GLPK (lexicographic: the objective, then the other of
 * time/cost among optima).  Returns RC_OK with sol filled (release with
 * plan_milp_solution_release), RC_INFEASIBLE when no choice satisfies the
 * constraints, RC_INPUT when m is malformed (message printed; GLPK never
 * sees bad data), RC_ERR when GLPK fails or hits its time limit without a
 * feasible solution (message printed).  A GLPK internal error is caught by
 * its error hook and reported as RC_ERR; the process never aborts. */
enum rc plan_milp_solve(const struct plan_milp *m, struct plan_milp_solution *sol);
void plan_milp_solution_release(struct plan_milp_solution *sol);

/* ---- the whole pipeline (planner/plan.c) ------------------------------ */

/* One plan in an answer: a candidate with the share of its job's tokens. */
struct plan_row {
	int rank;                   /* 1 = the answer, 2.. alternatives */
	int job;
	int phase;                  /* 1 or 2 within the job's answer */
	double fraction;            /* of the job's tokens */
	struct plan_candidate c;
	enum plan_binding binding;
	/* What-if re-simulations (plan_opts.sensitivity): */
	double sens_bw_time_s, sens_bw_cost_usd;       /* inter-node bandwidth */
	double sens_flops_time_s, sens_flops_cost_usd; /* achieved FLOP/s */
	/* The event-driven replay of the pipeline schedule (sim_event.h);
	 * 0 when it could not run. */
	double replay_step_s;
	/* Offerings in other regions that sell the same thing at the same
	 * price (plan_same_offering), folded into this row. */
	int folded_regions;
};

struct plan_stats {
	size_t offerings;           /* offering x {spot, on-demand} considered */
	size_t machines;            /* distinct hardware simulated */
	size_t enumerated;          /* configurations considered */
	size_t simulated;           /* sim_step calls */
	size_t fit;                 /* simulated and fitting in memory */
	size_t rejected_check;      /* sim_check refused (divisibility, ...) */
	size_t frontier;            /* MILP columns */
	size_t milp_solves;
	double enumerate_s, milp_s, total_s;
};

/* What would make an infeasible ask feasible (within the filters). */
struct plan_nearest {
	double cheapest_cost_usd;   /* min over all plans; < 0 none */
	double fastest_time_s;      /* < 0 none */
	double lowest_usd_per_hour; /* < 0 none */
	double smallest_fit_memory_bytes; /* smallest GPU with a fitting plan; < 0 none */
	double smallest_need_bytes; /* least memory any simulated config needs */
	double largest_gpu_bytes;   /* among the GPUs considered */
	/* The fastest plan refused for lasting longer than
	 * plan_opts.max_duration_s (max_spot_duration_s on spot). */
	int have_over_max;
	struct plan_candidate over_max;
	/* Among configurations with offload that fit GPU memory but not the
	 * host's: the least host memory one needs a node, and that host's
	 * memory; < 0 none. */
	double smallest_host_need_bytes;
	double host_capacity_bytes;
	int offload_searched;       /* 1 when a configuration with offload was simulated */
	/* 1 when every machine searched was one node for want of a cluster
	 * network figure (inter_node_gbps), and one of its offerings: the
	 * cause when nothing fits one node's memory. */
	int all_one_node_network;
	const struct price_offering *one_node_example;
};

/* 1 when offering b, in another region than a's that opts' filters let
 * in, sells what candidate a buys at the same price and bound: the same
 * provider, instance type, GPU, network, capacity figures and quota, and
 * the same rate of
 * a's purchase option (a's block's rate and terms for a capacity block,
 * blocks read from opts->blocks).  Owned hardware is never the same. */
int plan_same_offering(const struct plan_candidate *a, const struct price_offering *b,
		       const struct plan_opts *opts);

struct plan_result {
	enum plan_objective objective; /* resolved */
	int feasible;
	char why[256];              /* when infeasible: the reason, one line */
	enum plan_binding binding;  /* of the answer */
	struct plan_row *rows;      /* rank 1 first; per job for several jobs */
	size_t n_rows;
	size_t n_answer_rows;       /* rows with rank 1 */
	double total_cost_usd;      /* of the answer */
	double total_usd_per_hour;
	double makespan_s;          /* longest job of the answer */
	int optimal;
	struct plan_nearest nearest;
	struct plan_stats stats;
	struct plan_opts opts;      /* what produced it (assumptions stated) */
};

/* Plans jobs[0..n_jobs) over the catalog.  Returns RC_OK with out filled,
 * RC_INFEASIBLE with out->why and out->nearest filled (no message
 * printed), RC_USAGE/RC_INPUT for bad options or jobs (message printed),
 * RC_ERR for solver or I/O failures.  out is always initialised; release
 * it with plan_result_release(). */
enum rc plan_run(const struct plan_job *jobs, size_t n_jobs,
		 const struct price_catalog *cat, const struct plan_opts *o,
		 struct plan_result *out);
void plan_result_release(struct plan_result *r);

/* The cost-versus-time Pareto frontier of one job across all offerings
 * (budget and deadline ignored), fastest first.  Returns RC_OK with *out
 * (caller frees with free()) and *n, RC_INFEASIBLE when nothing fits
 * (nearest filled when not NULL), RC_USAGE/RC_INPUT for bad input. */
enum rc plan_frontier(const struct plan_job *job, const struct price_catalog *cat,
		      const struct plan_opts *o, struct plan_candidate **out,
		      size_t *n, struct plan_stats *stats,
		      struct plan_nearest *nearest);

/* Fills p (for sim_plan_write) from a row of an answer. */
void plan_row_to_sim_plan(const struct plan_row *row, const struct plan_job *job,
			  struct sim_plan *p);
/* Fills out with the interruptions candidate c expects over the share
 * fraction of its job (its expected count scaled by it), reckoned at o's
 * rates, restart time and checkpoint bandwidth (plan_interrupt_model),
 * for a plan file or a simulate answer. */
void plan_interrupts_to_sim(const struct plan_candidate *c, double fraction,
			    const struct plan_opts *o, struct sim_interrupts *out);

/* The largest loss of a step's breakdown: sets *name ("pp bubble", "tp
 * comm", "cp comm", "pp comm", "ep comm", "dp comm", "optimizer") and returns its
 * fraction of the step time (0 and "none" for an empty breakdown). */
double plan_largest_loss(const struct sim_result *r, const char **name);

/* ---- JSON (planner/plan_json.c) --------------------------------------- */

/* The answer as JSON: {"schema":"gpuplan.plans/1", "feasible", "objective",
 * "binding" or "why", "constraints", "plans":[...], "nearest",
 * "assumptions", "stats"}, without wall-clock timings so that the same
 * inputs give the same bytes.  Each plan, best first, has rank, job, model,
 * phase, fraction, the candidate's keys (plan_candidate_to_json), binding,
 * largest_loss, sensitivity and replay_step_time_s.  Returns a string the
 * caller frees with free(). */
char *plan_result_to_json(const struct plan_result *r, const struct plan_job *jobs,
			  size_t n_jobs);

/* One candidate as a JSON object: provider, instance_type, region, gpu,
 * spot, purchase, nodes, gpus_per_node, gpus, tp, pp, dp, cp, mbs, gbs,
 * grad_accum, zero, recompute, interleave, ep, etp (with ep > 1
 * ep_dispatcher and ep_overlap), precision, nvlink_domain, step_time_s,
 * tokens_per_s, mfu,
 * memory_per_gpu_bytes, memory_capacity_bytes, time_to_train_s, cost_usd,
 * usd_per_hour, costs (compute, storage, checkpoints), commitment (null
 * unless reserved) and preemption (null unless spot).  of is the offering
 * to name (NULL: c->offering).  Caller frees with free(). */
char *plan_candidate_to_json(const struct plan_candidate *c,
			     const struct price_offering *of, const struct plan_opts *o);

/* A frontier (plan_frontier) as JSON: {"schema":"gpuplan.frontier/1",
 * "model", "tokens", "points":[...]}, each point with its interruptions
 * at o's rates (the keys of plan_candidate_to_json's "interruptions").
 * Caller frees with free(). */
char *plan_frontier_to_json(const struct plan_candidate *c, size_t n,
			    const struct plan_job *job, const struct plan_opts *o);

#endif
