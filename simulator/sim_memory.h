/*
 * sim_memory.h - memory per GPU of a training plan (sim_memory.c).
 * Above sim_finetune.h (its hooks re-state the model states), below the
 * step.
 */
#ifndef GPUPLAN_SIM_MEMORY_H
#define GPUPLAN_SIM_MEMORY_H

#include "sim_shape.h"

/* Activation bytes of one layer for one micro-batch (Korthikanti et al.
 * 2022, sec. 4.1-4.2, generalised to GQA, head widths, MLA's latents and
 * SwiGLU): a dense layer's, or with moe an MoE layer's (its routed
 * tokens' copies through the experts, its shared experts). */
double sim_layer_activation_bytes(const struct sim_model *m,
				  const struct sim_parallel *p,
				  const struct sim_shape *sh, int moe);

/* Fills out with the memory of the fullest pipeline stage. */
void sim_memory_estimate(const struct sim_model *m, const struct sim_parallel *p,
			 const struct sim_cluster *c, const struct sim_shape *sh,
			 struct sim_memory *out);

#endif
