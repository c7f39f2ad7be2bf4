/*
 * cli_finetune.h - the fine-tuning flags simulate, plan, frontier and
 * compare share (--finetune, --lora-rank, --lora-targets, --offload,
 * --epochs, --dataset-tokens, --host) and the lines that say what a
 * fine-tuning plan trains and where its time and memory go.  Front-end
 * code only: the model is simulator/sim_finetune.c's.
 */
#ifndef GPUPLAN_CLI_FINETUNE_H
#define GPUPLAN_CLI_FINETUNE_H

#include <stdio.h>

#include "price.h"
#include "sim.h"

/* What the flags said.  *_set mark the ones given. */
struct ft_cli {
	struct sim_finetune ft;
	int method_set, rank_set, targets_set, offload_set;
	double epochs, dataset_tokens;   /* 0: not given */
	struct price_host host;          /* --host; 0s not given */
	int host_set;
};

/* The flags' long names, in the order of getopt tables. */
#define FT_CLI_OPTIONS(first) \
	{ "finetune", required_argument, NULL, (first) }, \
	{ "lora-rank", required_argument, NULL, (first) + 1 }, \
	{ "lora-targets", required_argument, NULL, (first) + 2 }, \
	{ "offload", required_argument, NULL, (first) + 3 }, \
	{ "epochs", required_argument, NULL, (first) + 4 }, \
	{ "dataset-tokens", required_argument, NULL, (first) + 5 }, \
	{ "host", required_argument, NULL, (first) + 6 }
#define FT_CLI_N 7

/* Parses flag number i (0 .. FT_CLI_N-1, in FT_CLI_OPTIONS's order) with
 * argument arg into fc.  Returns RC_OK, or RC_USAGE after one error line. */
enum rc ft_cli_parse(struct ft_cli *fc, int i, const char *arg);

/* Checks the flags together and applies them: the method, rank, targets
 * and offload to ft (given ones only), --epochs x --dataset-tokens to
 * *tokens (both or neither; not with --tokens: tokens_given), --host to
 * host (given figures only).  Returns RC_OK or RC_USAGE after one line. */
enum rc ft_cli_apply(const struct ft_cli *fc, int tokens_given, double *tokens,
		     struct sim_finetune *ft, struct price_host *host);

/* Lays the figures --host gave over host's. */
void ft_cli_host(const struct ft_cli *fc, struct price_host *host);

/* The help lines of the flags (plan 1: --offload searched by default). */
void ft_cli_help(FILE *f, int plan);

/* Prints p's memory per GPU by kind on one line, and with offload the
 * host's (and NVMe's) per node. */
void ft_cli_print_memory(const struct sim_plan *p);

/* Prints, for a plan p that fine-tunes or offloads, what it trains and
 * where the time and memory beyond pre-training's go; nothing for
 * pre-training without offload. */
void ft_cli_print(const struct sim_plan *p);

#endif
