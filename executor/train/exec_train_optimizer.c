/*
 * exec_train_optimizer.c - the end of a step: wait for the gradients'
 * sums, add the tied copies' gradients, the global gradient norm and the
 * loss summed over the world in one all-reduce, clipping by the norm
 * (Pascanu et al., ICML 2013), AdamW on this rank's range, ZeRO-1/2's
 * all-gather of the updated parameters and the working copy narrowed.
 *
 * Calls (all below it; state and helpers from exec_train_state.h):
 * exec_train_comm.c, exec_trace.c, the device's kernels.
 */
#include <math.h>

#include "train/exec_train_layers.h"

/* This rank's optimizer view of unit u: parameters and gradients of its
 * own range [own_off, own_off + own_n).  Under ZeRO 1 to 3 the summed
 * gradients exist there alone (train_grads_end). */
static float *own_params(const struct exec_trainer *t, const struct unit *u)
{
	return t->o.par.zero == 3 ? u->pshard : u->params + u->own_off;
}

static float *own_grads(const struct exec_trainer *t, const struct unit *u)
{
	return t->o.par.zero >= 2 ? u->gshard : u->grads + u->own_off;
}

/* The part of tensor x inside the own range, as [*lo, *lo + *len) relative
 * to own_off; 0 when they do not meet. */
static int own_part(const struct unit *u, const struct tensor *x, long *lo, long *len)
{
	long a = x->off > u->own_off ? x->off : u->own_off;
	long b = x->off + x->n < u->own_off + u->own_n ? x->off + x->n : u->own_off + u->own_n;

	if (b <= a)
		return 0;
	*lo = a - u->own_off;
	*len = b - a;
	return 1;
}

/* Adds to *acc (backend memory) the squared gradient norm of what this
 * rank counts: its own range, with replicated tensors counted on TP rank
 * 0 only, a tied matrix on the first stage only and, without ZeRO (every
 * rank of a unit's group, DP and CP ranks or the experts' data-parallel
 * ones, holds the same reduced gradients), on the first of them only;
 * with ZeRO each holds the sum of its own shard, and the shards' squares
 * add up over the group in train_world_sums. */
static void grad_sumsq(const struct exec_trainer *t, double *acc)
{
	for (int i = 0; i < t->n_units; i++) {
		const struct unit *u = &t->units[i];
		const float *g = own_grads(t, u);

		if (u->frozen || u->mirror || (t->o.par.zero == 0 && u->grp->rank != 0))
			continue;
		for (int j = 0; j < u->nt; j++) {
			long lo, len;

			if (u->t[j].replicated && t->l.tp_rank != 0)
				continue;
			if (own_part(u, &u->t[j], &lo, &len))
				t->be->sumsq(t->d, acc, g + lo, len);
		}
	}
}

/* Sums over the world this rank's loss and, when norm, its squared
 * gradient norm (zero otherwise), into out[2] on the host; both travel
 * in one all-reduce of backend memory, the norm summed there without a
 * wait per tensor. */
enum rc train_world_sums(struct exec_trainer *t, double loss, int norm, double out[2])
{
	double v[2] = { loss, 0 };

	t->be->from_host(t->d, t->scal, v, sizeof(v));
	if (norm)
		grad_sumsq(t, t->scal + 1);
	TRY(train_all_reduce(t, &t->g->world, t->scal, 2, EXEC_F64, EXEC_SUM));
	t->be->to_host(t->d, out, t->scal, 2 * sizeof(double));
	return RC_OK;
}

int train_counts_loss(const struct exec_trainer *t)
{
	return t->l.tp_rank == 0 && t->l.pp_rank == t->l.pp - 1;
}

void train_zero_grads(struct exec_trainer *t)
{
	for (int i = 0; i < t->n_units; i++) {
		struct unit *u = &t->units[i];

		if (u->frozen)
			continue;
		if (t->o.par.zero >= 2)
			t->be->zero(t->d, u->gshard, u->shard * sizeof(float));
		else
			t->be->zero(t->d, u->grads, u->n_pad * sizeof(float));
	}
}

/* Tied embeddings over more than one stage: the first and last stages'
 * copies each have the gradient of their own use, and both get the sum
 * (Megatron-LM's embedding-group all-reduce, _allreduce_word_embedding_grads).
 * The executor has no two-rank group for it: the pipeline group
 * all-reduces and the stages between add zeros (x + 0 = x exactly, so
 * both copies get the same bits).  It sums the DP-reduced gradient of
 * this rank's own range, the same range on both stages since the copies
 * are units of one shape. */
static enum rc tied_sum(struct exec_trainer *t)
{
	struct exec_group *pp = &t->g->pp;
	float *g = t->word_zero;

	/* (a frozen tied matrix has no gradient: word_own_n 0) */
	if (!t->tied || t->l.pp == 1 || t->word_own_n == 0)
		return RC_OK;
	if (t->word)
		g = own_grads(t, t->word);
	else
		t->be->zero(t->d, g, (size_t)t->word_own_n * sizeof(float));
	return train_all_reduce(t, pp, g, (size_t)t->word_own_n, EXEC_F32, EXEC_SUM);
}

enum rc train_optimizer_step(struct exec_trainer *t, int step, double *loss,
			     double *grad_norm)
{
	struct exec_group *dp = &t->g->dp;
	const struct exec_opts *o = &t->o;
	double red[2], norm, clip = 1.0;
	long h;

	/* every unit's gradients have been summed over DP, or their sums
	 * started, as its last backward ended (train_grads_end) */
	for (int i = 0; i < t->n_units; i++)
		if (t->units[i].left != 0) {
			gp_error("rank %d: optimizer step %d: unit %d has %d of its %d backward "
				 "passes still to run", t->l.rank, step, i, t->units[i].left,
				 t->units[i].uses);
			return RC_ERR;
		}
	if (o->par.zero <= 1) {
		enum rc rc = dp->comm->wait_reduces(dp);

		if (rc == RC_OK && t->E > 0)
			rc = t->g->edp.comm->wait_reduces(&t->g->edp);
		exec_tracer_waited(t->tr);
		TRY(rc);
	}
	TRY(tied_sum(t));
	/* the optimizer's track holds the norm, clipping and AdamW; its
	 * collectives show on the communication track */
	h = train_op_begin(t, NULL, EXEC_TRACE_OPTIMIZER, 0);
	TRY(train_world_sums(t, train_counts_loss(t) ? t->loss_sum : 0, 1, red));
	*loss = red[0] / ((double)o->par.gbs * t->T);
	norm = sqrt(red[1]);
	*grad_norm = norm;
	/* clipping by the global norm (Pascanu et al., ICML 2013, algorithm 2) */
	if (o->grad_clip > 0 && norm > o->grad_clip)
		clip = o->grad_clip / (norm + 1e-6);
	for (int i = 0; i < t->n_units; i++) {
		struct unit *u = &t->units[i];
		float *p = own_params(t, u), *g = own_grads(t, u);

		/* a frozen unit stays as drawn, working copy included */
		if (u->frozen)
			continue;
		for (int j = 0; j < u->nt; j++) {
			long lo, len;

			if (!own_part(u, &u->t[j], &lo, &len))
				continue;
			t->be->adamw(t->d, p + lo, g + lo, u->m + lo, u->v + lo, len,
				     (float)o->lr, (float)o->beta1, (float)o->beta2,
				     (float)o->adam_eps,
				     u->t[j].decay ? (float)o->weight_decay : 0.0f,
				     step, (float)clip);
		}
		if (o->par.zero == 1 || o->par.zero == 2)
			TRY(train_all_gather(t, u->grp, u->params, u->shard, EXEC_F32));
		/* the working copy follows the master (ZeRO-3's, at its gather) */
		if (o->par.zero < 3 && u->work != u->params)
			t->be->narrow(t->d, u->work, u->params, u->n_pad);
	}
	train_op_end(t, h, EXEC_TRACE_OPTIMIZER);
	return RC_OK;
}
