/*
 * sim_event.c - replays a pipeline schedule as events (sim_event.h) and
 * draws its text Gantt chart.
 *
 * The replay needs no event queue: each stage's compute stream runs its
 * list in order, so a stage's clock only moves forward, and the only
 * cross-stage dependency is a receive waiting for its send.  A worklist of
 * stages runs each until it reaches a receive whose send has not been
 * replayed; replaying that send wakes it.  Every op is visited once.
 *
 * It does not model link contention between different stage pairs, nor
 * compute slowed down by concurrent communication.
 *
 * It calls down only: sim.c (sim_parts, sim_step), sim_check.c,
 * sim_shape.c, sim_comm.c and sched.c.
 */
#include "sim_event.h"
#include "sim_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sim_event_cost_init(struct sim_event_cost *c, int p, int v)
{
	memset(c, 0, sizeof(*c));
	c->p = p;
	c->v = v;
	c->chunk = xcalloc((size_t)p * (size_t)v, sizeof(*c->chunk));
	c->stage = xcalloc((size_t)p, sizeof(*c->stage));
	c->dp_buckets = 1;
}

void sim_event_cost_release(struct sim_event_cost *c)
{
	if (!c)
		return;
	free(c->chunk);
	free(c->stage);
	memset(c, 0, sizeof(*c));
}

void sim_event_result_release(struct sim_event_result *r)
{
	if (!r)
		return;
	free(r->stage);
	memset(r, 0, sizeof(*r));
}

void sim_event_timeline_release(struct sim_event_timeline *tl)
{
	if (!tl)
		return;
	for (int st = 0; st < tl->p; st++) {
		if (tl->op)
			free(tl->op[st]);
		if (tl->dp)
			free(tl->dp[st]);
	}
	free(tl->op);
	free(tl->dp);
	free(tl->n_dp);
	memset(tl, 0, sizeof(*tl));
}

static int bad_time(double t)
{
	return !isfinite(t) || t < 0;
}

static enum rc check_cost(const struct sched *s, const struct sim_event_cost *c)
{
	if (!s->stages || c->p != s->p || c->v != s->v || !c->chunk || !c->stage) {
		gp_error("event simulation: expected a cost for %d stages of %d chunks, "
			 "found %d of %d", s->p, s->v, c->p, c->v);
		return RC_INPUT;
	}
	if (c->dp_buckets < 1) {
		gp_error("event simulation: expected gradient buckets >= 1, found %d",
			 c->dp_buckets);
		return RC_INPUT;
	}
	if (bad_time(c->dp_slowdown)) {
		gp_error("event simulation: expected a DP slowdown >= 0, found %g", c->dp_slowdown);
		return RC_INPUT;
	}
	for (int i = 0; i < s->p * s->v; i++) {
		const struct sim_event_chunk_cost *k = &c->chunk[i];

		if (bad_time(k->fwd_s) || bad_time(k->bwd_input_s) || bad_time(k->bwd_weight_s) ||
		    bad_time(k->comm_fwd_s) || bad_time(k->comm_bwd_s) || bad_time(k->dp_reduce_s) ||
		    bad_time(k->dp_busy_bwd_s)) {
			gp_error("event simulation: stage %d chunk %d: expected finite durations "
				 ">= 0, found a negative or non-finite one", i / s->v, i % s->v);
			return RC_INPUT;
		}
	}
	for (int st = 0; st < s->p; st++)
		if (bad_time(c->stage[st].p2p_next_s) || bad_time(c->stage[st].optimizer_s)) {
			gp_error("event simulation: stage %d: expected finite p2p and optimizer "
				 "times >= 0, found a negative or non-finite one", st);
			return RC_INPUT;
		}
	return RC_OK;
}

/* Duration of a compute op and the communication part of it. */
static double op_time(const struct sim_event_chunk_cost *k, enum sched_op_kind kind,
		      double *comm)
{
	switch (kind) {
	case SCHED_OP_FWD:
		*comm = k->comm_fwd_s;
		return k->fwd_s + k->comm_fwd_s;
	case SCHED_OP_BWD:
		*comm = k->comm_bwd_s;
		return k->bwd_input_s + k->bwd_weight_s + k->comm_bwd_s;
	case SCHED_OP_BWD_INPUT:
		*comm = k->comm_bwd_s;
		return k->bwd_input_s + k->comm_bwd_s;
	case SCHED_OP_BWD_WEIGHT:
		*comm = 0;
		return k->bwd_weight_s;
	default:
		*comm = 0;
		return 0;
	}
}

/* Per-stage replay state. */
struct lane {
	int pos;
	int waiting;
	int inflight;
	double t;           /* compute stream free at */
	double link[2];     /* link to the next stage, link to the previous, free at */
	double dp_free;     /* DP channel free at */
	double dp_sum;      /* DP reduction in all */
	int dp_n;
};

/* Transfer time of a message between st and peer, and which of st's two
 * outgoing links it uses (one link when p == 2: next and previous agree). */
static double link_time(const struct sched *s, const struct sim_event_cost *c, int st,
			int peer, int *which)
{
	if (peer == (st + 1) % s->p) {
		*which = 0;
		return c->stage[st].p2p_next_s;
	}
	*which = 1;
	return c->stage[peer].p2p_next_s;
}

static void timeline_alloc(const struct sched *s, const struct sim_event_cost *c,
			   struct sim_event_timeline *tl)
{
	memset(tl, 0, sizeof(*tl));
	tl->p = s->p;
	tl->op = xcalloc((size_t)s->p, sizeof(*tl->op));
	tl->dp = xcalloc((size_t)s->p, sizeof(*tl->dp));
	tl->n_dp = xcalloc((size_t)s->p, sizeof(*tl->n_dp));
	for (int st = 0; st < s->p; st++) {
		tl->op[st] = xcalloc((size_t)s->stages[st].n + 1, sizeof(**tl->op));
		tl->dp[st] = xcalloc((size_t)s->v * (size_t)c->dp_buckets, sizeof(**tl->dp));
	}
}

enum rc sim_event_run(const struct sched *s, const struct sim_event_cost *c,
		      struct sim_event_result *out, struct sim_event_timeline *tl)
{
	long *base;
	struct lane *ln;
	int *queue, *last_grad;
	double *issue, *arrive;
	int head = 0, tail = 0, queued;
	enum sched_op_kind done_kind;
	enum rc rc = RC_OK;

	memset(out, 0, sizeof(*out));
	if (tl)
		memset(tl, 0, sizeof(*tl));
	if (check_cost(s, c) != RC_OK)
		return RC_INPUT;
	done_kind = s->split_backward ? SCHED_OP_BWD_WEIGHT : SCHED_OP_BWD;
	base = xmalloc(((size_t)s->p + 1) * sizeof(*base));
	ln = xcalloc((size_t)s->p, sizeof(*ln));
	queue = xmalloc((size_t)s->p * sizeof(*queue));
	last_grad = xmalloc((size_t)s->p * (size_t)s->v * sizeof(*last_grad));
	out->p = s->p;
	out->stage = xcalloc((size_t)s->p, sizeof(*out->stage));
	if (tl)
		timeline_alloc(s, c, tl);
	base[0] = 0;
	for (int st = 0; st < s->p; st++) {
		base[st + 1] = base[st] + s->stages[st].n;
		queue[st] = st;
		/* The op after which a chunk's gradients are complete: its last
		 * whole backward, or its last W when split. */
		for (int k = 0; k < s->v; k++)
			last_grad[st * s->v + k] = -1;
		for (int i = 0; i < s->stages[st].n; i++) {
			const struct sched_op *op = &s->stages[st].ops[i];

			if (op->kind == done_kind)
				last_grad[st * s->v + op->chunk] = i;
		}
	}
	queued = s->p;
	issue = xmalloc(2 * ((size_t)base[s->p] + 1) * sizeof(*issue));
	arrive = issue + base[s->p] + 1;
	for (long i = 0; i < base[s->p]; i++)
		arrive[i] = -1;

	while (queued > 0) {
		int st = queue[head];
		struct lane *l = &ln[st];
		struct sim_event_stage *r = &out->stage[st];
		const struct sched_op *ops = s->stages[st].ops;

		head = (head + 1) % s->p;
		queued--;
		l->waiting = 0;
		for (; l->pos < s->stages[st].n; l->pos++) {
			const struct sched_op *op = &ops[l->pos];
			const struct sim_event_chunk_cost *k = &c->chunk[st * s->v + op->chunk];
			double d, comm, start;
			int which;
			long me = base[st] + l->pos;

			if (op->kind == SCHED_OP_RECV) {
				long src = base[op->peer] + op->peer_op;
				double ready;

				if (arrive[src] < 0) {
					l->waiting = 1;
					break;
				}
				/* Waiting before the peer sent is bubble; after, the
				 * transfer is what holds the stage up. */
				ready = issue[src] > l->t ? issue[src] : l->t;
				if (arrive[src] > ready)
					r->p2p_exposed_s += arrive[src] - ready;
				if (tl) {
					tl->op[st][l->pos].start_s = l->t;
					tl->op[st][l->pos].end_s = arrive[src] > l->t ? arrive[src] : l->t;
				}
				if (arrive[src] > l->t)
					l->t = arrive[src];
				continue;
			}
			if (op->kind == SCHED_OP_SEND) {
				struct lane *pl = &ln[op->peer];

				d = link_time(s, c, st, op->peer, &which);
				start = l->link[which] > l->t ? l->link[which] : l->t;
				issue[me] = l->t;
				arrive[me] = start + d;
				l->link[which] = start + d;
				if (tl) {
					tl->op[st][l->pos].start_s = start;
					tl->op[st][l->pos].end_s = start + d;
				}
				if (pl->waiting == 1 && pl->pos == op->peer_op) {
					pl->waiting = 2;
					queue[tail] = op->peer;
					tail = (tail + 1) % s->p;
					queued++;
				}
				continue;
			}
			d = op_time(k, op->kind, &comm);
			start = l->t;
			l->t += d;
			r->busy_s += d;
			r->op_comm_s += comm;
			if (tl) {
				tl->op[st][l->pos].start_s = start;
				tl->op[st][l->pos].end_s = l->t;
			}
			if (op->kind == SCHED_OP_FWD && ++l->inflight > r->peak_inflight)
				r->peak_inflight = l->inflight;
			/* Traffic sharing the DP channel's links holds it from the
			 * backward's start (sim.c dp_window). */
			if ((op->kind == SCHED_OP_BWD || op->kind == SCHED_OP_BWD_INPUT) &&
			    k->dp_busy_bwd_s > 0)
				l->dp_free = (l->dp_free > start ? l->dp_free : start) + k->dp_busy_bwd_s;
			if (op->kind != done_kind)
				continue;
			l->inflight--;
			if (last_grad[st * s->v + op->chunk] != l->pos || k->dp_reduce_s <= 0)
				continue;
			/* Buckets fill evenly while this last backward runs; each is
			 * reduced once it is full, one after another (PyTorch DDP /
			 * Megatron-LM overlap_grad_reduce). */
			for (int b = 0; b < c->dp_buckets; b++) {
				double ready = start + d * (b + 1) / c->dp_buckets;
				double bs = l->dp_free > ready ? l->dp_free : ready;

				l->dp_free = bs + k->dp_reduce_s / c->dp_buckets;
				l->dp_sum += k->dp_reduce_s / c->dp_buckets;
				if (tl) {
					tl->dp[st][l->dp_n].start_s = bs;
					tl->dp[st][l->dp_n].end_s = l->dp_free;
				}
				l->dp_n++;
			}
		}
	}

	for (int st = 0; st < s->p && rc == RC_OK; st++)
		if (ln[st].pos < s->stages[st].n) {
			const struct sched_op *op = &s->stages[st].ops[ln[st].pos];

			gp_error("event simulation: deadlock: stage %d waits at op %d for mb %d "
				 "chunk %d from stage %d", st, ln[st].pos, op->mb, op->chunk, op->peer);
			rc = RC_INPUT;
		}
	if (rc == RC_OK) {
		double tail_free = 0;

		for (int st = 0; st < s->p; st++) {
			struct sim_event_stage *r = &out->stage[st];
			double opt = c->stage[st].optimizer_s;
			double fin = ln[st].dp_free > ln[st].t ? ln[st].dp_free : ln[st].t;

			/* What of the reduction ran under the compute slowed it
			 * (dp_slowdown). */
			if (ln[st].dp_sum > fin - ln[st].t)
				fin += c->dp_slowdown * (ln[st].dp_sum - (fin - ln[st].t));
			r->compute_end_s = ln[st].t;
			r->dp_exposed_s = fin - ln[st].t;
			r->end_s = fin + opt + c->stage[st].dp_after_s;
			if (tl)
				tl->n_dp[st] = ln[st].dp_n;
			if (r->end_s > out->step_time_s)
				out->step_time_s = r->end_s;
			if (r->compute_end_s > out->pipeline_s)
				out->pipeline_s = r->compute_end_s;
			if (r->busy_s > out->busy_max_s)
				out->busy_max_s = r->busy_s;
			if (r->p2p_exposed_s > out->p2p_exposed_s)
				out->p2p_exposed_s = r->p2p_exposed_s;
			if (r->op_comm_s > out->op_comm_s)
				out->op_comm_s = r->op_comm_s;
			if (ln[st].t + opt > tail_free)
				tail_free = ln[st].t + opt;
		}
		for (int st = 0; st < s->p; st++)
			out->stage[st].idle_s = out->step_time_s - out->stage[st].busy_s -
						c->stage[st].optimizer_s - c->stage[st].dp_after_s;
		out->dp_exposed_s = out->step_time_s - tail_free;
		out->bubble_fraction = out->busy_max_s > 0 ?
			(out->pipeline_s - out->busy_max_s) / out->busy_max_s : 0;
		out->ops = base[s->p];
		if (tl)
			tl->step_time_s = out->step_time_s;
	}
	free(issue);
	free(last_grad);
	free(queue);
	free(ln);
	free(base);
	if (rc != RC_OK) {
		sim_event_result_release(out);
		sim_event_timeline_release(tl);
	}
	return rc;
}

/* ---- costs from the analytic model -------------------------------------- */

/* Parameters virtual stage vs (chunk vs / pp of stage vs % pp) holds on
 * one GPU, as sim_stage_params counts them: its layers, the embedding on
 * the first, the final norm, the LM head and the MTP modules on the last
 * (a tied head is a copy there unless one stage holds both ends); the
 * routed experts' share over EP x ETP beside the rest's over TP. */
static double vstage_params(const struct sim_model *m, const struct sim_shape *sh, int vs,
			    int start, int layers)
{
	int nv = sh->p * sh->v, nd = sim_dense_layer_count(m);
	int dense = start >= nd ? 0 : (start + layers < nd ? start + layers : nd) - start;
	double tp, ex;

	sim_stage_params(m, sh, layers, dense, vs == 0, vs == nv - 1, &tp, &ex);
	return tp + ex;
}

/* One message between the stages whose first ranks are a and b: over the
 * intra-node link when they share a node, else the node's NIC shared by
 * its GPUs (ranks fill nodes in order, TP innermost, then CP, DP, PP, the
 * placement sim_step() assumes). */
static double p2p_time(const struct sim_cluster *cl, int a, int b, double bytes)
{
	int gpn = cl->gpus_per_node > 0 ? cl->gpus_per_node : 1;
	struct sim_link l;

	sim_group_link_k(cl, 2, a / gpn == b / gpn ? 2 : 1, &l);
	return sim_p2p_s(bytes, &l);
}

enum rc sim_event_cost_from_model(struct sim_event_cost *c, const struct sim_model *m,
				  const struct sim_parallel *par,
				  const struct sim_cluster *cl, char *why, size_t size)
{
	struct sim_result res;
	struct sim_parts pt;
	struct sim_shape sh;
	int p = par->pp, v = par->interleave, nv, full, M, nd = sim_dense_layer_count(m);
	double w_layer, w_moe, msg, z3, pmax_stage = 0, pmax_chunk = 0, dp_after = 0, *stage_params;

	memset(c, 0, sizeof(*c));
	if (sim_check(m, par, cl, why, size) != RC_OK)
		return RC_INPUT;
	sim_step(m, par, cl, &res);
	sim_parts(m, par, cl, &pt);
	sim_shape_init(&sh, m, par);
	M = sh.micro;
	nv = p * v;
	full = par->recompute == SIM_RECOMPUTE_FULL;
	sim_event_cost_init(c, p, v);
	stage_params = xcalloc((size_t)p, sizeof(*stage_params));

	/* Splitting the backward (Qi et al., ICLR 2024, sec. 2): every GEMM's
	 * backward is one GEMM for the input gradient and one as long for the
	 * weight gradient, so W is half of the backward outside the attention
	 * core, which has no weights (the layer's element-wise work rides
	 * along in both halves).  Recomputation precedes B. */
	w_layer = (pt.layer_bwd_s - pt.layer_attn_bwd_s) / 2;
	w_moe = (pt.moe_layer_bwd_s - pt.moe_layer_attn_bwd_s) / 2;
	/* ZeRO-3 gathers weights in every micro-batch's forward and backward
	 * and scatters gradients in its backward; what sim_step() finds
	 * exposed of it goes a third into forwards, two thirds into
	 * backwards, spread over the chunks. */
	z3 = par->zero == 3 && M > 0 ? res.breakdown.dp_comm_exposed_s / M / v : 0;

	for (int vs = 0, start = 0; vs < nv; vs++) {
		int st = vs % p, ch = vs / p;
		/* The same split as sim_step()'s (sim_stage_layers). */
		int layers = sim_chunk_layers(&sh, st, ch);
		struct sim_event_chunk_cost *k = &c->chunk[st * v + ch];
		double params = vstage_params(m, &sh, vs, start, layers);
		/* its dense and MoE layers (the MTP modules' on the last, one
		 * of each kind as the model has experts or not) */
		int dense = m->experts > 0 ? (start >= nd ? 0 : (start + layers < nd ? start + layers
						      : nd) - start) : layers;
		int moe = layers - dense, all;

		if (vs == nv - 1)
			moe += m->experts > 0 ? m->mtp_layers : 0, dense += m->experts > 0 ? 0 : m->mtp_layers;
		all = dense + moe;
		k->fwd_s = dense * pt.layer_fwd_s + moe * pt.moe_layer_fwd_s;
		k->bwd_weight_s = dense * w_layer + moe * w_moe;
		k->bwd_input_s = dense * (pt.layer_bwd_s - w_layer + pt.layer_recompute_s)
				 + moe * (pt.moe_layer_bwd_s - w_moe + pt.moe_layer_recompute_s);
		/* sim.c's stage_time(): TP once per pass (twice backward with
		 * full recomputation, whose extra forward has its own), CP's
		 * exposed exchange likewise; the EP all-to-all's exposed part
		 * split as the MoE layer's compute is, and the links it keeps
		 * busy in the backward taken from the DP reduction's. */
		k->comm_fwd_s = dense * pt.layer_tp_s + moe * pt.moe_layer_tp_s
				+ all * pt.layer_cp_fwd_s + z3 / 3
				+ moe * pt.moe_layer_ep_s * pt.moe_layer_ep_fwd_share;
		k->comm_bwd_s = (dense * pt.layer_tp_s + moe * pt.moe_layer_tp_s) * (full ? 2 : 1) +
				all * ((full ? pt.layer_cp_fwd_s : 0) + pt.layer_cp_bwd_s) +
				2 * z3 / 3 + moe * pt.moe_layer_ep_s * (1 - pt.moe_layer_ep_fwd_share);
		k->dp_busy_bwd_s = moe * pt.moe_layer_ep_busy_s * (1 - pt.moe_layer_ep_fwd_share)
				   + all * pt.layer_tp_busy_s * (full ? 2 : 1);
		if (vs == 0) {
			/* Embedding: 6 of its 14 bytes per element move forward, 8
			 * backward (sim_layer.c, sim_edge_time()), all weight gradient; its
			 * all-reduce ends the forward. */
			k->fwd_s += pt.embed_compute_s * 6 / 14;
			k->bwd_weight_s += pt.embed_compute_s * 8 / 14;
			k->comm_fwd_s += pt.embed_tp_s;
		}
		if (vs == nv - 1) {
			/* Head: one GEMM forward, two backward (input and weight
			 * gradient), the fp32 loss likewise; its input is gathered
			 * forward and its gradient reduced backward. */
			k->fwd_s += pt.head_compute_s / 3;
			k->bwd_input_s += pt.head_compute_s / 3;
			k->bwd_weight_s += pt.head_compute_s / 3;
			k->comm_fwd_s += pt.head_tp_s / 2;
			k->comm_bwd_s += pt.head_tp_s / 2;
			if (pt.layer_tp_busy_s > 0)
				k->dp_busy_bwd_s += pt.head_tp_s / 2;
		}
		k->dp_reduce_s = params; /* scaled below */
		stage_params[st] += params;
		if (params > pmax_chunk)
			pmax_chunk = params;
		start += layers;
	}
	for (int st = 0; st < p; st++)
		if (stage_params[st] > pmax_stage)
			pmax_stage = stage_params[st];

	/* DP reduction and the optimizer scale with the parameters a stage
	 * holds; sim_step() times the fullest stage.  ZeRO-3's reduction is
	 * inside the ops already.  Buckets hold SIM_DP_BUCKET_PARAMS
	 * (Megatron-LM's default).  What the trainer leaves after the
	 * optimizer (sim_parallel.dp_overlap) waits there: ZeRO-1/2's
	 * gather, half the traffic, or all of it. */
	if (par->zero < 3 && par->dp_overlap == SIM_DP_OVERLAP_NONE)
		dp_after = res.breakdown.dp_comm_total_s;
	else if (par->zero >= 1 && par->zero <= 2 && par->dp_overlap == SIM_DP_OVERLAP_SUMS)
		dp_after = res.breakdown.dp_comm_total_s / 2;
	for (int i = 0; i < nv; i++)
		c->chunk[i].dp_reduce_s = par->zero == 3 || pmax_stage <= 0 ? 0 :
			(res.breakdown.dp_comm_total_s - dp_after) * c->chunk[i].dp_reduce_s /
			pmax_stage;
	/* Clamped before the cast: a double beyond an int's range is
	 * undefined as an int, and a billion buckets is as good as more. */
	c->dp_buckets = (int)fmin(fmax(ceil(pmax_chunk / SIM_DP_BUCKET_PARAMS), 1), 1e9);
	/* sim_step()'s contention cost of the reduction it hides */
	c->dp_slowdown = SIM_OVERLAP_SLOWDOWN;

	/* One activation (or its gradient) of a micro-batch, scattered over the
	 * TP ranks (Narayanan et al., SC'21, sec. 4.1); DeepSpeed's pipeline
	 * engine (pp_send_whole) sends it whole, and its blocking send and
	 * receive one after the other, which the replay takes as a transfer
	 * twice as long (sim_step's four transfers a micro-batch for two). */
	msg = 2.0 * sh.tok * sh.h / (par->pp_send_whole ? 1 : sh.t);
	for (int st = 0; st < p; st++) {
		int span = sh.t * sh.c * sh.d;

		c->stage[st].p2p_next_s = p > 1 ?
			(par->pp_send_whole ? 2.0 : 1.0) *
			p2p_time(cl, st * span, ((st + 1) % p) * span, msg) : 0;
		c->stage[st].optimizer_s = pmax_stage > 0 ?
			(res.breakdown.optimizer_s + res.breakdown.offload_s) * stage_params[st] /
			pmax_stage : 0;
		c->stage[st].dp_after_s = pmax_stage > 0 ?
			dp_after * stage_params[st] / pmax_stage : 0;
	}
	free(stage_params);
	return RC_OK;
}

enum rc sim_event_simulate(const struct sim_model *m, const struct sim_parallel *par,
			   const struct sim_cluster *cl, int split_backward,
			   struct sim_event_result *out, struct sched *sched_out,
			   struct sim_event_timeline *tl, char *why, size_t size)
{
	struct sched s;
	struct sim_event_cost c;
	enum sched_kind kind = par->interleave > 1 ? SCHED_INTERLEAVED : SCHED_1F1B;
	enum rc rc;

	memset(out, 0, sizeof(*out));
	if (sched_out)
		memset(sched_out, 0, sizeof(*sched_out));
	if ((rc = sim_event_cost_from_model(&c, m, par, cl, why, size)) != RC_OK)
		return rc;
	rc = sched_build(&s, kind, par->pp, par->gbs / (par->mbs * par->dp), par->interleave,
			 split_backward, why, size);
	if (rc != RC_OK) {
		sim_event_cost_release(&c);
		return rc;
	}
	rc = sim_event_run(&s, &c, out, tl);
	if (rc != RC_OK && why && size)
		snprintf(why, size, "event simulation failed");
	sim_event_cost_release(&c);
	if (rc == RC_OK && sched_out)
		*sched_out = s;
	else
		sched_release(&s);
	return rc;
}

/* ---- text Gantt chart -------------------------------------------------- */

char *sim_event_gantt(const struct sched *s, const struct sim_event_timeline *tl, int width)
{
	int label = snprintf(NULL, 0, "stage %d ", s->p - 1);
	size_t line, size;
	char *buf, *p;
	double scale;

	if (width < 20)
		width = 20;
	if (width > 400)
		width = 400;
	line = (size_t)label + (size_t)width + 2;
	size = line * ((size_t)s->p + 3) + 256;
	buf = xmalloc(size);
	p = buf;
	scale = tl->step_time_s > 0 ? tl->step_time_s / width : 1;
	for (int st = 0; st < s->p; st++) {
		char *row = p + label;
		const struct sched_op *ops = s->stages[st].ops;
		char name[32];

		snprintf(name, sizeof(name), "stage %-*d", label - 6, st);
		memcpy(p, name, (size_t)label);
		memset(row, '.', (size_t)width);
		for (int i = 0; i < s->stages[st].n; i++) {
			const struct sim_event_span *sp = &tl->op[st][i];
			char tag[24];
			int c0, c1, n;

			if (ops[i].kind == SCHED_OP_SEND || ops[i].kind == SCHED_OP_RECV)
				continue;
			/* An op owns the columns whose midpoints it covers. */
			c0 = (int)fmax(0, fmin(ceil(sp->start_s / scale - 0.5), width));
			c1 = (int)fmax(0, fmin(ceil(sp->end_s / scale - 0.5), width));
			if (c1 <= c0)
				continue;
			n = s->v > 1 ?
				snprintf(tag, sizeof(tag), "%c%d.%d", sched_op_letter(ops[i].kind),
					 ops[i].mb, ops[i].chunk) :
				snprintf(tag, sizeof(tag), "%c%d", sched_op_letter(ops[i].kind),
					 ops[i].mb);
			for (int col = c0; col < c1; col++)
				row[col] = col - c0 < n ? tag[col - c0] :
					   (char)(sched_op_letter(ops[i].kind) - 'A' + 'a');
		}
		row[width] = '\n';
		p = row + width + 1;
	}
	p += snprintf(p, size - (size_t)(p - buf),
		      "%*s1 column = %.3g %s; F forward, B backward%s, . idle%s\n",
		      label, "", scale >= 1 ? scale : scale * 1e3, scale >= 1 ? "s" : "ms",
		      s->split_backward ? " (input gradient), W weight gradient" : "",
		      s->v > 1 ? "; F3.1 = micro-batch 3, chunk 1" : "");
	*p = '\0';
	return buf;
}
