/*
 * recipes.h - what bench/accuracy reads off Megatron-Bridge's MoE
 * recipes and NVIDIA's system datasheets for the rows of
 * bench/data/moe_runs.csv, kept as data beside the runs:
 * bench/data/moe_recipes.csv (one fact a row: the run's keys it applies
 * to, the releases, the value, the source) and bench/data/moe_systems.csv
 * (a system's GPUs, NVLink domain and network).  bench/data/RUNS.md says
 * the columns and how each fact was read.  accuracy.c calls it; it calls
 * only the library.
 */
#ifndef GPUPLAN_BENCH_RECIPES_H
#define GPUPLAN_BENCH_RECIPES_H

#include "price.h"
#include "price_csv.h"
#include "sim.h"

/* One system of Megatron-Bridge's performance tables. */
struct moe_system {
	const char *name, *gpu;    /* the table's name; the catalog's GPU */
	int gpus_per_node, nvlink_domain;
	double inter_gbps;         /* the node's network, one direction */
};

struct moe_recipes {
	struct price_csv facts, systems_csv;
	struct moe_system *systems;
	size_t n_systems;
};

/* Reads and checks bench_dir/moe_recipes.csv and moe_systems.csv.  Bad
 * input prints one "error: FILE:LINE: COLUMN: expected ..., found ..."
 * line and returns RC_INPUT (RC_ERR: a file cannot be read); out is then
 * released. */
enum rc moe_recipes_load(const char *bench_dir, struct moe_recipes *out);
void moe_recipes_release(struct moe_recipes *r);

/* A container release "26.06.01" as 260601, for ordering. */
long moe_release_num(const char *s);

/* The system named name, or NULL. */
const struct moe_system *moe_system_find(const struct moe_recipes *r, const char *name);

/* Sets what the recipes state on p for a run of model (m) on system in
 * container release, at p's micro-batch and parallel degrees: for each
 * fact the first row whose keys match (an empty key matches any) and
 * whose releases hold it; a fact no row gives keeps p's default.  Sets
 * the optimizer's ZeRO stage, the token dispatcher, the EP all-to-all
 * overlap, the expert GEMMs' kernel, the recomputed modules, the
 * pipeline layout and whether ZeRO gathers FP8 weights in FP8
 * (fp8_param_gather). */
void moe_recipes_apply(const struct moe_recipes *r, const char *model, const char *system,
		       long release, const struct sim_model *m, struct sim_parallel *p);

#endif
