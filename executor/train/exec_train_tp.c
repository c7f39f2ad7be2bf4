/*
 * exec_train_tp.c - what every block of the model goes through under
 * tensor parallelism (Shoeybi et al. 2019): the norms, which run on this
 * rank's slice of the residual stream; with sequence parallelism
 * (Korthikanti et al. 2022, fig. 5) the all-gather of the slices after
 * them ("g") and the reduce-scatter that ends a row-parallel GEMM
 * ("g-bar"), else the all-reduce that does.
 *
 * Calls (all below it; state and helpers from exec_train_state.h):
 * exec_train_comm.c, exec_train_lora.c, the device's kernels.
 */
#include "train/exec_train_layers.h"

/* Norms run on the residual stream: this rank's Ns tokens. */
void train_norm_forward(struct exec_trainer *t, void *out, float *mean, float *rstd,
			const void *inp, const void *w, const void *b)
{
	if (t->rms)
		t->be->rmsnorm_forward(t->d, out, rstd, inp, w, t->Ns, t->C);
	else
		t->be->layernorm_forward(t->d, out, mean, rstd, inp, w, b, t->Ns, t->C);
}

void train_norm_backward(struct exec_trainer *t, void *dinp, float *dw, float *db,
			 const void *dout, const void *inp, const void *w,
			 const float *mean, const float *rstd)
{
	if (t->rms)
		t->be->rmsnorm_backward(t->d, dinp, dw, dout, inp, w, rstd, t->Ns, t->C);
	else
		t->be->layernorm_backward(t->d, dinp, dw, db, dout, inp, w, mean, rstd,
					  t->Ns, t->C);
}

/* All N tokens of x, this rank's [Ns, C] slice of the residual stream:
 * with sequence parallelism the all-gather of every TP rank's slice into
 * full (Korthikanti et al. 2022, fig. 5, forward of "g"; backward of
 * "g-bar"), else x itself.  *out says where they are. */
enum rc train_seq_gather(struct exec_trainer *t, const void *x, void *full,
			 const void **out)
{
	size_t n = (size_t)t->Ns * t->C;

	*out = x;
	if (!t->sp)
		return RC_OK;
	t->be->copy(t->d, at(t, full, (size_t)t->l.tp_rank * n), x, n * t->ab);
	TRY(train_all_gather(t, &t->g->tp, full, n, t->act));
	*out = full;
	return RC_OK;
}

/* The sum over TP of every rank's partial [N, C] product in full: with
 * sequence parallelism a reduce-scatter leaves this rank's Ns tokens of
 * it in t->part (fig. 5, forward of "g-bar"; backward of "g"), else an
 * all-reduce leaves all of it in full (Shoeybi et al. 2019, fig. 3).  *out
 * says where this rank's Ns tokens are. */
enum rc train_seq_reduce(struct exec_trainer *t, void *full, void **out)
{
	size_t n = (size_t)t->Ns * t->C;

	*out = full;
	if (!t->sp)
		return train_tp_sum(t, full, (size_t)t->N * t->C, t->act);
	TRY(train_reduce_scatter(t, &t->g->tp, full, t->part, n, t->act));
	*out = t->part;
	return RC_OK;
}

/* Row-parallel matmul of unit u's tensor w: partial products of all N
 * tokens (with its LoRA adapter's, whose rank-r activation goes to lz)
 * summed over TP, then the bias (tensor `bias`) on this rank's Ns
 * tokens, into *out (t->tmp or t->part). */
enum rc train_row_parallel(struct exec_trainer *t, void **out, const void *inp,
			   const struct unit *u, int w, int bias, void *lz, int ic)
{
	t->be->matmul_forward(t->d, t->tmp, inp, P(t, u, w), NULL, t->N, ic, t->C);
	train_lora_forward(t, u, w, t->tmp, inp, lz, ic, t->C);
	TRY(train_seq_reduce(t, t->tmp, out));
	t->be->add_bias(t->d, *out, P(t, u, bias), t->Ns, t->C);
	return RC_OK;
}
