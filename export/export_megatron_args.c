/*
 * export_megatron_args.c - Megatron-LM's pretrain_gpt.py arguments for a
 * plan: the model (dense, MLA, MoE, MTP), the layout and its pipeline
 * split, the batch, recomputation, ZeRO (distributed optimizer or
 * Megatron-FSDP), precision, training length and checkpoints; the
 * placeholders the script reads; what Megatron-LM cannot build.  Flag
 * names follow megatron/training/arguments.py and Megatron-Core's
 * TransformerConfig at NVIDIA/Megatron-LM d98e8a64.  Writes no launcher:
 * export_megatron.c, export_slurm.c and the others start these words.
 */
#include "export_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The layers' split over the pipeline.  Megatron-LM cuts them evenly:
 * with equal chunks, --num-layers-per-virtual-pipeline-stage says so;
 * otherwise the simulator's split is spelt out for Megatron-Core's
 * --pipeline-model-parallel-layout (docs, "Custom Pipeline Model Parallel
 * Layout"): one '|'-separated segment per virtual stage in the order
 * activations flow, E the embedding, m a multi-token prediction module,
 * L the loss. */
static void pipeline_split(struct words *ws, const struct sim_plan *p)
{
	const struct sim_parallel *q = &p->par;
	int n = q->pp * q->interleave;
	struct export_buf layout = { 0 };

	if (q->pp < 2)
		return;
	if (p->model.layers % n == 0) {
		if (q->interleave > 1)
			export_words_line(ws, "--num-layers-per-virtual-pipeline-stage %d", p->model.layers / n);
		return;
	}
	/* a chunk of the embedding or the loss alone reads "E" or "L" */
	for (int k = 0; k < n; k++) {
		int layers = sim_virtual_stage_layers(&p->model, q, k);

		export_printf(&layout, "%s%s", k ? "|" : "", k ? "" : "E");
		if (layers > 0)
			export_printf(&layout, "t*%d", layers);
	}
	/* the MTP modules (m) follow the decoder layers in the last stage,
	 * as validate_layer_layout asserts */
	for (int k = 0; k < p->model.mtp_layers; k++)
		export_printf(&layout, ",m");
	export_printf(&layout, sim_virtual_stage_layers(&p->model, q, n - 1) > 0 || p->model.mtp_layers
			       ? ",L" : "L");
	export_words_line(ws, "--pipeline-model-parallel-layout");
	export_words_push(ws, 0, WORD_QUOTED, layout.s);
	free(layout.s);
}

/* Megatron-LM pads the tokenizer's vocabulary up to a multiple of
 * --make-vocab-size-divisible-by x tp (megatron/training/tokenizer,
 * _vocab_size_with_padding).  The preset's vocab is already the padded
 * size its authors trained (Llama 3: 128,256; GPT-2's 50,257 padded to
 * 51,200), so asking for multiples of vocab / tp pads any tokenizer of at
 * most vocab tokens to exactly vocab.  When tp does not divide vocab the
 * next multiple of tp is the nearest Megatron-LM reaches. */
static int vocab_divisor(const struct sim_plan *p)
{
	return (p->model.vocab + p->par.tp - 1) / p->par.tp;
}

/* What Megatron-LM's GPT model cannot be, in words, or NULL when it
 * builds m: --position-embedding-type takes learned_absolute, rope, yarn,
 * mrope, relative or none, and no flag adds an embedding norm or computes
 * attention and MLP side by side (megatron/training/arguments.py and
 * megatron/core/transformer/transformer_config.py at NVIDIA/Megatron-LM
 * d98e8a64).  Exporting the nearest model it builds would train another
 * model than the plan's. */
const char *export_megatron_lacks(const struct sim_model *m)
{
	if (m->pos == SIM_POS_ALIBI)
		return "ALiBi attention biases (position_embedding alibi)";
	if (m->parallel_residual)
		return "attention and MLP computed in parallel (parallel_residual)";
	if (m->embedding_norm)
		return "a norm after the embedding (embedding_norm)";
	return NULL;
}

/* The router as the model's recipe trains it (models.csv's router_
 * columns; Megatron-Core's TransformerConfig at d98e8a64): the score
 * function, the balancing loss and its coefficient, the aux-loss-free
 * expert bias and its update rate, group-limited top-k and the routed
 * weights' scaling.  Megatron's defaults are a softmax router trained
 * with no balancing at all (--moe-aux-loss-coeff 0.0): a coefficient or
 * rate no source gives is a placeholder the script asks for
 * (export_megatron_env), never that default. */
static void megatron_router(struct words *ws, const struct sim_model *m)
{
	if (m->router_score == SIM_ROUTER_SIGMOID)
		export_words_line(ws, "--moe-router-score-function sigmoid");
	export_words_line(ws, "--moe-router-load-balancing-type %s",
			  m->router_balance == SIM_BALANCE_UNKNOWN ? "aux_loss"
								   : sim_balance_names[m->router_balance]);
	if (m->router_balance != SIM_BALANCE_NONE) {
		export_words_line(ws, "--moe-aux-loss-coeff");
		if (m->router_aux_coeff > 0) {
			char n[32];

			snprintf(n, sizeof(n), "%g", m->router_aux_coeff);
			export_words_push(ws, 0, WORD_PLAIN, n);
		} else {
			export_words_push(ws, 0, WORD_VAR, "MOE_AUX_LOSS_COEFF");
		}
	}
	if (m->router_expert_bias) {
		export_words_line(ws, "--moe-router-enable-expert-bias --moe-router-bias-update-rate");
		if (m->router_bias_rate > 0) {
			char n[32];

			snprintf(n, sizeof(n), "%g", m->router_bias_rate);
			export_words_push(ws, 0, WORD_PLAIN, n);
		} else {
			export_words_push(ws, 0, WORD_VAR, "MOE_ROUTER_BIAS_UPDATE_RATE");
		}
	}
	if (m->router_groups > 0)
		export_words_line(ws, "--moe-router-num-groups %d --moe-router-group-topk %d",
				  m->router_groups, m->router_group_topk);
	if (m->router_topk_scale > 0)
		export_words_line(ws, "--moe-router-topk-scaling-factor %g", m->router_topk_scale);
}

/* The placeholders p's Megatron-LM arguments read beyond data and
 * checkpoints: the router's coefficients no source gives
 * (megatron_router).  Each in names[n], returned. */
int export_megatron_model_vars(const struct sim_plan *p, const char *names[], int n)
{
	const struct sim_model *m = &p->model;
	int k = 0;

	if (m->experts > 0 && m->router_balance != SIM_BALANCE_NONE && !(m->router_aux_coeff > 0) &&
	    k < n)
		names[k++] = "MOE_AUX_LOSS_COEFF";
	if (m->experts > 0 && m->router_expert_bias && !(m->router_bias_rate > 0) && k < n)
		names[k++] = "MOE_ROUTER_BIAS_UPDATE_RATE";
	return k;
}

/* Multi-latent attention, experts and multi-token prediction as
 * Megatron-Core's TransformerConfig takes them (flags named from its
 * fields; megatron/core/transformer/transformer_config.py and
 * megatron/core/transformer/moe/README.md at NVIDIA/Megatron-LM d98e8a64):
 * MLA's query and key head is --qk-head-dim (no rope) plus
 * --qk-pos-emb-head-dim wide; the shared experts are one MLP of their
 * summed width; --moe-layer-freq lists the first dense_layers as 0. */
static void megatron_model_moe(struct words *ws, const struct sim_model *m)
{
	if (m->kv_lora_rank > 0) {
		export_words_line(ws, "--multi-latent-attention --kv-lora-rank %d", m->kv_lora_rank);
		if (m->q_lora_rank > 0)
			export_words_line(ws, "--q-lora-rank %d", m->q_lora_rank);
		export_words_line(ws, "--qk-head-dim %d --qk-pos-emb-head-dim %d --v-head-dim %d",
				  m->qk_nope_dim, m->qk_rope_dim, m->v_head_dim);
	}
	if (m->experts > 0) {
		export_words_line(ws, "--num-experts %d --moe-router-topk %d --moe-ffn-hidden-size %d",
				  m->experts, m->top_k, m->expert_ffn);
		if (m->shared_experts > 0)
			export_words_line(ws, "--moe-shared-expert-intermediate-size %d",
					  m->shared_experts * (m->shared_ffn > 0 ? m->shared_ffn
										 : m->expert_ffn));
		if (m->dense_layers > 0) {
			char freq[64];

			snprintf(freq, sizeof(freq), "([0]*%d+[1]*%d)", m->dense_layers,
				 m->layers - m->dense_layers);
			export_words_line(ws, "--moe-layer-freq");
			export_words_push(ws, 0, WORD_QUOTED, freq);
		}
		if (m->router_pre_softmax)
			export_words_line(ws, "--moe-router-pre-softmax");
		megatron_router(ws, m);
	}
	if (m->mtp_layers > 0)
		export_words_line(ws, "--mtp-num-layers %d", m->mtp_layers);
}

/* The experts' layout: expert and expert-tensor parallelism (folded over
 * the attention's GPUs, as the plan has them), grouped GEMMs, the token
 * dispatcher the plan priced (alltoall, or flex with DeepEP: "--moe-token-
 * dispatcher-type flex --moe-flex-dispatcher-backend deepep", the MoE
 * README) and the batch-level overlap of the all-to-alls. */
static void megatron_layout_moe(struct words *ws, const struct sim_plan *p)
{
	const struct sim_parallel *q = &p->par;

	if (p->model.experts == 0)
		return;
	export_words_line(ws, "--expert-model-parallel-size %d --expert-tensor-parallel-size %d",
			  q->ep > 0 ? q->ep : 1, q->etp > 0 ? q->etp : 1);
	/* validate_args refuses grouped GEMM below sm80 (arguments.py:
	 * "Unsupported compute capability for GroupedGEMM kernels"): Volta
	 * runs the experts one GEMM after another */
	if (price_gpu_has_bf16(&p->cluster.gpu))
		export_words_line(ws, "--moe-grouped-gemm");
	export_words_line(ws, "--moe-token-dispatcher-type %s",
			  q->ep_flex ? "flex --moe-flex-dispatcher-backend deepep" : "alltoall");
	if (q->ep_overlap)
		export_words_line(ws, "--overlap-moe-expert-parallel-comm");
}

/* The arguments pretrain_gpt.py takes for p (megatron/training/
 * arguments.py, Megatron-Core's config dataclasses): the model as the
 * preset has it, the layout, the training length and schedule
 * (placeholders in LR, MIN_LR, LR_DECAY_STYLE, LR_WARMUP_SAMPLES), data
 * (DATA_PATH) and checkpoints (CKPT_DIR every save interval), precision. */
void export_megatron_words(struct words *ws, const struct sim_plan *p)
{
	const struct sim_model *m = &p->model;
	const struct sim_parallel *q = &p->par;
	long long samples = export_train_samples(p);

	export_words_line(ws, "--num-layers %d --hidden-size %d --num-attention-heads %d", m->layers,
			  m->hidden, m->heads);
	if (m->kv_heads != m->heads)
		export_words_line(ws, "--group-query-attention --num-query-groups %d", m->kv_heads);
	export_words_line(ws, "--ffn-hidden-size %d --seq-length %d --max-position-embeddings %d", m->ffn,
			  m->seq, m->seq);
	/* the gated MLP's activation: SiLU, or gpt-oss's quick_gelu GLU
	 * with its offset and clamp (TransformerConfig's glu_linear_offset
	 * and activation_func_clamp_value) */
	if (m->mlp == SIM_MLP_SWIGLU)
		export_words_line(ws, m->glu_act == SIM_GLU_QUICK_GELU ? "--quick-geglu" : "--swiglu");
	if (m->glu_offset > 0)
		export_words_line(ws, "--glu-linear-offset %g", m->glu_offset);
	if (m->glu_clamp > 0)
		export_words_line(ws, "--activation-func-clamp-value %g", m->glu_clamp);
	/* a norm on queries and keys (Qwen3), or on MLA's latents */
	if (m->qk_norm)
		export_words_line(ws, "--qk-layernorm");
	if (!m->tied_embeddings)
		export_words_line(ws, "--untie-embeddings-and-output-weights");
	if (m->pos == SIM_POS_ROPE)
		export_words_line(ws, "--position-embedding-type rope --rotary-base %.0f",
				  m->rotary_base > 0 ? m->rotary_base : 10000);
	else
		export_words_line(ws, "--position-embedding-type learned_absolute");
	/* GPT-NeoX rotates a quarter of each head's dimensions */
	if (m->pos == SIM_POS_ROPE && m->rotary_percent > 0 && m->rotary_percent < 1)
		export_words_line(ws, "--rotary-percent %g", m->rotary_percent);
	export_words_line(ws, "--normalization %s%s", m->norm == SIM_NORM_LAYERNORM ? "LayerNorm" : "RMSNorm",
			  m->linear_bias ? "" : " --disable-bias-linear");
	export_words_line(ws, "--attention-dropout %g --hidden-dropout %g", m->dropout, m->dropout);
	/* Megatron-Core's window is (left, right) tokens; 0 to the right is
	 * causal (TransformerConfig.window_size) */
	if (m->window > 0 && m->window < m->seq) {
		export_words_line(ws, "--window-size %d,0", m->window);
		/* every n-th layer attends to the whole sequence: "one full
		 * attention layer after (N-1) SWA layers" */
		if (m->window_full_every > 0)
			export_words_line(ws, "--window-attn-skip-freq %d", m->window_full_every);
	}
	/* a head width other than hidden / heads; attention sinks are a
	 * learned logit per head (softmax_type 'learnable') */
	if (m->head_dim > 0 && m->kv_lora_rank == 0)
		export_words_line(ws, "--kv-channels %d", m->head_dim);
	if (m->attn_sinks)
		export_words_line(ws, "--softmax-type learnable");
	megatron_model_moe(ws, m);
	export_words_line(ws, "--tokenizer-type HuggingFaceTokenizer --tokenizer-model");
	if (m->tokenizer[0])
		export_words_push(ws, 0, WORD_QUOTED, m->tokenizer);
	else
		export_words_push(ws, 0, WORD_VAR, "TOKENIZER");
	export_words_push(ws, 0, WORD_PLAIN, "--make-vocab-size-divisible-by");
	{
		char n[32];

		snprintf(n, sizeof(n), "%d", vocab_divisor(p));
		export_words_push(ws, 0, WORD_PLAIN, n);
	}
	export_words_line(ws, "--tensor-model-parallel-size %d --pipeline-model-parallel-size %d", q->tp,
			  q->pp);
	pipeline_split(ws, p);
	if (q->cp > 1)
		export_words_line(ws, "--context-parallel-size %d", q->cp);
	megatron_layout_moe(ws, p);
	export_words_line(ws, "--micro-batch-size %d --global-batch-size %d", q->mbs, q->gbs);
	if (q->seq_parallel)
		export_words_line(ws, "--sequence-parallel");
	/* the TP collectives under the GEMMs, as priced (tp_overlap) */
	if (q->tp_overlap && q->seq_parallel && q->tp > 1)
		export_words_line(ws, "--tp-comm-overlap");
	if (q->recompute == SIM_RECOMPUTE_FULL)
		export_words_line(ws, "--recompute-granularity full --recompute-method uniform"
				      " --recompute-num-layers 1");
	else if (q->recompute == SIM_RECOMPUTE_SELECTIVE)
		export_words_line(ws, "--recompute-granularity selective");
	if (export_megatron_fsdp(p))
		export_words_line(ws, "--use-megatron-fsdp --data-parallel-sharding-strategy %s",
				  q->zero >= 3 ? "optim_grads_params" : "optim_grads"),
		export_words_line(ws, "--use-distributed-optimizer --ckpt-format fsdp_dtensor"
				      " --no-gradient-accumulation-fusion");
	else if (q->zero >= 1)
		export_words_line(ws, "--use-distributed-optimizer");
	/* the optimizer's states and step in host memory (export_check
	 * refuses the offload Megatron-LM has not): validate_args asserts
	 * the precision-aware optimizer beside it */
	if (p->par.ft.offload == SIM_OFFLOAD_CPU)
		export_words_line(ws, "--optimizer-cpu-offload --optimizer-offload-fraction 1.0"
				      " --use-precision-aware-optimizer");
	/* The simulator hides the data-parallel sums under the backward but
	 * for the last bucket, and ZeRO-1's parameter all-gather likewise;
	 * Megatron does so only when asked (both flags default to off in
	 * megatron/training/arguments.py, which asserts the second needs the
	 * first and the distributed optimizer; Megatron-FSDP sets them from
	 * its sharding strategy). */
	if (q->dp * q->cp > 1 && !export_megatron_fsdp(p))
		export_words_line(ws, "--overlap-grad-reduce%s", q->zero >= 1 ? " --overlap-param-gather" : "");
	/* --use-flash-attn is a no-op now; the backend flag pins the kernel
	 * the simulator priced (flash, or Megatron's unfused softmax). */
	export_words_line(ws, "--attention-backend %s", q->flash ? "flash" : "unfused");
	if (samples > 0)
		export_words_line(ws, "--train-samples %lld", samples);
	else
		export_words_line(ws, "--train-samples"), export_words_push(ws, 0, WORD_VAR, "TRAIN_SAMPLES");
	export_words_line(ws, "--lr");
	export_words_push(ws, 0, WORD_VAR, "LR");
	export_words_push(ws, 0, WORD_PLAIN, "--min-lr");
	export_words_push(ws, 0, WORD_VAR, "MIN_LR");
	export_words_push(ws, 0, WORD_PLAIN, "--lr-decay-style");
	export_words_push(ws, 0, WORD_VAR, "LR_DECAY_STYLE");
	export_words_push(ws, 0, WORD_PLAIN, "--lr-warmup-samples");
	export_words_push(ws, 0, WORD_VAR, "LR_WARMUP_SAMPLES");
	export_words_line(ws, "--data-path");
	export_words_push(ws, 0, WORD_VAR, "DATA_PATH");
	export_words_line(ws, "--save");
	export_words_push(ws, 0, WORD_VAR, "CKPT_DIR");
	export_words_push(ws, 0, WORD_PLAIN, "--load");
	export_words_push(ws, 0, WORD_VAR, "CKPT_DIR");
	export_words_line(ws, "--save-interval %lld", export_save_interval_steps(p));
	/* Volta has no bf16: fp16 with Megatron-LM's dynamic loss scaling
	 * (--loss-scale unset: start at --initial-loss-scale, halve on
	 * overflow). */
	if (!price_gpu_has_bf16(&p->cluster.gpu))
		export_words_line(ws, "--fp16");
	else if (q->precision == SIM_PRECISION_FP8)
		export_words_line(ws, "--bf16 --fp8-format hybrid%s",
				  q->fp8_param_gather && q->zero >= 1 ? " --fp8-param-gather" : "");
	else if (q->precision == SIM_PRECISION_MXFP8)
		export_words_line(ws, "--bf16 --fp8-format e4m3 --fp8-recipe mxfp8%s",
				  q->fp8_param_gather && q->zero >= 1 ? " --fp8-param-gather" : "");
	else if (q->precision == SIM_PRECISION_NVFP4)
		export_words_line(ws, "--bf16 --fp4-format e2m1 --fp4-recipe nvfp4");
	else
		export_words_line(ws, "--bf16");
}

/* The script (TRAIN_SCRIPT, pretrain_gpt.py unless set) and the
 * placeholders the Megatron-LM arguments read: the learning-rate
 * schedule gpuplan does not choose (defaults the user overrides in the
 * environment), then the variables only the user knows, each checked so
 * that an unset one stops the script with what to set. */
void export_megatron_env(struct export_buf *b, const struct sim_plan *p)
{
	long long samples = export_train_samples(p);
	char warm[64];

	if (samples > 0)
		snprintf(warm, sizeof(warm), "%lld", samples / 100 > 0 ? samples / 100 : 1);
	else
		snprintf(warm, sizeof(warm), "1000");
	export_printf(b, "TRAIN_SCRIPT=${TRAIN_SCRIPT:-pretrain_gpt.py}\n");
	export_printf(b, "# PLACEHOLDERS, not from the plan: the learning-rate schedule (override them\n"
			 "# in the environment; warm-up 1%% of the samples)\n"
			 "LR=${LR:-3.0e-4}\nMIN_LR=${MIN_LR:-3.0e-5}\nLR_DECAY_STYLE=${LR_DECAY_STYLE:-cosine}\n"
			 "LR_WARMUP_SAMPLES=${LR_WARMUP_SAMPLES:-%s}\n", warm);
	export_printf(b, ": \"${DATA_PATH:?set DATA_PATH to a Megatron-LM dataset prefix "
			 "(tools/preprocess_data.py writes PREFIX.bin and PREFIX.idx)}\"\n"
			 ": \"${CKPT_DIR:?set CKPT_DIR to a checkpoint directory every node reaches}\"\n");
	if (!p->model.tokenizer[0])
		export_printf(b, ": \"${TOKENIZER:?set TOKENIZER to the Hugging Face tokenizer the model "
				 "trains with (the plan names none)}\"\n");
	if (samples <= 0)
		export_printf(b, ": \"${TRAIN_SAMPLES:?set TRAIN_SAMPLES (the plan has no token count: "
				 "plan or simulate with --tokens)}\"\n");
	{
		const char *vars[4];
		int n = export_megatron_model_vars(p, vars, 4);

		for (int i = 0; i < n; i++)
			export_printf(b, ": \"${%s:?set %s: no source gpuplan read gives the value for this model "
					 "(data/models.csv)}\"\n", vars[i], vars[i]);
	}
}
