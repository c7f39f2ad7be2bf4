/*
 * exec_train_act.c - activation records: what one chunk keeps from a
 * micro-batch's forward to its backward (the layers' inputs, and unless
 * fully recomputed their insides, an MoE layer's routing included; the
 * tokens; the logits), carved from
 * one device allocation in two passes (measure, then place), and kept on
 * a free list per chunk for the next micro-batch.
 *
 * Calls (all below it; state and helpers from exec_train_state.h):
 * exec_train_lora.c, exec_train_moe.c, the device's allocator.
 */
#include <stdlib.h>

#include "train/exec_train_layers.h"

/* n elements of `size` bytes, 64-byte aligned. */
static void *carve(struct carve *c, size_t n, size_t size)
{
	size_t bytes = (n * size + 63) / 64 * 64;
	void *p = n && c->base ? c->base + c->off : NULL;

	c->off += bytes;
	return p;
}

static float *carve_f(struct carve *c, size_t n)
{
	return carve(c, n, sizeof(float));
}

static int *carve_i(struct carve *c, size_t n)
{
	return carve(c, n, sizeof(int));
}

/* n activations of t's device */
static void *carve_a(const struct exec_trainer *t, struct carve *c, size_t n)
{
	return carve(c, n, t->ab);
}

/* The residual stream and the norms hold Ns tokens, the attention and
 * MLP insides all N of them (whole heads and MLP columns per TP rank);
 * an MoE layer's routing its Ns tokens' k slots.  The MLP is global
 * layer `layer`'s (the dense one, or the shared experts'), -1 the widest
 * of any, with the routing when any layer has one (the record full
 * recomputation reuses for every layer). */
void train_carve_layer(const struct exec_trainer *t, struct carve *c,
		       struct layer_act *a, int att, int layer)
{
	size_t N = t->N, Ns = t->Ns, C = t->C, qd = (size_t)t->Hl * t->hd;
	size_t kvd = (size_t)t->KVl * t->hd, rows = (size_t)t->B * t->Hl * t->Tl;
	int moe = layer < 0 ? t->E > 0 && t->dense_layers < t->o.model.layers
			    : layer_is_moe(t, layer);
	int dense = layer < 0 ? t->dense_layers > 0 || t->E == 0 : !moe;
	size_t Fl = dense ? (size_t)t->Fl : 0, nk = moe ? Ns * t->K : 0;

	if (moe && (size_t)t->Fs / t->l.tp > Fl)
		Fl = (size_t)t->Fs / t->l.tp;

	a->ln1 = carve_a(t, c, Ns * C);
	a->ln1_mean = carve_f(c, t->rms ? 0 : Ns);
	a->ln1_rstd = carve_f(c, Ns);
	a->q = carve_a(t, c, N * qd);
	a->k = carve_a(t, c, N * kvd);
	a->v = carve_a(t, c, N * kvd);
	a->lse = carve_f(c, rows);
	a->att = carve_a(t, c, att ? rows * t->T : 0);
	a->atty = carve_a(t, c, N * qd);
	a->res2 = carve_a(t, c, Ns * C);
	a->ln2 = carve_a(t, c, Ns * C);
	a->ln2_mean = carve_f(c, t->rms ? 0 : Ns);
	a->ln2_rstd = carve_f(c, Ns);
	a->h = carve_a(t, c, N * Fl);
	a->u = carve_a(t, c, t->swiglu ? N * Fl : 0);
	a->a = carve_a(t, c, N * Fl);
	a->probs = carve_f(c, moe ? Ns * t->E : 0);
	a->ew = carve_f(c, nk);
	a->eidx = carve_i(c, nk);
	a->emap = carve_i(c, nk);
	a->epos = carve_i(c, nk);
	a->yp = carve_a(t, c, nk * C);
	a->moe = NULL;
	for (int i = 0; i < L_N; i++)
		a->lz[i] = carve_a(t, c, train_lora_adapts(t, i) ? N * (size_t)t->lora_r : 0);
}

static void carve_act(const struct exec_trainer *t, struct carve *c, struct act *a)
{
	size_t N = t->N, Ns = t->Ns, C = t->C;
	int nl = t->nl[a->chunk], first, count;

	exec_chunk_layers(t->o.model.layers, t->l.pp, t->v, t->l.pp_rank, a->chunk, &first, &count);
	for (int i = 0; i <= nl; i++)
		a->x[i] = carve_a(t, c, Ns * C);
	if (a->la)
		for (int i = 0; i < nl; i++)
			train_carve_layer(t, c, &a->la[i], t->store_att, first + i);
	a->tok = carve_i(c, chunk_is_first(t, a->chunk) ? N : 0);
	if (chunk_is_last(t, a->chunk)) {
		a->tgt = carve_i(c, N);
		a->lnf = carve_a(t, c, Ns * C);
		a->lnf_mean = carve_f(c, t->rms ? 0 : Ns);
		a->lnf_rstd = carve_f(c, Ns);
		a->logits = carve_a(t, c, N * t->nv);
		a->rmax = carve_f(c, N);
		a->stats = carve_f(c, 2 * N);
	}
}

/* The record for (chunk, mb): from the chunk's free list, or new. */
struct act *train_act_acquire(struct exec_trainer *t, int chunk, int mb)
{
	struct act *a = t->pool[chunk];

	if (a) {
		t->pool[chunk] = a->next;
	} else {
		struct carve c = { NULL, 0 };

		a = xcalloc(1, sizeof(*a));
		a->chunk = chunk;
		a->x = xcalloc((size_t)t->nl[chunk] + 1, sizeof(*a->x));
		if (!t->full_rec)
			a->la = xcalloc((size_t)t->nl[chunk], sizeof(*a->la));
		carve_act(t, &c, a);
		a->bytes = c.off;
		a->block = exec_dalloc(t->d, a->bytes);
		c.base = a->block;
		c.off = 0;
		carve_act(t, &c, a);
	}
	a->mb = mb;
	a->next = NULL;
	t->acts[chunk * t->m + mb] = a;
	if (++t->inflight > t->peak_inflight)
		t->peak_inflight = t->inflight;
	return a;
}

void train_act_release(struct exec_trainer *t, struct act *a)
{
	for (int i = 0; a->la && i < t->nl[a->chunk]; i++)
		train_moe_release(t, &a->la[i]);
	t->acts[a->chunk * t->m + a->mb] = NULL;
	a->next = t->pool[a->chunk];
	t->pool[a->chunk] = a;
	t->inflight--;
}

void train_act_free(struct exec_trainer *t, struct act *a)
{
	exec_dfree(t->d, a->block, a->bytes);
	free(a->x);
	free(a->la);
	free(a);
}
