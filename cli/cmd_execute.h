/*
 * cmd_execute.h - what the files of `gpuplan execute` share: its flags
 * beyond struct exec_opts (cmd_execute_args.c fills them), and rank 0's
 * printing of a run (cmd_execute_report.c).  cmd_execute.c, the command
 * itself, calls both; neither calls it.
 */
#ifndef GPUPLAN_CMD_EXECUTE_H
#define GPUPLAN_CMD_EXECUTE_H

#include "exec.h"
#include "run/exec_metrics.h"
#include "progress.h"
#include "sim.h"

/* --check: the fraction of the simulator's bus bandwidth an all-reduce
 * over each group must reach. */
#define CHECK_MIN_FRACTION 0.5

/* What the flags say beyond struct exec_opts. */
struct execute_flags {
	int np, accum, gbs_set, norm_set, schedule_set, hidden_set, ffn_set, help, steps_set;
	int expert_ffn_set, shared_ffn_set;
	const char *lora_flag;     /* the last LoRA flag given, for its check */
	const char *json, *calibration, *trace;
	int quiet;
	int metrics_port;          /* 0: no server */
	const char *metrics_file;
	int timeout_set;
	int ckpt_every_set;
	int have_plan;
	struct sim_plan plan;      /* the plan file's, when have_plan */
};

/* ---- cmd_execute_args.c ------------------------------------------------ */

/* The help text on stdout. */
void execute_help(void);

/* Default options (or the plan's model and layout), then the flags over
 * them, into *o and *f (f->help set: only the help asked for).  RC_OK, or
 * RC_USAGE / RC_INPUT after one line saying which flag or plan field. */
enum rc execute_build_opts(int argc, char **argv, struct exec_opts *o,
			   struct execute_flags *f);

/* ---- cmd_execute_report.c ---------------------------------------------- */

/* What rank 0 publishes after each step when metrics are asked for. */
struct metrics_ctx {
	struct exec_metrics *m;
	const struct exec_opts *o;
	double model_flops_per_step;  /* sim_finetune_train_flops, no recomputation */
	double peak_flops_per_s;      /* all ranks; 0 unknown */
	double predicted_step_s;      /* 0 unknown */
};

/* What rank 0 does after each step: the step's line on stdout, the
 * metrics when asked for, and a progress line for the next step, which
 * shows how long it has been running when it takes more than a second.
 * The line is erased before the step's line prints, so the two never
 * share a terminal line. */
struct step_ctx {
	const struct metrics_ctx *mc;  /* NULL: no metrics */
	struct gp_progress *prog;      /* the running step's; NULL between */
};

/* A metrics sample with mc's run in it and every measurement unknown. */
void execute_metrics_sample(const struct metrics_ctx *mc, struct exec_metrics_sample *x);
/* Starts the progress line of step `step` of `steps` in sc. */
void execute_progress_step(struct step_ctx *sc, int step, int steps);
/* exec_opts.on_step for rank 0: ctx is a struct step_ctx. */
void execute_on_step(void *ctx, const struct exec_step_info *s);
/* The run's model and layout, before the steps. */
void execute_print_header(const struct exec_opts *o);
/* Where and how often the run checkpoints; resume_at > 0: the step it
 * resumes after. */
void execute_print_ckpt(const struct exec_opts *o, int resume_at);
/* --check's findings against what the plan expects. */
void execute_print_check(const struct exec_check *k, const struct exec_expect *e,
			 const struct exec_opts *o, const char *dev);
/* The loss and the measured figures beside the prediction (pred NULL:
 * none); catalog_peak 0: no MFU row. */
void execute_print_summary(const struct exec_result *r, const struct sim_result *pred,
			   double catalog_peak);

#endif
