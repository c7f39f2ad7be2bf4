/*
 * plan_export.h - turn a plan into what people already train with:
 * Megatron-LM arguments, a DeepSpeed config, a torchrun line, a Slurm batch
 * script, an mpirun line with a hostfile, a Kubeflow PyTorchJob manifest,
 * a SkyPilot task.
 *
 * The exports carry the plan's layout and batch; they do not know the
 * user's training script, which appears as a variable
 * (TRAIN_SCRIPT) the user sets.
 */
#ifndef GPUPLAN_PLAN_EXPORT_H
#define GPUPLAN_PLAN_EXPORT_H

#include "plan.h"
#include "sim.h"

enum plan_export_format {
	PLAN_EXPORT_MEGATRON,
	PLAN_EXPORT_DEEPSPEED,
	PLAN_EXPORT_TORCHRUN,
	PLAN_EXPORT_SLURM,
	PLAN_EXPORT_MPIRUN,
	PLAN_EXPORT_KUBERNETES,
	PLAN_EXPORT_SKYPILOT,   /* runs Megatron-LM; plan_export_skypilot for DeepSpeed */
	PLAN_EXPORT_SLURM_EXECUTE,  /* gpuplan execute under srun: a measurement */
	PLAN_EXPORT_MPIRUN_EXECUTE, /* gpuplan execute under mpirun: a measurement */
	/* Hugging Face TRL's `trl sft` (Accelerate, PEFT's LoRA, bitsandbytes'
	 * NF4 for QLoRA) with the deepspeed format's config: data parallelism
	 * and ZeRO only, so a plan with tp or pp > 1 is RC_INPUT. */
	PLAN_EXPORT_TRL,
};

/* Parses "megatron", "deepspeed", ... into *out.  Returns RC_OK or
 * RC_USAGE. */
enum rc plan_export_format_parse(const char *name, enum plan_export_format *out);
/* Names of the formats, comma-separated, for help and error text. */
const char *plan_export_format_names(void);

/* Renders plan p in format f.  Returns a NUL-terminated string the caller
 * frees with free(), or NULL with RC_INPUT in *rc when the plan lacks what
 * the format needs (message printed).  Megatron-LM gets Megatron-FSDP for
 * ZeRO-2/3 without a pipeline.  Where f cannot run p's ZeRO stage with p's
 * pipeline (ZeRO-2/3 and pp > 1 under megatron or deepspeed) it writes
 * ZeRO-1, warns on stderr with the memory per GPU ZeRO-1 needs (p
 * re-simulated; a hint when it does not fit) and, in the Megatron script, a
 * comment saying so; a layout the simulator refuses then is RC_INPUT. */
char *plan_export(const struct sim_plan *p, enum plan_export_format f, enum rc *rc);

/* The DeepSpeed launcher line that goes with the deepspeed format's config
 * written at config_path: the NCCL environment, then `deepspeed
 * --num_nodes N --num_gpus G [--hostfile hostfile] TRAIN_SCRIPT --deepspeed
 * --deepspeed_config config_path`, and a comment naming the tensor and
 * pipeline sizes a Megatron-DeepSpeed script must be given when the plan
 * has them (ds_config.json has no field for them), after the comment on
 * ZeRO-1 where the config has stage 1 for p's ZeRO-2/3 (plan_export).
 * Returns a string the caller frees with free(). */
char *plan_export_deepspeed_launch(const struct sim_plan *p, const char *config_path);

/* A SkyPilot task YAML (`sky launch` it as written) that runs p under
 * framework fw (PLAN_FRAMEWORK_ANY: Megatron-LM): resources (SkyPilot's
 * accelerator name and p's GPUs per node; the offering's cloud, region
 * and instance type; use_spot for a spot purchase), num_nodes, and a
 * run: script that starts torchrun from SkyPilot's node variables with
 * the megatron format's arguments or the deepspeed format's config.
 * Strings from the plan are double-quoted with escapes in the YAML and
 * single-quoted in the script; one with a control character where the
 * script needs it is RC_INPUT.  Returns a string the caller frees with
 * free(), or NULL with RC_INPUT in *rc (message printed), as
 * plan_export() does. */
char *plan_export_skypilot(const struct sim_plan *p, enum plan_framework fw, enum rc *rc);

#endif
