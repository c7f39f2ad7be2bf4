/*
 * export_framework.c - what a framework runs where it cannot run the plan
 * as priced: Megatron-LM's ZeRO-2/3 is Megatron-FSDP, DeepSpeed's pipeline
 * engine takes ZeRO-1 at most, and each prices gradients and overlaps its
 * own way (plan_framework_price).  The plan re-simulated as the framework
 * runs it, the comment a script carries and the warning on stderr.
 * Changes no plan silently and writes no flag itself.
 */
#include "export_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Megatron-Core's ZeRO-2/3 is Megatron-FSDP: --use-megatron-fsdp with
 * --data-parallel-sharding-strategy optim_grads (ZeRO-2) or
 * optim_grads_params (ZeRO-3); --use-distributed-optimizer alone is ZeRO-1
 * (Megatron-LM docs/discussions/megatron-fsdp-user-guide).  The guide
 * documents it without pipeline stages, so with them Megatron runs ZeRO-1
 * (export_zero1_instead). */
int export_megatron_fsdp(const struct sim_plan *p)
{
	return p->par.zero >= 2 && p->par.pp == 1;
}

/* 1 when fw cannot run p's ZeRO stage with p's pipeline and is given
 * ZeRO-1 instead: DeepSpeed's PipelineEngine asserts stage < 2 ("ZeRO-2
 * and ZeRO-3 are incompatible with pipeline parallelism", deepspeed/
 * runtime/pipe/engine.py), and Megatron-LM's ZeRO-2/3 is Megatron-FSDP
 * (above).  The torchrun and execute formats launch the user's script or
 * gpuplan's executor (PLAN_FRAMEWORK_ANY), which run every stage with a
 * pipeline. */
int export_zero1_instead(const struct sim_plan *p, enum plan_framework fw)
{
	return p->par.zero >= 2 && p->par.pp > 1 && fw != PLAN_FRAMEWORK_ANY;
}

const char *export_framework_title(enum plan_framework fw)
{
	return fw == PLAN_FRAMEWORK_MEGATRON ? "Megatron-LM" : "DeepSpeed";
}

/* p's layout as fw runs it: the ZeRO-1 of zero1_instead, priced with
 * fw's properties (plan_framework_price).  Returns 1 when that differs
 * from the plan as priced. */
static int framework_par(const struct sim_plan *p, enum plan_framework fw,
			 struct sim_parallel *q)
{
	*q = p->par;
	if (export_zero1_instead(p, fw))
		q->zero = 1;
	plan_framework_price(fw, &p->model, &p->cluster.gpu, q);
	/* the script overlaps TP's collectives (--tp-comm-overlap) exactly
	 * where the plan priced it so */
	q->tp_overlap = p->par.tp_overlap;
	return q->zero != p->par.zero || q->grad_bytes_per_param != p->par.grad_bytes_per_param ||
	       q->zero2_every_micro_batch != p->par.zero2_every_micro_batch ||
	       q->dp_overlap != p->par.dp_overlap || q->ep_flex != p->par.ep_flex ||
	       q->ep_overlap != p->par.ep_overlap;
}

/* Whether fw runs p otherwise than priced, and how: 0 when it runs it as
 * priced, or so nearly that step time and memory move less than
 * FRAMEWORK_SAME; else 1 with the prediction for what it runs in *r.  A
 * plan the simulator rejects (hand-edited) cannot be re-priced: 0, unless
 * the layout itself changes (export_zero1_instead), -1 then with sim_check's
 * reason in why[size]. */
#define FRAMEWORK_SAME 0.005

int export_framework_predict(const struct sim_plan *p, enum plan_framework fw,
			     struct sim_result *r, char *why, size_t size)
{
	const struct sim_result *a = &p->result;
	struct sim_parallel q;

	if (!framework_par(p, fw, &q))
		return 0;
	if (sim_check(&p->model, &q, &p->cluster, why, size) != RC_OK)
		return export_zero1_instead(p, fw) ? -1 : 0;
	sim_step(&p->model, &q, &p->cluster, r);
	return export_zero1_instead(p, fw) || r->fits != a->fits ||
	       fabs(r->step_time_s - a->step_time_s) >= FRAMEWORK_SAME * a->step_time_s ||
	       fabs(r->memory.total - a->memory.total) >= FRAMEWORK_SAME * a->memory.total;
}

/* Appends one more item of a ", "-separated list to out[size]. */
static void list_add(char *out, size_t size, const char *item)
{
	size_t len = strlen(out);

	snprintf(out + len, size - len, "%s%s", len ? ", " : "", item);
}

/* How fw's run differs from the plan's pricing, in words (Megatron-LM's
 * fp32 gradients, DeepSpeed's exposed DP collectives). */
static void framework_differences(char *out, size_t size, const struct sim_plan *p,
				  enum plan_framework fw)
{
	struct sim_parallel q;

	out[0] = '\0';
	framework_par(p, fw, &q);
	if (q.grad_bytes_per_param != p->par.grad_bytes_per_param)
		list_add(out, size, q.grad_bytes_per_param >= 4 ? "fp32 gradients" : "bf16 gradients");
	if (q.zero == 2 && q.zero2_every_micro_batch != p->par.zero2_every_micro_batch)
		list_add(out, size, q.zero2_every_micro_batch ? "ZeRO-2 reducing every micro-batch"
							      : "ZeRO-2 reducing once a step");
	if (q.dp_overlap != p->par.dp_overlap && q.dp * q.cp > 1)
		list_add(out, size, q.dp_overlap == SIM_DP_OVERLAP_NONE
					    ? "gradient sums after the backward"
				    : q.dp_overlap == SIM_DP_OVERLAP_SUMS
					    ? "the weight gather after the step"
					    : "DP collectives overlapped");
	if (q.ep_flex != p->par.ep_flex)
		list_add(out, size, q.ep_flex ? "the flex dispatcher" : "the alltoall dispatcher");
	if (q.ep_overlap != p->par.ep_overlap)
		list_add(out, size, q.ep_overlap ? "EP all-to-alls overlapped"
						 : "EP all-to-alls not overlapped");
}

/* The comment lines saying what fw runs instead of the plan and what it
 * costs: r (export_framework_predict) against the plan's own prediction. */
void export_framework_comment(struct export_buf *b, const struct sim_plan *p, enum plan_framework fw,
			      const struct sim_result *r)
{
	int megatron = fw == PLAN_FRAMEWORK_MEGATRON;
	char need[32], cap[32], planned[32], t1[32], t0[32], diff[160];

	framework_differences(diff, sizeof(diff), p, fw);
	if (export_zero1_instead(p, fw))
		export_printf(b, "# NOTE: %s does not run the plan's ZeRO-%d with pipeline parallelism "
				 "(pp %d):\n# %s.\n# Written instead: ZeRO-1 (%s), which needs\n",
			      export_framework_title(fw), p->par.zero, p->par.pp,
			      megatron ? "its ZeRO-2/3 is Megatron-FSDP, documented without pipeline stages"
				       : "its pipeline engine asserts ZeRO stage < 2",
			      megatron ? "--use-distributed-optimizer, fp32 gradients" : "\"stage\": 1 in the config");
	else
		export_printf(b, "# NOTE: the plan was not priced as %s runs it (%s), which needs\n",
			      export_framework_title(fw), diff);
	export_printf(b, "# %s per GPU of %s: %s (the plan: %s); step %s (the plan: %s).\n",
		      unit_fmt_bytes(need, sizeof(need), r->memory.total),
		      unit_fmt_bytes(cap, sizeof(cap), r->memory.capacity),
		      r->fits ? "fits" : "does NOT fit",
		      unit_fmt_bytes(planned, sizeof(planned), p->result.memory.total),
		      unit_fmt_duration(t1, sizeof(t1), r->step_time_s),
		      unit_fmt_duration(t0, sizeof(t0), p->result.step_time_s));
	if (export_zero1_instead(p, fw))
		export_printf(b, "# Plan with --framework %s for layouts it runs, priced as it runs them\n"
				 "# (or with --pp 1 to keep ZeRO-%d).\n",
			      megatron ? "megatron" : "deepspeed", p->par.zero);
	else
		export_printf(b, "# Plan with --framework %s to price it so.\n",
			      megatron ? "megatron" : "deepspeed");
}

/* The same on stderr, once: always for export_zero1_instead, else when what fw
 * runs will not fit or steps FRAMEWORK_SLOWER longer; a hint when it does
 * not fit. */
#define FRAMEWORK_SLOWER 0.05

void export_framework_warn(const struct sim_plan *p, enum plan_framework fw,
			   const struct sim_result *r)
{
	const char *name = plan_framework_str(fw);
	char need[32], cap[32], planned[32], t1[32], t0[32], diff[160];

	unit_fmt_bytes(need, sizeof(need), r->memory.total);
	unit_fmt_bytes(cap, sizeof(cap), r->memory.capacity);
	unit_fmt_bytes(planned, sizeof(planned), p->result.memory.total);
	if (export_zero1_instead(p, fw)) {
		gp_warn("export: %s cannot run ZeRO-%d with pipeline parallelism (pp %d); wrote "
			"ZeRO-1, which needs %s per GPU of %s (the plan: %s): %s",
			export_framework_title(fw), p->par.zero, p->par.pp, need, cap, planned,
			r->fits ? "it fits" : "it will NOT fit");
		if (!r->fits)
			gp_hint("plan again with --framework %s (gpuplan plan ... --framework %s) "
				"for a layout it runs, or with --pp 1 to keep ZeRO-%d",
				name, name, p->par.zero);
		return;
	}
	if (r->fits && r->step_time_s < (1 + FRAMEWORK_SLOWER) * p->result.step_time_s)
		return;
	framework_differences(diff, sizeof(diff), p, fw);
	gp_warn("export: as %s runs it (%s) the plan needs %s per GPU of %s (the plan: %s) "
		"and steps in %s (the plan: %s)%s", export_framework_title(fw), diff, need, cap, planned,
		unit_fmt_duration(t1, sizeof(t1), r->step_time_s),
		unit_fmt_duration(t0, sizeof(t0), p->result.step_time_s),
		r->fits ? "" : ": it will NOT fit");
	gp_hint("plan again with --framework %s (gpuplan plan ... --framework %s) to price it "
		"as %s runs it", name, name, export_framework_title(fw));
}

/* Whether the trainer keeps CUDA_DEVICE_MAX_CONNECTIONS=1 (export_nccl_env). */
int export_one_connection(const struct sim_plan *p, enum plan_framework fw)
{
	return fw != PLAN_FRAMEWORK_MEGATRON || !export_megatron_fsdp(p);
}
