/*
 * sim_check.c - a parallel configuration's defaults (sim_parallel_init)
 * and the checks a model, a configuration and a cluster must pass
 * together before sim_step() runs them (sim_check).  Each refusal is one
 * line naming the field and what was expected.
 *
 * It calls down only: sim_shape.c (the model's own check, the
 * interleave bound), sim_cost.c (a precision's peak) and sim_finetune.c
 * (the fine-tuning check), and sim_names.c.
 */
#include <math.h>
#include <string.h>

#include "sim_cost.h"
#include "sim_finetune.h"
#include "sim_shape.h"

double sim_parallel_gpus(const struct sim_parallel *p)
{
	return (double)p->tp * p->pp * p->dp * p->cp;
}

void sim_parallel_init(struct sim_parallel *p)
{
	memset(p, 0, sizeof(*p));
	p->tp = p->pp = p->dp = p->cp = 1;
	p->mbs = 1;
	p->gbs = 1;
	p->zero = 0;
	p->ep = p->etp = 1;
	p->moe_imbalance = 1;
	p->zero3_gather = SIM_ZERO3_BLOCK;
	p->recompute = SIM_RECOMPUTE_NONE;
	p->interleave = 1;
	p->seq_parallel = 0;
	p->tp_overlap = 0;
	p->dp_overlap = SIM_DP_OVERLAP_ALL;
	p->flash = 1;
	p->attn_kernel = SIM_ATTN_AUTO;
	p->precision = SIM_PRECISION_BF16;
	p->act_bytes_per_element = 2;
	p->grad_bytes_per_param = 2;
}

/* ---- checks -------------------------------------------------------- */

/* 1 when x is 0 (not stated) or a finite rate of at least 1 per second. */
static int rate_ok(double x)
{
	return x == 0 || (x >= 1 && isfinite(x));
}

#define WHY SIM_WHY

enum rc sim_check(const struct sim_model *m, const struct sim_parallel *p,
		  const struct sim_cluster *c, char *why, size_t size)
{
	long long dpc;
	int micro;

	if (sim_model_check(m, why, size) != RC_OK)
		return RC_INPUT;
	if (p->tp < 1)
		WHY("tp: expected an integer >= 1, found %d", p->tp);
	if (p->pp < 1)
		WHY("pp: expected an integer >= 1, found %d", p->pp);
	if (p->dp < 1)
		WHY("dp: expected an integer >= 1, found %d", p->dp);
	if (p->cp < 1)
		WHY("cp: expected an integer >= 1, found %d", p->cp);
	if (p->mbs < 1)
		WHY("mbs: expected an integer >= 1, found %d", p->mbs);
	if (p->gbs < 1)
		WHY("gbs: expected an integer >= 1, found %d", p->gbs);
	if (p->interleave < 1)
		WHY("interleave: expected an integer >= 1, found %d", p->interleave);
	if (p->zero < 0 || p->zero > 3)
		WHY("zero: expected a stage from 0 to 3, found %d", p->zero);
	if (p->tp_overlap != 0 && p->tp_overlap != 1)
		WHY("tp_overlap: expected 0 or 1, found %d", p->tp_overlap);
	if (p->pp_send_whole != 0 && p->pp_send_whole != 1)
		WHY("pp_send_whole: expected 0 (split) or 1 (whole), found %d", p->pp_send_whole);
	if (p->fp8_param_gather != 0 && p->fp8_param_gather != 1)
		WHY("fp8_param_gather: expected 0 or 1, found %d", p->fp8_param_gather);
	if (p->zero3_gather != SIM_ZERO3_BLOCK && p->zero3_gather != SIM_ZERO3_TENSOR_SYNC)
		WHY("zero3_gather: expected block or tensor-sync, found %d", (int)p->zero3_gather);
	if ((int)p->attn_kernel < SIM_ATTN_AUTO || (int)p->attn_kernel > SIM_ATTN_CUDNN)
		WHY("attn_kernel: expected auto, fa1, fa2, fa3 or cudnn, found %d", (int)p->attn_kernel);
	if (p->recompute != SIM_RECOMPUTE_NONE && p->recompute != SIM_RECOMPUTE_SELECTIVE
	    && p->recompute != SIM_RECOMPUTE_FULL)
		WHY("recompute: expected none, selective or full, found %d", (int)p->recompute);
	if ((int)p->precision < SIM_PRECISION_BF16 || (int)p->precision > SIM_PRECISION_NVFP4)
		WHY("precision: expected bf16, fp8, mxfp8 or nvfp4, found %d", (int)p->precision);
	if (p->recompute_modules >> SIM_RECOMPUTE_MODULES)
		WHY("recompute_modules: expected bits of layernorm, mla_up_proj, moe_act and mlp, "
		    "found 0x%x", p->recompute_modules);
	if (p->recompute_modules && p->recompute != SIM_RECOMPUTE_SELECTIVE)
		WHY("recompute_modules: expected recompute selective with modules, found %s",
		    sim_recompute_str(p->recompute));
	if ((int)p->opt_states < SIM_OPT_FP32 || (int)p->opt_states > SIM_OPT_INT8_NO_MASTER)
		WHY("opt_states: expected fp32, bf16, bf16_no_master or int8_no_master, found %d",
		    (int)p->opt_states);
	if ((int)p->loss < SIM_LOSS_VOCAB_PARALLEL || (int)p->loss > SIM_LOSS_CHUNKED_BF16)
		WHY("loss: expected vocab_parallel, eager_fp32 or chunked_bf16, found %d",
		    (int)p->loss);
	if (p->ep_overlap != 0 && p->ep_overlap != 1)
		WHY("ep_overlap: expected 0 or 1, found %d", p->ep_overlap);
	if (p->ep_flex != 0 && p->ep_flex != 1)
		WHY("ep_flex: expected 0 or 1, found %d", p->ep_flex);
	/* 0 is the default (2); the widest element a trainer stores is fp64 */
	if (!(p->act_bytes_per_element == 0 ||
	      (p->act_bytes_per_element >= 1 && p->act_bytes_per_element <= 8)))
		WHY("act_bytes_per_element: expected 0 (2 bytes) or 1 to 8, found %g",
		    p->act_bytes_per_element);
	if (!(p->grad_bytes_per_param == 0 ||
	      (p->grad_bytes_per_param >= 1 && p->grad_bytes_per_param <= 8)))
		WHY("grad_bytes_per_param: expected 0 (2 bytes) or 1 to 8, found %g",
		    p->grad_bytes_per_param);

	if (p->ep < 0 || p->ep > SIM_MAX_DEGREE)
		WHY("ep: expected an integer from 1 to %d, found %d", SIM_MAX_DEGREE, p->ep);
	if (p->etp < 0 || p->etp > SIM_MAX_DEGREE)
		WHY("etp: expected an integer from 1 to %d, found %d", SIM_MAX_DEGREE, p->etp);
	if (!(p->moe_imbalance == 0 || (p->moe_imbalance >= 1 && p->moe_imbalance <= 1000)))
		WHY("moe_imbalance: expected 1 (balanced) to 1000, found %g", p->moe_imbalance);
	if (m->experts == 0 && (p->ep > 1 || p->etp > 1))
		WHY("%s: expected 1 without experts, found %d", p->ep > 1 ? "ep" : "etp",
		    p->ep > 1 ? p->ep : p->etp);
	if (m->experts > 0) {
		long long group = (long long)(p->ep > 0 ? p->ep : 1) * (p->etp > 0 ? p->etp : 1);
		long long attn = (long long)p->tp * p->cp * p->dp;

		if (p->ep > 1 && m->experts % p->ep)
			WHY("ep: expected a divisor of experts %d, found %d", m->experts, p->ep);
		if (p->etp > 1 && m->expert_ffn % p->etp)
			WHY("etp: expected a divisor of expert_ffn %d, found %d", m->expert_ffn, p->etp);
		/* Liu et al. 2025, sec. 3: the expert group ep x etp and the
		 * expert data parallelism fold over the attention's GPUs */
		if (attn % group)
			WHY("ep: expected ep x etp = %lld to divide tp x cp x dp = %lld (MoE parallel "
			    "folding), found ep %d, etp %d", group, attn, p->ep, p->etp);
		/* Megatron-Core's MoE layer splits the tokens over the TP ranks
		 * (sequence parallelism) when TP > 1 */
		if (p->tp > 1 && !p->seq_parallel)
			WHY("seq_parallel: expected on with tp %d and experts (Megatron-Core's MoE "
			    "layers split tokens over TP ranks)", p->tp);
	}

	/* Products of degrees are formed in wider types: each degree fits an
	 * int, their product need not. */
	if (sim_parallel_gpus(p) > SIM_MAX_GPUS)
		WHY("gpus: expected tp x pp x dp x cp of at most %d, found %.0f", SIM_MAX_GPUS,
		    sim_parallel_gpus(p));
	if (m->heads % p->tp)
		WHY("tp: expected a divisor of heads %d, found %d", m->heads, p->tp);
	/* KV heads are split over TP ranks, or replicated when TP is a
	 * multiple of them (Megatron-LM's GQA). */
	if (m->kv_heads % p->tp && p->tp % m->kv_heads)
		WHY("tp: expected a divisor or multiple of kv_heads %d, found %d",
		    m->kv_heads, p->tp);
	if (m->layers < p->pp)
		WHY("pp: expected at most layers %d, found %d", m->layers, p->pp);
	if (p->interleave > 1) {
		if (p->pp < 2)
			WHY("interleave: expected 1 without pipeline parallelism, found %d",
			    p->interleave);
		/* Every chunk holds a layer but the embedding's and the
		 * loss's; uneven splits are allowed (sim_stage_layers). */
		if (p->interleave > sim_max_interleave(m, p->pp))
			WHY("interleave: expected at most %d chunks per stage for %d layers "
			    "over pp %d, found %d", sim_max_interleave(m, p->pp), m->layers,
			    p->pp, p->interleave);
	}
	if (p->pp_last_layers < 0 || p->pp_last_layers >= m->layers)
		WHY("pp_last_layers: expected 0 (the simulator's split) to %d, found %d",
		    m->layers - 1, p->pp_last_layers);
	if (p->pp_last_layers > 0) {
		long long n = (long long)p->pp * p->interleave;
		int rest = m->layers - p->pp_last_layers;

		if (p->pp < 2)
			WHY("pp_last_layers: expected 0 without pipeline parallelism, found %d",
			    p->pp_last_layers);
		if (rest % (n - 1) || rest < n - 1)
			WHY("pp_last_layers: the other %lld virtual stages must split the other %d "
			    "layers evenly, found %d in the last", n - 1, rest, p->pp_last_layers);
	}
	/* Megatron-LM splits a sequence into 2 cp chunks to balance causal
	 * attention over context-parallel ranks. */
	if (p->cp > 1 && m->seq % (2 * p->cp))
		WHY("cp: expected 2 x cp to divide seq %d, found cp %d", m->seq, p->cp);
	if (p->seq_parallel && p->tp > 1 && (m->seq / p->cp) % p->tp)
		WHY("seq_parallel: expected tp %d to divide the local sequence %d",
		    p->tp, m->seq / p->cp);
	dpc = (long long)p->mbs * p->dp;
	if (p->gbs % dpc)
		WHY("gbs: expected a multiple of mbs x dp = %lld, found %d", dpc, p->gbs);
	micro = (int)(p->gbs / dpc);
	if (p->interleave > 1 && micro % p->pp)
		WHY("gbs: the interleaved schedule needs micro-batches %d to be a multiple of pp %d",
		    micro, p->pp);

	if (!(c->gpu.bf16_flops_per_s > 0))
		WHY("gpu %s: expected a bf16 FLOP/s figure, found none", c->gpu.name);
	if (!(c->gpu.memory_bytes > 0))
		WHY("gpu %s: expected a memory size, found none", c->gpu.name);
	if (c->gpus_per_node < 1)
		WHY("gpus_per_node: expected an integer >= 1, found %d", c->gpus_per_node);
	if (c->intra_bytes_per_s < 0 || c->inter_bytes_per_s < 0 || c->latency_s < 0
	    || !isfinite(c->intra_bytes_per_s) || !isfinite(c->inter_bytes_per_s)
	    || !isfinite(c->latency_s))
		WHY("cluster: expected finite bandwidths and latency >= 0");
	/* A rate below one per second is no rate: the times it gives overflow
	 * to infinity (0 means "the default").  Nor is a collective step of
	 * more than a second a latency. */
	if (!rate_ok(c->intra_bytes_per_s) || !rate_ok(c->inter_bytes_per_s) ||
	    !rate_ok(c->gpu.hbm_bytes_per_s) || !rate_ok(c->gpu.intra_bytes_per_s) ||
	    !rate_ok(c->gpu.bf16_flops_per_s) || !rate_ok(c->gpu.fp8_flops_per_s) ||
	    !rate_ok(c->gpu.elt_bytes_per_s[0]) || !rate_ok(c->gpu.elt_bytes_per_s[1]) ||
	    !rate_ok(c->gpu.act_bytes_per_s[0]) || !rate_ok(c->gpu.act_bytes_per_s[1]) ||
	    !rate_ok(c->gpu.attn_flops_per_s) || !rate_ok(c->gpu.opt_bytes_per_s))
		WHY("cluster: expected bandwidths and FLOP/s of 0 (default) or from 1 per second, "
		    "finite");
	if (c->latency_s > 1)
		WHY("latency_s: expected at most 1 s, found %g", c->latency_s);
	if (c->nvlink_domain < 0 || c->nvlink_domain > PRICE_MAX_NVLINK_DOMAIN)
		WHY("nvlink_domain: expected 0 (the node) to %d GPUs, found %d",
		    PRICE_MAX_NVLINK_DOMAIN, c->nvlink_domain);
	/* the block-scaled formats need tensor cores that run them */
	if (p->precision >= SIM_PRECISION_MXFP8 && !(sim_precision_peak(p, &c->gpu) > 0))
		WHY("precision: expected a GPU with an %s rate (%s), found none for %s",
		    p->precision == SIM_PRECISION_MXFP8 ? "MXFP8" : "NVFP4",
		    p->precision == SIM_PRECISION_MXFP8 ? "an mxfp8 figure, or Blackwell's fp8"
		    : "an nvfp4 figure", c->gpu.name);
	if (!rate_ok(c->gpu.mxfp8_flops_per_s) || !rate_ok(c->gpu.nvfp4_flops_per_s))
		WHY("cluster: expected MXFP8 and NVFP4 FLOP/s of 0 (none) or from 1 per second, "
		    "finite");
	return sim_ft_check(m, p, c, why, size);
}
