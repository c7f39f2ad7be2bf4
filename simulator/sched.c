/*
 * sched.c - builds and checks pipeline schedules (GPipe, 1F1B, interleaved
 * 1F1B, each with an optional B/W split of the backward).
 *
 * A schedule is built in two passes: first each stage's order of compute
 * ops, from the rules in sched.h; then every compute op that consumes or
 * produces data crossing a stage boundary gets its RECV just before and
 * its SEND just after, and sends are paired with receives through a table
 * keyed by (receiver, data, micro-batch, receiver's chunk).
 *
 * It deliberately knows nothing of time, layers or bytes.
 *
 * It calls no other file of the simulator.
 */
#include "sched.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Keeps the first reason only, so why[] names the first violation found. */
static void say(char *why, size_t size, const char *fmt, ...) GP_PRINTF(3, 4);

static void say(char *why, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (!why || size == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
}

int sched_virtual_stage(const struct sched *s, int stage, int chunk)
{
	return chunk * s->p + stage;
}

const char *sched_kind_name(enum sched_kind k)
{
	switch (k) {
	case SCHED_GPIPE: return "gpipe";
	case SCHED_1F1B: return "1f1b";
	case SCHED_INTERLEAVED: return "interleaved";
	}
	return "unknown";
}

enum rc sched_kind_parse(const char *name, enum sched_kind *out)
{
	if (gp_streq_nocase(name, "gpipe"))
		*out = SCHED_GPIPE;
	else if (gp_streq_nocase(name, "1f1b"))
		*out = SCHED_1F1B;
	else if (gp_streq_nocase(name, "interleaved") ||
		 gp_streq_nocase(name, "interleaved-1f1b"))
		*out = SCHED_INTERLEAVED;
	else
		return RC_USAGE;
	return RC_OK;
}

char sched_op_letter(enum sched_op_kind k)
{
	switch (k) {
	case SCHED_OP_FWD: return 'F';
	case SCHED_OP_BWD: return 'B';
	case SCHED_OP_BWD_INPUT: return 'B';
	case SCHED_OP_BWD_WEIGHT: return 'W';
	case SCHED_OP_SEND: return 'S';
	case SCHED_OP_RECV: return 'R';
	}
	return '?';
}

static int imin(int a, int b)
{
	return a < b ? a : b;
}

/* Micro-batches in the largest group of the interleaved walk (walk()). */
static int group_max(const struct sched *s)
{
	return s->m >= s->p ? s->p + s->m % s->p : s->p;
}

/* Warm-up forwards of stage `stage` (sched.h; Megatron-LM's
 * num_warmup_microbatches for 1F1B and its interleaved variant). */
static int warmup(const struct sched *s, int stage)
{
	long total = (long)s->m * s->v;

	switch (s->kind) {
	case SCHED_GPIPE:
		return s->m;
	case SCHED_1F1B:
		return imin(s->p - stage - 1, s->m);
	case SCHED_INTERLEAVED: {
		long w = 2L * (s->p - stage - 1) + (long)(s->v - 1) * group_max(s);

		return (int)(w < total ? w : total);
	}
	}
	return 0;
}

int sched_inflight_bound(const struct sched *s, int stage)
{
	int total = s->m * s->v;

	switch (s->kind) {
	case SCHED_GPIPE:
		return total;
	case SCHED_1F1B:
	case SCHED_INTERLEAVED:
		/* Stage 0 has the most warm-up; the split delays every other
		 * stage's W's until it holds as many (ZB-H1). */
		return imin((s->split_backward ? warmup(s, 0) : warmup(s, stage)) + 1,
			    total);
	}
	return total;
}

int sched_op_tag(const struct sched *s, const struct sched_op *op)
{
	int sender_chunk = op->kind == SCHED_OP_SEND ? op->chunk : op->peer_chunk;

	return ((op->data == SCHED_DATA_GRAD) * s->m + op->mb) * s->v + sender_chunk;
}

/* ---- building --------------------------------------------------------- */

struct unit {
	int mb, chunk;
};

struct oplist {
	struct sched_op *ops;
	int n, cap;
};

static void push(struct oplist *l, enum sched_op_kind kind, int mb, int chunk,
		 enum sched_data data, int peer, int peer_chunk)
{
	struct sched_op *op;

	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->ops = xrealloc(l->ops, (size_t)l->cap * sizeof(*l->ops));
	}
	op = &l->ops[l->n++];
	op->kind = kind;
	op->mb = mb;
	op->chunk = chunk;
	op->data = data;
	op->peer = peer;
	op->peer_chunk = peer_chunk;
	op->peer_op = -1;
}

/* Appends one compute op with the messages around it. */
static void emit(const struct sched *s, struct oplist *l, int stage,
		 enum sched_op_kind kind, struct unit u)
{
	int vs = sched_virtual_stage(s, stage, u.chunk);
	int last = s->p * s->v - 1;
	int next = (stage + 1) % s->p, prev = (stage + s->p - 1) % s->p;
	int next_chunk = stage == s->p - 1 ? u.chunk + 1 : u.chunk;
	int prev_chunk = stage == 0 ? u.chunk - 1 : u.chunk;
	int remote = s->p > 1; /* with one stage, chunks hand over in place */

	switch (kind) {
	case SCHED_OP_FWD:
		if (vs > 0 && remote)
			push(l, SCHED_OP_RECV, u.mb, u.chunk, SCHED_DATA_ACT, prev, prev_chunk);
		push(l, kind, u.mb, u.chunk, SCHED_DATA_NONE, -1, -1);
		if (vs < last && remote)
			push(l, SCHED_OP_SEND, u.mb, u.chunk, SCHED_DATA_ACT, next, next_chunk);
		break;
	case SCHED_OP_BWD:
	case SCHED_OP_BWD_INPUT:
		if (vs < last && remote)
			push(l, SCHED_OP_RECV, u.mb, u.chunk, SCHED_DATA_GRAD, next, next_chunk);
		push(l, kind, u.mb, u.chunk, SCHED_DATA_NONE, -1, -1);
		if (vs > 0 && remote)
			push(l, SCHED_OP_SEND, u.mb, u.chunk, SCHED_DATA_GRAD, prev, prev_chunk);
		break;
	default:
		push(l, kind, u.mb, u.chunk, SCHED_DATA_NONE, -1, -1);
		break;
	}
}

/* The order in which a stage visits (micro-batch, chunk) for forwards;
 * backwards use the same walk with chunks reversed.  Micro-batches go in
 * groups of p (Narayanan et al., SC'21, Sec. 2.2: a stage runs chunk 0 of
 * p micro-batches before chunk 1 of the first of them). */
static void walk(const struct sched *s, int backward, struct unit *out)
{
	int k = 0;

	for (int g0 = 0, gn; g0 < s->m; g0 += gn) {
		/* A short last group would leave stage 0 asking for chunk c + 1
		 * of a micro-batch before stage p - 1 could have sent chunk c;
		 * it joins the group before it instead. */
		gn = s->m - g0 < 2 * s->p ? s->m - g0 : s->p;

		for (int cc = 0; cc < s->v; cc++) {
			int c = backward ? s->v - 1 - cc : cc;

			for (int i = 0; i < gn; i++) {
				out[k].mb = g0 + i;
				out[k].chunk = c;
				k++;
			}
		}
	}
}

static void build_stage(const struct sched *s, int stage, const struct unit *fw,
			const struct unit *bw, struct oplist *l)
{
	int n = s->m * s->v;
	int w = warmup(s, stage);
	enum sched_op_kind bkind = s->split_backward ? SCHED_OP_BWD_INPUT : SCHED_OP_BWD;
	int delay, w_done = 0;

	if (s->kind == SCHED_GPIPE) {
		for (int k = 0; k < n; k++)
			emit(s, l, stage, SCHED_OP_FWD, fw[k]);
		for (int k = 0; k < n; k++)
			emit(s, l, stage, bkind, bw[k]);
		for (int k = 0; s->split_backward && k < n; k++)
			emit(s, l, stage, SCHED_OP_BWD_WEIGHT, bw[k]);
		return;
	}
	/* ZB-H1 (Qi et al., ICLR 2024, Sec. 2.1): stage s starts its W's
	 * w(0) - w(s) B's late, so every stage keeps stage 0's in-flight count
	 * and the W's fill the tail bubble instead of delaying B's. */
	delay = warmup(s, 0) - w;
	for (int k = 0; k < w; k++)
		emit(s, l, stage, SCHED_OP_FWD, fw[k]);
	for (int k = 0; k < n; k++) {
		if (w + k < n)
			emit(s, l, stage, SCHED_OP_FWD, fw[w + k]);
		emit(s, l, stage, bkind, bw[k]);
		if (s->split_backward && k >= delay)
			emit(s, l, stage, SCHED_OP_BWD_WEIGHT, bw[w_done++]);
	}
	while (s->split_backward && w_done < n)
		emit(s, l, stage, SCHED_OP_BWD_WEIGHT, bw[w_done++]);
}

/* Index of the receive table: (receiver, data, micro-batch, chunk). */
static size_t rkey(const struct sched *s, int stage, enum sched_data d, int mb, int chunk)
{
	return (((size_t)stage * 2 + (d == SCHED_DATA_GRAD)) * (size_t)s->m + (size_t)mb) *
		       (size_t)s->v + (size_t)chunk;
}

static void pair_messages(struct sched *s)
{
	size_t nkey = (size_t)s->p * 2 * (size_t)s->m * (size_t)s->v;
	int *recv_at = xmalloc(nkey * sizeof(*recv_at));

	for (size_t i = 0; i < nkey; i++)
		recv_at[i] = -1;
	for (int st = 0; st < s->p; st++)
		for (int i = 0; i < s->stages[st].n; i++) {
			const struct sched_op *op = &s->stages[st].ops[i];

			if (op->kind == SCHED_OP_RECV)
				recv_at[rkey(s, st, op->data, op->mb, op->chunk)] = i;
		}
	for (int st = 0; st < s->p; st++)
		for (int i = 0; i < s->stages[st].n; i++) {
			struct sched_op *op = &s->stages[st].ops[i];
			int j;

			if (op->kind != SCHED_OP_SEND)
				continue;
			j = recv_at[rkey(s, op->peer, op->data, op->mb, op->peer_chunk)];
			op->peer_op = j;
			if (j >= 0)
				s->stages[op->peer].ops[j].peer_op = i;
		}
	free(recv_at);
}

enum rc sched_build(struct sched *s, enum sched_kind kind, int p, int m, int v,
		    int split_backward, char *why, size_t size)
{
	struct unit *fw, *bw;

	memset(s, 0, sizeof(*s));
	if (kind != SCHED_GPIPE && kind != SCHED_1F1B && kind != SCHED_INTERLEAVED) {
		say(why, size, "schedule kind: expected gpipe, 1f1b or interleaved, found %d",
		    (int)kind);
		return RC_INPUT;
	}
	if (p < 1 || m < 1) {
		say(why, size, "schedule: expected pipeline stages and micro-batches >= 1, "
		    "found p=%d m=%d", p, m);
		return RC_INPUT;
	}
	if (kind == SCHED_INTERLEAVED && v < 2) {
		say(why, size, "interleaved schedule: expected chunks per stage >= 2, found %d", v);
		return RC_INPUT;
	}
	if (kind != SCHED_INTERLEAVED && v != 1) {
		say(why, size, "%s schedule: expected 1 chunk per stage, found %d "
		    "(use interleaved for more)", sched_kind_name(kind), v);
		return RC_INPUT;
	}
	/* Tags and table indices are ints; a step with more than a few
	 * million micro-batch chunks is not a pipeline anyone runs. */
	if ((long)m * v > (1L << 24) || p > (1 << 16)) {
		say(why, size, "schedule: expected at most %ld micro-batch chunks and %d stages, "
		    "found m*v=%ld p=%d", 1L << 24, 1 << 16, (long)m * v, p);
		return RC_INPUT;
	}
	s->kind = kind;
	s->p = p;
	s->m = m;
	s->v = v;
	s->split_backward = split_backward ? 1 : 0;
	s->stages = xcalloc((size_t)p, sizeof(*s->stages));
	fw = xmalloc((size_t)m * (size_t)v * sizeof(*fw));
	bw = xmalloc((size_t)m * (size_t)v * sizeof(*bw));
	walk(s, 0, fw);
	walk(s, 1, bw);
	for (int st = 0; st < p; st++) {
		struct oplist l = { 0 };

		build_stage(s, st, fw, bw, &l);
		s->stages[st].ops = l.ops;
		s->stages[st].n = l.n;
		s->n_ops += l.n;
	}
	free(fw);
	free(bw);
	pair_messages(s);
	return RC_OK;
}

void sched_release(struct sched *s)
{
	if (!s)
		return;
	for (int st = 0; s->stages && st < s->p; st++)
		free(s->stages[st].ops);
	free(s->stages);
	memset(s, 0, sizeof(*s));
}

/* ---- checking --------------------------------------------------------- */

static const char *data_name(enum sched_data d)
{
	return d == SCHED_DATA_ACT ? "activations" : d == SCHED_DATA_GRAD ? "gradients" : "nothing";
}

/* Fields in range and the SEND/RECV pairing, op by op. */
static enum rc check_fields(const struct sched *s, char *why, size_t size)
{
	for (int st = 0; st < s->p; st++) {
		const struct sched_stage *sg = &s->stages[st];

		for (int i = 0; i < sg->n; i++) {
			const struct sched_op *op = &sg->ops[i], *pa;
			int vs, pvs, want;

			if ((int)op->kind < (int)SCHED_OP_FWD || (int)op->kind > (int)SCHED_OP_RECV ||
			    op->mb < 0 || op->mb >= s->m || op->chunk < 0 || op->chunk >= s->v) {
				say(why, size, "stage %d op %d: expected kind, micro-batch < %d and "
				    "chunk < %d, found kind %d mb %d chunk %d", st, i, s->m, s->v,
				    (int)op->kind, op->mb, op->chunk);
				return RC_INPUT;
			}
			if ((op->kind == SCHED_OP_BWD && s->split_backward) ||
			    ((op->kind == SCHED_OP_BWD_INPUT || op->kind == SCHED_OP_BWD_WEIGHT) &&
			     !s->split_backward)) {
				say(why, size, "stage %d op %d: expected %s backward, found %c",
				    st, i, s->split_backward ? "split" : "whole",
				    sched_op_letter(op->kind));
				return RC_INPUT;
			}
			if (op->kind != SCHED_OP_SEND && op->kind != SCHED_OP_RECV)
				continue;
			if (op->data != SCHED_DATA_ACT && op->data != SCHED_DATA_GRAD) {
				say(why, size, "stage %d op %d: expected a message of activations or "
				    "gradients, found data %d", st, i, (int)op->data);
				return RC_INPUT;
			}
			if (op->peer < 0 || op->peer >= s->p || op->peer == st ||
			    op->peer_chunk < 0 || op->peer_chunk >= s->v || op->peer_op < 0 ||
			    op->peer_op >= s->stages[op->peer].n) {
				say(why, size, "stage %d op %d: %s of %s for mb %d has no partner "
				    "(peer %d, peer op %d)", st, i,
				    op->kind == SCHED_OP_SEND ? "send" : "recv", data_name(op->data),
				    op->mb, op->peer, op->peer_op);
				return RC_INPUT;
			}
			pa = &s->stages[op->peer].ops[op->peer_op];
			if (pa->kind != (op->kind == SCHED_OP_SEND ? SCHED_OP_RECV : SCHED_OP_SEND) ||
			    pa->peer != st || pa->peer_op != i || pa->mb != op->mb ||
			    pa->data != op->data || pa->chunk != op->peer_chunk ||
			    pa->peer_chunk != op->chunk) {
				say(why, size, "stage %d op %d: %s of %s for mb %d chunk %d does not "
				    "match stage %d op %d", st, i,
				    op->kind == SCHED_OP_SEND ? "send" : "recv", data_name(op->data),
				    op->mb, op->chunk, op->peer, op->peer_op);
				return RC_INPUT;
			}
			/* Activations go to the next virtual stage, gradients to the
			 * previous one; a receive sees it from the other end. */
			vs = sched_virtual_stage(s, st, op->chunk);
			pvs = sched_virtual_stage(s, op->peer, op->peer_chunk);
			want = (op->data == SCHED_DATA_ACT) == (op->kind == SCHED_OP_SEND) ? vs + 1 : vs - 1;
			if (pvs != want) {
				say(why, size, "stage %d op %d: %s of %s for mb %d links virtual stage "
				    "%d with %d, expected %d", st, i,
				    op->kind == SCHED_OP_SEND ? "send" : "recv", data_name(op->data),
				    op->mb, vs, pvs, want);
				return RC_INPUT;
			}
		}
	}
	return RC_OK;
}

/* Per stage, each (mb, chunk) computed once, in the order F < B < W, and
 * every message next to the compute op it feeds or drains. */
enum slot { SL_F, SL_B, SL_W, SL_RA, SL_SA, SL_RG, SL_SG, SL_N };

static enum rc check_order(const struct sched *s, char *why, size_t size)
{
	size_t units = (size_t)s->m * (size_t)s->v;
	int *at = xmalloc(units * SL_N * sizeof(*at));
	enum rc rc = RC_OK;
	int remote = s->p > 1;

	for (int st = 0; st < s->p && rc == RC_OK; st++) {
		const struct sched_stage *sg = &s->stages[st];

		for (size_t u = 0; u < units * SL_N; u++)
			at[u] = -1;
		for (int i = 0; i < sg->n && rc == RC_OK; i++) {
			const struct sched_op *op = &sg->ops[i];
			size_t u = (size_t)op->mb * (size_t)s->v + (size_t)op->chunk;
			enum slot sl;

			switch (op->kind) {
			case SCHED_OP_FWD: sl = SL_F; break;
			case SCHED_OP_BWD:
			case SCHED_OP_BWD_INPUT: sl = SL_B; break;
			case SCHED_OP_BWD_WEIGHT: sl = SL_W; break;
			case SCHED_OP_SEND: sl = op->data == SCHED_DATA_ACT ? SL_SA : SL_SG; break;
			default: sl = op->data == SCHED_DATA_ACT ? SL_RA : SL_RG; break;
			}
			if (at[u * SL_N + sl] >= 0) {
				say(why, size, "stage %d op %d: %c of mb %d chunk %d appears twice "
				    "(first at op %d)", st, i, sched_op_letter(op->kind), op->mb,
				    op->chunk, at[u * SL_N + sl]);
				rc = RC_INPUT;
			}
			at[u * SL_N + sl] = i;
		}
		for (size_t u = 0; u < units && rc == RC_OK; u++) {
			const int *a = &at[u * SL_N];
			int mb = (int)(u / (size_t)s->v), c = (int)(u % (size_t)s->v);
			int vs = sched_virtual_stage(s, st, c);
			int first = vs == 0, last = vs == s->p * s->v - 1;

			if (a[SL_F] < 0 || a[SL_B] < 0 || (s->split_backward && a[SL_W] < 0)) {
				say(why, size, "stage %d: mb %d chunk %d lacks its %s", st, mb, c,
				    a[SL_F] < 0 ? "forward" : a[SL_B] < 0 ? "backward" : "weight gradient");
				rc = RC_INPUT;
			} else if (a[SL_B] < a[SL_F] || (s->split_backward && a[SL_W] < a[SL_B])) {
				say(why, size, "stage %d: mb %d chunk %d runs %s (op %d) before %s (op %d)",
				    st, mb, c, a[SL_B] < a[SL_F] ? "backward" : "weight gradient",
				    a[SL_B] < a[SL_F] ? a[SL_B] : a[SL_W],
				    a[SL_B] < a[SL_F] ? "forward" : "input gradient",
				    a[SL_B] < a[SL_F] ? a[SL_F] : a[SL_B]);
				rc = RC_INPUT;
			} else if (remote && ((!first && !(a[SL_RA] >= 0 && a[SL_RA] < a[SL_F])) ||
					      (!last && !(a[SL_SA] > a[SL_F])) ||
					      (!last && !(a[SL_RG] >= 0 && a[SL_RG] < a[SL_B])) ||
					      (!first && !(a[SL_SG] > a[SL_B])))) {
				say(why, size, "stage %d: mb %d chunk %d lacks a message around its "
				    "compute (recv activations before F, send after F, recv gradients "
				    "before B, send after B)", st, mb, c);
				rc = RC_INPUT;
			}
		}
	}
	free(at);
	return rc;
}

/* Replays s with non-blocking sends and blocking receives, in list order,
 * through a worklist: a stage runs until it reaches a receive whose send
 * has not run; that send's stage wakes it.  Linear in the op count. */
static enum rc check_replay(const struct sched *s, char *why, size_t size)
{
	long *base = xmalloc(((size_t)s->p + 1) * sizeof(*base));
	int *pos = xcalloc((size_t)s->p, sizeof(*pos));
	int *queue = xmalloc((size_t)s->p * sizeof(*queue));
	int *waiting = xmalloc((size_t)s->p * sizeof(*waiting));
	unsigned char *sent;
	int head = 0, tail = 0, queued = 0;
	enum rc rc = RC_OK;

	base[0] = 0;
	for (int st = 0; st < s->p; st++) {
		base[st + 1] = base[st] + s->stages[st].n;
		queue[st] = st;
		waiting[st] = 0;
	}
	queued = s->p; /* full, so the next push wraps to slot 0 */
	sent = xcalloc((size_t)base[s->p] + 1, 1);
	while (queued > 0) {
		int st = queue[head];

		head = (head + 1) % s->p;
		queued--;
		waiting[st] = 0;
		while (pos[st] < s->stages[st].n) {
			const struct sched_op *op = &s->stages[st].ops[pos[st]];

			if (op->kind == SCHED_OP_RECV && !sent[base[op->peer] + op->peer_op]) {
				waiting[st] = 1;
				break;
			}
			if (op->kind == SCHED_OP_SEND) {
				sent[base[st] + pos[st]] = 1;
				if (waiting[op->peer] == 1 &&
				    s->stages[op->peer].ops[pos[op->peer]].peer_op == pos[st] &&
				    s->stages[op->peer].ops[pos[op->peer]].peer == st) {
					waiting[op->peer] = 2;
					queue[tail] = op->peer;
					tail = (tail + 1) % s->p;
					queued++;
				}
			}
			pos[st]++;
		}
	}
	for (int st = 0; st < s->p && rc == RC_OK; st++)
		if (pos[st] < s->stages[st].n) {
			const struct sched_op *op = &s->stages[st].ops[pos[st]];

			say(why, size, "deadlock: stage %d waits at op %d for %s of mb %d chunk %d "
			    "from stage %d", st, pos[st], data_name(op->data), op->mb, op->chunk,
			    op->peer);
			rc = RC_INPUT;
		}
	free(sent);
	free(waiting);
	free(queue);
	free(pos);
	free(base);
	return rc;
}

enum rc sched_validate(const struct sched *s, int *peak_inflight, char *why, size_t size)
{
	enum rc rc;

	if (!s || !s->stages || s->p < 1 || s->m < 1 || s->v < 1) {
		say(why, size, "schedule: expected a built schedule, found an empty one");
		return RC_INPUT;
	}
	if ((rc = check_fields(s, why, size)) != RC_OK ||
	    (rc = check_order(s, why, size)) != RC_OK ||
	    (rc = check_replay(s, why, size)) != RC_OK)
		return rc;
	for (int st = 0; st < s->p; st++) {
		int now = 0, peak = 0, bound = sched_inflight_bound(s, st);
		enum sched_op_kind done = s->split_backward ? SCHED_OP_BWD_WEIGHT : SCHED_OP_BWD;

		for (int i = 0; i < s->stages[st].n; i++) {
			enum sched_op_kind k = s->stages[st].ops[i].kind;

			if (k == SCHED_OP_FWD && ++now > peak)
				peak = now;
			else if (k == done)
				now--;
		}
		if (peak > bound) {
			say(why, size, "stage %d: expected at most %d activations in flight "
			    "(%s), found %d", st, bound, sched_kind_name(s->kind), peak);
			return RC_INPUT;
		}
		if (peak_inflight)
			peak_inflight[st] = peak;
	}
	return RC_OK;
}
