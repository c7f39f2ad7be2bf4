/*
 * exec_trainer_internal.h - what the files of the trainer share: a rank's
 * part of the model (struct exec_trainer, its units of parameters and the
 * activation records of its micro-batches) and the functions each file
 * lends the others.  The trainer's files, bottom up:
 *   exec_train_comm.c       collectives and schedule ops, traced
 *   exec_train_params.c     parameters, their shards, init, ZeRO
 *   exec_train_act.c        activation records
 *   exec_train_tp.c         norms and tensor/sequence-parallel sums
 *   exec_train_embed.c      embedding (and the tied word matrix)
 *   exec_train_attention.c  a layer's attention block, context parallel
 *   exec_train_mlp.c        a layer's MLP block (and its MLP, the shared experts')
 *   exec_train_moe.c        a mixture-of-experts layer's MLP block
 *   exec_train_lora.c       LoRA's adapters beside a layer's projections
 *   exec_train_head.c       final norm, LM head, cross-entropy
 *   exec_train_schedule.c   a layer, a chunk, the pipeline schedule
 *   exec_train_optimizer.c  gradient norm, clipping, AdamW
 *   exec_trainer.c          the trainer: build, step, free (exec_train.h)
 * How the layout cuts the model is exec_trainer.c's opening comment.  The
 * device's kernels these call are device/'s (struct exec_backend).
 */
#ifndef GPUPLAN_EXEC_TRAINER_INTERNAL_H
#define GPUPLAN_EXEC_TRAINER_INTERNAL_H

#include <stdint.h>

#include "train/exec_train.h"

#define TRY(call)                                                            \
	do {                                                                 \
		enum rc rc_ = (call);                                        \
		if (rc_ != RC_OK)                                            \
			return rc_;                                          \
	} while (0)

/* ---- parameters ------------------------------------------------------ */

/* UNIT_WORD: the tied embedding matrix, used by UNIT_EMBED and UNIT_HEAD;
 * UNIT_EXPERTS: an MoE layer's routed experts held here, a unit of their
 * own since their gradients sum over another group (exec_groups.edp);
 * UNIT_LORA: a layer's LoRA adapters, the only trainable unit of a LoRA
 * run (exec_train_lora.c). */
enum unit_kind { UNIT_EMBED, UNIT_LAYER, UNIT_HEAD, UNIT_WORD, UNIT_EXPERTS, UNIT_LORA };

/* Tensors of each unit, in their order in the unit's flat buffer.  An
 * MoE layer's W1 .. B2 are its shared experts' MLP (none: empty), T_WR
 * its router; a dense layer's router is empty.  An experts unit stacks
 * its experts' W1 [Fe, C], Wu and W2 [C, Fe] (no biases, as Mixtral's,
 * Qwen3's and DeepSeek's experts have none). */
enum { T_LN1W, T_LN1B, T_WQ, T_BQ, T_WK, T_BK, T_WV, T_BV, T_WO, T_BO,
       T_LN2W, T_LN2B, T_W1, T_B1, T_WU, T_BU, T_W2, T_B2, T_WR, T_LAYER_N };
enum { T_WTE, T_WPE, T_EMBED_N };
enum { T_LNFW, T_LNFB, T_WLM, T_HEAD_N };
enum { T_EW1, T_EWU, T_EW2, T_EXPERTS_N };
/* A LoRA unit's adapters, A [r, in] and B [out, r] of each adapted
 * projection (absent ones empty).  Those TP leaves whole come first (the
 * column-parallel projections' A, the row-parallel ones' B): their
 * gradients are partial on each TP rank and summed over TP, one
 * all-reduce for the run of them. */
enum { T_QA, T_KA, T_VA, T_1A, T_UA, T_OB, T_2B,
       T_QB, T_KB, T_VB, T_1B, T_UB, T_OA, T_2A, T_LORA_N };
/* The projections LoRA adapts in the order a layer record keeps their
 * rank-r activations (layer_act.lz). */
enum { L_Q, L_K, L_V, L_O, L_1, L_U, L_2, L_N };

/* SPLIT_EP: rows split over the EP ranks (whole experts per rank). */
enum split { SPLIT_NONE, SPLIT_ROWS, SPLIT_COLS, SPLIT_EP };

struct tensor {
	const char *name;
	long rows, cols;        /* full shape; vectors are (n, 1) */
	enum split split;
	long r0, nr, c0, nc;    /* the block this rank holds */
	long off, n;            /* place in the unit's flat buffer, n = nr nc */
	int decay;              /* AdamW weight decay applies (matrices) */
	int replicated;         /* same on every TP rank (tp > 1, not split) */
	int tp_partial;         /* each TP rank's gradient is a part (its
				 * slice of the sequence under sequence
				 * parallelism; a LoRA adapter's share of
				 * a split product), summed over TP */
	double std;             /* N(0, std), or `value` when std is 0 */
	float value;
	uint64_t stream;        /* random stream: unit id and tensor index */
};

struct unit {
	enum unit_kind kind;
	int layer;              /* global layer index (UNIT_LAYER, UNIT_EXPERTS) */
	int mirror;             /* the last stage's copy of a tied matrix */
	int frozen;             /* not trained (LoRA's base): no gradients, no
				 * optimizer state, no reduction */
	struct exec_group *grp; /* its gradients are summed and ZeRO shards over
				 * it: dp, or edp for experts */
	struct unit *experts;   /* UNIT_LAYER of an MoE layer: its experts */
	struct unit *lora;      /* UNIT_LAYER of a LoRA run: its adapters */
	struct tensor t[T_LAYER_N];
	int nt;
	long n;                 /* local elements */
	long shard, n_pad;      /* ceil(n / grp size) and grp size * shard */
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

struct moe_act;

/* What one layer keeps from forward to backward for one micro-batch.  An
 * MoE layer adds its routing (exec_train_moe.c): per token the experts'
 * probabilities [Ns, E], the k chosen (eidx) and their weights (ew), the
 * slots' permutation into expert order and back (emap, epos), the
 * experts' outputs in that order (yp, [Ns k, C]), and what the routing
 * sized (moe: the experts' side, allocated by the forward, freed after
 * the backward). */
struct layer_act {
	void *ln1, *q, *k, *v, *att, *atty, *res2, *ln2, *h, *u, *a;
	float *ln1_mean, *ln1_rstd, *lse, *ln2_mean, *ln2_rstd;     /* fp32 */
	float *probs, *ew;                                          /* fp32 */
	int *eidx, *emap, *epos;
	void *yp;
	struct moe_act *moe;
	void *lz[L_N];          /* LoRA: each adapter's x A^T, [N, r] */
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
	/* Mixture of experts (E 0: none): experts, top-k, expert width,
	 * shared experts' width (all of them), and per EP rank experts;
	 * weights over the chosen unless pre_softmax; the first dense
	 * layers keep the dense MLP. */
	int E, K, Fe, Fs, El, pre_softmax, dense_layers;
	int cp, Tl;             /* CP ranks; tokens of each sequence here */
	int nc, Tc, cpos[2];    /* those tokens' chunks: how many (1, or 2 with
				 * cp > 1), tokens each, first positions */
	int N;                  /* tokens per micro-batch here: B Tl */
	int Ns;                 /* of which in the residual stream here: N / tp
				 * with sequence parallelism, else N */
	int v0, nv;             /* vocabulary rows held */
	int rms, swiglu, store_att, rec_att, full_rec, sp, tied;
	/* LoRA (Hu et al. 2021): on, its rank, the adapted projections
	 * (SIM_LORA_*, gate and up being W1 and Wu under SwiGLU, up W1
	 * under GELU), alpha / r */
	int lora, lora_r;
	unsigned lora_targets;
	float lora_scale;
	void *lora_tmp, *lora_dz; /* [N, widest projection], [N, r] */
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
	/* MoE scratch: router logits and their gradient [Ns, E], weight
	 * gradients [Ns k], rows in and out of the all-to-alls [Ns k, C],
	 * counts [2 E] (device); routing and counts (host) */
	void *mlog, *xp, *dyp, *dxp;
	float *mdw;
	int *mcnt;
	int *h_idx, *h_map, *h_pos;
	size_t *a2a_send, *a2a_recv;
	double *scal;           /* [2] reduction of loss and squared norm */
	int *host_seq, *host_tok, *host_tgt;
	double loss_sum;        /* this step's summed token losses */
	int step;
	int reducing;           /* ZeRO 0/1 in a training step: sum each unit's
				 * gradients over DP after its last use */
	struct exec_tracer *tr; /* exec_opts.trace; NULL when off */
};

/* Whether global layer `layer` is an MoE layer. */
static inline int layer_is_moe(const struct exec_trainer *t, int layer)
{
	return t->E > 0 && layer >= t->dense_layers;
}

/* Element i of p, an array of activations. */
static inline void *at(const struct exec_trainer *t, const void *p, size_t i)
{
	return (char *)p + i * t->ab;
}

/* The position in its sequence of this rank's token i of a sequence. */
static inline int tok_pos(const struct exec_trainer *t, int i)
{
	return t->cpos[i / t->Tc] + i % t->Tc;
}

/* The first position of CP rank r's chunk c (of t->nc). */
static inline int chunk_pos(const struct exec_trainer *t, int r, int c)
{
	return (c == 0 ? r : 2 * t->cp - 1 - r) * t->Tc;
}

/* Tensor i of u as forward and backward read it: the working copy. */
static inline void *P(const struct exec_trainer *t, const struct unit *u, int i)
{
	return u->t[i].n ? at(t, u->work, (size_t)u->t[i].off) : NULL;
}

/* Its gradient; NULL for an empty tensor or a frozen unit's. */
static inline float *G(const struct unit *u, int i)
{
	return u->t[i].n && u->grads ? u->grads + u->t[i].off : NULL;
}

/* Two passes over the same layout: the first (base NULL) only measures. */
struct carve {
	char *base;
	size_t off;
};

/* Whether chunk `chunk` of this rank is the model's first (virtual)
 * stage, which embeds, or its last, which holds the head and the loss. */
static inline int chunk_is_first(const struct exec_trainer *t, int chunk)
{
	return sched_virtual_stage(&t->sched, t->l.pp_rank, chunk) == 0;
}

static inline int chunk_is_last(const struct exec_trainer *t, int chunk)
{
	return sched_virtual_stage(&t->sched, t->l.pp_rank, chunk) == t->l.pp * t->v - 1;
}

/* ---- exec_train_comm.c --------------------------------------------- */

/* Collectives and schedule ops, recorded on the trace when it is on: every
 * collective of the trainer goes through these. */
enum rc train_all_reduce(struct exec_trainer *t, struct exec_group *g, void *buf, size_t n,
			 enum exec_dtype dt, enum exec_redop op);
enum rc train_grads_sum_start(struct exec_trainer *t, struct unit *u);
enum rc train_all_to_all(struct exec_trainer *t, struct exec_group *g, const void *send,
			 const size_t *send_n, void *recv, const size_t *recv_n, enum exec_dtype dt);
enum rc train_reduce_scatter(struct exec_trainer *t, struct exec_group *g, const void *send,
			     void *recv, size_t count, enum exec_dtype dt);
enum rc train_all_gather(struct exec_trainer *t, struct exec_group *g, void *buf, size_t count,
			 enum exec_dtype dt);
long train_op_begin(struct exec_trainer *t, const struct sched_op *op, int kind, double bytes);
void train_op_end(struct exec_trainer *t, long h, int kind);
enum rc train_tp_sum(struct exec_trainer *t, void *buf, size_t n, enum exec_dtype dt);

/* ---- exec_train_params.c ------------------------------------------- */

/* Parameters: each unit's tensors, their initial values, its ZeRO shard
 * and range, ZeRO-3's gather and drop, and the end of a unit's backward. */
void train_unit_shapes(struct exec_trainer *t, struct unit *u);
void train_own_range(const struct exec_trainer *t, const struct exec_group *g, long n,
		     long *shard, long *off, long *len);
void train_unit_alloc(struct exec_trainer *t, struct unit *u);
void train_unit_free(struct exec_trainer *t, struct unit *u);
enum rc train_unit_gather(struct exec_trainer *t, struct unit *u);
void train_unit_drop(struct exec_trainer *t, struct unit *u);
void train_grads_begin(struct exec_trainer *t, struct unit *u);
enum rc train_grads_end(struct exec_trainer *t, struct unit *u);

/* ---- exec_train_act.c ---------------------------------------------- */

/* Activation records: what a chunk keeps from a micro-batch's forward to
 * its backward, carved from one allocation and reused. */
void train_carve_layer(const struct exec_trainer *t, struct carve *c,
		       struct layer_act *a, int att, int layer);
struct act *train_act_acquire(struct exec_trainer *t, int chunk, int mb);
void train_act_release(struct exec_trainer *t, struct act *a);
void train_act_free(struct exec_trainer *t, struct act *a);

/* ---- exec_train_tp.c ----------------------------------------------- */

/* Tensor and sequence parallelism: the norms on this rank's slice of the
 * residual stream, the gather after them and the sums of row-parallel
 * GEMMs. */
void train_norm_forward(struct exec_trainer *t, void *out, float *mean, float *rstd,
			const void *inp, const void *w, const void *b);
void train_norm_backward(struct exec_trainer *t, void *dinp, float *dw, float *db,
			 const void *dout, const void *inp, const void *w,
			 const float *mean, const float *rstd);
enum rc train_seq_gather(struct exec_trainer *t, const void *x, void *full,
			 const void **out);
enum rc train_seq_reduce(struct exec_trainer *t, void *full, void **out);
enum rc train_row_parallel(struct exec_trainer *t, void **out, const void *inp,
			   const struct unit *u, int w, int bias, void *lz, int ic);

/* ---- exec_train_embed.c -------------------------------------------- */

/* The embedding unit (and the tied word matrix both ends read). */
const void *train_word_params(const struct exec_trainer *t, const struct unit *u, int untied);
float *train_word_grads(const struct exec_trainer *t, const struct unit *u, int untied);
enum rc train_embed_forward(struct exec_trainer *t, const struct unit *u, struct act *a);
enum rc train_embed_backward(struct exec_trainer *t, const struct unit *u,
			     const struct act *a, const void *dx);

/* ---- exec_train_attention.c ---------------------------------------- */

/* A layer's attention block (with context parallelism). */
enum rc train_attention_forward(struct exec_trainer *t, const struct unit *u, const void *x,
				struct layer_act *a, int att);
enum rc train_attention_backward(struct exec_trainer *t, const struct unit *u, const void *x,
				 const struct layer_act *a, int att, void *dx);

/* ---- exec_train_mlp.c ---------------------------------------------- */

/* A layer's MLP block; its MLP alone, between the norm and the residual
 * (the shared experts' in an MoE layer). */
enum rc train_mlp_forward(struct exec_trainer *t, const struct unit *u, struct layer_act *a,
			  void *out);
enum rc train_mlp_backward(struct exec_trainer *t, const struct unit *u,
			   const struct layer_act *a, void *dx);
enum rc train_ffn_forward(struct exec_trainer *t, const struct unit *u, struct layer_act *a,
			  void **y);
enum rc train_ffn_backward(struct exec_trainer *t, const struct unit *u,
			   const struct layer_act *a, const void *dx, void **dn);

/* ---- exec_train_moe.c ---------------------------------------------- */

/* An MoE layer's MLP block; what its forward left for the backward
 * freed (accepts a dense layer's record and does nothing then). */
enum rc train_moe_forward(struct exec_trainer *t, const struct unit *u, struct layer_act *a,
			  void *out);
enum rc train_moe_backward(struct exec_trainer *t, const struct unit *u, struct layer_act *a,
			   void *dx);
void train_moe_release(struct exec_trainer *t, struct layer_act *a);

/* ---- exec_train_lora.c -------------------------------------------- */

/* LoRA's adapters (Hu et al. 2021; their unit's shapes are
 * exec_train_params.c's): whether layer u's base tensor w (T_WQ ...) has
 * one, whether a run's layers adapt the projection of slot L_Q ... (a
 * layer record's rank-r activation), and its forward and backward beside the base GEMM: out[N, oc] += s B A x
 * keeping z = x A^T in lz, and the gradients of A and B and dx[N, ic] +=
 * from dy[N, oc], out's gradient. */
int train_lora_has(const struct exec_trainer *t, const struct unit *u, int w);
int train_lora_adapts(const struct exec_trainer *t, int slot);
void train_lora_forward(struct exec_trainer *t, const struct unit *u, int w, void *out,
			const void *x, void *lz, int ic, int oc);
void train_lora_backward(struct exec_trainer *t, const struct unit *u, int w, void *dx,
			 const void *dy, const void *x, const void *lz, int ic, int oc);

/* ---- exec_train_head.c --------------------------------------------- */

/* The head unit: final norm, LM head and cross-entropy. */
enum rc train_head_forward(struct exec_trainer *t, const struct unit *u, struct act *a);
enum rc train_head_backward(struct exec_trainer *t, const struct unit *u, struct act *a);

/* ---- exec_train_schedule.c ----------------------------------------- */

/* The pipeline schedule's ops, a chunk and a micro-batch at a time. */
struct unit *train_chunk_layer(struct exec_trainer *t, int chunk, int i);
enum rc train_run_schedule(struct exec_trainer *t, int backward);

/* ---- exec_train_optimizer.c ---------------------------------------- */

/* The optimizer step: gradient norm, clipping, AdamW, ZeRO's gathers. */
enum rc train_world_sums(struct exec_trainer *t, double loss, int norm, double out[2]);
int train_counts_loss(const struct exec_trainer *t);
void train_zero_grads(struct exec_trainer *t);
enum rc train_optimizer_step(struct exec_trainer *t, int step, double *loss,
			     double *grad_norm);

#endif
