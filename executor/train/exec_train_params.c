/*
 * exec_train_params.c - a unit's parameters: its tensors and how tensor
 * parallelism cuts them, their initial values (the same whatever the
 * layout, drawn in parallel), this rank's ZeRO shard and optimizer range,
 * ZeRO-3's gather before a use and drop after it, and what ends a unit's
 * backward: the gradients' sum over DP started (ZeRO 0/1) or reduce-
 * scattered into the shard (ZeRO 2/3).
 *
 * Calls (all below it; state and helpers from exec_train_state.h):
 * exec_train_comm.c, exec_train_lora.c, exec_data.c's generator, the
 * device.
 */
#include <math.h>
#include <stdlib.h>

#include "train/exec_train_layers.h"

/* Initialisation draws ~50 ns a value (log and cos of Box-Muller), a
 * minute for a billion parameters on one thread: the rows of a unit's
 * tensors are shared among threads, a part at least this many values. */
#define INIT_PART_VALUES (1L << 20)

static void tensor_add(struct exec_trainer *t, struct unit *u, int idx,
		       const char *name, long rows, long cols, enum split split,
		       int decay, double std, float value)
{
	struct tensor *x = &u->t[idx];
	long off, len;

	x->name = name;
	x->rows = rows;
	x->cols = cols;
	x->split = split;
	x->r0 = 0;
	x->nr = rows;
	x->c0 = 0;
	x->nc = cols;
	if (split == SPLIT_ROWS) {
		/* Vocabulary rows split unevenly when V % tp != 0; every
		 * other row split is exact (checked by exec_opts_check). */
		exec_split(rows, t->l.tp, t->l.tp_rank, &off, &len);
		x->r0 = off;
		x->nr = len;
	} else if (split == SPLIT_COLS) {
		exec_split(cols, t->l.tp, t->l.tp_rank, &off, &len);
		x->c0 = off;
		x->nc = len;
	} else if (split == SPLIT_EP) {
		/* exact: ep divides the experts (exec_opts_check) */
		exec_split(rows, t->l.ep, t->l.ep_rank, &off, &len);
		x->r0 = off;
		x->nr = len;
	}
	x->n = x->nr * x->nc;
	x->off = u->n;
	u->n += x->n;
	x->decay = decay;
	x->replicated = split == SPLIT_NONE && t->l.tp > 1;
	x->std = std;
	x->value = value;
	if (idx + 1 > u->nt)
		u->nt = idx + 1;
}

/* Unit ids name random streams: embedding 0, layer i is 1 + i, head L + 1,
 * layer i's experts L + 2 + i, its LoRA adapters 2 L + 2 + i.  A tied
 * matrix is the embedding's wte, whichever stage holds it. */
static uint64_t unit_id(const struct exec_trainer *t, const struct unit *u)
{
	if (u->kind == UNIT_EMBED || u->kind == UNIT_WORD)
		return 0;
	if (u->kind == UNIT_LAYER)
		return 1 + (uint64_t)u->layer;
	if (u->kind == UNIT_EXPERTS)
		return 2 + (uint64_t)t->o.model.layers + (uint64_t)u->layer;
	if (u->kind == UNIT_LORA)
		return 2 + 2 * (uint64_t)t->o.model.layers + (uint64_t)u->layer;
	return 1 + (uint64_t)t->o.model.layers;
}

/* A layer's LoRA adapters, one for each projection W [out, in] the
 * targets name (Hu et al. 2021, sec. 4.1): A [r, in] drawn N(0, 1 /
 * (3 in)), the variance of PEFT's kaiming_uniform_(a = sqrt(5))
 * initialisation of lora_A, and B [out, r] zero, so that training starts
 * from the base model.  Tensor
 * parallelism cuts the adapter as it cuts W (Shoeybi et al. 2019, sec.
 * 3): a column-parallel W's B by its output rows, A whole; a row-
 * parallel W's A by its input columns, B whole.  The whole one's
 * gradient is each TP rank's share, summed over TP: those come first in
 * the unit, the split ones after. */
static void lora_shapes(struct exec_trainer *t, struct unit *u)
{
	static const char *const names[T_LORA_N] = {
		"lora.q.a", "lora.k.a", "lora.v.a", "lora.w1.a", "lora.wu.a", "lora.o.b",
		"lora.w2.b", "lora.q.b", "lora.k.b", "lora.v.b", "lora.w1.b", "lora.wu.b",
		"lora.o.a", "lora.w2.a",
	};
	long C = t->C, Hd = (long)t->H * t->hd, KVd = (long)t->KV * t->hd, F = t->F;
	/* in the unit's tensor order: the column-parallel ones, then the
	 * row-parallel */
	const struct { int a, b, slot; long out, in; int row; } ad[L_N] = {
		{ T_QA, T_QB, L_Q, Hd, C, 0 },
		{ T_KA, T_KB, L_K, KVd, C, 0 },
		{ T_VA, T_VB, L_V, KVd, C, 0 },
		{ T_1A, T_1B, L_1, F, C, 0 },
		{ T_UA, T_UB, L_U, F, C, 0 },
		{ T_OA, T_OB, L_O, C, Hd, 1 },
		{ T_2A, T_2B, L_2, C, F, 1 },
	};

	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < L_N; i++) {
			long r = train_lora_adapts(t, ad[i].slot) ? t->lora_r : 0;
			long in = r ? ad[i].in : 0, out = r ? ad[i].out : 0;
			double std = in ? 1.0 / sqrt(3.0 * (double)in) : 0;
			/* pass 0 the whole one, pass 1 the split one */
			int is_a = (pass == 0) != (ad[i].row != 0), idx = is_a ? ad[i].a : ad[i].b;

			if (is_a)
				tensor_add(t, u, idx, names[idx], r, in,
					   pass ? SPLIT_COLS : SPLIT_NONE, 1, std, 0);
			else
				tensor_add(t, u, idx, names[idx], out, r,
					   pass ? SPLIT_ROWS : SPLIT_NONE, 1, 0, 0);
			u->t[idx].tp_partial = pass == 0 && t->l.tp > 1;
		}
}

void train_unit_shapes(struct exec_trainer *t, struct unit *u)
{
	long C = t->C, Hd = (long)t->H * t->hd, KVd = (long)t->KV * t->hd, F = t->F;
	long Fe = t->Fe, E = t->E;
	int moe = u->kind == UNIT_LAYER && layer_is_moe(t, u->layer);
	/* GPT-2's initialisation (Radford et al. 2019, sec. 2.3): N(0, 0.02),
	 * residual projections scaled by 1 / sqrt(number of residual layers). */
	double std = 0.02, res_std = 0.02 / sqrt(2.0 * t->o.model.layers);
	int nb = !t->rms;

	/* an MoE layer's MLP is its shared experts' */
	if (moe)
		F = t->Fs;
	u->grp = u->kind == UNIT_EXPERTS ? &t->g->edp : &t->g->dp;
	/* LoRA trains its adapters alone (Hu et al. 2021, sec. 4.1) */
	u->frozen = t->lora && u->kind != UNIT_LORA;
	switch (u->kind) {
	case UNIT_LORA:
		lora_shapes(t, u);
		break;
	case UNIT_EXPERTS:
		tensor_add(t, u, T_EW1, "experts.w1", E * Fe, C, SPLIT_EP, 1, std, 0);
		tensor_add(t, u, T_EWU, "experts.wu", t->swiglu ? E * Fe : 0, C, SPLIT_EP, 1, std, 0);
		tensor_add(t, u, T_EW2, "experts.w2", E * C, Fe, SPLIT_EP, 1, res_std, 0);
		break;
	case UNIT_WORD:
		tensor_add(t, u, T_WTE, "wte", t->V, C, SPLIT_ROWS, 1, std, 0);
		break;
	case UNIT_EMBED:
		tensor_add(t, u, T_WTE, "wte", t->tied ? 0 : t->V, C, SPLIT_ROWS, 1, std, 0);
		tensor_add(t, u, T_WPE, "wpe", t->T, C, SPLIT_NONE, 1, std, 0);
		break;
	case UNIT_HEAD:
		tensor_add(t, u, T_LNFW, "lnf.w", C, 1, SPLIT_NONE, 0, 0, 1);
		tensor_add(t, u, T_LNFB, "lnf.b", nb ? C : 0, 1, SPLIT_NONE, 0, 0, 0);
		tensor_add(t, u, T_WLM, "lm_head", t->tied ? 0 : t->V, C, SPLIT_ROWS, 1, std, 0);
		u->t[T_LNFW].tp_partial = u->t[T_LNFB].tp_partial = t->sp;
		break;
	case UNIT_LAYER:
		tensor_add(t, u, T_LN1W, "ln1.w", C, 1, SPLIT_NONE, 0, 0, 1);
		tensor_add(t, u, T_LN1B, "ln1.b", nb ? C : 0, 1, SPLIT_NONE, 0, 0, 0);
		tensor_add(t, u, T_WQ, "wq", Hd, C, SPLIT_ROWS, 1, std, 0);
		tensor_add(t, u, T_BQ, "bq", Hd, 1, SPLIT_ROWS, 0, 0, 0);
		tensor_add(t, u, T_WK, "wk", KVd, C, SPLIT_ROWS, 1, std, 0);
		tensor_add(t, u, T_BK, "bk", KVd, 1, SPLIT_ROWS, 0, 0, 0);
		tensor_add(t, u, T_WV, "wv", KVd, C, SPLIT_ROWS, 1, std, 0);
		tensor_add(t, u, T_BV, "bv", KVd, 1, SPLIT_ROWS, 0, 0, 0);
		tensor_add(t, u, T_WO, "wo", C, Hd, SPLIT_COLS, 1, res_std, 0);
		tensor_add(t, u, T_BO, "bo", C, 1, SPLIT_NONE, 0, 0, 0);
		tensor_add(t, u, T_LN2W, "ln2.w", C, 1, SPLIT_NONE, 0, 0, 1);
		tensor_add(t, u, T_LN2B, "ln2.b", nb ? C : 0, 1, SPLIT_NONE, 0, 0, 0);
		tensor_add(t, u, T_W1, "w1", F, C, SPLIT_ROWS, 1, std, 0);
		tensor_add(t, u, T_B1, "b1", F, 1, SPLIT_ROWS, 0, 0, 0);
		tensor_add(t, u, T_WU, "wu", t->swiglu ? F : 0, C, SPLIT_ROWS, 1, std, 0);
		tensor_add(t, u, T_BU, "bu", t->swiglu ? F : 0, 1, SPLIT_ROWS, 0, 0, 0);
		tensor_add(t, u, T_W2, "w2", F ? C : 0, F, SPLIT_COLS, 1, res_std, 0);
		tensor_add(t, u, T_B2, "b2", F ? C : 0, 1, SPLIT_NONE, 0, 0, 0);
		/* the router (no bias), replicated over TP and, with sequence
		 * parallelism, each TP rank's gradient its own tokens' */
		tensor_add(t, u, T_WR, "router", moe ? E : 0, C, SPLIT_NONE, 1, std, 0);
		u->t[T_WR].tp_partial = t->sp;
		u->t[T_LN1W].tp_partial = u->t[T_LN1B].tp_partial = t->sp;
		u->t[T_LN2W].tp_partial = u->t[T_LN2B].tp_partial = t->sp;
		break;
	}
	for (int i = 0; i < u->nt; i++)
		u->t[i].stream = unit_id(t, u) * 64 + (uint64_t)i + 1;
}

struct init_job {
	const struct unit *u;
	uint64_t seed;
	float *host;
};

/* Rows [begin, end) of the unit's tensors counted one after another:
 * element (r, c) of a tensor's full shape is N(0, std) drawn at index
 * r * cols + c of its stream, or its constant. */
static void init_rows(void *ctx, long begin, long end)
{
	const struct init_job *j = ctx;
	long first = 0;

	for (int i = 0; i < j->u->nt && first < end; i++) {
		const struct tensor *x = &j->u->t[i];
		long lo = begin > first ? begin - first : 0;
		long hi = end - first < x->nr ? end - first : x->nr;

		for (long r = lo; r < hi; r++) {
			float *row = j->host + x->off + r * x->nc;

			if (x->std > 0)
				exec_rand_normal_fill(row, (size_t)x->nc, j->seed, x->stream,
						      (uint64_t)(x->r0 + r) * x->cols + x->c0, x->std);
			else
				for (long c = 0; c < x->nc; c++)
					row[c] = x->value;
		}
		first += x->nr;
	}
}

/* Fills host[0..n) with the unit's initial values, the same whatever the
 * threads: o.init_threads of them when set, else the machine's CPUs
 * shared among the ranks on it, each with INIT_PART_VALUES at least. */
static void unit_init_values(const struct exec_trainer *t, const struct unit *u, float *host)
{
	struct init_job j = { u, t->o.seed, host };
	long rows = 0, min_rows = 1;
	int threads = t->o.init_threads;

	for (int i = 0; i < u->nt; i++)
		rows += u->t[i].nr;
	if (threads <= 0) {
		threads = gp_cpu_count() / exec_launcher_local_size();
		if (u->n > 0)
			min_rows = (long)((double)INIT_PART_VALUES * rows / (double)u->n) + 1;
	}
	gp_parallel_for(rows, threads, min_rows, init_rows, &j);
}

/* The range of a unit of n elements, whose gradients sum over group g,
 * this rank's optimizer updates: all of it without ZeRO, else its shard
 * of ceil(n / g's size) (*shard). */
void train_own_range(const struct exec_trainer *t, const struct exec_group *g, long n,
		     long *shard, long *off, long *len)
{
	*shard = (n + g->size - 1) / g->size;
	if (t->o.par.zero == 0) {
		*off = 0;
		*len = n;
		return;
	}
	*off = (long)g->rank * *shard;
	*len = n - *off;
	if (*len > *shard)
		*len = *shard;
	if (*len < 0)
		*len = 0;
}

void train_unit_alloc(struct exec_trainer *t, struct unit *u)
{
	int dp = u->grp->size, zero = t->o.par.zero;
	float *host;
	size_t fb = sizeof(float);

	train_own_range(t, u->grp, u->n, &u->shard, &u->own_off, &u->own_n);
	u->n_pad = u->shard * dp;
	host = xcalloc((size_t)u->n_pad + 1, fb);
	unit_init_values(t, u, host);
	if (zero == 3) {
		u->pshard = exec_dalloc(t->d, u->shard * fb);
		t->be->from_host(t->d, u->pshard, host + (size_t)u->grp->rank * u->shard,
				 u->shard * fb);
	} else {
		u->params = exec_dalloc(t->d, u->n_pad * fb);
		t->be->from_host(t->d, u->params, host, u->n_pad * fb);
		u->work = u->params;
		if (t->act != EXEC_F32) {
			u->work = exec_dalloc(t->d, u->n_pad * t->ab);
			t->be->narrow(t->d, u->work, u->params, u->n_pad);
		}
	}
	free(host);
	/* a frozen unit keeps its weights alone: no gradients, no AdamW
	 * moments (LoRA's base, Hu et al. 2021, sec. 4.2) */
	if (u->frozen)
		return;
	if (zero >= 2)
		u->gshard = exec_dalloc(t->d, u->shard * fb);
	else
		u->grads = exec_dalloc(t->d, u->n_pad * fb);
	u->m = exec_dalloc(t->d, (size_t)u->own_n * fb);
	u->v = exec_dalloc(t->d, (size_t)u->own_n * fb);
}

void train_unit_free(struct exec_trainer *t, struct unit *u)
{
	size_t fb = sizeof(float);

	if (u->work != u->params)
		exec_dfree(t->d, u->work, u->n_pad * t->ab);
	exec_dfree(t->d, u->params, u->n_pad * fb);
	exec_dfree(t->d, u->pshard, u->shard * fb);
	exec_dfree(t->d, u->grads, u->n_pad * fb);
	exec_dfree(t->d, u->gshard, u->shard * fb);
	exec_dfree(t->d, u->m, (size_t)u->own_n * fb);
	exec_dfree(t->d, u->v, (size_t)u->own_n * fb);
}

/* ZeRO-3: the unit's full parameters exist only between gather and drop.
 * These four accept NULL (no tied matrix) and do nothing then. */
enum rc train_unit_gather(struct exec_trainer *t, struct unit *u)
{
	if (!u || t->o.par.zero != 3)
		return RC_OK;
	u->params = exec_dalloc(t->d, u->n_pad * sizeof(float));
	t->be->copy(t->d, u->params + (size_t)u->grp->rank * u->shard, u->pshard,
		    u->shard * sizeof(float));
	TRY(train_all_gather(t, u->grp, u->params, u->shard, EXEC_F32));
	u->work = u->params;
	if (t->act != EXEC_F32) {
		u->work = exec_dalloc(t->d, u->n_pad * t->ab);
		t->be->narrow(t->d, u->work, u->params, u->n_pad);
	}
	return RC_OK;
}

void train_unit_drop(struct exec_trainer *t, struct unit *u)
{
	if (!u || t->o.par.zero != 3)
		return;
	if (u->work != u->params)
		exec_dfree(t->d, u->work, u->n_pad * t->ab);
	exec_dfree(t->d, u->params, u->n_pad * sizeof(float));
	u->params = NULL;
	u->work = NULL;
}

/* ZeRO-2/3: a unit's full gradient lives only through its backward, then
 * is reduce-scattered and added to this rank's shard. */
void train_grads_begin(struct exec_trainer *t, struct unit *u)
{
	if (u && !u->frozen && t->o.par.zero >= 2)
		u->grads = exec_dalloc(t->d, u->n_pad * sizeof(float));
}

/* Sequence parallelism leaves each TP rank the norm weights' gradient of
 * its own tokens; their sum over TP is the whole gradient (Korthikanti et
 * al. 2022, sec. 4.2.2; Megatron-LM's _allreduce_layernorm_grads).  A
 * norm's weight and bias lie side by side: one all-reduce for both.  So
 * do a LoRA unit's whole adapters, each TP rank's gradient of which is
 * its share of a split product (exec_train_lora.c). */
static enum rc tp_partial_grads(struct exec_trainer *t, struct unit *u)
{
	for (int j = 0; t->l.tp > 1 && j < u->nt; j++) {
		long off = u->t[j].off, n = u->t[j].n;

		if (!u->t[j].tp_partial)
			continue;
		while (j + 1 < u->nt && u->t[j + 1].tp_partial && u->t[j + 1].off == off + n)
			n += u->t[++j].n;
		TRY(train_tp_sum(t, u->grads + off, (size_t)n, EXEC_F32));
	}
	return RC_OK;
}

/* A backward pass through u has ended.  ZeRO 0/1: after the step's last,
 * the gradients are whole, and their sum over DP starts (train_grads_sum_start,
 * waited for in train_optimizer_step).  ZeRO 2/3: this pass's are reduce-
 * scattered into the shard. */
enum rc train_grads_end(struct exec_trainer *t, struct unit *u)
{
	enum rc rc;

	if (!u)
		return RC_OK;
	u->left--;
	if (u->frozen)
		return RC_OK;
	if (t->o.par.zero < 2) {
		if (u->left > 0 || !t->reducing)
			return RC_OK;
		TRY(tp_partial_grads(t, u));
		return train_grads_sum_start(t, u);
	}
	rc = tp_partial_grads(t, u);
	if (rc == RC_OK)
		rc = train_reduce_scatter(t, u->grp, u->grads, t->rs_tmp, u->shard, EXEC_F32);
	if (rc == RC_OK)
		t->be->accumulate(t->d, u->gshard, t->rs_tmp, EXEC_F32, u->shard);
	exec_dfree(t->d, u->grads, u->n_pad * sizeof(float));
	u->grads = NULL;
	return rc;
}
