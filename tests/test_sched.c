/*
 * test_sched.c - pipeline schedules (sched.h) and their event-driven replay
 * (sim_event.h): every generated schedule passes validation for many
 * shapes and reaches its in-flight bound; broken schedules are caught;
 * uniform stages without communication reproduce the closed-form bubble;
 * uneven stages, p2p transfers, TP communication and DP buckets cost what
 * a hand calculation says; the Chrome trace parses and has one event per
 * operation; the analytic model's adapter agrees with sim_step().
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "sched.h"
#include "sim_event.h"

/* A cost where every chunk of every stage takes f forward, b input-grad
 * and w weight-grad per micro-batch, nothing else. */
static void uniform_cost(struct sim_event_cost *c, int p, int v, double f, double b, double w)
{
	sim_event_cost_init(c, p, v);
	for (int i = 0; i < p * v; i++) {
		c->chunk[i].fwd_s = f;
		c->chunk[i].bwd_input_s = b;
		c->chunk[i].bwd_weight_s = w;
	}
}

static double run_step(const struct sched *s, const struct sim_event_cost *c,
		       struct sim_event_result *r)
{
	assert_int_equal(sim_event_run(s, c, r, NULL), RC_OK);
	return r->step_time_s;
}

/* ---- building and validation ------------------------------------------- */

static void test_sched_build_rejects_bad_shapes(void **state)
{
	struct sched s;
	char why[256];

	(void)state;
	why[0] = '\0';
	assert_int_equal(sched_build(&s, SCHED_1F1B, 0, 4, 1, 0, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "p=0"));
	assert_int_equal(sched_build(&s, SCHED_1F1B, 4, 0, 1, 0, why, sizeof(why)), RC_INPUT);
	assert_int_equal(sched_build(&s, SCHED_1F1B, 4, 8, 2, 0, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "interleaved"));
	assert_int_equal(sched_build(&s, SCHED_INTERLEAVED, 4, 8, 1, 0, why, sizeof(why)),
			 RC_INPUT);
	assert_int_equal(sched_build(&s, (enum sched_kind)7, 4, 8, 1, 0, why, sizeof(why)),
			 RC_INPUT);
	assert_null(s.stages); /* zeroed on failure */
	sched_release(&s);
	sched_release(NULL);
}

static void test_sched_kind_parse_names(void **state)
{
	enum sched_kind k;

	(void)state;
	assert_int_equal(sched_kind_parse("1F1B", &k), RC_OK);
	assert_int_equal(k, SCHED_1F1B);
	assert_int_equal(sched_kind_parse("interleaved-1f1b", &k), RC_OK);
	assert_int_equal(k, SCHED_INTERLEAVED);
	assert_int_equal(sched_kind_parse("gpipe", &k), RC_OK);
	assert_int_equal(k, SCHED_GPIPE);
	assert_int_equal(sched_kind_parse("pipedream", &k), RC_USAGE);
	assert_string_equal(sched_kind_name(SCHED_INTERLEAVED), "interleaved");
}

/* 1F1B on stage i holds p - i micro-batches at its peak (Narayanan et al.,
 * SC'21, sec. 2.2: stage i runs p - i - 1 warm-up forwards, then one more
 * before its first backward). */
static void test_sched_validate_1f1b_peak_is_p_minus_i(void **state)
{
	struct sched s;
	int peak[8];
	char why[256];

	(void)state;
	assert_int_equal(sched_build(&s, SCHED_1F1B, 8, 32, 1, 0, why, sizeof(why)), RC_OK);
	assert_int_equal(sched_validate(&s, peak, why, sizeof(why)), RC_OK);
	for (int i = 0; i < 8; i++)
		assert_int_equal(peak[i], 8 - i);
	sched_release(&s);
	/* With fewer micro-batches than stages nobody holds more than m. */
	assert_int_equal(sched_build(&s, SCHED_1F1B, 8, 3, 1, 0, why, sizeof(why)), RC_OK);
	assert_int_equal(sched_validate(&s, peak, why, sizeof(why)), RC_OK);
	assert_int_equal(peak[0], 3);
	assert_int_equal(peak[6], 2);
	assert_int_equal(peak[7], 1);
	sched_release(&s);
}

/* Every kind, with and without the B/W split, for p 1..9, m 1..26 and v
 * 2..4: valid (forward before backward, sends paired, no deadlock, in
 * flight within the bound), and at the bound exactly once m >= p. */
static void test_sched_validate_many_shapes(void **state)
{
	static const enum sched_kind kinds[] = { SCHED_GPIPE, SCHED_1F1B, SCHED_INTERLEAVED };
	int peak[16], checked = 0;
	char why[256];

	(void)state;
	for (size_t k = 0; k < GP_ARRAY_LEN(kinds); k++)
		for (int split = 0; split <= 1; split++)
			for (int p = 1; p <= 9; p++)
				for (int m = 1; m <= 26; m += (m < 10 ? 1 : 4))
					for (int v = kinds[k] == SCHED_INTERLEAVED ? 2 : 1;
					     v <= (kinds[k] == SCHED_INTERLEAVED ? 4 : 1); v++) {
						struct sched s;
						long ops = 0;

						assert_int_equal(sched_build(&s, kinds[k], p, m, v, split,
									     why, sizeof(why)), RC_OK);
						if (sched_validate(&s, peak, why, sizeof(why)) != RC_OK)
							fail_msg("%s split=%d p=%d m=%d v=%d: %s",
								 sched_kind_name(kinds[k]), split, p, m, v, why);
						for (int i = 0; i < p; i++) {
							int bound = sched_inflight_bound(&s, i);

							assert_true(peak[i] <= bound);
							if (m >= p)
								assert_int_equal(peak[i], bound);
							ops += s.stages[i].n;
						}
						assert_int_equal(ops, s.n_ops);
						sched_release(&s);
						checked++;
					}
	assert_int_equal(checked, 2 * 9 * 14 * (1 + 1 + 3));
}

/* The interleaved bound on stage 0 in stage-activations is
 * p (1 + (p - 1) / (p v)) (Korthikanti et al. 2022, sec. 4.3's factor for
 * Narayanan et al.'s schedule): p = 4, v = 2 gives 4 x 1.375 = 5.5, i.e.
 * 11 chunk activations. */
static void test_sched_inflight_bound_interleaved_factor(void **state)
{
	struct sched s;
	char why[256];

	(void)state;
	assert_int_equal(sched_build(&s, SCHED_INTERLEAVED, 4, 16, 2, 0, why, sizeof(why)), RC_OK);
	assert_int_equal(sched_inflight_bound(&s, 0), 11);
	assert_near(sched_inflight_bound(&s, 0) / 2.0, 4 * (1 + 3.0 / 8), 1e-15);
	assert_int_equal(sched_inflight_bound(&s, 3), 5);
	sched_release(&s);
}

/* Messages pair up across stages with the same tag, and interleaving sends
 * the last stage's chunk c to stage 0's chunk c + 1. */
static void test_sched_messages_pair(void **state)
{
	struct sched s;
	char why[256];
	int wrap = 0;

	(void)state;
	assert_int_equal(sched_build(&s, SCHED_INTERLEAVED, 3, 6, 2, 0, why, sizeof(why)), RC_OK);
	for (int st = 0; st < s.p; st++)
		for (int i = 0; i < s.stages[st].n; i++) {
			const struct sched_op *op = &s.stages[st].ops[i], *pa;

			if (op->kind != SCHED_OP_SEND)
				continue;
			pa = &s.stages[op->peer].ops[op->peer_op];
			assert_int_equal(pa->kind, SCHED_OP_RECV);
			assert_int_equal(pa->peer, st);
			assert_int_equal(pa->mb, op->mb);
			assert_int_equal(sched_op_tag(&s, pa), sched_op_tag(&s, op));
			assert_true(sched_op_tag(&s, op) < 2 * s.m * s.v);
			if (st == 2 && op->data == SCHED_DATA_ACT) {
				assert_int_equal(op->peer, 0);
				assert_int_equal(op->peer_chunk, op->chunk + 1);
				wrap++;
			}
		}
	assert_int_equal(wrap, 6); /* chunk 0 -> 1 for each micro-batch */
	sched_release(&s);
}

/* A stage that runs a backward before its forward is caught. */
static void test_sched_validate_catches_backward_first(void **state)
{
	struct sched s;
	struct sched_op tmp;
	char why[256];
	int f = -1, b = -1;

	(void)state;
	assert_int_equal(sched_build(&s, SCHED_1F1B, 1, 3, 1, 0, why, sizeof(why)), RC_OK);
	for (int i = 0; i < s.stages[0].n; i++) {
		if (s.stages[0].ops[i].mb != 1)
			continue;
		if (s.stages[0].ops[i].kind == SCHED_OP_FWD)
			f = i;
		else
			b = i;
	}
	tmp = s.stages[0].ops[f];
	s.stages[0].ops[f] = s.stages[0].ops[b];
	s.stages[0].ops[b] = tmp;
	assert_int_equal(sched_validate(&s, NULL, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "before forward"));
	sched_release(&s);
}

/* A send whose partner names another micro-batch is caught. */
static void test_sched_validate_catches_unmatched_send(void **state)
{
	struct sched s;
	char why[256];

	(void)state;
	assert_int_equal(sched_build(&s, SCHED_1F1B, 2, 2, 1, 0, why, sizeof(why)), RC_OK);
	for (int i = 0; i < s.stages[0].n; i++)
		if (s.stages[0].ops[i].kind == SCHED_OP_SEND) {
			s.stages[0].ops[i].peer_op = s.stages[1].n; /* out of range */
			break;
		}
	assert_int_equal(sched_validate(&s, NULL, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "no partner"));
	sched_release(&s);
}

/* GPipe, p = 2, m = 1: stage 0 runs F0, send act, recv grad, B0; stage 1
 * recv act, F0, B0, send grad.  Moving stage 0's receive before its send
 * keeps every local order legal but makes each stage wait for the other. */
static void test_sched_validate_catches_deadlock(void **state)
{
	struct sched s;
	struct sched_op *o0, *o1;
	struct sched_op tmp;
	char why[256];

	(void)state;
	assert_int_equal(sched_build(&s, SCHED_GPIPE, 2, 1, 1, 0, why, sizeof(why)), RC_OK);
	o0 = s.stages[0].ops;
	o1 = s.stages[1].ops;
	assert_int_equal(s.stages[0].n, 4);
	assert_int_equal(o0[1].kind, SCHED_OP_SEND);
	assert_int_equal(o0[2].kind, SCHED_OP_RECV);
	tmp = o0[1];
	o0[1] = o0[2];
	o0[2] = tmp;
	o1[o0[1].peer_op].peer_op = 1;
	o1[o0[2].peer_op].peer_op = 2;
	assert_int_equal(sched_validate(&s, NULL, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "deadlock"));
	sched_release(&s);
}

/* GPipe's order is legal in every way but holds all m micro-batches; under
 * 1F1B's label it breaks the p - i bound. */
static void test_sched_validate_catches_inflight_over_bound(void **state)
{
	struct sched s;
	char why[256];

	(void)state;
	assert_int_equal(sched_build(&s, SCHED_GPIPE, 4, 8, 1, 0, why, sizeof(why)), RC_OK);
	assert_int_equal(sched_validate(&s, NULL, why, sizeof(why)), RC_OK);
	s.kind = SCHED_1F1B;
	assert_int_equal(sched_validate(&s, NULL, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "in flight"));
	sched_release(&s);
}

/* ---- closed forms -------------------------------------------------------- */

/* Uniform stages, no communication: GPipe and 1F1B take (m + p - 1)(f + b)
 * and interleaving (m + (p - 1)/v)(f + b), i.e. bubbles (p - 1)/m and
 * (p - 1)/(v m) of the ideal m (f + b) (Narayanan et al., SC'21, sec. 2.2,
 * eq. 1 and the interleaved bubble that follows).  f and b are per stage;
 * a chunk takes 1/v of them. */
static void test_sim_event_run_closed_form_sweep(void **state)
{
	const double f = 1.3e-3, b = 2.9e-3;
	char why[256];
	int checked = 0;

	(void)state;
	for (int kind = SCHED_GPIPE; kind <= SCHED_INTERLEAVED; kind++)
		for (int p = 1; p <= 16; p += (p < 4 ? 1 : 3))
			for (int m = 1; m <= 64; m = m < 8 ? m + 1 : m * 2)
				for (int v = kind == SCHED_INTERLEAVED ? 2 : 1;
				     v <= (kind == SCHED_INTERLEAVED ? 4 : 1); v++) {
					struct sched s;
					struct sim_event_cost c;
					struct sim_event_result r;
					double ideal = m * (f + b), want;

					/* the interleaved form assumes a full first group */
					if (kind == SCHED_INTERLEAVED && m < p)
						continue;
					assert_int_equal(sched_build(&s, (enum sched_kind)kind, p, m, v, 0,
								     why, sizeof(why)), RC_OK);
					/* split the per-chunk backward in two to also use W */
					uniform_cost(&c, p, v, f / v, b / v / 2, b / v / 2);
					want = ideal * (1 + (p - 1.0) / ((double)v * m));
					assert_near(run_step(&s, &c, &r), want, 1e-12);
					assert_near(r.bubble_fraction, (p - 1.0) / ((double)v * m), 1e-9);
					for (int i = 0; i < p; i++) {
						assert_near(r.stage[i].busy_s, ideal, 1e-12);
						assert_near(r.stage[i].idle_s, want - ideal,
							    1e-9 * want);
					}
					sim_event_result_release(&r);
					sim_event_cost_release(&c);
					sched_release(&s);
					checked++;
				}
	assert_true(checked > 250);
}

/* ZB-H1 (Qi et al., ICLR 2024, sec. 2.1): with F = B = W the bubble is a
 * third of 1F1B's, (p - 1)(F + B - W) instead of (p - 1)(F + B + W), for
 * m >= p.  The paper gives no interleaved form; ours must beat interleaved
 * 1F1B's (p - 1)(F + B + W)/v and cannot beat (p - 1)(F + B - W)/v. */
static void test_sim_event_run_zero_bubble_h1(void **state)
{
	const double t = 1e-3;
	char why[256];

	(void)state;
	for (int p = 2; p <= 10; p += 2)
		for (int m = p; m <= 4 * p; m += p)
			for (int v = 1; v <= 3; v++) {
				struct sched s;
				struct sim_event_cost c;
				struct sim_event_result r;
				enum sched_kind k = v == 1 ? SCHED_1F1B : SCHED_INTERLEAVED;

				assert_int_equal(sched_build(&s, k, p, m, v, 1, why, sizeof(why)), RC_OK);
				uniform_cost(&c, p, v, t / v, t / v, t / v);
				run_step(&s, &c, &r);
				if (v == 1)
					assert_near(r.step_time_s, 3 * m * t + (p - 1) * t, 1e-12);
				assert_true(r.step_time_s >= (3 * m + (p - 1.0) / v) * t * (1 - 1e-12));
				assert_true(r.step_time_s < (3 * m + 3 * (p - 1.0) / v) * t);
				sim_event_result_release(&r);
				sim_event_cost_release(&c);
				sched_release(&s);
			}
}

/* ---- uneven stages and communication ------------------------------------ */

/* 1F1B, p = 4, m = 8; stages 0-2 take f = 1, b = 2; the last stage (logits
 * and loss) takes f = 2, b = 4.  Hand calculation: micro-batch 0 reaches
 * stage 3 at t = 3 (three forwards of 1).  From then on stage 3 never
 * waits: stage 2 ran F(i+1) before B(i) and finishes B(i-1), F(i+1) 3 time
 * units after stage 3's B(i-1), well within stage 3's 6.  So stage 3 ends
 * at 3 + 8 x 6 = 51, and its last gradient crosses stages 2, 1, 0 at 2
 * each: 57 = (m - 1) t_max + sum t_i = 7 x 6 + (3 + 3 + 3 + 6).  Uniform
 * stages of 3 would take (m + p - 1) 3 = 33: the heavy stage costs 24. */
static void test_sim_event_run_heavy_last_stage(void **state)
{
	struct sched s;
	struct sim_event_cost c;
	struct sim_event_result r;
	char why[256];

	(void)state;
	assert_int_equal(sched_build(&s, SCHED_1F1B, 4, 8, 1, 0, why, sizeof(why)), RC_OK);
	uniform_cost(&c, 4, 1, 1, 2, 0);
	assert_near(run_step(&s, &c, &r), 33, 1e-15);
	sim_event_result_release(&r);
	c.chunk[3].fwd_s = 2;
	c.chunk[3].bwd_input_s = 4;
	assert_near(run_step(&s, &c, &r), 57, 1e-15);
	assert_near(r.step_time_s - 33, 24, 1e-15);
	assert_near(r.stage[3].busy_s, 48, 1e-15);
	assert_near(r.stage[3].idle_s, 9, 1e-15);   /* 3 before, 6 after */
	assert_near(r.stage[0].busy_s, 24, 1e-15);
	assert_near(r.busy_max_s, 48, 1e-15);
	assert_near(r.bubble_fraction, 9.0 / 48, 1e-15);
	sim_event_result_release(&r);
	sim_event_cost_release(&c);
	sched_release(&s);
}

/* 1F1B, f = 1, b = 2, x = 0.25 per message between stages.  Hand
 * calculation for p = 2, m = 2: stage 0 runs F0 [0, 1], F1 [1, 2]; act 0
 * lands at 1.25, stage 1 runs F0 [1.25, 2.25], B0 [2.25, 4.25], F1 (landed
 * at 2.25) [4.25, 5.25], B1 [5.25, 7.25]; grad 0 lands at 4.5, stage 0 runs
 * B0 [4.5, 6.5]; grad 1 lands at 7.5, B1 [7.5, 9.5].  Step 9.5 = the
 * closed form 9 + 2 (p - 1) x, the fill and the drain.  For p = 4, m = 8
 * the steady state also waits: 1F1B receives the next gradient right after
 * sending the last one, so each round trip to a neighbour shows.  The
 * step lies between the closed form plus fill and drain, 33 + 1.5, and
 * the analytic model's sum of every transfer, 33 + 2 m x = 37. */
static void test_sim_event_run_p2p_fill_and_drain(void **state)
{
	struct sched s;
	struct sim_event_cost c;
	struct sim_event_result r;
	char why[256];

	(void)state;
	assert_int_equal(sched_build(&s, SCHED_1F1B, 2, 2, 1, 0, why, sizeof(why)), RC_OK);
	uniform_cost(&c, 2, 1, 1, 2, 0);
	c.stage[0].p2p_next_s = c.stage[1].p2p_next_s = 0.25;
	assert_near(run_step(&s, &c, &r), 9.5, 1e-15);
	/* stage 0 waits 2.5 for grad 0 (2 for stage 1's work, 0.5 the
	 * round trip) and 1 for grad 1; only the transfers count as exposed */
	assert_near(r.stage[0].p2p_exposed_s, 0.25 + 0.25, 1e-15);
	sim_event_result_release(&r);
	sim_event_cost_release(&c);
	sched_release(&s);

	assert_int_equal(sched_build(&s, SCHED_1F1B, 4, 8, 1, 0, why, sizeof(why)), RC_OK);
	uniform_cost(&c, 4, 1, 1, 2, 0);
	for (int i = 0; i < 4; i++)
		c.stage[i].p2p_next_s = 0.25;
	run_step(&s, &c, &r);
	assert_true(r.step_time_s >= 34.5 - 1e-12);
	assert_true(r.step_time_s <= 37 + 1e-12);
	sim_event_result_release(&r);
	sim_event_cost_release(&c);
	sched_release(&s);
}

/* Communication inside ops (TP) lengthens every op: uniform 1F1B with
 * 0.1 in each forward and 0.2 in each backward is (m + p - 1)(f + b + 0.3)
 * = 11 x 3.3 = 36.3 for p = 4, m = 8, of which m x 0.3 = 2.4 per stage is
 * communication. */
static void test_sim_event_run_comm_inside_ops(void **state)
{
	struct sched s;
	struct sim_event_cost c;
	struct sim_event_result r;
	char why[256];

	(void)state;
	assert_int_equal(sched_build(&s, SCHED_1F1B, 4, 8, 1, 0, why, sizeof(why)), RC_OK);
	uniform_cost(&c, 4, 1, 1, 2, 0);
	for (int i = 0; i < 4; i++) {
		c.chunk[i].comm_fwd_s = 0.1;
		c.chunk[i].comm_bwd_s = 0.2;
	}
	assert_near(run_step(&s, &c, &r), 36.3, 1e-14);
	assert_near(r.op_comm_s, 2.4, 1e-14);
	sim_event_result_release(&r);
	sim_event_cost_release(&c);
	sched_release(&s);
}

/* One stage, m = 4, f = 1, b = 2: the last backward runs from 10 to 12.
 * Four buckets fill at 10.5, 11, 11.5 and 12.  With 2 s of reduction each
 * bucket takes 0.5 and starts when full: the last ends at 12.5, 0.5
 * exposed (the last bucket, as the analytic model says); plus a 0.25
 * optimizer step, 12.75.  With 4 s each takes 1 and they queue: 10.5 ->
 * 11.5 -> 12.5 -> 13.5 -> 14.5, 2.5 exposed.
 * Traffic on the reduction's links (an EP all-to-all crossing the same
 * network) holds its channel for dp_busy_bwd_s from each backward's
 * start: with 2 s of reduction and 1 s of it in each backward, the
 * channel is free at 11 and the buckets run 11 -> 11.5 -> 12 -> 12.5 ->
 * 13: 1 s exposed, 13.25.  By hand as sim_step() prices it: the window
 * is the 2 s backward less the 1 s the links are busy, and 2 s of
 * reduction in 1 s of window leaves 1 s.  A contention cost of 0.2 s a
 * second (dp_slowdown) on the 1.5 s hidden of the first case adds 0.3:
 * 13.05. */
static void test_sim_event_run_dp_buckets_overlap(void **state)
{
	struct sched s;
	struct sim_event_cost c;
	struct sim_event_result r;
	struct sim_event_timeline tl;
	char why[256];

	(void)state;
	assert_int_equal(sched_build(&s, SCHED_1F1B, 1, 4, 1, 0, why, sizeof(why)), RC_OK);
	uniform_cost(&c, 1, 1, 1, 2, 0);
	c.dp_buckets = 4;
	c.chunk[0].dp_reduce_s = 2;
	c.stage[0].optimizer_s = 0.25;
	assert_int_equal(sim_event_run(&s, &c, &r, &tl), RC_OK);
	assert_near(r.step_time_s, 12.75, 1e-15);
	assert_near(r.dp_exposed_s, 0.5, 1e-15);
	assert_int_equal(tl.n_dp[0], 4);
	assert_near(tl.dp[0][0].start_s, 10.5, 1e-15);
	assert_near(tl.dp[0][3].end_s, 12.5, 1e-15);
	sim_event_timeline_release(&tl);
	sim_event_result_release(&r);
	c.chunk[0].dp_reduce_s = 4;
	assert_near(run_step(&s, &c, &r), 14.75, 1e-15);
	assert_near(r.dp_exposed_s, 2.5, 1e-15);
	assert_near(r.stage[0].dp_exposed_s, 2.5, 1e-15);
	sim_event_result_release(&r);
	c.chunk[0].dp_reduce_s = 2;
	c.chunk[0].dp_busy_bwd_s = 1;
	assert_near(run_step(&s, &c, &r), 13.25, 1e-15);
	assert_near(r.dp_exposed_s, 1, 1e-15);
	sim_event_result_release(&r);
	c.chunk[0].dp_busy_bwd_s = -1;
	assert_int_equal(sim_event_run(&s, &c, &r, NULL), RC_INPUT);
	c.chunk[0].dp_busy_bwd_s = 0;
	c.dp_slowdown = 0.2;
	assert_near(run_step(&s, &c, &r), 13.05, 1e-14);
	sim_event_result_release(&r);
	sim_event_cost_release(&c);
	sched_release(&s);
}

static void test_sim_event_run_rejects_mismatched_cost(void **state)
{
	struct sched s;
	struct sim_event_cost c;
	struct sim_event_result r;
	char why[256];

	(void)state;
	assert_int_equal(sched_build(&s, SCHED_1F1B, 4, 8, 1, 0, why, sizeof(why)), RC_OK);
	uniform_cost(&c, 3, 1, 1, 2, 0);
	assert_int_equal(sim_event_run(&s, &c, &r, NULL), RC_INPUT);
	assert_null(r.stage);
	sim_event_cost_release(&c);
	uniform_cost(&c, 4, 1, 1, -2, 0);
	assert_int_equal(sim_event_run(&s, &c, &r, NULL), RC_INPUT);
	sim_event_cost_release(&c);
	sched_release(&s);
}

/* The replay agrees with the validator on the peak, and no stage ever runs
 * two compute ops at once. */
static void test_sim_event_run_one_op_at_a_time(void **state)
{
	struct sched s;
	struct sim_event_cost c;
	struct sim_event_result r;
	struct sim_event_timeline tl;
	int peak[6];
	char why[256];

	(void)state;
	assert_int_equal(sched_build(&s, SCHED_INTERLEAVED, 6, 12, 3, 1, why, sizeof(why)), RC_OK);
	assert_int_equal(sched_validate(&s, peak, why, sizeof(why)), RC_OK);
	uniform_cost(&c, 6, 3, 1, 1, 0.5);
	c.chunk[0].fwd_s = 1.7; /* an embedding makes stage 0 uneven */
	for (int i = 0; i < 6; i++)
		c.stage[i].p2p_next_s = 0.2;
	assert_int_equal(sim_event_run(&s, &c, &r, &tl), RC_OK);
	for (int st = 0; st < 6; st++) {
		double free_at = 0;

		assert_int_equal(r.stage[st].peak_inflight, peak[st]);
		for (int i = 0; i < s.stages[st].n; i++) {
			const struct sim_event_span *sp = &tl.op[st][i];

			if (s.stages[st].ops[i].kind == SCHED_OP_SEND)
				continue;
			assert_true(sp->start_s >= free_at - 1e-12);
			assert_true(sp->end_s >= sp->start_s);
			free_at = sp->end_s;
		}
	}
	sim_event_timeline_release(&tl);
	sim_event_result_release(&r);
	sim_event_cost_release(&c);
	sched_release(&s);
}

/* ---- trace and Gantt ---------------------------------------------------- */

static void test_sim_trace_to_json_one_event_per_op(void **state)
{
	struct sched s;
	struct sim_event_cost c;
	struct sim_event_result r;
	struct sim_event_timeline tl;
	char why[256], path[] = "/tmp/gpuplan_trace_XXXXXX";
	char *json, *again;
	cJSON *root, *ev, *e;
	long compute = 0, sends = 0, n_compute = 0, n_sends = 0, dp = 0;
	int found_name = 0, fd;
	FILE *f;
	long len;

	(void)state;
	assert_int_equal(sched_build(&s, SCHED_INTERLEAVED, 4, 8, 2, 0, why, sizeof(why)), RC_OK);
	uniform_cost(&c, 4, 2, 1e-3, 2e-3, 0);
	c.dp_buckets = 2;
	for (int i = 0; i < 8; i++)
		c.chunk[i].dp_reduce_s = 1e-3;
	assert_int_equal(sim_event_run(&s, &c, &r, &tl), RC_OK);
	for (int st = 0; st < s.p; st++)
		for (int i = 0; i < s.stages[st].n; i++) {
			enum sched_op_kind k = s.stages[st].ops[i].kind;

			n_compute += k != SCHED_OP_SEND && k != SCHED_OP_RECV;
			n_sends += k == SCHED_OP_SEND;
		}

	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(sim_trace_write(path, &s, &tl), RC_OK);
	f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	json = malloc((size_t)len + 1);
	assert_int_equal(fread(json, 1, (size_t)len, f), (size_t)len);
	json[len] = '\0';
	fclose(f);
	unlink(path);

	root = cJSON_Parse(json);
	assert_non_null(root);
	ev = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
	assert_true(cJSON_IsArray(ev));
	cJSON_ArrayForEach(e, ev) {
		const char *ph = cJSON_GetObjectItemCaseSensitive(e, "ph")->valuestring;
		int pid = cJSON_GetObjectItemCaseSensitive(e, "pid")->valueint;
		const char *name = cJSON_GetObjectItemCaseSensitive(e, "name")->valuestring;

		if (strcmp(ph, "X") != 0)
			continue;
		assert_true(cJSON_GetObjectItemCaseSensitive(e, "ts")->valuedouble >= 0);
		assert_true(cJSON_GetObjectItemCaseSensitive(e, "dur")->valuedouble >= 0);
		compute += pid == 1;
		sends += pid == 2;
		dp += pid == 3;
		if (strcmp(name, "F3.c1") == 0 && pid == 1)
			found_name++;
	}
	assert_int_equal(compute, n_compute);
	assert_int_equal(compute, 4 * 8 * 2 * 2); /* F and B of 8 mbs x 2 chunks */
	assert_int_equal(sends, n_sends);
	assert_int_equal(dp, 4 * 2 * 2);          /* 2 buckets per chunk */
	assert_int_equal(found_name, 4);          /* F3.c1 on every stage */
	/* one complete event's time is the op's, in microseconds */
	assert_near(tl.op[0][0].end_s - tl.op[0][0].start_s, 1e-3, 1e-12);
	cJSON_Delete(root);

	/* same inputs, same bytes */
	again = sim_trace_to_json(&s, &tl);
	assert_int_equal(strlen(again) + 1, (size_t)len); /* file adds a newline */
	assert_memory_equal(again, json, strlen(again));
	free(again);
	free(json);
	sim_event_timeline_release(&tl);
	sim_event_result_release(&r);
	sim_event_cost_release(&c);
	sched_release(&s);
}

static void test_sim_trace_write_reports_bad_path(void **state)
{
	struct sched s;
	struct sim_event_cost c;
	struct sim_event_result r;
	struct sim_event_timeline tl;
	char why[256];

	(void)state;
	assert_int_equal(sched_build(&s, SCHED_1F1B, 2, 2, 1, 0, why, sizeof(why)), RC_OK);
	uniform_cost(&c, 2, 1, 1, 2, 0);
	assert_int_equal(sim_event_run(&s, &c, &r, &tl), RC_OK);
	assert_int_equal(sim_trace_write("/nonexistent-dir/trace.json", &s, &tl), RC_ERR);
	sim_event_timeline_release(&tl);
	sim_event_result_release(&r);
	sim_event_cost_release(&c);
	sched_release(&s);
}

/* GPipe p = 2, m = 2, f = 1, b = 2 takes (m + p - 1)(f + b) = 9; at 36
 * columns a column is a quarter unit, so stage 0 reads F0 F1 (4 columns
 * each), idle 3 units while stage 1 works, then B0 B1 (8 each); stage 1
 * starts one unit late and ends two early. */
static void test_sim_event_gantt_rows(void **state)
{
	struct sched s;
	struct sim_event_cost c;
	struct sim_event_result r;
	struct sim_event_timeline tl;
	char why[256], *g;

	(void)state;
	assert_int_equal(sched_build(&s, SCHED_GPIPE, 2, 2, 1, 0, why, sizeof(why)), RC_OK);
	uniform_cost(&c, 2, 1, 1, 2, 0);
	assert_int_equal(sim_event_run(&s, &c, &r, &tl), RC_OK);
	g = sim_event_gantt(&s, &tl, 36);
	assert_non_null(strstr(g, "stage 0 F0ffF1ff............B0bbbbbbB1bbbbbb\n"));
	assert_non_null(strstr(g, "stage 1 ....F0ffF1ffB0bbbbbbB1bbbbbb........\n"));
	assert_non_null(strstr(g, "1 column = 250 ms"));
	free(g);
	sim_event_timeline_release(&tl);
	sim_event_result_release(&r);
	sim_event_cost_release(&c);
	sched_release(&s);
}

/* ---- costs from the analytic model -------------------------------------- */

/* Llama-3-8B's shapes (Meta's model card: 32 layers, hidden 4096, 32 heads,
 * 8 KV heads, SwiGLU 14336, vocabulary 128256) on H100 SXM figures. */
static void llama8b_on_h100(struct sim_model *m, struct sim_cluster *c, int free_links)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->name, sizeof(m->name), "llama3-8b");
	m->layers = 32;
	m->hidden = 4096;
	m->heads = 32;
	m->kv_heads = 8;
	m->ffn = 14336;
	m->vocab = 128256;
	m->seq = 4096;
	m->mlp = SIM_MLP_SWIGLU;
	memset(c, 0, sizeof(*c));
	snprintf(c->gpu.name, sizeof(c->gpu.name), "H100-SXM5-80GB");
	c->gpu.memory_bytes = 80e9;
	c->gpu.hbm_bytes_per_s = 3.35e12;
	c->gpu.bf16_flops_per_s = 989e12;
	c->gpu.nvlink = c->gpu.p2p = 1;
	c->gpus_per_node = 8;
	c->intra_bytes_per_s = free_links ? 1e30 : 450e9;
	c->inter_bytes_per_s = free_links ? 1e30 : 50e9;
	c->latency_s = free_links ? 1e-300 : 0;
}

static void compare(const struct sim_model *m, const struct sim_cluster *c, int tp, int pp,
		    int dp, int gbs, int v, double rel)
{
	struct sim_parallel par;
	struct sim_result r;
	struct sim_event_result e;
	char why[256];

	sim_parallel_init(&par);
	par.tp = tp;
	par.pp = pp;
	par.dp = dp;
	par.gbs = gbs;
	par.interleave = v;
	assert_int_equal(sim_check(m, &par, c, why, sizeof(why)), RC_OK);
	sim_step(m, &par, c, &r);
	assert_int_equal(sim_event_simulate(m, &par, c, 0, &e, NULL, NULL, why, sizeof(why)), RC_OK);
	assert_near(e.step_time_s, r.step_time_s, rel);
	assert_int_equal(e.p, pp);
	sim_event_result_release(&e);
}

/* With free links the analytic model is the closed form of the same
 * pipeline: one stage matches to rounding; 1F1B with a heavier first and
 * last stage matches (m - 1) t_max + sum t_i (Narayanan et al., SC'21,
 * sec. 2.2, the form sim_step() uses; the hand case above shows the
 * replay gives it); interleaving, where sim_step() divides the uneven
 * bubble by v, within 0.1%. */
static void test_sim_event_cost_from_model_matches_analytic(void **state)
{
	struct sim_model m;
	struct sim_cluster c;

	(void)state;
	llama8b_on_h100(&m, &c, 1);
	compare(&m, &c, 1, 1, 1, 16, 1, 1e-12);
	compare(&m, &c, 1, 4, 1, 16, 1, 1e-6);
	compare(&m, &c, 2, 4, 1, 64, 1, 1e-6);
	compare(&m, &c, 1, 4, 1, 16, 2, 1e-3);
	compare(&m, &c, 1, 8, 1, 64, 4, 1e-3);
	/* Real links, 1F1B, one node: the replay hides some p2p and times
	 * DP buckets itself; the two agree within 1%. */
	llama8b_on_h100(&m, &c, 0);
	compare(&m, &c, 2, 4, 1, 64, 1, 0.01);
	compare(&m, &c, 2, 2, 2, 64, 1, 0.01);
	/* Four nodes, DP inside them and the stages across (Megatron-Core's
	 * rank order): sim_step() charges every send on the critical path,
	 * as Megatron's blocking 1F1B exchanges are; the replay overlaps
	 * them with compute.  It is faster, by no more than the sends. */
	{
		struct sim_parallel par;
		struct sim_result r;
		struct sim_event_result e;
		char why[256];

		sim_parallel_init(&par);
		par.tp = 2;
		par.pp = 4;
		par.dp = 4;
		par.gbs = 256;
		sim_step(&m, &par, &c, &r);
		assert_int_equal(sim_event_simulate(&m, &par, &c, 0, &e, NULL, NULL, why,
						    sizeof(why)), RC_OK);
		assert_true(r.breakdown.pp_comm_s > 0.05 * r.step_time_s);
		assert_true(e.step_time_s < r.step_time_s);
		assert_true(r.step_time_s - e.step_time_s <= r.breakdown.pp_comm_s);
		sim_event_result_release(&e);
	}
}

/* Interleaved with DP across nodes (TP 8 fills each node, so the stages
 * cross them too): chunk v - 1 finishes its backward before chunk 0
 * does, so its gradients reduce while chunk 0 still computes.
 * sim_step() hides only one backward's worth; the replay shows less
 * exposed DP and a shorter step, shorter by no more than that DP and the
 * sends between stages it overlaps (test above). */
static void test_sim_event_simulate_interleaved_hides_more_dp(void **state)
{
	struct sim_model m;
	struct sim_cluster c;
	struct sim_parallel par;
	struct sim_result r;
	struct sim_event_result e;
	struct sched s;
	char why[256];

	(void)state;
	llama8b_on_h100(&m, &c, 0);
	sim_parallel_init(&par);
	par.tp = 8;
	par.pp = 8;
	par.dp = 2;
	par.gbs = 128;
	par.interleave = 2;
	sim_step(&m, &par, &c, &r);
	assert_int_equal(sim_event_simulate(&m, &par, &c, 0, &e, &s, NULL, why, sizeof(why)),
			 RC_OK);
	assert_int_equal(s.kind, SCHED_INTERLEAVED);
	assert_int_equal(s.m, 64);
	assert_true(e.dp_exposed_s < r.breakdown.dp_comm_exposed_s);
	assert_true(e.step_time_s < r.step_time_s);
	assert_true(r.step_time_s - e.step_time_s <=
		    r.breakdown.pp_comm_s + r.breakdown.dp_comm_exposed_s - e.dp_exposed_s);
	sim_event_result_release(&e);
	sched_release(&s);
}

/* What the trainer leaves after the optimizer (sim_parallel.dp_overlap)
 * waits at the end of the replayed step as in sim_step(): all the DP
 * traffic, or ZeRO-1's gather, half of it, which a backward hides when
 * it overlaps (one node: 2 stages, DP 4 over NVLink: 35.5 ms in all,
 * 0.4 ms of it exposed when all overlaps, beside the contention cost of
 * the rest); the replay and the analytic
 * step agree within 1% either way. */
static void test_sim_event_simulate_dp_after_optimizer(void **state)
{
	struct sim_model m;
	struct sim_cluster c;
	struct sim_parallel par;
	struct sim_result r;
	struct sim_event_result all, e;
	char why[256];

	(void)state;
	llama8b_on_h100(&m, &c, 0);
	sim_parallel_init(&par);
	par.pp = 2;
	par.dp = 4;
	par.gbs = 64;
	par.zero = 1;
	assert_int_equal(sim_event_simulate(&m, &par, &c, 0, &all, NULL, NULL, why, sizeof(why)),
			 RC_OK);
	for (int o = SIM_DP_OVERLAP_SUMS; o <= SIM_DP_OVERLAP_NONE; o++) {
		double after;

		par.dp_overlap = (enum sim_dp_overlap)o;
		sim_step(&m, &par, &c, &r);
		assert_int_equal(sim_event_simulate(&m, &par, &c, 0, &e, NULL, NULL, why,
						    sizeof(why)), RC_OK);
		after = r.breakdown.dp_comm_total_s / (o == SIM_DP_OVERLAP_NONE ? 1 : 2);
		assert_true(after > 10e-3);
		/* the contention cost of what it hides aside */
		assert_true(all.dp_exposed_s - SIM_OVERLAP_SLOWDOWN * r.breakdown.dp_comm_total_s
			    < 0.05 * after);
		assert_true(e.dp_exposed_s > 0.9 * after);
		/* less the contention cost of what no longer hides */
		assert_true(e.step_time_s - all.step_time_s > (0.9 - SIM_OVERLAP_SLOWDOWN) * after);
		assert_near(e.step_time_s, r.step_time_s, 0.01);
		sim_event_result_release(&e);
	}
	sim_event_result_release(&all);
}

/* The per-chunk costs add up to the model: layers split over p v virtual
 * stages, embedding on the first, the head on the last; the split
 * backward's parts sum to the whole. */
static void test_sim_event_cost_from_model_places_layers(void **state)
{
	struct sim_model m;
	struct sim_cluster c;
	struct sim_parallel par;
	struct sim_event_cost k;
	char why[256];

	(void)state;
	llama8b_on_h100(&m, &c, 0);
	sim_parallel_init(&par);
	par.pp = 4;
	par.interleave = 2;
	par.gbs = 8;
	par.dp = 2;
	assert_int_equal(sim_event_cost_from_model(&k, &m, &par, &c, why, sizeof(why)), RC_OK);
	assert_int_equal(k.p, 4);
	assert_int_equal(k.v, 2);
	/* virtual stage 0 (stage 0, chunk 0) has the embedding, virtual stage 7
	 * (stage 3, chunk 1) the head; the rest are four plain layers each */
	assert_true(k.chunk[0].fwd_s > k.chunk[1].fwd_s);
	assert_true(k.chunk[3 * 2 + 1].fwd_s > k.chunk[3 * 2].fwd_s);
	assert_near(k.chunk[1 * 2].fwd_s, k.chunk[2 * 2 + 1].fwd_s, 1e-12);
	assert_true(k.chunk[2].bwd_input_s > 0 && k.chunk[2].bwd_weight_s > 0);
	assert_true(k.chunk[2].dp_reduce_s > 0);
	assert_true(k.stage[0].p2p_next_s > 0);
	assert_true(k.dp_buckets >= 1);
	sim_event_cost_release(&k);

	par.gbs = 7; /* not a multiple of mbs x dp */
	assert_int_equal(sim_event_cost_from_model(&k, &m, &par, &c, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "gbs"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sched_build_rejects_bad_shapes),
		cmocka_unit_test(test_sched_kind_parse_names),
		cmocka_unit_test(test_sched_validate_1f1b_peak_is_p_minus_i),
		cmocka_unit_test(test_sched_validate_many_shapes),
		cmocka_unit_test(test_sched_inflight_bound_interleaved_factor),
		cmocka_unit_test(test_sched_messages_pair),
		cmocka_unit_test(test_sched_validate_catches_backward_first),
		cmocka_unit_test(test_sched_validate_catches_unmatched_send),
		cmocka_unit_test(test_sched_validate_catches_deadlock),
		cmocka_unit_test(test_sched_validate_catches_inflight_over_bound),
		cmocka_unit_test(test_sim_event_run_closed_form_sweep),
		cmocka_unit_test(test_sim_event_run_zero_bubble_h1),
		cmocka_unit_test(test_sim_event_run_heavy_last_stage),
		cmocka_unit_test(test_sim_event_run_p2p_fill_and_drain),
		cmocka_unit_test(test_sim_event_run_comm_inside_ops),
		cmocka_unit_test(test_sim_event_run_dp_buckets_overlap),
		cmocka_unit_test(test_sim_event_run_rejects_mismatched_cost),
		cmocka_unit_test(test_sim_event_run_one_op_at_a_time),
		cmocka_unit_test(test_sim_trace_to_json_one_event_per_op),
		cmocka_unit_test(test_sim_trace_write_reports_bad_path),
		cmocka_unit_test(test_sim_event_gantt_rows),
		cmocka_unit_test(test_sim_event_cost_from_model_matches_analytic),
		cmocka_unit_test(test_sim_event_cost_from_model_places_layers),
		cmocka_unit_test(test_sim_event_simulate_interleaved_hides_more_dp),
		cmocka_unit_test(test_sim_event_simulate_dp_after_optimizer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
