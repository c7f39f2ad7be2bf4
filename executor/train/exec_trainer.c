/*
 * exec_trainer.c - one rank's part of a GPT-style decoder and its training
 * step: parameters, forward and backward of every unit written by hand,
 * the pipeline schedule, data-parallel reduction with ZeRO, AdamW.  This
 * file is the driver, on top of the trainer: it builds the trainer (its
 * units and scratch), runs a step and frees it.  It calls the files
 * below it, one concern a file (exec_train_layers.h lists them, bottom
 * up): the schedule, the optimizer, the parameters and the activation
 * records; the state they share is exec_train_state.h, below them all.
 *
 * The model (Radford et al. 2019, as llm.c's train_gpt2.c lays it out):
 * token and position embeddings; per layer x += attn(norm(x)),
 * x += mlp(norm(x)); a final norm; an LM head and cross-entropy.
 *
 * How the layout cuts it:
 * - Tensor parallelism (Shoeybi et al. 2019, sec. 3): Q, K, V and the
 *   first MLP matrices are split by output rows (column-parallel, whole
 *   heads per rank), the attention output and second MLP matrices by input
 *   columns (row-parallel, followed by an all-reduce and then the bias);
 *   the input gradients of column-parallel matrices are all-reduced.  The
 *   embedding and the LM head are split by vocabulary rows, and so is the
 *   cross-entropy (Megatron-LM's vocab_parallel_cross_entropy).
 *   Parameters not split (norms, row-parallel biases, positions) are
 *   replicated and get the same gradient on every TP rank.
 * - Sequence parallelism (Korthikanti et al. 2022, sec. 4.2.2), with
 *   tp > 1: the norms, residuals and bias additions run on 1/tp of the
 *   micro-batch's tokens.  The all-reduce after a row-parallel GEMM
 *   becomes a reduce-scatter over the tokens and an all-gather of the
 *   norm's output precedes the column-parallel GEMMs (the paper's g-bar
 *   and g); backward swaps them.  Rank r holds tokens [r N/tp, (r+1) N/tp)
 *   in the executor's [b, t] order (Megatron's [s, b] order makes that a
 *   slice of the sequence; every op of the region works per token, so
 *   which tokens a rank holds changes no result).  Like Megatron, a layer
 *   keeps only its norms' slices and gathers them again in backward.  The
 *   norm weights then get each rank's slice's gradient, summed over TP
 *   before the optimizer; row-parallel biases and positions take theirs
 *   from the gathered output gradient, which every TP rank holds whole.
 * - Tied embeddings (Press and Wolf 2017, as GPT-2 does): the LM head is
 *   the vocabulary-parallel input embedding matrix, a unit of its own
 *   (UNIT_WORD).  With one stage it serves both ends and its gradient is
 *   the sum of both uses; with more, the first and last stages each hold
 *   a copy drawn from the same stream, and the copies' gradients are
 *   summed before the optimizer step (Megatron-LM's embedding group,
 *   _allreduce_word_embedding_grads; Narayanan et al., SC'21, sec. 2), so
 *   the copies stay equal.  Clipping and the parameter count see the
 *   first stage's copy only.
 * - Pipeline parallelism: the layers are cut into pp * v chunks (virtual
 *   stages) as the simulator cuts them (exec_chunk_layers: a pp that does
 *   not divide the layers gives the middle stages the extra ones, and a
 *   stage's chunks may differ by one), and this rank runs its stage's op
 *   list from sched_build() in order: blocking receives, non-blocking
 *   sends (sched.h's contract).  Every message is one micro-batch's
 *   residual stream, the same size whatever the chunks hold.
 * - Data parallelism: every rank owns, per unit, a shard of ceil(n / dp)
 *   of the unit's flat parameters for the optimizer.  Stage 0 all-reduces
 *   the gradients and every rank updates everything; ZeRO-1 reduce-
 *   scatters them, so that each rank receives the sum of its own shard
 *   alone, updates that shard and all-gathers the parameters, one
 *   all-reduce's traffic in all (Rajbhandari et al., SC'20, sec. 5;
 *   Megatron-LM's distributed optimizer).  Both start a unit's sum as
 *   soon as the step's last backward through the unit has ended, and
 *   wait for them all before the optimizer, so that the sums run under
 *   the backward of the units before (PyTorch DDP's gradient buckets, Li
 *   et al., VLDB 2020, sec. 3.2; Megatron-LM's overlap_grad_reduce), a
 *   unit being a bucket.  ZeRO-2 reduce-scatters each unit's gradients as
 *   soon as its backward ends (the full gradient exists only then);
 *   ZeRO-3 also keeps only its parameter shard and all-gathers a unit
 *   before each use (Rajbhandari et al., SC'20, sec. 5).
 * - Context parallelism (Llama 3's all-gather form, Dubey et al. 2024,
 *   sec. 3.3.2, with its load balancing): every sequence is cut into
 *   2 cp chunks of T / (2 cp) tokens and CP rank r holds chunks r and
 *   2 cp - 1 - r, so that every rank's queries see as many unmasked keys
 *   (the causal attention of an early chunk is cheap, of a late one dear)
 *   and the simulator's even split holds.  Embedding, norms, MLP, LM head
 *   and loss are token-local and run on the two chunks, the positions
 *   being theirs.  Attention all-gathers K and V over the CP group into
 *   sequence order, attends each chunk's queries to every key with the
 *   causal mask at the queries' positions, and in backward
 *   reduce-scatters dK and dV back; a layer keeps only its chunks of K
 *   and V and gathers them again in backward.  CP ranks hold the same
 *   weights: the gradients are reduced, and ZeRO shards, over the dp x cp
 *   ranks (the dp group, struct exec_groups), as Megatron-Core does and as
 *   sim_memory.c prices it; the loss sums every chunk's tokens.
 * - Mixture of experts and expert parallelism (exec_train_moe.c): an MoE
 *   layer's MLP block routes each token to k of E experts; the experts
 *   are shared out over the ep ranks of an EP group folded over the
 *   stage's tp x cp x dp ranks (exec_layout, as Megatron-Core's MoE
 *   parallel folding), tokens travel to them and back by all-to-all, and
 *   each layer's experts are a unit of their own whose gradients are
 *   reduced, and ZeRO shards, over the expert-data-parallel group.  The
 *   router and the shared experts belong to the layer's unit, tensor
 *   parallel like the dense MLP; with tp > 1 each TP rank routes its own
 *   tokens (sequence parallelism), so the router's gradient is summed
 *   over TP like the norms'.
 * - LoRA (Hu et al. 2021; exec_train_lora.c): every unit of the model is
 *   frozen and each layer gains a unit of low-rank adapters beside its
 *   projections, cut by tensor parallelism as the projections are; the
 *   adapters alone have gradients, are summed over DP, sharded by ZeRO
 *   and updated by AdamW, and the base weights stay as drawn.
 * - Recomputation (Chen et al. 2016; Korthikanti et al. 2022, sec. 5):
 *   full keeps only each layer's input and reruns the layer's forward,
 *   communication included, before its backward; selective drops the
 *   attention probabilities and rebuilds them from the row log-sum-exp, as
 *   the flash-attention option does.
 *
 * Precision (exec_device.h, "Element types"): parameters, their
 * gradients and AdamW's moments are fp32 on every device; activations and
 * the weights forward and backward read are the device's activation type.
 * Where that is not fp32 (bf16 on the CUDA backend) each unit keeps a
 * working copy of its weights in it, narrowed from the fp32 master after
 * every update (and after each ZeRO-3 gather), as mixed-precision training
 * does (Micikevicius et al., ICLR 2018, sec. 3.1); where it is, the
 * working copy is the master itself.
 *
 * Under exec_opts.trace every schedule op, message and collective of a
 * group of more than one rank, and the optimizer step, is recorded
 * (exec_trace.c) through exec_train_comm.c's wrappers; off, each costs a
 * test.
 *
 * Every parameter is drawn from a counter-based generator indexed by its
 * position in the full tensor, then cut to the rank's shard, so every
 * layout starts from the same model, and every layout's batch is the same
 * set of sequences: the loss is the same whatever the layout, up to the
 * order of floating-point sums.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/exec_train_layers.h"

/* A bound on one step's trace events on this rank, counted from the calls
 * of the trainer's files.  Per micro-batch and chunk: the forward and the backward, at
 * most two receives and two sends; per layer at most 7 collectives in
 * forward (ZeRO-3's gather; 2 all-gathers and 2 reduce-scatters with
 * sequence parallelism, else 2 all-reduces; CP's 2 gathers of K and V)
 * and 20 in backward (the gather, the forward's 6 again under full
 * recomputation, 4 all-gathers and 2 reductions, CP's 2 gathers and 2
 * reduce-scatters, 2 norm-gradient sums and ZeRO-2/3's reduce-scatter);
 * the embedding at most 3 forward and 5 backward, the head 5 and 8.  Per
 * step: the wait for sends, per unit at most 4 after its last backward or
 * in the optimizer (2 norm-gradient sums, the DP sum, ZeRO-1/2's
 * all-gather), the tied copies' sum, the world's loss and norm, the
 * optimizer itself. */
static long trace_per_step(const struct exec_trainer *t)
{
	/* an MoE layer adds at most 3 all-to-alls and its experts' gather in
	 * forward, the 4 again, 2 all-to-alls, the gather and the
	 * reduce-scatter in backward, and its own unit's 4 a step */
	long moe = t->E > 0 ? 12L : 0;
	/* a LoRA layer's adapters add their gather forward, and their
	 * gather, TP sum and reduce-scatter backward */
	long lora = t->lora ? 4L : 0;

	return (long)t->m * (t->v * (2 + 4 + 3 + 5 + 5 + 8L) +
			     (27L + moe + lora) * t->stage_layers) +
	       4L * t->n_units + 8;
}

/* The MLP width a TP rank holds at most: the dense layers', or an MoE
 * layer's shared experts'. */
static size_t ffn_local_max(const struct exec_trainer *t)
{
	int dense = t->E == 0 || t->dense_layers > 0, moe = t->E > 0 &&
		t->dense_layers < t->o.model.layers;
	size_t f = dense ? (size_t)t->Fl : 0;

	if (moe && (size_t)t->Fs / t->l.tp > f)
		f = (size_t)t->Fs / t->l.tp;
	return f;
}

/* The MoE scratch's sizes: [Ns k, C] rows, [Ns, E] logits, [Ns k]
 * weights. */
static void moe_sizes(const struct exec_trainer *t, size_t *rows, size_t *logits, size_t *nk)
{
	*nk = t->E > 0 ? (size_t)t->Ns * t->K : 0;
	*rows = *nk * t->C;
	*logits = t->E > 0 ? (size_t)t->Ns * t->E : 0;
}

/* The widest output of a projection a TP rank holds: LoRA's scratch. */
static size_t lora_width(const struct exec_trainer *t)
{
	size_t w = (size_t)t->C, q = (size_t)t->Hl * t->hd, f = ffn_local_max(t);

	w = q > w ? q : w;
	return f > w ? f : w;
}

static void scratch_alloc(struct exec_trainer *t)
{
	size_t ab = t->ab, fb = sizeof(float), nc = (size_t)t->N * t->C;
	size_t nf = (size_t)t->N * ffn_local_max(t);
	size_t nq = (size_t)t->N * t->Hl * t->hd, nk = (size_t)t->N * t->KVl * t->hd;
	size_t ns = (size_t)t->Ns * t->C, mrows, mlog, mk;
	long max_shard = 1;

	t->dx = exec_dalloc(t->d, ns * ab);
	t->dln = exec_dalloc(t->d, nc * ab);
	t->tmp = exec_dalloc(t->d, nc * ab);
	t->dq = exec_dalloc(t->d, nq * ab);
	t->datty = exec_dalloc(t->d, nq * ab);
	t->dk = exec_dalloc(t->d, nk * ab);
	t->dv = exec_dalloc(t->d, nk * ab);
	t->dh = exec_dalloc(t->d, nf * ab);
	t->da = exec_dalloc(t->d, nf * ab);
	t->du = t->swiglu ? exec_dalloc(t->d, nf * ab) : NULL;
	if (t->full_rec) {
		struct carve c = { NULL, 0 };

		train_carve_layer(t, &c, &t->rec, t->rec_att, -1);
		t->rec_bytes = c.off;
		t->rec_block = exec_dalloc(t->d, t->rec_bytes);
		c.base = t->rec_block;
		c.off = 0;
		train_carve_layer(t, &c, &t->rec, t->rec_att, -1);
		t->rec_out = exec_dalloc(t->d, ns * ab);
	}
	moe_sizes(t, &mrows, &mlog, &mk);
	if (t->E > 0) {
		t->mlog = exec_dalloc(t->d, mlog * ab);
		t->mdw = exec_dalloc(t->d, mk * fb);
		t->mcnt = exec_dalloc(t->d, 2 * (size_t)t->E * sizeof(int));
		if (t->l.ep > 1) {
			t->xp = exec_dalloc(t->d, mrows * ab);
			t->dyp = exec_dalloc(t->d, mrows * ab);
			t->dxp = exec_dalloc(t->d, mrows * ab);
		}
		t->h_idx = xcalloc(3 * mk, sizeof(int));
		t->h_map = t->h_idx + mk;
		t->h_pos = t->h_map + mk;
		t->a2a_send = xcalloc(2 * (size_t)t->l.ep, sizeof(size_t));
		t->a2a_recv = t->a2a_send + t->l.ep;
	}
	if (t->sp) {
		t->gath = exec_dalloc(t->d, nc * ab);
		t->part = exec_dalloc(t->d, ns * ab);
	}
	if (t->cp > 1) {
		t->kf = exec_dalloc(t->d, nk * t->cp * ab);
		t->vf = exec_dalloc(t->d, nk * t->cp * ab);
		t->dkf = exec_dalloc(t->d, nk * t->cp * ab);
		t->dvf = exec_dalloc(t->d, nk * t->cp * ab);
		t->cpbuf = exec_dalloc(t->d, nk * t->cp * ab);
	}
	if (t->tied && t->l.pp > 1 && !t->word && t->word_own_n > 0)
		t->word_zero = exec_dalloc(t->d, (size_t)t->word_own_n * fb);
	if (t->lora) {
		t->lora_tmp = exec_dalloc(t->d, (size_t)t->N * lora_width(t) * ab);
		t->lora_dz = exec_dalloc(t->d, (size_t)t->N * t->lora_r * ab);
	}
	for (int i = 0; i < t->n_units; i++)
		if (t->units[i].shard > max_shard)
			max_shard = t->units[i].shard;
	if (t->o.par.zero >= 2)
		t->rs_tmp = exec_dalloc(t->d, (size_t)max_shard * fb);
	t->scal = exec_dalloc(t->d, 2 * sizeof(double));
	t->host_seq = xcalloc((size_t)t->T + 1, sizeof(int));
	t->host_tok = xcalloc((size_t)t->N, sizeof(int));
	t->host_tgt = xcalloc((size_t)t->N, sizeof(int));
}

static void scratch_free(struct exec_trainer *t)
{
	size_t ab = t->ab, fb = sizeof(float), nc = (size_t)t->N * t->C;
	size_t nf = (size_t)t->N * ffn_local_max(t);
	size_t nq = (size_t)t->N * t->Hl * t->hd, nk = (size_t)t->N * t->KVl * t->hd;
	size_t ns = (size_t)t->Ns * t->C, mrows, mlog, mk;
	long max_shard = 1;

	for (int i = 0; i < t->n_units; i++)
		if (t->units[i].shard > max_shard)
			max_shard = t->units[i].shard;
	exec_dfree(t->d, t->dx, ns * ab);
	exec_dfree(t->d, t->dln, nc * ab);
	exec_dfree(t->d, t->tmp, nc * ab);
	exec_dfree(t->d, t->dq, nq * ab);
	exec_dfree(t->d, t->datty, nq * ab);
	exec_dfree(t->d, t->dk, nk * ab);
	exec_dfree(t->d, t->dv, nk * ab);
	exec_dfree(t->d, t->dh, nf * ab);
	exec_dfree(t->d, t->da, nf * ab);
	exec_dfree(t->d, t->du, nf * ab);
	exec_dfree(t->d, t->rec_block, t->rec_bytes);
	exec_dfree(t->d, t->rec_out, ns * ab);
	exec_dfree(t->d, t->gath, nc * ab);
	exec_dfree(t->d, t->part, ns * ab);
	exec_dfree(t->d, t->kf, nk * t->cp * ab);
	exec_dfree(t->d, t->vf, nk * t->cp * ab);
	exec_dfree(t->d, t->dkf, nk * t->cp * ab);
	exec_dfree(t->d, t->dvf, nk * t->cp * ab);
	exec_dfree(t->d, t->cpbuf, nk * t->cp * ab);
	exec_dfree(t->d, t->word_zero, (size_t)t->word_own_n * fb);
	exec_dfree(t->d, t->lora_tmp, (size_t)t->N * lora_width(t) * ab);
	exec_dfree(t->d, t->lora_dz, (size_t)t->N * t->lora_r * ab);
	exec_dfree(t->d, t->rs_tmp, (size_t)max_shard * fb);
	exec_dfree(t->d, t->scal, 2 * sizeof(double));
	moe_sizes(t, &mrows, &mlog, &mk);
	train_moe_release(t, &t->rec);
	exec_dfree(t->d, t->mlog, mlog * ab);
	exec_dfree(t->d, t->mdw, mk * fb);
	exec_dfree(t->d, t->mcnt, 2 * (size_t)t->E * sizeof(int));
	exec_dfree(t->d, t->xp, mrows * ab);
	exec_dfree(t->d, t->dyp, mrows * ab);
	exec_dfree(t->d, t->dxp, mrows * ab);
	free(t->h_idx);
	free(t->a2a_send);
	free(t->host_seq);
	free(t->host_tok);
	free(t->host_tgt);
}

struct exec_trainer *exec_trainer_new(const struct exec_opts *o,
				      const struct exec_layout *l,
				      struct exec_device *d,
				      struct exec_groups *g, char *why, size_t size)
{
	struct exec_trainer *t;
	const struct sim_model *md = &o->model;
	long off, len;
	int nu = 0;

	if (exec_opts_check(o, why, size) != RC_OK)
		return NULL;
	if (l->tp != o->par.tp || l->pp != o->par.pp || l->dp != o->par.dp ||
	    l->cp != o->par.cp || l->ep != (o->par.ep > 0 ? o->par.ep : 1)) {
		snprintf(why, size, "layout: expected tp %d x pp %d x dp %d x cp %d (ep %d), "
			 "found %d x %d x %d x %d (ep %d)", o->par.tp, o->par.pp, o->par.dp,
			 o->par.cp, o->par.ep > 0 ? o->par.ep : 1, l->tp, l->pp, l->dp, l->cp,
			 l->ep);
		return NULL;
	}
	t = xcalloc(1, sizeof(*t));
	t->o = *o;
	t->o.data_path = NULL;
	t->o.backend = NULL;
	t->l = *l;
	t->d = d;
	t->be = d->be;
	t->act = d->act;
	t->ab = exec_dtype_size(d->act);
	t->g = g;
	t->v = o->par.interleave;
	t->m = o->par.gbs / (o->par.mbs * o->par.dp);
	if (sched_build(&t->sched, o->schedule, o->par.pp, t->m, t->v, 0, why, size) != RC_OK) {
		free(t);
		return NULL;
	}
	if (exec_data_open(&t->data, o->data_path, md->vocab, md->seq, o->seed,
			   why, size) != RC_OK) {
		sched_release(&t->sched);
		free(t);
		return NULL;
	}
	t->B = o->par.mbs;
	t->T = md->seq;
	t->C = md->hidden;
	t->H = md->heads;
	t->KV = md->kv_heads;
	t->hd = md->hidden / md->heads;
	t->Hl = t->H / l->tp;
	t->KVl = t->KV / l->tp;
	t->F = md->ffn;
	t->Fl = t->F / l->tp;
	if (md->experts > 0) {
		t->E = md->experts;
		t->K = md->top_k;
		t->Fe = md->expert_ffn;
		t->Fs = md->shared_experts * (md->shared_ffn > 0 ? md->shared_ffn : md->expert_ffn);
		t->El = t->E / l->ep;
		t->pre_softmax = md->router_pre_softmax;
		t->dense_layers = md->dense_layers;
	}
	t->V = md->vocab;
	t->cp = l->cp;
	t->Tl = t->T / l->cp;
	t->nc = l->cp > 1 ? 2 : 1;
	t->Tc = t->Tl / t->nc;
	for (int c = 0; c < t->nc; c++)
		t->cpos[c] = chunk_pos(t, l->cp_rank, c);
	t->N = t->B * t->Tl;
	exec_split(t->V, l->tp, l->tp_rank, &off, &len);
	t->v0 = (int)off;
	t->nv = (int)len;
	t->rms = o->norm == EXEC_NORM_RMS;
	t->swiglu = md->mlp == SIM_MLP_SWIGLU;
	t->full_rec = o->par.recompute == SIM_RECOMPUTE_FULL;
	t->rec_att = !o->par.flash;
	t->store_att = !o->par.flash && o->par.recompute == SIM_RECOMPUTE_NONE;
	/* Megatron runs sequence parallelism only with tensor parallelism */
	t->sp = o->par.seq_parallel && l->tp > 1;
	t->Ns = t->sp ? t->N / l->tp : t->N;
	t->tied = md->tied_embeddings != 0;
	if (o->par.ft.method == SIM_FT_LORA) {
		t->lora = 1;
		t->lora_r = o->par.ft.lora_rank > 0 ? o->par.ft.lora_rank : SIM_LORA_DEFAULT_RANK;
		t->lora_targets = o->par.ft.lora_targets ? o->par.ft.lora_targets : SIM_LORA_ALL;
		t->lora_scale = (float)(exec_lora_alpha(o) / t->lora_r);
	}

	/* units: per chunk [word] [embedding] layers [head] [word], the tied
	 * word matrix once per rank; then the MoE layers' experts */
	t->layer0 = xcalloc((size_t)t->v, sizeof(int));
	t->nl = xcalloc((size_t)t->v, sizeof(int));
	t->stage_layers = exec_stage_layers(md->layers, l->pp, l->pp_rank);
	t->units = xcalloc(2 * (size_t)t->stage_layers + 2 * (size_t)t->v + 1,
			   sizeof(*t->units));
	for (int c = 0; c < t->v; c++) {
		int first, count, word = -1;

		exec_chunk_layers(md->layers, l->pp, t->v, l->pp_rank, c, &first, &count);
		t->nl[c] = count;
		if (chunk_is_first(t, c)) {
			if (t->tied)
				t->units[word = nu++].kind = UNIT_WORD;
			t->units[nu++].kind = UNIT_EMBED;
		}
		t->layer0[c] = nu;
		for (int i = 0; i < count; i++) {
			t->units[nu].kind = UNIT_LAYER;
			t->units[nu++].layer = first + i;
		}
		if (chunk_is_last(t, c)) {
			t->units[nu++].kind = UNIT_HEAD;
			/* a last stage that is not also the first holds a copy */
			if (t->tied && word < 0) {
				t->units[nu].kind = UNIT_WORD;
				t->units[nu++].mirror = 1;
			}
		}
	}
	for (int c = 0; c < t->v; c++)
		for (int i = 0; i < t->nl[c]; i++) {
			struct unit *u = &t->units[t->layer0[c] + i];

			if (!layer_is_moe(t, u->layer))
				continue;
			u->experts = &t->units[nu];
			t->units[nu].kind = UNIT_EXPERTS;
			t->units[nu++].layer = u->layer;
		}
	/* and a LoRA run's adapters, a unit a layer (no experts with LoRA:
	 * exec_opts_check) */
	for (int c = 0; t->lora && c < t->v; c++)
		for (int i = 0; i < t->nl[c]; i++) {
			struct unit *u = &t->units[t->layer0[c] + i];

			u->lora = &t->units[nu];
			t->units[nu].kind = UNIT_LORA;
			t->units[nu++].layer = u->layer;
		}
	t->n_units = nu;
	for (int i = 0; i < nu; i++) {
		struct unit *u = &t->units[i];

		train_unit_shapes(t, u);
		train_unit_alloc(t, u);
		if (u->kind == UNIT_EMBED)
			t->embed = u;
		else if (u->kind == UNIT_HEAD)
			t->head = u;
		else if (u->kind == UNIT_WORD)
			t->word = u;
	}
	/* every micro-batch's backward through a chunk uses its units once
	 * (chunk_backward); the tied matrix serves both ends */
	for (int c = 0; c < t->v; c++) {
		for (int i = 0; i < t->nl[c]; i++) {
			struct unit *u = train_chunk_layer(t, c, i);

			u->uses += t->m;
			if (u->experts)
				u->experts->uses += t->m;
			if (u->lora)
				u->lora->uses += t->m;
		}
		if (chunk_is_first(t, c)) {
			t->embed->uses += t->m;
			if (t->word)
				t->word->uses += t->m;
		}
		if (chunk_is_last(t, c)) {
			t->head->uses += t->m;
			if (t->word)
				t->word->uses += t->m;
		}
	}
	if (t->tied && !t->lora) {
		long shard, own_off;

		/* the tied copies' own range, on every stage of the pipeline
		 * group (the stages between contribute zeros to its sum) */
		train_own_range(t, &t->g->dp, (long)t->nv * t->C, &shard, &own_off,
				&t->word_own_n);
	}
	t->acts = xcalloc((size_t)t->v * t->m, sizeof(*t->acts));
	t->pool = xcalloc((size_t)t->v, sizeof(*t->pool));
	scratch_alloc(t);
	if (o->trace) {
		t->tr = exec_tracer_new(d, l->rank, l->world, trace_per_step(t), o->steps);
		if (!t->tr) {
			snprintf(why, size, "--trace: the %s device cannot time events", d->be->name);
			exec_trainer_free(t);
			return NULL;
		}
	}
	return t;
}

void exec_trainer_free(struct exec_trainer *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->v * t->m; i++)
		if (t->acts[i])
			train_act_release(t, t->acts[i]);
	for (int c = 0; c < t->v; c++)
		while (t->pool[c]) {
			struct act *a = t->pool[c];

			t->pool[c] = a->next;
			train_act_free(t, a);
		}
	scratch_free(t);
	for (int i = 0; i < t->n_units; i++)
		train_unit_free(t, &t->units[i]);
	free(t->units);
	free(t->layer0);
	free(t->nl);
	free(t->acts);
	free(t->pool);
	sched_release(&t->sched);
	exec_data_release(&t->data);
	exec_tracer_free(t->tr);
	free(t);
}

/* A step begins: every unit has all its backward passes to come, and
 * ZeRO 0/1 reduce gradients after the last of them when `reducing`. */
static void uses_reset(struct exec_trainer *t, int reducing)
{
	t->reducing = reducing && t->o.par.zero <= 1;
	for (int i = 0; i < t->n_units; i++)
		t->units[i].left = t->units[i].uses;
}

enum rc exec_trainer_step(struct exec_trainer *t, int step, double *loss,
			  double *grad_norm)
{
	t->step = step;
	t->loss_sum = 0;
	TRY(exec_tracer_step(t->tr, step));
	train_zero_grads(t);
	uses_reset(t, 1);
	TRY(train_run_schedule(t, 1));
	return train_optimizer_step(t, step, loss, grad_norm);
}

enum rc exec_trainer_trace(struct exec_trainer *t, int mpi, struct exec_trace *out)
{
	if (!t->o.trace) {
		memset(out, 0, sizeof(*out));
		return RC_OK;
	}
	return exec_tracer_gather(t->tr, mpi, out);
}

enum rc exec_trainer_eval(struct exec_trainer *t, int step, int backward, double *loss)
{
	double red[2];

	t->step = step;
	t->loss_sum = 0;
	TRY(exec_tracer_step(t->tr, step));
	if (backward)
		train_zero_grads(t);
	uses_reset(t, 0);
	TRY(train_run_schedule(t, backward));
	TRY(train_world_sums(t, train_counts_loss(t) ? t->loss_sum : 0, 0, red));
	*loss = red[0] / ((double)t->o.par.gbs * t->T);
	return RC_OK;
}
