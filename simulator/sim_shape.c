/*
 * sim_shape.c - what the simulator reads off a model's shapes alone:
 * parameter counts, training FLOPs, and how a parallel layout cuts the
 * layers into pipeline stages and the sequence and heads over ranks.
 *
 * Both the step-time model (sim.c) and the memory model (sim_memory.c)
 * build on it; it depends on neither.  No timing, no memory.
 */
#include "sim_internal.h"

void sim_model_facts_init(struct sim_model *m)
{
	m->pos = SIM_POS_ROPE;
	m->rotary_base = 10000;
	m->norm = SIM_NORM_RMSNORM;
	m->linear_bias = 0;
	m->dropout = 0;
	m->tokenizer[0] = '\0';
	m->window = 0;
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

double sim_position_params(const struct sim_model *m)
{
	return m->pos == SIM_POS_LEARNED ? (double)m->seq * m->hidden : 0;
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
	/* Layers, input embedding and position table, LM head unless tied,
	 * final norm. */
	return m->layers * sim_layer_params(m) + emb + sim_position_params(m)
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

/* ---- layers over pipeline stages ----------------------------------- */

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
