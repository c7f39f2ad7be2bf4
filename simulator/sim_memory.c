/*
 * sim_memory.c - memory per GPU of a training plan: model states by ZeRO
 * stage (the routed experts' split over EP x ETP and sharded over the
 * expert data-parallel ranks), activations by recomputation mode and
 * pipeline schedule (an MoE layer's of its routed token copies and its
 * dispatch buffers), the loss's buffers as the trainer's loss keeps them
 * (sim_loss_cost) where they outgrow one layer's backward, and a fixed
 * CUDA context plus allocator slack.
 *
 * It sizes the fullest pipeline stage (the first, which holds the most
 * micro-batches in flight, or the last, which holds the logits).  It does
 * not model allocator behaviour beyond a constant fraction, optimizer or
 * activation offload, the recomputation of whole MoE blocks or shared
 * experts, or weights kept only in fp8 (with MXFP8, Megatron-Core keeps a
 * row- and a column-wise copy, about the bf16 weight's 2 bytes); fine-tuning's
 * frozen weights and offloaded states are sim_finetune.c's.
 *
 * It calls down only: sim_cost.c, sim_shape.c and sim_finetune.c.
 */
#include "sim_cost.h"
#include "sim_finetune.h"
#include "sim_memory.h"
#include "sim_shape.h"

/* Widths per token of one layer's attention tensors on one GPU: Q and the
 * projection's input of the local heads, K and V of the local KV heads
 * (MLA's per-head keys and values, decompressed), and MLA's latents,
 * which every TP rank keeps whole for the up-projections' backward. */
static double attn_act_elems(const struct sim_model *m, const struct sim_shape *sh)
{
	double qk = sh->dh, v = sh->dv;
	double n = sh->a_l * qk + sh->kv_l * (qk + v) + sh->a_l * v;

	if (m->kv_lora_rank > 0)
		n += (double)m->q_lora_rank + m->kv_lora_rank + m->qk_rope_dim;
	return n;
}

/* The recomputed modules of p (none unless recompute is selective). */
static unsigned recomputed(const struct sim_parallel *p)
{
	return p->recompute == SIM_RECOMPUTE_SELECTIVE ? p->recompute_modules : 0;
}

/* Bytes per token one layer's attention keeps on one GPU: Q, K and V
 * (flash attention's inputs, e bytes each element) unless MLA's up-
 * projections are recomputed from the latents (Megatron-Core's
 * mla_up_proj), the attention output (flash attention's, e) and the
 * output projection's quantized copy of it (lin, when lin < e: the same
 * tensor otherwise), MLA's latents as the up-projections' inputs (lin). */
static double attn_kept_bytes(const struct sim_model *m, const struct sim_parallel *p,
			      const struct sim_shape *sh, double e)
{
	double qk = sh->dh, v = sh->dv, lin = sh->lin_bytes, o = sh->a_l * v;
	double n = e * o + (lin < e ? lin * o : 0);

	if (!(m->kv_lora_rank > 0 && (recomputed(p) & SIM_RECOMPUTE_MLA_UP_PROJ)))
		n += e * (sh->a_l * qk + sh->kv_l * (qk + v));
	if (m->kv_lora_rank > 0)
		n += lin * ((double)m->q_lora_rank + m->kv_lora_rank + m->qk_rope_dim);
	return n;
}

/* Bytes per token an MLP block keeps for its backward on one GPU, each
 * MLP of width w keeping its first GEMM's output (the activation's input:
 * GELU's w, SwiGLU's gate and up 2 w; Korthikanti et al. 2022, sec. 4.1,
 * at e bytes) and the second GEMM's input (the activation's output, w, at
 * lin) unless the activation is recomputed.  A dense MLP recomputed
 * whole (mlp) keeps neither.  In an MoE block each token's top_k copies
 * go to their experts (the tokens split over the TP ranks, Megatron-
 * Core's MoE layers running sequence-parallel, the busiest EP rank
 * getting moe_imbalance times the mean), each copy keeping its permuted
 * input (h, at lin) and its expert's tensors at width expert_ffn / etp;
 * not its output, as Megatron-Core applies the routing weights inside
 * the activation (the memory-efficient permutation of the Megatron-Core
 * MoE report, Yan et al. 2026, arXiv:2603.07685: y = W2 (p phi(W1 x)),
 * whose weight gradient needs no saved expert output).  The shared
 * experts keep what a dense MLP of their summed width does. */
static double mlp_kept_bytes(const struct sim_model *m, const struct sim_parallel *p,
			     const struct sim_shape *sh, int moe, double e)
{
	double up = m->mlp == SIM_MLP_SWIGLU ? 2.0 : 1.0, lin = sh->lin_bytes;
	double shared = (double)m->shared_experts * (m->shared_ffn > 0 ? m->shared_ffn : m->expert_ffn);
	double w = (double)m->expert_ffn / sh->et;
	unsigned rc = recomputed(p);

	if (!moe)
		return rc & SIM_RECOMPUTE_MLP ? 0 : (up * e + lin) * sh->f / sh->t;
	return m->top_k * sim_moe_imbalance(p) / sh->t
	       * (lin * sh->h + up * e * w + (rc & SIM_RECOMPUTE_MOE_ACT ? 0 : lin * w))
	       + (up * e + lin) * shared / sh->t;
}

/* Elements per token of an MLP block's tensors on one GPU, for the
 * gradients its backward works on (layer_grad_bytes): the dense MLP's
 * activation input and output, or every routed copy's input, output and
 * expert tensors and the shared experts'. */
static double mlp_act_elems(const struct sim_model *m, const struct sim_parallel *p,
			    const struct sim_shape *sh, int moe)
{
	double per = m->mlp == SIM_MLP_SWIGLU ? 3.0 : 2.0;
	double shared = (double)m->shared_experts * (m->shared_ffn > 0 ? m->shared_ffn : m->expert_ffn);

	if (!moe)
		return per * sh->f / sh->t;
	return m->top_k * sim_moe_imbalance(p) / sh->t * (2.0 * sh->h + per * m->expert_ffn / sh->et)
	       + per * shared / sh->t;
}

double sim_layer_activation_bytes(const struct sim_model *m,
				  const struct sim_parallel *p,
				  const struct sim_shape *sh, int moe)
{
	int sp = p->seq_parallel && sh->t > 1;
	double tok = sh->tok, h = sh->h, e = sim_act_bytes(p);
	double rep, split, s2;

	/* Korthikanti et al. 2022, sec. 4.1: per layer and micro-batch,
	 * s b h (34 + 5 a s / h) bytes.  The 34 splits into 10 sbh outside
	 * the tensor-parallel region (two layer-norm inputs 4, QKV and MLP
	 * inputs 4, two dropout masks 2) and 24 sbh inside it (Q, K, V 6,
	 * output-projection input 2, GELU input and output 16).  Here K and V
	 * use the KV heads (GQA) and the heads their own widths, and the MLP
	 * terms the block's own tensors (mlp_kept_bytes).  The paper's 2 bytes
	 * are a 16-bit element: e bytes here (act_bytes_per_element); the
	 * 1-byte dropout masks stay 1, and exist only with dropout; a linear
	 * layer's input kept for its weight gradient is lin_bytes, the
	 * quantized operand at a low precision.  Recomputing the norms
	 * (Megatron-Core's layernorm module) drops the QKV and MLP inputs. */
	if (p->recompute == SIM_RECOMPUTE_FULL)
		/* Sec. 5: full recomputation keeps only each layer's input. */
		return e * tok * h / (sp ? sh->t : 1);
	rep = (2.0 * e + (recomputed(p) & SIM_RECOMPUTE_LAYERNORM ? 0 : 2.0 * sh->lin_bytes)
	       + (m->dropout > 0 ? 2.0 : 0)) * tok * h / (sp ? sh->t : 1);
	split = tok * (attn_kept_bytes(m, p, sh, e) + mlp_kept_bytes(m, p, sh, moe, e));
	/* The 5 a s^2 b term: softmax output 2, dropout mask 1, dropout output
	 * 2 bytes per score; with context parallelism a rank's queries are
	 * s / cp against all s keys.  Flash attention keeps none of them, only
	 * the fp32 log-sum-exp per query and head.  Selective recomputation
	 * (sec. 4.2) recomputes exactly this part. */
	if (p->flash)
		s2 = 4.0 * sh->b * sh->a_l * sh->sl;
	else if (p->recompute == SIM_RECOMPUTE_SELECTIVE)
		s2 = 0;
	else
		s2 = (2.0 * e + 1.0) * sh->b * sh->a_l * sh->sl * sh->s;
	return rep + split + s2;
}

/* The gradients a layer's backward works on, one micro-batch's: the
 * gradient of each of its ops' outputs (the residual stream, the norm
 * output, Q, K, V and the attention output, the MLP's tensors before and
 * after the non-linearity and SwiGLU's second input).  The stored
 * activations above are what forward leaves for backward; these live
 * only while a layer's backward runs, and the next layer's reuse them.
 * An MoE layer also holds its all-to-all's send and receive buffers, one
 * copy of its routed tokens each (Megatron-Core's token dispatcher). */
static double layer_grad_bytes(const struct sim_model *m, const struct sim_parallel *p,
			       const struct sim_shape *sh, int moe)
{
	int sp = p->seq_parallel && sh->t > 1;
	double n = sh->h / (sp ? sh->t : 1) + sh->h + attn_act_elems(m, sh)
		   + mlp_act_elems(m, p, sh, moe);

	if (moe)
		n += 2.0 * m->top_k * sim_moe_imbalance(p) / sh->t * sh->h;
	return sim_act_bytes(p) * sh->tok * n;
}

/* Bytes of one stage with layers layers (dense of them dense), holding
 * in_flight micro-batches' activations; first/last say whether it holds
 * the embedding / the head (and the MTP modules). */
static void stage_memory(const struct sim_model *m, const struct sim_parallel *p,
			 const struct sim_shape *sh, int layers, int dense, double in_flight,
			 int first, int last, double context, struct sim_memory *out)
{
	int sp = p->seq_parallel && sh->t > 1;
	int moe = m->experts > 0 ? layers - dense + (last ? m->mtp_layers : 0) : 0;
	double wb = sim_weight_bytes(p), gb = sim_grad_bytes(p);
	double tp_params, ex_params, layer_params = 0, edge, act, tensors;
	double layer = 0, loss = 0, beyond;
	struct sim_parallel full = *p;

	sim_stage_params(m, sh, layers, dense, first, last, &tp_params, &ex_params);
	/* ZeRO shards the attention's states over the dp x cp replicas and
	 * the routed experts' over the expert data-parallel ones (Megatron-
	 * Core's distributed optimizer shards expert states over the expert
	 * data-parallel group; Liu et al. 2025, sec. 3) */
	sim_model_states(tp_params, p->zero, sh->d * sh->c, wb, gb, sim_opt_state_bytes(p), out);
	if (ex_params > 0) {
		struct sim_memory ex;

		sim_model_states(ex_params, p->zero, sh->ed, wb, gb, sim_opt_state_bytes(p), &ex);
		out->weights += ex.weights;
		out->grads += ex.grads;
		out->optimizer += ex.optimizer;
	}
	/* one layer's weights on this GPU, the larger kind when both */
	if (moe > 0)
		layer_params = sh->moe_rest_params / sh->t
			       + sh->routed_params / ((double)sh->e * sh->et);
	if (layers - moe > 0 || m->experts == 0) {
		double d = sh->layer_params / sh->t;

		layer_params = d > layer_params ? d : layer_params;
	}
	edge = (double)m->vocab * m->hidden / sh->t;
	if (p->zero >= 3)
		/* ZeRO-3 gathers the next layer's weights while computing this
		 * one: two layers of working weights live at once. */
		out->weights += 2.0 * wb * layer_params;
	if (p->zero >= 2 && layers > 0)
		/* ZeRO-2/3 keep only a shard of the gradients, but a layer's
		 * are whole from its backward until their reduce-scatter
		 * (an FSDP unit's, the executor's): one layer's, or the
		 * embedding's or head's where that is larger. */
		out->grads += gb * ((first || last) && edge > layer_params ? edge : layer_params);
	sim_ft_states(m, p, sh, tp_params + ex_params, layers, first, last, out);

	/* dense layers (an MTP module of a dense model is one), MoE layers */
	act = 0;
	if (layers + (last ? m->mtp_layers : 0) - moe > 0)
		act += (layers + (last ? m->mtp_layers : 0) - moe)
		       * sim_layer_activation_bytes(m, p, sh, 0);
	if (moe > 0)
		act += moe * sim_layer_activation_bytes(m, p, sh, 1);
	act *= in_flight;
	/* Korthikanti et al. 2022, sec. 4.3: the embedding dropout mask on
	 * the first stage, the final layer-norm input on the last. */
	if (first)
		act += in_flight * sh->tok * sh->h / (sp ? sh->t : 1);
	if (last)
		act += sim_act_bytes(p) * sh->tok * sh->h / (sp ? sh->t : 1);
	/* Backward works on one layer at a time: its gradients, and under
	 * full recomputation its recomputed activations too. */
	if (layers > 0)
		layer = layer_grad_bytes(m, p, sh, moe > 0);
	if (p->recompute == SIM_RECOMPUTE_FULL) {
		full.recompute = SIM_RECOMPUTE_NONE;
		layer += sim_layer_activation_bytes(m, &full, sh, moe > 0);
	}
	/* The last stage's loss runs before the layers' backward and is done
	 * with its buffers when that starts: Megatron-LM's last stage runs a
	 * micro-batch's loss, then its backward (1F1B), the loss's backward
	 * freeing the softmax it saved before the final norm's and the
	 * layers' (recomputed one at a time under full recomputation, each
	 * from its checkpoint); torchtune's recipe deletes the logits it got
	 * and calls backward, the loss's nodes running first.  So the peak is
	 * what forward stored plus the larger of the loss's buffers at their
	 * fullest (sim_loss_cost: Megatron-LM's fp32 softmax and its bf16
	 * input, 6 bytes a logit; torchtune's chunked bf16 logits, 2.25;
	 * each MTP module's loss keeping its own, Korthikanti et al.'s
	 * 4 s b V / t a head) and one layer's backward; both add to every
	 * activation stored, checkpoints only under full recomputation. */
	if (last) {
		const struct sim_loss_cost *lc = sim_loss_cost(p->loss);

		loss = (m->mtp_layers * lc->held_bytes + lc->peak_bytes) * sh->tok * sh->V / sh->t;
	}
	out->activations = act + layer;
	beyond = loss > layer ? loss - layer : 0;
	tensors = out->weights + out->grads + out->optimizer + out->activations + beyond;
	out->other = beyond + context + SIM_ALLOC_SLACK * tensors;
	out->total = out->weights + out->grads + out->optimizer + out->activations
		     + out->other;
}

void sim_memory_estimate(const struct sim_model *m, const struct sim_parallel *p,
			 const struct sim_cluster *c, const struct sim_shape *sh,
			 struct sim_memory *out)
{
	struct sim_memory first, last;
	double in_flight;
	int nd = sim_dense_layer_count(m);
	/* the runtime's own memory: a CUDA context, or what the device says */
	double ctx = c->gpu.context_bytes > 0 ? c->gpu.context_bytes
		     : c->gpu.context_bytes < 0 ? 0 : SIM_CONTEXT_BYTES;

	/* Narayanan et al., SC'21, sec. 2.2: with 1F1B the first stage holds
	 * min(m, p) micro-batches in flight; Korthikanti et al. 2022, sec.
	 * 4.2.3: the interleaved schedule multiplies it by 1 + (p-1)/(p v). */
	in_flight = sh->micro < sh->p ? sh->micro : sh->p;
	if (sh->v > 1)
		in_flight *= 1.0 + (double)(sh->p - 1) / ((double)sh->p * sh->v);
	if (sh->p == 1) {
		stage_memory(m, p, sh, sh->layers_first, nd, 1, 1, 1, ctx, out);
	} else {
		struct sim_memory mid;

		stage_memory(m, p, sh, sh->layers_first, sim_stage_dense_layers(sh, nd, 0), in_flight,
			     1, 0, ctx, &first);
		stage_memory(m, p, sh, sh->layers_last, sim_stage_dense_layers(sh, nd, sh->p - 1), 1,
			     0, 1, ctx, &last);
		*out = first.total >= last.total ? first : last;
		/* Stage 1 holds one micro-batch fewer in flight than stage 0
		 * (p - i on stage i) but may hold one layer more
		 * (sim_stage_layers): 8 x 15 > 7 x 16. */
		if (sh->p > 2 && sim_stage_layers(sh, 1) > sh->layers_first) {
			double f1 = in_flight * (sh->micro < sh->p ? 1.0 : (double)(sh->p - 1) / sh->p);

			stage_memory(m, p, sh, sim_stage_layers(sh, 1), sim_stage_dense_layers(sh, nd, 1),
				     f1, 0, 0, ctx, &mid);
			if (mid.total > out->total)
				*out = mid;
		}
	}
	out->capacity = c->gpu.memory_bytes;
	sim_ft_node_memory(p, c, sh, out);
}
