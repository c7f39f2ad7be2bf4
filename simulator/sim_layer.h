/*
 * sim_layer.h - one layer's and a stage's edges' times on one GPU for one
 * micro-batch (sim_layer.c), which sim.c assembles into the step.
 */
#ifndef GPUPLAN_SIM_LAYER_H
#define GPUPLAN_SIM_LAYER_H

#include "sim.h"
#include "sim_comm.h"
#include "sim_const.h"
#include "sim_cost.h"
#include "sim_finetune.h"
#include "sim_shape.h"

/* Per micro-batch times of one layer on one GPU. */
struct layer_time {
	double fwd_s, bwd_s, recompute_s;   /* compute */
	double attn_fwd_s, attn_bwd_s;      /* of which the attention core */
	double tp_fwd_s;                    /* TP communication, one forward */
	double tp_all_fwd_s;                /* the same before any overlap: the
					     * time it keeps its links busy */
	double cp_fwd_s, cp_bwd_s;          /* exposed KV exchange */
	double ep_fwd_s;                    /* EP all-to-alls of one pass, forward
					     * or backward (dispatch and combine) */
	int ep_net, tp_net;                 /* the EP, the TP group crosses the network */
};

/* Per micro-batch times of one stage's extra work: the embedding (first
 * stage) or the final norm, logits and loss (last stage). */
struct edge_time {
	double compute_s, tp_s;
	double bwd_s, tp_bwd_s;   /* of which the backward's */
};

/* How the plan's precision runs the linear layers' GEMMs on c's GPU. */
struct gemm_prec {
	double peak;     /* FLOP/s */
	double elem;     /* bytes of one operand element, its scales included */
	double cast;     /* bytes quantizing one operand element moves; 0: none */
};

/* Seconds of bytes at c's HBM bandwidth plus kernels' fixed costs. */
double sim_hbm_time_s(double bytes, double hbm, int kernels);
/* Whether n ranks spaced stride apart leave the NVLink domain. */
int sim_group_crosses(const struct sim_cluster *c, int n, int stride);
void sim_gemm_precision(const struct sim_parallel *p, const struct sim_cluster *c,
			struct gemm_prec *g);
/* The DP gathers' bytes of a weight over its stored bytes (FP8 gathers). */
double sim_param_gather_share(const struct sim_parallel *p, const struct sim_cluster *c);
/* One layer (with moe an MoE layer) on one GPU for one micro-batch. */
void sim_layer_time(const struct sim_model *m, const struct sim_parallel *p,
		    const struct sim_cluster *c, const struct sim_shape *sh, int moe,
		    struct layer_time *lt);
/* The embedding (first) and the final norm, head and loss (last) of a
 * stage on one GPU for one micro-batch. */
void sim_edge_time(const struct sim_model *m, const struct sim_parallel *p,
		   const struct sim_cluster *c, const struct sim_shape *sh, int first,
		   int last, struct edge_time *et);

#endif
