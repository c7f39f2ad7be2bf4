/*
 * sim_cost.c - the primitives the step-time model (sim.c), the memory
 * model (sim_memory.c) and the fine-tuning model (sim_finetune.c) all
 * price with: one kernel's time on the GPU's efficiency curve, one GEMM's,
 * attention's FLOPs and its fused kernels' times, element-wise and
 * fp8-cast bytes, the GPU's architecture and peak for a precision, the
 * bytes of a group of parameters' training states, and the bytes an
 * optimizer step keeps and moves a parameter.
 *
 * It is the bottom of the simulator: it calls no other file of it.
 */
#include <stdio.h>
#include <string.h>

#include "sim_cost.h"

double sim_gemm_dim_half(double dim_half)
{
	return dim_half > 0 ? dim_half : SIM_GEMM_DIM_HALF;
}

double sim_kernel_time_s(double flops, double bytes, double dmin, double dim_half,
			 double peak, double hbm)
{
	double eff = SIM_GEMM_EFF_MAX * dmin / (dmin + sim_gemm_dim_half(dim_half));

	return flops / (peak * eff) + bytes / (hbm * SIM_HBM_EFF) + SIM_KERNEL_S;
}

double sim_gemm_time_s(double batch, double m, double n, double k,
		       double elem, double dim_half, double peak, double hbm)
{
	double dmin = m < n ? m : n;
	double flops = 2.0 * m * n * k;
	double bytes = elem * (m * k + k * n) + 2.0 * m * n;

	if (k < dmin)
		dmin = k;
	/* Tiles re-read their operands: a GEMM moves at least
	 * flops / SIM_GEMM_TILE_FLOPS_PER_BYTE bytes at 2-byte operands, half
	 * that at 1-byte (fp8) ones. */
	if (bytes < flops * elem / (2.0 * SIM_GEMM_TILE_FLOPS_PER_BYTE))
		bytes = flops * elem / (2.0 * SIM_GEMM_TILE_FLOPS_PER_BYTE);
	return sim_kernel_time_s(batch * flops, batch * bytes, dmin, dim_half, peak, hbm);
}

void sim_model_states(double params, int zero, int dp, double weight_bytes,
		      double grad_bytes, double opt_bytes, struct sim_memory *out)
{
	double n = dp > 1 ? dp : 1;
	double w = weight_bytes > 0 ? weight_bytes : 2.0;

	/* Rajbhandari et al., SC'20, sec. 3.1 and 5: mixed-precision Adam
	 * keeps 2 (fp16/bf16 weights) + 2 (gradients) + K = 12 (fp32 master
	 * weights, momentum, variance) bytes per parameter.  Stage 1 shards
	 * the K bytes over the Nd data-parallel ranks (P_os), stage 2 also
	 * the gradients (P_os+g), stage 3 also the weights (P_os+g+p).
	 * grad_bytes replaces the 2 of the gradients (4 where they are
	 * accumulated in fp32: Megatron-LM's distributed-optimizer notes
	 * count 18 bytes a parameter for bf16 weights with fp32 gradients).
	 * Weights of 4 bytes or more are their own master copy: K = 8
	 * (momentum and variance), 4 + 4 + 8 = 16 bytes for an fp32 trainer.
	 * opt_bytes replaces K where the optimizer keeps other states
	 * (sim_opt_state_bytes). */
	out->weights = w * params / (zero >= 3 ? n : 1);
	out->grads = (grad_bytes > 0 ? grad_bytes : 2.0) * params / (zero >= 2 ? n : 1);
	out->optimizer = (opt_bytes > 0 ? opt_bytes : w >= 4 ? 8.0 : 12.0) * params
			 / (zero >= 1 ? n : 1);
}

int sim_opt_has_master(const struct sim_parallel *p)
{
	return sim_weight_bytes(p) < 4 &&
	       (p->opt_states == SIM_OPT_FP32 || p->opt_states == SIM_OPT_BF16);
}

double sim_opt_state_bytes(const struct sim_parallel *p)
{
	int own = sim_weight_bytes(p) >= 4; /* fp32 weights: their own master */

	switch (p->opt_states) {
	case SIM_OPT_BF16:
		return own ? 4.0 : 8.0;
	case SIM_OPT_BF16_NO_MASTER:
		return 4.0;
	case SIM_OPT_INT8_NO_MASTER:
		return 2.0;
	case SIM_OPT_FP32:
	default:
		return own ? 8.0 : 12.0;
	}
}

double sim_optimizer_bytes(const struct sim_parallel *p, double own_params, double grad_params)
{
	double s = sim_opt_state_bytes(p), w = sim_weight_bytes(p);
	double per = sim_opt_has_master(p) ? 2.0 * s + 4.0 + 6.0
			: 2.0 * (s + w) + (w >= 4 ? 4.0 : sim_grad_bytes(p));

	return per * own_params + 12.0 * grad_params;
}

double sim_mfu_peak(const struct price_gpu *g)
{
	return g->mfu_flops_per_s > 0 ? g->mfu_flops_per_s : g->bf16_flops_per_s;
}
double sim_precision_peak(const struct sim_parallel *p, const struct price_gpu *g)
{
	switch (p->precision) {
	case SIM_PRECISION_FP8:
		return g->fp8_flops_per_s > 0 ? g->fp8_flops_per_s : g->bf16_flops_per_s;
	case SIM_PRECISION_MXFP8:
		/* Blackwell's tensor cores run MXFP8 at their FP8 rate (NVIDIA
		 * Blackwell datasheets list one FP8/FP6 figure) */
		if (g->mxfp8_flops_per_s > 0)
			return g->mxfp8_flops_per_s;
		return sim_gpu_arch(g) == SIM_ARCH_BLACKWELL ? g->fp8_flops_per_s : 0;
	case SIM_PRECISION_NVFP4:
		return g->nvfp4_flops_per_s;
	default:
		return g->bf16_flops_per_s;
	}
}
/* The byte counts are for 2-byte elements; wider ones scale them.  The MLP
 * activation reads and writes each element once (SwiGLU reads two
 * inputs). */
double sim_layer_elt_bytes(int swiglu, double stream, double mlp, double act_bytes)
{
	/* as one sum, so that a device without an activation rate of its own
	 * is priced to the bit as before */
	return (SIM_ELT_BYTES * stream + (swiglu ? 6.0 : 4.0) * mlp) * act_bytes / 2.0;
}

double sim_layer_act_bytes(int swiglu, double mlp, double act_bytes)
{
	return (swiglu ? 6.0 : 4.0) * mlp * act_bytes / 2.0;
}

/* Per logit, forward and backward, from each implementation's kernels
 * (fp32 4 bytes, bf16 2):
 * - Megatron-LM's vocab_parallel_cross_entropy (megatron/core/
 *   tensor_parallel/cross_entropy.py): forward casts the logits to fp32
 *   (read 2, write 4), takes the max (4), subtracts it in place (8),
 *   exponentiates in place (8), sums (4) and normalises in place (8);
 *   backward updates the saved softmax in place (8) and autograd casts
 *   it to the bf16 input's type (6): 52.  It saves the fp32 softmax (4);
 *   forward the caller's bf16 logits stay beside the fp32 copy, backward
 *   the fp32 gradient beside its bf16 cast: 6 at most.
 * - the logits cast to fp32 and torch's cross-entropy over them, eager
 *   (transformers' ForCausalLMLoss, loss/loss_utils.py: logits.float(),
 *   then nn.functional.cross_entropy; torchtune's TransformerDecoder:
 *   output(h).float(), then torch.nn.CrossEntropyLoss, which its recipes
 *   leave eager even with compile: training.compile_loss returns the
 *   compiled loss and they drop it): the cast (6), log_softmax over a
 *   row too long for shared memory (max 4, sum 4, then read 4 and write
 *   4: 16), nll_loss's gather (none); backward nll_loss writes a dense
 *   fp32 gradient (4), log_softmax's backward sums it (4) and reads it
 *   and the saved output and writes (12), the cast back (6): 48.  It
 *   saves log_softmax's fp32 output (4); backward that, nll_loss's
 *   gradient and log_softmax's are live together: 12.
 * - torchtune's CEWithChunkedOutputLoss (modules/loss/
 *   ce_chunked_output_loss.py), its compute_cross_entropy compiled on
 *   its own (training.compile_loss swaps it in place, so the recipes
 *   keep it): Inductor fuses the upcast into the cross-entropy's
 *   reductions, which read the bf16 row twice, for the max and for the
 *   sum of exponentials (4); backward one kernel reads the logits and
 *   writes their bf16 gradient (4): 8.  The compiled graph saves its
 *   input, the bf16 logits, all eight chunks (2); backward a chunk's
 *   gradient joins them: 2 + 2 / 8.
 * The recipes free the logits they return before backward (torchtune's
 * "del logits"); Megatron-LM's last stage frees its softmax with the
 * loss's backward, before the layers' (sim_memory.c). */
static const struct sim_loss_cost loss_costs[] = {
	[SIM_LOSS_VOCAB_PARALLEL] = { 52.0, 4.0, 6.0 },
	[SIM_LOSS_EAGER_FP32] = { 48.0, 4.0, 12.0 },
	[SIM_LOSS_CHUNKED_BF16] = { 8.0, 2.0, 2.0 + 2.0 / SIM_LOSS_CHUNKS },
};

const struct sim_loss_cost *sim_loss_cost(enum sim_loss l)
{
	if ((int)l < 0 || (size_t)l >= sizeof(loss_costs) / sizeof(loss_costs[0]))
		l = SIM_LOSS_VOCAB_PARALLEL;
	return &loss_costs[l];
}

double sim_rope_elems(const struct sim_model *m, double a_l, double kv_l, double qk)
{
	if (m->pos != SIM_POS_ROPE)
		return 0;
	if (m->kv_lora_rank > 0)
		return 2.0 * a_l * m->qk_rope_dim;
	return (a_l + kv_l) * qk * (m->rotary_percent > 0 ? m->rotary_percent : 1.0);
}

double sim_fp8_cast_bytes(double tok, double width)
{
	return SIM_FP8_CAST_BYTES * tok * width;
}

double sim_attn_flops(double bh, double sl, double s, double dh)
{
	double causal = 0.5 * (1.0 + 128.0 / s);

	return 4.0 * bh * sl * s * dh * (causal > 1 ? 1 : causal);
}

/* FlashAttention (Dao 2023): scores never reach HBM, so it moves Q, K, V
 * and the output once, and runs at the GEMM curve's rate unless HBM
 * holds it back below SIM_ATTN_FLOPS_PER_BYTE. */
double sim_flash_attn_s(double b, double heads, double kv_heads, double sl, double s, double dh,
			double act_bytes, double dim_half, double peak, double hbm)
{
	double flops = sim_attn_flops(b * heads, sl, s, dh);
	double bytes = act_bytes * b * (2.0 * sl * heads * dh + 2.0 * s * kv_heads * dh);

	if (bytes < flops / SIM_ATTN_FLOPS_PER_BYTE)
		bytes = flops / SIM_ATTN_FLOPS_PER_BYTE;
	return sim_kernel_time_s(flops, bytes, dh, dim_half, peak, hbm);
}

/* 1 when name starts with prefix. */
static int starts(const char *name, const char *prefix)
{
	return strncmp(name, prefix, strlen(prefix)) == 0;
}

enum sim_arch sim_gpu_arch(const struct price_gpu *g)
{
	const char *n = g->name;

	if (starts(n, "H100") || starts(n, "H200") || starts(n, "GH200"))
		return SIM_ARCH_HOPPER;
	if (starts(n, "B200") || starts(n, "B300") || starts(n, "GB200") || starts(n, "GB300"))
		return SIM_ARCH_BLACKWELL;
	return SIM_ARCH_OTHER;
}

enum sim_attn_kernel sim_attn_kernel_resolve(enum sim_attn_kernel k, enum sim_arch a)
{
	if (k == SIM_ATTN_AUTO)
		return a == SIM_ARCH_OTHER ? SIM_ATTN_FA2 : SIM_ATTN_CUDNN;
	if (k == SIM_ATTN_FA3 && a != SIM_ARCH_HOPPER)
		return a == SIM_ARCH_BLACKWELL ? SIM_ATTN_CUDNN : SIM_ATTN_FA2;
	if (k == SIM_ATTN_CUDNN && a == SIM_ARCH_OTHER)
		return SIM_ATTN_FA2;
	return k;
}

enum sim_moe_gemm sim_moe_gemm_resolve(const struct sim_parallel *p, enum sim_arch a)
{
	if (p->moe_gemm != SIM_MOE_GEMM_AUTO)
		return p->moe_gemm;
	if (p->stack == SIM_STACK_TE214)
		return SIM_MOE_GEMM_LOOP;
	return a == SIM_ARCH_BLACKWELL && p->precision != SIM_PRECISION_FP8 ? SIM_MOE_GEMM_DEVICE
									      : SIM_MOE_GEMM_LOOP;
}

void sim_stack_apply(const struct sim_model *m, enum sim_arch a, struct sim_parallel *p)
{
	if (p->stack == SIM_STACK_UNSTATED || m->experts <= 0 || p->ep <= 1)
		return;
	p->ep_flex = a != SIM_ARCH_OTHER;
	p->ep_overlap = p->stack == SIM_STACK_TE216 && (p->pp == 1 || p->interleave > 1) &&
			p->recompute != SIM_RECOMPUTE_FULL && m->mtp_layers <= 1;
}

void sim_stack_describe(const struct sim_parallel *p, enum sim_arch a, int moe, char *buf,
			size_t n)
{
	char experts[128] = "";

	if (moe)
		snprintf(experts, sizeof(experts), "%s, %s, %s, ",
			 sim_moe_gemm_resolve(p, a) == SIM_MOE_GEMM_LOOP ? "host-looped expert GEMMs"
									 : "device grouped GEMMs",
			 p->ep_flex ? "flex dispatcher (DeepEP/HybridEP)" : "alltoall dispatcher",
			 p->ep_overlap ? "EP overlap" : "no EP overlap");
	if (p->stack == SIM_STACK_TE214)
		snprintf(buf, n, "Megatron-Core with Transformer Engine <= 2.14 (Megatron-Bridge 26.02 "
			 "to 26.04.01): %seager launches (--stack te2.14)", experts);
	else if (p->stack == SIM_STACK_TE216)
		snprintf(buf, n, "Megatron-Core with Transformer Engine >= 2.16 (Megatron-Bridge 26.06 "
			 "on): %sCUDA graphs not modelled (--stack te2.16)", experts);
	else
		snprintf(buf, n, "unstated (the flags as given): %seager launches "
			 "(--stack te2.14|te2.16 names a release)", experts);
}

void sim_attn_kernel_time_s(enum sim_attn_kernel k, enum sim_arch a, double b, double heads,
			    double sl, double s, double dh, double peak, double *fwd, double *bwd)
{
	double ef, eb, scale, flops = sim_attn_flops(b * heads, sl, s, dh);

	if (a == SIM_ARCH_OTHER) {
		ef = SIM_ATTN_AMPERE_FA2_FWD;
		eb = SIM_ATTN_AMPERE_FA2_BWD;
	} else if (k == SIM_ATTN_FA3) {
		ef = SIM_ATTN_HOPPER_FA3_FWD;
		eb = SIM_ATTN_HOPPER_FA3_BWD;
	} else if (k == SIM_ATTN_CUDNN) {
		ef = SIM_ATTN_HOPPER_CUDNN_FWD;
		eb = SIM_ATTN_HOPPER_CUDNN_BWD;
	} else {
		ef = SIM_ATTN_HOPPER_FA2_FWD;
		eb = SIM_ATTN_HOPPER_FA2_BWD;
	}
	/* the kernels' own rise with sequence length and head dimension
	 * (FA3 paper, Fig. 5), 1 at long sequences and head dim 128 */
	scale = peak * sl / (sl + SIM_ATTN_SEQ_HALF)
		* (dh / (dh + SIM_ATTN_DH_HALF)) / (128.0 / (128.0 + SIM_ATTN_DH_HALF));
	*fwd = flops / (ef * scale) + SIM_KERNEL_S;
	*bwd = SIM_ATTN_BWD * flops / (eb * scale) + SIM_KERNEL_S;
}
