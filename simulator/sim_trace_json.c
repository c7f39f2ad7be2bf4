/*
 * sim_trace_json.c - writes an event-simulated pipeline step as Chrome
 * trace-event JSON (the "JSON Object Format" of the Trace Event Format
 * document), which Perfetto and chrome://tracing open.
 *
 * Process 1 holds one track per pipeline stage with a complete ("X") event
 * per compute op; process 2 one track per sending stage with an event per
 * transfer; process 3 one track per stage with an event per data-parallel
 * gradient bucket.  Times are microseconds.  It does not read traces.
 *
 * It calls down only: sched.c (op and kind names).
 */
#include "sim_event.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

enum { PID_STAGES = 1, PID_P2P = 2, PID_DP = 3 };

static void meta(cJSON *events, const char *what, int pid, int tid, const char *name)
{
	cJSON *e = cJSON_CreateObject(), *args = cJSON_CreateObject();

	cJSON_AddStringToObject(e, "name", what);
	cJSON_AddStringToObject(e, "ph", "M");
	cJSON_AddNumberToObject(e, "pid", pid);
	cJSON_AddNumberToObject(e, "tid", tid);
	cJSON_AddStringToObject(args, "name", name);
	cJSON_AddItemToObject(e, "args", args);
	cJSON_AddItemToArray(events, e);
}

/* Adds an "X" event and returns its (empty) args object. */
static cJSON *complete(cJSON *events, const char *name, const char *cat, int pid, int tid,
		       const struct sim_event_span *sp)
{
	cJSON *e = cJSON_CreateObject(), *args = cJSON_CreateObject();

	cJSON_AddStringToObject(e, "name", name);
	cJSON_AddStringToObject(e, "cat", cat);
	cJSON_AddStringToObject(e, "ph", "X");
	cJSON_AddNumberToObject(e, "ts", sp->start_s * 1e6);
	cJSON_AddNumberToObject(e, "dur", (sp->end_s - sp->start_s) * 1e6);
	cJSON_AddNumberToObject(e, "pid", pid);
	cJSON_AddNumberToObject(e, "tid", tid);
	cJSON_AddItemToObject(e, "args", args);
	cJSON_AddItemToArray(events, e);
	return args;
}

static const char *category(enum sched_op_kind k)
{
	switch (k) {
	case SCHED_OP_FWD: return "forward";
	case SCHED_OP_BWD: return "backward";
	case SCHED_OP_BWD_INPUT: return "backward-input";
	case SCHED_OP_BWD_WEIGHT: return "backward-weight";
	default: return "p2p";
	}
}

char *sim_trace_to_json(const struct sched *s, const struct sim_event_timeline *tl)
{
	cJSON *root = cJSON_CreateObject(), *events = cJSON_CreateArray();
	cJSON *other = cJSON_CreateObject();
	char name[64], *out;

	cJSON_AddStringToObject(root, "displayTimeUnit", "ms");
	cJSON_AddStringToObject(other, "schedule", sched_kind_name(s->kind));
	cJSON_AddNumberToObject(other, "pipeline_stages", s->p);
	cJSON_AddNumberToObject(other, "micro_batches", s->m);
	cJSON_AddNumberToObject(other, "chunks_per_stage", s->v);
	cJSON_AddBoolToObject(other, "split_backward", s->split_backward);
	cJSON_AddNumberToObject(other, "step_time_us", tl->step_time_s * 1e6);
	cJSON_AddItemToObject(root, "otherData", other);

	meta(events, "process_name", PID_STAGES, 0, "pipeline stages");
	meta(events, "process_name", PID_P2P, 0, "p2p transfers");
	meta(events, "process_name", PID_DP, 0, "data-parallel gradient reduction");
	for (int st = 0; st < s->p; st++) {
		snprintf(name, sizeof(name), "stage %d", st);
		meta(events, "thread_name", PID_STAGES, st, name);
		snprintf(name, sizeof(name), "stage %d sends", st);
		meta(events, "thread_name", PID_P2P, st, name);
		snprintf(name, sizeof(name), "stage %d", st);
		meta(events, "thread_name", PID_DP, st, name);
	}
	for (int st = 0; st < s->p; st++) {
		for (int i = 0; i < s->stages[st].n; i++) {
			const struct sched_op *op = &s->stages[st].ops[i];
			char chunk[16] = "";
			cJSON *args;

			if (op->kind == SCHED_OP_RECV)
				continue; /* a wait shows as a gap on the stage's track */
			if (s->v > 1)
				snprintf(chunk, sizeof(chunk), ".c%d", op->chunk);
			if (op->kind == SCHED_OP_SEND) {
				snprintf(name, sizeof(name), "%s %d%s -> stage %d",
					 op->data == SCHED_DATA_ACT ? "act" : "grad", op->mb, chunk,
					 op->peer);
				args = complete(events, name, "p2p", PID_P2P, st, &tl->op[st][i]);
				cJSON_AddNumberToObject(args, "peer", op->peer);
			} else {
				snprintf(name, sizeof(name), "%c%d%s", sched_op_letter(op->kind),
					 op->mb, chunk);
				args = complete(events, name, category(op->kind), PID_STAGES, st,
						&tl->op[st][i]);
			}
			cJSON_AddNumberToObject(args, "micro_batch", op->mb);
			cJSON_AddNumberToObject(args, "chunk", op->chunk);
		}
		for (int b = 0; b < tl->n_dp[st]; b++) {
			snprintf(name, sizeof(name), "dp bucket %d", b);
			complete(events, name, "dp", PID_DP, st, &tl->dp[st][b]);
		}
	}
	cJSON_AddItemToObject(root, "traceEvents", events);
	out = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (!out)
		abort(); /* cJSON fails only when out of memory */
	return out;
}

enum rc sim_trace_write(const char *path, const struct sched *s,
			const struct sim_event_timeline *tl)
{
	char *json = sim_trace_to_json(s, tl);
	enum rc rc = gp_write_text_atomic(path, json);

	free(json);
	return rc;
}
