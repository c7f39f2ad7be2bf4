/*
 * export_trl.c - the trl format: Hugging Face TRL's `trl sft` under
 * Accelerate with the deepspeed format's config, LoRA through PEFT and
 * QLoRA through bitsandbytes' NF4.  Data parallelism and ZeRO only
 * (export_check refuses tp or pp > 1); writes no dataset or model
 * choice the plan does not make (DATASET and MODEL are the user's).
 */
#include "export_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Hugging Face module names of a Llama-family block's projections, in
 * sim_lora_target_names's order (transformers' LlamaAttention and
 * LlamaMLP). */
static const char *const hf_modules[7] = { "q_proj", "k_proj", "v_proj", "o_proj",
					   "gate_proj", "up_proj", "down_proj" };

/* `trl sft` for p (TRL's ModelConfig: use_peft, lora_r, lora_alpha,
 * lora_target_modules, load_in_4bit, bnb_4bit_quant_type,
 * use_bnb_nested_quant, bnb_4bit_quant_storage; SFTConfig: max_length,
 * packing; TrainingArguments: per_device_train_batch_size,
 * gradient_accumulation_steps, gradient_checkpointing, bf16, deepspeed,
 * num_train_epochs or max_steps, save_strategy and save_steps; ModelConfig's
 * dtype), started by Accelerate with the plan's
 * processes, the deepspeed format's config beside it.  LoRA's alpha is
 * twice its rank (torchtune's and TRL's defaults); QLoRA quantises with
 * NF4 and double quantisation (Dettmers et al. 2023), storing in bf16
 * under ZeRO-3 so that DeepSpeed can shard the 4-bit weights. */
void export_write_trl(struct export_buf *b, const struct sim_plan *p, enum plan_framework fw)
{
	const struct sim_finetune *ft = &p->par.ft;
	int lora = ft->method == SIM_FT_LORA || ft->method == SIM_FT_QLORA;
	int rank = ft->lora_rank > 0 ? ft->lora_rank : SIM_LORA_DEFAULT_RANK;
	unsigned targets = ft->lora_targets ? ft->lora_targets : SIM_LORA_ALL;
	char *cfg = export_deepspeed_config(p, 0), *q = NULL, e1[4 * PRICE_NAME_MAX];
	int bf16 = price_gpu_has_bf16(&p->cluster.gpu);

	(void)fw;

	export_printf(b, "#!/usr/bin/env bash\n# TRL supervised fine-tuning of %s on %d x %s "
			  "(written by gpuplan)\nset -eu\n",
		      gp_term_escape(e1, sizeof(e1), p->model.name), export_gpus(p), p->cluster.gpu.name);
	export_nccl_env(b, p, "export ", 1);
	export_master_addr_check(b, p);
	export_hf_token_check(b, p);
	export_printf(b, "cat > ds_config.json <<'EOF'\n%s\nEOF\n", cfg);
	free(cfg);
	if (p->par.ft.offload == SIM_OFFLOAD_NVME)
		export_printf(b, "# set nvme_path in ds_config.json to a local NVMe mount\n");
	if (p->model.tokenizer[0])
		q = gp_shell_quote(p->model.tokenizer);
	export_printf(b, "trl sft --num_processes %d --num_machines %d", export_gpus(p), export_nodes(p));
	if (export_nodes(p) > 1)
		export_printf(b, " --main_process_ip \"$MASTER_ADDR\" --machine_rank \"${NODE_RANK:?set "
				 "NODE_RANK}\"");
	export_printf(b, " \\\n  --model_name_or_path %s --dataset_name \"${DATASET:?set DATASET}\"",
		      q ? q : "\"${MODEL:?set MODEL}\"");
	free(q);
	/* TRL 1.16's SFTConfig.bf16 is `bool | None`: its parser wants the
	 * value; --dtype loads the weights in it and is QLoRA's compute
	 * dtype (trl/trainer/utils.py, get_quantization_config:
	 * bnb_4bit_compute_dtype=model_args.dtype); SFTConfig recomputes
	 * unless told not to (gradient_checkpointing defaults to True) */
	export_printf(b, " \\\n  --max_length %d --packing --%s true --dtype %s",
		      p->model.seq, bf16 ? "bf16" : "fp16", bf16 ? "bfloat16" : "float16");
	export_printf(b, " \\\n  --per_device_train_batch_size %d --gradient_accumulation_steps %d "
			 "--gradient_checkpointing %s", p->par.mbs, export_grad_accum(p),
		      p->par.recompute != SIM_RECOMPUTE_NONE ? "true" : "false");
	/* checkpoints at the plan's interval */
	export_printf(b, " \\\n  --save_strategy steps --save_steps %lld", export_save_interval_steps(p));
	if (p->epochs > 0)
		export_printf(b, " --num_train_epochs %g", p->epochs);
	else if (p->tokens > 0)
		export_printf(b, " --max_steps %.0f", ceil(p->tokens / ((double)p->par.gbs * p->model.seq)));
	if (lora) {
		export_printf(b, " \\\n  --use_peft --lora_r %d --lora_alpha %d --lora_dropout 0 "
				 "--lora_target_modules", rank, 2 * rank);
		for (int i = 0; i < 7; i++)
			if ((targets & (1u << i)) &&
			    ((1u << i) != SIM_LORA_GATE || p->model.mlp == SIM_MLP_SWIGLU))
				export_printf(b, " %s", hf_modules[i]);
	}
	if (ft->method == SIM_FT_QLORA) {
		export_printf(b, " \\\n  --load_in_4bit --bnb_4bit_quant_type nf4 --use_bnb_nested_quant");
		if (p->par.zero >= 3)
			export_printf(b, " --bnb_4bit_quant_storage bfloat16");
	}
	export_printf(b, " \\\n  --deepspeed ds_config.json --output_dir \"${OUTPUT_DIR:-out}\" \"$@\"\n");
}
