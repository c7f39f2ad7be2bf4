/*
 * export.c - export/'s front: the format names, the checks every export
 * makes before writing (a layout simulate accepts, a trainer that builds
 * and runs it, GPUs a launcher starts) and export_plan, which hands the
 * plan to its format's writer (export_internal.h lists the files).  Writes
 * no format itself.
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
#include "export_internal.h"

#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The formats, in the order help lists them.  A new format is a writer in
 * a file of its own (export_internal.h) and a line here. */
const struct export_format_info export_formats[] = {
	{ "megatron", EXPORT_MEGATRON, PLAN_FRAMEWORK_MEGATRON, 0,
	  "torchrun starting Megatron-LM's pretrain_gpt.py as planned", export_write_megatron },
	{ "deepspeed", EXPORT_DEEPSPEED, PLAN_FRAMEWORK_DEEPSPEED, 0,
	  "ds_config.json; with -o, the DeepSpeed launch line for it", export_write_deepspeed },
	{ "torchrun", EXPORT_TORCHRUN, PLAN_FRAMEWORK_ANY, 0,
	  "the plan's nodes and GPUs for your TRAIN_SCRIPT", export_write_torchrun },
	{ "slurm", EXPORT_SLURM, PLAN_FRAMEWORK_MEGATRON, 1,
	  "an sbatch script starting the trainer, requeued until done", export_write_slurm },
	{ "mpirun", EXPORT_MPIRUN, PLAN_FRAMEWORK_MEGATRON, 1,
	  "Open MPI starting the trainer, one rank a GPU", export_write_mpirun },
	{ "kubernetes", EXPORT_KUBERNETES, PLAN_FRAMEWORK_MEGATRON, 1,
	  "a Kubeflow PyTorchJob starting the trainer (k8s, kubeflow)", export_write_pytorchjob },
	{ "trainjob", EXPORT_TRAINJOB, PLAN_FRAMEWORK_MEGATRON, 1,
	  "a Kubeflow Trainer TrainJob starting the trainer", export_write_trainjob },
	{ "skypilot", EXPORT_SKYPILOT, PLAN_FRAMEWORK_MEGATRON, 1,
	  "a SkyPilot task starting the trainer", export_write_skypilot },
	{ "slurm-execute", EXPORT_SLURM_EXECUTE, PLAN_FRAMEWORK_ANY, 0,
	  "gpuplan execute under srun: a measurement, not training", export_write_slurm_execute },
	{ "mpirun-execute", EXPORT_MPIRUN_EXECUTE, PLAN_FRAMEWORK_ANY, 0,
	  "gpuplan execute under mpirun: a measurement, not training",
	  export_write_mpirun_execute },
	{ "trl", EXPORT_TRL, PLAN_FRAMEWORK_DEEPSPEED, 0,
	  "TRL's `trl sft` with the DeepSpeed config (LoRA, QLoRA)", export_write_trl },
};
const size_t export_formats_len = GP_ARRAY_LEN(export_formats);

/* The table's line for f. */
static const struct export_format_info *format_of(enum export_format f)
{
	for (size_t i = 0; i < export_formats_len; i++)
		if (export_formats[i].format == f)
			return &export_formats[i];
	assert(!"export: a format without a line in export_formats");
	return &export_formats[0];
}

const struct export_format_info *export_format_find(const char *name)
{
	for (size_t i = 0; i < export_formats_len; i++)
		if (gp_streq_nocase(name, export_formats[i].name))
			return &export_formats[i];
	if (gp_streq_nocase(name, "k8s") || gp_streq_nocase(name, "kubeflow"))
		return format_of(EXPORT_KUBERNETES);
	return NULL;
}

enum rc export_format_parse(const char *name, enum export_format *out)
{
	const struct export_format_info *fi = export_format_find(name);

	if (!fi)
		return RC_USAGE;
	*out = fi->format;
	return RC_OK;
}

const char *export_format_names(void)
{
	static char names[256];
	size_t len = 0;

	if (!names[0])
		for (size_t i = 0; i < export_formats_len; i++)
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
						i ? ", " : "", export_formats[i].name);
	return names;
}

/* The trainer f starts: its own, or for the launchers fw (Megatron-LM
 * unless DeepSpeed is said). */
static enum plan_framework export_framework(const struct export_format_info *f,
					    enum plan_framework fw)
{
	if (!f->takes_framework)
		return f->trainer;
	return fw == PLAN_FRAMEWORK_DEEPSPEED ? fw : PLAN_FRAMEWORK_MEGATRON;
}

/* What fw cannot run of p's precision and offload, in one line (RC_INPUT,
 * message printed), or RC_OK: DeepSpeed's config has no FP8 or FP4
 * training (no Transformer Engine recipe: bf16 would be written instead
 * of what was priced); Megatron-LM keeps the optimizer in host memory
 * (--optimizer-cpu-offload, arguments.py) but has no NVMe offload and
 * offloads no weights; DeepSpeed offloads to NVMe only under ZeRO-3
 * (ZeRO-Infinity: "NVMe offloading is available only with ZeRO stage 3",
 * deepspeed.ai/docs/config-json) and to the CPU only with ZeRO; gpuplan
 * execute keeps every state on the device; torchrun's script is the
 * user's, told in GPUPLAN_OFFLOAD. */
static enum rc precision_offload_check(const struct sim_plan *p, enum export_format f,
				       enum plan_framework fw)
{
	enum sim_offload off = p->par.ft.offload;
	int stage = export_zero1_instead(p, fw) ? 1 : p->par.zero;

	if (fw == PLAN_FRAMEWORK_DEEPSPEED && p->par.precision != SIM_PRECISION_BF16 &&
	    price_gpu_has_bf16(&p->cluster.gpu)) {
		gp_error("plan: .parallel.precision: DeepSpeed's config trains in bf16 or fp16 (it has "
			 "no FP8 or FP4 recipe), found %s", sim_precision_names[p->par.precision]);
		gp_hint("export megatron (Transformer Engine's %s), or plan with --precision bf16 for "
			"DeepSpeed", sim_precision_names[p->par.precision]);
		return RC_INPUT;
	}
	if (off == SIM_OFFLOAD_NONE)
		return RC_OK;
	if (f == EXPORT_SLURM_EXECUTE || f == EXPORT_MPIRUN_EXECUTE) {
		gp_error("plan: .parallel.finetune.offload: gpuplan execute keeps every state on the "
			 "GPU, found %s", sim_offload_names[off]);
		gp_hint("export deepspeed (ZeRO-Offload) for a run that offloads");
		return RC_INPUT;
	}
	if (fw == PLAN_FRAMEWORK_MEGATRON && (off == SIM_OFFLOAD_NVME || p->par.zero >= 3)) {
		gp_error("plan: .parallel.finetune.offload: Megatron-LM keeps only the optimizer in host "
			 "memory (--optimizer-cpu-offload), found %s%s", sim_offload_names[off],
			 off == SIM_OFFLOAD_NVME ? "" : " with ZeRO-3's weights");
		gp_hint("export deepspeed, or a launcher with --framework deepspeed (ZeRO-3 with "
			"offload_optimizer and offload_param)");
		return RC_INPUT;
	}
	if (fw == PLAN_FRAMEWORK_DEEPSPEED && ((off == SIM_OFFLOAD_NVME && stage < 3) || stage < 1)) {
		gp_error("plan: .parallel.finetune.offload: DeepSpeed offloads to %s only under "
			 "ZeRO-%s, found %s with ZeRO-%d%s", off == SIM_OFFLOAD_NVME ? "NVMe" : "the CPU",
			 off == SIM_OFFLOAD_NVME ? "3" : "1, 2 or 3", sim_offload_names[off], stage,
			 stage != p->par.zero ? " (its pipeline engine runs ZeRO-1)" : "");
		gp_hint("plan with --framework deepspeed for a layout it runs with offload");
		return RC_INPUT;
	}
	return RC_OK;
}

/* The checks every export makes before writing, for f starting trainer
 * fw: the layout simulate accepts, a trainer that builds the model
 * (export_megatron_lacks) and runs the layout (DeepSpeed has no CP, trl only data
 * parallelism), GPUs the launchers can start (export_launch_shape), and a layout
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
	lacks = fw == PLAN_FRAMEWORK_MEGATRON ? export_megatron_lacks(&p->model) : NULL;
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
	/* `trl sft` starts from the released checkpoint it names: a plan
	 * that pre-trains is not a fine-tuning run */
	if (f == EXPORT_TRL && p->par.ft.method == SIM_FT_NONE) {
		gp_error("plan: .parallel.finetune: trl fine-tunes a released checkpoint, and the plan "
			 "pre-trains (finetune none)");
		gp_hint("export megatron or deepspeed to pre-train, or plan with --finetune full, lora "
			"or qlora for trl");
		return RC_INPUT;
	}
	if (export_launch_shape(p, &nodes, &gpn, why, sizeof(why)) != 0) {
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
	if (precision_offload_check(p, f, fw) != RC_OK)
		return RC_INPUT;
	differs = export_framework_predict(p, fw, &r, why, sizeof(why));
	if (differs < 0) {
		gp_error("plan: layout is not exportable: %s", why);
		return RC_INPUT;
	}
	if (differs)
		export_framework_warn(p, fw, &r);
	return RC_OK;
}

/* The names text asks the user for, each once in order of appearance:
 * the NAME of every "${NAME:?" (a shell check) and every "SET-NAME" (a
 * manifest's value to replace), ", "-separated into out[size]. */
static void placeholders(const char *text, char *out, size_t size)
{
	out[0] = '\0';
	for (const char *s = text; *s; s++) {
		const char *name = NULL;
		char one[80];
		size_t n;

		if (strncmp(s, "${", 2) == 0)
			name = s + 2;
		else if (strncmp(s, "SET-", 4) == 0 && (s == text || !isalnum((unsigned char)s[-1])))
			name = s + 4;
		if (!name)
			continue;
		n = strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
		if (n == 0 || n >= sizeof(one) || (name[-1] == '{' && strncmp(name + n, ":?", 2) != 0))
			continue;
		snprintf(one, sizeof(one), "%.*s", (int)n, name);
		/* what the scheduler sets is not the user's to set */
		if (!strncmp(one, "SLURM_", 6) || !strncmp(one, "SKYPILOT_", 9))
			continue;
		{
			/* once each: a whole ", "-separated item */
			size_t len = strlen(out);
			int seen = 0;

			for (const char *t = out; (t = strstr(t, one)) != NULL; t += n)
				if ((t == out || t[-1] == ' ') && (t[n] == ',' || t[n] == '\0'))
					seen = 1;
			if (!seen)
				snprintf(out + len, size - len, "%s%s", len ? ", " : "", one);
		}
	}
}

/* text with a comment naming its placeholders (placeholders) after its
 * #! line, or first; text itself where it has none. */
static char *with_placeholders(char *text)
{
	char names[1024];
	struct export_buf b = { 0 };
	size_t head = 0;

	placeholders(text, names, sizeof(names));
	if (!names[0])
		return text;
	if (strncmp(text, "#!", 2) == 0)
		head = strcspn(text, "\n") + (text[strcspn(text, "\n")] == '\n');
	export_printf(&b, "%.*s# to set before running: %s\n%s", (int)head, text, names, text + head);
	free(text);
	return b.s;
}

char *export_plan(const struct sim_plan *p, enum export_format f, enum plan_framework fw,
		  enum rc *rc)
{
	const struct export_format_info *fi = format_of(f);
	enum plan_framework run = export_framework(fi, fw);
	struct export_buf b = { 0 };

	if (f == EXPORT_SKYPILOT && export_has_control(p->model.name)) {
		gp_error("plan: .model.name: expected no control characters for the skypilot "
			 "run script, found one");
		*rc = RC_INPUT;
		return NULL;
	}
	*rc = export_check(p, f, run);
	if (*rc != RC_OK)
		return NULL;
	fi->write(&b, p, run);
	/* ds_config.json is JSON: no comment */
	return f == EXPORT_DEEPSPEED ? b.s : with_placeholders(b.s);
}
