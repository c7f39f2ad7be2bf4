/*
 * sim_shape.h - what a model's shapes and a parallel layout give alone
 * (sim_shape.c): parameter counts, the stage and chunk cuts, the shapes
 * one sim_step call derives once; and SIM_WHY, the one way the checks
 * above it refuse.  No timing, no memory.
 */
#ifndef GPUPLAN_SIM_SHAPE_H
#define GPUPLAN_SIM_SHAPE_H

#include <stdio.h>

#include "sim.h"

/* Fills why[size] (when why is not NULL) and returns RC_INPUT: the one
 * way sim_check and sim_model_check refuse. */
#define SIM_WHY(...) do { if (why && size) snprintf(why, size, __VA_ARGS__); \
			  return RC_INPUT; } while (0)

/* Shapes derived once per sim_step call. */
struct sim_shape {
	int t, p, d, c, v;    /* tp, pp, dp, cp, interleave */
	int e, et, ed;        /* ep, etp, expert data parallel t c d / (e et) */
	int layers;           /* the model's */
	/* Parameters of one dense layer (sim_layer_params), of one MoE layer
	 * but its routed experts (sim_moe_layer_params(m, 0)), of one MoE
	 * layer's routed experts, all of them; 0 without experts. */
	double layer_params, moe_rest_params, routed_params;
	int gpus;
	int micro;            /* micro-batches per step per DP rank */
	double b;             /* micro-batch, sequences */
	double s;             /* full sequence */
	double sl;            /* local sequence, s / cp */
	double tok;           /* local tokens per micro-batch, b * sl */
	double h, f, V;
	double a_l, kv_l;     /* heads and KV heads held by one TP rank */
	double dh, dv;        /* query/key and value head widths */
	/* Bytes a linear layer keeps of its input for the weight gradient:
	 * the activation's element (sim_shape_init), or with a low precision
	 * the quantized operand's (sim_step sets it), as Transformer Engine
	 * saves the quantized input of an fp8 or MXFP8 GEMM. */
	double lin_bytes;
	/* Layers per pipeline stage: L = p * base + rem.  The rem extra
	 * layers go to the middle stages first, since the first stage also
	 * holds the embedding and the last the LM head and loss (Llama 3
	 * 405B's 126 layers over 16 stages: 7 on the first and the last, 8 on
	 * the others; Dubey et al. 2024, sec. 3.3.2); only when every middle
	 * stage has one does the first stage take the last extra layer.
	 * Middle stages 1 .. mid_stages_long have base + 1. */
	int layers_base, layers_first, layers_last;
	int mid_stages, mid_stages_long;   /* middle stages; those with base + 1 */
	/* With sim_parallel.pp_last_layers: the last stage's last chunk
	 * holds chunk_last layers, every other chunk chunk_even; 0 else. */
	int chunk_last, chunk_even;
};

/* Layers of pipeline stage `stage` (0-based) under sh's split. */
int sim_stage_layers(const struct sim_shape *sh, int stage);
/* Of those, the dense layers of a model whose first `dense` layers are
 * dense (sim_dense_layer_count): the layers run in virtual-stage order,
 * chunk k of every stage before chunk k + 1. */
int sim_stage_dense_layers(const struct sim_shape *sh, int dense, int stage);
/* Parameters one GPU of a pipeline stage holds, split by how they are
 * sharded: *tp_params over the TP ranks (attention, dense MLPs, shared
 * experts, routers and norms; the embedding and a learned position table,
 * whole, on the first stage; the final norm, the LM head and the MTP
 * modules on the last), *expert_params the routed experts over the EP x
 * ETP ranks.  layers of the stage, dense of them dense. */
void sim_stage_params(const struct sim_model *m, const struct sim_shape *sh, int layers,
		      int dense, int first, int last, double *tp_params, double *expert_params);
/* Layers of chunk `chunk` of stage `stage` with the interleaved schedule:
 * the stage's layers split as evenly as possible, earlier chunks taking
 * the remainder, except on the first stage, whose later chunks take it.
 * A first stage with one layer fewer than chunks leaves its first chunk
 * to the embedding alone, a last stage so its last to the LM head and
 * loss: Megatron-LM's --account-for-embedding-in-pipeline-split and
 * --account-for-loss-in-pipeline-split, Llama 3 405B's layout (126
 * layers over 16 stages of 8 one-layer chunks; Dubey et al. 2024, sec.
 * 3.3.2: "the first model chunk on the first stage has only the
 * embedding, and the last model chunk on the last stage has only output
 * projection and loss calculation"). */
int sim_chunk_layers(const struct sim_shape *sh, int stage, int chunk);

void sim_shape_init(struct sim_shape *sh, const struct sim_model *m,
		    const struct sim_parallel *p);

/* Parameters of one layer's attention: its projections and their biases,
 * MLA's latent norms, attention sinks. */
double sim_attn_params(const struct sim_model *m);
/* Parameters of one MLP of width (2 matrices for GELU, 3 for SwiGLU, and
 * their biases). */
double sim_mlp_params(const struct sim_model *m, double width);
/* Parameters of one dense transformer layer (attention, an MLP of width
 * ffn, two norms). */
double sim_layer_params(const struct sim_model *m);
/* Parameters of one MoE layer counting routed of its routed experts
 * (experts: all of them; top_k: those one token uses): attention, the
 * experts, every shared expert, the router, two norms. */
double sim_moe_layer_params(const struct sim_model *m, double routed);
/* Layers with a dense MLP: all of them without experts, else the first
 * dense_layers. */
int sim_dense_layer_count(const struct sim_model *m);
/* Parameters of the final norm: hidden, twice with LayerNorm's bias. */
double sim_final_norm_params(const struct sim_model *m);

#endif
