/*
 * exec_train_lora.c - LoRA's adapters beside a layer's projections (Hu et
 * al. 2021): a projection W [out, in] of frozen weights gains
 * out += (alpha / r) B A x with A [r, in] and B [out, r] trained, forward
 * and backward.  The adapters are a unit of their own beside the layer's
 * (UNIT_LORA; their shapes, initial values and tensor-parallel cuts are
 * exec_train_params.c's); the base's units are frozen: no gradients, no
 * optimizer state, no reduction (exec_train_params.c, the optimizer).
 *
 * Tensor parallelism cuts an adapter as its projection (Shoeybi et al.
 * 2019, sec. 3; the Megatron adapters of NeMo, ParallelLinearAdapter, do
 * likewise).  A column-parallel W's A is whole and its B split by output
 * rows: every TP rank computes the whole z = x A^T from the whole input
 * and its own rows of B z; backward its share of dz = dy B is partial,
 * so A's gradient (dz^T x) is summed over TP with the unit's other whole
 * tensors, and its input gradient joins the base's before the same sum
 * over TP.  A row-parallel W's A is split by input columns and its B
 * whole: each TP rank's z = x A^T is a partial sum, and so is B z, which
 * is added to the base's partial product before the all-reduce (or
 * reduce-scatter) that sums it; backward, B's gradient from the partial z
 * is summed over TP, while dz = dy B is whole and A's gradient and the
 * input gradient are this rank's own columns.
 *
 * It does not run LoRA's dropout (an identity at the usual 0), adapt
 * embeddings, the LM head or experts (exec_opts_check refuses LoRA with
 * experts), nor merge B A into W after training.
 *
 * Calls (all below it; state and helpers from exec_train_state.h): the
 * device's kernels only.
 */
#include "train/exec_train_layers.h"

/* A base tensor's adapter: its A and B in the LoRA unit and the slot of
 * its rank-r activation; -1 for a tensor without one. */
static int lora_of(int w, int *a, int *b)
{
	switch (w) {
	case T_WQ: *a = T_QA; *b = T_QB; return L_Q;
	case T_WK: *a = T_KA; *b = T_KB; return L_K;
	case T_WV: *a = T_VA; *b = T_VB; return L_V;
	case T_WO: *a = T_OA; *b = T_OB; return L_O;
	case T_W1: *a = T_1A; *b = T_1B; return L_1;
	case T_WU: *a = T_UA; *b = T_UB; return L_U;
	case T_W2: *a = T_2A; *b = T_2B; return L_2;
	default: return -1;
	}
}

int train_lora_adapts(const struct exec_trainer *t, int slot)
{
	/* W1 is SwiGLU's gate, Wu its up; GELU's W1 is up */
	static const unsigned swiglu[L_N] = { SIM_LORA_Q, SIM_LORA_K, SIM_LORA_V, SIM_LORA_O,
					      SIM_LORA_GATE, SIM_LORA_UP, SIM_LORA_DOWN };
	static const unsigned gelu[L_N] = { SIM_LORA_Q, SIM_LORA_K, SIM_LORA_V, SIM_LORA_O,
					    SIM_LORA_UP, 0, SIM_LORA_DOWN };

	return t->lora && (t->lora_targets & (t->swiglu ? swiglu : gelu)[slot]) != 0;
}

int train_lora_has(const struct exec_trainer *t, const struct unit *u, int w)
{
	int a, b;

	(void)t;
	return u->lora && lora_of(w, &a, &b) >= 0 && u->lora->t[a].n > 0 && u->lora->t[b].n > 0;
}

/* out[N, oc] += s (x A^T) B^T, with z = x A^T [N, r] kept in lz for the
 * backward (what autograd keeps of PEFT's lora_B(lora_A(x))). */
void train_lora_forward(struct exec_trainer *t, const struct unit *u, int w, void *out,
			const void *x, void *lz, int ic, int oc)
{
	const struct unit *lu = u->lora;
	int a, b, r = t->lora_r, N = t->N;

	if (!train_lora_has(t, u, w))
		return;
	lora_of(w, &a, &b);
	t->be->matmul_forward(t->d, lz, x, P(t, lu, a), NULL, N, ic, r);
	t->be->matmul_forward(t->d, t->lora_tmp, lz, P(t, lu, b), NULL, N, r, oc);
	t->be->add_scaled(t->d, out, t->lora_tmp, t->lora_scale, (long)N * oc);
}

/* From dy [N, oc], the gradient of the projection's output: B's gradient
 * s dy^T z, dz = s dy B, A's gradient dz^T x, and dx [N, ic] += dz A. */
void train_lora_backward(struct exec_trainer *t, const struct unit *u, int w, void *dx,
			 const void *dy, const void *x, const void *lz, int ic, int oc)
{
	const struct unit *lu = u->lora;
	int a, b, r = t->lora_r, N = t->N;
	size_t ab = t->ab;

	if (!train_lora_has(t, u, w))
		return;
	lora_of(w, &a, &b);
	t->be->zero(t->d, t->lora_tmp, (size_t)N * oc * ab);
	t->be->add_scaled(t->d, t->lora_tmp, dy, t->lora_scale, (long)N * oc);
	t->be->zero(t->d, t->lora_dz, (size_t)N * r * ab);
	t->be->matmul_backward(t->d, t->lora_dz, G(lu, b), NULL, t->lora_tmp, lz, P(t, lu, b), N,
			       r, oc);
	t->be->matmul_backward(t->d, dx, G(lu, a), NULL, t->lora_dz, x, P(t, lu, a), N, ic, r);
}
