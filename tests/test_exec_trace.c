/*
 * test_exec_trace.c - the measured timeline of `execute --trace`: the
 * recorder (exec_trace.c) on the host clock through a real serial run and
 * on device marks through a stand-in timer, whole steps kept when the
 * buffer is short, and the Chrome trace JSON (exec_trace_json.c) named as
 * the simulator's timeline names the same schedule.  Multi-rank traces
 * are checked under mpirun by tests/mpi/test_layouts.sh.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "train/exec_train.h"
#include "sim_event.h"

/* A small serial run: 2 layers x hidden 32, 4 micro-batches of 2
 * sequences (gbs 8), 1F1B on one stage. */
static void small_opts(struct exec_opts *o, int steps)
{
	exec_opts_init(o);
	o->model.layers = 2;
	o->model.hidden = 32;
	o->model.ffn = 128;
	o->model.seq = 16;
	o->model.vocab = 64;
	o->par.mbs = 2;
	o->par.gbs = 8;
	o->steps = steps;
	o->trace = 1;
	exec_opts_derive(o);
}

static cJSON *parse_trace(const struct exec_opts *o, const struct exec_trace *tr)
{
	char *s = exec_trace_to_json(o, tr);
	cJSON *j = cJSON_Parse(s);

	free(s);
	assert_non_null(j);
	return j;
}

static double num(const cJSON *obj, const char *key)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(obj, key);

	assert_true(cJSON_IsNumber(x));
	return x->valuedouble;
}

static const char *str(const cJSON *obj, const char *key)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(obj, key);

	assert_true(cJSON_IsString(x));
	return x->valuestring;
}

/* The "X" events of trace j on process pid, thread tid (tid < 0: any),
 * into out[max]; returns how many. */
static int events_on(const cJSON *j, int pid, int tid, const cJSON **out, int max)
{
	const cJSON *e;
	int n = 0;

	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "traceEvents")) {
		if (strcmp(str(e, "ph"), "X") != 0 || (int)num(e, "pid") != pid)
			continue;
		if (tid >= 0 && (int)num(e, "tid") != tid)
			continue;
		assert_true(n < max);
		out[n++] = e;
	}
	return n;
}

static int cmp_ts(const void *a, const void *b)
{
	double x = num(*(const cJSON *const *)a, "ts"), y = num(*(const cJSON *const *)b, "ts");

	return (x > y) - (x < y);
}

/* No two events of one thread overlap: sorted by start, each ends before
 * the next begins (to the nanosecond the file keeps). */
static void assert_no_overlap(const cJSON *j, int pid, int tid)
{
	const cJSON *ev[4096];
	int n = events_on(j, pid, tid, ev, 4096);

	qsort(ev, (size_t)n, sizeof(ev[0]), cmp_ts);
	for (int i = 0; i < n; i++) {
		assert_true(num(ev[i], "dur") >= 0);
		if (i + 1 < n && num(ev[i], "ts") + num(ev[i], "dur") > num(ev[i + 1], "ts") + 1e-3)
			fail_msg("%s at %.3f us ends after %s begins at %.3f us",
				 str(ev[i], "name"), num(ev[i], "ts") + num(ev[i], "dur"),
				 str(ev[i + 1], "name"), num(ev[i + 1], "ts"));
	}
}

/* The event named name in step `step` among ev[n]; fails unless exactly
 * one. */
static const cJSON *the_event(const cJSON **ev, int n, const char *name, int step)
{
	const cJSON *found = NULL;
	int count = 0;

	for (int i = 0; i < n; i++) {
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev[i], "args");

		if (strcmp(str(ev[i], "name"), name) == 0 && (int)num(args, "step") == step) {
			found = ev[i];
			count++;
		}
	}
	if (count != 1)
		fail_msg("step %d: %d events named %s, expected 1", step, count, name);
	return found;
}

/* ---- a serial run on the host clock ----------------------------------- */

static void test_exec_trace_serial_run_one_event_per_op(void **state)
{
	struct exec_opts o;
	struct exec_result r;
	const cJSON *ev[512], *other, *e;
	cJSON *j;
	int n, m = 4, meta_names = 0;

	(void)state;
	small_opts(&o, 2);
	assert_int_equal(exec_run(&o, &r), RC_OK);
	assert_int_equal(r.trace.world, 1);
	assert_int_equal(r.trace.steps, 2);
	assert_int_equal(r.trace.dropped, 0);
	assert_int_equal(r.trace.device_clock, 0);
	j = parse_trace(&o, &r.trace);
	other = cJSON_GetObjectItemCaseSensitive(j, "otherData");
	assert_string_equal(str(other, "clock"), "monotonic");
	assert_string_equal(str(other, "schedule"), "1f1b");
	assert_int_equal((int)num(other, "micro_batches"), m);
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "traceEvents"))
		if (strcmp(str(e, "ph"), "M") == 0 && strcmp(str(e, "name"), "process_name") == 0) {
			assert_string_equal(str(cJSON_GetObjectItemCaseSensitive(e, "args"), "name"),
					    "rank 0 (dp 0, pp 0, tp 0)");
			meta_names++;
		}
	assert_int_equal(meta_names, 1);

	/* one stage, one chunk: per step m forwards, m backwards and the
	 * optimizer on the compute thread (tid 1), 2 x (2 m + 1) = 18 in all;
	 * a single rank talks to nobody, so the communication thread is empty */
	n = events_on(j, 1, 1, ev, 512);
	assert_int_equal(n, 2 * (2 * m + 1));
	assert_int_equal(events_on(j, 1, 2, ev + n, 512 - n), 0);
	for (int s = 1; s <= 2; s++) {
		const cJSON *opt = the_event(ev, n, "optimizer", s);

		for (int mb = 0; mb < m; mb++) {
			char f[16], b[16];
			const cJSON *fe, *be;

			snprintf(f, sizeof(f), "F%d", mb);
			snprintf(b, sizeof(b), "B%d", mb);
			fe = the_event(ev, n, f, s);
			be = the_event(ev, n, b, s);
			assert_string_equal(str(fe, "cat"), "forward");
			assert_string_equal(str(be, "cat"), "backward");
			assert_int_equal((int)num(cJSON_GetObjectItemCaseSensitive(fe, "args"),
						  "micro_batch"), mb);
			/* a micro-batch's forward runs before its backward, both
			 * before the step's optimizer */
			assert_true(num(fe, "ts") + num(fe, "dur") <= num(be, "ts") + 1e-3);
			assert_true(num(be, "ts") + num(be, "dur") <= num(opt, "ts") + 1e-3);
		}
	}
	assert_no_overlap(j, 1, 1);
	cJSON_Delete(j);
	exec_result_release(&r);
	assert_null(r.trace.ev);
}

/* The compute events of one step are the simulator's compute events for
 * the same schedule, name for name (simulate --timeline beside it). */
static void test_exec_trace_names_match_simulator(void **state)
{
	struct exec_opts o;
	struct exec_result r;
	struct sim_cluster cl;
	struct sim_event_result res;
	struct sim_event_timeline tl;
	struct sched sc;
	const cJSON *mine[512], *sims[512];
	cJSON *j, *sj;
	char why[256], *s;
	int n, ns, matched = 0;

	(void)state;
	small_opts(&o, 1);
	assert_int_equal(exec_run(&o, &r), RC_OK);
	j = parse_trace(&o, &r.trace);
	exec_cpu_cluster(&cl, 1);
	assert_int_equal(sim_event_simulate(&o.model, &o.par, &cl, 0, &res, &sc, &tl, why,
					    sizeof(why)), RC_OK);
	s = sim_trace_to_json(&sc, &tl);
	sj = cJSON_Parse(s);
	free(s);
	assert_non_null(sj);
	/* the simulator's stage 0 is process 1, thread 0 */
	ns = events_on(sj, 1, 0, sims, 512);
	n = events_on(j, 1, 1, mine, 512);
	assert_int_equal(ns, 8);
	for (int i = 0; i < ns; i++)
		for (int k = 0; k < n; k++)
			if (strcmp(str(sims[i], "name"), str(mine[k], "name")) == 0 &&
			    strcmp(str(sims[i], "cat"), str(mine[k], "cat")) == 0)
				matched++;
	assert_int_equal(matched, ns);
	cJSON_Delete(sj);
	cJSON_Delete(j);
	sched_release(&sc);
	sim_event_timeline_release(&tl);
	sim_event_result_release(&res);
	exec_result_release(&r);
}

static void test_exec_trace_off_records_nothing(void **state)
{
	struct exec_opts o;
	struct exec_result r;

	(void)state;
	small_opts(&o, 1);
	o.trace = 0;
	assert_int_equal(exec_run(&o, &r), RC_OK);
	assert_null(r.trace.ev);
	assert_int_equal(r.trace.n, 0);
	exec_result_release(&r);
}

/* ---- device marks ---------------------------------------------------- */

/* A stand-in for a GPU's timer: a mark takes the time fake_now holds,
 * which the test sets, so every figure below is exact. */
static double fake_now;
static double fake_marks[64];
static int fake_marks_on[3];  /* marks recorded per stream */

static void *fake_timer_new(struct exec_device *d, int n)
{
	(void)d;
	assert_true(n <= 64);
	return fake_marks;
}

static enum rc fake_timer_mark(struct exec_device *d, void *timer, int i, int stream)
{
	(void)d;
	((double *)timer)[i] = fake_now;
	fake_marks_on[stream]++;
	return RC_OK;
}

static enum rc fake_timer_elapsed(struct exec_device *d, void *timer, int from, int to,
				  double *seconds)
{
	(void)d;
	*seconds = ((double *)timer)[to] - ((double *)timer)[from];
	return RC_OK;
}

static void fake_timer_free(struct exec_device *d, void *timer, int n)
{
	(void)d;
	(void)timer;
	(void)n;
}

static const struct exec_backend fake_backend = {
	.name = "fake",
	.timer_new = fake_timer_new,
	.timer_mark = fake_timer_mark,
	.timer_elapsed = fake_timer_elapsed,
	.timer_free = fake_timer_free,
};

static struct exec_trace_event ev_of(int kind, int mb)
{
	struct exec_trace_event e;

	memset(&e, 0, sizeof(e));
	e.kind = (unsigned char)kind;
	e.mb = mb;
	e.peer = -1;
	return e;
}

/* A step's phases from the events: two ranks, three steps; step 1 is
 * left out (warm-up).  Rank 0 spends 0.5 + 1.0 s a step in forward and
 * backward and 0.1 s in the optimizer, rank 1 0.6 + 1.2 s and 0.05 s:
 * the largest of each, 1.8 s and 0.1 s.  Collectives do not count.  With
 * one step recorded, that step counts; with no passes, nothing does. */
static void test_exec_trace_phases(void **state)
{
	struct exec_trace_event ev[32];
	struct exec_trace t = { ev, 0, 0, 3, 2, 0 };
	double fb, opt;

	(void)state;
	for (int rank = 0; rank < 2; rank++)
		for (int step = 1; step <= 3; step++) {
			double f = rank ? 0.6 : 0.5, b = 2 * f, o = rank ? 0.05 : 0.1;
			double w = step == 1 ? 3 : 1;   /* step 1 three times slower */
			int kinds[4] = { EXEC_TRACE_FWD, EXEC_TRACE_BWD, EXEC_TRACE_OPTIMIZER,
					 EXEC_TRACE_COLL };
			double d[4] = { w * f, w * b, w * o, 7 };

			for (int k = 0; k < 4; k++) {
				ev[t.n] = ev_of(kinds[k], k < 2 ? 0 : -1);
				ev[t.n].rank = rank;
				ev[t.n].step = step;
				ev[t.n].start_s = 100.0 * step + k;
				ev[t.n].end_s = ev[t.n].start_s + d[k];
				t.n++;
			}
		}
	assert_int_equal(exec_trace_phases(&t, &fb, &opt), 0);
	assert_near(fb, 1.8, 1e-12);
	assert_near(opt, 0.1, 1e-12);
	t.steps = 1;
	assert_int_equal(exec_trace_phases(&t, &fb, &opt), 0);
	assert_near(fb, 3 * 1.8, 1e-12);
	assert_near(opt, 3 * 0.1, 1e-12);
	t.n = 0;
	assert_int_equal(exec_trace_phases(&t, &fb, &opt), -1);
	assert_true(fb == 0 && opt == 0);
}

/* Step 1's origin at device time 10 s; step 2's at 20 s.  An event marked
 * at 11..13 in step 1 runs 1..3 s after the origin; one marked at 21..22
 * in step 2 runs 11..12 s after it (the step origins chained: 10 + 1). */
static void test_exec_tracer_device_marks_chain_steps(void **state)
{
	struct exec_device d;
	struct exec_tracer *tr;
	struct exec_trace out;
	struct exec_trace_event a = ev_of(EXEC_TRACE_FWD, 0), b = ev_of(EXEC_TRACE_COLL, -1);
	long h;

	(void)state;
	exec_device_init(&d, &fake_backend);
	tr = exec_tracer_new(&d, 0, 1, 4, 2);
	assert_non_null(tr);
	fake_marks_on[0] = fake_marks_on[1] = 0;
	fake_now = 10;
	assert_int_equal(exec_tracer_step(tr, 1), RC_OK);
	fake_now = 11;
	h = exec_tracer_begin(tr, &a, EXEC_STREAM_COMPUTE);
	assert_int_equal(h, 0);
	fake_now = 13;
	exec_tracer_end(tr, h, EXEC_STREAM_COMPUTE);
	fake_now = 20;
	assert_int_equal(exec_tracer_step(tr, 2), RC_OK);
	fake_now = 21;
	h = exec_tracer_begin(tr, &b, EXEC_STREAM_COMM);
	fake_now = 22;
	exec_tracer_end(tr, h, EXEC_STREAM_COMM);
	assert_int_equal(exec_tracer_gather(tr, 0, &out), RC_OK);
	assert_int_equal(out.n, 2);
	assert_int_equal(out.device_clock, 1);
	assert_int_equal(out.steps, 2);
	assert_near(out.ev[0].start_s, 1.0, 1e-12);
	assert_near(out.ev[0].end_s, 3.0, 1e-12);
	assert_int_equal(out.ev[0].step, 1);
	assert_near(out.ev[1].start_s, 11.0, 1e-12);
	assert_near(out.ev[1].end_s, 12.0, 1e-12);
	assert_int_equal(out.ev[1].step, 2);
	/* compute on the compute stream (2 origins, 2 marks), the collective's
	 * two marks on the communication stream */
	assert_int_equal(fake_marks_on[EXEC_STREAM_COMPUTE], 4);
	assert_int_equal(fake_marks_on[EXEC_STREAM_COMM], 2);
	exec_trace_release(&out);
	exec_tracer_free(tr);
	exec_tracer_free(NULL);
}

/* A sum left running (all_reduce_start) ends where it ends: on a device
 * at the mark queued after it on the reduction stream (12 s, not at the
 * wait, 15 s); on the host's clock, which cannot see it end, at the wait
 * for it, after a forward that ran meanwhile (1 ms) has ended. */
static void test_exec_tracer_async_ends(void **state)
{
	struct exec_device d;
	struct exec_tracer *tr;
	struct exec_trace out;
	struct exec_trace_event a = ev_of(EXEC_TRACE_COLL_ASYNC, -1), f = ev_of(EXEC_TRACE_FWD, 0);
	struct timespec ms = { 0, 1000000 };
	long h;

	(void)state;
	exec_device_init(&d, &fake_backend);
	tr = exec_tracer_new(&d, 0, 1, 4, 1);
	memset(fake_marks_on, 0, sizeof(fake_marks_on));
	fake_now = 10;
	assert_int_equal(exec_tracer_step(tr, 1), RC_OK);
	fake_now = 11;
	h = exec_tracer_begin(tr, &a, EXEC_STREAM_REDUCE);
	fake_now = 12;
	exec_tracer_end_async(tr, h, EXEC_STREAM_REDUCE);
	fake_now = 15;
	exec_tracer_waited(tr);
	assert_int_equal(exec_tracer_gather(tr, 0, &out), RC_OK);
	assert_int_equal(out.n, 1);
	assert_near(out.ev[0].start_s, 1.0, 1e-12);
	assert_near(out.ev[0].end_s, 2.0, 1e-12);
	assert_int_equal(fake_marks_on[EXEC_STREAM_REDUCE], 2);
	exec_trace_release(&out);
	exec_tracer_free(tr);

	exec_device_init(&d, &exec_cpu_backend);
	tr = exec_tracer_new(&d, 0, 1, 4, 1);
	assert_int_equal(exec_tracer_step(tr, 1), RC_OK);
	h = exec_tracer_begin(tr, &a, EXEC_STREAM_REDUCE);
	exec_tracer_end_async(tr, h, EXEC_STREAM_REDUCE);
	h = exec_tracer_begin(tr, &f, EXEC_STREAM_COMPUTE);
	nanosleep(&ms, NULL);
	exec_tracer_end(tr, h, EXEC_STREAM_COMPUTE);
	exec_tracer_waited(tr);
	assert_int_equal(exec_tracer_gather(tr, 0, &out), RC_OK);
	assert_int_equal(out.n, 2);
	assert_true(out.ev[1].end_s >= out.ev[1].start_s + 1e-3);
	assert_true(out.ev[0].start_s <= out.ev[1].start_s);
	assert_true(out.ev[0].end_s >= out.ev[1].end_s);
	exec_trace_release(&out);
	exec_tracer_free(tr);
}

/* With room for one step (a world so large that EXEC_TRACE_MAX_EVENTS
 * spares each rank only per_step = 3 events), step 1 is kept whole and
 * step 2 not at all; a fourth event in step 1 is dropped and counted. */
static void test_exec_tracer_keeps_whole_steps(void **state)
{
	struct exec_device d;
	struct exec_tracer *tr;
	struct exec_trace out;
	struct exec_trace_event e = ev_of(EXEC_TRACE_BWD, 1);

	(void)state;
	exec_device_init(&d, &exec_cpu_backend);
	tr = exec_tracer_new(&d, 0, (int)(EXEC_TRACE_MAX_EVENTS / 3), 3, 5);
	assert_int_equal(exec_tracer_step(tr, 1), RC_OK);
	for (int i = 0; i < 4; i++)
		exec_tracer_end(tr, exec_tracer_begin(tr, &e, EXEC_STREAM_COMPUTE),
				EXEC_STREAM_COMPUTE);
	assert_int_equal(exec_tracer_step(tr, 2), RC_OK);
	assert_int_equal(exec_tracer_begin(tr, &e, EXEC_STREAM_COMPUTE), -1);
	/* NULL recorders and handles do nothing */
	assert_int_equal(exec_tracer_begin(NULL, &e, EXEC_STREAM_COMPUTE), -1);
	exec_tracer_end(tr, -1, EXEC_STREAM_COMPUTE);
	assert_int_equal(exec_tracer_step(NULL, 3), RC_OK);
	assert_int_equal(exec_tracer_gather(tr, 0, &out), RC_OK);
	assert_int_equal(out.n, 3);
	assert_int_equal(out.steps, 1);
	assert_int_equal(out.dropped, 1);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(out.ev[i].step, 1);
		assert_true(out.ev[i].end_s >= out.ev[i].start_s);
		assert_true(out.ev[i].start_s >= 0);
	}
	exec_trace_release(&out);
	exec_tracer_free(tr);
}

/* ---- the JSON -------------------------------------------------------- */

/* Every kind of event on a TP2 x PP2 layout with two chunks per stage,
 * named as the simulator names its own, on the thread it belongs to. */
static void test_exec_trace_json_names_and_tracks(void **state)
{
	static const struct {
		int rank, kind, mb, chunk, peer, data, op, group;
		const char *name, *cat;
		int tid;
	} cases[] = {
		{ 0, EXEC_TRACE_FWD, 3, 1, -1, 0, 0, 0, "F3.c1", "forward", 1 },
		{ 1, EXEC_TRACE_BWD, 0, 0, -1, 0, 0, 0, "B0.c0", "backward", 1 },
		{ 2, EXEC_TRACE_OPTIMIZER, -1, -1, -1, 0, 0, 0, "optimizer", "optimizer", 1 },
		{ 0, EXEC_TRACE_SEND, 3, 1, 1, SCHED_DATA_ACT, 0, 0, "act 3.c1 -> stage 1", "p2p", 2 },
		{ 3, EXEC_TRACE_RECV, 2, 0, 0, SCHED_DATA_GRAD, 0, 0, "grad 2.c0 <- stage 0", "p2p", 2 },
		{ 3, EXEC_TRACE_WAIT_SENDS, -1, -1, -1, 0, 0, 0, "wait for sends", "p2p", 2 },
		{ 1, EXEC_TRACE_COLL, -1, -1, -1, 0, EXEC_TRACE_ALL_REDUCE, EXEC_GROUP_TP,
		  "tp all-reduce", "tp", 2 },
		{ 2, EXEC_TRACE_COLL, -1, -1, -1, 0, EXEC_TRACE_REDUCE_SCATTER, EXEC_GROUP_DP,
		  "dp reduce-scatter", "dp", 2 },
		{ 2, EXEC_TRACE_COLL, -1, -1, -1, 0, EXEC_TRACE_ALL_GATHER, EXEC_GROUP_PP,
		  "pp all-gather", "pp", 2 },
		{ 0, EXEC_TRACE_COLL_ASYNC, -1, -1, -1, 0, EXEC_TRACE_ALL_REDUCE, EXEC_GROUP_DP,
		  "dp all-reduce", "dp", 3 },
	};
	struct exec_trace_event ev[GP_ARRAY_LEN(cases)];
	struct exec_trace tr = { ev, (long)GP_ARRAY_LEN(cases), 0, 1, 4, 0 };
	struct exec_opts o;
	const cJSON *e, *got[16];
	cJSON *j;
	int procs = 0;

	(void)state;
	exec_opts_init(&o);
	o.par.tp = 2;
	o.par.pp = 2;
	o.par.interleave = 2;
	o.par.gbs = 8;
	o.par.mbs = 2;
	exec_opts_derive(&o);
	for (size_t i = 0; i < GP_ARRAY_LEN(cases); i++) {
		memset(&ev[i], 0, sizeof(ev[i]));
		ev[i].rank = cases[i].rank;
		ev[i].step = 1;
		ev[i].kind = (unsigned char)cases[i].kind;
		ev[i].mb = cases[i].mb;
		ev[i].chunk = cases[i].chunk;
		ev[i].peer = cases[i].peer;
		ev[i].data = (unsigned char)cases[i].data;
		ev[i].op = (unsigned char)cases[i].op;
		ev[i].group = (unsigned char)cases[i].group;
		ev[i].start_s = 1e-6 * (double)i;
		ev[i].end_s = ev[i].start_s + 0.5e-6;
	}
	j = parse_trace(&o, &tr);
	for (size_t i = 0; i < GP_ARRAY_LEN(cases); i++) {
		int n = events_on(j, cases[i].rank + 1, cases[i].tid, got, 16), hits = 0;

		for (int k = 0; k < n; k++)
			if (strcmp(str(got[k], "name"), cases[i].name) == 0) {
				assert_string_equal(str(got[k], "cat"), cases[i].cat);
				/* 0.5 us, and the start in microseconds */
				assert_near(num(got[k], "dur"), 0.5, 1e-9);
				assert_near(num(got[k], "ts") + 1, (double)i + 1, 1e-9);
				hits++;
			}
		if (hits != 1)
			fail_msg("%s: found %d times on rank %d thread %d", cases[i].name, hits,
				 cases[i].rank, cases[i].tid);
	}
	/* rank = (dp * pp + pp_rank) * tp + tp_rank: rank 3 is pp 1, tp 1 */
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "traceEvents")) {
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");

		if (strcmp(str(e, "name"), "process_name") == 0) {
			char want[64];
			int r = (int)num(e, "pid") - 1;

			snprintf(want, sizeof(want), "rank %d (dp 0, pp %d, tp %d)", r, r / 2, r % 2);
			assert_string_equal(str(args, "name"), want);
			procs++;
		}
		if (strcmp(str(e, "name"), "thread_name") == 0 && (int)num(e, "pid") == 4 &&
		    (int)num(e, "tid") == 1)
			assert_string_equal(str(args, "name"), "stage 1 compute");
	}
	assert_int_equal(procs, 4);
	cJSON_Delete(j);
}

/* A file through gp_write_text_atomic: it reads back as the same JSON. */
static void test_exec_trace_write_reads_back(void **state)
{
	struct exec_trace_event e = ev_of(EXEC_TRACE_FWD, 2);
	struct exec_trace tr = { &e, 1, 0, 1, 1, 0 };
	struct exec_opts o;
	char path[] = "/tmp/gpuplan-trace-XXXXXX", *data = NULL;
	size_t len = 0;
	cJSON *j;
	int fd;

	(void)state;
	exec_opts_init(&o);
	e.step = 1;
	e.end_s = 2e-3;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(exec_trace_write(path, &o, &tr), RC_OK);
	assert_int_equal(gp_read_file(path, &data, &len), RC_OK);
	unlink(path);
	j = cJSON_ParseWithLength(data, len);
	assert_non_null(j);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "traceEvents")),
			 4 + 1);
	assert_int_equal(data[len - 1], '\n');
	cJSON_Delete(j);
	free(data);
	assert_int_equal(exec_trace_write("/nonexistent-dir/t.json", &o, &tr), RC_ERR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec_trace_serial_run_one_event_per_op),
		cmocka_unit_test(test_exec_trace_names_match_simulator),
		cmocka_unit_test(test_exec_trace_off_records_nothing),
		cmocka_unit_test(test_exec_tracer_device_marks_chain_steps),
		cmocka_unit_test(test_exec_tracer_keeps_whole_steps),
		cmocka_unit_test(test_exec_tracer_async_ends),
		cmocka_unit_test(test_exec_trace_json_names_and_tracks),
		cmocka_unit_test(test_exec_trace_write_reads_back),
		cmocka_unit_test(test_exec_trace_phases),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
