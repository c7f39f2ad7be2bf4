/*
 * sim.c - the analytic step-time model of GPT-style decoder training:
 * sim_step(), the planner's hot path, on top of the simulator's other
 * files (the checks a configuration must pass first are sim_check.c's,
 * parameter and FLOP counts sim_shape.c's, kernel and GEMM times
 * sim_cost.c's, collectives sim_comm.c's, the memory sim_memory.c's).
 *
 * sim_step() times every GEMM of one layer at its own shape on one GPU,
 * adds element-wise work at HBM bandwidth, tensor/context-parallel
 * communication per layer, assembles pipeline stages and the 1F1B or
 * interleaved schedule, then data-parallel reduction and the optimizer
 * step.  It allocates nothing and reads only its arguments.  It does not
 * simulate the schedule event by event, model kernel fusion beyond the
 * counts stated below, overlap tensor-parallel communication unless the
 * plan says its framework does (tp_overlap), nor slow down for memory
 * pressure near the GPU's capacity.
 *
 * It calls down only: sim_cost.c, sim_comm.c, sim_shape.c,
 * sim_finetune.c and sim_memory.c; sim_event.c calls it.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim_internal.h"

double sim_time_to_train_s(const struct sim_result *r, double tokens)
{
	if (!r || !(r->tokens_per_s > 0) || !(tokens > 0) || !isfinite(tokens))
		return 0;
	return tokens / r->tokens_per_s;
}

/* ---- kernels ------------------------------------------------------- */

static double hbm_time_s(double bytes, double hbm, int kernels)
{
	return bytes / (hbm * SIM_HBM_EFF) + kernels * SIM_KERNEL_S;
}

/* The share of causal attention's work a sliding window leaves,
 * averaged over the layers: a causal query at position i attends to i
 * keys, s/2 on average; with a window w < s to min(i, w), w - w^2 / (2s)
 * on average (Jiang et al. 2023, sec. 2), which FlashAttention's block
 * skipping turns into time; on the layers without the window (every
 * window_full_every-th), 1. */
static double window_share(const struct sim_model *m)
{
	double s = m->seq, w = m->window;
	int nw = sim_window_layers(m);

	if (!nw)
		return 1;
	return (nw * (w - w * w / (2.0 * s)) / (s / 2.0) + (m->layers - nw)) / m->layers;
}

/* The same mean for a flash kernel's time: a window layer's query tile
 * meets at most w keys, so its kernel runs at the efficiency the kernel
 * reaches at sequence w, not at the full sl (the rise with sequence
 * length of sim_attn_kernel_time_s, FA3 paper Fig. 5): its FLOPs share
 * is divided by the ratio of the two. */
static double window_time_share(const struct sim_model *m, double sl)
{
	double s = m->seq, w = m->window, rise;
	int nw = sim_window_layers(m);

	if (!nw)
		return 1;
	rise = (sl / (sl + SIM_ATTN_SEQ_HALF)) / (w / (w + SIM_ATTN_SEQ_HALF));
	if (rise < 1)
		rise = 1;
	return (nw * rise * (w - w * w / (2.0 * s)) / (s / 2.0) + (m->layers - nw)) / m->layers;
}

/* Per micro-batch times of one layer on one GPU. */
struct layer_time {
	double fwd_s, bwd_s, recompute_s;   /* compute */
	double attn_fwd_s, attn_bwd_s;      /* of which the attention core */
	double tp_fwd_s;                    /* TP communication, one forward */
	double cp_fwd_s, cp_bwd_s;          /* exposed KV exchange */
	double ep_fwd_s;                    /* EP all-to-alls of one pass, forward
					     * or backward (dispatch and combine) */
};

/* Per micro-batch times of one stage's extra work: the embedding (first
 * stage) or the final norm, logits and loss (last stage). */
struct edge_time {
	double compute_s, tp_s;
};

/* The cluster's host dispatch time per layer forward (sim.h). */
static double host_layer_s(const struct sim_cluster *c)
{
	return c->host_layer_s > 0 ? c->host_layer_s
	       : c->host_layer_s < 0 ? 0 : SIM_HOST_LAYER_S;
}

/* How the plan's precision runs the linear layers' GEMMs on c's GPU. */
struct gemm_prec {
	double peak;     /* FLOP/s */
	double elem;     /* bytes of one operand element, its scales included */
	double cast;     /* bytes quantizing one operand element moves; 0: none */
};

/* The linear layers (attention projections, MLPs and experts) run in the
 * plan's precision; the attention core, the router and the LM head stay
 * in bf16, as Transformer Engine keeps them (its fp8_autocast covers
 * te.Linear and its grouped GEMMs, not DotProductAttention unless asked).
 * Each low-precision operand is quantized first: FP8 per tensor, a cast
 * and a transpose (SIM_FP8_CAST_BYTES); MXFP8, 8-bit elements with an
 * 8-bit scale per 32, row- and column-wise copies (the weight gradient
 * reads the column-wise one); NVFP4, 4-bit elements with an 8-bit scale
 * per 16, likewise (OCP Microscaling Formats spec v1.0; NVIDIA 2025,
 * "Pretraining Large Language Models with NVFP4", arXiv:2509.25149,
 * sec. 4). */
static void gemm_precision(const struct sim_parallel *p, const struct sim_cluster *c,
			   struct gemm_prec *g)
{
	double peak = sim_precision_peak(p, &c->gpu);

	g->peak = c->gpu.bf16_flops_per_s;
	g->elem = sim_act_bytes(p);
	g->cast = 0;
	if (p->precision == SIM_PRECISION_BF16 || !(peak > 0) ||
	    (p->precision == SIM_PRECISION_FP8 && !(c->gpu.fp8_flops_per_s > 0)))
		return;
	g->peak = peak;
	if (p->precision == SIM_PRECISION_NVFP4) {
		g->elem = 0.5 + 1.0 / 16;
		g->cast = 2.0 + 2.0 * g->elem;
	} else if (p->precision == SIM_PRECISION_MXFP8) {
		g->elem = 1.0 + 1.0 / 32;
		g->cast = 2.0 + 2.0 * g->elem;
	} else {
		g->elem = 1.0;
		g->cast = SIM_FP8_CAST_BYTES;
	}
}

/* What the data-parallel gathers move of a weight, over what it is
 * stored in: with fp8_param_gather and FP8 or MXFP8 GEMMs, the weights'
 * low-precision copy (1 byte, MXFP8 its scales too), over bf16's 2;
 * else 1.  Only pre-training's weights (fine-tuning keeps its own). */
static double param_gather_share(const struct sim_parallel *p, const struct sim_cluster *c)
{
	struct gemm_prec g;

	if (!p->fp8_param_gather || p->ft.method != SIM_FT_NONE ||
	    (p->precision != SIM_PRECISION_FP8 && p->precision != SIM_PRECISION_MXFP8))
		return 1.0;
	gemm_precision(p, c, &g);
	return g.cast > 0 ? g.elem / sim_weight_bytes(p) : 1.0;
}

/* Times of one layer on one GPU for one micro-batch: a dense layer, or
 * with moe an MoE layer (attention, then the routed and shared experts). */
static void layer_time(const struct sim_model *m, const struct sim_parallel *p,
		       const struct sim_cluster *c, const struct sim_shape *sh, int moe,
		       struct layer_time *lt)
{
	int sp = p->seq_parallel && sh->t > 1;
	struct gemm_prec g;
	double peak = c->gpu.bf16_flops_per_s, lpeak, elem;
	double ab = sim_act_bytes(p);
	double hbm = c->gpu.hbm_bytes_per_s > 0 ? c->gpu.hbm_bytes_per_s
						: peak / SIM_DEFAULT_FLOPS_PER_BYTE;
	double tok = sh->tok, h = sh->h, f_l = sh->f / sh->t;
	double qk = sh->dh, v = sh->dv, dh = (qk + v) / 2.0;
	double a_l = sh->a_l, kv_l = sh->kv_l;
	double ghbm = sim_gemm_hbm(&c->gpu, hbm);
	double gemm, attn_f, attn_b, attn_re, elt_bytes, elt_f, host, hl = host_layer_s(c);
	double cast_f, cast_b, mlp_elems, extra_f = 0, module_re = 0;
	double moe_host = 0, bias_bytes = 0, eager_f = 0, eager_b = 0, clamp_f = 0, rope_el;
	unsigned rc_mods = p->recompute == SIM_RECOMPUTE_SELECTIVE ? p->recompute_modules : 0;
	double bh = sh->b * a_l, dh50 = c->gpu.gemm_dim_half;
	int swiglu = m->mlp == SIM_MLP_SWIGLU, ncoll;
	double up = swiglu ? 2.0 : 1.0;
	struct sim_link tl, cl;

	gemm_precision(p, c, &g);
	lpeak = g.peak;
	elem = g.elem;
	/* The layer's GEMMs, column- then row-parallel over TP ranks
	 * (Shoeybi et al. 2019, sec. 3): the attention's projections, its
	 * output projection, the MLP.  MLA (DeepSeek-V2, sec. 2.1) projects
	 * queries and keys/values down to their latents on every TP rank
	 * (the down-projections are not split) and up to the local heads.
	 * cast_f and cast_b sum the elements of the GEMMs' inputs forward
	 * and of their output gradients backward, for the quantization of a
	 * low precision. */
	if (m->kv_lora_rank > 0) {
		double ql = m->q_lora_rank, kl = m->kv_lora_rank, rope = m->qk_rope_dim;
		double kvw = a_l * (m->qk_nope_dim + v);

		double up_kv = sim_gemm_time_s(1, tok, kvw, kl, elem, dh50, lpeak, ghbm);
		double up_q = ql > 0 ? sim_gemm_time_s(1, tok, a_l * qk, ql, elem, dh50, lpeak, ghbm) : 0;

		gemm = sim_gemm_time_s(1, tok, kl + rope, h, elem, dh50, lpeak, ghbm) + up_kv;
		cast_f = tok * (h + kl);
		cast_b = tok * (kl + rope + kvw);
		/* mla_up_proj recomputed: the up-projections run again in the
		 * backward */
		if (rc_mods & SIM_RECOMPUTE_MLA_UP_PROJ)
			module_re += up_kv + up_q;
		if (ql > 0) {
			gemm += sim_gemm_time_s(1, tok, ql, h, elem, dh50, lpeak, ghbm) + up_q;
			cast_f += tok * ql;
			cast_b += tok * (ql + a_l * qk);
		} else {
			gemm += sim_gemm_time_s(1, tok, a_l * qk, h, elem, dh50, lpeak, ghbm);
			cast_b += tok * a_l * qk;
		}
	} else {
		gemm = sim_gemm_time_s(1, tok, a_l * qk + kv_l * (qk + v), h, elem, dh50, lpeak, ghbm);
		cast_f = tok * h;
		cast_b = tok * (a_l * qk + kv_l * (qk + v));
	}
	gemm += sim_gemm_time_s(1, tok, h, a_l * v, elem, dh50, lpeak, ghbm);
	cast_f += tok * a_l * v;
	cast_b += tok * h;

	lt->ep_fwd_s = 0;
	if (!moe) {
		double mlp = sim_gemm_time_s(1, tok, up * f_l, h, elem, dh50, lpeak, ghbm)
			     + sim_gemm_time_s(1, tok, h, f_l, elem, dh50, lpeak, ghbm);

		gemm += mlp;
		cast_f += tok * (h + f_l);
		cast_b += tok * (up * f_l + h);
		mlp_elems = tok * f_l;
		/* the dense MLP recomputed whole: its GEMMs and activation */
		if (rc_mods & SIM_RECOMPUTE_MLP)
			module_re += mlp + hbm_time_s((swiglu ? 6.0 : 4.0) * mlp_elems * ab / 2.0, hbm, 1);
	} else {
		/* Each rank routes its tokens (split over the TP ranks:
		 * Megatron-Core's MoE layer runs sequence-parallel) to top_k
		 * experts; the ep ranks of an expert group hold experts / ep
		 * each, and the etp ranks of one split each expert's width, so
		 * an expert gets tokens x top_k x ep x etp / experts rows, the
		 * busiest rank moe_imbalance times the mean (Liu et al. 2025,
		 * sec. 3).  Its local experts run as one grouped GEMM per
		 * matrix (Megatron-Core's --moe-grouped-gemm), at the
		 * efficiency the curve gives their small row count. */
		double n = tok / sh->t, k = m->top_k * sim_moe_imbalance(p);
		double local = (double)m->experts / sh->e, w = (double)m->expert_ffn / sh->et;
		double rows = n * k * sh->e * sh->et / m->experts;
		double shared = (double)m->shared_experts *
				(m->shared_ffn > 0 ? m->shared_ffn : m->expert_ffn) / sh->t;
		double copies = n * k, bytes;
		struct sim_link el;

		gemm += sim_gemm_time_s(local, rows, up * w, h, elem, dh50, lpeak, ghbm)
			+ sim_gemm_time_s(local, rows, h, w, elem, dh50, lpeak, ghbm);
		/* looped from the host, the layer's dispatch grows by
		 * SIM_HOST_MOE_LAYER_S (in proportion to a calibrated host) */
		if (sim_moe_gemm_resolve(p, sim_gpu_arch(&c->gpu)) == SIM_MOE_GEMM_LOOP)
			moe_host = SIM_HOST_MOE_LAYER_S / SIM_HOST_LAYER_S;
		cast_f += copies * (h + w);
		cast_b += copies * (up * w + h);
		if (shared > 0) {
			gemm += sim_gemm_time_s(1, tok, up * shared, h, elem, dh50, lpeak, ghbm)
				+ sim_gemm_time_s(1, tok, h, shared, elem, dh50, lpeak, ghbm);
			cast_f += tok * (h + shared);
			cast_b += tok * (up * shared + h);
		}
		mlp_elems = copies * w + tok * shared;
		/* Biased experts (GPT-OSS): cuBLAS's grouped GEMM has no
		 * bias epilogue, so Transformer Engine adds each expert's
		 * bias in a kernel of its own after the GEMM (read and write
		 * the output) and reduces its gradient in another (read it
		 * once) (TransformerEngine #2766, #2885): memory-bound passes
		 * over the first GEMM's output, up x w a copy.  The second's
		 * bias Megatron-Core adds itself, per local expert in fp32
		 * (SIM_EXPERT_BIAS_FWD_BYTES): a few kernels an expert. */
		if (m->linear_bias) {
			bias_bytes = ab * copies * up * w;
			eager_f = hbm_time_s(SIM_EXPERT_BIAS_FWD_BYTES * copies * h, hbm,
					       2 * (int)local + 2);
			eager_b = hbm_time_s(SIM_EXPERT_BIAS_BWD_BYTES * copies * h, hbm,
					       6 * (int)local + 2);
		}
		/* moe_act recomputed: the experts' activation runs again */
		if (rc_mods & SIM_RECOMPUTE_MOE_ACT)
			module_re += hbm_time_s((swiglu ? 6.0 : 4.0) * copies * w * ab / 2.0, hbm, 1);
		/* The router's logits (a bf16 GEMM to one logit per expert),
		 * its softmax and top-k over fp32 logits (write, read, write,
		 * read: 16 bytes a logit), the permutation of the tokens into
		 * expert order and back, which reads each token and writes its
		 * copies, then reads the copies and writes their weighted sum
		 * (Megatron-Core's fused permute/unpermute): memory-bound. */
		extra_f = sim_gemm_time_s(1, n, m->experts, h, ab, dh50, peak, ghbm)
			  + hbm_time_s(16.0 * n * m->experts + 2.0 * ab * h * (n + copies), hbm, 4);
		/* Dispatch and combine: each rank sends its copies to the
		 * experts' ranks and gets them back (sim_dispatch_s), and with
		 * etp > 1 the expert group's tokens are gathered to and
		 * scattered from each width slice. */
		bytes = ab * copies * h;
		lt->ep_fwd_s = 2.0 * sim_dispatch_s(c, n, ab * h, k, sh->e, sh->et, p->ep_flex,
						    m->router_groups, m->router_group_topk);
		if (sh->et > 1) {
			sim_group_link(c, sh->et, 1, &el);
			lt->ep_fwd_s += 2.0 * sim_allgather_s(bytes * sh->et, sh->et, &el);
		}
	}

	if (c->gpu.attn_flops_per_s > 0) {
		/* a calibrated device: its own attention's measured rate, for
		 * the flash FLOP count, flash or not (the executor recomputes
		 * the probabilities either way) */
		attn_f = window_share(m) * sim_attn_flops(bh, sh->sl, sh->s, dh) /
			 c->gpu.attn_flops_per_s;
		attn_b = SIM_ATTN_BWD * attn_f;
		attn_re = p->flash ? 0 : attn_f;
	} else if (p->flash && p->attn_kernel == SIM_ATTN_FA1) {
		attn_f = window_share(m) *
			 sim_flash_attn_s(sh->b, a_l, kv_l, sh->sl, sh->s, dh, ab, dh50,
					  peak, hbm);
		attn_b = SIM_ATTN_BWD * attn_f;
		attn_re = 0;
	} else if (p->flash) {
		/* the kernel generation the plan names, at its published speed
		 * on this architecture (sim_internal.h); bf16 at fp8 too, as
		 * Transformer Engine keeps attention in bf16 */
		enum sim_arch arch = sim_gpu_arch(&c->gpu);

		sim_attn_kernel_time_s(sim_attn_kernel_resolve(p->attn_kernel, arch), arch, sh->b,
				       a_l, sh->sl, sh->s, dh, peak, &attn_f, &attn_b);
		attn_f *= window_time_share(m, sh->sl);
		attn_b *= window_time_share(m, sh->sl);
		attn_re = 0;
	} else {
		/* Megatron-LM's unfused path: the s x s scores are written,
		 * scaled, masked, soft-maxed and dropped out in HBM (9 bytes per
		 * score forward: fused softmax reads 2 writes 2, dropout reads 2
		 * writes 2 and a 1-byte mask), causal or not; wider elements
		 * scale it. */
		double scores = bh * sh->sl * sh->s * ab / 2.0;
		double products = sim_gemm_time_s(bh, sh->sl, sh->s, qk, ab, dh50, peak, ghbm)
				  + sim_gemm_time_s(bh, sh->sl, v, sh->s, ab, dh50, peak, ghbm);

		attn_f = products + hbm_time_s(SIM_SOFTMAX_FWD_BYTES * scores, hbm, 2);
		attn_b = 2.0 * products + hbm_time_s(SIM_SOFTMAX_BWD_BYTES * scores, hbm, 2);
		attn_re = attn_f;
	}

	/* Element-wise work per token and hidden unit, forward
	 * (SIM_ELT_BYTES): two norms and two fused bias-dropout-residual adds.
	 * Without sequence parallelism every TP rank repeats it on all tokens.
	 * Backward moves SIM_ELT_BWD times as much.  A calibrated device
	 * (price_gpu.elt_bytes_per_s) runs them at the rate it measured. */
	elt_bytes = sim_layer_elt_bytes(swiglu, tok * h / (sp ? sh->t : 1), mlp_elems, ab);
	/* Experts with a clamped Quick-GEGLU (GPT-OSS) clamp and rejoin its
	 * input's halves outside the fused kernel (SIM_GLU_CLAMP_FWD_BYTES),
	 * again where moe_act is recomputed. */
	if (moe && swiglu && m->glu_act == SIM_GLU_QUICK_GELU && m->glu_clamp > 0) {
		clamp_f = hbm_time_s(SIM_GLU_CLAMP_FWD_BYTES * up * mlp_elems * ab / 2.0, hbm, 3);
		eager_f += clamp_f;
		eager_b += hbm_time_s(SIM_GLU_CLAMP_BWD_BYTES * up * mlp_elems * ab / 2.0, hbm, 6);
		if (rc_mods & SIM_RECOMPUTE_MOE_ACT)
			module_re += clamp_f;
	}
	/* RoPE on the queries and keys, fused or in Megatron-Core's eager
	 * path (sim_rope_fused; SIM_ROPE_FUSED_FWD_BYTES) */
	rope_el = tok * sim_rope_elems(m, a_l, kv_l, qk) * ab / 2.0;
	if (rope_el > 0 && sim_rope_fused(m)) {
		eager_f += hbm_time_s(SIM_ROPE_FUSED_FWD_BYTES * rope_el, hbm, SIM_ROPE_FUSED_KERNELS);
		eager_b += hbm_time_s(SIM_ROPE_FUSED_BWD_BYTES * rope_el, hbm, SIM_ROPE_FUSED_KERNELS);
	} else if (rope_el > 0) {
		eager_f += hbm_time_s(SIM_ROPE_EAGER_FWD_BYTES * rope_el, hbm, SIM_ROPE_EAGER_FWD_KERNELS);
		eager_b += hbm_time_s(SIM_ROPE_EAGER_BWD_BYTES * rope_el, hbm, SIM_ROPE_EAGER_BWD_KERNELS);
	}
	elt_f = hbm_time_s(elt_bytes, c->gpu.elt_bytes_per_s[swiglu] > 0
				      ? c->gpu.elt_bytes_per_s[swiglu] : hbm, SIM_ELT_KERNELS);
	lt->attn_fwd_s = attn_f;
	lt->attn_bwd_s = attn_b;
	lt->fwd_s = gemm + attn_f + elt_f + extra_f + eager_f;
	lt->bwd_s = 2.0 * gemm + attn_b + SIM_ELT_BWD * elt_f + extra_f + eager_b;
	if (bias_bytes > 0) {
		lt->fwd_s += hbm_time_s(2.0 * bias_bytes, hbm, 2);
		lt->bwd_s += hbm_time_s(bias_bytes, hbm, 2);
	}
	/* a low precision: every GEMM operand is quantized first, the
	 * inputs forward and the output gradients backward */
	if (g.cast > 0) {
		lt->fwd_s += hbm_time_s(g.cast * cast_f, hbm, 4);
		lt->bwd_s += hbm_time_s(g.cast * cast_b, hbm, 4);
	}
	sim_ft_layer_time(m, p, c, sh, gemm, &lt->fwd_s, &lt->bwd_s);

	/* Tensor parallelism (Shoeybi et al. 2019; Korthikanti et al. 2022,
	 * sec. 4.2.2): two all-reduces of the s b h activations per layer
	 * forward and two backward, or with sequence parallelism two
	 * all-gathers plus two reduce-scatters, the same bytes on the wire. */
	sim_group_link(c, sh->t, 1, &tl);
	if (sp)
		lt->tp_fwd_s = 2.0 * (2.0 * sim_allgather_s(ab * tok * h, sh->t, &tl));
	else
		lt->tp_fwd_s = 2.0 * sim_allreduce_s(ab * tok * h, sh->t, &tl);
	/* Overlapped with the GEMMs they feed (Wang et al., ASPLOS'23,
	 * decomposition as Transformer Engine's userbuffers do it), only what
	 * outlasts the forward GEMMs shows, plus the contention cost of the
	 * rest (SIM_OVERLAP_SLOWDOWN). */
	if (p->tp_overlap && lt->tp_fwd_s > 0)
		lt->tp_fwd_s = (lt->tp_fwd_s > gemm ? lt->tp_fwd_s - gemm : 0)
			       + SIM_OVERLAP_SLOWDOWN * (lt->tp_fwd_s < gemm ? lt->tp_fwd_s : gemm);

	/* An eager framework dispatches a layer's kernels from the host
	 * (SIM_HOST_LAYER_S forward, twice that backward, SIM_HOST_COLL_S more
	 * for each tensor-parallel collective, SIM_HOST_MOE_LAYER_S more for
	 * looped experts); when the GPU work, communication included, is
	 * shorter, the GPU waits for the host. */
	ncoll = sh->t > 1 ? (sp ? 4 : 2) : 0;
	host = hl * (1.0 + ncoll * SIM_HOST_COLL_S / SIM_HOST_LAYER_S + moe_host);
	if (lt->fwd_s + lt->tp_fwd_s < host)
		lt->fwd_s = host - lt->tp_fwd_s;
	host = hl * (2.0 + ncoll * SIM_HOST_COLL_S / SIM_HOST_LAYER_S + 2.0 * moe_host);
	if (lt->bwd_s + lt->tp_fwd_s < host)
		lt->bwd_s = host - lt->tp_fwd_s;
	/* Looped experts run at the host's pace after it has read their
	 * token counts (a host sync the host cannot run ahead of): what
	 * their launches outlast of their GEMMs adds to the layer. */
	if (p->recompute == SIM_RECOMPUTE_FULL)
		lt->recompute_s = lt->fwd_s;
	else if (p->recompute == SIM_RECOMPUTE_SELECTIVE)
		/* the attention core (when it keeps its scores) and the named
		 * modules; recomputed norms read the residual and write their
		 * output again, 8 bytes a hidden unit of the 22 of
		 * SIM_ELT_BYTES */
		lt->recompute_s = attn_re + module_re
				  + (rc_mods & SIM_RECOMPUTE_LAYERNORM
				     ? hbm_time_s(8.0 * tok * h / (sp ? sh->t : 1) * ab / 2.0, hbm, 2) : 0);
	else
		lt->recompute_s = 0;

	/* Context parallelism (ring attention as in Megatron-LM's CP): every
	 * rank sees all keys and values, (cp-1)/cp of them from the others,
	 * overlapped with its attention; backward moves KV again plus their
	 * gradients. */
	lt->cp_fwd_s = lt->cp_bwd_s = 0;
	if (sh->c > 1) {
		double kv_bytes = ab * sh->b * sh->s * kv_l * (qk + v);
		double xf, xb;

		sim_group_link(c, sh->c, sh->t, &cl);
		xf = sim_allgather_s(kv_bytes, sh->c, &cl);
		xb = 2.0 * xf;
		lt->cp_fwd_s = xf > attn_f ? xf - attn_f : 0;
		lt->cp_bwd_s = xb > attn_b ? xb - attn_b : 0;
	}
}

static void edge_time(const struct sim_model *m, const struct sim_parallel *p,
		      const struct sim_cluster *c, const struct sim_shape *sh, int first,
		      int last, struct edge_time *et)
{
	int sp = p->seq_parallel && sh->t > 1;
	double peak = c->gpu.bf16_flops_per_s;
	double hbm = c->gpu.hbm_bytes_per_s > 0 ? c->gpu.hbm_bytes_per_s
						: peak / SIM_DEFAULT_FLOPS_PER_BYTE;
	double tok = sh->tok, h = sh->h, v_l = sh->V / sh->t, ab = sim_act_bytes(p);
	double act = ab * tok * h, hl = host_layer_s(c), ghbm = sim_gemm_hbm(&c->gpu, hbm);
	struct sim_link tl;

	sim_group_link(c, sh->t, 1, &tl);
	et->compute_s = et->tp_s = 0;
	if (first) {
		/* Embedding lookup and dropout forward (6 bytes per element),
		 * its fp32 gradient accumulation backward (8 bytes); the
		 * vocab-parallel embedding ends in an all-reduce (reduce-scatter
		 * with sequence parallelism). */
		et->compute_s += hbm_time_s(14.0 * tok * h, hbm, 3);
		et->tp_s += sp ? sim_allgather_s(act, sh->t, &tl)
			       : sim_allreduce_s(act, sh->t, &tl);
	}
	if (last) {
		/* Final norm, the LM head GEMM (forward, then two backward) and
		 * the vocab-parallel cross-entropy in fp32 (Megatron-LM's
		 * vocab_parallel_cross_entropy: forward casts the logits to fp32
		 * (read 2, write 4), takes the max (4), subtracts it (8),
		 * exponentiates (8), sums (4) and normalises (8); backward
		 * scales the saved softmax (8) and casts it back (6): 52 bytes
		 * per logit).  Its input is gathered forward and its gradient
		 * reduced backward.  Each MTP module (DeepSeek-V3, sec. 2.2)
		 * adds its projection from 2h to h and one more head and loss;
		 * its layer is one more layer of the stage (stage_time). */
		int heads = 1 + m->mtp_layers;

		et->compute_s += heads * (sim_ft_head_gemms(p) * sim_gemm_time_s(1, tok, v_l, h, ab, c->gpu.gemm_dim_half,
								peak, ghbm)
					  + hbm_time_s(SIM_LOSS_BYTES * tok * v_l + 12.0 * tok * h, hbm, 6));
		if (m->mtp_layers > 0)
			et->compute_s += m->mtp_layers * 3.0 *
					 sim_gemm_time_s(1, tok, h / sh->t, 2.0 * h, ab,
							 c->gpu.gemm_dim_half, peak, ghbm);
		et->tp_s += heads * (sp ? 2.0 * sim_allgather_s(act, sh->t, &tl)
				     : sim_allreduce_s(act, sh->t, &tl));
		/* The head, the loss and their backward dispatch about as many
		 * kernels as a layer's forward and backward: the same host
		 * floor.  vTrain's smallest runs spend 2.1-2.6 ms a micro-batch
		 * outside the layers at TP 8, where the GPU work is a fraction
		 * of that. */
		if (et->compute_s + et->tp_s < 3.0 * hl)
			et->compute_s = 3.0 * hl - et->tp_s;
	}
}

/* One stage's per micro-batch time. */
struct stage_time {
	double compute_s, tp_s, cp_s, ep_s, total_s;
	double fwd_s, bwd_s;   /* compute split, for DP overlap */
	double ep_total_s;     /* EP all-to-all, hidden or not */
};

/* A stage of dense dense layers and moe MoE layers (the MTP modules' on
 * the last stage among them). */
static void stage_time(const struct sim_parallel *p, const struct layer_time *ld,
		       const struct layer_time *lm, const struct edge_time *et, int dense, int moe,
		       struct stage_time *st)
{
	int full = p->recompute == SIM_RECOMPUTE_FULL;

	st->fwd_s = dense * ld->fwd_s;
	st->bwd_s = dense * (ld->bwd_s + ld->recompute_s);
	st->tp_s = dense * ld->tp_fwd_s * (full ? 3.0 : 2.0) + et->tp_s;
	st->cp_s = dense * (ld->cp_fwd_s * (full ? 2.0 : 1.0) + ld->cp_bwd_s);
	st->ep_s = st->ep_total_s = 0;
	if (moe > 0) {
		/* Dispatch and combine forward, again in full recomputation's
		 * extra forward, and their gradients backward.  With ep_overlap
		 * (Megatron-Core's --overlap-moe-expert-parallel-comm, after
		 * DeepSeek-V3's DualPipe, sec. 3.2.1) one micro-batch's all-to-
		 * alls run under another's forward and backward compute: only
		 * what outlasts it shows, plus the contention cost of the rest
		 * (SIM_OVERLAP_SLOWDOWN). */
		double ep = lm->ep_fwd_s * (full ? 3.0 : 2.0);
		double under = lm->fwd_s + lm->bwd_s + lm->recompute_s;

		st->fwd_s += moe * lm->fwd_s;
		st->bwd_s += moe * (lm->bwd_s + lm->recompute_s);
		st->tp_s += moe * lm->tp_fwd_s * (full ? 3.0 : 2.0);
		st->cp_s += moe * (lm->cp_fwd_s * (full ? 2.0 : 1.0) + lm->cp_bwd_s);
		st->ep_total_s = moe * ep;
		if (p->ep_overlap)
			ep = (ep > under ? ep - under : 0)
			     + SIM_OVERLAP_SLOWDOWN * (ep < under ? ep : under);
		st->ep_s = moe * ep;
	}
	st->compute_s = st->fwd_s + st->bwd_s + et->compute_s;
	st->total_s = st->compute_s + st->tp_s + st->cp_s + st->ep_s;
}

/* Times stage i (an MTP module's layer on the last is an MoE layer when
 * the model has experts, else a dense one) and adds it n times to *sum,
 * keeping the slowest in *bot. */
static void stage_add(const struct sim_model *m, const struct sim_parallel *p,
		      const struct sim_shape *sh, const struct layer_time *ld,
		      const struct layer_time *lm, const struct edge_time *et, int i, int n,
		      double *sum, struct stage_time *bot)
{
	int layers = sim_stage_layers(sh, i);
	int mtp = i == sh->p - 1 ? m->mtp_layers : 0;
	struct stage_time cur;

	if (m->experts > 0) {
		int dense = sim_stage_dense_layers(sh, sim_dense_layer_count(m), i);

		stage_time(p, ld, lm, et, dense, layers - dense + mtp, &cur);
	} else {
		stage_time(p, ld, lm, et, layers + mtp, 0, &cur);
	}
	*sum += n * cur.total_s;
	if (cur.total_s > bot->total_s)
		*bot = cur;
}

static double finite_or_zero(double x)
{
	return isfinite(x) ? x : 0;
}

/* Data-parallel communication of one group of parameters on each rank:
 * grad_params of them train (all but a fine-tuning's frozen base), held
 * in weight_bytes (layer_weight_bytes of them one layer's), over n ranks
 * linked by l, under a backward of hidden_b and a forward of hidden_f
 * seconds.  *total is all of it; *exposed what is not hidden (before
 * dp_overlap none and the contention cost). */
static void dp_group_comm(const struct sim_model *m, const struct sim_parallel *p,
			  const struct sim_shape *sh, double grad_params, double weight_bytes,
			  double layer_weight_bytes, double gather, int n,
			  const struct sim_link *dl, double hidden_f, double hidden_b,
			  double *total, double *exposed)
{
	double grad_bytes = sim_grad_bytes(p) * grad_params;
	int M = sh->micro, zero = p->zero;

	*total = *exposed = 0;
	if (n <= 1 || !(grad_params > 0))
		return;
	if (zero <= 2) {
		/* One all-reduce per gradient bucket, each paying the ring's
		 * latency. */
		double b_bytes = sim_grad_bytes(p) * SIM_DP_BUCKET_PARAMS;
		double buckets = ceil(grad_bytes / b_bytes);
		double ar = buckets * sim_allreduce_s(grad_bytes / buckets, n, dl);
		double last_b = sim_allreduce_s(grad_bytes / buckets, n, dl);

		/* Weights gathered narrower than their gradients (gather < 1,
		 * fp8_param_gather): the reduce-scatter at the gradients'
		 * width, the gather at the weights' low-precision one. */
		if (zero >= 1 && gather < 1) {
			ar = buckets * (sim_allgather_s(grad_bytes / buckets, n, dl)
					+ sim_allgather_s(gather * weight_bytes / buckets, n, dl));
			last_b = ar / buckets;
		}
		*total = ar;
		*exposed = ar - hidden_b > last_b ? ar - hidden_b : last_b;
		/* A gather of the updated weights after the optimizer step
		 * leaves only the reduce-scatter under the backward; the
		 * gather, the same bytes, waits. */
		if (zero >= 1 && p->dp_overlap == SIM_DP_OVERLAP_SUMS) {
			double rs = buckets * sim_allgather_s(grad_bytes / buckets, n, dl);
			double last_rs = sim_allgather_s(grad_bytes / buckets, n, dl);
			double ag = gather < 1 ? buckets * sim_allgather_s(gather * weight_bytes / buckets,
									   n, dl) : rs;

			*total = rs + ag;
			*exposed = (rs - hidden_b > last_rs ? rs - hidden_b : last_rs) + ag;
		}
		/* A ZeRO-2 that keeps only its shard of the gradients
		 * reduce-scatters every micro-batch's as its backward ends
		 * (DeepSpeed issue #2252: "gradient reduction is required
		 * after every backward because of gradient partitioning"; the
		 * executor's trainer), each under its own backward but for
		 * its last bucket, the last micro-batch's as above. */
		if (zero == 2 && p->zero2_every_micro_batch && M > 1) {
			double rs = buckets * sim_allgather_s(grad_bytes / buckets, n, dl);
			double last_rs = sim_allgather_s(grad_bytes / buckets, n, dl);

			*total += (M - 1) * rs;
			*exposed += (M - 1) * (rs - hidden_b > last_rs ? rs - hidden_b : last_rs);
		}
	} else if (p->zero3_gather == SIM_ZERO3_TENSOR_SYNC) {
		/* One collective per parameter tensor: each matrix with its
		 * bias and each norm's weight and bias, plus the embedding and
		 * head, gathered in every forward, again in full
		 * recomputation's extra forward and in backward, its gradient
		 * reduce-scattered once.  Each waits for the GPU to finish
		 * before it starts (DeepSpeed PR #1188, 2021: "each all_gather
		 * calls torch.cuda.synchronize()"), so nothing overlaps, and
		 * each pays the ring's n - 1 step latencies plus a copy kernel
		 * per rank (PyTorch's list all_gather and reduce_scatter copy
		 * each rank's part). */
		double per_layer = 2.0 * (m->mlp == SIM_MLP_SWIGLU ? 5.0 : 4.0) + 4.0;
		double tensors = sh->layers_first * per_layer + 4.0;
		double ag = tensors * (sim_allgather_s(gather * weight_bytes / tensors, n, dl)
				       + (n - 1) * SIM_KERNEL_S);
		double scatter = tensors * (sim_allgather_s(grad_bytes / tensors, n, dl)
					    + (n - 1) * SIM_KERNEL_S);
		int gathers = p->recompute == SIM_RECOMPUTE_FULL ? 3 : 2;

		*total = *exposed = M * (gathers * ag + scatter);
	} else {
		/* One collective per transformer block (and one for the
		 * embedding and head), prefetched under the compute: all-gather
		 * forward, all-gather and reduce-scatter backward; one block's
		 * gather is exposed each way. */
		double units = sh->layers_first + 1.0;
		double ag = units * sim_allgather_s(gather * weight_bytes / units, n, dl);
		double rs = units * sim_allgather_s(grad_bytes / units, n, dl);
		double layer_ag = sim_allgather_s(gather * layer_weight_bytes, n, dl);
		double xf = ag - hidden_f, xb = ag + rs - hidden_b;

		*total = M * (2.0 * ag + rs);
		*exposed = M * ((xf > layer_ag ? xf : layer_ag) + (xb > layer_ag ? xb : layer_ag));
	}
}

void sim_step(const struct sim_model *m, const struct sim_parallel *p,
	      const struct sim_cluster *c, struct sim_result *out)
{
	struct sim_shape sh;
	struct layer_time ld, lm;
	struct edge_time e_first, e_last, e_both, e_none;
	struct stage_time bot;
	int M, zero = p->zero, ndp, nd = sim_dense_layer_count(m);
	double sum, params_first, params_last, params_stage, ex_first, ex_last, ex_stage;
	double train_stage;
	double hbm, peak = c->gpu.bf16_flops_per_s;
	double mfu_peak = sim_mfu_peak(&c->gpu);
	double dp_total, dp_exposed, ex_total, ex_exposed, shard, opt_s, gather;
	double model_flops, hw_flops, tokens, step;
	struct sim_link dl, pl;
	struct sim_breakdown *bd = &out->breakdown;
	enum sim_recompute hw_rc;

	memset(out, 0, sizeof(*out));
	sim_shape_init(&sh, m, p);
	M = sh.micro;
	hbm = c->gpu.hbm_bytes_per_s > 0 ? c->gpu.hbm_bytes_per_s
					 : peak / SIM_DEFAULT_FLOPS_PER_BYTE;
	layer_time(m, p, c, &sh, 0, &ld);
	if (m->experts > 0)
		layer_time(m, p, c, &sh, 1, &lm);
	else
		lm = ld;

	/* Stages: first (embedding), middle ones, last (head and MTP
	 * modules); one stage holds both ends when there is no pipeline. */
	if (sh.p == 1) {
		edge_time(m, p, c, &sh, 1, 1, &e_both);
	} else {
		edge_time(m, p, c, &sh, 1, 0, &e_first);
		edge_time(m, p, c, &sh, 0, 1, &e_last);
		edge_time(m, p, c, &sh, 0, 0, &e_none);
	}
	/* Every stage's time, each kind once: the first, the last, the
	 * middle stages that hold dense layers (they lead the model), then
	 * the middle stages of base + 1 layers and those of base. */
	sum = 0;
	memset(&bot, 0, sizeof(bot));
	stage_add(m, p, &sh, &ld, &lm, sh.p == 1 ? &e_both : &e_first, 0, 1, &sum, &bot);
	if (sh.p > 1) {
		int i = 1, mid_long, mid_short;

		stage_add(m, p, &sh, &ld, &lm, &e_last, sh.p - 1, 1, &sum, &bot);
		while (m->experts > 0 && nd > 0 && i < sh.p - 1 &&
		       sim_stage_dense_layers(&sh, nd, i) > 0)
			stage_add(m, p, &sh, &ld, &lm, &e_none, i++, 1, &sum, &bot);
		mid_long = sh.mid_stages_long - i + 1 > 0 ? sh.mid_stages_long - i + 1 : 0;
		mid_short = sh.p - 1 - i - mid_long;
		if (mid_long > 0)
			stage_add(m, p, &sh, &ld, &lm, &e_none, i, mid_long, &sum, &bot);
		if (mid_short > 0)
			stage_add(m, p, &sh, &ld, &lm, &e_none, sh.p - 2, mid_short, &sum, &bot);
	}

	/* Pipeline schedule (Narayanan et al., SC'21, sec. 2.2): m micro-
	 * batches through p stages take (m - 1) t_max + sum_i t_i, so the
	 * bubble is (p - 1)/m of the ideal time for equal stages, (p-1)/(v m)
	 * with v interleaved chunks per GPU. */
	bd->compute_s = M * bot.compute_s;
	bd->tp_comm_s = M * bot.tp_s;
	bd->cp_comm_s = M * bot.cp_s;
	bd->ep_comm_s = M * bot.ep_s;
	bd->ep_comm_total_s = M * bot.ep_total_s;
	bd->pp_bubble_s = (sum - bot.total_s) / sh.v;

	/* Point-to-point sends between stages: one activation forward and one
	 * gradient backward per micro-batch and chunk, scattered over the TP
	 * ranks (sec. 4.1's scatter/gather optimisation), each a blocking
	 * exchange in Megatron's 1F1B; and the pipeline's fill and drain,
	 * priced above as compute alone, wait for one send a hop, p - 1 hops
	 * forward and p - 1 back.  DeepSpeed's pipeline engine
	 * (pp_send_whole) sends the whole activation from every TP rank, and
	 * a stage's send and receive of each run one after the other: four
	 * transfers a micro-batch on its path instead of two exchanges. */
	if (sh.p > 1) {
		double whole = p->pp_send_whole ? 1.0 : 0.0;

		sim_group_link(c, sh.p, sh.t * sh.c * sh.d, &pl);
		bd->pp_comm_s = ((2.0 + 2.0 * whole) * M * sh.v + 2.0 * (sh.p - 1)) *
				sim_p2p_s(sim_act_bytes(p) * sh.tok * sh.h / (whole ? 1 : sh.t), &pl);
	}

	/* Data parallelism over the dp x cp replicas of each weight shard
	 * (context-parallel ranks hold the same weights).  Ring all-reduce of
	 * bf16 gradients for ZeRO-0; ZeRO-1/2 reduce-scatter the gradients
	 * and all-gather the updated weights, the same bytes (Rajbhandari et
	 * al., SC'20, sec. 7.2); both overlap backward except the last bucket,
	 * unless the plan's dp_overlap says the trainer leaves the gather, or
	 * everything, after the backward.
	 * With zero2_every_micro_batch ZeRO-2 reduce-scatters every micro-
	 * batch's gradients, not the step's sum.
	 * ZeRO-3 gathers weights forward and backward and reduce-scatters
	 * gradients in every micro-batch (1.5x the bytes), by prefetched
	 * blocks or tensor by tensor as the plan's zero3_gather says.
	 * Gradients are reduced at their stored width (sim_grad_bytes);
	 * weights gathered at theirs, or with fp8_param_gather at their FP8
	 * copy's (param_gather_share).
	 * The routed experts' gradients are reduced over the expert data-
	 * parallel ranks instead (Liu et al. 2025, sec. 3), under what of
	 * the backward the rest leaves. */
	ndp = sh.d * sh.c;
	sim_stage_params(m, &sh, sh.layers_first, sim_stage_dense_layers(&sh, nd, 0), 1, sh.p == 1,
			 &params_first, &ex_first);
	if (sh.p > 1)
		sim_stage_params(m, &sh, sh.layers_last, sim_stage_dense_layers(&sh, nd, sh.p - 1), 0,
				 1, &params_last, &ex_last);
	else
		params_last = params_first, ex_last = ex_first;
	params_stage = params_first > params_last ? params_first : params_last;
	ex_stage = ex_first > ex_last ? ex_first : ex_last;
	dp_total = dp_exposed = ex_total = ex_exposed = 0;
	train_stage = sim_ft_stage_trainable(m, p, &sh, params_stage);
	gather = param_gather_share(p, c);
	if (ndp > 1) {
		/* one DP x CP group's ranks lie tp apart: TP innermost, then
		 * CP, DP, PP (Megatron-Core's "tp-cp-ep-dp-pp", DeepSpeed's
		 * pipe-data-model topology) */
		sim_group_link(c, ndp, sh.t, &dl);
		dp_group_comm(m, p, &sh, train_stage, sim_ft_stage_weight_bytes(m, p, &sh, params_stage),
			      nd > 0 ? sim_ft_layer_weight_bytes(m, p, &sh)
				     : sim_weight_bytes(p) * sh.moe_rest_params / sh.t,
			      gather, ndp, &dl, bot.fwd_s, bot.bwd_s, &dp_total, &dp_exposed);
	}
	if (sh.ed > 1 && ex_stage > 0) {
		/* expert data-parallel ranks lie ep x etp apart */
		double left_f = bot.fwd_s - dp_total > 0 ? bot.fwd_s - dp_total : 0;
		double left_b = bot.bwd_s - dp_total > 0 ? bot.bwd_s - dp_total : 0;

		sim_group_link(c, sh.ed, sh.e * sh.et, &dl);
		dp_group_comm(m, p, &sh, ex_stage, sim_weight_bytes(p) * ex_stage,
			      sim_weight_bytes(p) * sh.routed_params / ((double)sh.e * sh.et), gather,
			      sh.ed, &dl, left_f, left_b, &ex_total, &ex_exposed);
		dp_total += ex_total;
		dp_exposed += ex_exposed;
	}
	if (p->dp_overlap == SIM_DP_OVERLAP_NONE)
		dp_exposed = dp_total;
	/* Communication hidden under compute still slows it: NCCL's kernels
	 * take SMs and memory bandwidth from the GEMMs they overlap (Lee et
	 * al., arXiv:2507.03114, 2025: 18.9% slower compute on average on
	 * A100 and H100 while a collective runs). */
	dp_exposed += SIM_OVERLAP_SLOWDOWN * (dp_total - dp_exposed);
	bd->dp_comm_total_s = dp_total;
	bd->dp_comm_exposed_s = dp_exposed;

	/* The optimizer step is memory-bound (sim_optimizer_bytes over the
	 * local shard and the local gradients), at the HBM rate, or at the
	 * rate a calibration of this device measured for it; the experts'
	 * states shard over the expert data-parallel ranks. */
	shard = train_stage / (zero >= 1 ? ndp : 1) + ex_stage / (zero >= 1 ? sh.ed : 1);
	opt_s = hbm_time_s(sim_optimizer_bytes(p, shard,
					       train_stage / (zero >= 2 ? ndp : 1)
					       + ex_stage / (zero >= 2 ? sh.ed : 1)),
			   c->gpu.opt_bytes_per_s > 0 ? c->gpu.opt_bytes_per_s : hbm,
			   SIM_OPT_KERNELS);
	bd->optimizer_s = opt_s;
	sim_ft_offload_time(m, p, c, &sh, train_stage, params_stage, bot.fwd_s, bot.bwd_s, bd);

	step = bd->compute_s + bd->tp_comm_s + bd->cp_comm_s + bd->ep_comm_s + bd->pp_bubble_s
	       + bd->pp_comm_s + bd->dp_comm_exposed_s + bd->optimizer_s
	       + bd->offload_s;

	/* Model FLOPs count no recomputation (MFU); hardware FLOPs count what
	 * is recomputed (HFU).  Flash attention's own recomputation in its
	 * backward is not counted, and selective recomputation with flash
	 * recomputes nothing more. */
	hw_rc = p->recompute;
	if (hw_rc == SIM_RECOMPUTE_SELECTIVE && p->flash)
		hw_rc = SIM_RECOMPUTE_NONE;
	model_flops = sim_finetune_train_flops(m, &p->ft, p->gbs, SIM_RECOMPUTE_NONE);
	hw_flops = hw_rc == SIM_RECOMPUTE_NONE ? model_flops : sim_finetune_train_flops(m, &p->ft, p->gbs, hw_rc);
	tokens = (double)p->gbs * m->seq;

	out->step_time_s = finite_or_zero(step);
	if (out->step_time_s > 0) {
		out->tokens_per_s = finite_or_zero(tokens / step);
		out->model_flops_per_gpu_s = finite_or_zero(model_flops / step / sh.gpus);
		out->hardware_flops_per_gpu_s = finite_or_zero(hw_flops / step / sh.gpus);
		out->mfu = finite_or_zero(out->model_flops_per_gpu_s / mfu_peak);
		out->hfu = finite_or_zero(out->hardware_flops_per_gpu_s / mfu_peak);
	}
	out->grad_accum = M;
	{
		struct gemm_prec g;

		gemm_precision(p, c, &g);
		sh.lin_bytes = g.elem;
	}
	sim_memory_estimate(m, p, c, &sh, &out->memory);
	out->fits = out->memory.total <= out->memory.capacity && sim_ft_host_fits(p, &out->memory);
}

/* ---- pieces for the event-driven replay (sim_event.c) ---------------- */

void sim_parts(const struct sim_model *m, const struct sim_parallel *p,
	       const struct sim_cluster *c, struct sim_parts *out)
{
	struct sim_shape sh;
	struct layer_time lt, lm;
	struct edge_time first, last;
	struct stage_time st;
	struct edge_time none = { 0, 0 };

	sim_shape_init(&sh, m, p);
	layer_time(m, p, c, &sh, 0, &lt);
	if (m->experts > 0)
		layer_time(m, p, c, &sh, 1, &lm);
	else
		lm = lt;
	edge_time(m, p, c, &sh, 1, 0, &first);
	edge_time(m, p, c, &sh, 0, 1, &last);
	out->layer_fwd_s = lt.fwd_s;
	out->layer_bwd_s = lt.bwd_s;
	out->layer_recompute_s = lt.recompute_s;
	out->layer_attn_fwd_s = lt.attn_fwd_s;
	out->layer_attn_bwd_s = lt.attn_bwd_s;
	out->layer_tp_s = lt.tp_fwd_s;
	out->layer_cp_fwd_s = lt.cp_fwd_s;
	out->layer_cp_bwd_s = lt.cp_bwd_s;
	out->moe_layer_fwd_s = lm.fwd_s;
	out->moe_layer_bwd_s = lm.bwd_s;
	out->moe_layer_recompute_s = lm.recompute_s;
	out->moe_layer_attn_bwd_s = lm.attn_bwd_s;
	/* the EP all-to-all one MoE layer exposes in a micro-batch */
	stage_time(p, &lt, &lm, &none, 0, 1, &st);
	out->moe_layer_ep_s = st.ep_s;
	out->embed_compute_s = first.compute_s;
	out->embed_tp_s = first.tp_s;
	out->head_compute_s = last.compute_s;
	out->head_tp_s = last.tp_s;
}
