/*
 * exec_layout.c - where a rank sits in a tp x cp x pp x dp layout (and
 * the experts' ep x edp folded over its stage), which ranks form its TP,
 * PP, DP, CP, EP and expert-DP groups (for MPI and NCCL alike), how items split
 * across ranks, and which layers a pipeline chunk holds (the simulator's
 * split, sim_stage_layers, so the executor runs the layers the simulator
 * priced).  Pure arithmetic: no MPI, no allocation.
 */
#include <string.h>

#include "comm/exec_comm.h"
#include "sim_internal.h"

enum rc exec_layout_init(struct exec_layout *l, const struct sim_parallel *p, int rank)
{
	int world, ep = p->ep > 0 ? p->ep : 1, stage;

	if (p->tp < 1 || p->pp < 1 || p->dp < 1 || p->cp < 1)
		return RC_INPUT;
	world = p->tp * p->pp * p->dp * p->cp;
	if (rank < 0 || rank >= world || (world / p->pp) % ep)
		return RC_INPUT;
	l->world = world;
	l->rank = rank;
	l->tp = p->tp;
	l->pp = p->pp;
	l->dp = p->dp;
	l->cp = p->cp;
	/* TP innermost so a TP group is consecutive ranks (one node), then
	 * CP, then DP, then PP: Megatron-Core's default order
	 * ("tp-cp-ep-dp-pp") and DeepSpeed's pipeline topology (pipe, data,
	 * model), the placement the simulator prices (sim.c's DP x CP and PP
	 * links, sim_event.c). */
	l->tp_rank = rank % p->tp;
	l->cp_rank = (rank / p->tp) % p->cp;
	l->dp_rank = (rank / (p->tp * p->cp)) % p->dp;
	l->pp_rank = rank / (p->tp * p->cp * p->dp);
	/* the experts fold over the stage's ranks, EP innermost (exec.h) */
	stage = (l->dp_rank * p->cp + l->cp_rank) * p->tp + l->tp_rank;
	l->ep = ep;
	l->edp = world / p->pp / ep;
	l->ep_rank = stage % ep;
	l->edp_rank = stage / ep;
	return RC_OK;
}

/* The world rank of the stage's rank s (exec.h: s = (dp_rank * cp +
 * cp_rank) * tp + tp_rank) on pipeline stage pp_rank. */
static int stage_rank(const struct exec_layout *l, int pp_rank, int s)
{
	return exec_layout_rank(l, s / (l->tp * l->cp), pp_rank, s / l->tp % l->cp, s % l->tp);
}

int exec_layout_rank(const struct exec_layout *l, int dp_rank, int pp_rank, int cp_rank,
		     int tp_rank)
{
	return ((pp_rank * l->dp + dp_rank) * l->cp + cp_rank) * l->tp + tp_rank;
}

void exec_split(long n, int parts, int idx, long *off, long *len)
{
	long base = n / parts, rem = n % parts;

	*off = idx * base + (idx < rem ? idx : rem);
	*len = base + (idx < rem ? 1 : 0);
}

/* The simulator's shape of `layers` layers over pp stages of v chunks:
 * only its layer split is read, so the other sizes are placeholders. */
static void split_shape(struct sim_shape *sh, int layers, int pp, int v)
{
	struct sim_model m;
	struct sim_parallel p;

	memset(&m, 0, sizeof(m));
	m.layers = layers;
	m.hidden = m.heads = m.kv_heads = m.ffn = m.vocab = m.seq = 1;
	sim_parallel_init(&p);
	p.pp = pp;
	p.interleave = v;
	sim_shape_init(sh, &m, &p);
}

int exec_stage_layers(int layers, int pp, int stage)
{
	struct sim_shape sh;

	split_shape(&sh, layers, pp, 1);
	return sim_stage_layers(&sh, stage);
}

void exec_chunk_layers(int layers, int pp, int v, int stage, int chunk,
		       int *first, int *count)
{
	struct sim_shape sh;
	int k = chunk * pp + stage;

	split_shape(&sh, layers, pp, v);
	/* Activations flow virtual stage k -> k + 1 (sched.h), so virtual
	 * stage k starts after the layers of virtual stages 0 .. k - 1;
	 * virtual stage j is chunk j / pp of stage j % pp. */
	*first = 0;
	for (int j = 0; j < k; j++)
		*first += sim_chunk_layers(&sh, j % pp, j / pp);
	*count = sim_chunk_layers(&sh, stage, chunk);
}

void exec_group_color(const struct exec_layout *l, enum exec_group_kind kind,
		      int *color, int *key)
{
	switch (kind) {
	case EXEC_GROUP_TP:
		*color = (l->dp_rank * l->pp + l->pp_rank) * l->cp + l->cp_rank;
		*key = l->tp_rank;
		break;
	case EXEC_GROUP_PP:
		*color = (l->dp_rank * l->cp + l->cp_rank) * l->tp + l->tp_rank;
		*key = l->pp_rank;
		break;
	case EXEC_GROUP_DP:
		/* the gradients' group: every DP and CP rank of one weight shard */
		*color = l->pp_rank * l->tp + l->tp_rank;
		*key = l->dp_rank * l->cp + l->cp_rank;
		break;
	case EXEC_GROUP_CP:
		*color = (l->dp_rank * l->pp + l->pp_rank) * l->tp + l->tp_rank;
		*key = l->cp_rank;
		break;
	case EXEC_GROUP_EP:
		*color = l->pp_rank * l->edp + l->edp_rank;
		*key = l->ep_rank;
		break;
	case EXEC_GROUP_EDP:
		*color = l->pp_rank * l->ep + l->ep_rank;
		*key = l->edp_rank;
		break;
	default:
		*color = 0;
		*key = l->rank;
		break;
	}
}

int exec_group_members(const struct exec_layout *l, enum exec_group_kind kind, int *members)
{
	int n = 0;

	switch (kind) {
	case EXEC_GROUP_TP:
		for (int i = 0; i < l->tp; i++)
			members[n++] = exec_layout_rank(l, l->dp_rank, l->pp_rank, l->cp_rank, i);
		break;
	case EXEC_GROUP_PP:
		for (int i = 0; i < l->pp; i++)
			members[n++] = exec_layout_rank(l, l->dp_rank, i, l->cp_rank, l->tp_rank);
		break;
	case EXEC_GROUP_DP:
		for (int i = 0; i < l->dp; i++)
			for (int c = 0; c < l->cp; c++)
				members[n++] = exec_layout_rank(l, i, l->pp_rank, c, l->tp_rank);
		break;
	case EXEC_GROUP_CP:
		for (int i = 0; i < l->cp; i++)
			members[n++] = exec_layout_rank(l, l->dp_rank, l->pp_rank, i, l->tp_rank);
		break;
	case EXEC_GROUP_EP:
		for (int i = 0; i < l->ep; i++)
			members[n++] = stage_rank(l, l->pp_rank, l->edp_rank * l->ep + i);
		break;
	case EXEC_GROUP_EDP:
		for (int i = 0; i < l->edp; i++)
			members[n++] = stage_rank(l, l->pp_rank, i * l->ep + l->ep_rank);
		break;
	default:
		for (int i = 0; i < l->world; i++)
			members[n++] = i;
		break;
	}
	return n;
}
