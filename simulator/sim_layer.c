/*
 * sim_layer.c - one layer's time on one GPU for one micro-batch, and a
 * stage's edges' (the embedding; the final norm, LM head and loss):
 * every GEMM at its own shape and precision, the attention core,
 * element-wise work at HBM bandwidth, the host's dispatch floor, and the
 * tensor-, context- and expert-parallel communication each pass exposes.
 * sim.c assembles these into stages, the schedule and the step.
 *
 * It calls down only: sim_cost.c, sim_comm.c, sim_shape.c and
 * sim_finetune.c.
 */
#include <math.h>
#include <string.h>

#include "sim_layer.h"

/* ---- kernels ------------------------------------------------------- */

double sim_hbm_time_s(double bytes, double hbm, int kernels)
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

/* Whether a group of n ranks spaced stride apart leaves the NVLink
 * domain, its traffic on the nodes' network links. */
int sim_group_crosses(const struct sim_cluster *c, int n, int stride)
{
	return n > 1 && (double)n * stride > sim_cluster_domain(c);
}

/* The cluster's host dispatch time per layer forward (sim.h). */
static double host_layer_s(const struct sim_cluster *c)
{
	return c->host_layer_s > 0 ? c->host_layer_s
	       : c->host_layer_s < 0 ? 0 : SIM_HOST_LAYER_S;
}

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
void sim_gemm_precision(const struct sim_parallel *p, const struct sim_cluster *c,
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
double sim_param_gather_share(const struct sim_parallel *p, const struct sim_cluster *c)
{
	struct gemm_prec g;

	if (!p->fp8_param_gather || p->ft.method != SIM_FT_NONE ||
	    (p->precision != SIM_PRECISION_FP8 && p->precision != SIM_PRECISION_MXFP8))
		return 1.0;
	sim_gemm_precision(p, c, &g);
	return g.cast > 0 ? g.elem / sim_weight_bytes(p) : 1.0;
}

/* Times of one layer on one GPU for one micro-batch: a dense layer, or
 * with moe an MoE layer (attention, then the routed and shared experts). */
void sim_layer_time(const struct sim_model *m, const struct sim_parallel *p,
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

	sim_gemm_precision(p, c, &g);
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
	lt->ep_net = sim_group_crosses(c, sh->e, sh->et);
	lt->tp_net = sim_group_crosses(c, sh->t, 1);
	if (!moe) {
		double mlp = sim_gemm_time_s(1, tok, up * f_l, h, elem, dh50, lpeak, ghbm)
			     + sim_gemm_time_s(1, tok, h, f_l, elem, dh50, lpeak, ghbm);

		gemm += mlp;
		cast_f += tok * (h + f_l);
		cast_b += tok * (up * f_l + h);
		mlp_elems = tok * f_l;
		/* the dense MLP recomputed whole: its GEMMs and activation */
		if (rc_mods & SIM_RECOMPUTE_MLP)
			module_re += mlp + sim_hbm_time_s((swiglu ? 6.0 : 4.0) * mlp_elems * ab / 2.0, hbm, 1);
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
			eager_f = sim_hbm_time_s(SIM_EXPERT_BIAS_FWD_BYTES * copies * h, hbm,
					       2 * (int)local + 2);
			eager_b = sim_hbm_time_s(SIM_EXPERT_BIAS_BWD_BYTES * copies * h, hbm,
					       6 * (int)local + 2);
		}
		/* moe_act recomputed: the experts' activation runs again */
		if (rc_mods & SIM_RECOMPUTE_MOE_ACT)
			module_re += sim_hbm_time_s((swiglu ? 6.0 : 4.0) * copies * w * ab / 2.0, hbm, 1);
		/* The router's logits (a bf16 GEMM to one logit per expert),
		 * its softmax and top-k over fp32 logits (write, read, write,
		 * read: 16 bytes a logit), the permutation of the tokens into
		 * expert order and back, which reads each token and writes its
		 * copies, then reads the copies and writes their weighted sum
		 * (Megatron-Core's fused permute/unpermute): memory-bound. */
		extra_f = sim_gemm_time_s(1, n, m->experts, h, ab, dh50, peak, ghbm)
			  + sim_hbm_time_s(16.0 * n * m->experts + 2.0 * ab * h * (n + copies), hbm, 4);
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

		attn_f = products + sim_hbm_time_s(SIM_SOFTMAX_FWD_BYTES * scores, hbm, 2);
		attn_b = 2.0 * products + sim_hbm_time_s(SIM_SOFTMAX_BWD_BYTES * scores, hbm, 2);
		attn_re = attn_f;
	}

	/* Element-wise work per token and hidden unit, forward
	 * (SIM_ELT_BYTES): two norms and two fused bias-dropout-residual adds.
	 * Without sequence parallelism every TP rank repeats it on all tokens.
	 * Backward moves SIM_ELT_BWD times as much.  A calibrated device
	 * (price_gpu.elt_bytes_per_s) runs them at the rate it measured, and
	 * where it timed the MLP activation apart (act_bytes_per_s), the
	 * activation, split over the TP ranks, at its own rate and the norms
	 * and adds, which every TP rank repeats, at theirs. */
	elt_bytes = sim_layer_elt_bytes(swiglu, tok * h / (sp ? sh->t : 1), mlp_elems, ab);
	/* Experts with a clamped Quick-GEGLU (GPT-OSS) clamp and rejoin its
	 * input's halves outside the fused kernel (SIM_GLU_CLAMP_FWD_BYTES),
	 * again where moe_act is recomputed. */
	if (moe && swiglu && m->glu_act == SIM_GLU_QUICK_GELU && m->glu_clamp > 0) {
		clamp_f = sim_hbm_time_s(SIM_GLU_CLAMP_FWD_BYTES * up * mlp_elems * ab / 2.0, hbm, 3);
		eager_f += clamp_f;
		eager_b += sim_hbm_time_s(SIM_GLU_CLAMP_BWD_BYTES * up * mlp_elems * ab / 2.0, hbm, 6);
		if (rc_mods & SIM_RECOMPUTE_MOE_ACT)
			module_re += clamp_f;
	}
	/* RoPE on the queries and keys, fused or in Megatron-Core's eager
	 * path (sim_rope_fused; SIM_ROPE_FUSED_FWD_BYTES) */
	rope_el = tok * sim_rope_elems(m, a_l, kv_l, qk) * ab / 2.0;
	if (rope_el > 0 && sim_rope_fused(m)) {
		eager_f += sim_hbm_time_s(SIM_ROPE_FUSED_FWD_BYTES * rope_el, hbm, SIM_ROPE_FUSED_KERNELS);
		eager_b += sim_hbm_time_s(SIM_ROPE_FUSED_BWD_BYTES * rope_el, hbm, SIM_ROPE_FUSED_KERNELS);
	} else if (rope_el > 0) {
		eager_f += sim_hbm_time_s(SIM_ROPE_EAGER_FWD_BYTES * rope_el, hbm, SIM_ROPE_EAGER_FWD_KERNELS);
		eager_b += sim_hbm_time_s(SIM_ROPE_EAGER_BWD_BYTES * rope_el, hbm, SIM_ROPE_EAGER_BWD_KERNELS);
	}
	elt_f = sim_hbm_time_s(elt_bytes, c->gpu.elt_bytes_per_s[swiglu] > 0
				      ? c->gpu.elt_bytes_per_s[swiglu] : hbm, SIM_ELT_KERNELS);
	if (c->gpu.act_bytes_per_s[swiglu] > 0 && c->gpu.elt_bytes_per_s[swiglu] > 0) {
		double act_bytes = sim_layer_act_bytes(swiglu, mlp_elems, ab);

		elt_f = sim_hbm_time_s(elt_bytes - act_bytes, c->gpu.elt_bytes_per_s[swiglu],
				   SIM_ELT_KERNELS - 1)
			+ sim_hbm_time_s(act_bytes, c->gpu.act_bytes_per_s[swiglu], 1);
	}
	lt->attn_fwd_s = attn_f;
	lt->attn_bwd_s = attn_b;
	lt->fwd_s = gemm + attn_f + elt_f + extra_f + eager_f;
	lt->bwd_s = 2.0 * gemm + attn_b + SIM_ELT_BWD * elt_f + extra_f + eager_b;
	if (bias_bytes > 0) {
		lt->fwd_s += sim_hbm_time_s(2.0 * bias_bytes, hbm, 2);
		lt->bwd_s += sim_hbm_time_s(bias_bytes, hbm, 2);
	}
	/* a low precision: every GEMM operand is quantized first, the
	 * inputs forward and the output gradients backward */
	if (g.cast > 0) {
		lt->fwd_s += sim_hbm_time_s(g.cast * cast_f, hbm, 4);
		lt->bwd_s += sim_hbm_time_s(g.cast * cast_b, hbm, 4);
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
	lt->tp_all_fwd_s = lt->tp_fwd_s;
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
				     ? sim_hbm_time_s(8.0 * tok * h / (sp ? sh->t : 1) * ab / 2.0, hbm, 2) : 0);
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

void sim_edge_time(const struct sim_model *m, const struct sim_parallel *p,
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
	et->compute_s = et->tp_s = et->bwd_s = et->tp_bwd_s = 0;
	if (first) {
		/* Embedding lookup and dropout forward (6 bytes per element),
		 * its fp32 gradient accumulation backward (8 bytes); the
		 * vocab-parallel embedding ends in an all-reduce (reduce-scatter
		 * with sequence parallelism). */
		et->compute_s += sim_hbm_time_s(14.0 * tok * h, hbm, 3);
		et->bwd_s = et->compute_s * 8.0 / 14.0;
		et->tp_s += sp ? sim_allgather_s(act, sh->t, &tl)
			       : sim_allreduce_s(act, sh->t, &tl);
	}
	if (last) {
		/* Final norm, LM head GEMM (forward, two backward), the loss as
		 * the plan's trainer runs it (sim_loss_cost); input gathered
		 * forward, gradient reduced backward.  An MTP module (DeepSeek-
		 * V3, sec. 2.2) adds a 2h-to-h projection, a head and a loss;
		 * its layer is one more of the stage (stage_time). */
		int heads = 1 + m->mtp_layers;
		double before = et->compute_s, tp_before = et->tp_s;
		double loss_b = sim_loss_cost(p->loss)->bytes;

		et->compute_s += heads * (sim_ft_head_gemms(p) * sim_gemm_time_s(1, tok, v_l, h, ab, c->gpu.gemm_dim_half,
								peak, ghbm)
					  + sim_hbm_time_s(loss_b * tok * v_l + 12.0 * tok * h, hbm, 6));
		if (m->mtp_layers > 0)
			et->compute_s += m->mtp_layers * 3.0 *
					 sim_gemm_time_s(1, tok, h / sh->t, 2.0 * h, ab,
							 c->gpu.gemm_dim_half, peak, ghbm);
		et->tp_s += heads * (sp ? 2.0 * sim_allgather_s(act, sh->t, &tl)
				     : sim_allreduce_s(act, sh->t, &tl));
		/* Head and loss dispatch about a layer's kernels: the same host
		 * floor (vTrain's smallest runs spend 2.1-2.6 ms a micro-batch
		 * outside the layers at TP 8, a fraction of it GPU work). */
		if (et->compute_s + et->tp_s < 3.0 * hl)
			et->compute_s = 3.0 * hl - et->tp_s;
		/* two of the head's three GEMMs, half its collectives */
		et->bwd_s += (et->compute_s - before) * 2.0 / 3.0;
		et->tp_bwd_s = (et->tp_s - tp_before) / 2.0;
	}
}
