/*
 * exec_opts.c - the executor's options: defaults, what follows from the
 * model, and the checks that say before any rank starts whether a layout
 * can run.  It does not read files or flags (the CLI does).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "train/exec_train.h"

void exec_opts_init(struct exec_opts *o)
{
	memset(o, 0, sizeof(*o));
	gp_strlcpy(o->model.name, "tiny-gpt", sizeof(o->model.name));
	o->model.layers = 4;
	o->model.hidden = 64;
	o->model.heads = 4;
	o->model.kv_heads = 4;
	o->model.ffn = 256;
	o->model.vocab = 128;
	o->model.seq = 32;
	o->model.mlp = SIM_MLP_GELU;
	sim_parallel_init(&o->par);
	o->par.mbs = 2;
	o->par.gbs = 8;
	o->schedule = SCHED_1F1B;
	o->norm = EXEC_NORM_LAYER;
	o->steps = 10;
	o->seed = 1234;
	/* GPT-3's AdamW settings (Brown et al. 2020, appendix B), with a
	 * learning rate suited to a small model. */
	o->lr = 1e-3;
	o->beta1 = 0.9;
	o->beta2 = 0.95;
	o->adam_eps = 1e-8;
	o->weight_decay = 0.1;
	o->grad_clip = 1.0;
	o->backend = "cpu";
	o->precision = EXEC_PRECISION_BF16;
	o->max_ranks = EXEC_MAX_RANKS_DEFAULT;
	o->fault_rank = -1;
	o->fault_step = -1;
	o->hang_rank = o->hang_step = o->oom_rank = -1;
	o->ckpt_fault_rank = o->ckpt_fault_step = -1;
}

void exec_opts_derive(struct exec_opts *o)
{
	/* Llama-style models pair SwiGLU with RMSNorm (Touvron et al. 2023),
	 * GPT-style ones GELU with LayerNorm (Radford et al. 2019). */
	o->norm = o->model.mlp == SIM_MLP_SWIGLU ? EXEC_NORM_RMS : EXEC_NORM_LAYER;
	o->schedule = o->par.interleave > 1 ? SCHED_INTERLEAVED : SCHED_1F1B;
	if (o->model.kv_heads <= 0)
		o->model.kv_heads = o->model.heads;
}

int exec_opts_ranks(const struct exec_opts *o)
{
	return o->par.tp * o->par.pp * o->par.dp * o->par.cp;
}

double exec_lora_alpha(const struct exec_opts *o)
{
	int r = o->par.ft.lora_rank > 0 ? o->par.ft.lora_rank : SIM_LORA_DEFAULT_RANK;

	return o->lora_alpha > 0 ? o->lora_alpha : 2.0 * r;
}

static enum rc why_fmt(char *why, size_t size, const char *fmt, ...) GP_PRINTF(3, 4);

static enum rc why_fmt(char *why, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (why && size) {
		va_start(ap, fmt);
		vsnprintf(why, size, fmt, ap);
		va_end(ap);
	}
	return RC_INPUT;
}

#define WHY(...) return why_fmt(why, size, __VA_ARGS__)

/* What the executor runs of a mixture of experts (exec_train_moe.c):
 * the model's routing as the simulator checks it, experts whole on one
 * rank (expert TP 1) over ep ranks that divide the experts and fold over
 * a stage's tp x cp x dp ranks, each routing its own tokens (sequence
 * parallel with tp > 1, as Megatron-Core requires), NCCL-style
 * all-to-all dispatch; and none of it without experts.  Multi-head
 * latent attention is refused here too: the executor's attention is
 * plain grouped-query attention. */
static enum rc moe_check(const struct exec_opts *o, char *why, size_t size)
{
	const struct sim_model *m = &o->model;
	const struct sim_parallel *p = &o->par;
	int ep = p->ep > 0 ? p->ep : 1, etp = p->etp > 0 ? p->etp : 1;
	long stage = (long)p->tp * p->cp * p->dp;
	int shared = m->shared_experts * (m->shared_ffn > 0 ? m->shared_ffn : m->expert_ffn);

	if (m->kv_lora_rank > 0)
		WHY("model.kv_lora_rank: expected 0, plain attention, which the executor runs "
		    "(it has no multi-head latent attention), found %d", m->kv_lora_rank);
	if (m->experts == 0) {
		if (ep > 1 || etp > 1)
			WHY("parallel.%s: expected 1 without experts, found %d", ep > 1 ? "ep" : "etp",
			    ep > 1 ? ep : etp);
		return RC_OK;
	}
	if (sim_model_check(m, why, size) != RC_OK) {
		char reason[256];

		gp_strlcpy(reason, why, sizeof(reason));
		WHY("model.%s", reason);
	}
	if (m->experts % ep)
		WHY("parallel.ep: expected a divisor of the %d experts, found %d", m->experts, ep);
	if (stage % ep)
		WHY("parallel.ep: expected a divisor of tp x cp x dp = %ld, the ranks of a pipeline "
		    "stage the experts fold over, found %d", stage, ep);
	if (etp != 1)
		WHY("parallel.etp: expected 1, experts whole on one rank, which the executor runs, "
		    "found %d", etp);
	if (p->tp > 1 && !p->seq_parallel)
		WHY("parallel.seq_parallel: expected sequence parallelism with tp %d and experts "
		    "(each TP rank routes its own tokens, as Megatron-Core requires), found none",
		    p->tp);
	if (shared % p->tp)
		WHY("parallel.tp: expected a divisor of the shared experts' width (%d), found %d",
		    shared, p->tp);
	if (p->ep_flex)
		WHY("parallel.ep_dispatcher: expected alltoall, which the executor runs, found "
		    "flex");
	return RC_OK;
}

/* What the executor runs of fine-tuning: full training (as pre-training)
 * or LoRA with its base frozen (exec_train_lora.c).  QLoRA's 4-bit base
 * and offloaded states it does not have, and LoRA it runs on dense
 * layers only, as the simulator models it (sim_ft_check): an expert's
 * projections would need adapters of their own per expert. */
static enum rc ft_check(const struct exec_opts *o, char *why, size_t size)
{
	const struct sim_finetune *ft = &o->par.ft;
	unsigned targets = ft->lora_targets ? ft->lora_targets : SIM_LORA_ALL;

	if ((int)ft->method < SIM_FT_NONE || (int)ft->method > SIM_FT_QLORA)
		WHY("finetune: expected none, full or lora, found %d", (int)ft->method);
	if (ft->method == SIM_FT_QLORA)
		WHY("finetune: expected none, full or lora, which the executor runs (it keeps no "
		    "4-bit NormalFloat base weights), found qlora");
	if ((int)ft->offload != SIM_OFFLOAD_NONE)
		WHY("offload: expected none, every state on the executor's device, found %s",
		    (int)ft->offload == SIM_OFFLOAD_CPU ? "cpu" : (int)ft->offload ==
		    SIM_OFFLOAD_NVME ? "nvme" : "another value");
	if (ft->method != SIM_FT_LORA)
		return RC_OK;
	if (o->model.experts > 0)
		WHY("finetune: expected a dense model for lora (the executor adapts no expert "
		    "projections), found %d experts", o->model.experts);
	if (ft->lora_rank < 0 || ft->lora_rank > SIM_LORA_MAX_RANK)
		WHY("lora_rank: expected 0 (%d) or 1 to %d, found %d", SIM_LORA_DEFAULT_RANK,
		    SIM_LORA_MAX_RANK, ft->lora_rank);
	if (targets & ~SIM_LORA_ALL)
		WHY("lora_targets: expected projections among q, k, v, o, gate, up, down, found "
		    "bits 0x%x", targets);
	if (o->model.mlp != SIM_MLP_SWIGLU && (targets & ~SIM_LORA_GATE) == 0)
		WHY("lora_targets: expected a projection the model has, found only gate in a "
		    "GELU MLP");
	if (!(o->lora_alpha >= 0) || !isfinite(o->lora_alpha))
		WHY("lora_alpha: expected a finite number >= 0 (0: twice the rank), found %g",
		    o->lora_alpha);
	return RC_OK;
}

enum rc exec_opts_check(const struct exec_opts *o, char *why, size_t size)
{
	const struct sim_model *m = &o->model;
	const struct sim_parallel *p = &o->par;
	long ranks;

	if (m->layers < 1)
		WHY("model.layers: expected an integer >= 1, found %d", m->layers);
	if (m->hidden < 1)
		WHY("model.hidden: expected an integer >= 1, found %d", m->hidden);
	if (m->heads < 1 || m->hidden % m->heads)
		WHY("model.heads: expected a divisor of hidden (%d), found %d",
		    m->hidden, m->heads);
	if (m->kv_heads < 1 || m->heads % m->kv_heads)
		WHY("model.kv_heads: expected a divisor of heads (%d), found %d",
		    m->heads, m->kv_heads);
	if (m->ffn < 1)
		WHY("model.ffn: expected an integer >= 1, found %d", m->ffn);
	if (m->vocab < 2 || m->vocab > 65536)
		WHY("model.vocab: expected 2 to 65536 (uint16 tokens), found %d", m->vocab);
	if (m->seq < 1)
		WHY("model.seq: expected an integer >= 1, found %d", m->seq);
	if (p->tp < 1 || p->pp < 1 || p->dp < 1 || p->cp < 1)
		WHY("parallel: expected tp, pp, dp and cp >= 1, found %d, %d, %d, %d",
		    p->tp, p->pp, p->dp, p->cp);
	/* context parallelism gives each CP rank two of 2 cp chunks of every
	 * sequence (exec_trainer.c) */
	if (p->cp > 1 && m->seq % (2 * p->cp))
		WHY("parallel.cp: expected 2 x cp to divide the sequence (%d), found cp %d",
		    m->seq, p->cp);
	ranks = (long)p->tp * p->pp * p->dp * p->cp;
	if (ranks > o->max_ranks)
		WHY("layout: expected at most %d ranks, found %ld (tp %d x pp %d x dp %d x cp %d)",
		    o->max_ranks, ranks, p->tp, p->pp, p->dp, p->cp);
	/* Megatron's tensor parallelism splits whole heads and the MLP's
	 * inner width (Shoeybi et al. 2019, sec. 3). */
	if (m->heads % p->tp || m->kv_heads % p->tp)
		WHY("parallel.tp: expected a divisor of heads (%d) and kv_heads (%d), found %d",
		    m->heads, m->kv_heads, p->tp);
	if (m->ffn % p->tp && (m->experts == 0 || m->dense_layers > 0))
		WHY("parallel.tp: expected a divisor of the MLP width (%d), found %d",
		    m->ffn, p->tp);
	if (moe_check(o, why, size) != RC_OK || ft_check(o, why, size) != RC_OK)
		return RC_INPUT;
	if (m->vocab < p->tp)
		WHY("parallel.tp: expected at most vocab (%d) ranks, found %d", m->vocab, p->tp);
	/* sequence parallelism cuts every sequence (its CP slice) into tp
	 * slices (Korthikanti et al. 2022, sec. 4.2.2), as sim_check demands */
	if (p->seq_parallel && p->tp > 1 && (m->seq / p->cp) % p->tp)
		WHY("parallel.seq_parallel: expected tp %d to divide the sequence %d / cp %d",
		    p->tp, m->seq, p->cp);
	if (p->interleave < 1)
		WHY("parallel.interleave: expected an integer >= 1, found %d", p->interleave);
	if (p->interleave > 1 && p->pp < 2)
		WHY("parallel.interleave: expected 1 without pipeline parallelism, found %d",
		    p->interleave);
	/* A pp that does not divide the layers splits them as the simulator
	 * does (exec_stage_layers); every stage, and every chunk of one,
	 * needs a layer, as sim_check demands. */
	if (m->layers < p->pp)
		WHY("parallel.pp: expected at most the %d layers (one a stage), found %d",
		    m->layers, p->pp);
	for (int s = 0; s < p->pp; s++) {
		int n = exec_stage_layers(m->layers, p->pp, s);

		if (n < p->interleave)
			WHY("parallel.interleave: expected at most %d, a layer a chunk (stage "
			    "%d holds %d of the %d layers), found %d", n, s, n, m->layers,
			    p->interleave);
	}
	if ((o->schedule == SCHED_INTERLEAVED) != (p->interleave > 1))
		WHY("schedule: expected %s with interleave %d, found %s",
		    p->interleave > 1 ? "interleaved" : "gpipe or 1f1b", p->interleave,
		    sched_kind_name(o->schedule));
	if (p->mbs < 1)
		WHY("parallel.mbs: expected an integer >= 1, found %d", p->mbs);
	if (p->gbs < 1 || p->gbs % ((long)p->mbs * p->dp))
		WHY("parallel.gbs: expected a multiple of mbs x dp (%d x %d), found %d",
		    p->mbs, p->dp, p->gbs);
	if (p->zero < 0 || p->zero > 3)
		WHY("parallel.zero: expected 0 to 3, found %d", p->zero);
	if (o->steps < 1)
		WHY("steps: expected an integer >= 1, found %d", o->steps);
	if (!(o->lr > 0) || !(o->grad_clip >= 0) || !(o->beta1 >= 0 && o->beta1 < 1) ||
	    !(o->beta2 >= 0 && o->beta2 < 1) || !(o->adam_eps > 0) || !(o->weight_decay >= 0))
		WHY("optimizer: expected lr > 0, 0 <= betas < 1, eps > 0, decay and clip >= 0");
	if (!o->backend || (strcmp(o->backend, "cpu") != 0 && strcmp(o->backend, "cuda") != 0))
		WHY("backend: expected cpu or cuda, found '%s'", o->backend ? o->backend : "");
	return RC_OK;
}
