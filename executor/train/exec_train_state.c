/*
 * exec_train_state.c - the trainer's state seen from outside it: its
 * units and tensors, the parameters it counts, the bytes of its model
 * states, the frozen weights' hash, and the buffers a checkpoint keeps
 * (exec_train.h declares them; exec_train_state.h is the state itself).
 * Calls no other file of the trainer: every file of it sits above this
 * one, the driver exec_trainer.c on top.  Calls the device (to_host,
 * narrow) and common's allocation and hash.
 */
#include <stdlib.h>
#include <string.h>

#include "train/exec_train_state.h"

int exec_trainer_units(const struct exec_trainer *t)
{
	return t->n_units;
}

int exec_trainer_unit(const struct exec_trainer *t, int i, float **params,
		      float **grads, long *n)
{
	if (i < 0 || i >= t->n_units)
		return -1;
	*params = t->units[i].params;
	*grads = t->units[i].grads;
	*n = t->units[i].n;
	return 0;
}

int exec_trainer_tensor(const struct exec_trainer *t, int i, int j, long *off,
			long *n, const char **name)
{
	if (i < 0 || i >= t->n_units || j < 0 || j >= t->units[i].nt)
		return -1;
	*off = t->units[i].t[j].off;
	*n = t->units[i].t[j].n;
	*name = t->units[i].t[j].name;
	return 0;
}

/* Parameters of the units this rank counts (exec_trainer_local_params),
 * the trainable ones only when `trainable`. */
static double local_params(const struct exec_trainer *t, int trainable)
{
	double n = 0;

	for (int i = 0; i < t->n_units; i++) {
		const struct unit *u = &t->units[i];

		/* the first replica of its group, DP and CP or the experts' */
		if (u->mirror || u->grp->rank != 0 || (trainable && u->frozen))
			continue;
		for (int j = 0; j < u->nt; j++)
			if (!u->t[j].replicated || t->l.tp_rank == 0)
				n += (double)u->t[j].n;
	}
	return n;
}

double exec_trainer_local_params(const struct exec_trainer *t)
{
	return local_params(t, 0);
}

double exec_trainer_local_trainable(const struct exec_trainer *t)
{
	return local_params(t, 1);
}

void exec_trainer_states(const struct exec_trainer *t, struct exec_state_bytes *out)
{
	size_t fb = sizeof(float);

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < t->n_units; i++) {
		const struct unit *u = &t->units[i];

		/* the fp32 master (ZeRO-3: its shard), and a working copy in
		 * another activation type beside it */
		out->weights_bytes += (double)fb * (t->o.par.zero == 3 ? u->shard : u->n_pad);
		if (t->act != EXEC_F32 && t->o.par.zero < 3)
			out->weights_bytes += (double)t->ab * u->n_pad;
		if (u->frozen)
			continue;
		out->grads_bytes += (double)fb * (t->o.par.zero >= 2 ? u->shard : u->n_pad);
		out->optimizer_bytes += 2.0 * fb * u->own_n;
	}
}

uint64_t exec_trainer_frozen_hash(const struct exec_trainer *t)
{
	uint64_t h = GP_FNV1A64_INIT;
	float *host = NULL;
	size_t cap = 0;

	for (int i = 0; i < t->n_units; i++) {
		const struct unit *u = &t->units[i];
		const float *m = t->o.par.zero == 3 ? u->pshard : u->params;
		size_t n = (size_t)(t->o.par.zero == 3 ? u->shard : u->n_pad);

		if (!u->frozen || !n)
			continue;
		if (n > cap) {
			free(host);
			host = xmalloc(n * sizeof(float));
			cap = n;
		}
		t->be->to_host(t->d, host, m, n * sizeof(float));
		h = gp_fnv1a64(host, n * sizeof(float), h);
	}
	free(host);
	return h;
}

/* ---- checkpoint state (exec_ckpt.c) ---------------------------------- */

int exec_trainer_state_bufs(const struct exec_trainer *t)
{
	return 3 * t->n_units;
}

int exec_trainer_state_buf(const struct exec_trainer *t, int i, float **buf, long *n)
{
	const struct unit *u;

	if (i < 0 || i >= 3 * t->n_units)
		return -1;
	u = &t->units[i / 3];
	switch (i % 3) {
	case 0:
		/* ZeRO-3 keeps only its shard of the master weights; below it
		 * every DP rank holds them whole (its own range updated, the
		 * rest gathered), padding included */
		*buf = t->o.par.zero == 3 ? u->pshard : u->params;
		*n = t->o.par.zero == 3 ? u->shard : u->n_pad;
		break;
	case 1:
		/* a frozen unit has no moments: empty buffers */
		*buf = u->m;
		*n = u->frozen ? 0 : u->own_n;
		break;
	default:
		*buf = u->v;
		*n = u->frozen ? 0 : u->own_n;
		break;
	}
	return 0;
}

void exec_trainer_state_loaded(struct exec_trainer *t)
{
	for (int i = 0; i < t->n_units; i++) {
		struct unit *u = &t->units[i];

		/* ZeRO-3 narrows at each gather */
		if (t->o.par.zero < 3 && u->work != u->params)
			t->be->narrow(t->d, u->work, u->params, u->n_pad);
	}
}
