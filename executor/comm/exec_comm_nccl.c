/*
 * exec_comm_nccl.c - the NCCL communicator of the CUDA backend, and the
 * bring-up of its groups over MPI.  Built only with the CUDA backend.
 *
 * Bring-up, as llm.c does it: each group's first rank makes an id with
 * ncclGetUniqueId and broadcasts it over the group's MPI communicator
 * (from MPI_Comm_split with exec_group_color(), the same split as the MPI
 * communicator's), then every member calls ncclCommInitRank.  The device
 * is the one the CUDA backend opened (the launcher's local rank).
 *
 * Collectives run on the device's communication stream: an event orders
 * them after the compute stream's work so far, another orders the compute
 * stream's later work after them.  The host never waits.  A sum started
 * with all_reduce_start or reduce_scatter_start (the gradients' over DP)
 * runs on the reduction stream instead, ordered after compute's work so
 * far, and compute waits for it only at wait_reduces: it overlaps the rest
 * of the backward without holding up the tensor-parallel collectives
 * behind it.
 *
 * Point to point.  NCCL has no tags, and a send occupies its stream until
 * the peer receives.  So the pipeline gets one two-rank communicator per
 * direction and channel: activations (channel 0) flow from stage s to
 * s + 1 (mod p, the wrap serving interleaved schedules), gradients
 * (channel 1) from s to s - 1; on each link the schedules' messages arrive
 * in the order sent (tests/test_executor.c checks every schedule).  A send
 * copies its buffer to a staging buffer on the compute stream and goes out
 * on the link's own stream, so it blocks neither compute nor the other
 * link; receives go in list order on one receive stream that waits for the
 * compute stream's work so far (the buffer may still be read), and compute
 * waits for them: the semantics of exec_comm_mpi.c's blocking receive and
 * buffered send, under which every schedule completes (sched.h).  Links
 * are created in one order on every rank (channel, then sending stage),
 * so the blocking ncclCommInitRank calls always find their partner.
 *
 * Every NCCL, CUDA and MPI call is checked; a failure names the rank, the
 * call and the reason, marks the device failed and returns RC_DEVICE.  A
 * failure NCCL finds in the background (a peer gone, a network error)
 * leaves this rank's kernels waiting for ever: while the host waits for
 * the device it asks every communicator for one (groups_watch), and ends
 * the wait with NCCL's reason.
 */
#ifdef GPUPLAN_CUDA

#include <mpi.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "comm/exec_comm.h"
#include "device/cuda/exec_cuda.h"

enum { CHANNELS = 2 };

struct link {
	ncclComm_t comm;
	cudaStream_t stream;     /* sends only */
	int peer;                /* the other stage; -1: no link */
};

struct nccl_priv {
	MPI_Comm mpi;            /* the same members: barrier, ids */
	ncclComm_t comm;         /* NULL for a group of one */
	struct link out[CHANNELS], in[CHANNELS];  /* pipeline group only */
	cudaStream_t recv_stream;
	float *first;            /* each link's first message (links_init) */
};

static int world_rank = -1;

static enum rc nccl_fail(struct exec_device *d, ncclResult_t r, const char *call,
			 const char *file, int line)
{
	const char *paren = strchr(call, '(');

	gp_error("rank %d: %s:%d: %.*s failed: %s", world_rank, file, line,
		 paren ? (int)(paren - call) : (int)strlen(call), call, ncclGetErrorString(r));
	exec_cuda_mark_failed(d);
	return RC_DEVICE;
}

static enum rc mpi_fail(struct exec_device *d, int err, const char *call, const char *file,
			int line)
{
	char msg[MPI_MAX_ERROR_STRING];
	const char *paren = strchr(call, '(');
	int len = 0;

	if (MPI_Error_string(err, msg, &len) != MPI_SUCCESS)
		snprintf(msg, sizeof(msg), "error %d", err);
	gp_error("rank %d: %s:%d: %.*s failed: %s", world_rank, file, line,
		 paren ? (int)(paren - call) : (int)strlen(call), call, msg);
	exec_cuda_mark_failed(d);
	return RC_DEVICE;
}

#define NCCL(d, call)                                                        \
	do {                                                                 \
		ncclResult_t r_ = (call);                                    \
		if (r_ != ncclSuccess)                                       \
			return nccl_fail((d), r_, #call, __FILE__, __LINE__); \
	} while (0)
#define MPI(d, call)                                                         \
	do {                                                                 \
		int e_ = (call);                                             \
		if (e_ != MPI_SUCCESS)                                       \
			return mpi_fail((d), e_, #call, __FILE__, __LINE__); \
	} while (0)
#define CUDA(d, call)                                                        \
	do {                                                                 \
		if (EXEC_CUDA_CHECK((d), (call)) != RC_OK)                   \
			return RC_DEVICE;                                    \
	} while (0)
#define TRY(call)                                                            \
	do {                                                                 \
		enum rc rc_ = (call);                                        \
		if (rc_ != RC_OK)                                            \
			return rc_;                                          \
	} while (0)

static struct nccl_priv *priv_of(struct exec_group *g)
{
	return (struct nccl_priv *)g->priv;
}

/* ---- collectives ----------------------------------------------------- */

/* Runs the collective `call` on the communication stream `cs`, after the
 * compute stream's work so far and before its work from now on. */
#define ON_COMM_STREAM(g, cs, call)                                          \
	do {                                                                 \
		struct exec_device *d_ = (g)->dev;                           \
		cudaStream_t cs = exec_cuda_comm_stream(d_);                 \
		TRY(exec_cuda_order(d_, exec_cuda_stream(d_), cs));          \
		NCCL(d_, call);                                              \
		TRY(exec_cuda_order(d_, cs, exec_cuda_stream(d_)));          \
	} while (0)

/* Starts the collective `call` on the reduction stream `rs`, after the
 * compute stream's work so far; compute waits for it at wait_reduces. */
#define ON_REDUCE_STREAM(g, rs, call)                                        \
	do {                                                                 \
		struct exec_device *d_ = (g)->dev;                           \
		cudaStream_t rs = exec_cuda_reduce_stream(d_);               \
		TRY(exec_cuda_order(d_, exec_cuda_stream(d_), rs));          \
		NCCL(d_, call);                                              \
	} while (0)

/* NCCL's type for t (bf16 since NCCL 2.10). */
static ncclDataType_t nccl_type(enum exec_dtype t)
{
	return t == EXEC_F64 ? ncclFloat64 : t == EXEC_BF16 ? ncclBfloat16
		: t == EXEC_I32 ? ncclInt32 : ncclFloat32;
}

/* This member's part of buf, parts of count elements of type t in member
 * order: where an in-place all-gather takes it from and an in-place
 * reduce-scatter leaves it (NCCL's rule: sendbuff = recvbuff + rank *
 * sendcount for ncclAllGather, recvbuff = sendbuff + rank * recvcount for
 * ncclReduceScatter). */
static void *rank_part(const struct exec_group *g, void *buf, size_t count, enum exec_dtype t)
{
	return (char *)buf + (size_t)g->rank * count * exec_dtype_size(t);
}

static enum rc nccl_all_reduce(struct exec_group *g, void *buf, size_t n, enum exec_dtype t,
			       enum exec_redop op)
{
	struct nccl_priv *p = priv_of(g);

	if (!p->comm || n == 0)
		return RC_OK;
	ON_COMM_STREAM(g, cs, ncclAllReduce(buf, buf, n, nccl_type(t),
					    op == EXEC_MAX ? ncclMax : ncclSum, p->comm, cs));
	return RC_OK;
}

static enum rc nccl_reduce_scatter(struct exec_group *g, const void *send, void *recv,
				   size_t count, enum exec_dtype t)
{
	struct nccl_priv *p = priv_of(g);

	if (!p->comm) {
		g->dev->be->copy(g->dev, recv, send, count * exec_dtype_size(t));
		return RC_OK;
	}
	ON_COMM_STREAM(g, cs, ncclReduceScatter(send, recv, count, nccl_type(t), ncclSum,
						p->comm, cs));
	return RC_OK;
}

static enum rc nccl_all_gather(struct exec_group *g, void *buf, size_t count,
			       enum exec_dtype t)
{
	struct nccl_priv *p = priv_of(g);

	if (!p->comm)
		return RC_OK;
	ON_COMM_STREAM(g, cs, ncclAllGather(rank_part(g, buf, count, t), buf, count,
					    nccl_type(t), p->comm, cs));
	return RC_OK;
}

static enum rc nccl_all_reduce_start(struct exec_group *g, void *buf, size_t n,
				     enum exec_dtype t)
{
	struct nccl_priv *p = priv_of(g);

	if (!p->comm || n == 0)
		return RC_OK;
	ON_REDUCE_STREAM(g, rs, ncclAllReduce(buf, buf, n, nccl_type(t), ncclSum, p->comm, rs));
	return RC_OK;
}

static enum rc nccl_reduce_scatter_start(struct exec_group *g, void *buf, size_t count,
					 enum exec_dtype t)
{
	struct nccl_priv *p = priv_of(g);

	if (!p->comm || count == 0)
		return RC_OK;
	ON_REDUCE_STREAM(g, rs, ncclReduceScatter(buf, rank_part(g, buf, count, t), count,
						  nccl_type(t), ncclSum, p->comm, rs));
	return RC_OK;
}

static enum rc nccl_wait_reduces(struct exec_group *g)
{
	struct exec_device *d = g->dev;

	if (!priv_of(g)->comm)
		return RC_OK;
	return exec_cuda_order(d, exec_cuda_reduce_stream(d), exec_cuda_stream(d));
}

/* NCCL has no all-to-all: one ncclSend and one ncclRecv per member inside
 * ncclGroupStart/End, which NCCL runs as one operation without deadlock
 * (NCCL user guide, "Point-to-point communication", its all-to-all
 * example), on the communication stream like the collectives.  Empty
 * parts are left out on both ends alike (the counts agree). */
static enum rc nccl_all_to_all(struct exec_group *g, const void *send, const size_t *send_n,
			       void *recv, const size_t *recv_n, enum exec_dtype t)
{
	struct nccl_priv *p = priv_of(g);
	struct exec_device *d = g->dev;
	size_t es = exec_dtype_size(t), so = 0, ro = 0;
	cudaStream_t cs = exec_cuda_comm_stream(d);

	if (!p->comm) {
		d->be->copy(d, recv, send, send_n[0] * es);
		return RC_OK;
	}
	TRY(exec_cuda_order(d, exec_cuda_stream(d), cs));
	NCCL(d, ncclGroupStart());
	for (int i = 0; i < g->size; i++) {
		if (send_n[i])
			NCCL(d, ncclSend((const char *)send + so * es, send_n[i], nccl_type(t), i,
					 p->comm, cs));
		if (recv_n[i])
			NCCL(d, ncclRecv((char *)recv + ro * es, recv_n[i], nccl_type(t), i, p->comm,
					 cs));
		so += send_n[i];
		ro += recv_n[i];
	}
	NCCL(d, ncclGroupEnd());
	TRY(exec_cuda_order(d, cs, exec_cuda_stream(d)));
	return RC_OK;
}

static enum rc nccl_bcast(struct exec_group *g, void *buf, size_t bytes, int root)
{
	struct nccl_priv *p = priv_of(g);

	if (!p->comm)
		return RC_OK;
	ON_COMM_STREAM(g, cs, ncclBroadcast(buf, buf, bytes, ncclInt8, root, p->comm, cs));
	return RC_OK;
}

/* A failure NCCL noticed in the background (a peer's network error).
 * Safe while the communicator's work runs (NCCL user guide,
 * "Asynchronous errors and error handling"). */
static enum rc async_error(struct exec_group *g, ncclComm_t c)
{
	ncclResult_t r = ncclSuccess;

	if (!c)
		return RC_OK;
	NCCL(g->dev, ncclCommGetAsyncError(c, &r));
	if (r != ncclSuccess && r != ncclInProgress)
		return nccl_fail(g->dev, r, "ncclCommGetAsyncError()", __FILE__, __LINE__);
	return RC_OK;
}

/* The device's watch while the host waits for it (exec_cuda_set_watch):
 * any communicator's asynchronous error, so that a peer's failure ends
 * this rank's wait with NCCL's reason instead of the step watchdog's. */
static enum rc groups_watch(void *ctx)
{
	struct exec_groups *gs = ctx;
	struct exec_group *all[] = { &gs->world, &gs->tp, &gs->pp, &gs->dp, &gs->cp, &gs->ep,
				     &gs->edp };

	for (size_t i = 0; i < GP_ARRAY_LEN(all); i++) {
		struct nccl_priv *p = priv_of(all[i]);

		if (!p)
			continue;
		TRY(async_error(all[i], p->comm));
		for (int c = 0; c < CHANNELS; c++) {
			TRY(async_error(all[i], p->out[c].comm));
			TRY(async_error(all[i], p->in[c].comm));
		}
	}
	return RC_OK;
}

static enum rc nccl_barrier(struct exec_group *g)
{
	struct nccl_priv *p = priv_of(g);

	TRY(exec_device_sync(g->dev));
	TRY(async_error(g, p->comm));
	MPI(g->dev, MPI_Barrier(p->mpi));
	return RC_OK;
}

/* ---- point to point -------------------------------------------------- */

static enum rc link_check(struct exec_group *g, const struct link *l, int peer, int channel,
			  const char *what)
{
	if (channel < 0 || channel >= CHANNELS || l->peer < 0 || l->peer != peer) {
		gp_error("rank %d: pipeline %s on channel %d with stage %d: no such link "
			 "(activations go to the next stage, gradients to the previous)",
			 world_rank, what, channel, peer);
		exec_cuda_mark_failed(g->dev);
		return RC_DEVICE;
	}
	return RC_OK;
}

static enum rc nccl_send(struct exec_group *g, int peer, int channel, const void *buf,
			 size_t n, enum exec_dtype t, int tag)
{
	struct nccl_priv *p = priv_of(g);
	struct exec_device *d = g->dev;
	struct link *l = channel >= 0 && channel < CHANNELS ? &p->out[channel] : NULL;
	cudaStream_t cs = exec_cuda_stream(d);
	void *stage = NULL;
	size_t bytes = n * exec_dtype_size(t);

	(void)tag;
	TRY(link_check(g, l ? l : &p->out[0], peer, l ? channel : -1, "send"));
	CUDA(d, cudaMallocAsync(&stage, bytes ? bytes : 1, cs));
	CUDA(d, cudaMemcpyAsync(stage, buf, bytes, cudaMemcpyDeviceToDevice, cs));
	TRY(exec_cuda_order(d, cs, l->stream));
	/* rank 1 of a link is its receiver */
	NCCL(d, ncclSend(stage, n, nccl_type(t), 1, l->comm, l->stream));
	CUDA(d, cudaFreeAsync(stage, l->stream));
	return RC_OK;
}

static enum rc nccl_recv(struct exec_group *g, int peer, int channel, void *buf, size_t n,
			 enum exec_dtype t, int tag)
{
	struct nccl_priv *p = priv_of(g);
	struct exec_device *d = g->dev;
	struct link *l = channel >= 0 && channel < CHANNELS ? &p->in[channel] : NULL;
	cudaStream_t cs = exec_cuda_stream(d);

	(void)tag;
	TRY(link_check(g, l ? l : &p->in[0], peer, l ? channel : -1, "receive"));
	TRY(exec_cuda_order(d, cs, p->recv_stream));
	/* rank 0 of a link is its sender */
	NCCL(d, ncclRecv(buf, n, nccl_type(t), 0, l->comm, p->recv_stream));
	TRY(exec_cuda_order(d, p->recv_stream, cs));
	return RC_OK;
}

/* The compute stream waits for every send queued so far; the host does
 * not (exec_run's sync after the step does). */
static enum rc nccl_wait_sends(struct exec_group *g)
{
	struct nccl_priv *p = priv_of(g);

	for (int c = 0; c < CHANNELS; c++)
		if (p->out[c].comm)
			TRY(exec_cuda_order(g->dev, p->out[c].stream, exec_cuda_stream(g->dev)));
	return RC_OK;
}

/* ---- lifetime -------------------------------------------------------- */

static void link_release(struct link *l, int failed)
{
	if (l->comm) {
		if (failed)
			ncclCommAbort(l->comm);
		else
			ncclCommDestroy(l->comm);
	}
	if (l->stream)
		cudaStreamDestroy(l->stream);
	memset(l, 0, sizeof(*l));
	l->peer = -1;
}

static void nccl_release(struct exec_group *g)
{
	struct nccl_priv *p = priv_of(g);
	int failed;

	if (!p)
		return;
	exec_cuda_set_watch(g->dev, NULL, NULL);
	/* a healthy device finishes its queued work first; a failed one may
	 * never, and aborting is NCCL's way out */
	failed = exec_device_sync(g->dev) != RC_OK;
	for (int c = 0; c < CHANNELS; c++) {
		link_release(&p->out[c], failed);
		link_release(&p->in[c], failed);
	}
	if (p->comm) {
		if (failed)
			ncclCommAbort(p->comm);
		else
			ncclCommDestroy(p->comm);
	}
	if (p->recv_stream)
		cudaStreamDestroy(p->recv_stream);
	if (p->first)
		cudaFree(p->first);
	if (p->mpi != MPI_COMM_NULL)
		MPI_Comm_free(&p->mpi);
	free(p);
	g->priv = NULL;
}

static const struct exec_comm nccl_comm = {
	.name = "nccl",
	.all_reduce = nccl_all_reduce,
	.reduce_scatter = nccl_reduce_scatter,
	.all_gather = nccl_all_gather,
	.all_reduce_start = nccl_all_reduce_start,
	.reduce_scatter_start = nccl_reduce_scatter_start,
	.wait_reduces = nccl_wait_reduces,
	.send = nccl_send,
	.recv = nccl_recv,
	.wait_sends = nccl_wait_sends,
	.all_to_all = nccl_all_to_all,
	.barrier = nccl_barrier,
	.bcast = nccl_bcast,
	.release = nccl_release,
};

/* One communicator over the members of p->mpi: the first makes the id. */
static enum rc comm_init(struct exec_group *g, struct nccl_priv *p)
{
	ncclUniqueId id;

	if (g->size < 2)
		return RC_OK;
	if (g->rank == 0)
		NCCL(g->dev, ncclGetUniqueId(&id));
	MPI(g->dev, MPI_Bcast(&id, (int)sizeof(id), MPI_BYTE, 0, p->mpi));
	NCCL(g->dev, ncclCommInitRank(&p->comm, g->size, id, g->rank));
	return RC_OK;
}

/* The pipeline's links.  Link (c, s) carries channel c from stage s to
 * stage s + 1 (c = 0) or s - 1 (c = 1), mod p; every stage walks them
 * in that order, so each blocking id exchange and ncclCommInitRank meets
 * its partner (the earliest link not yet made always has both ranks
 * waiting on it).  NCCL connects a pair at its first send and receive,
 * which wait for each other on the host: so each link's first message
 * goes here, while both ends are at it, and not in a schedule that
 * counts on sends being buffered. */
static enum rc links_init(struct exec_group *g, struct nccl_priv *p)
{
	int np = g->size, me = g->rank;

	for (int c = 0; c < CHANNELS; c++) {
		p->out[c].peer = -1;
		p->in[c].peer = -1;
	}
	if (np < 2)
		return RC_OK;
	CUDA(g->dev, cudaStreamCreateWithFlags(&p->recv_stream, cudaStreamNonBlocking));
	CUDA(g->dev, cudaMalloc((void **)&p->first, sizeof(float)));
	CUDA(g->dev, cudaMemset(p->first, 0, sizeof(float)));
	for (int c = 0; c < CHANNELS; c++)
		for (int s = 0; s < np; s++) {
			int to = c == 0 ? (s + 1) % np : (s + np - 1) % np;
			struct link *l = s == me ? &p->out[c] : to == me ? &p->in[c] : NULL;
			ncclUniqueId id;

			if (!l)
				continue;
			if (s == me) {
				NCCL(g->dev, ncclGetUniqueId(&id));
				MPI(g->dev, MPI_Send(&id, (int)sizeof(id), MPI_BYTE, to, c * np + s,
						     p->mpi));
				CUDA(g->dev, cudaStreamCreateWithFlags(&l->stream,
								       cudaStreamNonBlocking));
				l->peer = to;
			} else {
				MPI(g->dev, MPI_Recv(&id, (int)sizeof(id), MPI_BYTE, s, c * np + s,
						     p->mpi, MPI_STATUS_IGNORE));
				l->peer = s;
			}
			NCCL(g->dev, ncclCommInitRank(&l->comm, 2, id, s == me ? 0 : 1));
			if (s == me) {
				NCCL(g->dev, ncclSend(p->first, 1, ncclFloat, 1, l->comm, l->stream));
				CUDA(g->dev, cudaStreamSynchronize(l->stream));
			} else {
				NCCL(g->dev, ncclRecv(p->first, 1, ncclFloat, 0, l->comm,
						      p->recv_stream));
				CUDA(g->dev, cudaStreamSynchronize(p->recv_stream));
			}
		}
	return RC_OK;
}

static enum rc group_init(struct exec_group *g, struct exec_device *d,
			  const struct exec_layout *l, enum exec_group_kind kind)
{
	struct nccl_priv *p = xcalloc(1, sizeof(*p));
	int color, key;

	memset(g, 0, sizeof(*g));
	g->comm = &nccl_comm;
	g->dev = d;
	g->priv = p;
	p->mpi = MPI_COMM_NULL;
	for (int c = 0; c < CHANNELS; c++)
		p->out[c].peer = p->in[c].peer = -1;
	exec_group_color(l, kind, &color, &key);
	MPI(d, MPI_Comm_split(MPI_COMM_WORLD, color, key, &p->mpi));
	MPI(d, MPI_Comm_rank(p->mpi, &g->rank));
	MPI(d, MPI_Comm_size(p->mpi, &g->size));
	TRY(comm_init(g, p));
	if (kind == EXEC_GROUP_PP)
		TRY(links_init(g, p));
	return RC_OK;
}

enum rc exec_nccl_groups(const struct exec_layout *l, struct exec_device *d,
			 struct exec_groups *g)
{
	enum rc rc;

	world_rank = l->rank;
	memset(g, 0, sizeof(*g));
	rc = group_init(&g->world, d, l, EXEC_GROUP_WORLD);
	if (rc == RC_OK)
		rc = group_init(&g->tp, d, l, EXEC_GROUP_TP);
	if (rc == RC_OK)
		rc = group_init(&g->pp, d, l, EXEC_GROUP_PP);
	if (rc == RC_OK)
		rc = group_init(&g->dp, d, l, EXEC_GROUP_DP);
	if (rc == RC_OK)
		rc = group_init(&g->cp, d, l, EXEC_GROUP_CP);
	if (rc == RC_OK)
		rc = group_init(&g->ep, d, l, EXEC_GROUP_EP);
	if (rc == RC_OK)
		rc = group_init(&g->edp, d, l, EXEC_GROUP_EDP);
	if (rc == RC_OK)
		exec_cuda_set_watch(d, groups_watch, g);
	if (rc != RC_OK)
		exec_groups_release(g);
	return rc;
}

#endif
