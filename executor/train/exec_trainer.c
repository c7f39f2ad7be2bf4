/*
 * exec_trainer.c - one rank's part of a GPT-style decoder and its training
 * step: parameters, forward and backward of every unit written by hand,
 * the pipeline schedule, data-parallel reduction with ZeRO, AdamW.
 *
 * The model (Radford et al. 2019, as llm.c's train_gpt2.c lays it out):
 * token and position embeddings; per layer x += attn(norm(x)),
 * x += mlp(norm(x)); a final norm; an LM head and cross-entropy.
 *
 * How the layout cuts it:
 * - Tensor parallelism (Shoeybi et al. 2019, sec. 3): Q, K, V and the
 *   first MLP matrices are split by output rows (column-parallel, whole
 *   heads per rank), the attention output and second MLP matrices by input
 *   columns (row-parallel, followed by an all-reduce and then the bias);
 *   the input gradients of column-parallel matrices are all-reduced.  The
 *   embedding and the LM head are split by vocabulary rows, and so is the
 *   cross-entropy (Megatron-LM's vocab_parallel_cross_entropy).
 *   Parameters not split (norms, row-parallel biases, positions) are
 *   replicated and get the same gradient on every TP rank.
 * - Sequence parallelism (Korthikanti et al. 2022, sec. 4.2.2), with
 *   tp > 1: the norms, residuals and bias additions run on 1/tp of the
 *   micro-batch's tokens.  The all-reduce after a row-parallel GEMM
 *   becomes a reduce-scatter over the tokens and an all-gather of the
 *   norm's output precedes the column-parallel GEMMs (the paper's g-bar
 *   and g); backward swaps them.  Rank r holds tokens [r N/tp, (r+1) N/tp)
 *   in the executor's [b, t] order (Megatron's [s, b] order makes that a
 *   slice of the sequence; every op of the region works per token, so
 *   which tokens a rank holds changes no result).  Like Megatron, a layer
 *   keeps only its norms' slices and gathers them again in backward.  The
 *   norm weights then get each rank's slice's gradient, summed over TP
 *   before the optimizer; row-parallel biases and positions take theirs
 *   from the gathered output gradient, which every TP rank holds whole.
 * - Tied embeddings (Press and Wolf 2017, as GPT-2 does): the LM head is
 *   the vocabulary-parallel input embedding matrix, a unit of its own
 *   (UNIT_WORD).  With one stage it serves both ends and its gradient is
 *   the sum of both uses; with more, the first and last stages each hold
 *   a copy drawn from the same stream, and the copies' gradients are
 *   summed before the optimizer step (Megatron-LM's embedding group,
 *   _allreduce_word_embedding_grads; Narayanan et al., SC'21, sec. 2), so
 *   the copies stay equal.  Clipping and the parameter count see the
 *   first stage's copy only.
 * - Pipeline parallelism: the layers are cut into pp * v chunks (virtual
 *   stages) as the simulator cuts them (exec_chunk_layers: a pp that does
 *   not divide the layers gives the middle stages the extra ones, and a
 *   stage's chunks may differ by one), and this rank runs its stage's op
 *   list from sched_build() in order: blocking receives, non-blocking
 *   sends (sched.h's contract).  Every message is one micro-batch's
 *   residual stream, the same size whatever the chunks hold.
 * - Data parallelism: every rank owns, per unit, a shard of ceil(n / dp)
 *   of the unit's flat parameters for the optimizer.  Stage 0 all-reduces
 *   the gradients and every rank updates everything; ZeRO-1 reduce-
 *   scatters them, so that each rank receives the sum of its own shard
 *   alone, updates that shard and all-gathers the parameters, one
 *   all-reduce's traffic in all (Rajbhandari et al., SC'20, sec. 5;
 *   Megatron-LM's distributed optimizer).  Both start a unit's sum as
 *   soon as the step's last backward through the unit has ended, and
 *   wait for them all before the optimizer, so that the sums run under
 *   the backward of the units before (PyTorch DDP's gradient buckets, Li
 *   et al., VLDB 2020, sec. 3.2; Megatron-LM's overlap_grad_reduce), a
 *   unit being a bucket.  ZeRO-2 reduce-scatters each unit's gradients as
 *   soon as its backward ends (the full gradient exists only then);
 *   ZeRO-3 also keeps only its parameter shard and all-gathers a unit
 *   before each use (Rajbhandari et al., SC'20, sec. 5).
 * - Context parallelism (Llama 3's all-gather form, Dubey et al. 2024,
 *   sec. 3.3.2, with its load balancing): every sequence is cut into
 *   2 cp chunks of T / (2 cp) tokens and CP rank r holds chunks r and
 *   2 cp - 1 - r, so that every rank's queries see as many unmasked keys
 *   (the causal attention of an early chunk is cheap, of a late one dear)
 *   and the simulator's even split holds.  Embedding, norms, MLP, LM head
 *   and loss are token-local and run on the two chunks, the positions
 *   being theirs.  Attention all-gathers K and V over the CP group into
 *   sequence order, attends each chunk's queries to every key with the
 *   causal mask at the queries' positions, and in backward
 *   reduce-scatters dK and dV back; a layer keeps only its chunks of K
 *   and V and gathers them again in backward.  CP ranks hold the same
 *   weights: the gradients are reduced, and ZeRO shards, over the dp x cp
 *   ranks (the dp group, struct exec_groups), as Megatron-Core does and as
 *   sim_memory.c prices it; the loss sums every chunk's tokens.
 * - Recomputation (Chen et al. 2016; Korthikanti et al. 2022, sec. 5):
 *   full keeps only each layer's input and reruns the layer's forward,
 *   communication included, before its backward; selective drops the
 *   attention probabilities and rebuilds them from the row log-sum-exp, as
 *   the flash-attention option does.
 *
 * Precision (exec_device.h, "Element types"): parameters, their
 * gradients and AdamW's moments are fp32 on every device; activations and
 * the weights forward and backward read are the device's activation type.
 * Where that is not fp32 (bf16 on the CUDA backend) each unit keeps a
 * working copy of its weights in it, narrowed from the fp32 master after
 * every update (and after each ZeRO-3 gather), as mixed-precision training
 * does (Micikevicius et al., ICLR 2018, sec. 3.1); where it is, the
 * working copy is the master itself.
 *
 * Under exec_opts.trace every schedule op, message and collective of a
 * group of more than one rank, and the optimizer step, is recorded
 * (exec_trace.c) through the wrappers below; off, each costs a test.
 *
 * Every parameter is drawn from a counter-based generator indexed by its
 * position in the full tensor, then cut to the rank's shard, so every
 * layout starts from the same model, and every layout's batch is the same
 * set of sequences: the loss is the same whatever the layout, up to the
 * order of floating-point sums.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/exec_train.h"

#define TRY(call)                                                            \
	do {                                                                 \
		enum rc rc_ = (call);                                        \
		if (rc_ != RC_OK)                                            \
			return rc_;                                          \
	} while (0)

/* ---- parameters ------------------------------------------------------ */

/* UNIT_WORD: the tied embedding matrix, used by UNIT_EMBED and UNIT_HEAD */
enum unit_kind { UNIT_EMBED, UNIT_LAYER, UNIT_HEAD, UNIT_WORD };

/* Tensors of each unit, in their order in the unit's flat buffer. */
enum { T_LN1W, T_LN1B, T_WQ, T_BQ, T_WK, T_BK, T_WV, T_BV, T_WO, T_BO,
       T_LN2W, T_LN2B, T_W1, T_B1, T_WU, T_BU, T_W2, T_B2, T_LAYER_N };
enum { T_WTE, T_WPE, T_EMBED_N };
enum { T_LNFW, T_LNFB, T_WLM, T_HEAD_N };

enum split { SPLIT_NONE, SPLIT_ROWS, SPLIT_COLS };

struct tensor {
	const char *name;
	long rows, cols;        /* full shape; vectors are (n, 1) */
	enum split split;
	long r0, nr, c0, nc;    /* the block this rank holds */
	long off, n;            /* place in the unit's flat buffer, n = nr nc */
	int decay;              /* AdamW weight decay applies (matrices) */
	int replicated;         /* same on every TP rank (tp > 1, not split) */
	int seq_partial;        /* sequence parallel: each TP rank's gradient
				 * is its slice's, summed over TP */
	double std;             /* N(0, std), or `value` when std is 0 */
	float value;
	uint64_t stream;        /* random stream: unit id and tensor index */
};

struct unit {
	enum unit_kind kind;
	int layer;              /* global layer index (UNIT_LAYER) */
	int mirror;             /* the last stage's copy of a tied matrix */
	struct tensor t[T_LAYER_N];
	int nt;
	long n;                 /* local elements */
	long shard, n_pad;      /* ceil(n / dp) and dp * shard */
	long own_off, own_n;    /* the range this rank's optimizer updates */
	float *params;          /* [n_pad] fp32 master; ZeRO-3: only while gathered */
	void *work;             /* [n_pad] working copy in the activation type:
				 * params itself when that is fp32; ZeRO-3:
				 * only while gathered */
	float *pshard;          /* ZeRO-3: [shard], this rank's master copy */
	float *grads;           /* [n_pad]; ZeRO-2/3: only during backward */
	float *gshard;          /* ZeRO-2/3: [shard], summed over DP */
	float *m, *v;           /* AdamW moments, [own_n] */
	int uses;               /* backward passes adding to grads in a step */
	int left;               /* of them still to come in this step */
};

/* ---- activations ----------------------------------------------------- */

/* What one layer keeps from forward to backward for one micro-batch. */
struct layer_act {
	void *ln1, *q, *k, *v, *att, *atty, *res2, *ln2, *h, *u, *a;
	float *ln1_mean, *ln1_rstd, *lse, *ln2_mean, *ln2_rstd;     /* fp32 */
};

/* One micro-batch through one chunk, from its forward to its backward. */
struct act {
	int chunk, mb;
	void *block;            /* every buffer below is carved from it */
	size_t bytes;
	void **x;               /* [nl + 1]: layer inputs, x[nl] the output */
	struct layer_act *la;   /* [nl]; NULL under full recomputation */
	int *tok, *tgt;         /* [N] */
	void *lnf, *logits;
	float *lnf_mean, *lnf_rstd, *rmax, *stats;      /* fp32 */
	struct act *next;       /* free list */
};

struct exec_trainer {
	struct exec_opts o;
	struct exec_layout l;
	struct exec_device *d;
	const struct exec_backend *be;
	struct exec_groups *g;
	struct sched sched;
	struct exec_data data;

	int v, m;               /* chunks, micro-batches */
	int *nl;                /* [v]: layers of each chunk */
	int stage_layers;       /* their sum */
	int B, T, C, H, KV, hd, Hl, KVl, F, Fl, V;
	int cp, Tl;             /* CP ranks; tokens of each sequence here */
	int nc, Tc, cpos[2];    /* those tokens' chunks: how many (1, or 2 with
				 * cp > 1), tokens each, first positions */
	int rdp, rdp_rank;      /* the gradients' group (dp x cp): size, index */
	int N;                  /* tokens per micro-batch here: B Tl */
	int Ns;                 /* of which in the residual stream here: N / tp
				 * with sequence parallelism, else N */
	int v0, nv;             /* vocabulary rows held */
	int rms, swiglu, store_att, rec_att, full_rec, sp, tied;
	enum exec_dtype act;    /* the device's activation type */
	size_t ab;              /* bytes of one activation element */

	struct unit *units;
	int n_units;
	int *layer0;            /* [v]: each chunk's first layer unit */
	struct unit *embed, *head, *word; /* this rank's; NULL when absent */
	float *word_zero;       /* a stage between tied copies: its zeros */
	long word_own_n;        /* elements of the tied copies' sum here */

	struct act **acts;      /* [v m] in flight */
	struct act **pool;      /* [v] free records per chunk */
	long inflight, peak_inflight;

	struct layer_act rec;   /* full recomputation's layer */
	void *rec_block;
	size_t rec_bytes;
	void *dx, *dln, *tmp, *rec_out, *dq, *dk, *dv, *datty, *dh, *du, *da;
	void *gath, *part;      /* sequence parallel: [N C] gathered, [Ns C] slice */
	void *kf, *vf, *dkf, *dvf, *cpbuf; /* context parallel: [B T, KVl hd] */
	float *rs_tmp;          /* [max shard] */
	double *scal;           /* [2] reduction of loss and squared norm */
	int *host_seq, *host_tok, *host_tgt;
	double loss_sum;        /* this step's summed token losses */
	int step;
	int reducing;           /* ZeRO 0/1 in a training step: sum each unit's
				 * gradients over DP after its last use */
	struct exec_tracer *tr; /* exec_opts.trace; NULL when off */
};

/* Element i of p, an array of activations. */
static void *at(const struct exec_trainer *t, const void *p, size_t i)
{
	return (char *)p + i * t->ab;
}

/* The position in its sequence of this rank's token i of a sequence. */
static int tok_pos(const struct exec_trainer *t, int i)
{
	return t->cpos[i / t->Tc] + i % t->Tc;
}

/* The first position of CP rank r's chunk c (of t->nc). */
static int chunk_pos(const struct exec_trainer *t, int r, int c)
{
	return (c == 0 ? r : 2 * t->cp - 1 - r) * t->Tc;
}

/* Tensor i of u as forward and backward read it: the working copy. */
static void *P(const struct exec_trainer *t, const struct unit *u, int i)
{
	return u->t[i].n ? at(t, u->work, (size_t)u->t[i].off) : NULL;
}

static float *G(const struct unit *u, int i)
{
	return u->t[i].n ? u->grads + u->t[i].off : NULL;
}

/* ---- communication, traced ------------------------------------------ */

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
		: EXEC_GROUP_WORLD;
	e.mb = e.chunk = e.peer = -1;
	e.bytes = bytes;
	return exec_tracer_begin(t->tr, &e, stream);
}

static enum rc all_reduce(struct exec_trainer *t, struct exec_group *g, void *buf, size_t n,
			  enum exec_dtype dt, enum exec_redop op)
{
	long h = coll_begin(t, g, EXEC_TRACE_ALL_REDUCE, (double)n * exec_dtype_size(dt),
			    EXEC_STREAM_COMM);
	enum rc rc = g->comm->all_reduce(g, buf, n, dt, op);

	exec_tracer_end(t->tr, h, EXEC_STREAM_COMM);
	return rc;
}

/* Starts the sum over DP of unit u's fp32 gradients, left running until
 * the group's wait_reduces (ZeRO 0 and 1, grads_end).  ZeRO-0 all-reduces
 * them.  ZeRO-1 reduce-scatters them in place: each rank receives the sum
 * of its own shard alone, all its optimizer reads, and the all-gather of
 * the updated parameters completes the exchange, one all-reduce's traffic
 * in all (Rajbhandari et al., SC'20, sec. 5 and 7.2; Megatron-LM's
 * distributed optimizer). */
static enum rc grads_sum_start(struct exec_trainer *t, struct unit *u)
{
	struct exec_group *g = &t->g->dp;
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

static enum rc reduce_scatter(struct exec_trainer *t, struct exec_group *g, const void *send,
			      void *recv, size_t count, enum exec_dtype dt)
{
	long h = coll_begin(t, g, EXEC_TRACE_REDUCE_SCATTER,
			    (double)count * g->size * exec_dtype_size(dt), EXEC_STREAM_COMM);
	enum rc rc = g->comm->reduce_scatter(g, send, recv, count, dt);

	exec_tracer_end(t->tr, h, EXEC_STREAM_COMM);
	return rc;
}

static enum rc all_gather(struct exec_trainer *t, struct exec_group *g, void *buf, size_t count,
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
static long op_begin(struct exec_trainer *t, const struct sched_op *op, int kind, double bytes)
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

static void op_end(struct exec_trainer *t, long h, int kind)
{
	exec_tracer_end(t->tr, h, stream_of(kind));
}

static enum rc tp_sum(struct exec_trainer *t, void *buf, size_t n, enum exec_dtype dt)
{
	return all_reduce(t, &t->g->tp, buf, n, dt, EXEC_SUM);
}

static void tensor_add(struct exec_trainer *t, struct unit *u, int idx,
		       const char *name, long rows, long cols, enum split split,
		       int decay, double std, float value)
{
	struct tensor *x = &u->t[idx];
	long off, len;

	x->name = name;
	x->rows = rows;
	x->cols = cols;
	x->split = split;
	x->r0 = 0;
	x->nr = rows;
	x->c0 = 0;
	x->nc = cols;
	if (split == SPLIT_ROWS) {
		/* Vocabulary rows split unevenly when V % tp != 0; every
		 * other row split is exact (checked by exec_opts_check). */
		exec_split(rows, t->l.tp, t->l.tp_rank, &off, &len);
		x->r0 = off;
		x->nr = len;
	} else if (split == SPLIT_COLS) {
		exec_split(cols, t->l.tp, t->l.tp_rank, &off, &len);
		x->c0 = off;
		x->nc = len;
	}
	x->n = x->nr * x->nc;
	x->off = u->n;
	u->n += x->n;
	x->decay = decay;
	x->replicated = split == SPLIT_NONE && t->l.tp > 1;
	x->std = std;
	x->value = value;
	if (idx + 1 > u->nt)
		u->nt = idx + 1;
}

/* Unit ids name random streams: embedding 0, layer i is 1 + i, head L + 1.
 * A tied matrix is the embedding's wte, whichever stage holds it. */
static uint64_t unit_id(const struct exec_trainer *t, const struct unit *u)
{
	if (u->kind == UNIT_EMBED || u->kind == UNIT_WORD)
		return 0;
	if (u->kind == UNIT_LAYER)
		return 1 + (uint64_t)u->layer;
	return 1 + (uint64_t)t->o.model.layers;
}

static void unit_shapes(struct exec_trainer *t, struct unit *u)
{
	long C = t->C, Hd = (long)t->H * t->hd, KVd = (long)t->KV * t->hd, F = t->F;
	/* GPT-2's initialisation (Radford et al. 2019, sec. 2.3): N(0, 0.02),
	 * residual projections scaled by 1 / sqrt(number of residual layers). */
	double std = 0.02, res_std = 0.02 / sqrt(2.0 * t->o.model.layers);
	int nb = !t->rms;

	switch (u->kind) {
	case UNIT_WORD:
		tensor_add(t, u, T_WTE, "wte", t->V, C, SPLIT_ROWS, 1, std, 0);
		break;
	case UNIT_EMBED:
		tensor_add(t, u, T_WTE, "wte", t->tied ? 0 : t->V, C, SPLIT_ROWS, 1, std, 0);
		tensor_add(t, u, T_WPE, "wpe", t->T, C, SPLIT_NONE, 1, std, 0);
		break;
	case UNIT_HEAD:
		tensor_add(t, u, T_LNFW, "lnf.w", C, 1, SPLIT_NONE, 0, 0, 1);
		tensor_add(t, u, T_LNFB, "lnf.b", nb ? C : 0, 1, SPLIT_NONE, 0, 0, 0);
		tensor_add(t, u, T_WLM, "lm_head", t->tied ? 0 : t->V, C, SPLIT_ROWS, 1, std, 0);
		u->t[T_LNFW].seq_partial = u->t[T_LNFB].seq_partial = t->sp;
		break;
	case UNIT_LAYER:
		tensor_add(t, u, T_LN1W, "ln1.w", C, 1, SPLIT_NONE, 0, 0, 1);
		tensor_add(t, u, T_LN1B, "ln1.b", nb ? C : 0, 1, SPLIT_NONE, 0, 0, 0);
		tensor_add(t, u, T_WQ, "wq", Hd, C, SPLIT_ROWS, 1, std, 0);
		tensor_add(t, u, T_BQ, "bq", Hd, 1, SPLIT_ROWS, 0, 0, 0);
		tensor_add(t, u, T_WK, "wk", KVd, C, SPLIT_ROWS, 1, std, 0);
		tensor_add(t, u, T_BK, "bk", KVd, 1, SPLIT_ROWS, 0, 0, 0);
		tensor_add(t, u, T_WV, "wv", KVd, C, SPLIT_ROWS, 1, std, 0);
		tensor_add(t, u, T_BV, "bv", KVd, 1, SPLIT_ROWS, 0, 0, 0);
		tensor_add(t, u, T_WO, "wo", C, Hd, SPLIT_COLS, 1, res_std, 0);
		tensor_add(t, u, T_BO, "bo", C, 1, SPLIT_NONE, 0, 0, 0);
		tensor_add(t, u, T_LN2W, "ln2.w", C, 1, SPLIT_NONE, 0, 0, 1);
		tensor_add(t, u, T_LN2B, "ln2.b", nb ? C : 0, 1, SPLIT_NONE, 0, 0, 0);
		tensor_add(t, u, T_W1, "w1", F, C, SPLIT_ROWS, 1, std, 0);
		tensor_add(t, u, T_B1, "b1", F, 1, SPLIT_ROWS, 0, 0, 0);
		tensor_add(t, u, T_WU, "wu", t->swiglu ? F : 0, C, SPLIT_ROWS, 1, std, 0);
		tensor_add(t, u, T_BU, "bu", t->swiglu ? F : 0, 1, SPLIT_ROWS, 0, 0, 0);
		tensor_add(t, u, T_W2, "w2", C, F, SPLIT_COLS, 1, res_std, 0);
		tensor_add(t, u, T_B2, "b2", C, 1, SPLIT_NONE, 0, 0, 0);
		u->t[T_LN1W].seq_partial = u->t[T_LN1B].seq_partial = t->sp;
		u->t[T_LN2W].seq_partial = u->t[T_LN2B].seq_partial = t->sp;
		break;
	}
	for (int i = 0; i < u->nt; i++)
		u->t[i].stream = unit_id(t, u) * 64 + (uint64_t)i + 1;
}

/* Initialisation draws ~50 ns a value (log and cos of Box-Muller), a
 * minute for a billion parameters on one thread: the rows of a unit's
 * tensors are shared among threads, a part at least this many values. */
#define INIT_PART_VALUES (1L << 20)

struct init_job {
	const struct unit *u;
	uint64_t seed;
	float *host;
};

/* Rows [begin, end) of the unit's tensors counted one after another:
 * element (r, c) of a tensor's full shape is N(0, std) drawn at index
 * r * cols + c of its stream, or its constant. */
static void init_rows(void *ctx, long begin, long end)
{
	const struct init_job *j = ctx;
	long first = 0;

	for (int i = 0; i < j->u->nt && first < end; i++) {
		const struct tensor *x = &j->u->t[i];
		long lo = begin > first ? begin - first : 0;
		long hi = end - first < x->nr ? end - first : x->nr;

		for (long r = lo; r < hi; r++) {
			float *row = j->host + x->off + r * x->nc;

			if (x->std > 0)
				exec_rand_normal_fill(row, (size_t)x->nc, j->seed, x->stream,
						      (uint64_t)(x->r0 + r) * x->cols + x->c0, x->std);
			else
				for (long c = 0; c < x->nc; c++)
					row[c] = x->value;
		}
		first += x->nr;
	}
}

/* Fills host[0..n) with the unit's initial values, the same whatever the
 * threads: o.init_threads of them when set, else the machine's CPUs
 * shared among the ranks on it, each with INIT_PART_VALUES at least. */
static void unit_init_values(const struct exec_trainer *t, const struct unit *u, float *host)
{
	struct init_job j = { u, t->o.seed, host };
	long rows = 0, min_rows = 1;
	int threads = t->o.init_threads;

	for (int i = 0; i < u->nt; i++)
		rows += u->t[i].nr;
	if (threads <= 0) {
		threads = gp_cpu_count() / exec_launcher_local_size();
		if (u->n > 0)
			min_rows = (long)((double)INIT_PART_VALUES * rows / (double)u->n) + 1;
	}
	gp_parallel_for(rows, threads, min_rows, init_rows, &j);
}

/* The range of a unit of n elements this rank's optimizer updates: all
 * of it without ZeRO, else its shard of ceil(n / (dp cp)) (*shard). */
static void own_range(const struct exec_trainer *t, long n, long *shard, long *off, long *len)
{
	*shard = (n + t->rdp - 1) / t->rdp;
	if (t->o.par.zero == 0) {
		*off = 0;
		*len = n;
		return;
	}
	*off = (long)t->rdp_rank * *shard;
	*len = n - *off;
	if (*len > *shard)
		*len = *shard;
	if (*len < 0)
		*len = 0;
}

static void unit_alloc(struct exec_trainer *t, struct unit *u)
{
	int dp = t->rdp, zero = t->o.par.zero;
	float *host;
	size_t fb = sizeof(float);

	own_range(t, u->n, &u->shard, &u->own_off, &u->own_n);
	u->n_pad = u->shard * dp;
	host = xcalloc((size_t)u->n_pad + 1, fb);
	unit_init_values(t, u, host);
	if (zero == 3) {
		u->pshard = exec_dalloc(t->d, u->shard * fb);
		t->be->from_host(t->d, u->pshard, host + (size_t)t->rdp_rank * u->shard,
				 u->shard * fb);
	} else {
		u->params = exec_dalloc(t->d, u->n_pad * fb);
		t->be->from_host(t->d, u->params, host, u->n_pad * fb);
		u->work = u->params;
		if (t->act != EXEC_F32) {
			u->work = exec_dalloc(t->d, u->n_pad * t->ab);
			t->be->narrow(t->d, u->work, u->params, u->n_pad);
		}
	}
	free(host);
	if (zero >= 2)
		u->gshard = exec_dalloc(t->d, u->shard * fb);
	else
		u->grads = exec_dalloc(t->d, u->n_pad * fb);
	u->m = exec_dalloc(t->d, (size_t)u->own_n * fb);
	u->v = exec_dalloc(t->d, (size_t)u->own_n * fb);
}

static void unit_free(struct exec_trainer *t, struct unit *u)
{
	size_t fb = sizeof(float);

	if (u->work != u->params)
		exec_dfree(t->d, u->work, u->n_pad * t->ab);
	exec_dfree(t->d, u->params, u->n_pad * fb);
	exec_dfree(t->d, u->pshard, u->shard * fb);
	exec_dfree(t->d, u->grads, u->n_pad * fb);
	exec_dfree(t->d, u->gshard, u->shard * fb);
	exec_dfree(t->d, u->m, (size_t)u->own_n * fb);
	exec_dfree(t->d, u->v, (size_t)u->own_n * fb);
}

/* ZeRO-3: the unit's full parameters exist only between gather and drop.
 * These four accept NULL (no tied matrix) and do nothing then. */
static enum rc unit_gather(struct exec_trainer *t, struct unit *u)
{
	if (!u || t->o.par.zero != 3)
		return RC_OK;
	u->params = exec_dalloc(t->d, u->n_pad * sizeof(float));
	t->be->copy(t->d, u->params + (size_t)t->rdp_rank * u->shard, u->pshard,
		    u->shard * sizeof(float));
	TRY(all_gather(t, &t->g->dp, u->params, u->shard, EXEC_F32));
	u->work = u->params;
	if (t->act != EXEC_F32) {
		u->work = exec_dalloc(t->d, u->n_pad * t->ab);
		t->be->narrow(t->d, u->work, u->params, u->n_pad);
	}
	return RC_OK;
}

static void unit_drop(struct exec_trainer *t, struct unit *u)
{
	if (!u || t->o.par.zero != 3)
		return;
	if (u->work != u->params)
		exec_dfree(t->d, u->work, u->n_pad * t->ab);
	exec_dfree(t->d, u->params, u->n_pad * sizeof(float));
	u->params = NULL;
	u->work = NULL;
}

/* ZeRO-2/3: a unit's full gradient lives only through its backward, then
 * is reduce-scattered and added to this rank's shard. */
static void grads_begin(struct exec_trainer *t, struct unit *u)
{
	if (u && t->o.par.zero >= 2)
		u->grads = exec_dalloc(t->d, u->n_pad * sizeof(float));
}

/* Sequence parallelism leaves each TP rank the norm weights' gradient of
 * its own tokens; their sum over TP is the whole gradient (Korthikanti et
 * al. 2022, sec. 4.2.2; Megatron-LM's _allreduce_layernorm_grads).  A
 * norm's weight and bias lie side by side: one all-reduce for both. */
static enum rc sp_norm_grads(struct exec_trainer *t, struct unit *u)
{
	for (int j = 0; t->sp && j < u->nt; j++) {
		long off = u->t[j].off, n = u->t[j].n;

		if (!u->t[j].seq_partial)
			continue;
		while (j + 1 < u->nt && u->t[j + 1].seq_partial && u->t[j + 1].off == off + n)
			n += u->t[++j].n;
		TRY(tp_sum(t, u->grads + off, (size_t)n, EXEC_F32));
	}
	return RC_OK;
}

/* A backward pass through u has ended.  ZeRO 0/1: after the step's last,
 * the gradients are whole, and their sum over DP starts (grads_sum_start,
 * waited for in optimizer_step).  ZeRO 2/3: this pass's are reduce-
 * scattered into the shard. */
static enum rc grads_end(struct exec_trainer *t, struct unit *u)
{
	enum rc rc;

	if (!u)
		return RC_OK;
	u->left--;
	if (t->o.par.zero < 2) {
		if (u->left > 0 || !t->reducing)
			return RC_OK;
		TRY(sp_norm_grads(t, u));
		return grads_sum_start(t, u);
	}
	rc = sp_norm_grads(t, u);
	if (rc == RC_OK)
		rc = reduce_scatter(t, &t->g->dp, u->grads, t->rs_tmp, u->shard, EXEC_F32);
	if (rc == RC_OK)
		t->be->accumulate(t->d, u->gshard, t->rs_tmp, EXEC_F32, u->shard);
	exec_dfree(t->d, u->grads, u->n_pad * sizeof(float));
	u->grads = NULL;
	return rc;
}

/* ---- activation records ---------------------------------------------- */

/* Two passes over the same layout: the first (base NULL) only measures. */
struct carve {
	char *base;
	size_t off;
};

/* n elements of `size` bytes, 64-byte aligned. */
static void *carve(struct carve *c, size_t n, size_t size)
{
	size_t bytes = (n * size + 63) / 64 * 64;
	void *p = n && c->base ? c->base + c->off : NULL;

	c->off += bytes;
	return p;
}

static float *carve_f(struct carve *c, size_t n)
{
	return carve(c, n, sizeof(float));
}

static int *carve_i(struct carve *c, size_t n)
{
	return carve(c, n, sizeof(int));
}

/* n activations of t's device */
static void *carve_a(const struct exec_trainer *t, struct carve *c, size_t n)
{
	return carve(c, n, t->ab);
}

/* The residual stream and the norms hold Ns tokens, the attention and
 * MLP insides all N of them (whole heads and MLP columns per TP rank). */
static void carve_layer(const struct exec_trainer *t, struct carve *c,
			struct layer_act *a, int att)
{
	size_t N = t->N, Ns = t->Ns, C = t->C, qd = (size_t)t->Hl * t->hd;
	size_t kvd = (size_t)t->KVl * t->hd, rows = (size_t)t->B * t->Hl * t->Tl;

	a->ln1 = carve_a(t, c, Ns * C);
	a->ln1_mean = carve_f(c, t->rms ? 0 : Ns);
	a->ln1_rstd = carve_f(c, Ns);
	a->q = carve_a(t, c, N * qd);
	a->k = carve_a(t, c, N * kvd);
	a->v = carve_a(t, c, N * kvd);
	a->lse = carve_f(c, rows);
	a->att = carve_a(t, c, att ? rows * t->T : 0);
	a->atty = carve_a(t, c, N * qd);
	a->res2 = carve_a(t, c, Ns * C);
	a->ln2 = carve_a(t, c, Ns * C);
	a->ln2_mean = carve_f(c, t->rms ? 0 : Ns);
	a->ln2_rstd = carve_f(c, Ns);
	a->h = carve_a(t, c, N * t->Fl);
	a->u = carve_a(t, c, t->swiglu ? N * t->Fl : 0);
	a->a = carve_a(t, c, N * t->Fl);
}

static int chunk_is_first(const struct exec_trainer *t, int chunk)
{
	return sched_virtual_stage(&t->sched, t->l.pp_rank, chunk) == 0;
}

static int chunk_is_last(const struct exec_trainer *t, int chunk)
{
	return sched_virtual_stage(&t->sched, t->l.pp_rank, chunk) == t->l.pp * t->v - 1;
}

static void carve_act(const struct exec_trainer *t, struct carve *c, struct act *a)
{
	size_t N = t->N, Ns = t->Ns, C = t->C;
	int nl = t->nl[a->chunk];

	for (int i = 0; i <= nl; i++)
		a->x[i] = carve_a(t, c, Ns * C);
	if (a->la)
		for (int i = 0; i < nl; i++)
			carve_layer(t, c, &a->la[i], t->store_att);
	a->tok = carve_i(c, chunk_is_first(t, a->chunk) ? N : 0);
	if (chunk_is_last(t, a->chunk)) {
		a->tgt = carve_i(c, N);
		a->lnf = carve_a(t, c, Ns * C);
		a->lnf_mean = carve_f(c, t->rms ? 0 : Ns);
		a->lnf_rstd = carve_f(c, Ns);
		a->logits = carve_a(t, c, N * t->nv);
		a->rmax = carve_f(c, N);
		a->stats = carve_f(c, 2 * N);
	}
}

/* The record for (chunk, mb): from the chunk's free list, or new. */
static struct act *act_acquire(struct exec_trainer *t, int chunk, int mb)
{
	struct act *a = t->pool[chunk];

	if (a) {
		t->pool[chunk] = a->next;
	} else {
		struct carve c = { NULL, 0 };

		a = xcalloc(1, sizeof(*a));
		a->chunk = chunk;
		a->x = xcalloc((size_t)t->nl[chunk] + 1, sizeof(*a->x));
		if (!t->full_rec)
			a->la = xcalloc((size_t)t->nl[chunk], sizeof(*a->la));
		carve_act(t, &c, a);
		a->bytes = c.off;
		a->block = exec_dalloc(t->d, a->bytes);
		c.base = a->block;
		c.off = 0;
		carve_act(t, &c, a);
	}
	a->mb = mb;
	a->next = NULL;
	t->acts[chunk * t->m + mb] = a;
	if (++t->inflight > t->peak_inflight)
		t->peak_inflight = t->inflight;
	return a;
}

static void act_release(struct exec_trainer *t, struct act *a)
{
	t->acts[a->chunk * t->m + a->mb] = NULL;
	a->next = t->pool[a->chunk];
	t->pool[a->chunk] = a;
	t->inflight--;
}

static void act_free(struct exec_trainer *t, struct act *a)
{
	exec_dfree(t->d, a->block, a->bytes);
	free(a->x);
	free(a->la);
	free(a);
}

/* ---- forward and backward of the units -------------------------------- */

/* Norms run on the residual stream: this rank's Ns tokens. */
static void norm_forward(struct exec_trainer *t, void *out, float *mean, float *rstd,
			 const void *inp, const void *w, const void *b)
{
	if (t->rms)
		t->be->rmsnorm_forward(t->d, out, rstd, inp, w, t->Ns, t->C);
	else
		t->be->layernorm_forward(t->d, out, mean, rstd, inp, w, b, t->Ns, t->C);
}

static void norm_backward(struct exec_trainer *t, void *dinp, float *dw, float *db,
			  const void *dout, const void *inp, const void *w,
			  const float *mean, const float *rstd)
{
	if (t->rms)
		t->be->rmsnorm_backward(t->d, dinp, dw, dout, inp, w, rstd, t->Ns, t->C);
	else
		t->be->layernorm_backward(t->d, dinp, dw, db, dout, inp, w, mean, rstd,
					  t->Ns, t->C);
}

/* All N tokens of x, this rank's [Ns, C] slice of the residual stream:
 * with sequence parallelism the all-gather of every TP rank's slice into
 * full (Korthikanti et al. 2022, fig. 5, forward of "g"; backward of
 * "g-bar"), else x itself.  *out says where they are. */
static enum rc seq_gather(struct exec_trainer *t, const void *x, void *full,
			  const void **out)
{
	size_t n = (size_t)t->Ns * t->C;

	*out = x;
	if (!t->sp)
		return RC_OK;
	t->be->copy(t->d, at(t, full, (size_t)t->l.tp_rank * n), x, n * t->ab);
	TRY(all_gather(t, &t->g->tp, full, n, t->act));
	*out = full;
	return RC_OK;
}

/* The sum over TP of every rank's partial [N, C] product in full: with
 * sequence parallelism a reduce-scatter leaves this rank's Ns tokens of
 * it in t->part (fig. 5, forward of "g-bar"; backward of "g"), else an
 * all-reduce leaves all of it in full (Shoeybi et al. 2019, fig. 3).  *out
 * says where this rank's Ns tokens are. */
static enum rc seq_reduce(struct exec_trainer *t, void *full, void **out)
{
	size_t n = (size_t)t->Ns * t->C;

	*out = full;
	if (!t->sp)
		return tp_sum(t, full, (size_t)t->N * t->C, t->act);
	TRY(reduce_scatter(t, &t->g->tp, full, t->part, n, t->act));
	*out = t->part;
	return RC_OK;
}

/* Context parallelism: every CP rank's [N, kvd] part of K or V (its two
 * chunks of each of the B sequences) gathered into full, [B T, kvd] in
 * sequence order, through t->cpbuf (the gather's rank-major order).
 * to_full: from cpbuf into full, else back. */
static void cp_reorder(struct exec_trainer *t, void *full, int to_full)
{
	size_t kvd = (size_t)t->KVl * t->hd, ck = (size_t)t->Tc * kvd;

	for (int r = 0; r < t->cp; r++)
		for (int b = 0; b < t->B; b++)
			for (int c = 0; c < t->nc; c++) {
				void *f = at(t, full, ((size_t)b * t->T + chunk_pos(t, r, c)) * kvd);
				void *g = at(t, t->cpbuf,
					     (((size_t)r * t->B + b) * t->nc + c) * ck);

				if (to_full)
					t->be->copy(t->d, f, g, ck * t->ab);
				else
					t->be->copy(t->d, g, f, ck * t->ab);
			}
}

static enum rc cp_gather(struct exec_trainer *t, const void *x, void *full)
{
	size_t n = (size_t)t->N * t->KVl * t->hd;

	t->be->copy(t->d, at(t, t->cpbuf, (size_t)t->l.cp_rank * n), x, n * t->ab);
	TRY(all_gather(t, &t->g->cp, t->cpbuf, n, t->act));
	cp_reorder(t, full, 1);
	return RC_OK;
}

/* The reverse: the gradient of every key or value in full, [B T, kvd],
 * summed over the CP ranks, each keeping its chunks' in out ([N, kvd]). */
static enum rc cp_scatter(struct exec_trainer *t, const void *full, void *out)
{
	cp_reorder(t, (void *)full, 0);
	return reduce_scatter(t, &t->g->cp, t->cpbuf, out, (size_t)t->N * t->KVl * t->hd,
			      t->act);
}

/* Attention of this rank's chunks against every key of their sequences
 * (kf, vf: [B T, kvd] in sequence order), chunk by chunk: each chunk's
 * queries start at its own position.  The log-sum-exp and the kept
 * probabilities are laid out chunk by chunk, as one call per chunk reads
 * them back in backward. */
static void cp_attention_forward(struct exec_trainer *t, struct layer_act *a, int att)
{
	size_t qd = (size_t)t->Hl * t->hd, kvd = (size_t)t->KVl * t->hd;

	for (int b = 0; b < t->B; b++)
		for (int c = 0; c < t->nc; c++) {
			size_t row = (size_t)b * t->Tl + (size_t)c * t->Tc;
			size_t call = (size_t)b * t->nc + c, lr = call * t->Hl * t->Tc;

			t->be->attention_forward(t->d, at(t, a->atty, row * qd), a->lse + lr,
						 att ? at(t, a->att, lr * t->T) : NULL,
						 at(t, a->q, row * qd),
						 at(t, t->kf, (size_t)b * t->T * kvd),
						 at(t, t->vf, (size_t)b * t->T * kvd), 1, t->Tc, t->T,
						 t->cpos[c], t->Hl, t->KVl, t->hd);
		}
}

static void cp_attention_backward(struct exec_trainer *t, const struct layer_act *a, int att)
{
	size_t qd = (size_t)t->Hl * t->hd, kvd = (size_t)t->KVl * t->hd;

	for (int b = 0; b < t->B; b++)
		for (int c = 0; c < t->nc; c++) {
			size_t row = (size_t)b * t->Tl + (size_t)c * t->Tc;
			size_t call = (size_t)b * t->nc + c, lr = call * t->Hl * t->Tc;
			size_t ko = (size_t)b * t->T * kvd;

			t->be->attention_backward(t->d, at(t, t->dq, row * qd), at(t, t->dkf, ko),
						  at(t, t->dvf, ko), at(t, t->datty, row * qd),
						  at(t, a->q, row * qd), at(t, t->kf, ko),
						  at(t, t->vf, ko), a->lse + lr,
						  att ? at(t, a->att, lr * t->T) : NULL, 1, t->Tc,
						  t->T, t->cpos[c], t->Hl, t->KVl, t->hd);
		}
}

/* Row-parallel matmul: partial products of all N tokens summed over TP,
 * then the bias on this rank's Ns tokens, into *out (t->tmp or t->part). */
static enum rc row_parallel(struct exec_trainer *t, void **out, const void *inp,
			    const void *w, const void *bias, int ic)
{
	t->be->matmul_forward(t->d, t->tmp, inp, w, NULL, t->N, ic, t->C);
	TRY(seq_reduce(t, t->tmp, out));
	t->be->add_bias(t->d, *out, bias, t->Ns, t->C);
	return RC_OK;
}

static enum rc layer_forward(struct exec_trainer *t, const struct unit *u,
			     const void *x, void *out, struct layer_act *a, int att)
{
	const struct exec_backend *be = t->be;
	struct exec_device *d = t->d;
	int N = t->N, C = t->C, qd = t->Hl * t->hd, kvd = t->KVl * t->hd;
	long ns = (long)t->Ns * C;
	const void *in;
	void *y;

	/* attention block: x + Wo attn(norm(x)) */
	norm_forward(t, a->ln1, a->ln1_mean, a->ln1_rstd, x, P(t, u, T_LN1W), P(t, u, T_LN1B));
	TRY(seq_gather(t, a->ln1, t->gath, &in));
	be->matmul_forward(d, a->q, in, P(t, u, T_WQ), P(t, u, T_BQ), N, C, qd);
	be->matmul_forward(d, a->k, in, P(t, u, T_WK), P(t, u, T_BK), N, C, kvd);
	be->matmul_forward(d, a->v, in, P(t, u, T_WV), P(t, u, T_BV), N, C, kvd);
	if (t->cp > 1) {
		TRY(cp_gather(t, a->k, t->kf));
		TRY(cp_gather(t, a->v, t->vf));
		cp_attention_forward(t, a, att);
	} else {
		be->attention_forward(d, a->atty, a->lse, att ? a->att : NULL, a->q, a->k, a->v,
				      t->B, t->T, t->T, 0, t->Hl, t->KVl, t->hd);
	}
	TRY(row_parallel(t, &y, a->atty, P(t, u, T_WO), P(t, u, T_BO), qd));
	be->residual_forward(d, a->res2, x, y, ns);
	/* MLP block: res2 + W2 act(W1 norm(res2)) */
	norm_forward(t, a->ln2, a->ln2_mean, a->ln2_rstd, a->res2, P(t, u, T_LN2W),
		     P(t, u, T_LN2B));
	TRY(seq_gather(t, a->ln2, t->gath, &in));
	be->matmul_forward(d, a->h, in, P(t, u, T_W1), P(t, u, T_B1), N, C, t->Fl);
	if (t->swiglu) {
		be->matmul_forward(d, a->u, in, P(t, u, T_WU), P(t, u, T_BU), N, C, t->Fl);
		be->swiglu_forward(d, a->a, a->h, a->u, (long)N * t->Fl);
	} else {
		be->gelu_forward(d, a->a, a->h, (long)N * t->Fl);
	}
	TRY(row_parallel(t, &y, a->a, P(t, u, T_W2), P(t, u, T_B2), t->Fl));
	be->residual_forward(d, out, a->res2, y, ns);
	return RC_OK;
}

/* On entry dx holds the gradient of the layer's output (this rank's Ns
 * tokens); on return, of its input x.  Parameter gradients accumulate
 * into u's grads.  A row-parallel GEMM's output gradient is dx gathered:
 * its bias's gradient, summed over all N tokens, is whole on every rank. */
static enum rc layer_backward(struct exec_trainer *t, const struct unit *u,
			      const void *x, const struct layer_act *a, int att, void *dx)
{
	const struct exec_backend *be = t->be;
	struct exec_device *d = t->d;
	int N = t->N, C = t->C, qd = t->Hl * t->hd, kvd = t->KVl * t->hd;
	size_t fb = t->ab, nc = (size_t)N * C, nf = (size_t)N * t->Fl;
	const void *dy, *in;
	void *dn;

	/* MLP block; the residual passes dx through unchanged */
	TRY(seq_gather(t, dx, t->tmp, &dy));
	be->zero(d, t->da, nf * fb);
	be->matmul_backward(d, t->da, G(u, T_W2), G(u, T_B2), dy, a->a, P(t, u, T_W2), N, t->Fl, C);
	be->zero(d, t->dh, nf * fb);
	if (t->swiglu) {
		be->zero(d, t->du, nf * fb);
		be->swiglu_backward(d, t->dh, t->du, a->h, a->u, t->da, (long)nf);
	} else {
		be->gelu_backward(d, t->dh, a->h, t->da, (long)nf);
	}
	TRY(seq_gather(t, a->ln2, t->gath, &in));
	be->zero(d, t->dln, nc * fb);
	be->matmul_backward(d, t->dln, G(u, T_W1), G(u, T_B1), t->dh, in, P(t, u, T_W1), N, C,
			    t->Fl);
	if (t->swiglu)
		be->matmul_backward(d, t->dln, G(u, T_WU), G(u, T_BU), t->du, in,
				    P(t, u, T_WU), N, C, t->Fl);
	/* column-parallel input gradient: the "f" operator's backward */
	TRY(seq_reduce(t, t->dln, &dn));
	norm_backward(t, dx, G(u, T_LN2W), G(u, T_LN2B), dn, a->res2, P(t, u, T_LN2W),
		      a->ln2_mean, a->ln2_rstd);
	/* attention block */
	TRY(seq_gather(t, dx, t->tmp, &dy));
	be->zero(d, t->datty, (size_t)N * qd * fb);
	be->matmul_backward(d, t->datty, G(u, T_WO), G(u, T_BO), dy, a->atty, P(t, u, T_WO), N,
			    qd, C);
	be->zero(d, t->dq, (size_t)N * qd * fb);
	be->zero(d, t->dk, (size_t)N * kvd * fb);
	be->zero(d, t->dv, (size_t)N * kvd * fb);
	if (t->cp > 1) {
		size_t full = (size_t)t->B * t->T * kvd * fb;

		TRY(cp_gather(t, a->k, t->kf));
		TRY(cp_gather(t, a->v, t->vf));
		be->zero(d, t->dkf, full);
		be->zero(d, t->dvf, full);
		cp_attention_backward(t, a, att);
		TRY(cp_scatter(t, t->dkf, t->dk));
		TRY(cp_scatter(t, t->dvf, t->dv));
	} else {
		be->attention_backward(d, t->dq, t->dk, t->dv, t->datty, a->q, a->k, a->v,
				       a->lse, att ? a->att : NULL, t->B, t->T, t->T, 0, t->Hl,
				       t->KVl, t->hd);
	}
	TRY(seq_gather(t, a->ln1, t->gath, &in));
	be->zero(d, t->dln, nc * fb);
	be->matmul_backward(d, t->dln, G(u, T_WQ), G(u, T_BQ), t->dq, in, P(t, u, T_WQ), N, C, qd);
	be->matmul_backward(d, t->dln, G(u, T_WK), G(u, T_BK), t->dk, in, P(t, u, T_WK), N, C, kvd);
	be->matmul_backward(d, t->dln, G(u, T_WV), G(u, T_BV), t->dv, in, P(t, u, T_WV), N, C, kvd);
	TRY(seq_reduce(t, t->dln, &dn));
	norm_backward(t, dx, G(u, T_LN1W), G(u, T_LN1B), dn, x, P(t, u, T_LN1W),
		      a->ln1_mean, a->ln1_rstd);
	return RC_OK;
}

/* The word embedding matrix and its gradient: the tied unit's, else the
 * embedding's wte or the head's lm_head (tensor untied). */
static const void *word_params(const struct exec_trainer *t, const struct unit *u, int untied)
{
	return t->word ? P(t, t->word, T_WTE) : P(t, u, untied);
}

static float *word_grads(const struct exec_trainer *t, const struct unit *u, int untied)
{
	return t->word ? G(t->word, T_WTE) : G(u, untied);
}

/* x += positions of tokens [row0, row0 + rows) of this rank's part of the
 * micro-batch, token i at position tok_pos(i % Tl): whole sequences in
 * one call without CP, else run by run of consecutive positions. */
static void add_positions(struct exec_trainer *t, void *x, const void *wpe, long row0,
			  long rows)
{
	long T = t->Tl, C = t->C;

	if (t->nc == 1 && row0 % T == 0 && rows % T == 0) {
		t->be->add_bias(t->d, x, wpe, (int)(rows / T), (int)(T * C));
		return;
	}
	while (rows > 0) {
		long p = row0 % T, len = t->Tc - p % t->Tc;

		if (len > rows)
			len = rows;
		t->be->add_bias(t->d, x, at(t, wpe, (size_t)tok_pos(t, (int)p) * C), 1,
				(int)(len * C));
		x = at(t, x, (size_t)(len * C));
		row0 += len;
		rows -= len;
	}
}

/* Vocabulary-parallel embedding: each TP rank's partial rows summed over
 * TP (reduce-scattered with sequence parallelism, as Megatron-LM's
 * reduce_scatter_embeddings), then the positions of this rank's tokens. */
static enum rc embed_forward(struct exec_trainer *t, const struct unit *u, struct act *a)
{
	void *full = t->sp ? t->tmp : a->x[0], *y;
	size_t ns = (size_t)t->Ns * t->C;

	t->be->embedding_forward(t->d, full, a->tok, word_params(t, u, T_WTE), t->N, t->C,
				 t->v0, t->nv);
	TRY(seq_reduce(t, full, &y));
	if (y != a->x[0])
		t->be->copy(t->d, a->x[0], y, ns * t->ab);
	add_positions(t, a->x[0], P(t, u, T_WPE), t->sp ? (long)t->l.tp_rank * t->Ns : 0, t->Ns);
	return RC_OK;
}

static enum rc embed_backward(struct exec_trainer *t, const struct unit *u,
			      const struct act *a, const void *dx)
{
	size_t tc = (size_t)t->Tl * t->C;
	const void *dy;

	TRY(seq_gather(t, dx, t->tmp, &dy));
	t->be->embedding_backward(t->d, word_grads(t, u, T_WTE), dy, a->tok, t->N, t->C,
				  t->v0, t->nv);
	/* this rank's positions, chunk by chunk */
	for (int b = 0; b < t->B; b++)
		for (int c = 0; c < t->nc; c++)
			t->be->accumulate(t->d, G(u, T_WPE) + (size_t)t->cpos[c] * t->C,
					  at(t, dy, b * tc + (size_t)c * t->Tc * t->C), t->act,
					  (long)t->Tc * t->C);
	return RC_OK;
}

/* Final norm, the vocabulary-parallel LM head and its cross-entropy. */
static enum rc head_forward(struct exec_trainer *t, const struct unit *u, struct act *a)
{
	const void *x = a->x[t->nl[a->chunk]], *in;

	norm_forward(t, a->lnf, a->lnf_mean, a->lnf_rstd, x, P(t, u, T_LNFW), P(t, u, T_LNFB));
	TRY(seq_gather(t, a->lnf, t->gath, &in));
	t->be->matmul_forward(t->d, a->logits, in, word_params(t, u, T_WLM), NULL, t->N, t->C,
			      t->nv);
	t->be->ce_row_max(t->d, a->rmax, a->logits, t->N, t->nv);
	TRY(all_reduce(t, &t->g->tp, a->rmax, t->N, EXEC_F32, EXEC_MAX));
	t->be->ce_row_stats(t->d, a->stats, a->logits, a->rmax, a->tgt, t->N, t->nv, t->v0);
	TRY(tp_sum(t, a->stats, 2 * (size_t)t->N, EXEC_F32));
	t->loss_sum += t->be->ce_loss_sum(t->d, a->rmax, a->stats, t->N);
	return RC_OK;
}

static enum rc head_backward(struct exec_trainer *t, const struct unit *u, struct act *a)
{
	/* the step's loss is the mean over gbs * seq tokens */
	float scale = (float)(1.0 / ((double)t->o.par.gbs * t->T));
	size_t nc = (size_t)t->N * t->C;
	const void *in;
	void *dn;

	t->be->ce_backward(t->d, a->logits, a->rmax, a->stats, a->tgt, t->N, t->nv, t->v0, scale);
	TRY(seq_gather(t, a->lnf, t->gath, &in));
	t->be->zero(t->d, t->dln, nc * t->ab);
	t->be->matmul_backward(t->d, t->dln, word_grads(t, u, T_WLM), NULL, a->logits, in,
			       word_params(t, u, T_WLM), t->N, t->C, t->nv);
	TRY(seq_reduce(t, t->dln, &dn));
	t->be->zero(t->d, t->dx, (size_t)t->Ns * t->C * t->ab);
	norm_backward(t, t->dx, G(u, T_LNFW), G(u, T_LNFB), dn, a->x[t->nl[a->chunk]],
		      P(t, u, T_LNFW), a->lnf_mean, a->lnf_rstd);
	return RC_OK;
}

/* ---- data ------------------------------------------------------------ */

/* Sequences of micro-batch mb on this DP rank at step: the step's global
 * batch is sequences (step - 1) gbs .. step gbs - 1, DP rank r takes the
 * r-th consecutive share, its micro-batches in order; of each, this CP
 * rank takes its chunks' tokens. */
static void load_tokens(struct exec_trainer *t, struct act *a, int first, int last)
{
	long base = (long)(t->step - 1) * t->o.par.gbs +
		    ((long)t->l.dp_rank * t->m + a->mb) * t->B;

	for (int b = 0; b < t->B; b++) {
		exec_data_sequence(&t->data, base + b, t->host_seq);
		for (int i = 0; i < t->Tl; i++) {
			t->host_tok[b * t->Tl + i] = t->host_seq[tok_pos(t, i)];
			t->host_tgt[b * t->Tl + i] = t->host_seq[tok_pos(t, i) + 1];
		}
	}
	if (first)
		t->be->from_host(t->d, a->tok, t->host_tok, (size_t)t->N * sizeof(int));
	if (last)
		t->be->from_host(t->d, a->tgt, t->host_tgt, (size_t)t->N * sizeof(int));
}

/* ---- one chunk, one micro-batch -------------------------------------- */

static struct unit *chunk_layer(struct exec_trainer *t, int chunk, int i)
{
	return &t->units[t->layer0[chunk] + i];
}

static enum rc chunk_forward(struct exec_trainer *t, int chunk, int mb)
{
	struct act *a = t->acts[chunk * t->m + mb];
	int first = chunk_is_first(t, chunk), last = chunk_is_last(t, chunk);

	if (!a)
		a = act_acquire(t, chunk, mb);
	if (first || last)
		load_tokens(t, a, first, last);
	if (first) {
		TRY(unit_gather(t, t->embed));
		TRY(unit_gather(t, t->word));
		TRY(embed_forward(t, t->embed, a));
		unit_drop(t, t->word);
		unit_drop(t, t->embed);
	}
	for (int i = 0; i < t->nl[chunk]; i++) {
		struct unit *u = chunk_layer(t, chunk, i);
		struct layer_act *la = t->full_rec ? &t->rec : &a->la[i];

		TRY(unit_gather(t, u));
		TRY(layer_forward(t, u, a->x[i], a->x[i + 1], la,
				  t->full_rec ? t->rec_att : t->store_att));
		unit_drop(t, u);
	}
	if (last) {
		TRY(unit_gather(t, t->head));
		TRY(unit_gather(t, t->word));
		TRY(head_forward(t, t->head, a));
		unit_drop(t, t->word);
		unit_drop(t, t->head);
	}
	return RC_OK;
}

/* On entry t->dx holds the gradient of the chunk's output (unless it is
 * the last virtual stage); on return, of its input.  A tied matrix used
 * at both ends of one chunk has its gradient reduced once per use under
 * ZeRO-2/3: the shard adds them up. */
static enum rc chunk_backward(struct exec_trainer *t, int chunk, int mb)
{
	struct act *a = t->acts[chunk * t->m + mb];
	int first = chunk_is_first(t, chunk), last = chunk_is_last(t, chunk);

	if (!a) {
		gp_error("rank %d: backward of micro-batch %d, chunk %d before its forward",
			 t->l.rank, mb, chunk);
		return RC_ERR;
	}
	if (last) {
		TRY(unit_gather(t, t->head));
		TRY(unit_gather(t, t->word));
		grads_begin(t, t->head);
		grads_begin(t, t->word);
		TRY(head_backward(t, t->head, a));
		TRY(grads_end(t, t->word));
		TRY(grads_end(t, t->head));
		unit_drop(t, t->word);
		unit_drop(t, t->head);
	}
	for (int i = t->nl[chunk] - 1; i >= 0; i--) {
		struct unit *u = chunk_layer(t, chunk, i);
		const struct layer_act *la = &t->rec;
		int att = t->rec_att;

		TRY(unit_gather(t, u));
		if (t->full_rec)
			TRY(layer_forward(t, u, a->x[i], t->rec_out, &t->rec, t->rec_att));
		else {
			la = &a->la[i];
			att = t->store_att;
		}
		grads_begin(t, u);
		TRY(layer_backward(t, u, a->x[i], la, att, t->dx));
		TRY(grads_end(t, u));
		unit_drop(t, u);
	}
	if (first) {
		TRY(unit_gather(t, t->embed));
		TRY(unit_gather(t, t->word));
		grads_begin(t, t->embed);
		grads_begin(t, t->word);
		TRY(embed_backward(t, t->embed, a, t->dx));
		TRY(grads_end(t, t->word));
		TRY(grads_end(t, t->embed));
		unit_drop(t, t->word);
		unit_drop(t, t->embed);
	}
	act_release(t, a);
	return RC_OK;
}

/* ---- the schedule ---------------------------------------------------- */

/* Activations and gradients travel on channels of their own: on each,
 * every schedule's messages between two stages arrive in the order they
 * are sent (tests/test_executor.c checks it), which NCCL, having no tags,
 * needs. */
enum { CHANNEL_ACT, CHANNEL_GRAD };

/* Runs this stage's op list: every op when backward, else only forwards
 * and the activation messages (still a deadlock-free order: a stage's
 * forward messages keep their relative order). */
static enum rc run_schedule(struct exec_trainer *t, int backward)
{
	const struct sched_stage *st = &t->sched.stages[t->l.pp_rank];
	struct exec_group *pp = &t->g->pp;
	size_t nc = (size_t)t->Ns * t->C;
	long h;
	enum rc rc;

	for (int i = 0; i < st->n; i++) {
		const struct sched_op *op = &st->ops[i];
		struct act *a;
		int kind;

		if (!backward && (op->kind != SCHED_OP_FWD && op->data != SCHED_DATA_ACT))
			continue;
		switch (op->kind) {
		case SCHED_OP_FWD: kind = EXEC_TRACE_FWD; break;
		case SCHED_OP_BWD: kind = EXEC_TRACE_BWD; break;
		case SCHED_OP_RECV: kind = EXEC_TRACE_RECV; break;
		case SCHED_OP_SEND: kind = EXEC_TRACE_SEND; break;
		default:
			gp_error("rank %d: schedule op '%c' is not run by the executor",
				 t->l.rank, sched_op_letter(op->kind));
			return RC_ERR;
		}
		h = op_begin(t, op, kind, kind == EXEC_TRACE_SEND || kind == EXEC_TRACE_RECV
			     ? (double)nc * t->ab : 0);
		switch (op->kind) {
		case SCHED_OP_FWD:
			rc = chunk_forward(t, op->chunk, op->mb);
			break;
		case SCHED_OP_BWD:
			rc = chunk_backward(t, op->chunk, op->mb);
			break;
		case SCHED_OP_RECV:
			if (op->data == SCHED_DATA_ACT) {
				a = act_acquire(t, op->chunk, op->mb);
				rc = pp->comm->recv(pp, op->peer, CHANNEL_ACT, a->x[0], nc, t->act,
						    sched_op_tag(&t->sched, op));
			} else {
				rc = pp->comm->recv(pp, op->peer, CHANNEL_GRAD, t->dx, nc, t->act,
						    sched_op_tag(&t->sched, op));
			}
			break;
		default:
			if (op->data == SCHED_DATA_ACT) {
				a = t->acts[op->chunk * t->m + op->mb];
				rc = pp->comm->send(pp, op->peer, CHANNEL_ACT,
						    a->x[t->nl[op->chunk]], nc, t->act,
						    sched_op_tag(&t->sched, op));
			} else {
				rc = pp->comm->send(pp, op->peer, CHANNEL_GRAD, t->dx, nc, t->act,
						    sched_op_tag(&t->sched, op));
			}
			break;
		}
		op_end(t, h, kind);
		if (rc != RC_OK)
			return rc;
	}
	h = t->l.pp > 1 ? op_begin(t, NULL, EXEC_TRACE_WAIT_SENDS, 0) : -1;
	rc = pp->comm->wait_sends(pp);
	op_end(t, h, EXEC_TRACE_WAIT_SENDS);
	if (rc != RC_OK)
		return rc;
	if (!backward)
		for (int i = 0; i < t->v * t->m; i++)
			if (t->acts[i])
				act_release(t, t->acts[i]);
	return RC_OK;
}

/* ---- optimizer ------------------------------------------------------- */

/* This rank's optimizer view of unit u: parameters and gradients of its
 * own range [own_off, own_off + own_n).  Under ZeRO 1 to 3 the summed
 * gradients exist there alone (grads_end). */
static float *own_params(const struct exec_trainer *t, const struct unit *u)
{
	return t->o.par.zero == 3 ? u->pshard : u->params + u->own_off;
}

static float *own_grads(const struct exec_trainer *t, const struct unit *u)
{
	return t->o.par.zero >= 2 ? u->gshard : u->grads + u->own_off;
}

/* The part of tensor x inside the own range, as [*lo, *lo + *len) relative
 * to own_off; 0 when they do not meet. */
static int own_part(const struct unit *u, const struct tensor *x, long *lo, long *len)
{
	long a = x->off > u->own_off ? x->off : u->own_off;
	long b = x->off + x->n < u->own_off + u->own_n ? x->off + x->n : u->own_off + u->own_n;

	if (b <= a)
		return 0;
	*lo = a - u->own_off;
	*len = b - a;
	return 1;
}

/* Adds to *acc (backend memory) the squared gradient norm of what this
 * rank counts: its own range, with replicated tensors counted on TP rank
 * 0 only, a tied matrix on the first stage only and, without ZeRO (every
 * DP and CP rank holds the same reduced gradients), on the first of them
 * only; with ZeRO each holds the sum of its own shard, and the shards'
 * squares add up over DP in world_sums. */
static void grad_sumsq(const struct exec_trainer *t, double *acc)
{
	if (t->o.par.zero == 0 && t->rdp_rank != 0)
		return;
	for (int i = 0; i < t->n_units; i++) {
		const struct unit *u = &t->units[i];
		const float *g = own_grads(t, u);

		if (u->mirror)
			continue;
		for (int j = 0; j < u->nt; j++) {
			long lo, len;

			if (u->t[j].replicated && t->l.tp_rank != 0)
				continue;
			if (own_part(u, &u->t[j], &lo, &len))
				t->be->sumsq(t->d, acc, g + lo, len);
		}
	}
}

/* Sums over the world this rank's loss and, when norm, its squared
 * gradient norm (zero otherwise), into out[2] on the host; both travel
 * in one all-reduce of backend memory, the norm summed there without a
 * wait per tensor. */
static enum rc world_sums(struct exec_trainer *t, double loss, int norm, double out[2])
{
	double v[2] = { loss, 0 };

	t->be->from_host(t->d, t->scal, v, sizeof(v));
	if (norm)
		grad_sumsq(t, t->scal + 1);
	TRY(all_reduce(t, &t->g->world, t->scal, 2, EXEC_F64, EXEC_SUM));
	t->be->to_host(t->d, out, t->scal, 2 * sizeof(double));
	return RC_OK;
}

static int counts_loss(const struct exec_trainer *t)
{
	return t->l.tp_rank == 0 && t->l.pp_rank == t->l.pp - 1;
}

static void zero_grads(struct exec_trainer *t)
{
	for (int i = 0; i < t->n_units; i++) {
		struct unit *u = &t->units[i];

		if (t->o.par.zero >= 2)
			t->be->zero(t->d, u->gshard, u->shard * sizeof(float));
		else
			t->be->zero(t->d, u->grads, u->n_pad * sizeof(float));
	}
}

/* Tied embeddings over more than one stage: the first and last stages'
 * copies each have the gradient of their own use, and both get the sum
 * (Megatron-LM's embedding-group all-reduce, _allreduce_word_embedding_grads).
 * The executor has no two-rank group for it: the pipeline group
 * all-reduces and the stages between add zeros (x + 0 = x exactly, so
 * both copies get the same bits).  It sums the DP-reduced gradient of
 * this rank's own range, the same range on both stages since the copies
 * are units of one shape. */
static enum rc tied_sum(struct exec_trainer *t)
{
	struct exec_group *pp = &t->g->pp;
	float *g = t->word_zero;

	if (!t->tied || t->l.pp == 1 || t->word_own_n == 0)
		return RC_OK;
	if (t->word)
		g = own_grads(t, t->word);
	else
		t->be->zero(t->d, g, (size_t)t->word_own_n * sizeof(float));
	return all_reduce(t, pp, g, (size_t)t->word_own_n, EXEC_F32, EXEC_SUM);
}

static enum rc optimizer_step(struct exec_trainer *t, int step, double *loss,
			      double *grad_norm)
{
	struct exec_group *dp = &t->g->dp;
	const struct exec_opts *o = &t->o;
	double red[2], norm, clip = 1.0;
	long h;

	/* every unit's gradients have been summed over DP, or their sums
	 * started, as its last backward ended (grads_end) */
	for (int i = 0; i < t->n_units; i++)
		if (t->units[i].left != 0) {
			gp_error("rank %d: optimizer step %d: unit %d has %d of its %d backward "
				 "passes still to run", t->l.rank, step, i, t->units[i].left,
				 t->units[i].uses);
			return RC_ERR;
		}
	if (o->par.zero <= 1) {
		enum rc rc = dp->comm->wait_reduces(dp);

		exec_tracer_waited(t->tr);
		TRY(rc);
	}
	TRY(tied_sum(t));
	/* the optimizer's track holds the norm, clipping and AdamW; its
	 * collectives show on the communication track */
	h = op_begin(t, NULL, EXEC_TRACE_OPTIMIZER, 0);
	TRY(world_sums(t, counts_loss(t) ? t->loss_sum : 0, 1, red));
	*loss = red[0] / ((double)o->par.gbs * t->T);
	norm = sqrt(red[1]);
	*grad_norm = norm;
	/* clipping by the global norm (Pascanu et al., ICML 2013, algorithm 2) */
	if (o->grad_clip > 0 && norm > o->grad_clip)
		clip = o->grad_clip / (norm + 1e-6);
	for (int i = 0; i < t->n_units; i++) {
		struct unit *u = &t->units[i];
		float *p = own_params(t, u), *g = own_grads(t, u);

		for (int j = 0; j < u->nt; j++) {
			long lo, len;

			if (!own_part(u, &u->t[j], &lo, &len))
				continue;
			t->be->adamw(t->d, p + lo, g + lo, u->m + lo, u->v + lo, len,
				     (float)o->lr, (float)o->beta1, (float)o->beta2,
				     (float)o->adam_eps,
				     u->t[j].decay ? (float)o->weight_decay : 0.0f,
				     step, (float)clip);
		}
		if (o->par.zero == 1 || o->par.zero == 2)
			TRY(all_gather(t, dp, u->params, u->shard, EXEC_F32));
		/* the working copy follows the master (ZeRO-3's, at its gather) */
		if (o->par.zero < 3 && u->work != u->params)
			t->be->narrow(t->d, u->work, u->params, u->n_pad);
	}
	op_end(t, h, EXEC_TRACE_OPTIMIZER);
	return RC_OK;
}

/* ---- the trainer ----------------------------------------------------- */

/* A bound on one step's trace events on this rank, counted from the calls
 * above.  Per micro-batch and chunk: the forward and the backward, at
 * most two receives and two sends; per layer at most 7 collectives in
 * forward (ZeRO-3's gather; 2 all-gathers and 2 reduce-scatters with
 * sequence parallelism, else 2 all-reduces; CP's 2 gathers of K and V)
 * and 20 in backward (the gather, the forward's 6 again under full
 * recomputation, 4 all-gathers and 2 reductions, CP's 2 gathers and 2
 * reduce-scatters, 2 norm-gradient sums and ZeRO-2/3's reduce-scatter);
 * the embedding at most 3 forward and 5 backward, the head 5 and 8.  Per
 * step: the wait for sends, per unit at most 4 after its last backward or
 * in the optimizer (2 norm-gradient sums, the DP sum, ZeRO-1/2's
 * all-gather), the tied copies' sum, the world's loss and norm, the
 * optimizer itself. */
static long trace_per_step(const struct exec_trainer *t)
{
	return (long)t->m * (t->v * (2 + 4 + 3 + 5 + 5 + 8L) + 27L * t->stage_layers) +
	       4L * t->n_units + 8;
}

static void scratch_alloc(struct exec_trainer *t)
{
	size_t ab = t->ab, fb = sizeof(float), nc = (size_t)t->N * t->C, nf = (size_t)t->N * t->Fl;
	size_t nq = (size_t)t->N * t->Hl * t->hd, nk = (size_t)t->N * t->KVl * t->hd;
	size_t ns = (size_t)t->Ns * t->C;
	long max_shard = 1;

	t->dx = exec_dalloc(t->d, ns * ab);
	t->dln = exec_dalloc(t->d, nc * ab);
	t->tmp = exec_dalloc(t->d, nc * ab);
	t->dq = exec_dalloc(t->d, nq * ab);
	t->datty = exec_dalloc(t->d, nq * ab);
	t->dk = exec_dalloc(t->d, nk * ab);
	t->dv = exec_dalloc(t->d, nk * ab);
	t->dh = exec_dalloc(t->d, nf * ab);
	t->da = exec_dalloc(t->d, nf * ab);
	t->du = t->swiglu ? exec_dalloc(t->d, nf * ab) : NULL;
	if (t->full_rec) {
		struct carve c = { NULL, 0 };

		carve_layer(t, &c, &t->rec, t->rec_att);
		t->rec_bytes = c.off;
		t->rec_block = exec_dalloc(t->d, t->rec_bytes);
		c.base = t->rec_block;
		c.off = 0;
		carve_layer(t, &c, &t->rec, t->rec_att);
		t->rec_out = exec_dalloc(t->d, ns * ab);
	}
	if (t->sp) {
		t->gath = exec_dalloc(t->d, nc * ab);
		t->part = exec_dalloc(t->d, ns * ab);
	}
	if (t->cp > 1) {
		t->kf = exec_dalloc(t->d, nk * t->cp * ab);
		t->vf = exec_dalloc(t->d, nk * t->cp * ab);
		t->dkf = exec_dalloc(t->d, nk * t->cp * ab);
		t->dvf = exec_dalloc(t->d, nk * t->cp * ab);
		t->cpbuf = exec_dalloc(t->d, nk * t->cp * ab);
	}
	if (t->tied && t->l.pp > 1 && !t->word)
		t->word_zero = exec_dalloc(t->d, (size_t)t->word_own_n * fb);
	for (int i = 0; i < t->n_units; i++)
		if (t->units[i].shard > max_shard)
			max_shard = t->units[i].shard;
	if (t->o.par.zero >= 2)
		t->rs_tmp = exec_dalloc(t->d, (size_t)max_shard * fb);
	t->scal = exec_dalloc(t->d, 2 * sizeof(double));
	t->host_seq = xcalloc((size_t)t->T + 1, sizeof(int));
	t->host_tok = xcalloc((size_t)t->N, sizeof(int));
	t->host_tgt = xcalloc((size_t)t->N, sizeof(int));
}

static void scratch_free(struct exec_trainer *t)
{
	size_t ab = t->ab, fb = sizeof(float), nc = (size_t)t->N * t->C, nf = (size_t)t->N * t->Fl;
	size_t nq = (size_t)t->N * t->Hl * t->hd, nk = (size_t)t->N * t->KVl * t->hd;
	size_t ns = (size_t)t->Ns * t->C;
	long max_shard = 1;

	for (int i = 0; i < t->n_units; i++)
		if (t->units[i].shard > max_shard)
			max_shard = t->units[i].shard;
	exec_dfree(t->d, t->dx, ns * ab);
	exec_dfree(t->d, t->dln, nc * ab);
	exec_dfree(t->d, t->tmp, nc * ab);
	exec_dfree(t->d, t->dq, nq * ab);
	exec_dfree(t->d, t->datty, nq * ab);
	exec_dfree(t->d, t->dk, nk * ab);
	exec_dfree(t->d, t->dv, nk * ab);
	exec_dfree(t->d, t->dh, nf * ab);
	exec_dfree(t->d, t->da, nf * ab);
	exec_dfree(t->d, t->du, nf * ab);
	exec_dfree(t->d, t->rec_block, t->rec_bytes);
	exec_dfree(t->d, t->rec_out, ns * ab);
	exec_dfree(t->d, t->gath, nc * ab);
	exec_dfree(t->d, t->part, ns * ab);
	exec_dfree(t->d, t->kf, nk * t->cp * ab);
	exec_dfree(t->d, t->vf, nk * t->cp * ab);
	exec_dfree(t->d, t->dkf, nk * t->cp * ab);
	exec_dfree(t->d, t->dvf, nk * t->cp * ab);
	exec_dfree(t->d, t->cpbuf, nk * t->cp * ab);
	exec_dfree(t->d, t->word_zero, (size_t)t->word_own_n * fb);
	exec_dfree(t->d, t->rs_tmp, (size_t)max_shard * fb);
	exec_dfree(t->d, t->scal, 2 * sizeof(double));
	free(t->host_seq);
	free(t->host_tok);
	free(t->host_tgt);
}

struct exec_trainer *exec_trainer_new(const struct exec_opts *o,
				      const struct exec_layout *l,
				      struct exec_device *d,
				      struct exec_groups *g, char *why, size_t size)
{
	struct exec_trainer *t;
	const struct sim_model *md = &o->model;
	long off, len;
	int nu = 0;

	if (exec_opts_check(o, why, size) != RC_OK)
		return NULL;
	if (l->tp != o->par.tp || l->pp != o->par.pp || l->dp != o->par.dp ||
	    l->cp != o->par.cp) {
		snprintf(why, size, "layout: expected tp %d x pp %d x dp %d x cp %d, found "
			 "%d x %d x %d x %d", o->par.tp, o->par.pp, o->par.dp, o->par.cp, l->tp,
			 l->pp, l->dp, l->cp);
		return NULL;
	}
	t = xcalloc(1, sizeof(*t));
	t->o = *o;
	t->o.data_path = NULL;
	t->o.backend = NULL;
	t->l = *l;
	t->d = d;
	t->be = d->be;
	t->act = d->act;
	t->ab = exec_dtype_size(d->act);
	t->g = g;
	t->v = o->par.interleave;
	t->m = o->par.gbs / (o->par.mbs * o->par.dp);
	if (sched_build(&t->sched, o->schedule, o->par.pp, t->m, t->v, 0, why, size) != RC_OK) {
		free(t);
		return NULL;
	}
	if (exec_data_open(&t->data, o->data_path, md->vocab, md->seq, o->seed,
			   why, size) != RC_OK) {
		sched_release(&t->sched);
		free(t);
		return NULL;
	}
	t->B = o->par.mbs;
	t->T = md->seq;
	t->C = md->hidden;
	t->H = md->heads;
	t->KV = md->kv_heads;
	t->hd = md->hidden / md->heads;
	t->Hl = t->H / l->tp;
	t->KVl = t->KV / l->tp;
	t->F = md->ffn;
	t->Fl = t->F / l->tp;
	t->V = md->vocab;
	t->cp = l->cp;
	t->Tl = t->T / l->cp;
	t->nc = l->cp > 1 ? 2 : 1;
	t->Tc = t->Tl / t->nc;
	for (int c = 0; c < t->nc; c++)
		t->cpos[c] = chunk_pos(t, l->cp_rank, c);
	t->rdp = l->dp * l->cp;
	t->rdp_rank = l->dp_rank * l->cp + l->cp_rank;
	t->N = t->B * t->Tl;
	exec_split(t->V, l->tp, l->tp_rank, &off, &len);
	t->v0 = (int)off;
	t->nv = (int)len;
	t->rms = o->norm == EXEC_NORM_RMS;
	t->swiglu = md->mlp == SIM_MLP_SWIGLU;
	t->full_rec = o->par.recompute == SIM_RECOMPUTE_FULL;
	t->rec_att = !o->par.flash;
	t->store_att = !o->par.flash && o->par.recompute == SIM_RECOMPUTE_NONE;
	/* Megatron runs sequence parallelism only with tensor parallelism */
	t->sp = o->par.seq_parallel && l->tp > 1;
	t->Ns = t->sp ? t->N / l->tp : t->N;
	t->tied = md->tied_embeddings != 0;

	/* units: per chunk [word] [embedding] layers [head] [word], the tied
	 * word matrix once per rank */
	t->layer0 = xcalloc((size_t)t->v, sizeof(int));
	t->nl = xcalloc((size_t)t->v, sizeof(int));
	t->stage_layers = exec_stage_layers(md->layers, l->pp, l->pp_rank);
	t->units = xcalloc((size_t)t->stage_layers + 2 * (size_t)t->v + 1, sizeof(*t->units));
	for (int c = 0; c < t->v; c++) {
		int first, count, word = -1;

		exec_chunk_layers(md->layers, l->pp, t->v, l->pp_rank, c, &first, &count);
		t->nl[c] = count;
		if (chunk_is_first(t, c)) {
			if (t->tied)
				t->units[word = nu++].kind = UNIT_WORD;
			t->units[nu++].kind = UNIT_EMBED;
		}
		t->layer0[c] = nu;
		for (int i = 0; i < count; i++) {
			t->units[nu].kind = UNIT_LAYER;
			t->units[nu++].layer = first + i;
		}
		if (chunk_is_last(t, c)) {
			t->units[nu++].kind = UNIT_HEAD;
			/* a last stage that is not also the first holds a copy */
			if (t->tied && word < 0) {
				t->units[nu].kind = UNIT_WORD;
				t->units[nu++].mirror = 1;
			}
		}
	}
	t->n_units = nu;
	for (int i = 0; i < nu; i++) {
		struct unit *u = &t->units[i];

		unit_shapes(t, u);
		unit_alloc(t, u);
		if (u->kind == UNIT_EMBED)
			t->embed = u;
		else if (u->kind == UNIT_HEAD)
			t->head = u;
		else if (u->kind == UNIT_WORD)
			t->word = u;
	}
	/* every micro-batch's backward through a chunk uses its units once
	 * (chunk_backward); the tied matrix serves both ends */
	for (int c = 0; c < t->v; c++) {
		for (int i = 0; i < t->nl[c]; i++)
			chunk_layer(t, c, i)->uses += t->m;
		if (chunk_is_first(t, c)) {
			t->embed->uses += t->m;
			if (t->word)
				t->word->uses += t->m;
		}
		if (chunk_is_last(t, c)) {
			t->head->uses += t->m;
			if (t->word)
				t->word->uses += t->m;
		}
	}
	if (t->tied) {
		long shard, own_off;

		/* the tied copies' own range, on every stage of the pipeline
		 * group (the stages between contribute zeros to its sum) */
		own_range(t, (long)t->nv * t->C, &shard, &own_off, &t->word_own_n);
	}
	t->acts = xcalloc((size_t)t->v * t->m, sizeof(*t->acts));
	t->pool = xcalloc((size_t)t->v, sizeof(*t->pool));
	scratch_alloc(t);
	if (o->trace) {
		t->tr = exec_tracer_new(d, l->rank, l->world, trace_per_step(t), o->steps);
		if (!t->tr) {
			snprintf(why, size, "--trace: the %s device cannot time events", d->be->name);
			exec_trainer_free(t);
			return NULL;
		}
	}
	return t;
}

void exec_trainer_free(struct exec_trainer *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->v * t->m; i++)
		if (t->acts[i])
			act_release(t, t->acts[i]);
	for (int c = 0; c < t->v; c++)
		while (t->pool[c]) {
			struct act *a = t->pool[c];

			t->pool[c] = a->next;
			act_free(t, a);
		}
	scratch_free(t);
	for (int i = 0; i < t->n_units; i++)
		unit_free(t, &t->units[i]);
	free(t->units);
	free(t->layer0);
	free(t->nl);
	free(t->acts);
	free(t->pool);
	sched_release(&t->sched);
	exec_data_release(&t->data);
	exec_tracer_free(t->tr);
	free(t);
}

/* A step begins: every unit has all its backward passes to come, and
 * ZeRO 0/1 reduce gradients after the last of them when `reducing`. */
static void uses_reset(struct exec_trainer *t, int reducing)
{
	t->reducing = reducing && t->o.par.zero <= 1;
	for (int i = 0; i < t->n_units; i++)
		t->units[i].left = t->units[i].uses;
}

enum rc exec_trainer_step(struct exec_trainer *t, int step, double *loss,
			  double *grad_norm)
{
	t->step = step;
	t->loss_sum = 0;
	TRY(exec_tracer_step(t->tr, step));
	zero_grads(t);
	uses_reset(t, 1);
	TRY(run_schedule(t, 1));
	return optimizer_step(t, step, loss, grad_norm);
}

enum rc exec_trainer_trace(struct exec_trainer *t, int mpi, struct exec_trace *out)
{
	if (!t->o.trace) {
		memset(out, 0, sizeof(*out));
		return RC_OK;
	}
	return exec_tracer_gather(t->tr, mpi, out);
}

enum rc exec_trainer_eval(struct exec_trainer *t, int step, int backward, double *loss)
{
	double red[2];

	t->step = step;
	t->loss_sum = 0;
	TRY(exec_tracer_step(t->tr, step));
	if (backward)
		zero_grads(t);
	uses_reset(t, 0);
	TRY(run_schedule(t, backward));
	TRY(world_sums(t, counts_loss(t) ? t->loss_sum : 0, 0, red));
	*loss = red[0] / ((double)t->o.par.gbs * t->T);
	return RC_OK;
}

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

double exec_trainer_local_params(const struct exec_trainer *t)
{
	double n = 0;

	for (int i = 0; i < t->n_units; i++)
		for (int j = 0; j < t->units[i].nt && !t->units[i].mirror; j++)
			if (!t->units[i].t[j].replicated || t->l.tp_rank == 0)
				n += (double)t->units[i].t[j].n;
	return n;
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
		*buf = u->m;
		*n = u->own_n;
		break;
	default:
		*buf = u->v;
		*n = u->own_n;
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
