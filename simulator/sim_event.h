/*
 * sim_event.h - event-driven replay of a pipeline schedule (sched.h) with
 * per-operation durations, and what comes out of it: step time, per-stage
 * busy and idle time, bubble fraction, peak activations in flight, exposed
 * communication, a Chrome trace-event timeline and a text Gantt chart.
 *
 * The machine the replay assumes, per stage: one compute stream that runs
 * the stage's compute ops in list order (TP communication, and any other
 * that nothing hides, sits inside each op, as in Megatron-LM's tensor
 * parallelism); sends
 * are non-blocking and go out over the link to the neighbour, one message
 * at a time per direction, in the order they were issued; a receive blocks
 * the compute stream until its message has arrived; the stage's data-
 * parallel gradient reduction runs on its own channel, bucket by bucket,
 * as the last backward of each chunk produces the gradients, and the
 * optimizer step follows the last bucket.  A step ends when every stage
 * has finished its optimizer step.
 *
 * The analytic model (sim.h) gives the same figure for uniform stages and
 * free communication; this replay shows what uneven stages, p2p transfer
 * time, interleaving and the B/W split do to it.
 */
#ifndef GPUPLAN_SIM_EVENT_H
#define GPUPLAN_SIM_EVENT_H

#include <stddef.h>

#include "common.h"
#include "sched.h"
#include "sim.h"

/* Durations of one micro-batch through one chunk of one stage. */
struct sim_event_chunk_cost {
	double fwd_s;          /* forward compute */
	double bwd_input_s;    /* input-gradient part of the backward, with any recompute */
	double bwd_weight_s;   /* weight-gradient part */
	/* Communication inside the op that nothing hides: tensor-parallel
	 * collectives, exposed context-parallel exchange, ZeRO-3 gathers. */
	double comm_fwd_s;     /* inside the forward */
	double comm_bwd_s;     /* inside the backward (its input part when split) */
	double dp_reduce_s;    /* DP reduction of this chunk's gradients, all buckets, once per step */
	/* the DP reduction's links busy with other traffic while the
	 * backward (its input part when split) runs: an EP all-to-all
	 * crossing the same network */
	double dp_busy_bwd_s;
};

struct sim_event_stage_cost {
	double p2p_next_s;     /* one message between this stage and stage (s + 1) % p */
	double optimizer_s;    /* the optimizer step after the last gradient bucket */
	double dp_after_s;     /* DP traffic after the optimizer, nothing under it:
				* ZeRO-1/2's weight gather (dp_overlap sums), or
				* all of it (none) */
};

/* Durations for a p-stage, v-chunk schedule.  A whole backward (BWD)
 * lasts bwd_input_s + bwd_weight_s + comm_bwd_s, its B part
 * bwd_input_s + comm_bwd_s, its W part bwd_weight_s; a forward
 * fwd_s + comm_fwd_s. */
struct sim_event_cost {
	int p, v;
	struct sim_event_chunk_cost *chunk;  /* p * v, index stage * v + chunk */
	struct sim_event_stage_cost *stage;  /* p */
	int dp_buckets;                      /* gradient buckets per chunk, >= 1 */
	/* the time the DP reduction run under the compute adds to it, per
	 * second of it (SIM_OVERLAP_SLOWDOWN from the model; 0 none) */
	double dp_slowdown;
};

/* Allocates zeroed cost arrays for p stages of v chunks, dp_buckets 1.
 * Release with sim_event_cost_release(). */
void sim_event_cost_init(struct sim_event_cost *c, int p, int v);
/* Frees c's arrays and zeroes c; accepts a zeroed c. */
void sim_event_cost_release(struct sim_event_cost *c);

/* Builds the cost of one micro-batch per stage from the analytic model:
 * stage s runs its own share of the layers (split evenly over p * v
 * virtual stages, the remainder going to the first ones), the embeddings
 * ride with virtual stage 0, the logits and loss with the last one; TP
 * communication, recomputation, p2p transfers over the link the two stages
 * share, DP reduction and the optimizer come from the same formulas as
 * sim_step().  Runs sim_check() first.  Returns RC_OK, or RC_INPUT with
 * its reason in why[size] (c zeroed).  Release c with
 * sim_event_cost_release(). */
enum rc sim_event_cost_from_model(struct sim_event_cost *c, const struct sim_model *m,
				  const struct sim_parallel *par,
				  const struct sim_cluster *cl, char *why, size_t size);

/* Per-stage outcome of one replayed step. */
struct sim_event_stage {
	double busy_s;         /* compute ops, the communication inside them included */
	double op_comm_s;      /* that communication's part of busy_s */
	double idle_s;         /* step_time_s - busy_s - optimizer: bubble, waits, DP tail */
	double p2p_exposed_s;  /* time blocked in receives after the peer had sent */
	double dp_exposed_s;   /* DP reduction still running after the last compute op */
	double compute_end_s;  /* end of the stage's last compute op */
	double end_s;          /* end of its optimizer step */
	int peak_inflight;     /* chunk activations (sched_inflight_bound() units) */
};

struct sim_event_result {
	double step_time_s;      /* latest end_s over the stages */
	double pipeline_s;       /* latest compute_end_s over the stages */
	double busy_max_s;       /* the busiest stage's busy_s */
	/* (pipeline_s - busy_max_s) / busy_max_s: (p - 1) / m for uniform
	 * 1F1B without communication (Narayanan et al., SC'21, eq. 1) */
	double bubble_fraction;
	double p2p_exposed_s;    /* the largest stage p2p_exposed_s */
	double dp_exposed_s;     /* how much the DP tail lengthens the step */
	double op_comm_s;        /* the largest stage op_comm_s */
	long ops;                /* operations replayed */
	int p;
	struct sim_event_stage *stage; /* p entries; sim_event_result_release() */
};

void sim_event_result_release(struct sim_event_result *r);

/* When each operation ran. */
struct sim_event_span {
	double start_s, end_s;
};

/* op[stage][i] is parallel to sched->stages[stage].ops[i]: a compute op's
 * run; a SEND's transfer on the link (from when the link took it to its
 * arrival); a RECV's wait (from when the stage reached it to when it went
 * on; zero length when the data was there).  dp[stage][k], k < n_dp[stage],
 * are the stage's gradient-bucket reductions in order. */
struct sim_event_timeline {
	int p;
	struct sim_event_span **op;
	struct sim_event_span **dp;
	int *n_dp;
	double step_time_s;
};

void sim_event_timeline_release(struct sim_event_timeline *tl);

/* Replays s with durations c.  c->p and c->v must equal s->p and s->v; every
 * duration finite and >= 0.  Fills out (release with
 * sim_event_result_release()) and, when tl is not NULL, tl (release with
 * sim_event_timeline_release()).  Linear in the op count.  Returns RC_OK,
 * or RC_INPUT (one line printed) for a cost that does not fit s or a
 * schedule that deadlocks; out and tl are zeroed then. */
enum rc sim_event_run(const struct sched *s, const struct sim_event_cost *c,
		      struct sim_event_result *out, struct sim_event_timeline *tl);

/* The whole path from a plan: builds the schedule the plan implies (1F1B,
 * interleaved when par->interleave > 1, with m = gbs / (mbs dp)
 * micro-batches; split_backward as given), its cost from the model and
 * replays it.  sched_out and tl may be NULL; when given, they are filled
 * (release with sched_release() and sim_event_timeline_release()).
 * Returns RC_OK, or RC_INPUT with a reason in why[size] (sim_check()'s,
 * or the schedule's) and nothing to release. */
enum rc sim_event_simulate(const struct sim_model *m, const struct sim_parallel *par,
			   const struct sim_cluster *cl, int split_backward,
			   struct sim_event_result *out, struct sched *sched_out,
			   struct sim_event_timeline *tl, char *why, size_t size);

/* A text Gantt chart of tl, one row per stage, `width` columns wide (20 to
 * 400): each compute op shows its letter (F, B, W) and micro-batch number,
 * continued with the lower-case letter; '.' is idle.  Returns a string the
 * caller frees with free(). */
char *sim_event_gantt(const struct sched *s, const struct sim_event_timeline *tl, int width);

/* ---- Chrome trace-event JSON (simulator/sim_trace_json.c) -------------- */

/* Returns the timeline as Chrome trace-event JSON ("traceEvents": one "X"
 * complete event per compute op on a track per stage, one per transfer on
 * a track per link, one per DP bucket on a track per stage; ts and dur in
 * microseconds), which Perfetto and chrome://tracing open.  Same inputs
 * give the same bytes.  Caller frees with free(). */
char *sim_trace_to_json(const struct sched *s, const struct sim_event_timeline *tl);

/* Writes sim_trace_to_json() to path atomically (temp file, fsync,
 * rename).  Returns RC_OK or RC_ERR (message printed). */
enum rc sim_trace_write(const char *path, const struct sched *s,
			const struct sim_event_timeline *tl);

#endif
