/*
 * cmd_models_json.c - `gpuplan models --json`: the presets as a versioned
 * JSON document with fixed key order, so the same table gives
 * byte-identical output.  The only models file that includes cJSON.
 */
#include <cjson/cJSON.h>

#include "cli.h"
#include "sim.h"

static cJSON *model_json(const struct sim_model *m)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "name", m->name);
	cJSON_AddNumberToObject(o, "layers", m->layers);
	cJSON_AddNumberToObject(o, "hidden", m->hidden);
	cJSON_AddNumberToObject(o, "heads", m->heads);
	cJSON_AddNumberToObject(o, "kv_heads", m->kv_heads);
	cJSON_AddNumberToObject(o, "ffn_hidden", m->ffn);
	cJSON_AddNumberToObject(o, "vocab", m->vocab);
	cJSON_AddNumberToObject(o, "seq_len", m->seq);
	cJSON_AddStringToObject(o, "mlp", sim_mlp_str(m->mlp));
	cJSON_AddBoolToObject(o, "tied_embeddings", m->tied_embeddings);
	if (m->gbs)
		cJSON_AddNumberToObject(o, "global_batch_seqs", m->gbs);
	else
		cJSON_AddNullToObject(o, "global_batch_seqs");
	cJSON_AddNumberToObject(o, "params", sim_model_params(m));
	if (m->published_params > 0)
		cJSON_AddNumberToObject(o, "published_params", m->published_params);
	else
		cJSON_AddNullToObject(o, "published_params");
	return o;
}

char *cli_models_to_json(const struct sim_model_table *t, const struct sim_model *m)
{
	cJSON *root = cJSON_CreateObject();
	char *s;

	if (m) {
		cJSON_AddStringToObject(root, "schema", "gpuplan.model/1");
		cJSON_AddItemToObject(root, "model", model_json(m));
	} else {
		cJSON *arr;

		cJSON_AddStringToObject(root, "schema", "gpuplan.models/1");
		arr = cJSON_AddArrayToObject(root, "models");
		for (size_t i = 0; i < t->n; i++)
			cJSON_AddItemToArray(arr, model_json(&t->models[i]));
	}
	s = cJSON_Print(root);
	cJSON_Delete(root);
	if (!s)
		gp_error("out of memory while formatting JSON");
	return s;
}
