/*
 * exec_train_mlp.c - a layer's MLP block: norm, W1 (and SwiGLU's gate
 * Wu) column-parallel, the activation, W2 row-parallel, the residual add;
 * forward and backward.
 */
#include "train/exec_trainer_internal.h"

/* The MLP block of layer u: out = a->res2 + W2 act(W1 norm(a->res2)),
 * GELU or SwiGLU over this rank's columns of W1. */
enum rc train_mlp_forward(struct exec_trainer *t, const struct unit *u, struct layer_act *a,
			  void *out)
{
	const struct exec_backend *be = t->be;
	struct exec_device *d = t->d;
	int N = t->N, C = t->C;
	const void *in;
	void *y;

	train_norm_forward(t, a->ln2, a->ln2_mean, a->ln2_rstd, a->res2, P(t, u, T_LN2W),
		     P(t, u, T_LN2B));
	TRY(train_seq_gather(t, a->ln2, t->gath, &in));
	be->matmul_forward(d, a->h, in, P(t, u, T_W1), P(t, u, T_B1), N, C, t->Fl);
	if (t->swiglu) {
		be->matmul_forward(d, a->u, in, P(t, u, T_WU), P(t, u, T_BU), N, C, t->Fl);
		be->swiglu_forward(d, a->a, a->h, a->u, (long)N * t->Fl);
	} else {
		be->gelu_forward(d, a->a, a->h, (long)N * t->Fl);
	}
	TRY(train_row_parallel(t, &y, a->a, P(t, u, T_W2), P(t, u, T_B2), t->Fl));
	be->residual_forward(d, out, a->res2, y, (long)t->Ns * C);
	return RC_OK;
}

/* The MLP block's backward: on entry dx holds the gradient of the
 * block's output (this rank's Ns tokens; the residual passes it through
 * unchanged), on return of its input a->res2.  Parameter gradients
 * accumulate into u's grads. */
enum rc train_mlp_backward(struct exec_trainer *t, const struct unit *u,
			   const struct layer_act *a, void *dx)
{
	const struct exec_backend *be = t->be;
	struct exec_device *d = t->d;
	int N = t->N, C = t->C;
	size_t fb = t->ab, nc = (size_t)N * C, nf = (size_t)N * t->Fl;
	const void *dy, *in;
	void *dn;

	TRY(train_seq_gather(t, dx, t->tmp, &dy));
	be->zero(d, t->da, nf * fb);
	be->matmul_backward(d, t->da, G(u, T_W2), G(u, T_B2), dy, a->a, P(t, u, T_W2), N, t->Fl, C);
	be->zero(d, t->dh, nf * fb);
	if (t->swiglu) {
		be->zero(d, t->du, nf * fb);
		be->swiglu_backward(d, t->dh, t->du, a->h, a->u, t->da, (long)nf);
	} else {
		be->gelu_backward(d, t->dh, a->h, t->da, (long)nf);
	}
	TRY(train_seq_gather(t, a->ln2, t->gath, &in));
	be->zero(d, t->dln, nc * fb);
	be->matmul_backward(d, t->dln, G(u, T_W1), G(u, T_B1), t->dh, in, P(t, u, T_W1), N, C,
			    t->Fl);
	if (t->swiglu)
		be->matmul_backward(d, t->dln, G(u, T_WU), G(u, T_BU), t->du, in,
				    P(t, u, T_WU), N, C, t->Fl);
	/* column-parallel input gradient: the "f" operator's backward */
	TRY(train_seq_reduce(t, t->dln, &dn));
	train_norm_backward(t, dx, G(u, T_LN2W), G(u, T_LN2B), dn, a->res2, P(t, u, T_LN2W),
		      a->ln2_mean, a->ln2_rstd);
	return RC_OK;
}
