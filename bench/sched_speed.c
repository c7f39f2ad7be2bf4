/*
 * sched_speed.c - how fast pipeline schedules are built, validated and
 * replayed as events: operations simulated per second for a few shapes,
 * and the time of one interleaved step with p = 16, v = 4, m = 256 (the
 * planner re-simulates its best plans this way, so it must stay in the
 * low milliseconds).
 *
 *   build/bench/sched_speed
 *
 * Each figure is the best of several repetitions (the machine is shared;
 * the minimum is the least disturbed).  Exits 1 when that interleaved step
 * takes 10 ms or more to replay.  It does not time trace writing.
 */
#include <stdio.h>
#include <time.h>

#include "sched.h"
#include "sim_event.h"

#define REPS 7
#define LIMIT_S 10e-3

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct timing {
	double build_s, validate_s, replay_s;
	long ops;
};

static int time_shape(enum sched_kind kind, int p, int m, int v, int split, struct timing *t)
{
	char why[256];

	t->build_s = t->validate_s = t->replay_s = 1e30;
	for (int rep = 0; rep < REPS; rep++) {
		struct sched s;
		struct sim_event_cost c;
		struct sim_event_result r;
		double t0, t1, t2, t3;

		t0 = now_s();
		if (sched_build(&s, kind, p, m, v, split, why, sizeof(why)) != RC_OK) {
			fprintf(stderr, "error: sched_speed: %s\n", why);
			return 1;
		}
		t1 = now_s();
		if (sched_validate(&s, NULL, why, sizeof(why)) != RC_OK) {
			fprintf(stderr, "error: sched_speed: %s\n", why);
			sched_release(&s);
			return 1;
		}
		t2 = now_s();
		/* Per-chunk times of a 1/v share of a 5 ms forward, 10 ms
		 * backward stage, a 0.2 ms transfer and a DP reduction in 4
		 * buckets: every code path of the replay runs. */
		sim_event_cost_init(&c, p, v);
		c.dp_buckets = 4;
		for (int i = 0; i < p * v; i++) {
			c.chunk[i].fwd_s = 5e-3 / v;
			c.chunk[i].bwd_input_s = 5e-3 / v;
			c.chunk[i].bwd_weight_s = 5e-3 / v;
			c.chunk[i].comm_fwd_s = 0.1e-3 / v;
			c.chunk[i].dp_reduce_s = 20e-3 / v;
		}
		for (int i = 0; i < p; i++)
			c.stage[i].p2p_next_s = 0.2e-3;
		t3 = now_s();
		if (sim_event_run(&s, &c, &r, NULL) != RC_OK) {
			sim_event_cost_release(&c);
			sched_release(&s);
			return 1;
		}
		t3 = now_s() - t3;
		if (t1 - t0 < t->build_s)
			t->build_s = t1 - t0;
		if (t2 - t1 < t->validate_s)
			t->validate_s = t2 - t1;
		if (t3 < t->replay_s)
			t->replay_s = t3;
		t->ops = r.ops;
		sim_event_result_release(&r);
		sim_event_cost_release(&c);
		sched_release(&s);
	}
	return 0;
}

int main(void)
{
	static const struct {
		enum sched_kind kind;
		int p, m, v, split;
	} shapes[] = {
		{ SCHED_1F1B, 8, 64, 1, 0 },
		{ SCHED_1F1B, 16, 256, 1, 1 },
		{ SCHED_GPIPE, 16, 256, 1, 0 },
		{ SCHED_INTERLEAVED, 8, 64, 2, 0 },
		{ SCHED_INTERLEAVED, 16, 256, 4, 0 },
		{ SCHED_INTERLEAVED, 16, 256, 4, 1 },
	};
	struct timing big = { 0 };
	int status = 0;

	printf("pipeline schedules: build, validate and event replay (best of %d)\n", REPS);
	printf("%-12s %4s %5s %3s %5s %9s %10s %11s %10s %14s\n", "schedule", "p", "m", "v",
	       "split", "ops", "build ms", "validate ms", "replay ms", "replay ops/s");
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		struct timing t;

		if (time_shape(shapes[i].kind, shapes[i].p, shapes[i].m, shapes[i].v,
			       shapes[i].split, &t) != 0)
			return 1;
		printf("%-12s %4d %5d %3d %5s %9ld %10.3f %11.3f %10.3f %14.3g\n",
		       sched_kind_name(shapes[i].kind), shapes[i].p, shapes[i].m, shapes[i].v,
		       shapes[i].split ? "B/W" : "-", t.ops, t.build_s * 1e3,
		       t.validate_s * 1e3, t.replay_s * 1e3, t.ops / t.replay_s);
		if (shapes[i].kind == SCHED_INTERLEAVED && shapes[i].p == 16 &&
		    shapes[i].v == 4 && !shapes[i].split)
			big = t;
	}
	printf("interleaved p=16 v=4 m=256: replay %.3f ms, with build %.3f ms (limit %.0f ms): %s\n",
	       big.replay_s * 1e3, (big.build_s + big.replay_s) * 1e3, LIMIT_S * 1e3,
	       big.build_s + big.replay_s < LIMIT_S ? "ok" : "too slow");
	if (big.build_s + big.replay_s >= LIMIT_S)
		status = 1;
	return status;
}
