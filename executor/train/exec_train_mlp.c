/*
 * exec_train_mlp.c - a layer's MLP block: norm, W1 (and SwiGLU's gate
 * Wu) column-parallel, the activation, W2 row-parallel, the residual add;
 * forward and backward.  Its MLP alone, between the norm and the
 * residual, is also an MoE layer's shared experts' (exec_train_moe.c).
 *
 * Calls (all below it; state and helpers from exec_train_state.h):
 * exec_train_lora.c, exec_train_tp.c, the device's kernels.
 */
#include "train/exec_train_layers.h"

/* The MLP of unit u on this rank's normed tokens a->ln2: y = W2 act(W1
 * x), GELU or SwiGLU over this rank's columns of W1 (its width the
 * unit's), summed over TP and W2's bias added.  *y is this rank's Ns
 * tokens of it (t->tmp or t->part). */
enum rc train_ffn_forward(struct exec_trainer *t, const struct unit *u, struct layer_act *a,
			  void **y)
{
	const struct exec_backend *be = t->be;
	struct exec_device *d = t->d;
	int N = t->N, C = t->C, Fl = (int)u->t[T_W1].nr;
	const void *in;

	TRY(train_seq_gather(t, a->ln2, t->gath, &in));
	be->matmul_forward(d, a->h, in, P(t, u, T_W1), P(t, u, T_B1), N, C, Fl);
	train_lora_forward(t, u, T_W1, a->h, in, a->lz[L_1], C, Fl);
	if (t->swiglu) {
		be->matmul_forward(d, a->u, in, P(t, u, T_WU), P(t, u, T_BU), N, C, Fl);
		train_lora_forward(t, u, T_WU, a->u, in, a->lz[L_U], C, Fl);
		be->swiglu_forward(d, a->a, a->h, a->u, (long)N * Fl);
	} else {
		be->gelu_forward(d, a->a, a->h, (long)N * Fl);
	}
	return train_row_parallel(t, y, a->a, u, T_W2, T_B2, a->lz[L_2], Fl);
}

/* The MLP block of layer u: out = a->res2 + MLP(norm(a->res2)). */
enum rc train_mlp_forward(struct exec_trainer *t, const struct unit *u, struct layer_act *a,
			  void *out)
{
	void *y;

	train_norm_forward(t, a->ln2, a->ln2_mean, a->ln2_rstd, a->res2, P(t, u, T_LN2W),
			   P(t, u, T_LN2B));
	TRY(train_ffn_forward(t, u, a, &y));
	t->be->residual_forward(t->d, out, a->res2, y, (long)t->Ns * t->C);
	return RC_OK;
}

/* The MLP's backward: dx holds the gradient of its output y (this
 * rank's Ns tokens); *dn on return the gradient of its input a->ln2
 * (this rank's Ns tokens, in t->dln or t->part), which the caller may
 * add to.  Parameter gradients accumulate into u's grads. */
enum rc train_ffn_backward(struct exec_trainer *t, const struct unit *u,
			   const struct layer_act *a, const void *dx, void **dn)
{
	const struct exec_backend *be = t->be;
	struct exec_device *d = t->d;
	int N = t->N, C = t->C, Fl = (int)u->t[T_W1].nr;
	size_t fb = t->ab, nc = (size_t)N * C, nf = (size_t)N * Fl;
	const void *dy, *in;

	TRY(train_seq_gather(t, dx, t->tmp, &dy));
	be->zero(d, t->da, nf * fb);
	be->matmul_backward(d, t->da, G(u, T_W2), G(u, T_B2), dy, a->a, P(t, u, T_W2), N, Fl, C);
	train_lora_backward(t, u, T_W2, t->da, dy, a->a, a->lz[L_2], Fl, C);
	be->zero(d, t->dh, nf * fb);
	if (t->swiglu) {
		be->zero(d, t->du, nf * fb);
		be->swiglu_backward(d, t->dh, t->du, a->h, a->u, t->da, (long)nf);
	} else {
		be->gelu_backward(d, t->dh, a->h, t->da, (long)nf);
	}
	TRY(train_seq_gather(t, a->ln2, t->gath, &in));
	be->zero(d, t->dln, nc * fb);
	be->matmul_backward(d, t->dln, G(u, T_W1), G(u, T_B1), t->dh, in, P(t, u, T_W1), N, C, Fl);
	train_lora_backward(t, u, T_W1, t->dln, t->dh, in, a->lz[L_1], C, Fl);
	if (t->swiglu) {
		be->matmul_backward(d, t->dln, G(u, T_WU), G(u, T_BU), t->du, in,
				    P(t, u, T_WU), N, C, Fl);
		train_lora_backward(t, u, T_WU, t->dln, t->du, in, a->lz[L_U], C, Fl);
	}
	/* column-parallel input gradient: the "f" operator's backward */
	return train_seq_reduce(t, t->dln, dn);
}

/* The MLP block's backward: on entry dx holds the gradient of the
 * block's output (this rank's Ns tokens; the residual passes it through
 * unchanged), on return of its input a->res2.  Parameter gradients
 * accumulate into u's grads. */
enum rc train_mlp_backward(struct exec_trainer *t, const struct unit *u,
			   const struct layer_act *a, void *dx)
{
	void *dn;

	TRY(train_ffn_backward(t, u, a, dx, &dn));
	train_norm_backward(t, dx, G(u, T_LN2W), G(u, T_LN2B), dn, a->res2, P(t, u, T_LN2W),
			    a->ln2_mean, a->ln2_rstd);
	return RC_OK;
}
