/*
 * plan_opts.c - what every file of the planner reads: the options' and a
 * job's defaults, the names of the objective, the binding constraint and
 * the framework, the rules a framework puts on a layout (expert layouts
 * and MoE communication included), the precision a plan uses on a GPU,
 * and which loss a step's breakdown is largest in.
 *
 * It sits below the enumeration (plan_enum.c), the MILP (plan_lp.c) and
 * the pipeline (plan.c), which all read it; it calls none of them.
 */
#include "plan_internal.h"

#include <string.h>

void plan_opts_init(struct plan_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->filter.spot = -1;
	o->filter.min_gpus = 1;
	o->filter.max_gpus = PLAN_DEFAULT_MAX_GPUS;
	o->filter.zero = -1;
	o->filter.offload = -1;
	o->budget_usd = -1;
	o->hourly_budget_usd = -1;
	o->deadline_s = -1;
	o->objective = PLAN_OBJECTIVE_AUTO;
	o->phases = 1;
	o->switch_s = PLAN_DEFAULT_SWITCH_S;
	o->failures_per_gpu_hour = PLAN_DEFAULT_FAILURES_PER_GPU_HOUR;
	o->preempt_per_node_hour = PLAN_DEFAULT_PREEMPT_PER_NODE_HOUR;
	o->restart_s = PLAN_DEFAULT_RESTART_S;
	o->ckpt_bytes_per_s_per_node = PLAN_DEFAULT_CKPT_BYTES_PER_S_PER_NODE;
	o->milp_time_limit_s = PLAN_DEFAULT_MILP_TIME_LIMIT_S;
	o->top = PLAN_DEFAULT_TOP;
	o->sensitivity = PLAN_DEFAULT_SENSITIVITY;
	o->commitment_share = PLAN_DEFAULT_COMMITMENT_SHARE;
	o->storage_usd_per_gb_month = PLAN_DEFAULT_STORAGE_USD_PER_GB_MONTH;
	o->ckpt_keep = PLAN_DEFAULT_CKPT_KEEP;
	o->ckpt_interval_s = PLAN_CKPT_INTERVAL_AUTO;
	o->startup_s = PLAN_DEFAULT_STARTUP_S;
	o->filter.framework = PLAN_FRAMEWORK_MEGATRON;
	o->filter.stack = SIM_STACK_TE216;
	o->max_price_age_days = PRICE_DEFAULT_MAX_AGE_DAYS;
	o->max_duration_s = PLAN_DEFAULT_MAX_DURATION_S;
	o->max_spot_duration_s = PLAN_DEFAULT_MAX_SPOT_DURATION_S;
}

void plan_job_init(struct plan_job *j, const struct sim_model *m, double tokens)
{
	memset(j, 0, sizeof(*j));
	gp_strlcpy(j->name, m->name, sizeof(j->name));
	j->model = *m;
	j->tokens = tokens;
	j->deadline_s = -1;
	j->priority = 1;
}

const char *plan_binding_str(enum plan_binding b)
{
	switch (b) {
	case PLAN_BINDING_NONE: return "none";
	case PLAN_BINDING_BUDGET: return "budget";
	case PLAN_BINDING_HOURLY_BUDGET: return "hourly-budget";
	case PLAN_BINDING_DEADLINE: return "deadline";
	case PLAN_BINDING_AVAILABILITY: return "availability";
	case PLAN_BINDING_MAX_GPUS: return "max-gpus";
	case PLAN_BINDING_BATCH: return "batch";
	case PLAN_BINDING_MEMORY: return "memory";
	}
	return "none";
}

const char *plan_objective_str(enum plan_objective o)
{
	return o == PLAN_OBJECTIVE_TIME ? "time" : o == PLAN_OBJECTIVE_COST ? "cost" : "auto";
}

enum rc plan_objective_parse(const char *s, enum plan_objective *out)
{
	if (s && strcmp(s, "time") == 0)
		*out = PLAN_OBJECTIVE_TIME;
	else if (s && strcmp(s, "cost") == 0)
		*out = PLAN_OBJECTIVE_COST;
	else
		return RC_USAGE;
	return RC_OK;
}

static const char *const framework_names[] = { "any", "megatron", "deepspeed" };

const char *plan_framework_str(enum plan_framework f)
{
	return framework_names[f];
}

enum rc plan_framework_parse(const char *s, enum plan_framework *out)
{
	for (size_t i = 0; s && i < GP_ARRAY_LEN(framework_names); i++)
		if (gp_streq_nocase(s, framework_names[i])) {
			*out = (enum plan_framework)i;
			return RC_OK;
		}
	return RC_USAGE;
}

/* Megatron-LM shards gradients (ZeRO-2/3) only through Megatron-FSDP,
 * and "FSDP and PP are mutually exclusive in Megatron's standard path"
 * (Megatron-LM PR #6081); DeepSpeed's PipelineEngine refuses ZeRO stages
 * 2 and 3 ("ZeRO-2 and ZeRO-3 are incompatible with pipeline
 * parallelism", deepspeed/runtime/pipe/engine.py).  With pipeline
 * parallelism both keep whole gradients: at most ZeRO-1.  DeepSpeed's
 * engine asserts "MoE not supported with Stage 3" (runtime/engine.py). */
int plan_framework_max_zero(enum plan_framework f, const struct sim_model *m, int pp)
{
	if (f != PLAN_FRAMEWORK_ANY && pp > 1)
		return 1;
	return f == PLAN_FRAMEWORK_DEEPSPEED && m && m->experts > 0 ? 2 : 3;
}

/* Where each framework keeps model states off the GPU, by ZeRO stage.
 * Megatron-LM offloads only the optimizer, to host memory, and only with
 * its distributed optimizer (ZeRO-1 here): --optimizer-cpu-offload
 * (megatron/training/arguments.py, HybridDeviceOptimizer in
 * megatron/core/optimizer/cpu_offloading); it has no NVMe offload.
 * DeepSpeed's offload_optimizer: "CPU offloading is available with ZeRO
 * stage 1, 2, 3. NVMe offloading is available only with ZeRO stage 3"
 * (ZeRO-Offload and ZeRO-Infinity, deepspeed.ai/docs/config-json), and
 * its pipeline engine runs ZeRO-1 alone (plan_framework_max_zero), so
 * NVMe needs pp 1.  gpuplan execute ("any") runs what sim_check accepts. */
int plan_framework_runs_offload(enum plan_framework f, int zero, enum sim_offload off)
{
	if (off == SIM_OFFLOAD_NONE || f == PLAN_FRAMEWORK_ANY)
		return 1;
	if (f == PLAN_FRAMEWORK_MEGATRON)
		return off == SIM_OFFLOAD_CPU && zero == 1;
	return off == SIM_OFFLOAD_CPU ? zero >= 1 : zero == 3;
}

/* The name an answer gives its framework. */
const char *plan_framework_title(enum plan_framework f)
{
	return f == PLAN_FRAMEWORK_MEGATRON ? "Megatron-LM" :
	       f == PLAN_FRAMEWORK_DEEPSPEED ? "DeepSpeed" : "gpuplan execute";
}

/* Megatron-Core folds the expert group over the attention's tp x cp x dp
 * GPUs (Liu et al. 2025), which sim_check checks.  DeepSpeed-MoE forms
 * its expert-parallel groups from the data-parallel ranks (deepspeed/
 * utils/groups.py, _get_expert_parallel_ranks: "expert_parallel_group"
 * within "data_parallel_group") and splits an expert over the tensor-
 * parallel ranks or not at all (the MoE layer's
 * enable_expert_tensor_parallelism). */
int plan_framework_runs_experts(enum plan_framework f, const struct sim_parallel *q)
{
	int ep = q->ep > 0 ? q->ep : 1, etp = q->etp > 0 ? q->etp : 1;

	if (f != PLAN_FRAMEWORK_DEEPSPEED)
		return 1;
	return q->dp % ep == 0 && (etp == 1 || etp == q->tp);
}

enum sim_loss plan_trainer_loss(const struct sim_finetune *ft)
{
	return ft->method == SIM_FT_LORA || ft->method == SIM_FT_QLORA ? SIM_LOSS_EAGER_FP32
									: SIM_LOSS_VOCAB_PARALLEL;
}

void plan_framework_price(enum plan_framework f, const struct sim_model *m,
			  const struct price_gpu *g, struct sim_parallel *q)
{
	if (f == PLAN_FRAMEWORK_ANY)
		return;
	/* The MoE layer's communication.  DeepSpeed-MoE sends tokens with
	 * one all-to-all each way and computes in between (deepspeed/moe/
	 * sharded_moe.py): NCCL's all-to-all, nothing overlapped.
	 * Megatron-Core's flex dispatcher (DeepEP, HybridEP: "GB200, B200,
	 * H100 supported", its MoE README) sends a token across the network
	 * once per NVLink domain that holds its experts; it runs on Hopper
	 * and Blackwell, elsewhere the alltoall dispatcher.
	 * --overlap-moe-expert-parallel-comm hides one micro-batch's
	 * all-to-alls under another's compute where transformer_config.py
	 * allows it: ep > 1, virtual pipeline stages with pp > 1, no full
	 * recomputation, at most one MTP layer. */
	q->ep_flex = 0;
	q->ep_overlap = 0;
	/* Megatron-LM overlaps the TP collectives with the GEMMs they feed
	 * (--tp-comm-overlap, Transformer Engine's userbuffers, which export
	 * writes; arguments.py asserts sequence parallelism with it), as
	 * current recipes run (NeMo/Megatron-Bridge's tp_comm_overlap),
	 * with the distributed optimizer, on NVLink (the userbuffers are
	 * peers' memory mapped over it); not with Megatron-FSDP (ZeRO-2/3),
	 * with which no recipe or test of Megatron-LM runs it.  DeepSpeed's
	 * Megatron layers do not overlap. */
	q->tp_overlap = f == PLAN_FRAMEWORK_MEGATRON && q->tp > 1 && q->seq_parallel &&
			q->zero <= 1 && g && g->nvlink;
	if (f == PLAN_FRAMEWORK_MEGATRON && m && g) {
		/* a release unstated: the planner's default, the newest */
		if (q->stack == SIM_STACK_UNSTATED)
			q->stack = SIM_STACK_TE216;
		sim_stack_apply(m, sim_gpu_arch(g), q);
	}
	/* Megatron-LM with --bf16 accumulates and reduces gradients in fp32
	 * (arguments.py sets accumulate_allreduce_grads_in_fp32 unless
	 * --grad-reduce-in-bf16), and overlaps the sums and ZeRO-1's gather
	 * with the flags export writes (--overlap-grad-reduce
	 * --overlap-param-gather). */
	q->grad_bytes_per_param = f == PLAN_FRAMEWORK_MEGATRON ? 4 : 2;
	/* Megatron-LM gathers FP8-trained weights in FP8
	 * (--fp8-param-gather, which export writes and Megatron-Bridge's FP8
	 * mixed precisions set) where ZeRO gathers them. */
	q->fp8_param_gather = f == PLAN_FRAMEWORK_MEGATRON && q->zero >= 1 &&
			      (q->precision == SIM_PRECISION_FP8 ||
			       q->precision == SIM_PRECISION_MXFP8);
	q->zero2_every_micro_batch = 0;
	q->dp_overlap = SIM_DP_OVERLAP_ALL;
	/* Pipeline sends: Megatron-LM's 1F1B sends each TP rank's share;
	 * DeepSpeed's PipelineEngine the whole activation from every TP
	 * rank, its sends and receives one after the other
	 * (sim_parallel.pp_send_whole). */
	q->pp_send_whole = f == PLAN_FRAMEWORK_DEEPSPEED;
	if (f != PLAN_FRAMEWORK_DEEPSPEED)
		return;
	/* DeepSpeed's stage 2 reduce-scatters every micro-batch's gradients
	 * (sim_parallel.zero2_every_micro_batch); without ZeRO it sums them
	 * after the backward (allreduce_gradients after loss.backward(),
	 * runtime/engine.py), and it gathers stage 1 and 2's updated weights
	 * at the end of step() (all_gather_dp_groups, runtime/zero/
	 * stage_1_and_2.py); its stage 3 prefetches. */
	q->zero2_every_micro_batch = 1;
	if (q->zero == 0)
		q->dp_overlap = SIM_DP_OVERLAP_NONE;
	else if (q->zero <= 2)
		q->dp_overlap = SIM_DP_OVERLAP_SUMS;
}

double plan_largest_loss(const struct sim_result *r, const char **name)
{
	const struct sim_breakdown *b = &r->breakdown;
	const struct { const char *name; double s; } parts[] = {
		{ "pp bubble", b->pp_bubble_s },
		{ "tp comm", b->tp_comm_s },
		{ "cp comm", b->cp_comm_s },
		{ "pp comm", b->pp_comm_s },
		{ "ep comm", b->ep_comm_s },
		{ "dp comm", b->dp_comm_exposed_s },
		{ "optimizer", b->optimizer_s },
	};
	double best = 0;

	*name = "none";
	for (size_t i = 0; i < GP_ARRAY_LEN(parts); i++)
		if (parts[i].s > best) {
			best = parts[i].s;
			*name = parts[i].name;
		}
	return r->step_time_s > 0 ? best / r->step_time_s : 0;
}

static const char *const precision_names[] = { "default", "auto", "bf16", "fp8", "mxfp8" };

const char *plan_precision_str(enum plan_precision p)
{
	return precision_names[p];
}

enum rc plan_precision_parse(const char *s, enum plan_precision *out)
{
	for (size_t i = PLAN_PRECISION_AUTO; s && i < GP_ARRAY_LEN(precision_names); i++)
		if (gp_streq_nocase(s, precision_names[i])) {
			*out = (enum plan_precision)i;
			return RC_OK;
		}
	return RC_USAGE;
}

/* A precision is a recipe as much as a rate: auto takes the one the
 * published runs use on each GPU.  Megatron-Bridge trains DeepSeek-V3 and
 * Qwen3-30B-A3B in MXFP8 on B200, B300, GB200 and GB300 and in FP8 on
 * H100 (its performance tables: reference/moe_runs.csv), as Megatron-LM's
 * MoE README recommends (blockwise FP8 on Hopper, MXFP8 on Blackwell);
 * DeepSeek-V3 itself trained in FP8 (DeepSeek-AI 2024, sec. 3.3).  Dense
 * models keep BF16 unless asked: their shipped presets' published runs
 * are BF16 (Llama 3, Dubey et al. 2024, sec. 3.3). */
int plan_precision_pick(enum plan_precision p, const struct sim_model *m,
			const struct price_gpu *g)
{
	struct sim_parallel q;

	sim_parallel_init(&q);
	if (p == PLAN_PRECISION_DEFAULT)
		p = m->experts > 0 ? PLAN_PRECISION_AUTO : PLAN_PRECISION_BF16;
	switch (p) {
	case PLAN_PRECISION_BF16:
		return SIM_PRECISION_BF16;
	case PLAN_PRECISION_FP8:
		return g->fp8_flops_per_s > 0 ? SIM_PRECISION_FP8 : -1;
	case PLAN_PRECISION_MXFP8:
		q.precision = SIM_PRECISION_MXFP8;
		return sim_precision_peak(&q, g) > 0 ? SIM_PRECISION_MXFP8 : -1;
	default:
		q.precision = SIM_PRECISION_MXFP8;
		if (sim_precision_peak(&q, g) > 0)
			return SIM_PRECISION_MXFP8;
		return g->fp8_flops_per_s > 0 ? SIM_PRECISION_FP8 : SIM_PRECISION_BF16;
	}
}
