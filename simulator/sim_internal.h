/*
 * sim_internal.h - sim.c's pieces for the event-driven replay
 * (sim_parts, which sim_event.c calls), and every header below sim.c
 * gathered for sim.c, sim_event.c and the simulator's tests and callers
 * that price with the model's pieces.  Nothing declared in these headers
 * allocates; every function is a pure function of its arguments.
 *
 * The simulator's files call one way, bottom up (sim.h draws it; a file
 * includes the headers of its own file and of files below it only, and
 * tests/layers checks both):
 *   sim_const.h (constants) < sim_cost.h, sim_comm.h (kernels, collectives)
 *   < sim_shape.h < sim_finetune.h < sim_memory.h < sim_layer.h
 *   < sim.c (this header).
 */
#ifndef GPUPLAN_SIM_INTERNAL_H
#define GPUPLAN_SIM_INTERNAL_H

#include "sim.h"
#include "sim_comm.h"
#include "sim_const.h"
#include "sim_cost.h"
#include "sim_finetune.h"
#include "sim_layer.h"
#include "sim_memory.h"
#include "sim_shape.h"

/* Per micro-batch times on one GPU that sim_step() builds its stages from:
 * one transformer layer, the embedding (first stage) and the final norm,
 * logits and loss (last stage). */
struct sim_parts {
	double layer_fwd_s, layer_bwd_s, layer_recompute_s; /* compute */
	double layer_attn_fwd_s, layer_attn_bwd_s;          /* of which attention core */
	double layer_tp_s;          /* TP communication of one pass over the layer */
	double layer_tp_busy_s;     /* the links of it the DP reduction uses too (dp_window) */
	double layer_cp_fwd_s, layer_cp_bwd_s;              /* exposed CP exchange */
	/* an MoE layer's (the dense layer's without experts), and the EP
	 * all-to-all it exposes in a micro-batch, forward and backward */
	double moe_layer_fwd_s, moe_layer_bwd_s, moe_layer_recompute_s, moe_layer_attn_bwd_s;
	double moe_layer_ep_s;
	double moe_layer_tp_s;      /* its TP communication of one pass (its own GEMMs hide it) */
	/* the forward's share of that (the rest is the backward's), and
	 * the time the all-to-all keeps links busy that the DP reduction
	 * crosses too (0 where they cross none in common: dp_window) */
	double moe_layer_ep_fwd_share, moe_layer_ep_busy_s;
	double embed_compute_s, embed_tp_s;  /* forward and backward together */
	double head_compute_s, head_tp_s;    /* forward and backward together */
};

/* Fills out for m, p on c.  Requires sim_check() == RC_OK. */
void sim_parts(const struct sim_model *m, const struct sim_parallel *p,
	       const struct sim_cluster *c, struct sim_parts *out);

#endif
