/*
 * exec_json.c - the measurement of a run as JSON (schema "gpuplan.run/1"),
 * written atomically.  The only executor file that includes cJSON.
 *
 * Keys, in order: schema, backend, model {...}, layout {...}, finetune
 * {method; for LoRA lora_rank, lora_targets, lora_alpha, base_unchanged}
 * (full or LoRA fine-tuning only), steps (run here), first_step (after a
 * resumed checkpoint, its step + 1; else 1), seed, losses [per step run],
 * grad_norms [per step], step_times_s [per step], step_time_s (median),
 * step_cpu_times_s [per step] and step_cpu_time_s (median), the ranks'
 * CPU time over the cores they had (exec_result.step_cpu_s), cpu_timed (true: the CPU time is the
 * kernels' own, the CPU backend with one BLAS thread), tokens_per_s and
 * model_flops_per_rank_s (of the median wall-clock step), params, trainable_params,
 * weights_bytes, grads_bytes, optimizer_bytes (the fullest rank's model
 * states), peak_memory_bytes [per rank], with --trace forward_backward_s and
 * optimizer_s (exec_trace_phases; with a prediction, predicted_ beside
 * each: the breakdown's compute + TP + CP comm, and optimizer), and, when
 * the simulator could price the run, predicted_step_time_s, predicted_tokens_per_s,
 * predicted_model_flops_per_rank_s, predicted_memory_bytes (what
 * peak_memory_bytes counts: exec_predicted_memory), predicted_weights_bytes,
 * predicted_grads_bytes, predicted_optimizer_bytes, step_time_error and
 * memory_error ((measured - predicted) / predicted: the step's CPU time
 * where cpu_timed, else its wall time; the memory's for the fullest
 * rank).  Times differ from run to run; everything else is the
 * same for the same inputs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "exec.h"

#define RUN_SCHEMA "gpuplan.run/1"

/* Numbers in the fewest of 15 or 17 digits that read back exactly; a
 * non-finite one (JSON has no spelling for it) is null, never a number
 * it is not. */
static void add_num(cJSON *o, const char *k, double v)
{
	char buf[40];

	if (!isfinite(v))
		cJSON_AddNullToObject(o, k);
	else
		cJSON_AddRawToObject(o, k, unit_fmt_exact(buf, sizeof(buf), v));
}

static void add_array(cJSON *o, const char *k, const double *v, int n)
{
	cJSON *a = cJSON_AddArrayToObject(o, k);

	for (int i = 0; i < n; i++)
		cJSON_AddItemToArray(a, isfinite(v[i]) ? cJSON_CreateNumber(v[i]) : cJSON_CreateNull());
}

static cJSON *run_json(const struct exec_opts *o, const struct exec_result *r,
		       const struct sim_result *pred)
{
	cJSON *root = cJSON_CreateObject(), *m, *l;
	const struct sim_parallel *p = &o->par;
	double fb, opt;

	cJSON_AddStringToObject(root, "schema", RUN_SCHEMA);
	cJSON_AddStringToObject(root, "backend", o->backend ? o->backend : "cpu");
	m = cJSON_AddObjectToObject(root, "model");
	cJSON_AddStringToObject(m, "name", o->model.name);
	add_num(m, "layers", o->model.layers);
	add_num(m, "hidden", o->model.hidden);
	add_num(m, "heads", o->model.heads);
	add_num(m, "kv_heads", o->model.kv_heads);
	add_num(m, "ffn", o->model.ffn);
	add_num(m, "vocab", o->model.vocab);
	add_num(m, "seq", o->model.seq);
	cJSON_AddStringToObject(m, "mlp", sim_mlp_str(o->model.mlp));
	cJSON_AddStringToObject(m, "norm", o->norm == EXEC_NORM_RMS ? "rmsnorm" : "layernorm");
	cJSON_AddBoolToObject(m, "tied_embeddings", o->model.tied_embeddings != 0);
	/* the model's fields beyond the basic shape (its experts), as plan
	 * files name them, those not 0 */
	for (int i = 0; i < SIM_MODEL_FIELDS; i++) {
		int v = *sim_model_field((struct sim_model *)&o->model, &sim_model_fields[i]);

		if (v)
			add_num(m, sim_model_fields[i].key, v);
	}
	l = cJSON_AddObjectToObject(root, "layout");
	add_num(l, "ranks", (double)p->tp * p->pp * p->dp * p->cp);
	add_num(l, "tp", p->tp);
	add_num(l, "pp", p->pp);
	add_num(l, "dp", p->dp);
	add_num(l, "cp", p->cp);
	if (o->model.experts > 0) {
		add_num(l, "ep", p->ep > 0 ? p->ep : 1);
		add_num(l, "expert_dp", (double)p->tp * p->dp * p->cp / (p->ep > 0 ? p->ep : 1));
	}
	add_num(l, "mbs", p->mbs);
	add_num(l, "gbs", p->gbs);
	add_num(l, "grad_accum", p->gbs / (p->mbs * p->dp));
	add_num(l, "zero", p->zero);
	cJSON_AddStringToObject(l, "recompute", sim_recompute_str(p->recompute));
	add_num(l, "interleave", p->interleave);
	cJSON_AddStringToObject(l, "schedule", sched_kind_name(o->schedule));
	cJSON_AddBoolToObject(l, "flash", p->flash != 0);
	/* as run: Megatron applies it only with tp > 1 */
	cJSON_AddBoolToObject(l, "seq_parallel", p->seq_parallel && p->tp > 1);
	if (p->ft.method == SIM_FT_LORA || p->ft.method == SIM_FT_FULL) {
		cJSON *f = cJSON_AddObjectToObject(root, "finetune");
		char targets[64];

		cJSON_AddStringToObject(f, "method", sim_ft_method_names[p->ft.method]);
		if (p->ft.method == SIM_FT_LORA) {
			sim_lora_targets_str(p->ft.lora_targets, targets, sizeof(targets));
			add_num(f, "lora_rank", p->ft.lora_rank > 0 ? p->ft.lora_rank
								    : SIM_LORA_DEFAULT_RANK);
			cJSON_AddStringToObject(f, "lora_targets", targets);
			add_num(f, "lora_alpha", exec_lora_alpha(o));
			cJSON_AddBoolToObject(f, "base_unchanged", r->frozen_unchanged == 1);
		}
	}
	add_num(root, "steps", r->steps);
	/* losses and the rest are of steps first_step .. first_step + steps - 1 */
	add_num(root, "first_step", r->first_step > 0 ? r->first_step : 1);
	add_num(root, "seed", (double)o->seed);
	add_array(root, "losses", r->losses, r->steps);
	add_array(root, "grad_norms", r->grad_norms, r->steps);
	add_array(root, "step_times_s", r->step_time_s, r->steps);
	add_num(root, "step_time_s", r->step_time_median_s);
	/* the ranks' CPU time over their cores; cpu_timed: the one to set
	 * against the prediction (the CPU backend, one BLAS thread) */
	if (r->step_cpu_s) {
		add_array(root, "step_cpu_times_s", r->step_cpu_s, r->steps);
		add_num(root, "step_cpu_time_s", r->step_cpu_median_s);
		cJSON_AddBoolToObject(root, "cpu_timed", r->cpu_timed != 0);
	}
	add_num(root, "tokens_per_s", r->tokens_per_s);
	add_num(root, "model_flops_per_rank_s", r->model_flops_per_rank_s);
	add_num(root, "params", r->params);
	add_num(root, "trainable_params", r->trainable_params);
	/* model states of the fullest rank by kind, as sim_memory's */
	add_num(root, "weights_bytes", r->state_weights_bytes);
	add_num(root, "grads_bytes", r->state_grads_bytes);
	add_num(root, "optimizer_bytes", r->state_optimizer_bytes);
	if (r->peak_memory_bytes)
		add_array(root, "peak_memory_bytes", r->peak_memory_bytes, r->world);
	if (exec_trace_phases(&r->trace, &fb, &opt) == 0) {
		add_num(root, "forward_backward_s", fb);
		add_num(root, "optimizer_s", opt);
		if (pred) {
			add_num(root, "predicted_forward_backward_s", exec_predicted_fwd_bwd(pred));
			add_num(root, "predicted_optimizer_s", pred->breakdown.optimizer_s);
		}
	}
	if (pred) {
		add_num(root, "predicted_step_time_s", pred->step_time_s);
		add_num(root, "predicted_tokens_per_s", pred->tokens_per_s);
		add_num(root, "predicted_model_flops_per_rank_s", pred->model_flops_per_gpu_s);
		double want = exec_predicted_memory(pred);

		add_num(root, "predicted_memory_bytes", want);
		add_num(root, "predicted_weights_bytes", pred->memory.weights);
		add_num(root, "predicted_grads_bytes", pred->memory.grads);
		add_num(root, "predicted_optimizer_bytes", pred->memory.optimizer);
		if (pred->step_time_s > 0)
			add_num(root, "step_time_error",
				((r->cpu_timed ? r->step_cpu_median_s : r->step_time_median_s) -
				 pred->step_time_s) / pred->step_time_s);
		if (r->peak_memory_bytes && want > 0)
			add_num(root, "memory_error", (exec_peak_memory(r) - want) / want);
	}
	return root;
}

enum rc exec_run_write_json(const char *path, const struct exec_opts *o,
			    const struct exec_result *r,
			    const struct sim_result *pred)
{
	cJSON *root = run_json(o, r, pred);
	char *text = cJSON_Print(root);
	enum rc rc;

	cJSON_Delete(root);
	if (!text) {
		gp_error("%s: cannot format the run", path);
		return RC_ERR;
	}
	rc = gp_write_text_atomic(path, text);
	free(text);
	return rc;
}
