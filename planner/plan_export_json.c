/*
 * plan_export_json.c - renders a plan for other tools.  Text formats are
 * built with a small growable buffer; the DeepSpeed config goes through
 * cJSON (hence the file name) so that it always parses.
 *
 * Flag names follow Megatron-LM's megatron/training/arguments.py, the
 * DeepSpeed config reference (deepspeed.ai/docs/config-json), torchrun's
 * documentation, Kubeflow's PyTorchJob (kubeflow.org/v1) and SkyPilot's
 * task YAML (docs.skypilot.co, "YAML Configuration"; sky/utils/schemas.py).
 *
 * A plan a framework cannot run as planned (ZeRO-2/3 with a pipeline under
 * Megatron-LM or DeepSpeed) is written as the nearest one it runs, ZeRO-1,
 * with a warning and a comment giving that layout's memory and step time;
 * nothing is changed silently.
 */
#include "plan_export.h"
#include "plan.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct buf {
	char *s;
	size_t len, cap;
};

static void bprintf(struct buf *b, const char *fmt, ...) GP_PRINTF(2, 3);
static void bprintf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		b->cap = b->cap ? 2 * b->cap + (size_t)n : 1024 + (size_t)n;
		b->s = xrealloc(b->s, b->cap);
	}
}

static const struct {
	const char *name;
	enum plan_export_format f;
} formats[] = {
	{ "megatron", PLAN_EXPORT_MEGATRON },
	{ "deepspeed", PLAN_EXPORT_DEEPSPEED },
	{ "torchrun", PLAN_EXPORT_TORCHRUN },
	{ "slurm", PLAN_EXPORT_SLURM },
	{ "mpirun", PLAN_EXPORT_MPIRUN },
	{ "kubernetes", PLAN_EXPORT_KUBERNETES },
	{ "skypilot", PLAN_EXPORT_SKYPILOT },
};

enum rc plan_export_format_parse(const char *name, enum plan_export_format *out)
{
	for (size_t i = 0; i < GP_ARRAY_LEN(formats); i++)
		if (gp_streq_nocase(name, formats[i].name)) {
			*out = formats[i].f;
			return RC_OK;
		}
	if (gp_streq_nocase(name, "k8s") || gp_streq_nocase(name, "kubeflow")) {
		*out = PLAN_EXPORT_KUBERNETES;
		return RC_OK;
	}
	return RC_USAGE;
}

const char *plan_export_format_names(void)
{
	return "megatron, deepspeed, torchrun, slurm, mpirun, kubernetes, skypilot";
}

static int plan_gpus(const struct sim_plan *p)
{
	return p->par.tp * p->par.pp * p->par.dp * p->par.cp;
}

/* GPUs per node as launched: the node size, or all GPUs when they fit in
 * one node. */
static int launch_gpus_per_node(const struct sim_plan *p)
{
	int g = plan_gpus(p), n = p->cluster.gpus_per_node;

	return n > 0 && n < g ? n : g;
}

static int launch_nodes(const struct sim_plan *p)
{
	int g = plan_gpus(p), n = launch_gpus_per_node(p);

	return (g + n - 1) / n;
}

static int grad_accum(const struct sim_plan *p)
{
	return p->par.gbs / (p->par.mbs * p->par.dp);
}

/* NCCL settings the layout needs.  GPUs without peer-to-peer (RTX 4090:
 * disabled in the stock driver, NVIDIA/nccl#1127) must not try it;
 * Megatron wants one CUDA connection so that TP communication keeps its
 * order with compute (Megatron-LM README, CUDA_DEVICE_MAX_CONNECTIONS),
 * except under Megatron-FSDP (one_connection 0), which refuses it:
 * arguments.py asserts CUDA_DEVICE_MAX_CONNECTIONS != "1" with
 * --use-megatron-fsdp, and the Megatron-FSDP user guide unsets it. */
static void nccl_env(struct buf *b, const struct sim_plan *p, const char *prefix,
		     int one_connection)
{
	if (one_connection)
		bprintf(b, "%sCUDA_DEVICE_MAX_CONNECTIONS=1\n", prefix);
	else
		bprintf(b, "# Megatron-FSDP asserts CUDA_DEVICE_MAX_CONNECTIONS is not 1 "
			   "(megatron/training/arguments.py)\nunset CUDA_DEVICE_MAX_CONNECTIONS\n");
	if (!p->cluster.gpu.p2p)
		bprintf(b, "%sNCCL_P2P_DISABLE=1\n", prefix);
	if (launch_nodes(p) > 1)
		bprintf(b, "%sNCCL_IB_DISABLE=0\n", prefix);
}

/* Megatron-Core's ZeRO-2/3 is Megatron-FSDP: --use-megatron-fsdp with
 * --data-parallel-sharding-strategy optim_grads (ZeRO-2) or
 * optim_grads_params (ZeRO-3); --use-distributed-optimizer alone is ZeRO-1
 * (Megatron-LM docs/discussions/megatron-fsdp-user-guide).  The guide
 * documents it without pipeline stages, so with them Megatron runs ZeRO-1
 * (zero1_instead). */
static int megatron_fsdp(const struct sim_plan *p)
{
	return p->par.zero >= 2 && p->par.pp == 1;
}

/* 1 when f cannot run p's ZeRO stage with p's pipeline and is given ZeRO-1
 * instead: DeepSpeed's PipelineEngine asserts stage < 2 ("ZeRO-2 and ZeRO-3
 * are incompatible with pipeline parallelism", deepspeed/runtime/pipe/
 * engine.py), and Megatron-LM's ZeRO-2/3 is Megatron-FSDP (above).  The
 * other formats launch the user's script or gpuplan's executor, which runs
 * every stage with a pipeline. */
static int zero1_instead(const struct sim_plan *p, enum plan_export_format f)
{
	return p->par.zero >= 2 && p->par.pp > 1 &&
	       (f == PLAN_EXPORT_MEGATRON || f == PLAN_EXPORT_DEEPSPEED);
}

/* The framework a format runs the plan under: Megatron-LM's and
 * DeepSpeed's own launchers; the others start the user's script or
 * gpuplan's executor, which run the plan as it was priced. */
static enum plan_framework format_framework(enum plan_export_format f)
{
	return f == PLAN_EXPORT_MEGATRON ? PLAN_FRAMEWORK_MEGATRON
	       : f == PLAN_EXPORT_DEEPSPEED ? PLAN_FRAMEWORK_DEEPSPEED : PLAN_FRAMEWORK_ANY;
}

static const char *framework_title(enum plan_export_format f)
{
	return f == PLAN_EXPORT_MEGATRON ? "Megatron-LM" : "DeepSpeed";
}

/* p's layout as f runs it: the ZeRO-1 of zero1_instead, priced with f's
 * properties (plan_framework_price).  Returns 1 when that differs from
 * the plan as priced. */
static int framework_par(const struct sim_plan *p, enum plan_export_format f,
			 struct sim_parallel *q)
{
	*q = p->par;
	if (zero1_instead(p, f))
		q->zero = 1;
	plan_framework_price(format_framework(f), q);
	return q->zero != p->par.zero || q->grad_bytes_per_param != p->par.grad_bytes_per_param ||
	       q->zero2_every_micro_batch != p->par.zero2_every_micro_batch ||
	       q->dp_overlap != p->par.dp_overlap;
}

/* Whether f runs p otherwise than priced, and how: 0 when it runs it as
 * priced, or so nearly that step time and memory move less than
 * FRAMEWORK_SAME; else 1 with the prediction for what it runs in *r.  A
 * plan the simulator rejects (hand-edited) cannot be re-priced: 0, unless
 * the layout itself changes (zero1_instead), -1 then with sim_check's
 * reason in why[size]. */
#define FRAMEWORK_SAME 0.005

static int framework_predict(const struct sim_plan *p, enum plan_export_format f,
			     struct sim_result *r, char *why, size_t size)
{
	const struct sim_result *a = &p->result;
	struct sim_parallel q;

	if (!framework_par(p, f, &q))
		return 0;
	if (sim_check(&p->model, &q, &p->cluster, why, size) != RC_OK)
		return zero1_instead(p, f) ? -1 : 0;
	sim_step(&p->model, &q, &p->cluster, r);
	return zero1_instead(p, f) || r->fits != a->fits ||
	       fabs(r->step_time_s - a->step_time_s) >= FRAMEWORK_SAME * a->step_time_s ||
	       fabs(r->memory.total - a->memory.total) >= FRAMEWORK_SAME * a->memory.total;
}

/* Appends one more item of a ", "-separated list to out[size]. */
static void list_add(char *out, size_t size, const char *item)
{
	size_t len = strlen(out);

	snprintf(out + len, size - len, "%s%s", len ? ", " : "", item);
}

/* How f's run differs from the plan's pricing, in words (Megatron-LM's
 * fp32 gradients, DeepSpeed's exposed DP collectives). */
static void framework_differences(char *out, size_t size, const struct sim_plan *p,
				  enum plan_export_format f)
{
	struct sim_parallel q;

	out[0] = '\0';
	framework_par(p, f, &q);
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
}

/* The comment lines saying what f runs instead of the plan and what it
 * costs: r (framework_predict) against the plan's own prediction. */
static void framework_comment(struct buf *b, const struct sim_plan *p, enum plan_export_format f,
			      const struct sim_result *r)
{
	int megatron = f == PLAN_EXPORT_MEGATRON;
	char need[32], cap[32], planned[32], t1[32], t0[32], diff[160];

	framework_differences(diff, sizeof(diff), p, f);
	if (zero1_instead(p, f))
		bprintf(b, "# NOTE: %s does not run the plan's ZeRO-%d with pipeline parallelism "
			   "(pp %d):\n# %s.\n# Written instead: ZeRO-1 (%s), which needs\n",
			framework_title(f), p->par.zero, p->par.pp,
			megatron ? "its ZeRO-2/3 is Megatron-FSDP, documented without pipeline stages"
				 : "its pipeline engine asserts ZeRO stage < 2",
			megatron ? "--use-distributed-optimizer, fp32 gradients" : "\"stage\": 1 in the config");
	else
		bprintf(b, "# NOTE: the plan was not priced as %s runs it (%s), which needs\n",
			framework_title(f), diff);
	bprintf(b, "# %s per GPU of %s: %s (the plan: %s); step %s (the plan: %s).\n",
		unit_fmt_bytes(need, sizeof(need), r->memory.total),
		unit_fmt_bytes(cap, sizeof(cap), r->memory.capacity),
		r->fits ? "fits" : "does NOT fit",
		unit_fmt_bytes(planned, sizeof(planned), p->result.memory.total),
		unit_fmt_duration(t1, sizeof(t1), r->step_time_s),
		unit_fmt_duration(t0, sizeof(t0), p->result.step_time_s));
	if (zero1_instead(p, f))
		bprintf(b, "# Plan with --framework %s for layouts it runs, priced as it runs them\n"
			   "# (or with --pp 1 to keep ZeRO-%d).\n",
			megatron ? "megatron" : "deepspeed", p->par.zero);
	else
		bprintf(b, "# Plan with --framework %s to price it so.\n",
			megatron ? "megatron" : "deepspeed");
}

/* The same on stderr, once: always for zero1_instead, else when what f
 * runs will not fit or steps FRAMEWORK_SLOWER longer; a hint when it does
 * not fit. */
#define FRAMEWORK_SLOWER 0.05

static void framework_warn(const struct sim_plan *p, enum plan_export_format f,
			   const struct sim_result *r)
{
	const char *fw = f == PLAN_EXPORT_MEGATRON ? "megatron" : "deepspeed";
	char need[32], cap[32], planned[32], t1[32], t0[32], diff[160];

	unit_fmt_bytes(need, sizeof(need), r->memory.total);
	unit_fmt_bytes(cap, sizeof(cap), r->memory.capacity);
	unit_fmt_bytes(planned, sizeof(planned), p->result.memory.total);
	if (zero1_instead(p, f)) {
		gp_warn("export: %s cannot run ZeRO-%d with pipeline parallelism (pp %d); wrote "
			"ZeRO-1, which needs %s per GPU of %s (the plan: %s): %s",
			framework_title(f), p->par.zero, p->par.pp, need, cap, planned,
			r->fits ? "it fits" : "it will NOT fit");
		if (!r->fits)
			gp_hint("plan again with --framework %s (gpuplan plan ... --framework %s) "
				"for a layout it runs, or with --pp 1 to keep ZeRO-%d",
				fw, fw, p->par.zero);
		return;
	}
	if (r->fits && r->step_time_s < (1 + FRAMEWORK_SLOWER) * p->result.step_time_s)
		return;
	framework_differences(diff, sizeof(diff), p, f);
	gp_warn("export: as %s runs it (%s) the plan needs %s per GPU of %s (the plan: %s) "
		"and steps in %s (the plan: %s)%s", framework_title(f), diff, need, cap, planned,
		unit_fmt_duration(t1, sizeof(t1), r->step_time_s),
		unit_fmt_duration(t0, sizeof(t0), p->result.step_time_s),
		r->fits ? "" : ": it will NOT fit");
	gp_hint("plan again with --framework %s (gpuplan plan ... --framework %s) to price it "
		"as %s runs it", fw, fw, framework_title(f));
}

static void torchrun_line(struct buf *b, const struct sim_plan *p)
{
	bprintf(b, "torchrun --nnodes %d --nproc-per-node %d", launch_nodes(p),
		launch_gpus_per_node(p));
	if (launch_nodes(p) > 1)
	{
		char id[PRICE_NAME_MAX + 16], *q;

		snprintf(id, sizeof(id), "gpuplan-%s", p->model.name);
		q = gp_shell_quote(id);
		bprintf(b, " --rdzv-backend c10d --rdzv-endpoint \"$MASTER_ADDR:29500\""
			   " --rdzv-id %s", q);
		free(q);
	}
	else
		bprintf(b, " --standalone");
}

/* The layers' split over the pipeline.  Megatron-LM cuts them evenly:
 * with equal chunks, --num-layers-per-virtual-pipeline-stage says so;
 * otherwise the simulator's split is spelt out for Megatron-Core's
 * --pipeline-model-parallel-layout (docs, "Custom Pipeline Model Parallel
 * Layout"): one '|'-separated segment per virtual stage in the order
 * activations flow, E the embedding, L the loss. */
static void pipeline_split(struct buf *b, const struct sim_plan *p)
{
	const struct sim_parallel *q = &p->par;
	int n = q->pp * q->interleave;

	if (q->pp < 2)
		return;
	if (p->model.layers % n == 0) {
		if (q->interleave > 1)
			bprintf(b, " \\\n  --num-layers-per-virtual-pipeline-stage %d",
				p->model.layers / n);
		return;
	}
	bprintf(b, " \\\n  --pipeline-model-parallel-layout \"");
	for (int k = 0; k < n; k++)
		bprintf(b, "%s%st*%d%s", k ? "|" : "", k ? "" : "E",
			sim_virtual_stage_layers(&p->model, q, k), k == n - 1 ? ",L" : "");
	bprintf(b, "\"");
}

static void megatron_args(struct buf *b, const struct sim_plan *p)
{
	const struct sim_model *m = &p->model;
	const struct sim_parallel *q = &p->par;

	bprintf(b, " \\\n  --num-layers %d --hidden-size %d --num-attention-heads %d",
		m->layers, m->hidden, m->heads);
	if (m->kv_heads != m->heads)
		bprintf(b, " \\\n  --group-query-attention --num-query-groups %d", m->kv_heads);
	bprintf(b, " \\\n  --ffn-hidden-size %d --seq-length %d --max-position-embeddings %d",
		m->ffn, m->seq, m->seq);
	if (m->mlp == SIM_MLP_SWIGLU)
		bprintf(b, " \\\n  --swiglu");
	if (!m->tied_embeddings)
		bprintf(b, " \\\n  --untie-embeddings-and-output-weights");
	bprintf(b, " \\\n  --tensor-model-parallel-size %d --pipeline-model-parallel-size %d",
		q->tp, q->pp);
	pipeline_split(b, p);
	if (q->cp > 1)
		bprintf(b, " \\\n  --context-parallel-size %d", q->cp);
	bprintf(b, " \\\n  --micro-batch-size %d --global-batch-size %d", q->mbs, q->gbs);
	if (q->seq_parallel)
		bprintf(b, " \\\n  --sequence-parallel");
	if (q->recompute == SIM_RECOMPUTE_FULL)
		bprintf(b, " \\\n  --recompute-granularity full --recompute-method uniform"
			   " --recompute-num-layers 1");
	else if (q->recompute == SIM_RECOMPUTE_SELECTIVE)
		bprintf(b, " \\\n  --recompute-granularity selective");
	if (megatron_fsdp(p))
		bprintf(b, " \\\n  --use-megatron-fsdp --data-parallel-sharding-strategy %s"
			   " \\\n  --use-distributed-optimizer --ckpt-format fsdp_dtensor"
			   " --no-gradient-accumulation-fusion",
			q->zero >= 3 ? "optim_grads_params" : "optim_grads");
	else if (q->zero >= 1)
		bprintf(b, " \\\n  --use-distributed-optimizer");
	/* The simulator hides the data-parallel sums under the backward but
	 * for the last bucket, and ZeRO-1's parameter all-gather likewise;
	 * Megatron does so only when asked (both flags default to off in
	 * megatron/training/arguments.py, which asserts the second needs the
	 * first and the distributed optimizer; Megatron-FSDP sets them from
	 * its sharding strategy). */
	if (q->dp * q->cp > 1 && !megatron_fsdp(p))
		bprintf(b, " \\\n  --overlap-grad-reduce%s",
			q->zero >= 1 ? " --overlap-param-gather" : "");
	if (q->flash)
		bprintf(b, " \\\n  --use-flash-attn");
	bprintf(b, " \\\n  --bf16");
	if (q->precision == SIM_PRECISION_FP8)
		bprintf(b, " --fp8-format hybrid");
	bprintf(b, "\n");
}

static char *deepspeed_config(const struct sim_plan *p)
{
	cJSON *root = cJSON_CreateObject(), *zero, *bf16, *ckpt;
	char *s;

	cJSON_AddNumberToObject(root, "train_batch_size", p->par.gbs);
	cJSON_AddNumberToObject(root, "train_micro_batch_size_per_gpu", p->par.mbs);
	cJSON_AddNumberToObject(root, "gradient_accumulation_steps", grad_accum(p));
	cJSON_AddNumberToObject(root, "gradient_clipping", 1.0);
	zero = cJSON_AddObjectToObject(root, "zero_optimization");
	cJSON_AddNumberToObject(zero, "stage",
				zero1_instead(p, PLAN_EXPORT_DEEPSPEED) ? 1 : p->par.zero);
	cJSON_AddBoolToObject(zero, "overlap_comm", 1);
	cJSON_AddBoolToObject(zero, "contiguous_gradients", 1);
	bf16 = cJSON_AddObjectToObject(root, "bf16");
	cJSON_AddBoolToObject(bf16, "enabled", 1);
	ckpt = cJSON_AddObjectToObject(root, "activation_checkpointing");
	cJSON_AddBoolToObject(ckpt, "partition_activations",
			      p->par.recompute != SIM_RECOMPUTE_NONE && p->par.tp > 1);
	cJSON_AddBoolToObject(ckpt, "contiguous_memory_optimization",
			      p->par.recompute != SIM_RECOMPUTE_NONE);
	cJSON_AddBoolToObject(ckpt, "cpu_checkpointing", 0);
	cJSON_AddNumberToObject(ckpt, "number_checkpoints",
				p->par.recompute == SIM_RECOMPUTE_NONE ? 0 : p->model.layers);
	s = cJSON_Print(root);
	cJSON_Delete(root);
	return s;
}

/* The launcher's flags: DeepSpeed docs, "Getting Started: Launching
 * DeepSpeed Training" (--num_nodes, --num_gpus, --hostfile, and
 * --deepspeed --deepspeed_config handed to the script). */
/* What goes before any DeepSpeed launcher: the comment on what DeepSpeed
 * runs instead of the plan (framework_predict), the NCCL environment, and
 * the tensor and pipeline sizes ds_config.json has no field for. */
static void deepspeed_preamble(struct buf *b, const struct sim_plan *p)
{
	struct sim_result r;
	char why[256];

	if (framework_predict(p, PLAN_EXPORT_DEEPSPEED, &r, why, sizeof(why)) == 1)
		framework_comment(b, p, PLAN_EXPORT_DEEPSPEED, &r);
	nccl_env(b, p, "export ", 1);
	if (p->par.tp > 1 || p->par.pp > 1)
		bprintf(b, "# the plan also uses tp %d, pp %d: give a Megatron-DeepSpeed script "
			   "--tensor-model-parallel-size %d --pipeline-model-parallel-size %d\n",
			p->par.tp, p->par.pp, p->par.tp, p->par.pp);
}

char *plan_export_deepspeed_launch(const struct sim_plan *p, const char *config_path)
{
	struct buf b = { 0 };
	char *q;

	deepspeed_preamble(&b, p);
	bprintf(&b, "deepspeed --num_nodes %d --num_gpus %d", launch_nodes(p),
		launch_gpus_per_node(p));
	if (launch_nodes(p) > 1)
		bprintf(&b, " --hostfile hostfile");
	q = gp_shell_quote(config_path);
	bprintf(&b, " \"${TRAIN_SCRIPT:?set TRAIN_SCRIPT}\" --deepspeed --deepspeed_config %s\n", q);
	free(q);
	return b.s;
}

/* name as a job's label into buf[size]: what is not a letter, a digit,
 * '.', '_' or '-' becomes '-' (and with k8s, letters are lower-cased and
 * '_' is '-' too, as Kubernetes names want).  A label, not a quoted
 * word: Slurm reads #SBATCH lines with its own rules.  Returns buf. */
static char *job_label(char *buf, size_t size, const char *name, int k8s)
{
	size_t n = 0;

	for (const char *s = name; *s && n + 1 < size; s++) {
		char c = *s;

		if (k8s && c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '-' || (c == '_' && !k8s)))
			c = '-';
		buf[n++] = c;
	}
	buf[n] = '\0';
	return buf;
}

/* Slurm's time format D-HH:MM:SS, from the predicted time with a margin of
 * 10% plus one hour for start-up and checkpoints. */
static void slurm_time(char *out, size_t size, double seconds)
{
	/* The epsilon keeps 10 d x 1.1 from rounding up to an extra second. */
	long long t = (long long)ceil(seconds * 1.1 + 3600 - 1e-6);
	long long d = t / 86400, h = t % 86400 / 3600, m = t % 3600 / 60, s = t % 60;

	snprintf(out, size, "%lld-%02lld:%02lld:%02lld", d, h, m, s);
}

/* The checks every export makes before writing: a global batch the
 * layout divides and, for f's framework, a layout that can be re-priced
 * (framework_predict), with one warning when f runs it otherwise than
 * priced.  Returns RC_OK with framework_predict's answer in *differs and
 * its prediction in *fr, or RC_INPUT (message printed). */
static enum rc export_check(const struct sim_plan *p, enum plan_export_format f,
			    struct sim_result *fr, int *differs)
{
	char why[256];

	/* What simulate refuses is not exported either: one check for both
	 * (its products in 64 bit: mbs x dp can pass an int). */
	if (sim_check(&p->model, &p->par, &p->cluster, why, sizeof(why)) != RC_OK) {
		gp_error("plan: layout is not exportable: %s", why);
		return RC_INPUT;
	}
	*differs = framework_predict(p, f, fr, why, sizeof(why));
	if (*differs < 0) {
		gp_error("plan: layout is not exportable: %s", why);
		return RC_INPUT;
	}
	if (*differs)
		framework_warn(p, f, fr);
	return RC_OK;
}

char *plan_export(const struct sim_plan *p, enum plan_export_format f, enum rc *rc)
{
	struct buf b = { 0 };
	int nodes = launch_nodes(p), gpn = launch_gpus_per_node(p);
	struct sim_result fr;
	char tbuf[64], e1[4 * PRICE_NAME_MAX], e2[4 * PRICE_NAME_MAX + 16];
	int differs;

	if (f == PLAN_EXPORT_SKYPILOT)
		return plan_export_skypilot(p, PLAN_FRAMEWORK_MEGATRON, rc);
	*rc = export_check(p, f, &fr, &differs);
	if (*rc != RC_OK)
		return NULL;
	switch (f) {
	case PLAN_EXPORT_MEGATRON:
		bprintf(&b, "#!/usr/bin/env bash\n# Megatron-LM launch for %s on %d x %s "
			    "(written by gpuplan)\n",
			gp_term_escape(e1, sizeof(e1), p->model.name), plan_gpus(p),
			gp_term_escape(e2, sizeof(e2), p->cluster.gpu.name));
		bprintf(&b, "# set TRAIN_SCRIPT to Megatron-LM's pretrain_gpt.py and add data flags\n");
		if (differs)
			framework_comment(&b, p, f, &fr);
		nccl_env(&b, p, "export ", !megatron_fsdp(p));
		torchrun_line(&b, p);
		bprintf(&b, " \"${TRAIN_SCRIPT:-pretrain_gpt.py}\"");
		megatron_args(&b, p);
		break;
	case PLAN_EXPORT_DEEPSPEED: {
		char *cfg = deepspeed_config(p);

		bprintf(&b, "%s\n", cfg);
		free(cfg);
		break;
	}
	case PLAN_EXPORT_TORCHRUN:
		nccl_env(&b, p, "export ", 1);
		torchrun_line(&b, p);
		bprintf(&b, " \"${TRAIN_SCRIPT:?set TRAIN_SCRIPT}\"\n");
		break;
	case PLAN_EXPORT_SLURM:
		slurm_time(tbuf, sizeof(tbuf), p->time_to_train_s);
		bprintf(&b, "#!/usr/bin/env bash\n");
		bprintf(&b, "#SBATCH --job-name=gpuplan-%s\n",
			job_label(e1, sizeof(e1), p->model.name, 0));
		bprintf(&b, "#SBATCH --nodes=%d\n#SBATCH --ntasks-per-node=%d\n", nodes, gpn);
		bprintf(&b, "#SBATCH --gpus-per-node=%d\n#SBATCH --exclusive\n", gpn);
		bprintf(&b, "#SBATCH --time=%s\n", tbuf);
		nccl_env(&b, p, "export ", 1);
		bprintf(&b, "srun --mpi=pmix gpuplan execute plan.json --backend cuda\n");
		break;
	case PLAN_EXPORT_MPIRUN:
		bprintf(&b, "# hostfile: one line per node; replace node1..node%d with your hosts\n",
			nodes);
		bprintf(&b, "for i in $(seq 1 %d); do echo \"node$i slots=%d\"; done > hosts\n",
			nodes, gpn);
		bprintf(&b, "mpirun -np %d --hostfile hosts --map-by ppr:%d:node --bind-to numa",
			plan_gpus(p), gpn);
		if (!p->cluster.gpu.p2p)
			bprintf(&b, " -x NCCL_P2P_DISABLE=1");
		bprintf(&b, " -x CUDA_DEVICE_MAX_CONNECTIONS=1 gpuplan execute plan.json"
			    " --backend cuda\n");
		break;
	case PLAN_EXPORT_KUBERNETES:
	{
		char *q;

		/* a Kubernetes name: lower-case letters, digits, '-' and '.' */
		snprintf(e2, sizeof(e2), "gpuplan-%s", job_label(e1, sizeof(e1), p->model.name, 1));
		q = gp_yaml_quote(e2);
		bprintf(&b, "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n"
			    "  name: %s\nspec:\n  pytorchReplicaSpecs:\n", q);
		free(q);
	}
		for (int w = 0; w < 2; w++) {
			int replicas = w ? nodes - 1 : 1;

			if (w && replicas == 0)
				break;
			bprintf(&b, "    %s:\n      replicas: %d\n      restartPolicy: OnFailure\n"
				    "      template:\n        spec:\n          containers:\n"
				    "            - name: pytorch\n              image: ${IMAGE}\n"
				    "              command: [\"torchrun\", \"--nnodes=%d\", "
				    "\"--nproc-per-node=%d\", \"${TRAIN_SCRIPT}\"]\n"
				    "              resources:\n                limits:\n"
				    "                  nvidia.com/gpu: %d\n",
				w ? "Worker" : "Master", replicas, nodes, gpn, gpn);
		}
		break;
	case PLAN_EXPORT_SKYPILOT:
		break; /* returned above */
	}
	return b.s;
}

/* ---- SkyPilot ---------------------------------------------------------- */

/* Appends s to b as a YAML double-quoted scalar (gp_yaml_quote). */
static void yaml_quote(struct buf *b, const char *s)
{
	char *q = gp_yaml_quote(s);

	bprintf(b, "%s", q);
	free(q);
}

/* Returns 1 when s holds a control character, which the run: script
 * cannot carry: the YAML literal block it sits in would fold or end at
 * it. */
static int has_control(const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			return 1;
	return 0;
}

/* Appends s to b as one shell word (gp_shell_quote). */
static void shell_quote(struct buf *b, const char *s)
{
	char *q = gp_shell_quote(s);

	bprintf(b, "%s", q);
	free(q);
}

/* SkyPilot's AcceleratorName for the canonical GPU gpu on provider, as
 * the catalogs spell it (skypilot-catalog catalogs/v8/common/
 * accelerators.csv and each cloud's vms.csv; data/SOURCES.md): one name
 * for a GPU's form factors on most clouds (H100 for SXM, PCIe and NVL),
 * RunPod's own for its SXM and NVL parts, Lambda's A6000.  A GPU not
 * listed goes by its canonical name, which gpus.csv keeps equal to
 * SkyPilot's where there is one (B200, L40S, RTX4090, MI300X, ...). */
static const char *skypilot_accelerator(const char *provider, const char *gpu)
{
	static const struct {
		const char *provider; /* NULL: any */
		const char *gpu, *name;
	} names[] = {
		{ "runpod", "H100-SXM5-80GB", "H100-SXM" },
		{ "runpod", "H100-NVL-94GB", "H100-NVL" },
		{ "runpod", "H200-SXM-141GB", "H200-SXM" },
		{ "runpod", "A100-SXM4-80GB", "A100-80GB-SXM" },
		{ "lambda", "RTXA6000", "A6000" },
		{ NULL, "H100-SXM5-80GB", "H100" },
		{ NULL, "H100-PCIe-80GB", "H100" },
		{ NULL, "H100-NVL-94GB", "H100" },
		{ NULL, "H200-SXM-141GB", "H200" },
		{ NULL, "A100-SXM4-80GB", "A100-80GB" },
		{ NULL, "A100-PCIe-80GB", "A100-80GB" },
		{ NULL, "A100-SXM4-40GB", "A100" },
		{ NULL, "V100-SXM2-32GB", "V100-32GB" },
		{ NULL, "V100-SXM2-16GB", "V100" },
	};

	for (size_t i = 0; i < GP_ARRAY_LEN(names); i++)
		if ((!names[i].provider || strcmp(names[i].provider, provider) == 0) &&
		    strcmp(names[i].gpu, gpu) == 0)
			return names[i].name;
	return gpu;
}

/* The head of a run: script: the first node's address from
 * SKYPILOT_NODE_IPS (one per line, the head node first) and torchrun over
 * SkyPilot's node variables (docs.skypilot.co, "Distributed Multi-Node
 * Jobs"), leaving the training script and its arguments to the caller. */
static void skypilot_torchrun(struct buf *b)
{
	bprintf(b, "MASTER_ADDR=$(echo \"$SKYPILOT_NODE_IPS\" | head -n1)\n"
		   "torchrun --nnodes \"$SKYPILOT_NUM_NODES\""
		   " --nproc-per-node \"$SKYPILOT_NUM_GPUS_PER_NODE\" \\\n"
		   "  --node-rank \"$SKYPILOT_NODE_RANK\" --master-addr \"$MASTER_ADDR\""
		   " --master-port 29500");
}

/* The run: script for p under f (megatron or deepspeed): shell text whose
 * only strings from the plan are shell_quote()d; differs and fr as
 * export_check gave them. */
static void skypilot_script(struct buf *b, const struct sim_plan *p, enum plan_export_format f,
			    int differs, const struct sim_result *fr)
{
	bprintf(b, "set -e\necho ");
	shell_quote(b, p->model.name);
	bprintf(b, "\necho 'gpuplan layout: tp %d pp %d dp %d cp %d, %d nodes x %d GPUs'\n",
		p->par.tp, p->par.pp, p->par.dp, p->par.cp, launch_nodes(p),
		launch_gpus_per_node(p));
	if (f == PLAN_EXPORT_MEGATRON) {
		if (differs)
			framework_comment(b, p, f, fr);
		nccl_env(b, p, "export ", !megatron_fsdp(p));
		skypilot_torchrun(b);
		bprintf(b, " \\\n  \"$TRAIN_SCRIPT\"");
		megatron_args(b, p);
	} else {
		char *cfg = deepspeed_config(p);

		deepspeed_preamble(b, p);
		/* The delimiter is quoted: the shell expands nothing in the
		 * config, which holds only numbers and booleans anyway. */
		bprintf(b, "cat > ds_config.json <<'GPUPLAN_DS_CONFIG'\n%s\nGPUPLAN_DS_CONFIG\n", cfg);
		free(cfg);
		skypilot_torchrun(b);
		bprintf(b, " \\\n  \"$TRAIN_SCRIPT\" --deepspeed --deepspeed_config ds_config.json");
		/* Megatron-DeepSpeed's flags (the comment above): a DeepSpeed
		 * script runs only data parallelism itself. */
		if (p->par.tp > 1 || p->par.pp > 1)
			bprintf(b, " \\\n  --tensor-model-parallel-size %d"
				   " --pipeline-model-parallel-size %d", p->par.tp, p->par.pp);
		bprintf(b, "\n");
	}
	/* EXTRA_ARGS (data, tokenizer, checkpoints) is the user's, split
	 * into words as given on `sky launch --env`. */
	b->len--;
	bprintf(b, " $EXTRA_ARGS\n");
}

char *plan_export_skypilot(const struct sim_plan *p, enum plan_framework fw, enum rc *rc)
{
	enum plan_export_format f =
		fw == PLAN_FRAMEWORK_DEEPSPEED ? PLAN_EXPORT_DEEPSPEED : PLAN_EXPORT_MEGATRON;
	const struct price_offering *o = &p->offering;
	int gpn = launch_gpus_per_node(p), differs;
	struct buf b = { 0 }, run = { 0 };
	struct sim_result fr;

	if (has_control(p->model.name)) {
		gp_error("plan: .model.name: expected no control characters for the skypilot "
			 "run script, found one");
		*rc = RC_INPUT;
		return NULL;
	}
	*rc = export_check(p, f, &fr, &differs);
	if (*rc != RC_OK)
		return NULL;
	bprintf(&b, "# SkyPilot task written by gpuplan: sky launch -c NAME THIS.yaml%s\n"
		    "# (sky launch --env EXTRA_ARGS=... for data and tokenizer flags)\n",
		f == PLAN_EXPORT_DEEPSPEED ? " --env TRAIN_SCRIPT=..." : "");
	bprintf(&b, "name: ");
	yaml_quote(&b, p->model.name);
	bprintf(&b, "\nresources:\n  accelerators: {");
	yaml_quote(&b, skypilot_accelerator(o->provider, p->cluster.gpu.name));
	bprintf(&b, ": %d}\n", gpn);
	/* A custom cluster has no offering; hardware the user owns is not a
	 * cloud SkyPilot rents from. */
	if (o->provider[0] && !o->owned) {
		bprintf(&b, "  cloud: ");
		yaml_quote(&b, o->provider);
		if (o->region[0]) {
			bprintf(&b, "\n  region: ");
			yaml_quote(&b, o->region);
		}
		/* An instance type fixes the GPUs per node: named only when
		 * the plan fills its nodes. */
		if (o->instance_type[0] && o->gpus_per_node == gpn) {
			bprintf(&b, "\n  instance_type: ");
			yaml_quote(&b, o->instance_type);
		}
		bprintf(&b, "\n");
	}
	bprintf(&b, "  use_spot: %s\n", p->purchase == PRICE_PURCHASE_SPOT ? "true" : "false");
	bprintf(&b, "num_nodes: %d\nenvs:\n  TRAIN_SCRIPT: %s\n  EXTRA_ARGS: \"\"\n",
		launch_nodes(p), f == PLAN_EXPORT_MEGATRON ? "\"pretrain_gpt.py\"" : "null");
	skypilot_script(&run, p, f, differs, &fr);
	/* A literal block: every line indented, so YAML hands the script
	 * back byte for byte. */
	bprintf(&b, "run: |\n");
	for (const char *line = run.s; *line;) {
		size_t n = strcspn(line, "\n");

		bprintf(&b, "%s%.*s\n", n ? "  " : "", (int)n, line);
		line += n + (line[n] == '\n');
	}
	free(run.s);
	return b.s;
}
