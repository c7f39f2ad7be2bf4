/*
 * exec_train_params.c - a unit's parameters: its tensors and how tensor
 * parallelism cuts them, their initial values (the same whatever the
 * layout, drawn in parallel), this rank's ZeRO shard and optimizer range,
 * ZeRO-3's gather before a use and drop after it, and what ends a unit's
 * backward: the gradients' sum over DP started (ZeRO 0/1) or reduce-
 * scattered into the shard (ZeRO 2/3).
 */
#include <math.h>
#include <stdlib.h>

#include "train/exec_trainer_internal.h"

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
 * layer i's experts L + 2 + i.  A tied matrix is the embedding's wte,
 * whichever stage holds it. */
static uint64_t unit_id(const struct exec_trainer *t, const struct unit *u)
{
	if (u->kind == UNIT_EMBED || u->kind == UNIT_WORD)
		return 0;
	if (u->kind == UNIT_LAYER)
		return 1 + (uint64_t)u->layer;
	if (u->kind == UNIT_EXPERTS)
		return 2 + (uint64_t)t->o.model.layers + (uint64_t)u->layer;
	return 1 + (uint64_t)t->o.model.layers;
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
	switch (u->kind) {
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
		u->t[T_LNFW].seq_partial = u->t[T_LNFB].seq_partial = t->sp;
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
		u->t[T_WR].seq_partial = t->sp;
		u->t[T_LN1W].seq_partial = u->t[T_LN1B].seq_partial = t->sp;
		u->t[T_LN2W].seq_partial = u->t[T_LN2B].seq_partial = t->sp;
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
	if (u && t->o.par.zero >= 2)
		u->grads = exec_dalloc(t->d, u->n_pad * sizeof(float));
}

/* Sequence parallelism leaves each TP rank the norm weights' gradient of
 * its own tokens; their sum over TP is the whole gradient (Korthikanti et
 * al. 2022, sec. 4.2.2; Megatron-LM's _allreduce_layernorm_grads).  A
 * norm's weight and bias lie side by side: one all-reduce for both. */
static enum rc sp_norm_grads(struct exec_trainer *t, struct unit *u)
{
	for (int j = 0; t->sp && j < u->nt; j++) {
		long off = u->t[j].off, n = u->t[j].n;

		if (!u->t[j].seq_partial)
			continue;
		while (j + 1 < u->nt && u->t[j + 1].seq_partial && u->t[j + 1].off == off + n)
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
	if (t->o.par.zero < 2) {
		if (u->left > 0 || !t->reducing)
			return RC_OK;
		TRY(sp_norm_grads(t, u));
		return train_grads_sum_start(t, u);
	}
	rc = sp_norm_grads(t, u);
	if (rc == RC_OK)
		rc = train_reduce_scatter(t, u->grp, u->grads, t->rs_tmp, u->shard, EXEC_F32);
	if (rc == RC_OK)
		t->be->accumulate(t->d, u->gshard, t->rs_tmp, EXEC_F32, u->shard);
	exec_dfree(t->d, u->grads, u->n_pad * sizeof(float));
	u->grads = NULL;
	return rc;
}
