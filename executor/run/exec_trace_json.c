/*
 * exec_trace_json.c - writes a run's measured timeline (exec_trace.c) as
 * Chrome trace-event JSON, laid out so that it opens in Perfetto beside
 * the simulator's `simulate --timeline` of the same plan
 * (simulator/sim_trace_json.c): the same event names ("F3", "B3.c1",
 * "act 3 -> stage 1"), categories, args and microseconds.
 *
 * One process per rank, "rank R (dp D, pp P, tp T)", sorted by rank, with
 * two threads: compute (forward, backward, optimizer) and communication
 * (sends, receives, collectives), and a third where gradients are summed
 * over DP under the backward (the simulator's "data-parallel gradient
 * reduction").  A collective is named by its group and
 * operation ("tp all-reduce", "dp reduce-scatter").  Each event is built
 * as a cJSON object and printed on its own, so a long trace never holds
 * a whole cJSON tree.  It does not read traces.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "run/exec_run.h"

enum { TID_COMPUTE = 1, TID_COMM = 2, TID_REDUCE = 3 };

static int tid_of(int kind)
{
	switch (kind) {
	case EXEC_TRACE_FWD:
	case EXEC_TRACE_BWD:
	case EXEC_TRACE_OPTIMIZER:
		return TID_COMPUTE;
	case EXEC_TRACE_COLL_ASYNC:
		return TID_REDUCE;
	default:
		return TID_COMM;
	}
}

/* A growing string. */
struct out {
	char *s;
	size_t n, cap;
};

static void put(struct out *o, const char *s, size_t len)
{
	if (o->n + len + 1 > o->cap) {
		o->cap = (o->n + len + 1) * 2;
		o->s = xrealloc(o->s, o->cap);
	}
	memcpy(o->s + o->n, s, len);
	o->n += len;
	o->s[o->n] = '\0';
}

/* Appends item printed without spaces (with a comma before all but the
 * first) and deletes it. */
static void put_item(struct out *o, cJSON *item, int *first)
{
	char buf[1024];

	if (!*first)
		put(o, ",", 1);
	*first = 0;
	if (cJSON_PrintPreallocated(item, buf, (int)sizeof(buf), 0)) {
		put(o, buf, strlen(buf));
	} else {
		char *s = cJSON_PrintUnformatted(item);

		if (!s)
			abort(); /* cJSON fails only when out of memory */
		put(o, s, strlen(s));
		free(s);
	}
	cJSON_Delete(item);
}

static cJSON *meta(const char *what, int pid, int tid, const char *key, cJSON *value)
{
	cJSON *e = cJSON_CreateObject(), *args = cJSON_CreateObject();

	cJSON_AddStringToObject(e, "name", what);
	cJSON_AddStringToObject(e, "ph", "M");
	cJSON_AddNumberToObject(e, "pid", pid);
	cJSON_AddNumberToObject(e, "tid", tid);
	cJSON_AddItemToObject(args, key, value);
	cJSON_AddItemToObject(e, "args", args);
	return e;
}

static const char *group_name(int g)
{
	switch (g) {
	case EXEC_GROUP_TP: return "tp";
	case EXEC_GROUP_PP: return "pp";
	case EXEC_GROUP_DP: return "dp";
	case EXEC_GROUP_CP: return "cp";
	case EXEC_GROUP_EP: return "ep";
	case EXEC_GROUP_EDP: return "edp";
	default: return "world";
	}
}

static const char *op_name(int op)
{
	switch (op) {
	case EXEC_TRACE_REDUCE_SCATTER: return "reduce-scatter";
	case EXEC_TRACE_ALL_GATHER: return "all-gather";
	case EXEC_TRACE_ALL_TO_ALL: return "all-to-all";
	default: return "all-reduce";
	}
}

/* The event's name and category, as the simulator names its own. */
static void name_of(const struct exec_trace_event *e, int v, char *name, size_t size,
		    const char **cat)
{
	char chunk[16] = "";

	if (v > 1)
		snprintf(chunk, sizeof(chunk), ".c%d", e->chunk);
	switch (e->kind) {
	case EXEC_TRACE_FWD:
	case EXEC_TRACE_BWD:
		snprintf(name, size, "%c%d%s", e->kind == EXEC_TRACE_FWD ? 'F' : 'B', e->mb, chunk);
		*cat = e->kind == EXEC_TRACE_FWD ? "forward" : "backward";
		break;
	case EXEC_TRACE_OPTIMIZER:
		snprintf(name, size, "optimizer");
		*cat = "optimizer";
		break;
	case EXEC_TRACE_SEND:
	case EXEC_TRACE_RECV:
		snprintf(name, size, "%s %d%s %s stage %d",
			 e->data == SCHED_DATA_ACT ? "act" : "grad", e->mb, chunk,
			 e->kind == EXEC_TRACE_SEND ? "->" : "<-", e->peer);
		*cat = "p2p";
		break;
	case EXEC_TRACE_WAIT_SENDS:
		snprintf(name, size, "wait for sends");
		*cat = "p2p";
		break;
	default:
		snprintf(name, size, "%s %s", group_name(e->group), op_name(e->op));
		*cat = group_name(e->group);
		break;
	}
}

static cJSON *event(const struct exec_trace_event *e, int v)
{
	cJSON *j = cJSON_CreateObject(), *args = cJSON_CreateObject();
	const char *cat = "";
	char name[64];
	double dur = e->end_s - e->start_s;

	name_of(e, v, name, sizeof(name), &cat);
	cJSON_AddStringToObject(j, "name", name);
	cJSON_AddStringToObject(j, "cat", cat);
	cJSON_AddStringToObject(j, "ph", "X");
	/* microseconds to the nanosecond: a clock's resolution, not more */
	cJSON_AddNumberToObject(j, "ts", round(e->start_s * 1e9) / 1e3);
	cJSON_AddNumberToObject(j, "dur", dur > 0 ? round(dur * 1e9) / 1e3 : 0);
	cJSON_AddNumberToObject(j, "pid", e->rank + 1);
	cJSON_AddNumberToObject(j, "tid", tid_of(e->kind));
	cJSON_AddNumberToObject(args, "step", e->step);
	if (e->mb >= 0) {
		cJSON_AddNumberToObject(args, "micro_batch", e->mb);
		cJSON_AddNumberToObject(args, "chunk", e->chunk);
	}
	if (e->peer >= 0)
		cJSON_AddNumberToObject(args, "peer", e->peer);
	if (e->bytes > 0)
		cJSON_AddNumberToObject(args, "bytes", e->bytes);
	cJSON_AddItemToObject(j, "args", args);
	return j;
}

char *exec_trace_to_json(const struct exec_opts *o, const struct exec_trace *tr)
{
	const struct sim_parallel *p = &o->par;
	cJSON *root = cJSON_CreateObject(), *other = cJSON_CreateObject();
	struct out out = { NULL, 0, 0 };
	int first = 1, v = p->interleave > 0 ? p->interleave : 1;
	char *head;

	cJSON_AddStringToObject(root, "displayTimeUnit", "ms");
	cJSON_AddBoolToObject(other, "measured", 1);
	cJSON_AddStringToObject(other, "schedule", sched_kind_name(o->schedule));
	cJSON_AddNumberToObject(other, "pipeline_stages", p->pp);
	cJSON_AddNumberToObject(other, "micro_batches", p->gbs / (p->mbs * p->dp));
	cJSON_AddNumberToObject(other, "chunks_per_stage", v);
	cJSON_AddBoolToObject(other, "split_backward", 0);
	cJSON_AddNumberToObject(other, "tp", p->tp);
	cJSON_AddNumberToObject(other, "dp", p->dp);
	if (p->cp > 1)
		cJSON_AddNumberToObject(other, "cp", p->cp);
	cJSON_AddNumberToObject(other, "ranks", tr->world);
	cJSON_AddStringToObject(other, "backend", o->backend ? o->backend : "cpu");
	cJSON_AddStringToObject(other, "clock", tr->device_clock ? "cuda events" : "monotonic");
	cJSON_AddNumberToObject(other, "steps", tr->steps);
	cJSON_AddNumberToObject(other, "dropped_events", (double)tr->dropped);
	cJSON_AddItemToObject(root, "otherData", other);
	head = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (!head)
		abort();
	/* the head's closing brace gives way to the event array */
	put(&out, head, strlen(head) - 1);
	free(head);
	put(&out, ",\"traceEvents\":[", 16);

	for (int r = 0; r < tr->world; r++) {
		struct exec_layout l;
		char name[96];

		if (exec_layout_init(&l, p, r) != RC_OK)
			memset(&l, 0, sizeof(l));
		if (l.cp > 1)
			snprintf(name, sizeof(name), "rank %d (dp %d, pp %d, cp %d, tp %d)", r,
				 l.dp_rank, l.pp_rank, l.cp_rank, l.tp_rank);
		else
			snprintf(name, sizeof(name), "rank %d (dp %d, pp %d, tp %d)", r, l.dp_rank,
				 l.pp_rank, l.tp_rank);
		put_item(&out, meta("process_name", r + 1, 0, "name", cJSON_CreateString(name)),
			 &first);
		put_item(&out, meta("process_sort_index", r + 1, 0, "sort_index",
				    cJSON_CreateNumber(r)), &first);
		snprintf(name, sizeof(name), "stage %d compute", l.pp_rank);
		put_item(&out, meta("thread_name", r + 1, TID_COMPUTE, "name",
				    cJSON_CreateString(name)), &first);
		put_item(&out, meta("thread_name", r + 1, TID_COMM, "name",
				    cJSON_CreateString("communication")), &first);
		if (o->par.dp * o->par.cp > 1 && o->par.zero <= 1)
			put_item(&out, meta("thread_name", r + 1, TID_REDUCE, "name",
					    cJSON_CreateString("gradient reduce")), &first);
	}
	for (long i = 0; i < tr->n; i++)
		put_item(&out, event(&tr->ev[i], v), &first);
	put(&out, "]}", 2);
	return out.s;
}

enum rc exec_trace_write(const char *path, const struct exec_opts *o,
			 const struct exec_trace *tr)
{
	char *json = exec_trace_to_json(o, tr);
	enum rc rc = gp_write_text_atomic(path, json);

	free(json);
	return rc;
}
