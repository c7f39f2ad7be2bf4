/*
 * exec_trace.c - the recorder behind `gpuplan execute --trace`: when each
 * pipeline op, message, collective and optimizer step of one rank began
 * and ended, and the gathering of every rank's record to world rank 0.
 *
 * Cheap by construction: one buffer of events is allocated when the
 * trainer is built, sized from a bound on a step's events that the trainer
 * proves, and an event is two clock readings into it.  On the CPU the
 * clock is CLOCK_MONOTONIC, read as the call begins and ends (the CPU
 * backend and the MPI communicator run synchronously, so the call is the
 * work), except for the gradient sums left running (all_reduce_start,
 * reduce_scatter_start), which end, as far as the host can tell, when it
 * waits for them.  On a GPU the host only queues work, so each event is a
 * pair of device marks (CUDA events) recorded where the work is queued:
 * compute on the compute stream, communication on its stream once that
 * has waited for the compute stream's work so far, which is when the
 * collective can start.  Marks are read back into seconds at the next
 * step's start, when the device has finished the step; each step is timed
 * from a mark of its own (a float of milliseconds keeps microseconds over
 * one step, not over a whole run), and the steps' origins are chained in
 * double from step 1's.
 *
 * It does not write files (exec_trace_json.c does) or align clocks across
 * nodes: every rank's times start at its own start of step 1, which the
 * barrier before each step makes nearly simultaneous.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "train/exec_train.h"

struct exec_tracer {
	struct exec_device *d;
	int rank, world;
	struct exec_trace_event *ev;
	long n, cap, per_step;
	long step_first;         /* the current step's first event */
	long resolved;           /* events [0, resolved) have their times */
	long dropped;
	int step;                /* the current step; 0 before the first */
	int recording;           /* the current step is kept */
	int steps_kept;
	double origin_s;         /* host clock: step 1's start */
	/* device marks: 0 and 1 the step origins in turn, then two per event
	 * of the current step */
	void *timer;
	int n_marks, cur_origin;
	double base_s;           /* the current step's origin after step 1's */
};

/* end_s of a host-clock event that ends at the next exec_tracer_waited() */
#define AWAITED (-2.0)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

struct exec_tracer *exec_tracer_new(struct exec_device *d, int rank, int world,
				    long per_step, int steps)
{
	struct exec_tracer *tr;
	long share = EXEC_TRACE_MAX_EVENTS / (world > 0 ? world : 1), fit;

	/* a step larger than the rank's share is cut: its first events are
	 * kept and the rest counted as dropped */
	if (share < 1)
		share = 1;
	if (per_step > share)
		per_step = share;
	fit = share / (per_step > 0 ? per_step : 1);
	if (fit > steps)
		fit = steps;
	tr = xcalloc(1, sizeof(*tr));
	tr->d = d;
	tr->rank = rank;
	tr->world = world;
	tr->per_step = per_step > 0 ? per_step : 1;
	tr->cap = tr->per_step * (fit > 0 ? fit : 1);
	tr->ev = xmalloc((size_t)tr->cap * sizeof(*tr->ev));
	if (d->be->timer_new) {
		tr->n_marks = 2 + 2 * (int)tr->per_step;
		tr->timer = d->be->timer_new(d, tr->n_marks);
		if (!tr->timer) {
			free(tr->ev);
			free(tr);
			return NULL;
		}
	}
	return tr;
}

void exec_tracer_free(struct exec_tracer *tr)
{
	if (!tr)
		return;
	if (tr->timer)
		tr->d->be->timer_free(tr->d, tr->timer, tr->n_marks);
	free(tr->ev);
	free(tr);
}

/* Turns the current step's device marks into seconds since step 1's
 * origin.  An event whose end was never marked (its call failed) ends
 * where it began. */
static enum rc resolve(struct exec_tracer *tr)
{
	const struct exec_backend *be = tr->d->be;

	for (long h = tr->resolved; tr->timer && h < tr->n; h++) {
		struct exec_trace_event *e = &tr->ev[h];
		int k = (int)(h - tr->step_first);
		double a, b = 0;

		if (be->timer_elapsed(tr->d, tr->timer, tr->cur_origin, 2 + 2 * k, &a) != RC_OK)
			return RC_DEVICE;
		if (e->end_s >= 0 &&
		    be->timer_elapsed(tr->d, tr->timer, tr->cur_origin, 3 + 2 * k, &b) != RC_OK)
			return RC_DEVICE;
		e->start_s = tr->base_s + a;
		e->end_s = e->end_s >= 0 ? tr->base_s + b : e->start_s;
	}
	tr->resolved = tr->n;
	return RC_OK;
}

enum rc exec_tracer_step(struct exec_tracer *tr, int step)
{
	const struct exec_backend *be;

	if (!tr)
		return RC_OK;
	be = tr->d->be;
	if (resolve(tr) != RC_OK)
		return RC_DEVICE;
	if (tr->step == 0) {
		tr->origin_s = now_s();
		if (tr->timer && be->timer_mark(tr->d, tr->timer, 0, EXEC_STREAM_COMPUTE) != RC_OK)
			return RC_DEVICE;
	} else if (tr->timer) {
		int next = 1 - tr->cur_origin;
		double dt;

		if (be->timer_mark(tr->d, tr->timer, next, EXEC_STREAM_COMPUTE) != RC_OK ||
		    be->timer_elapsed(tr->d, tr->timer, tr->cur_origin, next, &dt) != RC_OK)
			return RC_DEVICE;
		tr->base_s += dt;
		tr->cur_origin = next;
	}
	tr->step = step;
	tr->step_first = tr->n;
	tr->recording = tr->cap - tr->n >= tr->per_step;
	if (tr->recording)
		tr->steps_kept++;
	return RC_OK;
}

long exec_tracer_begin(struct exec_tracer *tr, const struct exec_trace_event *e, int stream)
{
	struct exec_trace_event *x;
	long h;

	if (!tr || !tr->recording)
		return -1;
	if (tr->n - tr->step_first >= tr->per_step) {
		tr->dropped++;
		return -1;
	}
	h = tr->n++;
	x = &tr->ev[h];
	*x = *e;
	x->rank = tr->rank;
	x->step = tr->step;
	x->end_s = -1;
	if (tr->timer) {
		x->start_s = 0;
		tr->d->be->timer_mark(tr->d, tr->timer, 2 + 2 * (int)(h - tr->step_first), stream);
	} else {
		x->start_s = now_s() - tr->origin_s;
	}
	return h;
}

void exec_tracer_end(struct exec_tracer *tr, long h, int stream)
{
	if (!tr || h < 0)
		return;
	if (tr->timer) {
		tr->ev[h].end_s = 0;
		tr->d->be->timer_mark(tr->d, tr->timer, 3 + 2 * (int)(h - tr->step_first), stream);
	} else {
		tr->ev[h].end_s = now_s() - tr->origin_s;
	}
}

void exec_tracer_end_async(struct exec_tracer *tr, long h, int stream)
{
	if (!tr || h < 0)
		return;
	if (tr->timer)
		exec_tracer_end(tr, h, stream);
	else
		tr->ev[h].end_s = AWAITED;
}

void exec_tracer_waited(struct exec_tracer *tr)
{
	double now;

	if (!tr || tr->timer)
		return;
	now = now_s() - tr->origin_s;
	for (long h = tr->step_first; h < tr->n; h++)
		if (tr->ev[h].end_s == AWAITED)
			tr->ev[h].end_s = now;
}

enum rc exec_tracer_gather(struct exec_tracer *tr, int mpi, struct exec_trace *out)
{
	/* what each rank says about itself: events dropped, steps kept */
	long head[2] = { 0, 0 };
	size_t n = 0, bytes = 0, head_bytes = 0;
	void *all = NULL, *heads = NULL;
	enum rc rc = RC_OK;

	memset(out, 0, sizeof(*out));
	if (tr) {
		rc = resolve(tr);
		head[0] = tr->dropped;
		head[1] = tr->steps_kept;
		n = (size_t)tr->n;
	}
	if (!mpi) {
		if (rc != RC_OK)
			return rc;
		out->ev = xmalloc((n ? n : 1) * sizeof(*out->ev));
		if (n)
			memcpy(out->ev, tr->ev, n * sizeof(*out->ev));
		out->n = (long)n;
		out->dropped = head[0];
		out->steps = (int)head[1];
		out->world = 1;
		out->device_clock = tr && tr->timer;
		return RC_OK;
	}
	/* A rank whose device failed still takes part, with nothing to say,
	 * so that the others are not left waiting in the gather. */
	if (rc != RC_OK)
		n = 0;
	if (exec_mpi_gather(head, sizeof(head), &heads, &head_bytes) != RC_OK ||
	    exec_mpi_gather(tr ? tr->ev : NULL, n * sizeof(struct exec_trace_event), &all,
			    &bytes) != RC_OK) {
		free(heads);
		return RC_DEVICE;
	}
	if (heads) {
		const long *h = heads;
		int world = (int)(head_bytes / sizeof(head));

		out->ev = all;
		out->n = (long)(bytes / sizeof(struct exec_trace_event));
		out->world = world;
		out->device_clock = tr && tr->timer;
		out->steps = (int)h[1];
		for (int r = 0; r < world; r++) {
			out->dropped += h[2 * r];
			if (h[2 * r + 1] < out->steps)
				out->steps = (int)h[2 * r + 1];
		}
		free(heads);
	}
	return rc;
}

int exec_trace_phases(const struct exec_trace *t, double *fwd_bwd_s, double *optimizer_s)
{
	int first = t && t->steps > 1 ? 2 : 1, counted, any = 0;
	double *sum;               /* [world][2]: passes, optimizer */

	*fwd_bwd_s = *optimizer_s = 0;
	if (!t || t->n == 0 || t->steps < 1 || t->world < 1)
		return -1;
	counted = t->steps - first + 1;
	sum = xcalloc((size_t)t->world * 2, sizeof(*sum));
	for (long i = 0; i < t->n; i++) {
		const struct exec_trace_event *e = &t->ev[i];
		int pass = e->kind == EXEC_TRACE_FWD || e->kind == EXEC_TRACE_BWD;

		if (e->rank < 0 || e->rank >= t->world || e->step < first || e->step > t->steps ||
		    (!pass && e->kind != EXEC_TRACE_OPTIMIZER))
			continue;
		sum[2 * e->rank + !pass] += e->end_s - e->start_s;
		any |= pass;
	}
	for (int r = 0; r < t->world; r++) {
		if (sum[2 * r] / counted > *fwd_bwd_s)
			*fwd_bwd_s = sum[2 * r] / counted;
		if (sum[2 * r + 1] / counted > *optimizer_s)
			*optimizer_s = sum[2 * r + 1] / counted;
	}
	free(sum);
	return any ? 0 : -1;
}

void exec_trace_release(struct exec_trace *t)
{
	if (!t)
		return;
	free(t->ev);
	memset(t, 0, sizeof(*t));
}
