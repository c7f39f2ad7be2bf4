/*
 * cmd_scaling_json.c - `gpuplan scaling --json`: the sweep as a versioned
 * JSON document with fixed key order and no timings, so the same inputs
 * give byte-identical output.  The only scaling file that includes cJSON.
 */
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "cmd_scaling.h"

static const char *json_recompute(enum sim_recompute r)
{
	return r == SIM_RECOMPUTE_FULL ? "full" : r == SIM_RECOMPUTE_SELECTIVE ? "selective" : "none";
}

static cJSON *point_json(const struct scaling_point *p)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "gpus", p->gpus);
	cJSON_AddNumberToObject(o, "nodes", p->nodes);
	cJSON_AddNumberToObject(o, "gpus_per_node", p->gpus_per_node);
	cJSON_AddBoolToObject(o, "fits", p->fits);
	if (!p->fits)
		return o;
	cJSON_AddNumberToObject(o, "tp", p->par.tp);
	cJSON_AddNumberToObject(o, "pp", p->par.pp);
	cJSON_AddNumberToObject(o, "dp", p->par.dp);
	cJSON_AddNumberToObject(o, "cp", p->par.cp);
	cJSON_AddNumberToObject(o, "mbs", p->par.mbs);
	cJSON_AddNumberToObject(o, "grad_accum", p->res.grad_accum);
	cJSON_AddNumberToObject(o, "zero", p->par.zero);
	cJSON_AddStringToObject(o, "recompute", json_recompute(p->par.recompute));
	cJSON_AddNumberToObject(o, "interleave", p->par.interleave);
	cJSON_AddNumberToObject(o, "step_time_s", p->res.step_time_s);
	cJSON_AddNumberToObject(o, "tokens_per_s", p->res.tokens_per_s);
	cJSON_AddNumberToObject(o, "tokens_per_s_per_gpu", p->tokens_per_s_per_gpu);
	cJSON_AddNumberToObject(o, "ideal_tokens_per_s", p->ideal_tokens_per_s);
	cJSON_AddNumberToObject(o, "speedup", p->speedup);
	cJSON_AddNumberToObject(o, "efficiency", p->efficiency);
	cJSON_AddNumberToObject(o, "mfu", p->res.mfu);
	cJSON_AddNumberToObject(o, "memory_per_gpu_bytes", p->res.memory.total);
	return o;
}

char *scaling_to_json(const struct scaling_sweep *s)
{
	cJSON *root = cJSON_CreateObject(), *pts;
	char *out;

	cJSON_AddStringToObject(root, "schema", "gpuplan.scaling/1");
	cJSON_AddStringToObject(root, "model", s->model.name);
	cJSON_AddStringToObject(root, "gpu", s->cluster.gpu.name);
	cJSON_AddNumberToObject(root, "gpus_per_node", s->cluster.gpus_per_node);
	cJSON_AddNumberToObject(root, "inter_node_bytes_per_s", s->cluster.inter_bytes_per_s);
	cJSON_AddStringToObject(root, "machine", s->machine);
	cJSON_AddNumberToObject(root, "global_batch", s->gbs);
	cJSON_AddStringToObject(root, "framework", s->framework ? s->framework : "any");
	cJSON_AddNumberToObject(root, "seq_len", s->model.seq);
	if (s->best >= 0)
		cJSON_AddNumberToObject(root, "best_gpus", s->points[s->best].gpus);
	else
		cJSON_AddNullToObject(root, "best_gpus");
	pts = cJSON_AddArrayToObject(root, "points");
	for (size_t i = 0; i < s->n; i++)
		cJSON_AddItemToArray(pts, point_json(&s->points[i]));
	out = cJSON_Print(root);
	cJSON_Delete(root);
	return out;
}
