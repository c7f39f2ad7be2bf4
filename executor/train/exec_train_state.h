/*
 * exec_train_state.h - the trainer's shared state, below every file of
 * the trainer: a rank's part of the model (struct exec_trainer, its units
 * of parameters and the activation records of its micro-batches), the
 * small inline helpers every layer reads them through (P, G, at,
 * chunk_is_first ...) and TRY.  Calls nothing; exec_train_state.c holds
 * the accessors exec_train.h declares over it.  What each file of the
 * trainer lends the others is exec_train_layers.h.
 */
#ifndef GPUPLAN_EXEC_TRAIN_STATE_H
#define GPUPLAN_EXEC_TRAIN_STATE_H

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

#endif
