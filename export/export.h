/*
 * export.h - turn a plan into what people already train with:
 * Megatron-LM arguments, a DeepSpeed config, a torchrun line, a Slurm batch
 * script, an mpirun line, a Kubeflow PyTorchJob or Kubeflow Trainer
 * TrainJob manifest, a SkyPilot task.
 *
 * The exports carry the plan's model (to Megatron-LM), layout, batch,
 * training length and checkpoint interval.  The launchers (slurm, mpirun,
 * kubernetes, trainjob, skypilot) start Megatron-LM's pretrain_gpt.py, or
 * under DeepSpeed the user's script, which appears as a variable
 * (TRAIN_SCRIPT) the user sets.
 *
 * export/ reads plans (plan.h) and the planner knows nothing of it.  One
 * file a format over shared files (export_internal.h lists them, bottom
 * up); a new format is a writer in a file of its own and a line in
 * export_formats (export.c).
 */
#ifndef GPUPLAN_EXPORT_H
#define GPUPLAN_EXPORT_H

#include "plan.h"
#include "sim.h"

enum export_format {
	EXPORT_MEGATRON,
	EXPORT_DEEPSPEED,
	EXPORT_TORCHRUN,
	EXPORT_SLURM,
	EXPORT_MPIRUN,
	EXPORT_KUBERNETES,     /* a Kubeflow PyTorchJob (kubeflow.org/v1) */
	EXPORT_TRAINJOB,       /* a Kubeflow Trainer TrainJob (v1alpha1) */
	EXPORT_SKYPILOT,
	EXPORT_SLURM_EXECUTE,  /* gpuplan execute under srun: a measurement */
	EXPORT_MPIRUN_EXECUTE, /* gpuplan execute under mpirun: a measurement */
	/* Hugging Face TRL's `trl sft` (Accelerate, PEFT's LoRA, bitsandbytes'
	 * NF4 for QLoRA) with the deepspeed format's config: data parallelism
	 * and ZeRO only, so a plan with tp or pp > 1 is RC_INPUT. */
	EXPORT_TRL,
};

struct export_buf;            /* the text a writer appends to (export_internal.h) */

/* One format, as the CLI's command table has its commands: the name
 * --format takes, the trainer it starts, whether --framework chooses that
 * trainer instead, a line for help, and the writer export_plan hands a
 * checked plan to. */
struct export_format_info {
	const char *name;
	enum export_format format;
	/* the trainer it starts: PLAN_FRAMEWORK_MEGATRON or _DEEPSPEED, or
	 * _ANY for the user's script (torchrun) or gpuplan execute */
	enum plan_framework trainer;
	/* 1: --framework (megatron or deepspeed) names the trainer instead:
	 * the launchers slurm, mpirun, kubernetes, trainjob and skypilot */
	int takes_framework;
	const char *help;
	void (*write)(struct export_buf *b, const struct sim_plan *p, enum plan_framework fw);
};

/* Every format, in the order help lists them; export_formats_len of them. */
extern const struct export_format_info export_formats[];
extern const size_t export_formats_len;

/* The format named name, case-insensitive (k8s and kubeflow name
 * kubernetes), or NULL. */
const struct export_format_info *export_format_find(const char *name);
/* Parses "megatron", "deepspeed", ... into *out.  Returns RC_OK or
 * RC_USAGE. */
enum rc export_format_parse(const char *name, enum export_format *out);
/* Names of the formats, comma-separated, for help and error text. */
const char *export_format_names(void);

/* Renders plan p in format f.  The launchers (slurm, mpirun, kubernetes,
 * trainjob, skypilot) start the trainer fw: Megatron-LM's pretrain_gpt.py
 * with the model, layout, training samples and save interval as its
 * arguments (PLAN_FRAMEWORK_MEGATRON or ANY), or the user's DeepSpeed
 * script (PLAN_FRAMEWORK_DEEPSPEED) with the deepspeed format's config and
 * the training samples and save interval in GPUPLAN_TRAIN_SAMPLES and
 * GPUPLAN_SAVE_INTERVAL_STEPS; the other formats ignore fw.  Returns a
 * NUL-terminated string the caller frees with free(), or NULL with
 * RC_INPUT in *rc when the plan lacks what the format needs (message
 * printed): a layout the simulator refuses, GPUs no launcher starts as
 * planned, CP under DeepSpeed, a model Megatron-LM cannot build under
 * Megatron-LM.  Megatron-LM gets Megatron-FSDP for ZeRO-2/3 without a
 * pipeline.  Where the trainer cannot run p's ZeRO stage with p's
 * pipeline (ZeRO-2/3 and pp > 1 under Megatron-LM or DeepSpeed) it writes
 * ZeRO-1, warns on stderr with the memory per GPU ZeRO-1 needs (p
 * re-simulated; a hint when it does not fit) and, in the scripts, a
 * comment saying so; a layout the simulator refuses then is RC_INPUT.
 *
 * skypilot writes a task YAML (`sky launch` it as written): resources
 * (SkyPilot's accelerator name and p's GPUs per node; the offering's
 * cloud, region and instance type; use_spot for a spot purchase),
 * num_nodes, and a run: script that starts torchrun from SkyPilot's node
 * variables.  Strings from the plan are double-quoted with escapes in the
 * YAML and single-quoted in the script; one with a control character is
 * RC_INPUT there. */
char *export_plan(const struct sim_plan *p, enum export_format f, enum plan_framework fw,
		  enum rc *rc);

/* The DeepSpeed launch that goes with the deepspeed format's config
 * written at config_path: the comment on ZeRO-1 where the config has
 * stage 1 for p's ZeRO-2/3 (export_plan), the NCCL environment and the
 * GPUPLAN_ variables (also in .deepspeed_env for the other nodes), then
 * `deepspeed --num_nodes N --num_gpus G [--hostfile hostfile]
 * TRAIN_SCRIPT --deepspeed --deepspeed_config config_path`, with the
 * tensor and pipeline sizes a Megatron-DeepSpeed script takes when the
 * plan has them (ds_config.json has no field for them).  Returns a string
 * the caller frees with free(). */
char *export_deepspeed_launch(const struct sim_plan *p, const char *config_path);

#endif
