/*
 * exec_train_embed.c - the embedding unit: the vocabulary-parallel token
 * embedding summed over TP, then the positions of this rank's tokens;
 * and the word matrix, the embedding's own or the tied one the LM head
 * shares (Press and Wolf 2017).
 *
 * Calls (all below it; state and helpers from exec_train_state.h):
 * exec_train_tp.c, the device's kernels.
 */
#include "train/exec_train_layers.h"

/* The word embedding matrix and its gradient: the tied unit's, else the
 * embedding's wte or the head's lm_head (tensor untied). */
const void *train_word_params(const struct exec_trainer *t, const struct unit *u, int untied)
{
	return t->word ? P(t, t->word, T_WTE) : P(t, u, untied);
}

float *train_word_grads(const struct exec_trainer *t, const struct unit *u, int untied)
{
	return t->word ? G(t->word, T_WTE) : G(u, untied);
}

/* x += positions of tokens [row0, row0 + rows) of this rank's part of the
 * micro-batch, token i at position tok_pos(i % Tl): whole sequences in
 * one call without CP, else run by run of consecutive positions. */
static void add_positions(struct exec_trainer *t, void *x, const void *wpe, long row0,
			  long rows)
{
	long T = t->Tl, C = t->C;

	if (t->nc == 1 && row0 % T == 0 && rows % T == 0) {
		t->be->add_bias(t->d, x, wpe, (int)(rows / T), (int)(T * C));
		return;
	}
	while (rows > 0) {
		long p = row0 % T, len = t->Tc - p % t->Tc;

		if (len > rows)
			len = rows;
		t->be->add_bias(t->d, x, at(t, wpe, (size_t)tok_pos(t, (int)p) * C), 1,
				(int)(len * C));
		x = at(t, x, (size_t)(len * C));
		row0 += len;
		rows -= len;
	}
}

/* Vocabulary-parallel embedding: each TP rank's partial rows summed over
 * TP (reduce-scattered with sequence parallelism, as Megatron-LM's
 * reduce_scatter_embeddings), then the positions of this rank's tokens. */
enum rc train_embed_forward(struct exec_trainer *t, const struct unit *u, struct act *a)
{
	void *full = t->sp ? t->tmp : a->x[0], *y;
	size_t ns = (size_t)t->Ns * t->C;

	t->be->embedding_forward(t->d, full, a->tok, train_word_params(t, u, T_WTE), t->N, t->C,
				 t->v0, t->nv);
	TRY(train_seq_reduce(t, full, &y));
	if (y != a->x[0])
		t->be->copy(t->d, a->x[0], y, ns * t->ab);
	add_positions(t, a->x[0], P(t, u, T_WPE), t->sp ? (long)t->l.tp_rank * t->Ns : 0, t->Ns);
	return RC_OK;
}

enum rc train_embed_backward(struct exec_trainer *t, const struct unit *u,
			     const struct act *a, const void *dx)
{
	size_t tc = (size_t)t->Tl * t->C;
	const void *dy;

	/* frozen (LoRA's base, the tied matrix with it): nothing to learn */
	if (u->frozen)
		return RC_OK;
	TRY(train_seq_gather(t, dx, t->tmp, &dy));
	t->be->embedding_backward(t->d, train_word_grads(t, u, T_WTE), dy, a->tok, t->N, t->C,
				  t->v0, t->nv);
	/* this rank's positions, chunk by chunk */
	for (int b = 0; b < t->B; b++)
		for (int c = 0; c < t->nc; c++)
			t->be->accumulate(t->d, G(u, T_WPE) + (size_t)t->cpos[c] * t->C,
					  at(t, dy, b * tc + (size_t)c * t->Tc * t->C), t->act,
					  (long)t->Tc * t->C);
	return RC_OK;
}
