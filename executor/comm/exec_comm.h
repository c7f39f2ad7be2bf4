/*
 * exec_comm.h - the executor's communication layer (executor/comm/): the
 * rank layout's groups, the communicator's table, MPI's and NCCL's
 * bring-up, and a job (MPI, a device per rank, the groups).
 *
 * A communicator (struct exec_comm) moves data between the ranks of a
 * group.  Like nccl-tests' struct testColl, it is a table of function
 * pointers filled by one file (exec_comm_mpi.c, exec_comm_nccl.c,
 * exec_comm_self.c).  Every buffer a collective takes is backend memory
 * of the group's device (exec_device.h).
 *
 * Layers (tests/layers/test_layers.sh): common < pricing < simulator < planner <
 * executor (device < comm < train < run) < cli; a file includes and calls
 * only its own layer and those before it.  The communication layer
 * reads the device layer; no MPI or NCCL type crosses this header.
 */
#ifndef GPUPLAN_EXEC_COMM_H
#define GPUPLAN_EXEC_COMM_H

#include <stddef.h>

#include "device/exec_device.h"

/* ---- communicator ---------------------------------------------------- */

enum exec_redop { EXEC_SUM, EXEC_MAX };

struct exec_group;

/* All buffers are backend memory of the group's device, of n or count
 * elements of type t.  Collectives are called by every member in the same
 * order.  Returns RC_OK, or RC_DEVICE after one message naming the rank,
 * the call and the library's reason (a type the library cannot carry
 * included). */
struct exec_comm {
	const char *name;
	enum rc (*all_reduce)(struct exec_group *g, void *buf, size_t n,
			      enum exec_dtype t, enum exec_redop op);
	/* recv[count] = sum over members of send[rank * count ...] */
	enum rc (*reduce_scatter)(struct exec_group *g, const void *send,
				  void *recv, size_t count, enum exec_dtype t);
	/* In place: member r's part is already at element r * count. */
	enum rc (*all_gather)(struct exec_group *g, void *buf, size_t count,
			      enum exec_dtype t);
	/* Starts a sum over the members of buf[n] and returns: the sum may
	 * run on, beside the caller's later work, until wait_reduces; buf
	 * must not be touched before then.  Every member starts the same
	 * sums in the same order.  (MPI_Iallreduce; NCCL on the device's
	 * reduction stream, EXEC_STREAM_REDUCE.) */
	enum rc (*all_reduce_start)(struct exec_group *g, void *buf, size_t n,
				    enum exec_dtype t);
	/* Starts, as all_reduce_start does, a reduce-scatter in place of
	 * buf[size * count]: from wait_reduces on, member r's part, elements
	 * [r count, (r + 1) count), holds the sum over the members of that
	 * part, and the rest of buf is undefined (NCCL's in-place rule,
	 * recvbuff = sendbuff + rank * count, on the reduction stream;
	 * MPI_Ireduce_scatter_block). */
	enum rc (*reduce_scatter_start)(struct exec_group *g, void *buf, size_t count,
					enum exec_dtype t);
	/* Completes every sum started on g: from here on (on a device, for
	 * the work queued from here on) their buffers hold the sums. */
	enum rc (*wait_reduces)(struct exec_group *g);
	/* Does not block; buf may be reused as soon as it returns.  The
	 * messages of one channel from one rank to another arrive in the
	 * order they were sent (MPI matches them by tag anyway; NCCL, which
	 * has no tags, keeps one link per direction and channel).  The
	 * pipeline sends activations on channel 0, gradients on channel 1. */
	enum rc (*send)(struct exec_group *g, int peer, int channel,
			const void *buf, size_t n, enum exec_dtype t, int tag);
	enum rc (*recv)(struct exec_group *g, int peer, int channel, void *buf,
			size_t n, enum exec_dtype t, int tag);
	/* Completes every outstanding send. */
	enum rc (*wait_sends)(struct exec_group *g);
	/* All-to-all with counts (MPI_Alltoallv; NCCL's grouped ncclSend and
	 * ncclRecv): send holds, in member order and packed, send_n[i]
	 * elements for member i; recv receives, likewise, recv_n[i] from
	 * member i.  The counts are host arrays of g->size, and member j's
	 * send_n[i] is member i's recv_n[j].  Blocks like the collectives. */
	enum rc (*all_to_all)(struct exec_group *g, const void *send, const size_t *send_n,
			      void *recv, const size_t *recv_n, enum exec_dtype t);
	enum rc (*barrier)(struct exec_group *g);
	enum rc (*bcast)(struct exec_group *g, void *buf, size_t bytes, int root);
	void (*release)(struct exec_group *g);
};

struct exec_group {
	const struct exec_comm *comm;
	struct exec_device *dev;   /* whose memory the buffers are */
	int rank, size;
	void *priv;
};

/* A group of one on device d: collectives copy or do nothing, send and
 * recv fail (a single rank has no peer). */
void exec_group_self(struct exec_group *g, struct exec_device *d);
/* Releases g's communicator; accepts a zeroed g. */
void exec_group_release(struct exec_group *g);

/* The groups a rank works in: tp (same dp, pp, cp), pp (same dp, cp, tp;
 * member index = pipeline stage), dp (same pp, tp: the dp x cp ranks that
 * hold the same weights, member index dp_rank * cp + cp_rank; gradients
 * are reduced and ZeRO shards over it, as Megatron-Core's data-parallel
 * group "with context parallel"), cp (same dp, pp, tp; member index =
 * cp_rank), the experts' ep (same pp and edp_rank: the ranks sharing a
 * layer's routed experts, member index ep_rank; tokens travel over it)
 * and edp (same pp and ep_rank: the ranks holding the same experts,
 * member index edp_rank; the experts' gradients are reduced and ZeRO
 * shards over it, Megatron-Core's expert-data-parallel group), and the
 * world.  Exec_layout's comment says where the experts' ranks sit. */
struct exec_groups {
	struct exec_group world, tp, pp, dp, cp, ep, edp;
};
/* Releases the seven groups of g (exec_group.c), world last; accepts
 * zeroed ones. */
void exec_groups_release(struct exec_groups *g);
/* Makes every group of g a group of one on device d (a single rank). */
void exec_groups_self(struct exec_groups *g, struct exec_device *d);

enum exec_group_kind { EXEC_GROUP_WORLD, EXEC_GROUP_TP, EXEC_GROUP_PP, EXEC_GROUP_DP,
		       EXEC_GROUP_CP, EXEC_GROUP_EP, EXEC_GROUP_EDP };

/* The group of kind `kind` rank l->rank belongs to, as MPI_Comm_split
 * wants it: ranks with the same *color form the group, ordered by *key
 * (the rank's index in it).  Every communicator (MPI, NCCL) builds its
 * groups from this one function (exec_layout.c). */
void exec_group_color(const struct exec_layout *l, enum exec_group_kind kind,
		      int *color, int *key);
/* The world ranks of l->rank's group of kind `kind`, in member order,
 * into members[] (room for l->world); returns how many. */
int exec_group_members(const struct exec_layout *l, enum exec_group_kind kind,
		       int *members);

/* ---- MPI bring-up (exec_comm_mpi.c); no MPI type crosses this line -- */

/* MPI_Init (once per process) with errors returned, not fatal; sets *rank
 * and *size of the world.  Returns RC_OK or RC_DEVICE (message printed). */
enum rc exec_mpi_init(int *rank, int *size);
/* Builds g's seven groups (struct exec_groups) for layout l over
 * MPI_COMM_WORLD on device d.  Collective over the world. */
enum rc exec_mpi_groups(const struct exec_layout *l, struct exec_device *d,
			struct exec_groups *g);
/* Element-wise maximum of v[0..n) over the world, on host memory (the
 * ranks' agreement on a status before any device group exists).  Returns
 * RC_OK or RC_DEVICE (message printed). */
enum rc exec_mpi_world_max(double *v, int n);
/* Gathers every rank's bytes[0..n) of host memory to world rank 0 in
 * rank order: there *all (xmalloc'd, caller frees) and *all_n (the sum);
 * elsewhere *all is NULL.  Collective over the world.  Returns RC_OK or
 * RC_DEVICE (message printed). */
enum rc exec_mpi_gather(const void *bytes, size_t n, void **all, size_t *all_n);
/* MPI_Finalize; a no-op when MPI was never initialised. */
void exec_mpi_finalize(void);

/* ---- NCCL bring-up (exec_comm_nccl.c, built with the CUDA backend) ---- */

/* Builds g's seven groups for layout l with NCCL on CUDA device d (open):
 * one unique id per group, made by the group's first rank and broadcast
 * over MPI, and for the pipeline one two-rank link per direction and
 * channel.  Collective over the world; MPI must be initialised.  Returns
 * RC_OK or RC_DEVICE (message printed). */
enum rc exec_nccl_groups(const struct exec_layout *l, struct exec_device *d,
			 struct exec_groups *g);

/* Ends every rank of the job now (MPI_Abort) with exit code `code`. */
void exec_mpi_abort(int code);

/* ---- a job: MPI, one device per rank, the groups (exec_job.c) ------- */

struct exec_job {
	int mpi, rank, world;
	struct exec_layout l;
	struct exec_device dev;
	struct exec_groups g;
};

/* Joins the job (MPI under a launcher, alone otherwise), checks that
 * backend can run here, opens this rank's device with precision and
 * builds the groups of layout par (NULL: every rank data-parallel).  Every
 * rank returns the same status; the lowest failing rank alone prints one
 * line starting "what: ".  Close with exec_job_close() after RC_OK only. */
enum rc exec_job_open(struct exec_job *j, const char *what, const char *backend,
		      enum exec_precision precision, const struct sim_parallel *par);
void exec_job_close(struct exec_job *j);
/* Every rank's verdict on one question, agreed over MPI on the host:
 * RC_OK when no rank failed; otherwise the lowest failing rank prints
 * "what: why" (nothing when why is empty: it has printed already) and
 * every rank returns RC_DEVICE if any rank found a device failure, else
 * RC_INPUT. */
enum rc exec_job_agree(const struct exec_job *j, enum rc mine, const char *what,
		       const char *why);
/* The same with the statuses given: every rank returns `first` if any
 * rank's own status was `first`, else `other`; the lowest failing rank
 * prints "what: why", or why alone when what is NULL. */
enum rc exec_job_agree_as(const struct exec_job *j, enum rc mine, enum rc first,
			  enum rc other, const char *what, const char *why);
/* Sums host values v[0..n) over the world through device memory; RC_OK or
 * RC_DEVICE. */
enum rc exec_job_world_sum(struct exec_job *j, double *v, int n);

#endif
