/*
 * exec_train_comm.c - the trainer's collectives and schedule ops, each
 * recorded on the rank's trace when tracing is on (exec_trace.c's
 * recorder): all-reduce, reduce-scatter and all-gather over a group, the
 * gradients' sum over DP left running under the backward, and the
 * compute or message interval of a schedule op; the experts' all-to-all.
 *
 * Calls (all below it; state and helpers from exec_train_state.h):
 * exec_trace.c (the recorder) and the communicator of comm/.
 */
#include <string.h>

#include "train/exec_train_layers.h"

/* Every collective goes through these wrappers, which record it on the
 * trace's communication track, or its gradient-reduction track for a sum
 * left running, when its group has more than one rank (a group of one
 * copies or does nothing).  Bytes are the whole buffer: the reduced one,
 * or the gathered or scattered one (nccl-tests' sizes). */
static long coll_begin(struct exec_trainer *t, const struct exec_group *g, int op, double bytes,
		       int stream)
{
	struct exec_trace_event e;

	if (!t->tr || g->size < 2)
		return -1;
	memset(&e, 0, sizeof(e));
	e.kind = stream == EXEC_STREAM_REDUCE ? EXEC_TRACE_COLL_ASYNC : EXEC_TRACE_COLL;
	e.op = (unsigned char)op;
	e.group = g == &t->g->tp ? EXEC_GROUP_TP : g == &t->g->pp ? EXEC_GROUP_PP
		: g == &t->g->dp ? EXEC_GROUP_DP : g == &t->g->cp ? EXEC_GROUP_CP
		: g == &t->g->ep ? EXEC_GROUP_EP : g == &t->g->edp ? EXEC_GROUP_EDP
		: EXEC_GROUP_WORLD;
	e.mb = e.chunk = e.peer = -1;
	e.bytes = bytes;
	return exec_tracer_begin(t->tr, &e, stream);
}

enum rc train_all_reduce(struct exec_trainer *t, struct exec_group *g, void *buf, size_t n,
			 enum exec_dtype dt, enum exec_redop op)
{
	long h = coll_begin(t, g, EXEC_TRACE_ALL_REDUCE, (double)n * exec_dtype_size(dt),
			    EXEC_STREAM_COMM);
	enum rc rc = g->comm->all_reduce(g, buf, n, dt, op);

	exec_tracer_end(t->tr, h, EXEC_STREAM_COMM);
	return rc;
}

/* Bytes: what this rank sends and receives in all. */
enum rc train_all_to_all(struct exec_trainer *t, struct exec_group *g, const void *send,
			 const size_t *send_n, void *recv, const size_t *recv_n, enum exec_dtype dt)
{
	double n = 0;
	long h;
	enum rc rc;

	for (int i = 0; i < g->size; i++)
		n += (double)send_n[i] + (double)recv_n[i];
	h = coll_begin(t, g, EXEC_TRACE_ALL_TO_ALL, n * exec_dtype_size(dt), EXEC_STREAM_COMM);
	rc = g->comm->all_to_all(g, send, send_n, recv, recv_n, dt);
	exec_tracer_end(t->tr, h, EXEC_STREAM_COMM);
	return rc;
}

/* Starts the sum over DP of unit u's fp32 gradients, left running until
 * the group's wait_reduces (ZeRO 0 and 1, train_grads_end).  ZeRO-0 all-reduces
 * them.  ZeRO-1 reduce-scatters them in place: each rank receives the sum
 * of its own shard alone, all its optimizer reads, and the all-gather of
 * the updated parameters completes the exchange, one all-reduce's traffic
 * in all (Rajbhandari et al., SC'20, sec. 5 and 7.2; Megatron-LM's
 * distributed optimizer). */
enum rc train_grads_sum_start(struct exec_trainer *t, struct unit *u)
{
	struct exec_group *g = u->grp;
	int scatter = t->o.par.zero == 1;
	long h = coll_begin(t, g, scatter ? EXEC_TRACE_REDUCE_SCATTER : EXEC_TRACE_ALL_REDUCE,
			    (double)(scatter ? u->n_pad : u->n) * sizeof(float),
			    EXEC_STREAM_REDUCE);
	enum rc rc = scatter
		? g->comm->reduce_scatter_start(g, u->grads, (size_t)u->shard, EXEC_F32)
		: g->comm->all_reduce_start(g, u->grads, (size_t)u->n, EXEC_F32);

	exec_tracer_end_async(t->tr, h, EXEC_STREAM_REDUCE);
	return rc;
}

enum rc train_reduce_scatter(struct exec_trainer *t, struct exec_group *g, const void *send,
			     void *recv, size_t count, enum exec_dtype dt)
{
	long h = coll_begin(t, g, EXEC_TRACE_REDUCE_SCATTER,
			    (double)count * g->size * exec_dtype_size(dt), EXEC_STREAM_COMM);
	enum rc rc = g->comm->reduce_scatter(g, send, recv, count, dt);

	exec_tracer_end(t->tr, h, EXEC_STREAM_COMM);
	return rc;
}

enum rc train_all_gather(struct exec_trainer *t, struct exec_group *g, void *buf, size_t count,
			 enum exec_dtype dt)
{
	long h = coll_begin(t, g, EXEC_TRACE_ALL_GATHER,
			    (double)count * g->size * exec_dtype_size(dt), EXEC_STREAM_COMM);
	enum rc rc = g->comm->all_gather(g, buf, count, dt);

	exec_tracer_end(t->tr, h, EXEC_STREAM_COMM);
	return rc;
}

/* Compute on the compute stream and track, messages on the others. */
static int stream_of(int kind)
{
	return kind == EXEC_TRACE_FWD || kind == EXEC_TRACE_BWD || kind == EXEC_TRACE_OPTIMIZER
		? EXEC_STREAM_COMPUTE : EXEC_STREAM_COMM;
}

/* The event of schedule op `op` (NULL for the optimizer and the wait for
 * sends) of trace kind `kind`. */
long train_op_begin(struct exec_trainer *t, const struct sched_op *op, int kind, double bytes)
{
	struct exec_trace_event e;

	if (!t->tr)
		return -1;
	memset(&e, 0, sizeof(e));
	e.kind = (unsigned char)kind;
	e.mb = op ? op->mb : -1;
	e.chunk = op ? op->chunk : -1;
	e.peer = op && (kind == EXEC_TRACE_SEND || kind == EXEC_TRACE_RECV) ? op->peer : -1;
	e.data = op ? (unsigned char)op->data : 0;
	e.bytes = bytes;
	return exec_tracer_begin(t->tr, &e, stream_of(kind));
}

void train_op_end(struct exec_trainer *t, long h, int kind)
{
	exec_tracer_end(t->tr, h, stream_of(kind));
}

enum rc train_tp_sum(struct exec_trainer *t, void *buf, size_t n, enum exec_dtype dt)
{
	return train_all_reduce(t, &t->g->tp, buf, n, dt, EXEC_SUM);
}
