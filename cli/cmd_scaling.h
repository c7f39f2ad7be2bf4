/*
 * cmd_scaling.h - what `gpuplan scaling` computes, shared by its table,
 * CSV and plot (cmd_scaling.c) and its JSON (cmd_scaling_json.c).
 */
#ifndef GPUPLAN_CMD_SCALING_H
#define GPUPLAN_CMD_SCALING_H

#include <stddef.h>

#include "sim.h"

/* One GPU count of the sweep: the fastest fitting configuration the
 * planner's search finds at exactly that many GPUs. */
struct scaling_point {
	int gpus;
	int nodes;
	int gpus_per_node;
	int fits;                    /* 0: no configuration fits; figures below 0 */
	struct sim_parallel par;
	struct sim_result res;
	double tokens_per_s_per_gpu;
	double ideal_tokens_per_s;   /* gpus x the best per-GPU throughput of the sweep */
	double speedup;              /* throughput over that of the smallest fitting count */
	double efficiency;           /* per-GPU throughput over the best of the sweep, <= 1 */
};

/* The machine the sweep runs on and what it found. */
struct scaling_sweep {
	struct sim_model model;
	struct sim_cluster cluster;  /* gpus_per_node: a full node */
	char machine[160];           /* "aws p5.48xlarge" or a description */
	int gbs;                     /* global batch, sequences */
	const char *framework;       /* what runs the layouts: "any" (NULL reads so),
				      * "megatron", "deepspeed" (plan --framework) */
	struct scaling_point *points;
	size_t n;
	int best;                    /* index of the best per-GPU throughput; -1 none */
};

/* Fills the derived figures of every fitting point (per GPU, ideal,
 * speedup, efficiency) and s->best.  Efficiency is per-GPU throughput
 * over the best per-GPU throughput of the sweep, so it never exceeds 1:
 * where a small count must recompute activations or shard states to fit,
 * the count with the best per-GPU rate, not the smallest, is the baseline
 * of ideal linear scaling. */
void scaling_derive(struct scaling_sweep *s);

/* The sweep as JSON {"schema":"gpuplan.scaling/1", "model", "gpu",
 * "gpus_per_node", "machine", "global_batch", "points":[...]} with fixed key
 * order, so the same inputs give the same bytes.  Caller frees with
 * free(). */
char *scaling_to_json(const struct scaling_sweep *s);

#endif
