/*
 * exec_train_moe.c - a mixture-of-experts layer's MLP block, forward and
 * backward: the norm; the shared experts, an MLP every token passes
 * through (the dense block's, tensor-parallel as Megatron-Core's
 * SharedExpertMLP); the router, a linear map to the experts with a
 * softmax and top-k (the device's moe_route kernels); the routed
 * tokens' k copies dispatched to their experts and combined back
 * weighted by the router (Lepikhin et al., GShard, ICLR 2021, sec. 2.2;
 * Fedus et al., JMLR 2022, sec. 2); the residual add.
 *
 * Expert parallelism (Megatron-Core's alltoall token dispatcher and MoE
 * parallel folding, Liu et al. 2025, arXiv:2504.14960): the EP group's
 * ep ranks each hold E / ep whole experts (exec_layout: ep consecutive
 * ranks of a pipeline stage's tp x cp x dp).  Each rank routes its own
 * Ns tokens (with tensor parallelism, its slice of the sequence:
 * sequence parallelism is required, as Megatron-Core requires it); sorts
 * their slots by expert, which sorts them by EP rank; tells every EP
 * rank how many rows it sends each of its experts (an all-to-all of
 * counts); sends the rows (an all-to-all of rows); re-sorts what arrives
 * from source-major into expert-major order, so that each expert's rows
 * are consecutive and its MLP is one GEMM (Megatron's grouped GEMM; a
 * loop over the experts here); and sends the outputs back the same way
 * reversed.  Backward runs the same exchanges with the gradients.  The
 * experts' gradients are summed over the expert-data-parallel group
 * (their unit's, exec_train_params.c), not the dense one.
 *
 * The routing is planned on the host: the chosen experts come back from
 * the device once a layer and micro-batch (Megatron-Core's dispatcher
 * waits for its counts likewise), and the permutations go back to it.
 * How many rows an expert receives depends on the routing, so the
 * experts' side is allocated per layer and micro-batch (struct moe_act)
 * and freed after its backward: the memory counted is what the routing
 * took.  No token is dropped (no capacity factor) and no auxiliary
 * load-balancing loss is added: the loss is the language model's.
 *
 * Calls (all below it; state and helpers from exec_train_state.h):
 * exec_train_comm.c, exec_train_mlp.c, exec_train_tp.c, the device's
 * kernels.
 */
#include <stdlib.h>
#include <string.h>

#include "train/exec_train_layers.h"

/* What one layer's forward of one micro-batch leaves for its backward
 * beside the layer record's fixed part (struct layer_act). */
struct moe_act {
	int R;                  /* rows this rank's experts received */
	int *cnt;               /* [E]: rows this rank sent each expert */
	int *rcnt;              /* [ep El]: rows EP rank r sent local expert e */
	void *block;            /* device memory, carved below */
	size_t bytes;
	int *map2, *inv2;       /* [R], EP only: expert-major row i is
				 * source-major row map2[i]; inv2 the reverse */
	void *xe, *he, *ue, *ae;/* [R, C], [R, Fe] x 3: the experts' inputs,
				 * W1 and Wu outputs, activations */
};

void train_moe_release(struct exec_trainer *t, struct layer_act *a)
{
	struct moe_act *m = a->moe;

	if (!m)
		return;
	exec_dfree(t->d, m->block, m->bytes);
	free(m->cnt);
	free(m);
	a->moe = NULL;
}

/* Rows of EP rank r's experts in counts c ([ep El], rank-major). */
static int rank_rows(const struct exec_trainer *t, const int *c, int r)
{
	int n = 0;

	for (int e = 0; e < t->El; e++)
		n += c[r * t->El + e];
	return n;
}

/* Rows of local expert e over every source in m. */
static int expert_rows(const struct exec_trainer *t, const struct moe_act *m, int e)
{
	int n = 0;

	for (int r = 0; r < t->l.ep; r++)
		n += m->rcnt[r * t->El + e];
	return n;
}

/* An all-to-all of rows of C activations over the EP group: to EP rank
 * r the rows of counts `to`'s entry r, from it those of `from`'s. */
static enum rc rows_a2a(struct exec_trainer *t, const void *send, const int *to, void *recv,
			const int *from)
{
	for (int r = 0; r < t->l.ep; r++) {
		t->a2a_send[r] = (size_t)rank_rows(t, to, r) * t->C;
		t->a2a_recv[r] = (size_t)rank_rows(t, from, r) * t->C;
	}
	return train_all_to_all(t, &t->g->ep, send, t->a2a_send, recv, t->a2a_recv, t->act);
}

static void *carve(char **p, size_t bytes)
{
	void *q = *p;

	*p += (bytes + 63) / 64 * 64;
	return q;
}

/* Plans the routing the device chose (a->eidx): the slots sorted by
 * expert, a stable counting sort, into a->emap (permuted row -> slot)
 * and a->epos (slot -> permuted row); every EP rank's counts; and the
 * experts' side sized by them (a->moe). */
static enum rc route_plan(struct exec_trainer *t, struct layer_act *a)
{
	const struct exec_backend *be = t->be;
	int nk = t->Ns * t->K, E = t->E, El = t->El, ep = t->l.ep, *start;
	struct moe_act *m;
	size_t ab = t->ab, C = t->C, Fe = t->Fe, R;
	char *p;

	train_moe_release(t, a);
	m = a->moe = xcalloc(1, sizeof(*m));
	m->cnt = xcalloc(2 * (size_t)E + 1, sizeof(int));
	m->rcnt = m->cnt + E;
	start = xcalloc((size_t)E + 1, sizeof(int));
	be->to_host(t->d, t->h_idx, a->eidx, (size_t)nk * sizeof(int));
	for (int s = 0; s < nk; s++)
		m->cnt[t->h_idx[s]]++;
	for (int e = 0; e < E; e++)
		start[e + 1] = start[e] + m->cnt[e];
	for (int s = 0; s < nk; s++) {
		int i = start[t->h_idx[s]]++;

		t->h_map[i] = s;
		t->h_pos[s] = i;
	}
	free(start);
	be->from_host(t->d, a->emap, t->h_map, (size_t)nk * sizeof(int));
	be->from_host(t->d, a->epos, t->h_pos, (size_t)nk * sizeof(int));
	if (ep > 1) {
		/* EP rank r's experts are [r El, (r + 1) El): its counts are El
		 * consecutive entries of cnt */
		for (int r = 0; r < ep; r++)
			t->a2a_send[r] = t->a2a_recv[r] = (size_t)El;
		be->from_host(t->d, t->mcnt, m->cnt, (size_t)E * sizeof(int));
		TRY(train_all_to_all(t, &t->g->ep, t->mcnt, t->a2a_send, t->mcnt + E,
				     t->a2a_recv, EXEC_I32));
		be->to_host(t->d, m->rcnt, t->mcnt + E, (size_t)E * sizeof(int));
	} else {
		memcpy(m->rcnt, m->cnt, (size_t)E * sizeof(int));
	}
	for (int i = 0; i < E; i++)
		m->R += m->rcnt[i];
	R = (size_t)m->R;
	m->bytes = (ep > 1 ? 2 * ((R * sizeof(int) + 63) / 64 * 64) : 0) +
		   (R * C * ab + 63) / 64 * 64 + (t->swiglu ? 3 : 2) * ((R * Fe * ab + 63) / 64 * 64);
	m->block = exec_dalloc(t->d, m->bytes);
	p = m->block;
	if (ep > 1) {
		m->map2 = carve(&p, R * sizeof(int));
		m->inv2 = carve(&p, R * sizeof(int));
	}
	m->xe = carve(&p, R * C * ab);
	m->he = carve(&p, R * Fe * ab);
	m->ue = t->swiglu ? carve(&p, R * Fe * ab) : NULL;
	m->ae = carve(&p, R * Fe * ab);
	if (ep > 1) {
		/* source-major (as received: by source, then local expert) to
		 * expert-major (by local expert, then source) */
		int *map2 = xcalloc(2 * R + 1, sizeof(int)), *inv2 = map2 + R, i = 0;

		for (int e = 0; e < El; e++)
			for (int r = 0, off = 0; r < ep; r++) {
				int row = off;

				for (int q = 0; q < e; q++)
					row += m->rcnt[r * El + q];
				for (int j = 0; j < m->rcnt[r * El + e]; j++, i++) {
					map2[i] = row + j;
					inv2[row + j] = i;
				}
				off += rank_rows(t, m->rcnt, r);
			}
		be->from_host(t->d, m->map2, map2, R * sizeof(int));
		be->from_host(t->d, m->inv2, inv2, R * sizeof(int));
		free(map2);
	}
	return RC_OK;
}

/* Local expert e's slice of stacked tensor i of the experts unit x:
 * rows e * rows_each of it, working copy or gradient. */
static void *xw(const struct exec_trainer *t, const struct unit *x, int i, int e, long each)
{
	return at(t, P(t, x, i), (size_t)e * each);
}

static float *xg(const struct unit *x, int i, int e, long each)
{
	return G(x, i) + (size_t)e * each;
}

/* The experts' MLPs (bias-free, GELU or SwiGLU) on m's expert-major
 * rows, an expert at a time: ye[R, C] = W2_e act(W1_e xe) on its rows,
 * each weight one GEMM. */
static void experts_forward(struct exec_trainer *t, const struct unit *x,
			    const struct moe_act *m, void *ye)
{
	const struct exec_backend *be = t->be;
	struct exec_device *d = t->d;
	int C = t->C, Fe = t->Fe;
	long w1 = (long)Fe * C, off = 0;

	for (int e = 0; e < t->El; off += expert_rows(t, m, e), e++) {
		int n = expert_rows(t, m, e);
		void *xe = at(t, m->xe, off * C), *he = at(t, m->he, off * Fe);
		void *ue = t->swiglu ? at(t, m->ue, off * Fe) : NULL, *ae = at(t, m->ae, off * Fe);

		if (n == 0)
			continue;
		be->matmul_forward(d, he, xe, xw(t, x, T_EW1, e, w1), NULL, n, C, Fe);
		if (t->swiglu) {
			be->matmul_forward(d, ue, xe, xw(t, x, T_EWU, e, w1), NULL, n, C, Fe);
			be->swiglu_forward(d, ae, he, ue, (long)n * Fe);
		} else {
			be->gelu_forward(d, ae, he, (long)n * Fe);
		}
		be->matmul_forward(d, at(t, ye, off * C), ae, xw(t, x, T_EW2, e, w1), NULL, n, Fe,
				   C);
	}
}

/* Their backward: dye [R, C] the gradient of ye, overwritten with that of
 * xe, an expert at a time; ws [3 R Fe] activations of scratch. */
static void experts_backward(struct exec_trainer *t, const struct unit *x,
			     const struct moe_act *m, void *dye, void *ws)
{
	const struct exec_backend *be = t->be;
	struct exec_device *d = t->d;
	int C = t->C, Fe = t->Fe;
	long w1 = (long)Fe * C, off = 0;
	size_t nf = (size_t)m->R * Fe;

	be->zero(d, ws, 3 * nf * t->ab);
	for (int e = 0; e < t->El; off += expert_rows(t, m, e), e++) {
		int n = expert_rows(t, m, e);
		void *dae = at(t, ws, off * Fe), *dhe = at(t, ws, nf + off * Fe);
		void *due = at(t, ws, 2 * nf + off * Fe), *dy = at(t, dye, off * C);
		void *xe = at(t, m->xe, off * C), *he = at(t, m->he, off * Fe);

		if (n == 0)
			continue;
		be->matmul_backward(d, dae, xg(x, T_EW2, e, w1), NULL, dy, at(t, m->ae, off * Fe),
				    xw(t, x, T_EW2, e, w1), n, Fe, C);
		if (t->swiglu)
			be->swiglu_backward(d, dhe, due, he, at(t, m->ue, off * Fe), dae,
					    (long)n * Fe);
		else
			be->gelu_backward(d, dhe, he, dae, (long)n * Fe);
		/* this expert's dy is spent: its rows take the input gradient */
		be->zero(d, dy, (size_t)n * C * t->ab);
		be->matmul_backward(d, dy, xg(x, T_EW1, e, w1), NULL, dhe, xe,
				    xw(t, x, T_EW1, e, w1), n, C, Fe);
		if (t->swiglu)
			be->matmul_backward(d, dy, xg(x, T_EWU, e, w1), NULL, due, xe,
					    xw(t, x, T_EWU, e, w1), n, C, Fe);
	}
}

/* The MoE block of layer u (its experts u->experts): out = a->res2 +
 * shared(x) + sum over the chosen experts of weight x expert(x), x =
 * norm(a->res2), for this rank's Ns tokens. */
enum rc train_moe_forward(struct exec_trainer *t, const struct unit *u, struct layer_act *a,
			  void *out)
{
	const struct exec_backend *be = t->be;
	struct exec_device *d = t->d;
	const struct unit *x = u->experts;
	int Ns = t->Ns, C = t->C, K = t->K, nk = Ns * K, ep = t->l.ep;
	size_t rc_bytes;
	struct moe_act *m;
	void *y, *tmp = NULL, *ye, *rbuf;

	train_norm_forward(t, a->ln2, a->ln2_mean, a->ln2_rstd, a->res2, P(t, u, T_LN2W),
			   P(t, u, T_LN2B));
	if (u->t[T_W1].n) {
		TRY(train_ffn_forward(t, u, a, &y));
		be->residual_forward(d, out, a->res2, y, (long)Ns * C);
	} else {
		be->copy(d, out, a->res2, (size_t)Ns * C * t->ab);
	}
	be->matmul_forward(d, t->mlog, a->ln2, P(t, u, T_WR), NULL, Ns, C, t->E);
	be->moe_route_forward(d, a->probs, a->eidx, a->ew, t->mlog, Ns, t->E, K, t->pre_softmax);
	TRY(route_plan(t, a));
	m = a->moe;
	rc_bytes = (size_t)m->R * C * t->ab;
	if (ep == 1) {
		/* the experts' rows are the permuted slots themselves */
		be->moe_permute(d, m->xe, a->ln2, a->emap, NULL, nk, C, K);
		experts_forward(t, x, m, a->yp);
	} else {
		enum rc rc;

		tmp = exec_dalloc(d, 2 * rc_bytes + 1);
		ye = tmp;
		rbuf = (char *)tmp + rc_bytes;
		be->moe_permute(d, t->xp, a->ln2, a->emap, NULL, nk, C, K);
		rc = rows_a2a(t, t->xp, m->cnt, rbuf, m->rcnt);
		if (rc == RC_OK) {
			be->moe_permute(d, m->xe, rbuf, m->map2, NULL, m->R, C, 1);
			experts_forward(t, x, m, ye);
			be->moe_permute(d, rbuf, ye, m->inv2, NULL, m->R, C, 1);
			rc = rows_a2a(t, rbuf, m->rcnt, a->yp, m->cnt);
		}
		exec_dfree(d, tmp, 2 * rc_bytes + 1);
		TRY(rc);
	}
	/* the combine, each token's slots in order */
	be->moe_unpermute(d, out, a->yp, a->epos, a->ew, Ns, C, K);
	return RC_OK;
}

/* The routed experts' backward: dn += the gradient of the normed input
 * a->ln2 through them, given dx that of the block's output; t->mdw the
 * gradient of the router's weights. */
static enum rc routed_backward(struct exec_trainer *t, const struct unit *x,
			       const struct layer_act *a, const void *dx, void *dn)
{
	const struct exec_backend *be = t->be;
	struct exec_device *d = t->d;
	const struct moe_act *m = a->moe;
	int Ns = t->Ns, C = t->C, K = t->K, nk = Ns * K, ep = t->l.ep;
	size_t rc_bytes = (size_t)m->R * C * t->ab, ws_bytes = 3 * (size_t)m->R * t->Fe * t->ab;
	size_t bytes = (ep > 1 ? 2 : 1) * rc_bytes + ws_bytes + 1;
	void *tmp = exec_dalloc(d, bytes), *dye = tmp, *ws = (char *)tmp + rc_bytes;
	void *rbuf = (char *)ws + ws_bytes;
	enum rc rc = RC_OK;

	be->zero(d, t->mdw, (size_t)nk * sizeof(float));
	be->moe_weights_backward(d, t->mdw, dx, a->yp, a->epos, Ns, C, K);
	/* each slot's output gradient: its token's, times its weight */
	if (ep == 1) {
		be->moe_permute(d, dye, dx, a->emap, a->ew, nk, C, K);
	} else {
		be->moe_permute(d, t->dyp, dx, a->emap, a->ew, nk, C, K);
		rc = rows_a2a(t, t->dyp, m->cnt, rbuf, m->rcnt);
		if (rc == RC_OK)
			be->moe_permute(d, dye, rbuf, m->map2, NULL, m->R, C, 1);
	}
	if (rc == RC_OK)
		experts_backward(t, x, m, dye, ws);
	if (rc == RC_OK && ep > 1) {
		be->moe_permute(d, rbuf, dye, m->inv2, NULL, m->R, C, 1);
		rc = rows_a2a(t, rbuf, m->rcnt, t->dxp, m->cnt);
	}
	/* the dispatch's backward: each token gathers its slots' gradients */
	if (rc == RC_OK)
		be->moe_unpermute(d, dn, ep == 1 ? dye : t->dxp, a->epos, NULL, Ns, C, K);
	exec_dfree(d, tmp, bytes);
	return rc;
}

/* The MoE block's backward: on entry dx holds the gradient of the
 * block's output (this rank's Ns tokens; the residual passes it through
 * unchanged), on return of its input a->res2.  Parameter gradients
 * accumulate into u's and its experts' grads; what the forward left
 * (a->moe) is freed. */
enum rc train_moe_backward(struct exec_trainer *t, const struct unit *u, struct layer_act *a,
			   void *dx)
{
	const struct exec_backend *be = t->be;
	struct exec_device *d = t->d;
	int Ns = t->Ns, C = t->C;
	void *dn = t->dln;

	if (!a->moe) {
		gp_error("rank %d: layer %d: MoE backward without its forward", t->l.rank, u->layer);
		return RC_ERR;
	}
	if (u->t[T_W1].n)
		TRY(train_ffn_backward(t, u, a, dx, &dn));
	else
		be->zero(d, dn, (size_t)Ns * C * t->ab);
	TRY(routed_backward(t, u->experts, a, dx, dn));
	/* the router: through the softmax and the choice to the logits */
	be->zero(d, t->mlog, (size_t)Ns * t->E * t->ab);
	be->moe_route_backward(d, t->mlog, t->mdw, a->probs, a->eidx, Ns, t->E, t->K,
			       t->pre_softmax);
	be->matmul_backward(d, dn, G(u, T_WR), NULL, t->mlog, a->ln2, P(t, u, T_WR), Ns, C, t->E);
	train_norm_backward(t, dx, G(u, T_LN2W), G(u, T_LN2B), dn, a->res2, P(t, u, T_LN2W),
			    a->ln2_mean, a->ln2_rstd);
	train_moe_release(t, a);
	return RC_OK;
}
