/*
 * export.c - renders a plan for other tools.  Text formats are
 * built with a small growable buffer; the DeepSpeed config goes through
 * cJSON (hence the file name) so that it always parses.
 *
 * Flag names follow Megatron-LM's megatron/training/arguments.py, the
 * DeepSpeed config reference (deepspeed.ai/docs/config-json), torchrun's
 * documentation, Kubeflow's PyTorchJob (kubeflow.org/v1), Kubeflow
 * Trainer's TrainJob (trainer.kubeflow.org/v1alpha1) and SkyPilot's task
 * YAML (docs.skypilot.co, "YAML Configuration"; sky/utils/schemas.py).
 *
 * A plan a framework cannot run as planned (ZeRO-2/3 with a pipeline under
 * Megatron-LM or DeepSpeed) is written as the nearest one it runs, ZeRO-1,
 * with a warning and a comment giving that layout's memory and step time;
 * nothing is changed silently.  A model Megatron-LM cannot build (ALiBi,
 * a parallel residual, an embedding norm) is not exported for it at all.
 */
#include "export.h"
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
	enum export_format f;
} formats[] = {
	{ "megatron", EXPORT_MEGATRON },
	{ "deepspeed", EXPORT_DEEPSPEED },
	{ "torchrun", EXPORT_TORCHRUN },
	{ "slurm", EXPORT_SLURM },
	{ "mpirun", EXPORT_MPIRUN },
	{ "kubernetes", EXPORT_KUBERNETES },
	{ "trainjob", EXPORT_TRAINJOB },
	{ "slurm-execute", EXPORT_SLURM_EXECUTE },
	{ "mpirun-execute", EXPORT_MPIRUN_EXECUTE },
	{ "skypilot", EXPORT_SKYPILOT },
	{ "trl", EXPORT_TRL },
};

enum rc export_format_parse(const char *name, enum export_format *out)
{
	for (size_t i = 0; i < GP_ARRAY_LEN(formats); i++)
		if (gp_streq_nocase(name, formats[i].name)) {
			*out = formats[i].f;
			return RC_OK;
		}
	if (gp_streq_nocase(name, "k8s") || gp_streq_nocase(name, "kubeflow")) {
		*out = EXPORT_KUBERNETES;
		return RC_OK;
	}
	return RC_USAGE;
}

const char *export_format_names(void)
{
	return "megatron, deepspeed, torchrun, slurm, mpirun, kubernetes, trainjob, skypilot, "
	       "slurm-execute, mpirun-execute, trl";
}

static int plan_gpus(const struct sim_plan *p)
{
	return p->par.tp * p->par.pp * p->par.dp * p->par.cp;
}

/* How the plan's GPUs are started: *nodes x *gpn processes, as many on
 * every node (torchrun, srun and a PyTorchJob start the same number on
 * each).  All on one node when they fit; else the most GPUs per node that
 * divide the plan's GPUs over at most the plan's nodes, each tensor-
 * parallel group inside one node as the simulator placed it.  12 GPUs on
 * 8-GPU nodes start as 2 x 6, never 16.  Returns 0, or -1 with a reason in
 * why[size] when no such split exists. */
static int launch_shape(const struct sim_plan *p, int *nodes, int *gpn, char *why, size_t size)
{
	int g = plan_gpus(p), n = p->cluster.gpus_per_node > 0 ? p->cluster.gpus_per_node : g;
	int have = (g + n - 1) / n;

	/* the plan's nodes when it rents more than its GPUs fill */
	if (p->nodes > have)
		have = p->nodes;
	if (g <= n) {
		*nodes = 1;
		*gpn = g;
		return 0;
	}
	for (int k = n; k >= 1; k--) {
		if (g % k || g / k > have || (p->par.tp <= n && k % p->par.tp))
			continue;
		*nodes = g / k;
		*gpn = k;
		return 0;
	}
	if (why && size)
		snprintf(why, size, "cluster: expected the plan's %d GPUs split evenly over at most "
			 "%d nodes of %d (a multiple of tp %d on each), found no such split",
			 g, have, n, p->par.tp);
	return -1;
}

/* GPUs per node and nodes as launched (launch_shape; export_check refuses
 * a plan without one before anything is written). */
static int launch_gpus_per_node(const struct sim_plan *p)
{
	int nodes, gpn;

	return launch_shape(p, &nodes, &gpn, NULL, 0) == 0 ? gpn : plan_gpus(p);
}

static int launch_nodes(const struct sim_plan *p)
{
	return plan_gpus(p) / launch_gpus_per_node(p);
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

/* 1 when fw cannot run p's ZeRO stage with p's pipeline and is given
 * ZeRO-1 instead: DeepSpeed's PipelineEngine asserts stage < 2 ("ZeRO-2
 * and ZeRO-3 are incompatible with pipeline parallelism", deepspeed/
 * runtime/pipe/engine.py), and Megatron-LM's ZeRO-2/3 is Megatron-FSDP
 * (above).  The torchrun and execute formats launch the user's script or
 * gpuplan's executor (PLAN_FRAMEWORK_ANY), which run every stage with a
 * pipeline. */
static int zero1_instead(const struct sim_plan *p, enum plan_framework fw)
{
	return p->par.zero >= 2 && p->par.pp > 1 && fw != PLAN_FRAMEWORK_ANY;
}

/* The trainer format f starts: Megatron-LM and DeepSpeed for their own
 * formats; fw (Megatron-LM unless said) for the launchers that start a
 * trainer (slurm, mpirun, kubernetes, trainjob, skypilot); none for
 * torchrun, which starts the user's script, and the execute formats. */
static enum plan_framework export_framework(enum export_format f, enum plan_framework fw)
{
	switch (f) {
	case EXPORT_MEGATRON: return PLAN_FRAMEWORK_MEGATRON;
	case EXPORT_DEEPSPEED:
	case EXPORT_TRL: return PLAN_FRAMEWORK_DEEPSPEED;
	case EXPORT_TORCHRUN:
	case EXPORT_SLURM_EXECUTE:
	case EXPORT_MPIRUN_EXECUTE: return PLAN_FRAMEWORK_ANY;
	default: return fw == PLAN_FRAMEWORK_DEEPSPEED ? fw : PLAN_FRAMEWORK_MEGATRON;
	}
}

static const char *framework_title(enum plan_framework fw)
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
	if (zero1_instead(p, fw))
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
 * the layout itself changes (zero1_instead), -1 then with sim_check's
 * reason in why[size]. */
#define FRAMEWORK_SAME 0.005

static int framework_predict(const struct sim_plan *p, enum plan_framework fw,
			     struct sim_result *r, char *why, size_t size)
{
	const struct sim_result *a = &p->result;
	struct sim_parallel q;

	if (!framework_par(p, fw, &q))
		return 0;
	if (sim_check(&p->model, &q, &p->cluster, why, size) != RC_OK)
		return zero1_instead(p, fw) ? -1 : 0;
	sim_step(&p->model, &q, &p->cluster, r);
	return zero1_instead(p, fw) || r->fits != a->fits ||
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
 * costs: r (framework_predict) against the plan's own prediction. */
static void framework_comment(struct buf *b, const struct sim_plan *p, enum plan_framework fw,
			      const struct sim_result *r)
{
	int megatron = fw == PLAN_FRAMEWORK_MEGATRON;
	char need[32], cap[32], planned[32], t1[32], t0[32], diff[160];

	framework_differences(diff, sizeof(diff), p, fw);
	if (zero1_instead(p, fw))
		bprintf(b, "# NOTE: %s does not run the plan's ZeRO-%d with pipeline parallelism "
			   "(pp %d):\n# %s.\n# Written instead: ZeRO-1 (%s), which needs\n",
			framework_title(fw), p->par.zero, p->par.pp,
			megatron ? "its ZeRO-2/3 is Megatron-FSDP, documented without pipeline stages"
				 : "its pipeline engine asserts ZeRO stage < 2",
			megatron ? "--use-distributed-optimizer, fp32 gradients" : "\"stage\": 1 in the config");
	else
		bprintf(b, "# NOTE: the plan was not priced as %s runs it (%s), which needs\n",
			framework_title(fw), diff);
	bprintf(b, "# %s per GPU of %s: %s (the plan: %s); step %s (the plan: %s).\n",
		unit_fmt_bytes(need, sizeof(need), r->memory.total),
		unit_fmt_bytes(cap, sizeof(cap), r->memory.capacity),
		r->fits ? "fits" : "does NOT fit",
		unit_fmt_bytes(planned, sizeof(planned), p->result.memory.total),
		unit_fmt_duration(t1, sizeof(t1), r->step_time_s),
		unit_fmt_duration(t0, sizeof(t0), p->result.step_time_s));
	if (zero1_instead(p, fw))
		bprintf(b, "# Plan with --framework %s for layouts it runs, priced as it runs them\n"
			   "# (or with --pp 1 to keep ZeRO-%d).\n",
			megatron ? "megatron" : "deepspeed", p->par.zero);
	else
		bprintf(b, "# Plan with --framework %s to price it so.\n",
			megatron ? "megatron" : "deepspeed");
}

/* The same on stderr, once: always for zero1_instead, else when what fw
 * runs will not fit or steps FRAMEWORK_SLOWER longer; a hint when it does
 * not fit. */
#define FRAMEWORK_SLOWER 0.05

static void framework_warn(const struct sim_plan *p, enum plan_framework fw,
			   const struct sim_result *r)
{
	const char *name = plan_framework_str(fw);
	char need[32], cap[32], planned[32], t1[32], t0[32], diff[160];

	unit_fmt_bytes(need, sizeof(need), r->memory.total);
	unit_fmt_bytes(cap, sizeof(cap), r->memory.capacity);
	unit_fmt_bytes(planned, sizeof(planned), p->result.memory.total);
	if (zero1_instead(p, fw)) {
		gp_warn("export: %s cannot run ZeRO-%d with pipeline parallelism (pp %d); wrote "
			"ZeRO-1, which needs %s per GPU of %s (the plan: %s): %s",
			framework_title(fw), p->par.zero, p->par.pp, need, cap, planned,
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
		"and steps in %s (the plan: %s)%s", framework_title(fw), diff, need, cap, planned,
		unit_fmt_duration(t1, sizeof(t1), r->step_time_s),
		unit_fmt_duration(t0, sizeof(t0), p->result.step_time_s),
		r->fits ? "" : ": it will NOT fit");
	gp_hint("plan again with --framework %s (gpuplan plan ... --framework %s) to price it "
		"as %s runs it", name, name, framework_title(fw));
}

/* ---- the trainer's argument list ---------------------------------------
 *
 * Built once as words, then written for a shell (megatron, torchrun,
 * slurm, mpirun, skypilot) or as a YAML list (kubernetes).  A word is a
 * flag or number gpuplan writes (plain), a string from the plan (quoted
 * for its language) or a variable the user sets (the shell's "$NAME",
 * the Kubernetes $(NAME) that the kubelet expands in args). */
enum word_kind { WORD_PLAIN, WORD_QUOTED, WORD_VAR };

struct word {
	char *s;
	enum word_kind kind;
	int brk;               /* 1: starts a new line in a script */
};

struct words {
	struct word *w;
	size_t n, cap;
};

static void words_push(struct words *ws, int brk, enum word_kind kind, const char *s)
{
	if (ws->n == ws->cap) {
		ws->cap = ws->cap ? 2 * ws->cap : 64;
		ws->w = xrealloc(ws->w, ws->cap * sizeof(*ws->w));
	}
	ws->w[ws->n].s = xstrdup(s);
	ws->w[ws->n].kind = kind;
	ws->w[ws->n].brk = brk;
	ws->n++;
}

/* Plain words, split at blanks, the first starting a new line. */
static void words_line(struct words *ws, const char *fmt, ...) GP_PRINTF(2, 3);
static void words_line(struct words *ws, const char *fmt, ...)
{
	char text[512], *save = NULL, *tok;
	va_list ap;
	int first = 1;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	for (tok = strtok_r(text, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		words_push(ws, first, WORD_PLAIN, tok);
		first = 0;
	}
}

static void words_release(struct words *ws)
{
	for (size_t i = 0; ws && i < ws->n; i++)
		free(ws->w[i].s);
	free(ws->w);
}

/* Appends ws as shell words, each line after a backslash-newline. */
static void words_shell(struct buf *b, const struct words *ws)
{
	for (size_t i = 0; i < ws->n; i++) {
		const struct word *w = &ws->w[i];

		bprintf(b, "%s", w->brk ? " \\\n  " : " ");
		if (w->kind == WORD_VAR) {
			bprintf(b, "\"$%s\"", w->s);
		} else if (w->kind == WORD_QUOTED) {
			char *q = gp_shell_quote(w->s);

			bprintf(b, "%s", q);
			free(q);
		} else {
			bprintf(b, "%s", w->s);
		}
	}
}

/* The layers' split over the pipeline.  Megatron-LM cuts them evenly:
 * with equal chunks, --num-layers-per-virtual-pipeline-stage says so;
 * otherwise the simulator's split is spelt out for Megatron-Core's
 * --pipeline-model-parallel-layout (docs, "Custom Pipeline Model Parallel
 * Layout"): one '|'-separated segment per virtual stage in the order
 * activations flow, E the embedding, m a multi-token prediction module,
 * L the loss. */
static void pipeline_split(struct words *ws, const struct sim_plan *p)
{
	const struct sim_parallel *q = &p->par;
	int n = q->pp * q->interleave;
	struct buf layout = { 0 };

	if (q->pp < 2)
		return;
	if (p->model.layers % n == 0) {
		if (q->interleave > 1)
			words_line(ws, "--num-layers-per-virtual-pipeline-stage %d", p->model.layers / n);
		return;
	}
	/* a chunk of the embedding or the loss alone reads "E" or "L" */
	for (int k = 0; k < n; k++) {
		int layers = sim_virtual_stage_layers(&p->model, q, k);

		bprintf(&layout, "%s%s", k ? "|" : "", k ? "" : "E");
		if (layers > 0)
			bprintf(&layout, "t*%d", layers);
	}
	/* the MTP modules (m) follow the decoder layers in the last stage,
	 * as validate_layer_layout asserts */
	for (int k = 0; k < p->model.mtp_layers; k++)
		bprintf(&layout, ",m");
	bprintf(&layout, sim_virtual_stage_layers(&p->model, q, n - 1) > 0 || p->model.mtp_layers
			 ? ",L" : "L");
	words_line(ws, "--pipeline-model-parallel-layout");
	words_push(ws, 0, WORD_QUOTED, layout.s);
	free(layout.s);
}

/* Sequences to train: the plan's tokens over its sequence length,
 * rounded up; 0 when the plan has no tokens. */
static long long train_samples(const struct sim_plan *p)
{
	return p->tokens > 0 ? (long long)ceil(p->tokens / p->model.seq - 1e-9) : 0;
}

/* The plan's checkpoint interval (PLAN_DEFAULT_CKPT_INTERVAL_S when it
 * has none, a plan from `simulate`) in seconds. */
static double ckpt_interval_s(const struct sim_plan *p)
{
	return p->ckpt_interval_s > 0 ? p->ckpt_interval_s : PLAN_DEFAULT_CKPT_INTERVAL_S;
}

/* The interval in optimizer steps at the predicted step time: at least 1. */
static long long save_interval_steps(const struct sim_plan *p)
{
	double step = p->result.step_time_s, n;

	if (!(step > 0))
		return 1;
	n = floor(ckpt_interval_s(p) / step + 0.5);
	return n >= 1 ? (long long)n : 1;
}

/* Megatron-LM pads the tokenizer's vocabulary up to a multiple of
 * --make-vocab-size-divisible-by x tp (megatron/training/tokenizer,
 * _vocab_size_with_padding).  The preset's vocab is already the padded
 * size its authors trained (Llama 3: 128,256; GPT-2's 50,257 padded to
 * 51,200), so asking for multiples of vocab / tp pads any tokenizer of at
 * most vocab tokens to exactly vocab.  When tp does not divide vocab the
 * next multiple of tp is the nearest Megatron-LM reaches. */
static int vocab_divisor(const struct sim_plan *p)
{
	return (p->model.vocab + p->par.tp - 1) / p->par.tp;
}

/* What Megatron-LM's GPT model cannot be, in words, or NULL when it
 * builds m: --position-embedding-type takes learned_absolute, rope, yarn,
 * mrope, relative or none, and no flag adds an embedding norm or computes
 * attention and MLP side by side (megatron/training/arguments.py and
 * megatron/core/transformer/transformer_config.py at NVIDIA/Megatron-LM
 * d98e8a64).  Exporting the nearest model it builds would train another
 * model than the plan's. */
static const char *megatron_lacks(const struct sim_model *m)
{
	if (m->pos == SIM_POS_ALIBI)
		return "ALiBi attention biases (position_embedding alibi)";
	if (m->parallel_residual)
		return "attention and MLP computed in parallel (parallel_residual)";
	if (m->embedding_norm)
		return "a norm after the embedding (embedding_norm)";
	return NULL;
}

/* Multi-latent attention, experts and multi-token prediction as
 * Megatron-Core's TransformerConfig takes them (flags named from its
 * fields; megatron/core/transformer/transformer_config.py and
 * megatron/core/transformer/moe/README.md at NVIDIA/Megatron-LM d98e8a64):
 * MLA's query and key head is --qk-head-dim (no rope) plus
 * --qk-pos-emb-head-dim wide; the shared experts are one MLP of their
 * summed width; --moe-layer-freq lists the first dense_layers as 0. */
static void megatron_model_moe(struct words *ws, const struct sim_model *m)
{
	if (m->kv_lora_rank > 0) {
		words_line(ws, "--multi-latent-attention --kv-lora-rank %d", m->kv_lora_rank);
		if (m->q_lora_rank > 0)
			words_line(ws, "--q-lora-rank %d", m->q_lora_rank);
		words_line(ws, "--qk-head-dim %d --qk-pos-emb-head-dim %d --v-head-dim %d",
			   m->qk_nope_dim, m->qk_rope_dim, m->v_head_dim);
	}
	if (m->experts > 0) {
		words_line(ws, "--num-experts %d --moe-router-topk %d --moe-ffn-hidden-size %d",
			   m->experts, m->top_k, m->expert_ffn);
		if (m->shared_experts > 0)
			words_line(ws, "--moe-shared-expert-intermediate-size %d",
				   m->shared_experts * (m->shared_ffn > 0 ? m->shared_ffn
									  : m->expert_ffn));
		if (m->dense_layers > 0) {
			char freq[64];

			snprintf(freq, sizeof(freq), "([0]*%d+[1]*%d)", m->dense_layers,
				 m->layers - m->dense_layers);
			words_line(ws, "--moe-layer-freq");
			words_push(ws, 0, WORD_QUOTED, freq);
		}
		if (m->router_pre_softmax)
			words_line(ws, "--moe-router-pre-softmax");
	}
	if (m->mtp_layers > 0)
		words_line(ws, "--mtp-num-layers %d", m->mtp_layers);
}

/* The experts' layout: expert and expert-tensor parallelism (folded over
 * the attention's GPUs, as the plan has them), grouped GEMMs, the token
 * dispatcher the plan priced (alltoall, or flex with DeepEP: "--moe-token-
 * dispatcher-type flex --moe-flex-dispatcher-backend deepep", the MoE
 * README) and the batch-level overlap of the all-to-alls. */
static void megatron_layout_moe(struct words *ws, const struct sim_plan *p)
{
	const struct sim_parallel *q = &p->par;

	if (p->model.experts == 0)
		return;
	words_line(ws, "--expert-model-parallel-size %d --expert-tensor-parallel-size %d",
		   q->ep > 0 ? q->ep : 1, q->etp > 0 ? q->etp : 1);
	/* validate_args refuses grouped GEMM below sm80 (arguments.py:
	 * "Unsupported compute capability for GroupedGEMM kernels"): Volta
	 * runs the experts one GEMM after another */
	if (price_gpu_has_bf16(&p->cluster.gpu))
		words_line(ws, "--moe-grouped-gemm");
	words_line(ws, "--moe-token-dispatcher-type %s",
		   q->ep_flex ? "flex --moe-flex-dispatcher-backend deepep" : "alltoall");
	if (q->ep_overlap)
		words_line(ws, "--overlap-moe-expert-parallel-comm");
}

/* The arguments pretrain_gpt.py takes for p (megatron/training/
 * arguments.py, Megatron-Core's config dataclasses): the model as the
 * preset has it, the layout, the training length and schedule
 * (placeholders in LR, MIN_LR, LR_DECAY_STYLE, LR_WARMUP_SAMPLES), data
 * (DATA_PATH) and checkpoints (CKPT_DIR every save interval), precision. */
static void megatron_words(struct words *ws, const struct sim_plan *p)
{
	const struct sim_model *m = &p->model;
	const struct sim_parallel *q = &p->par;
	long long samples = train_samples(p);

	words_line(ws, "--num-layers %d --hidden-size %d --num-attention-heads %d", m->layers,
		   m->hidden, m->heads);
	if (m->kv_heads != m->heads)
		words_line(ws, "--group-query-attention --num-query-groups %d", m->kv_heads);
	words_line(ws, "--ffn-hidden-size %d --seq-length %d --max-position-embeddings %d", m->ffn,
		   m->seq, m->seq);
	if (m->mlp == SIM_MLP_SWIGLU)
		words_line(ws, "--swiglu");
	if (!m->tied_embeddings)
		words_line(ws, "--untie-embeddings-and-output-weights");
	if (m->pos == SIM_POS_ROPE)
		words_line(ws, "--position-embedding-type rope --rotary-base %.0f",
			   m->rotary_base > 0 ? m->rotary_base : 10000);
	else
		words_line(ws, "--position-embedding-type learned_absolute");
	/* GPT-NeoX rotates a quarter of each head's dimensions */
	if (m->pos == SIM_POS_ROPE && m->rotary_percent > 0 && m->rotary_percent < 1)
		words_line(ws, "--rotary-percent %g", m->rotary_percent);
	words_line(ws, "--normalization %s%s", m->norm == SIM_NORM_LAYERNORM ? "LayerNorm" : "RMSNorm",
		   m->linear_bias ? "" : " --disable-bias-linear");
	words_line(ws, "--attention-dropout %g --hidden-dropout %g", m->dropout, m->dropout);
	/* Megatron-Core's window is (left, right) tokens; 0 to the right is
	 * causal (TransformerConfig.window_size) */
	if (m->window > 0 && m->window < m->seq) {
		words_line(ws, "--window-size %d,0", m->window);
		/* every n-th layer attends to the whole sequence: "one full
		 * attention layer after (N-1) SWA layers" */
		if (m->window_full_every > 0)
			words_line(ws, "--window-attn-skip-freq %d", m->window_full_every);
	}
	/* a head width other than hidden / heads; attention sinks are a
	 * learned logit per head (softmax_type 'learnable') */
	if (m->head_dim > 0 && m->kv_lora_rank == 0)
		words_line(ws, "--kv-channels %d", m->head_dim);
	if (m->attn_sinks)
		words_line(ws, "--softmax-type learnable");
	megatron_model_moe(ws, m);
	words_line(ws, "--tokenizer-type HuggingFaceTokenizer --tokenizer-model");
	if (m->tokenizer[0])
		words_push(ws, 0, WORD_QUOTED, m->tokenizer);
	else
		words_push(ws, 0, WORD_VAR, "TOKENIZER");
	words_push(ws, 0, WORD_PLAIN, "--make-vocab-size-divisible-by");
	{
		char n[32];

		snprintf(n, sizeof(n), "%d", vocab_divisor(p));
		words_push(ws, 0, WORD_PLAIN, n);
	}
	words_line(ws, "--tensor-model-parallel-size %d --pipeline-model-parallel-size %d", q->tp,
		   q->pp);
	pipeline_split(ws, p);
	if (q->cp > 1)
		words_line(ws, "--context-parallel-size %d", q->cp);
	megatron_layout_moe(ws, p);
	words_line(ws, "--micro-batch-size %d --global-batch-size %d", q->mbs, q->gbs);
	if (q->seq_parallel)
		words_line(ws, "--sequence-parallel");
	/* the TP collectives under the GEMMs, as priced (tp_overlap) */
	if (q->tp_overlap && q->seq_parallel && q->tp > 1)
		words_line(ws, "--tp-comm-overlap");
	if (q->recompute == SIM_RECOMPUTE_FULL)
		words_line(ws, "--recompute-granularity full --recompute-method uniform"
			       " --recompute-num-layers 1");
	else if (q->recompute == SIM_RECOMPUTE_SELECTIVE)
		words_line(ws, "--recompute-granularity selective");
	if (megatron_fsdp(p))
		words_line(ws, "--use-megatron-fsdp --data-parallel-sharding-strategy %s",
			   q->zero >= 3 ? "optim_grads_params" : "optim_grads"),
		words_line(ws, "--use-distributed-optimizer --ckpt-format fsdp_dtensor"
			       " --no-gradient-accumulation-fusion");
	else if (q->zero >= 1)
		words_line(ws, "--use-distributed-optimizer");
	/* The simulator hides the data-parallel sums under the backward but
	 * for the last bucket, and ZeRO-1's parameter all-gather likewise;
	 * Megatron does so only when asked (both flags default to off in
	 * megatron/training/arguments.py, which asserts the second needs the
	 * first and the distributed optimizer; Megatron-FSDP sets them from
	 * its sharding strategy). */
	if (q->dp * q->cp > 1 && !megatron_fsdp(p))
		words_line(ws, "--overlap-grad-reduce%s", q->zero >= 1 ? " --overlap-param-gather" : "");
	/* --use-flash-attn is a no-op now; the backend flag pins the kernel
	 * the simulator priced (flash, or Megatron's unfused softmax). */
	words_line(ws, "--attention-backend %s", q->flash ? "flash" : "unfused");
	if (samples > 0)
		words_line(ws, "--train-samples %lld", samples);
	else
		words_line(ws, "--train-samples"), words_push(ws, 0, WORD_VAR, "TRAIN_SAMPLES");
	words_line(ws, "--lr");
	words_push(ws, 0, WORD_VAR, "LR");
	words_push(ws, 0, WORD_PLAIN, "--min-lr");
	words_push(ws, 0, WORD_VAR, "MIN_LR");
	words_push(ws, 0, WORD_PLAIN, "--lr-decay-style");
	words_push(ws, 0, WORD_VAR, "LR_DECAY_STYLE");
	words_push(ws, 0, WORD_PLAIN, "--lr-warmup-samples");
	words_push(ws, 0, WORD_VAR, "LR_WARMUP_SAMPLES");
	words_line(ws, "--data-path");
	words_push(ws, 0, WORD_VAR, "DATA_PATH");
	words_line(ws, "--save");
	words_push(ws, 0, WORD_VAR, "CKPT_DIR");
	words_push(ws, 0, WORD_PLAIN, "--load");
	words_push(ws, 0, WORD_VAR, "CKPT_DIR");
	words_line(ws, "--save-interval %lld", save_interval_steps(p));
	/* Volta has no bf16: fp16 with Megatron-LM's dynamic loss scaling
	 * (--loss-scale unset: start at --initial-loss-scale, halve on
	 * overflow). */
	if (!price_gpu_has_bf16(&p->cluster.gpu))
		words_line(ws, "--fp16");
	else if (q->precision == SIM_PRECISION_FP8)
		words_line(ws, "--bf16 --fp8-format hybrid");
	else if (q->precision == SIM_PRECISION_MXFP8)
		words_line(ws, "--bf16 --fp8-format e4m3 --fp8-recipe mxfp8");
	else if (q->precision == SIM_PRECISION_NVFP4)
		words_line(ws, "--bf16 --fp4-format e2m1 --fp4-recipe nvfp4");
	else
		words_line(ws, "--bf16");
}

/* The script (TRAIN_SCRIPT, pretrain_gpt.py unless set) and the
 * placeholders the Megatron-LM arguments read: the learning-rate
 * schedule gpuplan does not choose (defaults the user overrides in the
 * environment), then the variables only the user knows, each checked so
 * that an unset one stops the script with what to set. */
static void megatron_env(struct buf *b, const struct sim_plan *p)
{
	long long samples = train_samples(p);
	char warm[64];

	if (samples > 0)
		snprintf(warm, sizeof(warm), "%lld", samples / 100 > 0 ? samples / 100 : 1);
	else
		snprintf(warm, sizeof(warm), "1000");
	bprintf(b, "TRAIN_SCRIPT=${TRAIN_SCRIPT:-pretrain_gpt.py}\n");
	bprintf(b, "# PLACEHOLDERS, not from the plan: the learning-rate schedule (override them\n"
		   "# in the environment; warm-up 1%% of the samples)\n"
		   "LR=${LR:-3.0e-4}\nMIN_LR=${MIN_LR:-3.0e-5}\nLR_DECAY_STYLE=${LR_DECAY_STYLE:-cosine}\n"
		   "LR_WARMUP_SAMPLES=${LR_WARMUP_SAMPLES:-%s}\n", warm);
	bprintf(b, ": \"${DATA_PATH:?set DATA_PATH to a Megatron-LM dataset prefix "
		   "(tools/preprocess_data.py writes PREFIX.bin and PREFIX.idx)}\"\n"
		   ": \"${CKPT_DIR:?set CKPT_DIR to a checkpoint directory every node reaches}\"\n");
	if (!p->model.tokenizer[0])
		bprintf(b, ": \"${TOKENIZER:?set TOKENIZER to the Hugging Face tokenizer the model "
			   "trains with (the plan names none)}\"\n");
	if (samples <= 0)
		bprintf(b, ": \"${TRAIN_SAMPLES:?set TRAIN_SAMPLES (the plan has no token count: "
			   "plan or simulate with --tokens)}\"\n");
}

/* Comment lines on what the trainer is told beyond the layout: the
 * training length and the checkpoint interval, by the names fw reads them
 * (Megatron-LM's flags; the GPUPLAN_ variables of deepspeed_env), and the
 * precision. */
static void trainer_notes(struct buf *b, const struct sim_plan *p, enum plan_framework fw)
{
	int ds = fw == PLAN_FRAMEWORK_DEEPSPEED;
	char iv[32], st[32], tok[64], gpu[4 * PRICE_NAME_MAX];
	long long samples = train_samples(p);

	if (samples > 0)
		bprintf(b, "# %s tokens = %lld sequences of %d (%s)\n",
			unit_fmt_count(tok, sizeof(tok), p->tokens), samples, p->model.seq,
			ds ? "GPUPLAN_TRAIN_SAMPLES" : "--train-samples");
	bprintf(b, "# checkpoints every %s%s = %lld steps of %s (%s); the plan keeps %d\n",
		unit_fmt_duration(iv, sizeof(iv), ckpt_interval_s(p)),
		p->ckpt_interval_s > 0 ? " (the plan's)" : " (the plan states none: gpuplan's default)",
		save_interval_steps(p), unit_fmt_duration(st, sizeof(st), p->result.step_time_s),
		ds ? "GPUPLAN_SAVE_INTERVAL_STEPS" : "--save-interval",
		p->ckpt_keep > 0 ? p->ckpt_keep : PLAN_DEFAULT_CKPT_KEEP);
	if (!price_gpu_has_bf16(&p->cluster.gpu))
		bprintf(b, "# %s has no bf16: fp16 with dynamic loss scaling (%s)\n",
			gp_term_escape(gpu, sizeof(gpu), p->cluster.gpu.name), ds ? "\"fp16\" in ds_config.json" : "--fp16");
}

/* The torchrun line that starts nodes x gpn workers of p: one node
 * standalone, else a c10d rendezvous at MASTER_ADDR (which the script
 * checks first: master_addr_check). */
static void torchrun_line(struct buf *b, const struct sim_plan *p)
{
	bprintf(b, "torchrun --nnodes %d --nproc-per-node %d", launch_nodes(p),
		launch_gpus_per_node(p));
	if (launch_nodes(p) > 1) {
		char id[PRICE_NAME_MAX + 16], *q;

		snprintf(id, sizeof(id), "gpuplan-%s", p->model.name);
		q = gp_shell_quote(id);
		bprintf(b, " --rdzv-backend c10d --rdzv-endpoint \"$MASTER_ADDR:29500\""
			   " --rdzv-id %s", q);
		free(q);
	} else {
		bprintf(b, " --standalone");
	}
}

/* A multi-node torchrun needs the rendezvous host: stop with what to set
 * rather than torchrun's own error about an empty endpoint. */
static void master_addr_check(struct buf *b, const struct sim_plan *p)
{
	if (launch_nodes(p) > 1)
		bprintf(b, ": \"${MASTER_ADDR:?set MASTER_ADDR to the address of the first node and run "
			   "this script on each of the %d nodes}\"\n", launch_nodes(p));
}

/* ds_config.json for p (deepspeed.ai/docs/config-json): the batch
 * identity, the ZeRO stage, bf16 (fp16 with dynamic loss scaling where
 * the GPU has no bf16: loss_scale 0), and activation checkpointing when
 * the plan recomputes.  contiguous_memory_optimization only beside
 * partition_activations: deepspeed.checkpointing.configure asserts that
 * the first needs the second.  Indented, or on one line (compact) for a
 * variable.  The caller frees the string. */
static char *deepspeed_config(const struct sim_plan *p, int compact)
{
	cJSON *root = cJSON_CreateObject(), *zero, *prec, *ckpt;
	int recompute = p->par.recompute != SIM_RECOMPUTE_NONE;
	int partition = recompute && p->par.tp > 1;
	char *s;

	cJSON_AddNumberToObject(root, "train_batch_size", p->par.gbs);
	cJSON_AddNumberToObject(root, "train_micro_batch_size_per_gpu", p->par.mbs);
	cJSON_AddNumberToObject(root, "gradient_accumulation_steps", grad_accum(p));
	cJSON_AddNumberToObject(root, "gradient_clipping", 1.0);
	zero = cJSON_AddObjectToObject(root, "zero_optimization");
	cJSON_AddNumberToObject(zero, "stage",
				zero1_instead(p, PLAN_FRAMEWORK_DEEPSPEED) ? 1 : p->par.zero);
	cJSON_AddBoolToObject(zero, "overlap_comm", 1);
	cJSON_AddBoolToObject(zero, "contiguous_gradients", 1);
	/* ZeRO-Offload and ZeRO-Infinity (deepspeed/runtime/zero/
	 * offload_config.py): the optimizer's states to the CPU or NVMe, and
	 * at stage 3 the parameters as well ("Valid only with stage 3"); the
	 * NVMe path is the mount the user sets. */
	if (p->par.ft.offload != SIM_OFFLOAD_NONE) {
		int stage = zero1_instead(p, PLAN_FRAMEWORK_DEEPSPEED) ? 1 : p->par.zero;
		const char *keys[2] = { "offload_optimizer", "offload_param" };

		for (int i = 0; i < (stage == 3 ? 2 : 1); i++) {
			cJSON *o = cJSON_AddObjectToObject(zero, keys[i]);

			cJSON_AddStringToObject(o, "device", sim_offload_names[p->par.ft.offload]);
			if (p->par.ft.offload == SIM_OFFLOAD_NVME)
				cJSON_AddStringToObject(o, "nvme_path", "/local_nvme");
			cJSON_AddBoolToObject(o, "pin_memory", 1);
		}
	}
	if (price_gpu_has_bf16(&p->cluster.gpu)) {
		prec = cJSON_AddObjectToObject(root, "bf16");
		cJSON_AddBoolToObject(prec, "enabled", 1);
	} else {
		prec = cJSON_AddObjectToObject(root, "fp16");
		cJSON_AddBoolToObject(prec, "enabled", 1);
		cJSON_AddNumberToObject(prec, "loss_scale", 0);
	}
	ckpt = cJSON_AddObjectToObject(root, "activation_checkpointing");
	cJSON_AddBoolToObject(ckpt, "partition_activations", partition);
	cJSON_AddBoolToObject(ckpt, "contiguous_memory_optimization", partition);
	cJSON_AddBoolToObject(ckpt, "cpu_checkpointing", 0);
	cJSON_AddNumberToObject(ckpt, "number_checkpoints", recompute ? p->model.layers : 0);
	s = compact ? cJSON_PrintUnformatted(root) : cJSON_Print(root);
	cJSON_Delete(root);
	return s;
}

/* Hugging Face module names of a Llama-family block's projections, in
 * sim_lora_target_names's order (transformers' LlamaAttention and
 * LlamaMLP). */
static const char *const hf_modules[7] = { "q_proj", "k_proj", "v_proj", "o_proj",
					   "gate_proj", "up_proj", "down_proj" };

/* `trl sft` for p (TRL's ModelConfig: use_peft, lora_r, lora_alpha,
 * lora_target_modules, load_in_4bit, bnb_4bit_quant_type,
 * use_bnb_nested_quant, bnb_4bit_quant_storage; SFTConfig: max_length,
 * packing; TrainingArguments: per_device_train_batch_size,
 * gradient_accumulation_steps, gradient_checkpointing, bf16, deepspeed,
 * num_train_epochs or max_steps), started by Accelerate with the plan's
 * processes, the deepspeed format's config beside it.  LoRA's alpha is
 * twice its rank (torchtune's and TRL's defaults); QLoRA quantises with
 * NF4 and double quantisation (Dettmers et al. 2023), storing in bf16
 * under ZeRO-3 so that DeepSpeed can shard the 4-bit weights. */
static void trl_script(struct buf *b, const struct sim_plan *p)
{
	const struct sim_finetune *ft = &p->par.ft;
	int lora = ft->method == SIM_FT_LORA || ft->method == SIM_FT_QLORA;
	int rank = ft->lora_rank > 0 ? ft->lora_rank : SIM_LORA_DEFAULT_RANK;
	unsigned targets = ft->lora_targets ? ft->lora_targets : SIM_LORA_ALL;
	char *cfg = deepspeed_config(p, 0), *q = NULL, e1[4 * PRICE_NAME_MAX];

	bprintf(b, "#!/usr/bin/env bash\n# TRL supervised fine-tuning of %s on %d x %s "
		    "(written by gpuplan)\nset -eu\n",
		gp_term_escape(e1, sizeof(e1), p->model.name), plan_gpus(p), p->cluster.gpu.name);
	nccl_env(b, p, "export ", 1);
	master_addr_check(b, p);
	bprintf(b, "cat > ds_config.json <<'EOF'\n%s\nEOF\n", cfg);
	free(cfg);
	if (p->par.ft.offload == SIM_OFFLOAD_NVME)
		bprintf(b, "# set nvme_path in ds_config.json to a local NVMe mount\n");
	if (p->model.tokenizer[0])
		q = gp_shell_quote(p->model.tokenizer);
	bprintf(b, "trl sft --num_processes %d --num_machines %d", plan_gpus(p), launch_nodes(p));
	if (launch_nodes(p) > 1)
		bprintf(b, " --main_process_ip \"$MASTER_ADDR\" --machine_rank \"${NODE_RANK:?set "
			   "NODE_RANK}\"");
	bprintf(b, " \\\n  --model_name_or_path %s --dataset_name \"${DATASET:?set DATASET}\"",
		q ? q : "\"${MODEL:?set MODEL}\"");
	free(q);
	bprintf(b, " \\\n  --max_length %d --packing --bf16 --per_device_train_batch_size %d "
		   "--gradient_accumulation_steps %d", p->model.seq, p->par.mbs, grad_accum(p));
	if (p->par.recompute != SIM_RECOMPUTE_NONE)
		bprintf(b, " --gradient_checkpointing");
	if (p->epochs > 0)
		bprintf(b, " --num_train_epochs %g", p->epochs);
	else if (p->tokens > 0)
		bprintf(b, " --max_steps %.0f", ceil(p->tokens / ((double)p->par.gbs * p->model.seq)));
	if (lora) {
		bprintf(b, " \\\n  --use_peft --lora_r %d --lora_alpha %d --lora_dropout 0 "
			   "--lora_target_modules", rank, 2 * rank);
		for (int i = 0; i < 7; i++)
			if ((targets & (1u << i)) &&
			    ((1u << i) != SIM_LORA_GATE || p->model.mlp == SIM_MLP_SWIGLU))
				bprintf(b, " %s", hf_modules[i]);
	}
	if (ft->method == SIM_FT_QLORA) {
		bprintf(b, " \\\n  --load_in_4bit --bnb_4bit_quant_type nf4 --use_bnb_nested_quant");
		if (p->par.zero >= 3)
			bprintf(b, " --bnb_4bit_quant_storage bfloat16");
	}
	bprintf(b, " \\\n  --deepspeed ds_config.json --output_dir \"${OUTPUT_DIR:-out}\" \"$@\"\n");
}

/* The DeepSpeed script's arguments: --deepspeed --deepspeed_config
 * CONFIG, which deepspeed.add_config_arguments() adds to a script's
 * parser (DeepSpeed docs, "Getting Started"), and the tensor and pipeline
 * sizes, which ds_config.json has no field for, as Megatron-DeepSpeed's
 * scripts take them. */
static void deepspeed_words(struct words *ws, const struct sim_plan *p, const char *config)
{
	words_line(ws, "--deepspeed --deepspeed_config");
	words_push(ws, 0, WORD_QUOTED, config);
	if (p->par.tp > 1 || p->par.pp > 1)
		words_line(ws, "--tensor-model-parallel-size %d --pipeline-model-parallel-size %d",
			   p->par.tp, p->par.pp);
}

/* What the plan tells a DeepSpeed script that ds_config.json has no field
 * for, as variables every rank inherits: the sequences to train
 * (GPUPLAN_TRAIN_SAMPLES) and the checkpoint interval in optimizer steps
 * (GPUPLAN_SAVE_INTERVAL_STEPS); then the script, which only the user
 * knows. */
static void deepspeed_env(struct buf *b, const struct sim_plan *p)
{
	long long samples = train_samples(p);

	bprintf(b, "# for your script, which ds_config.json cannot tell: how long to train and "
		   "how often to save\n");
	if (samples > 0)
		bprintf(b, "export GPUPLAN_TRAIN_SAMPLES=%lld\n", samples);
	else
		bprintf(b, ": \"${GPUPLAN_TRAIN_SAMPLES:?set GPUPLAN_TRAIN_SAMPLES (the plan has no "
			   "token count: plan or simulate with --tokens)}\"\nexport GPUPLAN_TRAIN_SAMPLES\n");
	bprintf(b, "export GPUPLAN_SAVE_INTERVAL_STEPS=%lld\n", save_interval_steps(p));
	bprintf(b, ": \"${TRAIN_SCRIPT:?set TRAIN_SCRIPT to your DeepSpeed training script}\"\n");
}

/* Whether the trainer keeps CUDA_DEVICE_MAX_CONNECTIONS=1 (nccl_env). */
static int one_connection(const struct sim_plan *p, enum plan_framework fw)
{
	return fw != PLAN_FRAMEWORK_MEGATRON || !megatron_fsdp(p);
}

/* The head every shell script starting a trainer shares: what fw runs
 * otherwise than priced (framework_predict), the notes, set -eu, the NCCL
 * environment, MASTER_ADDR's check where a rendezvous needs it
 * (check_master); then Megatron-LM's placeholders, or DeepSpeed's
 * variables and, where config is not NULL, the ds_config.json the
 * arguments name written at config (a quoted here-document: the shell
 * expands nothing in it). */
static void trainer_head(struct buf *b, const struct sim_plan *p, enum plan_framework fw,
			 int check_master, const char *config)
{
	struct sim_result r;
	char why[256];

	if (framework_predict(p, fw, &r, why, sizeof(why)) == 1)
		framework_comment(b, p, fw, &r);
	trainer_notes(b, p, fw);
	bprintf(b, "set -eu\n");
	nccl_env(b, p, "export ", one_connection(p, fw));
	if (check_master)
		master_addr_check(b, p);
	if (fw != PLAN_FRAMEWORK_DEEPSPEED) {
		megatron_env(b, p);
		return;
	}
	deepspeed_env(b, p);
	if (config) {
		char *cfg = deepspeed_config(p, 0), *q = gp_shell_quote(config);

		bprintf(b, "cat > %s <<'GPUPLAN_DS_CONFIG'\n%s\nGPUPLAN_DS_CONFIG\n", q, cfg);
		free(q);
		free(cfg);
	}
}

/* The training script and its arguments under fw: "$TRAIN_SCRIPT"
 * (trainer_head sets or checks it), then Megatron-LM's arguments, or the
 * DeepSpeed script's naming the config at config. */
static void trainer_words(struct words *ws, const struct sim_plan *p, enum plan_framework fw,
			  const char *config)
{
	words_push(ws, 0, WORD_VAR, "TRAIN_SCRIPT");
	if (fw == PLAN_FRAMEWORK_DEEPSPEED)
		deepspeed_words(ws, p, config);
	else
		megatron_words(ws, p);
}

/* Where the Slurm, mpirun and SkyPilot scripts write the config: the
 * working directory, which every node of a multi-node run reads. */
#define DS_CONFIG "ds_config.json"

char *export_deepspeed_launch(const struct sim_plan *p, const char *config_path)
{
	struct buf b = { 0 };
	struct words ws = { 0 };

	trainer_head(&b, p, PLAN_FRAMEWORK_DEEPSPEED, 0, NULL);
	if (launch_nodes(p) > 1) {
		/* DeepSpeed's runner starts the other nodes over ssh with only
		 * the variables of .deepspeed_env (in the working directory) */
		bprintf(&b, "env | grep -E '^(CUDA_DEVICE_MAX_CONNECTIONS|NCCL_[A-Z_]*|GPUPLAN_[A-Z_]*)=' "
			    "> .deepspeed_env\n");
		bprintf(&b, "if [ -n \"${SLURM_JOB_NODELIST:-}\" ]; then\n"
			    "  scontrol show hostnames \"$SLURM_JOB_NODELIST\" | "
			    "sed 's/$/ slots=%d/' > hostfile\nelse\n"
			    "  : \"${HOSTFILE:?set HOSTFILE to a DeepSpeed hostfile of the %d nodes "
			    "(HOST slots=%d a line)}\"\n  cp \"$HOSTFILE\" hostfile\nfi\n",
			launch_gpus_per_node(p), launch_nodes(p), launch_gpus_per_node(p));
	}
	/* the launcher's flags: DeepSpeed docs, "Getting Started: Launching
	 * DeepSpeed Training" */
	bprintf(&b, "deepspeed --num_nodes %d --num_gpus %d", launch_nodes(p),
		launch_gpus_per_node(p));
	if (launch_nodes(p) > 1)
		bprintf(&b, " --hostfile hostfile");
	trainer_words(&ws, p, PLAN_FRAMEWORK_DEEPSPEED, config_path);
	words_shell(&b, &ws);
	words_release(&ws);
	bprintf(&b, "\n");
	return b.s;
}

/* name as a job's label into buf[size]: what is not a letter, a digit,
 * '.', '_' or '-' becomes '-'.  With k8s, an RFC 1035 label as the
 * PyTorchJob webhook and the TrainJob's CRD want it: lower-case letters,
 * digits and '-' ('.' and '_' too become '-'), at most 40 characters so
 * that the pod names the operators make ("-master-0", "-worker-123",
 * "-node-0-0") stay within 63, starting with a letter ("gpuplan-" comes
 * first), no '-' at the end.  A label, not a quoted word: Slurm reads
 * #SBATCH lines with its own rules.  Returns buf. */
static char *job_label(char *buf, size_t size, const char *name, int k8s)
{
	size_t n = 0, max = k8s && size > 41 ? 41 : size;

	for (const char *s = name; *s && n + 1 < max; s++) {
		char c = *s;

		if (k8s && c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || ((c == '.' || c == '_') && !k8s)))
			c = '-';
		buf[n++] = c;
	}
	while (k8s && n > 0 && buf[n - 1] == '-')
		n--;
	buf[n] = '\0';
	return buf;
}

/* The longest job a Slurm export asks for: a day, within the limit most
 * GPU partitions set (24 to 48 hours); longer runs continue in requeued
 * jobs from their checkpoints. */
#define SLURM_JOB_CAP_S 86400.0
/* Time kept at the end of a job for the trainer's last checkpoint. */
#define SLURM_SAVE_MARGIN_S 1200.0

/* One job's time limit: the whole run with 10% and an hour to spare when
 * that is under SLURM_JOB_CAP_S, else the cap. */
static double slurm_limit_s(const struct sim_plan *p)
{
	double t = p->time_to_train_s * 1.1 + 3600;

	return p->time_to_train_s > 0 && t < SLURM_JOB_CAP_S ? t : SLURM_JOB_CAP_S;
}

/* Slurm's time format D-HH:MM:SS of seconds, rounded up. */
static void slurm_time(char *out, size_t size, double seconds)
{
	/* The epsilon keeps 10 d x 1.1 from rounding up to an extra second. */
	long long t = (long long)ceil(seconds - 1e-6);
	long long d = t / 86400, h = t % 86400 / 3600, m = t % 3600 / 60, sec = t % 60;

	snprintf(out, size, "%lld-%02lld:%02lld:%02lld", d, h, m, sec);
}

/* The checks every export makes before writing, for f starting trainer
 * fw: the layout simulate accepts, a trainer that builds the model
 * (megatron_lacks) and runs the layout (DeepSpeed has no CP, trl only data
 * parallelism), GPUs the launchers can start (launch_shape), and a layout
 * fw's run can be re-priced for (framework_predict), with one warning
 * when it runs it otherwise than priced.  Returns RC_OK, or RC_INPUT (message printed). */
static enum rc export_check(const struct sim_plan *p, enum export_format f,
			    enum plan_framework fw)
{
	struct sim_result r;
	const char *lacks;
	char why[256], name[4 * PRICE_NAME_MAX];
	int nodes, gpn, differs;

	/* What simulate refuses is not exported either: one check for both
	 * (its products in 64 bit: mbs x dp can pass an int). */
	if (sim_check(&p->model, &p->par, &p->cluster, why, sizeof(why)) != RC_OK) {
		gp_error("plan: layout is not exportable: %s", why);
		return RC_INPUT;
	}
	lacks = fw == PLAN_FRAMEWORK_MEGATRON ? megatron_lacks(&p->model) : NULL;
	if (lacks) {
		gp_error("plan: .model: Megatron-LM cannot build %s as planned: it has no %s",
			 gp_term_escape(name, sizeof(name), p->model.name), lacks);
		gp_hint("export --format deepspeed, or slurm, mpirun, kubernetes, trainjob or skypilot "
			"with --framework deepspeed, for a script that builds it");
		return RC_INPUT;
	}
	/* DeepSpeed-MoE's expert groups divide its data-parallel ranks and
	 * split no expert but over the tensor-parallel ones. */
	if (fw == PLAN_FRAMEWORK_DEEPSPEED && p->model.experts > 0 &&
	    !plan_framework_runs_experts(fw, &p->par)) {
		gp_error("plan: .parallel: DeepSpeed-MoE cannot run ep %d, etp %d over dp %d, tp %d: "
			 "it needs ep dividing dp and etp 1 or tp", p->par.ep, p->par.etp, p->par.dp,
			 p->par.tp);
		gp_hint("plan with --framework deepspeed for layouts it runs, or export megatron");
		return RC_INPUT;
	}
	/* Megatron-Core overlaps the EP all-to-all (--overlap-moe-expert-
	 * parallel-comm, which the script writes as planned) only with
	 * expert parallelism, virtual stages when pp > 1, no full
	 * recomputation and at most one MTP layer (TransformerConfig's
	 * __post_init__ asserts each). */
	if (fw == PLAN_FRAMEWORK_MEGATRON && p->model.experts > 0 && p->par.ep_overlap &&
	    (p->par.ep < 2 || (p->par.pp > 1 && p->par.interleave < 2) ||
	     p->par.recompute == SIM_RECOMPUTE_FULL || p->model.mtp_layers > 1)) {
		gp_error("plan: .parallel.ep_overlap: Megatron-Core overlaps the EP all-to-all only "
			 "with ep > 1, interleaving with pp > 1, no full recomputation and at most "
			 "one MTP layer, found ep %d, pp %d, interleave %d, recompute %s, %d MTP "
			 "layers", p->par.ep, p->par.pp, p->par.interleave,
			 sim_recompute_str(p->par.recompute), p->model.mtp_layers);
		gp_hint("simulate with --interleave or without --ep-overlap, or plan with "
			"--framework megatron for layouts it runs");
		return RC_INPUT;
	}
	/* DeepSpeed has no context parallelism: its batch identity
	 * (train_batch_size = micro x accumulation x world / (tp pp)) would
	 * count the CP ranks as data parallel and assert. */
	if (p->par.cp > 1 && fw == PLAN_FRAMEWORK_DEEPSPEED) {
		gp_error("plan: .parallel.cp: expected 1 for DeepSpeed, which has no context "
			 "parallelism, found %d", p->par.cp);
		gp_hint("plan with --framework deepspeed for layouts it runs, or export megatron");
		return RC_INPUT;
	}
	/* Megatron-LM and Megatron-DeepSpeed's scripts train every weight:
	 * adapters train under TRL with PEFT (or gpuplan execute), and the
	 * DeepSpeed config alone serves either. */
	if ((p->par.ft.method == SIM_FT_LORA || p->par.ft.method == SIM_FT_QLORA) &&
	    f != EXPORT_TRL && f != EXPORT_DEEPSPEED && f != EXPORT_SLURM_EXECUTE &&
	    f != EXPORT_MPIRUN_EXECUTE) {
		gp_error("plan: .parallel.finetune: %s trains every weight, and the plan trains %s "
			 "adapters", fw == PLAN_FRAMEWORK_MEGATRON ? "Megatron-LM" : "Megatron-DeepSpeed",
			 p->par.ft.method == SIM_FT_QLORA ? "QLoRA" : "LoRA");
		gp_hint("export --format trl (TRL with PEFT), or slurm-execute or mpirun-execute "
			"(gpuplan execute, LoRA)");
		return RC_INPUT;
	}
	if (launch_shape(p, &nodes, &gpn, why, sizeof(why)) != 0) {
		gp_error("plan: not launchable: %s", why);
		gp_hint("plan a multiple of the node's GPUs, or GPUs that fit one node");
		return RC_INPUT;
	}
	/* Accelerate starts one process a GPU of data parallelism, sharded
	 * by ZeRO: no tensor or pipeline parallelism. */
	if (f == EXPORT_TRL && (p->par.tp > 1 || p->par.pp > 1)) {
		gp_error("plan: .parallel: expected tp 1 and pp 1 for trl (Accelerate runs data "
			 "parallelism with ZeRO), found tp %d, pp %d", p->par.tp, p->par.pp);
		gp_hint("plan with --tp 1 --pp 1 for a layout trl runs");
		return RC_INPUT;
	}
	differs = framework_predict(p, fw, &r, why, sizeof(why));
	if (differs < 0) {
		gp_error("plan: layout is not exportable: %s", why);
		return RC_INPUT;
	}
	if (differs)
		framework_warn(p, fw, &r);
	return RC_OK;
}

/* The Slurm batch script: fw under srun, one torchrun a node meeting at
 * the first node of the allocation, in jobs of at most SLURM_JOB_CAP_S
 * that requeue themselves until the training is done.  Megatron-LM saves
 * and exits before the limit (--exit-duration-in-mins), and the script
 * requeues while latest_checkpointed_iteration.txt is short of the
 * iterations; spot plans also save on the SIGTERM Slurm sends two minutes
 * before a preemption's kill (torchrun passes TERM to its workers).  A
 * DeepSpeed script's progress is its own: Slurm signals the batch script
 * SLURM_SAVE_MARGIN_S before the limit (--signal=B:USR1), which requeues
 * the job, and a script that returns ends it. */
static void slurm_script(struct buf *b, const struct sim_plan *p, enum plan_framework fw)
{
	int nodes = launch_nodes(p), gpn = launch_gpus_per_node(p);
	int spot = p->purchase == PRICE_PURCHASE_SPOT, ds = fw == PLAN_FRAMEWORK_DEEPSPEED;
	double limit = slurm_limit_s(p);
	long long samples = train_samples(p);
	char lab[4 * PRICE_NAME_MAX], t[64], run[32];
	struct words ws = { 0 };

	slurm_time(t, sizeof(t), limit);
	bprintf(b, "#!/usr/bin/env bash\n");
	bprintf(b, "#SBATCH --job-name=gpuplan-%s\n", job_label(lab, sizeof(lab), p->model.name, 0));
	bprintf(b, "#SBATCH --nodes=%d\n#SBATCH --ntasks-per-node=1\n", nodes);
	bprintf(b, "#SBATCH --gpus-per-node=%d\n#SBATCH --exclusive\n", gpn);
	bprintf(b, "#SBATCH --time=%s\n#SBATCH --requeue\n", t);
	if (ds)
		bprintf(b, "#SBATCH --signal=B:USR1@%.0f\n", SLURM_SAVE_MARGIN_S);
	else if (spot)
		bprintf(b, "#SBATCH --signal=TERM@120\n");
	bprintf(b, "#SBATCH --output=%%x-%%j.out\n#SBATCH --open-mode=append\n");
	bprintf(b, "# Your site's partition and account: uncomment, or give them to sbatch\n"
		   "# (sbatch -p PARTITION -A ACCOUNT THIS.sh):\n"
		   "##SBATCH --partition=PARTITION\n##SBATCH --account=ACCOUNT\n");
	bprintf(b, "# %s for %s on %d nodes x %d GPUs (written by gpuplan).\n", framework_title(fw),
		gp_term_escape(lab, sizeof(lab), p->model.name), nodes, gpn);
	if (p->time_to_train_s > 0)
		bprintf(b, "# The run takes %s; ", unit_fmt_duration(run, sizeof(run),
								   p->time_to_train_s));
	else
		bprintf(b, "# ");
	if (ds)
		bprintf(b, "each job runs at most %s (--time); Slurm signals this script\n"
			   "# %.0f min before it (--signal), which requeues the job: your script "
			   "resumes from its last\n# checkpoint and returns when GPUPLAN_TRAIN_SAMPLES "
			   "are done.\n", t, SLURM_SAVE_MARGIN_S / 60);
	else
		bprintf(b, "each job runs at most %s (--time), Megatron-LM saving a\n"
			   "# checkpoint and exiting %.0f min before it (--exit-duration-in-mins); the "
			   "job requeues\n# itself until the training samples are done, resuming from "
			   "CKPT_DIR.\n", t, SLURM_SAVE_MARGIN_S / 60);
	if (spot)
		bprintf(b, "# Spot: a preempted node requeues the job (--requeue), which resumes "
			   "from the last\n# checkpoint%s.\n",
			ds ? "" : "; SIGTERM before the limit saves one (--exit-signal-handler)");
	trainer_head(b, p, fw, 0, DS_CONFIG);
	bprintf(b, ": \"${SLURM_JOB_ID:?submit this script with sbatch}\"\n");
	bprintf(b, "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n1)\n"
		   "export MASTER_ADDR\n");
	if (ds)
		bprintf(b, "trap 'scontrol requeue \"$SLURM_JOB_ID\"' USR1\n");
	bprintf(b, "srun --ntasks-per-node=1 --kill-on-bad-exit=1 torchrun --nnodes %d "
		   "--nproc-per-node %d \\\n  --rdzv-backend c10d --rdzv-endpoint "
		   "\"$MASTER_ADDR:29500\" --rdzv-id \"$SLURM_JOB_ID\" \\\n ", nodes, gpn);
	trainer_words(&ws, p, fw, DS_CONFIG);
	if (!ds)
		words_line(&ws, "--exit-duration-in-mins %.0f%s",
			   floor((limit - SLURM_SAVE_MARGIN_S) / 60) > 1
				   ? floor((limit - SLURM_SAVE_MARGIN_S) / 60) : 1,
			   spot ? " --exit-signal-handler" : "");
	words_shell(b, &ws);
	words_release(&ws);
	if (ds) {
		/* in the background: bash runs a trap only between commands,
		 * and wait is one it interrupts */
		bprintf(b, " &\nwait $!\n");
		return;
	}
	bprintf(b, "\n# Megatron-LM trains train-samples / global-batch iterations and writes the\n"
		   "# last one saved to latest_checkpointed_iteration.txt.\n");
	if (samples > 0)
		bprintf(b, "iters=%lld\n", samples / p->par.gbs);
	else
		bprintf(b, "iters=$((TRAIN_SAMPLES / %d))\n", p->par.gbs);
	bprintf(b, "done_iters=$(cat \"$CKPT_DIR/latest_checkpointed_iteration.txt\" 2>/dev/null "
		   "|| echo 0)\n"
		   "if [ \"$done_iters\" != release ] && [ \"$done_iters\" -lt \"$iters\" ]; then\n"
		   "  echo \"gpuplan: $done_iters of $iters iterations done: requeueing\"\n"
		   "  scontrol requeue \"$SLURM_JOB_ID\"\nfi\n");
}

/* Open MPI starting fw directly, one rank a GPU: the plan's GPUs as -np,
 * each rank's torch.distributed variables, which Megatron-LM and
 * DeepSpeed's init_distributed read, from Open MPI's
 * (OMPI_COMM_WORLD_RANK, _LOCAL_RANK, _SIZE), and the variables the
 * script's head exports passed on with -x. */
static void mpirun_script(struct buf *b, const struct sim_plan *p, enum plan_framework fw)
{
	int nodes = launch_nodes(p), gpn = launch_gpus_per_node(p);
	struct words ws = { 0 };
	char e[4 * PRICE_NAME_MAX];

	bprintf(b, "#!/usr/bin/env bash\n# %s for %s under Open MPI: %d ranks, %d nodes x "
		   "%d GPUs (written by gpuplan)\n", framework_title(fw),
		gp_term_escape(e, sizeof(e), p->model.name), plan_gpus(p), nodes, gpn);
	trainer_head(b, p, fw, 0, DS_CONFIG);
	if (nodes > 1)
		bprintf(b, ": \"${HOSTFILE:?set HOSTFILE to an Open MPI hostfile of the %d nodes, "
			   "one line HOST slots=%d per node}\"\n"
			   ": \"${MASTER_ADDR:?set MASTER_ADDR to the address of the first host}\"\n",
			nodes, gpn);
	else
		bprintf(b, "MASTER_ADDR=${MASTER_ADDR:-localhost}\n");
	bprintf(b, "mpirun -np %d%s --map-by ppr:%d:node --bind-to numa \\\n"
		   "  -x MASTER_ADDR=\"$MASTER_ADDR\" -x MASTER_PORT=29500", plan_gpus(p),
		nodes > 1 ? " --hostfile \"$HOSTFILE\"" : "", gpn);
	if (one_connection(p, fw))
		bprintf(b, " -x CUDA_DEVICE_MAX_CONNECTIONS");
	if (!p->cluster.gpu.p2p)
		bprintf(b, " -x NCCL_P2P_DISABLE");
	if (nodes > 1)
		bprintf(b, " -x NCCL_IB_DISABLE");
	if (fw == PLAN_FRAMEWORK_DEEPSPEED)
		bprintf(b, " -x GPUPLAN_TRAIN_SAMPLES -x GPUPLAN_SAVE_INTERVAL_STEPS");
	bprintf(b, " \\\n  bash -c 'RANK=$OMPI_COMM_WORLD_RANK LOCAL_RANK=$OMPI_COMM_WORLD_LOCAL_RANK "
		   "WORLD_SIZE=$OMPI_COMM_WORLD_SIZE \\\n    exec python3 \"$@\"' mpirun-rank");
	trainer_words(&ws, p, fw, DS_CONFIG);
	words_shell(b, &ws);
	words_release(&ws);
	bprintf(b, "\n");
}

/* ---- Kubernetes ----------------------------------------------------------
 *
 * Two manifests: Kubeflow's PyTorchJob (kubeflow.org/v1, the Training
 * Operator, v1.9) and Kubeflow Trainer's TrainJob (trainer.kubeflow.org/
 * v1alpha1, v2.2 and later; field names as pkg/apis/trainer/v1alpha1/
 * trainjob_types.go has them at v2.3.0).  Both start torchrun in a
 * container with the trainer's arguments; the operator gives torchrun the
 * nodes, the node's rank and the first node's address through PET_*
 * variables. */

/* The Kubernetes resource name of p's GPUs: AMD's device plugin
 * advertises amd.com/gpu, NVIDIA's nvidia.com/gpu. */
static const char *k8s_gpu_resource(const struct sim_plan *p)
{
	return price_gpu_is_amd(&p->cluster.gpu) ? "amd.com/gpu" : "nvidia.com/gpu";
}

/* The placeholder image: not a valid image reference (upper case), so a
 * manifest applied unedited fails with InvalidImageName, naming it. */
#define K8S_IMAGE_MEGATRON "SET-IMAGE-TO-A-MEGATRON-LM-CONTAINER"
#define K8S_IMAGE_DEEPSPEED "SET-IMAGE-TO-A-CONTAINER-WITH-DEEPSPEED-AND-YOUR-SCRIPT"
/* Where a DeepSpeed container writes the config it gets in
 * GPUPLAN_DS_CONFIG before it starts torchrun. */
#define K8S_DS_CONFIG "/tmp/ds_config.json"

/* Appends ws as YAML block-list items at indent, one a line, variables as
 * $(NAME), which the kubelet expands in a container's command and args
 * from its env (and nowhere else).  With joined, a flag and the one word
 * after it are one item, --flag=value, as argparse reads it: a TrainJob's
 * args hold at most 128 items (its CRD's maxItems). */
static void words_yaml(struct buf *b, const struct words *ws, int indent, int joined)
{
	for (size_t i = 0; i < ws->n; i++) {
		char item[1024], *q;
		size_t n = 0;
		int take = 1;

		if (joined && ws->w[i].kind == WORD_PLAIN && strncmp(ws->w[i].s, "--", 2) == 0 &&
		    i + 1 < ws->n && !(ws->w[i + 1].kind == WORD_PLAIN &&
				       strncmp(ws->w[i + 1].s, "--", 2) == 0) &&
		    (i + 2 >= ws->n || strncmp(ws->w[i + 2].s, "--", 2) == 0))
			take = 2;
		for (int k = 0; k < take; k++) {
			const struct word *w = &ws->w[i + (size_t)k];

			n += (size_t)snprintf(item + n, sizeof(item) - n,
					      w->kind == WORD_VAR ? "%s$(%s)" : "%s%s",
					      k ? "=" : "", w->s);
			if (n >= sizeof(item))
				n = sizeof(item) - 1;
		}
		i += (size_t)take - 1;
		q = gp_yaml_quote(item);
		bprintf(b, "%*s- %s\n", indent, "", q);
		free(q);
	}
}

/* The trainer part of a container at indent: command, args and env.
 * torchrun with the trainer's arguments; a PyTorchJob's names the nodes
 * and GPUs per node (with_shape), a TrainJob's leaves them to the
 * PET_NNODES and PET_NPROC_PER_NODE its numNodes and numProcPerNode give
 * and joins each flag to its value (words_yaml).  Under DeepSpeed, bash
 * first writes the config from GPUPLAN_DS_CONFIG to K8S_DS_CONFIG. */
static void k8s_trainer(struct buf *b, const struct sim_plan *p, enum plan_framework fw,
			int in, int trainjob)
{
	int ds = fw == PLAN_FRAMEWORK_DEEPSPEED;
	long long samples = train_samples(p);
	struct words ws = { 0 };
	char warm[32], steps[32], total[32], *cfg = NULL, *q;

	snprintf(warm, sizeof(warm), "%lld", samples / 100 > 0 ? samples / 100 : 1000);
	snprintf(steps, sizeof(steps), "%lld", save_interval_steps(p));
	snprintf(total, sizeof(total), "%lld", samples);
	if (ds) {
		cfg = deepspeed_config(p, 1);
		q = gp_yaml_quote("printf '%s\\n' \"$GPUPLAN_DS_CONFIG\" > " K8S_DS_CONFIG
				  " && exec torchrun \"$@\"");
		bprintf(b, "%*scommand: [\"bash\", \"-c\", %s, \"torchrun\"]\n", in, "", q);
		free(q);
	} else {
		bprintf(b, "%*scommand: [\"torchrun\"]\n", in, "");
	}
	bprintf(b, "%*sargs:\n", in, "");
	if (!trainjob)
		bprintf(b, "%*s  - \"--nnodes=%d\"\n%*s  - \"--nproc-per-node=%d\"\n", in, "",
			launch_nodes(p), in, "", launch_gpus_per_node(p));
	trainer_words(&ws, p, fw, K8S_DS_CONFIG);
	words_yaml(b, &ws, in + 2, trainjob);
	words_release(&ws);
	bprintf(b, "%*senv:\n", in, "");
	{
		const char *env[][2] = {
			{ "TRAIN_SCRIPT", ds ? "SET-TRAIN_SCRIPT-TO-YOUR-DEEPSPEED-SCRIPT.py"
					     : "/opt/megatron-lm/pretrain_gpt.py" },
			{ "CUDA_DEVICE_MAX_CONNECTIONS", one_connection(p, fw) ? "1" : NULL },
			{ "NCCL_P2P_DISABLE", p->cluster.gpu.p2p ? NULL : "1" },
			{ "GPUPLAN_DS_CONFIG", cfg },
			{ "GPUPLAN_TRAIN_SAMPLES", ds ? (samples > 0 ? total : "SET-TRAIN_SAMPLES") : NULL },
			{ "GPUPLAN_SAVE_INTERVAL_STEPS", ds ? steps : NULL },
			{ "DATA_PATH", ds ? NULL : "/data/SET-DATA_PATH-TO-A-MEGATRON-DATASET-PREFIX" },
			{ "CKPT_DIR", ds ? NULL : "/checkpoints" },
			{ "TOKENIZER", ds || p->model.tokenizer[0] ? NULL : "SET-TOKENIZER" },
			{ "TRAIN_SAMPLES", ds || samples > 0 ? NULL : "SET-TRAIN_SAMPLES" },
			{ "LR", ds ? NULL : "3.0e-4" },
			{ "MIN_LR", ds ? NULL : "3.0e-5" },
			{ "LR_DECAY_STYLE", ds ? NULL : "cosine" },
			{ "LR_WARMUP_SAMPLES", ds ? NULL : warm },
		};

		for (size_t i = 0; i < GP_ARRAY_LEN(env); i++) {
			if (!env[i][1])
				continue;
			q = gp_yaml_quote(env[i][1]);
			bprintf(b, "%*s  - name: %s\n%*s    value: %s\n", in, "", env[i][0], in, "", q);
			free(q);
		}
	}
	free(cfg);
}

/* The container's mounts at indent: /dev/shm, the checkpoints and the
 * data (k8s_volumes). */
static void k8s_mounts(struct buf *b, int in)
{
	bprintf(b, "%*svolumeMounts:\n%*s  - name: dshm\n%*s    mountPath: /dev/shm\n"
		   "%*s  - name: checkpoints\n%*s    mountPath: /checkpoints\n"
		   "%*s  - name: data\n%*s    mountPath: /data\n%*s    readOnly: true\n",
		in, "", in, "", in, "", in, "", in, "", in, "", in, "", in, "");
}

/* The pod's volumes at indent: /dev/shm in memory (NCCL and the data
 * loaders' shared memory; a container's default is 64 MiB), and the
 * claims the user creates for checkpoints and data. */
static void k8s_volumes(struct buf *b, int in)
{
	bprintf(b, "%*svolumes:\n%*s  - name: dshm\n%*s    emptyDir:\n%*s      medium: Memory\n"
		   "%*s  - name: checkpoints\n%*s    persistentVolumeClaim:\n"
		   "%*s      claimName: gpuplan-checkpoints\n"
		   "%*s  - name: data\n%*s    persistentVolumeClaim:\n%*s      claimName: gpuplan-data\n",
		in, "", in, "", in, "", in, "", in, "", in, "", in, "", in, "", in, "", in, "");
}

/* The comment heading both manifests: what runs where, and what to set
 * before kubectl apply. */
static void k8s_comment(struct buf *b, const struct sim_plan *p, enum plan_framework fw,
			const char *kind)
{
	int ds = fw == PLAN_FRAMEWORK_DEEPSPEED;

	bprintf(b, "# %s written by gpuplan: %s on %d nodes x %d GPUs.\n", kind,
		framework_title(fw), launch_nodes(p), launch_gpus_per_node(p));
	trainer_notes(b, p, fw);
	bprintf(b, "# Before kubectl apply: set the image (a container with %s),\n"
		   "# %s, and create the PersistentVolumeClaims gpuplan-checkpoints and\n"
		   "# gpuplan-data.\n", ds ? "DeepSpeed, PyTorch and your script" :
		"Megatron-LM and PyTorch", ds ? "TRAIN_SCRIPT" : "DATA_PATH");
}

/* A Kubeflow PyTorchJob (kubeflow.org/v1): a Master and Workers, one pod
 * a node, nprocPerNode workers in each. */
static void k8s_pytorchjob(struct buf *b, const struct sim_plan *p, enum plan_framework fw)
{
	int nodes = launch_nodes(p);
	char lab[4 * PRICE_NAME_MAX];

	k8s_comment(b, p, fw, "Kubeflow PyTorchJob");
	bprintf(b, "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: gpuplan-%s\n"
		   "spec:\n  nprocPerNode: \"%d\"\n  pytorchReplicaSpecs:\n",
		job_label(lab, sizeof(lab), p->model.name, 1), launch_gpus_per_node(p));
	for (int w = 0; w < 2; w++) {
		int replicas = w ? nodes - 1 : 1;

		if (w && replicas == 0)
			break;
		bprintf(b, "    %s:\n      replicas: %d\n      restartPolicy: OnFailure\n"
			   "      template:\n        spec:\n          containers:\n",
			w ? "Worker" : "Master", replicas);
		bprintf(b, "            - name: pytorch\n              image: \"%s\"\n",
			fw == PLAN_FRAMEWORK_DEEPSPEED ? K8S_IMAGE_DEEPSPEED : K8S_IMAGE_MEGATRON);
		k8s_trainer(b, p, fw, 14, 0);
		bprintf(b, "              resources:\n                limits:\n                  "
			   "%s: %d\n", k8s_gpu_resource(p), launch_gpus_per_node(p));
		k8s_mounts(b, 14);
		k8s_volumes(b, 10);
	}
}

/* A Kubeflow Trainer TrainJob (trainer.kubeflow.org/v1alpha1) on the
 * torch-distributed ClusterTrainingRuntime the Trainer installs: the
 * trainer's image, command, args and env, numNodes, numProcPerNode and
 * resourcesPerNode; the volumes and mounts as a runtime patch of the
 * runtime's "node" job and container (RuntimePatch, Trainer v2.2 and
 * later, strategic-merged into the JobSet by name). */
static void k8s_trainjob(struct buf *b, const struct sim_plan *p, enum plan_framework fw)
{
	char lab[4 * PRICE_NAME_MAX];

	k8s_comment(b, p, fw, "Kubeflow Trainer TrainJob");
	bprintf(b, "# Needs Kubeflow Trainer v2.2 or later and its torch-distributed runtime.\n");
	bprintf(b, "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n"
		   "  name: gpuplan-%s\nspec:\n  runtimeRef:\n    name: torch-distributed\n"
		   "    apiGroup: trainer.kubeflow.org\n    kind: ClusterTrainingRuntime\n"
		   "  trainer:\n    image: \"%s\"\n", job_label(lab, sizeof(lab), p->model.name, 1),
		fw == PLAN_FRAMEWORK_DEEPSPEED ? K8S_IMAGE_DEEPSPEED : K8S_IMAGE_MEGATRON);
	k8s_trainer(b, p, fw, 4, 1);
	bprintf(b, "    numNodes: %d\n    numProcPerNode: %d\n    resourcesPerNode:\n"
		   "      limits:\n        %s: %d\n", launch_nodes(p), launch_gpus_per_node(p),
		k8s_gpu_resource(p), launch_gpus_per_node(p));
	bprintf(b, "  runtimePatches:\n    - manager: gpuplan\n      trainingRuntimeSpec:\n"
		   "        template:\n          spec:\n            replicatedJobs:\n"
		   "              - name: node\n                template:\n                  spec:\n"
		   "                    template:\n                      spec:\n");
	k8s_volumes(b, 24);
	bprintf(b, "                        containers:\n                          - name: node\n");
	k8s_mounts(b, 28);
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

/* The run: script for p under fw: shell text whose only strings from the
 * plan are shell_quote()d. */
static void skypilot_script(struct buf *b, const struct sim_plan *p, enum plan_framework fw)
{
	struct words ws = { 0 };

	bprintf(b, "set -e\necho ");
	shell_quote(b, p->model.name);
	bprintf(b, "\necho 'gpuplan layout: tp %d pp %d dp %d cp %d, %d nodes x %d GPUs'\n",
		p->par.tp, p->par.pp, p->par.dp, p->par.cp, launch_nodes(p),
		launch_gpus_per_node(p));
	trainer_head(b, p, fw, 0, DS_CONFIG);
	skypilot_torchrun(b);
	bprintf(b, " \\\n ");
	trainer_words(&ws, p, fw, DS_CONFIG);
	words_shell(b, &ws);
	words_release(&ws);
	/* EXTRA_ARGS (data, tokenizer, checkpoints) is the user's, split
	 * into words as given on `sky launch --env`. */
	bprintf(b, " $EXTRA_ARGS\n");
}

/* The SkyPilot task for p under fw (export.h's comment). */
static void skypilot_task(struct buf *b, const struct sim_plan *p, enum plan_framework fw)
{
	const struct price_offering *o = &p->offering;
	int gpn = launch_gpus_per_node(p), ds = fw == PLAN_FRAMEWORK_DEEPSPEED;
	struct buf run = { 0 };

	bprintf(b, "# SkyPilot task written by gpuplan: sky launch -c NAME THIS.yaml%s\n"
		   "# (sky launch --env EXTRA_ARGS=... for data and tokenizer flags)\n",
		ds ? " --env TRAIN_SCRIPT=..." : "");
	bprintf(b, "name: ");
	yaml_quote(b, p->model.name);
	bprintf(b, "\nresources:\n  accelerators: {");
	yaml_quote(b, skypilot_accelerator(o->provider, p->cluster.gpu.name));
	bprintf(b, ": %d}\n", gpn);
	/* A custom cluster has no offering; hardware the user owns is not a
	 * cloud SkyPilot rents from. */
	if (o->provider[0] && !o->owned) {
		bprintf(b, "  cloud: ");
		yaml_quote(b, o->provider);
		if (o->region[0]) {
			bprintf(b, "\n  region: ");
			yaml_quote(b, o->region);
		}
		/* An instance type fixes the GPUs per node: named only when
		 * the plan fills its nodes. */
		if (o->instance_type[0] && o->gpus_per_node == gpn) {
			bprintf(b, "\n  instance_type: ");
			yaml_quote(b, o->instance_type);
		}
		bprintf(b, "\n");
	}
	bprintf(b, "  use_spot: %s\n", p->purchase == PRICE_PURCHASE_SPOT ? "true" : "false");
	bprintf(b, "num_nodes: %d\nenvs:\n  TRAIN_SCRIPT: %s\n  EXTRA_ARGS: \"\"\n",
		launch_nodes(p), ds ? "null" : "\"pretrain_gpt.py\"");
	/* what the Megatron-LM arguments read and only the user knows:
	 * sky launch --env NAME=... */
	if (!ds)
		bprintf(b, "  DATA_PATH: null\n  CKPT_DIR: null\n%s",
			p->model.tokenizer[0] ? "" : "  TOKENIZER: null\n");
	skypilot_script(&run, p, fw);
	/* A literal block: every line indented, so YAML hands the script
	 * back byte for byte. */
	bprintf(b, "run: |\n");
	for (const char *line = run.s; *line;) {
		size_t n = strcspn(line, "\n");

		bprintf(b, "%s%.*s\n", n ? "  " : "", (int)n, line);
		line += n + (line[n] == '\n');
	}
	free(run.s);
}

char *export_plan(const struct sim_plan *p, enum export_format f, enum plan_framework fw,
		  enum rc *rc)
{
	enum plan_framework run = export_framework(f, fw);
	struct buf b = { 0 };
	struct words ws = { 0 };
	char e1[4 * PRICE_NAME_MAX], e2[4 * PRICE_NAME_MAX + 16];
	int nodes, gpn;

	if (f == EXPORT_SKYPILOT && has_control(p->model.name)) {
		gp_error("plan: .model.name: expected no control characters for the skypilot "
			 "run script, found one");
		*rc = RC_INPUT;
		return NULL;
	}
	*rc = export_check(p, f, run);
	if (*rc != RC_OK)
		return NULL;
	nodes = launch_nodes(p);
	gpn = launch_gpus_per_node(p);
	switch (f) {
	case EXPORT_MEGATRON:
		bprintf(&b, "#!/usr/bin/env bash\n# Megatron-LM launch for %s on %d x %s "
			    "(written by gpuplan)\n",
			gp_term_escape(e1, sizeof(e1), p->model.name), plan_gpus(p),
			gp_term_escape(e2, sizeof(e2), p->cluster.gpu.name));
		if (nodes > 1)
			bprintf(&b, "# Run it on each of the %d nodes (%d GPUs each) from Megatron-LM's "
				    "directory\n# (TRAIN_SCRIPT: pretrain_gpt.py there).\n", nodes, gpn);
		else
			bprintf(&b, "# Run it from Megatron-LM's directory (TRAIN_SCRIPT: "
				    "pretrain_gpt.py there).\n");
		trainer_head(&b, p, run, 1, NULL);
		torchrun_line(&b, p);
		trainer_words(&ws, p, run, NULL);
		words_shell(&b, &ws);
		bprintf(&b, "\n");
		break;
	case EXPORT_DEEPSPEED: {
		char *cfg = deepspeed_config(p, 0);

		bprintf(&b, "%s\n", cfg);
		free(cfg);
		break;
	}
	case EXPORT_TORCHRUN:
		bprintf(&b, "#!/usr/bin/env bash\n# torchrun for %s: %d nodes x %d GPUs = the plan's "
			    "%d (written by gpuplan)\nset -eu\n",
			gp_term_escape(e1, sizeof(e1), p->model.name), nodes, gpn, plan_gpus(p));
		nccl_env(&b, p, "export ", 1);
		master_addr_check(&b, p);
		torchrun_line(&b, p);
		bprintf(&b, " \"${TRAIN_SCRIPT:?set TRAIN_SCRIPT}\" \"$@\"\n");
		break;
	case EXPORT_SLURM:
		slurm_script(&b, p, run);
		break;
	case EXPORT_SLURM_EXECUTE:
		bprintf(&b, "#!/usr/bin/env bash\n# gpuplan's own measurement run of the plan "
			    "(gpuplan execute), not training\n");
		bprintf(&b, "#SBATCH --job-name=gpuplan-execute-%s\n",
			job_label(e1, sizeof(e1), p->model.name, 0));
		bprintf(&b, "#SBATCH --nodes=%d\n#SBATCH --ntasks-per-node=%d\n", nodes, gpn);
		bprintf(&b, "#SBATCH --gpus-per-node=%d\n#SBATCH --exclusive\n", gpn);
		bprintf(&b, "#SBATCH --time=01:00:00\n");
		nccl_env(&b, p, "export ", 1);
		bprintf(&b, "srun --mpi=pmix gpuplan execute \"${PLAN:-plan.json}\" --backend cuda\n");
		break;
	case EXPORT_MPIRUN:
		mpirun_script(&b, p, run);
		break;
	case EXPORT_MPIRUN_EXECUTE:
		bprintf(&b, "# gpuplan's own measurement run of the plan (gpuplan execute), not "
			    "training\n");
		bprintf(&b, "# hostfile: one line per node; replace node1..node%d with your hosts\n",
			nodes);
		bprintf(&b, "for i in $(seq 1 %d); do echo \"node$i slots=%d\"; done > hosts\n",
			nodes, gpn);
		bprintf(&b, "mpirun -np %d --hostfile hosts --map-by ppr:%d:node --bind-to numa",
			plan_gpus(p), gpn);
		if (!p->cluster.gpu.p2p)
			bprintf(&b, " -x NCCL_P2P_DISABLE=1");
		bprintf(&b, " -x CUDA_DEVICE_MAX_CONNECTIONS=1 gpuplan execute \"${PLAN:-plan.json}\""
			    " --backend cuda\n");
		break;
	case EXPORT_KUBERNETES:
		k8s_pytorchjob(&b, p, run);
		break;
	case EXPORT_TRAINJOB:
		k8s_trainjob(&b, p, run);
		break;
	case EXPORT_SKYPILOT:
		skypilot_task(&b, p, run);
		break;
	case EXPORT_TRL:
		trl_script(&b, p);
		break;
	}
	words_release(&ws);
	return b.s;
}
