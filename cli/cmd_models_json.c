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
	if (m->head_dim > 0)
		cJSON_AddNumberToObject(o, "head_dim", m->head_dim);
	if (m->kv_lora_rank > 0) {
		cJSON *a = cJSON_AddObjectToObject(o, "mla");

		cJSON_AddNumberToObject(a, "q_lora_rank", m->q_lora_rank);
		cJSON_AddNumberToObject(a, "kv_lora_rank", m->kv_lora_rank);
		cJSON_AddNumberToObject(a, "qk_nope_head_dim", m->qk_nope_dim);
		cJSON_AddNumberToObject(a, "qk_rope_head_dim", m->qk_rope_dim);
		cJSON_AddNumberToObject(a, "v_head_dim", m->v_head_dim);
	}
	if (m->experts > 0) {
		cJSON *e = cJSON_AddObjectToObject(o, "moe");

		cJSON_AddNumberToObject(e, "experts", m->experts);
		cJSON_AddNumberToObject(e, "top_k", m->top_k);
		cJSON_AddNumberToObject(e, "expert_ffn_hidden", m->expert_ffn);
		cJSON_AddNumberToObject(e, "shared_experts", m->shared_experts);
		cJSON_AddNumberToObject(e, "shared_ffn_hidden",
					m->shared_ffn > 0 ? m->shared_ffn : m->expert_ffn);
		cJSON_AddNumberToObject(e, "dense_layers", m->dense_layers);
	}
	if (m->mtp_layers > 0)
		cJSON_AddNumberToObject(o, "mtp_layers", m->mtp_layers);
	cJSON_AddNumberToObject(o, "params", sim_model_params(m));
	if (m->published_params > 0)
		cJSON_AddNumberToObject(o, "published_params", m->published_params);
	else
		cJSON_AddNullToObject(o, "published_params");
	cJSON_AddNumberToObject(o, "active_params", sim_model_active_params(m));
	if (m->published_active_params > 0)
		cJSON_AddNumberToObject(o, "published_active_params", m->published_active_params);
	else
		cJSON_AddNullToObject(o, "published_active_params");
	if (m->mtp_layers > 0)
		cJSON_AddNumberToObject(o, "mtp_params", sim_mtp_params(m));
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
