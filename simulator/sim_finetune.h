/*
 * sim_finetune.h - what fine-tuning and offload change (sim_finetune.c):
 * the hooks sim_memory.c, sim_check.c and sim.c call.  Above sim_shape.h
 * and sim_cost.h, below the memory model and the step.
 */
#ifndef GPUPLAN_SIM_FINETUNE_H
#define GPUPLAN_SIM_FINETUNE_H

#include "sim_cost.h"
#include "sim_shape.h"

/* Matrix parameters of one layer's linear layers (Q, K, V, output, the
 * MLP's two or three): what LoRA adapts beside and QLoRA stores in NF4. */
double sim_layer_matrix_params(const struct sim_model *m);

/* The hooks sim.c, sim_check.c and sim_memory.c call; each leaves pre-training
 * (p->ft all 0) exactly as it was. */

/* Changes one layer's per micro-batch compute on one GPU (*fwd_s,
 * *bwd_s) for p->ft: frozen base weights drop the weight-gradient GEMMs
 * (gemm_s is the layer's forward GEMMs, which backward ran twice);
 * LoRA's adapters add two thin GEMMs forward, four backward, each bound
 * by its bytes, and their scaled sum fused into the kernel that next
 * reads the base output; QLoRA dequantises every base matrix before each
 * GEMM pass. */
void sim_ft_layer_time(const struct sim_model *m, const struct sim_parallel *p,
		       const struct sim_cluster *c, const struct sim_shape *sh, double gemm_s,
		       double *fwd_s, double *bwd_s);
/* GEMMs of the LM head per micro-batch: forward, input and weight
 * gradient (3), without the weight gradient when it is frozen (2). */
double sim_ft_head_gemms(const struct sim_parallel *p);
/* Trainable parameters per TP rank of the stage holding params_stage
 * (the fullest, sim_step): all of them, or its layers' adapters as TP
 * cuts them (each with its projection: the other factor whole). */
double sim_ft_stage_trainable(const struct sim_model *m, const struct sim_parallel *p,
			      const struct sim_shape *sh, double params_stage);
/* Bytes of the weights of that stage as stored (ZeRO-3 gathers them),
 * and of one layer's per TP rank: at w bytes, QLoRA's matrices in NF4. */
double sim_ft_stage_weight_bytes(const struct sim_model *m, const struct sim_parallel *p,
				 const struct sim_shape *sh, double params_stage);
double sim_ft_layer_weight_bytes(const struct sim_model *m, const struct sim_parallel *p,
				 const struct sim_shape *sh);
/* Re-states one pipeline stage's model states (out->weights, grads,
 * optimizer, host and nvme per GPU) for p->ft: frozen base weights with
 * trainable adapters, offloaded states on the host or NVMe.  params is
 * the stage's parameters per TP rank, layers its layer count, first and
 * last whether it holds the embedding and the LM head. */
void sim_ft_states(const struct sim_model *m, const struct sim_parallel *p,
		   const struct sim_shape *sh, double params, int layers, int first, int last,
		   struct sim_memory *out);
/* Scales the stage's host and NVMe bytes to the node's GPUs and states
 * the host's capacity. */
void sim_ft_node_memory(const struct sim_parallel *p, const struct sim_cluster *c,
			const struct sim_shape *sh, struct sim_memory *out);
/* 1 when the node's host holds what offload puts there (always without
 * offload). */
int sim_ft_host_fits(const struct sim_parallel *p, const struct sim_memory *mem);
/* With offload, the step's CPU optimizer (bd->optimizer_s) and the host
 * transfers not hidden by compute (bd->offload_s) for a stage training
 * train_stage of params_stage parameters per TP rank, whose micro-batch
 * computes fwd_s forward and bwd_s backward, M micro-batches a step. */
void sim_ft_offload_time(const struct sim_model *m, const struct sim_parallel *p,
			 const struct sim_cluster *c, const struct sim_shape *sh,
			 double train_stage, double params_stage, double fwd_s, double bwd_s,
			 struct sim_breakdown *bd);
/* sim_check's part for p->ft (RC_OK, or RC_INPUT and a reason in why). */
enum rc sim_ft_check(const struct sim_model *m, const struct sim_parallel *p,
		     const struct sim_cluster *c, char *why, size_t size);


#endif
