/*
 * sim_shape.c - what the simulator reads off a model's shapes alone:
 * parameter counts, training FLOPs, and how a parallel layout cuts the
 * layers into pipeline stages and the sequence and heads over ranks.
 *
 * Both the step-time model (sim.c) and the memory model (sim_memory.c)
 * build on it; it depends on neither.  No timing, no memory.
 *
 * It calls no other file of the simulator (it reads sim_cost.h's inline
 * element widths).
 */
#include "sim_cost.h"
#include "sim_shape.h"

void sim_model_facts_init(struct sim_model *m)
{
	m->pos = SIM_POS_ROPE;
	m->rotary_base = 10000;
	m->norm = SIM_NORM_RMSNORM;
	m->linear_bias = 0;
	m->dropout = 0;
	m->tokenizer[0] = '\0';
	m->window = 0;
	m->rotary_percent = 0;
	m->rope_scaling = SIM_ROPE_NONE;
	m->rope_factor = 0;
	m->rope_mscale = 0;
	m->rope_mscale_all_dim = 0;
	m->parallel_residual = 0;
	m->embedding_norm = 0;
}

double sim_qk_head_dim(const struct sim_model *m)
{
	if (m->kv_lora_rank > 0)
		return (double)m->qk_nope_dim + m->qk_rope_dim;
	return m->head_dim > 0 ? m->head_dim : (double)m->hidden / m->heads;
}

double sim_v_head_dim(const struct sim_model *m)
{
	return m->kv_lora_rank > 0 ? m->v_head_dim : sim_qk_head_dim(m);
}

/* Megatron-Core's _yarn_get_mscale: 0.1 mscale ln(scale) + 1, 1 at a
 * scale of 1 or less. */
static double yarn_mscale(double scale, double mscale)
{
	return scale <= 1 ? 1.0 : 0.1 * mscale * log(scale) + 1.0;
}

double sim_rope_attn_factor(const struct sim_model *m)
{
	if (m->pos != SIM_POS_ROPE || m->rope_scaling != SIM_ROPE_YARN)
		return 1.0;
	if (m->rope_mscale > 0 && m->rope_mscale_all_dim > 0)
		return yarn_mscale(m->rope_factor, m->rope_mscale) /
		       yarn_mscale(m->rope_factor, m->rope_mscale_all_dim);
	return yarn_mscale(m->rope_factor, 1.0);
}

int sim_rope_fused(const struct sim_model *m)
{
	if (m->kv_lora_rank > 0)
		return m->rope_scaling == SIM_ROPE_YARN;
	return m->rope_scaling != SIM_ROPE_YARN && sim_rope_attn_factor(m) == 1.0;
}

/* Weights of one norm over n elements: RMSNorm's scale, LayerNorm's
 * scale and bias (Ba et al. 2016). */
static double norm_params(const struct sim_model *m, double n)
{
	return (m->norm == SIM_NORM_LAYERNORM ? 2.0 : 1.0) * n;
}

/* A linear layer of in x out, and its bias when the model has them. */
static double linear_params(const struct sim_model *m, double in, double out)
{
	return in * out + (m->linear_bias ? out : 0);
}

double sim_attn_params(const struct sim_model *m)
{
	double h = m->hidden, a = m->heads, qk = sim_qk_head_dim(m), v = sim_v_head_dim(m);
	double n;

	if (m->kv_lora_rank > 0) {
		/* DeepSeek-V2, sec. 2.1.2-2.1.3 (its eqs. 9-14): queries down to
		 * q_lora_rank and up to the heads' nope + rope widths (or straight
		 * from h without the rank), keys and values down to kv_lora_rank
		 * beside one shared rope key, each latent normed, then up to each
		 * head's nope key and value; the output projection from the
		 * heads' values. */
		double ql = m->q_lora_rank, kl = m->kv_lora_rank;

		n = ql > 0 ? linear_params(m, h, ql) + norm_params(m, ql) + linear_params(m, ql, a * qk)
			   : linear_params(m, h, a * qk);
		n += linear_params(m, h, kl + m->qk_rope_dim) + norm_params(m, kl)
		     + linear_params(m, kl, a * (m->qk_nope_dim + v));
	} else {
		/* Q, then K and V of the KV heads (GQA shrinks them) */
		n = linear_params(m, h, a * qk) + 2.0 * linear_params(m, h, m->kv_heads * qk);
	}
	n += linear_params(m, a * v, h);
	/* GPT-OSS's sinks: one learned logit per head joins every softmax */
	if (m->attn_sinks)
		n += a;
	return n;
}

double sim_mlp_params(const struct sim_model *m, double width)
{
	/* GELU: up and down; SwiGLU (Shazeer 2020): gate, up and down;
	 * biases on the outputs of each */
	int swiglu = m->mlp == SIM_MLP_SWIGLU;

	return (swiglu ? 2.0 : 1.0) * linear_params(m, m->hidden, width)
	       + linear_params(m, width, m->hidden);
}

/* Two norms per layer, before attention and before the MLP. */
static double layer_norm_params(const struct sim_model *m)
{
	return 2.0 * norm_params(m, m->hidden);
}

double sim_layer_params(const struct sim_model *m)
{
	return sim_attn_params(m) + sim_mlp_params(m, m->ffn) + layer_norm_params(m);
}

double sim_moe_layer_params(const struct sim_model *m, double routed)
{
	double shared_w = m->shared_ffn > 0 ? m->shared_ffn : m->expert_ffn;

	/* routed of the experts, every shared one, and the router: a linear
	 * map from h to one logit per expert (Shazeer et al. 2017; Fedus et
	 * al. 2022, Switch Transformer, sec. 2.1) */
	return sim_attn_params(m) + routed * sim_mlp_params(m, m->expert_ffn)
	       + m->shared_experts * sim_mlp_params(m, shared_w)
	       + linear_params(m, m->hidden, m->experts) + layer_norm_params(m);
}

int sim_dense_layer_count(const struct sim_model *m)
{
	if (m->experts < 1)
		return m->layers;
	return m->dense_layers < m->layers ? m->dense_layers : m->layers;
}

double sim_final_norm_params(const struct sim_model *m)
{
	return norm_params(m, m->hidden);
}

double sim_input_params(const struct sim_model *m)
{
	return (m->pos == SIM_POS_LEARNED ? (double)m->seq * m->hidden : 0) +
	       (m->embedding_norm ? sim_final_norm_params(m) : 0);
}

int sim_window_layers(const struct sim_model *m)
{
	if (!(m->window > 0 && m->window < m->seq))
		return 0;
	/* every window_full_every-th layer (the n-th, 2n-th, ...) is full */
	return m->window_full_every > 0 ? m->layers - m->layers / m->window_full_every : m->layers;
}

double sim_attention_span(const struct sim_model *m)
{
	int nw = sim_window_layers(m);

	return ((double)nw * m->window + (double)(m->layers - nw) * m->seq) / m->layers;
}

/* Parameters of the layers, routed experts counted routed of each MoE
 * layer's. */
static double layers_params(const struct sim_model *m, double routed)
{
	int nd = sim_dense_layer_count(m);

	return nd * sim_layer_params(m) + (m->layers - nd) * sim_moe_layer_params(m, routed);
}

static int has_layers(const struct sim_model *m)
{
	return m->layers >= 1 && m->hidden >= 1 && m->heads >= 1 && m->kv_heads >= 1;
}

double sim_model_params(const struct sim_model *m)
{
	double emb = (double)m->vocab * m->hidden;

	if (!has_layers(m))
		return 0;
	/* Layers, input embedding with its position table and norm, LM head
	 * unless tied, final norm. */
	return layers_params(m, m->experts) + emb + sim_input_params(m)
	       + (m->tied_embeddings ? 0 : emb) + sim_final_norm_params(m);
}

double sim_model_active_params(const struct sim_model *m)
{
	if (!has_layers(m))
		return 0;
	/* the top_k routed experts of each MoE layer, the LM head (tied or
	 * not, it is a GEMM every token passes), the final norm */
	return layers_params(m, m->top_k) + (double)m->vocab * m->hidden
	       + sim_final_norm_params(m);
}

double sim_mtp_params(const struct sim_model *m)
{
	double h = m->hidden, layer;

	if (m->mtp_layers < 1 || !has_layers(m))
		return 0;
	/* DeepSeek-V3, sec. 2.2: each module norms the previous depth's
	 * hidden state and the next token's embedding, projects their
	 * concatenation (2h) to h, runs one transformer block and, before
	 * the shared head, a final norm (the released weights' enorm, hnorm,
	 * eh_proj and shared_head.norm). */
	layer = m->experts > 0 ? sim_moe_layer_params(m, m->experts) : sim_layer_params(m);
	return m->mtp_layers * (layer + linear_params(m, 2.0 * h, h) + 3.0 * norm_params(m, h));
}

#define WHY SIM_WHY

/* Refuses a feature's field set without the feature. */
#define NONE_WITHOUT(field, feature) do { if (m->field != 0) \
	WHY(#field ": expected 0 without " feature ", found %d", (int)m->field); } while (0)

/* The router's and the gated activation's facts (struct sim_model):
 * each within its range, the router's only with experts, group routing
 * picking fewer groups than there are, in as many as divide the experts,
 * the GLU's only with a gated MLP. */
static enum rc router_check(const struct sim_model *m, char *why, size_t size)
{
	if ((unsigned)m->router_score > SIM_ROUTER_SIGMOID)
		WHY("router_score: expected softmax or sigmoid, found %d", (int)m->router_score);
	if ((unsigned)m->router_balance > SIM_BALANCE_NONE)
		WHY("router_balance: expected one of aux_loss, seq_aux_loss, global_aux_loss or "
		    "none, found %d", (int)m->router_balance);
	if (!(m->router_aux_coeff >= 0 && m->router_aux_coeff <= 10))
		WHY("router_aux_coeff: expected 0 to 10, found %g", m->router_aux_coeff);
	if (m->router_expert_bias != 0 && m->router_expert_bias != 1)
		WHY("router_expert_bias: expected 0 or 1, found %d", m->router_expert_bias);
	if (!(m->router_bias_rate >= 0 && m->router_bias_rate <= 1))
		WHY("router_bias_rate: expected 0 to 1, found %g", m->router_bias_rate);
	if (!(m->router_topk_scale >= 0 && m->router_topk_scale <= 1000))
		WHY("router_topk_scale: expected 0 to 1000, found %g", m->router_topk_scale);
	if (m->qk_norm != 0 && m->qk_norm != 1)
		WHY("qk_norm: expected 0 or 1, found %d", m->qk_norm);
	if (m->tokenizer_gated != 0 && m->tokenizer_gated != 1)
		WHY("tokenizer_gated: expected 0 or 1, found %d", m->tokenizer_gated);
	if (m->tokenizer_gated && !m->tokenizer[0])
		WHY("tokenizer_gated: expected a tokenizer to be gated, found none");
	if ((unsigned)m->glu_act > SIM_GLU_QUICK_GELU)
		WHY("glu_act: expected silu or quick_gelu, found %d", (int)m->glu_act);
	if (!(m->glu_offset >= 0 && m->glu_offset <= 100))
		WHY("glu_offset: expected 0 to 100, found %g", m->glu_offset);
	if (!(m->glu_clamp >= 0 && m->glu_clamp <= 1e6))
		WHY("glu_clamp: expected 0 (none) to 1e6, found %g", m->glu_clamp);
	if (m->mlp != SIM_MLP_SWIGLU && (m->glu_act || m->glu_offset > 0 || m->glu_clamp > 0))
		WHY("glu_act: expected silu, no offset and no clamp without a gated MLP (swiglu)");
	if (m->experts == 0) {
		NONE_WITHOUT(router_score, "experts");
		NONE_WITHOUT(router_balance, "experts");
		NONE_WITHOUT(router_expert_bias, "experts");
		NONE_WITHOUT(router_groups, "experts");
		NONE_WITHOUT(router_group_topk, "experts");
		if (m->router_aux_coeff > 0 || m->router_bias_rate > 0 || m->router_topk_scale > 0)
			WHY("router_aux_coeff: expected no router coefficients without experts");
		return RC_OK;
	}
	if (m->router_bias_rate > 0 && !m->router_expert_bias)
		WHY("router_bias_rate: expected 0 without an expert bias (router_expert_bias)");
	if (m->router_groups < 0 || m->router_groups > m->experts ||
	    (m->router_groups > 0 && m->experts % m->router_groups != 0))
		WHY("router_groups: expected 0 or a divisor of experts %d, found %d", m->experts,
		    m->router_groups);
	if (m->router_group_topk < 0 || m->router_group_topk > m->router_groups ||
	    (m->router_groups > 0 && m->router_group_topk < 1))
		WHY("router_group_topk: expected 1 to router_groups %d (0 without groups), found %d",
		    m->router_groups, m->router_group_topk);
	return RC_OK;
}

/* RoPE's scaling (struct sim_model): a known kind, only with RoPE; a
 * factor of 1 to 1000 with scaling and 0 without; mscale and
 * mscale_all_dim of 0 (unstated) to 100, only with YaRN. */
static enum rc rope_check(const struct sim_model *m, char *why, size_t size)
{
	if ((unsigned)m->rope_scaling > SIM_ROPE_YARN)
		WHY("rope_scaling: expected none, linear, llama3 or yarn, found %d",
		    (int)m->rope_scaling);
	if (m->pos != SIM_POS_ROPE && m->rope_scaling != SIM_ROPE_NONE)
		WHY("rope_scaling: expected none without rope, found %s",
		    sim_rope_scaling_names[m->rope_scaling]);
	if (m->rope_scaling == SIM_ROPE_NONE ? m->rope_factor != 0
					     : !(m->rope_factor >= 1 && m->rope_factor <= 1000))
		WHY("rope_factor: expected %s, found %g",
		    m->rope_scaling == SIM_ROPE_NONE ? "0 without rope_scaling" : "1 to 1000",
		    m->rope_factor);
	if (!(m->rope_mscale >= 0 && m->rope_mscale <= 100))
		WHY("rope_mscale: expected 0 (unstated) to 100, found %g", m->rope_mscale);
	if (!(m->rope_mscale_all_dim >= 0 && m->rope_mscale_all_dim <= 100))
		WHY("rope_mscale_all_dim: expected 0 (unstated) to 100, found %g",
		    m->rope_mscale_all_dim);
	if (m->rope_scaling != SIM_ROPE_YARN && (m->rope_mscale > 0 || m->rope_mscale_all_dim > 0))
		WHY("rope_mscale: expected 0 without yarn rope_scaling");
	return RC_OK;
}

enum rc sim_model_check(const struct sim_model *m, char *why, size_t size)
{
	int explicit_heads = m->head_dim > 0 || m->kv_lora_rank > 0;

	if (why && size)
		why[0] = '\0';
	if (m->layers < 1)
		WHY("layers: expected an integer >= 1, found %d", m->layers);
	if (m->hidden < 1)
		WHY("hidden: expected an integer >= 1, found %d", m->hidden);
	if (m->heads < 1 || (!explicit_heads && m->hidden % m->heads))
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
	if (m->window < 0)
		WHY("window: expected an integer >= 0, found %d", m->window);
	if (m->window_full_every < 0)
		WHY("window_full_every: expected an integer >= 0, found %d", m->window_full_every);
	if (!m->window)
		NONE_WITHOUT(window_full_every, "a sliding window");
	if (m->head_dim < 0)
		WHY("head_dim: expected an integer >= 0, found %d", m->head_dim);
	if (m->attn_sinks != 0 && m->attn_sinks != 1)
		WHY("attn_sinks: expected 0 or 1, found %d", m->attn_sinks);

	if (m->kv_lora_rank < 0)
		WHY("kv_lora_rank: expected an integer >= 0, found %d", m->kv_lora_rank);
	if (m->kv_lora_rank > 0) {
		if (m->q_lora_rank < 0)
			WHY("q_lora_rank: expected an integer >= 0, found %d", m->q_lora_rank);
		if (m->qk_nope_dim < 1)
			WHY("qk_nope_dim: expected an integer >= 1 with MLA, found %d", m->qk_nope_dim);
		if (m->qk_rope_dim < 1)
			WHY("qk_rope_dim: expected an integer >= 1 with MLA, found %d", m->qk_rope_dim);
		if (m->v_head_dim < 1)
			WHY("v_head_dim: expected an integer >= 1 with MLA, found %d", m->v_head_dim);
		if (m->kv_heads != m->heads)
			WHY("kv_heads: expected heads %d with MLA (a key and value per head), found %d",
			    m->heads, m->kv_heads);
		if (m->head_dim)
			WHY("head_dim: expected 0 with MLA (qk_nope_dim + qk_rope_dim), found %d",
			    m->head_dim);
	} else {
		NONE_WITHOUT(q_lora_rank, "MLA (kv_lora_rank)");
		NONE_WITHOUT(qk_nope_dim, "MLA (kv_lora_rank)");
		NONE_WITHOUT(qk_rope_dim, "MLA (kv_lora_rank)");
		NONE_WITHOUT(v_head_dim, "MLA (kv_lora_rank)");
	}

	if (m->experts < 0)
		WHY("experts: expected an integer >= 0, found %d", m->experts);
	if (m->experts > 0) {
		if (m->top_k < 1 || m->top_k > m->experts)
			WHY("top_k: expected 1 to experts %d, found %d", m->experts, m->top_k);
		if (m->expert_ffn < 1)
			WHY("expert_ffn: expected an integer >= 1 with experts, found %d",
			    m->expert_ffn);
		if (m->shared_experts < 0)
			WHY("shared_experts: expected an integer >= 0, found %d", m->shared_experts);
		if (m->shared_ffn < 0)
			WHY("shared_ffn: expected an integer >= 0, found %d", m->shared_ffn);
		if (!m->shared_experts)
			NONE_WITHOUT(shared_ffn, "shared experts");
		if (m->dense_layers < 0 || m->dense_layers >= m->layers)
			WHY("dense_layers: expected 0 to layers - 1 = %d, found %d", m->layers - 1,
			    m->dense_layers);
	} else {
		NONE_WITHOUT(top_k, "experts");
		NONE_WITHOUT(expert_ffn, "experts");
		NONE_WITHOUT(shared_experts, "experts");
		NONE_WITHOUT(shared_ffn, "experts");
		NONE_WITHOUT(dense_layers, "experts");
		NONE_WITHOUT(router_pre_softmax, "experts");
	}
	if (m->mtp_layers < 0)
		WHY("mtp_layers: expected an integer >= 0, found %d", m->mtp_layers);
	if (rope_check(m, why, size) != RC_OK)
		return RC_INPUT;
	return router_check(m, why, size);
}

/* Forward FLOPs of one layer's attention projections over s tokens: 2 a
 * multiply-add per weight (Narayanan et al., SC'21, sec. 5.1), from the
 * same shapes sim_attn_params counts. */
static double attn_proj_flops(const struct sim_model *m, double s)
{
	double h = m->hidden, a = m->heads, qk = sim_qk_head_dim(m), v = sim_v_head_dim(m);
	double w;

	if (m->kv_lora_rank > 0) {
		double ql = m->q_lora_rank, kl = m->kv_lora_rank;

		w = ql > 0 ? h * ql + ql * a * qk : h * a * qk;
		w += h * (kl + m->qk_rope_dim) + kl * a * (m->qk_nope_dim + v);
	} else {
		w = h * a * qk + 2.0 * h * m->kv_heads * qk;
	}
	return 2.0 * s * (w + a * v * h);
}

/* Forward FLOPs of one MLP block over s tokens: the dense MLP of width
 * ffn, or the MoE: each token's top_k routed experts, the shared ones and
 * the router's logits (Fedus et al. 2022, sec. 2.1: a token's compute is
 * its experts', not all of them). */
static double mlp_flops(const struct sim_model *m, double s, int moe)
{
	double per = (m->mlp == SIM_MLP_SWIGLU ? 3.0 : 2.0) * 2.0 * s * m->hidden;
	double shared_w = m->shared_ffn > 0 ? m->shared_ffn : m->expert_ffn;

	if (!moe)
		return per * m->ffn;
	return per * ((double)m->top_k * m->expert_ffn + (double)m->shared_experts * shared_w)
	       + 2.0 * s * m->hidden * m->experts;
}

double sim_train_flops(const struct sim_model *m, double sequences,
		       enum sim_recompute recompute)
{
	double s = m->seq, h = m->hidden, V = m->vocab;
	double a = m->heads, qk = sim_qk_head_dim(m), v = sim_v_head_dim(m);
	int nd = sim_dense_layer_count(m), nm = m->layers - nd;
	double proj, attn, layers, logits, mtp = 0, total;

	/* Narayanan et al., SC'21, sec. 5.1: a GEMM (m x k)(k x n) is 2mnk
	 * FLOPs; backward is twice forward.  Per sequence of s tokens:
	 * QKV 2 s h (h + 2 kv_dim) (GQA shrinks K and V), scores Q K^T and
	 * attention over values 2 s^2 h each (the full s x s product, as
	 * eq. 3 counts it), output projection 2 s h^2, MLP 2 s h f per matrix
	 * (2 matrices for GELU, 3 for SwiGLU), logits 2 s h V.  For GPT shapes
	 * (kv_dim = h, f = 4h) the sum over l layers times 3 is eq. 3:
	 * 72 B s l h^2 (1 + s/(6h) + V/(12 l h)).  The projections follow the
	 * attention's own shapes (head_dim, MLA's latents: DeepSeek-V2, sec.
	 * 2.1); the scores count the query/key head width and the values the
	 * value head width.  A sliding window w < s bounds each query's keys
	 * to w (Jiang et al. 2023, sec. 2) on the layers that have it: the
	 * scores and values count s x w there. */
	proj = attn_proj_flops(m, s);
	attn = 2.0 * s * sim_attention_span(m) * a * (qk + v);
	layers = m->layers * (proj + attn) + nd * mlp_flops(m, s, 0) + nm * mlp_flops(m, s, 1);
	logits = 2.0 * s * h * V;
	/* DeepSeek-V3, sec. 2.2: each MTP module projects [h; embedding] to h
	 * (2 s 2h h), runs one more layer over the full sequence and its own
	 * logits through the shared head. */
	if (m->mtp_layers > 0)
		mtp = m->mtp_layers * (2.0 * s * 2.0 * h * h + proj + 2.0 * s * s * a * (qk + v)
				       + mlp_flops(m, s, m->experts > 0) + logits);
	total = 3.0 * (layers + logits + mtp);
	/* Eq. 3's recomputation variant: one more forward of every layer (not
	 * of the logits), i.e. 4/3 on the layer terms.  Selective
	 * recomputation (Korthikanti et al. 2022, sec. 4.2) redoes only the
	 * attention scores and values. */
	if (recompute == SIM_RECOMPUTE_FULL)
		total += layers;
	else if (recompute == SIM_RECOMPUTE_SELECTIVE)
		total += m->layers * attn;
	return total * sequences;
}

/* ---- layers over pipeline stages ----------------------------------- */

/* layers over pp stages: the middle ones first, then the first */
static void split_layers(struct sim_shape *sh, int layers, int pp)
{
	int rem = layers % pp;

	sh->layers_base = layers / pp;
	sh->mid_stages = pp > 2 ? pp - 2 : 0;
	sh->mid_stages_long = rem < sh->mid_stages ? rem : sh->mid_stages;
	sh->layers_first = sh->layers_base + (rem > sh->mid_stages);
	sh->layers_last = sh->layers_base;
}

void sim_shape_init(struct sim_shape *sh, const struct sim_model *m,
		    const struct sim_parallel *p)
{

	sh->t = p->tp;
	sh->p = p->pp;
	sh->d = p->dp;
	sh->c = p->cp;
	sh->e = p->ep > 0 ? p->ep : 1;
	sh->et = p->etp > 0 ? p->etp : 1;
	sh->ed = p->tp * p->cp * p->dp / (sh->e * sh->et);
	if (sh->ed < 1)
		sh->ed = 1;
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
	sh->dh = sim_qk_head_dim(m);
	sh->dv = sim_v_head_dim(m);
	sh->lin_bytes = sim_act_bytes(p);
	sh->a_l = (double)m->heads / p->tp;
	sh->kv_l = m->kv_heads >= p->tp ? (double)m->kv_heads / p->tp : 1.0;
	sh->layers = m->layers;
	sh->layer_params = sim_layer_params(m);
	sh->moe_rest_params = sh->routed_params = 0;
	if (m->experts > 0) {
		sh->moe_rest_params = sim_moe_layer_params(m, 0);
		sh->routed_params = m->experts * sim_mlp_params(m, m->expert_ffn);
	}
	split_layers(sh, m->layers, p->pp);
	sh->chunk_last = sh->chunk_even = 0;
	if (p->pp_last_layers > 0 && p->pp > 1) {
		int n = p->pp * p->interleave;

		sh->chunk_last = p->pp_last_layers;
		sh->chunk_even = (m->layers - sh->chunk_last) / (n - 1);
		sh->layers_base = sh->layers_first = sh->chunk_even * p->interleave;
		sh->mid_stages_long = 0;
		sh->layers_last = sh->chunk_even * (p->interleave - 1) + sh->chunk_last;
	}
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

	if (sh->chunk_last > 0)
		return stage == sh->p - 1 && chunk == sh->v - 1 ? sh->chunk_last : sh->chunk_even;
	/* the first stage's short chunks lead: its first chunk holds the
	 * embedding (with as many chunks as layers plus one, nothing else) */
	if (stage == 0 && sh->p > 1)
		return n / sh->v + (chunk >= sh->v - n % sh->v);
	return n / sh->v + (chunk < n % sh->v);
}

int sim_front_filled_last(const struct sim_model *m, int pp, int v)
{
	int n = pp * v, c, last;

	if (pp < 2 || v < 1 || m->layers % n == 0)
		return 0;
	c = (m->layers + n - 1) / n;
	last = m->layers - (n - 1) * c;
	return last > 0 ? last : 0;
}

int sim_max_interleave(const struct sim_model *m, int pp)
{
	struct sim_shape sh = { .p = pp };
	int v;

	if (pp < 2)
		return 1;
	split_layers(&sh, m->layers, pp);
	v = (sh.layers_first < sh.layers_last ? sh.layers_first : sh.layers_last) + 1;
	for (int s = 1; s < pp - 1; s++)
		if (sim_stage_layers(&sh, s) < v)
			v = sim_stage_layers(&sh, s);
	return v;
}

int sim_virtual_stage_layers(const struct sim_model *m, const struct sim_parallel *p, int k)
{
	struct sim_shape sh;

	sim_shape_init(&sh, m, p);
	return sim_chunk_layers(&sh, k % p->pp, k / p->pp);
}

int sim_stage_dense_layers(const struct sim_shape *sh, int dense, int stage)
{
	int start = 0, n = 0;

	if (dense >= sh->layers)
		return sim_stage_layers(sh, stage);
	/* Megatron-LM's interleaved schedule gives virtual stage k = chunk
	 * k / p of stage k % p the model's k-th run of layers (Narayanan et
	 * al., SC'21, sec. 2.2.2) */
	for (int k = 0; start < dense && k < sh->p * sh->v; k++) {
		int len = sim_chunk_layers(sh, k % sh->p, k / sh->p);

		if (k % sh->p == stage)
			n += (start + len < dense ? start + len : dense) - start;
		start += len;
	}
	return n;
}

void sim_stage_params(const struct sim_model *m, const struct sim_shape *sh, int layers,
		      int dense, int first, int last, double *tp_params, double *expert_params)
{
	double emb = (double)m->vocab * m->hidden / sh->t;
	double routed = sh->routed_params, ex = routed / ((double)sh->e * sh->et);
	int moe = layers - dense;

	*tp_params = (dense * sh->layer_params + moe * sh->moe_rest_params) / sh->t;
	*expert_params = moe * ex;
	if (first)
		*tp_params += emb + sim_input_params(m);
	if (last) {
		/* The LM head; with tied embeddings and more than one stage
		 * Megatron keeps a copy of the embedding on the last stage. */
		*tp_params += sim_final_norm_params(m) + (!m->tied_embeddings || !first ? emb : 0);
		if (m->mtp_layers > 0) {
			*tp_params += (sim_mtp_params(m) - m->mtp_layers * routed) / sh->t;
			*expert_params += m->mtp_layers * ex;
		}
	}
}
