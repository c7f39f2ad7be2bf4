/*
 * exec_comm_self.c - the communicator of a group of one rank: what a
 * single-process run and the unit tests use instead of MPI.  Reductions
 * over one member leave the data as it is; there is no peer to send to.
 */
#include <string.h>

#include "comm/exec_comm.h"

static enum rc self_all_reduce(struct exec_group *g, void *buf, size_t n,
			       enum exec_dtype t, enum exec_redop op)
{
	(void)g;
	(void)buf;
	(void)n;
	(void)t;
	(void)op;
	return RC_OK;
}

static enum rc self_reduce_scatter(struct exec_group *g, const void *send,
				   void *recv, size_t count, enum exec_dtype t)
{
	g->dev->be->copy(g->dev, recv, send, count * exec_dtype_size(t));
	return RC_OK;
}

/* A gather, or a sum or reduce-scatter started, over one member: buf is
 * already the result (a member of one owns the whole of it). */
static enum rc self_as_is(struct exec_group *g, void *buf, size_t count, enum exec_dtype t)
{
	(void)g;
	(void)buf;
	(void)count;
	(void)t;
	return RC_OK;
}

static enum rc self_send(struct exec_group *g, int peer, int channel, const void *buf,
			 size_t n, enum exec_dtype t, int tag)
{
	(void)g;
	(void)channel;
	(void)buf;
	(void)n;
	(void)t;
	gp_error("self communicator: send to peer %d (tag %d) in a group of one", peer, tag);
	return RC_ERR;
}

static enum rc self_recv(struct exec_group *g, int peer, int channel, void *buf,
			 size_t n, enum exec_dtype t, int tag)
{
	(void)g;
	(void)channel;
	(void)buf;
	(void)n;
	(void)t;
	gp_error("self communicator: receive from peer %d (tag %d) in a group of one",
		 peer, tag);
	return RC_ERR;
}

/* A member of one sends itself its own part. */
static enum rc self_all_to_all(struct exec_group *g, const void *send, const size_t *send_n,
			       void *recv, const size_t *recv_n, enum exec_dtype t)
{
	if (send_n[0] != recv_n[0]) {
		gp_error("self communicator: all-to-all sends %zu elements, receives %zu",
			 send_n[0], recv_n[0]);
		return RC_ERR;
	}
	g->dev->be->copy(g->dev, recv, send, send_n[0] * exec_dtype_size(t));
	return RC_OK;
}

static enum rc self_nothing(struct exec_group *g)
{
	(void)g;
	return RC_OK;
}

static enum rc self_bcast(struct exec_group *g, void *buf, size_t bytes, int root)
{
	(void)g;
	(void)buf;
	(void)bytes;
	(void)root;
	return RC_OK;
}

static void self_release(struct exec_group *g)
{
	(void)g;
}

static const struct exec_comm self_comm = {
	.name = "self",
	.all_reduce = self_all_reduce,
	.reduce_scatter = self_reduce_scatter,
	.all_gather = self_as_is,
	.all_reduce_start = self_as_is,
	.reduce_scatter_start = self_as_is,
	.wait_reduces = self_nothing,
	.send = self_send,
	.recv = self_recv,
	.wait_sends = self_nothing,
	.all_to_all = self_all_to_all,
	.barrier = self_nothing,
	.bcast = self_bcast,
	.release = self_release,
};

void exec_group_self(struct exec_group *g, struct exec_device *d)
{
	memset(g, 0, sizeof(*g));
	g->comm = &self_comm;
	g->dev = d;
	g->rank = 0;
	g->size = 1;
}

void exec_groups_self(struct exec_groups *g, struct exec_device *d)
{
	struct exec_group *all[] = { &g->world, &g->tp, &g->pp, &g->dp, &g->cp, &g->ep, &g->edp };

	for (size_t i = 0; i < GP_ARRAY_LEN(all); i++)
		exec_group_self(all[i], d);
}
