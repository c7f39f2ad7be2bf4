/*
 * exec_train_attention.c - a layer's attention block: norm, Q, K and V
 * (column-parallel, whole heads per TP rank), causal attention by the
 * device's kernel, the output projection (row-parallel) and the residual
 * add; with context parallelism K and V gathered over the CP group in
 * sequence order and their gradients reduce-scattered back (Llama 3's
 * all-gather form, Dubey et al. 2024, sec. 3.3.2).
 *
 * Calls (all below it; state and helpers from exec_train_state.h):
 * exec_train_comm.c, exec_train_lora.c, exec_train_tp.c, the device's
 * kernels.
 */
#include "train/exec_train_layers.h"

/* Context parallelism: every CP rank's [N, kvd] part of K or V (its two
 * chunks of each of the B sequences) gathered into full, [B T, kvd] in
 * sequence order, through t->cpbuf (the gather's rank-major order).
 * to_full: from cpbuf into full, else back. */
static void cp_reorder(struct exec_trainer *t, void *full, int to_full)
{
	size_t kvd = (size_t)t->KVl * t->hd, ck = (size_t)t->Tc * kvd;

	for (int r = 0; r < t->cp; r++)
		for (int b = 0; b < t->B; b++)
			for (int c = 0; c < t->nc; c++) {
				void *f = at(t, full, ((size_t)b * t->T + chunk_pos(t, r, c)) * kvd);
				void *g = at(t, t->cpbuf,
					     (((size_t)r * t->B + b) * t->nc + c) * ck);

				if (to_full)
					t->be->copy(t->d, f, g, ck * t->ab);
				else
					t->be->copy(t->d, g, f, ck * t->ab);
			}
}

static enum rc cp_gather(struct exec_trainer *t, const void *x, void *full)
{
	size_t n = (size_t)t->N * t->KVl * t->hd;

	t->be->copy(t->d, at(t, t->cpbuf, (size_t)t->l.cp_rank * n), x, n * t->ab);
	TRY(train_all_gather(t, &t->g->cp, t->cpbuf, n, t->act));
	cp_reorder(t, full, 1);
	return RC_OK;
}

/* The reverse: the gradient of every key or value in full, [B T, kvd],
 * summed over the CP ranks, each keeping its chunks' in out ([N, kvd]). */
static enum rc cp_scatter(struct exec_trainer *t, const void *full, void *out)
{
	cp_reorder(t, (void *)full, 0);
	return train_reduce_scatter(t, &t->g->cp, t->cpbuf, out, (size_t)t->N * t->KVl * t->hd,
			      t->act);
}

/* Attention of this rank's chunks against every key of their sequences
 * (kf, vf: [B T, kvd] in sequence order), chunk by chunk: each chunk's
 * queries start at its own position.  The log-sum-exp and the kept
 * probabilities are laid out chunk by chunk, as one call per chunk reads
 * them back in backward. */
static void cp_attention_forward(struct exec_trainer *t, struct layer_act *a, int att)
{
	size_t qd = (size_t)t->Hl * t->hd, kvd = (size_t)t->KVl * t->hd;

	for (int b = 0; b < t->B; b++)
		for (int c = 0; c < t->nc; c++) {
			size_t row = (size_t)b * t->Tl + (size_t)c * t->Tc;
			size_t call = (size_t)b * t->nc + c, lr = call * t->Hl * t->Tc;

			t->be->attention_forward(t->d, at(t, a->atty, row * qd), a->lse + lr,
						 att ? at(t, a->att, lr * t->T) : NULL,
						 at(t, a->q, row * qd),
						 at(t, t->kf, (size_t)b * t->T * kvd),
						 at(t, t->vf, (size_t)b * t->T * kvd), 1, t->Tc, t->T,
						 t->cpos[c], t->Hl, t->KVl, t->hd);
		}
}

static void cp_attention_backward(struct exec_trainer *t, const struct layer_act *a, int att)
{
	size_t qd = (size_t)t->Hl * t->hd, kvd = (size_t)t->KVl * t->hd;

	for (int b = 0; b < t->B; b++)
		for (int c = 0; c < t->nc; c++) {
			size_t row = (size_t)b * t->Tl + (size_t)c * t->Tc;
			size_t call = (size_t)b * t->nc + c, lr = call * t->Hl * t->Tc;
			size_t ko = (size_t)b * t->T * kvd;

			t->be->attention_backward(t->d, at(t, t->dq, row * qd), at(t, t->dkf, ko),
						  at(t, t->dvf, ko), at(t, t->datty, row * qd),
						  at(t, a->q, row * qd), at(t, t->kf, ko),
						  at(t, t->vf, ko), a->lse + lr,
						  att ? at(t, a->att, lr * t->T) : NULL, 1, t->Tc,
						  t->T, t->cpos[c], t->Hl, t->KVl, t->hd);
		}
}

/* The attention block of layer u: a->res2 = x + Wo attn(norm(x)) over
 * this rank's heads (and, with context parallelism, every key of its
 * chunks' sequences); keeps in a what backward reads, the probabilities
 * when att. */
enum rc train_attention_forward(struct exec_trainer *t, const struct unit *u, const void *x,
				struct layer_act *a, int att)
{
	const struct exec_backend *be = t->be;
	struct exec_device *d = t->d;
	int N = t->N, C = t->C, qd = t->Hl * t->hd, kvd = t->KVl * t->hd;
	const void *in;
	void *y;

	train_norm_forward(t, a->ln1, a->ln1_mean, a->ln1_rstd, x, P(t, u, T_LN1W), P(t, u, T_LN1B));
	TRY(train_seq_gather(t, a->ln1, t->gath, &in));
	be->matmul_forward(d, a->q, in, P(t, u, T_WQ), P(t, u, T_BQ), N, C, qd);
	be->matmul_forward(d, a->k, in, P(t, u, T_WK), P(t, u, T_BK), N, C, kvd);
	be->matmul_forward(d, a->v, in, P(t, u, T_WV), P(t, u, T_BV), N, C, kvd);
	train_lora_forward(t, u, T_WQ, a->q, in, a->lz[L_Q], C, qd);
	train_lora_forward(t, u, T_WK, a->k, in, a->lz[L_K], C, kvd);
	train_lora_forward(t, u, T_WV, a->v, in, a->lz[L_V], C, kvd);
	if (t->cp > 1) {
		TRY(cp_gather(t, a->k, t->kf));
		TRY(cp_gather(t, a->v, t->vf));
		cp_attention_forward(t, a, att);
	} else {
		be->attention_forward(d, a->atty, a->lse, att ? a->att : NULL, a->q, a->k, a->v,
				      t->B, t->T, t->T, 0, t->Hl, t->KVl, t->hd);
	}
	TRY(train_row_parallel(t, &y, a->atty, u, T_WO, T_BO, a->lz[L_O], qd));
	be->residual_forward(d, a->res2, x, y, (long)t->Ns * C);
	return RC_OK;
}

/* The attention block's backward: on entry dx holds the gradient of
 * a->res2, on return of the block's input x.  A row-parallel GEMM's
 * output gradient is dx gathered: its bias's gradient, summed over all N
 * tokens, is whole on every rank. */
enum rc train_attention_backward(struct exec_trainer *t, const struct unit *u, const void *x,
				 const struct layer_act *a, int att, void *dx)
{
	const struct exec_backend *be = t->be;
	struct exec_device *d = t->d;
	int N = t->N, C = t->C, qd = t->Hl * t->hd, kvd = t->KVl * t->hd;
	size_t fb = t->ab, nc = (size_t)N * C;
	const void *dy, *in;
	void *dn;

	TRY(train_seq_gather(t, dx, t->tmp, &dy));
	be->zero(d, t->datty, (size_t)N * qd * fb);
	be->matmul_backward(d, t->datty, G(u, T_WO), G(u, T_BO), dy, a->atty, P(t, u, T_WO), N,
			    qd, C);
	train_lora_backward(t, u, T_WO, t->datty, dy, a->atty, a->lz[L_O], qd, C);
	be->zero(d, t->dq, (size_t)N * qd * fb);
	be->zero(d, t->dk, (size_t)N * kvd * fb);
	be->zero(d, t->dv, (size_t)N * kvd * fb);
	if (t->cp > 1) {
		size_t full = (size_t)t->B * t->T * kvd * fb;

		TRY(cp_gather(t, a->k, t->kf));
		TRY(cp_gather(t, a->v, t->vf));
		be->zero(d, t->dkf, full);
		be->zero(d, t->dvf, full);
		cp_attention_backward(t, a, att);
		TRY(cp_scatter(t, t->dkf, t->dk));
		TRY(cp_scatter(t, t->dvf, t->dv));
	} else {
		be->attention_backward(d, t->dq, t->dk, t->dv, t->datty, a->q, a->k, a->v,
				       a->lse, att ? a->att : NULL, t->B, t->T, t->T, 0, t->Hl,
				       t->KVl, t->hd);
	}
	TRY(train_seq_gather(t, a->ln1, t->gath, &in));
	be->zero(d, t->dln, nc * fb);
	be->matmul_backward(d, t->dln, G(u, T_WQ), G(u, T_BQ), t->dq, in, P(t, u, T_WQ), N, C, qd);
	be->matmul_backward(d, t->dln, G(u, T_WK), G(u, T_BK), t->dk, in, P(t, u, T_WK), N, C, kvd);
	be->matmul_backward(d, t->dln, G(u, T_WV), G(u, T_BV), t->dv, in, P(t, u, T_WV), N, C, kvd);
	train_lora_backward(t, u, T_WQ, t->dln, t->dq, in, a->lz[L_Q], C, qd);
	train_lora_backward(t, u, T_WK, t->dln, t->dk, in, a->lz[L_K], C, kvd);
	train_lora_backward(t, u, T_WV, t->dln, t->dv, in, a->lz[L_V], C, kvd);
	TRY(train_seq_reduce(t, t->dln, &dn));
	train_norm_backward(t, dx, G(u, T_LN1W), G(u, T_LN1B), dn, x, P(t, u, T_LN1W),
		      a->ln1_mean, a->ln1_rstd);
	return RC_OK;
}
