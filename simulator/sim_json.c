/*
 * sim_json.c - plan files (schema "gpuplan.plan/1") and the simulator's
 * JSON prediction object, written with cJSON (sim_json_read.c reads them).
 *
 * A plan holds the model, the cluster (GPU figures included, so a plan
 * runs the same on a machine with another catalog), the priced offering
 * when there is one with how its hours are paid for (purchase), the
 * parallel configuration (expert parallelism among it), the job
 * (tokens, price), the interruptions the run expects and the effective
 * training time they leave (where the plan states them) and the
 * prediction.
 * Output is deterministic: keys in a fixed order, numbers printed by
 * cJSON, so the same plan gives the same bytes.  Reading validates every
 * field it uses and names the first bad one; unknown keys are ignored so
 * later versions can add fields.  The prediction is read back when
 * present, but callers re-simulate rather than trust it.
 *
 * It calls down only: sim_check.c (the defaults, the GPU count), sim_shape.c,
 * sim_finetune.c, sim_models.c and sim_names.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json_internal.h"

#include "sim.h"

#define SCHEMA SIM_PLAN_SCHEMA

/* Adds v printed in the fewest of 15 or 17 significant digits that read
 * back as exactly v (cJSON's own printer accepts a 1-ulp difference, which
 * would make a re-read plan predict a hair differently).  Non-finite
 * numbers never reach a file: JSON has no spelling for them. */
static void add_num(cJSON *o, const char *k, double v)
{
	char buf[40];

	cJSON_AddRawToObject(o, k, unit_fmt_exact(buf, sizeof(buf), v));
}

static void add_prediction(cJSON *o, const struct sim_plan *p)
{
	const struct sim_result *r = &p->result;
	cJSON *b, *m;

	add_num(o, "step_time_s", r->step_time_s);
	add_num(o, "tokens_per_s", r->tokens_per_s);
	add_num(o, "model_tflops_per_gpu", r->model_flops_per_gpu_s / 1e12);
	add_num(o, "hardware_tflops_per_gpu", r->hardware_flops_per_gpu_s / 1e12);
	add_num(o, "mfu", r->mfu);
	add_num(o, "hfu", r->hfu);
	add_num(o, "grad_accum", r->grad_accum);
	add_num(o, "memory_per_gpu_bytes", r->memory.total);
	add_num(o, "memory_capacity_bytes", r->memory.capacity);
	cJSON_AddBoolToObject(o, "fits", r->fits);
	b = cJSON_AddObjectToObject(o, "breakdown");
	add_num(b, "compute", r->breakdown.compute_s);
	add_num(b, "tp_comm", r->breakdown.tp_comm_s);
	add_num(b, "cp_comm", r->breakdown.cp_comm_s);
	add_num(b, "ep_comm", r->breakdown.ep_comm_s);
	add_num(b, "ep_comm_total", r->breakdown.ep_comm_total_s);
	add_num(b, "pp_bubble", r->breakdown.pp_bubble_s);
	add_num(b, "pp_comm", r->breakdown.pp_comm_s);
	add_num(b, "dp_comm_exposed", r->breakdown.dp_comm_exposed_s);
	add_num(b, "dp_comm_total", r->breakdown.dp_comm_total_s);
	add_num(b, "optimizer", r->breakdown.optimizer_s);
	if (p->par.ft.offload != SIM_OFFLOAD_NONE)
		add_num(b, "offload", r->breakdown.offload_s);
	m = cJSON_AddObjectToObject(o, "memory");
	add_num(m, "weights", r->memory.weights);
	add_num(m, "grads", r->memory.grads);
	add_num(m, "optimizer", r->memory.optimizer);
	add_num(m, "activations", r->memory.activations);
	add_num(m, "other", r->memory.other);
	add_num(m, "total", r->memory.total);
	add_num(m, "capacity", r->memory.capacity);
	if (p->par.ft.offload != SIM_OFFLOAD_NONE) {
		add_num(m, "host_per_node", r->memory.host);
		add_num(m, "host_capacity", r->memory.host_capacity);
		add_num(m, "nvme_per_node", r->memory.nvme);
	}
	add_num(o, "time_to_train_s", p->time_to_train_s);
	add_num(o, "cost_usd", p->cost_usd);
}

/* The run's interruptions (sim_interrupts), as plan --json names them,
 * where the plan states them: a plan without them reads as one. */
static void add_interrupts(cJSON *root, const struct sim_plan *p)
{
	const struct sim_interrupts *i = &p->interrupts;
	cJSON *o;

	if (!i->stated)
		return;
	o = cJSON_AddObjectToObject(root, "interruptions");
	add_num(o, "failures_per_gpu_hour", i->failures_per_gpu_hour);
	add_num(o, "preemptions_per_node_hour", i->preemptions_per_node_hour);
	if (i->mtbf_s > 0)
		add_num(o, "mtbf_s", i->mtbf_s);
	else
		cJSON_AddNullToObject(o, "mtbf_s");
	add_num(o, "restart_s", i->restart_s);
	if (i->ckpt_bytes_per_s_per_node > 0)
		add_num(o, "checkpoint_bytes_per_s_per_node", i->ckpt_bytes_per_s_per_node);
	add_num(o, "expected", i->expected);
	add_num(o, "effective_training_time", i->effective);
}

/* The attention and mixture-of-experts fields of a model
 * (sim_model_fields), each written only when not 0: a dense model with
 * plain attention writes none of them, and a plan without them reads as
 * one. */
static void add_model_shape(cJSON *o, const struct sim_model *m)
{
	for (int i = 0; i < SIM_MODEL_FIELDS; i++) {
		int v = *sim_model_field((struct sim_model *)m, &sim_model_fields[i]);

		if (v)
			add_num(o, sim_model_fields[i].key, v);
	}
}

/* "assumptions": [{field, value, why}], when p assumed any. */
static void add_assumptions(cJSON *root, const struct sim_plan *p)
{
	cJSON *a;

	if (p->n_assumptions <= 0)
		return;
	a = cJSON_AddArrayToObject(root, "assumptions");
	for (int i = 0; i < p->n_assumptions; i++) {
		cJSON *x = cJSON_CreateObject();

		cJSON_AddStringToObject(x, "field", p->assumptions[i].field);
		add_num(x, "value", p->assumptions[i].value);
		cJSON_AddStringToObject(x, "why", p->assumptions[i].why);
		cJSON_AddItemToArray(a, x);
	}
}

/* The router's recipe, the q/k norm and the gated activation
 * (struct sim_model), each written only when not its default: a plan
 * without them reads as a softmax router of unknown balancing, SiLU. */
static void add_model_router(cJSON *o, const struct sim_model *m)
{
	if (m->router_score != SIM_ROUTER_SOFTMAX)
		cJSON_AddStringToObject(o, "router_score", sim_router_score_names[m->router_score]);
	if (m->router_balance != SIM_BALANCE_UNKNOWN)
		cJSON_AddStringToObject(o, "router_balance", sim_balance_names[m->router_balance]);
	if (m->router_aux_coeff > 0)
		add_num(o, "router_aux_coeff", m->router_aux_coeff);
	if (m->router_expert_bias)
		cJSON_AddBoolToObject(o, "router_expert_bias", 1);
	if (m->router_bias_rate > 0)
		add_num(o, "router_bias_rate", m->router_bias_rate);
	if (m->router_groups > 0)
		add_num(o, "router_groups", m->router_groups), add_num(o, "router_group_topk",
									 m->router_group_topk);
	if (m->router_topk_scale > 0)
		add_num(o, "router_topk_scale", m->router_topk_scale);
	if (m->qk_norm)
		cJSON_AddBoolToObject(o, "qk_norm", 1);
	if (m->glu_act != SIM_GLU_SILU)
		cJSON_AddStringToObject(o, "glu_act", sim_glu_act_names[m->glu_act]);
	if (m->glu_offset > 0)
		add_num(o, "glu_offset", m->glu_offset);
	if (m->glu_clamp > 0)
		add_num(o, "glu_clamp", m->glu_clamp);
	if (m->tokenizer_gated)
		cJSON_AddBoolToObject(o, "tokenizer_gated", 1);
}

static cJSON *plan_to_cjson(const struct sim_plan *p)
{
	cJSON *root = cJSON_CreateObject(), *o, *g;
	const struct sim_model *m = &p->model;
	const struct sim_parallel *q = &p->par;
	const struct sim_cluster *c = &p->cluster;

	cJSON_AddStringToObject(root, "schema", SCHEMA);

	o = cJSON_AddObjectToObject(root, "model");
	cJSON_AddStringToObject(o, "name", m->name);
	add_num(o, "layers", m->layers);
	add_num(o, "hidden", m->hidden);
	add_num(o, "heads", m->heads);
	add_num(o, "kv_heads", m->kv_heads);
	add_num(o, "ffn", m->ffn);
	add_num(o, "vocab", m->vocab);
	add_num(o, "seq", m->seq);
	cJSON_AddStringToObject(o, "mlp", sim_mlp_str(m->mlp));
	cJSON_AddBoolToObject(o, "tied_embeddings", m->tied_embeddings);
	cJSON_AddStringToObject(o, "position_embedding", sim_pos_names[m->pos]);
	if (m->pos == SIM_POS_ROPE) {
		add_num(o, "rotary_base", m->rotary_base > 0 ? m->rotary_base : 10000);
		if (m->rotary_percent > 0)
			add_num(o, "rotary_percent", m->rotary_percent);
		if (m->rope_scaling != SIM_ROPE_NONE) {
			cJSON_AddStringToObject(o, "rope_scaling",
						sim_rope_scaling_names[m->rope_scaling]);
			add_num(o, "rope_factor", m->rope_factor);
		}
		if (m->rope_mscale > 0)
			add_num(o, "rope_mscale", m->rope_mscale);
		if (m->rope_mscale_all_dim > 0)
			add_num(o, "rope_mscale_all_dim", m->rope_mscale_all_dim);
	}
	cJSON_AddStringToObject(o, "norm", sim_norm_names[m->norm]);
	cJSON_AddBoolToObject(o, "linear_bias", m->linear_bias);
	add_num(o, "dropout", m->dropout);
	if (m->tokenizer[0])
		cJSON_AddStringToObject(o, "tokenizer", m->tokenizer);
	add_num(o, "sliding_window", m->window);
	add_model_shape(o, m);
	add_model_router(o, m);
	add_num(o, "params", sim_model_params(m));
	if (m->experts > 0)
		add_num(o, "active_params", sim_model_active_params(m));

	o = cJSON_AddObjectToObject(root, "cluster");
	g = cJSON_AddObjectToObject(o, "gpu");
	cJSON_AddStringToObject(g, "name", c->gpu.name);
	add_num(g, "memory_bytes", c->gpu.memory_bytes);
	add_num(g, "hbm_bytes_per_s", c->gpu.hbm_bytes_per_s);
	add_num(g, "bf16_flops_per_s", c->gpu.bf16_flops_per_s);
	/* a calibrated plan's bf16 figure is what GEMMs reach; MFU keeps
	 * the datasheet's */
	if (c->gpu.mfu_flops_per_s > 0)
		add_num(g, "mfu_flops_per_s", c->gpu.mfu_flops_per_s);
	add_num(g, "fp8_flops_per_s", c->gpu.fp8_flops_per_s);
	add_num(g, "mxfp8_flops_per_s", c->gpu.mxfp8_flops_per_s);
	add_num(g, "nvfp4_flops_per_s", c->gpu.nvfp4_flops_per_s);
	add_num(g, "tf32_flops_per_s", c->gpu.tf32_flops_per_s);
	add_num(g, "fp32_flops_per_s", c->gpu.fp32_flops_per_s);
	cJSON_AddStringToObject(g, "intra_link", c->gpu.intra_link);
	add_num(g, "intra_bytes_per_s", c->gpu.intra_bytes_per_s);
	cJSON_AddBoolToObject(g, "nvlink", c->gpu.nvlink);
	cJSON_AddBoolToObject(g, "p2p", c->gpu.p2p);
	add_num(g, "tdp_w", c->gpu.tdp_w);
	add_num(o, "gpus", sim_parallel_gpus(q));
	add_num(o, "gpus_per_node", c->gpus_per_node);
	add_num(o, "nodes", p->nodes);
	add_num(o, "intra_bytes_per_s", c->intra_bytes_per_s);
	add_num(o, "inter_bytes_per_s", c->inter_bytes_per_s);
	add_num(o, "nvlink_domain", c->nvlink_domain);
	add_num(o, "latency_s", c->latency_s);
	add_num(o, "host_layer_s", c->host_layer_s);
	if (c->host.memory_bytes > 0 || c->host.cpu_cores > 0 || c->host.pcie_bytes_per_s > 0 ||
	    c->host.nvme_bytes_per_s > 0) {
		cJSON *h = cJSON_AddObjectToObject(o, "host");

		add_num(h, "memory_bytes", c->host.memory_bytes);
		add_num(h, "cpu_cores", c->host.cpu_cores);
		add_num(h, "pcie_bytes_per_s", c->host.pcie_bytes_per_s);
		add_num(h, "nvme_bytes_per_s", c->host.nvme_bytes_per_s);
	}

	if (p->offering.provider[0]) {
		const struct price_offering *f = &p->offering;

		o = cJSON_AddObjectToObject(root, "offering");
		cJSON_AddStringToObject(o, "provider", f->provider);
		cJSON_AddStringToObject(o, "instance_type", f->instance_type);
		cJSON_AddStringToObject(o, "gpu", f->gpu);
		add_num(o, "gpus_per_node", f->gpus_per_node);
		cJSON_AddStringToObject(o, "region", f->region);
		add_num(o, "on_demand_usd_per_hour", f->on_demand_usd_per_hour);
		add_num(o, "spot_usd_per_hour", f->spot_usd_per_hour);
		add_num(o, "inter_node_bytes_per_s", f->inter_node_bytes_per_s);
		add_num(o, "max_nodes", f->max_nodes);
		cJSON_AddStringToObject(o, "version", f->version);
		if (f->price_date[0])
			cJSON_AddStringToObject(o, "price_date", f->price_date);
		else
			cJSON_AddNullToObject(o, "price_date");
		cJSON_AddBoolToObject(o, "spot", p->spot);
		cJSON_AddStringToObject(o, "purchase", price_purchase_str(p->purchase));
	}

	o = cJSON_AddObjectToObject(root, "parallel");
	add_num(o, "tp", q->tp);
	add_num(o, "pp", q->pp);
	add_num(o, "dp", q->dp);
	add_num(o, "cp", q->cp);
	add_num(o, "ep", q->ep > 0 ? q->ep : 1);
	add_num(o, "etp", q->etp > 0 ? q->etp : 1);
	add_num(o, "mbs", q->mbs);
	add_num(o, "gbs", q->gbs);
	add_num(o, "zero", q->zero);
	cJSON_AddStringToObject(o, "recompute", sim_recompute_str(q->recompute));
	if (q->recompute_modules) {
		cJSON *mods = cJSON_AddArrayToObject(o, "recompute_modules");

		for (int k = 0; k < SIM_RECOMPUTE_MODULES; k++)
			if (q->recompute_modules & (1u << k))
				cJSON_AddItemToArray(mods, cJSON_CreateString(sim_recompute_module_names[k]));
	}
	if (q->opt_states != SIM_OPT_FP32)
		cJSON_AddStringToObject(o, "optimizer_moments", sim_opt_state_names[q->opt_states]);
	if (q->loss != SIM_LOSS_VOCAB_PARALLEL)
		cJSON_AddStringToObject(o, "loss", sim_loss_names[q->loss]);
	add_num(o, "interleave", q->interleave);
	if (q->pp_last_layers > 0)
		add_num(o, "pp_last_layers", q->pp_last_layers);
	cJSON_AddBoolToObject(o, "seq_parallel", q->seq_parallel);
	cJSON_AddBoolToObject(o, "flash", q->flash);
	cJSON_AddStringToObject(o, "attn_kernel", sim_attn_kernel_names[q->attn_kernel]);
	if (q->moe_gemm != SIM_MOE_GEMM_AUTO)
		cJSON_AddStringToObject(o, "moe_gemm", sim_moe_gemm_names[q->moe_gemm]);
	if (q->stack != SIM_STACK_UNSTATED)
		cJSON_AddStringToObject(o, "stack", sim_stack_names[q->stack]);
	cJSON_AddStringToObject(o, "precision", sim_precision_str(q->precision));
	cJSON_AddBoolToObject(o, "tp_overlap", q->tp_overlap);
	cJSON_AddStringToObject(o, "zero3_gather", sim_zero3_gather_names[q->zero3_gather]);
	cJSON_AddStringToObject(o, "zero2_reduce", sim_zero2_reduce_names[q->zero2_every_micro_batch != 0]);
	cJSON_AddStringToObject(o, "dp_overlap", sim_dp_overlap_names[q->dp_overlap]);
	if (q->pp_send_whole)
		cJSON_AddStringToObject(o, "pp_send", sim_pp_send_names[1]);
	if (q->fp8_param_gather)
		cJSON_AddBoolToObject(o, "fp8_param_gather", 1);
	add_num(o, "grad_bytes", q->grad_bytes_per_param > 0 ? q->grad_bytes_per_param : 2);
	add_num(o, "moe_imbalance", q->moe_imbalance > 0 ? q->moe_imbalance : 1);
	cJSON_AddBoolToObject(o, "ep_overlap", q->ep_overlap);
	cJSON_AddStringToObject(o, "ep_dispatcher", sim_ep_dispatcher_names[q->ep_flex != 0]);

	/* Pre-training without offload writes no finetune object: such plans
	 * read and print as they always did. */
	if (q->ft.method != SIM_FT_NONE || q->ft.offload != SIM_OFFLOAD_NONE) {
		char t[64];

		o = cJSON_AddObjectToObject(root, "finetune");
		cJSON_AddStringToObject(o, "method", sim_ft_method_names[q->ft.method]);
		if (q->ft.method == SIM_FT_LORA || q->ft.method == SIM_FT_QLORA) {
			add_num(o, "lora_rank", q->ft.lora_rank > 0 ? q->ft.lora_rank
							       : SIM_LORA_DEFAULT_RANK);
			sim_lora_targets_str(q->ft.lora_targets, t, sizeof(t));
			cJSON_AddStringToObject(o, "lora_targets", t);
		}
		cJSON_AddStringToObject(o, "offload", sim_offload_names[q->ft.offload]);
		add_num(o, "trainable_params", sim_trainable_params(m, &q->ft));
	}

	o = cJSON_AddObjectToObject(root, "job");
	add_num(o, "tokens", p->tokens);
	if (p->epochs > 0) {
		add_num(o, "epochs", p->epochs);
		add_num(o, "dataset_tokens", p->dataset_tokens);
	}
	add_num(o, "usd_per_gpu_hour", p->usd_per_gpu_hour);
	if (p->ckpt_interval_s > 0)
		add_num(o, "checkpoint_interval_s", p->ckpt_interval_s);

	if (p->ckpt_interval_s > 0 || p->ckpt_keep > 0) {
		o = cJSON_AddObjectToObject(root, "costs");
		add_num(o, "checkpoint_interval_s", p->ckpt_interval_s);
		add_num(o, "checkpoints_kept", p->ckpt_keep);
	}
	add_interrupts(root, p);

	o = cJSON_AddObjectToObject(root, "inputs");
	cJSON_AddStringToObject(o, "command", p->command);
	cJSON_AddStringToObject(o, "catalog_digest", p->catalog_digest);
	if (p->framework > 0 && p->framework < 4)
		cJSON_AddStringToObject(o, "framework", sim_plan_framework_names[p->framework]);

	add_assumptions(root, p);
	add_prediction(cJSON_AddObjectToObject(root, "prediction"), p);
	return root;
}

char *sim_plan_to_json(const struct sim_plan *p)
{
	cJSON *root = plan_to_cjson(p);
	char *s = cJSON_Print(root);

	cJSON_Delete(root);
	if (!s)
		abort();        /* cJSON fails only when out of memory */
	return s;
}

char *sim_prediction_to_json(const struct sim_plan *p)
{
	cJSON *root = cJSON_CreateObject();
	char *s;

	add_prediction(root, p);
	{
		char line[320];

		sim_stack_describe(&p->par, sim_gpu_arch(&p->cluster.gpu), p->model.experts > 0, line, sizeof(line));
		cJSON_AddStringToObject(root, "stack", line);
	}
	/* Beside cost_usd: which of the offering's rates it was priced at.
	 * The plan file's own prediction leaves it to .offering.purchase. */
	if (p->offering.provider[0])
		cJSON_AddStringToObject(root, "purchase", price_purchase_str(p->purchase));
	add_interrupts(root, p);
	add_assumptions(root, p);
	s = cJSON_Print(root);
	cJSON_Delete(root);
	if (!s)
		abort();
	return s;
}

enum rc sim_plan_write(const char *path, const struct sim_plan *p)
{
	char *json = sim_plan_to_json(p);
	enum rc rc = gp_write_text_atomic(path, json);

	free(json);
	return rc;
}
