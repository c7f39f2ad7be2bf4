/*
 * sim.c - the analytic step-time model of GPT-style decoder training:
 * parameter and FLOP counts from the model's shapes, the checks a parallel
 * configuration must pass, and sim_step(), the planner's hot path.
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
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim_internal.h"

void sim_parallel_init(struct sim_parallel *p)
{
	memset(p, 0, sizeof(*p));
	p->tp = p->pp = p->dp = p->cp = 1;
	p->mbs = 1;
	p->gbs = 1;
	p->zero = 0;
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

double sim_mfu_peak(const struct price_gpu *g)
{
	return g->mfu_flops_per_s > 0 ? g->mfu_flops_per_s : g->bf16_flops_per_s;
}

void sim_model_facts_init(struct sim_model *m)
{
	m->pos = SIM_POS_ROPE;
	m->rotary_base = 10000;
	m->norm = SIM_NORM_RMSNORM;
	m->linear_bias = 0;
	m->dropout = 0;
	m->tokenizer[0] = '\0';
	m->window = 0;
	m->rotary_percent = 1;
	m->parallel_residual = 0;
	m->embedding_norm = 0;
}

double sim_layer_params(const struct sim_model *m)
{
	double h = m->hidden;
	double kv_dim = (double)m->kv_heads * (m->hidden / m->heads);
	double attn = h * h + 2.0 * h * kv_dim + h * h;   /* Q, K, V, output */
	int swiglu = m->mlp == SIM_MLP_SWIGLU;
	double mlp = (swiglu ? 3.0 : 2.0) * h * m->ffn;
	/* LayerNorm has a bias beside its weight (Ba et al. 2016). */
	double norms = (m->norm == SIM_NORM_LAYERNORM ? 4.0 : 2.0) * h;

	/* Biases: one per output unit of Q, K, V and the projection, of the
	 * MLP's input matrices (gate and up for SwiGLU) and its output. */
	if (m->linear_bias)
		attn += h + 2.0 * kv_dim + h, mlp += (swiglu ? 2.0 : 1.0) * m->ffn + h;
	return attn + mlp + norms;
}

double sim_final_norm_params(const struct sim_model *m)
{
	return (m->norm == SIM_NORM_LAYERNORM ? 2.0 : 1.0) * m->hidden;
}

double sim_input_params(const struct sim_model *m)
{
	return (m->pos == SIM_POS_LEARNED ? (double)m->seq * m->hidden : 0) +
	       (m->embedding_norm ? sim_final_norm_params(m) : 0);
}

double sim_attention_span(const struct sim_model *m)
{
	return m->window > 0 && m->window < m->seq ? m->window : m->seq;
}

double sim_model_params(const struct sim_model *m)
{
	double emb = (double)m->vocab * m->hidden;

	if (m->layers < 1 || m->hidden < 1 || m->heads < 1 || m->kv_heads < 1)
		return 0;
	/* Layers, input embedding with its position table and norm, LM head
	 * unless tied, final norm. */
	return m->layers * sim_layer_params(m) + emb + sim_input_params(m)
	       + (m->tied_embeddings ? 0 : emb) + sim_final_norm_params(m);
}

double sim_train_flops(const struct sim_model *m, double sequences,
		       enum sim_recompute recompute)
{
	double s = m->seq, h = m->hidden, f = m->ffn, V = m->vocab;
	double kv_dim = (double)m->kv_heads * (m->hidden / m->heads);
	double qkv, attn, proj, mlp, logits, layer, total;

	/* Narayanan et al., SC'21, sec. 5.1: a GEMM (m x k)(k x n) is 2mnk
	 * FLOPs; backward is twice forward.  Per sequence of s tokens:
	 * QKV 2 s h (h + 2 kv_dim) (GQA shrinks K and V), scores Q K^T and
	 * attention over values 2 s^2 h each (the full s x s product, as
	 * eq. 3 counts it), output projection 2 s h^2, MLP 2 s h f per matrix
	 * (2 matrices for GELU, 3 for SwiGLU), logits 2 s h V.  For GPT shapes
	 * (kv_dim = h, f = 4h) the sum over l layers times 3 is eq. 3:
	 * 72 B s l h^2 (1 + s/(6h) + V/(12 l h)).  A sliding window w < s
	 * bounds each query's keys to w (Jiang et al. 2023, sec. 2): the
	 * scores and values count s x w. */
	qkv = 2.0 * s * h * (h + 2.0 * kv_dim);
	attn = 4.0 * s * sim_attention_span(m) * h;
	proj = 2.0 * s * h * h;
	mlp = (m->mlp == SIM_MLP_SWIGLU ? 3.0 : 2.0) * 2.0 * s * h * f;
	logits = 2.0 * s * h * V;
	layer = qkv + attn + proj + mlp;
	total = 3.0 * (m->layers * layer + logits);
	/* Eq. 3's recomputation variant: one more forward of every layer (not
	 * of the logits), i.e. 4/3 on the layer terms.  Selective
	 * recomputation (Korthikanti et al. 2022, sec. 4.2) redoes only the
	 * attention scores and values. */
	if (recompute == SIM_RECOMPUTE_FULL)
		total += m->layers * layer;
	else if (recompute == SIM_RECOMPUTE_SELECTIVE)
		total += m->layers * attn;
	return total * sequences;
}

double sim_time_to_train_s(const struct sim_result *r, double tokens)
{
	if (!r || !(r->tokens_per_s > 0) || !(tokens > 0) || !isfinite(tokens))
		return 0;
	return tokens / r->tokens_per_s;
}

/* ---- checks -------------------------------------------------------- */

/* 1 when x is 0 (not stated) or a finite rate of at least 1 per second. */
static int rate_ok(double x)
{
	return x == 0 || (x >= 1 && isfinite(x));
}

#define WHY(...) do { if (why && size) snprintf(why, size, __VA_ARGS__); \
		      return RC_INPUT; } while (0)

enum rc sim_check(const struct sim_model *m, const struct sim_parallel *p,
		  const struct sim_cluster *c, char *why, size_t size)
{
	long long dpc;
	int micro;

	if (why && size)
		why[0] = '\0';
	if (m->layers < 1)
		WHY("layers: expected an integer >= 1, found %d", m->layers);
	if (m->hidden < 1)
		WHY("hidden: expected an integer >= 1, found %d", m->hidden);
	if (m->heads < 1 || m->hidden % m->heads)
		WHY("heads: expected a divisor of hidden %d, found %d", m->hidden, m->heads);
	if (m->kv_heads < 1 || m->heads % m->kv_heads)
		WHY("kv_heads: expected a divisor of heads %d, found %d", m->heads, m->kv_heads);
	if (m->ffn < 1)
		WHY("ffn: expected an integer >= 1, found %d", m->ffn);
	if (m->vocab < 1)
		WHY("vocab: expected an integer >= 1, found %d", m->vocab);
	if (m->seq < 1)
		WHY("seq: expected an integer >= 1, found %d", m->seq);
	if (m->mlp != SIM_MLP_GELU && m->mlp != SIM_MLP_SWIGLU)
		WHY("mlp: expected gelu or swiglu, found %d", (int)m->mlp);

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
	if (p->zero3_gather != SIM_ZERO3_BLOCK && p->zero3_gather != SIM_ZERO3_TENSOR_SYNC)
		WHY("zero3_gather: expected block or tensor-sync, found %d", (int)p->zero3_gather);
	if ((int)p->attn_kernel < SIM_ATTN_AUTO || (int)p->attn_kernel > SIM_ATTN_CUDNN)
		WHY("attn_kernel: expected auto, fa1, fa2, fa3 or cudnn, found %d", (int)p->attn_kernel);
	if (p->recompute != SIM_RECOMPUTE_NONE && p->recompute != SIM_RECOMPUTE_SELECTIVE
	    && p->recompute != SIM_RECOMPUTE_FULL)
		WHY("recompute: expected none, selective or full, found %d", (int)p->recompute);
	if (p->precision != SIM_PRECISION_BF16 && p->precision != SIM_PRECISION_FP8)
		WHY("precision: expected bf16 or fp8, found %d", (int)p->precision);
	/* 0 is the default (2); the widest element a trainer stores is fp64 */
	if (!(p->act_bytes_per_element == 0 ||
	      (p->act_bytes_per_element >= 1 && p->act_bytes_per_element <= 8)))
		WHY("act_bytes_per_element: expected 0 (2 bytes) or 1 to 8, found %g",
		    p->act_bytes_per_element);
	if (!(p->grad_bytes_per_param == 0 ||
	      (p->grad_bytes_per_param >= 1 && p->grad_bytes_per_param <= 8)))
		WHY("grad_bytes_per_param: expected 0 (2 bytes) or 1 to 8, found %g",
		    p->grad_bytes_per_param);

	/* Products of degrees are formed in wider types: each degree fits an
	 * int, their product need not. */
	if ((double)p->tp * p->pp * p->dp * p->cp > SIM_MAX_GPUS)
		WHY("gpus: expected tp x pp x dp x cp of at most %d, found %.0f", SIM_MAX_GPUS,
		    (double)p->tp * p->pp * p->dp * p->cp);
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
		/* Every chunk holds at least one layer; uneven splits are
		 * allowed (sim_stage_layers). */
		if (m->layers / p->pp < p->interleave)
			WHY("interleave: expected at most layers / pp = %d chunks per stage, "
			    "found %d", m->layers / p->pp, p->interleave);
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
	    !rate_ok(c->gpu.attn_flops_per_s) || !rate_ok(c->gpu.opt_bytes_per_s))
		WHY("cluster: expected bandwidths and FLOP/s of 0 (default) or from 1 per second, "
		    "finite");
	if (c->latency_s > 1)
		WHY("latency_s: expected at most 1 s, found %g", c->latency_s);
	return RC_OK;
}

/* ---- shapes and kernels -------------------------------------------- */

void sim_shape_init(struct sim_shape *sh, const struct sim_model *m,
		    const struct sim_parallel *p)
{
	int rem;

	sh->t = p->tp;
	sh->p = p->pp;
	sh->d = p->dp;
	sh->c = p->cp;
	sh->v = p->interleave;
	sh->gpus = p->tp * p->pp * p->dp * p->cp;
	sh->micro = p->gbs / (p->mbs * p->dp);
	sh->b = p->mbs;
	sh->s = m->seq;
	sh->sl = (double)m->seq / p->cp;
	sh->tok = sh->b * sh->sl;
	sh->h = m->hidden;
	sh->f = m->ffn;
	sh->V = m->vocab;
	sh->dh = (double)m->hidden / m->heads;
	sh->a_l = (double)m->heads / p->tp;
	sh->kv_l = m->kv_heads >= p->tp ? (double)m->kv_heads / p->tp : 1.0;
	sh->layers_base = m->layers / p->pp;
	rem = m->layers % p->pp;
	sh->mid_stages = p->pp > 2 ? p->pp - 2 : 0;
	sh->mid_stages_long = rem < sh->mid_stages ? rem : sh->mid_stages;
	sh->layers_first = sh->layers_base + (rem > sh->mid_stages);
	sh->layers_last = sh->layers_base;
}

int sim_stage_layers(const struct sim_shape *sh, int stage)
{
	if (sh->p == 1)
		return sh->layers_first;
	if (stage == 0)
		return sh->layers_first;
	if (stage == sh->p - 1)
		return sh->layers_last;
	return sh->layers_base + (stage <= sh->mid_stages_long);
}

int sim_chunk_layers(const struct sim_shape *sh, int stage, int chunk)
{
	int n = sim_stage_layers(sh, stage);

	return n / sh->v + (chunk < n % sh->v);
}

int sim_virtual_stage_layers(const struct sim_model *m, const struct sim_parallel *p, int k)
{
	struct sim_shape sh;

	sim_shape_init(&sh, m, p);
	return sim_chunk_layers(&sh, k % p->pp, k / p->pp);
}

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

static double hbm_time_s(double bytes, double hbm, int kernels)
{
	return bytes / (hbm * SIM_HBM_EFF) + kernels * SIM_KERNEL_S;
}

/* The byte counts are for 2-byte elements; wider ones scale them.  The MLP
 * activation reads and writes each element once (SwiGLU reads two
 * inputs). */
double sim_optimizer_bytes(double weight_bytes, double own_params, double grad_params)
{
	return (weight_bytes >= 4 ? 28.0 : 34.0) * own_params + 12.0 * grad_params;
}

double sim_layer_elt_bytes(int swiglu, double stream, double mlp, double act_bytes)
{
	return (SIM_ELT_BYTES * stream + (swiglu ? 6.0 : 4.0) * mlp) * act_bytes / 2.0;
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

/* The share of causal attention's work a sliding window leaves: a
 * causal query at position i attends to i keys, s/2 on average; with a
 * window w < s to min(i, w), w - w^2 / (2s) on average (Jiang et al.
 * 2023, sec. 2), which FlashAttention's block skipping turns into time.
 * 1 without a window. */
static double window_share(const struct sim_model *m)
{
	double s = m->seq, w = m->window;

	if (!(w > 0 && w < s))
		return 1;
	return (w - w * w / (2.0 * s)) / (s / 2.0);
}

/* Per micro-batch times of one layer on one GPU. */
struct layer_time {
	double fwd_s, bwd_s, recompute_s;   /* compute */
	double attn_fwd_s, attn_bwd_s;      /* of which the attention core */
	double tp_fwd_s;                    /* TP communication, one forward */
	double cp_fwd_s, cp_bwd_s;          /* exposed KV exchange */
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

static void layer_time(const struct sim_model *m, const struct sim_parallel *p,
		       const struct sim_cluster *c, const struct sim_shape *sh,
		       struct layer_time *lt)
{
	int sp = p->seq_parallel && sh->t > 1;
	int fp8 = p->precision == SIM_PRECISION_FP8 && c->gpu.fp8_flops_per_s > 0;
	double peak = c->gpu.bf16_flops_per_s;
	double lpeak = fp8 ? c->gpu.fp8_flops_per_s : peak;
	double ab = sim_act_bytes(p), elem = fp8 ? 1.0 : ab;
	double hbm = c->gpu.hbm_bytes_per_s > 0 ? c->gpu.hbm_bytes_per_s
						: peak / SIM_DEFAULT_FLOPS_PER_BYTE;
	double tok = sh->tok, h = sh->h, dh = sh->dh, f_l = sh->f / sh->t;
	double gemm, attn_f, attn_b, attn_re, elt_bytes, elt_f, host, hl = host_layer_s(c);
	double bh = sh->b * sh->a_l, dh50 = c->gpu.gemm_dim_half;
	int swiglu = m->mlp == SIM_MLP_SWIGLU, ncoll;
	struct sim_link tl, cl;

	/* The layer's GEMMs, column- then row-parallel over TP ranks
	 * (Shoeybi et al. 2019, sec. 3): QKV, output projection, MLP; fp8
	 * runs them at the fp8 rate (Transformer Engine keeps attention and
	 * the LM head in bf16). */
	gemm = sim_gemm_time_s(1, tok, (sh->a_l + 2.0 * sh->kv_l) * dh, h, elem, dh50, lpeak, hbm)
	       + sim_gemm_time_s(1, tok, h, sh->a_l * dh, elem, dh50, lpeak, hbm);
	if (m->mlp == SIM_MLP_SWIGLU)
		gemm += sim_gemm_time_s(1, tok, 2.0 * f_l, h, elem, dh50, lpeak, hbm);
	else
		gemm += sim_gemm_time_s(1, tok, f_l, h, elem, dh50, lpeak, hbm);
	gemm += sim_gemm_time_s(1, tok, h, f_l, elem, dh50, lpeak, hbm);

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
			 sim_flash_attn_s(sh->b, sh->a_l, sh->kv_l, sh->sl, sh->s, dh, ab, dh50,
					  peak, hbm);
		attn_b = SIM_ATTN_BWD * attn_f;
		attn_re = 0;
	} else if (p->flash) {
		/* the kernel generation the plan names, at its published speed
		 * on this architecture (sim_internal.h); bf16 at fp8 too, as
		 * Transformer Engine keeps attention in bf16 */
		enum sim_arch arch = sim_gpu_arch(&c->gpu);

		sim_attn_kernel_time_s(sim_attn_kernel_resolve(p->attn_kernel, arch), arch, sh->b,
				       sh->a_l, sh->sl, sh->s, dh, peak, &attn_f, &attn_b);
		attn_f *= window_share(m);
		attn_b *= window_share(m);
		attn_re = 0;
	} else {
		/* Megatron-LM's unfused path: the s x s scores are written,
		 * scaled, masked, soft-maxed and dropped out in HBM (9 bytes per
		 * score forward: fused softmax reads 2 writes 2, dropout reads 2
		 * writes 2 and a 1-byte mask), causal or not; wider elements
		 * scale it. */
		double scores = bh * sh->sl * sh->s * ab / 2.0;
		double products = sim_gemm_time_s(bh, sh->sl, sh->s, dh, ab, dh50, peak, hbm)
				  + sim_gemm_time_s(bh, sh->sl, dh, sh->s, ab, dh50, peak, hbm);

		attn_f = products + hbm_time_s(SIM_SOFTMAX_FWD_BYTES * scores, hbm, 2);
		attn_b = 2.0 * products + hbm_time_s(SIM_SOFTMAX_BWD_BYTES * scores, hbm, 2);
		attn_re = attn_f;
	}

	/* Element-wise work per token and hidden unit, forward
	 * (SIM_ELT_BYTES): two norms and two fused bias-dropout-residual adds.
	 * Without sequence parallelism every TP rank repeats it on all tokens.
	 * Backward moves SIM_ELT_BWD times as much.  A calibrated device
	 * (price_gpu.elt_bytes_per_s) runs them at the rate it measured. */
	elt_bytes = sim_layer_elt_bytes(swiglu, tok * h / (sp ? sh->t : 1), tok * f_l, ab);
	elt_f = hbm_time_s(elt_bytes, c->gpu.elt_bytes_per_s[swiglu] > 0
				      ? c->gpu.elt_bytes_per_s[swiglu] : hbm, SIM_ELT_KERNELS);
	lt->attn_fwd_s = attn_f;
	lt->attn_bwd_s = attn_b;
	lt->fwd_s = gemm + attn_f + elt_f;
	lt->bwd_s = 2.0 * gemm + attn_b + SIM_ELT_BWD * elt_f;
	/* fp8: every GEMM operand is cast first (sim_fp8_cast_bytes): the
	 * four GEMMs' inputs forward (h into QKV and fc1, the attention
	 * output into the projection, the activation into fc2), their output
	 * gradients backward (QKV's, h, fc1's, h) */
	if (fp8) {
		double qkv = (sh->a_l + 2.0 * sh->kv_l) * dh, fc1 = (swiglu ? 2.0 : 1.0) * f_l;

		lt->fwd_s += hbm_time_s(sim_fp8_cast_bytes(tok, 2.0 * h + sh->a_l * dh + f_l),
					hbm, 4);
		lt->bwd_s += hbm_time_s(sim_fp8_cast_bytes(tok, qkv + 2.0 * h + fc1), hbm, 4);
	}

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
	 * for each tensor-parallel collective); when the GPU work,
	 * communication included, is shorter, the GPU waits for the host. */
	ncoll = sh->t > 1 ? (sp ? 4 : 2) : 0;
	host = hl * (1.0 + ncoll * SIM_HOST_COLL_S / SIM_HOST_LAYER_S);
	if (lt->fwd_s + lt->tp_fwd_s < host)
		lt->fwd_s = host - lt->tp_fwd_s;
	host = hl * (2.0 + ncoll * SIM_HOST_COLL_S / SIM_HOST_LAYER_S);
	if (lt->bwd_s + lt->tp_fwd_s < host)
		lt->bwd_s = host - lt->tp_fwd_s;
	if (p->recompute == SIM_RECOMPUTE_FULL)
		lt->recompute_s = lt->fwd_s;
	else if (p->recompute == SIM_RECOMPUTE_SELECTIVE)
		lt->recompute_s = attn_re;
	else
		lt->recompute_s = 0;

	/* Context parallelism (ring attention as in Megatron-LM's CP): every
	 * rank sees all keys and values, (cp-1)/cp of them from the others,
	 * overlapped with its attention; backward moves KV again plus their
	 * gradients. */
	lt->cp_fwd_s = lt->cp_bwd_s = 0;
	if (sh->c > 1) {
		double kv_bytes = ab * sh->b * sh->s * 2.0 * sh->kv_l * dh;
		double xf, xb;

		sim_group_link(c, sh->c, sh->t, &cl);
		xf = sim_allgather_s(kv_bytes, sh->c, &cl);
		xb = 2.0 * xf;
		lt->cp_fwd_s = xf > attn_f ? xf - attn_f : 0;
		lt->cp_bwd_s = xb > attn_b ? xb - attn_b : 0;
	}
}

static void edge_time(const struct sim_parallel *p, const struct sim_cluster *c,
		      const struct sim_shape *sh, int first, int last,
		      struct edge_time *et)
{
	int sp = p->seq_parallel && sh->t > 1;
	double peak = c->gpu.bf16_flops_per_s;
	double hbm = c->gpu.hbm_bytes_per_s > 0 ? c->gpu.hbm_bytes_per_s
						: peak / SIM_DEFAULT_FLOPS_PER_BYTE;
	double tok = sh->tok, h = sh->h, v_l = sh->V / sh->t, ab = sim_act_bytes(p);
	double act = ab * tok * h, hl = host_layer_s(c);
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
		 * reduced backward. */
		et->compute_s += 3.0 * sim_gemm_time_s(1, tok, v_l, h, ab, c->gpu.gemm_dim_half,
						       peak, hbm)
				 + hbm_time_s(SIM_LOSS_BYTES * tok * v_l + 12.0 * tok * h, hbm, 6);
		et->tp_s += sp ? 2.0 * sim_allgather_s(act, sh->t, &tl)
			       : sim_allreduce_s(act, sh->t, &tl);
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
	double compute_s, tp_s, cp_s, total_s;
	double fwd_s, bwd_s;   /* compute split, for DP overlap */
};

static void stage_time(const struct sim_parallel *p, const struct layer_time *lt,
		       const struct edge_time *et, int layers, struct stage_time *st)
{
	int full = p->recompute == SIM_RECOMPUTE_FULL;

	st->fwd_s = layers * lt->fwd_s;
	st->bwd_s = layers * (lt->bwd_s + lt->recompute_s);
	st->compute_s = st->fwd_s + st->bwd_s + et->compute_s;
	st->tp_s = layers * lt->tp_fwd_s * (full ? 3.0 : 2.0) + et->tp_s;
	st->cp_s = layers * (lt->cp_fwd_s * (full ? 2.0 : 1.0) + lt->cp_bwd_s);
	st->total_s = st->compute_s + st->tp_s + st->cp_s;
}

/* Parameters held by the first and the last pipeline stage, per TP rank. */
static void stage_params(const struct sim_model *m, const struct sim_shape *sh,
			 double *first, double *last)
{
	double lp = sim_layer_params(m) / sh->t;
	double emb = (double)m->vocab * m->hidden / sh->t;

	*first = sh->layers_first * lp + emb + sim_input_params(m);
	if (sh->p == 1) {
		*first += sim_final_norm_params(m) + (m->tied_embeddings ? 0 : emb);
		*last = *first;
	} else {
		*last = sh->layers_last * lp + sim_final_norm_params(m) + emb;
	}
}

static double finite_or_zero(double x)
{
	return isfinite(x) ? x : 0;
}

void sim_step(const struct sim_model *m, const struct sim_parallel *p,
	      const struct sim_cluster *c, struct sim_result *out)
{
	struct sim_shape sh;
	struct layer_time lt;
	struct edge_time e_first, e_last, e_both, e_none;
	struct stage_time st[4], *bot;
	int n_st, i, M, zero = p->zero, ndp;
	double sum, params_first, params_last, params_stage, grad_bytes, weight_bytes;
	double hbm, peak = c->gpu.bf16_flops_per_s;
	double mfu_peak = sim_mfu_peak(&c->gpu);
	double dp_total, dp_exposed, shard, opt_s;
	double model_flops, hw_flops, tokens, step;
	struct sim_link dl, pl;
	struct sim_breakdown *bd = &out->breakdown;
	enum sim_recompute hw_rc;

	memset(out, 0, sizeof(*out));
	sim_shape_init(&sh, m, p);
	M = sh.micro;
	hbm = c->gpu.hbm_bytes_per_s > 0 ? c->gpu.hbm_bytes_per_s
					 : peak / SIM_DEFAULT_FLOPS_PER_BYTE;
	layer_time(m, p, c, &sh, &lt);

	/* Stages: first (embedding), middle ones, last (head); one stage
	 * holds both ends when there is no pipeline. */
	if (sh.p == 1) {
		edge_time(p, c, &sh, 1, 1, &e_both);
		stage_time(p, &lt, &e_both, m->layers, &st[0]);
		n_st = 1;
		sum = st[0].total_s;
	} else {
		edge_time(p, c, &sh, 1, 0, &e_first);
		edge_time(p, c, &sh, 0, 1, &e_last);
		edge_time(p, c, &sh, 0, 0, &e_none);
		stage_time(p, &lt, &e_first, sh.layers_first, &st[0]);
		stage_time(p, &lt, &e_last, sh.layers_last, &st[1]);
		stage_time(p, &lt, &e_none, sh.layers_base + 1, &st[2]);
		stage_time(p, &lt, &e_none, sh.layers_base, &st[3]);
		n_st = sh.mid_stages_long > 0 ? 3 : 2;
		if (sh.mid_stages > sh.mid_stages_long)
			n_st = 4;
		sum = st[0].total_s + st[1].total_s
		      + sh.mid_stages_long * st[2].total_s
		      + (sh.mid_stages - sh.mid_stages_long) * st[3].total_s;
	}
	bot = &st[0];
	for (i = 1; i < n_st; i++)
		if ((i != 2 || sh.mid_stages_long > 0) && st[i].total_s > bot->total_s)
			bot = &st[i];

	/* Pipeline schedule (Narayanan et al., SC'21, sec. 2.2): m micro-
	 * batches through p stages take (m - 1) t_max + sum_i t_i, so the
	 * bubble is (p - 1)/m of the ideal time for equal stages, (p-1)/(v m)
	 * with v interleaved chunks per GPU. */
	bd->compute_s = M * bot->compute_s;
	bd->tp_comm_s = M * bot->tp_s;
	bd->cp_comm_s = M * bot->cp_s;
	bd->pp_bubble_s = (sum - bot->total_s) / sh.v;

	/* Point-to-point sends between stages: one activation forward and one
	 * gradient backward per micro-batch and chunk, scattered over the TP
	 * ranks (sec. 4.1's scatter/gather optimisation). */
	if (sh.p > 1) {
		sim_group_link(c, sh.p, sh.t * sh.c, &pl);
		bd->pp_comm_s = 2.0 * M * sh.v * sim_p2p_s(sim_act_bytes(p) * sh.tok * sh.h / sh.t,
							   &pl);
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
	 * Gradients are reduced at their stored width (sim_grad_bytes). */
	ndp = sh.d * sh.c;
	stage_params(m, &sh, &params_first, &params_last);
	params_stage = params_first > params_last ? params_first : params_last;
	grad_bytes = sim_grad_bytes(p) * params_stage;
	weight_bytes = sim_weight_bytes(p) * params_stage;
	dp_total = dp_exposed = 0;
	if (ndp > 1) {
		int gpn = c->gpus_per_node;
		int span = sh.t * sh.c * sh.p;
		int k;

		/* How many of one DP x CP group's ranks share a node with TP
		 * innermost, then CP, PP, DP. */
		if (gpn >= span)
			k = sh.c * (gpn / span);
		else if (gpn >= sh.t * sh.c)
			k = sh.c;
		else
			k = gpn > sh.t ? gpn / sh.t : 1;
		sim_group_link_k(c, ndp, k, &dl);
		if (zero <= 2) {
			/* One all-reduce per gradient bucket, each paying the
			 * ring's latency. */
			double b_bytes = sim_grad_bytes(p) * SIM_DP_BUCKET_PARAMS;
			double buckets = ceil(grad_bytes / b_bytes);
			double ar = buckets * sim_allreduce_s(grad_bytes / buckets, ndp, &dl);
			double last_b = sim_allreduce_s(grad_bytes / buckets, ndp, &dl);
			double hidden = bot->bwd_s;

			dp_total = ar;
			dp_exposed = ar - hidden > last_b ? ar - hidden : last_b;
			/* A gather of the updated weights after the optimizer
			 * step leaves only the reduce-scatter under the
			 * backward; the gather, the same bytes, waits. */
			if (zero >= 1 && p->dp_overlap == SIM_DP_OVERLAP_SUMS) {
				double rs = buckets * sim_allgather_s(grad_bytes / buckets, ndp, &dl);
				double last_rs = sim_allgather_s(grad_bytes / buckets, ndp, &dl);

				dp_total = 2.0 * rs;
				dp_exposed = (rs - hidden > last_rs ? rs - hidden : last_rs) + rs;
			}
			/* A ZeRO-2 that keeps only its shard of the gradients
			 * reduce-scatters every micro-batch's as its backward
			 * ends (DeepSpeed issue #2252: "gradient reduction is
			 * required after every backward because of gradient
			 * partitioning"; the executor's trainer), each under
			 * its own backward but for its last bucket, the last
			 * micro-batch's as above. */
			if (zero == 2 && p->zero2_every_micro_batch && M > 1) {
				double rs = buckets * sim_allgather_s(grad_bytes / buckets, ndp, &dl);
				double last_rs = sim_allgather_s(grad_bytes / buckets, ndp, &dl);

				dp_total += (M - 1) * rs;
				dp_exposed += (M - 1) * (rs - hidden > last_rs ? rs - hidden : last_rs);
			}
		} else if (p->zero3_gather == SIM_ZERO3_TENSOR_SYNC) {
			/* One collective per parameter tensor: each matrix with
			 * its bias and each norm's weight and bias, plus the
			 * embedding and head, gathered in every forward, again in
			 * full recomputation's extra forward and in backward, its
			 * gradient reduce-scattered once.  Each waits for the GPU
			 * to finish before it starts (DeepSpeed PR #1188, 2021:
			 * "each all_gather calls torch.cuda.synchronize()"), so
			 * nothing overlaps, and each pays the ring's n - 1 step
			 * latencies plus a copy kernel per rank (PyTorch's list
			 * all_gather and reduce_scatter copy each rank's part). */
			double per_layer = 2.0 * (m->mlp == SIM_MLP_SWIGLU ? 5.0 : 4.0) + 4.0;
			double tensors = sh.layers_first * per_layer + 4.0;
			double gather = tensors * (sim_allgather_s(weight_bytes / tensors, ndp, &dl)
						   + (ndp - 1) * SIM_KERNEL_S);
			double scatter = tensors * (sim_allgather_s(grad_bytes / tensors, ndp, &dl)
						    + (ndp - 1) * SIM_KERNEL_S);
			int gathers = p->recompute == SIM_RECOMPUTE_FULL ? 3 : 2;

			dp_total = dp_exposed = M * (gathers * gather + scatter);
		} else {
			/* One collective per transformer block (and one for the
			 * embedding and head), prefetched under the compute:
			 * all-gather forward, all-gather and reduce-scatter
			 * backward; one block's gather is exposed each way. */
			double units = sh.layers_first + 1.0;
			double ag = units * sim_allgather_s(weight_bytes / units, ndp, &dl);
			double rs = units * sim_allgather_s(grad_bytes / units, ndp, &dl);
			double layer_ag = sim_allgather_s(sim_weight_bytes(p) * sim_layer_params(m) / sh.t,
							  ndp, &dl);
			double xf = ag - bot->fwd_s, xb = ag + rs - bot->bwd_s;

			dp_total = M * (2.0 * ag + rs);
			dp_exposed = M * ((xf > layer_ag ? xf : layer_ag)
					  + (xb > layer_ag ? xb : layer_ag));
		}
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
	 * rate a calibration of this device measured for it. */
	shard = params_stage / (zero >= 1 ? ndp : 1);
	opt_s = hbm_time_s(sim_optimizer_bytes(sim_weight_bytes(p), shard,
					       params_stage / (zero >= 2 ? ndp : 1)),
			   c->gpu.opt_bytes_per_s > 0 ? c->gpu.opt_bytes_per_s : hbm,
			   SIM_OPT_KERNELS);
	bd->optimizer_s = opt_s;

	step = bd->compute_s + bd->tp_comm_s + bd->cp_comm_s + bd->pp_bubble_s
	       + bd->pp_comm_s + bd->dp_comm_exposed_s + bd->optimizer_s;

	/* Model FLOPs count no recomputation (MFU); hardware FLOPs count what
	 * is recomputed (HFU).  Flash attention's own recomputation in its
	 * backward is not counted, and selective recomputation with flash
	 * recomputes nothing more. */
	hw_rc = p->recompute;
	if (hw_rc == SIM_RECOMPUTE_SELECTIVE && p->flash)
		hw_rc = SIM_RECOMPUTE_NONE;
	model_flops = sim_train_flops(m, p->gbs, SIM_RECOMPUTE_NONE);
	hw_flops = sim_train_flops(m, p->gbs, hw_rc);
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
	sim_memory_estimate(m, p, c, &sh, &out->memory);
	out->fits = out->memory.total <= out->memory.capacity;
}

/* ---- pieces for the event-driven replay (sim_event.c) ---------------- */

void sim_parts(const struct sim_model *m, const struct sim_parallel *p,
	       const struct sim_cluster *c, struct sim_parts *out)
{
	struct sim_shape sh;
	struct layer_time lt;
	struct edge_time first, last;

	sim_shape_init(&sh, m, p);
	layer_time(m, p, c, &sh, &lt);
	edge_time(p, c, &sh, 1, 0, &first);
	edge_time(p, c, &sh, 0, 1, &last);
	out->layer_fwd_s = lt.fwd_s;
	out->layer_bwd_s = lt.bwd_s;
	out->layer_recompute_s = lt.recompute_s;
	out->layer_attn_fwd_s = lt.attn_fwd_s;
	out->layer_attn_bwd_s = lt.attn_bwd_s;
	out->layer_tp_s = lt.tp_fwd_s;
	out->layer_cp_fwd_s = lt.cp_fwd_s;
	out->layer_cp_bwd_s = lt.cp_bwd_s;
	out->embed_compute_s = first.compute_s;
	out->embed_tp_s = first.tp_s;
	out->head_compute_s = last.compute_s;
	out->head_tp_s = last.tp_s;
}
