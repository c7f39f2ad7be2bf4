/*
 * exec_train_head.c - the head unit, on the last stage: the final norm,
 * the vocabulary-parallel LM head and its cross-entropy
 * (Megatron-LM's vocab_parallel_cross_entropy: row maxima and
 * statistics summed over TP), forward and backward.
 *
 * Calls (all below it; state and helpers from exec_train_state.h):
 * exec_train_comm.c, exec_train_embed.c, exec_train_tp.c, the device's
 * kernels.
 */
#include "train/exec_train_layers.h"

/* Final norm, the vocabulary-parallel LM head and its cross-entropy. */
enum rc train_head_forward(struct exec_trainer *t, const struct unit *u, struct act *a)
{
	const void *x = a->x[t->nl[a->chunk]], *in;

	train_norm_forward(t, a->lnf, a->lnf_mean, a->lnf_rstd, x, P(t, u, T_LNFW), P(t, u, T_LNFB));
	TRY(train_seq_gather(t, a->lnf, t->gath, &in));
	t->be->matmul_forward(t->d, a->logits, in, train_word_params(t, u, T_WLM), NULL, t->N, t->C,
			      t->nv);
	t->be->ce_row_max(t->d, a->rmax, a->logits, t->N, t->nv);
	TRY(train_all_reduce(t, &t->g->tp, a->rmax, t->N, EXEC_F32, EXEC_MAX));
	t->be->ce_row_stats(t->d, a->stats, a->logits, a->rmax, a->tgt, t->N, t->nv, t->v0);
	TRY(train_tp_sum(t, a->stats, 2 * (size_t)t->N, EXEC_F32));
	t->loss_sum += t->be->ce_loss_sum(t->d, a->rmax, a->stats, t->N);
	return RC_OK;
}

enum rc train_head_backward(struct exec_trainer *t, const struct unit *u, struct act *a)
{
	/* the step's loss is the mean over gbs * seq tokens */
	float scale = (float)(1.0 / ((double)t->o.par.gbs * t->T));
	size_t nc = (size_t)t->N * t->C;
	const void *in;
	void *dn;

	t->be->ce_backward(t->d, a->logits, a->rmax, a->stats, a->tgt, t->N, t->nv, t->v0, scale);
	TRY(train_seq_gather(t, a->lnf, t->gath, &in));
	t->be->zero(t->d, t->dln, nc * t->ab);
	t->be->matmul_backward(t->d, t->dln, train_word_grads(t, u, T_WLM), NULL, a->logits, in,
			       train_word_params(t, u, T_WLM), t->N, t->C, t->nv);
	TRY(train_seq_reduce(t, t->dln, &dn));
	t->be->zero(t->d, t->dx, (size_t)t->Ns * t->C * t->ab);
	train_norm_backward(t, t->dx, G(u, T_LNFW), G(u, T_LNFB), dn, a->x[t->nl[a->chunk]],
		      P(t, u, T_LNFW), a->lnf_mean, a->lnf_rstd);
	return RC_OK;
}
