/*
 * exec_internal.h - the executor's two plug-in tables and its trainer,
 * shared by the executor's files and its tests.
 *
 * A backend (struct exec_backend) owns memory and runs kernels; a
 * communicator (struct exec_comm) moves data between ranks of a group.
 * Like nccl-tests' struct testColl, each is a table of function pointers
 * filled by one file (exec_cpu.c, exec_cuda.cu; exec_comm_mpi.c,
 * exec_comm_nccl.c, exec_comm_self.c).  Every pointer a kernel or a
 * collective takes is backend memory (host memory on the CPU, device
 * memory on a GPU); the model code never dereferences it, it only passes
 * it on.  A backend may queue work and return before it is done (the CUDA
 * one does): exec_device_sync() waits, and reports a failure.
 *
 * Element types.  A device stores activations in its activation type
 * (struct exec_device.act): fp32 on the CPU, bf16 on the CUDA backend at
 * EXEC_PRECISION_BF16 (exec_act_dtype).  A kernel's `void *` tensors are
 * of that type: activations, their gradients, the logits, and the weights
 * given to forward and backward (the trainer's working copy of its fp32
 * master weights).  Its `float *` tensors are fp32 on every device:
 * parameter gradients, master weights and AdamW's moments, norm
 * statistics, the attention log-sum-exp and the loss's row statistics.
 */
#ifndef GPUPLAN_EXEC_INTERNAL_H
#define GPUPLAN_EXEC_INTERNAL_H

#include <stddef.h>

#include "exec.h"

/* ---- element types ---------------------------------------------------- */

/* What a buffer's elements are: a collective's data, a device's
 * activations. */
enum exec_dtype { EXEC_F32, EXEC_F64, EXEC_BF16 };

/* Bytes of one element of t. */
size_t exec_dtype_size(enum exec_dtype t);
/* The activation type of backend `name` at precision p: EXEC_BF16 for
 * the CUDA backend at EXEC_PRECISION_BF16, EXEC_F32 otherwise (the CPU
 * backend is fp32 throughout).  exec_act_bytes() is its size. */
enum exec_dtype exec_act_dtype(const char *name, enum exec_precision p);

/* ---- compute backend ------------------------------------------------- */

struct exec_device;

/* Shapes: n rows (tokens), ic input and oc output features.  Weights are
 * [oc, ic] row-major, y = x W^T + b, as in llm.c.  Backward kernels
 * ACCUMULATE (+=) into every gradient they are given, input gradients
 * included; the caller zeroes what must start at zero. */
struct exec_backend {
	const char *name;
	/* Acquires the device (a GPU: picks it from the launcher's local
	 * rank, creates streams and handles) and fills d->name and
	 * d->memory_bytes.  Returns RC_OK, or RC_DEVICE after one message.
	 * NULL: nothing to acquire. */
	enum rc (*open)(struct exec_device *d);
	/* Waits for every kernel queued so far.  Returns RC_OK, or RC_DEVICE
	 * when the device has failed since open (the first failure was
	 * logged with rank, file and line when it happened).  NULL: the
	 * backend runs synchronously and never fails. */
	enum rc (*sync)(struct exec_device *d);
	/* Free and total bytes of the device's memory now (a GPU:
	 * cudaMemGetInfo; the CPU: available and installed RAM). */
	enum rc (*mem_info)(struct exec_device *d, double *free_bytes, double *total_bytes);
	/* Frees what the backend keeps in d->priv (scratch, handles). */
	void (*release)(struct exec_device *d);
	/* Zero-filled allocation of bytes; NULL when out of memory. */
	void *(*alloc)(struct exec_device *d, size_t bytes);
	void (*free)(struct exec_device *d, void *p, size_t bytes);
	void (*zero)(struct exec_device *d, void *p, size_t bytes);
	void (*copy)(struct exec_device *d, void *dst, const void *src, size_t bytes);
	void (*to_host)(struct exec_device *d, void *host, const void *src, size_t bytes);
	void (*from_host)(struct exec_device *d, void *dst, const void *host, size_t bytes);

	/* out[n, oc] = inp[n, ic] w[oc, ic]^T (+ bias when not NULL) */
	void (*matmul_forward)(struct exec_device *d, void *out, const void *inp,
			       const void *w, const void *bias, int n, int ic, int oc);
	/* dinp += dout w; dw += dout^T inp; dbias += column sums of dout
	 * (dinp, dbias may be NULL) */
	void (*matmul_backward)(struct exec_device *d, void *dinp, float *dw,
				float *dbias, const void *dout, const void *inp,
				const void *w, int n, int ic, int oc);
	/* out[n, c] += bias[c] */
	void (*add_bias)(struct exec_device *d, void *out, const void *bias, int n, int c);
	/* LayerNorm (Ba et al. 2016); b may be NULL.  mean, rstd: [n]. */
	void (*layernorm_forward)(struct exec_device *d, void *out, float *mean,
				  float *rstd, const void *inp, const void *w,
				  const void *b, int n, int c);
	void (*layernorm_backward)(struct exec_device *d, void *dinp, float *dw,
				   float *db, const void *dout, const void *inp,
				   const void *w, const float *mean,
				   const float *rstd, int n, int c);
	/* RMSNorm (Zhang and Sennrich 2019) */
	void (*rmsnorm_forward)(struct exec_device *d, void *out, float *rstd,
				const void *inp, const void *w, int n, int c);
	void (*rmsnorm_backward)(struct exec_device *d, void *dinp, float *dw,
				 const void *dout, const void *inp,
				 const void *w, const float *rstd, int n, int c);
	/* Causal attention of b sequences, t queries each against tk keys,
	 * nh query heads sharing nkv key/value heads of size hd (GQA; nh %
	 * nkv == 0).  Query i of a sequence sits at position q0 + i among its
	 * keys and attends keys 0 .. q0 + i (q0 + t <= tk): tk = t, q0 = 0 is
	 * the whole sequence; a context-parallel rank passes its slice's
	 * queries, the gathered keys and the slice's first position.  q, out:
	 * [b t, nh hd]; k, v (and dk, dv): [b tk, nkv hd]; lse: [b, nh, t]
	 * log-sum-exp of each row's scores; att: [b, nh, t, tk]
	 * probabilities, or NULL to keep only lse and recompute them in
	 * backward. */
	void (*attention_forward)(struct exec_device *d, void *out, float *lse,
				  void *att, const void *q, const void *k,
				  const void *v, int b, int t, int tk, int q0, int nh,
				  int nkv, int hd);
	void (*attention_backward)(struct exec_device *d, void *dq, void *dk,
				   void *dv, const void *dout, const void *q,
				   const void *k, const void *v, const float *lse,
				   const void *att, int b, int t, int tk, int q0, int nh,
				   int nkv, int hd);
	/* GELU, tanh form (Hendrycks and Gimpel 2016): out = gelu(inp) */
	void (*gelu_forward)(struct exec_device *d, void *out, const void *inp, long n);
	void (*gelu_backward)(struct exec_device *d, void *dinp, const void *inp,
			      const void *dout, long n);
	/* SwiGLU (Shazeer 2020): out = silu(g) * u */
	void (*swiglu_forward)(struct exec_device *d, void *out, const void *g,
			       const void *u, long n);
	void (*swiglu_backward)(struct exec_device *d, void *dg, void *du,
				const void *g, const void *u, const void *dout, long n);
	/* out = a + b (out may alias a) */
	void (*residual_forward)(struct exec_device *d, void *out, const void *a,
				 const void *b, long n);
	/* acc += x, x of type t: EXEC_F32 or the device's activation type */
	void (*accumulate)(struct exec_device *d, float *acc, const void *x,
			   enum exec_dtype t, long n);
	/* dst = src rounded to the activation type (to nearest, ties to
	 * even; a copy where that is fp32): the working copy of weights */
	void (*narrow)(struct exec_device *d, void *dst, const float *src, long n);
	/* Vocabulary-parallel embedding (Shoeybi et al. 2019, sec. 3):
	 * out[i] = wte[tok[i] - v0] when v0 <= tok[i] < v0 + nv, else 0 (the
	 * TP all-reduce then sums the ranks' rows); backward adds dout's rows
	 * into the rows of dwte this rank holds. */
	void (*embedding_forward)(struct exec_device *d, void *out, const int *tok,
				  const void *wte, int n, int c, int v0, int nv);
	void (*embedding_backward)(struct exec_device *d, float *dwte, const void *dout,
				   const int *tok, int n, int c, int v0, int nv);
	/* Vocabulary-parallel softmax cross-entropy over logits [n, nv] holding
	 * vocabulary rows v0 .. v0+nv-1 (Megatron-LM's
	 * vocab_parallel_cross_entropy).  Three passes around two reductions:
	 * row maxima -> (max over ranks) -> stats[2n] = (sum exp(l - max),
	 * target logit or 0) -> (sum over ranks) -> losses. */
	void (*ce_row_max)(struct exec_device *d, float *rmax, const void *logits,
			   int n, int nv);
	void (*ce_row_stats)(struct exec_device *d, float *stats, const void *logits,
			     const float *rmax, const int *target, int n, int nv, int v0);
	/* Sum over rows of log(sum) + max - target logit, returned to the host. */
	double (*ce_loss_sum)(struct exec_device *d, const float *rmax,
			      const float *stats, int n);
	/* logits := (softmax - onehot) * scale, in place */
	void (*ce_backward)(struct exec_device *d, void *logits, const float *rmax,
			    const float *stats, const int *target, int n, int nv,
			    int v0, float scale);
	/* Adds the sum of squares of x to *acc, one double of backend memory
	 * (the host reads it when it needs it: no wait here). */
	void (*sumsq)(struct exec_device *d, double *acc, const float *x, long n);
	/* AdamW on n elements, gradient multiplied by gscale first; t is the
	 * 1-based step for bias correction. */
	void (*adamw)(struct exec_device *d, float *p, const float *g, float *m,
		      float *v, long n, float lr, float beta1, float beta2,
		      float eps, float wd, int t, float gscale);

	/* Device timestamps for a trace (exec_opts.trace), all four NULL
	 * where the host's clock is the device's (the CPU).  timer_new makes
	 * n marks (NULL after a message when it cannot); timer_mark records
	 * mark i where the work queued so far on the compute stream
	 * (EXEC_STREAM_COMPUTE) ends, or on the communication stream or
	 * the gradient-reduction stream after it waits for that point
	 * (EXEC_STREAM_COMM, EXEC_STREAM_REDUCE); timer_elapsed waits
	 * for mark `to` and gives the seconds from mark `from` to it.  A mark
	 * may be recorded again once read. */
	void *(*timer_new)(struct exec_device *d, int n);
	enum rc (*timer_mark)(struct exec_device *d, void *timer, int i, int stream);
	enum rc (*timer_elapsed)(struct exec_device *d, void *timer, int from, int to,
				 double *seconds);
	void (*timer_free)(struct exec_device *d, void *timer, int n);
};

/* Where work runs on a device: kernels; the collectives the compute
 * stream waits for; the gradient sums it does not wait for until the
 * optimizer (exec_comm.all_reduce_start, reduce_scatter_start). */
enum { EXEC_STREAM_COMPUTE, EXEC_STREAM_COMM, EXEC_STREAM_REDUCE };

/* One backend instance: the table plus what it has allocated. */
struct exec_device {
	const struct exec_backend *be;
	enum exec_precision precision;  /* GEMM arithmetic (the CPU: always fp32) */
	enum exec_dtype act;            /* activation type, set by open */
	size_t bytes_in_use;
	size_t peak_bytes;
	size_t limit_bytes;             /* allocations beyond this fail; 0: none */
	char name[128];                 /* "cpu", or the GPU's product name */
	double memory_bytes;            /* the device's memory */
	void *priv;
};

/* The fp32 CPU backend (exec_cpu.c). */
extern const struct exec_backend exec_cpu_backend;
/* The CUDA backend (exec_cuda.cu); linked only where nvcc built it. */
extern const struct exec_backend exec_cuda_backend;
/* Finds a backend by name; NULL when unknown or not built. */
const struct exec_backend *exec_backend_find(const char *name);

void exec_device_init(struct exec_device *d, const struct exec_backend *be);
/* Runs the backend's open (see struct exec_backend); RC_OK when it has
 * none. */
enum rc exec_device_open(struct exec_device *d);
/* The backend's sync; RC_OK when it has none. */
enum rc exec_device_sync(struct exec_device *d);
void exec_device_release(struct exec_device *d);
/* Allocation through d's backend with the byte counts kept; when the
 * backend is out of memory, ends the job after a message (as xmalloc
 * does): through exec_device_on_abort's function, else abort(). */
void *exec_dalloc(struct exec_device *d, size_t bytes);
/* How exec_dalloc ends the job from now on, in every rank: fn(1) (MPI's
 * bring-up, exec_mpi_init, installs exec_mpi_abort). */
void exec_device_on_abort(void (*fn)(int code));
void exec_dfree(struct exec_device *d, void *p, size_t bytes);

/* ---- step watchdog and hang fault (exec_watchdog.c) -------------------- */

enum exec_watch_where { EXEC_WATCH_OWN_WORK, EXEC_WATCH_WAITING, EXEC_WATCH_IN_STEP };
/* Arms this rank's timer for step (nothing when timeout_s <= 0), starting
 * in its own work; when it fires, one line naming the rank, the step and
 * where it was goes to stderr and the process exits with status 1. */
void exec_watchdog_arm(double timeout_s, int rank, int step);
void exec_watchdog_where(enum exec_watch_where w);
void exec_watchdog_disarm(void);
/* Sleeps for ever when o makes rank hang at step (EXEC_FAULT_HANG_ENV). */
void exec_fault_hang(const struct exec_opts *o, int rank, int step);

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
 * cp_rank) and the world. */
struct exec_groups {
	struct exec_group world, tp, pp, dp, cp;
};
/* Releases the five groups of g (exec_group.c), world last; accepts
 * zeroed ones. */
void exec_groups_release(struct exec_groups *g);

enum exec_group_kind { EXEC_GROUP_WORLD, EXEC_GROUP_TP, EXEC_GROUP_PP, EXEC_GROUP_DP,
		       EXEC_GROUP_CP };

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
/* Builds g's five groups (struct exec_groups) for layout l over
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

/* Builds g's five groups for layout l with NCCL on CUDA device d (open):
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
/* Sums host values v[0..n) over the world through device memory; RC_OK or
 * RC_DEVICE. */
enum rc exec_job_world_sum(struct exec_job *j, double *v, int n);

/* The pre-flight check of exec_opts.check (exec_check.c): the device
 * against expect.gpu, free memory against expect.memory_bytes, and an
 * all-reduce over each group of more than one rank against the bus
 * bandwidth the simulator assumed.  Fills out on every rank; returns
 * RC_OK, or RC_DEVICE (after one line from the lowest failing rank) when
 * a check fails.  The second half runs after step 1: device memory in use
 * against the prediction. */
enum rc exec_preflight(struct exec_job *j, const struct exec_opts *o, struct exec_check *out);
enum rc exec_preflight_after_step(struct exec_job *j, struct exec_check *out);

/* ---- model and trainer (exec_trainer.c) ------------------------------ */

struct exec_trainer;

/* Builds the rank's part of the model for o at layout l on device d with
 * groups g (borrowed: they must outlive the trainer): parameters
 * initialised from o->seed identically whatever the layout, optimizer
 * state, pipeline schedule, data source.  Returns NULL with a reason in
 * why[size] when o cannot be laid out (exec_opts_check's reasons, the
 * schedule's) or its data file cannot be used; nothing printed. */
struct exec_trainer *exec_trainer_new(const struct exec_opts *o,
				      const struct exec_layout *l,
				      struct exec_device *d,
				      struct exec_groups *g, char *why, size_t size);
void exec_trainer_free(struct exec_trainer *t);

/* One training step (1-based): forward and backward of every micro-batch
 * in schedule order, gradient reduction, clipping and AdamW.  *loss and
 * *grad_norm are the same on every rank. */
enum rc exec_trainer_step(struct exec_trainer *t, int step, double *loss,
			  double *grad_norm);
/* Forward (and backward when `backward`) of step's batch without any
 * update: *loss is the batch's mean loss; the gradients, when computed,
 * are this rank's micro-batches' (not reduced over DP). */
enum rc exec_trainer_eval(struct exec_trainer *t, int step, int backward,
			  double *loss);

/* The timeline recorded under exec_opts.trace, every rank's gathered to
 * world rank 0 (over MPI when mpi): see exec_tracer_gather().  Collective
 * over the world; out is zeroed when tracing is off. */
enum rc exec_trainer_trace(struct exec_trainer *t, int mpi, struct exec_trace *out);

/* Parameters by unit, for tests: unit i's parameter and gradient buffers
 * (backend memory, fp32: the master weights, which forward reads directly
 * only where the activation type is fp32) and element count; tensor j's
 * offset, count and name.  Returns 0, or -1 when i or j is out of range. */
int exec_trainer_units(const struct exec_trainer *t);
int exec_trainer_unit(const struct exec_trainer *t, int i, float **params,
		      float **grads, long *n);
int exec_trainer_tensor(const struct exec_trainer *t, int i, int j, long *off,
			long *n, const char **name);
/* Parameters this rank holds, replicated tensors counted on TP rank 0
 * only and a tied embedding on the first stage only: summed over one DP
 * replica's ranks, the model's count. */
double exec_trainer_local_params(const struct exec_trainer *t);

/* What a checkpoint keeps of this rank's trainer: exec_trainer_state_bufs()
 * fp32 buffers of backend memory, three a unit: its master weights (the
 * ZeRO-3 shard, or the whole padded unit), AdamW's m and v of its own
 * range.  With the step they are the whole training state: the batch of a
 * step follows from the step (load_tokens) and the random numbers are
 * counter-based.  exec_trainer_state_buf() gives buffer i and its element
 * count (0, or -1 when i is out of range); after writing them all,
 * exec_trainer_state_loaded() refreshes the working copies. */
int exec_trainer_state_bufs(const struct exec_trainer *t);
int exec_trainer_state_buf(const struct exec_trainer *t, int i, float **buf, long *n);
void exec_trainer_state_loaded(struct exec_trainer *t);

/* ---- checkpoints (exec_ckpt.c, exec_ckpt_json.c) --------------------- */

/* One rank's shard as the manifest lists it. */
struct exec_ckpt_shard {
	long long bytes;
	uint64_t fnv1a64;       /* of the whole file */
};

/* What manifest.json says.  Plain data; shards is xcalloc'd, freed by
 * exec_ckpt_manifest_release(). */
struct exec_ckpt_manifest {
	int step;
	struct sim_model model;  /* name, shapes, mlp, tied_embeddings */
	enum exec_norm norm;
	struct sim_parallel par; /* tp, pp, dp, cp, zero, interleave, mbs, gbs */
	uint64_t seed;
	int world;
	struct exec_ckpt_shard *shards; /* [world] */
};

void exec_ckpt_manifest_release(struct exec_ckpt_manifest *m);
/* Returns m as JSON (caller frees with free()). */
char *exec_ckpt_manifest_to_json(const struct exec_ckpt_manifest *m);
/* Parses buf[0..len) into out; RC_INPUT with a one-line reason (".field:
 * expected X, found Y") in why[size] and out untouched on failure. */
enum rc exec_ckpt_manifest_parse(const char *buf, size_t len, struct exec_ckpt_manifest *out,
				 char *why, size_t size);

/* Writes step's checkpoint of every rank's trainer t into o->ckpt_dir as
 * exec_ckpt_prepare() describes, and removes all but the newest
 * EXEC_CKPT_KEEP.  Collective over the world; every rank returns the same
 * status: RC_OK, or RC_ERR after one line from the lowest failing rank. */
enum rc exec_ckpt_save(struct exec_job *j, struct exec_trainer *t, const struct exec_opts *o,
		       int step);
/* Reads this rank's shard of o->ckpt_dir's checkpoint of step `step` into
 * t and checks it against the manifest.  Collective over the world; every
 * rank returns the same status: RC_OK, RC_INPUT (a shard that is not the
 * manifest's) or RC_ERR, after one line from the lowest failing rank. */
enum rc exec_ckpt_load(struct exec_job *j, struct exec_trainer *t, const struct exec_opts *o,
		       int step);

/* ---- the trace recorder (exec_trace.c) ------------------------------- */

/* Records one rank's intervals into a buffer allocated once: nothing is
 * allocated per event, and every function accepts a NULL recorder and
 * does nothing then (tracing off costs a test per call site).  On a
 * device with timer_* functions each event is a pair of device marks,
 * read back into seconds when the next step begins; elsewhere the host's
 * CLOCK_MONOTONIC is read at once.  Only whole steps are kept: a step
 * starts recording when the buffer has room for per_step more events. */
struct exec_tracer;

/* Events a run keeps over all its ranks (48 bytes each, gathered on world
 * rank 0; some 150 bytes each in the JSON). */
#define EXEC_TRACE_MAX_EVENTS (1L << 20)

/* A recorder for rank `rank` of `world` on device d: room for per_step
 * events per step (a bound the caller proves), for steps steps, or for as
 * many whole steps as the rank's share, EXEC_TRACE_MAX_EVENTS / world,
 * allows (one at least; a step larger than the share keeps its first
 * events).  NULL when the device cannot make its marks (its message
 * printed). */
struct exec_tracer *exec_tracer_new(struct exec_device *d, int rank, int world,
				    long per_step, int steps);
void exec_tracer_free(struct exec_tracer *tr);
/* Step `step` (1-based) begins: the previous step's marks are read (the
 * device must have finished it) and this step's origin is marked. */
enum rc exec_tracer_step(struct exec_tracer *tr, int step);
/* Opens an event like e (kind, mb, chunk, peer, op, group, data, bytes
 * taken from it) on stream EXEC_STREAM_COMPUTE, _COMM or _REDUCE.
 * Returns its handle for exec_tracer_end, or -1 when not recorded. */
long exec_tracer_begin(struct exec_tracer *tr, const struct exec_trace_event *e, int stream);
void exec_tracer_end(struct exec_tracer *tr, long h, int stream);
/* Ends event h, a collective left running (all_reduce_start,
 * reduce_scatter_start): on a device, where the work queued on `stream`
 * so far ends, which is its end; on the host's clock, which cannot see
 * it end, at the next exec_tracer_waited(), the wait for it. */
void exec_tracer_end_async(struct exec_tracer *tr, long h, int stream);
void exec_tracer_waited(struct exec_tracer *tr);
/* Reads the last step's marks (after the device has finished) and
 * gathers every rank's events to world rank 0 into out (over MPI when
 * mpi, else this rank's alone).  Collective over the world.  Returns
 * RC_OK, or RC_DEVICE (message printed); out is filled on world rank 0
 * only and zeroed elsewhere. */
enum rc exec_tracer_gather(struct exec_tracer *tr, int mpi, struct exec_trace *out);

/* ---- data (exec_data.c) ---------------------------------------------- */

/* Token source: synthetic (a fixed random bigram process drawn from the
 * seed) or a file of little-endian uint16 tokens. */
struct exec_data {
	int vocab, seq;
	uint64_t seed;
	const unsigned char *file; /* the mapped file; NULL: synthetic */
	long file_tokens;
};

/* Opens path (NULL: synthetic).  Returns RC_OK, or RC_INPUT (no such file,
 * not a file, too short for one sequence, or a token >= vocab) or RC_ERR
 * (cannot be mapped) with a one-line reason naming the file in why[size];
 * nothing printed. */
enum rc exec_data_open(struct exec_data *dt, const char *path, int vocab,
		       int seq, uint64_t seed, char *why, size_t size);
void exec_data_release(struct exec_data *dt);
/* Sequence number idx: seq + 1 tokens into out (inputs are out[0..seq-1],
 * targets out[1..seq]).  The same idx gives the same tokens on every rank. */
void exec_data_sequence(const struct exec_data *dt, long idx, int *out);

/* Counter-based random numbers: the same (seed, stream, index) gives the
 * same value on every rank, so a tensor's element depends only on its
 * position in the full tensor.  Uniform in [0, 1) and standard normal. */
double exec_rand_uniform(uint64_t seed, uint64_t stream, uint64_t index);
double exec_rand_normal(uint64_t seed, uint64_t stream, uint64_t index);
/* out[i] = (float)(std * exec_rand_normal(seed, stream, first + i)) for
 * i < n, the same values with the stream's key hashed once. */
void exec_rand_normal_fill(float *out, size_t n, uint64_t seed, uint64_t stream,
			   uint64_t first, double std);

#endif
