/*
 * sched.h - pipeline-parallel schedules: GPipe, 1F1B and interleaved 1F1B,
 * each optionally with the backward split into an input-gradient part (B)
 * and a weight-gradient part (W) as in zero-bubble pipelines.
 *
 * A schedule is, for every pipeline stage, the ordered list of operations
 * that stage performs in one training step: compute (forward, backward,
 * or its B and W halves, of one micro-batch through one model chunk) and
 * point-to-point messages (send or receive of one micro-batch's
 * activations or gradients to or from a neighbouring stage).  It knows
 * nothing about time: the event simulator (sim_event.h) replays it with
 * durations, and the executor runs its work in exactly this order.
 *
 * ---- How a stage runs its list (the contract the executor follows) ----
 *
 *   for (int i = 0; i < s->stages[me].n; i++) {
 *       const struct sched_op *op = &s->stages[me].ops[i];
 *       switch (op->kind) {
 *       case SCHED_OP_RECV: blocking receive from stage op->peer, message
 *                           tag sched_op_tag(s, op); op->data says whether it
 *                           holds activations (input of forward op->mb
 *                           through local chunk op->chunk) or gradients
 *                           (output-gradient for backward op->mb, chunk
 *                           op->chunk).
 *       case SCHED_OP_SEND: non-blocking send (isend) to stage op->peer, same
 *                           tag rule; the buffer is the output of the
 *                           compute op just before it.  Complete outstanding
 *                           sends before reusing their buffers, at the
 *                           latest at the end of the step.
 *       default:            compute op->kind for micro-batch op->mb through
 *                           this stage's model chunk op->chunk.
 *       }
 *   }
 *
 * Sends never block and receives do, in list order; under that rule every
 * schedule sched_build() returns completes (sched_validate() proves it by
 * replay).  A RECV comes immediately before the compute op that consumes
 * it, a SEND immediately after the one that produces it.
 *
 * ---- Chunks and virtual stages -----------------------------------------
 *
 * With v chunks per stage (interleaved 1F1B; v = 1 otherwise) the model is
 * cut into p * v virtual stages; stage s holds chunks c = 0..v-1, and
 * chunk c of stage s is virtual stage c * p + s (sched_virtual_stage()),
 * the assignment of Narayanan et al., SC'21, Sec. 2.2.  Activations flow
 * virtual stage k -> k + 1: stage s -> s + 1 on the same chunk, and from
 * the last stage p - 1, chunk c, to stage 0, chunk c + 1.  Gradients flow
 * the opposite way.  Virtual stage 0 holds the embeddings, virtual stage
 * p v - 1 the logits and the loss.  With p = 1 a chunk hands over to the
 * next inside the stage and no message is listed.
 *
 * ---- Pairing ---------------------------------------------------------
 *
 * Every SEND has exactly one RECV on op->peer and vice versa; op->peer_op
 * is the index of the partner in s->stages[op->peer].ops and
 * op->peer_chunk the chunk the partner refers to.  Both carry the same
 * mb, data and tag.
 *
 * This module does not know layer counts, durations or memory sizes.
 */
#ifndef GPUPLAN_SCHED_H
#define GPUPLAN_SCHED_H

#include <stddef.h>

#include "common.h"

enum sched_kind {
	SCHED_GPIPE,       /* all forwards, then all backwards (Huang et al. 2019) */
	SCHED_1F1B,        /* PipeDream-flush / Megatron 1F1B (Narayanan et al. SC'21) */
	SCHED_INTERLEAVED, /* interleaved 1F1B with v >= 2 chunks per stage (ibid.) */
};

enum sched_op_kind {
	SCHED_OP_FWD,         /* forward of one micro-batch through one chunk */
	SCHED_OP_BWD,         /* whole backward (input and weight gradients) */
	SCHED_OP_BWD_INPUT,   /* split backward: input gradient ("B") */
	SCHED_OP_BWD_WEIGHT,  /* split backward: weight gradient ("W") */
	SCHED_OP_SEND,
	SCHED_OP_RECV,
};

/* What a message carries. */
enum sched_data {
	SCHED_DATA_NONE,      /* compute ops */
	SCHED_DATA_ACT,       /* forward activations, virtual stage k -> k + 1 */
	SCHED_DATA_GRAD,      /* their gradients, virtual stage k + 1 -> k */
};

struct sched_op {
	enum sched_op_kind kind;
	int mb;                /* micro-batch, 0 .. m-1 */
	int chunk;             /* this stage's chunk, 0 .. v-1 */
	/* SEND and RECV only; -1 and SCHED_DATA_NONE for compute ops */
	enum sched_data data;
	int peer;              /* the other stage */
	int peer_chunk;        /* the chunk the partner op names */
	int peer_op;           /* index of the partner in stages[peer].ops */
};

struct sched_stage {
	struct sched_op *ops;
	int n;
};

struct sched {
	enum sched_kind kind;
	int p;                 /* pipeline stages */
	int m;                 /* micro-batches per step */
	int v;                 /* chunks per stage (1 unless interleaved) */
	int split_backward;    /* 1: backward is B then W (zero-bubble style) */
	struct sched_stage *stages; /* p entries */
	long n_ops;            /* total over all stages */
};

/* Fills s with the schedule of the given kind for p stages, m micro-batches
 * and v chunks per stage.  GPipe and 1F1B need v = 1, interleaved v >= 2;
 * p, m >= 1.  Returns RC_OK, or RC_INPUT with a one-line reason in
 * why[size] (nothing printed, s zeroed).  Release with sched_release().
 *
 * Orders, per stage s (w = warm-up forwards):
 *   GPipe        all m forwards, then the m backwards in micro-batch order.
 *   1F1B         w = min(p - s - 1, m) forwards, then alternately one
 *                forward and one backward, then the remaining backwards.
 *   interleaved  forwards walk micro-batches in groups of p: for each group,
 *                chunk 0 for every micro-batch of the group, then chunk 1,
 *                ...; backwards walk the same groups with chunks reversed.
 *                When m > p and p does not divide m, the last group also
 *                takes the remainder: its size is G = p + m mod p; G = p
 *                otherwise (with m < p the one group holds all m).
 *                w = min(2 (p - s - 1) + (v - 1) G, m v) (Megatron-LM's
 *                warm-up, with G for p), then one forward one backward, then
 *                the remaining backwards.
 * With split_backward each backward becomes B followed later by its W:
 * GPipe runs all W after the last B; 1F1B and interleaved run one W after
 * each B, delayed by d = w(0) - w(s) B's so that every stage holds as many
 * micro-batches in flight as stage 0 (ZB-H1, Qi et al., ICLR 2024, Sec. 2.1);
 * the delayed W's run at the end.  For 1F1B with F = B = W and m >= p this
 * is ZB-H1's bubble, (p - 1)(F + B - W); the paper gives no interleaved
 * variant, and ours only promises to beat interleaved 1F1B. */
enum rc sched_build(struct sched *s, enum sched_kind kind, int p, int m, int v,
		    int split_backward, char *why, size_t size);

/* Frees s's lists and zeroes s.  Accepts a zeroed or released s. */
void sched_release(struct sched *s);

/* Virtual stage of (stage, chunk): chunk * p + stage. */
int sched_virtual_stage(const struct sched *s, int stage, int chunk);

/* Message tag shared by a SEND and its RECV, unique among the messages
 * between any two stages in one step, in 0 .. 2 m v - 1. */
int sched_op_tag(const struct sched *s, const struct sched_op *op);

/* The known bound on activations in flight on stage `stage`, counted in
 * chunk activations (a forward of (mb, chunk) done whose backward, or W
 * when split, is not):
 *   GPipe                       m
 *   1F1B                        min(p - stage, m)
 *   1F1B, split                 min(p, m)            (ZB-H1)
 *   interleaved                 min(2 (p - stage - 1) + (v - 1) G + 1, m v)
 *   interleaved, split          min(2 (p - 1) + (v - 1) G + 1, m v)
 * (G as in sched_build(); G = p when p divides m).  For m >= p each stage
 * reaches its bound.
 * Interleaved counts chunks, each 1/v of a stage's layers: stage 0 holds
 * (p v + p - 1) / v = p (1 + (p - 1) / (p v)) stage-activations, the factor
 * of Narayanan et al., SC'21, Sec. 3.3 / Korthikanti et al. 2022. */
int sched_inflight_bound(const struct sched *s, int stage);

/* Checks s: every op's fields are in range; each (micro-batch, chunk) is
 * computed exactly once per stage (F and BWD, or F, B and W); on every
 * stage a micro-batch's forward precedes its backward (and B precedes W);
 * each compute op is preceded by the RECV it consumes and each SEND by the
 * compute op it ships; every SEND pairs with exactly one RECV that names
 * it back, and the pair agrees on micro-batch, data, chunks and direction;
 * a replay with non-blocking sends and blocking receives completes (no
 * deadlock); in-flight activations never exceed sched_inflight_bound().
 * Fills peak_inflight[p] (may be NULL) with each stage's peak.  Returns
 * RC_OK, or RC_INPUT with the first violation in why[size]. */
enum rc sched_validate(const struct sched *s, int *peak_inflight,
		       char *why, size_t size);

/* Static names: "gpipe", "1f1b", "interleaved"; and parsing them back
 * (case-insensitive; "interleaved-1f1b" accepted).  Returns RC_OK or
 * RC_USAGE. */
const char *sched_kind_name(enum sched_kind k);
enum rc sched_kind_parse(const char *name, enum sched_kind *out);

/* One-letter name of a compute op: 'F', 'B' (whole or input part), 'W';
 * 'S' and 'R' for messages. */
char sched_op_letter(enum sched_op_kind k);

#endif
