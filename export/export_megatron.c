/*
 * export_megatron.c - the megatron format: a bash script that starts
 * Megatron-LM's pretrain_gpt.py under torchrun on one node of the plan
 * (run on each), with the arguments of export_megatron_args.c.  Writes no
 * scheduler's job: slurm, mpirun, kubernetes and skypilot start the same
 * arguments their way.
 */
#include "export_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The megatron format for p (fw is Megatron-LM). */
void export_write_megatron(struct export_buf *b, const struct sim_plan *p, enum plan_framework fw)
{
	int nodes = export_nodes(p), gpn = export_gpus_per_node(p);
	char e1[4 * PRICE_NAME_MAX], e2[4 * PRICE_NAME_MAX + 16];
	struct words ws = { 0 };

	export_printf(b, "#!/usr/bin/env bash\n# Megatron-LM launch for %s on %d x %s "
		      "(written by gpuplan)\n",
		      gp_term_escape(e1, sizeof(e1), p->model.name), export_gpus(p),
		      gp_term_escape(e2, sizeof(e2), p->cluster.gpu.name));
	if (nodes > 1)
		export_printf(b, "# Run it on each of the %d nodes (%d GPUs each) from Megatron-LM's "
			      "directory\n# (TRAIN_SCRIPT: pretrain_gpt.py there).\n", nodes, gpn);
	else
		export_printf(b, "# Run it from Megatron-LM's directory (TRAIN_SCRIPT: "
			      "pretrain_gpt.py there).\n");
	export_trainer_head(b, p, fw, 1, NULL);
	export_torchrun_line(b, p);
	export_trainer_words(&ws, p, fw, NULL);
	export_words_shell(b, &ws);
	export_printf(b, "\n");
	export_words_release(&ws);
}
