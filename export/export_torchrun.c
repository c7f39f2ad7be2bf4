/*
 * export_torchrun.c - the torchrun format: the plan's nodes and GPUs per
 * node as a torchrun line for the user's own TRAIN_SCRIPT, with the NCCL
 * environment (torchrun's documentation).  Passes no trainer arguments:
 * the script is the user's.
 */
#include "export_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The torchrun format for p (fw unused: the script is the user's). */
void export_write_torchrun(struct export_buf *b, const struct sim_plan *p, enum plan_framework fw)
{
	char e1[4 * PRICE_NAME_MAX];

	(void)fw;
	export_printf(b, "#!/usr/bin/env bash\n# torchrun for %s: %d nodes x %d GPUs = the plan's "
		      "%d (written by gpuplan)\nset -eu\n",
		      gp_term_escape(e1, sizeof(e1), p->model.name), export_nodes(p),
		      export_gpus_per_node(p), export_gpus(p));
	export_nccl_env(b, p, "export ", 1);
	/* the script is the user's: the plan's offload is told, not done */
	if (p->par.ft.offload != SIM_OFFLOAD_NONE)
		export_printf(b, "# the plan keeps the optimizer states%s in %s: your script must "
				 "offload them\nexport GPUPLAN_OFFLOAD=%s\n",
			      p->par.zero >= 3 ? " and the weights" : "",
			      p->par.ft.offload == SIM_OFFLOAD_NVME ? "NVMe" : "host memory",
			      sim_offload_names[p->par.ft.offload]);
	export_master_addr_check(b, p);
	export_hf_token_check(b, p);
	export_torchrun_line(b, p);
	export_printf(b, " \"${TRAIN_SCRIPT:?set TRAIN_SCRIPT}\" \"$@\"\n");
}
