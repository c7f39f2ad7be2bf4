#include <stdlib.h>
/*
 * sim_finetune.c - what fine-tuning and offload change in the analytic
 * model: LoRA's frozen base weights and trainable adapters (Hu et al.
 * 2021), QLoRA's 4-bit NormalFloat base with double quantisation
 * (Dettmers et al. 2023), and model states offloaded to the host's memory
 * or its NVMe with the optimizer step on the CPU (ZeRO-Offload, Ren et al.
 * 2021; ZeRO-Infinity, Rajbhandari et al. 2021; FSDP's CPU offload).
 *
 * sim.c and sim_memory.c call the hooks declared in sim_internal.h at the
 * few places a job's method or offload changes a figure; with
 * sim_parallel.ft all 0 (pre-training, no offload) every hook leaves the
 * figure as it was.  It does not model QLoRA's paged optimizer beyond
 * keeping the adapters' states on the GPU (unified memory pages them to
 * the host only when the GPU runs short: Dettmers et al. 2023, sec. 3),
 * LoRA's dropout (an identity at the usual 0), adapters' activations (r
 * values a token per adapted projection, against the layer's 34 h), nor
 * offloaded activations.
 *
 * It calls down only: sim_cost.c and sim_shape.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim_cost.h"
#include "sim_finetune.h"
#include "sim_shape.h"

const char *const sim_ft_method_names[4] = { "none", "full", "lora", "qlora" };
const char *const sim_offload_names[3] = { "none", "cpu", "nvme" };
const char *const sim_lora_target_names[7] = { "q", "k", "v", "o", "gate", "up", "down" };

static int frozen(const struct sim_finetune *ft)
{
	return ft->method == SIM_FT_LORA || ft->method == SIM_FT_QLORA;
}

static int lora_rank(const struct sim_finetune *ft)
{
	return ft->lora_rank > 0 ? ft->lora_rank : SIM_LORA_DEFAULT_RANK;
}

static unsigned lora_targets(const struct sim_finetune *ft)
{
	return ft->lora_targets ? ft->lora_targets : SIM_LORA_ALL;
}

/* One adapted projection: its input and output widths, the one of them
 * tensor parallelism splits (column-parallel ones their output, row-
 * parallel ones their input; Shoeybi et al. 2019, sec. 3). */
struct proj {
	double in, out;
	int row_parallel;
};

/* The projections of m that targets adapts, into out[7]; returns how many.
 * The gate exists only in a SwiGLU MLP. */
static int projections(const struct sim_model *m, unsigned targets, struct proj *out)
{
	double h = m->hidden, kv = (double)m->kv_heads * (m->hidden / m->heads), f = m->ffn;
	const struct proj all[7] = {
		{ h, h, 0 }, { h, kv, 0 }, { h, kv, 0 }, { h, h, 1 },
		{ h, f, 0 }, { h, f, 0 }, { f, h, 1 },
	};
	int n = 0;

	for (int i = 0; i < 7; i++) {
		if (!(targets & (1u << i)))
			continue;
		if ((1u << i) == SIM_LORA_GATE && m->mlp != SIM_MLP_SWIGLU)
			continue;
		out[n++] = all[i];
	}
	return n;
}

/* Adapter parameters of one layer: r (in + out) per adapted projection,
 * A of in x r and B of r x out (Hu et al. 2021, sec. 4.1). */
static double lora_layer_params(const struct sim_model *m, const struct sim_finetune *ft)
{
	struct proj pr[7];
	int n = projections(m, lora_targets(ft), pr);
	double sum = 0;

	for (int i = 0; i < n; i++)
		sum += lora_rank(ft) * (pr[i].in + pr[i].out);
	return sum;
}

/* What one GPU of t tensor-parallel ranks holds of a layer's adapters:
 * an adapter is cut as its projection, a column-parallel one's B by
 * output rows with A whole, a row-parallel one's A by input columns with
 * B whole (NeMo's ParallelLinearAdapter; gpuplan's executor), so
 * r (in + out / t) or r (in / t + out) of each. */
static double lora_layer_params_tp(const struct sim_model *m, const struct sim_finetune *ft,
				   double t)
{
	struct proj pr[7];
	int n = projections(m, lora_targets(ft), pr);
	double sum = 0;

	for (int i = 0; i < n; i++)
		sum += lora_rank(ft) * (pr[i].row_parallel ? pr[i].in / t + pr[i].out
							   : pr[i].in + pr[i].out / t);
	return sum;
}

double sim_layer_matrix_params(const struct sim_model *m)
{
	double h = m->hidden, kv = (double)m->kv_heads * (m->hidden / m->heads);

	return 2.0 * h * h + 2.0 * h * kv + (m->mlp == SIM_MLP_SWIGLU ? 3.0 : 2.0) * h * m->ffn;
}

double sim_lora_params(const struct sim_model *m, const struct sim_finetune *ft)
{
	if (!frozen(ft) || m->layers < 1 || m->heads < 1)
		return 0;
	return m->layers * lora_layer_params(m, ft);
}

double sim_trainable_params(const struct sim_model *m, const struct sim_finetune *ft)
{
	return frozen(ft) ? sim_lora_params(m, ft) : sim_model_params(m);
}

double sim_base_weight_bytes(const struct sim_finetune *ft, double w)
{
	return ft->method == SIM_FT_QLORA ? SIM_NF4_BITS / 8.0 : w;
}

double sim_finetune_train_flops(const struct sim_model *m, const struct sim_finetune *ft,
				double sequences, enum sim_recompute recompute)
{
	double total = sim_train_flops(m, sequences, recompute);
	double s = m->seq, adapters;

	if (!frozen(ft))
		return total;
	/* A frozen weight needs no gradient: of a GEMM's backward (twice its
	 * forward, Narayanan et al., SC'21, sec. 5.1) only the input
	 * gradient remains, so the layers' linear layers and the LM head lose
	 * their forward's FLOPs, 2 s per weight.  An adapter is two GEMMs
	 * over its r (in + out) weights, 2 s FLOPs each forward, backward
	 * twice that, and full recomputation runs their forward again. */
	total -= sequences * 2.0 * s * (m->layers * sim_layer_matrix_params(m)
					+ (double)m->hidden * m->vocab);
	adapters = 2.0 * s * sim_lora_params(m, ft) * sequences;
	return total + (recompute == SIM_RECOMPUTE_FULL ? 4.0 : 3.0) * adapters;
}

/* ---- step time --------------------------------------------------------- */

static double hbm_of(const struct sim_cluster *c)
{
	return c->gpu.hbm_bytes_per_s > 0 ? c->gpu.hbm_bytes_per_s
					  : c->gpu.bf16_flops_per_s / SIM_DEFAULT_FLOPS_PER_BYTE;
}

/* Seconds of one adapter GEMM (m x k)(k x n) of elem-byte operands and a
 * bf16 output, one of m, n, k the rank r.  Its arithmetic intensity is
 * about r FLOPs a byte of the wide operand it streams, at the usual
 * ranks (8 to 64) under every GPU's ridge point (peak over HBM bandwidth:
 * 117 to 419 FLOP/B in gpus.csv), so the roofline (Williams, Waterman and
 * Patterson, CACM 2009) bounds it by its bytes, its FLOPs (at the curve's
 * efficiency for a dimension of r) running under them: the slower of the
 * two, not their sum as for the layer's square GEMMs (sim_gemm_time_s),
 * whose tile re-reads the memory term stands for.  At a rank past the
 * ridge the FLOPs bound it. */
static double adapter_gemm_s(double m, double n, double k, double elem, const struct sim_cluster *c,
			     double hbm)
{
	double dmin = fmin(m, fmin(n, k)), dh50 = c->gpu.gemm_dim_half;
	double compute = sim_kernel_time_s(2.0 * m * n * k, 0, dmin, dh50, c->gpu.bf16_flops_per_s,
					   hbm);
	double memory = sim_kernel_time_s(0, elem * (m * k + k * n) + 2.0 * m * n, dmin, dh50,
					  c->gpu.bf16_flops_per_s, sim_gemm_hbm(&c->gpu, hbm));

	return fmax(compute, memory);
}

/* One layer's per micro-batch extra work on one GPU under p->ft: the
 * adapters' forward (*ad_fwd) and backward (*ad_bwd), and one pass of
 * QLoRA's dequantisation (*dq, run before the forward and again before
 * the input-gradient GEMMs). */
static void layer_extra(const struct sim_model *m, const struct sim_parallel *p,
			const struct sim_cluster *c, const struct sim_shape *sh, double *ad_fwd,
			double *ad_bwd, double *dq)
{
	const struct sim_finetune *ft = &p->ft;
	double peak = c->gpu.bf16_flops_per_s, hbm = hbm_of(c), dh50 = c->gpu.gemm_dim_half;
	double ab = sim_act_bytes(p), tok = sh->tok, r = lora_rank(ft);
	double fused = 0, fused_bwd = 0;
	struct proj pr[7];
	int n = projections(m, lora_targets(ft), pr);

	*ad_fwd = *ad_bwd = *dq = 0;
	for (int i = 0; i < n; i++) {
		double in = pr[i].row_parallel ? pr[i].in / sh->t : pr[i].in;
		double out = pr[i].row_parallel ? pr[i].out : pr[i].out / sh->t;
		/* x A (tok x in)(in x r), then (tok x r)(r x out) B; backward
		 * the gradients of B, of the rank-r activation, of A and of x,
		 * each as long as one of the two forward GEMMs. */
		double g = adapter_gemm_s(tok, r, in, ab, c, hbm) + adapter_gemm_s(tok, out, r, ab, c, hbm);

		*ad_fwd += g;
		*ad_bwd += 2.0 * g;
		/* The scaled sum into the base output, out + (alpha / r)
		 * B(A(x)) (torchtune's LoRALinear, PEFT's LoRA layer), priced
		 * fused as the layer's own element-wise work is: compiled,
		 * Inductor fuses a pointwise op into the pointwise kernel
		 * that reads its result, here the one that next reads the
		 * base output (RoPE for q and k, the grouped-query expand for
		 * k and v, the residual add for o and down, SwiGLU for gate
		 * and up), which reads the adapter's output once more.
		 * Backward, the kernel that produces the output's gradient
		 * writes its scaled copy once more, and the one that consumes
		 * x's gradient (the norm's or SwiGLU's backward) reads the
		 * adapter's share once more.  Eager (PEFT without
		 * torch.compile) the scale and the add are kernels of their
		 * own, five passes over the output each way. */
		fused += tok * out;
		fused_bwd += tok * (out + in);
	}
	*ad_fwd += ab * fused / (hbm * SIM_HBM_EFF);
	*ad_bwd += ab * fused_bwd / (hbm * SIM_HBM_EFF);
	if (ft->method == SIM_FT_QLORA) {
		/* QLoRA computes in bf16: every NF4 base matrix is dequantised
		 * before the GEMM that uses it, forward and again for the
		 * input gradient (Dettmers et al. 2023, sec. 3: "we dequantize
		 * the storage data type to the computation data type to perform
		 * the forward and backward pass"; bitsandbytes' MatMul4Bit):
		 * the kernel reads the 4.127-bit matrix and writes its bf16
		 * copy, one launch per matrix. */
		double mats = m->mlp == SIM_MLP_SWIGLU ? 7.0 : 6.0;

		*dq = sim_kernel_time_s(0, (SIM_NF4_BITS / 8.0 + 2.0) *
					sim_layer_matrix_params(m) / sh->t, 1, dh50, peak, hbm)
		      + (mats - 1) * SIM_KERNEL_S;
	}
}

void sim_ft_layer_time(const struct sim_model *m, const struct sim_parallel *p,
		       const struct sim_cluster *c, const struct sim_shape *sh, double gemm_s,
		       double *fwd_s, double *bwd_s)
{
	double af, ab, dq;

	if (!frozen(&p->ft))
		return;
	layer_extra(m, p, c, sh, &af, &ab, &dq);
	if (getenv("SIMDBG")) fprintf(stderr, "  ft: ad_fwd %.3f ad_bwd %.3f dq %.3f gemm %.3f\n", af*1e3, ab*1e3, dq*1e3, gemm_s*1e3);
	/* the base's weight-gradient GEMMs: as long as its forward ones */
	*bwd_s += ab + dq - gemm_s;
	*fwd_s += af + dq;
}

void sim_finetune_parts(const struct sim_model *m, const struct sim_parallel *p,
			const struct sim_cluster *c, double *adapters_s, double *dequant_s)
{
	struct sim_shape sh;
	double af, ab, dq, passes;

	*adapters_s = *dequant_s = 0;
	if (!frozen(&p->ft))
		return;
	sim_shape_init(&sh, m, p);
	layer_extra(m, p, c, &sh, &af, &ab, &dq);
	passes = p->recompute == SIM_RECOMPUTE_FULL ? 3.0 : 2.0;
	*adapters_s = (double)sh.micro * sh.layers_first *
		      (af * (passes - 1.0) + ab);
	*dequant_s = (double)sh.micro * sh.layers_first * dq * passes;
}

double sim_ft_head_gemms(const struct sim_parallel *p)
{
	return frozen(&p->ft) ? 2.0 : 3.0;
}

double sim_ft_stage_trainable(const struct sim_model *m, const struct sim_parallel *p,
			      const struct sim_shape *sh, double params_stage)
{
	int layers = sh->layers_first > sh->layers_base ? sh->layers_first : sh->layers_base;

	if (!frozen(&p->ft))
		return params_stage;
	if (sh->p > 2 && sh->mid_stages_long > 0)
		layers = sh->layers_base + 1;
	return layers * lora_layer_params_tp(m, &p->ft, sh->t);
}

double sim_ft_layer_weight_bytes(const struct sim_model *m, const struct sim_parallel *p,
				 const struct sim_shape *sh)
{
	double w = sim_weight_bytes(p), lp = sim_layer_params(m) / sh->t;

	if (p->ft.method != SIM_FT_QLORA)
		return w * lp;
	return w * lp - (w - SIM_NF4_BITS / 8.0) * sim_layer_matrix_params(m) / sh->t;
}

double sim_ft_stage_weight_bytes(const struct sim_model *m, const struct sim_parallel *p,
				 const struct sim_shape *sh, double params_stage)
{
	double w = sim_weight_bytes(p);

	if (p->ft.method != SIM_FT_QLORA)
		return w * params_stage;
	return w * params_stage - sh->layers_first * (w * sim_layer_params(m) / sh->t
						       - sim_ft_layer_weight_bytes(m, p, sh));
}

/* The host link of one GPU, one direction: the host's figure, else the
 * GPU's own PCIe link where it has no NVLink (gpus.csv's intra-node
 * figure is then its PCIe x16); 0 unknown. */
static double pcie_bytes_per_s(const struct sim_cluster *c)
{
	if (c->host.pcie_bytes_per_s > 0)
		return c->host.pcie_bytes_per_s;
	if (!c->gpu.nvlink && c->gpu.intra_bytes_per_s > 0)
		return c->gpu.intra_bytes_per_s;
	return 0;
}

/* Bytes per parameter the host keeps for the shard a GPU's rank updates:
 * with an fp32 master, DeepSpeed's SIM_OFFLOAD_HOST_BYTES (the states
 * and an fp32 gradient), the states' own width where they are narrower
 * (sim_opt_state_bytes); without one, the states, the gradient at its
 * width and, unless ZeRO-3 keeps the weights there anyway (counted
 * apart), the weight the step updates in place. */
static double host_bytes(const struct sim_parallel *p)
{
	double s = sim_opt_state_bytes(p);

	if (sim_opt_has_master(p))
		return SIM_OFFLOAD_HOST_BYTES - 12.0 + s;
	return s + sim_grad_bytes(p) + (p->zero >= 3 ? 0 : sim_weight_bytes(p));
}

/* GPUs of the layout on one node, sharing its host. */
static double node_gpus(const struct sim_cluster *c, const struct sim_shape *sh)
{
	return sh->gpus < c->gpus_per_node ? sh->gpus : c->gpus_per_node;
}

void sim_ft_offload_time(const struct sim_model *m, const struct sim_parallel *p,
			 const struct sim_cluster *c, const struct sim_shape *sh,
			 double train_stage, double params_stage, double fwd_s, double bwd_s,
			 struct sim_breakdown *bd)
{
	int ndp = sh->d * sh->c, passes = p->recompute == SIM_RECOMPUTE_FULL ? 3 : 2;
	double shard, gpn = node_gpus(c, sh), pcie = pcie_bytes_per_s(c) * SIM_LINK_EFF;
	double cpu_s, d2h, h2d, exposed = 0;

	bd->offload_s = 0;
	if (p->ft.offload == SIM_OFFLOAD_NONE || !(pcie > 0) || !(c->host.cpu_cores > 0))
		return;
	/* The optimizer states a GPU's rank owns, all on its node's CPU.
	 * CPU Adam is bound by the bytes it moves (sim_optimizer_bytes), so
	 * the measured rate, DeepSpeed's over fp32 master, m and v, scales by
	 * the bytes of p's states against those (a bf16 trainer's fused
	 * AdamW, torchtune's with FSDP CPU offload, moves 14 a parameter
	 * where DeepSpeed's moves SIM_CPU_ADAM_BYTES). */
	shard = train_stage / (p->zero >= 1 ? ndp : 1);
	cpu_s = shard * gpn / (c->host.cpu_cores * SIM_CPU_ADAM_PARAMS_PER_CORE_S)
		* sim_optimizer_bytes(p, 1, 0) / SIM_CPU_ADAM_BYTES;
	if (p->ft.offload == SIM_OFFLOAD_NVME && c->host.nvme_bytes_per_s > 0) {
		/* ZeRO-Infinity streams the states through host buffers,
		 * overlapping NVMe reads and writes with the CPU step
		 * (Rajbhandari et al. 2021, sec. 6.3): the slower of the two.
		 * It reads and writes every state byte (the fp32 master, m and
		 * v: 12 each way; sec. 5). */
		double io = 2.0 * sim_opt_state_bytes(p) * shard * gpn / c->host.nvme_bytes_per_s;

		cpu_s = fmax(cpu_s, io);
	}
	bd->optimizer_s = cpu_s;
	/* ZeRO-Offload (Ren et al. 2021, sec. 4.1) copies each micro-batch's
	 * reduced gradient partition to the host as the backward produces
	 * it, under that backward; after the CPU step the updated 16-bit
	 * weights come back, with nothing to hide under. */
	d2h = sim_grad_bytes(p) * shard / pcie;
	h2d = sim_weight_bytes(p) * shard / pcie;
	exposed = sh->micro * fmax(0, d2h - bwd_s) + h2d;
	if (p->zero >= 3) {
		/* The weights live on the host (or NVMe) too: each pass over
		 * the stage (forward, backward, a recomputed forward) brings
		 * the rank's shard over PCIe before FSDP's gather, prefetched
		 * under the compute. */
		double w = sim_ft_stage_weight_bytes(m, p, sh, params_stage) / ndp;
		double in = passes * w / pcie;

		if (p->ft.offload == SIM_OFFLOAD_NVME && c->host.nvme_bytes_per_s > 0)
			in = fmax(in, passes * w * gpn / c->host.nvme_bytes_per_s);
		exposed += sh->micro * fmax(0, in - (fwd_s + bwd_s));
	}
	bd->offload_s = exposed;
}

/* ---- memory ------------------------------------------------------------ */

void sim_ft_states(const struct sim_model *m, const struct sim_parallel *p,
		   const struct sim_shape *sh, double params, int layers, int first, int last,
		   struct sim_memory *out)
{
	const struct sim_finetune *ft = &p->ft;
	int ndp = sh->d * sh->c, fr = frozen(ft);
	double w = sim_weight_bytes(p), g = sim_grad_bytes(p);
	double lp = sim_layer_params(m) / sh->t, emb = (double)m->vocab * m->hidden / sh->t;
	double train, base = 0, layer_w, layer_g, shard;
	struct sim_memory st;

	out->host = out->nvme = 0;
	if (!fr && ft->offload == SIM_OFFLOAD_NONE)
		return;
	/* What trains: the stage's adapters (with frozen base weights,
	 * stored at w, QLoRA's matrices in NF4), or every parameter. */
	train = fr ? layers * lora_layer_params_tp(m, ft, sh->t) : params;
	if (fr)
		base = w * params - layers * (w * lp - sim_ft_layer_weight_bytes(m, p, sh));
	sim_model_states(train, p->zero, ndp, w, g, sim_opt_state_bytes(p), &st);
	layer_w = fr ? sim_ft_layer_weight_bytes(m, p, sh) : w * lp;
	if (!fr && (first || last) && emb > lp)
		layer_w = w * emb;
	layer_g = g * (fr ? lora_layer_params_tp(m, ft, sh->t) : layer_w / w);
	out->weights = st.weights + base / (p->zero >= 3 ? ndp : 1);
	out->grads = st.grads;
	out->optimizer = st.optimizer;
	if (p->zero >= 3) {
		/* two blocks' gathered weights at once (sim_memory.c), and
		 * QLoRA's dequantised bf16 copy of the matrix in use */
		out->weights += 2.0 * layer_w;
		if (ft->method == SIM_FT_QLORA)
			out->weights += w * (double)m->hidden * m->ffn / sh->t;
	}
	if (p->zero >= 2 && layers > 0)
		out->grads += layer_g;
	if (ft->offload == SIM_OFFLOAD_NONE)
		return;
	/* Offloaded: the GPU keeps a layer's gradients on their way to the
	 * host, and with ZeRO-3 only the gathered working weights.  The
	 * host keeps the shard's fp32 states and gradients, ZeRO-Infinity's
	 * NVMe the states alone (the gradients stay in host memory). */
	shard = train / (p->zero >= 1 ? ndp : 1);
	out->optimizer = 0;
	out->grads = layer_g;
	if (ft->offload == SIM_OFFLOAD_NVME) {
		out->host = (host_bytes(p) - sim_opt_state_bytes(p)) * shard;
		out->nvme = sim_opt_state_bytes(p) * shard;
	} else {
		out->host = host_bytes(p) * shard;
	}
	if (p->zero >= 3) {
		double stored = (fr ? base + w * train : w * params) / ndp;

		out->weights = 2.0 * layer_w + (ft->method == SIM_FT_QLORA ?
						 w * (double)m->hidden * m->ffn / sh->t : 0);
		if (ft->offload == SIM_OFFLOAD_NVME)
			out->nvme += stored;
		else
			out->host += stored;
	}
}

void sim_ft_node_memory(const struct sim_parallel *p, const struct sim_cluster *c,
			const struct sim_shape *sh, struct sim_memory *out)
{
	double gpn = node_gpus(c, sh);

	if (p->ft.offload == SIM_OFFLOAD_NONE) {
		out->host = out->host_capacity = out->nvme = 0;
		return;
	}
	/* every GPU of the node keeps its shard there; pinned staging and
	 * fragmentation as on the GPU (SIM_ALLOC_SLACK) */
	out->host *= gpn * (1.0 + SIM_ALLOC_SLACK);
	out->nvme *= gpn;
	out->host_capacity = c->host.memory_bytes;
}

int sim_ft_host_fits(const struct sim_parallel *p, const struct sim_memory *mem)
{
	return p->ft.offload == SIM_OFFLOAD_NONE || mem->host <= mem->host_capacity;
}

/* ---- checks ------------------------------------------------------------ */

#define WHY(...) do { if (why && size) snprintf(why, size, __VA_ARGS__); \
		      return RC_INPUT; } while (0)

enum rc sim_ft_check(const struct sim_model *m, const struct sim_parallel *p,
		     const struct sim_cluster *c, char *why, size_t size)
{
	const struct sim_finetune *ft = &p->ft;
	struct proj pr[7];

	if ((int)ft->method < SIM_FT_NONE || (int)ft->method > SIM_FT_QLORA)
		WHY("finetune: expected none, full, lora or qlora, found %d", (int)ft->method);
	if ((int)ft->offload < SIM_OFFLOAD_NONE || (int)ft->offload > SIM_OFFLOAD_NVME)
		WHY("offload: expected none, cpu or nvme, found %d", (int)ft->offload);
	if (ft->lora_rank < 0 || ft->lora_rank > SIM_LORA_MAX_RANK)
		WHY("lora_rank: expected 0 (%d) or 1 to %d, found %d", SIM_LORA_DEFAULT_RANK,
		    SIM_LORA_MAX_RANK, ft->lora_rank);
	if (ft->lora_targets & ~SIM_LORA_ALL)
		WHY("lora_targets: expected projections among q, k, v, o, gate, up, down, found "
		    "bits 0x%x", ft->lora_targets);
	if ((frozen(ft) || ft->offload != SIM_OFFLOAD_NONE) && m->experts > 0)
		WHY("finetune: expected a dense model for LoRA, QLoRA or offload (modelled for "
		    "dense layers only), found %d experts", m->experts);
	if (frozen(ft) && projections(m, lora_targets(ft), pr) == 0)
		WHY("lora_targets: expected a projection the model has, found only gate in a "
		    "GELU MLP");
	if (ft->offload == SIM_OFFLOAD_NONE)
		return RC_OK;
	if (p->zero < 1)
		WHY("offload: expected ZeRO stage 1, 2 or 3 (offload moves the partitioned "
		    "optimizer states), found zero 0");
	if (!(c->host.memory_bytes > 0) || !(c->host.cpu_cores > 0))
		WHY("offload: expected the host's memory and CPU cores (hardware.csv, hosts.csv "
		    "or --host), found %s", c->host.memory_bytes > 0 ? "no cores" : "no memory");
	if (!(pcie_bytes_per_s(c) > 0))
		WHY("offload: expected the host's PCIe bandwidth per GPU (%s has NVLink, so its "
		    "intra-node figure is not its host link), found none", c->gpu.name);
	if (ft->offload == SIM_OFFLOAD_NVME && !(c->host.nvme_bytes_per_s > 0))
		WHY("offload: expected the host's NVMe bandwidth for nvme, found none");
	return RC_OK;
}

/* ---- LoRA target lists ------------------------------------------------- */

enum rc sim_lora_targets_parse(const char *s, unsigned *out)
{
	unsigned set = 0;
	const char *p = s;

	if (strcmp(s, "all") == 0) {
		*out = SIM_LORA_ALL;
		return RC_OK;
	}
	while (*p) {
		size_t n = strcspn(p, ",");
		int i;

		for (i = 0; i < 7; i++)
			if (strlen(sim_lora_target_names[i]) == n &&
			    strncmp(p, sim_lora_target_names[i], n) == 0)
				break;
		if (i == 7)
			return RC_INPUT;
		set |= 1u << i;
		p += n;
		if (*p == ',' && !*++p)
			return RC_INPUT;
	}
	if (!set)
		return RC_INPUT;
	*out = set;
	return RC_OK;
}

void sim_lora_targets_str(unsigned targets, char *buf, size_t size)
{
	size_t at = 0;

	if (!size)
		return;
	buf[0] = '\0';
	if (!targets || (targets & SIM_LORA_ALL) == SIM_LORA_ALL) {
		snprintf(buf, size, "all");
		return;
	}
	for (int i = 0; i < 7 && at < size; i++)
		if (targets & (1u << i))
			at += (size_t)snprintf(buf + at, size - at, "%s%s", at ? "," : "",
					       sim_lora_target_names[i]);
}
