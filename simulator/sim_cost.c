/*
 * sim_cost.c - the primitives the step-time model (sim.c), the memory
 * model (sim_memory.c) and the fine-tuning model (sim_finetune.c) all
 * price with: one kernel's time on the GPU's efficiency curve, one GEMM's,
 * the bytes of a group of parameters' training states, and the bytes an
 * optimizer step keeps and moves a parameter.  It calls
 * none of them.
 */
#include "sim_internal.h"

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
