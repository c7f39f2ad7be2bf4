/*
 * exec_comm_mpi.c - the MPI communicator (OpenMPI) and the job's bring-up:
 * MPI_Init, the TP, CP, PP, DP, EP and expert-DP groups of a layout,
 * finalize and abort.  The only file of the CPU path that includes
 * <mpi.h>.
 *
 * Every MPI call is checked: errors are returned (MPI_ERRORS_RETURN), not
 * fatal, and MPI_CHECK turns one into a message naming the world rank, the
 * call and MPI's reason, and RC_DEVICE.  Sends copy their data and go out
 * with MPI_Isend, so the pipeline's schedule never blocks on a send (the
 * rule sched.h's schedules are proven deadlock-free under).
 */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/exec_comm.h"

static int world_rank = -1;

#define MPI_CHECK(call)                                                      \
	do {                                                                 \
		int err_ = (call);                                           \
		if (err_ != MPI_SUCCESS) {                                   \
			mpi_report(err_, #call, __FILE__, __LINE__);         \
			return RC_DEVICE;                                    \
		}                                                            \
	} while (0)

static void mpi_report(int err, const char *call, const char *file, int line)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;
	const char *paren = strchr(call, '(');

	if (MPI_Error_string(err, msg, &len) != MPI_SUCCESS)
		snprintf(msg, sizeof(msg), "error %d", err);
	gp_error("rank %d: %s:%d: %.*s failed: %s", world_rank, file, line,
		 paren ? (int)(paren - call) : (int)strlen(call), call, msg);
}

struct pending {
	MPI_Request req;
	void *buf;
};

/* A reduce-scatter started in place: MPI leaves this rank's sum at the
 * front of the buffer (MPI 3.0, sec. 5.10.1), `from`, and it moves to the
 * rank's part, `to`, once complete. */
struct part {
	char *from, *to;
	size_t bytes;
};

struct mpi_priv {
	MPI_Comm comm;
	struct pending *pend;
	size_t n_pend, cap_pend;
	MPI_Request *sums;       /* the starts' sums, in flight */
	size_t n_sums, cap_sums;
	struct part *parts;      /* their reduce-scatters' parts to move */
	size_t n_parts, cap_parts;
};

static MPI_Comm comm_of(struct exec_group *g)
{
	return ((struct mpi_priv *)g->priv)->comm;
}

static enum rc count_ok(size_t n, const char *what)
{
	if (n > INT_MAX) {
		gp_error("rank %d: %s of %zu elements: expected at most %d", world_rank,
			 what, n, INT_MAX);
		return RC_DEVICE;
	}
	return RC_OK;
}

/* The MPI type that carries t.  MPI has no bf16: its elements travel as
 * 16-bit integers, which moves them but cannot reduce them (the CPU
 * backend, MPI's only user, is fp32 throughout). */
static MPI_Datatype mpi_type(enum exec_dtype t)
{
	return t == EXEC_F64 ? MPI_DOUBLE : t == EXEC_BF16 ? MPI_UINT16_T
		: t == EXEC_I32 ? MPI_INT32_T : MPI_FLOAT;
}

static enum rc reducible(enum exec_dtype t, const char *what)
{
	if (t != EXEC_BF16)
		return RC_OK;
	gp_error("rank %d: %s of bf16: MPI cannot reduce bf16", world_rank, what);
	return RC_DEVICE;
}

static enum rc mpi_all_reduce(struct exec_group *g, void *buf, size_t n,
			      enum exec_dtype t, enum exec_redop op)
{
	if (g->size == 1 || n == 0)
		return RC_OK;
	if (count_ok(n, "all-reduce") != RC_OK || reducible(t, "all-reduce") != RC_OK)
		return RC_DEVICE;
	MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, mpi_type(t),
				op == EXEC_MAX ? MPI_MAX : MPI_SUM, comm_of(g)));
	return RC_OK;
}

static enum rc mpi_reduce_scatter(struct exec_group *g, const void *send,
				  void *recv, size_t count, enum exec_dtype t)
{
	if (g->size == 1) {
		memmove(recv, send, count * exec_dtype_size(t));
		return RC_OK;
	}
	if (count_ok(count, "reduce-scatter") != RC_OK ||
	    reducible(t, "reduce-scatter") != RC_OK)
		return RC_DEVICE;
	MPI_CHECK(MPI_Reduce_scatter_block(send, recv, (int)count, mpi_type(t), MPI_SUM,
					   comm_of(g)));
	return RC_OK;
}

static enum rc mpi_all_gather(struct exec_group *g, void *buf, size_t count,
			      enum exec_dtype t)
{
	if (g->size == 1)
		return RC_OK;
	if (count_ok(count, "all-gather") != RC_OK)
		return RC_DEVICE;
	MPI_CHECK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, (int)count,
				mpi_type(t), comm_of(g)));
	return RC_OK;
}

/* Room for one more sum in flight. */
static MPI_Request *sum_slot(struct mpi_priv *p)
{
	if (p->n_sums == p->cap_sums) {
		p->cap_sums = p->cap_sums ? 2 * p->cap_sums : 16;
		p->sums = xrealloc(p->sums, p->cap_sums * sizeof(*p->sums));
	}
	return &p->sums[p->n_sums];
}

/* Every sum in flight has completed: the reduce-scatters' parts go to
 * their place. */
static void parts_place(struct mpi_priv *p)
{
	for (size_t i = 0; i < p->n_parts; i++)
		memmove(p->parts[i].to, p->parts[i].from, p->parts[i].bytes);
	p->n_parts = 0;
}

/* Counts the sum just started in sum_slot().  Open MPI moves a
 * non-blocking collective on only inside MPI calls, so each start tests
 * the sums in flight: a sum started during a backward advances at every
 * unit. */
static enum rc sum_started(struct mpi_priv *p)
{
	int done = 0;

	p->n_sums++;
	MPI_CHECK(MPI_Testall((int)p->n_sums, p->sums, &done, MPI_STATUSES_IGNORE));
	if (done) {
		p->n_sums = 0;
		parts_place(p);
	}
	return RC_OK;
}

/* MPI_Iallreduce (MPI 3.0, sec. 5.12.8). */
static enum rc mpi_all_reduce_start(struct exec_group *g, void *buf, size_t n,
				    enum exec_dtype t)
{
	struct mpi_priv *p = g->priv;

	if (g->size == 1 || n == 0)
		return RC_OK;
	if (count_ok(n, "all-reduce") != RC_OK || reducible(t, "all-reduce") != RC_OK)
		return RC_DEVICE;
	MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, buf, (int)n, mpi_type(t), MPI_SUM, p->comm,
				 sum_slot(p)));
	return sum_started(p);
}

/* MPI_Ireduce_scatter_block (MPI 3.0, sec. 5.12.9) in place: it reads
 * the whole buffer and writes this rank's sum at the front, which
 * parts_place() moves to the rank's part, where NCCL's in-place form
 * writes it. */
static enum rc mpi_reduce_scatter_start(struct exec_group *g, void *buf, size_t count,
					enum exec_dtype t)
{
	struct mpi_priv *p = g->priv;
	size_t bytes = count * exec_dtype_size(t);

	if (g->size == 1 || count == 0)
		return RC_OK;
	if (count_ok(count, "reduce-scatter") != RC_OK ||
	    reducible(t, "reduce-scatter") != RC_OK)
		return RC_DEVICE;
	MPI_CHECK(MPI_Ireduce_scatter_block(MPI_IN_PLACE, buf, (int)count, mpi_type(t), MPI_SUM,
					    p->comm, sum_slot(p)));
	if (g->rank > 0) {
		if (p->n_parts == p->cap_parts) {
			p->cap_parts = p->cap_parts ? 2 * p->cap_parts : 16;
			p->parts = xrealloc(p->parts, p->cap_parts * sizeof(*p->parts));
		}
		p->parts[p->n_parts].from = buf;
		p->parts[p->n_parts].to = (char *)buf + (size_t)g->rank * bytes;
		p->parts[p->n_parts++].bytes = bytes;
	}
	return sum_started(p);
}

static enum rc mpi_wait_reduces(struct exec_group *g)
{
	struct mpi_priv *p = g->priv;
	int n = (int)p->n_sums;

	p->n_sums = 0;
	MPI_CHECK(MPI_Waitall(n, p->sums, MPI_STATUSES_IGNORE));
	parts_place(p);
	return RC_OK;
}

/* Frees the buffers of sends that have completed. */
static enum rc reap(struct mpi_priv *p, int wait)
{
	size_t keep = 0;

	for (size_t i = 0; i < p->n_pend; i++) {
		int done = 0;

		if (wait)
			MPI_CHECK(MPI_Wait(&p->pend[i].req, MPI_STATUS_IGNORE));
		else
			MPI_CHECK(MPI_Test(&p->pend[i].req, &done, MPI_STATUS_IGNORE));
		if (wait || done)
			free(p->pend[i].buf);
		else
			p->pend[keep++] = p->pend[i];
	}
	p->n_pend = wait ? 0 : keep;
	return RC_OK;
}

/* MPI tells messages apart by tag, so the channel changes nothing. */
static enum rc mpi_send(struct exec_group *g, int peer, int channel, const void *buf,
			size_t n, enum exec_dtype t, int tag)
{
	struct mpi_priv *p = g->priv;
	struct pending *q;
	size_t bytes = n * exec_dtype_size(t);

	(void)channel;
	if (count_ok(n, "send") != RC_OK || reap(p, 0) != RC_OK)
		return RC_DEVICE;
	if (p->n_pend == p->cap_pend) {
		p->cap_pend = p->cap_pend ? 2 * p->cap_pend : 8;
		p->pend = xrealloc(p->pend, p->cap_pend * sizeof(*p->pend));
	}
	q = &p->pend[p->n_pend];
	q->buf = xmalloc(bytes ? bytes : 1);
	memcpy(q->buf, buf, bytes);
	{
		int err = MPI_Isend(q->buf, (int)n, mpi_type(t), peer, tag, p->comm, &q->req);

		if (err != MPI_SUCCESS) {
			free(q->buf);
			mpi_report(err, "MPI_Isend()", __FILE__, __LINE__);
			return RC_DEVICE;
		}
	}
	p->n_pend++;
	return RC_OK;
}

static enum rc mpi_recv(struct exec_group *g, int peer, int channel, void *buf, size_t n,
			enum exec_dtype t, int tag)
{
	MPI_Status st;
	int got = 0;

	(void)channel;
	if (count_ok(n, "receive") != RC_OK)
		return RC_DEVICE;
	MPI_CHECK(MPI_Recv(buf, (int)n, mpi_type(t), peer, tag, comm_of(g), &st));
	MPI_CHECK(MPI_Get_count(&st, mpi_type(t), &got));
	if ((size_t)got != n) {
		gp_error("rank %d: receive from stage %d (tag %d): expected %zu elements, found %d",
			 world_rank, peer, tag, n, got);
		return RC_DEVICE;
	}
	return RC_OK;
}

static enum rc mpi_wait_sends(struct exec_group *g)
{
	return reap(g->priv, 1);
}

/* MPI_Alltoallv (MPI 3.0, sec. 5.8) with the packed displacements the
 * counts imply. */
static enum rc mpi_all_to_all(struct exec_group *g, const void *send, const size_t *send_n,
			      void *recv, const size_t *recv_n, enum exec_dtype t)
{
	int *sc = xcalloc(4 * (size_t)g->size, sizeof(int));
	int *sd = sc + g->size, *rc_ = sd + g->size, *rd = rc_ + g->size, err;
	size_t so = 0, ro = 0;

	for (int i = 0; i < g->size; i++) {
		if (count_ok(so + send_n[i], "all-to-all") != RC_OK ||
		    count_ok(ro + recv_n[i], "all-to-all") != RC_OK) {
			free(sc);
			return RC_DEVICE;
		}
		sc[i] = (int)send_n[i];
		sd[i] = (int)so;
		rc_[i] = (int)recv_n[i];
		rd[i] = (int)ro;
		so += send_n[i];
		ro += recv_n[i];
	}
	err = MPI_Alltoallv(send, sc, sd, mpi_type(t), recv, rc_, rd, mpi_type(t), comm_of(g));
	free(sc);
	if (err != MPI_SUCCESS) {
		mpi_report(err, "MPI_Alltoallv()", __FILE__, __LINE__);
		return RC_DEVICE;
	}
	return RC_OK;
}

static enum rc mpi_barrier(struct exec_group *g)
{
	MPI_CHECK(MPI_Barrier(comm_of(g)));
	return RC_OK;
}

static enum rc mpi_bcast(struct exec_group *g, void *buf, size_t bytes, int root)
{
	if (count_ok(bytes, "broadcast") != RC_OK)
		return RC_DEVICE;
	MPI_CHECK(MPI_Bcast(buf, (int)bytes, MPI_BYTE, root, comm_of(g)));
	return RC_OK;
}

static void mpi_release(struct exec_group *g)
{
	struct mpi_priv *p = g->priv;

	if (!p)
		return;
	reap(p, 1);
	/* the sums' buffers may be gone by now: complete them, place nothing */
	p->n_parts = 0;
	mpi_wait_reduces(g);
	free(p->pend);
	free(p->sums);
	free(p->parts);
	if (p->comm != MPI_COMM_NULL)
		MPI_Comm_free(&p->comm);
	free(p);
	g->priv = NULL;
}

static const struct exec_comm mpi_comm = {
	.name = "mpi",
	.all_reduce = mpi_all_reduce,
	.reduce_scatter = mpi_reduce_scatter,
	.all_gather = mpi_all_gather,
	.all_reduce_start = mpi_all_reduce_start,
	.reduce_scatter_start = mpi_reduce_scatter_start,
	.wait_reduces = mpi_wait_reduces,
	.send = mpi_send,
	.recv = mpi_recv,
	.wait_sends = mpi_wait_sends,
	.all_to_all = mpi_all_to_all,
	.barrier = mpi_barrier,
	.bcast = mpi_bcast,
	.release = mpi_release,
};

enum rc exec_mpi_init(int *rank, int *size)
{
	int inited = 0;

	/* a device that runs out of memory ends every rank, not its own */
	exec_device_on_abort(exec_mpi_abort);
	MPI_CHECK(MPI_Initialized(&inited));
	if (!inited)
		MPI_CHECK(MPI_Init(NULL, NULL));
	MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, rank));
	MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, size));
	world_rank = *rank;
	return RC_OK;
}

/* The group of kind `kind` of layout l (exec_group_color). */
static enum rc group_split(struct exec_group *g, struct exec_device *d,
			   const struct exec_layout *l, enum exec_group_kind kind)
{
	struct mpi_priv *p = xcalloc(1, sizeof(*p));
	int err, color, key;

	exec_group_color(l, kind, &color, &key);
	memset(g, 0, sizeof(*g));
	err = MPI_Comm_split(MPI_COMM_WORLD, color, key, &p->comm);
	if (err != MPI_SUCCESS) {
		free(p);
		mpi_report(err, "MPI_Comm_split()", __FILE__, __LINE__);
		return RC_DEVICE;
	}
	g->comm = &mpi_comm;
	g->dev = d;
	g->priv = p;
	MPI_CHECK(MPI_Comm_rank(p->comm, &g->rank));
	MPI_CHECK(MPI_Comm_size(p->comm, &g->size));
	return RC_OK;
}

enum rc exec_mpi_groups(const struct exec_layout *l, struct exec_device *d,
			struct exec_groups *g)
{
	enum rc rc;

	memset(g, 0, sizeof(*g));
	rc = group_split(&g->world, d, l, EXEC_GROUP_WORLD);
	if (rc == RC_OK)
		rc = group_split(&g->tp, d, l, EXEC_GROUP_TP);
	if (rc == RC_OK)
		rc = group_split(&g->pp, d, l, EXEC_GROUP_PP);
	if (rc == RC_OK)
		rc = group_split(&g->dp, d, l, EXEC_GROUP_DP);
	if (rc == RC_OK)
		rc = group_split(&g->cp, d, l, EXEC_GROUP_CP);
	if (rc == RC_OK)
		rc = group_split(&g->ep, d, l, EXEC_GROUP_EP);
	if (rc == RC_OK)
		rc = group_split(&g->edp, d, l, EXEC_GROUP_EDP);
	if (rc != RC_OK)
		exec_groups_release(g);
	return rc;
}

enum rc exec_mpi_world_max(double *v, int n)
{
	MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
	return RC_OK;
}

enum rc exec_mpi_gather(const void *bytes, size_t n, void **all, size_t *all_n)
{
	long long mine = (long long)n, total = 0;
	long long *counts = NULL;
	int *cnt = NULL, *displ = NULL, rank = 0, size = 1, err, fits = 1;
	char *buf = NULL;
	enum rc rc = RC_DEVICE;

	*all = NULL;
	*all_n = 0;
	MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	if (rank == 0)
		counts = xcalloc((size_t)size, sizeof(*counts));
	err = MPI_Gather(&mine, 1, MPI_LONG_LONG, counts, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
	if (err != MPI_SUCCESS) {
		mpi_report(err, "MPI_Gather()", __FILE__, __LINE__);
		goto out;
	}
	if (rank == 0) {
		cnt = xcalloc((size_t)size, sizeof(*cnt));
		displ = xcalloc((size_t)size, sizeof(*displ));
		for (int r = 0; r < size; r++) {
			/* MPI counts and displacements are ints; the callers'
			 * buffers (a trace's events) are bounded well below */
			if (total + counts[r] > INT_MAX) {
				gp_error("rank 0: gather of %lld bytes: expected at most %d",
					 total + counts[r], INT_MAX);
				fits = 0;
				break;
			}
			cnt[r] = (int)counts[r];
			displ[r] = (int)total;
			total += counts[r];
		}
		buf = xmalloc(total > 0 ? (size_t)total : 1);
	}
	/* every rank hears whether rank 0 can take it all, and all return
	 * the same status */
	err = MPI_Bcast(&fits, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (err != MPI_SUCCESS) {
		mpi_report(err, "MPI_Bcast()", __FILE__, __LINE__);
		goto out;
	}
	if (!fits)
		goto out;
	err = MPI_Gatherv(bytes, (int)n, MPI_BYTE, buf, cnt, displ, MPI_BYTE, 0, MPI_COMM_WORLD);
	if (err != MPI_SUCCESS) {
		mpi_report(err, "MPI_Gatherv()", __FILE__, __LINE__);
		goto out;
	}
	if (rank == 0) {
		*all = buf;
		*all_n = (size_t)total;
		buf = NULL;
	}
	rc = RC_OK;
out:
	free(buf);
	free(displ);
	free(cnt);
	free(counts);
	return rc;
}

void exec_mpi_finalize(void)
{
	int inited = 0, done = 0;

	MPI_Initialized(&inited);
	MPI_Finalized(&done);
	if (inited && !done)
		MPI_Finalize();
}

void exec_mpi_abort(int code)
{
	int inited = 0;

	MPI_Initialized(&inited);
	if (inited)
		MPI_Abort(MPI_COMM_WORLD, code);
	abort();
}
