/*
 * exec_train_schedule.c - the work of one pipeline stage: a layer (its
 * attention block, then its MLP or MoE block), a chunk of layers for one
 * micro-batch forward or backward (the embedding before the first, the
 * head after the last, ZeRO-3's gathers around each unit), and the
 * stage's op list from sched_build() run in order: blocking receives,
 * non-blocking sends (sched.h's contract).
 *
 * Calls (all below it; state and helpers from exec_train_state.h):
 * every block below it (embed, attention, mlp, moe, head),
 * exec_train_act.c, exec_train_params.c, exec_train_comm.c,
 * exec_data.c.
 */
#include "train/exec_train_layers.h"

/* Activations and gradients travel on channels of their own: on each,
 * every schedule's messages between two stages arrive in the order they
 * are sent (tests/test_executor.c checks it), which NCCL, having no tags,
 * needs. */
enum { CHANNEL_ACT, CHANNEL_GRAD };

/* Sequences of micro-batch mb on this DP rank at step: the step's global
 * batch is sequences (step - 1) gbs .. step gbs - 1, DP rank r takes the
 * r-th consecutive share, its micro-batches in order; of each, this CP
 * rank takes its chunks' tokens. */
static void load_tokens(struct exec_trainer *t, struct act *a, int first, int last)
{
	long base = (long)(t->step - 1) * t->o.par.gbs +
		    ((long)t->l.dp_rank * t->m + a->mb) * t->B;

	for (int b = 0; b < t->B; b++) {
		exec_data_sequence(&t->data, base + b, t->host_seq);
		for (int i = 0; i < t->Tl; i++) {
			t->host_tok[b * t->Tl + i] = t->host_seq[tok_pos(t, i)];
			t->host_tgt[b * t->Tl + i] = t->host_seq[tok_pos(t, i) + 1];
		}
	}
	if (first)
		t->be->from_host(t->d, a->tok, t->host_tok, (size_t)t->N * sizeof(int));
	if (last)
		t->be->from_host(t->d, a->tgt, t->host_tgt, (size_t)t->N * sizeof(int));
}

struct unit *train_chunk_layer(struct exec_trainer *t, int chunk, int i)
{
	return &t->units[t->layer0[chunk] + i];
}

/* One layer (Radford et al. 2019): the attention block, then the MLP
 * block (an MoE layer's, Shazeer et al. 2017), each adding to the
 * residual stream. */
static enum rc layer_forward(struct exec_trainer *t, const struct unit *u,
			     const void *x, void *out, struct layer_act *a, int att)
{
	TRY(train_attention_forward(t, u, x, a, att));
	if (u->experts)
		return train_moe_forward(t, u, a, out);
	return train_mlp_forward(t, u, a, out);
}

/* On entry dx holds the gradient of the layer's output (this rank's Ns
 * tokens); on return, of its input x: the MLP block's backward, then the
 * attention block's.  Parameter gradients accumulate into u's grads (and
 * its experts'). */
static enum rc layer_backward(struct exec_trainer *t, const struct unit *u,
			      const void *x, struct layer_act *a, int att, void *dx)
{
	if (u->experts)
		TRY(train_moe_backward(t, u, a, dx));
	else
		TRY(train_mlp_backward(t, u, a, dx));
	return train_attention_backward(t, u, x, a, att, dx);
}

static enum rc chunk_forward(struct exec_trainer *t, int chunk, int mb)
{
	struct act *a = t->acts[chunk * t->m + mb];
	int first = chunk_is_first(t, chunk), last = chunk_is_last(t, chunk);

	if (!a)
		a = train_act_acquire(t, chunk, mb);
	if (first || last)
		load_tokens(t, a, first, last);
	if (first) {
		TRY(train_unit_gather(t, t->embed));
		TRY(train_unit_gather(t, t->word));
		TRY(train_embed_forward(t, t->embed, a));
		train_unit_drop(t, t->word);
		train_unit_drop(t, t->embed);
	}
	for (int i = 0; i < t->nl[chunk]; i++) {
		struct unit *u = train_chunk_layer(t, chunk, i);
		struct layer_act *la = t->full_rec ? &t->rec : &a->la[i];

		TRY(train_unit_gather(t, u));
		TRY(train_unit_gather(t, u->experts));
		TRY(train_unit_gather(t, u->lora));
		TRY(layer_forward(t, u, a->x[i], a->x[i + 1], la,
				  t->full_rec ? t->rec_att : t->store_att));
		/* full recomputation runs the layer again before its backward */
		if (t->full_rec)
			train_moe_release(t, la);
		train_unit_drop(t, u->lora);
		train_unit_drop(t, u->experts);
		train_unit_drop(t, u);
	}
	if (last) {
		TRY(train_unit_gather(t, t->head));
		TRY(train_unit_gather(t, t->word));
		TRY(train_head_forward(t, t->head, a));
		train_unit_drop(t, t->word);
		train_unit_drop(t, t->head);
	}
	return RC_OK;
}

/* On entry t->dx holds the gradient of the chunk's output (unless it is
 * the last virtual stage); on return, of its input.  A tied matrix used
 * at both ends of one chunk has its gradient reduced once per use under
 * ZeRO-2/3: the shard adds them up. */
static enum rc chunk_backward(struct exec_trainer *t, int chunk, int mb)
{
	struct act *a = t->acts[chunk * t->m + mb];
	int first = chunk_is_first(t, chunk), last = chunk_is_last(t, chunk);

	if (!a) {
		gp_error("rank %d: backward of micro-batch %d, chunk %d before its forward",
			 t->l.rank, mb, chunk);
		return RC_ERR;
	}
	if (last) {
		TRY(train_unit_gather(t, t->head));
		TRY(train_unit_gather(t, t->word));
		train_grads_begin(t, t->head);
		train_grads_begin(t, t->word);
		TRY(train_head_backward(t, t->head, a));
		TRY(train_grads_end(t, t->word));
		TRY(train_grads_end(t, t->head));
		train_unit_drop(t, t->word);
		train_unit_drop(t, t->head);
	}
	for (int i = t->nl[chunk] - 1; i >= 0; i--) {
		struct unit *u = train_chunk_layer(t, chunk, i);
		struct layer_act *la = &t->rec;
		int att = t->rec_att;

		TRY(train_unit_gather(t, u));
		TRY(train_unit_gather(t, u->experts));
		TRY(train_unit_gather(t, u->lora));
		if (t->full_rec)
			TRY(layer_forward(t, u, a->x[i], t->rec_out, &t->rec, t->rec_att));
		else {
			la = &a->la[i];
			att = t->store_att;
		}
		train_grads_begin(t, u);
		train_grads_begin(t, u->experts);
		train_grads_begin(t, u->lora);
		TRY(layer_backward(t, u, a->x[i], la, att, t->dx));
		TRY(train_grads_end(t, u->lora));
		TRY(train_grads_end(t, u->experts));
		TRY(train_grads_end(t, u));
		train_unit_drop(t, u->lora);
		train_unit_drop(t, u->experts);
		train_unit_drop(t, u);
	}
	if (first) {
		TRY(train_unit_gather(t, t->embed));
		TRY(train_unit_gather(t, t->word));
		train_grads_begin(t, t->embed);
		train_grads_begin(t, t->word);
		TRY(train_embed_backward(t, t->embed, a, t->dx));
		TRY(train_grads_end(t, t->word));
		TRY(train_grads_end(t, t->embed));
		train_unit_drop(t, t->word);
		train_unit_drop(t, t->embed);
	}
	train_act_release(t, a);
	return RC_OK;
}

/* Runs this stage's op list: every op when backward, else only forwards
 * and the activation messages (still a deadlock-free order: a stage's
 * forward messages keep their relative order). */
enum rc train_run_schedule(struct exec_trainer *t, int backward)
{
	const struct sched_stage *st = &t->sched.stages[t->l.pp_rank];
	struct exec_group *pp = &t->g->pp;
	size_t nc = (size_t)t->Ns * t->C;
	long h;
	enum rc rc;

	for (int i = 0; i < st->n; i++) {
		const struct sched_op *op = &st->ops[i];
		struct act *a;
		int kind;

		if (!backward && (op->kind != SCHED_OP_FWD && op->data != SCHED_DATA_ACT))
			continue;
		switch (op->kind) {
		case SCHED_OP_FWD: kind = EXEC_TRACE_FWD; break;
		case SCHED_OP_BWD: kind = EXEC_TRACE_BWD; break;
		case SCHED_OP_RECV: kind = EXEC_TRACE_RECV; break;
		case SCHED_OP_SEND: kind = EXEC_TRACE_SEND; break;
		default:
			gp_error("rank %d: schedule op '%c' is not run by the executor",
				 t->l.rank, sched_op_letter(op->kind));
			return RC_ERR;
		}
		h = train_op_begin(t, op, kind, kind == EXEC_TRACE_SEND || kind == EXEC_TRACE_RECV
			     ? (double)nc * t->ab : 0);
		switch (op->kind) {
		case SCHED_OP_FWD:
			rc = chunk_forward(t, op->chunk, op->mb);
			break;
		case SCHED_OP_BWD:
			rc = chunk_backward(t, op->chunk, op->mb);
			break;
		case SCHED_OP_RECV:
			if (op->data == SCHED_DATA_ACT) {
				a = train_act_acquire(t, op->chunk, op->mb);
				rc = pp->comm->recv(pp, op->peer, CHANNEL_ACT, a->x[0], nc, t->act,
						    sched_op_tag(&t->sched, op));
			} else {
				rc = pp->comm->recv(pp, op->peer, CHANNEL_GRAD, t->dx, nc, t->act,
						    sched_op_tag(&t->sched, op));
			}
			break;
		default:
			if (op->data == SCHED_DATA_ACT) {
				a = t->acts[op->chunk * t->m + op->mb];
				rc = pp->comm->send(pp, op->peer, CHANNEL_ACT,
						    a->x[t->nl[op->chunk]], nc, t->act,
						    sched_op_tag(&t->sched, op));
			} else {
				rc = pp->comm->send(pp, op->peer, CHANNEL_GRAD, t->dx, nc, t->act,
						    sched_op_tag(&t->sched, op));
			}
			break;
		}
		train_op_end(t, h, kind);
		if (rc != RC_OK)
			return rc;
	}
	h = t->l.pp > 1 ? train_op_begin(t, NULL, EXEC_TRACE_WAIT_SENDS, 0) : -1;
	rc = pp->comm->wait_sends(pp);
	train_op_end(t, h, EXEC_TRACE_WAIT_SENDS);
	if (rc != RC_OK)
		return rc;
	if (!backward)
		for (int i = 0; i < t->v * t->m; i++)
			if (t->acts[i])
				train_act_release(t, t->acts[i]);
	return RC_OK;
}
