/*
 * export_deepspeed_json.c - DeepSpeed's ds_config.json for a plan
 * (deepspeed.ai/docs/config-json), through cJSON so that it always
 * parses: the batch identity, the ZeRO stage and offload, precision and
 * activation checkpointing; and what a DeepSpeed script is told beside
 * it (its arguments, the GPUPLAN_ variables).  Writes no launcher and no
 * training script: the user's script reads the config.
 */
#include "export_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

/* ds_config.json for p (deepspeed.ai/docs/config-json): the batch
 * identity, the ZeRO stage, bf16 (fp16 with dynamic loss scaling where
 * the GPU has no bf16: loss_scale 0), and activation checkpointing when
 * the plan recomputes.  contiguous_memory_optimization only beside
 * partition_activations: deepspeed.checkpointing.configure asserts that
 * the first needs the second.  Indented, or on one line (compact) for a
 * variable.  The caller frees the string. */
char *export_deepspeed_config(const struct sim_plan *p, int compact)
{
	cJSON *root = cJSON_CreateObject(), *zero, *prec, *ckpt;
	int recompute = p->par.recompute != SIM_RECOMPUTE_NONE;
	int partition = recompute && p->par.tp > 1;
	char *s;

	cJSON_AddNumberToObject(root, "train_batch_size", p->par.gbs);
	cJSON_AddNumberToObject(root, "train_micro_batch_size_per_gpu", p->par.mbs);
	cJSON_AddNumberToObject(root, "gradient_accumulation_steps", export_grad_accum(p));
	cJSON_AddNumberToObject(root, "gradient_clipping", 1.0);
	zero = cJSON_AddObjectToObject(root, "zero_optimization");
	cJSON_AddNumberToObject(zero, "stage",
				export_zero1_instead(p, PLAN_FRAMEWORK_DEEPSPEED) ? 1 : p->par.zero);
	cJSON_AddBoolToObject(zero, "overlap_comm", 1);
	cJSON_AddBoolToObject(zero, "contiguous_gradients", 1);
	/* ZeRO-Offload and ZeRO-Infinity (deepspeed/runtime/zero/
	 * offload_config.py): the optimizer's states to the CPU or NVMe, and
	 * at stage 3 the parameters as well ("Valid only with stage 3"); the
	 * NVMe path is the mount the user sets. */
	if (p->par.ft.offload != SIM_OFFLOAD_NONE) {
		int stage = export_zero1_instead(p, PLAN_FRAMEWORK_DEEPSPEED) ? 1 : p->par.zero;
		const char *keys[2] = { "offload_optimizer", "offload_param" };

		for (int i = 0; i < (stage == 3 ? 2 : 1); i++) {
			cJSON *o = cJSON_AddObjectToObject(zero, keys[i]);

			cJSON_AddStringToObject(o, "device", sim_offload_names[p->par.ft.offload]);
			if (p->par.ft.offload == SIM_OFFLOAD_NVME)
				cJSON_AddStringToObject(o, "nvme_path", "/local_nvme");
			cJSON_AddBoolToObject(o, "pin_memory", 1);
		}
	}
	if (price_gpu_has_bf16(&p->cluster.gpu)) {
		prec = cJSON_AddObjectToObject(root, "bf16");
		cJSON_AddBoolToObject(prec, "enabled", 1);
	} else {
		prec = cJSON_AddObjectToObject(root, "fp16");
		cJSON_AddBoolToObject(prec, "enabled", 1);
		cJSON_AddNumberToObject(prec, "loss_scale", 0);
	}
	ckpt = cJSON_AddObjectToObject(root, "activation_checkpointing");
	cJSON_AddBoolToObject(ckpt, "partition_activations", partition);
	cJSON_AddBoolToObject(ckpt, "contiguous_memory_optimization", partition);
	cJSON_AddBoolToObject(ckpt, "cpu_checkpointing", 0);
	cJSON_AddNumberToObject(ckpt, "number_checkpoints", recompute ? p->model.layers : 0);
	s = compact ? cJSON_PrintUnformatted(root) : cJSON_Print(root);
	cJSON_Delete(root);
	return s;
}

/* The DeepSpeed script's arguments: --deepspeed --deepspeed_config
 * CONFIG, which deepspeed.add_config_arguments() adds to a script's
 * parser (DeepSpeed docs, "Getting Started"), and the tensor and pipeline
 * sizes, which ds_config.json has no field for, as Megatron-DeepSpeed's
 * scripts take them. */
void export_deepspeed_words(struct words *ws, const struct sim_plan *p, const char *config)
{
	export_words_line(ws, "--deepspeed --deepspeed_config");
	export_words_push(ws, 0, WORD_QUOTED, config);
	if (p->par.tp > 1 || p->par.pp > 1)
		export_words_line(ws, "--tensor-model-parallel-size %d --pipeline-model-parallel-size %d",
				  p->par.tp, p->par.pp);
	/* DeepSpeed-MoE's expert groups are the script's (deepspeed.moe.
	 * layer.MoE(num_experts, ep_size, k)); ds_config.json has no field
	 * for them: the experts, top-k and EP size as Megatron-DeepSpeed's
	 * scripts take them (megatron/arguments.py: --num-experts, --topk,
	 * --moe-expert-parallel-size), and in GPUPLAN_ variables */
	if (p->model.experts > 0)
		export_words_line(ws, "--num-experts %d --topk %d --moe-expert-parallel-size %d",
				  p->model.experts, p->model.top_k, p->par.ep > 0 ? p->par.ep : 1);
}

/* What the plan tells a DeepSpeed script that ds_config.json has no field
 * for, as variables every rank inherits: the sequences to train
 * (GPUPLAN_TRAIN_SAMPLES) and the checkpoint interval in optimizer steps
 * (GPUPLAN_SAVE_INTERVAL_STEPS); then the script, which only the user
 * knows. */
void export_deepspeed_env(struct export_buf *b, const struct sim_plan *p)
{
	long long samples = export_train_samples(p);

	export_printf(b, "# for your script, which ds_config.json cannot tell: how long to train and "
			 "how often to save\n");
	if (samples > 0)
		export_printf(b, "export GPUPLAN_TRAIN_SAMPLES=%lld\n", samples);
	else
		export_printf(b, ": \"${GPUPLAN_TRAIN_SAMPLES:?set GPUPLAN_TRAIN_SAMPLES (the plan has no "
				 "token count: plan or simulate with --tokens)}\"\nexport GPUPLAN_TRAIN_SAMPLES\n");
	export_printf(b, "export GPUPLAN_SAVE_INTERVAL_STEPS=%lld\n", export_save_interval_steps(p));
	if (p->model.experts > 0) {
		const struct sim_model *m = &p->model;

		export_printf(b, "# the experts, for deepspeed.moe.layer.MoE(num_experts, ep_size, k): "
				 "ds_config.json has no field for them.\n# DeepSpeed-MoE's gate scores "
				 "with softmax and balances with GShard's loss; the model's router is\n"
				 "# %s scores, %s balancing%s%s: the script builds it\n",
			      sim_router_score_names[m->router_score],
			      m->router_balance == SIM_BALANCE_UNKNOWN ? "unstated"
								      : sim_balance_names[m->router_balance],
			      m->router_expert_bias ? ", an expert bias" : "",
			      m->router_groups > 0 ? ", group-limited top-k" : "");
		export_printf(b, "export GPUPLAN_NUM_EXPERTS=%d GPUPLAN_MOE_TOP_K=%d GPUPLAN_EP_SIZE=%d\n",
			      m->experts, m->top_k, p->par.ep > 0 ? p->par.ep : 1);
		if (m->router_aux_coeff > 0)
			export_printf(b, "export GPUPLAN_MOE_AUX_LOSS_COEFF=%g\n", m->router_aux_coeff);
	}
	if (p->par.ft.offload == SIM_OFFLOAD_NVME)
		export_printf(b, "# ds_config.json's nvme_path is /local_nvme: a local NVMe mount on every "
				 "node (set it there)\n");
	export_printf(b, ": \"${TRAIN_SCRIPT:?set TRAIN_SCRIPT to your DeepSpeed training script}\"\n");
}
