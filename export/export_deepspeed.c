/*
 * export_deepspeed.c - the deepspeed format: ds_config.json alone, and
 * the `deepspeed` launcher line that goes with a config written to a
 * file (DeepSpeed docs, "Getting Started: Launching DeepSpeed Training").
 * Writes no training script: the user's reads the config.
 */
#include "export_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *export_deepspeed_launch(const struct sim_plan *p, const char *config_path)
{
	struct export_buf b = { 0 };
	struct words ws = { 0 };

	export_trainer_head(&b, p, PLAN_FRAMEWORK_DEEPSPEED, 0, NULL);
	if (export_nodes(p) > 1) {
		/* DeepSpeed's runner starts the other nodes over ssh with only
		 * the variables of .deepspeed_env (in the working directory) */
		export_printf(&b, "env | grep -E '^(CUDA_DEVICE_MAX_CONNECTIONS|NCCL_[A-Z_]*|GPUPLAN_[A-Z_]*|HF_TOKEN)=' "
				  "> .deepspeed_env\n");
		export_printf(&b, "if [ -n \"${SLURM_JOB_NODELIST:-}\" ]; then\n"
				  "  scontrol show hostnames \"$SLURM_JOB_NODELIST\" | "
				  "sed 's/$/ slots=%d/' > hostfile\nelse\n"
				  "  : \"${HOSTFILE:?set HOSTFILE to a DeepSpeed hostfile of the %d nodes "
				  "(HOST slots=%d a line)}\"\n  cp \"$HOSTFILE\" hostfile\nfi\n",
			      export_gpus_per_node(p), export_nodes(p), export_gpus_per_node(p));
	}
	/* the launcher's flags: DeepSpeed docs, "Getting Started: Launching
	 * DeepSpeed Training" */
	export_printf(&b, "deepspeed --num_nodes %d --num_gpus %d", export_nodes(p),
		      export_gpus_per_node(p));
	if (export_nodes(p) > 1)
		export_printf(&b, " --hostfile hostfile");
	export_trainer_words(&ws, p, PLAN_FRAMEWORK_DEEPSPEED, config_path);
	export_words_shell(&b, &ws);
	export_words_release(&ws);
	export_printf(&b, "\n");
	return b.s;
}

/* The deepspeed format: the config on its own (export_deepspeed_launch
 * gives the line that starts it). */
void export_write_deepspeed(struct export_buf *b, const struct sim_plan *p,
			    enum plan_framework fw)
{
	char *cfg = export_deepspeed_config(p, 0);

	(void)fw;
	export_printf(b, "%s\n", cfg);
	free(cfg);
}
